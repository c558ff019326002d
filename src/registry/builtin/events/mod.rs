//! The events.k8s.io group's strategy: the same events as core/v1 in their newer shape,
//! held to the strict rules kube applies to requests through events.k8s.io/v1. They are
//! stored with the core Events (one set of objects under either API, as kube's cohabiting
//! resources), converted by renaming fields.

use serde_json::Value;

use crate::meta::field_error::FieldError;
use crate::registry::builtin::core::event::{
    event_fields, validate_strict, validate_strict_update, Event,
};
use crate::registry::field_selectors::{not_supported, SelectableFields};
use crate::registry::strategy::{ConversionError, GcPolicy, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Events;

/// (events.k8s.io/v1 name, core/v1 name) of the fields that differ.
const RENAMES: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

fn rename(obj: &mut Value, api_version: &str, to_core: bool) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    for (new_api, core) in RENAMES {
        let (from, to) = if to_core {
            (new_api, core)
        } else {
            (core, new_api)
        };
        if let Some(v) = o.shift_remove(*from) {
            o.insert((*to).to_string(), v);
        }
    }
    o.insert("apiVersion".into(), Value::String(api_version.into()));
}

impl Strategy for Events {
    fn expires(&self) -> bool {
        true
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn to_storage(&self, obj: &mut Value) -> Result<(), ConversionError> {
        rename(obj, "v1", true);
        Ok(())
    }

    fn from_storage(&self, obj: &mut Value) -> Result<(), ConversionError> {
        rename(obj, "events.k8s.io/v1", false);
        Ok(())
    }

    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::Unsupported
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_strict(&Event::core(obj))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_strict_update(&Event::core(new), &Event::core(old))
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
