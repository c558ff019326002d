//! CronJobs (batch/v1): defaults and the printer.

use crate::registry::builtin::core::pod_warnings as pw;
use serde_json::{json, Value};

use super::cron;
use super::job::validate_job_spec;
use crate::meta::field_error::FieldError;
use crate::registry::builtin::apps::go_label_selector;
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::object::meta;
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct CronJobs;

/// Where a CronJob keeps its job spec: (JSON pointer, field path).
const JOB_SPEC: (&str, &str) = ("/spec/jobTemplate/spec", "spec.jobTemplate.spec");

impl Strategy for CronJobs {
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::job_on_create(obj, JOB_SPEC.0, JOB_SPEC.1)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        pw::job_on_update(new, old, JOB_SPEC.0, JOB_SPEC.1)
    }

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

    /// `ValidateCronJobCreate`.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_spec(obj.get("spec").unwrap_or(&Value::Null), None);
        let name = meta(obj).get("name").and_then(Value::as_str).unwrap_or("");
        if name.len() > 52 {
            errs.push(FieldError::invalid(
                "metadata.name",
                name,
                "must be no more than 52 characters",
            ));
        }
        errs
    }

    /// `ValidateCronJobUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_spec(
            new.get("spec").unwrap_or(&Value::Null),
            Some(old.get("spec").unwrap_or(&Value::Null)),
        )
    }

    fn printer(&self) -> Printer {
        printers::CRONJOB
    }
}

/// `validateCronJobSpec` (`old`: the stored spec on update).
fn validate_spec(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let schedule = spec.get("schedule").and_then(Value::as_str).unwrap_or("");
    let time_zone = spec.get("timeZone").filter(|v| !v.is_null());
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    } else {
        if let Some(e) = cron::parse_error(schedule) {
            errs.push(FieldError::invalid("spec.schedule", schedule, e));
        }
        let old_tz = old
            .and_then(|o| o.get("schedule"))
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("TZ"));
        if old_tz && schedule.contains("TZ") && time_zone.is_some() {
            errs.push(FieldError::invalid(
                "spec.schedule",
                schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        } else if !old_tz && schedule.contains("TZ") {
            errs.push(FieldError::invalid(
                "spec.schedule",
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    crate::registry::builtin::checks::nonneg_fields(
        spec,
        "spec",
        &["startingDeadlineSeconds"],
        &mut errs,
    );
    let tz_changed = old.is_none_or(|o| o.get("timeZone").filter(|v| !v.is_null()) != time_zone);
    if let (Some(tz), true) = (time_zone.and_then(Value::as_str), tz_changed) {
        let bad_part = tz.split('/').any(|p| {
            p == "."
                || p == ".."
                || p.starts_with('-')
                || p.is_empty()
                || p.len() > 14
                || !p
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
        });
        if tz.is_empty() {
            errs.push(FieldError::invalid(
                "spec.timeZone",
                "",
                "timeZone must be nil or non-empty string",
            ));
        } else if bad_part || (!tz.eq_ignore_ascii_case("Local") && !cron::known_time_zone(tz)) {
            errs.push(FieldError::invalid(
                "spec.timeZone",
                tz,
                format!("unknown time zone {tz}"),
            ));
        } else if tz.eq_ignore_ascii_case("Local") {
            errs.push(FieldError::invalid(
                "spec.timeZone",
                tz,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            ));
        }
    }
    match spec
        .get("concurrencyPolicy")
        .and_then(Value::as_str)
        .unwrap_or("")
    {
        "" => errs.push(FieldError::required("spec.concurrencyPolicy", "")),
        "Allow" | "Forbid" | "Replace" => {}
        other => errs.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            other,
            &["Allow", "Forbid", "Replace"],
        )),
    }
    let job = spec.pointer("/jobTemplate/spec").unwrap_or(&Value::Null);
    validate_job_spec(job, "spec.jobTemplate.spec", &mut errs);
    if let Some(sel) = job.get("selector").filter(|v| !v.is_null()) {
        errs.push(FieldError::invalid_rendered(
            "spec.jobTemplate.spec.selector",
            &go_label_selector(sel),
            "`selector` will be auto-generated",
        ));
    }
    if job.get("manualSelector") == Some(&json!(true)) {
        errs.push(FieldError::not_supported(
            "spec.jobTemplate.spec.manualSelector",
            true,
            &["nil", "false"],
        ));
    }
    crate::registry::builtin::checks::nonneg_fields(
        spec,
        "spec",
        &["successfulJobsHistoryLimit", "failedJobsHistoryLimit"],
        &mut errs,
    );
    errs
}
