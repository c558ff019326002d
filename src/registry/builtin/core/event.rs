//! Events (core/v1): field selectors (`event.ToSelectableFields`, shared with
//! events.k8s.io, whose objects have the other JSON shape) and the printer.

use serde_json::Value;

use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct Events;

impl Strategy for Events {
    fn keeps_status_on_create(&self) -> bool {
        true
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
        ("involvedObject.kind", "involvedObject.kind"),
        ("involvedObject.namespace", "involvedObject.namespace"),
        ("involvedObject.name", "involvedObject.name"),
        ("involvedObject.uid", "involvedObject.uid"),
        ("involvedObject.apiVersion", "involvedObject.apiVersion"),
        (
            "involvedObject.resourceVersion",
            "involvedObject.resourceVersion",
        ),
        ("involvedObject.fieldPath", "involvedObject.fieldPath"),
        ("reason", "reason"),
        ("reportingComponent", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
    ],
    reject: not_supported,
    extract: event_fields,
};

/// Event fields from either JSON shape: core/v1 (`involvedObject`, `source.component`,
/// `reportingComponent`) or events.k8s.io/v1 (`regarding`, `deprecatedSource.component`,
/// `reportingController`).
pub fn event_fields(obj: &Value, put: Put<'_>) {
    use fields::text;
    let core_shape = obj.get("involvedObject").is_some()
        || obj.get("apiVersion").and_then(Value::as_str) == Some("v1");
    let (reference, source, reporting) = if core_shape {
        ("involvedObject", "source", "reportingComponent")
    } else {
        ("regarding", "deprecatedSource", "reportingController")
    };
    for f in [
        "kind",
        "namespace",
        "name",
        "uid",
        "apiVersion",
        "resourceVersion",
        "fieldPath",
    ] {
        put(&format!("involvedObject.{f}"), text(obj, &[reference, f]));
    }
    put("reason", text(obj, &["reason"]));
    let reporting = text(obj, &[reporting]);
    let mut src = text(obj, &[source, "component"]);
    if src.is_empty() {
        src = reporting.clone();
    }
    put("reportingComponent", reporting);
    put("source", src);
    put("type", text(obj, &["type"]));
}
