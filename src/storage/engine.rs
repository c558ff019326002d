//! RocksDB lifecycle: opening the database with its column families, atomic write
//! batches (optionally fsynced), consistent read views, iteration helpers and checkpoints.
//!
//! This is the only module that names `rocksdb`. It deals in raw bytes only: it does not know
//! what the column families contain (MVCC records, raft log entries, ...), nor anything about
//! Kubernetes or Raft. The byte layout of every column family is documented in
//! `docs/storage-format.md`.

use std::path::Path;
use std::sync::Arc;

use rocksdb::{ColumnFamilyDescriptor, DBRawIterator, Options, ReadOptions, WriteBatch, DB};

use super::Error;

/// The column families of the database. Their contents are owned by other modules
/// (`storage::mvcc` for `Kv`/`Index`/`History`/`Meta`, `raft` for `RaftLog`/`RaftMeta`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cf {
    /// Current state of every live key.
    Kv,
    /// Per-key revision index: every retained version of every key.
    Index,
    /// Revision -> the keys changed at that revision.
    History,
    /// Small state-machine metadata records.
    Meta,
    /// Replicated log entries, keyed by big-endian log index.
    RaftLog,
    /// Log-side metadata (vote, committed, last purged).
    RaftMeta,
}

impl Cf {
    /// All column families, in creation order.
    pub const ALL: [Cf; 6] = [
        Cf::Kv,
        Cf::Index,
        Cf::History,
        Cf::Meta,
        Cf::RaftLog,
        Cf::RaftMeta,
    ];

    /// The RocksDB name of the column family.
    pub fn name(self) -> &'static str {
        match self {
            Cf::Kv => "kv",
            Cf::Index => "index",
            Cf::History => "history",
            Cf::Meta => "meta",
            Cf::RaftLog => "raft_log",
            Cf::RaftMeta => "raft_meta",
        }
    }
}

/// The memtables of all column families together (RocksDB's write buffer manager flushes the
/// largest one above it).
const DB_WRITE_BUFFERS: usize = 48 << 20;

/// The block cache shared by every column family.
const BLOCK_CACHE: usize = 8 << 20;

impl Cf {
    /// Whether point lookups of keys that may be absent are frequent (filters pay off).
    fn point_reads(self) -> bool {
        matches!(self, Cf::Kv)
    }

    /// One memtable's size: the families written on every write (data, index, history, log)
    /// get more than the small metadata ones.
    fn write_buffer_size(self) -> usize {
        match self {
            Cf::Kv | Cf::RaftLog => 16 << 20,
            Cf::Index | Cf::History => 8 << 20,
            Cf::Meta | Cf::RaftMeta => 2 << 20,
        }
    }
}

fn db_err(e: rocksdb::Error) -> Error {
    Error::Storage(e.into_string())
}

/// One buffered mutation of a [`Batch`].
#[derive(Clone, Debug)]
enum BatchOp {
    Put(Cf, Vec<u8>, Vec<u8>),
    Delete(Cf, Vec<u8>),
    DeleteRange(Cf, Vec<u8>, Vec<u8>),
    Clear(Cf),
}

/// A set of mutations applied atomically by [`Engine::write`].
#[derive(Clone, Debug, Default)]
pub struct Batch {
    ops: Vec<BatchOp>,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }
    pub fn put(&mut self, cf: Cf, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        self.ops.push(BatchOp::Put(cf, key.into(), value.into()));
    }
    pub fn delete(&mut self, cf: Cf, key: impl Into<Vec<u8>>) {
        self.ops.push(BatchOp::Delete(cf, key.into()));
    }
    /// Deletes keys in `[from, to)`.
    pub fn delete_range(&mut self, cf: Cf, from: impl Into<Vec<u8>>, to: impl Into<Vec<u8>>) {
        self.ops
            .push(BatchOp::DeleteRange(cf, from.into(), to.into()));
    }
    /// Deletes every key of the column family (whatever the keys' bytes).
    pub fn clear(&mut self, cf: Cf) {
        self.ops.push(BatchOp::Clear(cf));
    }
    /// Appends all of `other`'s mutations after this batch's.
    pub fn extend(&mut self, other: Batch) {
        self.ops.extend(other.ops);
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
}

/// An open database. Cloning is cheap (shared handle); the database closes when the last
/// clone is dropped.
#[derive(Clone)]
pub struct Engine {
    db: Arc<DB>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("path", &self.db.path())
            .finish()
    }
}

impl Engine {
    /// Opens (creating if needed) the database in directory `path` with all column families.
    pub fn open(path: &Path) -> Result<Engine, Error> {
        std::fs::create_dir_all(path)
            .map_err(|e| Error::Storage(format!("create {}: {e}", path.display())))?;
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        if crate::faults::on("lose-unsynced") {
            opts.set_manual_wal_flush(true);
        }
        // Memory: every memtable of every column family together stays under
        // DB_WRITE_BUFFERS (the largest is flushed first), and one small block cache is shared
        // by all of them (RocksDB's defaults are 64 MiB memtables and a cache per family).
        opts.set_db_write_buffer_size(DB_WRITE_BUFFERS);
        opts.set_max_total_wal_size(4 * DB_WRITE_BUFFERS as u64);
        let cache = rocksdb::Cache::new_lru_cache(BLOCK_CACHE).map_err(db_err)?;
        let cfs = Cf::ALL.iter().map(|cf| {
            let mut table = rocksdb::BlockBasedOptions::default();
            table.set_block_cache(&cache);
            if cf.point_reads() {
                // Every write looks its keys up first (compares, the previous value); a
                // create's key is absent, and a filter answers that without reading a block.
                table.set_bloom_filter(10.0, false);
                table.set_whole_key_filtering(true);
            }
            let mut o = Options::default();
            o.set_block_based_table_factory(&table);
            o.set_write_buffer_size(cf.write_buffer_size());
            o.set_max_write_buffer_number(2);
            ColumnFamilyDescriptor::new(cf.name(), o)
        });
        let db = DB::open_cf_descriptors(&opts, path, cfs).map_err(db_err)?;
        Ok(Engine { db: Arc::new(db) })
    }

    fn handle(&self, cf: Cf) -> Result<&rocksdb::ColumnFamily, Error> {
        self.db
            .cf_handle(cf.name())
            .ok_or_else(|| Error::Storage(format!("column family {} missing", cf.name())))
    }

    /// Applies `batch` atomically. With `sync`, the WAL is fsynced before returning.
    pub fn write(&self, batch: Batch, sync: bool) -> Result<(), Error> {
        let mut wb = WriteBatch::default();
        for op in batch.ops {
            match op {
                BatchOp::Put(cf, k, v) => wb.put_cf(self.handle(cf)?, k, v),
                BatchOp::Delete(cf, k) => wb.delete_cf(self.handle(cf)?, k),
                BatchOp::DeleteRange(cf, a, b) => wb.delete_range_cf(self.handle(cf)?, a, b),
                BatchOp::Clear(cf) => {
                    // Everything from the empty key up to and including the last one.
                    if let Some((last, _)) = self.view().last(cf)? {
                        let h = self.handle(cf)?;
                        wb.delete_range_cf(h, &b""[..], &last[..]);
                        wb.delete_cf(h, last);
                    }
                }
            }
        }
        let mut wo = rocksdb::WriteOptions::default();
        wo.set_sync(sync);
        self.db.write_opt(wb, &wo).map_err(db_err)
    }

    /// Number of live handles (clones) of this database; it closes when this drops to 0.
    pub fn handle_count(&self) -> usize {
        Arc::strong_count(&self.db)
    }

    /// Fsyncs the write-ahead log (makes every earlier write durable).
    pub fn sync_wal(&self) -> Result<(), Error> {
        self.db.flush_wal(true).map_err(db_err)
    }

    /// Reads one key from the latest state.
    pub fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        self.db.get_cf(self.handle(cf)?, key).map_err(db_err)
    }

    /// A consistent point-in-time view across all column families.
    pub fn view(&self) -> View<'_> {
        View {
            engine: self,
            snap: self.db.snapshot(),
        }
    }

    /// Creates a RocksDB checkpoint (a consistent, hard-linked copy of the database) in `dir`,
    /// which must not exist yet.
    pub fn checkpoint(&self, dir: &Path) -> Result<(), Error> {
        let cp = rocksdb::checkpoint::Checkpoint::new(&self.db).map_err(db_err)?;
        cp.create_checkpoint(dir).map_err(db_err)
    }
}

/// A key and its value.
pub type Entry = (Vec<u8>, Vec<u8>);

/// A consistent snapshot of the whole database (see [`Engine::view`]).
pub struct View<'a> {
    engine: &'a Engine,
    snap: rocksdb::Snapshot<'a>,
}

impl<'a> View<'a> {
    pub fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        self.snap
            .get_cf(self.engine.handle(cf)?, key)
            .map_err(db_err)
    }

    fn raw_iter(&self, cf: Cf, upper: Option<&[u8]>) -> Result<DBRawIterator<'a>, Error> {
        let mut ro = ReadOptions::default();
        ro.set_snapshot(&self.snap);
        if let Some(u) = upper {
            ro.set_iterate_upper_bound(u.to_vec());
        }
        Ok(self
            .engine
            .db
            .raw_iterator_cf_opt(self.engine.handle(cf)?, ro))
    }

    /// Calls `f(key, value)` for keys in `[from, to)` (no upper bound if `to` is `None`) in
    /// ascending order until `f` returns `false`.
    pub fn scan(
        &self,
        cf: Cf,
        from: &[u8],
        to: Option<&[u8]>,
        mut f: impl FnMut(&[u8], &[u8]) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let mut it = self.raw_iter(cf, to)?;
        it.seek(from);
        while it.valid() {
            let (Some(k), Some(v)) = (it.key(), it.value()) else {
                break;
            };
            if !f(k, v)? {
                return Ok(());
            }
            it.next();
        }
        it.status().map_err(db_err)
    }

    /// The greatest entry whose key is `<= key`, if any.
    pub fn seek_prev(&self, cf: Cf, key: &[u8]) -> Result<Option<Entry>, Error> {
        let mut it = self.raw_iter(cf, None)?;
        it.seek_for_prev(key);
        if it.valid() {
            if let (Some(k), Some(v)) = (it.key(), it.value()) {
                return Ok(Some((k.to_vec(), v.to_vec())));
            }
        }
        it.status().map_err(db_err)?;
        Ok(None)
    }

    /// The last entry of the column family, if any.
    pub fn last(&self, cf: Cf) -> Result<Option<Entry>, Error> {
        let mut it = self.raw_iter(cf, None)?;
        it.seek_to_last();
        if it.valid() {
            if let (Some(k), Some(v)) = (it.key(), it.value()) {
                return Ok(Some((k.to_vec(), v.to_vec())));
            }
        }
        it.status().map_err(db_err)?;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_scan_seek_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        {
            let e = Engine::open(&path).unwrap();
            let mut b = Batch::new();
            for k in ["a", "b", "c", "d"] {
                b.put(Cf::Kv, k.as_bytes(), k.to_uppercase().into_bytes());
            }
            b.put(Cf::Meta, &b"m"[..], &b"1"[..]);
            e.write(b, true).unwrap();
            let view = e.view();
            let mut b = Batch::new();
            b.delete(Cf::Kv, &b"b"[..]);
            b.delete_range(Cf::Kv, &b"c"[..], &b"d"[..]);
            e.write(b, false).unwrap();
            // The view still sees the old state.
            let mut seen = vec![];
            view.scan(Cf::Kv, b"b", Some(b"d"), |k, _| {
                seen.push(k.to_vec());
                Ok(true)
            })
            .unwrap();
            assert_eq!(seen, vec![b"b".to_vec(), b"c".to_vec()]);
            assert_eq!(
                view.seek_prev(Cf::Kv, b"bz").unwrap().unwrap().0,
                b"b".to_vec()
            );
            assert_eq!(view.last(Cf::Kv).unwrap().unwrap().0, b"d".to_vec());
            assert!(view.last(Cf::History).unwrap().is_none());
            drop(view);
            let v2 = e.view();
            let mut seen = vec![];
            v2.scan(Cf::Kv, b"", None, |k, _| {
                seen.push(k.to_vec());
                Ok(true)
            })
            .unwrap();
            assert_eq!(seen, vec![b"a".to_vec(), b"d".to_vec()]);
            e.checkpoint(&dir.path().join("cp")).unwrap();
        }
        let e = Engine::open(&path).unwrap();
        assert_eq!(e.get(Cf::Meta, b"m").unwrap(), Some(b"1".to_vec()));
        assert_eq!(e.get(Cf::Kv, b"b").unwrap(), None);
        let cp = Engine::open(&dir.path().join("cp")).unwrap();
        assert_eq!(cp.get(Cf::Kv, b"a").unwrap(), Some(b"A".to_vec()));
    }

    #[test]
    fn clear_removes_every_key_of_one_family() {
        let dir = tempfile::tempdir().unwrap();
        let e = Engine::open(&dir.path().join("db")).unwrap();
        let mut b = Batch::new();
        for k in [&b""[..], b"\x00", b"a", b"\xff\xff\xff"] {
            b.put(Cf::Kv, k, &b"v"[..]);
        }
        b.put(Cf::Index, &b"keep"[..], &b"v"[..]);
        e.write(b, false).unwrap();
        let mut b = Batch::new();
        b.clear(Cf::Kv);
        b.clear(Cf::History); // empty: nothing to do
        b.put(Cf::Kv, &b"new"[..], &b"1"[..]);
        e.write(b, false).unwrap();
        let mut seen = vec![];
        e.view()
            .scan(Cf::Kv, b"", None, |k, _| {
                seen.push(k.to_vec());
                Ok(true)
            })
            .unwrap();
        assert_eq!(seen, vec![b"new".to_vec()]);
        assert!(e.get(Cf::Index, b"keep").unwrap().is_some());
    }
}
