//! The garbage collector (kube-controller-manager's `garbage-collector`), leader only.
//!
//! While this replica leads it follows every resource that serves list, watch and delete and
//! takes part in garbage collection (built-ins and custom resources alike; the set follows the
//! registry as definitions come and go) from the watch cache into a dependency graph
//! ([`graph`]), and works off the graph's dirty queue:
//!
//! - an object with owners, none of which still exists (owner absent, or an object of that
//!   name with another uid), is deleted (`propagationPolicy` Background, or the object's own
//!   `orphan` / `foregroundDeletion` finalizer); references to absent owners or to owners
//!   waiting for their dependents are removed while a live owner remains; when its only owners
//!   wait for their dependents and it has dependents itself, it is deleted in the foreground
//!   (first unblocking its own references when one of its dependents waits too: a cycle);
//! - an owner being deleted with `foregroundDeletion` waits until no dependent whose reference
//!   sets `blockOwnerDeletion` remains (those are deleted first), then loses the finalizer and
//!   the store removes it;
//! - an owner being deleted with `orphan` has its references removed from every dependent,
//!   then loses the finalizer.
//!
//! Decisions that destroy something are re-checked against storage first (linearizable GETs
//! of the object and of each owner by its reference's coordinates, as kube's collector does),
//! and every write names the object's uid (a `preconditions.uid` on deletes, a uid check in
//! read-modify-writes), so a graph that lags never deletes the wrong object, and a write
//! repeated by a new leader is a no-op (404 and 409 count as done). A new leader rebuilds the
//! graph from its own watch cache and looks at every node once; nothing is acted on until
//! every followed resource has been listed, so orphaning and foreground deletion never miss a
//! dependent the cache holds.
//!
//! References that cross namespaces (a namespaced owner in another namespace than its
//! dependent, or a namespaced owner of a cluster-scoped object) are reported with a Warning
//! Event `OwnerRefInvalidNamespace` on the dependent; the first kind is looked up in the
//! dependent's namespace (so it counts as absent), the second cannot be resolved and leaves
//! the dependent alone, both as in kube.
//!
//! Failures back off per object (100 ms doubling to 5 min); the queue holds each uid once.

pub mod graph;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};

use self::graph::{Graph, Node, OwnerRef, ResKey};
use crate::meta::status::Status;
use crate::registry::deletion::{FOREGROUND, ORPHAN};
use crate::registry::object::{finalizers, meta_str};
use crate::registry::store::{DeleteOptions, Part, ReadAt, Scope, Store, WriteOptions};
use crate::registry::strategy::GcPolicy;
use crate::registry::Resource;
use crate::watch::follow::{self, Change};

/// How many objects are worked on at once.
const WORKERS: usize = 8;
/// The first retry delay of an object whose processing failed; doubled per failure.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(300);
/// The field manager (and event source) of the collector's writes.
const MANAGER: &str = "kube-controller-manager";
const COMPONENT: &str = "garbage-collector-controller";

/// Runs until the task is dropped: collects garbage whenever this replica leads.
pub async fn run(store: Store, cache: crate::watch::Cache) {
    loop {
        if store.kv().is_leader() {
            Term::new(store.clone(), cache.clone()).lead().await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A followed resource.
struct Monitor {
    info: Arc<Resource>,
    _follower: super::AbortOnDrop,
}

/// The collector during one term of leadership (dropped, with its followers and graph, when
/// leadership is lost).
struct Term {
    store: Store,
    cache: crate::watch::Cache,
    graph: Arc<Mutex<Graph>>,
    changed: Arc<tokio::sync::Notify>,
    synced: Arc<Mutex<HashSet<ResKey>>>,
    monitors: HashMap<ResKey, Monitor>,
    /// (dependent uid, owner uid) pairs already reported as OwnerRefInvalidNamespace.
    reported: Mutex<HashSet<(String, String)>>,
}

/// What became of one queued object.
#[derive(Debug, PartialEq)]
enum Outcome {
    Done,
    /// Look again later (an owner that exists but was not observed, an unknown owner kind).
    Later,
}

/// An owner reference checked against storage.
enum Verified {
    Solid,
    Dangling,
    /// The owner waits for its dependents (`foregroundDeletion`).
    Waiting,
    /// A cluster-scoped dependent names a namespaced owner: never resolvable.
    Unresolvable,
    /// No served resource has the reference's apiVersion and kind.
    UnknownKind,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Gone or changed meanwhile: nothing left to do.
fn settled(e: &Status) -> bool {
    e.code == 404 || e.code == 409
}

fn write_options() -> WriteOptions {
    WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        field_manager: Some(MANAGER.into()),
        ..Default::default()
    }
}

/// The resources the collector follows: one entry per key space (the storage version's when
/// it is served), each serving list, watch and delete and taking part in garbage collection.
fn wanted(store: &Store) -> BTreeMap<ResKey, Arc<Resource>> {
    let mut out: BTreeMap<ResKey, Arc<Resource>> = BTreeMap::new();
    for r in store.registry().snapshot().all() {
        if !["list", "watch", "delete"].iter().all(|v| r.has_verb(v))
            || r.strategy.gc_policy() == GcPolicy::Unsupported
        {
            continue;
        }
        let key = ResKey {
            group: r.group.clone(),
            resource: r.resource.clone(),
        };
        let better = |cur: &Arc<Resource>| cur.converts() && !r.converts();
        match out.get(&key) {
            Some(cur) if !better(cur) => {}
            _ => {
                out.insert(key, r.clone());
            }
        }
    }
    out
}

/// Two entries that read the same objects the same way.
fn same_view(a: &Resource, b: &Resource) -> bool {
    a.api_version() == b.api_version() && a.kind == b.kind && a.namespaced == b.namespaced
}

impl Term {
    fn new(store: Store, cache: crate::watch::Cache) -> Term {
        Term {
            store,
            cache,
            graph: Default::default(),
            changed: Arc::new(tokio::sync::Notify::new()),
            synced: Default::default(),
            monitors: HashMap::new(),
            reported: Default::default(),
        }
    }

    /// Starts and stops followers so they match the registry.
    fn sync_monitors(&mut self) {
        let wanted = wanted(&self.store);
        let stale: Vec<ResKey> = self
            .monitors
            .iter()
            .filter(|(k, m)| !wanted.get(*k).is_some_and(|w| same_view(w, &m.info)))
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            self.monitors.remove(&k);
            lock(&self.synced).remove(&k);
            lock(&self.graph).drop_resource(&k);
        }
        for (k, info) in wanted {
            if self.monitors.contains_key(&k) {
                continue;
            }
            let follower = self.follow(k.clone(), info.clone());
            self.monitors.insert(
                k,
                Monitor {
                    info,
                    _follower: follower,
                },
            );
        }
    }

    fn follow(&self, key: ResKey, info: Arc<Resource>) -> super::AbortOnDrop {
        let (graph, synced, changed) = (
            self.graph.clone(),
            self.synced.clone(),
            self.changed.clone(),
        );
        let (api_version, kind) = (info.api_version(), info.kind.clone());
        super::AbortOnDrop(follow::spawn(self.cache.clone(), info, move |c| {
            let node = |o: &Value| Node::from_object(&key, &api_version, &kind, o);
            {
                let mut g = lock(&graph);
                match c {
                    Change::Replace(all) => {
                        g.replace(&key, all.iter().filter_map(|o| node(&o.value())).collect());
                        lock(&synced).insert(key.clone());
                    }
                    Change::Upsert { cur, .. } => {
                        if let Some(n) = node(cur) {
                            g.upsert(n);
                        }
                    }
                    Change::Delete { prev } => g.remove(meta_str(prev, "uid")),
                }
            }
            changed.notify_one();
        }))
    }

    fn all_synced(&self) -> bool {
        let synced = lock(&self.synced);
        self.monitors.keys().all(|k| synced.contains(k))
    }

    /// Works while this replica leads.
    async fn lead(mut self) {
        let mut generation = None;
        let mut retries: HashMap<String, (u32, Instant)> = HashMap::new();
        loop {
            if !self.store.kv().is_leader() {
                return;
            }
            let g = self.store.registry().generation();
            if generation != Some(g) {
                self.sync_monitors();
                generation = Some(g);
            }
            if !self.all_synced() {
                let _ =
                    tokio::time::timeout(Duration::from_millis(100), self.changed.notified()).await;
                continue;
            }
            let now = Instant::now();
            let due: Vec<String> = retries
                .iter()
                .filter(|(_, (_, at))| *at <= now)
                .map(|(u, _)| u.clone())
                .collect();
            let batch = {
                let mut g = lock(&self.graph);
                for u in &due {
                    g.mark(u);
                }
                g.take_dirty(4 * WORKERS)
            };
            if batch.is_empty() {
                let _ =
                    tokio::time::timeout(Duration::from_millis(250), self.changed.notified()).await;
                continue;
            }
            let this = &self;
            let results: Vec<(String, Result<Outcome, Status>)> = futures::stream::iter(batch)
                .map(|uid| async move {
                    let r = this.process(&uid).await;
                    (uid, r)
                })
                .buffer_unordered(WORKERS)
                .collect()
                .await;
            for (uid, r) in results {
                let failed = match r {
                    Ok(Outcome::Done) => false,
                    Ok(Outcome::Later) => true,
                    Err(e) => {
                        tracing::debug!(uid, "garbage collector: {}", e.message);
                        true
                    }
                };
                if failed {
                    let e = retries.entry(uid).or_insert((0, now));
                    let delay = BACKOFF_MIN
                        .saturating_mul(1u32 << e.0.min(16))
                        .min(BACKOFF_MAX);
                    e.0 += 1;
                    e.1 = Instant::now() + delay;
                } else {
                    retries.remove(&uid);
                }
            }
        }
    }

    fn info(&self, res: &ResKey) -> Option<Arc<Resource>> {
        self.monitors.get(res).map(|m| m.info.clone())
    }

    /// One queued object (kube's `attemptToDeleteItem` and `attemptToOrphanWorker`).
    async fn process(&self, uid: &str) -> Result<Outcome, Status> {
        let Some(node) = lock(&self.graph).node(uid).cloned() else {
            // A virtual owner: its dependents look their owners up themselves.
            return Ok(Outcome::Done);
        };
        let Some(info) = self.info(&node.res) else {
            return Ok(Outcome::Done);
        };
        if node.being_deleted {
            if node.orphan {
                return self.orphan_dependents(&info, &node).await;
            }
            if node.foreground {
                return self.delete_dependents(&info, &node).await;
            }
            // On its way out: its dependents are looked at once it is gone.
            return Ok(Outcome::Done);
        }
        if node.owners.is_empty() {
            return Ok(Outcome::Done);
        }
        self.collect(&info, &node).await
    }

    fn scope<'a>(info: &'a Resource, node: &'a Node) -> Scope<'a> {
        Scope {
            info,
            namespace: info.namespaced.then_some(node.namespace.as_str()),
        }
    }

    /// Orphaning: the owner's references go from every dependent, then its `orphan` finalizer.
    async fn orphan_dependents(&self, info: &Resource, owner: &Node) -> Result<Outcome, Status> {
        let deps: Vec<Node> = lock(&self.graph)
            .dependents(&owner.uid)
            .into_iter()
            .cloned()
            .collect();
        for d in deps {
            let Some(dinfo) = self.info(&d.res) else {
                continue;
            };
            match self
                .remove_references(&dinfo, &d, &[owner.uid.clone()])
                .await
            {
                Ok(()) => {}
                Err(e) if settled(&e) => {}
                Err(e) => return Err(e),
            }
        }
        self.remove_finalizer(info, owner, ORPHAN).await
    }

    /// Foreground deletion of an owner: its blocking dependents go first, then its finalizer.
    async fn delete_dependents(&self, info: &Resource, owner: &Node) -> Result<Outcome, Status> {
        {
            let mut g = lock(&self.graph);
            let blocking: Vec<String> = g
                .blocking_dependents(&owner.uid)
                .into_iter()
                .filter(|d| !d.deleting_dependents())
                .map(|d| d.uid.clone())
                .collect();
            let waiting = !g.blocking_dependents(&owner.uid).is_empty();
            if waiting {
                for d in blocking {
                    g.mark(&d);
                }
                drop(g);
                self.changed.notify_one();
                // The owner is looked at again when a dependent goes or stops blocking.
                return Ok(Outcome::Done);
            }
        }
        self.remove_finalizer(info, owner, FOREGROUND).await
    }

    /// A dependent that is not being deleted: is any owner still there?
    async fn collect(&self, info: &Resource, node: &Node) -> Result<Outcome, Status> {
        // Every owner observed and live: nothing to do, and nothing to ask storage.
        let all_solid = {
            let g = lock(&self.graph);
            node.owners.iter().all(|r| {
                g.node(&r.uid).is_some_and(|o| {
                    o.matches(r)
                        && (o.namespace.is_empty() || o.namespace == node.namespace)
                        && !o.deleting_dependents()
                })
            })
        };
        if all_solid {
            return Ok(Outcome::Done);
        }
        // The latest state decides (the graph may lag).
        let latest = match self
            .store
            .get(Self::scope(info, node), &node.name, ReadAt::Latest)
            .await
        {
            Ok(o) => o,
            Err(e) if e.code == 404 => return Ok(Outcome::Done),
            Err(e) => return Err(e),
        };
        let Some(latest) = Node::from_object(&node.res, &node.api_version, &node.kind, &latest)
        else {
            return Ok(Outcome::Done);
        };
        if latest.uid != node.uid || latest.being_deleted || latest.owners.is_empty() {
            return Ok(Outcome::Done);
        }
        let (mut solid, mut dangling, mut waiting) = (0usize, Vec::new(), Vec::new());
        let mut unobserved = false;
        for r in &latest.owners {
            let observed = lock(&self.graph).node(&r.uid).cloned();
            if let Some(o) = &observed {
                if !o.namespace.is_empty() && o.namespace != latest.namespace {
                    self.report_invalid_namespace(&latest, r).await;
                } else if o.matches(r) && !o.deleting_dependents() {
                    solid += 1;
                    continue;
                }
            }
            match self.verify(&latest, r).await? {
                Verified::Solid => {
                    solid += 1;
                    unobserved |= observed.is_none();
                }
                Verified::Dangling => dangling.push(r.uid.clone()),
                Verified::Waiting => waiting.push(r.uid.clone()),
                Verified::Unresolvable => return Ok(Outcome::Done),
                Verified::UnknownKind => return Ok(Outcome::Later),
            }
        }
        if solid > 0 {
            if dangling.is_empty() && waiting.is_empty() {
                return Ok(if unobserved {
                    Outcome::Later
                } else {
                    Outcome::Done
                });
            }
            // References to absent owners, and to owners waiting for their dependents (which
            // would wait for this one forever), go.
            dangling.extend(waiting);
            return match self.remove_references(info, &latest, &dangling).await {
                Err(e) if !settled(&e) => Err(e),
                _ => Ok(Outcome::Done),
            };
        }
        let (has_dependents, cycle) = {
            let g = lock(&self.graph);
            let deps = g.dependents(&latest.uid);
            (
                !deps.is_empty(),
                deps.iter().any(|d| d.deleting_dependents()),
            )
        };
        if !waiting.is_empty() && has_dependents && cycle {
            // An owner and a dependent both wait for their dependents: this object stops
            // blocking its owners before it is deleted in the foreground, so a cycle cannot
            // wait forever (kube's unblockOwnerReferences).
            match self.unblock_references(info, &latest).await {
                Err(e) if !settled(&e) => return Err(e),
                Err(_) => return Ok(Outcome::Done),
                Ok(()) => {}
            }
        }
        let policy = if !waiting.is_empty() && has_dependents {
            "Foreground"
        } else if latest.orphan {
            "Orphan"
        } else if latest.foreground {
            "Foreground"
        } else {
            "Background"
        };
        let opts = DeleteOptions {
            write: write_options(),
            precondition_uid: Some(latest.uid.clone()),
            propagation_policy: Some(policy.into()),
            ..Default::default()
        };
        match self
            .store
            .delete(Self::scope(info, &latest), &latest.name, &opts)
            .await
        {
            Err(e) if !settled(&e) => Err(e),
            _ => Ok(Outcome::Done),
        }
    }

    /// Looks the owner up by its reference's coordinates (kube's `isDangling`).
    async fn verify(&self, dependent: &Node, r: &OwnerRef) -> Result<Verified, Status> {
        let (group, version) = match r.api_version.split('/').collect::<Vec<_>>()[..] {
            [v] => ("", v),
            [g, v] => (g, v),
            _ => return Ok(Verified::UnknownKind),
        };
        let catalog = self.store.registry().snapshot();
        let Some(info) = catalog.by_kind(group, version, &r.kind) else {
            return Ok(Verified::UnknownKind);
        };
        if dependent.namespace.is_empty() && info.namespaced {
            return Ok(Verified::Unresolvable);
        }
        let scope = Scope {
            info,
            namespace: info.namespaced.then_some(dependent.namespace.as_str()),
        };
        match self.store.get(scope, &r.name, ReadAt::Latest).await {
            Err(e) if e.code == 404 => Ok(Verified::Dangling),
            Err(e) => Err(e),
            Ok(o) if meta_str(&o, "uid") != r.uid => Ok(Verified::Dangling),
            Ok(o) => {
                let deleting = !meta_str(&o, "deletionTimestamp").is_empty();
                Ok(
                    if deleting && finalizers(&o).iter().any(|f| f == FOREGROUND) {
                        Verified::Waiting
                    } else {
                        Verified::Solid
                    },
                )
            }
        }
    }

    /// Removes the references to `owners` (by uid) from the stored object `node` names.
    async fn remove_references(
        &self,
        info: &Resource,
        node: &Node,
        owners: &[String],
    ) -> Result<(), Status> {
        self.rewrite(info, node, |next| {
            let m = &mut next["metadata"];
            if let Some(refs) = m.get_mut("ownerReferences").and_then(Value::as_array_mut) {
                refs.retain(|r| {
                    !owners
                        .iter()
                        .any(|u| r.get("uid").and_then(Value::as_str) == Some(u))
                });
                if refs.is_empty() {
                    m.as_object_mut().map(|m| m.remove("ownerReferences"));
                }
            }
        })
        .await
    }

    /// Sets `blockOwnerDeletion: false` on every reference of the object that blocks.
    async fn unblock_references(&self, info: &Resource, node: &Node) -> Result<(), Status> {
        self.rewrite(info, node, |next| {
            if let Some(refs) = next["metadata"]
                .get_mut("ownerReferences")
                .and_then(Value::as_array_mut)
            {
                for r in refs {
                    if r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true) {
                        r["blockOwnerDeletion"] = json!(false);
                    }
                }
            }
        })
        .await
    }

    /// Removes one GC finalizer from the owner (the store removes an owner being deleted
    /// whose last finalizer goes).
    async fn remove_finalizer(
        &self,
        info: &Resource,
        owner: &Node,
        finalizer: &str,
    ) -> Result<Outcome, Status> {
        let res = self
            .rewrite(info, owner, |next| {
                let kept: Vec<String> = finalizers(next)
                    .into_iter()
                    .filter(|f| f != finalizer)
                    .collect();
                next["metadata"]["finalizers"] = json!(kept);
            })
            .await;
        match res {
            Err(e) if !settled(&e) => Err(e),
            _ => Ok(Outcome::Done),
        }
    }

    /// A read-modify-write of the object `node` names, refused (409) when the stored object
    /// has another uid.
    async fn rewrite(
        &self,
        info: &Resource,
        node: &Node,
        change: impl Fn(&mut Value),
    ) -> Result<(), Status> {
        let gr = info.gr();
        self.store
            .update_with(
                Self::scope(info, node),
                &node.name,
                Part::Main,
                &write_options(),
                |cur| {
                    let have = meta_str(cur, "uid");
                    if have != node.uid {
                        return Err(Status::conflict(
                            gr,
                            &node.name,
                            &format!(
                                "Precondition failed: UID in precondition: {}, UID in object meta: {have}",
                                node.uid
                            ),
                        ));
                    }
                    let mut next = cur.clone();
                    change(&mut next);
                    Ok(next)
                },
            )
            .await
            .map(|_| ())
    }

    /// Records the Warning Event kube's graph builder records for a reference to a namespaced
    /// owner in another namespace (once per dependent and owner while this replica leads).
    async fn report_invalid_namespace(&self, dependent: &Node, r: &OwnerRef) {
        if !lock(&self.reported).insert((dependent.uid.clone(), r.uid.clone())) {
            return;
        }
        let event = invalid_namespace_event(dependent, r, &crate::server::handlers::now_rfc3339());
        let info = self.store.registry().builtin("", "v1", "events");
        let ns = meta_str(&event, "namespace").to_string();
        let scope = Scope {
            info: &info,
            namespace: Some(&ns),
        };
        if let Err(e) = self.store.create(scope, event, &write_options()).await {
            tracing::debug!("garbage collector: recording an event: {}", e.message);
        }
    }
}

/// The `OwnerRefInvalidNamespace` Event on `dependent` (core/v1, as kube's event recorder
/// writes it: in the object's namespace, `default` for cluster-scoped ones).
fn invalid_namespace_event(dependent: &Node, r: &OwnerRef, now: &str) -> Value {
    let ns = if dependent.namespace.is_empty() {
        "default"
    } else {
        dependent.namespace.as_str()
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut involved = json!({
        "kind": dependent.kind,
        "name": dependent.name,
        "uid": dependent.uid,
        "apiVersion": dependent.api_version,
    });
    if !dependent.namespace.is_empty() {
        involved["namespace"] = json!(dependent.namespace);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": format!("{}.{:x}", dependent.name, nanos), "namespace": ns},
        "involvedObject": involved,
        "reason": "OwnerRefInvalidNamespace",
        "message": invalid_namespace_message(dependent, r),
        "source": {"component": COMPONENT},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": "Warning",
        "reportingComponent": COMPONENT,
        "reportingInstance": "",
    })
}

/// kube's text: the reference's coordinates, in the dependent's namespace.
fn invalid_namespace_message(dependent: &Node, r: &OwnerRef) -> String {
    format!(
        "ownerRef [{}/{}, namespace: {}, name: {}, uid: {}] does not exist in namespace {:?}",
        r.api_version, r.kind, dependent.namespace, r.name, r.uid, dependent.namespace
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_namespace_events() {
        let dep = Node {
            res: ResKey {
                group: String::new(),
                resource: "configmaps".into(),
            },
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: "b".into(),
            name: "child".into(),
            uid: "u2".into(),
            owners: vec![],
            being_deleted: false,
            orphan: false,
            foreground: false,
        };
        let r = OwnerRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            name: "parent".into(),
            uid: "u1".into(),
            block: false,
        };
        let e = invalid_namespace_event(&dep, &r, "2026-01-01T00:00:00Z");
        assert_eq!(
            e["message"],
            json!("ownerRef [v1/ConfigMap, namespace: b, name: parent, uid: u1] does not exist in namespace \"b\"")
        );
        assert_eq!(e["metadata"]["namespace"], json!("b"));
        assert_eq!(e["involvedObject"]["uid"], json!("u2"));
        let mut cluster = dep.clone();
        cluster.namespace.clear();
        let e = invalid_namespace_event(&cluster, &r, "2026-01-01T00:00:00Z");
        assert_eq!(e["metadata"]["namespace"], json!("default"));
        assert!(e["involvedObject"].get("namespace").is_none());
        assert!(e["message"]
            .as_str()
            .unwrap()
            .ends_with("does not exist in namespace \"\""));
    }
}
