//! Server-side apply end to end (issue 15): the real `rafter` binary driven by kubectl's
//! `apply --server-side` (`--field-manager`, `--force-conflicts`, `--dry-run=server`) and by
//! raw `application/apply-patch+yaml` PATCHes, checking kube's texts and `managedFields`.

mod support;

use reqwest::StatusCode;
use serde_json::Value;
use support::Server;

fn deployment(replicas: u32, image: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels:
    app: web
spec:
  replicas: {replicas}
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
        image: {image}
"#
    )
}

fn get(s: &Server) -> Value {
    serde_json::from_str(&s.ok(&[
        "get",
        "deployment",
        "web",
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .unwrap()
}

fn entries(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_string(),
                e["operation"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn kubectl_server_side_apply() {
    let s = Server::start();
    let f = s.dir.path().join("d.yaml");
    let path = f.to_str().unwrap();

    std::fs::write(&f, deployment(2, "nginx:1.27")).unwrap();
    assert_eq!(
        s.ok(&["apply", "--server-side", "-f", path]).trim(),
        "deployment.apps/web serverside-applied"
    );
    let d = get(&s);
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(entries(&d), [("kubectl".into(), "Apply".into())]);
    let e = &d["metadata"]["managedFields"][0];
    assert_eq!(e["apiVersion"], "apps/v1");
    assert_eq!(e["fieldsType"], "FieldsV1");
    assert!(e["time"].is_string());
    assert_eq!(
        e["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"nginx\"}"]
            ["f:image"],
        serde_json::json!({})
    );
    assert!(e["fieldsV1"]["f:metadata"].get("f:name").is_none());

    // A second manager changing replicas conflicts, in kube's words.
    std::fs::write(&f, deployment(5, "nginx:1.27")).unwrap();
    let err = s.fails(&[
        "apply",
        "--server-side",
        "--field-manager",
        "hpa",
        "-f",
        path,
    ]);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas"#),
        "{err}"
    );
    assert_eq!(get(&s)["spec"]["replicas"], 2);

    // diff --server-side shows the change an apply would make, and writes nothing.
    let out = s.kubectl(&[
        "diff",
        "--server-side",
        "--field-manager",
        "hpa",
        "--force-conflicts",
        "-f",
        path,
    ]);
    let diff = support::stdout(&out);
    assert!(
        diff.contains("-  replicas: 2") && diff.contains("+  replicas: 5"),
        "{diff}{}",
        support::stderr(&out)
    );
    assert_eq!(get(&s)["spec"]["replicas"], 2);

    // Server-side dry run changes nothing.
    s.ok(&[
        "apply",
        "--server-side",
        "--field-manager",
        "hpa",
        "--force-conflicts",
        "--dry-run=server",
        "-f",
        path,
    ]);
    assert_eq!(get(&s)["spec"]["replicas"], 2);

    // --force-conflicts takes ownership.
    s.ok(&[
        "apply",
        "--server-side",
        "--field-manager",
        "hpa",
        "--force-conflicts",
        "-f",
        path,
    ]);
    let d = get(&s);
    assert_eq!(d["spec"]["replicas"], 5);
    // kube sorts entries by operation, time (seconds), then manager: compare as a set.
    let mut by: Vec<(String, String)> = entries(&d);
    by.sort();
    assert_eq!(
        by,
        [
            ("hpa".to_string(), "Apply".to_string()),
            ("kubectl".to_string(), "Apply".to_string())
        ]
    );
    let kubectl = d["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kubectl")
        .unwrap();
    assert!(kubectl["fieldsV1"]["f:spec"].get("f:replicas").is_none());

    // The first manager drops replicas from its configuration: hpa still owns it, it stays.
    let without = deployment(5, "nginx:1.27").replace("  replicas: 5\n", "");
    std::fs::write(&f, without).unwrap();
    s.ok(&["apply", "--server-side", "-f", path]);
    assert_eq!(get(&s)["spec"]["replicas"], 5);

    // A client-side Update (scale) by another manager, then an apply conflicts with it.
    s.ok(&["scale", "deployment", "web", "--replicas", "3"]);
    // The Update took replicas over: the appliers no longer own it.
    let d = get(&s);
    for e in d["metadata"]["managedFields"].as_array().unwrap() {
        if e["operation"] == "Apply" {
            assert!(e["fieldsV1"]["f:spec"].get("f:replicas").is_none(), "{e}");
        } else {
            assert_eq!(
                e["fieldsV1"]["f:spec"]["f:replicas"],
                serde_json::json!({}),
                "{e}"
            );
        }
    }
    std::fs::write(&f, deployment(7, "nginx:1.27")).unwrap();
    let err = s.fails(&[
        "apply",
        "--server-side",
        "--field-manager",
        "hpa",
        "-f",
        path,
    ]);
    // (kubectl scale writes the scale subresource: kube names it.)
    assert!(
        err.contains(
            r#"Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas"#
        ),
        "{err}"
    );
}

#[tokio::test]
async fn raw_apply_patches() {
    let s = Server::start();
    let c = s.client();
    let url = format!("{}/api/v1/namespaces/default/configmaps/cm", s.url);
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: some value\n";
    let patch = |q: &str, body: &str| {
        c.patch(format!("{url}{q}"))
            .header("content-type", "application/apply-patch+yaml")
            .body(body.to_string())
            .send()
    };

    // fieldManager is required.
    let r = patch("", body).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["message"],
        r#"PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch"#
    );

    // Created when absent (201), then 200.
    let r = patch("?fieldManager=alice", body).await.unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["data"]["key"], "some value");
    let mf = &v["metadata"]["managedFields"];
    assert_eq!(mf.as_array().unwrap().len(), 1);
    assert_eq!(mf[0]["manager"], "alice");
    assert_eq!(mf[0]["operation"], "Apply");
    assert_eq!(mf[0]["apiVersion"], "v1");
    assert_eq!(
        mf[0]["fieldsV1"],
        serde_json::json!({"f:data": {"f:key": {}}})
    );

    // managedFields in the body and a wrong version are rejected as kube rejects them.
    let r = patch(
        "?fieldManager=alice",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  managedFields: []\n",
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["message"], "metadata.managedFields must be nil");
    let r = patch("?fieldManager=alice", "apiVersion: v2\nkind: ConfigMap\n")
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    // Another applier setting the same value shares ownership; changing it conflicts (409
    // with one FieldManagerConflict cause).
    let r = patch("?fieldManager=bob", body).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["metadata"]["managedFields"].as_array().unwrap().len(), 2);
    let changed = body.replace("some value", "other");
    let r = patch("?fieldManager=bob", &changed).await.unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["reason"], "Conflict");
    assert_eq!(
        v["message"],
        r#"Apply failed with 1 conflict: conflict with "alice": .data.key"#
    );
    assert_eq!(
        v["details"]["causes"],
        serde_json::json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".data.key"}])
    );
    // force: bob alone owns the key; alice's entry has nothing left and goes.
    let r = patch("?fieldManager=bob&force=true", &changed)
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["data"]["key"], "other");
    let mf = v["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(mf.len(), 1, "{mf:?}");
    assert_eq!(mf[0]["manager"], "bob");
    // managedFields reset by an update writing `[{}]`.
    let r = c
        .patch(url.clone())
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"metadata":{"managedFields":[{}]}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert!(v["metadata"].get("managedFields").is_none(), "{v}");
    // An update of an object without entries records none (kube tracks it again from its
    // next apply).
    let r = c
        .patch(url.clone())
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"metadata":{"annotations":{"x":"y"}}}"#)
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert!(v["metadata"].get("managedFields").is_none(), "{v}");
    // The first apply after that: what the object held belongs to `before-first-apply`.
    let r = patch("?fieldManager=bob", &changed).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    let mf = v["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(mf.len(), 2, "{mf:?}");
    assert_eq!(mf[1]["manager"], "before-first-apply");
    assert_eq!(mf[1]["operation"], "Update");
    assert_eq!(
        mf[1]["fieldsV1"],
        serde_json::json!({"f:data": {".": {}, "f:key": {}}, "f:metadata": {"f:annotations": {".": {}, "f:x": {}}}})
    );

    // bob drops the key from its configuration: before-first-apply still owns it, so it
    // stays; once that entry gives it up too (a forced apply by bob takes it, then bob drops
    // it), nobody owns it and it is removed.
    let without = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:\n    a: b\n";
    let r = patch("?fieldManager=bob", without).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["data"]["key"], "other", "{v}");
    let forced = changed.replace("other", "third");
    let r = patch("?fieldManager=bob&force=true", &forced)
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = patch("?fieldManager=bob", without).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert!(v.get("data").is_none_or(|d| d.get("key").is_none()), "{v}");
    assert_eq!(v["metadata"]["labels"]["a"], "b");
}

/// A create records what the object holds relative to the kind's empty object, defaults
/// included, exactly as kube-apiserver v1.33 records `kubectl create deployment`.
#[test]
fn create_records_kube_field_set() {
    let s = Server::start();
    s.ok(&["create", "deployment", "web", "--image=nginx"]);
    let d = get(&s);
    let mf = d["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(mf.len(), 1, "{mf:?}");
    assert_eq!(mf[0]["manager"], "kubectl-create");
    assert_eq!(mf[0]["operation"], "Update");
    let want = serde_json::json!({
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:progressDeadlineSeconds": {},
            "f:replicas": {},
            "f:revisionHistoryLimit": {},
            "f:selector": {},
            "f:strategy": {
                "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
                "f:type": {}
            },
            "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {"k:{\"name\":\"nginx\"}": {
                        ".": {},
                        "f:image": {},
                        "f:imagePullPolicy": {},
                        "f:name": {},
                        "f:resources": {},
                        "f:terminationMessagePath": {},
                        "f:terminationMessagePolicy": {}
                    }},
                    "f:dnsPolicy": {},
                    "f:restartPolicy": {},
                    "f:schedulerName": {},
                    "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {}
                }
            }
        }
    });
    assert_eq!(mf[0]["fieldsV1"], want, "{}", mf[0]["fieldsV1"]);
}

/// kubectl's client-side apply → server-side apply → client-side apply, and `kubectl edit`
/// after an apply, as kube's last-applied manager and updater make them work.
#[test]
fn client_side_and_server_side_migration() {
    let s = Server::start();
    let f = s.dir.path().join("d.yaml");
    let path = f.to_str().unwrap();
    const LAST: &str = "kubectl.kubernetes.io/last-applied-configuration";

    std::fs::write(&f, deployment(2, "nginx:1.27")).unwrap();
    s.ok(&["apply", "-f", path]);
    let d = get(&s);
    assert!(d["metadata"]["annotations"][LAST].is_string());
    assert_eq!(
        entries(&d),
        [("kubectl-client-side-apply".into(), "Update".into())]
    );

    // Server-side apply of a changed configuration: no conflict with the client-side
    // applier's fields, and the last-applied annotation follows the new configuration.
    std::fs::write(&f, deployment(3, "nginx:1.27")).unwrap();
    s.ok(&["apply", "--server-side", "-f", path]);
    let d = get(&s);
    assert_eq!(d["spec"]["replicas"], 3);
    assert!(
        entries(&d).contains(&("kubectl".into(), "Apply".into())),
        "{d}"
    );
    let last: Value =
        serde_json::from_str(d["metadata"]["annotations"][LAST].as_str().unwrap()).unwrap();
    assert_eq!(last["spec"]["replicas"], 3, "{last}");
    assert!(d["metadata"]["annotations"][LAST]
        .as_str()
        .unwrap()
        .ends_with('\n'));

    // A field the annotation recorded with another value than the live one still conflicts.
    s.ok(&["scale", "deployment", "web", "--replicas", "9"]);
    std::fs::write(&f, deployment(4, "nginx:1.28")).unwrap();
    let err = s.fails(&["apply", "--server-side", "-f", path]);
    assert!(
        err.contains("conflict with \"kubectl\"") && err.contains(".spec.replicas"),
        "{err}"
    );

    // Back to client-side apply: kubectl diffs against the annotation the server kept.
    s.ok(&["apply", "-f", path]);
    let d = get(&s);
    assert_eq!(d["spec"]["replicas"], 4);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.28"
    );

    // kubectl edit after the applies: an Update by kubectl-edit owning what it changed.
    let script = s.dir.path().join("edit.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nsed -i 's/replicas: 4/replicas: 6/' \"$1\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", script.to_str().unwrap()])
        .status()
        .unwrap();
    let out = s.kubectl_env(
        &["edit", "deployment", "web"],
        &[("KUBE_EDITOR", script.to_str().unwrap())],
    );
    assert!(out.status.success(), "{}", support::stderr(&out));
    let d = get(&s);
    assert_eq!(d["spec"]["replicas"], 6);
    let edit = d["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kubectl-edit")
        .expect("kubectl-edit entry");
    assert_eq!(edit["operation"], "Update");
    assert_eq!(
        edit["fieldsV1"]["f:spec"]["f:replicas"],
        serde_json::json!({})
    );
}

/// More than ten Update managers: the oldest fold into `ancient-changes`.
#[tokio::test]
async fn update_managers_are_capped() {
    let s = Server::start();
    let c = s.client();
    let url = format!("{}/api/v1/namespaces/default/configmaps", s.url);
    let r = c
        .post(&url)
        .query(&[("fieldManager", "m00")])
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cap"}, "data": {"k00": "v"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let mut last = Value::Null;
    for i in 1..=11 {
        let r = c
            .patch(format!("{url}/cap"))
            .query(&[("fieldManager", format!("m{i:02}"))])
            .header("content-type", "application/merge-patch+json")
            .body(format!(r#"{{"data":{{"k{i:02}":"v"}}}}"#))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        last = r.json().await.unwrap();
    }
    let mf = last["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(mf.len(), 10, "{mf:?}");
    let ancient = mf
        .iter()
        .find(|e| e["manager"] == "ancient-changes")
        .expect("ancient-changes");
    // Written within the same second: the oldest by name, m00 .. m02, were folded.
    let keys: Vec<&String> = ancient["fieldsV1"]["f:data"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, [".", "f:k00", "f:k01", "f:k02"], "{ancient}");
    assert!(!mf
        .iter()
        .any(|e| e["manager"] == "m00" || e["manager"] == "m02"));
}

/// PatchOptions as kube validates them: `force` only with apply, printable field managers.
#[tokio::test]
async fn patch_options_are_validated() {
    let s = Server::start();
    let c = s.client();
    let url = format!("{}/api/v1/namespaces/default/configmaps", s.url);
    let r = c
        .post(&url)
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = c
        .patch(format!("{url}/o?force=true"))
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"data":{"a":"b"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["message"],
        r#"PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch"#
    );
    let r = c
        .patch(format!("{url}/o?fieldManager=a%07b"))
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"data":{"a":"b"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: \"a\\ab\": invalid character U+0007 (at position 1)"
    );
}

/// A built-in's apply configuration with fields its type does not declare is kube's 500 from
/// the typed conversion, whatever `fieldValidation` says; nothing is written.
#[tokio::test]
async fn undeclared_fields_are_refused() {
    let s = Server::start();
    let c = s.client();
    let url = format!("{}/api/v1/namespaces/default/configmaps/u", s.url);
    for q in ["", "&fieldValidation=Ignore"] {
        let r = c
            .patch(format!("{url}?fieldManager=m{q}"))
            .header("content-type", "application/apply-patch+yaml")
            .body("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: u\n  namespace: default\nfoo: 1\nbar: 2\n")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 500);
        let v: Value = r.json().await.unwrap();
        let m = v["message"].as_str().unwrap();
        assert!(
            m.starts_with(
                "failed to create typed patch object (default/u; /v1, Kind=ConfigMap): errors:\n  "
            ) && m.contains("\n  .bar: field not declared in schema")
                && m.contains("\n  .foo: field not declared in schema"),
            "{m}"
        );
    }
    let r = c.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 404);
}
