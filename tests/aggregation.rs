//! The aggregation layer over real HTTPS: an extension API server written here (hyper +
//! rustls on 127.0.0.1, its own serving CA passed in `caBundle`, requiring a client
//! certificate from the data folder's front-proxy CA) registered by an APIService whose
//! Service is an ExternalName `localhost` (Endpoints may not point at loopback). Checked:
//! the local APIServices kube creates (`kubectl get apiservices`), availability, discovery
//! merged (`kubectl api-resources`, `/apis`, `/apis/<group>`), requests proxied with the
//! caller's identity headers (forged ones replaced), request and response bodies streamed,
//! a watch streamed event by event, a connection upgrade bridged, a user without rights
//! refused with 403 before anything reaches the extension server, its OpenAPI merged into
//! `/openapi/v2` and `/openapi/v3`, kube's validation of
//! APIServices, the `extension-apiserver-authentication` ConfigMap, and `Available`
//! flipping to False (FailedDiscoveryCheck) when the server stops, with 503s after.

#[path = "support/extension.rs"]
mod extension;
mod support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use base64::Engine;
use extension::{flunder, start_extension, Seen, GROUP, VERSION};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const TOKENS: &str = "tok-bob,bob,u2\n";

/// Polls `f` every 200 ms until it returns Some, at most `within`.
fn wait_for<T>(within: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn available(s: &Server, name: &str) -> (String, String, String) {
    let out = s.kubectl(&[
        "get",
        "apiservice",
        name,
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"Available\")].status}|{.status.conditions[?(@.type==\"Available\")].reason}|{.status.conditions[?(@.type==\"Available\")].message}",
    ]);
    let text = support::stdout(&out);
    let mut it = text.splitn(3, '|').map(str::to_string);
    (
        it.next().unwrap_or_default(),
        it.next().unwrap_or_default(),
        it.next().unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn extension_server_behind_an_apiservice() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).unwrap();
    let mut s = Server::start_with(&["--token-auth-file", tokens.to_str().unwrap()]);
    let front_proxy_ca = std::fs::read(s.dir.path().join("front-proxy-ca.crt")).unwrap();
    let ext = start_extension(&front_proxy_ca).await;

    // The local APIServices, as kube creates them, all Available (Local).
    let out = wait_for(Duration::from_secs(30), "local APIServices", || {
        let out = s.ok(&["get", "apiservices"]);
        (out.contains("v1.apps") && out.contains("v1.apiregistration.k8s.io")).then_some(out)
    });
    let core = out
        .lines()
        .find(|l| l.starts_with("v1. "))
        .unwrap_or_else(|| panic!("no v1. APIService in\n{out}"));
    assert!(core.contains("Local"), "{core}");
    wait_for(Duration::from_secs(30), "v1.apps Available", || {
        (available(&s, "v1.apps").1 == "Local").then_some(())
    });

    // The ConfigMap extension servers verify callers with.
    let cm: Value = serde_json::from_str(&s.ok(&[
        "get",
        "configmap",
        "-n",
        "kube-system",
        "extension-apiserver-authentication",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(
        cm["data"]["requestheader-client-ca-file"].as_str().unwrap(),
        String::from_utf8_lossy(&front_proxy_ca)
    );
    assert_eq!(
        cm["data"]["requestheader-username-headers"],
        "[\"X-Remote-User\"]"
    );
    assert_eq!(
        cm["data"]["requestheader-allowed-names"],
        "[\"front-proxy-client\"]"
    );
    assert!(cm["data"]["client-ca-file"]
        .as_str()
        .unwrap()
        .contains("BEGIN CERTIFICATE"));

    // kube's validation of APIServices.
    let client = s.client();
    let bad = s
        .json(
            &client,
            Method::POST,
            "/apis/apiregistration.k8s.io/v1/apiservices",
            Some(json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                        "metadata": {"name": "v1.wrong"},
                        "spec": {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 1000,
                                 "versionPriority": 0, "service": {"namespace": "wardle", "name": "api"},
                                 "insecureSkipTLSVerify": true, "caBundle": "YWJj"}})),
        )
        .await;
    assert_eq!(bad.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    let msg = bad.body["message"].as_str().unwrap();
    assert!(
        msg.contains("metadata.name: Invalid value: \"v1.wrong\": must be `spec.version+\".\"+spec.group`: \"v1alpha1.wardle.example.com\""),
        "{msg}"
    );
    assert!(
        msg.contains("spec.versionPriority: Invalid value: 0: must be positive and less than 1000"),
        "{msg}"
    );
    assert!(msg.contains("spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"), "{msg}");

    // Register the extension server through an ExternalName Service `localhost`.
    s.ok(&["create", "namespace", "wardle"]);
    s.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"apiVersion: v1
kind: Service
metadata: {{name: api, namespace: wardle}}
spec: {{type: ExternalName, externalName: localhost}}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: {VERSION}.{GROUP}}}
spec:
  group: {GROUP}
  version: {VERSION}
  groupPriorityMinimum: 1000
  versionPriority: 15
  service: {{namespace: wardle, name: api, port: {port}}}
  caBundle: {ca}
"#,
            port = ext.port,
            ca = base64::engine::general_purpose::STANDARD.encode(&ext.ca_pem)
        ),
    );
    let name = format!("{VERSION}.{GROUP}");
    wait_for(Duration::from_secs(30), "the APIService Available", || {
        let a = available(&s, &name);
        (a.0 == "True").then_some(()).or_else(|| {
            eprintln!("availability: {a:?}");
            None
        })
    });
    assert_eq!(available(&s, &name).1, "Passed");
    // The availability check identified itself as kube's does, with the proxy certificate.
    let seen = ext.seen.lock().unwrap().clone();
    let check = seen
        .iter()
        .find(|r| r.path == format!("/apis/{GROUP}/{VERSION}"))
        .expect("a discovery check");
    assert_eq!(check.cn, "front-proxy-client");
    assert_eq!(check.user, "system:kube-aggregator");
    assert_eq!(check.groups, ["system:masters"]);
    let listed = s.ok(&["get", "apiservices"]);
    let line = listed.lines().find(|l| l.starts_with(&name)).unwrap();
    assert!(
        line.contains("wardle/api") && line.contains("True"),
        "{line}"
    );

    // Discovery merged: legacy and aggregated, kubectl api-resources.
    let apis = s.json(&client, Method::GET, "/apis", None).await;
    let groups = apis.body["groups"].as_array().unwrap();
    let wardle = groups
        .iter()
        .find(|g| g["name"] == GROUP)
        .expect("wardle in /apis");
    assert_eq!(wardle["preferredVersion"]["version"], VERSION);
    assert_eq!(groups[0]["name"], "apiregistration.k8s.io");
    let group = s
        .json(&client, Method::GET, &format!("/apis/{GROUP}"), None)
        .await;
    assert_eq!(group.code, StatusCode::OK);
    assert_eq!(group.body["kind"], "APIGroup");
    let resources = wait_for(Duration::from_secs(30), "api-resources", || {
        let out = s.ok(&["api-resources", "--api-group", GROUP]);
        out.contains("flunders").then_some(out)
    });
    assert!(
        resources.contains("fl ") && resources.contains("Flunder"),
        "{resources}"
    );

    // Aggregated discovery in protobuf (client-go's Accept) carries the remote group as the
    // JSON answer does.
    let pb = client
        .get(format!("{}/apis", s.url))
        .header("accept", support::AGGREGATED_PB_ACCEPT)
        .send()
        .await
        .unwrap();
    assert_eq!(
        pb.headers()["content-type"],
        "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let from_pb = support::aggregated_discovery_from_pb(&pb.bytes().await.unwrap(), "v2");
    let agg = client
        .get(format!("{}/apis", s.url))
        .header(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let group_of = |doc: &Value| {
        doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["metadata"]["name"] == GROUP)
            .cloned()
            .unwrap_or_else(|| panic!("no {GROUP} in {doc}"))
    };
    let remote = group_of(&from_pb);
    assert_eq!(
        support::strip_empty(&remote),
        support::strip_empty(&group_of(&agg))
    );
    assert_eq!(
        remote["versions"][0]["resources"][0]["resource"],
        "flunders"
    );
    let names = |doc: &Value| -> Vec<Value> {
        doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["metadata"].clone())
            .collect()
    };
    assert_eq!(names(&from_pb), names(&agg));

    // The extension server's OpenAPI merged: its own paths and definitions in /openapi/v2,
    // its v3 document listed in the index and served.
    let v2 = s.json(&client, Method::GET, "/openapi/v2", None).await;
    assert_eq!(v2.code, StatusCode::OK);
    assert!(v2.body["paths"]
        .get(format!(
            "/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/flunders"
        ))
        .is_some());
    assert!(v2.body["paths"]
        .get("/apis/elsewhere.io/v1/things")
        .is_none());
    assert!(v2.body["paths"]
        .get("/api/v1/namespaces/{namespace}/pods")
        .is_some());
    assert!(v2.body["definitions"]["com.example.wardle.v1alpha1.Flunder"].is_object());
    let index = s.json(&client, Method::GET, "/openapi/v3", None).await;
    let url = index.body["paths"][format!("apis/{GROUP}/{VERSION}")]["serverRelativeURL"]
        .as_str()
        .unwrap_or_else(|| panic!("no wardle entry in {}", index.body))
        .to_string();
    let v3 = s.json(&client, Method::GET, &url, None).await;
    assert_eq!(v3.code, StatusCode::OK);
    assert!(v3.body["components"]["schemas"]["com.example.wardle.v1alpha1.Flunder"].is_object());
    assert_eq!(v3.headers["cache-control"], "public, immutable");

    // Requests proxied with the caller's identity (forged headers replaced).
    let before = ext.seen.lock().unwrap().len();
    let got = s.ok(&["get", "flunders", "-n", "wardle"]);
    assert!(got.contains("alpha"), "{got}");
    let r = client
        .get(format!(
            "{}/apis/{GROUP}/{VERSION}/namespaces/wardle/flunders/alpha",
            s.url
        ))
        .header("X-Remote-User", "root")
        .header("X-Remote-Group", "forged")
        .header("X-Remote-Extra-Scopes", "forged")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let obj: Value = r.json().await.unwrap();
    assert_eq!(obj["metadata"]["name"], "alpha");
    let seen = ext.seen.lock().unwrap()[before..].to_vec();
    let get = seen
        .iter()
        .rev()
        .find(|r| r.path.ends_with("/flunders/alpha"))
        .expect("the GET reached the server");
    assert_eq!(get.user, "admin");
    assert_eq!(get.cn, "front-proxy-client");
    assert!(
        get.groups.contains(&"system:masters".to_string()),
        "{get:?}"
    );
    assert!(
        get.groups.contains(&"system:authenticated".to_string()),
        "{get:?}"
    );
    assert!(!get.groups.contains(&"forged".to_string()), "{get:?}");
    assert!(get.extra.is_empty(), "{get:?}");
    assert!(seen
        .iter()
        .any(|r| r.path.ends_with("/flunders") && r.method == "GET"));

    // A request body goes through (create).
    let created = s
        .json(
            &client,
            Method::POST,
            &format!("/apis/{GROUP}/{VERSION}/namespaces/wardle/flunders"),
            Some(flunder("beta")),
        )
        .await;
    assert_eq!(created.code, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["metadata"]["name"], "beta");
    assert_eq!(created.body["metadata"]["resourceVersion"], "2");

    // A watch is streamed event by event.
    let mut resp = client
        .get(format!(
            "{}/apis/{GROUP}/{VERSION}/namespaces/wardle/flunders?watch=true",
            s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let mut got = String::new();
    let first = tokio::time::timeout(Duration::from_secs(20), async {
        while !got.contains('\n') {
            match resp.chunk().await.unwrap() {
                Some(c) => got.push_str(&String::from_utf8_lossy(&c)),
                None => break,
            }
        }
        got.clone()
    })
    .await
    .expect("the first watch event while the stream stays open");
    assert!(first.contains("\"ADDED\""), "{first}");
    ext.second_event.notify_one();
    let rest = tokio::time::timeout(Duration::from_secs(20), async {
        let mut all = first.clone();
        while let Some(c) = resp.chunk().await.unwrap() {
            all.push_str(&String::from_utf8_lossy(&c));
        }
        all
    })
    .await
    .expect("the watch ends when the extension server ends it");
    assert!(rest.contains("\"MODIFIED\""), "{rest}");

    // A connection upgrade is bridged (HTTP/1.1, as exec and port-forward use it).
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let h1 = support::http1_client(&s);
        let resp = h1
            .get(format!(
                "{}/apis/{GROUP}/{VERSION}/namespaces/wardle/flunders/upgrade",
                s.url
            ))
            .header("connection", "Upgrade")
            .header("upgrade", "test-echo")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SWITCHING_PROTOCOLS);
        let mut io = resp.upgrade().await.unwrap();
        io.write_all(b"ping").await.unwrap();
        let mut buf = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), io.read_to_end(&mut buf))
            .await
            .expect("the echo")
            .unwrap();
        assert_eq!(buf, b"echo:ping");
    }

    // A user without rights is refused before anything reaches the extension server.
    let before = ext.seen.lock().unwrap().len();
    let bob = s
        .anonymous_client()
        .get(format!(
            "{}/apis/{GROUP}/{VERSION}/namespaces/wardle/flunders",
            s.url
        ))
        .bearer_auth("tok-bob")
        .send()
        .await
        .unwrap();
    assert_eq!(bob.status(), StatusCode::FORBIDDEN);
    let body: Value = bob.json().await.unwrap();
    assert_eq!(
        body["message"],
        format!("flunders.{GROUP} is forbidden: User \"bob\" cannot list resource \"flunders\" in API group \"{GROUP}\" in the namespace \"wardle\"")
    );
    let after: Vec<Seen> = ext.seen.lock().unwrap()[before..].to_vec();
    assert!(
        after
            .iter()
            .all(|r| r.user != "bob" && !r.path.ends_with("/flunders")),
        "{after:?}"
    );

    // kube's check makes five attempts a round, one success is enough: four failing
    // discovery GETs leave the APIService Available, its condition untouched.
    let transition = || {
        support::stdout(&s.kubectl(&[
            "get",
            "apiservice",
            &name,
            "-o",
            "jsonpath={.status.conditions[0].lastTransitionTime}",
        ]))
    };
    let since = transition();
    ext.fail_checks.store(4, Ordering::SeqCst);
    wait_for(Duration::from_secs(30), "four failed attempts", || {
        (ext.fail_checks.load(Ordering::SeqCst) == 0).then_some(())
    });
    assert_eq!(available(&s, &name).0, "True");
    assert_eq!(transition(), since);
    // Every attempt failing: FailedDiscoveryCheck with the last failure, after five attempts.
    ext.fail_checks.store(1000, Ordering::SeqCst);
    let (_, reason, message) = wait_for(Duration::from_secs(30), "checks failing", || {
        let a = available(&s, &name);
        (a.0 == "False").then_some(a)
    });
    assert_eq!(reason, "FailedDiscoveryCheck");
    let url = format!("https://localhost:{}/apis/{GROUP}/{VERSION}", ext.port);
    assert_eq!(
        message,
        format!("failing or missing response from {url}: bad status from {url}: 503")
    );
    assert!(1000 - ext.fail_checks.load(Ordering::SeqCst) >= 5);
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    assert!(
        metrics.lines().any(
            |l| l.starts_with("aggregator_unavailable_apiservice_total{")
                && l.contains(&format!("name=\"{name}\""))
                && l.contains("reason=\"FailedDiscoveryCheck\"")
                && l.ends_with(" 1")
        ),
        "{metrics}"
    );
    ext.fail_checks.store(0, Ordering::SeqCst);
    wait_for(Duration::from_secs(30), "Available again", || {
        (available(&s, &name).0 == "True").then_some(())
    });

    // A remote APIService for a group-version served here: kube's handler goes by the
    // APIService (one per group-version, by name), so with a `service` the group-version is
    // proxied and discovered from the extension server; a remote version of a local group
    // joins that group. kube's autoregister restores its `onstart` APIServices when the
    // server starts.
    s.ok(&[
        "patch",
        "apiservice",
        "v1.scheduling.k8s.io",
        "--type=merge",
        "-p",
        &format!(
            r#"{{"spec":{{"service":{{"namespace":"wardle","name":"api","port":{}}},"insecureSkipTLSVerify":true}}}}"#,
            ext.port
        ),
    ]);
    wait_for(
        Duration::from_secs(30),
        "v1.scheduling.k8s.io remote",
        || (available(&s, "v1.scheduling.k8s.io").1 == "Passed").then_some(()),
    );
    let pcs = s
        .json(
            &client,
            Method::GET,
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            None,
        )
        .await;
    assert_eq!(pcs.code, StatusCode::OK);
    assert_eq!(pcs.body["servedBy"], "extension", "{}", pcs.body);
    let agg = client
        .get(format!("{}/apis", s.url))
        .header("accept", support::AGGREGATED_PB_ACCEPT)
        .send()
        .await
        .unwrap();
    let agg = support::aggregated_discovery_from_pb(&agg.bytes().await.unwrap(), "v2");
    let scheduling = agg["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "scheduling.k8s.io")
        .expect("scheduling.k8s.io");
    assert_eq!(scheduling["versions"].as_array().unwrap().len(), 1);
    assert_eq!(
        scheduling["versions"][0]["resources"][0]["resource"],
        "widgets"
    );
    s.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1alpha9.apps}}
spec:
  group: apps
  version: v1alpha9
  groupPriorityMinimum: 1000
  versionPriority: 1
  insecureSkipTLSVerify: true
  service: {{namespace: wardle, name: api, port: {port}}}
"#,
            port = ext.port
        ),
    );
    let apps = wait_for(Duration::from_secs(30), "apps/v1alpha9 listed", || {
        let g = support::stdout(&s.kubectl(&["get", "--raw", "/apis/apps"]));
        g.contains("v1alpha9").then_some(g)
    });
    let apps: Value = serde_json::from_str(&apps).unwrap();
    assert_eq!(
        apps["versions"],
        json!([{"groupVersion": "apps/v1", "version": "v1"},
               {"groupVersion": "apps/v1alpha9", "version": "v1alpha9"}])
    );
    assert_eq!(apps["preferredVersion"]["version"], "v1");
    s.ok(&["delete", "apiservice", "v1alpha9.apps"]);
    s.restart();
    wait_for(
        Duration::from_secs(30),
        "v1.scheduling.k8s.io local again",
        || (available(&s, "v1.scheduling.k8s.io").1 == "Local").then_some(()),
    );
    let spec = s.ok(&[
        "get",
        "apiservice",
        "v1.scheduling.k8s.io",
        "-o",
        "jsonpath={.spec}",
    ]);
    assert!(!spec.contains("service"), "{spec}");
    let pcs = s
        .json(
            &client,
            Method::GET,
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            None,
        )
        .await;
    assert_eq!(pcs.body["kind"], "PriorityClassList", "{}", pcs.body);
    wait_for(
        Duration::from_secs(30),
        "the APIService Available again",
        || (available(&s, &name).0 == "True").then_some(()),
    );

    // The server stops: Available turns False (FailedDiscoveryCheck), requests get 503.
    ext.stop.send(true).unwrap();
    let (st, reason, message) = wait_for(Duration::from_secs(40), "Available=False", || {
        // (a request on a connection the server dropped may fail otherwise first)
        let a = available(&s, &name);
        (a.0 == "False" && a.2.ends_with("connection refused")).then_some(a)
    });
    assert_eq!(st, "False");
    assert_eq!(reason, "FailedDiscoveryCheck");
    let url = format!("https://localhost:{}/apis/{GROUP}/{VERSION}", ext.port);
    assert_eq!(
        message,
        format!(
            "failing or missing response from {url}: Get \"{url}\": dial tcp 127.0.0.1:{}: connect: connection refused",
            ext.port
        )
    );
    let listed = s.ok(&["get", "apiservices"]);
    let line = listed.lines().find(|l| l.starts_with(&name)).unwrap();
    assert!(line.contains("False (FailedDiscoveryCheck)"), "{line}");
    let down = client
        .get(format!(
            "{}/apis/{GROUP}/{VERSION}/namespaces/wardle/flunders",
            s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(down.text().await.unwrap(), "service unavailable\n");

    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    // kube's counter (this process's: the server restarted above): one transition from
    // Available.
    let total = metrics
        .lines()
        .find(|l| {
            l.starts_with("aggregator_unavailable_apiservice_total{")
                && l.contains(&format!("name=\"{name}\""))
                && l.contains("reason=\"FailedDiscoveryCheck\"")
        })
        .unwrap_or_else(|| panic!("no aggregator_unavailable_apiservice_total in\n{metrics}"));
    assert!(total.ends_with(" 1"), "{total}");
    assert!(
        metrics.contains(&format!(
            "aggregator_unavailable_apiservice{{name=\"{name}\"}} 1"
        )),
        "{}",
        metrics
            .lines()
            .filter(|l| l.contains("aggregator_"))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // Without its Service the reason is ServiceNotFound.
    s.ok(&["delete", "service", "-n", "wardle", "api"]);
    let (_, reason, message) = wait_for(Duration::from_secs(40), "ServiceNotFound", || {
        let a = available(&s, &name);
        (a.1 == "ServiceNotFound").then_some(a)
    });
    assert_eq!(reason, "ServiceNotFound");
    assert_eq!(message, "service/api in \"wardle\" is not present");

    // Deleting the APIService removes the group from discovery.
    s.ok(&["delete", "apiservice", &name]);
    wait_for(Duration::from_secs(20), "the group gone", || {
        let out = s.ok(&["get", "--raw", "/apis"]);
        (!out.contains(GROUP)).then_some(())
    });

    // A custom resource group gets its automanaged APIService, removed with the definition.
    s.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: crontabs.stable.example.com}
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#,
    );
    wait_for(Duration::from_secs(30), "v1.stable.example.com", || {
        let out = s.kubectl(&[
            "get",
            "apiservice",
            "v1.stable.example.com",
            "-o",
            "jsonpath={.metadata.labels.kube-aggregator\\.kubernetes\\.io/automanaged} {.spec.groupPriorityMinimum} {.spec.versionPriority}",
        ]);
        (support::stdout(&out) == "true 1000 100").then_some(())
    });
    // A `true` (continuously managed) APIService given a `service` is restored at once.
    s.ok(&[
        "patch",
        "apiservice",
        "v1.stable.example.com",
        "--type=merge",
        "-p",
        r#"{"spec":{"service":{"namespace":"wardle","name":"api2","port":443},"insecureSkipTLSVerify":true}}"#,
    ]);
    wait_for(
        Duration::from_secs(30),
        "v1.stable.example.com restored",
        || {
            let spec = s.ok(&[
                "get",
                "apiservice",
                "v1.stable.example.com",
                "-o",
                "jsonpath={.spec}",
            ]);
            (!spec.contains("service")).then_some(())
        },
    );
    s.ok(&["delete", "crd", "crontabs.stable.example.com"]);
    wait_for(
        Duration::from_secs(60),
        "v1.stable.example.com removed",
        || {
            let out = s.kubectl(&["get", "apiservice", "v1.stable.example.com"]);
            (!out.status.success()).then_some(())
        },
    );

    // A ClusterIP Service must listen on the port and have ready endpoints.
    s.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"apiVersion: v1
kind: Service
metadata: {{name: api2, namespace: wardle}}
spec: {{ports: [{{name: https, port: 443}}]}}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1beta1.{GROUP}}}
spec:
  group: {GROUP}
  version: v1beta1
  groupPriorityMinimum: 1000
  versionPriority: 15
  insecureSkipTLSVerify: true
  service: {{namespace: wardle, name: api2, port: 444}}
"#
        ),
    );
    let beta = format!("v1beta1.{GROUP}");
    let (_, _, message) = wait_for(Duration::from_secs(30), "ServicePortError", || {
        let a = available(&s, &beta);
        (a.1 == "ServicePortError").then_some(a)
    });
    assert_eq!(
        message,
        "service/api2 in \"wardle\" is not listening on port 444"
    );
    s.ok(&[
        "patch",
        "apiservice",
        &beta,
        "--type=merge",
        "-p",
        r#"{"spec":{"service":{"port":443}}}"#,
    ]);
    let (_, _, message) = wait_for(Duration::from_secs(30), "EndpointsNotFound", || {
        let a = available(&s, &beta);
        (a.1 == "EndpointsNotFound").then_some(a)
    });
    assert_eq!(
        message,
        "cannot find endpointslices for service/api2 in \"wardle\""
    );
}
