//! The replicated, revisioned key-value store the rest of the server uses (an etcd-like
//! facade): transactions and compaction go through raft; reads are served from the local
//! MVCC store; applied events are fanned out live to subscribers.
//!
//! It exposes no openraft or RocksDB types and knows nothing of Kubernetes objects: keys and
//! values are bytes.
//!
//! # Watching without a gap
//! [`Kv::subscribe`] delivers every applied revision's events once, in revision order. The
//! current revision is advanced *before* the events of that revision are broadcast, so a
//! caller that needs "state at R, then every change after R" must:
//! 1. `let rx = kv.subscribe();`
//! 2. read (e.g. `kv.range(.., None, ..)`, whose `RangeResult::revision` is R, or
//!    `kv.current_revision()`);
//! 3. consume `rx`, dropping events whose `kv.mod_revision <= R`.
//!
//! If the receiver lags (`RecvError::Lagged`), recover with `events_since(last_seen, ..)`
//! (or relist when that returns [`Error::Compacted`]). An EMPTY batch means this replica
//! installed a snapshot and jumped ahead: the changes in between are not available as events
//! (history starts at the snapshot), so treat it like an unrecoverable lag (relist / 410).

mod membership;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, watch};

use crate::raft::{ApplyHook, Command, PeerNode, RaftFailure, RaftNode, RaftOptions, Response};
use crate::storage::engine::Engine;
use crate::storage::mvcc::Mvcc;

pub use crate::raft::{Faults, PeerTls};
pub use crate::storage::mvcc::{
    Compare, Event, EventKind, KeyValue, Op, RangeResult, Revision, Txn, TxnResponse,
};
pub use membership::{Backup, ClusterStatus, ReplicaStatus};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("required revision {requested} has been compacted (compacted revision {compacted})")]
    Compacted {
        requested: Revision,
        compacted: Revision,
    },
    #[error("required revision {requested} is a future revision (current {current})")]
    FutureRevision {
        requested: Revision,
        current: Revision,
    },
    #[error("timed out: {0}")]
    Timeout(String),
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error("storage: {0}")]
    Storage(String),
    /// A request that is invalid for the cluster's state (e.g. promoting an unknown replica).
    #[error("invalid: {0}")]
    Invalid(String),
}

impl From<crate::storage::Error> for Error {
    fn from(e: crate::storage::Error) -> Self {
        use crate::storage::Error as S;
        match e {
            S::Compacted {
                requested,
                compacted,
            } => Error::Compacted {
                requested,
                compacted,
            },
            S::FutureRevision { requested, current } => {
                Error::FutureRevision { requested, current }
            }
            S::Unavailable(m) => Error::Unavailable(m),
            S::Storage(m) => Error::Storage(m),
        }
    }
}

impl From<RaftFailure> for Error {
    fn from(e: RaftFailure) -> Self {
        match e {
            RaftFailure::Timeout(m) => Error::Timeout(m),
            RaftFailure::Invalid(m) => Error::Invalid(m),
            other => Error::Unavailable(other.to_string()),
        }
    }
}

#[derive(Clone, Debug)]
pub struct KvConfig {
    pub data_dir: PathBuf,
    pub node_id: u64,
    /// History younger than this is kept; older history is compacted by the leader.
    pub compaction_window: Duration,
    /// gRPC peer listen address. Default: this replica's address in `initial_members`; no
    /// peer server at all for a single replica without members.
    pub peer_listen: Option<SocketAddr>,
    /// Address peers reach this replica at (default: the peer listen address).
    pub peer_advertise: Option<String>,
    /// Kubernetes API address of this replica (shown in cluster status).
    pub api_addr: String,
    /// Replica id → peer address of the first voters. Empty: a one-voter cluster of this
    /// replica (unless `join`). Only the lowest id initializes a fresh cluster.
    pub initial_members: BTreeMap<u64, String>,
    /// Start empty and wait to be added as a learner; never initialize.
    pub join: bool,
    /// Mutual TLS between replicas.
    pub peer_tls: Option<PeerTls>,
    /// Injected network faults (tests).
    pub faults: Option<Arc<Faults>>,
    /// Peer addresses this replica dials instead of the members' own (`--peer-dial`).
    pub peer_dial: std::collections::BTreeMap<u64, String>,
}

impl Default for KvConfig {
    fn default() -> Self {
        KvConfig {
            data_dir: PathBuf::from("rafter-data"),
            node_id: 1,
            compaction_window: Duration::from_secs(300),
            peer_listen: None,
            peer_advertise: None,
            api_addr: String::new(),
            initial_members: BTreeMap::new(),
            join: false,
            peer_tls: None,
            faults: None,
            peer_dial: Default::default(),
        }
    }
}

impl KvConfig {
    /// A single replica (one-voter cluster) in `data_dir`.
    pub fn single(data_dir: impl Into<PathBuf>) -> KvConfig {
        KvConfig {
            data_dir: data_dir.into(),
            ..KvConfig::default()
        }
    }

    /// Part of a multi-replica cluster (members named, joining, or a peer server asked for).
    pub fn clustered(&self) -> bool {
        !self.initial_members.is_empty() || self.join || self.peer_listen.is_some()
    }
}

/// Tunables beyond [`KvConfig`] (defaults suit production; tests shorten them).
#[derive(Clone, Debug)]
pub struct KvOptions {
    /// How often the background compactor samples the revision and may compact.
    pub compaction_tick: Duration,
    /// Bound on one replicated write, read barrier or cluster operation, leader changes
    /// (retried internally) included.
    pub request_timeout: Duration,
    /// Bound on `open` becoming leader and catching up.
    pub startup_timeout: Duration,
    /// Capacity of the live event broadcast (in applied revisions).
    pub event_buffer: usize,
    /// Raft snapshot (and log purge) every this many log entries.
    pub snapshot_every: u64,
    /// Log entries kept behind a snapshot.
    pub keep_logs: u64,
    /// A follower whose applied index trails the commit index by more than this is not ready.
    pub max_apply_lag: u64,
}

impl Default for KvOptions {
    fn default() -> Self {
        KvOptions {
            compaction_tick: Duration::from_secs(10),
            request_timeout: Duration::from_secs(10),
            startup_timeout: Duration::from_secs(10),
            event_buffer: 16 * 1024,
            snapshot_every: 10_000,
            keep_logs: 1_000,
            max_apply_lag: 1_000,
        }
    }
}

struct Inner {
    mvcc: Arc<Mvcc>,
    raft: RaftNode,
    events: broadcast::Sender<Arc<Vec<Event>>>,
    applied: Arc<watch::Sender<Revision>>,
    stop: watch::Sender<bool>,
    opts: KvOptions,
    /// Out of service for maintenance (`rafter admin drain`): readiness fails.
    draining: std::sync::atomic::AtomicBool,
}

impl Drop for Inner {
    /// Dropping the last handle without [`Kv::shutdown`] still stops raft (in the background,
    /// if a tokio runtime is available) so that the database eventually closes.
    fn drop(&mut self) {
        if self.stop.send_replace(true) {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let raft = self.raft.clone();
            rt.spawn(async move { raft.shutdown().await });
        }
    }
}

/// Handle of the store. Clone is cheap. Call [`Kv::shutdown`] before dropping the last clone
/// to stop raft and close the database.
#[derive(Clone)]
pub struct Kv {
    inner: Arc<Inner>,
}

impl Kv {
    /// Opens (or creates) the store and starts the raft node (and its gRPC peer server in a
    /// cluster). A single replica: first start of a fresh data dir initializes a one-voter
    /// cluster {node_id}; returns once the node is leader and has applied everything committed
    /// (bounded wait, else Error). With `initial_members`, only the lowest id initializes a
    /// fresh cluster and `open` returns without waiting for a leader (see [`Kv::health`]);
    /// with `join` it never initializes. Later starts recover from disk.
    pub async fn open(cfg: KvConfig) -> Result<Kv, Error> {
        Kv::open_with(cfg, KvOptions::default()).await
    }

    /// [`Kv::open`] with explicit tunables.
    pub async fn open_with(cfg: KvConfig, opts: KvOptions) -> Result<Kv, Error> {
        let engine = Engine::open(&cfg.data_dir.join("db"))?;
        let mvcc = Arc::new(Mvcc::open(engine)?);
        let (events, _) = broadcast::channel(opts.event_buffer.max(1));
        let applied = Arc::new(watch::Sender::new(mvcc.current_revision()));
        let hook: ApplyHook = {
            let events = events.clone();
            let applied = applied.clone();
            Arc::new(move |rev, evs| {
                applied.send_replace(rev);
                match evs {
                    // No receivers is fine.
                    Some(evs) if !evs.is_empty() => {
                        let _ = events.send(Arc::new(evs));
                    }
                    Some(_) => {}
                    // A snapshot install: an empty batch tells subscribers they missed changes.
                    None => {
                        let _ = events.send(Arc::new(Vec::new()));
                    }
                }
            })
        };
        let peer_listen = match cfg.peer_listen {
            Some(a) => Some(a),
            None => match cfg.initial_members.get(&cfg.node_id) {
                Some(addr) => Some(addr.parse().map_err(|e| {
                    Error::Invalid(format!(
                        "peer address {addr:?} of replica {}: {e}",
                        cfg.node_id
                    ))
                })?),
                None => None,
            },
        };
        if !cfg.initial_members.is_empty()
            && !cfg.initial_members.contains_key(&cfg.node_id)
            && !cfg.join
        {
            return Err(Error::Invalid(format!(
                "replica {} is not one of the initial members {:?}",
                cfg.node_id,
                cfg.initial_members.keys().collect::<Vec<_>>()
            )));
        }
        let raft_opts = RaftOptions {
            snapshot_every: opts.snapshot_every.max(1),
            keep_logs: opts.keep_logs,
            advertise_addr: cfg
                .peer_advertise
                .clone()
                .or_else(|| cfg.initial_members.get(&cfg.node_id).cloned())
                .unwrap_or_default(),
            api_addr: cfg.api_addr.clone(),
            peer_listen,
            tls: cfg.peer_tls.clone(),
            faults: cfg.faults.clone(),
            peer_dial: cfg.peer_dial.clone(),
            ..RaftOptions::default()
        };
        let raft = RaftNode::start(
            cfg.node_id,
            mvcc.clone(),
            cfg.data_dir.join("snapshots"),
            hook,
            raft_opts,
        )
        .await
        .map_err(Error::Unavailable)?;
        let started = async {
            if cfg.join {
                // Added later by an existing member; nothing to do.
            } else if cfg.initial_members.is_empty() {
                raft.initialize_if_new().await.map_err(Error::Unavailable)?;
                if !cfg.clustered() {
                    raft.wait_leader(opts.startup_timeout)
                        .await
                        .map_err(|e| Error::Timeout(format!("waiting for raft leadership: {e}")))?;
                    raft.read_barrier(opts.startup_timeout).await?;
                }
            } else if cfg.initial_members.keys().next() == Some(&cfg.node_id) {
                let members = cfg
                    .initial_members
                    .iter()
                    .map(|(id, addr)| {
                        let node = if *id == cfg.node_id {
                            raft.self_node()
                        } else {
                            PeerNode {
                                addr: addr.clone(),
                                api_addr: String::new(),
                            }
                        };
                        (*id, node)
                    })
                    .collect();
                raft.initialize(members).await.map_err(Error::Unavailable)?;
            }
            Ok::<(), Error>(())
        };
        let res = tokio::time::timeout(opts.startup_timeout, started).await;
        let res = res.unwrap_or_else(|_| {
            Err(Error::Timeout(format!(
                "raft node did not become ready within {:?}",
                opts.startup_timeout
            )))
        });
        if let Err(e) = res {
            raft.shutdown().await;
            return Err(e);
        }
        let (stop, stop_rx) = watch::channel(false);
        let inner = Arc::new(Inner {
            mvcc,
            raft,
            events,
            applied,
            stop,
            opts,
            draining: std::sync::atomic::AtomicBool::new(false),
        });
        tokio::spawn(compactor(
            Arc::downgrade(&inner),
            stop_rx.clone(),
            cfg.compaction_window,
        ));
        tokio::spawn(purger(inner.mvcc.clone(), stop_rx.clone()));
        tokio::spawn(membership::announce(Arc::downgrade(&inner), stop_rx));
        Ok(Kv { inner })
    }

    async fn propose(&self, cmd: Command) -> Result<Response, Error> {
        let t = self.inner.opts.request_timeout;
        Ok(self.inner.raft.propose(cmd, t).await?)
    }

    /// Proposes through raft (forwarded to the leader from a follower); returns after the
    /// entry is committed AND applied on this replica (read-your-writes here). Leader changes
    /// are retried within the request timeout; then `Unavailable` (no leader reachable) or
    /// `Timeout` (outcome unknown).
    pub async fn txn(&self, txn: Txn) -> Result<TxnResponse, Error> {
        match self.propose(Command::Txn(txn)).await? {
            Response::Txn(r) => Ok(r),
            other => Err(Error::Storage(format!("unexpected txn response {other:?}"))),
        }
    }

    /// Replicated compaction of history <= rev.
    pub async fn compact(&self, rev: Revision) -> Result<(), Error> {
        match self.propose(Command::Compact(rev)).await? {
            Response::Compact(r) => Ok(r?),
            other => Err(Error::Storage(format!(
                "unexpected compact response {other:?}"
            ))),
        }
    }

    /// Linearizable read barrier on any replica: a ReadIndex round with the leader (batched
    /// with concurrent readers), then waits until applied >= read index. Returns the local
    /// revision after the barrier. Bounded: `Unavailable` / `Timeout` when cut off.
    pub async fn read_barrier(&self) -> Result<Revision, Error> {
        if crate::faults::on("stale-reads") {
            return Ok(self.current_revision());
        }
        let t = self.inner.opts.request_timeout;
        self.inner.raft.read_barrier(t).await?;
        Ok(self.current_revision())
    }

    pub fn get(&self, key: &[u8], at: Option<Revision>) -> Result<Option<KeyValue>, Error> {
        Ok(self.inner.mvcc.get(key, at)?)
    }

    /// Keys in [start, end) in key order, at most `limit` (0 = no limit). An empty `end`
    /// means "no upper bound".
    pub fn range(
        &self,
        start: &[u8],
        end: &[u8],
        at: Option<Revision>,
        limit: usize,
    ) -> Result<RangeResult, Error> {
        Ok(self.inner.mvcc.range(start, end, at, limit)?)
    }

    /// Streams the live keys in [start, end) to `f` from one consistent view (memory stays
    /// one value, whatever the range's size); returns that view's revision.
    pub fn scan_live(
        &self,
        start: &[u8],
        end: &[u8],
        f: impl FnMut(KeyValue),
    ) -> Result<Revision, Error> {
        Ok(self.inner.mvcc.scan_live(start, end, f)?)
    }

    /// [`Kv::range`] without counting the keys past a full page (see `Mvcc::range_page`).
    pub fn range_page(
        &self,
        start: &[u8],
        end: &[u8],
        at: Option<Revision>,
        limit: usize,
    ) -> Result<RangeResult, Error> {
        Ok(self.inner.mvcc.range_page(start, end, at, limit, false)?)
    }

    pub fn current_revision(&self) -> Revision {
        self.inner.mvcc.current_revision()
    }

    pub fn compacted_revision(&self) -> Revision {
        self.inner.mvcc.compacted_revision()
    }

    /// All events with revision > after and key in [start,end) (empty `end` = no upper bound),
    /// revision order. `after` < compacted revision → Error::Compacted.
    pub fn events_since(
        &self,
        after: Revision,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<Event>, Error> {
        Ok(self.inner.mvcc.events_since(after, start, end)?)
    }

    /// Live feed of applied events: one message per applied revision, never blocks apply
    /// (a lagging receiver sees `Lagged`). See the module docs for gap-free use.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Vec<Event>>> {
        self.inner.events.subscribe()
    }

    /// Waits (bounded) until the local applied revision >= rev. true if reached.
    pub async fn wait_for_revision(&self, rev: Revision, timeout: Duration) -> bool {
        let mut rx = self.inner.applied.subscribe();
        if self.current_revision() >= rev {
            return true;
        }
        let reached = matches!(
            tokio::time::timeout(timeout, rx.wait_for(|r| *r >= rev)).await,
            Ok(Ok(_))
        );
        reached
    }

    /// Ok if this replica has a leader and is caught up; Err(reason) otherwise (for /readyz).
    /// Resolves when the replicated store failed for good (its raft node stopped on a
    /// storage error such as a full disk, or panicked), with the reason. A process serving
    /// it should exit, as etcd does on a failed WAL write, so that a supervisor restarts it
    /// from its (consistent) data folder.
    pub async fn failed(&self) -> String {
        loop {
            if let Some(e) = self.inner.raft.fatal() {
                return e;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    pub fn health(&self) -> Result<(), String> {
        if *self.inner.stop.borrow() {
            return Err("storage is shut down".to_string());
        }
        let s = self.inner.raft.status();
        if s.role == crate::raft::Role::Removed {
            return Err("this replica was removed from the cluster".to_string());
        }
        if !s.running {
            return Err("raft node stopped".to_string());
        }
        if s.leader.is_none() {
            return Err("raft has no leader".to_string());
        }
        if !s.members.iter().any(|m| m.id == s.id) {
            return Err("this replica is not a member of the cluster".to_string());
        }
        let committed = s.committed_index.unwrap_or(0);
        let applied = s.applied_index.unwrap_or(0);
        if committed.saturating_sub(applied) > self.inner.opts.max_apply_lag {
            return Err(format!(
                "raft replica is catching up (applied {applied}, committed {committed})"
            ));
        }
        Ok(())
    }

    pub fn is_leader(&self) -> bool {
        self.inner.raft.is_leader()
    }

    /// Sets the replication gauges (`rafter_raft_*`) from the raft node's state; called when
    /// metrics are scraped.
    pub fn record_metrics(&self) {
        self.inner.raft.record_metrics();
    }

    /// Stops the compactor and raft (idempotent), then waits (bounded) until raft's tasks
    /// have released the database, so that dropping the last `Kv` clone closes it (and the
    /// data dir can be reopened). Reads keep working on local data until then.
    pub async fn shutdown(&self) {
        if self.inner.stop.send_replace(true) {
            return;
        }
        self.inner.raft.shutdown().await;
        let deadline = Instant::now() + Duration::from_secs(5);
        while (Arc::strong_count(&self.inner.mvcc) > 1
            || self.inner.mvcc.engine().handle_count() > 1)
            && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Leader-only background compaction: samples (Instant, revision) every tick and compacts at
/// the newest sample older than `window`.
async fn compactor(inner: Weak<Inner>, mut stop: watch::Receiver<bool>, window: Duration) {
    let tick = match inner.upgrade() {
        Some(i) => i.opts.compaction_tick,
        None => return,
    };
    let mut samples: VecDeque<(Instant, Revision)> = VecDeque::new();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            _ = stop.changed() => return,
        }
        if *stop.borrow() {
            return;
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if !inner.raft.is_leader() {
            samples.clear();
            continue;
        }
        let now = Instant::now();
        samples.push_back((now, inner.mvcc.current_revision()));
        let mut target = None;
        while let Some(&(t, r)) = samples.front() {
            if now.duration_since(t) < window {
                break;
            }
            target = Some(r);
            samples.pop_front();
        }
        let Some(rev) = target else {
            continue;
        };
        if rev <= inner.mvcc.compacted_revision() {
            continue;
        }
        let kv = Kv {
            inner: inner.clone(),
        };
        match kv.compact(rev).await {
            Ok(()) => tracing::debug!(revision = rev, "compacted history"),
            Err(Error::Compacted { .. }) => {}
            Err(e) => tracing::warn!(revision = rev, "compaction failed: {e}"),
        }
    }
}

/// Superseded index entries removed per purge step: one small batch under the store's write
/// lock (the scan that finds them runs beside apply), so apply never waits behind a purge.
const PURGE_STEP_ENTRIES: usize = 1_000;

/// Removes compacted history behind the logical compaction, one bounded step at a time
/// (blocking I/O off the async threads), until the store stops.
async fn purger(mvcc: Arc<Mvcc>, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        if mvcc.needs_purge() {
            let m = mvcc.clone();
            match tokio::task::spawn_blocking(move || m.purge_step(PURGE_STEP_ENTRIES)).await {
                Ok(Ok(true)) => {
                    tokio::task::yield_now().await;
                    continue;
                }
                Ok(Ok(false)) => {}
                Ok(Err(e)) => tracing::warn!("purging compacted history: {e}"),
                Err(_) => return,
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            _ = stop.changed() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(dir: &std::path::Path) -> KvConfig {
        KvConfig {
            data_dir: dir.to_path_buf(),
            node_id: 1,
            compaction_window: Duration::from_secs(3600),
            ..KvConfig::default()
        }
    }

    fn put(k: &str, v: &str) -> Txn {
        Txn {
            compares: vec![],
            success: vec![Op::Put {
                key: k.into(),
                value: v.into(),
            }],
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn txn_read_back_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let opts = KvOptions {
            snapshot_every: 7,
            keep_logs: 2,
            ..KvOptions::default()
        };
        let kv = Kv::open_with(cfg(dir.path()), opts.clone()).await.unwrap();
        assert!(kv.is_leader());
        assert_eq!(kv.health(), Ok(()));
        assert_eq!(kv.current_revision(), 0);
        for i in 1..=20 {
            let r = kv
                .txn(put(&format!("k{:02}", i % 5), &i.to_string()))
                .await
                .unwrap();
            assert!(r.succeeded);
            assert_eq!(r.revision, i);
        }
        let r = kv
            .txn(Txn {
                compares: vec![Compare::ModRevision(b"k00".to_vec(), 1)],
                success: vec![Op::Delete {
                    key: b"k00".to_vec(),
                }],
            })
            .await
            .unwrap();
        assert!(!r.succeeded);
        assert_eq!(r.revision, 20);
        assert_eq!(r.current[0].as_ref().unwrap().mod_revision, 20);
        let r = kv
            .txn(Txn {
                compares: vec![Compare::ModRevision(b"k00".to_vec(), 20)],
                success: vec![Op::Delete {
                    key: b"k00".to_vec(),
                }],
            })
            .await
            .unwrap();
        assert!(r.succeeded);
        assert_eq!(r.revision, 21);
        assert_eq!(kv.read_barrier().await.unwrap(), 21);
        let got = kv.get(b"k01", None).unwrap().unwrap();
        assert_eq!(
            (
                got.value.as_slice(),
                got.version,
                got.create_revision,
                got.mod_revision
            ),
            (&b"16"[..], 4, 1, 16)
        );
        assert_eq!(
            kv.get(b"k01", Some(5)).unwrap().unwrap().value,
            b"1".to_vec()
        );
        kv.compact(3).await.unwrap();
        assert!(matches!(
            kv.compact(2).await,
            Err(Error::Compacted {
                requested: 2,
                compacted: 3
            })
        ));
        assert!(matches!(
            kv.compact(99).await,
            Err(Error::FutureRevision { .. })
        ));
        assert!(matches!(
            kv.get(b"k01", Some(2)),
            Err(Error::Compacted { .. })
        ));
        let before = kv.range(b"k", b"l", None, 0).unwrap();
        assert_eq!(before.count, 4);
        assert_eq!(before.revision, 21);
        let events_before = kv.events_since(3, b"", b"").unwrap();
        assert_eq!(events_before.len(), 18);
        kv.shutdown().await;
        assert!(kv.health().is_err());
        drop(kv);
        // Snapshots were taken and the raft log purged behind them; building one writes no
        // file (the state machine is the snapshot).
        assert!(!dir.path().join("snapshots/current.snap").exists());
        {
            let e = Engine::open(&dir.path().join("db")).unwrap();
            let v = e.view();
            let mut first = None;
            v.scan(crate::storage::engine::Cf::RaftLog, b"", None, |k, _| {
                first = Some(k.to_vec());
                Ok(false)
            })
            .unwrap();
            assert!(first.unwrap() > 1u64.to_be_bytes().to_vec());
        }

        let kv = Kv::open_with(cfg(dir.path()), opts).await.unwrap();
        assert_eq!(kv.current_revision(), 21);
        assert_eq!(kv.compacted_revision(), 3);
        assert_eq!(kv.range(b"k", b"l", None, 0).unwrap(), before);
        assert_eq!(kv.events_since(3, b"", b"").unwrap(), events_before);
        assert_eq!(
            kv.get(b"k01", Some(5)).unwrap().unwrap().value,
            b"1".to_vec()
        );
        let r = kv.txn(put("k00", "new")).await.unwrap();
        assert_eq!(r.revision, 22);
        assert_eq!(kv.get(b"k00", None).unwrap().unwrap().version, 1);
        kv.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn drop_without_shutdown_releases_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let kv = Kv::open(cfg(dir.path())).await.unwrap();
        kv.txn(put("a", "1")).await.unwrap();
        drop(kv);
        let deadline = Instant::now() + Duration::from_secs(5);
        let kv = loop {
            match Kv::open(cfg(dir.path())).await {
                Ok(kv) => break kv,
                Err(e) if Instant::now() < deadline => {
                    assert!(e.to_string().contains("lock"), "{e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("reopen: {e}"),
            }
        };
        assert_eq!(kv.get(b"a", None).unwrap().unwrap().value, b"1".to_vec());
        kv.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn subscribe_sees_every_event_once_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let kv = Kv::open(cfg(dir.path())).await.unwrap();
        kv.txn(put("a", "0")).await.unwrap();
        let mut rx = kv.subscribe();
        let start = kv.current_revision();
        assert_eq!(start, 1);
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let kv = kv.clone();
                tokio::spawn(async move {
                    for i in 0..10 {
                        kv.txn(put(&format!("w{w}"), &i.to_string())).await.unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.await.unwrap();
        }
        assert!(kv.wait_for_revision(41, Duration::from_secs(5)).await);
        assert!(!kv.wait_for_revision(42, Duration::from_millis(50)).await);
        let mut revs = vec![];
        while revs.len() < 40 {
            let batch = tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .unwrap()
                .unwrap();
            assert_eq!(batch.len(), 1);
            let e = &batch[0];
            assert_eq!(e.kind, EventKind::Put);
            revs.push(e.kv.mod_revision);
        }
        assert_eq!(revs, (2..=41).collect::<Vec<_>>());
        assert!(rx.try_recv().is_err());
        // The live feed matches the replayed history.
        let replay = kv.events_since(1, b"", b"").unwrap();
        assert_eq!(
            replay.iter().map(|e| e.kv.mod_revision).collect::<Vec<_>>(),
            revs
        );
        kv.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn background_compactor_compacts_old_history() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path());
        c.compaction_window = Duration::from_millis(0);
        let opts = KvOptions {
            compaction_tick: Duration::from_millis(50),
            ..KvOptions::default()
        };
        let kv = Kv::open_with(c, opts).await.unwrap();
        for i in 0..3 {
            kv.txn(put("a", &i.to_string())).await.unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while kv.compacted_revision() < 3 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(kv.compacted_revision(), 3);
        assert!(matches!(
            kv.events_since(1, b"", b""),
            Err(Error::Compacted { .. })
        ));
        kv.shutdown().await;
    }
}

#[cfg(test)]
mod bench {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore]
    async fn sequential_and_parallel_write_latency() {
        let dir = tempfile::tempdir().unwrap();
        let kv = Kv::open(KvConfig {
            data_dir: dir.path().to_path_buf(),
            node_id: 1,
            compaction_window: Duration::from_secs(3600),
            ..KvConfig::default()
        })
        .await
        .unwrap();
        let t = Instant::now();
        for i in 0..300 {
            kv.txn(Txn {
                compares: vec![],
                success: vec![Op::Put {
                    key: format!("k{i}").into_bytes(),
                    value: vec![b'x'; 2000],
                }],
            })
            .await
            .unwrap();
        }
        eprintln!("sequential: {:?}/txn", t.elapsed() / 300);
        let t = Instant::now();
        let hs: Vec<_> = (0..16)
            .map(|w| {
                let kv = kv.clone();
                tokio::spawn(async move {
                    for i in 0..50 {
                        kv.txn(Txn {
                            compares: vec![],
                            success: vec![Op::Put {
                                key: format!("p{w}-{i}").into_bytes(),
                                value: vec![b'x'; 2000],
                            }],
                        })
                        .await
                        .unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.await.unwrap();
        }
        eprintln!("parallel(16): {:?}/txn", t.elapsed() / 800);
        let t = Instant::now();
        for _ in 0..100 {
            kv.read_barrier().await.unwrap();
        }
        eprintln!("read_barrier: {:?}", t.elapsed() / 100);
        let t = Instant::now();
        let r = kv.range(b"", b"", None, 0).unwrap();
        eprintln!("range all ({}): {:?}", r.count, t.elapsed());
        kv.shutdown().await;
    }
}
