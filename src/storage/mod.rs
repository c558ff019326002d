//! Local, replicated-agnostic storage: a RocksDB database (`engine`) and an etcd-like MVCC
//! keyspace on top of it (`mvcc`).
//!
//! This module knows nothing of Kubernetes or Raft: keys and values are opaque bytes, and the
//! callers that replicate commands (the `raft` module) pass any extra records they need written
//! atomically with a command as an opaque [`engine::Batch`].

pub mod dump;
pub mod engine;
pub mod mvcc;

/// Errors of the storage layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum Error {
    #[error("required revision {requested} has been compacted (compacted revision {compacted})")]
    Compacted { requested: i64, compacted: i64 },
    #[error("required revision {requested} is a future revision (current {current})")]
    FutureRevision { requested: i64, current: i64 },
    /// The store cannot serve reads right now (e.g. it is installing a snapshot).
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error("storage: {0}")]
    Storage(String),
}
