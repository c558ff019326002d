//! OpenAPI v3 forms of the v2 schemas and paths.
//!
//! Owns: the mechanical v2 → v3 conversion kube-openapi performs (`#/components/schemas/`
//! references, `allOf` around a `$ref` that carries a description, request bodies and response
//! contents per media type, parameter `schema`s) and the v3 shapes of the types that differ
//! between the two versions (`IntOrString`, `Quantity` use `oneOf`).
//!
//! Does not know: which documents exist or how they are cached (`mod.rs`), resources, HTTP.

use serde_json::{json, Map, Value};

use super::schemas::ref_target;

const V3_REF: &str = "#/components/schemas/";

/// Converts one v2 definition to its v3 component schema.
pub(crate) fn definition(name: &str, v2: &Value) -> Value {
    let mut out = schema(v2);
    if let Value::Object(m) = &mut out {
        match name {
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => {
                m.remove("type");
                m.insert(
                    "oneOf".into(),
                    json!([{"type": "integer"}, {"type": "string"}]),
                );
            }
            "io.k8s.apimachinery.pkg.api.resource.Quantity" => {
                m.remove("type");
                m.insert(
                    "oneOf".into(),
                    json!([{"type": "string"}, {"type": "number"}]),
                );
            }
            _ => {}
        }
    }
    out
}

/// Converts a v2 schema (recursively): references move to `#/components/schemas/` and a
/// reference with sibling keys is wrapped in `allOf`.
pub(crate) fn schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            let target = m.get("$ref").and_then(Value::as_str).and_then(ref_target);
            for (k, x) in m {
                if k == "$ref" {
                    continue;
                }
                out.insert(k.clone(), schema(x));
            }
            if let Some(t) = target {
                let r = json!({"$ref": format!("{V3_REF}{t}")});
                if out.is_empty() {
                    return r;
                }
                out.insert("allOf".into(), Value::Array(vec![r]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(schema).collect()),
        other => other.clone(),
    }
}

/// Converts one v2 parameter (not a body parameter).
fn parameter(p: &Value) -> Value {
    let mut out = Map::new();
    let mut s = Map::new();
    if let Value::Object(m) = p {
        for (k, x) in m {
            match k.as_str() {
                "type" | "uniqueItems" | "format" | "items" => {
                    s.insert(k.clone(), x.clone());
                }
                _ => {
                    out.insert(k.clone(), x.clone());
                }
            }
        }
    }
    if !s.is_empty() {
        out.insert("schema".into(), Value::Object(s));
    }
    Value::Object(out)
}

fn content(media: &[Value], schema_v2: &Value) -> Value {
    let s = schema(schema_v2);
    let mut c = Map::new();
    for m in media.iter().filter_map(Value::as_str) {
        c.insert(m.to_string(), json!({ "schema": s.clone() }));
    }
    Value::Object(c)
}

/// Converts one v2 operation.
fn operation(op: &Value) -> Value {
    let Value::Object(m) = op else {
        return op.clone();
    };
    let empty = Vec::new();
    let consumes = m
        .get("consumes")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let produces = m
        .get("produces")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut out = Map::new();
    for (k, x) in m {
        match k.as_str() {
            "consumes" | "produces" | "schemes" => {}
            "parameters" => {
                let mut ps = Vec::new();
                for p in x.as_array().unwrap_or(&empty) {
                    if p.get("in").and_then(Value::as_str) == Some("body") {
                        let mut rb = json!({ "content": content(consumes, &p["schema"]) });
                        if p.get("required") == Some(&Value::Bool(true)) {
                            rb["required"] = Value::Bool(true);
                        }
                        out.insert("requestBody".into(), rb);
                    } else {
                        ps.push(parameter(p));
                    }
                }
                if !ps.is_empty() {
                    out.insert("parameters".into(), Value::Array(ps));
                }
            }
            "responses" => {
                let mut rs = Map::new();
                if let Value::Object(r) = x {
                    for (code, resp) in r {
                        let mut nr = Map::new();
                        if let Some(d) = resp.get("description") {
                            nr.insert("description".into(), d.clone());
                        }
                        if let Some(s) = resp.get("schema") {
                            nr.insert("content".into(), content(produces, s));
                        }
                        rs.insert(code.clone(), Value::Object(nr));
                    }
                }
                out.insert("responses".into(), Value::Object(rs));
            }
            _ => {
                out.insert(k.clone(), x.clone());
            }
        }
    }
    Value::Object(out)
}

/// Converts one v2 path item.
pub(crate) fn path_item(item: &Value) -> Value {
    let Value::Object(m) = item else {
        return item.clone();
    };
    let mut out = Map::new();
    for (k, x) in m {
        if k == "parameters" {
            let ps = x.as_array().map(|a| a.iter().map(parameter).collect());
            out.insert(k.clone(), Value::Array(ps.unwrap_or_default()));
        } else {
            out.insert(k.clone(), operation(x));
        }
    }
    Value::Object(out)
}

/// True if `v` still holds a v2 reference (used by tests).
#[cfg(test)]
pub(crate) fn has_v2_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| {
            (k == "$ref"
                && x.as_str()
                    .is_some_and(|s| s.starts_with(super::schemas::V2_REF)))
                || has_v2_ref(x)
        }),
        Value::Array(a) => a.iter().any(has_v2_ref),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_conversion() {
        // (v2, v3)
        let cases = [
            (
                json!({"$ref": "#/definitions/A"}),
                json!({"$ref": "#/components/schemas/A"}),
            ),
            (
                json!({"$ref": "#/definitions/A", "description": "d"}),
                json!({"allOf": [{"$ref": "#/components/schemas/A"}], "description": "d"}),
            ),
            (
                json!({"type": "array", "items": {"$ref": "#/definitions/A"}}),
                json!({"type": "array", "items": {"$ref": "#/components/schemas/A"}}),
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
            ),
        ];
        for (v2, v3) in cases {
            assert_eq!(schema(&v2), v3);
        }
    }

    #[test]
    fn operation_conversion() {
        let op = json!({
            "consumes": ["application/merge-patch+json"],
            "produces": ["application/json"],
            "schemes": ["https"],
            "operationId": "patchX",
            "parameters": [
                {"in": "body", "name": "body", "required": true, "schema": {"$ref": "#/definitions/P"}},
                {"in": "query", "name": "fieldValidation", "type": "string", "uniqueItems": true, "description": "d"}
            ],
            "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/X"}}, "401": {"description": "Unauthorized"}}
        });
        let got = operation(&op);
        assert_eq!(
            got,
            json!({
                "operationId": "patchX",
                "requestBody": {"content": {"application/merge-patch+json": {"schema": {"$ref": "#/components/schemas/P"}}}, "required": true},
                "parameters": [{"in": "query", "name": "fieldValidation", "description": "d", "schema": {"type": "string", "uniqueItems": true}}],
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/X"}}}}, "401": {"description": "Unauthorized"}}
            })
        );
    }
}
