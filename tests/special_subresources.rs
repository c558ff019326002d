//! The special pod and node endpoints over real HTTPS and kubectl: `pods/ephemeralcontainers`
//! (`kubectl debug`), `pods/resize` (`kubectl patch --subresource resize`), the top-level
//! `bindings`, `nodes/status`, and the read-only `componentstatuses` (`kubectl get cs`), with
//! their discovery entries and kube's refusals.

mod support;

use std::io::Write;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const PODS: &str = "/api/v1/namespaces/default/pods";

async fn pod(s: &Server, c: &reqwest::Client, name: &str, resources: Value) -> Value {
    let r = s
        .json(
            c,
            Method::POST,
            PODS,
            Some(json!({"metadata": {"name": name}, "spec": {"containers": [
                {"name": "app", "image": "nginx:1", "resources": resources}]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    r.body
}

/// A strategic merge patch with the admin identity.
async fn smp(s: &Server, c: &reqwest::Client, path: &str, body: &[u8]) -> support::Reply {
    let ctype = "application/strategic-merge-patch+json";
    s.send(c, Method::PATCH, path, ctype, Some(body.to_vec()))
        .await
}

fn message(r: &support::Reply) -> String {
    r.body["message"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn discovery_lists_the_special_endpoints() {
    let s = Server::start();
    let c = s.client();
    let r = s.json(&c, Method::GET, "/api/v1", None).await;
    let resources = r.body["resources"].as_array().unwrap().clone();
    let entry = |name: &str| {
        resources
            .iter()
            .find(|e| e["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} missing from /api/v1"))
    };
    for sub in ["pods/ephemeralcontainers", "pods/resize", "nodes/status"] {
        let e = entry(sub);
        assert_eq!(e["verbs"], json!(["get", "patch", "update"]), "{sub}");
        assert!(e["kind"] == "Pod" || e["kind"] == "Node", "{e}");
    }
    assert_eq!(
        entry("bindings"),
        json!({"name": "bindings", "singularName": "binding", "namespaced": true, "kind": "Binding", "verbs": ["create"]})
    );
    assert_eq!(
        entry("componentstatuses"),
        json!({"name": "componentstatuses", "singularName": "componentstatus", "namespaced": false,
               "kind": "ComponentStatus", "verbs": ["get", "list"], "shortNames": ["cs"]})
    );
    // Sorted by name, subresources after their parent.
    let names: Vec<&str> = resources
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    // The pod entries this test is about (the connect subresources sort among them).
    let own = [
        "pods",
        "pods/binding",
        "pods/ephemeralcontainers",
        "pods/eviction",
        "pods/resize",
        "pods/status",
    ];
    let pods: Vec<&str> = names.iter().copied().filter(|n| own.contains(n)).collect();
    assert_eq!(
        &pods[..],
        &[
            "pods",
            "pods/binding",
            "pods/ephemeralcontainers",
            "pods/eviction",
            "pods/resize",
            "pods/status"
        ][..],
        "{names:?}"
    );
    // Aggregated discovery has them too.
    let agg = c
        .get(format!("{}/api", s.url))
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
    let core = &agg["items"][0]["versions"][0]["resources"];
    let pods = core
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "pods")
        .unwrap();
    let subs: Vec<&str> = pods["subresources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["subresource"].as_str().unwrap())
        .collect();
    assert_eq!(
        subs,
        [
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy",
            "resize",
            "status"
        ]
    );
    assert!(core
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["resource"] == "componentstatuses" && r["scope"] == "Cluster"));
    // kubectl sees them.
    let out = s.ok(&["api-resources", "--api-group="]);
    assert!(
        out.contains("componentstatuses") && out.contains("bindings"),
        "{out}"
    );
}

#[tokio::test]
async fn ephemeral_containers_are_added_through_their_subresource() {
    let s = Server::start();
    let c = s.client();
    pod(&s, &c, "web", json!({})).await;
    // kubectl debug adds one with a strategic merge patch of the subresource.
    s.ok(&[
        "debug",
        "web",
        "--image=busybox:1",
        "--container=debugger",
        "--target=app",
        "--profile=general",
    ]);
    let r = s
        .json(
            &c,
            Method::GET,
            &format!("{PODS}/web/ephemeralcontainers"),
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK);
    assert_eq!(r.body["kind"], "Pod");
    let ecs = r.body["spec"]["ephemeralContainers"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(ecs.len(), 1, "{ecs:?}");
    assert_eq!(ecs[0]["name"], "debugger");
    assert_eq!(ecs[0]["targetContainerName"], "app");
    // Defaulted as a container is.
    assert_eq!(ecs[0]["terminationMessagePolicy"], "File");
    let mut pod = r.body.clone();

    // Other changes sent to the subresource are dropped.
    pod["spec"]["containers"][0]["image"] = json!("nginx:2");
    pod["metadata"]["labels"] = json!({"sneaky": "yes"});
    let r = s
        .json(
            &c,
            Method::PUT,
            &format!("{PODS}/web/ephemeralcontainers"),
            Some(pod.clone()),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["spec"]["containers"][0]["image"], "nginx:1");
    assert!(r.body["metadata"].get("labels").is_none(), "{}", r.body);
    let mut pod = r.body;

    // An existing one may not change, nor go away.
    pod["spec"]["ephemeralContainers"][0]["image"] = json!("alpine:3");
    let r = s
        .json(
            &c,
            Method::PUT,
            &format!("{PODS}/web/ephemeralcontainers"),
            Some(pod.clone()),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        message(&r).contains("existing ephemeral containers \"debugger\" may not be changed\n  core.EphemeralContainer{\n"),
        "{}",
        message(&r)
    );
    // kube appends go-cmp's diff of the container: the changed field as -/+ lines.
    assert!(
        message(&r).contains("\t\tImage:   \"alpine:3\",\n"),
        "{}",
        message(&r)
    );
    pod["spec"]["ephemeralContainers"] = json!([]);
    let r = s
        .json(
            &c,
            Method::PUT,
            &format!("{PODS}/web/ephemeralcontainers"),
            Some(pod),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        message(&r).contains("may not be removed"),
        "{}",
        message(&r)
    );

    // Fields only workload containers have are refused; names are unique pod-wide. (The
    // strategic merge puts the new item first.)
    let r = smp(
        &s,
        &c,
        &format!("{PODS}/web/ephemeralcontainers"),
        json!({"spec": {"ephemeralContainers": [{"name": "app", "image": "busybox",
                    "ports": [{"containerPort": 80}], "targetContainerName": "nope"}]}})
        .to_string()
        .as_bytes(),
    )
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let m = message(&r);
    for part in [
        r#"spec.ephemeralContainers[0].name: Duplicate value: "app""#,
        r#"spec.ephemeralContainers[0].targetContainerName: Not found: "nope""#,
        "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
    ] {
        assert!(m.contains(part), "{m}");
    }

    // Through the pod itself they cannot be added.
    let mut pod = s
        .json(&c, Method::GET, &format!("{PODS}/web"), None)
        .await
        .body;
    pod["spec"]["ephemeralContainers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "more", "image": "busybox", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}));
    let r = s
        .json(&c, Method::PUT, &format!("{PODS}/web"), Some(pod))
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        message(&r).contains("pod updates may not change fields"),
        "{}",
        message(&r)
    );

    // Static pods have none.
    let r = s
        .json(
            &c,
            Method::POST,
            PODS,
            Some(json!({"metadata": {"name": "static", "annotations": {"kubernetes.io/config.mirror": "x"}},
                "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "nginx:1"}]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = smp(
        &s,
        &c,
        &format!("{PODS}/static/ephemeralcontainers"),
        br#"{"spec":{"ephemeralContainers":[{"name":"d","image":"busybox"}]}}"#,
    )
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        message(&r).contains("static pods do not support ephemeral containers"),
        "{}",
        message(&r)
    );
}

#[tokio::test]
async fn pods_are_resized_in_place() {
    let s = Server::start();
    let c = s.client();
    let created = pod(
        &s,
        &c,
        "web",
        json!({"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}),
    )
    .await;
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created["status"]["qosClass"], "Burstable");

    // kubectl patch --subresource resize.
    let out = s.ok(&[
        "patch",
        "pod",
        "web",
        "--subresource",
        "resize",
        "-o",
        "json",
        "--patch",
        r#"{"spec":{"containers":[{"name":"app","image":"ignored:9","resources":{"requests":{"cpu":"250m"}}}]}}"#,
    ]);
    let resized: Value = serde_json::from_str(&out).unwrap();
    let res = &resized["spec"]["containers"][0]["resources"];
    assert_eq!(res["requests"]["cpu"], "250m");
    assert_eq!(res["requests"]["memory"], "64Mi");
    assert_eq!(resized["spec"]["containers"][0]["image"], "nginx:1");
    assert_eq!(resized["metadata"]["generation"], 2);

    let patch = |body: Value| {
        let (s, c) = (&s, &c);
        async move {
            smp(
                s,
                c,
                &format!("{PODS}/web/resize"),
                body.to_string().as_bytes(),
            )
            .await
        }
    };
    // A memory limit may not go down while memory's policy is NotRequired.
    let r = patch(json!({"spec": {"containers": [{"name": "app", "resources": {"limits": {"memory": "100Mi"}}}]}})).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        message(&r).contains("spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer"),
        "{}",
        message(&r)
    );
    // ... and may with RestartContainer (the policy is set at creation: resize changes
    // only amounts).
    let r = s
        .json(
            &c,
            Method::POST,
            PODS,
            Some(
                json!({"metadata": {"name": "restarts"}, "spec": {"containers": [
                {"name": "app", "image": "nginx:1",
                 "resizePolicy": [{"resourceName": "memory", "restartPolicy": "RestartContainer"}],
                 "resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "128Mi"}}}]}}),
            ),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = smp(
        &s,
        &c,
        &format!("{PODS}/restarts/resize"),
        br#"{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"100Mi"}}}]}}"#,
    )
    .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["spec"]["containers"][0]["resources"]["limits"]["memory"],
        "100Mi"
    );
    // Only cpu and memory.
    let r = patch(json!({"spec": {"containers": [{"name": "app", "resources": {"requests": {"ephemeral-storage": "1Gi"}}}]}})).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        message(&r).contains("only cpu and memory resources are mutable"),
        "{}",
        message(&r)
    );
    // Requests are not removed.
    let r = patch(json!({"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": null}}}]}})).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        message(&r).contains("resource requests cannot be removed"),
        "{}",
        message(&r)
    );
    // The QoS class stays.
    let r = patch(json!({"spec": {"containers": [{"name": "app", "resources": {
        "requests": {"cpu": "1", "memory": "100Mi"}, "limits": {"cpu": "1", "memory": "100Mi"}}}]}}))
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        message(&r).contains(r#"spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing"#),
        "{}",
        message(&r)
    );
    // The main endpoint still refuses resource changes.
    let r = smp(&s, &c, &format!("{PODS}/web"), json!({"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "300m"}}}]}})
        .to_string()
        .as_bytes())
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);

    // Resize is its own permission: a user who may patch pods may not resize them.
    let dir = s.dir.path();
    let mut f = std::fs::File::create(dir.join("tokens.csv")).unwrap();
    writeln!(f, "tok-dev,dev,u-dev").unwrap();
    drop(f);
    // (the server reads the token file at start: use a second server)
    let s2 = Server::start_with(&[
        "--token-auth-file",
        dir.join("tokens.csv").to_str().unwrap(),
    ]);
    let c2 = s2.client();
    pod(&s2, &c2, "web", json!({"requests": {"cpu": "100m"}})).await;
    s2.ok(&[
        "create",
        "role",
        "pod-patcher",
        "--verb=get,patch",
        "--resource=pods",
    ]);
    s2.ok(&[
        "create",
        "rolebinding",
        "dev",
        "--role=pod-patcher",
        "--user=dev",
    ]);
    let dev = s2.anonymous_client();
    let req = |path: &str| {
        dev.patch(format!("{}{PODS}/web{path}", s2.url))
            .bearer_auth("tok-dev")
            .header("content-type", "application/strategic-merge-patch+json")
            .body(r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}"#)
    };
    let r = req("/resize").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains(r#"cannot patch resource "pods/resize" in API group """#),
        "{body}"
    );
    s2.ok(&[
        "create",
        "role",
        "pod-resizer",
        "--verb=patch",
        "--resource=pods/resize",
    ]);
    s2.ok(&[
        "create",
        "rolebinding",
        "dev-resize",
        "--role=pod-resizer",
        "--user=dev",
    ]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = req("/resize").send().await.unwrap();
        if r.status() == StatusCode::OK {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still {}", r.status());
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn bindings_and_node_status() {
    let s = Server::start();
    let c = s.client();
    pod(&s, &c, "web", json!({})).await;
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/bindings",
            Some(
                json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
                "target": {"kind": "Node", "name": "node-1"}}),
            ),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let p = s
        .json(&c, Method::GET, &format!("{PODS}/web"), None)
        .await
        .body;
    assert_eq!(p["spec"]["nodeName"], "node-1");
    // Bound already: kube's conflict.
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/bindings",
            Some(json!({"metadata": {"name": "web"}, "target": {"name": "node-2"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CONFLICT, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/bindings",
            Some(json!({"metadata": {}, "target": {"name": "node-2"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(message(&r), "name must be provided");
    let r = s
        .json(&c, Method::GET, "/api/v1/namespaces/default/bindings", None)
        .await;
    assert_eq!(r.code, StatusCode::METHOD_NOT_ALLOWED, "{}", r.body);

    // nodes/status writes only the status; the node's own update keeps it.
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/nodes",
            Some(json!({"metadata": {"name": "node-1"}, "spec": {"unschedulable": false}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    s.ok(&[
        "patch",
        "node",
        "node-1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ok"}],"spec":{}},"spec":{"unschedulable":true}}"#,
    ]);
    let n = s
        .json(&c, Method::GET, "/api/v1/nodes/node-1", None)
        .await
        .body;
    assert_eq!(n["status"]["conditions"][0]["type"], "Ready");
    assert_ne!(n["spec"]["unschedulable"], true, "{n}");
    let out = s.ok(&["get", "node", "node-1"]);
    assert!(out.contains("Ready"), "{out}");
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/api/v1/nodes/node-1",
            Some(json!({"status": {"conditions": []}, "spec": {"unschedulable": true}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["spec"]["unschedulable"], true);
    assert_eq!(r.body["status"]["conditions"][0]["type"], "Ready");
}

#[tokio::test]
async fn component_statuses_are_read_only() {
    let s = Server::start();
    let c = s.client();
    let out = s.kubectl(&["get", "componentstatuses"]);
    let text = support::stdout(&out);
    assert!(out.status.success(), "{}", support::stderr(&out));
    // kube's deprecation warning.
    assert!(
        support::stderr(&out).contains("v1 ComponentStatus is deprecated in v1.19+"),
        "{}",
        support::stderr(&out)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("NAME")
            && lines[0].contains("STATUS")
            && lines[0].contains("MESSAGE")
            && lines[0].contains("ERROR"),
        "{text}"
    );
    let etcd = lines
        .iter()
        .find(|l| l.starts_with("etcd-0"))
        .expect("etcd-0 row");
    assert!(etcd.contains("Healthy") && etcd.contains("ok"), "{etcd}");
    for name in ["scheduler", "controller-manager"] {
        assert!(lines.iter().any(|l| l.starts_with(name)), "{text}");
    }

    let r = s
        .json(&c, Method::GET, "/api/v1/componentstatuses/etcd-0", None)
        .await;
    assert_eq!(r.code, StatusCode::OK);
    assert_eq!(
        r.body,
        json!({"kind": "ComponentStatus", "apiVersion": "v1",
            "metadata": {"name": "etcd-0", "creationTimestamp": null},
            "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]})
    );
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/componentstatuses?fieldSelector=metadata.name%3Detcd-0",
            None,
        )
        .await;
    assert_eq!(r.body["kind"], "ComponentStatusList");
    assert_eq!(r.body["items"].as_array().unwrap().len(), 1, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/componentstatuses?labelSelector=a%3Db",
            None,
        )
        .await;
    assert_eq!(r.body["items"], json!([]));
    // An unknown component is kube's internal error.
    let r = s
        .json(&c, Method::GET, "/api/v1/componentstatuses/nope", None)
        .await;
    assert_eq!(r.code, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        message(&r),
        "Internal error occurred: Component not found: nope"
    );
    // Nothing else.
    for (m, path) in [
        (Method::POST, "/api/v1/componentstatuses"),
        (Method::DELETE, "/api/v1/componentstatuses/etcd-0"),
        (Method::GET, "/api/v1/componentstatuses?watch=true"),
    ] {
        let r = s.json(&c, m.clone(), path, Some(json!({}))).await;
        assert_eq!(
            r.code,
            StatusCode::METHOD_NOT_ALLOWED,
            "{m} {path}: {}",
            r.body
        );
    }
}

/// kubectl's server-side apply through `pods/resize` and `pods/ephemeralcontainers`
/// (`--subresource`): what the subresource may change is applied, recorded as an Apply of
/// that subresource.
#[tokio::test]
async fn kubectl_applies_through_resize_and_ephemeralcontainers() {
    let s = Server::start();
    let manifest = |extra: &str| {
        format!(
            r#"apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: default}}
spec:
  containers:
  - name: app
    image: nginx:1
    resources:
      requests: {{cpu: {{cpu}}, memory: 64Mi}}
      limits: {{memory: 128Mi}}
{extra}"#
        )
    };
    let manifest = |cpu: &str, extra: &str| manifest(extra).replace("{cpu}", cpu);
    s.ok_stdin(&["create", "-f", "-"], &manifest("100m", ""));
    // kubectl create owns the requests: the resize apply conflicts, as with kube, until forced.
    let file = s.dir.path().join("web.yaml");
    std::fs::write(&file, manifest("300m", "")).unwrap();
    let err = s.fails(&[
        "apply",
        "--server-side",
        "--subresource=resize",
        "--field-manager=resizer",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert!(
        err.contains(r#"conflict with "kubectl-create" using v1: .spec.containers[name="app"].resources.requests.cpu"#),
        "{err}"
    );
    let out = s.ok_stdin(
        &[
            "apply",
            "--server-side",
            "--subresource=resize",
            "--field-manager=resizer",
            "--force-conflicts",
            "--show-managed-fields",
            "-o",
            "json",
            "-f",
            "-",
        ],
        &manifest("300m", ""),
    );
    let applied: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(
        applied["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "300m"
    );
    let entries = applied["metadata"]["managedFields"].as_array().unwrap();
    let resizer = entries
        .iter()
        .find(|e| e["manager"] == "resizer")
        .unwrap_or_else(|| panic!("{entries:?}"));
    assert_eq!(resizer["operation"], "Apply");
    assert_eq!(resizer["subresource"], "resize");
    let out = s.ok_stdin(
        &[
            "apply",
            "--server-side",
            "--subresource=ephemeralcontainers",
            "--field-manager=debugger",
            "--show-managed-fields",
            "-o",
            "json",
            "-f",
            "-",
        ],
        &manifest(
            "300m",
            "  ephemeralContainers:\n  - {name: dbg, image: busybox, stdin: true}\n",
        ),
    );
    let applied: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(applied["spec"]["ephemeralContainers"][0]["name"], "dbg");
    let entries = applied["metadata"]["managedFields"].as_array().unwrap();
    let debugger = entries
        .iter()
        .find(|e| e["manager"] == "debugger")
        .unwrap_or_else(|| panic!("{entries:?}"));
    assert_eq!(debugger["subresource"], "ephemeralcontainers");
    assert!(debugger["fieldsV1"]["f:spec"]["f:ephemeralContainers"].is_object());
    assert!(debugger["fieldsV1"].get("f:status").is_none());
}
