//! `NodeRestriction`: what a kubelet (a `system:node:<name>` user in `system:nodes`) may write,
//! on top of the Node authorizer. Its own Node only (created without `configSource` or
//! forbidden labels; updated without changing taints, `configSource` or labels outside the
//! kubelet's set, and never `node-restriction.kubernetes.io/` ones); mirror pods bound to and
//! controlled by itself, referring to no service account, secret, configmap, cluster trust
//! bundle or claim; status updates, evictions and deletes of pods bound to itself only; PVC
//! status changes of capacity and conditions only; service account tokens bound to its own
//! pods, for at most one audience that the pod uses (ServiceAccountNodeAudienceRestriction,
//! beta and on in v1.33: a projected token volume's audience, or a token request of the
//! CSIDriver of one of its volumes, inline, through a claim or an ephemeral claim); its own
//! lease in `kube-node-lease` and its own CSINode. kube's texts.
//!
//! Not done: a PVC status refusal lists the changed fields, not go-cmp's diff.

use serde_json::{Map, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::authz::node::node_identity;
use crate::meta::status::Status;
use crate::registry::object::meta;

pub struct NodeRestriction;

const MIRROR: &str = "kubernetes.io/config.mirror";
const RESTRICTED: &str = "node-restriction.kubernetes.io";

/// `kubeletapis` label keys a kubelet may set on its Node.
const KUBELET_LABELS: &[&str] = &[
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "kubernetes.io/os",
    "kubernetes.io/arch",
];
const KUBELET_LABEL_NAMESPACES: &[&str] = &["kubelet.kubernetes.io", "node.kubernetes.io"];

fn in_namespace(ns: &str, domain: &str) -> bool {
    ns == domain || ns.strip_suffix(domain).is_some_and(|p| p.ends_with('.'))
}

fn label_namespace(key: &str) -> &str {
    key.split_once('/').map(|(p, _)| p).unwrap_or("")
}

fn is_kubelet_label(key: &str) -> bool {
    KUBELET_LABELS.contains(&key)
        || KUBELET_LABEL_NAMESPACES
            .iter()
            .any(|d| in_namespace(label_namespace(key), d))
}

fn labels(obj: Option<&Value>) -> Map<String, Value> {
    obj.and_then(|o| meta(o).get("labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The sorted keys a kubelet may not add, remove or change among those that differ.
fn forbidden_labels(new: &Map<String, Value>, old: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = new
        .iter()
        .filter(|(k, v)| old.get(*k) != Some(v))
        .chain(old.iter().filter(|(k, v)| new.get(*k) != Some(v)))
        .map(|(k, _)| k.clone())
        .filter(|k| {
            let ns = label_namespace(k);
            let kubernetes = in_namespace(ns, "kubernetes.io") || in_namespace(ns, "k8s.io");
            in_namespace(ns, RESTRICTED) || (kubernetes && !is_kubelet_label(k))
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

fn spec_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("spec")
        .and_then(|s| s.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn present(v: Option<&Value>) -> bool {
    v.is_some_and(|v| !v.is_null())
}

/// Every container (init, regular, ephemeral) of a pod spec.
fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |k| spec.get(k).and_then(Value::as_array).into_iter().flatten())
}

/// `VisitPodSecretNames` finds something.
fn references_secrets(spec: &Value) -> bool {
    if spec
        .get("imagePullSecrets")
        .and_then(Value::as_array)
        .is_some_and(|l| !l.is_empty())
    {
        return true;
    }
    let env = containers(spec).any(|c| {
        let env = c.get("env").and_then(Value::as_array).into_iter().flatten();
        let from = c
            .get("envFrom")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        env.clone()
            .any(|e| present(e.pointer("/valueFrom/secretKeyRef")))
            || from.clone().any(|e| present(e.get("secretRef")))
    });
    env || volumes(spec).any(|v| {
        present(v.get("secret"))
            || present(v.pointer("/azureFile"))
            || [
                "cephfs",
                "cinder",
                "flexVolume",
                "rbd",
                "scaleIO",
                "iscsi",
                "storageos",
            ]
            .iter()
            .any(|s| present(v.get(*s).and_then(|s| s.get("secretRef"))))
            || present(v.pointer("/csi/nodePublishSecretRef"))
            || projected(v).any(|s| present(s.get("secret")))
    })
}

/// `VisitPodConfigmapNames` finds something.
fn references_configmaps(spec: &Value) -> bool {
    let env = containers(spec).any(|c| {
        let env = c.get("env").and_then(Value::as_array).into_iter().flatten();
        let from = c
            .get("envFrom")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        env.clone()
            .any(|e| present(e.pointer("/valueFrom/configMapKeyRef")))
            || from.clone().any(|e| present(e.get("configMapRef")))
    });
    env || volumes(spec)
        .any(|v| present(v.get("configMap")) || projected(v).any(|s| present(s.get("configMap"))))
}

fn volumes(spec: &Value) -> impl Iterator<Item = &Value> {
    spec.get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn projected(volume: &Value) -> impl Iterator<Item = &Value> {
    volume
        .pointer("/projected/sources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

impl NodeRestriction {
    async fn check(&self, node: &str, a: &Attributes, h: &Handle) -> Result<(), Status> {
        let r = &a.resource;
        let sub = a.subresource.as_str();
        match (r.group.as_str(), r.kind.as_str()) {
            ("", "Pod") => match sub {
                "" => self.pod(node, a, h).await,
                "status" => pod_status(node, a),
                "eviction" => self.eviction(node, a, h).await,
                _ => Err(a.forbidden(format!(
                    "unexpected pod subresource {sub:?}, only 'status' and 'eviction' are allowed"
                ))),
            },
            ("", "Node") => node_object(node, a),
            ("", "PersistentVolumeClaim") => match sub {
                "status" => pvc_status(node, a),
                _ => Err(a.forbidden("may only update PVC status")),
            },
            ("", "ServiceAccount") => self.token(node, a, h).await,
            ("coordination.k8s.io", "Lease") => {
                if a.namespace != "kube-node-lease" {
                    return Err(a.forbidden(
                        "can only access leases in the \"kube-node-lease\" system namespace",
                    ));
                }
                if a.name != node {
                    return Err(a.forbidden(
                        "can only access node lease with the same name as the requesting node",
                    ));
                }
                Ok(())
            }
            ("storage.k8s.io", "CSINode") => {
                if a.name != node {
                    return Err(a.forbidden(
                        "can only access CSINode with the same name as the requesting node",
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    async fn pod(&self, node: &str, a: &Attributes, h: &Handle) -> Result<(), Status> {
        match a.operation {
            Operation::Create => {}
            Operation::Delete => {
                let bound = a.old_object.as_ref().map(|p| spec_str(p, "nodeName"));
                if bound != Some(node) {
                    return Err(a.forbidden(format!(
                        "node {node:?} can only delete pods with spec.nodeName set to itself"
                    )));
                }
                return Ok(());
            }
            op => {
                return Err(a.forbidden(format!(
                "unexpected operation {:?}, node {node:?} can only create and delete mirror pods",
                op.as_str()
            )))
            }
        }
        let Some(pod) = &a.object else {
            return Ok(());
        };
        let annotated = meta(pod)
            .get("annotations")
            .and_then(|m| m.get(MIRROR))
            .is_some();
        if !annotated {
            return Err(a.forbidden(format!(
                "pod does not have {MIRROR:?} annotation, node {node:?} can only create mirror pods"
            )));
        }
        if spec_str(pod, "nodeName") != node {
            return Err(a.forbidden(format!(
                "node {node:?} can only create pods with spec.nodeName set to itself"
            )));
        }
        let owners = meta(pod)
            .get("ownerReferences")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let owner = match owners.as_slice() {
            [o] => o,
            [] => {
                return Err(a.forbidden(format!(
                    "node {node:?} can only create pods with an owner reference set to itself"
                )))
            }
            _ => {
                return Err(a.forbidden(format!(
                    "node {node:?} can only create pods with a single owner reference set to itself"
                )))
            }
        };
        let s = |k: &str| owner.get(k).and_then(Value::as_str).unwrap_or("");
        if s("apiVersion") != "v1" || s("kind") != "Node" || s("name") != node {
            return Err(a.forbidden(format!(
                "node {node:?} can only create pods with an owner reference set to itself"
            )));
        }
        if owner.get("controller").and_then(Value::as_bool) != Some(true) {
            return Err(a.forbidden(format!(
                "node {node:?} can only create pods with a controller owner reference set to itself"
            )));
        }
        if owner.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true) {
            return Err(a.forbidden(format!(
                "node {node:?} must not set blockOwnerDeletion on an owner reference"
            )));
        }
        let Some(n) = h.get("", "v1", "nodes", None, node).await else {
            return Err(Status::not_found(
                crate::meta::status::GroupResource {
                    group: "",
                    resource: "nodes",
                },
                node,
            ));
        };
        let uid = meta(&n).get("uid").and_then(Value::as_str).unwrap_or("");
        if s("uid") != uid {
            return Err(a.forbidden(format!(
                "node {node} UID mismatch: expected {} got {uid}",
                s("uid")
            )));
        }
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        if !spec_str(pod, "serviceAccountName").is_empty() {
            return Err(a.forbidden(format!(
                "node {node:?} can not create pods that reference a service account"
            )));
        }
        if references_secrets(spec) {
            return Err(a.forbidden(format!(
                "node {node:?} can not create pods that reference secrets"
            )));
        }
        if references_configmaps(spec) {
            return Err(a.forbidden(format!(
                "node {node:?} can not create pods that reference configmaps"
            )));
        }
        if volumes(spec).any(|v| projected(v).any(|s| present(s.get("clusterTrustBundle")))) {
            return Err(a.forbidden(format!(
                "node {node:?} can not create pods that reference clustertrustbundles"
            )));
        }
        if volumes(spec).any(|v| present(v.get("persistentVolumeClaim"))) {
            return Err(a.forbidden(format!(
                "node {node:?} can not create pods that reference persistentvolumeclaims"
            )));
        }
        Ok(())
    }

    async fn eviction(&self, node: &str, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Create {
            return Err(a.forbidden(format!("unexpected operation {}", a.operation.as_str())));
        }
        let mut pod_name = a.name.clone();
        if pod_name.is_empty() {
            pod_name = a
                .object
                .as_ref()
                .and_then(|e| meta(e).get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if pod_name.is_empty() {
                return Err(a.forbidden("could not determine pod from request data"));
            }
        }
        let ns = (!a.namespace.is_empty()).then_some(a.namespace.as_str());
        let Some(pod) = h.get("", "v1", "pods", ns, &pod_name).await else {
            return Err(Status::not_found(
                crate::meta::status::GroupResource {
                    group: "",
                    resource: "pods",
                },
                &pod_name,
            ));
        };
        if spec_str(&pod, "nodeName") != node {
            return Err(a.forbidden(format!(
                "node {node} can only evict pods with spec.nodeName set to itself"
            )));
        }
        Ok(())
    }

    async fn token(&self, node: &str, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Create || a.subresource.as_str() != "token" {
            return Ok(());
        }
        let Some(tr) = &a.object else {
            return Ok(());
        };
        let r = tr.pointer("/spec/boundObjectRef").filter(|r| !r.is_null());
        let s = |k: &str| {
            r.and_then(|r| r.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        if r.is_none() || s("apiVersion") != "v1" || s("kind") != "Pod" || s("name").is_empty() {
            return Err(a.forbidden("node requested token not bound to a pod"));
        }
        if s("uid").is_empty() {
            return Err(a.forbidden("node requested token with a pod binding without a uid"));
        }
        let ns = (!a.namespace.is_empty()).then_some(a.namespace.as_str());
        let Some(pod) = h.get("", "v1", "pods", ns, s("name")).await else {
            return Err(Status::not_found(
                crate::meta::status::GroupResource {
                    group: "",
                    resource: "pods",
                },
                s("name"),
            ));
        };
        if meta(&pod).get("uid").and_then(Value::as_str) != Some(s("uid")) {
            return Err(a.forbidden(format!(
                "the UID in the bound object reference ({}) does not match the UID in record. The object might have been deleted and then recreated",
                s("uid")
            )));
        }
        if spec_str(&pod, "nodeName") != node {
            return Err(
                a.forbidden("node requested token bound to a pod scheduled on a different node")
            );
        }
        let audiences: Vec<&str> = tr
            .pointer("/spec/audiences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        let audience = match audiences.as_slice() {
            [] => "",
            [one] => one,
            _ => return Err(a.forbidden("node may only request 0 or 1 audiences")),
        };
        if !pod_references_audience(h, &pod, audience).await {
            return Err(a.forbidden(format!(
                "audience {} not found in pod spec volume",
                crate::meta::field_error::go_quote(audience)
            )));
        }
        Ok(())
    }
}

/// kube's `podReferencesAudience`: a projected service account token of that audience, or a
/// volume whose CSI driver (inline, or the PersistentVolume of a claim or of an ephemeral
/// volume's claim `<pod>-<volume>`) requests tokens for it.
async fn pod_references_audience(h: &Handle, pod: &Value, audience: &str) -> bool {
    let ns = meta(pod)
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let pod_name = meta(pod).get("name").and_then(Value::as_str).unwrap_or("");
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    for v in volumes(spec) {
        let projected_match = projected(v).any(|s| {
            s.get("serviceAccountToken")
                .filter(|t| !t.is_null())
                .is_some_and(|t| {
                    t.get("audience").and_then(Value::as_str).unwrap_or("") == audience
                })
        });
        if projected_match {
            return true;
        }
        let claim = if present(v.pointer("/ephemeral/volumeClaimTemplate")) {
            let name = v.get("name").and_then(Value::as_str).unwrap_or("");
            Some(format!("{pod_name}-{name}"))
        } else if present(v.get("persistentVolumeClaim")) {
            v.pointer("/persistentVolumeClaim/claimName")
                .and_then(Value::as_str)
                .map(str::to_string)
        } else {
            None
        };
        let driver = match claim {
            Some(c) => csi_driver_of_claim(h, ns, &c).await,
            None => v
                .pointer("/csi/driver")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let Some(driver) = driver.filter(|d| !d.is_empty()) else {
            continue;
        };
        let Some(d) = h
            .get("storage.k8s.io", "v1", "csidrivers", None, &driver)
            .await
        else {
            continue;
        };
        let requested = d
            .pointer("/spec/tokenRequests")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|r| r.get("audience").and_then(Value::as_str).unwrap_or("") == audience);
        if requested {
            return true;
        }
    }
    false
}

/// `getCSIFromPVC`: claim → its PersistentVolume → the volume's CSI driver.
async fn csi_driver_of_claim(h: &Handle, ns: &str, claim: &str) -> Option<String> {
    let pvc = h
        .get("", "v1", "persistentvolumeclaims", Some(ns), claim)
        .await?;
    let pv_name = pvc.pointer("/spec/volumeName").and_then(Value::as_str)?;
    let pv = h.get("", "v1", "persistentvolumes", None, pv_name).await?;
    pv.pointer("/spec/csi/driver")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn pod_status(node: &str, a: &Attributes) -> Result<(), Status> {
    if a.operation != Operation::Update {
        return Err(a.forbidden(format!("unexpected operation {:?}", a.operation.as_str())));
    }
    let (Some(new), Some(old)) = (&a.object, &a.old_object) else {
        return Ok(());
    };
    if spec_str(old, "nodeName") != node {
        return Err(a.forbidden(format!(
            "node {node:?} can only update pod status for pods with spec.nodeName set to itself"
        )));
    }
    if labels(Some(new)) != labels(Some(old)) {
        return Err(a.forbidden(format!(
            "node {node:?} cannot update labels through pod status"
        )));
    }
    let claims = |p: &Value| -> Vec<(Value, Value)> {
        p.pointer("/status/resourceClaimStatuses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let f = |k: &str| c.get(k).cloned().unwrap_or(Value::Null);
                (f("name"), f("resourceClaimName"))
            })
            .collect()
    };
    if claims(new) != claims(old) {
        return Err(a.forbidden(format!(
            "node {node:?} cannot update resource claim statues"
        )));
    }
    Ok(())
}

fn node_object(node: &str, a: &Attributes) -> Result<(), Status> {
    if a.name != node {
        return Err(a.forbidden(format!(
            "node {node:?} is not allowed to modify node {:?}",
            a.name
        )));
    }
    let Some(new) = &a.object else {
        return Ok(());
    };
    let config_source = |n: &Value| {
        n.pointer("/spec/configSource")
            .filter(|v| !v.is_null())
            .cloned()
    };
    match a.operation {
        Operation::Create => {
            if config_source(new).is_some() {
                return Err(a.forbidden(format!(
                    "node {node:?} is not allowed to create pods with a non-nil configSource"
                )));
            }
            let bad = forbidden_labels(&labels(Some(new)), &Map::new());
            if !bad.is_empty() {
                return Err(a.forbidden(format!(
                    "node {node:?} is not allowed to set the following labels: {}",
                    bad.join(", ")
                )));
            }
        }
        Operation::Update => {
            let old = a.old_object.as_ref().unwrap_or(&Value::Null);
            if config_source(new).is_some() && config_source(new) != config_source(old) {
                return Err(a.forbidden(format!(
                    "node {node:?} is not allowed to update configSource to a new non-nil configSource"
                )));
            }
            let taints = |n: &Value| {
                n.pointer("/spec/taints")
                    .and_then(Value::as_array)
                    .filter(|l| !l.is_empty())
                    .cloned()
            };
            if taints(new) != taints(old) {
                return Err(a.forbidden(format!("node {node:?} is not allowed to modify taints")));
            }
            let bad = forbidden_labels(&labels(Some(new)), &labels(Some(old)));
            if !bad.is_empty() {
                return Err(a.forbidden(format!(
                    "is not allowed to modify labels: {}",
                    bad.join(", ")
                )));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The PVC status rule: nothing but `status.capacity`, `status.conditions` and the allocated
/// resources (RecoverVolumeExpansionFailure is on in v1.33) may change (kube's text says
/// `status.quantity`).
fn pvc_status(node: &str, a: &Attributes) -> Result<(), Status> {
    if a.operation != Operation::Update {
        return Err(a.forbidden(format!("unexpected operation {:?}", a.operation.as_str())));
    }
    let (Some(new), Some(old)) = (&a.object, &a.old_object) else {
        return Ok(());
    };
    let strip = |p: &Value| {
        let mut p = p.clone();
        if let Some(m) = p.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            m.remove("managedFields");
        }
        if let Some(s) = p.get_mut("status").and_then(Value::as_object_mut) {
            for f in [
                "capacity",
                "conditions",
                "allocatedResourceStatuses",
                "allocatedResources",
            ] {
                s.remove(f);
            }
        }
        p
    };
    let (n, o) = (strip(new), strip(old));
    if n != o {
        let mut changed: Vec<String> = Vec::new();
        for top in ["metadata", "spec", "status"] {
            let (x, y) = (n.get(top), o.get(top));
            if x != y {
                changed.push(top.to_string());
            }
        }
        return Err(a.forbidden(format!(
            "node {node:?} is not allowed to update fields other than status.quantity and status.conditions: {}",
            changed.join(", ")
        )));
    }
    Ok(())
}

#[async_trait::async_trait]
impl Plugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation == Operation::Delete {
            return Ok(());
        }
        match node_identity(&a.user) {
            None => Ok(()),
            Some("") => Err(a.forbidden(format!(
                "could not determine node from user {:?}",
                a.user.name
            ))),
            Some(node) => self.check(node, a, h).await,
        }
    }

    /// Deletes pass only the validating phase here (kube's mutating phase sees them).
    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Delete {
            return Ok(());
        }
        match node_identity(&a.user) {
            None => Ok(()),
            Some("") => Err(a.forbidden(format!(
                "could not determine node from user {:?}",
                a.user.name
            ))),
            Some(node) => self.check(node, a, h).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubelet_labels() {
        let m = |v: Value| v.as_object().cloned().unwrap();
        let old = m(json!({"kubernetes.io/hostname": "n1", "a": "b"}));
        let new = m(json!({
            "kubernetes.io/hostname": "n2",
            "a": "c",
            "node.kubernetes.io/x": "1",
            "sub.kubelet.kubernetes.io/y": "1",
            "node-restriction.kubernetes.io/z": "1",
            "foo.node-restriction.kubernetes.io/z": "1",
            "example.k8s.io/w": "1",
            "kubernetes.io/role": "x",
        }));
        assert_eq!(
            forbidden_labels(&new, &old),
            vec![
                "example.k8s.io/w",
                "foo.node-restriction.kubernetes.io/z",
                "kubernetes.io/role",
                "node-restriction.kubernetes.io/z",
            ]
        );
        assert!(!in_namespace("xkubernetes.io", "kubernetes.io"));
    }
}
