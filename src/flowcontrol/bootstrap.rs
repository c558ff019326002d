//! The configuration kube-apiserver starts with and keeps: the mandatory `exempt` and
//! `catch-all` FlowSchemas and PriorityLevelConfigurations, the suggested ones (system,
//! node-high, leader-election, workload-high, workload-low, global-default and the schemas
//! that pick them), and the leader's two duties toward them:
//!
//! - the config producer (`api-priority-and-fairness-config-producer-v1`): a missing object
//!   is created with `apf.kubernetes.io/autoupdate-spec: "true"`; a mandatory one always gets
//!   its spec back; a suggested one only when its annotation says `true` (or, without the
//!   annotation, while its generation is still 1: nobody changed it); an object that asks
//!   for automatic updates but is no longer part of the configuration is deleted;
//! - the config consumer (`api-priority-and-fairness-config-consumer-v1`): every FlowSchema's
//!   `Dangling` condition says whether the priority level it names exists.

use serde_json::{json, Value};

use crate::meta::status::Status;
use crate::registry::object::{meta_str, Part, WriteOptions};
use crate::registry::store::{Scope, Store};

pub const GROUP: &str = "flowcontrol.apiserver.k8s.io";
pub const AUTOUPDATE: &str = "apf.kubernetes.io/autoupdate-spec";
pub const PRODUCER: &str = "api-priority-and-fairness-config-producer-v1";
pub const CONSUMER: &str = "api-priority-and-fairness-config-consumer-v1";

fn plc(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
           "metadata": {"name": name}, "spec": spec})
}

fn limited(shares: i64, lendable: i64, queuing: Option<(i64, i64, i64)>) -> Value {
    let limit_response = match queuing {
        Some((queues, hand, len)) => json!({"type": "Queue",
            "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": len}}),
        None => json!({"type": "Reject"}),
    };
    json!({"type": "Limited", "limited": {"nominalConcurrencyShares": shares,
        "lendablePercent": lendable, "limitResponse": limit_response}})
}

/// The priority levels every server has, whether or not their objects exist.
pub fn mandatory_levels() -> Vec<Value> {
    vec![
        plc(
            "exempt",
            json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
        ),
        plc("catch-all", limited(5, 0, None)),
    ]
}

/// kube's suggested priority levels.
pub fn suggested_levels() -> Vec<Value> {
    vec![
        plc("system", limited(30, 33, Some((64, 6, 50)))),
        plc("node-high", limited(40, 25, Some((64, 6, 50)))),
        plc("leader-election", limited(10, 0, Some((16, 4, 50)))),
        plc("workload-high", limited(40, 50, Some((128, 6, 50)))),
        plc("workload-low", limited(100, 90, Some((128, 6, 50)))),
        plc("global-default", limited(20, 50, Some((128, 6, 50)))),
    ]
}

fn group(name: &str) -> Value {
    json!({"kind": "Group", "group": {"name": name}})
}

fn user(name: &str) -> Value {
    json!({"kind": "User", "user": {"name": name}})
}

fn kube_system_sa(name: &str) -> Value {
    json!({"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": name}})
}

fn resource_rule(
    verbs: &[&str],
    groups: &[&str],
    resources: &[&str],
    namespaces: &[&str],
    cluster: bool,
) -> Value {
    let mut r = json!({"verbs": verbs, "apiGroups": groups, "resources": resources, "namespaces": namespaces});
    if cluster {
        r["clusterScope"] = json!(true);
    }
    r
}

/// Rules that match every request of the subjects.
fn everything(subjects: Vec<Value>) -> Value {
    json!([{"subjects": subjects,
        "resourceRules": [resource_rule(&["*"], &["*"], &["*"], &["*"], true)],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}])
}

fn fs(name: &str, level: &str, precedence: i64, by: Option<&str>, rules: Value) -> Value {
    let mut spec = json!({"priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence, "rules": rules});
    if let Some(by) = by {
        spec["distinguisherMethod"] = json!({"type": by});
    }
    json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
           "metadata": {"name": name}, "spec": spec})
}

/// The flow schemas every server has, whether or not their objects exist.
pub fn mandatory_schemas() -> Vec<Value> {
    vec![
        fs(
            "exempt",
            "exempt",
            1,
            None,
            everything(vec![group("system:masters")]),
        ),
        fs(
            "catch-all",
            "catch-all",
            10000,
            Some("ByUser"),
            everything(vec![
                group("system:unauthenticated"),
                group("system:authenticated"),
            ]),
        ),
    ]
}

/// kube's suggested flow schemas.
pub fn suggested_schemas() -> Vec<Value> {
    let leases = |ns: &[&str]| {
        resource_rule(
            &["get", "create", "update"],
            &["coordination.k8s.io"],
            &["leases"],
            ns,
            false,
        )
    };
    let mut election_subjects = vec![
        user("system:kube-controller-manager"),
        user("system:kube-scheduler"),
    ];
    election_subjects.push(kube_system_sa("*"));
    vec![
        fs(
            "system-nodes",
            "system",
            500,
            Some("ByUser"),
            everything(vec![group("system:nodes")]),
        ),
        fs(
            "system-node-high",
            "node-high",
            400,
            Some("ByUser"),
            json!([{"subjects": [group("system:nodes")],
            "resourceRules": [
                resource_rule(&["*"], &[""], &["nodes", "nodes/status"], &["*"], true),
                resource_rule(&["*"], &["coordination.k8s.io"], &["leases"], &["*"], false),
            ]}]),
        ),
        fs(
            "probes",
            "exempt",
            2,
            None,
            json!([{"subjects": [group("system:unauthenticated"), group("system:authenticated")],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]),
        ),
        fs(
            "system-leader-election",
            "leader-election",
            100,
            Some("ByUser"),
            json!([{"subjects": election_subjects,
            "resourceRules": [
                resource_rule(&["get", "create", "update"], &[""], &["endpoints", "configmaps"], &["kube-system"], false),
                leases(&["*"]),
            ]}]),
        ),
        fs(
            "endpoint-controller",
            "workload-high",
            150,
            Some("ByUser"),
            json!([{"subjects": [user("system:kube-controller-manager"),
                             kube_system_sa("endpoint-controller"),
                             kube_system_sa("endpointslicemirroring-controller")],
            "resourceRules": [
                resource_rule(&["get", "create", "update"], &[""], &["endpoints"], &["*"], false),
            ]}]),
        ),
        fs(
            "workload-leader-election",
            "leader-election",
            200,
            Some("ByUser"),
            json!([{"subjects": [kube_system_sa("*")],
            "resourceRules": [
                resource_rule(&["get", "create", "update"], &[""], &["endpoints", "configmaps"], &["*"], false),
                leases(&["*"]),
            ]}]),
        ),
        fs(
            "kube-controller-manager",
            "workload-high",
            800,
            Some("ByNamespace"),
            everything(vec![user("system:kube-controller-manager")]),
        ),
        fs(
            "kube-scheduler",
            "workload-high",
            800,
            Some("ByNamespace"),
            everything(vec![user("system:kube-scheduler")]),
        ),
        fs(
            "kube-system-service-accounts",
            "workload-high",
            900,
            Some("ByNamespace"),
            everything(vec![kube_system_sa("*")]),
        ),
        fs(
            "service-accounts",
            "workload-low",
            9000,
            Some("ByUser"),
            everything(vec![group("system:serviceaccounts")]),
        ),
        fs(
            "global-default",
            "global-default",
            9900,
            Some("ByUser"),
            everything(vec![
                group("system:unauthenticated"),
                group("system:authenticated"),
            ]),
        ),
    ]
}

fn opts(manager: &str) -> WriteOptions {
    WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        field_manager: Some(manager.into()),
        ..Default::default()
    }
}

/// The spec as it is stored: defaulted, Go's zero values left out.
fn stored_spec(store: &Store, resource: &str, obj: &Value) -> Value {
    let info = store.registry().builtin(GROUP, "v1", resource);
    let mut o = obj.clone();
    info.strategy.default(&mut o);
    crate::registry::builtin::flowcontrol::without_zeros(o.get("spec").unwrap_or(&Value::Null))
}

fn autoupdate(obj: &Value) -> Option<bool> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(AUTOUPDATE))
        .and_then(Value::as_str)
        .and_then(|v| v.parse::<bool>().ok())
}

/// Whether the producer may overwrite an existing suggested object's spec.
fn may_update_suggested(existing: &Value) -> bool {
    match autoupdate(existing) {
        Some(v) => v,
        None => {
            existing
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                == 1
        }
    }
}

/// Creates what is missing and restores what may be restored, for one resource.
async fn ensure_resource(
    store: &Store,
    resource: &str,
    mandatory: Vec<Value>,
    suggested: Vec<Value>,
    existing: &std::collections::BTreeMap<String, std::sync::Arc<Value>>,
) -> Result<(), Status> {
    let info = store.registry().builtin(GROUP, "v1", resource);
    let scope = Scope {
        info: &info,
        namespace: None,
    };
    let opts = opts(PRODUCER);
    let names: std::collections::BTreeSet<String> = mandatory
        .iter()
        .chain(suggested.iter())
        .map(|o| meta_str(o, "name").to_string())
        .collect();
    let wanted: Vec<(Value, bool)> = mandatory
        .into_iter()
        .map(|o| (o, true))
        .chain(suggested.into_iter().map(|o| (o, false)))
        .collect();
    for (mut want, is_mandatory) in wanted {
        let name = meta_str(&want, "name").to_string();
        want["metadata"]["annotations"] = json!({AUTOUPDATE: "true"});
        let Some(have) = existing.get(&name) else {
            match store.create(scope, want, &opts).await {
                Ok(_) => {}
                Err(s) if s.code == 409 => {}
                Err(s) => return Err(s),
            }
            continue;
        };
        if !is_mandatory && !may_update_suggested(have) {
            continue;
        }
        let spec_ok = stored_spec(store, resource, have) == stored_spec(store, resource, &want);
        if spec_ok && autoupdate(have) == Some(true) {
            continue;
        }
        let want_spec = want["spec"].clone();
        let r = store
            .update_with(scope, &name, Part::Main, &opts, |cur| {
                let mut next = cur.clone();
                next["spec"] = want_spec.clone();
                let m = next["metadata"]
                    .as_object_mut()
                    .ok_or_else(|| Status::internal("object without metadata"))?;
                let a = m.entry("annotations").or_insert_with(|| json!({}));
                if !a.is_object() {
                    *a = json!({});
                }
                a[AUTOUPDATE] = json!("true");
                Ok(next)
            })
            .await;
        match r {
            Ok(_) => {}
            Err(s) if s.code == 404 || s.code == 409 => {}
            Err(s) => return Err(s),
        }
    }
    // Objects that ask for automatic updates but are no longer part of the configuration.
    for (name, have) in existing {
        if names.contains(name) || autoupdate(have) != Some(true) {
            continue;
        }
        tracing::info!(
            resource,
            name,
            "deleting an auto-updated object kube no longer suggests"
        );
        match store.delete(scope, name, &Default::default()).await {
            Ok(_) => {}
            Err(s) if s.code == 404 || s.code == 409 => {}
            Err(s) => return Err(s),
        }
    }
    Ok(())
}

/// The config producer's pass: levels first (schemas refer to them).
pub async fn ensure(
    store: &Store,
    levels: &std::collections::BTreeMap<String, std::sync::Arc<Value>>,
    schemas: &std::collections::BTreeMap<String, std::sync::Arc<Value>>,
) -> Result<(), Status> {
    ensure_resource(
        store,
        "prioritylevelconfigurations",
        mandatory_levels(),
        suggested_levels(),
        levels,
    )
    .await?;
    ensure_resource(
        store,
        "flowschemas",
        mandatory_schemas(),
        suggested_schemas(),
        schemas,
    )
    .await
}

/// The `Dangling` condition a FlowSchema should carry: (status, reason, message).
pub fn dangling_condition(level: &str, exists: bool) -> (&'static str, &'static str, String) {
    if exists {
        (
            "False",
            "Found",
            format!("This FlowSchema references the PriorityLevelConfiguration object named {level:?} and it exists"),
        )
    } else {
        (
            "True",
            "NotFound",
            format!("This FlowSchema references the PriorityLevelConfiguration object named {level:?} but there is no such object"),
        )
    }
}

/// The config consumer's status pass: every FlowSchema whose `Dangling` condition is not
/// what it should be gets it written.
pub async fn sync_status(
    store: &Store,
    levels: &std::collections::BTreeMap<String, std::sync::Arc<Value>>,
    schemas: &std::collections::BTreeMap<String, std::sync::Arc<Value>>,
) -> Result<(), Status> {
    let info = store.registry().builtin(GROUP, "v1", "flowschemas");
    let scope = Scope {
        info: &info,
        namespace: None,
    };
    let opts = opts(CONSUMER);
    for (name, fs) in schemas {
        let level = fs
            .pointer("/spec/priorityLevelConfiguration/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (status, reason, message) = dangling_condition(level, levels.contains_key(level));
        let current = current_dangling(fs);
        if current.is_some_and(|c| {
            c.get("status") == Some(&json!(status))
                && c.get("reason") == Some(&json!(reason))
                && c.get("message") == Some(&json!(message))
        }) {
            continue;
        }
        let condition = json!({"type": "Dangling", "status": status,
            "lastTransitionTime": opts.now, "reason": reason, "message": message});
        let r = store
            .update_with(scope, name, Part::Status, &opts, |cur| {
                let mut next = cur.clone();
                let mut conditions: Vec<Value> = cur
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                conditions.retain(|c| c.get("type") != Some(&json!("Dangling")));
                conditions.push(condition.clone());
                next["status"] = json!({"conditions": conditions});
                Ok(next)
            })
            .await;
        match r {
            Ok(_) => {}
            Err(s) if s.code == 404 || s.code == 409 => {}
            Err(s) => return Err(s),
        }
    }
    Ok(())
}

fn current_dangling(fs: &Value) -> Option<&Value> {
    fs.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type") == Some(&json!("Dangling")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suggested_schema_names_a_known_level() {
        let levels: Vec<String> = mandatory_levels()
            .iter()
            .chain(suggested_levels().iter())
            .map(|o| meta_str(o, "name").to_string())
            .collect();
        for s in mandatory_schemas().iter().chain(suggested_schemas().iter()) {
            let l = s["spec"]["priorityLevelConfiguration"]["name"]
                .as_str()
                .unwrap();
            assert!(levels.iter().any(|n| n == l), "{l}");
        }
        assert_eq!(suggested_schemas().len(), 11);
    }

    #[test]
    fn every_bootstrap_object_passes_validation() {
        use crate::registry::builtin::flowcontrol::{FlowSchemas, PriorityLevelConfigurations};
        use crate::registry::strategy::Strategy;
        for o in mandatory_levels().into_iter().chain(suggested_levels()) {
            let mut o = o;
            PriorityLevelConfigurations.default(&mut o);
            let errs = PriorityLevelConfigurations.validate(&o);
            assert!(errs.is_empty(), "{}: {errs:?}", meta_str(&o, "name"));
        }
        for o in mandatory_schemas().into_iter().chain(suggested_schemas()) {
            let mut o = o;
            FlowSchemas.default(&mut o);
            let errs = FlowSchemas.validate(&o);
            assert!(errs.is_empty(), "{}: {errs:?}", meta_str(&o, "name"));
        }
    }
}
