//! End-to-end: the real `rafter` binary driven by kubectl 1.32, checking the outputs and error
//! texts kube-apiserver users see.

mod support;

use std::time::{Duration, Instant};

use support::{stderr, stdout, Server};

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
"#;

fn header_of(table: &str) -> Vec<String> {
    table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn kubectl_workflow() {
    let s = Server::start();

    // Namespaces.
    assert_eq!(
        s.ok(&["create", "namespace", "demo"]).trim(),
        "namespace/demo created"
    );
    let ns = s.ok(&["get", "ns"]);
    assert_eq!(header_of(&ns), ["NAME", "STATUS", "AGE"]);
    for n in [
        "default",
        "demo",
        "kube-system",
        "kube-public",
        "kube-node-lease",
    ] {
        assert!(
            ns.lines().any(|l| l.starts_with(n) && l.contains("Active")),
            "{ns}"
        );
    }
    let err = s.fails(&["create", "namespace", "demo"]);
    assert!(
        err.contains(r#"Error from server (AlreadyExists): namespaces "demo" already exists"#),
        "{err}"
    );

    // apply -f, twice.
    let manifest = s.dir.path().join("deploy.yaml");
    std::fs::write(&manifest, DEPLOYMENT).unwrap();
    let m = manifest.to_str().unwrap();
    assert_eq!(
        s.ok(&["apply", "-f", m]).trim(),
        "deployment.apps/web created"
    );
    assert_eq!(
        s.ok(&["apply", "-f", m]).trim(),
        "deployment.apps/web unchanged"
    );

    // get in every output format.
    let wide = s.ok(&["get", "deploy", "-n", "demo", "-o", "wide"]);
    assert_eq!(
        header_of(&wide),
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert!(
        wide.contains("nginx:1.27") && wide.contains("app=web"),
        "{wide}"
    );
    let yaml = s.ok(&["get", "deploy", "web", "-n", "demo", "-o", "yaml"]);
    assert!(
        yaml.contains("replicas: 2") && yaml.contains("kind: Deployment"),
        "{yaml}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&s.ok(&["get", "deploy", "web", "-n", "demo", "-o", "json"])).unwrap();
    assert_eq!(json["spec"]["replicas"], 2);
    assert_eq!(json["metadata"]["generation"], 1);
    assert!(json["metadata"]["uid"].as_str().unwrap().len() == 36);
    assert_eq!(
        s.ok(&[
            "get",
            "deploy",
            "web",
            "-n",
            "demo",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "2"
    );
    let labels = s.ok(&["get", "deploy", "-n", "demo", "--show-labels"]);
    assert_eq!(header_of(&labels).last().unwrap(), "LABELS");
    assert!(labels.contains("app=web"), "{labels}");
    let all = s.ok(&["get", "all", "-n", "demo"]);
    assert!(all.contains("deployment.apps/web"), "{all}");
    let described = s.ok(&["describe", "deployment", "web", "-n", "demo"]);
    for needle in [
        "Name:",
        "web",
        "Namespace:",
        "demo",
        "Replicas:",
        "Selector:",
        "app=web",
        "nginx:1.27",
    ] {
        assert!(
            described.contains(needle),
            "describe lacks {needle}: {described}"
        );
    }

    // label, annotate, three patch types, replace, scale, edit.
    assert_eq!(
        s.ok(&["label", "deploy", "web", "-n", "demo", "tier=front"])
            .trim(),
        "deployment.apps/web labeled"
    );
    assert_eq!(
        s.ok(&["annotate", "deploy", "web", "-n", "demo", "note=hi"])
            .trim(),
        "deployment.apps/web annotated"
    );
    assert_eq!(
        s.ok(&["patch", "deploy", "web", "-n", "demo", "-p", r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}"#]).trim(),
        "deployment.apps/web patched"
    );
    let after: serde_json::Value =
        serde_json::from_str(&s.ok(&["get", "deploy", "web", "-n", "demo", "-o", "json"])).unwrap();
    let containers = after["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    assert_eq!(
        containers.len(),
        1,
        "strategic merge keeps one container by name"
    );
    assert_eq!(containers[0]["image"], "nginx:1.28");
    assert_eq!(
        containers[0]["ports"][0]["containerPort"], 80,
        "merge kept ports"
    );
    assert_eq!(
        after["metadata"]["generation"], 2,
        "spec change bumps generation"
    );
    assert_eq!(
        s.ok(&[
            "patch",
            "deploy",
            "web",
            "-n",
            "demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":3}}"#
        ])
        .trim(),
        "deployment.apps/web patched"
    );
    assert_eq!(
        s.ok(&[
            "patch",
            "deploy",
            "web",
            "-n",
            "demo",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/replicas","value":4}]"#
        ])
        .trim(),
        "deployment.apps/web patched"
    );
    assert_eq!(
        s.ok(&[
            "get",
            "deploy",
            "web",
            "-n",
            "demo",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "4"
    );
    let current = s.ok(&["get", "deploy", "web", "-n", "demo", "-o", "yaml"]);
    let replaced = current.replace("replicas: 4", "replicas: 1");
    assert_eq!(
        s.ok_stdin(&["replace", "-f", "-"], &replaced).trim(),
        "deployment.apps/web replaced"
    );
    assert_eq!(
        s.ok(&["scale", "deploy", "web", "-n", "demo", "--replicas=5"])
            .trim(),
        "deployment.apps/web scaled"
    );
    assert_eq!(
        s.ok(&[
            "get",
            "deploy",
            "web",
            "-n",
            "demo",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "5"
    );
    let editor = s.dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/replicas: 5/replicas: 6/' \"$1\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .unwrap();
    let out = s.kubectl_env(
        &["edit", "deploy", "web", "-n", "demo"],
        &[("EDITOR", editor.to_str().unwrap())],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "deployment.apps/web edited");
    assert_eq!(
        s.ok(&[
            "get",
            "deploy",
            "web",
            "-n",
            "demo",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "6"
    );
    // Stale update: 409 Conflict with kube's message.
    let stale = current.replace("replicas: 4", "replicas: 7");
    let stale_file = s.dir.path().join("stale.yaml");
    std::fs::write(&stale_file, stale).unwrap();
    let out = s.kubectl(&["replace", "-f", stale_file.to_str().unwrap()]);
    assert!(
        stderr(&out).contains("Error from server (Conflict): error when replacing"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("the object has been modified; please apply your changes to the latest version and try again"));

    // Errors as kube-apiserver words them.
    let err = s.fails(&["get", "deploy", "nope", "-n", "demo"]);
    assert!(
        err.contains(r#"Error from server (NotFound): deployments.apps "nope" not found"#),
        "{err}"
    );
    let err = s.fails(&["create", "configmap", "Bad_Name", "-n", "demo"]);
    assert!(err.contains(r#"error: failed to create configmap: ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"#), "{err}");
    let bad = s.dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n  namespace: demo\n",
    )
    .unwrap();
    let err = s.fails(&["create", "-f", bad.to_str().unwrap()]);
    assert!(
        err.contains(
            r#"The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name""#
        ),
        "{err}"
    );
    let err = s.fails(&["create", "configmap", "x", "-n", "nowhere"]);
    assert!(
        err.contains(r#"error: failed to create configmap: namespaces "nowhere" not found"#),
        "{err}"
    );

    // Server-side dry run writes nothing.
    assert_eq!(
        s.ok(&[
            "create",
            "configmap",
            "dry",
            "-n",
            "demo",
            "--from-literal=a=b",
            "--dry-run=server"
        ])
        .trim(),
        "configmap/dry created (server dry run)"
    );
    let err = s.fails(&["get", "configmap", "dry", "-n", "demo"]);
    assert!(err.contains(r#"configmaps "dry" not found"#), "{err}");

    // Finalizer flow: delete leaves the object until the finalizer goes.
    s.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: demo\n  finalizers: [example.com/hold]\ndata:\n  a: b\n",
    );
    assert_eq!(
        s.ok(&["delete", "configmap", "held", "-n", "demo", "--wait=false"])
            .trim(),
        r#"configmap "held" deleted"#
    );
    let ts = s.ok(&[
        "get",
        "configmap",
        "held",
        "-n",
        "demo",
        "-o",
        "jsonpath={.metadata.deletionTimestamp}",
    ]);
    assert!(!ts.is_empty(), "deletionTimestamp set");
    s.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "demo",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    let err = s.fails(&["get", "configmap", "held", "-n", "demo"]);
    assert!(
        err.contains(r#"Error from server (NotFound): configmaps "held" not found"#),
        "{err}"
    );

    // Discovery and explain.
    let res = s.ok(&["api-resources"]);
    assert_eq!(
        header_of(&res),
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    );
    assert!(
        res.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["deployments", "deploy", "apps/v1", "true", "Deployment"]),
        "{res}"
    );
    assert!(
        res.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["namespaces", "ns", "v1", "false", "Namespace"]),
        "{res}"
    );
    let versions = s.ok(&["api-versions"]);
    for v in [
        "apps/v1",
        "batch/v1",
        "v1",
        "rbac.authorization.k8s.io/v1",
        "autoscaling/v2",
    ] {
        assert!(versions.lines().any(|l| l == v), "{v} missing: {versions}");
    }
    let explain = s.ok(&["explain", "deployment.spec.replicas"]);
    assert!(explain.contains("FIELD: replicas <integer>"), "{explain}");

    // Namespace deletion empties the namespace, then removes it.
    assert_eq!(
        s.ok(&["delete", "namespace", "demo", "--timeout=30s"])
            .trim(),
        r#"namespace "demo" deleted"#
    );
    let err = s.fails(&["get", "namespace", "demo"]);
    assert!(err.contains(r#"namespaces "demo" not found"#), "{err}");
}

#[test]
fn kill_dash_nine_keeps_acknowledged_writes() {
    let mut s = Server::start();
    for i in 0..20 {
        s.ok(&[
            "create",
            "configmap",
            &format!("cm-{i}"),
            "--from-literal=k=v",
        ]);
    }
    let before = s.ok(&["get", "configmap", "-o", "name"]);
    s.restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = s.kubectl(&["get", "configmap", "-o", "name"]);
        if out.status.success() {
            assert_eq!(stdout(&out), before);
            break;
        }
        assert!(Instant::now() < deadline, "{}", stderr(&out));
        std::thread::sleep(Duration::from_millis(200));
    }
    // The revision counter continues where it was.
    s.ok(&["create", "configmap", "after-restart"]);
    let rv: i64 = s
        .ok(&[
            "get",
            "configmap",
            "after-restart",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ])
        .parse()
        .unwrap();
    assert!(rv > 20, "revision continued: {rv}");
}

/// The CronTab flow of the CustomResourceDefinition task, with kubectl on one replica:
/// apply the definition, wait for Established, apply an object, `get crontab,ct`, explain,
/// merge and JSON patch, edit, the 415 of a strategic merge patch, delete.
#[test]
fn crontab_flow_with_kubectl() {
    let s = Server::start();
    s.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              description: The CronTab's spec.
              properties:
                cronSpec:
                  type: string
                  description: When to run, in cron syntax.
                image:
                  type: string
                replicas:
                  type: integer
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
"#,
    );
    s.ok(&[
        "wait",
        "--for",
        "condition=established",
        "--timeout=30s",
        "crd/crontabs.stable.example.com",
    ]);
    // discovery may trail the condition by a moment on a client's first look
    let deadline = Instant::now() + Duration::from_secs(20);
    let created = loop {
        let out = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&s.kubeconfig)
            .args(["apply", "-f", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(
                    b"apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: my-new-cron-object\nspec:\n  cronSpec: \"* * * * */5\"\n  image: my-awesome-cron-image\n",
                )?;
                c.wait_with_output()
            })
            .unwrap();
        if out.status.success() {
            break stdout(&out);
        }
        assert!(
            Instant::now() < deadline,
            "apply of the CronTab: {}",
            stderr(&out)
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(
        created.trim(),
        "crontab.stable.example.com/my-new-cron-object created"
    );
    let table = s.ok(&["get", "crontab"]);
    assert_eq!(header_of(&table), ["NAME", "AGE"], "{table}");
    assert!(table.contains("my-new-cron-object"), "{table}");
    let both = s.ok(&["get", "crontab,ct", "-o", "name"]);
    // both names resolve to one resource, which kubectl lists once
    assert_eq!(
        both.lines().collect::<Vec<_>>(),
        ["crontab.stable.example.com/my-new-cron-object"],
        "{both}"
    );
    assert_eq!(
        s.ok(&[
            "get",
            "ct",
            "my-new-cron-object",
            "-o",
            "jsonpath={.spec.cronSpec}"
        ]),
        "* * * * */5"
    );
    let explain = s.ok(&["explain", "crontab.spec"]);
    assert!(explain.contains("KIND:       CronTab"), "{explain}");
    assert!(explain.contains("cronSpec\t<string>"), "{explain}");
    assert!(
        explain.contains("When to run, in cron syntax."),
        "{explain}"
    );
    s.ok(&[
        "patch",
        "ct",
        "my-new-cron-object",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    s.ok(&[
        "patch",
        "ct",
        "my-new-cron-object",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/image","value":"other-image"}]"#,
    ]);
    let out = s.kubectl(&[
        "patch",
        "ct",
        "my-new-cron-object",
        "-p",
        r#"{"spec":{"replicas":4}}"#,
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("application/strategic-merge-patch+json is not supported by stable.example.com/v1, Kind=CronTab: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json"),
        "{}",
        stderr(&out)
    );
    let out = s.kubectl_env(
        &["edit", "ct", "my-new-cron-object"],
        &[("KUBE_EDITOR", "sed -i s/other-image/edited-image/")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let spec = s.ok(&[
        "get",
        "ct",
        "my-new-cron-object",
        "-o",
        "jsonpath={.spec.replicas} {.spec.image}",
    ]);
    assert_eq!(spec, "3 edited-image");
    assert_eq!(
        s.ok(&["delete", "ct", "my-new-cron-object"]).trim(),
        "crontab.stable.example.com \"my-new-cron-object\" deleted"
    );
    s.ok(&["delete", "crd", "crontabs.stable.example.com"]);
}
