//! Load phases shared by the benches: `CLIENTS` concurrent clients GET one object for a
//! number of seconds and the phase prints its rate; the small helpers every bench uses
//! (environment knobs, `/proc` memory fields, namespaces, percentiles); and the watch
//! delivery measurement (paced sequence-numbered merge patches, watchers that time their
//! events). Each bench uses a part of it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const CLIENTS: usize = 16;

pub async fn phase(
    label: &str,
    url: &str,
    client: reqwest::Client,
    token: Option<String>,
    secs: u64,
) {
    let done = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let end = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (c, t, url, done, failed) = (
            client.clone(),
            token.clone(),
            url.to_string(),
            done.clone(),
            failed.clone(),
        );
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                let mut r = c.get(format!("{url}/api/v1/namespaces/default"));
                if let Some(t) = &t {
                    r = r.bearer_auth(t);
                }
                match r.send().await {
                    Ok(resp) if resp.status().is_success() => {
                        let _ = resp.bytes().await;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let n = done.load(Ordering::Relaxed);
    println!(
        "{label:<22} {:>8.0} GET/s  ({n} ok, {} failed, {CLIENTS} clients, {secs} s)",
        n as f64 / secs as f64,
        failed.load(Ordering::Relaxed)
    );
}

/// Each phase's length: `RAFTER_BENCH_SECONDS`, default 5.
pub fn phase_seconds() -> u64 {
    std::env::var("RAFTER_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
}

/// A temporary folder and the path of a token file in it (written by the caller).
pub fn token_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    (dir, tokens)
}

/// An environment variable as a number, or `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// One `kB` field of `/proc/<pid>/status` (`VmRSS:`, `VmHWM:`, `RssAnon:`, ...), in KiB.
pub fn proc_status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

/// utime + stime of a process (`pid`, or `"self"`), in clock ticks (`TICKS_PER_SEC`).
pub fn cpu_ticks(pid: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the `(comm)`: state is field 3, utime 14, stime 15.
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    get(11) + get(12)
}

pub const TICKS_PER_SEC: f64 = 100.0;

/// The resident set of a process, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    proc_status_kib(pid, "VmRSS:")
}

/// Creates namespace `ns` (the client carries the credentials).
pub async fn create_namespace(c: &reqwest::Client, url: &str, ns: &str) {
    let r = c
        .post(format!("{url}/api/v1/namespaces"))
        .header("content-type", "application/json")
        .body(format!(
            r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{ns}"}}}}"#
        ))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
}

/// The nearest-rank percentile `p` (0..=1) of sorted samples (0 when there are none).
pub fn pct(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Nanoseconds as milliseconds.
pub fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Shared counters of watchers measuring delivery of sequence-numbered writes (see
/// `paced_patches` and `watcher`).
pub struct Stats {
    pub start: Instant,
    /// Per write sequence number: when it was sent and acknowledged (ns since `start`, 0 =
    /// not yet).
    pub sent: Vec<AtomicU64>,
    pub acked: Vec<AtomicU64>,
    pub events: AtomicU64,
    pub errors: AtomicU64,
    pub lat_ack: std::sync::Mutex<Vec<u64>>,
    pub lat_sent: std::sync::Mutex<Vec<u64>>,
    pub before_ack: AtomicU64,
    pub measuring: std::sync::atomic::AtomicBool,
}

impl Stats {
    /// Counters for `writes` sequence-numbered writes, not measuring yet.
    pub fn new(writes: usize) -> Stats {
        Stats {
            start: Instant::now(),
            sent: (0..writes).map(|_| AtomicU64::new(0)).collect(),
            acked: (0..writes).map(|_| AtomicU64::new(0)).collect(),
            events: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            lat_ack: Default::default(),
            lat_sent: Default::default(),
            before_ack: AtomicU64::new(0),
            measuring: Default::default(),
        }
    }

    pub fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Waits (at most `max`) until no event arrived for 300 ms.
    pub async fn settle(&self, max: Duration) {
        let settle = Instant::now();
        let mut last = self.events.load(Ordering::Relaxed);
        while settle.elapsed() < max {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let now = self.events.load(Ordering::Relaxed);
            if now == last {
                break;
            }
            last = now;
        }
    }
}

/// The annotation `paced_patches` writes its sequence number into, as it appears in events.
pub const SEQ: &[u8] = b"\"bench/seq\":\"";

/// The sequence number a watch event line carries, if any.
pub fn seq_of(line: &[u8]) -> Option<usize> {
    let at = line.windows(SEQ.len()).position(|w| w == SEQ)? + SEQ.len();
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&line[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

/// Reads a watch stream until it ends (or the task is aborted): while `stats.measuring`,
/// counts events and ERROR events and records each sequence-numbered event's latency from
/// the write's acknowledgement (0 when the event came first) and from its sending.
pub async fn watcher(resp: reqwest::Response, stats: Arc<Stats>) {
    let mut resp = resp;
    let mut buf: Vec<u8> = Vec::new();
    let mut lat_ack = Vec::new();
    let mut lat_sent = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        let now = stats.now();
        buf.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(p) = buf[start..].iter().position(|b| *b == b'\n') {
            let line = &buf[start..start + p];
            start += p + 1;
            if !stats.measuring.load(Ordering::Relaxed) {
                continue;
            }
            if line.starts_with(b"{\"type\":\"ERROR\"") {
                stats.errors.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            stats.events.fetch_add(1, Ordering::Relaxed);
            if let Some(seq) = seq_of(line).filter(|s| *s < stats.sent.len()) {
                let sent = stats.sent[seq].load(Ordering::Acquire);
                let acked = stats.acked[seq].load(Ordering::Acquire);
                if sent > 0 {
                    lat_sent.push(now.saturating_sub(sent));
                }
                if acked > 0 {
                    lat_ack.push(now.saturating_sub(acked));
                } else {
                    stats.before_ack.fetch_add(1, Ordering::Relaxed);
                    lat_ack.push(0);
                }
            }
        }
        buf.drain(..start);
        // Handed over per chunk: the task is aborted at the end.
        if !lat_ack.is_empty() {
            stats.lat_ack.lock().unwrap().append(&mut lat_ack);
        }
        if !lat_sent.is_empty() {
            stats.lat_sent.lock().unwrap().append(&mut lat_sent);
        }
    }
}

/// Writers, one per client: `stats.sent.len()` merge patches at `rate` per second on a
/// shared schedule, write `seq` on `{url}/api/v1/{path(seq)}` with annotation `bench/seq`
/// = seq (a patch that changes nothing makes no event: `path` should not repeat an object
/// and sequence number of an earlier run). Returns the sequence numbers and latencies (µs)
/// of the successful writes; a writer still busy after `wait` is left out.
pub async fn paced_patches(
    clients: Vec<reqwest::Client>,
    url: &str,
    rate: usize,
    stats: Arc<Stats>,
    path: Arc<dyn Fn(usize) -> String + Send + Sync>,
    wait: Duration,
) -> Vec<(usize, u64)> {
    let total = stats.sent.len();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let t0 = tokio::time::Instant::now();
    let mut tasks = Vec::new();
    for c in clients {
        let (url, next, stats, path) = (url.to_string(), next.clone(), stats.clone(), path.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let seq = next.fetch_add(1, Ordering::Relaxed);
                if seq >= total {
                    return lat;
                }
                let due = t0 + Duration::from_secs_f64(seq as f64 / rate.max(1) as f64);
                tokio::time::sleep_until(due).await;
                let body = format!(r#"{{"metadata":{{"annotations":{{"bench/seq":"{seq}"}}}}}}"#);
                stats.sent[seq].store(stats.now().max(1), Ordering::Release);
                let w = Instant::now();
                let r = c
                    .patch(format!("{url}/api/v1/{}", path(seq)))
                    .header("content-type", "application/merge-patch+json")
                    .body(body)
                    .send()
                    .await;
                let ok = match r {
                    Ok(r) => {
                        let ok = r.status().is_success();
                        let _ = r.bytes().await;
                        ok
                    }
                    Err(_) => false,
                };
                stats.acked[seq].store(stats.now().max(1), Ordering::Release);
                if ok {
                    lat.push((seq, w.elapsed().as_micros() as u64));
                }
            }
        }));
    }
    let mut lat = Vec::new();
    for t in tasks {
        if let Ok(Ok(mut l)) = tokio::time::timeout(wait, t).await {
            lat.append(&mut l);
        }
    }
    lat
}

/// What the benches read of a LIST body (the items are only counted).
#[derive(serde::Deserialize)]
pub struct ListBody {
    #[serde(default)]
    pub metadata: ListMeta,
    #[serde(default)]
    pub items: Vec<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize, Default)]
pub struct ListMeta {
    #[serde(default, rename = "resourceVersion")]
    pub resource_version: String,
    #[serde(default, rename = "continue")]
    pub continue_token: String,
}

/// GET of a LIST (the client carries the credentials): its body and what it says; panics
/// unless it succeeded.
pub async fn get_list(c: &reqwest::Client, url: &str) -> (bytes::Bytes, ListBody) {
    let r = c.get(url).send().await.unwrap();
    let st = r.status();
    let body = r.bytes().await.unwrap();
    assert!(
        st.is_success(),
        "{url}: {st} {}",
        String::from_utf8_lossy(&body[..body.len().min(300)])
    );
    let parsed = serde_json::from_slice(&body).unwrap();
    (body, parsed)
}

/// The same LIST three times: the median time to its whole body, the body's bytes and its
/// items.
pub async fn median_list(c: &reqwest::Client, url: &str) -> (Duration, usize, usize) {
    let mut times = Vec::new();
    let (mut bytes, mut items) = (0, 0);
    for _ in 0..3 {
        let t = Instant::now();
        let (body, list) = get_list(c, url).await;
        times.push(t.elapsed());
        bytes = body.len();
        items = list.items.len();
    }
    times.sort();
    (times[1], bytes, items)
}

/// Pages through a whole collection (`url` without a query) with `limit`, following the
/// continue tokens (every page after the first is a read at the first page's revision):
/// total time, pages, items and bytes of all the bodies.
pub async fn page_through(
    c: &reqwest::Client,
    url: &str,
    limit: usize,
) -> (Duration, usize, usize, usize) {
    let t = Instant::now();
    let (mut pages, mut items, mut bytes) = (0, 0, 0);
    let mut token = String::new();
    loop {
        let mut q = format!("{url}?limit={limit}");
        if !token.is_empty() {
            q.push_str("&continue=");
            q.extend(form_urlencoded::byte_serialize(token.as_bytes()));
        }
        let (body, page) = get_list(c, &q).await;
        pages += 1;
        items += page.items.len();
        bytes += body.len();
        if page.metadata.continue_token.is_empty() {
            break;
        }
        token = page.metadata.continue_token;
    }
    (t.elapsed(), pages, items, bytes)
}

/// Sends watch request number `i` (bounded: 60 s); the response when it is a success, else
/// `None` after printing why.
pub async fn open_watch(r: reqwest::RequestBuilder, i: usize) -> Option<reqwest::Response> {
    match tokio::time::timeout(Duration::from_secs(60), r.send()).await {
        Ok(Ok(resp)) if resp.status().is_success() => Some(resp),
        Ok(Ok(resp)) => {
            eprintln!("watch {i}: {}", resp.status());
            None
        }
        Ok(Err(e)) => {
            eprintln!("watch {i}: {e}");
            None
        }
        Err(_) => None,
    }
}
