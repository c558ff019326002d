//! `--event-ttl` (issue 16): Events expire after their last write, under either API version,
//! watchers see them go, and a write restarts the clock.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::Server;

fn event(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Test", "message": "m", "type": "Normal"})
}

#[tokio::test]
async fn events_expire_after_their_last_write() {
    let s = Server::start_with(&["--event-ttl", "3s"]);
    let c = s.client();
    let core = format!("{}/api/v1/namespaces/default/events", s.url);
    let new_api = format!("{}/apis/events.k8s.io/v1/namespaces/default/events", s.url);
    // A watch from now on.
    let mut watch = c.get(format!("{core}?watch=true")).send().await.unwrap();
    for name in ["old", "kept"] {
        let r = c.post(&core).json(&event(name)).send().await.unwrap();
        assert_eq!(r.status(), 201);
    }
    let r = c
        .post(&new_api)
        .json(&json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "new", "namespace": "default"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "test/c",
            "reportingInstance": "i", "action": "Act", "reason": "Test", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());

    // Keep rewriting "kept" while "old" and "new" run out.
    let status = |name: &'static str| {
        let (c, url) = (c.clone(), format!("{core}/{name}"));
        async move { c.get(url).send().await.unwrap().status().as_u16() }
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut n = 0;
    while status("old").await != 404 || status("new").await != 404 {
        assert!(Instant::now() < deadline, "events did not expire");
        n += 1;
        let r = c
            .patch(format!("{core}/kept"))
            .header("content-type", "application/merge-patch+json")
            .body(json!({"message": format!("m{n}")}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(status("kept").await, 200);
    // Left alone, "kept" goes too.
    let deadline = Instant::now() + Duration::from_secs(15);
    while status("kept").await != 404 {
        assert!(Instant::now() < deadline, "kept did not expire");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // The watch saw every expiry as a DELETED event.
    let mut deleted = Vec::new();
    let mut buf = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while deleted.len() < 3 {
        assert!(Instant::now() < deadline, "watch saw {deleted:?}");
        let chunk = tokio::time::timeout(Duration::from_secs(5), watch.chunk())
            .await
            .expect("watch event")
            .unwrap()
            .expect("watch open");
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(i) = buf.find('\n') {
            let line: String = buf.drain(..=i).collect();
            let ev: Value = serde_json::from_str(line.trim()).unwrap();
            if ev["type"] == "DELETED" {
                deleted.push(
                    ev["object"]["metadata"]["name"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                );
            }
        }
    }
    deleted.sort();
    assert_eq!(deleted, ["kept", "new", "old"]);
    let list: Value = c.get(&core).send().await.unwrap().json().await.unwrap();
    assert_eq!(list["items"], json!([]));
}
