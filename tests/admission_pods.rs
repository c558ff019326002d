//! The pod admission plugins over real HTTPS, one test each: LimitRanger, ServiceAccount
//! (with the `serviceaccount` and `root-ca-cert-publisher` controllers), Priority (and the
//! system PriorityClasses), DefaultTolerationSeconds (and its flags),
//! TaintNodesByCondition and RuntimeClass: what each accepts, refuses (kube's code and
//! message) and changes.

mod support;

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};
use support::Server;

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
}

fn pod_with(name: &str, spec: Value) -> Value {
    let mut p = pod(name);
    for (k, v) in spec.as_object().unwrap() {
        p["spec"][k] = v.clone();
    }
    p
}

const PODS: &str = "/api/v1/namespaces/default/pods";

/// Polls `path` until it answers 200 (bounded); returns the object.
async fn wait_for(s: &Server, c: &reqwest::Client, path: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = s.json(c, Method::GET, path, None).await;
        if r.code.as_u16() == 200 {
            return r.body;
        }
        assert!(
            Instant::now() < deadline,
            "{path} never appeared: {}",
            r.body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn create(s: &Server, c: &reqwest::Client, path: &str, obj: Value) -> Value {
    let r = s.json(c, Method::POST, path, Some(obj)).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    r.body
}

async fn refused(s: &Server, c: &reqwest::Client, path: &str, obj: Value, message: &str) {
    let r = s.json(c, Method::POST, path, Some(obj)).await;
    assert_eq!(r.code.as_u16(), 403, "{}", r.body);
    assert_eq!(r.body["reason"], "Forbidden");
    assert_eq!(r.body["message"], message);
}

#[tokio::test]
async fn limit_ranger_defaults_and_bounds() {
    let s = Server::start();
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    create(
        &s,
        &c,
        "/api/v1/namespaces/default/limitranges",
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"}, "spec": {"limits": [
            {"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"},
             "default": {"cpu": "200m", "memory": "512Mi"}, "defaultRequest": {"cpu": "150m"},
             "maxLimitRequestRatio": {"cpu": "4"}},
            {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "2Gi"}},
        ]}}),
    )
    .await;
    // defaults: requests and limits, the annotation, the QoS class that follows from them
    let p = create(&s, &c, PODS, pod("plain")).await;
    let res = &p["spec"]["containers"][0]["resources"];
    assert_eq!(
        res["requests"],
        json!({"cpu": "150m", "memory": "512Mi"}),
        "{p}"
    );
    assert_eq!(
        res["limits"],
        json!({"cpu": "200m", "memory": "512Mi"}),
        "{p}"
    );
    assert_eq!(
        p["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c"
    );
    assert_eq!(p["status"]["qosClass"], "Burstable");
    // a container's own values stay
    let p = create(
        &s,
        &c,
        PODS,
        pod_with("own", json!({"containers": [{"name": "c", "image": "busybox",
            "resources": {"requests": {"cpu": "300m"}, "limits": {"cpu": "400m", "memory": "1Gi"}}}]})),
    )
    .await;
    assert_eq!(
        p["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "300m", "memory": "1Gi"})
    );
    assert!(p["metadata"]["annotations"]
        .get("kubernetes.io/limit-ranger")
        .is_none());
    // min, max, ratio
    let with = |name: &str, resources: Value| {
        pod_with(
            name,
            json!({"containers": [{"name": "c", "image": "busybox", "resources": resources}]}),
        )
    };
    refused(
        &s,
        &c,
        PODS,
        with("low", json!({"requests": {"cpu": "50m"}})),
        "pods \"low\" is forbidden: minimum cpu usage per Container is 100m, but request is 50m",
    )
    .await;
    refused(
        &s,
        &c,
        PODS,
        with("big", json!({"limits": {"memory": "2Gi"}})),
        "pods \"big\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi",
    )
    .await;
    refused(
        &s,
        &c,
        PODS,
        with("ratio", json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}})),
        "pods \"ratio\" is forbidden: cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000",
    )
    .await;
    refused(
        &s,
        &c,
        PODS,
        with("two", json!({"requests": {"cpu": "50m"}, "limits": {"cpu": "50m", "memory": "2Gi"}})),
        "pods \"two\" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, maximum memory usage per Container is 1Gi, but limit is 2Gi]",
    )
    .await;
    // claims: min and max of the storage request, on create and update
    let pvc = |name: &str, size: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}})
    };
    const PVCS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";
    refused(
        &s,
        &c,
        PVCS,
        pvc("huge", "3Gi"),
        "persistentvolumeclaims \"huge\" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 3Gi",
    )
    .await;
    refused(
        &s,
        &c,
        PVCS,
        pvc("tiny", "100Mi"),
        "persistentvolumeclaims \"tiny\" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi",
    )
    .await;
    create(&s, &c, PVCS, pvc("fine", "1Gi")).await;
}

#[tokio::test]
async fn service_account_defaults_mounts_and_refuses() {
    let s = Server::start_with(&["--controllers", "*"]);
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    let ca = std::fs::read_to_string(s.dir.path().join("ca.crt")).unwrap();
    let cm = wait_for(
        &s,
        &c,
        "/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
    )
    .await;
    assert_eq!(cm["data"], json!({"ca.crt": ca}));
    // a new namespace gets both at once
    create(
        &s,
        &c,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}}),
    )
    .await;
    create(&s, &c, "/api/v1/namespaces/fresh/pods", pod("first")).await;
    wait_for(
        &s,
        &c,
        "/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt",
    )
    .await;

    // the default account and its projected token
    let p = create(&s, &c, PODS, pod("p")).await;
    assert_eq!(p["spec"]["serviceAccountName"], "default");
    let vols = p["spec"]["volumes"].as_array().unwrap();
    assert_eq!(vols.len(), 1, "{p}");
    let name = vols[0]["name"].as_str().unwrap();
    assert!(
        name.starts_with("kube-api-access-") && name.len() == "kube-api-access-".len() + 5,
        "{name}"
    );
    assert_eq!(
        vols[0]["projected"],
        json!({"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]})
    );
    assert_eq!(
        p["spec"]["containers"][0]["volumeMounts"],
        json!([{"name": name, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
    );
    // no token when the pod says so
    let p = create(
        &s,
        &c,
        PODS,
        pod_with("quiet", json!({"automountServiceAccountToken": false})),
    )
    .await;
    assert!(p["spec"].get("volumes").is_none(), "{p}");
    // nor when the account says so; its pull secrets are copied
    create(
        &s,
        &c,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder"},
               "automountServiceAccountToken": false, "imagePullSecrets": [{"name": "registry"}]}),
    )
    .await;
    let p = create(
        &s,
        &c,
        PODS,
        pod_with("built", json!({"serviceAccountName": "builder"})),
    )
    .await;
    assert!(p["spec"].get("volumes").is_none(), "{p}");
    assert_eq!(p["spec"]["imagePullSecrets"], json!([{"name": "registry"}]));
    // unknown accounts, mirror pods
    refused(
        &s,
        &c,
        PODS,
        pod_with("lost", json!({"serviceAccountName": "nope"})),
        "pods \"lost\" is forbidden: error looking up service account default/nope: serviceaccount \"nope\" not found",
    )
    .await;
    let mut mirror = pod_with("mirror", json!({"serviceAccountName": "default"}));
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
    refused(
        &s,
        &c,
        PODS,
        mirror.clone(),
        "pods \"mirror\" is forbidden: a mirror pod may not reference service accounts",
    )
    .await;
    mirror["spec"]
        .as_object_mut()
        .unwrap()
        .remove("serviceAccountName");
    mirror["spec"]["volumes"] = json!([{"name": "s", "secret": {"secretName": "x"}}]);
    refused(
        &s,
        &c,
        PODS,
        mirror.clone(),
        "pods \"mirror\" is forbidden: a mirror pod may not reference secrets",
    )
    .await;
    mirror["spec"].as_object_mut().unwrap().remove("volumes");
    let p = create(&s, &c, PODS, mirror).await;
    assert!(p["spec"].get("serviceAccountName").is_none(), "{p}");
    assert!(p["spec"].get("volumes").is_none(), "{p}");

    // an account enforcing mountable secrets (kube's deprecation warning): its pods use
    // only the secrets and pull secrets it lists
    let strict = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "strict", "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
        "secrets": [{"name": "ok"}], "imagePullSecrets": [{"name": "pull"}]});
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/serviceaccounts",
            Some(strict),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let warnings: Vec<&str> = r
        .headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(
        warnings,
        ["299 - \"metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets\""]
    );
    let uses = |name: &str, spec: Value| {
        let mut p = pod_with(name, spec);
        p["spec"]["serviceAccountName"] = json!("strict");
        p
    };
    let ok_ref = json!({"name": "ok", "key": "k"});
    let p = create(
        &s,
        &c,
        PODS,
        uses(
            "allowed",
            json!({"volumes": [{"name": "s", "secret": {"secretName": "ok"}}],
                   "containers": [{"name": "c", "image": "busybox",
                       "env": [{"name": "E", "valueFrom": {"secretKeyRef": ok_ref}}],
                       "envFrom": [{"secretRef": {"name": "ok"}}]}]}),
        ),
    )
    .await;
    assert_eq!(p["spec"]["imagePullSecrets"], json!([{"name": "pull"}]));
    let other = json!({"name": "other", "key": "k"});
    for (name, spec, why) in [
        (
            "vol",
            json!({"volumes": [{"name": "s", "secret": {"secretName": "other"}}]}),
            "volume with secret.secretName=\"other\" is not allowed because service account strict does not reference that secret",
        ),
        (
            "init",
            json!({"initContainers": [{"name": "i", "image": "busybox",
                "env": [{"name": "E", "valueFrom": {"secretKeyRef": other}}]}]}),
            "init container i with envVar E referencing secret.secretName=\"other\" is not allowed because service account strict does not reference that secret",
        ),
        (
            "from",
            json!({"containers": [{"name": "c", "image": "busybox", "envFrom": [{"secretRef": {"name": "other"}}]}]}),
            "container c with envFrom referencing secret.secretName=\"other\" is not allowed because service account strict does not reference that secret",
        ),
        (
            "pull",
            json!({"imagePullSecrets": [{"name": "pull"}, {"name": "other"}]}),
            "imagePullSecrets[1].name=\"other\" is not allowed because service account strict does not reference that imagePullSecret",
        ),
    ] {
        refused(
            &s,
            &c,
            PODS,
            uses(name, spec),
            &format!("pods \"{name}\" is forbidden: {why}"),
        )
        .await;
    }
    // "false" (or anything ParseBool does not read as true) enforces nothing
    create(
        &s,
        &c,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "lax", "annotations": {"kubernetes.io/enforce-mountable-secrets": "yes"}}}),
    )
    .await;
    let mut p = uses(
        "lax",
        json!({"volumes": [{"name": "s", "secret": {"secretName": "other"}}]}),
    );
    p["spec"]["serviceAccountName"] = json!("lax");
    create(&s, &c, PODS, p).await;

    // without the controller nothing creates `default`
    let s = Server::start_with(&["--controllers", "*,-serviceaccount"]);
    let c = s.client();
    create(
        &s,
        &c,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bare"}}),
    )
    .await;
    refused(
        &s,
        &c,
        "/api/v1/namespaces/bare/pods",
        pod("p"),
        "pods \"p\" is forbidden: error looking up service account bare/default: serviceaccount \"default\" not found",
    )
    .await;
    // the other loop still runs
    wait_for(
        &s,
        &c,
        "/api/v1/namespaces/bare/configmaps/kube-root-ca.crt",
    )
    .await;
}

#[tokio::test]
async fn priority_from_classes() {
    let s = Server::start();
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    const PCS: &str = "/apis/scheduling.k8s.io/v1/priorityclasses";
    let node = wait_for(&s, &c, &format!("{PCS}/system-node-critical")).await;
    assert_eq!(node["value"], 2000001000);
    let cluster = wait_for(&s, &c, &format!("{PCS}/system-cluster-critical")).await;
    assert_eq!(cluster["value"], 2000000000);
    assert_eq!(cluster["preemptionPolicy"], "PreemptLowerPriority");

    let p = create(&s, &c, PODS, pod("zero")).await;
    assert_eq!(p["spec"]["priority"], 0);
    assert_eq!(p["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert!(p["spec"].get("priorityClassName").is_none(), "{p}");
    let p = create(
        &s,
        &c,
        PODS,
        pod_with(
            "crit",
            json!({"priorityClassName": "system-cluster-critical"}),
        ),
    )
    .await;
    assert_eq!(p["spec"]["priority"], 2000000000);
    refused(
        &s,
        &c,
        PODS,
        pod_with("lost", json!({"priorityClassName": "nope"})),
        "pods \"lost\" is forbidden: no PriorityClass with name nope was found",
    )
    .await;
    let class = |name: &str, value: i64, default: bool| {
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
               "value": value, "globalDefault": default, "preemptionPolicy": "Never"})
    };
    create(&s, &c, PCS, class("high", 1000, true)).await;
    refused(
        &s,
        &c,
        PCS,
        class("other", 10, true),
        "priorityclasses.scheduling.k8s.io \"other\" is forbidden: PriorityClass high is marked as default. Only one default can exist",
    )
    .await;
    let p = create(&s, &c, PODS, pod("defaulted")).await;
    assert_eq!(p["spec"]["priorityClassName"], "high");
    assert_eq!(p["spec"]["priority"], 1000);
    assert_eq!(p["spec"]["preemptionPolicy"], "Never");
    refused(
        &s,
        &c,
        PODS,
        pod_with("stated", json!({"priority": 5})),
        "pods \"stated\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name",
    )
    .await;
    refused(
        &s,
        &c,
        PODS,
        pod_with("policy", json!({"preemptionPolicy": "PreemptLowerPriority"})),
        "pods \"policy\" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name",
    )
    .await;
    // an update keeps the priority
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{PODS}/defaulted"),
            Some(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["spec"]["priority"], 1000);
}

#[tokio::test]
async fn default_toleration_seconds_from_flags() {
    let s = Server::start_with(&["--default-not-ready-toleration-seconds", "60"]);
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    let p = create(&s, &c, PODS, pod("p")).await;
    assert_eq!(
        p["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
    );
    // a toleration of everything already covers both
    let p = create(
        &s,
        &c,
        PODS,
        pod_with("all", json!({"tolerations": [{"operator": "Exists"}]})),
    )
    .await;
    assert_eq!(p["spec"]["tolerations"], json!([{"operator": "Exists"}]));
    // one of them given: only the other is added
    let p = create(
        &s,
        &c,
        PODS,
        pod_with("one", json!({"tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}]})),
    )
    .await;
    assert_eq!(p["spec"]["tolerations"].as_array().unwrap().len(), 2, "{p}");
    assert_eq!(
        p["spec"]["tolerations"][1]["key"],
        "node.kubernetes.io/not-ready"
    );
    // turned off
    let s = Server::start_with(&["--disable-admission-plugins", "DefaultTolerationSeconds"]);
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    let p = create(&s, &c, PODS, pod("p")).await;
    assert!(p["spec"].get("tolerations").is_none(), "{p}");
}

#[tokio::test]
async fn new_nodes_are_tainted_not_ready() {
    let s = Server::start();
    let c = s.client();
    let node = |name: &str, taints: Value| json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {"taints": taints}});
    let n = create(&s, &c, "/api/v1/nodes", node("n1", json!([]))).await;
    assert_eq!(
        n["spec"]["taints"],
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );
    let n = create(
        &s,
        &c,
        "/api/v1/nodes",
        node(
            "n2",
            json!([{"key": "a", "value": "b", "effect": "NoExecute"}, {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]),
        ),
    )
    .await;
    assert_eq!(n["spec"]["taints"].as_array().unwrap().len(), 2, "{n}");
    // updates are left alone
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/api/v1/nodes/n1",
            Some(json!({"spec": {"taints": null}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert!(r.body["spec"].get("taints").is_none(), "{}", r.body);
}

#[tokio::test]
async fn runtime_class_overhead_and_scheduling() {
    let s = Server::start();
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    create(
        &s,
        &c,
        "/apis/node.k8s.io/v1/runtimeclasses",
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"},
               "handler": "kata", "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
               "scheduling": {"nodeSelector": {"sandbox": "true"},
                              "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}}),
    )
    .await;
    let p = create(
        &s,
        &c,
        PODS,
        pod_with(
            "k",
            json!({"runtimeClassName": "kata", "nodeSelector": {"zone": "a"}}),
        ),
    )
    .await;
    assert_eq!(
        p["spec"]["overhead"],
        json!({"cpu": "250m", "memory": "120Mi"})
    );
    assert_eq!(
        p["spec"]["nodeSelector"],
        json!({"sandbox": "true", "zone": "a"})
    );
    // after DefaultTolerationSeconds' two (kube's order)
    assert_eq!(
        p["spec"]["tolerations"][2],
        json!({"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"})
    );
    refused(
        &s,
        &c,
        PODS,
        pod_with("lost", json!({"runtimeClassName": "nope"})),
        "pods \"lost\" is forbidden: pod rejected: RuntimeClass \"nope\" not found",
    )
    .await;
    refused(
        &s,
        &c,
        PODS,
        pod_with(
            "clash",
            json!({"runtimeClassName": "kata", "nodeSelector": {"sandbox": "false"}}),
        ),
        "pods \"clash\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false",
    )
    .await;
    refused(
        &s,
        &c,
        PODS,
        pod_with(
            "other",
            json!({"runtimeClassName": "kata", "overhead": {"cpu": "1"}}),
        ),
        "pods \"other\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
    )
    .await;
    refused(
        &s,
        &c,
        PODS,
        pod_with("bare", json!({"overhead": {"cpu": "1"}})),
        "pods \"bare\" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
    )
    .await;
}

#[tokio::test]
async fn always_pull_images() {
    let s = Server::start_with(&["--enable-admission-plugins", "AlwaysPullImages"]);
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    let p = create(
        &s,
        &c,
        PODS,
        pod_with("p", json!({"initContainers": [{"name": "i", "image": "busybox:1", "imagePullPolicy": "Never"}],
            "containers": [{"name": "c", "image": "busybox:1", "imagePullPolicy": "IfNotPresent"}]})),
    )
    .await;
    assert_eq!(p["spec"]["initContainers"][0]["imagePullPolicy"], "Always");
    assert_eq!(p["spec"]["containers"][0]["imagePullPolicy"], "Always");
}

#[tokio::test]
async fn limit_pod_hard_anti_affinity_topology() {
    let s = Server::start_with(&[
        "--enable-admission-plugins",
        "LimitPodHardAntiAffinityTopology",
    ]);
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    let anti = |key: &str| {
        json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": key}]}}})
    };
    create(
        &s,
        &c,
        PODS,
        pod_with("host", anti("kubernetes.io/hostname")),
    )
    .await;
    refused(
        &s,
        &c,
        PODS,
        pod_with("zone", anti("topology.kubernetes.io/zone")),
        "pods \"zone\" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed",
    )
    .await;
}

#[tokio::test]
async fn extended_resource_toleration() {
    let s = Server::start_with(&[
        "--enable-admission-plugins",
        "ExtendedResourceToleration",
        "--disable-admission-plugins",
        "DefaultTolerationSeconds",
    ]);
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    let p = create(
        &s,
        &c,
        PODS,
        pod_with(
            "gpu",
            json!({"containers": [{"name": "c", "image": "busybox",
            "resources": {"limits": {"example.com/gpu": "1", "cpu": "1"}}}]}),
        ),
    )
    .await;
    assert_eq!(
        p["spec"]["tolerations"],
        json!([{"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    );
    let p = create(&s, &c, PODS, pod("plain")).await;
    assert!(p["spec"].get("tolerations").is_none(), "{p}");
}

/// A server with `plugins` enabled and their configuration (YAML of the `plugins` list).
fn configured(plugins: &str, config: &str) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("admission.yaml");
    std::fs::write(
        &path,
        format!("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n{config}"),
    )
    .unwrap();
    let s = Server::start_with(&[
        "--enable-admission-plugins",
        plugins,
        "--disable-admission-plugins",
        "DefaultTolerationSeconds",
        "--admission-control-config-file",
        path.to_str().unwrap(),
    ]);
    drop(dir);
    s
}

async fn namespace(s: &Server, c: &reqwest::Client, name: &str, annotations: Value) {
    create(
        s,
        c,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": annotations}}),
    )
    .await;
    wait_for(
        s,
        c,
        &format!("/api/v1/namespaces/{name}/serviceaccounts/default"),
    )
    .await;
}

#[tokio::test]
async fn pod_node_selector() {
    let s = configured(
        "PodNodeSelector",
        "- name: PodNodeSelector\n  configuration:\n    podNodeSelectorPluginConfig:\n      clusterDefaultNodeSelector: tier=general\n      fenced: env=prod,tier=web\n",
    );
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    // the cluster default
    let p = create(&s, &c, PODS, pod("p")).await;
    assert_eq!(p["spec"]["nodeSelector"], json!({"tier": "general"}));
    // the namespace's own, merged; conflicts and the whitelist
    namespace(
        &s,
        &c,
        "fenced",
        json!({"scheduler.alpha.kubernetes.io/node-selector": "env=prod"}),
    )
    .await;
    let path = "/api/v1/namespaces/fenced/pods";
    let p = create(
        &s,
        &c,
        path,
        pod_with("web", json!({"nodeSelector": {"tier": "web"}})),
    )
    .await;
    assert_eq!(
        p["spec"]["nodeSelector"],
        json!({"env": "prod", "tier": "web"})
    );
    refused(
        &s,
        &c,
        path,
        pod_with("dev", json!({"nodeSelector": {"env": "dev"}})),
        "pods \"dev\" is forbidden: pod node label selector conflicts with its namespace node label selector",
    )
    .await;
    refused(
        &s,
        &c,
        path,
        pod_with("db", json!({"nodeSelector": {"tier": "db"}})),
        "pods \"db\" is forbidden: pod node label selector labels conflict with its namespace whitelist",
    )
    .await;
}

#[tokio::test]
async fn pod_toleration_restriction() {
    let s = configured(
        "PodTolerationRestriction",
        "- name: PodTolerationRestriction\n  configuration:\n    apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\n    kind: Configuration\n    default:\n    - {key: cluster, operator: Exists, effect: NoSchedule}\n",
    );
    let c = s.client();
    wait_for(&s, &c, "/api/v1/namespaces/default/serviceaccounts/default").await;
    // the cluster's default
    let p = create(&s, &c, PODS, pod("p")).await;
    assert_eq!(
        p["spec"]["tolerations"],
        json!([{"key": "cluster", "operator": "Exists", "effect": "NoSchedule"}])
    );
    // the namespace's defaults and whitelist; not BestEffort: memory pressure tolerated
    namespace(
        &s,
        &c,
        "limited",
        json!({
            "scheduler.alpha.kubernetes.io/defaultTolerations": r#"[{"key": "team", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]"#,
            "scheduler.alpha.kubernetes.io/tolerationsWhitelist": r#"[{"key": "team", "operator": "Exists"}, {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists"}]"#,
        }),
    )
    .await;
    let path = "/api/v1/namespaces/limited/pods";
    let p = create(
        &s,
        &c,
        path,
        pod_with(
            "sized",
            json!({"containers": [{"name": "c", "image": "busybox",
            "resources": {"requests": {"cpu": "100m"}}}]}),
        ),
    )
    .await;
    assert_eq!(
        p["spec"]["tolerations"],
        json!([{"key": "team", "operator": "Equal", "value": "a", "effect": "NoSchedule"},
               {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}])
    );
    let r = s
        .json(
            &c,
            Method::POST,
            path,
            Some(pod_with(
                "out",
                json!({"tolerations": [{"key": "gpu", "operator": "Exists"}]}),
            )),
        )
        .await;
    assert_eq!(r.code.as_u16(), 500, "{}", r.body);
    assert!(
        r.body.get("reason").is_none(),
        "kube's StatusReasonUnknown: {}",
        r.body
    );
    assert_eq!(
        r.body["message"],
        "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"
    );
}
