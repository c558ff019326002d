//! Small checks and accessors the strategies share (kube's validation helpers such as
//! `ValidateNonnegativeField` and `ValidateImmutableField`).

use serde_json::Value;

use crate::meta::field_error::FieldError;

/// `v[key]` as a string ("" when absent or not a string).
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The string at JSON `pointer` in `v` ("" when absent or not a string).
pub fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `v[key]` as a list (empty when absent or not a list).
pub fn list_of<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `ValidateNonnegativeField` for each of `fields` of `obj`, reported at `<path>.<field>`.
pub fn nonneg_fields(obj: &Value, path: &str, fields: &[&str], errs: &mut Vec<FieldError>) {
    for f in fields {
        if let Some(v) = obj.get(*f) {
            if v.as_i64().is_some_and(|n| n < 0) {
                errs.push(FieldError::invalid(
                    format!("{path}.{f}"),
                    v.clone(),
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
}
