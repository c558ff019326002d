//! ValidatingAdmissionPolicy over real HTTPS, one server for every case: ConfigMap params by
//! name (with `parameterNotFoundAction: Deny`) and by selector (once per param, `Allow` when
//! none), a policy applying within a second of its binding, Warn (the client's `Warning`
//! header) and Audit actions, `messageExpression` and `reason`, `matchConditions`,
//! `failurePolicy` Fail and Ignore on an evaluation error, the authorizer library checked
//! with a token user and RBAC, the exemption of the policies themselves and the leader's
//! `status.observedGeneration`; kube's codes and messages throughout.

mod support;

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const TOKENS: &str = "tok-alice,alice,u1\n";
const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

async fn call(
    s: &Server,
    token: Option<&str>,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> support::Reply {
    let client = match token {
        None => s.client(),
        Some(_) => s.anonymous_client(),
    };
    let ctype = if method == Method::PATCH {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    let mut r = client.request(method, format!("{}{path}", s.url));
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    if let Some(b) = body {
        r = r.header("content-type", ctype).body(b.to_string());
    }
    let resp = r.send().await.unwrap();
    let code = resp.status();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    support::Reply {
        code,
        headers,
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
    }
}

async fn admin(s: &Server, method: Method, path: &str, body: Option<Value>) -> Value {
    let r = call(s, None, method.clone(), path, body).await;
    assert!(
        r.code.is_success(),
        "{method} {path}: {} {}",
        r.code,
        r.body
    );
    r.body
}

fn deployment(name: &str, replicas: i64, labels: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        }
    })
}

fn deployments(ns: &str) -> String {
    format!("/apis/apps/v1/namespaces/{ns}/deployments")
}

async fn namespace(s: &Server, name: &str) {
    admin(
        s,
        Method::POST,
        "/api/v1/namespaces",
        Some(json!({"metadata": {"name": name, "labels": {"policy-test": name}}})),
    )
    .await;
}

/// A policy on creates and updates of Deployments.
async fn policy(s: &Server, name: &str, extra: Value) {
    let mut spec = json!({
        "matchConstraints": {"resourceRules": [{
            "apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]}
    });
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    admin(
        s,
        Method::POST,
        POLICIES,
        Some(json!({"metadata": {"name": name}, "spec": spec})),
    )
    .await;
}

/// A binding of `policy` limited to namespace `ns`.
async fn binding(s: &Server, name: &str, policy: &str, ns: &str, extra: Value) {
    let mut spec = json!({
        "policyName": policy,
        "validationActions": ["Deny"],
        "matchResources": {"namespaceSelector": {"matchLabels": {"policy-test": ns}}}
    });
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    admin(
        s,
        Method::POST,
        BINDINGS,
        Some(json!({"metadata": {"name": name}, "spec": spec})),
    )
    .await;
}

fn denied(r: &support::Reply, code: StatusCode, reason: &str, message: &str) {
    assert_eq!(r.code, code, "{}", r.body);
    assert_eq!(r.body["reason"], reason, "{}", r.body);
    assert_eq!(r.body["message"], message, "{}", r.body);
    assert_eq!(
        r.body["details"]["causes"][0]["message"],
        message.split_once("is forbidden: ").unwrap().1,
        "{}",
        r.body
    );
}

/// Sends `body` to `path` (as `token`, or the admin) until `done` holds of the reply, for
/// at most `within`; the last reply and the time it took.
async fn post_until(
    s: &Server,
    token: Option<&str>,
    path: &str,
    body: Value,
    within: Duration,
    done: impl Fn(&support::Reply) -> bool,
) -> (support::Reply, Duration) {
    let t = Instant::now();
    loop {
        let r = call(s, token, Method::POST, path, Some(body.clone())).await;
        if done(&r) {
            return (r, t.elapsed());
        }
        assert!(
            t.elapsed() < within,
            "not within {within:?}: {} {}",
            r.code,
            r.body
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn refused(r: &support::Reply) -> bool {
    r.code != StatusCode::CREATED
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validating_admission_policies() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).unwrap();
    let s = Server::start_with(&["--token-auth-file", tokens.to_str().unwrap()]);

    // --- params by name, Deny when missing; applies within a second of the binding
    namespace(&s, "vap-params").await;
    policy(
        &s,
        "max-replicas",
        json!({
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{
                "expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                "messageExpression": "'replicas ' + string(object.spec.replicas) + ' exceed ' + params.data.maxReplicas"
            }]
        }),
    )
    .await;
    binding(
        &s,
        "max-replicas-by-name",
        "max-replicas",
        "vap-params",
        json!({"paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"}}),
    )
    .await;
    let path = deployments("vap-params");
    let (last, took) = post_until(
        &s,
        None,
        &format!("{path}?dryRun=All"),
        deployment("d0", 1, json!({})),
        Duration::from_secs(5),
        refused,
    )
    .await;
    assert!(took < Duration::from_secs(1), "{took:?}");
    denied(
        &last,
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        "deployments.apps \"d0\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-by-name' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    admin(
        &s,
        Method::POST,
        "/api/v1/namespaces/vap-params/configmaps",
        Some(json!({"metadata": {"name": "limits"}, "data": {"maxReplicas": "3"}})),
    )
    .await;
    let (r, _) = post_until(
        &s,
        None,
        &path,
        deployment("d5", 5, json!({})),
        Duration::from_secs(5),
        |r| {
            r.body["message"]
                .as_str()
                .is_some_and(|m| !m.contains("no params found"))
        },
    )
    .await;
    denied(
        &r,
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        "deployments.apps \"d5\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-by-name' denied request: replicas 5 exceed 3",
    );
    admin(
        &s,
        Method::POST,
        &path,
        Some(deployment("d2", 2, json!({}))),
    )
    .await;
    // an update is checked too
    let r = call(
        &s,
        None,
        Method::PATCH,
        &format!("{path}/d2"),
        Some(json!({"spec": {"replicas": 4}})),
    )
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);

    // --- params by selector: evaluated once per param; none found with Allow admits
    namespace(&s, "vap-selector").await;
    binding(
        &s,
        "max-replicas-by-selector",
        "max-replicas",
        "vap-selector",
        json!({"paramRef": {"selector": {"matchLabels": {"limit": "yes"}}, "parameterNotFoundAction": "Allow"}}),
    )
    .await;
    let path = deployments("vap-selector");
    tokio::time::sleep(Duration::from_millis(300)).await;
    admin(
        &s,
        Method::POST,
        &path,
        Some(deployment("free", 9, json!({}))),
    )
    .await;
    for (name, max) in [("four", "4"), ("two", "2")] {
        admin(
            &s,
            Method::POST,
            "/api/v1/namespaces/vap-selector/configmaps",
            Some(json!({"metadata": {"name": name, "labels": {"limit": "yes"}}, "data": {"maxReplicas": max}})),
        )
        .await;
    }
    admin(
        &s,
        Method::POST,
        "/api/v1/namespaces/vap-selector/configmaps",
        Some(json!({"metadata": {"name": "other"}, "data": {"maxReplicas": "0"}})),
    )
    .await;
    let (r, _) = post_until(
        &s,
        None,
        &format!("{path}?dryRun=All"),
        deployment("three", 3, json!({})),
        Duration::from_secs(5),
        refused,
    )
    .await;
    denied(
        &r,
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        "deployments.apps \"three\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-by-selector' denied request: replicas 3 exceed 2",
    );
    assert_eq!(r.body["details"]["causes"].as_array().unwrap().len(), 1);
    admin(
        &s,
        Method::POST,
        &path,
        Some(deployment("one", 1, json!({}))),
    )
    .await;
    let r = call(
        &s,
        None,
        Method::POST,
        &path,
        Some(deployment("five", 5, json!({}))),
    )
    .await;
    // both params deny: the first decision is reported, both are causes
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);

    // --- Warn and Audit: admitted, with the warning sent to the client
    namespace(&s, "vap-warn").await;
    policy(
        &s,
        "names",
        json!({"validations": [{"expression": "object.metadata.name.startsWith('ok-')", "message": "name must start with ok-"}]}),
    )
    .await;
    binding(
        &s,
        "names-warn",
        "names",
        "vap-warn",
        json!({"validationActions": ["Warn", "Audit"]}),
    )
    .await;
    let path = deployments("vap-warn");
    let (r, _) = post_until(
        &s,
        None,
        &format!("{path}?dryRun=All"),
        deployment("bad", 1, json!({})),
        Duration::from_secs(5),
        |x| x.headers.get("warning").is_some(),
    )
    .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let warning = r.headers.get("warning").unwrap().to_str().unwrap();
    assert_eq!(
        warning,
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'names' with binding 'names-warn': name must start with ok-\""
    );
    let r = call(
        &s,
        None,
        Method::POST,
        &path,
        Some(deployment("ok-good", 1, json!({}))),
    )
    .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert!(r.headers.get("warning").is_none());

    // --- matchConditions and reason Forbidden
    namespace(&s, "vap-conditions").await;
    policy(
        &s,
        "strict",
        json!({
            "matchConditions": [{"name": "labelled", "expression": "has(object.metadata.labels) && 'strict' in object.metadata.labels"}],
            "validations": [{"expression": "object.spec.replicas == 1", "reason": "Forbidden"}]
        }),
    )
    .await;
    binding(&s, "strict", "strict", "vap-conditions", json!({})).await;
    let path = deployments("vap-conditions");
    let (r, _) = post_until(
        &s,
        None,
        &format!("{path}?dryRun=All"),
        deployment("labelled", 2, json!({"strict": "yes"})),
        Duration::from_secs(5),
        refused,
    )
    .await;
    denied(
        &r,
        StatusCode::FORBIDDEN,
        "Forbidden",
        "deployments.apps \"labelled\" is forbidden: ValidatingAdmissionPolicy 'strict' with binding 'strict' denied request: failed expression: object.spec.replicas == 1",
    );
    admin(
        &s,
        Method::POST,
        &path,
        Some(deployment("unlabelled", 2, json!({}))),
    )
    .await;

    // --- failurePolicy: an evaluation error denies under Fail, admits under Ignore
    namespace(&s, "vap-failure").await;
    policy(
        &s,
        "annotated",
        json!({
            "failurePolicy": "Fail",
            "validations": [{"expression": "object.metadata.annotations['team'] != ''"}]
        }),
    )
    .await;
    binding(&s, "annotated", "annotated", "vap-failure", json!({})).await;
    let path = deployments("vap-failure");
    let (r, _) = post_until(
        &s,
        None,
        &format!("{path}?dryRun=All"),
        deployment("plain", 1, json!({})),
        Duration::from_secs(5),
        refused,
    )
    .await;
    denied(
        &r,
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        "deployments.apps \"plain\" is forbidden: ValidatingAdmissionPolicy 'annotated' with binding 'annotated' denied request: expression 'object.metadata.annotations['team'] != ''' resulted in error: no such key: annotations",
    );
    admin(
        &s,
        Method::PATCH,
        &format!("{POLICIES}/annotated"),
        Some(json!({"spec": {"failurePolicy": "Ignore"}})),
    )
    .await;
    post_until(
        &s,
        None,
        &format!("{path}?dryRun=All"),
        deployment("plain", 1, json!({})),
        Duration::from_secs(1),
        |r| r.code == StatusCode::CREATED,
    )
    .await;

    // --- the authorizer library, for a token user with RBAC
    namespace(&s, "vap-authz").await;
    for (kind, name, rules) in [
        (
            "deploy",
            "vap-deploy",
            json!([{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]}]),
        ),
        (
            "secrets",
            "vap-secrets",
            json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]),
        ),
    ] {
        admin(
            &s,
            Method::POST,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            Some(json!({"metadata": {"name": name}, "rules": rules})),
        )
        .await;
        if kind == "deploy" {
            admin(
                &s,
                Method::POST,
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                Some(json!({
                    "metadata": {"name": name},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]
                })),
            )
            .await;
        }
    }
    policy(
        &s,
        "can-list-secrets",
        json!({"validations": [{
            "expression": "authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed() && authorizer.requestResource.check('create').allowed()",
            "messageExpression": "'user ' + request.userInfo.username + ' may not list secrets'"
        }]}),
    )
    .await;
    binding(
        &s,
        "can-list-secrets",
        "can-list-secrets",
        "vap-authz",
        json!({}),
    )
    .await;
    let path = deployments("vap-authz");
    let (r, _) = post_until(
        &s,
        Some("tok-alice"),
        &path,
        deployment("by-alice", 1, json!({})),
        Duration::from_secs(5),
        refused,
    )
    .await;
    denied(
        &r,
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        "deployments.apps \"by-alice\" is forbidden: ValidatingAdmissionPolicy 'can-list-secrets' with binding 'can-list-secrets' denied request: user alice may not list secrets",
    );
    // the admin (system:masters) may
    admin(
        &s,
        Method::POST,
        &path,
        Some(deployment("by-admin", 1, json!({}))),
    )
    .await;
    admin(
        &s,
        Method::POST,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/vap-authz/rolebindings",
        Some(json!({
            "metadata": {"name": "secrets"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "vap-secrets"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]
        })),
    )
    .await;
    post_until(
        &s,
        Some("tok-alice"),
        &path,
        deployment("by-alice", 1, json!({})),
        Duration::from_secs(5),
        |r| r.code == StatusCode::CREATED,
    )
    .await;

    // --- the policies themselves are exempt: a policy denying every admissionregistration
    // write does not stop its own binding
    policy(
        &s,
        "deny-registration",
        json!({
            "matchConstraints": {"resourceRules": [{"apiGroups": ["admissionregistration.k8s.io"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}]},
            "validations": [{"expression": "false"}]
        }),
    )
    .await;
    admin(
        &s,
        Method::POST,
        BINDINGS,
        Some(json!({"metadata": {"name": "deny-registration"}, "spec": {"policyName": "deny-registration", "validationActions": ["Deny"]}})),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    admin(
        &s,
        Method::DELETE,
        &format!("{BINDINGS}/deny-registration"),
        None,
    )
    .await;

    // --- the checks are counted as kube labels them
    let metrics = s
        .client()
        .get(format!("{}/metrics", s.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for (policy, binding, action) in [
        ("max-replicas", "max-replicas-by-name", "deny"),
        ("names", "names-warn", "warn"),
        ("names", "names-warn", "audit"),
    ] {
        assert!(
            metrics.lines().any(|l| l
                .starts_with("apiserver_validating_admission_policy_check_total{")
                && l.contains(&format!("policy=\"{policy}\""))
                && l.contains(&format!("policy_binding=\"{binding}\""))
                && l.contains("error_type=\"invalid_error\"")
                && l.contains(&format!("enforcement_action=\"{action}\""))),
            "{policy} {action}: {metrics}"
        );
    }
    assert!(metrics.contains("apiserver_validating_admission_policy_check_duration_seconds"));

    // --- the leader writes the observed generation and the type checking warnings
    policy(
        &s,
        "typo",
        json!({"validations": [{"expression": "object.spec.replicaz > 0"}]}),
    )
    .await;
    for name in ["annotated", "typo"] {
        let t = Instant::now();
        let p = loop {
            let p = admin(&s, Method::GET, &format!("{POLICIES}/{name}"), None).await;
            if p["status"]["observedGeneration"] == p["metadata"]["generation"] {
                break p;
            }
            assert!(t.elapsed() < Duration::from_secs(5), "{p}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let warnings = &p["status"]["typeChecking"]["expressionWarnings"];
        if name == "annotated" {
            assert!(warnings.is_null(), "{p}");
        } else {
            assert_eq!(
                warnings,
                &json!([{
                    "fieldRef": "spec.validations[0].expression",
                    "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 0\n | ...........^\n"
                }]),
                "{p}"
            );
        }
    }
}
