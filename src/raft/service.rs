//! Raft peer transport over gRPC: the server side, and the operations only a leader executes
//! (a forwarded proposal, a linearizable read index, membership and leadership changes),
//! shared by local callers and remote ones.
//!
//! Every answer is a JSON `Result<_, WireError>` in a `Blob`; gRPC status codes are used only
//! for undecodable requests. Forward and ReadIndex run in a `peer` span that continues the
//! caller's `traceparent` metadata. It knows nothing of the state machine beyond its raft
//! handle.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;

use futures::StreamExt;
use tracing::Instrument;

use crate::telemetry::trace;
use openraft::errors::{ClientWriteError, LinearizableReadError, RaftError};
use openraft::{ChangeMembers, Raft, ReadPolicy, ServerState};
use tonic::{Request, Response, Status, Streaming};

use super::network::PeerTls;
use super::snapshot_data::{sync_dir, temp_path};
use super::wire::{self, blob, pb, AdminOp, AdminReply, SnapshotHeader, WireError};
use super::{Command, NodeId, Response as CmdResponse, SnapshotData, StateMachine, TypeConfig};
use openraft::async_runtime::watch::WatchReceiver;
use openraft::type_config::alias::{SnapshotMetaOf, SnapshotOf, VoteOf};

type RaftT = Raft<TypeConfig, StateMachine>;

fn write_error(e: RaftError<TypeConfig, ClientWriteError<TypeConfig>>) -> WireError {
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => WireError::NotLeader {
            leader: f.leader_id,
        },
        RaftError::APIError(ClientWriteError::ChangeMembershipError(
            e @ openraft::errors::ChangeMembershipError::InProgress(_),
        )) => WireError::Busy(e.to_string()),
        RaftError::APIError(ClientWriteError::ChangeMembershipError(e)) => {
            WireError::Invalid(e.to_string())
        }
        RaftError::APIError(e @ ClientWriteError::LogEntryDiscarded(_)) => {
            WireError::OutcomeUnknown(e.to_string())
        }
        RaftError::APIError(e) => WireError::Other(e.to_string()),
        RaftError::Fatal(f) => WireError::Stopped(f.to_string()),
    }
}

/// Proposes `cmd` on this node as leader; returns its log index and result once applied here.
pub(crate) async fn leader_write(
    raft: &RaftT,
    cmd: Command,
) -> Result<(u64, CmdResponse), WireError> {
    raft.client_write(cmd)
        .await
        .map(|r| (r.log_id.index(), r.data))
        .map_err(write_error)
}

/// Confirms leadership with a quorum (ReadIndex) and returns the read log index.
pub(crate) async fn leader_read_index(raft: &RaftT) -> Result<u64, WireError> {
    match raft.get_read_log_id(ReadPolicy::ReadIndex).await {
        Ok((read, _)) => Ok(read.index()),
        Err(RaftError::APIError(LinearizableReadError::ForwardToLeader(f))) => {
            Err(WireError::NotLeader {
                leader: f.leader_id,
            })
        }
        Err(RaftError::APIError(e)) => Err(WireError::Other(e.to_string())),
        Err(RaftError::Fatal(f)) => Err(WireError::Stopped(f.to_string())),
    }
}

/// Executes an admin operation on this node as leader.
pub(crate) async fn leader_admin(
    raft: &RaftT,
    self_id: NodeId,
    op: AdminOp,
) -> Result<AdminReply, WireError> {
    let m = raft.metrics().borrow_watched().clone();
    if m.state != ServerState::Leader {
        return Err(WireError::NotLeader {
            leader: m.current_leader.filter(|l| *l != self_id),
        });
    }
    let membership = m.membership_config.membership().clone();
    let is_voter = |id: NodeId| membership.voter_ids().any(|v| v == id);
    let is_learner = |id: NodeId| membership.learner_ids().any(|v| v == id);
    let done = |r: openraft::raft::ClientWriteResponse<TypeConfig>| AdminReply::Done {
        log_index: Some(r.log_id.index()),
    };
    match op {
        AdminOp::Replication => Ok(AdminReply::Replication {
            matched: m
                .replication
                .as_ref()
                .map(|r| {
                    r.iter()
                        .map(|(id, l)| (*id, l.as_ref().map(|l| l.index())))
                        .collect()
                })
                .unwrap_or_default(),
            last_log_index: m.last_log_index,
        }),
        AdminOp::AddLearner { id, node } => {
            if is_voter(id) {
                return Err(WireError::Invalid(format!(
                    "replica {id} is already a voter"
                )));
            }
            raft.add_learner(id, node, false)
                .await
                .map(done)
                .map_err(write_error)
        }
        AdminOp::Promote { id } => {
            if is_voter(id) {
                return Ok(AdminReply::Done { log_index: None });
            }
            if !is_learner(id) {
                return Err(WireError::Invalid(format!(
                    "replica {id} is not a learner of the cluster"
                )));
            }
            raft.change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([id])), false)
                .await
                .map(done)
                .map_err(write_error)
        }
        AdminOp::Remove { id } => {
            let change = if is_voter(id) {
                if membership.voter_ids().count() <= 1 {
                    return Err(WireError::Invalid(format!(
                        "replica {id} is the last voter"
                    )));
                }
                ChangeMembers::RemoveVoters(BTreeSet::from([id]))
            } else if is_learner(id) {
                ChangeMembers::RemoveNodes(BTreeSet::from([id]))
            } else {
                return Err(WireError::Invalid(format!(
                    "replica {id} is not a member of the cluster"
                )));
            };
            raft.change_membership(change, false)
                .await
                .map(done)
                .map_err(write_error)
        }
        AdminOp::TransferLeader { to } => {
            if to == self_id {
                return Ok(AdminReply::Done { log_index: None });
            }
            if !is_voter(to) {
                return Err(WireError::Invalid(format!("replica {to} is not a voter")));
            }
            raft.trigger()
                .transfer_leader(to)
                .await
                .map_err(|e| WireError::Stopped(e.to_string()))?;
            Ok(AdminReply::Done { log_index: None })
        }
        AdminOp::SetNode { id, node } => {
            if !is_voter(id) && !is_learner(id) {
                return Err(WireError::Invalid(format!(
                    "replica {id} is not a member of the cluster"
                )));
            }
            raft.change_membership(ChangeMembers::SetNodes(BTreeMap::from([(id, node)])), false)
                .await
                .map(done)
                .map_err(write_error)
        }
    }
}

/// The gRPC peer service of one replica.
pub(crate) struct Service {
    pub(crate) id: NodeId,
    pub(crate) raft: RaftT,
    /// Where received snapshots are written (the state machine's snapshot directory).
    pub(crate) snapshot_dir: PathBuf,
}

impl Service {
    /// Writes a snapshot stream to `tmp` chunk by chunk (fsynced, bounded memory), then hands
    /// the file to raft to install.
    async fn receive_snapshot(
        &self,
        mut stream: Streaming<pb::SnapshotChunk>,
        tmp: &std::path::Path,
    ) -> Result<Result<openraft::raft::SnapshotResponse<TypeConfig>, WireError>, Status> {
        use tokio::io::AsyncWriteExt;
        let local = |e: std::io::Error| Status::internal(format!("receiving a snapshot: {e}"));
        let mut header: Option<SnapshotHeader<VoteOf<TypeConfig>, SnapshotMetaOf<TypeConfig>>> =
            None;
        let mut file = tokio::fs::File::create(tmp).await.map_err(local)?;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            if header.is_none() {
                header = Some(wire::decode(&chunk.header).map_err(Status::invalid_argument)?);
            }
            file.write_all(&chunk.data).await.map_err(local)?;
        }
        let header = header.ok_or_else(|| Status::invalid_argument("empty snapshot stream"))?;
        file.sync_all().await.map_err(local)?;
        drop(file);
        sync_dir(&self.snapshot_dir).map_err(local)?;
        let snapshot = SnapshotOf::<TypeConfig, SnapshotData> {
            meta: header.meta,
            snapshot: SnapshotData::open(tmp.to_path_buf()).map_err(local)?,
        };
        Ok(self
            .raft
            .install_full_snapshot(header.vote, snapshot)
            .await
            .map_err(stopped))
    }
}

/// The span a peer's call runs in on this replica: a child of the caller's `traceparent`
/// (a forwarded request's trace), else a new trace.
fn remote_span<T>(req: &Request<T>, name: &'static str) -> (trace::Context, tracing::Span) {
    let ctx = req
        .metadata()
        .get(trace::TRACEPARENT)
        .and_then(|v| v.to_str().ok())
        .and_then(trace::Context::parse)
        .map(|parent| parent.child())
        .unwrap_or_else(|| trace::Context::root(false));
    let span = tracing::info_span!(
        "peer",
        call = name,
        trace_id = %ctx.trace_id_hex(),
        span_id = %ctx.span_id_hex(),
        parent_span_id = %ctx.parent_span_id_hex(),
        sampled = ctx.sampled,
    );
    (ctx, span)
}

fn decode<T: serde::de::DeserializeOwned>(b: &pb::Blob) -> Result<T, Status> {
    wire::decode(&b.data).map_err(Status::invalid_argument)
}

fn stopped<E: std::fmt::Display>(e: E) -> WireError {
    WireError::Stopped(e.to_string())
}

#[tonic::async_trait]
impl pb::raft_peer_server::RaftPeer for Service {
    async fn append_entries(&self, req: Request<pb::Blob>) -> Result<Response<pb::Blob>, Status> {
        let rpc = decode(req.get_ref())?;
        let r = self.raft.append_entries(rpc).await.map_err(stopped);
        Ok(Response::new(blob(&r)?))
    }

    async fn vote(&self, req: Request<pb::Blob>) -> Result<Response<pb::Blob>, Status> {
        let rpc: openraft::raft::VoteRequest<TypeConfig> = decode(req.get_ref())?;
        // A candidate that a committed membership of ours no longer names was removed: tell
        // it so (a typed refusal) instead of letting it campaign forever.
        {
            let m = self.raft.metrics().borrow_watched().clone();
            let cand = rpc.vote.leader_id().node_id;
            let membership = m.membership_config.membership();
            let known = membership.voter_ids().any(|v| v == cand)
                || membership.learner_ids().any(|l| l == cand);
            let committed = m.membership_config.log_id().is_some()
                && m.membership_config.log_id().map(|l| l.index())
                    <= m.last_applied.as_ref().map(|l| l.index());
            let i_am_voter = membership.voter_ids().any(|v| Some(v) == m.current_leader)
                || membership.voter_ids().any(|v| v == m.id);
            if !known && committed && i_am_voter {
                return Err(Status::failed_precondition(format!(
                    "replica {cand} was removed from the cluster"
                )));
            }
        }
        let r = self.raft.vote(rpc).await.map_err(stopped);
        Ok(Response::new(blob(&r)?))
    }

    async fn transfer_leader(&self, req: Request<pb::Blob>) -> Result<Response<pb::Blob>, Status> {
        let rpc = decode(req.get_ref())?;
        let r = self.raft.handle_transfer_leader(rpc).await.map_err(stopped);
        Ok(Response::new(blob(&r)?))
    }

    async fn install_snapshot(
        &self,
        req: Request<Streaming<pb::SnapshotChunk>>,
    ) -> Result<Response<pb::Blob>, Status> {
        let tmp = temp_path(&self.snapshot_dir, "incoming");
        let r = self.receive_snapshot(req.into_inner(), &tmp).await;
        // Installed snapshots were renamed into place; anything else goes.
        let _ = tokio::fs::remove_file(&tmp).await;
        Ok(Response::new(blob(&r?)?))
    }

    async fn forward(&self, req: Request<pb::Blob>) -> Result<Response<pb::Blob>, Status> {
        let cmd: Command = decode(req.get_ref())?;
        let (ctx, span) = remote_span(&req, "forward");
        let raft = &self.raft;
        let r = trace::scope(
            ctx,
            async move {
                let r = leader_write(raft, cmd).await;
                match &r {
                    Ok((index, _)) => tracing::debug!(index, "forwarded write committed"),
                    Err(e) => tracing::debug!("forwarded write failed: {e:?}"),
                }
                r
            }
            .instrument(span),
        )
        .await;
        Ok(Response::new(blob(&r)?))
    }

    async fn read_index(&self, req: Request<pb::Blob>) -> Result<Response<pb::Blob>, Status> {
        let (ctx, span) = remote_span(&req, "read_index");
        let raft = &self.raft;
        let r = trace::scope(
            ctx,
            async move {
                let r = leader_read_index(raft).await;
                match &r {
                    Ok(index) => tracing::debug!(index, "read index confirmed"),
                    Err(e) => tracing::debug!("read index failed: {e:?}"),
                }
                r
            }
            .instrument(span),
        )
        .await;
        Ok(Response::new(blob(&r)?))
    }

    async fn admin(&self, req: Request<pb::Blob>) -> Result<Response<pb::Blob>, Status> {
        let op: AdminOp = decode(req.get_ref())?;
        let r = leader_admin(&self.raft, self.id, op).await;
        Ok(Response::new(blob(&r)?))
    }
}

/// Serves the peer service on `listener` until `stop` fires.
pub(crate) fn spawn_server(
    service: Service,
    listener: tokio::net::TcpListener,
    tls: Option<&PeerTls>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), String> {
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let incoming = tonic::transport::server::TcpIncoming::from_listener(listener, true, None)
        .map_err(|e| format!("peer listener: {e}"))?;
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = tls {
        builder = builder
            .tls_config(tls.server_config()?)
            .map_err(|e| format!("peer TLS: {e}"))?;
    }
    let svc = pb::raft_peer_server::RaftPeerServer::new(service)
        .max_decoding_message_size(256 * 1024 * 1024)
        .max_encoding_message_size(256 * 1024 * 1024);
    let router = builder.add_service(svc);
    let handle = tokio::spawn(async move {
        let shutdown = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        if let Err(e) = router
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await
        {
            tracing::warn!("raft peer server: {e}");
        }
    });
    Ok((local, handle))
}
