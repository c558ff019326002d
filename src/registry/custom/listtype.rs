//! The `x-kubernetes-list-type` invariants of custom objects (apiextensions-apiserver's
//! `structurallisttype.ValidateListSetsAndMaps`): a `set` holds no value twice, a `map` no
//! two items with the same keys (and only objects). Each repeated value is reported once, at
//! its second occurrence, as `Duplicate value`.
//!
//! Pure: walks an object with its compiled schema. Does not know: the schema validator's own
//! errors ([`super::validate`]), ratcheting (the strategy skips this check when the old
//! object already broke it, as kube does).

use serde_json::{Map, Value};

use super::node::{child_path, Additional, Node};
use crate::meta::field_error::{go_sharp, FieldError};
use crate::registry::builtin::checks::duplicate_rendered;

/// The list-type errors of `obj` (a whole object) against `schema`.
pub fn validate(schema: &Node, obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk_object(schema, "", obj, &mut errs);
    errs
}

fn walk_object(s: &Node, path: &str, obj: &Value, errs: &mut Vec<FieldError>) {
    let Some(m) = obj.as_object() else {
        return;
    };
    // (kube walks a Go map, in no fixed order; sorted here.)
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    if let Some(Additional::Schema(sub)) = &s.additional {
        for k in &keys {
            walk(sub, &format!("{path}[{k}]"), &m[*k], errs);
        }
    }
    for k in &keys {
        if let Some(sub) = s.properties.get(*k) {
            walk(sub, &child_path(path, k), &m[*k], errs);
        }
    }
}

fn walk(s: &Node, path: &str, v: &Value, errs: &mut Vec<FieldError>) {
    match v {
        Value::Array(items) => walk_array(s, path, items, errs),
        Value::Object(_) => walk_object(s, path, v, errs),
        _ => {}
    }
}

fn walk_array(s: &Node, path: &str, items: &[Value], errs: &mut Vec<FieldError>) {
    match s.list_type.as_str() {
        "set" => {
            for i in repeated(items.iter()) {
                errs.push(duplicate_rendered(
                    &format!("{path}[{i}]"),
                    &go_sharp(&items[i]),
                ));
            }
        }
        "map" => map_errors(s, path, items, errs),
        _ => {}
    }
    if let Some(sub) = &s.items {
        for (i, item) in items.iter().enumerate() {
            walk(sub, &format!("{path}[{i}]"), item, errs);
        }
    }
}

/// The indices where a value occurs for the second time.
fn repeated<'a>(values: impl Iterator<Item = &'a Value>) -> Vec<usize> {
    let mut seen: Vec<(&Value, usize)> = Vec::new();
    let mut out = Vec::new();
    for (i, v) in values.enumerate() {
        match seen.iter_mut().find(|(x, _)| *x == v) {
            Some((_, times)) => {
                *times += 1;
                if *times == 2 {
                    out.push(i);
                }
            }
            None => seen.push((v, 1)),
        }
    }
    out
}

fn map_errors(s: &Node, path: &str, items: &[Value], errs: &mut Vec<FieldError>) {
    for (i, x) in items.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                x.clone(),
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    // The key of each item: its map-key fields that are set (a missing field is unspecified).
    let keys: Vec<Value> = items
        .iter()
        .map(|x| {
            let mut key = Map::new();
            for k in &s.list_map_keys {
                if let Some(v) = x.get(k) {
                    key.insert(k.clone(), v.clone());
                }
            }
            Value::Object(key)
        })
        .collect();
    for i in repeated(keys.iter()) {
        errs.push(duplicate_rendered(
            &format!("{path}[{i}]"),
            &go_sharp(&keys[i]),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::compile;
    use super::*;
    use serde_json::json;

    #[test]
    fn sets_and_maps_hold_no_duplicates() {
        let schema = compile(
            &json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}}),
        );
        let obj = json!({"spec": {"tags": ["a", "b", "a", "a"],
            "ports": [{"name": "x"}, {"name": "x", "p": 1}, {}, {}]}});
        let msgs: Vec<String> = validate(&schema, &obj)
            .iter()
            .map(FieldError::message)
            .collect();
        assert_eq!(
            msgs,
            [
                "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"x\"}",
                "spec.ports[3]: Duplicate value: map[string]interface {}{}",
                "spec.tags[2]: Duplicate value: \"a\"",
            ]
        );
    }
}
