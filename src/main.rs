//! The `rafter` binary: `rafter serve` starts one replica; `rafter admin` administers a cluster.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// Rust's allocations go to mimalloc: under load glibc's malloc and free took about a tenth of
/// a replica's CPU (many small, short-lived allocations on every request). RocksDB's own C++
/// allocations still use glibc's (see [`tune_allocators`]).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        /// Log format, `text` or `json` (kube's flag; `RAFTER_LOG` sets the filter).
        #[arg(long, default_value = "text")]
        logging_format: String,
        /// kube's TracingConfiguration (apiserver.config.k8s.io): the sampling rate of new
        /// traces (OTLP export is not implemented; spans are logged).
        #[arg(long)]
        tracing_config_file: Option<PathBuf>,
        /// HTTPS listen address of the Kubernetes API.
        #[arg(long, default_value = "127.0.0.1:6443")]
        listen: SocketAddr,
        /// Raft node id of this replica.
        #[arg(long, default_value_t = 1)]
        node_id: u64,
        /// History older than this is compacted (e.g. 5m, 90s, 1h).
        #[arg(long, default_value = "5m", value_parser = parse_duration)]
        compaction_window: Duration,
        /// Applied log entries between two raft snapshots (etcd's --snapshot-count).
        #[arg(long, default_value_t = 10_000)]
        snapshot_count: u64,
        /// Log entries kept behind a snapshot so that a slow follower can catch up without
        /// one (etcd's --snapshot-catchup-entries).
        #[arg(long, default_value_t = 1_000)]
        snapshot_catchup_entries: u64,
        /// Keep serving this long after SIGTERM while /readyz reports not ready
        /// (kube-apiserver's flag; `--shutdown-delay` is accepted too).
        #[arg(long = "shutdown-delay-duration", alias = "shutdown-delay", default_value = "0s", value_parser = parse_duration)]
        shutdown_delay: Duration,
        /// For this long after start, /livez reports its checks healthy (the time a replica
        /// may take to join its cluster and catch up).
        #[arg(long, default_value = "0s", value_parser = parse_duration)]
        livez_grace_period: Duration,
        /// CA bundle published to pods in `kube-root-ca.crt` ConfigMaps and token Secrets
        /// (kube-controller-manager's flag; default: --client-ca-file, else the data folder's
        /// ca.crt).
        #[arg(long)]
        root_ca_file: Option<PathBuf>,
        /// gRPC listen address for the other replicas (default: this replica's address in
        /// --initial-members).
        #[arg(long)]
        peer_listen: Option<SocketAddr>,
        /// Peer address the other replicas reach this one at (default: --peer-listen).
        #[arg(long)]
        peer_advertise: Option<String>,
        /// First voters of a new cluster, "1=127.0.0.1:7001,2=127.0.0.1:7002,...". Only the
        /// lowest id initializes it; absent = a one-voter cluster of this replica.
        #[arg(long, value_parser = parse_members)]
        initial_members: Option<BTreeMap<u64, String>>,
        /// Start empty and wait to be added as a learner (never initialize a cluster).
        #[arg(long)]
        join: bool,
        /// CA certificate (PEM) that signed every replica's peer certificate (mutual TLS).
        #[arg(long, requires_all = ["peer_cert", "peer_key"])]
        peer_ca: Option<PathBuf>,
        /// This replica's peer certificate (PEM).
        #[arg(long, requires_all = ["peer_ca", "peer_key"])]
        peer_cert: Option<PathBuf>,
        /// Talk to peers without TLS (default: mutual TLS with the data folder's CA and serving
        /// certificate whenever the replica has peers).
        #[arg(long)]
        peer_insecure: bool,
        /// This replica's peer private key (PEM).
        #[arg(long, requires_all = ["peer_ca", "peer_cert"])]
        peer_key: Option<PathBuf>,
        /// Serve the gRPC admin API (`rafter admin ...`) on this address.
        #[arg(long)]
        admin_listen: Option<SocketAddr>,
        /// Serve the admin API without TLS (default: mutual TLS with the data folder's CA).
        #[arg(long)]
        admin_insecure: bool,
        /// Interval of watch BOOKMARK events.
        #[arg(long, default_value = "60s", value_parser = parse_duration)]
        watch_bookmark_interval: Duration,
        /// Watch cache ring buffer size per resource (events).
        #[arg(long, default_value_t = 4096)]
        watch_cache_events: usize,
        /// Queue size per watcher (events); a watcher that falls further behind gets a 410.
        #[arg(long, default_value_t = 1024)]
        watch_queue: usize,
        /// Leader-only control loops to run, as kube-controller-manager's flag: `*` for all,
        /// `-name` to turn one off (e.g. `*,-namespace` when a kube-controller-manager runs).
        /// Known: namespace, serviceaccount-token; tokencleaner and bootstrapsigner run only
        /// when named.
        #[arg(long, default_value = "*", value_parser = parse_controllers)]
        controllers: ControllerList,
        /// Static bearer tokens: a CSV file of token,user,uid,"group1,group2".
        #[arg(long)]
        token_auth_file: Option<PathBuf>,
        /// Requests without credentials are system:anonymous (else 401).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        anonymous_auth: bool,
        /// Bootstrap tokens (Secrets of type bootstrap.kubernetes.io/token in kube-system)
        /// authenticate as system:bootstrap:<id>.
        #[arg(long)]
        enable_bootstrap_token_auth: bool,
        /// Authorizers in order: Node, RBAC, ABAC, Webhook, AlwaysAllow, AlwaysDeny. The
        /// first allow or deny wins; system:masters is always allowed.
        #[arg(long, default_value = "Node,RBAC", value_parser = parse_authorization_mode)]
        authorization_mode: AuthzMode,
        /// Peer addresses to dial instead of the members' own, `id=host:port,...` (a chaos
        /// harness's fault proxies).
        #[arg(long, hide = true, value_parser = parse_members)]
        peer_dial: Option<BTreeMap<u64, String>>,
        /// Test-only fault modes (see src/faults.rs); never for real clusters.
        #[arg(long, hide = true, value_delimiter = ',')]
        test_fault: Vec<String>,
        /// ABAC policy (JSON lines), for --authorization-mode ABAC.
        #[arg(long)]
        authorization_policy_file: Option<PathBuf>,
        /// A kubeconfig naming a SubjectAccessReview webhook, for --authorization-mode Webhook.
        #[arg(long)]
        authorization_webhook_config_file: Option<PathBuf>,
        /// The SubjectAccessReview version the webhook speaks (v1 or v1beta1).
        #[arg(long, default_value = "v1")]
        authorization_webhook_version: String,
        /// How long the webhook's "authorized" answers are cached.
        #[arg(long, default_value = "5m", value_parser = parse_duration)]
        authorization_webhook_cache_authorized_ttl: Duration,
        /// How long the webhook's other answers are cached.
        #[arg(long, default_value = "30s", value_parser = parse_duration)]
        authorization_webhook_cache_unauthorized_ttl: Duration,
        /// A kubeconfig naming a TokenReview webhook that authenticates bearer tokens.
        #[arg(long)]
        authentication_token_webhook_config_file: Option<PathBuf>,
        /// The TokenReview version the webhook speaks (v1 or v1beta1).
        #[arg(long, default_value = "v1")]
        authentication_token_webhook_version: String,
        /// How long webhook answers are cached.
        #[arg(long, default_value = "2m", value_parser = parse_duration)]
        authentication_token_webhook_cache_ttl: Duration,
        /// OIDC issuer whose ID tokens authenticate (https).
        #[arg(long)]
        oidc_issuer_url: Option<String>,
        /// The audience (client id) ID tokens must carry.
        #[arg(long, default_value = "")]
        oidc_client_id: String,
        /// The claim that names the user.
        #[arg(long, default_value = "sub")]
        oidc_username_claim: String,
        /// Prefix of user names (default `<issuer>#`, none for email; `-` for none).
        #[arg(long)]
        oidc_username_prefix: Option<String>,
        /// The claim listing the user's groups.
        #[arg(long)]
        oidc_groups_claim: Option<String>,
        /// Prefix of group names.
        #[arg(long, default_value = "")]
        oidc_groups_prefix: String,
        /// key=value a token must carry (repeatable).
        #[arg(long)]
        oidc_required_claim: Vec<String>,
        /// CA that signed the issuer's serving certificate.
        #[arg(long)]
        oidc_ca_file: Option<PathBuf>,
        /// Accepted signing algorithms (default RS256).
        #[arg(long, value_delimiter = ',')]
        oidc_signing_algs: Vec<String>,
        /// CA of user client certificates (default: the data folder's ca.crt).
        #[arg(long)]
        client_ca_file: Option<PathBuf>,
        /// CA of authenticating proxies, whose requests name the user in headers.
        #[arg(long)]
        requestheader_client_ca_file: Option<PathBuf>,
        /// Proxy certificate common names accepted (comma-separated; empty: any).
        #[arg(long, value_delimiter = ',')]
        requestheader_allowed_names: Vec<String>,
        /// Headers naming the user, first non-empty wins (e.g. X-Remote-User).
        #[arg(long, value_delimiter = ',')]
        requestheader_username_headers: Vec<String>,
        /// Headers naming the user's uid.
        #[arg(long, value_delimiter = ',')]
        requestheader_uid_headers: Vec<String>,
        /// Headers naming groups (e.g. X-Remote-Group).
        #[arg(long, value_delimiter = ',')]
        requestheader_group_headers: Vec<String>,
        /// Header prefixes of extra values (e.g. X-Remote-Extra-).
        #[arg(long, value_delimiter = ',')]
        requestheader_extra_headers_prefix: Vec<String>,
        /// Issuer of service-account tokens (repeatable; the first one issues).
        #[arg(long)]
        service_account_issuer: Vec<String>,
        /// Audiences the API accepts in service-account tokens (default: the issuers).
        #[arg(long, value_delimiter = ',')]
        api_audiences: Vec<String>,
        /// Private key (PKCS#8 PEM, P-256 or RSA) that signs service-account tokens
        /// (default: sa.key in the data folder, generated once).
        #[arg(long)]
        service_account_signing_key_file: Option<PathBuf>,
        /// Extra keys that verify service-account tokens (PEM public keys, certificates or
        /// private keys; repeatable).
        #[arg(long)]
        service_account_key_file: Vec<PathBuf>,
        /// Service-account tokens are valid only while their ServiceAccount (and bound
        /// Pod/Secret) still exist.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        service_account_lookup: bool,
        /// Longest lifetime of an issued token (e.g. 24h; default: none).
        #[arg(long, value_parser = parse_duration)]
        service_account_max_token_expiration: Option<Duration>,
        /// API Priority and Fairness: requests are classified by FlowSchemas into priority
        /// levels that share the server's seats (the two in-flight limits added up), queued
        /// fairly, refused with a 429 when their level is full. Off: the in-flight limits
        /// apply as they are.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        enable_priority_and_fairness: bool,
        /// Most non-mutating requests in flight at once (0: no limit); long-running requests
        /// and system:masters are exempt. More is a 429 with Retry-After. With priority and
        /// fairness on, this plus the mutating limit is the seats its levels share.
        #[arg(long, default_value_t = 400)]
        max_requests_inflight: usize,
        /// Most mutating requests in flight at once (0: no limit).
        #[arg(long, default_value_t = 200)]
        max_mutating_requests_inflight: usize,
        /// Deadline of a non-long-running request (504 after it).
        #[arg(long, default_value = "60s", value_parser = parse_duration)]
        request_timeout: Duration,
        /// Watches without timeoutSeconds end after a random time between this and twice this.
        #[arg(long, default_value = "1800s", value_parser = parse_duration)]
        min_request_timeout: Duration,
        /// Allow privileged containers (pods and pod templates asking for
        /// `securityContext.privileged` are refused otherwise, as kube-apiserver's default).
        #[arg(long)]
        allow_privileged: bool,
        /// How long Events are kept after their last write (kube's `--event-ttl`).
        #[arg(long, default_value = "1h", value_parser = parse_duration)]
        event_ttl: Duration,
        /// CA certificate (PEM) the `csrsigning` loop signs CertificateSigningRequests with
        /// (kube-controller-manager's flag; default: the data folder's client CA `ca.crt`).
        #[arg(long, requires = "cluster_signing_key_file")]
        cluster_signing_cert_file: Option<PathBuf>,
        /// Its private key (PEM).
        #[arg(long, requires = "cluster_signing_cert_file")]
        cluster_signing_key_file: Option<PathBuf>,
        /// The longest certificate `csrsigning` issues (a request's `expirationSeconds` may
        /// ask for less).
        #[arg(long, default_value = "8760h", value_parser = parse_duration)]
        cluster_signing_duration: Duration,
        /// Client certificate (PEM) presented to kubelets (logs, exec, attach, port-forward,
        /// node proxy).
        #[arg(long, requires = "kubelet_client_key")]
        kubelet_client_certificate: Option<PathBuf>,
        /// Its private key (PEM).
        #[arg(long, requires = "kubelet_client_certificate")]
        kubelet_client_key: Option<PathBuf>,
        /// CA bundle (PEM) kubelets' serving certificates are verified with (unset: not
        /// verified, as kube-apiserver).
        #[arg(long)]
        kubelet_certificate_authority: Option<PathBuf>,
        /// Node address types tried, in order, to reach a kubelet.
        #[arg(long, default_value = rafter::kubelet::DEFAULT_ADDRESS_TYPES, value_delimiter = ',')]
        kubelet_preferred_address_types: Vec<String>,
        /// Built-in group versions and resources to serve, as kube-apiserver's flag:
        /// `api/all=false,v1=true,apps/v1`, `batch/v1=false`, `batch/v1/cronjobs=false`.
        #[arg(long, default_value = "")]
        runtime_config: String,
        /// Admission plugins to enable besides the default ones (comma list, any order).
        #[arg(long, value_delimiter = ',')]
        enable_admission_plugins: Vec<String>,
        /// Admission plugins to disable, default ones included (comma list).
        #[arg(long, value_delimiter = ',')]
        disable_admission_plugins: Vec<String>,
        /// AdmissionConfiguration (apiserver.config.k8s.io/v1 or apiserver.k8s.io/v1alpha1)
        /// with the plugins' configurations.
        #[arg(long)]
        admission_control_config_file: Option<PathBuf>,
        /// Admission webhooks and extension API servers (APIServices) referenced by a
        /// Service are dialled at one of its endpoints instead of its cluster IP.
        #[arg(long)]
        enable_aggregator_routing: bool,
        /// Client certificate the aggregator proxies to extension API servers with (PEM;
        /// default: the data folder's front-proxy-client.crt, CN front-proxy-client).
        #[arg(long, requires = "proxy_client_key_file")]
        proxy_client_cert_file: Option<PathBuf>,
        /// Key of --proxy-client-cert-file.
        #[arg(long, requires = "proxy_client_cert_file")]
        proxy_client_key_file: Option<PathBuf>,
        /// tolerationSeconds of the not-ready:NoExecute toleration DefaultTolerationSeconds
        /// adds to pods that have none.
        #[arg(long, default_value_t = 300)]
        default_not_ready_toleration_seconds: i64,
        /// tolerationSeconds of the unreachable:NoExecute toleration DefaultTolerationSeconds
        /// adds to pods that have none.
        #[arg(long, default_value_t = 300)]
        default_unreachable_toleration_seconds: i64,
        /// EncryptionConfiguration (apiserver.config.k8s.io/v1) for encryption at rest:
        /// providers `identity`, `aescbc`, `aesgcm`, `secretbox` and `kms` (`apiVersion: v2`,
        /// a KMS v2 plugin on a Unix socket).
        #[arg(long)]
        encryption_provider_config: Option<PathBuf>,
        /// Reload the encryption config when the file changes (checked every second); a
        /// file that does not load keeps the running configuration.
        #[arg(long, requires = "encryption_provider_config")]
        encryption_provider_config_automatic_reload: bool,
        /// Serving certificate (PEM; reloaded when the file changes) instead of the data
        /// folder's server.crt.
        #[arg(long, requires = "tls_private_key_file")]
        tls_cert_file: Option<PathBuf>,
        /// Its private key.
        #[arg(long, requires = "tls_cert_file")]
        tls_private_key_file: Option<PathBuf>,
        /// Lowest TLS version served: VersionTLS12 or VersionTLS13.
        #[arg(long)]
        tls_min_version: Option<String>,
        /// Cipher suites offered (IANA names, comma-separated; default: rustls's safe set).
        #[arg(long, value_delimiter = ',')]
        tls_cipher_suites: Vec<String>,
        /// Extra names and IPs for generated serving and peer certificates.
        #[arg(long, value_delimiter = ',')]
        tls_sans: Vec<String>,
        /// The address clients and peers reach this replica at (added to the certificates'
        /// names).
        #[arg(long)]
        advertise_address: Option<std::net::IpAddr>,
        #[command(flatten)]
        audit: AuditFlags,
    },
    /// Administer a cluster through a replica's admin API (status, membership, snapshot,
    /// compaction, backup) or restore a backup offline.
    Admin(rafter::admin::cli::AdminArgs),
    /// Certificates of a data folder.
    Certs {
        #[command(subcommand)]
        command: CertsCommand,
    },
}

/// kube-apiserver's `--audit-*` flags (same names, defaults and meaning).
#[derive(clap::Args)]
struct AuditFlags {
    /// Path to the file that defines the audit policy configuration.
    #[arg(long)]
    audit_policy_file: Option<PathBuf>,
    /// If set, all requests coming to the apiserver will be logged to this file. '-' means
    /// standard out.
    #[arg(long)]
    audit_log_path: Option<String>,
    /// The maximum number of days to retain old audit log files based on the timestamp
    /// encoded in their filename.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    audit_log_maxage: i64,
    /// The maximum number of old audit log files to retain. Setting a value of 0 will mean
    /// there's no restriction on the number of files.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    audit_log_maxbackup: i64,
    /// The maximum size in megabytes of the audit log file before it gets rotated.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    audit_log_maxsize: i64,
    /// Format of saved audits. "legacy" indicates 1-line text format for each event. "json"
    /// indicates structured json format. Known formats are legacy,json.
    #[arg(long, default_value = "json")]
    audit_log_format: String,
    /// API group and version used for serializing audit events written to log.
    #[arg(long, default_value = "audit.k8s.io/v1")]
    audit_log_version: String,
    /// Strategy for sending audit events: blocking, blocking-strict or batch.
    #[arg(long, default_value = "blocking")]
    audit_log_mode: String,
    /// The size of the buffer to store events before batching and writing (batch mode).
    #[arg(long, default_value_t = 10_000)]
    audit_log_batch_buffer_size: usize,
    /// The maximum size of a batch (batch mode).
    #[arg(long, default_value_t = 1)]
    audit_log_batch_max_size: usize,
    /// The amount of time to wait before force writing the batch that hadn't reached the max
    /// size (batch mode).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    audit_log_batch_max_wait: Duration,
    /// Whether batching throttling is enabled (batch mode).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    audit_log_batch_throttle_enable: bool,
    /// Maximum average number of batches per second (batch mode).
    #[arg(long, default_value_t = 0.0)]
    audit_log_batch_throttle_qps: f32,
    /// Maximum number of requests sent at the same moment if ThrottleQPS was not utilized
    /// before (batch mode).
    #[arg(long, default_value_t = 0)]
    audit_log_batch_throttle_burst: usize,
    /// Path to a kubeconfig formatted file that defines the audit webhook configuration.
    #[arg(long)]
    audit_webhook_config_file: Option<PathBuf>,
    /// The amount of time to wait before retrying the first failed request.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    audit_webhook_initial_backoff: Duration,
    /// API group and version used for serializing audit events written to webhook.
    #[arg(long, default_value = "audit.k8s.io/v1")]
    audit_webhook_version: String,
    /// Strategy for sending audit events: blocking, blocking-strict or batch.
    #[arg(long, default_value = "batch")]
    audit_webhook_mode: String,
    /// The size of the buffer to store events before batching and writing (batch mode).
    #[arg(long, default_value_t = 10_000)]
    audit_webhook_batch_buffer_size: usize,
    /// The maximum size of a batch (batch mode).
    #[arg(long, default_value_t = 400)]
    audit_webhook_batch_max_size: usize,
    /// The amount of time to wait before force writing the batch that hadn't reached the max
    /// size (batch mode).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    audit_webhook_batch_max_wait: Duration,
    /// Whether batching throttling is enabled (batch mode).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    audit_webhook_batch_throttle_enable: bool,
    /// Maximum average number of batches per second (batch mode).
    #[arg(long, default_value_t = 10.0)]
    audit_webhook_batch_throttle_qps: f32,
    /// Maximum number of requests sent at the same moment if ThrottleQPS was not utilized
    /// before (batch mode).
    #[arg(long, default_value_t = 15)]
    audit_webhook_batch_throttle_burst: usize,
}

impl AuditFlags {
    fn config(self) -> rafter::audit::Config {
        rafter::audit::Config {
            policy_file: self.audit_policy_file,
            log_path: self.audit_log_path,
            log_max_age: self.audit_log_maxage,
            log_max_backup: self.audit_log_maxbackup,
            log_max_size: self.audit_log_maxsize,
            log_format: self.audit_log_format,
            log_version: self.audit_log_version,
            log: rafter::audit::BatchOptions {
                mode: self.audit_log_mode,
                batch: rafter::audit::BatchConfig {
                    buffer_size: self.audit_log_batch_buffer_size,
                    max_batch_size: self.audit_log_batch_max_size,
                    max_batch_wait: self.audit_log_batch_max_wait,
                    throttle_enable: self.audit_log_batch_throttle_enable,
                    throttle_qps: self.audit_log_batch_throttle_qps,
                    throttle_burst: self.audit_log_batch_throttle_burst,
                    async_delegate: false,
                },
            },
            webhook_config_file: self.audit_webhook_config_file,
            webhook_initial_backoff: self.audit_webhook_initial_backoff,
            webhook_version: self.audit_webhook_version,
            webhook: rafter::audit::BatchOptions {
                mode: self.audit_webhook_mode,
                batch: rafter::audit::BatchConfig {
                    buffer_size: self.audit_webhook_batch_buffer_size,
                    max_batch_size: self.audit_webhook_batch_max_size,
                    max_batch_wait: self.audit_webhook_batch_max_wait,
                    throttle_enable: self.audit_webhook_batch_throttle_enable,
                    throttle_qps: self.audit_webhook_batch_throttle_qps,
                    throttle_burst: self.audit_webhook_batch_throttle_burst,
                    async_delegate: true,
                },
            },
        }
    }
}

#[derive(Subcommand)]
enum CertsCommand {
    /// Re-issue this folder's serving, admin and peer certificates from its CAs (a running
    /// replica serves the new serving certificate within seconds; restart it for the peer
    /// one). The admin kubeconfig is rewritten.
    Rotate {
        #[arg(long, default_value = "rafter-data")]
        data_dir: PathBuf,
        /// Extra names and IPs for the serving and peer certificates.
        #[arg(long, value_delimiter = ',')]
        tls_sans: Vec<String>,
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

/// The parsed `--authorization-mode`.
#[derive(Clone, Debug)]
struct AuthzMode(Vec<rafter::authz::Mode>);

fn parse_authorization_mode(s: &str) -> Result<AuthzMode, String> {
    rafter::authz::Mode::parse_list(s).map(AuthzMode)
}

/// The loops `--controllers` turned on.
#[derive(Clone, Debug)]
struct ControllerList(Vec<&'static str>);

fn parse_controllers(s: &str) -> Result<ControllerList, String> {
    rafter::controllers::parse_enabled(s).map(ControllerList)
}

fn parse_members(s: &str) -> Result<BTreeMap<u64, String>, String> {
    let mut out = BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (id, addr) = part
            .split_once('=')
            .ok_or_else(|| format!("invalid member {part:?} (want id=host:port)"))?;
        let id: u64 = id
            .trim()
            .parse()
            .map_err(|_| format!("invalid replica id in {part:?}"))?;
        let addr = addr.trim();
        if addr.is_empty() {
            return Err(format!("missing address in {part:?}"));
        }
        if out.insert(id, addr.to_string()).is_some() {
            return Err(format!("replica {id} named twice"));
        }
    }
    if out.is_empty() {
        return Err("no members given".to_string());
    }
    Ok(out)
}

/// The glibc malloc arenas a replica runs with unless `MALLOC_ARENA_MAX` says otherwise (glibc
/// serves RocksDB's C++ allocations). By default every thread that allocates may get its own
/// arena (up to 8 per core), each keeping what was freed into it: a busy multi-threaded
/// runtime then holds far more RSS than its heap (a fifth more at two cores, after loading
/// objects and under a soak; more with more cores).
const MALLOC_ARENAS: &str = "2";

/// mimalloc commits its arenas on first use by default: an idle replica then holds ~35 MiB
/// more (142 against 105 MiB RSS); committed on demand, creates are as fast.
const MIMALLOC_ARENA_EAGER_COMMIT: &str = "0";

/// `rafter serve` re-executes itself once with the allocators' settings above in its
/// environment (each unless already set), since both allocators read them only when the
/// process starts (setting them from code would need `unsafe`, which the crate forbids). The
/// pid, arguments and standard streams stay the same; on any failure it goes on as it is.
fn tune_allocators() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        let settings = [
            ("MALLOC_ARENA_MAX", MALLOC_ARENAS),
            ("MIMALLOC_ARENA_EAGER_COMMIT", MIMALLOC_ARENA_EAGER_COMMIT),
        ];
        let unset: Vec<_> = settings
            .iter()
            .filter(|(k, _)| std::env::var_os(k).is_none())
            .collect();
        if unset.is_empty() || std::env::args_os().nth(1).is_none_or(|a| a != "serve") {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let mut cmd = std::process::Command::new(exe);
        if let Some(arg0) = args.next() {
            cmd.arg0(arg0);
        }
        cmd.args(args);
        for (k, v) in unset {
            cmd.env(k, v);
        }
        // `exec` returns only when it failed.
        let err = cmd.exec();
        eprintln!("rafter: running with the allocators' default settings ({err})");
    }
}

fn main() -> anyhow::Result<()> {
    tune_allocators();
    let cli = Cli::parse();
    // kube's --logging-format (only `serve` has it); a bad value stops the start.
    let format = match &cli.command {
        Command::Serve { logging_format, .. } => logging_format
            .parse()
            .map_err(|e: rafter::telemetry::logging::Error| anyhow::anyhow!(e))?,
        _ => rafter::telemetry::logging::Format::Text,
    };
    rafter::telemetry::logging::init(format, rafter::raft::QUIET_LOGS);
    let tracing_config = match &cli.command {
        Command::Serve {
            tracing_config_file: Some(path),
            ..
        } => Some(
            rafter::telemetry::trace::TracingConfiguration::load(path)
                .map_err(|e| anyhow::anyhow!("--tracing-config-file: {e}"))?,
        ),
        _ => None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // kube's tracing: sampled spans exported over OTLP (service name "apiserver", as kube).
    if let Some(c) = &tracing_config {
        let _in_runtime = rt.enter();
        rafter::telemetry::trace::set_sampling_rate_per_million(c.sampling_rate_per_million);
        rafter::telemetry::otlp::start(&c.endpoint, "apiserver")
            .map_err(|e| anyhow::anyhow!("--tracing-config-file: {e}"))?;
    }
    match cli.command {
        Command::Serve {
            data_dir,
            logging_format: _,
            tracing_config_file: _,
            listen,
            node_id,
            compaction_window,
            snapshot_count,
            snapshot_catchup_entries,
            shutdown_delay,
            livez_grace_period,
            root_ca_file,
            peer_listen,
            peer_advertise,
            initial_members,
            join,
            peer_ca,
            peer_cert,
            peer_key,
            peer_insecure,
            admin_listen,
            admin_insecure,
            watch_bookmark_interval,
            watch_cache_events,
            watch_queue,
            controllers,
            token_auth_file,
            anonymous_auth,
            enable_bootstrap_token_auth,
            authorization_mode,
            test_fault,
            peer_dial,
            authorization_policy_file,
            authorization_webhook_config_file,
            authorization_webhook_version,
            authorization_webhook_cache_authorized_ttl,
            authorization_webhook_cache_unauthorized_ttl,
            authentication_token_webhook_config_file,
            authentication_token_webhook_version,
            authentication_token_webhook_cache_ttl,
            oidc_issuer_url,
            oidc_client_id,
            oidc_username_claim,
            oidc_username_prefix,
            oidc_groups_claim,
            oidc_groups_prefix,
            oidc_required_claim,
            oidc_ca_file,
            oidc_signing_algs,
            client_ca_file,
            requestheader_client_ca_file,
            requestheader_allowed_names,
            requestheader_username_headers,
            requestheader_uid_headers,
            requestheader_group_headers,
            requestheader_extra_headers_prefix,
            service_account_issuer,
            api_audiences,
            service_account_signing_key_file,
            service_account_key_file,
            service_account_lookup,
            service_account_max_token_expiration,
            enable_priority_and_fairness,
            max_requests_inflight,
            max_mutating_requests_inflight,
            request_timeout,
            min_request_timeout,
            allow_privileged,
            runtime_config,
            event_ttl,
            cluster_signing_cert_file,
            cluster_signing_key_file,
            cluster_signing_duration,
            kubelet_client_certificate,
            kubelet_client_key,
            kubelet_certificate_authority,
            kubelet_preferred_address_types,
            enable_admission_plugins,
            disable_admission_plugins,
            admission_control_config_file,
            enable_aggregator_routing,
            proxy_client_cert_file,
            proxy_client_key_file,
            default_not_ready_toleration_seconds,
            default_unreachable_toleration_seconds,
            encryption_provider_config,
            encryption_provider_config_automatic_reload,
            tls_cert_file,
            tls_private_key_file,
            tls_min_version,
            tls_cipher_suites,
            tls_sans,
            advertise_address,
            audit,
        } => rt.block_on(async {
            rafter::faults::enable(&test_fault).map_err(|e| anyhow::anyhow!(e))?;
            rafter::run(
                rafter::Config {
                    data_dir,
                    listen,
                    node_id,
                    compaction_window,
                    snapshot_count,
                    snapshot_catchup_entries,
                    runtime_config,
                    event_ttl,
                    cluster_signing: rafter::ClusterSigning {
                        files: cluster_signing_cert_file.zip(cluster_signing_key_file),
                        duration: cluster_signing_duration,
                    },
                    proxy_client: proxy_client_cert_file.zip(proxy_client_key_file),
                    kubelet: rafter::kubelet::Config {
                        client_certificate: kubelet_client_certificate,
                        client_key: kubelet_client_key,
                        certificate_authority: kubelet_certificate_authority,
                        preferred_address_types: kubelet_preferred_address_types,
                    },
                    shutdown_delay,
                    livez_grace_period,
                    root_ca_file,
                    peer_listen,
                    peer_advertise,
                    initial_members: initial_members.unwrap_or_default(),
                    join,
                    peer_tls: match (peer_ca, peer_cert, peer_key) {
                        (Some(ca), Some(cert), Some(key)) => {
                            Some(rafter::kv::PeerTls { ca, cert, key })
                        }
                        _ => None,
                    },
                    peer_insecure,
                    admin_listen,
                    admin_insecure,
                    watch: rafter::watch::CacheOptions {
                        bookmark_interval: watch_bookmark_interval,
                        events_per_resource: watch_cache_events,
                        watcher_queue: watch_queue,
                        ..Default::default()
                    },
                    controllers: controllers.0,
                    authn: rafter::authn::Config {
                        token_auth_file,
                        anonymous: anonymous_auth,
                        bootstrap_tokens: enable_bootstrap_token_auth,
                        webhook_config_file: authentication_token_webhook_config_file,
                        webhook_version: authentication_token_webhook_version,
                        webhook_cache_ttl: authentication_token_webhook_cache_ttl,
                        oidc: oidc_issuer_url.map(|issuer_url| rafter::authn::oidc::Config {
                            issuer_url,
                            client_id: oidc_client_id,
                            username_claim: oidc_username_claim,
                            username_prefix: oidc_username_prefix,
                            groups_claim: oidc_groups_claim,
                            groups_prefix: oidc_groups_prefix,
                            required_claims: oidc_required_claim
                                .iter()
                                .filter_map(|kv| kv.split_once('='))
                                .map(|(k, v)| (k.to_string(), v.to_string()))
                                .collect(),
                            ca_file: oidc_ca_file,
                            signing_algs: oidc_signing_algs,
                        }),
                        client_ca_file,
                        requestheader: requestheader_client_ca_file.map(|client_ca_file| {
                            rafter::authn::x509::RequestHeaderConfig {
                                client_ca_file,
                                allowed_names: requestheader_allowed_names,
                                username_headers: requestheader_username_headers,
                                uid_headers: requestheader_uid_headers,
                                group_headers: requestheader_group_headers,
                                extra_headers_prefix: requestheader_extra_headers_prefix,
                            }
                        }),
                        service_accounts: rafter::authn::serviceaccount::Config {
                            issuers: service_account_issuer,
                            audiences: api_audiences,
                            signing_key_file: service_account_signing_key_file,
                            key_files: service_account_key_file,
                            lookup: service_account_lookup,
                            max_expiration: service_account_max_token_expiration
                                .map(|d| d.as_secs() as i64),
                        },
                    },
                    enable_priority_and_fairness,
                    max_requests_inflight,
                    max_mutating_requests_inflight,
                    request_timeout,
                    serving: rafter::server::pki::Serving {
                        cert_file: tls_cert_file,
                        key_file: tls_private_key_file,
                        min_version: tls_min_version,
                        cipher_suites: tls_cipher_suites,
                    },
                    authorization: rafter::authz::Config {
                        modes: authorization_mode.0,
                        policy_file: authorization_policy_file,
                        webhook_config: authorization_webhook_config_file,
                        webhook_version: authorization_webhook_version,
                        webhook_authorized_ttl: authorization_webhook_cache_authorized_ttl,
                        webhook_unauthorized_ttl: authorization_webhook_cache_unauthorized_ttl,
                    },
                    min_request_timeout,
                    allow_privileged,
                    admission: rafter::AdmissionFlags {
                        enable: enable_admission_plugins,
                        disable: disable_admission_plugins,
                        config_file: admission_control_config_file,
                        aggregator_routing: enable_aggregator_routing,
                        default_not_ready_toleration_seconds: Some(
                            default_not_ready_toleration_seconds,
                        ),
                        default_unreachable_toleration_seconds: Some(
                            default_unreachable_toleration_seconds,
                        ),
                    },
                    encryption_provider_config,
                    encryption_reload: encryption_provider_config_automatic_reload,
                    peer_dial: peer_dial.unwrap_or_default(),
                    tls_sans: tls_sans
                        .into_iter()
                        .chain(advertise_address.map(|a| a.to_string()))
                        .collect(),
                    audit: audit.config(),
                },
                |s| {
                    println!("rafter: serving the Kubernetes API on {}", s.url);
                    println!(
                        "rafter: admin kubeconfig written to {}",
                        s.kubeconfig.display()
                    );
                    if let Some(a) = s.admin_addr {
                        println!("rafter: serving the admin API on {a}");
                    }
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
            )
            .await
        }),
        Command::Certs {
            command: CertsCommand::Rotate { data_dir, tls_sans },
        } => {
            let removed = rafter::server::pki::remove_leaves(&data_dir)?;
            let pki = rafter::server::pki::Pki::new(&data_dir);
            pki.ensure(&tls_sans)?;
            let kc = data_dir.join("admin.kubeconfig");
            if let Ok(text) = std::fs::read_to_string(&kc) {
                let doc: serde_yaml::Value = serde_yaml::from_str(&text)?;
                if let Some(url) = doc["clusters"][0]["cluster"]["server"].as_str() {
                    pki.write_admin_kubeconfig(url)?;
                }
            }
            for p in removed
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "crt"))
            {
                println!("rafter: re-issued {}", p.display());
            }
            Ok(())
        }
        Command::Admin(args) => {
            if let Err(e) = rt.block_on(rafter::admin::cli::run(args)) {
                eprintln!("error: {e:#}");
                std::process::exit(1);
            }
            Ok(())
        }
    }
}
