//! The generic halves of PrepareForCreate and PrepareForUpdate, which every resource shares
//! and which call into the resource's [`Strategy`](super::strategy::Strategy): status reset
//! and kept per subresource, apiVersion/kind, system fields kept from the stored object,
//! `metadata.generation` bumped on spec changes. Pure, like the strategies.

use serde_json::{json, Value};

use super::object::{meta, meta_mut, Part, Requester};
use super::resource::Resource;

/// apiVersion and kind as this resource stores them.
pub fn set_type_meta(res: &Resource, obj: &mut Value) {
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!(res.storage_api_version()));
        o.insert("kind".into(), json!(res.kind));
    }
}

/// A subresource write keeps the stored object but for its part, and the `managedFields` the
/// field manager recorded for the write (as kube's status strategies keep them).
fn keep_managed(new: &mut Value, managed: Option<Value>) {
    match managed {
        Some(m) => {
            meta_mut(new).insert("managedFields".into(), m);
        }
        None => {
            if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("managedFields");
            }
        }
    }
}

/// PrepareForCreate: reset status, defaults, then the resource's initial values. `requester`
/// is the user the request runs as (`None`: the server's own write).
pub fn prepare_for_create(res: &Resource, obj: &mut Value, requester: Option<&Requester>) {
    let s = &res.strategy;
    if res.has_status && !s.keeps_status_on_create() {
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
    }
    set_type_meta(res, obj);
    s.prepare_for_create(obj);
    s.record_requester(obj, requester);
    s.default(obj);
    s.initialize(obj);
}

/// PrepareForUpdate: system fields come from the old object; the spec/status split. `now` is
/// the request's time (RFC 3339).
pub fn prepare_for_update(res: &Resource, part: Part, new: &mut Value, old: &Value, now: &str) {
    set_type_meta(res, new);
    if part == Part::Approval {
        let conditions = new.pointer("/status/conditions").cloned();
        let rv = meta(new).get("resourceVersion").cloned();
        let managed = meta(new).get("managedFields").cloned();
        *new = old.clone();
        keep_managed(new, managed);
        let status = super::strategy::obj_entry(new, "status");
        match conditions {
            Some(c) => {
                status.insert("conditions".into(), c);
            }
            None => {
                status.remove("conditions");
            }
        }
        if let Some(rv) = rv {
            meta_mut(new).insert("resourceVersion".into(), rv);
        }
        res.strategy.prepare_for_approval(new, old, now);
        res.strategy.default(new);
        return;
    }
    if let Part::Sub(sub) = part {
        // kube's ResetObjectMetaForStatus: all but the name, namespace, uid and
        // resourceVersion come from the stored object; the strategy takes its part.
        let rv = meta(new).get("resourceVersion").cloned();
        let managed = meta(new).get("managedFields").cloned();
        let sent = std::mem::replace(new, old.clone());
        keep_managed(new, managed);
        for f in ["name", "namespace", "uid"] {
            if let Some(v) = meta(&sent).get(f).filter(|v| v.as_str() != Some("")) {
                meta_mut(new).insert(f.into(), v.clone());
            }
        }
        match rv {
            Some(rv) => {
                meta_mut(new).insert("resourceVersion".into(), rv);
            }
            None => {
                meta_mut(new).remove("resourceVersion");
            }
        }
        res.strategy
            .prepare_for_subresource_update(sub, new, &sent, old);
        res.strategy.default(new);
        bump_generation(res, new, old);
        return;
    }
    if part == Part::Status {
        let status = new.get("status").cloned();
        let rv = meta(new).get("resourceVersion").cloned();
        let sent = meta(new).clone();
        *new = old.clone();
        keep_managed(new, sent.get("managedFields").cloned());
        for f in res.strategy.status_metadata() {
            match sent.get(*f) {
                Some(v) => {
                    meta_mut(new).insert(f.to_string(), v.clone());
                }
                None => {
                    meta_mut(new).remove(*f);
                }
            }
        }
        match status {
            Some(s) => new["status"] = s,
            None => {
                if let Some(o) = new.as_object_mut() {
                    o.remove("status");
                }
            }
        }
        // The sent resourceVersion, or none (some status rules require one).
        match rv {
            Some(rv) => {
                meta_mut(new).insert("resourceVersion".into(), rv);
            }
            None => {
                meta_mut(new).remove("resourceVersion");
            }
        }
        res.strategy.prepare_for_status_update(new, old, now);
        // kube defaults every decoded body, a status update's too.
        res.strategy.default(new);
        return;
    }
    if res.has_status && part != Part::Whole {
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(o) = new.as_object_mut() {
                    o.remove("status");
                }
            }
        }
    }
    res.strategy.prepare_for_update(new, old);
    res.strategy.default(new);
    let old_meta = meta(old).clone();
    let m = meta_mut(new);
    for f in ["uid"] {
        let empty = m.get(f).and_then(Value::as_str).is_none_or(str::is_empty);
        if empty {
            if let Some(v) = old_meta.get(f) {
                m.insert(f.into(), v.clone());
            }
        }
    }
    for f in [
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(f) {
            Some(v) => {
                m.insert(f.into(), v.clone());
            }
            None => {
                m.remove(f);
            }
        }
    }
    bump_generation(res, new, old);
}

/// `metadata.generation` + 1 when the write changed the spec of a kind that keeps one.
fn bump_generation(res: &Resource, new: &mut Value, old: &Value) {
    if res.generation && spec_changed(new, old, res.has_status) {
        let g = meta(new)
            .get("generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(new).insert("generation".into(), json!(g + 1));
    }
}

/// The namespace /finalize subresource: only spec.finalizers changes.
pub fn prepare_for_finalize(new: &mut Value, old: &Value) {
    let fins = new.get("spec").and_then(|s| s.get("finalizers")).cloned();
    let rv = meta(new).get("resourceVersion").cloned();
    let managed = meta(new).get("managedFields").cloned();
    *new = old.clone();
    keep_managed(new, managed);
    new["spec"] = match fins {
        Some(f) => json!({ "finalizers": f }),
        None => json!({}),
    };
    if let Some(rv) = rv {
        meta_mut(new).insert("resourceVersion".into(), rv);
    }
}

/// Whether an update changes more than metadata (and the status, when a subresource owns
/// it): kube bumps `metadata.generation` then. `apiVersion`/`kind` labels do not count.
fn spec_changed(new: &Value, old: &Value, status_subresource: bool) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            for k in ["metadata", "apiVersion", "kind"] {
                o.remove(k);
            }
            if status_subresource {
                o.remove("status");
            }
        }
        v
    };
    strip(new) != strip(old)
}
