//! `POST pods/<name>/binding`: the scheduler assigns a pod to a node (kube's `BindingREST`).
//! The body is a core/v1 `Binding` (JSON, YAML or protobuf, as every body).

use http::{Response, StatusCode};
use serde_json::{json, Value};

use super::{respond, Ctx};
use crate::meta::field_error::FieldError;
use crate::meta::status::{GroupResource, Status};
use crate::registry::store::{self, Part};
use crate::server::Body;

pub async fn handle(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let opts = ctx.write_options("CreateOptions")?;
    let binding = Value::Object(super::authentication::decode_kind(
        &ctx.headers,
        &ctx.body,
        "Binding",
    )?);
    let name = store::meta_str(&binding, "name");
    if name != ctx.name() {
        return Err(Status::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let target = binding.get("target").cloned().unwrap_or(json!({}));
    let node = target.get("name").and_then(Value::as_str).unwrap_or("");
    let mut errs = Vec::new();
    if node.is_empty() {
        errs.push(FieldError::required("target.name", ""));
    }
    match target.get("kind").and_then(Value::as_str).unwrap_or("") {
        "" | "Node" => {}
        k => errs.push(FieldError::not_supported(
            "target.kind",
            json!(k),
            &["Node", "<empty>"],
        )),
    }
    if !errs.is_empty() {
        return Err(Status::invalid("Binding", "", name, &errs));
    }
    let uid = store::meta_str(&binding, "uid").to_string();
    let rv = store::meta_str(&binding, "resourceVersion").to_string();
    let annotations = store::meta(&binding)
        .get("annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let conflict = |msg: String| {
        Status::conflict(
            GroupResource {
                group: "",
                resource: "pods/binding",
            },
            ctx.name(),
            &msg,
        )
    };
    let now = ctx.now.clone();
    ctx.app
        .store
        .update_with(ctx.scope(), ctx.name(), Part::Whole, &opts, |pod| {
            let pod_name = store::meta_str(pod, "name");
            if !uid.is_empty() && uid != store::meta_str(pod, "uid") {
                return Err(conflict(format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    store::meta_str(pod, "uid")
                )));
            }
            if !store::meta_str(pod, "deletionTimestamp").is_empty() {
                return Err(conflict(format!(
                    "pod {pod_name} is being deleted, cannot be assigned to a host"
                )));
            }
            if let Some(n) = pod
                .pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
            {
                return Err(conflict(format!(
                    "pod {pod_name} is already assigned to node {n:?}"
                )));
            }
            if pod
                .pointer("/spec/schedulingGates")
                .and_then(Value::as_array)
                .is_some_and(|g| !g.is_empty())
            {
                return Err(conflict(format!(
                    "pod {pod_name} has non-empty .spec.schedulingGates"
                )));
            }
            let mut next = pod.clone();
            next["spec"]["nodeName"] = json!(node);
            if !annotations.is_empty() {
                let m = store::meta_mut(&mut next);
                let a = m.entry("annotations").or_insert_with(|| json!({}));
                if let Some(a) = a.as_object_mut() {
                    for (k, v) in &annotations {
                        a.insert(k.clone(), v.clone());
                    }
                }
            }
            set_scheduled(&mut next, &now);
            store::set_precondition_rv(&mut next, &rv);
            Ok(next)
        })
        .await?;
    let out = ctx.plain_output();
    Ok(respond(
        out,
        StatusCode::CREATED,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    ))
}

/// `PodScheduled=True` (kube's `UpdatePodCondition`: the transition time changes only when the
/// status does).
fn set_scheduled(pod: &mut Value, now: &str) {
    if !pod.get("status").is_some_and(Value::is_object) {
        pod["status"] = json!({});
    }
    let status = pod["status"].as_object_mut().expect("object");
    let conds = status.entry("conditions").or_insert_with(|| json!([]));
    if !conds.is_array() {
        *conds = json!([]);
    }
    let list = conds.as_array_mut().expect("array");
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"))
    {
        Some(c) => {
            if c.get("status").and_then(Value::as_str) != Some("True") {
                c["lastTransitionTime"] = json!(now);
            }
            c["status"] = json!("True");
            if let Some(o) = c.as_object_mut() {
                o.remove("reason");
                o.remove("message");
            }
            c["lastProbeTime"] = Value::Null;
        }
        None => list.push(json!({
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": null,
            "lastTransitionTime": now,
        })),
    }
}
