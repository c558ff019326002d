//! Name and ObjectMeta validation, modelled on `k8s.io/apimachinery/pkg/util/validation`,
//! `k8s.io/apimachinery/pkg/api/validation` (`objectmeta.go`, `generic.go`, `path/name.go`),
//! `pkg/apis/meta/v1/validation` (labels, managedFields, LabelSelector) and the extra
//! finalizer check of kubernetes' `pkg/apis/core/validation.ValidateObjectMeta`.
//!
//! Owns: the string checks (`IsDNS1123Subdomain`, `IsQualifiedName`, ...) with upstream's exact
//! messages, the name rules a resource can use ([`NameRule`]), and create/update validation of
//! `metadata` given as JSON.
//!
//! Deliberately does not know: which resource uses which [`NameRule`] or is namespaced (the
//! caller passes that), defaulting or mutation of metadata (generateName expansion, uid,
//! timestamps, `rest.BeforeCreate/BeforeUpdate`), nor type-specific spec validation.
//! Everything here is pure: no clock, no I/O.

use super::field_error::FieldError;
use serde_json::{Map, Value};

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX: usize = 63;
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX: usize = 63;
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL_MAX: usize = 63;
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX: usize = 253;
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const DNS1035_LABEL_MAX: usize = 63;

/// `FieldImmutableErrorMsg`.
pub const FIELD_IMMUTABLE: &str = "field is immutable";
/// `TotalAnnotationSizeLimitB` (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
const FIELD_MANAGER_MAX: usize = 128;
const MAX_SUBRESOURCE_NAME_LENGTH: usize = 256;

/// `validation.MaxLenError`.
pub fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `validation.EmptyError`.
pub fn empty_error() -> String {
    "must be non-empty".to_string()
}

/// `validation.RegexError` (including upstream's `'a',  or 'b', ` spacing quirk).
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push('\'');
        s.push_str(e);
        s.push_str("', ");
    }
    s.push_str("regex used for validation is '");
    s.push_str(fmt);
    s.push_str("')");
    s
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_lower_alnum(b[0])
        && is_lower_alnum(b[b.len() - 1])
        && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
}

/// `^label(\.label)*$`
fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(matches_dns1123_label)
}

/// `^[a-z]([-a-z0-9]*[a-z0-9])?$`
fn matches_dns1035_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && is_lower_alnum(b[b.len() - 1])
        && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn matches_qualified_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_alnum(b[0])
        && is_alnum(b[b.len() - 1])
        && b.iter()
            .all(|&c| is_alnum(c) || c == b'-' || c == b'_' || c == b'.')
}

/// `validation.IsDNS1123Label`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_error(DNS1123_LABEL_MAX));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `validation.IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `validation.IsDNS1035Label`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX {
        errs.push(max_len_error(DNS1035_LABEL_MAX));
    }
    if !matches_dns1035_label(value) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `validation.IsQualifiedName`: `[prefix/]name`, as used for label keys, annotation keys
/// (lower-cased first) and finalizers.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.len() {
        1 => parts[0],
        2 => {
            let prefix = parts[0];
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                for m in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {m}"));
                }
            }
            parts[1]
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_ERR,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX)));
    }
    if !matches_qualified_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `validation.IsValidLabelValue`.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX {
        errs.push(max_len_error(LABEL_VALUE_MAX));
    }
    if !(value.is_empty() || matches_qualified_name(value)) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `path.ValidatePathSegmentName(name, prefix)`: names used as a single URL path segment
/// (may not be `.`/`..`, may not contain `/` or `%`; with `prefix` only the containment rules).
pub fn validate_path_segment_name(name: &str, prefix: bool) -> Vec<String> {
    if !prefix {
        for illegal in [".", ".."] {
            if name == illegal {
                return vec![format!("may not be '{illegal}'")];
            }
        }
    }
    let mut errs = Vec::new();
    for illegal in ["/", "%"] {
        if name.contains(illegal) {
            errs.push(format!("may not contain '{illegal}'"));
        }
    }
    errs
}

/// How a resource validates `metadata.name` / `generateName`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain` (most resources).
    Dns1123Subdomain,
    /// `NameIsDNSLabel` (namespaces, ...).
    Dns1123Label,
    /// `NameIsDNS1035Label` (services, ...).
    Dns1035Label,
    /// `path.ValidatePathSegmentName` (RBAC objects, ...).
    PathSegment,
}

/// `maskTrailingDash`: upstream replaces the last *two* bytes of a dash-terminated
/// generateName with `a` (so `ab-` is checked as `aa`).
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        // name ends with the ASCII '-', so len-2 is a char boundary unless the byte before the
        // dash is part of a multi-byte character; fall back to a safe cut in that case.
        let cut = name.len() - 2;
        if name.is_char_boundary(cut) {
            return format!("{}a", &name[..cut]);
        }
        let mut head = name[..name.len() - 1].to_string();
        head.pop();
        head.push('a');
        return head;
    }
    name.to_string()
}

/// `ValidateNameFunc(name, prefix)` for the given rule; `prefix` is true for `generateName`.
pub fn validate_name(rule: NameRule, name: &str, prefix: bool) -> Vec<String> {
    match rule {
        NameRule::PathSegment => validate_path_segment_name(name, prefix),
        _ => {
            let n = if prefix {
                mask_trailing_dash(name)
            } else {
                name.to_string()
            };
            match rule {
                NameRule::Dns1123Subdomain => is_dns1123_subdomain(&n),
                NameRule::Dns1123Label => is_dns1123_label(&n),
                _ => is_dns1035_label(&n),
            }
        }
    }
}

/// The `metadata` member of a whole object, or the value itself when it already is metadata
/// (ObjectMeta has no `metadata` field, so this is unambiguous).
fn metadata_of(v: &Value) -> &Value {
    match v.get("metadata") {
        Some(m) if m.is_object() => m,
        _ => v,
    }
}

fn str_of<'a>(m: &'a Value, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or("")
}

fn obj_of<'a>(m: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    m.get(key).and_then(Value::as_object)
}

fn arr_of<'a>(m: &'a Value, key: &str) -> &'a [Value] {
    m.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// `v1validation.ValidateLabelName`.
pub fn validate_label_name(key: &str, path: &str) -> Vec<FieldError> {
    is_qualified_name(key)
        .into_iter()
        .map(|m| FieldError::invalid(path, key, m))
        .collect()
}

/// `v1validation.ValidateLabels` over a JSON map (non-string values are ignored; decoding
/// rejects them before validation).
pub fn validate_labels(labels: Option<&Map<String, Value>>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels.into_iter().flatten() {
        errs.extend(validate_label_name(k, path));
        if let Some(v) = v.as_str() {
            for m in is_valid_label_value(v) {
                errs.push(FieldError::invalid(path, v, m));
            }
        }
    }
    errs
}

/// `ValidateAnnotations`: keys are qualified names after lower-casing; total size of keys and
/// values at most 256 KiB (`Too long: may not be more than 262144 bytes`).
pub fn validate_annotations(
    annotations: Option<&Map<String, Value>>,
    path: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations.into_iter().flatten() {
        for m in is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path, k.as_str(), m));
        }
        total += k.len() + v.as_str().map(str::len).unwrap_or(0);
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            path,
            "",
            TOTAL_ANNOTATION_SIZE_LIMIT as i64,
        ));
    }
    errs
}

/// `validateOwnerReference` + the single-controller rule of `ValidateOwnerReferences`.
pub fn validate_owner_references(refs: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut first_controller = String::new();
    for r in refs {
        let api_version = str_of(r, "apiVersion");
        let kind = str_of(r, "kind");
        let name = str_of(r, "name");
        let uid = str_of(r, "uid");
        // schema.FromAPIVersionAndKind: "group/version" or "version"; anything else → empty GV.
        let (group, version) = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [v] => ("", *v),
            [g, v] => (*g, *v),
            _ => ("", ""),
        };
        if version.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        if kind.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.kind"),
                kind,
                "kind must not be empty",
            ));
        }
        if name.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.name"),
                name,
                "name must not be empty",
            ));
        }
        if uid.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.uid"),
                uid,
                "uid must not be empty",
            ));
        }
        if group.is_empty() && version == "v1" && kind == "Event" {
            errs.push(FieldError::invalid_rendered(
                path,
                &go_owner_reference(r),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let cur = format!("{kind}/{name}");
            if !first_controller.is_empty() {
                errs.push(FieldError::invalid_rendered(
                    path,
                    &go_owner_references(refs),
                    &format!("Only one reference can have Controller set to true. Found \"true\" in references for {first_controller} and {cur}"),
                ));
            } else {
                first_controller = cur;
            }
        }
    }
    errs
}

fn go_opt_bool(v: Option<&Value>) -> String {
    match v.and_then(Value::as_bool) {
        Some(true) => "(*bool)(true)".into(),
        Some(false) => "(*bool)(false)".into(),
        None => "(*bool)(nil)".into(),
    }
}

/// `%#v` of a `v1.OwnerReference` value (pointers print as addresses in Go; we print their
/// target, which is the closest stable rendering).
fn go_owner_reference(r: &Value) -> String {
    use super::field_error::go_quote;
    format!(
        "v1.OwnerReference{{APIVersion:{}, Kind:{}, Name:{}, UID:{}, Controller:{}, BlockOwnerDeletion:{}}}",
        go_quote(str_of(r, "apiVersion")),
        go_quote(str_of(r, "kind")),
        go_quote(str_of(r, "name")),
        go_quote(str_of(r, "uid")),
        go_opt_bool(r.get("controller")),
        go_opt_bool(r.get("blockOwnerDeletion")),
    )
}

fn go_owner_references(refs: &[Value]) -> String {
    let parts: Vec<String> = refs.iter().map(go_owner_reference).collect();
    format!("[]v1.OwnerReference{{{}}}", parts.join(", "))
}

/// `ValidateFinalizers` (generic): each a qualified name (path without index, as upstream),
/// and not both `orphan` and `foregroundDeletion`.
pub fn validate_finalizers(finalizers: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut orphan = false;
    let mut foreground = false;
    for f in finalizers.iter().filter_map(Value::as_str) {
        for m in is_qualified_name(f) {
            errs.push(FieldError::invalid(path, f, m));
        }
        orphan |= f == "orphan";
        foreground |= f == "foregroundDeletion";
    }
    if orphan && foreground {
        errs.push(FieldError::invalid(
            path,
            Value::Array(finalizers.to_vec()),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errs
}

/// kubernetes core `validateKubeFinalizerName`: a finalizer without `/` must be a standard
/// one (`kubernetes`, `orphan`, `foregroundDeletion`); path `metadata.finalizers[i]`.
pub fn validate_kube_finalizer_names(finalizers: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, f) in finalizers.iter().enumerate() {
        let Some(f) = f.as_str() else { continue };
        if !f.contains('/') && !matches!(f, "kubernetes" | "orphan" | "foregroundDeletion") {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                f,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

/// `v1validation.ValidateManagedFields`.
pub fn validate_managed_fields(entries: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // `[{}]` is kube's reset request, which its field manager consumes before validation.
    if let [Value::Object(only)] = entries {
        if only.is_empty() {
            return errs;
        }
    }
    for (i, e) in entries.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let op = str_of(e, "operation");
        if op != "Apply" && op != "Update" {
            errs.push(FieldError::invalid(
                format!("{p}.operation"),
                op,
                "must be `Apply` or `Update`",
            ));
        }
        let ft = str_of(e, "fieldsType");
        if !ft.is_empty() && ft != "FieldsV1" {
            errs.push(FieldError::invalid(
                format!("{p}.fieldsType"),
                ft,
                "must be `FieldsV1`",
            ));
        }
        let manager = str_of(e, "manager");
        if manager.len() > FIELD_MANAGER_MAX {
            errs.push(FieldError::too_long(
                format!("{p}.manager"),
                "",
                FIELD_MANAGER_MAX as i64,
            ));
        }
        for (pos, c) in manager.char_indices() {
            if !super::field_error::go_is_print(c) {
                errs.push(FieldError::invalid(
                    format!("{p}.manager"),
                    manager,
                    format!("invalid character U+{:04X} (at position {pos})", c as u32),
                ));
            }
        }
        if str_of(e, "subresource").len() > MAX_SUBRESOURCE_NAME_LENGTH {
            errs.push(FieldError::too_long(
                format!("{p}.subresource"),
                "",
                MAX_SUBRESOURCE_NAME_LENGTH as i64,
            ));
        }
    }
    errs
}

/// `ValidateObjectMeta` as kube-apiserver runs it for built-in types on create
/// (generic checks plus core's finalizer-name check). `meta` is either the whole object (its
/// `metadata` member is used) or the `metadata` object itself. Field paths start with
/// `metadata.`.
///
/// Upstream validates after `rest.BeforeCreate` generated `name` from `generateName`. To also
/// serve callers that validate before generating, an empty `name` with a non-empty
/// `generateName` is accepted here (the prefix check on `generateName` still runs); callers
/// that generate first get upstream's exact behaviour, including errors on the generated name.
pub fn validate_object_meta(meta: &Value, namespaced: bool, rule: NameRule) -> Vec<FieldError> {
    validate_object_meta_with(meta, namespaced, rule, true)
}

/// Like [`validate_object_meta`]; `kube_finalizers: false` gives the generic apimachinery
/// variant (custom resources), without the standard-finalizer-name check.
pub fn validate_object_meta_with(
    meta: &Value,
    namespaced: bool,
    rule: NameRule,
    kube_finalizers: bool,
) -> Vec<FieldError> {
    let meta = metadata_of(meta);
    let mut errs = Vec::new();
    let generate_name = str_of(meta, "generateName");
    if !generate_name.is_empty() {
        for m in validate_name(rule, generate_name, true) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                m,
            ));
        }
    }
    let name = str_of(meta, "name");
    if name.is_empty() && !generate_name.is_empty() {
        // the name will be generated from a validated prefix
    } else if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for m in validate_name(rule, name, false) {
            errs.push(FieldError::invalid("metadata.name", name, m));
        }
    }
    let namespace = str_of(meta, "namespace");
    if namespaced {
        if namespace.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for m in is_dns1123_label(namespace) {
                errs.push(FieldError::invalid("metadata.namespace", namespace, m));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    if let Some(g) = meta.get("generation").and_then(Value::as_i64) {
        if g < 0 {
            errs.push(FieldError::invalid(
                "metadata.generation",
                g,
                "must be greater than or equal to 0",
            ));
        }
    }
    errs.extend(validate_labels(obj_of(meta, "labels"), "metadata.labels"));
    errs.extend(validate_annotations(
        obj_of(meta, "annotations"),
        "metadata.annotations",
    ));
    errs.extend(validate_owner_references(
        arr_of(meta, "ownerReferences"),
        "metadata.ownerReferences",
    ));
    let finalizers = arr_of(meta, "finalizers");
    errs.extend(validate_finalizers(finalizers, "metadata.finalizers"));
    errs.extend(validate_managed_fields(
        arr_of(meta, "managedFields"),
        "metadata.managedFields",
    ));
    if kube_finalizers {
        errs.extend(validate_kube_finalizer_names(
            finalizers,
            "metadata.finalizers",
        ));
    }
    errs
}

/// `ValidateObjectMetaUpdate` as run for built-in types (generic checks plus core's
/// finalizer-name check). `new`/`old` are whole objects or their `metadata` objects.
///
/// Upstream runs this after `rest.BeforeUpdate`, which always copies the old `generation` and
/// (when set) the old `creationTimestamp`, and the old `uid` when the new one is empty; callers
/// should do the same, otherwise a client-sent change there is reported as immutable here where
/// kube silently ignores it.
pub fn validate_object_meta_update(new: &Value, old: &Value) -> Vec<FieldError> {
    validate_object_meta_update_with(new, old, true)
}

/// Like [`validate_object_meta_update`]; `kube_finalizers: false` is the generic variant.
pub fn validate_object_meta_update_with(
    new: &Value,
    old: &Value,
    kube_finalizers: bool,
) -> Vec<FieldError> {
    let (new, old) = (metadata_of(new), metadata_of(old));
    let mut errs = Vec::new();
    if old.get("deletionTimestamp").is_some_and(|v| !v.is_null()) {
        let old_f: Vec<&str> = arr_of(old, "finalizers")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let mut extra: Vec<&str> = arr_of(new, "finalizers")
            .iter()
            .filter_map(Value::as_str)
            .filter(|f| !old_f.contains(f))
            .collect();
        extra.sort_unstable();
        extra.dedup();
        if !extra.is_empty() {
            errs.push(FieldError::forbidden(
                "metadata.finalizers",
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers {}",
                    super::field_error::go_value(&Value::from(extra))
                ),
            ));
        }
    }
    // Upstream also checks `metadata.resourceVersion` ("must be specified for an update"), but
    // by then the store has filled it for unconditional updates and rejected the others, so it
    // never fires from this function; the store owns that error (`Invalid value: 0x0: ...`).
    let new_gen = new.get("generation").and_then(Value::as_i64).unwrap_or(0);
    let old_gen = old.get("generation").and_then(Value::as_i64).unwrap_or(0);
    if new_gen < old_gen {
        errs.push(FieldError::invalid(
            "metadata.generation",
            new_gen,
            "must not be decremented",
        ));
    }
    for key in ["name", "namespace", "uid"] {
        let (n, o) = (str_of(new, key), str_of(old, key));
        if n != o {
            errs.push(FieldError::invalid(
                format!("metadata.{key}"),
                n,
                FIELD_IMMUTABLE,
            ));
        }
    }
    // creationTimestamp is a metav1.Time value: Go prints it through time.Time.String().
    let (n, o) = (
        str_of(new, "creationTimestamp"),
        str_of(old, "creationTimestamp"),
    );
    if !same_time(n, o) {
        errs.push(FieldError::invalid_rendered(
            "metadata.creationTimestamp",
            &go_time_string(n),
            FIELD_IMMUTABLE,
        ));
    }
    // deletionTimestamp is *metav1.Time: nil prints as "null" (quoted), else the time.
    let n = new.get("deletionTimestamp").and_then(Value::as_str);
    let o = old.get("deletionTimestamp").and_then(Value::as_str);
    let differs = match (n, o) {
        (Some(a), Some(b)) => !same_time(a, b),
        (None, None) => false,
        _ => true,
    };
    if differs {
        errs.push(match n {
            Some(t) => FieldError::invalid_rendered(
                "metadata.deletionTimestamp",
                &go_time_string(t),
                FIELD_IMMUTABLE,
            ),
            None => FieldError::invalid("metadata.deletionTimestamp", Value::Null, FIELD_IMMUTABLE),
        });
    }
    let n = new
        .get("deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    let o = old
        .get("deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    if n != o {
        errs.push(FieldError::invalid(
            "metadata.deletionGracePeriodSeconds",
            n.map(Value::from).unwrap_or(Value::Null),
            FIELD_IMMUTABLE,
        ));
    }
    errs.extend(validate_labels(obj_of(new, "labels"), "metadata.labels"));
    errs.extend(validate_annotations(
        obj_of(new, "annotations"),
        "metadata.annotations",
    ));
    errs.extend(validate_owner_references(
        arr_of(new, "ownerReferences"),
        "metadata.ownerReferences",
    ));
    errs.extend(validate_managed_fields(
        arr_of(new, "managedFields"),
        "metadata.managedFields",
    ));
    if kube_finalizers {
        errs.extend(validate_kube_finalizer_names(
            arr_of(new, "finalizers"),
            "metadata.finalizers",
        ));
    }
    errs
}

/// `v1validation.ValidateLabelSelector` (default options) for a `metav1.LabelSelector` JSON at
/// `path` (e.g. `spec.selector`).
pub fn validate_label_selector(sel: &Value, path: &str) -> Vec<FieldError> {
    validate_label_selector_with(sel, path, false)
}

/// `v1validation.ValidateLabelSelector` with `AllowInvalidLabelValueInSelector` given: when
/// set, the values of `In`/`NotIn` requirements are not checked as label values.
pub fn validate_label_selector_with(
    sel: &Value,
    path: &str,
    allow_invalid_values: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if sel.is_null() {
        return errs;
    }
    errs.extend(validate_labels(
        obj_of(sel, "matchLabels"),
        &format!("{path}.matchLabels"),
    ));
    for (i, expr) in arr_of(sel, "matchExpressions").iter().enumerate() {
        let p = format!("{path}.matchExpressions[{i}]");
        let values = arr_of(expr, "values");
        let op = str_of(expr, "operator");
        match op {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        format!("{p}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        format!("{p}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            _ => errs.push(FieldError::invalid(
                format!("{p}.operator"),
                op,
                "not a valid selector operator",
            )),
        }
        errs.extend(validate_label_name(
            str_of(expr, "key"),
            &format!("{p}.key"),
        ));
        if allow_invalid_values {
            continue;
        }
        for (vi, v) in values.iter().enumerate() {
            let Some(v) = v.as_str() else { continue };
            for m in is_valid_label_value(v) {
                errs.push(FieldError::invalid(format!("{p}.values[{vi}]"), v, m));
            }
        }
    }
    errs
}

/// Parsed RFC 3339 time normalised to UTC: (days since epoch, seconds of day, nanos).
fn parse_rfc3339(s: &str) -> Option<(i64, i64, u32)> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b't') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.bytes().all(|c| c.is_ascii_digit()) {
            t.parse().ok()
        } else {
            None
        }
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &s[start..i];
        if frac.is_empty() || frac.len() > 9 {
            return None;
        }
        nanos = format!("{frac:0<9}").parse().ok()?;
    }
    let offset = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        c @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            let o = oh * 3600 + om * 60;
            if *c == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    let total = days * 86400 + h * 3600 + mi * 60 + sec - offset;
    Some((total.div_euclid(86400), total.rem_euclid(86400), nanos))
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn same_time(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (parse_rfc3339(a), parse_rfc3339(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Go's `time.Time.String()` for a `metav1.Time` decoded from JSON (converted to the server's
/// local zone, UTC): `2024-01-02 03:04:05 +0000 UTC`; empty → Go's zero time.
pub fn go_time_string(rfc3339: &str) -> String {
    let (days, secs, nanos) = match parse_rfc3339(rfc3339) {
        Some(t) => t,
        None => return "0001-01-01 00:00:00 +0000 UTC".to_string(),
    };
    let (y, m, d) = civil_from_days(days);
    let mut s = format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    );
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s.push_str(" +0000 UTC");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::field_error::aggregate_message;
    use serde_json::json;

    const SUB_REGEX: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const LABEL_REGEX: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const DNS1035_REGEX: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    const QNAME_REGEX: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const LVALUE_REGEX: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

    #[test]
    fn names() {
        let long64 = "a".repeat(64);
        let long254 = "a".repeat(254);
        let ok: Vec<String> = vec![];
        type F = fn(&str) -> Vec<String>;
        let cases: Vec<(F, &str, Vec<String>)> = vec![
            (is_dns1123_subdomain, "a.b-c.d", ok.clone()),
            (is_dns1123_subdomain, "0", ok.clone()),
            (is_dns1123_subdomain, "Foo", vec![SUB_REGEX.into()]),
            (is_dns1123_subdomain, "a..b", vec![SUB_REGEX.into()]),
            (is_dns1123_subdomain, "-a", vec![SUB_REGEX.into()]),
            (is_dns1123_subdomain, "", vec![SUB_REGEX.into()]),
            (is_dns1123_subdomain, &long254, vec!["must be no more than 253 characters".into()]),
            (is_dns1123_label, "my-name", ok.clone()),
            (is_dns1123_label, "a.b", vec!["must not contain dots".into()]),
            (is_dns1123_label, "a_b", vec![LABEL_REGEX.into()]),
            (is_dns1123_label, &long64, vec!["must be no more than 63 characters".into()]),
            (is_dns1035_label, "abc-1", ok.clone()),
            (is_dns1035_label, "1abc", vec![DNS1035_REGEX.into()]),
            (is_qualified_name, "example.com/MyName", ok.clone()),
            (is_qualified_name, "My_Name.1", ok.clone()),
            (is_qualified_name, "-bad", vec![QNAME_REGEX.into()]),
            (is_qualified_name, "", vec!["name part must be non-empty".into(), QNAME_REGEX.into()]),
            (is_qualified_name, "/a", vec!["prefix part must be non-empty".into()]),
            (is_qualified_name, "Example.com/a", vec![format!("prefix part {SUB_REGEX}")]),
            (is_qualified_name, &long64, vec!["name part must be no more than 63 characters".into()]),
            (is_qualified_name, "a/b/c", vec!["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into()]),
            (is_valid_label_value, "", ok.clone()),
            (is_valid_label_value, "v1.2_3-x", ok.clone()),
            (is_valid_label_value, "a b", vec![LVALUE_REGEX.into()]),
            (is_valid_label_value, &long64, vec!["must be no more than 63 characters".into()]),
        ];
        for (f, input, want) in cases {
            assert_eq!(f(input), want, "input {input:?}");
        }
    }

    #[test]
    fn name_rules() {
        let cases: Vec<(NameRule, &str, bool, usize)> = vec![
            (NameRule::Dns1123Subdomain, "foo-", true, 0),
            (NameRule::Dns1123Subdomain, "foo-", false, 1),
            (NameRule::Dns1123Subdomain, "a-", true, 0),
            (NameRule::Dns1123Subdomain, "-", true, 1),
            (NameRule::Dns1123Subdomain, "a.-", true, 0), // upstream cuts two bytes: "a" + "a"
            (NameRule::Dns1123Label, "foo-", true, 0),
            (NameRule::Dns1035Label, "1foo-", true, 1),
            (NameRule::Dns1035Label, "foo-", true, 0),
            (NameRule::PathSegment, "..", false, 1),
            (NameRule::PathSegment, "..", true, 0),
            (NameRule::PathSegment, "a/b%c", false, 2),
            (NameRule::PathSegment, "system:admin", false, 0),
            (NameRule::Dns1123Subdomain, "héllo-", true, 1),
        ];
        for (rule, name, prefix, n) in cases {
            let got = validate_name(rule, name, prefix);
            assert_eq!(got.len(), n, "{rule:?} {name:?} {prefix}: {got:?}");
        }
        assert_eq!(mask_trailing_dash("ab-"), "aa");
        assert_eq!(mask_trailing_dash("a.-"), "aa");
        assert_eq!(
            validate_path_segment_name("a/b%c", false),
            vec!["may not contain '/'", "may not contain '%'"]
        );
        assert_eq!(
            validate_path_segment_name(".", false),
            vec!["may not be '.'"]
        );
    }

    fn msgs(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(FieldError::message).collect()
    }

    #[test]
    fn object_meta_create() {
        let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
        let cases: Vec<(Value, bool, NameRule, Vec<String>)> = vec![
            (json!({"name": "ok", "namespace": "default"}), true, NameRule::Dns1123Subdomain, vec![]),
            // name still to be generated from a valid prefix
            (json!({"generateName": "ok-", "namespace": "default"}), true, NameRule::Dns1123Subdomain, vec![]),
            // whole objects are accepted too
            (json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Foo", "namespace": "d"}}), true, NameRule::Dns1123Subdomain,
                vec![format!("metadata.name: Invalid value: \"Foo\": {SUB_REGEX}")]),
            (json!({"generateName": "ok-", "name": "ok-x1z2", "namespace": "default"}), true, NameRule::Dns1123Subdomain, vec![]),
            (json!({"generateName": "Bad-", "name": "ok", "namespace": "default"}), true, NameRule::Dns1123Subdomain,
                vec![format!("metadata.generateName: Invalid value: \"Bad-\": {SUB_REGEX}")]),
            (json!({"namespace": "default"}), true, NameRule::Dns1123Subdomain,
                vec!["metadata.name: Required value: name or generateName is required".into()]),
            (json!({"name": "Foo", "namespace": "default"}), true, NameRule::Dns1123Subdomain,
                vec![format!("metadata.name: Invalid value: \"Foo\": {SUB_REGEX}")]),
            (json!({"name": "a"}), true, NameRule::Dns1123Subdomain,
                vec!["metadata.namespace: Required value".into()]),
            (json!({"name": "a", "namespace": "x"}), false, NameRule::Dns1123Subdomain,
                vec!["metadata.namespace: Forbidden: not allowed on this type".into()]),
            (json!({"name": "a", "namespace": "Bad_ns"}), true, NameRule::Dns1123Subdomain,
                vec![format!("metadata.namespace: Invalid value: \"Bad_ns\": {LABEL_REGEX}")]),
            (json!({"name": "a.b"}), false, NameRule::Dns1123Label,
                vec!["metadata.name: Invalid value: \"a.b\": must not contain dots".into()]),
            (json!({"name": "a", "generation": -1}), false, NameRule::Dns1123Subdomain,
                vec!["metadata.generation: Invalid value: -1: must be greater than or equal to 0".into()]),
            (json!({"name": "a", "labels": {"-k": "v", "k": "a b"}}), false, NameRule::Dns1123Subdomain,
                vec![format!("metadata.labels: Invalid value: \"-k\": {QNAME_REGEX}"),
                     format!("metadata.labels: Invalid value: \"a b\": {LVALUE_REGEX}")]),
            (json!({"name": "a", "annotations": {"Example.COM/Ok": "v", "bad key": "v"}}), false, NameRule::Dns1123Subdomain,
                vec![format!("metadata.annotations: Invalid value: \"bad key\": {QNAME_REGEX}")]),
            (json!({"name": "a", "annotations": {"k": big}}), false, NameRule::Dns1123Subdomain,
                vec!["metadata.annotations: Too long: may not be more than 262144 bytes".into()]),
            (json!({"name": "a", "finalizers": ["example.com/x", "kubernetes", "orphan"]}), false, NameRule::Dns1123Subdomain, vec![]),
            (json!({"name": "a", "finalizers": ["custom"]}), false, NameRule::Dns1123Subdomain,
                vec!["metadata.finalizers[0]: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified".into()]),
            (json!({"name": "a", "finalizers": ["a/-b"]}), false, NameRule::Dns1123Subdomain,
                vec![format!("metadata.finalizers: Invalid value: \"a/-b\": {QNAME_REGEX}")]),
            (json!({"name": "a", "finalizers": ["orphan", "foregroundDeletion"]}), false, NameRule::Dns1123Subdomain,
                vec!["metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set".into()]),
            (json!({"name": "a", "ownerReferences": [{}]}), false, NameRule::Dns1123Subdomain,
                vec!["metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty".into(),
                     "metadata.ownerReferences.kind: Invalid value: \"\": kind must not be empty".into(),
                     "metadata.ownerReferences.name: Invalid value: \"\": name must not be empty".into(),
                     "metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty".into()]),
            (json!({"name": "a", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "1", "controller": true},
                {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "2", "controller": true}]}), false, NameRule::Dns1123Subdomain,
                vec!["metadata.ownerReferences: Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:\"apps/v1\", Kind:\"ReplicaSet\", Name:\"r\", UID:\"1\", Controller:(*bool)(true), BlockOwnerDeletion:(*bool)(nil)}, v1.OwnerReference{APIVersion:\"v1\", Kind:\"Pod\", Name:\"p\", UID:\"2\", Controller:(*bool)(true), BlockOwnerDeletion:(*bool)(nil)}}: Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/r and Pod/p".into()]),
            (json!({"name": "a", "managedFields": [{"manager": "m", "operation": "Patch", "fieldsType": "FieldsV2"}]}), false, NameRule::Dns1123Subdomain,
                vec!["metadata.managedFields[0].operation: Invalid value: \"Patch\": must be `Apply` or `Update`".into(),
                     "metadata.managedFields[0].fieldsType: Invalid value: \"FieldsV2\": must be `FieldsV1`".into()]),
            (json!({"name": "x/y"}), false, NameRule::PathSegment,
                vec!["metadata.name: Invalid value: \"x/y\": may not contain '/'".into()]),
        ];
        for (meta, namespaced, rule, want) in cases {
            let got = validate_object_meta(&meta, namespaced, rule);
            assert_eq!(msgs(&got), want, "meta {meta}");
        }
        // generic (custom resources): no standard-finalizer check
        let meta = json!({"name": "a", "finalizers": ["custom"]});
        assert!(
            validate_object_meta_with(&meta, false, NameRule::Dns1123Subdomain, false).is_empty()
        );
    }

    #[test]
    fn object_meta_update() {
        let old = json!({"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "5",
            "creationTimestamp": "2024-01-02T03:04:05Z", "generation": 3});
        let cases: Vec<(Value, Vec<String>)> = vec![
            (old.clone(), vec![]),
            (json!({"name": "b", "namespace": "ns", "uid": "u1", "resourceVersion": "5",
                "creationTimestamp": "2024-01-02T03:04:05Z", "generation": 3}),
                vec!["metadata.name: Invalid value: \"b\": field is immutable".into()]),
            (json!({"name": "a", "namespace": "ns2", "uid": "u2", "resourceVersion": "",
                "creationTimestamp": "2024-01-02T05:04:05+02:00", "generation": 2}),
                vec!["metadata.generation: Invalid value: 2: must not be decremented".into(),
                     "metadata.namespace: Invalid value: \"ns2\": field is immutable".into(),
                     "metadata.uid: Invalid value: \"u2\": field is immutable".into()]),
            (json!({"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "5",
                "creationTimestamp": "2025-01-02T03:04:05.5Z", "generation": 3, "labels": {"a": "-"}}),
                vec!["metadata.creationTimestamp: Invalid value: 2025-01-02 03:04:05.5 +0000 UTC: field is immutable".into(),
                     format!("metadata.labels: Invalid value: \"-\": {LVALUE_REGEX}")]),
            (json!({"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "5",
                "creationTimestamp": "2024-01-02T03:04:05Z", "generation": 3,
                "deletionTimestamp": "2024-03-01T00:00:00Z", "deletionGracePeriodSeconds": 30}),
                vec!["metadata.deletionTimestamp: Invalid value: 2024-03-01 00:00:00 +0000 UTC: field is immutable".into(),
                     "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable".into()]),
        ];
        for (new, want) in cases {
            assert_eq!(
                msgs(&validate_object_meta_update(&new, &old)),
                want,
                "new {new}"
            );
        }
        // whole objects
        let whole_old = json!({"kind": "Pod", "metadata": old});
        let whole_new = json!({"kind": "Pod", "metadata": {"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "5",
            "creationTimestamp": "2024-01-02T03:04:05Z", "generation": 3, "labels": {"-": "x"}}});
        assert_eq!(validate_object_meta_update(&whole_new, &whole_old).len(), 1);
        // no new finalizers while deleting; removing deletionTimestamp prints "null"
        let old = json!({"name": "a", "resourceVersion": "1", "deletionTimestamp": "2024-03-01T00:00:00Z", "finalizers": ["a/x"]});
        let new = json!({"name": "a", "resourceVersion": "1", "finalizers": ["a/x", "b/y"]});
        assert_eq!(
            msgs(&validate_object_meta_update(&new, &old)),
            vec![
                "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b/y\"}",
                "metadata.deletionTimestamp: Invalid value: \"null\": field is immutable",
            ]
        );
        assert_eq!(
            aggregate_message(&validate_object_meta_update(
                &json!({"name": "b", "resourceVersion": "1"}),
                &json!({"name": "a"})
            )),
            "metadata.name: Invalid value: \"b\": field is immutable"
        );
    }

    #[test]
    fn label_selector_validation() {
        let sel = json!({"matchLabels": {"a": "b"}, "matchExpressions": [
            {"key": "k", "operator": "In", "values": []},
            {"key": "k", "operator": "Exists", "values": ["x"]},
            {"key": "-k", "operator": "Foo"}]});
        assert_eq!(msgs(&validate_label_selector(&sel, "spec.selector")), vec![
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'".to_string(),
            "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'".to_string(),
            "spec.selector.matchExpressions[2].operator: Invalid value: \"Foo\": not a valid selector operator".to_string(),
            format!("spec.selector.matchExpressions[2].key: Invalid value: \"-k\": {QNAME_REGEX}"),
        ]);
    }

    #[test]
    fn times() {
        let cases = [
            ("2024-01-02T03:04:05Z", "2024-01-02 03:04:05 +0000 UTC"),
            ("2024-01-02T01:04:05-02:00", "2024-01-02 03:04:05 +0000 UTC"),
            ("2024-03-01T00:30:00+01:00", "2024-02-29 23:30:00 +0000 UTC"),
            (
                "1970-01-01T00:00:00.120Z",
                "1970-01-01 00:00:00.12 +0000 UTC",
            ),
            ("", "0001-01-01 00:00:00 +0000 UTC"),
            ("garbage", "0001-01-01 00:00:00 +0000 UTC"),
        ];
        for (input, want) in cases {
            assert_eq!(go_time_string(input), want, "{input}");
        }
        assert!(same_time(
            "2024-01-02T03:04:05Z",
            "2024-01-02T04:04:05+01:00"
        ));
    }
}

/// `metav1validation.ValidateConditions`: each `metav1.Condition` of a status (type unique and
/// a qualified name, status True/False/Unknown, a nonnegative observedGeneration, a
/// lastTransitionTime, a reason in condition-reason format, bounded reason and message).
pub fn validate_conditions(conditions: &[Value], path: &str) -> Vec<FieldError> {
    const REASON_FMT: &str = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";
    const REASON_MSG: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
    let text = |c: &Value, k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut errs = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let t = text(c, "type");
        if seen.contains(&t) {
            errs.push(FieldError::duplicate(format!("{p}.type"), t.as_str()));
        } else {
            seen.push(t.clone());
        }
        errs.extend(validate_label_name(&t, &format!("{p}.type")));
        let status = text(c, "status");
        if !matches!(status.as_str(), "True" | "False" | "Unknown") {
            errs.push(FieldError::not_supported(
                format!("{p}.status"),
                status,
                &["False", "True", "Unknown"],
            ));
        }
        if let Some(g) = c.get("observedGeneration").and_then(Value::as_i64) {
            if g < 0 {
                errs.push(FieldError::invalid(
                    format!("{p}.observedGeneration"),
                    g,
                    "must be greater than or equal to zero",
                ));
            }
        }
        if text(c, "lastTransitionTime").is_empty() {
            errs.push(FieldError::required(
                format!("{p}.lastTransitionTime"),
                "must be set",
            ));
        }
        let reason = text(c, "reason");
        if reason.is_empty() {
            errs.push(FieldError::required(format!("{p}.reason"), "must be set"));
        } else {
            if !is_condition_reason(&reason) {
                let msg = regex_error(
                    REASON_MSG,
                    REASON_FMT,
                    &[
                        "my_name",
                        "MY_NAME",
                        "MyName",
                        "ReasonA,ReasonB",
                        "ReasonA:ReasonB",
                    ],
                );
                errs.push(FieldError::invalid(
                    format!("{p}.reason"),
                    reason.as_str(),
                    msg,
                ));
            }
            if reason.len() > 1024 {
                errs.push(FieldError::too_long(format!("{p}.reason"), "", 1024));
            }
        }
        if text(c, "message").len() > 32 * 1024 {
            errs.push(FieldError::too_long(format!("{p}.message"), "", 32 * 1024));
        }
    }
    errs
}

/// `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`.
fn is_condition_reason(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphabetic()
        && (b.len() == 1 || last.is_ascii_alphanumeric() || *last == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
}

/// `metav1.Time.Before` of two RFC 3339 timestamps (false when either does not parse).
pub fn time_before(a: &str, b: &str) -> bool {
    match (parse_rfc3339(a), parse_rfc3339(b)) {
        (Some(x), Some(y)) => x < y,
        _ => false,
    }
}
