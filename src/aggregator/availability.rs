//! The aggregator's loops. On every replica (each replica's own view, as kube runs an
//! availability controller in every apiserver): the set of remote APIServices followed from
//! this replica's store, each checked as kube's `AvailableConditionController` checks it
//! (Service present, a ClusterIP Service listening on the port with ready endpoints, then a
//! discovery GET of `/apis/<group>/<version>` as `system:kube-aggregator` in
//! `system:masters`, 5 s, five attempts at once of which one must pass) with kube's reasons
//! and messages (and its `aggregator_unavailable_apiservice` gauge and
//! `aggregator_unavailable_apiservice_total` counter), its discovery document and
//! OpenAPI kept for the merged documents, and the `Available` condition written only when
//! it changed; local APIServices are `Available` with reason `Local`.
//!
//! On the leader only (idempotent writes, so a new leader repeating them is harmless): the
//! local APIServices of every served group-version (kube's autoregister: built-ins labelled
//! `onstart`, custom resource groups `true` and removed when no longer served), and the
//! `kube-system/extension-apiserver-authentication` ConfigMap with the client CA and the
//! requestheader settings extension servers verify callers with.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{local_priority, resolve, Aggregator, Remote};
use crate::meta::status::Status;
use crate::registry::store::{
    DeleteOptions, ListOptions, Part, ReadAt, Scope, Store, WriteOptions,
};

/// How often a remote APIService is checked again (kube re-queues on every change and
/// on failures; this bounds how long a dead server looks available).
const CHECK_EVERY: Duration = Duration::from_secs(5);
/// How often the loop looks at the APIServices.
const TICK: Duration = Duration::from_millis(500);
/// How often the leader reconciles the ConfigMap.
const LEADER_EVERY: Duration = Duration::from_secs(5);
/// kube's discovery check timeout.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);
/// kube's bound on one attempt beyond the client's timeout (slow dials and lookups).
const DISCOVERY_INSURANCE: Duration = Duration::from_secs(6);
/// Attempts of one discovery check (kube's `attempts := 5`), run at once.
const DISCOVERY_ATTEMPTS: usize = 5;

const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";

fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn write_options() -> WriteOptions {
    WriteOptions {
        now: now(),
        field_manager: Some("kube-apiserver".into()),
        ..Default::default()
    }
}

/// The `Available` condition: (status, reason, message).
pub type Condition = (&'static str, &'static str, String);

/// One pass before the replica serves (the leader's start, as kube-apiserver's bootstrap):
/// the missing local APIServices, their conditions and a missing ConfigMap are written then,
/// so that the loop writes nothing while nothing changes. (A ConfigMap that differs — new
/// CAs — is updated by the loop, within `LEADER_EVERY`.)
pub async fn initial(agg: &Arc<Aggregator>) {
    let (mut checked, mut leader_at) = (HashMap::new(), Some(Instant::now()));
    if let Err(e) = pass(agg, &mut checked, &mut leader_at, true).await {
        tracing::warn!("aggregator: {}", e.message);
    }
    if let Err(e) = publish_authentication(agg, false).await {
        tracing::warn!("aggregator: {}", e.message);
    }
}

/// Runs the loops until aborted.
pub async fn run(agg: Arc<Aggregator>) {
    let mut checked: HashMap<String, Instant> = HashMap::new();
    // The start's pass published the ConfigMap (on the leader).
    let mut leader_at: Option<Instant> = Some(Instant::now());
    loop {
        if let Err(e) = pass(&agg, &mut checked, &mut leader_at, false).await {
            tracing::debug!("aggregator: {}", e.message);
        }
        tokio::time::sleep(TICK).await;
    }
}

async fn list(
    store: &Store,
    group: &str,
    version: &str,
    resource: &str,
    ns: Option<&str>,
) -> Result<Vec<Value>, Status> {
    let Some(info) = store.registry().get(group, version, resource) else {
        return Ok(Vec::new());
    };
    let scope = Scope {
        info: &info,
        namespace: ns,
    };
    let opts = ListOptions {
        read_at: Some(ReadAt::Any),
        ..Default::default()
    };
    Ok(store.list(scope, &opts).await?.items)
}

async fn pass(
    agg: &Arc<Aggregator>,
    checked: &mut HashMap<String, Instant>,
    leader_at: &mut Option<Instant>,
    at_start: bool,
) -> Result<(), Status> {
    let store = &agg.store;
    if store.kv().is_leader() {
        // Local APIServices promptly (a new definition's group); reads only when none is
        // missing.
        ensure_local(store, at_start).await?;
        if leader_at.is_none_or(|t| t.elapsed() >= LEADER_EVERY) {
            *leader_at = Some(Instant::now());
            publish_authentication(agg, true).await?;
        }
    } else {
        *leader_at = None;
    }
    let objs = list(store, "apiregistration.k8s.io", "v1", "apiservices", None).await?;
    let remotes: Vec<Remote> = objs.iter().filter_map(Remote::from_object).collect();
    for name in agg.set_remotes(remotes) {
        checked.remove(&name);
    }
    let names: BTreeSet<String> = agg.remotes().iter().map(|r| r.name.clone()).collect();
    checked.retain(|n, _| names.contains(n));
    // Local APIServices are always available.
    for obj in &objs {
        if Remote::from_object(obj).is_none() {
            let cond = (
                "True",
                "Local",
                "Local APIServices are always available".to_string(),
            );
            write_condition(store, obj, &cond).await;
        }
    }
    let due: Vec<Arc<Remote>> = agg
        .remotes()
        .into_iter()
        .filter(|r| {
            checked
                .get(&r.name)
                .is_none_or(|t| t.elapsed() >= CHECK_EVERY)
        })
        .collect();
    let checks = due.iter().map(|r| check(agg, r.clone()));
    let results = futures::future::join_all(checks).await;
    for (r, cond) in due.iter().zip(results) {
        checked.insert(r.name.clone(), Instant::now());
        if let Some(obj) = objs
            .iter()
            .find(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(&r.name))
        {
            write_condition(store, obj, &cond).await;
        }
    }
    Ok(())
}

/// Writes `cond` as the `Available` condition of `obj` unless it already says so.
async fn write_condition(store: &Store, obj: &Value, cond: &Condition) {
    let current = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"))
        });
    let same = current.is_some_and(|c| {
        c.get("status").and_then(Value::as_str) == Some(cond.0)
            && c.get("reason").and_then(Value::as_str) == Some(cond.1)
            && c.get("message").and_then(Value::as_str).unwrap_or("") == cond.2
    });
    let Some(name) = obj.pointer("/metadata/name").and_then(Value::as_str) else {
        return;
    };
    // kube's gauge: 1 while this replica sees the APIService unavailable.
    metrics::gauge!("aggregator_unavailable_apiservice", "name" => name.to_string())
        .set(if cond.0 == "True" { 0.0 } else { 1.0 });
    if same {
        return;
    }
    let info = store
        .registry()
        .builtin("apiregistration.k8s.io", "v1", "apiservices");
    let scope = Scope {
        info: &info,
        namespace: None,
    };
    let opts = write_options();
    let now = opts.now.clone();
    let res = store
        .update_with(scope, name, Part::Status, &opts, |cur| {
            let mut next = cur.clone();
            let old = next
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|cs| {
                    cs.iter()
                        .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"))
                })
                .cloned();
            let transition = match &old {
                Some(o) if o.get("status").and_then(Value::as_str) == Some(cond.0) => o
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or_else(|| json!(now)),
                _ => json!(now),
            };
            let c = json!({"type": "Available", "status": cond.0,
                           "lastTransitionTime": transition, "reason": cond.1, "message": cond.2});
            let mut others: Vec<Value> = next
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .map(|cs| {
                    cs.iter()
                        .filter(|c| c.get("type").and_then(Value::as_str) != Some("Available"))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            others.insert(0, c);
            next["status"] = json!({"conditions": others});
            Ok(next)
        })
        .await;
    match res {
        Ok(_) => {
            let was = current
                .and_then(|c| c.get("status"))
                .and_then(Value::as_str);
            if was != Some(cond.0) {
                tracing::info!(apiservice = %name, status = cond.0, reason = cond.1, message = %cond.2, "changing APIService availability");
            }
            // kube's counter: an APIService that was Available and is not any more, counted
            // by the replica whose status write made it so.
            if was == Some("True") && cond.0 != "True" {
                metrics::counter!("aggregator_unavailable_apiservice_total",
                    "name" => name.to_string(), "reason" => cond.1)
                .increment(1);
            }
        }
        Err(e) if e.code == 404 || e.code == 409 => {}
        Err(e) => {
            tracing::warn!(apiservice = %name, "writing the Available condition: {}", e.message)
        }
    }
}

/// kube's remote availability check of one APIService; records the outcome (and the
/// discovery document and OpenAPI it fetched) in the aggregator.
pub async fn check(agg: &Arc<Aggregator>, r: Arc<Remote>) -> Condition {
    let cond = check_inner(agg, &r).await;
    agg.record_check(&r.group, &r.version, cond.0 == "True", None, None, None);
    cond
}

async fn check_inner(agg: &Arc<Aggregator>, r: &Arc<Remote>) -> Condition {
    let store = &agg.store;
    let Some(svc) = resolve::get_core(store, "services", &r.namespace, &r.service).await else {
        return (
            "False",
            "ServiceNotFound",
            format!("service/{} in {:?} is not present", r.service, r.namespace),
        );
    };
    let ty = svc
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if ty == "ClusterIP" {
        let port = svc
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(r.port)));
        let Some(port) = port else {
            return (
                "False",
                "ServicePortError",
                format!(
                    "service/{} in {:?} is not listening on port {}",
                    r.service, r.namespace, r.port
                ),
            );
        };
        let port_name = port.get("name").and_then(Value::as_str).unwrap_or("");
        let slices: Vec<Value> = match list(
            store,
            "discovery.k8s.io",
            "v1",
            "endpointslices",
            Some(&r.namespace),
        )
        .await
        {
            Ok(all) => all
                .into_iter()
                .filter(|s| {
                    s.pointer("/metadata/labels/kubernetes.io~1service-name")
                        .and_then(Value::as_str)
                        == Some(r.service.as_str())
                })
                .collect(),
            Err(e) => {
                return (
                    "Unknown",
                    "EndpointsAccessError",
                    format!(
                        "service/{} in {:?} cannot be checked due to: {}",
                        r.service, r.namespace, e.message
                    ),
                )
            }
        };
        if slices.is_empty() {
            return (
                "False",
                "EndpointsNotFound",
                format!(
                    "cannot find endpointslices for service/{} in {:?}",
                    r.service, r.namespace
                ),
            );
        }
        if !slices.iter().any(|s| has_available_endpoint(s, port_name)) {
            return (
                "False",
                "MissingEndpoints",
                format!(
                    "endpointslices for service/{} in {:?} have no addresses with port name {:?}",
                    r.service, r.namespace, port_name
                ),
            );
        }
    }
    // kube's discovery check: five attempts at once (each resolving the Service again, so
    // with endpoint routing each may pick another endpoint); one success is enough, else
    // the condition carries the last failure to arrive.
    let attempts = (0..DISCOVERY_ATTEMPTS).map(|_| discovery_attempt(agg, r));
    let mut pending: futures::stream::FuturesUnordered<_> = attempts.collect();
    let mut last = None;
    let mut ok = None;
    while let Some(res) = futures::StreamExt::next(&mut pending).await {
        match res {
            Ok(addr) => {
                ok = Some(addr);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let Some(addr) = ok else {
        let msg = last.unwrap_or_else(|| "no addresses".into());
        return ("False", "FailedDiscoveryCheck", msg);
    };
    // The document and OpenAPI are fetched through the verifying client the proxy uses.
    let doc = fetch_json(agg, r, addr, &format!("/apis/{}/{}", r.group, r.version)).await;
    let changed = doc.is_some() && doc != r.resources;
    let (v2, v3) = if changed || r.openapi_v2.is_none() {
        let v3_path = format!("/openapi/v3/apis/{}/{}", r.group, r.version);
        (
            Some(fetch_json(agg, r, addr, "/openapi/v2").await),
            Some(fetch_json(agg, r, addr, &v3_path).await),
        )
    } else {
        (None, None)
    };
    agg.record_check(&r.group, &r.version, true, doc, v2, v3);
    ("True", "Passed", "all checks passed".into())
}

/// One attempt of kube's discovery check: resolve the Service, GET `/apis/<group>/<version>`
/// (`/api/v1` for the `v1.` APIService) without verifying the server, as
/// `system:kube-aggregator` in `system:masters`, within 5 s (and kube's 6 s insurance);
/// the address that answered 2xx, or kube's message.
async fn discovery_attempt(agg: &Arc<Aggregator>, r: &Arc<Remote>) -> Result<SocketAddr, String> {
    let store = &agg.store;
    let (host, addrs) =
        resolve::resolve_service_host(store, &r.namespace, &r.service, r.port).await?;
    let Some(&addr) = addrs.first() else {
        return Err("no addresses".into());
    };
    let path = if r.name == "v1." {
        format!("/api/{}", r.version)
    } else {
        format!("/apis/{}/{}", r.group, r.version)
    };
    // Messages name the URL kube's resolver returns.
    let url = format!("https://{host}{path}");
    // kube's check skips verification (a best-effort GET) and always has access rights.
    let client = agg.client(r, addr, true, false)?;
    let target = format!("https://{}:{}{path}", r.server_name(), addr.port());
    let get = client
        .get(&target)
        .header("X-Remote-User", "system:kube-aggregator")
        .header("X-Remote-Group", "system:masters")
        .header("Accept", "application/json")
        .timeout(DISCOVERY_TIMEOUT)
        .send();
    let resp = match tokio::time::timeout(DISCOVERY_INSURANCE, get).await {
        Err(_) => return Err(format!("timed out waiting for {url}")),
        Ok(Err(e)) => {
            return Err(format!(
                "failing or missing response from {url}: Get {url:?}: {}",
                go_dial_error(addr, &e)
            ))
        }
        Ok(Ok(resp)) => resp,
    };
    let code = resp.status().as_u16();
    if !(200..300).contains(&code) {
        return Err(format!(
            "failing or missing response from {url}: bad status from {url}: {code}"
        ));
    }
    Ok(addr)
}

/// A JSON document from the extension server, through the proxy's verifying client.
async fn fetch_json(
    agg: &Arc<Aggregator>,
    r: &Remote,
    addr: std::net::SocketAddr,
    path: &str,
) -> Option<Value> {
    let client = agg.client(r, addr, false, false).ok()?;
    let url = format!("https://{}:{}{path}", r.server_name(), addr.port());
    let resp = client
        .get(&url)
        .header("X-Remote-User", "system:kube-aggregator")
        .header("X-Remote-Group", "system:masters")
        .header("Accept", "application/json")
        .timeout(DISCOVERY_TIMEOUT)
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let bytes = resp.bytes().await.ok()?;
    // A bounded document: an extension server cannot make the replica hold anything larger.
    if bytes.len() > 16 << 20 {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// Go's `net/http` words for the common transport failures (a timeout, a refused dial, an
/// unverifiable certificate), the Rust client's chain otherwise.
fn go_dial_error(addr: std::net::SocketAddr, e: &reqwest::Error) -> String {
    let chain = error_chain(e);
    if e.is_timeout() {
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)".into()
    } else if chain.contains("Connection refused") || chain.contains("connection refused") {
        format!("dial tcp {addr}: connect: connection refused")
    } else {
        chain
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        text = format!("{text}: {s}");
        src = s.source();
    }
    text
}

/// kube's `hasAvailableEndpoint`: a ready endpoint and a port of that name.
fn has_available_endpoint(slice: &Value, port_name: &str) -> bool {
    let ready = slice
        .get("endpoints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|e| e.pointer("/conditions/ready").and_then(Value::as_bool) != Some(false));
    let port = slice
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|p| {
            p.get("name").and_then(Value::as_str) == Some(port_name) && p.get("port").is_some()
        });
    ready && port
}

/// The local APIServices the served group-versions want: name → object.
pub fn wanted_local(cat: &crate::registry::Catalog) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let groups =
        std::iter::once(("", vec!["v1"])).chain(crate::registry::discovery::served_groups(cat));
    for (group, versions) in groups {
        for version in versions {
            let (gp, vp, builtin) = local_priority(group, version);
            let name = format!("{version}.{group}");
            let mut spec =
                json!({"version": version, "groupPriorityMinimum": gp, "versionPriority": vp});
            if !group.is_empty() {
                spec["group"] = json!(group);
            }
            out.insert(
                name.clone(),
                json!({
                    "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                    "metadata": {"name": name, "labels": {AUTOMANAGED: if builtin { "onstart" } else { "true" }}},
                    "spec": spec,
                }),
            );
        }
    }
    out
}

/// kube's CRD registration: an APIService (1000 / 100, automanaged `true`) for every served
/// version of every definition.
pub fn crd_apiservices(crds: &[Value]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for crd in crds {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        let versions = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for v in versions {
            let version = v.get("name").and_then(Value::as_str).unwrap_or("");
            if group.is_empty() || version.is_empty() || v.get("served") != Some(&json!(true)) {
                continue;
            }
            let name = format!("{version}.{group}");
            out.push((
                name.clone(),
                json!({
                    "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                    "metadata": {"name": name, "labels": {AUTOMANAGED: "true"}},
                    "spec": {"group": group, "version": version,
                             "groupPriorityMinimum": 1000, "versionPriority": 100},
                }),
            ));
        }
    }
    out
}

/// kube's autoregister controller, on the leader: creates the missing local APIServices and
/// removes the automanaged (`true`) ones of groups no longer served.
async fn ensure_local(store: &Store, at_start: bool) -> Result<(), Status> {
    let Some(info) = store
        .registry()
        .get("apiregistration.k8s.io", "v1", "apiservices")
    else {
        return Ok(());
    };
    let scope = Scope {
        info: &info,
        namespace: None,
    };
    let cat = store.registry().snapshot();
    let mut wanted = wanted_local(&cat);
    // The definitions themselves, not only what the registry serves yet: a replica that has
    // not loaded a definition must not remove its APIService (kube waits for the initial
    // CRD sync for the same reason).
    let crds = list(
        store,
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        None,
    )
    .await?;
    for (name, obj) in crd_apiservices(&crds) {
        wanted.entry(name).or_insert(obj);
    }
    let have = list(store, "apiregistration.k8s.io", "v1", "apiservices", None).await?;
    let names: BTreeSet<&str> = have
        .iter()
        .filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str))
        .collect();
    for (name, obj) in &wanted {
        if names.contains(name.as_str()) {
            continue;
        }
        match store.create(scope, obj.clone(), &write_options()).await {
            Ok(_) => {}
            Err(s) if s.code == 409 => {}
            Err(s) => return Err(s),
        }
    }
    for o in &have {
        let label = o
            .pointer("/metadata/labels")
            .and_then(|l| l.get(AUTOMANAGED))
            .and_then(Value::as_str);
        let name = o
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        // kube's autoregister deconflicts the spec of an APIService it manages (a user gave
        // `v1.apps` a `service`, say): `true` ones always, `onstart` ones once, when the
        // server starts; one whose label was removed is no longer its to touch.
        if let Some(desired) = wanted.get(name) {
            let resync = match label {
                Some("true") => true,
                Some("onstart") => at_start,
                _ => false,
            };
            if resync && !same_local_spec(o.get("spec"), desired.get("spec")) {
                let spec = desired.get("spec").cloned().unwrap_or(Value::Null);
                let res = store
                    .update_with(scope, name, Part::Main, &write_options(), |cur| {
                        let mut next = cur.clone();
                        next["spec"] = spec.clone();
                        Ok(next)
                    })
                    .await;
                match res {
                    Ok(_) => tracing::info!(apiservice = %name, "autoregister: spec restored"),
                    Err(s) if s.code == 404 || s.code == 409 => {}
                    Err(s) => return Err(s),
                }
            }
            continue;
        }
        if label == Some("true") && Remote::from_object(o).is_none() {
            let opts = DeleteOptions {
                write: write_options(),
                precondition_uid: o
                    .pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                ..Default::default()
            };
            match store.delete(scope, name, &opts).await {
                Ok(_) => {}
                Err(s) if s.code == 404 || s.code == 409 => {}
                Err(s) => return Err(s),
            }
        }
    }
    Ok(())
}

/// Whether a stored APIService spec is the local one autoregister wants (kube compares the
/// specs; unset and zero fields are the same).
fn same_local_spec(have: Option<&Value>, want: Option<&Value>) -> bool {
    let field = |spec: Option<&Value>, k: &str| -> Value {
        match spec.and_then(|s| s.get(k)) {
            None | Some(Value::Null) => Value::Null,
            Some(Value::Bool(false)) => Value::Null,
            Some(Value::String(s)) if s.is_empty() => Value::Null,
            Some(v) => v.clone(),
        }
    };
    [
        "group",
        "version",
        "groupPriorityMinimum",
        "versionPriority",
        "service",
        "caBundle",
        "insecureSkipTLSVerify",
    ]
    .iter()
    .all(|k| field(have, k) == field(want, k))
}

/// The `extension-apiserver-authentication` ConfigMap's data.
pub fn authentication_data(agg: &Aggregator) -> serde_json::Map<String, Value> {
    let c = &agg.config;
    let mut data = serde_json::Map::new();
    if let Some(ca) = &c.client_ca {
        data.insert("client-ca-file".into(), json!(String::from_utf8_lossy(ca)));
    }
    let rh = &c.requestheader;
    if !rh.client_ca.is_empty() {
        let arr = |v: &[String]| json!(serde_json::to_string(v).unwrap_or_default());
        data.insert("requestheader-allowed-names".into(), arr(&rh.allowed_names));
        data.insert(
            "requestheader-client-ca-file".into(),
            json!(String::from_utf8_lossy(&rh.client_ca)),
        );
        data.insert(
            "requestheader-extra-headers-prefix".into(),
            arr(&rh.extra_headers_prefix),
        );
        data.insert("requestheader-group-headers".into(), arr(&rh.group_headers));
        data.insert(
            "requestheader-username-headers".into(),
            arr(&rh.username_headers),
        );
    }
    data
}

/// Creates `kube-system/extension-apiserver-authentication` (leader only), and with
/// `update` rewrites its data when it differs.
async fn publish_authentication(agg: &Aggregator, update: bool) -> Result<(), Status> {
    let store = &agg.store;
    let info = store.registry().builtin("", "v1", "configmaps");
    let scope = Scope {
        info: &info,
        namespace: Some("kube-system"),
    };
    let data = Value::Object(authentication_data(agg));
    const NAME: &str = "extension-apiserver-authentication";
    match store.get(scope, NAME, ReadAt::Any).await {
        Ok(cur) if cur.get("data") == Some(&data) || !update => Ok(()),
        Ok(_) => store
            .update_with(scope, NAME, Part::Main, &write_options(), |cur| {
                let mut next = cur.clone();
                next["data"] = data.clone();
                Ok(next)
            })
            .await
            .map(|_| ()),
        Err(e) if e.code == 404 => {
            let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": NAME, "namespace": "kube-system"}, "data": data});
            match store.create(scope, obj, &write_options()).await {
                Ok(_) => Ok(()),
                Err(s) if s.code == 409 || s.code == 404 => Ok(()),
                Err(s) => Err(s),
            }
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_apiservices_as_kube_names_them() {
        let reg = crate::registry::builtin::registry();
        let wanted = wanted_local(&reg.snapshot());
        let core = &wanted["v1."];
        assert!(core["spec"].get("group").is_none());
        assert_eq!(core["spec"]["groupPriorityMinimum"], 18000);
        assert_eq!(wanted["v1.apps"]["spec"]["versionPriority"], 15);
        assert_eq!(
            wanted["v1.apiregistration.k8s.io"]["metadata"]["labels"][AUTOMANAGED],
            "onstart"
        );
        assert!(wanted.contains_key("v1.authentication.k8s.io"));
        assert!(wanted.contains_key("v2.autoscaling"));
    }

    #[test]
    fn served_crd_versions_get_apiservices() {
        let crd = json!({"spec": {"group": "stable.example.com", "versions": [
            {"name": "v1", "served": true}, {"name": "v1beta1", "served": false}]}});
        let got = crd_apiservices(&[crd]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "v1.stable.example.com");
        assert_eq!(got[0].1["spec"]["groupPriorityMinimum"], 1000);
        assert_eq!(got[0].1["metadata"]["labels"][AUTOMANAGED], "true");
    }

    #[test]
    fn endpoint_slices_need_a_ready_endpoint_on_the_named_port() {
        let s = json!({"endpoints": [{"conditions": {"ready": true}}],
                       "ports": [{"name": "https", "port": 8443}]});
        assert!(has_available_endpoint(&s, "https"));
        assert!(!has_available_endpoint(&s, ""));
        let not_ready = json!({"endpoints": [{"conditions": {"ready": false}}],
                               "ports": [{"name": "https", "port": 8443}]});
        assert!(!has_available_endpoint(&not_ready, "https"));
    }
}
