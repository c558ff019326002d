//! The protobuf form of the OpenAPI v2 document (gnostic's `openapi.v2.Document`), which
//! client-go's `OpenAPISchema()` requests with
//! `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and cannot do without.
//!
//! Owns: a minimal proto3 wire encoder and the mapping of the JSON v2 document onto gnostic's
//! messages (field numbers from gnostic's `OpenAPIv2.proto`). Vendor extensions, defaults and
//! enums are `Any{yaml}` values; JSON text is valid YAML, so they carry the JSON serialization.
//!
//! Does not know: how the JSON document is built (it converts whatever `mod.rs` produced),
//! HTTP content negotiation. Unknown JSON keys are dropped, as gnostic drops them.

use serde_json::{Map, Value};

// ---- wire format ----

fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A string field (proto3: the empty string is not written).
fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    if !s.is_empty() {
        bytes(out, field, s.as_bytes());
    }
}

/// An embedded message (always written: presence matters for messages and oneofs).
fn message(out: &mut Vec<u8>, field: u32, body: Vec<u8>) {
    bytes(out, field, &body);
}

fn boolean(out: &mut Vec<u8>, field: u32, b: bool) {
    if b {
        key(out, field, 0);
        varint(out, 1);
    }
}

fn int64(out: &mut Vec<u8>, field: u32, i: i64) {
    if i != 0 {
        key(out, field, 0);
        varint(out, i as u64);
    }
}

fn double(out: &mut Vec<u8>, field: u32, f: f64) {
    if f != 0.0 {
        key(out, field, 1);
        out.extend_from_slice(&f.to_le_bytes());
    }
}

// ---- JSON accessors ----

fn s<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn b(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn i(m: &Map<String, Value>, k: &str) -> i64 {
    m.get(k).and_then(Value::as_i64).unwrap_or(0)
}

fn f(m: &Map<String, Value>, k: &str) -> f64 {
    m.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

fn strings<'a>(m: &'a Map<String, Value>, k: &str) -> impl Iterator<Item = &'a str> {
    m.get(k)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn obj(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
}

// ---- gnostic messages ----

/// `Any { yaml = 2 }`.
fn any(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 2, &serde_json::to_string(v).unwrap_or_default());
    out
}

/// The `x-...` keys of `m` as `repeated NamedAny` at `field`.
fn vendor_extensions(out: &mut Vec<u8>, field: u32, m: &Map<String, Value>) {
    for (k, v) in m.iter().filter(|(k, _)| k.starts_with("x-")) {
        let mut named = Vec::new();
        string(&mut named, 1, k);
        message(&mut named, 2, any(v));
        message(out, field, named);
    }
}

fn schema(m: &Map<String, Value>) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, s(m, "$ref"));
    string(&mut out, 2, s(m, "format"));
    string(&mut out, 3, s(m, "title"));
    string(&mut out, 4, s(m, "description"));
    if let Some(d) = m.get("default") {
        message(&mut out, 5, any(d));
    }
    double(&mut out, 6, f(m, "multipleOf"));
    double(&mut out, 7, f(m, "maximum"));
    boolean(&mut out, 8, b(m, "exclusiveMaximum"));
    double(&mut out, 9, f(m, "minimum"));
    boolean(&mut out, 10, b(m, "exclusiveMinimum"));
    int64(&mut out, 11, i(m, "maxLength"));
    int64(&mut out, 12, i(m, "minLength"));
    string(&mut out, 13, s(m, "pattern"));
    int64(&mut out, 14, i(m, "maxItems"));
    int64(&mut out, 15, i(m, "minItems"));
    boolean(&mut out, 16, b(m, "uniqueItems"));
    int64(&mut out, 17, i(m, "maxProperties"));
    int64(&mut out, 18, i(m, "minProperties"));
    for r in strings(m, "required") {
        string(&mut out, 19, r);
    }
    for e in m
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        message(&mut out, 20, any(e));
    }
    match m.get("additionalProperties") {
        Some(Value::Object(a)) => {
            let mut item = Vec::new();
            message(&mut item, 1, schema(a));
            message(&mut out, 21, item);
        }
        Some(Value::Bool(flag)) => {
            let mut item = Vec::new();
            key(&mut item, 2, 0);
            varint(&mut item, u64::from(*flag));
            message(&mut out, 21, item);
        }
        _ => {}
    }
    match m.get("type") {
        Some(Value::String(t)) => {
            let mut ty = Vec::new();
            string(&mut ty, 1, t);
            message(&mut out, 22, ty);
        }
        Some(Value::Array(ts)) => {
            let mut ty = Vec::new();
            ts.iter()
                .filter_map(Value::as_str)
                .for_each(|t| string(&mut ty, 1, t));
            message(&mut out, 22, ty);
        }
        _ => {}
    }
    match m.get("items") {
        Some(Value::Object(it)) => {
            let mut items = Vec::new();
            message(&mut items, 1, schema(it));
            message(&mut out, 23, items);
        }
        Some(Value::Array(its)) => {
            let mut items = Vec::new();
            its.iter()
                .filter_map(obj)
                .for_each(|it| message(&mut items, 1, schema(it)));
            message(&mut out, 23, items);
        }
        _ => {}
    }
    for a in m
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(a) = obj(a) {
            message(&mut out, 24, schema(a));
        }
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        let mut p = Vec::new();
        for (name, ps) in props {
            let mut named = Vec::new();
            string(&mut named, 1, name);
            message(
                &mut named,
                2,
                ps.as_object().map(schema).unwrap_or_default(),
            );
            message(&mut p, 1, named);
        }
        message(&mut out, 25, p);
    }
    string(&mut out, 26, s(m, "discriminator"));
    boolean(&mut out, 27, b(m, "readOnly"));
    if let Some(e) = m.get("example") {
        message(&mut out, 30, any(e));
    }
    vendor_extensions(&mut out, 31, m);
    out
}

/// `ParametersItem { parameter = 1 { body_parameter = 1 | non_body_parameter = 2 } }`.
fn parameter(m: &Map<String, Value>) -> Vec<u8> {
    let location = s(m, "in");
    let mut param = Vec::new();
    if location == "body" {
        let mut body = Vec::new();
        string(&mut body, 1, s(m, "description"));
        string(&mut body, 2, s(m, "name"));
        string(&mut body, 3, location);
        boolean(&mut body, 4, b(m, "required"));
        if let Some(sc) = m.get("schema").and_then(obj) {
            message(&mut body, 5, schema(sc));
        }
        vendor_extensions(&mut body, 6, m);
        message(&mut param, 1, body);
    } else {
        // Query and form-data sub-schemas have `allow_empty_value` at 5 and the rest shifted
        // by one; header and path ones do not.
        let (variant, shift) = match location {
            "header" => (1, 0),
            "formData" => (2, 1),
            "path" => (4, 0),
            _ => (3, 1),
        };
        let mut sub = Vec::new();
        boolean(&mut sub, 1, b(m, "required"));
        string(&mut sub, 2, location);
        string(&mut sub, 3, s(m, "description"));
        string(&mut sub, 4, s(m, "name"));
        if shift == 1 {
            boolean(&mut sub, 5, b(m, "allowEmptyValue"));
        }
        string(&mut sub, 5 + shift, s(m, "type"));
        string(&mut sub, 6 + shift, s(m, "format"));
        string(&mut sub, 8 + shift, s(m, "collectionFormat"));
        if let Some(d) = m.get("default") {
            message(&mut sub, 9 + shift, any(d));
        }
        boolean(&mut sub, 19 + shift, b(m, "uniqueItems"));
        vendor_extensions(&mut sub, 22 + shift, m);
        let mut non_body = Vec::new();
        message(&mut non_body, variant, sub);
        message(&mut param, 2, non_body);
    }
    let mut item = Vec::new();
    message(&mut item, 1, param);
    item
}

fn operation(m: &Map<String, Value>) -> Vec<u8> {
    let mut out = Vec::new();
    for t in strings(m, "tags") {
        string(&mut out, 1, t);
    }
    string(&mut out, 2, s(m, "summary"));
    string(&mut out, 3, s(m, "description"));
    string(&mut out, 5, s(m, "operationId"));
    for p in strings(m, "produces") {
        string(&mut out, 6, p);
    }
    for c in strings(m, "consumes") {
        string(&mut out, 7, c);
    }
    for p in m
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(p) = obj(p) {
            message(&mut out, 8, parameter(p));
        }
    }
    if let Some(Value::Object(rs)) = m.get("responses") {
        let mut responses = Vec::new();
        for (code, r) in rs {
            let Some(r) = obj(r) else { continue };
            let mut resp = Vec::new();
            string(&mut resp, 1, s(r, "description"));
            if let Some(sc) = r.get("schema").and_then(obj) {
                let mut item = Vec::new();
                message(&mut item, 1, schema(sc));
                message(&mut resp, 2, item);
            }
            vendor_extensions(&mut resp, 5, r);
            let mut value = Vec::new();
            message(&mut value, 1, resp);
            let mut named = Vec::new();
            string(&mut named, 1, code);
            message(&mut named, 2, value);
            message(&mut responses, 1, named);
        }
        message(&mut out, 9, responses);
    }
    for sc in strings(m, "schemes") {
        string(&mut out, 10, sc);
    }
    boolean(&mut out, 11, b(m, "deprecated"));
    vendor_extensions(&mut out, 13, m);
    out
}

fn path_item(m: &Map<String, Value>) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, s(m, "$ref"));
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(op) = m.get(method).and_then(obj) {
            message(&mut out, field, operation(op));
        }
    }
    for p in m
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(p) = obj(p) {
            message(&mut out, 9, parameter(p));
        }
    }
    vendor_extensions(&mut out, 10, m);
    out
}

/// Encodes a JSON OpenAPI v2 document as gnostic's `openapi.v2.Document`.
pub(crate) fn document(doc: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let Some(m) = doc.as_object() else {
        return out;
    };
    string(&mut out, 1, s(m, "swagger"));
    if let Some(info) = m.get("info").and_then(obj) {
        let mut inf = Vec::new();
        string(&mut inf, 1, s(info, "title"));
        string(&mut inf, 2, s(info, "version"));
        string(&mut inf, 3, s(info, "description"));
        message(&mut out, 2, inf);
    }
    if let Some(Value::Object(paths)) = m.get("paths") {
        let mut ps = Vec::new();
        for (p, item) in paths {
            let Some(item) = obj(item) else { continue };
            let mut named = Vec::new();
            string(&mut named, 1, p);
            message(&mut named, 2, path_item(item));
            message(&mut ps, 2, named);
        }
        message(&mut out, 8, ps);
    }
    if let Some(Value::Object(defs)) = m.get("definitions") {
        let mut ds = Vec::new();
        for (name, d) in defs {
            let Some(d) = obj(d) else { continue };
            let mut named = Vec::new();
            string(&mut named, 1, name);
            message(&mut named, 2, schema(d));
            message(&mut ds, 1, named);
        }
        message(&mut out, 9, ds);
    }
    for req in m
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(req) = obj(req) else { continue };
        let mut sr = Vec::new();
        for (name, scopes) in req {
            let mut arr = Vec::new();
            for sc in scopes
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                string(&mut arr, 1, sc);
            }
            let mut named = Vec::new();
            string(&mut named, 1, name);
            message(&mut named, 2, arr);
            message(&mut sr, 1, named);
        }
        message(&mut out, 12, sr);
    }
    if let Some(Value::Object(defs)) = m.get("securityDefinitions") {
        let mut sd = Vec::new();
        for (name, d) in defs {
            let Some(d) = obj(d) else { continue };
            if s(d, "type") != "apiKey" {
                continue;
            }
            let mut api_key = Vec::new();
            string(&mut api_key, 1, s(d, "type"));
            string(&mut api_key, 2, s(d, "name"));
            string(&mut api_key, 3, s(d, "in"));
            string(&mut api_key, 4, s(d, "description"));
            let mut item = Vec::new();
            message(&mut item, 2, api_key);
            let mut named = Vec::new();
            string(&mut named, 1, name);
            message(&mut named, 2, item);
            message(&mut sd, 1, named);
        }
        message(&mut out, 13, sd);
    }
    vendor_extensions(&mut out, 16, m);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_primitives() {
        // (encoder output, expected bytes)
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut v = Vec::new();
        string(&mut v, 1, "2.0");
        assert_eq!(v, [0x0a, 3, b'2', b'.', b'0']);
        let mut v = Vec::new();
        string(&mut v, 1, "");
        boolean(&mut v, 2, false);
        int64(&mut v, 3, 0);
        assert!(v.is_empty());
        let mut v = Vec::new();
        boolean(&mut v, 16, true);
        assert_eq!(v, [0x80, 0x01, 0x01]);
    }

    #[test]
    fn small_document() {
        let doc = json!({"swagger": "2.0", "definitions": {"A": {"type": "string"}}});
        // Document{swagger=1:"2.0", definitions=9:{1:{1:"A", 2:{22:{1:"string"}}}}}
        let schema = [0xb2, 0x01, 8, 0x0a, 6, b's', b't', b'r', b'i', b'n', b'g'];
        let mut named = vec![0x0a, 1, b'A', 0x12, schema.len() as u8];
        named.extend_from_slice(&schema);
        let mut defs = vec![0x0a, named.len() as u8];
        defs.extend_from_slice(&named);
        let mut want = vec![0x0a, 3, b'2', b'.', b'0', 0x4a, defs.len() as u8];
        want.extend_from_slice(&defs);
        assert_eq!(document(&doc), want);
    }
}
