//! The `rafter` binary: `rafter serve` starts one replica.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "rafter", version, about = "A Kubernetes API server on Raft")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start one replica (a one-voter Raft cluster on a fresh data folder).
    Serve {
        /// Data folder: RocksDB, certificates and admin.kubeconfig.
        #[arg(long, default_value = "rafter-data")]
        data_dir: PathBuf,
        /// HTTPS listen address of the Kubernetes API.
        #[arg(long, default_value = "127.0.0.1:6443")]
        listen: SocketAddr,
        /// Raft node id of this replica.
        #[arg(long, default_value_t = 1)]
        node_id: u64,
        /// History older than this is compacted (e.g. 5m, 90s, 1h).
        #[arg(long, default_value = "5m", value_parser = parse_duration)]
        compaction_window: Duration,
        /// Interval of watch BOOKMARK events.
        #[arg(long, default_value = "60s", value_parser = parse_duration)]
        watch_bookmark_interval: Duration,
        /// Watch cache ring buffer size per resource (events).
        #[arg(long, default_value_t = 4096)]
        watch_cache_events: usize,
        /// Queue size per watcher (events); a watcher that falls further behind gets a 410.
        #[arg(long, default_value_t = 1024)]
        watch_queue: usize,
    },
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map(|i| s.split_at(i))
        .unwrap_or((s, "s"));
    let n: u64 = num.parse().map_err(|_| format!("invalid duration {s:?}"))?;
    let secs = match unit {
        "ms" => return Ok(Duration::from_millis(n)),
        "s" | "" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => {
            return Err(format!(
                "invalid duration unit in {s:?} (use ms, s, m or h)"
            ))
        }
    };
    Ok(Duration::from_secs(secs))
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RAFTER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Serve {
            data_dir,
            listen,
            node_id,
            compaction_window,
            watch_bookmark_interval,
            watch_cache_events,
            watch_queue,
        } => rt.block_on(rafter::run(
            rafter::Config {
                data_dir,
                listen,
                node_id,
                compaction_window,
                watch: rafter::watch::CacheOptions {
                    bookmark_interval: watch_bookmark_interval,
                    events_per_resource: watch_cache_events,
                    watcher_queue: watch_queue,
                    ..Default::default()
                },
            },
            |s| {
                println!("rafter: serving the Kubernetes API on {}", s.url);
                println!(
                    "rafter: admin kubeconfig written to {}",
                    s.kubeconfig.display()
                );
                println!(
                    "rafter: try  kubectl --kubeconfig {} get ns",
                    s.kubeconfig.display()
                );
            },
            async {
                let mut term =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                        .expect("SIGTERM handler");
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            },
        )),
    }
}
