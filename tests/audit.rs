//! Audit logging end to end over real HTTPS: a policy with every level (omitStages and
//! omitManagedFields at rule and policy level), requests from kubectl and raw HTTP (create,
//! get, list, watch, patch, delete, a 403, a 401, a non-resource URL, impersonation, a
//! handler panic), the log lines parsed as `audit.k8s.io/v1` Events and checked field by
//! field per level; rotation with a tiny `--audit-log-maxsize`; the webhook backend
//! receiving EventLists from a TLS server the test starts; a webhook that is down blocks no
//! request and its dropped events are counted in /metrics; kube's refusals of bad policies.

mod support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};
use support::Server;

const TOKENS: &str = "tok-alice,alice,u1\ntok-bob,bob,u2,devs\n";

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["Panic-never-named-here-is-invalid"]
rules: []
"#;

/// The policy of the main test: every level, stages and managedFields per rule.
const MAIN_POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: false
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/openapi*", "/api", "/apis*", "/api/v1"]
- level: RequestResponse
  namespaces: ["audit-rr"]
  resources:
  - group: ""
    resources: ["configmaps"]
  omitManagedFields: true
- level: RequestResponse
  namespaces: ["audit-keep"]
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Request
  resources:
  - group: ""
    resources: ["secrets"]
  - group: apps
    resources: ["deployments"]
  omitStages: ["RequestReceived"]
- level: Metadata
  resources:
  - group: ""
    resources: ["configmaps", "pods", "namespaces", "endpoints"]
- level: Metadata
  nonResourceURLs: ["/version"]
- level: Metadata
  users: ["alice"]
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Every event in the log files given (each line must be an audit.k8s.io/v1 Event).
fn read_events(files: &[PathBuf]) -> Vec<Value> {
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for line in text.lines() {
            let ev: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            assert_eq!(ev["kind"], "Event", "{line}");
            assert_eq!(ev["apiVersion"], "audit.k8s.io/v1", "{line}");
            for k in [
                "level",
                "auditID",
                "stage",
                "requestURI",
                "verb",
                "requestReceivedTimestamp",
                "stageTimestamp",
            ] {
                assert!(ev.get(k).is_some(), "{k} missing: {line}");
            }
            for k in ["requestReceivedTimestamp", "stageTimestamp"] {
                let t = ev[k].as_str().unwrap();
                // RFC 3339 with microseconds: 2006-01-02T15:04:05.000000Z
                assert_eq!(t.len(), 27, "{k}: {t}");
                assert!(t.ends_with('Z') && t.as_bytes()[19] == b'.', "{k}: {t}");
            }
            out.push(ev);
        }
    }
    out
}

/// Waits (bounded) until `pred` holds for the events of `log`, returning them.
fn wait_events(log: &Path, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let evs = read_events(&[log.to_path_buf()]);
        if pred(&evs) {
            return evs;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not in the audit log within 15 s; events:\n{}",
            evs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn by_id<'a>(evs: &'a [Value], id: &str) -> Vec<&'a Value> {
    evs.iter().filter(|e| e["auditID"] == id).collect()
}

fn stages(evs: &[&Value]) -> Vec<String> {
    evs.iter()
        .map(|e| e["stage"].as_str().unwrap().to_string())
        .collect()
}

/// The events of requests matching `verb` and `uri` (prefix).
fn matching<'a>(evs: &'a [Value], verb: &str, uri: &str) -> Vec<&'a Value> {
    evs.iter()
        .filter(|e| e["verb"] == verb && e["requestURI"].as_str().unwrap().starts_with(uri))
        .collect()
}

fn last<'a>(evs: &[&'a Value], stage: &str) -> &'a Value {
    evs.iter()
        .rev()
        .find(|e| e["stage"] == stage)
        .copied()
        .unwrap_or_else(|| panic!("no {stage} event in {evs:?}"))
}

fn admin_user(ev: &Value) {
    assert_eq!(ev["user"]["username"], "admin", "{ev}");
    let groups = ev["user"]["groups"].as_array().unwrap();
    assert!(groups.contains(&json!("system:masters")), "{ev}");
    assert_eq!(ev["sourceIPs"], json!(["127.0.0.1"]), "{ev}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_levels_stages_and_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = write(tmp.path(), "policy.yaml", MAIN_POLICY);
    let tokens = write(tmp.path(), "tokens.csv", TOKENS);
    let log = tmp.path().join("logs/audit.log");
    let s = Server::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
        "--token-auth-file",
        tokens.to_str().unwrap(),
        "--test-fault",
        "handler-panic",
    ]);
    let admin = s.client();
    let anon = s.anonymous_client();
    for ns in ["audit-rr", "audit-keep", "audit-md"] {
        s.ok(&["create", "namespace", ns]);
    }

    // RequestResponse, managedFields omitted: kubectl create.
    s.ok(&[
        "create",
        "configmap",
        "cm1",
        "-n",
        "audit-rr",
        "--from-literal=a=b",
    ]);
    let evs = read_events(&[log.clone()]);
    let create = matching(&evs, "create", "/api/v1/namespaces/audit-rr/configmaps");
    assert_eq!(
        stages(&create),
        ["RequestReceived", "ResponseComplete"],
        "{create:?}"
    );
    let (rr, done) = (create[0], create[1]);
    assert_eq!(rr["auditID"], done["auditID"]);
    assert_eq!(rr["level"], "RequestResponse");
    assert!(rr.get("responseStatus").is_none() && rr.get("requestObject").is_none());
    assert_eq!(rr["requestReceivedTimestamp"], rr["stageTimestamp"]);
    admin_user(done);
    assert!(done["userAgent"].as_str().unwrap().starts_with("kubectl"));
    assert_eq!(
        done["objectRef"],
        json!({"resource": "configmaps", "namespace": "audit-rr", "name": "cm1", "apiVersion": "v1"})
    );
    assert_eq!(done["responseStatus"], json!({"metadata": {}, "code": 201}));
    assert_eq!(done["requestObject"]["kind"], "ConfigMap");
    assert_eq!(done["requestObject"]["data"], json!({"a": "b"}));
    assert_eq!(done["responseObject"]["metadata"]["name"], "cm1");
    assert!(done["responseObject"]["metadata"]["uid"].is_string());
    assert!(
        done["responseObject"]["metadata"]
            .get("managedFields")
            .is_none(),
        "{done}"
    );
    assert_eq!(
        done["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    assert_eq!(done["annotations"]["authorization.k8s.io/reason"], "");

    // The Audit-Id response header is the event's auditID; a client's own is kept.
    let r = admin
        .get(format!(
            "{}/api/v1/namespaces/audit-rr/configmaps/cm1",
            s.url
        ))
        .header("Audit-ID", "my-audit-id-1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["audit-id"], "my-audit-id-1");
    let get = r.json::<Value>().await.unwrap();
    let evs = read_events(&[log.clone()]);
    let mine = by_id(&evs, "my-audit-id-1");
    assert_eq!(stages(&mine), ["RequestReceived", "ResponseComplete"]);
    assert_eq!(mine[1]["verb"], "get");
    assert_eq!(
        mine[1]["responseObject"]["metadata"]["uid"],
        get["metadata"]["uid"]
    );
    assert!(mine[1].get("requestObject").is_none());
    let r = anon.get(format!("{}/healthz", s.url)).send().await.unwrap();
    assert!(r.headers().get("audit-id").is_some_and(|v| v.len() == 36));

    // kubectl's list is a Table, recorded as kube records it.
    s.ok(&["get", "configmaps", "-n", "audit-rr"]);
    let evs = read_events(&[log.clone()]);
    let list = matching(&evs, "list", "/api/v1/namespaces/audit-rr/configmaps");
    let done = last(&list, "ResponseComplete");
    assert_eq!(done["responseObject"]["kind"], "Table", "{done}");
    assert_eq!(done["objectRef"]["name"], Value::Null);

    // A merge patch: the patch as sent is the request object.
    let r = s
        .json(
            &admin,
            Method::PATCH,
            "/api/v1/namespaces/audit-rr/configmaps/cm1",
            Some(json!({"data": {"c": "d"}})),
        )
        .await;
    assert_eq!(r.code, 200);
    let id = r.headers["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let patch = by_id(&evs, &id);
    assert_eq!(patch[1]["verb"], "patch");
    assert_eq!(patch[1]["requestObject"], json!({"data": {"c": "d"}}));
    assert_eq!(
        patch[1]["responseObject"]["data"],
        json!({"a": "b", "c": "d"})
    );

    // A watch is long-running: ResponseStarted when it starts, ResponseComplete when it ends.
    let r = admin
        .get(format!(
            "{}/api/v1/namespaces/audit-rr/configmaps?watch=true&timeoutSeconds=1",
            s.url
        ))
        .send()
        .await
        .unwrap();
    let id = r.headers()["audit-id"].to_str().unwrap().to_string();
    let _ = tokio::time::timeout(Duration::from_secs(10), r.bytes()).await;
    let evs = wait_events(&log, "the watch's ResponseComplete", |evs| {
        by_id(evs, &id).len() == 3
    });
    let watch = by_id(&evs, &id);
    assert_eq!(
        stages(&watch),
        ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    );
    assert_eq!(watch[1]["verb"], "watch");
    assert_eq!(watch[1]["responseStatus"]["code"], 200);
    assert!(watch[2].get("responseObject").is_none());

    // kubectl delete: the DeleteOptions are the request object.
    s.ok(&["delete", "configmap", "cm1", "-n", "audit-rr"]);
    let evs = read_events(&[log.clone()]);
    let del = matching(&evs, "delete", "/api/v1/namespaces/audit-rr/configmaps/cm1");
    let done = last(&del, "ResponseComplete");
    assert_eq!(done["requestObject"]["kind"], "DeleteOptions", "{done}");
    assert_eq!(done["objectRef"]["name"], "cm1");
    assert_eq!(done["responseStatus"]["code"], 200);

    // Server-side apply writes managedFields: omitted where the rule says so, kept where
    // it does not.
    for ns in ["audit-rr", "audit-keep"] {
        s.ok_stdin(
            &[
                "apply",
                "--server-side",
                "--field-manager",
                "audit-test",
                "-n",
                ns,
                "-f",
                "-",
            ],
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\n",
        );
    }
    let evs = read_events(&[log.clone()]);
    let applied = |ns: &str| {
        let evs = matching(
            &evs,
            "patch",
            &format!("/api/v1/namespaces/{ns}/configmaps/applied"),
        );
        last(&evs, "ResponseComplete").clone()
    };
    let omitted = applied("audit-rr");
    assert_eq!(
        omitted["requestObject"]["data"],
        json!({"k": "v"}),
        "{omitted}"
    );
    assert_eq!(omitted["responseObject"]["data"], json!({"k": "v"}));
    assert!(
        omitted["responseObject"]["metadata"]
            .get("managedFields")
            .is_none(),
        "{omitted}"
    );
    let kept = applied("audit-keep");
    assert_eq!(
        kept["responseObject"]["metadata"]["managedFields"][0]["manager"], "audit-test",
        "{kept}"
    );

    // Request level (RequestReceived omitted by the rule): the Secret's body is in the
    // create's request object and nowhere else.
    s.ok(&[
        "create",
        "secret",
        "generic",
        "s1",
        "-n",
        "audit-md",
        "--from-literal=p=hunter2",
    ]);
    s.ok(&["get", "secret", "s1", "-n", "audit-md", "-o", "json"]);
    let evs = read_events(&[log.clone()]);
    let create = matching(&evs, "create", "/api/v1/namespaces/audit-md/secrets");
    assert_eq!(stages(&create), ["ResponseComplete"]);
    assert_eq!(create[0]["level"], "Request");
    assert_eq!(create[0]["requestObject"]["data"]["p"], "aHVudGVyMg==");
    assert!(create[0].get("responseObject").is_none());
    let get = matching(&evs, "get", "/api/v1/namespaces/audit-md/secrets/s1");
    assert_eq!(stages(&get), ["ResponseComplete"]);
    assert!(get[0].get("requestObject").is_none() && get[0].get("responseObject").is_none());
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches("aHVudGVyMg==").count(), 1);

    // The request object is what kube's decoder leaves: defaulted.
    s.ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        "audit-md",
        "--image=nginx",
    ]);
    let evs = read_events(&[log.clone()]);
    let dep = matching(
        &evs,
        "create",
        "/apis/apps/v1/namespaces/audit-md/deployments",
    );
    assert_eq!(dep[0]["objectRef"]["apiGroup"], "apps");
    assert_eq!(
        dep[0]["requestObject"]["spec"]["revisionHistoryLimit"], 10,
        "{}",
        dep[0]
    );
    assert_eq!(
        dep[0]["requestObject"]["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx"
    );

    // Metadata level: no bodies; the request object still names the object.
    let r = s
        .json(
            &admin,
            Method::POST,
            "/api/v1/namespaces/audit-md/configmaps",
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "md"}, "data": {"x": "secret-ish"}})),
        )
        .await;
    assert_eq!(r.code, 201);
    let id = r.headers["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let md = by_id(&evs, &id);
    assert_eq!(stages(&md), ["RequestReceived", "ResponseComplete"]);
    assert_eq!(md[1]["level"], "Metadata");
    assert_eq!(md[1]["objectRef"]["name"], "md");
    assert!(md[1].get("requestObject").is_none() && md[1].get("responseObject").is_none());
    // An update names the object's uid and resourceVersion.
    let mut obj = r.body.clone();
    obj["data"]["x"] = json!("y");
    let u = s
        .json(
            &admin,
            Method::PUT,
            "/api/v1/namespaces/audit-md/configmaps/md",
            Some(obj.clone()),
        )
        .await;
    assert_eq!(u.code, 200);
    let id = u.headers["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let up = by_id(&evs, &id);
    assert_eq!(up[1]["verb"], "update");
    assert_eq!(up[1]["objectRef"]["uid"], obj["metadata"]["uid"]);
    assert_eq!(
        up[1]["objectRef"]["resourceVersion"],
        obj["metadata"]["resourceVersion"]
    );

    // Annotations from the handler and admission: a deprecated API's, PodSecurity's.
    let r = admin
        .get(format!("{}/api/v1/namespaces/audit-md/endpoints", s.url))
        .send()
        .await
        .unwrap();
    let id = r.headers()["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let ep = by_id(&evs, &id);
    assert_eq!(
        ep[1]["annotations"]["k8s.io/deprecated"], "true",
        "{}",
        ep[1]
    );
    s.ok(&[
        "label",
        "namespace",
        "audit-md",
        "pod-security.kubernetes.io/enforce=restricted",
    ]);
    let r = s
        .json(
            &admin,
            Method::POST,
            "/api/v1/namespaces/audit-md/pods",
            Some(
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
            ),
        )
        .await;
    assert_eq!(r.code, 403, "{}", r.body);
    let id = r.headers["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let pod = by_id(&evs, &id);
    assert_eq!(
        pod[1]["annotations"]["pod-security.kubernetes.io/enforce-policy"], "restricted:latest",
        "{}",
        pod[1]
    );
    assert_eq!(pod[1]["responseStatus"]["reason"], "Forbidden");

    // A non-resource URL: the lower-cased method as verb, no objectRef.
    let r = admin
        .get(format!("{}/version", s.url))
        .header("X-Forwarded-For", "10.1.2.3, 10.4.5.6")
        .send()
        .await
        .unwrap();
    let id = r.headers()["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let v = by_id(&evs, &id);
    assert_eq!(v[1]["verb"], "get");
    assert_eq!(v[1]["requestURI"], "/version");
    assert!(v[1].get("objectRef").is_none());
    assert_eq!(
        v[1]["sourceIPs"],
        json!(["10.1.2.3", "10.4.5.6", "127.0.0.1"])
    );
    // Discovery is at None: never logged.
    assert!(matching(&evs, "get", "/apis").is_empty());

    // A 403 for a user without rights: kube's Status and the authorizer's decision.
    let r = anon
        .get(format!("{}/api/v1/namespaces/default/pods", s.url))
        .bearer_auth("tok-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let id = r.headers()["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let f = by_id(&evs, &id);
    assert_eq!(f[1]["user"]["username"], "alice");
    assert_eq!(f[1]["user"]["uid"], "u1");
    assert_eq!(f[1]["responseStatus"]["code"], 403);
    assert_eq!(f[1]["responseStatus"]["status"], "Failure");
    assert_eq!(f[1]["responseStatus"]["reason"], "Forbidden");
    assert_eq!(
        f[1]["responseStatus"]["message"],
        "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
    );
    assert_eq!(
        f[1]["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );

    // RBAC's reason for an allowed request.
    s.ok(&[
        "create",
        "rolebinding",
        "alice-view",
        "-n",
        "audit-md",
        "--clusterrole=view",
        "--user=alice",
    ]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let allowed = loop {
        let r = anon
            .get(format!("{}/api/v1/namespaces/audit-md/configmaps", s.url))
            .bearer_auth("tok-alice")
            .send()
            .await
            .unwrap();
        if r.status() == 200 {
            break r.headers()["audit-id"].to_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "alice never allowed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let evs = read_events(&[log.clone()]);
    let a = by_id(&evs, &allowed);
    assert_eq!(
        a[1]["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    assert_eq!(
        a[1]["annotations"]["authorization.k8s.io/reason"],
        "RBAC: allowed by RoleBinding \"alice-view/audit-md\" of ClusterRole \"view\" to User \"alice\""
    );

    // Impersonation: the policy and `user` are the real user; `impersonatedUser` whom it
    // acts as, and authorization decides for the impersonated user.
    let out = s.kubectl(&["get", "configmaps", "-n", "default", "--as", "alice"]);
    assert!(!out.status.success());
    let out = s.kubectl(&[
        "get",
        "configmaps",
        "-n",
        "audit-md",
        "--as",
        "alice",
        "--as-group",
        "devs",
    ]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let evs = read_events(&[log.clone()]);
    let denied = matching(&evs, "list", "/api/v1/namespaces/default/configmaps");
    let denied = last(&denied, "ResponseComplete");
    admin_user(denied);
    assert_eq!(denied["impersonatedUser"]["username"], "alice", "{denied}");
    assert_eq!(denied["responseStatus"]["code"], 403);
    assert_eq!(
        denied["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );
    let ok = matching(&evs, "list", "/api/v1/namespaces/audit-md/configmaps");
    let ok = last(&ok, "ResponseComplete");
    admin_user(ok);
    assert_eq!(ok["impersonatedUser"]["username"], "alice");
    assert_eq!(
        ok["impersonatedUser"]["groups"],
        json!(["devs", "system:authenticated"])
    );
    assert_eq!(ok["responseStatus"]["code"], 200);

    // A credential that fails: one ResponseStarted event with the 401 and no user.
    let r = anon
        .get(format!("{}/version", s.url))
        .bearer_auth("no-such-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let id = r.headers()["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let u = by_id(&evs, &id);
    assert_eq!(stages(&u), ["ResponseStarted"]);
    assert_eq!(u[0]["user"], json!({}));
    assert_eq!(u[0]["responseStatus"]["code"], 401);
    assert_eq!(u[0]["responseStatus"]["reason"], "Unauthorized");

    // A handler panic: the Panic stage with kube's 500.
    let r = admin
        .get(format!(
            "{}/api/v1/namespaces/audit-md/configmaps/panic-handler",
            s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    let id = r.headers()["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    let p = by_id(&evs, &id);
    assert_eq!(stages(&p), ["RequestReceived", "Panic"]);
    assert_eq!(p[1]["responseStatus"]["code"], 500);
    assert_eq!(p[1]["responseStatus"]["reason"], "InternalError");
    assert_eq!(
        p[1]["responseStatus"]["message"],
        "APIServer panic'd: test fault: handler-panic"
    );

    // Level None: a request no rule matches is never logged.
    let r = anon
        .get(format!("{}/api/v1/namespaces/default/services", s.url))
        .bearer_auth("tok-bob")
        .send()
        .await
        .unwrap();
    let id = r.headers()["audit-id"].to_str().unwrap().to_string();
    let evs = read_events(&[log.clone()]);
    assert!(by_id(&evs, &id).is_empty());

    // The counters.
    let metrics = admin
        .get(format!("{}/metrics", s.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let value = |name: &str| -> f64 {
        metrics
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    assert!(value("apiserver_audit_event_total") >= evs.len() as f64);
    assert!(value("apiserver_audit_level_total{level=\"None\"}") >= 1.0);
    assert!(value("apiserver_audit_level_total{level=\"RequestResponse\"}") >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_rotation_with_a_tiny_maxsize() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = write(
        tmp.path(),
        "policy.yaml",
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources:\n  - group: \"\"\n    resources: [\"configmaps\"]\n",
    );
    let log = tmp.path().join("audit.log");
    let s = Server::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
        "--audit-log-maxsize",
        "1",
        "--audit-log-maxbackup",
        "2",
    ]);
    let admin = s.client();
    let big = "x".repeat(200 * 1024);
    for i in 0..10 {
        let r = s
            .json(
                &admin,
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("big-{i}")}, "data": {"big": big}})),
            )
            .await;
        assert_eq!(r.code, 201);
        // Backup names carry milliseconds.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("audit") && n.ends_with(".log")
        })
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!(names[2], "audit.log");
    for n in &names[..2] {
        // audit-2006-01-02T15-04-05.000.log
        assert!(n.starts_with("audit-20") && n.len() == 33, "{n}");
    }
    for f in &files {
        assert!(std::fs::metadata(f).unwrap().len() <= 1024 * 1024, "{f:?}");
    }
    let evs = read_events(&files);
    // The newest requests are all there, whole.
    let last = evs
        .iter()
        .filter(|e| e["stage"] == "ResponseComplete")
        .next_back()
        .unwrap();
    assert_eq!(last["objectRef"]["name"], "big-9");
    assert_eq!(
        last["requestObject"]["data"]["big"].as_str().unwrap().len(),
        big.len()
    );
}

/// A kubeconfig for a webhook at `url` trusting `ca`.
fn webhook_kubeconfig(dir: &Path, url: &str, ca: &Path) -> PathBuf {
    write(
        dir,
        "audit-webhook.kubeconfig",
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: audit\n  cluster:\n    server: {url}\n    certificate-authority: {}\nusers:\n- name: apiserver\n  user:\n    token: audit-secret\ncontexts:\n- name: audit\n  context: {{cluster: audit, user: apiserver}}\ncurrent-context: audit\n",
            ca.display()
        ),
    )
}

const METADATA_POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [\"/readyz*\", \"/metrics\"]\n- level: Metadata\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_backend_receives_event_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let got: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let port = support::tls_server_async(
        tmp.path(),
        "audit",
        &["127.0.0.1"],
        Arc::new({
            let got = got.clone();
            move |_path: String, headers: http::HeaderMap, body: bytes::Bytes| {
                let got = got.clone();
                Box::pin(async move {
                    let auth = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    got.lock()
                        .unwrap()
                        .push((auth, serde_json::from_slice(&body).unwrap_or_default()));
                    (200, "{}".to_string())
                })
            }
        }),
    )
    .await;
    let kc = webhook_kubeconfig(
        tmp.path(),
        &format!("https://127.0.0.1:{port}/audit"),
        &tmp.path().join("audit-ca.crt"),
    );
    let policy = write(tmp.path(), "policy.yaml", METADATA_POLICY);
    let s = Server::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-webhook-config-file",
        kc.to_str().unwrap(),
        "--audit-webhook-batch-max-wait",
        "1s",
    ]);
    s.ok(&["create", "configmap", "hooked", "--from-literal=a=b"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let (auth, list, item) = loop {
        let found = got.lock().unwrap().iter().find_map(|(auth, list)| {
            list["items"]
                .as_array()?
                .iter()
                .find(|e| e["objectRef"]["name"] == "hooked" && e["stage"] == "ResponseComplete")
                .map(|e| (auth.clone(), list.clone(), e.clone()))
        });
        if let Some(f) = found {
            break f;
        }
        assert!(
            Instant::now() < deadline,
            "the webhook never got the create's event: {:?}",
            got.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(auth, "Bearer audit-secret");
    assert_eq!(list["kind"], "EventList");
    assert_eq!(list["apiVersion"], "audit.k8s.io/v1");
    assert!(item.get("kind").is_none() && item.get("apiVersion").is_none());
    assert_eq!(item["level"], "Metadata");
    assert_eq!(item["verb"], "create");
    assert_eq!(item["user"]["username"], "admin");
    assert_eq!(item["responseStatus"]["code"], 201);
    assert!(item.get("requestObject").is_none());
    // Batching: the RequestReceived and ResponseComplete of one request travel together
    // within the wait (one list holds more than one event at some point).
    assert!(got
        .lock()
        .unwrap()
        .iter()
        .any(|(_, l)| l["items"].as_array().is_some_and(|i| i.len() > 1)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_is_down_blocks_nothing_and_drops_are_counted() {
    let tmp = tempfile::tempdir().unwrap();
    // A CA for a server that never listens.
    let _ = support::tls_server_async(
        tmp.path(),
        "down",
        &["127.0.0.1"],
        Arc::new(|_: String, _: http::HeaderMap, _: bytes::Bytes| {
            Box::pin(async { (200, "{}".to_string()) })
        }),
    )
    .await;
    let dead = support::free_port();
    let kc = webhook_kubeconfig(
        tmp.path(),
        &format!("https://127.0.0.1:{dead}/audit"),
        &tmp.path().join("down-ca.crt"),
    );
    let policy = write(tmp.path(), "policy.yaml", METADATA_POLICY);
    let s = Server::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-webhook-config-file",
        kc.to_str().unwrap(),
        "--audit-webhook-initial-backoff",
        "100ms",
        "--audit-webhook-batch-buffer-size",
        "2",
        "--audit-webhook-batch-max-size",
        "1",
        "--audit-webhook-batch-throttle-qps",
        "1",
        "--audit-webhook-batch-throttle-burst",
        "1",
    ]);
    let admin = s.client();
    let started = Instant::now();
    for i in 0..40 {
        let t = Instant::now();
        let r = s
            .json(
                &admin,
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("down-{i}")}})),
            )
            .await;
        assert_eq!(r.code, 201);
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "request {i} took {:?}",
            t.elapsed()
        );
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let m = admin
            .get(format!("{}/metrics", s.url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let count = |plugin: &str| -> f64 {
            m.lines()
                .find(|l| {
                    l.starts_with(&format!(
                        "apiserver_audit_error_total{{plugin=\"{plugin}\"}}"
                    ))
                })
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0)
        };
        // Dropped from the full buffer, and failed after the webhook's retries.
        if count("buffered") >= 1.0 && count("webhook") >= 1.0 {
            break;
        }
        assert!(Instant::now() < deadline, "drops not counted: {m}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `rafter serve` with `args`: its exit status and stderr (bounded).
fn serve_fails(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("timeout")
        .arg("30")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .arg("serve")
        .arg("--data-dir")
        .arg(tmp.path())
        .arg("--listen")
        .arg(format!("127.0.0.1:{}", support::free_port()))
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success(), "started with {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn invalid_policies_and_flags_refuse_to_start() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = write(tmp.path(), "bad.yaml", POLICY);
    let err = serve_fails(&["--audit-policy-file", bad.to_str().unwrap()]);
    assert!(
        err.contains(&format!(
            "loading audit policy file: omitStages[0]: Invalid value: \"Panic-never-named-here-is-invalid\": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic: from file {}",
            bad.display()
        )),
        "{err}"
    );
    let beta = write(
        tmp.path(),
        "beta.yaml",
        "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n",
    );
    let err = serve_fails(&["--audit-policy-file", beta.to_str().unwrap()]);
    assert!(
        err.contains("no kind \"Policy\" is registered for version \"audit.k8s.io/v1beta1\""),
        "{err}"
    );
    let ok = write(tmp.path(), "ok.yaml", METADATA_POLICY);
    let err = serve_fails(&[
        "--audit-policy-file",
        ok.to_str().unwrap(),
        "--audit-log-path",
        tmp.path().join("a.log").to_str().unwrap(),
        "--audit-log-mode",
        "sometimes",
    ]);
    assert!(
        err.contains(
            "invalid audit log mode sometimes, allowed modes are \"batch,blocking,blocking-strict\""
        ),
        "{err}"
    );
    let err = serve_fails(&[
        "--audit-log-path",
        tmp.path().join("a.log").to_str().unwrap(),
        "--audit-log-maxage",
        "-1",
    ]);
    assert!(
        err.contains("--audit-log-maxage -1 can't be a negative number"),
        "{err}"
    );
}
