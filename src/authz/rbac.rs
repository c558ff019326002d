//! RBAC: kube's role-based authorizer (`rbac.authorization.k8s.io/v1`), evaluated from an
//! in-memory [`Index`] of Roles, ClusterRoles, RoleBindings and ClusterRoleBindings that the
//! replica's watch cache keeps current (no storage read per request).
//!
//! Owns: [`PolicyRule`] and kube's rule matching ([`rule_allows`]), bindings indexed by
//! subject (a user's bindings are found without scanning every binding), the decision with
//! kube's reasons (`RBAC: allowed by ...`, resolution errors), the rules a user holds (for
//! SelfSubjectRulesReview and escalation checks), escalation prevention ([`covers`],
//! [`escalation_message`]) and ClusterRole aggregation ([`aggregated_rules`]).
//! Does not know: how objects reach the index (the authorizer's followers feed it), HTTP.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{json, Value};

use super::{Attributes, Decision};
use crate::authn::UserInfo;

pub const GROUP: &str = "rbac.authorization.k8s.io";
pub const SA_PREFIX: &str = "system:serviceaccount:";

/// rbac.authorization.k8s.io/v1 PolicyRule.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl PolicyRule {
    pub fn from_json(v: &Value) -> PolicyRule {
        PolicyRule {
            verbs: strings(v.get("verbs")),
            api_groups: strings(v.get("apiGroups")),
            resources: strings(v.get("resources")),
            resource_names: strings(v.get("resourceNames")),
            non_resource_urls: strings(v.get("nonResourceURLs")),
        }
    }

    /// The JSON form, lists present only when non-empty (verbs always).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("verbs".into(), json!(self.verbs));
        for (k, l) in [
            ("apiGroups", &self.api_groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("nonResourceURLs", &self.non_resource_urls),
        ] {
            if !l.is_empty() {
                m.insert(k.into(), json!(l));
            }
        }
        Value::Object(m)
    }

    /// kube's `CompactString`, used in escalation messages.
    pub fn compact_string(&self) -> String {
        let q = |l: &[String]| {
            let parts: Vec<String> = l.iter().map(|s| format!("{s:?}")).collect();
            format!("[{}]", parts.join(" "))
        };
        let mut parts = Vec::new();
        for (k, l) in [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ] {
            if !l.is_empty() {
                parts.push(format!("{k}:{}", q(l)));
            }
        }
        format!("{{{}}}", parts.join(", "))
    }
}

/// The rules of a role object (`rules`).
pub fn rules_of(obj: &Value) -> Vec<PolicyRule> {
    obj.get("rules")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(PolicyRule::from_json).collect())
        .unwrap_or_default()
}

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

/// kube's `RuleAllows`.
pub fn rule_allows(attrs: &Attributes<'_>, rule: &PolicyRule) -> bool {
    match attrs {
        Attributes::Resource(r) => {
            if !(has(&rule.verbs, "*") || has(&rule.verbs, r.verb)) {
                return false;
            }
            if !(has(&rule.api_groups, "*") || has(&rule.api_groups, r.group)) {
                return false;
            }
            let resource_ok = rule.resources.iter().any(|rr| {
                if rr == "*" {
                    return true;
                }
                match r.subresource {
                    None => rr == r.resource,
                    Some(sub) => {
                        rr.strip_prefix("*/") == Some(sub)
                            || rr
                                .split_once('/')
                                .is_some_and(|(a, b)| a == r.resource && b == sub)
                    }
                }
            });
            if !resource_ok {
                return false;
            }
            rule.resource_names.is_empty() || r.name.is_some_and(|n| has(&rule.resource_names, n))
        }
        Attributes::NonResource { path, verb } => {
            (has(&rule.verbs, "*") || has(&rule.verbs, verb))
                && rule.non_resource_urls.iter().any(|u| url_covers(u, path))
        }
    }
}

fn url_covers(owner: &str, path: &str) -> bool {
    owner == "*"
        || owner == path
        || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

/// kube's `RulesAllow`.
pub fn rules_allow(attrs: &Attributes<'_>, rules: &[PolicyRule]) -> bool {
    rules.iter().any(|r| rule_allows(attrs, r))
}

/// A binding's subject, as RBAC matches users against it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    User(String),
    Group(String),
}

#[derive(Clone, Debug)]
struct Subject {
    kind: String,
    name: String,
    namespace: String,
}

#[derive(Clone, Debug)]
struct Binding {
    namespace: Option<String>,
    name: String,
    role_kind: String,
    role_name: String,
    subjects: Vec<Subject>,
}

impl Binding {
    fn from_json(obj: &Value) -> Option<Binding> {
        let m = obj.get("metadata")?;
        let role = obj.get("roleRef")?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Some(Binding {
            namespace: m
                .get("namespace")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(str::to_string),
            name: s(m, "name"),
            role_kind: s(role, "kind"),
            role_name: s(role, "name"),
            subjects: obj
                .get("subjects")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|x| Subject {
                            kind: s(x, "kind"),
                            name: s(x, "name"),
                            namespace: s(x, "namespace"),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// The index keys of a subject (a service account is the user it authenticates as).
    fn key(&self, s: &Subject) -> Option<Key> {
        match s.kind.as_str() {
            "User" => Some(Key::User(s.name.clone())),
            "Group" => Some(Key::Group(s.name.clone())),
            "ServiceAccount" => {
                let ns = if s.namespace.is_empty() {
                    self.namespace.as_deref()?
                } else {
                    &s.namespace
                };
                Some(Key::User(format!("{SA_PREFIX}{ns}:{}", s.name)))
            }
            _ => None,
        }
    }

    /// The first subject that applies to the user (kube's `appliesTo`).
    fn applies_to(&self, user: &UserInfo) -> Option<&Subject> {
        self.subjects.iter().find(|s| match self.key(s) {
            Some(Key::User(n)) => n == user.name,
            Some(Key::Group(g)) => user.groups.contains(&g),
            None => false,
        })
    }

    /// kube's binding describer (`ClusterRoleBinding "x" of ClusterRole "y" to User "z"`).
    fn describe(&self, s: &Subject) -> String {
        let subject = match s.kind.as_str() {
            "ServiceAccount" => {
                let ns = if s.namespace.is_empty() {
                    self.namespace.as_deref().unwrap_or("")
                } else {
                    &s.namespace
                };
                format!("{} {:?}", s.kind, format!("{}/{ns}", s.name))
            }
            _ => format!("{} {:?}", s.kind, s.name),
        };
        match &self.namespace {
            None => format!(
                "ClusterRoleBinding {:?} of {} {:?} to {subject}",
                self.name, self.role_kind, self.role_name
            ),
            Some(ns) => format!(
                "RoleBinding {:?} of {} {:?} to {subject}",
                format!("{}/{ns}", self.name),
                self.role_kind,
                self.role_name
            ),
        }
    }
}

type BindingId = (Option<String>, String);

/// Roles and bindings of the cluster, with bindings indexed by subject.
#[derive(Default)]
pub struct Index {
    cluster_roles: HashMap<String, Arc<[PolicyRule]>>,
    roles: HashMap<(String, String), Arc<[PolicyRule]>>,
    bindings: HashMap<BindingId, Arc<Binding>>,
    by_subject: HashMap<Key, BTreeMap<BindingId, Arc<Binding>>>,
}

/// The four RBAC resources the index follows.
pub const RESOURCES: &[&str] = &[
    "clusterroles",
    "roles",
    "clusterrolebindings",
    "rolebindings",
];

fn ns_name(obj: &Value) -> (String, String) {
    let m = &obj["metadata"];
    (
        m["namespace"].as_str().unwrap_or("").to_string(),
        m["name"].as_str().unwrap_or("").to_string(),
    )
}

impl Index {
    /// One object of `resource` changed (`cur` None: deleted).
    pub fn apply(&mut self, resource: &str, prev: Option<&Value>, cur: Option<&Value>) {
        match resource {
            "clusterroles" | "roles" => {
                let Some(obj) = cur.or(prev) else { return };
                let (ns, name) = ns_name(obj);
                let rules: Option<Arc<[PolicyRule]>> = cur.map(|o| rules_of(o).into());
                if resource == "clusterroles" {
                    match rules {
                        Some(r) => self.cluster_roles.insert(name, r),
                        None => self.cluster_roles.remove(&name),
                    };
                } else {
                    match rules {
                        Some(r) => self.roles.insert((ns, name), r),
                        None => self.roles.remove(&(ns, name)),
                    };
                }
            }
            "clusterrolebindings" | "rolebindings" => {
                if let Some(old) = prev.and_then(Binding::from_json) {
                    self.remove_binding(&(old.namespace.clone(), old.name.clone()));
                }
                if let Some(new) = cur.and_then(Binding::from_json) {
                    let id = (new.namespace.clone(), new.name.clone());
                    self.remove_binding(&id);
                    let b = Arc::new(new);
                    for s in &b.subjects {
                        if let Some(k) = b.key(s) {
                            self.by_subject
                                .entry(k)
                                .or_default()
                                .insert(id.clone(), b.clone());
                        }
                    }
                    self.bindings.insert(id, b);
                }
            }
            _ => {}
        }
    }

    fn remove_binding(&mut self, id: &BindingId) {
        let Some(b) = self.bindings.remove(id) else {
            return;
        };
        for s in &b.subjects {
            if let Some(k) = b.key(s) {
                if let Some(m) = self.by_subject.get_mut(&k) {
                    m.remove(id);
                    if m.is_empty() {
                        self.by_subject.remove(&k);
                    }
                }
            }
        }
    }

    /// Forgets every object of `resource` (before a re-list).
    pub fn reset(&mut self, resource: &str) {
        match resource {
            "clusterroles" => self.cluster_roles.clear(),
            "roles" => self.roles.clear(),
            "clusterrolebindings" | "rolebindings" => {
                let cluster = resource == "clusterrolebindings";
                let ids: Vec<BindingId> = self
                    .bindings
                    .keys()
                    .filter(|(ns, _)| ns.is_none() == cluster)
                    .cloned()
                    .collect();
                for id in ids {
                    self.remove_binding(&id);
                }
            }
            _ => {}
        }
    }

    /// A ClusterRole's rules, if it exists.
    pub fn cluster_role(&self, name: &str) -> Option<Arc<[PolicyRule]>> {
        self.cluster_roles.get(name).cloned()
    }

    /// The rules a role reference grants in a namespace, or kube's not-found message.
    pub fn role_ref_rules(
        &self,
        kind: &str,
        name: &str,
        namespace: &str,
    ) -> Result<Arc<[PolicyRule]>, String> {
        match kind {
            "ClusterRole" => self
                .cluster_roles
                .get(name)
                .cloned()
                .ok_or_else(|| format!("clusterrole.{GROUP} {name:?} not found")),
            "Role" => self
                .roles
                .get(&(namespace.to_string(), name.to_string()))
                .cloned()
                .ok_or_else(|| format!("role.{GROUP} {name:?} not found")),
            _ => Err(format!("unsupported role reference kind: {kind:?}")),
        }
    }

    /// The bindings that apply to a user: cluster-wide first, then those of `namespace`,
    /// each in name order (kube's `VisitRulesFor` order).
    fn bindings_for<'a>(
        &'a self,
        user: &UserInfo,
        namespace: &str,
    ) -> Vec<(&'a Arc<Binding>, &'a Subject)> {
        let mut found: BTreeMap<(bool, &BindingId), &Arc<Binding>> = BTreeMap::new();
        let keys = std::iter::once(Key::User(user.name.clone()))
            .chain(user.groups.iter().map(|g| Key::Group(g.clone())));
        for k in keys {
            let Some(m) = self.by_subject.get(&k) else {
                continue;
            };
            for (id, b) in m {
                match &id.0 {
                    None => {
                        found.insert((false, id), b);
                    }
                    Some(ns) if !namespace.is_empty() && ns == namespace => {
                        found.insert((true, id), b);
                    }
                    _ => {}
                }
            }
        }
        found
            .into_values()
            .filter_map(|b| b.applies_to(user).map(|s| (b, s)))
            .collect()
    }

    /// kube's RBAC decision: Allow with the granting binding, else no opinion with the
    /// resolution errors met on the way.
    pub fn authorize(&self, user: &UserInfo, attrs: &Attributes<'_>) -> Decision {
        let namespace = match attrs {
            Attributes::Resource(r) => r.namespace.unwrap_or(""),
            Attributes::NonResource { .. } => "",
        };
        let mut errors: Vec<String> = Vec::new();
        for (b, s) in self.bindings_for(user, namespace) {
            let ns = b.namespace.as_deref().unwrap_or("");
            match self.role_ref_rules(&b.role_kind, &b.role_name, ns) {
                Ok(rules) => {
                    if rules_allow(attrs, &rules) {
                        return Decision::Allow(format!("RBAC: allowed by {}", b.describe(s)));
                    }
                }
                Err(e) => {
                    if !errors.contains(&e) {
                        errors.push(e)
                    }
                }
            }
        }
        Decision::NoOpinion(match errors.len() {
            0 => String::new(),
            1 => format!("RBAC: {}", errors[0]),
            _ => format!("RBAC: [{}]", errors.join(", ")),
        })
    }

    /// Every rule the user holds in `namespace` (cluster-wide ones included), and the
    /// resolution errors (kube's `RulesFor`).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        for (b, _) in self.bindings_for(user, namespace) {
            let ns = b.namespace.as_deref().unwrap_or("");
            match self.role_ref_rules(&b.role_kind, &b.role_name, ns) {
                Ok(r) => rules.extend(r.iter().cloned()),
                Err(e) => errors.push(e),
            }
        }
        (rules, errors)
    }

    /// Number of bindings indexed (metrics and tests).
    pub fn binding_count(&self) -> usize {
        self.bindings.len()
    }
}

/// Splits a rule into rules of one verb, group, resource and name (kube's `BreakdownRule`).
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    let one = |s: &String| vec![s.clone()];
    for g in &rule.api_groups {
        for r in &rule.resources {
            for v in &rule.verbs {
                if rule.resource_names.is_empty() {
                    out.push(PolicyRule {
                        verbs: one(v),
                        api_groups: one(g),
                        resources: one(r),
                        ..Default::default()
                    });
                }
                for n in &rule.resource_names {
                    out.push(PolicyRule {
                        verbs: one(v),
                        api_groups: one(g),
                        resources: one(r),
                        resource_names: one(n),
                        ..Default::default()
                    });
                }
            }
        }
    }
    for u in &rule.non_resource_urls {
        for v in &rule.verbs {
            out.push(PolicyRule {
                verbs: one(v),
                non_resource_urls: one(u),
                ..Default::default()
            });
        }
    }
    out
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| has(set, w))
}

fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, "*") || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|w| {
        has(owner, w)
            || w.split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resources_cover(&owner.resources, &sub.resources);
    let urls = sub
        .non_resource_urls
        .iter()
        .all(|u| owner.non_resource_urls.iter().any(|o| url_covers(o, u)));
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && urls && names
}

/// Whether `owner` rules cover every permission of `wanted` (kube's `Covers`); the
/// permissions not covered otherwise.
pub fn covers(owner: &[PolicyRule], wanted: &[PolicyRule]) -> Result<(), Vec<PolicyRule>> {
    let missing: Vec<PolicyRule> = wanted
        .iter()
        .flat_map(breakdown)
        .filter(|r| !owner.iter().any(|o| rule_covers(o, r)))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing)
    }
}

/// Merges simple missing rules (one group, one resource, no names) by verb (kube's
/// `CompactRules`).
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut simple: BTreeMap<(String, String), PolicyRule> = BTreeMap::new();
    let mut out = Vec::new();
    for r in rules {
        if r.api_groups.len() == 1
            && r.resources.len() == 1
            && r.resource_names.is_empty()
            && r.non_resource_urls.is_empty()
        {
            let e = simple
                .entry((r.api_groups[0].clone(), r.resources[0].clone()))
                .or_insert_with(|| PolicyRule {
                    api_groups: r.api_groups.clone(),
                    resources: r.resources.clone(),
                    ..Default::default()
                });
            for v in r.verbs {
                if !e.verbs.contains(&v) {
                    e.verbs.push(v);
                }
            }
        } else {
            out.push(r);
        }
    }
    out.extend(simple.into_values());
    out
}

/// kube's escalation refusal: `user "alice" (groups=["g"]) is attempting to grant RBAC
/// permissions not currently held:\n{...}` (plus resolution errors).
pub fn escalation_message(user: &UserInfo, missing: Vec<PolicyRule>, errors: &[String]) -> String {
    let descriptions: BTreeSet<String> = compact(missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    let groups: Vec<String> = user.groups.iter().map(|g| format!("{g:?}")).collect();
    let mut msg = format!(
        "user {:?} (groups=[{}]) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        groups.join(" "),
        descriptions.into_iter().collect::<Vec<_>>().join("\n")
    );
    if !errors.is_empty() {
        msg.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
    }
    msg
}

/// Label selectors of an `aggregationRule` (matchLabels and matchExpressions), as values.
pub fn aggregation_selectors(obj: &Value) -> Option<Vec<Value>> {
    obj.get("aggregationRule")?
        .get("clusterRoleSelectors")
        .and_then(Value::as_array)
        .cloned()
}

/// Whether a label selector (matchLabels / matchExpressions) selects `labels`; an empty
/// selector selects everything (kube's `LabelSelectorAsSelector`).
pub fn selector_matches(sel: &Value, labels: &serde_json::Map<String, Value>) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        if !m.iter().all(|(k, v)| label(k) == v.as_str()) {
            return false;
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e["key"].as_str().unwrap_or("");
        let values = strings(e.get("values"));
        let ok = match e["operator"].as_str().unwrap_or("") {
            "In" => label(key).is_some_and(|v| has(&values, v)),
            "NotIn" => !label(key).is_some_and(|v| has(&values, v)),
            "Exists" => label(key).is_some(),
            "DoesNotExist" => label(key).is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// The rules an aggregated ClusterRole should hold: the rules of every other ClusterRole
/// its selectors select, in name order, without duplicates (kube's aggregation controller).
pub fn aggregated_rules(role: &Value, all: &[Arc<Value>]) -> Option<Vec<Value>> {
    let selectors = aggregation_selectors(role)?;
    let me = role["metadata"]["name"].as_str().unwrap_or("");
    let mut sorted: Vec<&Arc<Value>> = all.iter().collect();
    sorted.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    let mut out: Vec<Value> = Vec::new();
    let mut seen: Vec<PolicyRule> = Vec::new();
    for other in sorted {
        if other["metadata"]["name"].as_str() == Some(me) {
            continue;
        }
        let empty = serde_json::Map::new();
        let labels = other["metadata"]
            .get("labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if !selectors.iter().any(|s| selector_matches(s, labels)) {
            continue;
        }
        for r in rules_of(other) {
            if !seen.contains(&r) {
                out.push(r.to_json());
                seen.push(r);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        PolicyRule {
            verbs: v(verbs),
            api_groups: v(groups),
            resources: v(resources),
            ..Default::default()
        }
    }

    use crate::authz::test_resource as res;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn matching_rules() {
        let pods = rule(&[""], &["pods"], &["get"]);
        assert!(rule_allows(
            &res("get", "", "pods", None, Some("a"), Some("p")),
            &pods
        ));
        assert!(!rule_allows(
            &res("get", "", "pods", Some("log"), Some("a"), Some("p")),
            &pods
        ));
        assert!(!rule_allows(
            &res("list", "", "pods", None, Some("a"), None),
            &pods
        ));
        let logs = rule(&[""], &["pods/log"], &["*"]);
        assert!(rule_allows(
            &res("get", "", "pods", Some("log"), None, Some("p")),
            &logs
        ));
        let any_status = rule(&["*"], &["*/status"], &["update"]);
        assert!(rule_allows(
            &res(
                "update",
                "apps",
                "deployments",
                Some("status"),
                None,
                Some("d")
            ),
            &any_status
        ));
        assert!(!rule_allows(
            &res("update", "apps", "deployments", None, None, Some("d")),
            &any_status
        ));
        let mut named = rule(&[""], &["configmaps"], &["get"]);
        named.resource_names = vec!["x".into()];
        assert!(rule_allows(
            &res("get", "", "configmaps", None, None, Some("x")),
            &named
        ));
        assert!(!rule_allows(
            &res("get", "", "configmaps", None, None, Some("y")),
            &named
        ));
        assert!(!rule_allows(
            &res("get", "", "configmaps", None, None, None),
            &named
        ));
        let urls = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz/*".into(), "/version".into()],
            ..Default::default()
        };
        let path = |p| Attributes::NonResource {
            path: p,
            verb: "get".into(),
        };
        assert!(rule_allows(&path("/healthz/etcd"), &urls));
        assert!(rule_allows(&path("/version"), &urls));
        assert!(!rule_allows(&path("/version/x"), &urls));
        assert!(!rule_allows(&path("/healthz"), &urls));
    }

    fn obj(v: Value) -> Value {
        v
    }

    #[test]
    fn index_decisions_and_reasons() {
        let mut ix = Index::default();
        ix.apply(
            "clusterroles",
            None,
            Some(&obj(json!({"metadata": {"name": "view"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}))),
        );
        let rb = json!({"metadata": {"name": "rb", "namespace": "a"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "sa"}]});
        ix.apply("rolebindings", None, Some(&rb));
        let alice = user("alice", &["system:authenticated"]);
        let d = ix.authorize(&alice, &res("list", "", "pods", None, Some("a"), None));
        assert_eq!(
            d,
            Decision::Allow(
                "RBAC: allowed by RoleBinding \"rb/a\" of ClusterRole \"view\" to User \"alice\""
                    .into()
            )
        );
        assert_eq!(
            ix.authorize(&alice, &res("list", "", "pods", None, Some("b"), None)),
            Decision::NoOpinion(String::new())
        );
        let sa = user("system:serviceaccount:a:sa", &[]);
        assert!(
            matches!(ix.authorize(&sa, &res("get", "", "pods", None, Some("a"), Some("p"))), Decision::Allow(r) if r.ends_with("to ServiceAccount \"sa/a\""))
        );
        // A binding to a missing role: the reason names it.
        ix.apply("clusterrolebindings", None, Some(&json!({"metadata": {"name": "crb"}, "roleRef": {"kind": "ClusterRole", "name": "gone"}, "subjects": [{"kind": "Group", "name": "system:authenticated"}]})));
        assert_eq!(
            ix.authorize(&alice, &res("list", "", "pods", None, Some("b"), None)),
            Decision::NoOpinion(
                "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found".into()
            )
        );
        // Deleting the binding removes the grant.
        ix.apply("rolebindings", Some(&rb), None);
        assert!(matches!(
            ix.authorize(&alice, &res("list", "", "pods", None, Some("a"), None)),
            Decision::NoOpinion(_)
        ));
        assert_eq!(ix.binding_count(), 1);
        ix.reset("clusterrolebindings");
        assert_eq!(ix.binding_count(), 0);
    }

    #[test]
    fn escalation() {
        let owner = vec![rule(
            &["", "apps"],
            &["pods", "deployments", "*/scale"],
            &["get", "list"],
        )];
        assert!(covers(&owner, &[rule(&[""], &["pods"], &["get"])]).is_ok());
        assert!(covers(&owner, &[rule(&["apps"], &["deployments/scale"], &["get"])]).is_ok());
        let missing = covers(
            &owner,
            &[
                rule(&[""], &["secrets"], &["get", "list"]),
                rule(&[""], &["pods"], &["delete"]),
            ],
        )
        .unwrap_err();
        let msg = escalation_message(
            &user("alice", &["g1", "system:authenticated"]),
            missing,
            &[],
        );
        assert_eq!(msg, "user \"alice\" (groups=[\"g1\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\"]}");
        let star = vec![rule(&["*"], &["*"], &["*"])];
        assert!(covers(&star, &[rule(&["x"], &["y/z"], &["bind"])]).is_ok());
    }

    #[test]
    fn aggregation() {
        let view = json!({"metadata": {"name": "view"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "view"}}]}});
        let a = Arc::new(
            json!({"metadata": {"name": "b", "labels": {"agg": "view"}}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
        );
        let b = Arc::new(
            json!({"metadata": {"name": "a", "labels": {"agg": "view"}}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["services"], "verbs": ["get"]}]}),
        );
        let c = Arc::new(
            json!({"metadata": {"name": "c"}, "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}),
        );
        let rules = aggregated_rules(&view, &[a, b, c]).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[1]["resources"][0], "services");
    }
}
