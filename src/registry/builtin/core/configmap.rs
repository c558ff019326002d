//! ConfigMaps (core/v1): key validation and the printer.

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct ConfigMaps;

impl Strategy for ConfigMaps {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_keys(obj, &["data", "binaryData"])
    }

    fn printer(&self) -> Printer {
        printers::CONFIGMAP
    }
}

/// `validation.IsConfigMapKey`.
pub fn valid_config_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 253
        && k != "."
        && k != ".."
        && !k.starts_with("..")
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The keys of the maps named by `fields` are config keys.
pub fn validate_keys(obj: &Value, fields: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in fields {
        if let Some(m) = obj.get(*field).and_then(Value::as_object) {
            for k in m.keys() {
                if !valid_config_key(k) {
                    errs.push(FieldError::invalid(
                        format!("{field}[{k}]"),
                        json!(k),
                        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                    ));
                }
            }
        }
    }
    errs
}
