//! The cost of the aggregation layer (not a timed test; `cargo bench --bench aggregation`):
//! GETs per second and latency percentiles, 16 concurrent clients, of one flunder from the
//! test's extension server (`tests/support/extension.rs`) called directly with the
//! front-proxy client certificate, and through Rafter's proxy (authentication, RBAC, service
//! resolution, a second TLS hop); a local ConfigMap GET for scale. `RAFTER_BENCH_SECONDS`
//! sets each phase's length (default 5).

#[allow(dead_code)]
mod common;
#[path = "../tests/support/extension.rs"]
mod extension;
#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use extension::{GROUP, VERSION};
use support::Server;

async fn run(label: &str, client: reqwest::Client, url: String, secs: u64) {
    let lat: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let failed = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let end = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for _ in 0..common::CLIENTS {
        let (c, url, lat, failed) = (client.clone(), url.clone(), lat.clone(), failed.clone());
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while Instant::now() < end {
                let t = Instant::now();
                match c.get(&url).send().await {
                    Ok(r) if r.status().is_success() => {
                        let _ = r.bytes().await;
                        mine.push(t.elapsed());
                    }
                    _ => {
                        failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
            lat.lock().unwrap().extend(mine);
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let mut all = lat.lock().unwrap().clone();
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    };
    println!(
        "{label:<26} {:>8.0} GET/s  p50 {:>6.2} ms  p99 {:>6.2} ms  ({} ok, {} failed)",
        all.len() as f64 / secs as f64,
        pct(0.5),
        pct(0.99),
        all.len(),
        failed.load(std::sync::atomic::Ordering::Relaxed)
    );
}

fn main() {
    let secs = common::phase_seconds();
    let s = Server::start();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let front_proxy_ca = std::fs::read(s.dir.path().join("front-proxy-ca.crt")).unwrap();
        let ext = extension::start_extension(&front_proxy_ca).await;
        s.ok(&["create", "namespace", "wardle"]);
        s.ok(&["create", "configmap", "-n", "wardle", "local"]);
        s.ok_stdin(
            &["apply", "-f", "-"],
            &format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: api, namespace: wardle}}\nspec: {{type: ExternalName, externalName: localhost}}\n---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {{name: {VERSION}.{GROUP}}}\nspec: {{group: {GROUP}, version: {VERSION}, groupPriorityMinimum: 1000, versionPriority: 15, service: {{namespace: wardle, name: api, port: {}}}, caBundle: {}}}\n",
                ext.port,
                base64::engine::general_purpose::STANDARD.encode(&ext.ca_pem)
            ),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = s.ok(&[
                "get",
                "apiservice",
                &format!("{VERSION}.{GROUP}"),
                "-o",
                "jsonpath={.status.conditions[0].status}",
            ]);
            if out == "True" {
                break;
            }
            assert!(Instant::now() < deadline, "the APIService never became Available");
            std::thread::sleep(Duration::from_millis(200));
        }
        // The extension server as the proxy reaches it: front-proxy certificate, its CA.
        let read = |f: &str| std::fs::read(s.dir.path().join(f)).unwrap();
        let mut pem = read("front-proxy-client.crt");
        pem.push(b'\n');
        pem.extend(read("front-proxy-client.key"));
        let direct = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(ext.ca_pem.as_bytes()).unwrap())
            .identity(reqwest::Identity::from_pem(&pem).unwrap())
            .resolve("api.wardle.svc", format!("127.0.0.1:{}", ext.port).parse().unwrap())
            .build()
            .unwrap();
        let item = format!("/apis/{GROUP}/{VERSION}/namespaces/wardle/flunders/alpha");
        let direct_url = format!("https://api.wardle.svc:{}{item}", ext.port);
        run("warm-up", s.client(), format!("{}{item}", s.url), 1).await;
        run("extension server direct", direct, direct_url, secs).await;
        run("through the aggregator", s.client(), format!("{}{item}", s.url), secs).await;
        run(
            "local ConfigMap GET",
            s.client(),
            format!("{}/api/v1/namespaces/wardle/configmaps/local", s.url),
            secs,
        )
        .await;
    });
}
