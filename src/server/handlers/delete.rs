//! DELETE of one object and DELETECOLLECTION, with DeleteOptions from the body or the query.

use http::{Response, StatusCode};
use serde_json::{json, Map, Value};

use super::list::list_options;
use super::{list_body, respond, respond_object, Ctx};
use crate::meta::field_error::FieldError;
use crate::meta::status::Status;
use crate::registry::store::{self, DeleteOptions, Deleted, WriteOptions};
use crate::server::negotiate;
use crate::server::Body;

/// Resources whose DELETE returns the deleted object rather than a Success Status.
/// DeleteOptions as kube reads them: from the body when there is one (JSON, YAML or
/// Kubernetes protobuf, through the one body decoder; any group-version's `DeleteOptions`),
/// otherwise from the query. Then `ValidateDeleteOptions`.
fn delete_options(ctx: &Ctx) -> Result<DeleteOptions, Status> {
    let mut opts = DeleteOptions::default();
    if ctx.body.iter().all(u8::is_ascii_whitespace) {
        opts.write = ctx.write_options("DeleteOptions")?;
        if let Some(p) = ctx.query.get("propagationPolicy") {
            opts.propagation_policy = Some(p.to_string());
        }
        if let Some(g) = ctx.query.get("gracePeriodSeconds") {
            opts.grace_period_seconds = Some(g.parse().map_err(|_| {
                Status::bad_request(format!("strconv.ParseInt: parsing {g:?}: invalid syntax"))
            })?);
        }
        if let Some(o) = ctx.query.get("orphanDependents") {
            opts.orphan_dependents = Some(match o {
                "true" | "1" | "True" | "TRUE" | "t" | "T" => true,
                "false" | "0" | "False" | "FALSE" | "f" | "F" => false,
                _ => {
                    return Err(Status::bad_request(format!(
                        "strconv.ParseBool: parsing {o:?}: invalid syntax"
                    )))
                }
            });
        }
    } else {
        let body = negotiate::decode_body(ctx.content_type(), &ctx.body)?;
        let Some(body) = body.as_object() else {
            return Err(Status::bad_request(
                "decoded object cannot be converted to DeleteOptions",
            ));
        };
        if let Some(k) = body.get("kind").and_then(Value::as_str) {
            if k != "DeleteOptions" {
                return Err(Status::bad_request(
                    "decoded object cannot be converted to DeleteOptions",
                ));
            }
        }
        opts = options_from_body(ctx, body)?;
    }
    validate(&opts)?;
    Ok(opts)
}

/// DeleteOptions from a decoded body object (a DELETE's body, or an Eviction's
/// `deleteOptions`); the query's dryRun and fieldManager do not apply.
pub(super) fn options_from_body(
    ctx: &Ctx,
    body: &serde_json::Map<String, Value>,
) -> Result<DeleteOptions, Status> {
    let mut opts = DeleteOptions {
        write: WriteOptions {
            now: ctx.now.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    let field_type = |field: &str, want: &str| {
        let got = match body.get(field) {
            Some(Value::String(_)) => "string",
            Some(Value::Number(_)) => "number",
            Some(Value::Bool(_)) => "bool",
            Some(Value::Array(_)) => "array",
            _ => "object",
        };
        Status::bad_request(format!(
            "json: cannot unmarshal {got} into Go struct field DeleteOptions.{field} of type {want}"
        ))
    };
    if let Some(p) = body.get("preconditions").filter(|p| !p.is_null()) {
        opts.precondition_uid = p.get("uid").and_then(Value::as_str).map(str::to_string);
        opts.precondition_rv = p
            .get("resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    match body.get("propagationPolicy") {
        None | Some(Value::Null) => {}
        Some(Value::String(p)) => opts.propagation_policy = Some(p.clone()),
        Some(_) => return Err(field_type("propagationPolicy", "v1.DeletionPropagation")),
    }
    match body.get("gracePeriodSeconds") {
        None | Some(Value::Null) => {}
        Some(g) => {
            opts.grace_period_seconds = Some(
                g.as_i64()
                    .ok_or_else(|| field_type("gracePeriodSeconds", "int64"))?,
            )
        }
    }
    match body.get("orphanDependents") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => opts.orphan_dependents = Some(*b),
        Some(_) => return Err(field_type("orphanDependents", "bool")),
    }
    if let Some(d) = body.get("dryRun").and_then(Value::as_array) {
        if d.iter().any(|v| v.as_str() != Some("All")) {
            let quoted: Vec<String> = d.iter().map(|v| v.to_string()).collect();
            return Err(super::dry_run_unsupported("DeleteOptions", &quoted));
        }
        opts.write.dry_run = !d.is_empty();
    }
    Ok(opts)
}

/// kube's `ValidateDeleteOptions`.
pub(super) fn validate(opts: &DeleteOptions) -> Result<(), Status> {
    let mut errs = Vec::new();
    if opts.orphan_dependents.is_some() && opts.propagation_policy.is_some() {
        errs.push(FieldError::invalid(
            "propagationPolicy",
            json!(opts.propagation_policy),
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(p) = &opts.propagation_policy {
        if !matches!(p.as_str(), "Orphan" | "Background" | "Foreground") {
            errs.push(FieldError::not_supported(
                "propagationPolicy",
                json!(p),
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(Status::invalid("DeleteOptions", "meta.k8s.io", "", &errs))
    }
}

/// kube answers 202 when the object stays and the client asked for cascading deletion with the
/// deprecated `orphanDependents: false`.
fn pending_code(opts: &DeleteOptions) -> StatusCode {
    if opts.orphan_dependents == Some(false) {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    }
}

fn warn_delete(ctx: &Ctx, opts: &DeleteOptions) {
    let given = opts.propagation_policy.is_some() || opts.orphan_dependents.is_some();
    if let Some(w) = ctx.info.strategy.delete_warning(given) {
        if let Ok(mut ws) = ctx.warnings.lock() {
            ws.push(w.to_string());
        }
    }
}

pub async fn handle(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let opts = delete_options(ctx)?;
    warn_delete(ctx, &opts);
    match ctx.app.store.delete(ctx.scope(), ctx.name(), &opts).await? {
        Deleted::Pending(obj) => Ok(respond_object(ctx, pending_code(&opts), &obj)),
        Deleted::Gone(obj) => {
            if ctx.info.strategy.returns_deleted_object() {
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
            Ok(respond(ctx.plain_output(), StatusCode::OK, &s.to_json()))
        }
    }
}

pub async fn collection(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let list = list_options(&ctx.query, &ctx.info)?;
    let opts = delete_options(ctx)?;
    warn_delete(ctx, &opts);
    let (items, rev) = ctx
        .app
        .store
        .delete_collection(ctx.scope(), &list, &opts)
        .await?;
    let mut meta = Map::new();
    meta.insert("resourceVersion".into(), json!(rev.to_string()));
    Ok(respond(
        ctx.plain_output(),
        StatusCode::OK,
        &list_body(&ctx.info, items, meta),
    ))
}
