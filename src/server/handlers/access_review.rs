//! authorization.k8s.io/v1 access reviews, answered by the replica's union authorizer:
//! SelfSubjectAccessReview (`kubectl auth can-i`),
//! SubjectAccessReview, LocalSubjectAccessReview and SelfSubjectRulesReview
//! (`kubectl auth can-i --list`). Not stored; bodies come through the one body decoder.

use http::{Response, StatusCode};
use serde_json::{json, Map, Value};

use super::respond;
use crate::authn::UserInfo;
use crate::authz::{self, Attributes, Decision, ResourceAttributes};
use crate::meta::field_error::FieldError;
use crate::meta::status::Status;
use crate::server::negotiate::Output;
use crate::server::{Body, User};

const GROUP_VERSION: &str = "authorization.k8s.io/v1";

/// The review resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Review {
    SelfSubjectAccess,
    SubjectAccess,
    LocalSubjectAccess,
    SelfSubjectRules,
}

impl Review {
    pub fn of(resource: &str) -> Option<Review> {
        match resource {
            "selfsubjectaccessreviews" => Some(Review::SelfSubjectAccess),
            "subjectaccessreviews" => Some(Review::SubjectAccess),
            "localsubjectaccessreviews" => Some(Review::LocalSubjectAccess),
            "selfsubjectrulesreviews" => Some(Review::SelfSubjectRules),
            _ => None,
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Review::SelfSubjectAccess => "SelfSubjectAccessReview",
            Review::SubjectAccess => "SubjectAccessReview",
            Review::LocalSubjectAccess => "LocalSubjectAccessReview",
            Review::SelfSubjectRules => "SelfSubjectRulesReview",
        }
    }
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// POST one review. `namespace` is the URL's (local reviews).
pub async fn handle(
    authorizer: &authz::Authorizer,
    requester: &User,
    review: Review,
    namespace: Option<&str>,
    headers: &http::HeaderMap,
    body: &[u8],
    out: Output,
) -> Result<Response<Body>, Status> {
    let kind = review.kind();
    let obj = super::authentication::decode_kind(headers, body, kind)?;
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    let invalid = |e: FieldError| Status::invalid(kind, "authorization.k8s.io", "", &[e]);
    let status = match review {
        Review::SelfSubjectRules => rules(authorizer, requester, s(&spec, "namespace")),
        _ => {
            let subject = match review {
                Review::SelfSubjectAccess => requester.clone(),
                _ => {
                    let mut extra = std::collections::BTreeMap::new();
                    if let Some(m) = spec.get("extra").and_then(Value::as_object) {
                        for (k, v) in m {
                            extra.insert(k.clone(), crate::authn::string_list(Some(v)));
                        }
                    }
                    let u = UserInfo {
                        name: s(&spec, "user").to_string(),
                        uid: s(&spec, "uid").to_string(),
                        groups: crate::authn::string_list(spec.get("groups")),
                        extra,
                    };
                    if u.name.is_empty() && u.groups.is_empty() {
                        return Err(invalid(FieldError::invalid(
                            "spec.user",
                            json!(""),
                            "at least one of user or group must be specified",
                        )));
                    }
                    u
                }
            };
            let res = spec.get("resourceAttributes").filter(|v| v.is_object());
            let non = spec.get("nonResourceAttributes").filter(|v| v.is_object());
            if res.is_some() == non.is_some() {
                return Err(invalid(FieldError::invalid(
                    "spec.resourceAttributes",
                    res.cloned().unwrap_or(Value::Null),
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                )));
            }
            if review == Review::LocalSubjectAccess {
                let ns = res.map(|r| s(r, "namespace")).unwrap_or("");
                if Some(ns) != namespace {
                    return Err(invalid(FieldError::invalid(
                        "spec.resourceAttributes.namespace",
                        json!(ns),
                        "must match metadata.namespace",
                    )));
                }
            }
            let decision = match (res, non) {
                (Some(r), _) => {
                    let ns = s(r, "namespace");
                    let name = s(r, "name");
                    let sub = s(r, "subresource");
                    authorizer
                        .decide(
                            &subject,
                            &Attributes::Resource(ResourceAttributes {
                                verb: s(r, "verb"),
                                group: s(r, "group"),
                                version: s(r, "version"),
                                resource: s(r, "resource"),
                                subresource: (!sub.is_empty()).then_some(sub),
                                namespace: (!ns.is_empty()).then_some(ns),
                                name: (!name.is_empty()).then_some(name),
                                field_selector: r
                                    .pointer("/fieldSelector/rawSelector")
                                    .and_then(Value::as_str),
                            }),
                        )
                        .await
                }
                (None, n) => {
                    let n = n.unwrap_or(&Value::Null);
                    authorizer
                        .decide(
                            &subject,
                            &Attributes::NonResource {
                                path: s(n, "path"),
                                verb: s(n, "verb").to_string(),
                            },
                        )
                        .await
                }
            };
            let (mut status, reason) = match decision {
                Decision::Allow(r) => (json!({"allowed": true}), r),
                Decision::Deny(r) => (json!({"allowed": false, "denied": true}), r),
                Decision::NoOpinion(r) => (json!({"allowed": false}), r),
            };
            if !reason.is_empty() {
                status["reason"] = json!(reason);
            }
            status
        }
    };
    let mut meta = Map::new();
    meta.insert("creationTimestamp".into(), Value::Null);
    if let Some(ns) = namespace {
        meta.insert("namespace".into(), json!(ns));
    }
    Ok(respond(
        out.plain(),
        StatusCode::CREATED,
        &json!({"kind": kind, "apiVersion": GROUP_VERSION, "metadata": meta,
                "spec": spec, "status": status}),
    ))
}

/// SelfSubjectRulesReview status: the rules every mode that can enumerate them grants in
/// the namespace, `incomplete` when a mode cannot.
fn rules(authorizer: &authz::Authorizer, user: &User, namespace: &str) -> Value {
    let r = authorizer.rules_for(user, namespace);
    let mut status = json!({
        "resourceRules": r.resource_rules,
        "nonResourceRules": r.non_resource_rules,
        "incomplete": r.incomplete,
    });
    match r.errors.len() {
        0 => {}
        1 => status["evaluationError"] = json!(r.errors[0]),
        _ => status["evaluationError"] = json!(format!("[{}]", r.errors.join(", "))),
    }
    status
}
