//! `pods/eviction` over real HTTPS: PodDisruptionBudgets honoured as kube's EvictionREST does
//! (429 with the budget's numbers, budget spent and recorded in `disruptedPods`, stale budgets,
//! several budgets, unready pods, dry run), Eviction bodies in protobuf, and `kubectl drain`.

mod support;

use k8s_pb::api::policy::v1 as policy;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::{pb_envelope, Server};

const PODS: &str = "/api/v1/namespaces/default/pods";
const PDBS: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";

fn eviction_pb(name: &str, dry_run: bool) -> Vec<u8> {
    let ev = policy::Eviction {
        metadata: Some(meta::ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        }),
        delete_options: Some(meta::DeleteOptions {
            dry_run: if dry_run { vec!["All".into()] } else { vec![] },
            ..Default::default()
        }),
    };
    pb_envelope("policy/v1", "Eviction", &ev)
}

async fn evict(s: &Server, c: &reqwest::Client, name: &str, dry_run: bool) -> support::Reply {
    s.send(
        c,
        Method::POST,
        &format!("{PODS}/{name}/eviction"),
        "application/vnd.kubernetes.protobuf",
        Some(eviction_pb(name, dry_run)),
    )
    .await
}

/// A pod on node-1, Running and Ready (as a kubelet would report it).
async fn running_pod(s: &Server, c: &reqwest::Client, name: &str, ready: bool) {
    let r = s
        .json(
            c,
            Method::POST,
            PODS,
            Some(json!({"metadata": {"name": name, "labels": {"app": "db"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "db:1"}]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let mut pod = r.body;
    pod["status"] = json!({"phase": "Running", "conditions": [
        {"type": "Ready", "status": if ready { "True" } else { "False" }}]});
    let r = s
        .json(c, Method::PUT, &format!("{PODS}/{name}/status"), Some(pod))
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
}

/// A PDB selecting app=db with the status the disruption controller would have written.
async fn budget(s: &Server, c: &reqwest::Client, name: &str, allowed: i64, observed: i64) -> Value {
    let r = s
        .json(
            c,
            Method::POST,
            PDBS,
            Some(json!({"metadata": {"name": name},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let mut pdb = r.body;
    pdb["status"] = json!({"disruptionsAllowed": allowed, "currentHealthy": 2, "desiredHealthy": 1,
        "expectedPods": 2, "observedGeneration": observed});
    let r = s
        .json(c, Method::PUT, &format!("{PDBS}/{name}/status"), Some(pdb))
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    r.body
}

async fn exists(s: &Server, c: &reqwest::Client, path: &str) -> Value {
    let r = s.json(c, Method::GET, path, None).await;
    assert_eq!(r.code, StatusCode::OK, "{path}: {}", r.body);
    r.body
}

#[tokio::test]
async fn budgets_are_honoured() {
    let s = Server::start();
    let c = s.client();
    let created = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});

    // A pending (unscheduled) pod costs no disruption: deleted at once.
    let r = s
        .json(
            &c,
            Method::POST,
            PODS,
            Some(
                json!({"metadata": {"name": "pending", "labels": {"app": "db"}},
            "spec": {"containers": [{"name": "c", "image": "db:1"}]}}),
            ),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED);
    let r = evict(&s, &c, "pending", false).await;
    assert_eq!((r.code, &r.body), (StatusCode::CREATED, &created));
    assert_eq!(
        s.json(&c, Method::GET, &format!("{PODS}/pending"), None)
            .await
            .code,
        StatusCode::NOT_FOUND
    );

    running_pod(&s, &c, "db-0", true).await;
    let pdb = budget(&s, &c, "db", 0, 1).await;
    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(0);
    // No disruption allowed: 429 with the budget's numbers; nothing changes.
    let r = evict(&s, &c, "db-0", false).await;
    assert_eq!(r.code, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    assert_eq!(r.body["reason"], "TooManyRequests");
    assert_eq!(
        r.body["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        r.body["details"]["causes"],
        json!([{"reason": "DisruptionBudget", "message": "The disruption budget db needs 1 healthy pods and has 2 currently"}])
    );
    let pod = exists(&s, &c, &format!("{PODS}/db-0")).await;
    assert!(pod["metadata"].get("deletionTimestamp").is_none());

    // One allowed: a dry run spends nothing, a real eviction spends it and records the pod.
    let mut p = exists(&s, &c, &format!("{PDBS}/db")).await;
    p["status"]["disruptionsAllowed"] = json!(1);
    p["status"]["observedGeneration"] = json!(generation);
    let r = s
        .json(&c, Method::PUT, &format!("{PDBS}/db/status"), Some(p))
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let r = evict(&s, &c, "db-0", true).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        exists(&s, &c, &format!("{PDBS}/db")).await["status"]["disruptionsAllowed"],
        1
    );
    assert!(exists(&s, &c, &format!("{PODS}/db-0")).await["metadata"]
        .get("deletionTimestamp")
        .is_none());
    let r = evict(&s, &c, "db-0", false).await;
    assert_eq!((r.code, &r.body), (StatusCode::CREATED, &created));
    let p = exists(&s, &c, &format!("{PDBS}/db")).await;
    assert_eq!(p["status"]["disruptionsAllowed"], 0);
    assert!(p["status"]["disruptedPods"]["db-0"].is_string(), "{p}");
    let cond = &p["status"]["conditions"][0];
    assert_eq!(
        (&cond["type"], &cond["status"], &cond["reason"]),
        (
            &json!("DisruptionAllowed"),
            &json!("False"),
            &json!("InsufficientPods")
        )
    );
    // The pod is on a node: it terminates gracefully (the kubelet finishes it).
    let pod = exists(&s, &c, &format!("{PODS}/db-0")).await;
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30);
    // Evicting a terminating pod again: no budget needed.
    let r = evict(&s, &c, "db-0", false).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);

    // A budget the controller has not observed yet: 429, still being processed.
    running_pod(&s, &c, "db-1", true).await;
    let mut p = exists(&s, &c, &format!("{PDBS}/db")).await;
    p["status"]["disruptionsAllowed"] = json!(1);
    p["status"]["observedGeneration"] = json!(generation - 1);
    s.json(&c, Method::PUT, &format!("{PDBS}/db/status"), Some(p))
        .await;
    if generation > 0 {
        let r = evict(&s, &c, "db-1", false).await;
        assert_eq!(r.code, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
        assert!(r.body["details"]["causes"][0]["message"]
            .as_str()
            .unwrap()
            .contains("still being processed"));
    }

    // An unready pod while enough are healthy: evicted without spending the budget.
    running_pod(&s, &c, "db-2", false).await;
    let mut p = exists(&s, &c, &format!("{PDBS}/db")).await;
    p["status"]["disruptionsAllowed"] = json!(0);
    p["status"]["observedGeneration"] = json!(generation);
    s.json(&c, Method::PUT, &format!("{PDBS}/db/status"), Some(p))
        .await;
    let r = evict(&s, &c, "db-2", false).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        exists(&s, &c, &format!("{PDBS}/db")).await["status"]["disruptionsAllowed"],
        0
    );

    // Two budgets for one pod: kube's 500.
    budget(&s, &c, "db-too", 5, 1).await;
    let r = evict(&s, &c, "db-1", false).await;
    assert_eq!(r.code, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );

    // Bad bodies.
    let r = s
        .json(&c, Method::POST, &format!("{PODS}/db-1/eviction"),
            Some(json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other"}})))
        .await;
    assert_eq!(r.code, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "name in URL does not match name in Eviction object"
    );
    let r = s
        .json(&c, Method::POST, &format!("{PODS}/ghost/eviction"),
            Some(json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "ghost"}})))
        .await;
    assert_eq!(r.code, StatusCode::NOT_FOUND, "{}", r.body);

    // Discovery lists the subresources (kubectl drain looks for pods/eviction there).
    let d = exists(&s, &c, "/api/v1").await;
    let names: Vec<&str> = d["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .filter(|n| matches!(*n, "pods/binding" | "pods/eviction"))
        .collect();
    assert_eq!(names, ["pods/binding", "pods/eviction"]);
}

#[test]
fn kubectl_drain_evicts() {
    let s = Server::start();
    s.ok_stdin(
        &["apply", "-f", "-"],
        r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default"},
   "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "x:1"}]}}]}"#,
    );
    let out = s.ok(&[
        "drain",
        "node-1",
        "--force",
        "--grace-period=0",
        "--timeout=60s",
    ]);
    assert!(
        out.contains("evicting pod default/a") || out.contains("pod/a evicted"),
        "{out}"
    );
    let node = s.ok(&[
        "get",
        "node",
        "node-1",
        "-o",
        "jsonpath={.spec.unschedulable}",
    ]);
    assert_eq!(node.trim(), "true");
    assert!(!s.kubectl(&["get", "pod", "a"]).status.success());
}
