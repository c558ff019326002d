//! kube's `LimitPodHardAntiAffinityTopology`: a pod's required pod anti-affinity terms may
//! only use the `kubernetes.io/hostname` topology key (create and update).

use serde_json::Value;

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;

pub struct LimitPodHardAntiAffinityTopology;

const HOSTNAME: &str = "kubernetes.io/hostname";

#[async_trait::async_trait]
impl Plugin for LimitPodHardAntiAffinityTopology {
    fn name(&self) -> &'static str {
        "LimitPodHardAntiAffinityTopology"
    }

    async fn validate(&self, a: &Attributes, _h: &Handle) -> Result<(), Status> {
        if !a.subresource.is_empty()
            || !a.resource.group.is_empty()
            || a.resource.kind != "Pod"
            || !matches!(a.operation, Operation::Create | Operation::Update)
        {
            return Ok(());
        }
        let terms = a
            .object
            .as_ref()
            .and_then(|p| {
                p.pointer(
                    "/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution",
                )
            })
            .and_then(Value::as_array);
        for t in terms.into_iter().flatten() {
            let key = t.get("topologyKey").and_then(Value::as_str).unwrap_or("");
            if key != HOSTNAME {
                return Err(a.forbidden(format!(
                    "affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey {key} but only key {HOSTNAME} is allowed"
                )));
            }
        }
        Ok(())
    }
}
