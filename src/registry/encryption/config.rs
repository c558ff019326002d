//! Parsing and validation of an `EncryptionConfiguration` file (apiserver.config.k8s.io/v1)
//! with kube's field paths and texts (`resources[0].providers[1].aescbc.keys[0].secret:
//! Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of
//! [16 24 32]`); every error is reported, joined as kube's aggregate (`[a, b]`). Secrets never
//! reach an error text: key material is `REDACTED` and quoted values of YAML errors too.
//!
//! Beyond kube: duplicate key names within a provider are refused (kube would silently use
//! the first), and `kms` providers are refused (not implemented here).

use base64::Engine;
use serde::Deserialize;

use super::ciphers::{Cipher, Kind};
use super::{NamedKey, Provider, Rule};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileConfig {
    kind: Option<String>,
    api_version: Option<String>,
    #[serde(default)]
    resources: Vec<FileRule>,
}

#[derive(Deserialize)]
struct FileRule {
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    providers: Vec<FileProvider>,
}

#[derive(Deserialize, Default)]
struct FileProvider {
    aesgcm: Option<FileKeys>,
    aescbc: Option<FileKeys>,
    secretbox: Option<FileKeys>,
    identity: Option<serde_yaml::Value>,
    kms: Option<FileKms>,
}

#[derive(Deserialize, Default)]
struct FileKeys {
    #[serde(default)]
    keys: Vec<FileKey>,
}

#[derive(Deserialize)]
struct FileKey {
    #[serde(default)]
    name: String,
    #[serde(default)]
    secret: String,
}

#[derive(Deserialize, Default)]
struct FileKms {
    #[serde(default)]
    name: String,
}

/// The rules of `text`, or every problem found, as kube words them.
pub fn parse(text: &str) -> Result<Vec<Rule>, String> {
    let cfg: FileConfig = serde_yaml::from_str(text).map_err(|e| redact_quoted(&e.to_string()))?;
    if cfg.kind.as_deref() != Some("EncryptionConfiguration") {
        return Err(format!(
            "no kind {:?} is registered for version {:?}: kind must be EncryptionConfiguration",
            cfg.kind.unwrap_or_default(),
            cfg.api_version.unwrap_or_default()
        ));
    }
    if let Some(v) = cfg.api_version.as_deref() {
        if v != "apiserver.config.k8s.io/v1" {
            return Err(format!(
                "apiVersion {v:?} is not served: use apiserver.config.k8s.io/v1"
            ));
        }
    }
    let mut errs = Vec::new();
    if cfg.resources.is_empty() {
        errs.push("resources: Required value: at least one resources is required".to_string());
    }
    let mut rules = Vec::new();
    for (i, r) in cfg.resources.into_iter().enumerate() {
        let rp = format!("resources[{i}].resources");
        let pp = format!("resources[{i}].providers");
        if r.resources.is_empty() {
            errs.push(format!(
                "{rp}: Required value: at least one {rp} is required"
            ));
        }
        for (j, res) in r.resources.iter().enumerate() {
            if res.to_lowercase() != *res {
                errs.push(format!(
                    "{rp}[{j}]: Invalid value: {res:?}: resource name should not contain capital letters"
                ));
            } else if res == "*" {
                errs.push(format!("{rp}[{j}]: Invalid value: \"*\": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"));
            }
        }
        if r.providers.is_empty() {
            errs.push(format!(
                "{pp}: Required value: at least one {pp} is required"
            ));
        }
        let mut providers = Vec::new();
        for (j, p) in r.providers.into_iter().enumerate() {
            if let Some(p) = provider(p, &format!("{pp}[{j}]"), &mut errs) {
                providers.push(p);
            }
        }
        rules.push(Rule {
            resources: r.resources,
            providers,
        });
    }
    match errs.len() {
        0 => Ok(rules),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

fn provider(p: FileProvider, path: &str, errs: &mut Vec<String>) -> Option<Provider> {
    let set = [
        p.kms.is_some(),
        p.aesgcm.is_some(),
        p.aescbc.is_some(),
        p.secretbox.is_some(),
        p.identity.is_some(),
    ]
    .iter()
    .filter(|s| **s)
    .count();
    if set == 0 {
        errs.push(format!("{path}: Invalid value: \"REDACTED\": provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"));
        return None;
    }
    if set > 1 {
        errs.push(format!("{path}: Invalid value: \"REDACTED\": more than one provider specified in a single element, should split into different list elements"));
        return None;
    }
    if let Some(kms) = p.kms {
        errs.push(format!(
            "{path}.kms: Invalid value: {:?}: kms providers are not supported by this server (use aescbc, aesgcm or secretbox)",
            kms.name
        ));
        return None;
    }
    if p.identity.is_some() {
        return Some(Provider::Identity);
    }
    let (kind, keys) = match (p.aesgcm, p.aescbc, p.secretbox) {
        (Some(k), _, _) => (Kind::AesGcm, k),
        (_, Some(k), _) => (Kind::AesCbc, k),
        (_, _, Some(k)) => (Kind::Secretbox, k),
        _ => return None,
    };
    let kp = format!("{path}.{}.keys", kind.name());
    if keys.keys.is_empty() {
        errs.push(format!(
            "{kp}: Required value: at least one keys is required"
        ));
        return None;
    }
    let before = errs.len();
    let mut out: Vec<NamedKey> = Vec::new();
    for (n, k) in keys.keys.into_iter().enumerate() {
        let at = format!("{kp}[{n}]");
        if k.name.is_empty() {
            errs.push(format!(
                "{at}.name: Required value: name is a mandatory field for a key"
            ));
        } else if out.iter().any(|o| o.name == k.name) {
            errs.push(format!("{at}.name: Duplicate value: {:?}", k.name));
        }
        if k.secret.is_empty() {
            errs.push(format!(
                "{at}.secret: Required value: secret is a mandatory field for a key"
            ));
            continue;
        }
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&k.secret) else {
            errs.push(format!(
                "{at}.secret: Invalid value: \"REDACTED\": secrets must be base64 encoded"
            ));
            continue;
        };
        let sizes = kind.key_sizes();
        if !sizes.contains(&bytes.len()) {
            let list: Vec<String> = sizes.iter().map(usize::to_string).collect();
            errs.push(format!(
                "{at}.secret: Invalid value: \"REDACTED\": secret is not of the expected length, got {}, expected one of [{}]",
                bytes.len(),
                list.join(" ")
            ));
            continue;
        }
        let Some(cipher) = Cipher::new(kind, &bytes) else {
            errs.push(format!(
                "{at}.secret: Invalid value: \"REDACTED\": the key is unusable"
            ));
            continue;
        };
        out.push(NamedKey {
            prefix: format!("{}{}:", kind.prefix(), k.name).into_bytes(),
            name: k.name,
            cipher,
        });
    }
    (errs.len() == before).then_some(Provider::Keyed { kind, keys: out })
}

/// `msg` with every double-quoted part replaced by `"REDACTED"` (YAML errors quote the
/// values they could not take, which may be key material).
fn redact_quoted(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut parts = msg.split('"');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let mut inside = true;
    for part in parts {
        if inside {
            out.push_str("\"REDACTED\"");
        } else {
            out.push_str(part);
        }
        inside = !inside;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(providers: &str) -> String {
        let text = format!(
            "apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
{providers}"
        );
        match parse(&text) {
            Ok(_) => panic!("accepted: {providers}"),
            Err(e) => e,
        }
    }

    #[test]
    fn bad_keys_are_refused_with_kubes_texts() {
        // 8 bytes ("password"): kube's length message, the secret redacted.
        let e = err("  - aescbc:\n      keys:\n      - {name: key1, secret: cGFzc3dvcmQ=}\n");
        assert_eq!(e, "resources[0].providers[0].aescbc.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 8, expected one of [16 24 32]");
        let e = err(
            "  - secretbox:\n      keys:\n      - {name: key1, secret: cGFzc3dvcmRwYXNzd29yZA==}\n",
        );
        assert_eq!(e, "resources[0].providers[0].secretbox.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 16, expected one of [32]");
        let e = err("  - identity: {}\n  - aescbc:\n      keys:\n      - {name: key1, secret: 'not*base64'}\n");
        assert_eq!(e, "resources[0].providers[1].aescbc.keys[0].secret: Invalid value: \"REDACTED\": secrets must be base64 encoded");
        assert!(!e.contains("not*base64"));
        let e = err("  - aescbc:\n      keys:\n      - {name: '', secret: ''}\n");
        assert_eq!(e, "[resources[0].providers[0].aescbc.keys[0].name: Required value: name is a mandatory field for a key, resources[0].providers[0].aescbc.keys[0].secret: Required value: secret is a mandatory field for a key]");
        let e = err("  - aescbc:\n      keys: []\n");
        assert_eq!(
            e,
            "resources[0].providers[0].aescbc.keys: Required value: at least one keys is required"
        );
        let k = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
        let e = err(&format!("  - aescbc:\n      keys:\n      - {{name: key1, secret: {k}}}\n      - {{name: key1, secret: {k}}}\n"));
        assert_eq!(
            e,
            "resources[0].providers[0].aescbc.keys[1].name: Duplicate value: \"key1\""
        );
        let e = err(&format!(
            "  - aescbc:\n      keys:\n      - {{name: key1, secret: {k}}}\n    identity: {{}}\n"
        ));
        assert!(e.contains("more than one provider specified"), "{e}");
        let e = err("  - kms:\n      apiVersion: v2\n      name: vault\n      endpoint: unix:///tmp/kms.sock\n");
        assert!(e.contains("kms providers are not supported"), "{e}");
        let e = err("  - {}\n");
        assert!(
            e.contains("does not contain any of the expected providers"),
            "{e}"
        );
        // YAML type errors do not echo values.
        let e = err("  - aescbc:\n      keys: \"c2VjcmV0LWtleQ==\"\n");
        assert!(!e.contains("c2VjcmV0"), "{e}");
        assert!(parse("kind: Nope\n")
            .err()
            .is_some_and(|e| e.contains("EncryptionConfiguration")));
    }

    #[test]
    fn the_kinds_key_sizes_are_accepted() {
        let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
        for (kind, n) in [
            ("aescbc", 16),
            ("aescbc", 24),
            ("aescbc", 32),
            ("aesgcm", 16),
            ("aesgcm", 24),
            ("aesgcm", 32),
            ("secretbox", 32),
        ] {
            let text = format!(
                "kind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - {kind}:\n      keys:\n      - name: k\n        secret: {}\n",
                b64(n)
            );
            assert!(parse(&text).is_ok(), "{kind} {n}");
        }
    }
}
