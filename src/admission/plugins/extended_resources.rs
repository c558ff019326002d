//! kube's `ExtendedResourceToleration`: a pod (create and update) whose containers or init
//! containers request an extended resource (a name with a domain other than
//! `kubernetes.io/`, e.g. `example.com/gpu`) gets an `Exists` NoSchedule toleration for a
//! taint of that name, so that nodes tainted for the resource accept it.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;

pub struct ExtendedResourceToleration;

/// `helper.IsExtendedResourceName` (the name's syntax was validated already).
fn extended(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

fn s<'a>(t: &'a Value, k: &str) -> &'a str {
    t.get(k).and_then(Value::as_str).unwrap_or("")
}

/// `AddOrUpdateTolerationInPod`: replaces the toleration that matches (key, operator,
/// value, effect), or appends it.
fn add_or_update(tols: &mut Vec<Value>, t: Value) {
    let matches = |x: &Value| {
        ["key", "operator", "value", "effect"]
            .iter()
            .all(|k| s(x, k) == s(&t, k))
    };
    if tols.iter().any(|x| *x == t) {
        return;
    }
    let mut updated = false;
    for x in tols.iter_mut() {
        if matches(x) {
            *x = t.clone();
            updated = true;
        }
    }
    if !updated {
        tols.push(t);
    }
}

#[async_trait::async_trait]
impl Plugin for ExtendedResourceToleration {
    fn name(&self) -> &'static str {
        "ExtendedResourceToleration"
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
        let names: BTreeSet<String> = ["containers", "initContainers"]
            .iter()
            .filter_map(|l| pod.pointer(&format!("/spec/{l}")).and_then(Value::as_array))
            .flatten()
            .filter_map(|c| c.pointer("/resources/requests").and_then(Value::as_object))
            .flat_map(|m| m.keys())
            .filter(|k| extended(k))
            .cloned()
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        let mut tols = super::tolerations::of(pod);
        for n in names {
            add_or_update(
                &mut tols,
                json!({"key": n, "operator": "Exists", "effect": "NoSchedule"}),
            );
        }
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("tolerations".into(), Value::Array(tols));
        }
        Ok(())
    }
}
