//! authentication.k8s.io/v1 and service-account tokens over HTTP: SelfSubjectReview
//! (`kubectl auth whoami`), TokenReview, the `serviceaccounts/token` TokenRequest subresource
//! (`kubectl create token`) and the service-account issuer's OIDC discovery documents.
//! Reviews are not stored; bodies come through the one body decoder.

use http::{header, HeaderValue, Response, StatusCode};
use serde_json::{json, Map, Value};

use super::{respond, Ctx};
use crate::authn::serviceaccount::{Grant, KubeClaim, Ref};
use crate::meta::field_error::FieldError;
use crate::meta::status::{GroupResource, Status};
use crate::registry::store::{meta_str, ReadAt, Scope};
use crate::server::negotiate::{self, Output};
use crate::server::{App, Body, User};

const GROUP_VERSION: &str = "authentication.k8s.io/v1";

/// The create-only review resources of authentication.k8s.io/v1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewKind {
    SelfSubject,
    Token,
}

pub fn review_kind(resource: &str) -> Option<ReviewKind> {
    match resource {
        "selfsubjectreviews" => Some(ReviewKind::SelfSubject),
        "tokenreviews" => Some(ReviewKind::Token),
        _ => None,
    }
}

/// Decodes a body that must be an object of `kind` (when it names one).
pub(super) fn decode_kind(
    headers: &http::HeaderMap,
    body: &[u8],
    kind: &str,
) -> Result<Map<String, Value>, Status> {
    let ctype = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let v = negotiate::decode_body(ctype, body)?;
    let Value::Object(m) = v else {
        return Err(Status::bad_request(
            "the body of the request was not a JSON object",
        ));
    };
    if let Some(k) = m.get("kind").and_then(Value::as_str) {
        if k != kind {
            return Err(Status::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({kind})"
            )));
        }
    }
    Ok(m)
}

/// POST selfsubjectreviews / tokenreviews.
pub async fn review(
    app: &App,
    user: &User,
    kind: ReviewKind,
    headers: &http::HeaderMap,
    body: &[u8],
    out: Output,
) -> Result<Response<Body>, Status> {
    let created = |v: Value| Ok(respond(out.plain(), StatusCode::CREATED, &v));
    match kind {
        ReviewKind::SelfSubject => {
            decode_kind(headers, body, "SelfSubjectReview")?;
            created(json!({
                "kind": "SelfSubjectReview", "apiVersion": GROUP_VERSION,
                "metadata": {"creationTimestamp": null},
                "status": {"userInfo": user.to_json()},
            }))
        }
        ReviewKind::Token => {
            let review = decode_kind(headers, body, "TokenReview")?;
            let spec = review.get("spec").cloned().unwrap_or(json!({}));
            let token = spec.get("token").and_then(Value::as_str).unwrap_or("");
            if token.is_empty() {
                return Err(Status::bad_request(
                    "token is required for TokenReview in authentication",
                ));
            }
            let audiences = crate::authn::string_list(spec.get("audiences"));
            let status = match app
                .authn
                .authenticate_token(&app.store, token, &audiences)
                .await
            {
                Ok((u, valid_for)) => {
                    let auds = if valid_for.is_empty() {
                        app.authn
                            .service_accounts
                            .as_ref()
                            .map(|s| s.api_audiences().to_vec())
                            .unwrap_or_default()
                    } else {
                        valid_for
                    };
                    json!({"authenticated": true, "user": u.to_json(), "audiences": auds})
                }
                Err(_) => json!({"user": {}, "error": "invalid bearer token"}),
            };
            created(json!({
                "kind": "TokenReview", "apiVersion": GROUP_VERSION,
                "metadata": {"creationTimestamp": null},
                "spec": spec,
                "status": status,
            }))
        }
    }
}

/// POST serviceaccounts/<name>/token: a bound service-account token.
pub async fn token_request(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let Some(sa) = ctx.app.authn.service_accounts.as_ref() else {
        return Err(Status::path_not_found());
    };
    let req = decode_kind(&ctx.headers, &ctx.body, "TokenRequest")?;
    // Admission sees the request as a CREATE of serviceaccounts/token (NodeRestriction checks
    // a kubelet's bindings there).
    let admission = ctx.write_options("CreateOptions")?;
    if let (Some(mutate), Some(admit)) = (&admission.mutate, &admission.admit) {
        admit(&mutate(Value::Object(req.clone()), None).await?, None).await?;
    }
    let spec = req.get("spec").cloned().unwrap_or(json!({}));
    let mut audiences = crate::authn::string_list(spec.get("audiences"));
    if audiences.is_empty() {
        audiences = sa.api_audiences().to_vec();
    }
    let mut expiration = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(3600);
    let name = ctx.name().to_string();
    let invalid =
        |e: FieldError| Status::invalid("TokenRequest", "authentication.k8s.io", &name, &[e]);
    if expiration < 600 {
        return Err(invalid(FieldError::invalid(
            "spec.expirationSeconds",
            json!(expiration),
            "may not specify a duration less than 10 minutes",
        )));
    }
    if expiration > 1 << 32 {
        return Err(invalid(FieldError::invalid(
            "spec.expirationSeconds",
            json!(expiration),
            "may not specify a duration larger than 2^32 seconds",
        )));
    }
    if let Some(max) = sa.max_expiration() {
        expiration = expiration.min(max.max(600));
    }
    let ns = ctx.ri.namespace.clone().unwrap_or_default();
    let account = ctx
        .app
        .store
        .get(ctx.scope(), &name, ReadAt::Latest)
        .await?;
    let mut claim = KubeClaim {
        namespace: ns.clone(),
        serviceaccount: Ref {
            name: name.clone(),
            uid: meta_str(&account, "uid").to_string(),
        },
        ..Default::default()
    };
    let bound = spec.get("boundObjectRef").filter(|b| !b.is_null()).cloned();
    if let Some(b) = &bound {
        let kind = b.get("kind").and_then(Value::as_str).unwrap_or("");
        let bname = b.get("name").and_then(Value::as_str).unwrap_or("");
        let buid = b.get("uid").and_then(Value::as_str).unwrap_or("");
        let resource = match kind {
            "Pod" => "pods",
            "Secret" => "secrets",
            _ => {
                return Err(Status::bad_request(format!(
                    "cannot bind token to object of type {kind}"
                )))
            }
        };
        let info = ctx.app.store.registry().builtin("", "v1", resource);
        let obj = ctx
            .app
            .store
            .get(
                Scope {
                    info: &info,
                    namespace: Some(&ns),
                },
                bname,
                ReadAt::Latest,
            )
            .await?;
        let uid = meta_str(&obj, "uid").to_string();
        if !buid.is_empty() && buid != uid {
            return Err(Status::conflict(
                GroupResource { group: "", resource: kind },
                bname,
                &format!("the UID in the bound object reference ({buid}) does not match the UID in record. The object might have been deleted and then recreated"),
            ));
        }
        let r = Ref {
            name: bname.to_string(),
            uid,
        };
        if kind == "Pod" {
            let pod_sa = obj
                .pointer("/spec/serviceAccountName")
                .and_then(Value::as_str)
                .unwrap_or("default");
            if pod_sa != name {
                return Err(Status::bad_request(format!(
                    "cannot bind token for serviceaccount {name:?} to pod running with different serviceaccount name."
                )));
            }
            claim.pod = Some(r);
        } else {
            claim.secret = Some(r);
        }
    }
    let now = jiff::Timestamp::now().as_second();
    let grant = Grant {
        audiences: audiences.clone(),
        expiration_seconds: expiration,
        claim,
    };
    let (token, exp) = sa.issue(&grant, now).map_err(Status::internal)?;
    let exp_ts = jiff::Timestamp::from_second(exp)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    Ok(respond(
        ctx.plain_output(),
        StatusCode::CREATED,
        &json!({
            "kind": "TokenRequest", "apiVersion": GROUP_VERSION,
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": null},
            "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": bound},
            "status": {"token": token, "expirationTimestamp": exp_ts},
        }),
    ))
}

/// `/.well-known/openid-configuration` and `/openid/v1/jwks` of the service-account issuer.
pub fn discovery(app: &App, path: &str) -> Result<Response<Body>, Status> {
    let sa = app
        .authn
        .service_accounts
        .as_ref()
        .ok_or_else(Status::path_not_found)?;
    let (doc, ctype) = if path == "/openid/v1/jwks" {
        (sa.jwks(), "application/jwk-set+json")
    } else {
        (sa.openid_configuration(), "application/json")
    };
    let mut r = respond(Output::Json, StatusCode::OK, &doc);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    Ok(r)
}
