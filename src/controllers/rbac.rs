//! RBAC's own loops: the bootstrap policy reconciled when a replica becomes leader (kube-
//! apiserver's `rbac/bootstrap-roles` post-start hook), and ClusterRole aggregation (kube-
//! controller-manager's `clusterrole-aggregation` controller), which fills the rules of
//! roles with an `aggregationRule` (`admin`, `edit`, `view`, ...) from the roles their
//! selectors pick.
//!
//! Reconciliation follows kube's rules: a missing object is created; an existing one whose
//! `rbac.authorization.kubernetes.io/autoupdate` annotation is `"false"` is left alone;
//! otherwise missing labels, annotations, permissions and subjects are added (extra ones
//! are kept), and a binding whose roleRef differs is recreated.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::authz::bootstrap;
use crate::authz::rbac::{self, PolicyRule};
use crate::meta::status::Status;
use crate::registry::object::{meta_str, Part};
use crate::registry::store::{ReadAt, Scope, Store, WriteOptions};
use crate::registry::Resource;

const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

fn info(store: &Store, resource: &str) -> Arc<Resource> {
    store.registry().builtin(rbac::GROUP, "v1", resource)
}

fn opts(manager: &str) -> WriteOptions {
    WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        field_manager: Some(manager.into()),
        ..Default::default()
    }
}

/// Adds the keys of `want` that `have` lacks (existing values win).
fn merge_map(have: &mut Value, want: &Value) -> bool {
    let Some(want) = want.as_object() else {
        return false;
    };
    if !have.is_object() {
        *have = json!({});
    }
    let m = have.as_object_mut().expect("object");
    let mut changed = false;
    for (k, v) in want {
        if !m.contains_key(k) {
            m.insert(k.clone(), v.clone());
            changed = true;
        }
    }
    changed
}

/// The reconciled form of an existing object, or None when nothing needs to change.
fn reconcile(existing: &Value, expected: &Value, binding: bool) -> Option<Value> {
    let mut out = existing.clone();
    let mut changed = false;
    for k in ["labels", "annotations"] {
        if let Some(want) = expected["metadata"].get(k) {
            let have = out["metadata"].get(k).cloned().unwrap_or(json!({}));
            let mut have = have;
            if merge_map(&mut have, want) {
                out["metadata"][k] = have;
                changed = true;
            }
        }
    }
    if binding {
        let mut subjects = existing
            .get("subjects")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for s in expected
            .get("subjects")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let same = |x: &Value| {
                x["kind"] == s["kind"]
                    && x["name"] == s["name"]
                    && x.get("namespace").and_then(Value::as_str).unwrap_or("")
                        == s.get("namespace").and_then(Value::as_str).unwrap_or("")
            };
            if !subjects.iter().any(same) {
                subjects.push(s.clone());
                changed = true;
            }
        }
        if changed {
            out["subjects"] = json!(subjects);
        }
    } else if let Some(want) = rbac::aggregation_selectors(expected) {
        let mut have = rbac::aggregation_selectors(existing).unwrap_or_default();
        for s in want {
            if !have.contains(&s) {
                have.push(s);
                changed = true;
            }
        }
        if changed {
            out["aggregationRule"] = json!({"clusterRoleSelectors": have});
        }
    } else {
        let have = rbac::rules_of(existing);
        if let Err(missing) = rbac::covers(&have, &rbac::rules_of(expected)) {
            let mut rules = existing
                .get("rules")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            rules.extend(missing.iter().map(PolicyRule::to_json));
            out["rules"] = json!(rules);
            changed = true;
        }
    }
    changed.then_some(out)
}

async fn ensure_one(store: &Store, resource: &str, expected: &Value) -> Result<(), Status> {
    let info = info(store, resource);
    let namespace = expected["metadata"]["namespace"].as_str();
    let scope = Scope {
        info: &info,
        namespace,
    };
    let name = meta_str(expected, "name").to_string();
    let binding = resource.ends_with("bindings");
    let opts = opts("kube-apiserver");
    match store.get(scope, &name, ReadAt::Latest).await {
        Err(s) if s.code == 404 => match store.create(scope, expected.clone(), &opts).await {
            Ok(_) => Ok(()),
            Err(s) if s.code == 409 => Ok(()),
            Err(s) => Err(s),
        },
        Err(s) => Err(s),
        Ok(existing) => {
            if existing["metadata"]["annotations"][AUTOUPDATE] == "false" {
                return Ok(());
            }
            if binding && existing["roleRef"] != expected["roleRef"] {
                tracing::info!(
                    resource,
                    name,
                    "recreating a bootstrap binding whose roleRef changed"
                );
                store
                    .delete(scope, &name, &Default::default())
                    .await
                    .map(|_| ())
                    .or_else(|s| if s.code == 404 { Ok(()) } else { Err(s) })?;
                return store
                    .create(scope, expected.clone(), &opts)
                    .await
                    .map(|_| ());
            }
            let Some(_) = reconcile(&existing, expected, binding) else {
                return Ok(());
            };
            store
                .update_with(scope, &name, Part::Main, &opts, |cur| {
                    Ok(reconcile(cur, expected, binding).unwrap_or_else(|| cur.clone()))
                })
                .await
                .map(|_| ())
        }
    }
}

/// Creates or reconciles every object of the bootstrap policy.
pub async fn ensure_policy(store: &Store) -> Result<(), Status> {
    let p = bootstrap::policy();
    for (resource, objects) in [
        ("clusterroles", &p.cluster_roles),
        ("clusterrolebindings", &p.cluster_role_bindings),
        ("roles", &p.roles),
        ("rolebindings", &p.role_bindings),
    ] {
        for o in objects {
            ensure_one(store, resource, o).await?;
        }
    }
    Ok(())
}

/// The aggregation loop: follows ClusterRoles from the watch cache and, while this replica
/// leads, writes the aggregated rules of every role whose selectors' picks changed.
pub async fn run_aggregation(store: Store, cache: crate::watch::Cache) {
    let roles: super::ByName = Default::default();
    let changed = Arc::new(tokio::sync::Notify::new());
    let _guard = super::follow_by_name(
        cache,
        info(&store, "clusterroles"),
        roles.clone(),
        changed.clone(),
    );
    let clusterroles = info(&store, "clusterroles");
    loop {
        // Woken by a change, and every few seconds (a new leader catches up by itself).
        let _ = tokio::time::timeout(Duration::from_secs(5), changed.notified()).await;
        if !store.kv().is_leader() {
            continue;
        }
        let all: Vec<Arc<Value>> = roles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for role in &all {
            let Some(rules) = rbac::aggregated_rules(role, &all) else {
                continue;
            };
            if role.get("rules").cloned().unwrap_or(json!([])) == json!(rules) {
                continue;
            }
            let name = meta_str(role, "name").to_string();
            let scope = Scope {
                info: &clusterroles,
                namespace: None,
            };
            let res = store
                .update_with(
                    scope,
                    &name,
                    Part::Main,
                    &opts("clusterrole-aggregation-controller"),
                    |cur| {
                        let mut cur = cur.clone();
                        cur["rules"] = json!(rules);
                        Ok(cur)
                    },
                )
                .await;
            if let Err(s) = res {
                tracing::info!(role = name, "aggregating: {}", s.message);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconciling_adds_and_keeps() {
        let expected = json!({"metadata": {"name": "r", "labels": {"a": "1"}, "annotations": {AUTOUPDATE: "true"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]});
        let existing = json!({"metadata": {"name": "r", "labels": {"a": "0"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]});
        let out = reconcile(&existing, &expected, false).unwrap();
        assert_eq!(out["metadata"]["labels"]["a"], "0", "existing values win");
        assert_eq!(out["metadata"]["annotations"][AUTOUPDATE], "true");
        assert_eq!(
            out["rules"].as_array().unwrap().len(),
            3,
            "extra permissions kept, missing added"
        );
        assert!(reconcile(&out, &expected, false).is_none());
        let b = json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "r"}, "subjects": [{"kind": "Group", "name": "g"}]});
        let have = json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "r"}, "subjects": [{"kind": "User", "name": "u"}]});
        let out = reconcile(&have, &b, true).unwrap();
        assert_eq!(out["subjects"].as_array().unwrap().len(), 2);
    }
}
