//! `GET /api/v1/componentstatuses[/<name>]`: kube's read-only, deprecated ComponentStatus
//! resource, computed per request and never stored.
//!
//! As kube-apiserver does, it probes the scheduler (`https://127.0.0.1:10259/healthz`) and the
//! controller manager (`https://127.0.0.1:10257/healthz`) without verifying their
//! certificates, so they show Healthy only where such components run beside this replica.
//! `etcd-0` is Rafter's own keyspace: this replica's Raft storage health (there is no etcd).
//! Owns the probing and the JSON; the Table is `registry::table`'s printer.

use std::time::Duration;

use http::{Response, StatusCode};
use serde_json::{json, Value};

use super::{respond, Query};
use crate::meta::fields::FieldSelector;
use crate::meta::labels::Selector;
use crate::meta::status::{GroupResource, Status};
use crate::registry::table::{self, printers, IncludeObject};
use crate::server::negotiate::Output;
use crate::server::{App, Body};

/// kube's `probeTimeOut`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

const GR: GroupResource<'static> = GroupResource {
    group: "",
    resource: "componentstatuses",
};

/// The components, in the order `kubectl get componentstatuses` shows kube's.
const COMPONENTS: &[(&str, Option<&str>)] = &[
    ("scheduler", Some("https://127.0.0.1:10259/healthz")),
    (
        "controller-manager",
        Some("https://127.0.0.1:10257/healthz"),
    ),
    ("etcd-0", None),
];

/// Serves a get (`name`) or list of component statuses.
pub async fn handle(
    app: &App,
    verb: &str,
    name: Option<&str>,
    query: &Query,
    output: Output,
) -> Result<Response<Body>, Status> {
    match (verb, name) {
        ("get", Some(name)) => {
            let Some(&(_, url)) = COMPONENTS.iter().find(|(n, _)| *n == name) else {
                // kube's REST returns a plain error here, which becomes a 500.
                return Err(Status::internal(format!("Component not found: {name}")));
            };
            let mut obj = status_of(app, name, url).await;
            if let Some(o) = obj.as_object_mut() {
                o.insert("kind".into(), json!("ComponentStatus"));
                o.insert("apiVersion".into(), json!("v1"));
            }
            Ok(render(output, &[obj], None))
        }
        ("list", None) => {
            // kube filters by the selectors (a component has no labels; its fields are
            // its name and an empty namespace).
            let labels = Selector::parse(query.get("labelSelector").unwrap_or_default())
                .map_err(Status::bad_request)?;
            let fields = FieldSelector::parse(query.get("fieldSelector").unwrap_or_default())
                .map_err(Status::bad_request)?;
            let probes = COMPONENTS
                .iter()
                .map(|&(n, url)| async move { status_of(app, n, url).await });
            let items: Vec<Value> = futures::future::join_all(probes)
                .await
                .into_iter()
                .filter(|item| {
                    let name = item.pointer("/metadata/name").and_then(Value::as_str);
                    let own: std::collections::BTreeMap<String, String> = [
                        ("metadata.name".to_string(), name.unwrap_or("").to_string()),
                        ("metadata.namespace".to_string(), String::new()),
                    ]
                    .into();
                    labels.matches_object(item) && fields.matches(&own)
                })
                .collect();
            Ok(render(output, &items, Some(())))
        }
        (verb, _) => Err(Status::method_not_supported(GR, verb)),
    }
}

/// One component's status: a single `Healthy` condition.
async fn status_of(app: &App, name: &str, url: Option<&str>) -> Value {
    let (status, message, error) = match url {
        None => match app.store.kv().health() {
            Ok(()) => ("True", "ok".to_string(), String::new()),
            Err(e) => ("False", String::new(), e),
        },
        Some(url) => probe(url).await,
    };
    let mut condition = json!({"type": "Healthy", "status": status});
    if !message.is_empty() {
        condition["message"] = json!(message);
    }
    if !error.is_empty() {
        condition["error"] = json!(error);
    }
    json!({"metadata": {"name": name, "creationTimestamp": null}, "conditions": [condition]})
}

/// kube's HTTP prober: 2xx/3xx is a success whose body is the message; otherwise a failure
/// whose message says why.
async fn probe(url: &str) -> (&'static str, String, String) {
    let client = match reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(PROBE_TIMEOUT)
        .build()
    {
        Ok(c) => c,
        Err(e) => return ("Unknown", String::new(), e.to_string()),
    };
    match client.get(url).send().await {
        Err(e) => (
            "False",
            format!("Get {url:?}: {}", root_cause(&e)),
            String::new(),
        ),
        Ok(resp) => {
            let code = resp.status();
            let body = resp.text().await.unwrap_or_default();
            if code.is_success() || code.is_redirection() {
                ("True", body, String::new())
            } else {
                (
                    "False",
                    format!("HTTP probe failed with statuscode: {}", code.as_u16()),
                    String::new(),
                )
            }
        }
    }
}

/// The innermost error of a failed request (the connection's), as Go prints a dial error.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    let text = cur.to_string();
    if text.contains("Connection refused") {
        return "connect: connection refused".into();
    }
    text
}

/// kube's deprecation warning for the resource.
const DEPRECATED: &str = r#"299 - "v1 ComponentStatus is deprecated in v1.19+""#;

/// The object (`list == None`) or ComponentStatusList, or their Table, with the warning.
fn render(output: Output, items: &[Value], list: Option<()>) -> Response<Body> {
    let mut resp = render_body(output, items, list);
    resp.headers_mut().append(
        http::header::WARNING,
        http::HeaderValue::from_static(DEPRECATED),
    );
    resp
}

fn render_body(output: Output, items: &[Value], list: Option<()>) -> Response<Body> {
    if let Output::Table(version) = output {
        let t = table::table(
            printers::COMPONENT_STATUS,
            items,
            json!({}),
            IncludeObject::Metadata,
            version,
            jiff::Timestamp::now(),
        );
        return respond(Output::Json, StatusCode::OK, &t);
    }
    let body = match list {
        None => items.first().cloned().unwrap_or(Value::Null),
        Some(()) => json!({
            "kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items,
        }),
    };
    respond(output.plain(), StatusCode::OK, &body)
}
