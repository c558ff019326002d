//! Secrets (core/v1): the Opaque default, `stringData` merged into `data`, key validation,
//! field selectors and the printer.

use serde_json::{json, Value};

use super::configmap::validate_keys;
use crate::meta::field_error::FieldError;
use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct Secrets;

impl Strategy for Secrets {
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

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_keys(obj, &["data", "stringData"])
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn printer(&self) -> Printer {
        printers::SECRET
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
