//! The Pod Security Standards' levels (`privileged`, `baseline`, `restricted`) and policy
//! versions (`latest`, `v1.N`), and a namespace's policy from its
//! `pod-security.kubernetes.io/{enforce,audit,warn}[-version]` labels over the configured
//! defaults (k8s.io/pod-security-admission `api`: `ParseLevel`, `ParseVersion`,
//! `PolicyToEvaluate`, with kube's texts for invalid values).

use std::fmt;

use serde_json::{Map, Value};

use crate::meta::field_error::FieldError;

const PREFIX: &str = "pod-security.kubernetes.io/";
pub const ENFORCE: &str = "pod-security.kubernetes.io/enforce";
pub const ENFORCE_VERSION: &str = "pod-security.kubernetes.io/enforce-version";
pub const AUDIT: &str = "pod-security.kubernetes.io/audit";
pub const AUDIT_VERSION: &str = "pod-security.kubernetes.io/audit-version";
pub const WARN: &str = "pod-security.kubernetes.io/warn";
pub const WARN_VERSION: &str = "pod-security.kubernetes.io/warn-version";

/// kube's text for a level that is none of the three.
pub const LEVEL_ERROR: &str = "must be one of privileged, baseline, restricted";
/// kube's text for a version that is neither `latest` nor `v1.N`.
pub const VERSION_ERROR: &str = "must be \"latest\" or \"v1.x\"";

/// A Pod Security Standards level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    /// kube's `ParseLevel` (its error text on anything else).
    pub fn parse(s: &str) -> Result<Level, &'static str> {
        match s {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err(LEVEL_ERROR),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Level::Privileged => 0,
            Level::Baseline => 1,
            Level::Restricted => 2,
        }
    }

    /// Whether `self` is stricter than `other` (kube's `CompareLevels(a, b) > 0`).
    pub fn stricter_than(&self, other: Level) -> bool {
        self.rank() > other.rank()
    }
}

/// A policy version: `latest` or `v1.<minor>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    Latest,
    V1(u64),
}

impl Version {
    /// kube's `ParseVersion`: `latest`, or `v1.N` with N written without leading zeros.
    pub fn parse(s: &str) -> Result<Version, &'static str> {
        if s == "latest" {
            return Ok(Version::Latest);
        }
        let minor = s.strip_prefix("v1.").ok_or(VERSION_ERROR)?;
        let digits = !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit());
        if !digits || (minor.len() > 1 && minor.starts_with('0')) {
            return Err(VERSION_ERROR);
        }
        // Go's Atoi of a 64-bit int: larger numbers are refused too.
        minor
            .parse::<i64>()
            .map(|m| Version::V1(m as u64))
            .map_err(|_| VERSION_ERROR)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::Latest => f.write_str("latest"),
            Version::V1(m) => write!(f, "v1.{m}"),
        }
    }
}

/// A level at a version (`restricted:latest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl LevelVersion {
    pub const PRIVILEGED: LevelVersion = LevelVersion {
        level: Level::Privileged,
        version: Version::Latest,
    };

    /// Both privileged, or the same level and version.
    pub fn equivalent(&self, other: &LevelVersion) -> bool {
        (self.level == Level::Privileged && other.level == Level::Privileged) || self == other
    }
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level.as_str(), self.version)
    }
}

/// The three modes' levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

impl Policy {
    pub const PRIVILEGED: Policy = Policy {
        enforce: LevelVersion::PRIVILEGED,
        audit: LevelVersion::PRIVILEGED,
        warn: LevelVersion::PRIVILEGED,
    };

    pub fn fully_privileged(&self) -> bool {
        [self.enforce, self.audit, self.warn]
            .iter()
            .all(|lv| lv.level == Level::Privileged)
    }

    pub fn equivalent(&self, other: &Policy) -> bool {
        self.enforce.equivalent(&other.enforce)
            && self.audit.equivalent(&other.audit)
            && self.warn.equivalent(&other.warn)
    }
}

fn label_error(errs: &mut Vec<FieldError>, label: &str, value: &str, why: &str) {
    errs.push(FieldError::invalid(
        format!("metadata.labels[{label}]"),
        Value::String(value.to_string()),
        why,
    ));
}

/// kube's `PolicyToEvaluate`: the namespace's labels over `defaults`. Always a usable
/// policy: an invalid enforce level is `restricted` (fail closed), an invalid audit or warn
/// level `privileged` (fail open), an invalid version `latest`; the errors say which labels
/// were invalid. A warn level left unset follows an explicitly stricter enforce level.
pub fn policy_to_evaluate(
    labels: Option<&Map<String, Value>>,
    defaults: Policy,
) -> (Policy, Vec<FieldError>) {
    let mut p = defaults;
    let mut errs = Vec::new();
    let Some(labels) = labels.filter(|l| !l.is_empty()) else {
        return (p, errs);
    };
    let get = |k: &str| {
        labels
            .get(k)
            .map(|v| v.as_str().unwrap_or_default().to_string())
    };
    let mut has_enforce_level = false;
    if let Some(l) = get(ENFORCE) {
        match Level::parse(&l) {
            Ok(level) => {
                p.enforce.level = level;
                has_enforce_level = true;
            }
            Err(e) => {
                p.enforce.level = Level::Restricted;
                label_error(&mut errs, ENFORCE, &l, e);
            }
        }
    }
    let version = |label: &str, into: &mut Version, errs: &mut Vec<FieldError>| {
        if let Some(v) = get(label) {
            *into = Version::parse(&v).unwrap_or_else(|e| {
                label_error(errs, label, &v, e);
                Version::Latest
            });
        }
    };
    version(ENFORCE_VERSION, &mut p.enforce.version, &mut errs);
    if let Some(l) = get(AUDIT) {
        p.audit.level = Level::parse(&l).unwrap_or_else(|e| {
            label_error(&mut errs, AUDIT, &l, e);
            Level::Privileged
        });
    }
    version(AUDIT_VERSION, &mut p.audit.version, &mut errs);
    let has_warn_level = labels.contains_key(WARN);
    if let Some(l) = get(WARN) {
        p.warn.level = Level::parse(&l).unwrap_or_else(|e| {
            label_error(&mut errs, WARN, &l, e);
            Level::Privileged
        });
    }
    let has_warn_version = labels.contains_key(WARN_VERSION);
    version(WARN_VERSION, &mut p.warn.version, &mut errs);
    if !has_warn_level && has_enforce_level && p.enforce.level.stricter_than(p.warn.level) {
        p.warn.level = p.enforce.level;
        if !has_warn_version {
            p.warn.version = p.enforce.version;
        }
    }
    (p, errs)
}

/// Whether the namespace's labels name a mode (`enforce` / `audit` / `warn`) at all.
pub fn sets_mode(labels: Option<&Map<String, Value>>, mode: &str) -> bool {
    labels.is_some_and(|l| {
        l.contains_key(&format!("{PREFIX}{mode}"))
            || l.contains_key(&format!("{PREFIX}{mode}-version"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(labels: Value) -> (Policy, Vec<FieldError>) {
        policy_to_evaluate(labels.as_object(), Policy::PRIVILEGED)
    }

    #[test]
    fn versions_parse_as_kube() {
        assert_eq!(Version::parse("latest"), Ok(Version::Latest));
        assert_eq!(Version::parse("v1.0"), Ok(Version::V1(0)));
        assert_eq!(Version::parse("v1.25"), Ok(Version::V1(25)));
        for bad in ["v1.01", "1.25", "v2.1", "v1.", "v1.x", "Latest", ""] {
            assert_eq!(Version::parse(bad), Err(VERSION_ERROR), "{bad}");
        }
        assert_eq!(Version::V1(3).to_string(), "v1.3");
    }

    #[test]
    fn labels_over_defaults() {
        let (p, errs) = policy(json!({ENFORCE: "baseline"}));
        assert!(errs.is_empty());
        assert_eq!(p.enforce.to_string(), "baseline:latest");
        // warn follows a stricter enforce
        assert_eq!(p.warn.to_string(), "baseline:latest");
        let (p, _) = policy(json!({ENFORCE: "restricted", ENFORCE_VERSION: "v1.24"}));
        assert_eq!(p.warn.to_string(), "restricted:v1.24");
        let (p, _) = policy(json!({ENFORCE: "restricted", WARN: "baseline"}));
        assert_eq!(p.warn.to_string(), "baseline:latest");
        let (p, errs) = policy(json!({ENFORCE: "bogus", AUDIT: "x", WARN_VERSION: "v2"}));
        assert_eq!(p.enforce.level, Level::Restricted);
        assert_eq!(p.audit.level, Level::Privileged);
        assert_eq!(p.warn.level, Level::Privileged);
        let msgs: Vec<String> = errs.iter().map(|e| e.message()).collect();
        assert_eq!(
            msgs,
            [
                "metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"bogus\": must be one of privileged, baseline, restricted",
                "metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: \"x\": must be one of privileged, baseline, restricted",
                "metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: \"v2\": must be \"latest\" or \"v1.x\"",
            ]
        );
    }
}
