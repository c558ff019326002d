//! The JSON shape kube's encoder gives an object, which clients compare byte for byte: what
//! Go's `encoding/json` prints for the object decoded into its Go type. A built-in kind's
//! fields come in Go struct order (`kind` and `apiVersion` first, then `metadata`, then the
//! rest as the Go type declares them; fields the type does not know keep their place after
//! those), map keys sorted, and unset fields as Go prints them: non-pointer structs always
//! (`status: {}`, `resources: {}`, a template's `creationTimestamp: null`), non-pointer scalars
//! without `omitempty` as their zero value (`replicas: 0`), pointers, lists and maps without
//! `omitempty` as `null`, and `omitempty` ones (empty lists and maps, zero non-pointer scalars)
//! left out. A custom resource's keys are sorted, as Go's `map` encoding of unstructured
//! objects sorts them. `metadata.resourceVersion`, stamped on every read, goes where
//! `ObjectMeta` declares it.
//!
//! Quantities are written in their canonical form, as Go's `Quantity` marshals them.
//!
//! The struct facts come from the generated protobuf schema table (Go declaration order,
//! pointer-ness and `omitempty` of every field).

use serde_json::{Map, Value};

use super::builtin::core::quantity::Quantity;
use super::resource::Resource;
use crate::generated::protobuf_schema::{self as schema, Card, Emit, Shape, Ty};

const MAX_DEPTH: usize = 64;

const FIELDS_V1: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Quantities in their canonical form (`1000m` → `1`, `0.5` → `500m`, a number → a string), as
/// Go's `Quantity` marshals them; what does not parse is left for validation to report.
fn canonical_quantities(card: Card, v: &mut Value) {
    let one = |q: &mut Value| {
        if let Some(parsed) = Quantity::of(q) {
            *q = Value::String(parsed.string());
        }
    };
    match (card, v) {
        (Card::Rep, Value::Array(items)) => items.iter_mut().for_each(one),
        (Card::Map, Value::Object(entries)) => entries.values_mut().for_each(one),
        (_, q) => one(q),
    }
}

/// Puts `obj`, an object of `res` as stored (of its storage version), in kube's encoding, in
/// place.
pub fn canonicalize(res: &Resource, obj: &mut Value) {
    encode_as(res, &res.storage_definition, obj);
}

/// Puts `obj`, an object of `res` in its served version, in kube's encoding, in place.
pub fn canonicalize_served(res: &Resource, obj: &mut Value) {
    encode_as(res, &res.definition, obj);
}

fn encode_as(res: &Resource, definition: &str, obj: &mut Value) {
    if res.origin.is_some() || schema::message(definition).is_none() {
        sort_keys(obj, 0);
        return;
    }
    let Value::Object(m) = std::mem::take(obj) else {
        return;
    };
    let mut m = m;
    let mut out = Map::new();
    for k in ["kind", "apiVersion"] {
        if let Some(v) = m.shift_remove(k) {
            out.insert(k.into(), v);
        }
    }
    order_fields(definition, &mut m, &mut out, 0);
    out.extend(m);
    *obj = Value::Object(out);
}

/// Moves the fields of message `name` out of `from` into `to`, in declaration order,
/// ordering nested messages too.
fn order_fields(
    name: &str,
    from: &mut Map<String, Value>,
    to: &mut Map<String, Value>,
    depth: usize,
) {
    let Some(msg) = schema::message(name) else {
        return;
    };
    if msg.shape != Shape::Object || depth > MAX_DEPTH {
        return;
    }
    for f in msg.fields {
        if let Ty::Inline(inner) = f.ty {
            order_fields(inner, from, to, depth + 1);
            continue;
        }
        let v = from.shift_remove(f.json).filter(|v| !is_unset(f, v));
        let mut v = match (v, f.emit) {
            (Some(v), _) => v,
            (None, Emit::Omit) => continue,
            (None, Emit::Null) => Value::Null,
            (None, Emit::Fill) => zero_value(f.ty),
        };
        // Go encodes a map with its keys sorted.
        if let (Card::Map, Value::Object(entries)) = (f.card, &mut v) {
            entries.sort_keys();
        }
        if f.ty == Ty::Msg(QUANTITY) {
            canonical_quantities(f.card, &mut v);
        }
        if let Ty::Msg(inner) = f.ty {
            match (f.card, &mut v) {
                (Card::Rep, Value::Array(items)) => {
                    for item in items {
                        order_value(inner, item, depth + 1);
                    }
                }
                (Card::Map, Value::Object(entries)) => {
                    for (_, item) in entries.iter_mut() {
                        order_value(inner, item, depth + 1);
                    }
                }
                _ => order_value(inner, &mut v, depth + 1),
            }
        }
        to.insert(f.json.to_string(), v);
    }
}

fn order_value(name: &str, v: &mut Value, depth: usize) {
    if !v.is_object() {
        return;
    }
    // A managed field set serializes sorted (`fieldpath.Set`'s order).
    if name == FIELDS_V1 {
        sort_keys(v, depth);
        return;
    }
    let Value::Object(mut m) = std::mem::take(v) else {
        return;
    };
    let mut out = Map::new();
    order_fields(name, &mut m, &mut out, depth);
    out.extend(m);
    *v = Value::Object(out);
}

/// Whether `v` reads back from Go as the field's unset value: `null`, an empty list or map,
/// or the zero value of a non-pointer `omitempty` scalar (which protobuf storage does not
/// tell apart from unset).
fn is_unset(f: &schema::Field, v: &Value) -> bool {
    match (f.card, v) {
        (_, Value::Null) => true,
        (Card::Zero, v) => is_zero(v),
        (Card::Rep, Value::Array(a)) => a.is_empty(),
        (Card::Map, Value::Object(m)) => m.is_empty(),
        _ => false,
    }
}

/// What Go prints for an unset non-pointer field of type `ty`.
fn zero_value(ty: Ty) -> Value {
    match ty {
        Ty::Str => Value::String(String::new()),
        Ty::Bool => Value::Bool(false),
        Ty::I32 | Ty::I64 | Ty::F64 => Value::from(0),
        Ty::Bytes | Ty::Inline(_) => Value::Null,
        Ty::Msg(name) => match schema::message(name).map(|m| m.shape) {
            Some(Shape::Object) => Value::Object(Map::new()),
            Some(Shape::Quantity) => Value::String("0".into()),
            Some(Shape::IntOrString) => Value::from(0),
            Some(Shape::Duration) => Value::String("0s".into()),
            _ => Value::Null,
        },
    }
}

/// Go's zero value of a scalar (what `omitempty` drops).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

fn sort_keys(v: &mut Value, depth: usize) {
    match v {
        Value::Object(m) if depth <= MAX_DEPTH => {
            m.sort_keys();
            for (_, x) in m.iter_mut() {
                sort_keys(x, depth + 1);
            }
        }
        Value::Array(a) if depth <= MAX_DEPTH => {
            for x in a {
                sort_keys(x, depth + 1);
            }
        }
        _ => {}
    }
}

/// The `ObjectMeta` fields declared after `resourceVersion`.
const AFTER_RESOURCE_VERSION: &[&str] = &[
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Sets `metadata.resourceVersion`, in `ObjectMeta`'s place for it.
pub fn stamp_resource_version(obj: &mut Value, rv: String) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(slot) = meta.get_mut("resourceVersion") {
        *slot = Value::String(rv);
        return;
    }
    let at = meta
        .keys()
        .position(|k| AFTER_RESOURCE_VERSION.contains(&k.as_str()))
        .unwrap_or(meta.len());
    meta.shift_insert(at, "resourceVersion".into(), Value::String(rv));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_order_and_zero_values() {
        let reg = crate::registry::builtin::registry();
        let deploy = reg.builtin("apps", "v1", "deployments");
        let mut d = json!({"spec": {"template": {"spec": {}}, "paused": false, "replicas": 1},
            "status": {}, "metadata": {"labels": {"a": "b"}, "name": "x", "namespace": "ns"},
            "apiVersion": "apps/v1", "kind": "Deployment", "extra": 1});
        canonicalize(&deploy, &mut d);
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"x","namespace":"ns","creationTimestamp":null,"labels":{"a":"b"}},"spec":{"replicas":1,"selector":null,"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":null}},"strategy":{}},"status":{},"extra":1}"#
        );
        stamp_resource_version(&mut d, "7".into());
        assert_eq!(
            serde_json::to_string(&d["metadata"]).unwrap(),
            r#"{"name":"x","namespace":"ns","resourceVersion":"7","creationTimestamp":null,"labels":{"a":"b"}}"#
        );
        let cm = reg.builtin("", "v1", "configmaps");
        let mut c = json!({"data": {"b": "1", "a": "2"}, "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        canonicalize(&cm, &mut c);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","creationTimestamp":null},"data":{"a":"2","b":"1"}}"#
        );
    }

    /// Unset fields as Go prints a decoded object: non-pointer structs and scalars filled,
    /// non-`omitempty` pointers, lists and maps `null`, empty `omitempty` ones dropped.
    #[test]
    fn unset_fields_as_go_prints_them() {
        let reg = crate::registry::builtin::registry();
        let mut svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s",
            "creationTimestamp": "2026-01-01T00:00:00Z", "finalizers": []},
            "spec": {"ports": [{"port": 80, "targetPort": 80}], "selector": {}}});
        canonicalize(&reg.builtin("", "v1", "services"), &mut svc);
        assert_eq!(
            serde_json::to_string(&svc).unwrap(),
            r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"s","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"ports":[{"port":80,"targetPort":80}]},"status":{"loadBalancer":{}}}"#
        );
        let mut rc = json!({"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": {"name": "r"}, "status": null});
        canonicalize(&reg.builtin("", "v1", "replicationcontrollers"), &mut rc);
        assert_eq!(rc["status"], json!({"replicas": 0}));
        let mut role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "c"}, "rules": []});
        canonicalize(
            &reg.builtin("rbac.authorization.k8s.io", "v1", "clusterroles"),
            &mut role,
        );
        assert_eq!(role["rules"], Value::Null);
        let mut ev = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
            "involvedObject": {"kind": "Pod", "name": "p"}, "count": 0});
        canonicalize(&reg.builtin("", "v1", "events"), &mut ev);
        assert_eq!(
            serde_json::to_string(&ev).unwrap(),
            r#"{"kind":"Event","apiVersion":"v1","metadata":{"name":"e","creationTimestamp":null},"involvedObject":{"kind":"Pod","name":"p"},"source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":null,"reportingComponent":"","reportingInstance":""}"#
        );
    }

    #[test]
    fn quantities_are_canonical() {
        let reg = crate::registry::builtin::registry();
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                "limits": {"cpu": "1000m", "memory": "1024Mi"}, "requests": {"cpu": 0.5, "x": "bad"}}}]}});
        canonicalize(&reg.builtin("", "v1", "pods"), &mut pod);
        let r = &pod["spec"]["containers"][0]["resources"];
        assert_eq!(r["limits"], json!({"cpu": "1", "memory": "1Gi"}));
        assert_eq!(r["requests"], json!({"cpu": "500m", "x": "bad"}));
    }
}
