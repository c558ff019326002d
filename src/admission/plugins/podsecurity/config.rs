//! PodSecurity's configuration: a `PodSecurityConfiguration` of
//! `pod-security.admission.config.k8s.io/v1` (or `v1beta1`, `v1alpha1`, the same fields),
//! decoded strictly as kube decodes it, defaulted (every mode `privileged`, every version
//! `latest`; also the whole configuration when there is none) and validated with kube's
//! texts: the default levels and versions, and the exempt usernames (not empty), namespaces
//! (DNS labels) and runtime classes (DNS subdomains), none repeated.

use serde_json::{Map, Value};

use super::levels::{Level, LevelVersion, Policy, Version};
use crate::meta::field_error::{aggregate_message, FieldError};
use crate::meta::validation::{is_dns1123_label, is_dns1123_subdomain};

const GROUP: &str = "pod-security.admission.config.k8s.io";
const VERSIONS: &[&str] = &["v1", "v1beta1", "v1alpha1"];
const KIND: &str = "PodSecurityConfiguration";

/// The configuration the plugin works with.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub defaults: Policy,
    pub usernames: Vec<String>,
    pub namespaces: Vec<String>,
    pub runtime_classes: Vec<String>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            defaults: Policy::PRIVILEGED,
            usernames: Vec::new(),
            namespaces: Vec::new(),
            runtime_classes: Vec::new(),
        }
    }
}

const DEFAULT_FIELDS: &[&str] = &[
    "enforce",
    "enforce-version",
    "audit",
    "audit-version",
    "warn",
    "warn-version",
];
const EXEMPTION_FIELDS: &[&str] = &["usernames", "namespaces", "runtimeClasses"];

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `encoding/json` refusal of a value of the wrong type.
fn type_error(v: &Value, go_struct: &str, path: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field {go_struct}.{path} of type {go_type}",
        json_kind(v)
    )
}

/// An object field's members (null reads as empty), after recording unknown fields.
fn members<'a>(
    v: Option<&'a Value>,
    path: &str,
    known: &[&str],
    go_struct: &str,
    unknown: &mut Vec<String>,
) -> Result<Option<&'a Map<String, Value>>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => {
            for k in m.keys() {
                if !known.contains(&k.as_str()) {
                    unknown.push(format!("unknown field \"{path}.{k}\""));
                }
            }
            Ok(Some(m))
        }
        Some(other) => Err(type_error(
            other,
            "PodSecurityConfiguration",
            path,
            go_struct,
        )),
    }
}

/// Parses, defaults and validates the plugin's configuration (`None`: the defaults).
pub fn parse(cfg: Option<&Value>) -> Result<Config, String> {
    let Some(cfg) = cfg else {
        return Ok(Config::default());
    };
    let Some(top) = cfg.as_object() else {
        return Err(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            json_kind(cfg)
        ));
    };
    let api = top.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = top.get("kind").and_then(Value::as_str).unwrap_or("");
    let raw = cfg.to_string();
    if kind.is_empty() {
        return Err(format!("Object 'Kind' is missing in '{raw}'"));
    }
    if api.is_empty() {
        return Err(format!("Object 'apiVersion' is missing in '{raw}'"));
    }
    let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
    if group != GROUP || !VERSIONS.contains(&version) || kind != KIND {
        return Err(format!(
            "no kind {kind:?} is registered for version {api:?} in scheme \"k8s.io/pod-security-admission/admission/api/scheme/scheme.go:31\""
        ));
    }
    let mut unknown = Vec::new();
    for k in top.keys() {
        if !["apiVersion", "kind", "defaults", "exemptions"].contains(&k.as_str()) {
            unknown.push(format!("unknown field \"{k}\""));
        }
    }
    let defaults = members(
        top.get("defaults"),
        "defaults",
        DEFAULT_FIELDS,
        "PodSecurityDefaults",
        &mut unknown,
    )?;
    let exemptions = members(
        top.get("exemptions"),
        "exemptions",
        EXEMPTION_FIELDS,
        "PodSecurityExemptions",
        &mut unknown,
    )?;
    // The defaults' strings, defaulted.
    let mut d = Vec::new();
    for f in DEFAULT_FIELDS {
        let v = defaults.and_then(|m| m.get(*f)).unwrap_or(&Value::Null);
        let s = match v {
            Value::Null => "",
            Value::String(s) => s.as_str(),
            other => {
                return Err(type_error(
                    other,
                    "PodSecurityDefaults",
                    &format!("defaults.{f}"),
                    "string",
                ))
            }
        };
        d.push(match s {
            "" if f.ends_with("-version") => "latest".to_string(),
            "" => "privileged".to_string(),
            s => s.to_string(),
        });
    }
    let mut lists = Vec::new();
    for f in EXEMPTION_FIELDS {
        let v = exemptions.and_then(|m| m.get(*f)).unwrap_or(&Value::Null);
        let path = format!("exemptions.{f}");
        let items = match v {
            Value::Null => Vec::new(),
            Value::Array(a) => a
                .iter()
                .map(|x| match x {
                    Value::String(s) => Ok(s.clone()),
                    Value::Null => Ok(String::new()),
                    other => Err(type_error(other, "PodSecurityExemptions", &path, "string")),
                })
                .collect::<Result<Vec<_>, _>>()?,
            other => {
                return Err(type_error(
                    other,
                    "PodSecurityExemptions",
                    &path,
                    "[]string",
                ))
            }
        };
        lists.push(items);
    }
    if !unknown.is_empty() {
        return Err(format!("strict decoding error: {}", unknown.join(", ")));
    }
    // kube's CompleteConfiguration: the defaults as a policy.
    let mut errs = Vec::new();
    let level = |i: usize, errs: &mut Vec<String>| {
        Level::parse(&d[i]).unwrap_or_else(|e| {
            errs.push(format!("{}: {e}", DEFAULT_FIELDS[i]));
            Level::Restricted
        })
    };
    let version = |i: usize, errs: &mut Vec<String>| {
        Version::parse(&d[i]).unwrap_or_else(|e| {
            errs.push(format!("{}: {e}", DEFAULT_FIELDS[i]));
            Version::Latest
        })
    };
    let defaults = Policy {
        enforce: LevelVersion {
            level: level(0, &mut errs),
            version: version(1, &mut errs),
        },
        audit: LevelVersion {
            level: level(2, &mut errs),
            version: version(3, &mut errs),
        },
        warn: LevelVersion {
            level: level(4, &mut errs),
            version: version(5, &mut errs),
        },
    };
    match errs.len() {
        0 => {}
        1 => return Err(format!("PodSecurity configuration error: {}", errs[0])),
        _ => {
            return Err(format!(
                "PodSecurity configuration error: [{}]",
                errs.join(", ")
            ))
        }
    }
    // kube's ValidatePodSecurityConfiguration, for the exemptions.
    let [usernames, namespaces, runtime_classes]: [Vec<String>; 3] = lists
        .try_into()
        .map_err(|_| "PodSecurity configuration error".to_string())?;
    let mut ferrs = Vec::new();
    let mut check = |items: &[String], field: &str, valid: &dyn Fn(&str) -> Vec<String>| {
        let mut seen: Vec<&str> = Vec::new();
        for (i, it) in items.iter().enumerate() {
            let path = format!("exemptions.{field}[{i}]");
            let problems = valid(it);
            if !problems.is_empty() {
                ferrs.push(FieldError::invalid(
                    path,
                    Value::String(it.clone()),
                    problems.join(", "),
                ));
            } else if seen.contains(&it.as_str()) {
                ferrs.push(FieldError::duplicate(path, Value::String(it.clone())));
            } else {
                seen.push(it);
            }
        }
    };
    check(&namespaces, "namespaces", &|s| is_dns1123_label(s));
    check(&runtime_classes, "runtimeClasses", &|s| {
        is_dns1123_subdomain(s)
    });
    check(&usernames, "usernames", &|s| {
        if s.is_empty() {
            vec!["username must not be empty".to_string()]
        } else {
            Vec::new()
        }
    });
    if !ferrs.is_empty() {
        return Err(format!(
            "PodSecurity invalid: {}",
            aggregate_message(&ferrs)
        ));
    }
    Ok(Config {
        defaults,
        usernames,
        namespaces,
        runtime_classes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_versions_and_kubes_texts() {
        assert_eq!(parse(None).unwrap(), Config::default());
        for v in VERSIONS {
            let c = parse(Some(&json!({
                "apiVersion": format!("{GROUP}/{v}"), "kind": KIND,
                "defaults": {"enforce": "baseline", "warn-version": "v1.25"},
                "exemptions": {"usernames": ["alice"], "namespaces": ["kube-system"]}
            })))
            .unwrap();
            assert_eq!(c.defaults.enforce.to_string(), "baseline:latest");
            assert_eq!(c.defaults.warn.to_string(), "privileged:v1.25");
            assert_eq!(c.defaults.audit.to_string(), "privileged:latest");
            assert_eq!(c.usernames, ["alice"]);
        }
        let bad = |v: Value| parse(Some(&v)).unwrap_err();
        let head = json!({"apiVersion": format!("{GROUP}/v1"), "kind": KIND});
        let with = |k: &str, v: Value| {
            let mut h = head.clone();
            h[k] = v;
            h
        };
        assert_eq!(
            bad(with("defaults", json!({"enforce": "strict"}))),
            "PodSecurity configuration error: enforce: must be one of privileged, baseline, restricted"
        );
        assert_eq!(
            bad(with("defaults", json!({"enforce-version": "1.2", "audit": "x"}))),
            "PodSecurity configuration error: [enforce-version: must be \"latest\" or \"v1.x\", audit: must be one of privileged, baseline, restricted]"
        );
        assert_eq!(
            bad(with("defaults", json!({"enforcee": "baseline"}))),
            "strict decoding error: unknown field \"defaults.enforcee\""
        );
        assert_eq!(
            bad(with("exemptions", json!({"namespaces": ["ok", "ok", "Bad"], "usernames": [""]}))),
            "PodSecurity invalid: [exemptions.namespaces[1]: Duplicate value: \"ok\", exemptions.namespaces[2]: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), exemptions.usernames[0]: Invalid value: \"\": username must not be empty]"
        );
        assert!(bad(json!({"apiVersion": format!("{GROUP}/v2"), "kind": KIND}))
            .starts_with("no kind \"PodSecurityConfiguration\" is registered for version \"pod-security.admission.config.k8s.io/v2\""));
        assert!(bad(json!({})).starts_with("Object 'Kind' is missing in '{}'"));
    }
}
