//! Webhook token authentication (`--authentication-token-webhook-config-file`, a kubeconfig
//! naming the remote service): a bearer token no local authenticator knows is sent as a
//! `TokenReview` (`authentication.k8s.io/v1`, or `v1beta1` with
//! `--authentication-token-webhook-version`), and the answer is cached for
//! `--authentication-token-webhook-cache-ttl` (default 2 minutes), successes and failures
//! alike. A webhook that is down, slow or answers garbage fails the request with 401, never 500.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use super::{Refused, UserInfo};

/// How long one review may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Cached answers kept at most (oldest dropped first).
const CACHE_MAX: usize = 10_000;

pub struct Webhook {
    client: KubeconfigClient,
    version: String,
    ttl: Duration,
    cache: Mutex<HashMap<(String, Vec<String>), (Instant, Option<UserInfo>)>>,
}

pub(crate) fn kubeconfig_bytes(
    doc: &Value,
    base: &Path,
    data_key: &str,
    file_key: &str,
) -> Result<Option<Vec<u8>>, String> {
    if let Some(d) = doc.get(data_key).and_then(Value::as_str) {
        return base64::engine::general_purpose::STANDARD
            .decode(d)
            .map(Some)
            .map_err(|e| format!("{data_key}: {e}"));
    }
    match doc.get(file_key).and_then(Value::as_str) {
        None => Ok(None),
        Some(f) => {
            let p = base.join(f);
            std::fs::read(&p)
                .map(Some)
                .map_err(|e| format!("reading {}: {e}", p.display()))
        }
    }
}

/// Caches a webhook's answer, dropping the oldest one when the cache is full (bounded
/// memory whatever callers send). Shared by the authentication and authorization webhooks.
pub fn remember<K: Clone + Eq + std::hash::Hash, V>(
    cache: &mut HashMap<K, (Instant, V)>,
    key: K,
    value: V,
) {
    if cache.len() >= CACHE_MAX {
        if let Some(oldest) = cache
            .iter()
            .min_by_key(|(_, (at, _))| *at)
            .map(|(k, _)| k.clone())
        {
            cache.remove(&oldest);
        }
    }
    cache.insert(key, (Instant::now(), value));
}

/// A client for a webhook named by a kubeconfig file (its first cluster and user): the
/// server URL, the CA or `insecure-skip-tls-verify`, a client certificate or bearer token.
/// Authentication and authorization webhooks share it.
pub struct KubeconfigClient {
    url: String,
    client: reqwest::Client,
    bearer: Option<String>,
}

impl KubeconfigClient {
    /// Reads the kubeconfig.
    pub fn load(path: &Path) -> Result<KubeconfigClient, String> {
        Self::load_with_timeout(path, TIMEOUT)
    }

    /// Reads the kubeconfig; every call ends within `timeout` (the audit webhook's is kube's
    /// generic webhook timeout, 30 s).
    pub fn load_with_timeout(path: &Path, timeout: Duration) -> Result<KubeconfigClient, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let doc: Value = serde_yaml::from_str(&text)
            .map_err(|e| format!("{}: not a kubeconfig: {e}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let cluster = doc
            .pointer("/clusters/0/cluster")
            .ok_or_else(|| format!("{}: no cluster", path.display()))?;
        let url = cluster
            .get("server")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{}: the cluster has no server", path.display()))?
            .to_string();
        let mut b = reqwest::Client::builder().timeout(timeout).use_rustls_tls();
        if let Some(ca) = kubeconfig_bytes(
            cluster,
            base,
            "certificate-authority-data",
            "certificate-authority",
        )? {
            b = b.tls_built_in_root_certs(false).add_root_certificate(
                reqwest::Certificate::from_pem(&ca).map_err(|e| format!("webhook CA: {e}"))?,
            );
        }
        if cluster
            .get("insecure-skip-tls-verify")
            .and_then(Value::as_bool)
            == Some(true)
        {
            b = b.danger_accept_invalid_certs(true);
        }
        let user = doc.pointer("/users/0/user").cloned().unwrap_or(json!({}));
        let cert = kubeconfig_bytes(&user, base, "client-certificate-data", "client-certificate")?;
        let key = kubeconfig_bytes(&user, base, "client-key-data", "client-key")?;
        if let (Some(mut c), Some(k)) = (cert, key) {
            c.extend_from_slice(&k);
            b = b.identity(
                reqwest::Identity::from_pem(&c)
                    .map_err(|e| format!("webhook client certificate: {e}"))?,
            );
        }
        let bearer = user
            .get("token")
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(KubeconfigClient {
            url,
            client: b.build().map_err(|e| format!("webhook client: {e}"))?,
            bearer,
        })
    }

    /// POSTs a review object: the answer's status code, content type and body, whatever
    /// they are.
    pub async fn post_raw(&self, body: &Value) -> Result<(u16, String, bytes::Bytes), String> {
        let mut req = self.client.post(&self.url).json(body);
        if let Some(t) = &self.bearer {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.map_err(|e| e.to_string())?;
        let code = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        Ok((code, ctype, resp.bytes().await.map_err(|e| e.to_string())?))
    }

    /// POSTs a review object and returns the answer (a non-2xx answer is an error).
    pub async fn post(&self, body: &Value) -> Result<Value, String> {
        let mut req = self.client.post(&self.url).json(body);
        if let Some(t) = &self.bearer {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.map_err(|e| format!("unreachable: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("answered {}", resp.status()));
        }
        resp.json().await.map_err(|e| format!("bad answer: {e}"))
    }
}

impl Webhook {
    /// Reads the kubeconfig (its first cluster and user).
    pub fn load(path: &Path, version: &str, ttl: Duration) -> Result<Webhook, String> {
        if !matches!(version, "v1" | "v1beta1") {
            return Err(format!(
                "--authentication-token-webhook-version must be v1 or v1beta1, not {version:?}"
            ));
        }
        Ok(Webhook {
            client: KubeconfigClient::load(path)?,
            version: version.to_string(),
            ttl,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// Reviews a token (answers cached); `audiences` as the request wants them.
    pub async fn authenticate(
        &self,
        token: &str,
        audiences: &[String],
    ) -> Result<(UserInfo, Vec<String>), Refused> {
        let key = (token.to_string(), audiences.to_vec());
        if let Some((at, answer)) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned()
        {
            if at.elapsed() < self.ttl {
                return answer
                    .map(|u| (u, audiences.to_vec()))
                    .ok_or_else(|| Refused("token webhook: not authenticated (cached)".into()));
            }
        }
        let answer = self.review(token, audiences).await;
        // Outages are not cached: the next request asks again.
        if let Ok(a) = &answer {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            remember(&mut cache, key, a.clone());
        }
        match answer {
            Ok(Some(u)) => Ok((u, audiences.to_vec())),
            Ok(None) => Err(Refused("token webhook: not authenticated".into())),
            Err(e) => Err(Refused(format!("token webhook: {e}"))),
        }
    }

    /// One TokenReview round trip: `Ok(None)` when the webhook says no.
    async fn review(&self, token: &str, audiences: &[String]) -> Result<Option<UserInfo>, String> {
        let mut spec = json!({"token": token});
        if !audiences.is_empty() {
            spec["audiences"] = json!(audiences);
        }
        let body = json!({
            "apiVersion": format!("authentication.k8s.io/{}", self.version),
            "kind": "TokenReview",
            "spec": spec,
        });
        let v = self.client.post(&body).await?;
        let status = v.get("status").cloned().unwrap_or(json!({}));
        if status.get("authenticated").and_then(Value::as_bool) != Some(true) {
            return Ok(None);
        }
        let u = status.get("user").cloned().unwrap_or(json!({}));
        let mut extra = std::collections::BTreeMap::new();
        if let Some(m) = u.get("extra").and_then(Value::as_object) {
            for (k, vals) in m {
                extra.insert(k.clone(), super::string_list(Some(vals)));
            }
        }
        let name = u.get("username").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            return Err("answer names no user".into());
        }
        Ok(Some(UserInfo {
            name: name.to_string(),
            uid: u
                .get("uid")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            groups: super::string_list(u.get("groups")),
            extra,
        }))
    }
}
