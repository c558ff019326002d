//! Field-level validation errors, modelled on
//! `k8s.io/apimachinery/pkg/util/validation/field` (`field.Error`, `field.ErrorList`).
//!
//! Owns: the error kinds and their machine names (`FieldValueInvalid`, ...), the exact
//! human text of `field.Error.Error()` / `ErrorBody()` (how Go's `%q` / `%v` / `%#v` print a bad
//! value), the `StatusCause` JSON that `errors.NewInvalid` puts into `details.causes`, the
//! `ErrorList.ToAggregate().Error()` text, and the full 422 message
//! `Kind.group "name" is invalid: ...`.
//!
//! Deliberately does not know: which fields exist on which objects, HTTP status codes, or how
//! a `Status` object is assembled (the server builds that from [`FieldError::cause`] and
//! [`invalid_status_message`]).
//!
//! Bad values are kept as `serde_json::Value`. Go prints some values through `fmt.Stringer` or
//! `%#v` of a typed struct, which JSON cannot express; for those, constructors such as
//! [`FieldError::invalid_rendered`] keep `bad_value: None` and fold the Go rendering into
//! `detail`, so `message()` and `cause()` still match upstream byte for byte.

use serde_json::{Map, Value};

/// Machine-readable reason of a field error (`metav1.CauseType`).
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Internal,
    TypeInvalid,
}

impl ErrorType {
    /// The `reason` string of a StatusCause, e.g. `FieldValueInvalid`.
    pub fn reason(&self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The human prefix used by `ErrorType.String()`, e.g. `Invalid value`.
    pub fn text(&self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
            ErrorType::TypeInvalid => "Invalid value",
        }
    }

    /// Kinds whose body never prints the bad value.
    fn omits_value(&self) -> bool {
        matches!(
            self,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        )
    }
}

/// One field-level validation error (`field.Error`).
///
/// `bad_value: None` means "print no value" (Go's `omitValue`, and always for
/// Required/Forbidden/TooLong/Internal).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub kind: ErrorType,
    pub field: String,
    pub bad_value: Option<Value>,
    pub detail: String,
}

impl FieldError {
    fn new(kind: ErrorType, field: impl Into<String>, bad: Option<Value>, detail: String) -> Self {
        FieldError {
            kind,
            field: field.into(),
            bad_value: bad,
            detail,
        }
    }

    /// `field.Invalid(path, value, detail)`.
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(ErrorType::Invalid, field, Some(value.into()), detail.into())
    }

    /// `field.Invalid` for a value Go prints through `String()` or `%#v` (a timestamp, a typed
    /// struct): `rendered` is printed verbatim where the value goes.
    pub fn invalid_rendered(field: impl Into<String>, rendered: &str, detail: &str) -> Self {
        let detail = if detail.is_empty() {
            rendered.to_string()
        } else {
            format!("{rendered}: {detail}")
        };
        Self::new(ErrorType::Invalid, field, None, detail)
    }

    /// `field.TypeInvalid(path, value, detail)`.
    pub fn type_invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(
            ErrorType::TypeInvalid,
            field,
            Some(value.into()),
            detail.into(),
        )
    }

    /// `field.Required(path, detail)`.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, None, detail.into())
    }

    /// `field.Forbidden(path, detail)`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, field, None, detail.into())
    }

    /// `field.NotFound(path, value)`.
    pub fn not_found(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(
            ErrorType::NotFound,
            field,
            Some(value.into()),
            String::new(),
        )
    }

    /// `field.Duplicate(path, value)`.
    pub fn duplicate(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(
            ErrorType::Duplicate,
            field,
            Some(value.into()),
            String::new(),
        )
    }

    /// `field.NotSupported(path, value, validValues)`: detail is
    /// `supported values: "a", "b"` (empty when `valid` is empty).
    pub fn not_supported(
        field: impl Into<String>,
        value: impl Into<Value>,
        valid: &[&str],
    ) -> Self {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, field, Some(value.into()), detail)
    }

    /// `field.TooLong(path, value, maxLength)`: the value is never printed;
    /// detail `may not be more than N bytes` (or `value is too long` when `max < 0`).
    pub fn too_long(field: impl Into<String>, _value: impl Into<Value>, max: i64) -> Self {
        let detail = if max >= 0 {
            format!("may not be more than {max} bytes")
        } else {
            "value is too long".to_string()
        };
        Self::new(ErrorType::TooLong, field, None, detail)
    }

    /// `field.TooMany(path, actual, max)`: detail `must have at most N items`; a negative
    /// `actual` omits the value.
    pub fn too_many(field: impl Into<String>, actual: i64, max: i64) -> Self {
        let detail = if max >= 0 {
            format!("must have at most {max} items")
        } else {
            "has too many items".to_string()
        };
        let bad = (actual >= 0).then(|| Value::from(actual));
        Self::new(ErrorType::TooMany, field, bad, detail)
    }

    /// `field.InternalError(path, err)`.
    pub fn internal(field: impl Into<String>, err: impl Into<String>) -> Self {
        Self::new(ErrorType::Internal, field, None, err.into())
    }

    /// `field.Error.ErrorBody()`: the message without the field path, e.g.
    /// `Invalid value: "Foo": a lowercase RFC 1123 ...`.
    pub fn body(&self) -> String {
        let mut s = self.kind.text().to_string();
        if !self.kind.omits_value() {
            if let Some(v) = &self.bad_value {
                s.push_str(": ");
                s.push_str(&go_value(v));
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// `field.Error.Error()`: `<field>: <body>`, e.g.
    /// `metadata.name: Invalid value: "Foo": a lowercase RFC 1123 ...`.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }

    /// The `metav1.StatusCause` for this error as `errors.NewInvalid` builds it:
    /// `{"reason":"FieldValueInvalid","message":"Invalid value: ...","field":"metadata.name"}`
    /// (empty `field` omitted, as Go's `omitempty` does).
    pub fn cause(&self) -> Value {
        let mut m = Map::new();
        m.insert("reason".into(), Value::from(self.kind.reason()));
        let body = self.body();
        if !body.is_empty() {
            m.insert("message".into(), Value::from(body));
        }
        if !self.field.is_empty() {
            m.insert("field".into(), Value::from(self.field.clone()));
        }
        Value::Object(m)
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for FieldError {}

/// `ErrorList.ToAggregate().Error()`: duplicates (same message) dropped; one error → its
/// message; several → `[a, b]`; none → empty string.
pub fn aggregate_message(errs: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        let m = e.message();
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// Deduplicated causes, in order, for `details.causes` of a 422 (kube keeps every error as a
/// cause, including duplicates; this returns them all, like `errors.NewInvalid`).
pub fn causes(errs: &[FieldError]) -> Vec<Value> {
    errs.iter().map(FieldError::cause).collect()
}

/// `errors.NewInvalid(qualifiedKind, name, errs).ErrStatus.Message`:
/// `Pod "x" is invalid: <aggregate>` or `Deployment.apps "x" is invalid: ...`
/// (`qualifiedKind.String()` is `Kind` for the core group, `Kind.group` otherwise).
pub fn invalid_status_message(group: &str, kind: &str, name: &str, errs: &[FieldError]) -> String {
    let gk = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let agg = aggregate_message(errs);
    if agg.is_empty() {
        format!("{gk} {} is invalid", go_quote(name))
    } else {
        format!("{gk} {} is invalid: {agg}", go_quote(name))
    }
}

/// Go's `strconv.Quote`: double-quoted, with Go escapes for `"`, `\`, control and
/// non-printable characters (printable Unicode is kept as is).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if !go_is_print(c) => {
                let n = c as u32;
                if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Approximation of Go's `unicode.IsPrint` (letters, marks, numbers, punctuation, symbols and
/// ASCII space): control, non-ASCII spaces, format characters and private use are not printable.
pub fn go_is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let n = c as u32;
    let format_or_private = matches!(n,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E
        | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0xE000..=0xF8FF
        | 0x110BD | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F | 0xF0000..=0x10FFFF);
    !format_or_private
}

/// Go's `%#v` of a decoded JSON value (`map[string]interface {}{...}`, `[]interface {}{...}`).
pub fn go_sharp(v: &Value) -> String {
    fn inner(v: &Value) -> String {
        match v {
            Value::Null => "interface {}(nil)".into(),
            Value::Array(a) => format!(
                "[]interface {{}}{{{}}}",
                a.iter().map(inner).collect::<Vec<_>>().join(", ")
            ),
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let parts: Vec<String> = keys
                    .iter()
                    .map(|k| {
                        let v = m.get(k.as_str()).map(inner).unwrap_or_default();
                        format!("{}:{v}", go_value(&Value::String(k.to_string())))
                    })
                    .collect();
                format!("map[string]interface {{}}{{{}}}", parts.join(", "))
            }
            scalar => go_value(scalar),
        }
    }
    inner(v)
}

/// How `ErrorBody` prints a bad value: strings `%q`, numbers and bools bare, null as `"null"`,
/// string lists / string maps as Go's `%#v` (`[]string{"a", "b"}`,
/// `map[string]string{"k":"v"}`), anything else as compact JSON.
pub fn go_value(v: &Value) -> String {
    match v {
        Value::Null => go_quote("null"),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => go_quote(s),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let parts: Vec<String> = items.iter().map(go_value).collect();
            format!("[]string{{{}}}", parts.join(", "))
        }
        Value::Object(m) if !m.is_empty() && m.values().all(Value::is_string) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", go_quote(k), go_value(&m[k.as_str()])))
                .collect();
            format!("map[string]string{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// Go's `%v` for numbers: integers in decimal; floats in shortest `%g` form, which switches to
/// exponent notation when the decimal exponent is below -4 or at least 6 (`1e+06`).
fn go_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    if f == 0.0 {
        return "0".to_string();
    }
    let sci = format!("{f:e}");
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return f.to_string();
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        f.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages() {
        let label_msg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
        let cases: Vec<(FieldError, &str)> = vec![
            (
                FieldError::invalid("metadata.name", "Foo", label_msg),
                "metadata.name: Invalid value: \"Foo\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            ),
            (FieldError::invalid("spec.replicas", -1, "must be greater than or equal to 0"),
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
            (FieldError::invalid("spec.x", true, "bad"), "spec.x: Invalid value: true: bad"),
            (FieldError::invalid("spec.x", 1.5, "bad"), "spec.x: Invalid value: 1.5: bad"),
            (FieldError::invalid("spec.x", Value::Null, "bad"), "spec.x: Invalid value: \"null\": bad"),
            (FieldError::invalid("spec.x", json!(["a", "b"]), "bad"), "spec.x: Invalid value: []string{\"a\", \"b\"}: bad"),
            (FieldError::invalid("spec.x", json!({"b": "2", "a": "1"}), "bad"), "spec.x: Invalid value: map[string]string{\"a\":\"1\", \"b\":\"2\"}: bad"),
            (FieldError::invalid("spec.x", "a\"b\\c\n", "bad"), "spec.x: Invalid value: \"a\\\"b\\\\c\\n\": bad"),
            (FieldError::invalid("spec.x", "é\u{1}\u{200b}", "bad"), "spec.x: Invalid value: \"é\\x01\\u200b\": bad"),
            (FieldError::invalid("spec.x", "", ""), "spec.x: Invalid value: \"\""),
            (FieldError::required("metadata.name", "name or generateName is required"),
                "metadata.name: Required value: name or generateName is required"),
            (FieldError::required("metadata.namespace", ""), "metadata.namespace: Required value"),
            (FieldError::forbidden("metadata.namespace", "not allowed on this type"),
                "metadata.namespace: Forbidden: not allowed on this type"),
            (FieldError::not_supported("spec.restartPolicy", "Sometimes", &["Always", "Never", "OnFailure"]),
                "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\", \"OnFailure\""),
            (FieldError::not_supported("x", "y", &[]), "x: Unsupported value: \"y\""),
            (FieldError::duplicate("spec.ports[1]", "80/TCP"), "spec.ports[1]: Duplicate value: \"80/TCP\""),
            (FieldError::not_found("spec.x", "abc"), "spec.x: Not found: \"abc\""),
            (FieldError::too_long("metadata.annotations", "", 262144),
                "metadata.annotations: Too long: may not be more than 262144 bytes"),
            (FieldError::too_long("x", "", -1), "x: Too long: value is too long"),
            (FieldError::too_many("spec.items", 5, 4), "spec.items: Too many: 5: must have at most 4 items"),
            (FieldError::too_many("spec.items", -1, 4), "spec.items: Too many: must have at most 4 items"),
            (FieldError::internal("spec", "boom"), "spec: Internal error: boom"),
            (FieldError::type_invalid("spec.x", "s", "must be integer"), "spec.x: Invalid value: \"s\": must be integer"),
            (FieldError::invalid_rendered("metadata.creationTimestamp", "2024-01-02 03:04:05 +0000 UTC", "field is immutable"),
                "metadata.creationTimestamp: Invalid value: 2024-01-02 03:04:05 +0000 UTC: field is immutable"),
        ];
        for (e, want) in cases {
            assert_eq!(e.message(), want);
            assert_eq!(e.to_string(), want);
        }
    }

    #[test]
    fn cause_json() {
        let e = FieldError::invalid("metadata.name", "Foo", "bad name");
        assert_eq!(
            serde_json::to_string(&e.cause()).unwrap(),
            r#"{"reason":"FieldValueInvalid","message":"Invalid value: \"Foo\": bad name","field":"metadata.name"}"#
        );
        let e = FieldError::required("", "x");
        assert_eq!(
            e.cause(),
            json!({"reason":"FieldValueRequired","message":"Required value: x"})
        );
        let e = FieldError::too_long("metadata.annotations", "", 262144);
        assert_eq!(e.cause()["reason"], "FieldValueTooLong");
        assert_eq!(causes(&[e.clone(), e]).len(), 2);
    }

    #[test]
    fn aggregate() {
        let a = FieldError::required("metadata.name", "name or generateName is required");
        let b = FieldError::forbidden("metadata.namespace", "not allowed on this type");
        assert_eq!(aggregate_message(&[]), "");
        assert_eq!(aggregate_message(std::slice::from_ref(&a)), a.message());
        assert_eq!(aggregate_message(&[a.clone(), a.clone()]), a.message());
        assert_eq!(
            aggregate_message(&[a.clone(), b.clone(), a.clone()]),
            format!("[{}, {}]", a.message(), b.message())
        );
        assert_eq!(
            invalid_status_message("", "Pod", "x", std::slice::from_ref(&a)),
            "Pod \"x\" is invalid: metadata.name: Required value: name or generateName is required"
        );
        assert_eq!(
            invalid_status_message("apps", "Deployment", "d", &[]),
            "Deployment.apps \"d\" is invalid"
        );
    }

    #[test]
    fn numbers() {
        let cases = [
            (json!(0), "0"),
            (json!(-7), "-7"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(2.0), "2"),
            (json!(0.25), "0.25"),
            (json!(999999.5), "999999.5"),
            (json!(1234567.0), "1.234567e+06"),
            (json!(0.0001), "0.0001"),
            (json!(0.00001), "1e-05"),
            (json!(-2.5e300), "-2.5e+300"),
            (json!(1e21), "1e+21"),
            (json!(1e-7), "1e-07"),
        ];
        for (v, want) in cases {
            assert_eq!(go_value(&v), want, "{v}");
        }
    }
}
