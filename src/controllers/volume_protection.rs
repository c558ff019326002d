//! The volume protection loops of kube-controller-manager, the other half of the
//! StorageObjectInUseProtection admission plugin's finalizers: `pvc-protection` lets a
//! PersistentVolumeClaim being deleted go (removes `kubernetes.io/pvc-protection`) once no
//! scheduled, unfinished pod of its namespace uses it (a `persistentVolumeClaim` volume, or
//! the claim of an ephemeral volume, `<pod>-<volume>`); `pv-protection` lets a
//! PersistentVolume being deleted go (removes `kubernetes.io/pv-protection`) once it is not
//! Bound.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::meta::status::Status;
use crate::registry::object::{finalizers, meta_str, Part};
use crate::registry::store::{ListOptions, ReadAt, Scope, Store, WriteOptions};

const PVC_FINALIZER: &str = "kubernetes.io/pvc-protection";
const PV_FINALIZER: &str = "kubernetes.io/pv-protection";

/// Runs until the task is dropped; `pvc` and `pv` say which of the two loops are on.
pub async fn run(store: Store, interval: Duration, pvc: bool, pv: bool) {
    let mut tick = tokio::time::interval(interval);
    loop {
        tick.tick().await;
        if !store.kv().is_leader() {
            continue;
        }
        if pvc {
            if let Err(e) = claims(&store).await {
                tracing::debug!("pvc-protection: {}", e.message);
            }
        }
        if pv {
            if let Err(e) = volumes(&store).await {
                tracing::debug!("pv-protection: {}", e.message);
            }
        }
    }
}

async fn list(
    store: &Store,
    resource: &str,
    namespace: Option<&str>,
) -> Result<Vec<Value>, Status> {
    let info = store.registry().builtin("", "v1", resource);
    let opts = ListOptions {
        read_at: Some(ReadAt::Any),
        ..Default::default()
    };
    Ok(store
        .list(
            Scope {
                info: &info,
                namespace,
            },
            &opts,
        )
        .await?
        .items)
}

/// Objects being deleted that still carry `finalizer`.
fn held(items: Vec<Value>, finalizer: &str) -> Vec<Value> {
    items
        .into_iter()
        .filter(|o| {
            !meta_str(o, "deletionTimestamp").is_empty()
                && finalizers(o).iter().any(|f| f == finalizer)
        })
        .collect()
}

/// Whether `pod` uses claim `claim` (kube's `podUsesPVC`, with finished pods not counting).
fn uses(pod: &Value, claim: &str) -> bool {
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() || matches!(phase, "Succeeded" | "Failed") {
        return false;
    }
    let pod_name = meta_str(pod, "name");
    pod.pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|v| {
            let by_name = v
                .pointer("/persistentVolumeClaim/claimName")
                .and_then(Value::as_str)
                == Some(claim);
            let volume = v.get("name").and_then(Value::as_str).unwrap_or("");
            let ephemeral = v.get("ephemeral").is_some_and(|e| !e.is_null())
                && format!("{pod_name}-{volume}") == claim;
            by_name || ephemeral
        })
}

/// Removes `finalizer` from the named object (gone or changed meanwhile: next pass).
async fn release(
    store: &Store,
    resource: &str,
    namespace: Option<&str>,
    name: &str,
    finalizer: &str,
) {
    let info = store.registry().builtin("", "v1", resource);
    let write = WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        ..Default::default()
    };
    let res = store
        .update_with(
            Scope {
                info: &info,
                namespace,
            },
            name,
            Part::Main,
            &write,
            |cur| {
                let mut next = cur.clone();
                let kept: Vec<String> = finalizers(cur)
                    .into_iter()
                    .filter(|f| f != finalizer)
                    .collect();
                next["metadata"]["finalizers"] = json!(kept);
                Ok(next)
            },
        )
        .await;
    if let Err(e) = res {
        if e.code != 404 && e.code != 409 {
            tracing::debug!("{resource} {name}: releasing {finalizer}: {}", e.message);
        }
    }
}

async fn claims(store: &Store) -> Result<(), Status> {
    let mut by_ns: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for c in held(
        list(store, "persistentvolumeclaims", None).await?,
        PVC_FINALIZER,
    ) {
        by_ns
            .entry(meta_str(&c, "namespace").to_string())
            .or_default()
            .push(c);
    }
    for (ns, claims) in by_ns {
        let pods = list(store, "pods", Some(&ns)).await?;
        for c in claims {
            let name = meta_str(&c, "name");
            if !pods.iter().any(|p| uses(p, name)) {
                release(
                    store,
                    "persistentvolumeclaims",
                    Some(&ns),
                    name,
                    PVC_FINALIZER,
                )
                .await;
            }
        }
    }
    Ok(())
}

async fn volumes(store: &Store) -> Result<(), Status> {
    for v in held(list(store, "persistentvolumes", None).await?, PV_FINALIZER) {
        if v.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
            release(
                store,
                "persistentvolumes",
                None,
                meta_str(&v, "name"),
                PV_FINALIZER,
            )
            .await;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_using_claims() {
        let pod = |node: &str, phase: &str, vols: Value| json!({"metadata": {"name": "p"}, "spec": {"nodeName": node, "volumes": vols}, "status": {"phase": phase}});
        let by_name = json!([{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]);
        assert!(uses(&pod("n", "Running", by_name.clone()), "c"));
        assert!(!uses(&pod("n", "Running", by_name.clone()), "d"));
        assert!(
            !uses(&pod("", "Pending", by_name.clone()), "c"),
            "not scheduled"
        );
        assert!(!uses(&pod("n", "Succeeded", by_name), "c"), "finished");
        let eph = json!([{"name": "data", "ephemeral": {"volumeClaimTemplate": {}}}]);
        assert!(uses(&pod("n", "Running", eph), "p-data"));
    }
}
