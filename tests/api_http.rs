//! The REST core over real HTTPS: Status bodies, codes, headers and edge cases as
//! kube-apiserver v1.33 answers them.

mod support;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

struct Api {
    s: Server,
    c: reqwest::Client,
}

impl Api {
    fn new() -> Api {
        let s = Server::start();
        let c = s.client();
        Api { s, c }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        ctype: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let (code, _, text) = self
            .raw(method, path, ctype, None, body.map(|b| b.to_string()))
            .await;
        let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (code, v)
    }

    async fn raw(
        &self,
        method: Method,
        path: &str,
        ctype: Option<&str>,
        accept: Option<&str>,
        body: Option<String>,
    ) -> (StatusCode, reqwest::header::HeaderMap, String) {
        let mut req = self.c.request(method, format!("{}{}", self.s.url, path));
        if let Some(ct) = ctype {
            req = req.header("content-type", ct);
        }
        if let Some(a) = accept {
            req = req.header("accept", a);
        }
        if let Some(b) = body {
            req = req.body(b);
        }
        let resp = req.send().await.unwrap();
        let code = resp.status();
        let headers = resp.headers().clone();
        (code, headers, resp.text().await.unwrap())
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some("application/json"), Some(body))
            .await
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, None, None).await
    }
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

#[tokio::test]
async fn status_bodies_and_codes() {
    let api = Api::new();
    let base = "/api/v1/namespaces/default/configmaps";

    let (code, v) = api.post(base, cm("one")).await;
    assert_eq!(code, StatusCode::CREATED, "{v}");
    assert_eq!(v["metadata"]["namespace"], "default");
    let rv1 = v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(v["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap()
        .ends_with('Z'));

    let (code, v) = api.post(base, cm("one")).await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "configmaps \"one\" already exists", "reason": "AlreadyExists",
        "details": {"name": "one", "kind": "configmaps"}, "code": 409})
    );

    let (code, v) = api.get(&format!("{base}/missing")).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(v["message"], "configmaps \"missing\" not found");

    let (code, v) = api.get("/api/v1/nope").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(
        v["message"],
        "the server could not find the requested resource"
    );

    // Namespace in URL and body must agree.
    let mut other = cm("two");
    other["metadata"]["namespace"] = json!("kube-system");
    let (code, v) = api.post(base, other).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(v["reason"], "BadRequest");

    // Missing namespace.
    let (code, v) = api
        .post("/api/v1/namespaces/ghost/configmaps", cm("x"))
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(v["message"], "namespaces \"ghost\" not found");

    // Stale update → 409 Conflict; current one succeeds and bumps the revision.
    let mut upd = cm("one");
    upd["metadata"]["resourceVersion"] = json!("1");
    upd["data"] = json!({"k": "w"});
    let (code, v) = api
        .call(
            Method::PUT,
            &format!("{base}/one"),
            Some("application/json"),
            Some(upd.clone()),
        )
        .await;
    assert_eq!(code, StatusCode::CONFLICT, "{v}");
    assert_eq!(v["reason"], "Conflict");
    assert_eq!(v["message"], "Operation cannot be fulfilled on configmaps \"one\": the object has been modified; please apply your changes to the latest version and try again");
    upd["metadata"]["resourceVersion"] = json!(rv1);
    let (code, v) = api
        .call(
            Method::PUT,
            &format!("{base}/one"),
            Some("application/json"),
            Some(upd),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    assert!(
        v["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
            > rv1.parse::<i64>().unwrap()
    );

    // generateName.
    let (code, v) = api
        .post(base, json!({"metadata": {"generateName": "gen-"}}))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{v}");
    let name = v["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // Invalid name → 422 with causes.
    let (code, v) = api.post(base, cm("Not_Valid")).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(v["reason"], "Invalid");
    assert_eq!(v["details"]["causes"][0]["field"], "metadata.name");

    // Dry run: valid writes nothing; invalid value → 422.
    let (code, _) = api.post(&format!("{base}?dryRun=All"), cm("dry")).await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(
        api.get(&format!("{base}/dry")).await.0,
        StatusCode::NOT_FOUND
    );
    let (code, v) = api.post(&format!("{base}?dryRun=Yes"), cm("dry")).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{v}");

    // Unsupported patch type → 415; unsupported Accept → 406.
    let (code, v) = api
        .call(
            Method::PATCH,
            &format!("{base}/one"),
            Some("text/plain"),
            Some(json!({})),
        )
        .await;
    assert_eq!(code, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{v}");
    let (code, _, _) = api
        .raw(
            Method::GET,
            &format!("{base}/one"),
            None,
            Some("text/html"),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::NOT_ACCEPTABLE);

    // YAML output.
    let (code, headers, text) = api
        .raw(
            Method::GET,
            &format!("{base}/one"),
            None,
            Some("application/yaml"),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/yaml");
    assert!(text.contains("kind: ConfigMap"), "{text}");

    // Table output.
    let (code, _, text) = api
        .raw(
            Method::GET,
            base,
            None,
            Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    let t: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(t["kind"], "Table");
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["Name", "Data", "Age"]);

    // Delete returns a Success Status for configmaps.
    let (code, v) = api
        .call(Method::DELETE, &format!("{base}/one"), None, None)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(v["status"], "Success");
    assert_eq!(v["details"]["name"], "one");
}

#[tokio::test]
async fn non_resource_endpoints() {
    let api = Api::new();
    let (code, v) = api.get("/version").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(v["major"], "1");
    assert_eq!(v["minor"], "33");
    assert!(v["gitVersion"].as_str().unwrap().starts_with("v1.33."));

    let (code, _, text) = api
        .raw(Method::GET, "/readyz?verbose", None, None, None)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert!(
        text.contains("[+]ping ok")
            && text.contains("[+]raft ok")
            && text.contains("[+]poststarthook/rbac/bootstrap-roles ok")
            && text.contains("[+]shutdown ok"),
        "{text}"
    );
    assert!(text.ends_with("readyz check passed\n"), "{text}");
    let (_, _, text) = api.raw(Method::GET, "/healthz", None, None, None).await;
    assert_eq!(text, "ok");
    let (_, _, text) = api
        .raw(Method::GET, "/livez?verbose&exclude=raft", None, None, None)
        .await;
    assert!(text.contains("[+]raft excluded: ok"), "{text}");
    let (code, _, text) = api.raw(Method::GET, "/readyz/raft", None, None, None).await;
    assert_eq!((code, text.as_str()), (StatusCode::OK, "ok"));

    api.get("/api/v1/namespaces/default/configmaps").await;
    let (code, _, text) = api.raw(Method::GET, "/metrics", None, None, None).await;
    assert_eq!(code, StatusCode::OK);
    assert!(text.contains("apiserver_request_total"), "{text}");
    assert!(
        text.contains("apiserver_request_duration_seconds"),
        "{text}"
    );

    let (code, headers, text) = api
        .raw(Method::GET, "/apis", None, Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"), None)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        headers["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let d: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(d["kind"], "APIGroupDiscoveryList");
    let (code, v) = api.get("/apis/apps/v1").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(v["kind"], "APIResourceList");
}

#[tokio::test]
async fn pagination_and_watch() {
    let api = Api::new();
    let base = "/api/v1/namespaces/default/configmaps";
    for i in 0..7 {
        assert_eq!(
            api.post(base, cm(&format!("p{i}"))).await.0,
            StatusCode::CREATED
        );
    }
    let (_, page1) = api.get(&format!("{base}?limit=3")).await;
    assert_eq!(page1["items"].as_array().unwrap().len(), 3);
    let token = page1["metadata"]["continue"].as_str().unwrap().to_string();
    assert_eq!(page1["metadata"]["remainingItemCount"], 4);
    // A write between pages does not show up: every page is the first page's snapshot.
    api.post(base, cm("p-late")).await;
    let (_, page2) = api.get(&format!("{base}?limit=10&continue={token}")).await;
    let names: Vec<&str> = page2["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["p3", "p4", "p5", "p6"]);
    assert!(page2["metadata"].get("continue").is_none_or(|c| c == ""));
    let (code, _) = api.get(&format!("{base}?continue=garbage")).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);

    // Watch from a resourceVersion sees the next change exactly once.
    let rv = page1["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let resp = api
        .c
        .get(format!(
            "{}{base}?watch=1&resourceVersion={rv}&timeoutSeconds=5",
            api.s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let text = resp.text().await.unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 1, "{text}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "p-late");
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

#[tokio::test]
async fn subresources_deletion_and_namespaces() {
    let api = Api::new();
    let base = "/apis/apps/v1/namespaces/default/deployments";
    let (code, d) = api.post(base, deployment("web")).await;
    assert_eq!(code, StatusCode::CREATED, "{d}");
    assert_eq!(
        d["spec"]["strategy"]["type"], "RollingUpdate",
        "defaults applied"
    );
    assert_eq!(d["metadata"]["generation"], 1);

    // status subresource writes only status; the main resource ignores status.
    let mut with_status = d.clone();
    with_status["status"] = json!({"replicas": 2, "readyReplicas": 1});
    with_status["spec"]["replicas"] = json!(9);
    let (code, v) = api
        .call(
            Method::PUT,
            &format!("{base}/web/status"),
            Some("application/json"),
            Some(with_status),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    assert_eq!(v["status"]["readyReplicas"], 1);
    assert_eq!(v["spec"]["replicas"], 2, "spec untouched by /status");
    assert_eq!(v["metadata"]["generation"], 1);
    let mut main = v.clone();
    main["status"] = json!({"replicas": 0});
    main["metadata"]["labels"]["x"] = json!("y");
    let (code, v) = api
        .call(
            Method::PUT,
            &format!("{base}/web"),
            Some("application/json"),
            Some(main),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    assert_eq!(
        v["status"]["readyReplicas"], 1,
        "status untouched by main update"
    );
    assert_eq!(
        v["metadata"]["generation"], 1,
        "metadata change does not bump generation"
    );

    // scale subresource.
    let (code, v) = api.get(&format!("{base}/web/scale")).await;
    assert_eq!(code, StatusCode::OK, "{v}");
    assert_eq!(v["kind"], "Scale");
    assert_eq!(v["apiVersion"], "autoscaling/v1");
    assert_eq!(v["spec"]["replicas"], 2);
    assert_eq!(v["status"]["selector"], "app=web");
    let (code, v) = api
        .call(
            Method::PATCH,
            &format!("{base}/web/scale"),
            Some("application/merge-patch+json"),
            Some(json!({"spec": {"replicas": 5}})),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    let (_, v) = api.get(&format!("{base}/web")).await;
    assert_eq!(v["spec"]["replicas"], 5);
    assert_eq!(v["metadata"]["generation"], 2);

    // Wrong methods.
    let (code, _) = api.post(&format!("{base}/web"), deployment("web")).await;
    assert_eq!(code, StatusCode::METHOD_NOT_ALLOWED);

    // Delete preconditions.
    let (code, v) = api
        .call(
            Method::DELETE,
            &format!("{base}/web"),
            Some("application/json"),
            Some(json!({"preconditions": {"uid": "not-it"}})),
        )
        .await;
    assert_eq!(code, StatusCode::CONFLICT, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("Precondition failed: UID in precondition: not-it"),
        "{v}"
    );

    // deletecollection with a label selector.
    for n in ["a", "b", "c"] {
        api.post(base, deployment(n)).await;
    }
    let (code, v) = api
        .call(
            Method::DELETE,
            &format!("{base}?labelSelector=app%20in%20(a,b)"),
            None,
            None,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    let (_, list) = api.get(base).await;
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c", "web"]);
    let (code, v) = api
        .get(&format!("{base}?labelSelector=app%20in%20(a"))
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{v}");

    // Namespace deletion: Terminating while content with a finalizer remains, 403 for new
    // content, gone once the finalizer is removed.
    let (code, _) = api
        .post("/api/v1/namespaces", json!({"metadata": {"name": "tmp"}}))
        .await;
    assert_eq!(code, StatusCode::CREATED);
    let mut held = cm("held");
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    assert_eq!(
        api.post("/api/v1/namespaces/tmp/configmaps", held).await.0,
        StatusCode::CREATED
    );
    let (code, v) = api
        .call(Method::DELETE, "/api/v1/namespaces/tmp", None, None)
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    assert_eq!(v["status"]["phase"], "Terminating");
    let (code, v) = api
        .post("/api/v1/namespaces/tmp/configmaps", cm("late"))
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{v}");
    assert_eq!(v["message"], "configmaps \"late\" is forbidden: unable to create new content in namespace tmp because it is being terminated");
    let (code, _) = api
        .call(
            Method::PATCH,
            "/api/v1/namespaces/tmp/configmaps/held",
            Some("application/merge-patch+json"),
            Some(json!({"metadata": {"finalizers": null}})),
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (code, _) = api.get("/api/v1/namespaces/tmp").await;
        if code == StatusCode::NOT_FOUND {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "namespace never went away"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn bad_input_is_rejected_and_changes_nothing() {
    let api = Api::new();
    let base = "/apis/apps/v1/namespaces/default/deployments";
    let mut bad = deployment("typed");
    bad["spec"]["replicas"] = json!("three");
    let (code, v) = api.post(base, bad).await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(
        v["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    assert_eq!(
        api.get(&format!("{base}/typed")).await.0,
        StatusCode::NOT_FOUND
    );

    let (code, before) = api.post(base, deployment("typed")).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, v) = api
        .call(
            Method::PATCH,
            &format!("{base}/typed"),
            Some("application/merge-patch+json"),
            Some(json!({"spec": {"replicas": "x"}})),
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{v}");
    let (code, v) = api
        .call(
            Method::PATCH,
            &format!("{base}/typed"),
            Some("application/json-patch+json"),
            Some(json!([{"op": "test", "path": "/spec/replicas", "value": 99}])),
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (code, v) = api
        .call(
            Method::PATCH,
            &format!("{base}/typed"),
            Some("application/merge-patch+json"),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{v}");
    let (_, after) = api.get(&format!("{base}/typed")).await;
    assert_eq!(
        after["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );

    // Strict field validation names the unknown field; Warn (the default) answers with a warning.
    let mut extra = deployment("strict");
    extra["spec"]["bogus"] = json!(1);
    let (code, v) = api
        .post(&format!("{base}?fieldValidation=Strict"), extra.clone())
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .ends_with("strict decoding error: unknown field \"spec.bogus\""),
        "{v}"
    );
    let (code, headers, _) = api
        .raw(
            Method::POST,
            base,
            Some("application/json"),
            None,
            Some(extra.to_string()),
        )
        .await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(
        headers["warning"],
        "299 - \"unknown field \\\"spec.bogus\\\"\""
    );
    let (_, stored) = api.get(&format!("{base}/strict")).await;
    assert!(
        stored["spec"].get("bogus").is_none(),
        "unknown fields are dropped: {stored}"
    );

    // Garbage bodies.
    let (code, _, _) = api
        .raw(
            Method::POST,
            base,
            Some("application/json"),
            None,
            Some("{not json".into()),
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    let (code, _, _) = api
        .raw(
            Method::POST,
            base,
            Some("application/vnd.kubernetes.protobuf"),
            None,
            Some("garbage".into()),
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn readyz_fails_while_shutting_down() {
    let s = Server::start_with(&["--shutdown-delay-duration", "5s"]);
    let c = s.client();
    let get = |path: &str| c.get(format!("{}{path}", s.url)).send();
    assert_eq!(get("/readyz").await.unwrap().status(), StatusCode::OK);
    s.sigterm();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(4);
    loop {
        let r = get("/readyz?verbose").await.unwrap();
        if r.status() == StatusCode::INTERNAL_SERVER_ERROR {
            let text = r.text().await.unwrap();
            assert!(
                text.contains("[-]shutdown failed: reason withheld"),
                "{text}"
            );
            assert!(text.ends_with("readyz check failed\n"), "{text}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "readyz never failed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // livez stays ok while draining.
    assert_eq!(get("/livez").await.unwrap().status(), StatusCode::OK);
}

/// `--livez-grace-period`: a replica that waits to join (no leader, so its `raft` check
/// fails) answers /livez healthy during the grace period, /readyz not; without one, both fail.
#[tokio::test]
async fn livez_is_healthy_during_its_grace_period() {
    let serve = |grace: &str| {
        let dir = tempfile::tempdir().unwrap();
        let api = format!("127.0.0.1:{}", support::free_port());
        let peer = format!("127.0.0.1:{}", support::free_port());
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
            .args(["serve", "--node-id", "2", "--join", "--peer-listen", &peer])
            .args(["--listen", &api, "--livez-grace-period", grace])
            .arg("--data-dir")
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        (dir, api, KillOnDrop(child))
    };
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    for (grace, livez) in [
        ("1h", StatusCode::OK),
        ("0s", StatusCode::INTERNAL_SERVER_ERROR),
    ] {
        let (dir, api, _child) = serve(grace);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !dir.path().join("admin.key").exists() {
            assert!(std::time::Instant::now() < deadline, "no admin credentials");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
        let mut pem = read("admin.crt");
        pem.extend(read("admin.key"));
        let c = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&read("ca.crt")).unwrap())
            .identity(reqwest::Identity::from_pem(&pem).unwrap())
            .build()
            .unwrap();
        let code = |path: &'static str| {
            let (c, api) = (c.clone(), api.clone());
            async move {
                loop {
                    match c.get(format!("https://{api}{path}")).send().await {
                        Ok(r) => return r.status(),
                        Err(e) => {
                            assert!(std::time::Instant::now() < deadline, "{path}: {e}");
                            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        }
                    }
                }
            }
        };
        assert_eq!(code("/livez").await, livez, "grace {grace}");
        assert_eq!(code("/livez/raft").await, livez, "grace {grace}");
        assert_eq!(
            code("/readyz").await,
            StatusCode::INTERNAL_SERVER_ERROR,
            "grace {grace}"
        );
        assert_eq!(code("/livez/ping").await, StatusCode::OK);
    }
}

/// Concurrent Service creates never share a ClusterIP or NodePort: the allocation is
/// checked inside the write (issue 10, bug 8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_service_allocations_are_unique() {
    let s = support::Server::start();
    let c = s.client();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (c, url) = (c.clone(), s.url.clone());
        tasks.push(tokio::spawn(async move {
            let body = serde_json::json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": format!("s{i}")},
                "spec": {"type": "NodePort", "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81}]}});
            let r = c
                .post(format!("{url}/api/v1/namespaces/default/services"))
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 201);
            r.json::<serde_json::Value>().await.unwrap()
        }));
    }
    let mut ips = std::collections::BTreeSet::new();
    let mut ports = std::collections::BTreeSet::new();
    for t in tasks {
        let svc = t.await.unwrap();
        assert!(
            ips.insert(svc["spec"]["clusterIP"].as_str().unwrap().to_string()),
            "{svc}"
        );
        for p in svc["spec"]["ports"].as_array().unwrap() {
            assert!(ports.insert(p["nodePort"].as_i64().unwrap()), "{svc}");
        }
    }
    assert_eq!(ports.len(), 80);
}

/// A PUT of a missing object creates it for the resources whose strategy allows it (kube's
/// AllowCreateOnUpdate: leases, events, endpoints, RBAC objects, ...) and is a 404 elsewhere.
#[tokio::test]
async fn put_creates_where_kube_allows_it() {
    let s = Server::start();
    let c = s.client();
    let lease = "/apis/coordination.k8s.io/v1/namespaces/default/leases/lock";
    let r = s
        .json(
            &c,
            Method::PUT,
            lease,
            Some(json!({"apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease", "metadata": {"name": "lock"}, "spec": {"holderIdentity": "a"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["spec"]["holderIdentity"], "a");
    // Replacing it needs its resourceVersion (leases allow no unconditional update).
    let rv = r.body["metadata"]["resourceVersion"].clone();
    let r = s
        .json(
            &c,
            Method::PUT,
            lease,
            Some(json!({"apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease", "metadata": {"name": "lock", "resourceVersion": rv},
            "spec": {"holderIdentity": "b"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let cm = "/api/v1/namespaces/default/configmaps/absent";
    let r = s
        .json(
            &c,
            Method::PUT,
            cm,
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "absent"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::NOT_FOUND, "{}", r.body);
}
