//! The apps group's strategies, and the checks its workload kinds share (kube's
//! `pkg/apis/apps/validation`).

pub mod controllerrevision;
pub mod daemonset;
pub mod deployment;
pub mod replicaset;
pub mod statefulset;

use serde_json::{Map, Value};

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::labels::Selector;
use crate::meta::validation::{validate_annotations, validate_label_selector, validate_labels};

pub(crate) const NONNEG: &str = "must be greater than or equal to 0";

/// `spec.<field>` must not be negative (when set).
pub(crate) fn nonneg(spec: &Value, field: &str, errs: &mut Vec<FieldError>) {
    crate::registry::builtin::checks::nonneg_fields(spec, "spec", &[field], errs);
}

/// Go's `%#v` of a `map[string]string` (nil and empty differ).
pub(crate) fn go_string_map(v: Option<&Value>) -> String {
    match v.and_then(Value::as_object) {
        None => "map[string]string(nil)".into(),
        Some(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        go_quote(k),
                        go_quote(m[k.as_str()].as_str().unwrap_or(""))
                    )
                })
                .collect();
            format!("map[string]string{{{}}}", parts.join(", "))
        }
    }
}

/// Go's `%#v` of a (dereferenced) `metav1.LabelSelector`.
pub(crate) fn go_label_selector(sel: &Value) -> String {
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|e| {
                    let values = match e.get("values").and_then(Value::as_array) {
                        None => "[]string(nil)".to_string(),
                        Some(vs) => format!(
                            "[]string{{{}}}",
                            vs.iter()
                                .map(|v| go_quote(v.as_str().unwrap_or("")))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        go_quote(e.get("key").and_then(Value::as_str).unwrap_or("")),
                        go_quote(e.get("operator").and_then(Value::as_str).unwrap_or(""))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{exprs}}}",
        go_string_map(sel.get("matchLabels"))
    )
}

/// A selector with neither matchLabels nor matchExpressions.
fn empty_selector(sel: &Value) -> bool {
    let n = |k: &str| match sel.get(k) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    n("matchLabels") + n("matchExpressions") == 0
}

/// The selector of a required-selector workload (`word` names it in the empty-selector
/// message), then its template against it (`kind` names it in the template rules, `pod_spec`
/// says whether the pod spec is validated); a selector that does not convert is `Invalid`
/// with `unconvertible` as the detail.
pub(crate) fn check_selector_and_template(
    spec: &Value,
    word: &str,
    kind: &str,
    pod_spec: PodSpec,
    unconvertible: &str,
    errs: &mut Vec<FieldError>,
) {
    match check_selector(spec, word, true, errs) {
        Ok(sel) => check_template(spec, &sel, kind, pod_spec, errs),
        Err(()) => errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &go_label_selector(spec.get("selector").unwrap_or(&Value::Null)),
            unconvertible,
        )),
    }
}

/// The update rule of upstream's ReplicaSet and DaemonSet strategies: the object, then the
/// update (which validates the spec again, so each spec error is listed twice among the
/// causes), then the immutable selector.
pub(crate) fn validate_update_twice(
    validate: impl Fn() -> Vec<FieldError>,
    new: &Value,
    old: &Value,
) -> Vec<FieldError> {
    let mut errs = validate();
    errs.extend(validate());
    immutable_selector(new, old, &mut errs);
    errs
}

/// apps/v1's selector immutability (appended after the spec's errors).
pub(crate) fn immutable_selector(new: &Value, old: &Value, errs: &mut Vec<FieldError>) {
    let (n, o) = (new.pointer("/spec/selector"), old.pointer("/spec/selector"));
    if !same_selector(n, o) {
        errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &go_label_selector(n.unwrap_or(&Value::Null)),
            "field is immutable",
        ));
    }
}

/// `Semantic.DeepEqual` of two selectors (nil and empty collections are equal).
pub(crate) fn same_selector(a: Option<&Value>, b: Option<&Value>) -> bool {
    let norm = |v: Option<&Value>| -> Value {
        let mut out = Map::new();
        if let Some(Value::Object(m)) = v {
            for (k, val) in m {
                let empty = match val {
                    Value::Object(o) => o.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    Value::Null => true,
                    _ => false,
                };
                if !empty {
                    out.insert(k.clone(), val.clone());
                }
            }
        }
        Value::Object(out)
    };
    norm(a) == norm(b)
}

/// The selector checks of a workload spec: required (`required`), kube's label selector
/// rules, not empty (`empty selector is invalid for <word>`); then the selector itself when it
/// converts (an absent one converts to "nothing").
pub(crate) fn check_selector(
    spec: &Value,
    word: &str,
    required: bool,
    errs: &mut Vec<FieldError>,
) -> Result<Selector, ()> {
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => {
            if required {
                errs.push(FieldError::required("spec.selector", ""));
            }
            Ok(Selector::nothing())
        }
        Some(sel) => {
            errs.extend(validate_label_selector(sel, "spec.selector"));
            if empty_selector(sel) {
                errs.push(FieldError::invalid_rendered(
                    "spec.selector",
                    &go_label_selector(sel),
                    &format!("empty selector is invalid for {word}"),
                ));
            }
            Selector::from_label_selector(sel).map_err(|_| ())
        }
    }
}

/// Whether a workload's pod template spec is validated as a pod's.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum PodSpec {
    Validated,
    /// StatefulSets: upstream leaves the template's spec alone (its volume mounts may name
    /// a `volumeClaimTemplates` claim that is not among its volumes).
    Unchecked,
}

/// `ValidatePodTemplateSpecForReplicaSet` and friends: the template's labels must match the
/// selector; then the template itself (its pod spec only with [`PodSpec::Validated`]); pods
/// of these controllers always restart and have no deadline (`kind` words the message:
/// `activeDeadlineSeconds in ReplicaSet is not Supported`).
pub(crate) fn check_template(
    spec: &Value,
    selector: &Selector,
    kind: &str,
    pod_spec: PodSpec,
    errs: &mut Vec<FieldError>,
) {
    let template = spec.get("template").unwrap_or(&Value::Null);
    let labels = template.pointer("/metadata/labels");
    let empty = Map::new();
    let label_map = labels.and_then(Value::as_object).unwrap_or(&empty);
    if !selector.is_empty() && !selector.matches(label_map) {
        errs.push(FieldError::invalid_rendered(
            "spec.template.metadata.labels",
            &go_string_map(labels),
            "`selector` does not match template `labels`",
        ));
    }
    // ValidatePodTemplateSpec: metadata at `spec.template.labels` / `.annotations` (sic).
    errs.extend(validate_labels(
        labels.and_then(Value::as_object),
        "spec.template.labels",
    ));
    if let Some(a) = template
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    {
        errs.extend(validate_annotations(Some(a), "spec.template.annotations"));
    }
    if pod_spec == PodSpec::Validated {
        crate::registry::builtin::core::pod_validation::validate_pod_spec(
            template.get("spec").unwrap_or(&Value::Null),
            "spec.template.spec",
            errs,
        );
    }
    if let Some(p) = template
        .pointer("/spec/restartPolicy")
        .and_then(Value::as_str)
    {
        if p != "Always" {
            errs.push(FieldError::not_supported(
                "spec.template.spec.restartPolicy",
                p,
                &["Always"],
            ));
        }
    }
    if template
        .pointer("/spec/activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
}

/// A percent string (`^[0-9]+%$`) or a non-negative integer (`ValidatePositiveIntOrPercent`).
pub(crate) fn check_int_or_percent(v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match v {
        Value::String(s) => {
            let digits = s.strip_suffix('%');
            if !digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) {
                errs.push(FieldError::invalid_rendered(
                    path,
                    &go_int_or_string(v),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                ));
            }
        }
        Value::Number(n) if n.as_i64().is_some_and(|i| i < 0) => {
            errs.push(FieldError::invalid_rendered(
                path,
                &go_int_or_string(v),
                NONNEG,
            ));
        }
        _ => {}
    }
}

/// The value an int-or-percent resolves to against 100 (percent) — 0 for unset.
pub(crate) fn int_or_percent_value(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => s
            .strip_suffix('%')
            .and_then(|d| d.parse::<i64>().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// Go's `%#v` of an `intstr.IntOrString` (v1.33 prints the struct).
pub(crate) fn go_int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            go_quote(s)
        ),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or(0)
        ),
    }
}

/// Whether an int-or-percent is a percent above 100.
pub(crate) fn over_100_percent(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(s)) if s.ends_with('%') && int_or_percent_value(v) > 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_renderings() {
        assert_eq!(
            go_label_selector(&json!({"matchLabels": {"app": "b"}})),
            "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
        assert_eq!(
            go_label_selector(&json!({})),
            "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
        assert_eq!(go_string_map(None), "map[string]string(nil)");
        assert_eq!(
            go_int_or_string(&json!(0)),
            "intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}"
        );
        assert!(same_selector(
            Some(&json!({"matchLabels": {"a": "b"}, "matchExpressions": []})),
            Some(&json!({"matchLabels": {"a": "b"}}))
        ));
    }
}
