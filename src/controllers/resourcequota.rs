//! The `resourcequota` loop (kube-controller-manager's resource quota controller), leader
//! only: every ResourceQuota's `status.hard` follows `spec.hard`, and `status.used` is
//! recalculated from the objects in its namespace — at once for a quota whose hard limits
//! changed (a new quota is usable within a tick), and every few seconds for all (so deletes
//! give usage back). The status write is conditional on the resourceVersion the calculation
//! started from: a write that charged the quota meanwhile wins, and the next pass recounts.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::meta::status::Status;
use crate::registry::quota::{self, Usage};
use crate::registry::store::{ListOptions, Part, ReadAt, Scope, Store, WriteOptions};
use crate::registry::Resource;

/// How often every quota is recounted.
const FULL_EVERY: Duration = Duration::from_secs(5);

/// Runs until the task is dropped.
pub async fn run(store: Store, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    let mut last_full = Instant::now() - FULL_EVERY;
    loop {
        tick.tick().await;
        if !store.kv().is_leader() {
            continue;
        }
        let full = last_full.elapsed() >= FULL_EVERY;
        if full {
            last_full = Instant::now();
        }
        if let Err(e) = pass(&store, full).await {
            tracing::debug!("resourcequota controller: {e}");
        }
    }
}

/// One stored entry per namespaced group/resource.
fn resources(store: &Store) -> Vec<Arc<Resource>> {
    let mut seen = HashSet::new();
    store
        .registry()
        .snapshot()
        .all()
        .iter()
        .filter(|r| {
            r.namespaced && r.preferred && seen.insert((r.group.clone(), r.resource.clone()))
        })
        .cloned()
        .collect()
}

async fn pass(store: &Store, full: bool) -> Result<(), Status> {
    let info = store.registry().builtin("", "v1", "resourcequotas");
    let all = store
        .list(
            Scope {
                info: &info,
                namespace: None,
            },
            &ListOptions {
                read_at: Some(ReadAt::Latest),
                ..Default::default()
            },
        )
        .await?;
    for q in all.items {
        let spec_hard = q.pointer("/spec/hard").cloned().unwrap_or(json!({}));
        let stale =
            q.pointer("/status/hard") != Some(&spec_hard) || q.pointer("/status/used").is_none();
        if !(full || stale) {
            continue;
        }
        if let Err(e) = recount(store, &q, &spec_hard).await {
            tracing::debug!("resourcequota: {e}");
        }
    }
    Ok(())
}

async fn recount(store: &Store, q: &Value, spec_hard: &Value) -> Result<(), Status> {
    let ns = q
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let name = q
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let rv = q
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let hard = quota::list(Some(spec_hard));
    let mut used: Usage = hard
        .keys()
        .map(|k| {
            (
                k.clone(),
                crate::registry::builtin::core::quantity::Quantity::zero(),
            )
        })
        .collect();
    for r in resources(store) {
        let eval = r.strategy.quota();
        let names: Vec<String> = hard
            .keys()
            .filter(|n| quota::matches_name(&r.group, &r.resource, eval, n))
            .cloned()
            .collect();
        if names.is_empty() {
            continue;
        }
        let items = store
            .list(
                Scope {
                    info: &r,
                    namespace: Some(&ns),
                },
                &ListOptions {
                    read_at: Some(ReadAt::Any),
                    ..Default::default()
                },
            )
            .await?
            .items;
        for o in items {
            if !quota::quota_matches(q, eval, &o) {
                continue;
            }
            let u = quota::usage(&r.group, &r.resource, eval, &o);
            let masked: Usage = u.into_iter().filter(|(k, _)| names.contains(k)).collect();
            used = quota::add(&used, &masked);
        }
    }
    let status = json!({"hard": spec_hard, "used": quota::to_json(&used)});
    if q.get("status") == Some(&status) {
        return Ok(());
    }
    let scope = Scope {
        info: &store.registry().builtin("", "v1", "resourcequotas"),
        namespace: Some(&ns),
    };
    let opts = WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        ..Default::default()
    };
    let mut want = q.clone();
    want["status"] = status;
    want["metadata"]["resourceVersion"] = json!(rv);
    match store
        .update_with(scope, &name, Part::Status, &opts, |_| Ok(want.clone()))
        .await
    {
        Ok(_) => Ok(()),
        // charged meanwhile: the next pass recounts
        Err(s) if s.code == 409 || s.code == 404 => Ok(()),
        Err(s) => Err(s),
    }
}
