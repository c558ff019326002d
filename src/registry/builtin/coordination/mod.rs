//! The coordination.k8s.io group's strategy: Leases (`ValidateLeaseSpec`).

use serde_json::Value;

use crate::meta::field_error::FieldError;
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct Leases;

impl Strategy for Leases {
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        if let Some(v) = spec.get("leaseDurationSeconds").filter(|v| !v.is_null()) {
            if v.as_i64().is_some_and(|n| n <= 0) {
                errs.push(FieldError::invalid(
                    "spec.leaseDurationSeconds",
                    v.clone(),
                    "must be greater than 0",
                ));
            }
        }
        if let Some(v) = spec.get("leaseTransitions").filter(|v| !v.is_null()) {
            if v.as_i64().is_some_and(|n| n < 0) {
                errs.push(FieldError::invalid(
                    "spec.leaseTransitions",
                    v.clone(),
                    "must be greater than or equal to 0",
                ));
            }
        }
        let strategy = spec.get("strategy").and_then(Value::as_str);
        if let Some(s) = strategy {
            if !s.contains('/') && s != "OldestEmulationVersion" {
                // sic: upstream names the field twice
                errs.push(FieldError::not_supported(
                    "spec.strategy.strategy",
                    s,
                    &["OldestEmulationVersion"],
                ));
            }
        }
        if spec
            .get("preferredHolder")
            .and_then(Value::as_str)
            .is_some_and(|h| !h.is_empty())
            && strategy.is_none()
        {
            errs.push(FieldError::forbidden(
                "spec.preferredHolder",
                "may only be specified if `strategy` is defined",
            ));
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::LEASE
    }
}
