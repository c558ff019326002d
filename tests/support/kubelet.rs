//! A fake kubelet for the connect tests: an HTTPS server on 127.0.0.1 (its own CA, client
//! certificates required and issued by that CA) that speaks the kubelet's endpoints:
//! `/containerLogs/<ns>/<pod>/<container>` (five log lines an hour apart, honouring
//! `tailLines`, `limitBytes`, `timestamps`, `sinceSeconds`, `sinceTime`; `follow` streams three
//! more lines, then holds the stream open), `/exec/...` and `/attach/...` as a kubelet
//! serves them, over SPDY/3.1 or WebSocket `v4.channel.k8s.io` (stdout names the command or
//! container and echoes stdin; the command `exit N` ends with kube's NonZeroExitCode status), `/portForward/...` as a SPDY upgrade
//! that echoes the bytes it gets, and anything else as `kubelet: <method> <path>?<query>`.
//! Every request's method, URI and headers are recorded. A container named `big` has a
//! 64 MiB log (benches).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

type Body = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

/// One request the fake kubelet received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub uri: String,
    pub headers: http::HeaderMap,
}

pub struct FakeKubelet {
    pub port: u16,
    /// The CA of its serving certificate (for `--kubelet-certificate-authority`).
    pub ca: PathBuf,
    /// A client certificate and key it accepts (for `--kubelet-client-certificate/key`).
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeKubelet {
    /// The requests received whose URI starts with `prefix`.
    pub fn seen(&self, prefix: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.uri.starts_with(prefix))
            .cloned()
            .collect()
    }
}

/// The size of the log of a container named `big` (benches).
pub const BIG_LOG: usize = 64 << 20;

/// The log line `i` (1-based) is written this long before now.
pub fn line_age(i: u32) -> Duration {
    Duration::from_secs(3600 * (5 - i) as u64)
}

fn full(b: impl Into<Bytes>) -> Body {
    http_body_util::Full::new(b.into()).boxed()
}

/// Starts the fake kubelet on a free port; its CA and client identity are written to `dir`.
pub async fn start(dir: &Path) -> FakeKubelet {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "fake-kubelet-ca");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut leaf = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    leaf.subject_alt_names = vec![rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap())];
    let leaf = leaf.signed_by(&key, &ca, &ca_key).unwrap();
    let client_key = rcgen::KeyPair::generate().unwrap();
    let mut client = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    client
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kube-apiserver-kubelet-client");
    client.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let client = client.signed_by(&client_key, &ca, &ca_key).unwrap();
    let paths = (
        dir.join("kubelet-ca.crt"),
        dir.join("kubelet-client.crt"),
        dir.join("kubelet-client.key"),
    );
    std::fs::write(&paths.0, ca.pem()).unwrap();
    std::fs::write(&paths.1, client.pem()).unwrap();
    std::fs::write(&paths.2, client_key.serialize_pem()).unwrap();

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let log = log.clone();
                    async move {
                        log.lock().unwrap().push(Seen {
                            method: req.method().to_string(),
                            uri: req.uri().to_string(),
                            headers: req.headers().clone(),
                        });
                        Ok::<_, std::convert::Infallible>(answer(req).await)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                    .with_upgrades()
                    .await;
            });
        }
    });
    FakeKubelet {
        port,
        ca: paths.0,
        client_cert: paths.1,
        client_key: paths.2,
        seen,
    }
}

fn query(req: &Request<Incoming>) -> Vec<(String, String)> {
    form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn get<'a>(q: &'a [(String, String)], k: &str) -> Option<&'a str> {
    q.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str())
}

async fn answer(req: Request<Incoming>) -> Response<Body> {
    let path = req.uri().path().to_string();
    if path.starts_with("/containerLogs/") {
        return logs(&req);
    }
    if path.starts_with("/exec/") || path.starts_with("/attach/") {
        return remote_command(req).await;
    }
    if path.starts_with("/portForward/") {
        return port_forward(req);
    }
    Response::new(full(format!(
        "kubelet: {} {}?{}",
        req.method(),
        path,
        req.uri().query().unwrap_or("")
    )))
}

fn logs(req: &Request<Incoming>) -> Response<Body> {
    let q = query(req);
    let now = std::time::SystemTime::now();
    let since = match (get(&q, "sinceSeconds"), get(&q, "sinceTime")) {
        (Some(s), _) => Some(now - Duration::from_secs(s.parse().unwrap())),
        (None, Some(t)) => Some(std::time::SystemTime::from(
            chrono::DateTime::parse_from_rfc3339(t).unwrap(),
        )),
        _ => None,
    };
    let stamp = |t: std::time::SystemTime| {
        chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    let timestamps = get(&q, "timestamps") == Some("true");
    let container = req
        .uri()
        .path()
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_string();
    if container == "big" {
        // For benches: BIG_LOG bytes in 64 KiB writes.
        use futures::StreamExt;
        let chunk = Bytes::from(vec![b'x'; 64 << 10]);
        let s = futures::stream::iter(0..BIG_LOG / (64 << 10))
            .map(move |_| Ok::<_, std::convert::Infallible>(Frame::data(chunk.clone())));
        return Response::new(BodyExt::boxed(StreamBody::new(s)));
    }
    let mut lines: Vec<String> = (1..=5u32)
        .filter(|i| since.is_none_or(|s| now - line_age(*i) >= s))
        .map(|i| {
            let text = format!("{container} line {i}\n");
            if timestamps {
                format!("{} {text}", stamp(now - line_age(i)))
            } else {
                text
            }
        })
        .collect();
    if let Some(t) = get(&q, "tailLines") {
        let t: usize = t.parse().unwrap();
        lines = lines.split_off(lines.len().saturating_sub(t));
    }
    let mut text = lines.concat();
    if let Some(l) = get(&q, "limitBytes") {
        text.truncate(l.parse().unwrap());
    }
    if get(&q, "follow") != Some("true") {
        return Response::new(full(text));
    }
    let first = futures::stream::once(async move { text });
    let more = futures::stream::unfold(1u32, move |i| {
        let container = container.clone();
        async move {
            match i {
                1..=3 => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    Some((format!("{container} follow {i}\n"), i + 1))
                }
                // Held open (bounded): a followed log ends only when the client goes away.
                4 => {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    None
                }
                _ => None,
            }
        }
    });
    use futures::StreamExt;
    let s = first
        .chain(more)
        .map(|t| Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from(t))));
    Response::new(BodyExt::boxed(StreamBody::new(s)))
}

/// The `Sec-WebSocket-Accept` of a key.
pub fn accept_key(key: &str) -> String {
    let d = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        format!("{key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(d.as_ref())
}

/// Writes one WebSocket frame (`mask`: as a client must).
pub async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, opcode: u8, payload: &[u8], mask: bool) {
    let mut head = vec![0x80 | opcode];
    let m = if mask { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => head.push(m | n as u8),
        n if n <= 0xffff => {
            head.push(m | 126);
            head.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            head.push(m | 127);
            head.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let mut body = payload.to_vec();
    if mask {
        let key = [0x12, 0x34, 0x56, 0x78];
        head.extend_from_slice(&key);
        for (i, b) in body.iter_mut().enumerate() {
            *b ^= key[i % 4];
        }
    }
    w.write_all(&head).await.unwrap_or(());
    w.write_all(&body).await.unwrap_or(());
    w.flush().await.unwrap_or(());
}

/// Reads one WebSocket frame: (opcode, payload), unmasked; `None` at the end.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 2];
    r.read_exact(&mut head).await.ok()?;
    let mut len = (head[1] & 0x7f) as u64;
    if len == 126 {
        let mut b = [0u8; 2];
        r.read_exact(&mut b).await.ok()?;
        len = u16::from_be_bytes(b) as u64;
    } else if len == 127 {
        let mut b = [0u8; 8];
        r.read_exact(&mut b).await.ok()?;
        len = u64::from_be_bytes(b);
    }
    let mut mask = [0u8; 4];
    if head[1] & 0x80 != 0 {
        r.read_exact(&mut mask).await.ok()?;
    }
    let mut payload = vec![0u8; len as usize];
    r.read_exact(&mut payload).await.ok()?;
    if head[1] & 0x80 != 0 {
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
    }
    Some((head[0] & 0x0f, payload))
}

/// The error stream's Status for `command` (`exit N` fails with kube's NonZeroExitCode).
fn exit_status(command: &[String]) -> String {
    let code = command
        .first()
        .filter(|c| *c == "exit")
        .and(command.get(1))
        .and_then(|n| n.parse::<i32>().ok())
        .unwrap_or(0);
    if code == 0 {
        r#"{"metadata":{},"status":"Success"}"#.to_string()
    } else {
        format!(
            r#"{{"metadata":{{}},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [exit {code}], exit code {code}","reason":"NonZeroExitCode","details":{{"causes":[{{"reason":"ExitCode","message":"{code}"}}]}}}}"#
        )
    }
}

/// What an exec or attach request asks for: whether it is an exec, the container, the
/// command.
fn remote_command_of(
    req: &Request<Incoming>,
    q: &[(String, String)],
) -> (bool, String, Vec<String>) {
    let path = req.uri().path();
    let container = path.rsplit('/').next().unwrap_or("").to_string();
    let command = q
        .iter()
        .filter(|(k, _)| k == "command")
        .map(|(_, v)| v.clone())
        .collect();
    (path.starts_with("/exec/"), container, command)
}

/// Exec and attach over SPDY/3.1 (`v4.channel.k8s.io`), as kubelets serve them. Streams are
/// known by the order client-go opens them (error, stdin, stdout, stderr, resize: those the
/// query asks for), so the client's compressed header blocks need not be read.
fn spdy_remote_command(mut req: Request<Incoming>) -> Response<Body> {
    let q = query(&req);
    let (exec, container, command) = remote_command_of(&req, &q);
    let flag = |k: &str| get(&q, k) == Some("1");
    let mut kinds = vec!["error"];
    for (k, kind) in [
        ("input", "stdin"),
        ("output", "stdout"),
        ("error", "stderr"),
        ("tty", "resize"),
    ] {
        if flag(k) {
            kinds.push(kind);
        }
    }
    let greeting = if exec {
        format!("exec {}: {}\n", container, command.join(" "))
    } else {
        format!("attached to {container}\n")
    };
    let status = exit_status(&command);
    let on = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(up) = on.await else { return };
        let io = hyper_util::rt::TokioIo::new(up);
        let _ = tokio::time::timeout(
            Duration::from_secs(60),
            spdy_session(io, kinds, greeting, status),
        )
        .await;
    });
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    r.headers_mut()
        .insert("upgrade", "SPDY/3.1".parse().unwrap());
    r.headers_mut()
        .insert("connection", "Upgrade".parse().unwrap());
    r.headers_mut().insert(
        "x-stream-protocol-version",
        "v4.channel.k8s.io".parse().unwrap(),
    );
    r
}

async fn spdy_session<IO: AsyncRead + AsyncWrite + Unpin>(
    io: IO,
    kinds: Vec<&'static str>,
    greeting: String,
    status: String,
) {
    let (mut r, mut w) = tokio::io::split(io);
    let mut zlib_started = false;
    let mut ids: Vec<(u32, &str)> = Vec::new();
    let mut finished = false;
    let stream_of =
        |ids: &Vec<(u32, &str)>, kind: &str| ids.iter().find(|(_, k)| *k == kind).map(|(i, _)| *i);
    loop {
        let mut head = [0u8; 8];
        if r.read_exact(&mut head).await.is_err() {
            return;
        }
        let flags = head[4];
        let len = u32::from_be_bytes([0, head[5], head[6], head[7]]) as usize;
        let mut payload = vec![0u8; len];
        if r.read_exact(&mut payload).await.is_err() {
            return;
        }
        let mut finish = false;
        if head[0] & 0x80 != 0 {
            match u16::from_be_bytes([head[2], head[3]]) {
                1 if payload.len() >= 4 => {
                    let id = u32::from_be_bytes(payload[..4].try_into().unwrap()) & 0x7fff_ffff;
                    let kind = kinds.get(ids.len()).copied().unwrap_or("extra");
                    ids.push((id, kind));
                    let mut body = id.to_be_bytes().to_vec();
                    if !zlib_started {
                        body.extend_from_slice(&[0x78, 0x01]);
                        zlib_started = true;
                    }
                    body.extend_from_slice(&[0x00, 0x04, 0x00, 0xfb, 0xff, 0, 0, 0, 0]);
                    body.extend_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xff]);
                    spdy_control(&mut w, 2, 0, &body).await;
                    if ids.len() == kinds.len() {
                        if let Some(out) = stream_of(&ids, "stdout") {
                            spdy_data(&mut w, out, 0, greeting.as_bytes()).await;
                        }
                        finish = !kinds.contains(&"stdin");
                    }
                }
                6 => spdy_control(&mut w, 6, 0, &payload).await,
                7 => return,
                _ => {}
            }
        } else {
            let id = u32::from_be_bytes(head[..4].try_into().unwrap()) & 0x7fff_ffff;
            if stream_of(&ids, "stdin") == Some(id) {
                if !payload.is_empty() {
                    if let Some(out) = stream_of(&ids, "stdout") {
                        let mut echo = b"stdin: ".to_vec();
                        echo.extend_from_slice(&payload);
                        spdy_data(&mut w, out, 0, &echo).await;
                    }
                }
                finish = flags & 0x01 != 0;
            }
        }
        if finish && !finished {
            finished = true;
            if let Some(e) = stream_of(&ids, "error") {
                spdy_data(&mut w, e, 0, status.as_bytes()).await;
            }
            for kind in ["stdout", "stderr", "error"] {
                if let Some(id) = stream_of(&ids, kind) {
                    spdy_data(&mut w, id, 0x01, &[]).await;
                }
            }
        }
    }
}

async fn remote_command(mut req: Request<Incoming>) -> Response<Body> {
    let is_ws = req
        .headers()
        .get("upgrade")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let offered = req
        .headers()
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|s| s.trim().to_string()))
        .collect::<Vec<_>>();
    let spdy_versions: Vec<String> = req
        .headers()
        .get_all("x-stream-protocol-version")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|s| s.trim().to_string()))
        .collect();
    let spdy = req
        .headers()
        .get("upgrade")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("SPDY/3.1"));
    if spdy && spdy_versions.iter().any(|v| v == "v4.channel.k8s.io") {
        return spdy_remote_command(req);
    }
    // As a real kubelet: WebSocket channel protocols up to v4 (v5 is the API server's).
    if !is_ws || !offered.iter().any(|p| p == "v4.channel.k8s.io") {
        let mut r = Response::new(full(
            "fake kubelet: SPDY v4.channel.k8s.io or WebSocket v4.channel.k8s.io",
        ));
        *r.status_mut() = StatusCode::BAD_REQUEST;
        return r;
    }
    let key = req
        .headers()
        .get("sec-websocket-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let q = query(&req);
    let (exec, container, command) = remote_command_of(&req, &q);
    let stdin = get(&q, "input") == Some("1");
    let on = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(up) = on.await else { return };
        let mut io = hyper_util::rt::TokioIo::new(up);
        let greeting = if exec {
            format!("exec {}: {}\n", container, command.join(" "))
        } else {
            format!("attached to {container}\n")
        };
        let mut out = vec![1u8];
        out.extend_from_slice(greeting.as_bytes());
        write_frame(&mut io, 2, &out, false).await;
        if stdin {
            // stdin comes on channel 0 until the client closes it (v5: [255, 0]).
            while let Some((op, payload)) = read_frame(&mut io).await {
                match (op, payload.first()) {
                    (8, _) => break,
                    (2, Some(0)) => {
                        let mut echo = vec![1u8];
                        echo.extend_from_slice(b"stdin: ");
                        echo.extend_from_slice(&payload[1..]);
                        write_frame(&mut io, 2, &echo, false).await;
                    }
                    (2, Some(255)) => break,
                    _ => {}
                }
            }
        }
        let status = exit_status(&command);
        let mut err = vec![3u8];
        err.extend_from_slice(status.as_bytes());
        write_frame(&mut io, 2, &err, false).await;
        write_frame(&mut io, 8, &1000u16.to_be_bytes(), false).await;
        // Wait (bounded) for the client's close before hanging up.
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            while let Some((op, _)) = read_frame(&mut io).await {
                if op == 8 {
                    break;
                }
            }
        })
        .await;
        let _ = io.shutdown().await;
    });
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert("upgrade", "websocket".parse().unwrap());
    h.insert("connection", "Upgrade".parse().unwrap());
    h.insert("sec-websocket-accept", accept_key(&key).parse().unwrap());
    h.insert(
        "sec-websocket-protocol",
        "v5.channel.k8s.io".parse().unwrap(),
    );
    r
}

/// A SPDY upgrade (`portforward.k8s.io`) accepted; then the SPDY/3.1 side of port-forwarding
/// (every forwarded port echoes what it gets), or, with the request header
/// `X-Fake-Raw-Echo`, the raw bytes echoed.
fn port_forward(mut req: Request<Incoming>) -> Response<Body> {
    let spdy = req
        .headers()
        .get("upgrade")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("SPDY/3.1"));
    if !spdy {
        let mut r = Response::new(full("fake kubelet: port-forward wants SPDY/3.1"));
        *r.status_mut() = StatusCode::BAD_REQUEST;
        return r;
    }
    let echo_raw = req.headers().contains_key("x-fake-raw-echo");
    let on = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(up) = on.await else { return };
        let io = hyper_util::rt::TokioIo::new(up);
        if echo_raw {
            raw_echo(io).await
        } else {
            let _ = tokio::time::timeout(Duration::from_secs(60), spdy_port_forward(io)).await;
        }
    });
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    r.headers_mut()
        .insert("upgrade", "SPDY/3.1".parse().unwrap());
    r.headers_mut()
        .insert("connection", "Upgrade".parse().unwrap());
    r.headers_mut().insert(
        "x-stream-protocol-version",
        "portforward.k8s.io".parse().unwrap(),
    );
    r
}

async fn raw_echo<IO: AsyncRead + AsyncWrite + Unpin>(mut io: IO) {
    let mut buf = vec![0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(30), io.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                if io.write_all(&buf[..n]).await.is_err() {
                    break;
                }
                let _ = io.flush().await;
            }
            _ => break,
        }
    }
}

async fn spdy_control<W: AsyncWrite + Unpin>(w: &mut W, kind: u16, flags: u8, body: &[u8]) {
    let mut f = vec![0x80, 0x03];
    f.extend_from_slice(&kind.to_be_bytes());
    f.push(flags);
    f.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    f.extend_from_slice(body);
    let _ = w.write_all(&f).await;
    let _ = w.flush().await;
}

async fn spdy_data<W: AsyncWrite + Unpin>(w: &mut W, stream: u32, flags: u8, body: &[u8]) {
    let mut f = (stream & 0x7fff_ffff).to_be_bytes().to_vec();
    f.push(flags);
    f.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    f.extend_from_slice(body);
    let _ = w.write_all(&f).await;
    let _ = w.flush().await;
}

/// The kubelet's SPDY/3.1 port-forward server, reduced: every SYN_STREAM is answered with a
/// SYN_REPLY (an empty header block, zlib "stored" blocks so no compressor is needed; the
/// client's header blocks are not read: kubectl opens an error stream, then a data stream,
/// per connection), data on a data stream is echoed back, and the client's FIN on it is
/// answered with FINs on both streams of the pair. PINGs are answered.
async fn spdy_port_forward<IO: AsyncRead + AsyncWrite + Unpin>(io: IO) {
    let (mut r, mut w) = tokio::io::split(io);
    let mut zlib_started = false;
    let mut opened: Vec<u32> = Vec::new();
    loop {
        let mut head = [0u8; 8];
        if r.read_exact(&mut head).await.is_err() {
            return;
        }
        let flags = head[4];
        let len = u32::from_be_bytes([0, head[5], head[6], head[7]]) as usize;
        let mut payload = vec![0u8; len];
        if r.read_exact(&mut payload).await.is_err() {
            return;
        }
        if head[0] & 0x80 != 0 {
            match u16::from_be_bytes([head[2], head[3]]) {
                // SYN_STREAM
                1 if payload.len() >= 4 => {
                    let id = u32::from_be_bytes(payload[..4].try_into().unwrap()) & 0x7fff_ffff;
                    opened.push(id);
                    let mut body = id.to_be_bytes().to_vec();
                    if !zlib_started {
                        body.extend_from_slice(&[0x78, 0x01]);
                        zlib_started = true;
                    }
                    // A non-final stored deflate block holding the u32 header count 0, then
                    // the empty stored block of a sync flush (Go's inflater hands out
                    // what it has at an empty stored block, without reading on).
                    body.extend_from_slice(&[0x00, 0x04, 0x00, 0xfb, 0xff, 0, 0, 0, 0]);
                    body.extend_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xff]);
                    spdy_control(&mut w, 2, 0, &body).await;
                }
                // PING
                6 => spdy_control(&mut w, 6, 0, &payload).await,
                // GOAWAY
                7 => return,
                _ => {}
            }
            continue;
        }
        let id = u32::from_be_bytes(head[..4].try_into().unwrap()) & 0x7fff_ffff;
        let Some(i) = opened.iter().position(|x| *x == id) else {
            continue;
        };
        if i % 2 == 0 {
            continue; // an error stream: the client only closes it
        }
        if !payload.is_empty() {
            spdy_data(&mut w, id, 0, &payload).await;
        }
        if flags & 0x01 != 0 {
            spdy_data(&mut w, id, 0x01, &[]).await;
            spdy_data(&mut w, opened[i - 1], 0x01, &[]).await;
        }
    }
}
