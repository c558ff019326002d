//! Memory figures of one replica against the real binary (not a timed test; `cargo bench
//! --bench memory`), with the default authentication, RBAC and admission chain on: VmRSS idle
//! after start-up and after one discovery + OpenAPI fetch as kubectl makes, then after loading
//! N objects (a third each ConfigMaps, Secrets and Pods of about 1 KiB of JSON) with the total
//! JSON size of the stored objects (the bodies of their LISTs) and the ratio, then a soak of
//! updates with compaction running, printing RSS every few seconds.
//!
//! `RAFTER_BENCH_OBJECTS` (default 36000), `RAFTER_BENCH_SOAK_SECONDS` (default 60) and
//! `RAFTER_BENCH_SOAK_RATE` (writes/s, default 200) change the sizes; `RAFTER_BENCH_SMOKE=1`
//! shrinks everything to a few seconds.

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::env_usize;
use serde_json::{json, Value};

const WRITERS: usize = 16;

/// `VmRSS`, `RssAnon` and `RssFile` of a process, in KiB.
fn rss(pid: u32) -> (u64, u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("RssAnon:"), field("RssFile:"))
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn print_rss(label: &str, pid: u32) -> u64 {
    let (total, anon, file) = rss(pid);
    println!(
        "{label:<34} RSS {:>7.1} MiB  (anon {:>7.1}, file {:>6.1})",
        mib(total),
        mib(anon),
        mib(file)
    );
    total
}

/// A realistic object of about 1 KiB of JSON: kind 0 ConfigMap, 1 Secret, 2 Pod.
fn object(kind: usize, i: usize) -> (&'static str, Value) {
    let tier = ["web", "db", "cache"][i % 3];
    let labels = json!({"app": format!("app-{}", i % 50), "tier": tier,
        "release": "stable", "team": format!("team-{}", i % 7)});
    let annotations = json!({"deployment.kubernetes.io/revision": (i % 9).to_string(),
        "owner": "platform@example.com"});
    match kind {
        0 => (
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{i:06}"), "labels": labels, "annotations": annotations},
                "data": {"app.properties": format!("server.port=8080\nlog.level=info\nfeature.flags=a,b,c\ninstance={i}\n{}", "k=v\n".repeat(40)),
                         "index": i.to_string()}}),
        ),
        1 => (
            "secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": format!("secret-{i:06}"), "labels": labels, "annotations": annotations},
                "data": {"password": "cGFzc3dvcmQtdmVyeS1zZWNyZXQtdmFsdWU=",
                         "tls.key": "QUJD".repeat(110)}}),
        ),
        _ => (
            "pods",
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("pod-{i:06}"), "labels": labels, "annotations": annotations},
                "spec": {"containers": [{"name": "app", "image": "registry.example.com/team/app:1.2.3",
                    "args": ["--port=8080", "--verbose"],
                    "env": [{"name": "MODE", "value": "production"}, {"name": "INDEX", "value": i.to_string()}],
                    "ports": [{"containerPort": 8080, "name": "http"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}}}],
                    "automountServiceAccountToken": false}}),
        ),
    }
}

async fn post(c: &reqwest::Client, url: &str, body: &Value) {
    let r = c
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status();
    assert!(status.is_success(), "{status}: {}", r.text().await.unwrap());
}

/// The requests kubectl makes before its first command: legacy and aggregated discovery,
/// then the OpenAPI v3 index and the documents of the groups it uses (and v2, as `kubectl
/// apply` / `explain` of older clients do).
async fn discovery_and_openapi(c: &reqwest::Client, url: &str) {
    let aggregated =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    for path in ["/api", "/apis"] {
        let r = c
            .get(format!("{url}{path}"))
            .header("accept", aggregated)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
        let _ = r.bytes().await;
    }
    let index: Value = c
        .get(format!("{url}/openapi/v3"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for group in ["api/v1", "apis/apps/v1"] {
        if let Some(u) = index["paths"][group]["serverRelativeURL"].as_str() {
            let r = c.get(format!("{url}{u}")).send().await.unwrap();
            assert!(r.status().is_success(), "{u}: {}", r.status());
            let _ = r.bytes().await;
        }
    }
    let r = c.get(format!("{url}/openapi/v2")).send().await.unwrap();
    assert!(r.status().is_success());
    let _ = r.bytes().await;
}

/// Waits (bounded) until the namespace's default ServiceAccount exists (the ServiceAccount
/// admission plugin wants it for pods).
async fn wait_service_account(c: &reqwest::Client, url: &str, ns: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let r = c
            .get(format!(
                "{url}/api/v1/namespaces/{ns}/serviceaccounts/default"
            ))
            .send()
            .await
            .unwrap();
        if r.status().is_success() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("no default ServiceAccount in {ns}");
}

async fn load(c: &reqwest::Client, url: &str, ns: &str, n: usize) {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..WRITERS {
        let (c, url, ns, next) = (c.clone(), url.to_string(), ns.to_string(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let (resource, body) = object(i % 3, i / 3);
                post(
                    &c,
                    &format!("{url}/api/v1/namespaces/{ns}/{resource}"),
                    &body,
                )
                .await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

/// Bytes of the JSON LIST bodies of the three resources (the stored objects as served).
async fn json_size(c: &reqwest::Client, url: &str, ns: &str) -> (u64, usize) {
    let (mut bytes, mut items) = (0, 0);
    for resource in ["configmaps", "secrets", "pods"] {
        let body = c
            .get(format!("{url}/api/v1/namespaces/{ns}/{resource}"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        bytes += body.len() as u64;
        let v: Value = serde_json::from_slice(&body).unwrap();
        items += v["items"].as_array().map_or(0, Vec::len);
    }
    (bytes, items)
}

/// Updates the ConfigMaps round-robin at `rate` writes/s for `secs`, printing RSS every
/// `every`.
async fn soak(
    c: &reqwest::Client,
    url: &str,
    ns: &str,
    configmaps: usize,
    rate: usize,
    secs: u64,
    every: Duration,
    pid: u32,
) {
    let end = Instant::now() + Duration::from_secs(secs);
    let written = Arc::new(AtomicUsize::new(0));
    let per_writer = Duration::from_secs_f64(WRITERS as f64 / rate.max(1) as f64);
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let (c, url, ns, written) = (c.clone(), url.to_string(), ns.to_string(), written.clone());
        tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(per_writer);
            let mut round = 0usize;
            while Instant::now() < end {
                tick.tick().await;
                let i = (w + round * WRITERS) % configmaps.max(1);
                round += 1;
                let (_, mut body) = object(0, i);
                body["data"]["round"] = json!(round.to_string());
                let r = c
                    .put(format!("{url}/api/v1/namespaces/{ns}/configmaps/cm-{i:06}"))
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await
                    .unwrap();
                if r.status().is_success() {
                    written.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let started = Instant::now();
    while Instant::now() < end {
        tokio::time::sleep(every).await;
        print_rss(
            &format!(
                "soak {:>4.0} s, {:>6} writes",
                started.elapsed().as_secs_f64(),
                written.load(Ordering::Relaxed)
            ),
            pid,
        );
    }
    for t in tasks {
        let _ = t.await;
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
    let smoke = std::env::var("RAFTER_BENCH_SMOKE").is_ok();
    let n = env_usize("RAFTER_BENCH_OBJECTS", if smoke { 300 } else { 36_000 });
    let soak_secs = env_usize("RAFTER_BENCH_SOAK_SECONDS", if smoke { 4 } else { 60 }) as u64;
    let rate = env_usize("RAFTER_BENCH_SOAK_RATE", 200);
    let every = Duration::from_secs(if smoke { 1 } else { 5 });
    println!(
        "build: {}",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    // Compaction runs every window / 4: a short window shows whether memory settles.
    let server = support::Server::start_with(&["--compaction-window", "20s"]);
    let pid = server.pid().unwrap();
    let url = server.url.clone();
    let c = support::http1_client(&server);
    tokio::time::sleep(Duration::from_secs(2)).await;
    print_rss("idle after start-up", pid);
    discovery_and_openapi(&c, &url).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    print_rss("idle after discovery + OpenAPI", pid);

    let ns = "bench";
    post(
        &c,
        &format!("{url}/api/v1/namespaces"),
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    )
    .await;
    wait_service_account(&c, &url, ns).await;
    let t = Instant::now();
    load(&c, &url, ns, n).await;
    println!(
        "loaded {n} objects in {:.1} s ({:.0}/s)",
        t.elapsed().as_secs_f64(),
        n as f64 / t.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = print_rss("after load", pid);
    let (bytes, items) = json_size(&c, &url, ns).await;
    let (base, _, _) = rss(pid);
    println!(
        "stored JSON: {items} objects, {:.1} MiB; RSS / JSON = {:.2} (after the LISTs: RSS {:.1} MiB)",
        bytes as f64 / 1048576.0,
        (after as f64 * 1024.0) / bytes as f64,
        mib(base)
    );
    soak(&c, &url, ns, n.div_ceil(3), rate, soak_secs, every, pid).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    print_rss("after soak", pid);
}
