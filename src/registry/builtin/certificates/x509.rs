//! PKCS#10 certificate requests as kube reads them (`k8s.io/kubernetes/pkg/apis/certificates`
//! and Go's `crypto/x509`): `ParseCSR` (the first PEM block, of type `CERTIFICATE REQUEST`),
//! `CheckSignature` with Go's error texts, the fields kube's signers and approver look at
//! (subject common name and organizations, DNS / email / IP / URI SANs) and the kubelet
//! helpers `ValidateKubeletClientCSR` / `ValidateKubeletServingCSR`. Pure: no I/O.
//!
//! Signatures are verified with `ring`: RSA PKCS#1 v1.5 (SHA-1, SHA-256, SHA-384, SHA-512),
//! ECDSA on P-256 and P-384 (SHA-256, SHA-384) and Ed25519. Go also verifies RSA-PSS, ECDSA
//! with SHA-1 / SHA-512 and the P-224 / P-521 curves; those are refused here with Go's
//! "algorithm unimplemented" text.

use std::net::IpAddr;

use base64::Engine;
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::FromDer;

/// The parts of a parsed request kube's controllers use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// The whole request (DER).
    pub der: Vec<u8>,
    /// The subject as encoded in the request (DER of the Name).
    pub subject_der: Vec<u8>,
    /// The last common name of the subject (Go's `pkix.Name.CommonName`), `""` if none.
    pub common_name: String,
    /// Every organization of the subject, in order.
    pub organizations: Vec<String>,
    pub dns_names: Vec<String>,
    pub emails: Vec<String>,
    pub ips: Vec<IpAddr>,
    pub uris: Vec<String>,
    /// The SubjectPublicKeyInfo (DER).
    pub spki_der: Vec<u8>,
}

/// The DER bodies of the PEM blocks of `data`, with their types, in order.
pub fn pem_blocks(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let text = String::from_utf8_lossy(data);
    let mut out = Vec::new();
    let mut rest: &str = &text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let Some(type_end) = after.find("-----") else {
            break;
        };
        let kind = &after[..type_end];
        let body_start = &after[type_end + 5..];
        let end_marker = format!("-----END {kind}-----");
        let (Some(body_end), false) = (body_start.find(&end_marker), kind.contains('\n')) else {
            rest = after;
            continue;
        };
        let b64: String = body_start[..body_end]
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.contains(':'))
            .collect();
        rest = &body_start[body_end + end_marker.len()..];
        if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(b64) {
            out.push((kind.to_string(), der));
        }
    }
    out
}

/// PEM text of one DER block (64-column lines, as Go's `pem.Encode`).
pub fn pem_encode(kind: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut s = format!("-----BEGIN {kind}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        s.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        s.push('\n');
    }
    s.push_str(&format!("-----END {kind}-----\n"));
    s
}

/// `certificates.ParseCSR`: the first PEM block must be a `CERTIFICATE REQUEST` that parses.
pub fn parse_csr(pem: &[u8]) -> Result<Request, String> {
    let blocks = pem_blocks(pem);
    let Some((_, der)) = blocks
        .into_iter()
        .next()
        .filter(|(k, _)| k == "CERTIFICATE REQUEST")
    else {
        return Err("PEM block type must be CERTIFICATE REQUEST".into());
    };
    parse_der(&der)
}

fn parse_der(der: &[u8]) -> Result<Request, String> {
    let csr = match X509CertificationRequest::from_der(der) {
        Ok((rest, csr)) if rest.is_empty() => csr,
        Ok(_) => return Err("x509: trailing data".into()),
        Err(_) => return Err("x509: malformed certificate request".into()),
    };
    let info = &csr.certification_request_info;
    let text = |a: &x509_parser::x509::AttributeTypeAndValue| a.as_str().unwrap_or("").to_string();
    let mut req = Request {
        der: der.to_vec(),
        subject_der: info.subject.as_raw().to_vec(),
        common_name: info
            .subject
            .iter_common_name()
            .last()
            .map(text)
            .unwrap_or_default(),
        organizations: info.subject.iter_organization().map(text).collect(),
        spki_der: info.subject_pki.raw.to_vec(),
        ..Default::default()
    };
    for ext in csr.requested_extensions().into_iter().flatten() {
        if let ParsedExtension::SubjectAlternativeName(san) = ext {
            for n in &san.general_names {
                match n {
                    GeneralName::DNSName(d) => req.dns_names.push(d.to_string()),
                    GeneralName::RFC822Name(e) => req.emails.push(e.to_string()),
                    GeneralName::URI(u) => req.uris.push(u.to_string()),
                    GeneralName::IPAddress(b) => match b.len() {
                        4 => req
                            .ips
                            .push(IpAddr::from(<[u8; 4]>::try_from(*b).unwrap_or_default())),
                        16 => req
                            .ips
                            .push(IpAddr::from(<[u8; 16]>::try_from(*b).unwrap_or_default())),
                        n => return Err(format!("x509: cannot parse IP address of length {n}")),
                    },
                    _ => {}
                }
            }
        }
    }
    // Go refuses keys of curves it does not know when parsing.
    if let Err(e) = public_key(&csr) {
        if e == UNSUPPORTED_CURVE {
            return Err(e.into());
        }
    }
    Ok(req)
}

const OID_RSA: &str = "1.2.840.113549.1.1.1";
const OID_EC: &str = "1.2.840.10045.2.1";
const OID_ED25519: &str = "1.3.101.112";
const OID_P256: &str = "1.2.840.10045.3.1.7";
const OID_P384: &str = "1.3.132.0.34";
const OID_P224: &str = "1.3.132.0.33";
const OID_P521: &str = "1.3.132.0.35";
const UNSUPPORTED_CURVE: &str = "x509: unsupported elliptic curve";
const UNIMPLEMENTED: &str = "x509: cannot verify signature: algorithm unimplemented";

/// A request's key as Go types it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Rsa,
    /// ECDSA; `true` for a curve `ring` verifies (P-256, P-384), with the curve.
    Ecdsa(Option<Curve>),
    Ed25519,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Curve {
    P256,
    P384,
}

fn public_key(csr: &X509CertificationRequest) -> Result<Key, &'static str> {
    let spki = &csr.certification_request_info.subject_pki;
    match spki.algorithm.algorithm.to_id_string().as_str() {
        OID_RSA => Ok(Key::Rsa),
        OID_ED25519 => Ok(Key::Ed25519),
        OID_EC => {
            let curve = spki
                .algorithm
                .parameters
                .as_ref()
                .and_then(|p| p.as_oid().ok())
                .map(|o| o.to_id_string());
            match curve.as_deref() {
                Some(OID_P256) => Ok(Key::Ecdsa(Some(Curve::P256))),
                Some(OID_P384) => Ok(Key::Ecdsa(Some(Curve::P384))),
                Some(OID_P224) | Some(OID_P521) => Ok(Key::Ecdsa(None)),
                _ => Err(UNSUPPORTED_CURVE),
            }
        }
        _ => Err(UNIMPLEMENTED),
    }
}

/// `(*x509.CertificateRequest).CheckSignature` with Go's error texts.
pub fn check_signature(der: &[u8]) -> Result<(), String> {
    use ring::signature as sig;
    let Ok((_, csr)) = X509CertificationRequest::from_der(der) else {
        return Err("x509: malformed certificate request".into());
    };
    let key = public_key(&csr).map_err(str::to_string)?;
    let alg_oid = csr.signature_algorithm.algorithm.to_id_string();
    // (public key algorithm the signature algorithm names, Go's name of that algorithm)
    let (wants, name): (Key, &str) = match alg_oid.as_str() {
        "1.2.840.113549.1.1.4" => {
            return Err("x509: cannot verify signature: insecure algorithm MD5-RSA".into())
        }
        "1.2.840.113549.1.1.5"
        | "1.2.840.113549.1.1.11"
        | "1.2.840.113549.1.1.12"
        | "1.2.840.113549.1.1.13" => (Key::Rsa, "RSA"),
        "1.2.840.10045.4.1"
        | "1.2.840.10045.4.3.2"
        | "1.2.840.10045.4.3.3"
        | "1.2.840.10045.4.3.4" => (Key::Ecdsa(None), "ECDSA"),
        OID_ED25519 => (Key::Ed25519, "Ed25519"),
        _ => return Err(UNIMPLEMENTED.into()),
    };
    let same_kind = matches!(
        (wants, key),
        (Key::Rsa, Key::Rsa) | (Key::Ecdsa(_), Key::Ecdsa(_)) | (Key::Ed25519, Key::Ed25519)
    );
    if !same_kind {
        let go_type = match key {
            Key::Rsa => "*rsa.PublicKey",
            Key::Ecdsa(_) => "*ecdsa.PublicKey",
            Key::Ed25519 => "ed25519.PublicKey",
        };
        return Err(format!(
            "x509: signature algorithm specifies an {name} public key, but have public key of type {go_type}"
        ));
    }
    let alg: &dyn sig::VerificationAlgorithm = match (alg_oid.as_str(), key) {
        ("1.2.840.113549.1.1.5", _) => &sig::RSA_PKCS1_1024_8192_SHA1_FOR_LEGACY_USE_ONLY,
        ("1.2.840.113549.1.1.11", _) => &sig::RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY,
        ("1.2.840.113549.1.1.12", _) => &sig::RSA_PKCS1_2048_8192_SHA384,
        ("1.2.840.113549.1.1.13", _) => &sig::RSA_PKCS1_1024_8192_SHA512_FOR_LEGACY_USE_ONLY,
        ("1.2.840.10045.4.3.2", Key::Ecdsa(Some(Curve::P256))) => &sig::ECDSA_P256_SHA256_ASN1,
        ("1.2.840.10045.4.3.3", Key::Ecdsa(Some(Curve::P256))) => &sig::ECDSA_P256_SHA384_ASN1,
        ("1.2.840.10045.4.3.2", Key::Ecdsa(Some(Curve::P384))) => &sig::ECDSA_P384_SHA256_ASN1,
        ("1.2.840.10045.4.3.3", Key::Ecdsa(Some(Curve::P384))) => &sig::ECDSA_P384_SHA384_ASN1,
        (OID_ED25519, _) => &sig::ED25519,
        _ => return Err(UNIMPLEMENTED.into()),
    };
    let info = &csr.certification_request_info;
    let public = sig::UnparsedPublicKey::new(alg, info.subject_pki.subject_public_key.as_ref());
    public
        .verify(info.raw, csr.signature_value.as_ref())
        .map_err(|_| {
            match key {
                Key::Rsa => "crypto/rsa: verification error",
                Key::Ecdsa(_) => "x509: ECDSA verification failure",
                Key::Ed25519 => "x509: Ed25519 verification failure",
            }
            .to_string()
        })
}

/// `ParseCSR` then `CheckSignature` (kube's `validateCSR`).
pub fn parse_and_verify(pem: &[u8]) -> Result<Request, String> {
    let req = parse_csr(pem)?;
    check_signature(&req.der)?;
    Ok(req)
}

/// Go's `%v` of a sorted `[]string`: `[a b c]`.
fn go_list(items: &[&str]) -> String {
    format!("[{}]", items.join(" "))
}

fn same_set(usages: &[&str], want: &[&str]) -> bool {
    let mut u: Vec<&str> = usages.to_vec();
    u.sort_unstable();
    u.dedup();
    let mut w = want.to_vec();
    w.sort_unstable();
    u == w
}

const ORG_NOT_NODES: &str = "subject organization is not system:nodes";
const CN_NOT_NODE: &str = "subject common name does not begin with system:node:";

/// `ValidateKubeletClientCSR`.
pub fn validate_kubelet_client(req: &Request, usages: &[&str]) -> Result<(), String> {
    if req.organizations != ["system:nodes"] {
        return Err(ORG_NOT_NODES.into());
    }
    if !req.dns_names.is_empty() {
        return Err("DNS subjectAltNames are not allowed".into());
    }
    if !req.emails.is_empty() {
        return Err("Email subjectAltNames are not allowed".into());
    }
    if !req.ips.is_empty() {
        return Err("IP subjectAltNames are not allowed".into());
    }
    if !req.uris.is_empty() {
        return Err("URI subjectAltNames are not allowed".into());
    }
    if !req.common_name.starts_with("system:node:") {
        return Err(CN_NOT_NODE.into());
    }
    let full = ["client auth", "digital signature", "key encipherment"];
    if !same_set(usages, &full) && !same_set(usages, &["client auth", "digital signature"]) {
        return Err(format!("usages did not match {}", go_list(&full)));
    }
    Ok(())
}

/// `ValidateKubeletServingCSR`.
pub fn validate_kubelet_serving(req: &Request, usages: &[&str]) -> Result<(), String> {
    if req.organizations != ["system:nodes"] {
        return Err(ORG_NOT_NODES.into());
    }
    if req.dns_names.is_empty() && req.ips.is_empty() {
        return Err("DNS or IP subjectAltName is required".into());
    }
    if !req.emails.is_empty() {
        return Err("Email subjectAltNames are not allowed".into());
    }
    if !req.uris.is_empty() {
        return Err("URI subjectAltNames are not allowed".into());
    }
    let full = ["digital signature", "key encipherment", "server auth"];
    if !same_set(usages, &full) && !same_set(usages, &["digital signature", "server auth"]) {
        return Err(format!("usages did not match {}", go_list(&full)));
    }
    if !req.common_name.starts_with("system:node:") {
        return Err(CN_NOT_NODE.into());
    }
    Ok(())
}

/// The signer's `validAPIServerClientUsages` (kubernetes.io/kube-apiserver-client).
pub fn validate_api_server_client_usages(usages: &[&str]) -> Result<(), String> {
    let mut client_auth = false;
    for u in usages {
        match *u {
            "digital signature" | "key encipherment" => {}
            "client auth" => client_auth = true,
            other => return Err(format!("invalid usage for client certificate: {other}")),
        }
    }
    if !client_auth {
        return Err("missing required usage for client certificate: client auth".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(cn_org: &[(rcgen::DnType, &str)], sans: &[&str]) -> String {
        let mut params =
            rcgen::CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        let mut dn = rcgen::DistinguishedName::new();
        for (t, v) in cn_org {
            dn.push(t.clone(), *v);
        }
        params.distinguished_name = dn;
        let key = rcgen::KeyPair::generate().unwrap();
        params.serialize_request(&key).unwrap().pem().unwrap()
    }

    #[test]
    fn parses_and_verifies() {
        let pem = csr(
            &[
                (rcgen::DnType::CommonName, "system:node:a"),
                (rcgen::DnType::OrganizationName, "system:nodes"),
            ],
            &[],
        );
        let req = parse_and_verify(pem.as_bytes()).unwrap();
        assert_eq!(req.common_name, "system:node:a");
        assert_eq!(req.organizations, ["system:nodes"]);
        validate_kubelet_client(&req, &["digital signature", "client auth"]).unwrap();
        assert_eq!(
            validate_kubelet_client(&req, &["client auth"]).unwrap_err(),
            "usages did not match [client auth digital signature key encipherment]"
        );
        assert_eq!(
            validate_kubelet_serving(&req, &["server auth", "digital signature"]).unwrap_err(),
            "DNS or IP subjectAltName is required"
        );
        // A flipped bit in the signature.
        let mut der = req.der.clone();
        let last = der.len() - 1;
        der[last] ^= 1;
        assert_eq!(
            check_signature(&der).unwrap_err(),
            "x509: ECDSA verification failure"
        );
        assert_eq!(
            parse_csr(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
                .unwrap_err(),
            "PEM block type must be CERTIFICATE REQUEST"
        );
    }

    #[test]
    fn sans() {
        let pem = csr(
            &[(rcgen::DnType::CommonName, "x")],
            &["a.example", "10.0.0.1"],
        );
        let req = parse_and_verify(pem.as_bytes()).unwrap();
        assert_eq!(req.dns_names, ["a.example"]);
        assert_eq!(req.ips, ["10.0.0.1".parse::<IpAddr>().unwrap()]);
        assert_eq!(
            validate_kubelet_client(&req, &["client auth"]).unwrap_err(),
            "subject organization is not system:nodes"
        );
    }
}
