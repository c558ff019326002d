//! Pods (core/v1): defaults, the initial status, validation, graceful deletion, field
//! selectors and the printer.

use crate::registry::builtin::core::pod_warnings as pw;
use crate::registry::object::Part;
use crate::registry::strategy::{default_reset_fields, ResetFields};
use serde_json::{json, Map, Value};

use super::pod_spec::default_pod_spec;
use super::pod_subresources;
use super::pod_validation::{validate_pod_spec, validate_pod_spec_update};
use super::qos::pod_qos;
use crate::meta::field_error::FieldError;
use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::{Extra, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Pods;

impl Strategy for Pods {
    /// kube's pod status strategy resets the deletion timestamp and owner references too.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Status => &[
                &["spec"],
                &["metadata", "deletionTimestamp"],
                &["metadata", "ownerReferences"],
            ],
            // kube keeps only the subresource's own fields of an apply; the status is the
            // part of the rest a client could claim.
            Part::Sub(_) => &[&["status"]],
            _ => default_reset_fields(part, has_status),
        }
    }

    fn quota(&self) -> Option<&'static dyn crate::registry::quota::Evaluator> {
        Some(&crate::registry::quota::Pods)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pw::pod_on_create(obj)
    }

    // No warnings on update: kube skips them for pods (a high-frequency path that humans
    // rarely drive).

    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            default_pod_spec(spec);
            // SetDefaults_Pod (pods only, not templates).
            spec.entry("enableServiceLinks").or_insert(json!(true));
            for list in ["containers", "initContainers"] {
                if let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) {
                    for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                        requests_from_limits(c);
                    }
                }
            }
        }
    }

    fn initialize(&self, obj: &mut Value) {
        let qos = pod_qos(obj.get("spec").unwrap_or(&Value::Null));
        obj["status"] = json!({"phase": "Pending", "qosClass": qos});
    }

    /// kube computes the QoS class in PrepareForCreate, which runs after the mutating
    /// admission phase: the resources LimitRanger (or another plugin) set count.
    fn after_mutating_admission(&self, obj: &mut Value) {
        let qos = pod_qos(obj.get("spec").unwrap_or(&Value::Null));
        if let Some(st) = obj.get_mut("status").and_then(Value::as_object_mut) {
            st.insert("qosClass".into(), json!(qos));
        }
    }

    /// podStatusStrategy resets only the spec, the owner references and the deletion
    /// timestamp: labels, annotations and finalizers follow the request (NodeRestriction
    /// refuses a kubelet's label change).
    fn status_metadata(&self) -> &'static [&'static str] {
        &["labels", "annotations", "finalizers"]
    }

    /// `ValidatePodCreate` (the spec part).
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_pod_spec(obj.get("spec").unwrap_or(&Value::Null), "spec", &mut errs);
        if obj
            .pointer("/spec/ephemeralContainers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
        {
            errs.push(FieldError::forbidden(
                "spec.ephemeralContainers",
                "cannot be set on create",
            ));
        }
        errs
    }

    /// `ValidatePodUpdate`: the spec as on create, then what may not change.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_pod_spec(new.get("spec").unwrap_or(&Value::Null), "spec", &mut errs);
        validate_pod_spec_update(new, old, &mut errs);
        errs
    }

    fn prepare_for_status_update(&self, new: &mut Value, old: &Value, _now: &str) {
        super::pod_status::prepare(new, old);
    }

    /// `ValidatePodStatusUpdate` (see [`super::pod_status`]).
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        super::pod_status::validate(new, old)
    }

    /// `CheckGracefulDelete`: the request's grace period, else the pod's
    /// `terminationGracePeriodSeconds`; 0 when it is not scheduled or has already terminated.
    fn graceful_delete_period(&self, obj: &Value, requested: Option<i64>) -> Option<i64> {
        let spec = obj.get("spec");
        let mut period = requested.unwrap_or_else(|| {
            spec.and_then(|s| s.get("terminationGracePeriodSeconds"))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        });
        let node = spec
            .and_then(|s| s.get("nodeName"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let phase = obj.pointer("/status/phase").and_then(Value::as_str);
        if node.is_empty() || matches!(phase, Some("Failed" | "Succeeded")) {
            period = 0;
        }
        Some(period.max(0))
    }

    fn extras(&self) -> &'static [Extra] {
        &[
            Extra::PodAttach,
            Extra::Binding,
            Extra::Eviction,
            Extra::PodExec,
            Extra::PodLog,
            Extra::PodPortForward,
            Extra::PodProxy,
            Extra::Writes(pod_subresources::EPHEMERAL),
            Extra::Writes(pod_subresources::RESIZE),
        ]
    }

    fn prepare_for_subresource_update(
        &self,
        sub: &str,
        new: &mut Value,
        sent: &Value,
        old: &Value,
    ) {
        pod_subresources::prepare(sub, new, sent, old);
    }

    /// `ValidatePodEphemeralContainersUpdate` / `ValidatePodResize`.
    fn validate_subresource_update(&self, sub: &str, new: &Value, old: &Value) -> Vec<FieldError> {
        pod_subresources::validate(sub, new, old)
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn printer(&self) -> Printer {
        printers::POD
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("metadata.namespace", "metadata.namespace"),
        ("spec.nodeName", "spec.nodeName"),
        ("spec.restartPolicy", "spec.restartPolicy"),
        ("spec.schedulerName", "spec.schedulerName"),
        ("spec.serviceAccountName", "spec.serviceAccountName"),
        ("spec.hostNetwork", "spec.hostNetwork"),
        ("status.phase", "status.phase"),
        ("status.podIP", "status.podIP"),
        ("status.podIPs", "status.podIPs"),
        ("status.nominatedNodeName", "status.nominatedNodeName"),
        // backwards compatibility with old v1 clients
        ("spec.host", "spec.nodeName"),
    ],
    reject: not_supported,
    extract: pod_fields,
};

fn pod_fields(obj: &Value, put: Put<'_>) {
    use fields::{flag, text};
    put("spec.nodeName", text(obj, &["spec", "nodeName"]));
    put("spec.restartPolicy", text(obj, &["spec", "restartPolicy"]));
    put("spec.schedulerName", text(obj, &["spec", "schedulerName"]));
    let mut sa = text(obj, &["spec", "serviceAccountName"]);
    if sa.is_empty() {
        // v1 → internal conversion falls back to the deprecated field
        sa = text(obj, &["spec", "serviceAccount"]);
    }
    put("spec.serviceAccountName", sa);
    put("spec.hostNetwork", flag(obj, &["spec", "hostNetwork"]));
    put("status.phase", text(obj, &["status", "phase"]));
    let ip = obj
        .pointer("/status/podIPs")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .map(|first| text(first, &["ip"]))
        .unwrap_or_else(|| text(obj, &["status", "podIP"]));
    put("status.podIP", ip);
    put(
        "status.nominatedNodeName",
        text(obj, &["status", "nominatedNodeName"]),
    );
}

/// A container's requests default to its limits (pods only).
fn requests_from_limits(c: &mut Map<String, Value>) {
    let Some(limits) = c
        .get("resources")
        .and_then(|r| r.get("limits"))
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
        return;
    };
    let req = res.entry("requests").or_insert_with(|| json!({}));
    if let Some(req) = req.as_object_mut() {
        for (k, v) in limits {
            req.entry(k).or_insert(v);
        }
    }
}
