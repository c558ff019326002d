//! The dump format: a self-checking, streamable copy of the MVCC column families (live keys,
//! retained history and the per-key index) with the revision counters and a few caller-chosen
//! metadata records. It is what raft snapshots are made of: written from one consistent view
//! in bounded memory, checked end to end by a SHA-256 trailer, read back record by record.
//! The byte layout is documented in `docs/storage-format.md`.
//!
//! This module only frames bytes; what the records mean is `storage::mvcc`'s business.

use std::io::{self, Read, Write};

use ring::digest::{Context, SHA256};

use super::engine::Cf;
use super::Error;

const MAGIC: &[u8; 12] = b"RAFTERDUMP1\n";
const TAG_END: u8 = 0;
/// Bounds on one record, so that a corrupt length never allocates without limit.
const MAX_KEY: usize = 1 << 20;
const MAX_VALUE: usize = 256 << 20;
const MAX_META: usize = 1 << 24;

/// The column families a dump carries, by tag.
const CFS: [(u8, Cf); 3] = [(1, Cf::Kv), (2, Cf::Index), (3, Cf::History)];

/// What a dump says about itself before its records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Revisions (the MVCC counters; `storage::mvcc::Revision`).
    pub revision: i64,
    pub compacted: i64,
    pub purged: i64,
    /// Values of the caller's metadata keys, in the order asked for.
    pub meta: Vec<Option<Vec<u8>>>,
}

/// The column families a dump carries.
pub fn dumped_cfs() -> impl Iterator<Item = Cf> {
    CFS.iter().map(|(_, cf)| *cf)
}

fn tag_of(cf: Cf) -> u8 {
    CFS.iter().find(|(_, c)| *c == cf).map_or(0, |(t, _)| *t)
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Storage(format!("corrupt dump: {what}"))
}

fn io_error(e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        corrupt("truncated")
    } else {
        Error::Storage(format!("dump i/o: {e}"))
    }
}

/// Writes a dump to `W`, hashing every byte.
pub struct Writer<W: Write> {
    out: W,
    hash: Context,
    records: u64,
}

impl<W: Write> Writer<W> {
    /// Starts a dump with its header.
    pub fn new(out: W, header: &Header) -> Result<Writer<W>, Error> {
        let mut w = Writer {
            out,
            hash: Context::new(&SHA256),
            records: 0,
        };
        w.put(MAGIC)?;
        for r in [header.revision, header.compacted, header.purged] {
            w.put(&(r.max(0) as u64).to_be_bytes())?;
        }
        w.put(&(header.meta.len() as u32).to_be_bytes())?;
        for m in &header.meta {
            match m {
                None => w.put(&[0])?,
                Some(v) => {
                    w.put(&[1])?;
                    w.put(&(v.len() as u32).to_be_bytes())?;
                    w.put(v)?;
                }
            }
        }
        Ok(w)
    }

    fn put(&mut self, b: &[u8]) -> Result<(), Error> {
        self.hash.update(b);
        self.out.write_all(b).map_err(io_error)
    }

    /// Appends one record of `cf` (one of [`dumped_cfs`]).
    pub fn record(&mut self, cf: Cf, key: &[u8], value: &[u8]) -> Result<(), Error> {
        let tag = tag_of(cf);
        if tag == 0 {
            return Err(Error::Storage(format!("{} is not dumped", cf.name())));
        }
        self.put(&[tag])?;
        self.put(&(key.len() as u32).to_be_bytes())?;
        self.put(key)?;
        self.put(&(value.len() as u32).to_be_bytes())?;
        self.put(value)?;
        self.records += 1;
        Ok(())
    }

    /// Writes the trailer (record count and checksum) and returns the sink.
    pub fn finish(mut self) -> Result<W, Error> {
        self.put(&[TAG_END])?;
        let count = self.records.to_be_bytes();
        self.put(&count)?;
        let digest = self.hash.clone().finish();
        self.out.write_all(digest.as_ref()).map_err(io_error)?;
        self.out.flush().map_err(io_error)?;
        Ok(self.out)
    }
}

/// Reads a dump from `R`, record by record; the last [`Reader::next`] checks the trailer.
pub struct Reader<R: Read> {
    input: R,
    hash: Context,
    records: u64,
    header: Header,
    done: bool,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the magic and the header.
    pub fn new(input: R) -> Result<Reader<R>, Error> {
        let mut r = Reader {
            input,
            hash: Context::new(&SHA256),
            records: 0,
            header: Header {
                revision: 0,
                compacted: 0,
                purged: 0,
                meta: Vec::new(),
            },
            done: false,
        };
        let mut magic = [0u8; 12];
        r.take(&mut magic)?;
        if &magic != MAGIC {
            return Err(corrupt("not a rafter dump"));
        }
        let revision = r.u64()?;
        let compacted = r.u64()?;
        let purged = r.u64()?;
        if compacted > revision || purged > compacted {
            return Err(corrupt(format!(
                "counters out of order (revision {revision}, compacted {compacted}, purged {purged})"
            )));
        }
        let n = r.u32()? as usize;
        let mut meta = Vec::with_capacity(n.min(16));
        for _ in 0..n {
            let mut present = [0u8];
            r.take(&mut present)?;
            meta.push(match present[0] {
                0 => None,
                1 => Some(r.bytes(MAX_META)?),
                t => return Err(corrupt(format!("metadata flag {t}"))),
            });
        }
        r.header = Header {
            revision: revision as i64,
            compacted: compacted as i64,
            purged: purged as i64,
            meta,
        };
        Ok(r)
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    fn take(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.input.read_exact(buf).map_err(io_error)?;
        self.hash.update(buf);
        Ok(())
    }

    fn u32(&mut self) -> Result<u32, Error> {
        let mut b = [0u8; 4];
        self.take(&mut b)?;
        Ok(u32::from_be_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, Error> {
        let mut b = [0u8; 8];
        self.take(&mut b)?;
        let v = u64::from_be_bytes(b);
        if v > i64::MAX as u64 {
            return Err(corrupt("counter out of range"));
        }
        Ok(v)
    }

    fn bytes(&mut self, max: usize) -> Result<Vec<u8>, Error> {
        let n = self.u32()? as usize;
        if n > max {
            return Err(corrupt(format!("a {n}-byte field (at most {max})")));
        }
        // Grown as bytes arrive: a corrupt length costs no more memory than the input has.
        let mut v = Vec::new();
        (&mut self.input)
            .take(n as u64)
            .read_to_end(&mut v)
            .map_err(io_error)?;
        if v.len() != n {
            return Err(corrupt("truncated"));
        }
        self.hash.update(&v);
        Ok(v)
    }

    /// The next record, or `None` after a trailer whose count and checksum match.
    #[allow(clippy::should_implement_trait, clippy::type_complexity)]
    pub fn next(&mut self) -> Result<Option<(Cf, Vec<u8>, Vec<u8>)>, Error> {
        if self.done {
            return Ok(None);
        }
        let mut tag = [0u8];
        self.take(&mut tag)?;
        if tag[0] == TAG_END {
            let mut count = [0u8; 8];
            self.take(&mut count)?;
            let digest = self.hash.clone().finish();
            let mut want = [0u8; 32];
            self.input.read_exact(&mut want).map_err(io_error)?;
            if u64::from_be_bytes(count) != self.records {
                return Err(corrupt("record count does not match"));
            }
            if digest.as_ref() != want {
                return Err(corrupt("checksum does not match"));
            }
            self.done = true;
            return Ok(None);
        }
        let cf = CFS
            .iter()
            .find(|(t, _)| *t == tag[0])
            .map(|(_, cf)| *cf)
            .ok_or_else(|| corrupt(format!("record tag {}", tag[0])))?;
        let key = self.bytes(MAX_KEY)?;
        let value = self.bytes(MAX_VALUE)?;
        self.records += 1;
        Ok(Some((cf, key, value)))
    }
}

/// Reads a whole dump and checks its trailer; returns its header.
pub fn verify(input: impl Read) -> Result<Header, Error> {
    let mut r = Reader::new(input)?;
    while r.next()?.is_some() {}
    Ok(r.header)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let header = Header {
            revision: 9,
            compacted: 4,
            purged: 3,
            meta: vec![Some(b"applied".to_vec()), None],
        };
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.record(Cf::Kv, b"/a", b"1").unwrap();
        w.record(Cf::Index, b"", &[0xff; 3]).unwrap();
        w.record(Cf::History, &[0, 0, 0, 0, 0, 0, 0, 9], b"x")
            .unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn roundtrip() {
        let bytes = sample();
        let mut r = Reader::new(&bytes[..]).unwrap();
        assert_eq!(r.header().revision, 9);
        assert_eq!(r.header().meta, vec![Some(b"applied".to_vec()), None]);
        let mut seen = vec![];
        while let Some((cf, k, v)) = r.next().unwrap() {
            seen.push((cf, k, v));
        }
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[1], (Cf::Index, vec![], vec![0xff; 3]));
        assert_eq!(verify(&bytes[..]).unwrap().purged, 3);
    }

    #[test]
    fn damage_is_detected() {
        let bytes = sample();
        // Any flipped byte or truncation fails verification, never panics.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x41;
            assert!(verify(&b[..]).is_err(), "flip at {i}");
            assert!(verify(&bytes[..i]).is_err(), "truncated at {i}");
        }
        assert!(Writer::new(
            Vec::new(),
            &Header {
                revision: 1,
                compacted: 0,
                purged: 0,
                meta: vec![],
            }
        )
        .unwrap()
        .record(Cf::Meta, b"k", b"v")
        .is_err());
    }
}
