//! The node.k8s.io group's strategy: RuntimeClasses (`ValidateRuntimeClass(Update)`: the
//! handler, pod overhead, scheduling constraints; the handler never changes).

use serde_json::Value;

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{is_dns1123_label, validate_labels};
use crate::registry::builtin::checks::{
    duplicate_rendered, go_pointer, list_of as list, str_of as text,
};
use crate::registry::builtin::core::pod_validation::{
    validate_resource_requirements, validate_tolerations,
};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct RuntimeClasses;

/// Go's `%#v` of a `core.Toleration`.
fn go_toleration(t: &Value) -> String {
    let secs = go_pointer("int64", t.get("tolerationSeconds"));
    format!(
        "core.Toleration{{Key:{}, Operator:{}, Value:{}, Effect:{}, TolerationSeconds:{secs}}}",
        go_quote(text(t, "key")),
        go_quote(text(t, "operator")),
        go_quote(text(t, "value")),
        go_quote(text(t, "effect")),
    )
}

impl Strategy for RuntimeClasses {
    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let handler = text(obj, "handler");
        for m in is_dns1123_label(handler) {
            errs.push(FieldError::invalid("handler", handler, m));
        }
        if let Some(o) = obj.get("overhead").filter(|v| !v.is_null()) {
            let limits =
                serde_json::json!({"limits": o.get("podFixed").cloned().unwrap_or(Value::Null)});
            validate_resource_requirements(&limits, "overhead", &mut errs);
        }
        if let Some(s) = obj.get("scheduling").filter(|v| !v.is_null()) {
            if let Some(sel) = s.get("nodeSelector").and_then(Value::as_object) {
                errs.extend(validate_labels(Some(sel), "scheduling.nodeSelector"));
            }
            validate_tolerations(s, "scheduling", &mut errs);
            let mut seen: Vec<[&str; 4]> = Vec::new();
            for (i, t) in list(s, "tolerations").iter().enumerate() {
                let key = ["key", "operator", "value", "effect"].map(|f| text(t, f));
                if seen.contains(&key) {
                    errs.push(duplicate_rendered(
                        &format!("scheduling.tolerations[{i}]"),
                        &go_toleration(t),
                    ));
                } else {
                    seen.push(key);
                }
            }
        }
        errs
    }

    /// The class again, then the handler never changes.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if text(new, "handler") != text(old, "handler") {
            errs.push(FieldError::invalid(
                "handler",
                text(new, "handler"),
                "field is immutable",
            ));
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::RUNTIMECLASS
    }
}
