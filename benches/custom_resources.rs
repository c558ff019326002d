//! Custom resource figures against the real binary (not a timed test; `cargo bench --bench
//! custom_resources`): create/s and LIST latency of a custom resource against a ConfigMap of
//! the same size in the same run (and of a custom resource with a CEL rule), then the
//! throughput of `rafter admin migrate-storage` over 50,000 custom objects after a storage
//! version change. `RAFTER_BENCH_SMALL=1` scales the counts down by 10.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{free_port, Server};

const WRITERS: usize = 32;

async fn post(c: &reqwest::Client, url: &str, body: &Value) {
    let r = c
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{url}: {}", r.status());
}

fn definition(plural: &str, kind: &str, rules: Value, versions: &[(&str, bool)]) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "data": {"type": "object", "x-kubernetes-validations": rules, "properties": {
            "payload": {"type": "string", "maxLength": 256},
            "index": {"type": "string", "maxLength": 16}}}}}});
    let versions: Vec<Value> = versions
        .iter()
        .map(
            |(v, storage)| json!({"name": v, "served": true, "storage": storage, "schema": schema}),
        )
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.bench.example.com")},
        "spec": {"group": "bench.example.com", "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": versions}})
}

async fn define(c: &reqwest::Client, url: &str, crd: Value, list: &str) {
    post(
        c,
        &format!("{url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"),
        &crd,
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !c
        .get(format!("{url}{list}"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        assert!(Instant::now() < deadline, "{list} never served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Creates `n` objects (`make(i)`) at `path` with concurrent writers; returns objects/s.
async fn fill(
    c: &reqwest::Client,
    url: &str,
    path: &str,
    n: usize,
    make: fn(usize) -> Value,
) -> f64 {
    let next = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..WRITERS {
        let (c, target, next) = (c.clone(), format!("{url}{path}"), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                post(&c, &target, &make(i)).await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    n as f64 / t.elapsed().as_secs_f64()
}

/// The median and slowest of `runs` LISTs of `path` (most recent, served by the store).
async fn list_latency(c: &reqwest::Client, url: &str, path: &str, expect: usize) -> (f64, f64) {
    let mut ms = Vec::new();
    for _ in 0..11 {
        let t = Instant::now();
        let l: Value = c
            .get(format!("{url}{path}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(l["items"].as_array().map(Vec::len), Some(expect));
    }
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (ms[ms.len() / 2], ms[ms.len() - 1])
}

fn payload(i: usize) -> Value {
    json!({"payload": "x".repeat(128), "index": i.to_string()})
}

fn configmap(i: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("o-{i:06}")}, "data": payload(i)})
}

fn widget(i: usize) -> Value {
    json!({"apiVersion": "bench.example.com/v1", "kind": "Widget", "metadata": {"name": format!("o-{i:06}")}, "data": payload(i)})
}

fn ruled(i: usize) -> Value {
    json!({"apiVersion": "bench.example.com/v1", "kind": "Ruled", "metadata": {"name": format!("o-{i:06}")}, "data": payload(i)})
}

fn old(i: usize) -> Value {
    json!({"apiVersion": "bench.example.com/v1beta1", "kind": "Old", "metadata": {"name": format!("o-{i:06}")}, "data": payload(i)})
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
    let (n, n_migrate) = if small { (500, 5_000) } else { (5_000, 50_000) };
    let admin_port = free_port();
    let server = Server::start_with(&["--admin-listen", &format!("127.0.0.1:{admin_port}")]);
    let url = server.url.clone();
    let c = support::http1_client(&server);
    define(
        &c,
        &url,
        definition("widgets", "Widget", json!([]), &[("v1", true)]),
        "/apis/bench.example.com/v1/widgets",
    )
    .await;
    define(
        &c,
        &url,
        definition(
            "ruleds",
            "Ruled",
            json!([{"rule": "self.payload.size() > 0 && self.index.matches('^[0-9]+$')"}]),
            &[("v1", true)],
        ),
        "/apis/bench.example.com/v1/ruleds",
    )
    .await;
    for ns in ["cm", "cr", "cel", "mig"] {
        post(
            &c,
            &format!("{url}/api/v1/namespaces"),
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await;
    }
    let cm = fill(&c, &url, "/api/v1/namespaces/cm/configmaps", n, configmap).await;
    let cr = fill(
        &c,
        &url,
        "/apis/bench.example.com/v1/namespaces/cr/widgets",
        n,
        widget,
    )
    .await;
    let cel = fill(
        &c,
        &url,
        "/apis/bench.example.com/v1/namespaces/cel/ruleds",
        n,
        ruled,
    )
    .await;
    println!("create/s with {WRITERS} writers, {n} objects of ~200 bytes each:");
    println!("  ConfigMap                  {cm:8.0}/s");
    println!("  custom resource            {cr:8.0}/s");
    println!("  custom resource + CEL rule {cel:8.0}/s");
    println!("LIST of {n} objects (most recent), median / slowest of 11:");
    for (what, path) in [
        ("ConfigMap      ", "/api/v1/namespaces/cm/configmaps"),
        (
            "custom resource",
            "/apis/bench.example.com/v1/namespaces/cr/widgets",
        ),
    ] {
        let (p50, max) = list_latency(&c, &url, path, n).await;
        println!("  {what}  {p50:7.1} ms / {max:7.1} ms");
    }

    // Migration: objects stored as v1beta1, then v1 becomes the storage version.
    define(
        &c,
        &url,
        definition(
            "olds",
            "Old",
            json!([]),
            &[("v1beta1", true), ("v1", false)],
        ),
        "/apis/bench.example.com/v1beta1/olds",
    )
    .await;
    let created = fill(
        &c,
        &url,
        "/apis/bench.example.com/v1beta1/namespaces/mig/olds",
        n_migrate,
        old,
    )
    .await;
    println!("created {n_migrate} objects to migrate ({created:.0}/s)");
    let crd_url = format!(
        "{url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/olds.bench.example.com"
    );
    let mut def: Value = c.get(&crd_url).send().await.unwrap().json().await.unwrap();
    def["spec"]["versions"][0]["storage"] = json!(false);
    def["spec"]["versions"][1]["storage"] = json!(true);
    let r = c
        .put(&crd_url)
        .header("content-type", "application/json")
        .body(def.to_string())
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    let t = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .args([
            "admin",
            "migrate-storage",
            "--resource",
            "olds.bench.example.com",
            "--batch",
            "1000",
        ])
        .args(["--endpoint", &format!("127.0.0.1:{admin_port}")])
        .args(["--data-dir", server.dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let secs = t.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{}", text.lines().last().unwrap_or(""));
    println!(
        "migrate-storage of {n_migrate} objects: {secs:.1} s, {:.0} objects/s (CLI included)",
        n_migrate as f64 / secs
    );
}
