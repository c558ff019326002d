//! The request-path cost of authentication (not a timed test; `cargo bench --bench authn`):
//! linearizable GETs per second of one object through the real binary, 16 concurrent clients,
//! as a client certificate, a static bearer token and a service-account token (signature and
//! lookup on every request), in one run. `RAFTER_BENCH_SECONDS` sets each phase's length
//! (default 5).

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::Server;

const CLIENTS: usize = 16;

async fn phase(label: &str, url: &str, client: reqwest::Client, token: Option<String>, secs: u64) {
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

fn main() {
    let secs: u64 = std::env::var("RAFTER_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "bench-token,bencher,1,\"dev\"\n").unwrap();
    let s = Server::start_with(&["--token-auth-file", tokens.to_str().unwrap()]);
    s.ok(&["create", "serviceaccount", "bench"]);
    let sa_token = s.ok(&["create", "token", "bench"]).trim().to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // Warm up connections and caches.
        phase("warm-up", &s.url, s.client(), None, 1).await;
        phase("client certificate", &s.url, s.client(), None, secs).await;
        phase(
            "static token",
            &s.url,
            s.anonymous_client(),
            Some("bench-token".into()),
            secs,
        )
        .await;
        phase(
            "service-account token",
            &s.url,
            s.anonymous_client(),
            Some(sa_token),
            secs,
        )
        .await;
    });
}
