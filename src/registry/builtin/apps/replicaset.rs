//! ReplicaSets (apps/v1): defaults, validation and the printer.

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct ReplicaSets;

impl Strategy for ReplicaSets {
    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        spec.entry("replicas").or_insert(json!(1));
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        super::validate_workload(obj)
    }

    fn printer(&self) -> Printer {
        printers::RS
    }
}
