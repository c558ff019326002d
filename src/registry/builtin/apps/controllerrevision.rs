//! ControllerRevisions (apps/v1): `ValidateControllerRevision` (data is mandatory, the
//! revision not negative) and its update (data never changes), and the printer.

use serde_json::Value;

use crate::meta::field_error::FieldError;
use crate::registry::strategy::{is_unset, Strategy};
use crate::registry::table::{printers, Printer};

pub struct ControllerRevisions;

impl Strategy for ControllerRevisions {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if is_unset(obj.get("data")) {
            errs.push(FieldError::required("data", "data is mandatory"));
        }
        if let Some(r) = obj
            .get("revision")
            .and_then(Value::as_i64)
            .filter(|r| *r < 0)
        {
            errs.push(FieldError::invalid("revision", r, super::NONNEG));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let (n, o) = (new.get("data"), old.get("data"));
        if is_unset(n) != is_unset(o) || (!is_unset(n) && n != o) {
            errs.push(match n.filter(|v| !v.is_null()) {
                None => FieldError::invalid("data", Value::Null, "field is immutable"),
                Some(v) => FieldError::invalid_rendered("data", &unknown(v), "field is immutable"),
            });
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::CR
    }
}

/// Go's `%#v` of the `runtime.Unknown` kube decodes `data` into (its raw JSON bytes).
fn unknown(data: &Value) -> String {
    let raw = serde_json::to_string(data).unwrap_or_default();
    let bytes: Vec<String> = raw.bytes().map(|b| format!("{b:#x}")).collect();
    format!(
        "runtime.Unknown{{TypeMeta:runtime.TypeMeta{{APIVersion:\"\", Kind:\"\"}}, Raw:[]uint8{{{}}}, ContentEncoding:\"\", ContentType:\"application/json\"}}",
        bytes.join(", ")
    )
}
