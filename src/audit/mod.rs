//! Audit logging as kube-apiserver v1.33 does it: the policy (`policy`), the `audit.k8s.io/v1`
//! events (`event`), the backends and their modes (`backend`, with lumberjack's rotation in
//! `rotate`), and the per-request [`Record`] the HTTPS edge fills as the request goes
//! through authentication, impersonation, authorization and its handler.
//!
//! The edge evaluates the policy once a request is authenticated (with the real user, before
//! impersonation) and, at level Metadata or above, writes the stages the policy does not
//! omit: `RequestReceived`, `ResponseStarted` (long-running requests only), `ResponseComplete`
//! or `Panic`. A failing or slow backend never blocks a request except in the
//! `blocking-strict` mode an operator asks for: `batch` enqueues into a bounded buffer and
//! counts what it drops, `blocking` counts failed writes and goes on.

pub mod backend;
pub mod event;
pub mod policy;
pub mod rotate;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

pub use backend::{BatchConfig, Format, Mode};
pub use event::Event;
pub use policy::{Level, Stage};

/// One backend's mode and batching flags.
#[derive(Clone, Debug)]
pub struct BatchOptions {
    pub mode: String,
    pub batch: BatchConfig,
}

/// The `--audit-*` flags.
#[derive(Clone, Debug)]
pub struct Config {
    pub policy_file: Option<PathBuf>,
    /// `--audit-log-path` (`-`: stdout).
    pub log_path: Option<String>,
    pub log_max_age: i64,
    pub log_max_backup: i64,
    pub log_max_size: i64,
    pub log_format: String,
    pub log_version: String,
    pub log: BatchOptions,
    pub webhook_config_file: Option<PathBuf>,
    pub webhook_initial_backoff: Duration,
    pub webhook_version: String,
    pub webhook: BatchOptions,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            policy_file: None,
            log_path: None,
            log_max_age: 0,
            log_max_backup: 0,
            log_max_size: 0,
            log_format: "json".into(),
            log_version: "audit.k8s.io/v1".into(),
            log: BatchOptions {
                mode: "blocking".into(),
                batch: BatchConfig::log_default(),
            },
            webhook_config_file: None,
            webhook_initial_backoff: Duration::from_secs(10),
            webhook_version: "audit.k8s.io/v1".into(),
            webhook: BatchOptions {
                mode: "batch".into(),
                batch: BatchConfig::webhook_default(),
            },
        }
    }
}

/// Why the audit flags do not start a server (kube's texts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// kube's `validateBackendBatchOptions`.
fn validate_batch(plugin: &str, o: &BatchOptions) -> Result<Mode, String> {
    let mode = Mode::parse(&o.mode).ok_or_else(|| {
        format!(
            "invalid audit {plugin} mode {}, allowed modes are {:?}",
            o.mode,
            Mode::ALLOWED.join(",")
        )
    })?;
    if mode != Mode::Batch {
        return Ok(mode);
    }
    let b = &o.batch;
    if b.buffer_size == 0 {
        return Err(format!(
            "invalid audit batch {plugin} buffer size {}, must be a positive number",
            b.buffer_size
        ));
    }
    if b.max_batch_size == 0 {
        return Err(format!(
            "invalid audit batch {plugin} max batch size {}, must be a positive number",
            b.max_batch_size
        ));
    }
    if b.throttle_enable {
        if b.throttle_qps <= 0.0 {
            return Err(format!(
                "invalid audit batch {plugin} throttle QPS {}, must be a positive number",
                b.throttle_qps
            ));
        }
        if b.throttle_burst == 0 {
            return Err(format!(
                "invalid audit batch {plugin} throttle burst {}, must be a positive number",
                b.throttle_burst
            ));
        }
    }
    Ok(mode)
}

fn validate_version(v: &str) -> Result<(), String> {
    if v != "audit.k8s.io/v1" {
        return Err("invalid group version, allowed versions are \"[audit.k8s.io/v1]\"".into());
    }
    Ok(())
}

/// The policy and the backends of a server.
pub struct Auditor {
    policy: policy::Policy,
    backend: backend::Backend,
}

impl Auditor {
    /// kube's `AuditOptions.Validate` and `ApplyTo`: `None` when nothing is audited (no
    /// policy, or no backend).
    pub fn from_config(cfg: &Config) -> Result<Option<Arc<Auditor>>, ConfigError> {
        let mut errs: Vec<String> = Vec::new();
        let log_enabled = cfg.log_path.as_deref().is_some_and(|p| !p.is_empty());
        let mut log_mode = Mode::Blocking;
        let mut format = Format::Json;
        if log_enabled {
            match validate_batch("log", &cfg.log) {
                Ok(m) => log_mode = m,
                Err(e) => errs.push(e),
            }
            if let Err(e) = validate_version(&cfg.log_version) {
                errs.push(e);
            }
            match cfg.log_format.as_str() {
                "json" => format = Format::Json,
                "legacy" => format = Format::Legacy,
                other => errs.push(format!(
                    "invalid audit log format {other}, allowed formats are \"legacy,json\""
                )),
            }
            for (flag, v) in [
                ("--audit-log-maxage", cfg.log_max_age),
                ("--audit-log-maxbackup", cfg.log_max_backup),
                ("--audit-log-maxsize", cfg.log_max_size),
            ] {
                if v < 0 {
                    errs.push(format!("{flag} {v} can't be a negative number"));
                }
            }
        }
        let webhook_enabled = cfg.webhook_config_file.is_some();
        let mut webhook_mode = Mode::Batch;
        if webhook_enabled {
            match validate_batch("webhook", &cfg.webhook) {
                Ok(m) => webhook_mode = m,
                Err(e) => errs.push(e),
            }
            if let Err(e) = validate_version(&cfg.webhook_version) {
                errs.push(e);
            }
        }
        if !errs.is_empty() {
            return Err(ConfigError(if errs.len() == 1 {
                errs.remove(0)
            } else {
                format!("[{}]", errs.join(", "))
            }));
        }
        let Some(policy_file) = &cfg.policy_file else {
            if log_enabled || webhook_enabled {
                tracing::info!("No audit policy file provided, no events will be recorded");
            }
            return Ok(None);
        };
        let policy = policy::load_file(policy_file).map_err(|e| ConfigError(e.0))?;
        let mut backends = Vec::new();
        if let Some(path) = cfg.log_path.as_deref().filter(|p| !p.is_empty()) {
            let out = if path == "-" {
                backend::Output::Stdout
            } else {
                backend::Output::File(
                    rotate::RotatingFile::open(
                        std::path::Path::new(path),
                        rotate::Limits {
                            max_size_mb: cfg.log_max_size as u64,
                            max_backups: cfg.log_max_backup as usize,
                            max_age_days: cfg.log_max_age as u64,
                        },
                    )
                    .map_err(|e| ConfigError(format!("ensureLogFile: {e}")))?,
                )
            };
            backends.push(Arc::new(backend::Backend::with_mode(
                backend::Backend::Log(backend::LogBackend::new(out, format)),
                log_mode,
                cfg.log.batch.clone(),
            )));
        }
        if let Some(file) = &cfg.webhook_config_file {
            let client =
                crate::authn::webhook::KubeconfigClient::load_with_timeout(file, WEBHOOK_TIMEOUT)
                    .map_err(|e| ConfigError(format!("initializing audit webhook: {e}")))?;
            backends.push(Arc::new(backend::Backend::with_mode(
                backend::Backend::Webhook(backend::WebhookBackend::new(
                    client,
                    cfg.webhook_initial_backoff,
                )),
                webhook_mode,
                cfg.webhook.batch.clone(),
            )));
        }
        if backends.is_empty() {
            return Ok(None);
        }
        metrics::counter!("apiserver_audit_event_total").absolute(0);
        metrics::counter!("apiserver_audit_requests_rejected_total").absolute(0);
        let backend = if backends.len() == 1 {
            match Arc::try_unwrap(backends.remove(0)) {
                Ok(b) => b,
                Err(b) => backend::Backend::Union(vec![b]),
            }
        } else {
            backend::Backend::Union(backends)
        };
        Ok(Some(Arc::new(Auditor { policy, backend })))
    }

    /// The policy's answer for a request (`apiserver_audit_level_total` counts it).
    pub fn evaluate(&self, attrs: &policy::Attributes<'_>) -> policy::RequestConfig {
        let c = self.policy.evaluate(attrs);
        metrics::counter!("apiserver_audit_level_total", "level" => c.level.as_str()).increment(1);
        c
    }
}

/// What the edge knows of a request when it starts its record.
pub struct Facts<'a> {
    pub audit_id: &'a str,
    pub received: chrono::DateTime<chrono::Utc>,
    /// The authenticated user (`None`: authentication failed).
    pub user: Option<&'a crate::authn::UserInfo>,
    pub verb: &'a str,
    pub path: &'a str,
    pub request_uri: &'a str,
    pub headers: &'a http::HeaderMap,
    pub peer: Option<std::net::IpAddr>,
    /// `Some` for resource requests.
    pub object: Option<ObjectFacts<'a>>,
    /// kube's long-running check (watch, proxy, and the streaming subresources).
    pub long_running: bool,
}

pub struct ObjectFacts<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

const MAX_USER_AGENT: usize = 1024;
/// kube's generic webhook request timeout.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// The audit event of one request, filled as it goes.
pub struct Record {
    auditor: Arc<Auditor>,
    config: policy::RequestConfig,
    pub long_running: bool,
    event: Mutex<Event>,
}

impl Auditor {
    /// kube's `evaluatePolicyAndCreateAuditEvent` + `LogRequestMetadata`: `None` at level
    /// None.
    pub fn begin(self: &Arc<Self>, f: &Facts<'_>) -> Option<Arc<Record>> {
        let attrs = policy::Attributes {
            user: f.user,
            verb: f.verb,
            resource: f.object.as_ref().map(|o| policy::ResourceAttrs {
                group: o.group,
                resource: o.resource,
                subresource: o.subresource,
                namespace: o.namespace,
                name: o.name,
            }),
            path: f.path,
        };
        let config = self.evaluate(&attrs);
        if config.level == Level::None {
            return None;
        }
        let mut ua = f
            .headers
            .get(http::header::USER_AGENT)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        if ua.len() > MAX_USER_AGENT {
            let mut cut = MAX_USER_AGENT;
            while !ua.is_char_boundary(cut) {
                cut -= 1;
            }
            ua.truncate(cut);
            ua.push_str("...TRUNCATED");
        }
        let event = Event {
            kind: None,
            api_version: None,
            level: config.level,
            audit_id: f.audit_id.to_string(),
            stage: Stage::RequestReceived,
            request_uri: f.request_uri.to_string(),
            verb: f.verb.to_string(),
            user: f.user.map(event::UserInfo::from).unwrap_or_default(),
            impersonated_user: None,
            source_ips: event::source_ips(f.headers, f.peer),
            user_agent: ua,
            object_ref: f.object.as_ref().map(|o| event::ObjectRef {
                resource: o.resource.into(),
                namespace: o.namespace.into(),
                name: o.name.into(),
                api_group: o.group.into(),
                api_version: o.version.into(),
                subresource: o.subresource.into(),
                ..Default::default()
            }),
            response_status: None,
            request_object: None,
            response_object: None,
            request_received_timestamp: f.received,
            stage_timestamp: f.received,
            annotations: Default::default(),
        };
        Some(Arc::new(Record {
            auditor: self.clone(),
            config,
            long_running: f.long_running,
            event: Mutex::new(event),
        }))
    }
}

/// `metadata.managedFields` removed from an object, a list's items or a Table's rows.
pub fn strip_managed_fields(v: &mut Value) {
    fn one(o: &mut Value) {
        if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
    }
    one(v);
    if let Some(items) = v.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(one);
    }
    if v.get("kind").and_then(Value::as_str) == Some("Table") {
        if let Some(rows) = v.get_mut("rows").and_then(Value::as_array_mut) {
            for r in rows {
                if let Some(o) = r.get_mut("object") {
                    one(o);
                }
            }
        }
    }
}

impl Record {
    fn lock(&self) -> std::sync::MutexGuard<'_, Event> {
        self.event.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn level(&self) -> Level {
        self.config.level
    }

    /// kube's `processAuditEvent`: the event at `stage` goes to the backends unless the policy
    /// omits the stage; `false` when a strict backend failed.
    pub async fn stage(&self, stage: Stage) -> bool {
        if self.config.omit_stages.contains(&stage) {
            return true;
        }
        let ev = {
            let mut e = self.lock();
            e.stage = stage;
            e.stage_timestamp = if stage == Stage::RequestReceived {
                e.request_received_timestamp
            } else {
                chrono::Utc::now()
            };
            Arc::new(e.clone())
        };
        metrics::counter!("apiserver_audit_event_total").increment(1);
        self.auditor.backend.process(vec![ev]).await
    }

    /// kube's `LogImpersonatedUser`.
    pub fn impersonated(&self, user: &crate::authn::UserInfo) {
        self.lock().impersonated_user = Some(event::UserInfo::from(user));
    }

    /// kube's `logAnnotation`: a key keeps its first value.
    pub fn annotate(&self, key: &str, value: &str) {
        let mut e = self.lock();
        e.annotations
            .entry(key.to_string())
            .or_insert_with(|| value.to_string());
    }

    /// kube's `LogRequestObject`: the object's namespace, name, uid and resourceVersion fill
    /// what the objectRef lacks; at Request and above the object itself is recorded.
    pub fn request_object(&self, obj: &Value) {
        let mut e = self.lock();
        let r = e.object_ref.get_or_insert_with(Default::default);
        if let Some(m) = obj.get("metadata").and_then(Value::as_object) {
            let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            if r.namespace.is_empty() {
                r.namespace = s("namespace");
            }
            if r.name.is_empty() {
                r.name = s("name");
            }
            if r.uid.is_empty() {
                r.uid = s("uid");
            }
            if r.resource_version.is_empty() {
                r.resource_version = s("resourceVersion");
            }
        }
        if self.config.level < Level::Request {
            return;
        }
        let mut obj = obj.clone();
        if self.config.omit_managed_fields {
            strip_managed_fields(&mut obj);
        }
        e.request_object = Some(obj);
    }

    /// kube's `LogRequestPatch`: the patch as sent, at Request and above.
    pub fn request_patch(&self, patch: Value) {
        if self.config.level >= Level::Request {
            self.lock().request_object = Some(patch);
        }
    }

    /// The response's code, and kube's `LogResponseObject`: a `Status` body fills
    /// `responseStatus`; at RequestResponse the body is recorded.
    pub fn response(&self, code: u16, body: Option<Value>) {
        let mut e = self.lock();
        let is_status = body
            .as_ref()
            .is_some_and(|b| b.get("kind").and_then(Value::as_str) == Some("Status"));
        e.response_status = Some(match (&body, is_status) {
            (Some(b), true) => event::ResponseStatus::from_status(b, code),
            _ => event::ResponseStatus::code(code),
        });
        if let Some(s) = e.response_status.as_mut() {
            s.code = code;
        }
        if self.config.level >= Level::RequestResponse {
            if let Some(mut b) = body {
                if self.config.omit_managed_fields {
                    strip_managed_fields(&mut b);
                }
                e.response_object = Some(b);
            }
        }
    }

    /// Only the code (a long-running response's start).
    pub fn response_code(&self, code: u16) {
        let mut e = self.lock();
        e.response_status.get_or_insert_with(Default::default).code = code;
    }

    /// A handler panic: kube's `Panic` stage with its 500 status.
    pub async fn panicked(&self, what: &str) {
        self.lock().response_status = Some(event::ResponseStatus {
            status: "Failure".into(),
            reason: "InternalError".into(),
            message: format!("APIServer panic'd: {what}"),
            code: 500,
            ..Default::default()
        });
        self.stage(Stage::Panic).await;
    }

    /// A response without a status yet (a long-running response whose client left):
    /// kube's `Connection closed early`.
    pub fn closed_early(&self) {
        let mut e = self.lock();
        if e.response_status.is_none() {
            e.response_status = Some(event::ResponseStatus {
                status: "Success".into(),
                message: "Connection closed early".into(),
                code: 200,
                ..Default::default()
            });
        }
    }
}

impl Auditor {
    /// kube's `WithFailedAuthenticationAudit`: one `ResponseStarted` event with the 401 (no
    /// user), unless the policy says None for it.
    pub async fn failed_authentication(self: &Arc<Self>, f: &Facts<'_>, status: &Value) {
        let Some(rec) = self.begin(f) else {
            return;
        };
        rec.response(401, Some(status.clone()));
        rec.stage(Stage::ResponseStarted).await;
    }
}
