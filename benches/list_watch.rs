//! List and watch figures against the real binary (not a timed test; `cargo bench --bench
//! list_watch`): LIST of 10k and 100k ConfigMaps with resourceVersion=0 and unset, event
//! delivery latency p50/p99 with 1,000 concurrent watchers, and memory per idle watcher.
//! `RAFTER_BENCH_SMALL=1` scales the object counts down by 10 for a quick run.

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{create_namespace, median_list, page_through, rss_kib};
use serde_json::{json, Value};
use support::Server;

const WATCHERS: usize = 1000;
const CLIENTS: usize = 10;
const UPDATES: usize = 100;

/// Creates `n` ConfigMaps in `ns` with `par` concurrent writers.
async fn fill(c: &reqwest::Client, url: &str, ns: &str, n: usize, par: usize) {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..par {
        let c = c.clone();
        let url = url.to_string();
        let ns = ns.to_string();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i:06}"), "labels": {"app": "bench", "shard": format!("{}", i % 10)}},
                    "data": {"payload": "x".repeat(128), "index": i.to_string()}});
                let r = c
                    .post(format!("{url}/api/v1/namespaces/{ns}/configmaps"))
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success(), "{}", r.status());
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

/// Pages through a whole collection with `limit` (every page after the first is a read at a
/// past revision through its continue token) and prints the total and per-page time.
async fn time_paging(c: &reqwest::Client, url: &str, path: &str, limit: usize, expect: usize) {
    let (total, pages, items, _) = page_through(c, &format!("{url}{path}"), limit).await;
    assert!(items >= expect);
    println!(
        "PAGE   {items:>6} objects ?limit={limit:<14} total  {:>8.1} ms  {pages} pages, {:.1} ms/page",
        total.as_secs_f64() * 1000.0,
        total.as_secs_f64() * 1000.0 / pages as f64
    );
}

async fn time_list(c: &reqwest::Client, url: &str, path: &str, query: &str, expect: usize) {
    let (median, bytes, items) = median_list(c, &format!("{url}{path}{query}")).await;
    assert!(items >= expect);
    println!(
        "LIST {expect:>6} objects {query:<20} median {:>8.1} ms  {:>7.1} MB/s  ({:.1} MB)",
        median.as_secs_f64() * 1000.0,
        bytes as f64 / 1e6 / median.as_secs_f64(),
        bytes as f64 / 1e6
    );
}

/// RSS delta of 1,000 idle watchers (over 10 HTTP/2 connections) on a fresh server.
async fn idle_watcher_memory(server: &Server, pid: u32) {
    let clients: Vec<reqwest::Client> = (0..CLIENTS).map(|_| server.client()).collect();
    // Warm the connections first so their TLS state is not counted.
    for c in &clients {
        c.get(format!("{}/api/v1/namespaces/idle/configmaps", server.url))
            .send()
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_kib(pid);
    let mut streams = Vec::new();
    for i in 0..WATCHERS {
        let resp = clients[i % CLIENTS]
            .get(format!(
                "{}/api/v1/namespaces/idle/configmaps?watch=1&resourceVersion=0&allowWatchBookmarks=true",
                server.url
            ))
            .timeout(Duration::from_secs(300))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success());
        streams.push(resp);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_kib(pid);
    println!(
        "memory: {WATCHERS} idle watchers: RSS {before} -> {after} KiB, {:.1} KiB per watcher",
        (after as f64 - before as f64) / WATCHERS as f64
    );
    drop(streams);
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

async fn run() {
    let small = std::env::var("RAFTER_BENCH_SMALL").is_ok();
    let (n_small, n_large) = if small {
        (1_000, 10_000)
    } else {
        (10_000, 100_000)
    };
    let server = Server::start_with(&["--watch-queue", "4096"]);
    let pid = server.pid().unwrap();
    let url = server.url.clone();
    let c = support::http1_client(&server);
    let started = Instant::now();
    for ns in ["small", "large", "lat", "idle"] {
        create_namespace(&c, &url, ns).await;
    }
    idle_watcher_memory(&server, pid).await;
    fill(&c, &url, "small", n_small, 64).await;
    fill(&c, &url, "large", n_large - n_small, 64).await;
    println!(
        "created {n_large} ConfigMaps in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for (path, n) in [
        ("/api/v1/namespaces/small/configmaps", n_small),
        ("/api/v1/configmaps", n_large),
    ] {
        time_list(&c, &url, path, "?resourceVersion=0", n).await;
        time_list(&c, &url, path, "", n).await;
        time_list(&c, &url, path, "?limit=500", 500).await;
        time_paging(&c, &url, path, 500, n).await;
    }

    // 1,000 watchers over 10 HTTP/2 connections.
    let seqs: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; UPDATES]));
    let latencies: Arc<Mutex<Vec<Duration>>> = Arc::new(Mutex::new(Vec::new()));
    let ready = Arc::new(tokio::sync::Semaphore::new(0));
    let mut tasks = Vec::new();
    let clients: Vec<reqwest::Client> = (0..CLIENTS).map(|_| server.client()).collect();
    let l: Value = c
        .get(format!("{url}/api/v1/namespaces/lat/configmaps"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rv = l["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    for i in 0..WATCHERS {
        let c = clients[i % CLIENTS].clone();
        let url = format!(
            "{url}/api/v1/namespaces/lat/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=600"
        );
        let seqs = seqs.clone();
        let latencies = latencies.clone();
        let ready = ready.clone();
        tasks.push(tokio::spawn(async move {
            let mut resp = c
                .get(url)
                .timeout(Duration::from_secs(900))
                .send()
                .await
                .unwrap();
            ready.add_permits(1);
            let mut buf = Vec::new();
            let mut seen = 0;
            while seen < UPDATES {
                let chunk = match resp.chunk().await {
                    Ok(Some(c)) => c,
                    _ => return,
                };
                let now = Instant::now();
                buf.extend_from_slice(&chunk);
                while let Some(p) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=p).collect();
                    let e: Value = serde_json::from_slice(&line).unwrap();
                    if let Some(seq) = e["object"]["data"]["seq"]
                        .as_str()
                        .and_then(|s| s.parse::<usize>().ok())
                    {
                        if let Some(t0) = seqs.lock().unwrap()[seq] {
                            latencies.lock().unwrap().push(now - t0);
                        }
                        seen += 1;
                    }
                }
            }
        }));
    }
    let _ = ready.acquire_many(WATCHERS as u32).await.unwrap();

    // Event delivery latency: write → event received, for every watcher.
    for seq in 0..UPDATES {
        seqs.lock().unwrap()[seq] = Some(Instant::now());
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("lat-{seq}")}, "data": {"seq": seq.to_string()}});
        let r = c
            .post(format!("{url}/api/v1/namespaces/lat/configmaps"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    for t in tasks {
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = tokio::time::timeout(left, t).await;
    }
    let mut l = latencies.lock().unwrap().clone();
    l.sort();
    println!(
        "watch latency: {} watchers x {UPDATES} events, {} samples: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        WATCHERS,
        l.len(),
        percentile(&l, 0.5).as_secs_f64() * 1000.0,
        percentile(&l, 0.99).as_secs_f64() * 1000.0,
        l.last().copied().unwrap_or_default().as_secs_f64() * 1000.0
    );
    println!("bench total {:.1} s", started.elapsed().as_secs_f64());
}
