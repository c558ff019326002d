//! Admission figures against the real binary (not a timed test; `cargo bench --bench
//! admission`): ConfigMap creates/s with kube's default plugins against none, and with a
//! ResourceQuota charged on every create (quota-charging throughput), and the latency one
//! allowing webhook (a TLS server in this process) and one ValidatingAdmissionPolicy add to
//! a create (p50/p99 of sequential creates), in one run.
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
    drop(s);
    latency(n / 5).await;
}

/// Per-create latencies (sequential), sorted.
async fn latencies(
    c: &reqwest::Client,
    url: &str,
    ns: &str,
    prefix: &str,
    n: usize,
) -> Vec<Duration> {
    let target = format!("{url}/api/v1/namespaces/{ns}/configmaps");
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("{prefix}-{i:06}")}, "data": {"payload": "x".repeat(128)}});
        let t = Instant::now();
        let r = c
            .post(&target)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let code = r.status().as_u16();
        let text = r.text().await.unwrap_or_default();
        out.push(t.elapsed());
        assert_eq!(code, 201, "{ns}: {text}");
    }
    out.sort();
    out
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1000.0
}

/// The latency one allowing webhook and one CEL policy add to a create.
async fn latency(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let port = support::tls_server(
        dir.path(),
        "hook",
        Arc::new(|_: &str, body: &[u8]| {
            let review: Value = serde_json::from_slice(body).unwrap_or_default();
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": {"uid": review["request"]["uid"], "allowed": true}})
            .to_string()
        }),
    )
    .await;
    use base64::Engine;
    let ca = base64::engine::general_purpose::STANDARD
        .encode(std::fs::read(dir.path().join("hook-ca.crt")).unwrap());
    let s = Server::start();
    let c = support::http1_client(&s);
    for (ns, label) in [
        ("plain", "none"),
        ("hooked", "webhook"),
        ("policed", "policy"),
    ] {
        let body = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": {"bench": label}}});
        assert_eq!(
            post(&c, &format!("{}/api/v1/namespaces", s.url), &body).await,
            201
        );
    }
    let rules = json!([{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]);
    let hook = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "bench"},
        "webhooks": [{"name": "allow.bench.example.com", "clientConfig": {"url": format!("https://127.0.0.1:{port}/"), "caBundle": ca},
            "rules": rules, "namespaceSelector": {"matchLabels": {"bench": "webhook"}},
            "sideEffects": "None", "admissionReviewVersions": ["v1"]}]});
    assert_eq!(
        post(
            &c,
            &format!(
                "{}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                s.url
            ),
            &hook
        )
        .await,
        201
    );
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "bench"},
        "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules},
            "validations": [{"expression": "object.data.payload.size() < 1000"}]}});
    assert_eq!(
        post(
            &c,
            &format!(
                "{}/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
                s.url
            ),
            &policy
        )
        .await,
        201
    );
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "bench"},
        "spec": {"policyName": "bench", "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"bench": "policy"}}}}});
    assert_eq!(
        post(
            &c,
            &format!(
                "{}/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
                s.url
            ),
            &binding
        )
        .await,
        201
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    // warm-up
    let _ = latencies(&c, &s.url, "plain", "warm", n / 10 + 1).await;
    let base = latencies(&c, &s.url, "plain", "lat", n).await;
    let hooked = latencies(&c, &s.url, "hooked", "lat", n).await;
    let policed = latencies(&c, &s.url, "policed", "lat", n).await;
    println!("ConfigMap create latency, {n} sequential creates each (default plugins):");
    for (what, l) in [
        ("no webhook or policy", &base),
        ("one allowing webhook", &hooked),
        ("one CEL policy", &policed),
    ] {
        println!(
            "  {what:24} p50 {:6.2} ms   p99 {:6.2} ms",
            pct(l, 0.5),
            pct(l, 0.99)
        );
    }
    println!(
        "  added by the webhook: p50 {:+.2} ms, p99 {:+.2} ms; by the policy: p50 {:+.2} ms, p99 {:+.2} ms",
        pct(&hooked, 0.5) - pct(&base, 0.5),
        pct(&hooked, 0.99) - pct(&base, 0.99),
        pct(&policed, 0.5) - pct(&base, 0.5),
        pct(&policed, 0.99) - pct(&base, 0.99)
    );
}
