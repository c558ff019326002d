//! Jobs (batch/v1): the generated selector, defaults, the orphaning GC default and its
//! warning, field selectors and the printer.

use crate::registry::builtin::core::pod_warnings as pw;
use serde_json::{json, Map, Value};

use crate::meta::field_error::FieldError;
use crate::meta::labels::Selector;
use crate::meta::validation::{validate_annotations, validate_label_selector, validate_labels};
use crate::registry::builtin::apps::{go_label_selector, go_string_map, same_selector};
use crate::registry::builtin::core::pod_spec::default_template;
use crate::registry::builtin::core::pod_validation::validate_pod_spec;
use crate::registry::field_selectors::{self as fields, Put, SelectableFields};
use crate::registry::object::{meta, meta_mut};
use crate::registry::strategy::{is_unset, obj_entry, GcPolicy, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Jobs;

impl Strategy for Jobs {
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::job_on_create(obj, "/spec", "spec")
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        pw::job_on_update(new, old, "/spec", "spec")
    }

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

    /// `ValidateJob` (the generated selector is consistent: the store made it).
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let mut errs = Vec::new();
        validate_job_spec(spec, "spec", &mut errs);
        match spec.get("selector").filter(|s| !s.is_null()) {
            None => errs.push(FieldError::required("spec.selector", "")),
            Some(sel) => {
                errs.extend(validate_label_selector(sel, "spec.selector"));
                if let Ok(sel) = Selector::from_label_selector(sel) {
                    let labels = spec.pointer("/template/metadata/labels");
                    let empty = Map::new();
                    let m = labels.and_then(Value::as_object).unwrap_or(&empty);
                    if !sel.is_empty() && !sel.matches(m) {
                        errs.push(FieldError::invalid_rendered(
                            "spec.template.metadata.labels",
                            &go_string_map(labels),
                            "`selector` does not match template `labels`",
                        ));
                    }
                }
            }
        }
        errs
    }

    /// `ValidateJobUpdate`: the spec as on create, then what may not change.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let (n, o) = (
            new.get("spec").unwrap_or(&Value::Null),
            old.get("spec").unwrap_or(&Value::Null),
        );
        let indexed = n.get("completionMode").and_then(Value::as_str) == Some("Indexed");
        if n.get("completions") != o.get("completions") {
            if !indexed {
                errs.push(FieldError::invalid(
                    "spec.completions",
                    n.get("completions").cloned().unwrap_or(Value::Null),
                    "field is immutable",
                ));
            } else if n.get("completions") != n.get("parallelism") {
                errs.push(FieldError::invalid(
                    "spec.completions",
                    n.get("completions").cloned().unwrap_or(Value::Null),
                    "can only be modified in tandem with spec.parallelism",
                ));
            }
        }
        if !same_selector(n.get("selector"), o.get("selector")) {
            errs.push(FieldError::invalid_rendered(
                "spec.selector",
                &go_label_selector(n.get("selector").unwrap_or(&Value::Null)),
                "field is immutable",
            ));
        }
        if n.get("template") != o.get("template") {
            errs.push(FieldError::invalid_rendered(
                "spec.template",
                "core.PodTemplateSpec{...}",
                "field is immutable",
            ));
        }
        for f in [
            "completionMode",
            "podFailurePolicy",
            "backoffLimitPerIndex",
            "managedBy",
            "successPolicy",
        ] {
            if n.get(f) != o.get(f) {
                errs.push(FieldError::invalid(
                    format!("spec.{f}"),
                    n.get(f).cloned().unwrap_or(Value::Null),
                    "field is immutable",
                ));
            }
        }
        errs
    }

    /// `ValidateJobUpdateStatus` (see [`super::job_status`]).
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        super::job_status::validate(new, old)
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

/// `validateJobSpec` of the spec at `path` (a job's `spec`, a CronJob's
/// `spec.jobTemplate.spec`).
pub fn validate_job_spec(spec: &Value, path: &str, errs: &mut Vec<FieldError>) {
    crate::registry::builtin::checks::nonneg_fields(
        spec,
        path,
        &[
            "parallelism",
            "completions",
            "activeDeadlineSeconds",
            "backoffLimit",
            "ttlSecondsAfterFinished",
            "backoffLimitPerIndex",
            "maxFailedIndexes",
        ],
        errs,
    );
    let set = |f: &str| spec.get(f).is_some_and(|v| !v.is_null());
    if set("maxFailedIndexes") && !set("backoffLimitPerIndex") {
        errs.push(FieldError::required(
            format!("{path}.backoffLimitPerIndex"),
            "when maxFailedIndexes is specified",
        ));
    }
    let mode = spec.get("completionMode").and_then(Value::as_str);
    match mode {
        Some("Indexed") => {
            if !set("completions") {
                errs.push(FieldError::required(
                    format!("{path}.completions"),
                    "when completion mode is Indexed",
                ));
            }
        }
        None | Some("NonIndexed") => {
            for f in ["backoffLimitPerIndex", "maxFailedIndexes"] {
                if set(f) {
                    errs.push(FieldError::invalid(
                        format!("{path}.{f}"),
                        spec[f].clone(),
                        "requires indexed completion mode",
                    ));
                }
            }
        }
        Some(other) => errs.push(FieldError::not_supported(
            format!("{path}.completionMode"),
            other,
            &["NonIndexed", "Indexed"],
        )),
    }
    let failure_policy = set("podFailurePolicy");
    if let Some(p) = spec.get("podReplacementPolicy").and_then(Value::as_str) {
        if failure_policy && p != "Failed" {
            errs.push(FieldError::not_supported(
                format!("{path}.podReplacementPolicy"),
                p,
                &["Failed"],
            ));
        } else if !matches!(p, "Failed" | "TerminatingOrFailed") {
            errs.push(FieldError::not_supported(
                format!("{path}.podReplacementPolicy"),
                p,
                &["Failed", "TerminatingOrFailed"],
            ));
        }
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    errs.extend(validate_labels(
        template
            .pointer("/metadata/labels")
            .and_then(Value::as_object),
        &format!("{path}.template.labels"),
    ));
    if let Some(a) = template
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    {
        errs.extend(validate_annotations(
            Some(a),
            &format!("{path}.template.annotations"),
        ));
    }
    let tspec = template.get("spec").unwrap_or(&Value::Null);
    validate_pod_spec(tspec, &format!("{path}.template.spec"), errs);
    let rp_path = format!("{path}.template.spec.restartPolicy");
    match tspec
        .get("restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("")
    {
        "" | "Always" => errs.push(FieldError::required(
            &rp_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" if failure_policy => errs.push(FieldError::invalid(
            &rp_path,
            "OnFailure",
            "only \"Never\" is supported when podFailurePolicy is specified",
        )),
        "OnFailure" | "Never" => {}
        other => errs.push(FieldError::not_supported(
            &rp_path,
            other,
            &["OnFailure", "Never"],
        )),
    }
}
