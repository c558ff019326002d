//! The HTTPS edge under abuse, against the real binary: idle and half-handshaken connections
//! are closed by the handshake deadline while normal requests keep working; at the descriptor
//! limit the accept loop backs off (the log stays small) and recovers; a huge watch
//! `timeoutSeconds` is served, never a panic.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use support::Server;

/// Raises this process's descriptor limit when it is too low for the test (no unsafe code:
/// prlimit(1) on our own pid).
fn ensure_fd_limit(n: u64) {
    let _ = std::process::Command::new("prlimit")
        .arg(format!("--pid={}", std::process::id()))
        .arg(format!("--nofile={n}:{n}"))
        .status();
}

/// Whether the server closed its side (EOF or reset), without blocking.
fn closed(s: &mut TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(_) => true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_half_handshaken_connections_are_closed() {
    ensure_fd_limit(8192);
    let s = Server::start();
    let c = s.client();
    let addr = format!("127.0.0.1:{}", s.port);
    let mut conns = Vec::new();
    for i in 0..2000 {
        let mut t = TcpStream::connect(&addr).expect("connect");
        if i % 2 == 1 {
            // A TLS record header promising a 512-byte ClientHello that never comes.
            t.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]).unwrap();
        }
        conns.push(t);
    }
    let opened = Instant::now();
    // Normal requests keep working meanwhile.
    for _ in 0..5 {
        let r = s.json(&c, Method::GET, "/api/v1/namespaces", None).await;
        assert_eq!(r.code, StatusCode::OK);
    }
    let deadline = opened + Duration::from_secs(30);
    loop {
        let mut open = 0;
        for t in conns.iter_mut() {
            if !closed(t) {
                open += 1;
            }
        }
        if open == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{open} of 2000 connections still open after {:?}",
            opened.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let r = s.json(&c, Method::GET, "/api/v1/namespaces", None).await;
    assert_eq!(r.code, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_backs_off_at_the_descriptor_limit() {
    ensure_fd_limit(8192);
    let s = Server::start_wrapped(&["prlimit", "--nofile=300:300"], &[], true);
    let c = s.client();
    let addr = format!("127.0.0.1:{}", s.port);
    let log = s.stderr_path.clone().unwrap();
    let before = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let mut conns: Vec<TcpStream> = (0..600)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let grown = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) - before;
    assert!(grown < 16 * 1024, "the log grew by {grown} bytes in 3 s");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        text.contains("accept failed"),
        "the descriptor limit was never reached: {text}"
    );
    conns.clear();
    // Recovers once descriptors are free again.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ok = tokio::time::timeout(
            Duration::from_secs(5),
            s.json(&c, Method::GET, "/api/v1/namespaces", None),
        )
        .await
        .is_ok_and(|r| r.code == StatusCode::OK);
        if ok {
            break;
        }
        assert!(Instant::now() < deadline, "no recovery after the fd storm");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn huge_watch_timeout_is_served() {
    let s = Server::start();
    let c = s.client();
    let resp = c
        .get(format!(
            "{}/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=9223372036854775807",
            s.url
        ))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    drop(resp);
    let r = s.json(&c, Method::GET, "/readyz", None).await;
    assert_eq!(r.code, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_inflight_answers_429() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "tok-alice,alice,1\n").unwrap();
    let s = Server::start_with(&[
        "--token-auth-file",
        tokens.to_str().unwrap(),
        "--max-requests-inflight",
        "1",
        // The plain in-flight filter (priority and fairness replaces it by default).
        "--enable-priority-and-fairness",
        "false",
        // alice needs rights, and system:masters would be exempt from the budget.
        "--authorization-mode",
        "AlwaysAllow",
    ]);
    let alice = s.anonymous_client();
    let get = |path: &str| {
        alice
            .get(format!("{}{path}", s.url))
            .bearer_auth("tok-alice")
            .send()
    };
    // A read that waits (a future resourceVersion: up to 3 s, then 504) holds the one slot.
    let slow = tokio::spawn(
        alice
            .get(format!(
                "{}/api/v1/namespaces/default/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan",
                s.url
            ))
            .bearer_auth("tok-alice")
            .send(),
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r = get("/api/v1/namespaces").await.unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "1");
    assert_eq!(
        r.text().await.unwrap(),
        "Too many requests, please try again later.\n"
    );
    // Watches and system:masters are exempt.
    let w = alice
        .get(format!(
            "{}/api/v1/namespaces?watch=1&timeoutSeconds=1",
            s.url
        ))
        .bearer_auth("tok-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(w.status(), StatusCode::OK);
    let r = s
        .json(&s.client(), Method::GET, "/api/v1/namespaces", None)
        .await;
    assert_eq!(r.code, StatusCode::OK);
    assert_eq!(
        slow.await.unwrap().unwrap().status(),
        StatusCode::GATEWAY_TIMEOUT
    );
    assert_eq!(
        get("/api/v1/namespaces").await.unwrap().status(),
        StatusCode::OK
    );
}

/// `--admin-insecure` and `--peer-insecure` drop TLS: refused on non-loopback addresses.
#[test]
fn insecure_listeners_only_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            vec!["--admin-listen", "0.0.0.0:0", "--admin-insecure"],
            "--admin-insecure serves the admin API without TLS",
        ),
        (
            vec![
                "--peer-insecure",
                "--initial-members",
                "1=10.0.0.5:7000,2=10.0.0.6:7000",
            ],
            "--peer-insecure replicates without TLS",
        ),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
            .arg("serve")
            .arg("--data-dir")
            .arg(dir.path())
            .args(&args)
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} started");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Metric label values come only from what is served: made-up paths add no time series.
#[tokio::test]
async fn metric_labels_are_bounded() {
    let s = Server::start();
    let c = s.client();
    for i in 0..20 {
        let r = s
            .json(&c, Method::GET, &format!("/api/v1/made-up-{i}"), None)
            .await;
        assert_eq!(r.code, StatusCode::NOT_FOUND);
        let r = s
            .json(
                &c,
                Method::GET,
                &format!("/api/v1/namespaces/default/pods/p/sub-{i}"),
                None,
            )
            .await;
        assert_eq!(r.code, StatusCode::NOT_FOUND);
    }
    let m = c
        .get(format!("{}/metrics", s.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(m.contains("apiserver_request_total"), "{m}");
    assert!(
        !m.contains("made-up") && !m.contains("sub-1"),
        "unbounded labels"
    );
}

/// Non-long-running requests end at the request deadline (`--request-timeout`, or a shorter
/// `?timeout=`) with kube's 504; watches are exempt.
#[tokio::test]
async fn request_deadline() {
    let s = Server::start_with(&["--request-timeout", "1s"]);
    let c = s.client();
    // A read for a future revision waits 3 s: the deadline answers first.
    let started = Instant::now();
    let r = s
        .json(&c, Method::GET, "/api/v1/namespaces/default/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan", None)
        .await;
    assert_eq!(r.code, StatusCode::GATEWAY_TIMEOUT, "{}", r.body);
    assert_eq!(r.body["reason"], "Timeout");
    assert!(started.elapsed() < Duration::from_millis(2500));
    let r = s
        .json(&c, Method::GET, "/api/v1/namespaces?timeout=bogus", None)
        .await;
    assert_eq!(r.code, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = s
        .json(&c, Method::GET, "/api/v1/namespaces?timeout=30s", None)
        .await;
    assert_eq!(r.code, StatusCode::OK);
    // A watch outlives the deadline.
    let mut w = c
        .get(format!(
            "{}/api/v1/namespaces?watch=1&timeoutSeconds=3",
            s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(w.status(), StatusCode::OK);
    let t = Instant::now();
    while let Ok(Some(_)) = w.chunk().await {}
    assert!(
        t.elapsed() >= Duration::from_millis(2000),
        "watch cut short"
    );
}

/// A watch without `timeoutSeconds` ends between `--min-request-timeout` and twice that.
#[tokio::test]
async fn unset_watch_timeout_follows_min_request_timeout() {
    let s = Server::start_with(&["--min-request-timeout", "2s"]);
    let mut w = s
        .client()
        .get(format!("{}/api/v1/namespaces?watch=1", s.url))
        .send()
        .await
        .unwrap();
    let t = Instant::now();
    while let Ok(Some(_)) = w.chunk().await {}
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(1800) && took < Duration::from_secs(6),
        "{took:?}"
    );
}
