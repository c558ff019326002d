//! PersistentVolumes and PersistentVolumeClaims (core/v1): both start `Pending`; printers.

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;

use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct PersistentVolumes;

impl Strategy for PersistentVolumes {
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending"});
    }

    fn printer(&self) -> Printer {
        printers::PV
    }
}

pub struct PersistentVolumeClaims;

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

impl Strategy for PersistentVolumeClaims {
    /// `SetDefaults_PersistentVolumeClaimSpec`.
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.entry("volumeMode").or_insert(json!("Filesystem"));
        }
    }

    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending"});
    }

    /// `ValidatePersistentVolumeClaimSpec`, the rules users meet.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let modes: Vec<&str> = spec
            .get("accessModes")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if modes.is_empty() {
            errs.push(FieldError::required(
                "spec.accessModes",
                "at least 1 access mode is required",
            ));
        }
        if let Some(sel) = spec.get("selector").filter(|v| !v.is_null()) {
            errs.extend(crate::meta::validation::validate_label_selector(
                sel,
                "spec.selector",
            ));
        }
        for m in &modes {
            if !ACCESS_MODES.contains(m) {
                errs.push(FieldError::not_supported(
                    "spec.accessModes",
                    *m,
                    ACCESS_MODES,
                ));
            }
        }
        if modes.contains(&"ReadWriteOncePod") && modes.len() > 1 {
            errs.push(FieldError::forbidden(
                "spec.accessModes",
                "may not use ReadWriteOncePod with other access modes",
            ));
        }
        match spec.pointer("/resources/requests/storage") {
            None => errs.push(FieldError::required("spec.resources[storage]", "")),
            Some(q) => {
                let text = q
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| q.to_string());
                if super::pod_validation::quantity(&text).is_some_and(|n| n <= 0.0) {
                    errs.push(FieldError::invalid(
                        "spec.resources[storage]",
                        text,
                        "must be greater than zero",
                    ));
                }
            }
        }
        if let Some(m) = spec.get("volumeMode").and_then(Value::as_str) {
            if !matches!(m, "Block" | "Filesystem") {
                errs.push(FieldError::not_supported(
                    "spec.volumeMode",
                    m,
                    &["Block", "Filesystem"],
                ));
            }
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::PVC
    }
}
