//! Audit backends, as kube composes them: the log backend (JSON lines or the legacy format,
//! to stdout or a rotating file), the webhook backend (an `EventList` POSTed to the server a
//! kubeconfig names, retried with exponential backoff), and the modes that wrap either —
//! `blocking` (written in the request, failures only counted), `blocking-strict` (a failure
//! refuses the request) and `batch` (a bounded buffer drained by a task into batches, with
//! an optional throttle; a full buffer drops events, counted). Errors are counted in
//! `apiserver_audit_error_total{plugin}` (`log`, `webhook`, `buffered`) as kube counts them.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::FutureExt;

use super::event::{event_list, Event};
use super::rotate::RotatingFile;

/// `--audit-<plugin>-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Batch,
    Blocking,
    BlockingStrict,
}

impl Mode {
    pub const ALLOWED: &'static [&'static str] = &["batch", "blocking", "blocking-strict"];

    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "batch" => Mode::Batch,
            "blocking" => Mode::Blocking,
            "blocking-strict" => Mode::BlockingStrict,
            _ => return None,
        })
    }
}

/// kube's `BatchConfig`.
#[derive(Clone, Debug)]
pub struct BatchConfig {
    pub buffer_size: usize,
    pub max_batch_size: usize,
    pub max_batch_wait: Duration,
    pub throttle_enable: bool,
    pub throttle_qps: f32,
    pub throttle_burst: usize,
    /// Batches are sent by their own tasks (the webhook's), not one after another.
    pub async_delegate: bool,
}

impl BatchConfig {
    /// kube's `defaultWebhookBatchConfig`.
    pub fn webhook_default() -> BatchConfig {
        BatchConfig {
            buffer_size: 10_000,
            max_batch_size: 400,
            max_batch_wait: Duration::from_secs(30),
            throttle_enable: true,
            throttle_qps: 10.0,
            throttle_burst: 15,
            async_delegate: true,
        }
    }

    /// kube's `defaultLogBatchConfig`.
    pub fn log_default() -> BatchConfig {
        BatchConfig {
            buffer_size: 10_000,
            max_batch_size: 1,
            max_batch_wait: Duration::ZERO,
            throttle_enable: false,
            throttle_qps: 0.0,
            throttle_burst: 0,
            async_delegate: false,
        }
    }
}

/// kube's `HandlePluginError`: the events are counted against the plugin and logged.
pub fn plugin_error(plugin: &'static str, err: &str, events: &[Arc<Event>]) {
    metrics::counter!("apiserver_audit_error_total", "plugin" => plugin)
        .increment(events.len() as u64);
    let mut msg = format!(
        "Error in audit plugin '{plugin}' affecting {} audit events: {err}\nImpacted events:\n",
        events.len()
    );
    for e in events.iter().take(10) {
        msg.push_str(&e.legacy_line());
    }
    tracing::error!("{msg}");
}

/// Where a log backend writes.
pub enum Output {
    Stdout,
    File(RotatingFile),
}

/// `--audit-log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Legacy,
}

pub struct LogBackend {
    out: Mutex<Output>,
    format: Format,
}

impl LogBackend {
    pub fn new(out: Output, format: Format) -> LogBackend {
        LogBackend {
            out: Mutex::new(out),
            format,
        }
    }

    fn process(&self, events: &[Arc<Event>]) -> bool {
        let mut ok = true;
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        for e in events {
            let line = match self.format {
                Format::Json => e.json_line(),
                Format::Legacy => e.legacy_line().into_bytes(),
            };
            let r = match &mut *out {
                Output::Stdout => {
                    use std::io::Write;
                    let mut s = std::io::stdout().lock();
                    s.write_all(&line).and_then(|_| s.flush())
                }
                Output::File(f) => f.write_record(&line),
            };
            if let Err(err) = r {
                plugin_error("log", &err.to_string(), std::slice::from_ref(e));
                ok = false;
            }
        }
        ok
    }
}

/// kube's webhook backend: one `EventList` per call, retried (any error) with exponential
/// backoff from `--audit-webhook-initial-backoff` (factor 1.5, jitter 0.2, 5 attempts).
pub struct WebhookBackend {
    client: crate::authn::webhook::KubeconfigClient,
    initial_backoff: Duration,
}

const WEBHOOK_STEPS: u32 = 5;

impl WebhookBackend {
    pub fn new(
        client: crate::authn::webhook::KubeconfigClient,
        initial_backoff: Duration,
    ) -> WebhookBackend {
        WebhookBackend {
            client,
            initial_backoff,
        }
    }

    async fn process(&self, events: &[Arc<Event>]) -> bool {
        let body = event_list(events);
        let mut delay = self.initial_backoff;
        let mut last = String::new();
        for step in 0..WEBHOOK_STEPS {
            match self.client.post_raw(&body).await {
                Ok((code, _, _)) if (200..300).contains(&code) => return true,
                Ok((code, _, text)) => {
                    last = format!(
                        "the server responded with the status code {code}: {}",
                        String::from_utf8_lossy(&text)
                    )
                }
                Err(e) => last = e,
            }
            if step + 1 < WEBHOOK_STEPS {
                let jitter = 1.0 + rand::random::<f64>() * 0.2;
                tokio::time::sleep(delay.mul_f64(jitter)).await;
                delay = delay.mul_f64(1.5);
            }
        }
        plugin_error("webhook", &last, events);
        false
    }
}

/// kube's buffered backend: `process` only enqueues (a full buffer drops the events, counted
/// against `buffered`); a task collects batches of at most `max_batch_size` events, waiting
/// at most `max_batch_wait` for a batch to fill, throttled to `throttle_qps` batches per
/// second (burst `throttle_burst`).
pub struct Buffered {
    tx: tokio::sync::mpsc::Sender<Arc<Event>>,
}

impl Buffered {
    /// Starts the draining task (needs a Tokio runtime).
    pub fn start(delegate: Arc<Backend>, cfg: BatchConfig) -> Buffered {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Arc<Event>>(cfg.buffer_size.max(1));
        tokio::spawn(async move {
            let mut bucket = cfg
                .throttle_enable
                .then(|| TokenBucket::new(cfg.throttle_qps as f64, cfg.throttle_burst.max(1)));
            loop {
                let Some(first) = rx.recv().await else {
                    return;
                };
                let mut batch = vec![first];
                if cfg.max_batch_size > 1 {
                    let deadline = tokio::time::Instant::now() + cfg.max_batch_wait;
                    while batch.len() < cfg.max_batch_size {
                        match tokio::time::timeout_at(deadline, rx.recv()).await {
                            Ok(Some(e)) => batch.push(e),
                            Ok(None) | Err(_) => break,
                        }
                    }
                }
                if let Some(b) = bucket.as_mut() {
                    b.accept().await;
                }
                if cfg.async_delegate {
                    let d = delegate.clone();
                    tokio::spawn(async move {
                        d.process(batch).await;
                    });
                } else {
                    delegate.process(batch).await;
                }
            }
        });
        Buffered { tx }
    }

    fn process(&self, events: &[Arc<Event>]) -> bool {
        for (i, e) in events.iter().enumerate() {
            if self.tx.try_send(e.clone()).is_err() {
                plugin_error("buffered", "audit buffer queue blocked", &events[i..]);
                return true;
            }
        }
        true
    }
}

/// client-go's token bucket rate limiter (`Accept` waits for a token).
struct TokenBucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    fn new(qps: f64, burst: usize) -> TokenBucket {
        TokenBucket {
            qps,
            burst: burst as f64,
            tokens: burst as f64,
            at: Instant::now(),
        }
    }

    async fn accept(&mut self) {
        loop {
            let now = Instant::now();
            self.tokens = (self.tokens + now.duration_since(self.at).as_secs_f64() * self.qps)
                .min(self.burst);
            self.at = now;
            if self.tokens >= 1.0 {
                self.tokens -= 1.0;
                return;
            }
            let wait = (1.0 - self.tokens) / self.qps.max(1e-9);
            tokio::time::sleep(Duration::from_secs_f64(wait.min(60.0))).await;
        }
    }
}

/// A composed backend.
pub enum Backend {
    Log(LogBackend),
    Webhook(WebhookBackend),
    Buffered(Buffered),
    /// `blocking`: written in the request, its failure ignored (counted by the plugin).
    IgnoreErrors(Arc<Backend>),
    Union(Vec<Arc<Backend>>),
}

impl Backend {
    /// kube's `wrapBackend` for a mode.
    pub fn with_mode(delegate: Backend, mode: Mode, batch: BatchConfig) -> Backend {
        match mode {
            Mode::BlockingStrict => delegate,
            Mode::Blocking => Backend::IgnoreErrors(Arc::new(delegate)),
            Mode::Batch => Backend::Buffered(Buffered::start(Arc::new(delegate), batch)),
        }
    }

    /// Processes events; `false` when a strict backend could not store them.
    pub fn process(&self, events: Vec<Arc<Event>>) -> BoxFuture<'_, bool> {
        async move {
            match self {
                Backend::Log(l) => l.process(&events),
                Backend::Webhook(w) => w.process(&events).await,
                Backend::Buffered(b) => b.process(&events),
                Backend::IgnoreErrors(d) => {
                    d.process(events).await;
                    true
                }
                Backend::Union(all) => {
                    let mut ok = true;
                    for b in all {
                        ok &= b.process(events.clone()).await;
                    }
                    ok
                }
            }
        }
        .boxed()
    }
}
