//! The server's own supervision under a test-only fault (`--test-fault`): the watch cache's
//! dispatcher dies on a batch and is restarted — its watchers get a 410, reads with
//! resourceVersion unset keep answering, new watches see new events, `/readyz` stays green.

mod support;

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_cache_dispatcher_is_restarted() {
    let s = Server::start_with(&["--test-fault", "watch-dispatcher-panic"]);
    let c = s.client();
    let cms = "/api/v1/namespaces/default/configmaps";
    let mut watch = c
        .get(format!("{}{cms}?watch=1&timeoutSeconds=30", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(watch.status(), StatusCode::OK);
    let r = s
        .json(
            &c,
            Method::POST,
            cms,
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "panic-dispatcher"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    // The open watch ends with a 410 ERROR (its events were lost with the dispatcher).
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_secs(10), watch.chunk()).await {
            Ok(Ok(Some(b))) => text.push_str(&String::from_utf8_lossy(&b)),
            _ => break,
        }
        if text.contains("\"ERROR\"") {
            break;
        }
    }
    assert!(text.contains("\"ERROR\"") && text.contains("410"), "{text}");
    // Reads with resourceVersion unset wait on the cache: they still answer, and see the write.
    let r = s.json(&c, Method::GET, cms, None).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let names: Vec<&str> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["panic-dispatcher"]);
    // A new watch gets new events; /readyz is green.
    let rv = r.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut watch = c
        .get(format!(
            "{}{cms}?watch=1&resourceVersion={rv}&timeoutSeconds=10",
            s.url
        ))
        .send()
        .await
        .unwrap();
    let r = s
        .json(
            &c,
            Method::POST,
            cms,
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED);
    let chunk = tokio::time::timeout(Duration::from_secs(10), watch.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let ev: Value = serde_json::from_slice(chunk.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["metadata"]["name"], "b");
    let r = s.json(&c, Method::GET, "/readyz?verbose", None).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
}
