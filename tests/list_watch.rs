//! List and watch semantics over real HTTPS against the real binary, as the Kubernetes API
//! concepts define them: every resourceVersion mode of LIST and WATCH, pagination at a fixed
//! snapshot while writes continue, selector transitions, bookmarks, initial-events-end,
//! compaction (410), future revisions (504), option validation (422) and slow watchers.

mod support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::Server;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

struct Api {
    s: Server,
    c: reqwest::Client,
}

impl Api {
    fn new(args: &[&str]) -> Api {
        let s = Server::start_with(args);
        let c = s.client();
        Api { s, c }
    }

    async fn req(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let mut r = self.c.request(method, format!("{}{}", self.s.url, path));
        if let Some(b) = body {
            r = r
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let resp = r.send().await.unwrap();
        let code = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (code, headers, v)
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let (c, _, v) = self.req(reqwest::Method::GET, path, None).await;
        (c, v)
    }

    async fn ok(&self, path: &str) -> Value {
        let (c, v) = self.get(path).await;
        assert_eq!(c, StatusCode::OK, "GET {path}: {v}");
        v
    }

    async fn create(&self, name: &str, labels: Value) -> Value {
        let (c, _, v) = self
            .req(
                reqwest::Method::POST,
                CMS,
                Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})),
            )
            .await;
        assert_eq!(c, StatusCode::CREATED, "{v}");
        v
    }

    async fn patch_merge(&self, name: &str, patch: Value) -> Value {
        let resp = self
            .c
            .patch(format!("{}{CMS}/{name}", self.s.url))
            .header("content-type", "application/merge-patch+json")
            .body(patch.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        resp.json().await.unwrap()
    }

    async fn delete(&self, name: &str) -> Value {
        let (c, _, v) = self
            .req(reqwest::Method::DELETE, &format!("{CMS}/{name}"), None)
            .await;
        assert_eq!(c, StatusCode::OK, "{v}");
        v
    }

    async fn watch(&self, query: &str) -> Watch {
        let resp = self
            .c
            .get(format!("{}{CMS}?watch=1&{query}", self.s.url))
            .timeout(Duration::from_secs(120))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "watch {query}");
        Watch {
            resp,
            buf: Vec::new(),
        }
    }

    async fn watch_path(&self, path: &str) -> Watch {
        let resp = self
            .c
            .get(format!("{}{path}", self.s.url))
            .timeout(Duration::from_secs(120))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "watch {path}");
        Watch {
            resp,
            buf: Vec::new(),
        }
    }
}

fn rv(v: &Value) -> i64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

struct Watch {
    resp: reqwest::Response,
    buf: Vec<u8>,
}

impl Watch {
    /// The next event within `t`, None when the stream ended; panics on timeout.
    async fn next_within(&mut self, t: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + t;
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Some(serde_json::from_slice(&line).unwrap());
            }
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(c))) => self.buf.extend_from_slice(&c),
                Ok(Ok(None)) => return None,
                Ok(Err(e)) => panic!("watch stream failed: {e}"),
                Err(_) => panic!("no watch event within {t:?}"),
            }
        }
    }

    async fn next(&mut self) -> Value {
        self.next_within(Duration::from_secs(20))
            .await
            .expect("watch ended early")
    }

    /// Asserts that nothing arrives for `t`.
    async fn quiet(&mut self, t: Duration) {
        assert!(!self.buf.contains(&b'\n'), "unexpected buffered event");
        if let Ok(r) = tokio::time::timeout(t, self.resp.chunk()).await {
            match r {
                Ok(Some(c)) => panic!("unexpected event: {}", String::from_utf8_lossy(&c)),
                Ok(None) => panic!("watch ended"),
                Err(e) => panic!("watch failed: {e}"),
            }
        }
    }

    /// Every event until the stream ends (bounded).
    async fn rest(&mut self) -> Vec<Value> {
        let mut out = vec![];
        while let Some(e) = self.next_within(Duration::from_secs(30)).await {
            out.push(e);
        }
        out
    }
}

fn ev(e: &Value) -> (String, String) {
    (
        e["type"].as_str().unwrap().to_string(),
        e["object"]["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

fn assert_invalid(v: &Value, causes: &[(&str, &str)]) {
    assert_eq!(v["kind"], "Status", "{v}");
    assert_eq!(v["code"], 422, "{v}");
    assert_eq!(v["reason"], "Invalid", "{v}");
    assert_eq!(v["details"]["kind"], "ListOptions", "{v}");
    assert_eq!(v["details"]["group"], "meta.k8s.io", "{v}");
    let got: Vec<(String, String)> = v["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap().to_string(),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = causes
        .iter()
        .map(|(f, m)| (f.to_string(), m.to_string()))
        .collect();
    assert_eq!(got, want, "{v}");
}

#[tokio::test]
async fn list_resource_version_modes_and_validation() {
    let api = Api::new(&[]);
    let a = api.create("a", json!({"app": "x"})).await;
    let rv_a = rv(&a);
    api.create("b", json!({"app": "y"})).await;
    let c = api.create("c", json!({"app": "x"})).await;
    let rv_c = rv(&c);

    // Unset: consistent, ListMeta.resourceVersion is the revision of the snapshot.
    let l = api.ok(CMS).await;
    assert_eq!(names(&l), ["a", "b", "c"]);
    assert!(rv(&l) >= rv_c);
    for item in l["items"].as_array().unwrap() {
        assert!(item["metadata"]["resourceVersion"].is_string());
    }
    // "0": any (cache), same content here.
    let l0 = api.ok(&format!("{CMS}?resourceVersion=0")).await;
    assert_eq!(names(&l0), ["a", "b", "c"]);
    // NotOlderThan (plain and explicit).
    let l = api.ok(&format!("{CMS}?resourceVersion={rv_a}")).await;
    assert_eq!(names(&l), ["a", "b", "c"]);
    assert!(rv(&l) >= rv_c);
    let l = api
        .ok(&format!(
            "{CMS}?resourceVersion={rv_a}&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_eq!(names(&l), ["a", "b", "c"]);
    // Exact: history.
    let l = api
        .ok(&format!(
            "{CMS}?resourceVersion={rv_a}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(names(&l), ["a"]);
    assert_eq!(rv(&l), rv_a);
    // Legacy: resourceVersion=N with a limit (no match) is an exact read too.
    let l = api
        .ok(&format!("{CMS}?resourceVersion={rv_a}&limit=10"))
        .await;
    assert_eq!(names(&l), ["a"]);
    assert_eq!(rv(&l), rv_a);
    // Label selectors on every path.
    let l = api.ok(&format!("{CMS}?labelSelector=app%3Dx")).await;
    assert_eq!(names(&l), ["a", "c"]);
    let l = api
        .ok(&format!(
            "{CMS}?labelSelector=app+notin+(x)&resourceVersion=0"
        ))
        .await;
    assert_eq!(names(&l), ["b"]);
    let l = api
        .ok(&format!("{CMS}?fieldSelector=metadata.name!%3Db"))
        .await;
    assert_eq!(names(&l), ["a", "c"]);

    // Too large: waits ~3 s, then 504 Timeout with Retry-After.
    let future = rv_c + 1000;
    for path in [
        format!("{CMS}?resourceVersion={future}"),
        format!("{CMS}?resourceVersion={future}&resourceVersionMatch=Exact"),
        format!("{CMS}/a?resourceVersion={future}"),
    ] {
        let t = Instant::now();
        let (code, h, v) = api.req(reqwest::Method::GET, &path, None).await;
        assert_eq!(code, StatusCode::GATEWAY_TIMEOUT, "{path}: {v}");
        assert!(t.elapsed() >= Duration::from_millis(2500), "{path}");
        assert_eq!(v["reason"], "Timeout");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("Too large resource version: {future}, current: ")),
            "{v}"
        );
        assert_eq!(h.get("retry-after").unwrap(), "1");
    }

    // A future revision that arrives in time is waited for.
    let want = rv_c + 1;
    let waiter = {
        let c = api.c.clone();
        let url = format!("{}{CMS}?resourceVersion={want}", api.s.url);
        tokio::spawn(async move { c.get(url).send().await.unwrap() })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    api.create("d", json!({})).await;
    let resp = waiter.await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let l: Value = resp.json().await.unwrap();
    assert_eq!(names(&l), ["a", "b", "c", "d"]);

    // ValidateListOptions, as kube-apiserver (422 Invalid ListOptions.meta.k8s.io).
    let cases: &[(&str, &[(&str, &str)])] = &[
        (
            "resourceVersionMatch=NotOlderThan",
            &[("resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided")],
        ),
        (
            "resourceVersion=0&resourceVersionMatch=Exact",
            &[("resourceVersionMatch", "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"")],
        ),
        (
            "resourceVersion=5&resourceVersionMatch=Newest",
            &[("resourceVersionMatch", "Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\"")],
        ),
        (
            "resourceVersionMatch=Exact&continue=abc",
            &[
                ("resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
                ("resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden when continue is provided"),
            ],
        ),
        (
            "sendInitialEvents=true",
            &[("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list")],
        ),
        (
            "watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan",
            &[("resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")],
        ),
        (
            "watch=1&sendInitialEvents=true",
            &[("resourceVersionMatch", "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")],
        ),
        (
            "watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=3",
            &[
                ("resourceVersionMatch", "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
                ("resourceVersionMatch", "Unsupported value: \"Exact\": supported values: \"NotOlderThan\""),
            ],
        ),
    ];
    for (q, causes) in cases {
        let (code, v) = api.get(&format!("{CMS}?{q}")).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{q}: {v}");
        assert_invalid(&v, causes);
    }

    // 400s: malformed continue token / selectors, continue with a resourceVersion.
    for (q, msg) in [
        ("continue=garbage", "continue key is not valid"),
        ("labelSelector=a+in+(b", "unable to parse requirement"),
        ("fieldSelector=spec.nothing%3Dx", "\"spec.nothing\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""),
        ("limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiJhXHUwMDAwIn0&resourceVersion=5",
            "specifying resource version is not allowed when using continue"),
    ] {
        let (code, v) = api.get(&format!("{CMS}?{q}")).await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{q}: {v}");
        assert!(v["message"].as_str().unwrap().contains(msg), "{q}: {v}");
    }
}

#[tokio::test]
async fn pagination_is_one_snapshot_while_writes_continue() {
    let api = Api::new(&[]);
    for i in 0..30 {
        api.create(&format!("cm{i:02}"), json!({"i": format!("{}", i % 3)}))
            .await;
    }
    // Writers keep creating, updating and deleting while we page.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let c = api.c.clone();
        let url = api.s.url.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("w{i}"), "labels": {"i": "1"}}});
                c.post(format!("{url}{CMS}"))
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await
                    .unwrap();
                if i > 0 {
                    c.delete(format!("{url}{CMS}/w{}", i - 1))
                        .send()
                        .await
                        .unwrap();
                }
                c.patch(format!("{url}{CMS}/cm{:02}", i % 30))
                    .header("content-type", "application/merge-patch+json")
                    .body(json!({"data": {"i": i.to_string()}}).to_string())
                    .send()
                    .await
                    .unwrap();
                i += 1;
            }
        })
    };
    for (limit, query, filtered) in [(7, "", false), (3, "&labelSelector=i%3D1", true)] {
        let first = api.ok(&format!("{CMS}?limit={limit}{query}")).await;
        let snapshot = rv(&first);
        let mut all = names(&first);
        let mut token = first["metadata"]["continue"].as_str().unwrap().to_string();
        let mut remaining = first["metadata"]["remainingItemCount"].as_i64();
        assert_eq!(remaining.is_some(), !filtered, "{first}");
        let mut pages = 1;
        while !token.is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let page = api
                .ok(&format!("{CMS}?limit={limit}{query}&continue={token}"))
                .await;
            assert_eq!(
                rv(&page),
                snapshot,
                "every page is the first page's snapshot"
            );
            let n = names(&page);
            assert!(n.len() <= limit);
            if let Some(r) = remaining {
                assert_eq!(
                    r - n.len() as i64,
                    page["metadata"]["remainingItemCount"].as_i64().unwrap_or(0)
                );
            }
            remaining = page["metadata"]["remainingItemCount"].as_i64();
            all.extend(n);
            token = page["metadata"]["continue"]
                .as_str()
                .unwrap_or("")
                .to_string();
            pages += 1;
        }
        assert!(pages >= 2);
        // The pages together are exactly the list at that revision.
        let exact = api
            .ok(&format!(
                "{CMS}?resourceVersion={snapshot}&resourceVersionMatch=Exact{query}"
            ))
            .await;
        assert_eq!(all, names(&exact));
        let mut dedup = all.clone();
        dedup.dedup();
        assert_eq!(dedup, all, "no duplicates");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.await.unwrap();
    // kubectl --chunk-size returns every object once.
    let out = api.s.ok(&[
        "get",
        "configmaps",
        "-n",
        "default",
        "--chunk-size=4",
        "-o",
        "name",
    ]);
    let listed: Vec<&str> = out.lines().collect();
    let full = api.ok(CMS).await;
    assert_eq!(listed.len(), names(&full).len(), "{out}");
}

#[tokio::test]
async fn watch_resource_version_modes() {
    let api = Api::new(&[]);
    let a = api.create("a", json!({})).await;
    let rv_a = rv(&a);
    let b = api.create("b", json!({})).await;

    // Unset: synthetic ADDED of the consistent state (then, with bookmarks, the
    // initial-events-end bookmark, as WatchList defaulting does), then changes.
    let mut w_unset = api.watch("allowWatchBookmarks=true").await;
    assert_eq!(ev(&w_unset.next().await), ("ADDED".into(), "a".into()));
    assert_eq!(ev(&w_unset.next().await), ("ADDED".into(), "b".into()));
    let end = w_unset.next().await;
    assert_eq!(end["type"], "BOOKMARK");
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert!(rv(&end["object"]) >= rv(&b));
    // "0": ADDED from the cache.
    let mut w_zero = api.watch("resourceVersion=0").await;
    assert_eq!(ev(&w_zero.next().await), ("ADDED".into(), "a".into()));
    assert_eq!(ev(&w_zero.next().await), ("ADDED".into(), "b".into()));
    // N: only changes after N, no synthetic events.
    let mut w_n = api.watch(&format!("resourceVersion={rv_a}")).await;
    let e = w_n.next().await;
    assert_eq!(ev(&e), ("ADDED".into(), "b".into()));
    assert_eq!(rv(&e["object"]), rv(&b));
    // Future N: waits for it, then only changes after it.
    let future = rv(&b) + 2;
    let mut w_future = api.watch(&format!("resourceVersion={future}")).await;
    // sendInitialEvents=true + NotOlderThan: ADDED, then the annotated bookmark.
    let mut w_list = api
        .watch(&format!(
            "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion={rv_a}&allowWatchBookmarks=true"
        ))
        .await;
    assert_eq!(ev(&w_list.next().await), ("ADDED".into(), "a".into()));
    assert_eq!(ev(&w_list.next().await), ("ADDED".into(), "b".into()));
    let end = w_list.next().await;
    assert_eq!(end["type"], "BOOKMARK");
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(end["object"]["kind"], "ConfigMap");
    assert_eq!(end["object"]["apiVersion"], "v1");
    assert_eq!(rv(&end["object"]), rv(&b));
    // sendInitialEvents=false + NotOlderThan: changes after N.
    let mut w_nofill = api
        .watch(&format!(
            "sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion={rv_a}"
        ))
        .await;
    assert_eq!(ev(&w_nofill.next().await), ("ADDED".into(), "b".into()));
    // Deprecated /watch/ paths, for a collection and for one name.
    let mut w_old = api
        .watch_path(&format!(
            "/api/v1/watch/namespaces/default/configmaps?resourceVersion={rv_a}"
        ))
        .await;
    assert_eq!(ev(&w_old.next().await), ("ADDED".into(), "b".into()));
    let mut w_one = api
        .watch_path("/api/v1/watch/namespaces/default/configmaps/a?resourceVersion=0")
        .await;
    assert_eq!(ev(&w_one.next().await), ("ADDED".into(), "a".into()));

    // Changes: c (create, revision rv(b)+1), modify a, delete b.
    let c = api.create("c", json!({})).await;
    let a2 = api.patch_merge("a", json!({"data": {"k": "2"}})).await;
    assert_eq!(rv(&a2), future);
    let del = api.delete("b").await;
    let _ = del;
    let expect_all = [
        ("ADDED", "c", rv(&c)),
        ("MODIFIED", "a", rv(&a2)),
        ("DELETED", "b", rv(&a2) + 1),
    ];
    for (name, w) in [
        ("unset", &mut w_unset),
        ("zero", &mut w_zero),
        ("n", &mut w_n),
        ("list", &mut w_list),
        ("nofill", &mut w_nofill),
        ("old", &mut w_old),
    ] {
        for (t, n, r) in expect_all {
            let e = w.next().await;
            assert_eq!(ev(&e), (t.to_string(), n.to_string()), "{name}: {e}");
            assert_eq!(rv(&e["object"]), r, "{name}: {e}");
        }
    }
    // The DELETED event carries the last state of the object at the deletion revision.
    let e = w_future.next().await;
    assert_eq!(ev(&e), ("DELETED".into(), "b".into()), "future: {e}");
    let e = w_one.next().await;
    assert_eq!(ev(&e), ("MODIFIED".into(), "a".into()));
    w_one.quiet(Duration::from_millis(500)).await;

    // timeoutSeconds ends the stream cleanly, with a last bookmark when allowed.
    let mut w = api
        .watch(&format!(
            "resourceVersion={}&timeoutSeconds=1&allowWatchBookmarks=true",
            rv(&a2) + 1
        ))
        .await;
    let rest = w.rest().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["type"], "BOOKMARK");
    assert!(rv(&rest[0]["object"]) >= rv(&a2) + 1);
    let obj = rest[0]["object"].as_object().unwrap();
    assert_eq!(
        obj.keys().collect::<Vec<_>>(),
        ["kind", "apiVersion", "metadata"]
    );
    let mut w = api.watch("resourceVersion=0&timeoutSeconds=1").await;
    let rest = w.rest().await;
    assert_eq!(
        rest.iter().map(ev).collect::<Vec<_>>(),
        [
            ("ADDED".to_string(), "a".to_string()),
            ("ADDED".into(), "c".into())
        ]
    );
}

#[tokio::test]
async fn selector_transitions_and_bookmarks() {
    let api = Api::new(&["--watch-bookmark-interval", "1s"]);
    let x = api.create("x", json!({"app": "blue"})).await;
    let start = rv(&x);
    let mut blue = api
        .watch(&format!("resourceVersion={start}&labelSelector=app%3Dblue"))
        .await;
    let mut by_name = api
        .watch(&format!(
            "resourceVersion={start}&fieldSelector=metadata.name%3Dy"
        ))
        .await;
    let mut none = api
        .watch(&format!(
            "resourceVersion={start}&labelSelector=app%3Dnothing&allowWatchBookmarks=true"
        ))
        .await;
    api.create("y", json!({"app": "green"})).await; // not blue
    let y1 = api
        .patch_merge("y", json!({"metadata": {"labels": {"app": "blue"}}}))
        .await;
    let y2 = api.patch_merge("y", json!({"data": {"k": "2"}})).await;
    let y3 = api
        .patch_merge("y", json!({"metadata": {"labels": {"app": "red"}}}))
        .await;
    let y4 = api.delete("y").await;
    let _ = y4;
    // Starts matching → ADDED; still matches → MODIFIED; stops matching → DELETED with the
    // previous object (still blue) at the new revision; deleted while not matching → nothing.
    let e = blue.next().await;
    assert_eq!(ev(&e), ("ADDED".into(), "y".into()));
    assert_eq!(rv(&e["object"]), rv(&y1));
    let e = blue.next().await;
    assert_eq!(ev(&e), ("MODIFIED".into(), "y".into()));
    assert_eq!(rv(&e["object"]), rv(&y2));
    let e = blue.next().await;
    assert_eq!(ev(&e), ("DELETED".into(), "y".into()));
    assert_eq!(rv(&e["object"]), rv(&y3));
    assert_eq!(e["object"]["metadata"]["labels"]["app"], "blue");
    assert_eq!(e["object"]["data"]["k"], "2");
    blue.quiet(Duration::from_millis(800)).await;
    let types: Vec<String> = [
        by_name.next().await,
        by_name.next().await,
        by_name.next().await,
        by_name.next().await,
        by_name.next().await,
    ]
    .iter()
    .map(|e| ev(e).0)
    .collect();
    assert_eq!(
        types,
        ["ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"]
    );
    // A watch whose selector matches nothing still gets periodic bookmarks that advance.
    let deadline = Instant::now() + Duration::from_secs(10);
    let last = rv(&y3) + 1;
    loop {
        let e = none.next().await;
        assert_eq!(e["type"], "BOOKMARK", "{e}");
        assert!(e["object"]["metadata"].get("annotations").is_none());
        if rv(&e["object"]) >= last {
            break;
        }
        assert!(Instant::now() < deadline, "bookmark never reached {last}");
    }
}

#[tokio::test]
async fn compaction_expires_exact_reads_continue_tokens_and_watches() {
    let api = Api::new(&["--compaction-window", "1s"]);
    for i in 0..5 {
        api.create(&format!("old{i}"), json!({})).await;
    }
    let page = api.ok(&format!("{CMS}?limit=2")).await;
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    let old = rv(&page);
    // Keep writing until the compactor has passed `old`.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut i = 0;
    loop {
        api.create(&format!("new{i}"), json!({})).await;
        i += 1;
        let (code, _) = api
            .get(&format!(
                "{CMS}?resourceVersion={old}&resourceVersionMatch=Exact"
            ))
            .await;
        if code == StatusCode::GONE {
            break;
        }
        assert!(Instant::now() < deadline, "history was never compacted");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let (code, v) = api
        .get(&format!(
            "{CMS}?resourceVersion={old}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(code, StatusCode::GONE);
    assert_eq!(v["reason"], "Expired");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("too old resource version: {old} (")),
        "{v}"
    );
    // An old continue token: 410 with a fresh token that continues from the next key.
    let (code, v) = api.get(&format!("{CMS}?limit=2&continue={token}")).await;
    assert_eq!(code, StatusCode::GONE, "{v}");
    assert_eq!(v["reason"], "Expired");
    assert!(v["message"]
        .as_str()
        .unwrap()
        .starts_with("The provided continue parameter is too old"));
    let fresh = v["metadata"]["continue"].as_str().unwrap();
    let (code, next) = api.get(&format!("{CMS}?limit=100&continue={fresh}")).await;
    assert_eq!(code, StatusCode::OK, "{next}");
    assert_eq!(names(&next), ["old2", "old3", "old4"]);
    // A watch from before the compacted revision: 200 + ERROR 410 Expired, then the end.
    let mut w = api.watch(&format!("resourceVersion={old}")).await;
    let e = w.next().await;
    assert_eq!(e["type"], "ERROR", "{e}");
    assert_eq!(e["object"]["code"], 410);
    assert_eq!(e["object"]["reason"], "Expired");
    let msg = e["object"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!("too old resource version: {old} (")),
        "{msg}"
    );
    assert!(w.next_within(Duration::from_secs(5)).await.is_none());
}

#[tokio::test]
async fn slow_watcher_is_ended_with_410_and_never_blocks_writes() {
    let api = Api::new(&["--watch-queue", "4"]);
    let first = api.create("seed", json!({})).await;
    // A watcher that does not read.
    let mut slow = api.watch(&format!("resourceVersion={}", rv(&first))).await;
    let big = "x".repeat(256 * 1024);
    let t = Instant::now();
    for i in 0..60 {
        let (c, _, v) = api
            .req(
                reqwest::Method::POST,
                CMS,
                Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("big{i}")}, "data": {"k": big}})),
            )
            .await;
        assert_eq!(c, StatusCode::CREATED, "{v}");
    }
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "writes were slowed down"
    );
    let events = slow.rest().await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "ERROR", "{}", events.len());
    assert_eq!(last["object"]["code"], 410);
    assert_eq!(last["object"]["reason"], "Expired");
    assert!(events.len() < 61, "{}", events.len());
    // The events before the error are a gap-free prefix of the writes.
    for (i, e) in events[..events.len() - 1].iter().enumerate() {
        assert_eq!(ev(e), ("ADDED".to_string(), format!("big{i}")));
    }
}

/// client-go's metadata informers (kube-controller-manager's garbage collector and namespace
/// controller) watch with `as=PartialObjectMetadata`: every event, bookmarks included, carries
/// a PartialObjectMetadata, never the full object.
#[tokio::test]
async fn metadata_only_watch() {
    let api = Api::new(&["--watch-bookmark-interval", "1s"]);
    api.create("m1", json!({"app": "meta"})).await;
    let resp = api
        .c
        .get(format!(
            "{}{CMS}?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=20",
            api.s.url
        ))
        .header(
            "accept",
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
        )
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let mut w = Watch {
        resp,
        buf: Vec::new(),
    };
    let added = w.next().await;
    assert_eq!(added["type"], "ADDED");
    assert_eq!(
        added["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
               "metadata": added["object"]["metadata"].clone()})
    );
    assert_eq!(added["object"]["metadata"]["name"], "m1");
    api.patch_merge("m1", json!({"data": {"k": "2"}})).await;
    let mut saw_bookmark = false;
    let mut saw_modified = false;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(saw_bookmark && saw_modified) && Instant::now() < deadline {
        let e = w.next().await;
        assert_eq!(e["object"]["kind"], "PartialObjectMetadata", "{e}");
        assert!(e["object"].get("data").is_none(), "{e}");
        match e["type"].as_str() {
            Some("BOOKMARK") => saw_bookmark = true,
            Some("MODIFIED") => saw_modified = true,
            _ => {}
        }
    }
    assert!(saw_bookmark && saw_modified);
}

/// Watch output that is made once per event and shared (Table rows per `includeObject`,
/// field sets) still gives each watcher its own view: column definitions in a watcher's
/// first Table event only, the object as its `includeObject` asks, field and label
/// selectors combined, and watchers of one namespace never see another's events.
#[tokio::test]
async fn shared_table_rows_and_field_selectors_per_watcher() {
    let api = Api::new(&[]);
    let x = api.create("x", json!({"app": "blue"})).await;
    let start = rv(&x);
    let table = |include: &str| {
        let c = api.c.clone();
        let url = format!(
            "{}{CMS}?watch=1&resourceVersion={start}&includeObject={include}",
            api.s.url
        );
        async move {
            let resp = c
                .get(url)
                .header("accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
                .timeout(Duration::from_secs(120))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::OK);
            Watch {
                resp,
                buf: Vec::new(),
            }
        }
    };
    let mut none = table("None").await;
    let mut meta = table("Metadata").await;
    let mut whole = table("Object").await;
    let mut early = table("Metadata").await;
    let mut blue_default = api
        .watch_path(&format!(
            "/api/v1/configmaps?watch=1&resourceVersion={start}&fieldSelector=metadata.namespace%3Ddefault,metadata.name!%3Dz&labelSelector=app%3Dblue"
        ))
        .await;
    let mut other_ns = api
        .watch_path(&format!(
            "/api/v1/namespaces/other/configmaps?watch=1&resourceVersion={start}"
        ))
        .await;
    api.create("y", json!({"app": "blue"})).await;
    // `early` reads its first event before the others exist as later watchers.
    let e = early.next().await;
    assert_eq!(e["type"], "ADDED");
    assert!(!e["object"]["columnDefinitions"]
        .as_array()
        .unwrap()
        .is_empty());
    api.create("z", json!({"app": "blue"})).await;
    let y = api
        .patch_merge("y", json!({"metadata": {"labels": {"app": "red"}}}))
        .await;
    for (w, include) in [
        (&mut none, "None"),
        (&mut meta, "Metadata"),
        (&mut whole, "Object"),
    ] {
        for (i, want) in ["ADDED", "ADDED", "MODIFIED"].iter().enumerate() {
            let e = w.next().await;
            assert_eq!(e["type"], *want, "{include}: {e}");
            let t = &e["object"];
            assert_eq!(t["kind"], "Table");
            let cols = t["columnDefinitions"].as_array().unwrap();
            assert_eq!(cols.is_empty(), i > 0, "{include} event {i}: {t}");
            let row = &t["rows"][0];
            assert_eq!(row["cells"][0], ["y", "z", "y"][i]);
            match include {
                "None" => assert!(row["object"].is_null()),
                "Metadata" => {
                    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
                    assert!(row["object"].get("data").is_none());
                }
                _ => {
                    assert_eq!(row["object"]["kind"], "ConfigMap");
                    assert_eq!(row["object"]["data"]["k"], "v");
                }
            }
        }
    }
    for want in ["ADDED", "MODIFIED"] {
        let e = early.next().await;
        assert_eq!(e["type"], want);
        assert!(e["object"]["columnDefinitions"]
            .as_array()
            .unwrap()
            .is_empty());
    }
    // Field and label selectors together: z is excluded by name, y leaves by its label.
    let e = blue_default.next().await;
    assert_eq!(ev(&e), ("ADDED".into(), "y".into()));
    let e = blue_default.next().await;
    assert_eq!(ev(&e), ("DELETED".into(), "y".into()));
    assert_eq!(rv(&e["object"]), rv(&y));
    assert_eq!(e["object"]["metadata"]["labels"]["app"], "blue");
    blue_default.quiet(Duration::from_millis(500)).await;
    other_ns.quiet(Duration::from_millis(300)).await;
}
