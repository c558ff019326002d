//! Versions of a custom resource over real HTTPS, as the storage-version seed and
//! kube-apiserver v1.33 describe them: a conversion webhook (a TLS server started here)
//! between v1beta1 (storage) and v1 (served), one review per list, its failures surfaced as
//! kube surfaces them; conversion `None` writing only what the storage schema knows; then a
//! storage-version change, `rafter admin migrate-storage` rewriting every object in the new
//! storage version, trimming of `status.storedVersions` and removal of the old version.

mod support;

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};
use support::{free_port, stderr, stdout, Server};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRD: &str =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com";
const V1: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const V1BETA1: &str = "/apis/stable.example.com/v1beta1/namespaces/default/crontabs";

fn schema(field: &str) -> Value {
    json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {field: {"type": "string"}}}}}})
}

fn crd(conversion: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": true, "schema": schema("cronSpec")},
                {"name": "v1", "served": true, "storage": false, "schema": schema("schedule")}],
            "conversion": conversion}})
}

/// The converter: v1beta1 `spec.cronSpec` is v1 `spec.schedule`.
fn convert(review: &Value, failing: bool) -> Value {
    let req = &review["request"];
    let desired = req["desiredAPIVersion"].as_str().unwrap_or("");
    if failing {
        return json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview",
            "response": {"uid": req["uid"], "result": {"status": "Failure", "message": "converter is down"}}});
    }
    let objects: Vec<Value> = req["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let mut o = o.clone();
            let (from, to) = if desired.ends_with("/v1") {
                ("cronSpec", "schedule")
            } else {
                ("schedule", "cronSpec")
            };
            if let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) {
                if let Some(v) = spec.remove(from) {
                    spec.insert(to.into(), v);
                }
            }
            o["apiVersion"] = json!(desired);
            o
        })
        .collect();
    json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview",
        "response": {"uid": req["uid"], "result": {"status": "Success"}, "convertedObjects": objects}})
}

async fn wait_served(s: &Server, c: &reqwest::Client, path: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while s.json(c, Method::GET, path, None).await.code.as_u16() != 200 {
        assert!(Instant::now() < deadline, "{path} never served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn crontab(api: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": api, "kind": "CronTab", "metadata": {"name": name}, "spec": spec})
}

/// `rafter admin migrate-storage` against the server's admin API.
fn migrate(s: &Server, admin_port: u16, resource: &str) -> String {
    let out = Command::new("timeout")
        .arg("120")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .args([
            "admin",
            "migrate-storage",
            "--resource",
            resource,
            "--batch",
            "2",
        ])
        .args(["--endpoint", &format!("127.0.0.1:{admin_port}")])
        .args(["--data-dir", s.dir.path().to_str().unwrap()])
        .output()
        .expect("run rafter admin");
    assert!(out.status.success(), "{}{}", stderr(&out), stdout(&out));
    stdout(&out)
}

/// Makes v1 the storage version, waits until the new storage version is in storedVersions.
async fn switch_storage(s: &Server, c: &reqwest::Client) -> Value {
    let mut def = s.json(c, Method::GET, CRD, None).await.body;
    def["spec"]["versions"][0]["storage"] = json!(false);
    def["spec"]["versions"][1]["storage"] = json!(true);
    let r = s.json(c, Method::PUT, CRD, Some(def)).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["status"]["storedVersions"], json!(["v1beta1", "v1"]));
    r.body
}

/// Trims storedVersions to v1, then drops v1beta1 from the definition.
async fn trim_and_remove_v1beta1(s: &Server, c: &reqwest::Client) {
    let r = s
        .json(
            c,
            Method::PATCH,
            &format!("{CRD}/status"),
            Some(json!({"status": {"storedVersions": ["v1"]}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["status"]["storedVersions"], json!(["v1"]));
    let mut def = r.body;
    let v1 = def["spec"]["versions"][1].clone();
    def["spec"]["versions"] = json!([v1]);
    let r = s.json(c, Method::PUT, CRD, Some(def)).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversion_webhook_then_migration_to_a_new_storage_version() {
    let admin_port = free_port();
    let s = Server::start_with(&["--admin-listen", &format!("127.0.0.1:{admin_port}")]);
    let c = s.client();
    let (calls, failing) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let (n, f) = (calls.clone(), failing.clone());
    let port = support::tls_server(
        s.dir.path(),
        "converter",
        Arc::new(move |_path: &str, body: &[u8]| {
            n.fetch_add(1, Ordering::SeqCst);
            let review: Value = serde_json::from_slice(body).unwrap_or_default();
            convert(&review, f.load(Ordering::SeqCst)).to_string()
        }),
    )
    .await;
    let ca = std::fs::read(s.dir.path().join("converter-ca.crt")).unwrap();
    let hook = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
        "clientConfig": {"url": format!("https://127.0.0.1:{port}/convert"),
            "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)}}});
    let r = s.json(&c, Method::POST, CRDS, Some(crd(hook))).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    wait_served(&s, &c, V1).await;

    // written through v1, stored as v1beta1 by the webhook, read back in either version
    for i in 0..3 {
        let r = s
            .json(
                &c,
                Method::POST,
                V1,
                Some(crontab(
                    "stable.example.com/v1",
                    &format!("c{i}"),
                    json!({"schedule": format!("*/{i}")}),
                )),
            )
            .await;
        assert_eq!(r.code.as_u16(), 201, "{}", r.body);
        assert_eq!(r.body["apiVersion"], "stable.example.com/v1");
        assert_eq!(r.body["spec"], json!({"schedule": format!("*/{i}")}));
    }
    assert!(calls.load(Ordering::SeqCst) >= 3);
    let r = s
        .json(&c, Method::GET, &format!("{V1BETA1}/c1"), None)
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["spec"], json!({"cronSpec": "*/1"}));
    // a list is converted with one review
    let before = calls.load(Ordering::SeqCst);
    let r = s.json(&c, Method::GET, V1, None).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let items = r.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert!(items
        .iter()
        .all(|i| i["apiVersion"] == "stable.example.com/v1" && i["spec"]["schedule"].is_string()));
    assert_eq!(calls.load(Ordering::SeqCst) - before, 1);
    // a failing webhook is kube's 500
    failing.store(true, Ordering::SeqCst);
    let r = s.json(&c, Method::GET, &format!("{V1}/c1"), None).await;
    assert_eq!(r.code.as_u16(), 500, "{}", r.body);
    assert_eq!(r.body["reason"], "InternalError");
    assert_eq!(
        r.body["message"],
        "Internal error occurred: conversion webhook for stable.example.com/v1beta1, Kind=CronTab failed: converter is down"
    );
    let r = s
        .json(
            &c,
            Method::POST,
            V1,
            Some(crontab(
                "stable.example.com/v1",
                "c9",
                json!({"schedule": "x"}),
            )),
        )
        .await;
    assert_eq!(r.code.as_u16(), 500, "{}", r.body);
    assert!(
        s.json(&c, Method::GET, &format!("{V1BETA1}/c9"), None)
            .await
            .code
            .as_u16()
            == 404
    );
    failing.store(false, Ordering::SeqCst);

    // v1 becomes the storage version; the migration rewrites every object in it
    switch_storage(&s, &c).await;
    let out = migrate(&s, admin_port, "crontabs.stable.example.com");
    assert!(
        out.contains(
            "crontabs.stable.example.com: done, 3 objects stored as stable.example.com/v1"
        ),
        "{out}"
    );
    // stored as v1 now: served in v1 without the webhook
    failing.store(true, Ordering::SeqCst);
    for i in 0..3 {
        let r = s.json(&c, Method::GET, &format!("{V1}/c{i}"), None).await;
        assert_eq!(r.code.as_u16(), 200, "{}", r.body);
        assert_eq!(r.body["spec"], json!({"schedule": format!("*/{i}")}));
    }
    trim_and_remove_v1beta1(&s, &c).await;
    let r = s.json(&c, Method::GET, V1, None).await;
    assert_eq!(
        r.body["items"].as_array().map(Vec::len),
        Some(3),
        "{}",
        r.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversion_none_stores_what_the_storage_version_knows() {
    let admin_port = free_port();
    let s = Server::start_with(&["--admin-listen", &format!("127.0.0.1:{admin_port}")]);
    let c = s.client();
    let mut def = crd(json!({"strategy": "None"}));
    // the seed's example: v1 adds `time`, which the v1beta1 storage version cannot hold
    def["spec"]["versions"][0]["schema"] = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"host": {"type": "string"}}}}}});
    def["spec"]["versions"][1]["schema"] = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"host": {"type": "string"}, "time": {"type": "string"}}}}}});
    let r = s.json(&c, Method::POST, CRDS, Some(def)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    wait_served(&s, &c, V1).await;
    let r = s
        .json(
            &c,
            Method::POST,
            V1,
            Some(crontab(
                "stable.example.com/v1",
                "t",
                json!({"host": "h", "time": "noon"}),
            )),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(
        r.body["spec"],
        json!({"host": "h"}),
        "time is not part of the storage version"
    );
    for i in 0..5 {
        let r = s
            .json(
                &c,
                Method::POST,
                V1BETA1,
                Some(crontab(
                    "stable.example.com/v1beta1",
                    &format!("o{i}"),
                    json!({"host": "h"}),
                )),
            )
            .await;
        assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    }
    switch_storage(&s, &c).await;
    let out = migrate(&s, admin_port, "crontabs.stable.example.com");
    assert!(
        out.contains("done, 6 objects stored as stable.example.com/v1"),
        "{out}"
    );
    trim_and_remove_v1beta1(&s, &c).await;
    // written in v1 now: `time` is kept
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{V1}/t"),
            Some(json!({"spec": {"time": "noon"}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["spec"], json!({"host": "h", "time": "noon"}));
    // an unknown resource is a clear error
    let out = Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .args([
            "admin",
            "migrate-storage",
            "--resource",
            "nothings.example.com",
        ])
        .args(["--endpoint", &format!("127.0.0.1:{admin_port}")])
        .args(["--data-dir", s.dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("doesn't have a resource type \"nothings.example.com\""),
        "{}",
        stderr(&out)
    );
}
