//! The replicated state machine: applies committed log entries to [`Mvcc`], writing the
//! last-applied log id (and last membership) in the same atomic batch as the data each entry
//! produced; makes and installs snapshots.
//!
//! Apply is deterministic: it never reads a clock or randomness. The state machine is durable
//! by itself, so "building" a snapshot (what lets openraft purge the log) writes nothing: the
//! snapshot is the state at last-applied. A file is made only when a follower needs one: a
//! [`dump`] of the keyspace (live keys, retained history and index, the revision counters,
//! last-applied and membership) from one consistent view, written by its own thread while
//! apply goes on, streamed to the follower and then dropped (unlinked from the start). Its
//! cost is one pass over the data per transfer, not one per `--snapshot-count` entries on
//! every replica. Because it carries the history, a replica that installs one keeps the same
//! compaction window as the one that made it. Installing moves the received file into place
//! (`current.snap`), replaces the keyspace in bounded batches, then removes the file:
//! last-applied is cleared first, so a crash half-way makes openraft install the file again
//! at start. It knows nothing of how events reach readers (see [`ApplyHook`]).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::{Stream, TryStreamExt};
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::type_config::alias::{LogIdOf, SnapshotMetaOf, SnapshotOf, StoredMembershipOf};
use openraft::{EntryPayload, OptionalSend, RaftSnapshotBuilder, StoredMembership};

use super::snapshot_data::{sync_dir, temp_path, SnapshotData, TMP_SUFFIX};
use super::{ApplyHook, Command, Response, TypeConfig};
use crate::storage::dump;
use crate::storage::engine::{Batch, Cf};
use crate::storage::mvcc::{Event, KeyValue, Mvcc, Revision, WriteGroup};

/// `meta` CF keys owned by this module (JSON values).
const LAST_APPLIED: &[u8] = b"raft/last_applied";
const MEMBERSHIP: &[u8] = b"raft/membership";
const SNAPSHOT_FILE: &str = "current.snap";
/// Committed entries applied as one RocksDB batch, at most.
const APPLY_GROUP_MAX: usize = 256;

/// An entry whose writes are in a group's batch, waiting for the batch to be committed.
struct Applied {
    responder: Option<openraft::storage::ApplyResponder<TypeConfig>>,
    resp: Response,
    events: Option<(Revision, Vec<Event>)>,
}

/// `rafter_raft_snapshot_builds_total`, `_build_duration_seconds` (by `kind`: `policy`, the
/// durable state marked as a snapshot; `transfer`, a dump written for a follower) and
/// `rafter_raft_snapshot_size_bytes` (dumps).
fn record_build(kind: &'static str, started: std::time::Instant, size: Option<u64>) {
    metrics::counter!("rafter_raft_snapshot_builds_total", "kind" => kind).increment(1);
    metrics::histogram!("rafter_raft_snapshot_build_duration_seconds", "kind" => kind)
        .record(started.elapsed().as_secs_f64());
    if let Some(n) = size {
        metrics::histogram!("rafter_raft_snapshot_size_bytes").record(n as f64);
    }
}

fn io_err(e: impl ToString) -> io::Error {
    io::Error::other(e.to_string())
}

fn invalid(e: impl ToString) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// The index of the last entry the state machine kept in `mvcc` applied, read from a stopped
/// replica's store (disaster recovery).
pub(crate) fn last_applied_index(mvcc: &Mvcc) -> io::Result<Option<u64>> {
    let (la, _) = decode_meta(
        mvcc.engine().get(Cf::Meta, LAST_APPLIED).map_err(io_err)?,
        None,
    )?;
    Ok(la.map(|l| l.index()))
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
    /// Set once raft has started: from then on a request for the current snapshot is a
    /// transfer and gets a dump (before, openraft only reads its metadata).
    serving: Arc<AtomicBool>,
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
        let sm = StateMachine {
            mvcc,
            snapshot_dir,
            hook,
            serving: Arc::default(),
            installs: Arc::default(),
        };
        // A file left in place is a cut-short install (newer than the state) or, from releases
        // that built a file per snapshot, an old copy of the state: that one goes.
        if let Ok(Some((meta, _))) = Self::read_current(&sm.snapshot_dir) {
            let (applied, _) = sm.applied_meta()?;
            if applied.is_some() && meta.last_log_id <= applied {
                std::fs::remove_file(sm.snapshot_dir.join(SNAPSHOT_FILE))?;
            }
        }
        Ok(sm)
    }

    /// Raft has started: requests for the current snapshot are transfers from now on.
    pub(crate) fn serving(&self) -> Arc<AtomicBool> {
        self.serving.clone()
    }

    /// Last-applied and membership, read together from one view.
    fn applied_meta(
        &self,
    ) -> io::Result<(Option<LogIdOf<TypeConfig>>, StoredMembershipOf<TypeConfig>)> {
        let v = self.mvcc.engine().view();
        decode_meta(
            v.get(Cf::Meta, LAST_APPLIED).map_err(io_err)?,
            v.get(Cf::Meta, MEMBERSHIP).map_err(io_err)?,
        )
    }

    /// The state machine as a snapshot without a file.
    fn state_snapshot(&self) -> io::Result<SnapshotOf<TypeConfig, SnapshotData>> {
        let (last_log_id, last_membership) = self.applied_meta()?;
        Ok(SnapshotOf::<TypeConfig, _> {
            meta: SnapshotMetaOf::<TypeConfig> {
                last_log_id,
                last_membership,
            },
            snapshot: SnapshotData::state_only(),
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
        let path = dir.join(SNAPSHOT_FILE);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let header = match dump::Reader::new(BufReader::new(&file)) {
            Ok(r) => r.header().clone(),
            Err(e) => {
                // A JSON snapshot of a release before dumps: set aside, so that openraft
                // builds a new one from the (consistent) state machine.
                let mut first = [0u8; 1];
                let mut f = &file;
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
        Ok(Some((
            snapshot_meta(&header)?,
            SnapshotData::file(path, file),
        )))
    }

    /// Moves the received snapshot file at `path` into place and fsyncs the directory, so
    /// that a crash during the install finds it at start (a dump made here for a transfer,
    /// already unlinked, is copied). Returns where it now lives.
    fn publish(&self, path: &Path, file: &mut File) -> io::Result<PathBuf> {
        let cur = self.snapshot_dir.join(SNAPSHOT_FILE);
        if path == cur {
            return Ok(cur);
        }
        if path.exists() {
            std::fs::rename(path, &cur)?;
        } else {
            let tmp = temp_path(&self.snapshot_dir, "copy");
            let mut out = File::create(&tmp)?;
            file.rewind()?;
            io::copy(file, &mut out)?;
            out.sync_all()?;
            std::fs::rename(&tmp, &cur)?;
        }
        sync_dir(&self.snapshot_dir)?;
        Ok(cur)
    }

    /// Dumps the keyspace into a file for one transfer (blocking). `meta` is sent the
    /// snapshot's metadata as soon as the dump's view is taken; the file is unlinked at once,
    /// so it goes away with the last handle (or a crash).
    fn dump_for_transfer(
        &self,
        meta: tokio::sync::oneshot::Sender<io::Result<SnapshotMetaOf<TypeConfig>>>,
    ) -> io::Result<SnapshotData> {
        let mut meta = Some(meta);
        let started = std::time::Instant::now();
        let made = (|| -> io::Result<SnapshotData> {
            let tmp = temp_path(&self.snapshot_dir, "send");
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            std::fs::remove_file(&tmp)?;
            let mut w = BufWriter::new(&file);
            self.mvcc
                .dump_with(&[LAST_APPLIED, MEMBERSHIP], &mut w, |h| {
                    if let Some(tx) = meta.take() {
                        let _ = tx.send(snapshot_meta(h));
                    }
                })
                .map_err(io_err)?;
            w.flush()?;
            drop(w);
            let size = file.metadata().map(|m| m.len()).ok();
            record_build("transfer", started, size);
            Ok(SnapshotData::file(tmp, file))
        })();
        if let (Err(e), Some(tx)) = (&made, meta.take()) {
            let _ = tx.send(Err(io::Error::new(e.kind(), e.to_string())));
        }
        made
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

    /// Applies committed entries in order as one [`WriteGroup`]
    /// (one RocksDB batch, with last-applied and membership written once), split around
    /// compactions; answers their proposers and calls the hook only once the batch holding
    /// their writes is committed.
    fn apply_entries(&self, entries: Vec<EntryResponder<TypeConfig>>) -> io::Result<()> {
        let mut done: Vec<Applied> = Vec::with_capacity(entries.len());
        let mut group = self.mvcc.group();
        // The group's last entry, and the membership if one of its entries changed it.
        let mut last: Option<LogIdOf<TypeConfig>> = None;
        let mut membership: Option<StoredMembershipOf<TypeConfig>> = None;
        for (entry, responder) in entries {
            let log_id = entry.log_id;
            let (resp, events) = match &entry.payload {
                EntryPayload::Blank => (Response::None, None),
                EntryPayload::Membership(m) => {
                    membership = Some(StoredMembership::new(Some(log_id), m.clone()));
                    (Response::None, None)
                }
                EntryPayload::Normal(Command::Txn(txn)) => {
                    let (resp, events) = group.txn(txn, Batch::new()).map_err(io_err)?;
                    let events = (!events.is_empty()).then(|| (resp.revision, events));
                    (Response::Txn(resp), events)
                }
                EntryPayload::Normal(Command::Compact(rev)) => {
                    // Compaction reads the committed store: the group goes first.
                    Self::commit(group, last.take(), membership.take())?;
                    self.finish(&mut done);
                    let outcome = self
                        .mvcc
                        .compact(*rev, Self::meta_batch(&log_id, None)?)
                        .map_err(io_err)?;
                    group = self.mvcc.group();
                    done.push(Applied {
                        responder,
                        resp: Response::Compact(outcome),
                        events: None,
                    });
                    continue;
                }
            };
            last = Some(log_id);
            done.push(Applied {
                responder,
                resp,
                events,
            });
        }
        Self::commit(group, last, membership)?;
        self.finish(&mut done);
        Ok(())
    }

    /// Commits `group` with last-applied at `last` (and `membership`, if changed).
    fn commit(
        mut group: WriteGroup<'_>,
        last: Option<LogIdOf<TypeConfig>>,
        membership: Option<StoredMembershipOf<TypeConfig>>,
    ) -> io::Result<()> {
        if let Some(l) = &last {
            group.extra(Self::meta_batch(l, membership.as_ref())?);
        }
        group.commit().map_err(io_err)
    }

    /// Publishes the events of committed entries and answers their proposers, in order.
    fn finish(&self, done: &mut Vec<Applied>) {
        for a in done.drain(..) {
            if let Some((revision, events)) = a.events {
                (self.hook)(revision, Some(events));
            }
            if let Some(r) = a.responder {
                r.send(a.resp);
            }
        }
    }

    /// Replaces the keyspace with the snapshot in `data` (blocking): checks the whole file,
    /// moves it into place, then restores it (see the module docs for crash safety).
    fn install(&self, meta: &SnapshotMetaOf<TypeConfig>, data: SnapshotData) -> io::Result<()> {
        let (path, mut file) = data.into_parts()?;
        let received = path != self.snapshot_dir.join(SNAPSHOT_FILE);
        let header = dump::verify(BufReader::new(&file)).map_err(invalid)?;
        let claimed = snapshot_meta(&header)?;
        if claimed.last_log_id != meta.last_log_id {
            return Err(invalid(format!(
                "snapshot file covers {:?}, raft says {:?}",
                claimed.last_log_id, meta.last_log_id
            )));
        }
        let cur = self.publish(&path, &mut file)?;
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
        // Installed (the last batch was fsynced): the state machine is the snapshot now.
        std::fs::remove_file(&cur)?;
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
        self.mvcc.engine().sync_wal().map_err(io_err)
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    type SnapshotData = SnapshotData;

    /// Nothing to write: the durable state machine at last-applied is the snapshot.
    async fn build_snapshot(&mut self) -> Result<SnapshotOf<TypeConfig, SnapshotData>, io::Error> {
        let started = std::time::Instant::now();
        let s = self.state_snapshot()?;
        record_build("policy", started, None);
        Ok(s)
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotData = SnapshotData;
    type SnapshotBuilder = StateMachine;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogIdOf<TypeConfig>>, StoredMembershipOf<TypeConfig>), io::Error> {
        self.applied_meta()
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + OptionalSend,
    {
        let mut batch = Vec::new();
        while let Some(item) = entries.try_next().await? {
            batch.push(item);
            if batch.len() == APPLY_GROUP_MAX {
                self.apply_entries(std::mem::take(&mut batch))?;
            }
        }
        self.apply_entries(batch)
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
        let snapshot = snapshot.ready().await?;
        self.blocking(move |sm| sm.install(&m, snapshot)).await?;
        // The state jumped: subscribers must learn that they missed changes.
        (self.hook)(self.mvcc.current_revision(), None);
        Ok(())
    }

    /// At start: a cut-short install's file, else the state without a file. Once serving
    /// (a transfer): a dump started on its own thread, answered as soon as its view is taken.
    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<SnapshotOf<TypeConfig, Self::SnapshotData>>, io::Error> {
        if !self.serving.load(Ordering::Acquire) {
            if let Some((meta, snapshot)) = Self::read_current(&self.snapshot_dir)? {
                return Ok(Some(SnapshotOf::<TypeConfig, _> { meta, snapshot }));
            }
            let s = self.state_snapshot()?;
            return Ok(s.meta.last_log_id.is_some().then_some(s));
        }
        let (meta_tx, meta_rx) = tokio::sync::oneshot::channel();
        let (file_tx, file_rx) = tokio::sync::oneshot::channel();
        let sm = self.clone();
        tokio::task::spawn_blocking(move || {
            let _ = file_tx.send(sm.dump_for_transfer(meta_tx));
        });
        let meta = meta_rx
            .await
            .unwrap_or_else(|_| Err(io::Error::other("the snapshot dump ended early")))?;
        if meta.last_log_id.is_none() {
            return Ok(None);
        }
        Ok(Some(SnapshotOf::<TypeConfig, _> {
            meta,
            snapshot: SnapshotData::pending(file_rx),
        }))
    }
}
