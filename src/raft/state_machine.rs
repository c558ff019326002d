//! The replicated state machine: applies committed log entries to [`Mvcc`], writing the
//! last-applied log id (and last membership) in the same atomic batch as the data each entry
//! produced; builds and installs snapshots.
//!
//! Apply is deterministic: it never reads a clock or randomness. A snapshot is one file in the
//! snapshot directory: a [`dump`] of the keyspace (live keys, retained history and index, the
//! revision counters, last-applied and membership) taken from one consistent view. It is
//! written and read as a stream, never held in memory, and because it carries the history a
//! replica that installs one keeps the same compaction window as the one that built it.
//! Installing replaces the keyspace in bounded batches: last-applied is cleared first, so a
//! crash half-way makes openraft install the (already renamed, fsynced) file again at start.
//! It knows nothing of how events reach readers (see [`ApplyHook`]).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Seek};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::{Stream, TryStreamExt};
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::type_config::alias::{LogIdOf, SnapshotMetaOf, SnapshotOf, StoredMembershipOf};
use openraft::{EntryPayload, OptionalSend, RaftSnapshotBuilder, StoredMembership};

use super::snapshot_data::{sync_dir, temp_path, SnapshotData, TMP_SUFFIX};
use super::{ApplyHook, Command, Response, TypeConfig};
use crate::storage::dump;
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

/// The raft metadata a snapshot file's dump header carries.
fn snapshot_meta(h: &dump::Header) -> io::Result<SnapshotMetaOf<TypeConfig>> {
    let mut m = h.meta.iter().cloned();
    let (last_log_id, last_membership) = decode_meta(m.next().flatten(), m.next().flatten())?;
    Ok(SnapshotMetaOf::<TypeConfig> {
        last_log_id,
        last_membership,
    })
}

/// RocksDB-backed [`RaftStateMachine`] over the MVCC store. Cloning is cheap.
#[derive(Clone)]
pub struct StateMachine {
    mvcc: Arc<Mvcc>,
    snapshot_dir: PathBuf,
    hook: ApplyHook,
    /// Serializes replacing `current.snap`; holds the log index of the file in place, so an
    /// older snapshot (a build that raced an install) never replaces a newer one.
    current: Arc<Mutex<Option<u64>>>,
    /// Snapshots installed from a leader (not the one re-installed at start).
    installs: Arc<std::sync::atomic::AtomicU64>,
}

impl StateMachine {
    pub fn new(mvcc: Arc<Mvcc>, snapshot_dir: PathBuf, hook: ApplyHook) -> io::Result<Self> {
        std::fs::create_dir_all(&snapshot_dir)?;
        // Leftovers of builds or transfers cut short by a crash.
        for e in std::fs::read_dir(&snapshot_dir)? {
            let p = e?.path();
            if p.to_string_lossy().ends_with(TMP_SUFFIX) {
                let _ = std::fs::remove_file(&p);
            }
        }
        let current = match Self::read_current(&snapshot_dir) {
            Ok(Some((meta, _))) => meta.last_log_id.map(|l| l.index()),
            _ => None,
        };
        Ok(StateMachine {
            mvcc,
            snapshot_dir,
            hook,
            current: Arc::new(Mutex::new(current)),
            installs: Arc::default(),
        })
    }

    /// The count of snapshots installed from a leader.
    pub(crate) fn installs(&self) -> Arc<std::sync::atomic::AtomicU64> {
        self.installs.clone()
    }

    /// The directory snapshots live in (transfers are received into it).
    pub(crate) fn snapshot_dir(&self) -> &Path {
        &self.snapshot_dir
    }

    fn read_current(dir: &Path) -> io::Result<Option<(SnapshotMetaOf<TypeConfig>, SnapshotData)>> {
        let data = match SnapshotData::open(dir.join(SNAPSHOT_FILE)) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let header = match dump::Reader::new(BufReader::new(data.file())) {
            Ok(r) => r.header().clone(),
            Err(e) => {
                // A JSON snapshot of a release before dumps: set aside, so that openraft
                // builds a new one from the (consistent) state machine.
                let mut first = [0u8; 1];
                let mut f = data.file();
                let legacy = f.rewind().is_ok()
                    && io::Read::read(&mut f, &mut first).is_ok()
                    && first[0] == b'{';
                if !legacy {
                    return Err(invalid(e));
                }
                let old = dir.join(format!("{SNAPSHOT_FILE}.json-old"));
                std::fs::rename(dir.join(SNAPSHOT_FILE), &old)?;
                tracing::warn!(
                    "snapshot in the old JSON format moved to {}; a new one is built",
                    old.display()
                );
                return Ok(None);
            }
        };
        Ok(Some((snapshot_meta(&header)?, data)))
    }

    /// Moves the snapshot file at `path` (covering log index `index`) into place, unless a
    /// newer one is there already; fsyncs the directory. Returns the file to read it from.
    fn publish(&self, path: &Path, index: u64) -> io::Result<PathBuf> {
        let cur = self.snapshot_dir.join(SNAPSHOT_FILE);
        if path == cur {
            return Ok(cur);
        }
        let mut g = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_some_and(|c| c > index) {
            return Ok(path.to_path_buf());
        }
        std::fs::rename(path, &cur)?;
        sync_dir(&self.snapshot_dir)?;
        *g = Some(index);
        Ok(cur)
    }

    /// Dumps the keyspace into a new snapshot file and puts it in place (blocking).
    fn write_snapshot(&self) -> io::Result<(SnapshotMetaOf<TypeConfig>, SnapshotData)> {
        let tmp = temp_path(&self.snapshot_dir, "build");
        let built = (|| {
            let mut w = BufWriter::new(File::create(&tmp)?);
            let header = self
                .mvcc
                .dump(&[LAST_APPLIED, MEMBERSHIP], &mut w)
                .map_err(io_err)?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            let meta = snapshot_meta(&header)?;
            let index = meta.last_log_id.as_ref().map_or(0, |l| l.index());
            // Opened before it is (maybe) replaced, so the handle always reads this build.
            let data = SnapshotData::open(tmp.clone())?;
            let path = self.publish(&tmp, index)?;
            Ok((meta, data.at(path)))
        })();
        if tmp.exists() {
            let _ = std::fs::remove_file(&tmp);
        }
        built
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

    /// Replaces the keyspace with the snapshot in `data` (blocking): checks the whole file,
    /// moves it into place, then restores it (see the module docs for crash safety).
    fn install(&self, meta: &SnapshotMetaOf<TypeConfig>, data: SnapshotData) -> io::Result<()> {
        let (path, mut file) = data.into_parts();
        let received = path != self.snapshot_dir.join(SNAPSHOT_FILE);
        let header = dump::verify(BufReader::new(&file)).map_err(invalid)?;
        let claimed = snapshot_meta(&header)?;
        if claimed.last_log_id != meta.last_log_id {
            return Err(invalid(format!(
                "snapshot file covers {:?}, raft says {:?}",
                claimed.last_log_id, meta.last_log_id
            )));
        }
        let index = meta.last_log_id.as_ref().map_or(0, |l| l.index());
        self.publish(&path, index)?;
        file.rewind()?;
        let mut begin = Batch::new();
        begin.delete(Cf::Meta, LAST_APPLIED);
        let end = match &meta.last_log_id {
            Some(l) => Self::meta_batch(l, Some(&meta.last_membership))?,
            None => {
                let mut b = Batch::new();
                b.put(
                    Cf::Meta,
                    MEMBERSHIP,
                    serde_json::to_vec(&meta.last_membership).map_err(io_err)?,
                );
                b
            }
        };
        self.mvcc
            .restore_dump(BufReader::new(file), begin, end)
            .map_err(io_err)?;
        if received {
            self.installs
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    /// Runs a blocking snapshot step off the async workers.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(StateMachine) -> io::Result<T> + Send + 'static,
    ) -> io::Result<T> {
        let sm = self.clone();
        tokio::task::spawn_blocking(move || f(sm))
            .await
            .map_err(io_err)?
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
        self.write_snapshot().map(|_| ())
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    type SnapshotData = SnapshotData;

    async fn build_snapshot(&mut self) -> Result<SnapshotOf<TypeConfig, SnapshotData>, io::Error> {
        let (meta, snapshot) = self.blocking(|sm| sm.write_snapshot()).await?;
        Ok(SnapshotOf::<TypeConfig, _> { meta, snapshot })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotData = SnapshotData;
    type SnapshotBuilder = StateMachine;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogIdOf<TypeConfig>>, StoredMembershipOf<TypeConfig>), io::Error> {
        let e = self.mvcc.engine();
        decode_meta(
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
        let m = meta.clone();
        self.blocking(move |sm| sm.install(&m, snapshot)).await?;
        // The state jumped: subscribers must learn that they missed changes.
        (self.hook)(self.mvcc.current_revision(), None);
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<SnapshotOf<TypeConfig, Self::SnapshotData>>, io::Error> {
        Ok(
            Self::read_current(&self.snapshot_dir)?.map(|(meta, snapshot)| SnapshotOf::<
                TypeConfig,
                _,
            > {
                meta,
                snapshot,
            }),
        )
    }
}
