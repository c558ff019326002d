//! Jobs (batch/v1): the generated selector, defaults, the orphaning GC default and its
//! warning, field selectors and the printer.

use serde_json::{json, Map, Value};

use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::field_selectors::{self as fields, Put, SelectableFields};
use crate::registry::object::{meta, meta_mut};
use crate::registry::strategy::{is_unset, obj_entry, GcPolicy, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Jobs;

impl Strategy for Jobs {
    fn prepare_for_create(&self, obj: &mut Value) {
        generate_selector(obj);
    }

    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        // Both unset: a non-parallel job (1 and 1); completions stay unset otherwise.
        if is_unset(spec.get("completions")) && is_unset(spec.get("parallelism")) {
            spec.insert("completions".into(), json!(1));
        }
        if is_unset(spec.get("parallelism")) {
            spec.insert("parallelism".into(), json!(1));
        }
        if is_unset(spec.get("backoffLimit")) {
            let per_index = !is_unset(spec.get("backoffLimitPerIndex"));
            spec.insert(
                "backoffLimit".into(),
                json!(if per_index { i32::MAX as i64 } else { 6 }),
            );
        }
        spec.entry("completionMode").or_insert(json!("NonIndexed"));
        spec.entry("suspend").or_insert(json!(false));
        let failure_policy = !is_unset(spec.get("podFailurePolicy"));
        spec.entry("podReplacementPolicy")
            .or_insert(json!(if failure_policy {
                "Failed"
            } else {
                "TerminatingOrFailed"
            }));
        spec.entry("manualSelector").or_insert(json!(false));
        default_template(spec);
        // SetDefaults_Job: the job's labels from the template's when it has none.
        let labels = obj
            .pointer("/spec/template/metadata/labels")
            .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
            .cloned();
        if let Some(labels) = labels {
            if meta(obj)
                .get("labels")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
            {
                meta_mut(obj).insert("labels".into(), labels);
            }
        }
    }

    /// batch/v1 keeps its pods by default, for backwards compatibility.
    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::OrphanDependents
    }

    fn delete_warning(&self, policy_given: bool) -> Option<&'static str> {
        (!policy_given).then_some("child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning")
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    /// PrepareForCreate resets the status: the JobStatus{} encodes as `{}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn printer(&self) -> Printer {
        printers::JOB
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("metadata.namespace", "metadata.namespace"),
        ("status.successful", "status.successful"),
    ],
    reject: |label, _| {
        format!(
            "field label {} not supported for batchv1.Job",
            crate::meta::field_error::go_quote(label)
        )
    },
    extract: job_fields,
};

fn job_fields(obj: &Value, put: Put<'_>) {
    put(
        "status.successful",
        fields::count(obj, &["status", "succeeded"]),
    );
}

/// PrepareForCreate without `manualSelector: true`: the job-name and controller-uid labels
/// on the template and a `batch.kubernetes.io/controller-uid` selector.
fn generate_selector(obj: &mut Value) {
    if obj.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let name = meta(obj)
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let uid = meta(obj)
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let spec = obj_entry(obj, "spec");
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if !template.is_object() {
        return;
    }
    if !template.get("metadata").is_some_and(Value::is_object) {
        template["metadata"] = json!({});
    }
    let tm = template["metadata"].as_object_mut().expect("object");
    if !tm.get("labels").is_some_and(Value::is_object) {
        tm.insert("labels".into(), json!({}));
    }
    let labels = tm["labels"].as_object_mut().expect("object");
    for (k, v) in [
        ("batch.kubernetes.io/controller-uid", &uid),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("job-name", &name),
    ] {
        labels.entry(k).or_insert_with(|| json!(v));
    }
    if !spec.get("selector").is_some_and(Value::is_object) {
        spec.insert("selector".into(), json!({}));
    }
    let sel = spec["selector"].as_object_mut().expect("object");
    if !sel.get("matchLabels").is_some_and(Value::is_object) {
        sel.insert("matchLabels".into(), json!({}));
    }
    if let Some(ml) = sel.get_mut("matchLabels").and_then(Value::as_object_mut) {
        ml.entry("batch.kubernetes.io/controller-uid")
            .or_insert_with(|| json!(uid));
    }
}
