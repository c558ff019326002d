//! Admission plugins over real HTTPS, each with its accept, reject and mutate paths and kube's
//! codes and texts: DefaultStorageClass, StorageObjectInUseProtection,
//! PersistentVolumeClaimResize, DefaultIngressClass (all on by default), CertificateApproval,
//! CertificateSigning, CertificateSubjectRestriction (on by default, checked with token users
//! and RBAC), DenyServiceExternalIPs and OwnerReferencesPermissionEnforcement (enabled).

mod support;

use std::time::Duration;

use base64::Engine;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const TOKENS: &str = "tok-alice,alice,u1\ntok-bob,bob,u2\n";

/// A server with the token users of [`TOKENS`] and `extra` flags; the token file's folder
/// lives as long as the server.
fn start(extra: &[&str]) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).unwrap();
    let mut args = vec!["--token-auth-file", tokens.to_str().unwrap()];
    args.extend_from_slice(extra);
    (Server::start_with(&args), dir)
}

/// One JSON request as `token` ("admin": the admin certificate); PATCH is a merge patch.
async fn call(
    s: &Server,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let client = if token == "admin" {
        s.client()
    } else {
        s.anonymous_client()
    };
    let ctype = if method == Method::PATCH {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    let mut r = client.request(method, format!("{}{path}", s.url));
    if token != "admin" {
        r = r.bearer_auth(token);
    }
    if let Some(b) = body {
        r = r.header("content-type", ctype).body(b.to_string());
    }
    let resp = r.send().await.unwrap();
    let code = resp.status();
    let text = resp.text().await.unwrap();
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn admin(s: &Server, method: Method, path: &str, body: Option<Value>) -> Value {
    let (code, b) = call(s, "admin", method.clone(), path, body).await;
    assert!(code.is_success(), "{method} {path}: {code} {b}");
    b
}

fn forbidden(code: StatusCode, body: &Value, message: &str) {
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["reason"], "Forbidden", "{body}");
    assert_eq!(body["message"], message, "{body}");
}

/// A cluster role with `rules` bound to `user`.
async fn grant(s: &Server, user: &str, name: &str, rules: Value) {
    admin(
        s,
        Method::POST,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        Some(json!({"metadata": {"name": name}, "rules": rules})),
    )
    .await;
    admin(
        s,
        Method::POST,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        Some(json!({
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
        })),
    )
    .await;
}

fn class(name: &str, default: bool, expand: Option<bool>) -> Value {
    let mut c = json!({"metadata": {"name": name}, "provisioner": "example.com/disk"});
    if default {
        c["metadata"]["annotations"] =
            json!({"storageclass.kubernetes.io/is-default-class": "true"});
    }
    if let Some(e) = expand {
        c["allowVolumeExpansion"] = json!(e);
    }
    c
}

fn claim(name: &str, class: Option<&str>, size: &str) -> Value {
    let mut c = json!({
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    });
    if let Some(cl) = class {
        c["spec"]["storageClassName"] = json!(cl);
    }
    c
}

const PVCS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";
const SCS: &str = "/apis/storage.k8s.io/v1/storageclasses";

/// Marks a claim Bound through its status.
async fn bind(s: &Server, name: &str) {
    let mut pvc = admin(s, Method::GET, &format!("{PVCS}/{name}"), None).await;
    pvc["status"] = json!({"phase": "Bound"});
    admin(s, Method::PUT, &format!("{PVCS}/{name}/status"), Some(pvc)).await;
}

#[tokio::test]
async fn storage_classes_finalizers_and_resizes() {
    let (s, _dir) = start(&[]);
    // no default class yet: the claim keeps no class; the protection finalizer is added
    let pvc = admin(&s, Method::POST, PVCS, Some(claim("none", None, "1Gi"))).await;
    assert!(pvc["spec"].get("storageClassName").is_none(), "{pvc}");
    assert_eq!(
        pvc["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    // two defaults a second apart: the newest wins
    admin(&s, Method::POST, SCS, Some(class("a-old", true, None))).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    admin(&s, Method::POST, SCS, Some(class("b-new", true, None))).await;
    admin(
        &s,
        Method::POST,
        SCS,
        Some(class("grows", false, Some(true))),
    )
    .await;
    let pvc = admin(
        &s,
        Method::POST,
        PVCS,
        Some(claim("defaulted", None, "1Gi")),
    )
    .await;
    assert_eq!(pvc["spec"]["storageClassName"], "b-new", "{pvc}");
    // an explicit class, even "", is kept
    let pvc = admin(
        &s,
        Method::POST,
        PVCS,
        Some(claim("empty", Some(""), "1Gi")),
    )
    .await;
    assert_eq!(pvc["spec"]["storageClassName"], "", "{pvc}");
    // a finalizer already there is not added twice
    let mut c = claim("mine", Some("grows"), "1Gi");
    c["metadata"]["finalizers"] = json!(["kubernetes.io/pvc-protection", "example.com/x"]);
    let pvc = admin(&s, Method::POST, PVCS, Some(c)).await;
    assert_eq!(
        pvc["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection", "example.com/x"])
    );
    // persistent volumes get theirs
    let pv = admin(
        &s,
        Method::POST,
        "/api/v1/persistentvolumes",
        Some(json!({
            "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "hostPath": {"path": "/tmp/pv1"}}
        })),
    )
    .await;
    assert_eq!(
        pv["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );

    // resizing: only bound claims whose class allows expansion grow
    bind(&s, "defaulted").await;
    let grow = json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}});
    let (code, body) = call(
        &s,
        "admin",
        Method::PATCH,
        &format!("{PVCS}/defaulted"),
        Some(grow.clone()),
    )
    .await;
    forbidden(
        code,
        &body,
        "persistentvolumeclaims \"defaulted\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
    );
    bind(&s, "mine").await;
    let pvc = admin(
        &s,
        Method::PATCH,
        &format!("{PVCS}/mine"),
        Some(grow.clone()),
    )
    .await;
    assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "2Gi");
    // the same size again is no growth
    admin(&s, Method::PATCH, &format!("{PVCS}/mine"), Some(grow)).await;
    // kubectl sees kube's refusal text too
    let err = s.fails(&[
        "patch",
        "pvc",
        "defaulted",
        "-p",
        r#"{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}"#,
    ]);
    assert!(
        err.contains("persistentvolumeclaims \"defaulted\" is forbidden: only dynamically provisioned pvc can be resized"),
        "{err}"
    );

    // the claim's own update rules run first: an unbound claim's spec is immutable (kube's
    // 422, not the plugin's 403), a bound one's too but for the storage request
    let immutable = "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{\n";
    let (code, body) = call(
        &s,
        "admin",
        Method::PATCH,
        &format!("{PVCS}/none"),
        Some(json!({"spec": {"resources": {"requests": {"storage": "5Gi"}}}})),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["reason"], "Invalid", "{body}");
    let msg = body["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!(
            "PersistentVolumeClaim \"none\" is invalid: {immutable}"
        )),
        "{msg}"
    );
    assert!(msg.contains("Resources"), "{msg}");
    let (code, body) = call(
        &s,
        "admin",
        Method::PATCH,
        &format!("{PVCS}/mine"),
        Some(json!({"spec": {"accessModes": ["ReadWriteMany"]}})),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let msg = body["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!(
            "PersistentVolumeClaim \"mine\" is invalid: {immutable}"
        )) && msg.contains("AccessModes"),
        "{msg}"
    );
    // the same size written differently is no change
    admin(
        &s,
        Method::PATCH,
        &format!("{PVCS}/none"),
        Some(json!({"spec": {"resources": {"requests": {"storage": "1024Mi"}}}})),
    )
    .await;
    // volumeName is set once (by the binder)
    admin(
        &s,
        Method::PATCH,
        &format!("{PVCS}/none"),
        Some(json!({"spec": {"volumeName": "pv1"}})),
    )
    .await;
    let (code, body) = call(
        &s,
        "admin",
        Method::PATCH,
        &format!("{PVCS}/none"),
        Some(json!({"spec": {"volumeName": "pv2"}})),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("VolumeName"),
        "{body}"
    );
    // a class may be given to a claim that had none
    admin(
        &s,
        Method::PATCH,
        &format!("{PVCS}/none"),
        Some(json!({"spec": {"storageClassName": "grows"}})),
    )
    .await;
    // shrinking is allowed down to (not including) status.capacity
    let mut pvc = admin(&s, Method::GET, &format!("{PVCS}/mine"), None).await;
    pvc["status"] = json!({"phase": "Bound", "capacity": {"storage": "2Gi"}});
    admin(&s, Method::PUT, &format!("{PVCS}/mine/status"), Some(pvc)).await;
    let (code, body) = call(
        &s,
        "admin",
        Method::PATCH,
        &format!("{PVCS}/mine"),
        Some(json!({"spec": {"resources": {"requests": {"storage": "1Gi"}}}})),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["message"],
        "PersistentVolumeClaim \"mine\" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
    );
    // VolumeAttributesClass is off in v1.33: the field is dropped, on create and update
    let mut c = claim("vac", None, "1Gi");
    c["spec"]["volumeAttributesClassName"] = json!("fast");
    let pvc = admin(&s, Method::POST, PVCS, Some(c)).await;
    assert!(
        pvc["spec"].get("volumeAttributesClassName").is_none(),
        "{pvc}"
    );
    let pvc = admin(
        &s,
        Method::PATCH,
        &format!("{PVCS}/vac"),
        Some(json!({"spec": {"volumeAttributesClassName": "fast"}})),
    )
    .await;
    assert!(
        pvc["spec"].get("volumeAttributesClassName").is_none(),
        "{pvc}"
    );
}

#[tokio::test]
async fn ingresses_get_the_default_class() {
    let (s, _dir) = start(&[]);
    const ING: &str = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
    const CLASSES: &str = "/apis/networking.k8s.io/v1/ingressclasses";
    let ingress = |name: &str| json!({"metadata": {"name": name}, "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}});
    let ic = |name: &str, default: Option<&str>| {
        let mut c =
            json!({"metadata": {"name": name}, "spec": {"controller": "example.com/ingress"}});
        if let Some(d) = default {
            c["metadata"]["annotations"] =
                json!({"ingressclass.kubernetes.io/is-default-class": d});
        }
        c
    };
    admin(&s, Method::POST, CLASSES, Some(ic("plain", Some("false")))).await;
    let i = admin(&s, Method::POST, ING, Some(ingress("none"))).await;
    assert!(i["spec"].get("ingressClassName").is_none(), "{i}");
    admin(&s, Method::POST, CLASSES, Some(ic("first", Some("true")))).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    admin(&s, Method::POST, CLASSES, Some(ic("second", Some("true")))).await;
    let i = admin(&s, Method::POST, ING, Some(ingress("defaulted"))).await;
    assert_eq!(i["spec"]["ingressClassName"], "second", "{i}");
    // an explicit class or the legacy annotation is kept
    let mut named = ingress("named");
    named["spec"]["ingressClassName"] = json!("plain");
    let i = admin(&s, Method::POST, ING, Some(named)).await;
    assert_eq!(i["spec"]["ingressClassName"], "plain");
    let mut legacy = ingress("legacy");
    legacy["metadata"]["annotations"] = json!({"kubernetes.io/ingress.class": "nginx"});
    let i = admin(&s, Method::POST, ING, Some(legacy)).await;
    assert!(i["spec"].get("ingressClassName").is_none(), "{i}");
    // an update does not default
    let i = admin(
        &s,
        Method::PATCH,
        &format!("{ING}/legacy"),
        Some(json!({"metadata": {"annotations": {"kubernetes.io/ingress.class": null}}})),
    )
    .await;
    assert!(i["spec"].get("ingressClassName").is_none(), "{i}");
}

/// A PEM certificate request for `cn` in organizations `orgs` (rcgen keeps the last one of a
/// kind), base64 as `spec.request`.
fn csr_request(cn: &str, orgs: &[&str]) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    for o in orgs {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *o);
    }
    let pem = params.serialize_request(&key).unwrap().pem().unwrap();
    base64::engine::general_purpose::STANDARD.encode(pem)
}

fn csr(name: &str, signer: &str, orgs: &[&str]) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {"request": csr_request(name, orgs), "signerName": signer, "usages": ["client auth"]}
    })
}

const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

#[tokio::test]
async fn certificate_requests_need_rights_on_their_signer() {
    let (s, _dir) = start(&[]);
    // subject restriction: no system:masters through the kube-apiserver-client signer
    let client_signer = "kubernetes.io/kube-apiserver-client";
    let (code, body) = call(
        &s,
        "admin",
        Method::POST,
        CSRS,
        Some(csr("masters", client_signer, &["system:masters"])),
    )
    .await;
    forbidden(
        code,
        &body,
        "certificatesigningrequests.certificates.k8s.io \"masters\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed",
    );
    admin(
        &s,
        Method::POST,
        CSRS,
        Some(csr("devs", client_signer, &["dev"])),
    )
    .await;
    // other signers may ask for any group
    admin(
        &s,
        Method::POST,
        CSRS,
        Some(csr("other", "example.com/issuer", &["system:masters"])),
    )
    .await;

    // alice may update approvals and statuses, but approve or sign for no signer yet
    grant(
        &s,
        "alice",
        "csr-writer",
        json!([
            {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["get", "list"]},
            {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval", "certificatesigningrequests/status"], "verbs": ["update"]}
        ]),
    )
    .await;
    let mut approve = admin(&s, Method::GET, &format!("{CSRS}/other"), None).await;
    approve["status"]["conditions"] =
        json!([{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]);
    let approval = format!("{CSRS}/other/approval");
    let (code, body) = call(
        &s,
        "tok-alice",
        Method::PUT,
        &approval,
        Some(approve.clone()),
    )
    .await;
    forbidden(
        code,
        &body,
        "certificatesigningrequests.certificates.k8s.io \"other\" is forbidden: user not permitted to approve requests with signerName \"example.com/issuer\"",
    );
    // the domain's wildcard is enough
    grant(
        &s,
        "alice",
        "approver",
        json!([{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "resourceNames": ["example.com/*"], "verbs": ["approve"]}]),
    )
    .await;
    let approved = wait_ok(&s, "tok-alice", Method::PUT, &approval, approve).await;
    assert_eq!(approved["status"]["conditions"][0]["type"], "Approved");

    // issuing the certificate needs `sign`; other status changes do not
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["other".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap()
        .pem();
    let mut issued = approved.clone();
    issued["status"]["certificate"] = json!(base64::engine::general_purpose::STANDARD.encode(cert));
    let status = format!("{CSRS}/other/status");
    let (code, body) = call(&s, "tok-alice", Method::PUT, &status, Some(issued.clone())).await;
    forbidden(
        code,
        &body,
        "certificatesigningrequests.certificates.k8s.io \"other\" is forbidden: user not permitted to sign requests with signerName \"example.com/issuer\"",
    );
    // a status write that issues nothing needs no `sign`
    let devs = admin(&s, Method::GET, &format!("{CSRS}/devs"), None).await;
    let devs_status = format!("{CSRS}/devs/status");
    let (code, body) = call(&s, "tok-alice", Method::PUT, &devs_status, Some(devs)).await;
    assert_eq!(code, StatusCode::OK, "{body}");
    grant(
        &s,
        "alice",
        "signer",
        json!([{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "resourceNames": ["example.com/issuer"], "verbs": ["sign"]}]),
    )
    .await;
    let done = wait_ok(&s, "tok-alice", Method::PUT, &status, issued).await;
    assert!(done["status"]["certificate"].is_string(), "{done}");

    // the approval check uses the stored signer: no rights on kubernetes.io signers
    let mut approve = admin(&s, Method::GET, &format!("{CSRS}/devs"), None).await;
    approve["status"]["conditions"] =
        json!([{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]);
    let (code, body) = call(
        &s,
        "tok-alice",
        Method::PUT,
        &format!("{CSRS}/devs/approval"),
        Some(approve),
    )
    .await;
    forbidden(
        code,
        &body,
        "certificatesigningrequests.certificates.k8s.io \"devs\" is forbidden: user not permitted to approve requests with signerName \"kubernetes.io/kube-apiserver-client\"",
    );
}

/// Retries (bounded) until `token` succeeds: RBAC grants take effect once the authorizer's
/// watch has seen them. Each attempt re-reads the resource version.
async fn wait_ok(s: &Server, token: &str, method: Method, path: &str, mut body: Value) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (code, b) = call(s, token, method.clone(), path, Some(body.clone())).await;
        if code.is_success() {
            return b;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{method} {path}: {code} {b}"
        );
        if code == StatusCode::CONFLICT {
            let base = path.rsplit_once('/').map(|(p, _)| p).unwrap_or(path);
            let cur = admin(s, Method::GET, base, None).await;
            body["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn services_may_not_gain_external_ips() {
    let (s, _dir) = start(&["--enable-admission-plugins", "DenyServiceExternalIPs"]);
    const SVCS: &str = "/api/v1/namespaces/default/services";
    let svc = |name: &str, ips: &[&str]| {
        let mut v = json!({"metadata": {"name": name}, "spec": {"ports": [{"port": 80}]}});
        if !ips.is_empty() {
            v["spec"]["externalIPs"] = json!(ips);
        }
        v
    };
    let (code, body) = call(
        &s,
        "admin",
        Method::POST,
        SVCS,
        Some(svc("ext", &["192.0.2.1"])),
    )
    .await;
    forbidden(
        code,
        &body,
        "services \"ext\" is forbidden: Use of external IPs is denied by admission control",
    );
    admin(&s, Method::POST, SVCS, Some(svc("web", &[]))).await;
    let (code, body) = call(
        &s,
        "admin",
        Method::PATCH,
        &format!("{SVCS}/web"),
        Some(json!({"spec": {"externalIPs": ["192.0.2.1"]}})),
    )
    .await;
    forbidden(
        code,
        &body,
        "services \"web\" is forbidden: Use of external IPs is denied by admission control",
    );
    admin(
        &s,
        Method::PATCH,
        &format!("{SVCS}/web"),
        Some(json!({"metadata": {"labels": {"a": "b"}}})),
    )
    .await;
    admin(&s, Method::DELETE, &format!("{SVCS}/web"), None).await;
}

#[tokio::test]
async fn owner_references_need_delete_and_finalizer_rights() {
    let (s, _dir) = start(&[
        "--enable-admission-plugins",
        "OwnerReferencesPermissionEnforcement",
    ]);
    const CMS: &str = "/api/v1/namespaces/default/configmaps";
    let owner = admin(
        &s,
        Method::POST,
        CMS,
        Some(json!({"metadata": {"name": "owner"}})),
    )
    .await;
    let uid = owner["metadata"]["uid"].as_str().unwrap().to_string();
    let owned = |name: &str, block: Option<bool>, kind: &str| {
        let mut r = json!({"apiVersion": "v1", "kind": kind, "name": "owner", "uid": uid});
        if let Some(b) = block {
            r["blockOwnerDeletion"] = json!(b);
        }
        json!({"metadata": {"name": name, "ownerReferences": [r]}})
    };
    grant(
        &s,
        "bob",
        "cm-writer",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "update", "patch"]}]),
    )
    .await;
    // without ownerReferences nothing is checked
    wait_ok(
        &s,
        "tok-bob",
        Method::POST,
        CMS,
        json!({"metadata": {"name": "free"}}),
    )
    .await;
    let (code, body) = call(
        &s,
        "tok-bob",
        Method::POST,
        CMS,
        Some(owned("a", None, "ConfigMap")),
    )
    .await;
    forbidden(
        code,
        &body,
        "configmaps \"a\" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>",
    );
    let (code, body) = call(
        &s,
        "tok-bob",
        Method::PATCH,
        &format!("{CMS}/free"),
        Some(json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}]}})),
    )
    .await;
    forbidden(
        code,
        &body,
        "configmaps \"free\" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>",
    );
    grant(
        &s,
        "bob",
        "cm-deleter",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["delete"]}]),
    )
    .await;
    wait_ok(
        &s,
        "tok-bob",
        Method::POST,
        CMS,
        owned("a", Some(false), "ConfigMap"),
    )
    .await;
    // blocking the owner's deletion needs update on its finalizers
    let (code, body) = call(
        &s,
        "tok-bob",
        Method::POST,
        CMS,
        Some(owned("b", Some(true), "ConfigMap")),
    )
    .await;
    forbidden(
        code,
        &body,
        "configmaps \"b\" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>",
    );
    let (code, body) = call(
        &s,
        "tok-bob",
        Method::POST,
        CMS,
        Some(owned("c", Some(true), "Gadget")),
    )
    .await;
    forbidden(
        code,
        &body,
        "configmaps \"c\" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion v1 Kind Gadget: no matches for kind \"Gadget\" in version \"v1\"",
    );
    grant(
        &s,
        "bob",
        "cm-finalizer",
        json!([{"apiGroups": [""], "resources": ["configmaps/finalizers"], "resourceNames": ["owner"], "verbs": ["update"]}]),
    )
    .await;
    wait_ok(
        &s,
        "tok-bob",
        Method::POST,
        CMS,
        owned("b", Some(true), "ConfigMap"),
    )
    .await;
    // a cluster-scoped owner's finalizers are checked at the cluster scope
    let ns_owned = json!({"metadata": {"name": "e", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Namespace", "name": "default", "uid": "x", "blockOwnerDeletion": true}
    ]}});
    let (code, body) = call(&s, "tok-bob", Method::POST, CMS, Some(ns_owned.clone())).await;
    forbidden(
        code,
        &body,
        "configmaps \"e\" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>",
    );
    grant(
        &s,
        "bob",
        "ns-finalizer",
        json!([{"apiGroups": [""], "resources": ["namespaces/finalizers"], "verbs": ["update"]}]),
    )
    .await;
    wait_ok(&s, "tok-bob", Method::POST, CMS, ns_owned).await;
    // the admin may do all of it
    admin(
        &s,
        Method::POST,
        CMS,
        Some(owned("d", Some(true), "ConfigMap")),
    )
    .await;
}

const NODE_TOKENS: &str = "tok-n1,system:node:n1,u1,system:nodes\ntok-n2,system:node:n2,u2,system:nodes\ntok-nobody,system:node:,u3,system:nodes\n";

#[tokio::test]
async fn nodes_may_change_only_themselves_and_their_pods() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, NODE_TOKENS).unwrap();
    let s = Server::start_with(&[
        "--token-auth-file",
        tokens.to_str().unwrap(),
        "--enable-admission-plugins",
        "NodeRestriction",
    ]);
    const NODES: &str = "/api/v1/nodes";
    const PODS: &str = "/api/v1/namespaces/default/pods";
    // a node registers itself, without restricted labels
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        NODES,
        Some(json!({"metadata": {"name": "n1", "labels": {"node-restriction.kubernetes.io/pool": "a", "kubernetes.io/os": "linux"}}})),
    )
    .await;
    forbidden(
        code,
        &body,
        "nodes \"n1\" is forbidden: node \"n1\" is not allowed to set the following labels: node-restriction.kubernetes.io/pool",
    );
    let n1 = wait_ok(
        &s,
        "tok-n1",
        Method::POST,
        NODES,
        json!({"metadata": {"name": "n1", "labels": {"kubernetes.io/os": "linux", "example.com/a": "b"}}}),
    )
    .await;
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        NODES,
        Some(json!({"metadata": {"name": "n2"}})),
    )
    .await;
    forbidden(
        code,
        &body,
        "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"",
    );
    admin(
        &s,
        Method::POST,
        NODES,
        Some(json!({"metadata": {"name": "n2"}})),
    )
    .await;
    // its own labels within the kubelet's set; no taints, no restricted labels; no other node
    let patch = |labels: Value| json!({"metadata": {"labels": labels}});
    admin_as(
        &s,
        "tok-n1",
        Method::PATCH,
        &format!("{NODES}/n1"),
        patch(json!({"node.kubernetes.io/instance-type": "big", "example.com/a": "c"})),
    )
    .await;
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::PATCH,
        &format!("{NODES}/n1"),
        Some(patch(
            json!({"node-restriction.kubernetes.io/pool": "b", "kubernetes.io/role": "x"}),
        )),
    )
    .await;
    forbidden(
        code,
        &body,
        "nodes \"n1\" is forbidden: is not allowed to modify labels: kubernetes.io/role, node-restriction.kubernetes.io/pool",
    );
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::PATCH,
        &format!("{NODES}/n1"),
        Some(json!({"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}})),
    )
    .await;
    forbidden(
        code,
        &body,
        "nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify taints",
    );
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::PATCH,
        &format!("{NODES}/n2"),
        Some(patch(json!({"a": "b"}))),
    )
    .await;
    forbidden(
        code,
        &body,
        "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"",
    );
    let (code, body) = call(
        &s,
        "tok-nobody",
        Method::PATCH,
        &format!("{NODES}/n2"),
        Some(patch(json!({"a": "b"}))),
    )
    .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    // the admin is not restricted
    admin(
        &s,
        Method::PATCH,
        &format!("{NODES}/n1"),
        Some(json!({"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}, "metadata": {"labels": {"node-restriction.kubernetes.io/pool": "a"}}})),
    )
    .await;

    // pods: status and deletes of its own pods only
    let pod = |name: &str, node: &str| json!({"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}});
    admin(&s, Method::POST, PODS, Some(pod("on-n1", "n1"))).await;
    admin(&s, Method::POST, PODS, Some(pod("on-n2", "n2"))).await;
    for name in ["on-n1", "on-n2"] {
        let mut p = admin(&s, Method::GET, &format!("{PODS}/{name}"), None).await;
        p["status"]["phase"] = json!("Running");
        let (code, body) = call(
            &s,
            "tok-n1",
            Method::PUT,
            &format!("{PODS}/{name}/status"),
            Some(p),
        )
        .await;
        if name == "on-n1" {
            assert_eq!(code, StatusCode::OK, "{body}");
        } else {
            forbidden(
                code,
                &body,
                "pods \"on-n2\" is forbidden: node \"n1\" can only update pod status for pods with spec.nodeName set to itself",
            );
        }
    }
    // pods/status keeps the sent labels and annotations (kube's podStatusStrategy resets only
    // the spec and owner references): a kubelet may change the annotations, not the labels
    let on_n1 = format!("{PODS}/on-n1");
    let mut p = admin(&s, Method::GET, &on_n1, None).await;
    p["metadata"]["labels"] = json!({"app": "x"});
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::PUT,
        &format!("{on_n1}/status"),
        Some(p.clone()),
    )
    .await;
    forbidden(
        code,
        &body,
        "pods \"on-n1\" is forbidden: node \"n1\" cannot update labels through pod status",
    );
    let mut q = admin(&s, Method::GET, &on_n1, None).await;
    q["metadata"]["annotations"] = json!({"example.com/probe": "ok"});
    let updated = admin_as(&s, "tok-n1", Method::PUT, &format!("{on_n1}/status"), q).await;
    assert_eq!(
        updated["metadata"]["annotations"]["example.com/probe"], "ok",
        "{updated}"
    );
    assert!(updated["metadata"].get("labels").is_none(), "{updated}");
    let mut p = admin(&s, Method::GET, &on_n1, None).await;
    p["metadata"]["labels"] = json!({"app": "x"});
    let updated = admin(&s, Method::PUT, &format!("{on_n1}/status"), Some(p)).await;
    assert_eq!(updated["metadata"]["labels"], json!({"app": "x"}));
    // a status merge patch too: the labels are those of the patched object
    let updated = admin(
        &s,
        Method::PATCH,
        &format!("{on_n1}/status"),
        Some(json!({"metadata": {"labels": {"app": "y"}}})),
    )
    .await;
    assert_eq!(updated["metadata"]["labels"], json!({"app": "y"}));
    let (code, body) = call(&s, "tok-n1", Method::DELETE, &format!("{PODS}/on-n2"), None).await;
    forbidden(
        code,
        &body,
        "pods \"on-n2\" is forbidden: node \"n1\" can only delete pods with spec.nodeName set to itself",
    );
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        &format!("{PODS}/on-n2/eviction"),
        Some(json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "on-n2"}})),
    )
    .await;
    forbidden(
        code,
        &body,
        "pods \"on-n2\" is forbidden: node n1 can only evict pods with spec.nodeName set to itself",
    );
    let (code, body) = call(&s, "tok-n1", Method::DELETE, &format!("{PODS}/on-n1"), None).await;
    assert_eq!(code, StatusCode::OK, "{body}");

    // a claim of one of its pods: its status capacity and conditions, nothing else (the
    // claim's status strategy takes the sent metadata, which NodeRestriction compares)
    admin(&s, Method::POST, PVCS, Some(claim("data", Some(""), "1Gi"))).await;
    let mut user = pod("uses-data", "n1");
    user["spec"]["volumes"] =
        json!([{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]);
    admin(&s, Method::POST, PODS, Some(user)).await;
    let data_status = format!("{PVCS}/data/status");
    let grown = wait_ok(
        &s,
        "tok-n1",
        Method::PATCH,
        &data_status,
        json!({"status": {"capacity": {"storage": "1Gi"}}}),
    )
    .await;
    assert_eq!(grown["status"]["capacity"]["storage"], "1Gi", "{grown}");
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::PATCH,
        &data_status,
        Some(json!({"metadata": {"labels": {"stolen": "yes"}}})),
    )
    .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    let msg = body["message"].as_str().unwrap();
    assert!(
        msg.starts_with("persistentvolumeclaims \"data\" is forbidden: node \"n1\" is not allowed to update fields other than status.quantity and status.conditions: "),
        "{msg}"
    );
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::PATCH,
        &format!("{PVCS}/data"),
        Some(json!({"metadata": {"labels": {"stolen": "yes"}}})),
    )
    .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    // the admin may relabel it through its status
    let relabelled = admin(
        &s,
        Method::PATCH,
        &data_status,
        Some(json!({"metadata": {"labels": {"tier": "gold"}}})),
    )
    .await;
    assert_eq!(relabelled["metadata"]["labels"], json!({"tier": "gold"}));

    // mirror pods only, controlled by itself
    let (code, body) = call(&s, "tok-n1", Method::POST, PODS, Some(pod("plain", "n1"))).await;
    forbidden(
        code,
        &body,
        "pods \"plain\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create mirror pods",
    );
    let uid = n1["metadata"]["uid"].as_str().unwrap();
    let mirror = |name: &str, node: &str, controller: bool| {
        let mut p = pod(name, node);
        p["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "abc"});
        p["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": uid, "controller": controller}]);
        p
    };
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        PODS,
        Some(mirror("m", "n2", true)),
    )
    .await;
    forbidden(
        code,
        &body,
        "pods \"m\" is forbidden: node \"n1\" can only create pods with spec.nodeName set to itself",
    );
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        PODS,
        Some(mirror("m", "n1", false)),
    )
    .await;
    forbidden(
        code,
        &body,
        "pods \"m\" is forbidden: node \"n1\" can only create pods with a controller owner reference set to itself",
    );
    // (secrets are refused first by ServiceAccount, which runs before NodeRestriction)
    let mut configured = mirror("m", "n1", true);
    configured["spec"]["volumes"] = json!([{"name": "v", "configMap": {"name": "cm"}}]);
    let (code, body) = call(&s, "tok-n1", Method::POST, PODS, Some(configured)).await;
    forbidden(
        code,
        &body,
        "pods \"m\" is forbidden: node \"n1\" can not create pods that reference configmaps",
    );
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        PODS,
        Some(mirror("m", "n1", true)),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{body}");

    // service account tokens: bound to one of its own pods only
    admin(
        &s,
        Method::POST,
        "/api/v1/namespaces/default/serviceaccounts",
        Some(json!({"metadata": {"name": "app"}})),
    )
    .await;
    let sa_pod = |name: &str, node: &str| {
        let mut p = pod(name, node);
        p["spec"]["serviceAccountName"] = json!("app");
        p
    };
    let mine = admin(&s, Method::POST, PODS, Some(sa_pod("app-n1", "n1"))).await;
    let theirs = admin(&s, Method::POST, PODS, Some(sa_pod("app-n2", "n2"))).await;
    const TOKEN: &str = "/api/v1/namespaces/default/serviceaccounts/app/token";
    let request_for = |bound: Option<&Value>, audiences: Value| {
        let mut r = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"audiences": audiences}});
        if let Some(p) = bound {
            r["spec"]["boundObjectRef"] = json!({"apiVersion": "v1", "kind": "Pod", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]});
        }
        r
    };
    let request = |bound: Option<&Value>| request_for(bound, json!([]));
    let (code, body) = call(&s, "tok-n1", Method::POST, TOKEN, Some(request(None))).await;
    forbidden(
        code,
        &body,
        "serviceaccounts \"app\" is forbidden: node requested token not bound to a pod",
    );
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        TOKEN,
        Some(request(Some(&theirs))),
    )
    .await;
    forbidden(
        code,
        &body,
        "serviceaccounts \"app\" is forbidden: node requested token bound to a pod scheduled on a different node",
    );
    // ServiceAccountNodeAudienceRestriction: one audience at most, one the pod uses (its
    // kube-api-access volume's token has none, i.e. "")
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        TOKEN,
        Some(request(Some(&mine))),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{body}");
    assert!(body["status"]["token"].is_string(), "{body}");
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        TOKEN,
        Some(request_for(Some(&mine), json!(["vault"]))),
    )
    .await;
    forbidden(
        code,
        &body,
        "serviceaccounts \"app\" is forbidden: audience \"vault\" not found in pod spec volume",
    );
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        TOKEN,
        Some(request_for(Some(&mine), json!(["a", "b"]))),
    )
    .await;
    forbidden(
        code,
        &body,
        "serviceaccounts \"app\" is forbidden: node may only request 0 or 1 audiences",
    );
    // a projected token of that audience, or a CSI driver asking for it, is a use
    let mut vault = sa_pod("vault-n1", "n1");
    vault["spec"]["volumes"] = json!([{"name": "t", "projected": {"sources": [
        {"serviceAccountToken": {"audience": "vault", "path": "token"}}]}}]);
    let vault = admin(&s, Method::POST, PODS, Some(vault)).await;
    admin_as(
        &s,
        "tok-n1",
        Method::POST,
        TOKEN,
        request_for(Some(&vault), json!(["vault"])),
    )
    .await;
    admin(
        &s,
        Method::POST,
        "/apis/storage.k8s.io/v1/csidrivers",
        Some(json!({"metadata": {"name": "csi.example.com"},
                    "spec": {"tokenRequests": [{"audience": "csi-aud"}]}})),
    )
    .await;
    let mut csi = sa_pod("csi-n1", "n1");
    csi["spec"]["volumes"] = json!([{"name": "d", "csi": {"driver": "csi.example.com"}}]);
    let csi = admin(&s, Method::POST, PODS, Some(csi)).await;
    admin_as(
        &s,
        "tok-n1",
        Method::POST,
        TOKEN,
        request_for(Some(&csi), json!(["csi-aud"])),
    )
    .await;
    let (code, body) = call(
        &s,
        "tok-n1",
        Method::POST,
        TOKEN,
        Some(request_for(Some(&csi), json!(["vault"]))),
    )
    .await;
    forbidden(
        code,
        &body,
        "serviceaccounts \"app\" is forbidden: audience \"vault\" not found in pod spec volume",
    );
}

/// A request as `token` that must succeed.
async fn admin_as(s: &Server, token: &str, method: Method, path: &str, body: Value) -> Value {
    let (code, b) = call(s, token, method.clone(), path, Some(body)).await;
    assert!(code.is_success(), "{method} {path}: {code} {b}");
    b
}

fn event(name: &str, ns: &str) -> Value {
    json!({
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns},
        "reason": "Test", "message": "m", "type": "Normal", "source": {"component": "test"}
    })
}

#[tokio::test]
async fn events_are_rate_limited() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("admission.yaml");
    std::fs::write(
        &cfg,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    apiVersion: eventratelimit.admission.k8s.io/v1alpha1\n    kind: Configuration\n    limits:\n    - type: Namespace\n      qps: 1\n      burst: 2\n      cacheSize: 10\n",
    )
    .unwrap();
    let s = Server::start_with(&[
        "--enable-admission-plugins",
        "EventRateLimit",
        "--admission-control-config-file",
        cfg.to_str().unwrap(),
    ]);
    let events = |ns: &str| format!("/api/v1/namespaces/{ns}/events");
    // dry runs are not counted
    for i in 0..5 {
        let path = format!("{}?dryRun=All", events("default"));
        admin(
            &s,
            Method::POST,
            &path,
            Some(event(&format!("dry{i}"), "default")),
        )
        .await;
    }
    // the burst passes, then the namespace's bucket is empty (it refills at 1/s)
    let mut refused = None;
    for i in 0..10 {
        let resp = s
            .client()
            .post(format!("{}{}", s.url, events("default")))
            .header("content-type", "application/json")
            .body(event(&format!("e{i}"), "default").to_string())
            .send()
            .await
            .unwrap();
        let (code, headers) = (resp.status(), resp.headers().clone());
        let body: Value = resp.json().await.unwrap();
        if i < 2 {
            assert_eq!(code, StatusCode::CREATED, "{body}");
        } else if code == StatusCode::TOO_MANY_REQUESTS {
            refused = Some((body, headers));
            break;
        }
    }
    let (body, headers) = refused.expect("the burst was exceeded");
    assert_eq!(body["reason"], "TooManyRequests", "{body}");
    assert_eq!(body["code"], 429);
    assert_eq!(
        body["message"],
        "Too many requests: limit reached on type Namespace for key default"
    );
    // kube's NewTooManyRequestsError: no details, hence no Retry-After
    assert!(body.get("details").is_none(), "{body}");
    assert!(headers.get("retry-after").is_none(), "{headers:?}");
    // another namespace has its own bucket; other kinds and events.k8s.io are not limited
    admin(
        &s,
        Method::POST,
        &events("kube-system"),
        Some(event("k", "kube-system")),
    )
    .await;
    admin(
        &s,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        Some(json!({"metadata": {"name": "cm"}})),
    )
    .await;
    admin(
        &s,
        Method::POST,
        "/apis/events.k8s.io/v1/namespaces/default/events",
        Some(json!({
            "metadata": {"name": "new-style"}, "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "example.com/c", "reportingInstance": "i", "action": "A",
            "reason": "R", "type": "Normal", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}
        })),
    )
    .await;
    // the bucket refills
    let started = std::time::Instant::now();
    loop {
        let (code, body) = call(
            &s,
            "admin",
            Method::POST,
            &events("default"),
            Some(event("later", "default")),
        )
        .await;
        if code == StatusCode::CREATED {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "{code} {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // a configuration kube refuses refuses to start
    std::fs::write(
        &cfg,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    apiVersion: eventratelimit.admission.k8s.io/v1alpha1\n    kind: Configuration\n    limits:\n    - type: Server\n      qps: 1\n",
    )
    .unwrap();
    let out = std::process::Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .args(["serve", "--data-dir"])
        .arg(dir.path().join("data"))
        .args(["--listen", &format!("127.0.0.1:{}", support::free_port())])
        .args([
            "--enable-admission-plugins",
            "EventRateLimit",
            "--admission-control-config-file",
        ])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = support::stderr(&out);
    assert!(
        err.contains("couldn't init admission plugin \"EventRateLimit\": limits[0].burst: Invalid value: 0: must be positive"),
        "{err}"
    );
}

/// An AdmissionConfiguration giving ImagePolicyWebhook `policy` (the `imagePolicy` object).
fn image_policy_config(dir: &std::path::Path, name: &str, policy: Value) -> std::path::PathBuf {
    let cfg = dir.join(format!("{name}.json"));
    let doc = json!({
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "AdmissionConfiguration",
        "plugins": [{"name": "ImagePolicyWebhook", "configuration": {"imagePolicy": policy}}]
    });
    std::fs::write(&cfg, doc.to_string()).unwrap();
    cfg
}

fn webhook_kubeconfig(dir: &std::path::Path, name: &str, port: u16) -> std::path::PathBuf {
    webhook_kubeconfig_ca(dir, name, port, "images")
}

fn webhook_kubeconfig_ca(
    dir: &std::path::Path,
    name: &str,
    port: u16,
    ca_name: &str,
) -> std::path::PathBuf {
    let kc = dir.join(format!("{name}.kubeconfig"));
    let ca = dir.join(format!("{ca_name}-ca.crt"));
    std::fs::write(
        &kc,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:{port}/review\n    certificate-authority: {}\nusers:\n- name: apiserver\n  user: {{}}\ncontexts:\n- name: w\n  context: {{cluster: w, user: apiserver}}\ncurrent-context: w\n", ca.display()),
    )
    .unwrap();
    kc
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_are_reviewed_by_the_webhook() {
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let log = seen.clone();
    let port = support::tls_server(
        dir.path(),
        "images",
        Arc::new(move |_path: &str, body: &[u8]| {
            let review: Value = serde_json::from_slice(body).unwrap_or_default();
            log.lock().unwrap().push(review.clone());
            let images: Vec<String> = review["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["image"].as_str().map(str::to_string))
                .collect();
            let status = if images.iter().any(|i| i.starts_with("evil")) {
                json!({"allowed": false, "reason": "evil is not allowed"})
            } else if images.iter().any(|i| i.starts_with("bad")) {
                json!({"allowed": false})
            } else {
                json!({"allowed": true})
            };
            json!({"apiVersion": "imagepolicy.k8s.io/v1alpha1", "kind": "ImageReview", "status": status}).to_string()
        }),
    )
    .await;
    let kc = webhook_kubeconfig(dir.path(), "images", port);
    let cfg = image_policy_config(
        dir.path(),
        "admission",
        json!({"kubeConfigFile": kc, "allowTTL": 50, "denyTTL": 50, "retryBackoff": 10, "defaultAllow": false}),
    );
    let s = Server::start_with(&[
        "--enable-admission-plugins",
        "ImagePolicyWebhook",
        "--admission-control-config-file",
        cfg.to_str().unwrap(),
    ]);
    const PODS: &str = "/api/v1/namespaces/default/pods";
    let pod = |name: &str, image: &str| {
        json!({
            "metadata": {"name": name, "annotations": {"a.image-policy.k8s.io/ticket": "42", "other": "x"}},
            "spec": {"initContainers": [{"name": "i", "image": "init:1"}], "containers": [{"name": "c", "image": image}]}
        })
    };
    admin(&s, Method::POST, PODS, Some(pod("good", "nginx:1"))).await;
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0]["apiVersion"], "imagepolicy.k8s.io/v1alpha1");
        assert_eq!(seen[0]["kind"], "ImageReview");
        assert_eq!(
            seen[0]["spec"],
            json!({
                "containers": [{"image": "nginx:1"}, {"image": "init:1"}],
                "annotations": {"a.image-policy.k8s.io/ticket": "42"},
                "namespace": "default"
            })
        );
    }
    let (code, body) = call(&s, "admin", Method::POST, PODS, Some(pod("e", "evil:1"))).await;
    forbidden(
        code,
        &body,
        "pods \"e\" is forbidden: image policy webhook backend denied one or more images: evil is not allowed",
    );
    let (code, body) = call(&s, "admin", Method::POST, PODS, Some(pod("b", "bad:1"))).await;
    forbidden(
        code,
        &body,
        "pods \"b\" is forbidden: one or more images rejected by webhook backend",
    );
    // the same review again is answered from the cache
    let before = seen.lock().unwrap().len();
    let (code, _) = call(&s, "admin", Method::POST, PODS, Some(pod("b2", "bad:1"))).await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    admin(&s, Method::POST, PODS, Some(pod("good2", "nginx:1"))).await;
    assert_eq!(seen.lock().unwrap().len(), before, "cached answers");
    // updates are reviewed too; status writes are not
    let mut p = admin(&s, Method::GET, &format!("{PODS}/good"), None).await;
    p["spec"]["containers"][0]["image"] = json!("evil:2");
    let (code, body) = call(&s, "admin", Method::PUT, &format!("{PODS}/good"), Some(p)).await;
    forbidden(
        code,
        &body,
        "pods \"good\" is forbidden: image policy webhook backend denied one or more images: evil is not allowed",
    );
    let mut p = admin(&s, Method::GET, &format!("{PODS}/good"), None).await;
    p["status"]["phase"] = json!("Running");
    admin(&s, Method::PUT, &format!("{PODS}/good/status"), Some(p)).await;
    drop(s);

    // a backend that cannot be reached: refused, or admitted with defaultAllow
    let dead = webhook_kubeconfig(dir.path(), "dead", support::free_port());
    for allow in [false, true] {
        let cfg = image_policy_config(
            dir.path(),
            &format!("dead-{allow}"),
            json!({"kubeConfigFile": dead, "retryBackoff": 10, "defaultAllow": allow}),
        );
        let s = Server::start_with(&[
            "--enable-admission-plugins",
            "ImagePolicyWebhook",
            "--admission-control-config-file",
            cfg.to_str().unwrap(),
        ]);
        let (code, body) = call(&s, "admin", Method::POST, PODS, Some(pod("p", "nginx:1"))).await;
        if allow {
            assert_eq!(code, StatusCode::CREATED, "{body}");
        } else {
            assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
            let m = body["message"].as_str().unwrap();
            assert!(m.starts_with("pods \"p\" is forbidden: "), "{m}");
        }
    }

    // configurations kube refuses
    let out_of_range = image_policy_config(
        dir.path(),
        "range",
        json!({"kubeConfigFile": dead, "allowTTL": 2400}),
    );
    let out = std::process::Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .args(["serve", "--data-dir"])
        .arg(dir.path().join("data"))
        .args(["--listen", &format!("127.0.0.1:{}", support::free_port())])
        .args([
            "--enable-admission-plugins",
            "ImagePolicyWebhook",
            "--admission-control-config-file",
        ])
        .arg(&out_of_range)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = support::stderr(&out);
    assert!(
        err.contains("couldn't init admission plugin \"ImagePolicyWebhook\": valid value is between 1s and 30m0s, got 40m0s"),
        "{err}"
    );
}

/// Polls (bounded) until GET `path` answers 404.
async fn wait_gone(s: &Server, path: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (code, body) = call(s, "admin", Method::GET, path, None).await;
        if code == StatusCode::NOT_FOUND {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{path} still there: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn protected_volumes_go_once_unused() {
    let (s, _dir) = start(&[]);
    const PODS: &str = "/api/v1/namespaces/default/pods";
    admin(&s, Method::POST, PVCS, Some(claim("used", None, "1Gi"))).await;
    admin(&s, Method::POST, PVCS, Some(claim("unused", None, "1Gi"))).await;
    admin(
        &s,
        Method::POST,
        PODS,
        Some(json!({"metadata": {"name": "user"}, "spec": {
            "nodeName": "n1",
            "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "used"}}]
        }})),
    )
    .await;
    admin(&s, Method::DELETE, &format!("{PVCS}/unused"), None).await;
    wait_gone(&s, &format!("{PVCS}/unused")).await;
    // a claim a scheduled pod uses stays, being deleted, until the pod is gone
    admin(&s, Method::DELETE, &format!("{PVCS}/used"), None).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pvc = admin(&s, Method::GET, &format!("{PVCS}/used"), None).await;
    assert!(pvc["metadata"]["deletionTimestamp"].is_string(), "{pvc}");
    assert_eq!(
        pvc["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    admin(
        &s,
        Method::DELETE,
        &format!("{PODS}/user?gracePeriodSeconds=0"),
        None,
    )
    .await;
    wait_gone(&s, &format!("{PVCS}/used")).await;
    // a volume that is not bound goes at once; a bound one stays
    let pv = |name: &str| {
        json!({
            "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/x"}}
        })
    };
    const PVS: &str = "/api/v1/persistentvolumes";
    admin(&s, Method::POST, PVS, Some(pv("free"))).await;
    admin(&s, Method::POST, PVS, Some(pv("bound"))).await;
    let mut b = admin(&s, Method::GET, &format!("{PVS}/bound"), None).await;
    b["status"] = json!({"phase": "Bound"});
    admin(&s, Method::PUT, &format!("{PVS}/bound/status"), Some(b)).await;
    admin(&s, Method::DELETE, &format!("{PVS}/free"), None).await;
    admin(&s, Method::DELETE, &format!("{PVS}/bound"), None).await;
    wait_gone(&s, &format!("{PVS}/free")).await;
    let b = admin(&s, Method::GET, &format!("{PVS}/bound"), None).await;
    assert!(b["metadata"]["deletionTimestamp"].is_string(), "{b}");
    // a namespace with claims is emptied and goes
    admin(
        &s,
        Method::POST,
        "/api/v1/namespaces",
        Some(json!({"metadata": {"name": "gone"}})),
    )
    .await;
    let mut c = claim("c", None, "1Gi");
    c["metadata"]["namespace"] = json!("gone");
    admin(
        &s,
        Method::POST,
        "/api/v1/namespaces/gone/persistentvolumeclaims",
        Some(c),
    )
    .await;
    admin(&s, Method::DELETE, "/api/v1/namespaces/gone", None).await;
    wait_gone(&s, "/api/v1/namespaces/gone").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_reviews_are_retried_on_server_errors() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    // the first two calls fail with 500; "forbidden" images always get 403
    let port = support::tls_server_with_status(
        dir.path(),
        "flaky",
        Arc::new(move |_path: &str, body: &[u8]| {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let text = String::from_utf8_lossy(body);
            if text.contains("forbidden") {
                return (403, "no".into());
            }
            if text.contains("broken") {
                return (500, "down".into());
            }
            if n < 2 {
                return (500, "try again".into());
            }
            (200, json!({"status": {"allowed": true}}).to_string())
        }),
    )
    .await;
    let kc = webhook_kubeconfig_ca(dir.path(), "flaky", port, "flaky");
    let cfg = image_policy_config(
        dir.path(),
        "admission",
        json!({"kubeConfigFile": kc, "retryBackoff": 10, "allowTTL": -1}),
    );
    let s = Server::start_with(&[
        "--enable-admission-plugins",
        "ImagePolicyWebhook",
        "--admission-control-config-file",
        cfg.to_str().unwrap(),
    ]);
    const PODS: &str = "/api/v1/namespaces/default/pods";
    let pod = |name: &str, image: &str| json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": image}]}});
    admin(&s, Method::POST, PODS, Some(pod("p", "nginx:1"))).await;
    assert_eq!(calls.load(Ordering::SeqCst), 3, "two retries");
    // with allowTTL -1 nothing is cached
    admin(&s, Method::POST, PODS, Some(pod("q", "nginx:1"))).await;
    assert_eq!(calls.load(Ordering::SeqCst), 4);
    // a 4xx answer is not retried and refuses the pod
    let (code, body) = call(
        &s,
        "admin",
        Method::POST,
        PODS,
        Some(pod("r", "forbidden:1")),
    )
    .await;
    forbidden(code, &body, "pods \"r\" is forbidden: no");
    assert_eq!(calls.load(Ordering::SeqCst), 5);
    // a backend that keeps failing: five tries, then client-go's text for the answer
    let (code, body) = call(&s, "admin", Method::POST, PODS, Some(pod("t", "broken:1"))).await;
    forbidden(
        code,
        &body,
        "pods \"t\" is forbidden: an error on the server (\"down\") has prevented the request from succeeding",
    );
    assert_eq!(calls.load(Ordering::SeqCst), 10);
}
