//! The replicated state machine: applies committed log entries to [`Mvcc`], writing the
//! last-applied log id (and last membership) in the same atomic batch as the data each entry
//! produced; builds and installs snapshots (a dump of the live keyspace at its revision).
//!
//! Apply is deterministic: it never reads a clock or randomness. Snapshots are files in the
//! snapshot directory; history is not part of a snapshot, so installing one sets the compacted
//! revision to the snapshot's revision. It knows nothing of how events reach readers (see
//! [`ApplyHook`]).

use std::io::{self, Cursor};
use std::path::PathBuf;
use std::sync::Arc;

use futures::{Stream, TryStreamExt};
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::type_config::alias::{LogIdOf, SnapshotMetaOf, SnapshotOf, StoredMembershipOf};
use openraft::{EntryPayload, OptionalSend, RaftSnapshotBuilder, StoredMembership};
use serde::{Deserialize, Serialize};

use super::{ApplyHook, Command, Response, TypeConfig};
use crate::storage::engine::{Batch, Cf};
use crate::storage::mvcc::{KeyValue, Mvcc, Revision};

/// `meta` CF keys owned by this module (JSON values).
const LAST_APPLIED: &[u8] = b"raft/last_applied";
const MEMBERSHIP: &[u8] = b"raft/membership";
const SNAPSHOT_FILE: &str = "current.snap";

fn io_err(e: impl ToString) -> io::Error {
    io::Error::other(e.to_string())
}

fn invalid(e: impl ToString) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// The replicated data of a snapshot.
#[derive(Serialize, Deserialize)]
struct SnapshotBody {
    revision: Revision,
    kvs: Vec<KeyValue>,
}

/// The on-disk snapshot file.
#[derive(Serialize, Deserialize)]
struct SnapshotFile {
    meta: SnapshotMetaOf<TypeConfig>,
    body: SnapshotBody,
}

/// RocksDB-backed [`RaftStateMachine`] over the MVCC store. Cloning is cheap.
#[derive(Clone)]
pub struct StateMachine {
    mvcc: Arc<Mvcc>,
    snapshot_dir: PathBuf,
    hook: ApplyHook,
}

impl StateMachine {
    pub fn new(mvcc: Arc<Mvcc>, snapshot_dir: PathBuf, hook: ApplyHook) -> io::Result<Self> {
        std::fs::create_dir_all(&snapshot_dir)?;
        Ok(StateMachine {
            mvcc,
            snapshot_dir,
            hook,
        })
    }

    fn meta_batch(
        last_applied: &LogIdOf<TypeConfig>,
        membership: Option<&StoredMembershipOf<TypeConfig>>,
    ) -> io::Result<Batch> {
        let mut b = Batch::new();
        b.put(
            Cf::Meta,
            LAST_APPLIED,
            serde_json::to_vec(last_applied).map_err(io_err)?,
        );
        if let Some(m) = membership {
            b.put(Cf::Meta, MEMBERSHIP, serde_json::to_vec(m).map_err(io_err)?);
        }
        Ok(b)
    }

    fn decode_meta(
        last_applied: Option<Vec<u8>>,
        membership: Option<Vec<u8>>,
    ) -> io::Result<(Option<LogIdOf<TypeConfig>>, StoredMembershipOf<TypeConfig>)> {
        let la = last_applied
            .map(|b| serde_json::from_slice(&b))
            .transpose()
            .map_err(invalid)?;
        let m = membership
            .map(|b| serde_json::from_slice(&b))
            .transpose()
            .map_err(invalid)?
            .unwrap_or_default();
        Ok((la, m))
    }

    fn write_snapshot_file(&self, file: &SnapshotFile) -> io::Result<()> {
        let bytes = serde_json::to_vec(file).map_err(io_err)?;
        let index = file.meta.last_log_id.as_ref().map_or(0, |l| l.index());
        let tmp = self
            .snapshot_dir
            .join(format!("{SNAPSHOT_FILE}.{index}.tmp"));
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, self.snapshot_dir.join(SNAPSHOT_FILE))?;
        Ok(())
    }

    fn apply_one(
        &self,
        entry: &openraft::type_config::alias::EntryOf<TypeConfig>,
    ) -> io::Result<Response> {
        let log_id = entry.log_id;
        match &entry.payload {
            EntryPayload::Blank => {
                self.mvcc
                    .write_extra(Self::meta_batch(&log_id, None)?)
                    .map_err(io_err)?;
                Ok(Response::None)
            }
            EntryPayload::Membership(m) => {
                let sm = StoredMembership::new(Some(log_id), m.clone());
                self.mvcc
                    .write_extra(Self::meta_batch(&log_id, Some(&sm))?)
                    .map_err(io_err)?;
                Ok(Response::None)
            }
            EntryPayload::Normal(Command::Txn(txn)) => {
                let (resp, events) = self
                    .mvcc
                    .apply_txn(txn, Self::meta_batch(&log_id, None)?)
                    .map_err(io_err)?;
                if !events.is_empty() {
                    (self.hook)(resp.revision, Some(events));
                }
                Ok(Response::Txn(resp))
            }
            EntryPayload::Normal(Command::Compact(rev)) => {
                let outcome = self
                    .mvcc
                    .compact(*rev, Self::meta_batch(&log_id, None)?)
                    .map_err(io_err)?;
                Ok(Response::Compact(outcome))
            }
        }
    }
}

impl StateMachine {
    /// Seeds a never-used store with `kvs` at `revision` as if a snapshot at log id `log_id`
    /// (membership `membership`) had been installed: state, last-applied, membership, the
    /// log's purge point, and the snapshot file, so that raft starts initialized and sends
    /// this snapshot to replicas that join later.
    pub(crate) fn seed(
        &self,
        log_id: LogIdOf<TypeConfig>,
        membership: StoredMembershipOf<TypeConfig>,
        revision: Revision,
        kvs: Vec<KeyValue>,
    ) -> io::Result<()> {
        let mut extra = Self::meta_batch(&log_id, Some(&membership))?;
        extra.extend(super::log_store::purged_batch(&log_id)?);
        self.mvcc.restore(revision, &kvs, extra).map_err(io_err)?;
        self.mvcc.engine().sync_wal().map_err(io_err)?;
        self.write_snapshot_file(&SnapshotFile {
            meta: SnapshotMetaOf::<TypeConfig> {
                last_log_id: Some(log_id),
                last_membership: membership,
            },
            body: SnapshotBody { revision, kvs },
        })
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    type SnapshotData = Cursor<Vec<u8>>;

    async fn build_snapshot(
        &mut self,
    ) -> Result<SnapshotOf<TypeConfig, Cursor<Vec<u8>>>, io::Error> {
        let exp = self
            .mvcc
            .export(&[LAST_APPLIED, MEMBERSHIP])
            .map_err(io_err)?;
        let mut meta_vals = exp.meta.into_iter();
        let (last_log_id, last_membership) =
            Self::decode_meta(meta_vals.next().flatten(), meta_vals.next().flatten())?;
        let meta = SnapshotMetaOf::<TypeConfig> {
            last_log_id,
            last_membership,
        };
        let file = SnapshotFile {
            meta: meta.clone(),
            body: SnapshotBody {
                revision: exp.revision,
                kvs: exp.kvs,
            },
        };
        self.write_snapshot_file(&file)?;
        let data = serde_json::to_vec(&file.body).map_err(io_err)?;
        Ok(SnapshotOf::<TypeConfig, _> {
            meta,
            snapshot: Cursor::new(data),
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotData = Cursor<Vec<u8>>;
    type SnapshotBuilder = StateMachine;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogIdOf<TypeConfig>>, StoredMembershipOf<TypeConfig>), io::Error> {
        let e = self.mvcc.engine();
        Self::decode_meta(
            e.get(Cf::Meta, LAST_APPLIED).map_err(io_err)?,
            e.get(Cf::Meta, MEMBERSHIP).map_err(io_err)?,
        )
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + OptionalSend,
    {
        while let Some((entry, responder)) = entries.try_next().await? {
            let resp = self.apply_one(&entry)?;
            if let Some(r) = responder {
                r.send(resp);
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMetaOf<TypeConfig>,
        snapshot: Self::SnapshotData,
    ) -> Result<(), io::Error> {
        let body: SnapshotBody = serde_json::from_slice(snapshot.get_ref()).map_err(invalid)?;
        let extra = match &meta.last_log_id {
            Some(l) => Self::meta_batch(l, Some(&meta.last_membership))?,
            None => {
                let mut b = Batch::new();
                b.delete(Cf::Meta, LAST_APPLIED);
                b.put(
                    Cf::Meta,
                    MEMBERSHIP,
                    serde_json::to_vec(&meta.last_membership).map_err(io_err)?,
                );
                b
            }
        };
        self.mvcc
            .restore(body.revision, &body.kvs, extra)
            .map_err(io_err)?;
        self.write_snapshot_file(&SnapshotFile {
            meta: meta.clone(),
            body,
        })?;
        // The state jumped: subscribers must learn that they missed changes.
        (self.hook)(self.mvcc.current_revision(), None);
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<SnapshotOf<TypeConfig, Self::SnapshotData>>, io::Error> {
        let path = self.snapshot_dir.join(SNAPSHOT_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let file: SnapshotFile = serde_json::from_slice(&bytes).map_err(invalid)?;
        let data = serde_json::to_vec(&file.body).map_err(io_err)?;
        Ok(Some(SnapshotOf::<TypeConfig, _> {
            meta: file.meta,
            snapshot: Cursor::new(data),
        }))
    }
}
