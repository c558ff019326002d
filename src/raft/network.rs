//! Raft peer transport. For now a stub: with a single voter openraft never contacts a peer,
//! and every RPC to a peer fails as "unreachable". A later change replaces [`PeerClient`]'s
//! bodies with gRPC calls to the peer's `BasicNode::addr`; the factory shape (one client per
//! target node id + address) is already the one openraft needs for membership changes.
//!
//! It knows nothing of the state machine or storage.

use std::future::Future;
use std::io::Cursor;

use openraft::errors::{RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::RPCOption;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::type_config::alias::{SnapshotOf, VoteOf};
use openraft::{BasicNode, OptionalSend, RaftNetworkFactory, RaftNetworkV2};

use super::{NodeId, TypeConfig};

/// Creates a [`PeerClient`] per target replica.
#[derive(Clone, Debug, Default)]
pub struct NetworkFactory {}

impl RaftNetworkFactory<TypeConfig> for NetworkFactory {
    type Network = PeerClient;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> PeerClient {
        PeerClient {
            target,
            addr: node.addr.clone(),
        }
    }
}

/// Connection to one peer (stub: always unreachable).
#[derive(Clone, Debug)]
pub struct PeerClient {
    target: NodeId,
    addr: String,
}

impl PeerClient {
    fn unreachable(&self) -> Unreachable<TypeConfig> {
        Unreachable::from_string(format!(
            "no raft transport configured (peer {} at {:?})",
            self.target, self.addr
        ))
    }
}

impl RaftNetworkV2<TypeConfig> for PeerClient {
    type SnapshotData = Cursor<Vec<u8>>;

    async fn append_entries(
        &mut self,
        _rpc: AppendEntriesRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        Err(RPCError::Unreachable(self.unreachable()))
    }

    async fn vote(
        &mut self,
        _rpc: VoteRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        Err(RPCError::Unreachable(self.unreachable()))
    }

    async fn full_snapshot(
        &mut self,
        _vote: VoteOf<TypeConfig>,
        _snapshot: SnapshotOf<TypeConfig, Self::SnapshotData>,
        _cancel: impl Future<Output = ReplicationClosed> + OptionalSend + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        Err(StreamingError::Unreachable(self.unreachable()))
    }
}
