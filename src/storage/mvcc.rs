//! etcd-style multi-version keyspace over [`Engine`]: a global revision counter, per-key
//! create/mod revisions and versions, a per-key revision index for reads at past revisions,
//! a revision-ordered change history for event replay, conditional transactions and
//! compaction. Byte layouts are documented in `docs/storage-format.md`.
//!
//! Writes (`apply_txn`, a [`WriteGroup`] of several, `compact`, `restore`) must be called by
//! a single deterministic applier (the replicated state machine); they are serialized by an
//! internal lock anyway. Each write takes an opaque `extra` [`Batch`] that is committed
//! atomically with the write, which is how the caller stores its own bookkeeping (e.g. the
//! last applied log id). Reads may run concurrently with writes; every read uses one consistent RocksDB view.
//!
//! This module deliberately knows nothing of Raft or Kubernetes: keys and values are opaque
//! bytes, and it never reads a clock or randomness.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::dump;
use super::engine::{Batch, Cf, Engine, View};
use super::Error;

/// A global revision of the keyspace (0 = empty store; the first write gets 1).
pub type Revision = i64;

/// Serde helper: byte strings as standard base64 (compact in JSON raft log entries).
mod b64 {
    //! Bytes as base64 strings in human-readable formats (JSON: backups, the admin API) and
    //! as raw bytes in binary ones (the Raft log and peer messages).
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    fn serde_bytes_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
        }
        d.deserialize_byte_buf(Visit)
    }

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        if !s.is_human_readable() {
            return s.serialize_bytes(v);
        }
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        if !d.is_human_readable() {
            return serde_bytes_vec(d);
        }
        let s = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(s.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

/// One version of one key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyValue {
    #[serde(with = "b64")]
    pub key: Vec<u8>,
    #[serde(with = "b64")]
    pub value: Vec<u8>,
    pub create_revision: i64,
    pub mod_revision: i64,
    pub version: i64,
}

/// A transaction guard, evaluated against the current state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Compare {
    /// The key does not exist.
    Absent(#[serde(with = "b64")] Vec<u8>),
    /// The key exists.
    Exists(#[serde(with = "b64")] Vec<u8>),
    /// The key's mod_revision equals the given revision (an absent key has mod_revision 0).
    ModRevision(#[serde(with = "b64")] Vec<u8>, Revision),
    /// No live key in `[start, end)` was written after `rev` (optimistic concurrency over a
    /// whole range, e.g. allocations decided from a list of it).
    RangeUnchangedSince {
        #[serde(with = "b64")]
        start: Vec<u8>,
        #[serde(with = "b64")]
        end: Vec<u8>,
        rev: Revision,
    },
}

impl Compare {
    pub fn key(&self) -> &[u8] {
        match self {
            Compare::Absent(k) | Compare::Exists(k) | Compare::ModRevision(k, _) => k,
            Compare::RangeUnchangedSince { start, .. } => start,
        }
    }
}

/// A write operation of a transaction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Op {
    Put {
        #[serde(with = "b64")]
        key: Vec<u8>,
        #[serde(with = "b64")]
        value: Vec<u8>,
    },
    Delete {
        #[serde(with = "b64")]
        key: Vec<u8>,
    },
}

impl Op {
    pub fn key(&self) -> &[u8] {
        match self {
            Op::Put { key, .. } | Op::Delete { key } => key,
        }
    }
}

/// If all `compares` hold, apply `success` (in order) at one new revision.
///
/// A key touched by several ops sees the earlier ops' effects (`prev` reports each op's
/// predecessor), but history and events record only its net effect at that revision.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Txn {
    pub compares: Vec<Compare>,
    pub success: Vec<Op>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TxnResponse {
    pub succeeded: bool,
    /// Revision at which the txn's writes were committed (succeeded) or the current revision
    /// (failed, or succeeded without any effective change).
    pub revision: Revision,
    /// On failure: the current KeyValue (or None) of each key named in `compares`, in order.
    pub current: Vec<Option<KeyValue>>,
    /// On success: the previous KeyValue (or None) of each key in `success`, in order.
    pub prev: Vec<Option<KeyValue>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Put,
    Delete,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// For Delete: key + mod_revision = deletion revision, empty value, create_revision and
    /// version 0.
    pub kv: KeyValue,
    pub prev_kv: Option<KeyValue>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeResult {
    pub kvs: Vec<KeyValue>,
    pub more: bool,
    /// Number of keys in [start,end) at that revision (only `kvs.len() + more` when the
    /// range was not counted, see [`Mvcc::range_page`]).
    pub count: i64,
    pub revision: Revision,
}

/// A consistent copy of the live keyspace, for state-machine snapshots.
#[derive(Clone, Debug)]
pub struct Export {
    pub revision: Revision,
    pub compacted: Revision,
    pub kvs: Vec<KeyValue>,
    /// Values of the requested `Meta` keys, read from the same view.
    pub meta: Vec<Option<Vec<u8>>>,
}

// ---------------------------------------------------------------------------------------------
// Encodings (see docs/storage-format.md).

const META_REVISION: &[u8] = b"mvcc/revision";
/// The storage format a data folder was written in (absent before formats were marked: 1).
const META_FORMAT: &[u8] = b"mvcc/format";

/// The storage format this build reads and writes (`docs/storage-format.md`). A folder
/// marked with a newer one was written by a newer release: it is refused, never misread.
/// A release that changes the format keeps reading the previous one and writes the new one
/// only once told to (so that a rolling upgrade can be rolled back).
pub const STORAGE_FORMAT: u64 = 1;
const META_COMPACTED: &[u8] = b"mvcc/compacted";
/// History and superseded index entries at or below this revision have been removed (the
/// physical side of compaction, done in bounded steps behind the logical one).
const META_PURGED: &[u8] = b"mvcc/purged";
const TAG_PUT: u8 = b'P';
const TAG_DEL: u8 = b'D';
/// Terminator of an escaped key inside an index key.
const TERM: [u8; 2] = [0x00, 0x01];

fn be(rev: Revision) -> [u8; 8] {
    (rev.max(0) as u64).to_be_bytes()
}

fn read_u64(b: &[u8], at: usize) -> Result<i64, Error> {
    b.get(at..at + 8)
        .and_then(|s| <[u8; 8]>::try_from(s).ok())
        .map(|a| u64::from_be_bytes(a) as i64)
        .ok_or_else(|| corrupt("short integer"))
}

fn corrupt(what: &str) -> Error {
    Error::Storage(format!("corrupt record: {what}"))
}

/// `kv` CF value: create_revision, mod_revision, version (u64 BE each), then the value.
fn encode_kv(kv: &KeyValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + kv.value.len());
    out.extend_from_slice(&be(kv.create_revision));
    out.extend_from_slice(&be(kv.mod_revision));
    out.extend_from_slice(&be(kv.version));
    out.extend_from_slice(&kv.value);
    out
}

fn decode_kv(key: &[u8], b: &[u8]) -> Result<KeyValue, Error> {
    Ok(KeyValue {
        key: key.to_vec(),
        create_revision: read_u64(b, 0)?,
        mod_revision: read_u64(b, 8)?,
        version: read_u64(b, 16)?,
        value: b.get(24..).ok_or_else(|| corrupt("kv"))?.to_vec(),
    })
}

/// Order-preserving, prefix-free key escaping: 0x00 -> 0x00 0xFF, then terminator 0x00 0x01.
fn index_prefix(key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 10);
    for &b in key {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&TERM);
    out
}

fn unescape(prefix: &[u8]) -> Result<Vec<u8>, Error> {
    let body = prefix
        .strip_suffix(&TERM)
        .ok_or_else(|| corrupt("index key terminator"))?;
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        out.push(body[i]);
        if body[i] == 0 {
            if body.get(i + 1) != Some(&0xFF) {
                return Err(corrupt("index key escape"));
            }
            i += 1;
        }
        i += 1;
    }
    Ok(out)
}

fn index_key(key: &[u8], rev: Revision) -> Vec<u8> {
    let mut k = index_prefix(key);
    k.extend_from_slice(&be(rev));
    k
}

/// Splits an index key into (escaped prefix incl. terminator, revision).
fn split_index_key(k: &[u8]) -> Result<(&[u8], Revision), Error> {
    if k.len() < 10 {
        return Err(corrupt("index key"));
    }
    let (p, r) = k.split_at(k.len() - 8);
    Ok((p, read_u64(r, 0)?))
}

/// `index` CF value: 'P' create_revision version value | 'D'.
fn encode_index_put(kv: &KeyValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(17 + kv.value.len());
    out.push(TAG_PUT);
    out.extend_from_slice(&be(kv.create_revision));
    out.extend_from_slice(&be(kv.version));
    out.extend_from_slice(&kv.value);
    out
}

/// Decodes an index entry of `key` at `rev`: `Some(kv)` for a put, `None` for a tombstone.
fn decode_index(key: &[u8], rev: Revision, b: &[u8]) -> Result<Option<KeyValue>, Error> {
    match b.first() {
        Some(&TAG_DEL) => Ok(None),
        Some(&TAG_PUT) => Ok(Some(KeyValue {
            key: key.to_vec(),
            create_revision: read_u64(b, 1)?,
            mod_revision: rev,
            version: read_u64(b, 9)?,
            value: b.get(17..).ok_or_else(|| corrupt("index"))?.to_vec(),
        })),
        _ => Err(corrupt("index tag")),
    }
}

/// `history` CF value: for each change, tag ('P'/'D'), key length (u32 BE), key.
fn encode_history(changes: &[(EventKind, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (kind, key) in changes {
        out.push(if *kind == EventKind::Put {
            TAG_PUT
        } else {
            TAG_DEL
        });
        out.extend_from_slice(&(key.len() as u32).to_be_bytes());
        out.extend_from_slice(key);
    }
    out
}

/// The keys changed at one revision, with the kind of change, in op order.
type Changes = Vec<(EventKind, Vec<u8>)>;

fn decode_history(mut b: &[u8]) -> Result<Changes, Error> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let kind = match b[0] {
            TAG_PUT => EventKind::Put,
            TAG_DEL => EventKind::Delete,
            _ => return Err(corrupt("history tag")),
        };
        let len = b
            .get(1..5)
            .and_then(|s| <[u8; 4]>::try_from(s).ok())
            .map(u32::from_be_bytes)
            .ok_or_else(|| corrupt("history length"))? as usize;
        let key = b.get(5..5 + len).ok_or_else(|| corrupt("history key"))?;
        out.push((kind, key.to_vec()));
        b = &b[5 + len..];
    }
    Ok(out)
}

fn in_range(key: &[u8], start: &[u8], end: &[u8]) -> bool {
    key >= start && (end.is_empty() || key < end)
}

fn tombstone(key: &[u8], rev: Revision) -> KeyValue {
    KeyValue {
        key: key.to_vec(),
        value: Vec::new(),
        create_revision: 0,
        mod_revision: rev,
        version: 0,
    }
}

// ---------------------------------------------------------------------------------------------

/// The MVCC store. See the module docs for the concurrency contract.
pub struct Mvcc {
    engine: Engine,
    current: AtomicI64,
    compacted: AtomicI64,
    purged: AtomicI64,
    /// Set while a dump is being restored (reads are refused: the keyspace is half written).
    restoring: AtomicBool,
    /// Bumped by every restore: a purge step scanned before one is discarded.
    generation: std::sync::atomic::AtomicU64,
    write_lock: Mutex<()>,
}

impl std::fmt::Debug for Mvcc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mvcc")
            .field("current", &self.current_revision())
            .field("compacted", &self.compacted_revision())
            .finish()
    }
}

fn meta_rev(v: Option<Vec<u8>>) -> Result<Revision, Error> {
    match v {
        None => Ok(0),
        Some(b) => read_u64(&b, 0),
    }
}

impl Mvcc {
    /// Loads the revision counters from `engine`.
    pub fn open(engine: Engine) -> Result<Mvcc, Error> {
        match engine.get(Cf::Meta, META_FORMAT)? {
            Some(b) => {
                let f = read_u64(&b, 0)?;
                if u64::try_from(f).map_or(true, |f| f > STORAGE_FORMAT) {
                    return Err(Error::Storage(format!(
                        "the data folder is in storage format {f}, newer than this build's {STORAGE_FORMAT}: it was written by a newer Rafter (run that release, or restore a backup)"
                    )));
                }
            }
            None => {
                let mut b = Batch::new();
                b.put(Cf::Meta, META_FORMAT, STORAGE_FORMAT.to_be_bytes().to_vec());
                engine.write(b, true)?;
            }
        }
        let current = meta_rev(engine.get(Cf::Meta, META_REVISION)?)?;
        let compacted = meta_rev(engine.get(Cf::Meta, META_COMPACTED)?)?;
        // Stores written before incremental compaction purged inside compact itself.
        let purged = match engine.get(Cf::Meta, META_PURGED)? {
            Some(b) => read_u64(&b, 0)?,
            None => compacted,
        };
        Ok(Mvcc {
            engine,
            current: AtomicI64::new(current),
            compacted: AtomicI64::new(compacted),
            purged: AtomicI64::new(purged),
            restoring: AtomicBool::new(false),
            generation: std::sync::atomic::AtomicU64::new(0),
            write_lock: Mutex::new(()),
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The revision of the last effective write (0 for an empty store).
    pub fn current_revision(&self) -> Revision {
        self.current.load(Ordering::SeqCst)
    }

    /// Revisions below this one can no longer be read.
    pub fn compacted_revision(&self) -> Revision {
        self.compacted.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.write_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A consistent view for a read. The flag is checked after the view is taken: a view
    /// taken before a restore's first write is whole, one taken later is refused.
    fn read_view(&self) -> Result<View<'_>, Error> {
        let view = self.engine.view();
        if self.restoring.load(Ordering::SeqCst) {
            return Err(Error::Unavailable(
                "this replica is installing a snapshot".into(),
            ));
        }
        Ok(view)
    }

    /// Reads (current, compacted) from a view and checks `at` against them. Returns the
    /// revision to read at, or `None` for "current".
    fn check_at(view: &View<'_>, at: Option<Revision>) -> Result<(Revision, bool), Error> {
        let current = meta_rev(view.get(Cf::Meta, META_REVISION)?)?;
        let compacted = meta_rev(view.get(Cf::Meta, META_COMPACTED)?)?;
        match at {
            None => Ok((current, true)),
            Some(r) if r > current => Err(Error::FutureRevision {
                requested: r,
                current,
            }),
            Some(r) if r < compacted => Err(Error::Compacted {
                requested: r,
                compacted,
            }),
            Some(r) => Ok((r, r == current)),
        }
    }

    /// The value of `key` now (`at = None`) or as of revision `at`.
    pub fn get(&self, key: &[u8], at: Option<Revision>) -> Result<Option<KeyValue>, Error> {
        let view = self.read_view()?;
        let (rev, is_current) = Self::check_at(&view, at)?;
        if is_current {
            return view
                .get(Cf::Kv, key)?
                .map(|b| decode_kv(key, &b))
                .transpose();
        }
        Self::get_at(&view, key, rev)
    }

    fn get_at(view: &View<'_>, key: &[u8], rev: Revision) -> Result<Option<KeyValue>, Error> {
        if rev <= 0 {
            return Ok(None);
        }
        let prefix = index_prefix(key);
        let mut probe = prefix.clone();
        probe.extend_from_slice(&be(rev));
        match view.seek_prev(Cf::Index, &probe)? {
            Some((k, v)) => {
                let (p, r) = split_index_key(&k)?;
                if p != prefix.as_slice() {
                    return Ok(None);
                }
                decode_index(key, r, &v)
            }
            None => Ok(None),
        }
    }

    /// Keys in `[start, end)` (`end` empty = no upper bound) in key order, at most `limit`
    /// (0 = no limit), now or as of revision `at`.
    pub fn range(
        &self,
        start: &[u8],
        end: &[u8],
        at: Option<Revision>,
        limit: usize,
    ) -> Result<RangeResult, Error> {
        self.range_page(start, end, at, limit, true)
    }

    /// [`Mvcc::range`]; without `count`, the scan stops at the first key past a full page
    /// and `count` is only `kvs.len() + more` (for continue pages whose caller already knows
    /// how many keys remain: a page then costs what it returns).
    /// Calls `f` with every live key in `[start, end)` (an empty `end`: no bound) in key
    /// order, from one consistent view, without collecting them; returns the view's revision.
    pub fn scan_live(
        &self,
        start: &[u8],
        end: &[u8],
        mut f: impl FnMut(KeyValue),
    ) -> Result<Revision, Error> {
        let view = self.read_view()?;
        let (rev, _) = Self::check_at(&view, None)?;
        let upper = (!end.is_empty()).then_some(end);
        view.scan(Cf::Kv, start, upper, |k, v| {
            f(decode_kv(k, v)?);
            Ok(true)
        })?;
        Ok(rev)
    }

    pub fn range_page(
        &self,
        start: &[u8],
        end: &[u8],
        at: Option<Revision>,
        limit: usize,
        count_all: bool,
    ) -> Result<RangeResult, Error> {
        let view = self.read_view()?;
        let (rev, is_current) = Self::check_at(&view, at)?;
        let mut kvs = Vec::new();
        let mut count: i64 = 0;
        let upper = (!end.is_empty()).then_some(end);
        if is_current {
            view.scan(Cf::Kv, start, upper, |k, v| {
                count += 1;
                if limit == 0 || kvs.len() < limit {
                    kvs.push(decode_kv(k, v)?);
                }
                Ok(count_all || limit == 0 || count <= limit as i64)
            })?;
        } else {
            let from = index_prefix(start);
            let to = upper.map(index_prefix);
            // The latest entry (<= rev) of the key group being scanned: decoded while the
            // page still has room, only its tag once it is full (the rest of the range is
            // counted, not read: a continue page costs what it returns plus a tag scan).
            enum Latest {
                None,
                Decoded(Option<KeyValue>),
                Live(bool),
            }
            let mut group: Option<(Vec<u8>, Latest)> = None;
            let full = |kvs: &Vec<KeyValue>| limit > 0 && kvs.len() >= limit;
            let flush =
                |g: Option<(Vec<u8>, Latest)>, kvs: &mut Vec<KeyValue>, count: &mut i64| match g {
                    Some((_, Latest::Decoded(Some(kv)))) => {
                        *count += 1;
                        if limit == 0 || kvs.len() < limit {
                            kvs.push(kv);
                        }
                    }
                    Some((_, Latest::Live(true))) => *count += 1,
                    _ => {}
                };
            view.scan(Cf::Index, &from, to.as_deref(), |k, v| {
                let (p, r) = split_index_key(k)?;
                if group.as_ref().is_none_or(|(gp, _)| gp.as_slice() != p) {
                    flush(group.take(), &mut kvs, &mut count);
                    if !count_all && limit > 0 && count > limit as i64 {
                        return Ok(false);
                    }
                    group = Some((p.to_vec(), Latest::None));
                }
                if r <= rev {
                    let room = !full(&kvs);
                    if let Some((gp, latest)) = group.as_mut() {
                        *latest = if room {
                            let key = unescape(gp)?;
                            Latest::Decoded(decode_index(&key, r, v)?)
                        } else {
                            match v.first() {
                                Some(&TAG_PUT) => Latest::Live(true),
                                Some(&TAG_DEL) => Latest::Live(false),
                                _ => return Err(corrupt("index tag")),
                            }
                        };
                    }
                }
                Ok(true)
            })?;
            flush(group.take(), &mut kvs, &mut count);
        }
        Ok(RangeResult {
            more: count > kvs.len() as i64,
            kvs,
            count,
            revision: rev,
        })
    }

    /// All events with revision > `after` and key in `[start, end)` (`end` empty = no upper
    /// bound), in revision order (and op order within a revision).
    pub fn events_since(
        &self,
        after: Revision,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<Event>, Error> {
        let view = self.read_view()?;
        let compacted = meta_rev(view.get(Cf::Meta, META_COMPACTED)?)?;
        if after < compacted {
            return Err(Error::Compacted {
                requested: after,
                compacted,
            });
        }
        let mut revs: Vec<(Revision, Changes)> = Vec::new();
        view.scan(Cf::History, &be(after.saturating_add(1)), None, |k, v| {
            revs.push((read_u64(k, 0)?, decode_history(v)?));
            Ok(true)
        })?;
        let mut out = Vec::new();
        for (rev, changes) in revs {
            for (kind, key) in changes {
                if !in_range(&key, start, end) {
                    continue;
                }
                let prev_kv = Self::get_at(&view, &key, rev - 1)?;
                let kv = match kind {
                    EventKind::Put => Self::get_at(&view, &key, rev)?
                        .ok_or_else(|| corrupt("history entry without index entry"))?,
                    EventKind::Delete => tombstone(&key, rev),
                };
                out.push(Event { kind, kv, prev_kv });
            }
        }
        Ok(out)
    }

    /// Evaluates and applies a transaction, committing `extra` in the same atomic batch.
    /// Returns the response and the events it produced (empty if nothing changed).
    pub fn apply_txn(&self, txn: &Txn, extra: Batch) -> Result<(TxnResponse, Vec<Event>), Error> {
        let mut group = self.group();
        let out = group.txn(txn, extra)?;
        group.commit()?;
        Ok(out)
    }

    /// Starts a [`WriteGroup`]: several writes evaluated in order and committed as one
    /// atomic batch. Other writers wait until it is committed or dropped.
    pub fn group(&self) -> WriteGroup<'_> {
        let guard = self.lock();
        WriteGroup {
            mvcc: self,
            _guard: guard,
            batch: Batch::new(),
            state: HashMap::new(),
            revision: self.current_revision(),
        }
    }

    /// Compacts history at `rev`: afterwards reads below `rev` and events at or below `rev`
    /// are gone. `extra` is committed whatever the outcome. The outer error is an I/O failure;
    /// the inner one a rejected request (`rev` already compacted or in the future).
    pub fn compact(&self, rev: Revision, extra: Batch) -> Result<Result<(), Error>, Error> {
        let _g = self.lock();
        let current = self.current_revision();
        let compacted = self.compacted_revision();
        let rejected = if rev <= compacted {
            Some(Error::Compacted {
                requested: rev,
                compacted,
            })
        } else if rev > current {
            Some(Error::FutureRevision {
                requested: rev,
                current,
            })
        } else {
            None
        };
        if let Some(e) = rejected {
            if !extra.is_empty() {
                self.engine.write(extra, false)?;
            }
            return Ok(Err(e));
        }
        // Logical compaction only: reads below `rev` are refused from now on; the history
        // and superseded index entries go in bounded steps ([`Mvcc::purge_step`]) so that
        // apply never waits behind a whole compaction.
        let mut batch = Batch::new();
        batch.put(Cf::Meta, META_COMPACTED, be(rev));
        // Recorded with the compaction: an absent purge mark means "all purged" (stores of
        // releases that purged inside compact), which would forget this purge on restart.
        batch.put(
            Cf::Meta,
            META_PURGED,
            be(self.purged.load(Ordering::SeqCst)),
        );
        batch.extend(extra);
        self.engine.write(batch, false)?;
        self.compacted.store(rev, Ordering::SeqCst);
        Ok(Ok(()))
    }

    /// Whether compacted history is still waiting to be removed.
    pub fn needs_purge(&self) -> bool {
        self.purged.load(Ordering::SeqCst) < self.compacted_revision()
    }

    /// Removes, in one bounded batch, at most about `budget` index entries that compaction
    /// superseded (all but the latest put at or below the compacted revision of each key
    /// the compacted revisions touched), and the history of the revisions it finished.
    /// Returns whether more remains. The scan runs on a view without the write lock; only
    /// the (bounded) batch is written under it, so apply never waits behind a purge. Reads
    /// are unaffected: nothing at or above the compacted revision goes.
    pub fn purge_step(&self, budget: usize) -> Result<bool, Error> {
        let budget = budget.max(1);
        let generation = self.generation.load(Ordering::SeqCst);
        let compacted = self.compacted_revision();
        let purged = self.purged.load(Ordering::SeqCst);
        if purged >= compacted {
            return Ok(false);
        }
        let view = match self.read_view() {
            Ok(v) => v,
            Err(Error::Unavailable(_)) => return Ok(true),
            Err(e) => return Err(e),
        };
        let mut deletes: Vec<Vec<u8>> = Vec::new();
        let mut seen = HashSet::new();
        // Revisions whose keys are all handled: their history can go.
        let mut upto = purged;
        let mut cut_short = false;
        view.scan(
            Cf::History,
            &be(purged + 1),
            Some(&be(compacted + 1)),
            |k, v| {
                let rev = read_u64(k, 0)?;
                for (_, key) in decode_history(v)? {
                    if !seen.insert(key.clone()) {
                        continue;
                    }
                    let room = budget.saturating_sub(deletes.len());
                    let prefix = index_prefix(&key);
                    let mut to = prefix.clone();
                    to.extend_from_slice(&be(compacted + 1));
                    // Up to one entry more than there is room for: if there are more, the
                    // first `room` are certainly not the latest and go now, the rest later.
                    let mut entries: Vec<(Vec<u8>, bool)> = Vec::new();
                    view.scan(Cf::Index, &prefix, Some(&to), |ik, iv| {
                        entries.push((ik.to_vec(), iv.first() == Some(&TAG_PUT)));
                        Ok(entries.len() <= room)
                    })?;
                    if entries.len() > room {
                        deletes.extend(entries.into_iter().take(room).map(|(k, _)| k));
                        cut_short = true;
                        return Ok(false);
                    }
                    let keep_last = entries.last().is_some_and(|(_, is_put)| *is_put);
                    let n = entries.len() - usize::from(keep_last);
                    deletes.extend(entries.into_iter().take(n).map(|(k, _)| k));
                }
                upto = rev;
                Ok(deletes.len() < budget)
            },
        )?;
        drop(view);
        if !cut_short && deletes.len() < budget {
            upto = compacted;
        }
        let _g = self.lock();
        if self.generation.load(Ordering::SeqCst) != generation {
            // A restore replaced the keyspace since the scan: start again from its state.
            return Ok(self.needs_purge());
        }
        let mut batch = Batch::new();
        for k in deletes {
            batch.delete(Cf::Index, k);
        }
        if upto > purged {
            batch.delete_range(Cf::History, be(purged + 1), be(upto + 1));
            batch.put(Cf::Meta, META_PURGED, be(upto));
        }
        if !batch.is_empty() {
            self.engine.write(batch, false)?;
        }
        self.purged.store(upto, Ordering::SeqCst);
        Ok(upto < compacted)
    }

    /// A consistent copy of the live keyspace plus the values of `meta_keys` (Meta CF).
    pub fn export(&self, meta_keys: &[&[u8]]) -> Result<Export, Error> {
        let view = self.read_view()?;
        let revision = meta_rev(view.get(Cf::Meta, META_REVISION)?)?;
        let compacted = meta_rev(view.get(Cf::Meta, META_COMPACTED)?)?;
        let mut kvs = Vec::new();
        view.scan(Cf::Kv, b"", None, |k, v| {
            kvs.push(decode_kv(k, v)?);
            Ok(true)
        })?;
        let meta = meta_keys
            .iter()
            .map(|k| view.get(Cf::Meta, k))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Export {
            revision,
            compacted,
            kvs,
            meta,
        })
    }

    /// Writes a dump ([`dump`]) of the keyspace — live keys, retained history and index, the
    /// revision counters and the values of `meta_keys` — from one consistent view, in
    /// bounded memory. Returns the dump's header.
    pub fn dump(&self, meta_keys: &[&[u8]], out: impl Write) -> Result<dump::Header, Error> {
        self.dump_with(meta_keys, out, |_| {})
    }

    /// [`Self::dump`], calling `on_header` with the header as soon as the view is taken
    /// (before the data is written).
    pub fn dump_with(
        &self,
        meta_keys: &[&[u8]],
        out: impl Write,
        on_header: impl FnOnce(&dump::Header),
    ) -> Result<dump::Header, Error> {
        let view = self.read_view()?;
        let meta = meta_keys
            .iter()
            .map(|k| view.get(Cf::Meta, k))
            .collect::<Result<Vec<_>, _>>()?;
        let revision = meta_rev(view.get(Cf::Meta, META_REVISION)?)?;
        let compacted = meta_rev(view.get(Cf::Meta, META_COMPACTED)?)?;
        let purged = match view.get(Cf::Meta, META_PURGED)? {
            Some(b) => read_u64(&b, 0)?,
            None => compacted,
        };
        let header = dump::Header {
            revision,
            compacted,
            purged: purged.min(compacted),
            meta,
        };
        on_header(&header);
        let mut w = dump::Writer::new(out, &header)?;
        for cf in dump::dumped_cfs() {
            view.scan(cf, b"", None, |k, v| {
                w.record(cf, k, v)?;
                Ok(true)
            })?;
        }
        w.finish()?;
        Ok(header)
    }

    /// Replaces the whole keyspace with a dump read from `input`, in bounded batches: the
    /// first commits `begin` with the clearing of the old keyspace, the last one (fsynced)
    /// the counters with `end`. Reads are refused in between; if this fails half-way, they
    /// stay refused (the keyspace is incomplete until a restore succeeds). The input should
    /// have been checked with [`dump::verify`] first: a corrupt dump is only noticed at its
    /// end.
    pub fn restore_dump(
        &self,
        input: impl Read,
        begin: Batch,
        end: Batch,
    ) -> Result<dump::Header, Error> {
        /// Bytes buffered before a batch is written.
        const BATCH_BYTES: usize = 4 << 20;
        let _g = self.lock();
        let mut r = dump::Reader::new(input)?;
        self.restoring.store(true, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
        let mut batch = Batch::new();
        for cf in dump::dumped_cfs() {
            batch.clear(cf);
        }
        batch.extend(begin);
        self.engine.write(batch, false)?;
        let mut batch = Batch::new();
        let mut bytes = 0;
        while let Some((cf, k, v)) = r.next()? {
            bytes += k.len() + v.len() + 16;
            batch.put(cf, k, v);
            if bytes >= BATCH_BYTES {
                self.engine.write(std::mem::take(&mut batch), false)?;
                bytes = 0;
            }
        }
        let h = r.header().clone();
        batch.put(Cf::Meta, META_REVISION, be(h.revision));
        batch.put(Cf::Meta, META_COMPACTED, be(h.compacted));
        batch.put(Cf::Meta, META_PURGED, be(h.purged));
        batch.extend(end);
        self.engine.write(batch, true)?;
        self.current.store(h.revision, Ordering::SeqCst);
        self.compacted.store(h.compacted, Ordering::SeqCst);
        self.purged.store(h.purged, Ordering::SeqCst);
        self.restoring.store(false, Ordering::SeqCst);
        Ok(h)
    }

    /// Replaces the whole keyspace with `kvs` at `revision` (history is not restored, so the
    /// compacted revision becomes `revision`), committing `extra` in the same batch.
    pub fn restore(&self, revision: Revision, kvs: &[KeyValue], extra: Batch) -> Result<(), Error> {
        let _g = self.lock();
        self.generation.fetch_add(1, Ordering::SeqCst);
        let mut batch = Batch::new();
        for cf in dump::dumped_cfs() {
            batch.clear(cf);
        }
        for kv in kvs {
            if kv.mod_revision > revision || kv.mod_revision <= 0 {
                return Err(corrupt("snapshot key newer than snapshot revision"));
            }
            batch.put(Cf::Kv, kv.key.clone(), encode_kv(kv));
            batch.put(
                Cf::Index,
                index_key(&kv.key, kv.mod_revision),
                encode_index_put(kv),
            );
        }
        batch.put(Cf::Meta, META_REVISION, be(revision));
        batch.put(Cf::Meta, META_COMPACTED, be(revision));
        batch.put(Cf::Meta, META_PURGED, be(revision));
        batch.extend(extra);
        self.engine.write(batch, false)?;
        self.current.store(revision, Ordering::SeqCst);
        self.compacted.store(revision, Ordering::SeqCst);
        self.purged.store(revision, Ordering::SeqCst);
        Ok(())
    }
}

/// Transactions evaluated one after another against the store plus the writes of the
/// group's earlier transactions, and committed as one RocksDB batch by [`WriteGroup::commit`]
/// (one write-ahead-log append, one memtable pass). Nothing is visible to readers, and the
/// current revision does not move, until then; a group dropped without a commit writes
/// nothing. Holds the store's write lock.
pub struct WriteGroup<'a> {
    mvcc: &'a Mvcc,
    _guard: std::sync::MutexGuard<'a, ()>,
    batch: Batch,
    /// Keys written by this group: their state now (`None` = deleted).
    state: HashMap<Vec<u8>, Option<KeyValue>>,
    /// The revision of the group's last effective write.
    revision: Revision,
}

impl WriteGroup<'_> {
    /// The current value of `key`, this group's writes included.
    fn get(&self, k: &[u8]) -> Result<Option<KeyValue>, Error> {
        if let Some(s) = self.state.get(k) {
            return Ok(s.clone());
        }
        self.mvcc
            .engine
            .get(Cf::Kv, k)?
            .map(|b| decode_kv(k, &b))
            .transpose()
    }

    /// Whether no live key in `[start, end)` was modified after `rev`.
    fn range_unchanged_since(
        &self,
        start: &[u8],
        end: &[u8],
        rev: Revision,
    ) -> Result<bool, Error> {
        let mut unchanged = true;
        self.mvcc
            .engine
            .view()
            .scan(Cf::Kv, start, Some(end), |k, v| {
                if !self.state.contains_key(k) {
                    unchanged &= decode_kv(k, v)?.mod_revision <= rev;
                }
                Ok(unchanged)
            })?;
        Ok(unchanged
            && self.state.iter().all(|(k, s)| {
                let inside = k.as_slice() >= start && k.as_slice() < end;
                !inside || s.as_ref().is_none_or(|kv| kv.mod_revision <= rev)
            }))
    }

    /// Adds `extra` to the group's batch.
    pub fn extra(&mut self, extra: Batch) {
        self.batch.extend(extra);
    }

    /// Evaluates `txn` after the group's earlier transactions, adding its writes and `extra`
    /// to the group. Returns the response and the events it produced (empty if nothing
    /// changed); they hold once the group is committed.
    pub fn txn(&mut self, txn: &Txn, extra: Batch) -> Result<(TxnResponse, Vec<Event>), Error> {
        let current = self.revision;
        let mut ok = true;
        let mut cur_of_compares = Vec::with_capacity(txn.compares.len());
        // What the compares read, for the ops on the same keys.
        let mut read: Vec<(&[u8], Option<KeyValue>)> = Vec::with_capacity(txn.compares.len());
        for c in &txn.compares {
            if let Compare::RangeUnchangedSince { start, end, rev } = c {
                ok &= self.range_unchanged_since(start, end, *rev)?;
                cur_of_compares.push(None);
                continue;
            }
            let cur = self.get(c.key())?;
            read.push((c.key(), cur.clone()));
            ok &= match c {
                Compare::Absent(_) => cur.is_none(),
                Compare::Exists(_) => cur.is_some(),
                Compare::ModRevision(_, r) => cur.as_ref().map_or(0, |kv| kv.mod_revision) == *r,
                Compare::RangeUnchangedSince { .. } => true,
            };
            cur_of_compares.push(cur);
        }
        if !ok {
            self.batch.extend(extra);
            return Ok((
                TxnResponse {
                    succeeded: false,
                    revision: current,
                    current: cur_of_compares,
                    prev: Vec::new(),
                },
                Vec::new(),
            ));
        }
        let rev = current + 1;
        // Per changed key: (state before the txn, state now), in first-touch order.
        let mut order: Vec<Vec<u8>> = Vec::new();
        let mut states: HashMap<Vec<u8>, (Option<KeyValue>, Option<KeyValue>)> = HashMap::new();
        let mut prev = Vec::with_capacity(txn.success.len());
        for op in &txn.success {
            let key = op.key();
            if !states.contains_key(key) {
                let orig = match read.iter().find(|(k, _)| *k == key) {
                    Some((_, v)) => v.clone(),
                    None => self.get(key)?,
                };
                states.insert(key.to_vec(), (orig.clone(), orig));
                order.push(key.to_vec());
            }
            let Some((_, now)) = states.get_mut(key) else {
                continue;
            };
            prev.push(now.clone());
            match op {
                Op::Put { value, .. } => {
                    let (create_revision, version) = match now.as_ref() {
                        Some(kv) => (kv.create_revision, kv.version + 1),
                        None => (rev, 1),
                    };
                    *now = Some(KeyValue {
                        key: key.to_vec(),
                        value: value.clone(),
                        create_revision,
                        mod_revision: rev,
                        version,
                    });
                }
                Op::Delete { .. } => *now = None,
            }
        }
        let mut changes = Vec::new();
        let mut events = Vec::new();
        for key in order {
            let Some((orig, now)) = states.remove(&key) else {
                continue;
            };
            match now {
                Some(kv) => {
                    self.batch.put(Cf::Kv, key.clone(), encode_kv(&kv));
                    self.batch
                        .put(Cf::Index, index_key(&key, rev), encode_index_put(&kv));
                    self.state.insert(key.clone(), Some(kv.clone()));
                    changes.push((EventKind::Put, key));
                    events.push(Event {
                        kind: EventKind::Put,
                        kv,
                        prev_kv: orig,
                    });
                }
                None if orig.is_some() => {
                    self.batch.delete(Cf::Kv, key.clone());
                    self.batch
                        .put(Cf::Index, index_key(&key, rev), vec![TAG_DEL]);
                    self.state.insert(key.clone(), None);
                    events.push(Event {
                        kind: EventKind::Delete,
                        kv: tombstone(&key, rev),
                        prev_kv: orig,
                    });
                    changes.push((EventKind::Delete, key));
                }
                None => {}
            }
        }
        let revision = if changes.is_empty() {
            current
        } else {
            self.batch
                .put(Cf::History, be(rev), encode_history(&changes));
            rev
        };
        self.batch.extend(extra);
        self.revision = revision;
        Ok((
            TxnResponse {
                succeeded: true,
                revision,
                current: Vec::new(),
                prev,
            },
            events,
        ))
    }

    /// Writes the group's batch (not fsynced), with the revision counter once for all its
    /// transactions, and moves the current revision.
    pub fn commit(mut self) -> Result<(), Error> {
        if self.revision != self.mvcc.current_revision() {
            self.batch.put(Cf::Meta, META_REVISION, be(self.revision));
        }
        if !self.batch.is_empty() {
            self.mvcc.engine.write(self.batch, false)?;
        }
        self.mvcc.current.store(self.revision, Ordering::SeqCst);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Mvcc) {
        let dir = tempfile::tempdir().unwrap();
        let e = Engine::open(&dir.path().join("db")).unwrap();
        (dir, Mvcc::open(e).unwrap())
    }

    fn put(k: &str, v: &str) -> Op {
        Op::Put {
            key: k.into(),
            value: v.into(),
        }
    }
    fn del(k: &str) -> Op {
        Op::Delete { key: k.into() }
    }
    fn txn(compares: Vec<Compare>, success: Vec<Op>) -> Txn {
        Txn { compares, success }
    }
    fn run(s: &Mvcc, t: Txn) -> TxnResponse {
        s.apply_txn(&t, Batch::new()).unwrap().0
    }
    fn kv(k: &str, v: &str, c: i64, m: i64, ver: i64) -> KeyValue {
        KeyValue {
            key: k.into(),
            value: v.into(),
            create_revision: c,
            mod_revision: m,
            version: ver,
        }
    }
    /// (key, value, create, mod, version) of a get, or None.
    fn g(s: &Mvcc, k: &str, at: Option<i64>) -> Option<(String, i64, i64, i64)> {
        s.get(k.as_bytes(), at).unwrap().map(|kv| {
            (
                String::from_utf8(kv.value).unwrap(),
                kv.create_revision,
                kv.mod_revision,
                kv.version,
            )
        })
    }
    fn g_(s: &Mvcc, k: &str) -> Option<(String, i64, i64, i64)> {
        g(s, k, None)
    }
    fn keys(r: &RangeResult) -> Vec<String> {
        r.kvs
            .iter()
            .map(|kv| String::from_utf8(kv.key.clone()).unwrap())
            .collect()
    }

    /// A data folder is marked with the storage format; one marked newer is refused.
    #[test]
    fn a_newer_storage_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        drop(Mvcc::open(Engine::open(&path).unwrap()).unwrap());
        let e = Engine::open(&path).unwrap();
        assert_eq!(
            e.get(Cf::Meta, META_FORMAT).unwrap(),
            Some(STORAGE_FORMAT.to_be_bytes().to_vec())
        );
        let mut b = Batch::new();
        b.put(
            Cf::Meta,
            META_FORMAT,
            (STORAGE_FORMAT + 1).to_be_bytes().to_vec(),
        );
        e.write(b, true).unwrap();
        let err = Mvcc::open(e).err().expect("refused").to_string();
        assert!(err.contains("newer than this build's"), "{err}");
    }

    /// A pseudo-random mix of creates, updates, deletes, guarded writes and range guards over
    /// a few keys: applied one transaction per batch, and as groups of every size, the store
    /// ends byte-identical (dump) with the same responses and events.
    #[test]
    fn grouped_transactions_match_one_by_one() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let keys = ["a", "b", "c", "d"];
        let mut txns = Vec::new();
        for i in 0..300 {
            let k = keys[next(4) as usize];
            let k2 = keys[next(4) as usize];
            let op = if next(4) == 0 {
                del(k)
            } else {
                put(k, &format!("v{i}"))
            };
            let compares = match next(6) {
                0 => vec![Compare::Absent(k.into())],
                1 => vec![Compare::Exists(k.into())],
                2 => vec![Compare::ModRevision(k2.into(), next(i + 1) as i64)],
                3 => vec![Compare::RangeUnchangedSince {
                    start: "a".into(),
                    end: "c".into(),
                    rev: next(i + 1) as i64,
                }],
                _ => vec![],
            };
            let success = if next(3) == 0 {
                vec![op, put(k2, "second"), del(k2)]
            } else {
                vec![op]
            };
            txns.push(txn(compares, success));
        }
        let dump = |s: &Mvcc| {
            let mut out = Vec::new();
            s.dump(&[], &mut out).unwrap();
            out
        };
        let (_d1, one) = store();
        let expected: Vec<_> = txns
            .iter()
            .map(|t| one.apply_txn(t, Batch::new()).unwrap())
            .collect();
        let reference = dump(&one);
        for size in [2, 3, 7, 300] {
            let (_d, grouped) = store();
            let mut got = Vec::new();
            for chunk in txns.chunks(size) {
                let mut g = grouped.group();
                for t in chunk {
                    got.push(g.txn(t, Batch::new()).unwrap());
                }
                g.commit().unwrap();
            }
            assert_eq!(got.len(), expected.len());
            for (i, (a, b)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(
                    format!("{:?}", a.0),
                    format!("{:?}", b.0),
                    "response {i}, groups of {size}"
                );
                assert_eq!(a.1, b.1, "events {i}, groups of {size}");
            }
            assert_eq!(grouped.current_revision(), one.current_revision());
            assert!(dump(&grouped) == reference, "store after groups of {size}");
        }
    }

    #[test]
    fn a_group_is_invisible_until_committed() {
        let (_d, s) = store();
        run(&s, txn(vec![], vec![put("a", "1")]));
        let mut g = s.group();
        let (r, _) = g
            .txn(
                &txn(vec![Compare::Exists("a".into())], vec![put("a", "2")]),
                Batch::new(),
            )
            .unwrap();
        assert_eq!(r.revision, 2);
        let (r, _) = g
            .txn(
                &txn(
                    vec![Compare::ModRevision("a".into(), 2)],
                    vec![put("b", "x")],
                ),
                Batch::new(),
            )
            .unwrap();
        assert!(r.succeeded, "the group's own write is seen");
        assert_eq!(s.current_revision(), 1);
        drop(g);
        assert_eq!(s.current_revision(), 1);
        assert_eq!(g_(&s, "a"), Some(("1".into(), 1, 1, 1)));
        assert_eq!(g_(&s, "b"), None, "a dropped group writes nothing");
        let mut g = s.group();
        g.txn(&txn(vec![], vec![put("a", "3")]), Batch::new())
            .unwrap();
        g.commit().unwrap();
        assert_eq!(s.current_revision(), 2);
        assert_eq!(g_(&s, "a"), Some(("3".into(), 1, 2, 2)));
    }

    #[test]
    fn key_escaping_preserves_order_and_roundtrips() {
        let ks: Vec<&[u8]> = vec![
            b"",
            b"\x00",
            b"\x00\x00",
            b"\x00\x01",
            b"a",
            b"a\x00",
            b"ab",
        ];
        for w in ks.windows(2) {
            assert!(index_key(w[0], 99) < index_key(w[1], 1), "{:?}", w);
        }
        for k in ks {
            let ik = index_key(k, 7);
            let (p, r) = split_index_key(&ik).unwrap();
            assert_eq!((unescape(p).unwrap(), r), (k.to_vec(), 7));
        }
    }

    #[test]
    fn revisions_versions_and_recreate() {
        let (_d, s) = store();
        assert_eq!(s.current_revision(), 0);
        // (op, expected response revision, expected get after: value, create, mod, version)
        let cases: Vec<(Op, i64, Option<(&str, i64, i64, i64)>)> = vec![
            (put("a", "1"), 1, Some(("1", 1, 1, 1))),
            (put("a", "2"), 2, Some(("2", 1, 2, 2))),
            (put("a", "3"), 3, Some(("3", 1, 3, 3))),
            (del("a"), 4, None),
            (del("a"), 4, None), // deleting an absent key changes nothing
            (put("a", "4"), 5, Some(("4", 5, 5, 1))),
        ];
        for (i, (op, rev, want)) in cases.into_iter().enumerate() {
            let r = run(&s, txn(vec![], vec![op]));
            assert!(r.succeeded);
            assert_eq!(r.revision, rev, "case {i}");
            assert_eq!(s.current_revision(), rev, "case {i}");
            let want = want.map(|(v, c, m, ver)| (v.to_string(), c, m, ver));
            assert_eq!(g(&s, "a", None), want, "case {i}");
        }
    }

    #[test]
    fn txn_compares() {
        let (_d, s) = store();
        run(&s, txn(vec![], vec![put("x", "1")])); // rev 1
        run(&s, txn(vec![], vec![put("x", "2")])); // rev 2
                                                   // (compare, succeeds?)
        let cases = vec![
            (Compare::Absent("x".into()), false),
            (Compare::Absent("y".into()), true),
            (Compare::Exists("x".into()), true),
            (Compare::Exists("y".into()), false),
            (Compare::ModRevision("x".into(), 2), true),
            (Compare::ModRevision("x".into(), 1), false),
            (Compare::ModRevision("y".into(), 0), true),
            (Compare::ModRevision("y".into(), 2), false),
            // x was last written at 2: unchanged since 2, changed since 1.
            (
                Compare::RangeUnchangedSince {
                    start: "x".into(),
                    end: "y".into(),
                    rev: 2,
                },
                true,
            ),
            (
                Compare::RangeUnchangedSince {
                    start: "w".into(),
                    end: "y".into(),
                    rev: 1,
                },
                false,
            ),
            (
                Compare::RangeUnchangedSince {
                    start: "a".into(),
                    end: "b".into(),
                    rev: 0,
                },
                true,
            ),
        ];
        for (i, (c, want)) in cases.into_iter().enumerate() {
            let before = s.current_revision();
            let r = run(&s, txn(vec![c], vec![put("z", &i.to_string())]));
            assert_eq!(r.succeeded, want, "case {i}");
            if want {
                assert_eq!(r.revision, before + 1);
                assert!(r.current.is_empty());
            } else {
                assert_eq!(r.revision, before, "failed compare does not bump");
                assert_eq!(s.current_revision(), before);
                assert!(r.prev.is_empty());
            }
        }
    }

    #[test]
    fn failed_compare_returns_current_and_success_returns_prev() {
        let (_d, s) = store();
        run(&s, txn(vec![], vec![put("a", "1")]));
        let r = run(
            &s,
            txn(
                vec![Compare::Absent("a".into()), Compare::Exists("b".into())],
                vec![put("a", "2")],
            ),
        );
        assert!(!r.succeeded);
        assert_eq!(r.current, vec![Some(kv("a", "1", 1, 1, 1)), None]);
        let r = run(
            &s,
            txn(vec![], vec![put("a", "2"), put("b", "1"), del("a")]),
        );
        assert!(r.succeeded);
        assert_eq!(r.revision, 2);
        assert_eq!(
            r.prev,
            vec![
                Some(kv("a", "1", 1, 1, 1)),
                None,
                Some(kv("a", "2", 1, 2, 2))
            ]
        );
        assert_eq!(g(&s, "a", None), None);
        assert_eq!(g(&s, "b", None), Some(("1".into(), 2, 2, 1)));
        // Net effects: a deleted at 2 (prev = the state before the txn), b created.
        let ev = s.events_since(1, b"", b"").unwrap();
        assert_eq!(
            ev,
            vec![
                Event {
                    kind: EventKind::Delete,
                    kv: tombstone(b"a", 2),
                    prev_kv: Some(kv("a", "1", 1, 1, 1)),
                },
                Event {
                    kind: EventKind::Put,
                    kv: kv("b", "1", 2, 2, 1),
                    prev_kv: None,
                },
            ]
        );
    }

    /// History: a@1=1, b@2=1, a@3=2, b@4 deleted, c@5=1, a@6=3 (and b re-created at 7).
    /// Number of records in the index column family.
    fn index_len(s: &Mvcc) -> usize {
        let mut n = 0;
        s.engine
            .view()
            .scan(Cf::Index, b"", None, |_, _| {
                n += 1;
                Ok(true)
            })
            .unwrap();
        n
    }

    fn history_store() -> (tempfile::TempDir, Mvcc) {
        let (d, s) = store();
        for op in [
            put("a", "1"),
            put("b", "1"),
            put("a", "2"),
            del("b"),
            put("c", "1"),
            put("a", "3"),
            put("b", "2"),
        ] {
            run(&s, txn(vec![], vec![op]));
        }
        assert_eq!(s.current_revision(), 7);
        (d, s)
    }

    #[test]
    fn reads_at_past_revisions() {
        let (_d, s) = history_store();
        // (key, at, expected value/create/mod/version)
        let cases: Vec<(&str, i64, Option<(&str, i64, i64, i64)>)> = vec![
            ("a", 1, Some(("1", 1, 1, 1))),
            ("a", 2, Some(("1", 1, 1, 1))),
            ("a", 3, Some(("2", 1, 3, 2))),
            ("a", 7, Some(("3", 1, 6, 3))),
            ("b", 1, None),
            ("b", 2, Some(("1", 2, 2, 1))),
            ("b", 4, None),
            ("b", 6, None),
            ("b", 7, Some(("2", 7, 7, 1))),
            ("c", 4, None),
            ("c", 5, Some(("1", 5, 5, 1))),
            ("zz", 7, None),
        ];
        for (k, at, want) in cases {
            let want = want.map(|(v, c, m, ver)| (v.to_string(), c, m, ver));
            assert_eq!(g(&s, k, Some(at)), want, "{k}@{at}");
        }
        // (at, limit, keys, count, more)
        let ranges: Vec<(Option<i64>, usize, Vec<&str>, i64, bool)> = vec![
            (Some(1), 0, vec!["a"], 1, false),
            (Some(2), 0, vec!["a", "b"], 2, false),
            (Some(4), 0, vec!["a"], 1, false),
            (Some(5), 0, vec!["a", "c"], 2, false),
            (Some(7), 0, vec!["a", "b", "c"], 3, false),
            (Some(7), 2, vec!["a", "b"], 3, true),
            (None, 2, vec!["a", "b"], 3, true),
            (Some(6), 1, vec!["a"], 2, true),
        ];
        for (at, limit, want, count, more) in ranges {
            let r = s.range(b"a", b"d", at, limit).unwrap();
            assert_eq!(keys(&r), want, "{at:?} {limit}");
            let want_page = keys(&r);
            assert_eq!((r.count, r.more), (count, more), "{at:?} {limit}");
            assert_eq!(r.revision, at.unwrap_or(7));
            // Uncounted: the same page and `more`, the scan stopping past the page.
            let p = s.range_page(b"a", b"d", at, limit, false).unwrap();
            assert_eq!((keys(&p), p.more), (want_page, more), "{at:?} {limit}");
            assert_eq!(p.count, p.kvs.len() as i64 + i64::from(more));
        }
        let r = s.range(b"b", b"c", Some(3), 0).unwrap();
        assert_eq!(r.kvs, vec![kv("b", "1", 2, 2, 1)]);
        let r = s.range(b"b", b"", None, 0).unwrap();
        assert_eq!(keys(&r), vec!["b", "c"]);
        assert_eq!(
            s.get(b"a", Some(8)),
            Err(Error::FutureRevision {
                requested: 8,
                current: 7
            })
        );
        assert!(matches!(
            s.range(b"a", b"", Some(9), 0),
            Err(Error::FutureRevision { .. })
        ));
    }

    #[test]
    fn events_since_with_prev_kv() {
        let (_d, s) = history_store();
        let ev = s.events_since(2, b"", b"").unwrap();
        let summary: Vec<(EventKind, String, i64, Option<i64>)> = ev
            .iter()
            .map(|e| {
                (
                    e.kind,
                    String::from_utf8(e.kv.key.clone()).unwrap(),
                    e.kv.mod_revision,
                    e.prev_kv.as_ref().map(|p| p.mod_revision),
                )
            })
            .collect();
        use EventKind::*;
        assert_eq!(
            summary,
            vec![
                (Put, "a".into(), 3, Some(1)),
                (Delete, "b".into(), 4, Some(2)),
                (Put, "c".into(), 5, None),
                (Put, "a".into(), 6, Some(3)),
                (Put, "b".into(), 7, None),
            ]
        );
        assert_eq!(ev[1].kv, tombstone(b"b", 4));
        assert_eq!(ev[1].prev_kv, Some(kv("b", "1", 2, 2, 1)));
        let only_b = s.events_since(0, b"b", b"c").unwrap();
        assert_eq!(only_b.len(), 3);
        assert!(s.events_since(7, b"", b"").unwrap().is_empty());
    }

    #[test]
    fn compaction() {
        let (_d, s) = history_store();
        assert_eq!(s.compact(5, Batch::new()).unwrap(), Ok(()), "compact at 5");
        assert_eq!(s.compacted_revision(), 5);
        assert_eq!(
            s.compact(5, Batch::new()).unwrap(),
            Err(Error::Compacted {
                requested: 5,
                compacted: 5
            })
        );
        assert!(matches!(
            s.compact(8, Batch::new()).unwrap(),
            Err(Error::FutureRevision { .. })
        ));
        assert_eq!(
            s.get(b"a", Some(4)),
            Err(Error::Compacted {
                requested: 4,
                compacted: 5
            })
        );
        assert!(matches!(
            s.range(b"", b"", Some(1), 0),
            Err(Error::Compacted { .. })
        ));
        assert!(matches!(
            s.events_since(4, b"", b""),
            Err(Error::Compacted { .. })
        ));
        // Reads at >= 5 still work and see the state retained from before 5.
        assert_eq!(g(&s, "a", Some(5)), Some(("2".into(), 1, 3, 2)));
        assert_eq!(g(&s, "b", Some(5)), None);
        assert_eq!(g(&s, "c", Some(5)), Some(("1".into(), 5, 5, 1)));
        assert_eq!(g(&s, "a", Some(6)), Some(("3".into(), 1, 6, 3)));
        assert_eq!(
            keys(&s.range(b"", b"", Some(5), 0).unwrap()),
            vec!["a", "c"]
        );
        let ev = s.events_since(5, b"", b"").unwrap();
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].prev_kv, Some(kv("a", "2", 1, 3, 2)));
        assert_eq!(ev[1].prev_kv, None);
        // The purge runs behind, in bounded steps; reads are the same before and after.
        assert!(s.needs_purge());
        while s.purge_step(1).unwrap() {}
        assert!(!s.needs_purge());
        assert_eq!(g(&s, "a", Some(5)), Some(("2".into(), 1, 3, 2)));
        assert_eq!(s.events_since(5, b"", b"").unwrap().len(), 2);
        // Only the retained index entries remain: a@3 a@6 b@7 c@5.
        assert_eq!(index_len(&s), 4);
        // Compaction up to the current revision, then more writes.
        assert_eq!(s.compact(7, Batch::new()).unwrap(), Ok(()));
        while s.purge_step(1000).unwrap() {}
        run(&s, txn(vec![], vec![del("a")]));
        assert_eq!(s.events_since(7, b"", b"").unwrap().len(), 1);
        assert_eq!(g(&s, "a", Some(7)), Some(("3".into(), 1, 6, 3)));
        assert_eq!(g(&s, "a", Some(8)), None);
    }

    #[test]
    fn reopen_export_restore() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let exp = {
            let s = Mvcc::open(Engine::open(&path).unwrap()).unwrap();
            run(&s, txn(vec![], vec![put("a", "1"), put("b", "1")]));
            let mut extra = Batch::new();
            extra.put(Cf::Meta, &b"raft/x"[..], &b"y"[..]);
            s.apply_txn(&txn(vec![], vec![del("b")]), extra).unwrap();
            s.compact(1, Batch::new()).unwrap().unwrap();
            s.export(&[b"raft/x", b"nope"]).unwrap()
        };
        assert_eq!(exp.revision, 2);
        assert_eq!(exp.compacted, 1);
        assert_eq!(exp.kvs, vec![kv("a", "1", 1, 1, 1)]);
        assert_eq!(exp.meta, vec![Some(b"y".to_vec()), None]);
        let s = Mvcc::open(Engine::open(&path).unwrap()).unwrap();
        assert_eq!((s.current_revision(), s.compacted_revision()), (2, 1));
        assert_eq!(s.events_since(1, b"", b"").unwrap().len(), 1);

        let (_d2, t) = history_store();
        t.restore(exp.revision, &exp.kvs, Batch::new()).unwrap();
        assert_eq!((t.current_revision(), t.compacted_revision()), (2, 2));
        assert_eq!(keys(&t.range(b"", b"", None, 0).unwrap()), vec!["a"]);
        assert_eq!(g(&t, "a", Some(2)), Some(("1".into(), 1, 1, 1)));
        assert!(t.events_since(2, b"", b"").unwrap().is_empty());
        let r = run(&t, txn(vec![], vec![put("a", "2")]));
        assert_eq!(r.revision, 3);
        assert_eq!(
            t.events_since(2, b"", b"").unwrap()[0].prev_kv,
            exp.kvs.first().cloned()
        );
    }

    /// A dump carries the retained history: the restored store has the same window
    /// (compacted revision, past reads, events) as the one dumped, and a truncated dump
    /// leaves the store refusing reads rather than serving half a keyspace.
    #[test]
    fn dump_restore_keeps_the_history_window() {
        let (_d, s) = history_store();
        run(&s, txn(vec![], vec![put("a", "4"), put("\u{0}x", "bin")]));
        s.compact(3, Batch::new()).unwrap().unwrap();
        s.purge_step(1).unwrap(); // part of the purge done, the rest left to the new store
        let mut extra = Batch::new();
        extra.put(Cf::Meta, &b"raft/x"[..], &b"y"[..]);
        let mut group = s.group();
        group.extra(extra);
        group.commit().unwrap();
        let mut bytes = Vec::new();
        let h = s.dump(&[b"raft/x"], &mut bytes).unwrap();
        assert_eq!((h.revision, h.compacted), (s.current_revision(), 3));
        assert_eq!(h.meta, vec![Some(b"y".to_vec())]);
        assert_eq!(dump::verify(&bytes[..]).unwrap(), h);

        let (_d2, t) = store();
        run(&t, txn(vec![], vec![put("stale", "1")]));
        let mut end = Batch::new();
        end.put(Cf::Meta, &b"raft/x"[..], &b"z"[..]);
        t.restore_dump(&bytes[..], Batch::new(), end).unwrap();
        assert_eq!(
            (t.current_revision(), t.compacted_revision()),
            (s.current_revision(), s.compacted_revision())
        );
        assert_eq!(
            t.engine.get(Cf::Meta, b"raft/x").unwrap(),
            Some(b"z".to_vec())
        );
        for at in [None, Some(3), Some(5), Some(s.current_revision())] {
            assert_eq!(
                t.range(b"", b"", at, 0).unwrap(),
                s.range(b"", b"", at, 0).unwrap(),
                "at {at:?}"
            );
        }
        assert_eq!(
            t.events_since(3, b"", b"").unwrap(),
            s.events_since(3, b"", b"").unwrap()
        );
        assert!(matches!(t.get(b"a", Some(2)), Err(Error::Compacted { .. })));
        // The purge the dumped store had not finished goes on in the restored one.
        assert!(t.needs_purge());
        while t.purge_step(1000).unwrap() {}
        assert_eq!(g(&t, "a", Some(3)), g(&s, "a", Some(3)));
        // A later compaction is accepted the same way on both.
        let later = s.current_revision();
        assert_eq!(t.compact(later, Batch::new()).unwrap(), Ok(()));

        // Cut short: the old keyspace is gone, the new one incomplete: reads are refused.
        let (_d3, u) = store();
        run(&u, txn(vec![], vec![put("stale", "1")]));
        let cut = &bytes[..bytes.len() - 40];
        assert!(u.restore_dump(cut, Batch::new(), Batch::new()).is_err());
        assert!(matches!(u.get(b"stale", None), Err(Error::Unavailable(_))));
        assert!(matches!(
            u.range(b"", b"", None, 0),
            Err(Error::Unavailable(_))
        ));
        // A whole dump afterwards makes it serve again.
        u.restore_dump(&bytes[..], Batch::new(), Batch::new())
            .unwrap();
        assert_eq!(u.get(b"stale", None).unwrap(), None);
        assert_eq!(
            u.range(b"", b"", None, 0).unwrap(),
            s.range(b"", b"", None, 0).unwrap()
        );
    }

    /// A purge step deletes a bounded number of index entries, even inside one key with a
    /// long history, and the steps together leave exactly the latest version of each key.
    #[test]
    fn purge_steps_are_bounded() {
        let (_d, s) = store();
        for i in 0..50 {
            run(&s, txn(vec![], vec![put("hot", &i.to_string())]));
        }
        run(&s, txn(vec![], vec![put("cold", "1")]));
        assert_eq!(index_len(&s), 51);
        s.compact(51, Batch::new()).unwrap().unwrap();
        let mut steps = 0;
        let mut before = index_len(&s);
        while s.purge_step(10).unwrap() {
            let now = index_len(&s);
            assert!(before - now <= 10, "a step removed {}", before - now);
            before = now;
            steps += 1;
            assert!(steps < 100, "no progress");
        }
        assert!(steps >= 4, "{steps} steps");
        assert_eq!(index_len(&s), 2);
        assert!(!s.needs_purge());
        assert_eq!(g(&s, "hot", Some(51)), Some(("49".into(), 1, 50, 50)));
        // A reopened store remembers a compaction whose purge had not run yet.
        s.compact(51, Batch::new()).unwrap().unwrap_err();
        run(&s, txn(vec![], vec![put("hot", "x")]));
        s.compact(52, Batch::new()).unwrap().unwrap();
        let engine = s.engine.clone();
        drop(s);
        let s = Mvcc::open(engine).unwrap();
        assert!(s.needs_purge());
    }
}
