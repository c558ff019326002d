//! `rafter-chaos`: the Jepsen-style harness's command line. `run` does seeded runs (one per
//! seed) against real `rafter` replicas behind fault proxies and exits 0 only when every
//! checker passes on every run; `kinds` lists the fault kinds (and which cannot run on this
//! machine), `scenarios` the named regression scenarios (`run --scenario NAME`). A fault kind that cannot run here is an error before any run starts, never a
//! silent skip. SIGINT / SIGTERM kill the replicas and unmount the tmpfs mounts the harness
//! made. See `chaos/README.md`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "Jepsen-style fault harness for Rafter")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Seeded runs: traffic, watchers, faults, then every checker.
    Run {
        /// First seed; `--runs N` uses seed, seed+1, ...
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 1)]
        runs: u64,
        #[arg(long, default_value_t = 3)]
        replicas: u32,
        /// Seconds of traffic (and faults) per run.
        #[arg(long, default_value = "20s", value_parser = parse_secs)]
        duration: Duration,
        #[arg(long, default_value_t = 8)]
        clients: u32,
        #[arg(long, default_value_t = 8)]
        keys: usize,
        /// Fault kinds (`rafter-chaos kinds`), comma-separated; empty: none.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "kill,pause,isolate,isolate-leader,partition,bridge,delay,drop,leader-transfer"
        )]
        faults: Vec<String>,
        /// A named regression scenario (`rafter-chaos scenarios`): its fault kinds replace
        /// `--faults`.
        #[arg(long)]
        scenario: Option<String>,
        /// The rafter binary (default: target/debug/rafter next to this one).
        #[arg(long, env = "RAFTER_BIN")]
        bin: Option<PathBuf>,
        /// The other build the `upgrade` fault moves replicas to and back from.
        #[arg(long, env = "RAFTER_NEXT_BIN")]
        next_bin: Option<PathBuf>,
        /// Report folder (one sub-folder per seed).
        #[arg(long, default_value = "chaos-report")]
        report: PathBuf,
        /// Extra `rafter serve` flags, space-separated (e.g. "--test-fault stale-reads").
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        server_args: String,
    },
    /// Lists the fault kinds.
    Kinds,
    /// Lists the named regression scenarios.
    Scenarios,
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    let n: u64 = s
        .trim_end_matches('s')
        .parse()
        .map_err(|_| format!("invalid duration {s:?} (seconds, e.g. 20s)"))?;
    Ok(Duration::from_secs(n))
}

fn default_bin() -> PathBuf {
    let me = std::env::current_exe().unwrap_or_default();
    me.parent()
        .map(|d| d.join("rafter"))
        .unwrap_or_else(|| PathBuf::from("rafter"))
}

#[tokio::main]
async fn main() -> Result<()> {
    tokio::spawn(async {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        let code = tokio::select! {
            _ = int.recv() => 130,
            _ = term.recv() => 143,
        };
        rafter_chaos::cluster::emergency_cleanup();
        std::process::exit(code);
    });
    match Cli::parse().cmd {
        Cmd::Kinds => {
            let scratch = std::env::temp_dir().join(format!("rafter-chaos-{}", std::process::id()));
            for k in rafter_chaos::nemesis::KINDS {
                match rafter_chaos::nemesis::unavailable(k, &scratch) {
                    None => println!("{k}"),
                    Some(why) => println!("{k} (unavailable: {why})"),
                }
            }
            let _ = std::fs::remove_dir_all(&scratch);
            Ok(())
        }
        Cmd::Scenarios => {
            for s in rafter_chaos::scenarios::SCENARIOS {
                println!(
                    "{}: --faults {}\n    {}",
                    s.name,
                    s.faults.join(","),
                    s.guards
                );
            }
            Ok(())
        }
        Cmd::Run {
            seed,
            runs,
            replicas,
            duration,
            clients,
            keys,
            faults,
            scenario,
            bin,
            next_bin,
            report,
            server_args,
        } => {
            let faults: Vec<String> = match &scenario {
                Some(name) => rafter_chaos::scenarios::find(name)
                    .ok_or_else(|| {
                        anyhow::anyhow!("unknown scenario {name:?} (see `rafter-chaos scenarios`)")
                    })?
                    .faults
                    .iter()
                    .map(|f| f.to_string())
                    .collect(),
                None => faults.into_iter().filter(|f| !f.is_empty()).collect(),
            };
            for f in &faults {
                if !rafter_chaos::nemesis::KINDS.contains(&f.as_str()) {
                    anyhow::bail!("unknown fault kind {f:?} (see `rafter-chaos kinds`)");
                }
            }
            if faults.iter().any(|f| f == "upgrade") && next_bin.is_none() {
                anyhow::bail!("fault kind upgrade needs --next-bin (the build to upgrade to)");
            }
            std::fs::create_dir_all(&report)?;
            for f in &faults {
                if let Some(why) = rafter_chaos::nemesis::unavailable(f, &report) {
                    anyhow::bail!("fault kind {f} is unavailable on this machine: {why}");
                }
            }
            let mut failed = 0;
            for s in seed..seed + runs {
                let cfg = rafter_chaos::run::Config {
                    bin: bin.clone().unwrap_or_else(default_bin),
                    next_bin: next_bin.clone(),
                    report: report.clone(),
                    seed: s,
                    replicas,
                    duration,
                    clients,
                    keys,
                    faults: faults.clone(),
                    server_args: server_args.split_whitespace().map(str::to_string).collect(),
                };
                let out = rafter_chaos::run::run(&cfg).await?;
                println!("{} ({})", out.summary, out.report.display());
                if !out.ok {
                    failed += 1;
                }
            }
            println!("rafter-chaos: {} run(s), {failed} failed", runs);
            if failed > 0 {
                std::process::exit(1);
            }
            Ok(())
        }
    }
}
