//! Pruning of custom objects, as apiextensions-apiserver's `pruning.PruneWithOptions` and
//! `defaulting.PruneNonNullableNullsWithoutDefaults` do when a body (or a stored object) is
//! decoded: every field the structural schema does not declare is dropped (unless the node
//! says `x-kubernetes-preserve-unknown-fields`), the root and `x-kubernetes-embedded-resource`
//! nodes keep `apiVersion`, `kind` and `metadata` (object metadata is checked elsewhere), and
//! null values of non-nullable fields without a default are removed.
//!
//! The dropped fields' paths are returned sorted (byte order), formatted as kube reports them
//! for `fieldValidation`: `spec.foo`, `spec.items[1].bar`.

use serde_json::Value;

use super::node::Node;

const META: &[&str] = &["apiVersion", "kind", "metadata"];
/// Recursion guard for hostile input.
const MAX_DEPTH: usize = 256;

/// Prunes `obj` (a whole object, `schema` its root) and returns the dropped paths, sorted.
pub fn prune(obj: &mut Value, schema: &Node) -> Vec<String> {
    prune_at(obj, schema, true)
}

/// [`prune`] of any value (a schema's `default`, say); `root` keeps apiVersion, kind and
/// metadata as at the root of an object.
pub fn prune_at(x: &mut Value, schema: &Node, root: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut path = String::new();
    walk(x, Some(schema), root, &mut path, &mut out, 0);
    out.sort();
    out
}

fn push_key(path: &mut String, k: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(k);
}

fn record(path: &str, k: &str, out: &mut Vec<String>) {
    let mut p = path.to_string();
    push_key(&mut p, k);
    out.push(p);
}

/// `prune`: `s` is `None` where the structural schema has no node (everything inside objects
/// goes).
fn walk(
    x: &mut Value,
    s: Option<&Node>,
    root: bool,
    path: &mut String,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(s) = s.filter(|s| s.preserve_unknown) {
        return skip(x, s, root, path, out, depth);
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                for k in m.keys() {
                    record(path, k, out);
                }
                m.clear();
                return;
            };
            let embedded = root || s.embedded;
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if embedded && META.contains(&k.as_str()) {
                    continue;
                }
                match s.child(&k) {
                    Some(c) => {
                        let len = path.len();
                        push_key(path, &k);
                        if let Some(v) = m.get_mut(&k) {
                            walk(v, c, false, path, out, depth + 1);
                        }
                        path.truncate(len);
                    }
                    None => {
                        if !META.contains(&k.as_str()) || !path.is_empty() {
                            record(path, &k, out);
                        }
                        m.shift_remove(&k);
                    }
                }
            }
        }
        Value::Array(items) => {
            let item = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(v, item, false, path, out, depth + 1);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// `skipPrune`: a node that preserves unknown fields still prunes inside what it declares.
fn skip(
    x: &mut Value,
    s: &Node,
    root: bool,
    path: &mut String,
    out: &mut Vec<String>,
    depth: usize,
) {
    match x {
        Value::Object(m) => {
            let embedded = root || s.embedded;
            for (k, v) in m.iter_mut() {
                if embedded && META.contains(&k.as_str()) {
                    continue;
                }
                if let Some(c) = s.child(k) {
                    let len = path.len();
                    push_key(path, k);
                    walk(v, c, false, path, out, depth + 1);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    skip(v, item, false, path, out, depth + 1);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// `PruneNonNullableNullsWithoutDefaults`: drops `null` fields whose schema is neither
/// nullable nor defaulted.
pub fn drop_nulls(x: &mut Value, s: Option<&Node>) {
    drop_nulls_at(x, s, 0)
}

fn drop_nulls_at(x: &mut Value, s: Option<&Node>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match x {
        Value::Object(m) => {
            m.retain(|k, v| {
                let c = s.and_then(|s| s.child(k)).flatten();
                !(v.is_null() && c.is_some_and(|c| !c.nullable && c.default.is_none()))
            });
            for (k, v) in m.iter_mut() {
                drop_nulls_at(v, s.and_then(|s| s.child(k)).flatten(), depth + 1);
            }
        }
        Value::Array(items) => {
            let item = s.and_then(|s| s.items.as_deref());
            for v in items {
                drop_nulls_at(v, item, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::compile;
    use super::*;
    use serde_json::json;

    #[test]
    fn prunes_what_the_schema_does_not_declare() {
        let s = compile(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {"inner": {"type": "object"}}},
                "opt": {"type": "string"},
                "nul": {"type": "string", "nullable": true},
                "embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}}}}}}));
        let mut obj = json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"}, "bogus": 1,
            "spec": {"zz": 1, "items": [{"name": "a", "x": 1}, {"y": 2}],
                "free": {"anything": 1, "inner": {"gone": 1}},
                "opt": null, "nul": null,
                "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {"x": 1}, "status": {}}}});
        let paths = prune(&mut obj, &s);
        assert_eq!(
            paths,
            [
                "bogus",
                "spec.embedded.spec.x",
                "spec.embedded.status",
                "spec.free.inner.gone",
                "spec.items[0].x",
                "spec.items[1].y",
                "spec.zz"
            ]
        );
        drop_nulls(&mut obj, Some(&s));
        assert_eq!(
            obj,
            json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"},
                "spec": {"items": [{"name": "a"}, {}], "free": {"anything": 1, "inner": {}}, "nul": null,
                    "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}}}})
        );
    }
}
