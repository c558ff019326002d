//! Server-side apply on custom resources and subresources (issue 15), over real HTTPS against
//! the `rafter` binary, with kubectl where a user would use it. Expected entries follow
//! kube-apiserver v1.33: custom resources merged per their structural schema (map / set /
//! atomic lists, atomic maps and structs, preserved unknown fields, embedded resources),
//! undeclared fields refused as SMD refuses them, `/status` writes recorded with
//! `subresource: status` under the status strategy's reset fields, and `/scale` writes mapped
//! onto the parent's replicas field by kube's scale handler (test/integration/apiserver/apply:
//! apply_crd_test.go, status_test.go, scale_test.go).

mod support;

use reqwest::Method;
use serde_json::{json, Value};
use support::Server;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/apply.example.com/v1/namespaces/default/widgets";
const APPLY: &str = "application/apply-patch+yaml";
const MERGE: &str = "application/merge-patch+json";

fn widget_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.apply.example.com"},
        "spec": {"group": "apply.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.ready"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer"},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port", "protocol"],
                            "items": {"type": "object", "required": ["port"], "properties": {
                                "port": {"type": "integer"},
                                "protocol": {"type": "string", "default": "TCP"},
                                "name": {"type": "string"}}}},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set",
                            "items": {"type": "string"}},
                        "args": {"type": "array", "items": {"type": "string"}},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                            "properties": {"app": {"type": "string"}, "tier": {"type": "string"}}},
                        "env": {"type": "object", "additionalProperties": {"type": "string"}},
                        "size": {"x-kubernetes-int-or-string": true},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                            "x-kubernetes-preserve-unknown-fields": true}}},
                    "status": {"type": "object", "properties": {
                        "ready": {"type": "integer"}, "phase": {"type": "string"}}}}}}}]}})
}

async fn define(s: &Server, c: &reqwest::Client) {
    let r = s.json(c, Method::POST, CRDS, Some(widget_crd())).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.json(c, Method::GET, WIDGETS, None).await.code.as_u16() != 200 {
        assert!(std::time::Instant::now() < deadline, "widgets never served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn patch(
    s: &Server,
    c: &reqwest::Client,
    path: &str,
    ctype: &str,
    body: &str,
) -> support::Reply {
    s.send(
        c,
        Method::PATCH,
        path,
        ctype,
        Some(body.as_bytes().to_vec()),
    )
    .await
}

/// The entries without their times, and each entry's time presence.
fn entries(obj: &Value) -> Vec<Value> {
    obj["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut e| {
            let o = e.as_object_mut().unwrap();
            let had_time = o.remove("time").is_some();
            o.insert("time?".into(), json!(had_time));
            e
        })
        .collect()
}

fn entry<'a>(entries: &'a [Value], manager: &str, operation: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
        .unwrap_or_else(|| panic!("no {manager} {operation} entry in {entries:#?}"))
}

const ALICE: &str = r#"apiVersion: apply.example.com/v1
kind: Widget
metadata:
  name: w
spec:
  replicas: 1
  ports:
  - port: 80
    name: http
  tags: [a]
  args: [x]
  selector:
    app: web
  env:
    A: "1"
  size: 50%
  extra:
    free:
      y: 1
  template:
    apiVersion: v1
    kind: Pod
    metadata:
      name: p
    spec:
      containers:
      - name: c
status:
  ready: 7
"#;

#[tokio::test]
async fn custom_resources_merge_by_their_schema() {
    let s = Server::start();
    let c = s.client();
    define(&s, &c).await;
    let w = format!("{WIDGETS}/w");

    // Created by the apply (201); status is reset on the main resource: neither stored nor
    // owned. The applier owns what it sent, keyed as the schema says.
    let r = patch(&s, &c, &format!("{w}?fieldManager=alice"), APPLY, ALICE).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert!(r.body.get("status").is_none(), "{}", r.body);
    assert_eq!(
        r.body["spec"]["ports"],
        json!([{"port": 80, "name": "http", "protocol": "TCP"}])
    );
    assert_eq!(
        entries(&r.body),
        [
            json!({"manager": "alice", "operation": "Apply", "apiVersion": "apply.example.com/v1",
            "time?": true, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {
                "f:args": {},
                "f:env": {"f:A": {}},
                "f:extra": {"f:free": {".": {}, "f:y": {}}},
                "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}}},
                "f:replicas": {},
                "f:selector": {},
                "f:size": {},
                "f:tags": {"v:\"a\"": {}},
                "f:template": {"f:apiVersion": {}, "f:kind": {}, "f:metadata": {"f:name": {}},
                    "f:spec": {".": {}, "f:containers": {}}}}}})
        ]
    );

    // Another applier: a new map-list item and set item merge in; changing the atomic
    // selector conflicts with its owner.
    let bob = "apiVersion: apply.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  ports:\n  - port: 53\n    protocol: UDP\n  tags: [b]\n  selector:\n    tier: db\n";
    let r = patch(&s, &c, &format!("{w}?fieldManager=bob"), APPLY, bob).await;
    assert_eq!(r.code.as_u16(), 409, "{}", r.body);
    assert_eq!(
        r.body["message"],
        r#"Apply failed with 1 conflict: conflict with "alice": .spec.selector"#
    );
    assert_eq!(
        r.body["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".spec.selector"}])
    );
    let r = patch(
        &s,
        &c,
        &format!("{w}?fieldManager=bob&force=true"),
        APPLY,
        bob,
    )
    .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let spec = &r.body["spec"];
    assert_eq!(
        spec["ports"],
        json!([{"port": 80, "name": "http", "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}])
    );
    assert_eq!(spec["tags"], json!(["a", "b"]));
    // the atomic struct is replaced whole, not merged
    assert_eq!(spec["selector"], json!({"tier": "db"}));
    let e = entries(&r.body);
    assert!(entry(&e, "alice", "Apply")["fieldsV1"]["f:spec"]
        .get("f:selector")
        .is_none());
    assert_eq!(
        entry(&e, "bob", "Apply")["fieldsV1"],
        json!({"f:spec": {
            "f:ports": {"k:{\"port\":53,\"protocol\":\"UDP\"}": {".": {}, "f:port": {}, "f:protocol": {}}},
            "f:selector": {},
            "f:tags": {"v:\"b\"": {}}}})
    );

    // A field the schema does not declare: SMD's typed-patch error, a 500 as kube answers.
    let r = patch(
        &s,
        &c,
        &format!("{w}?fieldManager=alice"),
        APPLY,
        "apiVersion: apply.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nspec:\n  nope: 1\n",
    )
    .await;
    assert_eq!(r.code.as_u16(), 500, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "failed to create typed patch object (default/w; apply.example.com/v1, Kind=Widget): .spec.nope: field not declared in schema"
    );

    // alice still applies her selector: bob took it by force, so that conflicts now.
    let less = ALICE
        .replace("  args: [x]\n", "")
        .replace("  env:\n    A: \"1\"\n", "");
    let r = patch(&s, &c, &format!("{w}?fieldManager=alice"), APPLY, &less).await;
    assert_eq!(r.code.as_u16(), 409, "{}", r.body);
    // She stops applying args, env and the selector: nobody else owns the first two, so they
    // go; the selector stays bob's; the embedded resource and preserved fields stay hers.
    let less = less.replace("  selector:\n    app: web\n", "");
    let r = patch(&s, &c, &format!("{w}?fieldManager=alice"), APPLY, &less).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["spec"]["selector"], json!({"tier": "db"}));
    assert!(
        r.body["spec"].get("args").is_none() && r.body["spec"].get("env").is_none(),
        "{}",
        r.body
    );
    assert_eq!(r.body["spec"]["extra"], json!({"free": {"y": 1}}));

    // A create is an Update from the empty object: the creator owns what it sent, defaults
    // included, with kube's `.` for every struct and item it added.
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{WIDGETS}?fieldManager=creator"),
            Some(
                json!({"apiVersion": "apply.example.com/v1", "kind": "Widget",
                "metadata": {"name": "w2", "labels": {"a": "b"}},
                "spec": {"replicas": 2, "ports": [{"port": 1}]}}),
            ),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(
        entries(&r.body),
        [
            json!({"manager": "creator", "operation": "Update", "apiVersion": "apply.example.com/v1",
            "time?": true, "fieldsType": "FieldsV1", "fieldsV1": {
                "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                "f:spec": {".": {}, "f:replicas": {}, "f:ports": {".": {},
                    "k:{\"port\":1,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}, "f:protocol": {}}}}}})
        ]
    );

    // A merge patch is an Update: carol takes replicas over, and alice's next apply of
    // another value conflicts with her.
    let r = patch(
        &s,
        &c,
        &format!("{w}?fieldManager=carol"),
        MERGE,
        r#"{"spec":{"replicas":3}}"#,
    )
    .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let e = entries(&r.body);
    assert_eq!(
        entry(&e, "carol", "Update"),
        &json!({"manager": "carol", "operation": "Update", "apiVersion": "apply.example.com/v1",
            "time?": true, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}})
    );
    assert!(entry(&e, "alice", "Apply")["fieldsV1"]["f:spec"]
        .get("f:replicas")
        .is_none());
    let r = patch(
        &s,
        &c,
        &format!("{w}?fieldManager=alice"),
        APPLY,
        &less.replace("replicas: 1", "replicas: 2"),
    )
    .await;
    assert_eq!(r.code.as_u16(), 409, "{}", r.body);
    assert_eq!(
        r.body["message"],
        r#"Apply failed with 1 conflict: conflict with "carol" using apply.example.com/v1: .spec.replicas"#
    );
}

#[tokio::test]
async fn status_writes_are_recorded_as_the_status_subresource() {
    let s = Server::start();
    let c = s.client();
    define(&s, &c).await;
    let w = format!("{WIDGETS}/w");
    let r = patch(&s, &c, &format!("{w}?fieldManager=alice"), APPLY, ALICE).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);

    // A status apply: the status strategy resets spec, so the spec it sends is neither
    // written, owned nor in conflict with alice's.
    let status = "apiVersion: apply.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  replicas: 9\nstatus:\n  ready: 2\n  phase: Running\n";
    let r = patch(
        &s,
        &c,
        &format!("{w}/status?fieldManager=ctrl"),
        APPLY,
        status,
    )
    .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["spec"]["replicas"], 1);
    assert_eq!(r.body["status"], json!({"ready": 2, "phase": "Running"}));
    let e = entries(&r.body);
    assert_eq!(
        entry(&e, "ctrl", "Apply"),
        &json!({"manager": "ctrl", "operation": "Apply", "apiVersion": "apply.example.com/v1",
            "time?": true, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:phase": {}, "f:ready": {}}}, "subresource": "status"})
    );
    assert_eq!(
        entry(&e, "alice", "Apply")["fieldsV1"]["f:spec"]["f:replicas"],
        json!({})
    );

    // The main resource resets status: alice applying a status changes and owns nothing.
    let r = patch(&s, &c, &format!("{w}?fieldManager=alice"), APPLY, ALICE).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["status"], json!({"ready": 2, "phase": "Running"}));
    assert!(entry(&entries(&r.body), "alice", "Apply")["fieldsV1"]
        .get("f:status")
        .is_none());

    // A status merge patch is an Update of the status subresource; it takes phase from ctrl.
    let r = patch(
        &s,
        &c,
        &format!("{w}/status?fieldManager=ops"),
        MERGE,
        r#"{"status":{"phase":"Failed"}}"#,
    )
    .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let e = entries(&r.body);
    assert_eq!(
        entry(&e, "ops", "Update"),
        &json!({"manager": "ops", "operation": "Update", "apiVersion": "apply.example.com/v1",
            "time?": true, "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}},
            "subresource": "status"})
    );
    assert_eq!(
        entry(&e, "ctrl", "Apply")["fieldsV1"],
        json!({"f:status": {"f:ready": {}}})
    );

    // managedFields sent to a subresource are ignored (`[{}]` resets nothing): the live
    // entries are updated. ops takes ready too; ctrl's entry has nothing left and goes.
    let mut obj = s.json(&c, Method::GET, &w, None).await.body;
    obj["metadata"]["managedFields"] = json!([{}]);
    obj["status"]["ready"] = json!(3);
    let r = s
        .json(
            &c,
            Method::PUT,
            &format!("{w}/status?fieldManager=ops"),
            Some(obj),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let after = entries(&r.body);
    let managers: Vec<&str> = after
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["alice", "ops"], "{after:#?}");
    assert_eq!(
        entry(&after, "ops", "Update")["fieldsV1"],
        json!({"f:status": {"f:phase": {}, "f:ready": {}}})
    );
}

fn kget(s: &Server, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json", "--show-managed-fields"]);
    serde_json::from_str(&s.ok(&args)).unwrap()
}

#[tokio::test]
async fn kubectl_applies_custom_resources_and_their_status() {
    let s = Server::start();
    let c = s.client();
    define(&s, &c).await;
    let f = s.dir.path().join("w.yaml");
    let path = f.to_str().unwrap();
    std::fs::write(
        &f,
        ALICE.replace("name: w\n", "name: w\n  namespace: default\n"),
    )
    .unwrap();
    assert_eq!(
        s.ok(&["apply", "--server-side", "-f", path]).trim(),
        "widget.apply.example.com/w serverside-applied"
    );
    let st = s.dir.path().join("status.yaml");
    std::fs::write(
        &st,
        "apiVersion: apply.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nstatus:\n  ready: 1\n",
    )
    .unwrap();
    assert_eq!(
        s.ok(&[
            "apply",
            "--server-side",
            "--subresource=status",
            "--field-manager=ctrl",
            "-f",
            st.to_str().unwrap()
        ])
        .trim(),
        "widget.apply.example.com/w serverside-applied"
    );
    let w = kget(&s, &["widget", "w"]);
    assert_eq!(w["status"]["ready"], 1);
    let e = entries(&w);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(entry(&e, "kubectl", "Apply").get("subresource").is_none());
    assert_eq!(entry(&e, "ctrl", "Apply")["subresource"], "status");

    // kubectl scale on a custom resource: kube's custom resource scale endpoint has no Scale
    // type to record the write with, so replicas is taken from its owners and nobody gets it.
    assert_eq!(
        s.ok(&["scale", "widget", "w", "--replicas", "4"]).trim(),
        "widget.apply.example.com/w scaled"
    );
    let w = kget(&s, &["widget", "w"]);
    assert_eq!(w["spec"]["replicas"], 4);
    let e = entries(&w);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(entry(&e, "kubectl", "Apply")["fieldsV1"]["f:spec"]
        .get("f:replicas")
        .is_none());
    // An apply on the custom resource's scale fails as kube's does.
    let r = patch(
        &s,
        &c,
        &format!("{WIDGETS}/w/scale?fieldManager=hpa"),
        APPLY,
        r#"{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w","namespace":"default"},"spec":{"replicas":2}}"#,
    )
    .await;
    assert_eq!(r.code.as_u16(), 500, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "failed to create typed patch object (default/w; autoscaling/v1, Kind=Scale): no corresponding type for autoscaling/v1, Kind=Scale"
    );
}

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
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
"#;

/// Who owns `.spec.replicas`, with each entry's subresource and whether it has a time.
fn replicas_owners(obj: &Value) -> Vec<(String, String, String, bool)> {
    let mut out: Vec<_> = obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["fieldsV1"]["f:spec"].get("f:replicas").is_some())
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_string(),
                e["operation"].as_str().unwrap().to_string(),
                e["subresource"].as_str().unwrap_or("").to_string(),
                e.get("time").is_some(),
            )
        })
        .collect();
    out.sort();
    out
}

fn owner(m: &str, op: &str, sub: &str, time: bool) -> (String, String, String, bool) {
    (m.into(), op.into(), sub.into(), time)
}

#[tokio::test]
async fn scale_writes_own_the_parents_replicas() {
    let s = Server::start();
    let c = s.client();
    let f = s.dir.path().join("d.yaml");
    let path = f.to_str().unwrap();
    std::fs::write(&f, DEPLOYMENT).unwrap();
    s.ok(&["apply", "--server-side", "-f", path]);
    let d = kget(&s, &["deployment", "web"]);
    assert_eq!(replicas_owners(&d), [owner("kubectl", "Apply", "", true)]);

    // kubectl scale: an Update of the scale subresource, recorded on the parent at apps/v1.
    // kube's scale handler keeps the parent's time for the entry's identifier, which names
    // autoscaling/v1: the entry has no time.
    s.ok(&["scale", "deployment", "web", "--replicas", "3"]);
    let d = kget(&s, &["deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(
        replicas_owners(&d),
        [owner("kubectl", "Update", "scale", false)]
    );
    let scale_entry = d["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["subresource"] == "scale")
        .unwrap()
        .clone();
    assert_eq!(
        scale_entry,
        json!({"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"})
    );

    // Re-applying another replicas conflicts with the scale entry, in kube's words.
    std::fs::write(&f, DEPLOYMENT.replace("replicas: 1", "replicas: 5")).unwrap();
    let err = s.fails(&["apply", "--server-side", "-f", path]);
    assert!(
        err.contains(
            r#"conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas"#
        ),
        "{err}"
    );
    s.ok(&["apply", "--server-side", "--force-conflicts", "-f", path]);
    let d = kget(&s, &["deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 5);
    assert_eq!(replicas_owners(&d), [owner("kubectl", "Apply", "", true)]);

    // kube's TestScaleAllResources: an apply of a Scale conflicts with the parent's applier,
    // force takes replicas; a replace shares nothing; an apply of the same value co-owns.
    let url = format!(
        "{}/apis/apps/v1/namespaces/default/deployments/web/scale",
        s.url
    );
    let scale = |n: u32| {
        format!(
            r#"{{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{{"name":"web","namespace":"default"}},"spec":{{"replicas":{n}}}}}"#
        )
    };
    let send = |m: Method, q: &str, ctype: &str, body: String| {
        c.request(m, format!("{url}?{q}"))
            .header("content-type", ctype)
            .body(body)
            .send()
    };
    let r = send(Method::PATCH, "fieldManager=apply_scale", APPLY, scale(17))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 409);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["message"],
        r#"Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas"#
    );
    let r = send(
        Method::PATCH,
        "fieldManager=apply_scale&force=true",
        APPLY,
        scale(17),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["kind"], "Scale");
    assert_eq!(v["spec"]["replicas"], 17);
    let d = kget(&s, &["deployment", "web"]);
    assert_eq!(
        replicas_owners(&d),
        [owner("apply_scale", "Apply", "scale", false)]
    );

    let r = send(
        Method::PUT,
        "fieldManager=replace_test",
        "application/json",
        scale(7),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let d = kget(&s, &["deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 7);
    assert_eq!(
        replicas_owners(&d),
        [owner("replace_test", "Update", "scale", false)]
    );
    let r = send(
        Method::PATCH,
        "fieldManager=co_owning_test",
        APPLY,
        scale(7),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let d = kget(&s, &["deployment", "web"]);
    assert_eq!(
        replicas_owners(&d),
        [
            owner("co_owning_test", "Apply", "scale", false),
            owner("replace_test", "Update", "scale", false)
        ]
    );
    // Scaling again makes that manager the only owner; a status-only scale write owns nothing.
    let r = send(
        Method::PATCH,
        "fieldManager=scale_test",
        MERGE,
        r#"{"spec":{"replicas":5}}"#.into(),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = send(
        Method::PATCH,
        "fieldManager=status_only",
        MERGE,
        r#"{"status":{"replicas":42}}"#.into(),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let d = kget(&s, &["deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 5);
    assert_eq!(
        replicas_owners(&d),
        [owner("scale_test", "Update", "scale", false)]
    );
    assert!(
        !d["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["manager"] == "status_only"),
        "{d}"
    );

    // A status write of the parent is an Update with subresource status.
    let r = c
        .patch(format!(
            "{}/apis/apps/v1/namespaces/default/deployments/web/status?fieldManager=ctrl",
            s.url
        ))
        .header("content-type", MERGE)
        .body(r#"{"status":{"observedGeneration":9}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let d = kget(&s, &["deployment", "web"]);
    let e = entries(&d);
    assert_eq!(
        entry(&e, "ctrl", "Update"),
        &json!({"manager": "ctrl", "operation": "Update", "apiVersion": "apps/v1", "time?": true,
            "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:observedGeneration": {}}},
            "subresource": "status"})
    );
}

/// A definition with two versions (conversion `None`) whose schemas read `spec.items`
/// differently: a map-list by name at v1, an atomic list at v2.
fn gadget_crd() -> Value {
    let items = |map: bool| {
        let mut l = json!({"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "v": {"type": "integer"}}}});
        if map {
            l["x-kubernetes-list-type"] = json!("map");
            l["x-kubernetes-list-map-keys"] = json!(["name"]);
        }
        json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {
            "type": "object", "properties": {"items": l}}}}})
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.apply.example.com"},
        "spec": {"group": "apply.example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": items(true)},
                {"name": "v2", "served": true, "storage": false, "schema": items(false)}]}})
}

#[tokio::test]
async fn other_managers_are_compared_at_their_versions() {
    let s = Server::start();
    let c = s.client();
    let r = s.json(&c, Method::POST, CRDS, Some(gadget_crd())).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let v1 = "/apis/apply.example.com/v1/namespaces/default/gadgets";
    let v2 = "/apis/apply.example.com/v2/namespaces/default/gadgets";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.json(&c, Method::GET, v2, None).await.code.as_u16() != 200 {
        assert!(std::time::Instant::now() < deadline, "gadgets never served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let body = |version: &str, v: u32| {
        format!("apiVersion: apply.example.com/{version}\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  items:\n  - name: a\n    v: {v}\n")
    };
    let r = patch(
        &s,
        &c,
        &format!("{v1}/g?fieldManager=alice"),
        APPLY,
        &body("v1", 1),
    )
    .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    // At v2 the list is atomic, but alice's entry is read at v1, where bob changes her item's
    // value: kube's versioned comparison finds the conflict at her version.
    let r = patch(
        &s,
        &c,
        &format!("{v2}/g?fieldManager=bob"),
        APPLY,
        &body("v2", 2),
    )
    .await;
    assert_eq!(r.code.as_u16(), 409, "{}", r.body);
    assert_eq!(
        r.body["message"],
        r#"Apply failed with 1 conflict: conflict with "alice": .spec.items[name="a"].v"#
    );
    let r = patch(
        &s,
        &c,
        &format!("{v2}/g?fieldManager=bob&force=true"),
        APPLY,
        &body("v2", 2),
    )
    .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let e = entries(&r.body);
    assert_eq!(
        entry(&e, "alice", "Apply")["fieldsV1"],
        json!({"f:spec": {"f:items": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}}}})
    );
    assert_eq!(
        entry(&e, "alice", "Apply")["apiVersion"],
        "apply.example.com/v1"
    );
    assert_eq!(
        entry(&e, "bob", "Apply"),
        &json!({"manager": "bob", "operation": "Apply", "apiVersion": "apply.example.com/v2",
            "time?": true, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:items": {}}}})
    );
}
