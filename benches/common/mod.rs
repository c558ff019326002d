//! Load phases shared by the benches: `CLIENTS` concurrent clients GET one object for a
//! number of seconds and the phase prints its rate; and the small helpers every bench uses
//! (environment knobs, `/proc` memory fields, namespaces). Each bench uses a part of it.
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
