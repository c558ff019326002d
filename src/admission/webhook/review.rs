//! The AdmissionReview exchanged with a webhook (admission.k8s.io/v1 and v1beta1): the
//! request built as kube's `CreateV1AdmissionReview` builds it, and the reply checked as
//! `VerifyAdmissionResponse` checks it, with kube's texts.

use base64::Engine;
use serde_json::{json, Map, Value};

use crate::admission::Attributes;
use crate::meta::status::Status;
use crate::registry::discovery::subresource_kind;
use crate::registry::resource::Resource;

/// The AdmissionReview versions a webhook may take, in kube's preference (the webhook's
/// order decides).
pub fn review_version(versions: &[String]) -> Option<&'static str> {
    versions.iter().find_map(|v| match v.as_str() {
        "v1" => Some("admission.k8s.io/v1"),
        "v1beta1" => Some("admission.k8s.io/v1beta1"),
        _ => None,
    })
}

fn gvk((g, v, k): (String, String, String)) -> Value {
    json!({"group": g, "version": v, "kind": k})
}

fn gvr(r: &Resource) -> Value {
    json!({"group": r.group, "version": r.version, "resource": r.resource})
}

/// The review sent to a webhook matched under version `hooked` of the resource, with the
/// objects in that version.
pub fn request(
    api_version: &str,
    uid: &str,
    a: &Attributes,
    hooked: &Resource,
    object: Option<&Value>,
    old_object: Option<&Value>,
) -> Value {
    let mut req = Map::new();
    req.insert("uid".into(), json!(uid));
    req.insert("kind".into(), gvk(subresource_kind(hooked, &a.subresource)));
    req.insert("resource".into(), gvr(hooked));
    if !a.subresource.is_empty() {
        req.insert("subResource".into(), json!(a.subresource));
    }
    req.insert(
        "requestKind".into(),
        gvk(subresource_kind(&a.resource, &a.subresource)),
    );
    req.insert("requestResource".into(), gvr(&a.resource));
    if !a.subresource.is_empty() {
        req.insert("requestSubResource".into(), json!(a.subresource));
    }
    if !a.name.is_empty() {
        req.insert("name".into(), json!(a.name));
    }
    if !a.namespace.is_empty() {
        req.insert("namespace".into(), json!(a.namespace));
    }
    req.insert("operation".into(), json!(a.operation.as_str()));
    let mut user = Map::new();
    if !a.user.name.is_empty() {
        user.insert("username".into(), json!(a.user.name));
    }
    if !a.user.uid.is_empty() {
        user.insert("uid".into(), json!(a.user.uid));
    }
    if !a.user.groups.is_empty() {
        user.insert("groups".into(), json!(a.user.groups));
    }
    if !a.user.extra.is_empty() {
        user.insert("extra".into(), json!(a.user.extra));
    }
    req.insert("userInfo".into(), Value::Object(user));
    req.insert("object".into(), object.cloned().unwrap_or(Value::Null));
    req.insert(
        "oldObject".into(),
        old_object.cloned().unwrap_or(Value::Null),
    );
    req.insert("dryRun".into(), json!(a.dry_run));
    req.insert("options".into(), a.options.clone());
    json!({
        "kind": "AdmissionReview",
        "apiVersion": api_version,
        "request": Value::Object(req),
    })
}

/// A checked reply.
#[derive(Debug, Default)]
pub struct Reply {
    pub allowed: bool,
    /// The JSON patch (decoded from base64), if any.
    pub patch: Option<Vec<u8>>,
    /// `status` of a denial.
    pub result: Option<Value>,
    pub warnings: Vec<String>,
    pub audit_annotations: Vec<(String, String)>,
}

/// kube's `VerifyAdmissionResponse`; the error is the reason the call failed.
pub fn verify(api_version: &str, uid: &str, mutating: bool, body: &Value) -> Result<Reply, String> {
    let Some(resp) = body.get("response").filter(|r| !r.is_null()) else {
        return Err("webhook response was absent".into());
    };
    let s = |k: &str| resp.get(k).and_then(Value::as_str);
    let v1 = api_version == "admission.k8s.io/v1";
    if v1 {
        let got_uid = s("uid").unwrap_or("");
        if got_uid != uid {
            return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
        }
        let (api, kind) = (
            body.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
            body.get("kind").and_then(Value::as_str).unwrap_or(""),
        );
        if api != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            let got = match api.split_once('/') {
                Some(_) => format!("{api}, Kind={kind}"),
                None => format!("/{api}, Kind={kind}"),
            };
            return Err(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}"
            ));
        }
    }
    let patch = match s("patch") {
        Some(p) if !p.is_empty() => Some(
            base64::engine::general_purpose::STANDARD
                .decode(p)
                .map_err(|e| format!("illegal base64 data in response.patch: {e}"))?,
        ),
        _ => None,
    };
    let patch_type = resp.get("patchType").filter(|p| !p.is_null());
    if mutating {
        if v1 {
            if patch.is_some() && patch_type.is_none() {
                return Err("webhook returned response.patch but not response.patchType".into());
            }
            if patch.is_none() && patch_type.is_some() {
                return Err("webhook returned response.patchType but not response.patch".into());
            }
        }
        if let Some(pt) = patch_type {
            let pt = pt.as_str().unwrap_or("");
            if pt.is_empty() {
                return Err(format!(
                    "webhook returned invalid response.patchType of {pt:?}"
                ));
            }
            if pt != "JSONPatch" {
                return Err(format!("unsupported patch type {pt:?}"));
            }
        }
    } else {
        if patch.is_some() {
            return Err("validating webhook may not return response.patch".into());
        }
        if patch_type.is_some() {
            return Err("validating webhook may not return response.patchType".into());
        }
    }
    let warnings = resp
        .get("warnings")
        .and_then(Value::as_array)
        .map(|w| {
            w.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let audit_annotations = resp
        .get("auditAnnotations")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default();
    Ok(Reply {
        allowed: resp
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        patch,
        result: resp.get("status").filter(|s| !s.is_null()).cloned(),
        warnings,
        audit_annotations,
    })
}

/// kube's `ToStatusErr`: the webhook's status, at least a 400 `Failure`, its message
/// prefixed with `admission webhook "<name>" denied the request`.
pub fn denial(webhook: &str, result: Option<&Value>) -> Status {
    let empty = Value::Null;
    let r = result.unwrap_or(&empty);
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let msg = r.get("message").and_then(Value::as_str).unwrap_or("");
    let reason = r.get("reason").and_then(Value::as_str).unwrap_or("");
    let message = if !msg.is_empty() {
        format!("{denied_by}: {msg}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    let code = r
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
        .unwrap_or(400);
    let mut s = Status::new(code, "", message);
    s.reason = std::borrow::Cow::Owned(reason.to_string());
    if let Some(d) = r.get("details").filter(|d| d.is_object()) {
        s = s.with_details(d.clone());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_checked_as_kube_checks_them() {
        let v1 = "admission.k8s.io/v1";
        let ok = json!({"apiVersion": v1, "kind": "AdmissionReview",
            "response": {"uid": "u", "allowed": true}});
        assert!(verify(v1, "u", true, &ok).unwrap().allowed);
        assert_eq!(
            verify(v1, "x", true, &ok).unwrap_err(),
            "expected response.uid=\"x\", got \"u\""
        );
        assert_eq!(
            verify(v1, "u", true, &json!({"response": {"uid": "u"}})).unwrap_err(),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind="
        );
        assert_eq!(
            verify(v1, "u", true, &json!({})).unwrap_err(),
            "webhook response was absent"
        );
        let patch = json!({"apiVersion": v1, "kind": "AdmissionReview",
            "response": {"uid": "u", "allowed": true, "patch": "W10="}});
        assert_eq!(
            verify(v1, "u", true, &patch).unwrap_err(),
            "webhook returned response.patch but not response.patchType"
        );
        assert_eq!(
            verify(v1, "u", false, &patch).unwrap_err(),
            "validating webhook may not return response.patch"
        );
        // v1beta1 replies are not checked for uid or kind, and a patch is a JSON patch.
        let beta = json!({"response": {"allowed": true, "patch": "W10="}});
        assert_eq!(
            verify("admission.k8s.io/v1beta1", "u", true, &beta)
                .unwrap()
                .patch
                .unwrap(),
            b"[]"
        );
    }

    #[test]
    fn denials_read_as_kube_writes_them() {
        let s = denial(
            "deny.example.com",
            Some(&json!({"code": 418, "message": "no tea"})),
        );
        assert_eq!(s.code, 418);
        assert_eq!(
            s.message,
            "admission webhook \"deny.example.com\" denied the request: no tea"
        );
        let s = denial("d", None);
        assert_eq!(s.code, 400);
        assert_eq!(
            s.message,
            "admission webhook \"d\" denied the request without explanation"
        );
        assert_eq!(denial("d", Some(&json!({"code": 200}))).code, 400);
    }
}
