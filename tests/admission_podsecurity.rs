//! The PodSecurity admission plugin over real HTTPS: pods refused by the baseline and
//! restricted levels of their namespace's `enforce` label with kube's messages (and at an
//! older policy version), compliant pods admitted, `warn` as Warning headers on pods and on
//! a Deployment's template (never enforced), namespace labels refused when invalid and a
//! stricter enforce level warning about existing pods, and the plugin's configuration from
//! `--admission-control-config-file` (defaults, exempt users, namespaces and runtime
//! classes; a bad configuration refuses to start).

mod support;

use std::process::Command;

use reqwest::Method;
use serde_json::{json, Value};
use support::{free_port, stderr, Reply, Server};

const ENFORCE: &str = "pod-security.kubernetes.io/enforce";

fn pod(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

/// One container, nothing set.
fn plain(name: &str) -> Value {
    pod(
        name,
        json!({"containers": [{"name": "c", "image": "nginx"}]}),
    )
}

/// What restricted asks of a pod.
fn compliant(name: &str) -> Value {
    pod(
        name,
        json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "image": "nginx", "securityContext": {
                "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]
        }),
    )
}

/// The reasons and details of a plain pod under restricted:latest.
const PLAIN_RESTRICTED: &str = "allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")";

/// The `Warning` headers of a reply, unquoted.
fn warnings(r: &Reply) -> Vec<String> {
    r.headers
        .get_all("warning")
        .iter()
        .map(|v| {
            let v = v.to_str().unwrap();
            let q = v.strip_prefix("299 - ").unwrap_or(v);
            let q = q
                .strip_prefix('"')
                .and_then(|q| q.strip_suffix('"'))
                .unwrap_or(q);
            q.replace("\\\"", "\"").replace("\\\\", "\\")
        })
        .collect()
}

async fn namespace(s: &Server, c: &reqwest::Client, name: &str, labels: Value) -> Reply {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}});
    s.json(c, Method::POST, "/api/v1/namespaces", Some(ns))
        .await
}

async fn create_pod(s: &Server, c: &reqwest::Client, ns: &str, body: Value) -> Reply {
    s.json(
        c,
        Method::POST,
        &format!("/api/v1/namespaces/{ns}/pods"),
        Some(body),
    )
    .await
}

#[tokio::test]
async fn enforce_refuses_pods_with_kubes_messages() {
    let s = Server::start_with(&["--allow-privileged"]);
    let c = s.client();
    assert_eq!(
        namespace(&s, &c, "r", json!({ENFORCE: "restricted"}))
            .await
            .code
            .as_u16(),
        201
    );
    let r = create_pod(&s, &c, "r", plain("x")).await;
    assert_eq!(r.code.as_u16(), 403, "{}", r.body);
    assert_eq!(r.body["reason"], "Forbidden");
    assert_eq!(
        r.body["message"],
        format!("pods \"x\" is forbidden: violates PodSecurity \"restricted:latest\": {PLAIN_RESTRICTED}")
    );
    assert_eq!(r.body["details"], json!({"name": "x", "kind": "pods"}));
    let r = create_pod(&s, &c, "r", compliant("ok")).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
    // a dry run is refused the same way
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/r/pods?dryRun=All",
            Some(plain("x")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 403, "{}", r.body);

    // an older policy version: the restricted checks of v1.18
    namespace(
        &s,
        &c,
        "old",
        json!({ENFORCE: "restricted", "pod-security.kubernetes.io/enforce-version": "v1.18"}),
    )
    .await;
    let r = create_pod(&s, &c, "old", plain("x")).await;
    assert_eq!(
        r.body["message"],
        "pods \"x\" is forbidden: violates PodSecurity \"restricted:v1.18\": allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true)"
    );

    // baseline: a plain pod passes, a privileged one on the host does not
    namespace(&s, &c, "b", json!({ENFORCE: "baseline"})).await;
    let r = create_pod(&s, &c, "b", plain("fine")).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
    let bad = pod(
        "bad",
        json!({
            "hostNetwork": true,
            "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
            "containers": [{"name": "c", "image": "nginx",
                "securityContext": {"privileged": true, "capabilities": {"add": ["NET_ADMIN"]}}}]
        }),
    );
    let r = create_pod(&s, &c, "b", bad).await;
    assert_eq!(r.code.as_u16(), 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "pods \"bad\" is forbidden: violates PodSecurity \"baseline:latest\": non-default capabilities (container \"c\" must not include \"NET_ADMIN\" in securityContext.capabilities.add), host namespaces (hostNetwork=true), hostPath volumes (volume \"root\"), privileged (container \"c\" must not set securityContext.privileged=true)"
    );

    // enforce baseline, warn restricted: admitted with kube's warning
    namespace(
        &s,
        &c,
        "w",
        json!({ENFORCE: "baseline", "pod-security.kubernetes.io/warn": "restricted"}),
    )
    .await;
    let r = create_pod(&s, &c, "w", plain("p")).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(
        warnings(&r),
        [format!(
            "would violate PodSecurity \"restricted:latest\": {PLAIN_RESTRICTED}"
        )]
    );
    // the pod's own warnings (its strategy's) come first, PodSecurity's (validating
    // admission) after them, as kube's BeforeCreate adds them before admission validates
    let mut p = plain("q");
    p["spec"]["nodeSelector"] = json!({"beta.kubernetes.io/arch": "amd64"});
    let r = create_pod(&s, &c, "w", p).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(
        warnings(&r),
        [
            "spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use \"kubernetes.io/arch\" instead".to_string(),
            format!("would violate PodSecurity \"restricted:latest\": {PLAIN_RESTRICTED}"),
        ]
    );
    // an update that changes no image is not checked
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/api/v1/namespaces/w/pods/p",
            Some(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
}

#[tokio::test]
async fn warn_on_workload_templates_is_never_enforced() {
    let s = Server::start();
    let c = s.client();
    namespace(&s, &c, "apps", json!({ENFORCE: "restricted"})).await;
    let d = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    });
    let r = s
        .json(
            &c,
            Method::POST,
            "/apis/apps/v1/namespaces/apps/deployments",
            Some(d),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(
        warnings(&r),
        [format!(
            "would violate PodSecurity \"restricted:latest\": {PLAIN_RESTRICTED}"
        )]
    );
    // a CronJob's template is found under its job template
    let cj = json!({
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "hostPID": true,
            "containers": [{"name": "c", "image": "busybox"}]}}}}}
    });
    let r = s
        .json(
            &c,
            Method::POST,
            "/apis/batch/v1/namespaces/apps/cronjobs",
            Some(cj),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with(
            "would violate PodSecurity \"restricted:latest\": host namespaces (hostPID=true), allowPrivilegeEscalation != false"
        ),
        "{w:?}"
    );
    // a compliant template: no warning; scale updates are not looked at
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/apis/apps/v1/namespaces/apps/deployments/web/scale",
            Some(json!({"spec": {"replicas": 2}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
}

#[tokio::test]
async fn namespace_labels_are_validated_and_tightening_warns() {
    let s = Server::start();
    let c = s.client();
    let r = namespace(&s, &c, "bad", json!({ENFORCE: "strict"})).await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(r.body["reason"], "Invalid");
    assert_eq!(
        r.body["message"],
        "Namespace \"bad\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted"
    );
    assert_eq!(
        r.body["details"],
        json!({"name": "bad", "kind": "Namespace", "causes": [{
            "reason": "FieldValueInvalid",
            "message": "Invalid value: \"strict\": must be one of privileged, baseline, restricted",
            "field": "metadata.labels[pod-security.kubernetes.io/enforce]"}]})
    );
    let r = namespace(
        &s,
        &c,
        "bad",
        json!({"pod-security.kubernetes.io/warn-version": "1.25", "pod-security.kubernetes.io/audit": "none"}),
    )
    .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Namespace \"bad\" is invalid: [metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: \"none\": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: \"1.25\": must be \"latest\" or \"v1.x\"]"
    );

    // existing pods: two plain ones, one compliant
    namespace(&s, &c, "t", json!({})).await;
    for p in [plain("p2"), plain("p1"), compliant("good")] {
        let r = create_pod(&s, &c, "t", p).await;
        assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    }
    let label = |v: &str| json!({"metadata": {"labels": {ENFORCE: v}}});
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/api/v1/namespaces/t",
            Some(label("restricted")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(
        warnings(&r),
        [
            "existing pods in namespace \"t\" violate the new PodSecurity enforce level \"restricted:latest\"",
            "p1 (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile",
        ]
    );
    // relaxing warns about nothing; an invalid value on update is refused
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/api/v1/namespaces/t",
            Some(label("baseline")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
    let r = s
        .json(
            &c,
            Method::PATCH,
            "/api/v1/namespaces/t",
            Some(label("max")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Namespace \"t\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"max\": must be one of privileged, baseline, restricted"
    );
}

/// `rafter serve` with `args` that must fail to start; returns its stderr.
fn refused(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .args(["serve", "--data-dir"])
        .arg(dir.path())
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success(), "started with {args:?}");
    stderr(&out)
}

fn admission_config(dir: &std::path::Path, podsecurity: &str) -> String {
    let path = dir.join("admission.yaml");
    let indented: String = podsecurity.lines().map(|l| format!("    {l}\n")).collect();
    std::fs::write(
        &path,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n{indented}"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[tokio::test]
async fn configuration_defaults_and_exemptions() {
    let dir = tempfile::tempdir().unwrap();
    let bad = admission_config(
        dir.path(),
        "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: strict\n",
    );
    let e = refused(&["--admission-control-config-file", &bad]);
    assert!(
        e.contains("couldn't init admission plugin \"PodSecurity\": PodSecurity configuration error: enforce: must be one of privileged, baseline, restricted"),
        "{e}"
    );

    let cfg = admission_config(
        dir.path(),
        "apiVersion: pod-security.admission.config.k8s.io/v1beta1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\nexemptions:\n  usernames: [trusted]\n  namespaces: [tools]\n  runtimeClasses: [sandboxed]\n",
    );
    let s = Server::start_with(&[
        "--allow-privileged",
        "--admission-control-config-file",
        &cfg,
    ]);
    let c = s.client();
    let privileged = |name: &str| {
        pod(
            name,
            json!({"containers": [{"name": "c", "image": "nginx", "securityContext": {"privileged": true}}]}),
        )
    };
    // the default enforce level applies to namespaces without labels
    let r = create_pod(&s, &c, "default", privileged("p")).await;
    assert_eq!(r.code.as_u16(), 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "pods \"p\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"c\" must not set securityContext.privileged=true)"
    );
    // labels override it
    namespace(&s, &c, "open", json!({ENFORCE: "privileged"})).await;
    let r = create_pod(&s, &c, "open", privileged("p")).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);

    // an exempt namespace: admitted, and told that its labels are ignored
    let r = namespace(&s, &c, "tools", json!({ENFORCE: "restricted"})).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert_eq!(
        warnings(&r),
        ["namespace \"tools\" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored"]
    );
    let r = create_pod(&s, &c, "tools", privileged("p")).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);

    // an exempt runtime class
    let rc = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                    "metadata": {"name": "sandboxed"}, "handler": "runsc"});
    let r = s
        .json(
            &c,
            Method::POST,
            "/apis/node.k8s.io/v1/runtimeclasses",
            Some(rc),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let mut p = privileged("sandboxed");
    p["spec"]["runtimeClassName"] = json!("sandboxed");
    let r = create_pod(&s, &c, "default", p).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);

    // an exempt user (the admin impersonating "trusted", keeping its rights)
    let mut h = reqwest::header::HeaderMap::new();
    h.insert("Impersonate-User", "trusted".parse().unwrap());
    h.insert("Impersonate-Group", "system:masters".parse().unwrap());
    let trusted = s.client_builder().default_headers(h).build().unwrap();
    let r = create_pod(&s, &trusted, "default", privileged("by-trusted")).await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
}
