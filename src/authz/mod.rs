//! Authorization: whether a user may do what a request asks (kube-apiserver's authorization
//! stage), deny by default. `--authorization-mode` is an ordered list of authorizers — `Node`,
//! `RBAC`, `ABAC`, `Webhook`, `AlwaysAllow`, `AlwaysDeny` (default `Node,RBAC`); each answers
//! allow, deny or no opinion, the first decision wins, and no decision is a 403 with kube's
//! message. `system:masters` is always allowed (the superuser group), before any authorizer.
//!
//! Owns: request [`Attributes`] (kube's `authorizer.Attributes`), [`Decision`], the union
//! [`Authorizer`] with its modes and their state (the RBAC index and the Node graph, kept
//! current from this replica's watch cache by followers), the rules a user holds (for
//! SelfSubjectRulesReview), RBAC escalation checks on role and binding writes, the 403
//! `Status`. Does not know: authentication (who the user is), routing, admission.

pub mod abac;
pub mod bootstrap;
pub mod node;
pub mod rbac;
pub mod webhook;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::{json, Value};

use crate::authn::UserInfo;
use crate::meta::status::Status;
use crate::registry::object::Admit;
use crate::registry::Resource;
use crate::watch::follow::{self, Change};
use rbac::PolicyRule;

/// The superuser group.
pub const MASTERS: &str = "system:masters";

/// A resource request as authorizers see it (the edge fills it from its request info).
#[derive(Clone, Copy, Debug)]
pub struct ResourceAttributes<'a> {
    pub verb: &'a str,
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub subresource: Option<&'a str>,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
    /// The request's raw `fieldSelector` (list / watch), for authorizers that narrow reads
    /// by it (Node: a kubelet's `spec.nodeName=<node>` pods).
    pub field_selector: Option<&'a str>,
}

/// What a request does, as authorizers see it.
#[derive(Clone, Debug)]
pub enum Attributes<'a> {
    Resource(ResourceAttributes<'a>),
    /// A non-resource path with its verb (the lower-cased HTTP method).
    NonResource {
        path: &'a str,
        verb: String,
    },
}

impl<'a> Attributes<'a> {
    /// A non-resource request: its verb is the lower-cased method, as kube's (so `head`
    /// for HEAD, which only a rule naming `head` or `*` allows).
    pub fn path(method: &http::Method, path: &'a str) -> Self {
        Attributes::NonResource {
            path,
            verb: method.as_str().to_ascii_lowercase(),
        }
    }
}

/// A v1 resource request without a field selector (the authorizers' unit tests).
#[cfg(test)]
pub(crate) fn test_resource<'a>(
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    subresource: Option<&'a str>,
    namespace: Option<&'a str>,
    name: Option<&'a str>,
) -> Attributes<'a> {
    Attributes::Resource(ResourceAttributes {
        verb,
        group,
        version: "v1",
        resource,
        subresource,
        namespace,
        name,
        field_selector: None,
    })
}

/// One authorizer's answer, with kube's reason (may be empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow(String),
    Deny(String),
    NoOpinion(String),
}

/// One entry of `--authorization-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Node,
    Rbac,
    Abac,
    Webhook,
    AlwaysAllow,
    AlwaysDeny,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Node => "Node",
            Mode::Rbac => "RBAC",
            Mode::Abac => "ABAC",
            Mode::Webhook => "Webhook",
            Mode::AlwaysAllow => "AlwaysAllow",
            Mode::AlwaysDeny => "AlwaysDeny",
        }
    }

    /// Parses the flag's ordered list (kube's names and checks).
    pub fn parse_list(flag: &str) -> Result<Vec<Mode>, String> {
        let mut out = Vec::new();
        for m in flag.split(',').map(str::trim).filter(|m| !m.is_empty()) {
            let mode = match m {
                "Node" => Mode::Node,
                "RBAC" => Mode::Rbac,
                "ABAC" => Mode::Abac,
                "Webhook" => Mode::Webhook,
                "AlwaysAllow" => Mode::AlwaysAllow,
                "AlwaysDeny" => Mode::AlwaysDeny,
                other => {
                    return Err(format!(
                        "authorization-mode {other:?} is not a valid mode (valid: Node, RBAC, ABAC, Webhook, AlwaysAllow, AlwaysDeny)"
                    ))
                }
            };
            if out.contains(&mode) {
                return Err(format!(
                    "authorization-mode {:?} has mode specified more than once",
                    mode.name()
                ));
            }
            out.push(mode);
        }
        if out.is_empty() {
            return Err("at least one authorization-mode must be passed".into());
        }
        Ok(out)
    }
}

/// The authorization flags.
#[derive(Clone, Debug)]
pub struct Config {
    pub modes: Vec<Mode>,
    /// `--authorization-policy-file` (ABAC).
    pub policy_file: Option<PathBuf>,
    /// `--authorization-webhook-config-file`.
    pub webhook_config: Option<PathBuf>,
    pub webhook_version: String,
    pub webhook_authorized_ttl: Duration,
    pub webhook_unauthorized_ttl: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            modes: vec![Mode::Node, Mode::Rbac],
            policy_file: None,
            webhook_config: None,
            webhook_version: "v1".into(),
            webhook_authorized_ttl: Duration::from_secs(300),
            webhook_unauthorized_ttl: Duration::from_secs(30),
        }
    }
}

impl Config {
    pub fn has(&self, m: Mode) -> bool {
        self.modes.contains(&m)
    }
}

/// The rules a user holds in a namespace (SelfSubjectRulesReview's status).
pub struct Rules {
    pub resource_rules: Vec<Value>,
    pub non_resource_rules: Vec<Value>,
    pub incomplete: bool,
    pub errors: Vec<String>,
}

/// Whether the followers feeding an index have loaded their first full state.
#[derive(Default)]
struct Synced {
    want: std::sync::atomic::AtomicUsize,
    done: std::sync::atomic::AtomicUsize,
}

impl Synced {
    /// Waits (bounded) until every follower loaded once: a replica that just started
    /// must not refuse requests only because its index is still empty.
    async fn wait(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while self.done.load(Relaxed) < self.want.load(Relaxed)
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The union authorizer of a replica.
pub struct Authorizer {
    modes: Vec<Mode>,
    synced: Arc<Synced>,
    rbac: Arc<RwLock<rbac::Index>>,
    node: Arc<RwLock<node::Graph>>,
    /// The rules every node has (the bootstrap `system:node` role), for the Node authorizer.
    node_rules: Vec<PolicyRule>,
    abac: Option<abac::PolicyList>,
    webhook: Option<webhook::Webhook>,
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl Authorizer {
    /// Builds the authorizers the flags name (reads the ABAC policy and webhook kubeconfig).
    pub fn new(cfg: &Config) -> Result<Authorizer, String> {
        if cfg.modes.is_empty() {
            return Err("at least one authorization-mode must be passed".into());
        }
        let abac = match (&cfg.policy_file, cfg.has(Mode::Abac)) {
            (Some(p), true) => Some(abac::PolicyList::load(p)?),
            (None, true) => {
                return Err("authorization-mode ABAC's authorization policy file not passed".into())
            }
            (Some(_), false) => {
                return Err("cannot specify --authorization-policy-file without mode ABAC".into())
            }
            (None, false) => None,
        };
        let webhook = match (&cfg.webhook_config, cfg.has(Mode::Webhook)) {
            (Some(p), true) => Some(webhook::Webhook::load(
                p,
                &cfg.webhook_version,
                cfg.webhook_authorized_ttl,
                cfg.webhook_unauthorized_ttl,
            )?),
            (None, true) => {
                return Err(
                    "authorization-mode Webhook's authorization config file not passed".into(),
                )
            }
            (Some(_), false) => {
                return Err(
                    "cannot specify --authorization-webhook-config-file without mode Webhook"
                        .into(),
                )
            }
            (None, false) => None,
        };
        let node_rules = bootstrap::policy()
            .cluster_roles
            .iter()
            .find(|r| r["metadata"]["name"] == "system:node")
            .map(rbac::rules_of)
            .unwrap_or_default();
        Ok(Authorizer {
            modes: cfg.modes.clone(),
            synced: Default::default(),
            rbac: Default::default(),
            node: Default::default(),
            node_rules,
            abac,
            webhook,
        })
    }

    /// An authorizer with only these modes and no files (tests, tools).
    pub fn with_modes(modes: &[Mode]) -> Authorizer {
        Authorizer {
            modes: modes.to_vec(),
            synced: Default::default(),
            rbac: Default::default(),
            node: Default::default(),
            node_rules: Vec::new(),
            abac: None,
            webhook: None,
        }
    }

    /// Whether every follower has loaded its first full state (`/readyz`).
    pub fn is_synced(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.synced.done.load(Relaxed) >= self.synced.want.load(Relaxed)
    }

    pub fn modes(&self) -> &[Mode] {
        &self.modes
    }

    pub fn has(&self, m: Mode) -> bool {
        self.modes.contains(&m)
    }

    /// Starts the followers that keep the RBAC index and the Node graph current from the
    /// watch cache; they run until aborted.
    pub fn start(&self, cache: &crate::watch::Cache) -> Vec<tokio::task::JoinHandle<()>> {
        let mut tasks = Vec::new();
        let catalog = cache.registry().snapshot();
        let find = |group: &str, resource: &str| -> Option<Arc<Resource>> {
            catalog
                .resolve(group, resource)
                .filter(|i| i.resource == resource)
                .cloned()
        };
        if self.has(Mode::Rbac) {
            for resource in rbac::RESOURCES {
                if let Some(info) = find(rbac::GROUP, resource) {
                    tasks.push(self.follow_into(
                        cache,
                        info,
                        self.rbac.clone(),
                        move |ix| ix.reset(resource),
                        move |ix, prev, cur| ix.apply(resource, prev, cur),
                    ));
                }
            }
        }
        if self.has(Mode::Node) {
            for (group, resource) in node::WATCHED {
                if let Some(info) = find(group, resource) {
                    tasks.push(self.follow_into(
                        cache,
                        info,
                        self.node.clone(),
                        move |g| g.reset(group, resource),
                        move |g, prev, cur| g.apply(group, resource, prev, cur),
                    ));
                }
            }
        }
        tasks
    }

    /// Follows one resource into `state`: `reset` then `apply` of every object on each full
    /// state, `apply(prev, cur)` on each change; counts towards `synced` once loaded.
    fn follow_into<T: Send + Sync + 'static>(
        &self,
        cache: &crate::watch::Cache,
        info: Arc<Resource>,
        state: Arc<RwLock<T>>,
        reset: impl Fn(&mut T) + Send + 'static,
        apply: impl Fn(&mut T, Option<&Value>, Option<&Value>) + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        use std::sync::atomic::Ordering::Relaxed;
        let synced = self.synced.clone();
        synced.want.fetch_add(1, Relaxed);
        let mut first = true;
        follow::spawn(cache.clone(), info, move |c| {
            let mut st = write(&state);
            match c {
                Change::Replace(all) => {
                    if std::mem::take(&mut first) {
                        synced.done.fetch_add(1, Relaxed);
                    }
                    reset(&mut st);
                    for o in all {
                        apply(&mut st, None, Some(&o.value()));
                    }
                }
                Change::Upsert { prev, cur } => apply(&mut st, prev, Some(cur)),
                Change::Delete { prev } => apply(&mut st, Some(prev), None),
            }
        })
    }

    /// The union decision (kube's): superusers first, then each mode in order until one
    /// allows or denies; the reasons of those without an opinion are joined by newlines.
    pub async fn decide(&self, user: &UserInfo, attrs: &Attributes<'_>) -> Decision {
        if user.groups.iter().any(|g| g == MASTERS) {
            return Decision::Allow(String::new());
        }
        if self.has(Mode::Rbac) || self.has(Mode::Node) {
            self.synced.wait().await;
        }
        let mut reasons: Vec<String> = Vec::new();
        for m in &self.modes {
            let d = match m {
                Mode::AlwaysAllow => Decision::Allow(String::new()),
                // kube's AlwaysDeny has no opinion (with a reason), so a later mode may allow.
                Mode::AlwaysDeny => Decision::NoOpinion("Everything is forbidden.".into()),
                Mode::Rbac => read(&self.rbac).authorize(user, attrs),
                Mode::Node => node::authorize_with_field_selector(
                    &read(&self.node),
                    &self.node_rules,
                    user,
                    attrs,
                    match attrs {
                        Attributes::Resource(r) => r.field_selector,
                        _ => None,
                    },
                ),
                Mode::Abac => match &self.abac {
                    Some(p) => abac::authorize(p, user, attrs),
                    None => Decision::NoOpinion(String::new()),
                },
                Mode::Webhook => match &self.webhook {
                    Some(w) => w.authorize(user, attrs).await,
                    None => Decision::NoOpinion(String::new()),
                },
            };
            match d {
                Decision::NoOpinion(r) => {
                    if !r.is_empty() {
                        reasons.push(r);
                    }
                }
                d => return d,
            }
        }
        Decision::NoOpinion(reasons.join("\n"))
    }

    /// The decision as the edge applies it: `Err` is the 403 to answer.
    pub async fn authorize(&self, user: &UserInfo, attrs: &Attributes<'_>) -> Result<(), Status> {
        match self.decide(user, attrs).await {
            Decision::Allow(_) => Ok(()),
            Decision::Deny(r) | Decision::NoOpinion(r) => Err(forbidden(user, attrs, &r)),
        }
    }

    /// Whether the decision is allow (for checks inside a request, e.g. `bind`).
    pub async fn allows(&self, user: &UserInfo, attrs: &Attributes<'_>) -> bool {
        matches!(self.decide(user, attrs).await, Decision::Allow(_))
    }

    /// The rules a user holds in `namespace`, from every mode that can enumerate them
    /// (kube's `RulesFor`); `incomplete` when a mode cannot.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> Rules {
        let mut out = Rules {
            resource_rules: Vec::new(),
            non_resource_rules: Vec::new(),
            incomplete: false,
            errors: Vec::new(),
        };
        for m in &self.modes {
            match m {
                Mode::AlwaysAllow => {
                    out.resource_rules
                        .push(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
                    out.non_resource_rules
                        .push(json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
                }
                Mode::AlwaysDeny => {}
                Mode::Rbac => {
                    let (rules, errors) = read(&self.rbac).rules_for(user, namespace);
                    for r in rules {
                        if !r.resources.is_empty() {
                            let mut j = json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
                            if !r.resource_names.is_empty() {
                                j["resourceNames"] = json!(r.resource_names);
                            }
                            out.resource_rules.push(j);
                        }
                        if !r.non_resource_urls.is_empty() {
                            out.non_resource_rules.push(
                                json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}),
                            );
                        }
                    }
                    out.errors.extend(errors);
                }
                Mode::Node => {
                    if node::node_identity(user).is_some() {
                        out.incomplete = true;
                        out.errors
                            .push("node authorizer does not support user rule resolution".into());
                    }
                }
                Mode::Abac => {
                    if let Some(p) = &self.abac {
                        let (res, non) = abac::rules_for(p, user, namespace);
                        for r in res {
                            let mut j = json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
                            if !r.resource_names.is_empty() {
                                j["resourceNames"] = json!(r.resource_names);
                            }
                            out.resource_rules.push(j);
                        }
                        for r in non {
                            out.non_resource_rules.push(
                                json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}),
                            );
                        }
                    }
                }
                Mode::Webhook => {
                    out.incomplete = true;
                    out.errors
                        .push("webhook authorizer does not support user rule resolution".into());
                }
            }
        }
        out
    }

    /// The RBAC rules a user holds in `namespace` (escalation checks), with resolution errors.
    fn rbac_rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        read(&self.rbac).rules_for(user, namespace)
    }

    /// The check the store runs before writing a Role, ClusterRole, RoleBinding or
    /// ClusterRoleBinding (kube's RBAC escalation prevention), `None` for other resources.
    pub fn write_guard(
        self: &Arc<Self>,
        user: &UserInfo,
        info: Arc<Resource>,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Option<Admit> {
        if info.group != rbac::GROUP || !rbac::RESOURCES.contains(&info.resource.as_str()) {
            return None;
        }
        let authz = self.clone();
        let user = user.clone();
        let namespace = namespace.unwrap_or("").to_string();
        let url_name = name.unwrap_or("").to_string();
        Some(Arc::new(move |new: &Value, old: Option<&Value>| {
            let authz = authz.clone();
            let info = info.clone();
            let user = user.clone();
            let namespace = namespace.clone();
            let url_name = url_name.clone();
            let new = new.clone();
            let old = old.cloned();
            Box::pin(async move {
                authz
                    .check_escalation(&user, &info, &namespace, &url_name, &new, old.as_ref())
                    .await
            })
        }))
    }

    async fn check_escalation(
        &self,
        user: &UserInfo,
        info: &Resource,
        namespace: &str,
        url_name: &str,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), Status> {
        if user.groups.iter().any(|g| g == MASTERS) {
            return Ok(());
        }
        // Writes that only touch what garbage collection needs are never escalations.
        if let Some(old) = old {
            if only_gc_fields_changed(new, old) {
                return Ok(());
            }
        }
        let name = new["metadata"]["name"].as_str().unwrap_or("");
        let ns_opt = (!namespace.is_empty()).then_some(namespace);
        let forbidden = |msg: String| Status::forbidden(info.gr(), name, &msg);
        match info.resource.as_str() {
            "roles" | "clusterroles" => {
                let escalate = Attributes::Resource(ResourceAttributes {
                    verb: "escalate",
                    group: rbac::GROUP,
                    version: "*",
                    resource: &info.resource,
                    subresource: None,
                    namespace: ns_opt,
                    name: (!url_name.is_empty()).then_some(url_name),
                    field_selector: None,
                });
                if self.allows(user, &escalate).await {
                    return Ok(());
                }
                let aggregated = rbac::aggregation_selectors(new).is_some();
                let wanted = if aggregated {
                    vec![
                        PolicyRule {
                            verbs: vec!["*".into()],
                            api_groups: vec!["*".into()],
                            resources: vec!["*".into()],
                            ..Default::default()
                        },
                        PolicyRule {
                            verbs: vec!["*".into()],
                            non_resource_urls: vec!["*".into()],
                            ..Default::default()
                        },
                    ]
                } else {
                    rbac::rules_of(new)
                };
                let (owner, errors) = self.rbac_rules_for(user, namespace);
                if let Err(missing) = rbac::covers(&owner, &wanted) {
                    if aggregated && old.is_none() {
                        return Err(forbidden(
                            "must have cluster-admin privileges to use the aggregationRule".into(),
                        ));
                    }
                    return Err(forbidden(rbac::escalation_message(user, missing, &errors)));
                }
                Ok(())
            }
            _ => {
                let role_kind = new["roleRef"]["kind"].as_str().unwrap_or("");
                let role_name = new["roleRef"]["name"].as_str().unwrap_or("");
                let bind = Attributes::Resource(ResourceAttributes {
                    verb: "bind",
                    group: rbac::GROUP,
                    version: "*",
                    resource: if role_kind == "Role" {
                        "roles"
                    } else {
                        "clusterroles"
                    },
                    subresource: None,
                    namespace: ns_opt,
                    name: Some(role_name),
                    field_selector: None,
                });
                if self.allows(user, &bind).await {
                    return Ok(());
                }
                let wanted = read(&self.rbac)
                    .role_ref_rules(role_kind, role_name, namespace)
                    .map_err(|_| {
                        let gr = crate::meta::status::GroupResource {
                            group: rbac::GROUP,
                            resource: if role_kind == "Role" {
                                "roles"
                            } else {
                                "clusterroles"
                            },
                        };
                        Status::not_found(gr, role_name)
                    })?;
                let (owner, errors) = self.rbac_rules_for(user, namespace);
                if let Err(missing) = rbac::covers(&owner, &wanted) {
                    return Err(forbidden(rbac::escalation_message(user, missing, &errors)));
                }
                Ok(())
            }
        }
    }
}

/// Whether an update changes only `metadata.ownerReferences` and `metadata.finalizers`
/// (kube's `IsOnlyMutatingGCFields`).
fn only_gc_fields_changed(new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in [
                "ownerReferences",
                "finalizers",
                "resourceVersion",
                "managedFields",
                "generation",
            ] {
                m.remove(k);
            }
        }
        v
    };
    strip(new) == strip(old)
}

/// kube's 403 for a denied request, e.g. `configmaps is forbidden: User "alice" cannot list
/// resource "configmaps" in API group "" in the namespace "default"` (plus `: <reason>`).
pub fn forbidden(user: &UserInfo, attrs: &Attributes<'_>, reason: &str) -> Status {
    let suffix = if reason.is_empty() {
        String::new()
    } else {
        format!(": {reason}")
    };
    match attrs {
        Attributes::NonResource { path, verb } => Status::new(
            403,
            "Forbidden",
            format!(
                "forbidden: User {:?} cannot {verb} path {path:?}{suffix}",
                user.name
            ),
        )
        .with_details(serde_json::json!({})),
        Attributes::Resource(ri) => {
            let resource = match ri.subresource {
                Some(s) => format!("{}/{s}", ri.resource),
                None => ri.resource.to_string(),
            };
            let scope = match ri.namespace {
                Some(ns) => format!("in the namespace {ns:?}"),
                None => "at the cluster scope".into(),
            };
            let why = format!(
                "User {:?} cannot {} resource {resource:?} in API group {:?} {scope}{suffix}",
                user.name, ri.verb, ri.group
            );
            let gr = crate::meta::status::GroupResource {
                group: ri.group,
                resource: &resource,
            };
            Status::forbidden(gr, ri.name.unwrap_or(""), &why)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_and_union() {
        let anon = UserInfo::anonymous();
        let list = ResourceAttributes {
            verb: "list",
            group: "",
            version: "v1",
            resource: "configmaps",
            subresource: None,
            namespace: Some("default"),
            name: None,
            field_selector: None,
        };
        let a = Authorizer::with_modes(&[Mode::Node, Mode::Rbac]);
        let s = a
            .authorize(&anon, &Attributes::Resource(list))
            .await
            .unwrap_err();
        assert_eq!(s.code, 403);
        assert_eq!(s.message, "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"");
        let get = ResourceAttributes {
            verb: "get",
            group: "",
            version: "v1",
            resource: "nodes",
            subresource: None,
            namespace: None,
            name: Some("n1"),
            field_selector: None,
        };
        assert_eq!(
            forbidden(&anon, &Attributes::Resource(get), "").message,
            "nodes \"n1\" is forbidden: User \"system:anonymous\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"
        );
        let metrics = Attributes::NonResource {
            path: "/metrics",
            verb: "get".into(),
        };
        assert_eq!(
            a.authorize(&anon, &metrics).await.unwrap_err().message,
            "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""
        );
        let masters = UserInfo {
            name: "root".into(),
            groups: vec![MASTERS.into()],
            ..Default::default()
        };
        assert!(Authorizer::with_modes(&[Mode::AlwaysDeny])
            .authorize(&masters, &metrics)
            .await
            .is_ok());
        assert_eq!(
            Authorizer::with_modes(&[Mode::AlwaysDeny])
                .authorize(&anon, &metrics)
                .await
                .unwrap_err()
                .message,
            "forbidden: User \"system:anonymous\" cannot get path \"/metrics\": Everything is forbidden."
        );
        assert!(Authorizer::with_modes(&[Mode::Rbac, Mode::AlwaysAllow])
            .authorize(&anon, &metrics)
            .await
            .is_ok());
    }

    #[test]
    fn mode_lists() {
        assert_eq!(
            Mode::parse_list("Node,RBAC").unwrap(),
            vec![Mode::Node, Mode::Rbac]
        );
        assert!(Mode::parse_list("RBAC,RBAC")
            .unwrap_err()
            .contains("more than once"));
        assert!(Mode::parse_list("Bogus").is_err());
        assert!(Mode::parse_list("").is_err());
    }
}
