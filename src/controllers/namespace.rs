//! Namespace deletion: a namespace with a deletionTimestamp is emptied resource by resource;
//! when nothing is left, the `kubernetes` finalizer is removed from `spec.finalizers` and the
//! store removes the namespace.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::registry::store::{
    self, DeleteOptions, ListOptions, Part, ReadAt, Scope, Store, WriteOptions,
};
use crate::registry::Resource;
use std::sync::Arc;

/// Runs until the task is dropped.
pub async fn run(store: Store, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    loop {
        tick.tick().await;
        if !store.kv().is_leader() {
            continue;
        }
        if let Err(e) = pass(&store).await {
            tracing::debug!("namespace controller: {e}");
        }
    }
}

/// Namespaced resources, one entry per stored group/resource.
fn namespaced_resources(store: &Store) -> Vec<Arc<Resource>> {
    let mut seen = HashSet::new();
    store
        .registry()
        .snapshot()
        .all()
        .iter()
        .filter(|r| r.namespaced && seen.insert((r.group.clone(), r.resource.clone())))
        .cloned()
        .collect()
}

async fn pass(store: &Store) -> Result<(), crate::meta::status::Status> {
    let ns_info = store.registry().builtin("", "v1", "namespaces");
    let all = store
        .list(
            Scope {
                info: &ns_info,
                namespace: None,
            },
            &ListOptions {
                read_at: Some(ReadAt::Any),
                ..Default::default()
            },
        )
        .await?;
    for ns in all.items {
        if store::meta_str(&ns, "deletionTimestamp").is_empty() {
            continue;
        }
        let name = store::meta_str(&ns, "name").to_string();
        let now = crate::server::handlers::now_rfc3339();
        let mut remaining = 0usize;
        for info in namespaced_resources(store) {
            let scope = Scope {
                info: &info,
                namespace: Some(&name),
            };
            let opts = DeleteOptions {
                write: WriteOptions {
                    now: now.clone(),
                    ..Default::default()
                },
                propagation_policy: Some("Background".into()),
                ..Default::default()
            };
            let (items, _) = store
                .delete_collection(
                    scope,
                    &ListOptions {
                        read_at: Some(ReadAt::Any),
                        ..Default::default()
                    },
                    &opts,
                )
                .await?;
            // Objects with finalizers stay until their owners remove them; pods on a node
            // stay for their grace period, until the kubelet removes them.
            remaining += items
                .iter()
                .filter(|o| {
                    !store::finalizers(o).is_empty()
                        || store::meta(o)
                            .get("deletionGracePeriodSeconds")
                            .and_then(Value::as_i64)
                            .is_some_and(|g| g > 0)
                })
                .count();
        }
        if remaining > 0 {
            continue;
        }
        let write = WriteOptions {
            now,
            ..Default::default()
        };
        let res = store
            .update_with(
                Scope {
                    info: &ns_info,
                    namespace: None,
                },
                &name,
                Part::Finalize,
                &write,
                |cur| {
                    let mut next = cur.clone();
                    let fins: Vec<Value> = cur
                        .pointer("/spec/finalizers")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter(|f| f.as_str() != Some("kubernetes"))
                                .cloned()
                                .collect()
                        })
                        .unwrap_or_default();
                    next["spec"] = json!({ "finalizers": fins });
                    Ok(next)
                },
            )
            .await;
        if let Err(e) = res {
            if e.code != 404 {
                return Err(e);
            }
        }
    }
    Ok(())
}
