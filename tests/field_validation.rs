//! Server-side field validation over real HTTPS, as kube-apiserver v1.33 does it: every body
//! format and patch type (POST and PUT with JSON and YAML bodies, JSON patch, merge patch,
//! strategic merge patch, apply with YAML and JSON bodies) × `fieldValidation=Strict|Warn|Ignore`
//! (and absent: Warn), for a Deployment and a custom resource. Each case checks the status
//! code, kube's message (the bodies and expected texts are those of kube's
//! `test/integration/apiserver/field_validation_test.go`), the `Warning` headers in order, and
//! that a rejected write changed nothing. Also kube's 422 for an unknown directive and
//! kubectl's `--validate=strict|warn`.

mod support;

use reqwest::Method;
use serde_json::{json, Value};
use support::{Reply, Server};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/fv.example.com/v1/namespaces/default/widgets";

const INVALID_JSON: &str = r#"
	{
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {
			"name": "dupename",
			"name": "NAME",
			"labels": {"app": "nginx"},
			"unknownMeta": "metaVal"
		},
		"spec": {
			"unknown1": "val1",
			"unknownDupe": "valDupe",
			"unknownDupe": "valDupe2",
			"paused": true,
			"paused": false,
			"selector": {"matchLabels": {"app": "nginx"}},
			"template": {
				"metadata": {"labels": {"app": "nginx"}},
				"spec": {
					"containers": [{
						"name":  "nginx",
						"image": "nginx:latest",
						"unknownNested": "val1",
						"imagePullPolicy": "Always",
						"imagePullPolicy": "Never"
					}]
				}
			}
		}
	}"#;

const INVALID_YAML: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: dupename
  name: NAME
  unknownMeta: metaVal
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never";

const VALID_JSON: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "NAME", "labels": {"app": "nginx"}},
    "spec": {"selector": {"matchLabels": {"app": "nginx"}},
        "template": {"metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Always"}]}},
        "replicas": 2}}"#;

const APPLY_INVALID_JSON: &str = r#"{
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {
			"name": "NAME",
			"labels": {"app": "nginx"}
		},
		"spec": {
			"paused": false,
			"paused": true,
			"selector": {
				"matchLabels": {
					"app": "nginx"
				}
			},
			"template": {
				"metadata": {
					"labels": {
						"app": "nginx"
					}
				},
				"spec": {
					"containers": [{
						"name":  "nginx",
						"image": "nginx:latest",
						"imagePullPolicy": "Never",
						"imagePullPolicy": "Always"
					}]
				}
			}
		}
	}"#;

const APPLY_INVALID_YAML: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
spec:
  paused: false
  paused: true
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        imagePullPolicy: Never
        imagePullPolicy: Always
";

const MERGE_PATCH: &str = r#"
{
	"spec": {
		"unknown1": "val1",
		"unknownDupe": "valDupe",
		"unknownDupe": "valDupe2",
		"paused": true,
		"paused": false,
		"template": {
			"spec": {
				"containers": [{
					"name": "nginx",
					"image": "nginx:latest",
					"unknownNested": "val1",
					"imagePullPolicy": "Always",
					"imagePullPolicy": "Never"
				}]
			}
		}
	}
}"#;

const JSON_PATCH: &str = r#"
			[
				{"op": "add", "path": "/spec/unknown1", "value": "val1", "foo":"bar"},
				{"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "val1"},
				{"op": "add", "path": "/spec/unknownDupe", "value": "valDupe"},
				{"op": "add", "path": "/spec/unknownDupe", "value": "valDupe2"},
				{"op": "add", "path": "/spec/paused", "value": true},
				{"op": "add", "path": "/spec/paused", "value": false},
				{"op": "add", "path": "/spec/template/spec/containers/0/unknownNested", "value": "val1"},
				{"op": "add", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Always"},
				{"op": "add", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Never"}
			]"#;

const SMP: &str = r#"
	{
		"spec": {
			"unknown1": "val1",
			"unknownDupe": "valDupe",
			"unknownDupe": "valDupe2",
			"paused": true,
			"paused": false,
			"selector": {"matchLabels": {"app": "nginx"}},
			"template": {
				"metadata": {"labels": {"app": "nginx"}},
				"spec": {
					"containers": [{
						"name": "nginx",
						"unknownNested": "val1",
						"imagePullPolicy": "Always",
						"imagePullPolicy": "Never"
					}]
				}
			}
		}
	}"#;

// The custom resource: kube's test schema (cronSpec, knownField1, a map-list of ports).
const CR_INVALID_JSON: &str = r#"
{
	"apiVersion": "fv.example.com/v1",
	"kind": "Widget",
	"metadata": {
		"name": "dupename",
		"name": "NAME",
		"unknownMeta": "metaVal",
		"resourceVersion": "RV"
	},
	"spec": {
		"unknown1": "val1",
		"unknownDupe": "valDupe",
		"unknownDupe": "valDupe2",
		"knownField1": "val1",
		"knownField1": "val2",
			"ports": [{
				"name": "portName",
				"containerPort": 8080,
				"protocol": "TCP",
				"hostPort": 8081,
				"hostPort": 8082,
				"unknownNested": "val"
			}],
		"embeddedObj": {
			"apiVersion": "v1",
			"kind": "ConfigMap",
			"metadata": {
				"name": "my-cm",
				"namespace": "my-ns",
				"unknownEmbeddedMeta": "foo"
			}
		}
	}
}"#;

const CR_INVALID_YAML: &str = "
apiVersion: fv.example.com/v1
kind: Widget
metadata:
  name: dupename
  name: NAME
  resourceVersion: \"RV\"
  unknownMeta: metaVal
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  knownField1: val1
  knownField1: val2
  ports:
  - name: portName
    containerPort: 8080
    protocol: TCP
    hostPort: 8081
    hostPort: 8082
    unknownNested: val
  embeddedObj:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: my-cm
      namespace: my-ns
      unknownEmbeddedMeta: foo";

const CR_VALID_JSON: &str = r#"{"apiVersion": "fv.example.com/v1", "kind": "Widget",
    "metadata": {"name": "NAME"},
    "spec": {"cronSpec": "* * * * */5", "knownField1": "val1",
        "ports": [{"name": "portName", "containerPort": 8080, "protocol": "TCP", "hostPort": 8081}],
        "embeddedObj": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "my-cm"}}}}"#;

const CR_MERGE_PATCH: &str = r#"
{
	"spec": {
		"unknown1": "val1",
		"unknownDupe": "valDupe",
		"unknownDupe": "valDupe2",
		"knownField1": "val1",
		"knownField1": "val2",
			"ports": [{
				"name": "portName",
				"containerPort": 8080,
				"protocol": "TCP",
				"hostPort": 8081,
				"hostPort": 8082,
				"unknownNested": "val"
			}]
	}
}"#;

const CR_JSON_PATCH: &str = r#"
			[
				{"op": "add", "path": "/spec/unknown1", "value": "val1", "foo": "bar"},
				{"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "val2"},
				{"op": "add", "path": "/spec/unknownDupe", "value": "valDupe"},
				{"op": "add", "path": "/spec/unknownDupe", "value": "valDupe2"},
				{"op": "add", "path": "/spec/knownField1", "value": "val1"},
				{"op": "add", "path": "/spec/knownField1", "value": "val2"},
				{"op": "add", "path": "/spec/ports/0/name", "value": "portName"},
				{"op": "add", "path": "/spec/ports/0/containerPort", "value": 8080},
				{"op": "add", "path": "/spec/ports/0/protocol", "value": "TCP"},
				{"op": "add", "path": "/spec/ports/0/hostPort", "value": 8081},
				{"op": "add", "path": "/spec/ports/0/hostPort", "value": 8082},
				{"op": "add", "path": "/spec/ports/0/unknownNested", "value": "val"}
			]"#;

const CR_APPLY_INVALID_JSON: &str = r#"
{
	"apiVersion": "fv.example.com/v1",
	"kind": "Widget",
	"metadata": {
		"name": "NAME"
	},
	"spec": {
		"knownField1": "val1",
		"knownField1": "val2",
		"ports": [{
			"name": "portName",
			"containerPort": 8080,
			"protocol": "TCP",
			"hostPort": 8081,
			"hostPort": 8082
		}]
	}
}"#;

fn widget_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.fv.example.com"},
        "spec": {"group": "fv.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string"},
                        "knownField1": {"type": "string"},
                        "embeddedObj": {"x-kubernetes-embedded-resource": true, "type": "object",
                            "properties": {"apiversion": {"type": "string"},
                                "kind": {"type": "string"}, "metadata": {"type": "object"}}},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                            "items": {"type": "object", "required": ["containerPort", "protocol"],
                                "properties": {
                                    "containerPort": {"type": "integer", "format": "int32"},
                                    "hostIP": {"type": "string"},
                                    "hostPort": {"type": "integer", "format": "int32"},
                                    "name": {"type": "string"},
                                    "protocol": {"type": "string"}}}}}}}}}}]}})
}

/// Which request a case sends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    PostJson,
    PostYaml,
    PutJson,
    PutYaml,
    JsonPatch,
    MergePatch,
    Smp,
    ApplyYaml,
    ApplyJson,
}

/// What a directive yields for a case: the errors a strict decoder finds, in kube's order.
struct Expect {
    /// Strict: status code and the message's exact suffix.
    strict_code: u16,
    strict_suffix: String,
    /// Warn (and no directive): one warning per entry, in order; Ignore: none.
    warnings: Vec<String>,
    /// The success code of Warn and Ignore.
    ok: u16,
}

fn unquote_warning(h: &str) -> String {
    let t = h.strip_prefix("299 - \"").unwrap_or(h);
    let t = t.strip_suffix('"').unwrap_or(t);
    t.replace("\\\"", "\"").replace("\\\\", "\\")
}

fn warnings(r: &Reply) -> Vec<String> {
    r.headers
        .get_all("warning")
        .iter()
        .map(|v| unquote_warning(v.to_str().unwrap_or("")))
        .collect()
}

fn yaml_lines(lines: &[&str]) -> String {
    format!("yaml: unmarshal errors:\n  {}", lines.join("\n  "))
}

/// Sends one request of `op` for the object `name` under `base` with `directive`.
async fn send(
    s: &Server,
    c: &reqwest::Client,
    base: &str,
    name: &str,
    op: Op,
    body: &str,
    directive: Option<&str>,
) -> Reply {
    let mut q = Vec::new();
    if let Some(d) = directive {
        q.push(format!("fieldValidation={d}"));
    }
    if matches!(op, Op::ApplyYaml | Op::ApplyJson) {
        q.push("fieldManager=mgr".into());
    }
    let q = if q.is_empty() {
        String::new()
    } else {
        format!("?{}", q.join("&"))
    };
    let (method, path, ctype) = match op {
        Op::PostJson => (Method::POST, base.to_string(), "application/json"),
        Op::PostYaml => (Method::POST, base.to_string(), "application/yaml"),
        Op::PutJson => (Method::PUT, format!("{base}/{name}"), "application/json"),
        Op::PutYaml => (Method::PUT, format!("{base}/{name}"), "application/yaml"),
        Op::JsonPatch => (
            Method::PATCH,
            format!("{base}/{name}"),
            "application/json-patch+json",
        ),
        Op::MergePatch => (
            Method::PATCH,
            format!("{base}/{name}"),
            "application/merge-patch+json",
        ),
        Op::Smp => (
            Method::PATCH,
            format!("{base}/{name}"),
            "application/strategic-merge-patch+json",
        ),
        Op::ApplyYaml | Op::ApplyJson => (
            Method::PATCH,
            format!("{base}/{name}"),
            "application/apply-patch+yaml",
        ),
    };
    s.send(
        c,
        method,
        &format!("{path}{q}"),
        ctype,
        Some(body.as_bytes().to_vec()),
    )
    .await
}

/// Runs `op` under each directive against a fresh object (`seed` creates it, unless the op
/// creates), checking code, message, warnings and that Strict wrote nothing.
#[allow(clippy::too_many_arguments)]
async fn run_case(
    s: &Server,
    c: &reqwest::Client,
    base: &str,
    label: &str,
    op: Op,
    body: &str,
    seed: Option<&str>,
    expect: &Expect,
) {
    for directive in [Some("Strict"), Some("Warn"), Some("Ignore"), None] {
        let name = format!(
            "{label}-{}",
            directive.unwrap_or("default").to_ascii_lowercase()
        );
        let mut rv = String::new();
        if let Some(seed) = seed {
            let r = s
                .send(
                    c,
                    Method::POST,
                    base,
                    "application/json",
                    Some(seed.replace("NAME", &name).into_bytes()),
                )
                .await;
            assert_eq!(r.code.as_u16(), 201, "{label}: seed {}", r.body);
            rv = r.body["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .to_string();
        }
        let text = body.replace("NAME", &name).replace("RV", &rv);
        let r = send(s, c, base, &name, op, &text, directive).await;
        let what = format!("{label} {op:?} {directive:?}");
        if directive == Some("Strict") {
            assert_eq!(r.code.as_u16(), expect.strict_code, "{what}: {}", r.body);
            let msg = r.body["message"].as_str().unwrap_or_default();
            assert!(
                msg.ends_with(&expect.strict_suffix),
                "{what}:\n got: {msg}\nwant suffix: {}",
                expect.strict_suffix
            );
            let reason = if expect.strict_code == 400 {
                "BadRequest"
            } else {
                "Invalid"
            };
            assert_eq!(r.body["reason"], reason, "{what}");
            // Nothing was written.
            let after = s
                .json(c, Method::GET, &format!("{base}/{name}"), None)
                .await;
            match seed {
                None => assert_eq!(after.code.as_u16(), 404, "{what}: {}", after.body),
                Some(_) => assert_eq!(
                    after.body["metadata"]["resourceVersion"], rv,
                    "{what}: written"
                ),
            }
            continue;
        }
        assert_eq!(r.code.as_u16(), expect.ok, "{what}: {}", r.body);
        let want: Vec<String> = if directive == Some("Ignore") {
            Vec::new()
        } else {
            expect.warnings.clone()
        };
        assert_eq!(warnings(&r), want, "{what}");
        // The last of duplicates is kept; unknown fields are dropped.
        let obj = &r.body;
        assert!(
            obj["spec"].get("unknown1").is_none() && obj["metadata"].get("unknownMeta").is_none(),
            "{what}: unknown fields kept: {obj}"
        );
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn deployment_every_body_format_and_patch_type() {
    let s = Server::start();
    let c = s.client();
    let typed_json = strings(&[
        r#"duplicate field "metadata.name""#,
        r#"unknown field "metadata.unknownMeta""#,
        r#"unknown field "spec.unknown1""#,
        r#"unknown field "spec.unknownDupe""#,
        r#"duplicate field "spec.paused""#,
        r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
        r#"duplicate field "spec.template.spec.containers[0].imagePullPolicy""#,
    ]);
    let yaml = [
        r#"line 5: key "name" already set in map"#,
        r#"line 12: key "unknownDupe" already set in map"#,
        r#"line 14: key "paused" already set in map"#,
        r#"line 28: key "imagePullPolicy" already set in map"#,
    ];
    let yaml_unknown = [
        r#"unknown field "metadata.unknownMeta""#,
        r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
        r#"unknown field "spec.unknown1""#,
        r#"unknown field "spec.unknownDupe""#,
    ];
    let yaml_strict = format!(
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: {}, {}",
        yaml_lines(&yaml),
        yaml_unknown.join(", ")
    );
    let yaml_warnings: Vec<String> = yaml
        .iter()
        .chain(yaml_unknown.iter())
        .map(|s| s.to_string())
        .collect();
    let json_strict = format!(
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: {}",
        typed_json.join(", ")
    );
    let patch_errors = strings(&[
        r#"duplicate field "spec.unknownDupe""#,
        r#"duplicate field "spec.paused""#,
        r#"duplicate field "spec.template.spec.containers[0].imagePullPolicy""#,
        r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
        r#"unknown field "spec.unknown1""#,
        r#"unknown field "spec.unknownDupe""#,
    ]);
    let json_patch_errors = strings(&[
        r#"json patch unknown field "[0].foo""#,
        r#"json patch duplicate field "[1].path""#,
        r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
        r#"unknown field "spec.unknown1""#,
        r#"unknown field "spec.unknown3""#,
        r#"unknown field "spec.unknownDupe""#,
    ]);
    let apply_json = [
        r#"line 10: key "paused" already set in map"#,
        r#"line 27: key "imagePullPolicy" already set in map"#,
    ];
    let apply_yaml = [
        r#"line 7: key "paused" already set in map"#,
        r#"line 20: key "imagePullPolicy" already set in map"#,
    ];
    let apply = |lines: &[&str]| Expect {
        strict_code: 400,
        strict_suffix: format!(
            "error strict decoding YAML: error converting YAML to JSON: {}",
            yaml_lines(lines)
        ),
        warnings: strings(lines),
        ok: 201,
    };
    let cases: Vec<(&str, Op, &str, Option<&str>, Expect)> = vec![
        (
            "post-json",
            Op::PostJson,
            INVALID_JSON,
            None,
            Expect {
                strict_code: 400,
                strict_suffix: json_strict.clone(),
                warnings: typed_json.clone(),
                ok: 201,
            },
        ),
        (
            "post-yaml",
            Op::PostYaml,
            INVALID_YAML,
            None,
            Expect {
                strict_code: 400,
                strict_suffix: yaml_strict.clone(),
                warnings: yaml_warnings.clone(),
                ok: 201,
            },
        ),
        (
            "put-json",
            Op::PutJson,
            INVALID_JSON,
            Some(VALID_JSON),
            Expect {
                strict_code: 400,
                strict_suffix: json_strict.clone(),
                warnings: typed_json.clone(),
                ok: 200,
            },
        ),
        (
            "put-yaml",
            Op::PutYaml,
            INVALID_YAML,
            Some(VALID_JSON),
            Expect {
                strict_code: 400,
                strict_suffix: yaml_strict.clone(),
                warnings: yaml_warnings.clone(),
                ok: 200,
            },
        ),
        (
            "merge-patch",
            Op::MergePatch,
            MERGE_PATCH,
            Some(VALID_JSON),
            Expect {
                strict_code: 422,
                strict_suffix: format!("strict decoding error: {}", patch_errors.join(", ")),
                warnings: patch_errors.clone(),
                ok: 200,
            },
        ),
        (
            "json-patch",
            Op::JsonPatch,
            JSON_PATCH,
            Some(VALID_JSON),
            Expect {
                strict_code: 422,
                strict_suffix: format!("strict decoding error: {}", json_patch_errors.join(", ")),
                warnings: json_patch_errors.clone(),
                ok: 200,
            },
        ),
        (
            "smp",
            Op::Smp,
            SMP,
            Some(VALID_JSON),
            Expect {
                strict_code: 422,
                strict_suffix: format!("strict decoding error: {}", patch_errors.join(", ")),
                warnings: patch_errors.clone(),
                ok: 200,
            },
        ),
        (
            "apply-create-json",
            Op::ApplyJson,
            APPLY_INVALID_JSON,
            None,
            apply(&apply_json),
        ),
        (
            "apply-create-yaml",
            Op::ApplyYaml,
            APPLY_INVALID_YAML,
            None,
            apply(&apply_yaml),
        ),
        (
            "apply-update-json",
            Op::ApplyJson,
            APPLY_INVALID_JSON,
            Some(VALID_JSON),
            Expect {
                ok: 200,
                ..apply(&apply_json)
            },
        ),
        (
            "apply-update-yaml",
            Op::ApplyYaml,
            APPLY_INVALID_YAML,
            Some(VALID_JSON),
            Expect {
                ok: 200,
                ..apply(&apply_yaml)
            },
        ),
    ];
    for (label, op, body, seed, expect) in &cases {
        run_case(&s, &c, DEPLOYMENTS, label, *op, body, *seed, expect).await;
    }

    // The patched object keeps the last duplicate (Warn): paused false (omitted, as Go
    // encodes it), imagePullPolicy Never.
    let r = s
        .json(
            &c,
            Method::GET,
            &format!("{DEPLOYMENTS}/merge-patch-warn"),
            None,
        )
        .await;
    assert!(r.body["spec"].get("paused").is_none(), "{}", r.body);
    assert_eq!(
        r.body["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Never"
    );
    // A strategic merge patch's strict error quotes the patch as Go prints a map.
    let r = send(
        &s,
        &c,
        DEPLOYMENTS,
        "smp-warn",
        Op::Smp,
        r#"{"spec": {"paused": true, "paused": false}}"#,
        Some("Strict"),
    )
    .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        " \"\" is invalid: patch: Invalid value: \"map[spec:map[paused:false]]\": strict decoding error: duplicate field \"spec.paused\""
    );

    // An unknown directive: kube's options validation (422) before anything else.
    for (op, kind) in [
        (Op::PostJson, "CreateOptions"),
        (Op::PutJson, "UpdateOptions"),
        (Op::MergePatch, "PatchOptions"),
    ] {
        let r = send(
            &s,
            &c,
            DEPLOYMENTS,
            "post-json-warn",
            op,
            "{}",
            Some("Bogus"),
        )
        .await;
        assert_eq!(r.code.as_u16(), 422, "{op:?}: {}", r.body);
        assert_eq!(
            r.body["message"],
            format!("{kind}.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"")
        );
    }
}

#[tokio::test]
async fn custom_resource_every_body_format_and_patch_type() {
    let s = Server::start();
    let c = s.client();
    let r = s.json(&c, Method::POST, CRDS, Some(widget_crd())).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.json(&c, Method::GET, WIDGETS, None).await.code.as_u16() != 200 {
        assert!(std::time::Instant::now() < deadline, "widgets never served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let dups = [
        r#"duplicate field "metadata.name""#,
        r#"duplicate field "spec.unknownDupe""#,
        r#"duplicate field "spec.knownField1""#,
        r#"duplicate field "spec.ports[0].hostPort""#,
    ];
    let unknown = [
        r#"unknown field "metadata.unknownMeta""#,
        r#"unknown field "spec.ports[0].unknownNested""#,
        r#"unknown field "spec.unknown1""#,
        r#"unknown field "spec.unknownDupe""#,
    ];
    // (a body's embedded object's unknown metadata fields come last)
    let embedded = r#"unknown field "spec.embeddedObj.metadata.unknownEmbeddedMeta""#;
    let prefix = "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: ";
    let json_all: Vec<String> = dups
        .iter()
        .chain(unknown.iter())
        .chain([&embedded])
        .map(|s| s.to_string())
        .collect();
    let yaml = [
        r#"line 6: key "name" already set in map"#,
        r#"line 12: key "unknownDupe" already set in map"#,
        r#"line 14: key "knownField1" already set in map"#,
        r#"line 20: key "hostPort" already set in map"#,
    ];
    let yaml_all: Vec<String> = yaml
        .iter()
        .chain(unknown.iter())
        .chain([&embedded])
        .map(|s| s.to_string())
        .collect();
    let yaml_strict = format!(
        "{prefix}{}, {}, {embedded}",
        yaml_lines(&yaml),
        unknown.join(", ")
    );
    let merge = strings(&[
        r#"duplicate field "spec.unknownDupe""#,
        r#"duplicate field "spec.knownField1""#,
        r#"duplicate field "spec.ports[0].hostPort""#,
        r#"unknown field "spec.ports[0].unknownNested""#,
        r#"unknown field "spec.unknown1""#,
        r#"unknown field "spec.unknownDupe""#,
    ]);
    let json_patch = strings(&[
        r#"json patch unknown field "[0].foo""#,
        r#"json patch duplicate field "[1].path""#,
        r#"unknown field "spec.ports[0].unknownNested""#,
        r#"unknown field "spec.unknown1""#,
        r#"unknown field "spec.unknown3""#,
        r#"unknown field "spec.unknownDupe""#,
    ]);
    // Creates carry no resourceVersion.
    let post_json = CR_INVALID_JSON.replace(",\n\t\t\"resourceVersion\": \"RV\"", "");
    let post_yaml = CR_INVALID_YAML.replace("resourceVersion: \"RV\"", "labels: {a: b}");
    let cases: Vec<(&str, Op, &str, Option<&str>, Expect)> = vec![
        (
            "post-json",
            Op::PostJson,
            &post_json,
            None,
            Expect {
                strict_code: 400,
                strict_suffix: format!("{prefix}{}", json_all.join(", ")),
                warnings: json_all.clone(),
                ok: 201,
            },
        ),
        (
            "post-yaml",
            Op::PostYaml,
            &post_yaml,
            None,
            Expect {
                strict_code: 400,
                strict_suffix: yaml_strict.clone(),
                warnings: yaml_all.clone(),
                ok: 201,
            },
        ),
        (
            "put-json",
            Op::PutJson,
            CR_INVALID_JSON,
            Some(CR_VALID_JSON),
            Expect {
                strict_code: 400,
                strict_suffix: format!("{prefix}{}", json_all.join(", ")),
                warnings: json_all.clone(),
                ok: 200,
            },
        ),
        (
            "put-yaml",
            Op::PutYaml,
            CR_INVALID_YAML,
            Some(CR_VALID_JSON),
            Expect {
                strict_code: 400,
                strict_suffix: yaml_strict.clone(),
                warnings: yaml_all.clone(),
                ok: 200,
            },
        ),
        (
            "merge-patch",
            Op::MergePatch,
            CR_MERGE_PATCH,
            Some(CR_VALID_JSON),
            Expect {
                strict_code: 422,
                strict_suffix: format!("strict decoding error: {}", merge.join(", ")),
                warnings: merge.clone(),
                ok: 200,
            },
        ),
        (
            "json-patch",
            Op::JsonPatch,
            CR_JSON_PATCH,
            Some(CR_VALID_JSON),
            Expect {
                strict_code: 422,
                strict_suffix: format!("strict decoding error: {}", json_patch.join(", ")),
                warnings: json_patch.clone(),
                ok: 200,
            },
        ),
    ];
    for (label, op, body, seed, expect) in &cases {
        run_case(&s, &c, WIDGETS, label, *op, body, *seed, expect).await;
    }

    // Custom resources take no strategic merge patch, whatever the directive (415).
    let seed = CR_VALID_JSON.replace("NAME", "smp");
    let r = s
        .send(
            &c,
            Method::POST,
            WIDGETS,
            "application/json",
            Some(seed.into_bytes()),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    for d in [Some("Strict"), Some("Warn"), Some("Ignore"), None] {
        let r = send(&s, &c, WIDGETS, "smp", Op::Smp, CR_MERGE_PATCH, d).await;
        assert_eq!(r.code.as_u16(), 415, "{d:?}: {}", r.body);
    }

    // Apply: duplicate keys of the configuration as go-yaml's lines (once apply serves custom
    // resources; until then the 415 of an unserved patch type).
    let lines = [
        r#"line 10: key "knownField1" already set in map"#,
        r#"line 16: key "hostPort" already set in map"#,
    ];
    let probe = send(
        &s,
        &c,
        WIDGETS,
        "apply-probe",
        Op::ApplyJson,
        &CR_VALID_JSON.replace("NAME", "apply-probe"),
        None,
    )
    .await;
    if probe.code.as_u16() != 415 {
        let expect = Expect {
            strict_code: 400,
            strict_suffix: format!(
                "error strict decoding YAML: error converting YAML to JSON: {}",
                yaml_lines(&lines)
            ),
            warnings: strings(&lines),
            ok: 201,
        };
        run_case(
            &s,
            &c,
            WIDGETS,
            "apply-create",
            Op::ApplyJson,
            CR_APPLY_INVALID_JSON,
            None,
            &expect,
        )
        .await;
    }
}

/// kubectl's `--validate`: `strict` shows kube's 400, `warn` kube's warning.
#[test]
fn kubectl_validate_strict_and_warn() {
    let s = Server::start();
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\n  namespace: default\ndata:\n  a: b\nbogus: 1\n";
    let create = |name: &str, validate: &str| {
        use std::io::Write;
        let mut child = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&s.kubeconfig)
            .args(["create", "-f", "-", &format!("--validate={validate}")])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(manifest.replace("NAME", name).as_bytes())
            .expect("write");
        child.wait_with_output().expect("kubectl output")
    };
    let out = create("strict", "strict");
    assert!(!out.status.success(), "{}", support::stdout(&out));
    assert!(
        support::stderr(&out).contains(
            "Error from server (BadRequest): error when creating \"STDIN\": ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"bogus\""
        ),
        "{}",
        support::stderr(&out)
    );
    let out = create("warn", "warn");
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains("Warning: unknown field \"bogus\""),
        "{}",
        support::stderr(&out)
    );
    assert_eq!(support::stdout(&out).trim(), "configmap/warn created");
}
