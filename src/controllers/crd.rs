//! CustomResourceDefinitions at run time: every replica serves the established definitions
//! it follows from its watch cache (`serve`: the runtime registry gets one entry per served
//! version, within a moment of the definition changing), and the leader accepts the names of
//! new definitions and marks them `Established` (`establish`, kube's naming and establishing
//! controllers), and deletes the objects of a definition being deleted before letting it go
//! (`finalize`, kube's CRD finalizer).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::meta::status::Status;
use crate::registry::builtin::apiextensions::{set_condition, CLEANUP_FINALIZER};
use crate::registry::builtin::checks::str_at;
use crate::registry::custom;
use crate::registry::object::{finalizers, meta_str, Part};
use crate::registry::store::{DeleteOptions, ListOptions, ReadAt, Scope, Store, WriteOptions};
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

/// The definitions a leader-only loop follows from the watch cache.
struct Followed {
    defs: Definitions,
    changed: Arc<tokio::sync::Notify>,
    _follower: super::AbortOnDrop,
}

impl Followed {
    fn new(store: &Store, cache: crate::watch::Cache) -> Followed {
        let defs: Definitions = Default::default();
        let changed = Arc::new(tokio::sync::Notify::new());
        let follower = super::follow_by_name(cache, crds(store), defs.clone(), changed.clone());
        Followed {
            defs,
            changed,
            _follower: follower,
        }
    }

    /// Waits for a change (or a few seconds: a new leader catches up by itself); the
    /// definitions when this replica leads.
    async fn round(&self, store: &Store) -> Option<BTreeMap<String, Arc<Value>>> {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.changed.notified()).await;
        if !store.kv().is_leader() {
            return None;
        }
        Some(self.defs.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }
}

/// Accepts names and establishes definitions while this replica leads (kube's naming and
/// establishing controllers).
pub async fn establish(store: Store, cache: crate::watch::Cache) {
    let followed = Followed::new(&store, cache);
    let info = crds(&store);
    loop {
        let Some(all) = followed.round(&store).await else {
            continue;
        };
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

/// How long the finalizer waits for a definition's objects to be gone (kube: one minute,
/// checking every five seconds), per attempt.
const INSTANCES_GONE_WITHIN: Duration = Duration::from_secs(60);

fn leader_write_options(now: &str) -> WriteOptions {
    WriteOptions {
        now: now.to_string(),
        field_manager: Some("kube-apiserver".into()),
        ..Default::default()
    }
}

/// A leader write of `part` of the stored definition `name`: `change` edits a copy of it
/// (given the write's time).
async fn rewrite(
    store: &Store,
    info: &Arc<Resource>,
    name: &str,
    part: Part,
    change: impl Fn(&mut Value, &str),
) -> Result<(), Status> {
    let now = crate::server::handlers::now_rfc3339();
    let scope = Scope {
        info,
        namespace: None,
    };
    store
        .update_with(scope, name, part, &leader_write_options(&now), |cur| {
            let mut next = cur.clone();
            change(&mut next, &now);
            Ok(next)
        })
        .await
        .map(|_| ())
}

/// Sets the `Terminating` condition of the stored definition `name` (a status write).
async fn write_condition(
    store: &Store,
    info: &Arc<Resource>,
    name: &str,
    cond: (bool, &str, &str),
) -> Result<(), Status> {
    rewrite(store, info, name, Part::Status, |next, now| {
        set_condition(next, "Terminating", cond.0, cond.1, cond.2, now)
    })
    .await
}

/// Deletes every object of the definition and waits until none is left; the condition to
/// record (status, reason, message).
async fn delete_instances(store: &Store, crd: &Value) -> (bool, &'static str, String) {
    let group = str_at(crd, "/spec/group");
    let plural = str_at(crd, "/spec/names/plural");
    let version = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["storage"] == json!(true))
        .and_then(|v| v["name"].as_str())
        .unwrap_or_default();
    let Some(info) = store.registry().get(group, version, plural) else {
        return (
            true,
            "InstanceDeletionFailed",
            format!("could not list instances: unable to find a custom resource client for {plural}.{group}"),
        );
    };
    let scope = Scope {
        info: &info,
        namespace: None,
    };
    let now = crate::server::handlers::now_rfc3339();
    let opts = DeleteOptions {
        write: leader_write_options(&now),
        ..Default::default()
    };
    let list = ListOptions {
        read_at: Some(ReadAt::Any),
        ..Default::default()
    };
    if let Err(e) = store.delete_collection(scope, &list, &opts).await {
        return (
            true,
            "InstanceDeletionFailed",
            format!("could not issue all deletes: {}", e.message),
        );
    }
    let deadline = tokio::time::Instant::now() + INSTANCES_GONE_WITHIN;
    loop {
        match store.list(scope, &ListOptions::default()).await {
            Ok(l) if l.items.is_empty() => {
                return (
                    false,
                    "InstanceDeletionCompleted",
                    "removed all instances".into(),
                )
            }
            Ok(_) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Ok(l) => {
                return (
                    true,
                    "InstanceDeletionCheck",
                    format!(
                        "could not confirm zero CustomResources remaining: {} remaining",
                        l.items.len()
                    ),
                )
            }
            Err(e) => {
                return (
                    true,
                    "InstanceDeletionCheck",
                    format!(
                        "could not confirm zero CustomResources remaining: {}",
                        e.message
                    ),
                )
            }
        }
    }
}

/// One definition being deleted: its objects go, then its cleanup finalizer (kube's
/// `CRDFinalizer.sync`).
async fn finalize_one(store: &Store, info: &Arc<Resource>, name: &str, crd: &Value) {
    let step = async {
        write_condition(
            store,
            info,
            name,
            (
                true,
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
            ),
        )
        .await?;
        let (status, reason, message) = if custom::established(crd) {
            delete_instances(store, crd).await
        } else {
            (
                false,
                "NeverEstablished",
                "resource was never established".into(),
            )
        };
        write_condition(store, info, name, (status, reason, &message)).await?;
        if status {
            // Not done: the next round tries again.
            return Ok(());
        }
        rewrite(store, info, name, Part::Main, |next, _| {
            let kept: Vec<String> = finalizers(next)
                .into_iter()
                .filter(|f| f != CLEANUP_FINALIZER)
                .collect();
            next["metadata"]["finalizers"] = json!(kept);
        })
        .await
    };
    match step.await {
        Ok(()) => {}
        // Gone or changed meanwhile: the next round looks again.
        Err(e) if e.code == 404 || e.code == 409 => {}
        Err(e) => tracing::warn!(crd = %name, "finalizing: {}", e.message),
    }
}

/// Deletes the objects of definitions being deleted while this replica leads, then lets the
/// definitions go (kube's CRD finalizer).
pub async fn finalize(store: Store, cache: crate::watch::Cache) {
    let followed = Followed::new(&store, cache);
    let info = crds(&store);
    loop {
        let Some(all) = followed.round(&store).await else {
            continue;
        };
        for (name, crd) in &all {
            let deleting = !meta_str(crd, "deletionTimestamp").is_empty();
            if deleting && finalizers(crd).iter().any(|f| f == CLEANUP_FINALIZER) {
                finalize_one(&store, &info, name, crd).await;
            }
        }
    }
}
