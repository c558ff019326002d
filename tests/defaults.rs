//! The defaults controllers rely on: workload objects created minimal over HTTPS and read
//! back with kube-apiserver v1.33's defaults (SetDefaults_* and the strategies' create rules).

mod support;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

fn container() -> Value {
    json!({"name": "c", "image": "registry.local/app"})
}

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "x"}},
           "spec": {"containers": [container()], "volumes": [{"name": "scratch"}]}})
}

/// The pod spec defaults of a template: what every workload's template reads back as.
fn check_pod_spec(what: &str, spec: &Value) {
    assert_eq!(spec["restartPolicy"], "Always", "{what}");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst", "{what}");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30, "{what}");
    assert_eq!(spec["schedulerName"], "default-scheduler", "{what}");
    assert_eq!(spec["securityContext"], json!({}), "{what}");
    assert_eq!(
        spec["volumes"],
        json!([{"name": "scratch", "emptyDir": {}}]),
        "{what}"
    );
    let c = &spec["containers"][0];
    assert_eq!(
        c["terminationMessagePath"], "/dev/termination-log",
        "{what}"
    );
    assert_eq!(c["terminationMessagePolicy"], "File", "{what}");
    assert_eq!(c["imagePullPolicy"], "Always", "{what}: untagged image");
    assert_eq!(c["resources"], json!({}), "{what}");
}

async fn create(s: &Server, c: &reqwest::Client, path: &str, body: Value) -> Value {
    let r = s.json(c, Method::POST, path, Some(body)).await;
    assert_eq!(r.code, StatusCode::CREATED, "{path}: {}", r.body);
    // Read back, as a controller's informer would see it.
    let name = r.body["metadata"]["name"].as_str().unwrap().to_string();
    let got = s
        .json(c, Method::GET, &format!("{path}/{name}"), None)
        .await;
    assert_eq!(got.code, StatusCode::OK);
    got.body
}

#[tokio::test]
async fn workloads_read_back_with_kube_defaults() {
    let s = Server::start();
    let c = s.client();
    let ns = "/api/v1/namespaces/default";
    let apps = "/apis/apps/v1/namespaces/default";
    let batch = "/apis/batch/v1/namespaces/default";

    // ReplicationController without a selector: selector and labels from the template.
    let rc = create(
        &s,
        &c,
        &format!("{ns}/replicationcontrollers"),
        json!({"metadata": {"name": "rc"}, "spec": {"template": template()}}),
    )
    .await;
    assert_eq!(rc["spec"]["selector"], json!({"app": "x"}), "{rc}");
    assert_eq!(rc["metadata"]["labels"], json!({"app": "x"}));
    assert_eq!(rc["spec"]["replicas"], 1);
    check_pod_spec("rc", &rc["spec"]["template"]["spec"]);
    // A given selector and labels are kept.
    let rc2 = create(
        &s,
        &c,
        &format!("{ns}/replicationcontrollers"),
        json!({"metadata": {"name": "rc2", "labels": {"own": "yes"}},
               "spec": {"selector": {"app": "x"}, "replicas": 0, "template": template()}}),
    )
    .await;
    assert_eq!(rc2["metadata"]["labels"], json!({"own": "yes"}));
    assert_eq!(rc2["spec"]["replicas"], 0);

    let rs = create(&s, &c, &format!("{apps}/replicasets"),
        json!({"metadata": {"name": "rs"}, "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template()}})).await;
    assert_eq!(rs["spec"]["replicas"], 1);
    check_pod_spec("replicaset", &rs["spec"]["template"]["spec"]);

    let d = create(&s, &c, &format!("{apps}/deployments"),
        json!({"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template()}})).await;
    assert_eq!(d["spec"]["replicas"], 1);
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
    assert_eq!(
        d["spec"]["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    check_pod_spec("deployment", &d["spec"]["template"]["spec"]);

    let sts = create(&s, &c, &format!("{apps}/statefulsets"),
        json!({"metadata": {"name": "sts"}, "spec": {"serviceName": "sts", "selector": {"matchLabels": {"app": "x"}}, "template": template()}})).await;
    assert_eq!(sts["spec"]["replicas"], 1);
    assert_eq!(sts["spec"]["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        sts["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(sts["spec"]["revisionHistoryLimit"], 10);
    check_pod_spec("statefulset", &sts["spec"]["template"]["spec"]);

    let ds = create(&s, &c, &format!("{apps}/daemonsets"),
        json!({"metadata": {"name": "ds"}, "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template()}})).await;
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(ds["spec"]["revisionHistoryLimit"], 10);
    check_pod_spec("daemonset", &ds["spec"]["template"]["spec"]);

    // Job: generated selector and labels (controller-uid), counts and policies.
    let job = create(&s, &c, &format!("{batch}/jobs"),
        json!({"metadata": {"name": "job"}, "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container()]}}}})).await;
    let uid = job["metadata"]["uid"].as_str().unwrap();
    let spec = &job["spec"];
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    let want_labels = json!({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "job",
        "controller-uid": uid, "job-name": "job"});
    assert_eq!(spec["template"]["metadata"]["labels"], want_labels);
    assert_eq!(job["metadata"]["labels"], want_labels);
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    // parallelism alone leaves completions unset; a manual selector is left alone.
    let job2 = create(&s, &c, &format!("{batch}/jobs"),
        json!({"metadata": {"name": "job2"}, "spec": {"parallelism": 3, "manualSelector": true,
               "selector": {"matchLabels": {"app": "x"}},
               "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"restartPolicy": "Never", "containers": [container()]}}}})).await;
    assert!(job2["spec"].get("completions").is_none(), "{job2}");
    assert_eq!(
        job2["spec"]["selector"],
        json!({"matchLabels": {"app": "x"}})
    );
    assert_eq!(
        job2["spec"]["template"]["metadata"]["labels"],
        json!({"app": "x"})
    );

    let cj = create(&s, &c, &format!("{batch}/cronjobs"),
        json!({"metadata": {"name": "cj"}, "spec": {"schedule": "*/5 * * * *",
               "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [container()]}}}}}})).await;
    assert_eq!(cj["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(cj["spec"]["suspend"], false);
    assert_eq!(cj["spec"]["successfulJobsHistoryLimit"], 3);
    assert_eq!(cj["spec"]["failedJobsHistoryLimit"], 1);
    assert!(
        cj["spec"]["jobTemplate"]["spec"]
            .get("backoffLimit")
            .is_none(),
        "{cj}"
    );
    assert_eq!(
        cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
        "ClusterFirst"
    );

    let pt = create(
        &s,
        &c,
        &format!("{ns}/podtemplates"),
        json!({"metadata": {"name": "pt"}, "template": template()}),
    )
    .await;
    check_pod_spec("podtemplate", &pt["template"]["spec"]);

    // Pod basics.
    let pod = create(&s, &c, &format!("{ns}/pods"),
        json!({"metadata": {"name": "p"}, "spec": {
            "containers": [{"name": "c", "image": "nginx:1.27",
                            "resources": {"limits": {"cpu": "1"}},
                            "ports": [{"containerPort": 80}],
                            "readinessProbe": {"httpGet": {"port": 80}},
                            "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}],
            "volumes": [{"name": "scratch"}, {"name": "cfg", "configMap": {"name": "cfg"}}]}})).await;
    let spec = &pod["spec"];
    assert_eq!(spec["enableServiceLinks"], true);
    let c0 = &spec["containers"][0];
    assert_eq!(c0["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        c0["resources"]["requests"],
        json!({"cpu": "1"}),
        "requests from limits"
    );
    assert_eq!(c0["ports"][0]["protocol"], "TCP");
    assert_eq!(
        c0["readinessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(c0["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    // (then the ServiceAccount plugin's token volume)
    assert_eq!(
        json!(spec["volumes"].as_array().unwrap()[..2]),
        json!([{"name": "scratch", "emptyDir": {}},
        {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}}])
    );
    assert_eq!(pod["status"]["phase"], "Pending");

    // ObjectMeta's collections are omitempty: empty ones are not stored (a GC patch that
    // removes the last owner reference leaves no `ownerReferences: []`).
    let cm = create(&s, &c, &format!("{ns}/configmaps"),
        json!({"metadata": {"name": "empty-meta", "labels": {}, "annotations": {}, "ownerReferences": [], "finalizers": []}})).await;
    for f in ["labels", "annotations", "ownerReferences", "finalizers"] {
        assert!(cm["metadata"].get(f).is_none(), "{f}: {cm}");
    }
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{ns}/configmaps/empty-meta"),
            Some(json!({"metadata": {"labels": {"a": "b"}, "ownerReferences": []}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK);
    assert!(
        r.body["metadata"].get("ownerReferences").is_none(),
        "{}",
        r.body
    );
    assert_eq!(r.body["metadata"]["labels"], json!({"a": "b"}));

    // Service.
    let svc = create(&s, &c, &format!("{ns}/services"),
        json!({"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}], "selector": {"app": "x"}}})).await;
    assert_eq!(svc["spec"]["type"], "ClusterIP");
    assert_eq!(svc["spec"]["sessionAffinity"], "None");
    assert_eq!(svc["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 80);
    let np = create(&s, &c, &format!("{ns}/services"),
        json!({"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": "http"}]}})).await;
    assert_eq!(np["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(np["spec"]["ports"][0]["targetPort"], "http");
}

/// The system namespaces come back when someone deletes one (within a minute; here seconds).
#[tokio::test]
async fn system_namespaces_are_recreated() {
    let s = Server::start();
    let c = s.client();
    let r = s
        .json(
            &c,
            Method::DELETE,
            "/api/v1/namespaces/kube-node-lease",
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut gone_once = false;
    loop {
        let r = s
            .json(&c, Method::GET, "/api/v1/namespaces/kube-node-lease", None)
            .await;
        if r.code == StatusCode::NOT_FOUND {
            gone_once = true;
        } else if gone_once && r.body["status"]["phase"] == "Active" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "kube-node-lease not re-created: {}",
            r.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// HorizontalPodAutoscalers are stored as autoscaling/v2 and served as v1 by conversion, as
/// kube's: a v1 object without a target gets v2's CPU 80% metric, metrics v1 cannot express
/// travel in the `autoscaling.alpha.kubernetes.io/metrics` annotation, and a patch through v1
/// keeps them.
#[tokio::test]
async fn hpa_v1_and_v2_convert() {
    let s = Server::start();
    let c = s.client();
    let v1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
    let v2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
    let target = json!({"kind": "Deployment", "name": "d", "apiVersion": "apps/v1"});

    let r = s
        .json(
            &c,
            Method::POST,
            v1,
            Some(json!({"apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler", "metadata": {"name": "a"},
            "spec": {"scaleTargetRef": target, "maxReplicas": 3}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["apiVersion"], "autoscaling/v1");
    assert_eq!(
        r.body["spec"]["targetCPUUtilizationPercentage"], 80,
        "{}",
        r.body
    );
    assert_eq!(
        r.body["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
    let a2 = s.json(&c, Method::GET, &format!("{v2}/a"), None).await.body;
    assert_eq!(a2["apiVersion"], "autoscaling/v2");
    assert_eq!(a2["spec"]["minReplicas"], 1);
    assert_eq!(
        a2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert!(a2["spec"].get("targetCPUUtilizationPercentage").is_none());
    assert_eq!(
        a2["status"],
        json!({"currentMetrics": null, "desiredReplicas": 0})
    );

    let r = s
        .json(
            &c,
            Method::POST,
            v2,
            Some(json!({"apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler", "metadata": {"name": "b"},
            "spec": {"scaleTargetRef": target, "maxReplicas": 4, "metrics": [
                {"type": "Resource", "resource": {"name": "memory",
                    "target": {"type": "Utilization", "averageUtilization": 60}}},
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50}}}]}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let b1 = s.json(&c, Method::GET, &format!("{v1}/b"), None).await.body;
    assert_eq!(b1["spec"]["targetCPUUtilizationPercentage"], 50, "{b1}");
    assert_eq!(
        b1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"],
        r#"[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":60}}]"#
    );
    let list = s.json(&c, Method::GET, v1, None).await.body;
    assert_eq!(list["apiVersion"], "autoscaling/v1");
    assert_eq!(
        list["items"][1]["spec"]["targetCPUUtilizationPercentage"],
        50
    );

    // A merge patch through v1 changes the CPU target and keeps the memory metric.
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{v1}/b"),
            Some(json!({"spec": {"targetCPUUtilizationPercentage": 40}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let b2 = s.json(&c, Method::GET, &format!("{v2}/b"), None).await.body;
    let metrics = b2["spec"]["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 2, "{b2}");
    assert_eq!(metrics[0]["resource"]["name"], "memory");
    assert_eq!(metrics[1]["resource"]["target"]["averageUtilization"], 40);
    assert!(b2["metadata"].get("annotations").is_none(), "{b2}");
}

#[tokio::test]
async fn storage_and_discovery_kinds_read_back_with_kube_defaults() {
    let s = Server::start();
    let c = s.client();
    let storage = "/apis/storage.k8s.io/v1";

    // SetDefaults_StorageClass.
    let sc = create(
        &s,
        &c,
        &format!("{storage}/storageclasses"),
        json!({"metadata": {"name": "sc"}, "provisioner": "example.com/x"}),
    )
    .await;
    assert_eq!(sc["reclaimPolicy"], "Delete");
    assert_eq!(sc["volumeBindingMode"], "Immediate");

    // SetDefaults_PersistentVolume; a new volume is Pending since its creation.
    let pv = create(
        &s,
        &c,
        "/api/v1/persistentvolumes",
        json!({"metadata": {"name": "pv"}, "spec": {"accessModes": ["ReadWriteOnce"],
               "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/data"}}}),
    )
    .await;
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pv["spec"]["hostPath"]["type"], "");
    assert_eq!(pv["status"]["phase"], "Pending");
    assert_eq!(
        pv["status"]["lastPhaseTransitionTime"],
        pv["metadata"]["creationTimestamp"]
    );

    // SetDefaults_CSIDriver (SELinuxMountReadWriteOncePod is on in 1.33).
    let d = create(
        &s,
        &c,
        &format!("{storage}/csidrivers"),
        json!({"metadata": {"name": "csi.example.com"}, "spec": {}}),
    )
    .await;
    assert_eq!(
        d["spec"],
        json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
               "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
               "requiresRepublish": false, "seLinuxMount": false})
    );

    // SetDefaults_EndpointPort.
    let es = create(
        &s,
        &c,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
        json!({"metadata": {"name": "es"}, "addressType": "IPv4",
               "endpoints": [{"addresses": ["10.0.0.1"]}], "ports": [{"port": 80}]}),
    )
    .await;
    assert_eq!(
        es["ports"],
        json!([{"name": "", "port": 80, "protocol": "TCP"}])
    );
}

#[tokio::test]
async fn admission_and_flowcontrol_objects_read_back_with_kube_defaults() {
    // Without priority and fairness nothing creates the mandatory `exempt` level first.
    let s = Server::start_with(&["--enable-priority-and-fairness=false"]);
    let c = s.client();
    let adm = "/apis/admissionregistration.k8s.io/v1";

    // Webhooks: SetDefaults_{Validating,Mutating}Webhook, SetDefaults_Rule and
    // SetDefaults_ServiceReference.
    let hook = json!({"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
        "clientConfig": {"service": {"namespace": "default", "name": "hook"}}});
    for (resource, mutating) in [
        ("validatingwebhookconfigurations", false),
        ("mutatingwebhookconfigurations", true),
    ] {
        let got = create(
            &s,
            &c,
            &format!("{adm}/{resource}"),
            json!({"metadata": {"name": "hooks"}, "webhooks": [hook.clone()]}),
        )
        .await;
        let w = &got["webhooks"][0];
        assert_eq!(w["failurePolicy"], "Fail", "{resource}");
        assert_eq!(w["matchPolicy"], "Equivalent");
        assert_eq!(w["namespaceSelector"], json!({}));
        assert_eq!(w["objectSelector"], json!({}));
        assert_eq!(w["timeoutSeconds"], 10);
        assert_eq!(w["rules"][0]["scope"], "*");
        assert_eq!(w["clientConfig"]["service"]["port"], 443);
        let reinvocation = if mutating {
            json!("Never")
        } else {
            Value::Null
        };
        assert_eq!(w["reinvocationPolicy"], reinvocation, "{resource}");
    }

    // ValidatingAdmissionPolicy: SetDefaults_ValidatingAdmissionPolicySpec and
    // SetDefaults_MatchResources (with SetDefaults_Rule inside).
    let vap = create(
        &s,
        &c,
        &format!("{adm}/validatingadmissionpolicies"),
        json!({"metadata": {"name": "vap"}, "spec": {"validations": [{"expression": "true"}],
               "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""],
                                                       "apiVersions": ["v1"], "resources": ["pods"]}]}}}),
    )
    .await;
    assert_eq!(vap["spec"]["failurePolicy"], "Fail");
    let m = &vap["spec"]["matchConstraints"];
    assert_eq!(m["matchPolicy"], "Equivalent");
    assert_eq!(m["namespaceSelector"], json!({}));
    assert_eq!(m["objectSelector"], json!({}));
    assert_eq!(m["resourceRules"][0]["scope"], "*");

    // Flow control: SetDefaults_FlowSchemaSpec, SetDefaults_LimitedPriorityLevelConfiguration,
    // SetDefaults_ExemptPriorityLevelConfiguration and SetDefaults_QueuingConfiguration.
    let fc = "/apis/flowcontrol.apiserver.k8s.io/v1";
    let fs = create(
        &s,
        &c,
        &format!("{fc}/flowschemas"),
        json!({"metadata": {"name": "fs"}, "spec": {"priorityLevelConfiguration": {"name": "pl"}}}),
    )
    .await;
    assert_eq!(fs["spec"]["matchingPrecedence"], 1000);
    let pl = create(
        &s,
        &c,
        &format!("{fc}/prioritylevelconfigurations"),
        json!({"metadata": {"name": "pl"}, "spec": {"type": "Limited",
               "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}}),
    )
    .await;
    assert_eq!(
        pl["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
               "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}})
    );
    let ex = create(
        &s,
        &c,
        &format!("{fc}/prioritylevelconfigurations"),
        json!({"metadata": {"name": "exempt"}, "spec": {"type": "Exempt", "exempt": {}}}),
    )
    .await;
    assert_eq!(
        ex["spec"]["exempt"],
        json!({"nominalConcurrencyShares": 0, "lendablePercent": 0})
    );
}

/// Core kinds whose v1 defaults fill fields in: a Container LimitRange item's default limit
/// and request, Endpoints port protocols and a node's allocatable resources.
#[tokio::test]
async fn core_kinds_read_back_with_kube_defaults() {
    let s = Server::start();
    let c = s.client();
    let ns = "/api/v1/namespaces/default";
    let lr = create(
        &s,
        &c,
        &format!("{ns}/limitranges"),
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"},
               "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}},
                                   {"type": "Pod", "max": {"cpu": "4"}}]}}),
    )
    .await;
    let item = &lr["spec"]["limits"][0];
    assert_eq!(item["default"], json!({"cpu": "2"}));
    assert_eq!(
        item["defaultRequest"],
        json!({"cpu": "2", "memory": "64Mi"})
    );
    assert!(lr["spec"]["limits"][1].get("default").is_none());
    // A LimitRange without a name is named with a UUID.
    let unnamed = create(
        &s,
        &c,
        &format!("{ns}/limitranges"),
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {}, "spec": {"limits": []}}),
    )
    .await;
    let name = unnamed["metadata"]["name"].as_str().unwrap();
    assert_eq!((name.len(), name.matches('-').count()), (36, 4), "{name}");

    // SetDefaults_Endpoints: ports are TCP unless said otherwise.
    let ep = create(
        &s,
        &c,
        &format!("{ns}/endpoints"),
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep"},
               "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}]}),
    )
    .await;
    assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP");

    // SetDefaults_NodeStatus: allocatable is the capacity when not reported.
    let node = create(
        &s,
        &c,
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
               "status": {"capacity": {"cpu": "4", "pods": "110"}}}),
    )
    .await;
    assert_eq!(
        node["status"]["allocatable"],
        json!({"cpu": "4", "pods": "110"})
    );
}

/// core/v1 and events.k8s.io/v1 Events are one set of objects, as in kube: each API reads the
/// other's events in its own field names.
#[tokio::test]
async fn events_are_shared_by_both_apis() {
    let s = Server::start();
    let c = s.client();
    let core = "/api/v1/namespaces/default/events";
    let new = "/apis/events.k8s.io/v1/namespaces/default/events";
    let r = s
        .json(
            &c,
            Method::POST,
            core,
            Some(json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "old"}, "involvedObject": {"kind": "Pod", "name": "p",
                "namespace": "default"},
            "reason": "Started", "message": "hello", "count": 2,
            "source": {"component": "kubelet"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["reportingComponent"], "");
    assert_eq!(r.body["firstTimestamp"], Value::Null);
    let e = s.json(&c, Method::GET, &format!("{new}/old"), None).await;
    assert_eq!(e.code, StatusCode::OK, "{}", e.body);
    assert_eq!(e.body["apiVersion"], "events.k8s.io/v1");
    assert_eq!(e.body["regarding"]["name"], "p");
    assert_eq!(e.body["note"], "hello");
    assert_eq!(e.body["deprecatedCount"], 2);
    assert_eq!(e.body["deprecatedSource"], json!({"component": "kubelet"}));
    assert!(e.body.get("involvedObject").is_none(), "{}", e.body);

    let r = s
        .json(
            &c,
            Method::POST,
            new,
            Some(json!({"apiVersion": "events.k8s.io/v1",
            "kind": "Event", "metadata": {"name": "newer"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "x.io/ctl",
            "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}, "note": "done"})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["note"], "done");
    let e = s
        .json(&c, Method::GET, &format!("{core}/newer"), None)
        .await;
    assert_eq!(e.body["involvedObject"]["name"], "p");
    assert_eq!(e.body["message"], "done");
    assert_eq!(e.body["reportingComponent"], "x.io/ctl");
    let list = s.json(&c, Method::GET, new, None).await.body;
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["newer", "old"]);
    assert_eq!(list["items"][1]["note"], "hello");
    // A field selector of the new API names the new fields.
    let sel = s
        .json(
            &c,
            Method::GET,
            &format!("{new}?fieldSelector=reportingController%3Dx.io%2Fctl"),
            None,
        )
        .await
        .body;
    assert_eq!(sel["items"].as_array().map(Vec::len), Some(1), "{sel}");
    // The strict rules of events.k8s.io still apply to its requests.
    let r = s
        .json(
            &c,
            Method::POST,
            new,
            Some(json!({"apiVersion": "events.k8s.io/v1",
            "kind": "Event", "metadata": {"name": "bad"}, "note": "x"})),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
}
