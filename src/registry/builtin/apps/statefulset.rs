//! StatefulSets (apps/v1): defaults, validation and the printer.

use crate::registry::builtin::checks;
use crate::registry::builtin::core::pod_warnings as pw;
use serde_json::{json, Value};

use super::{
    check_int_or_percent, go_int_or_string, int_or_percent_value, nonneg, over_100_percent,
};
use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct StatefulSets;

impl Strategy for StatefulSets {
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::workload_on_create(obj, pw::SPEC_TEMPLATE)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        pw::on_update(new, old, pw::SPEC_TEMPLATE)
    }

    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        spec.entry("replicas").or_insert(json!(1));
        spec.entry("podManagementPolicy")
            .or_insert(json!("OrderedReady"));
        spec.entry("revisionHistoryLimit").or_insert(json!(10));
        spec.entry("updateStrategy")
            .or_insert(json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}));
        spec.entry("persistentVolumeClaimRetentionPolicy")
            .or_insert(json!({"whenDeleted": "Retain", "whenScaled": "Retain"}));
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_spec(obj.get("spec").unwrap_or(&Value::Null))
    }

    /// The spec as on create; then only replicas, ordinals, template, updateStrategy,
    /// persistentVolumeClaimRetentionPolicy and minReadySeconds may change.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let mut a = new.get("spec").cloned().unwrap_or(Value::Null);
        let b = old.get("spec").cloned().unwrap_or(Value::Null);
        if let (Some(a), Some(b)) = (a.as_object_mut(), b.as_object()) {
            for f in MUTABLE {
                match b.get(*f) {
                    Some(v) => a.insert(f.to_string(), v.clone()),
                    None => a.remove(*f),
                };
            }
        }
        if a != b {
            errs.push(FieldError::forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ));
        }
        errs
    }

    /// PrepareForCreate resets the status: the StatefulSetStatus{} encodes as `{"replicas": 0, "availableReplicas": 0}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"replicas": 0, "availableReplicas": 0});
    }

    /// `ValidateStatefulSetStatusUpdate` (its availability message names
    /// `status.readyReplicas`).
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = checks::replica_status(
            new,
            &[
                "replicas",
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
                "observedGeneration",
                "collisionCount",
            ],
            &[
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
            ],
            Some("cannot be greater than status.readyReplicas"),
        );
        checks::collision_count_kept(new, old, &mut errs);
        errs
    }

    fn printer(&self) -> Printer {
        printers::STS
    }
}

/// The spec fields an update may change.
const MUTABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// `ValidateStatefulSetSpec`, in upstream's order.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match spec.get("podManagementPolicy").and_then(Value::as_str) {
        None | Some("") => errs.push(FieldError::required("spec.podManagementPolicy", "")),
        Some("OrderedReady" | "Parallel") => {}
        Some(p) => errs.push(FieldError::invalid(
            "spec.podManagementPolicy",
            p,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let strategy = spec.get("updateStrategy").unwrap_or(&Value::Null);
    let ru = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match strategy.get("type").and_then(Value::as_str).unwrap_or("") {
        "" => errs.push(FieldError::required("spec.updateStrategy", "")),
        "OnDelete" => {
            if ru.is_some() {
                errs.push(FieldError::invalid_rendered(
                    "spec.updateStrategy.rollingUpdate",
                    "&apps.RollingUpdateStatefulSetStrategy{...}",
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(ru) = ru {
                let path = "spec.updateStrategy.rollingUpdate";
                if let Some(p) = ru.get("partition") {
                    if p.as_i64().is_some_and(|n| n < 0) {
                        errs.push(FieldError::invalid(
                            format!("{path}.partition"),
                            p.clone(),
                            super::NONNEG,
                        ));
                    }
                }
                if let Some(u) = ru.get("maxUnavailable").filter(|v| !v.is_null()) {
                    let p = format!("{path}.maxUnavailable");
                    check_int_or_percent(u, &p, &mut errs);
                    if int_or_percent_value(Some(u)) == 0 {
                        errs.push(FieldError::invalid_rendered(
                            &p,
                            &go_int_or_string(u),
                            "cannot be 0",
                        ));
                    } else if over_100_percent(Some(u)) {
                        errs.push(FieldError::invalid_rendered(
                            &p,
                            &go_int_or_string(u),
                            "must not be greater than 100%",
                        ));
                    }
                }
            }
        }
        other => errs.push(FieldError::invalid(
            "spec.updateStrategy",
            other,
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    if let Some(policy) = spec
        .get("persistentVolumeClaimRetentionPolicy")
        .filter(|v| !v.is_null())
    {
        for f in ["whenDeleted", "whenScaled"] {
            let v = policy.get(f).and_then(Value::as_str).unwrap_or("");
            if !matches!(v, "Retain" | "Delete") {
                errs.push(FieldError::not_supported(
                    format!("spec.persistentVolumeClaimRetentionPolicy.{f}"),
                    v,
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    nonneg(spec, "replicas", &mut errs);
    nonneg(spec, "minReadySeconds", &mut errs);
    if let Some(start) = spec.pointer("/ordinals/start") {
        if start.as_i64().is_some_and(|n| n < 0) {
            errs.push(FieldError::invalid(
                "spec.ordinals.start",
                start.clone(),
                super::NONNEG,
            ));
        }
    }
    super::check_selector_and_template(
        spec,
        "statefulset",
        "StatefulSet",
        super::PodSpec::Unchecked,
        "",
        &mut errs,
    );
    errs
}
