//! Deletion as kube's generic store does it, over real HTTPS: grace periods 0, 1 and 30 with
//! the orphan, foreground and background policies on a ConfigMap, a Deployment and a Pod
//! (unscheduled and scheduled), all finishing once the finalizers are gone; second DELETEs of
//! terminating objects; default GC policies; DeleteOptions as JSON, query and Kubernetes
//! protobuf bodies (malformed protobuf is a 400). The flows that remove GC finalizers by hand run
//! with the garbage collector off; `tests/gc.rs` tests the collector doing it.

mod support;

use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::{pb_envelope, Server};

const PB: &str = "application/vnd.kubernetes.protobuf";

fn delete_options_pb(grace: Option<i64>, policy: Option<&str>) -> Vec<u8> {
    pb_envelope(
        "meta.k8s.io/v1",
        "DeleteOptions",
        &meta::DeleteOptions {
            grace_period_seconds: grace,
            propagation_policy: policy.map(str::to_string),
            ..Default::default()
        },
    )
}

struct Kind {
    collection: &'static str,
    body: fn(&str) -> Value,
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}})
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}})
}

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}})
}

fn scheduled_pod(name: &str) -> Value {
    let mut p = pod(name);
    p["spec"]["nodeName"] = json!("node-1");
    p
}

async fn gone(s: &Server, c: &reqwest::Client, path: &str) -> bool {
    s.json(c, Method::GET, path, None).await.code == StatusCode::NOT_FOUND
}

/// Sends a DELETE with the options as a protobuf body, a JSON body or query parameters
/// (rotating by `variant`), so every encoding is exercised on every flow.
async fn delete(
    s: &Server,
    c: &reqwest::Client,
    path: &str,
    grace: i64,
    policy: &str,
    variant: usize,
) -> support::Reply {
    match variant % 3 {
        0 => {
            s.send(
                c,
                Method::DELETE,
                path,
                PB,
                Some(delete_options_pb(Some(grace), Some(policy))),
            )
            .await
        }
        1 => {
            s.json(
                c,
                Method::DELETE,
                path,
                Some(json!({"kind": "DeleteOptions", "apiVersion": "v1",
                    "gracePeriodSeconds": grace, "propagationPolicy": policy})),
            )
            .await
        }
        _ => {
            s.json(
                c,
                Method::DELETE,
                &format!("{path}?gracePeriodSeconds={grace}&propagationPolicy={policy}"),
                None,
            )
            .await
        }
    }
}

#[tokio::test]
async fn policies_and_grace_periods_finish_as_kube() {
    // The store's half only: the garbage collector, which would act on the GC finalizers
    // (tests/gc.rs), is off, and the test removes them itself.
    let s = Server::start_with(&["--controllers", "*,-garbage-collector"]);
    let c = s.client();
    let kinds = [
        (
            "configmap",
            Kind {
                collection: "/api/v1/namespaces/default/configmaps",
                body: configmap,
            },
        ),
        (
            "deployment",
            Kind {
                collection: "/apis/apps/v1/namespaces/default/deployments",
                body: deployment,
            },
        ),
        (
            "pod",
            Kind {
                collection: "/api/v1/namespaces/default/pods",
                body: pod,
            },
        ),
        (
            "scheduled",
            Kind {
                collection: "/api/v1/namespaces/default/pods",
                body: scheduled_pod,
            },
        ),
    ];
    let mut variant = 0;
    for (label, kind) in &kinds {
        for grace in [0i64, 1, 30] {
            for policy in ["Background", "Orphan", "Foreground"] {
                variant += 1;
                let name = format!("{label}-{grace}-{}", policy.to_lowercase());
                let path = format!("{}/{name}", kind.collection);
                let r = s
                    .json(&c, Method::POST, kind.collection, Some((kind.body)(&name)))
                    .await;
                assert_eq!(r.code, StatusCode::CREATED, "{name}: {}", r.body);
                let created_gen = r.body["metadata"]["generation"].clone();
                let r = delete(&s, &c, &path, grace, policy, variant).await;
                assert_eq!(r.code, StatusCode::OK, "{name}: {}", r.body);
                let scheduled = *label == "scheduled";
                // The grace period that stays: pods on a node keep theirs, everything else 0.
                let kept = if scheduled { grace } else { 0 };
                let finalizer = match policy {
                    "Orphan" => Some("orphan"),
                    "Foreground" => Some("foregroundDeletion"),
                    _ => None,
                };
                if finalizer.is_none() && kept == 0 {
                    assert!(gone(&s, &c, &path).await, "{name} should be gone");
                    if *label == "configmap" || *label == "deployment" {
                        assert_eq!(r.body["kind"], "Status", "{name}: {}", r.body);
                        assert_eq!(r.body["status"], "Success");
                    } else {
                        // Pods answer with the deleted object.
                        assert_eq!(r.body["kind"], "Pod");
                        assert_eq!(r.body["metadata"]["deletionGracePeriodSeconds"], 0);
                    }
                    continue;
                }
                // Pending: the object answers, with a deletionTimestamp.
                let m = &r.body["metadata"];
                assert!(m["deletionTimestamp"].is_string(), "{name}: {}", r.body);
                assert_eq!(
                    m["deletionGracePeriodSeconds"],
                    json!(kept),
                    "{name}: {}",
                    r.body
                );
                match finalizer {
                    Some(f) => assert_eq!(m["finalizers"], json!([f]), "{name}"),
                    None => assert!(m.get("finalizers").is_none(), "{name}"),
                }
                if *label == "deployment" {
                    assert_eq!(
                        m["generation"].as_i64(),
                        created_gen.as_i64().map(|g| g + 1),
                        "generation bumped once"
                    );
                }
                // A second DELETE of a terminating object changes nothing.
                let rv = m["resourceVersion"].clone();
                let again = delete(&s, &c, &path, grace, policy, variant + 1).await;
                assert_eq!(again.code, StatusCode::OK, "{name}: {}", again.body);
                assert_eq!(again.body["metadata"]["resourceVersion"], rv, "{name}");
                // Whoever owns the finalizer (here the test, standing in for the garbage
                // collector) finishes: the object goes at once, unless a kubelet still has to
                // stop the pod.
                if finalizer.is_some() {
                    let r = s
                        .json(
                            &c,
                            Method::PATCH,
                            &path,
                            Some(json!({"metadata": {"finalizers": null}})),
                        )
                        .await;
                    assert_eq!(r.code, StatusCode::OK, "{name}: {}", r.body);
                }
                if kept > 0 {
                    assert!(!gone(&s, &c, &path).await, "{name}: the kubelet removes it");
                    // What the kubelet does once the containers stopped.
                    let r = delete(&s, &c, &path, 0, "Background", 2).await;
                    assert_eq!(r.code, StatusCode::OK, "{name}: {}", r.body);
                }
                assert!(gone(&s, &c, &path).await, "{name} should be gone");
            }
        }
    }
}

#[tokio::test]
async fn options_defaults_warnings_and_errors() {
    let s = Server::start();
    let c = s.client();
    let base = "/api/v1/namespaces/default/configmaps";
    for n in ["a", "b", "c", "d", "e"] {
        let r = s.json(&c, Method::POST, base, Some(configmap(n))).await;
        assert_eq!(r.code, StatusCode::CREATED);
    }
    // Malformed protobuf: a 400 Status that says what is wrong; nothing is deleted.
    for body in [b"k8s\0\x0a\x7f".to_vec(), b"not protobuf".to_vec()] {
        let r = s
            .send(&c, Method::DELETE, &format!("{base}/a"), PB, Some(body))
            .await;
        assert_eq!(r.code, StatusCode::BAD_REQUEST, "{}", r.body);
        assert_eq!(r.body["kind"], "Status");
        assert_eq!(r.body["reason"], "BadRequest");
        assert!(!r.body["message"].as_str().unwrap().is_empty());
    }
    assert!(!gone(&s, &c, &format!("{base}/a")).await);
    // The deprecated orphanDependents: false on a pending deletion answers 202.
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{base}/a"),
            Some(json!({"metadata": {"finalizers": ["example.com/hold"]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK);
    let r = s
        .json(
            &c,
            Method::DELETE,
            &format!("{base}/a"),
            Some(json!({"orphanDependents": false})),
        )
        .await;
    assert_eq!(r.code, StatusCode::ACCEPTED, "{}", r.body);
    assert_eq!(
        r.body["metadata"]["finalizers"],
        json!(["example.com/hold"])
    );
    // orphanDependents: true → the orphan finalizer.
    let r = s
        .json(
            &c,
            Method::DELETE,
            &format!("{base}/b?orphanDependents=true"),
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["metadata"]["finalizers"], json!(["orphan"]));
    // Both set, or an unknown policy: 422 from ValidateDeleteOptions.
    let r = s
        .json(
            &c,
            Method::DELETE,
            &format!("{base}/c"),
            Some(json!({"orphanDependents": true, "propagationPolicy": "Orphan"})),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body["message"]
        .as_str()
        .unwrap()
        .contains("cannot be both set"));
    let r = s
        .send(
            &c,
            Method::DELETE,
            &format!("{base}/c"),
            PB,
            Some(delete_options_pb(None, Some("Sideways"))),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(!gone(&s, &c, &format!("{base}/c")).await);
    // A protobuf dry run deletes nothing.
    let dry = pb_envelope(
        "v1",
        "DeleteOptions",
        &meta::DeleteOptions {
            dry_run: vec!["All".into()],
            ..Default::default()
        },
    );
    let r = s
        .send(&c, Method::DELETE, &format!("{base}/c"), PB, Some(dry))
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert!(!gone(&s, &c, &format!("{base}/c")).await);
    // Preconditions in a protobuf body.
    let pre = pb_envelope(
        "v1",
        "DeleteOptions",
        &meta::DeleteOptions {
            preconditions: Some(meta::Preconditions {
                uid: Some("not-the-uid".into()),
                resource_version: None,
            }),
            ..Default::default()
        },
    );
    let r = s
        .send(&c, Method::DELETE, &format!("{base}/c"), PB, Some(pre))
        .await;
    assert_eq!(r.code, StatusCode::CONFLICT, "{}", r.body);
    // deletecollection with a protobuf body (as client-go's namespace controller sends it).
    let r = s
        .send(
            &c,
            Method::DELETE,
            &format!("{base}?labelSelector=x%21%3Dy"),
            PB,
            Some(delete_options_pb(Some(0), Some("Background"))),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["kind"], "ConfigMapList");
    for n in ["c", "d", "e"] {
        assert!(gone(&s, &c, &format!("{base}/{n}")).await, "{n}");
    }
    // Cluster-scoped, with a protobuf body.
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces",
            Some(json!({"metadata": {"name": "pb-ns"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED);
    let r = s
        .send(
            &c,
            Method::DELETE,
            "/api/v1/namespaces/pb-ns",
            PB,
            Some(delete_options_pb(Some(1), Some("Orphan"))),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["status"]["phase"], "Terminating");
    assert!(r.body["metadata"]
        .get("deletionGracePeriodSeconds")
        .is_none());

    // Default GC policies: core/v1 ReplicationControllers and batch/v1 Jobs orphan; a Job
    // deleted without a policy gets kube's warning.
    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
        "spec": {"template": {"metadata": {"labels": {"app": "rc"}}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}});
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/replicationcontrollers",
            Some(rc),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::DELETE,
            "/api/v1/namespaces/default/replicationcontrollers/rc",
            None,
        )
        .await;
    assert_eq!(
        r.body["metadata"]["finalizers"],
        json!(["orphan"]),
        "{}",
        r.body
    );
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x:1"}]}}}});
    let r = s
        .json(
            &c,
            Method::POST,
            "/apis/batch/v1/namespaces/default/jobs",
            Some(job),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::DELETE,
            "/apis/batch/v1/namespaces/default/jobs/j",
            None,
        )
        .await;
    assert_eq!(
        r.body["metadata"]["finalizers"],
        json!(["orphan"]),
        "{}",
        r.body
    );
    let warning = r
        .headers
        .get("warning")
        .and_then(|w| w.to_str().ok())
        .unwrap_or("");
    assert!(
        warning.contains("child pods are preserved by default"),
        "{warning:?}"
    );
}

/// `kubectl delete --cascade=orphan --grace-period=0` (kubectl sends gracePeriodSeconds 1
/// without --force) finishes once the orphan finalizer is removed.
#[test]
fn kubectl_orphan_delete_finishes() {
    // The garbage collector is off: the orphan finalizer stays until the test removes it.
    let s = Server::start_with(&["--controllers", "*,-garbage-collector"]);
    s.ok(&["create", "configmap", "orphaned", "--from-literal=a=b"]);
    s.ok(&[
        "delete",
        "configmap",
        "orphaned",
        "--cascade=orphan",
        "--grace-period=0",
        "--wait=false",
    ]);
    let out = s.ok(&["get", "configmap", "orphaned", "-o", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["metadata"]["deletionGracePeriodSeconds"], 0, "{v}");
    assert_eq!(v["metadata"]["finalizers"], json!(["orphan"]));
    s.ok(&[
        "patch",
        "configmap",
        "orphaned",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    let out = s.kubectl(&["get", "configmap", "orphaned"]);
    assert!(
        !out.status.success(),
        "still there: {}",
        support::stdout(&out)
    );
}

/// Deleting a CRD marks it Terminating under kube's cleanup finalizer, refuses new objects,
/// deletes the existing ones (in every namespace), then lets the definition go; kubectl waits
/// for all of it.
#[tokio::test]
async fn crd_deletion_removes_its_objects_first() {
    let s = Server::start();
    let c = s.client();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition", "metadata": {"name": "gizmos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let r = s.json(&c, Method::POST, crds, Some(crd)).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let path = |ns: &str| format!("/apis/example.com/v1/namespaces/{ns}/gizmos");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while s.json(&c, Method::GET, &path("default"), None).await.code != StatusCode::OK {
        assert!(std::time::Instant::now() < deadline, "gizmos never served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}});
    let r = s
        .json(&c, Method::POST, "/api/v1/namespaces", Some(ns))
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    for (ns, name) in [("default", "a"), ("default", "b"), ("other", "c")] {
        let g = json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
                       "metadata": {"name": name}});
        let r = s.json(&c, Method::POST, &path(ns), Some(g)).await;
        assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    }
    // One object waits for a finalizer of its own: the definition waits for it.
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{}/c", path("other")),
            Some(json!({"metadata": {"finalizers": ["example.com/hold"]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);

    let r = s
        .json(
            &c,
            Method::DELETE,
            &format!("{crds}/gizmos.example.com"),
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    let terminating = r.body["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Terminating")
        .cloned()
        .unwrap();
    assert_eq!(terminating["status"], "True");
    assert_eq!(terminating["reason"], "InstanceDeletionPending");

    // No new objects while it terminates.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let g = json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
                       "metadata": {"name": "late"}});
        let r = s.json(&c, Method::POST, &path("default"), Some(g)).await;
        if r.code == StatusCode::METHOD_NOT_ALLOWED {
            assert_eq!(
                r.body["message"],
                "create not allowed while custom resource definition is terminating"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{}", r.body);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // The finalizer deletes what it can; the held object stays, and so does the definition.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let r = s
            .json(&c, Method::GET, "/apis/example.com/v1/gizmos", None)
            .await;
        let left: Vec<&str> = r.body["items"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| i["metadata"]["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        if left == ["c"] {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{left:?}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let r = s
        .json(&c, Method::GET, &format!("{crds}/gizmos.example.com"), None)
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{}/c", path("other")),
            Some(json!({"metadata": {"finalizers": null}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    while s
        .json(&c, Method::GET, &format!("{crds}/gizmos.example.com"), None)
        .await
        .code
        != StatusCode::NOT_FOUND
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the definition stayed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}
