//! What clients compare byte for byte, over real HTTPS: JSON bodies end with a newline as Go's
//! encoder writes them, `?pretty` indents, percent-escaped paths reach their objects,
//! `includeObject` is validated, and the OpenAPI documents carry ETags as kube-openapi serves
//! them (304 on a matching `If-None-Match`, 301 from an outdated v3 hash).

mod support;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

async fn raw(
    s: &Server,
    c: &reqwest::Client,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req = c.request(method, format!("{}{}", s.url, path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let resp = req.send().await.expect("request");
    let code = resp.status();
    let h = resp.headers().clone();
    (code, h, resp.bytes().await.expect("body").to_vec())
}

#[tokio::test]
async fn json_bodies_paths_and_parameters() {
    let s = Server::start();
    let c = s.client();
    let cms = "/api/v1/namespaces/default/configmaps";
    let (code, _, created) = raw(
        &s,
        &c,
        Method::POST,
        cms,
        &[],
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}, "data": {"a": "1"}})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(created.last(), Some(&b'\n'), "a create ends with a newline");
    for path in [
        format!("{cms}/w"),
        cms.to_string(),
        format!("{cms}/missing"),
    ] {
        let (_, _, body) = raw(&s, &c, Method::GET, &path, &[], None).await;
        assert_eq!(body.last(), Some(&b'\n'), "{path} ends with a newline");
        assert!(
            !body[..body.len() - 1].contains(&b'\n'),
            "{path} is compact"
        );
    }
    let (_, _, pretty) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{cms}/w?pretty=true"),
        &[],
        None,
    )
    .await;
    let text = String::from_utf8(pretty).unwrap();
    assert!(
        text.starts_with("{\n  \"") && text.contains("\n  \"kind\": \"ConfigMap\",\n"),
        "{text}"
    );
    assert!(text.ends_with("}\n"));

    // Escaped `:` in a name.
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    let (code, _, _) = raw(
        &s,
        &c,
        Method::POST,
        roles,
        &[],
        Some(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "system:test"}})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, _, body) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{roles}/system%3Atest"),
        &[],
        None,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["metadata"]["name"], "system:test");

    // includeObject must be one of kube's values.
    let table = [("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")];
    let (code, _, body) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{cms}?includeObject=Foo"),
        &table,
        None,
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        v["message"],
        "TableOptions.meta.k8s.io \"\" is invalid: includeObject: Unsupported value: \"Foo\": supported values: \"Metadata\", \"None\", \"Object\""
    );
    let (code, _, _) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{cms}?includeObject=None"),
        &table,
        None,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
}

#[tokio::test]
async fn openapi_documents_are_cacheable() {
    let s = Server::start();
    let c = s.client();
    let (code, h, _) = raw(&s, &c, Method::GET, "/openapi/v2", &[], None).await;
    assert_eq!(code, StatusCode::OK);
    let etag = h["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.len() > 100, "{etag}");
    let (code, _, body) = raw(
        &s,
        &c,
        Method::GET,
        "/openapi/v2",
        &[("if-none-match", &etag)],
        None,
    )
    .await;
    assert_eq!(code, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());

    let (_, _, index) = raw(&s, &c, Method::GET, "/openapi/v3", &[], None).await;
    let index: Value = serde_json::from_slice(&index).unwrap();
    let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, h, _) = raw(&s, &c, Method::GET, &url, &[], None).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(h["cache-control"], "public, immutable");
    let hash = url.rsplit('=').next().unwrap();
    assert_eq!(h["etag"].to_str().unwrap(), format!("\"{hash}\""));
    let no_redirects = s
        .client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let (code, h, _) = raw(
        &s,
        &no_redirects,
        Method::GET,
        "/openapi/v3/apis/apps/v1?hash=0000",
        &[],
        None,
    )
    .await;
    assert_eq!(code, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(h["location"].to_str().unwrap(), url);
}

/// A JSON POST over HTTP/2 to an unrouted path ends in a clean 404 Status, never a stream
/// error, however large the body.
#[tokio::test]
async fn unrouted_posts_get_a_clean_404_over_http2() {
    let s = Server::start();
    let c = s.client();
    let big = json!({"kind": "Thing", "apiVersion": "nope.example.com/v1", "metadata": {"name": "x"},
                     "data": "y".repeat(512 * 1024)});
    for path in [
        "/apis/nope.example.com/v1/namespaces/default/things",
        "/not/a/path",
        "/api/v1/namespaces/default/nothings",
    ] {
        for _ in 0..5 {
            let resp = c
                .post(format!("{}{}", s.url, path))
                .header("content-type", "application/json")
                .body(big.to_string())
                .send()
                .await
                .unwrap_or_else(|e| panic!("{path}: {e:?}"));
            assert_eq!(resp.version(), reqwest::Version::HTTP_2);
            assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{path}");
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["kind"], "Status");
            assert_eq!(v["reason"], "NotFound");
        }
    }
}

/// Replaces what differs from run to run (uids, resourceVersions, timestamps, allocated
/// addresses) with fixed placeholders, keeping every byte of the encoding around them.
fn normalize(body: &[u8]) -> String {
    let mut text = String::from_utf8(body.to_vec()).unwrap();
    for key in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "time",
        "clusterIP",
    ] {
        let pat = format!("\"{key}\":\"");
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(&pat) {
            out.push_str(&rest[..at + pat.len()]);
            rest = &rest[at + pat.len()..];
            let end = rest.find('"').unwrap();
            out.push_str(&key.to_uppercase());
            rest = &rest[end..];
        }
        out.push_str(rest);
        text = out;
    }
    let ips = "\"clusterIPs\":[\"";
    if let Some(at) = text.find(ips) {
        let end = text[at + ips.len()..].find('"').unwrap();
        text.replace_range(at + ips.len()..at + ips.len() + end, "CLUSTERIP");
    }
    text
}

/// Create, get, list and error bodies of a Service, a Deployment and a ConfigMap compared
/// byte for byte with fixtures written to kube's encoding rules: Go struct field order,
/// sorted map keys, non-pointer structs and non-omitempty fields present, empty `omitempty`
/// fields absent, a trailing newline.
#[tokio::test]
async fn bodies_match_kube_encoding_byte_for_byte() {
    let s = Server::start();
    let c = s.client();
    let ua = [("user-agent", "fixture/1.0")];
    let ns = "/api/v1/namespaces/default";
    let apps = "/apis/apps/v1/namespaces/default";
    let meta = |name: &str, extra: &str| {
        format!("\"metadata\":{{\"name\":\"{name}\",\"namespace\":\"default\",\"uid\":\"UID\",\"resourceVersion\":\"RESOURCEVERSION\",{extra}\"creationTimestamp\":\"CREATIONTIMESTAMP\"")
    };
    // ConfigMap
    let (code, _, body) = raw(&s, &c, Method::POST, &format!("{ns}/configmaps"), &ua,
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "labels": {"b": "2", "a": "1"}}, "data": {"z": "1", "a": "2"}}))).await;
    assert_eq!(code, StatusCode::CREATED);
    let cm = format!(
        "{{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",{},\"labels\":{{\"a\":\"1\",\"b\":\"2\"}},\"managedFields\":[{{\"manager\":\"fixture\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"TIME\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{{\"f:data\":{{\".\":{{}},\"f:a\":{{}},\"f:z\":{{}}}},\"f:metadata\":{{\"f:labels\":{{\".\":{{}},\"f:a\":{{}},\"f:b\":{{}}}}}}}}}}]}},\"data\":{{\"a\":\"2\",\"z\":\"1\"}}}}",
        meta("cm", "")
    );
    assert_eq!(normalize(&body), format!("{cm}\n"), "create");
    let (_, _, body) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{ns}/configmaps/cm"),
        &ua,
        None,
    )
    .await;
    assert_eq!(normalize(&body), format!("{cm}\n"), "get");
    let (_, _, body) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{ns}/configmaps?labelSelector=a%3D1"),
        &ua,
        None,
    )
    .await;
    let item = cm.replacen("{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",", "{", 1);
    assert_eq!(
        normalize(&body),
        format!("{{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{{\"resourceVersion\":\"RESOURCEVERSION\"}},\"items\":[{item}]}}\n"),
        "list"
    );
    let (code, _, body) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{ns}/configmaps/nope"),
        &ua,
        None,
    )
    .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(
        String::from_utf8(body).unwrap(),
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"configmaps \\\"nope\\\" not found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"nope\",\"kind\":\"configmaps\"},\"code\":404}\n"
    );

    // Service
    let (code, _, body) = raw(&s, &c, Method::POST, &format!("{ns}/services"), &ua,
        Some(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "a"}, "ports": [{"port": 80}]}}))).await;
    assert_eq!(code, StatusCode::CREATED);
    let text = normalize(&body);
    let spec = "\"spec\":{\"ports\":[{\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}],\"selector\":{\"app\":\"a\"},\"clusterIP\":\"CLUSTERIP\",\"clusterIPs\":[\"CLUSTERIP\"],\"type\":\"ClusterIP\",\"sessionAffinity\":\"None\",\"ipFamilies\":[\"IPv4\"],\"ipFamilyPolicy\":\"SingleStack\",\"internalTrafficPolicy\":\"Cluster\"},\"status\":{\"loadBalancer\":{}}}\n";
    assert!(text.starts_with(&format!("{{\"kind\":\"Service\",\"apiVersion\":\"v1\",{},\"managedFields\":[{{\"manager\":\"fixture\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"TIME\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{{", meta("web", ""))), "{text}");
    assert!(text.ends_with(&format!("}}]}},{spec}")), "{text}");
    let (_, _, got) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{ns}/services/web"),
        &ua,
        None,
    )
    .await;
    assert_eq!(normalize(&got), text, "get equals create");

    // Deployment
    let (code, _, body) = raw(&s, &c, Method::POST, &format!("{apps}/deployments"), &ua,
        Some(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}))).await;
    assert_eq!(code, StatusCode::CREATED);
    let text = normalize(&body);
    assert!(
        text.starts_with(&format!(
            "{{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",{}",
            meta("d", "\"generation\":1,")
        )),
        "{text}"
    );
    assert!(
        text.ends_with("\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"a\"}},\"template\":{\"metadata\":{\"creationTimestamp\":null,\"labels\":{\"app\":\"a\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1\",\"resources\":{},\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\"}},\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":\"25%\",\"maxSurge\":\"25%\"}},\"revisionHistoryLimit\":10,\"progressDeadlineSeconds\":600},\"status\":{}}\n"),
        "{text}"
    );
    let (_, _, list) = raw(
        &s,
        &c,
        Method::GET,
        &format!("{apps}/deployments"),
        &ua,
        None,
    )
    .await;
    let list = normalize(&list);
    assert!(list.starts_with("{\"kind\":\"DeploymentList\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"resourceVersion\":\"RESOURCEVERSION\"},\"items\":[{\"metadata\":{\"name\":\"d\""), "{list}");
}

/// Custom resources have no protobuf encoding: a protobuf body is refused with 415 and the
/// media types they accept, as kube refuses it.
#[tokio::test]
async fn protobuf_bodies_for_custom_resources_are_415() {
    let s = Server::start();
    let c = s.client();
    let crd = serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let r = s
        .json(
            &c,
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            Some(crd),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while s.json(&c, Method::GET, path, None).await.code.as_u16() != 200 {
        assert!(std::time::Instant::now() < deadline, "widgets never served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let r = s
        .send(
            &c,
            Method::POST,
            path,
            "application/vnd.kubernetes.protobuf",
            Some(b"k8s\0".to_vec()),
        )
        .await;
    assert_eq!(r.code.as_u16(), 415, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    );
}
