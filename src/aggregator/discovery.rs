//! The remote APIServices' groups in the server's discovery documents: the legacy `/apis`
//! APIGroupList and `/apis/<group>` APIGroup (from the APIServices, as kube's aggregator
//! builds them, unavailable ones included), and aggregated discovery (from the
//! APIResourceList each extension server last answered, `Stale` while it is unavailable).
//! Groups are placed by `groupPriorityMinimum` (highest first, then by name) and versions by
//! `versionPriority`, then kube's version order. Nothing here fetches: the availability loop
//! keeps the documents.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::{local_priority, Remote};

/// kube's `version.CompareKubeAwareVersionStrings`: GA over beta over alpha, higher numbers
/// first, non-kube-like versions last, lexicographically.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u64, u8, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((major, 2, 0));
        }
        let (kind, num) = if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (0, n)
        } else {
            return None;
        };
        Some((major, kind, num.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => {
            // GA > beta > alpha, then higher major, then higher minor.
            y.1.cmp(&x.1)
                .then_with(|| y.0.cmp(&x.0))
                .then_with(|| y.2.cmp(&x.2))
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The remote groups, each with its versions in priority order, groups in priority order.
fn remote_groups(remotes: &[Arc<Remote>]) -> Vec<(String, i64, Vec<Arc<Remote>>)> {
    let mut by_group: BTreeMap<String, Vec<Arc<Remote>>> = BTreeMap::new();
    for r in remotes {
        by_group.entry(r.group.clone()).or_default().push(r.clone());
    }
    let mut out: Vec<(String, i64, Vec<Arc<Remote>>)> = by_group
        .into_iter()
        .map(|(g, mut vs)| {
            vs.sort_by(|a, b| {
                b.version_priority
                    .cmp(&a.version_priority)
                    .then_with(|| compare_versions(&a.version, &b.version))
            });
            let prio = vs.iter().map(|r| r.group_priority).max().unwrap_or(0);
            (g, prio, vs)
        })
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Where a group of priority `prio` named `name` goes among `items` (named by `name_of`).
fn position(items: &[Value], name_of: impl Fn(&Value) -> String, prio: i64, name: &str) -> usize {
    items
        .iter()
        .position(|it| {
            let n = name_of(it);
            let version = it
                .get("preferredVersion")
                .and_then(|p| p.get("version"))
                .or_else(|| {
                    it.get("versions")
                        .and_then(|v| v.get(0))
                        .and_then(|v| v.get("version"))
                })
                .and_then(Value::as_str)
                .unwrap_or("v1");
            let p = local_priority(&n, version).0;
            p < prio || (p == prio && n.as_str() > name)
        })
        .unwrap_or(items.len())
}

fn group_version(group: &str, version: &str) -> String {
    format!("{group}/{version}")
}

/// The APIGroup body of a remote group.
fn group_body(group: &str, versions: &[Arc<Remote>]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|r| json!({"groupVersion": group_version(group, &r.version), "version": r.version}))
        .collect();
    let preferred = versions.first().map(|r| r.version.as_str()).unwrap_or("v1");
    json!({
        "name": group,
        "versions": vs,
        "preferredVersion": {"groupVersion": group_version(group, preferred), "version": preferred},
    })
}

/// Adds the remote groups to a legacy APIGroupList (groups the server serves itself keep
/// their entry).
pub fn merge_group_list(list: &mut Value, remotes: &[Arc<Remote>]) {
    let Some(groups) = list.get_mut("groups").and_then(Value::as_array_mut) else {
        return;
    };
    let name_of = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    for (g, prio, versions) in remote_groups(remotes) {
        if let Some(local) = groups.iter_mut().find(|it| name_of(it) == g) {
            merge_versions(local, &g, &versions);
            continue;
        }
        let at = position(groups, name_of, prio, &g);
        groups.insert(at, group_body(&g, &versions));
    }
}

/// The version order kube's aggregator gives a group: `versionPriority` (the local
/// APIServices' own for served versions), then kube's version order.
fn sort_versions<T>(
    items: &mut [T],
    group: &str,
    remotes: &[Arc<Remote>],
    version_of: impl Fn(&T) -> String,
) {
    let prio = |v: &str| {
        remotes
            .iter()
            .find(|r| r.version == v)
            .map(|r| r.version_priority)
            .unwrap_or_else(|| local_priority(group, v).1)
    };
    items.sort_by(|a, b| {
        let (a, b) = (version_of(a), version_of(b));
        prio(&b)
            .cmp(&prio(&a))
            .then_with(|| compare_versions(&a, &b))
    });
}

/// A locally served group's APIGroup body with the versions remote APIServices add to it
/// (a remote APIService of a version also served here keeps one entry: requests for it are
/// proxied).
pub fn merge_versions(group_body: &mut Value, group: &str, remotes: &[Arc<Remote>]) {
    let remotes: Vec<Arc<Remote>> = remotes
        .iter()
        .filter(|r| r.group == group)
        .cloned()
        .collect();
    if remotes.is_empty() {
        return;
    }
    let Some(versions) = group_body.get_mut("versions").and_then(Value::as_array_mut) else {
        return;
    };
    for r in &remotes {
        if !versions.iter().any(|v| v["version"] == r.version.as_str()) {
            versions.push(
                json!({"groupVersion": group_version(group, &r.version), "version": r.version}),
            );
        }
    }
    let version_of = |v: &Value| v["version"].as_str().unwrap_or("").to_string();
    sort_versions(versions, group, &remotes, version_of);
    if let Some(first) = versions.first().cloned() {
        group_body["preferredVersion"] = first;
    }
}

/// `GET /apis/<group>` for a remote group.
pub fn api_group(group: &str, remotes: &[Arc<Remote>]) -> Option<Value> {
    let (_, _, versions) = remote_groups(remotes)
        .into_iter()
        .find(|(g, _, _)| g == group)?;
    let mut out = Map::new();
    out.insert("kind".into(), json!("APIGroup"));
    out.insert("apiVersion".into(), json!("v1"));
    if let Value::Object(body) = group_body(group, &versions) {
        out.extend(body);
    }
    Some(Value::Object(out))
}

/// An extension server's APIResourceList as aggregated discovery's resources.
pub fn aggregated_resources(group: &str, version: &str, list: &Value) -> Vec<Value> {
    let entries: Vec<&Value> = list
        .get("resources")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let s = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let kind_of = |e: &Value| {
        let g = e.get("group").and_then(Value::as_str).unwrap_or(group);
        let v = e.get("version").and_then(Value::as_str).unwrap_or(version);
        json!({"group": g, "version": v, "kind": s(e, "kind")})
    };
    let mut out: Vec<Value> = Vec::new();
    for e in &entries {
        let name = s(e, "name");
        if name.contains('/') {
            continue;
        }
        let mut r = Map::new();
        r.insert("resource".into(), json!(name));
        r.insert("responseKind".into(), kind_of(e));
        let namespaced = e.get("namespaced") == Some(&Value::Bool(true));
        r.insert(
            "scope".into(),
            json!(if namespaced { "Namespaced" } else { "Cluster" }),
        );
        r.insert("singularResource".into(), json!(s(e, "singularName")));
        r.insert(
            "verbs".into(),
            e.get("verbs").cloned().unwrap_or_else(|| json!([])),
        );
        for k in ["shortNames", "categories"] {
            if let Some(v) = e
                .get(k)
                .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            {
                r.insert(k.into(), v.clone());
            }
        }
        let subs: Vec<Value> = entries
            .iter()
            .filter_map(|sub| {
                let n = s(sub, "name");
                let (parent, sr) = n.split_once('/')?;
                (parent == name).then(|| {
                    json!({"subresource": sr, "responseKind": kind_of(sub),
                           "verbs": sub.get("verbs").cloned().unwrap_or_else(|| json!([]))})
                })
            })
            .collect();
        if !subs.is_empty() {
            r.insert("subresources".into(), Value::Array(subs));
        }
        out.push(Value::Object(r));
    }
    out
}

/// Adds the remote groups to an aggregated APIGroupDiscoveryList: a version whose server
/// never answered discovery is left out; one whose server stopped answering is `Stale`.
pub fn merge_aggregated(doc: &mut Value, remotes: &[Arc<Remote>]) {
    let Some(items) = doc.get_mut("items").and_then(Value::as_array_mut) else {
        return;
    };
    let name_of = |v: &Value| {
        v.get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    for (g, prio, versions) in remote_groups(remotes) {
        if let Some(local) = items.iter_mut().find(|it| name_of(it) == g) {
            // A version a remote APIService takes over is the extension server's (requests
            // for it are proxied); one it adds joins the group.
            let Some(vs) = local.get_mut("versions").and_then(Value::as_array_mut) else {
                continue;
            };
            for r in &versions {
                let here = vs.iter().position(|v| v["version"] == r.version.as_str());
                let Some(list) = r.resources.as_ref() else {
                    if let Some(i) = here {
                        vs.remove(i);
                    }
                    continue;
                };
                let entry = json!({
                    "version": r.version,
                    "resources": aggregated_resources(&g, &r.version, list),
                    "freshness": if r.available { "Current" } else { "Stale" },
                });
                match here {
                    Some(i) => vs[i] = entry,
                    None => vs.push(entry),
                }
            }
            let version_of = |v: &Value| v["version"].as_str().unwrap_or("").to_string();
            sort_versions(vs, &g, &versions, version_of);
            continue;
        }
        let vs: Vec<Value> = versions
            .iter()
            .filter_map(|r| {
                let list = r.resources.as_ref()?;
                Some(json!({
                    "version": r.version,
                    "resources": aggregated_resources(&g, &r.version, list),
                    "freshness": if r.available { "Current" } else { "Stale" },
                }))
            })
            .collect();
        if vs.is_empty() {
            continue;
        }
        let at = position(items, name_of, prio, &g);
        items.insert(at, json!({"metadata": {"name": g}, "versions": vs}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(g: &str, v: &str, gp: i64, vp: i64) -> Arc<Remote> {
        Arc::new(Remote {
            name: format!("{v}.{g}"),
            group: g.into(),
            version: v.into(),
            group_priority: gp,
            version_priority: vp,
            available: true,
            resources: Some(json!({"resources": [
                {"name": "flunders", "singularName": "flunder", "namespaced": true,
                 "kind": "Flunder", "verbs": ["get", "list", "watch"]},
                {"name": "flunders/status", "singularName": "", "namespaced": true,
                 "kind": "Flunder", "verbs": ["get"]},
            ]})),
            ..Remote::default()
        })
    }

    #[test]
    fn kube_version_order() {
        let mut vs = vec!["v1alpha1", "foo", "v2", "v1", "v1beta2", "v11beta1"];
        vs.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(vs, ["v2", "v1", "v11beta1", "v1beta2", "v1alpha1", "foo"]);
    }

    #[test]
    fn remote_groups_are_placed_by_priority() {
        let mut list = json!({"groups": [
            {"name": "apps", "preferredVersion": {"version": "v1"}},
            {"name": "flowcontrol.apiserver.k8s.io", "preferredVersion": {"version": "v1"}},
            {"name": "stable.example.com", "preferredVersion": {"version": "v1"}},
        ]});
        let remotes = vec![
            remote("wardle.example.com", "v1alpha1", 1000, 15),
            remote("wardle.example.com", "v1beta1", 1000, 20),
            remote("high.example.com", "v1", 17900, 1),
        ];
        merge_group_list(&mut list, &remotes);
        let names: Vec<&str> = list["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "high.example.com",
                "apps",
                "flowcontrol.apiserver.k8s.io",
                "stable.example.com",
                "wardle.example.com"
            ]
        );
        let wardle = &list["groups"][4];
        assert_eq!(wardle["preferredVersion"]["version"], "v1beta1");
        let agg = aggregated_resources(
            "wardle.example.com",
            "v1beta1",
            remotes[1].resources.as_ref().unwrap(),
        );
        assert_eq!(agg.len(), 1);
        assert_eq!(agg[0]["subresources"][0]["subresource"], "status");
        assert_eq!(agg[0]["scope"], "Namespaced");
    }
}
