//! Rafter: a Kubernetes API server that replicates its own revisioned keyspace with Raft.
//!
//! Layers, bottom-up (dependencies point down only; see docs/architecture.md):
//! `storage` (RocksDB MVCC) → `raft` (openraft) → `kv` (the replicated KV contract) →
//! `watch` → `registry` (generic store + strategies) → `server` (HTTPS edge), with `meta`
//! (pure apimachinery values), `apply` (patching), `openapi` and `controllers` beside them.
//! [`run`] is the composition root.

pub mod apply;
pub mod controllers;
pub mod kv;
pub mod meta;
pub mod openapi;
pub mod raft;
pub mod registry;
pub mod server;
pub mod storage;
pub mod watch;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Configuration of one replica.
#[derive(Clone, Debug)]
pub struct Config {
    pub data_dir: PathBuf,
    pub listen: SocketAddr,
    pub node_id: u64,
    pub compaction_window: Duration,
    /// Watch cache tunables (bookmark interval, buffer and queue sizes).
    pub watch: watch::CacheOptions,
}

/// What a started replica tells its caller.
pub struct Started {
    pub url: String,
    pub kubeconfig: PathBuf,
}

fn metrics_handle() -> metrics_exporter_prometheus::PrometheusHandle {
    static HANDLE: std::sync::OnceLock<metrics_exporter_prometheus::PrometheusHandle> =
        std::sync::OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
            let handle = recorder.handle();
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// Builds every layer bottom-up and serves until `shutdown` resolves.
pub async fn run(
    cfg: Config,
    on_started: impl FnOnce(&Started),
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    std::fs::create_dir_all(&cfg.data_dir)
        .with_context(|| format!("creating {}", cfg.data_dir.display()))?;
    let pki = server::pki::Pki::new(&cfg.data_dir);
    let extra_sans = if cfg.listen.ip().is_unspecified() {
        vec![]
    } else {
        vec![cfg.listen.ip().to_string()]
    };
    pki.ensure(&extra_sans)?;
    // Build the OpenAPI documents off the request path (about half a second in debug builds).
    std::thread::spawn(|| {
        openapi::v2();
        openapi::v3_index();
    });
    let kv_opts = kv::KvOptions {
        // Sample often enough that a short window (tests) compacts promptly.
        compaction_tick: (cfg.compaction_window / 4)
            .clamp(Duration::from_millis(100), Duration::from_secs(10)),
        ..kv::KvOptions::default()
    };
    let kv = kv::Kv::open_with(
        kv::KvConfig {
            data_dir: cfg.data_dir.clone(),
            node_id: cfg.node_id,
            compaction_window: cfg.compaction_window,
        },
        kv_opts,
    )
    .await
    .map_err(|e| anyhow::anyhow!("opening the replicated store: {e}"))?;
    let store = registry::store::Store::new(kv.clone());
    let watch_cache = watch::Cache::start(store.clone(), cfg.watch.clone())
        .await
        .map_err(|e| anyhow::anyhow!("loading the watch cache: {e}"))?;
    let listener = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .with_context(|| format!("binding {}", cfg.listen))?;
    let local = listener.local_addr()?;
    let host = if local.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        local.ip().to_string()
    };
    let url = match local {
        SocketAddr::V6(_) => format!("https://[{host}]:{}", local.port()),
        SocketAddr::V4(_) => format!("https://{host}:{}", local.port()),
    };
    let kubeconfig = pki.write_admin_kubeconfig(&url)?;
    if kv.is_leader() {
        if let Err(e) = controllers::bootstrap::ensure(&store, local.port()).await {
            tracing::warn!("bootstrap objects: {e}");
        }
    }
    let app = Arc::new(server::App {
        store: store.clone(),
        watch: watch_cache,
        shutting_down: AtomicBool::new(false),
        metrics: metrics_handle(),
        started: Instant::now(),
        advertise_url: url.clone(),
    });
    let ns_controller = tokio::spawn(controllers::namespace::run(
        store.clone(),
        Duration::from_millis(500),
    ));
    on_started(&Started { url, kubeconfig });
    server::serve(listener, pki.server_config()?, app.clone(), shutdown).await;
    app.shutting_down
        .store(true, std::sync::atomic::Ordering::Relaxed);
    ns_controller.abort();
    kv.shutdown().await;
    Ok(())
}
