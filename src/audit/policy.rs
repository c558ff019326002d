//! The audit policy (`--audit-policy-file`): an `audit.k8s.io/v1` `Policy` read as kube's
//! `LoadPolicyFromFile` reads it (JSON or YAML; strict decoding first, unknown fields only
//! warned about; other group-versions refused; kube's validation messages; at least one
//! rule), and kube's checker: the first rule that matches a request decides its level, its
//! omitted stages (the rule's and the policy's) and whether managedFields are left out; no
//! match is level `None`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::meta::field_error::{aggregate_message, FieldError};

/// How much of a request is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Level {
    #[default]
    None,
    Metadata,
    Request,
    RequestResponse,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }

    fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "None" => Level::None,
            "Metadata" => Level::Metadata,
            "Request" => Level::Request,
            "RequestResponse" => Level::RequestResponse,
            _ => return None,
        })
    }
}

/// A point of a request's life at which an event is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    RequestReceived,
    ResponseStarted,
    ResponseComplete,
    Panic,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }

    fn parse(s: &str) -> Option<Stage> {
        Some(match s {
            "RequestReceived" => Stage::RequestReceived,
            "ResponseStarted" => Stage::ResponseStarted,
            "ResponseComplete" => Stage::ResponseComplete,
            "Panic" => Stage::Panic,
            _ => return None,
        })
    }
}

const VALID_LEVELS: &[&str] = &["None", "Metadata", "Request", "RequestResponse"];
const VALID_STAGES: &[&str] = &[
    "RequestReceived",
    "ResponseStarted",
    "ResponseComplete",
    "Panic",
];

/// `GroupResources` of a rule.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GroupResources {
    pub group: String,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct RawRule {
    level: String,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    #[serde(rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    omit_stages: Vec<String>,
    omit_managed_fields: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct RawPolicy {
    rules: Vec<RawRule>,
    omit_stages: Vec<String>,
    omit_managed_fields: bool,
}

/// One rule, validated.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    pub level: Level,
    pub users: Vec<String>,
    pub user_groups: Vec<String>,
    pub verbs: Vec<String>,
    pub resources: Vec<GroupResources>,
    pub namespaces: Vec<String>,
    pub non_resource_urls: Vec<String>,
    /// The rule's stages and the policy's.
    pub omit_stages: Vec<Stage>,
    pub omit_managed_fields: Option<bool>,
}

/// A loaded policy.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub rules: Vec<Rule>,
    pub omit_stages: Vec<Stage>,
    pub omit_managed_fields: bool,
}

/// What the policy says about one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestConfig {
    pub level: Level,
    pub omit_stages: Vec<Stage>,
    pub omit_managed_fields: bool,
}

/// A request as the checker sees it (kube's authorizer attributes).
pub struct Attributes<'a> {
    /// `None` for a request that failed authentication.
    pub user: Option<&'a crate::authn::UserInfo>,
    pub verb: &'a str,
    /// `Some` for resource requests.
    pub resource: Option<ResourceAttrs<'a>>,
    /// The path of a non-resource request.
    pub path: &'a str,
}

pub struct ResourceAttrs<'a> {
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

/// Why a policy file does not load (kube's texts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError(pub String);

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

/// kube's `LoadPolicyFromFile`, with the `loading audit policy file: ` prefix of its options.
pub fn load_file(path: &std::path::Path) -> Result<Policy, PolicyError> {
    let bytes = std::fs::read(path).map_err(|e| {
        PolicyError(format!(
            "loading audit policy file: failed to read file path {:?}: {e}",
            path.display().to_string()
        ))
    })?;
    load_bytes(&bytes).map_err(|e| {
        PolicyError(format!(
            "loading audit policy file: {}: from file {}",
            e.0,
            path.display()
        ))
    })
}

/// kube's `LoadPolicyFromBytes`.
pub fn load_bytes(bytes: &[u8]) -> Result<Policy, PolicyError> {
    // YAML is a superset of JSON: one reader for both.
    let doc: Value =
        serde_yaml::from_slice(bytes).map_err(|e| PolicyError(format!("failed decoding: {e}")))?;
    let api_version = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind.is_empty() {
        return Err(PolicyError(format!(
            "failed decoding: Object 'Kind' is missing in '{}'",
            String::from_utf8_lossy(bytes).trim()
        )));
    }
    if api_version != "audit.k8s.io/v1" || kind != "Policy" {
        return Err(PolicyError(format!(
            "failed decoding: no kind {kind:?} is registered for version {api_version:?} in scheme \"k8s.io/apiserver/pkg/audit/scheme.go:30\""
        )));
    }
    let unknown = unknown_fields(&doc);
    if !unknown.is_empty() {
        tracing::warn!(
            "Audit policy contains errors, falling back to lenient decoding: {}",
            unknown.join(", ")
        );
    }
    let raw: RawPolicy = serde_json::from_value(doc)
        .map_err(|e| PolicyError(format!("failed lenient decoding: {e}")))?;
    let errs = validate(&raw);
    if !errs.is_empty() {
        return Err(PolicyError(aggregate_message(&errs)));
    }
    if raw.rules.is_empty() {
        return Err(PolicyError("loaded illegal policy with 0 rules".into()));
    }
    let policy_stages: Vec<Stage> = raw
        .omit_stages
        .iter()
        .filter_map(|s| Stage::parse(s))
        .collect();
    let rules = raw
        .rules
        .into_iter()
        .map(|r| {
            let mut stages: Vec<Stage> = policy_stages
                .iter()
                .copied()
                .chain(r.omit_stages.iter().filter_map(|s| Stage::parse(s)))
                .collect();
            stages.sort();
            stages.dedup();
            Rule {
                level: Level::parse(&r.level).unwrap_or_default(),
                users: r.users,
                user_groups: r.user_groups,
                verbs: r.verbs,
                resources: r.resources,
                namespaces: r.namespaces,
                non_resource_urls: r.non_resource_urls,
                omit_stages: stages,
                omit_managed_fields: r.omit_managed_fields,
            }
        })
        .collect();
    Ok(Policy {
        rules,
        omit_stages: policy_stages,
        omit_managed_fields: raw.omit_managed_fields,
    })
}

/// Fields a strict decoder would refuse (reported as kube's strict errors, then ignored).
fn unknown_fields(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let known = |v: &Value, keys: &[&str], at: &str, out: &mut Vec<String>| {
        if let Some(m) = v.as_object() {
            for k in m.keys() {
                if !keys.contains(&k.as_str()) {
                    out.push(format!("unknown field \"{at}{k}\""));
                }
            }
        }
    };
    known(
        doc,
        &[
            "apiVersion",
            "kind",
            "metadata",
            "rules",
            "omitStages",
            "omitManagedFields",
        ],
        "",
        &mut out,
    );
    for (i, r) in doc
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        known(
            r,
            &[
                "level",
                "users",
                "userGroups",
                "verbs",
                "resources",
                "namespaces",
                "nonResourceURLs",
                "omitStages",
                "omitManagedFields",
            ],
            &format!("rules[{i}]."),
            &mut out,
        );
        for (j, g) in r
            .get("resources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            known(
                g,
                &["group", "resources", "resourceNames"],
                &format!("rules[{i}].resources[{j}]."),
                &mut out,
            );
        }
    }
    out
}

/// kube's `ValidatePolicy`.
fn validate(p: &RawPolicy) -> Vec<FieldError> {
    let mut errs = validate_omit_stages(&p.omit_stages, "omitStages");
    for (i, r) in p.rules.iter().enumerate() {
        let at = format!("rules[{i}]");
        match r.level.as_str() {
            "None" | "Metadata" | "Request" | "RequestResponse" => {}
            "" => errs.push(FieldError::required(format!("{at}.level"), "")),
            other => errs.push(FieldError::not_supported(
                format!("{at}.level"),
                json!(other),
                VALID_LEVELS,
            )),
        }
        for (j, url) in r.non_resource_urls.iter().enumerate() {
            if url == "*" {
                continue;
            }
            let field = format!("{at}.nonResourceURLs[{j}]");
            if !url.starts_with('/') {
                errs.push(FieldError::invalid(
                    field.clone(),
                    json!(url),
                    "non-resource URL rules must begin with a '/' character",
                ));
            }
            if !url.is_empty() && url[..url.len() - 1].contains('*') {
                errs.push(FieldError::invalid(
                    field,
                    json!(url),
                    "non-resource URL wildcards '*' must be the final character of the rule",
                ));
            }
        }
        for g in &r.resources {
            if !g.group.is_empty() {
                let msgs = crate::meta::validation::is_dns1123_subdomain(&g.group);
                if !msgs.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("{at}.resources.group"),
                        json!(g.group),
                        msgs.join(","),
                    ));
                }
            }
            if !g.resource_names.is_empty() && g.resources.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{at}.resources.resourceNames"),
                    json!(g.resource_names),
                    "using resourceNames requires at least one resource",
                ));
            }
        }
        errs.extend(validate_omit_stages(
            &r.omit_stages,
            &format!("{at}.omitStages"),
        ));
        if !r.non_resource_urls.is_empty() && (!r.resources.is_empty() || !r.namespaces.is_empty())
        {
            errs.push(FieldError::invalid(
                format!("{at}.nonResourceURLs"),
                json!(r.non_resource_urls),
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
    }
    errs
}

fn validate_omit_stages(stages: &[String], at: &str) -> Vec<FieldError> {
    stages
        .iter()
        .enumerate()
        .filter(|(_, s)| Stage::parse(s).is_none())
        .map(|(i, s)| {
            FieldError::invalid(
                format!("{at}[{i}]"),
                json!(s),
                format!("allowed stages are {}", VALID_STAGES.join(",")),
            )
        })
        .collect()
}

impl Policy {
    /// kube's `EvaluatePolicyRule`: the first matching rule, else `None` with the policy's
    /// stages.
    pub fn evaluate(&self, attrs: &Attributes<'_>) -> RequestConfig {
        for r in &self.rules {
            if r.matches(attrs) {
                return RequestConfig {
                    level: r.level,
                    omit_stages: r.omit_stages.clone(),
                    omit_managed_fields: r.omit_managed_fields.unwrap_or(self.omit_managed_fields),
                };
            }
        }
        RequestConfig {
            level: Level::None,
            omit_stages: self.omit_stages.clone(),
            omit_managed_fields: self.omit_managed_fields,
        }
    }
}

impl Rule {
    fn matches(&self, attrs: &Attributes<'_>) -> bool {
        if !self.users.is_empty() && !attrs.user.is_some_and(|u| self.users.contains(&u.name)) {
            return false;
        }
        if !self.user_groups.is_empty()
            && !attrs
                .user
                .is_some_and(|u| u.groups.iter().any(|g| self.user_groups.contains(g)))
        {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.iter().any(|v| v == attrs.verb) {
            return false;
        }
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return self.matches_resource(attrs);
        }
        if !self.non_resource_urls.is_empty() {
            return attrs.resource.is_none()
                && self
                    .non_resource_urls
                    .iter()
                    .any(|spec| path_matches(attrs.path, spec));
        }
        true
    }

    fn matches_resource(&self, attrs: &Attributes<'_>) -> bool {
        let Some(r) = &attrs.resource else {
            return false;
        };
        // Cluster-scoped resources have the empty namespace.
        if !self.namespaces.is_empty() && !self.namespaces.iter().any(|n| n == r.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let combined = if r.subresource.is_empty() {
            r.resource.to_string()
        } else {
            format!("{}/{}", r.resource, r.subresource)
        };
        for gr in self.resources.iter().filter(|gr| gr.group == r.group) {
            if gr.resources.is_empty() {
                return true;
            }
            if !gr.resource_names.is_empty() && !gr.resource_names.iter().any(|n| n == r.name) {
                continue;
            }
            for res in &gr.resources {
                if *res == combined || res == "*" {
                    return true;
                }
                if !r.subresource.is_empty() && res.strip_prefix("*/") == Some(r.subresource) {
                    return true;
                }
                if res.strip_suffix("/*") == Some(r.resource) {
                    return true;
                }
            }
        }
        false
    }
}

/// kube's `pathMatches`: `*`, the exact path, or a prefix ending in `*`.
fn path_matches(path: &str, spec: &str) -> bool {
    spec == "*"
        || spec == path
        || (spec.ends_with('*') && path.starts_with(spec.trim_end_matches('*')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::UserInfo;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    fn res<'a>(
        u: &'a UserInfo,
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        sub: &'a str,
        ns: &'a str,
        name: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            user: Some(u),
            verb,
            resource: Some(ResourceAttrs {
                group,
                resource,
                subresource: sub,
                namespace: ns,
                name,
            }),
            path: "",
        }
    }

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["pods/log", "configmaps"]
  omitManagedFields: true
- level: Request
  userGroups: ["devs"]
  verbs: ["create"]
  namespaces: ["team"]
  omitStages: [ResponseStarted]
- level: Metadata
  resources:
  - group: apps
    resources: ["*/scale"]
  - group: ""
    resources: ["secrets"]
    resourceNames: ["one"]
- level: Metadata
  nonResourceURLs: ["/healthz*", "/version"]
"#;

    #[test]
    fn first_matching_rule_wins() {
        let p = load_bytes(POLICY.as_bytes()).unwrap();
        let admin = user("admin", &["system:masters"]);
        let proxy = user("system:kube-proxy", &[]);
        let dev = user("bob", &["devs"]);
        let lvl = |a: Attributes<'_>| p.evaluate(&a).level;
        assert_eq!(
            lvl(res(&proxy, "get", "", "configmaps", "", "a", "x")),
            Level::None
        );
        let c = p.evaluate(&res(&admin, "get", "", "configmaps", "", "a", "x"));
        assert_eq!(c.level, Level::RequestResponse);
        assert!(c.omit_managed_fields);
        assert_eq!(c.omit_stages, vec![Stage::RequestReceived]);
        assert_eq!(
            lvl(res(&admin, "get", "", "pods", "log", "a", "x")),
            Level::RequestResponse
        );
        assert_eq!(
            lvl(res(&admin, "get", "", "pods", "", "a", "x")),
            Level::None
        );
        let c = p.evaluate(&res(&dev, "create", "", "pods", "", "team", ""));
        assert_eq!(c.level, Level::Request);
        assert!(!c.omit_managed_fields);
        assert_eq!(
            c.omit_stages,
            vec![Stage::RequestReceived, Stage::ResponseStarted]
        );
        assert_eq!(
            lvl(res(&dev, "create", "", "pods", "", "other", "")),
            Level::None
        );
        assert_eq!(
            lvl(res(
                &admin,
                "update",
                "apps",
                "deployments",
                "scale",
                "a",
                "d"
            )),
            Level::Metadata
        );
        assert_eq!(
            lvl(res(&admin, "get", "", "secrets", "", "a", "one")),
            Level::Metadata
        );
        assert_eq!(
            lvl(res(&admin, "get", "", "secrets", "", "a", "two")),
            Level::None
        );
        let path = |p2: &'static str| Attributes {
            user: Some(&admin),
            verb: "get",
            resource: None,
            path: p2,
        };
        assert_eq!(p.evaluate(&path("/healthz/ready")).level, Level::Metadata);
        assert_eq!(p.evaluate(&path("/version")).level, Level::Metadata);
        assert_eq!(p.evaluate(&path("/metrics")).level, Level::None);
        // A failed authentication has no user: user and group rules never match it.
        let anon = Attributes {
            user: None,
            verb: "get",
            resource: None,
            path: "/version",
        };
        assert_eq!(p.evaluate(&anon).level, Level::Metadata);
    }

    #[test]
    fn resource_wildcards() {
        let p = load_bytes(
            br#"{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[
              {"level":"Request","resources":[{"group":"","resources":["pods/*"]}]},
              {"level":"Metadata","resources":[{"group":"","resources":["*"]}]}]}"#,
        )
        .unwrap();
        let u = user("u", &[]);
        assert_eq!(
            p.evaluate(&res(&u, "get", "", "pods", "status", "a", "p"))
                .level,
            Level::Request
        );
        // kube's `resource/*` also matches the resource itself.
        assert_eq!(
            p.evaluate(&res(&u, "get", "", "pods", "", "a", "p")).level,
            Level::Request
        );
        assert_eq!(
            p.evaluate(&res(&u, "get", "", "configmaps", "", "a", "p"))
                .level,
            Level::Metadata
        );
        assert_eq!(
            p.evaluate(&res(&u, "get", "apps", "deployments", "", "a", "p"))
                .level,
            Level::None
        );
    }

    #[test]
    fn kube_validation_messages() {
        let err = |s: &str| load_bytes(s.as_bytes()).unwrap_err().0;
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Foo\n"),
            r#"rules[0].level: Unsupported value: "Foo": supported values: "None", "Metadata", "Request", "RequestResponse""#
        );
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- users: [a]\n"),
            "rules[0].level: Required value"
        );
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n"),
            "loaded illegal policy with 0 rules"
        );
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Bad]\nrules:\n- level: None\n  nonResourceURLs: [\"api/*/x\"]\n  namespaces: [a]\n"),
            r#"[omitStages[0]: Invalid value: "Bad": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[0].nonResourceURLs[0]: Invalid value: "api/*/x": non-resource URL rules must begin with a '/' character, rules[0].nonResourceURLs[0]: Invalid value: "api/*/x": non-resource URL wildcards '*' must be the final character of the rule, rules[0].nonResourceURLs: Invalid value: []string{"api/*/x"}: rules cannot apply to both regular resources and non-resource URLs]"#
        );
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n"),
            r#"failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1" in scheme "k8s.io/apiserver/pkg/audit/scheme.go:30""#
        );
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  resources:\n  - resourceNames: [x]\n"),
            r#"rules[0].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one resource"#
        );
    }
}
