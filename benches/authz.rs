//! The request-path cost of authorization (not a timed test; `cargo bench --bench authz`):
//! linearizable GETs per second of one object through the real binary, 16 concurrent clients
//! with a static token, under `--authorization-mode AlwaysAllow` and under the default
//! `Node,RBAC` (the user holds `view` through a ClusterRoleBinding), then again under RBAC
//! with 10,000 more RoleBindings in the cluster (one per user, in the namespace the request
//! names). `RAFTER_BENCH_SECONDS` sets each phase's length (default 5).

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use common::phase;
use serde_json::json;
use support::Server;

const BINDINGS: usize = 10_000;

fn main() {
    let secs = common::phase_seconds();
    let (_dir, tokens) = common::token_file();
    std::fs::write(&tokens, "bench-token,bencher,1\n").unwrap();
    let t = tokens.to_str().unwrap();
    let allow = Server::start_with(&[
        "--token-auth-file",
        t,
        "--authorization-mode",
        "AlwaysAllow",
    ]);
    let rbac = Server::start_with(&["--token-auth-file", t]);
    rbac.ok(&[
        "create",
        "clusterrolebinding",
        "bench",
        "--clusterrole=view",
        "--user=bencher",
    ]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let token = Some("bench-token".to_string());
        phase("warm-up", &allow.url, allow.anonymous_client(), token.clone(), 1).await;
        phase("warm-up", &rbac.url, rbac.anonymous_client(), token.clone(), 1).await;
        phase("AlwaysAllow", &allow.url, allow.anonymous_client(), token.clone(), secs).await;
        phase("Node,RBAC", &rbac.url, rbac.anonymous_client(), token.clone(), secs).await;
        // 10,000 RoleBindings, 16 writers.
        let admin = rbac.client();
        let started = std::time::Instant::now();
        let mut writers = Vec::new();
        for w in 0..16 {
            let (admin, url) = (admin.clone(), rbac.url.clone());
            writers.push(tokio::spawn(async move {
                for i in (w..BINDINGS).step_by(16) {
                    let b = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                        "metadata": {"name": format!("rb-{i}")},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
                        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": format!("user-{i}")}]});
                    let r = admin
                        .post(format!("{url}/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"))
                        .json(&b)
                        .send()
                        .await
                        .unwrap();
                    assert!(r.status().is_success(), "{}", r.status());
                }
            }));
        }
        for w in writers {
            w.await.unwrap();
        }
        println!(
            "created {BINDINGS} RoleBindings in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        phase("Node,RBAC +10k bindings", &rbac.url, rbac.anonymous_client(), token, secs).await;
    });
}
