//! Rafter: a Kubernetes API server that replicates its own revisioned keyspace with Raft.
//!
//! Layers, bottom-up (dependencies point down only; see docs/architecture.md):
//! `storage` (RocksDB MVCC) → `raft` (openraft) → `kv` (the replicated KV contract) →
//! `watch` → `registry` (generic store + strategies) → `server` (HTTPS edge), with `meta`
//! (pure apimachinery values), `apply` (patching), `openapi` and `controllers` beside them.
//! [`run`] is the composition root.

pub mod admin;
pub mod admission;
pub mod aggregator;
pub mod apply;
pub mod audit;
pub mod authn;
pub mod authz;
pub mod cel;
pub mod controllers;
pub mod faults;
pub mod flowcontrol;
pub mod generated;
pub mod kubelet;
pub mod kv;
pub mod meta;
pub mod openapi;
pub mod raft;
pub mod registry;
pub mod server;
pub mod storage;
pub mod telemetry;
pub mod watch;

use std::collections::BTreeMap;
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
    /// How long the API keeps serving after the shutdown signal while /readyz fails.
    pub shutdown_delay: Duration,
    /// For this long after start, `/livez` reports every check healthy
    /// (kube-apiserver's `--livez-grace-period`).
    pub livez_grace_period: Duration,
    /// `--root-ca-file`: the CA bundle published to pods (see [`root_ca_file`]).
    pub root_ca_file: Option<PathBuf>,
    /// gRPC peer listen address (default: this replica's entry in `initial_members`).
    pub peer_listen: Option<SocketAddr>,
    /// Peer address advertised to the other replicas (default: the peer listen address).
    pub peer_advertise: Option<String>,
    /// Replica id → peer address of the first voters; empty = a one-voter cluster.
    pub initial_members: BTreeMap<u64, String>,
    /// Start empty, to be added later as a learner; never initialize a cluster.
    pub join: bool,
    /// Mutual TLS between replicas.
    pub peer_tls: Option<kv::PeerTls>,
    /// Talk to peers in plaintext even when the data folder has certificates.
    pub peer_insecure: bool,
    /// gRPC admin API listener (`None`: no admin API).
    pub admin_listen: Option<SocketAddr>,
    /// Serve the admin API in plaintext instead of mutual TLS.
    pub admin_insecure: bool,
    /// Watch cache tunables (bookmark interval, buffer and queue sizes).
    pub watch: watch::CacheOptions,
    /// The leader-only control loops that run (see `controllers::parse_enabled`).
    pub controllers: Vec<&'static str>,
    /// Authentication flags.
    pub authn: authn::Config,
    /// In-flight budgets of non-long-running requests (0: unlimited).
    /// `--enable-priority-and-fairness`: the in-flight limits become the seats of the
    /// priority levels (`flowcontrol`).
    pub enable_priority_and_fairness: bool,
    pub max_requests_inflight: usize,
    pub max_mutating_requests_inflight: usize,
    /// The deadline of non-long-running requests.
    pub request_timeout: Duration,
    /// Serving-certificate flags.
    pub serving: server::pki::Serving,
    /// Extra names and IPs of generated serving and peer certificates (`--tls-sans`,
    /// `--advertise-address`).
    pub tls_sans: Vec<String>,
    /// `--authorization-mode` and the authorizers' files.
    pub authorization: authz::Config,
    /// `--min-request-timeout`.
    pub min_request_timeout: Duration,
    /// `--allow-privileged`.
    pub allow_privileged: bool,
    /// `--enable-admission-plugins`, `--disable-admission-plugins`,
    /// `--admission-control-config-file`.
    pub admission: AdmissionFlags,
    /// `--encryption-provider-config`: an EncryptionConfiguration file.
    pub encryption_provider_config: Option<PathBuf>,
    /// `--encryption-provider-config-automatic-reload`.
    pub encryption_reload: bool,
    /// `--peer-dial`: peer addresses to dial instead of the members' own (fault proxies).
    pub peer_dial: BTreeMap<u64, String>,
    /// `--snapshot-count`: applied log entries between two raft snapshots.
    pub snapshot_count: u64,
    /// `--snapshot-catchup-entries`: log entries kept behind a snapshot.
    pub snapshot_catchup_entries: u64,
    /// `--event-ttl`: how long an Event lives after its last write.
    pub event_ttl: Duration,
    /// `--runtime-config` as given (kube's syntax; empty: every built-in served).
    pub runtime_config: String,
    /// The `--audit-*` flags.
    pub audit: audit::Config,
    /// `--cluster-signing-*`: the CA of the `csrsigning` loop.
    pub cluster_signing: ClusterSigning,
    /// `--proxy-client-cert-file` and `--proxy-client-key-file`: the aggregator's client
    /// certificate (`None`: the data folder's `front-proxy-client.crt` and `.key`).
    pub proxy_client: Option<(PathBuf, PathBuf)>,
    /// `--kubelet-*`: how the connect subresources reach kubelets.
    pub kubelet: kubelet::Config,
}

/// The CA the `csrsigning` loop signs with and the longest certificate it issues.
#[derive(Clone, Debug)]
pub struct ClusterSigning {
    /// `--cluster-signing-cert-file` and `--cluster-signing-key-file` (`None`: the data
    /// folder's `ca.crt` and `ca.key`).
    pub files: Option<(PathBuf, PathBuf)>,
    /// `--cluster-signing-duration`.
    pub duration: Duration,
}

impl Default for ClusterSigning {
    fn default() -> Self {
        ClusterSigning {
            files: None,
            duration: controllers::certificates::signer::DEFAULT_DURATION,
        }
    }
}

/// The admission flags, checked when the server starts.
#[derive(Clone, Debug, Default)]
pub struct AdmissionFlags {
    pub enable: Vec<String>,
    pub disable: Vec<String>,
    pub config_file: Option<PathBuf>,
    /// `--enable-aggregator-routing`: webhooks behind a Service are dialled at an endpoint.
    pub aggregator_routing: bool,
    /// `--default-not-ready-toleration-seconds` (None: 300).
    pub default_not_ready_toleration_seconds: Option<i64>,
    /// `--default-unreachable-toleration-seconds` (None: 300).
    pub default_unreachable_toleration_seconds: Option<i64>,
}

impl Config {
    /// A single replica serving `listen` from `data_dir` (no peers).
    pub fn single(data_dir: impl Into<PathBuf>, listen: SocketAddr) -> Config {
        Config {
            data_dir: data_dir.into(),
            listen,
            node_id: 1,
            compaction_window: Duration::from_secs(300),
            peer_listen: None,
            peer_advertise: None,
            initial_members: BTreeMap::new(),
            join: false,
            peer_tls: None,
            peer_insecure: false,
            shutdown_delay: Duration::ZERO,
            livez_grace_period: Duration::ZERO,
            root_ca_file: None,
            admin_listen: None,
            admin_insecure: false,
            watch: watch::CacheOptions::default(),
            controllers: controllers::parse_enabled("*").expect("default controllers"),
            authn: authn::Config::default(),
            enable_priority_and_fairness: true,
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            request_timeout: Duration::from_secs(60),
            serving: server::pki::Serving::default(),
            tls_sans: Vec::new(),
            authorization: authz::Config::default(),
            min_request_timeout: Duration::from_secs(1800),
            allow_privileged: false,
            admission: AdmissionFlags::default(),
            encryption_provider_config: None,
            encryption_reload: false,
            peer_dial: BTreeMap::new(),
            snapshot_count: 10_000,
            snapshot_catchup_entries: 1_000,
            runtime_config: String::new(),
            event_ttl: Duration::from_secs(3600),
            audit: audit::Config::default(),
            cluster_signing: ClusterSigning::default(),
            proxy_client: None,
            kubelet: kubelet::Config::default(),
        }
    }
}

/// Peer TLS: explicit files, else — for a replica that has peers — the data folder's peer CA
/// and peer certificate (replicas of one cluster share the peer CA; it signs nothing else, so
/// client and admin certificates cannot reach the peer service), unless `peer_insecure`.
fn peer_tls(cfg: &Config) -> Option<kv::PeerTls> {
    if cfg.peer_tls.is_some() || cfg.peer_insecure {
        return cfg.peer_tls.clone();
    }
    // A replica that has (or may later get) peers talks TLS to them: one started alone or
    // restored from a backup keeps it on whenever its folder has a peer CA, so learners added
    // later can join.
    let d = &cfg.data_dir;
    let has_peers = cfg.join || cfg.initial_members.len() > 1 || d.join("peer-ca.crt").exists();
    has_peers.then(|| {
        if d.join("peer-ca.crt").exists() {
            kv::PeerTls {
                ca: d.join("peer-ca.crt"),
                cert: d.join("peer.crt"),
                key: d.join("peer.key"),
            }
        } else {
            // A data folder from before the peer CA (see Pki::ensure).
            kv::PeerTls {
                ca: d.join("ca.crt"),
                cert: d.join("server.crt"),
                key: d.join("server.key"),
            }
        }
    })
}

/// `--admin-insecure` and `--peer-insecure` drop TLS: allowed on loopback addresses only.
fn check_insecure_listeners(cfg: &Config) -> Result<()> {
    let loopback = |host: &str| {
        host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    if cfg.admin_insecure {
        if let Some(a) = cfg.admin_listen.filter(|a| !a.ip().is_loopback()) {
            anyhow::bail!(
                "--admin-insecure serves the admin API without TLS: it may listen only on a loopback address, not {a}"
            );
        }
    }
    if cfg.peer_insecure {
        let mut addrs: Vec<String> = cfg.initial_members.values().cloned().collect();
        addrs.extend(cfg.peer_listen.map(|a| a.to_string()));
        addrs.extend(cfg.peer_advertise.clone());
        for a in addrs {
            let host = a.rsplit_once(':').map(|(h, _)| h).unwrap_or(&a);
            if !loopback(host) {
                anyhow::bail!(
                    "--peer-insecure replicates without TLS: every peer address must be a loopback address, not {a}"
                );
            }
        }
    }
    Ok(())
}

/// The `csrsigning`, `csrapproving` and `csrcleaner` loops `--controllers` turns on. The
/// signing CA is loaded at start: a CA that does not load is an error, as in
/// kube-controller-manager.
fn certificate_loops(
    cfg: &Config,
    store: &registry::store::Store,
    cache: &watch::Cache,
    authorizer: &Arc<authz::Authorizer>,
) -> Result<Vec<tokio::task::JoinHandle<()>>> {
    use controllers::certificates::{approver, authority::Authority, cleaner, signer};
    let mut loops = Vec::new();
    if cfg.controllers.contains(&"csrsigning") {
        let (cert, key) = cfg
            .cluster_signing
            .files
            .clone()
            .unwrap_or_else(|| (cfg.data_dir.join("ca.crt"), cfg.data_dir.join("ca.key")));
        let ca = Authority::load(&cert, &key)
            .map_err(|e| anyhow::anyhow!("csrsigning: the signing CA: {e}"))?;
        loops.push(tokio::spawn(signer::run(
            store.clone(),
            cache.clone(),
            Arc::new(ca),
            cfg.cluster_signing.duration,
        )));
    }
    if cfg.controllers.contains(&"csrapproving") {
        loops.push(tokio::spawn(approver::run(
            store.clone(),
            cache.clone(),
            authorizer.clone(),
        )));
    }
    if cfg.controllers.contains(&"csrcleaner") {
        loops.push(tokio::spawn(cleaner::run(
            store.clone(),
            cleaner::POLLING_INTERVAL,
        )));
    }
    Ok(loops)
}

/// What a started replica tells its caller.
pub struct Started {
    pub url: String,
    pub kubeconfig: PathBuf,
    /// Bound address of the admin API, if any.
    pub admin_addr: Option<SocketAddr>,
}

fn metrics_handle() -> metrics_exporter_prometheus::PrometheusHandle {
    static HANDLE: std::sync::OnceLock<metrics_exporter_prometheus::PrometheusHandle> =
        std::sync::OnceLock::new();
    HANDLE
        .get_or_init(|| {
            // kube's histograms with kube's buckets (a histogram without buckets would be
            // rendered as a summary).
            let mut builder = metrics_exporter_prometheus::PrometheusBuilder::new();
            for (name, buckets) in telemetry::metrics::histogram_buckets() {
                builder = builder
                    .set_buckets_for_metric(
                        metrics_exporter_prometheus::Matcher::Full(name.to_string()),
                        buckets,
                    )
                    .expect("histogram buckets are never empty");
            }
            let recorder = builder.build_recorder();
            let handle = recorder.handle();
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// The aggregator's client certificate and what the `extension-apiserver-authentication`
/// ConfigMap publishes: `--requestheader-*` when set, else the data folder's front-proxy CA
/// with kube's header names (what the aggregator's own proxy sends).
fn aggregator_config(cfg: &Config) -> Result<aggregator::Config> {
    let read =
        |p: &std::path::Path| std::fs::read(p).with_context(|| format!("reading {}", p.display()));
    let (cert, key) = match &cfg.proxy_client {
        Some((c, k)) => (c.clone(), k.clone()),
        None => (
            cfg.data_dir.join("front-proxy-client.crt"),
            cfg.data_dir.join("front-proxy-client.key"),
        ),
    };
    let identity = Some((read(&cert)?, read(&key)?));
    let requestheader = match &cfg.authn.requestheader {
        Some(rh) => aggregator::RequestHeader {
            client_ca: read(&rh.client_ca_file)?,
            allowed_names: rh.allowed_names.clone(),
            username_headers: rh.username_headers.clone(),
            group_headers: rh.group_headers.clone(),
            extra_headers_prefix: rh.extra_headers_prefix.clone(),
        },
        None => aggregator::RequestHeader {
            client_ca: std::fs::read(cfg.data_dir.join("front-proxy-ca.crt")).unwrap_or_default(),
            ..Default::default()
        },
    };
    let client_ca = match &cfg.authn.client_ca_file {
        Some(p) => Some(read(p)?),
        None => std::fs::read(cfg.data_dir.join("ca.crt")).ok(),
    };
    Ok(aggregator::Config {
        identity,
        requestheader,
        client_ca,
    })
}

/// The CA bundle published to pods (`kube-root-ca.crt` ConfigMaps, token Secrets' `ca.crt`):
/// `--root-ca-file` (kube-controller-manager's flag), else `--client-ca-file` (one cluster CA,
/// as kubeadm lays it out), else the data folder's `ca.crt`.
fn root_ca_file(cfg: &Config) -> PathBuf {
    cfg.root_ca_file
        .clone()
        .unwrap_or_else(|| cfg.authn.client_ca_path(&cfg.data_dir))
}

/// How long a stopping leader waits for a fellow voter to take over leadership.
const HAND_OVER_TIMEOUT: Duration = Duration::from_secs(5);

/// Builds every layer bottom-up and serves until `shutdown` resolves.
pub async fn run(
    cfg: Config,
    on_started: impl FnOnce(&Started),
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    if let Some(path) = &cfg.encryption_provider_config {
        let e = registry::encryption::Encryption::load(path).map_err(|e| anyhow::anyhow!(e))?;
        // One configuration per process: a second replica in the same process (tests)
        // replaces it.
        registry::encryption::install(e);
    }
    check_insecure_listeners(&cfg)?;
    if cfg.enable_priority_and_fairness
        && cfg.max_requests_inflight + cfg.max_mutating_requests_inflight == 0
    {
        anyhow::bail!(
            "--max-requests-inflight={} and --max-mutating-requests-inflight={}: at least one value must be positive when --enable-priority-and-fairness=true",
            cfg.max_requests_inflight,
            cfg.max_mutating_requests_inflight
        );
    }
    // The audit policy and backends are checked before anything starts (kube's texts).
    let _ = metrics_handle();
    let auditor = audit::Auditor::from_config(&cfg.audit).map_err(anyhow::Error::msg)?;
    admission::plugins::tolerations::set_defaults(
        cfg.admission
            .default_not_ready_toleration_seconds
            .unwrap_or(300),
        cfg.admission
            .default_unreachable_toleration_seconds
            .unwrap_or(300),
    );
    admission::webhook::client::set_endpoint_routing(cfg.admission.aggregator_routing);
    // Admission flags are checked before anything starts (kube's texts for unknown names).
    let admission_chain = Arc::new(
        admission::Chain::from_flags(
            &cfg.admission.enable,
            &cfg.admission.disable,
            cfg.admission.config_file.as_deref(),
        )
        .map_err(anyhow::Error::msg)?,
    );
    std::fs::create_dir_all(&cfg.data_dir)
        .with_context(|| format!("creating {}", cfg.data_dir.display()))?;
    let pki = server::pki::Pki::new(&cfg.data_dir);
    let extra_sans: Vec<String> = std::iter::once(cfg.listen)
        .chain(cfg.admin_listen)
        .chain(cfg.peer_listen)
        .filter(|a| !a.ip().is_unspecified())
        .map(|a| a.ip().to_string())
        .chain(cfg.tls_sans.iter().cloned())
        .collect();
    pki.ensure(&extra_sans)?;
    // Before the replicated store opens (which may wait for peers): the service-account key
    // must be on disk for cluster scripts to copy it to the other replicas.
    let mut authn_cfg = cfg.authn.clone();
    if cfg.authorization.modes == [authz::Mode::AlwaysAllow] && authn_cfg.anonymous {
        // kube-apiserver's rule: anonymous requests with an allow-all authorizer would be
        // superusers.
        tracing::warn!(
            "AnonymousAuth is not allowed with the AlwaysAllow authorizer; turning it off"
        );
        authn_cfg.anonymous = false;
    }
    let authenticator = authn::Authenticator::from_config(&authn_cfg, &cfg.data_dir)
        .map_err(|e| anyhow::anyhow!("authentication: {e}"))?;
    let authorizer = Arc::new(
        authz::Authorizer::new(&cfg.authorization)
            .map_err(|e| anyhow::anyhow!("authorization: {e}"))?,
    );
    let listener = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .with_context(|| format!("binding {}", cfg.listen))?;
    let local = listener.local_addr()?;
    let kv_opts = kv::KvOptions {
        // Sample often enough that a short window (tests) compacts promptly.
        compaction_tick: (cfg.compaction_window / 4)
            .clamp(Duration::from_millis(100), Duration::from_secs(10)),
        snapshot_every: cfg.snapshot_count,
        keep_logs: cfg.snapshot_catchup_entries,
        ..kv::KvOptions::default()
    };
    let kv = kv::Kv::open_with(
        kv::KvConfig {
            data_dir: cfg.data_dir.clone(),
            node_id: cfg.node_id,
            compaction_window: cfg.compaction_window,
            peer_listen: cfg.peer_listen,
            peer_advertise: cfg.peer_advertise.clone(),
            api_addr: local.to_string(),
            initial_members: cfg.initial_members.clone(),
            join: cfg.join,
            peer_tls: peer_tls(&cfg),
            faults: None,
            peer_dial: cfg.peer_dial.clone(),
        },
        kv_opts,
    )
    .await
    .map_err(|e| anyhow::anyhow!("opening the replicated store: {e}"))?;
    registry::builtin::core::pod_validation::set_allow_privileged(cfg.allow_privileged);
    let runtime_config = registry::runtime_config::RuntimeConfig::parse(
        &cfg.runtime_config,
        &registry::builtin::resources(),
    )?;
    let registry = Arc::new(registry::builtin::registry_with(&runtime_config));
    let store =
        registry::store::Store::new(kv.clone(), registry.clone()).with_event_ttl(cfg.event_ttl);
    // Events expire as under etcd leases; storage's own duty, not a `--controllers` loop.
    let ttl_expiry = Some(tokio::spawn(registry::ttl::run(kv.clone())));
    let openapi_docs = Arc::new(openapi::Documents::default());
    // Build the OpenAPI documents off the request path (about half a second in debug builds),
    // at start and again after every registry change (bursts of changes coalesce), so that
    // a request rarely waits for a build.
    tokio::spawn({
        let docs = openapi_docs.clone();
        let registry = registry.clone();
        async move {
            let mut changes = registry.subscribe();
            loop {
                let (docs, cat) = (docs.clone(), registry.snapshot());
                let built = tokio::task::spawn_blocking(move || {
                    docs.v2(&cat);
                    docs.v3(&cat);
                })
                .await;
                if built.is_err() || changes.changed().await.is_err() {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                changes.borrow_and_update();
            }
        }
    });
    let watch_cache = watch::Cache::start(store.clone(), cfg.watch.clone())
        .await
        .map_err(|e| anyhow::anyhow!("loading the watch cache: {e}"))?;
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
    // Whether the RBAC bootstrap policy was reconciled in this term of leadership.
    let mut policy_done = false;
    if kv.is_leader() {
        if let Err(e) = controllers::bootstrap::ensure(&store, local.port()).await {
            tracing::warn!("bootstrap objects: {e}");
        }
        match controllers::rbac::ensure_policy(&store).await {
            Ok(()) => policy_done = true,
            Err(e) => tracing::warn!("bootstrap RBAC policy: {e}"),
        }
    }
    // In a cluster, whichever replica leads (now or later) ensures the bootstrap objects.
    let bootstrapper = tokio::spawn({
        let store = store.clone();
        let kv = kv.clone();
        let port = local.port();
        async move {
            // Checked at once on becoming leader, then every RECHECK while leading.
            const RECHECK: Duration = Duration::from_secs(5);
            // Leadership may have come after the check above (then the policy was not
            // reconciled yet): only a reconciliation that happened counts.
            let mut last: Option<Instant> = policy_done.then(Instant::now);
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                if !kv.is_leader() {
                    last = None;
                    continue;
                }
                if last.is_some_and(|t| t.elapsed() < RECHECK) {
                    continue;
                }
                // The system namespaces first (the policy has Roles in two of them).
                if let Err(e) = controllers::bootstrap::ensure(&store, port).await {
                    tracing::warn!("bootstrap objects: {e}");
                    continue;
                }
                // The RBAC bootstrap policy is reconciled once per term of leadership (as
                // kube-apiserver does at start): a role an operator deletes stays deleted.
                if last.is_none() {
                    if let Err(e) = controllers::rbac::ensure_policy(&store).await {
                        tracing::warn!("bootstrap RBAC policy: {e}");
                        continue;
                    }
                }
                last = Some(Instant::now());
            }
        }
    });
    let mut followers = authorizer.start(&watch_cache);
    let flowcontrol = cfg.enable_priority_and_fairness.then(|| {
        flowcontrol::FlowControl::new(
            cfg.max_requests_inflight + cfg.max_mutating_requests_inflight,
        )
    });
    if let Some(fc) = &flowcontrol {
        followers.extend(fc.run(watch_cache.clone(), store.clone()));
    }
    followers.extend(admission_chain.start(&watch_cache));
    let aggregator_app = Arc::new(aggregator::Aggregator::new(
        store.clone(),
        aggregator_config(&cfg)?,
    ));
    // Every replica checks the remote APIServices itself; the leader registers the local ones
    // (first before serving, as the bootstrap objects).
    if kv.is_leader() {
        aggregator::availability::initial(&aggregator_app).await;
    }
    let aggregator_loop = Some(tokio::spawn(aggregator::availability::run(
        aggregator_app.clone(),
    )));
    let app = Arc::new(server::App {
        store: store.clone(),
        admission: admission_chain,
        openapi: openapi_docs,
        watch: watch_cache,
        shutting_down: AtomicBool::new(false),
        metrics: metrics_handle(),
        started: Instant::now(),
        livez_grace_period: cfg.livez_grace_period,
        advertise_url: url.clone(),
        authn: authenticator,
        // With priority and fairness on, the in-flight limits are its seats instead.
        inflight: if cfg.enable_priority_and_fairness {
            server::Inflight::new(0, 0)
        } else {
            server::Inflight::new(
                cfg.max_requests_inflight,
                cfg.max_mutating_requests_inflight,
            )
        },
        flowcontrol: flowcontrol.clone(),
        request_timeout: cfg.request_timeout,
        authz: authorizer.clone(),
        min_request_timeout: cfg.min_request_timeout,
        audit: auditor,
        aggregator: aggregator_app.clone(),
        kubelet: Arc::new(kubelet::Client::new(&cfg.kubelet).map_err(|e| anyhow::anyhow!(e))?),
    });
    let aggregation = cfg
        .controllers
        .contains(&"clusterrole-aggregation")
        .then(|| {
            tokio::spawn(controllers::rbac::run_aggregation(
                store.clone(),
                app.watch.clone(),
            ))
        });
    // Every replica serves the established custom resource definitions; the leader
    // establishes new ones.
    let crd_serving = Some(tokio::spawn(controllers::crd::serve(
        store.clone(),
        app.watch.clone(),
    )));
    let crd_establishing = cfg.controllers.contains(&"crd-establishing").then(|| {
        tokio::spawn(controllers::crd::establish(
            store.clone(),
            app.watch.clone(),
        ))
    });
    let crd_finalizing = cfg
        .controllers
        .contains(&"crd-finalizer")
        .then(|| tokio::spawn(controllers::crd::finalize(store.clone(), app.watch.clone())));
    let encryption_reload = match (&cfg.encryption_provider_config, cfg.encryption_reload) {
        (Some(path), true) => Some(tokio::spawn(registry::encryption::reload_on_change(
            path.clone(),
            Duration::from_secs(1),
        ))),
        _ => None,
    };
    let garbage_collector = cfg
        .controllers
        .contains(&"garbage-collector")
        .then(|| tokio::spawn(controllers::gc::run(store.clone(), app.watch.clone())));
    let ns_controller = cfg.controllers.contains(&"namespace").then(|| {
        tokio::spawn(controllers::namespace::run(
            store.clone(),
            Duration::from_millis(500),
        ))
    });
    let quota_controller = cfg.controllers.contains(&"resourcequota").then(|| {
        tokio::spawn(controllers::resourcequota::run(
            store.clone(),
            Duration::from_millis(500),
        ))
    });
    let (pvc, pv) = (
        cfg.controllers.contains(&"pvc-protection"),
        cfg.controllers.contains(&"pv-protection"),
    );
    let volume_protection = (pvc || pv).then(|| {
        tokio::spawn(controllers::volume_protection::run(
            store.clone(),
            Duration::from_millis(500),
            pvc,
            pv,
        ))
    });
    let sa_tokens = match (
        cfg.controllers.contains(&"serviceaccount-token"),
        app.authn.service_accounts.clone(),
    ) {
        (true, Some(sa)) => Some(tokio::spawn(controllers::serviceaccount_tokens::run(
            store.clone(),
            sa,
            std::fs::read(root_ca_file(&cfg)).unwrap_or_default(),
            Duration::from_secs(1),
        ))),
        _ => None,
    };
    let ca_pem = String::from_utf8_lossy(&std::fs::read(root_ca_file(&cfg)).unwrap_or_default())
        .into_owned();
    let sa_loops: Vec<_> = [
        (
            "serviceaccount",
            controllers::serviceaccounts::Loop::DefaultAccount,
        ),
        (
            "root-ca-cert-publisher",
            controllers::serviceaccounts::Loop::RootCa,
        ),
    ]
    .into_iter()
    .filter(|(name, _)| cfg.controllers.contains(name))
    .map(|(_, which)| {
        tokio::spawn(controllers::serviceaccounts::run(
            store.clone(),
            app.watch.clone(),
            which,
            ca_pem.clone(),
        ))
    })
    .collect();
    let token_loops = {
        let cleaner = cfg.controllers.contains(&"tokencleaner");
        let signer = cfg.controllers.contains(&"bootstrapsigner");
        (cleaner || signer).then(|| {
            tokio::spawn(controllers::bootstrap_tokens::run(
                store.clone(),
                Duration::from_secs(1),
                cleaner,
                signer,
            ))
        })
    };
    let csr_loops = certificate_loops(&cfg, &store, &app.watch, &authorizer)?;
    let (admin_stop, admin_stopped) = tokio::sync::oneshot::channel::<()>();
    let (admin_addr, admin_task) = match cfg.admin_listen {
        Some(addr) => {
            let tls = if cfg.admin_insecure {
                admin::AdminTls::Insecure
            } else {
                let (cert, key) = pki.serving_files(&cfg.serving)?;
                admin::AdminTls::Mutual {
                    cert,
                    key,
                    client_ca: cfg.authn.client_ca_path(&cfg.data_dir),
                }
            };
            let l = admin::AdminListener::bind(addr, &tls).await?;
            let bound = l.local_addr()?;
            let task = tokio::spawn(l.serve(kv.clone(), Some(store.clone()), async {
                let _ = admin_stopped.await;
            }));
            (Some(bound), Some(task))
        }
        None => (None, None),
    };
    on_started(&Started {
        url,
        kubeconfig,
        admin_addr,
    });
    // On the shutdown signal /readyz fails at once (its `shutdown` check); the listener keeps
    // serving for `shutdown_delay` so a load balancer can route away first.
    // A store that failed for good (e.g. a full disk under the raft log) ends the process
    // with an error instead of serving 5xx forever: restarted, it recovers from its folder.
    let failure = Arc::new(std::sync::Mutex::new(None::<String>));
    let draining = {
        let app = app.clone();
        let delay = cfg.shutdown_delay;
        let (kv, failure) = (kv.clone(), failure.clone());
        async move {
            let failed = tokio::select! {
                _ = shutdown => false,
                e = kv.failed() => {
                    tracing::error!("the replicated store failed: {e}; stopping");
                    *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    true
                }
            };
            app.shutting_down
                .store(true, std::sync::atomic::Ordering::Relaxed);
            // A leader that is asked to stop hands leadership over first: the others need not
            // wait an election timeout, and writes taken here during the delay are forwarded.
            let hand_over = async {
                if failed {
                    return;
                }
                match kv.hand_over(HAND_OVER_TIMEOUT).await {
                    Ok(Some(to)) => {
                        tracing::info!("leadership handed to replica {to} before stopping")
                    }
                    Ok(None) => {}
                    Err(e) => tracing::warn!("leadership not handed over before stopping: {e}"),
                }
            };
            tokio::join!(hand_over, tokio::time::sleep(delay));
        }
    };
    let tls = pki.server_config(app.authn.x509.trusted_ca_files(), &cfg.serving)?;
    server::serve(listener, tls, app.clone(), draining).await;
    let _ = admin_stop.send(());
    if let Some(task) = admin_task {
        match tokio::time::timeout(Duration::from_secs(5), task).await {
            Ok(Ok(Err(e))) => tracing::warn!("admin API: {e:#}"),
            Ok(_) => {}
            Err(_) => tracing::warn!("admin API did not stop within 5 s"),
        }
    }
    for c in [
        ns_controller,
        garbage_collector,
        volume_protection,
        quota_controller,
        token_loops,
        sa_tokens,
        aggregation,
        crd_serving,
        crd_establishing,
        crd_finalizing,
        encryption_reload,
        ttl_expiry,
        aggregator_loop,
    ]
    .into_iter()
    .flatten()
    .chain(csr_loops)
    {
        c.abort();
    }
    bootstrapper.abort();
    for c in sa_loops {
        c.abort();
    }
    for f in followers {
        f.abort();
    }
    kv.shutdown().await;
    let failed = failure.lock().unwrap_or_else(|p| p.into_inner()).take();
    match failed {
        Some(e) => Err(anyhow::anyhow!("the replicated store failed: {e}")),
        None => Ok(()),
    }
}
