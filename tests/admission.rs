//! The admission chain over real HTTPS: the flags (`--enable-admission-plugins`,
//! `--disable-admission-plugins`, unknown names refused at start with kube's text,
//! `--admission-control-config-file` in both API versions), AlwaysDeny's refusal,
//! NamespaceAutoProvision (and not on dry runs), and NamespaceLifecycle turned off.

mod support;

use std::process::Command;

use reqwest::Method;
use serde_json::json;
use support::{free_port, stderr, Server};

fn configmap(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}})
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

#[test]
fn unknown_plugins_and_bad_configs_refuse_to_start() {
    let e = refused(&["--enable-admission-plugins", "AlwaysDeny,NoSuchPlugin"]);
    assert!(
        e.contains("enable-admission-plugins plugin \"NoSuchPlugin\" is unknown"),
        "{e}"
    );
    let e = refused(&["--disable-admission-plugins", "Nope"]);
    assert!(
        e.contains("disable-admission-plugins plugin \"Nope\" is unknown"),
        "{e}"
    );
    let e = refused(&["--enable-admission-plugins", "SecurityContextDeny"]);
    assert!(
        e.contains("plugin \"SecurityContextDeny\" is unknown"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "apiVersion: v1\nkind: Config\n").unwrap();
    let e = refused(&["--admission-control-config-file", bad.to_str().unwrap()]);
    assert!(
        e.contains("no kind \"Config\" is registered for version \"v1\""),
        "{e}"
    );
}

#[tokio::test]
async fn always_deny_and_config_files_in_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    for (i, api) in ["apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1"]
        .iter()
        .enumerate()
    {
        let cfg = dir.path().join(format!("admission-{i}.yaml"));
        std::fs::write(
            &cfg,
            format!("apiVersion: {api}\nkind: AdmissionConfiguration\nplugins:\n- name: AlwaysDeny\n  configuration: {{}}\n"),
        )
        .unwrap();
        let s = Server::start_with(&[
            "--enable-admission-plugins",
            "AlwaysDeny",
            "--admission-control-config-file",
            cfg.to_str().unwrap(),
        ]);
        let c = s.client();
        let r = s
            .json(
                &c,
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                Some(configmap("x")),
            )
            .await;
        assert_eq!(r.code.as_u16(), 403, "{}", r.body);
        assert_eq!(r.body["reason"], "Forbidden");
        assert_eq!(
            r.body["message"],
            "configmaps \"x\" is forbidden: admission control is denying all modifications"
        );
        let r = s
            .json(
                &c,
                Method::GET,
                "/api/v1/namespaces/default/configmaps/x",
                None,
            )
            .await;
        assert_eq!(r.code.as_u16(), 404, "nothing was written");
    }
}

#[tokio::test]
async fn namespaces_are_provisioned_or_not_checked_as_configured() {
    let s = Server::start_with(&["--enable-admission-plugins", "NamespaceAutoProvision"]);
    let c = s.client();
    // a dry run provisions nothing
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/fresh/configmaps?dryRun=All",
            Some(configmap("x")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 404, "{}", r.body);
    assert_eq!(r.body["message"], "namespaces \"fresh\" not found");
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/fresh/configmaps",
            Some(configmap("x")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let r = s
        .json(&c, Method::GET, "/api/v1/namespaces/fresh", None)
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);

    // without NamespaceLifecycle nothing checks the namespace
    let s = Server::start_with(&["--disable-admission-plugins", "NamespaceLifecycle"]);
    let c = s.client();
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/nowhere/configmaps",
            Some(configmap("x")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
}

#[tokio::test]
async fn namespace_lifecycle_and_exists() {
    // NamespaceLifecycle (default): the system namespaces stay, missing namespaces refuse
    let s = Server::start_with(&["--enable-admission-plugins", "AlwaysAdmit"]);
    let c = s.client();
    let r = s
        .json(&c, Method::DELETE, "/api/v1/namespaces/default", None)
        .await;
    assert_eq!(r.code.as_u16(), 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "namespaces \"default\" is forbidden: this namespace may not be deleted"
    );
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/nowhere/configmaps",
            Some(configmap("x")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 404, "{}", r.body);
    // NamespaceExists alone checks the namespace too
    let s = Server::start_with(&[
        "--disable-admission-plugins",
        "NamespaceLifecycle",
        "--enable-admission-plugins",
        "NamespaceExists",
    ]);
    let c = s.client();
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/nowhere/configmaps",
            Some(configmap("x")),
        )
        .await;
    assert_eq!(r.code.as_u16(), 404, "{}", r.body);
    assert_eq!(r.body["message"], "namespaces \"nowhere\" not found");
}
