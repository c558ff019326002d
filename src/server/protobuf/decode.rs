//! The protobuf wire reader and the schema-driven rendering of a message as kube's JSON.
//!
//! Owns: varint / length-delimited / fixed64 / fixed32 reading (bounds-checked, never panics),
//! skipping unknown fields, packed and unpacked repeated scalars, `map<string, _>` entries,
//! `omitempty` of non-pointer scalars, `,inline` embedding, and the JSON forms of the special
//! apimachinery types (Time, MicroTime, Duration, Quantity, IntOrString, RawExtension, ...).
//!
//! Does not know: the `k8s\0` envelope and kind lookup (`mod.rs`), where the table comes from
//! (`schema.rs`), defaulting or validation of the decoded object.

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::schema::{Card, Message, Shape, Ty};

/// Nesting limit for embedded messages, against stack exhaustion by hostile bodies.
const MAX_DEPTH: usize = 100;

const JSON_SCHEMA_PROPS: &str =
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";

/// One field value as found on the wire.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl Wire<'_> {
    fn name(&self) -> &'static str {
        match self {
            Wire::Varint(_) => "varint",
            Wire::Fixed64(_) => "fixed64",
            Wire::Bytes(_) => "length-delimited",
            Wire::Fixed32(_) => "fixed32",
        }
    }
}

/// A cursor over one encoded message.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = *self
                .buf
                .get(self.pos)
                .ok_or("unexpected end of protobuf data in varint")?;
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err("protobuf varint overflows 64 bits".into());
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("protobuf varint overflows 64 bits".into())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or("unexpected end of protobuf data")?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// The next field (tag, value), or `None` at the end of the message.
    pub(crate) fn next_field(&mut self) -> Result<Option<(u32, Wire<'a>)>, String> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let tag = u32::try_from(key >> 3)
            .ok()
            .filter(|&t| t > 0 && t < (1 << 29))
            .ok_or_else(|| format!("invalid protobuf field number {}", key >> 3))?;
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                let b = self.take(8)?;
                Wire::Fixed64(u64::from_le_bytes(
                    b.try_into().map_err(|_| "short fixed64")?,
                ))
            }
            2 => {
                let n = usize::try_from(self.varint()?)
                    .map_err(|_| "protobuf length out of range".to_string())?;
                Wire::Bytes(self.take(n)?)
            }
            5 => {
                let b = self.take(4)?;
                Wire::Fixed32(u32::from_le_bytes(
                    b.try_into().map_err(|_| "short fixed32")?,
                ))
            }
            w => {
                return Err(format!(
                    "unsupported protobuf wire type {w} for field {tag}"
                ))
            }
        };
        Ok(Some((tag, wire)))
    }
}

fn wrong_wire(what: &str, tag: u32, w: &Wire<'_>) -> String {
    format!("wrong wire type {} for field {tag} of {what}", w.name())
}

fn want_bytes<'a>(what: &str, tag: u32, w: Wire<'a>) -> Result<&'a [u8], String> {
    match w {
        Wire::Bytes(b) => Ok(b),
        other => Err(wrong_wire(what, tag, &other)),
    }
}

fn want_varint(what: &str, tag: u32, w: Wire<'_>) -> Result<u64, String> {
    match w {
        Wire::Varint(v) => Ok(v),
        other => Err(wrong_wire(what, tag, &other)),
    }
}

fn string(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A JSON number for a double, printed as Go's encoding/json would (integral values without
/// a fraction).
fn double(f: f64) -> Result<Value, String> {
    if !f.is_finite() {
        return Err(format!("unsupported value: {f}"));
    }
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Ok(Value::from(f as i64));
    }
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| format!("unsupported value: {f}"))
}

/// Decodes one scalar element of type `ty` (not `Msg`/`Inline`).
fn scalar(ty: Ty, what: &str, tag: u32, w: Wire<'_>) -> Result<Value, String> {
    Ok(match ty {
        Ty::Str => Value::String(string(want_bytes(what, tag, w)?)),
        Ty::Bytes => Value::String(
            base64::engine::general_purpose::STANDARD.encode(want_bytes(what, tag, w)?),
        ),
        Ty::Bool => Value::Bool(want_varint(what, tag, w)? != 0),
        Ty::I32 => Value::from(want_varint(what, tag, w)? as i64 as i32),
        Ty::I64 => Value::from(want_varint(what, tag, w)? as i64),
        Ty::F64 => match w {
            Wire::Fixed64(v) => double(f64::from_bits(v))?,
            Wire::Fixed32(v) => double(f64::from(f32::from_bits(v)))?,
            other => return Err(wrong_wire(what, tag, &other)),
        },
        Ty::Msg(_) | Ty::Inline(_) => return Err(format!("field {tag} of {what} is not a scalar")),
    })
}

/// The zero value of a scalar type, for map entries without a value.
fn zero(ty: Ty) -> Value {
    match ty {
        Ty::Str | Ty::Bytes => Value::String(String::new()),
        Ty::Bool => Value::Bool(false),
        _ => Value::from(0),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Null => true,
        _ => false,
    }
}

/// Decodes one element of type `ty`: a scalar, or a message (`None`: render nothing, e.g. an
/// empty `Time`).
fn element(
    ty: Ty,
    what: &str,
    tag: u32,
    w: Wire<'_>,
    depth: usize,
) -> Result<Option<Value>, String> {
    match ty {
        Ty::Msg(name) | Ty::Inline(name) => {
            message_value(name, want_bytes(what, tag, w)?, depth + 1)
        }
        _ => scalar(ty, what, tag, w).map(Some),
    }
}

/// Decodes the message `name` from `buf` into its JSON form; `None` means "omit".
pub(crate) fn message_value(name: &str, buf: &[u8], depth: usize) -> Result<Option<Value>, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "protobuf message nesting exceeds {MAX_DEPTH} levels"
        ));
    }
    let msg = super::message(name).ok_or_else(|| format!("no protobuf schema for {name}"))?;
    match msg.shape {
        Shape::Object => object(msg, buf, depth).map(|m| Some(Value::Object(m))),
        Shape::Time | Shape::MicroTime => time(msg.shape, name, buf),
        Shape::Duration => {
            let mut d = 0i64;
            let mut r = Reader::new(buf);
            while let Some((tag, w)) = r.next_field()? {
                if tag == 1 {
                    d = want_varint(name, tag, w)? as i64;
                }
            }
            Ok(Some(Value::String(go_duration(d))))
        }
        Shape::Quantity => {
            let mut s = None;
            let mut r = Reader::new(buf);
            while let Some((tag, w)) = r.next_field()? {
                if tag == 1 {
                    s = Some(string(want_bytes(name, tag, w)?));
                }
            }
            Ok(Some(Value::String(s.unwrap_or_else(|| "0".into()))))
        }
        Shape::IntOrString => {
            let (mut ty, mut int, mut st) = (0u64, 0i32, String::new());
            let mut r = Reader::new(buf);
            while let Some((tag, w)) = r.next_field()? {
                match tag {
                    1 => ty = want_varint(name, tag, w)?,
                    2 => int = want_varint(name, tag, w)? as i64 as i32,
                    3 => st = string(want_bytes(name, tag, w)?),
                    _ => {}
                }
            }
            match ty {
                0 => Ok(Some(Value::from(int))),
                1 => Ok(Some(Value::String(st))),
                t => Err(format!("impossible IntOrString.Type {t}")),
            }
        }
        Shape::RawJson => {
            let mut raw: &[u8] = &[];
            let mut r = Reader::new(buf);
            while let Some((tag, w)) = r.next_field()? {
                if tag == 1 {
                    raw = want_bytes(name, tag, w)?;
                }
            }
            raw_json(name, raw, depth).map(Some)
        }
        Shape::StringList => {
            let mut items = Vec::new();
            let mut r = Reader::new(buf);
            while let Some((tag, w)) = r.next_field()? {
                if tag == 1 {
                    items.push(Value::String(string(want_bytes(name, tag, w)?)));
                }
            }
            Ok(Some(Value::Array(items)))
        }
        Shape::SchemaOrArray | Shape::SchemaOrBool | Shape::SchemaOrStringArray => {
            schema_or(msg, buf, depth)
        }
    }
}

/// The JSON of `RawExtension` / `FieldsV1` / `JSON`: the raw bytes, which are JSON (or, for a
/// `RawExtension` filled by a protobuf client, a nested `k8s\0` envelope).
fn raw_json(name: &str, raw: &[u8], depth: usize) -> Result<Value, String> {
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    if raw.starts_with(&super::MAGIC) {
        return super::decode_nested(raw, depth + 1);
    }
    serde_json::from_slice(raw).map_err(|e| format!("invalid JSON in {name}: {e}"))
}

fn time(shape: Shape, name: &str, buf: &[u8]) -> Result<Option<Value>, String> {
    if buf.is_empty() {
        // Go's zero time is marshalled as an empty message; kube's JSON prints null.
        return Ok(None);
    }
    let (mut secs, mut nanos) = (0i64, 0i64);
    let mut r = Reader::new(buf);
    while let Some((tag, w)) = r.next_field()? {
        match tag {
            1 => secs = want_varint(name, tag, w)? as i64,
            2 => nanos = i64::from(want_varint(name, tag, w)? as i64 as i32),
            _ => {}
        }
    }
    let ts = jiff::Timestamp::from_second(secs)
        .map_err(|e| format!("invalid {name} seconds {secs}: {e}"))?;
    let base = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    Ok(Some(Value::String(match shape {
        Shape::MicroTime => {
            if !(0..1_000_000_000).contains(&nanos) {
                return Err(format!("invalid {name} nanos {nanos}"));
            }
            format!("{base}.{:06}Z", nanos / 1000)
        }
        _ => format!("{base}Z"),
    })))
}

/// Go's `time.Duration.String()`.
pub(crate) fn go_duration(d: i64) -> String {
    if d == 0 {
        return "0s".into();
    }
    let neg = d < 0;
    let u = d.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        // Sub-second: ns, µs or ms with a fraction.
        let (unit, div) = if u < 1_000 {
            ("ns", 1)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        out.push_str(&frac(u, div));
        out.push_str(unit);
    } else {
        let secs = u / 1_000_000_000;
        let sub = u % 1_000_000_000;
        let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if h > 0 || m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&frac(s * 1_000_000_000 + sub, 1_000_000_000));
        out.push('s');
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// `v / div` with the fractional digits Go prints (trailing zeros trimmed).
fn frac(v: u64, div: u64) -> String {
    let int = v / div;
    let rem = v % div;
    if rem == 0 {
        return int.to_string();
    }
    let width = div.to_string().len() - 1;
    let digits = format!("{rem:0width$}");
    format!("{int}.{}", digits.trim_end_matches('0'))
}

fn schema_or(msg: &Message, buf: &[u8], depth: usize) -> Result<Option<Value>, String> {
    let name = msg.name;
    let mut schema_v: Option<Value> = None;
    let mut list: Vec<Value> = Vec::new();
    let mut allows = false;
    let mut r = Reader::new(buf);
    while let Some((tag, w)) = r.next_field()? {
        match (msg.shape, tag) {
            (Shape::SchemaOrArray, 1)
            | (Shape::SchemaOrStringArray, 1)
            | (Shape::SchemaOrBool, 2) => {
                schema_v = message_value(JSON_SCHEMA_PROPS, want_bytes(name, tag, w)?, depth + 1)?;
            }
            (Shape::SchemaOrArray, 2) => {
                if let Some(v) =
                    message_value(JSON_SCHEMA_PROPS, want_bytes(name, tag, w)?, depth + 1)?
                {
                    list.push(v);
                }
            }
            (Shape::SchemaOrStringArray, 2) => {
                list.push(Value::String(string(want_bytes(name, tag, w)?)));
            }
            (Shape::SchemaOrBool, 1) => allows = want_varint(name, tag, w)? != 0,
            _ => {}
        }
    }
    Ok(Some(match msg.shape {
        Shape::SchemaOrBool => schema_v.unwrap_or(Value::Bool(allows)),
        _ if !list.is_empty() => Value::Array(list),
        _ => schema_v.unwrap_or(Value::Null),
    }))
}

/// Decodes an `Object`-shaped message into a JSON object, fields in Go struct order.
pub(crate) fn object(
    msg: &Message,
    buf: &[u8],
    depth: usize,
) -> Result<Map<String, Value>, String> {
    let what = msg.name;
    let mut slots: Vec<Option<Value>> = vec![None; msg.fields.len()];
    let mut r = Reader::new(buf);
    while let Some((tag, w)) = r.next_field()? {
        let Some(i) = msg.fields.iter().position(|f| f.tag == tag) else {
            continue; // unknown field: skipped, as proto decoders do
        };
        let field = &msg.fields[i];
        match field.card {
            Card::One | Card::Zero => {
                slots[i] = element(field.ty, what, tag, w, depth)?;
            }
            Card::Rep => {
                let arr = slots[i].get_or_insert_with(|| Value::Array(Vec::new()));
                let Value::Array(arr) = arr else {
                    return Err(format!("field {tag} of {what} decoded twice"));
                };
                match (field.ty, w) {
                    (Ty::Bool | Ty::I32 | Ty::I64 | Ty::F64, Wire::Bytes(packed)) => {
                        packed_scalars(field.ty, what, tag, packed, arr)?
                    }
                    (ty, w) => {
                        if let Some(v) = element(ty, what, tag, w, depth)? {
                            arr.push(v);
                        }
                    }
                }
            }
            Card::Map => {
                let (k, v) = map_entry(field.ty, what, tag, want_bytes(what, tag, w)?, depth)?;
                let obj = slots[i].get_or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(obj) = obj {
                    obj.insert(k, v);
                }
            }
        }
    }
    let mut out = Map::new();
    for (field, slot) in msg.fields.iter().zip(slots) {
        let Some(v) = slot else { continue };
        match field.ty {
            Ty::Inline(_) => {
                if let Value::Object(inner) = v {
                    out.extend(inner);
                }
            }
            _ => {
                if field.card == Card::Zero && is_zero(&v) {
                    continue;
                }
                out.insert(field.json.to_string(), v);
            }
        }
    }
    Ok(out)
}

fn packed_scalars(
    ty: Ty,
    what: &str,
    tag: u32,
    buf: &[u8],
    out: &mut Vec<Value>,
) -> Result<(), String> {
    let mut r = Reader::new(buf);
    while r.pos < buf.len() {
        let w = if ty == Ty::F64 {
            Wire::Fixed64(u64::from_le_bytes(
                r.take(8)?.try_into().map_err(|_| "short fixed64")?,
            ))
        } else {
            Wire::Varint(r.varint()?)
        };
        out.push(scalar(ty, what, tag, w)?);
    }
    Ok(())
}

/// One `map<string, ty>` entry {key(1), value(2)}.
fn map_entry(
    ty: Ty,
    what: &str,
    tag: u32,
    buf: &[u8],
    depth: usize,
) -> Result<(String, Value), String> {
    let mut key = String::new();
    let mut val: Option<Value> = None;
    let mut r = Reader::new(buf);
    while let Some((t, w)) = r.next_field()? {
        match t {
            1 => key = string(want_bytes(what, tag, w)?),
            2 => val = Some(element(ty, what, tag, w, depth)?.unwrap_or(Value::Null)),
            _ => {}
        }
    }
    let val = match (val, ty) {
        (Some(v), _) => v,
        (None, Ty::Msg(name)) => message_value(name, &[], depth + 1)?.unwrap_or(Value::Null),
        (None, ty) => zero(ty),
    };
    Ok((key, val))
}

#[cfg(test)]
mod tests {
    use super::super::schema;
    use super::*;

    #[test]
    fn go_durations() {
        for (ns, want) in [
            (0i64, "0s"),
            (1, "1ns"),
            (1_100, "1.1µs"),
            (2_200_000, "2.2ms"),
            (1_500_000_000, "1.5s"),
            (3_723_000_000_000, "1h2m3s"),
            (60_000_000_000, "1m0s"),
            (3_600_000_000_000, "1h0m0s"),
            (-90_000_000_000, "-1m30s"),
            (100_000_000, "100ms"),
        ] {
            assert_eq!(go_duration(ns), want, "{ns}");
        }
    }

    #[test]
    fn truncated_and_bad_wire_never_panic() {
        for buf in [
            &[0x80u8][..],
            &[0x0a, 0x05, b'a'],
            &[0x0b],
            &[0x09, 1, 2],
            &[
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            &[0x00, 0x01],
        ] {
            let mut r = Reader::new(buf);
            let mut res = Ok(None);
            for _ in 0..4 {
                res = r.next_field();
                if !matches!(res, Ok(Some(_))) {
                    break;
                }
            }
            assert!(res.is_err(), "{buf:?}");
        }
    }

    #[test]
    fn table_is_sorted_and_consistent() {
        let msgs = schema::messages();
        for w in msgs.windows(2) {
            assert!(w[0].name < w[1].name, "{} !< {}", w[0].name, w[1].name);
        }
        for m in msgs {
            for f in m.fields {
                if let Ty::Msg(n) | Ty::Inline(n) = f.ty {
                    assert!(schema::message(n).is_some(), "{}.{} -> {n}", m.name, f.json);
                }
            }
        }
    }

    #[test]
    fn doubles_print_like_go() {
        assert_eq!(double(10.0).unwrap().to_string(), "10");
        assert_eq!(double(1.5).unwrap().to_string(), "1.5");
        assert!(double(f64::NAN).is_err());
    }
}
