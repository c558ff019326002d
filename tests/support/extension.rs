//! The extension API server of `tests/aggregation.rs` and `benches/aggregation.rs`: hyper +
//! rustls on 127.0.0.1, a serving certificate for `api.wardle.svc` from its own CA, client
//! certificates required and verified against the front-proxy CA it is given; it serves
//! discovery, OpenAPI, a Flunder list/get/create, a watch whose second event waits for the
//! test, and an echo upgrade, and records who called (certificate CN, X-Remote-* headers).
#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{json, Value};

pub const GROUP: &str = "wardle.example.com";
pub const VERSION: &str = "v1alpha1";

/// What the extension server saw: (method, path, client certificate CN, X-Remote-User,
/// X-Remote-Group values).
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub cn: String,
    pub user: String,
    pub groups: Vec<String>,
    pub extra: Vec<(String, String)>,
}

pub struct Extension {
    pub port: u16,
    pub ca_pem: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    /// Released by the test once it has the watch's first event.
    pub second_event: Arc<tokio::sync::Notify>,
    pub stop: tokio::sync::watch::Sender<bool>,
    /// How many of the next discovery GETs of the availability check
    /// (`system:kube-aggregator`) are answered 503.
    pub fail_checks: Arc<AtomicUsize>,
}

pub fn discovery() -> Value {
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{GROUP}/{VERSION}"),
    "resources": [
        {"name": "flunders", "singularName": "flunder", "namespaced": true, "kind": "Flunder",
         "verbs": ["create", "delete", "get", "list", "watch"], "shortNames": ["fl"]},
        {"name": "flunders/status", "singularName": "", "namespaced": true, "kind": "Flunder",
         "verbs": ["get", "update"]}
    ]})
}

pub fn flunder(name: &str) -> Value {
    json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Flunder",
           "metadata": {"name": name, "namespace": "wardle", "creationTimestamp": "2024-01-01T00:00:00Z",
                        "resourceVersion": "1"}})
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn full(s: impl Into<Bytes>) -> Body {
    http_body_util::Full::new(s.into()).boxed()
}

/// Starts the extension server: serving cert for `api.wardle.svc` from its own CA, client
/// certificates verified against `front_proxy_ca`.
pub async fn start_extension(front_proxy_ca: &[u8]) -> Extension {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["api.wardle.svc".to_string()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pemfile::certs(&mut &front_proxy_ca[..]) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let second_event = Arc::new(tokio::sync::Notify::new());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let fail_checks: Arc<AtomicUsize> = Arc::default();
    let (seen2, second2, fail2) = (seen.clone(), second_event.clone(), fail_checks.clone());
    tokio::spawn(async move {
        let mut stop_accept = stopped.clone();
        loop {
            let (tcp, _) = tokio::select! {
                r = listener.accept() => match r { Ok(c) => c, Err(_) => return },
                _ = stop_accept.changed() => return,
            };
            let acceptor = acceptor.clone();
            let (seen, second, fail) = (seen2.clone(), second2.clone(), fail2.clone());
            let mut stopped = stopped.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let cn = tls
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|c| c.first().cloned())
                    .and_then(|c| {
                        let (_, x) = x509_parser::parse_x509_certificate(&c).ok()?;
                        let cn = x
                            .subject()
                            .iter_common_name()
                            .next()?
                            .as_str()
                            .ok()?
                            .to_string();
                        Some(cn)
                    })
                    .unwrap_or_default();
                let svc = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let (seen, second, cn) = (seen.clone(), second.clone(), cn.clone());
                        let fail = fail.clone();
                        async move { Ok::<_, Infallible>(handle(req, &seen, second, &cn, &fail).await) }
                    },
                );
                let conn = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(tls), svc)
                .into_owned();
                tokio::select! {
                    _ = conn => {}
                    _ = stopped.changed() => {}
                }
            });
        }
    });
    Extension {
        port,
        ca_pem: ca.pem(),
        seen,
        second_event,
        stop,
        fail_checks,
    }
}

async fn handle(
    mut req: hyper::Request<hyper::body::Incoming>,
    seen: &Mutex<Vec<Seen>>,
    second: Arc<tokio::sync::Notify>,
    cn: &str,
    fail_checks: &AtomicUsize,
) -> hyper::Response<Body> {
    let h = req.headers();
    let all = |k: &str| -> Vec<String> {
        h.get_all(k)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect()
    };
    let extra = h
        .iter()
        .filter(|(k, _)| k.as_str().starts_with("x-remote-extra-"))
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    seen.lock().unwrap().push(Seen {
        method: req.method().to_string(),
        path: path.clone(),
        cn: cn.to_string(),
        user: all("x-remote-user").join(","),
        groups: all("x-remote-group"),
        extra,
    });
    let json_resp = |code: u16, v: Value| {
        let mut r = hyper::Response::new(full(v.to_string()));
        *r.status_mut() = hyper::StatusCode::from_u16(code).unwrap();
        r.headers_mut()
            .insert("content-type", "application/json".parse().unwrap());
        r
    };
    let gv = format!("/apis/{GROUP}/{VERSION}");
    let flunders = format!("{gv}/namespaces/wardle/flunders");
    if path == gv {
        let check = all("x-remote-user") == ["system:kube-aggregator"];
        if check
            && fail_checks
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            return json_resp(
                503,
                json!({"kind": "Status", "status": "Failure", "code": 503}),
            );
        }
        return json_resp(200, discovery());
    }
    // A group-version the server under test also serves itself, for APIServices that take
    // it over.
    if path == "/apis/scheduling.k8s.io/v1" {
        return json_resp(
            200,
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "scheduling.k8s.io/v1",
                   "resources": [{"name": "widgets", "singularName": "widget", "namespaced": false,
                                  "kind": "Widget", "verbs": ["get", "list"]}]}),
        );
    }
    if path.starts_with("/apis/scheduling.k8s.io/v1/") {
        return json_resp(
            200,
            json!({"kind": "WidgetList", "apiVersion": "scheduling.k8s.io/v1",
                   "metadata": {"resourceVersion": "7"}, "items": [], "servedBy": "extension"}),
        );
    }
    if path == "/openapi/v2" {
        return json_resp(
            200,
            json!({"swagger": "2.0", "info": {"title": "wardle", "version": "v0"},
            "paths": {format!("{gv}/namespaces/{{namespace}}/flunders"): {"get": {"operationId": "listWardleFlunders"}},
                      "/apis/elsewhere.io/v1/things": {"get": {}}},
            "definitions": {"com.example.wardle.v1alpha1.Flunder": {"type": "object"}}}),
        );
    }
    if path == format!("/openapi/v3{gv}") {
        return json_resp(
            200,
            json!({"openapi": "3.0.0", "info": {"title": "wardle", "version": "v0"},
            "paths": {format!("{gv}/namespaces/{{namespace}}/flunders"): {"get": {}}},
            "components": {"schemas": {"com.example.wardle.v1alpha1.Flunder": {"type": "object"}}}}),
        );
    }
    if path == format!("{flunders}/upgrade") && h.contains_key("upgrade") {
        let on = hyper::upgrade::on(&mut req);
        tokio::spawn(async move {
            if let Ok(up) = on.await {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut io = hyper_util::rt::TokioIo::new(up);
                let mut buf = [0u8; 64];
                if let Ok(n) = io.read(&mut buf).await {
                    let mut out = b"echo:".to_vec();
                    out.extend_from_slice(&buf[..n]);
                    let _ = io.write_all(&out).await;
                    let _ = io.shutdown().await;
                }
            }
        });
        let mut r = hyper::Response::new(full(""));
        *r.status_mut() = hyper::StatusCode::SWITCHING_PROTOCOLS;
        r.headers_mut()
            .insert("upgrade", "test-echo".parse().unwrap());
        r.headers_mut()
            .insert("connection", "Upgrade".parse().unwrap());
        return r;
    }
    if path == flunders && query.contains("watch=true") {
        // One event now, the second only once the test has seen the first: a proxy that
        // buffered the stream would never deliver either.
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, Infallible>>(4);
        tokio::spawn(async move {
            let ev = |t: &str, n: &str| format!("{}\n", json!({"type": t, "object": flunder(n)}));
            let _ = tx
                .send(Ok(Frame::data(Bytes::from(ev("ADDED", "alpha")))))
                .await;
            second.notified().await;
            let _ = tx
                .send(Ok(Frame::data(Bytes::from(ev("MODIFIED", "alpha")))))
                .await;
        });
        let body = StreamBody::new(tokio_stream_from(rx));
        let mut r = hyper::Response::new(BodyExt::boxed(body));
        r.headers_mut()
            .insert("content-type", "application/json".parse().unwrap());
        return r;
    }
    if path == flunders && req.method() == hyper::Method::POST {
        let body = req.into_body().collect().await.unwrap().to_bytes();
        let mut obj: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        obj["metadata"]["resourceVersion"] = json!("2");
        return json_resp(201, obj);
    }
    if path == flunders {
        return json_resp(
            200,
            json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "FlunderList",
                                     "metadata": {"resourceVersion": "1"}, "items": [flunder("alpha")]}),
        );
    }
    if path == format!("{flunders}/alpha") {
        return json_resp(200, flunder("alpha"));
    }
    json_resp(
        404,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                          "reason": "NotFound", "message": "not found"}),
    )
}

fn tokio_stream_from<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::Receiver<T>,
) -> impl futures::Stream<Item = T> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
