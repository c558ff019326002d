//! Nodes (core/v1): the kubelet registers a node with its status, field selectors and the
//! printer.

use serde_json::Value;

use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct Nodes;

impl Strategy for Nodes {
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn printer(&self) -> Printer {
        printers::NODE
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("spec.unschedulable", "spec.unschedulable"),
    ],
    reject: not_supported,
    extract: node_fields,
};

fn node_fields(obj: &Value, put: Put<'_>) {
    put(
        "spec.unschedulable",
        fields::flag(obj, &["spec", "unschedulable"]),
    );
}
