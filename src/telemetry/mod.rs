//! Observability plumbing shared by every layer: the log output (`logging`: kube's
//! `--logging-format`, text or JSON lines).

pub mod logging;
