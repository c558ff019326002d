//! Field paths and field sets, as sigs.k8s.io/structured-merge-diff (SMD) `fieldpath` defines
//! them, and their `FieldsV1` encoding (the `fieldsV1` of a `managedFields` entry).
//!
//! A [`PathElement`] is one step into an object: a struct field or map key (`f:name`), an item
//! of an associative list by its key fields (`k:{"name":"nginx"}`), an item of a set-list by
//! its value (`v:"a"`), or an item by position (`i:0`). Elements have SMD's total order: fields
//! before keys before values before indexes; fields by name; keys by their (name, value) pairs
//! in name order; values by SMD's value order (numbers, compared numerically across ints and
//! floats, then strings, booleans, lists, maps, null).
//!
//! A [`Set`] is a tree: `members` are the paths that end here, `children` the sub-sets under an
//! element. Both are kept sorted and unique, and children are never empty, so the encoding is
//! canonical: [`Set::to_json`] emits exactly SMD's bytes (elements in order; a member that also
//! has children gets `"."` as the first key of its object, as SMD v4 writes it since 2020; strings escaped as Go's
//! encoding/json escapes them, `<`, `>`, `&` included), and [`Set::from_json`] accepts any key
//! order (e.g. kubectl's sorted output) and drops unknown element kinds as SMD does.
//!
//! Pure data: no schema, no I/O. Schema-driven logic (field sets of objects, merge) lives in
//! the sibling modules `typed` and `merge`.

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Number, Value};

/// One step of a field path.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A struct field or a map key: `f:<name>`.
    Field(String),
    /// An associative-list item by its key fields, sorted by name: `k:{...}`.
    Key(Vec<(String, Value)>),
    /// A set-list item by its value: `v:<json>`.
    Value(Value),
    /// A list item by position: `i:<n>` (lists that are neither atomic nor associative).
    Index(usize),
}

/// A path: the elements from the object's root.
pub type Path = Vec<PathElement>;

/// A `FieldsV1` document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

impl PathElement {
    /// A field element.
    pub fn field(name: &str) -> Self {
        PathElement::Field(name.to_string())
    }

    /// A key element; the fields are sorted by name (then value), as SMD's `FieldList.Sort`.
    pub fn key(mut fields: Vec<(String, Value)>) -> Self {
        fields.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| compare_values(&a.1, &b.1)));
        PathElement::Key(fields)
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The `FieldsV1` key of this element (`f:`, `k:`, `v:`, `i:`), as SMD serializes it.
    pub fn serialize(&self) -> String {
        let mut s = String::new();
        match self {
            PathElement::Field(n) => {
                s.push_str("f:");
                s.push_str(n);
            }
            PathElement::Key(fields) => {
                s.push_str("k:{");
                for (i, (n, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    go_json_string(&mut s, n);
                    s.push(':');
                    go_json_value(&mut s, v);
                }
                s.push('}');
            }
            PathElement::Value(v) => {
                s.push_str("v:");
                go_json_value(&mut s, v);
            }
            PathElement::Index(i) => {
                s.push_str("i:");
                s.push_str(&i.to_string());
            }
        }
        s
    }

    /// Parses a `FieldsV1` key. `Ok(None)` for an unknown element kind (`x:...`), which SMD
    /// skips.
    pub fn deserialize(s: &str) -> Result<Option<Self>, DecodeError> {
        let b = s.as_bytes();
        if b.len() < 2 {
            return Err(DecodeError("key must be 2 characters long:".to_string()));
        }
        if b[1] != b':' {
            return Err(DecodeError(format!("missing colon: {s}")));
        }
        let rest = &s[2..];
        let bad = |e: serde_json::Error| DecodeError(format!("parsing key as path element: {e}"));
        Ok(Some(match b[0] {
            b'f' => PathElement::Field(rest.to_string()),
            b'v' => PathElement::Value(serde_json::from_str(rest).map_err(bad)?),
            b'k' => {
                let m: Map<String, Value> = serde_json::from_str(rest).map_err(bad)?;
                PathElement::key(m.into_iter().collect())
            }
            b'i' => PathElement::Index(
                rest.parse()
                    .map_err(|e| DecodeError(format!("parsing key as path element: {e}")))?,
            ),
            _ => return Ok(None),
        }))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for PathElement {}
impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => compare_field_lists(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// SMD's `PathElement.String()`, used in conflict messages: `.name`, `[k=v,...]`, `[=v]`, `[i]`.
impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(n) => write!(f, ".{n}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| format!("{n}={}", value_to_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value_to_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path as SMD prints it: the elements' strings concatenated (`.spec.replicas`).
pub fn path_string(p: &[PathElement]) -> String {
    p.iter().map(ToString::to_string).collect()
}

fn compare_field_lists(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let c = x.0.cmp(&y.0).then_with(|| compare_values(&x.1, &y.1));
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    if a < b {
        Ordering::Less
    } else if a == b {
        Ordering::Equal
    } else {
        Ordering::Greater
    }
}

/// SMD's total order over values (`value.Compare`): floats and ints numerically (before every
/// other kind), then strings, booleans (false first), lists (item by item, then length), maps
/// (by sorted keys and their values, then size), null last.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(n) if n.is_f64() => 0,
            Value::Number(_) => 1,
            Value::String(_) => 2,
            Value::Bool(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
            Value::Null => 6,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() || y.is_f64() {
                float_cmp(num_f64(x), num_f64(y))
            } else {
                match (x.as_i64(), y.as_i64()) {
                    (Some(p), Some(q)) => p.cmp(&q),
                    _ => float_cmp(num_f64(x), num_f64(y)),
                }
            }
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xk: Vec<&String> = x.keys().collect();
            let mut yk: Vec<&String> = y.keys().collect();
            xk.sort();
            yk.sort();
            for (p, q) in xk.iter().zip(&yk) {
                let c = p.cmp(q).then_with(|| compare_values(&x[*p], &y[*q]));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xk.len().cmp(&yk.len())
        }
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Values equal under SMD's order (so `1` equals `1.0`).
pub fn values_equal(a: &Value, b: &Value) -> bool {
    compare_values(a, b) == Ordering::Equal
}

fn num_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(0.0)
}

/// SMD's `value.ToString`: strings quoted, numbers and booleans bare, lists `[a,b]`, maps
/// `k=v` entries run together.
pub fn value_to_string(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Number(n) => go_number(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_string(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(value_to_string).collect();
            format!("[{}]", parts.join(","))
        }
        // SMD joins map entries with nothing in between, and no braces.
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", value_to_string(v)))
            .collect(),
    }
}

/// Go's `%q` of a string, as far as JSON-compatible text goes (no HTML escaping).
pub fn go_quote(s: &str) -> String {
    let mut out = String::new();
    go_json_string(&mut out, s);
    out.replace("\\u003c", "<")
        .replace("\\u003e", ">")
        .replace("\\u0026", "&")
}

/// A number as Go's encoding/json writes a float64 or an int64.
fn go_number(n: &Number) -> String {
    if !n.is_f64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Go's 'e' format with the exponent's leading zero removed: 1e-07 -> 1e-7, 1e+21.
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        }
    } else if f.fract() == 0.0 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// Appends `s` as a JSON string the way Go's encoding/json (and jsoniter's standard
/// configuration) escapes it: `\"`, `\\`, `\n`, `\r`, `\t`, other control characters and
/// `<`, `>`, `&`, U+2028, U+2029 as `\u00XX`.
pub fn go_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `v` as compact JSON with Go's escaping and number formatting; map keys sorted (Go
/// marshals `map[string]interface{}` in key order).
pub fn go_json_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => go_json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_value(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_string(out, k);
                out.push(':');
                go_json_value(out, &m[k]);
            }
            out.push('}');
        }
    }
}

/// A set of field paths (SMD's `fieldpath.Set`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    /// Paths ending here; sorted, unique.
    members: Vec<PathElement>,
    /// Sub-sets; sorted by element, unique, never empty.
    children: Vec<(PathElement, Set)>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Set::default()
    }

    /// A set of the given paths.
    pub fn from_paths<I: IntoIterator<Item = Path>>(paths: I) -> Self {
        let mut s = Set::new();
        for p in paths {
            s.insert(&p);
        }
        s
    }

    /// The elements that end a path here.
    pub fn members(&self) -> &[PathElement] {
        &self.members
    }

    /// The sub-sets, by element.
    pub fn children(&self) -> &[(PathElement, Set)] {
        &self.children
    }

    /// The sub-set under `pe`, if any.
    pub fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children
            .binary_search_by(|(p, _)| p.cmp(pe))
            .ok()
            .map(|i| &self.children[i].1)
    }

    /// Whether `pe` is a member here.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.binary_search(pe).is_ok()
    }

    /// No paths at all.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.iter().all(|(_, c)| c.is_empty())
    }

    /// Adds a path. The empty path (the whole object) is not tracked, as in SMD.
    pub fn insert(&mut self, p: &[PathElement]) {
        match p {
            [] => {}
            [last] => {
                if let Err(i) = self.members.binary_search(last) {
                    self.members.insert(i, last.clone());
                }
            }
            [first, rest @ ..] => self.descend(first).insert(rest),
        }
    }

    /// Adds `pe` as a member here.
    pub fn insert_member(&mut self, pe: PathElement) {
        if let Err(i) = self.members.binary_search(&pe) {
            self.members.insert(i, pe);
        }
    }

    /// The sub-set under `pe`, created when absent. Callers must not leave it empty.
    fn descend(&mut self, pe: &PathElement) -> &mut Set {
        let i = match self.children.binary_search_by(|(p, _)| p.cmp(pe)) {
            Ok(i) => i,
            Err(i) => {
                self.children.insert(i, (pe.clone(), Set::new()));
                i
            }
        };
        &mut self.children[i].1
    }

    /// Adds `sub` under `pe` (united with what is there).
    pub fn insert_child(&mut self, pe: PathElement, sub: Set) {
        if sub.is_empty() {
            return;
        }
        match self.children.binary_search_by(|(p, _)| p.cmp(&pe)) {
            Ok(i) => self.children[i].1 = self.children[i].1.union(&sub),
            Err(i) => self.children.insert(i, (pe, sub)),
        }
    }

    /// Whether the path is in the set (as a member, not merely a prefix).
    pub fn has(&self, p: &[PathElement]) -> bool {
        match p {
            [] => false,
            [last] => self.has_member(last),
            [first, rest @ ..] => self.child(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Every path in `self` or `other`.
    pub fn union(&self, other: &Set) -> Set {
        let members = merge_sorted(&self.members, &other.members, true, true, true);
        let mut children = Vec::with_capacity(self.children.len().max(other.children.len()));
        let (mut i, mut j) = (0, 0);
        while i < self.children.len() || j < other.children.len() {
            let ord = match (self.children.get(i), other.children.get(j)) {
                (Some(a), Some(b)) => a.0.cmp(&b.0),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match ord {
                Ordering::Less => {
                    children.push(self.children[i].clone());
                    i += 1;
                }
                Ordering::Greater => {
                    children.push(other.children[j].clone());
                    j += 1;
                }
                Ordering::Equal => {
                    let u = self.children[i].1.union(&other.children[j].1);
                    children.push((self.children[i].0.clone(), u));
                    i += 1;
                    j += 1;
                }
            }
        }
        Set { members, children }
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        let members = merge_sorted(&self.members, &other.members, false, false, true);
        let children = self
            .children
            .iter()
            .filter_map(|(pe, c)| {
                let o = other.child(pe)?;
                let x = c.intersection(o);
                (!x.is_empty()).then(|| (pe.clone(), x))
            })
            .collect();
        Set { members, children }
    }

    /// The paths of `self` not in `other`. As SMD: a member of `other` does not remove the
    /// sub-set under the same element (see [`Set::recursive_difference`]).
    pub fn difference(&self, other: &Set) -> Set {
        let members = merge_sorted(&self.members, &other.members, true, false, false);
        let children = self
            .children
            .iter()
            .filter_map(|(pe, c)| match other.child(pe) {
                Some(o) => {
                    let d = c.difference(o);
                    (!d.is_empty()).then(|| (pe.clone(), d))
                }
                None => Some((pe.clone(), c.clone())),
            })
            .collect();
        Set { members, children }
    }

    /// Like [`Set::difference`], but a member of `other` also removes everything under it.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let members = merge_sorted(&self.members, &other.members, true, false, false);
        let children = self
            .children
            .iter()
            .filter_map(|(pe, c)| {
                if other.has_member(pe) {
                    return None;
                }
                match other.child(pe) {
                    Some(o) => {
                        let d = c.recursive_difference(o);
                        (!d.is_empty()).then(|| (pe.clone(), d))
                    }
                    None => Some((pe.clone(), c.clone())),
                }
            })
            .collect();
        Set { members, children }
    }

    /// Only the leaf paths: members that have no children.
    pub fn leaves(&self) -> Set {
        let members = self
            .members
            .iter()
            .filter(|m| self.child(m).is_none())
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, c)| {
                let l = c.leaves();
                (!l.is_empty()).then(|| (pe.clone(), l))
            })
            .collect();
        Set { members, children }
    }

    /// Every path, in SMD's iteration order (this level's members, then each child's paths).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// This set placed under `prefix`.
    pub fn with_prefix(&self, prefix: &[PathElement]) -> Set {
        match prefix {
            [] => self.clone(),
            [first, rest @ ..] => {
                let mut s = Set::new();
                s.insert_child(first.clone(), self.with_prefix(rest));
                s
            }
        }
    }

    /// The `FieldsV1` bytes exactly as SMD writes them.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{");
        self.emit(false, &mut out);
        out.push('}');
        out
    }

    fn emit(&self, include_self: bool, out: &mut String) {
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
        };
        if include_self && !(self.members.is_empty() && self.children.is_empty()) {
            sep(out);
            out.push_str("\".\":{}");
        }
        let (mut mi, mut ci) = (0, 0);
        while mi < self.members.len() || ci < self.children.len() {
            let ord = match (self.members.get(mi), self.children.get(ci)) {
                (Some(m), Some((c, _))) => m.cmp(c),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            sep(out);
            match ord {
                Ordering::Less => {
                    go_json_string(out, &self.members[mi].serialize());
                    out.push_str(":{}");
                    mi += 1;
                }
                _ => {
                    let (pe, c) = &self.children[ci];
                    go_json_string(out, &pe.serialize());
                    out.push_str(":{");
                    c.emit(ord == Ordering::Equal, out);
                    out.push('}');
                    if ord == Ordering::Equal {
                        mi += 1;
                    }
                    ci += 1;
                }
            }
        }
    }

    /// The `FieldsV1` document as a JSON value whose key order is SMD's (for embedding in an
    /// object; serde_json keeps insertion order here).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.to_json()).unwrap_or_else(|_| Value::Object(Map::new()))
    }

    /// Reads a `FieldsV1` document (any key order).
    pub fn from_json(v: &Value) -> Result<Set, DecodeError> {
        let Value::Object(m) = v else {
            return Err(DecodeError(
                "ReadMapCB: expect { or n, but found something else".to_string(),
            ));
        };
        Ok(Self::read(m)?.0.unwrap_or_default())
    }

    /// Reads `FieldsV1` text.
    pub fn from_json_str(s: &str) -> Result<Set, DecodeError> {
        let v: Value = serde_json::from_str(s).map_err(|e| DecodeError(e.to_string()))?;
        Self::from_json(&v)
    }

    /// (sub-set if any, whether the parent element is a member), as SMD's `readIterV1`.
    fn read(m: &Map<String, Value>) -> Result<(Option<Set>, bool), DecodeError> {
        let mut set: Option<Set> = None;
        let mut is_member = false;
        for (k, v) in m {
            if k == "." {
                is_member = true;
                continue;
            }
            let Some(pe) = PathElement::deserialize(k)? else {
                continue;
            };
            let (grand, child_is_member) = match v {
                Value::Object(cm) => Self::read(cm)?,
                _ => (None, true),
            };
            let s = set.get_or_insert_with(Set::new);
            if child_is_member {
                s.insert_member(pe.clone());
            }
            if let Some(g) = grand {
                s.insert_child(pe, g);
            }
        }
        if set.is_none() {
            is_member = true;
        }
        Ok((set, is_member))
    }
}

/// Merges two sorted unique slices, keeping elements only in `a` (`left`), only in `b`
/// (`right`), and in both (`both`).
fn merge_sorted(
    a: &[PathElement],
    b: &[PathElement],
    left: bool,
    right: bool,
    both: bool,
) -> Vec<PathElement> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let ord = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match ord {
            Ordering::Less => {
                if left {
                    out.push(a[i].clone());
                }
                i += 1;
            }
            Ordering::Greater => {
                if right {
                    out.push(b[j].clone());
                }
                j += 1;
            }
            Ordering::Equal => {
                if both {
                    out.push(a[i].clone());
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Shorthand for building paths in code and tests: `path!["spec", "replicas"]` is fields
/// only; use [`PathElement`] constructors for keys, values and indexes.
#[macro_export]
macro_rules! field_path {
    ($($f:expr),* $(,)?) => {
        vec![$($crate::apply::fieldpath::PathElement::field($f)),*]
    };
}

#[cfg(test)]
mod tests {
    #![allow(clippy::useless_vec)]
    use super::*;
    use serde_json::json;

    fn f(n: &str) -> PathElement {
        PathElement::field(n)
    }
    fn k(pairs: &[(&str, Value)]) -> PathElement {
        PathElement::key(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect(),
        )
    }
    fn v(x: Value) -> PathElement {
        PathElement::Value(x)
    }

    // SMD's own golden data (fieldpath/serialize_test.go, TestSerializeV1GoldenData).
    const GOLDEN: &[&str] = &[
        r#"{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\"name\":\"first\"}":{},"k:{\"name\":\"second\"}":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\"aa\"":{},"v:\"ab\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}"#,
        r#"{"f:aaa":{"k:{\"name\":\"second\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},"f:aaf":{"k:{\"port\":443,\"protocol\":\"udp\"}":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"k:{\"name\":\"first\"}":{}},"f:aac":{"f:aaa":{"v:1":{}},"f:aac":{},"v:3":{"k:{\"name\":\"second\"}":{}}},"f:aad":{"f:aac":{"v:1":{}},"f:aaf":{"k:{\"name\":\"first\"}":{"k:{\"name\":\"first\"}":{}}},"i:1":{"i:1":{},"i:3":{"v:true":{}}}},"f:aae":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:4":{"f:aaf":{}}},"f:aaf":{"i:1":{"f:aac":{}},"i:2":{},"i:3":{}},"k:{\"name\":\"first\"}":{"f:aad":{"f:aaf":{}}},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"f:aaa":{"f:aad":{}}},"k:{\"port\":443,\"protocol\":\"udp\"}":{"f:aac":{},"k:{\"name\":\"first\"}":{"i:3":{}},"k:{\"port\":443,\"protocol\":\"udp\"}":{"i:4":{}}},"v:1":{"f:aac":{"i:4":{}},"f:aaf":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{}},"v:2":{"f:aad":{"f:aaf":{}},"i:1":{}},"v:3":{"f:aaa":{},"k:{\"name\":\"first\"}":{},"i:2":{}},"v:\"aa\"":{"f:aab":{"f:aaf":{}},"f:aae":{},"k:{\"name\":\"first\"}":{"f:aad":{}},"i:2":{}},"v:\"ab\"":{"f:aaf":{"i:4":{}},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:1":{"f:aae":{"i:4":{}}}},"v:true":{"k:{\"name\":\"second\"}":{"f:aaa":{}},"i:2":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"i:1":{"i:3":{"f:aaf":{}}},"i:2":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"v:1":{}}},"i:3":{"f:aab":{"v:true":{"v:\"aa\"":{}}},"f:aaf":{},"i:1":{}},"i:4":{"v:\"aa\"":{"f:aab":{"k:{\"name\":\"second\"}":{}}}}}"#,
    ];

    /// The Update entry kube records for `kubectl create deployment nginx --image=nginx`.
    const DEPLOYMENT_SORTED: &str = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}"#;

    #[test]
    fn smd_golden_round_trip() {
        for g in GOLDEN {
            let s = Set::from_json_str(g).unwrap();
            assert_eq!(&s.to_json(), g);
            assert_eq!(Set::from_json(&s.to_value()).unwrap(), s);
        }
    }

    #[test]
    fn dot_is_emitted_first_and_read_anywhere() {
        let s = Set::from_json_str(DEPLOYMENT_SORTED).unwrap();
        let out = s.to_json();
        // SMD writes "." first, which is also kubectl's sorted order here
        assert_eq!(out, DEPLOYMENT_SORTED);
        let last = Set::from_json_str(r#"{"f:a":{"f:b":{},".":{}}}"#).unwrap();
        assert_eq!(last.to_json(), r#"{"f:a":{".":{},"f:b":{}}}"#);
        assert!(s.has(&field_path!["metadata", "labels"]));
        assert!(s.has(&field_path!["metadata", "labels", "app"]));
        assert!(!s.has(&field_path!["metadata"]));
        assert!(!s.has(&field_path!["spec"]));
        let c = vec![
            f("spec"),
            f("template"),
            f("spec"),
            f("containers"),
            k(&[("name", json!("nginx"))]),
        ];
        assert!(s.has(&c));
        let mut img = c.clone();
        img.push(f("image"));
        assert!(s.has(&img));
        assert_eq!(Set::from_json_str(&out).unwrap(), s);
        assert_eq!(s.paths().len(), 24);
    }

    #[test]
    fn element_order() {
        let mut els = vec![
            PathElement::Index(2),
            v(json!(null)),
            v(json!({"a": 1})),
            v(json!([1])),
            v(json!(true)),
            v(json!(false)),
            v(json!("b")),
            v(json!(2)),
            v(json!(1.5)),
            k(&[("port", json!(443)), ("protocol", json!("udp"))]),
            k(&[("port", json!(443))]),
            k(&[("name", json!("a"))]),
            f("b"),
            f("a"),
            PathElement::Index(1),
        ];
        els.sort();
        let s: Vec<String> = els.iter().map(PathElement::serialize).collect();
        assert_eq!(
            s,
            [
                "f:a",
                "f:b",
                r#"k:{"name":"a"}"#,
                r#"k:{"port":443}"#,
                r#"k:{"port":443,"protocol":"udp"}"#,
                "v:1.5",
                "v:2",
                r#"v:"b""#,
                "v:false",
                "v:true",
                "v:[1]",
                r#"v:{"a":1}"#,
                "v:null",
                "i:1",
                "i:2",
            ]
        );
        // ints and floats compare numerically
        assert_eq!(v(json!(1)), v(json!(1.0)));
        assert!(v(json!(1)) < v(json!(1.5)));
        // keys are sorted by name whatever the input order
        assert_eq!(
            k(&[("protocol", json!("TCP")), ("containerPort", json!(80))]).serialize(),
            r#"k:{"containerPort":80,"protocol":"TCP"}"#
        );
    }

    #[test]
    fn serialize_escapes_as_go() {
        assert_eq!(f("a&b<c>").serialize(), "f:a&b<c>");
        assert_eq!(
            Set::from_paths([vec![f("a&b")]]).to_json(),
            r#"{"f:a\u0026b":{}}"#
        );
        assert_eq!(v(json!("x<y")).serialize(), r#"v:"x\u003cy""#);
        assert_eq!(
            k(&[("name", json!("q\"\\"))]).serialize(),
            r#"k:{"name":"q\"\\"}"#
        );
        assert_eq!(v(json!(1e21)).serialize(), "v:1e+21");
        assert_eq!(v(json!(1e-7)).serialize(), "v:1e-7");
        assert_eq!(v(json!(5.0)).serialize(), "v:5");
        assert_eq!(v(json!(0.25)).serialize(), "v:0.25");
    }

    #[test]
    fn deserialize_elements() {
        assert_eq!(
            PathElement::deserialize(r#"k:{"protocol":"TCP","containerPort":80}"#).unwrap(),
            Some(k(&[
                ("containerPort", json!(80)),
                ("protocol", json!("TCP"))
            ]))
        );
        assert_eq!(
            PathElement::deserialize("i:3").unwrap(),
            Some(PathElement::Index(3))
        );
        assert_eq!(
            PathElement::deserialize("v:\"a\"").unwrap(),
            Some(v(json!("a")))
        );
        assert_eq!(PathElement::deserialize("f:").unwrap(), Some(f("")));
        assert_eq!(PathElement::deserialize("r:x").unwrap(), None);
        assert!(PathElement::deserialize("f").is_err());
        assert!(PathElement::deserialize("fx").is_err());
        assert!(PathElement::deserialize("i:x").is_err());
        // unknown kinds are dropped (SMD's TestDropUnknown)
        let s = Set::from_json_str(r#"{"f:aaa":{},"r:aab":{}}"#).unwrap();
        assert_eq!(s.to_json(), r#"{"f:aaa":{}}"#);
        assert!(Set::from_json_str("[]").is_err());
        assert_eq!(Set::from_json_str("{}").unwrap().to_json(), "{}");
    }

    #[test]
    fn set_operations() {
        let a = Set::from_paths([
            field_path!["a", "b"],
            field_path!["a", "c"],
            field_path!["d"],
            field_path!["e"],
        ]);
        let b = Set::from_paths([field_path!["a", "b"], field_path!["e"], field_path!["x"]]);
        assert_eq!(
            a.union(&b).to_json(),
            r#"{"f:a":{"f:b":{},"f:c":{}},"f:d":{},"f:e":{},"f:x":{}}"#
        );
        assert_eq!(
            a.intersection(&b).to_json(),
            r#"{"f:a":{"f:b":{}},"f:e":{}}"#
        );
        assert_eq!(a.difference(&b).to_json(), r#"{"f:a":{"f:c":{}},"f:d":{}}"#);
        assert_eq!(b.difference(&a).to_json(), r#"{"f:x":{}}"#);
        // a member does not remove a subtree in a plain difference, but does recursively
        let m = Set::from_paths([field_path!["a"]]);
        assert_eq!(a.difference(&m), a);
        assert_eq!(
            a.recursive_difference(&m).to_json(),
            r#"{"f:d":{},"f:e":{}}"#
        );
        assert!(a.difference(&a).is_empty());
        assert_eq!(a.difference(&a).to_json(), "{}");
        // leaves: members that are also children are not leaves
        let mut l = a.clone();
        l.insert(&field_path!["a"]);
        assert_eq!(
            l.to_json(),
            r#"{"f:a":{".":{},"f:b":{},"f:c":{}},"f:d":{},"f:e":{}}"#
        );
        assert_eq!(l.leaves(), a);
        assert!(l.has(&field_path!["a"]) && !a.has(&field_path!["a"]));
        assert!(!a.has(&[]));
        assert_eq!(
            Set::from_paths([field_path!["x"]])
                .with_prefix(&field_path!["p", "q"])
                .to_json(),
            r#"{"f:p":{"f:q":{"f:x":{}}}}"#
        );
        let paths: Vec<String> = l.paths().iter().map(|p| path_string(p)).collect();
        assert_eq!(paths, [".a", ".d", ".e", ".a.b", ".a.c"]);
    }

    #[test]
    fn display_as_smd() {
        let p = vec![
            f("spec"),
            f("containers"),
            k(&[("name", json!("nginx"))]),
            f("ports"),
            k(&[("containerPort", json!(80)), ("protocol", json!("TCP"))]),
            f("x"),
            v(json!("a")),
            PathElement::Index(0),
        ];
        assert_eq!(
            path_string(&p),
            r#".spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].x[="a"][0]"#
        );
        assert_eq!(v(json!("a<b")).to_string(), r#"[="a<b"]"#);
        assert_eq!(v(json!({"a": 1, "b": "c"})).to_string(), r#"[=a=1b="c"]"#);
        assert_eq!(v(json!([1, true])).to_string(), "[=[1,true]]");
    }
}
