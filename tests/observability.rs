//! Observability of one replica over HTTPS against the real binary: `--logging-format`
//! (JSON lines with kube's keys on stderr, kube's refusal of an unknown format) and
//! `/metrics` (kube's request, long-running, watch, storage and etcd metrics with kube's
//! labels and buckets, and the `rafter_raft_*` replication metrics).

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;
use support::Server;

/// One sample of the Prometheus text format: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// Parses the Prometheus text format (the subset the exporter writes).
fn parse_metrics(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("sample value");
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        let (name, labels) = match series.split_once('{') {
            None => (series.to_string(), BTreeMap::new()),
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').expect("closing brace");
                let mut labels = BTreeMap::new();
                let mut rest = body;
                while !rest.is_empty() {
                    let (k, v) = rest.split_once("=\"").expect("label");
                    // Values here never hold escaped quotes.
                    let end = v.find('"').expect("label end");
                    labels.insert(k.to_string(), v[..end].to_string());
                    rest = v[end + 1..].trim_start_matches(',');
                }
                (name.to_string(), labels)
            }
        };
        out.push((name, labels, value));
    }
    out
}

/// The samples named `name` whose labels include every pair of `want`.
fn find<'a>(samples: &'a [Sample], name: &str, want: &[(&str, &str)]) -> Vec<&'a Sample> {
    samples
        .iter()
        .filter(|(n, l, _)| {
            n == name
                && want
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .collect()
}

/// The one value of `name` with `want`, panicking with the metrics text when absent.
fn value(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> f64 {
    let found = find(samples, name, want);
    assert!(
        !found.is_empty(),
        "no {name} with {want:?} among {:#?}",
        samples
            .iter()
            .filter(|(n, _, _)| n.starts_with(name))
            .collect::<Vec<_>>()
    );
    found.iter().map(|(_, _, v)| *v).sum()
}

/// kube's `apiserver_request_duration_seconds` and `etcd_request_duration_seconds` buckets.
const KUBE_LATENCY_BUCKETS: &[&str] = &[
    "0.005", "0.025", "0.05", "0.1", "0.2", "0.4", "0.6", "0.8", "1", "1.25", "1.5", "2", "3", "4",
    "5", "6", "8", "10", "15", "20", "30", "45", "60", "+Inf",
];

/// The `le` bounds of a histogram's series with `want`.
fn buckets(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> Vec<String> {
    let mut series: Vec<BTreeMap<String, String>> = Vec::new();
    let mut les = Vec::new();
    for (_, l, _) in find(samples, &format!("{name}_bucket"), want) {
        let mut key = l.clone();
        let le = key.remove("le").expect("le label");
        if series.is_empty() {
            series.push(key.clone());
        }
        if series[0] == key {
            les.push(le);
        }
    }
    les
}

async fn scrape(s: &Server, c: &reqwest::Client) -> Vec<Sample> {
    let r = c.get(format!("{}/metrics", s.url)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    parse_metrics(&r.text().await.unwrap())
}

/// After writes, a watch and a long-running request, `/metrics` has kube's series with
/// kube's labels, histograms with kube's buckets, and the raft series.
#[tokio::test]
async fn metrics_have_kube_names_labels_and_buckets() {
    // Snapshots every 5 entries: the writes below build some.
    let s = Server::start_with(&["--snapshot-count", "5"]);
    let c = s.client();
    for i in 0..10 {
        let r = s
            .json(
                &c,
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                Some(json!({"metadata": {"name": format!("cm-{i}")}, "data": {"k": "v"}})),
            )
            .await;
        assert_eq!(r.code, StatusCode::CREATED, "{:?}", r.body);
    }
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/configmaps?dryRun=All",
            Some(json!({"metadata": {"name": "dry"}})),
        )
        .await;
    assert_eq!(r.code, StatusCode::CREATED);
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/configmaps/cm-0",
            None,
        )
        .await;
    assert_eq!(r.code, StatusCode::OK);
    // A watch, held open: the initial ADDED events go out at once.
    let mut watch = c
        .get(format!(
            "{}/api/v1/namespaces/default/configmaps?watch=true",
            s.url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(watch.status(), StatusCode::OK);
    let first = tokio::time::timeout(Duration::from_secs(10), watch.chunk())
        .await
        .expect("a watch event in time")
        .unwrap()
        .expect("a watch event");
    assert!(!first.is_empty());

    let m = scrape(&s, &c).await;
    // apiserver_request_total: kube's labels, dry_run, scope.
    let created = value(
        &m,
        "apiserver_request_total",
        &[
            ("verb", "POST"),
            ("dry_run", ""),
            ("group", ""),
            ("version", "v1"),
            ("resource", "configmaps"),
            ("subresource", ""),
            ("scope", "namespace"),
            ("component", "apiserver"),
            ("code", "201"),
        ],
    );
    assert!(created >= 10.0, "{created}");
    assert_eq!(
        value(
            &m,
            "apiserver_request_total",
            &[
                ("verb", "POST"),
                ("dry_run", "All"),
                ("resource", "configmaps")
            ]
        ),
        1.0
    );
    // A histogram with kube's buckets, not a summary.
    assert_eq!(
        buckets(
            &m,
            "apiserver_request_duration_seconds",
            &[
                ("verb", "POST"),
                ("resource", "configmaps"),
                ("dry_run", "")
            ]
        ),
        KUBE_LATENCY_BUCKETS
    );
    assert!(
        find(&m, "apiserver_request_duration_seconds", &[]).is_empty()
            && m.iter().all(|(_, l, _)| !l.contains_key("quantile")),
        "summaries in /metrics"
    );
    assert!(
        value(
            &m,
            "apiserver_request_duration_seconds_count",
            &[
                ("verb", "POST"),
                ("resource", "configmaps"),
                ("component", "apiserver")
            ]
        ) >= 10.0
    );
    // The open watch.
    let watch_labels = [
        ("verb", "WATCH"),
        ("group", ""),
        ("version", "v1"),
        ("resource", "configmaps"),
        ("subresource", ""),
        ("scope", "namespace"),
        ("component", "apiserver"),
    ];
    assert_eq!(
        value(&m, "apiserver_longrunning_requests", &watch_labels),
        1.0
    );
    let wl = [("group", ""), ("version", "v1"), ("resource", "configmaps")];
    assert!(value(&m, "apiserver_watch_events_total", &wl) >= 10.0);
    assert_eq!(
        buckets(&m, "apiserver_watch_events_sizes", &wl),
        ["1024", "2048", "4096", "8192", "16384", "32768", "65536", "131072", "+Inf"]
    );
    assert!(value(&m, "apiserver_watch_events_sizes_sum", &wl) > 0.0);
    // Stored objects, labelled resource.group as kube labels them.
    assert!(
        value(
            &m,
            "apiserver_storage_objects",
            &[("resource", "configmaps")]
        ) >= 10.0
    );
    assert!(
        value(
            &m,
            "apiserver_storage_objects",
            &[("resource", "clusterroles.rbac.authorization.k8s.io")]
        ) > 0.0
    );
    // Storage calls as kube's etcd_request_duration_seconds.
    let el = [("operation", "create"), ("type", "configmaps")];
    assert!(value(&m, "etcd_request_duration_seconds_count", &el) >= 10.0);
    assert_eq!(
        buckets(&m, "etcd_request_duration_seconds", &el),
        KUBE_LATENCY_BUCKETS
    );
    assert!(
        value(
            &m,
            "etcd_request_duration_seconds_count",
            &[("operation", "get"), ("type", "configmaps")]
        ) >= 1.0
    );
    // Raft.
    assert!(value(&m, "rafter_raft_current_term", &[]) >= 1.0);
    assert_eq!(value(&m, "rafter_raft_is_leader", &[]), 1.0);
    assert_eq!(value(&m, "rafter_raft_has_leader", &[]), 1.0);
    let applied = value(&m, "rafter_raft_applied_index", &[]);
    let committed = value(&m, "rafter_raft_committed_index", &[]);
    assert!(
        applied >= 10.0 && committed >= applied,
        "{applied} {committed}"
    );
    assert_eq!(value(&m, "rafter_raft_apply_lag", &[]), committed - applied);
    assert!(value(&m, "rafter_raft_leader_changes_total", &[]) >= 1.0);
    assert!(value(&m, "rafter_raft_proposals_committed_total", &[]) >= 10.0);
    assert!(value(&m, "rafter_raft_proposals_failed_total", &[]) >= 0.0);
    assert!(value(&m, "rafter_raft_propose_duration_seconds_count", &[]) >= 10.0);
    assert!(value(&m, "rafter_raft_read_index_duration_seconds_count", &[]) >= 1.0);
    assert!(
        value(
            &m,
            "rafter_raft_snapshot_builds_total",
            &[("kind", "policy")]
        ) >= 1.0
    );
    assert!(
        value(
            &m,
            "rafter_raft_snapshot_build_duration_seconds_count",
            &[("kind", "policy")]
        ) >= 1.0
    );
    assert!(
        value(
            &m,
            "rafter_raft_snapshot_builds_total",
            &[("kind", "transfer")]
        ) >= 0.0
    );

    // The watch ends: the gauge goes back down (bounded wait).
    drop(watch);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let m = scrape(&s, &c).await;
        if value(&m, "apiserver_longrunning_requests", &watch_labels) == 0.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watch still counts as running"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every stderr line of a replica started with `--logging-format=json` is one JSON object
/// with kube's keys.
#[tokio::test]
async fn json_logs_are_one_object_per_line() {
    let s = Server::start_wrapped(
        &["env", "RAFTER_LOG=info"],
        &["--logging-format=json"],
        true,
    );
    // A refused credential is logged at info.
    let r = s
        .anonymous_client()
        .get(format!("{}/api/v1/namespaces", s.url))
        .bearer_auth("not-a-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let path = s.stderr_path.clone().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("authentication failed") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let lines: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(!lines.is_empty(), "no log lines");
    for l in &lines {
        assert!(l["ts"].as_f64().is_some_and(|t| t > 1.6e9), "{l}");
        assert!(l["msg"].is_string(), "{l}");
        assert!(l["level"].is_string(), "{l}");
    }
    let refused = lines
        .iter()
        .find(|l| {
            l["msg"]
                .as_str()
                .is_some_and(|m| m.contains("authentication failed"))
        })
        .unwrap_or_else(|| panic!("no authentication line in {text}"));
    assert_eq!(refused["v"], 0, "{refused}");
    assert_eq!(refused["level"], "info");
    assert!(
        !text.contains("not-a-token"),
        "a credential reached the log: {text}"
    );
}

/// An unknown format stops the start with kube's text.
#[test]
fn unknown_logging_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.path())
        .args(["--listen", "127.0.0.1:0", "--logging-format", "xml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"format: Invalid value: "xml": Unsupported log format"#),
        "{err}"
    );
    assert!(
        !dir.path().join("ca.crt").exists(),
        "nothing is created before the flags are checked"
    );
}

/// `--tracing-config-file` takes kube's TracingConfiguration: its sampling rate marks new
/// traces sampled (seen in the request span's fields); an invalid file stops the start with
/// kube's text.
#[tokio::test]
async fn tracing_configuration_sets_the_sampling_rate() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nsamplingRatePerMillion: -1\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--listen", "127.0.0.1:0", "--tracing-config-file"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("samplingRatePerMillion: Invalid value: -1: sampling rate must be positive"),
        "{err}"
    );

    let good = dir.path().join("tracing.yaml");
    std::fs::write(
        &good,
        "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nendpoint: localhost:4317\nsamplingRatePerMillion: 1000000\n",
    )
    .unwrap();
    let good = good.to_str().unwrap().to_string();
    let s = Server::start_wrapped(
        &["env", "RAFTER_LOG=warn,rafter::server=debug"],
        &["--logging-format=json", "--tracing-config-file", &good],
        true,
    );
    let r = s
        .client()
        .get(format!("{}/api/v1/namespaces/default/configmaps", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let path = s.stderr_path.clone().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        let text = std::fs::read_to_string(&path).unwrap();
        let found = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|l| l["msg"] == "HTTP" && l["path"] == "/api/v1/namespaces/default/configmaps");
        if let Some(l) = found {
            break l;
        }
        assert!(Instant::now() < deadline, "no HTTP line: {text}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(line["sampled"], true, "{line}");
    assert_eq!(line["trace_id"].as_str().map(str::len), Some(32), "{line}");
    assert_eq!(line["parent_span_id"], "", "{line}");
}

/// A collector written here (OTLP's gRPC TraceService) receiving what a replica exports.
struct Collector(tokio::sync::mpsc::UnboundedSender<rafter::telemetry::otlp::pb::Span>);

#[tonic::async_trait]
impl rafter::telemetry::otlp::pb::trace_service_server::TraceService for Collector {
    async fn export(
        &self,
        req: tonic::Request<rafter::telemetry::otlp::pb::ExportTraceServiceRequest>,
    ) -> Result<
        tonic::Response<rafter::telemetry::otlp::pb::ExportTraceServiceResponse>,
        tonic::Status,
    > {
        for rs in req.into_inner().resource_spans {
            let service = rs
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .any(|a| a.key == "service.name");
            assert!(service, "no service.name");
            for ss in rs.scope_spans {
                for span in ss.spans {
                    let _ = self.0.send(span);
                }
            }
        }
        Ok(tonic::Response::new(Default::default()))
    }
}

/// With a tracing configuration, a request's span (sampled by the client's `traceparent`)
/// reaches the configured OTLP collector with the client's trace id and parent.
#[tokio::test]
async fn sampled_spans_are_exported_over_otlp() {
    use rafter::telemetry::otlp::pb;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let incoming =
        tonic::transport::server::TcpIncoming::from_listener(listener, true, None).unwrap();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(pb::trace_service_server::TraceServiceServer::new(
                Collector(tx),
            ))
            .serve_with_incoming(incoming),
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tracing.yaml");
    // Nothing sampled but what a client asks for.
    std::fs::write(
        &cfg,
        format!("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:{port}\nsamplingRatePerMillion: 0\n"),
    )
    .unwrap();
    let cfg = cfg.to_str().unwrap().to_string();
    let s = Server::start_with(&["--tracing-config-file", &cfg]);
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let r = s
        .client()
        .get(format!("{}/api/v1/namespaces/default/configmaps", s.url))
        .header("traceparent", format!("00-{trace}-b7ad6b7169203331-01"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let want = hex_bytes(trace);
    let span = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let span = rx.recv().await.expect("collector open");
            if span.trace_id == want {
                return span;
            }
        }
    })
    .await
    .expect("the request's span reached the collector");
    assert_eq!(span.name, "HTTP GET");
    assert_eq!(span.parent_span_id, hex_bytes("b7ad6b7169203331"));
    assert_eq!(span.span_id.len(), 8);
    assert!(span.end_time_unix_nano >= span.start_time_unix_nano);
    let attr = |k: &str| {
        span.attributes
            .iter()
            .find(|a| a.key == k)
            .and_then(|a| a.value.clone())
            .and_then(|v| v.value)
    };
    assert_eq!(
        attr("path"),
        Some(pb::any_value::Value::StringValue(
            "/api/v1/namespaces/default/configmaps".into()
        ))
    );
    assert_eq!(attr("code"), Some(pb::any_value::Value::IntValue(200)));
    assert_eq!(
        attr("verb"),
        Some(pb::any_value::Value::StringValue("list".into()))
    );
    drop(s);
    server.abort();
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}
