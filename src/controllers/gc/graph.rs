//! The garbage collector's dependency graph (kube's `GraphBuilder.uidToNode`), pure: one node
//! per observed object (identity, owner references, deletion state), the reverse index from
//! an owner's uid to its dependents (an owner that was never observed, or is gone, is a
//! "virtual" owner: its uid has dependents but no node), the uids of each followed resource
//! (so a re-list or a resource that goes away removes exactly its nodes), and the dirty set:
//! the uids whose situation changed and must be looked at again. Each uid is queued at most
//! once, so the queue is bounded by the graph's size.
//!
//! Which changes make which uids dirty follows kube's graph builder: a node itself on every
//! change; its dependents when it is first observed, when it starts deleting its dependents
//! (foreground), and when it goes; its owners when it goes or when a reference that blocked an
//! owner is removed or stops blocking.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use serde_json::Value;

/// A followed resource: one key space (group and plural).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResKey {
    pub group: String,
    pub resource: String,
}

/// One entry of `metadata.ownerReferences`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub block: bool,
}

impl OwnerRef {
    /// The group of `apiVersion` (`schema.ParseGroupVersion`; empty for the core group).
    pub fn group(&self) -> &str {
        group_of(&self.api_version)
    }
}

/// The group of an `apiVersion` string.
pub fn group_of(api_version: &str) -> &str {
    match api_version.split_once('/') {
        Some((g, _)) => g,
        None => "",
    }
}

/// An observed object, as far as garbage collection cares.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub res: ResKey,
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub owners: Vec<OwnerRef>,
    /// Has a deletionTimestamp.
    pub being_deleted: bool,
    /// Carries the `orphan` finalizer.
    pub orphan: bool,
    /// Carries the `foregroundDeletion` finalizer.
    pub foreground: bool,
}

impl Node {
    /// Reads a node from an object of `res` (`None` without a uid).
    pub fn from_object(res: &ResKey, api_version: &str, kind: &str, obj: &Value) -> Option<Node> {
        let m = obj.get("metadata")?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let uid = s(m, "uid");
        if uid.is_empty() {
            return None;
        }
        let owners = m
            .get("ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|r| OwnerRef {
                api_version: s(r, "apiVersion"),
                kind: s(r, "kind"),
                name: s(r, "name"),
                uid: s(r, "uid"),
                block: r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true),
            })
            .collect();
        let fins: Vec<&str> = m
            .get("finalizers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        Some(Node {
            res: res.clone(),
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: s(m, "namespace"),
            name: s(m, "name"),
            uid,
            owners,
            being_deleted: m
                .get("deletionTimestamp")
                .and_then(Value::as_str)
                .is_some_and(|t| !t.is_empty()),
            orphan: fins.contains(&crate::registry::deletion::ORPHAN),
            foreground: fins.contains(&crate::registry::deletion::FOREGROUND),
        })
    }

    /// Waiting for its dependents to be deleted (kube's `isDeletingDependents`).
    pub fn deleting_dependents(&self) -> bool {
        self.being_deleted && self.foreground
    }

    /// Whether `r` names this object by its coordinates (group, kind, name; the version may
    /// differ, as every version of a resource names the same object).
    pub fn matches(&self, r: &OwnerRef) -> bool {
        r.uid == self.uid
            && r.kind == self.kind
            && r.name == self.name
            && r.group() == group_of(&self.api_version)
    }
}

/// The graph and its dirty queue.
#[derive(Default)]
pub struct Graph {
    nodes: HashMap<String, Node>,
    dependents: HashMap<String, BTreeSet<String>>,
    by_res: HashMap<ResKey, HashSet<String>>,
    dirty: VecDeque<String>,
    queued: HashSet<String>,
}

impl Graph {
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    /// The observed dependents of `uid` (whose references name it by uid).
    pub fn dependents(&self, uid: &str) -> Vec<&Node> {
        self.dependents
            .get(uid)
            .into_iter()
            .flatten()
            .filter_map(|d| self.nodes.get(d))
            .collect()
    }

    /// Whether anything observed names `uid` as an owner.
    pub fn has_dependents(&self, uid: &str) -> bool {
        !self.dependents(uid).is_empty()
    }

    /// Dependents whose reference to `uid` blocks its deletion (kube's `blockingDependents`).
    pub fn blocking_dependents(&self, uid: &str) -> Vec<&Node> {
        self.dependents(uid)
            .into_iter()
            .filter(|d| d.owners.iter().any(|r| r.uid == uid && r.block))
            .collect()
    }

    /// Queues `uid` to be looked at (once).
    pub fn mark(&mut self, uid: &str) {
        if self.queued.insert(uid.to_string()) {
            self.dirty.push_back(uid.to_string());
        }
    }

    fn mark_dependents(&mut self, uid: &str) {
        let deps: Vec<String> = self
            .dependents
            .get(uid)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        for d in deps {
            self.mark(&d);
        }
    }

    /// Up to `max` queued uids, oldest first.
    pub fn take_dirty(&mut self, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        while out.len() < max {
            let Some(u) = self.dirty.pop_front() else {
                break;
            };
            self.queued.remove(&u);
            out.push(u);
        }
        out
    }

    pub fn dirty_len(&self) -> usize {
        self.dirty.len()
    }

    /// An object was observed (created or changed).
    pub fn upsert(&mut self, n: Node) {
        let uid = n.uid.clone();
        self.by_res
            .entry(n.res.clone())
            .or_default()
            .insert(uid.clone());
        let old = self.nodes.insert(uid.clone(), n.clone());
        let old_owners = old.as_ref().map(|o| o.owners.clone()).unwrap_or_default();
        for r in &old_owners {
            if !n.owners.iter().any(|x| x.uid == r.uid) {
                self.unlink(&r.uid, &uid);
                self.mark(&r.uid);
            } else if r.block && !n.owners.iter().any(|x| x.uid == r.uid && x.block) {
                // No longer blocks: an owner waiting for it may go now.
                self.mark(&r.uid);
            }
        }
        for r in &n.owners {
            self.dependents
                .entry(r.uid.clone())
                .or_default()
                .insert(uid.clone());
        }
        self.mark(&uid);
        let starts_deleting_dependents =
            n.deleting_dependents() && !old.as_ref().is_some_and(Node::deleting_dependents);
        if old.is_none() || starts_deleting_dependents {
            self.mark_dependents(&uid);
        }
    }

    fn unlink(&mut self, owner: &str, dependent: &str) {
        if let Some(set) = self.dependents.get_mut(owner) {
            set.remove(dependent);
            if set.is_empty() {
                self.dependents.remove(owner);
            }
        }
    }

    /// An object went away.
    pub fn remove(&mut self, uid: &str) {
        let Some(n) = self.nodes.remove(uid) else {
            return;
        };
        if let Some(set) = self.by_res.get_mut(&n.res) {
            set.remove(uid);
        }
        for r in &n.owners {
            self.unlink(&r.uid, uid);
            self.mark(&r.uid);
        }
        self.mark_dependents(uid);
    }

    /// The complete current state of one resource: nodes of it not in `nodes` went away.
    pub fn replace(&mut self, res: &ResKey, nodes: Vec<Node>) {
        let keep: HashSet<&str> = nodes.iter().map(|n| n.uid.as_str()).collect();
        let gone: Vec<String> = self
            .by_res
            .get(res)
            .into_iter()
            .flatten()
            .filter(|u| !keep.contains(u.as_str()))
            .cloned()
            .collect();
        for u in gone {
            self.remove(&u);
        }
        for n in nodes {
            self.upsert(n);
        }
    }

    /// A resource is no longer followed (its definition went away): its nodes are removed.
    pub fn drop_resource(&mut self, res: &ResKey) {
        let uids: Vec<String> = self.by_res.remove(res).into_iter().flatten().collect();
        for u in uids {
            self.remove(&u);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(r: &str) -> ResKey {
        ResKey {
            group: "apps".into(),
            resource: r.into(),
        }
    }

    fn node(r: &str, uid: &str, owners: &[(&str, bool)]) -> Node {
        Node {
            res: res(r),
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            namespace: "ns".into(),
            name: uid.into(),
            uid: uid.into(),
            owners: owners
                .iter()
                .map(|(u, b)| OwnerRef {
                    api_version: "apps/v1".into(),
                    kind: "Deployment".into(),
                    name: u.to_string(),
                    uid: u.to_string(),
                    block: *b,
                })
                .collect(),
            being_deleted: false,
            orphan: false,
            foreground: false,
        }
    }

    fn drain(g: &mut Graph) -> Vec<String> {
        let mut v = g.take_dirty(usize::MAX);
        v.sort();
        v
    }

    #[test]
    fn reads_objects() {
        let obj = json!({"metadata": {"name": "p", "namespace": "n", "uid": "u1",
            "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["foregroundDeletion"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r",
                "uid": "u0", "blockOwnerDeletion": true, "controller": true}]}});
        let n = Node::from_object(&res("pods"), "v1", "Pod", &obj).unwrap();
        assert!(n.deleting_dependents() && !n.orphan);
        assert_eq!(n.owners[0].group(), "apps");
        assert!(n.owners[0].block);
        assert!(Node::from_object(&res("pods"), "v1", "Pod", &json!({"metadata": {}})).is_none());
    }

    #[test]
    fn dependents_and_virtual_owners() {
        let mut g = Graph::default();
        g.upsert(node("replicasets", "rs", &[("d", true)]));
        // The owner was never observed: a virtual owner with one dependent.
        assert!(g.node("d").is_none());
        assert_eq!(g.blocking_dependents("d").len(), 1);
        assert_eq!(drain(&mut g), vec!["rs"]);
        // Observing the owner marks its dependents.
        let mut d = node("deployments", "d", &[]);
        d.kind = "Deployment".into();
        g.upsert(d.clone());
        assert_eq!(drain(&mut g), vec!["d", "rs"]);
        // A plain update marks the node only.
        g.upsert(d.clone());
        assert_eq!(drain(&mut g), vec!["d"]);
        // Foreground deletion starts: its dependents are marked.
        d.being_deleted = true;
        d.foreground = true;
        g.upsert(d.clone());
        assert_eq!(drain(&mut g), vec!["d", "rs"]);
        // The dependent stops blocking: the owner is marked.
        g.upsert(node("replicasets", "rs", &[("d", false)]));
        assert_eq!(drain(&mut g), vec!["d", "rs"]);
        assert!(g.blocking_dependents("d").is_empty());
        // The dependent goes: the owner is marked, the dependent index empties.
        g.remove("rs");
        assert_eq!(drain(&mut g), vec!["d"]);
        assert!(!g.has_dependents("d"));
    }

    #[test]
    fn replace_and_drop_resource() {
        let mut g = Graph::default();
        g.upsert(node("deployments", "d", &[]));
        g.upsert(node("replicasets", "a", &[("d", true)]));
        g.upsert(node("replicasets", "b", &[("d", true)]));
        drain(&mut g);
        g.replace(
            &res("replicasets"),
            vec![node("replicasets", "b", &[("d", true)])],
        );
        assert!(g.node("a").is_none());
        assert_eq!(drain(&mut g), vec!["b", "d"]);
        g.drop_resource(&res("deployments"));
        assert!(g.node("d").is_none());
        assert_eq!(drain(&mut g), vec!["b"]);
        assert_eq!(g.len(), 1);
        // Each uid is queued once.
        g.mark("b");
        g.mark("b");
        assert_eq!(g.dirty_len(), 1);
    }
}
