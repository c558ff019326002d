//! The audit log file with lumberjack's rotation (what kube's `--audit-log-maxsize`,
//! `--audit-log-maxbackup` and `--audit-log-maxage` configure): a write that would take the
//! file past the size limit (MB; 0 means lumberjack's 100 MB) first renames it to
//! `<name>-<UTC time 2006-01-02T15-04-05.000>.<ext>` and opens a new one; after a rotation the
//! backups beyond the newest `maxbackup` and those older than `maxage` days are removed. A
//! single write larger than the limit is refused, as lumberjack refuses it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

const MEGABYTE: u64 = 1024 * 1024;
const DEFAULT_MAX_MB: u64 = 100;
const BACKUP_TIME: &str = "%Y-%m-%dT%H-%M-%S%.3f";

/// Rotation limits (0: none; a size of 0 is lumberjack's 100 MB).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub max_size_mb: u64,
    pub max_backups: usize,
    pub max_age_days: u64,
}

pub struct RotatingFile {
    path: PathBuf,
    limits: Limits,
    file: Option<File>,
    size: u64,
}

impl RotatingFile {
    /// kube's `ensureLogFile`: the folder (0700) and the file (0600) exist before the
    /// server starts.
    pub fn open(path: &Path, limits: Limits) -> std::io::Result<RotatingFile> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut o = OpenOptions::new();
        o.create(true).append(true).read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        drop(o.open(path)?);
        Ok(RotatingFile {
            path: path.to_path_buf(),
            limits,
            file: None,
            size: 0,
        })
    }

    fn max(&self) -> u64 {
        match self.limits.max_size_mb {
            0 => DEFAULT_MAX_MB * MEGABYTE,
            n => n * MEGABYTE,
        }
    }

    /// Writes one record whole.
    pub fn write_record(&mut self, data: &[u8]) -> std::io::Result<()> {
        let len = data.len() as u64;
        if len > self.max() {
            return Err(std::io::Error::other(format!(
                "write length {len} exceeds maximum file size {}",
                self.max()
            )));
        }
        if self.file.is_none() {
            self.open_existing_or_new(len)?;
        }
        if self.size + len > self.max() {
            self.rotate()?;
        }
        let f = self.file.as_mut().expect("open");
        f.write_all(data)?;
        self.size += len;
        Ok(())
    }

    fn open_existing_or_new(&mut self, len: u64) -> std::io::Result<()> {
        match std::fs::metadata(&self.path) {
            Ok(m) if m.len() + len < self.max() => {
                self.file = Some(OpenOptions::new().append(true).open(&self.path)?);
                self.size = m.len();
                Ok(())
            }
            Ok(_) => self.rotate(),
            Err(_) => self.open_new(),
        }
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        self.file = None;
        self.open_new()?;
        self.mill();
        Ok(())
    }

    fn open_new(&mut self) -> std::io::Result<()> {
        if self.path.exists() {
            std::fs::rename(&self.path, self.backup_name(chrono::Utc::now()))?;
        }
        let mut o = OpenOptions::new();
        o.create(true).write(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        self.file = Some(o.open(&self.path)?);
        self.size = 0;
        Ok(())
    }

    /// `<dir>/<stem>-<time><.ext>`.
    fn backup_name(&self, t: chrono::DateTime<chrono::Utc>) -> PathBuf {
        let (prefix, ext) = self.prefix_ext();
        self.path
            .with_file_name(format!("{prefix}{}{ext}", t.format(BACKUP_TIME)))
    }

    fn prefix_ext(&self) -> (String, String) {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Go's filepath.Ext: from the last dot.
        match name.rfind('.') {
            Some(i) => (format!("{}-", &name[..i]), name[i..].to_string()),
            None => (format!("{name}-"), String::new()),
        }
    }

    /// The backups, newest first.
    fn backups(&self) -> Vec<(chrono::NaiveDateTime, PathBuf)> {
        let (prefix, ext) = self.prefix_ext();
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut out: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let ts = name.strip_prefix(&prefix)?.strip_suffix(&ext)?;
                let t = chrono::NaiveDateTime::parse_from_str(ts, BACKUP_TIME).ok()?;
                Some((t, e.path()))
            })
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0));
        out
    }

    /// lumberjack's `millRunOnce`: too many or too old backups are removed.
    fn mill(&self) {
        let Limits {
            max_backups,
            max_age_days,
            ..
        } = self.limits;
        if max_backups == 0 && max_age_days == 0 {
            return;
        }
        let mut files = self.backups();
        let mut remove = Vec::new();
        if max_backups > 0 && files.len() > max_backups {
            remove.extend(files.split_off(max_backups));
        }
        if max_age_days > 0 {
            let cutoff = chrono::Utc::now().naive_utc()
                - chrono::Duration::seconds(max_age_days as i64 * 86_400);
            remove.extend(files.into_iter().filter(|(t, _)| *t < cutoff));
        }
        for (_, p) in remove {
            if let Err(e) = std::fs::remove_file(&p) {
                tracing::warn!("removing old audit log {}: {e}", p.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_and_keeps_max_backups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let mut f = RotatingFile::open(
            &path,
            Limits {
                max_size_mb: 1,
                max_backups: 2,
                max_age_days: 0,
            },
        )
        .unwrap();
        let line = vec![b'x'; 400 * 1024];
        for _ in 0..8 {
            f.write_record(&line).unwrap();
            // Backup names carry milliseconds: keep rotations apart.
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(f.write_record(&vec![b'y'; 2 * 1024 * 1024]).is_err());
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), 3, "{names:?}");
        assert_eq!(names[2], "audit.log");
        for n in &names[..2] {
            assert!(n.starts_with("audit-") && n.ends_with(".log"), "{n}");
            // audit-2006-01-02T15-04-05.000.log
            assert_eq!(n.len(), "audit-2006-01-02T15-04-05.000.log".len(), "{n}");
        }
        assert!(std::fs::metadata(&path).unwrap().len() <= MEGABYTE);
    }
}
