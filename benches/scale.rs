//! Scale figures against the real binary (not a timed test; `cargo test --bench scale`):
//! one replica with its defaults (authentication, RBAC, default admission; the admin client
//! certificate) is grown, cumulatively, to each N of `RAFTER_BENCH_SCALES` (default
//! `10000,100000,1000000`) ConfigMaps of about 1 KiB of JSON, in namespaces of 10,000
//! objects (`scale-0`, `scale-1`, ...; `scale-0` is filled first, so it holds min(N, 10k)).
//! After each growth step it waits (up to 2 min) for the server to go idle, then prints:
//!
//! 1. write: creates/s and p50/p99 latency over the last (up to) 10,000 creates of the step
//!    (64 writers on HTTP/1.1 connections);
//! 2. LIST of `scale-0` in JSON, consistent (resourceVersion unset) and `resourceVersion=0`:
//!    median of 3, ms and ms/MB (the namespace holds 10k objects at every N ≥ 10k, so growth
//!    shows what the total N costs);
//! 3. LIST of all ConfigMaps with `limit=500`: the first page (median of 3; and of `scale-0`
//!    alone, for comparison), and paging through everything with continue tokens (total
//!    time, objects/s);
//! 4. watch fan-out: `RAFTER_BENCH_WATCHERS` watchers (default 1,000, over 10 HTTP/2
//!    connections) of the ConfigMaps of `scale-0` from the resourceVersion of a fresh LIST,
//!    half with a label selector that matches half the objects, then `RAFTER_BENCH_RATE`
//!    (default 200) merge patches/s for `RAFTER_BENCH_SECONDS` (default 5) on objects of
//!    `scale-0`, each carrying its sequence number: delivery latency (write acknowledged →
//!    event) p50/p99, events delivered vs expected, CPU of the server and of the bench;
//! 5. server VmRSS, and the JSON size of the stored objects (the sum of the paged LIST
//!    bodies) with RSS / JSON.
//!
//! Then one table with a column per N. `RAFTER_BENCH_SMOKE=1` runs N = 1000, 3000 with short
//! phases; `RAFTER_TEST_BIN=<path>` runs another build of the server (a release binary for
//! absolute figures).

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{
    cpu_ticks, create_namespace, env_usize, get_list, median_list, ms, page_through, pct, rss_kib,
    watcher, Stats, TICKS_PER_SEC,
};
use support::Server;

/// Objects per namespace.
const PER_NS: usize = 10_000;
/// Concurrent creators.
const WRITERS: usize = 64;
/// The creates whose latency and rate a growth step reports (its last ones).
const WINDOW: usize = 10_000;
/// Page size of the all-namespaces LIST.
const PAGE: usize = 500;
/// HTTP/2 connections of the watchers.
const WATCH_CONNS: usize = 10;

/// The knobs of one run.
#[derive(Clone, Debug)]
struct Knobs {
    scales: Vec<usize>,
    watchers: usize,
    rate: usize,
    seconds: u64,
}

impl Knobs {
    fn from_env() -> Knobs {
        let smoke = std::env::var("RAFTER_BENCH_SMOKE").is_ok_and(|v| v != "0" && !v.is_empty());
        let scales = std::env::var("RAFTER_BENCH_SCALES")
            .ok()
            .map(|s| {
                s.split(',')
                    .filter_map(|n| n.trim().replace('_', "").parse().ok())
                    .collect::<Vec<usize>>()
            })
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| {
                if smoke {
                    vec![1_000, 3_000]
                } else {
                    vec![10_000, 100_000, 1_000_000]
                }
            });
        let mut scales = scales;
        scales.sort_unstable();
        scales.dedup();
        Knobs {
            scales,
            watchers: env_usize("RAFTER_BENCH_WATCHERS", if smoke { 100 } else { 1_000 }).max(2),
            rate: env_usize("RAFTER_BENCH_RATE", if smoke { 50 } else { 200 }).max(1),
            seconds: env_usize("RAFTER_BENCH_SECONDS", if smoke { 2 } else { 5 }).max(1) as u64,
        }
    }
}

/// Figures of one N.
#[derive(Default, Clone)]
struct Figures {
    n: usize,
    create_rate: f64,
    create_p50_ms: f64,
    create_p99_ms: f64,
    create_failed: usize,
    list_items: usize,
    list_mb: f64,
    list_ms: f64,
    list_rv0_ms: f64,
    first_page_ms: f64,
    ns_first_page_ms: f64,
    paged_items: usize,
    paging_s: f64,
    paged_mb: f64,
    watchers: usize,
    writes: usize,
    delivered: u64,
    expected: u64,
    errors: u64,
    fanout_p50_ms: f64,
    fanout_p99_ms: f64,
    /// CPU of the server and of this bench (its watchers) over the writes, in cores.
    fanout_server_cores: f64,
    fanout_client_cores: f64,
    rss_kib: u64,
}

fn namespace_of(i: usize) -> String {
    format!("scale-{}", i / PER_NS)
}

/// Tier of object `i`: half are `web` (the watchers' label selector), half `batch`.
fn tier(i: usize) -> &'static str {
    if i.is_multiple_of(2) {
        "web"
    } else {
        "batch"
    }
}

/// ConfigMap `i` (about 1 KiB of JSON once stored with its metadata).
fn configmap(i: usize) -> String {
    let settings: String = (0..40)
        .map(|k| format!("key{k:02}=value-{:04}\n", (i + k) % 10_000))
        .collect();
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": format!("cm-{i:07}"),
            "labels": {"app": format!("app-{}", i % 100), "tier": tier(i)},
        },
        "data": {"settings": settings, "owner": "team-scale", "index": i.to_string()},
    })
    .to_string()
}

/// Creates ConfigMaps `from..to` with `WRITERS` concurrent writers; returns creates/s and
/// p50/p99 (ms) over the last `WINDOW` of them, and how many failed (after three tries).
async fn grow(
    c: &reqwest::Client,
    url: &str,
    pid: u32,
    from: usize,
    to: usize,
) -> (f64, f64, f64, usize) {
    let window_start = to.saturating_sub(WINDOW).max(from);
    let next = Arc::new(AtomicUsize::new(from));
    let failed = Arc::new(AtomicUsize::new(0));
    let window_t0: Arc<Mutex<Option<Instant>>> = Arc::default();
    let progress = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..WRITERS {
        let (c, url, next, failed, window_t0) = (
            c.clone(),
            url.to_string(),
            next.clone(),
            failed.clone(),
            window_t0.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= to {
                    return lat;
                }
                if i == window_start {
                    *window_t0.lock().unwrap() = Some(Instant::now());
                }
                if i > from && (i - from).is_multiple_of(100_000) {
                    println!(
                        "  ... {i} objects ({:.0} s), server RSS {} MiB",
                        progress.elapsed().as_secs_f64(),
                        rss_kib(pid) / 1024
                    );
                }
                let body = configmap(i);
                let t = Instant::now();
                let mut ok = false;
                for attempt in 0..3 {
                    let r = c
                        .post(format!(
                            "{url}/api/v1/namespaces/{}/configmaps",
                            namespace_of(i)
                        ))
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .await;
                    match r {
                        Ok(r) if r.status().is_success() || r.status().as_u16() == 409 => {
                            let _ = r.bytes().await;
                            ok = true;
                            break;
                        }
                        Ok(r) => {
                            let st = r.status();
                            let text = r.text().await.unwrap_or_default();
                            eprintln!("create {i} (try {attempt}): {st} {text}");
                        }
                        Err(e) => eprintln!("create {i} (try {attempt}): {e}"),
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                if !ok {
                    failed.fetch_add(1, Ordering::Relaxed);
                } else if i >= window_start {
                    lat.push(t.elapsed().as_nanos() as u64);
                }
            }
        }));
    }
    let mut lat = Vec::new();
    for t in tasks {
        lat.append(&mut t.await.unwrap());
    }
    let secs = window_t0
        .lock()
        .unwrap()
        .map_or(0.0, |t0| t0.elapsed().as_secs_f64());
    lat.sort_unstable();
    let rate = if secs > 0.0 {
        (to - window_start) as f64 / secs
    } else {
        0.0
    };
    (
        rate,
        ms(pct(&lat, 0.5)),
        ms(pct(&lat, 0.99)),
        failed.load(Ordering::Relaxed),
    )
}

/// Watchers of `scale-0` (half label selected), then paced patches there; fills the fan-out
/// figures.
///
/// Step `step` patches object `(seq * 7 + step) % in_ns` with sequence number `seq`, so no
/// patch repeats one of an earlier step (it would change nothing and make no event); `web`
/// and `batch` objects alternate.
async fn fanout(server: &Server, k: &Knobs, step: usize, in_ns: usize, f: &mut Figures) {
    let url = &server.url;
    let clients: Vec<reqwest::Client> = (0..WATCH_CONNS)
        .map(|_| {
            server
                .client_builder()
                .http2_prior_knowledge()
                .timeout(Duration::from_secs(3600))
                .build()
                .unwrap()
        })
        .collect();
    let ns_url = format!("{url}/api/v1/namespaces/scale-0/configmaps");
    let (_, fresh) = get_list(&clients[0], &format!("{ns_url}?limit=1")).await;
    let rv = fresh.metadata.resource_version;
    let writes = k.rate * k.seconds as usize;
    let stats = Arc::new(Stats::new(writes));
    let gate = Arc::new(tokio::sync::Semaphore::new(256));
    let mut opens = Vec::new();
    for w in 0..k.watchers {
        let selector = if w % 2 == 0 {
            "&labelSelector=tier%3Dweb"
        } else {
            ""
        };
        let u = format!("{ns_url}?watch=1&timeoutSeconds=3600&resourceVersion={rv}{selector}");
        let (c, gate) = (clients[w % WATCH_CONNS].clone(), gate.clone());
        opens.push(tokio::spawn(async move {
            let _p = gate.acquire_owned().await.unwrap();
            common::open_watch(c.get(u), w).await
        }));
    }
    let (mut tasks, mut selected) = (Vec::new(), 0u64);
    for (w, o) in opens.into_iter().enumerate() {
        if let Ok(Ok(Some(r))) = tokio::time::timeout(Duration::from_secs(180), o).await {
            selected += u64::from(w % 2 == 0);
            tasks.push(tokio::spawn(watcher(r, stats.clone())));
        }
    }
    let open = tasks.len() as u64;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stats.measuring.store(true, Ordering::SeqCst);
    let pid = server.pid().unwrap().to_string();
    let (cpu0, me0, t0) = (cpu_ticks(&pid), cpu_ticks("self"), Instant::now());
    let writers: Vec<reqwest::Client> = (0..8).map(|_| support::http1_client(server)).collect();
    let object = move |seq: usize| (seq * 7 + step) % in_ns;
    let path =
        Arc::new(move |seq: usize| format!("namespaces/scale-0/configmaps/cm-{:07}", object(seq)));
    let lat = common::paced_patches(
        writers,
        url,
        k.rate,
        stats.clone(),
        path,
        Duration::from_secs(k.seconds + 120),
    )
    .await;
    stats.settle(Duration::from_secs(10)).await;
    stats.measuring.store(false, Ordering::SeqCst);
    let busy = t0.elapsed().as_secs_f64() * TICKS_PER_SEC;
    f.fanout_server_cores = (cpu_ticks(&pid) - cpu0) as f64 / busy;
    f.fanout_client_cores = (cpu_ticks("self") - me0) as f64 / busy;
    for t in &tasks {
        t.abort();
    }
    for t in tasks {
        let _ = t.await;
    }
    // Every acknowledged write reaches the unselected watchers, and the selected ones when
    // it patched a `web` object.
    let expected = lat
        .iter()
        .map(|(seq, _)| {
            (open - selected)
                + if tier(object(*seq)) == "web" {
                    selected
                } else {
                    0
                }
        })
        .sum();
    let mut la = std::mem::take(&mut *stats.lat_ack.lock().unwrap());
    la.sort_unstable();
    f.watchers = open as usize;
    f.writes = lat.len();
    f.delivered = stats.events.load(Ordering::Relaxed);
    f.expected = expected;
    f.errors = stats.errors.load(Ordering::Relaxed);
    f.fanout_p50_ms = ms(pct(&la, 0.5));
    f.fanout_p99_ms = ms(pct(&la, 0.99));
}

/// Waits (at most `max`) until the server used under a fifth of a core over a second (its
/// compactions after a load would otherwise be measured with the reads); returns the wait.
async fn idle(pid: u32, max: Duration) -> Duration {
    let t = Instant::now();
    let pid = pid.to_string();
    while t.elapsed() < max {
        let before = cpu_ticks(&pid);
        tokio::time::sleep(Duration::from_secs(1)).await;
        if ((cpu_ticks(&pid) - before) as f64) < TICKS_PER_SEC / 5.0 {
            break;
        }
    }
    t.elapsed()
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn label(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

fn table(all: &[Figures]) {
    let mut out = String::from("|  |");
    for f in all {
        out.push_str(&format!(" {} |", label(f.n)));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(all.len()));
    out.push('\n');
    let row = |out: &mut String, name: &str, cell: &dyn Fn(&Figures) -> String| {
        out.push_str(&format!("| {name} |"));
        for f in all {
            out.push_str(&format!(" {} |", cell(f)));
        }
        out.push('\n');
    };
    row(&mut out, "creates/s (last ≤10k of the step)", &|f| {
        format!("{:.0}", f.create_rate)
    });
    row(&mut out, "create p50 / p99", &|f| {
        format!("{:.1} / {:.1} ms", f.create_p50_ms, f.create_p99_ms)
    });
    row(&mut out, "LIST `scale-0`, consistent", &|f| {
        format!(
            "{:.1} ms ({:.1} ms/MB)",
            f.list_ms,
            f.list_ms / f.list_mb.max(1e-9)
        )
    });
    row(&mut out, "LIST `scale-0`, `resourceVersion=0`", &|f| {
        format!(
            "{:.1} ms ({:.1} ms/MB)",
            f.list_rv0_ms,
            f.list_rv0_ms / f.list_mb.max(1e-9)
        )
    });
    row(&mut out, "`scale-0` objects / MB", &|f| {
        format!("{} / {:.1}", f.list_items, f.list_mb)
    });
    row(&mut out, "all namespaces `limit=500`: first page", &|f| {
        format!("{:.1} ms", f.first_page_ms)
    });
    row(&mut out, "`scale-0` `limit=500`: first page", &|f| {
        format!("{:.1} ms", f.ns_first_page_ms)
    });
    row(&mut out, "paging through all", &|f| {
        format!(
            "{:.1} s ({:.0} objects/s)",
            f.paging_s,
            f.paged_items as f64 / f.paging_s.max(1e-9)
        )
    });
    row(&mut out, "watch delivery p50 / p99", &|f| {
        format!("{:.1} / {:.1} ms", f.fanout_p50_ms, f.fanout_p99_ms)
    });
    row(&mut out, "events delivered / expected", &|f| {
        format!("{} / {}", f.delivered, f.expected)
    });
    row(&mut out, "CPU during fan-out: server / bench", &|f| {
        format!(
            "{:.2} / {:.2} cores",
            f.fanout_server_cores, f.fanout_client_cores
        )
    });
    row(&mut out, "server RSS", &|f| {
        format!("{:.0} MiB", f.rss_kib as f64 / 1024.0)
    });
    row(&mut out, "stored JSON; RSS / JSON", &|f| {
        format!(
            "{:.0} MiB; {:.1}",
            f.paged_mb * 1e6 / 1048576.0,
            f.rss_kib as f64 * 1024.0 / (f.paged_mb * 1e6).max(1.0)
        )
    });
    print!("{out}");
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

async fn run() {
    let k = Knobs::from_env();
    println!(
        "knobs: {k:?}; bench client build: {}; server: {}",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        std::env::var("RAFTER_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_rafter").into())
    );
    let started = Instant::now();
    let server = Server::start();
    let pid = server.pid().unwrap();
    let url = server.url.clone();
    let c = support::http1_client(&server);
    let mut namespaces = 0;
    let mut have = 0;
    let mut all = Vec::new();
    for &n in &k.scales {
        let mut f = Figures {
            n,
            ..Default::default()
        };
        println!("== N = {n} ({:.0} s in)", started.elapsed().as_secs_f64());
        while namespaces * PER_NS < n {
            create_namespace(&c, &url, &format!("scale-{namespaces}")).await;
            namespaces += 1;
        }
        let t = Instant::now();
        (
            f.create_rate,
            f.create_p50_ms,
            f.create_p99_ms,
            f.create_failed,
        ) = grow(&c, &url, pid, have, n).await;
        println!(
            "write: {} creates in {:.1} s; last {}: {:.0}/s, p50 {:.1} ms, p99 {:.1} ms; {} failed",
            n - have,
            t.elapsed().as_secs_f64(),
            (n - have).min(WINDOW),
            f.create_rate,
            f.create_p50_ms,
            f.create_p99_ms,
            f.create_failed
        );
        have = n;
        let waited = idle(pid, Duration::from_secs(120)).await;
        f.rss_kib = rss_kib(pid);
        println!(
            "server RSS after the load: {} KiB (peak {} KiB); idle after {:.0} s",
            f.rss_kib,
            common::proc_status_kib(pid, "VmHWM:"),
            waited.as_secs_f64()
        );

        let ns_url = format!("{url}/api/v1/namespaces/scale-0/configmaps");
        let (t, bytes, items) = median_list(&c, &ns_url).await;
        (f.list_ms, f.list_mb, f.list_items) = (millis(t), bytes as f64 / 1e6, items);
        f.list_rv0_ms = millis(
            median_list(&c, &format!("{ns_url}?resourceVersion=0"))
                .await
                .0,
        );
        println!(
            "LIST scale-0 ({} objects, {:.1} MB): consistent {:.1} ms ({:.1} ms/MB), resourceVersion=0 {:.1} ms ({:.1} ms/MB)",
            f.list_items,
            f.list_mb,
            f.list_ms,
            f.list_ms / f.list_mb.max(1e-9),
            f.list_rv0_ms,
            f.list_rv0_ms / f.list_mb.max(1e-9)
        );

        let all_url = format!("{url}/api/v1/configmaps");
        f.first_page_ms = millis(median_list(&c, &format!("{all_url}?limit={PAGE}")).await.0);
        f.ns_first_page_ms = millis(median_list(&c, &format!("{ns_url}?limit={PAGE}")).await.0);
        let (t, _, items, bytes) = page_through(&c, &all_url, PAGE).await;
        (f.paging_s, f.paged_items, f.paged_mb) = (t.as_secs_f64(), items, bytes as f64 / 1e6);
        println!(
            "LIST limit={PAGE}, first page (median of 3): all namespaces {:.1} ms, scale-0 {:.1} ms; paging all: {} objects in {:.1} s ({:.0} objects/s, {:.1} MB of pages)",
            f.first_page_ms,
            f.ns_first_page_ms,
            f.paged_items,
            f.paging_s,
            f.paged_items as f64 / f.paging_s.max(1e-9),
            f.paged_mb
        );

        fanout(&server, &k, all.len(), n.min(PER_NS), &mut f).await;
        println!(
            "watch fan-out: {} watchers, {} writes at {}/s: delivered {} / expected {} events, {} ERROR, ack -> event p50 {:.1} ms, p99 {:.1} ms; CPU server {:.2} cores, bench {:.2} cores",
            f.watchers,
            f.writes,
            k.rate,
            f.delivered,
            f.expected,
            f.errors,
            f.fanout_p50_ms,
            f.fanout_p99_ms,
            f.fanout_server_cores,
            f.fanout_client_cores
        );
        let rss_end = rss_kib(pid);
        println!(
            "server RSS after the step: {rss_end} KiB; stored JSON {:.1} MiB, RSS (after load) / JSON {:.2}",
            f.paged_mb * 1e6 / 1048576.0,
            f.rss_kib as f64 * 1024.0 / (f.paged_mb * 1e6).max(1.0)
        );
        all.push(f);
        println!();
        table(&all);
        println!();
    }
    println!("bench total {:.1} s", started.elapsed().as_secs_f64());
}
