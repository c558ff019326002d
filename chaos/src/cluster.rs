//! The harness's own launcher: N real `rafter` replicas on 127.0.0.1, each peer link and
//! each API port behind a fault proxy of a [`Mesh`] (replica A dials B through link (A, B)
//! with the server's hidden `--peer-dial`), data folders in the run folder, shared CAs and
//! service-account key copied from replica 1 (as `cluster/up.sh` does). Replicas can be
//! killed (SIGKILL), restarted on their data (with extra flags or environment, e.g. `--join`
//! or libfaketime), restarted empty (a wiped data folder: a new *incarnation*), paused
//! (SIGSTOP) and resumed, and a data folder can be moved onto a small tmpfs mount and filled.
//! Clients use the admin identity through the API proxies (credentials copied to `creds/`
//! of the run folder, so wiping any replica keeps them). Every wait is bounded; dropping the
//! cluster kills every replica it started and unmounts every tmpfs (its contents copied back
//! to disk for the report); [`emergency_cleanup`] does the same from a signal handler.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::net::{Mesh, NodeAddrs};

/// A free port on 127.0.0.1 below the kernel's ephemeral range (so that the proxies' own
/// port-0 listeners cannot take it before the replica binds it); the probe listener is
/// closed again at once.
/// A client builder that trusts the cluster CA in `dir` and presents its admin certificate
/// (`ca.crt`, `admin.crt`, `admin.key`, as a data folder or `cluster/up.sh` writes them).
pub fn admin_client(dir: &Path) -> Result<reqwest::ClientBuilder> {
    let read = |f: &str| {
        std::fs::read(dir.join(f)).with_context(|| format!("reading {}/{f}", dir.display()))
    };
    let mut pem = read("admin.crt")?;
    pem.extend_from_slice(&read("admin.key")?);
    Ok(reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&read("ca.crt")?)?)
        .identity(reqwest::Identity::from_pem(&pem)?))
}

pub fn free_port() -> Result<u16> {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let offset = (std::process::id() % 600) as u32 * 20;
    for _ in 0..12_000 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed) as u32;
        let p = (20_000 + (offset + n) % 12_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", p)).is_ok() {
            return Ok(p);
        }
    }
    bail!("no free port in 20000-32000")
}

/// What this process started and has not cleaned up yet: replica pids and tmpfs mounts.
#[derive(Default)]
struct Live {
    pids: BTreeSet<u32>,
    mounts: BTreeSet<PathBuf>,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    pids: BTreeSet::new(),
    mounts: BTreeSet::new(),
});

fn live() -> std::sync::MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills every replica this process started and lazily unmounts every tmpfs it mounted: for
/// a signal handler (no report is written then). Normal exits clean up in `Drop`.
pub fn emergency_cleanup() {
    let l = std::mem::take(&mut *live());
    for pid in l.pids {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    for m in l.mounts {
        let _ = Command::new("umount").arg("-l").arg(&m).status();
    }
}

/// Unmounts (lazily) every mount below `dir`: tmpfs left by a harness that was killed with
/// no chance to clean up.
pub fn unmount_stale(dir: &Path) {
    let Ok(dir) = dir.canonicalize() else { return };
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return;
    };
    let mut stale: Vec<PathBuf> = mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|m| PathBuf::from(m.replace("\\040", " ")))
        .filter(|m| m.starts_with(&dir))
        .collect();
    stale.sort();
    for m in stale.into_iter().rev() {
        let _ = Command::new("umount").arg("-l").arg(&m).status();
    }
}

/// Each replica's incarnation: bumped when the harness wipes its data folder (a new, empty
/// replica under the old id). Readers note it around each read.
#[derive(Clone, Debug, Default)]
pub struct Incarnations(Arc<Mutex<BTreeMap<u32, u64>>>);

impl Incarnations {
    pub fn get(&self, id: u32) -> u64 {
        let m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        m.get(&id).copied().unwrap_or(0)
    }

    fn bump(&self, id: u32) {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *m.entry(id).or_insert(0) += 1;
    }
}

/// The files of a data folder that a wiped replica keeps: the cluster's CAs and the
/// service-account key (shared by every replica, as at start).
const SHARED_FILES: [&str; 5] = ["ca.crt", "ca.key", "peer-ca.crt", "peer-ca.key", "sa.key"];

/// The ballast file of the disk-full fault (in the replica's data folder).
const BALLAST: &str = "ballast";

pub struct Replica {
    pub id: u32,
    pub api: SocketAddr,
    pub peer: SocketAddr,
    pub admin: SocketAddr,
    pub dir: PathBuf,
    args: Vec<String>,
    /// Flags added to every later start (`--join` once it was wiped and re-added).
    extra: Vec<String>,
    /// Environment of the next starts (libfaketime), until cleared.
    env: Vec<(String, String)>,
    child: Option<Child>,
    paused: bool,
    /// Its data folder is a tmpfs mount (its on-disk folder waits at `<dir>.disk`).
    tmpfs: bool,
    /// Runs the cluster's other build (`Cluster::next_bin`) since an `upgrade` step.
    upgraded: bool,
}

pub struct Cluster {
    pub run: PathBuf,
    pub bin: PathBuf,
    /// The build `upgrade` steps move replicas to (and back from).
    pub next_bin: Option<PathBuf>,
    pub replicas: BTreeMap<u32, Replica>,
    pub mesh: Mesh,
    pub incarnations: Incarnations,
    /// `ca.crt`, `admin.crt`, `admin.key`: the admin identity, whatever happens to a replica.
    pub creds: PathBuf,
    http: Option<reqwest::Client>,
    /// Replicas that exited on their own, with their exit status, not yet taken.
    exits: Vec<(u32, String)>,
}

fn spawn(bin: &Path, args: &[String], env: &[(String, String)], log: &Path) -> Result<Child> {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let child = Command::new(bin)
        .args(args)
        .env(
            "RAFTER_LOG",
            std::env::var("RAFTER_LOG").unwrap_or("warn".into()),
        )
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    live().pids.insert(child.id());
    Ok(child)
}

/// Total size of the files under `dir` (apparent sizes).
fn tree_size(dir: &Path) -> Result<u64> {
    let mut n = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let t = e.file_type()?;
        if t.is_dir() {
            n += tree_size(&e.path())?;
        } else {
            n += e.metadata()?.len();
        }
    }
    Ok(n)
}

/// Copies the files and folders under `src` into `dst` (which exists), but the ballast.
fn copy_tree(src: &Path, dst: &Path) -> Result<()> {
    for e in std::fs::read_dir(src)? {
        let e = e?;
        let (from, to) = (e.path(), dst.join(e.file_name()));
        if e.file_name() == BALLAST {
            continue;
        }
        if e.file_type()?.is_dir() {
            std::fs::create_dir_all(&to)?;
            copy_tree(&from, &to)?;
        } else {
            std::fs::copy(&from, &to)
                .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
        }
    }
    Ok(())
}

/// Removes everything in `dir` but the files named in `keep` (the folder itself stays: it may
/// be a mount point).
fn clear_dir(dir: &Path, keep: &[&str]) -> Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if keep.iter().any(|k| e.file_name() == *k) {
            continue;
        }
        if e.file_type()?.is_dir() {
            std::fs::remove_dir_all(e.path())?;
        } else {
            std::fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

fn umount(dir: &Path) -> Result<()> {
    let ok = Command::new("umount")
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        let lazy = Command::new("umount")
            .arg("-l")
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if !lazy {
            bail!("umount {} failed", dir.display());
        }
    }
    live().mounts.remove(dir);
    Ok(())
}

/// Mounts a tmpfs of `bytes` at `dir` (which exists).
pub fn mount_tmpfs_at(dir: &Path, bytes: u64) -> Result<()> {
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o"])
        .arg(format!("size={}k,mode=0755", bytes.div_ceil(1024)))
        .arg("tmpfs")
        .arg(dir)
        .output()
        .context("running mount")?;
    if !out.status.success() {
        bail!(
            "mount -t tmpfs on {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    live().mounts.insert(dir.to_path_buf());
    Ok(())
}

/// Unmounts what [`mount_tmpfs_at`] mounted.
pub fn unmount_tmpfs_at(dir: &Path) -> Result<()> {
    umount(dir)
}

fn wait_file(path: &Path, deadline: Instant) -> Result<()> {
    while !path.exists() || std::fs::metadata(path)?.len() == 0 {
        if Instant::now() > deadline {
            bail!("timed out waiting for {}", path.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

impl Cluster {
    /// Starts `n` replicas (extra `rafter serve` flags in `extra`) and waits until each is
    /// ready through its API proxy.
    pub async fn start(
        bin: &Path,
        run: &Path,
        n: u32,
        seed: u64,
        extra: &[String],
    ) -> Result<Cluster> {
        std::fs::create_dir_all(run)?;
        let mut addrs = Vec::new();
        for id in 1..=n {
            let p = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
            addrs.push((id, p(free_port()?), p(free_port()?), p(free_port()?)));
        }
        let nodes: Vec<NodeAddrs> = addrs
            .iter()
            .map(|(id, api, peer, _)| NodeAddrs {
                id: *id,
                peer: *peer,
                api: *api,
            })
            .collect();
        let mesh = Mesh::start(&nodes, seed).await?;
        let members: Vec<String> = addrs
            .iter()
            .map(|(id, _, peer, _)| format!("{id}={peer}"))
            .collect();
        let mut replicas = BTreeMap::new();
        for (id, api, peer, admin) in &addrs {
            let dir = run.join(format!("replica-{id}"));
            let dial: Vec<String> = addrs
                .iter()
                .filter(|(other, ..)| other != id)
                .map(|(other, ..)| {
                    format!(
                        "{other}={}",
                        mesh.peer_addr(*id, *other).expect("peer proxy")
                    )
                })
                .collect();
            let mut args: Vec<String> = [
                "serve",
                "--data-dir",
                dir.to_str().unwrap_or_default(),
                "--node-id",
                &id.to_string(),
                "--listen",
                &api.to_string(),
                "--peer-listen",
                &peer.to_string(),
                "--admin-listen",
                &admin.to_string(),
                "--initial-members",
                &members.join(","),
                // the checker owns its keyspace: no root CA ConfigMaps appearing in it
                "--controllers",
                "*,-root-ca-cert-publisher",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            if !dial.is_empty() {
                args.push("--peer-dial".into());
                args.push(dial.join(","));
            }
            args.extend(extra.iter().cloned());
            replicas.insert(
                *id,
                Replica {
                    id: *id,
                    api: *api,
                    peer: *peer,
                    admin: *admin,
                    dir,
                    args,
                    extra: Vec::new(),
                    env: Vec::new(),
                    child: None,
                    paused: false,
                    tmpfs: false,
                    upgraded: false,
                },
            );
        }
        let mut c = Cluster {
            run: run.to_path_buf(),
            bin: bin.to_path_buf(),
            next_bin: None,
            replicas,
            mesh,
            incarnations: Incarnations::default(),
            creds: run.join("creds"),
            http: None,
            exits: Vec::new(),
        };
        // Replica 1 makes the CAs and the service-account key; the others share them.
        let deadline = Instant::now() + Duration::from_secs(60);
        c.start_replica(1)?;
        let first = c.replicas[&1].dir.clone();
        wait_file(&first.join("ca.key"), deadline)?;
        wait_file(&first.join("sa.key"), deadline)?;
        wait_file(&first.join("peer-ca.key"), deadline)?;
        for id in 2..=n {
            let dir = c.replicas[&id].dir.clone();
            std::fs::create_dir_all(&dir)?;
            for f in ["ca.crt", "ca.key", "peer-ca.crt", "peer-ca.key", "sa.key"] {
                std::fs::copy(first.join(f), dir.join(f))?;
            }
            c.start_replica(id)?;
        }
        wait_file(&first.join("admin.kubeconfig"), deadline)?;
        std::fs::create_dir_all(&c.creds)?;
        for f in ["ca.crt", "admin.crt", "admin.key"] {
            std::fs::copy(first.join(f), c.creds.join(f))?;
        }
        c.http = Some(c.build_client()?);
        for id in 1..=n {
            c.wait_ready(id, deadline).await?;
        }
        Ok(c)
    }

    fn start_replica(&mut self, id: u32) -> Result<()> {
        let log = self.run.join(format!("replica-{id}.log"));
        let upgraded = self.replicas.get(&id).is_some_and(|r| r.upgraded);
        let bin = match (&self.next_bin, upgraded) {
            (Some(next), true) => next.clone(),
            _ => self.bin.clone(),
        };
        let r = self.replicas.get_mut(&id).context("no such replica")?;
        let mut args = r.args.clone();
        args.extend(r.extra.iter().cloned());
        r.child = Some(spawn(&bin, &args, &r.env, &log)?);
        r.paused = false;
        Ok(())
    }

    /// An HTTPS client with the admin identity (trusting the cluster CA).
    pub fn client(&self) -> Result<reqwest::Client> {
        match &self.http {
            Some(c) => Ok(c.clone()),
            None => self.build_client(),
        }
    }

    fn build_client(&self) -> Result<reqwest::Client> {
        let dir = if self.creds.join("admin.key").exists() {
            &self.creds
        } else {
            &self.replicas[&1].dir
        };
        Ok(admin_client(dir)?
            .timeout(Duration::from_secs(10))
            .connect_timeout(Duration::from_secs(2))
            .pool_max_idle_per_host(4)
            .build()?)
    }

    /// `https://` URL of replica `id` through its API proxy.
    pub fn url(&self, id: u32) -> String {
        format!("https://{}", self.mesh.api_addr(id).expect("api proxy"))
    }

    /// Waits until replica `id` answers `/readyz` (directly, not through its proxy).
    pub async fn wait_ready(&self, id: u32, deadline: Instant) -> Result<()> {
        let c = self.client()?;
        let url = format!("https://{}/readyz", self.replicas[&id].api);
        loop {
            if let Ok(r) = c.get(&url).timeout(Duration::from_secs(2)).send().await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                bail!(
                    "replica {id} not ready in time (see {}/replica-{id}.log)",
                    self.run.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn signal(&self, id: u32, sig: &str) -> Result<()> {
        let pid = self.replicas[&id]
            .child
            .as_ref()
            .map(|c| c.id())
            .context("replica not running")?;
        let st = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()?;
        if !st.success() {
            bail!("kill {sig} {pid} failed");
        }
        Ok(())
    }

    /// SIGKILL.
    pub fn kill(&mut self, id: u32) -> Result<()> {
        let r = self.replicas.get_mut(&id).context("no such replica")?;
        if let Some(mut c) = r.child.take() {
            if r.paused {
                let _ = Command::new("kill")
                    .args(["-CONT", &c.id().to_string()])
                    .status();
            }
            let _ = c.kill();
            let _ = c.wait();
            live().pids.remove(&c.id());
        }
        r.paused = false;
        Ok(())
    }

    /// Whether replica `id`'s process is alive; one that exited on its own is reaped and its
    /// exit noted (see [`Cluster::take_exits`]).
    pub fn running(&mut self, id: u32) -> bool {
        let Some(r) = self.replicas.get_mut(&id) else {
            return false;
        };
        let Some(c) = r.child.as_mut() else {
            return false;
        };
        match c.try_wait() {
            Ok(None) => true,
            Ok(Some(st)) => {
                live().pids.remove(&c.id());
                r.child = None;
                r.paused = false;
                self.exits.push((id, st.to_string()));
                false
            }
            Err(_) => true,
        }
    }

    /// Replicas that exited on their own since the last call: (id, exit status).
    pub fn take_exits(&mut self) -> Vec<(u32, String)> {
        for id in self.ids() {
            self.running(id);
        }
        std::mem::take(&mut self.exits)
    }

    /// Whether replica `id` runs the other build.
    pub fn is_upgraded(&self, id: u32) -> bool {
        self.replicas.get(&id).is_some_and(|r| r.upgraded)
    }

    /// Stops replica `id` as an operator does (SIGTERM, then SIGKILL after 20 s) and starts
    /// it again on its data folder with the other build: the next one (an upgrade), or back
    /// to the first (a rollback). Returns what it did.
    pub async fn switch_build(&mut self, id: u32) -> Result<String> {
        let next = self.next_bin.clone().context("no --next-bin")?;
        if self.running(id) {
            self.signal(id, "-TERM")?;
            let deadline = Instant::now() + Duration::from_secs(20);
            while self.running(id) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            self.kill(id)?;
            // Its exit was asked for: not a crash.
            self.exits.retain(|(i, _)| *i != id);
        }
        let r = self.replicas.get_mut(&id).context("no such replica")?;
        r.upgraded = !r.upgraded;
        let (from, to) = if r.upgraded {
            (&self.bin, &next)
        } else {
            (&next, &self.bin)
        };
        let what = format!(
            "{} {} -> {}",
            if r.upgraded { "upgrade" } else { "rollback" },
            from.display(),
            to.display()
        );
        self.start_replica(id)?;
        Ok(what)
    }

    /// Starts a killed (or exited) replica again on its data folder.
    pub fn restart(&mut self, id: u32) -> Result<()> {
        if self.running(id) {
            return Ok(());
        }
        self.start_replica(id)
    }

    /// Environment of replica `id`'s next starts (empty: the harness's own).
    pub fn set_env(&mut self, id: u32, env: Vec<(String, String)>) -> Result<()> {
        self.replicas.get_mut(&id).context("no such replica")?.env = env;
        Ok(())
    }

    /// Wipes the data folder of a stopped replica (keeping the shared CAs and
    /// service-account key) and makes its later starts `--join`: it comes back as a new,
    /// empty replica waiting to be added. Its incarnation changes.
    pub fn wipe(&mut self, id: u32) -> Result<()> {
        if self.running(id) {
            bail!("replica {id} is running: kill it before wiping its data");
        }
        let r = self.replicas.get_mut(&id).context("no such replica")?;
        clear_dir(&r.dir, &SHARED_FILES)?;
        if !r.extra.iter().any(|a| a == "--join") {
            r.extra.push("--join".into());
        }
        self.incarnations.bump(id);
        Ok(())
    }

    /// Moves a stopped replica's data folder onto a tmpfs mount of its current size plus
    /// `headroom` bytes (at the same path; the on-disk folder waits at `<dir>.disk`).
    /// Returns the mount's size. A replica already on tmpfs stays there.
    pub fn mount_tmpfs(&mut self, id: u32, headroom: u64) -> Result<u64> {
        if self.running(id) {
            bail!("replica {id} is running: kill it before moving its data");
        }
        let r = self.replicas.get_mut(&id).context("no such replica")?;
        let dir = r.dir.clone();
        if r.tmpfs {
            return Ok(0);
        }
        let disk = dir.with_extension("disk");
        let size = (tree_size(&dir)? + headroom).div_ceil(1 << 20) << 20;
        std::fs::rename(&dir, &disk)?;
        std::fs::create_dir(&dir)?;
        if let Err(e) = mount_tmpfs_at(&dir, size) {
            std::fs::remove_dir(&dir)?;
            std::fs::rename(&disk, &dir)?;
            return Err(e);
        }
        r.tmpfs = true;
        if let Err(e) = copy_tree(&disk, &dir) {
            self.unmount_tmpfs(id)?;
            return Err(e);
        }
        Ok(size)
    }

    /// Moves a tmpfs data folder back to disk (the replica is killed first; the ballast is
    /// dropped) and unmounts it.
    pub fn unmount_tmpfs(&mut self, id: u32) -> Result<()> {
        self.kill(id)?;
        let r = self.replicas.get_mut(&id).context("no such replica")?;
        if !r.tmpfs {
            return Ok(());
        }
        let dir = r.dir.clone();
        let disk = dir.with_extension("disk");
        clear_dir(&disk, &[])?;
        let copied = copy_tree(&dir, &disk);
        umount(&dir)?;
        r.tmpfs = false;
        std::fs::remove_dir(&dir)?;
        std::fs::rename(&disk, &dir)?;
        copied
    }

    /// Fills the tmpfs of replica `id` with a ballast file until no byte more fits; returns
    /// its size and whether a probe write then fails (the disk is full).
    pub fn fill(&self, id: u32) -> Result<(u64, bool)> {
        use std::io::Write;
        let r = &self.replicas[&id];
        if !r.tmpfs {
            bail!("replica {id}'s data folder is not on a tmpfs");
        }
        let mut f = std::fs::File::create(r.dir.join(BALLAST))?;
        let mut n = 0u64;
        for chunk in [1usize << 20, 1 << 12, 1] {
            let buf = vec![0u8; chunk];
            loop {
                match f.write(&buf) {
                    Ok(0) => break,
                    Ok(k) => n += k as u64,
                    Err(e) if e.raw_os_error() == Some(28) => break, // ENOSPC
                    Err(e) => return Err(e).context("writing the ballast"),
                }
            }
        }
        let _ = f.flush();
        let probe = r.dir.join("probe");
        let full = std::fs::write(&probe, [0u8; 4096]).is_err();
        let _ = std::fs::remove_file(&probe);
        Ok((n, full))
    }

    /// Deletes the ballast of replica `id`.
    pub fn unfill(&self, id: u32) -> Result<()> {
        match std::fs::remove_file(self.replicas[&id].dir.join(BALLAST)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    /// `rafter admin ARGS` against replica `id`'s admin API with the admin identity, bounded
    /// by `secs` seconds; its stdout, or why it failed.
    pub async fn admin(&self, id: u32, args: &[&str], secs: u64) -> Result<String, String> {
        let r = &self.replicas[&id];
        let mut cmd = tokio::process::Command::new(&self.bin);
        cmd.arg("admin")
            .args(args)
            .arg("--endpoint")
            .arg(r.admin.to_string())
            .arg("--ca")
            .arg(self.creds.join("ca.crt"))
            .arg("--cert")
            .arg(self.creds.join("admin.crt"))
            .arg("--key")
            .arg(self.creds.join("admin.key"))
            .args(["--timeout", &secs.to_string()])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(secs + 2), cmd.output())
            .await
            .map_err(|_| format!("rafter admin {} timed out", args.join(" ")))?
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "rafter admin {} via replica {id}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// SIGSTOP / SIGCONT.
    pub fn pause(&mut self, id: u32) -> Result<()> {
        self.signal(id, "-STOP")?;
        if let Some(r) = self.replicas.get_mut(&id) {
            r.paused = true;
        }
        Ok(())
    }

    pub fn resume(&mut self, id: u32) -> Result<()> {
        if self.replicas[&id].paused {
            self.signal(id, "-CONT")?;
            if let Some(r) = self.replicas.get_mut(&id) {
                r.paused = false;
            }
        }
        Ok(())
    }

    /// Undoes every fault: links healthy, paused replicas resumed, killed ones restarted.
    pub fn heal_all(&mut self) -> Result<()> {
        self.mesh.heal();
        let ids: Vec<u32> = self.replicas.keys().copied().collect();
        for id in ids {
            self.resume(id)?;
            self.restart(id)?;
        }
        Ok(())
    }

    pub fn ids(&self) -> Vec<u32> {
        self.replicas.keys().copied().collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for id in self.ids() {
            let _ = self.kill(id);
        }
        for id in self.ids() {
            if self.replicas[&id].tmpfs {
                if let Err(e) = self.unmount_tmpfs(id) {
                    eprintln!("rafter-chaos: cleaning up replica {id}'s tmpfs: {e:#}");
                }
            }
        }
    }
}
