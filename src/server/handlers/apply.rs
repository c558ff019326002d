//! Server-side apply: `PATCH` with `application/apply-patch+yaml` (YAML or JSON body), as
//! kube-apiserver's apply patcher handles it, on a resource (built-in or custom) and on its
//! `status` (and CSR `approval`) subresource. The merge, ownership, conflicts and the kubectl
//! migration rules are the field manager's ([`crate::apply::manager`], built for the endpoint
//! by [`crate::registry::managed::field_manager`]: the kind's schema, the fields the endpoint's
//! strategy resets); this module reads the request (`fieldManager` required, `force`), rejects
//! `managedFields` and a wrong apiVersion in the body as kube does, prunes and converts the
//! result as any patched object (custom resources by their structural schema), and creates the
//! object when absent (201, the resource itself only). The store's Update bookkeeping is
//! bypassed (no manager in the write options), so an apply never records an Update entry.
//! `/scale` applies are the scale handler's ([`super::scale`]).
//!
//! Not yet: conversion of other managers' versions.

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
    // A built-in's configuration must declare only its type's fields (SMD's typed conversion;
    // custom resources' schemas refuse undeclared fields in the merge itself).
    if ctx.info.strategy.structural_schema().is_none() {
        let undeclared: Vec<String> = crate::openapi::unknown_fields(&definition, &config)
            .iter()
            .map(|m| {
                let path = m
                    .strip_prefix("unknown field \"")
                    .and_then(|p| p.strip_suffix('"'))
                    .unwrap_or(m);
                format!(".{path}: field not declared in schema")
            })
            .collect();
        if !undeclared.is_empty() {
            let errors = match undeclared.as_slice() {
                [one] => one.clone(),
                many => format!("errors:\n  {}", many.join("\n  ")),
            };
            return Err(Status::new(
                500,
                "",
                format!(
                    "failed to create typed patch object ({}): {errors}",
                    object_gvknn(&config)
                ),
            ));
        }
    }
    let now = opts.now.clone();
    let run = |live: &Value| -> Result<Value, Status> {
        let mut obj = fm
            .apply(live, &config, &manager, force, &now)
            .map_err(|e| apply_status(e, &config))?;
        strip_nulls(&mut obj);
        let m = crate::registry::store::meta_mut(&mut obj);
        // A resourceVersion in the configuration is a precondition; otherwise none (a status
        // write carries the stored one, as a status patch does: some status rules need one).
        let rv = match config.pointer("/metadata/resourceVersion") {
            None if part == Part::Status => live.pointer("/metadata/resourceVersion"),
            rv => rv,
        };
        match rv {
            Some(rv) => m.insert("resourceVersion".into(), rv.clone()),
            None => m.remove("resourceVersion"),
        };
        super::check_types(&ctx.info, &obj)?;
        // As a patched object is decoded: custom resources pruned by their schema (SMD already
        // refused what it does not declare), built-ins by their definition.
        if super::prune_custom(&ctx.info, &mut obj).is_none() {
            crate::openapi::prune_unknown(&definition, &mut obj);
        }
        if ctx.info.converts() {
            ctx.info.strategy.to_storage(&mut obj)?;
        }
        Ok(obj)
    };
    let mut old = None;
    let updated = ctx
        .app
        .store
        .update_with(ctx.scope(), ctx.name(), part, &opts, |stored| {
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
        Err(e) if e.code == 404 && old.is_none() && part == Part::Main => {
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

/// Conflicts are kube's 409 with one `FieldManagerConflict` cause per field and manager; an
/// object or configuration that does not fit the schema is kube's 500 naming the patch object
/// (`namespace/name; group/version, Kind=kind`, as kube's `objectGVKNN` prints it).
pub fn apply_status(e: ManagerError, config: &Value) -> Status {
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
        ApplyError::Convert(m) => Status::new(500, "", m.clone()),
        ApplyError::Type(t) => Status::new(
            500,
            "",
            format!(
                "failed to create typed patch object ({}): {t}",
                object_gvknn(config)
            ),
        ),
    }
}

/// kube's `objectGVKNN`: `namespace/name; group/version, Kind=kind` of an object.
pub fn object_gvknn(obj: &Value) -> String {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    let api = s("/apiVersion");
    let (group, version) = match api.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api),
    };
    format!(
        "{}/{}; {group}/{version}, Kind={}",
        s("/metadata/namespace"),
        s("/metadata/name"),
        s("/kind")
    )
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
