//! What a DELETE does to one object, decided without I/O: kube's `rest.BeforeDelete`, the
//! generic store's finalizer handling for garbage collection (`orphan` / `foregroundDeletion`)
//! and the namespace registry's two-phase delete, as a [`Plan`] the store then carries out in
//! one compare-and-swap.
//!
//! Owns: grace-period rules (only resources whose strategy deletes gracefully, i.e. pods, keep
//! a grace period; every other kind records 0), `deletionTimestamp` placement, the generation
//! bump, the GC finalizers from `propagationPolicy` / `orphanDependents` / the resource's default
//! policy, and "already terminating" answers.
//!
//! Does not know: storage, preconditions (checked by the store against the stored revision),
//! HTTP. Per-resource facts come from [`super::strategy`].

use serde_json::{json, Value};

use super::object::{finalizers, meta, meta_mut, meta_str};
use super::resource::Resource;
use super::strategy::GcPolicy;

/// The GC finalizer that orphans dependents.
pub const ORPHAN: &str = "orphan";
/// The GC finalizer that deletes dependents first.
pub const FOREGROUND: &str = "foregroundDeletion";

/// The deletion-relevant part of `DeleteOptions`, already validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy`: Orphan, Background or Foreground.
    pub propagation_policy: Option<String>,
    /// The deprecated `orphanDependents`.
    pub orphan_dependents: Option<bool>,
}

/// What to do.
#[derive(Debug, PartialEq)]
pub enum Plan {
    /// Remove the object now; it is unchanged.
    Remove,
    /// Leave the object as it is (its deletion is already pending); answer with it.
    Keep,
    /// Store this new state. With `then_remove` the object is removed right after (a graceful
    /// deletion with a zero grace period: watchers see MODIFIED, then DELETED, as in kube).
    Write { obj: Value, then_remove: bool },
}

/// Plans the DELETE of `obj` (the stored state) at `now` (RFC 3339).
pub fn plan(info: &Resource, obj: &Value, req: &Request, now: &str) -> Plan {
    if info.strategy.terminating_phase() {
        if let Some(p) = plan_namespace(obj, req, now) {
            return p;
        }
    }
    let mut req = req.clone();
    // BeforeDelete: a negative grace period means 1 s.
    if req.grace_period_seconds.is_some_and(|g| g < 0) {
        req.grace_period_seconds = Some(1);
    }
    let mut new = obj.clone();
    let terminating = !meta_str(obj, "deletionTimestamp").is_empty();
    if !terminating {
        info.strategy.prepare_for_delete(&mut new, now);
    }
    let mut graceful = false;
    let mut grace = 0;
    if let Some(period) = info
        .strategy
        .graceful_delete_period(obj, req.grace_period_seconds)
    {
        if terminating {
            let current = meta(obj)
                .get("deletionGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if current > 0 {
                match req.grace_period_seconds {
                    // Only a shorter grace period may be asked for.
                    Some(p) if p < current => {
                        let ts = shift(meta_str(obj, "deletionTimestamp"), p - current);
                        let m = meta_mut(&mut new);
                        m.insert("deletionTimestamp".into(), json!(ts));
                        m.insert("deletionGracePeriodSeconds".into(), json!(p));
                        graceful = true;
                        grace = p;
                    }
                    _ => return Plan::Keep,
                }
            }
        } else {
            let m = meta_mut(&mut new);
            m.insert("deletionTimestamp".into(), json!(shift(now, period)));
            m.insert("deletionGracePeriodSeconds".into(), json!(period));
            bump_generation(m);
            graceful = true;
            grace = period;
        }
    }
    let (changed, fins) = gc_finalizers(info, &new, &req);
    if changed {
        meta_mut(&mut new).insert("finalizers".into(), json!(fins));
    }
    let pending_finalizers = !fins.is_empty();
    if !graceful {
        if !pending_finalizers {
            return Plan::Remove;
        }
        mark_as_deleting(&mut new, now);
        if &new == obj {
            return Plan::Keep;
        }
        return Plan::Write {
            obj: new,
            then_remove: false,
        };
    }
    Plan::Write {
        obj: new,
        then_remove: !pending_finalizers && grace == 0,
    }
}

/// The namespace registry's delete: the first DELETE only marks the namespace Terminating (its
/// `spec.finalizers` are emptied by the namespace controller); while spec finalizers remain, a
/// DELETE changes nothing. `None` when they are gone: the generic rules apply.
fn plan_namespace(obj: &Value, req: &Request, now: &str) -> Option<Plan> {
    let spec_finalizers = obj
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if !meta_str(obj, "deletionTimestamp").is_empty() {
        return if spec_finalizers {
            Some(Plan::Keep)
        } else {
            None
        };
    }
    let mut new = obj.clone();
    meta_mut(&mut new).insert("deletionTimestamp".into(), json!(now));
    new["status"]["phase"] = json!("Terminating");
    let have = finalizers(obj);
    let has = |f: &str| have.iter().any(|x| x == f);
    let want_orphan = match (req.orphan_dependents, req.propagation_policy.as_deref()) {
        (Some(o), _) => o,
        (None, Some(p)) => p == "Orphan",
        (None, None) => has(ORPHAN),
    };
    let want_foreground = match (req.orphan_dependents, req.propagation_policy.as_deref()) {
        (Some(_), _) => false,
        (None, Some(p)) => p == "Foreground",
        (None, None) => has(FOREGROUND),
    };
    if want_orphan != has(ORPHAN) || want_foreground != has(FOREGROUND) {
        let mut fins: Vec<String> = have
            .into_iter()
            .filter(|f| f != ORPHAN && f != FOREGROUND)
            .collect();
        if want_orphan {
            fins.push(ORPHAN.into());
        }
        if want_foreground {
            fins.push(FOREGROUND.into());
        }
        meta_mut(&mut new).insert("finalizers".into(), json!(fins));
    }
    Some(Plan::Write {
        obj: new,
        then_remove: false,
    })
}

/// The finalizers the object should carry for garbage collection, and whether they differ (as
/// sets) from the ones it has. Explicit options win over existing finalizers, which win over
/// the resource's default policy.
fn gc_finalizers(info: &Resource, obj: &Value, req: &Request) -> (bool, Vec<String>) {
    let have = finalizers(obj);
    let default = info.strategy.gc_policy();
    if default == GcPolicy::Unsupported {
        return (false, have);
    }
    let existing = || {
        have.iter().find_map(|f| match f.as_str() {
            ORPHAN => Some(true),
            FOREGROUND => Some(false),
            _ => None,
        })
    };
    let orphan = match (req.orphan_dependents, req.propagation_policy.as_deref()) {
        (Some(o), _) => o,
        (None, Some("Orphan")) => true,
        (None, Some("Background" | "Foreground")) => false,
        _ => existing().unwrap_or(default == GcPolicy::OrphanDependents),
    };
    let foreground = match (req.orphan_dependents, req.propagation_policy.as_deref()) {
        (Some(_), _) => false,
        (None, Some("Foreground")) => true,
        (None, Some("Background" | "Orphan")) => false,
        _ => existing() == Some(false),
    };
    let mut fins: Vec<String> = have
        .iter()
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        fins.push(ORPHAN.into());
    }
    if foreground {
        fins.push(FOREGROUND.into());
    }
    let as_set = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    if as_set(&fins) == as_set(&have) {
        (false, have)
    } else {
        (true, fins)
    }
}

/// `markAsDeleting`: a kind without graceful deletion that still has finalizers gets a zero
/// grace period and a deletionTimestamp of now (kept when already set and not in the future).
fn mark_as_deleting(obj: &mut Value, now: &str) {
    let m = meta_mut(obj);
    let existing = m
        .get("deletionTimestamp")
        .and_then(Value::as_str)
        .map(str::to_string);
    if existing.is_none() {
        bump_generation(m);
    }
    let keep = existing.as_deref().is_some_and(|ts| !is_after(ts, now));
    if !keep {
        m.insert("deletionTimestamp".into(), json!(now));
    }
    m.insert("deletionGracePeriodSeconds".into(), json!(0));
}

fn bump_generation(m: &mut serde_json::Map<String, Value>) {
    let g = m.get("generation").and_then(Value::as_i64).unwrap_or(0);
    if g > 0 {
        m.insert("generation".into(), json!(g + 1));
    }
}

fn parse(ts: &str) -> Option<jiff::Timestamp> {
    ts.parse::<jiff::Timestamp>().ok()
}

/// `ts` moved by `secs` seconds, RFC 3339 with second precision (unparseable: unchanged).
fn shift(ts: &str, secs: i64) -> String {
    match parse(ts).and_then(|t| t.checked_add(jiff::SignedDuration::from_secs(secs)).ok()) {
        Some(t) => t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => ts.to_string(),
    }
}

fn is_after(a: &str, b: &str) -> bool {
    match (parse(a), parse(b)) {
        (Some(a), Some(b)) => a > b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(group: &str, version: &str, resource: &str) -> Option<std::sync::Arc<Resource>> {
        crate::registry::builtin::registry().get(group, version, resource)
    }

    const NOW: &str = "2026-01-01T00:00:00Z";

    fn req(grace: Option<i64>, policy: Option<&str>) -> Request {
        Request {
            grace_period_seconds: grace,
            propagation_policy: policy.map(str::to_string),
            orphan_dependents: None,
        }
    }

    fn cm(fins: &[&str]) -> Value {
        json!({"metadata": {"name": "a", "finalizers": fins}})
    }

    #[test]
    fn kinds_without_graceful_deletion_record_zero() {
        let info = lookup("", "v1", "configmaps").unwrap();
        assert_eq!(
            plan(&info, &cm(&[]), &req(Some(30), None), NOW),
            Plan::Remove
        );
        for grace in [None, Some(0), Some(1), Some(30)] {
            let Plan::Write { obj, then_remove } =
                plan(&info, &cm(&[]), &req(grace, Some("Orphan")), NOW)
            else {
                panic!("orphan must write");
            };
            assert!(!then_remove);
            assert_eq!(obj["metadata"]["deletionGracePeriodSeconds"], json!(0));
            assert_eq!(obj["metadata"]["deletionTimestamp"], json!(NOW));
            assert_eq!(obj["metadata"]["finalizers"], json!(["orphan"]));
        }
    }

    #[test]
    fn policies_and_defaults() {
        let rc = lookup("", "v1", "replicationcontrollers").unwrap();
        let job = lookup("batch", "v1", "jobs").unwrap();
        let deploy = lookup("apps", "v1", "deployments").unwrap();
        for info in [rc, job] {
            let Plan::Write { obj, .. } = plan(&info, &cm(&[]), &req(None, None), NOW) else {
                panic!("{} orphans by default", info.resource);
            };
            assert_eq!(obj["metadata"]["finalizers"], json!(["orphan"]));
            assert_eq!(
                plan(&info, &cm(&[]), &req(None, Some("Background")), NOW),
                Plan::Remove
            );
        }
        assert_eq!(plan(&deploy, &cm(&[]), &req(None, None), NOW), Plan::Remove);
        let Plan::Write { obj, .. } =
            plan(&deploy, &cm(&["x"]), &req(None, Some("Foreground")), NOW)
        else {
            panic!()
        };
        assert_eq!(
            obj["metadata"]["finalizers"],
            json!(["x", "foregroundDeletion"])
        );
        // orphanDependents=false removes an orphan finalizer and, with nothing left, deletes.
        let r = Request {
            orphan_dependents: Some(false),
            ..Default::default()
        };
        assert_eq!(plan(&deploy, &cm(&["orphan"]), &r, NOW), Plan::Remove);
    }

    #[test]
    fn second_delete_of_a_terminating_object() {
        let info = lookup("", "v1", "configmaps").unwrap();
        let mut o = cm(&["x"]);
        o["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
        o["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        assert_eq!(plan(&info, &o, &req(Some(5), None), NOW), Plan::Keep);
    }

    #[test]
    fn pods() {
        let info = lookup("", "v1", "pods").unwrap();
        let unscheduled =
            json!({"metadata": {"name": "p"}, "spec": {"terminationGracePeriodSeconds": 30}});
        let Plan::Write { obj, then_remove } = plan(&info, &unscheduled, &req(None, None), NOW)
        else {
            panic!()
        };
        assert!(then_remove);
        assert_eq!(obj["metadata"]["deletionGracePeriodSeconds"], json!(0));
        let mut scheduled = unscheduled.clone();
        scheduled["spec"]["nodeName"] = json!("n1");
        let Plan::Write { obj, then_remove } = plan(&info, &scheduled, &req(None, None), NOW)
        else {
            panic!()
        };
        assert!(!then_remove);
        assert_eq!(obj["metadata"]["deletionGracePeriodSeconds"], json!(30));
        assert_eq!(
            obj["metadata"]["deletionTimestamp"],
            json!("2026-01-01T00:00:30Z")
        );
        // Again with a longer or equal period: nothing changes; a shorter one shortens.
        assert_eq!(plan(&info, &obj, &req(Some(30), None), NOW), Plan::Keep);
        assert_eq!(plan(&info, &obj, &req(None, None), NOW), Plan::Keep);
        let Plan::Write {
            obj: o2,
            then_remove,
        } = plan(&info, &obj, &req(Some(0), None), NOW)
        else {
            panic!()
        };
        assert!(then_remove);
        assert_eq!(o2["metadata"]["deletionTimestamp"], json!(NOW));
        let Plan::Write { then_remove, .. } = plan(&info, &scheduled, &req(Some(1), None), NOW)
        else {
            panic!()
        };
        assert!(!then_remove);
    }

    #[test]
    fn namespaces() {
        let info = lookup("", "v1", "namespaces").unwrap();
        let ns = json!({"metadata": {"name": "n"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        let Plan::Write { obj, then_remove } = plan(&info, &ns, &req(Some(1), Some("Orphan")), NOW)
        else {
            panic!()
        };
        assert!(!then_remove);
        assert_eq!(obj["status"]["phase"], json!("Terminating"));
        assert_eq!(obj["metadata"]["finalizers"], json!(["orphan"]));
        assert!(obj["metadata"].get("deletionGracePeriodSeconds").is_none());
        assert_eq!(plan(&info, &obj, &req(None, None), NOW), Plan::Keep);
    }
}
