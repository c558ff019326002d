//! The protobuf wire writer and the schema-driven encoding of kube's JSON form of an object
//! as the message gogo-protobuf (kube's generated marshallers) writes for it.
//!
//! Owns: varint / length-delimited / fixed64 writing, field order (ascending field number, as
//! the generated marshallers lay fields out), which unset fields still go on the wire (every
//! non-pointer scalar and struct, zero or not; pointers, slices, maps and byte slices only
//! when set), `map<string, _>` entries in sorted key order, unpacked repeated scalars,
//! `,inline` embedding, and the wire forms of the special apimachinery types (Time and
//! MicroTime as seconds + nanos, Duration in nanoseconds, Quantity and IntOrString, the raw
//! JSON of RawExtension / FieldsV1 / JSON, the JSONSchemaProps "or" types).
//!
//! Does not know: the `k8s\0` envelope and kind lookup (`mod.rs`), HTTP negotiation, custom
//! resources (they have no protobuf form).

use base64::Engine as _;
use serde_json::{Map, Value};

use super::schema::{Card, Emit, Field, Message, Shape, Ty};

/// Nesting limit (objects come from storage, but a deep CRD schema must not overflow).
const MAX_DEPTH: usize = 100;

const JSON_SCHEMA_PROPS: &str =
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";

pub(crate) fn varint(out: &mut Vec<u8>, v: u64) {
    let (b, n) = varint_bytes(v);
    out.extend_from_slice(&b[..n]);
}

/// The varint encoding of `v` on the stack: the bytes and how many of them are used.
fn varint_bytes(mut v: u64) -> ([u8; 10], usize) {
    let (mut b, mut n) = ([0u8; 10], 0);
    while v >= 0x80 {
        b[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    b[n] = v as u8;
    (b, n + 1)
}

fn key(out: &mut Vec<u8>, tag: u32, wire: u8) {
    varint(out, (u64::from(tag) << 3) | u64::from(wire));
}

/// A length-delimited field.
pub(crate) fn bytes_field(out: &mut Vec<u8>, tag: u32, b: &[u8]) {
    key(out, tag, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Writes a nested message field: its body is built by `f` in place after a one-byte length;
/// a body of 128 bytes or more moves once to make room for its longer length (most are
/// shorter, and none is copied once per nesting level of its callers).
fn nested<F>(out: &mut Vec<u8>, tag: u32, f: F) -> Result<(), String>
where
    F: FnOnce(&mut Vec<u8>) -> Result<(), String>,
{
    key(out, tag, 2);
    let at = out.len();
    out.push(0);
    f(out)?;
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
        return Ok(());
    }
    let (buf, n) = varint_bytes(len as u64);
    out[at] = buf[0];
    out.splice(at + 1..at + 1, buf[1..n].iter().copied());
    Ok(())
}

fn type_err(what: &str, json: &str, want: &str, v: &Value) -> String {
    format!("cannot encode {what}.{json} as protobuf: want {want}, got {v}")
}

fn as_i64(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_u64().map(|u| u as i64))
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
}

/// One scalar value of type `ty` as field `tag`.
fn scalar(
    out: &mut Vec<u8>,
    what: &str,
    f: &Field,
    ty: Ty,
    tag: u32,
    v: &Value,
) -> Result<(), String> {
    match ty {
        Ty::Str => {
            let s = match v {
                Value::String(s) => std::borrow::Cow::Borrowed(s.as_str()),
                Value::Null => std::borrow::Cow::Borrowed(""),
                other => std::borrow::Cow::Owned(other.to_string()),
            };
            bytes_field(out, tag, s.as_bytes());
        }
        Ty::Bytes => {
            let s = v.as_str().unwrap_or("");
            let b = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| type_err(what, f.json, "base64 bytes", v))?;
            bytes_field(out, tag, &b);
        }
        Ty::Bool => {
            let b = match v {
                Value::Bool(b) => *b,
                Value::Null => false,
                other => return Err(type_err(what, f.json, "a boolean", other)),
            };
            key(out, tag, 0);
            varint(out, u64::from(b));
        }
        Ty::I32 | Ty::I64 => {
            let n = match v {
                Value::Null => 0,
                other => {
                    as_i64(other).ok_or_else(|| type_err(what, f.json, "an integer", other))?
                }
            };
            let n = if ty == Ty::I32 {
                i64::from(n as i32)
            } else {
                n
            };
            key(out, tag, 0);
            varint(out, n as u64);
        }
        Ty::F64 => {
            let x = match v {
                Value::Null => 0.0,
                other => other
                    .as_f64()
                    .ok_or_else(|| type_err(what, f.json, "a number", other))?,
            };
            key(out, tag, 1);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        Ty::Msg(_) | Ty::Inline(_) => {
            return Err(format!("field {tag} of {what} is not a scalar"));
        }
    }
    Ok(())
}

/// One element of type `ty` (a scalar, or a message built from `v`) as field `tag`.
fn element(
    out: &mut Vec<u8>,
    what: &str,
    f: &Field,
    ty: Ty,
    tag: u32,
    v: &Value,
    depth: usize,
) -> Result<(), String> {
    match ty {
        Ty::Msg(name) | Ty::Inline(name) => {
            nested(out, tag, |out| message_body(out, name, v, depth + 1))
        }
        _ => scalar(out, what, f, ty, tag, v),
    }
}

/// Writes the body (no key, no length) of the message `name` for the JSON `v` (`Null` when
/// unset: the zero value of the type).
pub(crate) fn message_body(
    out: &mut Vec<u8>,
    name: &str,
    v: &Value,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "protobuf message nesting exceeds {MAX_DEPTH} levels"
        ));
    }
    let msg = super::message(name).ok_or_else(|| format!("no protobuf schema for {name}"))?;
    match msg.shape {
        Shape::Object => {
            let empty = Map::new();
            let obj = match v {
                Value::Object(m) => m,
                Value::Null => &empty,
                other => return Err(format!("cannot encode {name} as protobuf from {other}")),
            };
            object(out, msg, obj, depth)
        }
        Shape::Time | Shape::MicroTime => time(out, msg.shape, name, v),
        Shape::Duration => {
            let ns = match v {
                Value::Null => 0,
                Value::String(s) => parse_go_duration(s)
                    .ok_or_else(|| format!("invalid duration {s:?} in {name}"))?,
                other => return Err(format!("invalid duration {other} in {name}")),
            };
            key(out, 1, 0);
            varint(out, ns as u64);
            Ok(())
        }
        Shape::Quantity => {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Null => "0".into(),
                other => other.to_string(),
            };
            bytes_field(out, 1, s.as_bytes());
            Ok(())
        }
        Shape::IntOrString => {
            let (ty, int, s) = match v {
                Value::String(s) => (1u64, 0i64, s.as_str()),
                Value::Null => (0, 0, ""),
                other => (
                    0,
                    as_i64(other).ok_or_else(|| format!("invalid IntOrString {other}"))?,
                    "",
                ),
            };
            key(out, 1, 0);
            varint(out, ty);
            key(out, 2, 0);
            varint(out, i64::from(int as i32) as u64);
            bytes_field(out, 3, s.as_bytes());
            Ok(())
        }
        Shape::RawJson => {
            if !v.is_null() {
                let raw = serde_json::to_vec(v).map_err(|e| e.to_string())?;
                bytes_field(out, 1, &raw);
            }
            Ok(())
        }
        Shape::StringList => {
            if let Value::Array(items) = v {
                for it in items {
                    bytes_field(out, 1, it.as_str().unwrap_or("").as_bytes());
                }
            }
            Ok(())
        }
        Shape::SchemaOrArray => match v {
            Value::Array(items) => {
                for it in items {
                    nested(out, 2, |out| {
                        message_body(out, JSON_SCHEMA_PROPS, it, depth + 1)
                    })?;
                }
                Ok(())
            }
            Value::Null => Ok(()),
            schema_v => nested(out, 1, |out| {
                message_body(out, JSON_SCHEMA_PROPS, schema_v, depth + 1)
            }),
        },
        Shape::SchemaOrBool => {
            let allows = match v {
                Value::Bool(b) => *b,
                Value::Null => false,
                _ => true,
            };
            key(out, 1, 0);
            varint(out, u64::from(allows));
            if v.is_object() {
                nested(out, 2, |out| {
                    message_body(out, JSON_SCHEMA_PROPS, v, depth + 1)
                })?;
            }
            Ok(())
        }
        Shape::SchemaOrStringArray => match v {
            Value::Array(items) => {
                for it in items {
                    bytes_field(out, 2, it.as_str().unwrap_or("").as_bytes());
                }
                Ok(())
            }
            Value::Null => Ok(()),
            schema_v => nested(out, 1, |out| {
                message_body(out, JSON_SCHEMA_PROPS, schema_v, depth + 1)
            }),
        },
    }
}

/// `meta.v1.PartialObjectMetadata{metadata(1)}` (not in the OpenAPI-derived table).
pub(crate) fn partial_object_metadata(out: &mut Vec<u8>, v: &Value) -> Result<(), String> {
    let meta = v.get("metadata").unwrap_or(&Value::Null);
    nested(out, 1, |out| {
        message_body(
            out,
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            meta,
            1,
        )
    })
}

/// Time / MicroTime: empty when zero (unset), else seconds(1) and nanos(2), both always
/// written (non-pointer fields of `metav1.Timestamp`).
fn time(out: &mut Vec<u8>, shape: Shape, name: &str, v: &Value) -> Result<(), String> {
    let s = match v {
        Value::Null => return Ok(()),
        Value::String(s) if s.is_empty() => return Ok(()),
        Value::String(s) => s,
        other => return Err(format!("invalid {name} {other}")),
    };
    let ts: jiff::Timestamp = s
        .parse()
        .map_err(|e| format!("invalid {name} {s:?}: {e}"))?;
    let nanos = match shape {
        Shape::MicroTime => ts.subsec_nanosecond() / 1000 * 1000,
        // metav1.Time is whole seconds on the wire as in JSON.
        _ => 0,
    };
    key(out, 1, 0);
    varint(out, ts.as_second() as u64);
    key(out, 2, 0);
    varint(out, i64::from(nanos) as u64);
    Ok(())
}

/// Whether an unset (absent or null) field still goes on the wire, as its zero value.
fn written_when_unset(f: &Field) -> bool {
    match (f.card, f.ty) {
        (Card::Rep | Card::Map, _) => false,
        (_, Ty::Inline(_)) => true,
        (_, Ty::Bytes) => false,
        (Card::Zero, _) => true,
        // Non-pointer scalars and structs (except named slices, which are nil).
        (Card::One, Ty::Msg(name)) => {
            f.emit == Emit::Fill
                && super::message(name).is_some_and(|m| m.shape != Shape::StringList)
        }
        (Card::One, _) => f.emit == Emit::Fill,
    }
}

fn object(
    out: &mut Vec<u8>,
    msg: &Message,
    obj: &Map<String, Value>,
    depth: usize,
) -> Result<(), String> {
    // Fields are declared in Go's order; protobuf writes them by tag (usually the same order,
    // then nothing is allocated).
    if msg.fields.is_sorted_by_key(|f| f.tag) {
        for f in msg.fields {
            field(out, msg.name, f, obj, depth)?;
        }
    } else {
        let mut order: Vec<&Field> = msg.fields.iter().collect();
        order.sort_by_key(|f| f.tag);
        for f in order {
            field(out, msg.name, f, obj, depth)?;
        }
    }
    Ok(())
}

/// One field of message `what` from the JSON object `obj`.
fn field(
    out: &mut Vec<u8>,
    what: &str,
    f: &Field,
    obj: &Map<String, Value>,
    depth: usize,
) -> Result<(), String> {
    if let Ty::Inline(name) = f.ty {
        // The embedded struct's fields live in this JSON object.
        let inner = super::message(name)
            .filter(|m| m.shape == Shape::Object)
            .ok_or_else(|| format!("no protobuf schema for inline {name}"))?;
        return nested(out, f.tag, |out| object(out, inner, obj, depth + 1));
    }
    let v = obj.get(f.json).filter(|v| !v.is_null());
    match f.card {
        Card::Rep => {
            if let Some(Value::Array(items)) = v {
                for it in items {
                    element(out, what, f, f.ty, f.tag, it, depth)?;
                }
            }
        }
        Card::Map => {
            if let Some(Value::Object(m)) = v {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                for k in keys {
                    let val = &m[k];
                    nested(out, f.tag, |out| {
                        bytes_field(out, 1, k.as_bytes());
                        element(out, what, f, f.ty, 2, val, depth)
                    })?;
                }
            }
        }
        Card::One | Card::Zero => match v {
            Some(v) => element(out, what, f, f.ty, f.tag, v, depth)?,
            None if written_when_unset(f) => {
                element(out, what, f, f.ty, f.tag, &Value::Null, depth)?
            }
            None => {}
        },
    }
    Ok(())
}

/// Parses Go's `time.Duration` string form ("1h2m3.5s", "100ms", "-1m30s", "0s") into
/// nanoseconds.
pub(crate) fn parse_go_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(num_end);
        if num.is_empty() {
            return None;
        }
        let n: f64 = num.parse().ok()?;
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        let mult = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += n * mult;
        rest = tail;
    }
    let ns = total.round() as i64;
    Some(if neg { -ns } else { ns })
}

#[cfg(test)]
mod tests {
    use super::super::schema;
    use super::*;

    #[test]
    fn durations_parse_back() {
        for ns in [
            0i64,
            1,
            1_100,
            2_200_000,
            1_500_000_000,
            3_723_000_000_000,
            60_000_000_000,
            -90_000_000_000,
        ] {
            let s = super::super::decode::go_duration(ns);
            assert_eq!(parse_go_duration(&s), Some(ns), "{s}");
        }
        assert_eq!(parse_go_duration("1h"), Some(3_600_000_000_000));
        assert_eq!(parse_go_duration("bogus"), None);
        assert_eq!(parse_go_duration(""), None);
    }

    #[test]
    fn varints() {
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut v = Vec::new();
        varint(&mut v, (-1i64) as u64);
        assert_eq!(v.len(), 10);
    }

    #[test]
    fn round_trips_through_the_decoder() {
        let cases = [
            (
                "io.k8s.api.core.v1.ConfigMap",
                serde_json::json!({"metadata": {"name": "x", "namespace": "d", "labels": {"b": "2", "a": "1"}, "creationTimestamp": "2024-01-02T03:04:05Z"},
                    "data": {"k": "v", "e": ""}, "binaryData": {"bin": "AAEC/w=="}, "immutable": false}),
            ),
            (
                "io.k8s.api.core.v1.Service",
                serde_json::json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": "http", "protocol": "TCP"}, {"port": 81, "targetPort": 8081}], "clusterIPs": ["10.0.0.1"]}, "status": {"loadBalancer": {}}}),
            ),
            (
                "io.k8s.api.coordination.v1.Lease",
                serde_json::json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "h", "leaseDurationSeconds": 15, "renewTime": "2024-01-02T03:04:05.123456Z"}}),
            ),
        ];
        for (name, v) in cases {
            let mut out = Vec::new();
            message_body(&mut out, name, &v, 0).unwrap();
            let msg = schema::message(name).unwrap();
            let back = super::super::decode::object(msg, &out, 0).unwrap();
            // The decoder renders kube's JSON, which keeps zero non-pointer fields as the
            // canonical JSON does; compare the fields set here.
            for (k, w) in v.as_object().unwrap() {
                assert_eq!(back.get(k), Some(w), "{name}.{k}");
            }
        }
    }
}
