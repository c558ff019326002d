//! Validating and mutating webhook configurations: kube's v1 defaults
//! (`SetDefaults_ValidatingWebhook`, `SetDefaults_MutatingWebhook`, `SetDefaults_Rule`,
//! `SetDefaults_ServiceReference`) and `Validate{Validating,Mutating}WebhookConfiguration`
//! with its update rules, which tolerate what the stored object already had (side effects,
//! review versions, duplicate names, lax selector values, unchanged match conditions).

use serde_json::{json, Value};

use super::{
    check_failure_policy, default_rules, set, strings, validate_match_conditions,
    validate_rule_with_operations, MATCH_POLICIES,
};
use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{
    is_dns1035_label, is_dns1123_subdomain, validate_label_selector_with,
};
use crate::registry::builtin::checks::{list_of, str_of};
use crate::registry::strategy::{is_unset, obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

/// `{Validating,Mutating}WebhookConfigurations`.
pub struct WebhookConfigurations {
    pub mutating: bool,
}

const ACCEPTED_REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
const NO_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
const SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun", "Some", "Unknown"];
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
const URL_FORM: &str = "; desired format: https://host[/path]";

/// What an update tolerates because the stored object already had it (kube's
/// `validationOptions`); a create tolerates nothing.
struct Options {
    ignore_match_conditions: bool,
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
    allow_invalid_label_values: bool,
}

const CREATE: Options = Options {
    ignore_match_conditions: false,
    require_no_side_effects: true,
    require_recognized_review_version: true,
    require_unique_names: true,
    allow_invalid_label_values: false,
};

fn selectors_invalid(hook: &Value) -> bool {
    ["namespaceSelector", "objectSelector"].iter().any(|s| {
        set(hook, s).is_some_and(|sel| !validate_label_selector_with(sel, "", false).is_empty())
    })
}

fn update_options(new: &Value, old: &Value) -> Options {
    let (new_hooks, old_hooks) = (list_of(new, "webhooks"), list_of(old, "webhooks"));
    let conditions = |h: &Value| set(h, "matchConditions").cloned();
    let mut names: Vec<&str> = Vec::new();
    let unique = old_hooks.iter().all(|h| {
        let n = str_of(h, "name");
        let fresh = !names.contains(&n);
        names.push(n);
        fresh
    });
    Options {
        ignore_match_conditions: new_hooks.len() == old_hooks.len()
            && new_hooks
                .iter()
                .zip(old_hooks)
                .all(|(n, o)| conditions(n) == conditions(o)),
        require_no_side_effects: old_hooks.iter().all(|h| {
            set(h, "sideEffects")
                .and_then(Value::as_str)
                .is_some_and(|s| NO_SIDE_EFFECTS.contains(&s))
        }),
        require_recognized_review_version: old_hooks.iter().all(|h| {
            let versions = strings(h, "admissionReviewVersions");
            versions.is_empty()
                || versions
                    .iter()
                    .any(|v| ACCEPTED_REVIEW_VERSIONS.contains(v))
        }),
        require_unique_names: unique,
        allow_invalid_label_values: old_hooks.iter().any(selectors_invalid),
    }
}

impl WebhookConfigurations {
    fn validate_with(&self, obj: &Value, opts: &Options) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        for (i, hook) in list_of(obj, "webhooks").iter().enumerate() {
            let p = format!("webhooks[{i}]");
            self.validate_webhook(hook, &p, opts, &mut errs);
            validate_review_versions(
                &strings(hook, "admissionReviewVersions"),
                opts.require_recognized_review_version,
                &format!("{p}.admissionReviewVersions"),
                &mut errs,
            );
            let name = str_of(hook, "name");
            if opts.require_unique_names && !name.is_empty() {
                if names.contains(&name) {
                    errs.push(FieldError::duplicate(format!("{p}.name"), name));
                } else {
                    names.push(name);
                }
            }
        }
        errs
    }

    /// `validateValidatingWebhook` / `validateMutatingWebhook`.
    fn validate_webhook(&self, hook: &Value, p: &str, opts: &Options, errs: &mut Vec<FieldError>) {
        fully_qualified_name(str_of(hook, "name"), &format!("{p}.name"), errs);
        for (i, rule) in list_of(hook, "rules").iter().enumerate() {
            validate_rule_with_operations(rule, &format!("{p}.rules[{i}]"), errs);
        }
        check_failure_policy(hook, &format!("{p}.failurePolicy"), errs);
        if let Some(m) = set(hook, "matchPolicy").and_then(Value::as_str) {
            if !MATCH_POLICIES.contains(&m) {
                errs.push(FieldError::not_supported(
                    format!("{p}.matchPolicy"),
                    m,
                    MATCH_POLICIES,
                ));
            }
        }
        let allowed = if opts.require_no_side_effects {
            NO_SIDE_EFFECTS
        } else {
            SIDE_EFFECTS
        };
        match set(hook, "sideEffects").and_then(Value::as_str) {
            None => errs.push(FieldError::required(
                format!("{p}.sideEffects"),
                format!("must specify one of {}", allowed.join(", ")),
            )),
            Some(s) if !allowed.contains(&s) => errs.push(FieldError::not_supported(
                format!("{p}.sideEffects"),
                s,
                allowed,
            )),
            Some(_) => {}
        }
        if let Some(t) = set(hook, "timeoutSeconds").and_then(Value::as_i64) {
            if !(1..=30).contains(&t) {
                errs.push(FieldError::invalid(
                    format!("{p}.timeoutSeconds"),
                    t,
                    "the timeout value must be between 1 and 30 seconds",
                ));
            }
        }
        for sel in ["namespaceSelector", "objectSelector"] {
            if let Some(s) = set(hook, sel) {
                errs.extend(validate_label_selector_with(
                    s,
                    &format!("{p}.{sel}"),
                    opts.allow_invalid_label_values,
                ));
            }
        }
        if self.mutating {
            if let Some(r) = set(hook, "reinvocationPolicy").and_then(Value::as_str) {
                if !REINVOCATION_POLICIES.contains(&r) {
                    errs.push(FieldError::not_supported(
                        format!("{p}.reinvocationPolicy"),
                        r,
                        REINVOCATION_POLICIES,
                    ));
                }
            }
        }
        let cc = hook.get("clientConfig").unwrap_or(&Value::Null);
        let cp = format!("{p}.clientConfig");
        match (set(cc, "url"), set(cc, "service")) {
            (Some(u), None) => validate_url(u.as_str().unwrap_or(""), &format!("{cp}.url"), errs),
            (None, Some(s)) => validate_service(s, &format!("{cp}.service"), errs),
            _ => errs.push(FieldError::required(
                cp,
                "exactly one of url or service is required",
            )),
        }
        if !opts.ignore_match_conditions {
            validate_match_conditions(
                list_of(hook, "matchConditions"),
                &format!("{p}.matchConditions"),
                false,
                errs,
            );
        }
    }
}

impl Strategy for WebhookConfigurations {
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn default(&self, obj: &mut Value) {
        let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
            return;
        };
        for hook in hooks.iter_mut().filter(|h| h.is_object()) {
            let mut defaults = vec![
                ("failurePolicy", json!("Fail")),
                ("matchPolicy", json!("Equivalent")),
                ("namespaceSelector", json!({})),
                ("objectSelector", json!({})),
                ("timeoutSeconds", json!(10)),
            ];
            if self.mutating {
                defaults.push(("reinvocationPolicy", json!("Never")));
            }
            for (k, v) in defaults {
                if is_unset(hook.get(k)) {
                    hook[k] = v;
                }
            }
            default_rules(hook, "rules");
            if let Some(svc) = hook.get_mut("clientConfig").filter(|c| c.is_object()) {
                if svc.get("service").is_some_and(Value::is_object) {
                    let s = obj_entry(svc, "service");
                    if is_unset(s.get("port")) {
                        s.insert("port".into(), json!(443));
                    }
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        self.validate_with(obj, &CREATE)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_with(new, &update_options(new, old))
    }

    fn printer(&self) -> Printer {
        printers::WEBHOOK
    }
}

/// `utilvalidation.IsFullyQualifiedName`: a subdomain of at least three segments.
fn fully_qualified_name(name: &str, path: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    let sub = is_dns1123_subdomain(name);
    if !sub.is_empty() {
        errs.push(FieldError::invalid(path, name, sub.join(",")));
    } else if name.split('.').count() < 3 {
        errs.push(FieldError::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        ));
    }
}

/// `validateAdmissionReviewVersions`.
fn validate_review_versions(
    versions: &[&str],
    require_recognized: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let accepted = ACCEPTED_REVIEW_VERSIONS.join(", ");
    if versions.is_empty() {
        errs.push(FieldError::required(
            path,
            format!("must specify one of {accepted}"),
        ));
        return;
    }
    if !review_version_items(versions, path, errs) && require_recognized {
        errs.push(FieldError::invalid(
            path,
            json!(versions),
            format!("must include at least one of {accepted}"),
        ));
    }
}

/// The per-item checks of a review-version list (admission webhooks and CRD conversion
/// webhooks): no duplicates, DNS-1035 labels. Whether one of them is a version kube knows.
pub(crate) fn review_version_items(
    versions: &[&str],
    path: &str,
    errs: &mut Vec<FieldError>,
) -> bool {
    let mut seen: Vec<&str> = Vec::new();
    let mut recognized = false;
    for (i, v) in versions.iter().enumerate() {
        let p = format!("{path}[{i}]");
        if seen.contains(v) {
            errs.push(FieldError::invalid(p, *v, "duplicate version"));
            continue;
        }
        seen.push(v);
        for m in is_dns1035_label(v) {
            errs.push(FieldError::invalid(&p, *v, m));
        }
        recognized |= ACCEPTED_REVIEW_VERSIONS.contains(v);
    }
    recognized
}

/// `webhook.ValidateWebhookURL` with https forced.
pub(crate) fn validate_url(raw: &str, path: &str, errs: &mut Vec<FieldError>) {
    let u = match GoUrl::parse(raw) {
        Ok(u) => u,
        Err(e) => {
            errs.push(FieldError::required(
                path,
                format!("url must be a valid URL: {e}{URL_FORM}"),
            ));
            return;
        }
    };
    if u.scheme != "https" {
        errs.push(FieldError::invalid(
            path,
            u.scheme.as_str(),
            format!("'https' is the only allowed URL scheme{URL_FORM}"),
        ));
    }
    if u.host.is_empty() {
        errs.push(FieldError::invalid(
            path,
            "",
            format!("host must be specified{URL_FORM}"),
        ));
    }
    if let Some(user) = u.user {
        errs.push(FieldError::invalid(
            path,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if !u.fragment.is_empty() {
        errs.push(FieldError::invalid(
            path,
            u.fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !u.query.is_empty() {
        errs.push(FieldError::invalid(
            path,
            u.query,
            "query parameters are not permitted in the URL",
        ));
    }
}

/// `webhook.ValidateWebhookService`.
pub(crate) fn validate_service(svc: &Value, path: &str, errs: &mut Vec<FieldError>) {
    for (f, what) in [("name", "service name"), ("namespace", "service namespace")] {
        if str_of(svc, f).is_empty() {
            errs.push(FieldError::required(
                format!("{path}.{f}"),
                format!("{what} is required"),
            ));
        }
    }
    let port = svc.get("port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            format!("{path}.port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = set(svc, "path").and_then(Value::as_str) else {
        return;
    };
    let pp = format!("{path}.path");
    if url_path.is_empty() || url_path == "/" {
        return;
    }
    if url_path == "//" {
        errs.push(FieldError::invalid(
            pp,
            url_path,
            "segment[0] may not be empty",
        ));
        return;
    }
    if !url_path.starts_with('/') {
        errs.push(FieldError::invalid(&pp, url_path, "must start with a '/'"));
    }
    // Like kube, the first byte is dropped whether or not it is the slash.
    let mut check = url_path.get(1..).unwrap_or("");
    check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(
                &pp,
                url_path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for m in is_dns1123_subdomain(step) {
            errs.push(FieldError::invalid(
                &pp,
                url_path,
                format!("segment[{i}]: {m}"),
            ));
        }
    }
}

/// The parts of Go's `url.Parse` result the webhook URL check reads.
/// Whether `raw` is a URL with a scheme and a host (as `url.ParseRequestURI` would have it).
pub(crate) fn is_absolute_url(raw: &str) -> bool {
    GoUrl::parse(raw).is_ok_and(|u| !u.scheme.is_empty() && !u.host.is_empty())
}

struct GoUrl {
    scheme: String,
    host: String,
    user: Option<String>,
    fragment: String,
    query: String,
}

impl GoUrl {
    /// Go's `url.Parse`, with its error texts (`parse "x": missing protocol scheme`).
    fn parse(raw: &str) -> Result<GoUrl, String> {
        let (u, frag) = raw.split_once('#').unwrap_or((raw, ""));
        let mut url =
            Self::parse_no_fragment(u).map_err(|e| format!("parse {}: {e}", go_quote(u)))?;
        url.fragment = unescape(frag).map_err(|e| format!("parse {}: {e}", go_quote(raw)))?;
        Ok(url)
    }

    fn parse_no_fragment(raw: &str) -> Result<GoUrl, String> {
        if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
            return Err("net/url: invalid control character in URL".into());
        }
        let mut url = GoUrl {
            scheme: String::new(),
            host: String::new(),
            user: None,
            fragment: String::new(),
            query: String::new(),
        };
        if raw == "*" {
            return Ok(url);
        }
        let mut rest = raw;
        for (i, c) in raw.char_indices() {
            match c {
                'a'..='z' | 'A'..='Z' => {}
                '0'..='9' | '+' | '-' | '.' if i > 0 => {}
                ':' if i == 0 => return Err("missing protocol scheme".into()),
                ':' => {
                    url.scheme = raw[..i].to_ascii_lowercase();
                    rest = &raw[i + 1..];
                    break;
                }
                _ => break,
            }
        }
        if rest.ends_with('?') && rest.matches('?').count() == 1 {
            rest = &rest[..rest.len() - 1];
        } else if let Some((r, q)) = rest.split_once('?') {
            rest = r;
            url.query = q.to_string();
        }
        if !rest.starts_with('/') {
            if !url.scheme.is_empty() {
                return Ok(url);
            }
            if rest.split('/').next().is_some_and(|s| s.contains(':')) {
                return Err("first path segment in URL cannot contain colon".into());
            }
        }
        if rest.starts_with("//") && (!url.scheme.is_empty() || !rest.starts_with("///")) {
            let authority = &rest[2..];
            let (authority, path) = match authority.find('/') {
                Some(i) => (&authority[..i], &authority[i..]),
                None => (authority, ""),
            };
            let (user, host) = match authority.rfind('@') {
                Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
                None => (None, authority),
            };
            url.host = parse_host(host)?;
            if let Some(user) = user {
                if !user.bytes().all(valid_userinfo_byte) {
                    return Err("net/url: invalid userinfo".into());
                }
                url.user = Some(user.to_string());
            }
            rest = path;
        }
        unescape(rest)?;
        Ok(url)
    }
}

/// Go's `parseHost`: a port, if any, is digits; no characters a host may not hold.
fn parse_host(host: &str) -> Result<String, String> {
    let port_from = if host.starts_with('[') {
        match host.rfind(']') {
            Some(i) => Some(i + 1),
            None => return Err("missing ']' in host".into()),
        }
    } else {
        host.rfind(':')
    };
    if let Some(i) = port_from {
        let colon_port = &host[i..];
        let valid = colon_port.is_empty()
            || colon_port
                .strip_prefix(':')
                .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
        if !valid {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
    }
    for (i, b) in host.bytes().enumerate() {
        if b == b'%' {
            let esc = host.get(i..(i + 3).min(host.len())).unwrap_or("%");
            return Err(format!("invalid URL escape {}", go_quote(esc)));
        }
        let ok = b.is_ascii_alphanumeric() || b >= 0x80 || b"!$&'()*+,;=:[]<>\"-_.~".contains(&b);
        if !ok {
            return Err(format!(
                "invalid character {} in host name",
                go_quote(&(b as char).to_string())
            ));
        }
    }
    Ok(host.to_string())
}

fn valid_userinfo_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b >= 0x80 || b"-._:~!$&'()*+,;=%@".contains(&b)
}

/// Go's `unescape` for paths and fragments: every `%` starts two hex digits.
fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            match (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => {
                    let end = (i + 3).min(b.len());
                    let esc = String::from_utf8_lossy(&b[i..end]).into_owned();
                    return Err(format!("invalid URL escape {}", go_quote(&esc)));
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_as_go_parses_them() {
        let u = GoUrl::parse("https://u:p@example.com:8443/a?b=1#frag").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str(), u.user.as_deref()),
            ("https", "example.com:8443", Some("u:p"))
        );
        assert_eq!((u.query.as_str(), u.fragment.as_str()), ("b=1", "frag"));
        let u = GoUrl::parse("example.com/hook").unwrap();
        assert_eq!((u.scheme.as_str(), u.host.as_str()), ("", ""));
        assert_eq!(
            GoUrl::parse("://x").err().unwrap(),
            "parse \"://x\": missing protocol scheme"
        );
        assert_eq!(
            GoUrl::parse("https://host:x/").err().unwrap(),
            "parse \"https://host:x/\": invalid port \":x\" after host"
        );
        assert_eq!(
            GoUrl::parse("https://a b/").err().unwrap(),
            "parse \"https://a b/\": invalid character \" \" in host name"
        );
    }
}
