//! The HTTPS edge: a hyper (HTTP/1.1 + HTTP/2) server behind rustls, the filter chain, and the
//! handlers that turn requests into registry calls.
//!
//! The filter chain is assembled in ONE function, [`handle`], outermost first:
//! audit ID (`Audit-Id` on every response) → recover (panics become 500 Status) → metrics →
//! authentication (per request: client certificate, bearer token, anonymous; 401 on a bad
//! credential) → audit (the policy decides the level with the real user) → impersonation →
//! priority and fairness (`flowcontrol`: classification, seats, fair queues, 429; kube's
//! place for it) → authorization (403; its decision and reason are audit annotations) →
//! max-in-flight (429; only with priority and fairness off) → routing (non-resource paths,
//! discovery, resources). Every error that reaches the edge is a
//! [`Status`] rendered once by [`status_response`].

pub mod connect;
pub mod handlers;
pub mod health;
pub mod impersonation;
pub mod negotiate;
pub mod pki;
pub mod protobuf;
pub mod request_info;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures::FutureExt;
use http::{header, HeaderValue, Request, Response, StatusCode};
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::meta::status::Status;
use crate::registry::store::Store;

pub type Body = BoxBody<Bytes, Infallible>;

/// Concurrent streams per HTTP/2 connection (kube-apiserver's default).
const HTTP2_MAX_STREAMS: u32 = 1000;
/// TLS handshake deadline (Go's net/http server in kube-apiserver: 10 s).
const TLS_HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long an HTTP/1 connection may take to send a request head, idle keep-alive included
/// (kube-apiserver's ReadHeaderTimeout is 32 s).
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(32);
/// HTTP/2 keep-alive ping interval and the time to wait for the answer.
const HTTP2_KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(30);
const HTTP2_KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);
/// A connection without requests for this long is closed (kube-apiserver: 90 s).
const IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(90);
const IDLE_CHECK: std::time::Duration = std::time::Duration::from_secs(5);
/// Most connections served at once.
const MAX_CONNECTIONS: usize = 20_000;
/// Accept-error backoff bounds.
const ACCEPT_BACKOFF_MIN: std::time::Duration = std::time::Duration::from_millis(5);
const ACCEPT_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_secs(1);

/// The authenticated user of a request.
pub type User = crate::authn::UserInfo;

/// Everything a request handler may reach.
pub struct App {
    pub store: Store,
    /// The admission chain every write goes through.
    pub admission: Arc<crate::admission::Chain>,
    /// The OpenAPI documents of the served resources.
    pub openapi: Arc<crate::openapi::Documents>,
    /// The watch cache: watches and cached lists.
    pub watch: crate::watch::Cache,
    pub shutting_down: AtomicBool,
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
    pub started: Instant,
    /// `/livez` checks pass for this long after `started`.
    pub livez_grace_period: std::time::Duration,
    /// `https://host:port` clients use to reach this replica.
    pub advertise_url: String,
    /// Who a request is.
    pub authn: crate::authn::Authenticator,
    /// `--max-requests-inflight` / `--max-mutating-requests-inflight`.
    pub inflight: Inflight,
    /// `--request-timeout`: the deadline of a non-long-running request.
    pub request_timeout: std::time::Duration,
    /// What a user may do.
    pub authz: Arc<crate::authz::Authorizer>,
    /// `--min-request-timeout`: watches without `timeoutSeconds` end after a random time
    /// between this and twice this.
    pub min_request_timeout: std::time::Duration,
    /// The audit policy and backends (`None`: nothing is audited).
    pub audit: Option<Arc<crate::audit::Auditor>>,
    /// The aggregation layer: remote APIServices, their proxy and discovery.
    pub aggregator: Arc<crate::aggregator::Aggregator>,
    /// Clients toward kubelets and proxied backends (`server::connect`).
    pub kubelet: Arc<crate::kubelet::Client>,
    /// API Priority and Fairness (`None`: `--enable-priority-and-fairness=false`).
    pub flowcontrol: Option<Arc<crate::flowcontrol::FlowControl>>,
}

/// kube-apiserver's max-in-flight filter: separate budgets for read-only and mutating
/// requests (`None`: unlimited); long-running requests (watches) and `system:masters` are
/// exempt. Over budget is a 429 with `Retry-After: 1`.
pub struct Inflight {
    readonly: Option<Arc<tokio::sync::Semaphore>>,
    mutating: Option<Arc<tokio::sync::Semaphore>>,
}

impl Inflight {
    pub fn new(readonly: usize, mutating: usize) -> Inflight {
        let sem = |n: usize| (n > 0).then(|| Arc::new(tokio::sync::Semaphore::new(n)));
        Inflight {
            readonly: sem(readonly),
            mutating: sem(mutating),
        }
    }

    /// A permit for one request, `Err` when the budget is spent.
    fn admit(
        &self,
        user: &User,
        verb: &str,
    ) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, ()> {
        if verb == "watch" || user.groups.iter().any(|g| g == "system:masters") {
            return Ok(None);
        }
        let mutating = matches!(
            verb,
            "create" | "update" | "patch" | "delete" | "deletecollection"
        );
        let sem = if mutating {
            &self.mutating
        } else {
            &self.readonly
        };
        match sem {
            None => Ok(None),
            Some(s) => s.clone().try_acquire_owned().map(Some).map_err(|_| ()),
        }
    }
}

/// The `timeout` query parameter (a Go duration such as `30s`, `1m`, `500ms`).
fn request_timeout_param(query: Option<&str>) -> Result<Option<std::time::Duration>, Status> {
    let Some(v) = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .find(|(k, _)| k == "timeout")
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty())
    else {
        return Ok(None);
    };
    let bad = || {
        Status::bad_request(format!(
            "invalid timeout specified in the request URL: {v:?}"
        ))
    };
    let split = v
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(bad)?;
    let (num, unit) = v.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    if !(0.0..=1e9).contains(&secs) {
        return Err(bad());
    }
    Ok(Some(std::time::Duration::from_secs_f64(secs)))
}

/// kube's answer when the in-flight budget is spent (plain text, as its filter writes it).
fn too_many_requests(retry_after: i64) -> Response<Body> {
    let mut r = Response::new(full("Too many requests, please try again later.\n"));
    *r.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after.max(1)));
    r
}

/// The flow schema and priority level a request was classified into (kube's
/// `X-Kubernetes-PF-*-UID` response headers).
fn pf_headers(r: &mut Response<Body>, c: &crate::flowcontrol::Classification) {
    for (name, uid) in [
        ("x-kubernetes-pf-flowschema-uid", &c.schema_uid),
        ("x-kubernetes-pf-prioritylevel-uid", &c.level_uid),
    ] {
        if let Ok(v) = HeaderValue::from_str(uid) {
            r.headers_mut().insert(name, v);
        }
    }
}

/// The stored objects and the watchers of the request's resource, for the work estimate.
fn object_counts(
    app: &App,
    info: Option<&request_info::RequestInfo>,
) -> crate::flowcontrol::estimate::Counts {
    let i = info?;
    let r = app
        .store
        .registry()
        .get(&i.group, &i.version, &i.resource)?;
    Some(app.watch.counts(&r))
}

impl App {
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Relaxed)
    }
}

/// Builds a full response body.
pub fn full(data: impl Into<Bytes>) -> Body {
    Full::new(data.into()).boxed()
}

/// Renders a Status as the JSON body kube-apiserver sends.
pub fn status_response(s: &Status) -> Response<Body> {
    let json = s.to_json();
    // In protobuf when the client prefers it (and the endpoint has it), as kube's
    // ErrorNegotiated encodes the Status with the negotiated serializer.
    let (body, content_type) = match negotiate::protobuf_status()
        .then(|| protobuf::encode_object(&json).ok())
        .flatten()
    {
        Some(b) => (b, protobuf::MEDIA_TYPE),
        None => (negotiate::json_bytes(&json), "application/json"),
    };
    let mut resp = Response::new(full(body));
    *resp.status_mut() = StatusCode::from_u16(s.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(secs) = s.retry_after {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    resp
}

/// The request's facts an audit record starts from.
struct AuditBase<'a> {
    audit_id: &'a str,
    received: chrono::DateTime<chrono::Utc>,
    verb: &'a str,
    path: &'a str,
    request_uri: &'a str,
    remote: Option<SocketAddr>,
    info: Option<&'a request_info::RequestInfo>,
}

impl<'a> AuditBase<'a> {
    fn facts<'b>(
        &'b self,
        user: Option<&'b User>,
        headers: &'b http::HeaderMap,
    ) -> crate::audit::Facts<'b> {
        crate::audit::Facts {
            audit_id: self.audit_id,
            received: self.received,
            user,
            verb: self.verb,
            path: self.path,
            request_uri: self.request_uri,
            headers,
            peer: self.remote.map(|r| r.ip()),
            object: self.info.map(|i| crate::audit::ObjectFacts {
                group: &i.group,
                version: &i.version,
                resource: &i.resource,
                subresource: i.subresource.as_deref().unwrap_or(""),
                namespace: i.path_namespace.as_deref().unwrap_or(""),
                name: i.name.as_deref().unwrap_or(""),
            }),
            long_running: long_running(self.info),
        }
    }
}

/// kube's long-running check (`BasicLongRunningRequestCheck`): watches, proxies and the
/// streaming subresources.
fn long_running(info: Option<&request_info::RequestInfo>) -> bool {
    info.is_some_and(|i| {
        matches!(i.verb, "watch" | "proxy")
            || matches!(
                i.subresource.as_deref(),
                Some("attach" | "exec" | "proxy" | "log" | "portforward")
            )
    })
}

/// Serves one request in its trace: the client's `traceparent` continued (else a new
/// trace), a `request` span (method, path, user agent, then verb and resource) around the
/// filter chain, and the context in the task for calls to the leader. No header that may
/// hold a credential goes into the span.
pub async fn handle(
    app: Arc<App>,
    peer: crate::authn::x509::Peer,
    remote: Option<SocketAddr>,
    req: Request<Incoming>,
) -> Response<Body> {
    use crate::telemetry::trace;
    use tracing::Instrument;
    let ctx = req
        .headers()
        .get(trace::TRACEPARENT)
        .and_then(|v| v.to_str().ok())
        .and_then(trace::Context::parse)
        .map(|parent| parent.child())
        .unwrap_or_else(|| trace::Context::root(trace::sample_root()));
    let user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let span = tracing::info_span!(
        "request",
        trace_id = %ctx.trace_id_hex(),
        span_id = %ctx.span_id_hex(),
        parent_span_id = %ctx.parent_span_id_hex(),
        sampled = ctx.sampled,
        method = %req.method(),
        path = %req.uri().path(),
        user_agent = %user_agent.chars().take(256).collect::<String>(),
        verb = tracing::field::Empty,
        resource = tracing::field::Empty,
        code = tracing::field::Empty,
    );
    // Boxed: the chain's future is large, and the wrappers would copy it on the stack.
    let chain: std::pin::Pin<Box<dyn std::future::Future<Output = Response<Body>> + Send>> =
        Box::pin(filter_chain(app, peer, remote, req));
    trace::scope(ctx, chain.instrument(span)).await
}

/// The filter chain, outermost first. `peer` is what the connection's verified client
/// certificate is (a user, an authenticating proxy, or none); `remote` the client's address.
async fn filter_chain(
    app: Arc<App>,
    peer: crate::authn::x509::Peer,
    remote: Option<SocketAddr>,
    mut req: Request<Incoming>,
) -> Response<Body> {
    let start = Instant::now();
    let received = chrono::Utc::now();
    // kube's WithAuditInit: the client's Audit-ID, else a new one; sent back on every response.
    let audit_id = req
        .headers()
        .get("audit-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let watch = req
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "watch=1" || p == "watch=true"));
    // Routing and authorization see the percent-decoded path, as Go's `URL.Path`.
    let path = crate::meta::escape::path_unescape(req.uri().path());
    let info = request_info::parse(req.method(), &path, watch);
    let method = req.method().to_string();
    let request_uri = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| req.uri().path().to_string());
    let audit_verb = match &info {
        Some(i) => i.verb.to_string(),
        None => method.to_ascii_lowercase(),
    };
    let labels = request_labels(&app, info.as_ref(), &method, req.uri().query());
    let span = tracing::Span::current();
    span.record("verb", audit_verb.as_str());
    if let Some(i) = &info {
        span.record("resource", i.resource.as_str());
    }
    // kube's apiserver_longrunning_requests: up while a watch or a streaming subresource is
    // served (its labels are the request's, without dry_run).
    let long_running_gauge = long_running(info.as_ref()).then(|| {
        let g = metrics::gauge!(
            "apiserver_longrunning_requests",
            &labels
                .iter()
                .filter(|(k, _)| *k != "dry_run")
                .cloned()
                .collect::<Vec<_>>()
        );
        g.increment(1.0);
        LongRunning(g)
    });
    let record: std::sync::OnceLock<Arc<crate::audit::Record>> = std::sync::OnceLock::new();
    let annotations = crate::admission::AuditAnnotations::default();
    req.extensions_mut().insert(annotations.clone());
    let base = AuditBase {
        audit_id: &audit_id,
        received,
        verb: &audit_verb,
        path: &path,
        request_uri: &request_uri,
        remote,
        info: info.as_ref(),
    };
    // Error Statuses (401 and 403 here, every handler error below) go out in protobuf when
    // the client prefers it, as kube negotiates them.
    let protobuf_status = negotiate::status_as_protobuf(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    );
    let chain = async {
        // authentication, per request: the certificate (verified by the handshake), else a
        // bearer token, else anonymous. A credential that fails is a 401, no work done.
        let user = match app
            .authn
            .authenticate(&app.store, &peer, req.headers())
            .await
        {
            Ok(u) => u,
            Err(why) => {
                tracing::info!(path = %req.uri().path(), "authentication failed: {}", why.0);
                let status = Status::unauthorized();
                if let Some(a) = &app.audit {
                    a.failed_authentication(&base.facts(None, req.headers()), &status.to_json())
                        .await;
                }
                return status_response(&status);
            }
        };
        // The credential goes no further than authentication.
        req.headers_mut().remove(header::AUTHORIZATION);
        for h in app.authn.x509.proxy_headers() {
            req.headers_mut().remove(h.as_str());
        }
        // audit: the policy sees the authenticated user (before impersonation).
        if let Some(a) = &app.audit {
            if let Some(rec) = a.begin(&base.facts(Some(&user), req.headers())) {
                let _ = record.set(rec.clone());
                req.extensions_mut().insert(rec.clone());
                if !rec.stage(crate::audit::Stage::RequestReceived).await {
                    metrics::counter!("apiserver_audit_requests_rejected_total").increment(1);
                    return status_response(&Status::internal("failed to store audit event"));
                }
            }
        }
        // impersonation: the real user must be allowed to act as whom the headers name.
        let user = if impersonation::requested(req.headers()) {
            match impersonation::impersonate(&app.authz, &user, req.headers_mut()).await {
                Ok(u) => {
                    if let Some(r) = record.get() {
                        r.impersonated(&u);
                    }
                    u
                }
                Err(s) => return status_response(&s),
            }
        } else {
            user
        };
        // API Priority and Fairness, in kube's place: after impersonation, before
        // authorization. Long-running requests other than watches are not tracked.
        let admitted = match &app.flowcontrol {
            Some(fc)
                if info.as_ref().is_some_and(|i| i.verb == "watch")
                    || !long_running(info.as_ref()) =>
            {
                let method_verb = method.to_ascii_lowercase();
                let digest = crate::flowcontrol::Digest {
                    user: &user,
                    info: info.as_ref(),
                    verb: info.as_ref().map(|i| i.verb).unwrap_or(&method_verb),
                    path: &path,
                };
                let is_watch = info.as_ref().is_some_and(|i| i.verb == "watch");
                let deadline = (!is_watch).then(|| {
                    request_timeout_param(req.uri().query())
                        .ok()
                        .flatten()
                        .map_or(app.request_timeout, |t| t.min(app.request_timeout))
                });
                let query = req.uri().query();
                let work = |max_seats: usize| {
                    crate::flowcontrol::estimate::estimate(
                        info.as_ref(),
                        query,
                        || object_counts(&app, info.as_ref()),
                        max_seats,
                    )
                };
                match fc
                    .start(&digest, work, crate::flowcontrol::wait_limit(deadline))
                    .await
                {
                    Ok(a) => Some(a),
                    Err(refused) => {
                        let mut r = too_many_requests(refused.retry_after);
                        pf_headers(&mut r, &refused.class);
                        return r;
                    }
                }
            }
            _ => None,
        };
        let rest = async {
            // authorization, before the body is read: a denied request does no work.
            let field_selector = form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
                .find(|(k, _)| k == "fieldSelector")
                .map(|(_, v)| v.into_owned());
            let attrs = match &info {
                Some(i) => crate::authz::Attributes::Resource(crate::authz::ResourceAttributes {
                    verb: i.verb,
                    group: &i.group,
                    version: &i.version,
                    resource: &i.resource,
                    subresource: i.subresource.as_deref(),
                    namespace: i.path_namespace.as_deref(),
                    name: i.name.as_deref(),
                    field_selector: field_selector.as_deref(),
                }),
                None => crate::authz::Attributes::path(req.method(), &path),
            };
            // kube's WithAuthorization: the decision and the authorizer's reason are audit
            // annotations.
            match app.authz.decide(&user, &attrs).await {
                crate::authz::Decision::Allow(reason) => {
                    let _ = annotations.add(AUDIT_DECISION, "allow");
                    let _ = annotations.add(AUDIT_REASON, reason);
                }
                crate::authz::Decision::Deny(reason)
                | crate::authz::Decision::NoOpinion(reason) => {
                    let _ = annotations.add(AUDIT_DECISION, "forbid");
                    let _ = annotations.add(AUDIT_REASON, reason.clone());
                    return status_response(&crate::authz::forbidden(&user, &attrs, &reason));
                }
            }
            let verb = info.as_ref().map(|i| i.verb).unwrap_or("get");
            let Ok(_permit) = app.inflight.admit(&user, verb) else {
                return too_many_requests(1);
            };
            // Long-running requests (watches, logs, exec, proxies) have no deadline.
            if verb == "watch" || long_running(info.as_ref()) {
                return handlers::route(app.clone(), user, req).await;
            }
            // Non-long-running requests get a deadline: --request-timeout, or a shorter
            // `?timeout=` of the request.
            let deadline = match request_timeout_param(req.uri().query()) {
                Ok(Some(t)) => t.min(app.request_timeout),
                Ok(None) => app.request_timeout,
                Err(s) => return status_response(&s),
            };
            match tokio::time::timeout(deadline, handlers::route(app.clone(), user, req)).await {
                Ok(r) => r,
                Err(_) => status_response(&Status::new(
                    504,
                    "Timeout",
                    "Timeout: request did not complete within requested timeout - context deadline exceeded",
                ).with_details(serde_json::json!({}))),
            }
        };
        let mut resp = rest.await;
        if let Some(a) = &admitted {
            pf_headers(&mut resp, &a.class);
        }
        drop(admitted);
        resp
    };
    // recover: a panic anywhere below becomes a 500 Status, never a dropped connection.
    let chain = negotiate::with_protobuf_status(protobuf_status, chain);
    let resp = match std::panic::AssertUnwindSafe(chain).catch_unwind().await {
        Ok(resp) => match record.get() {
            Some(rec) => audit_response(rec, &annotations, resp).await,
            None => resp,
        },
        Err(panic) => {
            if let Some(rec) = record.get() {
                merge_annotations(rec, &annotations);
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".to_string());
                rec.panicked(&what).await;
            }
            status_response(&Status::internal("panic while serving the request"))
        }
    };
    let mut resp = resp;
    if let Ok(v) = HeaderValue::from_str(&audit_id) {
        resp.headers_mut().insert("audit-id", v);
    }
    let code = resp.status().as_u16().to_string();
    tracing::Span::current().record("code", resp.status().as_u16());
    // kube's httplog line (its verbosity 3 is our debug).
    tracing::debug!(
        code = resp.status().as_u16(),
        latency_ms = start.elapsed().as_secs_f64() * 1000.0,
        audit_id = %audit_id,
        "HTTP"
    );
    let mut labels = labels.to_vec();
    labels.push(("code", code));
    metrics::counter!("apiserver_request_total", &labels).increment(1);
    labels.pop();
    metrics::histogram!("apiserver_request_duration_seconds", &labels)
        .record(start.elapsed().as_secs_f64());
    match long_running_gauge {
        // The gauge goes down when the streamed body ends (or the client leaves).
        Some(g) => resp.map(|b| {
            GuardedBody {
                inner: b,
                _guard: g,
            }
            .boxed()
        }),
        None => resp,
    }
}

/// kube's label values of one request's metrics: `verb`, `dry_run`, `group`, `version`,
/// `resource`, `subresource`, `scope`, `component`. Values come only from what the server
/// serves, so a client cannot create new time series with made-up paths.
fn request_labels(
    app: &App,
    info: Option<&request_info::RequestInfo>,
    method: &str,
    query: Option<&str>,
) -> [(&'static str, String); 8] {
    let info = info.filter(|i| {
        app.store
            .registry()
            .get(&i.group, &i.version, &i.resource)
            .is_some()
            || (i.group == "authentication.k8s.io"
                && matches!(i.resource.as_str(), "selfsubjectreviews" | "tokenreviews"))
            || (i.group == "authorization.k8s.io" && i.resource.ends_with("reviews"))
    });
    let (verb, group, version, resource, subresource, scope) = match info {
        Some(i) => (
            metric_verb(i.verb).to_string(),
            i.group.clone(),
            i.version.clone(),
            i.resource.clone(),
            i.subresource
                .as_deref()
                .filter(|s| {
                    matches!(
                        *s,
                        "status"
                            | "scale"
                            | "finalize"
                            | "binding"
                            | "eviction"
                            | "token"
                            | "approval"
                            | "ephemeralcontainers"
                            | "resize"
                            // kube's connect subresources
                            | "log"
                            | "exec"
                            | "attach"
                            | "portforward"
                            | "proxy"
                    )
                })
                .unwrap_or_default()
                .to_string(),
            // kube's CleanScope: the request's namespace, else a named object, else the
            // collection.
            if i.path_namespace.is_some() {
                "namespace"
            } else if i.name.is_some() {
                "resource"
            } else {
                "cluster"
            },
        ),
        None => (
            // Non-resource and unknown requests: the method, from a fixed set.
            match method {
                m @ ("GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS") => {
                    m.to_string()
                }
                _ => "other".to_string(),
            },
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            "",
        ),
    };
    [
        ("verb", verb),
        ("dry_run", dry_run(query).to_string()),
        ("group", group),
        ("version", version),
        ("resource", resource),
        ("subresource", subresource),
        ("scope", scope.to_string()),
        ("component", "apiserver".to_string()),
    ]
}

/// kube's `dry_run` label: `All` when the request asks for a dry run, else empty.
fn dry_run(query: Option<&str>) -> &'static str {
    if form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .any(|(k, v)| k == "dryRun" && v == "All")
    {
        "All"
    } else {
        ""
    }
}

/// Holds `apiserver_longrunning_requests` up while a long-running response is served.
struct LongRunning(metrics::Gauge);

impl Drop for LongRunning {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// kube's authorization audit annotations.
const AUDIT_DECISION: &str = "authorization.k8s.io/decision";
const AUDIT_REASON: &str = "authorization.k8s.io/reason";

/// The request's annotations (authorization's, admission's, the handler's) into its event.
fn merge_annotations(rec: &crate::audit::Record, annotations: &crate::admission::AuditAnnotations) {
    for (k, v) in annotations.snapshot() {
        rec.annotate(&k, &v);
    }
}

/// The end of an audited request: a long-running response writes `ResponseStarted` now and
/// `ResponseComplete` when its body ends; any other writes `ResponseComplete` with the
/// status (and, at RequestResponse, the body) of what it answers.
async fn audit_response(
    rec: &Arc<crate::audit::Record>,
    annotations: &crate::admission::AuditAnnotations,
    resp: Response<Body>,
) -> Response<Body> {
    use crate::audit::{Level, Stage};
    merge_annotations(rec, annotations);
    let code = resp.status().as_u16();
    if rec.long_running {
        rec.response_code(code);
        rec.stage(Stage::ResponseStarted).await;
    }
    if rec.long_running && resp.status().is_success() {
        return resp.map(|b| {
            AuditedBody {
                inner: b,
                record: Some(rec.clone()),
            }
            .boxed()
        });
    }
    // Bodies are whole (only watches stream); a JSON or YAML one is read back for the event.
    let media = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let readable = matches!(
        media.as_str(),
        "application/json" | "application/yaml" | protobuf::MEDIA_TYPE
    ) && hyper::body::Body::size_hint(resp.body()).exact().is_some();
    if !readable {
        rec.response(code, None);
        rec.stage(Stage::ResponseComplete).await;
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let wanted = rec.level() >= Level::RequestResponse
        || code >= 300
        || bytes[..bytes.len().min(64)]
            .windows(8)
            .any(|w| w == b"\"Status\"")
        || (media == protobuf::MEDIA_TYPE
            && bytes[..bytes.len().min(24)]
                .windows(6)
                .any(|w| w == b"Status"));
    let value = if !wanted {
        None
    } else if media == protobuf::MEDIA_TYPE {
        // The audit event records the object, whatever its encoding on the wire.
        protobuf::decode_object(&bytes).ok()
    } else if media == "application/json" {
        serde_json::from_slice::<serde_json::Value>(&bytes).ok()
    } else {
        serde_yaml::from_slice::<serde_json::Value>(&bytes).ok()
    };
    rec.response(code, value);
    rec.stage(Stage::ResponseComplete).await;
    Response::from_parts(parts, full(bytes))
}

/// A long-running response's body: `ResponseComplete` is written when it ends (or the client
/// goes away).
struct AuditedBody {
    inner: Body,
    record: Option<Arc<crate::audit::Record>>,
}

impl Drop for AuditedBody {
    fn drop(&mut self) {
        if let Some(rec) = self.record.take() {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    rec.closed_early();
                    rec.stage(crate::audit::Stage::ResponseComplete).await;
                });
            }
        }
    }
}

impl hyper::body::Body for AuditedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// kube-apiserver's metric verb for a request-info verb.
fn metric_verb(verb: &str) -> &'static str {
    match verb {
        "get" => "GET",
        "list" => "LIST",
        "watch" => "WATCH",
        "create" => "POST",
        "update" => "PUT",
        "patch" => "PATCH",
        "delete" => "DELETE",
        "deletecollection" => "DELETECOLLECTION",
        _ => "UNKNOWN",
    }
}

/// Accepts TLS connections and serves them until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    tls: rustls::ServerConfig,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let acceptor = TlsAcceptor::from(Arc::new(tls));
    tokio::pin!(shutdown);
    // Accept errors (EMFILE at the descriptor limit, ...) back off exponentially up to 1 s and
    // are logged once per streak, so a full descriptor table neither spins a core nor floods
    // the log.
    let mut backoff = ACCEPT_BACKOFF_MIN;
    let mut failing = false;
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut full = false;
    loop {
        let (tcp, peer) = tokio::select! {
            _ = &mut shutdown => return,
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    if !failing {
                        tracing::warn!("accept failed: {e} (backing off)");
                        failing = true;
                    }
                    tokio::select! {
                        _ = &mut shutdown => return,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                    continue;
                }
            },
        };
        if failing {
            tracing::warn!("accepting connections again");
            failing = false;
            backoff = ACCEPT_BACKOFF_MIN;
        }
        // A connection cap: beyond it a new connection is closed at once (the TLS handshake
        // deadline and idle timeout free slots held by stalled clients).
        let Ok(slot) = connections.clone().try_acquire_owned() else {
            if !full {
                tracing::warn!("{MAX_CONNECTIONS} connections open: refusing new ones");
                full = true;
            }
            drop(tcp);
            continue;
        };
        full = false;
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let _slot = slot;
            if let Err(e) = serve_connection(acceptor, tcp, peer, app).await {
                tracing::debug!(%peer, "connection ended: {e}");
            }
        });
    }
}

async fn serve_connection(
    acceptor: TlsAcceptor,
    tcp: tokio::net::TcpStream,
    remote: SocketAddr,
    app: Arc<App>,
) -> anyhow::Result<()> {
    let _ = tcp.set_nodelay(true);
    // A connection that has not finished its TLS handshake in time is closed (kube's
    // handshake timeout is 10 s).
    let tls = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp))
        .await
        .map_err(|_| anyhow::anyhow!("TLS handshake timed out"))??;
    let user = tls
        .get_ref()
        .1
        .peer_certificates()
        .map(|chain| app.authn.x509.classify(chain))
        .unwrap_or_default();
    let activity = Arc::new(Activity::default());
    let service = hyper::service::service_fn({
        let activity = activity.clone();
        move |req| {
            let app = app.clone();
            let user = user.clone();
            let guard = Activity::start(&activity);
            // Boxed: hyper keeps each HTTP/2 stream's task (sized for its largest state) for
            // the stream's life, so the request path's large future would otherwise stay
            // allocated for every open watch.
            Box::pin(async move {
                let resp = handle(app, user, Some(remote), req).await;
                // The request counts as active until its body (a watch stream, say) is done.
                Ok::<_, Infallible>(resp.map(|b| {
                    GuardedBody {
                        inner: b,
                        _guard: guard,
                    }
                    .boxed()
                }))
            })
        }
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    // Like kube-apiserver: up to 1000 concurrent streams per HTTP/2 connection (watches are
    // long-lived streams); streams refused beyond that must not tear the connection down.
    builder
        .http2()
        .timer(hyper_util::rt::TokioTimer::new())
        .max_concurrent_streams(HTTP2_MAX_STREAMS)
        .max_local_error_reset_streams(Some(8 * HTTP2_MAX_STREAMS as usize))
        .keep_alive_interval(HTTP2_KEEPALIVE)
        .keep_alive_timeout(HTTP2_KEEPALIVE_TIMEOUT);
    // HTTP/1: the request head must arrive in time (idle keep-alive connections included).
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), service);
    tokio::pin!(conn);
    // A connection with no request in flight for IDLE_TIMEOUT is closed gracefully (HTTP/2:
    // GOAWAY), as Go's IdleTimeout in kube-apiserver does.
    let mut closing = false;
    loop {
        tokio::select! {
            r = conn.as_mut() => return r.map_err(|e| anyhow::anyhow!("{e}")),
            _ = tokio::time::sleep(IDLE_CHECK), if !closing => {
                if activity.idle_for() >= IDLE_TIMEOUT {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

/// Requests in flight on one connection, and when the last one ended.
#[derive(Default)]
struct Activity {
    inflight: std::sync::atomic::AtomicUsize,
    idle_since: std::sync::Mutex<Option<Instant>>,
}

impl Activity {
    fn start(this: &Arc<Activity>) -> ActivityGuard {
        this.inflight.fetch_add(1, Ordering::SeqCst);
        ActivityGuard(this.clone())
    }

    fn idle_for(&self) -> std::time::Duration {
        if self.inflight.load(Ordering::SeqCst) > 0 {
            return std::time::Duration::ZERO;
        }
        let mut since = self.idle_since.lock().unwrap_or_else(|e| e.into_inner());
        since.get_or_insert_with(Instant::now).elapsed()
    }
}

struct ActivityGuard(Arc<Activity>);

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        if self.0.inflight.fetch_sub(1, Ordering::SeqCst) == 1 {
            *self.0.idle_since.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        }
    }
}

/// A response body that keeps a guard alive until it is dropped (its request counted as in
/// flight, a long-running request's gauge).
struct GuardedBody<G = ActivityGuard> {
    inner: Body,
    _guard: G,
}

impl<G: Unpin> hyper::body::Body for GuardedBody<G> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}
