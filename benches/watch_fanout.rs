//! Watch fan-out figures against the real binary (not a timed test; `cargo test --bench
//! watch_fanout`, a debug build as the other benches): one replica with its defaults
//! (authentication, RBAC and default admission on; the watchers and writers present the
//! admin client certificate), `RAFTER_BENCH_WATCHERS` watchers (default 10,000) multiplexed
//! over `RAFTER_BENCH_CONNS` HTTP/2 connections (default 100) with mixed selectors (none,
//! label, field, label + field, Table output with each `includeObject`, resourceVersion=0),
//! then `RAFTER_BENCH_RATE` writes/s (default 500: merge patches of ConfigMaps and some Pods)
//! for `RAFTER_BENCH_SECONDS` (default 5).
//!
//! Prints delivery latency (write acknowledged → event received, and write sent → event
//! received) p50/p99/max, events delivered/s, server RSS before the watchers, with them idle
//! and per idle watcher (`/proc/<pid>/status` VmRSS), and server CPU during the writes.
//! `RAFTER_BENCH_SMOKE=1` shrinks everything to a run of a few seconds; `RAFTER_BENCH_PERF=<file>`
//! records the server with `perf record -g` during the writes.

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{cpu_ticks, env_usize, ms, pct, rss_kib, watcher, Stats, TICKS_PER_SEC};
use serde_json::json;
use support::Server;

/// The knobs of one run.
#[derive(Clone, Debug)]
struct Shape {
    watchers: usize,
    conns: usize,
    /// Busy namespaces (written to) and as many quiet ones (watched, never written).
    namespaces: usize,
    configmaps_per_ns: usize,
    pods: usize,
    nodes: usize,
    rate: usize,
    seconds: u64,
    writers: usize,
}

impl Shape {
    fn from_env() -> Shape {
        let smoke = std::env::var("RAFTER_BENCH_SMOKE").is_ok_and(|v| v != "0" && !v.is_empty());
        let d = if smoke {
            Shape {
                watchers: 200,
                conns: 4,
                namespaces: 2,
                configmaps_per_ns: 5,
                pods: 4,
                nodes: 2,
                rate: 50,
                seconds: 2,
                writers: 4,
            }
        } else {
            Shape {
                watchers: 10_000,
                conns: 100,
                namespaces: 20,
                configmaps_per_ns: 50,
                pods: 100,
                nodes: 50,
                rate: 500,
                seconds: common::phase_seconds(),
                writers: 32,
            }
        };
        Shape {
            watchers: env_usize("RAFTER_BENCH_WATCHERS", d.watchers),
            conns: env_usize("RAFTER_BENCH_CONNS", d.conns).max(1),
            rate: env_usize("RAFTER_BENCH_RATE", d.rate).max(1),
            seconds: if smoke { d.seconds } else { d.seconds.max(1) },
            ..d
        }
    }
}

/// What one watcher asks for.
fn watch_url(i: usize, s: &Shape, base: &str) -> (String, bool) {
    let ns = (i / 20) % s.namespaces;
    let shard = (i / 7) % 10;
    let cm = (i / 3) % s.configmaps_per_ns;
    let node = (i / 11) % s.nodes;
    let q = "watch=1&timeoutSeconds=3600";
    let enc = |v: &str| form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
    let cms = |ns: &str| format!("{base}/api/v1/namespaces/{ns}/configmaps?{q}");
    match i % 20 {
        // Label selectors on a busy namespace (25 %).
        0..=4 => (
            format!(
                "{}&labelSelector={}",
                cms(&format!("ns-{ns}")),
                enc(&format!("app=bench,shard={shard}"))
            ),
            false,
        ),
        // One object by name (20 %).
        5..=8 => (
            format!(
                "{}&fieldSelector={}",
                cms(&format!("ns-{ns}")),
                enc(&format!("metadata.name=cm-{cm}"))
            ),
            false,
        ),
        // All namespaces, a field selector on the namespace plus a label selector (10 %).
        9 | 10 => (
            format!(
                "{base}/api/v1/configmaps?{q}&fieldSelector={}&labelSelector={}",
                enc(&format!("metadata.namespace=ns-{ns}")),
                enc(&format!("shard={shard}"))
            ),
            false,
        ),
        // Table output, the three includeObject flavours, label selected (10 %).
        11 | 12 => {
            let include = ["None", "Metadata", "Object"][(i / 20) % 3];
            (
                format!(
                    "{}&labelSelector={}&includeObject={include}",
                    cms(&format!("ns-{ns}")),
                    enc(&format!("shard={shard}"))
                ),
                true,
            )
        }
        // resourceVersion=0: the cached state first (5 %).
        13 => (
            format!(
                "{}&resourceVersion=0&labelSelector={}",
                cms(&format!("ns-{ns}")),
                enc(&format!("shard={shard}"))
            ),
            false,
        ),
        // A kubelet's pods (15 %).
        14..=16 => (
            format!(
                "{base}/api/v1/pods?{q}&fieldSelector={}",
                enc(&format!("spec.nodeName=node-{node}"))
            ),
            false,
        ),
        // Pods by phase that never matches: evaluated for every pod event (5 %).
        17 => (
            format!(
                "{base}/api/v1/namespaces/ns-{ns}/pods?{q}&fieldSelector={}",
                enc("status.phase=Running")
            ),
            false,
        ),
        // No selector (10 %): a quiet namespace, and a few on all ConfigMaps.
        _ => {
            if i % 1000 == 18 {
                (format!("{base}/api/v1/configmaps?{q}"), false)
            } else {
                (cms(&format!("quiet-{ns}")), false)
            }
        }
    }
}

async fn must(r: reqwest::RequestBuilder, what: &str) {
    let resp = r.send().await.unwrap_or_else(|e| panic!("{what}: {e}"));
    let st = resp.status();
    let body = resp.text().await.unwrap_or_default();
    assert!(st.is_success() || st.as_u16() == 409, "{what}: {st} {body}");
}

async fn setup(c: &reqwest::Client, url: &str, s: &Shape) {
    for n in 0..s.namespaces {
        for ns in [format!("ns-{n}"), format!("quiet-{n}")] {
            must(
                c.post(format!("{url}/api/v1/namespaces"))
                    .header("content-type", "application/json")
                    .body(
                        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
                            .to_string(),
                    ),
                "namespace",
            )
            .await;
        }
    }
    let mut tasks = Vec::new();
    for n in 0..s.namespaces {
        let (c, url, per) = (c.clone(), url.to_string(), s.configmaps_per_ns);
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i}"), "labels": {"app": "bench", "shard": (i % 10).to_string()}},
                    "data": {"payload": "x".repeat(256)}});
                must(
                    c.post(format!("{url}/api/v1/namespaces/ns-{n}/configmaps"))
                        .header("content-type", "application/json")
                        .body(body.to_string()),
                    "configmap",
                )
                .await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    for p in 0..s.pods {
        let ns = p % s.namespaces;
        let body = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("pod-{p}"), "labels": {"app": "bench"}},
            "spec": {"nodeName": format!("node-{}", p % s.nodes), "automountServiceAccountToken": false,
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}});
        // The ServiceAccount admission plugin waits for the namespace's default account.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let r = c
                .post(format!("{url}/api/v1/namespaces/ns-{ns}/pods"))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            let st = r.status();
            let text = r.text().await.unwrap_or_default();
            if st.is_success() || st.as_u16() == 409 {
                break;
            }
            assert!(Instant::now() < deadline, "pod: {st} {text}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

async fn run() {
    let s = Shape::from_env();
    println!("shape: {s:?}");
    let server = Server::start();
    let pid = server.pid().unwrap();
    let url = server.url.clone();
    let c = support::http1_client(&server);
    let started = Instant::now();
    setup(&c, &url, &s).await;
    println!("setup {:.1} s", started.elapsed().as_secs_f64());

    // The watchers' connections: one HTTP/2 connection per client, warmed first so their
    // TLS state is not counted per watcher.
    let clients: Vec<reqwest::Client> = (0..s.conns)
        .map(|_| {
            server
                .client_builder()
                .http2_prior_knowledge()
                .timeout(Duration::from_secs(3600))
                .build()
                .unwrap()
        })
        .collect();
    for cl in &clients {
        must(
            cl.get(format!("{url}/api/v1/namespaces/ns-0/configmaps?limit=1")),
            "warm",
        )
        .await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = rss_kib(pid);

    let total_writes = s.rate * s.seconds as usize;
    let stats = Arc::new(Stats::new(total_writes));
    let opened = Instant::now();
    let gate = Arc::new(tokio::sync::Semaphore::new(256));
    let mut opens = Vec::new();
    let tables = (0..s.watchers)
        .filter(|i| watch_url(*i, &s, &url).1)
        .count();
    for i in 0..s.watchers {
        let (u, table) = watch_url(i, &s, &url);
        let c = clients[i % s.conns].clone();
        let gate = gate.clone();
        opens.push(tokio::spawn(async move {
            let _p = gate.acquire_owned().await.unwrap();
            let mut r = c.get(u);
            if table {
                r = r.header("accept", "application/json;as=Table;g=meta.k8s.io;v=v1");
            }
            common::open_watch(r, i).await
        }));
    }
    let mut watchers = Vec::new();
    let mut failed = 0;
    for o in opens {
        match tokio::time::timeout(Duration::from_secs(180), o).await {
            Ok(Ok(Some(resp))) => watchers.push(tokio::spawn(watcher(resp, stats.clone()))),
            _ => failed += 1,
        }
    }
    println!(
        "opened {} watchers ({tables} Table, {failed} failed) over {} HTTP/2 connections in {:.1} s",
        watchers.len(),
        s.conns,
        opened.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_idle = rss_kib(pid);
    let n = watchers.len().max(1) as f64;
    println!(
        "server RSS: {rss_before} KiB before watchers, {rss_idle} KiB with {} idle watchers, {:.2} KiB per idle watcher",
        watchers.len(),
        (rss_idle as f64 - rss_before as f64) / n
    );

    // RAFTER_BENCH_PERF=<file>: `perf record -g` of the server during the writes.
    let perf = std::env::var("RAFTER_BENCH_PERF").ok().map(|out| {
        std::process::Command::new("perf")
            .args([
                "record",
                "-g",
                "-o",
                &out,
                "-p",
                &pid.to_string(),
                "--",
                "sleep",
            ])
            .arg(s.seconds.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("perf")
    });
    stats.measuring.store(true, Ordering::SeqCst);
    let cpu0 = cpu_ticks(&pid.to_string());
    let me0 = cpu_ticks("self");
    let w0 = Instant::now();
    let writers: Vec<reqwest::Client> = (0..s.writers)
        .map(|_| support::http1_client(&server))
        .collect();
    let shape = s.clone();
    // Every tenth write is a Pod, the rest ConfigMaps.
    let path = Arc::new(move |seq: usize| {
        if seq % 10 == 9 {
            let p = (seq / 10) % shape.pods;
            format!("namespaces/ns-{}/pods/pod-{p}", p % shape.namespaces)
        } else {
            let k = seq % (shape.namespaces * shape.configmaps_per_ns);
            format!(
                "namespaces/ns-{}/configmaps/cm-{}",
                k % shape.namespaces,
                k / shape.namespaces
            )
        }
    });
    let mut wlat: Vec<u64> = common::paced_patches(
        writers,
        &url,
        s.rate,
        stats.clone(),
        path,
        Duration::from_secs(s.seconds + 120),
    )
    .await
    .into_iter()
    .map(|(_, us)| us)
    .collect();
    let writes_ok = wlat.len();
    let write_secs = w0.elapsed().as_secs_f64();
    // Let the last events arrive (bounded).
    stats.settle(Duration::from_secs(10)).await;
    let busy_secs = w0.elapsed().as_secs_f64();
    if let Some(mut p) = perf {
        let _ = p.wait();
    }
    let cpu = (cpu_ticks(&pid.to_string()) - cpu0) as f64 / TICKS_PER_SEC;
    let me = (cpu_ticks("self") - me0) as f64 / TICKS_PER_SEC;
    stats.measuring.store(false, Ordering::SeqCst);
    let rss_load = rss_kib(pid);
    for w in &watchers {
        w.abort();
    }
    for w in watchers {
        let _ = tokio::time::timeout(Duration::from_secs(5), w).await;
    }
    wlat.sort_unstable();
    let mut la = std::mem::take(&mut *stats.lat_ack.lock().unwrap());
    let mut ls = std::mem::take(&mut *stats.lat_sent.lock().unwrap());
    la.sort_unstable();
    ls.sort_unstable();
    let events = stats.events.load(Ordering::Relaxed);
    println!(
        "writes: {writes_ok}/{total_writes} ok in {write_secs:.1} s ({:.0}/s), latency p50 {:.1} ms p99 {:.1} ms",
        writes_ok as f64 / write_secs,
        pct(&wlat, 0.5) as f64 / 1000.0,
        pct(&wlat, 0.99) as f64 / 1000.0
    );
    println!(
        "delivered {events} events ({:.0}/s over {busy_secs:.1} s), {} ERROR events, {} before the write's ack",
        events as f64 / busy_secs,
        stats.errors.load(Ordering::Relaxed),
        stats.before_ack.load(Ordering::Relaxed)
    );
    println!(
        "delivery latency (ack -> event): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} samples)",
        ms(pct(&la, 0.5)),
        ms(pct(&la, 0.99)),
        ms(la.last().copied().unwrap_or(0)),
        la.len()
    );
    println!(
        "end-to-end latency (sent -> event): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(pct(&ls, 0.5)),
        ms(pct(&ls, 0.99)),
        ms(ls.last().copied().unwrap_or(0))
    );
    println!(
        "server CPU {:.2} cores over the writes ({cpu:.1} s), bench client {:.2} cores; server RSS under load {rss_load} KiB",
        cpu / busy_secs,
        me / busy_secs
    );
    println!("bench total {:.1} s", started.elapsed().as_secs_f64());
}
