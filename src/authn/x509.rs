//! Client certificates: which trust domain a connection's verified certificate belongs to.
//! A certificate of the client CA (`--client-ca-file`, default the data folder's `ca.crt`) is a
//! user (CN = name, O = groups); one of the request-header CA (`--requestheader-client-ca-file`)
//! whose CN is in `--requestheader-allowed-names` (any CN when the list is empty) is an
//! authenticating proxy, whose requests name their user in headers (`--requestheader-*`).
//! The handshake accepts both CAs; this module tells them apart afterwards.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use http::HeaderMap;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::ClientCertVerifier;

use super::UserInfo;

/// `--requestheader-*`.
#[derive(Clone, Debug, Default)]
pub struct RequestHeaderConfig {
    pub client_ca_file: PathBuf,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_headers_prefix: Vec<String>,
}

/// Who a connection's certificate is.
#[derive(Clone, Debug, Default)]
pub enum Peer {
    /// No certificate.
    #[default]
    None,
    /// A user certificate of the client CA.
    User(UserInfo),
    /// An authenticating proxy (request-header CA, allowed name).
    Proxy,
}

pub struct X509 {
    client_ca_files: Vec<PathBuf>,
    client: Arc<dyn ClientCertVerifier>,
    proxy: Option<(Arc<dyn ClientCertVerifier>, RequestHeaderConfig)>,
}

fn verifier(files: &[PathBuf]) -> Result<Arc<dyn ClientCertVerifier>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for f in files {
        for c in read_certs(f)? {
            roots.add(c).map_err(|e| format!("{}: {e}", f.display()))?;
        }
    }
    rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        Arc::new(rustls::crypto::ring::default_provider()),
    )
    .allow_unauthenticated()
    .build()
    .map_err(|e| format!("client CA: {e}"))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let certs: Vec<_> = rustls_pemfile::certs(&mut pem.as_slice())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate", path.display()));
    }
    Ok(certs)
}

impl X509 {
    pub fn new(client_ca: PathBuf, proxy: Option<RequestHeaderConfig>) -> Result<X509, String> {
        let client = verifier(std::slice::from_ref(&client_ca))?;
        let proxy = match proxy {
            Some(p) => Some((verifier(std::slice::from_ref(&p.client_ca_file))?, p)),
            None => None,
        };
        Ok(X509 {
            client_ca_files: std::iter::once(client_ca)
                .chain(proxy.iter().map(|(_, p)| p.client_ca_file.clone()))
                .collect(),
            client,
            proxy,
        })
    }

    /// The CA files the TLS handshake must accept.
    pub fn trusted_ca_files(&self) -> &[PathBuf] {
        &self.client_ca_files
    }

    /// Classifies a connection's certificate chain (already verified by the handshake against
    /// one of the CAs).
    pub fn classify(&self, chain: &[CertificateDer<'_>]) -> Peer {
        let Some((leaf, rest)) = chain.split_first() else {
            return Peer::None;
        };
        let now = UnixTime::now();
        if let Some((v, cfg)) = &self.proxy {
            if v.verify_client_cert(leaf, rest, now).is_ok() {
                let cn = crate::server::pki::cert_identity(leaf).map(|(cn, _)| cn);
                let allowed = cfg.allowed_names.is_empty()
                    || cn.is_some_and(|cn| cfg.allowed_names.contains(&cn));
                if allowed {
                    return Peer::Proxy;
                }
            }
        }
        if self.client.verify_client_cert(leaf, rest, now).is_ok() {
            if let Some((name, groups)) = crate::server::pki::cert_identity(leaf) {
                return Peer::User(UserInfo {
                    name,
                    groups,
                    ..Default::default()
                });
            }
        }
        Peer::None
    }

    /// The user a proxy's request names, if it names one (`None`: no username header).
    pub fn proxied_user(&self, headers: &HeaderMap) -> Option<UserInfo> {
        let (_, cfg) = self.proxy.as_ref()?;
        let first = |names: &[String]| {
            names.iter().find_map(|h| {
                headers
                    .get(h.as_str())
                    .and_then(|v| v.to_str().ok())
                    .filter(|v| !v.is_empty())
                    .map(str::to_string)
            })
        };
        let name = first(&cfg.username_headers)?;
        let mut user = UserInfo {
            name,
            uid: first(&cfg.uid_headers).unwrap_or_default(),
            ..Default::default()
        };
        for h in &cfg.group_headers {
            for v in headers.get_all(h.as_str()) {
                if let Ok(v) = v.to_str() {
                    user.groups.push(v.to_string());
                }
            }
        }
        for (name, v) in headers {
            for prefix in &cfg.extra_headers_prefix {
                let p = prefix.to_ascii_lowercase();
                if let Some(key) = name.as_str().strip_prefix(&p) {
                    let key = crate::meta::escape::path_unescape(key).to_ascii_lowercase();
                    if let Ok(v) = v.to_str() {
                        user.extra.entry(key).or_default().push(v.to_string());
                    }
                }
            }
        }
        Some(user)
    }

    /// Headers a proxied request's identity came from (dropped after authentication).
    pub fn proxy_headers(&self) -> Vec<String> {
        match &self.proxy {
            None => Vec::new(),
            Some((_, c)) => c
                .username_headers
                .iter()
                .chain(&c.uid_headers)
                .chain(&c.group_headers)
                .cloned()
                .collect(),
        }
    }
}
