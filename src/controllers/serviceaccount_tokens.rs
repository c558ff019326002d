//! The legacy token controller (kube-controller-manager's `serviceaccount-token`), leader
//! only: a Secret of type `kubernetes.io/service-account-token` annotated with
//! `kubernetes.io/service-account.name` gets a non-expiring token, `ca.crt` and `namespace`
//! (and the ServiceAccount's uid annotation); one whose ServiceAccount is gone or was
//! replaced is deleted, which revokes its token.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::authn::serviceaccount::ServiceAccounts;
use crate::registry::store::{
    self, DeleteOptions, ListOptions, Part, ReadAt, Scope, Store, WriteOptions,
};

pub const SECRET_TYPE: &str = "kubernetes.io/service-account-token";
const NAME_ANNOTATION: &str = "kubernetes.io/service-account.name";
const UID_ANNOTATION: &str = "kubernetes.io/service-account.uid";

/// Runs until the task is dropped; `ca_pem` is what `ca.crt` in each Secret holds.
pub async fn run(store: Store, sa: Arc<ServiceAccounts>, ca_pem: Vec<u8>, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    loop {
        tick.tick().await;
        if !store.kv().is_leader() {
            continue;
        }
        if let Err(e) = pass(&store, &sa, &ca_pem).await {
            tracing::debug!("serviceaccount-token controller: {e}");
        }
    }
}

async fn pass(
    store: &Store,
    sa: &ServiceAccounts,
    ca_pem: &[u8],
) -> Result<(), crate::meta::status::Status> {
    let secrets = store.registry().builtin("", "v1", "secrets");
    let accounts = store.registry().builtin("", "v1", "serviceaccounts");
    let all = store
        .list(
            Scope {
                info: &secrets,
                namespace: None,
            },
            &ListOptions {
                read_at: Some(ReadAt::Any),
                ..Default::default()
            },
        )
        .await?;
    let b64 = base64::engine::general_purpose::STANDARD;
    let write = || WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        field_manager: Some("kube-controller-manager".into()),
        ..Default::default()
    };
    for s in all.items {
        if s.get("type").and_then(Value::as_str) != Some(SECRET_TYPE)
            || !store::meta_str(&s, "deletionTimestamp").is_empty()
        {
            continue;
        }
        let annotation = |k: &str| {
            s.pointer(&format!("/metadata/annotations/{}", k.replace('/', "~1")))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let account = annotation(NAME_ANNOTATION);
        if account.is_empty() {
            continue;
        }
        let ns = store::meta_str(&s, "namespace").to_string();
        let name = store::meta_str(&s, "name").to_string();
        let scope = Scope {
            info: &secrets,
            namespace: Some(&ns),
        };
        let found = store
            .get(
                Scope {
                    info: &accounts,
                    namespace: Some(&ns),
                },
                &account,
                ReadAt::Any,
            )
            .await
            .ok();
        let want_uid = annotation(UID_ANNOTATION);
        let Some(found) =
            found.filter(|a| want_uid.is_empty() || store::meta_str(a, "uid") == want_uid)
        else {
            let opts = DeleteOptions {
                write: write(),
                precondition_uid: Some(store::meta_str(&s, "uid").to_string()),
                ..Default::default()
            };
            match store.delete(scope, &name, &opts).await {
                Ok(_) => {
                    tracing::info!("deleted token Secret {ns}/{name}: its ServiceAccount is gone")
                }
                Err(e) if e.code == 404 || e.code == 409 => {}
                Err(e) => return Err(e),
            }
            continue;
        };
        let uid = store::meta_str(&found, "uid").to_string();
        if s.pointer("/data/token").is_some() && want_uid == uid {
            continue;
        }
        let token = sa
            .issue_legacy(&ns, &name, &account, &uid)
            .map_err(crate::meta::status::Status::internal)?;
        let res = store
            .update_with(scope, &name, Part::Main, &write(), |cur| {
                let mut next = cur.clone();
                if !next.get("data").is_some_and(Value::is_object) {
                    next["data"] = json!({});
                }
                next["data"]["token"] = json!(b64.encode(&token));
                next["data"]["ca.crt"] = json!(b64.encode(ca_pem));
                next["data"]["namespace"] = json!(b64.encode(&ns));
                let m = store::meta_mut(&mut next);
                let a = m.entry("annotations").or_insert_with(|| json!({}));
                a[UID_ANNOTATION] = json!(uid);
                m.remove("resourceVersion");
                Ok(next)
            })
            .await;
        match res {
            Ok(_) => {}
            Err(e) if e.code == 404 || e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
