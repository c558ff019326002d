//! kube's `RuntimeClass` plugin, for pods on create: a pod naming a `runtimeClassName` gets
//! the class's `overhead.podFixed` as `spec.overhead` (a different overhead already set is
//! refused) and its `scheduling` (node selector merged, a conflicting key refused;
//! tolerations merged); an unknown class is refused; the validating phase checks that the
//! overhead matches the class (and that a pod without such a class states none).

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;
use crate::registry::builtin::core::quantity::Quantity;

use super::tolerations;

pub struct RuntimeClass;

fn applies(a: &Attributes) -> bool {
    a.operation == Operation::Create
        && a.subresource.is_empty()
        && a.resource.group.is_empty()
        && a.resource.kind == "Pod"
}

/// The pod's RuntimeClass (`Ok(None)`: it names none).
async fn class_of(a: &Attributes, h: &Handle) -> Result<Option<Value>, Status> {
    let Some(name) = a
        .object
        .as_ref()
        .and_then(|p| p.pointer("/spec/runtimeClassName"))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    match h
        .get("node.k8s.io", "v1", "runtimeclasses", None, name)
        .await
    {
        Some(rc) => Ok(Some(rc)),
        None => Err(a.forbidden(format!("pod rejected: RuntimeClass \"{name}\" not found"))),
    }
}

/// `apiequality.Semantic.DeepEqual` of two ResourceLists (quantities compared by value).
fn same_resources(x: Option<&Value>, y: Option<&Value>) -> bool {
    let empty = serde_json::Map::new();
    let x = x.and_then(Value::as_object).unwrap_or(&empty);
    let y = y.and_then(Value::as_object).unwrap_or(&empty);
    x.len() == y.len()
        && x.iter().all(|(k, v)| {
            y.get(k)
                .is_some_and(|w| match (Quantity::of(v), Quantity::of(w)) {
                    (Some(a), Some(b)) => a.cmp(&b) == std::cmp::Ordering::Equal,
                    _ => v == w,
                })
        })
}

fn overhead(rc: &Value) -> Option<&Value> {
    rc.pointer("/overhead/podFixed").filter(|v| !v.is_null())
}

fn non_empty(v: Option<&Value>) -> bool {
    v.and_then(Value::as_object).is_some_and(|m| !m.is_empty())
}

#[async_trait::async_trait]
impl Plugin for RuntimeClass {
    fn name(&self) -> &'static str {
        "RuntimeClass"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if !applies(a) {
            return Ok(());
        }
        let Some(rc) = class_of(a, h).await? else {
            return Ok(());
        };
        let Some(pod) = a.object.as_ref() else {
            return Ok(());
        };
        let mut pod = pod.clone();
        if rc.get("overhead").is_some_and(|o| !o.is_null()) {
            let fixed = overhead(&rc);
            let current = pod.pointer("/spec/overhead");
            if non_empty(current) && !same_resources(fixed, current) {
                return Err(a.forbidden(
                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                ));
            }
            if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
                match fixed {
                    Some(f) => spec.insert("overhead".into(), f.clone()),
                    None => spec.remove("overhead"),
                };
            }
        }
        if let Some(sched) = rc.get("scheduling").filter(|s| !s.is_null()) {
            let mut selector = pod
                .pointer("/spec/nodeSelector")
                .and_then(Value::as_object)
                .cloned();
            let from_class = sched
                .get("nodeSelector")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            match selector.as_mut() {
                None => {
                    if !from_class.is_empty() {
                        selector = Some(from_class);
                    }
                }
                Some(sel) => {
                    for (k, v) in from_class {
                        if let Some(pv) = sel.get(&k).filter(|pv| **pv != v) {
                            return Err(a.forbidden(format!(
                                "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {}; pod.spec.nodeSelector[{k}] = {}",
                                v.as_str().unwrap_or(""),
                                pv.as_str().unwrap_or("")
                            )));
                        }
                        sel.insert(k, v);
                    }
                }
            }
            let extra = sched
                .get("tolerations")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let merged = tolerations::merge(&tolerations::of(&pod), &extra);
            if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
                if let Some(sel) = selector {
                    spec.insert("nodeSelector".into(), Value::Object(sel));
                }
                if merged.is_empty() {
                    spec.remove("tolerations");
                } else {
                    spec.insert("tolerations".into(), json!(merged));
                }
            }
        }
        a.object = Some(pod);
        Ok(())
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if !applies(a) {
            return Ok(());
        }
        let rc = class_of(a, h).await?;
        let current = a.object.as_ref().and_then(|p| p.pointer("/spec/overhead"));
        match rc
            .as_ref()
            .filter(|rc| rc.get("overhead").is_some_and(|o| !o.is_null()))
        {
            Some(rc) => {
                if !same_resources(overhead(rc), current) {
                    return Err(a.forbidden(
                        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                    ));
                }
            }
            None => {
                if non_empty(current) {
                    return Err(a.forbidden(
                        "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
                    ));
                }
            }
        }
        Ok(())
    }
}
