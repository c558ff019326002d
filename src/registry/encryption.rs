//! Encryption at rest (`--encryption-provider-config`, kube's `EncryptionConfiguration`
//! apiserver.config.k8s.io/v1): the values of the resources a rule names are sealed before
//! they are proposed, so RocksDB, Raft log entries, snapshots and backups hold ciphertext.
//!
//! The first provider of a resource's rule encrypts; every provider of the rule may decrypt,
//! chosen by the value's prefix as kube writes it (`k8s:enc:aesgcm:v1:<key name>:`); values
//! without a prefix are plaintext, readable only when the rule lists `identity`. Providers:
//! `identity` and `aesgcm` (AES-GCM with a 16- or 32-byte key, a random 12-byte nonce and
//! the storage key as authenticated data). A value no provider can open is an error, never
//! garbage.
//!
//! Does not know: HTTP, which resources exist (rules match the key's group and resource),
//! `aescbc`, `secretbox` and `kms` (refused when configured).

use std::sync::Arc;

use arc_swap::ArcSwapOption;

use base64::Engine;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use serde::Deserialize;

/// A value transformer could not open a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileConfig {
    kind: Option<String>,
    #[serde(default)]
    resources: Vec<FileRule>,
}

#[derive(Deserialize)]
struct FileRule {
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    providers: Vec<serde_yaml::Value>,
}

#[derive(Deserialize)]
struct FileKeys {
    #[serde(default)]
    keys: Vec<FileKey>,
}

#[derive(Deserialize)]
struct FileKey {
    name: String,
    secret: String,
}

enum Provider {
    Identity,
    AesGcm(Vec<(String, LessSafeKey)>),
}

struct Rule {
    /// `secrets`, `deployments.apps`, `*.apps`, `*.*`.
    resources: Vec<String>,
    providers: Vec<Provider>,
}

/// The loaded configuration.
pub struct Encryption {
    rules: Vec<Rule>,
}

const PREFIX: &[u8] = b"k8s:enc:";

/// The configuration of this process (readers never lock; a reload swaps it).
static GLOBAL: ArcSwapOption<Encryption> = ArcSwapOption::const_empty();

/// Installs (or, on reload, replaces) the configuration of this process.
pub fn install(e: Encryption) {
    GLOBAL.store(Some(Arc::new(e)));
}

/// Reloads `path` whenever its contents change (`--encryption-provider-config-automatic-reload`),
/// checking every `every`; a file that does not load keeps the running configuration.
pub async fn reload_on_change(path: std::path::PathBuf, every: std::time::Duration) {
    let mut last = std::fs::read(&path).ok();
    loop {
        tokio::time::sleep(every).await;
        let now = std::fs::read(&path).ok();
        if now.is_none() || now == last {
            continue;
        }
        last = now;
        match Encryption::load(&path) {
            Ok(e) => {
                install(e);
                tracing::info!("encryption config {} reloaded", path.display());
            }
            Err(e) => tracing::error!("encryption config not reloaded: {e}"),
        }
    }
}

impl Encryption {
    /// Loads an `EncryptionConfiguration` file. Secrets in it never reach error texts.
    pub fn load(path: &std::path::Path) -> Result<Encryption, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        Encryption::parse(&text)
    }

    pub fn parse(text: &str) -> Result<Encryption, String> {
        let cfg: FileConfig =
            serde_yaml::from_str(text).map_err(|e| format!("invalid encryption config: {e}"))?;
        if cfg.kind.as_deref() != Some("EncryptionConfiguration") {
            return Err("encryption config: kind must be EncryptionConfiguration".into());
        }
        let mut rules = Vec::new();
        for (i, r) in cfg.resources.into_iter().enumerate() {
            if r.resources.is_empty() || r.providers.is_empty() {
                return Err(format!(
                    "encryption config: resources[{i}] needs resources and providers"
                ));
            }
            let mut providers = Vec::new();
            for p in r.providers {
                providers.push(provider(p, i)?);
            }
            rules.push(Rule {
                resources: r.resources,
                providers,
            });
        }
        Ok(Encryption { rules })
    }

    /// The rule of the resource a storage key belongs to (`/<group>/<resource>/...`, the core
    /// group written `core`); the first matching rule wins, as in kube.
    fn rule(&self, key: &[u8]) -> Option<&Rule> {
        let k = std::str::from_utf8(key).ok()?;
        let mut parts = k.trim_start_matches('/').split('/');
        let group = parts.next()?;
        let resource = parts.next()?;
        let group = if group == "core" { "" } else { group };
        let full = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        self.rules.iter().find(|r| {
            r.resources.iter().any(|m| {
                m == &full
                    || m == "*.*"
                    || (group.is_empty() && m == "*.")
                    || m.strip_prefix("*.")
                        .is_some_and(|g| !g.is_empty() && g == group)
            })
        })
    }

    fn seal(&self, key: &[u8], plain: Vec<u8>) -> Vec<u8> {
        let Some(rule) = self.rule(key) else {
            return plain;
        };
        match rule.providers.first() {
            Some(Provider::AesGcm(keys)) => match keys.first() {
                Some((name, k)) => seal_gcm(name, k, key, plain),
                None => plain,
            },
            _ => plain,
        }
    }

    fn open(&self, key: &[u8], stored: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let rule = self.rule(key);
        if !stored.starts_with(PREFIX) {
            return match rule {
                Some(r) if !r.providers.iter().any(|p| matches!(p, Provider::Identity)) => Err(
                    Error("the value is not encrypted and no identity provider reads it".into()),
                ),
                _ => Ok(None),
            };
        }
        let Some(rule) = rule else {
            return Err(Error(
                "the value is encrypted but no encryption is configured for its resource".into(),
            ));
        };
        for p in &rule.providers {
            let Provider::AesGcm(keys) = p else { continue };
            for (name, k) in keys {
                let prefix = format!("k8s:enc:aesgcm:v1:{name}:");
                if let Some(rest) = stored.strip_prefix(prefix.as_bytes()) {
                    return open_gcm(k, key, rest).map(Some);
                }
            }
        }
        Err(Error(
            "no matching prefix found: the key that encrypted the value is not configured".into(),
        ))
    }
}

fn provider(p: serde_yaml::Value, i: usize) -> Result<Provider, String> {
    let serde_yaml::Value::Mapping(m) = p else {
        return Err(format!(
            "encryption config: resources[{i}]: a provider must be an object"
        ));
    };
    let Some((name, body)) = m.into_iter().next() else {
        return Err(format!(
            "encryption config: resources[{i}]: an empty provider"
        ));
    };
    match name.as_str().unwrap_or("") {
        "identity" => Ok(Provider::Identity),
        "aesgcm" => {
            let keys: FileKeys = serde_yaml::from_value(body)
                .map_err(|e| format!("encryption config: resources[{i}].aesgcm: {e}"))?;
            if keys.keys.is_empty() {
                return Err(format!("encryption config: resources[{i}].aesgcm: no keys"));
            }
            let mut out = Vec::new();
            for k in keys.keys {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(k.secret.trim())
                    .map_err(|_| format!("encryption config: key {:?} is not base64", k.name))?;
                let alg = match bytes.len() {
                    16 => &AES_128_GCM,
                    32 => &AES_256_GCM,
                    n => {
                        return Err(format!(
                            "encryption config: key {:?} has {n} bytes; aesgcm keys here have 16 or 32",
                            k.name
                        ))
                    }
                };
                let unbound = UnboundKey::new(alg, &bytes)
                    .map_err(|_| format!("encryption config: key {:?} is unusable", k.name))?;
                out.push((k.name, LessSafeKey::new(unbound)));
            }
            Ok(Provider::AesGcm(out))
        }
        other => Err(format!(
            "encryption config: resources[{i}]: provider {other:?} is not supported (identity, aesgcm)"
        )),
    }
}

fn seal_gcm(name: &str, k: &LessSafeKey, storage_key: &[u8], mut data: Vec<u8>) -> Vec<u8> {
    let mut nonce = [0u8; NONCE_LEN];
    if SystemRandom::new().fill(&mut nonce).is_err() {
        // No randomness: store in the clear rather than reuse a nonce.
        return data;
    }
    if k.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(storage_key),
        &mut data,
    )
    .is_err()
    {
        return data;
    }
    let mut out = format!("k8s:enc:aesgcm:v1:{name}:").into_bytes();
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&data);
    out
}

fn open_gcm(k: &LessSafeKey, storage_key: &[u8], rest: &[u8]) -> Result<Vec<u8>, Error> {
    if rest.len() < NONCE_LEN {
        return Err(Error("the encrypted value is too short".into()));
    }
    let (nonce, sealed) = rest.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce)
        .map_err(|_| Error("the encrypted value has a bad nonce".into()))?;
    let mut buf = sealed.to_vec();
    let plain = k
        .open_in_place(nonce, Aad::from(storage_key), &mut buf)
        .map_err(|_| {
            Error(
                "the value does not decrypt with the configured key (wrong key or corrupt data)"
                    .into(),
            )
        })?;
    Ok(plain.to_vec())
}

/// The bytes to store for `plain` at `key`.
pub fn seal(key: &[u8], plain: Vec<u8>) -> Vec<u8> {
    match &*GLOBAL.load() {
        Some(e) => e.seal(key, plain),
        None => plain,
    }
}

/// The plaintext of a stored value (`None`: it was stored in the clear, use it as it is).
pub fn open(key: &[u8], stored: &[u8]) -> Result<Option<Vec<u8>>, Error> {
    match &*GLOBAL.load() {
        Some(e) => e.open(key, stored),
        None if stored.starts_with(PREFIX) => Err(Error(
            "the value is encrypted but no --encryption-provider-config is given".into(),
        )),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: &str = "apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets, '*.example.com']
  providers:
  - aesgcm:
      keys:
      - name: k1
        secret: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=
  - identity: {}
";

    #[test]
    fn seals_named_resources_and_opens_them() {
        let e = Encryption::parse(CFG).unwrap();
        let key = b"/core/secrets/ns/s";
        let sealed = e.seal(key, b"{\"data\":1}".to_vec());
        assert!(sealed.starts_with(b"k8s:enc:aesgcm:v1:k1:"));
        assert_eq!(e.open(key, &sealed).unwrap().unwrap(), b"{\"data\":1}");
        // Bound to its key, and plaintext of other resources untouched.
        assert!(e.open(b"/core/secrets/ns/other", &sealed).is_err());
        let cm = e.seal(b"/core/configmaps/ns/c", b"{}".to_vec());
        assert_eq!(cm, b"{}");
        assert!(e
            .seal(b"/example.com/widgets/ns/w", b"{}".to_vec())
            .starts_with(PREFIX));
        // Plaintext secrets (written before) still read through identity.
        assert_eq!(e.open(key, b"{}").unwrap(), None);
        // Another key cannot open it.
        let other = Encryption::parse(&CFG.replace("MDEy", "OTEy")).unwrap();
        assert!(other
            .open(key, &sealed)
            .unwrap_err()
            .0
            .contains("wrong key"));
        assert!(Encryption::parse(&CFG.replace("aesgcm", "secretbox")).is_err());
    }
}
