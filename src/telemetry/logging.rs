//! The process's log output: kube's `--logging-format` (`text`, the default, or `json`) over
//! `tracing`, filtered by `RAFTER_LOG` (env-filter syntax).
//!
//! `json` writes one object per line to stderr with kube's keys (component-base's JSON
//! logger): `ts` (seconds since the epoch, a float), `caller` (`file:line`), `msg`, `v` (the
//! verbosity: 0 for info and warnings, 4 for debug, 6 for trace; errors have none, as
//! klog's), plus `level`, `logger` (the module) and the fields of the event and of every
//! span it happened in, outermost first (a request's `trace_id`, for instance). Nothing here
//! decides what is logged: callers never put credentials in fields. The same subscriber
//! carries the span exporter (`telemetry::otlp`), filtered on its own.

use std::io::Write;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// `--logging-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Why the logging flags were refused (kube's validation text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("format: Invalid value: {0:?}: Unsupported log format")]
    UnsupportedFormat(String),
}

impl std::str::FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Format, Error> {
        match s {
            // kube's default is the empty string, meaning text.
            "" | "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            other => Err(Error::UnsupportedFormat(other.to_string())),
        }
    }
}

/// The filter when `RAFTER_LOG` is unset: warnings and errors, without the raft library's
/// per-heartbeat noise.
fn default_filter(quiet: &str) -> EnvFilter {
    EnvFilter::new(format!("warn,{quiet}"))
}

/// Installs the global subscriber writing `format` to stderr. `quiet` are directives added
/// to the default filter (used when `RAFTER_LOG` is unset).
pub fn init(format: Format, quiet: &str) {
    use tracing::subscriber::Interest;
    let filter = EnvFilter::try_from_env("RAFTER_LOG").unwrap_or_else(|_| default_filter(quiet));
    // Span export sees the request and peer spans whatever `RAFTER_LOG` says, and only once
    // it is started (decided per span, never cached as "off").
    let export = super::otlp::OtlpLayer.with_filter(
        tracing_subscriber::filter::DynFilterFn::new(|m, _| {
            super::otlp::active() && super::otlp::exported(m)
        })
        .with_callsite_filter(|m| {
            if super::otlp::exported(m) {
                Interest::sometimes()
            } else {
                Interest::never()
            }
        })
        .with_max_level_hint(tracing::level_filters::LevelFilter::INFO),
    );
    let registry = tracing_subscriber::registry().with(export);
    let res = match format {
        Format::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_filter(filter),
            )
            .try_init(),
        Format::Json => registry.with(JsonLayer.with_filter(filter)).try_init(),
    };
    // A second call (tests running several replicas in one process) keeps the first.
    let _ = res;
}

/// A span's fields, kept in its extensions for the events inside it.
struct SpanFields(Map<String, Value>);

/// Collects fields into a JSON object (`message` is the event's text).
struct Collect<'a>(&'a mut Map<String, Value>);

impl Visit for Collect<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0
            .insert(field.name().to_string(), Value::from(value.to_string()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), Value::from(format!("{value:?}")));
    }
}

/// klog's verbosity of a level (`None`: an error, which has no `v`).
fn verbosity(level: &Level) -> Option<u8> {
    match *level {
        Level::ERROR => None,
        Level::WARN | Level::INFO => Some(0),
        Level::DEBUG => Some(4),
        Level::TRACE => Some(6),
    }
}

/// One log line of `event` with the fields of `spans` (outermost first).
fn line<'a>(
    event: &Event<'_>,
    spans: impl Iterator<Item = &'a Map<String, Value>>,
    now: std::time::SystemTime,
) -> Vec<u8> {
    let meta = event.metadata();
    let mut fields = Map::new();
    event.record(&mut Collect(&mut fields));
    let msg = fields.remove("message").unwrap_or(Value::from(""));
    let mut out = Map::new();
    let ts = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    out.insert("ts".into(), Value::from(ts));
    if let (Some(file), Some(n)) = (meta.file(), meta.line()) {
        out.insert("caller".into(), Value::from(format!("{file}:{n}")));
    }
    out.insert("msg".into(), msg);
    if let Some(v) = verbosity(meta.level()) {
        out.insert("v".into(), Value::from(v));
    }
    out.insert(
        "level".into(),
        Value::from(meta.level().as_str().to_ascii_lowercase()),
    );
    out.insert("logger".into(), Value::from(meta.target()));
    for s in spans {
        for (k, v) in s {
            out.insert(k.clone(), v.clone());
        }
    }
    for (k, v) in fields {
        out.insert(k, v);
    }
    let mut buf = serde_json::to_vec(&Value::Object(out)).unwrap_or_default();
    buf.push(b'\n');
    buf
}

/// The `json` format's layer: one JSON object per event on stderr.
struct JsonLayer;

impl<S> Layer<S> for JsonLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: Context<'_, S>,
    ) {
        if let Some(span) = ctx.span(id) {
            let mut fields = Map::new();
            attrs.record(&mut Collect(&mut fields));
            span.extensions_mut().insert(SpanFields(fields));
        }
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: Context<'_, S>,
    ) {
        if let Some(span) = ctx.span(id) {
            let mut ext = span.extensions_mut();
            if let Some(f) = ext.get_mut::<SpanFields>() {
                values.record(&mut Collect(&mut f.0));
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let spans: Vec<Map<String, Value>> = ctx
            .event_scope(event)
            .map(|scope| {
                scope
                    .from_root()
                    .filter_map(|s| s.extensions().get::<SpanFields>().map(|f| f.0.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let buf = line(event, spans.iter(), std::time::SystemTime::now());
        // One write per line, so concurrent lines never interleave.
        let _ = std::io::stderr().lock().write_all(&buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_as_kube_names_them() {
        assert_eq!("text".parse(), Ok(Format::Text));
        assert_eq!("".parse(), Ok(Format::Text));
        assert_eq!("json".parse(), Ok(Format::Json));
        let e = "xml".parse::<Format>().unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"format: Invalid value: "xml": Unsupported log format"#
        );
    }

    /// A line carries kube's keys, the span's fields and the event's, in one JSON object.
    #[test]
    fn json_lines_have_kube_keys_and_span_fields() {
        use std::sync::{Arc, Mutex};
        struct Capture(Arc<Mutex<Vec<Vec<u8>>>>);
        impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
            fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
                let spans: Vec<Map<String, Value>> = ctx
                    .event_scope(event)
                    .map(|scope| {
                        scope
                            .from_root()
                            .filter_map(|s| s.extensions().get::<SpanFields>().map(|f| f.0.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_500);
                self.0.lock().unwrap().push(line(event, spans.iter(), at));
            }
        }
        let lines = Arc::new(Mutex::new(Vec::new()));
        tracing::subscriber::with_default(
            tracing_subscriber::registry()
                .with(SpanKeeper)
                .with(Capture(lines.clone())),
            || {
                let span = tracing::info_span!("request", trace_id = "abc", verb = "get");
                let _g = span.enter();
                tracing::info!(code = 200u64, "served");
                tracing::error!("failed");
            },
        );
        let lines = lines.lock().unwrap();
        let first: Value = serde_json::from_slice(&lines[0]).unwrap();
        assert_eq!(first["ts"], Value::from(1.5));
        assert_eq!(first["msg"], "served");
        assert_eq!(first["v"], 0);
        assert_eq!(first["level"], "info");
        assert_eq!(first["trace_id"], "abc");
        assert_eq!(first["verb"], "get");
        assert_eq!(first["code"], 200);
        assert!(first["caller"].as_str().unwrap().contains("logging.rs:"));
        let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
        assert_eq!(&keys[..3], ["ts", "caller", "msg"]);
        let second: Value = serde_json::from_slice(&lines[1]).unwrap();
        assert!(second.get("v").is_none(), "errors have no verbosity");
        assert_eq!(second["level"], "error");
    }

    /// Stores span fields as [`JsonLayer`] does, without writing anything.
    struct SpanKeeper;

    impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SpanKeeper {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            id: &tracing::span::Id,
            ctx: Context<'_, S>,
        ) {
            JsonLayer.on_new_span(attrs, id, ctx)
        }
    }
}
