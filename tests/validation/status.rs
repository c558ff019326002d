//! Status writes (`PUT`/`PATCH .../status`) checked by each kind's status rules, as
//! kube-apiserver v1.33's status strategies check them (`Validate<Kind>StatusUpdate`), not by
//! the rules of the object itself: a refused status per kind with kube's message, and status
//! writes kube takes that the spec rules would refuse.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::support::{Reply, Server};
use super::{deployment, labels_template, APPS, NS};

const SUB: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const QNAME: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const BAD_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

fn container() -> Value {
    json!([{"name": "c", "image": "registry.local/app:1"}])
}

/// One kind's refused status write: the object created at `collection`, then written back
/// with `status` (and no resourceVersion when `unconditional`).
struct StatusCase {
    collection: &'static str,
    body: Value,
    status: Value,
    unconditional: bool,
    message: String,
    causes: Option<Vec<(&'static str, &'static str)>>,
}

fn case(collection: &'static str, body: Value, status: Value, message: String) -> StatusCase {
    StatusCase {
        collection,
        body,
        status,
        unconditional: false,
        message,
        causes: None,
    }
}

fn cases() -> Vec<StatusCase> {
    let pod_spec = json!({"restartPolicy": "Never", "containers": container()});
    let job_template = json!({"spec": pod_spec.clone()});
    vec![
        StatusCase {
            causes: Some(vec![
                ("status.replicas", "FieldValueInvalid"),
                ("status.updatedReplicas", "FieldValueInvalid"),
                ("status.readyReplicas", "FieldValueInvalid"),
                ("status.availableReplicas", "FieldValueInvalid"),
                ("status.availableReplicas", "FieldValueInvalid"),
            ]),
            ..case(
                "/apis/apps/v1/namespaces/default/deployments",
                deployment("web", json!({"matchLabels": {"app": "a"}}), labels_template("a")),
                json!({"replicas": -1, "readyReplicas": 1, "availableReplicas": 2}),
                "Deployment.apps \"web\" is invalid: [status.replicas: Invalid value: -1: must be greater than or equal to 0, status.updatedReplicas: Invalid value: 0: cannot be greater than status.replicas, status.readyReplicas: Invalid value: 1: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas]".into(),
            )
        },
        case(
            "/apis/apps/v1/namespaces/default/replicasets",
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                   "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": labels_template("a")}}),
            json!({"replicas": 1, "fullyLabeledReplicas": 2, "observedGeneration": -1}),
            "ReplicaSet.apps \"rs\" is invalid: [status.observedGeneration: Invalid value: -1: must be greater than or equal to 0, status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas]".into(),
        ),
        case(
            "/apis/apps/v1/namespaces/default/statefulsets",
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                   "spec": {"selector": {"matchLabels": {"app": "a"}}, "serviceName": "db", "template": labels_template("a")}}),
            json!({"replicas": 1, "readyReplicas": 1, "availableReplicas": 2}),
            "StatefulSet.apps \"db\" is invalid: [status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas]".into(),
        ),
        case(
            "/apis/apps/v1/namespaces/default/daemonsets",
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
                   "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": labels_template("a")}}),
            json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": -1}),
            "DaemonSet.apps \"ds\" is invalid: status.numberReady: Invalid value: -1: must be greater than or equal to 0".into(),
        ),
        case(
            "/api/v1/namespaces/default/replicationcontrollers",
            json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
                   "spec": {"selector": {"app": "a"}, "template": labels_template("a")}}),
            json!({"replicas": 1, "readyReplicas": 2}),
            "ReplicationController \"rc\" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas".into(),
        ),
        case(
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "phases"}}),
            json!({"phase": "Terminating"}),
            "Namespace \"phases\" is invalid: status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty".into(),
        ),
        StatusCase {
            causes: Some(vec![
                ("status.capacity.cpu", "FieldValueInvalid"),
                ("status.allocatable.cpu", "FieldValueInvalid"),
                ("status.addresses[1]", "FieldValueDuplicate"),
            ]),
            ..case(
                "/api/v1/nodes",
                json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
                json!({"capacity": {"cpu": "-1"}, "addresses": [
                    {"type": "InternalIP", "address": "10.0.0.1"}, {"type": "InternalIP", "address": "10.0.0.1"}]}),
                "Node \"n1\" is invalid: [status.capacity.cpu: Invalid value: \"-1\": must be greater than or equal to 0, status.allocatable.cpu: Invalid value: \"-1\": must be greater than or equal to 0, status.addresses[1]: Duplicate value: core.NodeAddress{Type:\"InternalIP\", Address:\"10.0.0.1\"}]".into(),
            )
        },
        StatusCase {
            unconditional: true,
            causes: Some(vec![
                ("resourceVersion", "FieldValueRequired"),
                ("status.capacity[storage]", "FieldValueInvalid"),
                ("status.allocatedResourceStatus", "FieldValueNotSupported"),
            ]),
            ..case(
                "/api/v1/namespaces/default/persistentvolumeclaims",
                json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "claim"},
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
                json!({"phase": "Bound", "capacity": {"storage": "-1Gi"}, "allocatedResourceStatuses": {"storage": "Resizing"}}),
                "PersistentVolumeClaim \"claim\" is invalid: [resourceVersion: Required value, status.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity, status.allocatedResourceStatus: Unsupported value: \"storage\": supported values: \"ControllerResizeInProgress\", \"ControllerResizeInfeasible\", \"NodeResizeInProgress\", \"NodeResizeInfeasible\", \"NodeResizePending\"]".into(),
            )
        },
        StatusCase {
            unconditional: true,
            ..case(
                "/api/v1/persistentvolumes",
                json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
                       "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}}),
                json!({"phase": "Available"}),
                "PersistentVolume \"pv1\" is invalid: resourceVersion: Required value".into(),
            )
        },
        case(
            "/api/v1/namespaces/default/resourcequotas",
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "rq"}, "spec": {"hard": {"pods": "10"}}}),
            json!({"hard": {"pods": "10"}, "used": {"cpu": "-1"}}),
            "ResourceQuota \"rq\" is invalid: status.used[cpu]: Invalid value: \"-1\": must be greater than or equal to 0".into(),
        ),
        case(
            "/api/v1/namespaces/default/services",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "internal"},
                   "spec": {"ports": [{"port": 80}], "selector": {"app": "a"}}}),
            json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}),
            "Service \"internal\" is invalid: status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'".into(),
        ),
        StatusCase {
            causes: Some(vec![
                ("status.loadBalancer.ingress[0].ip", "FieldValueInvalid"),
                ("status.loadBalancer.ingress[0].ipMode", "FieldValueNotSupported"),
                ("status.loadBalancer.ingress[1].hostname", "FieldValueInvalid"),
                ("status.loadBalancer.ingress[2].ipMode", "FieldValueForbidden"),
            ]),
            ..case(
                "/api/v1/namespaces/default/services",
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
                       "spec": {"type": "LoadBalancer", "ports": [{"port": 80}], "selector": {"app": "a"}}}),
                json!({"loadBalancer": {"ingress": [{"ip": "nope", "ipMode": "Direct"}, {"hostname": "203.0.113.7"}, {"ipMode": "VIP"}]}}),
                format!("Service \"lb\" is invalid: [status.loadBalancer.ingress[0].ip: Invalid value: \"nope\": {BAD_IP}, status.loadBalancer.ingress[0].ipMode: Unsupported value: \"Direct\": supported values: \"Proxy\", \"VIP\", status.loadBalancer.ingress[1].hostname: Invalid value: \"203.0.113.7\": must be a DNS name, not an IP address, status.loadBalancer.ingress[2].ipMode: Forbidden: may not be specified when `ip` is not set]"),
            )
        },
        StatusCase {
            causes: Some(vec![
                ("status.conditions[0].Type", "FieldValueInvalid"),
                ("status.nominatedNodeName", "FieldValueInvalid"),
                ("status.qosClass", "FieldValueInvalid"),
                ("status.podIPs", "FieldValueInvalid"),
                ("status.hostIPs[0].ip", "FieldValueInvalid"),
                ("status.hostIPs[0]", "FieldValueInvalid"),
            ]),
            ..case(
                "/api/v1/namespaces/default/pods",
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": container()}}),
                json!({"phase": "Running", "qosClass": "Guaranteed", "nominatedNodeName": "Bad_Node",
                       "conditions": [{"type": "bad type!", "status": "True"}, {"type": "Ready", "status": "True"}],
                       "podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
                       "hostIP": "10.1.0.1", "hostIPs": [{"ip": "nope"}]}),
                format!("Pod \"p\" is invalid: [status.conditions[0].Type: Invalid value: \"bad type!\": {QNAME}, status.nominatedNodeName: Invalid value: \"Bad_Node\": {SUB}, status.qosClass: Invalid value: \"Guaranteed\": field is immutable, status.podIPs: Invalid value: []core.PodIP{{core.PodIP{{IP:\"10.0.0.1\"}}, core.PodIP{{IP:\"10.0.0.2\"}}}}: may specify no more than one IP for each IP family, status.hostIPs[0].ip: Invalid value: \"nope\": must be equal to `hostIP`, status.hostIPs[0]: Invalid value: \"nope\": {BAD_IP}]"),
            )
        },
        case(
            "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "hpa"},
                   "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}}),
            json!({"currentReplicas": -1, "desiredReplicas": -2}),
            "HorizontalPodAutoscaler.autoscaling \"hpa\" is invalid: [status.currentReplicas: Invalid value: -1: must be greater than or equal to 0, status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0]".into(),
        ),
        case(
            "/apis/batch/v1/namespaces/default/jobs",
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "done"}, "spec": {"template": job_template.clone()}}),
            json!({"conditions": [{"type": "Complete", "status": "True"}], "uncountedTerminatedPods": {"succeeded": ["a", "a", ""]}}),
            "Job.batch \"done\" is invalid: [status.uncountedTerminatedPods.succeeded[1]: Duplicate value: \"a\", status.uncountedTerminatedPods.succeeded[2]: Invalid value: \"\": must not be empty, status.completionTime: Required value: completionTime is required for Complete jobs, status.startTime: Required value: startTime is required for finished job, status.uncountedTerminatedPods: Invalid value: batch.UncountedTerminatedPods{Succeeded:[]types.UID{\"a\", \"a\", \"\"}, Failed:[]types.UID(nil)}: uncountedTerminatedPods needs to be empty for finished job]".into(),
        ),
        case(
            "/apis/batch/v1/namespaces/default/jobs",
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "indexed"},
                   "spec": {"completionMode": "Indexed", "completions": 3, "parallelism": 3, "template": job_template.clone()}}),
            json!({"completedIndexes": "0,5", "failedIndexes": "1"}),
            "Job.batch \"indexed\" is invalid: [status.completedIndexes: Invalid value: \"0,5\": error parsing completedIndexes: too large index: \"5\", status.failedIndexes: Invalid value: \"1\": cannot set non-null failedIndexes when backoffLimitPerIndex is null]".into(),
        ),
        case(
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": "fs"},
                   "spec": {"priorityLevelConfiguration": {"name": "global-default"}}}),
            json!({"conditions": [{"type": ""}, {"type": "Dangling"}, {"type": "Dangling"}]}),
            "FlowSchema.flowcontrol.apiserver.k8s.io \"fs\" is invalid: [status.conditions[0].type: Required value: must not be empty, status.conditions[2].type: Duplicate value: \"Dangling\"]".into(),
        ),
        case(
            "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration", "metadata": {"name": "plc"},
                   "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}}),
            json!({"conditions": [{"type": "A"}, {"type": "A"}]}),
            "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"plc\" is invalid: status.conditions[1].type: Duplicate value: \"A\"".into(),
        ),
        case(
            "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "ing"},
                   "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}}),
            json!({"loadBalancer": {"ingress": [{"ip": "nope"}, {"hostname": "Bad_Host"}]}}),
            format!("Ingress.networking.k8s.io \"ing\" is invalid: [status.loadBalancer.ingress[0].ip: Invalid value: \"nope\": {BAD_IP}, status.loadBalancer.ingress[1].hostname: Invalid value: \"Bad_Host\": {SUB}]"),
        ),
        StatusCase {
            causes: Some(vec![
                ("status.conditions[0].type", "FieldValueInvalid"),
                ("status.conditions[0].status", "FieldValueNotSupported"),
                ("status.conditions[0].lastTransitionTime", "FieldValueRequired"),
                ("status.conditions[0].reason", "FieldValueRequired"),
                ("status.conditions[1].reason", "FieldValueInvalid"),
                ("status.disruptionsAllowed", "FieldValueInvalid"),
            ]),
            ..case(
                "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
                json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
                       "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}}}),
                json!({"disruptionsAllowed": -1, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0, "conditions": [
                    {"type": "bad type", "status": "Maybe"},
                    {"type": "DisruptionAllowed", "status": "True", "reason": "not:", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}),
                format!("PodDisruptionBudget.policy \"pdb\" is invalid: [status.conditions[0].type: Invalid value: \"bad type\": {QNAME}, status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\", status.conditions[0].lastTransitionTime: Required value: must be set, status.conditions[0].reason: Required value: must be set, status.conditions[1].reason: Invalid value: \"not:\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?'), status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0]"),
            )
        },
        case(
            "/apis/storage.k8s.io/v1/volumeattachments",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
                   "spec": {"attacher": "csi.example.com", "source": {"persistentVolumeName": "pv1"}, "nodeName": "node-1"}}),
            json!({"attached": false, "attachError": {"message": "x".repeat(1025)}}),
            "VolumeAttachment.storage.k8s.io \"va\" is invalid: status.attachError.message: Too long: may not be more than 262144 bytes".into(),
        ),
        case(
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "vap"},
                   "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]},
                            "validations": [{"expression": "true"}]}}),
            json!({"typeChecking": {"expressionWarnings": [{"fieldRef": " ", "warning": ""}]}}),
            "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"vap\" is invalid: [status.typeChecking.expressionWarnings[0].warning: Required value, status.typeChecking.expressionWarnings[0].fieldRef: Required value]".into(),
        ),
        case(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            widgets(),
            json!({"storedVersions": ["v1"], "acceptedNames": {"plural": "Widgets", "kind": "Widget", "listKind": "Widget"}}),
            format!("CustomResourceDefinition.apiextensions.k8s.io \"widgets.example.com\" is invalid: [status.acceptedNames.plural: Invalid value: \"Widgets\": {DNS1035}, status.acceptedNames.listKind: Invalid value: \"Widget\": kind and listKind may not be the same]"),
        ),
    ]
}

fn widgets() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                                  "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
}

async fn create(s: &Server, c: &reqwest::Client, collection: &str, body: Value) -> Value {
    let r = s.json(c, Method::POST, collection, Some(body)).await;
    assert_eq!(r.code, StatusCode::CREATED, "{collection}: {}", r.body);
    r.body
}

/// PUT of `obj` with `status` to its status subresource.
async fn put_status(
    s: &Server,
    c: &reqwest::Client,
    collection: &str,
    mut obj: Value,
    status: Value,
) -> Reply {
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    obj["status"] = status;
    s.json(
        c,
        Method::PUT,
        &format!("{collection}/{name}/status"),
        Some(obj),
    )
    .await
}

fn causes(r: &Reply) -> Vec<(String, String)> {
    r.body["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["field"].as_str().unwrap_or("").to_string(),
                c["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn status_writes_are_refused_by_the_status_rules() {
    let s = Server::start();
    let c = s.client();
    let mut failures = Vec::new();
    for case in cases() {
        let mut obj = create(&s, &c, case.collection, case.body.clone()).await;
        let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
        // A PUT without resourceVersion, or a merge patch (which a controller's concurrent
        // status write cannot make stale).
        let r = if case.unconditional {
            if let Some(m) = obj["metadata"].as_object_mut() {
                m.remove("resourceVersion");
            }
            put_status(&s, &c, case.collection, obj, case.status.clone()).await
        } else {
            let path = format!("{}/{name}/status", case.collection);
            s.json(
                &c,
                Method::PATCH,
                &path,
                Some(json!({"status": case.status})),
            )
            .await
        };
        let got = (
            r.code.as_u16(),
            r.body["message"].as_str().unwrap_or("").to_string(),
        );
        if got != (422, case.message.clone()) {
            failures.push(format!(
                "{}:\n  got  {got:?}\n  want {:?}",
                case.collection, case.message
            ));
            continue;
        }
        assert_eq!(r.body["reason"], "Invalid");
        if let Some(want) = &case.causes {
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(f, r)| (f.to_string(), r.to_string()))
                .collect();
            if causes(&r) != want {
                failures.push(format!(
                    "{} causes: got {:?}, want {want:?}",
                    case.collection,
                    causes(&r)
                ));
            }
        }
        // Nothing was stored.
        let now = s
            .json(
                &c,
                Method::GET,
                &format!("{}/{name}", case.collection),
                None,
            )
            .await;
        assert_ne!(
            now.body["status"], case.status,
            "{name} took the refused status"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What a status rule compares with the stored status: counters that only grow, states
/// that may not be left.
#[tokio::test]
async fn status_rules_compare_with_the_stored_status() {
    let s = Server::start();
    let c = s.client();

    // A Deployment's collisionCount is never lowered.
    let d = create(
        &s,
        &c,
        &format!("{APPS}/deployments"),
        deployment(
            "coll",
            json!({"matchLabels": {"app": "a"}}),
            labels_template("a"),
        ),
    )
    .await;
    let r = put_status(
        &s,
        &c,
        &format!("{APPS}/deployments"),
        d,
        json!({"collisionCount": 2}),
    )
    .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let r = put_status(
        &s,
        &c,
        &format!("{APPS}/deployments"),
        r.body,
        json!({"collisionCount": 1}),
    )
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Deployment.apps \"coll\" is invalid: status.collisionCount: Invalid value: 1: cannot be decremented"
    );

    // A pod that never restarts keeps its terminated containers terminated.
    let pods = format!("{NS}/pods");
    let p = create(
        &s,
        &c,
        &pods,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "once"},
               "spec": {"restartPolicy": "Never", "containers": container()}}),
    )
    .await;
    let done = json!({"phase": "Succeeded", "containerStatuses": [{"name": "c", "ready": false, "restartCount": 0,
        "image": "registry.local/app:1", "imageID": "", "state": {"terminated": {"exitCode": 0}}}]});
    let r = put_status(&s, &c, &pods, p, done).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["status"]["qosClass"], "BestEffort",
        "the QoS class is kept"
    );
    let running = json!({"phase": "Running", "containerStatuses": [{"name": "c", "ready": true, "restartCount": 1,
        "image": "registry.local/app:1", "imageID": "", "state": {"running": {}}}]});
    let r = put_status(&s, &c, &pods, r.body, running).await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Pod \"once\" is invalid: status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state"
    );

    // A Job's failed counter only grows, and a terminal condition stays.
    let jobs = "/apis/batch/v1/namespaces/default/jobs";
    let j = create(
        &s,
        &c,
        jobs,
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "counted"},
               "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": container()}}}}),
    )
    .await;
    let failed = json!({"failed": 2, "startTime": "2025-01-01T00:00:00Z",
        "conditions": [{"type": "FailureTarget", "status": "True"}]});
    let r = put_status(&s, &c, jobs, j, failed).await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let r = put_status(
        &s,
        &c,
        jobs,
        r.body,
        json!({"failed": 1, "startTime": "2025-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Job.batch \"counted\" is invalid: [status.conditions: Invalid value: cannot disable the terminal FailureTarget=True condition, status.failed: Invalid value: 1: cannot decrease the failed counter]"
    );
}

/// A status write is not checked by the object's own rules, and a kind whose status
/// strategy says nothing takes any status (kube's ServiceCIDR and CronJob status rules check
/// only the metadata).
#[tokio::test]
async fn status_writes_skip_the_object_rules() {
    let s = Server::start();
    let c = s.client();

    // The storage version migrator drops a version from status.storedVersions through
    // /status; an update of the definition itself may not list one missing from its spec.
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    create(&s, &c, crds, widgets()).await;
    // Wait for the establishing controller's status write, so the update below is not a
    // conflict with it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let crd = loop {
        let r = s
            .json(
                &c,
                Method::GET,
                &format!("{crds}/widgets.example.com"),
                None,
            )
            .await;
        let established = r.body["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        if established {
            break r.body;
        }
        assert!(std::time::Instant::now() < deadline, "never established");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let mut spec_write = crd.clone();
    spec_write["status"]["storedVersions"] = json!(["v1", "v1alpha1"]);
    let r = s
        .json(
            &c,
            Method::PUT,
            &format!("{crds}/widgets.example.com"),
            Some(spec_write),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["status"]["storedVersions"],
        json!(["v1"]),
        "an update keeps the status"
    );
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{crds}/widgets.example.com/status"),
            Some(json!({"status": {"storedVersions": ["v1", "v1alpha1"]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["status"]["storedVersions"],
        json!(["v1", "v1alpha1"])
    );

    // A valid status passes: a load balancer's ingress IP is a VIP unless it says.
    let svcs = format!("{NS}/services");
    let svc = create(
        &s,
        &c,
        &svcs,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "edge"},
               "spec": {"type": "LoadBalancer", "ports": [{"port": 80}], "selector": {"app": "a"}}}),
    )
    .await;
    let r = put_status(
        &s,
        &c,
        &svcs,
        svc,
        json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}),
    )
    .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["status"]["loadBalancer"]["ingress"][0]["ipMode"],
        "VIP"
    );

    // Deployment counters that hold together pass, with the spec kept.
    let d = create(
        &s,
        &c,
        &format!("{APPS}/deployments"),
        deployment(
            "ok",
            json!({"matchLabels": {"app": "a"}}),
            labels_template("a"),
        ),
    )
    .await;
    let mut sent = d.clone();
    sent["spec"]["replicas"] = json!(-5);
    let r = put_status(
        &s,
        &c,
        &format!("{APPS}/deployments"),
        sent,
        json!({"replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1}),
    )
    .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["spec"]["replicas"], d["spec"]["replicas"]);
    assert_eq!(r.body["status"]["availableReplicas"], 1);

    // Fields of feature gates that are off in v1.33 are dropped from a status write.
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{APPS}/deployments/ok/status"),
            Some(json!({"status": {"terminatingReplicas": 3}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert!(
        r.body["status"].get("terminatingReplicas").is_none(),
        "{}",
        r.body
    );
    let vas = "/apis/storage.k8s.io/v1/volumeattachments";
    create(
        &s,
        &c,
        vas,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va2"},
               "spec": {"attacher": "csi.example.com", "source": {"persistentVolumeName": "pv1"}, "nodeName": "node-1"}}),
    )
    .await;
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{vas}/va2/status"),
            Some(json!({"status": {"attachError": {"message": "busy", "errorCode": -1}}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["status"]["attachError"]["message"], "busy");
    assert!(
        r.body["status"]["attachError"].get("errorCode").is_none(),
        "{}",
        r.body
    );

    // A volume's lastPhaseTransitionTime stays with its phase, and is set when it changes.
    let pvs = "/api/v1/persistentvolumes";
    let pv = create(
        &s,
        &c,
        pvs,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv2"},
               "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}}),
    )
    .await;
    let since = pv["status"]["lastPhaseTransitionTime"].clone();
    assert!(since.is_string(), "{pv}");
    let clear = json!({"status": {"lastPhaseTransitionTime": null}});
    let r = s
        .json(&c, Method::PATCH, &format!("{pvs}/pv2/status"), Some(clear))
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["status"]["lastPhaseTransitionTime"], since);
    let bound = json!({"status": {"phase": "Available", "lastPhaseTransitionTime": null}});
    let r = s
        .json(&c, Method::PATCH, &format!("{pvs}/pv2/status"), Some(bound))
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert!(
        r.body["status"]["lastPhaseTransitionTime"].is_string(),
        "{}",
        r.body
    );

    // No status rules: anything the metadata allows.
    let cidrs = "/apis/networking.k8s.io/v1/servicecidrs";
    let cidr = create(
        &s,
        &c,
        cidrs,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": "extra"},
               "spec": {"cidrs": ["10.250.0.0/24"]}}),
    )
    .await;
    let r = put_status(
        &s,
        &c,
        cidrs,
        cidr,
        json!({"conditions": [{"type": "Ready", "status": "Maybe"}]}),
    )
    .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let cronjobs = "/apis/batch/v1/namespaces/default/cronjobs";
    let cj = create(
        &s,
        &c,
        cronjobs,
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
               "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                   "restartPolicy": "Never", "containers": container()}}}}}}),
    )
    .await;
    let r = put_status(
        &s,
        &c,
        cronjobs,
        cj,
        json!({"lastScheduleTime": "2025-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
}
