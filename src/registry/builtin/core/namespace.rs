//! Namespaces (core/v1): the name label, the `kubernetes` finalizer and the Active phase on
//! create, `spec.finalizers` changed only through `/finalize`, the two-phase delete, the
//! namespaces that may never be deleted, field selectors and the printer.

use serde_json::{json, Value};

use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::object::{meta, meta_mut};
use crate::registry::strategy::{Extra, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Namespaces;

impl Strategy for Namespaces {
    fn initialize(&self, obj: &mut Value) {
        let name = meta(obj)
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let labels = meta_mut(obj).entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), json!(name));
        }
        obj["spec"] = json!({"finalizers": ["kubernetes"]});
        obj["status"] = json!({"phase": "Active"});
    }

    /// spec.finalizers change only through /finalize.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        new["spec"] = old.get("spec").cloned().unwrap_or(json!({}));
    }

    /// A namespace stays until the namespace controller has emptied it and removed its
    /// `spec.finalizers`.
    fn needs_graceful_delete(&self, obj: &Value) -> bool {
        obj.pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    }

    fn extras(&self) -> &'static [Extra] {
        &[Extra::Finalize]
    }

    fn terminating_phase(&self) -> bool {
        true
    }

    /// kube's NamespaceLifecycle rule.
    fn delete_forbidden(&self, name: &str) -> Option<&'static str> {
        matches!(name, "default" | "kube-system" | "kube-public")
            .then_some("this namespace may not be deleted")
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn printer(&self) -> Printer {
        printers::NAMESPACE
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("status.phase", "status.phase"),
        ("metadata.name", "metadata.name"),
    ],
    reject: not_supported,
    extract: namespace_fields,
};

fn namespace_fields(obj: &Value, put: Put<'_>) {
    put("status.phase", fields::text(obj, &["status", "phase"]));
    // upstream: "This is a bug, but we need to support it for backward compatibility."
    put("name", fields::text(obj, &["metadata", "name"]));
}
