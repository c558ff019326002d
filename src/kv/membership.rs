//! Cluster operations on the replicated store, for the admin API: status, membership changes
//! (forwarded to the leader from any replica), leadership transfer, snapshots, and backup /
//! offline restore of the keyspace. Also the background task that keeps this replica's API
//! address in its member info.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::{Error, Inner, Kv, KvConfig, Revision};
use crate::raft::{PeerNode, Role};
use crate::storage::engine::Engine;
use crate::storage::mvcc::{KeyValue, Mvcc};

/// One member of the cluster as this replica sees it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ReplicaStatus {
    pub id: u64,
    pub peer_addr: String,
    pub api_addr: String,
    /// "leader" | "follower" | "learner" | "candidate" | "unknown"
    pub role: String,
    pub voter: bool,
    /// Leader's view of replication (None on followers / unknown).
    pub matched_index: Option<u64>,
    pub lag: Option<u64>,
}

/// The cluster as this replica sees it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ClusterStatus {
    pub node_id: u64,
    pub leader: Option<u64>,
    pub term: u64,
    pub commit_index: u64,
    pub applied_index: u64,
    pub current_revision: i64,
    pub compacted_revision: i64,
    /// Log index of this replica's latest snapshot.
    pub snapshot_index: Option<u64>,
    /// Snapshots this replica installed from a leader since it started.
    pub snapshots_installed: u64,
    /// The log is purged up to this index.
    pub purged_index: Option<u64>,
    pub members: Vec<ReplicaStatus>,
}

/// A consistent copy of the keyspace.
#[derive(Clone, Debug)]
pub struct Backup {
    pub revision: i64,
    pub data: Vec<u8>,
}

/// First line of a backup file.
const BACKUP_MAGIC: &[u8] = b"rafter-backup v1\n";

#[derive(serde::Serialize, serde::Deserialize)]
struct BackupBody {
    revision: Revision,
    kvs: Vec<KeyValue>,
}

/// Bound on asking the leader for its replication view in a status call.
const STATUS_ASK: Duration = Duration::from_secs(1);

impl Kv {
    pub fn node_id(&self) -> u64 {
        self.inner.raft.id()
    }

    /// The leader this replica currently knows of (local view, no network round).
    pub fn leader(&self) -> Option<u64> {
        self.inner.raft.status().leader
    }

    /// Members, roles, leader, term, indexes, revisions; per-member replication progress as
    /// the leader reports it (asked of the leader when this replica follows; None if it
    /// cannot be reached quickly).
    pub async fn cluster_status(&self) -> Result<ClusterStatus, Error> {
        let s = self.inner.raft.status();
        let repl = if s.leader.is_some() {
            self.inner.raft.replication(STATUS_ASK).await.ok()
        } else {
            None
        };
        let members = s
            .members
            .iter()
            .map(|m| {
                let role = if s.leader == Some(m.id) {
                    "leader"
                } else if m.id == s.id {
                    match s.role {
                        Role::Leader => "unknown",
                        r => r.as_str(),
                    }
                } else if !m.voter {
                    "learner"
                } else if s.leader.is_some() {
                    "follower"
                } else {
                    "unknown"
                };
                let (matched_index, lag) = match &repl {
                    Some(r) => {
                        let matched = if s.leader == Some(m.id) {
                            r.last_log_index
                        } else {
                            r.matched.get(&m.id).copied().flatten()
                        };
                        let lag = match (r.last_log_index, matched) {
                            (Some(last), Some(mi)) => Some(last.saturating_sub(mi)),
                            (Some(last), None) => Some(last + 1),
                            _ => None,
                        };
                        (matched, lag)
                    }
                    None => (None, None),
                };
                ReplicaStatus {
                    id: m.id,
                    peer_addr: m.node.addr.clone(),
                    api_addr: m.node.api_addr.clone(),
                    role: role.to_string(),
                    voter: m.voter,
                    matched_index,
                    lag,
                }
            })
            .collect();
        Ok(ClusterStatus {
            node_id: s.id,
            leader: s.leader,
            term: s.term,
            commit_index: s.committed_index.unwrap_or(0),
            applied_index: s.applied_index.unwrap_or(0),
            current_revision: self.current_revision(),
            compacted_revision: self.compacted_revision(),
            snapshot_index: s.snapshot_index,
            snapshots_installed: s.snapshots_installed,
            purged_index: s.purged_index,
            members,
        })
    }

    /// Adds replica `id` as a learner (it starts receiving the log, or a snapshot, at once).
    pub async fn add_learner(
        &self,
        id: u64,
        peer_addr: String,
        api_addr: String,
    ) -> Result<(), Error> {
        if peer_addr.is_empty() {
            return Err(Error::Invalid("the peer address is required".into()));
        }
        let node = PeerNode {
            addr: peer_addr,
            api_addr,
        };
        let t = self.inner.opts.request_timeout;
        Ok(self.inner.raft.add_learner(id, node, t).await?)
    }

    /// Promotes learner `id` to voter.
    pub async fn promote(&self, id: u64) -> Result<(), Error> {
        let t = self.inner.opts.request_timeout;
        Ok(self.inner.raft.promote(id, t).await?)
    }

    /// Removes voter or learner `id` (the leader may be removed; the rest elect a new one).
    pub async fn remove_member(&self, id: u64) -> Result<(), Error> {
        let t = self.inner.opts.request_timeout;
        Ok(self.inner.raft.remove_member(id, t).await?)
    }

    /// Hands leadership to voter `to`; returns once this replica sees `to` lead.
    pub async fn transfer_leader(&self, to: u64) -> Result<(), Error> {
        let t = self.inner.opts.request_timeout;
        Ok(self.inner.raft.transfer_leader(to, t).await?)
    }

    /// Before this replica stops: hands leadership, if it has it, to the fellow voter with
    /// the most of the log, within `timeout` (see [`crate::raft::RaftNode::hand_over`]).
    pub async fn hand_over(&self, timeout: Duration) -> Result<Option<u64>, Error> {
        Ok(self.inner.raft.hand_over(timeout).await?)
    }

    /// Takes this replica out of service for maintenance (or back in, with `on` false):
    /// while drained its readiness fails; draining a leader hands leadership over first.
    /// Returns the voter that took over, if any.
    pub async fn drain(&self, on: bool, timeout: Duration) -> Result<Option<u64>, Error> {
        self.inner
            .draining
            .store(on, std::sync::atomic::Ordering::SeqCst);
        if !on {
            return Ok(None);
        }
        self.hand_over(timeout).await
    }

    /// Whether the replica is drained for maintenance.
    pub fn is_drained(&self) -> bool {
        self.inner
            .draining
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Builds a snapshot now; returns the log index it covers.
    pub async fn trigger_snapshot(&self) -> Result<u64, Error> {
        let t = self.inner.opts.request_timeout;
        Ok(self.inner.raft.trigger_snapshot(t).await?)
    }

    /// A consistent copy of the keyspace (after a read barrier), self-describing bytes.
    pub async fn backup(&self) -> Result<Backup, Error> {
        self.read_barrier().await?;
        let exp = self.inner.mvcc.export(&[])?;
        let body = BackupBody {
            revision: exp.revision,
            kvs: exp.kvs,
        };
        let mut data = BACKUP_MAGIC.to_vec();
        serde_json::to_writer(&mut data, &body)
            .map_err(|e| Error::Storage(format!("encoding the backup: {e}")))?;
        Ok(Backup {
            revision: body.revision,
            data,
        })
    }

    /// Offline disaster recovery (etcd's `--force-new-cluster`): seeds `cfg.data_dir` (new)
    /// as a NEW one-voter cluster from the data folder of a stopped replica that survived the
    /// loss of a majority: its applied state, then every transaction its log holds past what
    /// it applied (see [`crate::raft::unapplied_txns`]), applied in order. Nothing the
    /// survivor held is lost; writes it held that were never acknowledged may reappear, as
    /// with etcd. History before the revision is not carried over (as with a backup).
    /// Returns the new cluster's revision and the number of log transactions replayed.
    pub fn force_new_cluster(
        from: &std::path::Path,
        cfg: &KvConfig,
    ) -> Result<(i64, usize), Error> {
        let old = Mvcc::open(Engine::open(&from.join("db"))?)?;
        let exp = old.export(&[])?;
        let tail = crate::raft::unapplied_txns(&old).map_err(Error::Storage)?;
        drop(old);
        Self::seed(cfg, exp.revision, exp.kvs)?;
        let mvcc = Mvcc::open(Engine::open(&cfg.data_dir.join("db"))?)?;
        let mut group = mvcc.group();
        for t in &tail {
            group.txn(t, crate::storage::engine::Batch::new())?;
        }
        group.commit()?;
        Ok((mvcc.current_revision(), tail.len()))
    }

    /// Offline: seeds `cfg.data_dir` (must be empty/new) from a backup as a NEW cluster whose
    /// first member is `cfg.node_id`; same objects and revision as the backup.
    pub fn restore(backup: &[u8], cfg: &KvConfig) -> Result<i64, Error> {
        let body = backup
            .strip_prefix(BACKUP_MAGIC)
            .ok_or_else(|| Error::Invalid("not a rafter backup".into()))?;
        let body: BackupBody = serde_json::from_slice(body)
            .map_err(|e| Error::Invalid(format!("corrupt backup: {e}")))?;
        if body.kvs.iter().any(|kv| kv.mod_revision > body.revision) {
            return Err(Error::Invalid(
                "corrupt backup: key newer than its revision".into(),
            ));
        }
        Self::seed(cfg, body.revision, body.kvs)
    }

    /// Seeds `cfg.data_dir` (new) as a one-voter cluster holding `kvs` at `revision`.
    fn seed(cfg: &KvConfig, revision: i64, kvs: Vec<KeyValue>) -> Result<i64, Error> {
        std::fs::create_dir_all(&cfg.data_dir)
            .map_err(|e| Error::Storage(format!("creating {}: {e}", cfg.data_dir.display())))?;
        let engine = Engine::open(&cfg.data_dir.join("db"))?;
        let mvcc = Arc::new(Mvcc::open(engine)?);
        let addr = cfg
            .peer_advertise
            .clone()
            .or_else(|| cfg.initial_members.get(&cfg.node_id).cloned())
            .or_else(|| cfg.peer_listen.map(|a| a.to_string()))
            .unwrap_or_default();
        let node = PeerNode {
            addr,
            api_addr: cfg.api_addr.clone(),
        };
        crate::raft::seed_new_cluster(
            mvcc,
            cfg.data_dir.join("snapshots"),
            cfg.node_id,
            node,
            revision,
            kvs,
        )
        .map_err(Error::Invalid)?;
        Ok(revision)
    }
}

/// Keeps this replica's API address in its member info: when the membership lists this
/// replica with another API address (e.g. an initial member named only by its peer address),
/// asks the leader to update it.
pub(super) async fn announce(inner: Weak<Inner>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stop.changed() => return,
        }
        if *stop.borrow() {
            return;
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let me = inner.raft.self_node();
        if me.api_addr.is_empty() {
            return;
        }
        let s = inner.raft.status();
        let Some(current) = s.members.iter().find(|m| m.id == s.id) else {
            continue;
        };
        if current.node.api_addr == me.api_addr || s.leader.is_none() {
            continue;
        }
        let node = PeerNode {
            addr: current.node.addr.clone(),
            api_addr: me.api_addr.clone(),
        };
        if let Err(e) = inner
            .raft
            .set_node(s.id, node, Duration::from_secs(3))
            .await
        {
            tracing::debug!("announcing the API address: {e}");
        }
    }
}
