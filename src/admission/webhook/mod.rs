//! `MutatingAdmissionWebhook` and `ValidatingAdmissionWebhook`: the webhooks of
//! MutatingWebhookConfigurations and ValidatingWebhookConfigurations
//! (admissionregistration.k8s.io/v1), followed from this replica's watch cache (a new
//! configuration applies on every replica as soon as its watch delivers it; no request reads
//! storage for them).
//!
//! As kube's generic webhook dispatchers:
//! - configurations run in name order, their webhooks in order; a webhook is called when
//!   its namespace and object selectors, its rules (under `matchPolicy: Equivalent` for
//!   another version of the same resource too, whose objects are converted to that version
//!   and back) and its `matchConditions` (CEL; an evaluation error follows
//!   `failurePolicy`) match; admissionregistration's own configurations and policies are
//!   never sent to webhooks;
//! - mutating webhooks are called one after another, their JSON patches applied, the
//!   result pruned to the schema and handed on; one whose `reinvocationPolicy` is
//!   `IfNeeded` is called once more when a later webhook changed the object (the chain
//!   reinvokes every mutating plugin then, as kube's reinvoker does);
//! - validating webhooks are called at once, in parallel; the first denial or failure wins;
//! - a denial is the webhook's status ([`review::denial`]); a failed call (timeout, refused
//!   connection, bad certificate, malformed or mismatched reply) is a 500 `failed calling
//!   webhook "<name>": ...` with `failurePolicy: Fail` and skipped with `Ignore`; a dry run
//!   reaches only webhooks without side effects;
//! - `warnings` become `Warning` headers, `auditAnnotations` the request's audit annotations
//!   (`<webhook>/<key>`), with kube's mutation, patch and failed-open annotations;
//! - metrics under kube's names (`apiserver_admission_webhook_*`).

pub mod client;
pub mod review;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::matching::{self, Criteria};
use super::{Attributes, Handle, Plugin};
use crate::meta::status::Status;
use crate::registry::resource::Resource;
use client::{ClientConfig, Clients};

/// Which of the two plugins.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Mutating,
    Validating,
}

impl Kind {
    fn resource(self) -> &'static str {
        match self {
            Kind::Mutating => "mutatingwebhookconfigurations",
            Kind::Validating => "validatingwebhookconfigurations",
        }
    }

    /// The `type` label of kube's metrics.
    fn metric_type(self) -> &'static str {
        match self {
            Kind::Mutating => "admit",
            Kind::Validating => "validating",
        }
    }
}

/// One webhook of a configuration, ready to call.
struct Hook {
    name: String,
    configuration: String,
    /// `<configuration>/<webhook>/<index>`: what reinvocation remembers.
    uid: String,
    criteria: Result<Criteria, String>,
    conditions: Vec<(String, Result<crate::cel::Program, String>)>,
    client: ClientConfig,
    ignore_failures: bool,
    side_effects: String,
    timeout: Duration,
    review: Option<&'static str>,
    reinvoke_if_needed: bool,
}

/// The CEL environment of match conditions.
fn condition_env() -> BTreeMap<String, crate::cel::Type> {
    crate::cel::admission::env(
        crate::cel::admission::Declarations {
            params: false,
            authorizer: true,
        },
        None,
    )
}

/// The webhooks of one configuration.
fn compile(config: &Value) -> Vec<Arc<Hook>> {
    let cfg_name = config
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let env = condition_env();
    let mut out = Vec::new();
    for (i, h) in config
        .get("webhooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let s = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let name = s("name");
        let conditions = h
            .get("matchConditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let n = c.get("name").and_then(Value::as_str).unwrap_or("");
                let e = c.get("expression").and_then(Value::as_str).unwrap_or("");
                (
                    e.to_string(),
                    crate::cel::admission::compile_expression(
                        e,
                        crate::cel::admission::Returns::Bool,
                        &env,
                    )
                    .map_err(|why| format!("matchCondition {n:?}: {why}")),
                )
            })
            .collect();
        let timeout = h
            .get("timeoutSeconds")
            .and_then(Value::as_u64)
            .unwrap_or(10)
            .clamp(1, 30);
        out.push(Arc::new(Hook {
            uid: format!("{cfg_name}/{name}/{i}"),
            configuration: cfg_name.clone(),
            criteria: Criteria::of_webhook(h),
            conditions,
            client: ClientConfig::parse(h.get("clientConfig").unwrap_or(&Value::Null)),
            ignore_failures: s("failurePolicy") == "Ignore",
            side_effects: s("sideEffects"),
            timeout: Duration::from_secs(timeout),
            review: review::review_version(&matching::strings(h.get("admissionReviewVersions"))),
            reinvoke_if_needed: s("reinvocationPolicy") == "IfNeeded",
            name,
        }));
    }
    out
}

/// The webhooks of the configurations this replica knows, kept current by a follower.
struct Source {
    hooks: arc_swap::ArcSwap<Vec<Arc<Hook>>>,
    ready: tokio::sync::watch::Sender<bool>,
}

impl Source {
    /// Waits (at most kube's 10 s) for the first full load.
    async fn wait_ready(&self) -> bool {
        if *self.ready.borrow() {
            return true;
        }
        let mut rx = self.ready.subscribe();
        tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|r| *r))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

/// One of the two webhook plugins.
pub struct Webhooks {
    kind: Kind,
    source: Arc<Source>,
    clients: Arc<Clients>,
}

impl Webhooks {
    /// The plugin with its `WebhookAdmissionConfiguration` (a `kubeConfigFile`), if any.
    pub fn new(kind: Kind, config: Option<&Value>) -> Result<Webhooks, String> {
        let kubeconfig = client::Kubeconfig::from_plugin_config(config)?;
        Ok(Webhooks {
            kind,
            source: Arc::new(Source {
                hooks: arc_swap::ArcSwap::from_pointee(Vec::new()),
                ready: tokio::sync::watch::channel(false).0,
            }),
            clients: Arc::new(Clients::new(kubeconfig)),
        })
    }
}

/// kube's `IsExemptAdmissionConfigurationResource`.
fn exempt(a: &Attributes) -> bool {
    a.resource.group == "admissionregistration.k8s.io"
        && matches!(
            a.resource.resource.as_str(),
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

/// Why a call did not produce an answer to act on.
enum Failure {
    /// kube's `ErrCallingWebhook`: subject to `failurePolicy`.
    Calling { reason: String, code: u16 },
    /// The webhook denied the request (or another error to return as it is).
    Status(Status),
}

/// What a call to a mutating webhook did.
struct Outcome {
    changed: bool,
}

/// Go's `net/http` text for a failed request, as kube's errors carry it.
fn go_error(url: &str, e: &reqwest::Error) -> String {
    let mut chain = e.to_string();
    let mut cur = std::error::Error::source(e);
    while let Some(c) = cur {
        chain.push_str(": ");
        chain.push_str(&c.to_string());
        cur = c.source();
    }
    let host = reqwest::Url::parse(url)
        .ok()
        .map(|u| {
            format!(
                "{}:{}",
                u.host_str().unwrap_or(""),
                u.port_or_known_default().unwrap_or(443)
            )
        })
        .unwrap_or_default();
    let why = if e.is_timeout() {
        "context deadline exceeded".to_string()
    } else if chain.contains("Connection refused") || chain.contains("connection refused") {
        format!("dial tcp {host}: connect: connection refused")
    } else if chain.contains("UnknownIssuer") || chain.contains("BadSignature") {
        "tls: failed to verify certificate: x509: certificate signed by unknown authority".into()
    } else if chain.contains("NotValidForName") {
        format!(
            "tls: failed to verify certificate: x509: certificate is not valid for {}",
            host.rsplit_once(':').map(|h| h.0).unwrap_or(&host)
        )
    } else if let Some(i) = chain.find("invalid peer certificate") {
        format!("tls: failed to verify certificate: {}", &chain[i..])
    } else {
        chain
    };
    format!("Post \"{url}\": {why}")
}

/// client-go's message for a non-2xx answer that is not a Status.
fn unstructured_error(code: u16, body: &[u8], text: bool) -> String {
    let msg = if text {
        String::from_utf8_lossy(body).trim().to_string()
    } else {
        "unknown".to_string()
    };
    match code {
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "the server has asked for the client to provide credentials".into(),
        403 => "the server does not allow access to the requested resource".into(),
        404 => "the server could not find the requested resource".into(),
        409 => "the server reported a conflict".into(),
        429 => "the server has received too many requests and has asked us to try again later"
            .into(),
        500 => format!("an error on the server ({msg:?}) has prevented the request from succeeding"),
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".into(),
        _ => format!("an error on the server ({msg:?}) has prevented the request from succeeding"),
    }
}

/// Go's `encoding/json` text for a body that is not JSON (its first offending character).
fn json_error(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let t = text.trim_start();
    let Some(first) = t.chars().next() else {
        return "unexpected end of JSON input".into();
    };
    for lit in ["true", "false", "null"] {
        if lit.starts_with(first) {
            for (got, want) in t.chars().zip(lit.chars()).skip(1) {
                if got != want {
                    return format!(
                        "invalid character {got:?} in literal {lit} (expecting {want:?})"
                    );
                }
            }
            return match serde_json::from_str::<Value>(t) {
                Err(e) if t.len() < lit.len() => format!("unexpected end of JSON input: {e}"),
                _ => "invalid character after top-level value".into(),
            };
        }
    }
    if matches!(first, '{' | '[' | '"' | '-' | '0'..='9') {
        return match serde_json::from_str::<Value>(t) {
            Ok(_) => "unexpected end of JSON input".into(),
            Err(e) => e.to_string(),
        };
    }
    format!("invalid character {first:?} looking for beginning of value")
}

impl Webhooks {
    /// POSTs the review and returns the decoded reply, or why the call failed (kube's
    /// `failed to call webhook: ...`).
    async fn post(&self, hook: &Hook, body: &Value, h: &Handle) -> Result<Value, Failure> {
        let calling = |reason: String, code: u16| Failure::Calling { reason, code };
        // Go's REST client adds the timeout to the query.
        let url = hook.client.url();
        let sep = if url.contains('?') { '&' } else { '?' };
        let url = format!("{url}{sep}timeout={}s", hook.timeout.as_secs());
        let prepared =
            self.clients.prepare(&hook.client, h).await.map_err(|e| {
                calling(format!("failed to call webhook: Post \"{url}\": {e}"), 503)
            })?;
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let send = async {
            let resp = prepared.post(&url, bytes).send().await?;
            let code = resp.status().as_u16();
            let ctype = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let body = resp.bytes().await?;
            Ok::<_, reqwest::Error>((code, ctype, body))
        };
        let (code, ctype, body) = match tokio::time::timeout(hook.timeout, send).await {
            Err(_) => {
                return Err(calling(
                    format!("failed to call webhook: Post \"{url}\": context deadline exceeded"),
                    503,
                ))
            }
            Ok(Err(e)) => {
                return Err(calling(
                    format!("failed to call webhook: {}", go_error(&url, &e)),
                    503,
                ))
            }
            Ok(Ok(r)) => r,
        };
        if !(200..300).contains(&code) {
            // A Status body is the error as it is; anything else client-go's text.
            let parsed: Option<Value> = serde_json::from_slice(&body).ok();
            let message = match parsed
                .as_ref()
                .filter(|v| v.get("kind").and_then(Value::as_str) == Some("Status"))
            {
                Some(st) => st
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                None => unstructured_error(
                    code,
                    &body,
                    ctype.starts_with("text/") || ctype.contains("json"),
                ),
            };
            return Err(calling(format!("failed to call webhook: {message}"), code));
        }
        serde_json::from_slice::<Value>(&body)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| {
                calling(
                    format!(
                        "failed to call webhook: couldn't get version/kind; json parse error: {}",
                        json_error(&body)
                    ),
                    503,
                )
            })
    }

    /// Calls one webhook with the request's objects in `hooked`'s version (`object` is
    /// replaced by the patched one when a mutating webhook changes it).
    #[allow(clippy::too_many_arguments)]
    async fn call(
        &self,
        hook: &Hook,
        a: &Attributes,
        h: &Handle,
        hooked: &Resource,
        object: &mut Option<Value>,
        old_object: Option<&Value>,
        annotate: &(dyn Fn(&str, String) + Sync),
    ) -> Result<Outcome, Failure> {
        let calling = |reason: String, code: u16| Failure::Calling { reason, code };
        if a.dry_run {
            if hook.side_effects.is_empty() {
                return Err(calling("Webhook SideEffects is nil".into(), 400));
            }
            if !matches!(hook.side_effects.as_str(), "None" | "NoneOnDryRun") {
                return Err(Failure::Status(Status::bad_request(format!(
                    "admission webhook {:?} does not support dry run",
                    hook.name
                ))));
            }
        }
        let Some(api) = hook.review else {
            return Err(calling(
                "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)".into(),
                400,
            ));
        };
        let uid = uuid::Uuid::new_v4().to_string();
        let body = review::request(api, &uid, a, hooked, object.as_ref(), old_object);
        let reply = self.post(hook, &body, h).await?;
        let r = review::verify(api, &uid, self.kind == Kind::Mutating, &reply)
            .map_err(|e| calling(format!("received invalid webhook response: {e}"), 503))?;
        for (k, v) in &r.audit_annotations {
            if let Err(e) = h.audit.add(format!("{}/{k}", hook.name), v.clone()) {
                tracing::warn!(webhook = hook.name, "audit annotation: {e}");
            }
        }
        for w in &r.warnings {
            h.warnings.add(w.clone());
        }
        if !r.allowed {
            return Err(Failure::Status(review::denial(
                &hook.name,
                r.result.as_ref(),
            )));
        }
        let Some(patch) = r.patch else {
            return Ok(Outcome { changed: false });
        };
        let patch: json_patch::Patch = serde_json::from_slice(&patch).map_err(|e| {
            calling(
                format!("received undecodable patch in webhook response: {e}"),
                503,
            )
        })?;
        if patch.0.is_empty() {
            return Ok(Outcome { changed: false });
        }
        let Some(obj) = object.as_ref() else {
            return Err(Failure::Status(Status::internal(format!(
                "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                hook.name
            ))));
        };
        let mut patched = obj.clone();
        json_patch::patch(&mut patched, &patch)
            .map_err(|e| Failure::Status(Status::internal(e)))?;
        annotate(
            "patch",
            json!({
                "configuration": hook.configuration,
                "webhook": hook.name,
                "patch": serde_json::to_value(&patch).unwrap_or(Value::Null),
                "patchType": "JSONPatch",
            })
            .to_string(),
        );
        // Decoded as the kind: what the schema does not declare is dropped.
        if !patched.is_object() {
            return Err(Failure::Status(Status::internal(
                "the patched object is not a JSON object",
            )));
        }
        if hooked.strategy.prune(&mut patched).is_none() {
            if let Some(e) = crate::openapi::type_error(&hooked.definition, &patched) {
                return Err(Failure::Status(Status::internal(e)));
            }
            crate::openapi::prune_unknown(&hooked.definition, &mut patched);
        }
        let changed = Some(&patched) != object.as_ref();
        *object = Some(patched);
        Ok(Outcome { changed })
    }

    fn observe(&self, hook: &Hook, a: &Attributes, started: Instant, code: u16, rejected: bool) {
        let labels = [
            ("name", hook.name.clone()),
            ("type", self.kind.metric_type().to_string()),
            ("operation", a.operation.as_str().to_string()),
            ("rejected", rejected.to_string()),
        ];
        metrics::histogram!(
            "apiserver_admission_webhook_admission_duration_seconds",
            &labels
        )
        .record(started.elapsed().as_secs_f64());
        let mut with_code = labels.to_vec();
        with_code.push(("code", code.to_string()));
        metrics::counter!("apiserver_admission_webhook_request_total", &with_code).increment(1);
    }

    fn observe_rejection(&self, hook: &Hook, a: &Attributes, error_type: &str, code: u16) {
        metrics::counter!(
            "apiserver_admission_webhook_rejection_count",
            "name" => hook.name.clone(),
            "type" => self.kind.metric_type(),
            "operation" => a.operation.as_str(),
            "error_type" => error_type.to_string(),
            "rejection_code" => code.to_string(),
        )
        .increment(1);
    }

    /// The webhooks to consider for `a` in this plugin's phase `phase` (none for
    /// admissionregistration's own objects); waits for the first load of the configurations.
    async fn hooks(
        &self,
        phase: Kind,
        a: &Attributes,
    ) -> Result<Option<Arc<Vec<Arc<Hook>>>>, Status> {
        if self.kind != phase || exempt(a) {
            return Ok(None);
        }
        if !self.source.wait_ready().await {
            return Err(a.forbidden("not yet ready to handle request"));
        }
        let hooks = self.source.hooks.load_full();
        Ok((!hooks.is_empty()).then_some(hooks))
    }

    /// Whether `hook` applies: its version of the resource, or `None`.
    async fn should_call(
        &self,
        hook: &Arc<Hook>,
        a: &Attributes,
        h: &Handle,
    ) -> Result<Option<Arc<Resource>>, Status> {
        let criteria = hook.criteria.as_ref().map_err(Status::internal)?;
        let Some(m) = criteria.matches(a, h).await? else {
            return Ok(None);
        };
        if hook.conditions.is_empty() {
            return Ok(Some(m.resource));
        }
        let v = matching::Versioned::of(a, &m.resource)?;
        let inputs = ConditionInputs {
            object: v.object,
            old_object: v.old_object,
            request: review::request("admission.k8s.io/v1", "", a, &m.resource, None, None)
                ["request"]
                .clone(),
            authz: crate::cel::authorizer::Authz::new(
                h.authz.clone(),
                a.user.clone(),
                tokio::runtime::Handle::try_current().ok(),
            ),
            request_resource: crate::cel::authorizer::RequestResource {
                group: a.resource.group.clone(),
                version: a.resource.version.clone(),
                resource: a.resource.resource.clone(),
                subresource: a.subresource.clone(),
                namespace: a.namespace.clone(),
                name: a.name.clone(),
            },
        };
        // The authorizer library blocks on the runtime: conditions run on a blocking thread.
        let hook2 = hook.clone();
        let outcome = tokio::task::spawn_blocking(move || conditions_match(&hook2, &inputs))
            .await
            .map_err(Status::internal)?;
        match outcome {
            Ok(true) => Ok(Some(m.resource)),
            Ok(false) => Ok(None),
            Err(e) => {
                tracing::warn!(
                    webhook = hook.name,
                    "Failed evaluating match conditions, failing closed: {e}"
                );
                Err(a.forbidden(e))
            }
        }
    }

    /// The outcome of a failed call under the webhook's failure policy: `Ok` to go on.
    fn fail(
        &self,
        hook: &Hook,
        a: &Attributes,
        h: &Handle,
        idx: usize,
        round: usize,
        f: Failure,
        started: Instant,
    ) -> Result<(), Status> {
        match f {
            Failure::Calling { reason, code } => {
                let err = format!("failed calling webhook {:?}: {reason}", hook.name);
                if hook.ignore_failures {
                    self.observe(hook, a, started, code, false);
                    tracing::warn!("Failed calling webhook, failing open {}: {err}", hook.name);
                    metrics::counter!(
                        "apiserver_admission_webhook_fail_open_count",
                        "name" => hook.name.clone(),
                        "type" => self.kind.metric_type(),
                    )
                    .increment(1);
                    let prefix = match self.kind {
                        Kind::Mutating => "failed-open.mutation.webhook.admission.k8s.io",
                        Kind::Validating => "failed-open.validating.webhook.admission.k8s.io",
                    };
                    let key = match self.kind {
                        Kind::Mutating => format!("{prefix}/round_{round}_index_{idx}"),
                        Kind::Validating => format!("{prefix}/round_0_index_{idx}"),
                    };
                    let _ = h.audit.add(key, hook.name.clone());
                    return Ok(());
                }
                self.observe(hook, a, started, code, true);
                self.observe_rejection(hook, a, "calling_webhook_error", code);
                tracing::warn!(
                    "Failed calling webhook, failing closed {}: {err}",
                    hook.name
                );
                Err(Status::internal(err))
            }
            Failure::Status(s) => {
                self.observe(hook, a, started, s.code, true);
                self.observe_rejection(hook, a, "no_error", s.code);
                Err(s)
            }
        }
    }
}

/// kube's match-condition matcher: any condition false skips the webhook; errors (with no
/// false) fail under `failurePolicy: Fail` and skip under `Ignore`.
/// What match conditions see.
struct ConditionInputs {
    object: Option<Value>,
    old_object: Option<Value>,
    request: Value,
    authz: Arc<crate::cel::authorizer::Authz>,
    request_resource: crate::cel::authorizer::RequestResource,
}

fn conditions_match(hook: &Hook, i: &ConditionInputs) -> Result<bool, String> {
    let env = condition_env();
    let dyn_ = crate::cel::Type::Dyn;
    let obj =
        |o: &Option<Value>| crate::cel::eval::to_value(o.as_ref().unwrap_or(&Value::Null), &dyn_);
    let req_ty = env.get("request").cloned().unwrap_or(crate::cel::Type::Dyn);
    let mut errors = Vec::new();
    for (expr, prog) in &hook.conditions {
        let prog = match prog {
            Ok(p) => p,
            Err(e) => {
                errors.push(e.clone());
                continue;
            }
        };
        let vars = vec![
            ("object", obj(&i.object)),
            ("oldObject", obj(&i.old_object)),
            ("request", crate::cel::eval::to_value(&i.request, &req_ty)),
            ("authorizer", i.authz.value(&i.request_resource)),
        ];
        match prog.eval(vars) {
            Ok(kube_cel::cel::Value::Bool(false)) => return Ok(false),
            Ok(kube_cel::cel::Value::Bool(true)) => {}
            Ok(_) => errors.push(format!(
                "expression '{expr}' resulted in error: no such overload"
            )),
            Err(e) => errors.push(format!("expression '{expr}' resulted in error: {e}")),
        }
    }
    if errors.is_empty() {
        return Ok(true);
    }
    if hook.ignore_failures {
        return Ok(false);
    }
    Err(if errors.len() == 1 {
        errors.remove(0)
    } else {
        format!("[{}]", errors.join(", "))
    })
}

#[async_trait::async_trait]
impl Plugin for Webhooks {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Mutating => "MutatingAdmissionWebhook",
            Kind::Validating => "ValidatingAdmissionWebhook",
        }
    }

    fn start(&self, cache: &crate::watch::Cache) -> Vec<tokio::task::JoinHandle<()>> {
        let Some(info) =
            cache
                .registry()
                .get("admissionregistration.k8s.io", "v1", self.kind.resource())
        else {
            self.source.ready.send_replace(true);
            return Vec::new();
        };
        let source = self.source.clone();
        let mut configs: BTreeMap<String, Vec<Arc<Hook>>> = BTreeMap::new();
        let name_of = |o: &Value| {
            o.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        vec![crate::watch::follow::spawn(cache.clone(), info, move |c| {
            match c {
                crate::watch::follow::Change::Replace(all) => {
                    configs.clear();
                    for o in all {
                        let o = &o.value();
                        configs.insert(name_of(o), compile(o));
                    }
                }
                crate::watch::follow::Change::Upsert { cur, .. } => {
                    configs.insert(name_of(cur), compile(cur));
                }
                crate::watch::follow::Change::Delete { prev } => {
                    configs.remove(&name_of(prev));
                }
            }
            source
                .hooks
                .store(Arc::new(configs.values().flatten().cloned().collect()));
            source.ready.send_replace(true);
        })]
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        let Some(hooks) = self.hooks(Kind::Mutating, a).await? else {
            return Ok(());
        };
        let mut st = std::mem::take(&mut a.reinvocation.webhooks);
        let reinvoke = a.reinvocation.is_reinvoke;
        if reinvoke && st.last_output != a.object {
            // In-tree plugins changed the object on their second run: every webhook that
            // may be reinvoked is.
            st.require_reinvoking();
        }
        let round = usize::from(reinvoke);
        let result = async {
            for (i, hook) in hooks.iter().enumerate() {
                let Some(hooked) = self.should_call(hook, a, h).await? else {
                    continue;
                };
                if reinvoke && !st.to_reinvoke.contains(&hook.uid) {
                    continue;
                }
                let v = matching::Versioned::of(a, &hooked)?;
                let mut object = v.object;
                let started = Instant::now();
                let annotate = |what: &str, value: String| {
                    let prefix = match what {
                        "patch" => "patch.webhook.admission.k8s.io",
                        _ => "mutation.webhook.admission.k8s.io",
                    };
                    let _ = h
                        .audit
                        .add(format!("{prefix}/round_{round}_index_{i}"), value);
                };
                let outcome = self
                    .call(hook, a, h, &hooked, &mut object, v.old_object.as_ref(), &annotate)
                    .await;
                let changed = matches!(&outcome, Ok(o) if o.changed);
                annotate(
                    "mutation",
                    json!({"configuration": hook.configuration, "webhook": hook.name, "mutated": changed})
                        .to_string(),
                );
                if changed {
                    let mut obj = object.unwrap_or(Value::Null);
                    matching::to_storage(&hooked, &mut obj)?;
                    a.object = Some(obj);
                    st.require_reinvoking();
                    a.reinvocation.should_reinvoke = true;
                }
                if hook.reinvoke_if_needed {
                    st.previously_invoked.insert(hook.uid.clone());
                }
                match outcome {
                    Ok(_) => self.observe(hook, a, started, 200, false),
                    Err(f) => self.fail(hook, a, h, i, round, f, started)?,
                }
            }
            Ok(())
        }
        .await;
        st.last_output = a.object.clone();
        a.reinvocation.webhooks = st;
        result
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        let Some(hooks) = self.hooks(Kind::Validating, a).await? else {
            return Ok(());
        };
        let mut calls = Vec::new();
        for (i, hook) in hooks.iter().enumerate() {
            if let Some(hooked) = self.should_call(hook, a, h).await? {
                calls.push((i, hook.clone(), hooked));
            }
        }
        let mut pending: futures::stream::FuturesUnordered<_> = calls
            .into_iter()
            .map(|(i, hook, hooked)| async move {
                let started = Instant::now();
                let res = async {
                    let v = matching::Versioned::of(a, &hooked).map_err(Failure::Status)?;
                    let mut object = v.object;
                    self.call(
                        &hook,
                        a,
                        h,
                        &hooked,
                        &mut object,
                        v.old_object.as_ref(),
                        &|_, _| {},
                    )
                    .await
                }
                .await;
                match res {
                    Ok(_) => {
                        self.observe(&hook, a, started, 200, false);
                        Ok(())
                    }
                    Err(f) => self.fail(&hook, a, h, i, 0, f, started),
                }
            })
            .collect();
        use futures::StreamExt;
        let mut first = None;
        while let Some(r) = pending.next().await {
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// What the webhook plugin remembers between the first run of the mutating chain and its
/// reinvocation (kube's `webhookReinvokeContext`).
#[derive(Clone, Default, Debug)]
pub struct ReinvokeState {
    /// The object after the plugin's last run.
    pub last_output: Option<Value>,
    /// Webhooks with `reinvocationPolicy: IfNeeded` called so far.
    pub previously_invoked: BTreeSet<String>,
    /// Webhooks to call again on reinvocation.
    pub to_reinvoke: BTreeSet<String>,
}

impl ReinvokeState {
    fn require_reinvoking(&mut self) {
        let prev = std::mem::take(&mut self.previously_invoked);
        self.to_reinvoke.extend(prev);
    }
}
