//! CronJobs (batch/v1): defaults and the printer.

use serde_json::{json, Value};

use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct CronJobs;

impl Strategy for CronJobs {
    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        spec.entry("concurrencyPolicy").or_insert(json!("Allow"));
        spec.entry("suspend").or_insert(json!(false));
        spec.entry("successfulJobsHistoryLimit").or_insert(json!(3));
        spec.entry("failedJobsHistoryLimit").or_insert(json!(1));
        // Only the pod template inside jobTemplate is defaulted (JobTemplateSpec is not a
        // Job: no SetDefaults_Job there).
        if let Some(jt) = spec.get_mut("jobTemplate").and_then(Value::as_object_mut) {
            if let Some(js) = jt.get_mut("spec").and_then(Value::as_object_mut) {
                default_template(js);
            }
        }
    }

    /// PrepareForCreate resets the status: the CronJobStatus{} encodes as `{}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn printer(&self) -> Printer {
        printers::CRONJOB
    }
}
