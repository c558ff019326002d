//! ReplicationControllers (core/v1): selector and labels defaulted from the template, the
//! orphaning GC default, field selectors and the printer.

use crate::meta::field_error::FieldError;
use crate::registry::builtin::checks;
use crate::registry::builtin::core::pod_warnings as pw;
use serde_json::{json, Map, Value};

use super::pod_spec::default_template;
use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::object::meta_mut;
use crate::registry::strategy::{obj_entry, GcPolicy, Strategy};
use crate::registry::table::{printers, Printer};

pub struct ReplicationControllers;

impl Strategy for ReplicationControllers {
    fn quota(&self) -> Option<&'static dyn crate::registry::quota::Evaluator> {
        Some(&crate::registry::quota::Legacy("replicationcontrollers"))
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::workload_on_create(obj, pw::SPEC_TEMPLATE)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        pw::on_update(new, old, pw::SPEC_TEMPLATE)
    }

    /// SetDefaults_ReplicationController: selector and labels from the template's labels.
    fn default(&self, obj: &mut Value) {
        let labels = obj
            .pointer("/spec/template/metadata/labels")
            .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
            .cloned();
        if let Some(labels) = labels {
            let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(Map::is_empty);
            if empty(obj.pointer("/spec/selector")) {
                obj_entry(obj, "spec").insert("selector".into(), labels.clone());
            }
            if empty(obj.pointer("/metadata/labels")) {
                meta_mut(obj).insert("labels".into(), labels);
            }
        }
        let spec = obj_entry(obj, "spec");
        spec.entry("replicas").or_insert(json!(1));
        default_template(spec);
    }

    /// Kept for backwards compatibility: core/v1 orphans a controller's pods by default.
    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::OrphanDependents
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    /// PrepareForCreate resets the status: the ReplicationControllerStatus{} encodes as `{"replicas": 0}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"replicas": 0});
    }

    /// `ValidateReplicationControllerStatusUpdate`.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        checks::replica_set_status(new)
    }

    fn printer(&self) -> Printer {
        printers::RC
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("metadata.namespace", "metadata.namespace"),
        ("status.replicas", "status.replicas"),
    ],
    reject: not_supported,
    extract: rc_fields,
};

fn rc_fields(obj: &Value, put: Put<'_>) {
    put(
        "status.replicas",
        fields::count(obj, &["status", "replicas"]),
    );
}
