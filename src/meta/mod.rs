//! Pure apimachinery values: Status, field errors, selectors, name and ObjectMeta validation.
//! No I/O, no clock: everything here is a function of its inputs.

pub mod escape;
pub mod field_error;
pub mod fields;
pub mod labels;
pub mod status;
pub mod strict;
pub mod validation;

/// A copy of `v` with every object's keys sorted, as Go's `encoding/json` writes a decoded
/// map (`map[string]interface{}`).
pub fn sorted_keys(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted_keys(&m[k.as_str()])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}
