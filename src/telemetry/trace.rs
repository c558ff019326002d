//! Request trace context in W3C Trace Context form (`traceparent:
//! 00-<trace id>-<parent span id>-<flags>`): taken from a client's header (or started
//! anew), held for the request's task in a task-local ([`scope`], [`current`]), sent to the
//! leader in gRPC metadata with forwarded writes and ReadIndex calls, and continued there in
//! a child span. Log lines inside a request's `tracing` span carry its `trace_id` and
//! `span_id` fields. [`TracingConfiguration`] is kube's `--tracing-config-file`: its
//! sampling rate decides the `sampled` flag of new traces, and `telemetry::otlp` exports
//! the sampled spans to its endpoint.

use std::fmt::Write;

/// The header (and gRPC metadata key) that carries the context.
pub const TRACEPARENT: &str = "traceparent";

/// One span's place in a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// The span this one continues (the caller's), if any.
    pub parent_span_id: Option<[u8; 8]>,
    /// The `sampled` flag: whether the trace is recorded (exported).
    pub sampled: bool,
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != 2 * N
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl Context {
    /// Parses a `traceparent` value (version `00`, or a later version's first four fields,
    /// as the specification asks); `None` when malformed or the ids are all zero.
    pub fn parse(v: &str) -> Option<Context> {
        let mut parts = v.trim().split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let span = parts.next()?;
        let flags = parts.next()?;
        let rest = parts.next();
        if version.len() != 2 || version == "ff" || (version == "00" && rest.is_some()) {
            return None;
        }
        unhex::<1>(version)?;
        let trace_id = unhex::<16>(trace).filter(|t| t.iter().any(|b| *b != 0))?;
        let span_id = unhex::<8>(span).filter(|s| s.iter().any(|b| *b != 0))?;
        let flags = unhex::<1>(flags)?[0];
        Some(Context {
            trace_id,
            span_id,
            parent_span_id: None,
            sampled: flags & 1 == 1,
        })
    }

    /// A new trace (a request without a `traceparent`).
    pub fn root(sampled: bool) -> Context {
        use rand::RngCore;
        let mut trace_id = [0u8; 16];
        let mut rng = rand::thread_rng();
        while trace_id.iter().all(|b| *b == 0) {
            rng.fill_bytes(&mut trace_id);
        }
        Context {
            trace_id,
            span_id: new_span_id(),
            parent_span_id: None,
            sampled,
        }
    }

    /// A span of the same trace whose parent is this one.
    pub fn child(&self) -> Context {
        Context {
            trace_id: self.trace_id,
            span_id: new_span_id(),
            parent_span_id: Some(self.span_id),
            sampled: self.sampled,
        }
    }

    /// The `traceparent` value naming this span as the parent.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            hex(&self.trace_id),
            hex(&self.span_id),
            u8::from(self.sampled)
        )
    }

    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    pub fn span_id_hex(&self) -> String {
        hex(&self.span_id)
    }

    pub fn parent_span_id_hex(&self) -> String {
        self.parent_span_id.map(|p| hex(&p)).unwrap_or_default()
    }
}

fn new_span_id() -> [u8; 8] {
    use rand::RngCore;
    let mut id = [0u8; 8];
    let mut rng = rand::thread_rng();
    while id.iter().all(|b| *b == 0) {
        rng.fill_bytes(&mut id);
    }
    id
}

/// kube's `--tracing-config-file`: an `apiserver.config.k8s.io` `TracingConfiguration`
/// (`v1alpha1`, `v1beta1` or `v1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracingConfiguration {
    /// The OTLP collector (kube's default `localhost:4317`).
    pub endpoint: String,
    /// The share of new traces that are sampled (kube's default 0).
    pub sampling_rate_per_million: u32,
}

/// Why a tracing configuration file was refused (kube's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("unable to read tracing configuration from {path:?}: {why}")]
    Read { path: String, why: String },
    #[error("unable to decode tracing configuration data: {0}")]
    Decode(String),
    #[error("{0}")]
    Invalid(String),
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TracingFile {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    endpoint: Option<String>,
    sampling_rate_per_million: Option<i64>,
}

impl TracingConfiguration {
    /// Reads and validates a configuration file.
    pub fn load(path: &std::path::Path) -> Result<TracingConfiguration, ConfigError> {
        let data = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        TracingConfiguration::parse(&data)
    }

    /// Parses and validates a configuration (JSON or YAML).
    pub fn parse(data: &str) -> Result<TracingConfiguration, ConfigError> {
        let f: TracingFile =
            serde_yaml::from_str(data).map_err(|e| ConfigError::Decode(e.to_string()))?;
        let known = matches!(
            f.api_version.as_str(),
            "apiserver.config.k8s.io/v1alpha1"
                | "apiserver.config.k8s.io/v1beta1"
                | "apiserver.config.k8s.io/v1"
        );
        if !known || f.kind != "TracingConfiguration" {
            return Err(ConfigError::Decode(format!(
                "no kind {:?} is registered for version {:?}",
                f.kind, f.api_version
            )));
        }
        let mut errs = Vec::new();
        let rate = f.sampling_rate_per_million.unwrap_or(0);
        if rate < 0 {
            errs.push(format!(
                "samplingRatePerMillion: Invalid value: {rate}: sampling rate must be positive"
            ));
        }
        if rate > 1_000_000 {
            errs.push(format!("samplingRatePerMillion: Invalid value: {rate}: sampling rate per million must be less than or equal to one million"));
        }
        let endpoint = f.endpoint.unwrap_or_else(|| "localhost:4317".to_string());
        let full = if endpoint.contains("//") {
            endpoint.clone()
        } else {
            format!("dns://{endpoint}")
        };
        let scheme = full.split_once("://").map(|(s, _)| s).unwrap_or("");
        if !matches!(scheme, "dns" | "unix" | "unix-abstract") {
            errs.push(format!("endpoint: Invalid value: {full:?}: unsupported scheme: {scheme}.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md"));
        }
        if !errs.is_empty() {
            return Err(ConfigError::Invalid(if errs.len() == 1 {
                errs.remove(0)
            } else {
                format!("[{}]", errs.join(", "))
            }));
        }
        Ok(TracingConfiguration {
            endpoint,
            sampling_rate_per_million: rate as u32,
        })
    }
}

/// `samplingRatePerMillion` of the tracing configuration: the share of new traces that are
/// recorded (0 without one). A client's `traceparent` decides for its own trace.
static SAMPLING_PER_MILLION: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Sets the share of new traces that are sampled (per million; at most 1,000,000).
pub fn set_sampling_rate_per_million(n: u32) {
    SAMPLING_PER_MILLION.store(n.min(1_000_000), std::sync::atomic::Ordering::Relaxed);
}

/// Whether a new trace is sampled.
pub fn sample_root() -> bool {
    use rand::Rng;
    match SAMPLING_PER_MILLION.load(std::sync::atomic::Ordering::Relaxed) {
        0 => false,
        n if n >= 1_000_000 => true,
        n => rand::thread_rng().gen_range(0..1_000_000) < n,
    }
}

tokio::task_local! {
    static CURRENT: Context;
}

/// Runs `fut` with `ctx` as its task's trace context.
pub fn scope<F: std::future::Future>(
    ctx: Context,
    fut: F,
) -> impl std::future::Future<Output = F::Output> {
    CURRENT.scope(ctx, fut)
}

/// The trace context of the running task, if it has one.
pub fn current() -> Option<Context> {
    CURRENT.try_with(|c| *c).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trips() {
        let v = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let c = Context::parse(v).unwrap();
        assert_eq!(c.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(c.span_id_hex(), "00f067aa0ba902b7");
        assert!(c.sampled);
        assert_eq!(c.traceparent(), v);
        let child = c.child();
        assert_eq!(child.trace_id, c.trace_id);
        assert_ne!(child.span_id, c.span_id);
        assert_eq!(child.parent_span_id, Some(c.span_id));
        assert!(child.traceparent().ends_with("-01"));
    }

    #[test]
    fn malformed_traceparents_are_ignored() {
        for v in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(Context::parse(v), None, "{v:?}");
        }
        // A later version may add fields.
        assert!(
            Context::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x").is_some()
        );
    }

    #[test]
    fn tracing_configuration_as_kube_validates_it() {
        let c = TracingConfiguration::parse(
            "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nsamplingRatePerMillion: 250\n",
        )
        .unwrap();
        assert_eq!(c.endpoint, "localhost:4317");
        assert_eq!(c.sampling_rate_per_million, 250);
        let bad = |body: &str| {
            TracingConfiguration::parse(&format!(
                "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\n{body}"
            ))
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            bad("samplingRatePerMillion: -1"),
            "samplingRatePerMillion: Invalid value: -1: sampling rate must be positive"
        );
        assert_eq!(
            bad("samplingRatePerMillion: 1000001"),
            "samplingRatePerMillion: Invalid value: 1000001: sampling rate per million must be less than or equal to one million"
        );
        assert!(bad("endpoint: http://collector:4317").starts_with(
            r#"endpoint: Invalid value: "http://collector:4317": unsupported scheme: http."#
        ));
        let e = TracingConfiguration::parse("apiVersion: v1\nkind: Pod\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"unable to decode tracing configuration data: no kind "Pod" is registered for version "v1""#
        );
    }

    #[tokio::test]
    async fn the_context_follows_the_task() {
        assert_eq!(current(), None);
        let c = Context::root(false);
        let seen = scope(c, async { current() }).await;
        assert_eq!(seen, Some(c));
    }
}
