//! The harness's own launcher: N real `rafter` replicas on 127.0.0.1, each peer link and
//! each API port behind a fault proxy of a [`Mesh`] (replica A dials B through link (A, B)
//! with the server's hidden `--peer-dial`), data folders in the run folder, shared CAs and
//! service-account key copied from replica 1 (as `cluster/up.sh` does). Replicas can be
//! killed (SIGKILL), restarted on their data, paused (SIGSTOP) and resumed. Clients use the
//! admin identity through the API proxies. Every wait is bounded; dropping the cluster
//! kills every replica it started.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::net::{Mesh, NodeAddrs};

/// A free port on 127.0.0.1 below the kernel's ephemeral range (so that the proxies' own
/// port-0 listeners cannot take it before the replica binds it); the probe listener is
/// closed again at once.
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

pub struct Replica {
    pub id: u32,
    pub api: SocketAddr,
    pub peer: SocketAddr,
    pub admin: SocketAddr,
    pub dir: PathBuf,
    args: Vec<String>,
    child: Option<Child>,
    paused: bool,
}

pub struct Cluster {
    pub run: PathBuf,
    pub bin: PathBuf,
    pub replicas: BTreeMap<u32, Replica>,
    pub mesh: Mesh,
}

fn spawn(bin: &Path, args: &[String], log: &Path) -> Result<Child> {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    Command::new(bin)
        .args(args)
        .env(
            "RAFTER_LOG",
            std::env::var("RAFTER_LOG").unwrap_or("warn".into()),
        )
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))
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
                    child: None,
                    paused: false,
                },
            );
        }
        let mut c = Cluster {
            run: run.to_path_buf(),
            bin: bin.to_path_buf(),
            replicas,
            mesh,
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
        for id in 1..=n {
            c.wait_ready(id, deadline).await?;
        }
        Ok(c)
    }

    fn start_replica(&mut self, id: u32) -> Result<()> {
        let log = self.run.join(format!("replica-{id}.log"));
        let bin = self.bin.clone();
        let r = self.replicas.get_mut(&id).context("no such replica")?;
        r.child = Some(spawn(&bin, &r.args, &log)?);
        r.paused = false;
        Ok(())
    }

    /// An HTTPS client with the admin identity (trusting the cluster CA).
    pub fn client(&self) -> Result<reqwest::Client> {
        let dir = &self.replicas[&1].dir;
        let read = |f: &str| std::fs::read(dir.join(f)).with_context(|| format!("reading {f}"));
        let mut pem = read("admin.crt")?;
        pem.extend_from_slice(&read("admin.key")?);
        Ok(reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&read("ca.crt")?)?)
            .identity(reqwest::Identity::from_pem(&pem)?)
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
            let _ = c.kill();
            let _ = c.wait();
        }
        r.paused = false;
        Ok(())
    }

    /// Starts a killed replica again on its data folder.
    pub fn restart(&mut self, id: u32) -> Result<()> {
        if self.replicas[&id].child.is_some() {
            return Ok(());
        }
        self.start_replica(id)
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
        for r in self.replicas.values_mut() {
            if let Some(mut c) = r.child.take() {
                if r.paused {
                    let _ = Command::new("kill")
                        .args(["-CONT", &c.id().to_string()])
                        .status();
                }
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}
