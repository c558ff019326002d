//! StatefulSets (apps/v1): defaults, validation and the printer.

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct StatefulSets;

impl Strategy for StatefulSets {
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
        super::validate_workload(obj)
    }

    fn printer(&self) -> Printer {
        printers::STS
    }
}
