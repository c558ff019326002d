//! The connect subresources (kube's `rest.Connecter`s and the log getter): `pods/log`,
//! `pods/exec`, `pods/attach`, `pods/portforward`, `pods/proxy`, `nodes/proxy`,
//! `services/proxy`. They are served before the request body is read: logs stream the
//! kubelet's body as it comes (`follow`), exec / attach / port-forward are HTTP upgrades
//! relayed byte for byte after the kubelet's `101`, proxies stream both ways.
//!
//! What toward the kubelet, as kube-apiserver 1.33: exec and attach over WebSocket
//! `v5.channel.k8s.io` (kubectl's default) are translated into SPDY/3.1 `v4.channel.k8s.io`
//! sessions with the kubelet (`translate`, kube's StreamTranslator: kubelets do not speak v5);
//! older WebSocket channel protocols and SPDY upgrades are passed through, the kubelet
//! speaking them itself. Port-forward over WebSocket-tunnelled SPDY
//! (`SPDY/3.1+portforward.k8s.io`, kubectl ≥ 1.31) is unwrapped as kube's tunneling handler
//! does (`tunnel`: the kubelet gets a SPDY upgrade, the SPDY bytes travel inside binary
//! WebSocket messages on the client's side); a plain SPDY port-forward is passed through.
//!
//! Which resource has which subresource is its strategy's (`Strategy::extras`, the
//! `Extra::Pod*` / `*Proxy` entries); authorization has already run (the request's verb is
//! kube's: GET → get, POST → create, ...); the connecters (not the log) are admitted here
//! with operation CONNECT and their options object, as kube does. It does not know how kubelets are reached
//! (`kubelet`) nor what a pod's fields mean beyond the container names, node name and IP.

mod translate;
mod tunnel;

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, BodyStream, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::Value;

use super::{full, status_response, App, Body, User};
use crate::meta::field_error::FieldError;
use crate::meta::status::Status;
use crate::registry::catalog::Catalog;
use crate::registry::resource::Resource;
use crate::registry::store::{ReadAt, Scope};
use crate::registry::strategy::Extra;

/// A request for a connect subresource.
pub struct Call {
    info: Arc<Resource>,
    what: Extra,
    namespace: Option<String>,
    /// The name segment as sent (`name`, `name:port`, `https:name:port` for proxies).
    name: String,
    /// What follows `/proxy` (with its leading `/`), for proxies.
    subpath: String,
}

/// The connect entries a subresource name stands for.
fn wanted(sub: &str) -> &'static [Extra] {
    match sub {
        "log" => &[Extra::PodLog],
        "exec" => &[Extra::PodExec],
        "attach" => &[Extra::PodAttach],
        "portforward" => &[Extra::PodPortForward],
        "proxy" => &[Extra::PodProxy, Extra::NodeProxy, Extra::ServiceProxy],
        _ => &[],
    }
}

/// The connect call `path` asks for, if it names a connect subresource of a served resource.
pub fn call(cat: &Catalog, path: &str) -> Option<Call> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, r, rest @ ..] if !rest.is_empty() && !ns.is_empty() => {
            (Some(ns.to_string()), {
                let mut v = vec![*r];
                v.extend_from_slice(rest);
                v
            })
        }
        _ => (None, rest.to_vec()),
    };
    let [resource, name, sub, tail @ ..] = rest.as_slice() else {
        return None;
    };
    let wanted = wanted(sub);
    if wanted.is_empty() || name.is_empty() || (*sub != "proxy" && !tail.is_empty()) {
        return None;
    }
    let info = cat.get(group, version, resource)?.clone();
    if info.namespaced != namespace.is_some() {
        return None;
    }
    let what = *info.strategy.extras().iter().find(|e| wanted.contains(e))?;
    let subpath = if tail.is_empty() {
        String::new()
    } else {
        format!("/{}", tail.join("/"))
    };
    Some(Call {
        info,
        what,
        namespace,
        name: name.to_string(),
        subpath,
    })
}

/// Serves a connect call; every failure is a `Status` response.
pub async fn serve(
    app: Arc<App>,
    user: User,
    call: Call,
    req: Request<Incoming>,
) -> Response<Body> {
    // kube admits connect requests (not the log getter) with operation CONNECT and the
    // request's options as the object, before connecting.
    if call.what != Extra::PodLog {
        if let Err(s) = admit(&app, &user, &call, &req).await {
            return status_response(&s);
        }
    }
    let result = match call.what {
        Extra::PodLog => log(&app, &call, req).await,
        Extra::PodExec | Extra::PodAttach | Extra::PodPortForward => stream(&app, &call, req).await,
        Extra::PodProxy | Extra::NodeProxy | Extra::ServiceProxy => proxy(&app, &call, req).await,
        _ => Err(Status::path_not_found()),
    };
    result.unwrap_or_else(|s| status_response(&s))
}

/// The connect options object kube decodes from the query (`PodExecOptions`, ...).
fn options_object(call: &Call, q: &[(String, String)]) -> Value {
    let kind = match call.what {
        Extra::PodExec => "PodExecOptions",
        Extra::PodAttach => "PodAttachOptions",
        Extra::PodPortForward => "PodPortForwardOptions",
        Extra::PodProxy => "PodProxyOptions",
        Extra::NodeProxy => "NodeProxyOptions",
        _ => "ServiceProxyOptions",
    };
    let mut o = serde_json::json!({"kind": kind, "apiVersion": "v1"});
    match call.what {
        Extra::PodExec | Extra::PodAttach => {
            for flag in ["stdin", "stdout", "stderr", "tty"] {
                if parse_bool(q, flag).unwrap_or(false) {
                    o[flag] = Value::Bool(true);
                }
            }
            if let Some(c) = last(q, "container") {
                o["container"] = c.into();
            }
            if call.what == Extra::PodExec {
                let cmd: Vec<&str> = q
                    .iter()
                    .filter(|(k, _)| k == "command")
                    .map(|(_, v)| v.as_str())
                    .collect();
                o["command"] = serde_json::json!(cmd);
            }
        }
        Extra::PodPortForward => {
            let ports: Vec<i64> = q
                .iter()
                .filter(|(k, _)| k == "ports")
                .flat_map(|(_, v)| v.split(',').filter_map(|p| p.trim().parse().ok()))
                .collect();
            if !ports.is_empty() {
                o["ports"] = serde_json::json!(ports);
            }
        }
        _ => {
            if !call.subpath.is_empty() {
                o["path"] = call.subpath.clone().into();
            }
        }
    }
    o
}

async fn admit(app: &App, user: &User, call: &Call, req: &Request<Incoming>) -> Result<(), Status> {
    let q = query_pairs(req);
    let object = options_object(call, &q);
    let sub = match call.what {
        Extra::PodExec => "exec",
        Extra::PodAttach => "attach",
        Extra::PodPortForward => "portforward",
        _ => "proxy",
    };
    let mut a = crate::admission::Attributes {
        operation: crate::admission::Operation::Connect,
        resource: call.info.clone(),
        subresource: sub.into(),
        name: call.name.clone(),
        namespace: call.namespace.clone().unwrap_or_default(),
        object: Some(object.clone()),
        old_object: None,
        options: object,
        dry_run: false,
        user: user.clone(),
        reinvocation: Default::default(),
    };
    let h = crate::admission::Handle {
        store: app.store.clone(),
        authz: Some(app.authz.clone()),
        warnings: crate::admission::Warnings::default(),
        audit: req
            .extensions()
            .get::<crate::admission::AuditAnnotations>()
            .cloned()
            .unwrap_or_default(),
    };
    app.admission.admit(&mut a, &h).await?;
    app.admission.validate(&a, &h).await
}

impl Call {
    fn scope(&self) -> Scope<'_> {
        Scope {
            info: &self.info,
            namespace: self.namespace.as_deref(),
        }
    }
}

fn query_pairs(req: &Request<Incoming>) -> Vec<(String, String)> {
    form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn last<'a>(q: &'a [(String, String)], key: &str) -> Option<&'a str> {
    q.iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Go's `strconv.ParseBool` as kube's query parameter decoding uses it.
fn parse_bool(q: &[(String, String)], key: &str) -> Result<bool, Status> {
    match last(q, key) {
        None => Ok(false),
        Some("1" | "t" | "T" | "TRUE" | "true" | "True" | "") => Ok(true),
        Some("0" | "f" | "F" | "FALSE" | "false" | "False") => Ok(false),
        Some(v) => Err(Status::bad_request(format!(
            "strconv.ParseBool: parsing {v:?}: invalid syntax"
        ))),
    }
}

fn parse_int(q: &[(String, String)], key: &str) -> Result<Option<i64>, Status> {
    match last(q, key) {
        None => Ok(None),
        Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
            Status::bad_request(format!("strconv.ParseInt: parsing {v:?}: invalid syntax"))
        }),
    }
}

/// `url.Values.Encode`: keys sorted, values in their order.
fn encode(mut params: Vec<(&str, String)>) -> String {
    params.sort_by(|a, b| a.0.cmp(b.0));
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        s.append_pair(k, &v);
    }
    let s = s.finish();
    if s.is_empty() {
        s
    } else {
        format!("?{s}")
    }
}

fn names(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// kube's `validateContainer`: the named container (of any kind), else the pod's only one.
fn container(pod: &Value, name: &str, asked: Option<&str>) -> Result<String, Status> {
    let spec = pod.get("spec");
    let containers = names(spec.and_then(|s| s.get("containers")));
    match asked.filter(|c| !c.is_empty()) {
        Some(c) => {
            let known = containers
                .iter()
                .chain(names(spec.and_then(|s| s.get("initContainers"))).iter())
                .chain(names(spec.and_then(|s| s.get("ephemeralContainers"))).iter())
                .any(|n| n == c);
            if known {
                Ok(c.to_string())
            } else {
                Err(Status::bad_request(format!(
                    "container {c} is not valid for pod {name}"
                )))
            }
        }
        None => match containers.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(Status::bad_request(format!(
                "a container name must be specified for pod {name}"
            ))),
            many => {
                let mut msg = format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    many.join(" ")
                );
                let init = names(spec.and_then(|s| s.get("initContainers")));
                if !init.is_empty() {
                    msg.push_str(&format!(
                        " or one of the init containers: [{}]",
                        init.join(" ")
                    ));
                }
                Err(Status::bad_request(msg))
            }
        },
    }
}

fn node_name(pod: &Value) -> &str {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The node object (kube's 404 `nodes "x" not found` when it is missing).
async fn node(app: &App, name: &str) -> Result<Value, Status> {
    let cat = app.store.registry().snapshot();
    let nodes = cat
        .get("", "v1", "nodes")
        .cloned()
        .ok_or_else(|| Status::internal("nodes are not served"))?;
    app.store
        .get(
            Scope {
                info: &nodes,
                namespace: None,
            },
            name,
            ReadAt::Latest,
        )
        .await
}

async fn kubelet_location(app: &App, name: &str) -> Result<crate::kubelet::Location, Status> {
    let node = node(app, name).await?;
    app.kubelet
        .location(&node)
        .map_err(|e| Status::new(500, "", e))
}

/// Go's text for a failed dial or round trip (`dial tcp host:port: connect: connection
/// refused`, ...).
fn dial_error(authority: &str, e: &reqwest::Error) -> String {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if let Some(tls) = s.downcast_ref::<rustls::Error>() {
            return tls_error(tls);
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            // An io::Error's source skips its payload: look inside (it may nest).
            let mut inner = io.get_ref();
            while let Some(i) = inner {
                if let Some(tls) = i.downcast_ref::<rustls::Error>() {
                    return tls_error(tls);
                }
                inner = i.downcast_ref::<std::io::Error>().and_then(|e| e.get_ref());
            }
            let what = match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connect: connection refused".into(),
                std::io::ErrorKind::TimedOut => "i/o timeout".into(),
                _ => io.to_string(),
            };
            return format!("dial tcp {authority}: {what}");
        }
        src = s.source();
    }
    if e.is_timeout() {
        return format!("dial tcp {authority}: i/o timeout");
    }
    let mut text = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        text = format!("{text}: {s}");
        src = s.source();
    }
    text
}

/// Go's crypto/tls words for a failed handshake with a backend.
fn tls_error(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    let verify = |why: &str| format!("tls: failed to verify certificate: x509: {why}");
    match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
            verify("certificate signed by unknown authority")
        }
        rustls::Error::InvalidCertificate(C::Expired | C::NotValidYet) => {
            verify("certificate has expired or is not yet valid")
        }
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => verify("certificate is not valid for the host"),
        other => format!("tls: {other}"),
    }
}

/// A backend's body as our streamed body (ends quietly if the backend breaks off).
fn stream_body(resp: reqwest::Response) -> Body {
    let s = resp
        .bytes_stream()
        .take_while(|r| futures::future::ready(r.is_ok()))
        .map(|r| Ok::<_, std::convert::Infallible>(Frame::data(r.unwrap_or_default())));
    BodyExt::boxed(StreamBody::new(s))
}

// ---------------------------------------------------------------------------------------
// pods/log

async fn log(app: &App, call: &Call, req: Request<Incoming>) -> Result<Response<Body>, Status> {
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return Err(Status::method_not_supported(call.info.gr(), "create"));
    }
    let q = query_pairs(&req);
    let follow = parse_bool(&q, "follow")?;
    let previous = parse_bool(&q, "previous")?;
    let timestamps = parse_bool(&q, "timestamps")?;
    let insecure = parse_bool(&q, "insecureSkipTLSVerifyBackend")?;
    let since_seconds = parse_int(&q, "sinceSeconds")?;
    let tail_lines = parse_int(&q, "tailLines")?;
    let limit_bytes = parse_int(&q, "limitBytes")?;
    let since_time = match last(&q, "sinceTime") {
        None | Some("") => None,
        Some(t) => Some(
            chrono::DateTime::parse_from_rfc3339(t)
                .map_err(|_| {
                    Status::bad_request(format!(
                        "parsing time {t:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {t:?} as \"2006\""
                    ))
                })?
                .with_timezone(&chrono::Utc),
        ),
    };
    // kube's ValidatePodLogOptions.
    let mut errs = Vec::new();
    if let Some(t) = tail_lines.filter(|t| *t < 0) {
        errs.push(FieldError::invalid(
            "tailLines",
            t,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(l) = limit_bytes.filter(|l| *l < 1) {
        errs.push(FieldError::invalid(
            "limitBytes",
            l,
            "must be greater than 0",
        ));
    }
    match (since_seconds, since_time) {
        (Some(_), Some(_)) => errs.push(FieldError::forbidden(
            "",
            "at most one of `sinceTime` or `sinceSeconds` may be specified",
        )),
        (Some(s), None) if s < 1 => errs.push(FieldError::invalid(
            "sinceSeconds",
            s,
            "must be greater than 0",
        )),
        _ => {}
    }
    if !errs.is_empty() {
        return Err(Status::invalid("PodLogOptions", "", &call.name, &errs));
    }
    let pod = app
        .store
        .get(call.scope(), &call.name, ReadAt::Latest)
        .await?;
    let container = container(&pod, &call.name, last(&q, "container"))?;
    let node = node_name(&pod).to_string();
    if node.is_empty() {
        // kube: no host, no location: 204 and nothing else.
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::NO_CONTENT;
        return Ok(r);
    }
    let loc = kubelet_location(app, &node).await?;
    let mut params = Vec::new();
    if follow {
        params.push(("follow", "true".to_string()));
    }
    if previous {
        params.push(("previous", "true".to_string()));
    }
    if timestamps {
        params.push(("timestamps", "true".to_string()));
    }
    if let Some(s) = since_seconds {
        params.push(("sinceSeconds", s.to_string()));
    }
    if let Some(t) = since_time {
        params.push((
            "sinceTime",
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ));
    }
    if let Some(t) = tail_lines {
        params.push(("tailLines", t.to_string()));
    }
    if let Some(l) = limit_bytes {
        params.push(("limitBytes", l.to_string()));
    }
    let url = format!(
        "https://{}/containerLogs/{}/{}/{}{}",
        loc.authority(),
        call.namespace.as_deref().unwrap_or(""),
        call.name,
        container,
        encode(params)
    );
    // insecureSkipTLSVerifyBackend: kube's transport that skips verifying the kubelet.
    let client = if insecure {
        app.kubelet.kubelet_insecure()
    } else {
        app.kubelet.kubelet()
    };
    let resp = client.get(&url).send().await.map_err(|e| {
        Status::new(
            500,
            "",
            format!("Get {url:?}: {}", dial_error(&loc.authority(), &e)),
        )
    })?;
    if !resp.status().is_success() {
        let code = resp.status().as_u16();
        let body = resp.text().await.unwrap_or_default();
        return Err(backend_status(code, &call.name, &body));
    }
    let mut r = Response::new(stream_body(resp));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    Ok(r)
}

/// kube's `NewGenericServerResponse` for a kubelet's non-2xx answer to a log request.
fn backend_status(code: u16, name: &str, body: &str) -> Status {
    let (reason, what) = match code {
        400 => (
            "BadRequest",
            "the server rejected our request for an unknown reason",
        ),
        401 => (
            "Unauthorized",
            "the server has asked for the client to provide credentials",
        ),
        403 => (
            "Forbidden",
            "the server does not allow access to the requested resource",
        ),
        404 => (
            "NotFound",
            "the server could not find the requested resource",
        ),
        _ => (
            "InternalError",
            "an error on the server has prevented the request from succeeding",
        ),
    };
    let mut msg = format!("{what} ( pods/log {name})");
    if !body.trim().is_empty() {
        msg = body.trim().to_string();
    }
    Status::new(code, reason, msg)
}

// ---------------------------------------------------------------------------------------
// pods/exec, pods/attach, pods/portforward

fn header_has(h: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    h.get_all(name).iter().any(|v| {
        v.to_str()
            .is_ok_and(|s| s.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

/// kube's `httpstream.IsUpgradeRequest`: `Connection` names `upgrade`.
fn is_upgrade(h: &HeaderMap) -> bool {
    header_has(h, header::CONNECTION, "upgrade")
}

/// Request headers relayed to a backend (hop-by-hop ones and what only we read dropped;
/// the upgrade headers kept for upgrades).
fn relay_headers(from: &HeaderMap, upgrade: bool) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (k, v) in from {
        let n = k.as_str();
        let hop = matches!(
            n,
            "host"
                | "content-length"
                | "transfer-encoding"
                | "keep-alive"
                | "proxy-connection"
                | "te"
                | "trailer"
                | "authorization"
        ) || n.starts_with("impersonate-");
        let upgrade_header = matches!(n, "connection" | "upgrade");
        if hop || (upgrade_header && !upgrade) {
            continue;
        }
        out.append(k.clone(), v.clone());
    }
    out
}

async fn stream(
    app: &App,
    call: &Call,
    mut req: Request<Incoming>,
) -> Result<Response<Body>, Status> {
    if !matches!(*req.method(), Method::GET | Method::POST) {
        return Err(Status::method_not_supported(
            call.info.gr(),
            &req.method().as_str().to_ascii_lowercase(),
        ));
    }
    let q = query_pairs(&req);
    let pod = app
        .store
        .get(call.scope(), &call.name, ReadAt::Latest)
        .await?;
    let ns = call.namespace.as_deref().unwrap_or("");
    let mut streams = translate::Streams::default();
    let (path, params) = match call.what {
        Extra::PodPortForward => {
            let mut params = Vec::new();
            let ports: Vec<&str> = q
                .iter()
                .filter(|(k, _)| k == "ports")
                .map(|(_, v)| v.as_str())
                .collect();
            for p in &ports {
                for one in p.split(',') {
                    if one.trim().parse::<u16>().map_or(true, |n| n == 0) {
                        return Err(Status::bad_request(format!(
                            "strconv.ParseInt: parsing {one:?}: invalid syntax"
                        )));
                    }
                }
            }
            if !ports.is_empty() {
                params.push(("port", ports.join(",")));
            }
            (format!("/portForward/{ns}/{}", call.name), params)
        }
        what => {
            let container = container(&pod, &call.name, last(&q, "container"))?;
            let mut params = Vec::new();
            for (flag, key) in [
                ("stdin", "input"),
                ("stdout", "output"),
                ("stderr", "error"),
                ("tty", "tty"),
            ] {
                let on = parse_bool(&q, flag)?;
                match flag {
                    "stdin" => streams.stdin = on,
                    "stdout" => streams.stdout = on,
                    "stderr" => streams.stderr = on,
                    _ => streams.tty = on,
                }
                if on {
                    params.push((key, "1".to_string()));
                }
            }
            let base = if what == Extra::PodExec {
                for (k, v) in &q {
                    if k == "command" {
                        params.push(("command", v.clone()));
                    }
                }
                "exec"
            } else {
                "attach"
            };
            (format!("/{base}/{ns}/{}/{container}", call.name), params)
        }
    };
    let node = node_name(&pod).to_string();
    if node.is_empty() {
        return Err(Status::bad_request(format!(
            "pod {} does not have a host assigned",
            call.name
        )));
    }
    let loc = kubelet_location(app, &node).await?;
    if !is_upgrade(req.headers()) {
        return Err(Status::bad_request("Upgrade request required"));
    }
    let url = format!("https://{}{path}{}", loc.authority(), encode(params));
    let on_client = hyper::upgrade::on(&mut req);
    if call.what == Extra::PodPortForward && tunnel::wanted(req.headers()) {
        return tunnel::serve(app, &url, &loc.authority(), req, on_client).await;
    }
    // kube translates v5 WebSocket sessions to SPDY; older WebSocket protocols and SPDY
    // are passed through to the kubelet, which speaks them.
    if call.what != Extra::PodPortForward && translate::wanted(req.headers()) {
        return translate::serve(
            app.kubelet.kubelet().clone(),
            url,
            loc.authority(),
            req,
            on_client,
            streams,
        );
    }
    let mut headers = relay_headers(req.headers(), true);
    headers.remove(header::CONTENT_TYPE);
    let resp = app
        .kubelet
        .kubelet()
        .request(req.method().clone(), &url)
        .headers(headers)
        .send()
        .await
        .map_err(|e| {
            Status::new(
                500,
                "",
                format!(
                    "error dialing backend: {}",
                    dial_error(&loc.authority(), &e)
                ),
            )
        })?;
    relay_upgrade(resp, on_client).await
}

/// The kubelet's answer to an upgrade, relayed: a `101` with the kubelet's headers and then
/// bytes both ways, or its refusal as it came.
async fn relay_upgrade(
    resp: reqwest::Response,
    on_client: hyper::upgrade::OnUpgrade,
) -> Result<Response<Body>, Status> {
    let status = resp.status();
    let headers = resp.headers().clone();
    if status != StatusCode::SWITCHING_PROTOCOLS {
        let mut r = Response::new(stream_body(resp));
        *r.status_mut() = status;
        copy_response_headers(&headers, r.headers_mut());
        return Ok(r);
    }
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    for (k, v) in &headers {
        if k != header::CONTENT_LENGTH {
            r.headers_mut().append(k.clone(), v.clone());
        }
    }
    tokio::spawn(async move {
        let backend = match resp.upgrade().await {
            Ok(b) => b,
            Err(e) => {
                tracing::info!("kubelet upgrade failed: {e}");
                return;
            }
        };
        let client = match on_client.await {
            Ok(c) => c,
            Err(e) => {
                tracing::info!("client upgrade failed: {e}");
                return;
            }
        };
        let mut client = hyper_util::rt::TokioIo::new(client);
        let mut backend = backend;
        let _ = tokio::io::copy_bidirectional(&mut client, &mut backend).await;
    });
    Ok(r)
}

fn copy_response_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (k, v) in from {
        let n = k.as_str();
        if matches!(
            n,
            "connection"
                | "keep-alive"
                | "transfer-encoding"
                | "content-length"
                | "proxy-connection"
                | "te"
                | "trailer"
                | "upgrade"
        ) {
            continue;
        }
        to.append(k.clone(), v.clone());
    }
}

// ---------------------------------------------------------------------------------------
// pods/proxy, nodes/proxy, services/proxy

/// `utilnet.SplitSchemeNamePort`: `name`, `name:port`, `scheme:name:port`.
fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    if name.is_empty() || !matches!(scheme, "" | "http" | "https") {
        return None;
    }
    Some((scheme, name, port))
}

/// Go's `IP.IsGlobalUnicast` (kube proxies only to such pod addresses).
fn global_unicast(ip: &str) -> bool {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => {
            !(v4.is_loopback()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_unspecified()
                || v4.is_link_local())
        }
        Ok(std::net::IpAddr::V6(v6)) => {
            !(v6.is_loopback()
                || v6.is_multicast()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
        Err(_) => false,
    }
}

async fn proxy(app: &App, call: &Call, req: Request<Incoming>) -> Result<Response<Body>, Status> {
    let Some((scheme, name, port)) = split_scheme_name_port(&call.name) else {
        // kube's ResourceLocation of each kind names it.
        let kind = match call.what {
            Extra::NodeProxy => "node",
            Extra::ServiceProxy => "service",
            _ => "pod",
        };
        return Err(Status::bad_request(format!(
            "invalid {kind} request {:?}",
            call.name
        )));
    };
    let (base, kubelet) = match call.what {
        Extra::NodeProxy => {
            let loc = kubelet_location(app, name).await?;
            let kubelet_port = loc.port.to_string();
            if port.is_empty() || port == kubelet_port {
                (format!("https://{}", loc.authority()), true)
            } else {
                let scheme = if scheme.is_empty() { "http" } else { scheme };
                let port: u16 = port
                    .parse()
                    .map_err(|_| Status::bad_request(format!("invalid port {port:?}")))?;
                (
                    format!(
                        "{scheme}://{}",
                        crate::kubelet::join_host_port(&loc.host, port)
                    ),
                    false,
                )
            }
        }
        Extra::PodProxy => {
            let pod = app.store.get(call.scope(), name, ReadAt::Latest).await?;
            let mut port = port.to_string();
            if port.is_empty() {
                port = pod
                    .pointer("/spec/containers")
                    .and_then(Value::as_array)
                    .and_then(|cs| {
                        cs.iter().find_map(|c| {
                            c.pointer("/ports/0/containerPort").and_then(Value::as_i64)
                        })
                    })
                    .map(|p| p.to_string())
                    .unwrap_or_default();
            }
            let ip = pod
                .pointer("/status/podIP")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !global_unicast(ip) {
                return Err(Status::bad_request("address not allowed"));
            }
            let scheme = if scheme.is_empty() { "http" } else { scheme };
            let host = match port.parse::<u16>() {
                Ok(p) => crate::kubelet::join_host_port(ip, p),
                Err(_) if port.is_empty() => {
                    if ip.contains(':') {
                        format!("[{ip}]")
                    } else {
                        ip.to_string()
                    }
                }
                Err(_) => return Err(Status::bad_request(format!("invalid port {port:?}"))),
            };
            (format!("{scheme}://{host}"), false)
        }
        Extra::ServiceProxy => (
            service_location(app, call, scheme, name, port).await?,
            false,
        ),
        _ => return Err(Status::path_not_found()),
    };
    let path = if call.subpath.is_empty() {
        "/".to_string()
    } else {
        call.subpath.clone()
    };
    let query = req
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let url = format!("{base}{path}{query}");
    let authority = base.split("://").nth(1).unwrap_or("").to_string();
    let client = if kubelet {
        app.kubelet.kubelet()
    } else {
        app.kubelet.proxy()
    };
    let method = req.method().clone();
    let upgrade = is_upgrade(req.headers());
    let headers = relay_headers(req.headers(), upgrade);
    let mut req = req;
    let on_client = upgrade.then(|| hyper::upgrade::on(&mut req));
    let body = BodyStream::new(req.into_body()).filter_map(|f| async move {
        match f {
            Ok(f) => f.into_data().ok().map(Ok::<Bytes, std::io::Error>),
            Err(e) => Some(Err(std::io::Error::other(e))),
        }
    });
    let mut out = client.request(method, &url).headers(headers);
    if !upgrade {
        out = out.body(reqwest::Body::wrap_stream(body));
    }
    let resp = out.send().await.map_err(|e| {
        Status::service_unavailable(format!(
            "error trying to reach service: {}",
            dial_error(&authority, &e)
        ))
    })?;
    if let Some(on_client) = on_client {
        return relay_upgrade(resp, on_client).await;
    }
    let status = resp.status();
    let headers = resp.headers().clone();
    let mut r = Response::new(stream_body(resp));
    *r.status_mut() = status;
    copy_response_headers(&headers, r.headers_mut());
    Ok(r)
}

/// kube's service `ResourceLocation` (pkg/registry/core/service/storage): the Service's
/// Endpoints (not its EndpointSlices) give the address. A port number is first turned into
/// the Service port's name (503 `no service port N found` when it has none); a name (or no
/// port: the unnamed one) is matched against the endpoint ports as it is. The subset to
/// start from and the address in it are picked at random; an address counts only when it
/// names a pod of this namespace (`targetRef`) whose IPs include it. Errors reading the
/// Service or its Endpoints (404s, as for an ExternalName Service, which has none) are
/// answered as they are; no address is 503 `no endpoints available for service`.
async fn service_location(
    app: &App,
    call: &Call,
    scheme: &str,
    name: &str,
    port: &str,
) -> Result<String, Status> {
    let mut port_name = port.to_string();
    if let Ok(n) = port.parse::<i64>() {
        let svc = app.store.get(call.scope(), name, ReadAt::Latest).await?;
        let found = svc
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("port").and_then(Value::as_i64) == Some(n));
        let Some(found) = found else {
            return Err(Status::service_unavailable(format!(
                "no service port {n} found for service {name:?}"
            )));
        };
        port_name = found
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
    }
    let cat = app.store.registry().snapshot();
    let core = |resource: &str| {
        cat.get("", "v1", resource)
            .cloned()
            .ok_or_else(|| Status::internal(format!("{resource} are not served")))
    };
    let (endpoints, pods) = (core("endpoints")?, core("pods")?);
    let ns = call.namespace.as_deref();
    let ep = app
        .store
        .get(
            Scope {
                info: &endpoints,
                namespace: ns,
            },
            name,
            ReadAt::Latest,
        )
        .await?;
    let subsets: Vec<&Value> = ep
        .get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    if subsets.is_empty() {
        return Err(Status::service_unavailable(format!(
            "no endpoints available for service {name:?}"
        )));
    }
    let ss_seed = rand::random::<usize>() % subsets.len();
    for ssi in 0..subsets.len() {
        let ss = subsets[(ss_seed + ssi) % subsets.len()];
        let addrs: Vec<&Value> = ss
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        if addrs.is_empty() {
            continue;
        }
        let ports = ss
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for p in ports.filter(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)
        {
            let number = p.get("port").and_then(Value::as_u64).unwrap_or(0);
            let addr_seed = rand::random::<usize>() % addrs.len();
            for t in 0..addrs.len() {
                let addr = addrs[(addr_seed + t) % addrs.len()];
                let ip = addr.get("ip").and_then(Value::as_str).unwrap_or("");
                let pod_scope = Scope {
                    info: &pods,
                    namespace: ns,
                };
                if !valid_address(app, pod_scope, addr, ip).await {
                    tracing::debug!(
                        service = name,
                        ip,
                        "endpoint address is not a pod's, skipped"
                    );
                    continue;
                }
                let scheme = if scheme.is_empty() { "http" } else { scheme };
                return Ok(format!(
                    "{scheme}://{}",
                    crate::kubelet::join_host_port(ip, number as u16)
                ));
            }
        }
    }
    Err(Status::service_unavailable(format!(
        "no endpoints available for service {:?}",
        call.name
    )))
}

/// kube's `isValidAddress`: the endpoint address names (`targetRef`) a pod of the request's
/// namespace that has the address among its pod IPs.
async fn valid_address(app: &App, pods: Scope<'_>, addr: &Value, ip: &str) -> bool {
    let Some(target) = addr.get("targetRef") else {
        return false;
    };
    let target_ns = target
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    if Some(target_ns) != pods.namespace {
        return false;
    }
    let pod_name = target.get("name").and_then(Value::as_str).unwrap_or("");
    let Ok(pod) = app.store.get(pods, pod_name, ReadAt::Latest).await else {
        return false;
    };
    pod.pointer("/status/podIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|p| p.get("ip").and_then(Value::as_str) == Some(ip))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containers_as_kube_picks_them() {
        let pod = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}], "initContainers": [{"name": "i"}]}});
        assert_eq!(
            container(&pod, "p", None).unwrap_err().message,
            "a container name must be specified for pod p, choose one of: [a b] or one of the init containers: [i]"
        );
        assert_eq!(container(&pod, "p", Some("i")).unwrap(), "i");
        assert_eq!(
            container(&pod, "p", Some("x")).unwrap_err().message,
            "container x is not valid for pod p"
        );
        let one = json!({"spec": {"containers": [{"name": "a"}]}});
        assert_eq!(container(&one, "p", None).unwrap(), "a");
    }

    #[test]
    fn names_ports_and_addresses() {
        assert_eq!(split_scheme_name_port("p"), Some(("", "p", "")));
        assert_eq!(split_scheme_name_port("p:80"), Some(("", "p", "80")));
        assert_eq!(
            split_scheme_name_port("https:p:443"),
            Some(("https", "p", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:p:1"), None);
        assert!(!global_unicast("127.0.0.1"));
        assert!(!global_unicast(""));
        assert!(global_unicast("10.1.2.3"));
        assert_eq!(
            encode(vec![
                ("tty", "1".into()),
                ("command", "ls".into()),
                ("command", "-l".into())
            ]),
            "?command=ls&command=-l&tty=1"
        );
    }
}
