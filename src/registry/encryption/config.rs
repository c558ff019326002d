//! Parsing and validation of an `EncryptionConfiguration` file (apiserver.config.k8s.io/v1)
//! with kube's field paths and texts (`resources[0].providers[1].aescbc.keys[0].secret:
//! Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of
//! [16 24 32]`); every error is reported, joined as kube's aggregate (`[a, b]`). Secrets never
//! reach an error text: key material is `REDACTED` and quoted values of YAML errors too.
//!
//! `kms` providers are validated as kube validates them (a name, unique across the file and
//! without `:` for v2; an endpoint `unix://...`; a positive `timeout`, default 3s; no
//! `cachesize` for v2; `apiVersion` v1 or v2, default v1) and, with `apiVersion: v2`, started
//! ([`super::kms`]) once the whole file is valid. `apiVersion: v1` is refused with kube 1.33's
//! text (KMSv1 is off by default there; it is not implemented here).
//!
//! Beyond kube: duplicate key names within a provider are refused (kube would silently use
//! the first).

use std::collections::HashSet;
use std::time::Duration;

use base64::Engine;
use serde::Deserialize;

use super::ciphers::{Cipher, Kind};
use super::kms::{Kms, Timing};
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
#[serde(rename_all = "camelCase")]
struct FileKms {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    endpoint: String,
    #[serde(default)]
    cachesize: Option<i32>,
    #[serde(default)]
    timeout: Option<String>,
}

/// A validated `kms` v2 provider, started once the whole file is valid.
struct KmsSpec {
    name: String,
    socket: std::path::PathBuf,
    timeout: Duration,
}

/// A validated provider.
enum Built {
    Ready(Provider),
    Kms(KmsSpec),
}

/// kube's default `timeout` of a `kms` provider.
const KMS_TIMEOUT: Duration = Duration::from_secs(3);

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
    let mut kms_names = HashSet::new();
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
            if let Some(p) = provider(p, &format!("{pp}[{j}]"), &mut kms_names, &mut errs) {
                providers.push(p);
            }
        }
        rules.push((r.resources, providers));
    }
    match errs.len() {
        0 => {}
        1 => return Err(errs.remove(0)),
        _ => return Err(format!("[{}]", errs.join(", "))),
    }
    // Valid: plugins are called only now.
    Ok(rules
        .into_iter()
        .map(|(resources, providers)| Rule {
            resources,
            providers: providers
                .into_iter()
                .map(|b| match b {
                    Built::Ready(p) => p,
                    Built::Kms(k) => Provider::Kms(Box::new(Kms::start(
                        &k.name,
                        k.socket,
                        k.timeout,
                        Timing::default(),
                    ))),
                })
                .collect(),
        })
        .collect())
}

fn provider(
    p: FileProvider,
    path: &str,
    kms_names: &mut HashSet<String>,
    errs: &mut Vec<String>,
) -> Option<Built> {
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
        return kms_provider(kms, &format!("{path}.kms"), kms_names, errs).map(Built::Kms);
    }
    if p.identity.is_some() {
        return Some(Built::Ready(Provider::Identity));
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
    (errs.len() == before).then_some(Built::Ready(Provider::Keyed { kind, keys: out }))
}

/// kube's `validateKMSConfiguration` (name, timeout, endpoint, cachesize, apiVersion, in its
/// order), after its defaults (apiVersion v1, timeout 3s), then the v1 refusal.
fn kms_provider(
    k: FileKms,
    path: &str,
    names: &mut HashSet<String>,
    errs: &mut Vec<String>,
) -> Option<KmsSpec> {
    let before = errs.len();
    let api_version = if k.api_version.is_empty() {
        "v1".to_string()
    } else {
        k.api_version
    };
    let v1 = api_version == "v1";
    if k.name.is_empty() {
        errs.push(format!(
            "{path}.name: Required value: name is a mandatory field for a provider"
        ));
    }
    if !v1 && k.name.contains(':') {
        errs.push(format!(
            "{path}.name: Invalid value: {:?}: invalid KMS provider name {}, must not contain ':'",
            k.name, k.name
        ));
    }
    // v1 names need not be unique without automatic reload; v1 is refused below anyway.
    if !v1 && names.contains(&k.name) {
        errs.push(format!(
            "{path}.name: Invalid value: {:?}: duplicate KMS provider name {}, names must be unique",
            k.name, k.name
        ));
    }
    names.insert(k.name.clone());
    let timeout = match k.timeout.as_deref() {
        None => Some(KMS_TIMEOUT),
        Some(t) => match go_duration(t) {
            Err(e) => {
                errs.push(format!("{path}.timeout: {e}"));
                None
            }
            Ok(ns) if ns <= 0 => {
                errs.push(format!(
                    "{path}.timeout: Invalid value: {}: timeout should be a positive value",
                    go_duration_string(ns)
                ));
                None
            }
            Ok(ns) => Some(Duration::from_nanos(ns as u64)),
        },
    };
    let socket = if k.endpoint.is_empty() {
        errs.push(format!(
            "{path}.endpoint: Invalid value: \"\": endpoint is a mandatory field for a kms"
        ));
        None
    } else {
        match unix_socket(&k.endpoint) {
            Ok(p) => Some(p),
            Err(scheme) => {
                errs.push(format!(
                    "{path}.endpoint: Invalid value: {:?}: unsupported scheme {scheme:?} for KMS provider, only unix is supported",
                    k.endpoint
                ));
                None
            }
        }
    };
    // kube defaults cachesize (1000) for v1 only, so a v2 one was written in the file.
    match (v1, k.cachesize) {
        (false, Some(n)) => errs.push(format!(
            "{path}.cachesize: Invalid value: {n}: cachesize is not supported in v2"
        )),
        (true, Some(0)) => errs.push(format!(
            "{path}.cachesize: Invalid value: 0: cachesize should be a positive value, or negative to disable"
        )),
        _ => {}
    }
    if !v1 && api_version != "v2" {
        errs.push(format!(
            "{path}.apiVersion: Invalid value: {api_version:?}: unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported"
        ));
    }
    if errs.len() != before {
        return None;
    }
    if v1 {
        errs.push("KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.".into());
        return None;
    }
    Some(KmsSpec {
        name: k.name,
        socket: socket?,
        timeout: timeout?,
    })
}

/// The socket path of a `unix://` endpoint as kube's `ParseEndpoint` takes it (the URL's
/// path), or the scheme it has instead.
fn unix_socket(endpoint: &str) -> Result<std::path::PathBuf, String> {
    let scheme = match endpoint.split_once(':') {
        Some((s, _))
            if !s.is_empty()
                && s.starts_with(|c: char| c.is_ascii_alphabetic())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            s.to_ascii_lowercase()
        }
        _ => String::new(),
    };
    if scheme != "unix" {
        return Err(scheme);
    }
    let rest = &endpoint[5..];
    let path = match rest.strip_prefix("//") {
        // unix://host/path: the path
        Some(after) => after.find('/').map(|i| &after[i..]).unwrap_or(""),
        None => rest,
    };
    Ok(std::path::PathBuf::from(path))
}

/// Go's `time.ParseDuration`, in nanoseconds.
fn go_duration(s: &str) -> Result<i128, String> {
    let invalid = || format!("time: invalid duration {s:?}");
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num = &rest[..num_end];
        if num.is_empty() || num == "." || num.matches('.').count() > 1 {
            return Err(invalid());
        }
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale: f64 = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(format!("time: missing unit in duration {s:?}")),
            u => return Err(format!("time: unknown unit {u:?} in duration {s:?}")),
        };
        rest = &rest[unit_end..];
        total += num.parse::<f64>().map_err(|_| invalid())? * scale;
    }
    let ns = total.round() as i128;
    Ok(if neg { -ns } else { ns })
}

/// Go's `time.Duration.String`.
fn go_duration_string(ns: i128) -> String {
    fn frac(v: u128, div: u128) -> String {
        let (int, f) = (v / div, v % div);
        if f == 0 {
            return int.to_string();
        }
        let width = div.to_string().len() - 1;
        let digits = format!("{f:0width$}");
        format!("{int}.{}", digits.trim_end_matches('0'))
    }
    if ns == 0 {
        return "0s".into();
    }
    let u = ns.unsigned_abs();
    let s = if u < 1_000 {
        format!("{u}ns")
    } else if u < 1_000_000 {
        format!("{}µs", frac(u, 1_000))
    } else if u < 1_000_000_000 {
        format!("{}ms", frac(u, 1_000_000))
    } else {
        let (h, rem) = (u / 3_600_000_000_000, u % 3_600_000_000_000);
        let (m, sec) = (rem / 60_000_000_000, rem % 60_000_000_000);
        let secs = format!("{}s", frac(sec, 1_000_000_000));
        if h > 0 {
            format!("{h}h{m}m{secs}")
        } else if m > 0 {
            format!("{m}m{secs}")
        } else {
            secs
        }
    };
    if ns < 0 {
        format!("-{s}")
    } else {
        s
    }
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
    fn kms_providers_are_validated_as_kube_validates_them() {
        let kms = |body: &str| format!("  - kms:\n{body}");
        // v2 with a name containing ':', tcp, cachesize and a zero timeout: all reported.
        let e = err(&kms("      apiVersion: v2\n      name: 'a:b'\n      endpoint: tcp://127.0.0.1:1\n      cachesize: 100\n      timeout: 0s\n"));
        assert_eq!(
            e,
            "[resources[0].providers[0].kms.name: Invalid value: \"a:b\": invalid KMS provider name a:b, must not contain ':', \
resources[0].providers[0].kms.timeout: Invalid value: 0s: timeout should be a positive value, \
resources[0].providers[0].kms.endpoint: Invalid value: \"tcp://127.0.0.1:1\": unsupported scheme \"tcp\" for KMS provider, only unix is supported, \
resources[0].providers[0].kms.cachesize: Invalid value: 100: cachesize is not supported in v2]"
        );
        let e = err(&kms("      apiVersion: v2\n"));
        assert_eq!(
            e,
            "[resources[0].providers[0].kms.name: Required value: name is a mandatory field for a provider, \
resources[0].providers[0].kms.endpoint: Invalid value: \"\": endpoint is a mandatory field for a kms]"
        );
        let e = err(&kms(
            "      apiVersion: v3\n      name: x\n      endpoint: unix:///tmp/x.sock\n",
        ));
        assert_eq!(e, "resources[0].providers[0].kms.apiVersion: Invalid value: \"v3\": unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported");
        let e = err(&kms("      apiVersion: v2\n      name: x\n      endpoint: unix:///tmp/x.sock\n      timeout: -1m30s\n"));
        assert_eq!(e, "resources[0].providers[0].kms.timeout: Invalid value: -1m30s: timeout should be a positive value");
        let e = err(&kms("      apiVersion: v2\n      name: x\n      endpoint: unix:///tmp/x.sock\n      timeout: 3x\n"));
        assert!(e.contains("unknown unit \"x\""), "{e}");
        // Names are unique across the file, whatever the rule.
        let text = "kind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - kms: {apiVersion: v2, name: vault, endpoint: 'unix:///tmp/a.sock'}\n- resources: [configmaps]\n  providers:\n  - kms: {apiVersion: v2, name: vault, endpoint: 'unix:///tmp/b.sock'}\n";
        assert_eq!(
            parse(text).err().unwrap(),
            "resources[1].providers[0].kms.name: Invalid value: \"vault\": duplicate KMS provider name vault, names must be unique"
        );
        // v1 (also the default apiVersion) is refused with kube 1.33's text.
        for v in ["      apiVersion: v1\n", ""] {
            let e = err(&kms(&format!(
                "{v}      name: x\n      endpoint: unix:///tmp/x.sock\n"
            )));
            assert!(e.starts_with("KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead."), "{e}");
        }
        let e = err(&kms("      apiVersion: v1\n      name: x\n      endpoint: unix:///tmp/x.sock\n      cachesize: 0\n"));
        assert_eq!(e, "resources[0].providers[0].kms.cachesize: Invalid value: 0: cachesize should be a positive value, or negative to disable");
    }

    #[test]
    fn endpoints_and_durations_read_as_go_reads_them() {
        assert_eq!(
            unix_socket("unix:///tmp/kms.sock").unwrap(),
            std::path::PathBuf::from("/tmp/kms.sock")
        );
        assert_eq!(
            unix_socket("unix:/tmp/kms.sock").unwrap(),
            std::path::PathBuf::from("/tmp/kms.sock")
        );
        assert_eq!(
            unix_socket("unix://host/kms.sock").unwrap(),
            std::path::PathBuf::from("/kms.sock")
        );
        assert_eq!(unix_socket("/tmp/kms.sock").unwrap_err(), "");
        assert_eq!(unix_socket("HTTPS://x").unwrap_err(), "https");
        for (text, ns) in [
            ("3s", 3_000_000_000i128),
            ("1.5s", 1_500_000_000),
            ("500ms", 500_000_000),
            ("1m30s", 90_000_000_000),
            ("0", 0),
            ("-2h", -7_200_000_000_000),
        ] {
            assert_eq!(go_duration(text).unwrap(), ns, "{text}");
        }
        assert!(go_duration("").is_err() && go_duration("3").is_err() && go_duration("s").is_err());
        for (ns, text) in [
            (0i128, "0s"),
            (1_500_000_000, "1.5s"),
            (90_000_000_000, "1m30s"),
            (-1, "-1ns"),
            (2_500_000, "2.5ms"),
            (3_600_000_000_000, "1h0m0s"),
        ] {
            assert_eq!(go_duration_string(ns), text);
        }
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
