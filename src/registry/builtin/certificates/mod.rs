//! The certificates.k8s.io group's strategy: CertificateSigningRequests, with kube's
//! PrepareForCreate/PrepareForUpdate (status reset on create, spec kept on update), the v1
//! condition default (`SetDefaults_CertificateSigningRequestCondition`) and
//! `ValidateCertificateSigningRequestCreate` / `...StatusUpdate`: a PEM `CERTIFICATE REQUEST`
//! that parses, signer name, usages, expiration, conditions and the issued certificate.
//!
//! As kube's PrepareForCreate, the requester's identity (`spec.username`, `uid`, `groups`,
//! `extra`) is taken from the request's user (what a client sends there is dropped), and the
//! spec never changes afterwards. The request's signature is checked ([`x509`]: Go's
//! `CheckSignature` texts).

pub mod x509;

use crate::registry::object::Part;
use crate::registry::strategy::{default_reset_fields, ResetFields};
use base64::Engine;
use serde_json::{json, Value};

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{is_dns1123_label, is_dns1123_subdomain};
use crate::registry::builtin::checks::{list_of, str_of};
use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::{Extra, Strategy};
use crate::registry::table::{printers, Printer};

/// CertificateSigningRequests; `spec.signerName` is selectable.
pub struct CertificateSigningRequests;

const USAGES: &[&str] = &[
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];
const LEGACY_SIGNER: &str = "kubernetes.io/legacy-unknown";
/// Condition types whose status may only be `True`.
const TRUE_ONLY: &[&str] = &["Approved", "Denied", "Failed"];

/// Compatibility allowances an update takes from the stored object (kube's
/// `certificateValidationOptions`); a create allows nothing.
#[derive(Default)]
struct Options {
    both_approved_and_denied: bool,
    legacy_signer: bool,
    duplicate_condition_types: bool,
    empty_condition_type: bool,
    arbitrary_certificate: bool,
    unknown_usages: bool,
    duplicate_usages: bool,
}

fn spec(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

fn conditions(obj: &Value) -> &[Value] {
    list_of(obj.get("status").unwrap_or(&Value::Null), "conditions")
}

fn usages(obj: &Value) -> Vec<&str> {
    list_of(spec(obj), "usages")
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

fn has_duplicates<'a>(items: impl Iterator<Item = &'a str>) -> bool {
    let mut seen = Vec::new();
    items.into_iter().any(|i| {
        let dup = seen.contains(&i);
        seen.push(i);
        dup
    })
}

/// A `[]byte` field as Go decodes it from JSON (base64); `None` when absent.
fn bytes_of(v: &Value, key: &str) -> Option<Vec<u8>> {
    let s = v.get(key)?.as_str()?;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

/// Go's `%#v` of a `[]byte`: `[]byte{0x2d, 0x2d}`, `[]byte{}`, or `[]byte(nil)`.
fn go_bytes(b: Option<&[u8]>) -> String {
    match b {
        None => "[]byte(nil)".into(),
        Some(b) => {
            let parts: Vec<String> = b.iter().map(|x| format!("0x{x:x}")).collect();
            format!("[]byte{{{}}}", parts.join(", "))
        }
    }
}

/// One PEM block: its type, whether it has headers, and its decoded body.
struct PemBlock {
    kind: String,
    headers: bool,
    der: Vec<u8>,
}

/// The PEM blocks of `data` in order, as successive `pem.Decode` calls find them (text that
/// is not a well-formed block is skipped).
fn pem_blocks(data: &[u8]) -> Vec<PemBlock> {
    let text = String::from_utf8_lossy(data);
    let mut out = Vec::new();
    let mut rest: &str = &text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let Some(type_end) = after.find("-----") else {
            break;
        };
        let kind = &after[..type_end];
        let body_start = &after[type_end + 5..];
        let end_marker = format!("-----END {kind}-----");
        let (Some(body_end), false) = (body_start.find(&end_marker), kind.contains('\n')) else {
            rest = after;
            continue;
        };
        let body = &body_start[..body_end];
        let lines: Vec<&str> = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let headers = lines.first().is_some_and(|l| l.contains(':'));
        let b64: String = lines
            .iter()
            .skip_while(|l| l.contains(':'))
            .flat_map(|l| l.chars())
            .collect();
        rest = &body_start[body_end + end_marker.len()..];
        if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(b64) {
            out.push(PemBlock {
                kind: kind.to_string(),
                headers,
                der,
            });
        }
    }
    out
}

/// kube's `validateCSR`: `certificates.ParseCSR`, then the request's signature.
fn csr_error(request: Option<&[u8]>) -> Option<String> {
    x509::parse_and_verify(request.unwrap_or_default()).err()
}

/// `validateCertificate` for `status.certificate`.
fn certificate_error(pem: &[u8]) -> Option<String> {
    if pem.is_empty() {
        return None;
    }
    let blocks = pem_blocks(pem);
    if blocks.is_empty() {
        return Some("must contain at least one CERTIFICATE PEM block".into());
    }
    for b in blocks {
        if b.kind != "CERTIFICATE" {
            return Some(format!(
                "only CERTIFICATE PEM blocks are allowed, found {}",
                go_quote(&b.kind)
            ));
        }
        if b.headers {
            return Some("no PEM block headers are permitted".into());
        }
        let mut der: &[u8] = &b.der;
        if der.is_empty() {
            return Some("found CERTIFICATE PEM block containing 0 certificates".into());
        }
        while !der.is_empty() {
            match x509_parser::parse_x509_certificate(der) {
                Ok((rest, _)) => der = rest,
                Err(_) => return Some("x509: malformed certificate".into()),
            }
        }
    }
    None
}

/// `ValidateSignerName`: `<domain>/<path>`, the domain of at least two labels.
fn validate_signer_name(name: &str, errs: &mut Vec<FieldError>) {
    let p = "spec.signerName";
    if name.is_empty() {
        errs.push(FieldError::required(p, ""));
        return;
    }
    let Some((domain, path)) = name.split_once('/').filter(|(_, r)| !r.contains('/')) else {
        errs.push(FieldError::invalid(
            p,
            name,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return;
    };
    if domain.len() > 253 {
        errs.push(FieldError::too_long(p, domain, 253));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if let Some((lbl, msgs)) = labels
        .iter()
        .map(|l| (l, is_dns1123_label(l)))
        .find(|(_, m)| !m.is_empty())
    {
        for m in msgs {
            errs.push(FieldError::invalid(
                p,
                domain,
                format!("validating label {}: {m}", go_quote(lbl)),
            ));
        }
    }
    if labels.len() < 2 {
        errs.push(FieldError::invalid(
            p,
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    if let Some((lbl, msgs)) = path
        .split('.')
        .map(|l| (l, is_dns1123_subdomain(l)))
        .find(|(_, m)| !m.is_empty())
    {
        for m in msgs {
            errs.push(FieldError::invalid(
                p,
                path,
                format!("validating label {}: {m}", go_quote(lbl)),
            ));
        }
    }
    if name.len() > 253 + 253 + 63 + 1 + 1 {
        errs.push(FieldError::too_long(p, name, 571));
    }
}

fn validate_conditions(obj: &Value, opts: &Options, errs: &mut Vec<FieldError>) {
    let (mut approved, mut denied) = (false, false);
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in conditions(obj).iter().enumerate() {
        let p = format!("status.conditions[{i}]");
        let t = str_of(c, "type");
        if !opts.empty_condition_type && t.is_empty() {
            errs.push(FieldError::required(format!("{p}.type"), ""));
        }
        let allowed: &[&str] = if TRUE_ONLY.contains(&t) {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        match str_of(c, "status") {
            "" => errs.push(FieldError::required(format!("{p}.status"), "")),
            s if !allowed.contains(&s) => {
                errs.push(FieldError::not_supported(format!("{p}.status"), s, allowed))
            }
            _ => {}
        }
        if !opts.both_approved_and_denied {
            let clash = match t {
                "Approved" => {
                    approved = true;
                    denied
                }
                "Denied" => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if clash {
                errs.push(FieldError::invalid(
                    format!("{p}.type"),
                    t,
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !opts.duplicate_condition_types {
            if seen.contains(&t) {
                errs.push(FieldError::duplicate(format!("{p}.type"), t));
            }
            seen.push(t);
        }
    }
}

/// `validateCertificateSigningRequest`.
fn validate_csr(obj: &Value, opts: &Options) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = spec(obj);
    let request = bytes_of(spec, "request");
    if let Some(why) = csr_error(request.as_deref()) {
        errs.push(FieldError::invalid_rendered(
            "spec.request",
            &go_bytes(request.as_deref()),
            &why,
        ));
    }
    let usages = usages(obj);
    if usages.is_empty() {
        errs.push(FieldError::required("spec.usages", ""));
    }
    if !opts.unknown_usages {
        for (i, u) in usages.iter().enumerate() {
            if !USAGES.contains(u) {
                errs.push(FieldError::not_supported(
                    format!("spec.usages[{i}]"),
                    *u,
                    USAGES,
                ));
            }
        }
    }
    if !opts.duplicate_usages {
        for (i, u) in usages.iter().enumerate() {
            if usages[..i].contains(u) {
                errs.push(FieldError::duplicate(format!("spec.usages[{i}]"), *u));
            }
        }
    }
    let signer = str_of(spec, "signerName");
    if !opts.legacy_signer && signer == LEGACY_SIGNER {
        errs.push(FieldError::invalid(
            "spec.signerName",
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        validate_signer_name(signer, &mut errs);
    }
    if let Some(e) = spec.get("expirationSeconds").and_then(Value::as_i64) {
        if e < 600 {
            errs.push(FieldError::invalid(
                "spec.expirationSeconds",
                e,
                "may not specify a duration less than 600 seconds (10 minutes)",
            ));
        }
    }
    validate_conditions(obj, opts, &mut errs);
    if !opts.arbitrary_certificate {
        let cert = bytes_of(obj.get("status").unwrap_or(&Value::Null), "certificate");
        if let Some(why) = certificate_error(cert.as_deref().unwrap_or_default()) {
            errs.push(FieldError::invalid(
                "status.certificate",
                "<certificate data>",
                why,
            ));
        }
    }
    errs
}

fn certificate(obj: &Value) -> Vec<u8> {
    bytes_of(obj.get("status").unwrap_or(&Value::Null), "certificate").unwrap_or_default()
}

fn count_of(obj: &Value, t: &str) -> usize {
    conditions(obj)
        .iter()
        .filter(|c| str_of(c, "type") == t)
        .count()
}

impl Strategy for CertificateSigningRequests {
    /// kube's CSR strategies: the spec is never the writer's, nor the conditions (status) or the certificate (approval).
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Main => &[&["spec"], &["status"]],
            Part::Status => &[&["spec"], &["status", "conditions"]],
            Part::Approval => &[&["spec"], &["status", "certificate"]],
            _ => default_reset_fields(part, has_status),
        }
    }

    /// PrepareForCreate: no pre-approved requests; the status starts empty.
    fn prepare_for_create(&self, obj: &mut Value) {
        if obj.is_object() {
            obj["status"] = json!({});
        }
    }

    /// The requester's identity replaces whatever the client sent (kube clears
    /// `username`, `uid`, `groups` and `extra`, then fills them from the request's user).
    fn record_requester(
        &self,
        obj: &mut Value,
        requester: Option<&crate::registry::object::Requester>,
    ) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for f in ["username", "uid", "groups", "extra"] {
            spec.remove(f);
        }
        let Some(user) = requester else {
            return;
        };
        if !user.name.is_empty() {
            spec.insert("username".into(), json!(user.name));
        }
        if !user.uid.is_empty() {
            spec.insert("uid".into(), json!(user.uid));
        }
        if !user.groups.is_empty() {
            spec.insert("groups".into(), json!(user.groups));
        }
        if !user.extra.is_empty() {
            spec.insert("extra".into(), json!(user.extra));
        }
    }

    /// Updates through the object never change the spec (nor, generically, the status).
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        match old.get("spec") {
            Some(s) => new["spec"] = s.clone(),
            None => {
                if let Some(o) = new.as_object_mut() {
                    o.remove("spec");
                }
            }
        }
    }

    fn default(&self, obj: &mut Value) {
        let conds = obj
            .pointer_mut("/status/conditions")
            .and_then(Value::as_array_mut);
        for c in conds.into_iter().flatten().filter(|c| c.is_object()) {
            if str_of(c, "status").is_empty() {
                c["status"] = json!("True");
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_csr(obj, &Options::default())
    }

    /// `ValidateCertificateSigningRequestStatusUpdate` (an update of the object itself keeps
    /// the stored status, so the status rules find nothing changed there).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        update_errors(new, old, false)
    }

    /// The status strategy keeps the stored instances of Approved and Denied conditions
    /// while their counts are unchanged (changing the counts is refused by validation).
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value, now: &str) {
        for t in ["Approved", "Denied"] {
            let at = |v: &Value| -> Vec<usize> {
                conditions(v)
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| str_of(c, "type") == t)
                    .map(|(i, _)| i)
                    .collect()
            };
            let (old_at, new_at) = (at(old), at(new));
            if old_at.len() != new_at.len() {
                continue;
            }
            let old_conditions = conditions(old).to_vec();
            let list = new
                .pointer_mut("/status/conditions")
                .and_then(Value::as_array_mut);
            if let Some(list) = list {
                for (o, n) in old_at.iter().zip(&new_at) {
                    if let (Some(slot), Some(c)) = (list.get_mut(*n), old_conditions.get(*o)) {
                        *slot = c.clone();
                    }
                }
            }
        }
        populate_condition_timestamps(new, old, now);
    }

    /// kube's approval strategy fills the conditions' timestamps too.
    fn prepare_for_approval(&self, new: &mut Value, old: &Value, now: &str) {
        populate_condition_timestamps(new, old, now);
    }

    /// `ValidateCertificateSigningRequestStatusUpdate`: Approved and Denied conditions may
    /// not be added or removed here, nor an issued certificate changed.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        update_errors(new, old, false)
    }

    /// `ValidateCertificateSigningRequestApprovalUpdate`: the approval subresource may add
    /// Approved and Denied conditions.
    fn validate_approval(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        update_errors(new, old, true)
    }

    fn extras(&self) -> &'static [Extra] {
        &[Extra::Approval]
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn printer(&self) -> Printer {
        printers::CSR
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("spec.signerName", "spec.signerName"),
    ],
    reject: not_supported,
    extract: signer_fields,
};

fn signer_fields(obj: &Value, put: Put<'_>) {
    put(
        "spec.signerName",
        fields::text(obj, &["spec", "signerName"]),
    );
}

/// The update rules of the status (`approval: false`) and approval subresources.
fn update_errors(new: &Value, old: &Value, approval: bool) -> Vec<FieldError> {
    let old_conditions = conditions(old);
    let (old_cert, new_cert) = (certificate(old), certificate(new));
    let opts = Options {
        both_approved_and_denied: count_of(old, "Approved") > 0 && count_of(old, "Denied") > 0,
        legacy_signer: str_of(spec(old), "signerName") == LEGACY_SIGNER,
        duplicate_condition_types: has_duplicates(old_conditions.iter().map(|c| str_of(c, "type"))),
        empty_condition_type: old_conditions.iter().any(|c| str_of(c, "type").is_empty()),
        arbitrary_certificate: old_cert == new_cert || certificate_error(&old_cert).is_some(),
        unknown_usages: usages(old).iter().any(|u| !USAGES.contains(u)),
        duplicate_usages: has_duplicates(usages(old).into_iter()),
    };
    let mut errs = validate_csr(new, &opts);
    for t in TRUE_ONLY {
        if count_of(new, t) < count_of(old, t) {
            errs.push(FieldError::forbidden(
                "status.conditions",
                format!("updates may not remove a condition of type \"{t}\""),
            ));
        }
    }
    for t in ["Approved", "Denied"] {
        if !approval && count_of(new, t) > count_of(old, t) {
            errs.push(FieldError::forbidden(
                "status.conditions",
                format!("updates may not add a condition of type \"{t}\""),
            ));
        }
    }
    if old_cert != new_cert && !old_cert.is_empty() {
        errs.push(FieldError::forbidden(
            "status.certificate",
            "updates may not modify existing certificate content",
        ));
    }
    errs
}

/// `populateConditionTimestamps`: a condition without `lastUpdateTime` was updated `now`; one
/// without `lastTransitionTime` keeps that of a stored condition of the same type and
/// status, else changed `now`.
fn populate_condition_timestamps(new: &mut Value, old: &Value, now: &str) {
    let status = |c: &Value| match str_of(c, "status") {
        "" => "True".to_string(),
        s => s.to_string(),
    };
    let old_conditions = conditions(old).to_vec();
    let list = new
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut);
    for c in list.into_iter().flatten().filter(|c| c.is_object()) {
        if str_of(c, "lastUpdateTime").is_empty() {
            c["lastUpdateTime"] = json!(now);
        }
        if str_of(c, "lastTransitionTime").is_empty() {
            let kept = old_conditions.iter().find(|o| {
                str_of(o, "type") == str_of(c, "type")
                    && status(o) == status(c)
                    && !str_of(o, "lastTransitionTime").is_empty()
            });
            c["lastTransitionTime"] = match kept {
                Some(o) => json!(str_of(o, "lastTransitionTime")),
                None => json!(now),
            };
        }
    }
}
