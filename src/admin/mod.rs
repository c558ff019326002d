//! The gRPC cluster-administration API (`proto/admin.proto`, package `rafter.admin.v1`) and its
//! CLI client (`rafter admin <command>`, in [`cli`]).
//!
//! The service runs on its own listener (`rafter serve --admin-listen ADDR`). By default it
//! requires mutual TLS: it serves the API's serving certificate (`--tls-cert-file`, else the
//! data folder's `server.crt`) and accepts only client certificates signed by the API's client
//! CA (`--client-ca-file`, else the data folder's `ca.crt`) that name the `system:masters` group
//! (the `admin.crt` identity) or the replica identity (`rafter`). `--admin-insecure` serves plaintext
//! (loopback testing only). Every RPC is a thin call into [`Kv`]; `kv::Error` becomes a gRPC
//! status in exactly one function ([`grpc_status`]).

pub mod cli;

use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use anyhow::{Context, Result};
use futures::Stream;
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};
use tonic::{Request, Response};

use crate::kv::{self, Kv};

/// Generated messages, server and client of `rafter.admin.v1`.
pub mod proto {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("rafter.admin.v1");
}

use proto::admin_server::{Admin, AdminServer};
use proto::*;

/// How long a drained leader tries to hand leadership over.
const DRAIN_HAND_OVER_TIMEOUT: Duration = Duration::from_secs(5);

/// Size of one streamed backup chunk.
pub const BACKUP_CHUNK: usize = 1 << 20;

/// How the admin listener is secured.
#[derive(Clone, Debug)]
pub enum AdminTls {
    /// Mutual TLS: this serving certificate and key, clients verified against `client_ca`.
    Mutual {
        cert: std::path::PathBuf,
        key: std::path::PathBuf,
        client_ca: std::path::PathBuf,
    },
    /// Plaintext (`--admin-insecure`).
    Insecure,
}

/// The one translation of a `kv::Error` into a gRPC status.
pub fn grpc_status(e: kv::Error) -> tonic::Status {
    use kv::Error as E;
    match e {
        E::Compacted { .. } | E::FutureRevision { .. } => {
            tonic::Status::out_of_range(e.to_string())
        }
        E::Timeout(m) => tonic::Status::deadline_exceeded(m),
        E::Unavailable(m) => tonic::Status::unavailable(m),
        E::Invalid(m) => tonic::Status::failed_precondition(m),
        E::Storage(m) => tonic::Status::internal(m),
    }
}

/// The service: a handle on the replica's store (and, for storage migration, on its
/// resource store).
pub struct AdminService {
    kv: Kv,
    store: Option<crate::registry::store::Store>,
    require_cert: bool,
}

impl AdminService {
    pub fn new(
        kv: Kv,
        store: Option<crate::registry::store::Store>,
        require_cert: bool,
    ) -> AdminService {
        AdminService {
            kv,
            store,
            require_cert,
        }
    }

    /// With mutual TLS, only the admin identity (group `system:masters`) and replicas (CN
    /// `rafter`) may call. The TLS layer already checked the chain against the cluster CA.
    #[allow(clippy::result_large_err)] // tonic::Status is the service error type
    fn authorize<T>(&self, req: &Request<T>) -> Result<(), tonic::Status> {
        if !self.require_cert {
            return Ok(());
        }
        let certs = req
            .peer_certs()
            .ok_or_else(|| tonic::Status::unauthenticated("a client certificate is required"))?;
        let leaf = certs
            .first()
            .ok_or_else(|| tonic::Status::unauthenticated("a client certificate is required"))?;
        match crate::server::pki::cert_identity(leaf.as_ref()) {
            Some((cn, groups))
                if cn == "rafter" || groups.iter().any(|g| g == "system:masters") =>
            {
                Ok(())
            }
            Some((cn, _)) => Err(tonic::Status::permission_denied(format!(
                "user {cn:?} may not administer the cluster (needs group system:masters)"
            ))),
            None => Err(tonic::Status::unauthenticated(
                "client certificate names no user",
            )),
        }
    }
}

/// Converts the kv status into its wire form.
pub fn status_to_proto(s: kv::ClusterStatus) -> StatusResponse {
    StatusResponse {
        node_id: s.node_id,
        leader: s.leader,
        term: s.term,
        commit_index: s.commit_index,
        applied_index: s.applied_index,
        current_revision: s.current_revision,
        compacted_revision: s.compacted_revision,
        snapshot_index: s.snapshot_index,
        snapshots_installed: s.snapshots_installed,
        purged_index: s.purged_index,
        members: s
            .members
            .into_iter()
            .map(|m| proto::ReplicaStatus {
                id: m.id,
                peer_addr: m.peer_addr,
                api_addr: m.api_addr,
                role: m.role,
                voter: m.voter,
                matched_index: m.matched_index,
                lag: m.lag,
            })
            .collect(),
    }
}

/// Converts the wire form back (the CLI prints it).
pub fn status_from_proto(s: StatusResponse) -> kv::ClusterStatus {
    kv::ClusterStatus {
        node_id: s.node_id,
        leader: s.leader,
        term: s.term,
        commit_index: s.commit_index,
        applied_index: s.applied_index,
        current_revision: s.current_revision,
        compacted_revision: s.compacted_revision,
        snapshot_index: s.snapshot_index,
        snapshots_installed: s.snapshots_installed,
        purged_index: s.purged_index,
        members: s
            .members
            .into_iter()
            .map(|m| kv::ReplicaStatus {
                id: m.id,
                peer_addr: m.peer_addr,
                api_addr: m.api_addr,
                role: m.role,
                voter: m.voter,
                matched_index: m.matched_index,
                lag: m.lag,
            })
            .collect(),
    }
}

type BackupStream = Pin<Box<dyn Stream<Item = Result<BackupChunk, tonic::Status>> + Send>>;

/// Splits a backup into chunks: the first carries the revision and total size.
pub fn backup_chunks(backup: kv::Backup) -> Vec<BackupChunk> {
    let total = backup.data.len() as u64;
    let mut chunks: Vec<BackupChunk> = backup
        .data
        .chunks(BACKUP_CHUNK)
        .map(|c| BackupChunk {
            revision: 0,
            total_size: 0,
            data: c.to_vec(),
        })
        .collect();
    if chunks.is_empty() {
        chunks.push(BackupChunk {
            revision: 0,
            total_size: 0,
            data: vec![],
        });
    }
    chunks[0].revision = backup.revision;
    chunks[0].total_size = total;
    chunks
}

#[tonic::async_trait]
impl Admin for AdminService {
    async fn status(
        &self,
        req: Request<StatusRequest>,
    ) -> Result<Response<StatusResponse>, tonic::Status> {
        self.authorize(&req)?;
        let s = self.kv.cluster_status().await.map_err(grpc_status)?;
        Ok(Response::new(status_to_proto(s)))
    }

    async fn add_learner(
        &self,
        req: Request<AddLearnerRequest>,
    ) -> Result<Response<AddLearnerResponse>, tonic::Status> {
        self.authorize(&req)?;
        let r = req.into_inner();
        if r.id == 0 {
            return Err(tonic::Status::invalid_argument("id must be positive"));
        }
        if r.peer_addr.is_empty() {
            return Err(tonic::Status::invalid_argument("peer_addr is required"));
        }
        self.kv
            .add_learner(r.id, r.peer_addr, r.api_addr)
            .await
            .map_err(grpc_status)?;
        Ok(Response::new(AddLearnerResponse {}))
    }

    async fn promote(
        &self,
        req: Request<PromoteRequest>,
    ) -> Result<Response<PromoteResponse>, tonic::Status> {
        self.authorize(&req)?;
        let id = req.into_inner().id;
        self.kv.promote(id).await.map_err(grpc_status)?;
        Ok(Response::new(PromoteResponse {}))
    }

    async fn remove_member(
        &self,
        req: Request<RemoveMemberRequest>,
    ) -> Result<Response<RemoveMemberResponse>, tonic::Status> {
        self.authorize(&req)?;
        let id = req.into_inner().id;
        self.kv.remove_member(id).await.map_err(grpc_status)?;
        Ok(Response::new(RemoveMemberResponse {}))
    }

    async fn drain(
        &self,
        req: Request<DrainRequest>,
    ) -> Result<Response<DrainResponse>, tonic::Status> {
        self.authorize(&req)?;
        let undo = req.into_inner().undo;
        let handed_to = self
            .kv
            .drain(!undo, DRAIN_HAND_OVER_TIMEOUT)
            .await
            .map_err(grpc_status)?;
        Ok(Response::new(DrainResponse { handed_to }))
    }

    async fn transfer_leader(
        &self,
        req: Request<TransferLeaderRequest>,
    ) -> Result<Response<TransferLeaderResponse>, tonic::Status> {
        self.authorize(&req)?;
        let to = req.into_inner().to;
        self.kv.transfer_leader(to).await.map_err(grpc_status)?;
        Ok(Response::new(TransferLeaderResponse {}))
    }

    async fn snapshot(
        &self,
        req: Request<SnapshotRequest>,
    ) -> Result<Response<SnapshotResponse>, tonic::Status> {
        self.authorize(&req)?;
        let index = self.kv.trigger_snapshot().await.map_err(grpc_status)?;
        Ok(Response::new(SnapshotResponse { index }))
    }

    async fn compact(
        &self,
        req: Request<CompactRequest>,
    ) -> Result<Response<CompactResponse>, tonic::Status> {
        self.authorize(&req)?;
        let rev = req.into_inner().revision;
        if rev <= 0 {
            return Err(tonic::Status::invalid_argument("revision must be positive"));
        }
        self.kv.compact(rev).await.map_err(grpc_status)?;
        Ok(Response::new(CompactResponse {}))
    }

    type BackupStream = BackupStream;

    async fn backup(
        &self,
        req: Request<BackupRequest>,
    ) -> Result<Response<Self::BackupStream>, tonic::Status> {
        self.authorize(&req)?;
        let backup = self.kv.backup().await.map_err(grpc_status)?;
        let chunks = backup_chunks(backup);
        let stream = futures::stream::iter(chunks.into_iter().map(Ok));
        Ok(Response::new(Box::pin(stream)))
    }

    async fn migrate_storage(
        &self,
        req: Request<MigrateStorageRequest>,
    ) -> Result<Response<MigrateStorageResponse>, tonic::Status> {
        self.authorize(&req)?;
        let r = req.into_inner();
        let store = self
            .store
            .as_ref()
            .ok_or_else(|| tonic::Status::unavailable("this replica serves no resources"))?;
        let limit = if r.limit == 0 { 500 } else { r.limit as usize };
        let p = store
            .migrate_batch(&r.resource, &r.start_after, limit)
            .await
            .map_err(|s| {
                let msg = s.to_json()["message"].as_str().unwrap_or("").to_string();
                match s.code {
                    400 | 404 => tonic::Status::invalid_argument(msg),
                    _ => tonic::Status::internal(msg),
                }
            })?;
        Ok(Response::new(MigrateStorageResponse {
            rewritten: p.rewritten,
            skipped: p.skipped,
            last_key: p.last_key,
            done: p.done,
            storage_version: p.storage_version,
        }))
    }
}

/// A bound admin listener, ready to serve.
pub struct AdminListener {
    listener: tokio::net::TcpListener,
    tls: Option<ServerTlsConfig>,
}

impl AdminListener {
    /// Binds `addr` and loads the TLS material (so that errors surface at startup).
    pub async fn bind(addr: SocketAddr, tls: &AdminTls) -> Result<AdminListener> {
        let tls = match tls {
            AdminTls::Insecure => None,
            AdminTls::Mutual {
                cert,
                key,
                client_ca,
            } => {
                let read = |p: &std::path::Path| {
                    std::fs::read(p).with_context(|| format!("reading {}", p.display()))
                };
                let _ = rustls::crypto::ring::default_provider().install_default();
                Some(
                    ServerTlsConfig::new()
                        .identity(Identity::from_pem(read(cert)?, read(key)?))
                        .client_ca_root(Certificate::from_pem(read(client_ca)?))
                        .client_auth_optional(false),
                )
            }
        };
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the admin listener {addr}"))?;
        Ok(AdminListener { listener, tls })
    }

    pub fn local_addr(&self) -> Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves the admin API until `shutdown` resolves.
    pub async fn serve(
        self,
        kv: Kv,
        store: Option<crate::registry::store::Store>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<()> {
        let require_cert = self.tls.is_some();
        let mut builder = Server::builder().timeout(Duration::from_secs(300));
        if let Some(tls) = self.tls {
            builder = builder.tls_config(tls).context("admin TLS configuration")?;
        }
        let listener = self.listener;
        let incoming = futures::stream::unfold(listener, |l| async move {
            let r = l.accept().await.map(|(s, _)| {
                let _ = s.set_nodelay(true);
                s
            });
            Some((r, l))
        });
        builder
            .add_service(AdminServer::new(AdminService::new(kv, store, require_cert)))
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await
            .context("admin gRPC server")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_is_chunked_with_revision_and_size_first() {
        let data: Vec<u8> = (0..(BACKUP_CHUNK * 2 + 5)).map(|i| i as u8).collect();
        let chunks = backup_chunks(kv::Backup {
            revision: 42,
            data: data.clone(),
        });
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[0].revision, 42);
        assert_eq!(chunks[0].total_size, data.len() as u64);
        assert_eq!(chunks[1].total_size, 0);
        let joined: Vec<u8> = chunks.iter().flat_map(|c| c.data.clone()).collect();
        assert_eq!(joined, data);
        let empty = backup_chunks(kv::Backup {
            revision: 1,
            data: vec![],
        });
        assert_eq!(empty.len(), 1);
        assert_eq!(empty[0].revision, 1);
    }

    #[test]
    fn errors_map_to_grpc_codes() {
        use tonic::Code;
        let c = |e| grpc_status(e).code();
        assert_eq!(
            c(kv::Error::Compacted {
                requested: 1,
                compacted: 2
            }),
            Code::OutOfRange
        );
        assert_eq!(c(kv::Error::Timeout("x".into())), Code::DeadlineExceeded);
        assert_eq!(c(kv::Error::Unavailable("x".into())), Code::Unavailable);
        assert_eq!(c(kv::Error::Storage("x".into())), Code::Internal);
    }
}
