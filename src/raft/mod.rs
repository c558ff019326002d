//! Replication of the MVCC keyspace with openraft (=0.10.0-alpha.37).
//!
//! This is the only module that names openraft. It owns the raft type configuration, the
//! replicated command format ([`Command`]), the RocksDB-backed raft log (`log_store`), the
//! state machine that applies commands to [`Mvcc`] (`state_machine`), and the peer network
//! (`network`, a stub until multi-replica support lands). [`RaftNode`] is the small,
//! openraft-free handle the `kv` facade drives.
//!
//! It deliberately knows nothing of Kubernetes, and nothing of how applied events are
//! delivered to readers: the caller passes an [`ApplyHook`].

mod log_store;
mod network;
mod state_machine;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use openraft::async_runtime::watch::WatchReceiver;
use openraft::{BasicNode, Config, Raft, ReadPolicy, ServerState, SnapshotPolicy};
use serde::{Deserialize, Serialize};

use crate::storage::mvcc::{Event, Mvcc, Revision, Txn, TxnResponse};

pub use log_store::LogStore;
pub use network::NetworkFactory;
pub use state_machine::StateMachine;

/// Identifies a replica. Stable across restarts.
pub type NodeId = u64;

openraft::declare_raft_types!(
    /// Raft type configuration of Rafter.
    pub TypeConfig:
        D = Command,
        R = Response,
        NodeId = NodeId,
        Node = BasicNode,
);

/// A replicated command: the payload of a normal raft log entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Command {
    /// A conditional write transaction.
    Txn(Txn),
    /// Compaction of history at and below the revision.
    Compact(Revision),
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Txn(t) => write!(
                f,
                "txn({} compares, {} ops)",
                t.compares.len(),
                t.success.len()
            ),
            Command::Compact(r) => write!(f, "compact({r})"),
        }
    }
}

/// The result of applying one log entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Response {
    /// Blank and membership entries.
    None,
    Txn(TxnResponse),
    /// `Err` if the compaction was rejected (already compacted / future revision).
    Compact(Result<(), crate::storage::Error>),
}

/// Called by the state machine after each applied entry that changed the keyspace (and after
/// a snapshot is installed, with no events), with the new current revision and its events.
/// It must not block.
pub type ApplyHook = Arc<dyn Fn(Revision, Vec<Event>) + Send + Sync>;

/// Tunables of the raft node.
#[derive(Clone, Debug)]
pub struct RaftOptions {
    /// Build a snapshot (and purge the log behind it) every this many applied entries.
    pub snapshot_every: u64,
    /// Log entries kept behind the last snapshot (for slow followers).
    pub keep_logs: u64,
    pub heartbeat_ms: u64,
    pub election_timeout_ms: (u64, u64),
    /// Address other replicas reach this node at (unused with one voter).
    pub advertise_addr: String,
}

impl Default for RaftOptions {
    fn default() -> Self {
        RaftOptions {
            snapshot_every: 10_000,
            keep_logs: 1_000,
            heartbeat_ms: 100,
            election_timeout_ms: (300, 600),
            advertise_addr: String::new(),
        }
    }
}

/// Why a proposal or read barrier failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RaftFailure {
    #[error("not the leader (leader: {leader:?})")]
    NotLeader { leader: Option<NodeId> },
    #[error("raft node stopped: {0}")]
    Stopped(String),
    #[error("{0}")]
    Other(String),
}

/// A snapshot of the node's raft status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub id: NodeId,
    pub leader: Option<NodeId>,
    pub is_leader: bool,
    pub running: bool,
    pub committed_index: Option<u64>,
    pub applied_index: Option<u64>,
}

/// Handle of a running raft node.
#[derive(Clone)]
pub struct RaftNode {
    id: NodeId,
    raft: Raft<TypeConfig, StateMachine>,
    advertise_addr: String,
}

fn failure<E>(e: openraft::errors::RaftError<TypeConfig, E>) -> RaftFailure
where
    E: std::error::Error + openraft::TryAsRef<openraft::errors::ForwardToLeader<TypeConfig>>,
{
    if let Some(f) = e.forward_to_leader() {
        return RaftFailure::NotLeader {
            leader: f.leader_id,
        };
    }
    match e {
        openraft::errors::RaftError::Fatal(f) => RaftFailure::Stopped(f.to_string()),
        other => RaftFailure::Other(other.to_string()),
    }
}

impl RaftNode {
    /// Starts the raft node over `mvcc` (whose engine also holds the raft log). Snapshots are
    /// kept in `snapshot_dir`. Recovers whatever state is on disk.
    pub async fn start(
        id: NodeId,
        mvcc: Arc<Mvcc>,
        snapshot_dir: PathBuf,
        hook: ApplyHook,
        opts: RaftOptions,
    ) -> Result<RaftNode, String> {
        let config = Config {
            cluster_name: "rafter".to_string(),
            heartbeat_interval: opts.heartbeat_ms,
            election_timeout_min: opts.election_timeout_ms.0,
            election_timeout_max: opts.election_timeout_ms.1,
            snapshot_policy: SnapshotPolicy::LogsSinceLast(opts.snapshot_every),
            max_in_snapshot_log_to_keep: opts.keep_logs,
            ..Default::default()
        }
        .validate()
        .map_err(|e| format!("raft config: {e}"))?;
        let log = LogStore::new(mvcc.engine().clone());
        let sm = StateMachine::new(mvcc, snapshot_dir, hook).map_err(|e| e.to_string())?;
        let raft = Raft::new(id, Arc::new(config), NetworkFactory::default(), log, sm)
            .await
            .map_err(|e| format!("start raft: {e}"))?;
        Ok(RaftNode {
            id,
            raft,
            advertise_addr: opts.advertise_addr,
        })
    }

    /// On a never-initialized store, makes this node the single voter of a new cluster.
    /// Returns whether it initialized.
    pub async fn initialize_if_new(&self) -> Result<bool, String> {
        if self
            .raft
            .is_initialized()
            .await
            .map_err(|e| e.to_string())?
        {
            return Ok(false);
        }
        let mut members = BTreeMap::new();
        members.insert(self.id, BasicNode::new(&self.advertise_addr));
        self.raft
            .initialize(members)
            .await
            .map_err(|e| format!("initialize raft: {e}"))?;
        Ok(true)
    }

    /// Waits until this node is leader (bounded).
    pub async fn wait_leader(&self, timeout: Duration) -> Result<(), String> {
        self.raft
            .wait(Some(timeout))
            .state(ServerState::Leader, "become leader")
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Replicates `cmd`; returns its result once committed and applied on this replica.
    pub async fn propose(&self, cmd: Command) -> Result<Response, RaftFailure> {
        self.raft
            .client_write(cmd)
            .await
            .map(|r| r.data)
            .map_err(failure)
    }

    /// Linearizable read barrier (ReadIndex): returns once this replica has applied
    /// everything committed before the call.
    pub async fn read_barrier(&self) -> Result<(), RaftFailure> {
        self.raft
            .ensure_linearizable(ReadPolicy::ReadIndex)
            .await
            .map(|_| ())
            .map_err(failure)
    }

    pub fn status(&self) -> Status {
        let m = self.raft.metrics().borrow_watched().clone();
        Status {
            id: self.id,
            leader: m.current_leader,
            is_leader: m.state == ServerState::Leader && m.current_leader == Some(self.id),
            running: m.running_state.is_ok(),
            committed_index: m.local_committed.map(|l| l.index()),
            applied_index: m.last_applied.map(|l| l.index()),
        }
    }

    pub fn is_leader(&self) -> bool {
        self.status().is_leader
    }

    /// Asks raft to build a snapshot now (and purge the log behind it).
    pub async fn trigger_snapshot(&self) -> Result<(), String> {
        self.raft
            .trigger()
            .snapshot()
            .await
            .map_err(|e| e.to_string())
    }

    /// Stops the raft tasks (idempotent).
    pub async fn shutdown(&self) {
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!("raft shutdown: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::engine::Engine;
    use openraft::testing::log::{StoreBuilder, Suite};
    use openraft::type_config::TypeConfigExt;
    use openraft::StorageError;

    struct Builder;

    impl StoreBuilder<TypeConfig, LogStore, StateMachine, tempfile::TempDir> for Builder {
        async fn build(
            &self,
        ) -> Result<(tempfile::TempDir, LogStore, StateMachine), StorageError<TypeConfig>> {
            let dir = tempfile::tempdir()
                .map_err(|e| StorageError::read(TypeConfig::err_from_error(&e)))?;
            let engine = Engine::open(&dir.path().join("db")).unwrap();
            let mvcc = Arc::new(Mvcc::open(engine.clone()).unwrap());
            let hook: ApplyHook = Arc::new(|_, _| {});
            let sm = StateMachine::new(mvcc, dir.path().join("snapshots"), hook).unwrap();
            Ok((dir, LogStore::new(engine), sm))
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn openraft_storage_suite() {
        Suite::test_all(Builder).await.unwrap();
    }
}
