//! Server-side apply figures against the real binary (not a timed test; `cargo bench --bench
//! apply`): Deployment updates/s by server-side apply against the same change sent as a JSON
//! merge patch (32 writers, each on its own Deployment), sequential p50/p99 of both, and the
//! size of `metadata.managedFields` on a typical Deployment: after `kubectl create deployment`
//! (compared with kube-apiserver v1.33's entry for it, the fixture below) and after a
//! `kubectl apply --server-side` of a typical manifest, in one run.
//! `RAFTER_BENCH_SMALL=1` scales the counts down by 10.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::Server;

const WRITERS: usize = 32;

/// kube-apiserver v1.33's `fieldsV1` of the `kubectl-create` entry of
/// `kubectl create deployment web --image=nginx` (field order as kube prints it).
const KUBE_CREATE_FIELDS: &str = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}"#;

fn manifest(name: &str, replicas: usize) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name, "tier": "web"},
                     "annotations": {"owner": "bench"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "tier": "web"}},
                "spec": {"containers": [
                    {"name": "app", "image": "nginx:1.27",
                     "ports": [{"containerPort": 80, "name": "http"}],
                     "env": [{"name": "MODE", "value": "prod"}, {"name": "LEVEL", "value": "info"}],
                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                                   "limits": {"memory": "256Mi"}}},
                    {"name": "sidecar", "image": "busybox:1.36", "args": ["sleep", "infinity"]}
                ]}
            }
        }
    })
}

enum Kind {
    Apply,
    Merge,
}

async fn write(c: &reqwest::Client, url: &str, name: &str, replicas: usize, kind: &Kind) -> u16 {
    let target = format!("{url}/apis/apps/v1/namespaces/default/deployments/{name}");
    let req = match kind {
        Kind::Apply => c
            .patch(format!("{target}?fieldManager=bench&force=true"))
            .header("content-type", "application/apply-patch+yaml")
            .body(manifest(name, replicas).to_string()),
        Kind::Merge => c
            .patch(format!("{target}?fieldManager=bench-merge"))
            .header("content-type", "application/merge-patch+json")
            .body(json!({"spec": {"replicas": replicas}}).to_string()),
    };
    req.send().await.map(|r| r.status().as_u16()).unwrap_or(0)
}

/// `n` writes spread over `WRITERS` tasks, writer `w` on Deployment `d-{w}`; returns writes/s.
async fn throughput(c: &reqwest::Client, url: &str, n: usize, kind: Kind) -> f64 {
    let kind = Arc::new(kind);
    let next = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let (c, url, next, kind) = (c.clone(), url.to_string(), next.clone(), kind.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let code = write(&c, &url, &format!("d-{w}"), 1 + i % 7, &kind).await;
                assert_eq!(code, 200);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    n as f64 / t.elapsed().as_secs_f64()
}

async fn latencies(c: &reqwest::Client, url: &str, n: usize, kind: Kind) -> (Duration, Duration) {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        assert_eq!(write(c, url, "d-0", 1 + i % 7, &kind).await, 200);
        out.push(t.elapsed());
    }
    out.sort();
    (out[n / 2], out[n * 99 / 100])
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
        400
    } else {
        4_000
    };
    let s = Server::start();
    let c = support::http1_client(&s);
    // Each writer's Deployment, created by an apply.
    for w in 0..WRITERS {
        assert_eq!(
            write(&c, &s.url, &format!("d-{w}"), 1, &Kind::Apply).await,
            201
        );
    }
    let merge = throughput(&c, &s.url, n, Kind::Merge).await;
    let apply = throughput(&c, &s.url, n, Kind::Apply).await;
    let (mp50, mp99) = latencies(&c, &s.url, n / 4, Kind::Merge).await;
    let (ap50, ap99) = latencies(&c, &s.url, n / 4, Kind::Apply).await;
    println!("Deployment updates with {WRITERS} writers ({n} writes), replicas changed each time:");
    println!("  merge patch           {merge:8.0}/s");
    println!(
        "  server-side apply     {apply:8.0}/s ({:.0}% of merge patch)",
        apply / merge * 100.0
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("Sequential latency p50/p99 ({} writes each):", n / 4);
    println!(
        "  merge patch           {:.2} / {:.2} ms",
        ms(mp50),
        ms(mp99)
    );
    println!(
        "  server-side apply     {:.2} / {:.2} ms",
        ms(ap50),
        ms(ap99)
    );

    // managedFields sizes.
    s.ok(&["create", "deployment", "web", "--image=nginx"]);
    // As the server writes it (kubectl's `-o json` would re-sort the keys).
    let created: Value = c
        .get(format!(
            "{}/apis/apps/v1/namespaces/default/deployments/web",
            s.url
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ours = created["metadata"]["managedFields"].to_string();
    let kube_entry = json!([{
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1",
        "time": created["metadata"]["managedFields"][0]["time"],
        "fieldsType": "FieldsV1",
        "fieldsV1": serde_json::from_str::<Value>(KUBE_CREATE_FIELDS).unwrap(),
    }])
    .to_string();
    println!("managedFields of `kubectl create deployment web --image=nginx`:");
    println!(
        "  rafter {} bytes, kube-apiserver v1.33 {} bytes ({})",
        ours.len(),
        kube_entry.len(),
        if ours == kube_entry {
            "identical"
        } else {
            "differ"
        }
    );
    if ours != kube_entry {
        println!("  rafter: {ours}\n  kube:   {kube_entry}");
    }
    let applied: Value = c
        .get(format!(
            "{}/apis/apps/v1/namespaces/default/deployments/d-0",
            s.url
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mf = applied["metadata"]["managedFields"].to_string();
    let body = applied.to_string();
    println!(
        "managedFields of the applied two-container Deployment: {} bytes of a {}-byte object ({:.0}%)",
        mf.len(),
        body.len(),
        mf.len() as f64 / body.len() as f64 * 100.0
    );
}
