//! A raft snapshot's data: a file, never held in memory. A leader's snapshot is made only
//! when a follower needs one: its dump starts from one consistent view and the metadata is
//! known as soon as the view is taken, so the state machine answers at once and the file is
//! waited for by the transfer ([`SnapshotData::ready`]), never by apply. What a follower
//! receives is a file in the snapshot directory until it is installed.

use std::fs::File;
use std::io::{self, Seek};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::oneshot;

/// Temporary files in the snapshot directory (being built or received) end with this.
pub(crate) const TMP_SUFFIX: &str = ".tmp";

/// The data of a snapshot.
#[derive(Debug)]
pub struct SnapshotData {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    /// A file, open for reading (`path` may already be unlinked: a dump made for one transfer).
    File { path: PathBuf, file: File },
    /// A dump still being written by its own thread.
    Pending(oneshot::Receiver<io::Result<SnapshotData>>),
    /// Only the metadata: the state machine itself is the snapshot (what openraft is told when
    /// it asks to build one, or at start), materialized by a later request to send it.
    StateOnly,
}

impl SnapshotData {
    /// Opens the snapshot file at `path`.
    pub(crate) fn open(path: PathBuf) -> io::Result<SnapshotData> {
        let file = File::open(&path)?;
        Ok(SnapshotData::file(path, file))
    }

    /// An open file (read from its start).
    pub(crate) fn file(path: PathBuf, file: File) -> SnapshotData {
        SnapshotData {
            inner: Inner::File { path, file },
        }
    }

    /// The file a dump thread will send on `rx`.
    pub(crate) fn pending(rx: oneshot::Receiver<io::Result<SnapshotData>>) -> SnapshotData {
        SnapshotData {
            inner: Inner::Pending(rx),
        }
    }

    /// No file: the state machine's own state at the snapshot's log id.
    pub(crate) fn state_only() -> SnapshotData {
        SnapshotData {
            inner: Inner::StateOnly,
        }
    }

    /// Waits for the file (a dump being written) and returns the data as a file.
    pub(crate) async fn ready(self) -> io::Result<SnapshotData> {
        match self.inner {
            Inner::File { .. } => Ok(self),
            Inner::Pending(rx) => rx
                .await
                .unwrap_or_else(|_| Err(io::Error::other("the snapshot dump was abandoned"))),
            Inner::StateOnly => Err(io::Error::other(
                "this snapshot was never materialized (ask the state machine again)",
            )),
        }
    }

    /// Its size in bytes (a file only).
    pub(crate) fn len(&self) -> io::Result<u64> {
        match &self.inner {
            Inner::File { file, .. } => Ok(file.metadata()?.len()),
            _ => Err(io::Error::other("the snapshot file is not ready")),
        }
    }

    /// Where it lives and the open file (rewound); a file only.
    pub(crate) fn into_parts(self) -> io::Result<(PathBuf, File)> {
        match self.inner {
            Inner::File { path, mut file } => {
                file.rewind()?;
                Ok((path, file))
            }
            _ => Err(io::Error::other("the snapshot file is not ready")),
        }
    }
}

/// A fresh name for a temporary file in `dir` (being built or received).
pub(crate) fn temp_path(dir: &Path, what: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{what}.{}.{n}{TMP_SUFFIX}", std::process::id()))
}

/// Fsyncs a directory, so that a rename or a new file in it survives a crash.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
