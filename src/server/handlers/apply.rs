//! Server-side apply: `PATCH` with `application/apply-patch+yaml` (YAML or JSON body), as
//! kube-apiserver's apply patcher handles it, on the main resource of built-in types. The
//! merge, ownership, conflicts and the kubectl migration rules are the field manager's
//! ([`crate::apply::manager`]); this module reads the request (`fieldManager` required,
//! `force`), rejects `managedFields` and a wrong apiVersion in the body as kube does, and
//! creates the object when absent (201). The store's Update bookkeeping is bypassed (no
//! manager in the write options), so an apply never records an Update entry.
//!
//! Not yet: custom resources and `/status` (415 as before), conversion of other managers'
//! versions.

use http::{Response, StatusCode};
use serde_json::{json, Value};

use super::{respond_object, Ctx};
use crate::apply::manager::ManagerError;
use crate::apply::merge::{self, ApplyError};
use crate::meta::field_error::FieldError;
use crate::meta::status::Status;
use crate::registry::store::Part;
use crate::server::Body;

pub async fn handle(ctx: &Ctx, part: Part) -> Result<Response<Body>, Status> {
    let definition = ctx.info.definition.clone();
    if part != Part::Main || !ctx.info.strategy.strategic_merge_patch() {
        return Err(Status::unsupported_media_type(
            "application/apply-patch+yaml",
            super::accepted_patch_types(ctx),
        ));
    }
    let manager = ctx.query.get("fieldManager").unwrap_or("").to_string();
    let mut opts = ctx.write_options("PatchOptions")?;
    if manager.is_empty() {
        return Err(Status::invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            &[FieldError::required(
                "fieldManager",
                "is required for apply patch",
            )],
        ));
    }
    // The store records Update entries for a known manager; an apply records its own.
    opts.field_manager = None;
    let force = matches!(
        ctx.query.get("force").unwrap_or(""),
        "1" | "t" | "T" | "TRUE" | "true" | "True"
    );
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
    let want_api = ctx.info.api_version();
    let api = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if api != want_api {
        return Err(Status::bad_request(format!(
            "Incorrect version specified in apply patch. Specified patch version: {}, expected: {want_api}",
            if api.is_empty() { "" } else { api }
        )));
    }
    if config.pointer("/metadata/managedFields").is_some() {
        return Err(Status::bad_request("metadata.managedFields must be nil"));
    }
    let Some(fm) = crate::registry::managed::field_manager(&ctx.info, part) else {
        return Err(Status::unsupported_media_type(
            "application/apply-patch+yaml",
            super::accepted_patch_types(ctx),
        ));
    };
    let now = opts.now.clone();
    let run = |live: &Value| -> Result<Value, Status> {
        let mut obj = fm
            .apply(live, &config, &manager, force, &now)
            .map_err(apply_status)?;
        strip_nulls(&mut obj);
        let m = crate::registry::store::meta_mut(&mut obj);
        // A resourceVersion in the configuration is a precondition; otherwise none.
        match config.pointer("/metadata/resourceVersion") {
            Some(rv) => m.insert("resourceVersion".into(), rv.clone()),
            None => m.remove("resourceVersion"),
        };
        super::check_types(&ctx.info, &obj)?;
        crate::openapi::prune_unknown(&definition, &mut obj);
        if ctx.info.converts() {
            ctx.info.strategy.to_storage(&mut obj)?;
        }
        Ok(obj)
    };
    let mut old = None;
    let updated = ctx
        .app
        .store
        .update_with(ctx.scope(), ctx.name(), Part::Main, &opts, |stored| {
            old = Some(stored.clone());
            let current = super::served(&ctx.info, stored)?;
            run(&current)
        })
        .await;
    match updated {
        Ok(updated) => {
            ctx.warn_write(&updated, old.as_ref());
            Ok(respond_object(ctx, StatusCode::OK, &updated))
        }
        Err(e) if e.code == 404 && old.is_none() => {
            // Absent: the apply creates it.
            let mut obj = run(&json!({}))?;
            let m = crate::registry::store::meta_mut(&mut obj);
            match m.get("name").and_then(Value::as_str) {
                Some(n) if n != ctx.name() => {
                    return Err(Status::bad_request(format!(
                        "the name of the object ({n}) does not match the name on the URL ({})",
                        ctx.name()
                    )))
                }
                Some(_) => {}
                None => {
                    m.insert("name".into(), json!(ctx.name()));
                }
            }
            if ctx.info.namespaced {
                let url_ns = ctx.ri.namespace.clone().unwrap_or_default();
                match m.get("namespace").and_then(Value::as_str) {
                    Some(ns) if !ns.is_empty() && ns != url_ns => {
                        return Err(Status::bad_request(
                            "the namespace of the provided object does not match the namespace sent on the request",
                        ))
                    }
                    _ => {
                        m.insert("namespace".into(), json!(url_ns));
                    }
                }
            }
            let created = ctx.app.store.create(ctx.scope(), obj, &opts).await?;
            ctx.warn_write(&created, None);
            Ok(respond_object(ctx, StatusCode::CREATED, &created))
        }
        Err(e) => Err(e),
    }
}

/// Conflicts are kube's 409 with one `FieldManagerConflict` cause per field and manager.
fn apply_status(e: ManagerError) -> Status {
    let e = match e {
        ManagerError::Apply(e) => e,
        ManagerError::Decode(d) => {
            return Status::internal(format!("failed to decode managed fields: {d}"))
        }
    };
    match &e {
        ApplyError::Conflicts(cs) => {
            let causes: Vec<Value> = merge::conflict_causes(cs)
                .into_iter()
                .map(|(message, field)| {
                    json!({"reason": "FieldManagerConflict", "message": message, "field": field})
                })
                .collect();
            Status::new(409, "Conflict", e.to_string()).with_details(json!({ "causes": causes }))
        }
        ApplyError::Type(t) => {
            Status::new(500, "", format!("failed to create typed patch object: {t}"))
        }
    }
}

/// Typed objects have no nulls: a field applied as null is absent.
fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}
