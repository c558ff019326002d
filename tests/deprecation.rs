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
        support::stderr(&out)
            .contains("Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"),
        "{}",
        support::stderr(&out)
    );
    // EndpointSlices are not deprecated.
    let out = s.kubectl(&["get", "endpointslices", "-n", "default"]);
    assert!(!support::stderr(&out).contains("deprecated"), "{}", support::stderr(&out));

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
