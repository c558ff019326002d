//! Observability plumbing shared by every layer: the log output (`logging`: kube's
//! `--logging-format`, text or JSON lines), the Prometheus recorder's histogram buckets
//! (`metrics`), request trace context (`trace`: W3C `traceparent` taken from clients and
//! carried to the leader in gRPC metadata), and the export of sampled spans over OTLP
//! (`otlp`).

pub mod logging;
pub mod metrics;
pub mod otlp;
pub mod trace;
