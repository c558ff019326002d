//! Deployments (apps/v1): defaults, validation and the printer.

use crate::registry::builtin::checks;
use crate::registry::builtin::core::pod_warnings as pw;
use crate::registry::object::Part;
use crate::registry::strategy::{default_reset_fields, ResetFields};
use serde_json::{json, Value};

use super::{
    check_int_or_percent, go_int_or_string, int_or_percent_value, nonneg, over_100_percent,
};
use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Deployments;

impl Strategy for Deployments {
    /// kube's deployment status strategy resets the labels too.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Status => &[&["spec"], &["metadata", "labels"]],
            _ => default_reset_fields(part, has_status),
        }
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::workload_on_create(obj, pw::SPEC_TEMPLATE)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        pw::on_update(new, old, pw::SPEC_TEMPLATE)
    }

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
        validate_spec(obj.get("spec").unwrap_or(&Value::Null))
    }

    /// The spec as on create, then (apps/v1) the selector may not change.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        super::immutable_selector(new, old, &mut errs);
        errs
    }

    /// PrepareForCreate resets the status: the DeploymentStatus{} encodes as `{}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    /// The status strategy drops `status.terminatingReplicas` (its feature gate,
    /// DeploymentReplicaSetTerminatingReplicas, is alpha and off in v1.33) unless in use.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value, _now: &str) {
        checks::drop_status_field_unless_used(new, old, "terminatingReplicas");
    }

    /// `ValidateDeploymentStatusUpdate`: the counters, and `collisionCount` never lowered.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = checks::replica_status(
            new,
            &[
                "observedGeneration",
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
                "unavailableReplicas",
                "collisionCount",
            ],
            &["updatedReplicas", "readyReplicas", "availableReplicas"],
            Some("cannot be greater than readyReplicas"),
        );
        checks::collision_count_kept(new, old, &mut errs);
        errs
    }

    fn printer(&self) -> Printer {
        printers::DEPLOYMENT
    }
}

/// `ValidateDeploymentSpec`, in upstream's order.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    nonneg(spec, "replicas", &mut errs);
    super::check_selector_and_template(
        spec,
        "deployment",
        "ReplicaSet",
        super::PodSpec::Validated,
        "invalid label selector",
        &mut errs,
    );
    validate_strategy(spec.get("strategy").unwrap_or(&Value::Null), &mut errs);
    nonneg(spec, "minReadySeconds", &mut errs);
    nonneg(spec, "revisionHistoryLimit", &mut errs);
    if let Some(pds) = spec.get("progressDeadlineSeconds").filter(|v| !v.is_null()) {
        let before = errs.len();
        nonneg(spec, "progressDeadlineSeconds", &mut errs);
        let min_ready = spec
            .get("minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if errs.len() == before && pds.as_i64().is_some_and(|p| p <= min_ready) {
            errs.push(FieldError::invalid(
                "spec.progressDeadlineSeconds",
                pds.clone(),
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

/// `ValidateDeploymentStrategy`.
fn validate_strategy(strategy: &Value, errs: &mut Vec<FieldError>) {
    let ru = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match strategy.get("type").and_then(Value::as_str).unwrap_or("") {
        "Recreate" => {
            if ru.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => {
            let Some(ru) = ru else {
                errs.push(FieldError::required(
                    "spec.strategy.rollingUpdate",
                    "this should be defaulted and never be nil",
                ));
                return;
            };
            let path = "spec.strategy.rollingUpdate";
            let unavailable = ru.get("maxUnavailable").filter(|v| !v.is_null());
            let surge = ru.get("maxSurge").filter(|v| !v.is_null());
            if let Some(u) = unavailable {
                check_int_or_percent(u, &format!("{path}.maxUnavailable"), errs);
            }
            if let Some(s) = surge {
                check_int_or_percent(s, &format!("{path}.maxSurge"), errs);
            }
            if int_or_percent_value(unavailable) == 0 && int_or_percent_value(surge) == 0 {
                errs.push(FieldError::invalid_rendered(
                    format!("{path}.maxUnavailable"),
                    &go_int_or_string(unavailable.unwrap_or(&Value::from(0))),
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
            if over_100_percent(unavailable) {
                errs.push(FieldError::invalid_rendered(
                    format!("{path}.maxUnavailable"),
                    &go_int_or_string(unavailable.unwrap_or(&Value::Null)),
                    "must not be greater than 100%",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            "spec.strategy",
            other,
            &["Recreate", "RollingUpdate"],
        )),
    }
}
