//! Observability plumbing shared by every layer: the log output (`logging`: kube's
//! `--logging-format`, text or JSON lines) and the Prometheus recorder's histogram buckets
//! (`metrics`).

pub mod logging;
pub mod metrics;
