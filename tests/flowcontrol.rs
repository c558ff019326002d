//! API Priority and Fairness over real HTTPS: the mandatory and suggested configuration the
//! leader keeps, classification (the PF response headers), a full level's 429, fair queuing
//! with its debug dumps, a noisy user that cannot starve `system:masters` or leader election,
//! `Dangling` conditions, and the flags.

mod support;

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Server;

const FC: &str = "/apis/flowcontrol.apiserver.k8s.io/v1";

fn token_file(dir: &std::path::Path, users: &[(&str, &str, &str)]) -> String {
    let path = dir.join("tokens.csv");
    let lines: String = users
        .iter()
        .enumerate()
        .map(|(i, (tok, user, groups))| format!("{tok},{user},{i},\"{groups}\"\n"))
        .collect();
    std::fs::write(&path, lines).unwrap();
    path.to_str().unwrap().to_string()
}

fn token_client(s: &Server, token: &str) -> reqwest::Client {
    let ca = std::fs::read(s.dir.path().join("ca.crt")).unwrap();
    let mut h = reqwest::header::HeaderMap::new();
    h.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .default_headers(h)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Polls `f` until it gives `Some`, for at most 30 s.
async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn uid_of(s: &Server, resource: &str, name: &str) -> String {
    let r = s
        .json(
            &s.client(),
            Method::GET,
            &format!("{FC}/{resource}/{name}"),
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{resource}/{name}: {}", r.body);
    r.body["metadata"]["uid"].as_str().unwrap().to_string()
}

fn header(r: &reqwest::header::HeaderMap, name: &str) -> String {
    r.get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// Waits until a request of `client` to `path` is classified into the named schema and level.
async fn until_classified(s: &Server, client: &reqwest::Client, path: &str, fs: &str, pl: &str) {
    let (fs_uid, pl_uid) = (
        uid_of(s, "flowschemas", fs).await,
        uid_of(s, "prioritylevelconfigurations", pl).await,
    );
    eventually(&format!("{path} in {fs}/{pl}"), || async {
        let r = s.json(client, Method::GET, path, None).await;
        (header(&r.headers, "x-kubernetes-pf-flowschema-uid") == fs_uid
            && header(&r.headers, "x-kubernetes-pf-prioritylevel-uid") == pl_uid)
            .then_some(())
    })
    .await;
}

/// The text of an admin GET (the debug dumps, the metrics).
async fn get_text(s: &Server, path: &str) -> String {
    s.client()
        .get(format!("{}{path}", s.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

fn names(list: &Value) -> Vec<String> {
    let mut v: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_keeps_kubes_configuration_and_requests_follow_it() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = token_file(dir.path(), &[("tok-alice", "alice", "devs")]);
    let s = Server::start_with(&["--token-auth-file", &tokens]);
    let admin = s.client();
    let levels = eventually("the priority levels", || async {
        let r = s
            .json(
                &admin,
                Method::GET,
                &format!("{FC}/prioritylevelconfigurations"),
                None,
            )
            .await;
        (names(&r.body).len() == 8).then_some(r.body)
    })
    .await;
    assert_eq!(
        names(&levels),
        [
            "catch-all",
            "exempt",
            "global-default",
            "leader-election",
            "node-high",
            "system",
            "workload-high",
            "workload-low"
        ]
    );
    let schemas = eventually("the flow schemas", || async {
        let r = s
            .json(&admin, Method::GET, &format!("{FC}/flowschemas"), None)
            .await;
        (names(&r.body).len() == 13).then_some(r.body)
    })
    .await;
    for fs in schemas["items"].as_array().unwrap() {
        assert_eq!(
            fs["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"], "true",
            "{fs}"
        );
    }
    let global = levels["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["metadata"]["name"] == "global-default")
        .unwrap();
    assert_eq!(
        global["spec"],
        json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 20, "lendablePercent": 50,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}})
    );
    // Every schema's Dangling condition says its level exists.
    eventually("Dangling conditions", || async {
        let r = s
            .json(&admin, Method::GET, &format!("{FC}/flowschemas"), None)
            .await;
        r.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|fs| {
                fs["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter().any(|c| {
                        c["type"] == "Dangling" && c["status"] == "False" && c["reason"] == "Found"
                    })
                })
            })
            .then_some(())
    })
    .await;

    // Classification, as the response headers tell it.
    until_classified(&s, &admin, "/api/v1/namespaces", "exempt", "exempt").await;
    let alice = token_client(&s, "tok-alice");
    // alice has no rights: still classified (kube classifies before it authorizes).
    until_classified(
        &s,
        &alice,
        "/api/v1/namespaces",
        "global-default",
        "global-default",
    )
    .await;
    let r = s
        .json(&alice, Method::GET, "/api/v1/namespaces", None)
        .await;
    assert_eq!(r.code, StatusCode::FORBIDDEN);
    until_classified(&s, &s.anonymous_client(), "/readyz", "probes", "exempt").await;

    // A suggested object changed behind the producer's back gets its spec back; one whose
    // annotation says false is left alone; a deleted one comes back.
    let r = s
        .json(
            &admin,
            Method::PATCH,
            &format!("{FC}/prioritylevelconfigurations/global-default"),
            Some(json!({"spec": {"limited": {"nominalConcurrencyShares": 7}}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    eventually("global-default restored", || async {
        let r = s
            .json(
                &admin,
                Method::GET,
                &format!("{FC}/prioritylevelconfigurations/global-default"),
                None,
            )
            .await;
        (r.body["spec"]["limited"]["nominalConcurrencyShares"] == 20).then_some(())
    })
    .await;
    let r = s
        .json(
            &admin,
            Method::PATCH,
            &format!("{FC}/prioritylevelconfigurations/workload-low"),
            Some(
                json!({"metadata": {"annotations": {"apf.kubernetes.io/autoupdate-spec": "false"}},
                        "spec": {"limited": {"nominalConcurrencyShares": 7}}}),
            ),
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    let r = s
        .json(
            &admin,
            Method::DELETE,
            &format!("{FC}/flowschemas/service-accounts"),
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    eventually("service-accounts recreated", || async {
        let r = s
            .json(
                &admin,
                Method::GET,
                &format!("{FC}/flowschemas/service-accounts"),
                None,
            )
            .await;
        (r.code == StatusCode::OK).then_some(())
    })
    .await;
    let r = s
        .json(
            &admin,
            Method::GET,
            &format!("{FC}/prioritylevelconfigurations/workload-low"),
            None,
        )
        .await;
    assert_eq!(r.body["spec"]["limited"]["nominalConcurrencyShares"], 7);

    // kubectl reads them as it reads kube's.
    let out = s.kubectl(&["get", "flowschemas"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "exempt",
        "probes",
        "global-default",
        "catch-all",
        "MATCHINGPRECEDENCE",
    ] {
        assert!(text.contains(want), "{text}");
    }
    let out = s.kubectl(&[
        "get",
        "--raw",
        "/debug/api_priority_and_fairness/dump_priority_levels",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("PriorityLevelName,"), "{text}");
    for want in [
        "ActiveQueues,",
        "catch-all,",
        "global-default,",
        "workload-low,",
    ] {
        assert!(text.contains(want), "{text}");
    }
    // The filter's metrics.
    let m = get_text(&s, "/metrics").await;
    for want in [
        "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"exempt\",priority_level=\"exempt\"}",
        "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"catch-all\"}",
        "apiserver_flowcontrol_current_limit_seats{priority_level=\"global-default\"}",
        "apiserver_flowcontrol_request_wait_duration_seconds",
    ] {
        assert!(m.contains(want), "{want} not in the metrics");
    }
}

/// A request that holds its seat for about three seconds (a list that waits for a future
/// revision and then times out with a 504).
fn slow_list(client: &reqwest::Client, s: &Server) -> tokio::task::JoinHandle<StatusCode> {
    let req = client.get(format!(
        "{}/api/v1/namespaces/default/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan",
        s.url
    ));
    tokio::spawn(async move {
        req.send()
            .await
            .map(|r| r.status())
            .unwrap_or(StatusCode::BAD_GATEWAY)
    })
}

async fn create(s: &Server, resource: &str, obj: Value) {
    let r = s
        .json(
            &s.client(),
            Method::POST,
            &format!("{FC}/{resource}"),
            Some(obj),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
}

fn schema_for(name: &str, level: &str, user: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {
        "priorityLevelConfiguration": {"name": level}, "matchingPrecedence": 50,
        "distinguisherMethod": {"type": "ByUser"},
        "rules": [{"subjects": [{"kind": "User", "user": {"name": user}}],
                   "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                      "namespaces": ["*"], "clusterScope": true}],
                   "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_level_refuses_and_a_queued_one_waits_its_turn() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = token_file(
        dir.path(),
        &[
            ("tok-rude", "rude", "devs"),
            ("tok-patient", "patient", "devs"),
        ],
    );
    let s = Server::start_with(&[
        "--token-auth-file",
        &tokens,
        "--authorization-mode",
        "AlwaysAllow",
        "--max-requests-inflight",
        "2",
        "--max-mutating-requests-inflight",
        "0",
    ]);
    // One seat each, never more: a level that rejects, and one with a single short queue.
    for (name, response) in [
        ("tiny", json!({"type": "Reject"})),
        (
            "narrow",
            json!({"type": "Queue", "queuing": {"queues": 4, "handSize": 1, "queueLengthLimit": 1}}),
        ),
    ] {
        create(
            &s,
            "prioritylevelconfigurations",
            json!({"metadata": {"name": name}, "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": 1, "lendablePercent": 0, "borrowingLimitPercent": 0,
                "limitResponse": response}}}),
        )
        .await;
    }
    create(&s, "flowschemas", schema_for("tiny", "tiny", "rude")).await;
    create(&s, "flowschemas", schema_for("narrow", "narrow", "patient")).await;
    let rude = token_client(&s, "tok-rude");
    let patient = token_client(&s, "tok-patient");
    until_classified(&s, &rude, "/api/v1/namespaces", "tiny", "tiny").await;
    until_classified(&s, &patient, "/api/v1/namespaces", "narrow", "narrow").await;

    // tiny: the second request while the first holds the seat is refused at once.
    let slow = slow_list(&rude, &s);
    let r = eventually("a refusal", || async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let r = rude
            .get(format!("{}/api/v1/namespaces", s.url))
            .send()
            .await
            .unwrap();
        (r.status() == StatusCode::TOO_MANY_REQUESTS).then_some(r)
    })
    .await;
    assert!(header(r.headers(), "retry-after").parse::<u32>().unwrap() >= 1);
    assert_eq!(
        header(r.headers(), "x-kubernetes-pf-flowschema-uid"),
        uid_of(&s, "flowschemas", "tiny").await
    );
    assert_eq!(
        header(r.headers(), "content-type"),
        "text/plain; charset=utf-8"
    );
    assert_eq!(
        r.text().await.unwrap(),
        "Too many requests, please try again later.\n"
    );
    // Others are not held up by it.
    let r = s
        .json(&s.client(), Method::GET, "/api/v1/namespaces", None)
        .await;
    assert_eq!(r.code, StatusCode::OK);
    assert_eq!(slow.await.unwrap(), StatusCode::GATEWAY_TIMEOUT);

    // narrow: one runs, one waits in the flow's queue (the dump shows it), a third is
    // refused as the queue is full; the waiting one runs when the first ends.
    let first = slow_list(&patient, &s);
    let waiting = eventually("a queued request", || async {
        let req = patient.get(format!("{}/api/v1/namespaces", s.url)).send();
        let t = tokio::spawn(async move { req.await.map(|r| r.status()).ok() });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let dump = get_text(
            &s,
            "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1",
        )
        .await;
        if dump
            .lines()
            .any(|l| l.starts_with("narrow,") && l.contains("patient"))
        {
            Some((t, dump))
        } else {
            // It ran at once: the slow one was not running yet.
            let _ = t.await;
            None
        }
    })
    .await;
    let (queued, dump) = waiting;
    assert!(dump.starts_with("PriorityLevelName,"), "{dump}");
    assert!(dump.contains("UserName,"), "{dump}");
    let r = patient
        .get(format!("{}/api/v1/namespaces", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let levels = get_text(&s, "/debug/api_priority_and_fairness/dump_priority_levels").await;
    let row: Vec<&str> = levels
        .lines()
        .find(|l| l.starts_with("narrow,"))
        .unwrap()
        .split(',')
        .map(str::trim)
        .collect();
    // ActiveQueues, IsIdle, IsQuiescing, Waiting, Executing.
    assert_eq!(&row[1..6], ["1", "false", "false", "1", "1"], "{levels}");
    assert_eq!(first.await.unwrap(), StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(queued.await.unwrap(), Some(StatusCode::OK));
    let m = get_text(&s, "/metrics").await;
    for want in [
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"tiny\",priority_level=\"tiny\",reason=\"concurrency-limit\"}",
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"narrow\",priority_level=\"narrow\",reason=\"queue-full\"}",
    ] {
        assert!(m.contains(want), "{want} not in the metrics");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_noisy_user_starves_neither_masters_nor_leader_election() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = token_file(
        dir.path(),
        &[
            ("tok-noisy", "noisy", "devs"),
            (
                "tok-le",
                "system:serviceaccount:kube-system:elector",
                "system:serviceaccounts",
            ),
        ],
    );
    let s = Server::start_with(&[
        "--token-auth-file",
        &tokens,
        "--authorization-mode",
        "AlwaysAllow",
        "--max-requests-inflight",
        "4",
        "--max-mutating-requests-inflight",
        "2",
    ]);
    let noisy = token_client(&s, "tok-noisy");
    let elector = token_client(&s, "tok-le");
    let lease = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/my-lock";
    until_classified(
        &s,
        &noisy,
        "/api/v1/namespaces",
        "global-default",
        "global-default",
    )
    .await;
    until_classified(
        &s,
        &elector,
        lease,
        "system-leader-election",
        "leader-election",
    )
    .await;
    // The noisy user fills its level (one seat of six) with slow requests.
    let flood: Vec<_> = (0..24).map(|_| slow_list(&noisy, &s)).collect();
    eventually("the noisy user queued", || async {
        let d = get_text(&s, "/debug/api_priority_and_fairness/dump_requests").await;
        (d.lines()
            .filter(|l| l.starts_with("global-default,"))
            .count()
            >= 5)
            .then_some(())
    })
    .await;
    // Leader election and system:masters are served while the flood still waits.
    let r = s
        .json(
            &elector,
            Method::POST,
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
            Some(json!({"metadata": {"name": "my-lock"}, "spec": {"holderIdentity": "me"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let r = s.json(&elector, Method::GET, lease, None).await;
    assert_eq!(r.code, StatusCode::OK);
    let r = s
        .json(&s.client(), Method::GET, "/api/v1/namespaces", None)
        .await;
    assert_eq!(r.code, StatusCode::OK);
    let d = get_text(&s, "/debug/api_priority_and_fairness/dump_requests").await;
    assert!(
        d.lines()
            .filter(|l| l.starts_with("global-default,"))
            .count()
            >= 2,
        "the flood drained before the others ran: {d}"
    );
    for f in flood {
        f.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_without_its_level_is_dangling_until_the_level_exists() {
    let s = Server::start();
    create(&s, "flowschemas", schema_for("orphan", "nowhere", "nobody")).await;
    async fn condition(s: &Server) -> Option<Value> {
        let r = s
            .json(
                &s.client(),
                Method::GET,
                &format!("{FC}/flowschemas/orphan"),
                None,
            )
            .await;
        r.body["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Dangling").cloned())
    }
    let c = eventually("Dangling=True", || async {
        condition(&s).await.filter(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(c["reason"], "NotFound");
    assert_eq!(
        c["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"nowhere\" but there is no such object"
    );
    create(
        &s,
        "prioritylevelconfigurations",
        json!({"metadata": {"name": "nowhere"}, "spec": {"type": "Limited", "limited": {
            "limitResponse": {"type": "Reject"}}}}),
    )
    .await;
    let c = eventually("Dangling=False", || async {
        condition(&s).await.filter(|c| c["status"] == "False")
    })
    .await;
    assert_eq!(c["reason"], "Found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flags_turn_it_off_and_refuse_no_seats() {
    let s = Server::start_with(&["--enable-priority-and-fairness=false"]);
    let r = s
        .json(&s.client(), Method::GET, "/api/v1/namespaces", None)
        .await;
    assert_eq!(r.code, StatusCode::OK);
    assert!(r.headers.get("x-kubernetes-pf-flowschema-uid").is_none());
    let r = s
        .json(
            &s.client(),
            Method::GET,
            "/debug/api_priority_and_fairness/dump_priority_levels",
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::NOT_FOUND);
    drop(s);
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.path())
        .args([
            "--listen",
            "127.0.0.1:0",
            "--max-requests-inflight",
            "0",
            "--max-mutating-requests-inflight",
            "0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-requests-inflight=0 and --max-mutating-requests-inflight=0: at least one value must be positive when --enable-priority-and-fairness=true"),
        "{err}"
    );
}
