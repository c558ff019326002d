//! Authentication end to end over real HTTPS, one row per authenticator: client certificates,
//! static tokens, service-account tokens (`kubectl create token`, pod-bound, revoked by
//! deleting the ServiceAccount or Pod, tampered), an exec credential plugin, anonymous on and
//! off; `kubectl auth whoami` (SelfSubjectReview) and TokenReview report who a credential is.

mod support;

use std::path::{Path, PathBuf};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const TOKENS: &str = "static-token-1,alice,1001,\"dev,ops\"\nstatic-token-2,bob,1002\n";

/// A kubeconfig that trusts the server's CA and authenticates with `user` (YAML snippet).
fn kubeconfig(s: &Server, name: &str, user: &str) -> PathBuf {
    let path = s.dir.path().join(format!("{name}.kubeconfig"));
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\nusers:\n- name: u\n  user:\n{user}\n",
        s.url,
        s.dir.path().join("ca.crt").display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn token_kubeconfig(s: &Server, name: &str, token: &str) -> PathBuf {
    kubeconfig(s, name, &format!("    token: {token}"))
}

/// `kubectl auth whoami -o json` with a kubeconfig: the SelfSubjectReview's userInfo.
fn whoami(kc: &Path) -> Result<Value, String> {
    let out = support::kubectl_env(kc, &["auth", "whoami", "-o", "json"], &[]);
    if !out.status.success() {
        return Err(support::stderr(&out));
    }
    let v: Value = serde_json::from_str(&support::stdout(&out)).unwrap();
    Ok(v["status"]["userInfo"].clone())
}

async fn get_with(
    c: &reqwest::Client,
    s: &Server,
    path: &str,
    token: Option<&str>,
) -> (StatusCode, Value) {
    let mut r = c.get(format!("{}{path}", s.url));
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    let resp = r.send().await.unwrap();
    let code = resp.status();
    let text = resp.text().await.unwrap();
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn unauthorized() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
}

#[tokio::test]
async fn every_authenticator() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).unwrap();
    let s = Server::start_with(&["--token-auth-file", tokens.to_str().unwrap()]);
    let admin = s.client();
    let bare = s.anonymous_client();

    // x509: CN is the user, O the groups.
    let me = whoami(&s.kubeconfig).unwrap();
    assert_eq!(
        me,
        json!({"username": "admin", "groups": ["system:masters", "system:authenticated"]})
    );

    // Static tokens.
    let alice = token_kubeconfig(&s, "alice", "static-token-1");
    assert_eq!(
        whoami(&alice).unwrap(),
        json!({"username": "alice", "uid": "1001", "groups": ["dev", "ops", "system:authenticated"]})
    );
    // Authenticated users may use discovery (system:discovery).
    let out = support::kubectl_env(&alice, &["get", "--raw", "/apis"], &[]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    // A wrong token is a 401, never anonymous.
    let wrong = token_kubeconfig(&s, "wrong", "static-token-3");
    assert!(whoami(&wrong).unwrap_err().contains("Unauthorized"));
    let (code, body) = get_with(&bare, &s, "/api/v1/namespaces", Some("garbage")).await;
    assert_eq!((code, body), (StatusCode::UNAUTHORIZED, unauthorized()));

    // Exec credential plugin printing a static token.
    let plugin = dir.path().join("cred.sh");
    std::fs::write(
        &plugin,
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"static-token-2\"}}'\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&plugin)
        .status()
        .unwrap();
    let exec = kubeconfig(
        &s,
        "exec",
        &format!(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never",
            plugin.display()
        ),
    );
    assert_eq!(whoami(&exec).unwrap()["username"], "bob");

    // Service-account tokens: kubectl create token, then --token.
    s.ok(&["create", "serviceaccount", "builder"]);
    let token = s.ok(&["create", "token", "builder"]).trim().to_string();
    let sa_kc = token_kubeconfig(&s, "sa", &token);
    let me = whoami(&sa_kc).unwrap();
    assert_eq!(me["username"], "system:serviceaccount:default:builder");
    assert_eq!(
        me["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    assert!(me["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap()
        .starts_with("JTI="));
    // Tampered: the signature no longer matches.
    let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
    let flipped = if parts[2].starts_with('A') { "B" } else { "A" };
    parts[2] = format!("{flipped}{}", &parts[2][1..]);
    let (code, _) = get_with(&bare, &s, "/api/v1/namespaces", Some(&parts.join("."))).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    let (code, _) = get_with(&bare, &s, "/api/v1/namespaces", Some("a.b.c")).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);

    // TokenReview of that token, and of garbage.
    let r = s
        .json(&admin, Method::POST, "/apis/authentication.k8s.io/v1/tokenreviews",
            Some(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})))
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["status"]["authenticated"], true);
    assert_eq!(
        r.body["status"]["user"]["username"],
        "system:serviceaccount:default:builder"
    );
    assert_eq!(
        r.body["status"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let r = s
        .json(
            &admin,
            Method::POST,
            "/apis/authentication.k8s.io/v1/tokenreviews",
            Some(json!({"kind": "TokenReview", "spec": {"token": "nope"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED);
    assert!(r.body["status"].get("authenticated").is_none());
    assert_eq!(r.body["status"]["error"], "invalid bearer token");
    // A token for another audience is not valid for the API.
    let other = s
        .ok(&["create", "token", "builder", "--audience", "vault"])
        .trim()
        .to_string();
    let (code, _) = get_with(&bare, &s, "/api/v1/namespaces", Some(&other)).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);

    // Pod-bound tokens carry the pod and die with it.
    s.ok_stdin(
        &["apply", "-f", "-"],
        r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "runner"},
        "spec": {"serviceAccountName": "builder", "containers": [{"name": "c", "image": "x:1"}]}}"#,
    );
    let bound = s
        .ok(&[
            "create",
            "token",
            "builder",
            "--bound-object-kind",
            "Pod",
            "--bound-object-name",
            "runner",
        ])
        .trim()
        .to_string();
    let bound_kc = token_kubeconfig(&s, "bound", &bound);
    let me = whoami(&bound_kc).unwrap();
    assert_eq!(
        me["extra"]["authentication.kubernetes.io/pod-name"],
        json!(["runner"])
    );
    s.ok(&["delete", "pod", "runner", "--wait=false"]);
    assert!(whoami(&bound_kc).unwrap_err().contains("Unauthorized"));
    // Revoked: deleting the ServiceAccount invalidates its tokens.
    s.ok(&["delete", "serviceaccount", "builder"]);
    assert!(whoami(&sa_kc).unwrap_err().contains("Unauthorized"));
    let r = s
        .json(&admin, Method::POST, "/api/v1/namespaces/default/serviceaccounts/builder/token",
            Some(json!({"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "spec": {}})))
        .await;
    assert_eq!(r.code, StatusCode::NOT_FOUND, "{}", r.body);
    s.ok(&["create", "serviceaccount", "short"]);
    let r = s
        .json(
            &admin,
            Method::POST,
            "/api/v1/namespaces/default/serviceaccounts/short/token",
            Some(json!({"spec": {"expirationSeconds": 60}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);

    // The issuer's discovery documents.
    let r = s
        .json(
            &admin,
            Method::GET,
            "/.well-known/openid-configuration",
            None,
        )
        .await;
    assert_eq!(
        r.body["issuer"],
        "https://kubernetes.default.svc.cluster.local"
    );
    assert_eq!(
        r.body["jwks_uri"],
        "https://kubernetes.default.svc.cluster.local/openid/v1/jwks"
    );
    let r = s.json(&admin, Method::GET, "/openid/v1/jwks", None).await;
    assert_eq!(r.body["keys"][0]["alg"], "ES256");

    // Anonymous: health and version only (system:public-info-viewer); discovery is for
    // authenticated users (kube since 1.14).
    for path in ["/readyz", "/livez", "/healthz", "/version"] {
        let (code, _) = get_with(&bare, &s, path, None).await;
        assert_eq!(code, StatusCode::OK, "{path}");
    }
    for path in ["/api", "/apis", "/api/v1"] {
        let (code, _) = get_with(&bare, &s, path, None).await;
        assert_eq!(code, StatusCode::FORBIDDEN, "{path}");
    }
    let (code, body) = get_with(&bare, &s, "/api/v1/namespaces/default/secrets", None).await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    assert_eq!(
        body["message"],
        "secrets is forbidden: User \"system:anonymous\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\""
    );
    let (code, body) = get_with(&bare, &s, "/metrics", None).await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    assert_eq!(
        body["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""
    );
    let r = bare
        .delete(format!("{}/api/v1/namespaces/default", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    // Credentials never reach the log: nothing to check in stderr here (inherited); the
    // server logs failures by kind only (see src/authn).
}

#[tokio::test]
async fn anonymous_off() {
    let s = Server::start_with(&["--anonymous-auth=false"]);
    let bare = s.anonymous_client();
    let (code, body) = get_with(&bare, &s, "/readyz", None).await;
    assert_eq!((code, body), (StatusCode::UNAUTHORIZED, unauthorized()));
    // Certificates still work.
    let r = s
        .json(&s.client(), Method::GET, "/api/v1/namespaces", None)
        .await;
    assert_eq!(r.code, StatusCode::OK);
}

fn bootstrap_secret(id: &str, secret: &str, expiration: &str, extra: &[(&str, &str)]) -> Value {
    let mut data = json!({"token-id": id, "token-secret": secret, "expiration": expiration});
    for (k, v) in extra {
        data[*k] = json!(v);
    }
    json!({"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
           "metadata": {"name": format!("bootstrap-token-{id}"), "namespace": "kube-system"},
           "stringData": data})
}

#[tokio::test]
async fn bootstrap_tokens() {
    let s = Server::start_with(&[
        "--enable-bootstrap-token-auth",
        "--controllers=*,tokencleaner,bootstrapsigner",
    ]);
    let admin = s.client();
    let bare = s.anonymous_client();
    let later = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let secrets = "/api/v1/namespaces/kube-system/secrets";
    for body in [
        bootstrap_secret(
            "abcdef",
            "0123456789abcdef",
            &later,
            &[
                ("usage-bootstrap-authentication", "true"),
                ("usage-bootstrap-signing", "true"),
                ("auth-extra-groups", "system:bootstrappers:worker"),
            ],
        ),
        bootstrap_secret(
            "noauth",
            "0123456789abcdef",
            &later,
            &[("usage-bootstrap-signing", "true")],
        ),
        bootstrap_secret(
            "old000",
            "0123456789abcdef",
            "2020-01-01T00:00:00Z",
            &[("usage-bootstrap-authentication", "true")],
        ),
    ] {
        let r = s.json(&admin, Method::POST, secrets, Some(body)).await;
        assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    }
    let kc = token_kubeconfig(&s, "boot", "abcdef.0123456789abcdef");
    assert_eq!(
        whoami(&kc).unwrap(),
        json!({"username": "system:bootstrap:abcdef",
               "groups": ["system:bootstrappers", "system:bootstrappers:worker", "system:authenticated"]})
    );
    for bad in [
        "abcdef.0123456789abcdee",
        "noauth.0123456789abcdef",
        "old000.0123456789abcdef",
        "zzzzzz.0123456789abcdef",
    ] {
        let (code, _) = get_with(&bare, &s, "/api/v1/namespaces", Some(bad)).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED, "{bad}");
    }
    // The token cleaner deletes the expired token; the signer signs cluster-info.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-info"},
                    "data": {"kubeconfig": "apiVersion: v1\nkind: Config\n"}});
    let r = s
        .json(
            &admin,
            Method::POST,
            "/api/v1/namespaces/kube-public/configmaps",
            Some(cm),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let old = s
            .json(
                &admin,
                Method::GET,
                &format!("{secrets}/bootstrap-token-old000"),
                None,
            )
            .await;
        let info = s
            .json(
                &admin,
                Method::GET,
                "/api/v1/namespaces/kube-public/configmaps/cluster-info",
                None,
            )
            .await;
        let data = &info.body["data"];
        if old.code == StatusCode::NOT_FOUND && data.get("jws-kubeconfig-abcdef").is_some() {
            assert!(data.get("jws-kubeconfig-noauth").is_some(), "{data}");
            assert!(data.get("jws-kubeconfig-old000").is_none(), "{data}");
            let jws = data["jws-kubeconfig-abcdef"].as_str().unwrap();
            assert!(jws.contains(".."), "{jws}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "cleaner/signer did not act: {} {}",
            old.code,
            info.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
}

/// Access reviews answer with the authorizer's decision (RBAC's bootstrap policy here):
/// `kubectl auth can-i`, and kube's validation of the review bodies.
#[tokio::test]
async fn access_reviews() {
    let s = Server::start();
    let admin = s.client();
    assert_eq!(s.ok(&["auth", "can-i", "delete", "secrets"]).trim(), "yes");
    let list = s.ok(&["auth", "can-i", "--list"]);
    assert!(list.contains("*.*"), "{list}");
    let sar = |user: &str, body: Value| {
        let mut spec = body;
        if !user.is_empty() {
            spec["user"] = json!(user);
        }
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
    };
    let r = s
        .json(&admin, Method::POST, "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            Some(sar("alice", json!({"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "default"}}))))
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        r.body["status"],
        json!({"allowed": false}),
        "alice has no bindings"
    );
    let r = s
        .json(
            &admin,
            Method::POST,
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            Some(sar(
                "alice",
                json!({"groups": ["system:authenticated"], "nonResourceAttributes": {"verb": "get", "path": "/version"}}),
            )),
        )
        .await;
    assert_eq!(r.body["status"]["allowed"], true, "{}", r.body);
    let r = s
        .json(
            &admin,
            Method::POST,
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            Some(sar(
                "system:anonymous",
                json!({"nonResourceAttributes": {"verb": "get", "path": "/metrics"}}),
            )),
        )
        .await;
    assert_eq!(r.body["status"]["allowed"], false, "{}", r.body);
    let r = s
        .json(
            &admin,
            Method::POST,
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            Some(sar(
                "",
                json!({"nonResourceAttributes": {"verb": "get", "path": "/metrics"}}),
            )),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let r = s
        .json(
            &admin,
            Method::POST,
            "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
            Some(
                json!({"kind": "LocalSubjectAccessReview", "spec": {"user": "bob",
                "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "other"}}}),
            ),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let r = s
        .json(
            &admin,
            Method::POST,
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            Some(json!({"kind": "SelfSubjectAccessReview", "spec": {}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
}

/// A TokenReview webhook: `good-token` is user `webby`, anything else is refused. Returns
/// its kubeconfig and a request counter.
async fn start_webhook(dir: &Path) -> (PathBuf, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let port = support::tls_server(
        dir,
        "webhook",
        std::sync::Arc::new(move |_path: &str, body: &[u8]| {
            counter.fetch_add(1, Ordering::SeqCst);
            let review: Value = serde_json::from_slice(body).unwrap_or_default();
            let status = if review["spec"]["token"] == "good-token" {
                json!({"authenticated": true, "user": {"username": "webby", "uid": "w1",
                       "groups": ["hooked"], "extra": {"Scopes": ["a"]}}})
            } else {
                json!({"authenticated": false})
            };
            json!({"apiVersion": review["apiVersion"], "kind": "TokenReview", "status": status})
                .to_string()
        }),
    )
    .await;
    let kc = dir.join("webhook.kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:{port}/authenticate\n    certificate-authority: webhook-ca.crt\nusers:\n- name: apiserver\n  user: {{}}\ncontexts:\n- name: w\n  context: {{cluster: w, user: apiserver}}\ncurrent-context: w\n"
        ),
    )
    .unwrap();
    (kc, hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_webhook() {
    let dir = tempfile::tempdir().unwrap();
    let (kc, hits) = start_webhook(dir.path()).await;
    let s = Server::start_with(&[
        "--authentication-token-webhook-config-file",
        kc.to_str().unwrap(),
        "--authentication-token-webhook-cache-ttl",
        "60s",
    ]);
    let bare = s.anonymous_client();
    let user = token_kubeconfig(&s, "webby", "good-token");
    let me = whoami(&user).unwrap();
    assert_eq!(
        me,
        json!({"username": "webby", "uid": "w1", "groups": ["hooked", "system:authenticated"],
               "extra": {"Scopes": ["a"]}})
    );
    let (code, _) = get_with(&bare, &s, "/api/v1/namespaces", Some("other-token")).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    // Answers are cached: asking again does not reach the webhook.
    let before = hits.load(std::sync::atomic::Ordering::SeqCst);
    for _ in 0..3 {
        assert_eq!(
            get_with(&bare, &s, "/apis", Some("good-token")).await.0,
            StatusCode::OK
        );
        assert_eq!(
            get_with(&bare, &s, "/api/v1/namespaces", Some("other-token"))
                .await
                .0,
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), before);
}

#[tokio::test]
async fn token_webhook_down_is_401() {
    let dir = tempfile::tempdir().unwrap();
    let port = support::free_port();
    let kc = dir.path().join("down.kubeconfig");
    std::fs::write(
        &kc,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:{port}/\nusers:\n- name: u\n  user: {{}}\n"),
    )
    .unwrap();
    let s = Server::start_with(&[
        "--authentication-token-webhook-config-file",
        kc.to_str().unwrap(),
    ]);
    let (code, body) = get_with(
        &s.anonymous_client(),
        &s,
        "/api/v1/namespaces",
        Some("any-token"),
    )
    .await;
    assert_eq!((code, body), (StatusCode::UNAUTHORIZED, unauthorized()));
}

/// OIDC: an issuer on loopback (discovery + JWKS, ES256 key) signs ID tokens; claims map to
/// the user and groups with kube's prefixes; wrong audience, expired, wrong key and missing
/// required claims are 401.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oidc_id_tokens() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let point = key.public_key_raw().to_vec();
    let jwk = json!({"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "k1",
                     "x": b64.encode(&point[1..33]), "y": b64.encode(&point[33..65])});
    let issuer_port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let ip = issuer_port.clone();
    let port = support::tls_server(
        dir.path(),
        "oidc",
        std::sync::Arc::new(move |path: &str, _body: &[u8]| {
            let issuer = format!("https://127.0.0.1:{}", ip.get().copied().unwrap_or(0));
            if path == "/.well-known/openid-configuration" {
                json!({"issuer": issuer, "jwks_uri": format!("{issuer}/keys")}).to_string()
            } else {
                json!({"keys": [jwk]}).to_string()
            }
        }),
    )
    .await;
    issuer_port.set(port).unwrap();
    let issuer = format!("https://127.0.0.1:{port}");
    let ca = dir.path().join("oidc-ca.crt");
    let s = Server::start_with(&[
        "--oidc-issuer-url",
        &issuer,
        "--oidc-client-id",
        "rafter",
        "--oidc-groups-claim",
        "groups",
        "--oidc-groups-prefix",
        "oidc:",
        "--oidc-required-claim",
        "tenant=blue",
        "--oidc-ca-file",
        ca.to_str().unwrap(),
        "--oidc-signing-algs",
        "ES256",
    ]);
    let enc = jsonwebtoken::EncodingKey::from_ec_der(&key.serialize_der());
    let now = jiff::Timestamp::now().as_second();
    let sign = |claims: Value, kid: &str| {
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        h.kid = Some(kid.into());
        jsonwebtoken::encode(&h, &claims, &enc).unwrap()
    };
    let good = json!({"iss": issuer, "aud": "rafter", "sub": "u-42", "exp": now + 600, "iat": now,
                      "groups": ["dev", "ops"], "tenant": "blue", "email": "carol@example.com"});
    let me = whoami(&token_kubeconfig(&s, "oidc", &sign(good.clone(), "k1"))).unwrap();
    assert_eq!(
        me,
        json!({"username": format!("{issuer}#u-42"),
               "groups": ["oidc:dev", "oidc:ops", "system:authenticated"]})
    );
    let bare = s.anonymous_client();
    let mut bad_aud = good.clone();
    bad_aud["aud"] = json!("other");
    let mut expired = good.clone();
    expired["exp"] = json!(now - 10);
    let mut no_tenant = good.clone();
    no_tenant.as_object_mut().unwrap().remove("tenant");
    for (what, token) in [
        ("audience", sign(bad_aud, "k1")),
        ("expired", sign(expired, "k1")),
        ("required claim", sign(no_tenant, "k1")),
        ("unknown key", sign(good.clone(), "k2")),
    ] {
        let (code, _) = get_with(&bare, &s, "/api/v1/namespaces", Some(&token)).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED, "{what}");
    }
}

/// A CA and a client certificate it signed (CN, O...), written as `<name>-ca.crt`,
/// `<name>.crt`, `<name>.key`; returns the CA path.
fn client_pki(dir: &Path, name: &str, cn: &str, orgs: &[&str]) -> PathBuf {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let mut dn = rcgen::DistinguishedName::new();
    dn.push(rcgen::DnType::CommonName, format!("{name}-ca"));
    ca_params.distinguished_name = dn;
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    let mut dn = rcgen::DistinguishedName::new();
    dn.push(rcgen::DnType::CommonName, cn);
    for o in orgs {
        dn.push(rcgen::DnType::OrganizationName, *o);
    }
    p.distinguished_name = dn;
    p.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::write(dir.join(format!("{name}-ca.crt")), ca.pem()).unwrap();
    std::fs::write(dir.join(format!("{name}.crt")), cert.pem()).unwrap();
    std::fs::write(dir.join(format!("{name}.key")), key.serialize_pem()).unwrap();
    dir.join(format!("{name}-ca.crt"))
}

fn cert_client(s: &Server, dir: &Path, name: &str) -> reqwest::Client {
    let mut pem = std::fs::read(dir.join(format!("{name}.crt"))).unwrap();
    pem.extend(std::fs::read(dir.join(format!("{name}.key"))).unwrap());
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(
            reqwest::Certificate::from_pem(&std::fs::read(s.dir.path().join("ca.crt")).unwrap())
                .unwrap(),
        )
        .identity(reqwest::Identity::from_pem(&pem).unwrap())
        .build()
        .unwrap()
}

async fn self_review(
    c: &reqwest::Client,
    s: &Server,
    headers: &[(&str, &str)],
) -> reqwest::Result<(StatusCode, Value)> {
    let mut r = c
        .post(format!(
            "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
            s.url
        ))
        .header("content-type", "application/json")
        .body(r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let resp = r.send().await?;
    let code = resp.status();
    Ok((code, resp.json().await.unwrap_or(Value::Null)))
}

/// An authenticating proxy (request-header CA, allowed CN) names the user in headers; other
/// certificates' headers are ignored; `--client-ca-file` replaces the user CA.
#[tokio::test]
async fn request_header_proxy_and_client_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let proxy_ca = client_pki(d, "proxy", "front-proxy", &[]);
    client_pki(d, "rogue", "rogue-proxy", &[]);
    // The rogue proxy's CA is a different one; sign a not-allowed name with the proxy CA too.
    let s = Server::start_with(&[
        "--requestheader-client-ca-file",
        proxy_ca.to_str().unwrap(),
        "--requestheader-allowed-names",
        "front-proxy",
        "--requestheader-username-headers",
        "X-Remote-User",
        "--requestheader-group-headers",
        "X-Remote-Group",
        "--requestheader-extra-headers-prefix",
        "X-Remote-Extra-",
    ]);
    let proxy = cert_client(&s, d, "proxy");
    let (code, body) = self_review(
        &proxy,
        &s,
        &[
            ("X-Remote-User", "dave"),
            ("X-Remote-Group", "g1"),
            ("X-Remote-Group", "g2"),
            ("X-Remote-Extra-Example.com%2Fscope", "s1"),
        ],
    )
    .await
    .unwrap();
    assert_eq!(code, StatusCode::CREATED, "{body}");
    assert_eq!(
        body["status"]["userInfo"],
        json!({"username": "dave", "groups": ["g1", "g2", "system:authenticated"],
               "extra": {"example.com/scope": ["s1"]}})
    );
    // The admin certificate's headers are ignored: it stays admin.
    let (_, body) = self_review(&s.client(), &s, &[("X-Remote-User", "mallory")])
        .await
        .unwrap();
    assert_eq!(body["status"]["userInfo"]["username"], "admin");
    // A bare request with the headers is anonymous (and anonymous may not review itself).
    let (code, body) = self_review(&s.anonymous_client(), &s, &[("X-Remote-User", "mallory")])
        .await
        .unwrap();
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    // A certificate of another CA fails the handshake.
    assert!(self_review(
        &cert_client(&s, d, "rogue"),
        &s,
        &[("X-Remote-User", "mallory")]
    )
    .await
    .is_err());
    drop(s);

    // --client-ca-file: users of another CA; the data folder's admin certificate no longer
    // works (so the server is started by hand: the harness waits with the admin identity).
    let team_ca = client_pki(d, "team", "erin", &["team"]);
    let data = tempfile::tempdir().unwrap();
    let port = support::free_port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .args(["serve", "--data-dir", data.path().to_str().unwrap()])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--client-ca-file", team_ca.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("https://127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let ca_pem = loop {
        if let Ok(pem) = std::fs::read(data.path().join("ca.crt")) {
            let c = reqwest::Client::builder()
                .use_rustls_tls()
                .tls_built_in_root_certs(false)
                .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
                .build()
                .unwrap();
            if c.get(format!("{url}/readyz"))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                break pem;
            }
        }
        assert!(std::time::Instant::now() < deadline, "server did not start");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let with_identity = |crt: &Path, key: &Path| {
        let mut pem = std::fs::read(crt).unwrap();
        pem.extend(std::fs::read(key).unwrap());
        reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca_pem).unwrap())
            .identity(reqwest::Identity::from_pem(&pem).unwrap())
            .build()
            .unwrap()
    };
    let review = |c: reqwest::Client| {
        let url = url.clone();
        async move {
            c.post(format!(
                "{url}/apis/authentication.k8s.io/v1/selfsubjectreviews"
            ))
            .header("content-type", "application/json")
            .body(r#"{"kind":"SelfSubjectReview"}"#)
            .send()
            .await
        }
    };
    let erin = review(with_identity(&d.join("team.crt"), &d.join("team.key")))
        .await
        .unwrap();
    let body: Value = erin.json().await.unwrap();
    assert_eq!(
        body["status"]["userInfo"],
        json!({"username": "erin", "groups": ["team", "system:authenticated"]})
    );
    let admin = with_identity(
        &data.path().join("admin.crt"),
        &data.path().join("admin.key"),
    );
    assert!(
        review(admin).await.is_err(),
        "the data folder's CA is no longer trusted"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// Legacy token Secrets: the token controller fills them in; their token authenticates until
/// the Secret (or the ServiceAccount) is deleted; a Secret for a missing ServiceAccount goes.
#[tokio::test]
async fn legacy_token_secrets() {
    use base64::Engine;
    let s = Server::start();
    let admin = s.client();
    s.ok(&["create", "serviceaccount", "legacy"]);
    let secrets = "/api/v1/namespaces/default/secrets";
    for (name, sa) in [("legacy-token", "legacy"), ("orphan-token", "nobody")] {
        let r = s
            .json(&admin, Method::POST, secrets, Some(json!({"apiVersion": "v1", "kind": "Secret",
                "type": "kubernetes.io/service-account-token",
                "metadata": {"name": name, "annotations": {"kubernetes.io/service-account.name": sa}}})))
            .await;
        assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let token = loop {
        let r = s
            .json(
                &admin,
                Method::GET,
                &format!("{secrets}/legacy-token"),
                None,
            )
            .await;
        let orphan = s
            .json(
                &admin,
                Method::GET,
                &format!("{secrets}/orphan-token"),
                None,
            )
            .await;
        if let Some(t) = r.body.pointer("/data/token").and_then(Value::as_str) {
            if orphan.code == StatusCode::NOT_FOUND {
                assert!(r.body.pointer("/data/ca.crt").is_some());
                assert_eq!(
                    r.body
                        .pointer("/metadata/annotations/kubernetes.io~1service-account.uid")
                        .and_then(Value::as_str)
                        .map(str::len),
                    Some(36)
                );
                let raw = base64::engine::general_purpose::STANDARD.decode(t).unwrap();
                break String::from_utf8(raw).unwrap();
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "token controller did not act: {}",
            r.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    let kc = token_kubeconfig(&s, "legacy", &token);
    assert_eq!(
        whoami(&kc).unwrap()["username"],
        "system:serviceaccount:default:legacy"
    );
    s.ok(&["delete", "secret", "legacy-token"]);
    assert!(whoami(&kc).unwrap_err().contains("Unauthorized"));
}

/// An expired client certificate of the cluster CA fails the handshake; a refused bearer
/// token never reaches the log.
#[tokio::test]
async fn expired_certificates_and_quiet_logs() {
    let s = Server::start_wrapped(&["env", "RAFTER_LOG=info"], &[], true);
    let d = s.dir.path();
    let ca_key =
        rcgen::KeyPair::from_pem(&std::fs::read_to_string(d.join("ca.key")).unwrap()).unwrap();
    let ca = rcgen::CertificateParams::from_ca_cert_pem(
        &std::fs::read_to_string(d.join("ca.crt")).unwrap(),
    )
    .unwrap()
    .self_signed(&ca_key)
    .unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    let mut dn = rcgen::DistinguishedName::new();
    dn.push(rcgen::DnType::CommonName, "old-user");
    p.distinguished_name = dn;
    p.not_before = rcgen::date_time_ymd(2020, 1, 1);
    p.not_after = rcgen::date_time_ymd(2021, 1, 1);
    let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::write(d.join("old.crt"), cert.pem()).unwrap();
    std::fs::write(d.join("old.key"), key.serialize_pem()).unwrap();
    assert!(self_review(&cert_client(&s, d, "old"), &s, &[])
        .await
        .is_err());
    let secret = "supersecret-credential-0123456789";
    let (code, _) = get_with(
        &s.anonymous_client(),
        &s,
        "/api/v1/namespaces",
        Some(secret),
    )
    .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let log = std::fs::read_to_string(s.stderr_path.clone().unwrap()).unwrap_or_default();
    assert!(
        log.contains("authentication failed"),
        "nothing logged: {log}"
    );
    assert!(!log.contains(secret), "the credential reached the log");
}

/// `--authorization-mode`: AlwaysAllow turns anonymous authentication off (kube's rule);
/// AlwaysDeny refuses everyone but system:masters; an unknown mode is a start error.
#[tokio::test]
async fn authorization_modes() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).unwrap();
    let t = tokens.to_str().unwrap();
    let s = Server::start_with(&[
        "--token-auth-file",
        t,
        "--authorization-mode",
        "AlwaysAllow",
    ]);
    let (code, _) = get_with(&s.anonymous_client(), &s, "/readyz", None).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    let (code, _) = get_with(
        &s.anonymous_client(),
        &s,
        "/metrics",
        Some("static-token-2"),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    drop(s);
    let s = Server::start_with(&["--token-auth-file", t, "--authorization-mode", "AlwaysDeny"]);
    let (code, body) = get_with(
        &s.anonymous_client(),
        &s,
        "/api/v1/namespaces",
        Some("static-token-2"),
    )
    .await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    assert_eq!(
        body["message"],
        "namespaces is forbidden: User \"bob\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope: Everything is forbidden."
    );
    assert_eq!(
        s.json(&s.client(), Method::GET, "/api/v1/namespaces", None)
            .await
            .code,
        StatusCode::OK
    );
    drop(s);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .args([
            "serve",
            "--data-dir",
            dir.path().join("x").to_str().unwrap(),
            "--authorization-mode",
            "RBAC,Bogus",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"Bogus\" is not a valid mode"));
}

/// A service-account token past its `exp` (signed with the replica's own key) is a 401.
#[tokio::test]
async fn expired_service_account_token() {
    let s = Server::start();
    s.ok(&["create", "serviceaccount", "late"]);
    let uid = s.ok(&["get", "sa", "late", "-o", "jsonpath={.metadata.uid}"]);
    let key = jsonwebtoken::EncodingKey::from_ec_pem(
        &std::fs::read(s.dir.path().join("sa.key")).unwrap(),
    )
    .unwrap();
    let now = jiff::Timestamp::now().as_second();
    let iss = "https://kubernetes.default.svc.cluster.local";
    let claims = |exp: i64| {
        json!({"aud": [iss], "exp": exp, "iat": now - 700, "nbf": now - 700, "iss": iss, "jti": "j1",
               "kubernetes.io": {"namespace": "default", "serviceaccount": {"name": "late", "uid": uid}},
               "sub": "system:serviceaccount:default:late"})
    };
    let sign = |c: Value| {
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256),
            &c,
            &key,
        )
        .unwrap()
    };
    let c = s.anonymous_client();
    let (code, _) = get_with(&c, &s, "/apis", Some(&sign(claims(now + 600)))).await;
    assert_eq!(
        code,
        StatusCode::OK,
        "a fresh token of the same shape works"
    );
    let (code, body) = get_with(&c, &s, "/api/v1/namespaces", Some(&sign(claims(now - 60)))).await;
    assert_eq!((code, body), (StatusCode::UNAUTHORIZED, unauthorized()));
}

/// An RSA signing key (PKCS#8 from openssl) issues RS256 tokens; an extra verification key
/// file is accepted; JWKS publishes both.
#[tokio::test]
async fn rsa_signing_and_extra_verification_keys() {
    let dir = tempfile::tempdir().unwrap();
    let rsa = dir.path().join("rsa.key");
    let made = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ])
        .arg(&rsa)
        .output();
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs openssl: {made:?}"
        );
        return;
    }
    let extra = dir.path().join("extra.pub");
    let ec = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    std::fs::write(&extra, ec.public_key_pem()).unwrap();
    let s = Server::start_with(&[
        "--service-account-signing-key-file",
        rsa.to_str().unwrap(),
        "--service-account-key-file",
        extra.to_str().unwrap(),
    ]);
    s.ok(&["create", "serviceaccount", "rsa"]);
    let token = s.ok(&["create", "token", "rsa"]).trim().to_string();
    let header = jsonwebtoken::decode_header(&token).unwrap();
    assert_eq!(header.alg, jsonwebtoken::Algorithm::RS256);
    assert_eq!(
        whoami(&token_kubeconfig(&s, "rsa", &token)).unwrap()["username"],
        "system:serviceaccount:default:rsa"
    );
    let jwks = s
        .json(&s.client(), Method::GET, "/openid/v1/jwks", None)
        .await
        .body;
    let kinds: Vec<&str> = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kty"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["RSA", "EC"]);
    // A token signed by the extra (verification-only) key is accepted too.
    let now = jiff::Timestamp::now().as_second();
    let uid = s.ok(&["get", "sa", "rsa", "-o", "jsonpath={.metadata.uid}"]);
    let iss = "https://kubernetes.default.svc.cluster.local";
    let claims = json!({"aud": [iss], "exp": now + 600, "iat": now, "nbf": now, "iss": iss, "jti": "x",
        "kubernetes.io": {"namespace": "default", "serviceaccount": {"name": "rsa", "uid": uid}},
        "sub": "system:serviceaccount:default:rsa"});
    let other = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256),
        &claims,
        &jsonwebtoken::EncodingKey::from_ec_der(&ec.serialize_der()),
    )
    .unwrap();
    let (code, _) = get_with(&s.anonymous_client(), &s, "/apis", Some(&other)).await;
    assert_eq!(code, StatusCode::OK);
}
