//! The replica's own PKI: a cluster CA, a serving certificate and an admin client certificate,
//! created on first start in the data folder and reused afterwards, plus the admin kubeconfig.
//!
//! Files (PEM): `ca.crt`, `ca.key`, `server.crt`, `server.key`, `admin.crt`, `admin.key`, and
//! `admin.kubeconfig` with the certificates embedded; the front-proxy trust domain of the
//! aggregator (`front-proxy-ca.crt`/`.key`, and the proxy's client certificate
//! `front-proxy-client.crt`/`.key`, CN `front-proxy-client` as kubeadm makes it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Paths of the PKI files in a data folder.
pub struct Pki {
    pub dir: PathBuf,
}

impl Pki {
    pub fn new(dir: &Path) -> Pki {
        Pki {
            dir: dir.to_path_buf(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The serving certificate and key: `--tls-cert-file` / `--tls-private-key-file`, else
    /// this folder's `server.crt` / `server.key`.
    pub fn serving_files(&self, serving: &Serving) -> Result<(PathBuf, PathBuf)> {
        match (&serving.cert_file, &serving.key_file) {
            (Some(c), Some(k)) => Ok((c.clone(), k.clone())),
            (None, None) => Ok((self.path("server.crt"), self.path("server.key"))),
            _ => anyhow::bail!("--tls-cert-file and --tls-private-key-file go together"),
        }
    }

    /// Creates whatever is missing: the CA (unless `ca.crt` + `ca.key` are already there, e.g.
    /// copied from another replica so that a cluster shares one CA), then the serving and admin
    /// certificates signed by it.
    pub fn ensure(&self, extra_sans: &[String]) -> Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        self.ensure_peer(extra_sans)?;
        self.ensure_front_proxy()?;
        if self.path("ca.crt").exists()
            && self.path("server.crt").exists()
            && self.path("admin.crt").exists()
        {
            return Ok(());
        }
        // Re-signing a CA found on disk with its key and subject yields an issuer equivalent
        // to its ca.crt.
        let (ca_cert, ca_key) = self.load_or_make_ca("ca", "rafter-ca")?;

        let mut server = leaf_params(extra_sans)?;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "rafter");
        server.distinguished_name = dn;
        let server_key = KeyPair::generate()?;
        let server_cert = server.signed_by(&server_key, &ca_cert, &ca_key)?;
        write_private(&self.path("server.key"), &server_key.serialize_pem())?;
        std::fs::write(self.path("server.crt"), server_cert.pem())?;

        if !self.path("admin.crt").exists() {
            let mut admin = CertificateParams::default();
            validity(&mut admin, LEAF_YEARS);
            let mut dn = DistinguishedName::new();
            dn.push(DnType::CommonName, "admin");
            dn.push(DnType::OrganizationName, "system:masters");
            admin.distinguished_name = dn;
            admin.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
            admin.key_usages = vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
            ];
            let admin_key = KeyPair::generate()?;
            let admin_cert = admin.signed_by(&admin_key, &ca_cert, &ca_key)?;
            write_private(&self.path("admin.key"), &admin_key.serialize_pem())?;
            std::fs::write(self.path("admin.crt"), admin_cert.pem())?;
        }
        Ok(())
    }

    /// The peer trust domain, separate from the cluster CA so that no client or admin
    /// certificate can speak Raft: `peer-ca.crt`/`peer-ca.key` (unless copied from another
    /// replica, as `cluster/up.sh` does) and this replica's `peer.crt`/`peer.key`
    /// (`O=rafter:peers`, server and client auth).
    fn ensure_peer(&self, extra_sans: &[String]) -> Result<()> {
        if self.path("peer.crt").exists() && self.path("peer-ca.crt").exists() {
            return Ok(());
        }
        // A folder made by an older Rafter (serving certificate, no peer CA) keeps talking to
        // its peers with the cluster CA until an operator places a shared peer CA in every
        // replica (docs/operations.md): generating one here would split the cluster.
        if self.path("server.crt").exists() && !self.path("peer-ca.crt").exists() {
            return Ok(());
        }
        let (ca_cert, ca_key) = self.load_or_make_ca("peer-ca", "rafter-peer-ca")?;
        let mut params = leaf_params(extra_sans)?;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "rafter-peer");
        dn.push(DnType::OrganizationName, PEER_GROUP);
        params.distinguished_name = dn;
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &ca_cert, &ca_key)?;
        write_private(&self.path("peer.key"), &key.serialize_pem())?;
        std::fs::write(self.path("peer.crt"), cert.pem())?;
        Ok(())
    }

    /// The aggregator's front-proxy CA (its own trust domain: extension servers trust it for
    /// the requestheader contract, and no other certificate it signs) and the proxy client
    /// certificate signed by it (CN `front-proxy-client`, client auth).
    fn ensure_front_proxy(&self) -> Result<()> {
        if self.path("front-proxy-client.crt").exists() && self.path("front-proxy-ca.crt").exists()
        {
            return Ok(());
        }
        let (ca_cert, ca_key) = self.load_or_make_ca("front-proxy-ca", "front-proxy-ca")?;
        let mut params = CertificateParams::default();
        validity(&mut params, LEAF_YEARS);
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, crate::aggregator::FRONT_PROXY_CLIENT);
        params.distinguished_name = dn;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &ca_cert, &ca_key)?;
        write_private(&self.path("front-proxy-client.key"), &key.serialize_pem())?;
        std::fs::write(self.path("front-proxy-client.crt"), cert.pem())?;
        Ok(())
    }

    /// `<name>.crt` + `<name>.key` if present, else a new self-signed CA written there.
    fn load_or_make_ca(&self, name: &str, cn: &str) -> Result<(rcgen::Certificate, KeyPair)> {
        let (crt, key_file) = (format!("{name}.crt"), format!("{name}.key"));
        if self.path(&crt).exists() && self.path(&key_file).exists() {
            let key = KeyPair::from_pem(&std::fs::read_to_string(self.path(&key_file))?)
                .with_context(|| format!("reading {key_file}"))?;
            let params =
                CertificateParams::from_ca_cert_pem(&std::fs::read_to_string(self.path(&crt))?)
                    .with_context(|| format!("reading {crt}"))?;
            return Ok((params.self_signed(&key)?, key));
        }
        let key = KeyPair::generate().context("generating CA key")?;
        let mut ca = CertificateParams::default();
        validity(&mut ca, CA_YEARS);
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, cn);
        ca.distinguished_name = dn;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = ca.self_signed(&key)?;
        write_private(&self.path(&key_file), &key.serialize_pem())?;
        std::fs::write(self.path(&crt), cert.pem())?;
        Ok((cert, key))
    }

    /// Writes `admin.kubeconfig` for `server_url` and returns its path.
    pub fn write_admin_kubeconfig(&self, server_url: &str) -> Result<PathBuf> {
        let path = self.path("admin.kubeconfig");
        let text = kubeconfig(
            server_url,
            &std::fs::read(self.path("ca.crt"))?,
            &std::fs::read(self.path("admin.crt"))?,
            &std::fs::read(self.path("admin.key"))?,
        );
        write_private(&path, &text)?;
        Ok(path)
    }

    /// The rustls server configuration: our serving certificate, ALPN h2 + http/1.1, and
    /// optional client certificates verified against `client_cas` (the client CA, and the
    /// request-header CA when an authenticating proxy is configured).
    pub fn server_config(
        &self,
        client_cas: &[PathBuf],
        serving: &Serving,
    ) -> Result<rustls::ServerConfig> {
        let mut provider = rustls::crypto::ring::default_provider();
        if !serving.cipher_suites.is_empty() {
            let mut chosen = Vec::new();
            for name in &serving.cipher_suites {
                let rustls_name = name.replacen("TLS_AES_", "TLS13_AES_", 1).replacen(
                    "TLS_CHACHA20_",
                    "TLS13_CHACHA20_",
                    1,
                );
                let suite = provider
                    .cipher_suites
                    .iter()
                    .find(|s| format!("{:?}", s.suite()) == rustls_name)
                    .with_context(|| format!("unsupported --tls-cipher-suites entry {name}"))?;
                chosen.push(*suite);
            }
            provider.cipher_suites = chosen;
        }
        let provider = Arc::new(provider);
        let mut roots = rustls::RootCertStore::empty();
        for f in client_cas {
            for c in read_certs(f)? {
                roots.add(c)?;
            }
        }
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .allow_unauthenticated()
        .build()?;
        let versions: &[&rustls::SupportedProtocolVersion] = match serving.min_version.as_deref() {
            None | Some("VersionTLS12") => &[&rustls::version::TLS13, &rustls::version::TLS12],
            Some("VersionTLS13") => &[&rustls::version::TLS13],
            Some(v) => {
                anyhow::bail!("unsupported --tls-min-version {v} (VersionTLS12 or VersionTLS13)")
            }
        };
        let (cert, key) = self.serving_files(serving)?;
        let resolver = ReloadingCert::new(cert, key, provider.clone())?;
        let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)?
            .with_client_cert_verifier(verifier)
            .with_cert_resolver(Arc::new(resolver));
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(cfg)
    }
}

/// Serving-certificate flags.
#[derive(Clone, Debug, Default)]
pub struct Serving {
    /// `--tls-cert-file` / `--tls-private-key-file` (default: the data folder's server.crt).
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    /// `--tls-min-version` (VersionTLS12, VersionTLS13).
    pub min_version: Option<String>,
    /// `--tls-cipher-suites` (IANA names, as kube-apiserver takes them).
    pub cipher_suites: Vec<String>,
}

/// The serving certificate, re-read when its files change (checked at most once a second),
/// so a renewed certificate is served without a restart.
#[derive(Debug)]
struct ReloadingCert {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<rustls::crypto::CryptoProvider>,
    state: std::sync::Mutex<(
        Arc<rustls::sign::CertifiedKey>,
        Option<std::time::SystemTime>,
        std::time::Instant,
    )>,
}

fn modified(p: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

impl ReloadingCert {
    fn new(
        cert: PathBuf,
        key: PathBuf,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<Self> {
        let ck = Self::load(&cert, &key, &provider)?;
        let stamp = modified(&cert).max(modified(&key));
        Ok(ReloadingCert {
            cert,
            key,
            provider,
            state: std::sync::Mutex::new((ck, stamp, std::time::Instant::now())),
        })
    }

    fn load(
        cert: &Path,
        key: &Path,
        provider: &rustls::crypto::CryptoProvider,
    ) -> Result<Arc<rustls::sign::CertifiedKey>> {
        let chain = read_certs(cert)?;
        anyhow::ensure!(!chain.is_empty(), "no certificate in {}", cert.display());
        let signing = provider
            .key_provider
            .load_private_key(read_key(key)?)
            .with_context(|| format!("unusable private key {}", key.display()))?;
        Ok(Arc::new(rustls::sign::CertifiedKey::new(chain, signing)))
    }
}

impl rustls::server::ResolvesServerCert for ReloadingCert {
    fn resolve(
        &self,
        _hello: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.2.elapsed() >= std::time::Duration::from_secs(1) {
            st.2 = std::time::Instant::now();
            let stamp = modified(&self.cert).max(modified(&self.key));
            if stamp != st.1 {
                match Self::load(&self.cert, &self.key, &self.provider) {
                    Ok(ck) => {
                        tracing::info!("serving certificate reloaded from {}", self.cert.display());
                        *st = (ck, stamp, st.2);
                    }
                    // A half-written pair: keep serving the old one and look again later.
                    Err(e) => tracing::warn!("serving certificate not reloaded: {e:#}"),
                }
            }
        }
        Some(st.0.clone())
    }
}

fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    opts.mode(0o600);
    let mut f = opts
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let certs = rustls_pemfile::certs(&mut data.as_slice()).collect::<Result<Vec<_>, _>>()?;
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    rustls_pemfile::private_key(&mut data.as_slice())?
        .with_context(|| format!("no private key in {}", path.display()))
}

/// A kubeconfig with embedded credentials.
pub fn kubeconfig(server_url: &str, ca: &[u8], cert: &[u8], key: &[u8]) -> String {
    let b64 = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: rafter
  cluster:
    server: {server_url}
    certificate-authority-data: {}
users:
- name: admin
  user:
    client-certificate-data: {}
    client-key-data: {}
contexts:
- name: admin@rafter
  context:
    cluster: rafter
    user: admin
current-context: admin@rafter
preferences: {{}}
",
        b64(ca),
        b64(cert),
        b64(key)
    )
}

/// Lifetimes of generated certificates: CAs 10 years, leaves 1 year (`rafter certs rotate`
/// re-issues leaves from the CAs).
const CA_YEARS: i16 = 10;
const LEAF_YEARS: i16 = 1;

/// Valid from an hour ago (clock skew) for `years` years.
fn validity(p: &mut CertificateParams, years: i16) {
    let now = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1);
    let d = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    let day = d.day().min(28) as u8;
    p.not_before = rcgen::date_time_ymd(d.year() as i32, d.month() as u8, day);
    p.not_after = rcgen::date_time_ymd((d.year() + years) as i32, d.month() as u8, day);
}

/// Removes this folder's leaf certificates (serving, admin, peer) so that the next
/// [`Pki::ensure`] issues new ones from the CAs it keeps.
pub fn remove_leaves(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for f in [
        "server.crt",
        "server.key",
        "admin.crt",
        "admin.key",
        "peer.crt",
        "peer.key",
    ] {
        let p = dir.join(f);
        if p.exists() {
            std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
            removed.push(p);
        }
    }
    Ok(removed)
}

/// The group every peer certificate names.
pub const PEER_GROUP: &str = "rafter:peers";

/// A serving + client leaf for localhost, 127.0.0.1, ::1 and `extra_sans` (IP SANs as IPs).
fn leaf_params(extra_sans: &[String]) -> Result<CertificateParams> {
    let mut sans: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    for s in extra_sans {
        if !sans.contains(s) {
            sans.push(s.clone());
        }
    }
    let mut p = CertificateParams::new(sans)?;
    validity(&mut p, LEAF_YEARS);
    p.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    p.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    p.subject_alt_names = p
        .subject_alt_names
        .into_iter()
        .map(|s| match &s {
            SanType::DnsName(n) => match n.as_str().parse::<std::net::IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => s,
            },
            _ => s,
        })
        .collect();
    Ok(p)
}

/// The user a verified client certificate names: (CN, [O...]).
pub fn cert_identity(der: &[u8]) -> Option<(String, Vec<String>)> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let subject = cert.subject();
    let cn = subject
        .iter_common_name()
        .next()
        .and_then(|a| a.as_str().ok())?
        .to_string();
    let groups = subject
        .iter_organization()
        .filter_map(|a| a.as_str().ok().map(str::to_string))
        .collect();
    Some((cn, groups))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_and_reuses_pki() {
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki::new(dir.path());
        pki.ensure(&[]).unwrap();
        let ca = std::fs::read(dir.path().join("ca.crt")).unwrap();
        pki.ensure(&[]).unwrap();
        assert_eq!(ca, std::fs::read(dir.path().join("ca.crt")).unwrap());
        pki.server_config(&[dir.path().join("ca.crt")], &Serving::default())
            .unwrap();
        let admin = read_certs(&dir.path().join("admin.crt")).unwrap();
        let (cn, groups) = cert_identity(&admin[0]).unwrap();
        assert_eq!(cn, "admin");
        assert_eq!(groups, vec!["system:masters".to_string()]);
        let kc = pki
            .write_admin_kubeconfig("https://127.0.0.1:6443")
            .unwrap();
        assert!(std::fs::read_to_string(kc)
            .unwrap()
            .contains("server: https://127.0.0.1:6443"));
    }

    #[test]
    fn a_copied_ca_is_shared() {
        use rustls::client::danger::ServerCertVerifier;
        let a = tempfile::tempdir().unwrap();
        Pki::new(a.path()).ensure(&[]).unwrap();
        let b = tempfile::tempdir().unwrap();
        for f in ["ca.crt", "ca.key"] {
            std::fs::copy(a.path().join(f), b.path().join(f)).unwrap();
        }
        Pki::new(b.path()).ensure(&[]).unwrap();
        assert_eq!(
            std::fs::read(a.path().join("ca.crt")).unwrap(),
            std::fs::read(b.path().join("ca.crt")).unwrap()
        );
        // b's serving certificate verifies against a's CA.
        let mut roots = rustls::RootCertStore::empty();
        for c in read_certs(&a.path().join("ca.crt")).unwrap() {
            roots.add(c).unwrap();
        }
        let server = read_certs(&b.path().join("server.crt")).unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        verifier
            .verify_server_cert(
                &server[0],
                &[],
                &rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap(),
                &[],
                rustls::pki_types::UnixTime::now(),
            )
            .unwrap();
    }
}
