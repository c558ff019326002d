//! Serving certificates over real TLS: generated ones are bounded (leaf 1 year) and carry
//! `--tls-sans`; `--tls-cert-file` is served and reloaded when the file changes;
//! `--tls-min-version` refuses older clients; `rafter certs rotate` re-issues leaves and the
//! running server serves the new certificate without a restart.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::Server;

/// The DER of the certificate a TLS server presents, trusting `ca_pem`.
async fn presented(port: u16, ca_pem: &[u8]) -> Option<Vec<u8>> {
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pemfile::certs(&mut &ca_pem[..]) {
        roots.add(c.ok()?).ok()?;
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .ok()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let conn = tokio_rustls::TlsConnector::from(Arc::new(cfg))
        .connect("127.0.0.1".try_into().ok()?, tcp)
        .await
        .ok()?;
    Some(
        conn.get_ref()
            .1
            .peer_certificates()?
            .first()?
            .as_ref()
            .to_vec(),
    )
}

fn cn_of(der: &[u8]) -> String {
    rafter::server::pki::cert_identity(der).unwrap().0
}

/// A CA and a serving certificate for 127.0.0.1 with this CN, written into `dir`.
fn serving_pki(dir: &Path, cn: &str) -> Vec<u8> {
    let ca_path = dir.join("own-ca.crt");
    let ca_key_path = dir.join("own-ca.key");
    let (ca, ca_key) = if ca_key_path.exists() {
        let key =
            rcgen::KeyPair::from_pem(&std::fs::read_to_string(&ca_key_path).unwrap()).unwrap();
        let params =
            rcgen::CertificateParams::from_ca_cert_pem(&std::fs::read_to_string(&ca_path).unwrap())
                .unwrap();
        (params.self_signed(&key).unwrap(), key)
    } else {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = p.self_signed(&key).unwrap();
        std::fs::write(&ca_path, ca.pem()).unwrap();
        std::fs::write(&ca_key_path, key.serialize_pem()).unwrap();
        (ca, key)
    };
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    p.subject_alt_names = vec![rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap())];
    let mut dn = rcgen::DistinguishedName::new();
    dn.push(rcgen::DnType::CommonName, cn);
    p.distinguished_name = dn;
    let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
    // Key first, then the certificate: a reader never sees a new certificate with an old key
    // for long (the server keeps the old pair while they disagree).
    std::fs::write(dir.join("serving.key"), key.serialize_pem()).unwrap();
    std::fs::write(dir.join("serving.crt"), cert.pem()).unwrap();
    std::fs::read(&ca_path).unwrap()
}

#[tokio::test]
async fn generated_certificates_are_bounded_and_named() {
    let s = Server::start_with(&["--tls-sans", "rafter.example.com,10.1.2.3"]);
    let der = presented(s.port, &std::fs::read(s.dir.path().join("ca.crt")).unwrap())
        .await
        .unwrap();
    let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
    let days =
        (cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp()) / 86400;
    assert!((364..=367).contains(&days), "leaf valid for {days} days");
    let sans = format!(
        "{:?}",
        cert.subject_alternative_name().unwrap().unwrap().value
    );
    assert!(
        sans.contains("rafter.example.com") && sans.contains("[10, 1, 2, 3]"),
        "{sans}"
    );
    let ca_der =
        rustls_pemfile::certs(&mut &std::fs::read(s.dir.path().join("ca.crt")).unwrap()[..])
            .next()
            .unwrap()
            .unwrap();
    let (_, ca) = x509_parser::parse_x509_certificate(&ca_der).unwrap();
    let years =
        (ca.validity().not_after.timestamp() - ca.validity().not_before.timestamp()) / 86400 / 365;
    assert_eq!(years, 10);

    // rafter certs rotate: new leaves; the running server serves the new one; kubectl works.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .args([
            "certs",
            "rotate",
            "--data-dir",
            s.dir.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ca_pem = std::fs::read(s.dir.path().join("ca.crt")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if presented(s.port, &ca_pem).await.is_some_and(|d| d != der) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the rotated certificate is not served"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    s.ok(&["get", "ns", "default"]);
}

#[tokio::test]
async fn own_serving_certificate_is_reloaded_and_min_version_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let ca = serving_pki(dir.path(), "first");
    let data = tempfile::tempdir().unwrap();
    let port = support::free_port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .args(["serve", "--data-dir", data.path().to_str().unwrap()])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args([
            "--tls-cert-file",
            dir.path().join("serving.crt").to_str().unwrap(),
        ])
        .args([
            "--tls-private-key-file",
            dir.path().join("serving.key").to_str().unwrap(),
        ])
        .args(["--tls-min-version", "VersionTLS13"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let first = loop {
        if let Some(d) = presented(port, &ca).await {
            break d;
        }
        assert!(Instant::now() < deadline, "server did not start");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(cn_of(&first), "first");
    // TLS 1.2 clients are refused.
    let old = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .max_tls_version(reqwest::tls::Version::TLS_1_2)
        .build()
        .unwrap();
    assert!(old
        .get(format!("https://127.0.0.1:{port}/readyz"))
        .send()
        .await
        .is_err());
    // A renewed certificate is served without a restart.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    serving_pki(dir.path(), "second");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if presented(port, &ca)
            .await
            .is_some_and(|d| cn_of(&d) == "second")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the renewed certificate is not served"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `--tls-cipher-suites` limits what is offered: a client that knows only another suite fails
/// the handshake; an unknown name is a start error.
#[tokio::test]
async fn cipher_suites_are_restricted() {
    let s = Server::start_with(&[
        "--tls-cipher-suites",
        "TLS_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    ]);
    let ca = std::fs::read(s.dir.path().join("ca.crt")).unwrap();
    let connect = |suite: rustls::SupportedCipherSuite| {
        let ca = ca.clone();
        async move {
            let mut roots = rustls::RootCertStore::empty();
            for c in rustls_pemfile::certs(&mut &ca[..]) {
                roots.add(c.unwrap()).unwrap();
            }
            let mut provider = rustls::crypto::ring::default_provider();
            provider.cipher_suites = vec![suite];
            let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth();
            let tcp = tokio::net::TcpStream::connect(("127.0.0.1", s.port))
                .await
                .unwrap();
            tokio_rustls::TlsConnector::from(Arc::new(cfg))
                .connect("127.0.0.1".try_into().unwrap(), tcp)
                .await
                .is_ok()
        }
    };
    use rustls::crypto::ring::cipher_suite as cs;
    assert!(connect(cs::TLS13_AES_256_GCM_SHA384).await);
    assert!(!connect(cs::TLS13_AES_128_GCM_SHA256).await);
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .args([
            "serve",
            "--data-dir",
            dir.path().to_str().unwrap(),
            "--tls-cipher-suites",
            "TLS_NOPE",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("unsupported --tls-cipher-suites entry TLS_NOPE"));
}
