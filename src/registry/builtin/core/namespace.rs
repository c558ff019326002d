//! Namespaces (core/v1): the name label, the `kubernetes` finalizer and the Active phase on
//! create, `spec.finalizers` changed only through `/finalize`, the two-phase delete, the
//! namespaces that may never be deleted, field selectors and the printer.

use crate::registry::object::Part;
use crate::registry::strategy::{default_reset_fields, ResetFields};
use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::is_qualified_name;

use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::object::{meta, meta_mut};
use crate::registry::strategy::{Extra, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Namespaces;

impl Strategy for Namespaces {
    /// kube's namespace finalize strategy resets the status.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Finalize => &[&["status"]],
            _ => default_reset_fields(part, has_status),
        }
    }

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

    /// `ValidateNamespace`: the spec's finalizer names (reported at `spec.finalizers`).
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for f in finalizers(obj) {
            finalizer_errors(f, "spec.finalizers", &mut errs);
        }
        errs
    }

    /// `ValidateNamespaceFinalizeUpdate` (the only update that can change the spec): each
    /// finalizer name, at its index.
    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for (i, f) in finalizers(new).iter().enumerate() {
            finalizer_errors(f, &format!("spec.finalizers[{i}]"), &mut errs);
        }
        errs
    }

    /// `SetDefaults_NamespaceStatus`: an empty phase is `Active` (the status is a
    /// non-pointer struct, so a missing one is defaulted too).
    fn default(&self, obj: &mut Value) {
        if !obj.get("status").is_some_and(Value::is_object) {
            if let Some(o) = obj.as_object_mut() {
                o.insert("status".into(), json!({}));
            }
        }
        if let Some(st) = obj.get_mut("status").and_then(Value::as_object_mut) {
            if st
                .get("phase")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                st.insert("phase".into(), json!("Active"));
            }
        }
    }

    /// `ValidateNamespaceStatusUpdate`: the phase follows the deletion (the path is
    /// upstream's, `status.Phase`).
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let phase = new
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        let deleting = meta(new)
            .get("deletionTimestamp")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.is_empty());
        let (want, msg) = if deleting {
            (
                "Terminating",
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        } else {
            (
                "Active",
                "may only be 'Active' if `deletionTimestamp` is empty",
            )
        };
        if phase == want {
            return Vec::new();
        }
        vec![FieldError::invalid("status.Phase", phase, msg)]
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

fn finalizers(obj: &Value) -> Vec<&str> {
    obj.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// `validateFinalizerName`: a qualified name, and a standard one unless domain-prefixed.
fn finalizer_errors(name: &str, path: &str, errs: &mut Vec<FieldError>) {
    for m in is_qualified_name(name) {
        errs.push(FieldError::invalid(path, name, m));
    }
    if !name.contains('/') && !matches!(name, "kubernetes" | "orphan" | "foregroundDeletion") {
        errs.push(FieldError::invalid(
            path,
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
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
