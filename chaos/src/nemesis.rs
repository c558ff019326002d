//! Faults, seeded and composable: each step picks one kind, applies it to a minority (a
//! quorum always survives), holds it, then heals. The timeline of what was done when is
//! kept for the report.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;

use crate::cluster::Cluster;
use crate::net::{Fault, Rng};

/// The fault kinds the harness knows.
pub const KINDS: &[&str] = &[
    "kill",
    "pause",
    "isolate",
    "isolate-leader",
    "partition",
    "bridge",
    "delay",
    "drop",
    "leader-transfer",
    "compact",
];

#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// Milliseconds since the run started.
    pub at_ms: u64,
    pub kind: String,
    pub target: String,
    pub healed_ms: Option<u64>,
}

/// `rafter admin status -o json` of the first replica that answers.
pub fn status(c: &Cluster) -> Option<serde_json::Value> {
    for r in c.replicas.values() {
        let out = std::process::Command::new("timeout")
            .arg("5")
            .arg(&c.bin)
            .args([
                "admin",
                "status",
                "-o",
                "json",
                "--timeout",
                "3",
                "--endpoint",
            ])
            .arg(r.admin.to_string())
            .arg("--data-dir")
            .arg(&r.dir)
            .output()
            .ok()?;
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&out.stdout) {
            return Some(v);
        }
    }
    None
}

/// The leader as the admin API reports it.
pub fn leader(c: &Cluster) -> Option<u32> {
    status(c)?["leader"].as_u64().map(|l| l as u32)
}

fn admin(c: &Cluster, via: u32, args: &[&str]) -> bool {
    let r = &c.replicas[&via];
    std::process::Command::new("timeout")
        .arg("10")
        .arg(&c.bin)
        .arg("admin")
        .args(args)
        .arg("--endpoint")
        .arg(r.admin.to_string())
        .arg("--data-dir")
        .arg(&r.dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs fault steps until `until`: each held for `hold`, then healed, then `gap` of calm.
pub async fn run(
    c: &mut Cluster,
    kinds: &[String],
    seed: u64,
    start: Instant,
    until: Instant,
    hold: Duration,
    gap: Duration,
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
        };
        match kind.as_str() {
            "kill" => c.kill(pick)?,
            "pause" => c.pause(pick)?,
            "isolate" => c.mesh.isolate(pick)?,
            "isolate-leader" => {
                let l = leader(c).unwrap_or(pick);
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
                let l = leader(c).unwrap_or(pick);
                let to = ids.iter().copied().find(|i| *i != l).unwrap_or(pick);
                step.target = format!("{l}->{to}");
                admin(c, to, &["transfer-leader", "--to", &to.to_string()]);
            }
            "compact" => {
                // Compaction under load: everything but the last 300 revisions (a watcher
                // that was away longer meets a 410 and relists).
                let st = status(c);
                let rev = st
                    .as_ref()
                    .and_then(|s| s["current_revision"].as_i64())
                    .unwrap_or(0)
                    - 300;
                step.target = format!("revision {rev}");
                if rev > 0 {
                    admin(c, pick, &["compact", "--revision", &rev.to_string()]);
                }
            }
            _ => {}
        }
        tokio::time::sleep(hold).await;
        c.heal_all()?;
        step.healed_ms = Some(ms());
        steps.push(step);
        tokio::time::sleep(gap).await;
    }
    Ok(steps)
}
