//! The autoscaling group's strategy: HorizontalPodAutoscalers, v1 and v2 (the replica
//! bounds and the scale target of `ValidateHorizontalPodAutoscaler`).

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::validate_path_segment_name;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct HorizontalPodAutoscalers;

impl Strategy for HorizontalPodAutoscalers {
    /// minReplicas defaults to 1.
    fn default(&self, obj: &mut Value) {
        obj_entry(obj, "spec")
            .entry("minReplicas")
            .or_insert(json!(1));
    }

    /// PrepareForCreate resets the status: its replica counts are not omitempty.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"currentReplicas": 0, "desiredReplicas": 0});
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let min = spec.get("minReplicas").and_then(Value::as_i64);
        let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
        if let Some(m) = min.filter(|m| *m < 1) {
            errs.push(FieldError::invalid(
                "spec.minReplicas",
                m,
                "must be greater than or equal to 1",
            ));
        }
        if max < 1 {
            errs.push(FieldError::invalid(
                "spec.maxReplicas",
                max,
                "must be greater than 0",
            ));
        }
        if min.is_some_and(|m| max < m) {
            errs.push(FieldError::invalid(
                "spec.maxReplicas",
                max,
                "must be greater than or equal to `minReplicas`",
            ));
        }
        let target = spec.get("scaleTargetRef").unwrap_or(&Value::Null);
        for f in ["kind", "name"] {
            let v = target.get(f).and_then(Value::as_str).unwrap_or("");
            if v.is_empty() {
                errs.push(FieldError::required(format!("spec.scaleTargetRef.{f}"), ""));
            } else {
                for m in validate_path_segment_name(v, false) {
                    errs.push(FieldError::invalid(
                        format!("spec.scaleTargetRef.{f}"),
                        v,
                        m,
                    ));
                }
            }
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::HPA
    }
}
