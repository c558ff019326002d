//! Events (core/v1): validation (`ValidateEventCreate` / `ValidateEventUpdate` of
//! `pkg/apis/core/validation/events.go`, shared with events.k8s.io, which adds the strict
//! rules), field selectors (`event.ToSelectableFields`, likewise shared; events.k8s.io objects
//! have the other JSON shape) and the printer.

use serde_json::Value;

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{go_time_string, is_dns1123_subdomain, is_qualified_name};
use crate::registry::builtin::checks::str_of;
use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::{is_unset, GcPolicy, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Events;

impl Strategy for Events {
    fn expires(&self) -> bool {
        true
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn keeps_status_on_create(&self) -> bool {
        true
    }

    /// Events take no part in garbage collection (kube's `rest.Unsupported`).
    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::Unsupported
    }

    /// A core/v1 request gets the legacy checks only (kube keeps them for compatibility).
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        legacy_validate(&Event::core(obj))
    }

    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        legacy_validate(&Event::core(new))
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
/// The fields of an `ObjectReference` (`involvedObject` / `regarding`).
const REFERENCE_FIELDS: [&str; 7] = [
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
];

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
    for f in REFERENCE_FIELDS {
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

/// An Event read through the internal field names, whichever API shape holds it.
pub struct Event<'a> {
    obj: &'a Value,
    /// events.k8s.io/v1 names (`regarding`, `note`, `deprecated*`, `reportingController`).
    new_api: bool,
}

impl<'a> Event<'a> {
    pub fn core(obj: &'a Value) -> Self {
        Event {
            obj,
            new_api: false,
        }
    }

    pub fn new_api(obj: &'a Value) -> Self {
        Event { obj, new_api: true }
    }

    /// The JSON field holding the internal field `name`.
    fn key(&self, name: &'static str) -> &'static str {
        match (self.new_api, name) {
            (true, "involvedObject") => "regarding",
            (true, "message") => "note",
            (true, "source") => "deprecatedSource",
            (true, "firstTimestamp") => "deprecatedFirstTimestamp",
            (true, "lastTimestamp") => "deprecatedLastTimestamp",
            (true, "count") => "deprecatedCount",
            (false, "reportingController") => "reportingComponent",
            (_, n) => n,
        }
    }

    fn get(&self, name: &'static str) -> &'a Value {
        self.obj.get(self.key(name)).unwrap_or(&Value::Null)
    }

    fn text(&self, name: &'static str) -> &'a str {
        str_of(self.obj, self.key(name))
    }

    fn namespace(&self) -> &'a str {
        self.obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn time_set(&self, name: &'static str) -> bool {
        !is_unset(self.obj.get(self.key(name)))
    }

    fn count(&self) -> i64 {
        self.get("count").as_i64().unwrap_or(0)
    }
}

/// `legacyValidateEvent`: every Event passes these, whichever API it came through.
pub fn legacy_validate(e: &Event<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ns = e.namespace();
    let involved_ns = str_of(e.get("involvedObject"), "namespace");
    let mismatch = || {
        FieldError::invalid(
            "involvedObject.namespace",
            involved_ns,
            "does not match event.namespace",
        )
    };
    if !e.time_set("eventTime") {
        // An old-style event: its namespace and the involved object's agree.
        let agrees = if involved_ns.is_empty() {
            ns.is_empty() || ns == "default"
        } else {
            ns == involved_ns
        };
        if !agrees {
            errs.push(mismatch());
        }
    } else {
        if involved_ns.is_empty() && ns != "default" && ns != "kube-system" {
            errs.push(mismatch());
        }
        let controller = e.text("reportingController");
        if controller.is_empty() {
            errs.push(FieldError::required("reportingController", ""));
        }
        for m in is_qualified_name(controller) {
            errs.push(FieldError::invalid("reportingController", controller, m));
        }
        for (field, limit) in [("reportingInstance", 128), ("action", 128), ("reason", 128)] {
            let v = e.text(field);
            if v.is_empty() {
                errs.push(FieldError::required(field, ""));
            }
            if v.len() > limit {
                errs.push(FieldError::invalid(
                    field,
                    "",
                    format!("can have at most {limit} characters"),
                ));
            }
        }
        if e.text("message").len() > 1024 {
            errs.push(FieldError::invalid(
                "message",
                "",
                "can have at most 1024 characters",
            ));
        }
    }
    for m in is_dns1123_subdomain(ns) {
        errs.push(FieldError::invalid("namespace", ns, m));
    }
    errs
}

/// `validateV1EventSeries`.
fn validate_series(e: &Event<'_>, errs: &mut Vec<FieldError>) {
    let series = e.get("series");
    if series.is_null() {
        return;
    }
    if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
        errs.push(FieldError::invalid(
            "series.count",
            "",
            "should be at least 2",
        ));
    }
    if is_unset(series.get("lastObservedTime")) {
        errs.push(FieldError::required("series.lastObservedTime", ""));
    }
}

/// `ValidateEventCreate` for events.k8s.io/v1: the legacy checks, then the strict ones
/// (object metadata is checked generically before).
pub fn validate_strict(e: &Event<'_>) -> Vec<FieldError> {
    let mut errs = legacy_validate(e);
    validate_series(e, &mut errs);
    if !e.time_set("eventTime") {
        errs.push(FieldError::required("eventTime", ""));
    }
    let t = e.text("type");
    if t != "Normal" && t != "Warning" {
        errs.push(FieldError::invalid(
            "type",
            "",
            format!("has invalid value: {t}"),
        ));
    }
    for f in ["firstTimestamp", "lastTimestamp"] {
        if e.time_set(f) {
            errs.push(FieldError::invalid(f, "", "needs to be unset"));
        }
    }
    if e.count() != 0 {
        errs.push(FieldError::invalid("count", "", "needs to be unset"));
    }
    let src = e.get("source");
    if !str_of(src, "component").is_empty() || !str_of(src, "host").is_empty() {
        errs.push(FieldError::invalid("source", "", "needs to be unset"));
    }
    errs
}

/// Go's `%#v` of a `core.ObjectReference`.
fn object_reference(r: &Value) -> String {
    let f = |k| go_quote(str_of(r, k));
    format!(
        "core.ObjectReference{{Kind:{}, Namespace:{}, Name:{}, UID:{}, APIVersion:{}, ResourceVersion:{}, FieldPath:{}}}",
        f("kind"),
        f("namespace"),
        f("name"),
        f("uid"),
        f("apiVersion"),
        f("resourceVersion"),
        f("fieldPath")
    )
}

/// `ValidateEventUpdate` for events.k8s.io/v1: legacy checks of the new event, the series
/// when it changed, then every field but the series is immutable.
pub fn validate_strict_update(new: &Event<'_>, old: &Event<'_>) -> Vec<FieldError> {
    let mut errs = legacy_validate(new);
    if new.get("series") != old.get("series") {
        validate_series(new, &mut errs);
    }
    let immutable = "field is immutable";
    let reference_fields = REFERENCE_FIELDS;
    let same_reference = |a: &Value, b: &Value| {
        reference_fields
            .iter()
            .all(|k| str_of(a, k) == str_of(b, k))
    };
    let time = |e: &Event<'_>, f| go_time_string(e.text(f));
    for field in [
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "reason",
        "type",
        "eventTime",
        "action",
        "related",
        "reportingController",
        "reportingInstance",
    ] {
        let (n, o) = (new.get(field), old.get(field));
        let err = match field {
            "involvedObject" => (!same_reference(n, o))
                .then(|| FieldError::invalid_rendered(field, &object_reference(n), immutable)),
            "related" => match (n.is_null(), o.is_null()) {
                (true, true) => None,
                (false, false) if same_reference(n, o) => None,
                (true, _) => Some(FieldError::invalid(field, Value::Null, immutable)),
                _ => Some(FieldError::invalid_rendered(
                    field,
                    &object_reference(n),
                    immutable,
                )),
            },
            "source" => (str_of(n, "component") != str_of(o, "component")
                || str_of(n, "host") != str_of(o, "host"))
            .then(|| {
                let shown = format!(
                    "core.EventSource{{Component:{}, Host:{}}}",
                    go_quote(str_of(n, "component")),
                    go_quote(str_of(n, "host"))
                );
                FieldError::invalid_rendered(field, &shown, immutable)
            }),
            "firstTimestamp" | "lastTimestamp" | "eventTime" => {
                let t = time(new, field);
                (t != time(old, field)).then(|| FieldError::invalid_rendered(field, &t, immutable))
            }
            "count" => (new.count() != old.count())
                .then(|| FieldError::invalid(field, new.count(), immutable)),
            _ => (new.text(field) != old.text(field))
                .then(|| FieldError::invalid(field, new.text(field), immutable)),
        };
        errs.extend(err);
    }
    errs
}
