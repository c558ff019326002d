//! Service-account tokens: issuing bound tokens (the `serviceaccounts/token` TokenRequest
//! subresource) and verifying them on requests, as kube-apiserver's `--service-account-*`
//! flags describe. Tokens are JWTs (ES256 with the generated P-256 key, RS256 with an RSA key)
//! whose `kubernetes.io` claim names the namespace, ServiceAccount and optional bound Pod or
//! Secret; with `--service-account-lookup` each of them must still exist with the same uid.
//!
//! Keys: `--service-account-signing-key-file`, else `sa.key` in the data folder (generated once;
//! replicas of one cluster share it the way they share `ca.key`: copy it before first start).
//! `--service-account-key-file` adds verification keys (public keys, certificates or private
//! keys). Serves the OIDC discovery documents' content (issuer, JWKS).

use std::path::{Path, PathBuf};

use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{Refused, UserInfo};
use crate::registry::store::{meta_str, ReadAt, Scope, Store};

/// The data folder's generated signing key.
pub const KEY_FILE: &str = "sa.key";
/// kube's default issuer for `--service-account-issuer` in kubeadm-built clusters.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The flags.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// `--service-account-issuer` (repeatable; the first one issues).
    pub issuers: Vec<String>,
    /// `--api-audiences` (default: the issuers).
    pub audiences: Vec<String>,
    pub signing_key_file: Option<PathBuf>,
    pub key_files: Vec<PathBuf>,
    /// `--service-account-lookup`.
    pub lookup: bool,
    /// `--service-account-max-token-expiration` in seconds.
    pub max_expiration: Option<i64>,
}

struct VerifyKey {
    key: DecodingKey,
    alg: Algorithm,
    kid: String,
    jwk: Value,
}

/// Issues and verifies service-account tokens.
pub struct ServiceAccounts {
    issuers: Vec<String>,
    audiences: Vec<String>,
    signer: (EncodingKey, Algorithm, String),
    keys: Vec<VerifyKey>,
    lookup: bool,
    max_expiration: Option<i64>,
}

/// The private `kubernetes.io` claim.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KubeClaim {
    pub namespace: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod: Option<Ref>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<Ref>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<Ref>,
    pub serviceaccount: Ref,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Ref {
    pub name: String,
    pub uid: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    aud: Vec<String>,
    exp: i64,
    iat: i64,
    iss: String,
    jti: String,
    #[serde(rename = "kubernetes.io")]
    kube: KubeClaim,
    nbf: i64,
    sub: String,
}

/// What a TokenRequest asks for, already validated.
pub struct Grant {
    pub audiences: Vec<String>,
    pub expiration_seconds: i64,
    pub claim: KubeClaim,
}

/// Creates `sa.key` (P-256, PKCS#8 PEM, mode 0600) when absent.
pub fn ensure_key(data_dir: &Path) -> Result<PathBuf, String> {
    let path = data_dir.join(KEY_FILE);
    if path.exists() {
        return Ok(path);
    }
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|e| format!("generating the service-account key: {e}"))?;
    let tmp = data_dir.join(format!("{KEY_FILE}.tmp"));
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| format!("writing {}: {e}", tmp.display()))?;
        f.write_all(kp.serialize_pem().as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| format!("writing {}: {e}", tmp.display()))?;
    }
    std::fs::rename(&tmp, &path).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

fn kid_of(spki_der: &[u8]) -> String {
    B64.encode(ring::digest::digest(&ring::digest::SHA256, spki_der))
}

/// A verification key (and its JWK) from a SubjectPublicKeyInfo.
fn verify_key(spki_der: &[u8]) -> Result<VerifyKey, String> {
    use x509_parser::prelude::FromDer;
    use x509_parser::public_key::PublicKey;
    let (_, spki) = x509_parser::x509::SubjectPublicKeyInfo::from_der(spki_der)
        .map_err(|e| format!("not a public key: {e}"))?;
    let kid = kid_of(spki_der);
    match spki
        .parsed()
        .map_err(|e| format!("unsupported public key: {e}"))?
    {
        PublicKey::EC(point) => {
            let p = point.data();
            if p.len() != 65 || p[0] != 4 {
                return Err("only uncompressed P-256 EC keys are supported".into());
            }
            Ok(VerifyKey {
                key: DecodingKey::from_ec_der(p),
                alg: Algorithm::ES256,
                jwk: json!({"use": "sig", "kty": "EC", "kid": kid, "crv": "P-256", "alg": "ES256",
                            "x": B64.encode(&p[1..33]), "y": B64.encode(&p[33..65])}),
                kid,
            })
        }
        PublicKey::RSA(rsa) => {
            let strip = |b: &[u8]| -> Vec<u8> {
                let i = b.iter().position(|x| *x != 0).unwrap_or(b.len());
                b[i..].to_vec()
            };
            let (n, e) = (strip(rsa.modulus), strip(rsa.exponent));
            Ok(VerifyKey {
                key: DecodingKey::from_rsa_raw_components(&n, &e),
                alg: Algorithm::RS256,
                jwk: json!({"use": "sig", "kty": "RSA", "kid": kid, "alg": "RS256",
                            "n": B64.encode(&n), "e": B64.encode(&e)}),
                kid,
            })
        }
        _ => Err("unsupported public key type (use RSA or P-256)".into()),
    }
}

/// Every public key in a PEM file (public keys, certificates, or private keys).
fn public_keys(path: &Path) -> Result<Vec<VerifyKey>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut reader = std::io::BufReader::new(text.as_bytes());
    for item in rustls_pemfile::read_all(&mut reader) {
        let item = item.map_err(|e| format!("{}: {e}", path.display()))?;
        let spki = match item {
            rustls_pemfile::Item::SubjectPublicKeyInfo(k) => k.as_ref().to_vec(),
            rustls_pemfile::Item::X509Certificate(c) => {
                let (_, cert) = x509_parser::parse_x509_certificate(c.as_ref())
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                cert.public_key().raw.to_vec()
            }
            rustls_pemfile::Item::Pkcs8Key(_) => rcgen::KeyPair::from_pem(&text)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .public_key_der(),
            _ => continue,
        };
        out.push(verify_key(&spki).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    if out.is_empty() {
        return Err(format!("{}: no public key found", path.display()));
    }
    Ok(out)
}

impl ServiceAccounts {
    /// Loads the keys (generating `sa.key` in `data_dir` when no signing key is given).
    pub fn load(cfg: &Config, data_dir: &Path) -> Result<ServiceAccounts, String> {
        let signing_path = match &cfg.signing_key_file {
            Some(p) => p.clone(),
            None => ensure_key(data_dir)?,
        };
        let text = std::fs::read_to_string(&signing_path)
            .map_err(|e| format!("reading {}: {e}", signing_path.display()))?;
        let kp = rcgen::KeyPair::from_pem(&text)
            .map_err(|e| format!("{}: not a PKCS#8 private key: {e}", signing_path.display()))?;
        let spki = kp.public_key_der();
        let own = verify_key(&spki)?;
        let signer = match own.alg {
            Algorithm::ES256 => EncodingKey::from_ec_der(&kp.serialize_der()),
            _ => EncodingKey::from_rsa_pem(text.as_bytes())
                .map_err(|e| format!("{}: {e}", signing_path.display()))?,
        };
        let signer = (signer, own.alg, own.kid.clone());
        let mut keys = vec![own];
        for f in &cfg.key_files {
            for k in public_keys(f)? {
                if !keys.iter().any(|have| have.kid == k.kid) {
                    keys.push(k);
                }
            }
        }
        let issuers = if cfg.issuers.is_empty() {
            vec![DEFAULT_ISSUER.to_string()]
        } else {
            cfg.issuers.clone()
        };
        let audiences = if cfg.audiences.is_empty() {
            issuers.clone()
        } else {
            cfg.audiences.clone()
        };
        Ok(ServiceAccounts {
            issuers,
            audiences,
            signer,
            keys,
            lookup: cfg.lookup,
            max_expiration: cfg.max_expiration,
        })
    }

    pub fn issuer(&self) -> &str {
        &self.issuers[0]
    }

    /// The API server's own audiences (a TokenRequest without audiences gets these).
    pub fn api_audiences(&self) -> &[String] {
        &self.audiences
    }

    /// `--service-account-max-token-expiration`.
    pub fn max_expiration(&self) -> Option<i64> {
        self.max_expiration
    }

    /// Signs a token; returns it and its expiry (Unix seconds).
    pub fn issue(&self, grant: &Grant, now: i64) -> Result<(String, i64), String> {
        let exp = now + grant.expiration_seconds;
        let claims = Claims {
            aud: grant.audiences.clone(),
            exp,
            iat: now,
            iss: self.issuer().to_string(),
            jti: uuid::Uuid::new_v4().to_string(),
            sub: format!(
                "system:serviceaccount:{}:{}",
                grant.claim.namespace, grant.claim.serviceaccount.name
            ),
            kube: grant.claim.clone(),
            nbf: now,
        };
        let mut header = Header::new(self.signer.1);
        header.kid = Some(self.signer.2.clone());
        let token = jsonwebtoken::encode(&header, &claims, &self.signer.0)
            .map_err(|e| format!("signing the token: {e}"))?;
        Ok((token, exp))
    }

    /// Verifies a token (signature, issuer, audience, expiry) and, with lookup on, that the
    /// objects it names still exist with the same uid.
    pub async fn verify(
        &self,
        store: &Store,
        token: &str,
        audiences: &[String],
    ) -> Result<(UserInfo, Vec<String>), Refused> {
        let refuse = |why: &str| Refused(format!("service account token: {why}"));
        let header = jsonwebtoken::decode_header(token).map_err(|_| refuse("malformed"))?;
        if peek_issuer(token).as_deref() == Some(LEGACY_ISSUER) {
            return self.verify_legacy(store, token, &header).await;
        }
        let want: &[String] = if audiences.is_empty() {
            &self.audiences
        } else {
            audiences
        };
        let mut claims: Option<Claims> = None;
        for k in self
            .keys
            .iter()
            .filter(|k| k.alg == header.alg && header.kid.as_deref().is_none_or(|kid| kid == k.kid))
        {
            let mut v = Validation::new(k.alg);
            v.leeway = 0;
            v.set_issuer(&self.issuers);
            v.set_audience(want);
            v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
            match jsonwebtoken::decode::<Claims>(token, &k.key, &v) {
                Ok(d) => {
                    claims = Some(d.claims);
                    break;
                }
                Err(e) => {
                    use jsonwebtoken::errors::ErrorKind;
                    match e.kind() {
                        ErrorKind::InvalidSignature => continue,
                        ErrorKind::ExpiredSignature => return Err(refuse("expired")),
                        ErrorKind::ImmatureSignature => return Err(refuse("not yet valid")),
                        ErrorKind::InvalidAudience => return Err(refuse("wrong audience")),
                        ErrorKind::InvalidIssuer => return Err(refuse("wrong issuer")),
                        _ => return Err(refuse("invalid")),
                    }
                }
            }
        }
        let c = claims.ok_or_else(|| refuse("bad signature"))?;
        let k = &c.kube;
        if c.sub
            != format!(
                "system:serviceaccount:{}:{}",
                k.namespace, k.serviceaccount.name
            )
        {
            return Err(refuse("subject does not match"));
        }
        if self.lookup {
            let mut bound = vec![("serviceaccounts", &k.serviceaccount)];
            bound.extend(k.pod.as_ref().map(|p| ("pods", p)));
            bound.extend(k.secret.as_ref().map(|s| ("secrets", s)));
            for (resource, r) in bound {
                let info = store.registry().builtin("", "v1", resource);
                let scope = Scope {
                    info: &info,
                    namespace: Some(&k.namespace),
                };
                let obj = store
                    .get(scope, &r.name, ReadAt::Any)
                    .await
                    .map_err(|_| refuse("has been invalidated (object gone)"))?;
                if meta_str(&obj, "uid") != r.uid || !meta_str(&obj, "deletionTimestamp").is_empty()
                {
                    return Err(refuse("has been invalidated (object replaced or deleted)"));
                }
            }
        }
        let mut user = UserInfo {
            name: c.sub.clone(),
            uid: k.serviceaccount.uid.clone(),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{}", k.namespace),
            ],
            extra: Default::default(),
        };
        if let Some(p) = &k.pod {
            user.extra.insert(
                "authentication.kubernetes.io/pod-name".into(),
                vec![p.name.clone()],
            );
            user.extra.insert(
                "authentication.kubernetes.io/pod-uid".into(),
                vec![p.uid.clone()],
            );
        }
        if let Some(n) = &k.node {
            user.extra.insert(
                "authentication.kubernetes.io/node-name".into(),
                vec![n.name.clone()],
            );
            user.extra.insert(
                "authentication.kubernetes.io/node-uid".into(),
                vec![n.uid.clone()],
            );
        }
        user.extra.insert(
            "authentication.kubernetes.io/credential-id".into(),
            vec![format!("JTI={}", c.jti)],
        );
        let valid_for = want.iter().filter(|a| c.aud.contains(a)).cloned().collect();
        Ok((user, valid_for))
    }

    /// A legacy (Secret-based, non-expiring) token for the token controller to store in a
    /// `kubernetes.io/service-account-token` Secret.
    pub fn issue_legacy(
        &self,
        namespace: &str,
        secret: &str,
        account: &str,
        uid: &str,
    ) -> Result<String, String> {
        let claims = json!({
            "iss": LEGACY_ISSUER,
            "kubernetes.io/serviceaccount/namespace": namespace,
            "kubernetes.io/serviceaccount/secret.name": secret,
            "kubernetes.io/serviceaccount/service-account.name": account,
            "kubernetes.io/serviceaccount/service-account.uid": uid,
            "sub": format!("system:serviceaccount:{namespace}:{account}"),
        });
        let mut header = Header::new(self.signer.1);
        header.kid = Some(self.signer.2.clone());
        jsonwebtoken::encode(&header, &claims, &self.signer.0)
            .map_err(|e| format!("signing the token: {e}"))
    }

    /// Legacy tokens: signature, then (always, as kube does for them) the Secret must still
    /// hold exactly this token and the ServiceAccount must exist with the uid it names.
    async fn verify_legacy(
        &self,
        store: &Store,
        token: &str,
        header: &Header,
    ) -> Result<(UserInfo, Vec<String>), Refused> {
        let refuse = |why: &str| Refused(format!("legacy service account token: {why}"));
        let mut claims: Option<Value> = None;
        for k in self.keys.iter().filter(|k| k.alg == header.alg) {
            let mut v = Validation::new(k.alg);
            v.validate_exp = false;
            v.validate_aud = false;
            v.set_required_spec_claims(&["iss", "sub"]);
            v.set_issuer(&[LEGACY_ISSUER]);
            if let Ok(d) = jsonwebtoken::decode::<Value>(token, &k.key, &v) {
                claims = Some(d.claims);
                break;
            }
        }
        let c = claims.ok_or_else(|| refuse("bad signature"))?;
        let get = |k: &str| {
            c.get(format!("kubernetes.io/serviceaccount/{k}").as_str())
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (ns, secret, account, uid) = (
            get("namespace"),
            get("secret.name"),
            get("service-account.name"),
            get("service-account.uid"),
        );
        if c.get("sub").and_then(Value::as_str)
            != Some(format!("system:serviceaccount:{ns}:{account}").as_str())
        {
            return Err(refuse("subject does not match"));
        }
        let lookup = |resource: &'static str, name: String| {
            let ns = ns.clone();
            async move {
                let info = store.registry().builtin("", "v1", resource);
                store
                    .get(
                        Scope {
                            info: &info,
                            namespace: Some(&ns),
                        },
                        &name,
                        ReadAt::Any,
                    )
                    .await
                    .ok()
            }
        };
        let stored = lookup("secrets", secret)
            .await
            .ok_or_else(|| refuse("its Secret is gone"))?;
        let in_secret = stored
            .pointer("/data/token")
            .and_then(Value::as_str)
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
        if in_secret.as_deref() != Some(token.as_bytes())
            || !meta_str(&stored, "deletionTimestamp").is_empty()
        {
            return Err(refuse("its Secret no longer holds it"));
        }
        let sa = lookup("serviceaccounts", account.clone())
            .await
            .ok_or_else(|| refuse("its ServiceAccount is gone"))?;
        if meta_str(&sa, "uid") != uid {
            return Err(refuse("its ServiceAccount was replaced"));
        }
        Ok((
            UserInfo {
                name: format!("system:serviceaccount:{ns}:{account}"),
                uid,
                groups: vec![
                    "system:serviceaccounts".into(),
                    format!("system:serviceaccounts:{ns}"),
                ],
                extra: Default::default(),
            },
            Vec::new(),
        ))
    }

    /// `/.well-known/openid-configuration`.
    pub fn openid_configuration(&self) -> Value {
        let mut algs: Vec<&str> = self
            .keys
            .iter()
            .map(|k| match k.alg {
                Algorithm::ES256 => "ES256",
                _ => "RS256",
            })
            .collect();
        algs.sort();
        algs.dedup();
        json!({
            "issuer": self.issuer(),
            "jwks_uri": format!("{}/openid/v1/jwks", self.issuer().trim_end_matches('/')),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": algs,
        })
    }

    /// `/openid/v1/jwks`.
    pub fn jwks(&self) -> Value {
        json!({"keys": self.keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})
    }
}

/// The issuer of legacy, Secret-based tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";

/// A JWT's `iss` without verifying anything (to pick the verification path).
fn peek_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let raw = B64.decode(payload.trim_end_matches('=')).ok()?;
    let v: Value = serde_json::from_slice(&raw).ok()?;
    v.get("iss").and_then(Value::as_str).map(str::to_string)
}

/// A JWT has three base64url parts.
pub fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(ns: &str, name: &str, secs: i64) -> Grant {
        Grant {
            audiences: vec![DEFAULT_ISSUER.into()],
            expiration_seconds: secs,
            claim: KubeClaim {
                namespace: ns.into(),
                serviceaccount: Ref {
                    name: name.into(),
                    uid: "u1".into(),
                },
                ..Default::default()
            },
        }
    }

    #[test]
    fn generated_key_signs_and_publishes() {
        let dir = tempfile_dir();
        let sa = ServiceAccounts::load(&Config::default(), &dir).unwrap();
        assert!(dir.join(KEY_FILE).exists());
        let (token, exp) = sa.issue(&grant("default", "builder", 600), 1_000).unwrap();
        assert_eq!(exp, 1_600);
        assert!(looks_like_jwt(&token));
        let jwks = sa.jwks();
        assert_eq!(jwks["keys"][0]["kty"], "EC");
        assert_eq!(jwks["keys"][0]["kid"].as_str().unwrap().len(), 43);
        assert_eq!(sa.openid_configuration()["issuer"], DEFAULT_ISSUER);
        // A second load reuses the key.
        let again = ServiceAccounts::load(&Config::default(), &dir).unwrap();
        assert_eq!(again.jwks(), jwks);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("rafter-sa-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
