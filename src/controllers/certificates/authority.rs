//! kube-controller-manager's local certificate authority (`pkg/controller/certificates/
//! authority`): signs a request's key and names with the CA's key under the permissive signing
//! policy the built-in signers use — usages from the CSR's `spec.usages`, `CA:FALSE`, no other
//! extension of the request kept, NotBefore backdated 5 minutes, NotAfter = now + TTL (minus
//! the backdate unless the TTL is under 8 hours), capped at the CA's own NotAfter.
//!
//! The certificate is written as Go's `x509.CreateCertificate` writes it (a random 128-bit
//! serial, KeyUsage critical, ExtKeyUsage sorted as Go's constants, BasicConstraints critical,
//! AuthorityKeyId from the CA's SubjectKeyId, SANs in Go's order, critical when the subject is
//! empty). One difference: the subject is the request's own encoding of it (Go re-encodes the
//! parsed name in its fixed attribute order), and the issuer the CA certificate's subject bytes.
//!
//! CA keys: PKCS#8 (ECDSA P-256 / P-384, Ed25519, RSA), PKCS#1 RSA and SEC1 EC keys.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, RsaKeyPair};

use crate::registry::builtin::certificates::x509::{self, Request};

/// Why the CA cannot be loaded or a certificate not signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorityError(pub String);

impl std::fmt::Display for AuthorityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err(s: impl Into<String>) -> AuthorityError {
    AuthorityError(s.into())
}

enum SigningKey {
    Ecdsa(EcdsaKeyPair, &'static str),
    Ed25519(Ed25519KeyPair),
    Rsa(RsaKeyPair),
}

/// A loaded CA: its certificate's subject, key id and expiry, and its key.
pub struct Authority {
    subject_der: Vec<u8>,
    key_id: Option<Vec<u8>>,
    not_after: i64,
    key: SigningKey,
    rng: SystemRandom,
}

/// The backdate of NotBefore (and of NotAfter for long certificates).
pub const BACKDATE: Duration = Duration::from_secs(5 * 60);
/// Certificates shorter than this keep NotAfter = now + TTL.
pub const SHORT: Duration = Duration::from_secs(8 * 3600);

impl Authority {
    /// Loads the CA from its PEM certificate (the first block) and PEM key files.
    pub fn load(
        cert_file: &std::path::Path,
        key_file: &std::path::Path,
    ) -> Result<Self, AuthorityError> {
        let read = |p: &std::path::Path| {
            std::fs::read(p).map_err(|e| err(format!("reading {}: {e}", p.display())))
        };
        Authority::from_pem(&read(cert_file)?, &read(key_file)?)
    }

    /// The CA from PEM bytes.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Self, AuthorityError> {
        let cert_der = x509::pem_blocks(cert_pem)
            .into_iter()
            .find(|(k, _)| k == "CERTIFICATE")
            .map(|(_, d)| d)
            .ok_or_else(|| err("no CERTIFICATE block in the signing certificate"))?;
        let (_, cert) = x509_parser::parse_x509_certificate(&cert_der)
            .map_err(|e| err(format!("parsing the signing certificate: {e}")))?;
        let tbs = &cert.tbs_certificate;
        let key_id = tbs
            .extensions()
            .iter()
            .find_map(|e| match e.parsed_extension() {
                x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(k) => {
                    Some(k.0.to_vec())
                }
                _ => None,
            });
        let rng = SystemRandom::new();
        let key = load_key(key_pem, &rng)?;
        Ok(Authority {
            subject_der: tbs.subject.as_raw().to_vec(),
            key_id,
            not_after: tbs.validity().not_after.timestamp(),
            key,
            rng,
        })
    }

    /// Signs `req` (already parsed; its signature is checked again, as kube's authority does)
    /// for `usages` and `ttl` at `now`; returns the certificate's PEM.
    pub fn sign(
        &self,
        req: &Request,
        usages: &[&str],
        ttl: Duration,
        now: SystemTime,
    ) -> Result<String, AuthorityError> {
        x509::check_signature(&req.der).map_err(|e| {
            err(format!(
                "unable to verify certificate request signature: {e}"
            ))
        })?;
        let (key_usage, ext_usages) = key_usages(usages)?;
        let now_s = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
        let not_before = now_s - BACKDATE.as_secs() as i64;
        let mut not_after = if ttl < SHORT {
            now_s + ttl.as_secs() as i64
        } else {
            now_s + ttl.as_secs() as i64 - BACKDATE.as_secs() as i64
        };
        if not_after >= self.not_after {
            not_after = self.not_after;
        }
        if not_before >= self.not_after {
            return Err(err(format!(
                "the signer has expired: NotAfter={}",
                go_time(self.not_after)
            )));
        }
        if now_s >= self.not_after {
            return Err(err(format!(
                "refusing to sign a certificate that expired in the past: NotAfter={}",
                go_time(self.not_after)
            )));
        }
        let mut serial = [0u8; 16];
        self.rng
            .fill(&mut serial)
            .map_err(|_| err("unable to generate a serial number"))?;
        serial[0] &= 0x7f;
        serial[0] |= 0x01;

        let mut exts = Vec::new();
        if key_usage != 0 {
            exts.push(extension("2.5.29.15", true, &key_usage_bits(key_usage)));
        }
        if !ext_usages.is_empty() {
            let oids: Vec<Vec<u8>> = ext_usages.iter().map(|o| oid(o)).collect();
            exts.push(extension("2.5.29.37", false, &seq(&oids)));
        }
        exts.push(extension("2.5.29.19", true, &seq(&[])));
        if let Some(id) = self.key_id.as_ref().filter(|k| !k.is_empty()) {
            exts.push(extension("2.5.29.35", false, &seq(&[tlv(0x80, id)])));
        }
        let mut names = Vec::new();
        names.extend(req.dns_names.iter().map(|d| tlv(0x82, d.as_bytes())));
        names.extend(req.emails.iter().map(|e| tlv(0x81, e.as_bytes())));
        names.extend(req.ips.iter().map(|ip| match ip {
            std::net::IpAddr::V4(a) => tlv(0x87, &a.octets()),
            std::net::IpAddr::V6(a) => tlv(0x87, &a.octets()),
        }));
        names.extend(req.uris.iter().map(|u| tlv(0x86, u.as_bytes())));
        if !names.is_empty() {
            // An empty subject is the 2-byte empty SEQUENCE.
            let empty_subject = req.subject_der.len() <= 2;
            exts.push(extension("2.5.29.17", empty_subject, &seq(&names)));
        }
        let sig_alg = self.algorithm_identifier();
        let tbs = seq(&[
            tlv(0xa0, &integer(&[2])),
            integer(&serial),
            sig_alg.clone(),
            self.subject_der.clone(),
            seq(&[time(not_before), time(not_after)]),
            req.subject_der.clone(),
            req.spki_der.clone(),
            tlv(0xa3, &seq(&exts)),
        ]);
        let signature = self.sign_bytes(&tbs)?;
        let cert = seq(&[tbs, sig_alg, bit_string(&signature)]);
        Ok(x509::pem_encode("CERTIFICATE", &cert))
    }

    fn algorithm_identifier(&self) -> Vec<u8> {
        match &self.key {
            SigningKey::Ecdsa(_, alg) => seq(&[oid(alg)]),
            SigningKey::Ed25519(_) => seq(&[oid("1.3.101.112")]),
            SigningKey::Rsa(_) => seq(&[oid("1.2.840.113549.1.1.11"), vec![0x05, 0x00]]),
        }
    }

    fn sign_bytes(&self, msg: &[u8]) -> Result<Vec<u8>, AuthorityError> {
        let failed = |_| err("failed to sign certificate");
        match &self.key {
            SigningKey::Ecdsa(k, _) => {
                Ok(k.sign(&self.rng, msg).map_err(failed)?.as_ref().to_vec())
            }
            SigningKey::Ed25519(k) => Ok(k.sign(msg).as_ref().to_vec()),
            SigningKey::Rsa(k) => {
                let mut out = vec![0u8; k.public().modulus_len()];
                k.sign(&signature::RSA_PKCS1_SHA256, &self.rng, msg, &mut out)
                    .map_err(failed)?;
                Ok(out)
            }
        }
    }
}

/// Go's `time.Time` `%v` in UTC: `2026-01-02 03:04:05 +0000 UTC`.
fn go_time(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string())
        .unwrap_or_default()
}

fn load_key(pem: &[u8], rng: &SystemRandom) -> Result<SigningKey, AuthorityError> {
    let blocks = x509::pem_blocks(pem);
    let Some((kind, der)) = blocks.into_iter().find(|(k, _)| k.ends_with("PRIVATE KEY")) else {
        return Err(err("no PRIVATE KEY block in the signing key"));
    };
    let pkcs8 = match kind.as_str() {
        "PRIVATE KEY" => der,
        "RSA PRIVATE KEY" => {
            return RsaKeyPair::from_der(&der)
                .map(SigningKey::Rsa)
                .map_err(|e| err(format!("parsing the RSA signing key: {e}")))
        }
        "EC PRIVATE KEY" => sec1_to_pkcs8(&der)?,
        other => return Err(err(format!("unsupported signing key type {other}"))),
    };
    if let Ok(k) = EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_ASN1_SIGNING, &pkcs8, rng)
    {
        return Ok(SigningKey::Ecdsa(k, "1.2.840.10045.4.3.2"));
    }
    if let Ok(k) = EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P384_SHA384_ASN1_SIGNING, &pkcs8, rng)
    {
        return Ok(SigningKey::Ecdsa(k, "1.2.840.10045.4.3.3"));
    }
    if let Ok(k) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(&pkcs8) {
        return Ok(SigningKey::Ed25519(k));
    }
    RsaKeyPair::from_pkcs8(&pkcs8)
        .map(SigningKey::Rsa)
        .map_err(|e| err(format!("unsupported signing key: {e}")))
}

/// Wraps a SEC1 `ECPrivateKey` (whose `[0]` parameters name the curve) into PKCS#8.
fn sec1_to_pkcs8(der: &[u8]) -> Result<Vec<u8>, AuthorityError> {
    let bad = || err("malformed EC PRIVATE KEY");
    let (tag, body, _) = read_tlv(der).ok_or_else(bad)?;
    if tag != 0x30 {
        return Err(bad());
    }
    let mut rest = body;
    let mut curve = None;
    while !rest.is_empty() {
        let (tag, value, next) = read_tlv(rest).ok_or_else(bad)?;
        if tag == 0xa0 {
            curve = Some(value.to_vec());
        }
        rest = next;
    }
    let curve = curve.ok_or_else(|| err("EC PRIVATE KEY without curve parameters"))?;
    Ok(seq(&[
        integer(&[0]),
        seq(&[oid("1.2.840.10045.2.1"), curve]),
        tlv(0x04, der),
    ]))
}

/// One DER TLV at the start of `b`: (tag, value, rest).
fn read_tlv(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *b.first()?;
    let first = *b.get(1)? as usize;
    let (len, start) = if first < 0x80 {
        (first, 2)
    } else {
        let n = first & 0x7f;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *b.get(2 + i)? as usize;
        }
        (len, 2 + n)
    };
    let end = start.checked_add(len)?;
    Some((tag, b.get(start..end)?, b.get(end..)?))
}

const KEY_USAGES: &[(&str, u16)] = &[
    ("signing", 1 << 0),
    ("digital signature", 1 << 0),
    ("content commitment", 1 << 1),
    ("key encipherment", 1 << 2),
    ("key agreement", 1 << 4),
    ("data encipherment", 1 << 3),
    ("cert sign", 1 << 5),
    ("crl sign", 1 << 6),
    ("encipher only", 1 << 7),
    ("decipher only", 1 << 8),
];

/// (usage, Go's ExtKeyUsage constant, OID)
const EXT_KEY_USAGES: &[(&str, u8, &str)] = &[
    ("any", 0, "2.5.29.37.0"),
    ("server auth", 1, "1.3.6.1.5.5.7.3.1"),
    ("client auth", 2, "1.3.6.1.5.5.7.3.2"),
    ("code signing", 3, "1.3.6.1.5.5.7.3.3"),
    ("email protection", 4, "1.3.6.1.5.5.7.3.4"),
    ("s/mime", 4, "1.3.6.1.5.5.7.3.4"),
    ("ipsec end system", 5, "1.3.6.1.5.5.7.3.5"),
    ("ipsec tunnel", 6, "1.3.6.1.5.5.7.3.6"),
    ("ipsec user", 7, "1.3.6.1.5.5.7.3.7"),
    ("timestamping", 8, "1.3.6.1.5.5.7.3.8"),
    ("ocsp signing", 9, "1.3.6.1.5.5.7.3.9"),
    ("microsoft sgc", 10, "1.3.6.1.4.1.311.10.3.3"),
    ("netscape sgc", 11, "2.16.840.1.113730.4.1"),
];

/// `keyUsagesFromStrings`: the KeyUsage bits and the ExtKeyUsage OIDs (deduplicated, in Go's
/// constant order).
fn key_usages(usages: &[&str]) -> Result<(u16, Vec<&'static str>), AuthorityError> {
    let mut bits = 0u16;
    let mut ext: Vec<(u8, &'static str)> = Vec::new();
    let mut unknown = Vec::new();
    for u in usages {
        if let Some((_, b)) = KEY_USAGES.iter().find(|(n, _)| n == u) {
            bits |= b;
        } else if let Some((_, n, o)) = EXT_KEY_USAGES.iter().find(|(n, _, _)| n == u) {
            if !ext.iter().any(|(m, _)| m == n) {
                ext.push((*n, o));
            }
        } else {
            unknown.push(format!("{u:?}"));
        }
    }
    if !unknown.is_empty() {
        return Err(err(format!(
            "unrecognized usage values: [{}]",
            unknown.join(" ")
        )));
    }
    ext.sort_by_key(|(n, _)| *n);
    Ok((bits, ext.into_iter().map(|(_, o)| o).collect()))
}

/// Go's `marshalKeyUsage` body: the bits reversed per byte, as short as the last set bit.
fn key_usage_bits(ku: u16) -> Vec<u8> {
    let a = [(ku as u8).reverse_bits(), ((ku >> 8) as u8).reverse_bits()];
    let bytes: &[u8] = if a[1] != 0 { &a } else { &a[..1] };
    let last = bytes[bytes.len() - 1];
    let unused = last.trailing_zeros().min(7) as u8;
    let mut body = vec![unused];
    body.extend_from_slice(bytes);
    tlv(0x03, &body)
}

fn tlv(tag: u8, value: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = value.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes: Vec<u8> = n
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(value);
    out
}

fn seq(items: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &items.concat())
}

/// A non-negative INTEGER from big-endian bytes.
fn integer(b: &[u8]) -> Vec<u8> {
    let mut v: Vec<u8> = b.iter().copied().skip_while(|x| *x == 0).collect();
    if v.is_empty() || v[0] & 0x80 != 0 {
        v.insert(0, 0);
    }
    tlv(0x02, &v)
}

fn bit_string(b: &[u8]) -> Vec<u8> {
    let mut body = vec![0];
    body.extend_from_slice(b);
    tlv(0x03, &body)
}

fn oid(dotted: &str) -> Vec<u8> {
    let arcs: Vec<u64> = dotted.split('.').filter_map(|a| a.parse().ok()).collect();
    let mut body = Vec::new();
    let mut push = |mut v: u64| {
        let mut tmp = vec![(v & 0x7f) as u8];
        v >>= 7;
        while v > 0 {
            tmp.push((v & 0x7f) as u8 | 0x80);
            v >>= 7;
        }
        tmp.reverse();
        body.extend(tmp);
    };
    push(arcs[0] * 40 + arcs.get(1).copied().unwrap_or(0));
    for a in arcs.iter().skip(2) {
        push(*a);
    }
    tlv(0x06, &body)
}

fn extension(id: &str, critical: bool, value: &[u8]) -> Vec<u8> {
    let mut parts = vec![oid(id)];
    if critical {
        parts.push(vec![0x01, 0x01, 0xff]);
    }
    parts.push(tlv(0x04, value));
    seq(&parts)
}

/// UTCTime through 2049, GeneralizedTime after (RFC 5280, as Go).
fn time(secs: i64) -> Vec<u8> {
    let t = jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let year = t.to_zoned(jiff::tz::TimeZone::UTC).year();
    if (1950..2050).contains(&year) {
        tlv(0x17, t.strftime("%y%m%d%H%M%SZ").to_string().as_bytes())
    } else {
        tlv(0x18, t.strftime("%Y%m%d%H%M%SZ").to_string().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca() -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::default();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::CommonName, "test-ca");
        p.distinguished_name = dn;
        let cert = p.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    #[test]
    fn signs_as_the_policy_says() {
        let (ca_pem, ca_key) = ca();
        let auth = Authority::from_pem(ca_pem.as_bytes(), ca_key.as_bytes()).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::new(vec!["a.example".to_string()]).unwrap();
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::CommonName, "myuser");
        p.distinguished_name = dn;
        let csr = p.serialize_request(&key).unwrap().pem().unwrap();
        let req = x509::parse_and_verify(csr.as_bytes()).unwrap();
        let now = SystemTime::now();
        let pem = auth
            .sign(
                &req,
                &["client auth", "digital signature", "key encipherment"],
                Duration::from_secs(86400),
                now,
            )
            .unwrap();
        let der = x509::pem_blocks(pem.as_bytes()).remove(0).1;
        let (rest, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        assert!(rest.is_empty());
        let v = cert.validity();
        assert_eq!(
            v.not_after.timestamp() - v.not_before.timestamp(),
            86400,
            "24 h: backdated at both ends"
        );
        assert_eq!(cert.subject().to_string(), "CN=myuser");
        assert_eq!(cert.issuer().to_string(), "CN=test-ca");
        let eku = cert.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.client_auth && !eku.server_auth);
        let ku = cert.key_usage().unwrap().unwrap();
        assert!(ku.critical && ku.value.digital_signature() && ku.value.key_encipherment());
        assert!(!cert.basic_constraints().unwrap().unwrap().value.ca);
        // Verifies against the CA.
        let ca_der = x509::pem_blocks(ca_pem.as_bytes()).remove(0).1;
        let (_, ca_cert) = x509_parser::parse_x509_certificate(&ca_der).unwrap();
        ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_ASN1,
            ca_cert.public_key().subject_public_key.as_ref(),
        )
        .verify(cert.tbs_certificate.as_ref(), cert.signature_value.as_ref())
        .unwrap();
        // Short certificates are not backdated at the end.
        let pem = auth
            .sign(&req, &["client auth"], Duration::from_secs(3600), now)
            .unwrap();
        let der = x509::pem_blocks(pem.as_bytes()).remove(0).1;
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        let v = cert.validity();
        assert_eq!(
            v.not_after.timestamp() - v.not_before.timestamp(),
            3600 + 300
        );
        assert_eq!(
            auth.sign(&req, &["bogus"], Duration::from_secs(3600), now)
                .unwrap_err()
                .0,
            "unrecognized usage values: [\"bogus\"]"
        );
    }

    #[test]
    fn der_pieces() {
        assert_eq!(
            oid("1.2.840.10045.2.1"),
            vec![6, 7, 42, 134, 72, 206, 61, 2, 1]
        );
        assert_eq!(integer(&[0x80]), vec![2, 2, 0, 0x80]);
        // digitalSignature | keyEncipherment = 0b101 → reversed 0xa0, 5 unused bits.
        assert_eq!(key_usage_bits(0b101), vec![3, 2, 5, 0xa0]);
    }
}
