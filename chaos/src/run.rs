//! One seeded run: start a cluster behind fault proxies, drive recorded traffic and watchers
//! through the API proxies while the nemesis injects faults, heal, check liveness, replay
//! the ground truth (a watch from the start revision), run every checker, and write the
//! report folder (history, watch streams, fault timeline, anomalies, the replay command).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::check;
use crate::check::history::Commit;
use crate::cluster::Cluster;
use crate::nemesis;
use crate::traffic::{self, Recorder, Watched, NAMESPACE};

#[derive(Clone, Debug)]
pub struct Config {
    pub bin: PathBuf,
    pub report: PathBuf,
    pub seed: u64,
    pub replicas: u32,
    pub duration: Duration,
    pub clients: u32,
    pub keys: usize,
    pub faults: Vec<String>,
    /// Extra `rafter serve` flags (e.g. `--test-fault stale-reads`).
    pub server_args: Vec<String>,
}

/// What a run found.
pub struct Outcome {
    pub summary: String,
    pub ok: bool,
    pub report: PathBuf,
}

fn write_json(dir: &Path, name: &str, v: &impl serde::Serialize) -> Result<()> {
    std::fs::write(dir.join(name), serde_json::to_vec_pretty(v)?)?;
    Ok(())
}

/// A recorded watch stream in the checker's terms.
fn to_stream(w: &Watched) -> check::watch::Stream {
    use check::watch::{Event, EventKind, Stream};
    Stream {
        client: w.replica,
        replica: Some(w.replica),
        start_rv: w.start_rv,
        events: w
            .events
            .iter()
            .map(|e| Event {
                kind: match e.kind.as_str() {
                    "ADDED" => EventKind::Added,
                    "MODIFIED" => EventKind::Modified,
                    "DELETED" => EventKind::Deleted,
                    _ => EventKind::Bookmark,
                },
                key: e.key.clone(),
                rv: e.rv,
                value: e.value.clone(),
            })
            .collect(),
        relists: w.relists.clone(),
    }
}

pub async fn run(cfg: &Config) -> Result<Outcome> {
    let report = cfg.report.join(format!("seed-{}", cfg.seed));
    let _ = std::fs::remove_dir_all(&report);
    std::fs::create_dir_all(&report)?;
    let mut c = Cluster::start(
        &cfg.bin,
        &report.join("cluster"),
        cfg.replicas,
        cfg.seed,
        &cfg.server_args,
    )
    .await
    .context("starting the cluster")?;
    let http = c.client()?;
    let urls: Vec<String> = c.ids().iter().map(|i| c.url(*i)).collect();
    // A fresh cluster has its bootstrap objects (system namespaces, the RBAC policy) on
    // every replica within a bound, whichever replica became leader and when.
    for url in &urls {
        let deadline = Instant::now() + Duration::from_secs(30);
        for path in [
            "/api/v1/namespaces/kube-system",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-public/roles/system:controller:bootstrap-signer",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/view",
        ] {
            loop {
                let ok = http
                    .get(format!("{url}{path}"))
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                if ok {
                    break;
                }
                if Instant::now() > deadline {
                    bail!("{url}{path} is missing 30 s after start (bootstrap objects)");
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    let ns = http
        .post(format!("{}/api/v1/namespaces", urls[0]))
        .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}))
        .send()
        .await?;
    if !ns.status().is_success() {
        bail!("creating the namespace: {}", ns.status());
    }
    let list: serde_json::Value = http
        .get(format!(
            "{}/api/v1/namespaces/{NAMESPACE}/configmaps",
            urls[0]
        ))
        .send()
        .await?
        .json()
        .await?;
    let start_rv: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .context("list resourceVersion")?;
    let start = Instant::now();
    let until = start + cfg.duration;
    let rec = Recorder::new();
    let done_rv = Arc::new(AtomicU64::new(0));
    let hard_stop = until + Duration::from_secs(60);
    let mut watchers = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        watchers.push(tokio::spawn(traffic::watch_loop(
            http.clone(),
            vec![url.clone()],
            i as u32 + 1,
            start_rv,
            until,
            done_rv.clone(),
            hard_stop,
        )));
    }
    // The ground truth: every committed change from the start, recorded during the run (so
    // that compaction cannot take it away) through whichever replica answers.
    let truth_watch = tokio::spawn(traffic::watch_loop(
        http.clone(),
        urls.clone(),
        0,
        start_rv,
        until,
        done_rv.clone(),
        hard_stop,
    ));
    let mut clients = Vec::new();
    for client in 0..cfg.clients {
        clients.push(tokio::spawn(traffic::client_loop(
            http.clone(),
            urls.clone(),
            rec.clone(),
            client,
            cfg.keys,
            cfg.seed,
            until,
            Duration::from_millis(5),
        )));
    }
    let steps = nemesis::run(
        &mut c,
        &cfg.faults,
        cfg.seed,
        start,
        until,
        Duration::from_secs(3),
        Duration::from_secs(2),
    )
    .await?;
    for t in clients {
        let _ = t.await;
    }
    c.heal_all()?;
    // Liveness after healing: a write succeeds through every replica within a bound.
    let mut liveness = Vec::new();
    let mut final_rv = 0;
    for url in &urls {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut ok = false;
        while Instant::now() < deadline {
            let r = http
                .post(format!("{url}/api/v1/namespaces/{NAMESPACE}/configmaps"))
                .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "live-"}, "data": {"v": "live"}}))
                .send()
                .await;
            if let Ok(r) = r {
                if r.status().is_success() {
                    let v: serde_json::Value = r.json().await.unwrap_or_default();
                    final_rv = final_rv.max(
                        v["metadata"]["resourceVersion"]
                            .as_str()
                            .and_then(|s| s.parse().ok())
                            .unwrap_or(0),
                    );
                    ok = true;
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if !ok {
            liveness.push(format!(
                "no write succeeded through {url} within 30 s of healing"
            ));
        }
    }
    done_rv.store(final_rv, Ordering::SeqCst);
    let mut streams: Vec<Watched> = Vec::new();
    for w in watchers {
        if let Ok(s) = w.await {
            streams.push(s);
        }
    }
    let replay = truth_watch.await?;
    let truth: Vec<Commit> = replay
        .events
        .iter()
        .filter(|e| e.kind != "BOOKMARK")
        .map(|e| {
            if e.kind == "DELETED" {
                Commit::delete(&e.key, e.rv)
            } else {
                Commit::put(&e.key, e.rv, e.value.as_deref().unwrap_or(""))
            }
        })
        .collect();
    let history = rec.take();
    let checked: Vec<check::watch::Stream> = streams.iter().map(to_stream).collect();
    // A truth with a gap (its stream met a 410) is no truth: the checks that need it are
    // reported as unknown rather than as anomalies.
    let complete =
        replay.relists.is_empty() && replay.events.last().map(|e| e.rv) >= Some(final_rv);
    let mut found = check::check_all(&history, &checked, if complete { &truth } else { &[] });
    if !complete {
        found.unknown.push(
            "the ground-truth recording has a gap (history compacted under it, or cut off)".into(),
        );
    }
    found.anomalies.extend(
        liveness
            .into_iter()
            .map(|l| check::Anomaly::new(check::AnomalyKind::Liveness, l)),
    );
    write_json(&report, "history.json", &history)?;
    write_json(&report, "watch.json", &streams)?;
    write_json(&report, "truth.json", &truth)?;
    write_json(&report, "faults.json", &steps)?;
    let replay_cmd = format!(
        "cargo run -p rafter-chaos -- run --seed {} --replicas {} --duration {}s --clients {} --keys {} --faults {}{}",
        cfg.seed,
        cfg.replicas,
        cfg.duration.as_secs(),
        cfg.clients,
        cfg.keys,
        cfg.faults.join(","),
        if cfg.server_args.is_empty() {
            String::new()
        } else {
            format!(" --server-args='{}'", cfg.server_args.join(" "))
        }
    );
    let summary = format!(
        "seed {}: {} ops, {} watch events on {} streams, {} faults, {}; {}",
        cfg.seed,
        history.len(),
        streams.iter().map(|s| s.events.len()).sum::<usize>(),
        streams.len(),
        steps.len(),
        found.summary(),
        if found.passed() { "PASS" } else { "FAIL" }
    );
    let mut text = format!("{summary}\nreplay: {replay_cmd}\n");
    for a in &found.anomalies {
        text.push_str(&format!("ANOMALY {a}\n"));
    }
    for u in &found.unknown {
        text.push_str(&format!("UNKNOWN {u}\n"));
    }
    std::fs::write(report.join("summary.txt"), &text)?;
    drop(c);
    Ok(Outcome {
        ok: found.passed(),
        summary,
        report,
    })
}
