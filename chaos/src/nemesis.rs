//! Faults, seeded and composable: each step picks one kind, applies it to a minority (a
//! quorum always survives), holds it, then heals. The timeline of what was done when is
//! kept for the report, with what each step saw (`detail`), replicas that exited on their
//! own during it, and why healing failed if it did (`error`: a `Recovery` anomaly).
//!
//! `crash-unsynced` is a kill and an immediate restart (of the leader half of the time) in a
//! run whose servers keep write-ahead-log bytes in memory until an fsync (`--test-fault
//! lose-unsynced`): the kill loses what a power cut would.
//!
//! Besides the network and process faults, four need more than the mesh:
//! * `membership` — a follower is removed (`rafter admin remove`), stopped, its data folder
//!   wiped, restarted empty with `--join`, added as a learner, and (heal) promoted once it
//!   has caught up; healed means it is a voter again.
//! * `snapshot` — a follower is isolated, writes (to a namespace of their own) are driven past
//!   the snapshot threshold and the leader snapshots (`rafter admin snapshot`); after the heal
//!   the follower must catch up, and the step records whether it did so by installing a
//!   snapshot (the `snapshots_installed` count of `rafter admin status` went up).
//!   Runs with this fault start the servers with small `--snapshot-count` /
//!   `--snapshot-catchup-entries` (see `run`).
//! * `clock-skew` — a replica restarted under libfaketime with its wall clock minutes ahead
//!   or behind (the monotonic clock untouched); healed by a normal restart. Unavailable
//!   without libfaketime ([`unavailable`]).
//! * `disk-full` — a replica's data folder moved onto a small tmpfs (the replica restarted on
//!   it), then filled with a ballast file so that writes fail; healed by deleting the
//!   ballast, restarting the replica if it exited, and waiting until it has caught up.
//!   Unavailable where tmpfs cannot be mounted (not root).
//! * `upgrade` — a rolling upgrade and rollback between two builds (`--next-bin`): the
//!   first replica still on the first build is stopped with SIGTERM (as an operator stops
//!   it: readiness off, leadership handed over) and started on its data with the next build;
//!   once all run it, the steps roll replicas back one at a time. The cluster runs mixed
//!   versions throughout, under the same traffic and checks.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;
use serde_json::{json, Value};

use crate::cluster::Cluster;
use crate::net::{Fault, Rng};

/// The fault kinds the harness knows.
pub const KINDS: &[&str] = &[
    "kill",
    "crash-unsynced",
    "pause",
    "isolate",
    "client-partition",
    "isolate-leader",
    "partition",
    "bridge",
    "delay",
    "drop",
    "leader-transfer",
    "compact",
    "membership",
    "snapshot",
    "clock-skew",
    "disk-full",
    "upgrade",
];

/// How long a replica may take to come back (catch up, rejoin, restart) after a heal.
const RECOVER: Duration = Duration::from_secs(30);

#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// Milliseconds since the run started.
    pub at_ms: u64,
    pub kind: String,
    pub target: String,
    pub healed_ms: Option<u64>,
    /// What the step did and saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Why the heal did not bring the cluster back, if it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Replicas that exited on their own during the step: (id, exit status).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exits: Vec<(u32, String)>,
}

/// Knobs of the faults that depend on the servers' flags.
#[derive(Clone, Debug)]
pub struct Options {
    /// The servers' `--snapshot-count` (applied entries between snapshots).
    pub snapshot_count: u64,
    /// The servers' `--snapshot-catchup-entries` (log kept behind a snapshot).
    pub catchup_entries: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            snapshot_count: 10_000,
            catchup_entries: 1_000,
        }
    }
}

/// Where libfaketime is: `FAKETIME_LIB`, else the Debian package's paths.
pub fn faketime_lib() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FAKETIME_LIB") {
        return Some(PathBuf::from(p)).filter(|p| p.exists());
    }
    let mut cands = vec![
        PathBuf::from("/usr/lib/faketime/libfaketime.so.1"),
        PathBuf::from("/usr/local/lib/faketime/libfaketime.so.1"),
    ];
    if let Ok(dirs) = std::fs::read_dir("/usr/lib") {
        for d in dirs.flatten() {
            cands.push(d.path().join("faketime/libfaketime.so.1"));
        }
    }
    cands.into_iter().find(|p| p.exists())
}

/// Why fault `kind` cannot run on this machine (`None`: it can). `scratch` is a folder the
/// check may use.
pub fn unavailable(kind: &str, scratch: &Path) -> Option<String> {
    match kind {
        "clock-skew" => {
            let Some(lib) = faketime_lib() else {
                return Some(
                    "clock-skew needs libfaketime, which is not installed (Debian: apt-get install faketime; or set FAKETIME_LIB)".into(),
                );
            };
            // It must actually move the clock of a child process.
            let out = std::process::Command::new("date")
                .arg("+%s")
                .env("LD_PRELOAD", &lib)
                .env("FAKETIME", "+1d")
                .output();
            let skewed = out.ok().and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<u64>()
                    .ok()
            });
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            match skewed {
                Some(t) if t > now + 80_000 => None,
                _ => Some(format!(
                    "clock-skew: {} does not move a child's clock (date under LD_PRELOAD with FAKETIME=+1d)",
                    lib.display()
                )),
            }
        }
        "disk-full" => {
            let probe = scratch.join("tmpfs-probe");
            if let Err(e) = std::fs::create_dir_all(&probe) {
                return Some(format!("disk-full: cannot create {}: {e}", probe.display()));
            }
            let r = crate::cluster::mount_tmpfs_at(&probe, 1 << 20)
                .and_then(|()| crate::cluster::unmount_tmpfs_at(&probe));
            let _ = std::fs::remove_dir(&probe);
            r.err()
                .map(|e| format!("disk-full needs to mount a tmpfs (run as root): {e:#}"))
        }
        _ => None,
    }
}

/// `rafter admin status -o json` of replica `id`: its own view (applied index, revisions),
/// members and leader.
pub async fn status_of(c: &Cluster, id: u32) -> Option<Value> {
    let out = c.admin(id, &["status", "-o", "json"], 3).await.ok()?;
    serde_json::from_str(&out).ok()
}

/// `rafter admin status -o json` of the first replica that answers.
pub async fn status(c: &Cluster) -> Option<Value> {
    for id in c.ids() {
        if let Some(v) = status_of(c, id).await {
            return Some(v);
        }
    }
    None
}

/// The leader as the admin API reports it.
pub async fn leader(c: &Cluster) -> Option<u32> {
    status(c).await?["leader"].as_u64().map(|l| l as u32)
}

fn num(v: &Value, field: &str) -> u64 {
    v[field].as_u64().unwrap_or(0)
}

/// A replica other than `not` (the admin API forwards membership changes to the leader).
fn other(c: &Cluster, not: u32) -> u32 {
    c.ids().into_iter().find(|i| *i != not).unwrap_or(not)
}

/// Waits until replica `id` has applied at least `index`; its last status.
async fn caught_up(c: &Cluster, id: u32, index: u64, within: Duration) -> Option<Value> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = status_of(c, id).await {
            if num(&s, "applied_index") >= index {
                return Some(s);
            }
        }
        if Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The highest applied index the replicas other than `not` report (what `not` must reach
/// to have caught up); `None` if none answers.
async fn others_applied(c: &Cluster, not: u32) -> Option<u64> {
    let mut best = None;
    for id in c.ids().into_iter().filter(|i| *i != not) {
        if let Some(s) = status_of(c, id).await {
            best = best.max(Some(num(&s, "applied_index")));
        }
    }
    best
}

/// Waits until replica `id` has applied what the others had applied when called.
async fn catch_up(c: &Cluster, id: u32) -> Result<Value, String> {
    let target = others_applied(c, id)
        .await
        .ok_or("no other replica reports its status")?;
    caught_up(c, id, target, RECOVER).await.ok_or(format!(
        "replica {id} did not catch up to index {target} within {} s",
        RECOVER.as_secs()
    ))
}

/// Whether the membership (as the replica `via` sees it) has `id` as a voter.
async fn is_voter(c: &Cluster, via: u32, id: u32) -> bool {
    status_of(c, via).await.is_some_and(|s| {
        s["members"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["id"].as_u64() == Some(id as u64) && m["voter"] == true)
    })
}

/// Retries `rafter admin ARGS` through replica `via` until it succeeds or `within` passes.
async fn admin_retry(
    c: &Cluster,
    via: u32,
    args: &[&str],
    within: Duration,
) -> Result<String, String> {
    let deadline = Instant::now() + within;
    loop {
        match c.admin(via, args, 10).await {
            Ok(out) => return Ok(out),
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// A follower (never the leader), seeded; `None` without a leader.
async fn follower(c: &Cluster, rng: &mut Rng) -> Option<(u32, u32)> {
    let l = leader(c).await?;
    let fs: Vec<u32> = c.ids().into_iter().filter(|i| *i != l).collect();
    if fs.is_empty() {
        return None;
    }
    Some((fs[(rng.next_u64() % fs.len() as u64) as usize], l))
}

/// The namespace the snapshot fault's writes go to (not the watched one).
const FILL_NAMESPACE: &str = "chaos-fill";

/// Writes through `url` (eight writers, one ConfigMap each) until the leader's applied index
/// reaches `target` or `within` passes; returns the number of successful writes.
async fn drive_writes(c: &Cluster, via: u32, target: u64, within: Duration) -> u64 {
    let Ok(http) = c.client() else { return 0 };
    let url = c.url(via);
    let _ = http
        .post(format!("{url}/api/v1/namespaces"))
        .json(
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": FILL_NAMESPACE}}),
        )
        .send()
        .await;
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for w in 0..8 {
        let (http, url, stop) = (http.clone(), url.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let coll = format!("{url}/api/v1/namespaces/{FILL_NAMESPACE}/configmaps");
            let name = format!("fill-{w}");
            let mut ok = 0u64;
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name}, "data": {"n": n.to_string()}});
                let r = http.put(format!("{coll}/{name}")).json(&body).send().await;
                match r {
                    Ok(r) if r.status().is_success() => ok += 1,
                    Ok(r) if r.status().as_u16() == 404 => {
                        let _ = http.post(&coll).json(&body).send().await;
                    }
                    _ => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
            ok
        }));
    }
    let deadline = Instant::now() + within;
    let applied = || async {
        status_of(c, via)
            .await
            .map_or(0, |s| num(&s, "applied_index"))
    };
    while Instant::now() < deadline && applied().await < target {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap_or(0);
    }
    total
}

/// The `Date` header of replica `id` minus the harness's clock, in seconds.
async fn observed_skew(c: &Cluster, id: u32) -> Option<i64> {
    let http = c.client().ok()?;
    let r = http
        .get(format!("https://{}/readyz", c.replicas[&id].api))
        .send()
        .await
        .ok()?;
    let date = r.headers().get("date")?.to_str().ok()?.to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs() as i64;
    Some(parse_http_date(&date)? - now)
}

/// Seconds since the epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn parse_http_date(s: &str) -> Option<i64> {
    let p: Vec<&str> = s.split_whitespace().collect();
    if p.len() != 6 {
        return None;
    }
    let day: i64 = p[1].parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| *m == p[2])? as i64
        + 1;
    let year: i64 = p[3].parse().ok()?;
    let hms: Vec<i64> = p[4].split(':').filter_map(|x| x.parse().ok()).collect();
    if hms.len() != 3 {
        return None;
    }
    // days from civil (Howard Hinnant)
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
}

/// What a step must undo beyond the generic heal.
enum Pending {
    None,
    /// Promote the re-added learner once caught up.
    Rejoin {
        id: u32,
    },
    /// Heal the isolated follower, then see how it caught up.
    Snapshot {
        id: u32,
        applied: u64,
        installs_before: i64,
        snap_at: Option<u64>,
    },
    /// Restart without libfaketime.
    ClockSkew {
        id: u32,
    },
    /// Delete the ballast, restart if it exited, wait until caught up.
    DiskFull {
        id: u32,
        applied: u64,
    },
}

/// Runs fault steps until `until`: each held for `hold`, then healed, then `gap` of calm.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    c: &mut Cluster,
    kinds: &[String],
    seed: u64,
    start: Instant,
    until: Instant,
    hold: Duration,
    gap: Duration,
    opts: &Options,
) -> Result<Vec<Step>> {
    let mut rng = Rng::derive(seed, 0xFA17, 0);
    let mut steps = Vec::new();
    let ids = c.ids();
    let n = ids.len() as u64;
    tokio::time::sleep(gap).await;
    while Instant::now() + hold < until && !kinds.is_empty() && n > 1 {
        let kind = kinds[(rng.next_u64() % kinds.len() as u64) as usize].clone();
        let pick = ids[(rng.next_u64() % n) as usize];
        let ms = || start.elapsed().as_millis() as u64;
        let mut step = Step {
            at_ms: ms(),
            kind: kind.clone(),
            target: pick.to_string(),
            healed_ms: None,
            detail: None,
            error: None,
            exits: Vec::new(),
        };
        let mut pending = Pending::None;
        match kind.as_str() {
            "kill" => c.kill(pick)?,
            // Under `--test-fault lose-unsynced` (see `run`), a kill loses every write the
            // replica had not fsynced, as a machine crash does; the replica (the leader half
            // of the time) restarts at once, as under a supervisor, before an election could
            // replace it.
            "crash-unsynced" => {
                let target = if rng.chance(0.5) {
                    leader(c).await.unwrap_or(pick)
                } else {
                    pick
                };
                step.target = target.to_string();
                c.kill(target)?;
                c.restart(target)?;
            }
            "pause" => c.pause(pick)?,
            "isolate" => c.mesh.isolate(pick)?,
            // Clients cut from one replica (its peers still reach it): requests to it stall.
            "client-partition" => c.mesh.set_api(pick, Fault::Blackhole)?,
            "isolate-leader" => {
                let l = leader(c).await.unwrap_or(pick);
                step.target = l.to_string();
                c.mesh.isolate(l)?;
            }
            "partition" => {
                // A minority of one versus the rest (three replicas: 1 | 2).
                let rest: Vec<u32> = ids.iter().copied().filter(|i| *i != pick).collect();
                c.mesh.partition(&[vec![pick], rest])?;
            }
            "bridge" if n >= 3 => {
                let others: Vec<u32> = ids.iter().copied().filter(|i| *i != pick).collect();
                let (a, b) = others.split_at(others.len() / 2);
                c.mesh.bridge(a, b, pick)?;
            }
            "delay" => c.mesh.set_all_peers(Fault::delay_jitter(
                Duration::from_millis(30),
                Duration::from_millis(30),
            )),
            "drop" => {
                for other in ids.iter().filter(|i| **i != pick) {
                    c.mesh.set_pair(pick, *other, Fault::drop_prob(0.05))?;
                }
            }
            "leader-transfer" => {
                let l = leader(c).await.unwrap_or(pick);
                let to = ids.iter().copied().find(|i| *i != l).unwrap_or(pick);
                step.target = format!("{l}->{to}");
                let _ = c
                    .admin(to, &["transfer-leader", "--to", &to.to_string()], 10)
                    .await;
            }
            "compact" => {
                // Compaction under load: everything but the last 300 revisions (a watcher
                // that was away longer meets a 410 and relists).
                let st = status(c).await;
                let rev = st
                    .as_ref()
                    .and_then(|s| s["current_revision"].as_i64())
                    .unwrap_or(0)
                    - 300;
                step.target = format!("revision {rev}");
                if rev > 0 {
                    let _ = c
                        .admin(pick, &["compact", "--revision", &rev.to_string()], 10)
                        .await;
                }
            }
            "membership" => match membership(c, &mut rng, &mut step).await {
                Ok(id) => pending = Pending::Rejoin { id },
                Err(e) => step.error = Some(e),
            },
            "snapshot" => match snapshot(c, &mut rng, &mut step, opts).await {
                Ok(p) => pending = p,
                Err(e) => step.error = Some(e),
            },
            "clock-skew" => {
                let mins = 1 + (rng.next_u64() % 10) as i64;
                let offset = if rng.chance(0.5) { mins } else { -mins };
                match clock_skew(c, pick, offset).await {
                    Ok(d) => step.detail = Some(d),
                    Err(e) => step.error = Some(e),
                }
                pending = Pending::ClockSkew { id: pick };
            }
            "upgrade" => {
                let ids = c.ids();
                let target = ids
                    .iter()
                    .copied()
                    .find(|i| !c.is_upgraded(*i))
                    .unwrap_or(ids[0]);
                step.target = target.to_string();
                match c.switch_build(target).await {
                    Ok(d) => step.detail = Some(d),
                    Err(e) => step.error = Some(format!("{e:#}")),
                }
            }
            "disk-full" => match disk_full(c, pick, &mut step).await {
                Ok(applied) => pending = Pending::DiskFull { id: pick, applied },
                Err(e) => {
                    step.error = Some(e);
                    pending = Pending::DiskFull {
                        id: pick,
                        applied: 0,
                    };
                }
            },
            _ => {}
        }
        tokio::time::sleep(hold).await;
        let healed = heal(c, pending, &mut step).await;
        c.heal_all()?;
        if let Err(e) = healed {
            step.error.get_or_insert(e);
        }
        step.healed_ms = Some(ms());
        step.exits = c.take_exits();
        steps.push(step);
        tokio::time::sleep(gap).await;
    }
    Ok(steps)
}

fn note(step: &mut Step, text: String) {
    match &mut step.detail {
        Some(d) => {
            d.push_str("; ");
            d.push_str(&text);
        }
        None => step.detail = Some(text),
    }
}

/// Removes a follower, wipes it, restarts it empty with `--join` and adds it as a learner;
/// returns its id (promoted at the heal).
async fn membership(c: &mut Cluster, rng: &mut Rng, step: &mut Step) -> Result<u32, String> {
    let (f, l) = follower(c, rng).await.ok_or("no leader to ask")?;
    step.target = f.to_string();
    let via = l;
    admin_retry(c, via, &["remove", "--id", &f.to_string()], RECOVER).await?;
    c.kill(f).map_err(|e| e.to_string())?;
    c.wipe(f).map_err(|e| e.to_string())?;
    c.restart(f).map_err(|e| e.to_string())?;
    let (peer, api) = (
        c.replicas[&f].peer.to_string(),
        c.replicas[&f].api.to_string(),
    );
    admin_retry(
        c,
        other(c, f),
        &[
            "add-learner",
            "--id",
            &f.to_string(),
            "--peer-addr",
            &peer,
            "--api-addr",
            &api,
        ],
        RECOVER,
    )
    .await?;
    note(
        step,
        format!("removed voter {f} (leader {l}), wiped, restarted with --join, added as a learner"),
    );
    Ok(f)
}

/// Isolates a follower, drives writes past the snapshot threshold and snapshots the leader.
async fn snapshot(
    c: &mut Cluster,
    rng: &mut Rng,
    step: &mut Step,
    opts: &Options,
) -> Result<Pending, String> {
    let (f, l) = follower(c, rng).await.ok_or("no leader to ask")?;
    step.target = f.to_string();
    let before = status_of(c, f)
        .await
        .ok_or(format!("no status from replica {f}"))?;
    let applied = num(&before, "applied_index");
    let installs_before = num(&before, "snapshots_installed") as i64;
    c.mesh.isolate(f).map_err(|e| e.to_string())?;
    // Far enough that the log the leader keeps behind its snapshot no longer reaches back to
    // the follower.
    let target = applied + opts.snapshot_count + 2 * opts.catchup_entries + 20;
    let writes = drive_writes(c, l, target, Duration::from_secs(30)).await;
    let snap_at = c
        .admin(l, &["snapshot"], 20)
        .await
        .ok()
        .and_then(|out| out.split_whitespace().last()?.parse::<u64>().ok());
    note(
        step,
        format!(
            "follower {f} isolated at applied index {applied}; {writes} writes; leader {l} snapshot at index {}",
            snap_at.map_or("? (failed)".into(), |i| i.to_string())
        ),
    );
    Ok(Pending::Snapshot {
        id: f,
        applied,
        installs_before,
        snap_at,
    })
}

/// Restarts replica `id` under libfaketime, its wall clock `minutes` off.
async fn clock_skew(c: &mut Cluster, id: u32, minutes: i64) -> Result<String, String> {
    let lib = faketime_lib().ok_or("libfaketime is not installed")?;
    c.kill(id).map_err(|e| e.to_string())?;
    c.set_env(
        id,
        vec![
            ("LD_PRELOAD".into(), lib.display().to_string()),
            ("FAKETIME".into(), format!("{minutes:+}m")),
            ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
        ],
    )
    .map_err(|e| e.to_string())?;
    c.restart(id).map_err(|e| e.to_string())?;
    c.wait_ready(id, Instant::now() + RECOVER)
        .await
        .map_err(|e| e.to_string())?;
    let seen = observed_skew(c, id).await;
    Ok(format!(
        "wall clock {minutes:+} min (its Date header: {})",
        seen.map_or("?".into(), |s| format!("{s:+} s"))
    ))
}

/// Moves replica `id` onto a small tmpfs, restarts it there and fills the disk; returns its
/// applied index once full.
async fn disk_full(c: &mut Cluster, id: u32, step: &mut Step) -> Result<u64, String> {
    c.kill(id).map_err(|e| e.to_string())?;
    let size = c.mount_tmpfs(id, 32 << 20).map_err(|e| format!("{e:#}"))?;
    c.restart(id).map_err(|e| e.to_string())?;
    c.wait_ready(id, Instant::now() + RECOVER)
        .await
        .map_err(|e| e.to_string())?;
    let (ballast, full) = c.fill(id).map_err(|e| format!("{e:#}"))?;
    let applied = status_of(c, id)
        .await
        .map_or(0, |s| num(&s, "applied_index"));
    note(
        step,
        format!(
            "data folder on a {}tmpfs, ballast {} MiB{}; applied index {applied} when full",
            if size > 0 {
                format!("{} MiB ", size >> 20)
            } else {
                String::new()
            },
            ballast >> 20,
            if full {
                ""
            } else {
                " (a probe write still succeeded)"
            }
        ),
    );
    Ok(applied)
}

/// The fault-specific part of a heal (the mesh and processes are healed after it).
async fn heal(c: &mut Cluster, p: Pending, step: &mut Step) -> Result<(), String> {
    match p {
        Pending::None => Ok(()),
        Pending::Rejoin { id } => {
            let via = other(c, id);
            let s = catch_up(c, id).await?;
            admin_retry(c, via, &["promote", "--id", &id.to_string()], RECOVER).await?;
            let deadline = Instant::now() + RECOVER;
            while !is_voter(c, via, id).await {
                if Instant::now() > deadline {
                    return Err(format!("replica {id} is not a voter again after promote"));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            note(
                step,
                format!(
                    "learner {id} caught up (applied {}), promoted: a voter again",
                    num(&s, "applied_index")
                ),
            );
            Ok(())
        }
        Pending::Snapshot {
            id,
            applied,
            installs_before,
            snap_at,
        } => {
            c.mesh.heal();
            let s = catch_up(c, id).await?;
            let now = num(&s, "snapshots_installed") as i64;
            let installed = now > installs_before;
            let file = s["snapshot_index"].as_u64();
            note(
                step,
                format!(
                    "follower {id} caught up to {} from {applied} {} (snapshots installed {installs_before} -> {now}; its snapshot at index {})",
                    num(&s, "applied_index"),
                    if installed {
                        "by installing a snapshot"
                    } else if snap_at.is_some_and(|s| s > applied) {
                        "from the log, no snapshot installed"
                    } else {
                        "from the log"
                    },
                    file.map_or("-".into(), |i| i.to_string())
                ),
            );
            Ok(())
        }
        Pending::ClockSkew { id } => {
            c.kill(id).map_err(|e| e.to_string())?;
            c.set_env(id, Vec::new()).map_err(|e| e.to_string())?;
            c.restart(id).map_err(|e| e.to_string())?;
            c.wait_ready(id, Instant::now() + RECOVER)
                .await
                .map_err(|e| e.to_string())
        }
        Pending::DiskFull { id, applied } => {
            c.unfill(id).map_err(|e| e.to_string())?;
            let was_running = c.running(id);
            let during = status_of(c, id).await.map(|s| num(&s, "applied_index"));
            note(
                step,
                match (was_running, during) {
                    (false, _) => "it exited while the disk was full".to_string(),
                    (true, Some(a)) => {
                        format!("it kept running, applied index {applied} -> {a} while full")
                    }
                    (true, None) => "it kept running, its admin API silent".to_string(),
                },
            );
            c.restart(id).map_err(|e| e.to_string())?;
            match catch_up(c, id).await {
                Ok(_) => Ok(()),
                Err(e) => {
                    let state = if c.running(id) {
                        let ready = match c.client() {
                            Ok(http) => http
                                .get(format!("https://{}/readyz", c.replicas[&id].api))
                                .send()
                                .await
                                .map_or("no answer".to_string(), |r| r.status().to_string()),
                            Err(_) => "?".into(),
                        };
                        format!("still running, its /readyz: {ready}")
                    } else {
                        "it exited".to_string()
                    };
                    Err(format!("{e} of the ballast's removal ({state})"))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Tue, 01 Dec 2026 15:08:00 GMT"),
            Some(1_796_137_680)
        );
        assert_eq!(parse_http_date("yesterday"), None);
    }
}
