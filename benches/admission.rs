//! Admission figures against the real binary (not a timed test; `cargo bench --bench
//! admission`): ConfigMap creates/s with kube's default plugins against none, and with a
//! ResourceQuota charged on every create (quota-charging throughput), in one run.
//! `RAFTER_BENCH_SMALL=1` scales the counts down by 10.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::Server;

const WRITERS: usize = 32;

async fn post(c: &reqwest::Client, url: &str, body: &Value) -> u16 {
    c.post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

/// Creates `n` ConfigMaps in `ns`; returns creates/s.
async fn fill(c: &reqwest::Client, url: &str, ns: &str, n: usize) -> f64 {
    let next = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..WRITERS {
        let (c, target, next) = (
            c.clone(),
            format!("{url}/api/v1/namespaces/{ns}/configmaps"),
            next.clone(),
        );
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i:06}")}, "data": {"payload": "x".repeat(128)}});
                assert_eq!(post(&c, &target, &body).await, 201);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    n as f64 / t.elapsed().as_secs_f64()
}

async fn namespace(c: &reqwest::Client, url: &str, ns: &str) {
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
    assert_eq!(
        post(c, &format!("{url}/api/v1/namespaces"), &body).await,
        201
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

async fn run() {
    let n = if std::env::var("RAFTER_BENCH_SMALL").is_ok() {
        500
    } else {
        5_000
    };
    let none = rafter::admission::plugins::DEFAULT_ON.join(",");
    let bare = Server::start_with(&["--disable-admission-plugins", &none]);
    let c = support::http1_client(&bare);
    namespace(&c, &bare.url, "b").await;
    let without = fill(&c, &bare.url, "b", n).await;
    drop(bare);

    let s = Server::start();
    let c = support::http1_client(&s);
    namespace(&c, &s.url, "d").await;
    let with = fill(&c, &s.url, "d", n).await;
    namespace(&c, &s.url, "q").await;
    let q = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
        "spec": {"hard": {"count/configmaps": "1000000"}}});
    assert_eq!(
        post(
            &c,
            &format!("{}/api/v1/namespaces/q/resourcequotas", s.url),
            &q
        )
        .await,
        201
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r: Value = c
            .get(format!("{}/api/v1/namespaces/q/resourcequotas/q", s.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if r["status"]["used"].is_object() {
            break;
        }
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let quota = fill(&c, &s.url, "q", n).await;
    println!("ConfigMap creates/s with {WRITERS} writers, {n} each:");
    println!("  no admission plugins            {without:8.0}/s");
    println!("  kube's default plugins          {with:8.0}/s");
    println!("  default plugins + a quota       {quota:8.0}/s (every create charges one quota)");
}
