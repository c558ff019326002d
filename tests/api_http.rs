//! The REST core over real HTTPS: Status bodies, codes, headers and edge cases as
//! kube-apiserver v1.33 answers them.

mod support;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

struct Api {
    s: Server,
    c: reqwest::Client,
}

impl Api {
    fn new() -> Api {
        let s = Server::start();
        let c = s.client();
        Api { s, c }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        ctype: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let (code, _, text) = self
            .raw(method, path, ctype, None, body.map(|b| b.to_string()))
            .await;
        let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (code, v)
    }

    async fn raw(
        &self,
        method: Method,
        path: &str,
        ctype: Option<&str>,
        accept: Option<&str>,
        body: Option<String>,
    ) -> (StatusCode, reqwest::header::HeaderMap, String) {
        let mut req = self.c.request(method, format!("{}{}", self.s.url, path));
        if let Some(ct) = ctype {
            req = req.header("content-type", ct);
        }
        if let Some(a) = accept {
            req = req.header("accept", a);
        }
        if let Some(b) = body {
            req = req.body(b);
        }
        let resp = req.send().await.unwrap();
        let code = resp.status();
        let headers = resp.headers().clone();
        (code, headers, resp.text().await.unwrap())
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some("application/json"), Some(body))
            .await
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, None, None).await
    }
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

#[tokio::test]
async fn status_bodies_and_codes() {
    let api = Api::new();
    let base = "/api/v1/namespaces/default/configmaps";

    let (code, v) = api.post(base, cm("one")).await;
    assert_eq!(code, StatusCode::CREATED, "{v}");
    assert_eq!(v["metadata"]["namespace"], "default");
    let rv1 = v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(v["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap()
        .ends_with('Z'));

    let (code, v) = api.post(base, cm("one")).await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "configmaps \"one\" already exists", "reason": "AlreadyExists",
        "details": {"name": "one", "kind": "configmaps"}, "code": 409})
    );

    let (code, v) = api.get(&format!("{base}/missing")).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(v["message"], "configmaps \"missing\" not found");

    let (code, v) = api.get("/api/v1/nope").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(
        v["message"],
        "the server could not find the requested resource"
    );

    // Namespace in URL and body must agree.
    let mut other = cm("two");
    other["metadata"]["namespace"] = json!("kube-system");
    let (code, v) = api.post(base, other).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(v["reason"], "BadRequest");

    // Missing namespace.
    let (code, v) = api
        .post("/api/v1/namespaces/ghost/configmaps", cm("x"))
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(v["message"], "namespaces \"ghost\" not found");

    // Stale update → 409 Conflict; current one succeeds and bumps the revision.
    let mut upd = cm("one");
    upd["metadata"]["resourceVersion"] = json!("1");
    upd["data"] = json!({"k": "w"});
    let (code, v) = api
        .call(
            Method::PUT,
            &format!("{base}/one"),
            Some("application/json"),
            Some(upd.clone()),
        )
        .await;
    assert_eq!(code, StatusCode::CONFLICT, "{v}");
    assert_eq!(v["reason"], "Conflict");
    assert_eq!(v["message"], "Operation cannot be fulfilled on configmaps \"one\": the object has been modified; please apply your changes to the latest version and try again");
    upd["metadata"]["resourceVersion"] = json!(rv1);
    let (code, v) = api
        .call(
            Method::PUT,
            &format!("{base}/one"),
            Some("application/json"),
            Some(upd),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    assert!(
        v["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
            > rv1.parse::<i64>().unwrap()
    );

    // generateName.
    let (code, v) = api
        .post(base, json!({"metadata": {"generateName": "gen-"}}))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{v}");
    let name = v["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // Invalid name → 422 with causes.
    let (code, v) = api.post(base, cm("Not_Valid")).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(v["reason"], "Invalid");
    assert_eq!(v["details"]["causes"][0]["field"], "metadata.name");

    // Dry run: valid writes nothing; invalid value → 422.
    let (code, _) = api.post(&format!("{base}?dryRun=All"), cm("dry")).await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(
        api.get(&format!("{base}/dry")).await.0,
        StatusCode::NOT_FOUND
    );
    let (code, v) = api.post(&format!("{base}?dryRun=Yes"), cm("dry")).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{v}");

    // Unsupported patch type → 415; unsupported Accept → 406.
    let (code, v) = api
        .call(
            Method::PATCH,
            &format!("{base}/one"),
            Some("text/plain"),
            Some(json!({})),
        )
        .await;
    assert_eq!(code, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{v}");
    let (code, _, _) = api
        .raw(
            Method::GET,
            &format!("{base}/one"),
            None,
            Some("text/html"),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::NOT_ACCEPTABLE);

    // YAML output.
    let (code, headers, text) = api
        .raw(
            Method::GET,
            &format!("{base}/one"),
            None,
            Some("application/yaml"),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/yaml");
    assert!(text.contains("kind: ConfigMap"), "{text}");

    // Table output.
    let (code, _, text) = api
        .raw(
            Method::GET,
            base,
            None,
            Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    let t: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(t["kind"], "Table");
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["Name", "Data", "Age"]);

    // Delete returns a Success Status for configmaps.
    let (code, v) = api
        .call(Method::DELETE, &format!("{base}/one"), None, None)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(v["status"], "Success");
    assert_eq!(v["details"]["name"], "one");
}

#[tokio::test]
async fn non_resource_endpoints() {
    let api = Api::new();
    let (code, v) = api.get("/version").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(v["major"], "1");
    assert_eq!(v["minor"], "33");
    assert!(v["gitVersion"].as_str().unwrap().starts_with("v1.33."));

    let (code, _, text) = api
        .raw(Method::GET, "/readyz?verbose", None, None, None)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert!(
        text.contains("[+]ping ok")
            && text.contains("[+]raft ok")
            && text.contains("[+]shutdown ok"),
        "{text}"
    );
    assert!(text.ends_with("readyz check passed\n"), "{text}");
    let (_, _, text) = api.raw(Method::GET, "/healthz", None, None, None).await;
    assert_eq!(text, "ok");
    let (_, _, text) = api
        .raw(Method::GET, "/livez?verbose&exclude=raft", None, None, None)
        .await;
    assert!(text.contains("[+]raft excluded: ok"), "{text}");
    let (code, _, text) = api.raw(Method::GET, "/readyz/raft", None, None, None).await;
    assert_eq!((code, text.as_str()), (StatusCode::OK, "ok"));

    api.get("/api/v1/namespaces/default/configmaps").await;
    let (code, _, text) = api.raw(Method::GET, "/metrics", None, None, None).await;
    assert_eq!(code, StatusCode::OK);
    assert!(text.contains("apiserver_request_total"), "{text}");
    assert!(
        text.contains("apiserver_request_duration_seconds"),
        "{text}"
    );

    let (code, headers, text) = api
        .raw(Method::GET, "/apis", None, Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"), None)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        headers["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let d: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(d["kind"], "APIGroupDiscoveryList");
    let (code, v) = api.get("/apis/apps/v1").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(v["kind"], "APIResourceList");
}

#[tokio::test]
async fn pagination_and_watch() {
    let api = Api::new();
    let base = "/api/v1/namespaces/default/configmaps";
    for i in 0..7 {
        assert_eq!(
            api.post(base, cm(&format!("p{i}"))).await.0,
            StatusCode::CREATED
        );
    }
    let (_, page1) = api.get(&format!("{base}?limit=3")).await;
    assert_eq!(page1["items"].as_array().unwrap().len(), 3);
    let token = page1["metadata"]["continue"].as_str().unwrap().to_string();
    assert_eq!(page1["metadata"]["remainingItemCount"], 4);
    // A write between pages does not show up: every page is the first page's snapshot.
    api.post(base, cm("p-late")).await;
    let (_, page2) = api.get(&format!("{base}?limit=10&continue={token}")).await;
    let names: Vec<&str> = page2["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["p3", "p4", "p5", "p6"]);
    assert!(page2["metadata"].get("continue").is_none_or(|c| c == ""));
    let (code, _) = api.get(&format!("{base}?continue=garbage")).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);

    // Watch from a resourceVersion sees the next change exactly once.
    let rv = page1["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let resp = api
        .c
        .get(format!(
            "{}{base}?watch=1&resourceVersion={rv}&timeoutSeconds=5",
            api.s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let text = resp.text().await.unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 1, "{text}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "p-late");
}
