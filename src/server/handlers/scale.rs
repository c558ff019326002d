//! The `scale` subresource (autoscaling/v1 Scale) of deployments, replicasets, statefulsets and
//! replicationcontrollers: GET, PUT and PATCH map onto the parent's replicas.

use http::{header, Response, StatusCode};
use serde_json::{json, Value};

use super::{respond, Ctx};
use crate::meta::labels::Selector;
use crate::meta::status::Status;
use crate::registry::store::{self, Part, ReadAt};
use crate::registry::Resource;
use crate::server::Body;

fn pointer(path: &str) -> String {
    // ".spec.replicas" → "/spec/replicas"
    format!("/{}", path.trim_start_matches('.').replace('.', "/"))
}

/// The Scale object of a parent.
fn scale_of(info: &Resource, obj: &Value) -> Value {
    let s = info.scale.as_ref().expect("scale resource");
    let spec = obj
        .pointer(&pointer(&s.spec_replicas_path))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = obj
        .pointer(&pointer(&s.status_replicas_path))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = s
        .label_selector_path
        .as_deref()
        .and_then(|p| obj.pointer(&pointer(p)))
        .map(|sel| match sel.as_str() {
            Some(text) => text.to_string(),
            None => Selector::from_label_selector(sel)
                .map(|s| s.to_string())
                .unwrap_or_default(),
        })
        .or_else(|| {
            // replicationcontrollers: spec.selector is a plain map.
            obj.pointer("/spec/selector")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                        .collect::<Vec<_>>()
                        .join(",")
                })
        })
        .unwrap_or_default();
    let m = store::meta(obj);
    let mut meta = json!({});
    for f in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = m.get(f) {
            meta[f] = v.clone();
        }
    }
    let mut status_obj = json!({ "replicas": status });
    if !selector.is_empty() {
        status_obj["selector"] = json!(selector);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": meta,
        "spec": { "replicas": spec },
        "status": status_obj,
    })
}

pub async fn handle(ctx: &Ctx, verb: &str) -> Result<Response<Body>, Status> {
    let out = ctx.plain_output();
    match verb {
        "get" => {
            let obj = ctx
                .app
                .store
                .get(ctx.scope(), ctx.name(), ReadAt::Latest)
                .await?;
            Ok(respond(out, StatusCode::OK, &scale_of(&ctx.info, &obj)))
        }
        "update" | "patch" => {
            let opts = ctx.write_options(if verb == "update" {
                "UpdateOptions"
            } else {
                "PatchOptions"
            })?;
            let body: Value = if verb == "update" {
                crate::server::negotiate::decode_body(ctx.content_type(), &ctx.body)?
            } else {
                serde_json::from_slice(&ctx.body)
                    .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?
            };
            let media = ctx
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let info = &ctx.info;
            let spec_path = pointer(&info.scale.as_ref().expect("scale").spec_replicas_path);
            let updated = ctx
                .app
                .store
                .update_with(ctx.scope(), ctx.name(), Part::Main, &opts, |current| {
                    let scale = scale_of(info, current);
                    let new_scale = if verb == "update" {
                        body.clone()
                    } else if media.starts_with("application/json-patch+json") {
                        let p: json_patch::Patch =
                            serde_json::from_value(body.clone()).map_err(|e| {
                                Status::bad_request(format!("error decoding patch: {e}"))
                            })?;
                        let mut d = scale.clone();
                        json_patch::patch(&mut d, &p)
                            .map_err(|e| Status::new(422, "Invalid", e.to_string()))?;
                        d
                    } else {
                        let mut d = scale.clone();
                        json_patch::merge(&mut d, &body);
                        d
                    };
                    let replicas = new_scale
                        .pointer("/spec/replicas")
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    if replicas < 0 {
                        return Err(Status::invalid(
                            "Scale",
                            "autoscaling",
                            store::meta_str(current, "name"),
                            &[crate::meta::field_error::FieldError::invalid(
                                "spec.replicas",
                                json!(replicas),
                                "must be greater than or equal to 0",
                            )],
                        ));
                    }
                    let mut next = current.clone();
                    if let Some(slot) = next.pointer_mut(&spec_path) {
                        *slot = json!(replicas);
                    } else if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
                        spec.insert("replicas".into(), json!(replicas));
                    }
                    let rv = store::meta_str(&new_scale, "resourceVersion").to_string();
                    store::set_precondition_rv(&mut next, &rv);
                    Ok(next)
                })
                .await?;
            Ok(respond(out, StatusCode::OK, &scale_of(info, &updated)))
        }
        _ => Err(Status::method_not_supported(ctx.scope().gr(), verb)),
    }
}
