//! `x-kubernetes-validations` CEL rules over real HTTPS, as kube-apiserver v1.33 treats them:
//! rules that do not compile, do not return a bool, cost too much or use `oldSelf` where old
//! values do not correlate reject the definition with kube's texts; on objects, rules with
//! `message`, `messageExpression`, `reason` and `fieldPath`, transition rules (`oldSelf`,
//! `optionalOldSelf`), the Kubernetes CEL libraries, the per-call cost limit, ratcheting of
//! unchanged values, and rules blocked by schema errors.

mod support;

use reqwest::Method;
use serde_json::{json, Value};
use support::Server;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/stable.example.com/v1/namespaces/default/widgets";

fn crd(schema: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": schema}}]}})
}

/// A schema whose `spec` carries `rules` (and the given extra properties).
fn spec_with(rules: Value, props: Value) -> Value {
    let mut p = json!({
        "replicas": {"type": "integer"},
        "minReplicas": {"type": "integer"},
        "mem": {"type": "string", "maxLength": 16},
        "url": {"type": "string", "maxLength": 64},
        "addr": {"type": "string", "maxLength": 64},
        "mode": {"type": "string", "maxLength": 16},
        "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}},
    });
    for (k, v) in props.as_object().unwrap() {
        p[k] = v.clone();
    }
    json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": rules, "properties": p}}})
}

async fn define(s: &Server, c: &reqwest::Client, schema: Value) {
    let r = s.json(c, Method::POST, CRDS, Some(crd(schema))).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.json(c, Method::GET, WIDGETS, None).await.code.as_u16() != 200 {
        assert!(std::time::Instant::now() < deadline, "widgets never served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": spec})
}

// one version: kube reports its schema as the definition-wide `spec.validation`
const RULES: &str = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";

#[tokio::test]
async fn definitions_with_bad_rules_are_rejected() {
    let s = Server::start();
    let c = s.client();
    // (rules of spec, extra properties, expected (reason, field, message fragment))
    let cases: Vec<(Value, Value, (&str, String, &str))> = vec![
        (
            json!([{"rule": "self.foo == 1"}]),
            json!({}),
            ("FieldValueInvalid", format!("{RULES}[0].rule"),
             "compilation failed: ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 1\n | ....^"),
        ),
        (
            json!([{"rule": "self.replicas"}]),
            json!({}),
            ("FieldValueInvalid", format!("{RULES}[0].rule"), "cel expression must evaluate to a bool"),
        ),
        (
            json!([{"rule": "self.replicas > 'a'"}]),
            json!({}),
            ("FieldValueInvalid", format!("{RULES}[0].rule"),
             "found no matching overload for '_>_' applied to '(int, string)'"),
        ),
        (
            json!([{"rule": "self.replicas >"}]),
            json!({}),
            ("FieldValueInvalid", format!("{RULES}[0].rule"), "compilation failed: ERROR: <input>:1:16: Syntax error"),
        ),
        (
            json!([{"rule": "request.operation == 'CREATE'"}]),
            json!({}),
            ("FieldValueInvalid", format!("{RULES}[0].rule"), "undeclared reference to 'request' (in container '')"),
        ),
        (
            json!([{"rule": "self.replicas > 0", "messageExpression": "self.replicas"}]),
            json!({}),
            ("FieldValueInvalid", format!("{RULES}[0].messageExpression"), "messageExpression must evaluate to a string"),
        ),
        (
            json!([{"rule": "self.replicas > 0", "optionalOldSelf": true}]),
            json!({}),
            ("FieldValueInvalid", format!("{RULES}[0].optionalOldSelf"), "may not be set if oldSelf is not used in rule"),
        ),
        (
            json!([{"rule": "self.replicas > 0", "fieldPath": ".nope"}]),
            json!({}),
            ("FieldValueInvalid", format!("{RULES}[0].fieldPath"), "fieldPath must be a valid path"),
        ),
        (
            json!([{"rule": "self.free.all(a, self.free.all(b, a == b))"}]),
            json!({"free": {"type": "array", "items": {"type": "string"}}}),
            ("FieldValueForbidden", format!("{RULES}[0].rule"),
             "estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"),
        ),
    ];
    for (rules, props, (reason, field, fragment)) in cases {
        let r = s
            .json(
                &c,
                Method::POST,
                CRDS,
                Some(crd(spec_with(rules.clone(), props))),
            )
            .await;
        assert_eq!(r.code.as_u16(), 422, "{rules}: {}", r.body);
        let causes = r.body["details"]["causes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            causes.iter().any(|c| c["reason"] == reason
                && c["field"] == field.as_str()
                && c["message"].as_str().unwrap_or("").contains(fragment)),
            "{rules}: {}",
            r.body
        );
    }

    // oldSelf inside the items of a list that is not a map list
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "items": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 5,
            "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}}});
    let r = s.json(&c, Method::POST, CRDS, Some(crd(schema))).await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert!(
        r.body["message"].as_str().unwrap().contains("spec.validation.openAPIV3Schema.properties[spec].properties[items].items.x-kubernetes-validations[0].rule: Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec].properties[items]"),
        "{}",
        r.body
    );
    // nothing was stored
    let r = s
        .json(
            &c,
            Method::GET,
            &format!("{CRDS}/widgets.stable.example.com"),
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 404);
}

/// Posts a widget and returns (code, causes as (reason, field, message)).
async fn post(
    s: &Server,
    c: &reqwest::Client,
    name: &str,
    spec: Value,
) -> (u16, Vec<(String, String, String)>) {
    let r = s
        .json(c, Method::POST, WIDGETS, Some(widget(name, spec)))
        .await;
    (r.code.as_u16(), causes(&r.body))
}

fn causes(body: &Value) -> Vec<(String, String, String)> {
    body["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (s("reason"), s("field"), s("message"))
        })
        .collect()
}

fn cause(reason: &str, field: &str, msg: &str) -> Vec<(String, String, String)> {
    vec![(reason.to_string(), field.to_string(), msg.to_string())]
}

#[tokio::test]
async fn objects_are_checked_against_their_rules() {
    let s = Server::start();
    let c = s.client();
    define(
        &s,
        &c,
        spec_with(
            json!([
                {"rule": "!has(self.minReplicas) || self.minReplicas <= self.replicas", "message": "replicas must be at least minReplicas"},
                {"rule": "!has(self.replicas) || self.replicas < 100"},
                {"rule": "!has(self.mem) || quantity(self.mem).isLessThan(quantity('1Gi'))",
                 "messageExpression": "'memory ' + self.mem + ' is too large'"},
                {"rule": "!has(self.url) || isURL(self.url)", "reason": "FieldValueForbidden", "fieldPath": ".url", "message": "must be a URL"},
                {"rule": "!has(self.addr) || (isIP(self.addr) && ip(self.addr).family() == 4)", "message": "must be an IPv4 address"},
                {"rule": "!has(self.tags) || self.tags.all(t, t.matches('^[a-z]+$'))", "reason": "FieldValueRequired", "message": "lowercase tags only"},
            ]),
            json!({}),
        ),
    )
    .await;
    let inv = "FieldValueInvalid";
    let cases: Vec<(Value, u16, Vec<(String, String, String)>)> = vec![
        (json!({"replicas": 3, "minReplicas": 2, "mem": "512Mi", "url": "https://x.example/a", "addr": "10.0.0.1", "tags": ["a"]}), 201, vec![]),
        (json!({"replicas": 1, "minReplicas": 2}), 422, cause(inv, "spec", "Invalid value: \"object\": replicas must be at least minReplicas")),
        (json!({"replicas": 100}), 422, cause(inv, "spec", "Invalid value: \"object\": failed rule: !has(self.replicas) || self.replicas < 100")),
        (json!({"mem": "2Gi"}), 422, cause(inv, "spec", "Invalid value: \"object\": memory 2Gi is too large")),
        (json!({"url": "::not a url"}), 422, cause("FieldValueForbidden", "spec.url", "Forbidden: must be a URL")),
        (json!({"addr": "::1"}), 422, cause(inv, "spec", "Invalid value: \"object\": must be an IPv4 address")),
        (json!({"tags": ["OK"]}), 422, cause("FieldValueRequired", "spec", "Required value: lowercase tags only")),
    ];
    for (i, (spec, code, want)) in cases.into_iter().enumerate() {
        let (got, cs) = post(&s, &c, &format!("w{i}"), spec.clone()).await;
        assert_eq!(got, code, "{spec}: {cs:?}");
        assert_eq!(cs, want, "{spec}");
    }
    // the whole message, as kubectl prints it
    let r = s
        .json(
            &c,
            Method::POST,
            WIDGETS,
            Some(widget("m", json!({"replicas": 1, "minReplicas": 2}))),
        )
        .await;
    assert_eq!(
        r.body["message"],
        "Widget.stable.example.com \"m\" is invalid: spec: Invalid value: \"object\": replicas must be at least minReplicas"
    );
}

#[tokio::test]
async fn transition_rules_see_the_old_object() {
    let s = Server::start();
    let c = s.client();
    define(
        &s,
        &c,
        spec_with(
            json!([]),
            json!({
                "mode": {"type": "string", "maxLength": 16,
                    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]},
                "level": {"type": "integer",
                    "x-kubernetes-validations": [{"rule": "!oldSelf.hasValue() || self >= oldSelf.value()",
                        "optionalOldSelf": true, "message": "level may not decrease"}]},
            }),
        ),
    )
    .await;
    let (code, cs) = post(&s, &c, "t", json!({"mode": "a", "level": 2})).await;
    assert_eq!(code, 201, "{cs:?}");
    let path = format!("{WIDGETS}/t");
    let merge = |patch: Value| {
        let (s, c, path) = (&s, &c, path.clone());
        async move { s.json(c, Method::PATCH, &path, Some(patch)).await }
    };
    let r = merge(json!({"spec": {"mode": "b"}})).await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        causes(&r.body),
        cause(
            "FieldValueInvalid",
            "spec.mode",
            "Invalid value: \"string\": Value is immutable"
        )
    );
    let r = merge(json!({"spec": {"level": 1}})).await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        causes(&r.body),
        cause(
            "FieldValueInvalid",
            "spec.level",
            "Invalid value: \"integer\": level may not decrease"
        )
    );
    let r = merge(json!({"spec": {"level": 5}})).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    // a field set for the first time has no old value: both rules pass
    let (code, cs) = post(&s, &c, "u", json!({})).await;
    assert_eq!(code, 201, "{cs:?}");
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{WIDGETS}/u"),
            Some(json!({"spec": {"mode": "x", "level": 0}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
}

#[tokio::test]
async fn rules_cost_ratcheting_and_blocking() {
    let s = Server::start();
    let c = s.client();
    define(
        &s,
        &c,
        json!({"type": "object",
            "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('w')", "message": "names start with w"}],
            "properties": {"spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "note": {"type": "string", "maxLength": 20},
                "pairs": {"type": "array", "maxItems": 1000, "items": {"type": "integer"},
                    "x-kubernetes-validations": [{"rule": "self.all(a, self.all(b, a != b || a == b))"}]}}}}}),
    )
    .await;
    // a root rule: the field is <nil>, as in kube
    let (code, cs) = post(&s, &c, "x", json!({})).await;
    assert_eq!(code, 422);
    assert_eq!(
        cs,
        cause(
            "FieldValueInvalid",
            "<nil>",
            "Invalid value: \"object\": names start with w"
        )
    );
    // a quadratic rule over a small list runs; over a large one it exceeds the per-call limit
    let (code, cs) = post(
        &s,
        &c,
        "w-small",
        json!({"pairs": (0..10).collect::<Vec<i32>>()}),
    )
    .await;
    assert_eq!(code, 201, "{cs:?}");
    let (code, cs) = post(
        &s,
        &c,
        "w-large",
        json!({"pairs": (0..1000).collect::<Vec<i32>>()}),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(cs.len(), 1, "{cs:?}");
    assert_eq!(cs[0].1, "spec.pairs");
    assert!(
        cs[0].2.contains(
            "call cost exceeds limit for rule: self.all(a, self.all(b, a != b || a == b))"
        ),
        "{cs:?}"
    );
    // a schema error of a blocking kind stops the rules, with kube's note
    let (code, cs) = post(&s, &c, "x2", json!({"replicas": "three"})).await;
    assert_eq!(code, 422);
    assert_eq!(cs.len(), 2, "{cs:?}");
    assert_eq!(cs[1], ("FieldValueInvalid".into(), "<nil>".into(), "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into()));

    // ratcheting: a rule added later does not fail an unchanged value
    let (code, cs) = post(&s, &c, "w-old", json!({"note": "UPPER"})).await;
    assert_eq!(code, 201, "{cs:?}");
    let path = format!("{CRDS}/widgets.stable.example.com");
    let mut def = s.json(&c, Method::GET, &path, None).await.body;
    def["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["note"]["x-kubernetes-validations"] =
        json!([{"rule": "self == self.lowerAscii()", "message": "lowercase only"}]);
    let r = s.json(&c, Method::PUT, &path, Some(def)).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    let obj = format!("{WIDGETS}/w-old");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        // a change elsewhere passes while the note is unchanged...
        let r = s
            .json(
                &c,
                Method::PATCH,
                &obj,
                Some(json!({"spec": {"replicas": 1}})),
            )
            .await;
        assert_eq!(r.code.as_u16(), 200, "{}", r.body);
        // ...and changing the note to another bad value fails, once the new rule is served
        let r = s
            .json(
                &c,
                Method::PATCH,
                &obj,
                Some(json!({"spec": {"note": "STILL"}})),
            )
            .await;
        if r.code.as_u16() == 422 {
            assert_eq!(
                causes(&r.body),
                cause(
                    "FieldValueInvalid",
                    "spec.note",
                    "Invalid value: \"string\": lowercase only"
                )
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the new rule was never served"
        );
        // undo and retry
        let _ = s
            .json(
                &c,
                Method::PATCH,
                &obj,
                Some(json!({"spec": {"note": "UPPER"}})),
            )
            .await;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}
