//! The bootstrap-token loops of the seed, leader-only and off unless `--controllers` names
//! them (as kube-controller-manager's): `tokencleaner` deletes bootstrap-token Secrets whose
//! `expiration` has passed; `bootstrapsigner` keeps `jws-kubeconfig-<id>` signatures in the
//! `kube-public/cluster-info` ConfigMap for every unexpired token with
//! `usage-bootstrap-signing: "true"` (and drops the others).

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::authn::bootstrap;
use crate::registry::store::{
    self, DeleteOptions, ListOptions, Part, ReadAt, Scope, Store, WriteOptions,
};

/// Runs until the task is dropped.
pub async fn run(store: Store, interval: Duration, cleaner: bool, signer: bool) {
    let mut tick = tokio::time::interval(interval);
    loop {
        tick.tick().await;
        if !store.kv().is_leader() {
            continue;
        }
        if let Err(e) = pass(&store, cleaner, signer).await {
            tracing::debug!("bootstrap-token controllers: {e}");
        }
    }
}

fn write_options() -> WriteOptions {
    WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        field_manager: Some("kube-controller-manager".into()),
        ..Default::default()
    }
}

async fn pass(
    store: &Store,
    cleaner: bool,
    signer: bool,
) -> Result<(), crate::meta::status::Status> {
    let secrets = store.registry().builtin("", "v1", "secrets");
    let scope = Scope {
        info: &secrets,
        namespace: Some(bootstrap::NAMESPACE),
    };
    let list = store
        .list(
            scope,
            &ListOptions {
                read_at: Some(ReadAt::Any),
                ..Default::default()
            },
        )
        .await?;
    let now = jiff::Timestamp::now();
    let mut signing: Vec<(String, String)> = Vec::new();
    for s in list.items {
        if s.get("type").and_then(Value::as_str) != Some(bootstrap::SECRET_TYPE) {
            continue;
        }
        let name = store::meta_str(&s, "name").to_string();
        if bootstrap::expired(&s, now) {
            if cleaner {
                let opts = DeleteOptions {
                    write: write_options(),
                    precondition_uid: Some(store::meta_str(&s, "uid").to_string()),
                    ..Default::default()
                };
                match store.delete(scope, &name, &opts).await {
                    Ok(_) => tracing::info!("deleted expired bootstrap token {name}"),
                    Err(e) if e.code == 404 || e.code == 409 => {}
                    Err(e) => return Err(e),
                }
            }
            continue;
        }
        let id = bootstrap::data(&s, "token-id").unwrap_or_default();
        let secret = bootstrap::data(&s, "token-secret").unwrap_or_default();
        let signs = bootstrap::data(&s, "usage-bootstrap-signing").as_deref() == Some("true");
        if signs && name == format!("{}{id}", bootstrap::SECRET_PREFIX) && !secret.is_empty() {
            signing.push((id, secret));
        }
    }
    if signer {
        sign_cluster_info(store, &signing).await?;
    }
    Ok(())
}

/// Brings `cluster-info`'s `jws-kubeconfig-*` keys in line with the signing tokens.
async fn sign_cluster_info(
    store: &Store,
    tokens: &[(String, String)],
) -> Result<(), crate::meta::status::Status> {
    let cms = store.registry().builtin("", "v1", "configmaps");
    let scope = Scope {
        info: &cms,
        namespace: Some("kube-public"),
    };
    let Ok(cm) = store.get(scope, "cluster-info", ReadAt::Any).await else {
        return Ok(());
    };
    let data = cm
        .get("data")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let Some(kubeconfig) = data.get("kubeconfig").and_then(Value::as_str) else {
        return Ok(());
    };
    let mut want: Map<String, Value> = data
        .iter()
        .filter(|(k, _)| !k.starts_with("jws-kubeconfig-"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (id, secret) in tokens {
        want.insert(
            format!("jws-kubeconfig-{id}"),
            json!(bootstrap::detached_jws(kubeconfig, id, secret)),
        );
    }
    if want == data {
        return Ok(());
    }
    let res = store
        .update_with(scope, "cluster-info", Part::Main, &write_options(), |cur| {
            let mut next = cur.clone();
            next["data"] = Value::Object(want.clone());
            if let Some(m) = next.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("resourceVersion");
            }
            Ok(next)
        })
        .await;
    match res {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}
