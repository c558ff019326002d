//! The connect subresources against a fake kubelet (`support/kubelet.rs`: TLS with client
//! certificates, the kubelet's log, exec, attach and port-forward endpoints): `kubectl logs`
//! with every option (`-f` streamed), `kubectl exec` / `attach` over WebSocket
//! `v5.channel.k8s.io` (stdin, exit codes), port-forward's WebSocket-tunnelled SPDY with a raw
//! client, `nodes/proxy`, `pods/proxy`, `services/proxy`, discovery, and kube's errors (no host,
//! no node, kubelet unreachable, container name missing, loopback pod addresses).

mod support;

#[path = "support/kubelet.rs"]
mod fake_kubelet;

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PODS: &str = "/api/v1/namespaces/default/pods";

struct Env {
    server: Server,
    kubelet: fake_kubelet::FakeKubelet,
    client: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// A fake kubelet, a server trusting it (and presenting its client certificate), Node `n1`
/// on it, and pods `p` (one container `app`), `multi` (`a`, `b`, init `i`), `u`
/// (unscheduled), `ghost` (on a node that does not exist) and `down` (on a node whose
/// kubelet does not listen).
async fn env() -> Env {
    env_with(|k| {
        vec![
            "--kubelet-certificate-authority".into(),
            k.ca.display().to_string(),
            "--kubelet-client-certificate".into(),
            k.client_cert.display().to_string(),
            "--kubelet-client-key".into(),
            k.client_key.display().to_string(),
        ]
    })
    .await
}

/// [`env`] with the server's `--kubelet-*` flags chosen by `flags`.
async fn env_with(flags: impl Fn(&fake_kubelet::FakeKubelet) -> Vec<String>) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let kubelet = fake_kubelet::start(dir.path()).await;
    let mut args = flags(&kubelet);
    args.extend([
        "--kubelet-preferred-address-types".into(),
        "InternalIP,Hostname".into(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start_with(&args);
    let client = server.client();
    let node = |name: &str, port: u16| {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"addresses": [{"type": "Hostname", "address": "not-resolvable.invalid"},
                                     {"type": "InternalIP", "address": "127.0.0.1"}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}})
    };
    for n in [
        node("n1", kubelet.port),
        node("n-down", support::free_port()),
    ] {
        let r = server
            .json(&client, Method::POST, "/api/v1/nodes", Some(n))
            .await;
        assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    }
    let pod = |name: &str, node: &str, containers: &[&str], init: &[&str]| {
        let cs: Vec<Value> = containers
            .iter()
            .map(|c| json!({"name": c, "image": "busybox"}))
            .collect();
        let is: Vec<Value> = init
            .iter()
            .map(|c| json!({"name": c, "image": "busybox"}))
            .collect();
        let mut spec = json!({"containers": cs});
        if !is.is_empty() {
            spec["initContainers"] = json!(is);
        }
        if !node.is_empty() {
            spec["nodeName"] = json!(node);
        }
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
    };
    for p in [
        pod("p", "n1", &["app"], &[]),
        pod("multi", "n1", &["a", "b"], &["i"]),
        pod("u", "", &["app"], &[]),
        pod("ghost", "n-missing", &["app"], &[]),
        pod("down", "n-down", &["app"], &[]),
    ] {
        let r = server.json(&client, Method::POST, PODS, Some(p)).await;
        assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    }
    Env {
        server,
        kubelet,
        client,
        _dir: dir,
    }
}

async fn get_text(env: &Env, path: &str) -> (StatusCode, String) {
    let r = env
        .client
        .get(format!("{}{path}", env.server.url))
        .send()
        .await
        .unwrap();
    (r.status(), r.text().await.unwrap())
}

async fn get_status(env: &Env, path: &str) -> (StatusCode, Value) {
    let (code, text) = get_text(env, path).await;
    (code, serde_json::from_str(&text).unwrap_or(json!(text)))
}

#[tokio::test(flavor = "multi_thread")]
async fn fake_kubelet_log_paths_with_kubectl() {
    let env = env().await;
    let s = &env.server;
    assert_eq!(
        s.ok(&["logs", "p"]),
        "app line 1\napp line 2\napp line 3\napp line 4\napp line 5\n"
    );
    assert_eq!(s.ok(&["logs", "p", "--tail=2"]), "app line 4\napp line 5\n");
    assert_eq!(
        s.ok(&["logs", "p", "--since=90m"]),
        "app line 4\napp line 5\n"
    );
    let since = chrono::Utc::now() - chrono::Duration::minutes(150);
    let since = since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(
        s.ok(&["logs", "p", &format!("--since-time={since}")]),
        "app line 3\napp line 4\napp line 5\n"
    );
    let stamped = s.ok(&["logs", "p", "--timestamps", "--tail=1"]);
    assert!(stamped.ends_with("Z app line 5\n"), "{stamped}");
    assert_eq!(s.ok(&["logs", "p", "--limit-bytes=14"]), "app line 1\napp");
    assert_eq!(
        s.ok(&["logs", "p", "--previous", "--tail=1"]),
        "app line 5\n"
    );
    assert_eq!(
        s.ok(&["logs", "multi", "-c", "b", "--tail=1"]),
        "b line 5\n"
    );
    assert_eq!(
        s.ok(&["logs", "multi", "-c", "i", "--tail=1"]),
        "i line 5\n"
    );
    // The options as the kubelet got them (kube's encoding: keys sorted).
    let uris: Vec<String> = env
        .kubelet
        .seen("/containerLogs/default/p/app")
        .into_iter()
        .map(|s| s.uri)
        .collect();
    for want in [
        "/containerLogs/default/p/app?tailLines=2",
        "/containerLogs/default/p/app?sinceSeconds=5400",
        &format!(
            "/containerLogs/default/p/app?sinceTime={}",
            since.replace(':', "%3A")
        ),
        "/containerLogs/default/p/app?tailLines=1&timestamps=true",
        "/containerLogs/default/p/app?limitBytes=14",
        "/containerLogs/default/p/app?previous=true&tailLines=1",
    ] {
        assert!(uris.iter().any(|u| u == want), "{want} not in {uris:?}");
    }
    // The client certificate was presented to the kubelet (it requires one).
    assert!(!uris.is_empty());

    // -f: lines arrive while the response is still open.
    let mut child = Command::new("timeout")
        .args(["30", "kubectl", "--kubeconfig"])
        .arg(&s.kubeconfig)
        .args(["logs", "-f", "p", "--tail=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut got = Vec::new();
    while got.last().map(String::as_str) != Some("app follow 3") {
        match rx.recv_timeout(Duration::from_secs(15)) {
            Ok(l) => got.push(l),
            Err(_) => panic!("followed log stalled after {got:?}"),
        }
    }
    assert_eq!(
        got,
        ["app line 5", "app follow 1", "app follow 2", "app follow 3"]
    );
    // Still streaming: kubectl has not exited.
    assert!(child.try_wait().unwrap().is_none());
    stop(child);
    assert!(env
        .kubelet
        .seen("/containerLogs/default/p/app?follow=true")
        .iter()
        .any(|s| s.uri == "/containerLogs/default/p/app?follow=true&tailLines=1"));

    // kube's answers without a kubelet to ask.
    let (code, text) = get_text(&env, &format!("{PODS}/u/log")).await;
    assert_eq!((code, text.as_str()), (StatusCode::NO_CONTENT, ""));
    let (code, body) = get_status(&env, &format!("{PODS}/multi/log")).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["message"],
        "a container name must be specified for pod multi, choose one of: [a b] or one of the init containers: [i]"
    );
    let (code, body) = get_status(&env, &format!("{PODS}/p/log?container=nope")).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(body["message"], "container nope is not valid for pod p");
    let (code, body) = get_status(&env, &format!("{PODS}/ghost/log")).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(body["message"], "nodes \"n-missing\" not found");
    let (code, body) = get_status(&env, &format!("{PODS}/nothere/log")).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(body["message"], "pods \"nothere\" not found");
    let (code, body) = get_status(&env, &format!("{PODS}/down/log")).await;
    assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    let msg = body["message"].as_str().unwrap();
    assert!(
        msg.starts_with("Get \"https://127.0.0.1:")
            && msg.contains("/containerLogs/default/down/app\": dial tcp 127.0.0.1:")
            && msg.ends_with(": connect: connection refused"),
        "{msg}"
    );
    assert!(body.get("reason").is_none(), "{body}");
    // kube's ValidatePodLogOptions.
    let (code, body) = get_status(&env, &format!("{PODS}/p/log?tailLines=-1&limitBytes=0")).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        body["message"],
        "PodLogOptions \"p\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]"
    );
    let (code, body) = get_status(
        &env,
        &format!("{PODS}/p/log?sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z"),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("at most one of `sinceTime` or `sinceSeconds` may be specified"));
    let (code, _) = get_status(&env, &format!("{PODS}/p/log?follow=maybe")).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    // A write to the log is refused.
    let r = env
        .client
        .post(format!("{}{PODS}/p/log", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
}

/// Stops a `timeout ... kubectl` child: `timeout` passes the TERM on to kubectl.
fn stop(child: std::process::Child) -> std::process::Output {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    child.wait_with_output().unwrap()
}

/// An upgrade request over HTTP/1.1 with the admin identity; returns the status line and
/// headers, and the connection for what follows.
async fn upgrade(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (
    String,
    tokio::io::BufReader<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>,
) {
    let read = |f: &str| std::fs::read(server.dir.path().join(f)).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pemfile::certs(&mut &read("ca.crt")[..]) {
        roots.add(c.unwrap()).unwrap();
    }
    let certs: Vec<_> = rustls_pemfile::certs(&mut &read("admin.crt")[..])
        .map(|c| c.unwrap())
        .collect();
    let key = rustls_pemfile::private_key(&mut &read("admin.key")[..])
        .unwrap()
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_client_auth_cert(certs, key)
    .unwrap();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect("127.0.0.1".try_into().unwrap(), tcp)
        .await
        .unwrap();
    let mut io = tokio::io::BufReader::new(tls);
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("Content-Length: 0\r\n\r\n");
    io.get_mut().write_all(head.as_bytes()).await.unwrap();
    let mut response = String::new();
    loop {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(10), async {
            tokio::io::AsyncBufReadExt::read_line(&mut io, &mut line).await
        })
        .await
        .expect("response head within 10 s")
        .unwrap();
        if n == 0 || line == "\r\n" {
            break;
        }
        response.push_str(&line);
    }
    (response, io)
}

/// The JSON body of a non-101 answer to [`upgrade`].
/// An upgrade the server refuses: the response head and its JSON body.
async fn refused(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (String, Value) {
    let (head, mut io) = upgrade(server, method, path, headers).await;
    let body = rest_of_body(&head, &mut io).await;
    (head, body)
}

async fn rest_of_body<R: tokio::io::AsyncRead + Unpin>(head: &str, io: &mut R) -> Value {
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    io.read_exact(&mut body).await.unwrap();
    serde_json::from_slice(&body).unwrap_or(json!(String::from_utf8_lossy(&body)))
}

#[tokio::test(flavor = "multi_thread")]
async fn fake_kubelet_exec_and_attach_with_kubectl() {
    let env = env().await;
    let s = &env.server;
    assert_eq!(
        s.ok(&["exec", "p", "--", "ls", "-l", "/"]),
        "exec app: ls -l /\n"
    );
    assert_eq!(
        s.ok_stdin(&["exec", "-i", "p", "--", "cat"], "hello\n"),
        "exec app: cat\nstdin: hello\n"
    );
    assert_eq!(
        s.ok(&["exec", "multi", "-c", "b", "--", "true"]),
        "exec b: true\n"
    );
    let out = s.kubectl(&["exec", "p", "--", "exit", "3"]);
    assert_eq!(out.status.code(), Some(3), "{}", support::stderr(&out));
    assert_eq!(s.ok(&["attach", "p"]), "attached to app\n");
    // The kubelet saw kube's query (stdin / stdout / stderr as input / output / error) over
    // SPDY: kubectl's v5 WebSocket was translated, as kube's StreamTranslator does.
    let exec = env.kubelet.seen("/exec/default/p/app?command=ls");
    assert_eq!(exec.len(), 1, "{exec:?}");
    assert_eq!(
        exec[0].uri,
        "/exec/default/p/app?command=ls&command=-l&command=%2F&error=1&output=1"
    );
    assert_eq!(exec[0].method, "POST");
    assert_eq!(exec[0].headers["upgrade"], "SPDY/3.1");
    assert_eq!(
        exec[0].headers["x-stream-protocol-version"],
        "v4.channel.k8s.io"
    );
    assert!(exec[0].headers.get("sec-websocket-key").is_none());
    assert_eq!(env.kubelet.seen("/attach/default/p/app").len(), 1);
    // kubectl's own SPDY (its fallback) is passed through to the kubelet.
    let before = env.kubelet.seen("/exec/").len();
    let out = s.kubectl_env(
        &["exec", "-i", "p", "--", "cat"],
        &[("KUBECTL_REMOTE_COMMAND_WEBSOCKETS", "false")],
    );
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert_eq!(env.kubelet.seen("/exec/").len(), before + 1);

    // kube's errors, as the SPDY (POST) and WebSocket (GET) upgrades get them.
    let spdy = [
        ("Connection", "Upgrade"),
        ("Upgrade", "SPDY/3.1"),
        ("X-Stream-Protocol-Version", "v4.channel.k8s.io"),
    ];
    let (head, body) = refused(
        s,
        "POST",
        &format!("{PODS}/u/exec?command=ls&stdout=1"),
        &spdy,
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    assert_eq!(body["message"], "pod u does not have a host assigned");
    let (head, body) = refused(
        s,
        "POST",
        &format!("{PODS}/multi/exec?command=ls&stdout=1"),
        &spdy,
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    assert_eq!(
        body["message"],
        "a container name must be specified for pod multi, choose one of: [a b] or one of the init containers: [i]"
    );
    let (head, body) = refused(
        s,
        "POST",
        &format!("{PODS}/down/exec?command=ls&stdout=1"),
        &spdy,
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 500"), "{head}");
    let msg = body["message"].as_str().unwrap().to_string();
    assert!(
        msg.starts_with("error dialing backend: dial tcp 127.0.0.1:")
            && msg.ends_with(": connect: connection refused"),
        "{msg}"
    );
    let (head, body) = refused(s, "POST", &format!("{PODS}/ghost/attach?stdout=1"), &spdy).await;
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    assert_eq!(body["message"], "nodes \"n-missing\" not found");
    // Not an upgrade at all.
    let r = env
        .client
        .post(format!("{}{PODS}/p/exec?command=ls&stdout=1", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        r.json::<Value>().await.unwrap()["message"],
        "Upgrade request required"
    );
    let err = s.fails(&["exec", "u", "--", "ls"]);
    assert!(err.contains("pod u does not have a host assigned"), "{err}");
    // Translated sessions report a kubelet they cannot reach on the error channel.
    let err = s.fails(&["exec", "down", "--", "ls"]);
    assert!(
        err.contains("error dialing backend: dial tcp 127.0.0.1:")
            && err.contains("connect: connection refused"),
        "{err}"
    );

    // Authorization before any work: kube's verbs on the subresources (GET → get, POST →
    // create); a denied request never reaches the kubelet.
    s.ok(&[
        "create",
        "role",
        "logs-only",
        "--verb=get",
        "--resource=pods,pods/log",
    ]);
    s.ok(&[
        "create",
        "rolebinding",
        "alice-logs",
        "--role=logs-only",
        "--user=alice",
    ]);
    assert_eq!(
        retry_ok(s, &["logs", "p", "--tail=1", "--as", "alice"]),
        "app line 5\n"
    );
    let before = env.kubelet.seen("/exec/").len();
    let err = s.fails(&["exec", "p", "--as", "alice", "--", "ls"]);
    assert!(
        err.contains("User \"alice\" cannot")
            && err
                .contains("resource \"pods/exec\" in API group \"\" in the namespace \"default\""),
        "{err}"
    );
    assert_eq!(env.kubelet.seen("/exec/").len(), before);
    s.ok(&[
        "create",
        "role",
        "exec",
        "--verb=get,create",
        "--resource=pods/exec",
    ]);
    s.ok(&[
        "create",
        "rolebinding",
        "alice-exec",
        "--role=exec",
        "--user=alice",
    ]);
    let out = retry_ok(s, &["exec", "p", "--as", "alice", "--", "id"]);
    assert_eq!(out, "exec app: id\n");
    let err = s.fails(&["attach", "p", "--as", "alice"]);
    assert!(err.contains("resource \"pods/attach\""), "{err}");
}

/// kubectl until it succeeds (RBAC changes reach the authorizer through the watch cache),
/// bounded.
fn retry_ok(s: &Server, args: &[&str]) -> String {
    for _ in 0..50 {
        let out = s.kubectl(args);
        if out.status.success() {
            return support::stdout(&out);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    s.ok(args)
}

#[tokio::test(flavor = "multi_thread")]
async fn port_forward_tunnels_spdy_to_the_kubelet() {
    let env = env().await;
    let s = &env.server;
    let key = "dGhlIHNhbXBsZSBub25jZQ==";
    let (head, mut io) = upgrade(
        s,
        "GET",
        &format!("{PODS}/p/portforward?ports=8080"),
        &[
            ("Connection", "Upgrade"),
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", key),
            ("Sec-WebSocket-Protocol", "SPDY/3.1+portforward.k8s.io"),
            ("X-Fake-Raw-Echo", "1"),
        ],
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains("sec-websocket-protocol: spdy/3.1+portforward.k8s.io"),
        "{head}"
    );
    assert!(head.contains(&fake_kubelet::accept_key(key)), "{head}");
    // SPDY bytes inside binary messages reach the kubelet's SPDY stream and come back.
    fake_kubelet::write_frame(io.get_mut(), 2, b"\x80\x03\x00\x01spdy-bytes", true).await;
    let (op, payload) =
        tokio::time::timeout(Duration::from_secs(10), fake_kubelet::read_frame(&mut io))
            .await
            .unwrap()
            .unwrap();
    assert_eq!(
        (op, payload.as_slice()),
        (2, &b"\x80\x03\x00\x01spdy-bytes"[..])
    );
    fake_kubelet::write_frame(io.get_mut(), 8, &1000u16.to_be_bytes(), true).await;
    let seen = env.kubelet.seen("/portForward/default/p");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].uri, "/portForward/default/p?port=8080");
    assert_eq!(seen[0].headers["upgrade"], "SPDY/3.1");
    assert_eq!(
        seen[0].headers["x-stream-protocol-version"],
        "portforward.k8s.io"
    );
    assert!(seen[0].headers.get("sec-websocket-key").is_none());

    // Plain SPDY is passed through.
    let (head, _io) = upgrade(
        s,
        "POST",
        &format!("{PODS}/p/portforward"),
        &[
            ("Connection", "Upgrade"),
            ("Upgrade", "SPDY/3.1"),
            ("X-Stream-Protocol-Version", "portforward.k8s.io"),
        ],
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let (head, mut io) = upgrade(
        s,
        "POST",
        &format!("{PODS}/u/portforward"),
        &[("Connection", "Upgrade"), ("Upgrade", "SPDY/3.1")],
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    assert_eq!(
        rest_of_body(&head, &mut io).await["message"],
        "pod u does not have a host assigned"
    );

    // kubectl port-forward, WebSocket-tunnelled (kubectl's default) and plain SPDY: bytes
    // to the local port come back through the kubelet's data stream.
    let r = s
        .json(
            &env.client,
            Method::PATCH,
            &format!("{PODS}/p/status"),
            Some(json!({"status": {"phase": "Running"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    for websockets in ["false", "true"] {
        let before = env.kubelet.seen("/portForward/default/p").len();
        let local = support::free_port();
        let mut child = Command::new("timeout")
            .args(["60", "kubectl", "--kubeconfig"])
            .arg(&s.kubeconfig)
            .args([
                "port-forward",
                "pod/p",
                &format!("{local}:8080"),
                "--address=127.0.0.1",
                "-v=6",
            ])
            .env("KUBECTL_PORT_FORWARD_WEBSOCKETS", websockets)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("kubectl port-forward did not start");
        assert!(
            line.contains(&format!("127.0.0.1:{local} -> 8080")),
            "{line}"
        );
        let mut conn = tokio::net::TcpStream::connect(("127.0.0.1", local))
            .await
            .unwrap();
        conn.write_all(b"ping through the kubelet\n").await.unwrap();
        let mut buf = vec![0u8; 25];
        let read = tokio::time::timeout(Duration::from_secs(10), conn.read_exact(&mut buf))
            .await
            .expect("echo within 10 s");
        if let Err(e) = read {
            let out = stop(child);
            panic!(
                "port-forward (websockets {websockets}): {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(&buf, b"ping through the kubelet\n");
        drop(conn);
        let out = stop(child);
        let seen = env.kubelet.seen("/portForward/default/p");
        assert_eq!(
            seen.len(),
            before + 1,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(seen.last().unwrap().headers["upgrade"], "SPDY/3.1");
        // kubectl -v=6 shows which way it went: the WebSocket tunnel, or a SPDY POST.
        let log = String::from_utf8_lossy(&out.stderr);
        let way = if websockets == "true" {
            "tunneling_dialer.go:85] negotiated protocol: portforward.k8s.io"
        } else {
            "\"Response\" verb=\"POST\""
        };
        assert!(log.contains(way), "{log}");
    }
}

/// A non-loopback address of this machine (kube proxies only to global unicast pod IPs).
fn local_global_ip() -> Option<std::net::IpAddr> {
    let sock = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    sock.connect("192.0.2.200:9").ok()?;
    let ip = sock.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[tokio::test(flavor = "multi_thread")]
async fn proxies_and_discovery() {
    let env = env().await;
    let s = &env.server;
    // nodes/proxy → the kubelet, path and query kept.
    assert_eq!(
        s.ok(&[
            "get",
            "--raw",
            "/api/v1/nodes/n1/proxy/metrics/cadvisor?x=1"
        ]),
        "kubelet: GET /metrics/cadvisor?x=1"
    );
    let (code, text) = get_text(&env, "/api/v1/nodes/n1/proxy").await;
    assert_eq!((code, text.as_str()), (StatusCode::OK, "kubelet: GET /?"));
    let (code, body) = get_status(&env, "/api/v1/nodes/nope/proxy/x").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(body["message"], "nodes \"nope\" not found");
    let (code, body) = get_status(&env, "/api/v1/nodes/n-down/proxy/x").await;
    assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .starts_with("error trying to reach service: dial tcp 127.0.0.1:"));

    // pods/proxy: kube refuses loopback (and missing) pod addresses.
    let (code, body) = get_status(&env, &format!("{PODS}/p:80/proxy/")).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(body["message"], "address not allowed");
    match local_global_ip() {
        Some(ip) => {
            let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
            let port = listener.local_addr().unwrap().port();
            tokio::spawn(async move {
                loop {
                    let Ok((mut c, _)) = listener.accept().await else {
                        return;
                    };
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 4096];
                        let n = c.read(&mut buf).await.unwrap_or(0);
                        let req = String::from_utf8_lossy(&buf[..n]).to_string();
                        let line = req.lines().next().unwrap_or("").to_string();
                        let body = format!("backend: {line}");
                        let _ = c
                            .write_all(
                                format!(
                                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nX-Backend: yes\r\nConnection: close\r\n\r\n{body}",
                                    body.len()
                                )
                                .as_bytes(),
                            )
                            .await;
                    });
                }
            });
            let r = s
                .json(
                    &env.client,
                    Method::PATCH,
                    &format!("{PODS}/p/status"),
                    Some(json!({"status": {"podIP": ip.to_string()}})),
                )
                .await;
            assert_eq!(r.code, StatusCode::OK, "{}", r.body);
            let (code, text) = get_text(&env, &format!("{PODS}/p:{port}/proxy/hello?a=b")).await;
            assert_eq!(code, StatusCode::OK);
            assert_eq!(text, "backend: GET /hello?a=b HTTP/1.1");
            // services/proxy through the service's Endpoints.
            let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"ports": [{"name": "http", "port": 80, "targetPort": port}]}});
            let r = s
                .json(
                    &env.client,
                    Method::POST,
                    "/api/v1/namespaces/default/services",
                    Some(svc),
                )
                .await;
            assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
            // kube's service ResourceLocation: the Service's Endpoints (none yet: their 404).
            let (code, body) =
                get_status(&env, "/api/v1/namespaces/default/services/web:http/proxy/x").await;
            assert_eq!(code, StatusCode::NOT_FOUND, "{body}");
            assert_eq!(body["message"], "endpoints \"web\" not found");
            let endpoints = "/api/v1/namespaces/default/endpoints";
            let client = &env.client;
            let put_endpoints = |subsets: Value| {
                let ep = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
                    "subsets": subsets});
                async move {
                    let _ = s
                        .json(client, Method::DELETE, &format!("{endpoints}/web"), None)
                        .await;
                    let r = s.json(client, Method::POST, endpoints, Some(ep)).await;
                    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
                }
            };
            put_endpoints(json!([])).await;
            let (code, body) =
                get_status(&env, "/api/v1/namespaces/default/services/web:http/proxy/x").await;
            assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(
                body["message"],
                "no endpoints available for service \"web\""
            );
            // An address that names no pod of the namespace is not used.
            put_endpoints(json!([{"addresses": [{"ip": ip.to_string()}],
                                  "ports": [{"name": "http", "port": port}]}]))
            .await;
            let (code, body) =
                get_status(&env, "/api/v1/namespaces/default/services/web:http/proxy/x").await;
            assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(
                body["message"],
                "no endpoints available for service \"web:http\""
            );
            // The pod's address (with another that is no pod's, never picked).
            let r = s
                .json(
                    &env.client,
                    Method::PATCH,
                    &format!("{PODS}/p/status"),
                    Some(json!({"status": {"podIPs": [{"ip": ip.to_string()}]}})),
                )
                .await;
            assert_eq!(r.code, StatusCode::OK, "{}", r.body);
            put_endpoints(json!([
                {"addresses": [{"ip": "10.255.0.9"}], "ports": [{"name": "http", "port": port}]},
                {"addresses": [
                    {"ip": ip.to_string(), "targetRef": {"kind": "Pod", "namespace": "default", "name": "p"}},
                    {"ip": "10.255.0.8", "targetRef": {"kind": "Pod", "namespace": "default", "name": "p"}}],
                 "ports": [{"name": "http", "port": port}]}]))
            .await;
            for _ in 0..8 {
                assert_eq!(
                    s.ok(&[
                        "get",
                        "--raw",
                        "/api/v1/namespaces/default/services/web:http/proxy/svc"
                    ]),
                    "backend: GET /svc HTTP/1.1"
                );
            }
            // A port number is the Service port's name; no port is the unnamed one.
            let (code, body) =
                get_status(&env, "/api/v1/namespaces/default/services/web:81/proxy/x").await;
            assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(
                body["message"],
                "no service port 81 found for service \"web\""
            );
            let (code, body) =
                get_status(&env, "/api/v1/namespaces/default/services/web/proxy/x").await;
            assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(
                body["message"],
                "no endpoints available for service \"web\""
            );
            let (code, body) =
                get_status(&env, "/api/v1/namespaces/default/services/nope:80/proxy/x").await;
            assert_eq!(code, StatusCode::NOT_FOUND);
            assert_eq!(body["message"], "services \"nope\" not found");
            let (code, body) =
                get_status(&env, "/api/v1/namespaces/default/services/a:b:c:d/proxy/x").await;
            assert_eq!(code, StatusCode::BAD_REQUEST);
            assert_eq!(body["message"], "invalid service request \"a:b:c:d\"");
            // An ExternalName Service has no Endpoints.
            let ext = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
                "spec": {"type": "ExternalName", "externalName": "example.com"}});
            let r = s
                .json(
                    &env.client,
                    Method::POST,
                    "/api/v1/namespaces/default/services",
                    Some(ext),
                )
                .await;
            assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
            let (code, body) =
                get_status(&env, "/api/v1/namespaces/default/services/ext/proxy/x").await;
            assert_eq!(code, StatusCode::NOT_FOUND);
            assert_eq!(body["message"], "endpoints \"ext\" not found");
            let r = env
                .client
                .post(format!(
                    "{}/api/v1/namespaces/default/services/web:80/proxy/post",
                    s.url
                ))
                .body("payload")
                .send()
                .await
                .unwrap();
            assert_eq!(r.headers()["x-backend"], "yes");
            assert_eq!(r.text().await.unwrap(), "backend: POST /post HTTP/1.1");
        }
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "no non-loopback address for the pods/proxy backend"
            );
            eprintln!("skipping pods/proxy and services/proxy: no non-loopback address");
        }
    }

    // Discovery lists the connect subresources as kube does.
    let r = s.json(&env.client, Method::GET, "/api/v1", None).await;
    let names: Vec<&str> = r.body["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // kube's /api/v1 order: a resource, then its subresources by name.
    let pods: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with("pods/") || *n == "pods")
        .collect();
    assert_eq!(
        pods,
        [
            "pods",
            "pods/attach",
            "pods/binding",
            "pods/ephemeralcontainers",
            "pods/eviction",
            "pods/exec",
            "pods/log",
            "pods/portforward",
            "pods/proxy",
            "pods/resize",
            "pods/status"
        ],
        "{names:?}"
    );
    for (a, b) in [("nodes", "nodes/proxy"), ("services", "services/proxy")] {
        let at = names.iter().position(|n| *n == a).unwrap();
        assert_eq!(names[at + 1], b, "{names:?}");
    }
    let find = |n: &str| {
        r.body["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        find("pods/exec"),
        json!({"name": "pods/exec", "singularName": "", "namespaced": true, "kind": "PodExecOptions", "verbs": ["create", "get"]})
    );
    assert_eq!(find("pods/log")["verbs"], json!(["get"]));
    // Aggregated discovery (v2) has them too, with their kinds.
    let r = env
        .client
        .get(format!("{}/api", s.url))
        .header(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )
        .send()
        .await
        .unwrap();
    let agg: Value = r.json().await.unwrap();
    let pods = agg["items"][0]["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "pods")
        .cloned()
        .unwrap();
    let exec = pods["subresources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["subresource"] == "exec")
        .cloned()
        .unwrap();
    assert_eq!(
        exec,
        json!({"subresource": "exec", "responseKind": {"group": "", "version": "v1", "kind": "PodExecOptions"}, "verbs": ["create", "get"]})
    );
    assert_eq!(find("nodes/proxy")["kind"], "NodeProxyOptions");
    assert_eq!(
        find("services/proxy")["verbs"],
        json!(["create", "delete", "get", "patch", "update"])
    );

    // The OpenAPI documents carry the connect operations and pods/log as upstream's v1.33.1
    // does (operation ids per method; the whole operations are compared with the oracle by
    // tests/openapi_docs.rs).
    let v2 = s.json(&env.client, Method::GET, "/openapi/v2", None).await;
    let v3 = s
        .json(&env.client, Method::GET, "/openapi/v3/api/v1", None)
        .await;
    assert_eq!(v3.code, StatusCode::OK);
    let oracle = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/kubernetes-openapi/swagger-v1.33.1.json"
    ))
    .ok()
    .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    let ids = |item: &Value| -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = item
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(m, _)| *m != "parameters")
            .map(|(m, op)| {
                (
                    m.clone(),
                    op["operationId"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        out.sort();
        out
    };
    let ns = "/api/v1/namespaces/{namespace}";
    let connect_paths = [
        format!("{ns}/pods/{{name}}/exec"),
        format!("{ns}/pods/{{name}}/attach"),
        format!("{ns}/pods/{{name}}/portforward"),
        format!("{ns}/pods/{{name}}/log"),
        format!("{ns}/pods/{{name}}/proxy"),
        format!("{ns}/pods/{{name}}/proxy/{{path}}"),
        format!("{ns}/services/{{name}}/proxy"),
        format!("{ns}/services/{{name}}/proxy/{{path}}"),
        "/api/v1/nodes/{name}/proxy".to_string(),
        "/api/v1/nodes/{name}/proxy/{path}".to_string(),
    ];
    for path in &connect_paths {
        let ours = ids(&v2.body["paths"][path]);
        assert!(!ours.is_empty(), "{path} missing from /openapi/v2");
        assert_eq!(
            ids(&v3.body["paths"][path]),
            ours,
            "{path} in /openapi/v3/api/v1"
        );
        if let Some(up) = &oracle {
            assert_eq!(ours, ids(&up["paths"][path]), "{path}");
        }
    }
    let exec = &v2.body["paths"][format!("{ns}/pods/{{name}}/exec")];
    assert_eq!(
        exec["get"]["operationId"],
        "connectCoreV1GetNamespacedPodExec"
    );
    let names: Vec<&str> = exec["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "command",
            "container",
            "name",
            "namespace",
            "stderr",
            "stdin",
            "stdout",
            "tty"
        ]
    );
    assert_eq!(
        v2.body["paths"][format!("{ns}/pods/{{name}}/log")]["get"]["operationId"],
        "readCoreV1NamespacedPodLog"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_requests_are_admitted() {
    let mut env = env().await;
    env.server
        .extra_args
        .extend(["--enable-admission-plugins".into(), "AlwaysDeny".into()]);
    env.server.restart();
    let s = &env.server;
    let spdy = [
        ("Connection", "Upgrade"),
        ("Upgrade", "SPDY/3.1"),
        ("X-Stream-Protocol-Version", "v4.channel.k8s.io"),
    ];
    for sub in [
        "exec?command=ls&stdout=1",
        "attach?stdout=1",
        "portforward?ports=80",
    ] {
        let (head, body) = refused(s, "POST", &format!("{PODS}/p/{sub}"), &spdy).await;
        assert!(head.starts_with("HTTP/1.1 403"), "{sub}: {head}");
        assert_eq!(
            body["message"],
            "pods \"p\" is forbidden: admission control is denying all modifications"
        );
    }
    let (code, body) = get_status(&env, "/api/v1/nodes/n1/proxy/x").await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    // The log is a plain read: not admitted.
    assert_eq!(s.ok(&["logs", "p", "--tail=1"]), "app line 5\n");
    assert!(env.kubelet.seen("/exec/").is_empty());
    assert!(env.kubelet.seen("/x").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn kubelet_trust_and_identity() {
    // A CA that did not sign the kubelet's certificate: refused, unless the request asks
    // for insecureSkipTLSVerifyBackend.
    let other = tempfile::tempdir().unwrap();
    let stranger = fake_kubelet::start(other.path()).await;
    let env = env_with(|k| {
        vec![
            "--kubelet-certificate-authority".into(),
            stranger.ca.display().to_string(),
            "--kubelet-client-certificate".into(),
            k.client_cert.display().to_string(),
            "--kubelet-client-key".into(),
            k.client_key.display().to_string(),
        ]
    })
    .await;
    let (code, body) = get_status(&env, &format!("{PODS}/p/log")).await;
    assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert_eq!(
        body["message"],
        format!(
            "Get \"https://127.0.0.1:{}/containerLogs/default/p/app\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            env.kubelet.port
        )
    );
    assert!(env.kubelet.seen("/containerLogs/").is_empty());
    assert_eq!(
        env.server.ok(&[
            "logs",
            "p",
            "--tail=1",
            "--insecure-skip-tls-verify-backend"
        ]),
        "app line 5\n"
    );
    drop(env);

    // No CA: the kubelet's certificate is not verified (kube's default); no client
    // certificate: the kubelet (which requires one) refuses the handshake.
    let env = env_with(|_| vec![]).await;
    let (code, body) = get_status(&env, &format!("{PODS}/p/log")).await;
    assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with(&format!(
        "Get \"https://127.0.0.1:{}/containerLogs/default/p/app\": ",
        env.kubelet.port
    )));
    assert!(env.kubelet.seen("/containerLogs/").is_empty());
}
