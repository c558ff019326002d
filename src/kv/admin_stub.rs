//! TEMPORARY STUB of the cluster-administration part of the `kv` contract (status, membership
//! changes, snapshots, backup and restore), for the admin API to build against until the
//! replication core lands. Single-replica behaviour only: the integrator deletes this file
//! (and its `mod` line in `kv/mod.rs`) when merging the real implementation.

use serde::{Deserialize, Serialize};

use super::{Error, Kv, KvConfig, Revision};
use crate::storage::engine::{Batch, Engine};
use crate::storage::mvcc::{KeyValue, Mvcc};

#[derive(Clone, Debug, serde::Serialize)]
pub struct ReplicaStatus {
    pub id: u64,
    pub peer_addr: String,
    pub api_addr: String,
    /// "leader" | "follower" | "learner" | "candidate" | "unknown"
    pub role: String,
    pub voter: bool,
    pub matched_index: Option<u64>,
    pub lag: Option<u64>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ClusterStatus {
    pub node_id: u64,
    pub leader: Option<u64>,
    pub term: u64,
    pub commit_index: u64,
    pub applied_index: u64,
    pub current_revision: i64,
    pub compacted_revision: i64,
    pub members: Vec<ReplicaStatus>,
}

#[derive(Clone, Debug)]
pub struct Backup {
    pub revision: i64,
    pub data: Vec<u8>,
}

/// The stub's backup file body.
#[derive(Serialize, Deserialize)]
struct StubBackup {
    format: String,
    revision: Revision,
    kvs: Vec<KeyValue>,
}

const STUB_FORMAT: &str = "rafter-backup-stub/v1";

fn not_yet(what: &str) -> Error {
    Error::Unavailable(format!(
        "{what} needs several replicas (not yet implemented)"
    ))
}

impl Kv {
    pub fn node_id(&self) -> u64 {
        self.inner.raft.status().id
    }

    pub async fn cluster_status(&self) -> Result<ClusterStatus, Error> {
        let s = self.inner.raft.status();
        let commit_index = s.committed_index.unwrap_or(0);
        let applied_index = s.applied_index.unwrap_or(0);
        let role = if s.is_leader { "leader" } else { "unknown" };
        Ok(ClusterStatus {
            node_id: s.id,
            leader: s.leader,
            term: 0,
            commit_index,
            applied_index,
            current_revision: self.current_revision(),
            compacted_revision: self.compacted_revision(),
            members: vec![ReplicaStatus {
                id: s.id,
                peer_addr: String::new(),
                api_addr: String::new(),
                role: role.to_string(),
                voter: true,
                matched_index: Some(applied_index),
                lag: Some(0),
            }],
        })
    }

    pub async fn add_learner(
        &self,
        _id: u64,
        _peer_addr: String,
        _api_addr: String,
    ) -> Result<(), Error> {
        Err(not_yet("adding a learner"))
    }

    pub async fn promote(&self, _id: u64) -> Result<(), Error> {
        Err(not_yet("promoting a learner"))
    }

    pub async fn remove_member(&self, _id: u64) -> Result<(), Error> {
        Err(not_yet("removing a member"))
    }

    pub async fn transfer_leader(&self, _to: u64) -> Result<(), Error> {
        Err(not_yet("transferring leadership"))
    }

    pub async fn trigger_snapshot(&self) -> Result<u64, Error> {
        self.inner
            .raft
            .trigger_snapshot()
            .await
            .map_err(Error::Unavailable)?;
        Ok(self.inner.raft.status().applied_index.unwrap_or(0))
    }

    pub async fn backup(&self) -> Result<Backup, Error> {
        self.read_barrier().await?;
        let exp = self.inner.mvcc.export(&[])?;
        let body = StubBackup {
            format: STUB_FORMAT.to_string(),
            revision: exp.revision,
            kvs: exp.kvs,
        };
        let data = serde_json::to_vec(&body).map_err(|e| Error::Storage(e.to_string()))?;
        Ok(Backup {
            revision: exp.revision,
            data,
        })
    }

    pub fn restore(backup: &[u8], cfg: &KvConfig) -> Result<i64, Error> {
        let body: StubBackup = serde_json::from_slice(backup)
            .map_err(|e| Error::Storage(format!("not a backup file: {e}")))?;
        if body.format != STUB_FORMAT {
            return Err(Error::Storage(format!(
                "unknown backup format {:?}",
                body.format
            )));
        }
        let db = cfg.data_dir.join("db");
        if db.exists() {
            return Err(Error::Storage(format!(
                "{} already holds a database; restore needs a new data folder",
                cfg.data_dir.display()
            )));
        }
        let mvcc = Mvcc::open(Engine::open(&db)?)?;
        mvcc.restore(body.revision, &body.kvs, Batch::new())?;
        mvcc.engine().sync_wal()?;
        Ok(body.revision)
    }
}
