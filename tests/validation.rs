//! Validation as kube-apiserver v1.33 answers it, over real HTTPS: a data-driven table of
//! invalid objects per type with the status code, reason, message and field causes kube
//! sends (derived from upstream's validation sources), and of updates refused for immutable
//! fields. Nothing refused is stored.

#[path = "validation/admission.rs"]
mod admission;
#[path = "validation/crd.rs"]
mod crd;
#[path = "validation/status.rs"]
mod status;
#[path = "validation/storage.rs"]
mod storage;
mod support;

#[path = "validation/core.rs"]
mod core_area;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const NS: &str = "/api/v1/namespaces/default";
const APPS: &str = "/apis/apps/v1/namespaces/default";

fn labels_template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}},
           "spec": {"containers": [{"name": "c", "image": "registry.local/app:1"}]}})
}

fn deployment(name: &str, selector: Value, template: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"selector": selector, "template": template}})
}

/// One refused create: where it goes, what is sent, and kube's answer.
struct Case {
    path: &'static str,
    body: Value,
    code: u16,
    reason: &'static str,
    message: &'static str,
    /// `(field, reason)` of each cause, in order (`None`: not checked).
    causes: Option<Vec<(&'static str, &'static str)>>,
}

fn cases() -> Vec<Case> {
    let big = "x".repeat(600 * 1024);
    vec![
        Case {
            path: "/api/v1/namespaces/default/secrets",
            body: json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b64"}, "data": {"a": "%%%"}}),
            code: 400,
            reason: "BadRequest",
            message: "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/configmaps",
            body: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b64"}, "binaryData": {"a": "YWJjZA"}}),
            code: 400,
            reason: "BadRequest",
            message: "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: illegal base64 data at input byte 4",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/configmaps",
            body: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                         "data": {"a": big.clone(), "b": big.clone()}}),
            code: 422,
            reason: "Invalid",
            message: "ConfigMap \"big\" is invalid: []: Too long: may not be more than 1048576 bytes",
            causes: Some(vec![("[]", "FieldValueTooLong")]),
        },
        Case {
            path: "/api/v1/namespaces/default/configmaps",
            body: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keys"},
                         "data": {"..a": "1", "k": "v"}, "binaryData": {"k": "dg=="}}),
            code: 422,
            reason: "Invalid",
            message: "ConfigMap \"keys\" is invalid: [data[..a]: Invalid value: \"..a\": must not start with '..', data[k]: Invalid value: \"k\": duplicate of key present in binaryData]",
            causes: Some(vec![("data[..a]", "FieldValueInvalid"), ("data[k]", "FieldValueInvalid")]),
        },
        Case {
            path: "/api/v1/namespaces/default/secrets",
            body: json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "big"},
                         "stringData": {"a": big.clone(), "b": big}}),
            code: 422,
            reason: "Invalid",
            message: "Secret \"big\" is invalid: data: Too long: may not be more than 1048576 bytes",
            causes: Some(vec![("data", "FieldValueTooLong")]),
        },
        Case {
            path: "/api/v1/namespaces/default/secrets",
            body: json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "type": "kubernetes.io/tls"}),
            code: 422,
            reason: "Invalid",
            message: "Secret \"tls\" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]",
            causes: Some(vec![("data[tls.crt]", "FieldValueRequired"), ("data[tls.key]", "FieldValueRequired")]),
        },
        Case {
            path: "/api/v1/namespaces/default/secrets",
            body: json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "dock"},
                         "type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "W10="}}),
            code: 422,
            reason: "Invalid",
            message: "Secret \"dock\" is invalid: data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/secrets",
            body: json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sat"},
                         "type": "kubernetes.io/service-account-token"}),
            code: 422,
            reason: "Invalid",
            message: "Secret \"sat\" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/pods",
            body: json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "empty"}, "spec": {}}),
            code: 422,
            reason: "Invalid",
            message: "Pod \"empty\" is invalid: spec.containers: Required value",
            causes: Some(vec![("spec.containers", "FieldValueRequired")]),
        },
        Case {
            path: "/api/v1/namespaces/default/pods",
            body: json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "many"}, "spec": {
                "volumes": [{"name": "data", "emptyDir": {}, "hostPath": {"path": "/x"}}],
                "containers": [
                    {"name": "c", "image": "i", "volumeMounts": [{"name": "data", "mountPath": "/d"}],
                     "resources": {"limits": {"memory": "128Mi"}, "requests": {"memory": "256Mi"}},
                     "securityContext": {"privileged": true}},
                    {"name": "c", "image": "j", "ports": [{"containerPort": 70000}]}],
                "restartPolicy": "Sometimes",
                "tolerations": [{"operator": "Equal", "value": "x"}]}}),
            code: 422,
            reason: "Invalid",
            message: "Pod \"many\" is invalid: [spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type, spec.containers[0].volumeMounts[0].name: Not found: \"data\", spec.containers[0].resources.requests: Invalid value: \"256Mi\": must be less than or equal to memory limit of 128Mi, spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy, spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.containers[1].name: Duplicate value: \"c\", spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\", spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"]",
            causes: None,
        },
        Case {
            path: "/apis/apps/v1/namespaces/default/deployments",
            body: deployment("priv", json!({"matchLabels": {"app": "a"}}), json!({"metadata": {"labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": "i", "securityContext": {"privileged": true}}]}})),
            code: 422,
            reason: "Invalid",
            message: "Deployment.apps \"priv\" is invalid: spec.template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy",
            causes: None,
        },
        Case {
            path: "/apis/batch/v1/namespaces/default/jobs",
            body: json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"},
                         "spec": {"backoffLimit": -1, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
            code: 422,
            reason: "Invalid",
            message: "Job.batch \"job\" is invalid: [spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0, spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"]",
            causes: None,
        },
        Case {
            path: "/apis/batch/v1/namespaces/default/cronjobs",
            body: json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
                         "spec": {"schedule": "not a cron", "timeZone": "Mars/Base", "concurrencyPolicy": "Sometimes",
                                  "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}}}),
            code: 422,
            reason: "Invalid",
            message: "CronJob.batch \"cj\" is invalid: [spec.schedule: Invalid value: \"not a cron\": expected exactly 5 fields, found 3: [not a cron], spec.timeZone: Invalid value: \"Mars/Base\": unknown time zone Mars/Base, spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"]",
            causes: None,
        },
        Case {
            path: "/apis/batch/v1/namespaces/default/cronjobs",
            body: json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tz"},
                         "spec": {"schedule": "CRON_TZ=UTC 0 * * * *",
                                  "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}}}),
            code: 422,
            reason: "Invalid",
            message: "CronJob.batch \"tz\" is invalid: spec.schedule: Invalid value: \"CRON_TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            causes: None,
        },
        Case {
            path: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            body: json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"},
                         "rules": [{"verbs": ["get"], "resources": ["pods"]}, {"apiGroups": [""], "resources": ["pods"]}]}),
            code: 422,
            reason: "Invalid",
            message: "ClusterRole.rbac.authorization.k8s.io \"r\" is invalid: [rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[1].verbs: Required value: verbs must contain at least one value]",
            causes: None,
        },
        Case {
            path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            body: json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
                         "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "ServiceAccount", "name": "sa"}, {"kind": "Robot", "name": "x"}]}),
            code: 422,
            reason: "Invalid",
            message: "ClusterRoleBinding.rbac.authorization.k8s.io \"b\" is invalid: [roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\", subjects[0].namespace: Required value, subjects[1].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"]",
            causes: None,
        },
        Case {
            path: "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            body: json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
                         "spec": {"minAvailable": "150%"}}),
            code: 422,
            reason: "Invalid",
            message: "PodDisruptionBudget.policy \"pdb\" is invalid: spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%",
            causes: None,
        },
        Case {
            path: "/apis/scheduling.k8s.io/v1/priorityclasses",
            body: json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "huge"}, "value": 2000000000}),
            code: 422,
            reason: "Invalid",
            message: "PriorityClass.scheduling.k8s.io \"huge\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
            causes: None,
        },
        Case {
            path: "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            body: json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}}),
            code: 422,
            reason: "Invalid",
            message: "Lease.coordination.k8s.io \"l\" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
            causes: None,
        },
        Case {
            path: "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
            body: json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
                         "spec": {"minReplicas": 0, "maxReplicas": 0, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment"}}}),
            code: 422,
            reason: "Invalid",
            message: "HorizontalPodAutoscaler.autoscaling \"h\" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.maxReplicas: Invalid value: 0: must be greater than 0, spec.scaleTargetRef.name: Required value]",
            causes: None,
        },
        Case {
            path: "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
            body: json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "ing"},
                         "spec": {"rules": [{"host": "10.0.0.1", "http": {"paths": [
                             {"path": "relative", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                             {"path": "/x", "backend": {"service": {"name": "web"}}}]}}]}}),
            code: 422,
            reason: "Invalid",
            message: "Ingress.networking.k8s.io \"ing\" is invalid: [spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address, spec.rules[0].http.paths[0].path: Invalid value: \"relative\": must be an absolute path, spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified]",
            causes: None,
        },
        Case {
            path: "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
            body: json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np"},
                         "spec": {"podSelector": {}, "ingress": [{
                             "ports": [{"protocol": "ICMP", "port": 80, "endPort": 70}],
                             "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}}]}]}}),
            code: 422,
            reason: "Invalid",
            message: "NetworkPolicy.networking.k8s.io \"np\" is invalid: [spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\", spec.ingress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to `port`, spec.ingress[0].from[0]: Required value: must specify a peer, spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`]",
            causes: None,
        },
        Case {
            path: "/apis/networking.k8s.io/v1/ingressclasses",
            body: json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "ic"}, "spec": {"controller": "nginx"}}),
            code: 422,
            reason: "Invalid",
            message: "IngressClass.networking.k8s.io \"ic\" is invalid: spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/persistentvolumeclaims",
            body: json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc"}, "spec": {}}),
            code: 422,
            reason: "Invalid",
            message: "PersistentVolumeClaim \"pvc\" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/services",
            body: json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "noports"}, "spec": {"selector": {"app": "a"}}}),
            code: 422,
            reason: "Invalid",
            message: "Service \"noports\" is invalid: spec.ports: Required value",
            causes: Some(vec![("spec.ports", "FieldValueRequired")]),
        },
        Case {
            path: "/api/v1/namespaces/default/services",
            body: json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "badports"},
                         "spec": {"ports": [{"port": 80, "protocol": "HTTP"}, {"name": "b", "port": 70000}, {"name": "b", "port": 81, "targetPort": "Not_A_Name"}]}}),
            code: 422,
            reason: "Invalid",
            message: "Service \"badports\" is invalid: [spec.ports[0].name: Required value, spec.ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\", spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[1].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[2].name: Duplicate value: \"b\", spec.ports[2].targetPort: Invalid value: \"Not_A_Name\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)]",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/services",
            body: json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"}, "spec": {"type": "ExternalName"}}),
            code: 422,
            reason: "Invalid",
            message: "Service \"ext\" is invalid: spec.externalName: Required value",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/services",
            body: json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "weird"}, "spec": {"type": "Weird", "ports": [{"port": 80}]}}),
            code: 422,
            reason: "Invalid",
            message: "Service \"weird\" is invalid: spec.type: Unsupported value: \"Weird\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
            causes: None,
        },
        Case {
            path: "/apis/apps/v1/namespaces/default/deployments",
            body: deployment("mismatch", json!({"matchLabels": {"app": "a"}}), labels_template("b")),
            code: 422,
            reason: "Invalid",
            message: "Deployment.apps \"mismatch\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`",
            causes: Some(vec![("spec.template.metadata.labels", "FieldValueInvalid")]),
        },
        Case {
            path: "/apis/apps/v1/namespaces/default/deployments",
            body: deployment("empty", json!({}), labels_template("b")),
            code: 422,
            reason: "Invalid",
            message: "Deployment.apps \"empty\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
            causes: None,
        },
        Case {
            path: "/apis/apps/v1/namespaces/default/deployments",
            body: json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nosel"},
                         "spec": {"template": labels_template("b")}}),
            code: 422,
            reason: "Invalid",
            message: "Deployment.apps \"nosel\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`]",
            causes: None,
        },
        Case {
            path: "/apis/apps/v1/namespaces/default/deployments",
            body: {
                let mut d = deployment("zero", json!({"matchLabels": {"app": "a"}}), labels_template("a"));
                d["spec"]["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}});
                d["spec"]["progressDeadlineSeconds"] = json!(5);
                d["spec"]["minReadySeconds"] = json!(5);
                d
            },
            code: 422,
            reason: "Invalid",
            message: "Deployment.apps \"zero\" is invalid: [spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0, spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds]",
            causes: None,
        },
        Case {
            path: "/apis/apps/v1/namespaces/default/replicasets",
            body: json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                         "spec": {"replicas": -1, "selector": {"matchLabels": {"app": "a"}},
                                  "template": {"metadata": {"labels": {"app": "a"}},
                                               "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "i"}]}}}}),
            code: 422,
            reason: "Invalid",
            message: "ReplicaSet.apps \"rs\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"]",
            causes: None,
        },
        Case {
            path: "/apis/apps/v1/namespaces/default/daemonsets",
            body: json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
                         "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": labels_template("b")}}),
            code: 422,
            reason: "Invalid",
            message: "DaemonSet.apps \"ds\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`",
            causes: None,
        },
        Case {
            path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            body: json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                         "metadata": {"name": "foo"}, "spec": {}}),
            code: 422,
            reason: "Invalid",
            message: "CustomResourceDefinition.apiextensions.k8s.io \"foo\" is invalid: [metadata.name: Invalid value: \"foo\": must be spec.names.plural+\".\"+spec.group, spec.group: Required value, spec.scope: Required value, spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version, spec.names.plural: Required value, spec.names.singular: Required value, spec.names.kind: Required value, spec.names.listKind: Required value, status.storedVersions: Invalid value: []string(nil): must have at least one stored version]",
            causes: Some(vec![
                ("metadata.name", "FieldValueInvalid"),
                ("spec.group", "FieldValueRequired"),
                ("spec.scope", "FieldValueRequired"),
                ("spec.versions", "FieldValueInvalid"),
                ("spec.names.plural", "FieldValueRequired"),
                ("spec.names.singular", "FieldValueRequired"),
                ("spec.names.kind", "FieldValueRequired"),
                ("spec.names.listKind", "FieldValueRequired"),
                ("status.storedVersions", "FieldValueInvalid"),
            ]),
        },
    ]
}

#[tokio::test]
async fn invalid_objects_are_refused_as_kube_refuses_them() {
    // Without priority and fairness the mandatory `exempt` level is not created, so the
    // refused one can be checked as not stored.
    let s = Server::start_with(&["--enable-priority-and-fairness=false"]);
    let c = s.client();
    let mut failures = Vec::new();
    for case in cases()
        .into_iter()
        .chain(core_area::cases())
        .chain(storage::cases())
        .chain(admission::cases())
        .chain(crd::cases())
    {
        let name = case.body["metadata"]["name"].as_str().unwrap().to_string();
        let r = s
            .json(&c, Method::POST, case.path, Some(case.body.clone()))
            .await;
        let b = &r.body;
        let got = (
            r.code.as_u16(),
            b["reason"].as_str().unwrap_or("").to_string(),
            b["message"].as_str().unwrap_or("").to_string(),
        );
        let want = (case.code, case.reason.to_string(), case.message.to_string());
        if got != want {
            failures.push(format!(
                "{} {name}:\n  got  {got:?}\n  want {want:?}",
                case.path
            ));
            continue;
        }
        assert_eq!(b["kind"], "Status");
        assert_eq!(b["status"], "Failure");
        if let Some(causes) = &case.causes {
            let got: Vec<(String, String)> = b["details"]["causes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["field"].as_str().unwrap_or("").to_string(),
                        c["reason"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect();
            let want: Vec<(String, String)> = causes
                .iter()
                .map(|(f, r)| (f.to_string(), r.to_string()))
                .collect();
            if got != want {
                failures.push(format!("{name} causes: got {got:?}, want {want:?}"));
            }
        }
        // Nothing was stored.
        let get = s
            .json(&c, Method::GET, &format!("{}/{name}", case.path), None)
            .await;
        assert_eq!(get.code, StatusCode::NOT_FOUND, "{name} was stored");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Updates refused because a field is immutable; the stored object stays as it was.
#[tokio::test]
async fn immutable_fields_stay() {
    let s = Server::start();
    let c = s.client();
    let post = |path: &'static str, body: Value| {
        let (s, c) = (&s, &c);
        async move {
            let r = s.json(c, Method::POST, path, Some(body)).await;
            assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
            r.body
        }
    };
    let put = |path: String, body: Value| {
        let (s, c) = (&s, &c);
        async move { s.json(c, Method::PUT, &path, Some(body)).await }
    };

    // An immutable ConfigMap keeps its data and stays immutable.
    let mut cm = post(
        "/api/v1/namespaces/default/configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "frozen"},
               "data": {"a": "1"}, "immutable": true}),
    )
    .await;
    cm["data"]["a"] = json!("2");
    cm["immutable"] = json!(false);
    let r = put(format!("{NS}/configmaps/frozen"), cm).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        r.body["message"],
        "ConfigMap \"frozen\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]"
    );

    // A Service keeps its cluster IP: left out it is kept, changed it is refused.
    let svc = post(
        "/api/v1/namespaces/default/services",
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"ports": [{"port": 80}], "selector": {"app": "a"}}}),
    )
    .await;
    let ip = svc["spec"]["clusterIP"].as_str().unwrap().to_string();
    let mut replaced = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "resourceVersion": svc["metadata"]["resourceVersion"]},
        "spec": {"ports": [{"port": 81}], "selector": {"app": "a"}}});
    let r = put(format!("{NS}/services/web"), replaced.clone()).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["spec"]["clusterIP"], ip.as_str());
    replaced["metadata"]["resourceVersion"] = r.body["metadata"]["resourceVersion"].clone();
    replaced["spec"]["clusterIP"] = json!("10.0.0.99");
    replaced["spec"]["clusterIPs"] = json!(["10.0.0.99"]);
    let r = put(format!("{NS}/services/web"), replaced).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        r.body["message"],
        "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"10.0.0.99\"}: may not change once set"
    );

    // A pod's spec changes only in its images (and a few more fields).
    let mut pod = post(
        "/api/v1/namespaces/default/pods",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "i:1"}]}}),
    )
    .await;
    pod["spec"]["containers"][0]["image"] = json!("i:2");
    let r = put(format!("{NS}/pods/p"), pod.clone()).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let mut pod = r.body;
    pod["spec"]["hostname"] = json!("other");
    let r = put(format!("{NS}/pods/p"), pod).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.body["message"].as_str().unwrap().starts_with("Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"),
        "{}",
        r.body
    );

    // A binding's roleRef never changes.
    let mut rb = post(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
               "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "User", "name": "u"}]}),
    )
    .await;
    assert_eq!(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    rb["roleRef"]["name"] = json!("edit");
    let r = put(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/rb".to_string(),
        rb,
    )
    .await;
    assert_eq!(
        r.body["message"],
        "RoleBinding.rbac.authorization.k8s.io \"rb\" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef"
    );

    // A namespace's finalizers, set through /finalize, are checked by name.
    let ns = post(
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fin"}}),
    )
    .await;
    let mut fin = ns.clone();
    fin["spec"]["finalizers"] = json!(["kubernetes", "bad-one"]);
    let r = put("/api/v1/namespaces/fin/finalize".to_string(), fin).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Namespace \"fin\" is invalid: spec.finalizers[1]: Invalid value: \"bad-one\": name is neither a standard finalizer name nor is it fully qualified"
    );

    // A Secret's type never changes.
    let mut sec = post(
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "typed"}, "data": {"a": "YQ=="}}),
    )
    .await;
    assert_eq!(sec["type"], "Opaque");
    sec["type"] = json!("kubernetes.io/basic-auth");
    let r = put(format!("{NS}/secrets/typed"), sec).await;
    assert_eq!(
        r.body["message"],
        // ValidateSecret of the new object follows the update checks.
        "Secret \"typed\" is invalid: [type: Invalid value: \"kubernetes.io/basic-auth\": field is immutable, data[username]: Required value, data[password]: Required value]"
    );

    // apps/v1 Deployment selectors are immutable.
    let mut d = post(
        "/apis/apps/v1/namespaces/default/deployments",
        deployment(
            "web",
            json!({"matchLabels": {"app": "a"}}),
            labels_template("a"),
        ),
    )
    .await;
    d["spec"]["selector"] = json!({"matchLabels": {"app": "b"}});
    d["spec"]["template"]["metadata"]["labels"] = json!({"app": "b"});
    let r = put(format!("{APPS}/deployments/web"), d).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        r.body["message"],
        "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
    );
    let now = s
        .json(&c, Method::GET, &format!("{APPS}/deployments/web"), None)
        .await;
    assert_eq!(
        now.body["spec"]["selector"],
        json!({"matchLabels": {"app": "a"}})
    );

    // StatefulSets: only some spec fields may change.
    let mut sts = post(
        "/apis/apps/v1/namespaces/default/statefulsets",
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
               "spec": {"selector": {"matchLabels": {"app": "a"}}, "serviceName": "db",
                        "template": labels_template("a")}}),
    )
    .await;
    sts["spec"]["serviceName"] = json!("other");
    let r = put(format!("{APPS}/statefulsets/db"), sts).await;
    assert_eq!(
        r.body["message"],
        "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    );
}

/// Strategies' warnings reach clients as `Warning` headers, which kubectl prints: deprecated
/// node labels in a template and the deprecated Ingress class annotation; an update warns only
/// about what it adds.
#[tokio::test]
async fn writes_warn_as_kube_warns() {
    let s = Server::start();
    let c = s.client();
    let manifest = s.dir.path().join("d.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: old-labels\nspec:\n  selector:\n    matchLabels: {app: a}\n  template:\n    metadata:\n      labels: {app: a}\n    spec:\n      nodeSelector:\n        beta.kubernetes.io/os: linux\n      containers:\n      - name: c\n        image: registry.local/app:1\n",
    )
    .unwrap();
    let out = s.kubectl(&["apply", "-f", manifest.to_str().unwrap()]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains("Warning: spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead"),
        "{}",
        support::stderr(&out)
    );
    // An update that leaves the spec alone (the generation stays) gets no warnings; one that
    // changes it gets the template's again, as in kube.
    let patch = |body: Value| {
        let (s, c) = (&s, &c);
        async move {
            let path = format!("{APPS}/deployments/old-labels");
            s.json(c, Method::PATCH, &path, Some(body)).await
        }
    };
    let r = patch(json!({"metadata": {"annotations": {"a": "b"}}})).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert!(r.headers.get("warning").is_none(), "{:?}", r.headers);
    let r = patch(json!({"spec": {"replicas": 2}})).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.headers.get_all("warning").iter().count(),
        1,
        "{:?}",
        r.headers
    );

    // Names that are not DNS labels, fractional byte sizes.
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{APPS}/deployments"),
            Some(deployment(
                "web.v1",
                json!({"matchLabels": {"app": "w"}}),
                labels_template("w"),
            )),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        r.headers.get("warning").and_then(|v| v.to_str().ok()),
        Some("299 - \"metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]\"")
    );
    let r = s
        .json(
            &c,
            Method::POST,
            &format!("{NS}/persistentvolumeclaims"),
            Some(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "half"},
                "spec": {"accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "1500m"}}}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        r.headers.get("warning").and_then(|v| v.to_str().ok()),
        Some("299 - \"spec.resources.requests[storage]: fractional byte value \\\"1500m\\\" is invalid, must be an integer\"")
    );

    let r = s
        .json(
            &c,
            Method::POST,
            "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
            Some(
                json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": "i", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
                "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}}),
            ),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        r.headers.get("warning").and_then(|v| v.to_str().ok()),
        Some("299 - \"annotation \\\"kubernetes.io/ingress.class\\\" is deprecated, please use 'spec.ingressClassName' instead\"")
    );
}

/// A PUT without a resourceVersion replaces the object only where kube's strategy allows
/// unconditional updates (most built-ins); leases, CSI objects, webhook configurations,
/// CRDs and custom resources need one.
#[tokio::test]
async fn unconditional_updates_as_kube_allows_them() {
    let s = Server::start();
    let c = s.client();
    let send = |m: Method, path: String, body: Option<Value>| {
        let (s, c) = (&s, &c);
        async move { s.json(c, m, &path, body).await }
    };
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "u"},
                    "data": {"a": "1"}});
    let r = send(Method::POST, format!("{NS}/configmaps"), Some(cm.clone())).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = send(Method::PUT, format!("{NS}/configmaps/u"), Some(cm)).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);

    // Leases may be created by a PUT, but not replaced without a resourceVersion.
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}});
    let leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases/l".to_string();
    let r = send(Method::PUT, leases.clone(), Some(lease.clone())).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let rv = r.body["metadata"]["resourceVersion"].clone();
    let r = send(Method::PUT, leases.clone(), Some(lease.clone())).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "leases.coordination.k8s.io \"l\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    assert_eq!(r.body["details"]["kind"], "leases");
    assert_eq!(r.body["details"]["group"], "coordination.k8s.io");
    assert_eq!(
        r.body["details"]["causes"][0],
        json!({"reason": "FieldValueInvalid", "field": "metadata.resourceVersion",
               "message": "Invalid value: 0x0: must be specified for an update"})
    );
    let mut with_rv = lease;
    with_rv["metadata"]["resourceVersion"] = rv;
    let r = send(Method::PUT, leases, Some(with_rv)).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);

    // RuntimeClasses are created by a PUT too (kube's AllowCreateOnUpdate).
    let rc = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                    "metadata": {"name": "gvisor"}, "handler": "runsc"});
    let path = "/apis/node.k8s.io/v1/runtimeclasses/gvisor".to_string();
    let r = send(Method::PUT, path.clone(), Some(rc.clone())).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = send(Method::PUT, path, Some(rc)).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);

    // Custom resources always need one.
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition", "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let r = send(Method::POST, crds.to_string(), Some(crd.clone())).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = send(
        Method::PUT,
        format!("{crds}/gadgets.example.com"),
        Some(crd),
    )
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "customresourcedefinitions.apiextensions.k8s.io \"gadgets.example.com\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    let gadgets = "/apis/example.com/v1/namespaces/default/gadgets";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while send(Method::GET, gadgets.to_string(), None).await.code != StatusCode::OK {
        assert!(std::time::Instant::now() < deadline, "gadgets never served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let g = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
                   "metadata": {"name": "g"}, "spec": {"size": 1}});
    let r = send(Method::POST, gadgets.to_string(), Some(g.clone())).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = send(Method::PUT, format!("{gadgets}/g"), Some(g)).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "gadgets.example.com \"g\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
}

/// kube validates a Deployment's pod template as a pod, but leaves a StatefulSet's template
/// spec alone: its volume mounts may name a `volumeClaimTemplates` claim.
#[tokio::test]
async fn statefulset_templates_may_mount_their_claims() {
    let s = Server::start();
    let c = s.client();
    let template = json!({"metadata": {"labels": {"app": "db"}},
        "spec": {"containers": [{"name": "c", "image": "registry.local/db:1",
                                 "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}});
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
                 "template": template,
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                     "spec": {"accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}}}]}});
    let r = s
        .json(&c, Method::POST, &format!("{APPS}/statefulsets"), Some(sts))
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let d = deployment("db", json!({"matchLabels": {"app": "db"}}), template);
    let r = s
        .json(&c, Method::POST, &format!("{APPS}/deployments"), Some(d))
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        "spec.template.spec.containers[0].volumeMounts[0].name"
    );
}
