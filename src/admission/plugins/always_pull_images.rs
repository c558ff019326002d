//! kube's `AlwaysPullImages`: every container (init, regular, ephemeral) of a pod created,
//! or updated with an image it did not have, gets `imagePullPolicy: Always`, so that only
//! those allowed to pull an image can use it; the validating phase refuses any other policy.

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;

pub struct AlwaysPullImages;

const LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

fn images(pod: &Value) -> Vec<&str> {
    LISTS
        .iter()
        .filter_map(|l| pod.pointer(&format!("/spec/{l}")).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| c.get("image").and_then(Value::as_str))
        .collect()
}

fn ignored(a: &Attributes) -> bool {
    if !a.subresource.is_empty()
        || !a.resource.group.is_empty()
        || a.resource.kind != "Pod"
        || !matches!(a.operation, Operation::Create | Operation::Update)
    {
        return true;
    }
    // An update that brings no new image.
    match (a.operation, a.object.as_ref(), a.old_object.as_ref()) {
        (Operation::Update, Some(new), Some(old)) => {
            let before = images(old);
            images(new).iter().all(|i| before.contains(i))
        }
        _ => false,
    }
}

#[async_trait::async_trait]
impl Plugin for AlwaysPullImages {
    fn name(&self) -> &'static str {
        "AlwaysPullImages"
    }

    async fn admit(&self, a: &mut Attributes, _h: &Handle) -> Result<(), Status> {
        if ignored(a) {
            return Ok(());
        }
        let Some(pod) = a.object.as_mut() else {
            return Ok(());
        };
        for l in LISTS {
            if let Some(cs) = pod
                .pointer_mut(&format!("/spec/{l}"))
                .and_then(Value::as_array_mut)
            {
                for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                    c.insert("imagePullPolicy".into(), json!("Always"));
                }
            }
        }
        Ok(())
    }

    async fn validate(&self, a: &Attributes, _h: &Handle) -> Result<(), Status> {
        if ignored(a) {
            return Ok(());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(());
        };
        for l in LISTS {
            let cs = pod.pointer(&format!("/spec/{l}")).and_then(Value::as_array);
            for (i, c) in cs.into_iter().flatten().enumerate() {
                let p = c
                    .get("imagePullPolicy")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if p != "Always" {
                    return Err(a.forbidden(format!(
                        "spec.{l}[{i}].imagePullPolicy: Unsupported value: \"{p}\": supported values: \"Always\""
                    )));
                }
            }
        }
        Ok(())
    }
}
