//! Encryption at rest (`--encryption-provider-config`, kube's `EncryptionConfiguration`
//! apiserver.config.k8s.io/v1): the values of the resources a rule names are sealed before
//! they are proposed, so RocksDB, Raft log entries, snapshots and backups hold ciphertext.
//!
//! The first provider of a resource's rule encrypts, with its first key; every provider and
//! key of the rule may decrypt, chosen by the value's prefix as kube writes it
//! (`k8s:enc:<provider>:v1:<key name>:`, `k8s:enc:kms:v2:<provider name>:`); values without
//! a prefix are plaintext, readable only when the rule lists `identity`. Providers:
//! `identity`, `aesgcm` (16-, 24- or 32-byte keys, the storage key as authenticated data),
//! `aescbc` (16-, 24- or 32-byte keys, PKCS#7) and `secretbox` (XSalsa20-Poly1305, 32-byte
//! keys), byte for byte kube's layouts ([`ciphers`]), and `kms` with `apiVersion: v2`:
//! envelope encryption by a KMS v2 plugin on a Unix socket, a seed per plugin key ID and a
//! key derived per value, as kube 1.33 ([`kms`]). A value no provider can open is an error
//! naming why, never garbage; a value that cannot be sealed (a KMS plugin not ready) is an
//! error of the write, never stored in the clear.
//!
//! Key rotation as kube documents it works: a key added second reads, moved first writes,
//! and a value not written by the first key is *stale* ([`stale`]), so a no-op update (GET
//! and PUT back) still rewrites it with the current key; a `kms` value is stale too when its
//! key ID is not the plugin's current one.
//!
//! The file is validated as kube validates it, with its texts ([`config`]); a bad file does
//! not load. Does not know: HTTP, which resources exist (rules match the key's group and
//! resource).

mod ciphers;
mod config;
pub mod kms;

use std::sync::Arc;

use arc_swap::ArcSwapOption;

use ciphers::{Cipher, Kind};

/// A value transformer could not open a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One key of a keyed provider.
struct NamedKey {
    /// `k8s:enc:<provider>:v1:<name>:`.
    prefix: Vec<u8>,
    name: String,
    cipher: Cipher,
}

enum Provider {
    Identity,
    Keyed { kind: Kind, keys: Vec<NamedKey> },
    Kms(Box<kms::Kms>),
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

/// How many times a provider (a KMS plugin) answered again after failing.
static RECOVERIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A count that moves whenever a provider that could not seal or open values (a KMS plugin
/// down) works again: the watch cache then reloads values it had to leave out.
pub fn recoveries() -> u64 {
    RECOVERIES.load(std::sync::atomic::Ordering::SeqCst)
}

fn note_recovered() {
    RECOVERIES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

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
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "error opening encryption provider configuration file {:?}: {e}",
                path.display().to_string()
            )
        })?;
        Encryption::parse(&text).map_err(|e| {
            format!(
                "error while parsing encryption provider configuration file {:?}: {e}",
                path.display().to_string()
            )
        })
    }

    /// Parses and validates the text of an `EncryptionConfiguration`.
    pub fn parse(text: &str) -> Result<Encryption, String> {
        Ok(Encryption {
            rules: config::parse(text)?,
        })
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

    fn seal(&self, key: &[u8], plain: Vec<u8>) -> Result<Vec<u8>, Error> {
        match self.rule(key).and_then(|r| r.providers.first()) {
            Some(Provider::Keyed { kind, keys }) => {
                let Some(k) = keys.first() else {
                    return Ok(plain);
                };
                // No randomness: fail rather than reuse a nonce or store in the clear.
                let sealed = k.cipher.seal(key, &plain).ok_or_else(|| {
                    Error(format!(
                        "failed to encrypt the value with key {:?} of the {} provider: no randomness available",
                        k.name,
                        kind.name()
                    ))
                })?;
                let mut out = k.prefix.clone();
                out.extend_from_slice(&sealed);
                Ok(out)
            }
            Some(Provider::Kms(k)) => k.seal(key, &plain).map_err(|why| {
                Error(format!(
                    "failed to encrypt the value with the kms provider {:?}: {why}",
                    k.name()
                ))
            }),
            _ => Ok(plain),
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
            if let Provider::Kms(k) = p {
                if stored.starts_with(k.prefix()) {
                    return k.open(key, stored).map(Some).map_err(|why| {
                        Error(format!(
                            "failed to decrypt the value with the kms provider {:?}: {why}",
                            k.name()
                        ))
                    });
                }
                continue;
            }
            let Provider::Keyed { kind, keys } = p else {
                continue;
            };
            if !stored.starts_with(kind.prefix().as_bytes()) {
                continue;
            }
            let Some(k) = keys.iter().find(|k| stored.starts_with(&k.prefix)) else {
                return Err(Error(kind.no_key_error().into()));
            };
            return k
                .cipher
                .open(key, &stored[k.prefix.len()..])
                .map(Some)
                .map_err(|why| {
                    Error(format!(
                        "failed to decrypt the value with key {:?} of the {} provider (wrong key or corrupt data): {why}",
                        k.name,
                        kind.name()
                    ))
                });
        }
        Err(Error(
            "no matching prefix found: the key that encrypted the value is not configured".into(),
        ))
    }

    fn stale(&self, key: &[u8], stored: &[u8]) -> bool {
        match self.rule(key).and_then(|r| r.providers.first()) {
            Some(Provider::Keyed { keys, .. }) => {
                keys.first().is_none_or(|k| !stored.starts_with(&k.prefix))
            }
            Some(Provider::Kms(k)) => !stored.starts_with(k.prefix()) || k.stale(stored),
            // Identity writes (or nothing is configured): stale when sealed.
            _ => stored.starts_with(PREFIX),
        }
    }
}

/// The bytes to store for `plain` at `key`, or why it cannot be sealed (the write fails).
pub fn seal(key: &[u8], plain: Vec<u8>) -> Result<Vec<u8>, Error> {
    match &*GLOBAL.load() {
        Some(e) => e.seal(key, plain),
        None => Ok(plain),
    }
}

/// Whether a stored value is not what the current configuration would write (another key
/// or provider sealed it): an update must rewrite it even when the object is unchanged.
pub fn stale(key: &[u8], stored: &[u8]) -> bool {
    match &*GLOBAL.load() {
        Some(e) => e.stale(key, stored),
        None => stored.starts_with(PREFIX),
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

    const K1: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    const K2: &str = "OTEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

    fn cfg(providers: &str) -> Encryption {
        Encryption::parse(&format!(
            "apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets, '*.example.com']
  providers:
{providers}"
        ))
        .unwrap()
    }

    fn keyed(kind: &str, keys: &[(&str, &str)]) -> String {
        let mut s = format!("  - {kind}:\n      keys:\n");
        for (n, k) in keys {
            s.push_str(&format!("      - name: {n}\n        secret: {k}\n"));
        }
        s
    }

    const KEY: &[u8] = b"/core/secrets/ns/s";

    #[test]
    fn seals_named_resources_and_opens_them() {
        let e = cfg(&(keyed("aesgcm", &[("k1", K1)]) + "  - identity: {}\n"));
        let sealed = e.seal(KEY, b"{\"data\":1}".to_vec()).unwrap();
        assert!(sealed.starts_with(b"k8s:enc:aesgcm:v1:k1:"));
        assert_eq!(e.open(KEY, &sealed).unwrap().unwrap(), b"{\"data\":1}");
        // Bound to its key, and plaintext of other resources untouched.
        assert!(e.open(b"/core/secrets/ns/other", &sealed).is_err());
        let cm = e.seal(b"/core/configmaps/ns/c", b"{}".to_vec()).unwrap();
        assert_eq!(cm, b"{}");
        assert!(e
            .seal(b"/example.com/widgets/ns/w", b"{}".to_vec())
            .unwrap()
            .starts_with(PREFIX));
        // Plaintext secrets (written before) still read through identity.
        assert_eq!(e.open(KEY, b"{}").unwrap(), None);
        // Another key of the same name cannot open it.
        let other = cfg(&keyed("aesgcm", &[("k1", K2)]));
        let msg = other.open(KEY, &sealed).unwrap_err().0;
        assert!(msg.contains("failed to decrypt"), "{msg}");
        assert!(msg.contains("wrong key"), "{msg}");
        // Without identity, plaintext is refused.
        assert!(other.open(KEY, b"{}").is_err());
    }

    #[test]
    fn each_provider_writes_its_prefix_and_reads_back() {
        for kind in ["aesgcm", "aescbc", "secretbox"] {
            let e = cfg(&keyed(kind, &[("key1", K1)]));
            let sealed = e.seal(KEY, b"{\"data\":\"hunter2\"}".to_vec()).unwrap();
            let prefix = format!("k8s:enc:{kind}:v1:key1:");
            assert!(sealed.starts_with(prefix.as_bytes()), "{kind}");
            assert!(!sealed.windows(7).any(|w| w == b"hunter2"), "{kind}");
            assert_eq!(
                e.open(KEY, &sealed).unwrap().unwrap(),
                b"{\"data\":\"hunter2\"}",
                "{kind}"
            );
            assert!(!e.stale(KEY, &sealed));
            // A wrong key is an error naming the decryption, never garbage (CBC has no
            // authentication, but a wrong key almost never leaves valid padding; several
            // values make the test deterministic enough to need one success only).
            let wrong = cfg(&keyed(kind, &[("key1", K2)]));
            let failures = (0..8)
                .filter(|_| {
                    let sealed = e.seal(KEY, b"{\"data\":\"hunter2\"}".to_vec()).unwrap();
                    match wrong.open(KEY, &sealed) {
                        Err(err) => err.0.contains("failed to decrypt"),
                        Ok(plain) => plain.as_deref() != Some(&b"{\"data\":\"hunter2\"}"[..]),
                    }
                })
                .count();
            assert_eq!(failures, 8, "{kind}");
            assert!(wrong
                .open(KEY, &sealed)
                .err()
                .is_none_or(|e| !e.0.contains("hunter2")));
        }
    }

    /// kube's documented rotation: key2 added second (reads), moved first (writes; values of
    /// key1 are stale until rewritten), key1 removed.
    #[test]
    fn keys_rotate_as_kube_documents() {
        let step1 = cfg(&keyed("aescbc", &[("key1", K1)]));
        let step2 = cfg(&keyed("aescbc", &[("key1", K1), ("key2", K2)]));
        let step3 = cfg(&keyed("aescbc", &[("key2", K2), ("key1", K1)]));
        let step4 = cfg(&keyed("aescbc", &[("key2", K2)]));
        let old = step1.seal(KEY, b"{}".to_vec()).unwrap();
        assert!(!step2.stale(KEY, &old));
        assert_eq!(step2.open(KEY, &old).unwrap().unwrap(), b"{}");
        assert!(step2
            .seal(KEY, b"{}".to_vec())
            .unwrap()
            .starts_with(b"k8s:enc:aescbc:v1:key1:"));
        assert!(step3.stale(KEY, &old));
        assert_eq!(step3.open(KEY, &old).unwrap().unwrap(), b"{}");
        let new = step3.seal(KEY, b"{}".to_vec()).unwrap();
        assert!(new.starts_with(b"k8s:enc:aescbc:v1:key2:"));
        assert!(!step3.stale(KEY, &new));
        assert_eq!(step4.open(KEY, &new).unwrap().unwrap(), b"{}");
        assert_eq!(
            step4.open(KEY, &old).unwrap_err().0,
            "no matching key was found for the provided AES transformer"
        );
        // Provider changes: identity first makes sealed values stale, a new provider
        // first makes plaintext stale, and a provider no longer listed does not read.
        let plain = cfg(&("  - identity: {}\n".to_string() + &keyed("aescbc", &[("key2", K2)])));
        assert!(plain.stale(KEY, &new));
        assert!(!plain.stale(KEY, b"{}"));
        assert!(step4.stale(KEY, b"{}"));
        let sb = cfg(&keyed("secretbox", &[("key2", K2)]));
        assert!(sb.stale(KEY, &new));
        assert!(sb
            .open(KEY, &new)
            .unwrap_err()
            .0
            .contains("no matching prefix found"));
        // Not configured for the resource: plaintext is current, sealed is stale.
        assert!(!step4.stale(b"/core/configmaps/ns/c", b"{}"));
    }
}
