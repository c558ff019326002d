//! The raft log on RocksDB: entries in the `raft_log` column family (key = big-endian log
//! index, value = the openraft entry in the peer wire's binary form, `wire::encode`; JSON
//! entries of earlier versions are still read) and the vote / committed log id / last purged
//! log id in `raft_meta` (JSON values). Appends are fsynced before openraft is told they are
//! flushed (the appends written while an fsync runs share the next one), and votes are
//! written with a synced write, so an acknowledged entry or vote
//! survives kill -9.
//!
//! It does not interpret entries (that is the state machine's job) and does not know about
//! the MVCC column families.

use std::fmt::Debug;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::sync::{Arc, Mutex};

use openraft::entry::RaftEntry;
use openraft::storage::{IOFlushed, LogState, RaftLogStorage};
use openraft::type_config::alias::{EntryOf, LogIdOf, VoteOf};
use openraft::{OptionalSend, RaftLogReader};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::TypeConfig;
use crate::storage::engine::{Batch, Cf, Engine};

const VOTE: &[u8] = b"vote";
const COMMITTED: &[u8] = b"committed";
const LAST_PURGED: &[u8] = b"last_purged";

fn io_err(e: impl ToString) -> io::Error {
    io::Error::other(e.to_string())
}

fn idx_key(index: u64) -> [u8; 8] {
    index.to_be_bytes()
}

/// Upper bound past every 8-byte index key.
const END: [u8; 9] = [0xFF; 9];

/// RocksDB-backed [`RaftLogStorage`]. Cloning is cheap.
#[derive(Clone, Debug)]
pub struct LogStore {
    engine: Engine,
    syncer: Arc<Syncer>,
}

/// Coalesces write-ahead-log fsyncs (group commit): the appends written while one fsync
/// runs share the next one, on one blocking thread, instead of one fsync and one thread
/// hand-off each.
#[derive(Default)]
struct Syncer {
    state: Mutex<SyncState>,
}

#[derive(Default)]
struct SyncState {
    /// Appends written, waiting for an fsync that starts after they were.
    waiting: Vec<IOFlushed<TypeConfig>>,
    running: bool,
}

impl Debug for Syncer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Syncer")
    }
}

impl Syncer {
    fn lock(&self) -> std::sync::MutexGuard<'_, SyncState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reports `flushed` once an fsync that started after this call has finished.
    fn flush(self: &Arc<Self>, engine: &Engine, flushed: IOFlushed<TypeConfig>) {
        let start = {
            let mut s = self.lock();
            s.waiting.push(flushed);
            !std::mem::replace(&mut s.running, true)
        };
        if start {
            let (me, engine) = (self.clone(), engine.clone());
            tokio::task::spawn_blocking(move || me.run(&engine));
        }
    }

    fn run(&self, engine: &Engine) {
        loop {
            let batch = {
                let mut s = self.lock();
                if s.waiting.is_empty() {
                    s.running = false;
                    return;
                }
                std::mem::take(&mut s.waiting)
            };
            let r = engine.sync_wal();
            for flushed in batch {
                flushed.io_completed(r.as_ref().map(|_| ()).map_err(io_err));
            }
        }
    }
}

impl LogStore {
    pub fn new(engine: Engine) -> LogStore {
        LogStore {
            engine,
            syncer: Arc::default(),
        }
    }

    fn get_meta<T: DeserializeOwned>(&self, key: &[u8]) -> Result<Option<T>, io::Error> {
        match self.engine.get(Cf::RaftMeta, key).map_err(io_err)? {
            None => Ok(None),
            Some(b) => serde_json::from_slice(&b)
                .map(Some)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
        }
    }

    fn put_meta<T: Serialize>(&self, key: &[u8], v: &T, sync: bool) -> Result<(), io::Error> {
        let b = serde_json::to_vec(v).map_err(io_err)?;
        let mut batch = Batch::new();
        batch.put(Cf::RaftMeta, key, b);
        self.engine.write(batch, sync).map_err(io_err)
    }
}

/// A batch that marks the log as purged through `log_id` (used when seeding a data dir from a
/// backup: the log then starts after the seeded snapshot).
pub(crate) fn purged_batch(log_id: &LogIdOf<TypeConfig>) -> Result<Batch, io::Error> {
    let mut b = Batch::new();
    b.put(
        Cf::RaftMeta,
        LAST_PURGED,
        serde_json::to_vec(log_id).map_err(io_err)?,
    );
    Ok(b)
}

pub(crate) fn decode_entry(b: &[u8]) -> Result<EntryOf<TypeConfig>, io::Error> {
    super::wire::decode(b).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<EntryOf<TypeConfig>>, io::Error> {
        let start = match range.start_bound() {
            Bound::Included(x) => *x,
            Bound::Excluded(x) => x.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let mut out = Vec::new();
        let view = self.engine.view();
        view.scan(Cf::RaftLog, &idx_key(start), None, |_, v| {
            let e = decode_entry(v).map_err(|e| crate::storage::Error::Storage(e.to_string()))?;
            if !range.contains(&e.index()) {
                return Ok(false);
            }
            out.push(e);
            Ok(true)
        })
        .map_err(io_err)?;
        Ok(out)
    }

    async fn read_vote(&mut self) -> Result<Option<VoteOf<TypeConfig>>, io::Error> {
        self.get_meta(VOTE)
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, io::Error> {
        let last_purged: Option<LogIdOf<TypeConfig>> = self.get_meta(LAST_PURGED)?;
        let last = self.engine.view().last(Cf::RaftLog).map_err(io_err)?;
        let last_log_id = match last {
            Some((_, v)) => Some(decode_entry(&v)?.log_id()),
            None => last_purged,
        };
        Ok(LogState {
            last_purged_log_id: last_purged,
            last_log_id,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &VoteOf<TypeConfig>) -> Result<(), io::Error> {
        self.put_meta(VOTE, vote, true)
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogIdOf<TypeConfig>>,
    ) -> Result<(), io::Error> {
        self.put_meta(COMMITTED, &committed, false)
    }

    async fn read_committed(&mut self) -> Result<Option<LogIdOf<TypeConfig>>, io::Error> {
        Ok(self
            .get_meta::<Option<LogIdOf<TypeConfig>>>(COMMITTED)?
            .flatten())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: IOFlushed<TypeConfig>,
    ) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = EntryOf<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = Batch::new();
        for e in entries {
            let v = super::wire::encode(&e).map_err(io_err)?;
            batch.put(Cf::RaftLog, idx_key(e.index()), v);
        }
        // Written (and thus readable) before returning; fsynced before the flush is reported.
        self.engine.write(batch, false).map_err(io_err)?;
        self.syncer.flush(&self.engine, callback);
        Ok(())
    }

    async fn truncate_after(
        &mut self,
        last_log_id: Option<LogIdOf<TypeConfig>>,
    ) -> Result<(), io::Error> {
        let from = last_log_id.map_or(0, |l| l.index().saturating_add(1));
        let mut batch = Batch::new();
        batch.delete_range(Cf::RaftLog, idx_key(from), END);
        self.engine.write(batch, true).map_err(io_err)
    }

    async fn purge(&mut self, log_id: LogIdOf<TypeConfig>) -> Result<(), io::Error> {
        let mut batch = Batch::new();
        batch.put(
            Cf::RaftMeta,
            LAST_PURGED,
            serde_json::to_vec(&log_id).map_err(io_err)?,
        );
        batch.delete_range(
            Cf::RaftLog,
            idx_key(0),
            idx_key(log_id.index().saturating_add(1)),
        );
        self.engine.write(batch, false).map_err(io_err)
    }
}
