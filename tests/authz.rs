//! Authorization end to end over real HTTPS: a data-driven matrix of identities × requests
//! with the codes kube-apiserver's bootstrap policy and a few test roles give (anonymous, a
//! user with no bindings, view / edit / admin in one namespace, a service account, nodes, a
//! bootstrap token, system:masters, impersonators with and without rights), escalation
//! prevention, ClusterRole aggregation, `kubectl auth can-i` / `reconcile`, the bootstrap
//! policy against upstream v1.33's fingerprints, and the ABAC and Webhook authorizers.

mod support;

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const TOKENS: &str = "tok-alice,alice,u1
tok-viewer,viewer,u2
tok-editor,editor,u3
tok-nsadmin,nsadmin,u4
tok-imp,imp,u5
tok-imp2,imp2,u6
tok-node1,system:node:n1,u7,system:nodes
tok-node2,system:node:n2,u8,system:nodes
";

const BOOTSTRAP_TOKEN: &str = "abcdef.0123456789abcdef";

struct Cluster {
    s: Server,
    admin: reqwest::Client,
    anon: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Cluster {
    fn start(extra: &[&str]) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens.csv");
        std::fs::write(&tokens, TOKENS).unwrap();
        let mut args = vec!["--token-auth-file", tokens.to_str().unwrap()];
        args.extend_from_slice(extra);
        let s = Server::start_with(&args);
        Cluster {
            admin: s.client(),
            anon: s.anonymous_client(),
            s,
            _dir: dir,
        }
    }

    /// One request as `token` (None: anonymous; "admin": the admin certificate).
    async fn call(
        &self,
        who: Option<&str>,
        method: Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> (StatusCode, Value) {
        let client = if who == Some("admin") {
            &self.admin
        } else {
            &self.anon
        };
        let mut r = client.request(method, format!("{}{path}", self.s.url));
        if let Some(t) = who.filter(|w| *w != "admin") {
            r = r.bearer_auth(t);
        }
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        if let Some(b) = body {
            r = r
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let resp = r.send().await.unwrap();
        let code = resp.status();
        let text = resp.text().await.unwrap();
        (
            code,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn post(&self, who: Option<&str>, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(who, Method::POST, path, Some(body), &[]).await
    }

    async fn admin_create(&self, path: &str, body: Value) {
        let (code, b) = self
            .call(Some("admin"), Method::POST, path, Some(body), &[])
            .await;
        assert!(
            code == StatusCode::CREATED || code == StatusCode::CONFLICT,
            "{path}: {code} {b}"
        );
    }

    /// Polls (bounded) until `who` gets `want` for a GET of `path`.
    async fn wait_code(&self, who: Option<&str>, path: &str, want: StatusCode) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (code, body) = self.call(who, Method::GET, path, None, &[]).await;
            if code == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{who:?} GET {path}: {code} {body}, wanted {want}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn binding(ns: Option<&str>, name: &str, kind: &str, role: &str, subjects: Value) -> Value {
    let mut meta = json!({"name": name});
    if let Some(ns) = ns {
        meta["namespace"] = json!(ns);
    }
    json!({"apiVersion": "rbac.authorization.k8s.io/v1",
           "kind": if ns.is_some() { "RoleBinding" } else { "ClusterRoleBinding" },
           "metadata": meta,
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
           "subjects": subjects})
}

fn user(name: &str) -> Value {
    json!([{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name}])
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

/// Sets up namespace `team` with view / edit / admin bindings, a service account with edit,
/// a pod bound to node n1 that references secret `s1` (and an unreferenced `s2`), a
/// bootstrap token, and impersonation rights for `imp`.
async fn setup(c: &Cluster) -> String {
    c.admin_create(
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}),
    )
    .await;
    let rb = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings";
    for (name, role, who) in [
        ("v", "view", "viewer"),
        ("e", "edit", "editor"),
        ("a", "admin", "nsadmin"),
    ] {
        c.admin_create(
            rb,
            binding(Some("team"), name, "ClusterRole", role, user(who)),
        )
        .await;
    }
    c.admin_create(
        "/api/v1/namespaces/team/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "bot"}}),
    )
    .await;
    c.admin_create(
        rb,
        binding(
            Some("team"),
            "bot-edit",
            "ClusterRole",
            "edit",
            json!([{"kind": "ServiceAccount", "name": "bot"}]),
        ),
    )
    .await;
    for s in ["s1", "s2"] {
        c.admin_create(
            "/api/v1/namespaces/team/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": s}, "stringData": {"k": "v"}}),
        )
        .await;
    }
    c.admin_create(
        "/api/v1/namespaces/team/pods",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
               "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox",
                        "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "s1", "key": "k"}}}]}]}}),
    )
    .await;
    c.admin_create(
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}),
    )
    .await;
    c.admin_create(
        "/api/v1/namespaces/kube-system/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
               "metadata": {"name": "bootstrap-token-abcdef"},
               "stringData": {"token-id": "abcdef", "token-secret": "0123456789abcdef",
                              "usage-bootstrap-authentication": "true"}}),
    )
    .await;
    c.admin_create(
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "impersonate-viewer"},
               "rules": [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["viewer"]},
                         {"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"], "resourceNames": ["viewers"]}]}),
    )
    .await;
    c.admin_create(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        binding(
            None,
            "imp",
            "ClusterRole",
            "impersonate-viewer",
            user("imp"),
        ),
    )
    .await;
    // A token for the service account.
    let (code, tr) = c
        .post(
            Some("admin"),
            "/api/v1/namespaces/team/serviceaccounts/bot/token",
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
        )
        .await;
    assert_eq!(code, StatusCode::CREATED, "{tr}");
    // Every binding is in the index before the matrix runs.
    c.wait_code(
        Some("tok-viewer"),
        "/api/v1/namespaces/team/pods",
        StatusCode::OK,
    )
    .await;
    c.wait_code(
        Some("tok-imp"),
        "/api/v1/namespaces/team/pods",
        StatusCode::FORBIDDEN,
    )
    .await;
    c.wait_code(
        Some("tok-node1"),
        "/api/v1/namespaces/team/secrets/s1",
        StatusCode::OK,
    )
    .await;
    tr["status"]["token"].as_str().unwrap().to_string()
}

/// One row of the matrix.
struct Row {
    who: Option<&'static str>,
    method: Method,
    path: &'static str,
    body: Option<Value>,
    headers: Vec<(&'static str, &'static str)>,
    want: u16,
    /// A fragment of the message expected on a refusal.
    message: Option<&'static str>,
}

fn row(who: Option<&'static str>, method: Method, path: &'static str, want: u16) -> Row {
    Row {
        who,
        method,
        path,
        body: None,
        headers: Vec::new(),
        want,
        message: None,
    }
}

impl Row {
    fn body(mut self, b: Value) -> Row {
        self.body = Some(b);
        self
    }
    fn msg(mut self, m: &'static str) -> Row {
        self.message = Some(m);
        self
    }
    fn header(mut self, k: &'static str, v: &'static str) -> Row {
        self.headers.push((k, v));
        self
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix() {
    let c = Cluster::start(&["--enable-bootstrap-token-auth"]);
    let sa_token: &'static str = Box::leak(setup(&c).await.into_boxed_str());
    use Method as M;
    let anon = None;
    let alice = Some("tok-alice");
    let viewer = Some("tok-viewer");
    let editor = Some("tok-editor");
    let nsadmin = Some("tok-nsadmin");
    let node1 = Some("tok-node1");
    let node2 = Some("tok-node2");
    let boot = Some(BOOTSTRAP_TOKEN);
    let sa = Some(sa_token);
    let admin = Some("admin");
    let imp = Some("tok-imp");
    let imp2 = Some("tok-imp2");
    let ssar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                      "spec": {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "team"}}});
    let rows = vec![
        // anonymous: health and version only (system:public-info-viewer).
        row(anon, M::GET, "/healthz", 200),
        row(anon, M::GET, "/livez", 200),
        row(anon, M::GET, "/readyz", 200),
        row(anon, M::GET, "/version", 200),
        row(anon, M::GET, "/apis", 403).msg("forbidden: User \"system:anonymous\" cannot get path \"/apis\""),
        row(anon, M::GET, "/api/v1", 403),
        row(anon, M::GET, "/openapi/v2", 403),
        row(anon, M::GET, "/metrics", 403),
        row(anon, M::GET, "/api/v1/namespaces/team/pods", 403)
            .msg("pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"team\""),
        // an authenticated user without bindings: discovery, openapi, reviews.
        row(alice, M::GET, "/apis", 200),
        row(alice, M::GET, "/api", 200),
        row(alice, M::GET, "/apis/apps/v1", 200),
        row(alice, M::GET, "/openapi/v2", 200),
        row(alice, M::GET, "/openapi/v3", 200),
        row(alice, M::GET, "/metrics", 403),
        row(alice, M::GET, "/api/v1/namespaces/team/pods", 403),
        row(alice, M::GET, "/api/v1/nodes/n2", 403)
            .msg("nodes \"n2\" is forbidden: User \"alice\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"),
        row(alice, M::POST, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", 201).body(ssar.clone()),
        row(alice, M::POST, "/apis/authorization.k8s.io/v1/subjectaccessreviews", 403)
            .body(json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                         "spec": {"user": "x", "resourceAttributes": {"verb": "get", "resource": "pods"}}})),
        // view in team.
        row(viewer, M::GET, "/api/v1/namespaces/team/pods", 200),
        row(viewer, M::GET, "/api/v1/namespaces/team/pods/p1", 200),
        row(viewer, M::GET, "/api/v1/namespaces/team/pods/p1/status", 200),
        row(viewer, M::GET, "/api/v1/namespaces/team/pods?watch=1&timeoutSeconds=1", 200),
        row(viewer, M::GET, "/api/v1/namespaces/default/pods", 403),
        row(viewer, M::GET, "/api/v1/pods", 403),
        row(viewer, M::GET, "/api/v1/namespaces/team/secrets", 403),
        row(viewer, M::GET, "/api/v1/namespaces/team/secrets/s1", 403),
        row(viewer, M::POST, "/api/v1/namespaces/team/configmaps", 403).body(cm("v1"))
            .msg("configmaps is forbidden: User \"viewer\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"team\""),
        row(viewer, M::DELETE, "/api/v1/namespaces/team/pods/p1", 403),
        row(viewer, M::GET, "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings", 403),
        row(viewer, M::GET, "/apis/apps/v1/namespaces/team/deployments", 200),
        // edit in team.
        row(editor, M::POST, "/api/v1/namespaces/team/configmaps", 201).body(cm("e1")),
        row(editor, M::GET, "/api/v1/namespaces/team/secrets/s1", 200),
        row(editor, M::POST, "/api/v1/namespaces/default/configmaps", 403).body(cm("e2")),
        row(editor, M::GET, "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings", 403),
        row(editor, M::PATCH, "/api/v1/namespaces/team/configmaps/e1", 200)
            .body(json!({"data": {"a": "b"}})).header("content-type", "application/merge-patch+json"),
        row(editor, M::DELETE, "/api/v1/namespaces/team/configmaps?labelSelector=none%3Dx", 200),
        row(editor, M::GET, "/api/v1/namespaces/team/resourcequotas", 200),
        row(editor, M::POST, "/api/v1/namespaces/team/resourcequotas", 403)
            .body(json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}})),
        // admin in team: RBAC objects of the namespace too.
        row(nsadmin, M::GET, "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings", 200),
        row(nsadmin, M::POST, "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings", 201)
            .body(binding(Some("team"), "by-admin", "ClusterRole", "edit", user("alice"))),
        row(nsadmin, M::GET, "/api/v1/namespaces", 403),
        row(nsadmin, M::GET, "/api/v1/namespaces/team", 200),
        row(nsadmin, M::DELETE, "/api/v1/namespaces/team", 403),
        // a service account bound to edit.
        row(sa, M::POST, "/api/v1/namespaces/team/configmaps", 201).body(cm("sa1")),
        row(sa, M::GET, "/api/v1/namespaces/default/configmaps", 403)
            .msg("User \"system:serviceaccount:team:bot\" cannot list resource \"configmaps\""),
        // nodes: the Node authorizer's graph.
        row(node1, M::GET, "/api/v1/namespaces/team/secrets/s1", 200),
        row(node1, M::GET, "/api/v1/namespaces/team/secrets/s2", 403)
            .msg("secrets \"s2\" is forbidden: User \"system:node:n1\" cannot get resource \"secrets\" in API group \"\" in the namespace \"team\": no relationship found between node 'n1' and this object"),
        row(node2, M::GET, "/api/v1/namespaces/team/secrets/s1", 403),
        row(node1, M::GET, "/api/v1/namespaces/team/pods?fieldSelector=spec.nodeName%3Dn1", 200),
        row(node1, M::GET, "/api/v1/namespaces/team/pods", 403),
        row(node2, M::GET, "/api/v1/nodes/n2", 200),
        row(node1, M::GET, "/api/v1/nodes/n2", 403).msg("node 'n1' cannot read 'n2', only its own Node object"),
        row(node1, M::POST, "/api/v1/namespaces/team/events", 201)
            .body(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev1"},
                         "involvedObject": {"kind": "Pod", "name": "p1", "namespace": "team"}, "reason": "R", "message": "m"})),
        row(node1, M::POST, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", 201)
            .body(json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "n1"}})),
        row(node1, M::GET, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n2", 403),
        row(node1, M::GET, "/api/v1/namespaces/team/configmaps", 403),
        // a bootstrap token: authenticated, nothing more.
        row(boot, M::GET, "/apis", 200),
        row(boot, M::GET, "/api/v1/namespaces/team/pods", 403)
            .msg("User \"system:bootstrap:abcdef\" cannot list resource \"pods\""),
        // system:masters.
        row(admin, M::GET, "/api/v1/namespaces/team/secrets", 200),
        row(admin, M::GET, "/metrics", 200),
        // impersonation.
        row(imp, M::GET, "/api/v1/namespaces/team/pods", 403),
        row(imp, M::GET, "/api/v1/namespaces/team/pods", 200).header("Impersonate-User", "viewer"),
        row(imp, M::GET, "/api/v1/namespaces/team/secrets", 403).header("Impersonate-User", "viewer")
            .msg("User \"viewer\" cannot list resource \"secrets\""),
        row(imp, M::GET, "/api/v1/namespaces/team/pods", 403).header("Impersonate-User", "editor")
            .msg("users \"editor\" is forbidden: User \"imp\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"),
        row(imp, M::GET, "/api/v1/namespaces/team/pods", 200)
            .header("Impersonate-User", "viewer").header("Impersonate-Group", "viewers"),
        row(imp, M::GET, "/api/v1/namespaces/team/pods", 403)
            .header("Impersonate-User", "viewer").header("Impersonate-Group", "system:masters")
            .msg("groups \"system:masters\" is forbidden"),
        row(imp, M::GET, "/api/v1/namespaces/team/pods", 500).header("Impersonate-Group", "viewers")
            .msg("without impersonating a user"),
        row(imp2, M::GET, "/api/v1/namespaces/team/pods", 403).header("Impersonate-User", "viewer"),
        row(admin, M::GET, "/api/v1/namespaces/team/pods", 200).header("Impersonate-User", "viewer"),
        row(admin, M::GET, "/api/v1/namespaces/team/secrets", 403).header("Impersonate-User", "viewer"),
        row(admin, M::GET, "/api/v1/namespaces/team/secrets", 200)
            .header("Impersonate-User", "system:serviceaccount:team:bot"),
    ];
    let mut failures = Vec::new();
    for r in &rows {
        let (code, body) = c
            .call(r.who, r.method.clone(), r.path, r.body.clone(), &r.headers)
            .await;
        let mut bad = code.as_u16() != r.want;
        if let Some(m) = r.message {
            let got = body["message"].as_str().unwrap_or("");
            bad |= !got.contains(m);
        }
        if bad {
            failures.push(format!(
                "{:?} {} {} {:?}: got {code} {body}, wanted {} {:?}",
                r.who.map(|w| if w.len() > 20 { "sa-token" } else { w }),
                r.method,
                r.path,
                r.headers,
                r.want,
                r.message
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escalation_is_prevented() {
    let c = Cluster::start(&[]);
    setup(&c).await;
    let rb = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings";
    let roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles";
    // nsadmin holds admin in team: may bind edit, may not bind cluster-admin.
    let (code, body) = c
        .post(
            Some("tok-nsadmin"),
            rb,
            binding(
                Some("team"),
                "ca",
                "ClusterRole",
                "cluster-admin",
                user("alice"),
            ),
        )
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    let msg = body["message"].as_str().unwrap();
    assert!(
        msg.starts_with("rolebindings.rbac.authorization.k8s.io \"ca\" is forbidden: user \"nsadmin\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n"),
        "{msg}"
    );
    // A role granting what the creator holds is fine; more is refused with the missing rule.
    let role = |name: &str, rules: Value| json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name}, "rules": rules});
    let (code, body) = c
        .post(
            Some("tok-nsadmin"),
            roles,
            role(
                "ok",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]),
            ),
        )
        .await;
    assert_eq!(code, StatusCode::CREATED, "{body}");
    let (code, body) = c
        .post(
            Some("tok-nsadmin"),
            roles,
            role(
                "nodes",
                json!([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]),
            ),
        )
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["message"].as_str().unwrap().ends_with(
            "not currently held:\n{APIGroups:[\"\"], Resources:[\"nodes\"], Verbs:[\"get\"]}"
        ),
        "{body}"
    );
    // edit cannot create bindings at all (no rolebindings permission).
    let (code, _) = c
        .post(
            Some("tok-editor"),
            rb,
            binding(Some("team"), "x", "ClusterRole", "view", user("alice")),
        )
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    // With `bind` on cluster-admin, nsadmin may bind it; with `escalate`, create any role.
    c.admin_create(
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "binder"},
               "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"], "resourceNames": ["cluster-admin"]},
                         {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]}]}),
    )
    .await;
    c.admin_create(
        rb,
        binding(
            Some("team"),
            "binder",
            "ClusterRole",
            "binder",
            user("nsadmin"),
        ),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, body) = c
            .post(
                Some("tok-nsadmin"),
                rb,
                binding(
                    Some("team"),
                    "ca",
                    "ClusterRole",
                    "cluster-admin",
                    user("alice"),
                ),
            )
            .await;
        if code == StatusCode::CREATED {
            break;
        }
        assert!(Instant::now() < deadline, "{code} {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (code, body) = c
        .post(
            Some("tok-nsadmin"),
            roles,
            role(
                "nodes",
                json!([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]),
            ),
        )
        .await;
    assert_eq!(code, StatusCode::CREATED, "{body}");
    // A binding to a role that does not exist: 404 for those who may not bind it.
    let (code, body) = c
        .post(
            Some("tok-nsadmin"),
            rb,
            binding(Some("team"), "ghost", "Role", "nope", user("alice")),
        )
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregation_and_bootstrap_policy() {
    let c = Cluster::start(&[]);
    let crs = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    // The bootstrap policy as served equals upstream v1.33's (aggregated roles: their
    // aggregation rules; their rules are the union of what they select).
    let (code, list) = c.call(Some("admin"), Method::GET, crs, None, &[]).await;
    assert_eq!(code, StatusCode::OK);
    let served: Vec<Value> = list["items"].as_array().unwrap().clone();
    let p = rafter::authz::bootstrap::policy();
    for want in &p.cluster_roles {
        let name = want["metadata"]["name"].as_str().unwrap();
        let got = served
            .iter()
            .find(|o| o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("clusterrole {name} is not served"));
        if want.get("aggregationRule").is_some() {
            assert_eq!(got["aggregationRule"], want["aggregationRule"], "{name}");
            continue;
        }
        assert_eq!(
            rafter::authz::bootstrap::fingerprint(got),
            rafter::authz::bootstrap::fingerprint(want),
            "clusterrole {name}"
        );
    }
    let (_, crbs) = c
        .call(
            Some("admin"),
            Method::GET,
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            None,
            &[],
        )
        .await;
    for want in &p.cluster_role_bindings {
        let name = want["metadata"]["name"].as_str().unwrap();
        let got = crbs["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("clusterrolebinding {name} is not served"));
        assert_eq!(
            rafter::authz::bootstrap::fingerprint(got),
            rafter::authz::bootstrap::fingerprint(want),
            "clusterrolebinding {name}"
        );
    }
    for (list, path) in [(&p.roles, "roles"), (&p.role_bindings, "rolebindings")] {
        for want in list {
            let ns = want["metadata"]["namespace"].as_str().unwrap();
            let name = want["metadata"]["name"].as_str().unwrap();
            let (code, got) = c
                .call(
                    Some("admin"),
                    Method::GET,
                    &format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{path}/{name}"),
                    None,
                    &[],
                )
                .await;
            assert_eq!(code, StatusCode::OK, "{path} {ns}/{name}");
            assert_eq!(
                rafter::authz::bootstrap::fingerprint(&got),
                rafter::authz::bootstrap::fingerprint(want),
                "{path} {ns}/{name}"
            );
        }
    }
    // view aggregates what is labelled for it, within seconds.
    let has_widgets = |v: &Value| {
        v["rules"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x["resources"][0] == "widgets"))
    };
    let (_, view) = c
        .call(
            Some("admin"),
            Method::GET,
            &format!("{crs}/view"),
            None,
            &[],
        )
        .await;
    assert!(!view["rules"].as_array().unwrap().is_empty(), "{view}");
    assert!(!has_widgets(&view));
    c.admin_create(
        crs,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "widget-viewer", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
               "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}]}),
    )
    .await;
    for role in ["view", "edit", "admin"] {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (_, v) = c
                .call(
                    Some("admin"),
                    Method::GET,
                    &format!("{crs}/{role}"),
                    None,
                    &[],
                )
                .await;
            if has_widgets(&v) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{role} did not aggregate widgets: {v}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn token_kubeconfig(c: &Cluster, name: &str, token: &str) -> std::path::PathBuf {
    let path = c.s.dir.path().join(format!("{name}.kubeconfig"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u, namespace: team}}\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: {token}\n",
            c.s.url,
            c.s.dir.path().join("ca.crt").display()
        ),
    )
    .unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_auth() {
    let c = Cluster::start(&[]);
    setup(&c).await;
    let can = |args: &[&str]| {
        let out = c.s.kubectl(&[&["auth", "can-i"], args].concat());
        (
            out.status.success(),
            support::stdout(&out).trim().to_string(),
        )
    };
    assert_eq!(
        can(&["list", "pods", "-n", "team", "--as", "viewer"]),
        (true, "yes".into())
    );
    assert_eq!(
        can(&["create", "pods", "-n", "team", "--as", "viewer"]),
        (false, "no".into())
    );
    assert_eq!(
        can(&[
            "get",
            "pods",
            "--subresource=log",
            "-n",
            "team",
            "--as",
            "viewer"
        ]),
        (true, "yes".into())
    );
    assert_eq!(
        can(&["get", "/healthz", "--as", "viewer"]),
        (true, "yes".into())
    );
    assert_eq!(
        can(&["get", "/metrics", "--as", "viewer"]),
        (false, "no".into())
    );
    assert_eq!(
        can(&[
            "create",
            "configmaps",
            "-n",
            "team",
            "--as",
            "system:serviceaccount:team:bot"
        ]),
        (true, "yes".into())
    );
    assert_eq!(
        can(&[
            "list",
            "secrets",
            "-n",
            "team",
            "--as",
            "someone",
            "--as-group",
            "system:masters"
        ]),
        (true, "yes".into())
    );
    assert_eq!(can(&["delete", "nodes"]), (true, "yes".into()));
    // --as, --as-group, --as-uid: who the request proceeds as.
    let me: Value = serde_json::from_str(&c.s.ok(&[
        "auth",
        "whoami",
        "-o",
        "json",
        "--as",
        "viewer",
        "--as-group",
        "viewers",
        "--as-uid",
        "u-9",
    ]))
    .unwrap();
    assert_eq!(
        me["status"]["userInfo"],
        json!({"username": "viewer", "uid": "u-9", "groups": ["viewers", "system:authenticated"]})
    );
    let me: Value = serde_json::from_str(&c.s.ok(&[
        "auth",
        "whoami",
        "-o",
        "json",
        "--as",
        "system:serviceaccount:team:bot",
    ]))
    .unwrap();
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:team",
            "system:authenticated"
        ])
    );
    // --list as the viewer: kube's rules table.
    let kc = token_kubeconfig(&c, "viewer", "tok-viewer");
    let out = support::kubectl_env(&kc, &["auth", "can-i", "--list", "-n", "team"], &[]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    assert!(text.starts_with("Resources"), "{text}");
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line in\n{text}"))
            .to_string()
    };
    assert!(line("pods").ends_with("[get list watch]"), "{text}");
    assert!(
        line("selfsubjectaccessreviews.authorization.k8s.io").ends_with("[create]"),
        "{text}"
    );
    assert!(text.contains("[/healthz]"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("secrets ")), "{text}");
    // reconcile: creates, then finds nothing to do; protected roles are left alone.
    let file = c.s.dir.path().join("rbac.yaml");
    std::fs::write(
        &file,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: team\nrules:\n- apiGroups: [\"\"]\n  resources: [\"configmaps\"]\n  verbs: [\"get\"]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: reader\n  namespace: team\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\nsubjects:\n- kind: User\n  apiGroup: rbac.authorization.k8s.io\n  name: alice\n",
    )
    .unwrap();
    let out = c.s.ok(&["auth", "reconcile", "-f", file.to_str().unwrap()]);
    assert!(
        out.contains("role.rbac.authorization.k8s.io/reader reconciled"),
        "{out}"
    );
    assert!(
        out.contains("rolebinding.rbac.authorization.k8s.io/reader reconciled"),
        "{out}"
    );
    let again = c.s.ok(&["auth", "reconcile", "-f", file.to_str().unwrap()]);
    assert!(again.contains("reconciled"), "{again}");
    c.wait_code(
        Some("tok-alice"),
        "/api/v1/namespaces/team/configmaps/sa1",
        StatusCode::NOT_FOUND,
    )
    .await;
    // The SelfSubjectRulesReview for a user whose binding names a missing role reports it.
    c.admin_create(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
        binding(Some("team"), "dangling", "Role", "missing", user("alice")),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, r) = c.post(Some("tok-alice"), "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "team"}})).await;
        assert_eq!(code, StatusCode::CREATED);
        if r["status"]["evaluationError"] == "role.rbac.authorization.k8s.io \"missing\" not found"
        {
            assert_eq!(r["status"]["incomplete"], false);
            break;
        }
        assert!(Instant::now() < deadline, "{r}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A SubjectAccessReview names the binding that allowed it.
    let (code, r) = c.post(Some("admin"), "/apis/authorization.k8s.io/v1/subjectaccessreviews", json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                        "spec": {"user": "viewer", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "team"}}})).await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(
        r["status"],
        json!({"allowed": true, "reason": "RBAC: allowed by RoleBinding \"v/team\" of ClusterRole \"view\" to User \"viewer\""})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abac_policy_file() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.jsonl");
    std::fs::write(
        &policy,
        [
            r#"{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "team", "resource": "*", "apiGroup": "*", "readonly": true}}"#,
            r#"{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "nonResourcePath": "*", "readonly": true}}"#,
            r#"{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "editor", "namespace": "*", "resource": "configmaps", "apiGroup": ""}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let c = Cluster::start(&[
        "--authorization-mode",
        "ABAC",
        "--authorization-policy-file",
        policy.to_str().unwrap(),
    ]);
    for (who, method, path, body, want) in [
        (
            Some("tok-alice"),
            Method::GET,
            "/api/v1/namespaces/team/pods",
            None,
            200,
        ),
        (
            Some("tok-alice"),
            Method::GET,
            "/api/v1/namespaces/default/pods",
            None,
            403,
        ),
        (
            Some("tok-alice"),
            Method::POST,
            "/api/v1/namespaces/team/configmaps",
            Some(cm("a")),
            403,
        ),
        (Some("tok-alice"), Method::GET, "/apis", None, 200),
        (
            Some("tok-editor"),
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            Some(cm("b")),
            201,
        ),
        (
            Some("tok-editor"),
            Method::GET,
            "/api/v1/namespaces/default/secrets",
            None,
            403,
        ),
        (None, Method::GET, "/apis", None, 403),
    ] {
        let (code, b) = c.call(who, method.clone(), path, body, &[]).await;
        assert_eq!(code.as_u16(), want, "{who:?} {method} {path}: {b}");
    }
    let (_, b) = c
        .post(
            Some("tok-alice"),
            "/api/v1/namespaces/team/configmaps",
            cm("a"),
        )
        .await;
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .ends_with(": No policy matched."),
        "{b}"
    );
    // A bad policy file is a start error naming the line.
    std::fs::write(&policy, "{\"apiVersion\": \"abac.authorization.kubernetes.io/v1beta1\", \"kind\": \"Policy\", \"spec\": {\"user\": 5}}\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .args([
            "serve",
            "--data-dir",
            dir.path().join("x").to_str().unwrap(),
            "--authorization-mode",
            "ABAC",
            "--authorization-policy-file",
            policy.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_authorizer() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    // The webhook allows alice to read configmaps, denies bob everything, and has no
    // opinion otherwise.
    let port = support::tls_server(
        dir.path(),
        "authz",
        std::sync::Arc::new(move |_path: &str, body: &[u8]| {
            counter.fetch_add(1, Ordering::SeqCst);
            let review: Value = serde_json::from_slice(body).unwrap_or_default();
            let spec = &review["spec"];
            let ra = &spec["resourceAttributes"];
            let status = if spec["user"] == "alice" && ra["resource"] == "configmaps" && ra["verb"] == "list" {
                json!({"allowed": true, "reason": "hook says yes"})
            } else if spec["user"] == "bob" {
                json!({"allowed": false, "denied": true, "reason": "hook says no"})
            } else {
                json!({"allowed": false})
            };
            json!({"apiVersion": review["apiVersion"], "kind": "SubjectAccessReview", "status": status}).to_string()
        }),
    )
    .await;
    let kc = dir.path().join("authz.kubeconfig");
    std::fs::write(
        &kc,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:{port}/authorize\n    certificate-authority: authz-ca.crt\nusers:\n- name: apiserver\n  user: {{}}\ncontexts:\n- name: w\n  context: {{cluster: w, user: apiserver}}\ncurrent-context: w\n"),
    )
    .unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "tok-alice,alice,u1\ntok-bob,bob,u2,system:masters-not\n",
    )
    .unwrap();
    let s = Server::start_with(&[
        "--token-auth-file",
        tokens.to_str().unwrap(),
        "--authorization-mode",
        "Webhook,RBAC",
        "--authorization-webhook-config-file",
        kc.to_str().unwrap(),
    ]);
    let c = s.anonymous_client();
    let get = |token: &'static str, path: &'static str| {
        let c = c.clone();
        let url = format!("{}{path}", s.url);
        async move {
            let r = c.get(url).bearer_auth(token).send().await.unwrap();
            let code = r.status();
            (code, r.json::<Value>().await.unwrap_or_default())
        }
    };
    let (code, _) = get("tok-alice", "/api/v1/namespaces/default/configmaps").await;
    assert_eq!(code, StatusCode::OK);
    let before = hits.load(Ordering::SeqCst);
    let (code, _) = get("tok-alice", "/api/v1/namespaces/default/configmaps").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        hits.load(Ordering::SeqCst),
        before,
        "an allowed answer is cached"
    );
    // No opinion: RBAC decides (discovery for authenticated users).
    let (code, _) = get("tok-alice", "/apis").await;
    assert_eq!(code, StatusCode::OK);
    let (code, _) = get("tok-alice", "/api/v1/namespaces/default/secrets").await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    // A denial stops the chain, RBAC's discovery grant notwithstanding.
    let (code, b) = get("tok-bob", "/apis").await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    assert_eq!(
        b["message"],
        "forbidden: User \"bob\" cannot get path \"/apis\": hook says no"
    );
    // SelfSubjectRulesReview is incomplete with a webhook in the chain.
    let r = c
        .post(format!("{}/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", s.url))
        .bearer_auth("tok-alice")
        .json(&json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "default"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["status"]["incomplete"], true, "{v}");
    drop(s);
    // An unreachable webhook has no opinion: RBAC still answers.
    std::fs::write(
        &kc,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:{}/authorize\n    certificate-authority: authz-ca.crt\nusers:\n- name: apiserver\n  user: {{}}\ncontexts:\n- name: w\n  context: {{cluster: w, user: apiserver}}\ncurrent-context: w\n", support::free_port()),
    )
    .unwrap();
    let s = Server::start_with(&[
        "--token-auth-file",
        tokens.to_str().unwrap(),
        "--authorization-mode",
        "Webhook,RBAC",
        "--authorization-webhook-config-file",
        kc.to_str().unwrap(),
    ]);
    let r = s
        .anonymous_client()
        .get(format!("{}/apis", s.url))
        .bearer_auth("tok-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

/// A PUT that would create a missing object (AllowCreateOnUpdate) needs the create
/// permission too, as kube's update handler checks: update rights alone update existing
/// objects only.
#[tokio::test]
async fn create_on_update_needs_create_permission() {
    let c = Cluster::start(&[]);
    c.admin_create(
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}),
    )
    .await;
    c.admin_create(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "lease-updater"},
            "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                "verbs": ["get", "update"]}]}),
    )
    .await;
    c.admin_create(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
        binding(Some("team"), "lu", "Role", "lease-updater", user("alice")),
    )
    .await;
    let lease = |name: &str| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name}, "spec": {"holderIdentity": "alice"}})
    };
    let path = "/apis/coordination.k8s.io/v1/namespaces/team/leases";
    let (code, body) = c
        .call(
            Some("tok-alice"),
            Method::PUT,
            &format!("{path}/new"),
            Some(lease("new")),
            &[],
        )
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    let (code, _) = c
        .call(
            Some("admin"),
            Method::GET,
            &format!("{path}/new"),
            None,
            &[],
        )
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND, "nothing was created");
    c.admin_create(path, lease("held")).await;
    // (Leases are replaced with their resourceVersion: no unconditional updates, as kube.)
    let (_, stored) = c
        .call(
            Some("admin"),
            Method::GET,
            &format!("{path}/held"),
            None,
            &[],
        )
        .await;
    let mut held = lease("held");
    held["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"].clone();
    let (code, body) = c
        .call(
            Some("tok-alice"),
            Method::PUT,
            &format!("{path}/held"),
            Some(held),
            &[],
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{body}");
}
