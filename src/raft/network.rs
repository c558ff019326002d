//! Raft peer transport over gRPC (tonic): the client side. [`NetworkFactory`] hands openraft
//! one [`PeerClient`] per target replica (AppendEntries, Vote, TransferLeader, and full
//! snapshots streamed in chunks); [`Peer`] makes the application-level calls (Forward,
//! ReadIndex, Admin) to a named replica, with the caller's trace context in a `traceparent`
//! metadata entry. Channels are cached per address and connect lazily; mutual TLS is used
//! when [`PeerTls`] is configured.
//!
//! [`Faults`] lets tests cut traffic between replicas (loopback only): a blocked call fails as
//! "unreachable" without being sent. It knows nothing of the state machine or storage.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openraft::errors::{NetworkError, RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::RPCOption;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest,
    TransferLeaderResponse, VoteRequest, VoteResponse,
};
use openraft::type_config::alias::{SnapshotOf, VoteOf};
use openraft::{OptionalSend, RaftNetworkFactory, RaftNetworkV2};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use super::wire::{self, pb, SnapshotHeader, WireError};
use super::{NodeId, PeerNode, SnapshotData, TypeConfig};

/// Default size of one snapshot chunk on the wire.
const SNAPSHOT_CHUNK: usize = 1024 * 1024;
/// The slowest transfer a snapshot is given time for (bytes per second), on top of the
/// configured install timeout: a large snapshot gets as long as it needs.
const SNAPSHOT_MIN_RATE: u64 = 4 * 1024 * 1024;

/// How long sending a snapshot of `len` bytes may take.
fn snapshot_ttl(base: Duration, len: u64) -> Duration {
    base + Duration::from_secs(len / SNAPSHOT_MIN_RATE)
}

/// Certificate files for mutual TLS between replicas (PEM).
#[derive(Clone, Debug)]
pub struct PeerTls {
    /// CA that signed every replica's certificate (verifies both directions).
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl PeerTls {
    fn read(&self) -> Result<(Vec<u8>, Vec<u8>, Vec<u8>), String> {
        let rd =
            |p: &PathBuf| std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()));
        Ok((rd(&self.ca)?, rd(&self.cert)?, rd(&self.key)?))
    }

    pub(crate) fn client_config(&self) -> Result<ClientTlsConfig, String> {
        let (ca, cert, key) = self.read()?;
        Ok(ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(ca))
            .identity(Identity::from_pem(cert, key)))
    }

    pub(crate) fn server_config(&self) -> Result<tonic::transport::ServerTlsConfig, String> {
        let (ca, cert, key) = self.read()?;
        Ok(tonic::transport::ServerTlsConfig::new()
            .identity(Identity::from_pem(cert, key))
            .client_ca_root(Certificate::from_pem(ca)))
    }
}

/// Injected network faults (tests): traffic between a pair of replicas, or to and from an
/// isolated replica, is dropped.
#[derive(Debug, Default)]
pub struct Faults {
    isolated: Mutex<BTreeSet<NodeId>>,
    cut: Mutex<BTreeSet<(NodeId, NodeId)>>,
}

impl Faults {
    pub fn new() -> Arc<Faults> {
        Arc::new(Faults::default())
    }

    /// Drops all traffic to and from `id`.
    pub fn isolate(&self, id: NodeId) {
        lock(&self.isolated).insert(id);
    }

    /// Drops traffic between `a` and `b` (both directions).
    pub fn cut(&self, a: NodeId, b: NodeId) {
        let mut c = lock(&self.cut);
        c.insert((a, b));
        c.insert((b, a));
    }

    /// Removes every fault.
    pub fn heal(&self) {
        lock(&self.isolated).clear();
        lock(&self.cut).clear();
    }

    pub fn blocked(&self, from: NodeId, to: NodeId) -> bool {
        let iso = lock(&self.isolated);
        iso.contains(&from) || iso.contains(&to) || lock(&self.cut).contains(&(from, to))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How a call failed at the transport level.
#[derive(Debug, Clone)]
pub(crate) enum CallError {
    /// Provably never left this replica (traffic blocked, a bad address or TLS setup, the
    /// connection refused): safe to retry anything.
    NotSent(String),
    /// The peer is unavailable; a request may have been delivered before the connection broke.
    Unreachable(String),
    /// No answer in time: the request may or may not have been processed.
    Timeout(String),
    /// The peer says this replica was removed from the cluster.
    Removed(String),
    /// Other failure: the request may or may not have been processed.
    Failed(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::NotSent(m) | CallError::Unreachable(m) => write!(f, "unreachable: {m}"),
            CallError::Timeout(m) => write!(f, "timed out: {m}"),
            CallError::Failed(m) => write!(f, "failed: {m}"),
            CallError::Removed(m) => write!(f, "removed: {m}"),
        }
    }
}

/// Whether a failed call never reached the peer: somewhere in its error chain the connection
/// itself was refused (decided by error types, not by message text).
fn connect_refused(s: &tonic::Status) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(s);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::AddrNotAvailable
            ) {
                return true;
            }
        }
        cur = e.source();
    }
    false
}

fn call_error(s: tonic::Status) -> CallError {
    match s.code() {
        tonic::Code::Unavailable if connect_refused(&s) => {
            CallError::NotSent(s.message().to_string())
        }
        tonic::Code::Unavailable => CallError::Unreachable(s.message().to_string()),
        tonic::Code::DeadlineExceeded => CallError::Timeout(s.message().to_string()),
        tonic::Code::FailedPrecondition => CallError::Removed(s.message().to_string()),
        _ => CallError::Failed(format!("{}: {}", s.code(), s.message())),
    }
}

/// Unary methods of the peer service.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Method {
    AppendEntries,
    Vote,
    TransferLeader,
    Forward,
    ReadIndex,
    Admin,
}

struct ConnInner {
    from: NodeId,
    tls: Option<ClientTlsConfig>,
    faults: Option<Arc<Faults>>,
    /// Addresses this replica dials instead of the members' own (`--peer-dial`: a chaos
    /// harness puts a fault proxy on every link).
    dial: std::collections::BTreeMap<NodeId, String>,
    /// A peer told this replica it was removed from the cluster.
    removed: std::sync::atomic::AtomicBool,
    channels: Mutex<HashMap<String, Channel>>,
}

/// Shared channel cache and client settings of one replica. Cloning is cheap.
#[derive(Clone)]
pub(crate) struct Connector {
    inner: Arc<ConnInner>,
}

impl Connector {
    pub(crate) fn new(
        from: NodeId,
        tls: Option<&PeerTls>,
        faults: Option<Arc<Faults>>,
        dial: std::collections::BTreeMap<NodeId, String>,
    ) -> Result<Connector, String> {
        let tls = tls.map(|t| t.client_config()).transpose()?;
        Ok(Connector {
            inner: Arc::new(ConnInner {
                from,
                tls,
                faults,
                dial,
                removed: Default::default(),
                channels: Mutex::new(HashMap::new()),
            }),
        })
    }

    pub(crate) fn peer(&self, target: NodeId, addr: &str) -> Peer {
        Peer {
            conn: self.clone(),
            target,
            addr: self
                .inner
                .dial
                .get(&target)
                .cloned()
                .unwrap_or_else(|| addr.to_string()),
        }
    }

    /// Whether a peer told this replica it was removed from the cluster.
    pub(crate) fn removed(&self) -> bool {
        self.inner
            .removed
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn blocked(&self, target: NodeId) -> bool {
        self.inner
            .faults
            .as_ref()
            .is_some_and(|f| f.blocked(self.inner.from, target))
    }

    fn channel(&self, addr: &str) -> Result<Channel, CallError> {
        let mut chans = lock(&self.inner.channels);
        if let Some(c) = chans.get(addr) {
            return Ok(c.clone());
        }
        let scheme = if self.inner.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let mut ep = Endpoint::from_shared(format!("{scheme}://{addr}"))
            .map_err(|e| CallError::NotSent(format!("bad peer address {addr:?}: {e}")))?
            .connect_timeout(Duration::from_millis(500))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(5))
            .keep_alive_timeout(Duration::from_secs(5));
        if let Some(tls) = &self.inner.tls {
            ep = ep
                .tls_config(tls.clone())
                .map_err(|e| CallError::NotSent(format!("peer TLS: {e}")))?;
        }
        let ch = ep.connect_lazy();
        chans.insert(addr.to_string(), ch.clone());
        Ok(ch)
    }
}

/// One target replica, for application-level calls.
#[derive(Clone)]
pub(crate) struct Peer {
    conn: Connector,
    target: NodeId,
    addr: String,
}

impl Peer {
    fn client(&self) -> Result<pb::raft_peer_client::RaftPeerClient<Channel>, CallError> {
        if self.conn.blocked(self.target) {
            return Err(CallError::NotSent(format!(
                "traffic to replica {} is blocked",
                self.target
            )));
        }
        Ok(
            pb::raft_peer_client::RaftPeerClient::new(self.conn.channel(&self.addr)?)
                .max_decoding_message_size(256 * 1024 * 1024)
                .max_encoding_message_size(256 * 1024 * 1024),
        )
    }

    /// One unary call with a JSON request and a JSON `Result<T, WireError>` answer.
    pub(crate) async fn call<Req: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        req: &Req,
        timeout: Duration,
    ) -> Result<Result<T, WireError>, CallError> {
        let data = wire::encode(req).map_err(CallError::Failed)?;
        let mut client = self.client()?;
        let mut request = tonic::Request::new(pb::Blob { data });
        request.set_timeout(timeout);
        // The caller's trace (a client request's) continues on the peer.
        if let Some(ctx) = crate::telemetry::trace::current() {
            if let Ok(v) = ctx.traceparent().parse() {
                request
                    .metadata_mut()
                    .insert(crate::telemetry::trace::TRACEPARENT, v);
            }
        }
        let fut = async move {
            match method {
                Method::AppendEntries => client.append_entries(request).await,
                Method::Vote => client.vote(request).await,
                Method::TransferLeader => client.transfer_leader(request).await,
                Method::Forward => client.forward(request).await,
                Method::ReadIndex => client.read_index(request).await,
                Method::Admin => client.admin(request).await,
            }
        };
        let resp = match tokio::time::timeout(timeout, fut).await {
            Err(_) => {
                return Err(CallError::Timeout(format!(
                    "{method:?} to replica {} after {timeout:?}",
                    self.target
                )))
            }
            Ok(r) => r.map_err(call_error)?,
        };
        wire::decode(&resp.into_inner().data).map_err(CallError::Failed)
    }

    /// Streams the snapshot file `data` (after `header`) in chunks of `chunk` bytes, reading
    /// one chunk at a time: memory stays bounded whatever the snapshot's size.
    async fn send_snapshot(
        &self,
        header: Vec<u8>,
        data: std::fs::File,
        chunk: usize,
    ) -> Result<Result<SnapshotResponse<TypeConfig>, WireError>, CallError> {
        use tokio::io::AsyncReadExt;
        let mut client = self.client()?;
        let chunk = chunk.max(1);
        let file = tokio::fs::File::from_std(data);
        let chunks = futures::stream::unfold(
            (Some(file), Some(header)),
            move |(file, header)| async move {
                let mut file = file?;
                let mut buf = vec![0u8; chunk];
                let mut n = 0;
                while n < chunk {
                    match file.read(&mut buf[n..]).await {
                        Ok(0) => break,
                        Ok(k) => n += k,
                        Err(e) => {
                            // Ends the stream short: the receiver's checksum refuses it.
                            tracing::warn!("reading the snapshot to send: {e}");
                            return None;
                        }
                    }
                }
                if n == 0 && header.is_none() {
                    return None;
                }
                buf.truncate(n);
                let last = n < chunk;
                let item = pb::SnapshotChunk {
                    header: header.unwrap_or_default(),
                    data: buf,
                };
                Some((item, ((!last).then_some(file), None)))
            },
        );
        let resp = client.install_snapshot(chunks).await.map_err(call_error)?;
        wire::decode(&resp.into_inner().data).map_err(CallError::Failed)
    }
}

/// Creates a [`PeerClient`] per target replica.
#[derive(Clone)]
pub struct NetworkFactory {
    conn: Connector,
}

impl NetworkFactory {
    pub(crate) fn new(conn: Connector) -> NetworkFactory {
        NetworkFactory { conn }
    }
}

impl RaftNetworkFactory<TypeConfig> for NetworkFactory {
    type Network = PeerClient;

    async fn new_client(&mut self, target: NodeId, node: &PeerNode) -> PeerClient {
        PeerClient {
            peer: self.conn.peer(target, &node.addr),
        }
    }
}

/// Raft protocol connection to one peer.
pub struct PeerClient {
    peer: Peer,
}

fn rpc_error(e: CallError) -> RPCError<TypeConfig> {
    match e {
        CallError::NotSent(m) | CallError::Unreachable(m) | CallError::Removed(m) => {
            RPCError::Unreachable(Unreachable::from_string(m))
        }
        CallError::Timeout(m) | CallError::Failed(m) => {
            RPCError::Network(NetworkError::from_string(m))
        }
    }
}

fn remote_error(e: WireError) -> RPCError<TypeConfig> {
    RPCError::Unreachable(Unreachable::from_string(format!("peer refused: {e:?}")))
}

impl PeerClient {
    async fn unary<Req: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        req: &Req,
        option: &RPCOption,
    ) -> Result<T, RPCError<TypeConfig>> {
        self.peer
            .call::<Req, T>(method, req, option.soft_ttl())
            .await
            .map_err(rpc_error)?
            .map_err(remote_error)
    }
}

impl RaftNetworkV2<TypeConfig> for PeerClient {
    type SnapshotData = SnapshotData;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.unary(Method::AppendEntries, &rpc, &option).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        match self
            .peer
            .call::<_, VoteResponse<TypeConfig>>(Method::Vote, &rpc, option.soft_ttl())
            .await
        {
            Err(CallError::Removed(m)) => {
                if !self
                    .peer
                    .conn
                    .inner
                    .removed
                    .swap(true, std::sync::atomic::Ordering::Relaxed)
                {
                    tracing::error!(
                        "replica {} says: {m}; this replica stops campaigning and is not ready",
                        self.peer.target
                    );
                }
                Err(rpc_error(CallError::Removed(m)))
            }
            r => r.map_err(rpc_error)?.map_err(remote_error),
        }
    }

    async fn transfer_leader(
        &mut self,
        req: TransferLeaderRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<TransferLeaderResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.unary(Method::TransferLeader, &req, &option).await
    }

    async fn full_snapshot(
        &mut self,
        vote: VoteOf<TypeConfig>,
        snapshot: SnapshotOf<TypeConfig, Self::SnapshotData>,
        cancel: impl Future<Output = ReplicationClosed> + OptionalSend + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let header = wire::encode(&SnapshotHeader {
            vote,
            meta: snapshot.meta,
        })
        .map_err(|e| StreamingError::Network(NetworkError::from_string(e)))?;
        let network = |e: std::io::Error| {
            StreamingError::Network(NetworkError::from_string(format!("snapshot file: {e}")))
        };
        // A leader's snapshot is a dump being written for this transfer: wait for it here,
        // in the replication task (apply goes on meanwhile).
        tokio::pin!(cancel);
        let data = tokio::select! {
            closed = &mut cancel => return Err(StreamingError::Closed(closed)),
            d = snapshot.snapshot.ready() => d.map_err(network)?,
        };
        let ttl = snapshot_ttl(option.soft_ttl(), data.len().map_err(network)?);
        let (_, file) = data.into_parts().map_err(network)?;
        let chunk = option.snapshot_chunk_size().unwrap_or(SNAPSHOT_CHUNK);
        let send = self.peer.send_snapshot(header, file, chunk);
        let res = tokio::select! {
            closed = &mut cancel => return Err(StreamingError::Closed(closed)),
            r = tokio::time::timeout(ttl, send) => r,
        };
        match res {
            Err(_) => Err(StreamingError::Network(NetworkError::from_string(format!(
                "snapshot not installed within {ttl:?}"
            )))),
            Ok(Err(CallError::Unreachable(m))) => {
                Err(StreamingError::Unreachable(Unreachable::from_string(m)))
            }
            Ok(Err(e)) => Err(StreamingError::Network(NetworkError::from_string(e))),
            Ok(Ok(Err(w))) => Err(StreamingError::Unreachable(Unreachable::from_string(
                format!("peer refused snapshot: {w:?}"),
            ))),
            Ok(Ok(Ok(r))) => Ok(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused connection is recognised by its error type as "never sent" (a forwarded
    /// write may be retried); blocked traffic too.
    #[tokio::test]
    async fn refused_connections_were_never_sent() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let faults = Faults::new();
        let c = Connector::new(1, None, Some(faults.clone()), Default::default()).unwrap();
        let peer = c.peer(2, &format!("127.0.0.1:{port}"));
        let e = peer
            .call::<(), u64>(Method::ReadIndex, &(), Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(matches!(e, CallError::NotSent(_)), "{e:?}");
        faults.isolate(2);
        let e = peer
            .call::<(), u64>(Method::ReadIndex, &(), Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(matches!(e, CallError::NotSent(_)), "{e:?}");
    }
}
