//! The apiregistration.k8s.io group's strategy: APIServices (kube-aggregator's
//! `pkg/apis/apiregistration/validation` and `pkg/registry/apiservice`): the name is
//! `<version>.<group>`, priorities in range, a local APIService (no `service`) has neither a
//! CA bundle nor `insecureSkipTLSVerify`, a remote one names its Service and not both. What
//! the aggregator does with them lives in `crate::aggregator`.

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::{is_dns1035_label, is_dns1123_subdomain, validate_path_segment_name};
use crate::registry::object::meta;
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct APIServices;

fn spec_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("spec")
        .and_then(|s| s.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn spec_int(obj: &Value, field: &str) -> i64 {
    obj.get("spec")
        .and_then(|s| s.get(field))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `ValidateAPIService` (the object meta is the generic store's).
pub fn validate_apiservice(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (group, version) = (spec_str(obj, "group"), spec_str(obj, "version"));
    let name = meta(obj).get("name").and_then(Value::as_str).unwrap_or("");
    let required = format!("{version}.{group}");
    // The path-segment rule is the generic name check; only a name that passes it is
    // compared with `<version>.<group>`.
    if !name.is_empty() && validate_path_segment_name(name, false).is_empty() && name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            json!(name),
            format!("must be `spec.version+\".\"+spec.group`: {required:?}"),
        ));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for e in is_dns1123_subdomain(group) {
            errs.push(FieldError::invalid("spec.group", json!(group), e));
        }
    }
    for e in is_dns1035_label(version) {
        errs.push(FieldError::invalid("spec.version", json!(version), e));
    }
    let gpm = spec_int(obj, "groupPriorityMinimum");
    if gpm <= 0 || gpm > 20000 {
        errs.push(FieldError::invalid(
            "spec.groupPriorityMinimum",
            json!(gpm),
            "must be positive and less than 20000",
        ));
    }
    let vp = spec_int(obj, "versionPriority");
    if vp <= 0 || vp > 1000 {
        errs.push(FieldError::invalid(
            "spec.versionPriority",
            json!(vp),
            "must be positive and less than 1000",
        ));
    }
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let ca_len = spec
        .get("caBundle")
        .and_then(Value::as_str)
        .map(|b| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(b)
                .map(|d| d.len())
                .unwrap_or(b.len())
        })
        .unwrap_or(0);
    let insecure = spec.get("insecureSkipTLSVerify") == Some(&json!(true));
    let service = spec.get("service").filter(|s| !s.is_null());
    let Some(service) = service else {
        if ca_len != 0 {
            errs.push(FieldError::invalid(
                "spec.caBundle",
                json!(format!("{ca_len} bytes")),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errs.push(FieldError::invalid(
                "spec.insecureSkipTLSVerify",
                json!(true),
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    let s = |k: &str| service.get(k).and_then(Value::as_str).unwrap_or("");
    if s("namespace").is_empty() {
        errs.push(FieldError::required("spec.service.namespace", ""));
    }
    if s("name").is_empty() {
        errs.push(FieldError::required("spec.service.name", ""));
    }
    if insecure && ca_len > 0 {
        errs.push(FieldError::invalid(
            "spec.insecureSkipTLSVerify",
            json!(true),
            "may not be true if caBundle is present",
        ));
    }
    errs
}

impl Strategy for APIServices {
    fn default(&self, obj: &mut Value) {
        // `SetDefaults_ServiceReference`: port 443.
        if let Some(svc) = obj
            .get_mut("spec")
            .and_then(|s| s.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            svc.entry("port").or_insert(json!(443));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_apiservice(obj)
    }

    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_apiservice(new)
    }

    /// `ValidateAPIServiceStatus`: condition statuses are True, False or Unknown.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let conditions = new
            .get("status")
            .and_then(|s| s.get("conditions"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut errs = Vec::new();
        for (i, c) in conditions.iter().enumerate() {
            let st = c.get("status").and_then(Value::as_str).unwrap_or("");
            if !matches!(st, "True" | "False" | "Unknown") {
                errs.push(FieldError::not_supported(
                    format!("status.conditions[{i}].status"),
                    json!(st),
                    &["True", "False", "Unknown"],
                ));
            }
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::APISERVICE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    #[test]
    fn names_and_priorities() {
        let ok = svc(
            "v1alpha1.wardle.example.com",
            json!({"group": "wardle.example.com", "version": "v1alpha1",
                   "groupPriorityMinimum": 1000, "versionPriority": 15,
                   "service": {"namespace": "w", "name": "api", "port": 443},
                   "insecureSkipTLSVerify": true}),
        );
        assert!(validate_apiservice(&ok).is_empty());
        let bad = svc(
            "v1.other",
            json!({"group": "wardle.example.com", "version": "v1alpha1",
                   "groupPriorityMinimum": 0, "versionPriority": 2000}),
        );
        let msgs: Vec<String> = validate_apiservice(&bad)
            .iter()
            .map(FieldError::message)
            .collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs[0].contains("must be `spec.version+\".\"+spec.group`"));
        let local = svc(
            "v1.",
            json!({"version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1,
                   "insecureSkipTLSVerify": true}),
        );
        let msgs: Vec<String> = validate_apiservice(&local)
            .iter()
            .map(FieldError::message)
            .collect();
        assert_eq!(
            msgs,
            ["spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify"]
        );
    }
}
