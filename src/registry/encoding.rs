//! The JSON shape kube's encoder gives an object, which clients compare byte for byte: a
//! built-in kind's fields in Go struct order (`kind` and `apiVersion` first, then `metadata`,
//! then the rest as the Go type declares them; fields the type does not know keep their
//! place after those), map keys sorted, non-pointer `omitempty` scalars left out when they are
//! zero (Go drops them when it re-encodes), and a custom resource's keys sorted, as Go's `map` encoding of
//! unstructured objects sorts them. `metadata.resourceVersion`, stamped on every read, goes
//! where `ObjectMeta` declares it.
//!
//! The struct facts come from the generated protobuf schema table (which records Go
//! declaration order and which scalars are non-pointer `omitempty`).

use serde_json::{Map, Value};

use super::resource::Resource;
use crate::generated::protobuf_schema::{self as schema, Card, Shape, Ty};

const MAX_DEPTH: usize = 64;

const FIELDS_V1: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1";

/// Puts `obj` (an object of `res`) in kube's encoding order, in place.
pub fn canonicalize(res: &Resource, obj: &mut Value) {
    if res.origin.is_some() || schema::message(&res.definition).is_none() {
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
    order_fields(&res.definition, &mut m, &mut out, 0);
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
        let Some(mut v) = from.shift_remove(f.json) else {
            continue;
        };
        match f.card {
            Card::Zero if is_zero(&v) => continue,
            Card::Map if v.is_null() => continue,
            // Go encodes a map with its keys sorted.
            Card::Map => {
                if let Value::Object(entries) = &mut v {
                    entries.sort_keys();
                }
            }
            _ => {}
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
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"x","namespace":"ns","labels":{"a":"b"}},"spec":{"replicas":1,"template":{"spec":{}}},"status":{},"extra":1}"#
        );
        stamp_resource_version(&mut d, "7".into());
        assert_eq!(
            serde_json::to_string(&d["metadata"]).unwrap(),
            r#"{"name":"x","namespace":"ns","resourceVersion":"7","labels":{"a":"b"}}"#
        );
        let cm = reg.builtin("", "v1", "configmaps");
        let mut c = json!({"data": {"b": "1", "a": "2"}, "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        canonicalize(&cm, &mut c);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"},"data":{"a":"2","b":"1"}}"#
        );
    }
}
