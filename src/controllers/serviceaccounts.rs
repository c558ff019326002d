//! Two leader-only loops of kube-controller-manager that pods' service-account admission
//! relies on: `serviceaccount` (every active namespace has a `default` ServiceAccount) and
//! `root-ca-cert-publisher` (every active namespace has the ConfigMap `kube-root-ca.crt`
//! whose `ca.crt` is the cluster CA, put back when changed). Both follow namespaces from the
//! watch cache, so a new namespace gets them at once, and re-check every few seconds.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::registry::store::{self, Part, ReadAt, Scope, Store, WriteOptions};

/// What to keep in every namespace.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Loop {
    DefaultAccount,
    RootCa,
}

const DESCRIPTION_KEY: &str = "kubernetes.io/description";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

fn write() -> WriteOptions {
    WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        field_manager: Some("kube-controller-manager".into()),
        ..Default::default()
    }
}

/// Runs until the task is dropped; `ca_pem` is what `kube-root-ca.crt` holds.
pub async fn run(store: Store, cache: crate::watch::Cache, which: Loop, ca_pem: String) {
    let ns_info = store.registry().builtin("", "v1", "namespaces");
    let namespaces: super::ByName = Default::default();
    let changed = Arc::new(tokio::sync::Notify::new());
    let _follow = super::follow_by_name(cache, ns_info, namespaces.clone(), changed.clone());
    loop {
        let _ = tokio::time::timeout(Duration::from_secs(5), changed.notified()).await;
        if !store.kv().is_leader() {
            continue;
        }
        let names: Vec<String> = {
            let m = namespaces.lock().unwrap_or_else(|e| e.into_inner());
            m.values()
                .filter(|ns| {
                    store::meta_str(ns, "deletionTimestamp").is_empty()
                        && ns.pointer("/status/phase").and_then(Value::as_str)
                            != Some("Terminating")
                })
                .map(|ns| store::meta_str(ns, "name").to_string())
                .collect()
        };
        for ns in names {
            let res = match which {
                Loop::DefaultAccount => ensure_account(&store, &ns).await,
                Loop::RootCa => ensure_ca(&store, &ns, &ca_pem).await,
            };
            if let Err(e) = res {
                tracing::debug!("service-account controllers: {ns}: {e}");
            }
        }
    }
}

fn ok_or_conflict(
    r: Result<Value, crate::meta::status::Status>,
) -> Result<(), crate::meta::status::Status> {
    match r {
        Ok(_) => Ok(()),
        // Taken meanwhile, or the namespace is going away.
        Err(s) if s.code == 409 || s.code == 403 || s.code == 404 => Ok(()),
        Err(s) => Err(s),
    }
}

async fn ensure_account(store: &Store, ns: &str) -> Result<(), crate::meta::status::Status> {
    let info = store.registry().builtin("", "v1", "serviceaccounts");
    let scope = Scope {
        info: &info,
        namespace: Some(ns),
    };
    if store.get(scope, "default", ReadAt::Any).await.is_ok() {
        return Ok(());
    }
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}});
    ok_or_conflict(store.create(scope, sa, &write()).await)
}

async fn ensure_ca(store: &Store, ns: &str, ca: &str) -> Result<(), crate::meta::status::Status> {
    const NAME: &str = "kube-root-ca.crt";
    let info = store.registry().builtin("", "v1", "configmaps");
    let scope = Scope {
        info: &info,
        namespace: Some(ns),
    };
    match store.get(scope, NAME, ReadAt::Any).await {
        Ok(cm) => {
            if cm.pointer("/data/ca.crt").and_then(Value::as_str) == Some(ca)
                && cm
                    .get("data")
                    .and_then(Value::as_object)
                    .is_some_and(|d| d.len() == 1)
                && cm
                    .pointer("/metadata/annotations/kubernetes.io~1description")
                    .and_then(Value::as_str)
                    .is_some_and(|d| !d.is_empty())
            {
                return Ok(());
            }
            let res = store
                .update_with(scope, NAME, Part::Main, &write(), |cur| {
                    let mut next = cur.clone();
                    next["data"] = json!({"ca.crt": ca});
                    let m = store::meta_mut(&mut next);
                    let ann = m.entry("annotations").or_insert_with(|| json!({}));
                    if !ann.is_object() {
                        *ann = json!({});
                    }
                    ann[DESCRIPTION_KEY] = json!(DESCRIPTION);
                    store::meta_mut(&mut next).remove("resourceVersion");
                    Ok(next)
                })
                .await;
            ok_or_conflict(res)
        }
        Err(_) => {
            let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": NAME, "namespace": ns, "annotations": {DESCRIPTION_KEY: DESCRIPTION}},
                "data": {"ca.crt": ca}});
            ok_or_conflict(store.create(scope, cm, &write()).await)
        }
    }
}
