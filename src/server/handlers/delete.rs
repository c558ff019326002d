//! DELETE of one object and DELETECOLLECTION, with DeleteOptions from the body or the query.

use http::{Response, StatusCode};
use serde_json::{json, Map, Value};

use super::list::list_options;
use super::{list_body, respond, respond_object, Ctx};
use crate::meta::status::Status;
use crate::registry::store::{self, DeleteOptions, Deleted};
use crate::server::negotiate::Output;
use crate::server::Body;

/// Resources whose DELETE returns the deleted object rather than a Success Status.
fn returns_deleted_object(group: &str, resource: &str) -> bool {
    matches!(
        (group, resource),
        ("", "pods" | "namespaces" | "services")
            | ("apiextensions.k8s.io", "customresourcedefinitions")
    )
}

fn delete_options(ctx: &Ctx) -> Result<DeleteOptions, Status> {
    let mut opts = DeleteOptions {
        write: ctx.write_options("DeleteOptions")?,
        ..Default::default()
    };
    if !ctx.body.is_empty() {
        let body: Value = serde_json::from_slice(&ctx.body)
            .map_err(|e| Status::bad_request(format!("error decoding DeleteOptions: {e}")))?;
        if let Some(p) = body.get("preconditions") {
            opts.precondition_uid = p.get("uid").and_then(Value::as_str).map(str::to_string);
            opts.precondition_rv = p
                .get("resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if let Some(p) = body.get("propagationPolicy").and_then(Value::as_str) {
            opts.propagation_policy = Some(p.to_string());
        }
        if let Some(g) = body.get("gracePeriodSeconds").and_then(Value::as_i64) {
            opts.grace_period_seconds = Some(g);
        }
        if let Some(o) = body.get("orphanDependents").and_then(Value::as_bool) {
            opts.propagation_policy = Some(if o { "Orphan" } else { "Background" }.into());
        }
        if let Some(d) = body.get("dryRun").and_then(Value::as_array) {
            if d.iter().any(|v| v.as_str() != Some("All")) {
                return Err(Status::bad_request(
                    "dryRun: Unsupported value: supported values: \"All\"",
                ));
            }
            if !d.is_empty() {
                opts.write.dry_run = true;
            }
        }
    }
    if let Some(p) = ctx.query.get("propagationPolicy") {
        opts.propagation_policy = Some(p.to_string());
    }
    if let Some(g) = ctx.query.get("gracePeriodSeconds") {
        opts.grace_period_seconds = Some(
            g.parse()
                .map_err(|_| Status::bad_request(format!("invalid gracePeriodSeconds: {g:?}")))?,
        );
    }
    if let Some(p) = &opts.propagation_policy {
        if !matches!(p.as_str(), "Orphan" | "Background" | "Foreground") {
            return Err(Status::invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                &[crate::meta::field_error::FieldError::not_supported(
                    "propagationPolicy",
                    json!(p),
                    &["Foreground", "Background", "Orphan", "nil"],
                )],
            ));
        }
    }
    Ok(opts)
}

pub async fn handle(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let opts = delete_options(ctx)?;
    match ctx.app.store.delete(ctx.scope(), ctx.name(), &opts).await? {
        Deleted::Pending(obj) => Ok(respond_object(ctx, StatusCode::OK, &obj)),
        Deleted::Gone(obj) => {
            if returns_deleted_object(ctx.info.group, ctx.info.resource) {
                return Ok(respond_object(ctx, StatusCode::OK, &obj));
            }
            let mut details = Map::new();
            details.insert("name".into(), json!(ctx.name()));
            if !ctx.info.group.is_empty() {
                details.insert("group".into(), json!(ctx.info.group));
            }
            details.insert("kind".into(), json!(ctx.info.resource));
            details.insert("uid".into(), json!(store::meta_str(&obj, "uid")));
            let s = Status::success_details(Value::Object(details));
            Ok(respond(
                if ctx.output == Output::Yaml {
                    Output::Yaml
                } else {
                    Output::Json
                },
                StatusCode::OK,
                &s.to_json(),
            ))
        }
    }
}

pub async fn collection(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let list = list_options(&ctx.query, ctx.info)?;
    let opts = delete_options(ctx)?;
    let (items, rev) = ctx
        .app
        .store
        .delete_collection(ctx.scope(), &list, &opts)
        .await?;
    let mut meta = Map::new();
    meta.insert("resourceVersion".into(), json!(rev.to_string()));
    Ok(respond(
        if ctx.output == Output::Yaml {
            Output::Yaml
        } else {
            Output::Json
        },
        StatusCode::OK,
        &list_body(ctx.info, items, meta),
    ))
}
