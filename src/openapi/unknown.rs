//! Unknown-field detection for `fieldValidation=Strict|Warn`.
//!
//! Owns: walking a JSON request body along the v2 schema of a built-in definition and
//! reporting every object key the schema does not declare, formatted like the strict decoding
//! errors of sigs.k8s.io/json that kube-apiserver returns: `unknown field "spec.foo"`, with
//! `[i]` for list items and `.key` for map entries, in document order, de-duplicated, at most
//! 100 of them.
//!
//! [`strict_errors`] reads a body parsed with its duplicate keys kept ([`Node`]) the way
//! sigs.k8s.io/json's strict decoder reads it into the Go type: in document order, a known
//! field or map key seen twice in one object is `duplicate field "spec.paused"`, a key the type
//! does not declare is `unknown field "spec.foo"` (its value unread, so a duplicated unknown
//! field is reported once, as unknown), opaque values (`RawExtension`, `JSON`, `FieldsV1`:
//! custom unmarshalers) are not looked into.
//!
//! Does not know: type mismatches (decoding reports those), custom resources (their
//! structural schemas live elsewhere), the error wrapping a request handler adds around these
//! strings.

use serde_json::Value;

use super::schemas;
use crate::meta::field_error::go_quote;
use crate::meta::strict::{self, Errors, Node};

/// Upstream stops collecting strict errors after this many.
const MAX_ERRORS: usize = 100;
/// Recursion guard for hostile input (serde_json already limits nesting to 128).
const MAX_DEPTH: usize = 256;

/// The unknown fields of `value` against the definition `definition` (empty if the definition
/// is unknown).
pub(crate) fn unknown_fields(definition: &str, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(schema) = schemas::get(definition) {
        walk(schema, value, &mut String::new(), &mut out, 0);
    }
    out
}

/// Follows a `$ref` (if any) to the definition it names.
fn resolve(schema: &Value) -> Option<&Value> {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => schemas::ref_target(r).and_then(schemas::get),
        None => Some(schema),
    }
}

fn push(out: &mut Vec<String>, path: &str) {
    if out.len() >= MAX_ERRORS {
        return;
    }
    let msg = format!("unknown field {}", go_quote(path));
    if !out.contains(&msg) {
        out.push(msg);
    }
}

fn walk(schema: &Value, value: &Value, path: &mut String, out: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH || out.len() >= MAX_ERRORS {
        return;
    }
    let Some(schema) = resolve(schema) else {
        return;
    };
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    match value {
        Value::Object(obj) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, v) in obj {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    match props.get(k) {
                        Some(s) => walk(s, v, path, out, depth + 1),
                        None => push(out, path),
                    }
                    path.truncate(len);
                }
            } else if let Some(item) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for (k, v) in obj {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    walk(item, v, path, out, depth + 1);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(item, v, path, out, depth + 1);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// The strict decoding errors of `node` against the definition `definition`, duplicates and
/// unknown fields interleaved in document order (empty if the definition is unknown).
pub(crate) fn strict_errors(definition: &str, node: &Node) -> Vec<String> {
    let mut out = Errors::default();
    if let Some(schema) = schemas::get(definition) {
        walk_strict(schema, node, &mut String::new(), &mut out, 0);
    }
    out.0
}

fn walk_strict(schema: &Value, node: &Node, path: &mut String, out: &mut Errors, depth: usize) {
    if depth > MAX_DEPTH || out.full() {
        return;
    }
    let Some(schema) = resolve(schema) else {
        return;
    };
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    match node {
        Node::Object(entries) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let item = schema.get("additionalProperties").filter(|a| a.is_object());
            if props.is_none() && item.is_none() {
                return;
            }
            let mut seen = std::collections::HashSet::new();
            for (k, v) in entries {
                let len = path.len();
                strict::push_key(path, k);
                let sub = match props {
                    Some(p) => p.get(k),
                    None => item,
                };
                match sub {
                    Some(s) => {
                        if !seen.insert(k.as_str()) {
                            out.push(strict::duplicate(path));
                        }
                        walk_strict(s, v, path, out, depth + 1);
                    }
                    None => out.push(format!("unknown field {}", go_quote(path))),
                }
                path.truncate(len);
            }
        }
        Node::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    let len = path.len();
                    strict::push_index(path, i);
                    walk_strict(item, v, path, out, depth + 1);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// Removes every field the schema of `definition` does not declare, as decoding into the Go
/// type does under fieldValidation=Warn/Ignore.
pub(crate) fn prune_unknown(definition: &str, value: &mut Value) {
    if let Some(schema) = schemas::get(definition) {
        prune(schema, value, 0);
    }
}

fn prune(schema: &Value, value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(schema) = resolve(schema) else {
        return;
    };
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    match value {
        Value::Object(obj) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                obj.retain(|k, _| props.contains_key(k));
                for (k, v) in obj.iter_mut() {
                    if let Some(s) = props.get(k) {
                        prune(s, v, depth + 1);
                    }
                }
            } else if let Some(item) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for v in obj.values_mut() {
                    prune(item, v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for v in items.iter_mut() {
                    prune(item, v, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table() {
        // (definition, body, expected unknown fields)
        let cases: Vec<(&str, Value, Vec<&str>)> = vec![
            (
                "io.k8s.api.apps.v1.Deployment",
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"replicas": 1}}),
                vec![],
            ),
            (
                "io.k8s.api.apps.v1.Deployment",
                json!({"spec": {"foo": 1}}),
                vec!["unknown field \"spec.foo\""],
            ),
            (
                "io.k8s.api.apps.v1.Deployment",
                json!({"foo": 1, "bar": {"x": 1}}),
                vec!["unknown field \"foo\"", "unknown field \"bar\""],
            ),
            (
                "io.k8s.api.apps.v1.Deployment",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b", "imagex": "i"}]}}}}),
                vec!["unknown field \"spec.template.spec.containers[1].imagex\""],
            ),
            (
                "io.k8s.api.apps.v1.Deployment",
                json!({"metadata": {"nam": "x"}}),
                vec!["unknown field \"metadata.nam\""],
            ),
            // Case-sensitive, like upstream's strict decoder.
            (
                "io.k8s.api.apps.v1.Deployment",
                json!({"Spec": {}}),
                vec!["unknown field \"Spec\""],
            ),
            // IntOrString and Quantity are scalars; objects there are type errors, not unknown fields.
            (
                "io.k8s.api.apps.v1.Deployment",
                json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}}),
                vec![],
            ),
            (
                "io.k8s.api.core.v1.Pod",
                json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": 5}}}]}}),
                vec![],
            ),
            // Maps of objects use the key as a path segment.
            (
                "io.k8s.api.core.v1.ResourceQuotaStatus",
                json!({"hard": {"cpu": "1"}}),
                vec![],
            ),
            // RawExtension and FieldsV1 are opaque.
            (
                "io.k8s.api.apps.v1.ControllerRevision",
                json!({"data": {"anything": {"goes": 1}}, "revision": 1}),
                vec![],
            ),
            (
                "io.k8s.api.core.v1.ConfigMap",
                json!({"metadata": {"managedFields": [{"fieldsV1": {"f:data": {}}, "x": 1}]}}),
                vec!["unknown field \"metadata.managedFields[0].x\""],
            ),
            // CRD schemas: JSON and JSONSchemaPropsOr* are opaque, maps of JSONSchemaProps are checked.
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
                json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "string", "bogus": 1}}, "items": {"whatever": 1}, "default": {"x": 1}}}}]}}),
                vec![
                    "unknown field \"spec.versions[0].schema.openAPIV3Schema.properties.a.bogus\"",
                ],
            ),
            ("no.such.Definition", json!({"x": 1}), vec![]),
        ];
        for (def, body, want) in cases {
            assert_eq!(unknown_fields(def, &body), want, "{def} {body}");
        }
    }

    #[test]
    fn prunes_unknown_fields() {
        let mut v = json!({"apiVersion": "apps/v1", "kind": "Deployment", "bogus": 1, "metadata": {"name": "x", "labels": {"k": "v"}},
            "spec": {"replicas": 1, "foo": {}, "template": {"spec": {"containers": [{"name": "c", "imagex": "i"}]}}}});
        prune_unknown("io.k8s.api.apps.v1.Deployment", &mut v);
        assert_eq!(
            v,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "labels": {"k": "v"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}})
        );
    }

    #[test]
    fn strict_errors_interleave_duplicates_and_unknown_fields() {
        // kube's field validation integration test body (a Deployment).
        let body = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "dupename", "name": "x", "labels": {"app": "nginx"}, "unknownMeta": "metaVal"},
            "spec": {"unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2",
                "paused": true, "paused": false,
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{
                    "name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
                    "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}}}"#;
        let node = strict::parse_json(body.as_bytes()).unwrap();
        assert_eq!(
            strict_errors("io.k8s.api.apps.v1.Deployment", &node),
            vec![
                r#"duplicate field "metadata.name""#,
                r#"unknown field "metadata.unknownMeta""#,
                r#"unknown field "spec.unknown1""#,
                r#"unknown field "spec.unknownDupe""#,
                r#"duplicate field "spec.paused""#,
                r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
                r#"duplicate field "spec.template.spec.containers[0].imagePullPolicy""#,
            ]
        );
        // Map keys are checked; opaque values (RawExtension, FieldsV1) are not.
        let body = r#"{"metadata": {"labels": {"a": "1", "a": "2"},
            "managedFields": [{"fieldsV1": {"f:a": {}, "f:a": {}}}]},
            "data": {"x": 1, "x": 2}}"#;
        let node = strict::parse_json(body.as_bytes()).unwrap();
        assert_eq!(
            strict_errors("io.k8s.api.apps.v1.ControllerRevision", &node),
            vec![r#"duplicate field "metadata.labels.a""#]
        );
    }

    #[test]
    fn dedupe_and_cap() {
        let many: serde_json::Map<String, Value> =
            (0..150).map(|i| (format!("f{i}"), json!(1))).collect();
        assert_eq!(
            unknown_fields("io.k8s.api.core.v1.Pod", &Value::Object(many)).len(),
            MAX_ERRORS
        );
    }
}
