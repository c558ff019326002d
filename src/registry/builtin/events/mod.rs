//! The events.k8s.io group's strategy: the same events as core/v1 in their newer shape.

use crate::registry::builtin::core::event::event_fields;
use crate::registry::field_selectors::{not_supported, SelectableFields};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct Events;

impl Strategy for Events {
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
