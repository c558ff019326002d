//! Start-up and recovery figures against the real binary (not a timed test; `cargo bench
//! --bench recovery`), with the default authentication, RBAC and admission chain on. One
//! replica (with a peer listener, so that it can take members) is loaded with
//! `RAFTER_BENCH_MB` MiB (default 1024) of ConfigMaps of about 100 KiB each, then:
//!
//! 1. restart: SIGKILL, start again on the same folder; the time until `/readyz` answers and a
//!    GET of one of the objects succeeds, and the RSS then;
//! 2. a new member: after `rafter admin snapshot` (the log is purged, so the member cannot catch
//!    up from it), an empty replica started with `--join` is added as a learner and receives
//!    the keyspace by snapshot (the leader dumps it for this transfer on its own thread); the
//!    time until the leader reports it matched, the new member's peak RSS (VmHWM) and the
//!    leader's peak RSS above its level before (sampled every 20 ms), against the data size.
//!
//! `RAFTER_BENCH_SMOKE=1` loads 20 MiB. `RAFTER_TEST_BIN=<path>` runs another build (a
//! release one for absolute figures).

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{create_namespace, env_usize, proc_status_kib, rss_kib};
use support::{free_port, http1_client, Server};

const WRITERS: usize = 16;
const OBJECT_BYTES: usize = 100 * 1024;

fn bin() -> String {
    std::env::var("RAFTER_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_rafter").into())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// `rafter admin <args>` against a replica's admin port with its data folder's certificates.
fn admin(endpoint: &str, dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("timeout")
        .arg("120")
        .arg(bin())
        .arg("admin")
        .args(args)
        .args(["--endpoint", endpoint, "--data-dir", dir.to_str().unwrap()])
        .output()
        .expect("run rafter admin")
}

fn status(endpoint: &str, dir: &std::path::Path) -> serde_json::Value {
    let out = admin(endpoint, dir, &["status", "-o", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Samples the RSS of `pids` every 20 ms until dropped; `peak()` is the highest seen per pid.
struct Sampler {
    stop: Arc<AtomicBool>,
    peaks: Arc<Vec<AtomicU64>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    fn start(pids: Vec<u32>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let peaks: Arc<Vec<AtomicU64>> = Arc::new(pids.iter().map(|_| AtomicU64::new(0)).collect());
        let thread = {
            let (stop, peaks) = (stop.clone(), peaks.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    for (i, p) in pids.iter().enumerate() {
                        peaks[i].fetch_max(rss_kib(*p), Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        Sampler {
            stop,
            peaks,
            thread: Some(thread),
        }
    }

    fn peak(&self, i: usize) -> u64 {
        self.peaks[i].load(Ordering::Relaxed)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Creates ConfigMaps of about `OBJECT_BYTES` in `ns` until `total` bytes of data are
/// stored; returns how many.
async fn load(c: &reqwest::Client, url: &str, ns: &str, total: usize) -> usize {
    let n = total.div_ceil(OBJECT_BYTES);
    let next = Arc::new(AtomicUsize::new(0));
    let blob = Arc::new("x".repeat(OBJECT_BYTES - 300));
    let mut tasks = Vec::new();
    for _ in 0..WRITERS {
        let (c, url, ns, next, blob) = (
            c.clone(),
            url.to_string(),
            ns.to_string(),
            next.clone(),
            blob.clone(),
        );
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let body = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("blob-{i:06}"), "labels": {"app": "bulk"}},
                    "data": {"blob": *blob, "index": i.to_string()}});
                let r = c
                    .post(format!("{url}/api/v1/namespaces/{ns}/configmaps"))
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success(), "create {i}: {}", r.status());
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    n
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}

async fn run() {
    let smoke = std::env::var_os("RAFTER_BENCH_SMOKE").is_some();
    let mb = env_usize("RAFTER_BENCH_MB", if smoke { 20 } else { 1024 });
    let admin_addr = format!("127.0.0.1:{}", free_port());
    let peer = format!("127.0.0.1:{}", free_port());
    // Few entries kept behind a snapshot, so that a new member cannot catch up from the log.
    let mut server = Server::start_with(&[
        "--admin-listen",
        &admin_addr,
        "--peer-listen",
        &peer,
        "--snapshot-catchup-entries",
        "10",
    ]);
    let dir = server.dir.path().to_path_buf();
    let c = http1_client(&server);
    let url = server.url.clone();
    create_namespace(&c, &url, "bulk").await;

    let t = Instant::now();
    let n = load(&c, &url, "bulk", mb << 20).await;
    let took = t.elapsed();
    let db_kib = du_kib(&dir.join("db"));
    println!(
        "loaded {n} ConfigMaps of {} KiB ({mb} MiB) in {:.1} s ({:.0} MiB/s); db folder {:.0} MiB; RSS {:.0} MiB",
        OBJECT_BYTES / 1024,
        took.as_secs_f64(),
        mb as f64 / took.as_secs_f64(),
        mib(db_kib),
        mib(rss_kib(server.pid().unwrap()))
    );

    // 1. Restart after SIGKILL.
    let t = Instant::now();
    server.restart();
    let ready = t.elapsed();
    let r = c
        .get(format!(
            "{url}/api/v1/namespaces/bulk/configmaps/blob-000000"
        ))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let served = t.elapsed();
    println!(
        "restart after SIGKILL with {mb} MiB: ready in {:.2} s, first GET at {:.2} s; RSS {:.0} MiB",
        ready.as_secs_f64(),
        served.as_secs_f64(),
        mib(rss_kib(server.pid().unwrap()))
    );

    // 2. A new member receives the keyspace by snapshot.
    let out = admin(&admin_addr, &dir, &["snapshot"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = status(&admin_addr, &dir);
    let target = s["commit_index"].as_u64().unwrap_or(0);
    println!(
        "leader: commit {target}, log purged to {}",
        s["purged_index"]
    );
    let j = tempfile::tempdir().unwrap();
    for f in ["ca.crt", "ca.key", "peer-ca.crt", "peer-ca.key", "sa.key"] {
        std::fs::copy(dir.join(f), j.path().join(f)).unwrap();
    }
    let peer2 = format!("127.0.0.1:{}", free_port());
    let api2 = format!("127.0.0.1:{}", free_port());
    let admin2 = format!("127.0.0.1:{}", free_port());
    let mut child = Command::new(bin())
        .args([
            "serve",
            "--data-dir",
            j.path().to_str().unwrap(),
            "--node-id",
            "2",
        ])
        .args(["--join", "--peer-listen", &peer2, "--listen", &api2])
        .args(["--admin-listen", &admin2])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let leader_pid = server.pid().unwrap();
    let leader_before = rss_kib(leader_pid);
    let sampler = Sampler::start(vec![leader_pid, child.id()]);
    let t = Instant::now();
    let deadline = t + Duration::from_secs(600);
    loop {
        let out = admin(
            &admin_addr,
            &dir,
            &[
                "add-learner",
                "--id",
                "2",
                "--peer-addr",
                &peer2,
                "--api-addr",
                &api2,
            ],
        );
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "add-learner: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    loop {
        let s = status(&admin_addr, &dir);
        let matched = s["members"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["id"] == 2)
            .and_then(|m| m["matched_index"].as_u64())
            .unwrap_or(0);
        if matched >= target {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new member never caught up: {s}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let caught_up = t.elapsed();
    let (leader_peak, member_peak) = (sampler.peak(0), sampler.peak(1));
    drop(sampler);
    let member_hwm = proc_status_kib(child.id(), "VmHWM:");
    println!(
        "new member by snapshot of {mb} MiB: caught up in {:.1} s; member peak RSS {:.0} MiB (VmHWM {:.0}) until then; leader peak {:.0} MiB, {:+.0} MiB above its {:.0} MiB before",
        caught_up.as_secs_f64(),
        mib(member_peak),
        mib(member_hwm),
        mib(leader_peak),
        mib(leader_peak.saturating_sub(leader_before)),
        mib(leader_before)
    );
    // Its watch cache reloads after the install: RSS once that is done.
    tokio::time::sleep(Duration::from_secs(if smoke { 1 } else { 10 })).await;
    println!(
        "new member {} s later: RSS {:.0} MiB (its watch cache holds the objects)",
        if smoke { 1 } else { 10 },
        mib(rss_kib(child.id()))
    );
    let installed = status(&admin2, j.path())["snapshots_installed"].clone();
    println!("the new member installed {installed} snapshot(s)");
    let _ = child.kill();
    let _ = child.wait();
}

/// Disk usage of a folder, in KiB (`du -sk`).
fn du_kib(p: &std::path::Path) -> u64 {
    Command::new("du")
        .arg("-sk")
        .arg(p)
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}
