//! The aggregation layer (kube-aggregator): which group-versions are served by extension
//! API servers (APIServices with a `service`), the replica's view of them (availability, the
//! discovery document and OpenAPI each one last answered with), the TLS clients that reach
//! them with the front-proxy client certificate, and the requestheader identity they are
//! told. `proxy` forwards requests (streamed, upgrades included), `availability` is the
//! per-replica loop that checks them, writes their `Available` condition and keeps the local
//! APIServices and the `extension-apiserver-authentication` ConfigMap, `discovery` merges
//! their groups into `/apis`, `openapi` merges their OpenAPI documents into `/openapi/v2`
//! and `/openapi/v3`, `resolve` is kube's service resolver (shared with the admission
//! webhooks).
//!
//! It knows nothing of how a request was authenticated or authorized: the edge does that
//! before a request reaches the proxy.

pub mod availability;
pub mod discovery;
pub mod openapi;
pub mod proxy;
pub mod resolve;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use base64::Engine;
use serde_json::Value;

use crate::authn::UserInfo;
use crate::registry::store::Store;

/// The CN of the proxy client certificate the data folder's front-proxy CA issues (kubeadm's).
pub const FRONT_PROXY_CLIENT: &str = "front-proxy-client";

/// One remote APIService as this replica sees it.
#[derive(Clone, Debug, Default)]
pub struct Remote {
    /// The APIService's name (`<version>.<group>`).
    pub name: String,
    pub group: String,
    pub version: String,
    pub group_priority: i64,
    pub version_priority: i64,
    pub namespace: String,
    pub service: String,
    pub port: u16,
    /// PEM bytes of `caBundle`.
    pub ca_bundle: Option<Vec<u8>>,
    pub insecure: bool,
    /// The replica's last check passed.
    pub available: bool,
    /// The APIResourceList the server last answered `/apis/<group>/<version>` with.
    pub resources: Option<Value>,
    /// The server's `/openapi/v2` document, when it answered one.
    pub openapi_v2: Option<Value>,
    /// The server's `/openapi/v3/apis/<group>/<version>` document (serialized) and its hash.
    pub openapi_v3: Option<(bytes::Bytes, String)>,
}

impl Remote {
    /// The Remote an APIService object describes (`None`: a local APIService).
    pub fn from_object(obj: &Value) -> Option<Remote> {
        let spec = obj.get("spec")?;
        let svc = spec.get("service").filter(|s| !s.is_null())?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let i = |k: &str| spec.get(k).and_then(Value::as_i64).unwrap_or(0);
        Some(Remote {
            name: s(obj.get("metadata").unwrap_or(&Value::Null), "name"),
            group: s(spec, "group"),
            version: s(spec, "version"),
            group_priority: i("groupPriorityMinimum"),
            version_priority: i("versionPriority"),
            namespace: s(svc, "namespace"),
            service: s(svc, "name"),
            port: svc
                .get("port")
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or(443),
            ca_bundle: spec
                .get("caBundle")
                .and_then(Value::as_str)
                .filter(|b| !b.is_empty())
                .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok()),
            insecure: spec.get("insecureSkipTLSVerify") == Some(&Value::Bool(true)),
            ..Remote::default()
        })
    }

    /// Whether `other` reaches the same server the same way (the cached view stays valid).
    fn same_target(&self, other: &Remote) -> bool {
        (
            &self.group,
            &self.version,
            &self.namespace,
            &self.service,
            self.port,
            &self.ca_bundle,
            self.insecure,
        ) == (
            &other.group,
            &other.version,
            &other.namespace,
            &other.service,
            other.port,
            &other.ca_bundle,
            other.insecure,
        )
    }

    /// The TLS server name kube's proxy uses: `<service>.<namespace>.svc`.
    pub fn server_name(&self) -> String {
        format!("{}.{}.svc", self.service, self.namespace)
    }
}

/// The requestheader settings the proxy follows and the ConfigMap publishes.
#[derive(Clone, Debug)]
pub struct RequestHeader {
    /// PEM of the CA extension servers verify the proxy's client certificate with.
    pub client_ca: Vec<u8>,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_headers_prefix: Vec<String>,
}

impl Default for RequestHeader {
    fn default() -> Self {
        RequestHeader {
            client_ca: Vec::new(),
            allowed_names: vec![FRONT_PROXY_CLIENT.to_string()],
            username_headers: vec!["X-Remote-User".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_headers_prefix: vec!["X-Remote-Extra-".into()],
        }
    }
}

/// What the aggregator is configured with.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// PEM of the proxy client certificate and key (`--proxy-client-cert-file` /
    /// `--proxy-client-key-file`, default the data folder's `front-proxy-client.*`).
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
    /// What extension servers are told to trust (the `extension-apiserver-authentication`
    /// ConfigMap).
    pub requestheader: RequestHeader,
    /// PEM of `--client-ca-file` (published as `client-ca-file`).
    pub client_ca: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct ClientKey {
    ca: Option<Vec<u8>>,
    insecure: bool,
    host: String,
    addr: SocketAddr,
    http1: bool,
}

/// The aggregator of one replica.
pub struct Aggregator {
    pub store: Store,
    pub config: Config,
    remotes: RwLock<BTreeMap<(String, String), Arc<Remote>>>,
    clients: Mutex<HashMap<ClientKey, reqwest::Client>>,
    /// Bumped whenever a remote's OpenAPI documents (or the set of remotes) change.
    openapi_generation: AtomicU64,
    /// The merged `/openapi/v2`: (local ETag, generation, document).
    v2_cache: openapi::V2Cache,
    /// The merged `/openapi/v3` index: (local hash, generation, bytes, hash).
    v3_cache: openapi::V3Cache,
}

impl Aggregator {
    pub fn new(store: Store, config: Config) -> Aggregator {
        Aggregator {
            store,
            config,
            remotes: RwLock::default(),
            clients: Mutex::default(),
            openapi_generation: AtomicU64::new(0),
            v2_cache: Mutex::default(),
            v3_cache: Mutex::default(),
        }
    }

    /// The remote APIService serving `group`/`version`, if any.
    pub fn remote(&self, group: &str, version: &str) -> Option<Arc<Remote>> {
        self.remotes
            .read()
            .ok()?
            .get(&(group.to_string(), version.to_string()))
            .cloned()
    }

    /// The remote APIService a request path (`/apis/<group>/<version>[/...]`) goes to.
    pub fn remote_for_path(&self, path: &str) -> Option<Arc<Remote>> {
        let rest = path.strip_prefix("/apis/")?;
        let mut it = rest.split('/');
        let (group, version) = (it.next()?, it.next()?);
        if group.is_empty() || version.is_empty() {
            return None;
        }
        self.remote(group, version)
    }

    /// Every remote APIService, by (group, version).
    pub fn remotes(&self) -> Vec<Arc<Remote>> {
        self.remotes
            .read()
            .map(|r| r.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Replaces the set of remote APIServices with `wanted`, keeping the checked view of the
    /// ones whose target did not change. Returns the names that are new or changed.
    pub fn set_remotes(&self, wanted: Vec<Remote>) -> Vec<String> {
        let Ok(mut cur) = self.remotes.write() else {
            return Vec::new();
        };
        let mut next = BTreeMap::new();
        let mut changed = Vec::new();
        for w in wanted {
            let key = (w.group.clone(), w.version.clone());
            match cur.get(&key) {
                Some(old) if old.same_target(&w) && old.name == w.name => {
                    let mut keep = (**old).clone();
                    keep.group_priority = w.group_priority;
                    keep.version_priority = w.version_priority;
                    next.insert(key, Arc::new(keep));
                }
                _ => {
                    changed.push(w.name.clone());
                    next.insert(key, Arc::new(w));
                }
            }
        }
        if !changed.is_empty() || cur.len() != next.len() {
            self.openapi_generation.fetch_add(1, Ordering::Relaxed);
        }
        *cur = next;
        changed
    }

    /// The generation of the remotes' OpenAPI documents.
    pub fn openapi_generation(&self) -> u64 {
        self.openapi_generation.load(Ordering::Relaxed)
    }

    /// Records the outcome of a check of the remote `group`/`version`.
    pub fn record_check(
        &self,
        group: &str,
        version: &str,
        available: bool,
        resources: Option<Value>,
        openapi_v2: Option<Option<Value>>,
        openapi_v3: Option<Option<Value>>,
    ) {
        let Ok(mut cur) = self.remotes.write() else {
            return;
        };
        if let Some(r) = cur.get_mut(&(group.to_string(), version.to_string())) {
            let mut next = (**r).clone();
            next.available = available;
            if resources.is_some() {
                next.resources = resources;
            }
            let mut openapi_changed = false;
            if let Some(doc) = openapi_v2 {
                openapi_changed |= next.openapi_v2 != doc;
                next.openapi_v2 = doc;
            }
            if let Some(doc) = openapi_v3 {
                let served = doc.map(|d| {
                    let bytes = serde_json::to_vec(&d).unwrap_or_default();
                    let hash = crate::openapi::content_hash(&bytes);
                    (bytes::Bytes::from(bytes), hash)
                });
                openapi_changed |=
                    next.openapi_v3.as_ref().map(|d| &d.1) != served.as_ref().map(|d| &d.1);
                next.openapi_v3 = served;
            }
            if openapi_changed {
                self.openapi_generation.fetch_add(1, Ordering::Relaxed);
            }
            *r = Arc::new(next);
        }
    }

    /// A client reaching `remote` dialled at `addr` (built once per target and reused):
    /// the APIService's CA bundle (or no verification with `insecureSkipTLSVerify`, or the
    /// system roots), the proxy client certificate, no redirects, no proxy; `http1` for
    /// upgrades.
    pub fn client(
        &self,
        remote: &Remote,
        addr: SocketAddr,
        insecure: bool,
        http1: bool,
    ) -> Result<reqwest::Client, String> {
        let key = ClientKey {
            ca: remote.ca_bundle.clone(),
            insecure: insecure || remote.insecure,
            host: remote.server_name(),
            addr,
            http1,
        };
        if let Some(c) = self.clients.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(c);
        }
        let mut b = reqwest::Client::builder()
            .use_rustls_tls()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .resolve(&key.host, addr)
            .connect_timeout(std::time::Duration::from_secs(5));
        if http1 {
            b = b.http1_only();
        }
        if key.insecure {
            b = b.danger_accept_invalid_certs(true);
        } else if let Some(ca) = &key.ca {
            b = b.tls_built_in_root_certs(false);
            for cert in reqwest::Certificate::from_pem_bundle(ca)
                .map_err(|e| format!("invalid caBundle: {e}"))?
            {
                b = b.add_root_certificate(cert);
            }
        }
        if let Some((cert, k)) = &self.config.identity {
            let mut pem = cert.clone();
            pem.push(b'\n');
            pem.extend_from_slice(k);
            let id = reqwest::Identity::from_pem(&pem)
                .map_err(|e| format!("invalid proxy client certificate: {e}"))?;
            b = b.identity(id);
        }
        let client = b.build().map_err(|e| e.to_string())?;
        if let Ok(mut c) = self.clients.lock() {
            // Bounded: a changing set of targets never grows the cache without limit.
            if c.len() > 256 {
                c.clear();
            }
            c.insert(key, client.clone());
        }
        Ok(client)
    }
}

/// The requestheader headers that tell an extension server who the caller is (kube's
/// `transport.SetAuthProxyHeaders`): `X-Remote-User`, one `X-Remote-Group` per group, one
/// `X-Remote-Extra-<key>` per extra value (the key path-escaped).
pub fn identity_headers(user: &UserInfo) -> Vec<(String, String)> {
    let mut out = vec![("X-Remote-User".to_string(), user.name.clone())];
    for g in &user.groups {
        out.push(("X-Remote-Group".to_string(), g.clone()));
    }
    for (k, vs) in &user.extra {
        for v in vs {
            out.push((format!("X-Remote-Extra-{}", path_escape(k)), v.clone()));
        }
    }
    out
}

/// Go's `url.PathEscape`.
fn path_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        let unreserved = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'~' | b'$' | b'&' | b'+' | b',' | b':' | b'=' | b'@'
            );
        if unreserved {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// kube's priorities of the built-in group-versions (`DefaultGenericAPIServicePriorities`
/// and kube-apiserver's additions): (group, version, groupPriorityMinimum, versionPriority).
pub const BUILTIN_PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apiregistration.k8s.io", "v1", 18000, 15),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v1", 17500, 15),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
];

/// The priorities of a served group-version: the built-in table, else a custom resource
/// group's (kube's CRD registration: 1000 and 100). The bool says whether it is built in.
pub fn local_priority(group: &str, version: &str) -> (i64, i64, bool) {
    BUILTIN_PRIORITIES
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map(|(_, _, gp, vp)| (*gp, *vp, true))
        .unwrap_or((1000, 100, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_headers_escape_extra_keys() {
        let mut user = UserInfo {
            name: "alice".into(),
            uid: "u1".into(),
            groups: vec!["dev".into(), "system:authenticated".into()],
            extra: BTreeMap::new(),
        };
        user.extra
            .insert("example.org/some key".into(), vec!["a".into(), "b".into()]);
        let h = identity_headers(&user);
        assert_eq!(h[0], ("X-Remote-User".into(), "alice".into()));
        assert_eq!(
            h[2],
            ("X-Remote-Group".into(), "system:authenticated".into())
        );
        assert_eq!(
            h[3],
            ("X-Remote-Extra-example.org%2Fsome%20key".into(), "a".into())
        );
        assert_eq!(h.len(), 5);
    }

    #[test]
    fn remotes_keep_their_view_while_the_target_is_unchanged() {
        let agg_remote = |port| Remote {
            name: "v1.x.io".into(),
            group: "x.io".into(),
            version: "v1".into(),
            namespace: "ns".into(),
            service: "s".into(),
            port,
            ..Remote::default()
        };
        let mut seen = agg_remote(443);
        seen.available = true;
        assert!(seen.same_target(&agg_remote(443)));
        assert!(!seen.same_target(&agg_remote(8443)));
        assert_eq!(seen.server_name(), "s.ns.svc");
    }
}
