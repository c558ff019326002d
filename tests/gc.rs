//! The garbage collector over real HTTPS against the real binary, with kubectl where a user
//! would use it: a Deployment → ReplicaSet → Pod chain made by hand (no workload controllers
//! run) deleted in the background, in the foreground (the owners stay, with a
//! deletionTimestamp, while a blocking dependent is held by a finalizer; a non-blocking one
//! does not hold them) and orphaning (`--cascade=orphan`, the deprecated `orphanDependents`
//! body, a ReplicationController's default); dependents whose owner's uid does not match;
//! references across namespaces (the `OwnerRefInvalidNamespace` Event; absent owners for
//! namespaced dependents, unresolvable ones for cluster-scoped dependents); the 422 texts of
//! ownerReferences validation; custom resources as owners and as dependents; a cycle of
//! blocking owners deleted in the foreground. Every wait is bounded.

mod support;

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const WAIT: Duration = Duration::from_secs(30);

fn owner_ref(api_version: &str, kind: &str, name: &str, uid: &str, block: bool) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
        "controller": true, "blockOwnerDeletion": block})
}

fn template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}})
}

async fn create(s: &Server, c: &reqwest::Client, path: &str, body: Value) -> Value {
    let r = s.json(c, Method::POST, path, Some(body)).await;
    assert_eq!(r.code, StatusCode::CREATED, "POST {path}: {}", r.body);
    r.body
}

async fn get(s: &Server, c: &reqwest::Client, path: &str) -> Option<Value> {
    let r = s.json(c, Method::GET, path, None).await;
    match r.code {
        StatusCode::OK => Some(r.body),
        StatusCode::NOT_FOUND => None,
        code => panic!("GET {path}: {code} {}", r.body),
    }
}

/// Waits (bounded) until `path` is gone.
async fn gone(s: &Server, c: &reqwest::Client, path: &str) {
    let deadline = Instant::now() + WAIT;
    while get(s, c, path).await.is_some() {
        assert!(Instant::now() < deadline, "{path} was never collected");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Checks for a while that `path` stays, and returns it.
async fn stays(s: &Server, c: &reqwest::Client, path: &str) -> Value {
    let mut last = None;
    for _ in 0..15 {
        last = get(s, c, path).await;
        assert!(last.is_some(), "{path} was deleted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    last.unwrap()
}

fn uid(o: &Value) -> String {
    o["metadata"]["uid"].as_str().unwrap().to_string()
}

struct Chain {
    deploy: String,
    rs: String,
    pod: String,
}

/// A Deployment owning a ReplicaSet owning a Pod, made by hand in `ns`; the pod carries
/// `pod_finalizers`.
async fn chain(
    s: &Server,
    c: &reqwest::Client,
    ns: &str,
    name: &str,
    pod_finalizers: &[&str],
) -> Chain {
    let d = create(
        s,
        c,
        &format!("/apis/apps/v1/namespaces/{ns}/deployments"),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": template(name)}}),
    )
    .await;
    let rs_name = format!("{name}-rs");
    let rs = create(
        s,
        c,
        &format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs_name,
                "ownerReferences": [owner_ref("apps/v1", "Deployment", name, &uid(&d), true)]},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": template(name)}}),
    )
    .await;
    let pod_name = format!("{name}-pod");
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod_name, "labels": {"app": name},
            "ownerReferences": [owner_ref("apps/v1", "ReplicaSet", &rs_name, &uid(&rs), true)]},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}});
    if !pod_finalizers.is_empty() {
        pod["metadata"]["finalizers"] = json!(pod_finalizers);
    }
    create(s, c, &format!("/api/v1/namespaces/{ns}/pods"), pod).await;
    Chain {
        deploy: format!("/apis/apps/v1/namespaces/{ns}/deployments/{name}"),
        rs: format!("/apis/apps/v1/namespaces/{ns}/replicasets/{rs_name}"),
        pod: format!("/api/v1/namespaces/{ns}/pods/{pod_name}"),
    }
}

async fn release(s: &Server, c: &reqwest::Client, path: &str) {
    let r = s
        .json(
            c,
            Method::PATCH,
            path,
            Some(json!({"metadata": {"finalizers": null}})),
        )
        .await;
    assert!(
        r.code == StatusCode::OK || r.code == StatusCode::NOT_FOUND,
        "{}",
        r.body
    );
}

#[tokio::test]
async fn cascading_deletion_in_all_three_modes() {
    let s = Server::start();
    let c = s.client();
    s.ok(&["create", "namespace", "gc"]);

    // Background (kubectl's default): the owner goes at once, its dependents after it.
    let bg = chain(&s, &c, "gc", "bg", &[]).await;
    let out = s.ok(&["delete", "deployment", "bg", "-n", "gc"]);
    assert_eq!(out.trim(), "deployment.apps \"bg\" deleted");
    assert!(get(&s, &c, &bg.deploy).await.is_none());
    gone(&s, &c, &bg.rs).await;
    gone(&s, &c, &bg.pod).await;

    // Foreground: the owners stay, being deleted, while a blocking dependent is held.
    let fg = chain(&s, &c, "gc", "fg", &["example.com/hold"]).await;
    let d = get(&s, &c, &fg.deploy).await.unwrap();
    // A dependent that does not block its owner is deleted too, but is not waited for.
    create(
        &s,
        &c,
        "/api/v1/namespaces/gc/configmaps",
        json!({"metadata": {"name": "fg-loose", "finalizers": ["example.com/hold"],
            "ownerReferences": [owner_ref("apps/v1", "Deployment", "fg", &uid(&d), false)]}}),
    )
    .await;
    let out = s.ok(&[
        "delete",
        "deployment",
        "fg",
        "-n",
        "gc",
        "--cascade=foreground",
        "--wait=false",
    ]);
    assert_eq!(out.trim(), "deployment.apps \"fg\" deleted");
    let deadline = Instant::now() + WAIT;
    loop {
        let pod = get(&s, &c, &fg.pod).await.unwrap();
        if pod["metadata"]["deletionTimestamp"].is_string() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the pod was never deleted: {pod}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for path in [&fg.deploy, &fg.rs] {
        let o = stays(&s, &c, path).await;
        assert!(o["metadata"]["deletionTimestamp"].is_string(), "{o}");
        assert_eq!(
            o["metadata"]["finalizers"],
            json!(["foregroundDeletion"]),
            "{o}"
        );
    }
    release(&s, &c, &fg.pod).await;
    gone(&s, &c, &fg.pod).await;
    gone(&s, &c, &fg.rs).await;
    gone(&s, &c, &fg.deploy).await;
    let loose = get(&s, &c, "/api/v1/namespaces/gc/configmaps/fg-loose")
        .await
        .unwrap();
    assert!(
        loose["metadata"]["deletionTimestamp"].is_string(),
        "{loose}"
    );
    release(&s, &c, "/api/v1/namespaces/gc/configmaps/fg-loose").await;
    gone(&s, &c, "/api/v1/namespaces/gc/configmaps/fg-loose").await;

    // Orphan: the owner goes; its dependents stay, without references to it.
    let or = chain(&s, &c, "gc", "or", &[]).await;
    let out = s.ok(&["delete", "deployment", "or", "-n", "gc", "--cascade=orphan"]);
    assert_eq!(out.trim(), "deployment.apps \"or\" deleted");
    gone(&s, &c, &or.deploy).await;
    let rs = stays(&s, &c, &or.rs).await;
    assert!(rs["metadata"].get("ownerReferences").is_none(), "{rs}");
    let pod = stays(&s, &c, &or.pod).await;
    assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
    assert!(pod["metadata"].get("deletionTimestamp").is_none());

    // The deprecated orphanDependents body, on the orphaned ReplicaSet.
    let r = s
        .json(
            &c,
            Method::DELETE,
            &or.rs,
            Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": true})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    gone(&s, &c, &or.rs).await;
    let pod = stays(&s, &c, &or.pod).await;
    assert!(pod["metadata"].get("ownerReferences").is_none(), "{pod}");

    // A ReplicationController orphans by default when a DELETE names no policy.
    let rc = create(
        &s,
        &c,
        "/api/v1/namespaces/gc/replicationcontrollers",
        json!({"metadata": {"name": "rc"},
            "spec": {"selector": {"app": "rc"}, "template": template("rc")}}),
    )
    .await;
    create(
        &s,
        &c,
        "/api/v1/namespaces/gc/pods",
        json!({"metadata": {"name": "rc-pod", "labels": {"app": "rc"},
            "ownerReferences": [owner_ref("v1", "ReplicationController", "rc", &uid(&rc), true)]},
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}),
    )
    .await;
    let r = s
        .json(
            &c,
            Method::DELETE,
            "/api/v1/namespaces/gc/replicationcontrollers/rc",
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    gone(&s, &c, "/api/v1/namespaces/gc/replicationcontrollers/rc").await;
    let pod = stays(&s, &c, "/api/v1/namespaces/gc/pods/rc-pod").await;
    assert!(pod["metadata"].get("ownerReferences").is_none(), "{pod}");

    // An owner whose uid does not match is absent: its dependent is collected; a dependent
    // of the real owner stays.
    let owner = create(
        &s,
        &c,
        "/api/v1/namespaces/gc/configmaps",
        json!({"metadata": {"name": "owner"}}),
    )
    .await;
    create(
        &s,
        &c,
        "/api/v1/namespaces/gc/configmaps",
        json!({"metadata": {"name": "wrong-uid",
            "ownerReferences": [owner_ref("v1", "ConfigMap", "owner", "4f1b1fbc-0000-4000-8000-000000000000", false)]}}),
    )
    .await;
    create(
        &s,
        &c,
        "/api/v1/namespaces/gc/configmaps",
        json!({"metadata": {"name": "right-uid",
            "ownerReferences": [owner_ref("v1", "ConfigMap", "owner", &uid(&owner), false)]}}),
    )
    .await;
    gone(&s, &c, "/api/v1/namespaces/gc/configmaps/wrong-uid").await;
    stays(&s, &c, "/api/v1/namespaces/gc/configmaps/right-uid").await;
    // With several owners, a dependent stays while one remains, and loses the dangling one.
    let second = create(
        &s,
        &c,
        "/api/v1/namespaces/gc/configmaps",
        json!({"metadata": {"name": "second"}}),
    )
    .await;
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/api/v1/namespaces/gc/configmaps/right-uid",
            Some(json!({"metadata": {"ownerReferences": [
                owner_ref("v1", "ConfigMap", "owner", &uid(&owner), false),
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "second", "uid": uid(&second)}]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    s.ok(&["delete", "configmap", "owner", "-n", "gc"]);
    let deadline = Instant::now() + WAIT;
    loop {
        let o = get(&s, &c, "/api/v1/namespaces/gc/configmaps/right-uid")
            .await
            .expect("kept for its second owner");
        let refs = o["metadata"]["ownerReferences"].as_array().unwrap().clone();
        if refs.len() == 1 {
            assert_eq!(refs[0]["name"], "second");
            break;
        }
        assert!(Instant::now() < deadline, "dangling reference kept: {o}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.ok(&["delete", "configmap", "second", "-n", "gc"]);
    gone(&s, &c, "/api/v1/namespaces/gc/configmaps/right-uid").await;
}

#[tokio::test]
async fn references_across_namespaces() {
    let s = Server::start();
    let c = s.client();
    s.ok(&["create", "namespace", "gc-a"]);
    s.ok(&["create", "namespace", "gc-b"]);
    let parent = create(
        &s,
        &c,
        "/api/v1/namespaces/gc-a/configmaps",
        json!({"metadata": {"name": "parent"}}),
    )
    .await;
    let cluster_owner = create(
        &s,
        &c,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"metadata": {"name": "gc-owner"}, "rules": []}),
    )
    .await;
    let pref = owner_ref("v1", "ConfigMap", "parent", &uid(&parent), false);
    // Only the invalid owner: it counts as absent, the dependent is collected.
    let child = create(
        &s,
        &c,
        "/api/v1/namespaces/gc-b/configmaps",
        json!({"metadata": {"name": "child", "ownerReferences": [pref]}}),
    )
    .await;
    gone(&s, &c, "/api/v1/namespaces/gc-b/configmaps/child").await;
    // With a valid cluster-scoped owner as well, the dependent stays and loses the invalid one.
    create(
        &s,
        &c,
        "/api/v1/namespaces/gc-b/configmaps",
        json!({"metadata": {"name": "child2", "ownerReferences": [pref,
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "name": "gc-owner", "uid": uid(&cluster_owner)}]}}),
    )
    .await;
    let deadline = Instant::now() + WAIT;
    loop {
        let o = get(&s, &c, "/api/v1/namespaces/gc-b/configmaps/child2")
            .await
            .expect("child2 has a valid owner");
        let refs = o["metadata"]["ownerReferences"].as_array().unwrap().clone();
        if refs.len() == 1 {
            assert_eq!(refs[0]["kind"], "ClusterRole");
            break;
        }
        assert!(Instant::now() < deadline, "invalid reference kept: {o}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A cluster-scoped dependent of a namespaced owner cannot be resolved: it stays.
    create(
        &s,
        &c,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"metadata": {"name": "gc-dependent", "ownerReferences": [pref]}, "rules": []}),
    )
    .await;
    let cr = stays(
        &s,
        &c,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/gc-dependent",
    )
    .await;
    assert_eq!(cr["metadata"]["ownerReferences"][0]["name"], "parent");

    // Each is reported with a Warning Event on the dependent (cluster-scoped ones in default).
    let events = |ns: &str| {
        s.ok(&[
            "get",
            "events",
            "-n",
            ns,
            "--field-selector=reason=OwnerRefInvalidNamespace",
            "-o",
            "json",
        ])
    };
    let deadline = Instant::now() + WAIT;
    let (b, d) = loop {
        let b: Value = serde_json::from_str(&events("gc-b")).unwrap();
        let d: Value = serde_json::from_str(&events("default")).unwrap();
        let n = |l: &Value| l["items"].as_array().map_or(0, Vec::len);
        if n(&b) >= 2 && n(&d) >= 1 {
            break (b, d);
        }
        assert!(Instant::now() < deadline, "events missing: {b} {d}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let e = b["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["involvedObject"]["name"] == "child")
        .expect("an event for child")
        .clone();
    assert_eq!(e["type"], "Warning");
    assert_eq!(e["involvedObject"]["uid"], json!(uid(&child)));
    assert_eq!(e["involvedObject"]["kind"], "ConfigMap");
    assert_eq!(e["source"]["component"], "garbage-collector-controller");
    assert_eq!(
        e["message"],
        json!(format!(
            "ownerRef [v1/ConfigMap, namespace: gc-b, name: parent, uid: {}] does not exist in namespace \"gc-b\"",
            uid(&parent)
        ))
    );
    let e = &d["items"][0];
    assert_eq!(e["involvedObject"]["name"], "gc-dependent");
    assert!(e["involvedObject"].get("namespace").is_none(), "{e}");
    assert_eq!(
        e["message"],
        json!(format!(
            "ownerRef [v1/ConfigMap, namespace: , name: parent, uid: {}] does not exist in namespace \"\"",
            uid(&parent)
        ))
    );
    // The owner itself is untouched.
    stays(&s, &c, "/api/v1/namespaces/gc-a/configmaps/parent").await;
}

#[tokio::test]
async fn owner_references_are_validated() {
    let s = Server::start();
    let c = s.client();
    let post = |body: Value| {
        let (s, c) = (&s, &c);
        async move {
            s.json(
                c,
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                Some(body),
            )
            .await
        }
    };
    let r = post(json!({"metadata": {"name": "empty", "ownerReferences": [{}]}})).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "ConfigMap \"empty\" is invalid: [metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty, \
         metadata.ownerReferences.kind: Invalid value: \"\": kind must not be empty, \
         metadata.ownerReferences.name: Invalid value: \"\": name must not be empty, \
         metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty]"
    );
    let causes = r.body["details"]["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 4);
    assert_eq!(causes[0]["field"], "metadata.ownerReferences.apiVersion");
    let r = post(json!({"metadata": {"name": "two", "ownerReferences": [
        owner_ref("apps/v1", "ReplicaSet", "r", "1", false),
        owner_ref("v1", "Pod", "p", "2", false)]}}))
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let m = r.body["message"].as_str().unwrap();
    assert!(m.starts_with("ConfigMap \"two\" is invalid: metadata.ownerReferences: Invalid value: []v1.OwnerReference{"), "{m}");
    assert!(m.ends_with("Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/r and Pod/p"), "{m}");
    let r = post(json!({"metadata": {"name": "event", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "3"}]}}))
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body["message"]
        .as_str()
        .unwrap()
        .ends_with("/v1, Kind=Event is disallowed from being an owner"));
    let r = post(json!({"metadata": {"name": "gv", "ownerReferences": [
        {"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "4"}]}}))
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "ConfigMap \"gv\" is invalid: metadata.ownerReferences.apiVersion: Invalid value: \"a/b/c\": version must not be empty"
    );
    // Updates are checked the same way.
    create(
        &s,
        &c,
        "/api/v1/namespaces/default/configmaps",
        json!({"metadata": {"name": "ok"}}),
    )
    .await;
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/api/v1/namespaces/default/configmaps/ok",
            Some(json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "ConfigMap \"ok\" is invalid: metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty"
    );
}

#[tokio::test]
async fn custom_resources_as_owners_and_dependents() {
    let s = Server::start();
    let c = s.client();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.gc.example.com"},
        "spec": {"group": "gc.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}});
    create(
        &s,
        &c,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd,
    )
    .await;
    let widgets = "/apis/gc.example.com/v1/namespaces/default/widgets";
    let deadline = Instant::now() + WAIT;
    while s.json(&c, Method::GET, widgets, None).await.code != StatusCode::OK {
        assert!(Instant::now() < deadline, "widgets never served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A Widget owning a ConfigMap, and a ConfigMap owning a Widget.
    let w = create(
        &s,
        &c,
        widgets,
        json!({"apiVersion": "gc.example.com/v1", "kind": "Widget", "metadata": {"name": "owner"}}),
    )
    .await;
    create(
        &s,
        &c,
        "/api/v1/namespaces/default/configmaps",
        json!({"metadata": {"name": "of-widget",
            "ownerReferences": [owner_ref("gc.example.com/v1", "Widget", "owner", &uid(&w), true)]}}),
    )
    .await;
    let cm = create(
        &s,
        &c,
        "/api/v1/namespaces/default/configmaps",
        json!({"metadata": {"name": "widget-owner"}}),
    )
    .await;
    create(
        &s,
        &c,
        widgets,
        json!({"apiVersion": "gc.example.com/v1", "kind": "Widget", "metadata": {"name": "dependent",
            "ownerReferences": [owner_ref("v1", "ConfigMap", "widget-owner", &uid(&cm), true)]}}),
    )
    .await;
    stays(&s, &c, "/api/v1/namespaces/default/configmaps/of-widget").await;
    stays(&s, &c, &format!("{widgets}/dependent")).await;
    s.ok(&["delete", "widget", "owner", "--cascade=foreground"]);
    gone(&s, &c, "/api/v1/namespaces/default/configmaps/of-widget").await;
    gone(&s, &c, &format!("{widgets}/owner")).await;
    s.ok(&["delete", "configmap", "widget-owner"]);
    gone(&s, &c, &format!("{widgets}/dependent")).await;
}

#[tokio::test]
async fn foreground_cycles_end() {
    // A owns B and B owns A, both blocking: deleting A in the foreground ends with both gone
    // (B stops blocking A before it is deleted in the foreground itself).
    let s = Server::start();
    let c = s.client();
    const CMS: &str = "/api/v1/namespaces/default/configmaps";
    let a = create(&s, &c, CMS, json!({"metadata": {"name": "a"}})).await;
    let b = create(
        &s,
        &c,
        CMS,
        json!({"metadata": {"name": "b",
            "ownerReferences": [owner_ref("v1", "ConfigMap", "a", &uid(&a), true)]}}),
    )
    .await;
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{CMS}/a"),
            Some(json!({"metadata": {"ownerReferences": [owner_ref("v1", "ConfigMap", "b", &uid(&b), true)]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    stays(&s, &c, &format!("{CMS}/a")).await;
    let r = s
        .json(
            &c,
            Method::DELETE,
            &format!("{CMS}/a"),
            Some(json!({"propagationPolicy": "Foreground"})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    gone(&s, &c, &format!("{CMS}/a")).await;
    gone(&s, &c, &format!("{CMS}/b")).await;
}
