//! The storage.k8s.io group's strategies: StorageClasses here (`SetDefaults_StorageClass`,
//! `ValidateStorageClass(Update)`), the CSI kinds in [`csi`] and VolumeAttachments in
//! [`volumeattachment`] (kube's `pkg/apis/storage/validation` and `pkg/registry/storage`).

pub mod csi;
pub mod volumeattachment;

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::{is_qualified_name, validate_label_name};
use crate::registry::builtin::checks::{immutable, list_of as list, set_default, str_of as text};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct StorageClasses;

/// `validateParameters`: at most 512 entries of at most 256 KiB together, no empty key.
fn validate_parameters(obj: &Value, errs: &mut Vec<FieldError>) {
    let Some(params) = obj.get("parameters").and_then(Value::as_object) else {
        return;
    };
    if params.len() > 512 {
        errs.push(FieldError::too_long("parameters", "", 512));
        return;
    }
    let mut size = 0;
    for (k, v) in params {
        if k.is_empty() {
            errs.push(FieldError::invalid(
                "parameters",
                "",
                "field can not be empty.",
            ));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > 256 * 1024 {
        errs.push(FieldError::too_long("parameters", "", 256 * 1024));
    }
}

/// `ValidateTopologySelectorTerm` of each allowed topology, and no two terms alike.
fn validate_allowed_topologies(obj: &Value, errs: &mut Vec<FieldError>) {
    let terms = list(obj, "allowedTopologies");
    // Upstream compares each term with a list that starts with one empty entry per term.
    let mut seen: Vec<Vec<(String, Vec<String>)>> = vec![Vec::new(); terms.len()];
    for (i, term) in terms.iter().enumerate() {
        let tp = format!("allowedTopologies[{i}]");
        let mut exprs: Vec<(String, Vec<String>)> = Vec::new();
        for (j, req) in list(term, "matchLabelExpressions").iter().enumerate() {
            let rp = format!("{tp}.matchLabelExpressions[{j}]");
            let values = list(req, "values");
            if values.is_empty() {
                errs.push(FieldError::required(format!("{rp}.values"), ""));
            }
            let mut set: Vec<String> = Vec::new();
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("").to_string();
                if set.contains(&v) {
                    errs.push(FieldError::duplicate(
                        format!("{rp}.values[{k}]"),
                        v.clone(),
                    ));
                } else {
                    set.push(v);
                }
            }
            set.sort();
            let key = text(req, "key");
            errs.extend(validate_label_name(key, &format!("{rp}.key")));
            if exprs.iter().any(|(k, _)| k == key) {
                errs.push(FieldError::duplicate(format!("{rp}.key"), key));
            }
            exprs.retain(|(k, _)| k != key);
            exprs.push((key.to_string(), set));
        }
        exprs.sort();
        for t in &seen {
            if *t == exprs {
                errs.push(FieldError::duplicate(
                    format!("{tp}.matchLabelExpressions"),
                    "",
                ));
            }
        }
        seen.push(exprs);
    }
}

impl Strategy for StorageClasses {
    fn default(&self, obj: &mut Value) {
        if let Some(o) = obj.as_object_mut() {
            set_default(o, "reclaimPolicy", json!("Delete"));
            set_default(o, "volumeBindingMode", json!("Immediate"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let provisioner = text(obj, "provisioner");
        if provisioner.is_empty() {
            errs.push(FieldError::required("provisioner", ""));
        } else {
            let lower = provisioner.to_lowercase();
            for m in is_qualified_name(&lower) {
                errs.push(FieldError::invalid("provisioner", lower.as_str(), m));
            }
        }
        validate_parameters(obj, &mut errs);
        let policy = text(obj, "reclaimPolicy");
        if !policy.is_empty() && !matches!(policy, "Delete" | "Retain") {
            errs.push(FieldError::not_supported(
                "reclaimPolicy",
                policy,
                &["Delete", "Retain"],
            ));
        }
        match obj.get("volumeBindingMode").filter(|v| !v.is_null()) {
            None => errs.push(FieldError::required("volumeBindingMode", "")),
            Some(m) => {
                let m = m.as_str().unwrap_or("");
                if !matches!(m, "Immediate" | "WaitForFirstConsumer") {
                    errs.push(FieldError::not_supported(
                        "volumeBindingMode",
                        m,
                        &["Immediate", "WaitForFirstConsumer"],
                    ));
                }
            }
        }
        validate_allowed_topologies(obj, &mut errs);
        errs
    }

    /// The strategy validates the new class, then `ValidateStorageClassUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let params = |o: &Value| o.get("parameters").filter(|v| !v.is_null()).cloned();
        if params(new) != params(old) {
            errs.push(FieldError::forbidden(
                "parameters",
                "updates to parameters are forbidden.",
            ));
        }
        if text(new, "provisioner") != text(old, "provisioner") {
            errs.push(FieldError::forbidden(
                "provisioner",
                "updates to provisioner are forbidden.",
            ));
        }
        if text(new, "reclaimPolicy") != text(old, "reclaimPolicy") {
            errs.push(FieldError::forbidden(
                "reclaimPolicy",
                "updates to reclaimPolicy are forbidden.",
            ));
        }
        immutable(
            new.get("volumeBindingMode"),
            old.get("volumeBindingMode"),
            "volumeBindingMode",
            &mut errs,
        );
        errs
    }

    fn printer(&self) -> Printer {
        printers::SC
    }
}
