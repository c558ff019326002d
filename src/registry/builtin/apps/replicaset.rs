//! ReplicaSets (apps/v1): defaults, validation and the printer.

use crate::registry::builtin::checks;
use crate::registry::builtin::core::pod_warnings as pw;
use serde_json::{json, Value};

use super::nonneg;
use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct ReplicaSets;

impl Strategy for ReplicaSets {
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::workload_on_create(obj, pw::SPEC_TEMPLATE)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        pw::on_update(new, old, pw::SPEC_TEMPLATE)
    }

    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        spec.entry("replicas").or_insert(json!(1));
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_spec(obj.get("spec").unwrap_or(&Value::Null))
    }

    /// Upstream's rule: see [`super::validate_update_twice`].
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        super::validate_update_twice(|| self.validate(new), new, old)
    }

    /// PrepareForCreate resets the status: the ReplicaSetStatus{} encodes as `{"replicas": 0}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"replicas": 0});
    }

    /// The status strategy drops `status.terminatingReplicas` (its feature gate,
    /// DeploymentReplicaSetTerminatingReplicas, is alpha and off in v1.33) unless in use.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value, _now: &str) {
        checks::drop_status_field_unless_used(new, old, "terminatingReplicas");
    }

    /// `ValidateReplicaSetStatusUpdate`.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        checks::replica_set_status(new)
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
    super::check_selector_and_template(
        spec,
        "deployment",
        "ReplicaSet",
        super::PodSpec::Validated,
        "invalid label selector",
        &mut errs,
    );
    errs
}
