//! Custom objects against their definition's structural schema, over real HTTPS, as
//! kube-apiserver v1.33 treats them: validation errors (code, reason, message, causes) as
//! kube-openapi renders them, pruning of undeclared fields per `fieldValidation` (Strict: 400,
//! Warn: `Warning` headers, Ignore: silent), defaulting on create and of objects stored before
//! a default existed, ratcheting of unchanged invalid values on update, and kubectl's view of
//! unknown fields.

mod support;

use reqwest::Method;
use serde_json::{json, Value};
use support::Server;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

fn crontab_schema() -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object",
        "required": ["replicas"],
        "properties": {
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
            "port": {"x-kubernetes-int-or-string": true},
            "note": {"type": "string", "nullable": true},
            "mode": {"type": "string", "enum": ["Fast", "Slow"]},
            "cron": {"type": "string", "pattern": "^[0-9*/ ,-]+$"},
            "image": {"type": "string", "maxLength": 8},
            "size": {"type": "string", "default": "M"},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
            "items": {"type": "array", "items": {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string", "maxLength": 5}}}},
            "labels": {"type": "object", "additionalProperties": false},
            "choice": {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}}}}})
}

fn crd(plural: &str, kind: &str, schema: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.stable.example.com")},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema}}]}})
}

/// Creates a definition and waits until its objects are served.
async fn define(s: &Server, c: &reqwest::Client, crd: Value, path: &str) {
    let r = s.json(c, Method::POST, CRDS, Some(crd)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.json(c, Method::GET, path, None).await.code.as_u16() != 200 {
        assert!(std::time::Instant::now() < deadline, "{path} never served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn crontab(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": name}, "spec": spec})
}

fn warnings(r: &support::Reply) -> Vec<String> {
    r.headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn invalid_objects_are_rejected_as_kube_renders_them() {
    let s = Server::start();
    let c = s.client();
    define(
        &s,
        &c,
        crd("crontabs", "CronTab", crontab_schema()),
        CRONTABS,
    )
    .await;

    let ti = "FieldValueTypeInvalid";
    let inv = "FieldValueInvalid";
    // (spec fields merged over {"replicas": 1}, causes as (reason, message, field))
    let cases: Vec<(Value, Vec<(&str, &str, &str)>)> = vec![
        (json!({"replicas": "three"}), vec![(ti, "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"", "spec.replicas")]),
        (json!({"port": 1.5}), vec![(ti, "Invalid value: \"number\": spec.port in body must be of type integer,string: \"number\"", "spec.port")]),
        (json!({"tags": [null]}), vec![(ti, "Invalid value: \"null\": spec.tags[0] in body must be of type string: \"null\"", "spec.tags[0]")]),
        (json!({"mode": "Medium"}), vec![("FieldValueNotSupported", "Unsupported value: \"Medium\": supported values: \"Fast\", \"Slow\"", "spec.mode")]),
        (json!({"cron": "every minute"}), vec![(inv, "Invalid value: \"every minute\": spec.cron in body should match '^[0-9*/ ,-]+$'", "spec.cron")]),
        (json!({"image": "nginx:1.27-alpine"}), vec![("FieldValueTooLong", "Too long: may not be more than 8 bytes", "spec.image")]),
        (json!({"replicas": 0}), vec![(inv, "Invalid value: 0: spec.replicas in body should be greater than or equal to 1", "spec.replicas")]),
        (json!({"replicas": 11}), vec![(inv, "Invalid value: 11: spec.replicas in body should be less than or equal to 10", "spec.replicas")]),
        (json!({"tags": ["a", "b", "c"]}), vec![("FieldValueTooMany", "Too many: 3: must have at most 2 items", "spec.tags")]),
        (json!({"replicas": null}), vec![("FieldValueRequired", "Required value", "spec.replicas")]),
        (json!({"labels": {"k": "v"}}), vec![(inv, "Invalid value: \"k\": spec.labels.k in body is a forbidden property", "spec.labels")]),
        (json!({"choice": {}}), vec![
            (inv, "Invalid value: \"\": \"spec.choice\" must validate one and only one schema (oneOf). Found none valid", "<nil>"),
            ("FieldValueRequired", "Required value", "spec.choice.a"),
        ]),
        (json!({"items": [{"name": "a"}, {"name": "toolong"}]}), vec![("FieldValueTooLong", "Too long: may not be more than 5 bytes", "spec.items[1].name")]),
        (json!({"items": [{"name": "a"}, {}]}), vec![("FieldValueRequired", "Required value", "spec.items[1].name")]),
        (json!({"replicas": "x", "mode": "Z"}), vec![
            ("FieldValueNotSupported", "Unsupported value: \"Z\": supported values: \"Fast\", \"Slow\"", "spec.mode"),
            (ti, "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"", "spec.replicas"),
        ]),
    ];
    for (i, (over, causes)) in cases.into_iter().enumerate() {
        let mut spec = json!({"replicas": 1});
        for (k, v) in over.as_object().unwrap() {
            spec[k] = v.clone();
        }
        let name = format!("bad{i}");
        let r = s
            .json(
                &c,
                Method::POST,
                CRONTABS,
                Some(crontab(&name, spec.clone())),
            )
            .await;
        assert_eq!(r.code.as_u16(), 422, "{spec}: {}", r.body);
        assert_eq!(r.body["reason"], "Invalid", "{spec}");
        let msgs: Vec<String> = causes.iter().map(|(_, m, f)| format!("{f}: {m}")).collect();
        let agg = if msgs.len() == 1 {
            msgs[0].clone()
        } else {
            format!("[{}]", msgs.join(", "))
        };
        assert_eq!(
            r.body["message"],
            format!("CronTab.stable.example.com \"{name}\" is invalid: {agg}"),
            "{spec}"
        );
        let want: Vec<Value> = causes
            .iter()
            .map(|(reason, m, f)| json!({"reason": reason, "message": m, "field": f}))
            .collect();
        assert_eq!(r.body["details"]["causes"], Value::Array(want), "{spec}");
        assert_eq!(r.body["details"]["kind"], "CronTab");
        assert_eq!(r.body["details"]["group"], "stable.example.com");
    }

    // Valid: a nullable null stays, a non-nullable null goes, int-or-string takes both.
    let r = s
        .json(&c, Method::POST, CRONTABS, Some(crontab("good", json!({"replicas": 2, "note": null, "image": null, "port": "http", "choice": {"b": "x"}}))))
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(
        r.body["spec"],
        json!({"replicas": 2, "note": null, "port": "http", "choice": {"b": "x"}, "size": "M"})
    );
}

#[tokio::test]
async fn unknown_fields_are_pruned_per_field_validation() {
    let s = Server::start();
    let c = s.client();
    define(
        &s,
        &c,
        crd("crontabs", "CronTab", crontab_schema()),
        CRONTABS,
    )
    .await;
    let body = |name: &str| {
        let mut o = crontab(
            name,
            json!({"replicas": 1, "bogus": true, "items": [{"name": "a", "x": 1}]}),
        );
        o["metadata"]["junk"] = json!(1);
        o["status"] = json!({"phase": "x"});
        o
    };
    // Warn (the default): created without them, one warning each.
    let r = s
        .json(&c, Method::POST, CRONTABS, Some(body("warned")))
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(
        warnings(&r),
        [
            "299 - \"unknown field \\\"metadata.junk\\\"\"",
            "299 - \"unknown field \\\"spec.bogus\\\"\"",
            "299 - \"unknown field \\\"spec.items[0].x\\\"\"",
            "299 - \"unknown field \\\"status\\\"\"",
        ]
    );
    assert_eq!(
        r.body["spec"],
        json!({"replicas": 1, "items": [{"name": "a"}], "size": "M"})
    );
    assert!(r.body.get("status").is_none());
    assert!(r.body["metadata"].get("junk").is_none());
    let got = s
        .json(&c, Method::GET, &format!("{CRONTABS}/warned"), None)
        .await;
    assert_eq!(got.body["spec"], r.body["spec"]);

    // Strict: a 400 naming them all.
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{CRONTABS}?fieldValidation=Strict"),
            Some(body("strict")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 400, "{}", r.body);
    assert_eq!(r.body["reason"], "BadRequest");
    assert_eq!(
        r.body["message"],
        "CronTab in version \"v1\" cannot be handled as a CronTab: strict decoding error: unknown field \"metadata.junk\", unknown field \"spec.bogus\", unknown field \"spec.items[0].x\", unknown field \"status\""
    );

    // Ignore: silently pruned.
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{CRONTABS}?fieldValidation=Ignore"),
            Some(body("ignored")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert!(warnings(&r).is_empty());
    assert!(r.body["spec"].get("bogus").is_none());

    // Updates and patches too.
    let mut upd = r.body.clone();
    upd["spec"]["bogus"] = json!(1);
    let r = s
        .json(&c, Method::PUT, &format!("{CRONTABS}/ignored"), Some(upd))
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(warnings(&r), ["299 - \"unknown field \\\"spec.bogus\\\"\""]);
    assert!(r.body["spec"].get("bogus").is_none());
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{CRONTABS}/ignored"),
            Some(json!({"spec": {"other": 1}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(warnings(&r), ["299 - \"unknown field \\\"spec.other\\\"\""]);
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{CRONTABS}/ignored?fieldValidation=Strict"),
            Some(json!({"spec": {"other": 1}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    let msg = r.body["message"].as_str().unwrap_or("");
    assert!(
        msg.starts_with(" \"\" is invalid: patch: Invalid value: \"{\\\"apiVersion\\\":\\\"stable.example.com/v1\\\",\\\"kind\\\":\\\"CronTab\\\",\\\"metadata\\\":{"),
        "{msg}"
    );
    assert!(
        msg.ends_with("\": strict decoding error: unknown field \"spec.other\""),
        "{msg}"
    );

    // A patch that breaks the schema is validated like any write.
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{CRONTABS}/ignored"),
            Some(json!({"spec": {"replicas": "x"}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "CronTab.stable.example.com \"ignored\" is invalid: spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
    );
}

#[tokio::test]
async fn defaults_and_ratcheting_follow_the_definition() {
    let s = Server::start();
    let c = s.client();
    let path = "/apis/stable.example.com/v1/namespaces/default/gadgets";
    let loose = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string"}, "other": {"type": "string"}, "color": {"type": "string"}}}}});
    define(&s, &c, crd("gadgets", "Gadget", loose), path).await;
    let g = |name: &str, spec: Value| json!({"apiVersion": "stable.example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec});
    let r = s
        .json(
            &c,
            Method::POST,
            path,
            Some(g("old", json!({"name": "abcdef", "other": "a"}))),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);

    // The definition now defaults color and limits name.
    let def = s
        .json(
            &c,
            Method::GET,
            &format!("{CRDS}/gadgets.stable.example.com"),
            None,
        )
        .await
        .body;
    let mut def = def;
    def["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = json!({
        "name": {"type": "string", "maxLength": 3}, "other": {"type": "string"},
        "color": {"type": "string", "default": "blue"}});
    let r = s
        .json(
            &c,
            Method::PUT,
            &format!("{CRDS}/gadgets.stable.example.com"),
            Some(def),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);

    // The object stored before reads back defaulted (kube defaults on decode from storage).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let current = loop {
        let r = s.json(&c, Method::GET, &format!("{path}/old"), None).await;
        if r.body["spec"]["color"] == "blue" {
            break r.body;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never defaulted: {}",
            r.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(
        current["spec"],
        json!({"name": "abcdef", "other": "a", "color": "blue"})
    );
    let list = s.json(&c, Method::GET, path, None).await;
    assert_eq!(list.body["items"][0]["spec"]["color"], "blue");

    // New objects are checked by the new schema, and defaulted.
    let r = s
        .json(
            &c,
            Method::POST,
            path,
            Some(g("new", json!({"name": "abcdef"}))),
        )
        .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Gadget.stable.example.com \"new\" is invalid: spec.name: Too long: may not be more than 3 bytes"
    );
    let r = s
        .json(
            &c,
            Method::POST,
            path,
            Some(g("new", json!({"name": "abc"}))),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(r.body["spec"], json!({"name": "abc", "color": "blue"}));

    // Ratcheting: an update that leaves the invalid name alone passes ...
    let mut upd = current.clone();
    upd["spec"]["other"] = json!("b");
    let r = s
        .json(&c, Method::PUT, &format!("{path}/old"), Some(upd.clone()))
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(
        r.body["spec"],
        json!({"name": "abcdef", "other": "b", "color": "blue"})
    );
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{path}/old"),
            Some(json!({"spec": {"other": "c"}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    // ... one that changes it to another invalid value does not.
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{path}/old"),
            Some(json!({"spec": {"name": "abcdefg"}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Gadget.stable.example.com \"old\" is invalid: spec.name: Too long: may not be more than 3 bytes"
    );
}

/// kubectl apply of an object with an unknown field: an error with the default strict
/// validation, a warning with `--validate=warn`.
#[tokio::test]
async fn kubectl_apply_reports_unknown_fields() {
    let s = Server::start();
    let c = s.client();
    define(
        &s,
        &c,
        crd("crontabs", "CronTab", crontab_schema()),
        CRONTABS,
    )
    .await;
    let manifest = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: applied\n  namespace: default\nspec:\n  replicas: 1\n  bogus: true\n";
    let apply = |extra: &[&str]| {
        use std::io::Write;
        let mut child = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&s.kubeconfig)
            .args(["apply", "-f", "-"])
            .args(extra)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(manifest.as_bytes())
            .expect("write");
        child.wait_with_output().expect("kubectl output")
    };
    let out = apply(&[]);
    assert!(!out.status.success(), "{}", support::stdout(&out));
    assert!(
        support::stderr(&out).contains(
            "CronTab in version \"v1\" cannot be handled as a CronTab: strict decoding error: unknown field \"spec.bogus\""
        ),
        "{}",
        support::stderr(&out)
    );
    let out = apply(&["--validate=warn"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains("Warning: unknown field \"spec.bogus\""),
        "{}",
        support::stderr(&out)
    );
    assert_eq!(
        support::stdout(&out).trim(),
        "crontab.stable.example.com/applied created"
    );
    let got = s.ok(&["get", "crontab", "applied", "-o", "jsonpath={.spec}"]);
    assert_eq!(got, "{\"replicas\":1,\"size\":\"M\"}");
}

/// Printer columns and deprecated versions: `kubectl get` prints the definition's
/// `additionalPrinterColumns` (JSONPath, types, priority for `-o wide`) and every request to a
/// deprecated version carries its warning.
#[tokio::test]
async fn printer_columns_and_deprecated_versions() {
    let s = Server::start();
    let c = s.client();
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                 "properties": {"color": {"type": "string"}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    let mut def = crd("widgets", "Widget", schema.clone());
    def["spec"]["versions"] = json!([
        {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema},
         "selectableFields": [{"jsonPath": ".spec.color"}],
         "additionalPrinterColumns": [
            {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Ready", "type": "string", "priority": 1,
             "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}]},
        {"name": "v1beta1", "served": true, "storage": false, "deprecated": true,
         "schema": {"openAPIV3Schema": schema}}]);
    let widgets = "/apis/stable.example.com/v1/namespaces/default/widgets";
    define(&s, &c, def, widgets).await;
    let w = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"cronSpec": "* * * * */5", "replicas": 3},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let r = s.json(&c, Method::POST, widgets, Some(w)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let out = s.ok(&["get", "widgets", "w1"]);
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "SPEC", "REPLICAS"], "{out}");
    assert_eq!(lines[1], ["w1", "*", "*", "*", "*", "*/5", "3"], "{out}");
    // selectableFields: field selectors on the declared paths, 400 on others.
    let w2 = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w2"}, "spec": {"color": "red"}});
    let r = s.json(&c, Method::POST, widgets, Some(w2)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::GET,
            &format!("{widgets}?fieldSelector=spec.color%3Dred"),
            None,
        )
        .await;
    let names: Vec<&str> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["w2"], "{}", r.body);
    let r = s
        .json(
            &c,
            Method::GET,
            &format!("{widgets}?fieldSelector=spec.color!%3Dred"),
            None,
        )
        .await;
    assert_eq!(r.body["items"].as_array().unwrap().len(), 1, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::GET,
            &format!("{widgets}?fieldSelector=spec.size%3D1"),
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 400, "{}", r.body);
    assert_eq!(r.body["message"], "field label not supported: spec.size");
    let wide = s.ok(&["get", "widgets", "w1", "-o", "wide"]);
    assert!(wide.lines().next().unwrap().ends_with("READY"), "{wide}");
    assert!(wide.lines().nth(1).unwrap().ends_with("True"), "{wide}");

    // The deprecated version: default warning naming the served, non-deprecated newer one.
    let r = s
        .json(
            &c,
            Method::GET,
            "/apis/stable.example.com/v1beta1/namespaces/default/widgets",
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(
        warnings(&r),
        ["299 - \"stable.example.com/v1beta1 Widget is deprecated; use stable.example.com/v1 Widget\""]
    );
    // A version without columns prints kube's default Age column.
    let t = c
        .get(format!(
            "{}/apis/stable.example.com/v1beta1/namespaces/default/widgets",
            s.url
        ))
        .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Age"]);
    assert_eq!(t["columnDefinitions"][1]["type"], "date");
}

/// Conversion `None`: objects are written in the storage version and every served version
/// reads them relabelled, also objects written before the storage version changed.
#[tokio::test]
async fn versions_read_objects_relabelled() {
    let s = Server::start();
    let c = s.client();
    let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let mut def = crd("gears", "Gear", schema.clone());
    def["spec"]["versions"] = json!([
        {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}},
        {"name": "v1beta1", "served": true, "storage": false, "schema": {"openAPIV3Schema": schema}}]);
    let v1 = "/apis/stable.example.com/v1/namespaces/default/gears";
    let beta = "/apis/stable.example.com/v1beta1/namespaces/default/gears";
    define(&s, &c, def, v1).await;
    let g = json!({"apiVersion": "stable.example.com/v1beta1", "kind": "Gear",
        "metadata": {"name": "g1"}, "spec": {"teeth": 12}});
    let r = s.json(&c, Method::POST, beta, Some(g)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(r.body["apiVersion"], "stable.example.com/v1beta1");
    let r = s.json(&c, Method::GET, &format!("{v1}/g1"), None).await;
    assert_eq!(r.body["apiVersion"], "stable.example.com/v1", "{}", r.body);
    let r = s.json(&c, Method::GET, beta, None).await;
    assert_eq!(
        r.body["items"][0]["apiVersion"], "stable.example.com/v1beta1",
        "{}",
        r.body
    );

    // Make v1beta1 the storage version: the object stored as v1 still reads as each version.
    let crds = format!("{CRDS}/gears.stable.example.com");
    let mut cur = s.json(&c, Method::GET, &crds, None).await.body;
    cur["spec"]["versions"][0]["storage"] = json!(false);
    cur["spec"]["versions"][1]["storage"] = json!(true);
    let r = s.json(&c, Method::PUT, &crds, Some(cur)).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let r = s.json(&c, Method::GET, &format!("{v1}/g1"), None).await;
        let b = s.json(&c, Method::GET, &format!("{beta}/g1"), None).await;
        if r.body["apiVersion"] == "stable.example.com/v1"
            && b.body["apiVersion"] == "stable.example.com/v1beta1"
            && r.body["spec"]["teeth"] == 12
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} {}",
            r.body,
            b.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The status and scale subresources of a custom resource, and its generation: spec changes
/// bump it, status writes do not; without a status subresource any change but metadata does.
#[tokio::test]
async fn scale_status_and_generation() {
    let s = Server::start();
    let c = s.client();
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "labelSelector": {"type": "string"}}}}});
    let mut def = crd("pools", "Pool", schema.clone());
    def["spec"]["versions"][0]["subresources"] = json!({"status": {}, "scale": {
        "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.labelSelector"}});
    let pools = "/apis/stable.example.com/v1/namespaces/default/pools";
    define(&s, &c, def, pools).await;
    let p = json!({"apiVersion": "stable.example.com/v1", "kind": "Pool",
        "metadata": {"name": "p1"}, "spec": {"replicas": 1}, "status": {"replicas": 9}});
    let r = s.json(&c, Method::POST, pools, Some(p)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(r.body["metadata"]["generation"], 1);
    assert!(
        r.body.get("status").is_none(),
        "a create resets the status: {}",
        r.body
    );

    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{pools}/p1/status"),
            Some(json!({"status": {"replicas": 2, "labelSelector": "app=p"}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(
        r.body["metadata"]["generation"], 1,
        "status writes keep the generation"
    );

    s.ok(&["scale", "pools/p1", "--replicas=3"]);
    let r = s
        .json(&c, Method::GET, &format!("{pools}/p1/scale"), None)
        .await;
    assert_eq!(r.body["kind"], "Scale", "{}", r.body);
    assert_eq!(r.body["spec"]["replicas"], 3);
    assert_eq!(r.body["status"]["replicas"], 2);
    assert_eq!(r.body["status"]["selector"], "app=p");
    let r = s.json(&c, Method::GET, &format!("{pools}/p1"), None).await;
    assert_eq!(r.body["metadata"]["generation"], 2, "{}", r.body);
    assert_eq!(r.body["status"]["replicas"], 2);

    // Without a status subresource the status is part of the object: changing it counts.
    let loose = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let tanks = "/apis/stable.example.com/v1/namespaces/default/tanks";
    define(&s, &c, crd("tanks", "Tank", loose), tanks).await;
    let t = json!({"apiVersion": "stable.example.com/v1", "kind": "Tank",
        "metadata": {"name": "t1"}, "spec": {"size": 1}, "status": {"level": 1}});
    let r = s.json(&c, Method::POST, tanks, Some(t)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(r.body["status"]["level"], 1);
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{tanks}/t1"),
            Some(json!({"status": {"level": 2}})),
        )
        .await;
    assert_eq!(r.body["metadata"]["generation"], 2, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{tanks}/t1"),
            Some(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await;
    assert_eq!(r.body["metadata"]["generation"], 2, "{}", r.body);
}

/// `x-kubernetes-list-type` invariants: a set holds no value twice, a map no two items with
/// the same keys; an update of an object that already broke them is not refused for it.
#[tokio::test]
async fn list_type_invariants() {
    let s = Server::start();
    let c = s.client();
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "port": {"type": "integer"}}}}}}}});
    let things = "/apis/stable.example.com/v1/namespaces/default/things";
    define(&s, &c, crd("things", "Thing", schema), things).await;
    let thing = |spec: Value| {
        json!({"apiVersion": "stable.example.com/v1", "kind": "Thing",
               "metadata": {"name": "t"}, "spec": spec})
    };
    let r = s
        .json(
            &c,
            Method::POST,
            things,
            Some(thing(json!({"tags": ["a", "a"],
                "ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]}))),
        )
        .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Thing.stable.example.com \"t\" is invalid: [spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"http\"}, spec.tags[1]: Duplicate value: \"a\"]"
    );
    assert_eq!(
        r.body["details"]["causes"][1]["reason"],
        "FieldValueDuplicate"
    );
    let r = s
        .json(
            &c,
            Method::POST,
            things,
            Some(thing(json!({"tags": ["a", "b"]}))),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
}

/// Definitions and their objects survive a kill -9 and restart: served again (with their
/// schema: defaults still apply) from the replica's own data.
#[tokio::test]
async fn definitions_survive_restart() {
    let mut s = Server::start();
    let c = s.client();
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "string", "default": "M"}, "n": {"type": "integer"}}}}});
    let boxes = "/apis/stable.example.com/v1/namespaces/default/boxes";
    define(&s, &c, crd("boxes", "Box", schema), boxes).await;
    let b = json!({"apiVersion": "stable.example.com/v1", "kind": "Box",
        "metadata": {"name": "b1"}, "spec": {"n": 1}});
    let r = s.json(&c, Method::POST, boxes, Some(b)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    s.restart();
    s.wait_ready();
    let c = s.client();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let got = loop {
        let r = s.json(&c, Method::GET, &format!("{boxes}/b1"), None).await;
        if r.code.as_u16() == 200 {
            break r.body;
        }
        assert!(std::time::Instant::now() < deadline, "{}", r.body);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(got["spec"], json!({"n": 1, "size": "M"}));
    let bad = json!({"apiVersion": "stable.example.com/v1", "kind": "Box",
        "metadata": {"name": "b2"}, "spec": {"n": "one"}});
    let r = s.json(&c, Method::POST, boxes, Some(bad)).await;
    assert_eq!(
        r.code.as_u16(),
        422,
        "the schema is enforced after restart: {}",
        r.body
    );
}

/// An embedded object (`x-kubernetes-embedded-resource`) needs its apiVersion and kind, and
/// valid metadata.
#[tokio::test]
async fn embedded_objects_are_checked() {
    let s = Server::start();
    let c = s.client();
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "x-kubernetes-preserve-unknown-fields": true}}}}});
    let holders = "/apis/stable.example.com/v1/namespaces/default/holders";
    define(&s, &c, crd("holders", "Holder", schema), holders).await;
    let holder = |template: Value| {
        json!({"apiVersion": "stable.example.com/v1", "kind": "Holder",
               "metadata": {"name": "h"}, "spec": {"template": template}})
    };
    let r = s
        .json(
            &c,
            Method::POST,
            holders,
            Some(holder(json!({"kind": "Pod", "metadata": {"name": "a/b"}}))),
        )
        .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Holder.stable.example.com \"h\" is invalid: [spec.template.apiVersion: Required value: must not be empty, spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/']"
    );
    let r = s
        .json(
            &c,
            Method::POST,
            holders,
            Some(holder(
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}),
            )),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
}

/// Cluster-scoped definitions, and the patch types custom resources take: JSON and merge
/// patches apply, a strategic merge patch is a 415 as in kube.
#[tokio::test]
async fn cluster_scoped_objects_and_patch_types() {
    let s = Server::start();
    let c = s.client();
    let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let mut def = crd("regions", "Region", schema);
    def["spec"]["scope"] = json!("Cluster");
    let regions = "/apis/stable.example.com/v1/regions";
    define(&s, &c, def, regions).await;
    let r = s
        .json(
            &c,
            Method::POST,
            regions,
            Some(
                json!({"apiVersion": "stable.example.com/v1", "kind": "Region",
                        "metadata": {"name": "eu"}, "spec": {"zones": 3}}),
            ),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert!(r.body["metadata"].get("namespace").is_none(), "{}", r.body);
    let r = s
        .json(
            &c,
            Method::GET,
            "/apis/stable.example.com/v1/namespaces/default/regions",
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 404, "{}", r.body);
    let send = |ctype: &'static str, body: &'static str| {
        let (s, c) = (&s, &c);
        async move {
            s.send(
                c,
                Method::PATCH,
                "/apis/stable.example.com/v1/regions/eu",
                ctype,
                Some(body.as_bytes().to_vec()),
            )
            .await
        }
    };
    let r = send("application/merge-patch+json", r#"{"spec":{"zones":4}}"#).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["spec"]["zones"], 4);
    let r = send(
        "application/json-patch+json",
        r#"[{"op":"replace","path":"/spec/zones","value":5}]"#,
    )
    .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["spec"]["zones"], 5);
    let r = send(
        "application/strategic-merge-patch+json",
        r#"{"spec":{"zones":6}}"#,
    )
    .await;
    assert_eq!(r.code.as_u16(), 415, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json"
    );
    let out = s.ok(&["get", "regions"]);
    assert!(out.contains("eu"), "{out}");
}
