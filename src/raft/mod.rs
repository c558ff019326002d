//! Replication of the MVCC keyspace with openraft (=0.10.0-alpha.37).
//!
//! This is the only module that names openraft. It owns the raft type configuration, the
//! replicated command format ([`Command`]), the RocksDB-backed raft log (`log_store`), the
//! state machine that applies commands to [`Mvcc`] (`state_machine`), and the gRPC peer
//! transport (`wire`, `network` = client, `service` = server and leader-side operations).
//! [`RaftNode`] is the small, openraft-free handle the `kv` facade drives: it proposes on
//! the leader or forwards to it, answers linearizable read barriers with a batched ReadIndex
//! round (as etcd's linearizableReadLoop does), and executes membership changes on the leader
//! from any replica. Leadership changes during a request are retried within its deadline.
//!
//! It deliberately knows nothing of Kubernetes, and nothing of how applied events are
//! delivered to readers: the caller passes an [`ApplyHook`].

mod log_store;
mod network;
mod service;
mod snapshot_data;
mod state_machine;
mod wire;

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openraft::async_runtime::watch::WatchReceiver;
use openraft::{Config, Raft, RaftMetrics, ServerState, SnapshotPolicy};
use serde::{Deserialize, Serialize};
use tokio::sync::{oneshot, watch};

use crate::storage::mvcc::{Event, Mvcc, Revision, Txn, TxnResponse};

pub use log_store::LogStore;
pub use network::{Faults, NetworkFactory, PeerTls};
pub use snapshot_data::SnapshotData;
pub use state_machine::StateMachine;

use network::{CallError, Connector, Method, Peer};
use wire::{AdminOp, AdminReply, WireError};

/// A log filter directive that keeps the raft library's per-heartbeat warnings (e.g. while a
/// peer is down) out of the default log.
pub const QUIET_LOGS: &str = "openraft=error";

/// Identifies a replica. Stable across restarts.
pub type NodeId = u64;

/// What the cluster knows of a member: where its peers and clients reach it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerNode {
    /// gRPC peer address (host:port).
    pub addr: String,
    /// Kubernetes API address (host:port), informational.
    #[serde(default)]
    pub api_addr: String,
}

impl fmt::Display for PeerNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{peer:{}, api:{}}}", self.addr, self.api_addr)
    }
}

openraft::declare_raft_types!(
    /// Raft type configuration of Rafter.
    pub TypeConfig:
        D = Command,
        R = Response,
        NodeId = NodeId,
        Node = PeerNode,
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

/// Disaster recovery: the transactions in the log of a stopped replica past the last entry
/// its state machine applied, in log order. They may or may not have been committed (the
/// replica may not have learnt it): a write acknowledged to a client was in a majority's
/// log, so it is here when this replica was part of that majority.
pub fn unapplied_txns(mvcc: &Mvcc) -> Result<Vec<Txn>, String> {
    let from = state_machine::last_applied_index(mvcc)
        .map_err(|e| e.to_string())?
        .map_or(0, |i| i.saturating_add(1));
    let mut out = Vec::new();
    mvcc.engine()
        .view()
        .scan(
            crate::storage::engine::Cf::RaftLog,
            &from.to_be_bytes(),
            None,
            |_, v| {
                let e = log_store::decode_entry(v)
                    .map_err(|e| crate::storage::Error::Storage(e.to_string()))?;
                if let openraft::EntryPayload::Normal(Command::Txn(t)) = e.payload {
                    out.push(t);
                }
                Ok(true)
            },
        )
        .map_err(|e| e.to_string())?;
    Ok(out)
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
/// Called after each apply with the new revision and its events, or `None` when the state
/// jumped (a snapshot was installed) and the changes in between cannot be listed.
pub type ApplyHook = Arc<dyn Fn(Revision, Option<Vec<Event>>) + Send + Sync>;

/// Tunables and wiring of the raft node.
#[derive(Clone, Debug)]
pub struct RaftOptions {
    /// Build a snapshot (and purge the log behind it) every this many applied entries.
    pub snapshot_every: u64,
    /// Log entries kept behind the last snapshot (for slow followers).
    pub keep_logs: u64,
    pub heartbeat_ms: u64,
    pub election_timeout_ms: (u64, u64),
    /// Address other replicas reach this node at (default: the bound peer listen address).
    pub advertise_addr: String,
    /// Kubernetes API address of this replica (carried in its member info).
    pub api_addr: String,
    /// Serve the gRPC peer service here (None: no peer server, a one-voter cluster only).
    pub peer_listen: Option<SocketAddr>,
    /// Mutual TLS between replicas (plaintext when None).
    pub tls: Option<PeerTls>,
    /// Injected network faults (tests).
    pub faults: Option<Arc<Faults>>,
    /// Peer addresses to dial instead of the members' own (`--peer-dial`).
    pub peer_dial: BTreeMap<NodeId, String>,
}

impl Default for RaftOptions {
    fn default() -> Self {
        RaftOptions {
            snapshot_every: 10_000,
            keep_logs: 1_000,
            heartbeat_ms: 100,
            election_timeout_ms: (300, 600),
            advertise_addr: String::new(),
            api_addr: String::new(),
            peer_listen: None,
            tls: None,
            faults: None,
            peer_dial: BTreeMap::new(),
        }
    }
}

/// Why a proposal, read barrier or admin operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RaftFailure {
    /// No leader could be reached before the deadline (nothing was proposed).
    #[error("no reachable leader (last known leader: {leader:?})")]
    NotLeader { leader: Option<NodeId> },
    #[error("raft node stopped: {0}")]
    Stopped(String),
    /// The request is invalid for the cluster's current membership.
    #[error("{0}")]
    Invalid(String),
    /// The deadline passed; the outcome of a write is unknown.
    #[error("{0}")]
    Timeout(String),
    #[error("{0}")]
    Other(String),
}

/// The role of a replica as this node sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Leader,
    Follower,
    Learner,
    Candidate,
    Unknown,
    /// A peer said this replica is no longer a member; it stopped.
    Removed,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Leader => "leader",
            Role::Follower => "follower",
            Role::Learner => "learner",
            Role::Candidate => "candidate",
            Role::Unknown => "unknown",
            Role::Removed => "removed",
        }
    }
}

/// One member of the current membership configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub id: NodeId,
    pub node: PeerNode,
    pub voter: bool,
}

/// A snapshot of the node's raft status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub id: NodeId,
    pub leader: Option<NodeId>,
    pub is_leader: bool,
    pub running: bool,
    pub role: Role,
    pub term: u64,
    pub committed_index: Option<u64>,
    pub applied_index: Option<u64>,
    pub last_log_index: Option<u64>,
    pub snapshot_index: Option<u64>,
    /// Snapshots installed from a leader since this process started.
    pub snapshots_installed: u64,
    pub purged_index: Option<u64>,
    pub members: Vec<Member>,
}

/// The leader's view of replication progress.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replication {
    pub matched: BTreeMap<NodeId, Option<u64>>,
    pub last_log_index: Option<u64>,
}

/// Pause between attempts while the leader is unknown or changing.
const RETRY_PAUSE: Duration = Duration::from_millis(50);
/// Bound on one ReadIndex round (a batch of concurrent readers).
const READ_ROUND: Duration = Duration::from_secs(3);

/// Outcome of one attempt: retry (nothing happened) or give up.
#[derive(Clone, Debug)]
enum Attempt {
    Retry(String),
    Fail(RaftFailure),
}

impl Attempt {
    fn from_wire(e: WireError, local: bool) -> Attempt {
        match e {
            WireError::NotLeader { leader } => {
                Attempt::Retry(format!("not the leader (leader: {leader:?})"))
            }
            WireError::Stopped(m) if local => Attempt::Fail(RaftFailure::Stopped(m)),
            WireError::Stopped(m) => Attempt::Retry(format!("leader stopped: {m}")),
            WireError::Invalid(m) => Attempt::Fail(RaftFailure::Invalid(m)),
            WireError::Busy(m) => Attempt::Retry(format!("busy: {m}")),
            // An entry appended and then discarded may still commit: the outcome is unknown.
            WireError::OutcomeUnknown(m) => Attempt::Fail(RaftFailure::Timeout(m)),
            WireError::Other(m) => Attempt::Fail(RaftFailure::Other(m)),
        }
    }

    /// A forwarded proposal is not idempotent: retry only when it provably never reached the
    /// leader (connection not established, traffic blocked) or the leader refused it before
    /// appending (not the leader). Anything else has an unknown outcome: answer "timeout"
    /// rather than risk applying the write twice.
    fn from_forward_call(e: CallError) -> Attempt {
        match e {
            CallError::NotSent(m) => Attempt::Retry(format!("leader unreachable: {m}")),
            CallError::Removed(m) => Attempt::Fail(RaftFailure::Invalid(m)),
            CallError::Unreachable(m) | CallError::Failed(m) | CallError::Timeout(m) => {
                Attempt::Fail(RaftFailure::Timeout(format!(
                    "forwarded write has an unknown outcome: {m}"
                )))
            }
        }
    }

    fn from_forward_wire(e: WireError) -> Attempt {
        match e {
            WireError::Stopped(m) => Attempt::Fail(RaftFailure::Timeout(format!(
                "the leader stopped while handling the write (outcome unknown): {m}"
            ))),
            other => Attempt::from_wire(other, false),
        }
    }

    fn from_call(e: CallError) -> Attempt {
        match e {
            CallError::NotSent(m) | CallError::Unreachable(m) => {
                Attempt::Retry(format!("leader unreachable: {m}"))
            }
            CallError::Timeout(m) => Attempt::Fail(RaftFailure::Timeout(m)),
            CallError::Failed(m) => Attempt::Fail(RaftFailure::Other(m)),
            CallError::Removed(m) => Attempt::Fail(RaftFailure::Invalid(m)),
        }
    }
}

enum Route {
    Local,
    Remote(Peer),
    NoLeader,
}

/// A reader waiting for the next ReadIndex round, with its trace context.
type ReadWaiter = (
    oneshot::Sender<Result<u64, Attempt>>,
    Option<crate::telemetry::trace::Context>,
);

#[derive(Default)]
struct ReadBatch {
    waiters: Vec<ReadWaiter>,
    running: bool,
}

struct NodeInner {
    id: NodeId,
    raft: Raft<TypeConfig, StateMachine>,
    snapshots_installed: Arc<std::sync::atomic::AtomicU64>,
    advertise_addr: String,
    api_addr: String,
    conn: Connector,
    reads: Mutex<ReadBatch>,
    server_stop: watch::Sender<bool>,
    server: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// Handle of a running raft node. Cloning is cheap.
#[derive(Clone)]
pub struct RaftNode {
    inner: Arc<NodeInner>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn idx_of(l: &Option<openraft::type_config::alias::LogIdOf<TypeConfig>>) -> Option<u64> {
    l.as_ref().map(|l| l.index())
}

impl RaftNode {
    /// Starts the raft node over `mvcc` (whose engine also holds the raft log), and its gRPC
    /// peer server when `opts.peer_listen` is set. Snapshots are kept in `snapshot_dir`.
    /// Recovers whatever state is on disk.
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
            install_snapshot_timeout: 20_000,
            // A restarted leader stands for election like any replica (standard Raft). Our
            // state machine does not fsync its applies and the committed index is saved
            // without fsync, so a leader restored without an election could answer ReadIndex
            // with a commit index older than one it had served before the crash: a stale
            // linearizable read on a lagging follower (found by the chaos harness, seed 1004).
            enable_leader_restore: Some(false),
            ..Default::default()
        }
        .validate()
        .map_err(|e| format!("raft config: {e}"))?;
        let conn = Connector::new(
            id,
            opts.tls.as_ref(),
            opts.faults.clone(),
            opts.peer_dial.clone(),
        )?;
        // Bind before starting raft so that a bad address fails fast.
        let listener = match opts.peer_listen {
            Some(addr) => Some(
                tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| format!("binding peer address {addr}: {e}"))?,
            ),
            None => None,
        };
        let log = LogStore::new(mvcc.engine().clone());
        let sm = StateMachine::new(mvcc, snapshot_dir, hook).map_err(|e| e.to_string())?;
        let snapshot_dir = sm.snapshot_dir().to_path_buf();
        let snapshots_installed = sm.installs();
        let serving = sm.serving();
        let raft = Raft::new(
            id,
            Arc::new(config),
            NetworkFactory::new(conn.clone()),
            log,
            sm,
        )
        .await
        .map_err(|e| format!("start raft: {e}"))?;
        serving.store(true, std::sync::atomic::Ordering::Release);
        let (server_stop, stop_rx) = watch::channel(false);
        let mut advertise_addr = opts.advertise_addr.clone();
        let server = match listener {
            Some(l) => {
                let svc = service::Service {
                    id,
                    raft: raft.clone(),
                    snapshot_dir,
                };
                match service::spawn_server(svc, l, opts.tls.as_ref(), stop_rx) {
                    Ok((local, handle)) => {
                        if advertise_addr.is_empty() {
                            advertise_addr = local.to_string();
                        }
                        Some(handle)
                    }
                    Err(e) => {
                        let _ = raft.shutdown().await;
                        return Err(e);
                    }
                }
            }
            None => None,
        };
        let node = RaftNode {
            inner: Arc::new(NodeInner {
                id,
                raft,
                snapshots_installed,
                advertise_addr,
                api_addr: opts.api_addr,
                conn,
                reads: Mutex::new(ReadBatch::default()),
                server_stop,
                server: Mutex::new(server),
            }),
        };
        node.init_metrics();
        // A replica a peer says was removed stops its raft node: no more campaigns (terms
        // stay put), requests fail fast, /readyz and the admin status say why.
        let weak = Arc::downgrade(&node.inner);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let Some(inner) = weak.upgrade() else { return };
                if inner.conn.removed() {
                    let _ = inner.raft.shutdown().await;
                    return;
                }
            }
        });
        Ok(node)
    }

    /// Creates the raft counters at zero, and counts `rafter_raft_leader_changes_total`
    /// (etcd's `leader_changes_seen`): every time this replica sees a new leader, until the
    /// node stops.
    fn init_metrics(&self) {
        metrics::counter!("rafter_raft_leader_changes_total").increment(0);
        metrics::counter!("rafter_raft_proposals_committed_total").increment(0);
        metrics::counter!("rafter_raft_proposals_failed_total").increment(0);
        for kind in ["policy", "transfer"] {
            metrics::counter!("rafter_raft_snapshot_builds_total", "kind" => kind).increment(0);
        }
        let mut rx = self.inner.raft.metrics();
        tokio::spawn(async move {
            let mut last: Option<NodeId> = None;
            loop {
                let leader = rx.borrow_watched().current_leader;
                if leader.is_some() && leader != last {
                    metrics::counter!("rafter_raft_leader_changes_total").increment(1);
                }
                if leader.is_some() {
                    last = leader;
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// Sets the raft gauges from the node's current metrics (called when metrics are
    /// scraped): term, leadership, the log's indices and the apply lag.
    pub fn record_metrics(&self) {
        let m = self.metrics();
        let committed = idx_of(&m.local_committed).unwrap_or(0);
        let applied = idx_of(&m.last_applied).unwrap_or(0);
        let is_leader = m.state == ServerState::Leader && m.current_leader == Some(self.inner.id);
        metrics::gauge!("rafter_raft_current_term").set(m.current_term as f64);
        metrics::gauge!("rafter_raft_is_leader").set(f64::from(u8::from(is_leader)));
        metrics::gauge!("rafter_raft_has_leader")
            .set(f64::from(u8::from(m.current_leader.is_some())));
        metrics::gauge!("rafter_raft_committed_index").set(committed as f64);
        metrics::gauge!("rafter_raft_applied_index").set(applied as f64);
        metrics::gauge!("rafter_raft_apply_lag").set(committed.saturating_sub(applied) as f64);
        metrics::gauge!("rafter_raft_last_log_index").set(m.last_log_index.unwrap_or(0) as f64);
        metrics::gauge!("rafter_raft_snapshot_index").set(idx_of(&m.snapshot).unwrap_or(0) as f64);
    }

    /// Why the raft node stopped by itself (a storage error such as a full disk, or a
    /// panic), if it did; `None` while it runs or after a normal shutdown or removal.
    pub fn fatal(&self) -> Option<String> {
        match &self.metrics().running_state {
            Err(openraft::errors::Fatal::Stopped) | Ok(()) => None,
            Err(f) => Some(f.to_string()),
        }
    }

    /// Whether a peer told this replica it was removed from the cluster.
    pub fn removed(&self) -> bool {
        self.inner.conn.removed()
    }

    pub fn id(&self) -> NodeId {
        self.inner.id
    }

    /// This node's member info (peer and API addresses).
    pub fn self_node(&self) -> PeerNode {
        PeerNode {
            addr: self.inner.advertise_addr.clone(),
            api_addr: self.inner.api_addr.clone(),
        }
    }

    pub async fn is_initialized(&self) -> Result<bool, String> {
        self.inner
            .raft
            .is_initialized()
            .await
            .map_err(|e| e.to_string())
    }

    /// On a never-initialized store, makes `members` (all voters) the first membership.
    /// Returns whether it initialized.
    pub async fn initialize(&self, members: BTreeMap<NodeId, PeerNode>) -> Result<bool, String> {
        if self.is_initialized().await? {
            return Ok(false);
        }
        self.inner
            .raft
            .initialize(members)
            .await
            .map_err(|e| format!("initialize raft: {e}"))?;
        Ok(true)
    }

    /// On a never-initialized store, makes this node the single voter of a new cluster.
    /// Returns whether it initialized.
    pub async fn initialize_if_new(&self) -> Result<bool, String> {
        self.initialize(BTreeMap::from([(self.inner.id, self.self_node())]))
            .await
    }

    /// Waits until this node is leader (bounded).
    pub async fn wait_leader(&self, timeout: Duration) -> Result<(), String> {
        self.inner
            .raft
            .wait(Some(timeout))
            .state(ServerState::Leader, "become leader")
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn metrics(&self) -> RaftMetrics<TypeConfig> {
        self.inner.raft.metrics().borrow_watched().clone()
    }

    fn route(&self) -> Route {
        let m = self.metrics();
        if m.state == ServerState::Leader {
            return Route::Local;
        }
        match m.current_leader {
            Some(l) if l != self.inner.id => match m.membership_config.get_node(&l) {
                Some(n) => Route::Remote(self.inner.conn.peer(l, &n.addr)),
                None => Route::NoLeader,
            },
            _ => Route::NoLeader,
        }
    }

    /// Runs `attempt` against the current leader until it succeeds, fails for good, or the
    /// deadline passes (then `NotLeader`, with the last known leader).
    async fn with_leader<T, F, Fut>(
        &self,
        deadline: Instant,
        mut attempt: F,
    ) -> Result<T, RaftFailure>
    where
        F: FnMut(Route, Duration) -> Fut,
        Fut: std::future::Future<Output = Result<T, Attempt>>,
    {
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(RaftFailure::NotLeader {
                    leader: self.metrics().current_leader,
                });
            }
            let route = self.route();
            let res = match route {
                Route::NoLeader => Err(Attempt::Retry("no leader".into())),
                r => attempt(r, remaining).await,
            };
            match res {
                Ok(v) => return Ok(v),
                Err(Attempt::Fail(f)) => return Err(f),
                Err(Attempt::Retry(why)) => {
                    tracing::debug!(node = self.inner.id, "retrying on the leader: {why}");
                    let pause = RETRY_PAUSE.min(deadline.saturating_duration_since(Instant::now()));
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }

    /// Waits until this replica has applied `index` (bounded by `deadline`).
    async fn wait_applied(&self, index: u64, deadline: Instant) -> Result<(), RaftFailure> {
        if idx_of(&self.metrics().last_applied).is_some_and(|a| a >= index) {
            return Ok(());
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        self.inner
            .raft
            .wait(Some(remaining))
            .applied_index_at_least(Some(index), "apply locally")
            .await
            .map(|_| ())
            .map_err(|e| {
                RaftFailure::Timeout(format!("log index {index} not applied here in time: {e}"))
            })
    }

    /// Replicates `cmd` through the leader (proposed here when this node leads, forwarded
    /// otherwise); returns its result once committed AND applied on this replica. Retries
    /// while the leader is unknown or changing, within `timeout`.
    pub async fn propose(&self, cmd: Command, timeout: Duration) -> Result<Response, RaftFailure> {
        let deadline = Instant::now() + timeout;
        let run = async {
            let (idx, resp) = self
                .with_leader(deadline, |route, remaining| {
                    let cmd = cmd.clone();
                    let raft = self.inner.raft.clone();
                    async move {
                        match route {
                            Route::Local => service::leader_write(&raft, cmd)
                                .await
                                .map_err(|e| Attempt::from_wire(e, true)),
                            Route::Remote(peer) => peer
                                .call::<Command, (u64, Response)>(Method::Forward, &cmd, remaining)
                                .await
                                .map_err(Attempt::from_forward_call)?
                                .map_err(Attempt::from_forward_wire),
                            Route::NoLeader => Err(Attempt::Retry("no leader".into())),
                        }
                    }
                })
                .await?;
            self.wait_applied(idx, deadline).await?;
            Ok(resp)
        };
        let started = Instant::now();
        let r = match tokio::time::timeout(timeout, run).await {
            Ok(r) => r,
            Err(_) => Err(RaftFailure::Timeout(format!(
                "proposal not committed and applied within {timeout:?}"
            ))),
        };
        match &r {
            Ok(_) => {
                metrics::counter!("rafter_raft_proposals_committed_total").increment(1);
                metrics::histogram!("rafter_raft_propose_duration_seconds")
                    .record(started.elapsed().as_secs_f64());
            }
            Err(_) => metrics::counter!("rafter_raft_proposals_failed_total").increment(1),
        }
        r
    }

    /// One ReadIndex round: the leader confirms its leadership with a quorum and returns its
    /// read index.
    async fn read_round(&self) -> Result<u64, Attempt> {
        let deadline = Instant::now() + READ_ROUND;
        let r = self
            .with_leader(deadline, |route, remaining| {
                let raft = self.inner.raft.clone();
                async move {
                    match route {
                        Route::Local => {
                            match tokio::time::timeout(remaining, service::leader_read_index(&raft))
                                .await
                            {
                                Ok(r) => r.map_err(|e| Attempt::from_wire(e, true)),
                                Err(_) => Err(Attempt::Fail(RaftFailure::Timeout(
                                    "leadership not confirmed by a quorum in time".into(),
                                ))),
                            }
                        }
                        Route::Remote(peer) => peer
                            .call::<(), u64>(Method::ReadIndex, &(), remaining)
                            .await
                            .map_err(Attempt::from_call)?
                            .map_err(|e| Attempt::from_wire(e, false)),
                        Route::NoLeader => Err(Attempt::Retry("no leader".into())),
                    }
                }
            })
            .await;
        r.map_err(Attempt::Fail)
    }

    async fn read_loop(self) {
        loop {
            let waiters = {
                let mut b = lock(&self.inner.reads);
                if b.waiters.is_empty() {
                    b.running = false;
                    return;
                }
                std::mem::take(&mut b.waiters)
            };
            // The round continues the trace of the first reader that has one.
            let r = match waiters.iter().find_map(|(_, ctx)| *ctx) {
                Some(ctx) => crate::telemetry::trace::scope(ctx, self.read_round()).await,
                None => self.read_round().await,
            };
            for (w, _) in waiters {
                let _ = w.send(r.clone());
            }
        }
    }

    /// Joins the next ReadIndex round: every reader that arrives while a round is in flight
    /// shares the following one (so each reader's index is taken after it arrived).
    async fn batched_read_index(&self) -> Result<u64, Attempt> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut b = lock(&self.inner.reads);
            b.waiters.push((tx, crate::telemetry::trace::current()));
            !std::mem::replace(&mut b.running, true)
        };
        if start {
            tokio::spawn(self.clone().read_loop());
        }
        rx.await.unwrap_or_else(|_| {
            Err(Attempt::Fail(RaftFailure::Stopped(
                "read loop ended".into(),
            )))
        })
    }

    /// Linearizable read barrier on any replica: gets a read index from the leader (batched
    /// with concurrent readers), then waits until this replica has applied it. Returns the
    /// read index.
    pub async fn read_barrier(&self, timeout: Duration) -> Result<u64, RaftFailure> {
        let deadline = Instant::now() + timeout;
        let run = async {
            loop {
                match self.batched_read_index().await {
                    Ok(idx) => {
                        self.wait_applied(idx, deadline).await?;
                        return Ok(idx);
                    }
                    Err(Attempt::Fail(RaftFailure::NotLeader { leader }))
                        if Instant::now() + RETRY_PAUSE < deadline =>
                    {
                        tracing::debug!(?leader, "read barrier: retrying");
                        tokio::time::sleep(RETRY_PAUSE).await;
                    }
                    Err(Attempt::Fail(f)) => return Err(f),
                    Err(Attempt::Retry(m)) => return Err(RaftFailure::Other(m)),
                }
            }
        };
        let started = Instant::now();
        let r = match tokio::time::timeout(timeout, run).await {
            Ok(r) => r,
            Err(_) => Err(RaftFailure::Timeout(format!(
                "read barrier not reached within {timeout:?}"
            ))),
        };
        if r.is_ok() {
            metrics::histogram!("rafter_raft_read_index_duration_seconds")
                .record(started.elapsed().as_secs_f64());
        }
        r
    }

    /// Executes `op` on the leader (from any replica); waits until a membership entry it
    /// wrote is applied here.
    async fn admin(&self, op: AdminOp, timeout: Duration) -> Result<AdminReply, RaftFailure> {
        let deadline = Instant::now() + timeout;
        let run = async {
            let reply = self
                .with_leader(deadline, |route, remaining| {
                    let op = op.clone();
                    let raft = self.inner.raft.clone();
                    let id = self.inner.id;
                    async move {
                        match route {
                            Route::Local => service::leader_admin(&raft, id, op)
                                .await
                                .map_err(|e| Attempt::from_wire(e, true)),
                            Route::Remote(peer) => peer
                                .call::<AdminOp, AdminReply>(Method::Admin, &op, remaining)
                                .await
                                .map_err(Attempt::from_call)?
                                .map_err(|e| Attempt::from_wire(e, false)),
                            Route::NoLeader => Err(Attempt::Retry("no leader".into())),
                        }
                    }
                })
                .await?;
            if let AdminReply::Done { log_index: Some(i) } = reply {
                self.wait_applied(i, deadline).await?;
            }
            Ok(reply)
        };
        match tokio::time::timeout(timeout, run).await {
            Ok(r) => r,
            Err(_) => Err(RaftFailure::Timeout(format!(
                "cluster operation not done within {timeout:?}"
            ))),
        }
    }

    /// Adds a non-voting member (replication to it starts at once). The new member is asked
    /// first: one that is unreachable or fails the peer TLS handshake (another peer CA) is a
    /// clear error, not a learner that silently never catches up.
    pub async fn add_learner(
        &self,
        id: NodeId,
        node: PeerNode,
        timeout: Duration,
    ) -> Result<(), RaftFailure> {
        let probe = self
            .inner
            .conn
            .peer(id, &node.addr)
            .call::<(), u64>(Method::ReadIndex, &(), Duration::from_secs(3))
            .await;
        if let Err(e) = probe {
            return Err(RaftFailure::Invalid(format!(
                "replica {id} at {} cannot be reached over the peer transport ({e}); is it running, and does its data folder hold this cluster's peer CA (peer-ca.crt)?",
                node.addr
            )));
        }
        self.admin(AdminOp::AddLearner { id, node }, timeout)
            .await
            .map(|_| ())
    }

    /// Turns a learner into a voter.
    pub async fn promote(&self, id: NodeId, timeout: Duration) -> Result<(), RaftFailure> {
        self.admin(AdminOp::Promote { id }, timeout)
            .await
            .map(|_| ())
    }

    /// Removes a voter or learner from the cluster (the leader may remove itself).
    pub async fn remove_member(&self, id: NodeId, timeout: Duration) -> Result<(), RaftFailure> {
        self.admin(AdminOp::Remove { id }, timeout)
            .await
            .map(|_| ())
    }

    /// Replaces the member info of `id`.
    pub async fn set_node(
        &self,
        id: NodeId,
        node: PeerNode,
        timeout: Duration,
    ) -> Result<(), RaftFailure> {
        self.admin(AdminOp::SetNode { id, node }, timeout)
            .await
            .map(|_| ())
    }

    /// Hands leadership to voter `to`; returns once this replica sees `to` as leader.
    pub async fn transfer_leader(&self, to: NodeId, timeout: Duration) -> Result<(), RaftFailure> {
        let deadline = Instant::now() + timeout;
        self.admin(AdminOp::TransferLeader { to }, timeout).await?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        self.inner
            .raft
            .wait(Some(remaining))
            .current_leader(to, "leadership transferred")
            .await
            .map(|_| ())
            .map_err(|e| RaftFailure::Timeout(format!("replica {to} did not take over: {e}")))
    }

    /// Before this replica stops: when it leads and has fellow voters, hands leadership to
    /// the voter that holds the most of the log (bounded by `timeout`), so that the cluster
    /// does not wait an election timeout for its next leader. Returns the new leader, or
    /// `None` when there was nothing to hand over.
    pub async fn hand_over(&self, timeout: Duration) -> Result<Option<NodeId>, RaftFailure> {
        let m = self.metrics();
        if m.state != ServerState::Leader {
            return Ok(None);
        }
        let matched = |id: &NodeId| {
            m.replication
                .as_ref()
                .and_then(|r| r.get(id).cloned().flatten())
                .map(|l| l.index())
        };
        let best = m
            .membership_config
            .membership()
            .voter_ids()
            .filter(|v| *v != self.inner.id)
            .max_by_key(|v| (matched(v), std::cmp::Reverse(*v)));
        let Some(to) = best else {
            return Ok(None);
        };
        self.transfer_leader(to, timeout).await.map(|()| Some(to))
    }

    /// The leader's replication progress (asked of the leader from a follower).
    pub async fn replication(&self, timeout: Duration) -> Result<Replication, RaftFailure> {
        match self.admin(AdminOp::Replication, timeout).await? {
            AdminReply::Replication {
                matched,
                last_log_index,
            } => Ok(Replication {
                matched,
                last_log_index,
            }),
            other => Err(RaftFailure::Other(format!("unexpected reply {other:?}"))),
        }
    }

    pub fn status(&self) -> Status {
        let m = self.metrics();
        let membership = m.membership_config.membership();
        let voters: Vec<NodeId> = membership.voter_ids().collect();
        let members = membership
            .nodes()
            .map(|(id, n)| Member {
                id: *id,
                node: n.clone(),
                voter: voters.contains(id),
            })
            .collect();
        let role = match m.state {
            _ if self.inner.conn.removed() => Role::Removed,
            ServerState::Leader => Role::Leader,
            ServerState::Follower => Role::Follower,
            ServerState::Learner => Role::Learner,
            ServerState::Candidate => Role::Candidate,
            _ => Role::Unknown,
        };
        Status {
            id: self.inner.id,
            leader: m.current_leader,
            is_leader: m.state == ServerState::Leader && m.current_leader == Some(self.inner.id),
            running: m.running_state.is_ok(),
            role,
            term: m.current_term,
            committed_index: idx_of(&m.local_committed),
            applied_index: idx_of(&m.last_applied),
            last_log_index: m.last_log_index,
            snapshot_index: idx_of(&m.snapshot),
            snapshots_installed: self
                .inner
                .snapshots_installed
                .load(std::sync::atomic::Ordering::Relaxed),
            purged_index: idx_of(&m.purged),
            members,
        }
    }

    pub fn is_leader(&self) -> bool {
        self.status().is_leader
    }

    /// Builds a snapshot now (the log behind it is purged by policy); returns the log index
    /// it covers once built.
    pub async fn trigger_snapshot(&self, timeout: Duration) -> Result<u64, RaftFailure> {
        let want = idx_of(&self.metrics().last_applied).unwrap_or(0);
        self.inner
            .raft
            .trigger()
            .snapshot()
            .await
            .map_err(|e| RaftFailure::Stopped(e.to_string()))?;
        let m = self
            .inner
            .raft
            .wait(Some(timeout))
            .metrics(
                |m| idx_of(&m.snapshot).is_some_and(|s| s >= want),
                "snapshot built",
            )
            .await
            .map_err(|e| RaftFailure::Timeout(format!("snapshot not built in time: {e}")))?;
        Ok(idx_of(&m.snapshot).unwrap_or(0))
    }

    /// Stops the peer server and the raft tasks (idempotent).
    pub async fn shutdown(&self) {
        self.inner.server_stop.send_replace(true);
        let server = lock(&self.inner.server).take();
        if let Err(e) = self.inner.raft.shutdown().await {
            tracing::warn!("raft shutdown: {e}");
        }
        if let Some(h) = server {
            let abort = h.abort_handle();
            if tokio::time::timeout(Duration::from_secs(2), h)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
    }
}

/// Seeds a never-used data dir (engine under `mvcc`, snapshots in `snapshot_dir`) with `kvs`
/// at `revision`, as a new cluster whose single voter is `id` (`node`). Raft started on it
/// later is initialized, and replicas added later receive the keyspace as a snapshot.
pub fn seed_new_cluster(
    mvcc: Arc<Mvcc>,
    snapshot_dir: PathBuf,
    id: NodeId,
    node: PeerNode,
    revision: Revision,
    kvs: Vec<crate::storage::mvcc::KeyValue>,
) -> Result<(), String> {
    use openraft::type_config::alias::{LeaderIdOf, LogIdOf, StoredMembershipOf};
    use openraft::vote::RaftLeaderIdExt;
    let log_id = LogIdOf::<TypeConfig>::new(LeaderIdOf::<TypeConfig>::new_committed(0, id), 0);
    let membership = openraft::Membership::new(
        vec![std::collections::BTreeSet::from([id])],
        BTreeMap::from([(id, node)]),
    )
    .map_err(|e| e.to_string())?;
    let stored = StoredMembershipOf::<TypeConfig>::new(Some(log_id), membership);
    let fresh = mvcc.current_revision() == 0
        && mvcc
            .engine()
            .view()
            .last(crate::storage::engine::Cf::RaftLog)
            .map_err(|e| e.to_string())?
            .is_none()
        && mvcc
            .engine()
            .view()
            .last(crate::storage::engine::Cf::RaftMeta)
            .map_err(|e| e.to_string())?
            .is_none();
    if !fresh {
        return Err(
            "restore needs a new data folder: this one already holds a cluster's data".to_string(),
        );
    }
    let hook: ApplyHook = Arc::new(|_, _| {});
    let sm = StateMachine::new(mvcc, snapshot_dir, hook).map_err(|e| e.to_string())?;
    sm.seed(log_id, stored, revision, kvs)
        .map_err(|e| format!("seeding the store: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::engine::{Batch, Cf, Engine};
    use openraft::testing::log::{StoreBuilder, Suite};
    use openraft::type_config::TypeConfigExt;
    use openraft::StorageError;

    /// Outcomes are classified by type: a discarded entry is unknown (504), never "nothing
    /// happened" (503, retried); a refusal before appending is retried.
    #[test]
    fn write_outcomes_by_type() {
        let unknown = Attempt::from_wire(WireError::OutcomeUnknown("discarded".into()), true);
        assert!(matches!(unknown, Attempt::Fail(RaftFailure::Timeout(_))));
        // A membership change refused while another one commits did nothing: retried.
        let busy = Attempt::from_wire(WireError::Busy("in progress".into()), false);
        assert!(matches!(busy, Attempt::Retry(_)));
        assert!(matches!(
            crate::kv::Error::from(RaftFailure::Timeout("x".into())),
            crate::kv::Error::Timeout(_)
        ));
        let not_leader = Attempt::from_wire(WireError::NotLeader { leader: Some(2) }, true);
        assert!(matches!(not_leader, Attempt::Retry(_)));
        assert!(matches!(
            Attempt::from_forward_call(CallError::Unreachable("reset".into())),
            Attempt::Fail(RaftFailure::Timeout(_))
        ));
        assert!(matches!(
            Attempt::from_forward_call(CallError::NotSent("refused".into())),
            Attempt::Retry(_)
        ));
    }

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
            // As in a started node: asking for the current snapshot makes a dump.
            sm.serving()
                .store(true, std::sync::atomic::Ordering::Release);
            Ok((dir, LogStore::new(engine), sm))
        }
    }

    /// Disaster recovery reads what a stopped replica's log holds past what it applied.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_unapplied_log_tail_is_read_for_recovery() {
        use crate::storage::mvcc::{Op, Txn};
        let t = Duration::from_secs(10);
        let put = |k: &str| Txn {
            compares: vec![],
            success: vec![Op::Put {
                key: k.as_bytes().to_vec(),
                value: b"v".to_vec(),
            }],
        };
        let dir = tempfile::tempdir().unwrap();
        let mvcc = Arc::new(Mvcc::open(Engine::open(&dir.path().join("db")).unwrap()).unwrap());
        let hook: ApplyHook = Arc::new(|_, _| {});
        let node = RaftNode::start(
            1,
            mvcc.clone(),
            dir.path().join("snapshots"),
            hook,
            RaftOptions::default(),
        )
        .await
        .unwrap();
        node.initialize_if_new().await.unwrap();
        node.wait_leader(t).await.unwrap();
        for k in ["a", "b"] {
            node.propose(Command::Txn(put(k)), t).await.unwrap();
        }
        node.shutdown().await;
        assert!(unapplied_txns(&mvcc).unwrap().is_empty());
        // An entry appended but not applied (the replica never learnt it was committed).
        let (_, last) = mvcc.engine().view().last(Cf::RaftLog).unwrap().unwrap();
        let mut e = log_store::decode_entry(&last).unwrap();
        e.log_id.index += 1;
        e.payload = openraft::EntryPayload::Normal(Command::Txn(put("tail")));
        let mut b = Batch::new();
        b.put(
            Cf::RaftLog,
            &e.log_id.index.to_be_bytes(),
            wire::encode(&e).unwrap(),
        );
        mvcc.engine().write(b, true).unwrap();
        let tail = unapplied_txns(&mvcc).unwrap();
        assert_eq!(tail.len(), 1);
        assert!(matches!(&tail[0].success[0], Op::Put { key, .. } if key == b"tail"));
    }

    /// A replica that crashed while installing a snapshot (the file in place, the keyspace
    /// half replaced, last-applied cleared) installs the same file again when it starts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_crash_while_installing_a_snapshot_installs_it_again_at_start() {
        use crate::storage::mvcc::{Op, Txn};
        let t = Duration::from_secs(10);
        let start = |dir: &std::path::Path, mvcc: &Arc<Mvcc>| {
            let hook: ApplyHook = Arc::new(|_, _| {});
            let (mvcc, dir) = (mvcc.clone(), dir.join("snapshots"));
            async move {
                RaftNode::start(1, mvcc, dir, hook, RaftOptions::default())
                    .await
                    .unwrap()
            }
        };
        let open = |dir: &std::path::Path| {
            Arc::new(Mvcc::open(Engine::open(&dir.join("db")).unwrap()).unwrap())
        };
        let put = |k: String| {
            Command::Txn(Txn {
                compares: vec![],
                success: vec![Op::Put {
                    key: k.into_bytes(),
                    value: b"v".to_vec(),
                }],
            })
        };
        // Replica A: writes, a compaction, then a snapshot.
        let a = tempfile::tempdir().unwrap();
        let mvcc_a = open(a.path());
        let node = start(a.path(), &mvcc_a).await;
        node.initialize_if_new().await.unwrap();
        node.wait_leader(t).await.unwrap();
        for i in 0..20 {
            node.propose(put(format!("k{i:02}")), t).await.unwrap();
        }
        node.propose(Command::Compact(5), t).await.unwrap();
        node.trigger_snapshot(t).await.unwrap();
        node.shutdown().await;
        let want = mvcc_a.range(b"", b"", None, 0).unwrap();
        let want_past = mvcc_a.range(b"", b"", Some(6), 0).unwrap();
        // What a leader would send (a dump with last-applied and membership).
        let mut snap = Vec::new();
        mvcc_a
            .dump(&[b"raft/last_applied", b"raft/membership"], &mut snap)
            .unwrap();

        // Replica B "crashed" half-way through installing it.
        let b = tempfile::tempdir().unwrap();
        {
            let mvcc_b = open(b.path());
            mvcc_b
                .apply_txn(
                    &Txn {
                        compares: vec![],
                        success: vec![Op::Put {
                            key: b"stale".to_vec(),
                            value: b"1".to_vec(),
                        }],
                    },
                    Batch::new(),
                )
                .unwrap();
            std::fs::create_dir_all(b.path().join("snapshots")).unwrap();
            std::fs::write(b.path().join("snapshots/current.snap"), &snap).unwrap();
            let mut begin = Batch::new();
            begin.delete(Cf::Meta, b"raft/last_applied".to_vec());
            assert!(mvcc_b
                .restore_dump(&snap[..snap.len() / 2], begin, Batch::new())
                .is_err());
        }
        let mvcc_b = open(b.path());
        let node = start(b.path(), &mvcc_b).await;
        assert_eq!(mvcc_b.range(b"", b"", None, 0).unwrap(), want);
        assert_eq!(mvcc_b.range(b"", b"", Some(6), 0).unwrap(), want_past);
        assert_eq!(mvcc_b.compacted_revision(), 5);
        node.wait_leader(t).await.unwrap();
        node.propose(put("after".into()), t).await.unwrap();
        assert_eq!(mvcc_b.current_revision(), want.revision + 1);
        node.shutdown().await;
        drop(node);

        // A snapshot in the JSON format of earlier releases is set aside, not fatal.
        std::fs::write(b.path().join("snapshots/current.snap"), b"{\"meta\":{}}").unwrap();
        let node = start(b.path(), &mvcc_b).await;
        node.wait_leader(t).await.unwrap();
        assert_eq!(mvcc_b.current_revision(), want.revision + 1);
        assert!(b.path().join("snapshots/current.snap.json-old").exists());
        node.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn openraft_storage_suite() {
        Suite::test_all(Builder).await.unwrap();
    }
}
