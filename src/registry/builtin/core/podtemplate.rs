//! PodTemplates (core/v1): the template's PodSpec defaults and the printer.

use crate::registry::builtin::core::pod_warnings as pw;
use serde_json::Value;

use super::pod_spec::default_template_object;
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct PodTemplates;

impl Strategy for PodTemplates {
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::on_create(obj, ("/template", "template."))
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        pw::on_update(new, old, ("/template", "template."))
    }

    fn default(&self, obj: &mut Value) {
        if let Some(t) = obj.get_mut("template").and_then(Value::as_object_mut) {
            default_template_object(t);
        }
    }

    fn printer(&self) -> Printer {
        printers::POD_TEMPLATE
    }
}
