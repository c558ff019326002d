//! Objects every cluster has from the start: the `default`, `kube-system`, `kube-public` and
//! `kube-node-lease` namespaces, the `default/kubernetes` Service (like kube-apiserver's
//! bootstrap controller) and the `system-node-critical` / `system-cluster-critical`
//! PriorityClasses (its `scheduling/bootstrap-system-priority-classes` hook). Creating them is idempotent; the leader checks them on start and
//! then every few seconds (from its local state, so a pass that finds everything costs no
//! write), so a system namespace someone deleted is back within seconds.

use serde_json::json;

use crate::registry::store::{Scope, Store, WriteOptions};

pub async fn ensure(store: &Store, advertise_port: u16) -> Result<(), crate::meta::status::Status> {
    let now = crate::server::handlers::now_rfc3339();
    let opts = WriteOptions {
        now,
        dry_run: false,
        field_manager: Some("kube-apiserver".into()),
        ..Default::default()
    };
    let ns_info = store.registry().builtin("", "v1", "namespaces");
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let scope = Scope {
            info: &ns_info,
            namespace: None,
        };
        if store
            .get(scope, ns, crate::registry::store::ReadAt::Any)
            .await
            .is_ok()
        {
            continue;
        }
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        match store
            .create(
                Scope {
                    info: &ns_info,
                    namespace: None,
                },
                obj,
                &opts,
            )
            .await
        {
            Ok(_) => {}
            Err(s) if s.code == 409 => {}
            Err(s) => return Err(s),
        }
    }
    ensure_priority_classes(store, &opts).await?;
    let svc_info = store.registry().builtin("", "v1", "services");
    let svc_scope = Scope {
        info: &svc_info,
        namespace: Some("default"),
    };
    if store
        .get(svc_scope, "kubernetes", crate::registry::store::ReadAt::Any)
        .await
        .is_ok()
    {
        return Ok(());
    }
    let svc = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"], "sessionAffinity": "None",
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": advertise_port}]},
    });
    match store
        .create(
            Scope {
                info: &svc_info,
                namespace: Some("default"),
            },
            svc,
            &opts,
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(s) if s.code == 409 => Ok(()),
        Err(s) => Err(s),
    }
}

/// kube's system PriorityClasses: (name, value, description).
const SYSTEM_PRIORITY_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2000000000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

async fn ensure_priority_classes(
    store: &Store,
    opts: &WriteOptions,
) -> Result<(), crate::meta::status::Status> {
    let info = store
        .registry()
        .builtin("scheduling.k8s.io", "v1", "priorityclasses");
    for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
        let scope = Scope {
            info: &info,
            namespace: None,
        };
        if store
            .get(scope, name, crate::registry::store::ReadAt::Any)
            .await
            .is_ok()
        {
            continue;
        }
        let pc = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "description": description});
        match store.create(scope, pc, opts).await {
            Ok(_) => {}
            Err(s) if s.code == 409 => {}
            Err(s) => return Err(s),
        }
    }
    Ok(())
}
