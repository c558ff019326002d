//! ConfigMaps (core/v1): key and size validation, immutability, and the printer.

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct ConfigMaps;

/// `core.MaxSecretSize`: the most data a ConfigMap or Secret may hold.
pub const MAX_SIZE: usize = 1024 * 1024;

/// The message of every change to an immutable ConfigMap or Secret.
pub const IMMUTABLE: &str = "field is immutable when `immutable` is set";

impl Strategy for ConfigMaps {
    fn quota(&self) -> Option<&'static dyn crate::registry::quota::Evaluator> {
        Some(&crate::registry::quota::Legacy("configmaps"))
    }

    /// `ValidateConfigMap`.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let data = obj.get("data").and_then(Value::as_object);
        let binary = obj.get("binaryData").and_then(Value::as_object);
        let mut total = 0usize;
        for (k, v) in data.into_iter().flatten() {
            key_errors(k, "data", &mut errs);
            if binary.is_some_and(|b| b.contains_key(k)) {
                errs.push(FieldError::invalid(
                    format!("data[{k}]"),
                    json!(k),
                    "duplicate of key present in binaryData",
                ));
            }
            total += v.as_str().map_or(0, str::len);
        }
        for (k, v) in binary.into_iter().flatten() {
            key_errors(k, "binaryData", &mut errs);
            total += v.as_str().map_or(0, decoded_len);
        }
        if total > MAX_SIZE {
            // `field.NewPath("")`: the whole object.
            errs.push(FieldError::too_long("[]", "", MAX_SIZE as i64));
        }
        errs
    }

    /// `ValidateConfigMapUpdate`: an immutable ConfigMap keeps its data.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if old.get("immutable") == Some(&json!(true)) {
            if new.get("immutable") != Some(&json!(true)) {
                errs.push(FieldError::forbidden("immutable", IMMUTABLE));
            }
            for f in ["data", "binaryData"] {
                if new.get(f) != old.get(f) {
                    errs.push(FieldError::forbidden(f, IMMUTABLE));
                }
            }
        }
        errs.extend(self.validate(new));
        errs
    }

    fn printer(&self) -> Printer {
        printers::CONFIGMAP
    }
}

/// The length of base64 (standard, padded) data once decoded.
pub fn decoded_len(b64: &str) -> usize {
    let n = b64.bytes().filter(|b| !matches!(b, b'\r' | b'\n')).count();
    let pad = b64.bytes().rev().take_while(|b| *b == b'=').count().min(2);
    (n / 4 * 3).saturating_sub(pad)
}

/// `validation.IsConfigMapKey` messages for `key`, as field errors at `<field>[<key>]`.
pub fn key_errors(key: &str, field: &str, errs: &mut Vec<FieldError>) {
    let mut msgs = Vec::new();
    if key.len() > 253 {
        msgs.push(crate::meta::validation::max_len_error(253));
    }
    let charset = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !charset {
        msgs.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".to_string());
    }
    if key == "." {
        msgs.push("must not be '.'".into());
    } else if key == ".." {
        msgs.push("must not be '..'".into());
    } else if key.starts_with("..") {
        msgs.push("must not start with '..'".into());
    }
    for m in msgs {
        errs.push(FieldError::invalid(
            format!("{field}[{key}]"),
            json!(key),
            m,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoded_lengths() {
        for (b64, n) in [
            ("", 0),
            ("YQ==", 1),
            ("YWI=", 2),
            ("YWJj", 3),
            ("YWJjZA==", 4),
        ] {
            assert_eq!(decoded_len(b64), n, "{b64}");
        }
    }

    #[test]
    fn key_messages() {
        let mut errs = Vec::new();
        key_errors("..a", "data", &mut errs);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].message(),
            "data[..a]: Invalid value: \"..a\": must not start with '..'"
        );
        let mut errs = Vec::new();
        key_errors("a b", "data", &mut errs);
        assert!(errs[0]
            .message()
            .starts_with("data[a b]: Invalid value: \"a b\": a valid config key"));
    }
}
