//! The policy group's strategy: PodDisruptionBudgets (`ValidatePodDisruptionBudget`).

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::validate_label_selector;
use crate::registry::builtin::apps::{check_int_or_percent, go_int_or_string, over_100_percent};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct PodDisruptionBudgets;

impl Strategy for PodDisruptionBudgets {
    /// PrepareForCreate resets the status: its counts are not omitempty.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0});
    }

    /// `ValidatePodDisruptionBudgetStatusUpdate` (policy/v1): the conditions, then the counts.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let st = crate::registry::builtin::checks::status_of(new);
        let conditions = st.get("conditions").and_then(Value::as_array);
        let mut errs = crate::meta::validation::validate_conditions(
            conditions.map_or(&[][..], Vec::as_slice),
            "status.conditions",
        );
        crate::registry::builtin::checks::nonneg_fields(
            st,
            "status",
            &[
                "disruptionsAllowed",
                "currentHealthy",
                "desiredHealthy",
                "expectedPods",
            ],
            &mut errs,
        );
        errs
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let min = spec.get("minAvailable").filter(|v| !v.is_null());
        let max = spec.get("maxUnavailable").filter(|v| !v.is_null());
        if min.is_some() && max.is_some() {
            errs.push(FieldError::invalid_rendered(
                "spec",
                "policy.PodDisruptionBudgetSpec{...}",
                "minAvailable and maxUnavailable cannot be both set",
            ));
        }
        for (f, v) in [("minAvailable", min), ("maxUnavailable", max)] {
            if let Some(v) = v {
                let p = format!("spec.{f}");
                check_int_or_percent(v, &p, &mut errs);
                if over_100_percent(Some(v)) {
                    errs.push(FieldError::invalid_rendered(
                        &p,
                        &go_int_or_string(v),
                        "must not be greater than 100%",
                    ));
                }
            }
        }
        if let Some(sel) = spec.get("selector").filter(|v| !v.is_null()) {
            errs.extend(validate_label_selector(sel, "spec.selector"));
        }
        if let Some(p) = spec
            .get("unhealthyPodEvictionPolicy")
            .and_then(Value::as_str)
        {
            if !matches!(p, "IfHealthyBudget" | "AlwaysAllow") {
                errs.push(FieldError::not_supported(
                    "spec.unhealthyPodEvictionPolicy",
                    p,
                    &["AlwaysAllow", "IfHealthyBudget"],
                ));
            }
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::PDB
    }
}
