//! Deployments (apps/v1): defaults, validation and the printer.

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Deployments;

impl Strategy for Deployments {
    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        spec.entry("replicas").or_insert(json!(1));
        spec.entry("revisionHistoryLimit").or_insert(json!(10));
        spec.entry("progressDeadlineSeconds").or_insert(json!(600));
        let strategy = spec.entry("strategy").or_insert(json!({}));
        if let Some(s) = strategy.as_object_mut() {
            let t = s.entry("type").or_insert(json!("RollingUpdate")).clone();
            if t == "RollingUpdate" {
                let ru = s.entry("rollingUpdate").or_insert(json!({}));
                if let Some(ru) = ru.as_object_mut() {
                    ru.entry("maxUnavailable").or_insert(json!("25%"));
                    ru.entry("maxSurge").or_insert(json!("25%"));
                }
            }
        }
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        super::validate_workload(obj)
    }

    fn printer(&self) -> Printer {
        printers::DEPLOYMENT
    }
}
