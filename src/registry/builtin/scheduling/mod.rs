//! The scheduling.k8s.io group's strategy: PriorityClasses (`ValidatePriorityClass`).

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::registry::object::meta;
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct PriorityClasses;

/// The system classes: (name, value).
const SYSTEM: &[(&str, i64)] = &[
    ("system-node-critical", 2000001000),
    ("system-cluster-critical", 2000000000),
];

impl Strategy for PriorityClasses {
    fn default(&self, obj: &mut Value) {
        if let Some(o) = obj.as_object_mut() {
            o.entry("preemptionPolicy")
                .or_insert(json!("PreemptLowerPriority"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let name = meta(obj).get("name").and_then(Value::as_str).unwrap_or("");
        let value = obj.get("value").and_then(Value::as_i64).unwrap_or(0);
        if name.starts_with("system-") {
            let why = match SYSTEM.iter().find(|(n, _)| *n == name) {
                None => Some(format!("{name} is not a known system priority class")),
                Some((n, v)) if *v != value => {
                    Some(format!("value of {n} PriorityClass must be {v}"))
                }
                Some(_) if obj.get("globalDefault") == Some(&json!(true)) => Some(format!(
                    "globalDefault of {name} PriorityClass must be false"
                )),
                Some(_) => None,
            };
            if let Some(why) = why {
                errs.push(FieldError::forbidden(
                    "metadata.name",
                    format!("priority class names with 'system-' prefix are reserved for system use only. error: {why}"),
                ));
            }
        } else if value > 1_000_000_000 {
            errs.push(FieldError::forbidden(
                "value",
                "maximum allowed value of a user defined priority is 1000000000",
            ));
        }
        if let Some(p) = obj.get("preemptionPolicy").and_then(Value::as_str) {
            if !matches!(p, "PreemptLowerPriority" | "Never") {
                errs.push(FieldError::not_supported(
                    "preemptionPolicy",
                    p,
                    &["PreemptLowerPriority", "Never"],
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if new.get("value") != old.get("value") {
            errs.push(FieldError::forbidden(
                "value",
                "may not be changed in an update.",
            ));
        }
        if new.get("preemptionPolicy") != old.get("preemptionPolicy") {
            errs.push(FieldError::invalid(
                "preemptionPolicy",
                new.get("preemptionPolicy").cloned().unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::PC
    }
}
