//! Test support: start the real `rafter` binary on a free 127.0.0.1 port with a temporary data
//! folder, drive it with kubectl or an HTTPS client, kill -9 and restart it. Every wait is
//! bounded; the process is killed when the handle drops.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub url: String,
    pub kubeconfig: PathBuf,
    /// The flags the binary gets besides the data folder and address (a restart uses them
    /// as they are then).
    pub extra_args: Vec<String>,
    /// A command the binary runs under (e.g. `prlimit --nofile=256:256`).
    wrapper: Vec<String>,
    /// Where the server's stderr goes (inherited when unset).
    pub stderr_path: Option<PathBuf>,
}

/// An HTTP/1.1-only client with the admin identity (benches: one connection per writer, as
/// load generators open them).
pub fn http1_client(server: &Server) -> reqwest::Client {
    admin_client_builder(server.dir.path())
        .http1_only()
        .timeout(Duration::from_secs(300))
        .build()
        .unwrap()
}

/// A client builder with the admin identity of data folder `dir` (`ca.crt`, `admin.crt`,
/// `admin.key`), trusting only that CA.
pub fn admin_client_builder(dir: &Path) -> reqwest::ClientBuilder {
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let mut pem = read("admin.crt");
    pem.extend_from_slice(&read("admin.key"));
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&read("ca.crt")).unwrap())
        .identity(reqwest::Identity::from_pem(&pem).unwrap())
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    pub fn start_with(extra: &[&str]) -> Server {
        Server::start_wrapped(&[], extra, false)
    }

    /// Starts the binary under `wrapper` (empty: directly); with `capture_stderr` its stderr
    /// goes to `stderr_path` in the data folder's parent.
    pub fn start_wrapped(wrapper: &[&str], extra: &[&str], capture_stderr: bool) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let stderr_path = capture_stderr.then(|| dir.path().join("stderr.log"));
        let mut s = Server {
            child: None,
            kubeconfig: dir.path().join("admin.kubeconfig"),
            dir,
            port,
            url: format!("https://127.0.0.1:{port}"),
            extra_args: extra.iter().map(|s| s.to_string()).collect(),
            wrapper: wrapper.iter().map(|s| s.to_string()).collect(),
            stderr_path,
        };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        // `RAFTER_TEST_BIN` runs another build of the binary (benches compare builds).
        let bin = std::env::var("RAFTER_TEST_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_rafter").to_string());
        let mut cmd = match self.wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        // Its own process group, killed whole: a wrapper that forks (faketime does) must
        // not leave the server behind.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let stderr = match &self.stderr_path {
            Some(p) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .expect("stderr log"),
            ),
            None => Stdio::inherit(),
        };
        let mut child = cmd
            .arg("serve")
            .arg("--data-dir")
            .arg(self.dir.path())
            .arg("--listen")
            .arg(format!("127.0.0.1:{}", self.port))
            .args(&self.extra_args)
            // The root CA publisher writes a ConfigMap into every namespace, which the
            // tests that count or watch ConfigMaps do not expect; tests of it (and of
            // quotas) turn every loop on with `--controllers *`.
            .args(
                (!self
                    .extra_args
                    .iter()
                    .any(|a| a.starts_with("--controllers")))
                .then_some(["--controllers", "*,-root-ca-cert-publisher"])
                .into_iter()
                .flatten(),
            )
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start rafter");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("kubeconfig written") {
                    let _ = tx.send(());
                }
            }
        });
        self.child = Some(child);
        rx.recv_timeout(Duration::from_secs(60))
            .expect("rafter did not start within 60 s");
        self.wait_ready();
    }

    /// Polls /readyz until it answers ok (bounded).
    pub fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = self.kubectl(&["get", "--raw", "/readyz"]);
            if out.status.success() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "rafter not ready: {}",
                stderr(&out)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Sends SIGTERM (graceful shutdown) without waiting.
    pub fn sigterm(&self) {
        if let Some(c) = &self.child {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(c.id().to_string())
                .status();
        }
    }

    /// Process id of the running server (for RSS figures in benchmarks).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", c.id())])
                .stderr(Stdio::null())
                .status();
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn restart(&mut self) {
        self.kill9();
        self.spawn();
    }

    /// Restarts the binary under another `wrapper` (e.g. `faketime -f +25h`), same folder and
    /// flags.
    pub fn restart_wrapped(&mut self, wrapper: &[&str]) {
        self.kill9();
        self.wrapper = wrapper.iter().map(|s| s.to_string()).collect();
        self.spawn();
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        kubectl_env(&self.kubeconfig, args, &[])
    }

    pub fn kubectl_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        kubectl_env(&self.kubeconfig, args, env)
    }

    /// Runs kubectl and returns stdout, panicking with stderr on failure.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{}",
            stderr(&out),
            stdout(&out)
        );
        stdout(&out)
    }

    /// Runs kubectl expecting failure; returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            !out.status.success(),
            "kubectl {args:?} unexpectedly succeeded: {}",
            stdout(&out)
        );
        stderr(&out)
    }

    /// Runs kubectl with stdin.
    pub fn ok_stdin(&self, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            stderr(&out)
        );
        stdout(&out)
    }

    /// An HTTPS client that trusts the server's CA and presents no certificate.
    pub fn anonymous_client(&self) -> reqwest::Client {
        let ca = std::fs::read(self.dir.path().join("ca.crt")).unwrap();
        reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap()
    }

    /// An HTTPS client with the admin identity.
    pub fn client(&self) -> reqwest::Client {
        self.client_builder().build().unwrap()
    }

    /// The builder of [`Server::client`], for tests that change a setting.
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        let read = |f: &str| std::fs::read(self.dir.path().join(f)).unwrap();
        let mut pem = read("admin.crt");
        pem.extend_from_slice(&read("admin.key"));
        reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&read("ca.crt")).unwrap())
            .identity(reqwest::Identity::from_pem(&pem).unwrap())
            .timeout(Duration::from_secs(30))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

pub fn kubectl_env(kubeconfig: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.arg("60")
        .arg("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env("KUBECTL_INTERACTIVE_DELETE", "false");
    cmd.output().expect("run kubectl")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A response: code, headers and the body as JSON (a JSON string when it is not JSON).
pub struct Reply {
    pub code: reqwest::StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: serde_json::Value,
}

impl Server {
    /// One HTTPS request with the admin identity; `body` is sent as is with `ctype`.
    pub async fn send(
        &self,
        client: &reqwest::Client,
        method: reqwest::Method,
        path: &str,
        ctype: &str,
        body: Option<Vec<u8>>,
    ) -> Reply {
        let mut req = client.request(method, format!("{}{}", self.url, path));
        if let Some(b) = body {
            req = req.header("content-type", ctype).body(b);
        }
        let resp = req.send().await.expect("request");
        let code = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        Reply {
            code,
            headers,
            body,
        }
    }

    /// A JSON request.
    pub async fn json(
        &self,
        client: &reqwest::Client,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Reply {
        let ctype = if method == reqwest::Method::PATCH {
            "application/merge-patch+json"
        } else {
            "application/json"
        };
        self.send(
            client,
            method,
            path,
            ctype,
            body.map(|b| b.to_string().into_bytes()),
        )
        .await
    }
}

/// A Kubernetes protobuf body as client-go writes it: "k8s\0" and a runtime.Unknown envelope
/// (gogo writes the empty strings too) around the object encoded with the `k8s-pb` bindings.
pub fn pb_envelope(api_version: &str, kind: &str, obj: &impl prost014::Message) -> Vec<u8> {
    use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
    use prost014::Message;
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(obj.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\0".to_vec();
    out.extend(unknown.encode_to_vec());
    out
}

pub type Handler = std::sync::Arc<dyn Fn(&str, &[u8]) -> String + Send + Sync>;

/// What a [`tls_server_with_status`] answers: the status code and the body.
pub type StatusHandler = std::sync::Arc<dyn Fn(&str, &[u8]) -> (u16, String) + Send + Sync>;

/// An HTTPS server on loopback with its own CA (written to `<name>-ca.crt` in `dir`); every
/// request is answered with `handler(path, body)` as JSON. Returns the port.
pub async fn tls_server(dir: &Path, name: &str, handler: Handler) -> u16 {
    tls_server_with_status(
        dir,
        name,
        std::sync::Arc::new(move |path: &str, body: &[u8]| (200, handler(path, body))),
    )
    .await
}

/// [`tls_server`] whose handler also picks the status code.
pub async fn tls_server_with_status(dir: &Path, name: &str, handler: StatusHandler) -> u16 {
    tls_server_async(
        dir,
        name,
        &["127.0.0.1"],
        std::sync::Arc::new(
            move |path: String, _headers: http::HeaderMap, body: bytes::Bytes| {
                let out = handler(&path, &body);
                Box::pin(async move { out })
            },
        ),
    )
    .await
}

/// What a [`tls_server_async`] answers, possibly after a while.
pub type AsyncHandler = std::sync::Arc<
    dyn Fn(
            String,
            http::HeaderMap,
            bytes::Bytes,
        ) -> futures::future::BoxFuture<'static, (u16, String)>
        + Send
        + Sync,
>;

/// An HTTPS server on 127.0.0.1 with its own CA (written to `<name>-ca.crt` in `dir`) and a
/// certificate for `sans` (IP addresses or DNS names); every request is answered with the
/// status code and JSON body `handler(path, headers, body)` resolves to. Returns the port.
pub async fn tls_server_async(dir: &Path, name: &str, sans: &[&str], handler: AsyncHandler) -> u16 {
    use http_body_util::BodyExt;
    use std::sync::Arc;
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut leaf = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    leaf.subject_alt_names = sans
        .iter()
        .map(|s| match s.parse() {
            Ok(ip) => rcgen::SanType::IpAddress(ip),
            Err(_) => rcgen::SanType::DnsName((*s).try_into().unwrap()),
        })
        .collect();
    let leaf = leaf.signed_by(&key, &ca, &ca_key).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let handler = handler.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let handler = handler.clone();
                        async move {
                            let path = req.uri().path().to_string();
                            let headers = req.headers().clone();
                            let body = req.into_body().collect().await.unwrap().to_bytes();
                            let (code, out) = handler(path, headers, body).await;
                            let mut resp = hyper::Response::new(http_body_util::Full::new(
                                bytes::Bytes::from(out),
                            ));
                            *resp.status_mut() = hyper::StatusCode::from_u16(code)
                                .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
                            Ok::<_, std::convert::Infallible>(resp)
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    std::fs::write(dir.join(format!("{name}-ca.crt")), ca.pem()).unwrap();
    port
}

/// client-go's Accept for aggregated discovery when it is configured for protobuf.
pub const AGGREGATED_PB_ACCEPT: &str = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/// An aggregated discovery answer in protobuf (`k8s\0` + runtime.Unknown of
/// `apidiscovery.k8s.io/<version>` `APIGroupDiscoveryList`), decoded with k8s-pb's v2 types
/// (v2beta1 has the same layout) and rendered as the JSON kube's JSON serializer writes for
/// it (unset fields omitted where Go omits them; empty lists kept as the wire cannot tell).
pub fn aggregated_discovery_from_pb(body: &[u8], version: &str) -> serde_json::Value {
    use k8s_pb::api::apidiscovery::v2 as d;
    use k8s_pb::apimachinery::pkg::apis::meta::v1::GroupVersionKind;
    use k8s_pb::apimachinery::pkg::runtime::Unknown;
    use prost014::Message;
    use serde_json::{json, Map, Value};
    let rest = body.strip_prefix(b"k8s\0").expect("k8s\\0 prefix");
    let u = Unknown::decode(rest).expect("runtime.Unknown");
    let tm = u.type_meta.expect("typeMeta");
    assert_eq!(
        tm.api_version.as_deref(),
        Some(format!("apidiscovery.k8s.io/{version}").as_str())
    );
    assert_eq!(tm.kind.as_deref(), Some("APIGroupDiscoveryList"));
    let list = d::APIGroupDiscoveryList::decode(u.raw.unwrap_or_default().as_slice())
        .expect("APIGroupDiscoveryList");
    let gvk = |g: &GroupVersionKind| {
        json!({"group": g.group.clone().unwrap_or_default(),
               "version": g.version.clone().unwrap_or_default(),
               "kind": g.kind.clone().unwrap_or_default()})
    };
    let put_list = |m: &mut Map<String, Value>, k: &str, v: &[String]| {
        if !v.is_empty() {
            m.insert(k.into(), json!(v));
        }
    };
    let items: Vec<Value> = list
        .items
        .iter()
        .map(|g| {
            let versions: Vec<Value> = g
                .versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = v
                        .resources
                        .iter()
                        .map(|r| {
                            let mut m = Map::new();
                            m.insert(
                                "resource".into(),
                                json!(r.resource.clone().unwrap_or_default()),
                            );
                            if let Some(k) = &r.response_kind {
                                m.insert("responseKind".into(), gvk(k));
                            }
                            m.insert("scope".into(), json!(r.scope.clone().unwrap_or_default()));
                            m.insert(
                                "singularResource".into(),
                                json!(r.singular_resource.clone().unwrap_or_default()),
                            );
                            m.insert("verbs".into(), json!(r.verbs));
                            put_list(&mut m, "shortNames", &r.short_names);
                            put_list(&mut m, "categories", &r.categories);
                            let subs: Vec<Value> = r
                                .subresources
                                .iter()
                                .map(|s| {
                                    let mut m = Map::new();
                                    m.insert(
                                        "subresource".into(),
                                        json!(s.subresource.clone().unwrap_or_default()),
                                    );
                                    if let Some(k) = &s.response_kind {
                                        m.insert("responseKind".into(), gvk(k));
                                    }
                                    if !s.accepted_types.is_empty() {
                                        m.insert(
                                            "acceptedTypes".into(),
                                            s.accepted_types.iter().map(gvk).collect(),
                                        );
                                    }
                                    m.insert("verbs".into(), json!(s.verbs));
                                    Value::Object(m)
                                })
                                .collect();
                            if !subs.is_empty() {
                                m.insert("subresources".into(), Value::Array(subs));
                            }
                            Value::Object(m)
                        })
                        .collect();
                    let mut m = Map::new();
                    m.insert(
                        "version".into(),
                        json!(v.version.clone().unwrap_or_default()),
                    );
                    if !resources.is_empty() {
                        m.insert("resources".into(), Value::Array(resources));
                    }
                    if let Some(f) = v.freshness.as_deref().filter(|f| !f.is_empty()) {
                        m.insert("freshness".into(), json!(f));
                    }
                    Value::Object(m)
                })
                .collect();
            let name = g
                .metadata
                .as_ref()
                .and_then(|m| m.name.clone())
                .unwrap_or_default();
            let mut m = Map::new();
            m.insert(
                "metadata".into(),
                if name.is_empty() {
                    json!({})
                } else {
                    json!({"name": name})
                },
            );
            if !versions.is_empty() {
                m.insert("versions".into(), Value::Array(versions));
            }
            Value::Object(m)
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList",
           "apiVersion": format!("apidiscovery.k8s.io/{version}"),
           "metadata": {}, "items": items})
}

/// `v` without what protobuf cannot tell from unset: nulls, empty lists and empty maps.
pub fn strip_empty(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), strip_empty(v)))
                .filter(|(_, v)| match v {
                    Value::Null => false,
                    Value::Array(a) => !a.is_empty(),
                    _ => true,
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_empty).collect()),
        other => other.clone(),
    }
}
