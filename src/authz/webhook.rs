//! The Webhook authorizer (`--authorization-webhook-config-file`, a kubeconfig naming the
//! remote service): each decision is a `SubjectAccessReview` (`authorization.k8s.io/v1`, or
//! `v1beta1` with `--authorization-webhook-version`) posted to it. Allowed answers are cached
//! for `--authorization-webhook-cache-authorized-ttl` (5 minutes), the others for
//! `--authorization-webhook-cache-unauthorized-ttl` (30 seconds). A webhook that cannot be
//! reached or answers garbage has no opinion (logged), so later authorizers still decide.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Attributes, Decision};
use crate::authn::webhook::{remember, KubeconfigClient};
use crate::authn::UserInfo;

pub struct Webhook {
    client: KubeconfigClient,
    version: String,
    authorized_ttl: Duration,
    unauthorized_ttl: Duration,
    cache: Mutex<HashMap<String, (Instant, Decision)>>,
}

/// The SubjectAccessReview spec of a request.
pub fn review_spec(user: &UserInfo, attrs: &Attributes<'_>, version: &str) -> Value {
    let mut spec = serde_json::Map::new();
    match attrs {
        Attributes::Resource(r) => {
            let mut ra = serde_json::Map::new();
            for (k, v) in [
                ("namespace", r.namespace.unwrap_or("")),
                ("verb", r.verb),
                ("group", r.group),
                ("version", r.version),
                ("resource", r.resource),
                ("subresource", r.subresource.unwrap_or("")),
                ("name", r.name.unwrap_or("")),
            ] {
                if !v.is_empty() {
                    ra.insert(k.into(), json!(v));
                }
            }
            spec.insert("resourceAttributes".into(), Value::Object(ra));
        }
        Attributes::NonResource { path, verb } => {
            spec.insert(
                "nonResourceAttributes".into(),
                json!({"path": path, "verb": verb}),
            );
        }
    }
    spec.insert("user".into(), json!(user.name));
    if !user.groups.is_empty() {
        let key = if version == "v1beta1" {
            "group"
        } else {
            "groups"
        };
        spec.insert(key.into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
    if !user.uid.is_empty() {
        spec.insert("uid".into(), json!(user.uid));
    }
    Value::Object(spec)
}

impl Webhook {
    pub fn load(
        path: &Path,
        version: &str,
        authorized_ttl: Duration,
        unauthorized_ttl: Duration,
    ) -> Result<Webhook, String> {
        if !matches!(version, "v1" | "v1beta1") {
            return Err(format!(
                "--authorization-webhook-version must be v1 or v1beta1, not {version:?}"
            ));
        }
        Ok(Webhook {
            client: KubeconfigClient::load(path)?,
            version: version.to_string(),
            authorized_ttl,
            unauthorized_ttl,
            cache: Mutex::new(HashMap::new()),
        })
    }

    pub async fn authorize(&self, user: &UserInfo, attrs: &Attributes<'_>) -> Decision {
        let spec = review_spec(user, attrs, &self.version);
        let key = spec.to_string();
        if let Some((at, d)) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned()
        {
            let ttl = match d {
                Decision::Allow(_) => self.authorized_ttl,
                _ => self.unauthorized_ttl,
            };
            if at.elapsed() < ttl {
                return d;
            }
        }
        let body = json!({
            "apiVersion": format!("authorization.k8s.io/{}", self.version),
            "kind": "SubjectAccessReview",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": {"allowed": false},
        });
        let answer = match self.client.post(&body).await {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!("authorization webhook: {e}");
                return Decision::NoOpinion(String::new());
            }
        };
        let status = answer.get("status").cloned().unwrap_or(json!({}));
        let reason = status
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let d = if status.get("allowed").and_then(Value::as_bool) == Some(true) {
            Decision::Allow(reason)
        } else if status.get("denied").and_then(Value::as_bool) == Some(true) {
            Decision::Deny(reason)
        } else {
            Decision::NoOpinion(reason)
        };
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        remember(&mut cache, key, d.clone());
        d
    }
}
