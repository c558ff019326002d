//! CEL types as the checker sees them, and the type kube derives from a structural schema
//! (`common.SchemaDeclType`): objects with their (escaped) fields, maps, lists, the string
//! formats that become timestamps, durations and bytes, `x-kubernetes-int-or-string` as `dyn`,
//! and the implicit `apiVersion` / `kind` / `metadata.{name,generateName}` of a resource root.
//!
//! Every sized type carries the largest size a value of it can have in a request (kube's
//! `MaxElements`), which the cost estimator multiplies with; sizes never take part in type
//! equality.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// kube's `MaxRequestSizeBytes`, the bound of every unbounded size estimate.
pub const MAX_REQUEST_SIZE: u64 = 3 * 1024 * 1024;

/// A CEL type.
#[derive(Clone, Debug)]
pub enum Type {
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String {
        max: u64,
    },
    Bytes {
        max: u64,
    },
    Timestamp,
    Duration,
    List {
        elem: Box<Type>,
        max: u64,
    },
    Map {
        key: Box<Type>,
        value: Box<Type>,
        max: u64,
    },
    Object(Arc<Object>),
    Optional(Box<Type>),
    /// A type value (`int`, `type(x)`).
    TypeValue,
    /// A library type: `kubernetes.Quantity`, `net.IP`, ...
    Opaque(&'static str),
}

/// An object type: its name (for messages) and fields by escaped name.
#[derive(Debug, Default)]
pub struct Object {
    pub name: String,
    pub fields: BTreeMap<String, Type>,
    /// The smallest JSON encoding of a value (kube's `MinSerializedSize`).
    pub min_size: u64,
    /// How many properties a value has, when known (an object typed from a value, for the
    /// cost of an expression over it); `None`: as many as a request can hold.
    pub max: Option<u64>,
}

impl Type {
    pub fn string() -> Type {
        Type::String {
            max: MAX_REQUEST_SIZE,
        }
    }

    pub fn list(elem: Type) -> Type {
        Type::List {
            elem: Box::new(elem),
            max: MAX_REQUEST_SIZE,
        }
    }

    pub fn map(key: Type, value: Type) -> Type {
        Type::Map {
            key: Box::new(key),
            value: Box::new(value),
            max: MAX_REQUEST_SIZE,
        }
    }

    pub fn is_dyn(&self) -> bool {
        matches!(self, Type::Dyn)
    }

    /// Whether a value of `self` may be used where `other` is expected (dyn matches
    /// anything; sizes are ignored).
    pub fn assignable(&self, other: &Type) -> bool {
        use Type::*;
        match (self, other) {
            (Dyn, _) | (_, Dyn) => true,
            (Null, Null) | (Bool, Bool) | (Int, Int) | (Uint, Uint) | (Double, Double) => true,
            (String { .. }, String { .. }) | (Bytes { .. }, Bytes { .. }) => true,
            (Timestamp, Timestamp) | (Duration, Duration) | (TypeValue, TypeValue) => true,
            (List { elem: a, .. }, List { elem: b, .. }) => a.assignable(b),
            (
                Map {
                    key: k, value: v, ..
                },
                Map {
                    key: k2, value: v2, ..
                },
            ) => k.assignable(k2) && v.assignable(v2),
            (Object(a), Object(b)) => Arc::ptr_eq(a, b) || a.name == b.name,
            (Optional(a), Optional(b)) => a.assignable(b),
            (Opaque(a), Opaque(b)) => a == b,
            // null is assignable to objects, as in CEL's checker
            (Null, Object(_)) | (Object(_), Null) => true,
            _ => false,
        }
    }

    /// The largest size of a value of this type (elements, bytes or characters), if sized.
    pub fn max_size(&self) -> Option<u64> {
        match self {
            Type::String { max } | Type::Bytes { max } => Some(*max),
            Type::List { max, .. } | Type::Map { max, .. } => Some(*max),
            Type::Object(o) => o.max,
            _ => None,
        }
    }

    /// kube's `MinSerializedSize` of a value of this type.
    pub fn min_size(&self) -> u64 {
        match self {
            Type::Dyn => 1,
            Type::Bool => 4,
            Type::Int | Type::Uint | Type::Double => 1,
            Type::String { .. } | Type::Bytes { .. } => 2,
            Type::Timestamp => 21,
            Type::Duration => 3,
            Type::List { .. } | Type::Map { .. } => 2,
            Type::Object(o) => o.min_size,
            _ => 1,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => write!(f, "dyn"),
            Type::Null => write!(f, "null_type"),
            Type::Bool => write!(f, "bool"),
            Type::Int => write!(f, "int"),
            Type::Uint => write!(f, "uint"),
            Type::Double => write!(f, "double"),
            Type::String { .. } => write!(f, "string"),
            Type::Bytes { .. } => write!(f, "bytes"),
            Type::Timestamp => write!(f, "google.protobuf.Timestamp"),
            Type::Duration => write!(f, "google.protobuf.Duration"),
            Type::List { elem, .. } => write!(f, "list({elem})"),
            Type::Map { key, value, .. } => write!(f, "map({key}, {value})"),
            Type::Object(o) => write!(f, "{}", o.name),
            Type::Optional(t) => write!(f, "optional_type({t})"),
            Type::TypeValue => write!(f, "type"),
            Type::Opaque(n) => write!(f, "{n}"),
        }
    }
}

/// CEL's reserved words (kube's `celReservedSymbols`).
pub const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// kube's `cel.Escape`: the CEL name of a JSON property, or `None` when it has none (such
/// properties cannot be reached from CEL).
pub fn escape(name: &str) -> Option<String> {
    let first = name.bytes().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

fn flag(v: &Value, k: &str) -> bool {
    v.get(k) == Some(&Value::Bool(true))
}

fn int(v: &Value, k: &str) -> Option<u64> {
    v.get(k)
        .and_then(|n| n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)))
        .map(|n| n.max(0) as u64)
}

fn string_max(schema: &Value) -> u64 {
    if flag(schema, "x-kubernetes-int-or-string") {
        return MAX_REQUEST_SIZE - 2;
    }
    match schema.get("format").and_then(Value::as_str) {
        Some("duration") | Some("date-time") => 32,
        Some("date") => 12,
        _ => MAX_REQUEST_SIZE - 2,
    }
}

/// The CEL type of a structural schema, `None` for a schema CEL cannot see (no type, or an
/// array without items). `root` is true at a resource root and for embedded resources.
pub fn of_schema(schema: &Value, root: bool) -> Option<Type> {
    of_schema_named(schema, root, "object")
}

fn of_schema_named(schema: &Value, root: bool, name: &str) -> Option<Type> {
    if flag(schema, "x-kubernetes-int-or-string") {
        return Some(Type::Dyn);
    }
    let embedded = |s: &Value| flag(s, "x-kubernetes-embedded-resource");
    match schema.get("type").and_then(Value::as_str).unwrap_or("") {
        "array" => {
            let items = schema.get("items").filter(|i| i.is_object())?;
            let elem = of_schema_named(items, embedded(items), &format!("{name}.@idx"))?;
            let max = int(schema, "maxItems")
                .unwrap_or_else(|| (MAX_REQUEST_SIZE - 2) / (elem.min_size() + 1));
            Some(Type::List {
                elem: Box::new(elem),
                max,
            })
        }
        "object" => {
            if let Some(ap) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                let value = of_schema_named(ap, embedded(ap), &format!("{name}.@elem"))?;
                let max = int(schema, "maxProperties")
                    .unwrap_or_else(|| (MAX_REQUEST_SIZE - 2) / (value.min_size() + 6));
                return Some(Type::Map {
                    key: Box::new(Type::string()),
                    value: Box::new(value),
                    max,
                });
            }
            let mut fields = BTreeMap::new();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut min_size = 2;
            let props = schema.get("properties").and_then(Value::as_object);
            for (k, p) in props.into_iter().flatten() {
                let Some(ty) = of_schema_named(p, embedded(p), &format!("{name}.{k}")) else {
                    continue;
                };
                if required.contains(&k.as_str()) && p.get("default").is_none() {
                    min_size += k.len() as u64 + ty.min_size() + 4;
                }
                if let Some(e) = escape(k) {
                    fields.insert(e, ty);
                }
            }
            if root {
                let meta = |n: &str| {
                    fields
                        .get(n)
                        .is_some_and(|t| matches!(t, Type::String { .. }))
                };
                let has_meta = meta("kind")
                    && meta("apiVersion")
                    && matches!(fields.get("metadata"), Some(Type::Object(m))
                        if ["name", "generateName"].iter().all(|f| matches!(m.fields.get(*f), Some(Type::String { .. }))));
                if !has_meta {
                    fields.insert("kind".into(), Type::string());
                    fields.insert("apiVersion".into(), Type::string());
                    let mut m = BTreeMap::new();
                    m.insert("name".into(), Type::string());
                    m.insert("generateName".into(), Type::string());
                    fields.insert(
                        "metadata".into(),
                        Type::Object(Arc::new(Object {
                            name: format!("{name}.metadata"),
                            fields: m,
                            min_size: 2,
                            max: None,
                        })),
                    );
                }
            }
            Some(Type::Object(Arc::new(Object {
                name: name.to_string(),
                fields,
                min_size,
                max: None,
            })))
        }
        "string" => Some(match schema.get("format").and_then(Value::as_str) {
            Some("byte") => Type::Bytes {
                max: int(schema, "maxLength").unwrap_or(MAX_REQUEST_SIZE - 2),
            },
            Some("duration") => Type::Duration,
            Some("date") | Some("date-time") => Type::Timestamp,
            _ => {
                let max = if let Some(l) = int(schema, "maxLength") {
                    l.saturating_mul(4)
                } else if let Some(e) = schema.get("enum").and_then(Value::as_array) {
                    e.iter()
                        .filter_map(Value::as_str)
                        .map(|s| s.len() as u64)
                        .max()
                        .unwrap_or(0)
                } else {
                    string_max(schema)
                };
                Type::String { max }
            }
        }),
        "boolean" => Some(Type::Bool),
        "number" => Some(Type::Double),
        "integer" => Some(Type::Int),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escaping_follows_kube() {
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("my_field").as_deref(), Some("my_field"));
        assert_eq!(escape("1a"), None);
        assert_eq!(escape("a b"), None);
    }

    #[test]
    fn schema_types() {
        let t = of_schema(
            &json!({"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "n": {"type": "integer"},
                    "tags": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 5}},
                    "at": {"type": "string", "format": "date-time"},
                    "free": {"x-kubernetes-preserve-unknown-fields": true}}}}}),
            true,
        )
        .unwrap();
        let Type::Object(o) = &t else { panic!() };
        assert!(o.fields.contains_key("apiVersion") && o.fields.contains_key("metadata"));
        let Type::Object(spec) = &o.fields["spec"] else {
            panic!()
        };
        assert!(matches!(spec.fields["n"], Type::Int));
        assert!(matches!(spec.fields["at"], Type::Timestamp));
        assert!(!spec.fields.contains_key("free"));
        let Type::List { elem, max } = &spec.fields["tags"] else {
            panic!()
        };
        assert_eq!(*max, 3);
        assert_eq!(elem.max_size(), Some(20));
    }
}
