//! The events.k8s.io group's strategy: the same events as core/v1 in their newer shape,
//! held to the strict rules kube applies to requests through events.k8s.io/v1.

use serde_json::Value;

use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::event::{
    event_fields, validate_strict, validate_strict_update, Event,
};
use crate::registry::field_selectors::{not_supported, SelectableFields};
use crate::registry::strategy::{GcPolicy, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Events;

impl Strategy for Events {
    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::Unsupported
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_strict(&Event::new_api(obj))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_strict_update(&Event::new_api(new), &Event::new_api(old))
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn printer(&self) -> Printer {
        printers::EVENT
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("reason", "reason"),
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("regarding.apiVersion", "involvedObject.apiVersion"),
        (
            "regarding.resourceVersion",
            "involvedObject.resourceVersion",
        ),
        ("regarding.fieldPath", "involvedObject.fieldPath"),
        ("reportingController", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
    ],
    reject: not_supported,
    extract: event_fields,
};
