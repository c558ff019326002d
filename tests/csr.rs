//! The seed's CertificateSigningRequest flow end to end, against the real binary over HTTPS
//! with real kubectl and openssl: a key and request for `myuser`, created (the requester's
//! identity recorded, whatever the body says, and kept on updates), approved with
//! `kubectl certificate approve`, signed by `csrsigning` with the client CA (issuer, subject,
//! usages, duration checked), then used in a kubeconfig that authenticates as `myuser` (403
//! before a Role and RoleBinding, allowed after). Also: a bad signature (422), `kubectl
//! certificate deny` (never signed), kubelet client requests auto-approved by `csrapproving`
//! (a node renewing its own, a bootstrap token) once the ClusterRoles are bound, signer rules
//! that fail a request, and `csrcleaner` removing old requests (the server restarted under
//! `faketime` 25 hours later).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};
use support::Server;

fn b64() -> base64::engine::general_purpose::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// An RSA key and a PEM request for `subj` made by openssl: (key path, request PEM).
fn openssl_request(dir: &Path, name: &str, subj: &str) -> (PathBuf, String) {
    let key = dir.join(format!("{name}.key"));
    let csr = dir.join(format!("{name}.csr"));
    let ok = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(&["genrsa", "-out", key.to_str().unwrap(), "2048"]);
    ok(&[
        "req",
        "-new",
        "-key",
        key.to_str().unwrap(),
        "-out",
        csr.to_str().unwrap(),
        "-subj",
        subj,
    ]);
    (key, std::fs::read_to_string(csr).unwrap())
}

fn csr_object(name: &str, pem: &[u8], signer: &str, usages: &[&str], exp: Option<i64>) -> Value {
    let mut spec = json!({
        "request": b64().encode(pem),
        "signerName": signer,
        "usages": usages,
    });
    if let Some(e) = exp {
        spec["expirationSeconds"] = json!(e);
    }
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name}, "spec": spec})
}

fn get(s: &Server, name: &str) -> Value {
    serde_json::from_str(&s.ok(&["get", "csr", name, "-o", "json"])).unwrap()
}

fn condition<'a>(csr: &'a Value, t: &str) -> Option<&'a Value> {
    csr.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == t)
}

/// Polls the request until `pred` holds (bounded).
fn wait_for(s: &Server, name: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let csr = get(s, name);
        if pred(&csr) {
            return csr;
        }
        assert!(Instant::now() < deadline, "{name}: no {what}: {csr:#}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn certificate(csr: &Value) -> Vec<u8> {
    let pem = b64()
        .decode(csr["status"]["certificate"].as_str().unwrap())
        .unwrap();
    let text = String::from_utf8(pem).unwrap();
    assert!(text.starts_with("-----BEGIN CERTIFICATE-----\n"), "{text}");
    let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    b64().decode(body).unwrap()
}

fn kubeconfig(s: &Server, dir: &Path, user: &str, cert: &Path, key: &Path) -> PathBuf {
    let path = dir.join(format!("{user}.kubeconfig"));
    let ca = s.dir.path().join("ca.crt");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: rafter\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: {user}\n  user:\n    client-certificate: {}\n    client-key: {}\ncontexts:\n- name: {user}\n  context:\n    cluster: rafter\n    user: {user}\n    namespace: default\ncurrent-context: {user}\n",
        s.url,
        ca.display(),
        cert.display(),
        key.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn unix(t: &x509_parser::time::ASN1Time) -> i64 {
    t.timestamp()
}

#[test]
fn seed_flow_approve_sign_authenticate_deny_autoapprove_and_clean() {
    let mut s = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();

    // --- The seed's flow: openssl key + request for myuser. ---
    let (key, pem) = openssl_request(dir, "myuser", "/CN=myuser");
    let mut body = csr_object(
        "myuser",
        pem.as_bytes(),
        "kubernetes.io/kube-apiserver-client",
        &["client auth"],
        Some(86400),
    );
    // What a client claims about the requester is replaced by who it is.
    body["spec"]["username"] = json!("mallory");
    body["spec"]["groups"] = json!(["system:masters", "evil"]);
    body["spec"]["uid"] = json!("forged");
    s.ok_stdin(&["create", "-f", "-"], &body.to_string());
    let csr = get(&s, "myuser");
    assert_eq!(csr["spec"]["username"], "admin");
    assert_eq!(
        csr["spec"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    assert!(csr["spec"].get("uid").is_none(), "{csr:#}");
    let row = s.ok(&["get", "csr", "myuser", "--no-headers"]);
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cols[2..],
        [
            "kubernetes.io/kube-apiserver-client",
            "admin",
            "24h",
            "Pending"
        ],
        "{row}"
    );

    // The spec cannot change afterwards: kube's PrepareForUpdate keeps the stored one.
    let mut changed = csr.clone();
    changed["spec"]["username"] = json!("mallory");
    changed["spec"]["groups"] = json!(["system:masters"]);
    changed["spec"]["usages"] = json!(["client auth", "server auth"]);
    s.ok_stdin(&["replace", "-f", "-"], &changed.to_string());
    let after = get(&s, "myuser");
    assert_eq!(after["spec"], csr["spec"], "the spec is immutable");

    // Not signed before approval.
    std::thread::sleep(Duration::from_secs(1));
    assert!(get(&s, "myuser")["status"].get("certificate").is_none());

    s.ok(&["certificate", "approve", "myuser"]);
    let csr = wait_for(&s, "myuser", "certificate", |c| {
        c["status"]["certificate"].is_string()
    });
    let approved = condition(&csr, "Approved").unwrap();
    assert_eq!(approved["reason"], "KubectlApprove");
    let der = certificate(&csr);
    let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
    assert_eq!(cert.subject().to_string(), "CN=myuser");
    assert_eq!(cert.issuer().to_string(), "CN=rafter-ca");
    let v = cert.validity();
    assert_eq!(unix(&v.not_after) - unix(&v.not_before), 86400);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let backdated = now - unix(&v.not_before);
    assert!(
        (295..=360).contains(&backdated),
        "NotBefore {backdated}s ago"
    );
    let eku = cert.extended_key_usage().unwrap().unwrap().value;
    assert!(eku.client_auth && !eku.server_auth && !eku.any);
    assert!(
        cert.key_usage().unwrap().is_none(),
        "only `client auth` asked"
    );
    assert!(!cert.basic_constraints().unwrap().unwrap().value.ca);
    assert!(s.ok(&["get", "csr", "myuser"]).contains("Approved,Issued"));

    // The certificate authenticates at once; RBAC decides the rest.
    let crt = dir.join("myuser.crt");
    std::fs::write(
        &crt,
        b64()
            .decode(csr["status"]["certificate"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    let cfg = kubeconfig(&s, dir, "myuser", &crt, &key);
    let who = support::kubectl_env(&cfg, &["auth", "whoami", "-o", "json"], &[]);
    assert!(who.status.success(), "{}", support::stderr(&who));
    let who: Value = serde_json::from_slice(&who.stdout).unwrap();
    assert_eq!(who["status"]["userInfo"]["username"], "myuser");
    let denied = support::kubectl_env(&cfg, &["get", "pods"], &[]);
    assert!(!denied.status.success());
    assert!(
        support::stderr(&denied).contains(
            "pods is forbidden: User \"myuser\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
        ),
        "{}",
        support::stderr(&denied)
    );
    s.ok(&[
        "create",
        "role",
        "pod-reader",
        "-n",
        "default",
        "--verb=get,list,watch",
        "--resource=pods",
    ]);
    s.ok(&[
        "create",
        "rolebinding",
        "read-pods",
        "-n",
        "default",
        "--role=pod-reader",
        "--user=myuser",
    ]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = support::kubectl_env(&cfg, &["get", "pods"], &[]);
        if out.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "{}", support::stderr(&out));
        std::thread::sleep(Duration::from_millis(200));
    }
    let other_ns = support::kubectl_env(&cfg, &["get", "pods", "-n", "kube-system"], &[]);
    assert!(!other_ns.status.success(), "the Role is namespaced");

    // --- A bad signature is a 422 with Go's text. ---
    let mut der = {
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        b64().decode(body).unwrap()
    };
    let last = der.len() - 1;
    der[last] ^= 0x01;
    let bad_pem = format!(
        "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
        b64().encode(&der)
    );
    let bad = csr_object(
        "bad",
        bad_pem.as_bytes(),
        "kubernetes.io/kube-apiserver-client",
        &["client auth"],
        None,
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let reply = rt.block_on(s.send(
        &s.client(),
        reqwest::Method::POST,
        "/apis/certificates.k8s.io/v1/certificatesigningrequests",
        "application/json",
        Some(bad.to_string().into_bytes()),
    ));
    assert_eq!(reply.code.as_u16(), 422, "{:#}", reply.body);
    let cause = &reply.body["details"]["causes"][0];
    assert_eq!(cause["field"], "spec.request");
    let message = cause["message"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid value: []byte{0x2d, 0x2d, 0x2d")
            && message.ends_with(": crypto/rsa: verification error"),
        "{message}"
    );

    // --- Denied requests are never signed. ---
    let (_, pem2) = openssl_request(dir, "denied", "/CN=denied-user");
    let obj = csr_object(
        "denied",
        pem2.as_bytes(),
        "kubernetes.io/kube-apiserver-client",
        &["client auth"],
        None,
    );
    s.ok_stdin(&["create", "-f", "-"], &obj.to_string());
    s.ok(&["certificate", "deny", "denied"]);
    let csr = get(&s, "denied");
    assert_eq!(condition(&csr, "Denied").unwrap()["reason"], "KubectlDeny");
    std::thread::sleep(Duration::from_secs(2));
    assert!(get(&s, "denied")["status"].get("certificate").is_none());
    assert!(s.ok(&["get", "csr", "denied"]).contains("Denied"));

    // --- Signer rules: a failing request gets a Failed condition, no certificate. ---
    let (_, pem3) = openssl_request(dir, "wrong-kubelet", "/O=not-nodes/CN=system:node:z");
    let obj = csr_object(
        "wrong-kubelet",
        pem3.as_bytes(),
        "kubernetes.io/kube-apiserver-client-kubelet",
        &["digital signature", "key encipherment", "client auth"],
        None,
    );
    s.ok_stdin(&["create", "-f", "-"], &obj.to_string());
    s.ok(&["certificate", "approve", "wrong-kubelet"]);
    let csr = wait_for(&s, "wrong-kubelet", "Failed condition", |c| {
        condition(c, "Failed").is_some()
    });
    let failed = condition(&csr, "Failed").unwrap();
    assert_eq!(failed["reason"], "SignerValidationFailure");
    assert_eq!(
        failed["message"],
        "subject organization is not system:nodes"
    );
    assert!(csr["status"].get("certificate").is_none());
    let (_, pem4) = openssl_request(dir, "server-usage", "/CN=someone");
    let obj = csr_object(
        "server-usage",
        pem4.as_bytes(),
        "kubernetes.io/kube-apiserver-client",
        &["client auth", "server auth"],
        None,
    );
    s.ok_stdin(&["create", "-f", "-"], &obj.to_string());
    s.ok(&["certificate", "approve", "server-usage"]);
    let csr = wait_for(&s, "server-usage", "Failed condition", |c| {
        condition(c, "Failed").is_some()
    });
    assert_eq!(
        condition(&csr, "Failed").unwrap()["message"],
        "invalid usage for client certificate: server auth"
    );

    // --- csrapproving: a node's own client certificate (selfnodeclient). ---
    let (_, pem5) = openssl_request(dir, "node-x", "/O=system:nodes/CN=system:node:x");
    let obj = csr_object(
        "node-x",
        pem5.as_bytes(),
        "kubernetes.io/kube-apiserver-client-kubelet",
        &["digital signature", "key encipherment", "client auth"],
        None,
    );
    s.ok_stdin(
        &[
            "--as=system:node:x",
            "--as-group=system:nodes",
            "create",
            "-f",
            "-",
        ],
        &obj.to_string(),
    );
    let csr = get(&s, "node-x");
    assert_eq!(csr["spec"]["username"], "system:node:x");
    assert_eq!(
        csr["spec"]["groups"],
        json!(["system:nodes", "system:authenticated"])
    );
    // No binding of the selfnodeclient ClusterRole yet: the request waits.
    std::thread::sleep(Duration::from_secs(2));
    assert!(get(&s, "node-x")["status"].get("conditions").is_none());
    s.ok(&[
        "create",
        "clusterrolebinding",
        "node-autoapprove-certificate-rotation",
        "--clusterrole=system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
        "--group=system:nodes",
    ]);
    let csr = wait_for(&s, "node-x", "auto-approved certificate", |c| {
        c["status"]["certificate"].is_string()
    });
    let approved = condition(&csr, "Approved").unwrap();
    assert_eq!(approved["reason"], "AutoApproved");
    assert_eq!(
        approved["message"],
        "Auto approving self kubelet client certificate after SubjectAccessReview."
    );
    let der = certificate(&csr);
    let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
    assert_eq!(
        cert.subject().to_string(),
        "O=system:nodes, CN=system:node:x"
    );
    let v = cert.validity();
    assert_eq!(
        unix(&v.not_after) - unix(&v.not_before),
        8760 * 3600,
        "--cluster-signing-duration's default"
    );

    // --- csrapproving: a bootstrap token's request for a node (nodeclient). ---
    for (name, role) in [
        ("kubeadm:kubelet-bootstrap", "system:node-bootstrapper"),
        (
            "kubeadm:node-autoapprove-bootstrap",
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
        ),
    ] {
        s.ok(&[
            "create",
            "clusterrolebinding",
            name,
            &format!("--clusterrole={role}"),
            "--group=system:bootstrappers",
        ]);
    }
    let (_, pem6) = openssl_request(dir, "node-y", "/O=system:nodes/CN=system:node:y");
    let obj = csr_object(
        "node-y",
        pem6.as_bytes(),
        "kubernetes.io/kube-apiserver-client-kubelet",
        &["digital signature", "key encipherment", "client auth"],
        None,
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = support::kubectl_env(
            &s.kubeconfig,
            &[
                "--as=system:bootstrap:abcdef",
                "--as-group=system:bootstrappers",
                "create",
                "-f",
                obj_file(dir, "node-y", &obj).to_str().unwrap(),
            ],
            &[],
        );
        if out.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "{}", support::stderr(&out));
        std::thread::sleep(Duration::from_millis(200));
    }
    let csr = wait_for(&s, "node-y", "auto-approved certificate", |c| {
        c["status"]["certificate"].is_string()
    });
    assert_eq!(
        condition(&csr, "Approved").unwrap()["message"],
        "Auto approving kubelet client certificate after SubjectAccessReview."
    );

    // A pending request, for the cleaner.
    let (_, pem7) = openssl_request(dir, "pending", "/CN=pending-user");
    let obj = csr_object(
        "pending",
        pem7.as_bytes(),
        "example.com/my-signer",
        &["client auth"],
        None,
    );
    s.ok_stdin(&["create", "-f", "-"], &obj.to_string());
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        get(&s, "pending")["status"].get("conditions").is_none(),
        "unknown signers are left alone"
    );

    // --- csrcleaner: 25 hours later every request is past its deadline. ---
    assert_eq!(s.ok(&["get", "csr", "-o", "name"]).lines().count(), 7);
    s.restart_wrapped(&[
        "env",
        "FAKETIME_DONT_FAKE_MONOTONIC=1",
        "faketime",
        "-f",
        "+25h",
    ]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = s.ok(&["get", "csr", "-o", "name"]);
        if left.trim().is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "not cleaned: {left}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn obj_file(dir: &Path, name: &str, obj: &Value) -> PathBuf {
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, obj.to_string()).unwrap();
    p
}

/// One hour is not enough for a pending request (24 h), but is for a denied one.
#[test]
fn cleaner_keeps_what_is_not_due() {
    let mut s = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    for name in ["young-pending", "old-denied"] {
        let (_, pem) = openssl_request(tmp.path(), name, &format!("/CN={name}"));
        let obj = csr_object(
            name,
            pem.as_bytes(),
            "kubernetes.io/kube-apiserver-client",
            &["client auth"],
            None,
        );
        s.ok_stdin(&["create", "-f", "-"], &obj.to_string());
    }
    s.ok(&["certificate", "deny", "old-denied"]);
    s.restart_wrapped(&[
        "env",
        "FAKETIME_DONT_FAKE_MONOTONIC=1",
        "faketime",
        "-f",
        "+2h",
    ]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = s.ok(&["get", "csr", "-o", "name"]);
        if !left.contains("old-denied") {
            assert!(left.contains("young-pending"), "{left}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "denied request not cleaned: {left}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    // Still there a moment later (the next pass is an hour away).
    std::thread::sleep(Duration::from_secs(2));
    assert!(s
        .ok(&["get", "csr", "-o", "name"])
        .contains("young-pending"));
}
