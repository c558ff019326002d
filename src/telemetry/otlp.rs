//! OTLP export of sampled spans (kube's `--tracing-config-file` endpoint), with no
//! OpenTelemetry SDK: [`OtlpLayer`] turns every closed `request` and `peer` span whose trace
//! is sampled into an OTLP `Span` (its ids from the span's `trace_id`, `span_id` and
//! `parent_span_id` fields, its other fields as attributes), and one task sends them in
//! batches to the collector's gRPC `TraceService/Export` (`proto/otlp_trace.proto`, OTLP's
//! field numbers), plaintext as kube dials it. A full queue or an unreachable collector drops
//! spans, never blocks a request.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// OTLP's trace messages and the collector's service (the subset Rafter sends).
pub mod pb {
    tonic::include_proto!("opentelemetry.proto.collector.trace.v1");
}

/// Spans waiting for export; beyond this many they are dropped.
const QUEUE: usize = 4096;
/// Most spans in one Export call.
const BATCH: usize = 512;
/// How long a span may wait for its batch.
const BATCH_DELAY: Duration = Duration::from_secs(1);
/// Deadline of one Export call.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

static SINK: OnceLock<tokio::sync::mpsc::Sender<pb::Span>> = OnceLock::new();

/// Whether spans are exported (a tracing configuration was given).
pub fn active() -> bool {
    SINK.get().is_some()
}

/// Starts exporting to `endpoint` (`host:port`, or `dns://host:port`); call within a tokio
/// runtime, once. Unix-socket endpoints are refused.
pub fn start(endpoint: &str, service: &str) -> Result<(), String> {
    let target = endpoint.strip_prefix("dns://").unwrap_or(endpoint);
    let target = target.trim_start_matches('/');
    if endpoint.starts_with("unix") {
        return Err(format!(
            "tracing endpoint {endpoint:?}: unix sockets are not supported, use host:port"
        ));
    }
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{target}"))
        .map_err(|e| format!("tracing endpoint {endpoint:?}: {e}"))?
        .connect_timeout(Duration::from_secs(3))
        .connect_lazy();
    let (tx, rx) = tokio::sync::mpsc::channel(QUEUE);
    if SINK.set(tx).is_err() {
        return Err("span export already started".into());
    }
    let resource = pb::Resource {
        attributes: vec![
            attr("service.name", Value::from(service)),
            attr(
                "service.instance.id",
                Value::from(hostname().unwrap_or_default()),
            ),
        ],
    };
    tokio::spawn(export_loop(channel, resource, rx));
    Ok(())
}

fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
}

/// Sends queued spans in batches until the queue closes.
async fn export_loop(
    channel: tonic::transport::Channel,
    resource: pb::Resource,
    mut rx: tokio::sync::mpsc::Receiver<pb::Span>,
) {
    let mut client = pb::trace_service_client::TraceServiceClient::new(channel);
    let mut failing = false;
    while let Some(first) = rx.recv().await {
        let mut spans = vec![first];
        let deadline = tokio::time::Instant::now() + BATCH_DELAY;
        while spans.len() < BATCH {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(s)) => spans.push(s),
                Ok(None) | Err(_) => break,
            }
        }
        let n = spans.len();
        let mut req = tonic::Request::new(pb::ExportTraceServiceRequest {
            resource_spans: vec![pb::ResourceSpans {
                resource: Some(resource.clone()),
                scope_spans: vec![pb::ScopeSpans {
                    scope: Some(pb::InstrumentationScope {
                        name: "rafter".into(),
                        version: env!("CARGO_PKG_VERSION").into(),
                    }),
                    spans,
                }],
            }],
        });
        req.set_timeout(EXPORT_TIMEOUT);
        match client.export(req).await {
            Ok(_) => failing = false,
            // Logged once per failing streak (the spans are dropped).
            Err(e) if !failing => {
                failing = true;
                tracing::warn!("exporting {n} spans failed: {}", e.message());
            }
            Err(_) => {}
        }
    }
}

fn attr(key: &str, v: Value) -> pb::KeyValue {
    use pb::any_value::Value as V;
    let value = match v {
        Value::Bool(b) => V::BoolValue(b),
        Value::Number(n) if n.is_i64() || n.is_u64() => V::IntValue(n.as_i64().unwrap_or(i64::MAX)),
        Value::Number(n) => V::DoubleValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => V::StringValue(s),
        other => V::StringValue(other.to_string()),
    };
    pb::KeyValue {
        key: key.to_string(),
        value: Some(pb::AnyValue { value: Some(value) }),
    }
}

fn unhex(v: Option<&Value>) -> Vec<u8> {
    let s = v.and_then(Value::as_str).unwrap_or("");
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// What the layer keeps of an open span.
struct Open {
    start: SystemTime,
    fields: Map<String, Value>,
}

/// The OTLP span of a closed `request` or `peer` span, `None` when its trace is not sampled.
fn to_otlp(name: &str, open: Open, end: SystemTime) -> Option<pb::Span> {
    let mut f = open.fields;
    if f.remove("sampled") != Some(Value::Bool(true)) {
        return None;
    }
    let trace_id = unhex(f.remove("trace_id").as_ref());
    let span_id = unhex(f.remove("span_id").as_ref());
    let parent_span_id = unhex(f.remove("parent_span_id").as_ref());
    if trace_id.len() != 16 || span_id.len() != 8 {
        return None;
    }
    let code = f.get("code").and_then(Value::as_u64);
    let (span_name, kind) = match name {
        "request" => (
            format!(
                "HTTP {}",
                f.get("method").and_then(Value::as_str).unwrap_or("")
            ),
            pb::span::SpanKind::Server,
        ),
        _ => (
            format!(
                "raft.{}",
                f.get("call").and_then(Value::as_str).unwrap_or("peer")
            ),
            pb::span::SpanKind::Server,
        ),
    };
    let status = match code {
        Some(c) if c >= 500 => pb::Status {
            message: format!("HTTP {c}"),
            code: pb::status::StatusCode::Error as i32,
        },
        _ => pb::Status::default(),
    };
    Some(pb::Span {
        trace_id,
        span_id,
        trace_state: String::new(),
        parent_span_id,
        name: span_name,
        kind: kind as i32,
        start_time_unix_nano: unix_nanos(open.start),
        end_time_unix_nano: unix_nanos(end),
        attributes: f.into_iter().map(|(k, v)| attr(&k, v)).collect(),
        status: Some(status),
    })
}

/// Collects the fields of a span.
struct Collect<'a>(&'a mut Map<String, Value>);

impl tracing::field::Visit for Collect<'_> {
    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().into(), Value::from(format!("{value:?}")));
    }
}

/// Whether a span is one the exporter sends (a request's, or a peer call's on the leader).
pub fn exported(meta: &tracing::Metadata<'_>) -> bool {
    meta.is_span()
        && matches!(meta.name(), "request" | "peer")
        && meta.target().starts_with("rafter")
}

/// The layer that hands finished sampled spans to the exporter.
pub struct OtlpLayer;

impl<S> Layer<S> for OtlpLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: Context<'_, S>,
    ) {
        if !active() || !exported(attrs.metadata()) {
            return;
        }
        if let Some(span) = ctx.span(id) {
            let mut fields = Map::new();
            attrs.record(&mut Collect(&mut fields));
            span.extensions_mut().insert(Open {
                start: SystemTime::now(),
                fields,
            });
        }
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: Context<'_, S>,
    ) {
        if let Some(span) = ctx.span(id) {
            if let Some(open) = span.extensions_mut().get_mut::<Open>() {
                values.record(&mut Collect(&mut open.fields));
            }
        }
    }

    fn on_close(&self, id: tracing::span::Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(open) = span.extensions_mut().remove::<Open>() else {
            return;
        };
        if let (Some(tx), Some(s)) = (SINK.get(), to_otlp(span.name(), open, SystemTime::now())) {
            let _ = tx.try_send(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_spans_become_otlp_spans() {
        let mut fields = Map::new();
        fields.insert("trace_id".into(), "4bf92f3577b34da6a3ce929d0e0e4736".into());
        fields.insert("span_id".into(), "00f067aa0ba902b7".into());
        fields.insert("parent_span_id".into(), "".into());
        fields.insert("sampled".into(), true.into());
        fields.insert("method".into(), "GET".into());
        fields.insert("code".into(), 503u64.into());
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1);
        let open = Open { start, fields };
        let s = to_otlp("request", open, start + Duration::from_millis(5)).unwrap();
        assert_eq!(s.name, "HTTP GET");
        assert_eq!(s.trace_id.len(), 16);
        assert_eq!(
            s.span_id,
            vec![0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
        assert!(s.parent_span_id.is_empty());
        assert_eq!(s.end_time_unix_nano - s.start_time_unix_nano, 5_000_000);
        assert_eq!(s.status.unwrap().code, pb::status::StatusCode::Error as i32);
        assert!(s.attributes.iter().any(|a| a.key == "method"));
        let mut unsampled = Map::new();
        unsampled.insert("sampled".into(), false.into());
        let open = Open {
            start,
            fields: unsampled,
        };
        assert!(to_otlp("request", open, start).is_none());
    }
}
