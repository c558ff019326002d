//! OpenID Connect ID tokens (`--oidc-*`, kube-apiserver's flags): the issuer's discovery
//! document and JWKS are fetched on first use, cached, and fetched again when a token names an
//! unknown `kid` (at most every 10 s). A token is accepted when its signature (one of
//! `--oidc-signing-algs`, default RS256), `iss`, `aud` (the client id), `exp`, `nbf` and the
//! required claims check out. The user name is `--oidc-username-claim` (default `sub`) with
//! `--oidc-username-prefix` (default `<issuer>#`, none for `email`, `-` for none); groups come
//! from `--oidc-groups-claim` with `--oidc-groups-prefix`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::{Refused, UserInfo};

const TIMEOUT: Duration = Duration::from_secs(10);
const REFETCH_EVERY: Duration = Duration::from_secs(10);

/// The flags.
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub issuer_url: String,
    pub client_id: String,
    pub username_claim: String,
    pub username_prefix: Option<String>,
    pub groups_claim: Option<String>,
    pub groups_prefix: String,
    /// `key=value` pairs every token must carry.
    pub required_claims: Vec<(String, String)>,
    pub ca_file: Option<PathBuf>,
    pub signing_algs: Vec<String>,
}

struct Key {
    kid: Option<String>,
    alg: Algorithm,
    key: DecodingKey,
}

pub struct Oidc {
    cfg: Config,
    algs: Vec<Algorithm>,
    client: reqwest::Client,
    keys: tokio::sync::Mutex<(Vec<Key>, Option<Instant>)>,
    last_error: Mutex<Option<String>>,
}

fn alg_of(name: &str) -> Option<Algorithm> {
    Some(match name {
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        _ => return None,
    })
}

impl Oidc {
    pub fn new(mut cfg: Config) -> Result<Oidc, String> {
        if !cfg.issuer_url.starts_with("https://") {
            return Err(format!(
                "--oidc-issuer-url must be an https URL, not {:?}",
                cfg.issuer_url
            ));
        }
        if cfg.client_id.is_empty() {
            return Err("--oidc-client-id is required with --oidc-issuer-url".into());
        }
        if cfg.username_claim.is_empty() {
            cfg.username_claim = "sub".into();
        }
        if cfg.signing_algs.is_empty() {
            cfg.signing_algs = vec!["RS256".into()];
        }
        let algs = cfg
            .signing_algs
            .iter()
            .map(|a| alg_of(a).ok_or_else(|| format!("unsupported --oidc-signing-algs {a}")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut b = reqwest::Client::builder().timeout(TIMEOUT).use_rustls_tls();
        if let Some(ca) = &cfg.ca_file {
            let pem = std::fs::read(ca).map_err(|e| format!("reading {}: {e}", ca.display()))?;
            b = b.tls_built_in_root_certs(false).add_root_certificate(
                reqwest::Certificate::from_pem(&pem).map_err(|e| format!("--oidc-ca-file: {e}"))?,
            );
        }
        Ok(Oidc {
            cfg,
            algs,
            client: b.build().map_err(|e| format!("OIDC client: {e}"))?,
            keys: tokio::sync::Mutex::new((Vec::new(), None)),
            last_error: Mutex::new(None),
        })
    }

    async fn get_json(&self, url: &str) -> Result<Value, String> {
        let r = self
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !r.status().is_success() {
            return Err(format!("{url}: {}", r.status()));
        }
        r.json().await.map_err(|e| format!("{url}: {e}"))
    }

    /// Discovery document, then the JWKS it names.
    async fn fetch_keys(&self) -> Result<Vec<Key>, String> {
        let issuer = self.cfg.issuer_url.trim_end_matches('/');
        let disco = self
            .get_json(&format!("{issuer}/.well-known/openid-configuration"))
            .await?;
        if disco.get("issuer").and_then(Value::as_str) != Some(self.cfg.issuer_url.as_str()) {
            return Err("the discovery document names another issuer".into());
        }
        let jwks_uri = disco
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or("the discovery document has no jwks_uri")?;
        let jwks = self.get_json(jwks_uri).await?;
        let mut out = Vec::new();
        for k in jwks
            .get("keys")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |f: &str| k.get(f).and_then(Value::as_str).unwrap_or("");
            if !s("use").is_empty() && s("use") != "sig" {
                continue;
            }
            let (key, default_alg) = match s("kty") {
                "RSA" => match DecodingKey::from_rsa_components(s("n"), s("e")) {
                    Ok(k) => (k, Algorithm::RS256),
                    Err(_) => continue,
                },
                "EC" => match DecodingKey::from_ec_components(s("x"), s("y")) {
                    Ok(k) => (
                        k,
                        if s("crv") == "P-384" {
                            Algorithm::ES384
                        } else {
                            Algorithm::ES256
                        },
                    ),
                    Err(_) => continue,
                },
                _ => continue,
            };
            let alg = alg_of(s("alg")).unwrap_or(default_alg);
            out.push(Key {
                kid: k.get("kid").and_then(Value::as_str).map(str::to_string),
                alg,
                key,
            });
        }
        Ok(out)
    }

    pub async fn authenticate(&self, token: &str) -> Option<Result<UserInfo, Refused>> {
        let refuse = |why: String| Some(Err(Refused(format!("OIDC: {why}"))));
        let header = jsonwebtoken::decode_header(token).ok()?;
        // Only tokens of our issuer are ours; peek at `iss` before any network round trip.
        let payload = token.split('.').nth(1)?;
        use base64::Engine;
        let claims: Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload.trim_end_matches('='))
                .ok()?,
        )
        .ok()?;
        if claims.get("iss").and_then(Value::as_str) != Some(self.cfg.issuer_url.as_str()) {
            return None;
        }
        if !self.algs.contains(&header.alg) {
            return refuse(format!("signing algorithm {:?} not accepted", header.alg));
        }
        let mut keys = self.keys.lock().await;
        let known = |keys: &[Key]| {
            keys.iter()
                .any(|k| header.kid.is_none() || k.kid == header.kid)
        };
        if !known(&keys.0) && keys.1.is_none_or(|t| t.elapsed() >= REFETCH_EVERY) {
            match self.fetch_keys().await {
                Ok(k) => *keys = (k, Some(Instant::now())),
                Err(e) => {
                    *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.clone());
                    keys.1 = Some(Instant::now());
                    return refuse(format!("issuer unavailable: {e}"));
                }
            }
        }
        let mut verified: Option<Value> = None;
        for k in keys
            .0
            .iter()
            .filter(|k| k.alg == header.alg && (header.kid.is_none() || k.kid == header.kid))
        {
            let mut v = Validation::new(k.alg);
            v.leeway = 0;
            v.validate_nbf = true;
            v.set_issuer(&[&self.cfg.issuer_url]);
            v.set_audience(&[&self.cfg.client_id]);
            match jsonwebtoken::decode::<Value>(token, &k.key, &v) {
                Ok(d) => {
                    verified = Some(d.claims);
                    break;
                }
                Err(e) if matches!(e.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature) => {
                    continue
                }
                Err(e) => return refuse(format!("{e}")),
            }
        }
        drop(keys);
        let Some(c) = verified else {
            return refuse("no key verifies the token".into());
        };
        for (k, want) in &self.cfg.required_claims {
            if c.get(k).and_then(Value::as_str) != Some(want.as_str()) {
                return refuse(format!("required claim {k} missing or wrong"));
            }
        }
        let claim = &self.cfg.username_claim;
        let Some(name) = c
            .get(claim)
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        else {
            return refuse(format!("no {claim} claim"));
        };
        if claim == "email" && c.get("email_verified").and_then(Value::as_bool) == Some(false) {
            return refuse("email not verified".into());
        }
        let prefix = match self.cfg.username_prefix.as_deref() {
            Some("-") => String::new(),
            Some(p) => p.to_string(),
            None if claim == "email" => String::new(),
            None => format!("{}#", self.cfg.issuer_url),
        };
        let mut groups = Vec::new();
        if let Some(gc) = &self.cfg.groups_claim {
            match c.get(gc) {
                Some(Value::String(g)) => groups.push(format!("{}{g}", self.cfg.groups_prefix)),
                Some(Value::Array(a)) => {
                    for g in a {
                        match g.as_str() {
                            Some(g) => groups.push(format!("{}{g}", self.cfg.groups_prefix)),
                            None => return refuse(format!("{gc} is not a list of strings")),
                        }
                    }
                }
                None | Some(Value::Null) => {}
                Some(_) => return refuse(format!("{gc} is not a list of strings")),
            }
        }
        Some(Ok(UserInfo {
            name: format!("{prefix}{name}"),
            uid: String::new(),
            groups,
            extra: BTreeMap::new(),
        }))
    }
}
