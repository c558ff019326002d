//! ReplicaSets (apps/v1): defaults, validation and the printer.

use serde_json::{json, Value};

use super::{check_selector, check_template, go_label_selector, nonneg};
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
        validate_spec(obj.get("spec").unwrap_or(&Value::Null))
    }

    /// As upstream's strategy: the object, then the update (which validates the spec again,
    /// so each spec error is listed twice among the causes), then the immutable selector.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        errs.extend(self.validate(new));
        super::immutable_selector(new, old, &mut errs);
        errs
    }

    /// PrepareForCreate resets the status: the ReplicaSetStatus{} encodes as `{"replicas": 0}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"replicas": 0});
    }

    fn printer(&self) -> Printer {
        printers::RS
    }
}

/// `ValidateReplicaSetSpec`, in upstream's order.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    nonneg(spec, "replicas", &mut errs);
    nonneg(spec, "minReadySeconds", &mut errs);
    // sic: upstream's ReplicaSet message says "deployment".
    match check_selector(spec, "deployment", true, &mut errs) {
        Ok(sel) => check_template(spec, &sel, "ReplicaSet", &mut errs),
        Err(()) => errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &go_label_selector(spec.get("selector").unwrap_or(&Value::Null)),
            "invalid label selector",
        )),
    }
    errs
}
