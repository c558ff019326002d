//! The `scale` subresource (autoscaling/v1 Scale) of deployments, replicasets, statefulsets,
//! replicationcontrollers and custom resources: GET, PUT and PATCH (server-side apply
//! included) map onto the parent's replicas.
//!
//! Field ownership follows kube's scale handler ([`crate::apply::scale`]): the parent's entries
//! owning its replicas become the Scale's, the scale endpoint's field manager (autoscaling/v1
//! Scale, subresource `scale`) records the write on the Scale, and the Scale's entries are
//! folded back onto the parent. Custom resources' endpoints have no Scale type to record with,
//! as in kube: an update drops the Scale's entries (replicas ends up owned by nobody) and an
//! apply fails with kube's 500.

use http::{header, Response, StatusCode};
use serde_json::{json, Value};

use super::{respond, Ctx};
use crate::apply::fieldpath::{Path, Set};
use crate::apply::managed_fields::{self, Times};
use crate::apply::manager::FieldManager;
use crate::apply::merge::Managers;
use crate::apply::scale;
use crate::apply::typed::Schema;
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
            let media = ctx
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let apply = verb == "patch" && media.starts_with("application/apply-patch+yaml");
            let mut opts = ctx.write_options(if verb == "update" {
                "UpdateOptions"
            } else {
                "PatchOptions"
            })?;
            // The scale handler records the write itself (on the Scale, mapped to the parent).
            let manager = opts.field_manager.take().unwrap_or_default();
            let body: Value = if verb == "update" {
                crate::server::negotiate::decode_body(ctx.content_type(), &ctx.body)?
            } else if apply {
                scale_config(ctx)?
            } else {
                serde_json::from_slice(&ctx.body)
                    .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?
            };
            let force = matches!(
                ctx.query.get("force").unwrap_or(""),
                "1" | "t" | "T" | "TRUE" | "true" | "True"
            );
            let info = &ctx.info;
            let spec_path = pointer(&info.scale.as_ref().expect("scale").spec_replicas_path);
            let fm = scale_field_manager(info);
            let now = opts.now.clone();
            let updated = ctx
                .app
                .store
                .update_with(ctx.scope(), ctx.name(), Part::Main, &opts, |current| {
                    let mut scale = scale_of(info, current);
                    let parent = Entries::of(info, current)?;
                    parent.to_subresource(&mut scale);
                    let new_scale = if apply {
                        match &fm {
                            Some(fm) => fm
                                .apply(&scale, &body, &manager, force, &now)
                                .map_err(|e| super::apply::apply_status(e, &body))?,
                            // kube's custom resource endpoints know no Scale type to apply with.
                            None => {
                                return Err(Status::new(
                                    500,
                                    "",
                                    format!(
                                        "failed to create typed patch object ({}): no corresponding type for autoscaling/v1, Kind=Scale",
                                        super::apply::object_gvknn(&body)
                                    ),
                                ))
                            }
                        }
                    } else {
                        let mut new_scale = if verb == "update" {
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
                        match &fm {
                            Some(fm) if !manager.is_empty() => {
                                fm.update(&scale, &mut new_scale, &manager, &now)
                            }
                            // Without a Scale type kube's field manager fails the update and
                            // drops the entries (`UpdateNoErrors`).
                            None => {
                                if let Some(m) =
                                    new_scale.get_mut("metadata").and_then(Value::as_object_mut)
                                {
                                    m.remove("managedFields");
                                }
                            }
                            Some(_) => {}
                        }
                        new_scale
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
                    parent.to_parent(&new_scale, &mut next)?;
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

/// The scale endpoint's field manager: kube's, over the autoscaling/v1 Scale type, with no
/// reset fields. `None` for custom resources, whose type converter (their versions' schemas)
/// has no Scale type.
fn scale_field_manager(info: &Resource) -> Option<FieldManager<'static>> {
    if info.strategy.structural_schema().is_some() {
        return None;
    }
    Some(FieldManager {
        schema: Schema::builtin("autoscaling", "v1", "Scale")?,
        api_version: scale::SCALE_API_VERSION.into(),
        subresource: "scale".into(),
        reset: Set::new(),
        versions: None,
        zero: json!({}),
    })
}

/// An apply body for the Scale, read and checked as the apply handler reads and kube's field
/// manager checks one.
fn scale_config(ctx: &Ctx) -> Result<Value, Status> {
    if ctx.query.get("fieldManager").unwrap_or("").is_empty() {
        return Err(Status::invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            &[crate::meta::field_error::FieldError::required(
                "fieldManager",
                "is required for apply patch",
            )],
        ));
    }
    let config = super::apply_config(ctx)?;
    let config = match config {
        Value::Object(_) => config,
        Value::Null => json!({}),
        _ => {
            return Err(Status::bad_request(
                "error decoding YAML: the apply patch is not an object",
            ))
        }
    };
    let api = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if api != scale::SCALE_API_VERSION {
        return Err(Status::bad_request(format!(
            "Incorrect version specified in apply patch. Specified patch version: {api}, expected: {}",
            scale::SCALE_API_VERSION
        )));
    }
    if config.pointer("/metadata/managedFields").is_some() {
        return Err(Status::bad_request("metadata.managedFields must be nil"));
    }
    Ok(config)
}

/// The parent's entries at the start of a scale write, and how its versions map replicas.
struct Entries {
    managers: Managers,
    times: Times,
    api_version: String,
    replicas: Path,
}

impl Entries {
    fn of(info: &Resource, parent: &Value) -> Result<Entries, Status> {
        let (managers, times) = managed_fields::decode(store::meta(parent).get("managedFields"))
            .map_err(|e| Status::internal(format!("failed to decode managed fields: {e}")))?;
        let path = &info.scale.as_ref().expect("scale").spec_replicas_path;
        Ok(Entries {
            managers,
            times,
            api_version: info.api_version(),
            replicas: scale::path_of(path),
        })
    }

    /// The parent's versions: this one has its replicas path; the group's other versions (of
    /// which this entry does not know the path) keep their entries; other groups are unknown.
    fn mapping(&self, version: &str) -> scale::Replicas {
        let group = |v: &str| {
            v.rsplit_once('/')
                .map(|(g, _)| g.to_string())
                .unwrap_or_default()
        };
        if version == self.api_version {
            scale::Replicas::At(self.replicas.clone())
        } else if group(version) == group(&self.api_version) {
            scale::Replicas::None
        } else {
            scale::Replicas::Unknown
        }
    }

    fn to_subresource(&self, scale: &mut Value) {
        let (m, t) = scale::to_subresource(&self.managers, &self.times, &|v| self.mapping(v));
        if !m.is_empty() {
            store::meta_mut(scale).insert("managedFields".into(), managed_fields::encode(&m, &t));
        }
    }

    fn to_parent(&self, new_scale: &Value, parent: &mut Value) -> Result<(), Status> {
        let (sm, _) = managed_fields::decode(store::meta(new_scale).get("managedFields"))
            .map_err(|e| Status::internal(format!("failed to decode managed fields: {e}")))?;
        let (m, t) = scale::to_parent(
            &self.managers,
            &self.times,
            &sm,
            &self.api_version,
            &self.replicas,
            &|v| self.mapping(v),
        );
        let meta = store::meta_mut(parent);
        if m.is_empty() {
            // (`[]`: the store's bookkeeping, which has no manager here, drops them.)
            meta.insert("managedFields".into(), json!([]));
        } else {
            meta.insert("managedFields".into(), managed_fields::encode(&m, &t));
        }
        Ok(())
    }
}
