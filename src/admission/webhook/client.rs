//! Reaching an admission webhook (kube's `webhookutil.ClientManager`): a `clientConfig.url`
//! is called as written; a `clientConfig.service` is called as
//! `https://<name>.<namespace>.svc:<port><path>` (the TLS server name and the host of the
//! URL errors print) but dialled at the address kube's service resolver finds — the
//! Service's cluster IP and port, `externalName:port` for an ExternalName Service, or one
//! of its endpoints with `--enable-aggregator-routing`. `caBundle` replaces the system
//! roots. Client credentials come from the `kubeConfigFile` of the plugins'
//! `WebhookAdmissionConfiguration`, its `users` chosen by the target's `host:port` as kube
//! chooses them (exact, then `*.` suffixes, then without a `:443`, then `*`).
//!
//! Clients are built once per (CA bundle, credentials, dialled address) and reused.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use base64::Engine;
use serde_json::Value;

use crate::admission::Handle;

/// `--enable-aggregator-routing` (the shared resolver's switch).
pub fn set_endpoint_routing(on: bool) {
    crate::aggregator::resolve::set_endpoint_routing(on);
}

/// Where a webhook is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Url(String),
    Service {
        namespace: String,
        name: String,
        path: String,
        port: u16,
    },
}

/// A webhook's `clientConfig`.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub target: Target,
    /// PEM bytes of `caBundle`.
    pub ca_bundle: Option<Vec<u8>>,
}

impl ClientConfig {
    pub fn parse(cc: &Value) -> ClientConfig {
        let target = match cc.get("url").and_then(Value::as_str) {
            Some(u) => Target::Url(u.to_string()),
            None => {
                let svc = cc.get("service").unwrap_or(&Value::Null);
                let s = |k: &str| svc.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                Target::Service {
                    namespace: s("namespace"),
                    name: s("name"),
                    path: s("path"),
                    port: svc
                        .get("port")
                        .and_then(Value::as_u64)
                        .and_then(|p| u16::try_from(p).ok())
                        .filter(|p| *p != 0)
                        .unwrap_or(443),
                }
            }
        };
        let ca_bundle = cc
            .get("caBundle")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok());
        ClientConfig { target, ca_bundle }
    }

    /// The URL requests go to (before kube's `?timeout=` parameter).
    pub fn url(&self) -> String {
        match &self.target {
            // As Go's REST client joins it: an empty path is `/`.
            Target::Url(u) => match u.find("://").map(|i| &u[i + 3..]) {
                Some(rest) if !rest.contains('/') => format!("{u}/"),
                _ => u.clone(),
            },
            Target::Service {
                namespace,
                name,
                path,
                port,
            } => {
                let path = if path.is_empty() { "/" } else { path };
                format!("https://{name}.{namespace}.svc:{port}{path}")
            }
        }
    }

    /// The `host:port` credentials are chosen by.
    fn auth_target(&self) -> String {
        match &self.target {
            Target::Url(u) => match reqwest::Url::parse(u) {
                Ok(p) => {
                    let host = p.host_str().unwrap_or("").to_string();
                    format!("{host}:{}", p.port().unwrap_or(443))
                }
                Err(_) => String::new(),
            },
            Target::Service {
                namespace,
                name,
                port,
                ..
            } => format!("{name}.{namespace}.svc:{port}"),
        }
    }
}

/// Client credentials of one kubeconfig user.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Credentials {
    token: Option<String>,
    basic: Option<(String, String)>,
    /// PEM certificate followed by its key.
    identity: Option<Vec<u8>>,
}

/// The `kubeConfigFile` of a `WebhookAdmissionConfiguration`: its users by name.
#[derive(Default)]
pub struct Kubeconfig {
    users: HashMap<String, Credentials>,
}

impl Kubeconfig {
    /// The plugin's configuration (`apiVersion: apiserver.config.k8s.io/v1`,
    /// `kind: WebhookAdmissionConfiguration`, `kubeConfigFile`), if any.
    pub fn from_plugin_config(cfg: Option<&Value>) -> Result<Kubeconfig, String> {
        let Some(cfg) = cfg else {
            return Ok(Kubeconfig::default());
        };
        let kind = cfg.get("kind").and_then(Value::as_str).unwrap_or("");
        if !kind.is_empty() && kind != "WebhookAdmissionConfiguration" && kind != "WebhookAdmission"
        {
            return Err(format!(
                "unexpected kind {kind:?} for the webhook admission configuration"
            ));
        }
        let Some(file) = cfg.get("kubeConfigFile").and_then(Value::as_str) else {
            return Ok(Kubeconfig::default());
        };
        if file.is_empty() {
            return Ok(Kubeconfig::default());
        }
        if !Path::new(file).is_absolute() {
            return Err(format!(
                "kubeConfigFile {file:?} must be an absolute file path"
            ));
        }
        Kubeconfig::load(Path::new(file))
    }

    fn load(path: &Path) -> Result<Kubeconfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("unable to read kubeConfigFile {}: {e}", path.display()))?;
        let doc: Value = serde_yaml::from_str(&text)
            .map_err(|e| format!("unable to read kubeConfigFile {}: {e}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut users = HashMap::new();
        for u in doc
            .get("users")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = u.get("name").and_then(Value::as_str) else {
                continue;
            };
            let user = u.get("user").unwrap_or(&Value::Null);
            let s = |k: &str| user.get(k).and_then(Value::as_str).map(str::to_string);
            let token = match (s("token"), s("tokenFile")) {
                (Some(t), _) => Some(t),
                (None, Some(f)) => Some(
                    std::fs::read_to_string(base.join(&f))
                        .map_err(|e| format!("reading tokenFile {f}: {e}"))?
                        .trim()
                        .to_string(),
                ),
                _ => None,
            };
            let cert = crate::authn::webhook::kubeconfig_bytes(
                user,
                base,
                "client-certificate-data",
                "client-certificate",
            )?;
            let key = crate::authn::webhook::kubeconfig_bytes(
                user,
                base,
                "client-key-data",
                "client-key",
            )?;
            let identity = match (cert, key) {
                (Some(mut c), Some(k)) => {
                    c.push(b'\n');
                    c.extend_from_slice(&k);
                    Some(c)
                }
                _ => None,
            };
            let basic = match (s("username"), s("password")) {
                (Some(u), Some(p)) => Some((u, p)),
                _ => None,
            };
            users.insert(
                name.to_string(),
                Credentials {
                    token,
                    basic,
                    identity,
                },
            );
        }
        Ok(Kubeconfig { users })
    }

    /// kube's `defaultAuthenticationInfoResolver.clientConfig(target)`.
    fn for_target(&self, target: &str) -> Credentials {
        let lookup = |t: &str| -> Option<&Credentials> {
            if let Some(c) = self.users.get(t) {
                return Some(c);
            }
            let steps: Vec<&str> = t.split('.').collect();
            (1..steps.len()).find_map(|i| self.users.get(&format!("*.{}", steps[i..].join("."))))
        };
        if let Some(c) = lookup(target) {
            return c.clone();
        }
        if let Some(host) = target.strip_suffix(":443") {
            if let Some(c) = lookup(host) {
                return c.clone();
            }
        }
        self.users.get("*").cloned().unwrap_or_default()
    }
}

/// A request ready to send: the client and the URL.
pub struct Prepared {
    pub client: reqwest::Client,
    token: Option<String>,
    basic: Option<(String, String)>,
}

impl Prepared {
    /// A POST of `body` with the credentials.
    pub fn post(&self, url: &str, body: Vec<u8>) -> reqwest::RequestBuilder {
        let mut r = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json, */*")
            .body(body);
        if let Some(t) = &self.token {
            r = r.bearer_auth(t);
        } else if let Some((u, p)) = &self.basic {
            r = r.basic_auth(u, Some(p));
        }
        r
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct ClientKey {
    ca: Option<Vec<u8>>,
    identity: Option<Vec<u8>>,
    /// The service host name and where it is dialled.
    resolve: Option<(String, Vec<SocketAddr>)>,
}

/// The clients built so far.
#[derive(Default)]
pub struct Clients {
    kubeconfig: Kubeconfig,
    built: Mutex<HashMap<ClientKey, reqwest::Client>>,
}

/// At most this many clients are kept (a rebuilt one costs a TLS configuration).
const MAX_CLIENTS: usize = 256;

impl Clients {
    pub fn new(kubeconfig: Kubeconfig) -> Clients {
        Clients {
            kubeconfig,
            built: Mutex::default(),
        }
    }

    /// A client for `cc`, resolving its service now; the error is what the call fails with
    /// (as Go's HTTP client prints a failed dial).
    pub async fn prepare(&self, cc: &ClientConfig, h: &Handle) -> Result<Prepared, String> {
        let creds = self.kubeconfig.for_target(&cc.auth_target());
        let resolve = match &cc.target {
            Target::Url(_) => None,
            Target::Service {
                namespace,
                name,
                port,
                ..
            } => {
                let addr = resolve_service(h, namespace, name, *port).await?;
                Some((format!("{name}.{namespace}.svc"), addr))
            }
        };
        let key = ClientKey {
            ca: cc.ca_bundle.clone(),
            identity: creds.identity.clone(),
            resolve,
        };
        let client = self.client(&key)?;
        Ok(Prepared {
            client,
            token: creds.token,
            basic: creds.basic,
        })
    }

    fn client(&self, key: &ClientKey) -> Result<reqwest::Client, String> {
        if let Some(c) = self.built.lock().ok().and_then(|b| b.get(key).cloned()) {
            return Ok(c);
        }
        let mut b = reqwest::Client::builder()
            .use_rustls_tls()
            .connect_timeout(std::time::Duration::from_secs(10))
            .pool_idle_timeout(std::time::Duration::from_secs(30));
        if let Some(ca) = &key.ca {
            b = b.tls_built_in_root_certs(false);
            for cert in reqwest::Certificate::from_pem_bundle(ca)
                .map_err(|e| format!("unable to load root certificates: {e}"))?
            {
                b = b.add_root_certificate(cert);
            }
        }
        if let Some(id) = &key.identity {
            b = b.identity(
                reqwest::Identity::from_pem(id)
                    .map_err(|e| format!("unable to load the client certificate: {e}"))?,
            );
        }
        if let Some((host, addrs)) = &key.resolve {
            b = b.resolve_to_addrs(host, addrs);
        }
        let c = b.build().map_err(|e| e.to_string())?;
        if let Ok(mut built) = self.built.lock() {
            if built.len() >= MAX_CLIENTS {
                built.clear();
            }
            built.insert(key.clone(), c.clone());
        }
        Ok(c)
    }
}

/// The address a webhook Service is dialled at (the shared resolver).
async fn resolve_service(
    h: &Handle,
    namespace: &str,
    name: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, String> {
    crate::aggregator::resolve::resolve_service(&h.store, namespace, name, port).await
}

/// Shared by both webhook plugins of a server.
pub type SharedClients = Arc<Clients>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_chosen_as_kube_chooses_them() {
        let mut k = Kubeconfig::default();
        let c = |t: &str| Credentials {
            token: Some(t.into()),
            ..Default::default()
        };
        k.users.insert("hook.ns.svc:8443".into(), c("exact"));
        k.users.insert("*.example.com".into(), c("wild"));
        k.users.insert("plain.ns.svc".into(), c("no-port"));
        k.users.insert("*".into(), c("any"));
        let t = |s: &str| k.for_target(s).token.unwrap();
        assert_eq!(t("hook.ns.svc:8443"), "exact");
        assert_eq!(t("a.b.example.com:443"), "wild");
        assert_eq!(t("plain.ns.svc:443"), "no-port");
        assert_eq!(t("plain.ns.svc:8443"), "any");
        assert_eq!(t("elsewhere:443"), "any");
    }

    #[test]
    fn service_urls() {
        let cc = ClientConfig::parse(&serde_json::json!({
            "service": {"namespace": "ns", "name": "hook", "path": "/v"}
        }));
        assert_eq!(cc.url(), "https://hook.ns.svc:443/v");
        let bare =
            ClientConfig::parse(&serde_json::json!({"service": {"namespace": "ns", "name": "h"}}));
        assert_eq!(bare.url(), "https://h.ns.svc:443/");
        assert_eq!(cc.auth_target(), "hook.ns.svc:443");
    }
}
