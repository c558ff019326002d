//! Bootstrap tokens (`--enable-bootstrap-token-auth`): bearer tokens `<id>.<secret>`
//! (`[a-z0-9]{6}\.[a-z0-9]{16}`) backed by Secrets of type `bootstrap.kubernetes.io/token`
//! named `bootstrap-token-<id>` in `kube-system`, as the bootstrap-token seed describes. The
//! user is `system:bootstrap:<id>` in `system:bootstrappers` plus the Secret's
//! `auth-extra-groups` (each `system:bootstrappers:...`). Also the pure parts of the
//! controllers around them: expiry (the token cleaner) and the detached HS256 JWS over the
//! `cluster-info` kubeconfig (the bootstrap signer).

use base64::Engine;
use serde_json::Value;

use super::{Refused, UserInfo};
use crate::registry::store::{meta_str, ReadAt, Scope, Store};

pub const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
pub const NAMESPACE: &str = "kube-system";
pub const SECRET_PREFIX: &str = "bootstrap-token-";

/// `(id, secret)` of a well-formed bootstrap token.
pub fn parse(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let ok = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    (ok(id, 6) && ok(secret, 16)).then_some((id, secret))
}

/// A `data` entry of a Secret, base64-decoded.
pub fn data(secret: &Value, key: &str) -> Option<String> {
    let b = secret.get("data")?.get(key)?.as_str()?;
    let raw = base64::engine::general_purpose::STANDARD.decode(b).ok()?;
    String::from_utf8(raw).ok()
}

/// Whether the Secret's `expiration` is in the past at `now` (an unparseable one counts as
/// expired, as kube treats it).
pub fn expired(secret: &Value, now: jiff::Timestamp) -> bool {
    match data(secret, "expiration") {
        None => false,
        Some(e) => e.parse::<jiff::Timestamp>().map_or(true, |t| t <= now),
    }
}

fn valid_extra_group(g: &str) -> bool {
    let Some(rest) = g.strip_prefix("system:bootstrappers:") else {
        return false;
    };
    !rest.is_empty()
        && rest.len() <= 256
        && rest
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':' || b == b'-')
        && rest
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// Authenticates a bootstrap token; `None` when the token is not one (other authenticators
/// may know it).
pub async fn authenticate(store: &Store, token: &str) -> Option<Result<UserInfo, Refused>> {
    let (id, secret_part) = parse(token)?;
    let refuse = |why: &str| Some(Err(Refused(format!("bootstrap token {id}: {why}"))));
    let info = store.registry().builtin("", "v1", "secrets");
    let scope = Scope {
        info: &info,
        namespace: Some(NAMESPACE),
    };
    let Ok(secret) = store
        .get(scope, &format!("{SECRET_PREFIX}{id}"), ReadAt::Any)
        .await
    else {
        return refuse("no such token");
    };
    if secret.get("type").and_then(Value::as_str) != Some(SECRET_TYPE) {
        return refuse("wrong Secret type");
    }
    if !meta_str(&secret, "deletionTimestamp").is_empty() {
        return refuse("being deleted");
    }
    let stored = data(&secret, "token-secret").unwrap_or_default();
    if !constant_time_eq(stored.as_bytes(), secret_part.as_bytes()) {
        return refuse("wrong secret");
    }
    if data(&secret, "token-id").as_deref() != Some(id) {
        return refuse("token-id does not match");
    }
    if expired(&secret, jiff::Timestamp::now()) {
        return refuse("expired");
    }
    if data(&secret, "usage-bootstrap-authentication").as_deref() != Some("true") {
        return refuse("not for authentication");
    }
    let mut groups = vec!["system:bootstrappers".to_string()];
    if let Some(extra) = data(&secret, "auth-extra-groups") {
        for g in extra.split(',').map(str::trim).filter(|g| !g.is_empty()) {
            if !valid_extra_group(g) {
                return refuse("invalid auth-extra-groups");
            }
            if !groups.iter().any(|have| have == g) {
                groups.push(g.to_string());
            }
        }
    }
    Some(Ok(UserInfo {
        name: format!("system:bootstrap:{id}"),
        groups,
        ..Default::default()
    }))
}

/// Compares without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The detached JWS (`<header>..<signature>`, HS256, `kid` = token id) the bootstrap signer
/// puts in `cluster-info` as `jws-kubeconfig-<id>`; the key is the whole token.
pub fn detached_jws(payload: &str, token_id: &str, token_secret: &str) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = b64.encode(format!(r#"{{"alg":"HS256","kid":"{token_id}"}}"#));
    let body = b64.encode(payload);
    let key = ring::hmac::Key::new(
        ring::hmac::HMAC_SHA256,
        format!("{token_id}.{token_secret}").as_bytes(),
    );
    let sig = ring::hmac::sign(&key, format!("{header}.{body}").as_bytes());
    format!("{header}..{}", b64.encode(sig.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_format_and_groups() {
        assert_eq!(
            parse("07401b.f395accd246ae52d"),
            Some(("07401b", "f395accd246ae52d"))
        );
        for bad in [
            "07401B.f395accd246ae52d",
            "0740.f395accd246ae52d",
            "07401b.f395",
            "x",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        assert!(valid_extra_group("system:bootstrappers:worker"));
        assert!(!valid_extra_group("system:masters"));
        assert!(!valid_extra_group("system:bootstrappers:"));
        assert!(!valid_extra_group("system:bootstrappers:Worker"));
    }

    #[test]
    fn jws_is_verifiable_hs256() {
        let jws = detached_jws("kubeconfig-text", "07401b", "f395accd246ae52d");
        let (header, rest) = jws.split_once("..").unwrap();
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        assert_eq!(
            b64.decode(header).unwrap(),
            br#"{"alg":"HS256","kid":"07401b"}"#
        );
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, b"07401b.f395accd246ae52d");
        let signed = format!("{header}.{}", b64.encode("kubeconfig-text"));
        ring::hmac::verify(&key, signed.as_bytes(), &b64.decode(rest).unwrap()).unwrap();
    }
}
