//! Kubernetes protobuf request bodies over real HTTPS, as client-go's typed clients send them:
//! creates of the built-in kinds controllers write, `status` updates, `Scale` and `Binding`
//! subresource bodies, each encoded with the `k8s-pb` crate and checked to have the same
//! effect as the same object sent as JSON. Malformed bodies are 400 Status answers and store
//! nothing.

mod support;

use std::collections::BTreeMap;

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::autoscaling::v1 as autoscaling;
use k8s_pb::api::batch::v1 as batch;
use k8s_pb::api::coordination::v1 as coordination;
use k8s_pb::api::core::v1 as core;
use k8s_pb::api::rbac::v1 as rbac;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::{pb_envelope, Server};

const PB: &str = "application/vnd.kubernetes.protobuf";

fn om(name: &str) -> Option<meta::ObjectMeta> {
    Some(meta::ObjectMeta {
        name: Some(name.into()),
        labels: labels(),
        ..Default::default()
    })
}

fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([("app".to_string(), "web".to_string())])
}

fn selector() -> Option<meta::LabelSelector> {
    Some(meta::LabelSelector {
        match_labels: labels(),
        ..Default::default()
    })
}

fn pod_spec() -> Option<core::PodSpec> {
    Some(core::PodSpec {
        containers: vec![core::Container {
            name: Some("c".into()),
            image: Some("nginx:1.27".into()),
            ..Default::default()
        }],
        volumes: vec![core::Volume {
            name: Some("scratch".into()),
            volume_source: Some(core::VolumeSource::default()),
        }],
        ..Default::default()
    })
}

fn template() -> Option<core::PodTemplateSpec> {
    Some(core::PodTemplateSpec {
        metadata: om(""),
        spec: pod_spec(),
    })
}

/// A job's pod template: jobs' pods do not restart always.
fn job_template() -> Option<core::PodTemplateSpec> {
    let mut t = template();
    if let Some(spec) = t.as_mut().and_then(|t| t.spec.as_mut()) {
        spec.restart_policy = Some("Never".into());
    }
    t
}

/// (collection path, apiVersion, kind, protobuf body for a given name).
type Case = (
    &'static str,
    &'static str,
    &'static str,
    fn(&str) -> Vec<u8>,
);

fn cases() -> Vec<Case> {
    vec![
        ("/api/v1/namespaces", "v1", "Namespace", |n| {
            pb_envelope(
                "v1",
                "Namespace",
                &core::Namespace {
                    metadata: om(n),
                    ..Default::default()
                },
            )
        }),
        (
            "/api/v1/namespaces/default/configmaps",
            "v1",
            "ConfigMap",
            |n| {
                pb_envelope(
                    "v1",
                    "ConfigMap",
                    &core::ConfigMap {
                        metadata: om(n),
                        data: BTreeMap::from([("k".to_string(), "v".to_string())]),
                        ..Default::default()
                    },
                )
            },
        ),
        ("/api/v1/namespaces/default/secrets", "v1", "Secret", |n| {
            pb_envelope(
                "v1",
                "Secret",
                &core::Secret {
                    metadata: om(n),
                    data: BTreeMap::from([("k".to_string(), b"\x00bytes".to_vec())]),
                    ..Default::default()
                },
            )
        }),
        ("/api/v1/namespaces/default/pods", "v1", "Pod", |n| {
            pb_envelope(
                "v1",
                "Pod",
                &core::Pod {
                    metadata: om(n),
                    spec: pod_spec(),
                    ..Default::default()
                },
            )
        }),
        (
            "/api/v1/namespaces/default/services",
            "v1",
            "Service",
            |n| {
                pb_envelope(
                    "v1",
                    "Service",
                    &core::Service {
                        metadata: om(n),
                        spec: Some(core::ServiceSpec {
                            ports: vec![core::ServicePort {
                                port: Some(80),
                                ..Default::default()
                            }],
                            selector: labels(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                )
            },
        ),
        (
            "/api/v1/namespaces/default/serviceaccounts",
            "v1",
            "ServiceAccount",
            |n| {
                pb_envelope(
                    "v1",
                    "ServiceAccount",
                    &core::ServiceAccount {
                        metadata: om(n),
                        ..Default::default()
                    },
                )
            },
        ),
        (
            "/api/v1/namespaces/default/replicationcontrollers",
            "v1",
            "ReplicationController",
            |n| {
                pb_envelope(
                    "v1",
                    "ReplicationController",
                    &core::ReplicationController {
                        metadata: om(n),
                        spec: Some(core::ReplicationControllerSpec {
                            replicas: Some(2),
                            template: template(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                )
            },
        ),
        ("/api/v1/nodes", "v1", "Node", |n| {
            pb_envelope(
                "v1",
                "Node",
                &core::Node {
                    metadata: om(n),
                    ..Default::default()
                },
            )
        }),
        (
            "/apis/apps/v1/namespaces/default/deployments",
            "apps/v1",
            "Deployment",
            |n| {
                pb_envelope(
                    "apps/v1",
                    "Deployment",
                    &apps::Deployment {
                        metadata: om(n),
                        spec: Some(apps::DeploymentSpec {
                            replicas: Some(3),
                            selector: selector(),
                            template: template(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                )
            },
        ),
        (
            "/apis/apps/v1/namespaces/default/replicasets",
            "apps/v1",
            "ReplicaSet",
            |n| {
                pb_envelope(
                    "apps/v1",
                    "ReplicaSet",
                    &apps::ReplicaSet {
                        metadata: om(n),
                        spec: Some(apps::ReplicaSetSpec {
                            selector: selector(),
                            template: template(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                )
            },
        ),
        (
            "/apis/apps/v1/namespaces/default/statefulsets",
            "apps/v1",
            "StatefulSet",
            |n| {
                pb_envelope(
                    "apps/v1",
                    "StatefulSet",
                    &apps::StatefulSet {
                        metadata: om(n),
                        spec: Some(apps::StatefulSetSpec {
                            selector: selector(),
                            template: template(),
                            service_name: Some("web".into()),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                )
            },
        ),
        (
            "/apis/apps/v1/namespaces/default/daemonsets",
            "apps/v1",
            "DaemonSet",
            |n| {
                pb_envelope(
                    "apps/v1",
                    "DaemonSet",
                    &apps::DaemonSet {
                        metadata: om(n),
                        spec: Some(apps::DaemonSetSpec {
                            selector: selector(),
                            template: template(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                )
            },
        ),
        (
            "/apis/batch/v1/namespaces/default/cronjobs",
            "batch/v1",
            "CronJob",
            |n| {
                pb_envelope(
                    "batch/v1",
                    "CronJob",
                    &batch::CronJob {
                        metadata: om(n),
                        spec: Some(batch::CronJobSpec {
                            schedule: Some("*/5 * * * *".into()),
                            job_template: Some(batch::JobTemplateSpec {
                                metadata: None,
                                spec: Some(batch::JobSpec {
                                    template: job_template(),
                                    ..Default::default()
                                }),
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                )
            },
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            "coordination.k8s.io/v1",
            "Lease",
            |n| {
                pb_envelope(
                    "coordination.k8s.io/v1",
                    "Lease",
                    &coordination::Lease {
                        metadata: om(n),
                        spec: Some(coordination::LeaseSpec {
                            holder_identity: Some("me".into()),
                            lease_duration_seconds: Some(15),
                            ..Default::default()
                        }),
                    },
                )
            },
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            |n| {
                pb_envelope(
                    "rbac.authorization.k8s.io/v1",
                    "RoleBinding",
                    &rbac::RoleBinding {
                        metadata: om(n),
                        subjects: vec![rbac::Subject {
                            kind: Some("User".into()),
                            name: Some("alice".into()),
                            api_group: Some("rbac.authorization.k8s.io".into()),
                            ..Default::default()
                        }],
                        role_ref: Some(rbac::RoleRef {
                            api_group: Some("rbac.authorization.k8s.io".into()),
                            kind: Some("Role".into()),
                            name: Some("reader".into()),
                        }),
                    },
                )
            },
        ),
    ]
}

/// The object without what differs between two creates of the same content.
fn comparable(mut v: Value) -> Value {
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        for f in [
            "name",
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
        ] {
            m.remove(f);
        }
        if let Some(l) = m.get_mut("labels").and_then(Value::as_object_mut) {
            l.remove("kubernetes.io/metadata.name");
        }
    }
    if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) {
        // Allocated per object.
        for f in ["clusterIP", "clusterIPs"] {
            spec.remove(f);
        }
    }
    // The ServiceAccount plugin's token volume has a random name suffix.
    let text = v.to_string();
    let re = regex::Regex::new("kube-api-access-[a-z0-9]{5}").unwrap();
    serde_json::from_str(&re.replace_all(&text, "kube-api-access-xxxxx")).unwrap()
}

#[tokio::test]
async fn creates_match_json() {
    let s = Server::start();
    let c = s.client();
    for (path, api_version, kind, body) in cases() {
        let pb = body(&format!("pb-{}", kind.to_lowercase()));
        let r = s.send(&c, Method::POST, path, PB, Some(pb)).await;
        assert_eq!(r.code, StatusCode::CREATED, "{kind}: {}", r.body);
        assert_eq!(r.body["kind"], kind);
        assert_eq!(r.body["apiVersion"], api_version);
        // The same object as JSON (what kube's JSON encoding of it is).
        let as_json =
            rafter::server::protobuf::decode_object(&body(&format!("js-{}", kind.to_lowercase())))
                .expect("decodes");
        let j = s.json(&c, Method::POST, path, Some(as_json)).await;
        assert_eq!(j.code, StatusCode::CREATED, "{kind}: {}", j.body);
        assert_eq!(comparable(r.body.clone()), comparable(j.body), "{kind}");
        let got = s
            .json(
                &c,
                Method::GET,
                &format!("{path}/pb-{}", kind.to_lowercase()),
                None,
            )
            .await;
        assert_eq!(got.code, StatusCode::OK);
        assert_eq!(got.body["metadata"]["labels"]["app"], "web", "{kind}");
    }
    // Spot checks against kube's JSON for what protobuf carries differently.
    let secret = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/secrets/pb-secret",
            None,
        )
        .await;
    assert_eq!(secret.body["data"]["k"], "AGJ5dGVz");
    let deploy = s
        .json(
            &c,
            Method::GET,
            "/apis/apps/v1/namespaces/default/deployments/pb-deployment",
            None,
        )
        .await;
    assert_eq!(deploy.body["spec"]["replicas"], 3);
    assert_eq!(
        deploy.body["spec"]["template"]["spec"]["volumes"],
        json!([{"name": "scratch", "emptyDir": {}}])
    );
    let svc = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/services/pb-service",
            None,
        )
        .await;
    assert_eq!(
        svc.body["spec"]["ports"][0]["targetPort"], 80,
        "{}",
        svc.body
    );
}

#[tokio::test]
async fn subresource_bodies() {
    let s = Server::start();
    let c = s.client();
    let deploy = (cases()[8].3)("web");
    let r = s
        .send(
            &c,
            Method::POST,
            "/apis/apps/v1/namespaces/default/deployments",
            PB,
            Some(deploy),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let rv = r.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();

    // status update of a Deployment, in protobuf.
    let status = apps::Deployment {
        metadata: Some(meta::ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            resource_version: Some(rv),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus {
            replicas: Some(3),
            ready_replicas: Some(2),
            observed_generation: Some(1),
            ..Default::default()
        }),
        ..Default::default()
    };
    let r = s
        .send(
            &c,
            Method::PUT,
            "/apis/apps/v1/namespaces/default/deployments/web/status",
            PB,
            Some(pb_envelope("apps/v1", "Deployment", &status)),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["status"]["readyReplicas"], 2);
    assert_eq!(
        r.body["spec"]["replicas"], 3,
        "spec untouched by a status write"
    );

    // Scale in protobuf.
    let scale = autoscaling::Scale {
        metadata: Some(meta::ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..Default::default()
        }),
        spec: Some(autoscaling::ScaleSpec { replicas: Some(5) }),
        status: None,
    };
    let r = s
        .send(
            &c,
            Method::PUT,
            "/apis/apps/v1/namespaces/default/deployments/web/scale",
            PB,
            Some(pb_envelope("autoscaling/v1", "Scale", &scale)),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["spec"]["replicas"], 5);

    // A pod bound by the scheduler: Binding in protobuf.
    let pod = (cases()[3].3)("p");
    let r = s
        .send(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/pods",
            PB,
            Some(pod),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let binding = core::Binding {
        metadata: Some(meta::ObjectMeta {
            name: Some("p".into()),
            namespace: Some("default".into()),
            ..Default::default()
        }),
        target: Some(core::ObjectReference {
            kind: Some("Node".into()),
            name: Some("node-1".into()),
            ..Default::default()
        }),
    };
    let body = pb_envelope("v1", "Binding", &binding);
    let r = s
        .send(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/pods/p/binding",
            PB,
            Some(body.clone()),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
    let p = s
        .json(&c, Method::GET, "/api/v1/namespaces/default/pods/p", None)
        .await;
    assert_eq!(p.body["spec"]["nodeName"], "node-1");
    let cond = p.body["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .cloned()
        .unwrap();
    assert_eq!(cond["status"], "True");
    // Binding twice is a conflict.
    let r = s
        .send(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/pods/p/binding",
            PB,
            Some(body),
        )
        .await;
    assert_eq!(r.code, StatusCode::CONFLICT, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"node-1\""
    );

    // pod status update in protobuf (what the kubelet sends).
    let cur = s
        .json(&c, Method::GET, "/api/v1/namespaces/default/pods/p", None)
        .await;
    let status = core::Pod {
        metadata: Some(meta::ObjectMeta {
            name: Some("p".into()),
            namespace: Some("default".into()),
            resource_version: cur.body["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_string),
            ..Default::default()
        }),
        status: Some(core::PodStatus {
            phase: Some("Running".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let r = s
        .send(
            &c,
            Method::PUT,
            "/api/v1/namespaces/default/pods/p/status",
            PB,
            Some(pb_envelope("v1", "Pod", &status)),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["status"]["phase"], "Running");
    assert_eq!(r.body["spec"]["nodeName"], "node-1");
}

#[tokio::test]
async fn malformed_bodies_are_400_and_store_nothing() {
    let s = Server::start();
    let c = s.client();
    let good = (cases()[1].3)("bad");
    let cut = good[..good.len() - 3].to_vec();
    for (what, body) in [
        ("truncated", cut),
        ("not protobuf", b"{\"kind\":\"ConfigMap\"}".to_vec()),
        (
            "wrong kind",
            pb_envelope("v1", "Nope", &core::ConfigMap::default()),
        ),
    ] {
        let r = s
            .send(
                &c,
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                PB,
                Some(body),
            )
            .await;
        assert_eq!(r.code, StatusCode::BAD_REQUEST, "{what}: {}", r.body);
        assert_eq!(r.body["kind"], "Status", "{what}");
        assert!(
            !r.body["message"].as_str().unwrap_or("").is_empty(),
            "{what}"
        );
    }
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/configmaps/bad",
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::NOT_FOUND);
}

/// A protobuf varint.
fn varint(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A length-delimited field.
fn field(tag: u8, bytes: &[u8], out: &mut Vec<u8>) {
    out.push(tag << 3 | 2);
    varint(bytes.len(), out);
    out.extend_from_slice(bytes);
}

/// `status` updates of every built-in kind that has the subresource, in protobuf: every kind's
/// message carries `metadata` as field 1, so one generic body (name, namespace,
/// resourceVersion) is a valid status update of each.
#[tokio::test]
async fn status_updates_of_every_kind() {
    let s = Server::start();
    let c = s.client();
    let mut seen = std::collections::HashSet::new();
    let mut checked = 0;
    for r in rafter::registry::resources::RESOURCES.iter() {
        if !r.has_status || !seen.insert((r.group, r.resource)) {
            continue;
        }
        let api_version = if r.group.is_empty() {
            r.version.to_string()
        } else {
            format!("{}/{}", r.group, r.version)
        };
        let prefix = if r.group.is_empty() {
            format!("/api/{}", r.version)
        } else {
            format!("/apis/{}/{}", r.group, r.version)
        };
        let collection = if r.namespaced {
            format!("{prefix}/namespaces/default/{}", r.resource)
        } else {
            format!("{prefix}/{}", r.resource)
        };
        let name = format!("st-{}", r.singular);
        let created = s
            .json(
                &c,
                Method::POST,
                &collection,
                Some(
                    json!({"apiVersion": api_version, "kind": r.kind, "metadata": {"name": name}}),
                ),
            )
            .await;
        if created.code != StatusCode::CREATED {
            // Kinds whose validation needs a real spec are covered by the cases above.
            continue;
        }
        let rv = created.body["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        let mut meta = Vec::new();
        field(1, name.as_bytes(), &mut meta);
        if r.namespaced {
            field(3, b"default", &mut meta);
        }
        field(6, rv.as_bytes(), &mut meta);
        let mut raw = Vec::new();
        field(1, &meta, &mut raw);
        let mut type_meta = Vec::new();
        field(1, api_version.as_bytes(), &mut type_meta);
        field(2, r.kind.as_bytes(), &mut type_meta);
        let mut body = b"k8s\0".to_vec();
        field(1, &type_meta, &mut body);
        field(2, &raw, &mut body);
        let got = s
            .send(
                &c,
                Method::PUT,
                &format!("{collection}/{name}/status"),
                PB,
                Some(body),
            )
            .await;
        assert_eq!(
            got.code,
            StatusCode::OK,
            "{api_version} {}: {}",
            r.kind,
            got.body
        );
        assert_eq!(got.body["kind"], r.kind);
        checked += 1;
    }
    // Kinds that an empty spec makes invalid (as kube's validation does: HPAs, PVCs,
    // Ingresses, nodes, storage classes, ...) are skipped above.
    assert!(checked >= 5, "only {checked} kinds checked");
}
