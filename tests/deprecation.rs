//! Deprecation signals (issue 16): the `Warning` kube sends for requests to deprecated kinds
//! (v1 Endpoints in v1.33), seen in kubectl's output, and the
//! `apiserver_requested_deprecated_apis` gauge.

mod support;

use support::Server;

#[tokio::test]
async fn deprecated_kind_warns_and_is_counted() {
    let s = Server::start();
    let out = s.kubectl(&["get", "endpoints", "-n", "default"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains(
            "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
        ),
        "{}",
        support::stderr(&out)
    );
    // EndpointSlices are not deprecated.
    let out = s.kubectl(&["get", "endpointslices", "-n", "default"]);
    assert!(
        !support::stderr(&out).contains("deprecated"),
        "{}",
        support::stderr(&out)
    );

    let c = s.client();
    let metrics = c
        .get(format!("{}/metrics", s.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let line = metrics
        .lines()
        .find(|l| l.starts_with("apiserver_requested_deprecated_apis{"))
        .unwrap_or_else(|| panic!("no deprecated-API gauge: {metrics}"));
    for label in [
        "group=\"\"",
        "version=\"v1\"",
        "resource=\"endpoints\"",
        "subresource=\"\"",
        "removed_release=\"\"",
    ] {
        assert!(line.contains(label), "{line}");
    }
    assert!(line.ends_with(" 1"), "{line}");
}

/// `--runtime-config` turns a group version (and one resource) off and on again across a
/// restart: discovery, OpenAPI and the paths follow; the stored objects survive.
#[tokio::test]
async fn runtime_config_turns_group_versions_off_and_on() {
    let mut s = Server::start();
    s.ok(&["create", "job", "j", "--image=busybox"]);
    s.ok(&[
        "create",
        "cronjob",
        "c",
        "--image=busybox",
        "--schedule=* * * * *",
    ]);

    s.extra_args = vec!["--runtime-config".into(), "batch/v1=false".into()];
    s.restart();
    let resources = s.ok(&["api-resources", "--api-group=batch", "-o", "name"]);
    assert!(resources.trim().is_empty(), "{resources}");
    let c = s.client();
    let code = |path: &str| {
        let c = c.clone();
        let url = format!("{}{path}", s.url);
        async move { c.get(url).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(code("/apis/batch/v1").await, 404);
    assert_eq!(code("/apis/batch/v1/namespaces/default/jobs/j").await, 404);
    assert_eq!(code("/openapi/v3/apis/batch/v1").await, 404);
    let groups: serde_json::Value = c
        .get(format!("{}/apis", s.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        !groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "batch"),
        "{groups}"
    );

    // One resource off: the rest of its group version stays.
    s.extra_args = vec!["--runtime-config".into(), "batch/v1/cronjobs=false".into()];
    s.restart();
    let resources = s.ok(&["api-resources", "--api-group=batch", "-o", "name"]);
    assert_eq!(resources.trim(), "jobs.batch");
    assert_eq!(
        s.ok(&["get", "job", "j", "-o", "name"]).trim(),
        "job.batch/j"
    );

    // Back on: the objects are still there.
    s.extra_args = vec![];
    s.restart();
    assert_eq!(
        s.ok(&["get", "cronjob", "c", "-o", "name"]).trim(),
        "cronjob.batch/c"
    );
}

/// A `--runtime-config` kube would refuse stops the server with kube's message.
#[test]
fn runtime_config_errors_stop_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .args(["serve", "--data-dir"])
        .arg(dir.path())
        .args([
            "--listen",
            &format!("127.0.0.1:{}", support::free_port()),
            "--runtime-config",
            "storage.k8s.io/v1beta1=true",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("group version storage.k8s.io/v1beta1 that has not been registered"),
        "{err}"
    );
}
