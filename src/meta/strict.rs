//! Strict decoding of request bodies: JSON and YAML read with their duplicate keys kept.
//!
//! Owns: a JSON tree that keeps every entry of an object in document order ([`Node`], read by
//! [`parse_json`]), the duplicate fields of such a tree as sigs.k8s.io/json's strict decoder
//! reports them when it decodes into untyped maps (`duplicate field "spec.paused"`: every
//! object, document order, `[i]` for list items, de-duplicated, at most 100), the tree as a
//! `serde_json::Value` with the last duplicate winning as Go's decoders keep it, the duplicate
//! keys of a YAML document as go-yaml v2's strict decoder words them (`line 12: key "paused"
//! already set in map`, the line of the duplicate's value, after the errors inside that value),
//! and Go's `%+v` rendering of a decoded map (kube quotes a strategic merge patch that way).
//!
//! Does not know: schemas (which keys are unknown to a type, which subtrees are opaque: that
//! walk is `openapi::unknown`'s), the `fieldValidation` directive, HTTP statuses.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::field_error::go_quote;

/// Upstream stops collecting strict errors after this many.
pub const MAX_ERRORS: usize = 100;

/// A JSON value whose objects keep every entry, duplicates included, in document order.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Node, E> {
                Ok(Node::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Node, E> {
                Ok(Node::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Node, E> {
                Ok(Node::Number(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Node, E> {
                Ok(serde_json::Number::from_f64(n).map_or(Node::Null, Node::Number))
            }
            fn visit_str<E>(self, s: &str) -> Result<Node, E> {
                Ok(Node::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Node, E> {
                Ok(Node::String(s))
            }
            fn visit_unit<E>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_none<E>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(x) = a.next_element()? {
                    items.push(x);
                }
                Ok(Node::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Node>()? {
                    entries.push((k, v));
                }
                Ok(Node::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses a JSON document keeping duplicate keys.
pub fn parse_json(body: &[u8]) -> Result<Node, serde_json::Error> {
    serde_json::from_slice(body)
}

/// Strict errors collected in order: de-duplicated, at most [`MAX_ERRORS`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Errors(pub Vec<String>);

impl Errors {
    pub fn push(&mut self, msg: String) {
        if self.0.len() < MAX_ERRORS && !self.0.contains(&msg) {
            self.0.push(msg);
        }
    }

    pub fn full(&self) -> bool {
        self.0.len() >= MAX_ERRORS
    }
}

/// Appends `.key` (or `key` at the root) to a field path.
pub fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// Appends `[i]` to a field path.
pub fn push_index(path: &mut String, i: usize) {
    path.push_str(&format!("[{i}]"));
}

/// `duplicate field "path"`.
pub fn duplicate(path: &str) -> String {
    format!("duplicate field {}", go_quote(path))
}

impl Node {
    /// The duplicate fields of every object in the tree (untyped decoding: maps of
    /// `interface{}`), in document order, under `path`.
    pub fn duplicates(&self, path: &mut String, out: &mut Errors) {
        if out.full() {
            return;
        }
        match self {
            Node::Object(entries) => {
                let mut seen = std::collections::HashSet::new();
                for (k, v) in entries {
                    let len = path.len();
                    push_key(path, k);
                    if !seen.insert(k.as_str()) {
                        out.push(duplicate(path));
                    }
                    v.duplicates(path, out);
                    path.truncate(len);
                }
            }
            Node::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    let len = path.len();
                    push_index(path, i);
                    v.duplicates(path, out);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// The value Go's decoder keeps: the last of duplicate keys wins (at the first one's
    /// place). With `merge_objects` (decoding into typed structs) a duplicate object is decoded
    /// into the one before it, so their fields merge; untyped maps replace it.
    pub fn into_value(self, merge_objects: bool) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Number(n) => Value::Number(n),
            Node::String(s) => Value::String(s),
            Node::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(|x| x.into_value(merge_objects))
                    .collect(),
            ),
            Node::Object(entries) => {
                let mut m = Map::new();
                for (k, v) in entries {
                    let v = v.into_value(merge_objects);
                    match m.get_mut(&k) {
                        Some(old) if merge_objects && old.is_object() && v.is_object() => {
                            merge_into(old, v)
                        }
                        Some(old) => *old = v,
                        None => {
                            m.insert(k, v);
                        }
                    }
                }
                Value::Object(m)
            }
        }
    }
}

fn merge_into(old: &mut Value, new: Value) {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (k, v) in n {
                match o.get_mut(&k) {
                    Some(x) if x.is_object() && v.is_object() => merge_into(x, v),
                    Some(x) => *x = v,
                    None => {
                        o.insert(k, v);
                    }
                }
            }
        }
        (old, new) => *old = new,
    }
}

/// go-yaml's `yaml.TypeError` text for a list of errors.
pub fn yaml_error(errors: &[String]) -> String {
    format!("yaml: unmarshal errors:\n  {}", errors.join("\n  "))
}

/// A mapping key as go-yaml v2 resolves it (YAML 1.1 plain scalars), for comparing keys and
/// printing them with Go's `%#v`.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Null,
    Bool(bool),
    Int(i128),
    Float(String),
    Str(String),
    /// A collection or alias used as a key: never reported.
    Other(usize),
}

impl Key {
    fn of(text: &str, plain: bool) -> Key {
        if !plain {
            return Key::Str(text.to_string());
        }
        match text {
            "" | "~" | "null" | "Null" | "NULL" => return Key::Null,
            "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
                return Key::Bool(true)
            }
            "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off"
            | "OFF" => return Key::Bool(false),
            _ => {}
        }
        let digits = text.replace('_', "");
        let unsigned = digits.strip_prefix(['+', '-']).unwrap_or(&digits);
        if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = digits.parse::<i128>() {
                return Key::Int(n);
            }
        }
        if unsigned.contains('.')
            && unsigned.bytes().all(|b| {
                b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'+' || b == b'-'
            })
        {
            if let Ok(f) = digits.parse::<f64>() {
                return Key::Float(go_float(f));
            }
        }
        Key::Str(text.to_string())
    }

    /// Go's `%#v` of the decoded key.
    fn go_syntax(&self) -> String {
        match self {
            Key::Null => "<nil>".into(),
            Key::Bool(b) => b.to_string(),
            Key::Int(n) => n.to_string(),
            Key::Float(f) => f.clone(),
            Key::Str(s) => go_quote(s),
            Key::Other(_) => String::new(),
        }
    }
}

/// The duplicate keys of the first document of a YAML stream, as go-yaml v2's strict decoder
/// reports them (`line N: key "k" already set in map`), in its order. Empty when the text does
/// not parse (the non-strict decoder reports that).
pub fn yaml_duplicates(text: &str) -> Vec<String> {
    use yaml_rust2::parser::{Event, Parser};
    use yaml_rust2::scanner::TScalarStyle;

    /// One open collection: a mapping remembers its keys and the key whose value is being read
    /// (with the line its value starts on).
    enum Frame {
        Seq,
        Map {
            seen: std::collections::HashSet<Key>,
            key: Option<Key>,
            value_line: usize,
        },
    }
    let mut out = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    let mut others = 0usize;
    // A value (scalar or collection) starting at `line` begins in the innermost frame.
    fn begin(stack: &mut [Frame], line: usize) -> bool {
        match stack.last_mut() {
            Some(Frame::Map {
                key, value_line, ..
            }) if key.is_some() => {
                *value_line = line;
                false
            }
            Some(Frame::Map { .. }) => true, // this node is a key
            _ => false,
        }
    }
    // A value ended in the innermost frame: a mapping checks its key.
    fn end(stack: &mut [Frame], out: &mut Vec<String>) {
        if let Some(Frame::Map {
            seen,
            key,
            value_line,
        }) = stack.last_mut()
        {
            if let Some(k) = key.take() {
                if matches!(k, Key::Other(_)) || k == Key::Str("<<".into()) {
                    return;
                }
                if !seen.insert(k.clone()) && out.len() < MAX_ERRORS {
                    out.push(format!(
                        "line {value_line}: key {} already set in map",
                        k.go_syntax()
                    ));
                }
            }
        }
    }
    loop {
        let Ok((event, mark)) = parser.next_token() else {
            return Vec::new();
        };
        let line = mark.line();
        match event {
            Event::StreamEnd | Event::DocumentEnd => break,
            Event::Scalar(text, style, ..) => {
                if begin(&mut stack, line) {
                    if let Some(Frame::Map { key, .. }) = stack.last_mut() {
                        *key = Some(Key::of(&text, style == TScalarStyle::Plain));
                    }
                } else {
                    end(&mut stack, &mut out);
                }
            }
            Event::Alias(_) => {
                if begin(&mut stack, line) {
                    others += 1;
                    if let Some(Frame::Map { key, .. }) = stack.last_mut() {
                        *key = Some(Key::Other(others));
                    }
                } else {
                    end(&mut stack, &mut out);
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if begin(&mut stack, line) {
                    // A collection as a key: skip it whole, never compared.
                    others += 1;
                    let mut depth = 1usize;
                    while depth > 0 {
                        match parser.next_token() {
                            Ok((Event::MappingStart(..) | Event::SequenceStart(..), _)) => {
                                depth += 1
                            }
                            Ok((Event::MappingEnd | Event::SequenceEnd, _)) => depth -= 1,
                            Ok((Event::StreamEnd, _)) | Err(_) => return Vec::new(),
                            Ok(_) => {}
                        }
                    }
                    if let Some(Frame::Map { key, .. }) = stack.last_mut() {
                        *key = Some(Key::Other(others));
                    }
                    continue;
                }
                stack.push(if matches!(event, Event::MappingStart(..)) {
                    Frame::Map {
                        seen: Default::default(),
                        key: None,
                        value_line: 0,
                    }
                } else {
                    Frame::Seq
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                end(&mut stack, &mut out);
            }
            _ => {}
        }
    }
    out
}

/// Go's `%v` of a float64 (shortest digits; exponent form below 1e-4 and from 1e21).
pub fn go_float(f: f64) -> String {
    if f == 0.0 || (f.abs() >= 1e-4 && f.abs() < 1e21) {
        return format!("{f}");
    }
    let s = format!("{f:e}"); // 1e21, 1.5e-7
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let (sign, digits) = match exp.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exp),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// Go's `fmt.Sprintf("%+v", m)` of a decoded JSON value (`map[a:1 b:[x y]]`, keys sorted).
pub fn go_print(v: &Value) -> String {
    let mut out = String::new();
    print_into(v, &mut out);
    out
}

fn print_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.push_str(&i.to_string()),
            None => out.push_str(&go_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print_into(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push_str("map[");
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                print_into(&m[k.as_str()], out);
            }
            out.push(']');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dups(body: &str) -> Vec<String> {
        let mut e = Errors::default();
        parse_json(body.as_bytes())
            .unwrap()
            .duplicates(&mut String::new(), &mut e);
        e.0
    }

    #[test]
    fn json_duplicates_with_paths_in_document_order() {
        let body = r#"{"metadata": {"name": "a", "name": "b"},
            "spec": {"x": 1, "ports": [{"p": 1, "p": 2, "q": {"r": 1, "r": 2}}], "x": 2, "x": 3}}"#;
        assert_eq!(
            dups(body),
            vec![
                r#"duplicate field "metadata.name""#,
                r#"duplicate field "spec.ports[0].p""#,
                r#"duplicate field "spec.ports[0].q.r""#,
                r#"duplicate field "spec.x""#,
            ]
        );
        // A JSON patch: the root is a list.
        assert_eq!(
            dups(r#"[{"op": "add"}, {"path": "/a", "path": "/b"}]"#),
            vec![r#"duplicate field "[1].path""#]
        );
        assert!(dups(r#"{"a": [1, 1], "b": {"a": 1}}"#).is_empty());
    }

    #[test]
    fn last_duplicate_wins_and_typed_objects_merge() {
        let n = parse_json(br#"{"a": 1, "b": {"x": 1}, "a": 2, "b": {"y": 2}}"#).unwrap();
        assert_eq!(n.clone().into_value(false), json!({"a": 2, "b": {"y": 2}}));
        assert_eq!(n.into_value(true), json!({"a": 2, "b": {"x": 1, "y": 2}}));
        // Order is the first occurrence's.
        let v = parse_json(br#"{"b": 1, "a": 1, "b": 2}"#)
            .unwrap()
            .into_value(false);
        assert_eq!(
            v.as_object().unwrap().keys().collect::<Vec<_>>(),
            vec!["b", "a"]
        );
    }

    #[test]
    fn errors_dedupe_and_cap() {
        let mut e = Errors::default();
        for i in 0..150 {
            e.push(format!("x{}", i % 120));
            e.push("x0".into());
        }
        assert_eq!(e.0.len(), MAX_ERRORS);
        assert_eq!(e.0.iter().filter(|m| *m == "x0").count(), 1);
    }

    #[test]
    fn yaml_duplicates_as_go_yaml() {
        // kube's field validation integration test body: the line of the duplicate's value.
        let body = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dupename\n  name: x\n  unknownMeta: metaVal\n  labels:\n    app: nginx\nspec:\n  unknown1: val1\n  unknownDupe: valDupe\n  unknownDupe: valDupe2\n  paused: true\n  paused: false\n  selector:\n    matchLabels:\n      app: nginx\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:latest\n        unknownNested: val1\n        imagePullPolicy: Always\n        imagePullPolicy: Never";
        assert_eq!(
            yaml_duplicates(body),
            vec![
                r#"line 5: key "name" already set in map"#,
                r#"line 12: key "unknownDupe" already set in map"#,
                r#"line 14: key "paused" already set in map"#,
                r#"line 28: key "imagePullPolicy" already set in map"#,
            ]
        );
        // JSON is YAML: kube's apply body.
        let json_body = "{\n\"a\": 1,\n\"spec\": {\n\"paused\": false,\n\"paused\": true\n}\n}";
        assert_eq!(
            yaml_duplicates(json_body),
            vec![r#"line 5: key "paused" already set in map"#]
        );
        // A block value starts on its first line; nested errors come first; keys resolve as
        // YAML 1.1 scalars (1 and "1" differ, yes and true do not).
        let nested = "a:\n  x: 1\n  x: 2\na:\n  y: 1\n1: a\n\"1\": b\nyes: 1\ntrue: 2\n";
        assert_eq!(
            yaml_duplicates(nested),
            vec![
                r#"line 3: key "x" already set in map"#,
                r#"line 5: key "a" already set in map"#,
                "line 9: key true already set in map",
            ]
        );
        assert!(yaml_duplicates("a: [1, 1]\nb: {c: 1, d: 1}\n").is_empty());
        assert!(yaml_duplicates("a: : :\n  - [").is_empty());
    }

    /// The non-strict YAML decoder (serde_yaml) keeps the last duplicate, as go-yaml does.
    #[test]
    fn yaml_values_keep_the_last_duplicate() {
        let v: Value = serde_yaml::from_str("a: 1\nb: {c: 1}\na: 2\n").unwrap();
        assert_eq!(v, json!({"a": 2, "b": {"c": 1}}));
    }

    #[test]
    fn go_printing() {
        assert_eq!(
            go_print(&json!({"spec": {"b": [1, "x", null], "a": true, "f": 1.5, "g": 1e21}})),
            "map[spec:map[a:true b:[1 x <nil>] f:1.5 g:1e+21]]"
        );
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(100000000.0), "100000000");
    }
}
