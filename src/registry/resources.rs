//! The static table of every GA built-in resource kube-apiserver v1.33 persists.
//!
//! This module owns the *facts* about built-in resources: group/version/plural, kind, scope,
//! discovery verbs, short names, categories, which subresources (status, scale) exist, how
//! `metadata.name` is validated and whether `metadata.generation` is maintained. The table
//! itself, [`RESOURCES`], is generated (`crate::generated::resources`, written by
//! `tests/generated.rs`, see `docs/generated.md`): kind, list kind, singular, scope, verbs, the
//! status subresource and the definition from upstream's OpenAPI document's paths, and which
//! resources, their order, short names, categories, name rule, generation, scale paths and
//! preferred version from `tests/generated/resources_input.txt` (upstream's discovery and
//! registry strategies and validation packages, transcribed). The types it is made of live in
//! `resource_info`; both are re-exported here. What stays hand-written here: the subresource
//! verbs and where objects are stored (`storage_gvk`, `storage_definition`).
//!
//! It deliberately knows nothing about storage, HTTP, validation logic, defaulting or
//! custom resources (CRDs are served dynamically elsewhere). Non-persisted resources (bindings,
//! componentstatuses, token/access reviews, evictions, ...) and connect-style subresources
//! (exec, log, proxy, ...) are not listed.

pub use super::resource_info::{ResourceInfo, ScaleInfo, STANDARD_VERBS};
pub use crate::generated::resources::RESOURCES;

/// Verbs of the `status` and `scale` subresources, in discovery order.
pub const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

/// The group, version and kind a built-in resource's objects are stored as: its own, except
/// that every HPA version is stored as autoscaling/v2 and events.k8s.io Events as core v1
/// Events.
pub fn storage_gvk(r: &ResourceInfo) -> (&'static str, &'static str, &'static str) {
    match (r.group, r.resource) {
        ("autoscaling", "horizontalpodautoscalers") => ("autoscaling", "v2", r.kind),
        ("events.k8s.io", "events") => ("", "v1", r.kind),
        _ => (r.group, r.version, r.kind),
    }
}

/// The OpenAPI definition a built-in resource's objects are stored as: that of the row of its
/// storage group, version and kind.
pub fn storage_definition(r: &ResourceInfo) -> &'static str {
    let (group, version, kind) = storage_gvk(r);
    RESOURCES
        .iter()
        .find(|s| s.group == group && s.version == version && s.kind == kind)
        .map_or(r.definition, |s| s.definition)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(group: &str, version: &str, resource: &str) -> Option<&'static ResourceInfo> {
        RESOURCES
            .iter()
            .find(|r| r.group == group && r.version == version && r.resource == resource)
    }

    fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
        let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
        for r in RESOURCES.iter().filter(|r| !r.group.is_empty()) {
            match out.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, vs)) if !vs.contains(&r.version) => vs.push(r.version),
                Some(_) => {}
                None => out.push((r.group, vec![r.version])),
            }
        }
        out
    }

    #[test]
    fn table_is_consistent() {
        let mut seen = std::collections::BTreeSet::new();
        for r in RESOURCES {
            assert!(
                seen.insert((r.group, r.version, r.resource)),
                "dup {}",
                r.resource
            );
            assert_eq!(r.singular, r.kind.to_ascii_lowercase());
            assert!(!r.verbs.is_empty());
        }
    }

    /// Oracle: upstream's OpenAPI document. Every namespaced/cluster collection path with a
    /// create operation in the served group versions must have an entry with the right scope,
    /// GVK and subresources, and every entry must exist upstream.
    #[test]
    fn matches_upstream_swagger() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/data/kubernetes-openapi/swagger-v1.33.1.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("skipping: {} not found", path.display());
            return;
        };
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let served: Vec<(&str, &str)> = std::iter::once(("", vec!["v1"]))
            .chain(groups())
            .flat_map(|(g, vs)| vs.into_iter().map(move |v| (g, v)))
            .collect();
        // Not persisted: no table entry expected.
        let skip = ["bindings"];
        let mut checked = std::collections::BTreeSet::new();
        let mut subs = std::collections::BTreeSet::new();
        for (p, ops) in doc["paths"].as_object().unwrap() {
            let (group, version, rest) = if let Some(rest) = p.strip_prefix("/api/v1/") {
                ("", "v1", rest)
            } else if let Some(rest) = p.strip_prefix("/apis/") {
                let mut it = rest.splitn(3, '/');
                let (Some(g), Some(v), Some(rest)) = (it.next(), it.next(), it.next()) else {
                    continue;
                };
                (g, v, rest)
            } else {
                continue;
            };
            if !served.contains(&(group, version)) || rest.starts_with("watch/") {
                continue;
            }
            let (namespaced, segs) = match rest.strip_prefix("namespaces/{namespace}/") {
                Some(r) => (true, r.split('/').collect::<Vec<_>>()),
                None => (false, rest.split('/').collect::<Vec<_>>()),
            };
            if segs.len() == 3 && segs[1] == "{name}" {
                subs.insert((group, version, segs[0].to_string(), segs[2].to_string()));
                continue;
            }
            if segs.len() != 1 || skip.contains(&segs[0]) {
                continue;
            }
            let Some(post) = ops.get("post") else {
                continue;
            };
            let gvk = &post["x-kubernetes-group-version-kind"];
            let info = lookup(group, version, segs[0])
                .unwrap_or_else(|| panic!("missing table entry for {p}"));
            assert_eq!(info.namespaced, namespaced, "{p}");
            assert_eq!(gvk["group"], info.group, "{p}");
            assert_eq!(gvk["version"], info.version, "{p}");
            assert_eq!(gvk["kind"], info.kind, "{p}");
            let def = &doc["definitions"][info.definition];
            assert!(def.is_object(), "definition {}", info.definition);
            let listed = def["x-kubernetes-group-version-kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| {
                    x["group"] == info.group
                        && x["version"] == info.version
                        && x["kind"] == info.kind
                });
            assert!(listed, "{} gvk", info.definition);
            let list_def =
                info.definition.rsplit_once('.').unwrap().0.to_string() + "." + info.list_kind;
            assert!(doc["definitions"][&list_def].is_object(), "{list_def}");
            checked.insert((group, version, info.resource));
        }
        for r in RESOURCES {
            assert!(
                checked.contains(&(r.group, r.version, r.resource)),
                "{}/{} {} not upstream",
                r.group,
                r.version,
                r.resource
            );
            let has = |s: &str| {
                subs.contains(&(r.group, r.version, r.resource.to_string(), s.to_string()))
            };
            assert_eq!(has("status"), r.has_status, "{} status", r.resource);
            assert_eq!(has("scale"), r.scale.is_some(), "{} scale", r.resource);
        }
    }
}
