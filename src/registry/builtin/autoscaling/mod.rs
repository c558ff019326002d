//! The autoscaling group's strategy: HorizontalPodAutoscalers, stored as autoscaling/v2 and
//! served as v2 and as v1 (converted, [`convert`]); v2's defaults and the replica bounds and
//! scale target of `ValidateHorizontalPodAutoscaler`.

pub mod convert;

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::validate_path_segment_name;
use crate::registry::strategy::{obj_entry, ConversionError, Strategy};
use crate::registry::table::{printers, Printer};

/// HPAs of one served version; `v1` converts to and from the storage version v2.
pub struct HorizontalPodAutoscalers {
    pub v1: bool,
}

impl Strategy for HorizontalPodAutoscalers {
    fn to_storage(&self, obj: &mut Value) -> Result<(), ConversionError> {
        if self.v1 {
            convert::v1_to_v2(obj);
        }
        Ok(())
    }

    fn from_storage(&self, obj: &mut Value) -> Result<(), ConversionError> {
        if self.v1 {
            convert::v2_to_v1(obj);
        }
        Ok(())
    }

    /// autoscaling/v2's `SetDefaults_HorizontalPodAutoscaler` (applied to every stored
    /// object, as kube applies it to every object it reads from storage); the v1 round-trip
    /// annotations are never stored.
    fn default(&self, obj: &mut Value) {
        convert::drop_round_trip(obj);
        let spec = obj_entry(obj, "spec");
        spec.entry("minReplicas").or_insert(json!(1));
        if spec
            .get("metrics")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            spec.insert(
                "metrics".into(),
                json!([convert::cpu_metric(json!(convert::DEFAULT_CPU_UTILIZATION))]),
            );
        }
        if let Some(b) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
            let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                             {"type": "Percent", "value": 100, "periodSeconds": 15}]});
            let down = json!({"selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]});
            for (key, defaults) in [("scaleUp", up), ("scaleDown", down)] {
                let mut rules = defaults;
                if let (Some(r), Some(given)) =
                    (rules.as_object_mut(), b.get(key).and_then(Value::as_object))
                {
                    for (k, v) in given {
                        if !v.is_null() {
                            r.insert(k.clone(), v.clone());
                        }
                    }
                }
                b.insert(key.into(), rules);
            }
        }
    }

    /// `ValidateHorizontalPodAutoscalerStatusUpdate`: the replica counts.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        crate::registry::builtin::checks::nonneg_fields(
            crate::registry::builtin::checks::status_of(new),
            "status",
            &["currentReplicas", "desiredReplicas"],
            &mut errs,
        );
        errs
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
