//! kube's `Priority` plugin: a new pod gets `priority` (and `preemptionPolicy`) from its
//! `priorityClassName`, or from the `globalDefault` PriorityClass (lowest value if several;
//! none: priority 0, `PreemptLowerPriority`), and may not state others; an unknown class is
//! refused. Updates keep the priority the pod was created with. A second `globalDefault`
//! PriorityClass is refused. The system classes themselves are created at start
//! (`controllers::bootstrap`).

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;
use crate::registry::object::meta_str;

pub struct Priority;

fn is_kind(a: &Attributes, group: &str, kind: &str) -> bool {
    a.subresource.is_empty() && a.resource.group == group && a.resource.kind == kind
}

/// `getDefaultPriorityClass`: the global default with the lowest value.
async fn default_class(h: &Handle) -> Option<Value> {
    h.list("scheduling.k8s.io", "v1", "priorityclasses", None)
        .await
        .into_iter()
        .filter(|pc| pc.get("globalDefault").and_then(Value::as_bool) == Some(true))
        .min_by_key(|pc| pc.get("value").and_then(Value::as_i64).unwrap_or(0))
}

#[async_trait::async_trait]
impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if !is_kind(a, "", "Pod") {
            return Ok(());
        }
        match a.operation {
            Operation::Update => {
                let old = a.old_object.clone().unwrap_or(Value::Null);
                let Some(spec) = a
                    .object
                    .as_mut()
                    .and_then(|p| p.get_mut("spec"))
                    .and_then(Value::as_object_mut)
                else {
                    return Ok(());
                };
                for f in ["priority", "preemptionPolicy"] {
                    if spec.get(f).is_none_or(Value::is_null) {
                        if let Some(v) = old.pointer(&format!("/spec/{f}")).filter(|v| !v.is_null())
                        {
                            spec.insert(f.into(), v.clone());
                        }
                    }
                }
                Ok(())
            }
            Operation::Create => {
                let Some(pod) = a.object.as_ref() else {
                    return Ok(());
                };
                let class = pod
                    .pointer("/spec/priorityClassName")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let (name, value, policy) = if class.is_empty() {
                    match default_class(h).await {
                        Some(pc) => (
                            meta_str(&pc, "name").to_string(),
                            pc.get("value").and_then(Value::as_i64).unwrap_or(0),
                            pc.get("preemptionPolicy").cloned(),
                        ),
                        None => (String::new(), 0, Some(json!("PreemptLowerPriority"))),
                    }
                } else {
                    match h
                        .get("scheduling.k8s.io", "v1", "priorityclasses", None, &class)
                        .await
                    {
                        Some(pc) => (
                            class.clone(),
                            pc.get("value").and_then(Value::as_i64).unwrap_or(0),
                            pc.get("preemptionPolicy").cloned(),
                        ),
                        None => {
                            return Err(a.forbidden(format!(
                                "no PriorityClass with name {class} was found"
                            )))
                        }
                    }
                };
                if let Some(given) = pod.pointer("/spec/priority").and_then(Value::as_i64) {
                    if given != value {
                        return Err(a.forbidden(format!(
                            "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
                        )));
                    }
                }
                let policy = policy.filter(|p| !p.is_null());
                if let (Some(p), Some(given)) = (
                    policy.as_ref().and_then(Value::as_str),
                    pod.pointer("/spec/preemptionPolicy")
                        .and_then(Value::as_str),
                ) {
                    if given != p {
                        return Err(a.forbidden(format!(
                            "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {p} from the given PriorityClass name"
                        )));
                    }
                }
                let Some(spec) = a
                    .object
                    .as_mut()
                    .and_then(|p| p.get_mut("spec"))
                    .and_then(Value::as_object_mut)
                else {
                    return Ok(());
                };
                if class.is_empty() && !name.is_empty() {
                    spec.insert("priorityClassName".into(), json!(name));
                }
                spec.insert("priority".into(), json!(value));
                if let Some(p) = policy {
                    spec.insert("preemptionPolicy".into(), p);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if !is_kind(a, "scheduling.k8s.io", "PriorityClass")
            || !matches!(a.operation, Operation::Create | Operation::Update)
        {
            return Ok(());
        }
        let Some(pc) = a.object.as_ref() else {
            return Ok(());
        };
        if pc.get("globalDefault").and_then(Value::as_bool) != Some(true) {
            return Ok(());
        }
        if let Some(d) = default_class(h).await {
            let other = meta_str(&d, "name");
            if a.operation == Operation::Create || other != meta_str(pc, "name") {
                return Err(a.forbidden(format!(
                    "PriorityClass {other} is marked as default. Only one default can exist"
                )));
            }
        }
        Ok(())
    }
}
