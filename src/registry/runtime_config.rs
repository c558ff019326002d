//! `--runtime-config`: which built-in group versions and resources are served, as
//! kube-apiserver's `resourceconfig.MergeAPIResourceConfigs` reads the flag.
//!
//! The flag is a comma-separated `key=value` list (a missing value means `true`). `api/all`,
//! `api/ga`, `api/beta` and `api/alpha` switch every matching version (`v1`, `v1beta1`,
//! `v1alpha1`) and apply first, in that order; then `<group>/<version>` keys, then
//! `<group>/<version>/<resource>` keys (lowercase plurals), each taking precedence over what
//! came before. The core group is `v1` or `api/v1` (kube's `api/legacy` is read as the same).
//! Rafter serves only kube v1.33's default-on group versions, all GA; a key naming a version it
//! does not serve is refused when it would enable it and ignored when it disables it (it is off
//! anyway), as are keys of groups it does not know at all (kube ignores unregistered groups).
//!
//! Disabled resources leave discovery, OpenAPI and routing (404), but stay known to the
//! registry's own loops ([`super::catalog::Registry::builtin`]).

use std::collections::BTreeMap;

use super::resource::Resource;

/// A `--runtime-config` that does not parse or names what cannot be enabled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RuntimeConfigError(pub String);

/// The parsed flag: matcher switches, group-version and resource preferences.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// (`api/all` | `api/ga` | `api/beta` | `api/alpha`, enabled) in kube's order.
    matchers: Vec<(&'static str, bool)>,
    /// (group, version) → enabled.
    versions: BTreeMap<(String, String), bool>,
    /// (group, version, resource) → enabled.
    resources: BTreeMap<(String, String, String), bool>,
}

const MATCHERS: [&str; 4] = ["api/all", "api/ga", "api/beta", "api/alpha"];

fn version_class(v: &str) -> &'static str {
    let rest = v.strip_prefix('v').unwrap_or("");
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return "";
    }
    let tail = &rest[digits..];
    let numbered = |p: &str| {
        tail.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    if tail.is_empty() {
        "api/ga"
    } else if numbered("beta") {
        "api/beta"
    } else if numbered("alpha") {
        "api/alpha"
    } else {
        ""
    }
}

fn parse_bool(key: &str, value: &str) -> Result<bool, RuntimeConfigError> {
    // Go's strconv.ParseBool.
    match value {
        "" | "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(RuntimeConfigError(format!(
            "invalid value of {key}: {value}, err: strconv.ParseBool: parsing {value:?}: invalid syntax"
        ))),
    }
}

impl RuntimeConfig {
    /// Parses the flag and checks it against the built-in resources Rafter serves.
    pub fn parse(flag: &str, builtins: &[Resource]) -> Result<RuntimeConfig, RuntimeConfigError> {
        let mut out = RuntimeConfig::default();
        let mut pairs: BTreeMap<String, String> = BTreeMap::new();
        for item in flag.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            pairs.insert(k.trim().to_string(), v.trim().to_string());
        }
        for m in MATCHERS {
            if let Some(v) = pairs.get(m) {
                match v.as_str() {
                    "true" => out.matchers.push((m, true)),
                    "false" => out.matchers.push((m, false)),
                    _ => return Err(RuntimeConfigError(format!("invalid value {m}={v}"))),
                }
            }
        }
        let known_group = |g: &str| builtins.iter().any(|r| r.group == g);
        let served = |g: &str, v: &str| builtins.iter().any(|r| r.group == g && r.version == v);
        for (key, value) in &pairs {
            if MATCHERS.contains(&key.as_str()) {
                continue;
            }
            let key_core = match key.as_str() {
                "v1" | "api/legacy" => "api/v1".to_string(),
                k if k.starts_with("v1/") => format!("api/{k}"),
                k => k.to_string(),
            };
            let tokens: Vec<&str> = key_core.split('/').collect();
            if tokens.len() < 2 || tokens.len() > 3 || tokens[1].is_empty() {
                return Err(RuntimeConfigError(format!(
                    "runtime-config invalid key {key}"
                )));
            }
            let group = if tokens[0] == "api" { "" } else { tokens[0] };
            let version = tokens[1];
            if !known_group(group) {
                continue;
            }
            let enabled = parse_bool(key, value)?;
            if !served(group, version) {
                if !enabled {
                    continue;
                }
                return Err(RuntimeConfigError(format!(
                    "group version {}{version} that has not been registered",
                    if group.is_empty() {
                        String::new()
                    } else {
                        format!("{group}/")
                    }
                )));
            }
            match tokens.get(2) {
                None => {
                    out.versions
                        .insert((group.to_string(), version.to_string()), enabled);
                }
                Some(res) => {
                    if res.to_lowercase() != *res {
                        return Err(RuntimeConfigError(format!(
                            "invalid key {key}: group/version/resource and resource is always lowercase plural, not {res:?}"
                        )));
                    }
                    out.resources.insert(
                        (group.to_string(), version.to_string(), res.to_string()),
                        enabled,
                    );
                }
            }
        }
        let core_off = builtins
            .iter()
            .filter(|r| r.group.is_empty())
            .all(|r| !out.enabled(r));
        if core_off {
            return Err(RuntimeConfigError(
                "runtime-config: the core group (v1) cannot be turned off; Rafter's own loops and every client need it"
                    .into(),
            ));
        }
        Ok(out)
    }

    /// Whether built-in `r` is served (everything Rafter has is default-on).
    pub fn enabled(&self, r: &Resource) -> bool {
        let gv = (r.group.clone(), r.version.clone());
        let gvr = (r.group.clone(), r.version.clone(), r.resource.clone());
        if let Some(e) = self.resources.get(&gvr) {
            return *e;
        }
        if let Some(e) = self.versions.get(&gv) {
            return *e;
        }
        let class = version_class(&r.version);
        let mut on = true;
        for (m, e) in &self.matchers {
            if *m == "api/all" || *m == class {
                on = *e;
            }
        }
        on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtins() -> Vec<Resource> {
        crate::registry::builtin::resources()
    }

    fn served(flag: &str) -> Vec<String> {
        let b = builtins();
        let rc = RuntimeConfig::parse(flag, &b).unwrap();
        b.iter()
            .filter(|r| rc.enabled(r))
            .map(|r| format!("{}/{}/{}", r.group, r.version, r.resource))
            .collect()
    }

    #[test]
    fn switches_versions_and_resources() {
        let all = served("");
        assert!(all.contains(&"batch/v1/jobs".to_string()));
        let off = served("batch/v1=false");
        assert!(!off.iter().any(|r| r.starts_with("batch/v1/")));
        assert_eq!(off.len() + 2, all.len());
        let one = served("batch/v1/cronjobs=false");
        assert!(one.contains(&"batch/v1/jobs".to_string()));
        assert!(!one.contains(&"batch/v1/cronjobs".to_string()));
        // api/all=false then turning core and apps back on.
        let few = served("api/all=false,api/v1=true,apps/v1");
        assert!(few
            .iter()
            .all(|r| r.starts_with('/') || r.starts_with("apps/")));
        assert!(few.contains(&"/v1/pods".to_string()));
        // Resource keys win over version keys, which win over matchers.
        let mix = served("api/ga=false,v1=true,batch/v1=false,batch/v1/jobs=true");
        assert!(mix.contains(&"batch/v1/jobs".to_string()));
        assert!(!mix.contains(&"batch/v1/cronjobs".to_string()));
        assert!(!mix.iter().any(|r| r.starts_with("apps/")));
        // Disabling what is off anyway, or a group Rafter does not know, changes nothing.
        assert_eq!(
            served("storage.k8s.io/v1beta1=false,example.com/v1=true"),
            all
        );
    }

    #[test]
    fn refuses_what_kube_refuses() {
        let b = builtins();
        let err = |f: &str| RuntimeConfig::parse(f, &b).unwrap_err().0;
        assert_eq!(err("api/all=maybe"), "invalid value api/all=maybe");
        assert_eq!(
            err("storage.k8s.io/v1beta1=true"),
            "group version storage.k8s.io/v1beta1 that has not been registered"
        );
        assert_eq!(
            err("batch/v1/CronJobs=false"),
            "invalid key batch/v1/CronJobs=false: group/version/resource and resource is always lowercase plural, not \"CronJobs\""
                .replace("=false", "")
        );
        assert!(err("batch/v1=maybe").starts_with("invalid value of batch/v1: maybe"));
        assert!(err("a/b/c/d=true").contains("invalid key"));
        assert!(err("api/all=false").contains("core group"));
    }
}
