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
    assert_eq!(
        spec["volumes"],
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
