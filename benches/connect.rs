//! What the connect subresources cost (not a timed test; `cargo bench --bench connect`):
//! `pods/log` throughput of a 64 MiB log read from the fake kubelet directly and through
//! the real binary, and the wall time of `kubectl exec` (v5 WebSocket translated to SPDY;
//! kubectl's own start included) and of a plain `kubectl get pod` for comparison, median of
//! `RAFTER_BENCH_RUNS` runs (default 5).

#[path = "../tests/support/kubelet.rs"]
mod fake_kubelet;
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use support::Server;

async fn drain(resp: reqwest::Response) -> usize {
    assert!(resp.status().is_success(), "{}", resp.status());
    let mut n = 0;
    let mut s = resp.bytes_stream();
    while let Some(b) = s.next().await {
        n += b.unwrap().len();
    }
    n
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("RAFTER_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubelet = rt.block_on(fake_kubelet::start(dir.path()));
    let s = Server::start_with(&[
        "--kubelet-certificate-authority",
        kubelet.ca.to_str().unwrap(),
        "--kubelet-client-certificate",
        kubelet.client_cert.to_str().unwrap(),
        "--kubelet-client-key",
        kubelet.client_key.to_str().unwrap(),
    ]);
    rt.block_on(async {
        let c = s
            .client_builder()
            .timeout(Duration::from_secs(600))
            .build()
            .unwrap();
        let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet.port}}}});
        let r = s
            .json(&c, reqwest::Method::POST, "/api/v1/nodes", Some(node))
            .await;
        assert!(r.code.is_success(), "{}", r.body);
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"nodeName": "n1", "containers": [{"name": "big", "image": "busybox"}]}});
        let r = s
            .json(
                &c,
                reqwest::Method::POST,
                "/api/v1/namespaces/default/pods",
                Some(pod),
            )
            .await;
        assert!(r.code.is_success(), "{}", r.body);

        let mut pem = std::fs::read(&kubelet.client_cert).unwrap();
        pem.extend(std::fs::read(&kubelet.client_key).unwrap());
        let direct = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(
                reqwest::Certificate::from_pem(&std::fs::read(&kubelet.ca).unwrap()).unwrap(),
            )
            .identity(reqwest::Identity::from_pem(&pem).unwrap())
            .http1_only()
            .build()
            .unwrap();
        let mib = fake_kubelet::BIG_LOG as f64 / (1 << 20) as f64;
        for (what, url, client) in [
            (
                "fake kubelet directly",
                format!(
                    "https://127.0.0.1:{}/containerLogs/default/p/big",
                    kubelet.port
                ),
                &direct,
            ),
            (
                "through rafter (pods/log)",
                format!("{}/api/v1/namespaces/default/pods/p/log", s.url),
                &c,
            ),
        ] {
            let mut times = Vec::new();
            for _ in 0..runs.min(3) {
                let t = Instant::now();
                let n = drain(client.get(&url).send().await.unwrap()).await;
                assert_eq!(n, fake_kubelet::BIG_LOG);
                times.push(t.elapsed());
            }
            let m = median(times);
            println!(
                "log {what}: {mib:.0} MiB in {m:?} = {:.0} MiB/s (median of {})",
                mib / m.as_secs_f64(),
                runs.min(3)
            );
        }
    });
    for (what, args) in [
        ("kubectl get pod", &["get", "pod", "p"][..]),
        (
            "kubectl exec (v5 WebSocket → SPDY)",
            &["exec", "p", "--", "true"][..],
        ),
    ] {
        let mut times = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            s.ok(args);
            times.push(t.elapsed());
        }
        println!("{what}: median {:?} of {runs}", median(times));
    }
}
