//! The apiextensions.k8s.io group's strategy: CustomResourceDefinitions (defaults, the
//! initial status, and `ValidateCustomResourceDefinition` for the definition's shape).

use serde_json::{json, Map, Value};

use crate::registry::builtin::checks::str_at as text;

use crate::meta::field_error::FieldError;
use crate::meta::validation::{is_dns1035_label, is_dns1123_subdomain};
use crate::registry::object::meta;
use crate::registry::strategy::{obj_entry, Strategy};

pub struct CustomResourceDefinitions;

impl Strategy for CustomResourceDefinitions {
    /// `SetDefaults_CustomResourceDefinition(Spec)`.
    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        if !spec.get("conversion").is_some_and(Value::is_object) {
            spec.insert("conversion".into(), json!({"strategy": "None"}));
        }
        if let Some(svc) = spec
            .get_mut("conversion")
            .and_then(|c| c.pointer_mut("/webhook/clientConfig/service"))
            .and_then(Value::as_object_mut)
        {
            svc.entry("port").or_insert(json!(443));
        }
        let names = spec.entry("names").or_insert_with(|| json!({}));
        if let Some(n) = names.as_object_mut() {
            let kind = n
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if n.get("singular")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                n.insert("singular".into(), json!(kind.to_lowercase()));
            }
            if n.get("listKind")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
                && !kind.is_empty()
            {
                n.insert("listKind".into(), json!(format!("{kind}List")));
            }
        }
    }

    /// PrepareForCreate: the status starts empty but for the storage version.
    fn initialize(&self, obj: &mut Value) {
        let stored: Vec<Value> = versions(obj)
            .iter()
            .find(|v| v.get("storage") == Some(&json!(true)))
            .and_then(|v| v.get("name").cloned())
            .into_iter()
            .collect();
        // A nil slice (no storage version) encodes as null, as Go's does.
        let stored = if stored.is_empty() {
            Value::Null
        } else {
            Value::Array(stored)
        };
        obj["status"] = json!({
            "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": stored,
        });
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }
}

fn versions(obj: &Value) -> &[Value] {
    obj.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Go's `%#v` of the internal versions slice (only nil and empty can be shown exactly).
fn go_versions(obj: &Value) -> String {
    match obj.pointer("/spec/versions").and_then(Value::as_array) {
        None => "[]apiextensions.CustomResourceDefinitionVersion(nil)".into(),
        Some(a) if a.is_empty() => "[]apiextensions.CustomResourceDefinitionVersion{}".into(),
        Some(_) => "[]apiextensions.CustomResourceDefinitionVersion{...}".into(),
    }
}

/// `ValidateCustomResourceDefinition`, in upstream's order, for what Rafter checks of it.
fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let group = text(spec, "/group");
    let plural = text(spec, "/names/plural");
    let name = meta(obj).get("name").and_then(Value::as_str).unwrap_or("");
    if !name.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let msgs = is_dns1123_subdomain(group);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid("spec.group", group, msgs.join(",")));
        } else if group.split('.').count() < 2 {
            errs.push(FieldError::invalid(
                "spec.group",
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    match text(spec, "/scope") {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        s => errs.push(FieldError::not_supported(
            "spec.scope",
            s,
            &["Cluster", "Namespaced"],
        )),
    }
    let vs = versions(obj);
    let top_schema = spec.pointer("/validation/openAPIV3Schema").is_some();
    for (i, v) in vs.iter().enumerate() {
        if !top_schema && v.pointer("/schema/openAPIV3Schema").is_none() {
            errs.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "schemas are required",
            ));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut unique = true;
    for (i, v) in vs.iter().enumerate() {
        let n = text(v, "/name");
        let msgs = is_dns1035_label(n);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("spec.versions[{i}].name"),
                n,
                msgs.join(","),
            ));
        }
        unique &= seen.insert(n);
    }
    if !unique {
        errs.push(FieldError::invalid_rendered(
            "spec.versions",
            &go_versions(obj),
            "must contain unique version names",
        ));
    }
    let storage = vs
        .iter()
        .filter(|v| v.get("storage") == Some(&json!(true)))
        .count();
    if storage != 1 {
        errs.push(FieldError::invalid_rendered(
            "spec.versions",
            &go_versions(obj),
            "must have exactly one version marked as storage version",
        ));
    }
    let names = spec
        .get("names")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    for f in ["plural", "singular", "kind", "listKind"] {
        if text(&names, &format!("/{f}")).is_empty() {
            errs.push(FieldError::required(format!("spec.names.{f}"), ""));
        }
    }
    for f in ["plural", "singular"] {
        let v = text(&names, &format!("/{f}"));
        let msgs = is_dns1035_label(v);
        if !v.is_empty() && !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("spec.names.{f}"),
                v,
                msgs.join(","),
            ));
        }
    }
    for f in ["kind", "listKind"] {
        let v = text(&names, &format!("/{f}"));
        let msgs = is_dns1035_label(&v.to_lowercase());
        if !v.is_empty() && !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("spec.names.{f}"),
                v,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    msgs.join(",")
                ),
            ));
        }
    }
    for list in ["shortNames", "categories"] {
        for (i, v) in names
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let s = v.as_str().unwrap_or("");
            let msgs = is_dns1035_label(s);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(
                    format!("spec.names.{list}[{i}]"),
                    s,
                    msgs.join(","),
                ));
            }
        }
    }
    let kind = text(&names, "/kind");
    if !kind.is_empty() && kind == text(&names, "/listKind") {
        errs.push(FieldError::invalid(
            "spec.names.listKind",
            kind,
            "kind and listKind may not be the same",
        ));
    }
    match text(spec, "/conversion/strategy") {
        "" | "None" => {}
        "Webhook" => {
            if spec.pointer("/conversion/webhook/clientConfig").is_none() {
                errs.push(FieldError::required(
                    "spec.conversion.webhookClientConfig",
                    "required when strategy is set to Webhook",
                ));
            }
        }
        s => errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            s,
            &["None", "Webhook"],
        )),
    }
    let stored = obj
        .pointer("/status/storedVersions")
        .and_then(Value::as_array);
    if stored.is_none_or(Vec::is_empty) {
        let rendered = match stored {
            None => "[]string(nil)",
            Some(_) => "[]string{}",
        };
        errs.push(FieldError::invalid_rendered(
            "status.storedVersions",
            rendered,
            "must have at least one stored version",
        ));
    }
    if spec.get("preserveUnknownFields") == Some(&json!(true)) {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            true,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::field_error::aggregate_message;

    #[test]
    fn empty_spec_is_refused_as_kube_refuses_it() {
        let s = CustomResourceDefinitions;
        let mut obj = json!({"metadata": {"name": "foo"}, "spec": {}});
        s.default(&mut obj);
        s.initialize(&mut obj);
        let errs = s.validate(&obj);
        assert_eq!(
            aggregate_message(&errs),
            "[metadata.name: Invalid value: \"foo\": must be spec.names.plural+\".\"+spec.group, spec.group: Required value, spec.scope: Required value, spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version, spec.names.plural: Required value, spec.names.singular: Required value, spec.names.kind: Required value, spec.names.listKind: Required value, status.storedVersions: Invalid value: []string(nil): must have at least one stored version]"
        );
    }

    #[test]
    fn a_good_definition_passes() {
        let s = CustomResourceDefinitions;
        let mut obj = json!({"metadata": {"name": "crontabs.stable.example.com"}, "spec": {
            "group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        s.default(&mut obj);
        s.initialize(&mut obj);
        assert_eq!(s.validate(&obj), vec![]);
        assert_eq!(obj["spec"]["names"]["singular"], "crontab");
        assert_eq!(obj["spec"]["names"]["listKind"], "CronTabList");
        assert_eq!(obj["status"]["storedVersions"], json!(["v1"]));
    }
}
