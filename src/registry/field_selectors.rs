//! Field selectors of served resources, as kube-apiserver v1.33 wires them: a resource's
//! [`SelectableFields`] (named by its strategy) stand for the field label conversion function
//! registered with `AddFieldLabelConversionFunc` (which selector fields a request may use, how
//! they are renamed, the 400 text for the others) and for the strategy's `GetAttrs` /
//! `ToSelectableFields` (the field set of a stored object).
//!
//! Flow, as in upstream's list/watch handler: parse `?fieldSelector=` with
//! [`FieldSelector::parse`], then [`transform`] (400 BadRequest with its error text unchanged
//! on failure), then match each object with [`matches`].
//!
//! Upstream quirks are kept on purpose: apps/v1 registers no conversion, so
//! `replicasets?fieldSelector=status.replicas=1` is rejected with the default message;
//! `status.podIPs` is accepted for pods but absent from the pod field set (so it only ever
//! equals "").

use std::collections::BTreeMap;

use serde_json::Value;

use super::jsonpath::JsonPath;
use super::strategy::Strategy;
use crate::meta::fields::FieldSelector;

pub use super::strategy::{Put, SelectableFields};

/// The rejection most kinds use: `field label not supported: <label>`.
pub fn not_supported(label: &str, _version: &str) -> String {
    format!("field label not supported: {label}")
}

/// What a resource without its own conversion accepts (upstream's default, even when
/// cluster-scoped).
const DEFAULT: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
];

/// Field labels a request may use for `res` (external names, e.g. pods also accept the
/// legacy `spec.host`).
pub fn supported_fields(strategy: &dyn Strategy) -> Vec<String> {
    let labels = strategy.fields().map_or(DEFAULT, |f| f.labels);
    let mut out: Vec<String> = labels.iter().map(|(ext, _)| ext.to_string()).collect();
    out.extend(
        strategy
            .field_paths()
            .iter()
            .map(|(label, _)| label.clone()),
    );
    out
}

/// `scheme.ConvertFieldLabel` for one term of a request to `version`: the internal field
/// name and value, or upstream's error text.
pub fn convert_field_label(
    strategy: &dyn Strategy,
    version: &str,
    label: &str,
    value: &str,
) -> Result<(String, String), String> {
    let paths = strategy.field_paths();
    if !paths.is_empty() {
        // A custom resource's `selectableFields` (kube's conversion for them).
        let known = matches!(label, "metadata.name" | "metadata.namespace")
            || paths.iter().any(|(l, _)| l == label);
        return match known {
            true => Ok((label.to_string(), value.to_string())),
            false => Err(format!("field label not supported: {label}")),
        };
    }
    let Some(fields) = strategy.fields() else {
        return match label {
            "metadata.name" | "metadata.namespace" => Ok((label.to_string(), value.to_string())),
            _ => Err(format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                crate::meta::field_error::go_quote(label)
            )),
        };
    };
    match fields.labels.iter().find(|(ext, _)| *ext == label) {
        Some((_, internal)) => Ok((internal.to_string(), value.to_string())),
        None => Err((fields.reject)(label, version)),
    }
}

/// `FieldSelector.Transform(ConvertFieldLabel)` as the list/watch handler runs it: renames
/// fields to their internal names; `Err` is the exact 400 BadRequest message.
pub fn transform(
    strategy: &dyn Strategy,
    version: &str,
    sel: &FieldSelector,
) -> Result<FieldSelector, String> {
    sel.transform(|label, value| convert_field_label(strategy, version, label, value))
}

/// Validates a parsed selector against the supported fields; `Err` is kube-apiserver's 400
/// message. Use [`transform`] to also get the selector to match with.
pub fn check(strategy: &dyn Strategy, version: &str, sel: &FieldSelector) -> Result<(), String> {
    transform(strategy, version, sel).map(|_| ())
}

fn get<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, k| v.get(*k))
}

/// A string field (missing → `""`).
pub fn text(obj: &Value, path: &[&str]) -> String {
    get(obj, path)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// A bool field as kube renders it (missing → `false`).
pub fn flag(obj: &Value, path: &[&str]) -> String {
    get(obj, path)
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .to_string()
}

/// A count field in decimal (missing → `0`).
pub fn count(obj: &Value, path: &[&str]) -> String {
    get(obj, path)
        .and_then(Value::as_i64)
        .unwrap_or(0)
        .to_string()
}

/// The field set of one object (`GetAttrs`), keyed by internal field names, values as kube
/// renders them (bools `true`/`false`, counts in decimal, missing → `""`). Always contains
/// `metadata.name` and `metadata.namespace` (empty for cluster-scoped objects, which matches
/// upstream because a missing field reads as `""`). Renamed external labels (pods'
/// `spec.host`, events.k8s.io's `regarding.*`) are present as aliases too, so a selector that
/// only went through [`check`] matches the same objects.
pub fn field_set(strategy: &dyn Strategy, obj: &Value) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert(
        "metadata.name".to_string(),
        text(obj, &["metadata", "name"]),
    );
    m.insert(
        "metadata.namespace".to_string(),
        text(obj, &["metadata", "namespace"]),
    );
    for (label, path) in strategy.field_paths() {
        m.insert(label.clone(), path_value(path, obj));
    }
    let Some(fields) = strategy.fields() else {
        return m;
    };
    (fields.extract)(obj, &mut |k: &str, v: String| {
        m.insert(k.to_string(), v);
    });
    for (ext, internal) in fields.labels {
        if ext != internal {
            let v = m.get(*internal).cloned().unwrap_or_default();
            m.insert(ext.to_string(), v);
        }
    }
    m
}

/// A selectable field's value as kube renders it: the first match of its JSONPath (a string
/// as is, numbers and bools as printed); `""` when absent.
fn path_value(path: &JsonPath, obj: &Value) -> String {
    match path.find(obj).first() {
        Some(Value::String(s)) => s.clone(),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_string(),
        _ => String::new(),
    }
}

/// A custom resource version's `selectableFields`: (label, path), the label being the path
/// without its leading dot (`.spec.color` → `spec.color`).
pub fn custom_paths(version: &Value) -> Vec<(String, JsonPath)> {
    version
        .get("selectableFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
        .filter_map(|p| {
            let parsed = JsonPath::parse(p).ok()?;
            Some((p.trim_start_matches('.').to_string(), parsed))
        })
        .collect()
}

/// Does `obj` satisfy an already [`transform`]ed selector?
pub fn matches(strategy: &dyn Strategy, transformed: &FieldSelector, obj: &Value) -> bool {
    transformed.is_empty() || transformed.matches(&field_set(strategy, obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(group: &str, resource: &str) -> std::sync::Arc<crate::registry::Resource> {
        crate::registry::builtin::registry()
            .snapshot()
            .resolve(group, resource)
            .cloned()
            .unwrap_or_else(|| panic!("{group}/{resource} is served"))
    }

    fn transform(g: &str, r: &str, s: &FieldSelector) -> Result<FieldSelector, String> {
        let r = res(g, r);
        super::transform(&*r.strategy, &r.version, s)
    }

    fn check(g: &str, r: &str, s: &FieldSelector) -> Result<(), String> {
        let r = res(g, r);
        super::check(&*r.strategy, &r.version, s)
    }

    fn supported_fields(g: &str, r: &str) -> Vec<String> {
        super::supported_fields(&*res(g, r).strategy)
    }

    fn field_set(g: &str, r: &str, obj: &Value) -> BTreeMap<String, String> {
        super::field_set(&*res(g, r).strategy, obj)
    }

    fn matches(g: &str, r: &str, s: &FieldSelector, obj: &Value) -> bool {
        super::matches(&*res(g, r).strategy, s, obj)
    }

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
            ("", "pods", "", Ok("")),
        ];
        for (g, r, input, want) in cases {
            let got = transform(g, r, &sel(input)).map(|s| s.to_string());
            let expect = want.map(str::to_string).map_err(str::to_string);
            assert_eq!(got, expect, "{g}/{r} {input}");
            assert_eq!(check(g, r, &sel(input)).is_ok(), want.is_ok());
        }
        assert!(supported_fields("", "pods").contains(&"status.nominatedNodeName".to_string()));
        assert_eq!(
            supported_fields("apps", "deployments"),
            vec!["metadata.name", "metadata.namespace"]
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
