//! WATCH over HTTP: a chunked (HTTP/1.1) or streamed (HTTP/2) body of newline-delimited
//! `{"type":...,"object":...}` JSON events, flushed per event. JSON lines of shared events
//! come serialized once from the watch cache. Table output turns each object into a one-row
//! Table (column definitions in the first event only, as kube-apiserver does);
//! PartialObjectMetadata output (client-go's metadata informers) turns every object and
//! bookmark into a PartialObjectMetadata. Protobuf output sends length-prefixed `WatchEvent`
//! frames instead (`handlers::protobuf`).

use std::time::Duration;

use http::{header, HeaderValue, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use rand::Rng;
use serde_json::{json, Value};

use super::{list::watch_options, Ctx};
use crate::meta::status::Status;
use crate::registry::table;
use crate::server::negotiate::Output;
use crate::server::Body;
use crate::watch;

pub async fn handle(ctx: Ctx) -> Result<Response<Body>, Status> {
    let mut w = watch_options(&ctx.query, &ctx.info)?;
    if let Some(name) = &ctx.ri.name {
        // /watch/.../<name>: the same as fieldSelector=metadata.name=<name>.
        let sel = crate::meta::fields::FieldSelector::parse(&format!(
            "metadata.name={}",
            crate::meta::fields::escape_value(name)
        ))
        .map_err(Status::bad_request)?;
        w.opts.field_selector = Some(sel);
    }
    let requested = match ctx.query.get("timeoutSeconds").filter(|t| !t.is_empty()) {
        Some(t) => t
            .parse::<i64>()
            .map_err(|_| Status::bad_request(format!("invalid timeoutSeconds: {t:?}")))?
            .max(0) as u64,
        None => 0,
    };
    let timeout = if requested > 0 {
        Duration::from_secs(requested)
    } else {
        // Unset (or 0): ended after a random time between --min-request-timeout and twice
        // that (kube-apiserver: 30–60 minutes by default).
        let min = ctx.app.min_request_timeout.as_secs().max(1);
        Duration::from_secs(rand::thread_rng().gen_range(min..2 * min))
    };
    let req = watch::Request {
        info: ctx.info.clone(),
        namespace: ctx.ri.namespace.clone(),
        opts: w.opts,
        start: w.start,
        bookmarks: w.bookmarks,
        initial_events_end: w.initial_events_end,
        timeout,
    };
    let stream = ctx.app.watch.watch(req).await?;
    let info = ctx.info.clone();
    let output = ctx.output;
    let include = super::include_object(&ctx.query)?;
    let meter = Meter::new(&ctx.ri);
    let state = (stream, true, meter);
    let body = futures::stream::unfold(state, move |(mut s, first, meter)| {
        let info = info.clone();
        async move {
            let out = s.next().await?;
            if output.is_protobuf() {
                let event = out.object();
                // A version that is not the storage version converts each object, a strategy
                // that decodes stored objects (custom resources) reshapes it: `Some` when so.
                let conv = event.as_ref().map(|(_, obj)| served_owned(&info, obj));
                let partial = match output {
                    Output::PartialMetadataProtobuf(v) => Some(v),
                    _ => None,
                };
                let frame = super::protobuf::watch_frame(&out, &info, conv, partial);
                meter.sent(frame.len());
                return Some((
                    Ok::<_, std::convert::Infallible>(Frame::data(frame)),
                    (s, first, meter),
                ));
            }
            let line = match &out {
                // A shared event: its line for this version and output is made once and
                // shared by every watcher asking for the same (Table rows included).
                watch::Out::Event(e, t) => match flavour(output, include, first) {
                    None if super::served_as_stored(&info) => out.line(&info),
                    f => e.encoded(&info, f.unwrap_or(0), *t, || {
                        line_of(&info, output, include, first, &out)
                    }),
                },
                _ => line_of(&info, output, include, first, &out),
            };
            // The first Table row sent carries the column definitions, later ones none.
            let row_sent = matches!(output, Output::Table(_))
                && out.object().is_some()
                && !line.starts_with(b"{\"type\":\"ERROR\"");
            meter.sent(line.len());
            Some((
                Ok::<_, std::convert::Infallible>(Frame::data(line)),
                (s, first && !row_sent, meter),
            ))
        }
    });
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(body)));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(if output.is_protobuf() {
            crate::server::protobuf::STREAM_MEDIA_TYPE
        } else {
            "application/json"
        }),
    );
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(resp)
}

/// kube's `apiserver_watch_events_total` and `apiserver_watch_events_sizes` of one watch
/// (by group, version and resource), looked up once per watch rather than per event.
struct Meter {
    events: metrics::Counter,
    sizes: metrics::Histogram,
}

impl Meter {
    fn new(ri: &crate::server::request_info::RequestInfo) -> Meter {
        let labels = [
            ("group", ri.group.clone()),
            ("version", ri.version.clone()),
            ("resource", ri.resource.clone()),
        ];
        Meter {
            events: metrics::counter!("apiserver_watch_events_total", &labels),
            sizes: metrics::histogram!("apiserver_watch_events_sizes", &labels),
        }
    }

    /// One event of `len` bytes went to the client.
    fn sent(&self, len: usize) {
        self.events.increment(1);
        self.sizes.record(len as f64);
    }
}

/// [`super::served`] with "as stored" as `None` (the cache keeps bytes: a resource served as
/// stored needs no parsed tree).
fn served_owned(
    info: &crate::registry::Resource,
    obj: &watch::Object,
) -> Result<Option<Value>, Status> {
    if super::served_as_stored(info) {
        return Ok(None);
    }
    super::served(info, &obj.value()).map(|c| match c {
        std::borrow::Cow::Owned(o) => Some(o),
        std::borrow::Cow::Borrowed(_) => None,
    })
}

/// The key of a JSON output flavour in [`watch::CachedEvent::encoded`]: `None` for plain
/// JSON (whose line is the shared one unless the version converts).
fn flavour(output: Output, include: table::IncludeObject, first: bool) -> Option<u32> {
    let beta = |v: &str| u32::from(v == "v1beta1");
    match output {
        Output::Table(v) => {
            let inc = match include {
                table::IncludeObject::None => 0,
                table::IncludeObject::Metadata => 1,
                table::IncludeObject::Object => 2,
            };
            Some(0x100 | beta(v) << 4 | inc << 1 | u32::from(first))
        }
        Output::PartialMetadata(v) => Some(0x200 | beta(v)),
        _ => None,
    }
}

/// One watch event as a JSON line in `output` (`first`: the first Table row, which carries
/// the column definitions).
fn line_of(
    info: &crate::registry::Resource,
    output: Output,
    include: table::IncludeObject,
    first: bool,
    out: &watch::Out,
) -> bytes::Bytes {
    let event = out.object();
    let conv = event.as_ref().map(|(_, obj)| served_owned(info, obj));
    match (output, event, conv) {
        // a conversion that failed: the watch gets kube's ERROR event
        (_, Some(_), Some(Err(e))) => watch::event_line("ERROR", &e.to_json()),
        (Output::Table(version), Some((t, obj)), Some(Ok(conv))) => {
            let tree;
            let obj = match &conv {
                Some(c) => c,
                None => {
                    tree = obj.value();
                    &tree
                }
            };
            let rv = crate::registry::store::meta_str(obj, "resourceVersion").to_string();
            let mut tbl = table::of_resource(
                info,
                std::slice::from_ref(obj),
                json!({"resourceVersion": rv}),
                include,
                &format!("meta.k8s.io/{version}"),
                jiff::Timestamp::now(),
            );
            if !first {
                if let Some(m) = tbl.as_object_mut() {
                    m.insert("columnDefinitions".into(), Value::Array(vec![]));
                }
            }
            watch::event_line(t.as_str(), &tbl)
        }
        (Output::PartialMetadata(version), Some((t, obj)), Some(Ok(conv))) => {
            let tree;
            let obj = match &conv {
                Some(c) => c,
                None => {
                    tree = obj.value();
                    &tree
                }
            };
            watch::event_line(t.as_str(), &super::partial(obj, version))
        }
        (Output::PartialMetadata(version), None, _) => match out {
            // client-go's metadata informers decode every event, bookmarks included, as
            // PartialObjectMetadata.
            watch::Out::Bookmark(rev, end) => watch::event_line(
                "BOOKMARK",
                &super::partial(&watch::bookmark_object(info, *rev, *end), version),
            ),
            _ => out.line(info),
        },
        (_, Some((t, _)), Some(Ok(Some(o)))) => watch::event_line(t.as_str(), &o),
        _ => out.line(info),
    }
}
