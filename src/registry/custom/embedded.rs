//! Objects embedded in custom objects (`x-kubernetes-embedded-resource`), checked as
//! apiextensions-apiserver's `schemaobjectmeta.Validate` checks them: `apiVersion` and `kind`
//! present and well formed, `metadata` decodable and valid object metadata (path-segment
//! names; a missing name stands in as `fakename`).
//!
//! Pure: walks an object with its compiled schema. The resource root is not an embedded
//! object here (its metadata is the store's to validate). Does not know: the schema
//! validator's own errors ([`super::validate`]).

use serde_json::{Map, Value};

use super::node::{child_path, Additional, Node};
use crate::meta::field_error::FieldError;
use crate::meta::validation::{is_dns1035_label, validate_object_meta_with, NameRule};

/// The embedded-object errors of `obj` (a whole custom object) against `schema`.
pub fn validate(schema: &Node, obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // The root itself is the resource: only what is below it is embedded.
    if let Some(m) = obj.as_object() {
        children(schema, "", m, &mut errs);
    }
    errs
}

fn children(s: &Node, path: &str, m: &Map<String, Value>, errs: &mut Vec<FieldError>) {
    // (kube walks a Go map, in no fixed order; sorted here.)
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    for k in keys {
        let v = &m[k];
        if let Some(p) = s.properties.get(k) {
            walk(p, &child_path(path, k), v, errs);
        } else if let Some(Additional::Schema(a)) = &s.additional {
            walk(a, &format!("{path}[{k}]"), v, errs);
        }
    }
}

fn walk(s: &Node, path: &str, v: &Value, errs: &mut Vec<FieldError>) {
    match v {
        Value::Object(m) => {
            if s.embedded {
                embedded(path, m, errs);
            }
            children(s, path, m, errs);
        }
        Value::Array(items) => {
            if let Some(sub) = &s.items {
                for (i, x) in items.iter().enumerate() {
                    walk(sub, &format!("{path}[{i}]"), x, errs);
                }
            }
        }
        _ => {}
    }
}

/// kube's `validateEmbeddedResource`.
fn embedded(path: &str, m: &Map<String, Value>, errs: &mut Vec<FieldError>) {
    for k in ["apiVersion", "kind"] {
        if !m.contains_key(k) {
            errs.push(FieldError::required(
                child_path(path, k),
                "must not be empty",
            ));
        }
    }
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    for k in keys {
        let v = &m[k];
        let at = child_path(path, k);
        match k.as_str() {
            "apiVersion" => match v.as_str() {
                None => errs.push(FieldError::invalid(at, v.clone(), "must be a string")),
                Some("") => errs.push(FieldError::invalid(at, "", "must not be empty")),
                Some(api) if api.matches('/').count() > 1 => errs.push(FieldError::invalid(
                    at,
                    api,
                    format!("unexpected GroupVersion string: {api}"),
                )),
                Some(_) => {}
            },
            "kind" => match v.as_str() {
                None => errs.push(FieldError::invalid(at, v.clone(), "must be a string")),
                Some("") => errs.push(FieldError::invalid(at, "", "must not be empty")),
                Some(kind) => {
                    let msgs = is_dns1035_label(&kind.to_lowercase());
                    if !msgs.is_empty() {
                        errs.push(FieldError::invalid(
                            at,
                            kind,
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                msgs.join(",")
                            ),
                        ));
                    }
                }
            },
            "metadata" => match v.as_object() {
                None if v.is_null() => {}
                None => errs.push(FieldError::invalid(
                    at,
                    v.clone(),
                    format!(
                        "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                        json_kind(v)
                    ),
                )),
                Some(meta) => {
                    let mut meta = meta.clone();
                    let named = meta
                        .get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| !n.is_empty());
                    if !named {
                        meta.insert("name".into(), Value::String("fakename".into()));
                    }
                    let namespaced = meta
                        .get("namespace")
                        .and_then(Value::as_str)
                        .is_some_and(|n| !n.is_empty());
                    let meta = Value::Object(meta);
                    for mut e in
                        validate_object_meta_with(&meta, namespaced, NameRule::PathSegment, false)
                    {
                        e.field = child_path(path, &e.field);
                        errs.push(e);
                    }
                }
            },
            _ => {}
        }
    }
}

/// encoding/json's name of a JSON value's kind in an `UnmarshalTypeError`.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        _ => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::compile;
    use super::*;
    use serde_json::json;

    #[test]
    fn embedded_objects_need_type_and_valid_metadata() {
        let schema = compile(
            &json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"template": {"type": "object", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true}}}}}),
        );
        let obj = json!({"spec": {"template": {"kind": "Not_A_Kind",
            "metadata": {"name": "a/b", "labels": {"-x": "y"}}}}});
        let msgs: Vec<String> = validate(&schema, &obj)
            .iter()
            .map(FieldError::message)
            .collect();
        assert_eq!(
            msgs[0],
            "spec.template.apiVersion: Required value: must not be empty"
        );
        assert!(
            msgs[1].starts_with("spec.template.kind: Invalid value: \"Not_A_Kind\": may have mixed case, but should otherwise match: "),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("spec.template.metadata.name: Invalid value: \"a/b\"")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("spec.template.metadata.labels: Invalid value: \"-x\"")),
            "{msgs:?}"
        );
        let ok = json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod"}}});
        assert!(validate(&schema, &ok).is_empty());
    }
}
