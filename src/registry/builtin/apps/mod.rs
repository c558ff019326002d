//! The apps group's strategies, and the checks its workload kinds share.

pub mod daemonset;
pub mod deployment;
pub mod replicaset;
pub mod statefulset;

use serde_json::Value;

use crate::meta::field_error::FieldError;

/// What every apps/v1 workload needs: non-negative replicas, a selector and a pod template
/// with containers.
pub fn validate_workload(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec");
    if let Some(r) = spec.and_then(|s| s.get("replicas")) {
        if r.as_i64().is_some_and(|n| n < 0) {
            errs.push(FieldError::invalid(
                "spec.replicas",
                r.clone(),
                "must be greater than or equal to 0",
            ));
        }
    }
    if spec.and_then(|s| s.get("selector")).is_none() {
        errs.push(FieldError::required("spec.selector", ""));
    }
    if spec
        .and_then(|s| s.pointer("/template/spec/containers"))
        .is_none()
    {
        errs.push(FieldError::required("spec.template.spec.containers", ""));
    }
    errs
}
