//! kube's `TaintNodesByCondition`: a new Node gets the `node.kubernetes.io/not-ready`
//! NoSchedule taint (unless it has it), so that nothing is scheduled to it before the node
//! lifecycle controller sees it ready.

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;

pub struct TaintNodesByCondition;

const KEY: &str = "node.kubernetes.io/not-ready";

#[async_trait::async_trait]
impl Plugin for TaintNodesByCondition {
    fn name(&self) -> &'static str {
        "TaintNodesByCondition"
    }

    async fn admit(&self, a: &mut Attributes, _h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Create
            || !a.subresource.is_empty()
            || !a.resource.group.is_empty()
            || a.resource.kind != "Node"
        {
            return Ok(());
        }
        let Some(node) = a.object.as_mut().and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let spec = node.entry("spec").or_insert_with(|| json!({}));
        let Some(spec) = spec.as_object_mut() else {
            return Ok(());
        };
        let taints = spec.entry("taints").or_insert_with(|| json!([]));
        if !taints.is_array() {
            *taints = json!([]);
        }
        let Some(taints) = taints.as_array_mut() else {
            return Ok(());
        };
        let has = taints.iter().any(|t| {
            t.get("key").and_then(Value::as_str) == Some(KEY)
                && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
        });
        if !has {
            taints.push(json!({"key": KEY, "effect": "NoSchedule"}));
        }
        Ok(())
    }
}
