//! WATCH over HTTP: a chunked (HTTP/1.1) or streamed (HTTP/2) body of newline-delimited
//! `{"type":...,"object":...}` JSON events, flushed per event. Table output turns each object
//! into a one-row Table (column definitions in the first event only, as kube-apiserver does).

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{header, HeaderValue, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use rand::Rng;
use serde_json::{json, Value};

use super::handlers::{list::list_options, read_at, Ctx};
use super::negotiate::Output;
use super::Body;
use crate::meta::status::Status;
use crate::registry::table;
use crate::watch::{self, Start, WatchEvent};

pub async fn handle(ctx: Ctx) -> Result<Response<Body>, Status> {
    let mut opts = list_options(&ctx.query, ctx.info)?;
    if let Some(name) = &ctx.ri.name {
        // /watch/.../<name>: the same as fieldSelector=metadata.name=<name>.
        let sel = crate::meta::fields::FieldSelector::parse(&format!("metadata.name={name}"))
            .map_err(Status::bad_request)?;
        opts.field_selector = Some(sel);
    }
    let send_initial = match ctx.query.get("sendInitialEvents") {
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(Status::bad_request(format!(
                "invalid sendInitialEvents: {other:?}"
            )))
        }
        None => None,
    };
    let bookmarks = ctx.query.flag("allowWatchBookmarks");
    let at = read_at(&ctx.query, "ListOptions")?;
    let start = match (send_initial, at) {
        (Some(true), at) => {
            if !bookmarks || ctx.query.get("resourceVersionMatch") != Some("NotOlderThan") {
                return Err(Status::invalid(
                    "ListOptions",
                    "meta.k8s.io",
                    "",
                    &[crate::meta::field_error::FieldError::forbidden(
                        "sendInitialEvents",
                        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled and resourceVersionMatch is set to NotOlderThan with allowWatchBookmarks",
                    )],
                ));
            }
            Start::Initial(at)
        }
        (
            _,
            watch_at @ (crate::registry::store::ReadAt::Latest
            | crate::registry::store::ReadAt::Any),
        ) => Start::Initial(watch_at),
        (_, crate::registry::store::ReadAt::NotOlderThan(rev)) => Start::After(rev),
        (_, crate::registry::store::ReadAt::Exact(rev)) => Start::After(rev),
    };
    let timeout = match ctx.query.get("timeoutSeconds") {
        Some(t) => Duration::from_secs(
            t.parse::<u64>()
                .map_err(|_| Status::bad_request(format!("invalid timeoutSeconds: {t:?}")))?,
        ),
        // kube-apiserver ends watches after a randomized 30–60 minutes.
        None => Duration::from_secs(rand::thread_rng().gen_range(1800..3600)),
    };
    let req = watch::Request {
        info: ctx.info,
        namespace: ctx.ri.namespace.clone(),
        opts,
        start,
        bookmarks,
        initial_events_end: send_initial == Some(true),
        timeout,
        bookmark_interval: Duration::from_secs(60),
    };
    let rx = watch::start(ctx.app.store.clone(), req).await?;
    let info = ctx.info;
    let output = ctx.output;
    let include =
        super::handlers::include_object(&ctx.query).unwrap_or(table::IncludeObject::Metadata);
    let mut first = true;
    let stream = tokio_stream_from(rx).map(move |ev| {
        let mut v = ev.to_json(info);
        if let Output::Table(version) = output {
            if let WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) = &ev {
                let rv = crate::registry::store::meta_str(o, "resourceVersion").to_string();
                let mut t = table::table(
                    info.group,
                    info.resource,
                    std::slice::from_ref(o),
                    json!({"resourceVersion": rv}),
                    include,
                    &format!("meta.k8s.io/{version}"),
                    jiff::Timestamp::now(),
                );
                if !first {
                    if let Some(m) = t.as_object_mut() {
                        m.insert("columnDefinitions".into(), Value::Array(vec![]));
                    }
                }
                first = false;
                v["object"] = t;
            }
        }
        let mut line = serde_json::to_vec(&v).unwrap_or_default();
        line.push(b'\n');
        Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from(line)))
    });
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(resp)
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<WatchEvent>,
) -> impl futures::Stream<Item = WatchEvent> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
