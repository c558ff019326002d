//! Authentication: who a request is, decided per request (kube-apiserver's union of
//! authenticators). A verified TLS client certificate (CN = user, O = groups; or an
//! authenticating proxy's, whose request headers name the user), then a bearer
//! token (static token file, bootstrap token, service-account JWT, OIDC ID token, token
//! webhook); the first success wins. A credential that
//! is present but invalid is a 401 (never anonymous); a request with no credential at all is
//! `system:anonymous` in `system:unauthenticated` when `--anonymous-auth` allows it, else 401.
//! Every authenticated user also gets `system:authenticated`.
//!
//! Owns: [`UserInfo`], credential extraction, the static token file and service-account token
//! issuing/verification ([`serviceaccount`]). Does not know: authorization (what a user may do
//! is the `authz` module's), HTTP routing, TLS (the handshake verified the certificate).
//! Credentials never reach a log line: failures are logged by kind only.

pub mod bootstrap;
pub mod oidc;
pub mod serviceaccount;
pub mod token_file;
pub mod webhook;
pub mod x509;

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::registry::store::Store;

pub const ANONYMOUS: &str = "system:anonymous";
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
pub const AUTHENTICATED: &str = "system:authenticated";

/// kube's `user.Info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS.into(),
            groups: vec![UNAUTHENTICATED.into()],
            ..Default::default()
        }
    }

    pub fn is_anonymous(&self) -> bool {
        self.name == ANONYMOUS
    }

    /// Adds `system:authenticated` (once) to an authenticated user.
    fn authenticated(mut self) -> UserInfo {
        if !self.groups.iter().any(|g| g == AUTHENTICATED) {
            self.groups.push(AUTHENTICATED.into());
        }
        self
    }

    /// `authentication.k8s.io/v1` UserInfo as JSON.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("username".into(), json!(self.name));
        if !self.uid.is_empty() {
            m.insert("uid".into(), json!(self.uid));
        }
        if !self.groups.is_empty() {
            m.insert("groups".into(), json!(self.groups));
        }
        if !self.extra.is_empty() {
            m.insert("extra".into(), json!(self.extra));
        }
        Value::Object(m)
    }
}

/// Why a credential was refused (logged, never the credential itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// The authentication flags.
#[derive(Clone, Debug)]
pub struct Config {
    /// `--token-auth-file`.
    pub token_auth_file: Option<std::path::PathBuf>,
    /// `--anonymous-auth`.
    pub anonymous: bool,
    /// `--enable-bootstrap-token-auth`.
    pub bootstrap_tokens: bool,
    pub service_accounts: serviceaccount::Config,
    /// `--authentication-token-webhook-config-file`, `-version`, `-cache-ttl`.
    pub webhook_config_file: Option<std::path::PathBuf>,
    pub webhook_version: String,
    pub webhook_cache_ttl: std::time::Duration,
    /// `--oidc-*` (when `--oidc-issuer-url` is given).
    pub oidc: Option<oidc::Config>,
    /// `--client-ca-file` (default: the data folder's `ca.crt`).
    pub client_ca_file: Option<std::path::PathBuf>,
    /// `--requestheader-*` (when `--requestheader-client-ca-file` is given).
    pub requestheader: Option<x509::RequestHeaderConfig>,
}

impl Config {
    /// The client CA bundle: `--client-ca-file`, else `data_dir`'s `ca.crt`.
    pub fn client_ca_path(&self, data_dir: &std::path::Path) -> std::path::PathBuf {
        self.client_ca_file
            .clone()
            .unwrap_or_else(|| data_dir.join("ca.crt"))
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            token_auth_file: None,
            anonymous: true,
            bootstrap_tokens: false,
            webhook_config_file: None,
            webhook_version: "v1".into(),
            webhook_cache_ttl: std::time::Duration::from_secs(120),
            oidc: None,
            client_ca_file: None,
            requestheader: None,
            service_accounts: serviceaccount::Config {
                lookup: true,
                ..Default::default()
            },
        }
    }
}

/// The configured authenticators.
pub struct Authenticator {
    pub x509: x509::X509,
    pub tokens: token_file::Tokens,
    pub service_accounts: Option<std::sync::Arc<serviceaccount::ServiceAccounts>>,
    pub bootstrap_tokens: bool,
    pub webhook: Option<webhook::Webhook>,
    pub oidc: Option<oidc::Oidc>,
    pub anonymous: bool,
}

impl Authenticator {
    /// Builds the authenticators from the flags (`data_dir` holds the generated
    /// service-account key).
    pub fn from_config(cfg: &Config, data_dir: &std::path::Path) -> Result<Authenticator, String> {
        let tokens = match &cfg.token_auth_file {
            Some(p) => token_file::Tokens::load(p)?,
            None => token_file::Tokens::default(),
        };
        let client_ca = cfg.client_ca_path(data_dir);
        Ok(Authenticator {
            x509: x509::X509::new(client_ca, cfg.requestheader.clone())?,
            tokens,
            service_accounts: Some(std::sync::Arc::new(serviceaccount::ServiceAccounts::load(
                &cfg.service_accounts,
                data_dir,
            )?)),
            bootstrap_tokens: cfg.bootstrap_tokens,
            webhook: match &cfg.webhook_config_file {
                Some(p) => Some(webhook::Webhook::load(
                    p,
                    &cfg.webhook_version,
                    cfg.webhook_cache_ttl,
                )?),
                None => None,
            },
            oidc: cfg.oidc.clone().map(oidc::Oidc::new).transpose()?,
            anonymous: cfg.anonymous,
        })
    }

    /// Authenticates one request: `peer` is what the connection's verified client
    /// certificate is, `headers` the request's headers.
    pub async fn authenticate(
        &self,
        store: &Store,
        peer: &x509::Peer,
        headers: &http::HeaderMap,
    ) -> Result<UserInfo, Refused> {
        match peer {
            x509::Peer::User(u) => return Ok(u.clone().authenticated()),
            x509::Peer::Proxy => {
                if let Some(u) = self.x509.proxied_user(headers) {
                    return Ok(u.authenticated());
                }
            }
            x509::Peer::None => {}
        }
        let authorization = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match bearer(authorization) {
            Some(token) => self
                .authenticate_token(store, token, &[])
                .await
                .map(|(u, _)| u),
            None if self.anonymous => Ok(UserInfo::anonymous()),
            None => Err(Refused("no credentials".into())),
        }
    }

    /// A bearer token alone (requests, TokenReview). `audiences` narrows what a
    /// service-account token must be meant for (empty: the API server's own); returns the
    /// user and the audiences the token is valid for.
    pub async fn authenticate_token(
        &self,
        store: &Store,
        token: &str,
        audiences: &[String],
    ) -> Result<(UserInfo, Vec<String>), Refused> {
        if let Some(u) = self.tokens.lookup(token) {
            return Ok((u.clone().authenticated(), audiences.to_vec()));
        }
        // A union: the first authenticator that accepts the token wins; the last refusal
        // says why (for the log).
        let mut why = Refused("invalid bearer token".into());
        if self.bootstrap_tokens {
            match bootstrap::authenticate(store, token).await {
                Some(Ok(u)) => return Ok((u.authenticated(), audiences.to_vec())),
                Some(Err(e)) => why = e,
                None => {}
            }
        }
        if let Some(sa) = &self.service_accounts {
            if serviceaccount::looks_like_jwt(token) {
                match sa.verify(store, token, audiences).await {
                    Ok((u, a)) => return Ok((u.authenticated(), a)),
                    Err(e) => why = e,
                }
            }
        }
        if let Some(o) = &self.oidc {
            match o.authenticate(token).await {
                Some(Ok(u)) => return Ok((u.authenticated(), audiences.to_vec())),
                Some(Err(e)) => why = e,
                None => {}
            }
        }
        if let Some(w) = &self.webhook {
            match w.authenticate(token, audiences).await {
                Ok((u, a)) => return Ok((u.authenticated(), a)),
                Err(e) => why = e,
            }
        }
        Err(why)
    }
}

/// The strings of a JSON array (anything else, and non-strings in it, count as none).
pub fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive; an empty
/// token counts as none, as in kube).
pub fn bearer(header: Option<&str>) -> Option<&str> {
    let h = header?.trim();
    let (scheme, rest) = h.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = rest.trim();
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_headers() {
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("bearer  abc ")), Some("abc"));
        assert_eq!(bearer(Some("Bearer ")), None);
        assert_eq!(bearer(Some("Basic abc")), None);
        assert_eq!(bearer(None), None);
    }

    #[test]
    fn user_json() {
        let mut u = UserInfo {
            name: "alice".into(),
            groups: vec!["dev".into()],
            ..Default::default()
        }
        .authenticated();
        u.extra.insert("k".into(), vec!["v".into()]);
        assert_eq!(
            u.to_json(),
            json!({"username": "alice", "groups": ["dev", "system:authenticated"], "extra": {"k": ["v"]}})
        );
        assert!(UserInfo::anonymous().is_anonymous());
    }
}
