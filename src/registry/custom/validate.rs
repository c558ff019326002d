//! Custom objects checked against their version's schema as kube-apiserver v1.33 checks them:
//! kube-openapi's `validate.SchemaValidator` (root path `""`, parameters "in body"), with
//! apiextensions' ratcheting (`CRDValidationRatcheting`, on by default) on updates, turned
//! into field errors by `kubeOpenAPIResultToFieldErrors`.
//!
//! Per node the checks run in kube's validator order — type, schema props
//! (anyOf, oneOf, allOf, not), string, format, number, slice, enum, object — each only for the
//! kinds of values it applies to; a null value gets the type and enum checks only. Errors are
//! de-duplicated by message within a result, as kube's `Result.AddErrors` does, and the match
//! counts kube uses to pick the "best" failing anyOf/oneOf branch are kept. Where kube walks a
//! Go map (an object's properties, an object's keys under `additionalProperties`), the order
//! here is by key; kube's own order there is random.
//!
//! Ratcheting: a node whose new value has an old counterpart (object fields by key, items of
//! `x-kubernetes-list-type: map` lists by their keys) is validated with its children
//! correlated the same way; if it has errors and its value equals the old one (compared
//! through the correlation, atomic and set lists as a whole), its errors are dropped. Inside
//! anyOf/oneOf/allOf/not branches nothing is correlated, as upstream.
//!
//! Does not know: CEL rules, embedded object metadata, list-type uniqueness (other checks of
//! kube's custom resource strategy).

use serde_json::Value;

use super::node::{Additional, Node};
use crate::meta::field_error::{go_quote, go_value, FieldError};

/// kube-openapi's error codes, as far as the field-error conversion tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Code {
    InvalidType,
    Required,
    TooLong,
    MaxItems,
    TooManyProperties,
    Enum,
    /// Any other `*errors.Validation`.
    Other,
    /// A plain `errors.New` (the anyOf/oneOf/allOf/not messages): reported at path `<nil>`.
    Plain,
}

#[derive(Clone, Debug)]
struct OpenApiError {
    code: Code,
    name: String,
    value: Option<Value>,
    valid: Option<i64>,
    values: Vec<Value>,
    message: String,
}

impl OpenApiError {
    fn new(code: Code, name: &str, value: Option<Value>, message: String) -> Self {
        OpenApiError {
            code,
            name: name.to_string(),
            value,
            valid: None,
            values: Vec::new(),
            message,
        }
    }
}

/// kube-openapi's `validate.Result` (errors and the match count; warnings are never reported).
#[derive(Default, Debug)]
struct Res {
    errors: Vec<OpenApiError>,
    matches: usize,
}

impl Res {
    fn err(e: OpenApiError) -> Res {
        Res {
            errors: vec![e],
            matches: 0,
        }
    }

    fn add(&mut self, e: OpenApiError) {
        if !self.errors.iter().any(|x| x.message == e.message) {
            self.errors.push(e);
        }
    }

    fn merge(&mut self, other: Res) {
        for e in other.errors {
            self.add(e);
        }
        self.matches += other.matches;
    }

    fn valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// An old value correlated with a new one (apiserver's `common.CorrelatedObject`).
struct Corr<'a> {
    new: &'a Value,
    old: &'a Value,
    schema: &'a Node,
}

impl<'a> Corr<'a> {
    fn key(&self, field: &str) -> Option<Corr<'a>> {
        let (Value::Object(new), Value::Object(old)) = (self.new, self.old) else {
            return None;
        };
        let (n, o) = (new.get(field)?, old.get(field)?);
        let schema = self
            .schema
            .properties
            .get(field)
            .or_else(|| self.schema.additional_schema())?;
        Some(Corr {
            new: n,
            old: o,
            schema,
        })
    }

    fn is_map_list(&self) -> bool {
        self.schema.list_type == "map"
    }

    fn index(&self, i: usize) -> Option<Corr<'a>> {
        let (Value::Array(new), Value::Array(old)) = (self.new, self.old) else {
            return None;
        };
        let item = new.get(i)?;
        if !self.is_map_list()
            || self.schema.types != ["array"]
            || self.schema.list_map_keys.is_empty()
        {
            return None;
        }
        let key = map_key(item, &self.schema.list_map_keys)?;
        let old_item = old
            .iter()
            .find(|o| map_key(o, &self.schema.list_map_keys).as_ref() == Some(&key))?;
        Some(Corr {
            new: item,
            old: old_item,
            schema: self.schema.items.as_deref()?,
        })
    }

    /// `CachedDeepEqual`.
    fn unchanged(&self) -> bool {
        match (self.new, self.old) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            (Value::Array(n), Value::Array(o)) => {
                if n.len() != o.len() {
                    return false;
                }
                if !self.is_map_list() {
                    return n == o;
                }
                (0..n.len()).all(|i| self.index(i).is_some_and(|c| c.unchanged()))
            }
            (Value::Object(n), Value::Object(o)) => {
                n.len() == o.len() && n.keys().all(|k| self.key(k).is_some_and(|c| c.unchanged()))
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                false
            }
            (n, o) => n == o,
        }
    }
}

/// The values of a map-list item's keys, when all are present and scalar.
fn map_key(item: &Value, keys: &[String]) -> Option<Vec<Value>> {
    let m = item.as_object()?;
    keys.iter()
        .map(|k| {
            m.get(k)
                .filter(|v| v.is_boolean() || v.is_number() || v.is_string())
                .cloned()
        })
        .collect()
}

/// A JSON number as kube's unstructured decoding holds it.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &serde_json::Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// Go's `%v` of a float64.
fn gof(f: f64) -> String {
    serde_json::Number::from_f64(f)
        .map(|n| go_value(&Value::Number(n)))
        .unwrap_or_else(|| f.to_string())
}

/// go-openapi's `swag.IsFloat64AJSONInteger`.
fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9007199254740992.0; // 1<<53
    if f.is_nan() || f.is_infinite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    // Go's uint64(f): truncation for non-negative values, two's complement wrap below.
    let g = if f >= 0.0 {
        f.trunc()
    } else {
        (f as i64 as u64) as f64
    };
    let diff = (f - g).abs();
    if f == g || f == (f as i64) as f64 {
        return true;
    }
    if f == 0.0 || g == 0.0 || diff < f64::MIN_POSITIVE {
        return diff < 1e-9 * f64::MIN_POSITIVE;
    }
    diff / (f.abs() + g.abs()).min(f64::MAX) < 1e-9
}

fn type_name(v: &Value) -> (&'static str, &'static str) {
    match v {
        Value::Null => ("null", ""),
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) => match num(n) {
            Num::Int(_) => ("integer", "int64"),
            Num::Float(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
    }
}

fn invalid_type(path: &str, ty: &str, got: &str) -> OpenApiError {
    OpenApiError::new(
        Code::InvalidType,
        path,
        Some(Value::from(got)),
        format!("{path} in body must be of type {ty}: {}", go_quote(got)),
    )
}

/// `typeValidator` (applies when the node has a type or a format).
fn check_type(n: &Node, path: &str, data: &Value) -> Res {
    let types = n.types.join(",");
    let has = |t: &str| n.types.contains(&t);
    if data.is_null() {
        if !n.types.is_empty() && !n.nullable {
            return Res::err(invalid_type(path, &types, "null"));
        }
        return Res {
            errors: Vec::new(),
            matches: 1,
        };
    }
    let (sch, format) = type_name(data);
    let is_float_int = match data {
        Value::Number(x) => match num(x) {
            Num::Float(f) => is_json_integer(f) && has("integer"),
            Num::Int(_) => false,
        },
        _ => false,
    };
    let is_int_float = sch == "integer" && has("number");
    let stringish = matches!(data, Value::String(_) | Value::Array(_));
    if !stringish
        && !n.format.is_empty()
        && !(has(sch) || format == n.format || is_float_int || is_int_float)
    {
        return Res::err(invalid_type(path, &n.format, format));
    }
    if !(has("number") || has("integer")) && !n.format.is_empty() && stringish {
        return Res {
            errors: Vec::new(),
            matches: 1,
        };
    }
    if !(has(sch) || is_float_int || is_int_float) {
        return Res::err(invalid_type(path, &types, sch));
    }
    Res {
        errors: Vec::new(),
        matches: 1,
    }
}

/// `basicCommonValidator`: enum.
fn check_enum(n: &Node, path: &str, data: &Value) -> Res {
    if n.enumeration.is_empty() {
        return Res::default();
    }
    if !data.is_null() && n.enumeration.iter().any(|e| enum_matches(data, e)) {
        return Res::default();
    }
    let rendered: Vec<String> = n
        .enumeration
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => go_fmt(other),
        })
        .collect();
    let mut e = OpenApiError::new(
        Code::Enum,
        path,
        Some(data.clone()),
        format!("{path} in body should be one of [{}]", rendered.join(" ")),
    );
    e.values = n.enumeration.clone();
    Res::err(e)
}

/// Go's `%v` of a decoded JSON value (enum values: float64 numbers, maps, slices).
fn go_fmt(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => gof(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(a) => format!("[{}]", a.iter().map(go_fmt).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}:{}", go_fmt(&m[k.as_str()])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// The enum comparison: Go's `reflect.DeepEqual` after converting the value to the enum
/// value's type (enum numbers are float64; an integer converts to a string as a rune, as Go
/// does).
fn enum_matches(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (Value::Number(d), Value::Number(x)) => d.as_f64() == x.as_f64(),
        (Value::Number(d), Value::String(s)) => match num(d) {
            Num::Int(i) => {
                let c = u32::try_from(i)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                s.chars().eq(std::iter::once(c))
            }
            Num::Float(_) => false,
        },
        (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_)) => {
            deep_equal_go(data, e)
        }
        (a, b) => a == b,
    }
}

/// DeepEqual between a decoded object (integers int64) and an enum value (numbers float64).
fn deep_equal_go(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (Value::Number(d), Value::Number(x)) => {
            matches!(num(d), Num::Float(_)) && d.as_f64() == x.as_f64()
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| deep_equal_go(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, x)| b.get(k).is_some_and(|y| deep_equal_go(x, y)))
        }
        (a, b) => a == b,
    }
}

/// `stringValidator`: the first of maxLength, minLength, pattern that fails.
fn check_string(n: &Node, path: &str, s: &str) -> Res {
    let len = s.chars().count() as i64;
    if let Some(max) = n.max_length {
        if len > max {
            let mut e = OpenApiError::new(
                Code::TooLong,
                path,
                Some(Value::from(s)),
                format!("{path} in body should be at most {max} chars long"),
            );
            e.valid = Some(max);
            return Res::err(e);
        }
    }
    if let Some(min) = n.min_length {
        if len < min {
            return Res::err(OpenApiError::new(
                Code::Other,
                path,
                Some(Value::from(s)),
                format!("{path} in body should be at least {min} chars long"),
            ));
        }
    }
    if let Some(p) = &n.pattern {
        let shown = match &p.regex {
            Err(e) => Some(format!("{}, but pattern is invalid: {e}", p.source)),
            Ok(rx) if !rx.is_match(s) => Some(p.source.clone()),
            Ok(_) => None,
        };
        if let Some(shown) = shown {
            return Res::err(OpenApiError::new(
                Code::Other,
                path,
                Some(Value::from(s)),
                format!("{path} in body should match '{shown}'"),
            ));
        }
    }
    Res::default()
}

/// `formatValidator` (strings, formats kube knows).
fn check_format(n: &Node, path: &str, s: &str) -> Res {
    match n.format_check {
        Some(f) if !f.check(s) => Res::err(OpenApiError::new(
            Code::InvalidType,
            path,
            Some(Value::from(s)),
            format!(
                "{path} in body must be of type {}: {}",
                n.format,
                go_quote(s)
            ),
        )),
        _ => Res::default(),
    }
}

/// `numberValidator`: multipleOf, minimum, maximum (merged in that order).
fn check_number(n: &Node, path: &str, x: Num) -> Res {
    let value = match x {
        Num::Int(i) => Value::from(i),
        Num::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
    };
    let other = |msg: String| OpenApiError::new(Code::Other, path, Some(value.clone()), msg);
    let mut res = Res::default();
    if let Some(m) = n.multiple_of {
        match x {
            Num::Int(i) => {
                let factor = m as i64;
                if factor <= 0 {
                    res.add(OpenApiError::new(
                        Code::Other,
                        path,
                        Some(Value::from(factor)),
                        format!("factor MultipleOf declared for {path} must be positive: {factor}"),
                    ));
                } else if (i / factor) * factor != i {
                    res.add(other(format!(
                        "{path} in body should be a multiple of {factor}"
                    )));
                }
            }
            Num::Float(f) => {
                if m <= 0.0 {
                    res.add(OpenApiError::new(
                        Code::Other,
                        path,
                        serde_json::Number::from_f64(m).map(Value::Number),
                        format!(
                            "factor MultipleOf declared for {path} must be positive: {}",
                            gof(m)
                        ),
                    ));
                } else {
                    let mult = if m < 1.0 { 1.0 / m * f } else { f / m };
                    if !is_json_integer(mult) {
                        res.add(other(format!(
                            "{path} in body should be a multiple of {}",
                            gof(m)
                        )));
                    }
                }
            }
        }
    }
    if let Some(min) = n.minimum {
        let excl = n.exclusive_minimum;
        let (fails, shown) = match x {
            Num::Int(i) => {
                let m = min as i64;
                ((!excl && i < m) || (excl && i <= m), m.to_string())
            }
            Num::Float(f) => ((!excl && f < min) || (excl && f <= min), gof(min)),
        };
        if fails {
            let op = if excl {
                "greater than"
            } else {
                "greater than or equal to"
            };
            res.add(other(format!("{path} in body should be {op} {shown}")));
        }
    }
    if let Some(max) = n.maximum {
        let excl = n.exclusive_maximum;
        let (fails, shown) = match x {
            Num::Int(i) => {
                let m = max as i64;
                ((!excl && i > m) || (excl && i >= m), m.to_string())
            }
            Num::Float(f) => ((!excl && f > max) || (excl && f >= max), gof(max)),
        };
        if fails {
            let op = if excl {
                "less than"
            } else {
                "less than or equal to"
            };
            res.add(other(format!("{path} in body should be {op} {shown}")));
        }
    }
    res.matches += 1;
    res
}

/// `schemaSliceValidator`: items, then minItems, maxItems, uniqueItems.
fn check_slice(n: &Node, path: &str, items: &[Value], corr: Option<&Corr>) -> Res {
    let mut res = Res::default();
    if let Some(item) = n.items.as_deref() {
        for (i, v) in items.iter().enumerate() {
            let p = format!("{path}[{i}]");
            match corr.and_then(|c| c.index(i)) {
                Some(child) => res.merge(ratcheting(item, &p, &child)),
                None => res.merge(validate_node(item, &p, v, None)),
            }
        }
    }
    let size = items.len() as i64;
    if let Some(min) = n.min_items {
        if size < min {
            res.add(OpenApiError::new(
                Code::Other,
                path,
                Some(Value::from(size)),
                format!("{path} in body should have at least {min} items"),
            ));
        }
    }
    if let Some(max) = n.max_items {
        if size > max {
            let mut e = OpenApiError::new(
                Code::MaxItems,
                path,
                Some(Value::from(size)),
                format!("{path} in body should have at most {max} items"),
            );
            e.valid = Some(max);
            res.add(e);
        }
    }
    if n.unique_items {
        let dup = items
            .iter()
            .enumerate()
            .any(|(i, v)| items[..i].contains(v));
        if dup {
            res.add(OpenApiError::new(
                Code::Other,
                path,
                None,
                format!("{path} in body shouldn't contain duplicates"),
            ));
        }
    }
    res.matches += 1;
    res
}

fn plain(msg: String) -> OpenApiError {
    OpenApiError::new(Code::Plain, "", None, msg)
}

/// `schemaPropsValidator`: anyOf, oneOf, allOf, not (branches are never correlated).
fn check_props(n: &Node, path: &str, data: &Value) -> Res {
    let mut main = Res::default();
    if !n.any_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        let mut succeeded = false;
        for s in &n.any_of {
            let r = validate_node(s, path, data, None);
            if r.valid() {
                best = None;
                succeeded = true;
                first_success = Some(r);
                break;
            }
            if best.as_ref().is_none_or(|b| r.matches > b.matches) {
                best = Some(r);
            }
        }
        if !succeeded {
            main.add(plain(format!(
                "{} must validate at least one schema (anyOf)",
                go_quote(path)
            )));
        }
        if let Some(b) = best {
            main.merge(b);
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }
    if !n.one_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        let mut validated = 0;
        for s in &n.one_of {
            let r = validate_node(s, path, data, None);
            if r.valid() {
                validated += 1;
                best = None;
                if first_success.is_none() {
                    first_success = Some(r);
                }
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| r.matches > b.matches) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let extra = if validated == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.add(plain(format!(
                "{} must validate one and only one schema (oneOf). {extra}",
                go_quote(path)
            )));
            if let Some(b) = best {
                main.merge(b);
            }
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }
    if !n.all_of.is_empty() {
        let mut validated = 0;
        for s in &n.all_of {
            let r = validate_node(s, path, data, None);
            if r.valid() {
                validated += 1;
            }
            main.merge(r);
        }
        if validated != n.all_of.len() {
            let extra = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.add(plain(format!(
                "{} must validate all the schemas (allOf){extra}",
                go_quote(path)
            )));
        }
    }
    if let Some(not) = &n.not {
        if validate_node(not, path, data, None).valid() {
            main.add(plain(format!(
                "{} must not validate the schema (not)",
                go_quote(path)
            )));
        }
    }
    main.matches += 1;
    main
}

/// `objectValidator`: min/maxProperties, additionalProperties, properties (by name),
/// required.
fn check_object(
    n: &Node,
    path: &str,
    obj: &serde_json::Map<String, Value>,
    corr: Option<&Corr>,
) -> Res {
    let mut res = Res::default();
    let size = obj.len() as i64;
    if let Some(min) = n.min_properties {
        if size < min {
            res.add(OpenApiError::new(
                Code::Other,
                path,
                Some(Value::from(size)),
                format!("{path} in body should have at least {min} properties"),
            ));
        }
    }
    if let Some(max) = n.max_properties {
        if size > max {
            let mut e = OpenApiError::new(
                Code::TooManyProperties,
                path,
                Some(Value::from(size)),
                format!("{path} in body should have at most {max} properties"),
            );
            e.valid = Some(max);
            res.add(e);
        }
    }
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort();
    let child = |key: &str, schema: &Node, p: &str, v: &Value| -> Res {
        let skip = path.is_empty() && (key == "kind" || key == "apiVersion");
        match corr.and_then(|c| c.key(key)).filter(|_| !skip) {
            Some(c) => ratcheting(schema, p, &c),
            None => validate_node(schema, p, v, None),
        }
    };
    match &n.additional {
        Some(Additional::Bool(false)) => {
            for k in &keys {
                if !n.properties.contains_key(k.as_str()) {
                    res.add(OpenApiError::new(
                        Code::Other,
                        path,
                        Some(Value::from(k.as_str())),
                        format!("{path}.{k} in body is a forbidden property"),
                    ));
                }
            }
        }
        Some(Additional::Schema(s)) => {
            for k in &keys {
                if !n.properties.contains_key(k.as_str()) {
                    res.merge(child(k, s, &format!("{path}.{k}"), &obj[k.as_str()]));
                }
            }
        }
        _ => {}
    }
    for (name, schema) in &n.properties {
        if let Some(v) = obj.get(name) {
            let p = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            res.merge(child(name, schema, &p, v));
        }
    }
    for k in &n.required {
        if !obj.contains_key(k) {
            let name = format!("{path}.{k}");
            res.add(OpenApiError::new(
                Code::Required,
                &name,
                None,
                format!("{name} in body is required"),
            ));
        }
    }
    res
}

/// `SchemaValidator.Validate`; `corr` correlates `data` with its old value (ratcheting).
fn validate_node(n: &Node, path: &str, data: &Value, corr: Option<&Corr>) -> Res {
    let mut res = Res::default();
    if data.is_null() {
        res.merge(check_type(n, path, data));
        res.merge(check_enum(n, path, data));
        return res;
    }
    let run = |res: &mut Res, r: Res| {
        res.merge(r);
        res.matches += 1;
    };
    if !n.types.is_empty() || !n.format.is_empty() {
        run(&mut res, check_type(n, path, data));
    }
    run(&mut res, check_props(n, path, data));
    if let Value::String(s) = data {
        run(&mut res, check_string(n, path, s));
        if n.format_check.is_some() {
            run(&mut res, check_format(n, path, s));
        }
    }
    if let Value::Number(x) = data {
        run(&mut res, check_number(n, path, num(x)));
    }
    if let Value::Array(items) = data {
        run(&mut res, check_slice(n, path, items, corr));
    }
    run(&mut res, check_enum(n, path, data));
    if let Value::Object(obj) = data {
        run(&mut res, check_object(n, path, obj, corr));
    }
    res.matches += 1;
    res
}

/// `ratchetingValueValidator.Validate`: errors of a value equal to its old value are dropped.
fn ratcheting(n: &Node, path: &str, corr: &Corr) -> Res {
    let res = validate_node(n, path, corr.new, Some(corr));
    if res.valid() || !corr.unchanged() {
        return res;
    }
    Res {
        errors: Vec::new(),
        matches: res.matches,
    }
}

/// `kubeOpenAPIResultToFieldErrors` (with no parent path).
fn field_errors(res: Res) -> Vec<FieldError> {
    res.errors
        .into_iter()
        .map(|e| {
            let field = if e.code == Code::Plain || e.name.is_empty() || e.name == "." {
                "<nil>".to_string()
            } else {
                e.name.strip_prefix('.').unwrap_or(&e.name).to_string()
            };
            let value = e.value.clone().unwrap_or_else(|| Value::from(""));
            match e.code {
                Code::Required => FieldError::required(field, ""),
                Code::Enum => {
                    let values: Vec<String> = e
                        .values
                        .iter()
                        .map(|v| match v {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n
                                .as_f64()
                                .map(|f| {
                                    if f.fract() == 0.0 && f.abs() < 1e21 {
                                        format!("{}", f as i64)
                                    } else {
                                        n.to_string()
                                    }
                                })
                                .unwrap_or_else(|| n.to_string()),
                            other => other.to_string(),
                        })
                        .collect();
                    let refs: Vec<&str> = values.iter().map(String::as_str).collect();
                    FieldError::not_supported(field, e.value.unwrap_or(Value::Null), &refs)
                }
                Code::TooLong => FieldError::too_long(field, "", e.valid.unwrap_or(-1)),
                Code::MaxItems | Code::TooManyProperties => FieldError::too_many(
                    field,
                    e.value.as_ref().and_then(Value::as_i64).unwrap_or(-1),
                    e.valid.unwrap_or(-1),
                ),
                Code::InvalidType => FieldError::type_invalid(field, value, e.message),
                Code::Other => FieldError::invalid(field, value, e.message),
                Code::Plain => FieldError::invalid(field, "", e.message),
            }
        })
        .collect()
}

/// The schema errors of a new object.
pub fn validate(schema: &Node, obj: &Value) -> Vec<FieldError> {
    field_errors(validate_node(schema, "", obj, None))
}

/// The schema errors of an updated object, ratcheted against the old one.
pub fn validate_update(schema: &Node, new: &Value, old: &Value) -> Vec<FieldError> {
    let corr = Corr { new, old, schema };
    field_errors(ratcheting(schema, "", &corr))
}

#[cfg(test)]
mod tests {
    use super::super::node::compile;
    use super::*;
    use serde_json::json;

    fn msgs(schema: Value, obj: Value) -> Vec<String> {
        validate(&compile(&schema), &obj)
            .iter()
            .map(FieldError::message)
            .collect()
    }

    fn spec(props: Value) -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}})
    }

    #[test]
    fn messages_as_kube_renders_them() {
        let s = spec(json!({
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
            "port": {"x-kubernetes-int-or-string": true},
            "mode": {"type": "string", "enum": ["A", "B"]},
            "name": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"},
            "tags": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
            "ratio": {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": true, "minimum": 0},
            "when": {"type": "string", "format": "date"},
            "size": {"type": "integer", "format": "int32"},
        }));
        let cases: &[(Value, &str)] = &[
            (json!({"replicas": "x"}), "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""),
            (json!({"replicas": 1.5}), "spec.replicas: Invalid value: \"number\": spec.replicas in body must be of type integer: \"number\""),
            (json!({"replicas": 0}), "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
            (json!({"replicas": 11}), "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
            (json!({"port": true}), "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\""),
            (json!({"mode": "C"}), "spec.mode: Unsupported value: \"C\": supported values: \"A\", \"B\""),
            (json!({"name": "abcd"}), "spec.name: Too long: may not be more than 3 bytes"),
            (json!({"name": "AB"}), "spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"),
            (json!({"tags": ["a", "b"]}), "spec.tags: Too many: 2: must have at most 1 items"),
            (json!({"tags": [1]}), "spec.tags[0]: Invalid value: \"integer\": spec.tags[0] in body must be of type string: \"integer\""),
            (json!({"ratio": 0.75}), "spec.ratio: Invalid value: 0.75: spec.ratio in body should be a multiple of 0.5"),
            (json!({"ratio": -0.5}), "spec.ratio: Invalid value: -0.5: spec.ratio in body should be greater than 0"),
            (json!({"when": "2023-02-30"}), "spec.when: Invalid value: \"2023-02-30\": spec.when in body must be of type date: \"2023-02-30\""),
        ];
        for (v, want) in cases {
            assert_eq!(msgs(s.clone(), json!({"spec": v})), [*want], "{v}");
        }
        assert!(msgs(
            s.clone(),
            json!({"spec": {"size": 1, "port": "x", "ratio": 1.5}})
        )
        .is_empty());
    }

    #[test]
    fn combinators_required_and_additional_properties() {
        let s = json!({"type": "object", "required": ["spec"], "properties": {"spec": {
            "type": "object",
            "required": ["a"],
            "oneOf": [{"required": ["b"]}, {"required": ["c"]}],
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": false}}}}});
        assert_eq!(msgs(s.clone(), json!({})), ["spec: Required value"]);
        assert_eq!(
            msgs(s.clone(), json!({"spec": {"a": "x"}})),
            [
                "<nil>: Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found none valid",
                "spec.b: Required value",
            ]
        );
        assert_eq!(
            msgs(s.clone(), json!({"spec": {"a": "x", "b": "y", "c": "z"}})),
            ["<nil>: Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found 2 valid alternatives"]
        );
        assert_eq!(
            msgs(s, json!({"spec": {"a": "x", "b": "y", "labels": {"k": 1}}})),
            ["spec.labels: Invalid value: \"k\": spec.labels.k in body is a forbidden property"]
        );
    }

    #[test]
    fn any_of_all_of_not() {
        let s = spec(json!({
            "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "n": {"type": "integer", "allOf": [{"minimum": 5}, {"maximum": 7}], "not": {"enum": [6]}},
        }));
        assert_eq!(
            msgs(s.clone(), json!({"spec": {"port": true}})),
            [
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
                "<nil>: Invalid value: \"\": \"spec.port\" must validate at least one schema (anyOf)",
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer: \"boolean\"",
            ]
        );
        assert_eq!(
            msgs(s.clone(), json!({"spec": {"n": 4}})),
            [
                "spec.n: Invalid value: 4: spec.n in body should be greater than or equal to 5",
                "<nil>: Invalid value: \"\": \"spec.n\" must validate all the schemas (allOf)",
            ]
        );
        assert_eq!(
            msgs(s, json!({"spec": {"n": 6}})),
            ["<nil>: Invalid value: \"\": \"spec.n\" must not validate the schema (not)"]
        );
    }

    #[test]
    fn ratcheting_drops_errors_of_unchanged_values() {
        let s = compile(&spec(json!({
            "name": {"type": "string", "maxLength": 3},
            "other": {"type": "string"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer", "maximum": 10}}}},
        })));
        let old = json!({"spec": {"name": "toolong", "other": "a", "ports": [{"name": "a", "port": 99}]}});
        let new = json!({"spec": {"name": "toolong", "other": "b", "ports": [{"name": "b", "port": 1}, {"name": "a", "port": 99}]}});
        assert!(validate_update(&s, &new, &old).is_empty());
        let changed = json!({"spec": {"name": "toolonger", "other": "b", "ports": [{"name": "a", "port": 98}]}});
        let got: Vec<String> = validate_update(&s, &changed, &old)
            .iter()
            .map(FieldError::message)
            .collect();
        assert_eq!(
            got,
            [
                "spec.name: Too long: may not be more than 3 bytes",
                "spec.ports[0].port: Invalid value: 98: spec.ports[0].port in body should be less than or equal to 10",
            ]
        );
    }
}
