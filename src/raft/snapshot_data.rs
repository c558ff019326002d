//! A raft snapshot as a file: what the network streams out and receives into the snapshot
//! directory, and what the state machine builds and installs. Never held in memory.

use std::fs::File;
use std::io::{self, Seek};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Temporary files in the snapshot directory (being built or received) end with this.
pub(crate) const TMP_SUFFIX: &str = ".tmp";

/// A snapshot file, open for reading.
#[derive(Debug)]
pub struct SnapshotData {
    path: PathBuf,
    file: File,
}

impl SnapshotData {
    /// Opens the snapshot file at `path`.
    pub(crate) fn open(path: PathBuf) -> io::Result<SnapshotData> {
        let file = File::open(&path)?;
        Ok(SnapshotData { path, file })
    }

    /// The same open file, now known to live at `path` (it was renamed).
    pub(crate) fn at(self, path: PathBuf) -> SnapshotData {
        SnapshotData { path, ..self }
    }

    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// Its size in bytes.
    pub(crate) fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    /// Where it lives and the open file (rewound).
    pub(crate) fn into_parts(mut self) -> (PathBuf, File) {
        let _ = self.file.rewind();
        (self.path, self.file)
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
