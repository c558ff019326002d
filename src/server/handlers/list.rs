//! LIST with selectors and pagination, in JSON/YAML, Table or PartialObjectMetadataList form.

use http::{Response, StatusCode};
use serde_json::{json, Map, Value};

use super::{include_object, list_body, partial, read_at, respond, Ctx, Query};
use crate::meta::fields::FieldSelector;
use crate::meta::labels::Selector;
use crate::meta::status::Status;
use crate::registry::field_selectors;
use crate::registry::resources::ResourceInfo;
use crate::registry::store::ListOptions;
use crate::registry::table;
use crate::server::negotiate::Output;
use crate::server::Body;

/// Parses the list options of a LIST or WATCH (selectors, limit, continue, resourceVersion).
pub fn list_options(q: &Query, info: &ResourceInfo) -> Result<ListOptions, Status> {
    let label_selector = match q.get("labelSelector").filter(|s| !s.is_empty()) {
        Some(s) => Some(Selector::parse(s).map_err(Status::bad_request)?),
        None => None,
    };
    let field_selector = match q.get("fieldSelector").filter(|s| !s.is_empty()) {
        Some(s) => {
            let sel = FieldSelector::parse(s).map_err(Status::bad_request)?;
            Some(
                field_selectors::transform_version(info.group, info.version, info.resource, &sel)
                    .map_err(Status::bad_request)?,
            )
        }
        None => None,
    };
    let limit = match q.get("limit").filter(|s| !s.is_empty()) {
        Some(l) => l
            .parse::<i64>()
            .map_err(|_| Status::bad_request(format!("invalid limit: {l:?}")))?
            .max(0) as usize,
        None => 0,
    };
    let continue_token = q
        .get("continue")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let read_at = read_at(q, "ListOptions")?;
    if continue_token.is_some()
        && q.get("resourceVersion")
            .is_some_and(|rv| !rv.is_empty() && rv != "0")
    {
        return Err(Status::bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    Ok(ListOptions {
        label_selector,
        field_selector,
        limit,
        continue_token,
        read_at: Some(read_at),
    })
}

pub async fn handle(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let opts = list_options(&ctx.query, ctx.info)?;
    let res = ctx.app.store.list(ctx.scope(), &opts).await?;
    let mut list_meta = Map::new();
    list_meta.insert("resourceVersion".into(), json!(res.revision.to_string()));
    if let Some(c) = &res.continue_token {
        list_meta.insert("continue".into(), json!(c));
    }
    if let Some(r) = res.remaining {
        list_meta.insert("remainingItemCount".into(), json!(r));
    }
    let body = match ctx.output {
        Output::Table(version) => {
            let include = include_object(&ctx.query).unwrap_or(table::IncludeObject::Metadata);
            table::table(
                ctx.info.group,
                ctx.info.resource,
                &res.items,
                Value::Object(list_meta),
                include,
                &format!("meta.k8s.io/{version}"),
                jiff::Timestamp::now(),
            )
        }
        Output::PartialMetadata(version) => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": format!("meta.k8s.io/{version}"),
            "metadata": list_meta,
            "items": res.items.iter().map(|o| partial(o, version)).collect::<Vec<_>>(),
        }),
        _ => list_body(ctx.info, res.items, list_meta),
    };
    let out = if ctx.output == Output::Yaml {
        Output::Yaml
    } else {
        Output::Json
    };
    Ok(respond(out, StatusCode::OK, &body))
}
