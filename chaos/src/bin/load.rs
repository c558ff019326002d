//! Load generator for the issue's benchmark (figures, not a timed test).
//!
//! For each replica count (default 1 and 3) it starts a cluster with `cluster/up.sh N`
//! (HAProxy in front, fsync on: the Raft log is always synced), then measures through the load
//! balancer: creates/s and p50/p99 latency of 1 KiB ConfigMaps at 1, 16 and 64 concurrent
//! clients; linearizable GETs/s (resourceVersion unset); and, with several replicas, the time
//! from killing the leader (SIGKILL) to the first successful write. Optionally the same
//! client drives a 3-member etcd (`--etcd-script /work/shared/bench/etcd3.sh`, through its
//! JSON gateway: `/v3/kv/put`, linearizable `/v3/kv/range`) and the figures are printed side by
//! side. Every client is its own HTTP/1.1 connection, like wrk's.
//!
//! ```text
//! cargo build --release --bin rafter
//! cargo run -p rafter-chaos --release --bin load -- --rafter-bin target/release/rafter \
//!     --etcd-script /work/shared/bench/etcd3.sh
//! ```
//! `--run-dir DIR` measures an already running `cluster/up.sh` cluster instead (no start, no
//! leader kill unless `--kill-leader`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use base64::Engine;
use clap::Parser;

#[derive(Parser, Debug)]
#[command(about = "Rafter (and etcd) load generator: creates/s, p50/p99, GETs/s, failover")]
struct Args {
    /// Replica counts to measure, each started with cluster/up.sh (0: none).
    #[arg(long, value_delimiter = ',', default_value = "1,3")]
    replicas: Vec<usize>,
    /// The rafter binary (passed to up.sh as RAFTER_BIN; a release build for real figures).
    #[arg(long, env = "RAFTER_BIN")]
    rafter_bin: Option<PathBuf>,
    /// Measure this running cluster's run folder instead of starting clusters.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// With --run-dir: also kill the leader and time the first write after it.
    #[arg(long)]
    kill_leader: bool,
    /// Concurrent clients for the create runs.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    concurrency: Vec<usize>,
    /// Concurrent clients for the linearizable GET run.
    #[arg(long, default_value_t = 64)]
    get_concurrency: usize,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// Start a 3-member etcd with this script (`etcd3.sh start DIR | stop DIR`) and measure it
    /// side by side.
    #[arg(long)]
    etcd_script: Option<PathBuf>,
    /// Objects of the LIST measurement (1 KiB each).
    #[arg(long, default_value_t = 10_000)]
    list_objects: usize,
    /// A few seconds in all (one replica, one concurrency, small LIST): checks that the bench
    /// runs, its figures mean nothing.
    #[arg(long)]
    smoke: bool,
}

impl Args {
    fn smoke(mut self) -> Args {
        if self.smoke {
            self.replicas = vec![1];
            self.concurrency = vec![4];
            self.get_concurrency = 4;
            self.duration = 1;
            self.list_objects = 100;
        }
        self
    }
}

/// Latencies of the successful requests of one run, and the failures.
struct Stats {
    ok: Vec<Duration>,
    errors: u64,
    elapsed: Duration,
}

impl Stats {
    fn rate(&self) -> f64 {
        self.ok.len() as f64 / self.elapsed.as_secs_f64()
    }

    fn pct(&self, p: f64) -> f64 {
        if self.ok.is_empty() {
            return f64::NAN;
        }
        let i = ((self.ok.len() as f64 - 1.0) * p).round() as usize;
        self.ok[i].as_secs_f64() * 1000.0
    }

    fn cell(&self) -> String {
        let mut s = format!(
            "{:.0}/s  p50 {:.1} ms  p99 {:.1} ms",
            self.rate(),
            self.pct(0.5),
            self.pct(0.99)
        );
        if self.errors > 0 {
            s.push_str(&format!("  ({} errors)", self.errors));
        }
        s
    }
}

/// One request of a load run.
type MakeRequest = Arc<dyn Fn(&reqwest::Client, u64) -> reqwest::RequestBuilder + Send + Sync>;

/// `clients` workers, each on its own connection, send requests for `dur`.
async fn run_load(
    new_client: &dyn Fn() -> Result<reqwest::Client>,
    clients: usize,
    dur: Duration,
    make: MakeRequest,
) -> Result<Stats> {
    let seq = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + dur;
    let mut tasks = vec![];
    for _ in 0..clients.max(1) {
        let client = new_client()?;
        let make = make.clone();
        let seq = seq.clone();
        let errors = errors.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = vec![];
            while Instant::now() < deadline {
                let n = seq.fetch_add(1, Ordering::Relaxed);
                let t = Instant::now();
                let r = make(&client, n).send().await;
                match r {
                    Ok(resp) if resp.status().is_success() => {
                        let _ = resp.bytes().await;
                        lat.push(t.elapsed());
                    }
                    Ok(resp) => {
                        let status = resp.status();
                        let body = resp.bytes().await.unwrap_or_default();
                        if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                            let body = String::from_utf8_lossy(&body[..body.len().min(300)]);
                            eprintln!("  request failed: {status}: {body}");
                        }
                    }
                    Err(e) => {
                        if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                            eprintln!("  request failed: {e}");
                        }
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            }
            lat
        }));
    }
    let mut ok = vec![];
    for t in tasks {
        ok.extend(t.await?);
    }
    let elapsed = start.elapsed();
    ok.sort();
    Ok(Stats {
        ok,
        errors: errors.load(Ordering::Relaxed),
        elapsed,
    })
}

/// A target's figures, by row label.
type Column = BTreeMap<String, String>;

fn row_create(c: usize) -> String {
    format!("creates, {c:>2} clients")
}

const ROW_GET: &str = "linearizable GETs";
const ROW_LIST: &str = "consistent LIST, JSON";
const ROW_LIST_PB: &str = "consistent LIST, protobuf";
const ROW_LIST_ANY: &str = "LIST resourceVersion=0, JSON";
const ROW_RSS_IDLE: &str = "RSS per member, idle";
const ROW_RSS_LOADED: &str = "RSS per member, after load";
const ROW_FAILOVER: &str = "leader kill -> first write";

/// Resident set size (bytes) of a process, from /proc.
fn rss_of(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid.trim())).ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

/// Mean RSS of the processes whose pid files are given, as a cell ("83 MiB (80-86)").
fn rss_cell(pid_files: &[PathBuf]) -> String {
    let v: Vec<u64> = pid_files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter_map(|p| rss_of(&p))
        .collect();
    if v.is_empty() {
        return "n/a".into();
    }
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let mean = v.iter().sum::<u64>() / v.len() as u64;
    let (lo, hi) = (v.iter().min().unwrap(), v.iter().max().unwrap());
    format!("{:.0} MiB ({:.0}-{:.0})", mib(mean), mib(*lo), mib(*hi))
}

/// Median time of `runs` sequential requests and the body size, as a cell with ms per MB.
async fn time_list(
    client: &reqwest::Client,
    make: &dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder,
    runs: usize,
) -> Result<(String, u64)> {
    let mut times = vec![];
    let mut bytes = 0u64;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let resp = make(client).send().await?;
        if !resp.status().is_success() {
            bail!("LIST answered {}", resp.status());
        }
        bytes = resp.bytes().await?.len() as u64;
        times.push(t.elapsed());
    }
    times.sort();
    let med = times[times.len() / 2].as_secs_f64() * 1000.0;
    let mb = bytes as f64 / 1e6;
    Ok((
        format!("{med:.0} ms, {mb:.1} MB, {:.1} ms/MB", med / mb.max(1e-9)),
        bytes,
    ))
}

/// Creates `n` objects with `clients` concurrent workers; `make(client, i)` builds one.
async fn fill(
    new_client: &dyn Fn() -> Result<reqwest::Client>,
    n: usize,
    clients: usize,
    make: MakeRequest,
) -> Result<()> {
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = vec![];
    for _ in 0..clients.max(1) {
        let (client, next, make) = (new_client()?, next.clone(), make.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n as u64 {
                    return Ok::<(), anyhow::Error>(());
                }
                let mut tries = 0;
                loop {
                    tries += 1;
                    match make(&client, i).send().await {
                        Ok(r) if r.status().is_success() || r.status() == 409 => break,
                        Ok(r) if tries >= 5 => bail!("filling: {}", r.status()),
                        Err(e) if tries >= 5 => bail!("filling: {e}"),
                        _ => tokio::time::sleep(Duration::from_millis(50)).await,
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Rafter through cluster/up.sh

struct Cluster {
    run: PathBuf,
    ports: BTreeMap<String, String>,
    owned: bool,
    bin: Option<PathBuf>,
}

/// The checkout whose `cluster/` scripts start the clusters: the one this binary was built
/// in, else (a copied binary whose checkout is gone) the current directory.
fn repo() -> PathBuf {
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    if built_in.join("cluster/up.sh").exists() {
        built_in
    } else {
        PathBuf::from(".")
    }
}

impl Cluster {
    fn up(n: usize, bin: Option<&Path>) -> Result<Cluster> {
        let run = std::env::temp_dir().join(format!("rafter-load-{}-{n}", std::process::id()));
        let mut cmd = Command::new(repo().join("cluster/up.sh"));
        cmd.arg(n.to_string()).env("RAFTER_RUN_DIR", &run);
        if let Some(b) = bin {
            cmd.env("RAFTER_BIN", b);
        }
        let out = cmd.output().context("running cluster/up.sh")?;
        let mut c = Cluster {
            run,
            ports: BTreeMap::new(),
            owned: true,
            bin: bin.map(Path::to_path_buf),
        };
        if !out.status.success() {
            bail!(
                "cluster/up.sh {n} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        c.read_ports()?;
        Ok(c)
    }

    fn existing(run: &Path, bin: Option<&Path>) -> Result<Cluster> {
        let mut c = Cluster {
            run: run.to_path_buf(),
            ports: BTreeMap::new(),
            owned: false,
            bin: bin.map(Path::to_path_buf),
        };
        c.read_ports()?;
        Ok(c)
    }

    fn read_ports(&mut self) -> Result<()> {
        let p = self.run.join("ports.env");
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=') {
                self.ports.insert(k.into(), v.into());
            }
        }
        Ok(())
    }

    fn replicas(&self) -> usize {
        self.ports
            .keys()
            .filter(|k| k.starts_with("REPLICA_") && k.ends_with("_API"))
            .count()
    }

    fn pid_files(&self) -> Vec<PathBuf> {
        (1..=self.replicas())
            .map(|i| self.run.join(format!("replica-{i}.pid")))
            .collect()
    }

    fn lb(&self) -> String {
        self.ports.get("LB_API").cloned().unwrap_or_default()
    }

    fn new_client(&self) -> Result<reqwest::Client> {
        Ok(
            rafter_chaos::cluster::admin_client(&self.run.join("replica-1"))?
                .http1_only()
                .pool_max_idle_per_host(1)
                .timeout(Duration::from_secs(30))
                .build()?,
        )
    }

    fn rafter(&self) -> PathBuf {
        self.bin.clone().unwrap_or_else(|| PathBuf::from("rafter"))
    }

    /// The leader id from `rafter admin status -o json` on any answering replica.
    fn leader(&self) -> Result<u64> {
        for i in 1..=self.replicas() {
            let Some(ep) = self.ports.get(&format!("REPLICA_{i}_ADMIN")) else {
                continue;
            };
            let out = Command::new(self.rafter())
                .args([
                    "admin",
                    "status",
                    "-o",
                    "json",
                    "--timeout",
                    "5",
                    "--endpoint",
                ])
                .arg(ep)
                .arg("--data-dir")
                .arg(self.run.join(format!("replica-{i}")))
                .output()?;
            if !out.status.success() {
                continue;
            }
            let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
            if let Some(l) = v["leader"].as_u64() {
                return Ok(l);
            }
        }
        bail!("no replica reports a leader")
    }

    fn kill9(&self, id: u64) -> Result<()> {
        let pid = std::fs::read_to_string(self.run.join(format!("replica-{id}.pid")))?;
        let st = Command::new("kill").args(["-9", pid.trim()]).status()?;
        if !st.success() {
            bail!("kill -9 {pid} failed");
        }
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.owned {
            let _ = Command::new(repo().join("cluster/down.sh"))
                .arg("--purge")
                .env("RAFTER_RUN_DIR", &self.run)
                .status();
        }
    }
}

const CM_VALUE_LEN: usize = 1024;

fn configmap_body() -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"generateName": "b-"},
        "data": {"v": "x".repeat(CM_VALUE_LEN)},
    })
}

async fn bench_rafter(c: &Cluster, args: &Args, kill: bool) -> Result<Column> {
    let lb = c.lb();
    let base = format!("https://{lb}/api/v1/namespaces/bench/configmaps");
    let new_client = || c.new_client();
    let setup = c.new_client()?;
    let _ = setup
        .post(format!("https://{lb}/api/v1/namespaces"))
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}))
        .send()
        .await?;
    let obj: serde_json::Value = setup
        .post(&base)
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "read-me"}, "data": {"v": "x".repeat(CM_VALUE_LEN)}}))
        .send()
        .await?
        .json()
        .await?;
    if obj["metadata"]["name"] != "read-me" && obj["reason"] != "AlreadyExists" {
        bail!("cannot create the benchmark objects: {obj}");
    }
    let dur = Duration::from_secs(args.duration);
    let mut col = Column::new();
    col.insert(ROW_RSS_IDLE.into(), rss_cell(&c.pid_files()));
    let body = Arc::new(serde_json::to_vec(&configmap_body())?);
    for &n in &args.concurrency {
        let (base, body) = (base.clone(), body.clone());
        let make: MakeRequest = Arc::new(move |cl, _| {
            cl.post(&base)
                .header("content-type", "application/json")
                .body(body.as_ref().clone())
        });
        let s = run_load(&new_client, n, dur, make).await?;
        eprintln!("  {}: {}", row_create(n), s.cell());
        col.insert(row_create(n), s.cell());
    }
    let url = format!("{base}/read-me");
    let make: MakeRequest = Arc::new(move |cl, _| cl.get(&url));
    let s = run_load(&new_client, args.get_concurrency, dur, make).await?;
    eprintln!(
        "  {ROW_GET} ({} clients): {}",
        args.get_concurrency,
        s.cell()
    );
    col.insert(ROW_GET.into(), s.cell());

    // LISTs of a namespace holding `list_objects` ConfigMaps.
    let _ = setup
        .post(format!("https://{lb}/api/v1/namespaces"))
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench-list"}}))
        .send()
        .await?;
    let list = format!("https://{lb}/api/v1/namespaces/bench-list/configmaps");
    let make: MakeRequest = {
        let list = list.clone();
        Arc::new(move |cl, i| {
            cl.post(&list).json(&serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("l-{i}")},
                "data": {"v": "x".repeat(CM_VALUE_LEN)},
            }))
        })
    };
    fill(&new_client, args.list_objects, 32, make).await?;
    let runs = if args.smoke { 1 } else { 5 };
    let l = list.clone();
    let (cell, _) = time_list(&setup, &move |cl| cl.get(&l), runs).await?;
    eprintln!("  {ROW_LIST}: {cell}");
    col.insert(ROW_LIST.into(), cell);
    let l = list.clone();
    let (cell, _) = time_list(
        &setup,
        &move |cl| {
            cl.get(&l)
                .header("accept", "application/vnd.kubernetes.protobuf")
        },
        runs,
    )
    .await?;
    eprintln!("  {ROW_LIST_PB}: {cell}");
    col.insert(ROW_LIST_PB.into(), cell);
    let l = format!("{list}?resourceVersion=0");
    let (cell, _) = time_list(&setup, &move |cl| cl.get(&l), runs).await?;
    eprintln!("  {ROW_LIST_ANY}: {cell}");
    col.insert(ROW_LIST_ANY.into(), cell);

    // Memory against the JSON of everything stored in the benchmark's namespaces.
    let mut stored = 0u64;
    for ns in ["bench", "bench-list"] {
        let u = format!("https://{lb}/api/v1/namespaces/{ns}/configmaps");
        stored += time_list(&setup, &move |cl| cl.get(&u), 1).await?.1;
    }
    let rss = rss_cell(&c.pid_files());
    let cell = format!("{rss}; stored JSON {:.0} MB", stored as f64 / 1e6);
    eprintln!("  {ROW_RSS_LOADED}: {cell}");
    col.insert(ROW_RSS_LOADED.into(), cell);

    if kill && c.replicas() >= 3 {
        let leader = c.leader()?;
        let client = c.new_client()?;
        let killed = Instant::now();
        c.kill9(leader)?;
        let mut tries = 0;
        let cell = loop {
            tries += 1;
            let r = client
                .post(&base)
                .header("content-type", "application/json")
                .body(body.as_ref().clone())
                .timeout(Duration::from_secs(5))
                .send()
                .await;
            if matches!(&r, Ok(resp) if resp.status().is_success()) {
                break format!("{} ms ({tries} attempts)", killed.elapsed().as_millis());
            }
            if killed.elapsed() > Duration::from_secs(60) {
                break "no write within 60 s".to_string();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        eprintln!("  {ROW_FAILOVER}: {cell} (killed replica {leader})");
        col.insert(ROW_FAILOVER.into(), cell);
    } else {
        col.insert(ROW_FAILOVER.into(), "n/a (one replica)".into());
    }
    Ok(col)
}

// ---------------------------------------------------------------------------------------------
// etcd through its JSON gateway

async fn bench_etcd(script: &Path, args: &Args) -> Result<Column> {
    let dir = std::env::temp_dir().join(format!("rafter-load-etcd-{}", std::process::id()));
    let out = Command::new(script).arg("start").arg(&dir).output()?;
    /// Stops the etcd members on drop; SIGKILLs a member still alive 10 s later (a leader
    /// whose peers are gone can take long to stop).
    struct Stop(PathBuf, PathBuf);
    impl Drop for Stop {
        fn drop(&mut self) {
            let pids: Vec<String> = (1..=3)
                .filter_map(|i| std::fs::read_to_string(self.1.join(format!("e{i}.pid"))).ok())
                .map(|p| p.trim().to_string())
                .collect();
            let _ = Command::new(&self.0).arg("stop").arg(&self.1).status();
            let alive = |p: &String| {
                Command::new("kill")
                    .args(["-0", p])
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            let deadline = Instant::now() + Duration::from_secs(10);
            while pids.iter().any(alive) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            for p in pids.iter().filter(|p| alive(p)) {
                let _ = Command::new("kill").args(["-9", p]).status();
            }
        }
    }
    let _stop = Stop(script.to_path_buf(), dir.clone());
    if !out.status.success() {
        bail!(
            "{} start failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let eps: Vec<String> = text
        .lines()
        .find_map(|l| l.strip_prefix("ETCD_ENDPOINTS="))
        .context("etcd3.sh printed no ETCD_ENDPOINTS")?
        .split(',')
        .map(str::to_string)
        .collect();
    let b64 = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
    let value = b64("x".repeat(CM_VALUE_LEN).as_bytes());
    let new_client = || {
        Ok(reqwest::Client::builder()
            .http1_only()
            .pool_max_idle_per_host(1)
            .timeout(Duration::from_secs(30))
            .build()?)
    };
    let dur = Duration::from_secs(args.duration);
    let mut col = Column::new();
    let pids: Vec<PathBuf> = (1..=3).map(|i| dir.join(format!("e{i}.pid"))).collect();
    col.insert(ROW_RSS_IDLE.into(), rss_cell(&pids));
    let eps = Arc::new(eps);
    for &n in &args.concurrency {
        let (eps, value) = (eps.clone(), value.clone());
        let make: MakeRequest = Arc::new(move |cl, i| {
            let ep = &eps[i as usize % eps.len()];
            let key = b64(format!("/bench/{i}").as_bytes());
            cl.post(format!("{ep}/v3/kv/put"))
                .body(format!(r#"{{"key":"{key}","value":"{value}"}}"#))
        });
        let s = run_load(&new_client, n, dur, make).await?;
        eprintln!("  etcd puts, {n} clients: {}", s.cell());
        col.insert(row_create(n), s.cell());
    }
    let client = new_client()?;
    client
        .post(format!("{}/v3/kv/put", eps[0]))
        .body(format!(
            r#"{{"key":"{}","value":"{value}"}}"#,
            b64(b"/bench/read-me")
        ))
        .send()
        .await?;
    let key = b64(b"/bench/read-me");
    let make: MakeRequest = {
        let eps = eps.clone();
        Arc::new(move |cl, i| {
            let ep = &eps[i as usize % eps.len()];
            cl.post(format!("{ep}/v3/kv/range"))
                .body(format!(r#"{{"key":"{key}"}}"#))
        })
    };
    let s = run_load(&new_client, args.get_concurrency, dur, make).await?;
    eprintln!("  etcd linearizable ranges: {}", s.cell());
    col.insert(ROW_GET.into(), s.cell());

    // A linearizable range over `list_objects` keys: the storage half of a LIST.
    let make: MakeRequest = {
        let (eps, value) = (eps.clone(), value.clone());
        Arc::new(move |cl, i| {
            let key = b64(format!("/list/{i:08}").as_bytes());
            cl.post(format!("{}/v3/kv/put", eps[i as usize % eps.len()]))
                .body(format!(r#"{{"key":"{key}","value":"{value}"}}"#))
        })
    };
    fill(&new_client, args.list_objects, 32, make).await?;
    let runs = if args.smoke { 1 } else { 5 };
    let body = format!(
        r#"{{"key":"{}","range_end":"{}"}}"#,
        b64(b"/list/"),
        b64(b"/list0")
    );
    let ep = eps[0].clone();
    let (cell, _) = time_list(
        &client,
        &move |cl| cl.post(format!("{ep}/v3/kv/range")).body(body.clone()),
        runs,
    )
    .await?;
    eprintln!("  etcd range of {} keys: {cell}", args.list_objects);
    col.insert(ROW_LIST.into(), format!("{cell} (range)"));
    col.insert(ROW_RSS_LOADED.into(), rss_cell(&pids));
    col.insert(ROW_FAILOVER.into(), "not measured".into());
    Ok(col)
}

// ---------------------------------------------------------------------------------------------

/// The leading rate of a cell ("2408/s ...").
fn rate_of(cell: &str) -> Option<f64> {
    cell.split("/s").next()?.trim().parse().ok()
}

/// Rafter ×N against etcd ×3 for the rate rows, as the issue states its targets.
fn print_ratios(cols: &[(String, Column)]) {
    let Some((_, etcd)) = cols.iter().find(|(h, _)| h == "etcd x3") else {
        return;
    };
    for (h, c) in cols.iter().filter(|(h, _)| h.starts_with("rafter")) {
        for (row, v) in c {
            if let (Some(a), Some(b)) = (rate_of(v), etcd.get(row).and_then(|e| rate_of(e))) {
                if b > 0.0 {
                    println!("{h} / etcd x3, {row}: {:.2}x", a / b);
                }
            }
        }
    }
}

fn print_table(args: &Args, cols: &[(String, Column)]) {
    let mut rows: Vec<String> = args.concurrency.iter().map(|&c| row_create(c)).collect();
    for r in [
        ROW_GET,
        ROW_LIST,
        ROW_LIST_PB,
        ROW_LIST_ANY,
        ROW_RSS_IDLE,
        ROW_RSS_LOADED,
        ROW_FAILOVER,
    ] {
        rows.push(r.into());
    }
    let label_w = rows.iter().map(String::len).max().unwrap_or(0);
    let widths: Vec<usize> = cols
        .iter()
        .map(|(h, c)| {
            c.values()
                .map(String::len)
                .chain([h.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut line = format!("{:label_w$}", "");
    for ((h, _), w) in cols.iter().zip(&widths) {
        line.push_str(&format!(" | {h:w$}"));
    }
    println!("{}", line.trim_end());
    println!("{}", "-".repeat(line.trim_end().len()));
    for r in &rows {
        let mut line = format!("{r:label_w$}");
        for ((_, c), w) in cols.iter().zip(&widths) {
            let v = c.get(r).map(String::as_str).unwrap_or("-");
            line.push_str(&format!(" | {v:w$}"));
        }
        println!("{}", line.trim_end());
    }
    println!(
        "\n1 KiB ConfigMaps (generateName) through HAProxy; GETs of one object with \
         resourceVersion unset; {}s per measurement; Raft log fsync on. etcd: 1 KiB puts and \
         linearizable single-key ranges through its JSON gateway. LISTs: {} ConfigMaps of \
         1 KiB in one namespace, median of sequential requests; etcd's row is a range over as \
         many keys. RSS: mean (min-max) over the members; \"stored JSON\" is the LIST size of \
         everything the run created.",
        args.duration, args.list_objects
    );
    print_ratios(cols);
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse().smoke();
    let mut cols: Vec<(String, Column)> = vec![];
    if let Some(run) = &args.run_dir {
        let c = Cluster::existing(run, args.rafter_bin.as_deref())?;
        eprintln!("rafter x{} ({})", c.replicas(), run.display());
        let col = bench_rafter(&c, &args, args.kill_leader).await?;
        cols.push((format!("rafter x{}", c.replicas()), col));
    } else {
        for &n in args.replicas.iter().filter(|n| **n > 0) {
            eprintln!("rafter x{n}: starting with cluster/up.sh {n}");
            let c = Cluster::up(n, args.rafter_bin.as_deref())?;
            let col = bench_rafter(&c, &args, true).await;
            drop(c);
            match col {
                Ok(col) => cols.push((format!("rafter x{n}"), col)),
                Err(e) => eprintln!("rafter x{n}: {e:#}"),
            }
        }
    }
    if let Some(script) = &args.etcd_script {
        eprintln!("etcd x3: starting with {}", script.display());
        match bench_etcd(script, &args).await {
            Ok(col) => cols.push(("etcd x3".into(), col)),
            Err(e) => eprintln!("etcd: {e:#}"),
        }
    }
    println!();
    print_table(&args, &cols);
    Ok(())
}
