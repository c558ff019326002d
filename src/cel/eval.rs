//! Evaluation: JSON values turned into CEL values the way kube's `UnstructuredToVal` presents
//! them (object fields under their escaped names, only the fields the schema declares,
//! `date-time` and `duration` strings as timestamps and durations, `byte` strings decoded),
//! a shared function environment with the Kubernetes libraries, and cel-go's texts for
//! evaluation errors (`no such key: x`, `division by zero`, ...).

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::{Context, ExecutionError, Value};
use kube_cel::KubeCelExt;
use serde_json::Value as Json;

use super::types::{escape, Object, Type};

thread_local! {
    /// The standard functions plus kube's libraries and the admission authorizer library,
    /// built once per thread (building it registers a few hundred functions).
    static ROOT: Context<'static> = {
        let mut ctx = Context::default().with_all();
        super::authorizer::register(&mut ctx);
        ctx
    };
}

/// Evaluates `expr` with the variables `vars`.
pub fn eval(
    expr: &kube_cel::cel::IdedExpr,
    vars: Vec<(&str, Value)>,
) -> Result<Value, ExecutionError> {
    ROOT.with(|root| {
        let mut ctx = root.new_inner_scope();
        for (n, v) in vars {
            ctx.add_variable_from_value(n, v);
        }
        Value::resolve(expr, &ctx)
    })
}

/// cel-go's text for an evaluation error.
pub fn error_text(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::DivisionByZero(_) => "division by zero".into(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".into(),
        ExecutionError::Overflow(..) => "integer overflow".into(),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", plain(i)),
        ExecutionError::FunctionError { message, .. } => message.clone(),
        ExecutionError::UndeclaredReference(r) => format!("no such attribute: {r}"),
        ExecutionError::NoSuchOverload
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::UnsupportedUnaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. }
        | ExecutionError::UnexpectedType { .. } => "no such overload".into(),
        other => other.to_string(),
    }
}

/// A CEL value as cel-go prints it in messages.
pub fn plain(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        other => format!("{other:?}"),
    }
}

/// A Go duration (`1h30m`, `-1.5s`, `300ms`), as kube's `duration` format accepts it.
pub fn parse_duration(s: &str) -> Option<chrono::Duration> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..u] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[u..];
        nanos += num * unit;
    }
    if nanos > i64::MAX as f64 {
        return None;
    }
    let d = chrono::Duration::nanoseconds(nanos as i64);
    Some(if neg { -d } else { d })
}

fn number(n: &serde_json::Number) -> Value {
    if let Some(i) = n.as_i64() {
        Value::Int(i)
    } else if let Some(u) = n.as_u64() {
        Value::UInt(u)
    } else {
        Value::Float(n.as_f64().unwrap_or(0.0))
    }
}

fn map_of(entries: impl Iterator<Item = (String, Value)>) -> Value {
    let m: HashMap<Key, Value> = entries
        .map(|(k, v)| (Key::String(Arc::new(k)), v))
        .collect();
    Value::Map(Map { map: Arc::new(m) })
}

fn object(o: &Object, m: &serde_json::Map<String, Json>) -> Value {
    map_of(m.iter().filter_map(|(k, v)| {
        let name = escape(k)?;
        let t = o.fields.get(&name)?;
        Some((name, to_value(v, t)))
    }))
}

/// The CEL value of `v` read as type `t`.
pub fn to_value(v: &Json, t: &Type) -> Value {
    match (v, t) {
        (Json::Null, _) => Value::Null,
        (Json::Object(m), Type::Object(o)) => object(o, m),
        (Json::Object(m), Type::Map { value, .. }) => {
            map_of(m.iter().map(|(k, x)| (k.clone(), to_value(x, value))))
        }
        (Json::Array(a), Type::List { elem, .. }) => {
            Value::List(Arc::new(a.iter().map(|x| to_value(x, elem)).collect()))
        }
        (Json::String(s), Type::Timestamp) => match chrono::DateTime::parse_from_rfc3339(s) {
            Ok(t) => Value::Timestamp(t),
            Err(_) => match chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
                Ok(d) => Value::Timestamp(
                    d.and_hms_opt(0, 0, 0)
                        .unwrap_or_default()
                        .and_utc()
                        .fixed_offset(),
                ),
                Err(_) => Value::String(Arc::new(s.clone())),
            },
        },
        (Json::String(s), Type::Duration) => match parse_duration(s) {
            Some(d) => Value::Duration(d),
            None => Value::String(Arc::new(s.clone())),
        },
        (Json::String(s), Type::Bytes { .. }) => {
            match base64::engine::general_purpose::STANDARD.decode(s) {
                Ok(b) => Value::Bytes(Arc::new(b)),
                Err(_) => Value::String(Arc::new(s.clone())),
            }
        }
        (Json::Number(n), Type::Double) => Value::Float(n.as_f64().unwrap_or(0.0)),
        (Json::Number(n), _) => number(n),
        (Json::String(s), _) => Value::String(Arc::new(s.clone())),
        (Json::Bool(b), _) => Value::Bool(*b),
        (Json::Array(a), _) => Value::List(Arc::new(
            a.iter().map(|x| to_value(x, &Type::Dyn)).collect(),
        )),
        (Json::Object(m), _) => map_of(m.iter().map(|(k, x)| (k.clone(), to_value(x, &Type::Dyn)))),
    }
}

/// A JSON value for a CEL value (what kube writes for a `messageExpression` or a
/// mutation's result).
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::String(s) => Json::String(s.to_string()),
        Value::Bytes(b) => Json::String(base64::engine::general_purpose::STANDARD.encode(&**b)),
        Value::List(l) => Json::Array(l.iter().map(to_json).collect()),
        Value::Map(m) => Json::Object(
            m.map
                .iter()
                .map(|(k, v)| {
                    let k = match k {
                        Key::String(s) => s.to_string(),
                        Key::Int(i) => i.to_string(),
                        Key::Uint(u) => u.to_string(),
                        Key::Bool(b) => b.to_string(),
                    };
                    (k, to_json(v))
                })
                .collect(),
        ),
        Value::Timestamp(t) => Json::String(t.to_rfc3339()),
        Value::Duration(d) => Json::String(format!("{}s", d.num_milliseconds() as f64 / 1000.0)),
        other => Json::String(format!("{other:?}")),
    }
}

/// `t` with every size replaced by the size `v` actually has, for the runtime cost of an
/// expression over this value.
pub fn refine(t: &Type, v: &Json) -> Type {
    match (t, v) {
        (Type::String { .. }, Json::String(s)) => Type::String {
            max: s.chars().count() as u64,
        },
        (Type::Bytes { .. }, Json::String(s)) => Type::Bytes {
            max: (s.len() as u64 * 3) / 4,
        },
        (Type::Dyn, Json::String(s)) => Type::String {
            max: s.len() as u64,
        },
        (Type::List { elem, .. }, Json::Array(a)) => {
            let mut e: Option<Type> = None;
            for x in a {
                let r = refine(elem, x);
                e = Some(match e {
                    None => r,
                    Some(p) => super::check::merge_sizes(&p, &r),
                });
            }
            Type::List {
                elem: Box::new(e.unwrap_or_else(|| (**elem).clone())),
                max: a.len() as u64,
            }
        }
        (Type::Map { key, value, .. }, Json::Object(m)) => {
            let mut e: Option<Type> = None;
            let mut kmax = 0;
            for (k, x) in m {
                kmax = kmax.max(k.len() as u64);
                let r = refine(value, x);
                e = Some(match e {
                    None => r,
                    Some(p) => super::check::merge_sizes(&p, &r),
                });
            }
            let _ = key;
            Type::Map {
                key: Box::new(Type::String { max: kmax }),
                value: Box::new(e.unwrap_or_else(|| (**value).clone())),
                max: m.len() as u64,
            }
        }
        (Type::Object(o), Json::Object(m)) => {
            let mut fields = o.fields.clone();
            for (k, x) in m {
                if let Some(name) = escape(k) {
                    if let Some(ft) = fields.get_mut(&name) {
                        *ft = refine(ft, x);
                    }
                }
            }
            Type::Object(Arc::new(Object {
                name: o.name.clone(),
                fields,
                min_size: o.min_size,
                max: o.max,
            }))
        }
        _ => t.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_duration("1h30m"), Some(chrono::Duration::minutes(90)));
        assert_eq!(
            parse_duration("-1.5s"),
            Some(-chrono::Duration::milliseconds(1500))
        );
        assert_eq!(parse_duration("0"), Some(chrono::Duration::zero()));
        assert_eq!(parse_duration("1x"), None);
        assert_eq!(parse_duration(""), None);
    }
}
