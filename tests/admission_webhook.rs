//! Admission webhooks over real HTTPS: a TLS webhook server started here (its CA passed in
//! `caBundle`) that allows with warnings, denies with its own code and message, patches (and
//! so causes a reinvocation), answers late, answers garbage or with the wrong uid; a
//! refused connection and an unknown certificate authority; both failure policies; namespace
//! and object selectors; match conditions; `matchPolicy` Equivalent across autoscaling/v1
//! and v2; a dry run; a webhook reached through a Service reference (ExternalName); and the
//! rule that webhook configurations are never sent to webhooks. Codes and texts are kube's.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::{Reply, Server};

/// Every review the webhook server received: path and body (with the `authorization` header
/// the caller sent, under `_auth`).
type Calls = Arc<Mutex<Vec<(String, Value)>>>;

/// The answer of the test's webhook to a review at `path`.
fn answer(path: &str, review: &Value) -> (u16, String) {
    let uid = review["request"]["uid"].clone();
    let reply = |resp: Value| {
        let mut r = resp;
        r["uid"] = uid.clone();
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r})
            .to_string()
    };
    let b64 = |p: Value| base64::engine::general_purpose::STANDARD.encode(p.to_string());
    let obj = &review["request"]["object"];
    match path {
        "/deny" => (
            200,
            reply(
                json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "no thanks"}}),
            ),
        ),
        "/teapot" => (
            200,
            reply(json!({"allowed": false, "status": {"code": 418, "message": "short and stout"}})),
        ),
        "/label" => {
            let patch = if obj.pointer("/metadata/labels").is_some() {
                json!([{"op": "add", "path": "/metadata/labels/patched", "value": "yes"}])
            } else {
                json!([{"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}}])
            };
            (
                200,
                reply(json!({"allowed": true, "patchType": "JSONPatch", "patch": b64(patch)})),
            )
        }
        "/annotate" => {
            if obj.pointer("/metadata/annotations/second").is_some() {
                return (200, reply(json!({"allowed": true})));
            }
            let patch = if obj.pointer("/metadata/annotations").is_some() {
                json!([{"op": "add", "path": "/metadata/annotations/second", "value": "yes"}])
            } else {
                json!([{"op": "add", "path": "/metadata/annotations", "value": {"second": "yes"}}])
            };
            (
                200,
                reply(json!({"allowed": true, "patchType": "JSONPatch", "patch": b64(patch)})),
            )
        }
        "/garbage" => (200, "this is not json".into()),
        "/beta" => (
            200,
            json!({"response": {"allowed": false, "status": {"message": "beta says no"}}})
                .to_string(),
        ),
        "/wronguid" => (
            200,
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": {"uid": "nope", "allowed": true}})
            .to_string(),
        ),
        _ => (
            200,
            reply(
                json!({"allowed": true, "warnings": ["careful: the webhook saw this"],
                "auditAnnotations": {"seen": "yes"}}),
            ),
        ),
    }
}

/// The webhook server (certificate for 127.0.0.1 and `hook.default.svc`); `/slow` answers
/// after three seconds.
async fn webhook_server(dir: &std::path::Path, calls: Calls) -> u16 {
    support::tls_server_async(
        dir,
        "hook",
        &["127.0.0.1", "hook.default.svc"],
        Arc::new(
            move |path: String, headers: http::HeaderMap, body: bytes::Bytes| {
                let calls = calls.clone();
                Box::pin(async move {
                    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let mut logged = review.clone();
                    if let Some(a) = headers.get("authorization") {
                        logged["_auth"] = json!(a.to_str().unwrap_or(""));
                    }
                    calls.lock().unwrap().push((path.clone(), logged));
                    if path == "/slow" {
                        tokio::time::sleep(Duration::from_secs(3)).await;
                    }
                    answer(&path, &review)
                })
            },
        ),
    )
    .await
}

fn ca_bundle(dir: &std::path::Path, name: &str) -> String {
    base64::engine::general_purpose::STANDARD
        .encode(std::fs::read(dir.join(format!("{name}-ca.crt"))).unwrap())
}

/// A webhook on CREATE of `resources` in the core group, selected by the label
/// `hook: <selector>`.
fn hook(name: &str, url: &str, ca: &str, resources: &[&str], selector: &str) -> Value {
    json!({
        "name": name,
        "clientConfig": {"url": url, "caBundle": ca},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": resources}],
        "objectSelector": {"matchLabels": {"hook": selector}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 1,
    })
}

async fn create_config(s: &Server, kind: &str, name: &str, hooks: Vec<Value>) {
    let plural = match kind {
        "Validating" => "validatingwebhookconfigurations",
        _ => "mutatingwebhookconfigurations",
    };
    let r = s
        .json(
            &s.client(),
            Method::POST,
            &format!("/apis/admissionregistration.k8s.io/v1/{plural}"),
            Some(json!({
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": format!("{kind}WebhookConfiguration"),
                "metadata": {"name": name},
                "webhooks": hooks,
            })),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
}

async fn configmap(s: &Server, ns: &str, name: &str, labels: Value, query: &str) -> Reply {
    s.json(
        &s.client(),
        Method::POST,
        &format!("/api/v1/namespaces/{ns}/configmaps{query}"),
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": {"a": "b"}})),
    )
    .await
}

/// Creates ConfigMaps `<prefix>-<n>` with `labels` until the answer is `want` (a webhook
/// configuration takes effect once this replica's watch delivers it), within five seconds.
async fn until(s: &Server, prefix: &str, labels: Value, want: StatusCode) -> Reply {
    let deadline = Instant::now() + Duration::from_secs(5);
    for n in 0.. {
        let r = configmap(s, "default", &format!("{prefix}-{n}"), labels.clone(), "").await;
        if r.code == want || Instant::now() > deadline {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    unreachable!()
}

fn calls_to(calls: &Calls, path: &str) -> Vec<Value> {
    calls
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| p == path)
        .map(|(_, r)| r.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_allow_deny_fail_and_patch_as_kube_does() {
    let dir = tempfile::tempdir().unwrap();
    let calls: Calls = Arc::default();
    let port = webhook_server(dir.path(), calls.clone()).await;
    // A server whose CA is not the hook's: for the unknown-authority case.
    let _other = support::tls_server(
        dir.path(),
        "other",
        Arc::new(|_: &str, _: &[u8]| String::new()),
    )
    .await;
    let ca = ca_bundle(dir.path(), "hook");
    let other_ca = ca_bundle(dir.path(), "other");
    let base = format!("https://127.0.0.1:{port}");
    let closed = support::free_port();
    let s = Server::start();

    // allow (with a warning) and deny (the webhook's code and message)
    create_config(
        &s,
        "Validating",
        "basic",
        vec![
            hook(
                "deny.example.com",
                &format!("{base}/deny"),
                &ca,
                &["configmaps"],
                "deny",
            ),
            hook(
                "teapot.example.com",
                &format!("{base}/teapot"),
                &ca,
                &["configmaps"],
                "teapot",
            ),
            hook(
                "allow.example.com",
                &format!("{base}/allow"),
                &ca,
                &["configmaps"],
                "allow",
            ),
        ],
    )
    .await;
    let r = until(&s, "deny", json!({"hook": "deny"}), StatusCode::FORBIDDEN).await;
    assert_eq!(r.code, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.body["reason"], "Forbidden");
    assert_eq!(
        r.body["message"],
        "admission webhook \"deny.example.com\" denied the request: no thanks"
    );
    let r = configmap(&s, "default", "tea", json!({"hook": "teapot"}), "").await;
    assert_eq!(r.code.as_u16(), 418, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "admission webhook \"teapot.example.com\" denied the request: short and stout"
    );
    let r = configmap(&s, "default", "allowed", json!({"hook": "allow"}), "").await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let warning = r
        .headers
        .get("warning")
        .map(|w| w.to_str().unwrap().to_string());
    assert!(
        warning
            .as_deref()
            .is_some_and(|w| w.contains("careful: the webhook saw this")),
        "{warning:?}"
    );
    // not selected: not called
    let r = configmap(&s, "default", "unselected", json!({"hook": "none"}), "").await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let seen = calls_to(&calls, "/allow");
    let req = &seen.last().expect("the allowing webhook was called")["request"];
    assert_eq!(req["operation"], "CREATE");
    assert_eq!(
        req["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        req["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(req["requestKind"], req["kind"]);
    assert_eq!(req["namespace"], "default");
    assert_eq!(req["name"], "allowed");
    assert_eq!(req["dryRun"], false);
    assert_eq!(req["object"]["data"]["a"], "b");
    assert!(req["userInfo"]["username"].is_string(), "{req}");

    // failures: each kube's 500 under failurePolicy Fail, skipped under Ignore
    let mut slow = hook(
        "slow.example.com",
        &format!("{base}/slow"),
        &ca,
        &["configmaps"],
        "slow",
    );
    slow["timeoutSeconds"] = json!(1);
    let mut ignored = hook(
        "ignored.example.com",
        &format!("{base}/slow"),
        &ca,
        &["configmaps"],
        "ignored",
    );
    ignored["failurePolicy"] = json!("Ignore");
    create_config(
        &s,
        "Validating",
        "failures",
        vec![
            slow,
            ignored,
            hook(
                "refused.example.com",
                &format!("https://127.0.0.1:{closed}/x"),
                &ca,
                &["configmaps"],
                "refused",
            ),
            hook(
                "badcert.example.com",
                &format!("{base}/allow"),
                &other_ca,
                &["configmaps"],
                "badcert",
            ),
            hook(
                "garbage.example.com",
                &format!("{base}/garbage"),
                &ca,
                &["configmaps"],
                "garbage",
            ),
            hook(
                "uid.example.com",
                &format!("{base}/wronguid"),
                &ca,
                &["configmaps"],
                "uid",
            ),
        ],
    )
    .await;
    let r = until(
        &s,
        "slow",
        json!({"hook": "slow"}),
        StatusCode::INTERNAL_SERVER_ERROR,
    )
    .await;
    assert_eq!(r.code, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.body);
    assert_eq!(r.body["reason"], "InternalError");
    assert_eq!(
        r.body["message"],
        format!("Internal error occurred: failed calling webhook \"slow.example.com\": failed to call webhook: Post \"{base}/slow?timeout=1s\": context deadline exceeded")
    );
    let started = Instant::now();
    let r = configmap(&s, "default", "ignored", json!({"hook": "ignored"}), "").await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the timeout bounds the call"
    );
    let expect = [
        ("refused", format!("failed calling webhook \"refused.example.com\": failed to call webhook: Post \"https://127.0.0.1:{closed}/x?timeout=1s\": dial tcp 127.0.0.1:{closed}: connect: connection refused")),
        ("badcert", format!("failed calling webhook \"badcert.example.com\": failed to call webhook: Post \"{base}/allow?timeout=1s\": tls: failed to verify certificate: x509: certificate signed by unknown authority")),
        ("garbage", "failed calling webhook \"garbage.example.com\": failed to call webhook: couldn't get version/kind; json parse error: invalid character 'h' in literal true (expecting 'r')".to_string()),
        ("uid", "failed calling webhook \"uid.example.com\": received invalid webhook response: expected response.uid=".to_string()),
    ];
    for (case, want) in expect {
        let r = configmap(&s, "default", case, json!({"hook": case}), "").await;
        assert_eq!(
            r.code,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{case}: {}",
            r.body
        );
        let msg = r.body["message"].as_str().unwrap_or("");
        assert!(
            msg.starts_with(&format!("Internal error occurred: {want}")),
            "{case}: {msg}"
        );
        // nothing was written
        let g = s
            .json(
                &s.client(),
                Method::GET,
                &format!("/api/v1/namespaces/default/configmaps/{case}"),
                None,
            )
            .await;
        assert_eq!(g.code, StatusCode::NOT_FOUND);
    }

    // mutation: the first webhook labels (and is reinvoked after the second annotates)
    let mut label = hook(
        "label.example.com",
        &format!("{base}/label"),
        &ca,
        &["configmaps"],
        "mutate",
    );
    label["reinvocationPolicy"] = json!("IfNeeded");
    let annotate = hook(
        "annotate.example.com",
        &format!("{base}/annotate"),
        &ca,
        &["configmaps"],
        "mutate",
    );
    create_config(&s, "Mutating", "mutators", vec![label, annotate]).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut n = 0;
    let r = loop {
        let r = configmap(
            &s,
            "default",
            &format!("mut-{n}"),
            json!({"hook": "mutate"}),
            "",
        )
        .await;
        n += 1;
        assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
        if r.body["metadata"]["labels"]["patched"] == "yes" || Instant::now() > deadline {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(r.body["metadata"]["labels"]["patched"], "yes", "{}", r.body);
    assert_eq!(
        r.body["metadata"]["annotations"]["second"], "yes",
        "{}",
        r.body
    );
    let name = r.body["metadata"]["name"].as_str().unwrap().to_string();
    let label_calls = calls_to(&calls, "/label")
        .into_iter()
        .filter(|c| c["request"]["name"] == name.as_str())
        .count();
    assert_eq!(label_calls, 2, "reinvoked once after the annotation");
    let stored = s
        .json(
            &s.client(),
            Method::GET,
            &format!("/api/v1/namespaces/default/configmaps/{name}"),
            None,
        )
        .await;
    assert_eq!(stored.body["metadata"]["labels"]["patched"], "yes");

    // metrics under kube's names
    let m = s
        .client()
        .get(format!("{}/metrics", s.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for name in [
        "apiserver_admission_webhook_request_total",
        "apiserver_admission_webhook_rejection_count",
        "apiserver_admission_webhook_admission_duration_seconds",
    ] {
        assert!(m.contains(name), "{name} missing from /metrics");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selectors_conditions_versions_dry_runs_and_services() {
    let dir = tempfile::tempdir().unwrap();
    let calls: Calls = Arc::default();
    let port = webhook_server(dir.path(), calls.clone()).await;
    let ca = ca_bundle(dir.path(), "hook");
    let base = format!("https://127.0.0.1:{port}");
    let s = Server::start();
    let c = s.client();
    for (ns, labels) in [("plain", json!({})), ("hooked", json!({"hooked": "yes"}))] {
        let r = s
            .json(
                &c,
                Method::POST,
                "/api/v1/namespaces",
                Some(json!({"metadata": {"name": ns, "labels": labels}})),
            )
            .await;
        assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    }

    // namespaceSelector: configmaps in labelled namespaces, and labelled Namespaces
    let mut by_ns = hook(
        "ns.example.com",
        &format!("{base}/deny"),
        &ca,
        &["configmaps", "namespaces"],
        "",
    );
    by_ns.as_object_mut().unwrap().remove("objectSelector");
    by_ns["namespaceSelector"] = json!({"matchLabels": {"hooked": "yes"}});
    // matchConditions: never for objects named skip-me
    let mut cond = hook(
        "cond.example.com",
        &format!("{base}/deny"),
        &ca,
        &["configmaps"],
        "cond",
    );
    cond["matchConditions"] =
        json!([{"name": "not-skipped", "expression": "object.metadata.name != 'skip-me'"}]);
    // the authorizer library in match conditions: the admin may delete configmaps
    let mut authz_skip = hook(
        "authz-skip.example.com",
        &format!("{base}/deny"),
        &ca,
        &["configmaps"],
        "authz-skip",
    );
    authz_skip["matchConditions"] = json!([{"name": "not-for-admins",
        "expression": "!authorizer.group('').resource('configmaps').namespace('plain').check('delete').allowed()"}]);
    let mut authz_call = hook(
        "authz-call.example.com",
        &format!("{base}/deny"),
        &ca,
        &["configmaps"],
        "authz-call",
    );
    authz_call["matchConditions"] = json!([{"name": "for-admins",
        "expression": "authorizer.requestResource.check('delete').allowed()"}]);
    // matchPolicy Equivalent: registered for autoscaling/v2, called for v1 requests too
    let hpa_rule = |name: &str, path: &str, policy: &str| {
        json!({
            "name": name,
            "clientConfig": {"url": format!("{base}{path}"), "caBundle": ca},
            "rules": [{"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"], "resources": ["horizontalpodautoscalers"]}],
            "matchPolicy": policy,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })
    };
    // dry run: a webhook without side effects on dry runs is called with dryRun true
    let mut dry = hook(
        "dry.example.com",
        &format!("{base}/allow"),
        &ca,
        &["secrets"],
        "dry",
    );
    dry["sideEffects"] = json!("NoneOnDryRun");
    create_config(
        &s,
        "Validating",
        "selectors",
        vec![
            by_ns,
            cond,
            authz_skip,
            authz_call,
            hpa_rule("equivalent.example.com", "/hpa-eq", "Equivalent"),
            hpa_rule("exact.example.com", "/hpa-exact", "Exact"),
            dry,
        ],
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut n = 0;
    loop {
        let r = configmap(&s, "hooked", &format!("probe-{n}"), json!({}), "").await;
        n += 1;
        if r.code == StatusCode::FORBIDDEN {
            assert_eq!(
                r.body["message"],
                "admission webhook \"ns.example.com\" denied the request: no thanks"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the webhook never applied: {}",
            r.body
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = configmap(&s, "plain", "free", json!({}), "").await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces",
            Some(json!({"metadata": {"name": "labelled", "labels": {"hooked": "yes"}}})),
        )
        .await;
    assert_eq!(
        r.code,
        StatusCode::FORBIDDEN,
        "a Namespace is matched by its own labels: {}",
        r.body
    );
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces",
            Some(json!({"metadata": {"name": "unlabelled"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);

    let r = configmap(&s, "plain", "skip-me", json!({"hook": "cond"}), "").await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = configmap(&s, "plain", "other", json!({"hook": "cond"}), "").await;
    assert_eq!(r.code, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "admission webhook \"cond.example.com\" denied the request: no thanks"
    );

    let r = configmap(
        &s,
        "plain",
        "admin-skips",
        json!({"hook": "authz-skip"}),
        "",
    )
    .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = configmap(
        &s,
        "plain",
        "admin-called",
        json!({"hook": "authz-call"}),
        "",
    )
    .await;
    assert_eq!(r.code, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "admission webhook \"authz-call.example.com\" denied the request: no thanks"
    );

    let hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}});
    let r = s
        .json(
            &c,
            Method::POST,
            "/apis/autoscaling/v1/namespaces/plain/horizontalpodautoscalers",
            Some(hpa),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let eq = calls_to(&calls, "/hpa-eq");
    assert_eq!(eq.len(), 1, "the Equivalent webhook is called once");
    let req = &eq[0]["request"];
    assert_eq!(
        req["kind"],
        json!({"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"})
    );
    assert_eq!(
        req["requestKind"],
        json!({"group": "autoscaling", "version": "v1", "kind": "HorizontalPodAutoscaler"})
    );
    assert_eq!(req["resource"]["version"], "v2");
    assert_eq!(req["requestResource"]["version"], "v1");
    assert_eq!(req["object"]["apiVersion"], "autoscaling/v2");
    assert!(
        req["object"]["spec"]["metrics"].is_array(),
        "converted to v2: {}",
        req["object"]
    );
    assert!(
        calls_to(&calls, "/hpa-exact").is_empty(),
        "the Exact webhook is not called"
    );

    let r = s
        .json(&c, Method::POST, "/api/v1/namespaces/plain/secrets?dryRun=All",
            Some(json!({"metadata": {"name": "dry", "labels": {"hook": "dry"}}, "stringData": {"k": "v"}})))
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let dry_calls = calls_to(&calls, "/allow");
    assert_eq!(dry_calls.last().unwrap()["request"]["dryRun"], true);
    assert_eq!(
        dry_calls.last().unwrap()["request"]["options"],
        json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]})
    );
    let g = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/plain/secrets/dry",
            None,
        )
        .await;
    assert_eq!(g.code, StatusCode::NOT_FOUND, "a dry run writes nothing");

    // a webhook reached through a Service: `<name>.<namespace>.svc` is the TLS name, the
    // ExternalName where it is dialled
    let r = s
        .json(&c, Method::POST, "/api/v1/namespaces/default/services", Some(json!({
            "metadata": {"name": "hook"},
            "spec": {"type": "ExternalName", "externalName": "localhost", "ports": [{"port": port}]}})))
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let mut svc = hook("svc.example.com", "", &ca, &["configmaps"], "svc");
    svc["clientConfig"] = json!({"service": {"namespace": "default", "name": "hook", "port": port, "path": "/teapot"}, "caBundle": ca});
    let missing = {
        let mut m = hook("missing.example.com", "", &ca, &["configmaps"], "missing");
        m["clientConfig"] = json!({"service": {"namespace": "default", "name": "nothing", "port": 443}, "caBundle": ca});
        m
    };
    create_config(&s, "Validating", "services", vec![svc, missing]).await;
    let r = until(
        &s,
        "svc",
        json!({"hook": "svc"}),
        StatusCode::from_u16(418).unwrap(),
    )
    .await;
    assert_eq!(r.code.as_u16(), 418, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "admission webhook \"svc.example.com\" denied the request: short and stout"
    );
    let r = configmap(&s, "default", "missing", json!({"hook": "missing"}), "").await;
    assert_eq!(r.code, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Internal error occurred: failed calling webhook \"missing.example.com\": failed to call webhook: Post \"https://nothing.default.svc:443/?timeout=1s\": service \"nothing\" not found"
    );

    // webhook configurations are never sent to webhooks: a webhook denying everything does
    // not stop its own removal
    let all = json!({
        "name": "everything.example.com",
        "clientConfig": {"url": format!("{base}/deny"), "caBundle": ca},
        "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    create_config(&s, "Validating", "deny-everything", vec![all]).await;
    let r = until(&s, "all", json!({}), StatusCode::FORBIDDEN).await;
    assert_eq!(r.code, StatusCode::FORBIDDEN, "{}", r.body);
    create_config(&s, "Mutating", "still-possible", vec![]).await;
    let r = s
        .json(
            &c,
            Method::DELETE,
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/deny-everything",
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let r = until(&s, "after", json!({}), StatusCode::CREATED).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_and_v1beta1_reviews() {
    let dir = tempfile::tempdir().unwrap();
    let calls: Calls = Arc::default();
    let port = webhook_server(dir.path(), calls.clone()).await;
    let ca = ca_bundle(dir.path(), "hook");
    // The WebhookAdmissionConfiguration's kubeconfig: a token for the service's host:port.
    let kubeconfig = dir.path().join("webhook-kubeconfig.yaml");
    std::fs::write(
        &kubeconfig,
        format!("apiVersion: v1\nkind: Config\nusers:\n- name: 'hook.default.svc:{port}'\n  user:\n    token: secret-for-the-hook\n- name: '*'\n  user:\n    token: anyone\n"),
    )
    .unwrap();
    let admission = dir.path().join("admission.yaml");
    std::fs::write(
        &admission,
        format!("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ValidatingAdmissionWebhook\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: {}\n", kubeconfig.display()),
    )
    .unwrap();
    let s = Server::start_with(&[
        "--admission-control-config-file",
        admission.to_str().unwrap(),
    ]);
    let c = s.client();
    let r = s
        .json(&c, Method::POST, "/api/v1/namespaces/default/services", Some(json!({
            "metadata": {"name": "hook"},
            "spec": {"type": "ExternalName", "externalName": "localhost", "ports": [{"port": port}]}})))
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let mut svc = hook("svc.example.com", "", &ca, &["configmaps"], "svc");
    svc["clientConfig"] = json!({"service": {"namespace": "default", "name": "hook", "port": port, "path": "/teapot"}, "caBundle": ca});
    let mut beta = hook(
        "beta.example.com",
        &format!("https://127.0.0.1:{port}/beta"),
        &ca,
        &["configmaps"],
        "beta",
    );
    beta["admissionReviewVersions"] = json!(["v2", "v1beta1", "v1"]);
    create_config(&s, "Validating", "creds", vec![svc, beta]).await;
    let r = until(
        &s,
        "svc",
        json!({"hook": "svc"}),
        StatusCode::from_u16(418).unwrap(),
    )
    .await;
    assert_eq!(r.code.as_u16(), 418, "{}", r.body);
    let seen = calls_to(&calls, "/teapot");
    assert_eq!(seen.last().unwrap()["_auth"], "Bearer secret-for-the-hook");

    // the first review version the webhook lists that kube speaks; a v1beta1 reply is not
    // checked for uid or kind
    let r = configmap(&s, "default", "beta", json!({"hook": "beta"}), "").await;
    assert_eq!(r.code, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "admission webhook \"beta.example.com\" denied the request: beta says no"
    );
    let seen = calls_to(&calls, "/beta");
    assert_eq!(
        seen.last().unwrap()["apiVersion"],
        "admission.k8s.io/v1beta1"
    );
    assert_eq!(
        seen.last().unwrap()["_auth"],
        "Bearer anyone",
        "the wildcard user"
    );
}
