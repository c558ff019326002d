//! Discovery documents for the built-in resources: `/api`, `/apis`, `/apis/<group>`,
//! `/api/v1` + `/apis/<group>/<version>` (APIResourceList) and aggregated discovery
//! (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList) for `/api` and `/apis`.
//!
//! Everything is rendered from a snapshot of the runtime registry ([`Catalog`]), with kube-apiserver's
//! field names and ordering. This module does not know about HTTP (content negotiation, ETags,
//! `Accept` headers), about custom resources (CRD-served groups are merged in by the caller), or
//! about anything stored: it is pure data in, JSON out.

use serde_json::{json, Map, Value};

use super::catalog::Catalog;
use super::resource::Resource;
use super::resources::SUBRESOURCE_VERBS;
use super::strategy::Extra;

/// `GET /api` → APIVersions, with an empty `serverAddress` (see [`api_versions_for`]).
pub fn api_versions() -> Value {
    api_versions_for("")
}

/// `GET /api` → APIVersions. `server_address` is the `host:port` clients should use.
pub fn api_versions_for(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ]
    })
}

/// `GET /apis` → APIGroupList of every non-core group in kube-apiserver's order.
pub fn api_group_list(cat: &Catalog) -> Value {
    let groups: Vec<Value> = served_groups(cat)
        .into_iter()
        .map(|(g, versions)| group_body(g, &versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/<group>` → APIGroup, or `None` for an unknown group (and for the core group,
/// which has no `/apis/` document).
pub fn api_group(cat: &Catalog, group: &str) -> Option<Value> {
    if group.is_empty() {
        return None;
    }
    let (g, versions) = served_groups(cat).into_iter().find(|(g, _)| *g == group)?;
    let mut out = Map::new();
    out.insert("kind".into(), json!("APIGroup"));
    out.insert("apiVersion".into(), json!("v1"));
    if let Value::Object(body) = group_body(g, &versions) {
        out.extend(body);
    }
    Some(Value::Object(out))
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

fn group_body(group: &str, versions: &[&str]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": group_version(group, v), "version": v}))
        .collect();
    let preferred = versions.first().copied().unwrap_or("v1");
    json!({
        "name": group,
        "versions": vs,
        "preferredVersion": {"groupVersion": group_version(group, preferred), "version": preferred}
    })
}

/// A `create`-only subresource that is not stored (the server acts on the parent).
struct CreateSubresource {
    group: &'static str,
    resource: &'static str,
    name: &'static str,
    kind_group: &'static str,
    kind_version: &'static str,
    kind: &'static str,
}

/// The ones served (`server::handlers::{binding, eviction}`), sorted by name.
const CREATE_SUBRESOURCES: &[CreateSubresource] = &[
    CreateSubresource {
        group: "",
        resource: "pods",
        name: "binding",
        kind_group: "",
        kind_version: "v1",
        kind: "Binding",
    },
    CreateSubresource {
        group: "",
        resource: "pods",
        name: "eviction",
        kind_group: "policy",
        kind_version: "v1",
        kind: "Eviction",
    },
    CreateSubresource {
        group: "",
        resource: "serviceaccounts",
        name: "token",
        kind_group: "authentication.k8s.io",
        kind_version: "v1",
        kind: "TokenRequest",
    },
];

/// A connect subresource (`server::connect`) as discovery lists it.
struct ConnectSubresource {
    extra: Extra,
    name: &'static str,
    /// Its core/v1 kind.
    kind: &'static str,
    verbs: &'static [&'static str],
}

const CONNECT_VERBS: &[&str] = &["create", "get"];
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];

/// kube's connect subresources, by the strategy entry that serves each.
const CONNECT_SUBRESOURCES: &[ConnectSubresource] = &[
    ConnectSubresource {
        extra: Extra::PodAttach,
        name: "attach",
        kind: "PodAttachOptions",
        verbs: CONNECT_VERBS,
    },
    ConnectSubresource {
        extra: Extra::PodExec,
        name: "exec",
        kind: "PodExecOptions",
        verbs: CONNECT_VERBS,
    },
    ConnectSubresource {
        extra: Extra::PodLog,
        name: "log",
        kind: "Pod",
        verbs: &["get"],
    },
    ConnectSubresource {
        extra: Extra::PodPortForward,
        name: "portforward",
        kind: "PodPortForwardOptions",
        verbs: CONNECT_VERBS,
    },
    ConnectSubresource {
        extra: Extra::PodProxy,
        name: "proxy",
        kind: "PodProxyOptions",
        verbs: PROXY_VERBS,
    },
    ConnectSubresource {
        extra: Extra::NodeProxy,
        name: "proxy",
        kind: "NodeProxyOptions",
        verbs: PROXY_VERBS,
    },
    ConnectSubresource {
        extra: Extra::ServiceProxy,
        name: "proxy",
        kind: "ServiceProxyOptions",
        verbs: PROXY_VERBS,
    },
];

fn connect_subresources(r: &Resource) -> impl Iterator<Item = &'static ConnectSubresource> + '_ {
    CONNECT_SUBRESOURCES
        .iter()
        .filter(|c| r.strategy.extras().contains(&c.extra))
}

/// The kind a request on subresource `sub` of `r` is for (kube's `KindFor`): `scale` is
/// autoscaling/v1 Scale, the create-only subresources have their own kinds, any other (and
/// no subresource) is the resource's kind.
pub fn subresource_kind(r: &Resource, sub: &str) -> (String, String, String) {
    if sub == "scale" && r.scale.is_some() {
        return ("autoscaling".into(), "v1".into(), "Scale".into());
    }
    if let Some(c) = connect_subresources(r).find(|c| c.name == sub) {
        return ("".into(), "v1".into(), c.kind.into());
    }
    match CREATE_SUBRESOURCES
        .iter()
        .find(|c| c.group == r.group && c.resource == r.resource && c.name == sub)
    {
        Some(c) => (c.kind_group.into(), c.kind_version.into(), c.kind.into()),
        None => (r.group.clone(), r.version.clone(), r.kind.clone()),
    }
}

/// The resources that are not stored, so not in the resource table: the create-only reviews
/// (`server::handlers::{authentication, access_review}`), `bindings` (`handlers::binding`) and
/// the read-only `componentstatuses` (`handlers::component_status`).
struct Unstored {
    endpoint: Endpoint,
    group: &'static str,
    version: &'static str,
    resource: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
    verbs: &'static [&'static str],
    short_names: &'static [&'static str],
}

const CREATE: &[&str] = &["create"];

/// What serves an unstored resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A create-only review (authentication.k8s.io, authorization.k8s.io).
    Review,
    /// `POST namespaces/<ns>/bindings`: pods/binding of the pod the Binding names.
    Bindings,
    /// The read-only, computed ComponentStatuses.
    ComponentStatuses,
}

const UNSTORED: &[Unstored] = &[
    Unstored {
        endpoint: Endpoint::Bindings,
        group: "",
        version: "v1",
        resource: "bindings",
        singular: "binding",
        kind: "Binding",
        namespaced: true,
        verbs: CREATE,
        short_names: &[],
    },
    Unstored {
        endpoint: Endpoint::ComponentStatuses,
        group: "",
        version: "v1",
        resource: "componentstatuses",
        singular: "componentstatus",
        kind: "ComponentStatus",
        namespaced: false,
        verbs: &["get", "list"],
        short_names: &["cs"],
    },
    Unstored {
        endpoint: Endpoint::Review,
        group: "authentication.k8s.io",
        version: "v1",
        resource: "selfsubjectreviews",
        singular: "selfsubjectreview",
        kind: "SelfSubjectReview",
        namespaced: false,
        verbs: CREATE,
        short_names: &[],
    },
    Unstored {
        endpoint: Endpoint::Review,
        group: "authentication.k8s.io",
        version: "v1",
        resource: "tokenreviews",
        singular: "tokenreview",
        kind: "TokenReview",
        namespaced: false,
        verbs: CREATE,
        short_names: &[],
    },
    Unstored {
        endpoint: Endpoint::Review,
        group: "authorization.k8s.io",
        version: "v1",
        resource: "localsubjectaccessreviews",
        singular: "localsubjectaccessreview",
        kind: "LocalSubjectAccessReview",
        namespaced: true,
        verbs: CREATE,
        short_names: &[],
    },
    Unstored {
        endpoint: Endpoint::Review,
        group: "authorization.k8s.io",
        version: "v1",
        resource: "selfsubjectaccessreviews",
        singular: "selfsubjectaccessreview",
        kind: "SelfSubjectAccessReview",
        namespaced: false,
        verbs: CREATE,
        short_names: &[],
    },
    Unstored {
        endpoint: Endpoint::Review,
        group: "authorization.k8s.io",
        version: "v1",
        resource: "selfsubjectrulesreviews",
        singular: "selfsubjectrulesreview",
        kind: "SelfSubjectRulesReview",
        namespaced: false,
        verbs: CREATE,
        short_names: &[],
    },
    Unstored {
        endpoint: Endpoint::Review,
        group: "authorization.k8s.io",
        version: "v1",
        resource: "subjectaccessreviews",
        singular: "subjectaccessreview",
        kind: "SubjectAccessReview",
        namespaced: false,
        verbs: CREATE,
        short_names: &[],
    },
];

impl Unstored {
    fn legacy(&self) -> Value {
        let mut e = Map::new();
        e.insert("name".into(), json!(self.resource));
        e.insert("singularName".into(), json!(self.singular));
        e.insert("namespaced".into(), json!(self.namespaced));
        e.insert("kind".into(), json!(self.kind));
        e.insert("verbs".into(), json!(self.verbs));
        if !self.short_names.is_empty() {
            e.insert("shortNames".into(), json!(self.short_names));
        }
        Value::Object(e)
    }

    fn aggregated(&self) -> Value {
        let kind = (self.group, self.version, self.kind);
        let mut e = aggregated_entry(self.resource, kind, self.namespaced, self.singular);
        e.insert("verbs".into(), json!(self.verbs));
        if !self.short_names.is_empty() {
            e.insert("shortNames".into(), json!(self.short_names));
        }
        Value::Object(e)
    }
}

fn unstored<'a>(group: &'a str, version: &'a str) -> impl Iterator<Item = &'static Unstored> + 'a {
    UNSTORED
        .iter()
        .filter(move |u| u.group == group && u.version == version)
}

/// What serves `group/version/resource` when it is an unstored resource.
pub fn unstored_endpoint(group: &str, version: &str, resource: &str) -> Option<Endpoint> {
    unstored(group, version)
        .find(|u| u.resource == resource)
        .map(|u| u.endpoint)
}

/// Every served group with its versions, in kube-apiserver's order: the resource table's,
/// with the review-only groups after `events.k8s.io` as kube lists them.
pub fn served_groups(cat: &Catalog) -> Vec<(&str, Vec<&str>)> {
    let mut out = cat.groups();
    let at = out
        .iter()
        .position(|(g, _)| *g == "events.k8s.io")
        .map(|i| i + 1)
        .unwrap_or(out.len());
    for (i, g) in ["authentication.k8s.io", "authorization.k8s.io"]
        .iter()
        .enumerate()
    {
        if !out.iter().any(|(have, _)| have == g) {
            out.insert(at + i, (g, vec!["v1"]));
        }
    }
    out
}

/// A subresource as discovery lists it: its name, the kind its requests and responses are
/// (group, version, kind) and its verbs.
struct Sub<'a> {
    name: &'a str,
    kind: (&'a str, &'a str, &'a str),
    verbs: &'static [&'static str],
}

/// The subresources of `r`, sorted by name as kube lists them after their parent.
fn subresources(r: &Resource) -> Vec<Sub<'_>> {
    let own = (r.group.as_str(), r.version.as_str(), r.kind.as_str());
    let mut subs: Vec<Sub> = CREATE_SUBRESOURCES
        .iter()
        .filter(|s| s.group == r.group && s.resource == r.resource)
        .map(|s| Sub {
            name: s.name,
            kind: (s.kind_group, s.kind_version, s.kind),
            verbs: CREATE,
        })
        .collect();
    for e in r.strategy.extras() {
        let name = match e {
            Extra::Approval => "approval",
            Extra::Writes(name) => name,
            _ => continue,
        };
        subs.push(Sub {
            name,
            kind: own,
            verbs: SUBRESOURCE_VERBS,
        });
    }
    for c in connect_subresources(r) {
        subs.push(Sub {
            name: c.name,
            kind: ("", "v1", c.kind),
            verbs: c.verbs,
        });
    }
    if r.scale.is_some() {
        subs.push(Sub {
            name: "scale",
            kind: ("autoscaling", "v1", "Scale"),
            verbs: SUBRESOURCE_VERBS,
        });
    }
    if r.has_status {
        subs.push(Sub {
            name: "status",
            kind: own,
            verbs: SUBRESOURCE_VERBS,
        });
    }
    subs.sort_by_key(|s| s.name);
    subs
}

/// `GET /api/v1` (group `""`) or `GET /apis/<group>/<version>` → APIResourceList: every
/// resource, stored or not, sorted by name, each followed by its subresources. `None` if not
/// served.
pub fn api_resource_list(cat: &Catalog, group: &str, version: &str) -> Option<Value> {
    let mut entries: Vec<(&str, Vec<Value>)> = unstored(group, version)
        .map(|u| (u.resource, vec![u.legacy()]))
        .collect();
    let stored: Vec<&Resource> = cat.in_group_version(group, version).map(|r| &**r).collect();
    if stored.is_empty() && entries.is_empty() {
        return None;
    }
    for r in stored {
        let mut e = Map::new();
        e.insert("name".into(), json!(r.resource));
        e.insert("singularName".into(), json!(r.singular));
        e.insert("namespaced".into(), json!(r.namespaced));
        e.insert("kind".into(), json!(r.kind));
        e.insert("verbs".into(), json!(r.verbs));
        if !r.short_names.is_empty() {
            e.insert("shortNames".into(), json!(r.short_names));
        }
        if !r.categories.is_empty() {
            e.insert("categories".into(), json!(r.categories));
        }
        if let Some(h) = &r.storage_version_hash {
            e.insert("storageVersionHash".into(), json!(h));
        }
        let mut list = vec![Value::Object(e)];
        for sub in subresources(r) {
            let mut e = Map::new();
            e.insert("name".into(), json!(format!("{}/{}", r.resource, sub.name)));
            e.insert("singularName".into(), json!(""));
            e.insert("namespaced".into(), json!(r.namespaced));
            let (g, v, k) = sub.kind;
            // `group`/`version` only when they differ from the parent's.
            if g != r.group {
                e.insert("group".into(), json!(g));
                e.insert("version".into(), json!(v));
            }
            e.insert("kind".into(), json!(k));
            e.insert("verbs".into(), json!(sub.verbs));
            list.push(Value::Object(e));
        }
        entries.push((r.resource.as_str(), list));
    }
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let list: Vec<Value> = entries.into_iter().flat_map(|(_, l)| l).collect();
    let mut out = Map::new();
    out.insert("kind".into(), json!("APIResourceList"));
    if !group.is_empty() {
        // kube-apiserver's legacy /api/v1 document carries no apiVersion.
        out.insert("apiVersion".into(), json!("v1"));
    }
    out.insert("groupVersion".into(), json!(group_version(group, version)));
    out.insert("resources".into(), Value::Array(list));
    Some(Value::Object(out))
}

/// Aggregated discovery (`application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`)
/// for `/api` (`core == true`: one item, the core group, with empty metadata) or `/apis`
/// (`core == false`: every named group in kube-apiserver's order).
pub fn aggregated(cat: &Catalog, core: bool) -> Value {
    let items: Vec<Value> = if core {
        vec![aggregated_group(cat, "", &["v1"])]
    } else {
        served_groups(cat)
            .into_iter()
            .map(|(g, versions)| aggregated_group(cat, g, &versions))
            .collect()
    };
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items
    })
}

fn aggregated_group(cat: &Catalog, group: &str, versions: &[&str]) -> Value {
    let metadata = if group.is_empty() {
        json!({})
    } else {
        json!({ "name": group })
    };
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| {
            let mut entries: Vec<(&str, Value)> = cat
                .in_group_version(group, v)
                .map(|r| (r.resource.as_str(), aggregated_resource(r)))
                .collect();
            entries.extend(unstored(group, v).map(|u| (u.resource, u.aggregated())));
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let rs: Vec<Value> = entries.into_iter().map(|(_, e)| e).collect();
            json!({"version": v, "resources": rs, "freshness": "Current"})
        })
        .collect();
    json!({"metadata": metadata, "versions": vs})
}

/// The head of an aggregated discovery entry: resource, response kind, scope, singular.
fn aggregated_entry(
    resource: &str,
    (group, version, kind): (&str, &str, &str),
    namespaced: bool,
    singular: &str,
) -> Map<String, Value> {
    let mut e = Map::new();
    e.insert("resource".into(), json!(resource));
    e.insert(
        "responseKind".into(),
        json!({"group": group, "version": version, "kind": kind}),
    );
    let scope = if namespaced { "Namespaced" } else { "Cluster" };
    e.insert("scope".into(), json!(scope));
    e.insert("singularResource".into(), json!(singular));
    e
}

fn aggregated_resource(r: &Resource) -> Value {
    let kind = (r.group.as_str(), r.version.as_str(), r.kind.as_str());
    let mut e = aggregated_entry(&r.resource, kind, r.namespaced, &r.singular);
    e.insert("verbs".into(), json!(r.verbs));
    if !r.short_names.is_empty() {
        e.insert("shortNames".into(), json!(r.short_names));
    }
    if !r.categories.is_empty() {
        e.insert("categories".into(), json!(r.categories));
    }
    let subs: Vec<Value> = subresources(r)
        .into_iter()
        .map(|sub| {
            let (g, v, k) = sub.kind;
            json!({
                "subresource": sub.name,
                "responseKind": {"group": g, "version": v, "kind": k},
                "verbs": sub.verbs,
            })
        })
        .collect();
    if !subs.is_empty() {
        e.insert("subresources".into(), Value::Array(subs));
    }
    Value::Object(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{builtin, resources};

    fn cat() -> std::sync::Arc<Catalog> {
        builtin::registry().snapshot()
    }

    fn api_group_list() -> Value {
        super::api_group_list(&cat())
    }

    fn api_group(group: &str) -> Option<Value> {
        super::api_group(&cat(), group)
    }

    fn api_resource_list(group: &str, version: &str) -> Option<Value> {
        super::api_resource_list(&cat(), group, version)
    }

    fn aggregated(core: bool) -> Value {
        super::aggregated(&cat(), core)
    }

    fn storage_version_hash(group: &str, version: &str, resource: &str) -> Option<String> {
        cat()
            .get(group, version, resource)
            .and_then(|r| r.storage_version_hash.clone())
    }

    #[test]
    fn api_versions_doc() {
        let v = api_versions_for("10.0.0.1:6443");
        assert_eq!(api_versions()["versions"], json!(["v1"]));
        assert_eq!(
            v.to_string(),
            r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"10.0.0.1:6443"}]}"#
        );
    }

    #[test]
    fn group_list_order_and_autoscaling_versions() {
        let v = api_group_list();
        assert_eq!(v["kind"], "APIGroupList");
        assert_eq!(v["apiVersion"], "v1");
        let names: Vec<&str> = v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        assert_eq!(names[0], "apiregistration.k8s.io");
        assert_eq!(names[1], "apps");
        assert_eq!(names[2], "events.k8s.io");
        assert_eq!(names[3], "authentication.k8s.io");
        assert_eq!(names[4], "authorization.k8s.io");
        assert!(!names.contains(&""));
        assert_eq!(names.len(), 19);
        let reviews = api_resource_list("authorization.k8s.io", "v1").unwrap();
        assert_eq!(reviews["resources"].as_array().unwrap().len(), 4);
        assert_eq!(reviews["resources"][0]["namespaced"], true);
        let a = api_group("autoscaling").unwrap();
        assert_eq!(
            a.to_string(),
            r#"{"kind":"APIGroup","apiVersion":"v1","name":"autoscaling","versions":[{"groupVersion":"autoscaling/v2","version":"v2"},{"groupVersion":"autoscaling/v1","version":"v1"}],"preferredVersion":{"groupVersion":"autoscaling/v2","version":"v2"}}"#
        );
        assert!(api_group("").is_none());
        assert!(api_group("nope.example.com").is_none());
    }

    #[test]
    fn resource_list_entries() {
        let v = api_resource_list("apps", "v1").unwrap();
        assert_eq!(v["groupVersion"], "apps/v1");
        let rs = v["resources"].as_array().unwrap();
        let names: Vec<&str> = rs.iter().map(|r| r["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status"
            ]
        );
        let deploy = &rs[3];
        assert_eq!(
            deploy.to_string(),
            r#"{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["deploy"],"categories":["all"],"storageVersionHash":"8aSe+NMegvE="}"#
        );
        assert_eq!(
            rs[4].to_string(),
            r#"{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get","patch","update"]}"#
        );
        let core = api_resource_list("", "v1").unwrap();
        assert!(core.get("apiVersion").is_none());
        assert_eq!(core["groupVersion"], "v1");
        assert!(api_resource_list("apps", "v2").is_none());
        assert!(api_resource_list("autoscaling", "v1").is_some());
    }

    #[test]
    fn storage_hashes() {
        let cases = [
            ("", "v1", "pods", Some("xPOwRZ+Yhw8=")),
            ("", "v1", "events", Some("r2yiGXH7wu8=")),
            ("events.k8s.io", "v1", "events", Some("r2yiGXH7wu8=")),
            (
                "autoscaling",
                "v1",
                "horizontalpodautoscalers",
                Some("qwQve8ut294="),
            ),
            (
                "autoscaling",
                "v2",
                "horizontalpodautoscalers",
                Some("qwQve8ut294="),
            ),
            ("apps", "v1", "deployments", Some("8aSe+NMegvE=")),
            ("apps", "v1", "nope", None),
        ];
        for (g, v, r, want) in cases {
            assert_eq!(
                storage_version_hash(g, v, r).as_deref(),
                want,
                "{g}/{v}/{r}"
            );
        }
        for r in resources::RESOURCES {
            assert!(
                storage_version_hash(r.group, r.version, r.resource).is_some(),
                "{}",
                r.resource
            );
        }
    }

    #[test]
    fn every_resource_is_discoverable() {
        let core = aggregated(true);
        let apis = aggregated(false);
        assert_eq!(core["items"].as_array().unwrap().len(), 1);
        assert_eq!(core["items"][0]["metadata"], json!({}));
        for r in resources::RESOURCES {
            // legacy documents
            let list = api_resource_list(r.group, r.version).unwrap();
            let found = list["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["name"] == r.resource && e["kind"] == r.kind);
            assert!(found, "{}/{} {}", r.group, r.version, r.resource);
            // aggregated documents
            let doc = if r.group.is_empty() { &core } else { &apis };
            let item = doc["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["metadata"]["name"].as_str().unwrap_or("") == r.group)
                .unwrap();
            let ver = item["versions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["version"] == r.version)
                .unwrap();
            let res = ver["resources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["resource"] == r.resource)
                .unwrap();
            assert_eq!(res["responseKind"]["kind"], r.kind);
            assert_eq!(
                res["scope"],
                if r.namespaced {
                    "Namespaced"
                } else {
                    "Cluster"
                }
            );
            let subs: Vec<&str> = res["subresources"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|s| s["subresource"].as_str().unwrap())
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(subs.contains(&"status"), r.has_status, "{}", r.resource);
            assert_eq!(subs.contains(&"scale"), r.scale.is_some(), "{}", r.resource);
        }
    }

    #[test]
    fn aggregated_deployments_shape() {
        let apis = aggregated(false);
        assert_eq!(apis["kind"], "APIGroupDiscoveryList");
        assert_eq!(apis["apiVersion"], "apidiscovery.k8s.io/v2");
        assert_eq!(
            apis["items"][0]["metadata"]["name"],
            "apiregistration.k8s.io"
        );
        let apps = &apis["items"][1];
        assert_eq!(apps["metadata"]["name"], "apps");
        let v1 = &apps["versions"][0];
        assert_eq!(v1["freshness"], "Current");
        let d = v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "deployments")
            .unwrap();
        assert_eq!(
            d.to_string(),
            r#"{"resource":"deployments","responseKind":{"group":"apps","version":"v1","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["deploy"],"categories":["all"],"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]},{"subresource":"status","responseKind":{"group":"apps","version":"v1","kind":"Deployment"},"verbs":["get","patch","update"]}]}"#
        );
        let autoscaling = apis["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["metadata"]["name"] == "autoscaling")
            .unwrap();
        assert_eq!(autoscaling["versions"][0]["version"], "v2");
        assert_eq!(autoscaling["versions"][1]["version"], "v1");
    }
}
