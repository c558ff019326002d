//! What kube's custom resource strategy checks beyond the schema: the numbers the scale
//! subresource reads (`ValidateScaleSpec`/`ValidateScaleStatus`: integers within int32, the
//! label selector a string) and the warnings for newly added finalizer names.

use serde_json::Value;

use crate::meta::field_error::FieldError;
use crate::meta::validation::is_qualified_name;
use crate::registry::resource::ScaleInfo;

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::String(_) => "string",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value, for scalars (compact JSON otherwise).
fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `unstructured.NestedFieldNoCopy` then a type test: `Ok(None)` when absent.
fn nested<'a>(
    obj: &'a Value,
    path: &str,
    want: &str,
    ok: fn(&Value) -> bool,
) -> Result<Option<&'a Value>, String> {
    let fields: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let mut cur = obj;
    for (i, f) in fields.iter().enumerate() {
        let Value::Object(m) = cur else {
            let at = format!(".{}", fields[..i].join("."));
            return Err(format!(
                "{at} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                go_v(cur),
                go_type(cur)
            ));
        };
        match m.get(*f) {
            Some(v) => cur = v,
            None => return Ok(None),
        }
    }
    if ok(cur) {
        Ok(Some(cur))
    } else {
        Err(format!(
            ".{} accessor error: {} is of the type {}, expected {want}",
            fields.join("."),
            go_v(cur),
            go_type(cur)
        ))
    }
}

fn replicas(obj: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match nested(obj, path, "int64", Value::is_i64) {
        Err(e) => errs.push(FieldError::invalid(path, 0, e)),
        Ok(v) => {
            let n = v.and_then(Value::as_i64).unwrap_or(0);
            if n < 0 {
                errs.push(FieldError::invalid(
                    path,
                    n,
                    "should be a non-negative integer",
                ));
            } else if n > i64::from(i32::MAX) {
                errs.push(FieldError::invalid(
                    path,
                    n,
                    format!("should be less than or equal to {}", i32::MAX),
                ));
            }
        }
    }
}

/// `ValidateScaleSpec` + `ValidateScaleStatus`.
pub fn scale(obj: &Value, scale: Option<&ScaleInfo>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(s) = scale else {
        return errs;
    };
    replicas(obj, &s.spec_replicas_path, &mut errs);
    replicas(obj, &s.status_replicas_path, &mut errs);
    if let Some(p) = &s.label_selector_path {
        if let Err(e) = nested(obj, p, "string", Value::is_string) {
            errs.push(FieldError::invalid(p.as_str(), "", e));
        }
    }
    errs
}

fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect()
}

/// `generateWarningsFromObj`: the finalizers `new` adds (sorted), checked as kube's
/// `validateKubeFinalizerName` warns.
pub fn finalizer_warnings(new: &Value, old: Option<&Value>) -> Vec<String> {
    let before = old.map(finalizers).unwrap_or_default();
    let mut added: Vec<String> = finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    added.sort();
    added.dedup();
    let mut out = Vec::new();
    for f in added {
        let q = crate::meta::field_error::go_quote(&f);
        for msg in is_qualified_name(&f) {
            out.push(format!("metadata.finalizers: {q}: {msg}"));
        }
        if !f.contains('/') && !["orphan", "foregroundDeletion", "kubernetes"].contains(&f.as_str())
        {
            if f.contains('.') {
                out.push(format!("metadata.finalizers: {q}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"));
            } else {
                out.push(format!("metadata.finalizers: {q}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scale_paths_and_finalizers() {
        let s = ScaleInfo {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        };
        let msgs: Vec<String> = scale(
            &json!({"spec": {"replicas": "three"}, "status": {"replicas": -1, "selector": 1}}),
            Some(&s),
        )
        .iter()
        .map(FieldError::message)
        .collect();
        assert_eq!(
            msgs,
            [
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64",
                ".status.replicas: Invalid value: -1: should be a non-negative integer",
                ".status.selector: Invalid value: \"\": .status.selector accessor error: 1 is of the type int64, expected string",
            ]
        );
        assert!(scale(&json!({}), Some(&s)).is_empty());
        assert_eq!(
            finalizer_warnings(&json!({"metadata": {"finalizers": ["b.io", "a", "x.io/y", "orphan"]}}), None),
            [
                "metadata.finalizers: \"a\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers",
                "metadata.finalizers: \"b.io\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers",
            ]
        );
    }
}
