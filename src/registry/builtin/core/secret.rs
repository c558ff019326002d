//! Secrets (core/v1): the Opaque default, `stringData` merged into `data`, key, size and
//! type validation, immutability, field selectors and the printer.

use serde_json::{json, Value};

use super::configmap::{decoded_len, key_errors, IMMUTABLE, MAX_SIZE};
use crate::meta::field_error::FieldError;
use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct Secrets;

impl Strategy for Secrets {
    fn quota(&self) -> Option<&'static dyn crate::registry::quota::Evaluator> {
        Some(&crate::registry::quota::Legacy("secrets"))
    }

    fn default(&self, obj: &mut Value) {
        let Some(o) = obj.as_object_mut() else {
            return;
        };
        o.entry("type").or_insert(json!("Opaque"));
        // stringData is write-only: merged into data (base64).
        if let Some(sd) = o.remove("stringData") {
            use base64::Engine;
            let data = o.entry("data").or_insert(json!({}));
            if let (Some(d), Some(sd)) = (data.as_object_mut(), sd.as_object()) {
                for (k, v) in sd {
                    let s = v.as_str().unwrap_or_default();
                    d.insert(
                        k.clone(),
                        json!(base64::engine::general_purpose::STANDARD.encode(s)),
                    );
                }
            }
        }
    }

    /// `ValidateSecret`.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let data = obj.get("data").and_then(Value::as_object);
        let mut total = 0usize;
        for (k, v) in data.into_iter().flatten() {
            key_errors(k, "data", &mut errs);
            total += v.as_str().map_or(0, decoded_len);
        }
        if total > MAX_SIZE {
            errs.push(FieldError::too_long("data", "", MAX_SIZE as i64));
        }
        let has = |k: &str| data.is_some_and(|d| d.contains_key(k));
        let value = |k: &str| -> Vec<u8> {
            use base64::Engine;
            data.and_then(|d| d.get(k))
                .and_then(Value::as_str)
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
                .unwrap_or_default()
        };
        match obj.get("type").and_then(Value::as_str).unwrap_or("") {
            "kubernetes.io/service-account-token" => {
                let name = obj
                    .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if name.is_empty() {
                    errs.push(FieldError::required(
                        "metadata.annotations[kubernetes.io/service-account.name]",
                        "",
                    ));
                }
            }
            t @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
                let key = if t.ends_with("dockercfg") {
                    ".dockercfg"
                } else {
                    ".dockerconfigjson"
                };
                if !has(key) {
                    errs.push(FieldError::required(format!("data[{key}]"), ""));
                } else if let Err(e) = docker_config(&value(key)) {
                    errs.push(FieldError::invalid(
                        format!("data[{key}]"),
                        "<secret contents redacted>",
                        e,
                    ));
                }
            }
            "kubernetes.io/basic-auth" => {
                if !has("username") && !has("password") {
                    errs.push(FieldError::required("data[username]", ""));
                    errs.push(FieldError::required("data[password]", ""));
                }
            }
            "kubernetes.io/ssh-auth" => {
                if value("ssh-privatekey").is_empty() {
                    errs.push(FieldError::required("data[ssh-privatekey]", ""));
                }
            }
            "kubernetes.io/tls" => {
                for key in ["tls.crt", "tls.key"] {
                    if !has(key) {
                        errs.push(FieldError::required(format!("data[{key}]"), ""));
                    }
                }
            }
            _ => {}
        }
        errs
    }

    /// `ValidateSecretUpdate`: the type never changes; an immutable Secret keeps its data.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let (nt, ot) = (new.get("type"), old.get("type"));
        if nt != ot {
            errs.push(FieldError::invalid(
                "type",
                nt.cloned().unwrap_or(json!("")),
                "field is immutable",
            ));
        }
        if old.get("immutable") == Some(&json!(true)) {
            if new.get("immutable") != Some(&json!(true)) {
                errs.push(FieldError::forbidden("immutable", IMMUTABLE));
            }
            if new.get("data") != old.get("data") {
                errs.push(FieldError::forbidden("data", IMMUTABLE));
            }
        }
        errs.extend(self.validate(new));
        errs
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn printer(&self) -> Printer {
        printers::SECRET
    }
}

/// A docker config must be a JSON object (`json.Unmarshal` into a map); the error is Go's.
fn docker_config(bytes: &[u8]) -> Result<(), String> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(_)) => Ok(()),
        Ok(other) => {
            let kind = match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                Value::Bool(_) => "bool",
                _ => return Ok(()), // null unmarshals into a nil map
            };
            Err(format!(
                "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            ))
        }
        Err(_) => {
            let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
            Err(match first {
                None => "unexpected end of JSON input".to_string(),
                Some(b) => format!(
                    "invalid character {} looking for beginning of value",
                    go_char(*b)
                ),
            })
        }
    }
}

/// Go's `quoteChar` as encoding/json's syntax errors print it.
fn go_char(b: u8) -> String {
    match b {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        32..=126 => format!("'{}'", b as char),
        _ => format!("'\\x{b:02x}'"),
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("type", "type"),
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
    ],
    reject: not_supported,
    extract: secret_fields,
};

fn secret_fields(obj: &Value, put: Put<'_>) {
    put("type", fields::text(obj, &["type"]));
}
