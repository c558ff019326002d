//! ResourceQuota admission over real HTTPS: usage charged with the write (exactly, under
//! concurrency), kube's texts for an exceeded quota and for pods that do not state what a
//! quota tracks, dry runs checked but not charged, and usage given back by the
//! recalculation loop after deletes.

mod support;

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};
use support::Server;

const NS: &str = "/api/v1/namespaces/q";

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}})
}

fn pod(name: &str, resources: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": resources}]}})
}

/// Waits until quota `name`'s `status.used[key]` is `want`; returns the quota.
async fn used(s: &Server, c: &reqwest::Client, name: &str, key: &str, want: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = s
            .json(c, Method::GET, &format!("{NS}/resourcequotas/{name}"), None)
            .await;
        if r.body["status"]["used"][key] == want {
            return r.body;
        }
        assert!(
            Instant::now() < deadline,
            "used {key} never {want}: {}",
            r.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn quota(s: &Server, c: &reqwest::Client, name: &str, hard: Value) {
    let q = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": {"hard": hard}});
    let r = s
        .json(c, Method::POST, &format!("{NS}/resourcequotas"), Some(q))
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotas_are_charged_exactly_and_given_back() {
    let s = Server::start();
    let c = s.client();
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces",
            Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "q"}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    // the root CA ConfigMap the publisher writes into every namespace counts too
    let deadline = Instant::now() + Duration::from_secs(20);
    while s
        .json(
            &c,
            Method::GET,
            &format!("{NS}/configmaps/kube-root-ca.crt"),
            None,
        )
        .await
        .code
        .as_u16()
        != 200
    {
        assert!(
            Instant::now() < deadline,
            "no kube-root-ca.crt in the namespace"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let before = s
        .json(&c, Method::GET, &format!("{NS}/configmaps"), None)
        .await
        .body["items"]
        .as_array()
        .map_or(0, Vec::len);
    quota(
        &s,
        &c,
        "objects",
        json!({"count/configmaps": (before + 10).to_string()}),
    )
    .await;
    used(&s, &c, "objects", "count/configmaps", &before.to_string()).await;

    // 32 concurrent creates against room for 10: exactly 10 succeed
    let mut tasks = Vec::new();
    for i in 0..32 {
        let (c, url) = (c.clone(), format!("{}{NS}/configmaps", s.url));
        tasks.push(tokio::spawn(async move {
            c.post(url)
                .header("content-type", "application/json")
                .body(configmap(&format!("cm-{i}")).to_string())
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 201).count(), 10, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 403).count(), 22, "{codes:?}");
    let limit = (before + 10).to_string();
    let q = used(&s, &c, "objects", "count/configmaps", &limit).await;
    assert_eq!(q["status"]["hard"]["count/configmaps"], limit);
    let listed = s
        .json(&c, Method::GET, &format!("{NS}/configmaps"), None)
        .await
        .body["items"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(listed, before + 10);

    // kube's text when the quota is used up; a dry run is checked the same way
    for path in [
        format!("{NS}/configmaps"),
        format!("{NS}/configmaps?dryRun=All"),
    ] {
        let r = s
            .json(&c, Method::POST, &path, Some(configmap("extra")))
            .await;
        assert_eq!(r.code.as_u16(), 403, "{}", r.body);
        assert_eq!(
            r.body["message"],
            format!("configmaps \"extra\" is forbidden: exceeded quota: objects, requested: count/configmaps=1, used: count/configmaps={limit}, limited: count/configmaps={limit}")
        );
    }
    // deletes give usage back (the recalculation loop), then a dry run passes without charging
    let r = s
        .json(&c, Method::DELETE, &format!("{NS}/configmaps/cm-0"), None)
        .await;
    let r = if r.code.as_u16() == 404 {
        // cm-0 may have lost the race: delete any created one
        let items = s
            .json(&c, Method::GET, &format!("{NS}/configmaps"), None)
            .await
            .body["items"]
            .clone();
        let name = items
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
            .find(|n| n.starts_with("cm-"))
            .unwrap();
        s.json(&c, Method::DELETE, &format!("{NS}/configmaps/{name}"), None)
            .await
    } else {
        r
    };
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let less = (before + 9).to_string();
    used(&s, &c, "objects", "count/configmaps", &less).await;
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{NS}/configmaps?dryRun=All"),
            Some(configmap("dry")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let q = s
        .json(
            &c,
            Method::GET,
            &format!("{NS}/resourcequotas/objects"),
            None,
        )
        .await
        .body;
    assert_eq!(
        q["status"]["used"]["count/configmaps"], less,
        "a dry run charges nothing"
    );
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{NS}/configmaps"),
            Some(configmap("last")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compute_quotas_constrain_pods() {
    let s = Server::start();
    let c = s.client();
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces",
            Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "q"}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    quota(
        &s,
        &c,
        "compute",
        json!({"requests.cpu": "1", "limits.memory": "1Gi", "pods": "5"}),
    )
    .await;
    used(&s, &c, "compute", "pods", "0").await;
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{NS}/pods"),
            Some(pod("bare", json!({}))),
        )
        .await;
    assert_eq!(r.code.as_u16(), 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "pods \"bare\" is forbidden: failed quota: compute: must specify limits.memory for: c; requests.cpu for: c"
    );
    let sized = json!({"requests": {"cpu": "500m"}, "limits": {"memory": "512Mi"}});
    for name in ["a", "b"] {
        let r = s
            .json(
                &c,
                Method::POST,
                &format!("{NS}/pods"),
                Some(pod(name, sized.clone())),
            )
            .await;
        assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    }
    let q = used(&s, &c, "compute", "pods", "2").await;
    assert_eq!(q["status"]["used"]["requests.cpu"], "1");
    assert_eq!(q["status"]["used"]["limits.memory"], "1Gi");
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{NS}/pods"),
            Some(pod("c", sized)),
        )
        .await;
    assert_eq!(r.code.as_u16(), 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "pods \"c\" is forbidden: exceeded quota: compute, requested: limits.memory=512Mi,requests.cpu=500m, used: limits.memory=1Gi,requests.cpu=1, limited: limits.memory=1Gi,requests.cpu=1"
    );
}
