//! One seeded run: start a cluster behind fault proxies, drive recorded traffic, readers and
//! watchers through the API proxies while the nemesis injects faults, heal, check liveness,
//! replay the ground truth (a watch from the start revision), run every checker, and write
//! the report folder (history, reads, watch streams, fault timeline, anomalies, the replay
//! command). Runs with the `snapshot` fault start the servers with small
//! `--snapshot-count` / `--snapshot-catchup-entries` ([`SNAPSHOT_ARGS`]) unless the server
//! flags name them, runs with `crash-unsynced` with `--test-fault lose-unsynced`; a fault step that could not heal is a `Recovery` anomaly, a replica that
//! exited on its own (outside `disk-full`) a `Crash`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::check;
use crate::check::history::Commit;
use crate::cluster::{self, Cluster};
use crate::nemesis;
use crate::traffic::{self, Recorder, Watched, NAMESPACE};

/// Server flags of runs with the `snapshot` fault: a raft snapshot every 200 applied entries,
/// 50 entries kept behind it (so that a follower away for a few hundred writes needs one).
pub const SNAPSHOT_ARGS: [&str; 4] = [
    "--snapshot-count",
    "200",
    "--snapshot-catchup-entries",
    "50",
];

/// The `rafter serve` flags of a run: the configured ones, plus [`SNAPSHOT_ARGS`] when the
/// run has the snapshot fault and they do not set those flags.
pub fn server_args(cfg: &Config) -> Vec<String> {
    let mut args = cfg.server_args.clone();
    let named = |f: &str| {
        args.iter()
            .any(|a| a == f || a.starts_with(&format!("{f}=")))
    };
    let snapshots = cfg.faults.iter().any(|f| f == "snapshot")
        && !named("--snapshot-count")
        && !named("--snapshot-catchup-entries");
    let unsynced = cfg.faults.iter().any(|f| f == "crash-unsynced") && !named("--test-fault");
    if snapshots {
        args.extend(SNAPSHOT_ARGS.iter().map(|s| s.to_string()));
    }
    if unsynced {
        args.extend(["--test-fault".to_string(), "lose-unsynced".to_string()]);
    }
    args
}

/// The nemesis knobs that follow the server flags.
fn nemesis_options(args: &[String]) -> nemesis::Options {
    let mut o = nemesis::Options::default();
    let flag = |name: &str| -> Option<u64> {
        let eq = format!("{name}=");
        args.iter().enumerate().find_map(|(i, a)| {
            if a == name {
                args.get(i + 1)?.parse().ok()
            } else {
                a.strip_prefix(&eq)?.parse().ok()
            }
        })
    };
    if let Some(n) = flag("--snapshot-count") {
        o.snapshot_count = n;
    }
    if let Some(n) = flag("--snapshot-catchup-entries") {
        o.catchup_entries = n;
    }
    o
}

#[derive(Clone, Debug)]
pub struct Config {
    pub bin: PathBuf,
    /// The build of the `upgrade` fault.
    pub next_bin: Option<PathBuf>,
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
    cluster::unmount_stale(&report);
    let _ = std::fs::remove_dir_all(&report);
    std::fs::create_dir_all(&report)?;
    let args = server_args(cfg);
    let mut c = Cluster::start(
        &cfg.bin,
        &report.join("cluster"),
        cfg.replicas,
        cfg.seed,
        &args,
    )
    .await
    .context("starting the cluster")?;
    c.next_bin = cfg.next_bin.clone();
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
    // What the namespace held at the start (nothing, unless a controller writes there).
    let initial: Vec<Commit> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|it| {
            Some(Commit::put(
                it["metadata"]["name"].as_str()?,
                it["metadata"]["resourceVersion"].as_str()?.parse().ok()?,
                it["data"]["v"].as_str().unwrap_or(""),
            ))
        })
        .collect();
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
    // Readers, one pinned to each replica (clients 1..=N), and a slow pager on each (clients
    // 101..).
    for (i, url) in urls.iter().enumerate() {
        for slow in [false, true] {
            let others: Vec<String> = urls
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, u)| u.clone())
                .collect();
            clients.push(tokio::spawn(traffic::reader_loop(
                http.clone(),
                url.clone(),
                others,
                i as u32 + 1,
                i as u32 + 1 + if slow { 100 } else { 0 },
                rec.clone(),
                c.incarnations.clone(),
                cfg.keys,
                cfg.seed,
                until,
                Duration::from_millis(10),
                slow,
            )));
        }
    }
    let steps = nemesis::run(
        &mut c,
        &cfg.faults,
        cfg.seed,
        start,
        until,
        Duration::from_secs(3),
        Duration::from_secs(2),
        &nemesis_options(&args),
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
    // Writes whose answer was lost (a replica that cannot apply) may still have committed:
    // the watchers and the truth go on to the revision of a fresh list, not only to the
    // last acknowledged write.
    for url in &urls {
        let r = http
            .get(format!("{url}/api/v1/namespaces/{NAMESPACE}/configmaps"))
            .send()
            .await;
        if let Ok(r) = r {
            if r.status().is_success() {
                let v: serde_json::Value = r.json().await.unwrap_or_default();
                if let Some(rv) = v["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|s| s.parse::<u64>().ok())
                {
                    final_rv = final_rv.max(rv);
                    break;
                }
            }
        }
    }
    done_rv.store(final_rv, Ordering::SeqCst);
    let late_exits = c.take_exits();
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
    let reads = rec.take_reads();
    // Events past the truth's last revision (a watcher that read on after the end) cannot be
    // checked against it: they are left out.
    let truth_high = replay.events.last().map_or(start_rv, |e| e.rv);
    let checked: Vec<check::watch::Stream> = streams
        .iter()
        .map(|w| {
            let mut s = to_stream(w);
            let keep = s.events.iter().position(|e| e.rv > truth_high);
            if let Some(k) = keep {
                s.events.truncate(k);
                s.relists.retain(|r| *r <= k);
            }
            s
        })
        .collect();
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
    // Reads, against the truth over the revisions it covers (from the start, or from 0 when
    // the namespace was empty then: nothing else writes there).
    let mut commits = initial.clone();
    commits.extend(truth.iter().cloned());
    let span = check::reads::Truth {
        commits: &commits,
        known_from: if initial.is_empty() { 0 } else { start_rv },
        known_to: truth_high,
    };
    let rr = check::reads::check_reads(&reads, &history, complete.then_some(&span));
    found.stats.reads = rr.stats.reads;
    found.anomalies.extend(rr.anomalies);
    found.unknown.extend(rr.unknown);
    for s in &steps {
        if let Some(e) = &s.error {
            found.anomalies.push(check::Anomaly::new(
                check::AnomalyKind::Recovery,
                format!("{} on {} at {} ms: {e}", s.kind, s.target, s.at_ms),
            ));
        }
        if s.kind != "disk-full" {
            for (id, st) in &s.exits {
                found.anomalies.push(check::Anomaly::new(
                    check::AnomalyKind::Crash,
                    format!(
                        "replica {id} exited on its own ({st}) during {} at {} ms (see cluster/replica-{id}.log)",
                        s.kind, s.at_ms
                    ),
                ));
            }
        }
    }
    for (id, st) in &late_exits {
        found.anomalies.push(check::Anomaly::new(
            check::AnomalyKind::Crash,
            format!(
                "replica {id} exited on its own ({st}) after the faults (see cluster/replica-{id}.log)"
            ),
        ));
    }
    write_json(&report, "history.json", &history)?;
    write_json(&report, "reads.json", &reads)?;
    write_json(&report, "watch.json", &streams)?;
    write_json(&report, "truth.json", &truth)?;
    write_json(&report, "faults.json", &steps)?;
    let replay_cmd = format!(
        "cargo run -p rafter-chaos -- run --seed {} --replicas {} --duration {}s --clients {} --keys {} --faults {}{}{}",
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
        },
        match &cfg.next_bin {
            Some(b) => format!(" --bin {} --next-bin {}", cfg.bin.display(), b.display()),
            None => String::new(),
        }
    );
    let summary = format!(
        "seed {}: {} ops, {} reads ({} pages, {} continue 410s), {} watch events on {} streams, {} faults, {}; {}",
        cfg.seed,
        history.len(),
        rr.stats.reads,
        rr.stats.pages,
        rr.stats.expired,
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
    for s in &steps {
        text.push_str(&format!(
            "FAULT {} ms {} on {}{}\n",
            s.at_ms,
            s.kind,
            s.target,
            s.detail
                .as_ref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        ));
    }
    std::fs::write(report.join("summary.txt"), &text)?;
    drop(c);
    Ok(Outcome {
        ok: found.passed(),
        summary,
        report,
    })
}
