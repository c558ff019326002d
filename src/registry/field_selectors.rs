//! Per-resource field selector support for built-in resources, as kube-apiserver v1.33 wires
//! it: the field label conversion functions registered with `AddFieldLabelConversionFunc`
//! (which decide which selector fields a request may use, how they are renamed, and the 400
//! text for the others) and the registry strategies' `GetAttrs` / `ToSelectableFields` (the
//! field set of a stored object).
//!
//! Flow, as in upstream's list/watch handler: parse `?fieldSelector=` with
//! [`FieldSelector::parse`], then [`transform`] (400 BadRequest with its error text unchanged
//! on failure), then match each object with `selector.matches(&field_set(..))`.
//!
//! Deliberately does not know: custom resources (CRD `selectableFields` are the caller's
//! business), storage, or HTTP. Upstream quirks are kept on purpose: apps/v1 registers no
//! conversion, so `replicasets?fieldSelector=status.replicas=1` is rejected with the default
//! message although the strategy computes that field; `status.podIPs` is accepted for pods but
//! absent from the pod field set (so it only ever equals "").

use crate::meta::fields::FieldSelector;
use serde_json::Value;
use std::collections::BTreeMap;

/// How a kind's conversion function words its rejection.
#[derive(Clone, Copy)]
enum Reject {
    /// `field label not supported: <label>` (core/v1, certificates, events.k8s.io).
    NotSupported,
    /// `field label "<label>" not supported for batchv1.Job`.
    BatchJob,
    /// `field label not supported for resource.k8s.io/<version>, Kind=ResourceSlice: <label>`.
    ResourceSlice,
}

/// A registered conversion: accepted external labels and the internal name each maps to.
struct Conversion {
    labels: &'static [(&'static str, &'static str)],
    reject: Reject,
}

const POD: &[(&str, &str)] = &[
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
];
const NODE: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("spec.unschedulable", "spec.unschedulable"),
];
const RC: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("status.replicas", "status.replicas"),
];
const CORE_EVENT: &[(&str, &str)] = &[
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
];
const EVENTS_K8S_IO: &[(&str, &str)] = &[
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
];
const NAMESPACE: &[(&str, &str)] = &[
    ("status.phase", "status.phase"),
    ("metadata.name", "metadata.name"),
];
const SECRET: &[(&str, &str)] = &[
    ("type", "type"),
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
];
const SERVICE: &[(&str, &str)] = &[
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
    ("spec.clusterIP", "spec.clusterIP"),
    ("spec.type", "spec.type"),
];
const JOB: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("status.successful", "status.successful"),
];
const SIGNER: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("spec.signerName", "spec.signerName"),
];
const RESOURCE_SLICE: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("spec.nodeName", "spec.nodeName"),
    ("spec.driver", "spec.driver"),
];
const DEFAULT: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
];

fn conversion(group: &str, resource: &str) -> Option<Conversion> {
    let (labels, reject) = match (group, resource) {
        ("", "pods") => (POD, Reject::NotSupported),
        ("", "nodes") => (NODE, Reject::NotSupported),
        ("", "replicationcontrollers") => (RC, Reject::NotSupported),
        ("", "events") => (CORE_EVENT, Reject::NotSupported),
        ("", "namespaces") => (NAMESPACE, Reject::NotSupported),
        ("", "secrets") => (SECRET, Reject::NotSupported),
        ("", "services") => (SERVICE, Reject::NotSupported),
        ("events.k8s.io", "events") => (EVENTS_K8S_IO, Reject::NotSupported),
        ("batch", "jobs") => (JOB, Reject::BatchJob),
        ("certificates.k8s.io", "certificatesigningrequests" | "clustertrustbundles") => {
            (SIGNER, Reject::NotSupported)
        }
        ("resource.k8s.io", "resourceslices") => (RESOURCE_SLICE, Reject::ResourceSlice),
        _ => return None,
    };
    Some(Conversion { labels, reject })
}

/// The version whose conversion message is used by the version-less helpers.
fn preferred_version(group: &str) -> &'static str {
    match group {
        "resource.k8s.io" => "v1beta1",
        _ => "v1",
    }
}

/// Field labels a request may use for (group, resource) (external names, e.g. pods also
/// accept the legacy `spec.host`). Resources without a registered conversion accept
/// `metadata.name` and `metadata.namespace` (upstream's default, even when cluster-scoped).
pub fn supported_fields(group: &str, resource: &str) -> Vec<&'static str> {
    let labels = conversion(group, resource).map_or(DEFAULT, |c| c.labels);
    labels.iter().map(|(ext, _)| *ext).collect()
}

/// `scheme.ConvertFieldLabel` for one term: the internal field name and value, or upstream's
/// error text. `version` only matters for kinds whose message names it (ResourceSlice).
pub fn convert_field_label(
    group: &str,
    version: &str,
    resource: &str,
    label: &str,
    value: &str,
) -> Result<(String, String), String> {
    let Some(conv) = conversion(group, resource) else {
        return match label {
            "metadata.name" | "metadata.namespace" => Ok((label.to_string(), value.to_string())),
            _ => Err(format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                crate::meta::field_error::go_quote(label)
            )),
        };
    };
    if let Some((_, internal)) = conv.labels.iter().find(|(ext, _)| *ext == label) {
        return Ok((internal.to_string(), value.to_string()));
    }
    Err(match conv.reject {
        Reject::NotSupported => format!("field label not supported: {label}"),
        Reject::BatchJob => format!(
            "field label {} not supported for batchv1.Job",
            crate::meta::field_error::go_quote(label)
        ),
        Reject::ResourceSlice => format!(
            "field label not supported for resource.k8s.io/{version}, Kind=ResourceSlice: {label}"
        ),
    })
}

/// `FieldSelector.Transform(ConvertFieldLabel)` as the list/watch handler runs it: renames
/// fields to their internal names; `Err` is the exact 400 BadRequest message.
pub fn transform_version(
    group: &str,
    version: &str,
    resource: &str,
    sel: &FieldSelector,
) -> Result<FieldSelector, String> {
    sel.transform(|label, value| convert_field_label(group, version, resource, label, value))
}

/// [`transform_version`] with the group's preferred version.
pub fn transform(
    group: &str,
    resource: &str,
    sel: &FieldSelector,
) -> Result<FieldSelector, String> {
    transform_version(group, preferred_version(group), resource, sel)
}

/// Validates a parsed selector against the supported fields; `Err` is kube-apiserver's 400
/// message, e.g. `field label not supported: foo` or
/// `"foo" is not a known field selector: only "metadata.name", "metadata.namespace"`.
/// Use [`transform`] to also get the selector to match with (pods' `spec.host` is renamed).
pub fn check(group: &str, resource: &str, sel: &FieldSelector) -> Result<(), String> {
    transform(group, resource, sel).map(|_| ())
}

fn get<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, k| v.get(*k))
}

fn s(obj: &Value, path: &[&str]) -> String {
    match get(obj, path) {
        Some(Value::String(x)) => x.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

fn b(obj: &Value, path: &[&str]) -> String {
    get(obj, path)
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .to_string()
}

fn n(obj: &Value, path: &[&str]) -> String {
    get(obj, path)
        .and_then(Value::as_i64)
        .unwrap_or(0)
        .to_string()
}

/// The field set of one object (`GetAttrs`), keyed by internal field names, values as kube
/// renders them (bools `true`/`false`, counts in decimal, missing → `""`). Always contains
/// `metadata.name` and `metadata.namespace` (empty for cluster-scoped objects, which matches
/// upstream because a missing field reads as `""`). Match a [`transform`]ed selector against it;
/// renamed external labels (pods' `spec.host`, events.k8s.io's `regarding.*` and
/// `reportingController`) are present as aliases too, so a selector that only went through
/// [`check`] matches the same objects.
pub fn field_set(group: &str, resource: &str, obj: &Value) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("metadata.name".to_string(), s(obj, &["metadata", "name"]));
    m.insert(
        "metadata.namespace".to_string(),
        s(obj, &["metadata", "namespace"]),
    );
    let mut put = |k: &str, v: String| {
        m.insert(k.to_string(), v);
    };
    let conv = conversion(group, resource);
    match (group, resource) {
        ("", "pods") => {
            put("spec.nodeName", s(obj, &["spec", "nodeName"]));
            put("spec.restartPolicy", s(obj, &["spec", "restartPolicy"]));
            put("spec.schedulerName", s(obj, &["spec", "schedulerName"]));
            let mut sa = s(obj, &["spec", "serviceAccountName"]);
            if sa.is_empty() {
                // v1 → internal conversion falls back to the deprecated field
                sa = s(obj, &["spec", "serviceAccount"]);
            }
            put("spec.serviceAccountName", sa);
            put("spec.hostNetwork", b(obj, &["spec", "hostNetwork"]));
            put("status.phase", s(obj, &["status", "phase"]));
            let ip = get(obj, &["status", "podIPs"])
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .map(|first| s(first, &["ip"]))
                .unwrap_or_else(|| s(obj, &["status", "podIP"]));
            put("status.podIP", ip);
            put(
                "status.nominatedNodeName",
                s(obj, &["status", "nominatedNodeName"]),
            );
        }
        ("", "nodes") => put("spec.unschedulable", b(obj, &["spec", "unschedulable"])),
        ("", "replicationcontrollers") | ("apps", "replicasets") => {
            put("status.replicas", n(obj, &["status", "replicas"]))
        }
        ("", "events") | ("events.k8s.io", "events") => event_fields(obj, &mut put),
        ("", "namespaces") => {
            put("status.phase", s(obj, &["status", "phase"]));
            // upstream: "This is a bug, but we need to support it for backward compatibility."
            put("name", s(obj, &["metadata", "name"]));
        }
        ("", "secrets") => put("type", s(obj, &["type"])),
        ("", "services") => {
            put("spec.clusterIP", s(obj, &["spec", "clusterIP"]));
            put("spec.type", s(obj, &["spec", "type"]));
        }
        ("batch", "jobs") => put("status.successful", n(obj, &["status", "succeeded"])),
        ("certificates.k8s.io", "certificatesigningrequests" | "clustertrustbundles") => {
            put("spec.signerName", s(obj, &["spec", "signerName"]))
        }
        ("resource.k8s.io", "resourceslices") => {
            put("spec.nodeName", s(obj, &["spec", "nodeName"]));
            put("spec.driver", s(obj, &["spec", "driver"]));
        }
        _ => {}
    }
    // aliases for external labels that conversion renames
    for (ext, internal) in conv.map_or(&[][..], |c| c.labels) {
        if ext != internal {
            let v = m.get(*internal).cloned().unwrap_or_default();
            m.insert(ext.to_string(), v);
        }
    }
    m
}

/// Event fields (`event.ToSelectableFields`) from either JSON shape: core/v1
/// (`involvedObject`, `source.component`, `reportingComponent`) or events.k8s.io/v1
/// (`regarding`, `deprecatedSource.component`, `reportingController`).
fn event_fields(obj: &Value, put: &mut impl FnMut(&str, String)) {
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
        put(&format!("involvedObject.{f}"), s(obj, &[reference, f]));
    }
    put("reason", s(obj, &["reason"]));
    let reporting = s(obj, &[reporting]);
    let mut src = s(obj, &[source, "component"]);
    if src.is_empty() {
        src = reporting.clone();
    }
    put("reportingComponent", reporting);
    put("source", src);
    put("type", s(obj, &["type"]));
}

/// Convenience: does `obj` satisfy an already [`transform`]ed selector?
pub fn matches(group: &str, resource: &str, transformed: &FieldSelector, obj: &Value) -> bool {
    transformed.is_empty() || transformed.matches(&field_set(group, resource, obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(s: &str) -> FieldSelector {
        FieldSelector::parse(s).unwrap()
    }

    #[test]
    fn checks() {
        let cases: Vec<(&str, &str, &str, Result<&str, &str>)> = vec![
            ("", "pods", "spec.nodeName=n1,status.phase!=Running", Ok("spec.nodeName=n1,status.phase!=Running")),
            ("", "pods", "spec.host=n1", Ok("spec.nodeName=n1")),
            ("", "pods", "status.podIPs=1.2.3.4", Ok("status.podIPs=1.2.3.4")),
            ("", "pods", "foo=bar", Err("field label not supported: foo")),
            ("", "nodes", "metadata.namespace=x", Err("field label not supported: metadata.namespace")),
            ("", "nodes", "spec.unschedulable=true", Ok("spec.unschedulable=true")),
            ("", "namespaces", "status.phase=Active", Ok("status.phase=Active")),
            ("", "namespaces", "name=x", Err("field label not supported: name")),
            ("", "secrets", "type=Opaque", Ok("type=Opaque")),
            ("", "services", "spec.type=ClusterIP", Ok("spec.type=ClusterIP")),
            ("", "events", "involvedObject.name=p,reason=Failed", Ok("involvedObject.name=p,reason=Failed")),
            ("events.k8s.io", "events", "regarding.name=p,reportingController=k", Ok("involvedObject.name=p,reportingComponent=k")),
            ("events.k8s.io", "events", "involvedObject.name=p", Err("field label not supported: involvedObject.name")),
            ("batch", "jobs", "status.successful=1", Ok("status.successful=1")),
            ("batch", "jobs", "status.succeeded=1", Err("field label \"status.succeeded\" not supported for batchv1.Job")),
            ("apps", "replicasets", "status.replicas=0", Err("\"status.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")),
            ("apps", "deployments", "metadata.name=d", Ok("metadata.name=d")),
            ("", "configmaps", "metadata.namespace=default", Ok("metadata.namespace=default")),
            ("", "persistentvolumeclaims", "status.phase=Bound", Err("\"status.phase\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")),
            ("", "replicationcontrollers", "status.replicas=2", Ok("status.replicas=2")),
            ("certificates.k8s.io", "certificatesigningrequests", "spec.signerName=x", Ok("spec.signerName=x")),
            ("certificates.k8s.io", "certificatesigningrequests", "metadata.namespace=x", Err("field label not supported: metadata.namespace")),
            ("resource.k8s.io", "resourceslices", "spec.pool=x", Err("field label not supported for resource.k8s.io/v1beta1, Kind=ResourceSlice: spec.pool")),
            ("", "pods", "", Ok("")),
        ];
        for (g, r, input, want) in cases {
            let got = transform(g, r, &sel(input)).map(|s| s.to_string());
            let expect = want.map(str::to_string).map_err(str::to_string);
            assert_eq!(got, expect, "{g}/{r} {input}");
            assert_eq!(check(g, r, &sel(input)).is_ok(), want.is_ok());
        }
        assert!(supported_fields("", "pods").contains(&"status.nominatedNodeName"));
        assert_eq!(
            supported_fields("apps", "deployments"),
            vec!["metadata.name", "metadata.namespace"]
        );
        assert_eq!(
            transform_version("resource.k8s.io", "v1beta2", "resourceslices", &sel("x=1"))
                .unwrap_err(),
            "field label not supported for resource.k8s.io/v1beta2, Kind=ResourceSlice: x"
        );
    }

    fn fs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn pod_fields() {
        let pod = json!({"metadata": {"name": "p", "namespace": "ns"},
            "spec": {"nodeName": "n1", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                     "serviceAccount": "sa", "hostNetwork": true},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.2"}], "nominatedNodeName": ""}});
        assert_eq!(
            field_set("", "pods", &pod),
            fs(&[
                ("metadata.name", "p"),
                ("metadata.namespace", "ns"),
                ("spec.nodeName", "n1"),
                ("spec.restartPolicy", "Always"),
                ("spec.schedulerName", "default-scheduler"),
                ("spec.serviceAccountName", "sa"),
                ("spec.hostNetwork", "true"),
                ("status.phase", "Running"),
                ("status.podIP", "10.0.0.2"),
                ("status.nominatedNodeName", ""),
                ("spec.host", "n1"),
            ])
        );
        // an untransformed selector matches the same way through the alias
        assert!(matches("", "pods", &sel("spec.host=n1"), &pod));
        let bare = json!({"metadata": {"name": "q"}});
        let f = field_set("", "pods", &bare);
        assert_eq!(f["spec.hostNetwork"], "false");
        assert_eq!(f["status.podIP"], "");
        let cases = [
            ("spec.host=n1", true),
            ("spec.nodeName!=", true),
            ("status.podIPs=", true),
            ("status.podIPs=10.0.0.2", false),
            ("spec.hostNetwork=true,metadata.namespace=ns", true),
            ("metadata.name=x", false),
        ];
        for (s_, want) in cases {
            let t = transform("", "pods", &sel(s_)).unwrap();
            assert_eq!(matches("", "pods", &t, &pod), want, "{s_}");
        }
    }

    #[test]
    fn other_fields() {
        type Case<'a> = (&'a str, &'a str, Value, Vec<(&'a str, &'a str)>);
        let cases: Vec<Case> = vec![
            (
                "",
                "secrets",
                json!({"metadata": {"name": "s", "namespace": "d"}, "type": "Opaque"}),
                vec![("type", "Opaque")],
            ),
            (
                "",
                "nodes",
                json!({"metadata": {"name": "n"}, "spec": {"unschedulable": true}}),
                vec![("spec.unschedulable", "true"), ("metadata.namespace", "")],
            ),
            (
                "",
                "nodes",
                json!({"metadata": {"name": "n"}}),
                vec![("spec.unschedulable", "false")],
            ),
            (
                "",
                "namespaces",
                json!({"metadata": {"name": "ns"}, "status": {"phase": "Active"}}),
                vec![("status.phase", "Active"), ("name", "ns")],
            ),
            (
                "",
                "replicationcontrollers",
                json!({"metadata": {"name": "r"}, "status": {"replicas": 3}}),
                vec![("status.replicas", "3")],
            ),
            (
                "batch",
                "jobs",
                json!({"metadata": {"name": "j"}, "status": {}}),
                vec![("status.successful", "0")],
            ),
            (
                "batch",
                "jobs",
                json!({"metadata": {"name": "j"}, "status": {"succeeded": 2}}),
                vec![("status.successful", "2")],
            ),
            (
                "",
                "services",
                json!({"metadata": {"name": "s"}, "spec": {"clusterIP": "None", "type": "ClusterIP"}}),
                vec![("spec.clusterIP", "None"), ("spec.type", "ClusterIP")],
            ),
            (
                "certificates.k8s.io",
                "certificatesigningrequests",
                json!({"metadata": {"name": "c"}, "spec": {"signerName": "kubernetes.io/kubelet-serving"}}),
                vec![("spec.signerName", "kubernetes.io/kubelet-serving")],
            ),
            (
                "resource.k8s.io",
                "resourceslices",
                json!({"metadata": {"name": "r"}, "spec": {"nodeName": "n", "driver": "d.example.com"}}),
                vec![("spec.nodeName", "n"), ("spec.driver", "d.example.com")],
            ),
        ];
        for (g, r, obj, want) in cases {
            let got = field_set(g, r, &obj);
            for (k, v) in want {
                assert_eq!(got.get(k).map(String::as_str), Some(v), "{g}/{r} {k}");
            }
        }
    }

    #[test]
    fn event_fields_both_shapes() {
        let core = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "u", "apiVersion": "v1", "resourceVersion": "7", "fieldPath": "spec.containers{c}"},
            "reason": "Failed", "source": {"component": "kubelet"}, "type": "Warning"});
        assert_eq!(
            field_set("", "events", &core),
            fs(&[
                ("metadata.name", "e"),
                ("metadata.namespace", "ns"),
                ("involvedObject.kind", "Pod"),
                ("involvedObject.namespace", "ns"),
                ("involvedObject.name", "p"),
                ("involvedObject.uid", "u"),
                ("involvedObject.apiVersion", "v1"),
                ("involvedObject.resourceVersion", "7"),
                ("involvedObject.fieldPath", "spec.containers{c}"),
                ("reason", "Failed"),
                ("reportingComponent", ""),
                ("source", "kubelet"),
                ("type", "Warning"),
            ])
        );
        let new = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "regarding": {"kind": "Pod", "name": "p"}, "reason": "Started",
            "reportingController": "ctrl", "type": "Normal"});
        let f = field_set("events.k8s.io", "events", &new);
        assert_eq!(f["involvedObject.name"], "p");
        assert_eq!(f["reportingComponent"], "ctrl");
        assert_eq!(f["source"], "ctrl");
        let t = transform(
            "events.k8s.io",
            "events",
            &sel("regarding.kind=Pod,reportingController=ctrl"),
        )
        .unwrap();
        assert!(matches("events.k8s.io", "events", &t, &new));
        assert!(matches(
            "events.k8s.io",
            "events",
            &sel("regarding.kind=Pod,reportingController=ctrl"),
            &new
        ));
        let t = transform(
            "",
            "events",
            &sel("involvedObject.kind=Pod,source=kubelet,type=Warning"),
        )
        .unwrap();
        assert!(matches("", "events", &t, &core));
    }
}
