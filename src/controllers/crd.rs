//! CustomResourceDefinitions at run time: every replica serves the established definitions
//! it follows from its watch cache (`serve`: the runtime registry gets one entry per served
//! version, within a moment of the definition changing), and the leader accepts the names of
//! new definitions and marks them `Established` (`establish`, kube's naming and establishing
//! controllers).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::registry::custom;
use crate::registry::object::{meta_str, Part};
use crate::registry::store::{Scope, Store, WriteOptions};
use crate::registry::Resource;

type Definitions = super::ByName;

fn crds(store: &Store) -> Arc<Resource> {
    store
        .registry()
        .builtin("apiextensions.k8s.io", "v1", "customresourcedefinitions")
}

/// Serves the established definitions until the task is aborted (every replica).
pub async fn serve(store: Store, cache: crate::watch::Cache) {
    let defs: Definitions = Default::default();
    let changed = Arc::new(tokio::sync::Notify::new());
    let _follower = super::follow_by_name(cache, crds(&store), defs.clone(), changed.clone());
    loop {
        changed.notified().await;
        let wanted: Vec<Resource> = defs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .flat_map(|d| custom::resources_of(d))
            .collect();
        store.registry().set_custom(wanted);
    }
}

/// The names a definition asks for, as (field, value) pairs.
fn requested(crd: &Value) -> Vec<(&'static str, String)> {
    let names = &crd["spec"]["names"];
    let mut out = Vec::new();
    for f in ["plural", "singular", "kind", "listKind"] {
        if let Some(v) = names[f].as_str().filter(|v| !v.is_empty()) {
            out.push((f, v.to_string()));
        }
    }
    for s in names["shortNames"].as_array().into_iter().flatten() {
        if let Some(v) = s.as_str() {
            out.push(("shortNames", v.to_string()));
        }
    }
    out
}

/// kube's naming controller: a name is taken when another definition of the same group has
/// accepted it, or a built-in resource of the group answers to it. `None`: all accepted.
fn conflict(
    crd: &Value,
    all: &BTreeMap<String, Arc<Value>>,
    store: &Store,
) -> Option<(String, String)> {
    let group = crd["spec"]["group"].as_str().unwrap_or("");
    let me = meta_str(crd, "name");
    let catalog = store.registry().snapshot();
    for (field, value) in requested(crd) {
        let reason = match field {
            "plural" => "PluralConflict",
            "singular" => "SingularConflict",
            "kind" => "KindConflict",
            "listKind" => "ListKindConflict",
            _ => "ShortNamesConflict",
        };
        let taken_by_other = all.values().any(|o| {
            meta_str(o, "name") != me && o["spec"]["group"].as_str() == Some(group) && {
                let accepted = &o["status"]["acceptedNames"];
                ["plural", "singular", "kind", "listKind"]
                    .iter()
                    .any(|f| accepted[*f].as_str() == Some(value.as_str()))
                    || accepted["shortNames"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|s| s.as_str() == Some(value.as_str()))
            }
        });
        let built_in = catalog.all().iter().any(|r| {
            r.origin.is_none()
                && r.group == group
                && (r.answers_to(&value.to_ascii_lowercase())
                    || r.kind == value
                    || r.list_kind == value)
        });
        if taken_by_other || built_in {
            return Some((reason.to_string(), format!("{value:?} is already in use")));
        }
    }
    None
}

fn condition(ty: &str, status: bool, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": ty, "status": if status { "True" } else { "False" },
           "lastTransitionTime": now, "reason": reason, "message": message})
}

/// The status a definition should have, if it differs from what it has.
fn wanted_status(
    crd: &Value,
    all: &BTreeMap<String, Arc<Value>>,
    store: &Store,
    now: &str,
) -> Option<Value> {
    if crd.pointer("/metadata/deletionTimestamp").is_some() || custom::established(crd) {
        return None;
    }
    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    let (accepted, established) = match conflict(crd, all, store) {
        None => {
            status["acceptedNames"] = crd["spec"]["names"].clone();
            (
                condition(
                    "NamesAccepted",
                    true,
                    "NoConflicts",
                    "no conflicts found",
                    now,
                ),
                condition(
                    "Established",
                    true,
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                    now,
                ),
            )
        }
        Some((reason, message)) => (
            condition("NamesAccepted", false, &reason, &message, now),
            condition(
                "Established",
                false,
                "NotAccepted",
                "not all names are accepted",
                now,
            ),
        ),
    };
    let mut conditions: Vec<Value> = status["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["type"] != "NamesAccepted" && c["type"] != "Established")
        .collect();
    // Keep a condition's transition time when its status did not change.
    for mut c in [accepted, established] {
        let old = crd["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["type"] == c["type"]);
        if let Some(o) = old {
            if o["status"] == c["status"] && o["reason"] == c["reason"] {
                conditions.push(o.clone());
                continue;
            }
            if o["status"] == c["status"] {
                c["lastTransitionTime"] = o["lastTransitionTime"].clone();
            }
        }
        conditions.push(c);
    }
    status["conditions"] = Value::Array(conditions);
    (crd.get("status") != Some(&status)).then_some(status)
}

/// Accepts names and establishes definitions while this replica leads (kube's naming and
/// establishing controllers).
pub async fn establish(store: Store, cache: crate::watch::Cache) {
    let defs: Definitions = Default::default();
    let changed = Arc::new(tokio::sync::Notify::new());
    let _follower = super::follow_by_name(cache, crds(&store), defs.clone(), changed.clone());
    let info = crds(&store);
    loop {
        // Woken by a change, and every few seconds (a new leader catches up by itself).
        let _ = tokio::time::timeout(Duration::from_secs(5), changed.notified()).await;
        if !store.kv().is_leader() {
            continue;
        }
        let all = defs.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let now = crate::server::handlers::now_rfc3339();
        for (name, crd) in &all {
            let Some(status) = wanted_status(crd, &all, &store, &now) else {
                continue;
            };
            let scope = Scope {
                info: &info,
                namespace: None,
            };
            let opts = WriteOptions {
                now: now.clone(),
                field_manager: Some("kube-apiserver".into()),
                ..Default::default()
            };
            let res = store
                .update_with(scope, name, Part::Status, &opts, |cur| {
                    let mut next = cur.clone();
                    next["status"] = status.clone();
                    Ok(next)
                })
                .await;
            if let Err(e) = res {
                tracing::warn!(crd = %name, "establishing: {}", e.message);
            }
        }
    }
}
