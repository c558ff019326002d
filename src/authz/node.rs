//! The Node authorizer: what a kubelet (`system:node:<name>` in `system:nodes`) may do,
//! as kube-apiserver v1.33's `Node` authorization mode decides it with default feature
//! gates (`AuthorizeNodeWithSelectors` on, `DynamicResourceAllocation` off).
//!
//! Owns: the relationship graph (node ← pod ← secret / configmap / service account / pvc /
//! resource claim, pvc ← pv ← secret, node ← volume attachment, node ← resource slice) kept
//! up to date from watch events of the [`WATCHED`] resources, and the decision for one
//! request of a node user ([`authorize`]): reads of secrets, configmaps, pvcs, pvs,
//! resource claims and volume attachments only when the graph relates them to the node;
//! service account tokens only for the service accounts of its pods; its own lease,
//! CSINode and Node object; pods and pod status/eviction; everything else through the
//! static node rules it is given (kube's `system:node` bootstrap rules).
//!
//! Does not own: feeding the graph (the caller watches [`WATCHED`] and calls
//! [`Graph::apply`], [`Graph::reset`] before a re-list), locking (wrap the graph in a
//! lock), the static node rules themselves, RBAC matching (`rules_allow`), the
//! NodeRestriction admission plugin (which limits what a node may create or update), and
//! the union of authorizers (a `NoOpinion` here lets the next authorizer decide).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::authn::UserInfo;
use crate::authz::rbac::{rules_allow, PolicyRule};
use crate::authz::{Attributes, Decision, ResourceAttributes};

/// The (group, resource) pairs whose objects feed the graph: what kube-apiserver v1.33's
/// graph populator watches with default feature gates. ResourceSlices
/// (`resource.k8s.io`/`resourceslices`) are watched only with `DynamicResourceAllocation`
/// on; [`Graph::apply`] accepts them too, for when that gate is turned on.
pub const WATCHED: &[(&str, &str)] = &[
    ("", "pods"),
    ("", "persistentvolumes"),
    ("storage.k8s.io", "volumeattachments"),
];

/// The namespace of node leases (kube's `NamespaceNodeLease`).
const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
/// The annotation marking a mirror (static) pod.
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// The field selector field for a resource slice's node (`ResourceSliceSelectorNodeName`).
const SLICE_NODE_FIELD: &str = "spec.nodeName";

/// The kind of API object a vertex stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    ConfigMap,
    ResourceSlice,
    Node,
    Pod,
    Pvc,
    Pv,
    ResourceClaim,
    Secret,
    VolumeAttachment,
    ServiceAccount,
}

type Id = u64;

/// One object in the graph with its edges. An out-edge whose value is `Some(node)` leads
/// (through its target) to exactly that node vertex; `None` marks the few edges whose far
/// end is not known when they are made (pv → pvc, secret → pv).
#[derive(Debug)]
struct Vertex {
    kind: Kind,
    namespace: String,
    name: String,
    out: HashMap<Id, Option<Id>>,
    inc: HashSet<Id>,
    /// For each node vertex: how many out-edges lead to it.
    dests: HashMap<Id, u32>,
}

impl Vertex {
    fn degree(&self) -> usize {
        self.out.len() + self.inc.len()
    }
}

/// The objects related to nodes, and how. `Default` is empty; keep it behind a lock
/// shared by the watch feeder and the authorizer.
#[derive(Debug, Default)]
pub struct Graph {
    next_id: Id,
    /// kind → namespace → name → vertex.
    index: HashMap<Kind, HashMap<String, HashMap<String, Id>>>,
    vertices: HashMap<Id, Vertex>,
}

impl Graph {
    /// One object of a watched resource changed. `prev` is the previous object (None on
    /// create), `cur` the new one (None on delete). Objects are Kubernetes JSON as served
    /// by the API. Resources other than the watched ones (and resource slices) are ignored.
    pub fn apply(
        &mut self,
        group: &str,
        resource: &str,
        prev: Option<&Value>,
        cur: Option<&Value>,
    ) {
        match (group, resource) {
            ("", "pods") => self.apply_pod(prev, cur),
            ("", "persistentvolumes") => match cur {
                Some(pv) => self.add_pv(pv),
                None => {
                    if let Some(pv) = prev {
                        self.delete(Kind::Pv, "", name_of(pv));
                    }
                }
            },
            ("storage.k8s.io", "volumeattachments") => match (prev, cur) {
                (_, None) => {
                    if let Some(va) = prev {
                        self.delete(Kind::VolumeAttachment, "", name_of(va));
                    }
                }
                (Some(old), Some(new)) if spec_node_name(old) == spec_node_name(new) => {}
                (_, Some(va)) => {
                    self.add_to_node(Kind::VolumeAttachment, name_of(va), spec_node_name(va))
                }
            },
            ("resource.k8s.io", "resourceslices") => match (prev, cur) {
                // A slice's node name is immutable: updates change nothing here.
                (Some(_), Some(_)) => {}
                (None, Some(slice)) => {
                    self.add_to_node(Kind::ResourceSlice, name_of(slice), spec_node_name(slice))
                }
                (Some(slice), None) => self.delete(Kind::ResourceSlice, "", name_of(slice)),
                (None, None) => {}
            },
            _ => {}
        }
    }

    /// Drop everything of one resource (used before a re-list).
    pub fn reset(&mut self, group: &str, resource: &str) {
        let kind = match (group, resource) {
            ("", "pods") => Kind::Pod,
            ("", "persistentvolumes") => Kind::Pv,
            ("storage.k8s.io", "volumeattachments") => Kind::VolumeAttachment,
            ("resource.k8s.io", "resourceslices") => Kind::ResourceSlice,
            _ => return,
        };
        let ids: Vec<Id> = match self.index.get(&kind) {
            Some(by_ns) => by_ns.values().flat_map(|m| m.values().copied()).collect(),
            None => return,
        };
        for id in ids {
            self.remove_vertex(id);
        }
    }

    // --- populating --------------------------------------------------------------------

    fn apply_pod(&mut self, prev: Option<&Value>, cur: Option<&Value>) {
        let Some(pod) = cur else {
            // Deleted. (kube skips pods without a node; those are never in the graph.)
            if let Some(old) = prev {
                self.delete(Kind::Pod, namespace_of(old), name_of(old));
            }
            return;
        };
        let node = str_at(pod, &["spec", "nodeName"]);
        if node.is_empty() {
            // Not bound. kube ignores this; a pod cannot lose its node there, but should an
            // update here clear it, the pod's access goes with it.
            if prev.is_some_and(|old| !str_at(old, &["spec", "nodeName"]).is_empty()) {
                self.delete(Kind::Pod, namespace_of(pod), name_of(pod));
            }
            return;
        }
        if let Some(old) = prev {
            // Once bound, a pod's references are immutable except for added ephemeral
            // containers and the resource claim names in its status.
            let new_ephemeral = items(pod, &["spec", "ephemeralContainers"]).count()
                > items(old, &["spec", "ephemeralContainers"]).count();
            if str_at(old, &["spec", "nodeName"]) == node
                && str_at(old, &["metadata", "uid"]) == str_at(pod, &["metadata", "uid"])
                && !new_ephemeral
                && claim_statuses(old) == claim_statuses(pod)
            {
                return;
            }
        }
        self.add_pod(pod, node);
    }

    /// Replaces the pod's vertex and edges: pod → node, and secret / configmap / service
    /// account / pvc / resource claim → pod (all leading to the node).
    fn add_pod(&mut self, pod: &Value, node_name: &str) {
        let ns = namespace_of(pod);
        let name = name_of(pod);
        self.delete(Kind::Pod, ns, name);
        let pod_v = self.get_or_create(Kind::Pod, ns, name);
        let node_v = self.get_or_create(Kind::Node, "", node_name);
        self.set_edge(pod_v, node_v, Some(node_v));

        // A mirror pod must never grant its node access to other objects.
        let mirror = at(pod, &["metadata", "annotations"])
            .and_then(Value::as_object)
            .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION));
        if mirror {
            return;
        }

        let mut refs: Vec<(Kind, String)> = Vec::new();
        let sa = str_at(pod, &["spec", "serviceAccountName"]);
        if !sa.is_empty() {
            refs.push((Kind::ServiceAccount, sa.to_string()));
        }
        visit_pod_secret_names(pod, &mut |s| refs.push((Kind::Secret, s.to_string())));
        visit_pod_configmap_names(pod, &mut |c| refs.push((Kind::ConfigMap, c.to_string())));
        for vol in items(pod, &["spec", "volumes"]) {
            let claim = if field(vol, "persistentVolumeClaim").is_some() {
                str_at(vol, &["persistentVolumeClaim", "claimName"]).to_string()
            } else if field(vol, "ephemeral").is_some() {
                // The generic ephemeral volume's claim: <pod>-<volume>.
                format!("{}-{}", name, str_at(vol, &["name"]))
            } else {
                String::new()
            };
            if !claim.is_empty() {
                refs.push((Kind::Pvc, claim));
            }
        }
        for claim in pod_resource_claim_names(pod) {
            refs.push((Kind::ResourceClaim, claim));
        }
        for (kind, obj) in refs {
            let v = self.get_or_create(kind, ns, &obj);
            self.set_edge(v, pod_v, Some(node_v));
        }
    }

    /// Replaces the pv's vertex and edges: pv → its claimRef pvc, and kubelet-visible
    /// secret → pv. Neither end is tied to a node yet.
    fn add_pv(&mut self, pv: &Value) {
        let name = name_of(pv);
        self.delete(Kind::Pv, "", name);
        if at(pv, &["spec", "claimRef"]).is_none() {
            return;
        }
        let pv_v = self.get_or_create(Kind::Pv, "", name);
        let pvc_v = self.get_or_create(
            Kind::Pvc,
            str_at(pv, &["spec", "claimRef", "namespace"]),
            str_at(pv, &["spec", "claimRef", "name"]),
        );
        self.set_edge(pv_v, pvc_v, None);
        let mut secrets = Vec::new();
        visit_pv_kubelet_secret_names(pv, &mut |ns, s| {
            secrets.push((ns.to_string(), s.to_string()))
        });
        for (ns, s) in secrets {
            let v = self.get_or_create(Kind::Secret, &ns, &s);
            self.set_edge(v, pv_v, None);
        }
    }

    /// Replaces a cluster-scoped object's vertex with an edge to its node (if it has one).
    fn add_to_node(&mut self, kind: Kind, name: &str, node_name: &str) {
        self.delete(kind, "", name);
        if node_name.is_empty() {
            return;
        }
        let v = self.get_or_create(kind, "", name);
        let node_v = self.get_or_create(Kind::Node, "", node_name);
        self.set_edge(v, node_v, Some(node_v));
    }

    // --- vertices and edges ------------------------------------------------------------

    fn lookup(&self, kind: Kind, namespace: &str, name: &str) -> Option<Id> {
        self.index.get(&kind)?.get(namespace)?.get(name).copied()
    }

    fn get_or_create(&mut self, kind: Kind, namespace: &str, name: &str) -> Id {
        if let Some(id) = self.lookup(kind, namespace, name) {
            return id;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.index
            .entry(kind)
            .or_default()
            .entry(namespace.to_string())
            .or_default()
            .insert(name.to_string(), id);
        self.vertices.insert(
            id,
            Vertex {
                kind,
                namespace: namespace.to_string(),
                name: name.to_string(),
                out: HashMap::new(),
                inc: HashSet::new(),
                dests: HashMap::new(),
            },
        );
        id
    }

    /// Sets the edge from → to (at most one per pair; a second set replaces the first).
    fn set_edge(&mut self, from: Id, to: Id, dest: Option<Id>) {
        if from == to || !self.vertices.contains_key(&to) {
            return;
        }
        let Some(f) = self.vertices.get_mut(&from) else {
            return;
        };
        if let Some(Some(old)) = f.out.insert(to, dest) {
            decrement(&mut f.dests, old);
        }
        if let Some(d) = dest {
            *f.dests.entry(d).or_insert(0) += 1;
        }
        if let Some(t) = self.vertices.get_mut(&to) {
            t.inc.insert(from);
        }
    }

    fn delete(&mut self, kind: Kind, namespace: &str, name: &str) {
        if let Some(id) = self.lookup(kind, namespace, name) {
            self.remove_vertex(id);
        }
    }

    /// Removes a vertex with its edges, and any neighbour left without edges.
    fn remove_vertex(&mut self, id: Id) {
        let Some(v) = self.vertices.remove(&id) else {
            return;
        };
        if let Some(by_ns) = self.index.get_mut(&v.kind) {
            if let Some(names) = by_ns.get_mut(&v.namespace) {
                names.remove(&v.name);
                if names.is_empty() {
                    by_ns.remove(&v.namespace);
                }
            }
        }
        let mut neighbours = Vec::with_capacity(v.degree());
        for to in v.out.keys() {
            if let Some(t) = self.vertices.get_mut(to) {
                t.inc.remove(&id);
                neighbours.push(*to);
            }
        }
        for from in &v.inc {
            if let Some(f) = self.vertices.get_mut(from) {
                if let Some(Some(d)) = f.out.remove(&id) {
                    decrement(&mut f.dests, d);
                }
                neighbours.push(*from);
            }
        }
        for n in neighbours {
            if self.vertices.get(&n).is_some_and(|x| x.degree() == 0) {
                self.remove_vertex(n);
            }
        }
    }

    /// Whether a path leads from the object to the node (kube's hasPathFrom; its failures
    /// all give the same reason, so only the answer is kept).
    fn has_path(&self, kind: Kind, namespace: &str, name: &str, node_name: &str) -> bool {
        let Some(node) = self.lookup(Kind::Node, "", node_name) else {
            return false;
        };
        let Some(start) = self.lookup(kind, namespace, name) else {
            return false;
        };
        let mut seen = HashSet::from([start]);
        let mut stack = vec![start];
        while let Some(id) = stack.pop() {
            if id == node {
                return true;
            }
            let Some(v) = self.vertices.get(&id) else {
                continue;
            };
            if v.dests.contains_key(&node) {
                return true;
            }
            // Edges tied to a node lead only to that node: follow just the untied ones.
            for (to, dest) in &v.out {
                if dest.is_none() && seen.insert(*to) {
                    stack.push(*to);
                }
            }
        }
        false
    }
}

fn decrement(dests: &mut HashMap<Id, u32>, d: Id) {
    if let Some(c) = dests.get_mut(&d) {
        *c = c.saturating_sub(1);
        if *c == 0 {
            dests.remove(&d);
        }
    }
}

// --- reading objects -------------------------------------------------------------------

/// The value at `key`, treating JSON null as absent.
fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| field(v, k))
}

/// The string at `path`, or "" when absent or not a string.
fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

/// The elements of the array at `path` (none when absent or not an array).
fn items<'a>(v: &'a Value, path: &[&str]) -> std::slice::Iter<'a, Value> {
    match at(v, path).and_then(Value::as_array) {
        Some(a) => a.iter(),
        None => [].iter(),
    }
}

fn name_of(v: &Value) -> &str {
    str_at(v, &["metadata", "name"])
}

fn namespace_of(v: &Value) -> &str {
    str_at(v, &["metadata", "namespace"])
}

fn spec_node_name(v: &Value) -> &str {
    str_at(v, &["spec", "nodeName"])
}

/// The first of `keys` set on a volume source (kube's switch over the source pointers).
fn first_source<'a>(vol: &Value, keys: &[&'a str]) -> Option<&'a str> {
    keys.iter().copied().find(|k| field(vol, k).is_some())
}

/// All containers: init, regular and ephemeral.
fn containers(pod: &Value) -> impl Iterator<Item = &Value> {
    items(pod, &["spec", "initContainers"])
        .chain(items(pod, &["spec", "containers"]))
        .chain(items(pod, &["spec", "ephemeralContainers"]))
}

/// Calls `f` with each non-empty name.
fn visit_name(name: &str, f: &mut dyn FnMut(&str)) {
    if !name.is_empty() {
        f(name);
    }
}

/// The secrets a pod references (kube's VisitPodSecretNames): image pull secrets, env and
/// envFrom of every container, and the secret-bearing volume sources.
fn visit_pod_secret_names(pod: &Value, f: &mut dyn FnMut(&str)) {
    for r in items(pod, &["spec", "imagePullSecrets"]) {
        visit_name(str_at(r, &["name"]), f);
    }
    for c in containers(pod) {
        for e in items(c, &["envFrom"]) {
            if field(e, "secretRef").is_some() {
                visit_name(str_at(e, &["secretRef", "name"]), f);
            }
        }
        for e in items(c, &["env"]) {
            visit_name(str_at(e, &["valueFrom", "secretKeyRef", "name"]), f);
        }
    }
    const SOURCES: &[&str] = &[
        "azureFile",
        "cephfs",
        "cinder",
        "flexVolume",
        "projected",
        "rbd",
        "secret",
        "scaleIO",
        "iscsi",
        "storageos",
        "csi",
    ];
    for vol in items(pod, &["spec", "volumes"]) {
        match first_source(vol, SOURCES) {
            Some("azureFile") => visit_name(str_at(vol, &["azureFile", "secretName"]), f),
            Some("projected") => {
                for s in items(vol, &["projected", "sources"]) {
                    visit_name(str_at(s, &["secret", "name"]), f);
                }
            }
            Some("secret") => visit_name(str_at(vol, &["secret", "secretName"]), f),
            Some("csi") => visit_name(str_at(vol, &["csi", "nodePublishSecretRef", "name"]), f),
            Some(src) => visit_name(str_at(vol, &[src, "secretRef", "name"]), f),
            None => {}
        }
    }
}

/// The configmaps a pod references (kube's VisitPodConfigmapNames).
fn visit_pod_configmap_names(pod: &Value, f: &mut dyn FnMut(&str)) {
    for c in containers(pod) {
        for e in items(c, &["envFrom"]) {
            if field(e, "configMapRef").is_some() {
                visit_name(str_at(e, &["configMapRef", "name"]), f);
            }
        }
        for e in items(c, &["env"]) {
            visit_name(str_at(e, &["valueFrom", "configMapKeyRef", "name"]), f);
        }
    }
    for vol in items(pod, &["spec", "volumes"]) {
        match first_source(vol, &["projected", "configMap"]) {
            Some("projected") => {
                for s in items(vol, &["projected", "sources"]) {
                    visit_name(str_at(s, &["configMap", "name"]), f);
                }
            }
            Some(_) => visit_name(str_at(vol, &["configMap", "name"]), f),
            None => {}
        }
    }
}

/// The secrets a pv references that the kubelet reads (kube's VisitPVSecretNames with
/// kubeletVisible), as (namespace, name). Several sources default the namespace to the
/// claimRef's.
fn visit_pv_kubelet_secret_names(pv: &Value, f: &mut dyn FnMut(&str, &str)) {
    let claim_ns = str_at(pv, &["spec", "claimRef", "namespace"]);
    let mut visit = |ns: &str, name: &str| {
        if !name.is_empty() {
            f(ns, name);
        }
    };
    const SOURCES: &[&str] = &[
        "azureFile",
        "cephfs",
        "cinder",
        "flexVolume",
        "rbd",
        "scaleIO",
        "iscsi",
        "storageos",
        "csi",
    ];
    let Some(spec) = field(pv, "spec") else {
        return;
    };
    match first_source(spec, SOURCES) {
        Some("azureFile") => {
            let ns = str_at(spec, &["azureFile", "secretNamespace"]);
            let ns = if ns.is_empty() { claim_ns } else { ns };
            visit(ns, str_at(spec, &["azureFile", "secretName"]));
        }
        // (An absent secretRef has no name, which is skipped.)
        Some(src @ ("cinder" | "storageos")) => visit(
            str_at(spec, &[src, "secretRef", "namespace"]),
            str_at(spec, &[src, "secretRef", "name"]),
        ),
        Some("csi") => {
            // Controller publish/expand secrets are not the kubelet's.
            for r in ["nodePublishSecretRef", "nodeStageSecretRef"] {
                visit(
                    str_at(spec, &["csi", r, "namespace"]),
                    str_at(spec, &["csi", r, "name"]),
                );
            }
        }
        Some(src) => {
            let ns = str_at(spec, &[src, "secretRef", "namespace"]);
            let ns = if ns.is_empty() { claim_ns } else { ns };
            visit(ns, str_at(spec, &[src, "secretRef", "name"]));
        }
        None => {}
    }
}

/// The ResourceClaims a pod uses (kube's resourceclaim.Name for each spec.resourceClaims
/// entry): a named claim, or the claim made from a template as recorded in
/// status.resourceClaimStatuses. Claims not yet made, or not needed, are skipped.
fn pod_resource_claim_names(pod: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for pc in items(pod, &["spec", "resourceClaims"]) {
        let name = if let Some(n) = field(pc, "resourceClaimName") {
            n.as_str()
        } else if field(pc, "resourceClaimTemplateName").is_some() {
            let want = str_at(pc, &["name"]);
            items(pod, &["status", "resourceClaimStatuses"])
                .find(|s| str_at(s, &["name"]) == want)
                .and_then(|s| field(s, "resourceClaimName"))
                .and_then(Value::as_str)
        } else {
            None
        };
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            out.push(n.to_string());
        }
    }
    out
}

/// status.resourceClaimStatuses as (name, claim name) pairs, for change detection.
fn claim_statuses(pod: &Value) -> Vec<(&str, Option<&str>)> {
    items(pod, &["status", "resourceClaimStatuses"])
        .map(|s| {
            let claim = field(s, "resourceClaimName").map(|c| c.as_str().unwrap_or(""));
            (str_at(s, &["name"]), claim)
        })
        .collect()
}

// --- deciding --------------------------------------------------------------------------

/// `system:node:<name>` in group `system:nodes` → `Some(name)` (kube's default
/// NodeIdentifier). The name may be empty (`system:node:`), which [`authorize`] refuses
/// as an unknown node. Anyone else → `None`.
pub fn node_identity(user: &UserInfo) -> Option<&str> {
    let name = user.name.strip_prefix("system:node:")?;
    user.groups
        .iter()
        .any(|g| g == "system:nodes")
        .then_some(name)
}

/// The decision, as kube-apiserver v1.33's NodeAuthorizer.Authorize with default feature
/// gates, for a request without a field selector (see [`authorize_with_field_selector`]).
pub fn authorize(
    graph: &Graph,
    node_rules: &[PolicyRule],
    user: &UserInfo,
    attrs: &Attributes<'_>,
) -> Decision {
    authorize_with_field_selector(graph, node_rules, user, attrs, None)
}

/// [`authorize`] for a request that carries a field selector (the raw `fieldSelector`
/// query of a list, watch or deletecollection): kube lets a node list and watch pods with
/// `spec.nodeName=<node>`, and resource slices with `spec.nodeName=<node>`. A selector
/// that does not parse counts as none.
pub fn authorize_with_field_selector(
    graph: &Graph,
    node_rules: &[PolicyRule],
    user: &UserInfo,
    attrs: &Attributes<'_>,
    field_selector: Option<&str>,
) -> Decision {
    let Some(node) = node_identity(user) else {
        return no_opinion("");
    };
    if node.is_empty() {
        return no_opinion(format!("unknown node for user {}", go_quote(&user.name)));
    }
    if let Attributes::Resource(ra) = attrs {
        let sub = ra.subresource.unwrap_or("");
        let selector = || parse_field_selector(field_selector.unwrap_or(""));
        match (ra.group, ra.resource) {
            ("", "secrets") => return read_namespaced(graph, node, Kind::Secret, ra),
            ("", "configmaps") => return read_namespaced(graph, node, Kind::ConfigMap, ra),
            ("", "persistentvolumeclaims") if sub == "status" => {
                return status_update(graph, node, Kind::Pvc, ra)
            }
            ("", "persistentvolumeclaims") => return get(graph, node, Kind::Pvc, ra),
            ("", "persistentvolumes") => return get(graph, node, Kind::Pv, ra),
            ("resource.k8s.io", "resourceclaims") => {
                return get(graph, node, Kind::ResourceClaim, ra)
            }
            ("storage.k8s.io", "volumeattachments") => {
                return get(graph, node, Kind::VolumeAttachment, ra)
            }
            ("", "serviceaccounts") => return create_token(graph, node, ra),
            ("coordination.k8s.io", "leases") => return lease(node, ra),
            ("storage.k8s.io", "csinodes") => return csi_node(node, ra),
            ("resource.k8s.io", "resourceslices") => {
                return resource_slice(graph, node, ra, selector)
            }
            ("", "nodes") => return node_object(node, ra),
            ("", "pods") => return pod(graph, node, ra, selector),
            _ => {}
        }
    }
    if rules_allow(attrs, node_rules) {
        Decision::Allow(String::new())
    } else {
        no_opinion("")
    }
}

fn no_opinion(reason: impl Into<String>) -> Decision {
    Decision::NoOpinion(reason.into())
}

fn allow() -> Decision {
    Decision::Allow(String::new())
}

fn no_relationship(node: &str) -> Decision {
    no_opinion(format!(
        "no relationship found between node '{node}' and this object"
    ))
}

/// Allowed when the named object is related to the node in the graph.
fn related(graph: &Graph, node: &str, kind: Kind, ra: &ResourceAttributes<'_>) -> Decision {
    let name = ra.name.unwrap_or("");
    if name.is_empty() {
        return no_opinion("No Object name found");
    }
    if graph.has_path(kind, ra.namespace.unwrap_or(""), name, node) {
        allow()
    } else {
        no_relationship(node)
    }
}

/// get, list and watch of one related namespaced object (secrets, configmaps).
fn read_namespaced(graph: &Graph, node: &str, kind: Kind, ra: &ResourceAttributes<'_>) -> Decision {
    if !matches!(ra.verb, "get" | "list" | "watch") {
        return no_opinion("can only read resources of this type");
    }
    if !ra.subresource.unwrap_or("").is_empty() {
        return no_opinion("cannot read subresource");
    }
    if ra.namespace.unwrap_or("").is_empty() {
        return no_opinion("can only read namespaced object of this type");
    }
    related(graph, node, kind, ra)
}

/// get of one related object, no subresource.
fn get(graph: &Graph, node: &str, kind: Kind, ra: &ResourceAttributes<'_>) -> Decision {
    if ra.verb != "get" {
        return no_opinion("can only get individual resources of this type");
    }
    if !ra.subresource.unwrap_or("").is_empty() {
        return no_opinion("cannot get subresource");
    }
    related(graph, node, kind, ra)
}

/// update and patch of a related object's status.
fn status_update(graph: &Graph, node: &str, kind: Kind, ra: &ResourceAttributes<'_>) -> Decision {
    if !matches!(ra.verb, "update" | "patch") {
        return no_opinion("can only get/update/patch this type");
    }
    if ra.subresource.unwrap_or("") != "status" {
        return no_opinion("can only update status subresource");
    }
    related(graph, node, kind, ra)
}

/// create of the token of a service account used by one of the node's pods.
fn create_token(graph: &Graph, node: &str, ra: &ResourceAttributes<'_>) -> Decision {
    let name = ra.name.unwrap_or("");
    if ra.verb != "create" || name.is_empty() {
        return no_opinion("can only create tokens for individual service accounts");
    }
    if ra.subresource.unwrap_or("") != "token" {
        return no_opinion("can only create token subresource of serviceaccount");
    }
    if graph.has_path(Kind::ServiceAccount, ra.namespace.unwrap_or(""), name, node) {
        allow()
    } else {
        no_relationship(node)
    }
}

/// The node's own lease in kube-node-lease (any name on create: NodeRestriction checks it).
fn lease(node: &str, ra: &ResourceAttributes<'_>) -> Decision {
    if !matches!(ra.verb, "get" | "create" | "update" | "patch" | "delete") {
        return no_opinion("can only get, create, update, patch, or delete a node lease");
    }
    if ra.namespace.unwrap_or("") != NODE_LEASE_NAMESPACE {
        return no_opinion(format!(
            "can only access leases in the {} system namespace",
            go_quote(NODE_LEASE_NAMESPACE)
        ));
    }
    if ra.verb != "create" && ra.name.unwrap_or("") != node {
        return no_opinion("can only access node lease with the same name as the requesting node");
    }
    allow()
}

/// The node's own CSINode (any name on create: NodeRestriction checks it).
fn csi_node(node: &str, ra: &ResourceAttributes<'_>) -> Decision {
    if !matches!(ra.verb, "get" | "create" | "update" | "patch" | "delete") {
        return no_opinion("can only get, create, update, patch, or delete a CSINode");
    }
    if !ra.subresource.unwrap_or("").is_empty() {
        return no_opinion("cannot authorize CSINode subresources");
    }
    if ra.verb != "create" && ra.name.unwrap_or("") != node {
        return no_opinion("can only access CSINode with the same name as the requesting node");
    }
    allow()
}

/// ResourceSlices: create freely (NodeRestriction checks the node), read and write the
/// node's own, list/watch/deletecollection only with a `spec.nodeName=<node>` selector.
fn resource_slice(
    graph: &Graph,
    node: &str,
    ra: &ResourceAttributes<'_>,
    selector: impl Fn() -> Vec<Requirement>,
) -> Decision {
    if !ra.subresource.unwrap_or("").is_empty() {
        return no_opinion("cannot authorize ResourceSlice subresources");
    }
    match ra.verb {
        "create" => allow(),
        "get" | "update" | "patch" | "delete" => related(graph, node, Kind::ResourceSlice, ra),
        "watch" | "list" | "deletecollection" => {
            if selector().iter().any(|r| r.is_equals(SLICE_NODE_FIELD, node)) {
                allow()
            } else {
                no_opinion("can only list/watch/deletecollection resourceslices with nodeName field selector")
            }
        }
        _ => no_opinion(
            "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection",
        ),
    }
}

/// Node objects: create/update/patch (NodeRestriction limits them to its own), read only
/// its own, status update/patch.
fn node_object(node: &str, ra: &ResourceAttributes<'_>) -> Decision {
    match (ra.subresource.unwrap_or(""), ra.verb) {
        ("", "create" | "update" | "patch") => allow(),
        ("", "get" | "list" | "watch") => match ra.name.unwrap_or("") {
            n if n == node => allow(),
            "" => no_opinion(format!(
                "node '{node}' cannot read all nodes, only its own Node object"
            )),
            n => no_opinion(format!(
                "node '{node}' cannot read '{n}', only its own Node object"
            )),
        },
        ("status", "update" | "patch") => allow(),
        _ => no_opinion(""),
    }
}

/// Pods: get of its own pods, list/watch with `spec.nodeName=<node>` (or of one of its own
/// pods by name), create/delete (mirror pods), status update/patch, eviction create.
fn pod(
    graph: &Graph,
    node: &str,
    ra: &ResourceAttributes<'_>,
    selector: impl Fn() -> Vec<Requirement>,
) -> Decision {
    match (ra.subresource.unwrap_or(""), ra.verb) {
        ("", "get") => get(graph, node, Kind::Pod, ra),
        ("", "list" | "watch") => {
            if selector()
                .iter()
                .any(|r| r.is_equals("spec.nodeName", node))
            {
                allow()
            } else if !ra.name.unwrap_or("").is_empty() {
                related(graph, node, Kind::Pod, ra)
            } else {
                no_opinion("can only list/watch pods with spec.nodeName field selector")
            }
        }
        ("", "create" | "delete") => allow(),
        ("status", "update" | "patch") => allow(),
        ("eviction", "create") => allow(),
        _ => no_opinion(""),
    }
}

/// One term of a field selector.
#[derive(Debug, PartialEq, Eq)]
struct Requirement {
    field: String,
    equals: bool,
    value: String,
}

impl Requirement {
    fn is_equals(&self, field: &str, value: &str) -> bool {
        self.equals && self.field == field && self.value == value
    }
}

/// Parses a field selector as kube's fields.ParseSelector (`a=b,c==d,e!=f`, values
/// escaped with `\`); any error gives no requirements.
fn parse_field_selector(s: &str) -> Vec<Requirement> {
    let mut reqs = Vec::new();
    if s.is_empty() {
        return reqs;
    }
    // Split on commas not escaped by a backslash.
    let mut terms = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            escaped = false;
            cur.push(c);
        } else if c == '\\' {
            escaped = true;
            cur.push(c);
        } else if c == ',' {
            terms.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    terms.push(cur);
    for term in terms.iter().filter(|t| !t.is_empty()) {
        let Some((field, equals, raw)) = split_term(term) else {
            return Vec::new();
        };
        let Some(value) = unescape_field_value(raw) else {
            return Vec::new();
        };
        reqs.push(Requirement {
            field: field.to_string(),
            equals,
            value,
        });
    }
    reqs
}

/// Splits `lhs<op>rhs` at the first unescaped `!=`, `==` or `=`; the bool is "equals".
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    let b = term.as_bytes();
    let mut in_slash = false;
    for i in 0..b.len() {
        if in_slash {
            in_slash = false;
            continue;
        }
        if b[i] == b'\\' {
            in_slash = true;
            continue;
        }
        for (op, equals) in [("!=", false), ("==", true), ("=", true)] {
            if b[i..].starts_with(op.as_bytes()) {
                return Some((&term[..i], equals, &term[i + op.len()..]));
            }
        }
    }
    None
}

/// Undoes `\\`, `\,` and `\=`; other escapes and bare `,` or `=` are errors.
fn unescape_field_value(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ ('\\' | ',' | '=')) => out.push(n),
                _ => return None,
            },
            ',' | '=' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Go's `%q` of a string (strconv.Quote), close enough for reason strings: printable
/// characters as they are, the rest escaped.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control()
                || (c.is_whitespace() && c != ' ')
                || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}') =>
            {
                if (c as u32) < 0x10000 {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node_user(name: &str) -> UserInfo {
        UserInfo {
            name: format!("system:node:{name}"),
            groups: vec!["system:nodes".into(), "system:authenticated".into()],
            ..Default::default()
        }
    }

    use crate::authz::test_resource as ra;

    fn rules() -> Vec<PolicyRule> {
        let rule = |verbs: &[&str], groups: &[&str], resources: &[&str]| PolicyRule {
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            api_groups: groups.iter().map(|s| s.to_string()).collect(),
            resources: resources.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        vec![
            rule(
                &["create", "patch", "update"],
                &["", "events.k8s.io"],
                &["events"],
            ),
            rule(&["get", "list", "watch"], &[""], &["services", "endpoints"]),
            // Would grant everything on these if the authorizer consulted the rules.
            rule(
                &["*"],
                &[""],
                &["secrets", "pods", "nodes", "serviceaccounts"],
            ),
            PolicyRule {
                verbs: vec!["get".into()],
                non_resource_urls: vec!["/healthz".into()],
                ..Default::default()
            },
        ]
    }

    fn allowed() -> Decision {
        Decision::Allow(String::new())
    }

    fn no(reason: &str) -> Decision {
        Decision::NoOpinion(reason.to_string())
    }

    fn no_rel(node: &str) -> Decision {
        no(&format!(
            "no relationship found between node '{node}' and this object"
        ))
    }

    fn check(g: &Graph, node: &str, attrs: Attributes<'_>) -> Decision {
        authorize(g, &rules(), &node_user(node), &attrs)
    }

    fn get_secret(g: &Graph, node: &str, ns: &str, name: &str) -> Decision {
        check(
            g,
            node,
            ra("get", "", "secrets", None, Some(ns), Some(name)),
        )
    }

    fn get_cm(g: &Graph, node: &str, ns: &str, name: &str) -> Decision {
        check(
            g,
            node,
            ra("get", "", "configmaps", None, Some(ns), Some(name)),
        )
    }

    fn get_cluster(g: &Graph, node: &str, group: &str, resource: &str, name: &str) -> Decision {
        check(g, node, ra("get", group, resource, None, None, Some(name)))
    }

    fn pod_json(ns: &str, name: &str, node: &str, spec: Value) -> Value {
        let mut spec = spec;
        if !node.is_empty() {
            spec["nodeName"] = json!(node);
        }
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": ns, "name": name, "uid": format!("uid-{name}")},
            "spec": spec,
        })
    }

    fn full_spec() -> Value {
        json!({
            "serviceAccountName": "sa1",
            "imagePullSecrets": [{"name": "pull"}],
            "initContainers": [{"name": "i", "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "init-env", "key": "k"}}}]}],
            "containers": [{
                "name": "c",
                "envFrom": [{"secretRef": {"name": "envfrom-s"}}, {"configMapRef": {"name": "envfrom-cm"}}],
                "env": [
                    {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "k"}}},
                    {"name": "C", "value": "plain"},
                ],
            }],
            "ephemeralContainers": [{"name": "e", "envFrom": [{"secretRef": {"name": "eph-s"}}]}],
            "volumes": [
                {"name": "v-secret", "secret": {"secretName": "vol-s"}},
                {"name": "v-cm", "configMap": {"name": "vol-cm"}},
                {"name": "v-proj", "projected": {"sources": [
                    {"secret": {"name": "proj-s"}}, {"configMap": {"name": "proj-cm"}}, {"serviceAccountToken": {"path": "t"}},
                ]}},
                {"name": "v-csi", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi-s"}}},
                {"name": "v-azure", "azureFile": {"secretName": "azure-s", "shareName": "x"}},
                {"name": "v-cephfs", "cephfs": {"monitors": ["m"], "secretRef": {"name": "ceph-s"}}},
                {"name": "v-rbd", "rbd": {"monitors": ["m"], "image": "i", "secretRef": {"name": "rbd-s"}}},
                {"name": "v-iscsi", "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0, "secretRef": {"name": "iscsi-s"}}},
                {"name": "v-flex", "flexVolume": {"driver": "d", "secretRef": {"name": "flex-s"}}},
                {"name": "v-cinder", "cinder": {"volumeID": "v", "secretRef": {"name": "cinder-s"}}},
                {"name": "v-scaleio", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "scaleio-s"}}},
                {"name": "v-storageos", "storageos": {"secretRef": {"name": "storageos-s"}}},
                {"name": "v-pvc", "persistentVolumeClaim": {"claimName": "claim1"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                {"name": "v-empty", "emptyDir": {}},
            ],
        })
    }

    fn graph_with(pods: &[Value]) -> Graph {
        let mut g = Graph::default();
        for p in pods {
            g.apply("", "pods", None, Some(p));
        }
        g
    }

    #[test]
    fn graph_is_send_sync_default() {
        fn ok<T: Default + Send + Sync>() {}
        ok::<Graph>();
    }

    #[test]
    fn watched_is_upstream_default_set() {
        assert_eq!(
            WATCHED,
            &[
                ("", "pods"),
                ("", "persistentvolumes"),
                ("storage.k8s.io", "volumeattachments")
            ]
        );
    }

    #[test]
    fn node_identity_as_kube() {
        assert_eq!(node_identity(&node_user("n1")), Some("n1"));
        let mut u = node_user("n1");
        u.groups = vec!["system:authenticated".into()];
        assert_eq!(node_identity(&u), None, "needs the system:nodes group");
        let u = UserInfo {
            name: "alice".into(),
            groups: vec!["system:nodes".into()],
            ..Default::default()
        };
        assert_eq!(node_identity(&u), None, "needs the name prefix");
        let u = UserInfo {
            name: "system:node:".into(),
            groups: vec!["system:nodes".into()],
            ..Default::default()
        };
        assert_eq!(node_identity(&u), Some(""));
    }

    #[test]
    fn non_node_and_unknown_node() {
        let g = graph_with(&[pod_json("ns", "p", "n1", full_spec())]);
        let alice = UserInfo {
            name: "alice".into(),
            groups: vec!["system:authenticated".into()],
            ..Default::default()
        };
        let attrs = ra("get", "", "secrets", None, Some("ns"), Some("vol-s"));
        assert_eq!(authorize(&g, &rules(), &alice, &attrs), no(""));
        let anon = UserInfo {
            name: "system:node:".into(),
            groups: vec!["system:nodes".into()],
            ..Default::default()
        };
        assert_eq!(
            authorize(&g, &rules(), &anon, &attrs),
            no("unknown node for user \"system:node:\"")
        );
    }

    #[test]
    fn every_pod_reference_is_reachable() {
        let g = graph_with(&[pod_json("ns", "p", "n1", full_spec())]);
        for s in [
            "pull",
            "init-env",
            "envfrom-s",
            "eph-s",
            "vol-s",
            "proj-s",
            "csi-s",
            "azure-s",
            "ceph-s",
            "rbd-s",
            "iscsi-s",
            "flex-s",
            "cinder-s",
            "scaleio-s",
            "storageos-s",
        ] {
            assert_eq!(get_secret(&g, "n1", "ns", s), allowed(), "secret {s}");
            assert_eq!(
                get_secret(&g, "n2", "ns", s),
                no_rel("n2"),
                "secret {s} on n2"
            );
            assert_eq!(
                get_secret(&g, "n1", "other", s),
                no_rel("n1"),
                "secret {s} in other ns"
            );
        }
        for c in ["envfrom-cm", "env-cm", "vol-cm", "proj-cm"] {
            assert_eq!(get_cm(&g, "n1", "ns", c), allowed(), "configmap {c}");
            assert_eq!(
                get_cm(&g, "n2", "ns", c),
                no_rel("n2"),
                "configmap {c} on n2"
            );
        }
        let pvc = |name| {
            check(
                &g,
                "n1",
                ra(
                    "get",
                    "",
                    "persistentvolumeclaims",
                    None,
                    Some("ns"),
                    Some(name),
                ),
            )
        };
        assert_eq!(pvc("claim1"), allowed());
        assert_eq!(
            pvc("p-scratch"),
            allowed(),
            "ephemeral volume claim <pod>-<volume>"
        );
        assert_eq!(pvc("claim2"), no_rel("n1"));
        // Names that are not references.
        assert_eq!(get_secret(&g, "n1", "ns", "claim1"), no_rel("n1"));
        assert_eq!(get_cm(&g, "n1", "ns", "vol-s"), no_rel("n1"));
        // The pod itself.
        assert_eq!(
            check(&g, "n1", ra("get", "", "pods", None, Some("ns"), Some("p"))),
            allowed()
        );
        assert_eq!(
            check(&g, "n2", ra("get", "", "pods", None, Some("ns"), Some("p"))),
            no_rel("n2")
        );
    }

    #[test]
    fn first_volume_source_wins_like_kube() {
        // An (invalid) volume with two sources: kube's switch looks at secret before csi.
        let spec = json!({"volumes": [
            {"name": "v", "secret": {"secretName": "a"}, "csi": {"driver": "d", "nodePublishSecretRef": {"name": "b"}}},
            {"name": "w", "azureFile": {"secretName": ""}, "secret": {"secretName": "c"}},
        ]});
        let g = graph_with(&[pod_json("ns", "p", "n1", spec)]);
        assert_eq!(get_secret(&g, "n1", "ns", "a"), allowed());
        assert_eq!(get_secret(&g, "n1", "ns", "b"), no_rel("n1"));
        assert_eq!(get_secret(&g, "n1", "ns", "c"), no_rel("n1"));
    }

    #[test]
    fn unbound_pods_grant_nothing_until_bound() {
        let unbound = pod_json("ns", "p", "", full_spec());
        let mut g = graph_with(std::slice::from_ref(&unbound));
        assert_eq!(get_secret(&g, "n1", "ns", "vol-s"), no_rel("n1"));
        let bound = pod_json("ns", "p", "n1", full_spec());
        g.apply("", "pods", Some(&unbound), Some(&bound));
        assert_eq!(get_secret(&g, "n1", "ns", "vol-s"), allowed());
    }

    #[test]
    fn deleting_the_pod_removes_access() {
        let p = pod_json("ns", "p", "n1", full_spec());
        let mut g = graph_with(std::slice::from_ref(&p));
        assert_eq!(get_secret(&g, "n1", "ns", "vol-s"), allowed());
        g.apply("", "pods", Some(&p), None);
        assert_eq!(get_secret(&g, "n1", "ns", "vol-s"), no_rel("n1"));
        assert_eq!(get_cm(&g, "n1", "ns", "vol-cm"), no_rel("n1"));
        assert!(
            g.vertices.is_empty(),
            "orphans are dropped: {:?}",
            g.vertices
        );
        assert!(g.index.values().all(|m| m.is_empty()));
    }

    #[test]
    fn shared_secret_survives_one_pod_leaving() {
        let spec = json!({"volumes": [{"name": "v", "secret": {"secretName": "shared"}}]});
        let a = pod_json("ns", "a", "n1", spec.clone());
        let b = pod_json("ns", "b", "n1", spec.clone());
        let c = pod_json("ns", "c", "n2", spec);
        let mut g = graph_with(&[a.clone(), b.clone(), c.clone()]);
        g.apply("", "pods", Some(&a), None);
        assert_eq!(get_secret(&g, "n1", "ns", "shared"), allowed());
        assert_eq!(get_secret(&g, "n2", "ns", "shared"), allowed());
        g.apply("", "pods", Some(&b), None);
        assert_eq!(get_secret(&g, "n1", "ns", "shared"), no_rel("n1"));
        assert_eq!(get_secret(&g, "n2", "ns", "shared"), allowed());
    }

    #[test]
    fn moving_or_unbinding_the_pod_by_update() {
        let p1 = pod_json("ns", "p", "n1", full_spec());
        let mut g = graph_with(std::slice::from_ref(&p1));
        // A pod recreated under the same name on another node (new uid, new node).
        let mut p2 = pod_json("ns", "p", "n2", full_spec());
        p2["metadata"]["uid"] = json!("uid-2");
        g.apply("", "pods", Some(&p1), Some(&p2));
        assert_eq!(get_secret(&g, "n1", "ns", "vol-s"), no_rel("n1"));
        assert_eq!(get_secret(&g, "n2", "ns", "vol-s"), allowed());
        // An update that clears the node drops the pod's access.
        let p3 = pod_json("ns", "p", "", full_spec());
        g.apply("", "pods", Some(&p2), Some(&p3));
        assert_eq!(get_secret(&g, "n2", "ns", "vol-s"), no_rel("n2"));
    }

    #[test]
    fn unchanged_pod_updates_are_skipped_like_kube() {
        let p = pod_json(
            "ns",
            "p",
            "n1",
            json!({"volumes": [{"name": "v", "secret": {"secretName": "a"}}]}),
        );
        let mut g = graph_with(std::slice::from_ref(&p));
        // Same node and uid: references are taken as immutable, so a changed volume list
        // (which the API forbids) is not looked at.
        let changed = pod_json(
            "ns",
            "p",
            "n1",
            json!({"volumes": [{"name": "v", "secret": {"secretName": "b"}}]}),
        );
        g.apply("", "pods", Some(&p), Some(&changed));
        assert_eq!(get_secret(&g, "n1", "ns", "a"), allowed());
        assert_eq!(get_secret(&g, "n1", "ns", "b"), no_rel("n1"));
    }

    #[test]
    fn added_ephemeral_container_grants_its_references() {
        let p = pod_json("ns", "p", "n1", json!({"containers": [{"name": "c"}]}));
        let mut g = graph_with(std::slice::from_ref(&p));
        assert_eq!(get_secret(&g, "n1", "ns", "debug-s"), no_rel("n1"));
        let debug = pod_json(
            "ns",
            "p",
            "n1",
            json!({
                "containers": [{"name": "c"}],
                "ephemeralContainers": [{"name": "dbg", "envFrom": [{"secretRef": {"name": "debug-s"}}, {"configMapRef": {"name": "debug-cm"}}]}],
            }),
        );
        g.apply("", "pods", Some(&p), Some(&debug));
        assert_eq!(get_secret(&g, "n1", "ns", "debug-s"), allowed());
        assert_eq!(get_cm(&g, "n1", "ns", "debug-cm"), allowed());
    }

    #[test]
    fn mirror_pods_grant_only_themselves() {
        let mut p = pod_json("ns", "static", "n1", full_spec());
        p["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
        let g = graph_with(&[p]);
        assert_eq!(get_secret(&g, "n1", "ns", "vol-s"), no_rel("n1"));
        assert_eq!(
            check(
                &g,
                "n1",
                ra(
                    "create",
                    "",
                    "serviceaccounts",
                    Some("token"),
                    Some("ns"),
                    Some("sa1")
                )
            ),
            no_rel("n1")
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra("get", "", "pods", None, Some("ns"), Some("static"))
            ),
            allowed()
        );
    }

    #[test]
    fn secret_and_configmap_reads() {
        let g = graph_with(&[pod_json("ns", "p", "n1", full_spec())]);
        for verb in ["get", "list", "watch"] {
            assert_eq!(
                check(
                    &g,
                    "n1",
                    ra(verb, "", "secrets", None, Some("ns"), Some("vol-s"))
                ),
                allowed()
            );
        }
        assert_eq!(
            check(&g, "n1", ra("list", "", "secrets", None, Some("ns"), None)),
            no("No Object name found")
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra("update", "", "secrets", None, Some("ns"), Some("vol-s"))
            ),
            no("can only read resources of this type")
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra(
                    "get",
                    "",
                    "configmaps",
                    Some("x"),
                    Some("ns"),
                    Some("vol-cm")
                )
            ),
            no("cannot read subresource")
        );
        assert_eq!(
            check(&g, "n1", ra("list", "", "secrets", None, None, None)),
            no("can only read namespaced object of this type")
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra("get", "", "secrets", None, Some(""), Some("vol-s"))
            ),
            no("can only read namespaced object of this type")
        );
    }

    #[test]
    fn pvcs_pvs_and_pv_secrets() {
        let mut g = graph_with(&[pod_json("ns", "p", "n1", full_spec())]);
        let pv = json!({
            "metadata": {"name": "pv1"},
            "spec": {
                "claimRef": {"namespace": "ns", "name": "claim1"},
                "csi": {
                    "driver": "d", "volumeHandle": "h",
                    "nodePublishSecretRef": {"namespace": "ns", "name": "pv-publish"},
                    "nodeStageSecretRef": {"namespace": "sec", "name": "pv-stage"},
                    "controllerPublishSecretRef": {"namespace": "ns", "name": "pv-controller"},
                    "controllerExpandSecretRef": {"namespace": "ns", "name": "pv-expand"},
                },
            },
        });
        g.apply("", "persistentvolumes", None, Some(&pv));
        assert_eq!(
            get_cluster(&g, "n1", "", "persistentvolumes", "pv1"),
            allowed()
        );
        assert_eq!(
            get_cluster(&g, "n2", "", "persistentvolumes", "pv1"),
            no_rel("n2")
        );
        assert_eq!(get_secret(&g, "n1", "ns", "pv-publish"), allowed());
        assert_eq!(get_secret(&g, "n1", "sec", "pv-stage"), allowed());
        assert_eq!(get_secret(&g, "n1", "ns", "pv-controller"), no_rel("n1"));
        assert_eq!(get_secret(&g, "n1", "ns", "pv-expand"), no_rel("n1"));
        assert_eq!(get_secret(&g, "n2", "ns", "pv-publish"), no_rel("n2"));

        // Verbs and subresources.
        assert_eq!(
            check(
                &g,
                "n1",
                ra("list", "", "persistentvolumes", None, None, None)
            ),
            no("can only get individual resources of this type")
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra(
                    "get",
                    "",
                    "persistentvolumeclaims",
                    Some("foo"),
                    Some("ns"),
                    Some("claim1")
                )
            ),
            no("cannot get subresource")
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra("get", "", "persistentvolumes", None, None, None)
            ),
            no("No Object name found")
        );
        // PVC status: update/patch of a related claim.
        let status = |verb, node, name| {
            check(
                &g,
                node,
                ra(
                    verb,
                    "",
                    "persistentvolumeclaims",
                    Some("status"),
                    Some("ns"),
                    Some(name),
                ),
            )
        };
        assert_eq!(status("patch", "n1", "claim1"), allowed());
        assert_eq!(status("update", "n1", "claim1"), allowed());
        assert_eq!(status("update", "n2", "claim1"), no_rel("n2"));
        assert_eq!(
            status("get", "n1", "claim1"),
            no("can only get/update/patch this type")
        );

        // Rebinding the pv elsewhere drops the old chain; deleting it drops the rest.
        let moved = json!({"metadata": {"name": "pv1"}, "spec": {"claimRef": {"namespace": "ns", "name": "other"}}});
        g.apply("", "persistentvolumes", Some(&pv), Some(&moved));
        assert_eq!(
            get_cluster(&g, "n1", "", "persistentvolumes", "pv1"),
            no_rel("n1")
        );
        assert_eq!(get_secret(&g, "n1", "ns", "pv-publish"), no_rel("n1"));
        g.apply("", "persistentvolumes", Some(&pv), Some(&pv));
        assert_eq!(
            get_cluster(&g, "n1", "", "persistentvolumes", "pv1"),
            allowed()
        );
        g.apply("", "persistentvolumes", Some(&pv), None);
        assert_eq!(
            get_cluster(&g, "n1", "", "persistentvolumes", "pv1"),
            no_rel("n1")
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra(
                    "get",
                    "",
                    "persistentvolumeclaims",
                    None,
                    Some("ns"),
                    Some("claim1")
                )
            ),
            allowed(),
            "the pod still uses the claim"
        );
    }

    #[test]
    fn pv_before_pod_and_pv_secret_namespaces() {
        let mut g = Graph::default();
        let pv = json!({
            "metadata": {"name": "pv1"},
            "spec": {"claimRef": {"namespace": "ns", "name": "c"}, "rbd": {"monitors": ["m"], "image": "i", "secretRef": {"name": "rbd-s"}}},
        });
        let pv2 = json!({
            "metadata": {"name": "pv2"},
            "spec": {"claimRef": {"namespace": "ns", "name": "c2"}, "azureFile": {"secretName": "az", "secretNamespace": "azns", "shareName": "s"}},
        });
        let pv3 = json!({
            "metadata": {"name": "pv3"},
            "spec": {"claimRef": {"namespace": "ns", "name": "c3"}, "cephfs": {"monitors": ["m"], "secretRef": {"name": "ceph", "namespace": "cephns"}}},
        });
        let unbound_pv =
            json!({"metadata": {"name": "pv4"}, "spec": {"rbd": {"secretRef": {"name": "x"}}}});
        for pv in [&pv, &pv2, &pv3, &unbound_pv] {
            g.apply("", "persistentvolumes", None, Some(pv));
        }
        assert_eq!(
            get_secret(&g, "n1", "ns", "rbd-s"),
            no_rel("n1"),
            "no pod yet"
        );
        let spec = json!({"volumes": [
            {"name": "a", "persistentVolumeClaim": {"claimName": "c"}},
            {"name": "b", "persistentVolumeClaim": {"claimName": "c2"}},
            {"name": "d", "persistentVolumeClaim": {"claimName": "c3"}},
        ]});
        g.apply("", "pods", None, Some(&pod_json("ns", "p", "n1", spec)));
        assert_eq!(
            get_secret(&g, "n1", "ns", "rbd-s"),
            allowed(),
            "claimRef namespace by default"
        );
        assert_eq!(get_secret(&g, "n1", "azns", "az"), allowed());
        assert_eq!(get_secret(&g, "n1", "ns", "az"), no_rel("n1"));
        assert_eq!(get_secret(&g, "n1", "cephns", "ceph"), allowed());
        assert_eq!(
            get_cluster(&g, "n1", "", "persistentvolumes", "pv4"),
            no_rel("n1")
        );
    }

    #[test]
    fn volume_attachments() {
        let mut g = Graph::default();
        let va = json!({"metadata": {"name": "va1"}, "spec": {"nodeName": "n1", "attacher": "a", "source": {}}});
        g.apply("storage.k8s.io", "volumeattachments", None, Some(&va));
        assert_eq!(
            get_cluster(&g, "n1", "storage.k8s.io", "volumeattachments", "va1"),
            allowed()
        );
        assert_eq!(
            get_cluster(&g, "n2", "storage.k8s.io", "volumeattachments", "va1"),
            no_rel("n2")
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra(
                    "list",
                    "storage.k8s.io",
                    "volumeattachments",
                    None,
                    None,
                    None
                )
            ),
            no("can only get individual resources of this type")
        );
        let moved = json!({"metadata": {"name": "va1"}, "spec": {"nodeName": "n2"}});
        g.apply(
            "storage.k8s.io",
            "volumeattachments",
            Some(&va),
            Some(&moved),
        );
        assert_eq!(
            get_cluster(&g, "n1", "storage.k8s.io", "volumeattachments", "va1"),
            no_rel("n1")
        );
        assert_eq!(
            get_cluster(&g, "n2", "storage.k8s.io", "volumeattachments", "va1"),
            allowed()
        );
        g.apply("storage.k8s.io", "volumeattachments", Some(&moved), None);
        assert_eq!(
            get_cluster(&g, "n2", "storage.k8s.io", "volumeattachments", "va1"),
            no_rel("n2")
        );
    }

    #[test]
    fn resource_claims() {
        let spec = json!({"resourceClaims": [
            {"name": "direct", "resourceClaimName": "shared-claim"},
            {"name": "tmpl", "resourceClaimTemplateName": "t"},
            {"name": "unneeded", "resourceClaimTemplateName": "t"},
        ]});
        let p = pod_json("ns", "p", "n1", spec.clone());
        let mut g = graph_with(std::slice::from_ref(&p));
        let claim = |g: &Graph, verb, name| {
            check(
                g,
                "n1",
                ra(
                    verb,
                    "resource.k8s.io",
                    "resourceclaims",
                    None,
                    Some("ns"),
                    Some(name),
                ),
            )
        };
        assert_eq!(claim(&g, "get", "shared-claim"), allowed());
        assert_eq!(
            claim(&g, "get", "p-tmpl-abc"),
            no_rel("n1"),
            "not created yet"
        );
        // The claim controller records the generated names in the status.
        let mut with_status = pod_json("ns", "p", "n1", spec);
        with_status["status"] = json!({"resourceClaimStatuses": [
            {"name": "tmpl", "resourceClaimName": "p-tmpl-abc"},
            {"name": "unneeded"},
        ]});
        g.apply("", "pods", Some(&p), Some(&with_status));
        assert_eq!(claim(&g, "get", "p-tmpl-abc"), allowed());
        assert_eq!(
            claim(&g, "list", "p-tmpl-abc"),
            no("can only get individual resources of this type")
        );
        assert_eq!(
            check(
                &g,
                "n2",
                ra(
                    "get",
                    "resource.k8s.io",
                    "resourceclaims",
                    None,
                    Some("ns"),
                    Some("p-tmpl-abc")
                )
            ),
            no_rel("n2")
        );
    }

    #[test]
    fn service_account_tokens() {
        let g = graph_with(&[pod_json("ns", "p", "n1", full_spec())]);
        let sa = |node, verb, sub, name| {
            check(
                &g,
                node,
                ra(verb, "", "serviceaccounts", sub, Some("ns"), name),
            )
        };
        assert_eq!(sa("n1", "create", Some("token"), Some("sa1")), allowed());
        assert_eq!(sa("n2", "create", Some("token"), Some("sa1")), no_rel("n2"));
        assert_eq!(
            sa("n1", "create", Some("token"), Some("other")),
            no_rel("n1")
        );
        assert_eq!(
            sa("n1", "get", None, Some("sa1")),
            no("can only create tokens for individual service accounts"),
            "not the static rules"
        );
        assert_eq!(
            sa("n1", "create", Some("token"), None),
            no("can only create tokens for individual service accounts")
        );
        assert_eq!(
            sa("n1", "create", None, Some("sa1")),
            no("can only create token subresource of serviceaccount")
        );
    }

    #[test]
    fn leases() {
        let g = Graph::default();
        let lease = |node, verb, ns, name| {
            check(
                &g,
                node,
                ra(verb, "coordination.k8s.io", "leases", None, ns, name),
            )
        };
        for verb in ["get", "update", "patch", "delete"] {
            assert_eq!(
                lease("n1", verb, Some("kube-node-lease"), Some("n1")),
                allowed(),
                "{verb}"
            );
            assert_eq!(
                lease("n1", verb, Some("kube-node-lease"), Some("n2")),
                no("can only access node lease with the same name as the requesting node")
            );
        }
        assert_eq!(
            lease("n1", "create", Some("kube-node-lease"), None),
            allowed()
        );
        assert_eq!(
            lease("n1", "get", Some("default"), Some("n1")),
            no("can only access leases in the \"kube-node-lease\" system namespace")
        );
        assert_eq!(
            lease("n1", "list", Some("kube-node-lease"), None),
            no("can only get, create, update, patch, or delete a node lease")
        );
    }

    #[test]
    fn csi_nodes() {
        let g = Graph::default();
        let csi = |verb, sub, name| {
            check(
                &g,
                "n1",
                ra(verb, "storage.k8s.io", "csinodes", sub, None, name),
            )
        };
        assert_eq!(csi("get", None, Some("n1")), allowed());
        assert_eq!(csi("patch", None, Some("n1")), allowed());
        assert_eq!(csi("create", None, None), allowed());
        assert_eq!(
            csi("get", None, Some("n2")),
            no("can only access CSINode with the same name as the requesting node")
        );
        assert_eq!(
            csi("get", Some("status"), Some("n1")),
            no("cannot authorize CSINode subresources")
        );
        assert_eq!(
            csi("watch", None, None),
            no("can only get, create, update, patch, or delete a CSINode")
        );
    }

    #[test]
    fn resource_slices() {
        let mut g = Graph::default();
        let slice = json!({"metadata": {"name": "s1"}, "spec": {"nodeName": "n1", "driver": "d"}});
        g.apply("resource.k8s.io", "resourceslices", None, Some(&slice));
        let rs = |g: &Graph, node, verb, sub, name| {
            check(
                g,
                node,
                ra(verb, "resource.k8s.io", "resourceslices", sub, None, name),
            )
        };
        assert_eq!(rs(&g, "n1", "get", None, Some("s1")), allowed());
        assert_eq!(rs(&g, "n1", "delete", None, Some("s1")), allowed());
        assert_eq!(rs(&g, "n2", "update", None, Some("s1")), no_rel("n2"));
        assert_eq!(rs(&g, "n2", "create", None, None), allowed());
        assert_eq!(
            rs(&g, "n1", "list", None, None),
            no("can only list/watch/deletecollection resourceslices with nodeName field selector")
        );
        assert_eq!(
            rs(&g, "n1", "get", Some("status"), Some("s1")),
            no("cannot authorize ResourceSlice subresources")
        );
        assert_eq!(
            rs(&g, "n1", "escalate", None, Some("s1")),
            no("only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection")
        );
        let list = ra(
            "watch",
            "resource.k8s.io",
            "resourceslices",
            None,
            None,
            None,
        );
        let with = |node, sel| {
            authorize_with_field_selector(&g, &rules(), &node_user(node), &list, Some(sel))
        };
        assert_eq!(with("n1", "spec.nodeName=n1"), allowed());
        assert_eq!(with("n1", "spec.driver=d,spec.nodeName==n1"), allowed());
        assert_eq!(
            with("n2", "spec.nodeName=n1"),
            no("can only list/watch/deletecollection resourceslices with nodeName field selector")
        );
        // Updates do not move a slice (its node is immutable); delete drops it.
        let odd = json!({"metadata": {"name": "s1"}, "spec": {"nodeName": "n2"}});
        g.apply(
            "resource.k8s.io",
            "resourceslices",
            Some(&slice),
            Some(&odd),
        );
        assert_eq!(rs(&g, "n1", "get", None, Some("s1")), allowed());
        g.apply("resource.k8s.io", "resourceslices", Some(&slice), None);
        assert_eq!(rs(&g, "n1", "get", None, Some("s1")), no_rel("n1"));
    }

    #[test]
    fn node_objects() {
        let g = Graph::default();
        let n = |verb, sub, name| check(&g, "n1", ra(verb, "", "nodes", sub, None, name));
        for verb in ["create", "update", "patch"] {
            assert_eq!(n(verb, None, Some("n1")), allowed());
        }
        assert_eq!(
            n("get", None, Some("n1")),
            allowed(),
            "even before the node exists"
        );
        assert_eq!(n("watch", None, Some("n1")), allowed());
        assert_eq!(
            n("list", None, None),
            no("node 'n1' cannot read all nodes, only its own Node object")
        );
        assert_eq!(
            n("get", None, Some("n2")),
            no("node 'n1' cannot read 'n2', only its own Node object")
        );
        assert_eq!(n("patch", Some("status"), Some("n1")), allowed());
        assert_eq!(n("get", Some("status"), Some("n1")), no(""));
        assert_eq!(
            n("delete", None, Some("n1")),
            no(""),
            "the static rules are not consulted"
        );
    }

    #[test]
    fn pods() {
        let g = graph_with(&[pod_json("ns", "p", "n1", json!({}))]);
        let p =
            |node, verb, sub, name| check(&g, node, ra(verb, "", "pods", sub, Some("ns"), name));
        assert_eq!(p("n1", "get", None, Some("p")), allowed());
        assert_eq!(p("n2", "get", None, Some("p")), no_rel("n2"));
        assert_eq!(p("n1", "get", None, Some("missing")), no_rel("n1"));
        assert_eq!(
            p("n1", "watch", None, Some("p")),
            allowed(),
            "one of its pods by name"
        );
        assert_eq!(
            p("n1", "list", None, None),
            no("can only list/watch pods with spec.nodeName field selector")
        );
        assert_eq!(p("n1", "create", None, None), allowed());
        assert_eq!(p("n1", "delete", None, Some("p")), allowed());
        assert_eq!(p("n1", "update", Some("status"), Some("p")), allowed());
        assert_eq!(p("n1", "create", Some("eviction"), Some("p")), allowed());
        assert_eq!(p("n1", "update", None, Some("p")), no(""));
        assert_eq!(p("n1", "get", Some("log"), Some("p")), no(""));
        let list = ra("list", "", "pods", None, None, None);
        let with = |node, sel| {
            authorize_with_field_selector(&g, &rules(), &node_user(node), &list, Some(sel))
        };
        assert_eq!(with("n1", "spec.nodeName=n1"), allowed());
        assert_eq!(
            with("n1", "metadata.namespace=x,spec.nodeName=n1"),
            allowed()
        );
        assert_eq!(
            with("n2", "spec.nodeName=n1"),
            no("can only list/watch pods with spec.nodeName field selector")
        );
        assert_eq!(
            with("n1", "spec.nodeName!=n1"),
            no("can only list/watch pods with spec.nodeName field selector")
        );
        assert_eq!(
            with("n1", "spec.nodeName=n1,bad"),
            no("can only list/watch pods with spec.nodeName field selector")
        );
    }

    #[test]
    fn static_rules_for_everything_else() {
        let g = Graph::default();
        assert_eq!(
            check(&g, "n1", ra("create", "", "events", None, Some("ns"), None)),
            allowed()
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra(
                    "patch",
                    "events.k8s.io",
                    "events",
                    None,
                    Some("ns"),
                    Some("e")
                )
            ),
            allowed()
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra("delete", "", "events", None, Some("ns"), Some("e"))
            ),
            no("")
        );
        assert_eq!(
            check(&g, "n1", ra("list", "", "services", None, None, None)),
            allowed()
        );
        assert_eq!(
            check(
                &g,
                "n1",
                ra("get", "apps", "deployments", None, Some("ns"), Some("d"))
            ),
            no("")
        );
        // Same resource name in another group is not the special case.
        assert_eq!(
            check(
                &g,
                "n1",
                ra("get", "example.com", "secrets", None, Some("ns"), Some("s"))
            ),
            no("")
        );
        let health = Attributes::NonResource {
            path: "/healthz",
            verb: "get".into(),
        };
        assert_eq!(check(&g, "n1", health), allowed());
        let metrics = Attributes::NonResource {
            path: "/metrics",
            verb: "get".into(),
        };
        assert_eq!(check(&g, "n1", metrics), no(""));
        // The special cases are never decided by the rules, even when they would allow.
        assert_eq!(get_secret(&g, "n1", "ns", "anything"), no_rel("n1"));
    }

    #[test]
    fn reset_drops_one_resource() {
        let mut g = graph_with(&[pod_json("ns", "p", "n1", full_spec())]);
        let va = json!({"metadata": {"name": "va1"}, "spec": {"nodeName": "n1"}});
        g.apply("storage.k8s.io", "volumeattachments", None, Some(&va));
        let pv = json!({"metadata": {"name": "pv1"}, "spec": {"claimRef": {"namespace": "ns", "name": "claim1"}}});
        g.apply("", "persistentvolumes", None, Some(&pv));
        g.reset("", "pods");
        assert_eq!(get_secret(&g, "n1", "ns", "vol-s"), no_rel("n1"));
        assert_eq!(
            get_cluster(&g, "n1", "", "persistentvolumes", "pv1"),
            no_rel("n1")
        );
        assert_eq!(
            get_cluster(&g, "n1", "storage.k8s.io", "volumeattachments", "va1"),
            allowed()
        );
        // Re-list.
        g.apply(
            "",
            "pods",
            None,
            Some(&pod_json("ns", "p", "n1", full_spec())),
        );
        assert_eq!(
            get_cluster(&g, "n1", "", "persistentvolumes", "pv1"),
            allowed()
        );
        g.reset("storage.k8s.io", "volumeattachments");
        g.reset("", "persistentvolumes");
        g.reset("", "unwatched");
        assert_eq!(
            get_cluster(&g, "n1", "storage.k8s.io", "volumeattachments", "va1"),
            no_rel("n1")
        );
        assert_eq!(
            get_cluster(&g, "n1", "", "persistentvolumes", "pv1"),
            no_rel("n1")
        );
        assert_eq!(get_secret(&g, "n1", "ns", "vol-s"), allowed());
    }

    #[test]
    fn odd_input_does_not_panic() {
        let mut g = Graph::default();
        let odd = [
            json!(null),
            json!(42),
            json!("pod"),
            json!([]),
            json!({"metadata": null, "spec": {"nodeName": 7}}),
            json!({"metadata": {"name": "x"}, "spec": {"nodeName": "n1", "volumes": "nope", "containers": [1, null, {"env": [null, {"valueFrom": 3}]}]}}),
            json!({"metadata": {"name": "y"}, "spec": {"nodeName": "n1", "resourceClaims": [{"name": "a", "resourceClaimName": 5}], "volumes": [null, {"secret": null, "configMap": {"name": null}}]}}),
            json!({"metadata": {"name": "pv"}, "spec": {"claimRef": 3, "csi": {"nodePublishSecretRef": []}}}),
        ];
        for (group, resource) in WATCHED
            .iter()
            .chain(&[("resource.k8s.io", "resourceslices"), ("x", "y")])
        {
            for a in &odd {
                for b in &odd {
                    g.apply(group, resource, Some(a), Some(b));
                    g.apply(group, resource, None, Some(b));
                    g.apply(group, resource, Some(a), None);
                }
            }
            g.apply(group, resource, None, None);
            g.reset(group, resource);
        }
        g.reset("", "pods");
        g.reset("", "persistentvolumes");
        assert!(g.vertices.is_empty(), "{:?}", g.vertices);
    }

    #[test]
    fn field_selector_parsing() {
        let r = |f: &str, equals, v: &str| Requirement {
            field: f.into(),
            equals,
            value: v.into(),
        };
        assert_eq!(parse_field_selector(""), vec![]);
        assert_eq!(
            parse_field_selector("a=b,c==d,e!=f,,"),
            vec![r("a", true, "b"), r("c", true, "d"), r("e", false, "f")]
        );
        assert_eq!(
            parse_field_selector(r"a=x\,y\=z\\"),
            vec![r("a", true, r"x,y=z\")]
        );
        assert_eq!(parse_field_selector("a=b=c"), vec![]);
        assert_eq!(parse_field_selector(r"a=\q"), vec![]);
        assert_eq!(parse_field_selector("noop"), vec![]);
        assert_eq!(parse_field_selector("é=ü"), vec![r("é", true, "ü")]);
    }

    #[test]
    fn go_quoting() {
        assert_eq!(go_quote("system:node:"), "\"system:node:\"");
        assert_eq!(
            go_quote("a\"b\\c\n\u{1}\u{7f}é\u{200b}"),
            "\"a\\\"b\\\\c\\n\\x01\\x7fé\\u200b\""
        );
    }
}
