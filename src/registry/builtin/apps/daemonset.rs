//! DaemonSets (apps/v1): defaults, validation and the printer.

use crate::registry::builtin::checks;
use crate::registry::builtin::core::pod_warnings as pw;
use serde_json::{json, Value};

use super::{
    check_int_or_percent, check_selector, check_template, go_int_or_string, int_or_percent_value,
    nonneg, over_100_percent,
};
use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct DaemonSets;

impl Strategy for DaemonSets {
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::workload_on_create(obj, pw::SPEC_TEMPLATE)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        pw::on_update(new, old, pw::SPEC_TEMPLATE)
    }

    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        spec.entry("revisionHistoryLimit").or_insert(json!(10));
        spec.entry("updateStrategy").or_insert(
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
        );
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_spec(obj.get("spec").unwrap_or(&Value::Null))
    }

    /// Upstream's rule: see [`super::validate_update_twice`].
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        super::validate_update_twice(|| self.validate(new), new, old)
    }

    /// PrepareForCreate resets the status: the DaemonSetStatus{} encodes as `{"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0});
    }

    /// `ValidateDaemonSetStatusUpdate`: the counters are nonnegative and `collisionCount`
    /// is never lowered.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = checks::replica_status(
            new,
            &[
                "currentNumberScheduled",
                "numberMisscheduled",
                "desiredNumberScheduled",
                "numberReady",
                "observedGeneration",
                "updatedNumberScheduled",
                "numberAvailable",
                "numberUnavailable",
                "collisionCount",
            ],
            &[],
            None,
        );
        checks::collision_count_kept(new, old, &mut errs);
        errs
    }

    fn printer(&self) -> Printer {
        printers::DS
    }
}

/// `ValidateDaemonSetSpec`, in upstream's order (a missing selector is only a mismatch).
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut sel_errs = Vec::new();
    let sel = check_selector(spec, "daemonset", false, &mut sel_errs);
    // Label rules first, the template match, then the empty-selector error.
    let (empty, rules): (Vec<_>, Vec<_>) = sel_errs.into_iter().partition(|e| {
        e.message()
            .ends_with("empty selector is invalid for daemonset")
    });
    errs.extend(rules);
    if let Ok(sel) = &sel {
        check_template(spec, sel, "DaemonSet", super::PodSpec::Validated, &mut errs);
    }
    errs.extend(empty);
    nonneg(spec, "minReadySeconds", &mut errs);
    nonneg(spec, "templateGeneration", &mut errs);
    let strategy = spec.get("updateStrategy").unwrap_or(&Value::Null);
    match strategy.get("type").and_then(Value::as_str).unwrap_or("") {
        "OnDelete" => {}
        "RollingUpdate" => match strategy.get("rollingUpdate").filter(|v| !v.is_null()) {
            None => errs.push(FieldError::required(
                "spec.updateStrategy.rollingUpdate",
                "",
            )),
            Some(ru) => {
                let path = "spec.updateStrategy.rollingUpdate";
                let unavailable = ru.get("maxUnavailable").filter(|v| !v.is_null());
                let surge = ru.get("maxSurge").filter(|v| !v.is_null());
                for (name, v) in [("maxUnavailable", unavailable), ("maxSurge", surge)] {
                    if let Some(v) = v {
                        check_int_or_percent(v, &format!("{path}.{name}"), &mut errs);
                        if over_100_percent(Some(v)) {
                            errs.push(FieldError::invalid_rendered(
                                format!("{path}.{name}"),
                                &go_int_or_string(v),
                                "must not be greater than 100%",
                            ));
                        }
                    }
                }
                let (u, s) = (
                    int_or_percent_value(unavailable),
                    int_or_percent_value(surge),
                );
                if u != 0 && s != 0 {
                    errs.push(FieldError::invalid_rendered(
                        format!("{path}.maxSurge"),
                        &go_int_or_string(surge.unwrap_or(&Value::Null)),
                        "may not be set when maxUnavailable is non-zero",
                    ));
                } else if u == 0 && s == 0 {
                    errs.push(FieldError::required(
                        format!("{path}.maxUnavailable"),
                        "cannot be 0 when maxSurge is 0",
                    ));
                }
            }
        },
        other => errs.push(FieldError::not_supported(
            "spec.updateStrategy",
            other,
            &["RollingUpdate", "OnDelete"],
        )),
    }
    nonneg(spec, "revisionHistoryLimit", &mut errs);
    errs
}
