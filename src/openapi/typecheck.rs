//! JSON type checking of request bodies against the schema of a built-in definition.
//!
//! kube-apiserver decodes a body into its Go type; a JSON value of the wrong type fails with
//! encoding/json's `UnmarshalTypeError`, e.g. `json: cannot unmarshal string into Go struct
//! field DeploymentSpec.spec.replicas of type int32`, and the request is rejected (400) before
//! anything is stored. Rafter keeps objects as JSON, so this walk stands in for that decode:
//! it reports the first value whose JSON type the schema does not accept, worded like Go.
//!
//! Does not know: unknown fields (`unknown.rs`), value formats (dates, quantities are checked by
//! validation where kube checks them), custom resources.

use serde_json::Value;

use super::schemas;

const MAX_DEPTH: usize = 256;

/// The first type error of `value` against `definition`, worded like encoding/json.
pub(crate) fn first_type_error(definition: &str, value: &Value) -> Option<String> {
    let schema = schemas::get(definition)?;
    let mut path = Vec::new();
    check(schema, value, short_name(definition), &mut path, 0)
}

fn resolve(schema: &Value) -> Option<(&Value, Option<&str>)> {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = schemas::ref_target(r)?;
            Some((schemas::get(name)?, Some(name)))
        }
        None => Some((schema, None)),
    }
}

/// "io.k8s.api.apps.v1.DeploymentSpec" → "DeploymentSpec".
fn short_name(definition: &str) -> &str {
    definition.rsplit('.').next().unwrap_or(definition)
}

/// "io.k8s.api.apps.v1.DeploymentSpec" → "v1.DeploymentSpec" (Go's package-qualified name).
fn go_name(definition: &str) -> String {
    let mut parts = definition.rsplitn(3, '.');
    let ty = parts.next().unwrap_or(definition);
    let pkg = parts.next().unwrap_or("");
    if pkg.is_empty() {
        ty.to_string()
    } else {
        format!("{pkg}.{ty}")
    }
}

fn json_kind(v: &Value) -> String {
    match v {
        Value::String(_) => "string".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(n) => format!("number {n}"),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
        Value::Null => "null".into(),
    }
}

/// Go type of a schema, for the message.
fn go_type(schema: &Value, def: Option<&str>) -> String {
    if let Some(d) = def {
        return go_name(d);
    }
    match (
        schema.get("type").and_then(Value::as_str),
        schema.get("format").and_then(Value::as_str),
    ) {
        (Some("integer"), Some(f)) => f.to_string(),
        (Some("integer"), None) => "int64".into(),
        (Some("number"), _) => "float64".into(),
        (Some("boolean"), _) => "bool".into(),
        (Some("string"), Some("byte")) => "[]uint8".into(),
        (Some("string"), _) => "string".into(),
        (Some("array"), _) => {
            let item = schema.get("items").and_then(resolve);
            match item {
                Some((s, d)) => format!(
                    "[]{}",
                    go_type(
                        s,
                        d.or(schema
                            .pointer("/items/$ref")
                            .and_then(Value::as_str)
                            .and_then(schemas::ref_target))
                    )
                ),
                None => "[]interface {}".into(),
            }
        }
        (Some("object"), _) => match schema.get("additionalProperties").and_then(resolve) {
            Some((s, d)) => format!("map[string]{}", go_type(s, d)),
            None => "map[string]interface {}".into(),
        },
        _ => "interface {}".into(),
    }
}

fn check(
    schema: &Value,
    value: &Value,
    owner: &str,
    path: &mut Vec<String>,
    depth: usize,
) -> Option<String> {
    if depth > MAX_DEPTH || value.is_null() {
        return None;
    }
    let (schema, def) = resolve(schema)?;
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
        && schema.get("type").is_none()
    {
        return None;
    }
    let format = schema.get("format").and_then(Value::as_str);
    let mismatch = |want: String| -> Option<String> {
        if path.is_empty() {
            Some(format!(
                "json: cannot unmarshal {} into Go value of type {want}",
                json_kind(value)
            ))
        } else {
            Some(format!(
                "json: cannot unmarshal {} into Go struct field {owner}.{} of type {want}",
                json_kind(value),
                path.join(".")
            ))
        }
    };
    // int-or-string and quantities accept both forms.
    if matches!(format, Some("int-or-string"))
        || schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
    {
        return match value {
            Value::String(_) => None,
            Value::Number(n) if n.is_i64() || n.is_u64() => None,
            _ => mismatch("intstr.IntOrString".into()),
        };
    }
    if def.is_some_and(|d| d.ends_with("api.resource.Quantity")) {
        return match value {
            Value::String(_) | Value::Number(_) => None,
            _ => mismatch("resource.Quantity".into()),
        };
    }
    let ty = schema.get("type").and_then(Value::as_str);
    match (ty, value) {
        (None, _) => {
            // Structs are described by properties; opaque types (RawExtension, JSON) have none.
            if let (Some(props), Value::Object(obj)) =
                (schema.get("properties").and_then(Value::as_object), value)
            {
                let owner = def.map(short_name).unwrap_or(owner);
                for (k, v) in obj {
                    if let Some(s) = props.get(k) {
                        path.push(k.clone());
                        let e = check(s, v, owner, path, depth + 1);
                        path.pop();
                        if e.is_some() {
                            return e;
                        }
                    }
                }
                None
            } else if schema.get("properties").is_some() && !value.is_object() {
                mismatch(go_type(schema, def))
            } else {
                None
            }
        }
        // encoding/json decodes `[]byte` as standard base64; its error is the decoder's own.
        (Some("string"), Value::String(s)) if format == Some("byte") => {
            go_base64_error(s).map(|at| format!("illegal base64 data at input byte {at}"))
        }
        (Some("string"), Value::String(_)) => None,
        (Some("boolean"), Value::Bool(_)) => None,
        (Some("number"), Value::Number(_)) => None,
        (Some("integer"), Value::Number(n)) => {
            let ok = match format {
                Some("int32") => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
                _ => n.is_i64() || n.is_u64(),
            };
            if ok {
                None
            } else {
                mismatch(go_type(schema, def))
            }
        }
        (Some("array"), Value::Array(items)) => {
            let item = schema.get("items")?;
            for v in items {
                if let Some(e) = check(item, v, owner, path, depth + 1) {
                    return Some(e);
                }
            }
            None
        }
        (Some("object"), Value::Object(obj)) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                return check_props(
                    props,
                    obj,
                    def.map(short_name).unwrap_or(owner),
                    path,
                    depth,
                );
            } else if let Some(item) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                // encoding/json does not put map keys on its field path.
                for v in obj.values() {
                    if let Some(e) = check(item, v, owner, path, depth + 1) {
                        return Some(e);
                    }
                }
            }
            None
        }
        (Some(_), _) => mismatch(go_type(schema, def)),
    }
}

/// Where Go's `base64.StdEncoding.DecodeString` fails on `s` (its `CorruptInputError`
/// offset), if it does: padding is required, `\r` and `\n` are skipped.
fn go_base64_error(s: &str) -> Option<usize> {
    let src = s.as_bytes();
    let valid = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let newline = |b: u8| b == b'\n' || b == b'\r';
    let mut si = 0;
    loop {
        // one quantum of up to four symbols
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                return match j {
                    0 => None,
                    _ => Some(si - j),
                };
            }
            let c = src[si];
            si += 1;
            if valid(c) {
                j += 1;
                continue;
            }
            if newline(c) {
                continue;
            }
            if c != b'=' {
                return Some(si - 1);
            }
            // padding: only after two or three symbols
            match j {
                0 | 1 => return Some(si - 1),
                2 => {
                    while si < src.len() && newline(src[si]) {
                        si += 1;
                    }
                    if si == src.len() {
                        return Some(src.len());
                    }
                    if src[si] != b'=' {
                        return Some(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && newline(src[si]) {
                si += 1;
            }
            return (si < src.len()).then_some(si);
        }
    }
}

/// Checks the declared fields of a struct-like object (`owner` names the Go struct).
fn check_props(
    props: &serde_json::Map<String, Value>,
    obj: &serde_json::Map<String, Value>,
    owner: &str,
    path: &mut Vec<String>,
    depth: usize,
) -> Option<String> {
    for (k, v) in obj {
        if let Some(s) = props.get(k) {
            path.push(k.clone());
            let e = check(s, v, owner, path, depth + 1);
            path.pop();
            if e.is_some() {
                return e;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_offsets() {
        for (s, want) in [
            ("", None),
            ("YQ==", None),
            ("YWJj\nZA==", None),
            ("%%%", Some(0)),
            ("YQ", Some(0)),
            ("YWJjZA", Some(4)),
            ("YQ=", Some(3)),
            ("YQ==YQ==", Some(4)),
            ("Y===", Some(1)),
            ("YWJ=x", Some(4)),
        ] {
            assert_eq!(go_base64_error(s), want, "{s:?}");
        }
    }

    #[test]
    fn table() {
        let d = "io.k8s.api.apps.v1.Deployment";
        let cases: Vec<(&str, Value, Option<&str>)> = vec![
            (d, json!({"spec": {"replicas": 3, "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}}), None),
            (d, json!({"spec": {"replicas": "3"}}), Some("json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32")),
            (d, json!({"spec": {"replicas": 1.5}}), Some("json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32")),
            (d, json!({"metadata": {"labels": {"a": 1}}}), Some("json: cannot unmarshal number 1 into Go struct field ObjectMeta.metadata.labels of type string")),
            (d, json!({"spec": {"template": "x"}}), Some("json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec")),
            (d, json!({"spec": {"template": {"spec": {"containers": {}}}}}), Some("json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container")),
            (d, json!({"spec": null, "metadata": {"name": "x", "annotations": null}}), None),
            ("io.k8s.api.core.v1.Pod", json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}}), None),
            ("io.k8s.api.core.v1.ConfigMap", json!({"data": {"a": true}}), Some("json: cannot unmarshal bool into Go struct field ConfigMap.data of type string")),
            ("io.k8s.api.apps.v1.ControllerRevision", json!({"data": {"any": [1, "x"]}, "revision": 2}), None),
            ("io.k8s.api.core.v1.Secret", json!({"data": {"a": "%%%"}}), Some("illegal base64 data at input byte 0")),
            ("io.k8s.api.core.v1.Secret", json!({"data": {"a": "YWJj", "b": "YQ=="}}), None),
            ("io.k8s.api.core.v1.ConfigMap", json!({"binaryData": {"a": "YWJjZA"}}), Some("illegal base64 data at input byte 4")),
        ];
        for (def, body, want) in cases {
            assert_eq!(first_type_error(def, &body).as_deref(), want, "{body}");
        }
    }
}
