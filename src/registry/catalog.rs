//! The runtime registry: which resources this replica serves right now.
//!
//! A [`Registry`] holds an immutable [`Catalog`] behind an atomically swapped pointer
//! (`arc_swap`): a reader takes the current catalog with one atomic load and keeps it for the
//! whole request, so readers never lock and never see a half-made change. A writer (start-up
//! registration of the built-ins; custom resource definitions later) builds a new catalog and
//! swaps it in; every change bumps the catalog's `generation`, and subscribers (discovery and
//! OpenAPI caches, the watch cache, RBAC's resource matching) are told through a
//! `tokio::sync::watch` channel.
//!
//! The catalog keeps kube-apiserver's discovery order: core first, then groups in the order
//! they were registered; inside a group the preferred version first; inside a version the
//! resources in registration order.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;

use super::resource::Resource;

/// One immutable set of served resources.
#[derive(Default)]
pub struct Catalog {
    /// Bumped by every change.
    pub generation: u64,
    all: Vec<Arc<Resource>>,
    /// group → version → resource → position in `all` (looked up with borrowed strings).
    index: HashMap<String, HashMap<String, HashMap<String, usize>>>,
}

impl Catalog {
    fn new(generation: u64, all: Vec<Arc<Resource>>) -> Catalog {
        let mut index: HashMap<String, HashMap<String, HashMap<String, usize>>> = HashMap::new();
        for (i, r) in all.iter().enumerate() {
            index
                .entry(r.group.clone())
                .or_default()
                .entry(r.version.clone())
                .or_default()
                .insert(r.resource.clone(), i);
        }
        Catalog {
            generation,
            all,
            index,
        }
    }

    /// Every served resource, in discovery order.
    pub fn all(&self) -> &[Arc<Resource>] {
        &self.all
    }

    /// The resource served at group/version/resource.
    pub fn get(&self, group: &str, version: &str, resource: &str) -> Option<&Arc<Resource>> {
        self.position(group, version, resource)
            .map(|i| &self.all[i])
    }

    fn position(&self, group: &str, version: &str, resource: &str) -> Option<usize> {
        self.index.get(group)?.get(version)?.get(resource).copied()
    }

    /// The resource of a group, version and kind.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<&Arc<Resource>> {
        self.all
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
    }

    /// All resources of one group/version, in discovery order.
    pub fn in_group_version<'a>(
        &'a self,
        group: &'a str,
        version: &'a str,
    ) -> impl Iterator<Item = &'a Arc<Resource>> + 'a {
        self.all
            .iter()
            .filter(move |r| r.group == group && r.version == version)
    }

    /// A resource by any name kubectl accepts in a group: plural, singular or short name
    /// (case-insensitive), preferring the group's preferred version.
    pub fn resolve(&self, group: &str, name: &str) -> Option<&Arc<Resource>> {
        let name = name.to_ascii_lowercase();
        let mut found = None;
        for r in self.all.iter().filter(|r| r.group == group) {
            if r.answers_to(&name) {
                if r.preferred {
                    return Some(r);
                }
                found = found.or(Some(r));
            }
        }
        found
    }

    /// Named API groups (served under `/apis`) in discovery order, each with its versions,
    /// preferred version first. The core group is not included.
    pub fn groups(&self) -> Vec<(&str, Vec<&str>)> {
        let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
        for r in self.all.iter().filter(|r| !r.group.is_empty()) {
            match out.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, versions)) => {
                    if !versions.contains(&r.version.as_str()) {
                        if r.preferred {
                            versions.insert(0, &r.version);
                        } else {
                            versions.push(&r.version);
                        }
                    }
                }
                None => out.push((&r.group, vec![&r.version])),
            }
        }
        out
    }

    /// The preferred version of a group, if the group is served.
    pub fn preferred_version(&self, group: &str) -> Option<&str> {
        self.all
            .iter()
            .find(|r| r.group == group && r.preferred)
            .or_else(|| self.all.iter().find(|r| r.group == group))
            .map(|r| r.version.as_str())
    }
}

/// Why a change of the registry was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error("{0} is already served")]
    Exists(String),
    #[error("{0} is not served")]
    Missing(String),
    #[error("{0} is built in and cannot be removed")]
    BuiltIn(String),
}

/// The served resources, changeable while serving. Cheap to share (`Arc<Registry>`).
pub struct Registry {
    current: ArcSwap<Catalog>,
    /// Number of built-in entries (they come first and are never removed).
    builtins: usize,
    changes: tokio::sync::watch::Sender<u64>,
    /// Serializes writers (readers never take it).
    write: std::sync::Mutex<()>,
    /// Built-ins `--runtime-config` turned off: not served, still known to the registry's
    /// own loops.
    hidden: Vec<Arc<Resource>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.current.load();
        write!(
            f,
            "Registry(generation {}, {} resources)",
            c.generation,
            c.all.len()
        )
    }
}

fn describe(r: &Resource) -> String {
    format!("{}/{}", r.api_version(), r.resource)
}

impl Registry {
    /// A registry serving `builtins`, which can never be removed.
    pub fn new(builtins: Vec<Resource>) -> Registry {
        Registry::serving(builtins, |_| true)
    }

    /// A registry serving the `builtins` for which `enabled` holds; the others stay known
    /// to [`Registry::builtin`] only (`--runtime-config`).
    pub fn serving(builtins: Vec<Resource>, enabled: impl Fn(&Resource) -> bool) -> Registry {
        let (all, hidden): (Vec<Arc<Resource>>, Vec<Arc<Resource>>) =
            builtins.into_iter().map(Arc::new).partition(|r| enabled(r));
        let n = all.len();
        Registry {
            current: ArcSwap::from_pointee(Catalog::new(1, all)),
            builtins: n,
            changes: tokio::sync::watch::channel(1).0,
            write: std::sync::Mutex::new(()),
            hidden,
        }
    }

    /// The current catalog: one atomic load; keep it for the whole request.
    pub fn snapshot(&self) -> Arc<Catalog> {
        self.current.load_full()
    }

    /// The resource served at group/version/resource right now.
    pub fn get(&self, group: &str, version: &str, resource: &str) -> Option<Arc<Resource>> {
        self.current.load().get(group, version, resource).cloned()
    }

    /// A built-in resource the caller knows is served (a programming error otherwise).
    pub fn builtin(&self, group: &str, version: &str, resource: &str) -> Arc<Resource> {
        self.get(group, version, resource)
            .or_else(|| {
                self.hidden
                    .iter()
                    .find(|r| r.group == group && r.version == version && r.resource == resource)
                    .cloned()
            })
            .unwrap_or_else(|| {
                panic!("built-in resource {group}/{version}/{resource} is registered")
            })
    }

    /// The generation of the current catalog.
    pub fn generation(&self) -> u64 {
        self.current.load().generation
    }

    /// Told the new generation after every change.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn swap(&self, all: Vec<Arc<Resource>>) {
        let generation = self.current.load().generation + 1;
        self.current.store(Arc::new(Catalog::new(generation, all)));
        self.changes.send_replace(generation);
    }

    /// Serves a new resource (after the built-ins and earlier additions).
    pub fn add(&self, resource: Resource) -> Result<u64, RegistryError> {
        let _w = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let cur = self.current.load_full();
        if cur
            .get(&resource.group, &resource.version, &resource.resource)
            .is_some()
        {
            return Err(RegistryError::Exists(describe(&resource)));
        }
        let mut all = cur.all.clone();
        all.push(Arc::new(resource));
        self.swap(all);
        Ok(self.generation())
    }

    /// Replaces a resource added at run time (e.g. its definition changed).
    pub fn replace(&self, resource: Resource) -> Result<u64, RegistryError> {
        let _w = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let cur = self.current.load_full();
        let Some(i) = cur.position(&resource.group, &resource.version, &resource.resource) else {
            return Err(RegistryError::Missing(describe(&resource)));
        };
        if i < self.builtins {
            return Err(RegistryError::BuiltIn(describe(&resource)));
        }
        let mut all = cur.all.clone();
        all[i] = Arc::new(resource);
        self.swap(all);
        Ok(self.generation())
    }

    /// Serves exactly `custom` besides the built-ins (replacing every earlier run-time
    /// entry); nothing changes, and no generation is spent, when they are the same entries
    /// (same resources from the same origins) as now. An entry that would shadow a built-in
    /// is left out. Returns the generation served.
    pub fn set_custom(&self, custom: Vec<Resource>) -> u64 {
        let _w = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let cur = self.current.load_full();
        let key = |r: &Resource| {
            (
                r.group.clone(),
                r.version.clone(),
                r.resource.clone(),
                r.origin.clone(),
            )
        };
        let custom: Vec<Resource> = custom
            .into_iter()
            .filter(|r| {
                cur.get(&r.group, &r.version, &r.resource)
                    .is_none_or(|have| have.origin.is_some())
            })
            .collect();
        let now: Vec<_> = cur.all[self.builtins..].iter().map(|r| key(r)).collect();
        let want: Vec<_> = custom.iter().map(key).collect();
        if now == want {
            return cur.generation;
        }
        let mut all = cur.all[..self.builtins].to_vec();
        let mut seen = std::collections::HashSet::new();
        for r in custom {
            if seen.insert((r.group.clone(), r.version.clone(), r.resource.clone())) {
                all.push(Arc::new(r));
            }
        }
        self.swap(all);
        self.current.load().generation
    }

    /// Stops serving a resource added at run time.
    pub fn remove(&self, group: &str, version: &str, resource: &str) -> Result<u64, RegistryError> {
        let _w = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let cur = self.current.load_full();
        let name = format!(
            "{}/{resource}",
            if group.is_empty() {
                version.to_string()
            } else {
                format!("{group}/{version}")
            }
        );
        let Some(i) = cur.position(group, version, resource) else {
            return Err(RegistryError::Missing(name));
        };
        if i < self.builtins {
            return Err(RegistryError::BuiltIn(name));
        }
        let mut all = cur.all.clone();
        all.remove(i);
        self.swap(all);
        Ok(self.generation())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::validation::NameRule;
    use crate::registry::builtin;

    #[test]
    fn sample_lookups() {
        let cat = builtin::registry().snapshot();
        // (group, version, resource, kind, namespaced, short names, categories, status, scale, name rule)
        #[allow(clippy::type_complexity)]
        let cases: &[(
            &str,
            &str,
            &str,
            &str,
            bool,
            &[&str],
            &[&str],
            bool,
            bool,
            NameRule,
        )] = &[
            (
                "",
                "v1",
                "pods",
                "Pod",
                true,
                &["po"],
                &["all"],
                true,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "",
                "v1",
                "services",
                "Service",
                true,
                &["svc"],
                &["all"],
                true,
                false,
                NameRule::Dns1035Label,
            ),
            (
                "",
                "v1",
                "namespaces",
                "Namespace",
                false,
                &["ns"],
                &[],
                true,
                false,
                NameRule::Dns1123Label,
            ),
            (
                "",
                "v1",
                "configmaps",
                "ConfigMap",
                true,
                &["cm"],
                &[],
                false,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "",
                "v1",
                "nodes",
                "Node",
                false,
                &["no"],
                &[],
                true,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "",
                "v1",
                "replicationcontrollers",
                "ReplicationController",
                true,
                &["rc"],
                &["all"],
                true,
                true,
                NameRule::Dns1123Subdomain,
            ),
            (
                "apps",
                "v1",
                "deployments",
                "Deployment",
                true,
                &["deploy"],
                &["all"],
                true,
                true,
                NameRule::Dns1123Subdomain,
            ),
            (
                "apps",
                "v1",
                "daemonsets",
                "DaemonSet",
                true,
                &["ds"],
                &["all"],
                true,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "batch",
                "v1",
                "cronjobs",
                "CronJob",
                true,
                &["cj"],
                &["all"],
                true,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "autoscaling",
                "v1",
                "horizontalpodautoscalers",
                "HorizontalPodAutoscaler",
                true,
                &["hpa"],
                &["all"],
                true,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "autoscaling",
                "v2",
                "horizontalpodautoscalers",
                "HorizontalPodAutoscaler",
                true,
                &["hpa"],
                &["all"],
                true,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "rbac.authorization.k8s.io",
                "v1",
                "clusterroles",
                "ClusterRole",
                false,
                &[],
                &[],
                false,
                false,
                NameRule::PathSegment,
            ),
            (
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                "CustomResourceDefinition",
                false,
                &["crd", "crds"],
                &["api-extensions"],
                true,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "coordination.k8s.io",
                "v1",
                "leases",
                "Lease",
                true,
                &[],
                &[],
                false,
                false,
                NameRule::Dns1123Subdomain,
            ),
            (
                "storage.k8s.io",
                "v1",
                "storageclasses",
                "StorageClass",
                false,
                &["sc"],
                &[],
                false,
                false,
                NameRule::Dns1123Subdomain,
            ),
        ];
        for &(g, v, r, kind, ns, short, cats, status, scale, rule) in cases {
            let info = cat.get(g, v, r).unwrap_or_else(|| panic!("{g}/{v}/{r}"));
            assert_eq!(info.kind, kind);
            assert_eq!(info.namespaced, ns, "{r}");
            assert_eq!(info.short_names, short, "{r}");
            assert_eq!(info.categories, cats, "{r}");
            assert_eq!(info.has_status, status, "{r}");
            assert_eq!(info.scale.is_some(), scale, "{r}");
            assert_eq!(info.name_rule, rule, "{r}");
            assert_eq!(info.list_kind, format!("{kind}List"));
            assert!(Arc::ptr_eq(cat.by_kind(g, v, kind).unwrap(), info));
        }
        assert!(cat.get("", "v1", "bindings").is_none());
        assert!(cat.get("apps", "v1beta1", "deployments").is_none());
        assert_eq!(cat.get("", "v1", "namespaces").unwrap().verbs.len(), 7);
        assert!(cat.get("apps", "v1", "deployments").unwrap().generation);
        assert!(!cat.get("", "v1", "configmaps").unwrap().generation);
    }

    #[test]
    fn resolve_names() {
        let cat = builtin::registry().snapshot();
        let cases = [
            ("", "po", Some("pods")),
            ("", "pod", Some("pods")),
            ("", "Pods", Some("pods")),
            ("apps", "deploy", Some("deployments")),
            ("autoscaling", "hpa", Some("horizontalpodautoscalers")),
            ("", "deploy", None),
        ];
        for (g, n, want) in cases {
            assert_eq!(
                cat.resolve(g, n).map(|r| r.resource.as_str()),
                want,
                "{g} {n}"
            );
        }
        assert_eq!(cat.resolve("autoscaling", "hpa").unwrap().version, "v2");
    }

    #[test]
    fn groups_order() {
        let cat = builtin::registry().snapshot();
        let gs = cat.groups();
        assert_eq!(gs[0], ("apiregistration.k8s.io", vec!["v1"]));
        assert_eq!(gs[1], ("apps", vec!["v1"]));
        assert!(gs.iter().all(|(g, _)| !g.is_empty()));
        assert_eq!(gs.len(), 17);
        let a = gs.iter().find(|(g, _)| *g == "autoscaling").unwrap();
        assert_eq!(a.1, vec!["v2", "v1"]);
        assert_eq!(cat.preferred_version("autoscaling"), Some("v2"));
        assert_eq!(cat.preferred_version("nope"), None);
        // Exactly one preferred version per group.
        for (g, vs) in &gs {
            let n = cat
                .all()
                .iter()
                .filter(|r| r.group == *g && r.preferred)
                .map(|r| r.version.as_str())
                .collect::<std::collections::BTreeSet<_>>();
            assert_eq!(n.len(), 1, "{g}");
            assert_eq!(n.into_iter().next(), Some(vs[0]));
        }
    }

    fn custom(group: &str, resource: &str) -> Resource {
        let base = builtin::registry().builtin("", "v1", "configmaps");
        Resource {
            group: group.into(),
            version: "v1".into(),
            resource: resource.into(),
            singular: resource.trim_end_matches('s').into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            namespaced: true,
            verbs: base.verbs.clone(),
            short_names: vec!["wd".into()],
            categories: vec![],
            has_status: false,
            scale: None,
            name_rule: NameRule::Dns1123Subdomain,
            generation: true,
            definition: String::new(),
            preferred: true,
            storage_group: group.into(),
            storage_version: "v1".into(),
            storage_definition: String::new(),
            storage_version_hash: None,
            schema: None,
            origin: Some("test".into()),
            terminating: false,
            printer_columns: None,
            deprecation_warning: None,
            protobuf: false,
            strategy: base.strategy.clone(),
        }
    }

    #[test]
    fn add_replace_remove() {
        let reg = builtin::registry();
        let mut changes = reg.subscribe();
        let before = reg.snapshot();
        let g0 = reg.generation();
        assert_eq!(reg.add(custom("example.com", "widgets")), Ok(g0 + 1));
        assert!(changes.has_changed().unwrap());
        assert_eq!(*changes.borrow_and_update(), g0 + 1);
        // A reader holding the old snapshot keeps seeing it.
        assert!(before.get("example.com", "v1", "widgets").is_none());
        let now = reg.snapshot();
        assert_eq!(
            now.resolve("example.com", "wd").unwrap().resource,
            "widgets"
        );
        assert!(now
            .groups()
            .iter()
            .any(|(g, vs)| *g == "example.com" && vs == &["v1"]));
        assert_eq!(
            reg.add(custom("example.com", "widgets")),
            Err(RegistryError::Exists("example.com/v1/widgets".into()))
        );
        let mut changed = custom("example.com", "widgets");
        changed.kind = "Gadget".into();
        reg.replace(changed).unwrap();
        assert_eq!(
            reg.get("example.com", "v1", "widgets").unwrap().kind,
            "Gadget"
        );
        assert_eq!(
            reg.remove("", "v1", "pods"),
            Err(RegistryError::BuiltIn("v1/pods".into()))
        );
        reg.remove("example.com", "v1", "widgets").unwrap();
        assert!(reg.get("example.com", "v1", "widgets").is_none());
        assert_eq!(reg.generation(), g0 + 3);
        assert_eq!(
            reg.remove("example.com", "v1", "widgets"),
            Err(RegistryError::Missing("example.com/v1/widgets".into()))
        );
        assert_eq!(reg.snapshot().all().len(), before.all().len());
    }

    /// Readers never block and never see a half-made catalog while a writer keeps adding and
    /// removing entries: every snapshot is internally consistent (its index and its list
    /// agree), and its generation never goes back.
    #[test]
    fn readers_see_whole_catalogs_while_it_changes() {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let reg = Arc::new(builtin::registry());
        let stop = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicU64::new(0));
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (reg, stop, reads) = (reg.clone(), stop.clone(), reads.clone());
                std::thread::spawn(move || {
                    let mut last = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let cat = reg.snapshot();
                        assert!(cat.generation >= last, "generation went back");
                        last = cat.generation;
                        for r in cat.all() {
                            let same = cat.get(&r.group, &r.version, &r.resource).unwrap();
                            assert!(Arc::ptr_eq(same, r), "index and list disagree");
                        }
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for i in 0..200 {
            let plural = format!("widgets{}", i % 7);
            if reg.get("example.com", "v1", &plural).is_some() {
                reg.remove("example.com", "v1", &plural).unwrap();
            } else {
                reg.add(custom("example.com", &plural)).unwrap();
            }
        }
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
        assert!(reads.load(Ordering::Relaxed) > 0);
        assert_eq!(reg.generation(), 201);
    }
}
