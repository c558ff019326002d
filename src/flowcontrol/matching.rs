//! Which FlowSchema a request belongs to (kube's `matchesFlowSchema`): a schema matches when
//! one of its rules matches, and a rule matches when one of its subjects is the user and one
//! of its resource rules (for a resource request) or non-resource rules (for any other path)
//! matches what the request does. `*` matches everything in every list; a non-resource URL
//! ending in `/*` (or any URL, as a path prefix) matches the paths under it.

use serde_json::Value;

use crate::server::request_info::RequestInfo;
use crate::server::User;

/// What classification looks at.
pub struct Digest<'a> {
    pub user: &'a User,
    /// `None` for a non-resource request.
    pub info: Option<&'a RequestInfo>,
    /// The request verb: RequestInfo's for resource requests, the lower-cased method otherwise.
    pub verb: &'a str,
    pub path: &'a str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    User(String),
    Group(String),
    /// (namespace, name); name `*` is every service account of the namespace.
    ServiceAccount(String, String),
}

#[derive(Clone, Debug, Default)]
pub struct ResourceRule {
    pub verbs: Vec<String>,
    pub groups: Vec<String>,
    pub resources: Vec<String>,
    pub cluster_scope: bool,
    pub namespaces: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct NonResourceRule {
    pub verbs: Vec<String>,
    pub urls: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Rule {
    pub subjects: Vec<Subject>,
    pub resource_rules: Vec<ResourceRule>,
    pub non_resource_rules: Vec<NonResourceRule>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distinguisher {
    None,
    ByUser,
    ByNamespace,
}

/// A FlowSchema, digested.
#[derive(Clone, Debug)]
pub struct Schema {
    pub name: String,
    pub uid: String,
    pub precedence: i64,
    pub level: String,
    pub distinguisher: Distinguisher,
    pub rules: Vec<Rule>,
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

fn subject(s: &Value) -> Option<Subject> {
    match str_at(s, "/kind") {
        "User" => Some(Subject::User(str_at(s, "/user/name").to_string())),
        "Group" => Some(Subject::Group(str_at(s, "/group/name").to_string())),
        "ServiceAccount" => Some(Subject::ServiceAccount(
            str_at(s, "/serviceAccount/namespace").to_string(),
            str_at(s, "/serviceAccount/name").to_string(),
        )),
        _ => None,
    }
}

impl Schema {
    /// Digests a stored FlowSchema (already validated by its strategy).
    pub fn parse(obj: &Value) -> Schema {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let list = |v: &Value, k: &str| -> Vec<Value> {
            v.get(k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let rules = list(spec, "rules")
            .iter()
            .map(|r| Rule {
                subjects: list(r, "subjects").iter().filter_map(subject).collect(),
                resource_rules: list(r, "resourceRules")
                    .iter()
                    .map(|rr| ResourceRule {
                        verbs: strings(rr, "verbs"),
                        groups: strings(rr, "apiGroups"),
                        resources: strings(rr, "resources"),
                        cluster_scope: rr.get("clusterScope").and_then(Value::as_bool)
                            == Some(true),
                        namespaces: strings(rr, "namespaces"),
                    })
                    .collect(),
                non_resource_rules: list(r, "nonResourceRules")
                    .iter()
                    .map(|nr| NonResourceRule {
                        verbs: strings(nr, "verbs"),
                        urls: strings(nr, "nonResourceURLs"),
                    })
                    .collect(),
            })
            .collect();
        Schema {
            name: str_at(obj, "/metadata/name").to_string(),
            uid: str_at(obj, "/metadata/uid").to_string(),
            precedence: spec
                .get("matchingPrecedence")
                .and_then(Value::as_i64)
                .unwrap_or(1000),
            level: str_at(spec, "/priorityLevelConfiguration/name").to_string(),
            distinguisher: match str_at(spec, "/distinguisherMethod/type") {
                "ByUser" => Distinguisher::ByUser,
                "ByNamespace" => Distinguisher::ByNamespace,
                _ => Distinguisher::None,
            },
            rules,
        }
    }

    pub fn matches(&self, d: &Digest<'_>) -> bool {
        self.rules.iter().any(|r| r.matches(d))
    }

    /// The flow a request of this schema belongs to, within the schema.
    pub fn distinguisher_of(&self, d: &Digest<'_>) -> String {
        match self.distinguisher {
            Distinguisher::None => String::new(),
            Distinguisher::ByUser => d.user.name.clone(),
            Distinguisher::ByNamespace => d
                .info
                .and_then(|i| i.path_namespace.clone())
                .unwrap_or_default(),
        }
    }
}

fn has(list: &[String], v: &str, all: &str) -> bool {
    list.iter().any(|x| x == all || x == v)
}

impl Subject {
    fn matches(&self, u: &User) -> bool {
        match self {
            Subject::User(n) => n == "*" || *n == u.name,
            Subject::Group(g) => g == "*" || u.groups.iter().any(|x| x == g),
            Subject::ServiceAccount(ns, name) => {
                let Some(rest) = u.name.strip_prefix("system:serviceaccount:") else {
                    return false;
                };
                let Some((uns, uname)) = rest.split_once(':') else {
                    return false;
                };
                uns == ns && (name == "*" || uname == name)
            }
        }
    }
}

impl Rule {
    fn matches(&self, d: &Digest<'_>) -> bool {
        if !self.subjects.iter().any(|s| s.matches(d.user)) {
            return false;
        }
        match d.info {
            Some(i) => self.resource_rules.iter().any(|r| r.matches(d.verb, i)),
            None => self
                .non_resource_rules
                .iter()
                .any(|r| r.matches(d.verb, d.path)),
        }
    }
}

impl ResourceRule {
    fn matches(&self, verb: &str, i: &RequestInfo) -> bool {
        if !has(&self.verbs, verb, "*") || !has(&self.groups, &i.group, "*") {
            return false;
        }
        let resource_ok = match &i.subresource {
            None => has(&self.resources, &i.resource, "*"),
            Some(sub) => has(&self.resources, &format!("{}/{sub}", i.resource), "*"),
        };
        if !resource_ok {
            return false;
        }
        match i.path_namespace.as_deref().filter(|n| !n.is_empty()) {
            None => self.cluster_scope,
            Some(ns) => has(&self.namespaces, ns, "*"),
        }
    }
}

impl NonResourceRule {
    fn matches(&self, verb: &str, path: &str) -> bool {
        if !has(&self.verbs, verb, "*") {
            return false;
        }
        self.urls.iter().any(|u| {
            if u == "*" || u == path {
                return true;
            }
            let prefix = u.strip_suffix('*').unwrap_or(u);
            let prefix = if prefix.ends_with('/') {
                prefix.to_string()
            } else {
                format!("{prefix}/")
            };
            path.starts_with(&prefix)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(name: &str, groups: &[&str]) -> User {
        User {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    fn info(
        verb: &'static str,
        group: &str,
        resource: &str,
        sub: Option<&str>,
        ns: Option<&str>,
    ) -> RequestInfo {
        RequestInfo {
            group: group.into(),
            version: "v1".into(),
            namespace: ns.map(str::to_string),
            path_namespace: ns.map(str::to_string),
            resource: resource.into(),
            subresource: sub.map(str::to_string),
            verb,
            ..Default::default()
        }
    }

    #[test]
    fn rules_match_as_kube_matches_them() {
        let s = Schema::parse(&json!({"metadata": {"name": "s"}, "spec": {
            "priorityLevelConfiguration": {"name": "p"},
            "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": "*"}},
                                    {"kind": "User", "user": {"name": "bob"}}],
                       "resourceRules": [{"verbs": ["get", "update"], "apiGroups": ["coordination.k8s.io"],
                                          "resources": ["leases", "pods/status"], "namespaces": ["*"]}],
                       "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]}]}]}}));
        let sa = user("system:serviceaccount:kube-system:x", &[]);
        let other_sa = user("system:serviceaccount:default:x", &[]);
        let bob = user("bob", &[]);
        let lease = info("update", "coordination.k8s.io", "leases", None, Some("ns"));
        fn digest<'a>(
            user: &'a User,
            info: Option<&'a RequestInfo>,
            verb: &'a str,
            path: &'a str,
        ) -> Digest<'a> {
            Digest {
                user,
                info,
                verb,
                path,
            }
        }
        assert!(s.matches(&digest(&sa, Some(&lease), "update", "")));
        assert!(!s.matches(&digest(&other_sa, Some(&lease), "update", "")));
        assert!(!s.matches(&digest(
            &bob,
            Some(&info(
                "delete",
                "coordination.k8s.io",
                "leases",
                None,
                Some("ns")
            )),
            "delete",
            ""
        )));
        // A cluster-scoped request needs clusterScope.
        assert!(!s.matches(&digest(
            &bob,
            Some(&info("get", "coordination.k8s.io", "leases", None, None)),
            "get",
            ""
        )));
        // Subresources are named resource/subresource.
        let status = info(
            "get",
            "coordination.k8s.io",
            "pods",
            Some("status"),
            Some("a"),
        );
        assert!(s.matches(&digest(&bob, Some(&status), "get", "")));
        assert!(!s.matches(&digest(
            &bob,
            Some(&info("get", "coordination.k8s.io", "pods", None, Some("a"))),
            "get",
            ""
        )));
        // Non-resource paths: exact, and prefixes.
        assert!(s.matches(&digest(&bob, None, "get", "/healthz")));
        assert!(s.matches(&digest(&bob, None, "get", "/healthz/etcd")));
        assert!(s.matches(&digest(&bob, None, "get", "/apis/apps")));
        assert!(!s.matches(&digest(&bob, None, "get", "/apis")));
        assert!(!s.matches(&digest(&bob, None, "post", "/healthz")));
        assert!(!s.matches(&digest(&bob, None, "get", "/livez")));
    }
}
