//! A custom resource version's `openAPIV3Schema`, compiled once (when the definition's entries
//! are built) into the shape the object checks walk: what kube-openapi's `spec.Schema` holds
//! after apiextensions' `ConvertJSONSchemaPropsWithPostProcess` (formats kube does not support
//! stripped, `x-kubernetes-int-or-string` as the types `integer,string`, patterns compiled),
//! plus the structural parts pruning and defaulting follow (properties, items,
//! additionalProperties, `x-kubernetes-preserve-unknown-fields`, `x-kubernetes-embedded-resource`,
//! `default`, `nullable`, list types).
//!
//! Compiling never fails: a keyword of the wrong JSON type is ignored (the definition was
//! validated when it was written), an invalid pattern is kept with its error (kube reports it
//! when a value is checked). Properties are kept sorted by name.

use std::collections::BTreeMap;

use serde_json::Value;

use super::formats::Format;

/// Recursion guard for hostile schemas (serde_json already bounds nesting).
const MAX_DEPTH: usize = 200;

/// `additionalProperties`: a schema, or a bare boolean.
#[derive(Debug)]
pub enum Additional {
    Bool(bool),
    Schema(Box<Node>),
}

/// A compiled `pattern`: the source, and the regex or why it did not compile.
#[derive(Debug)]
pub struct Pattern {
    pub source: String,
    pub regex: Result<regex::Regex, String>,
}

/// One schema node.
#[derive(Debug, Default)]
pub struct Node {
    /// `type` as kube-openapi's StringOrArray: empty, one type, or `integer,string`.
    pub types: Vec<&'static str>,
    pub nullable: bool,
    /// The format after kube's stripping of unsupported formats (`""` when stripped).
    pub format: String,
    /// The checker of `format`, when it is one kube validates.
    pub format_check: Option<Format>,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    pub pattern: Option<Pattern>,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub multiple_of: Option<f64>,
    pub enumeration: Vec<Value>,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<String>,
    pub items: Option<Box<Node>>,
    pub all_of: Vec<Node>,
    pub one_of: Vec<Node>,
    pub any_of: Vec<Node>,
    pub not: Option<Box<Node>>,
    pub properties: BTreeMap<String, Node>,
    pub additional: Option<Additional>,
    pub preserve_unknown: bool,
    pub embedded: bool,
    /// `default`, `None` for absent or null.
    pub default: Option<Value>,
    pub list_type: String,
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type` (`atomic` or `granular`; empty when absent).
    pub map_type: String,
    /// `x-kubernetes-validations`, compiled against [`Node::rules_type`].
    pub rules: Vec<super::rule::Rule>,
    /// The CEL type of values here, when the node has rules.
    pub rules_type: Option<crate::cel::Type>,
}

const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

fn int(v: &Value, k: &str) -> Option<i64> {
    let n = v.get(k)?;
    n.as_i64()
        .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
}

fn flag(v: &Value, k: &str) -> bool {
    v.get(k) == Some(&Value::Bool(true))
}

fn list(v: &Value, k: &str, depth: usize) -> Vec<Node> {
    v.get(k)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| compile_at(s, depth + 1, false))
        .collect()
}

/// Compiles a schema (an `openAPIV3Schema` or any node of it).
pub fn compile(schema: &Value) -> Node {
    compile_at(schema, 0, true)
}

/// `rules`: whether `x-kubernetes-validations` here are compiled (not under allOf, anyOf,
/// oneOf or not).
fn compile_at(v: &Value, depth: usize, rules: bool) -> Node {
    let mut n = Node::default();
    if depth > MAX_DEPTH || !v.is_object() {
        return n;
    }
    if rules {
        let root = depth == 0 || flag(v, "x-kubernetes-embedded-resource");
        (n.rules, n.rules_type) = super::rule::compile(v, root);
    }
    if let Some(t) = v.get("type").and_then(Value::as_str) {
        if let Some(t) = TYPES.iter().find(|x| **x == t) {
            n.types = vec![t];
        }
    }
    if flag(v, "x-kubernetes-int-or-string") {
        n.types = vec!["integer", "string"];
    }
    n.nullable = flag(v, "nullable");
    if let Some(f) = v.get("format").and_then(Value::as_str) {
        if let Some(check) = Format::supported(f) {
            n.format = f.to_string();
            n.format_check = Some(check);
        }
    }
    n.maximum = v.get("maximum").and_then(Value::as_f64);
    n.exclusive_maximum = flag(v, "exclusiveMaximum");
    n.minimum = v.get("minimum").and_then(Value::as_f64);
    n.exclusive_minimum = flag(v, "exclusiveMinimum");
    n.max_length = int(v, "maxLength");
    n.min_length = int(v, "minLength");
    if let Some(p) = v.get("pattern").and_then(Value::as_str) {
        if !p.is_empty() {
            n.pattern = Some(Pattern {
                source: p.to_string(),
                regex: regex::Regex::new(p).map_err(|e| e.to_string()),
            });
        }
    }
    n.max_items = int(v, "maxItems");
    n.min_items = int(v, "minItems");
    n.unique_items = flag(v, "uniqueItems");
    n.multiple_of = v.get("multipleOf").and_then(Value::as_f64);
    n.enumeration = v
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    n.max_properties = int(v, "maxProperties");
    n.min_properties = int(v, "minProperties");
    n.required = v
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    n.items = v
        .get("items")
        .filter(|i| i.is_object())
        .map(|i| Box::new(compile_at(i, depth + 1, rules)));
    n.all_of = list(v, "allOf", depth);
    n.one_of = list(v, "oneOf", depth);
    n.any_of = list(v, "anyOf", depth);
    n.not = v
        .get("not")
        .filter(|i| i.is_object())
        .map(|i| Box::new(compile_at(i, depth + 1, false)));
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            n.properties
                .insert(k.clone(), compile_at(p, depth + 1, rules));
        }
    }
    n.additional = match v.get("additionalProperties") {
        Some(Value::Bool(b)) => Some(Additional::Bool(*b)),
        Some(s @ Value::Object(_)) => Some(Additional::Schema(Box::new(compile_at(
            s,
            depth + 1,
            rules,
        )))),
        _ => None,
    };
    n.preserve_unknown = flag(v, "x-kubernetes-preserve-unknown-fields");
    n.embedded = flag(v, "x-kubernetes-embedded-resource");
    n.default = v.get("default").filter(|d| !d.is_null()).cloned();
    n.list_type = v
        .get("x-kubernetes-list-type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    n.list_map_keys = v
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    n.map_type = v
        .get("x-kubernetes-map-type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    n
}

impl Node {
    /// The structural schema of a key of an object: its property, else the
    /// `additionalProperties` schema; `Some(None)` for `additionalProperties` given as a
    /// boolean (kube's structural schema without a schema there), `None` for an unknown key.
    pub fn child(&self, k: &str) -> Option<Option<&Node>> {
        if let Some(p) = self.properties.get(k) {
            return Some(Some(p));
        }
        match &self.additional {
            Some(Additional::Schema(s)) => Some(Some(s)),
            Some(Additional::Bool(_)) => Some(None),
            None => None,
        }
    }

    /// Whether this node or one below it has `x-kubernetes-validations` (kube builds no CEL
    /// validator otherwise).
    pub fn has_rules(&self) -> bool {
        !self.rules.is_empty()
            || self.properties.values().any(Node::has_rules)
            || self.items.as_deref().is_some_and(Node::has_rules)
            || self.additional_schema().is_some_and(Node::has_rules)
    }

    /// The `additionalProperties` schema, if it is one.
    pub fn additional_schema(&self) -> Option<&Node> {
        match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        }
    }
}

/// The field path of `name` under `path` (`""` is the object itself).
pub fn child_path(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}
