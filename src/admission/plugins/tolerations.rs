//! kube's `DefaultTolerationSeconds`: a pod (create and update) that does not tolerate the
//! `node.kubernetes.io/not-ready` / `node.kubernetes.io/unreachable` NoExecute taints gets
//! tolerations for them with `tolerationSeconds` from `--default-not-ready-toleration-seconds`
//! and `--default-unreachable-toleration-seconds` (300 each). Also the toleration helpers
//! other pod plugins share (`MergeTolerations`, `isSuperset`).

use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;

static NOT_READY_SECONDS: AtomicI64 = AtomicI64::new(300);
static UNREACHABLE_SECONDS: AtomicI64 = AtomicI64::new(300);

/// The flags' values, read when the chain is built (one setting per process).
pub fn set_defaults(not_ready: i64, unreachable: i64) {
    NOT_READY_SECONDS.store(not_ready, Ordering::Relaxed);
    UNREACHABLE_SECONDS.store(unreachable, Ordering::Relaxed);
}

pub struct DefaultTolerationSeconds {
    not_ready: i64,
    unreachable: i64,
}

impl DefaultTolerationSeconds {
    pub fn from_flags() -> DefaultTolerationSeconds {
        DefaultTolerationSeconds {
            not_ready: NOT_READY_SECONDS.load(Ordering::Relaxed),
            unreachable: UNREACHABLE_SECONDS.load(Ordering::Relaxed),
        }
    }
}

fn s<'a>(t: &'a Value, k: &str) -> &'a str {
    t.get(k).and_then(Value::as_str).unwrap_or("")
}

/// The pod's tolerations (as stored: an array, possibly missing).
pub fn of(pod: &Value) -> Vec<Value> {
    pod.pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// `isSuperset`: whether `ss` tolerates everything `t` does.
pub fn is_superset(ss: &Value, t: &Value) -> bool {
    if ss == t {
        return true;
    }
    if s(t, "key") != s(ss, "key") && (!s(ss, "key").is_empty() || s(ss, "operator") != "Exists") {
        return false;
    }
    if s(t, "effect") != s(ss, "effect") && !s(ss, "effect").is_empty() {
        return false;
    }
    if s(ss, "effect") == "NoExecute" {
        if let Some(limit) = ss.get("tolerationSeconds").and_then(Value::as_i64) {
            match t.get("tolerationSeconds").and_then(Value::as_i64) {
                Some(v) if v <= limit => {}
                _ => return false,
            }
        }
    }
    match s(ss, "operator") {
        "Equal" | "" => s(t, "operator") == "Equal" && s(t, "value") == s(ss, "value"),
        "Exists" => true,
        _ => false,
    }
}

/// `MergeTolerations`: both lists, without those another one covers (of equal ones, the
/// first stays).
pub fn merge(first: &[Value], second: &[Value]) -> Vec<Value> {
    let all: Vec<&Value> = first.iter().chain(second).collect();
    let mut merged: Vec<Value> = Vec::new();
    'next: for (i, t) in all.iter().enumerate() {
        if merged.iter().any(|m| is_superset(m, t)) {
            continue;
        }
        for t2 in &all[i + 1..] {
            if t != t2 && is_superset(t2, t) {
                continue 'next;
            }
        }
        merged.push((*t).clone());
    }
    merged
}

#[async_trait::async_trait]
impl Plugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    async fn admit(&self, a: &mut Attributes, _h: &Handle) -> Result<(), Status> {
        if !a.subresource.is_empty()
            || !a.resource.group.is_empty()
            || a.resource.kind != "Pod"
            || !matches!(a.operation, Operation::Create | Operation::Update)
        {
            return Ok(());
        }
        let Some(pod) = a.object.as_mut() else {
            return Ok(());
        };
        let mut tols = of(pod);
        let tolerates = |key: &str| {
            tols.iter().any(|t| {
                (s(t, "key") == key || s(t, "key").is_empty())
                    && (s(t, "effect") == "NoExecute" || s(t, "effect").is_empty())
            })
        };
        let (not_ready, unreachable) = (
            tolerates("node.kubernetes.io/not-ready"),
            tolerates("node.kubernetes.io/unreachable"),
        );
        if not_ready && unreachable {
            return Ok(());
        }
        if !not_ready {
            tols.push(json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": self.not_ready}));
        }
        if !unreachable {
            tols.push(json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": self.unreachable}));
        }
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("tolerations".into(), Value::Array(tols));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging() {
        let all = json!({"operator": "Exists"});
        let a = json!({"key": "a", "operator": "Equal", "value": "1", "effect": "NoSchedule"});
        assert_eq!(merge(&[a.clone()], &[all.clone()]), vec![all.clone()]);
        let b = json!({"key": "b", "operator": "Exists"});
        assert_eq!(merge(&[a.clone()], &[b.clone(), a.clone()]), vec![a, b]);
    }
}
