//! Protobuf vs JSON figures against the real binary (not a timed test; `cargo bench --bench
//! protobuf`, or `cargo test --bench protobuf` for a debug build): LIST of 10,000 Pods and a
//! watch replaying 1,000 events, each in JSON and in Kubernetes protobuf (bytes on the wire
//! and time). `RAFTER_BENCH_SMALL=1` scales the counts down by 10 for a quick run.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::Server;

const JSON: &str = "application/json";
const PB: &str = "application/vnd.kubernetes.protobuf, application/json";

fn pod(i: usize) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("pod-{i:06}"), "labels": {"app": "bench", "shard": format!("{}", i % 10)},
            "annotations": {"bench.example.com/index": i.to_string()}},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.2.3",
                "args": ["--port=8080", "--verbose"],
                "ports": [{"name": "http", "containerPort": 8080}],
                "env": [{"name": "INDEX", "value": i.to_string()}, {"name": "MODE", "value": "bench"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10}}],
            "tolerations": [{"key": "example.com/spot", "operator": "Exists", "effect": "NoSchedule"}]}})
}

/// Creates pods `from..to` with `par` concurrent writers.
async fn fill(c: &reqwest::Client, url: &str, from: usize, to: usize, par: usize) {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(from));
    let mut tasks = Vec::new();
    for _ in 0..par {
        let (c, url, next) = (c.clone(), url.to_string(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= to {
                    return;
                }
                let r = c
                    .post(format!("{url}/api/v1/namespaces/bench/pods"))
                    .header("content-type", "application/json")
                    .body(pod(i).to_string())
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

async fn list(c: &reqwest::Client, url: &str, accept: &str) -> (usize, Duration) {
    let t = Instant::now();
    let r = c
        .get(format!("{url}/api/v1/namespaces/bench/pods"))
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let n = r.bytes().await.unwrap().len();
    (n, t.elapsed())
}

/// Watches from `rv` until `events` events came (JSON lines or protobuf frames).
async fn watch(
    c: &reqwest::Client,
    url: &str,
    accept: &str,
    rv: &str,
    events: usize,
) -> (usize, Duration) {
    let t = Instant::now();
    let mut r = c
        .get(format!(
            "{url}/api/v1/namespaces/bench/pods?watch=1&resourceVersion={rv}&timeoutSeconds=300"
        ))
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let proto = accept.starts_with("application/vnd");
    let (mut buf, mut bytes, mut seen) = (Vec::new(), 0usize, 0usize);
    while seen < events {
        let chunk = tokio::time::timeout(Duration::from_secs(120), r.chunk())
            .await
            .expect("watch stalled")
            .unwrap()
            .expect("watch ended");
        bytes += chunk.len();
        buf.extend_from_slice(&chunk);
        if proto {
            while buf.len() >= 4 {
                let len = u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
                if buf.len() < 4 + len {
                    break;
                }
                buf.drain(..4 + len);
                seen += 1;
            }
        } else {
            while let Some(p) = buf.iter().position(|&b| b == b'\n') {
                buf.drain(..=p);
                seen += 1;
            }
        }
    }
    (bytes, t.elapsed())
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
    let (pods, events) = if small { (1_000, 100) } else { (10_000, 1_000) };
    let server = Server::start();
    let url = server.url.clone();
    let c = support::http1_client(&server);
    let r = c
        .post(format!("{url}/api/v1/namespaces"))
        .header("content-type", "application/json")
        .body(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    let t = Instant::now();
    fill(&c, &url, 0, pods - events, 32).await;
    // The revision the watches replay from: the last `events` creations come after it.
    let rv = c
        .get(format!("{url}/api/v1/namespaces/bench/pods?limit=1"))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    fill(&c, &url, pods - events, pods, 32).await;
    println!("created {pods} pods in {:.1?}", t.elapsed());
    // Warm up both paths once.
    list(&c, &url, JSON).await;
    list(&c, &url, PB).await;
    println!("| operation | encoding | bytes | time |");
    println!("|---|---|---|---|");
    for (name, accept) in [("JSON", JSON), ("protobuf", PB)] {
        let (n, d) = list(&c, &url, accept).await;
        println!("| LIST {pods} pods | {name} | {n} | {:.1?} |", d);
    }
    for (name, accept) in [("JSON", JSON), ("protobuf", PB)] {
        let (n, d) = watch(&c, &url, accept, &rv, events).await;
        println!("| WATCH {events} events | {name} | {n} | {:.1?} |", d);
    }
}
