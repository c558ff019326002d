//! LIST with selectors and pagination, in JSON/YAML, Table or PartialObjectMetadataList form.

use http::{header, HeaderValue, Response, StatusCode};
use serde_json::{json, Map, Value};

use super::{include_object, list_body, partial, respond, Ctx, Query};
use crate::meta::field_error::FieldError;
use crate::meta::fields::FieldSelector;
use crate::meta::labels::Selector;
use crate::meta::status::Status;
use crate::registry::field_selectors;
use crate::registry::store::{self, ListOptions, ReadAt};
use crate::registry::table;
use crate::registry::Resource;
use crate::server::negotiate::Output;
use crate::server::{full, Body};
use crate::watch::Start;

/// kube-apiserver's `ValidateListOptions` (with the WatchList feature on), after
/// `SetListOptionsDefaults`: a legacy watch (resourceVersion unset or "0") becomes a
/// `sendInitialEvents=true&resourceVersionMatch=NotOlderThan` one. Returns the (defaulted)
/// resourceVersionMatch and sendInitialEvents.
pub fn validate_list_options(
    q: &Query,
    watch: bool,
) -> Result<(Option<String>, Option<bool>), Status> {
    let rv = q.get("resourceVersion").unwrap_or("");
    let mut matched = q.get("resourceVersionMatch").unwrap_or("").to_string();
    let cont = q.get("continue").unwrap_or("");
    let mut send_initial = match q.get("sendInitialEvents") {
        None | Some("") => None,
        Some("true") | Some("1") | Some("True") => Some(true),
        Some("false") | Some("0") | Some("False") => Some(false),
        Some(other) => {
            return Err(Status::bad_request(format!(
                "strconv.ParseBool: parsing {other:?}: invalid syntax"
            )))
        }
    };
    if watch && send_initial.is_none() && matched.is_empty() && (rv.is_empty() || rv == "0") {
        send_initial = Some(true);
        matched = "NotOlderThan".to_string();
    }
    let mut errs = Vec::new();
    if watch {
        if send_initial.is_some() && matched != "NotOlderThan" {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !matched.is_empty() {
            if send_initial.is_none() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if matched != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    json!(matched),
                    &["NotOlderThan"],
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if !matched.is_empty() {
            if rv.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if matched != "Exact" && matched != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    json!(matched),
                    &["Exact", "NotOlderThan", ""],
                ));
            }
            if matched == "Exact" && rv == "0" {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if send_initial.is_some() {
            errs.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    if !errs.is_empty() {
        return Err(Status::invalid("ListOptions", "meta.k8s.io", "", &errs));
    }
    Ok((Some(matched).filter(|m| !m.is_empty()), send_initial))
}

/// The read mode of a (validated) list: unset → Latest, "0" → Any, N → NotOlderThan(N) or
/// Exact(N).
fn list_read_at(q: &Query, matched: Option<&str>) -> Result<ReadAt, Status> {
    match q.get("resourceVersion").filter(|s| !s.is_empty()) {
        None => Ok(ReadAt::Latest),
        Some("0") => Ok(ReadAt::Any),
        Some(rv) => {
            let rev = store::parse_rv(rv)?;
            Ok(match matched {
                Some("Exact") => ReadAt::Exact(rev),
                _ => ReadAt::NotOlderThan(rev),
            })
        }
    }
}

/// Parses the selectors, limit and continue token of a LIST or WATCH.
fn selectors_and_paging(q: &Query, info: &Resource) -> Result<ListOptions, Status> {
    let label_selector = match q.get("labelSelector").filter(|s| !s.is_empty()) {
        Some(s) => Some(Selector::parse(s).map_err(Status::bad_request)?),
        None => None,
    };
    let field_selector = match q.get("fieldSelector").filter(|s| !s.is_empty()) {
        Some(s) => {
            let sel = FieldSelector::parse(s).map_err(Status::bad_request)?;
            Some(
                field_selectors::transform(&*info.strategy, &info.version, &sel)
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
    Ok(ListOptions {
        label_selector,
        field_selector,
        limit,
        continue_token,
        read_at: None,
    })
}

/// Parses and validates the options of a LIST.
pub fn list_options(q: &Query, info: &Resource) -> Result<ListOptions, Status> {
    let (matched, _) = validate_list_options(q, false)?;
    let mut opts = selectors_and_paging(q, info)?;
    let mut at = list_read_at(q, matched.as_deref())?;
    if let (None, ReadAt::NotOlderThan(rev), true) = (matched.as_deref(), at, opts.limit > 0) {
        // Legacy: resourceVersion=N with a limit and no resourceVersionMatch is an exact
        // read, as kube-apiserver serves it.
        at = ReadAt::Exact(rev);
    }
    opts.read_at = Some(at);
    if opts.continue_token.is_some()
        && q.get("resourceVersion")
            .is_some_and(|rv| !rv.is_empty() && rv != "0")
    {
        return Err(Status::bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    Ok(opts)
}

/// The options of a WATCH, validated and defaulted.
pub struct WatchOptions {
    pub opts: ListOptions,
    pub start: Start,
    pub bookmarks: bool,
    pub initial_events_end: bool,
}

/// Parses and validates the options of a WATCH.
pub fn watch_options(q: &Query, info: &Resource) -> Result<WatchOptions, Status> {
    let (_, send_initial) = validate_list_options(q, true)?;
    let opts = selectors_and_paging(q, info)?;
    let at = match q.get("resourceVersion").filter(|s| !s.is_empty()) {
        None => ReadAt::Latest,
        Some("0") => ReadAt::Any,
        Some(rv) => ReadAt::NotOlderThan(store::parse_rv(rv)?),
    };
    let start = match (send_initial, at) {
        (Some(true), at) => Start::Initial(at),
        (Some(false), ReadAt::NotOlderThan(rev)) | (None, ReadAt::NotOlderThan(rev)) => {
            Start::After(rev)
        }
        (_, at) => Start::Now(at),
    };
    Ok(WatchOptions {
        opts,
        start,
        bookmarks: q.flag("allowWatchBookmarks"),
        initial_events_end: send_initial == Some(true),
    })
}

pub async fn handle(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let opts = list_options(&ctx.query, &ctx.info)?;
    let res = ctx.app.watch.list_shared(ctx.scope(), &opts).await?;
    let mut list_meta = Map::new();
    list_meta.insert("resourceVersion".into(), json!(res.revision.to_string()));
    if let Some(c) = &res.continue_token {
        list_meta.insert("continue".into(), json!(c));
    }
    if let Some(r) = res.remaining {
        list_meta.insert("remainingItemCount".into(), json!(r));
    }
    if matches!(ctx.output, Output::Protobuf) && super::served_as_stored(&ctx.info) {
        // Each cached object is parsed and encoded in turn: never every tree at once.
        return Ok(super::protobuf::respond_list(
            &ctx.info,
            res.items.iter().map(|o| o.value()),
            &list_meta,
        ));
    }
    if matches!(ctx.output, Output::Json)
        && !crate::server::negotiate::pretty()
        && super::served_as_stored(&ctx.info)
    {
        // The common case, written straight from the cached objects' bytes.
        let mut r = Response::new(full(encode_list_json(&ctx.info, &res.items, &list_meta)));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(Output::Json.content_type()),
        );
        return Ok(r);
    }
    // Every other form works on parsed objects.
    let mut items: Vec<std::sync::Arc<Value>> = res
        .items
        .iter()
        .map(|o| std::sync::Arc::new(o.value()))
        .collect();
    super::served_all(&ctx.info, &mut items)?;
    let res = ListItems { items };
    let body = match ctx.output {
        Output::Table(version) => {
            let include = include_object(&ctx.query)?;
            let items: Vec<Value> = res.items.iter().map(|o| (**o).clone()).collect();
            table::of_resource(
                &ctx.info,
                &items,
                Value::Object(list_meta),
                include,
                &format!("meta.k8s.io/{version}"),
                jiff::Timestamp::now(),
            )
        }
        Output::PartialMetadata(version) | Output::PartialMetadataProtobuf(version) => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": format!("meta.k8s.io/{version}"),
            "metadata": list_meta,
            "items": res.items.iter().map(|o| partial(o, version)).collect::<Vec<_>>(),
        }),
        Output::Protobuf => {
            return Ok(super::protobuf::respond_list(
                &ctx.info,
                res.items.iter().map(|o| &**o),
                &list_meta,
            ))
        }
        Output::Yaml => list_body(
            &ctx.info,
            res.items.iter().map(|o| (**o).clone()).collect(),
            list_meta,
        ),
        Output::Json if crate::server::negotiate::pretty() => list_body(
            &ctx.info,
            res.items.iter().map(|o| (**o).clone()).collect(),
            list_meta,
        ),
        Output::Json => {
            let mut r = Response::new(full(encode_values_json(&ctx.info, &res.items, &list_meta)));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(Output::Json.content_type()),
            );
            return Ok(r);
        }
    };
    Ok(respond(ctx.output, StatusCode::OK, &body))
}

/// The parsed (and served) items of a list.
struct ListItems {
    items: Vec<std::sync::Arc<Value>>,
}

/// `{"kind","apiVersion","metadata","items":[` of a list's JSON.
fn list_json_head(info: &Resource, list_meta: &Map<String, Value>, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + n * 1024);
    out.extend_from_slice(b"{\"kind\":");
    put(&mut out, &info.list_kind);
    out.extend_from_slice(b",\"apiVersion\":");
    put(&mut out, &info.api_version());
    out.extend_from_slice(b",\"metadata\":");
    put(&mut out, list_meta);
    out.extend_from_slice(b",\"items\":[");
    out
}

/// The JSON of [`list_body`] from the watch cache's bytes, for a resource served as stored
/// ([`super::served_as_stored`]: a built-in, so items go without their kind / apiVersion).
fn encode_list_json(
    info: &Resource,
    items: &[crate::watch::Object],
    list_meta: &Map<String, Value>,
) -> Vec<u8> {
    let mut out = list_json_head(info, list_meta, items.len());
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match item.members_after_type() {
            Some(rest) => {
                out.push(b'{');
                out.extend_from_slice(rest);
            }
            None => put_item(&mut out, info, &item.value()),
        }
    }
    out.extend_from_slice(b"]}\n");
    out
}

/// The JSON of [`list_body`] without copying the items (parsed and served ones).
fn encode_values_json(
    info: &Resource,
    items: &[std::sync::Arc<Value>],
    list_meta: &Map<String, Value>,
) -> Vec<u8> {
    let mut out = list_json_head(info, list_meta, items.len());
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put_item(&mut out, info, item);
    }
    out.extend_from_slice(b"]}\n");
    out
}

/// One list item: the object without its own kind / apiVersion (custom resources keep
/// theirs, as kube's unstructured lists do).
fn put_item(out: &mut Vec<u8>, info: &Resource, item: &Value) {
    match item.as_object() {
        Some(m) => {
            out.push(b'{');
            let mut first = true;
            for (k, v) in m {
                if (k == "kind" || k == "apiVersion") && info.origin.is_none() {
                    continue;
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                put(out, k);
                out.push(b':');
                put(out, v);
            }
            out.push(b'}');
        }
        None => put(out, item),
    }
}

/// Appends the JSON of `v` (serde_json cannot fail on JSON values and strings).
fn put<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    if serde_json::to_writer(&mut *out, v).is_err() {
        out.extend_from_slice(b"null");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_list_json_equals_the_list_body() {
        let info = crate::registry::builtin::registry().builtin("", "v1", "configmaps");
        let items: Vec<Value> = (0..3)
            .map(|i| {
                json!({"kind": "ConfigMap", "apiVersion": "v1",
                    "metadata": {"name": format!("c{i}"), "labels": {"a\"b": "é"}},
                    "data": {"k": "line\nbreak"}})
            })
            .collect();
        let mut meta = Map::new();
        meta.insert("resourceVersion".into(), json!("42"));
        meta.insert("continue".into(), json!("tok"));
        let shared: Vec<crate::watch::Object> =
            items.iter().map(crate::watch::Object::new).collect();
        let fast = encode_list_json(&info, &shared, &meta);
        // The parsed-items path writes the same bytes.
        let parsed: Vec<std::sync::Arc<Value>> =
            items.iter().cloned().map(std::sync::Arc::new).collect();
        assert_eq!(fast, encode_values_json(&info, &parsed, &meta));
        let slow = serde_json::to_vec(&list_body(&info, items, meta)).unwrap();
        let (f, sl): (Value, Value) = (
            serde_json::from_slice(&fast).unwrap(),
            serde_json::from_slice(&slow).unwrap(),
        );
        assert_eq!(f, sl);
        // Item fields keep their stored order (metadata first), unlike a swap-remove.
        let text = String::from_utf8(fast).unwrap();
        assert!(
            text.contains(r#""items":[{"metadata":{"name":"c0""#),
            "{text}"
        );
        let empty = encode_list_json(&info, &[], &Map::new());
        let v: Value = serde_json::from_slice(&empty).unwrap();
        assert_eq!(v["items"], json!([]));
    }
}
