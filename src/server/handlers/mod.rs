//! Routing and the per-verb handlers (one file per verb).
//!
//! [`route`] serves non-resource paths (version, health, metrics, OpenAPI, discovery) and
//! dispatches resource requests, described by a [`RequestInfo`], to the verb handlers. Handlers
//! decode, call the registry, and encode; they hold no resource-specific rules.

mod access_review;
mod apply;
mod authentication;
mod binding;
mod component_status;
mod create;
mod delete;
mod eviction;
mod get;
pub mod list;
mod patch;
mod protobuf;
mod scale;
mod update;
mod watch;

use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{json, Map, Value};

use super::negotiate::{self, Output};
use super::request_info::{self, RequestInfo};
use super::{full, status_response, App, Body, User};
use crate::admission;
use crate::meta::field_error::{ErrorType, FieldError};
use crate::meta::status::Status;
use crate::registry::store::{self, ReadAt, Scope, WriteOptions};
use crate::registry::strategy::Extra;
use crate::registry::{discovery, table};
use crate::registry::{Catalog, Resource};

/// Largest request body accepted (kube-apiserver's limit).
const MAX_BODY: usize = 3 * 1024 * 1024;

/// The query string as ordered pairs.
pub struct Query(pub Vec<(String, String)>);

impl Query {
    fn parse(q: Option<&str>) -> Query {
        Query(
            form_urlencoded::parse(q.unwrap_or("").as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn all(&self, key: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("1") | Some("true") | Some("True"))
    }
}

/// One resource request, decoded enough for any verb handler.
pub struct Ctx {
    pub app: Arc<App>,
    pub user: User,
    pub ri: RequestInfo,
    pub info: Arc<Resource>,
    pub query: Query,
    pub output: Output,
    pub headers: http::HeaderMap,
    pub body: Bytes,
    pub now: String,
    /// `Warning` headers to send with the response (e.g. unknown fields under Warn).
    pub warnings: Arc<std::sync::Mutex<Vec<String>>>,
    /// The request's audit annotations (admission's and the handler's).
    pub audit: admission::AuditAnnotations,
}

impl Ctx {
    pub fn scope(&self) -> Scope<'_> {
        Scope {
            info: &self.info,
            namespace: self.ri.namespace.as_deref(),
        }
    }

    pub fn name(&self) -> &str {
        self.ri.name.as_deref().unwrap_or("")
    }

    pub fn content_type(&self) -> Option<&str> {
        self.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
    }

    /// Write options from the query: dryRun (validated), fieldManager.
    pub fn write_options(&self, options_kind: &str) -> Result<WriteOptions, Status> {
        let dry: Vec<&str> = self.query.all("dryRun");
        if dry.iter().any(|d| *d != "All") {
            let quoted: Vec<String> = dry.iter().map(|d| format!("{d:?}")).collect();
            return Err(dry_run_unsupported(options_kind, &quoted));
        }
        let field_manager = match self.query.get("fieldManager") {
            Some(m) if m.len() > 128 || m.chars().any(char::is_control) => {
                // kube's ValidateFieldManager.
                let mut errs = Vec::new();
                if m.len() > 128 {
                    errs.push(FieldError::too_long("fieldManager", json!(m), 128));
                }
                for (i, c) in m.char_indices().filter(|(_, c)| c.is_control()) {
                    errs.push(FieldError::invalid(
                        "fieldManager",
                        json!(m),
                        format!("invalid character U+{:04X} (at position {i})", c as u32),
                    ));
                }
                return Err(Status::invalid(options_kind, "meta.k8s.io", "", &errs));
            }
            Some(m) => Some(m.to_string()),
            None => self
                .headers
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(manager_from_user_agent),
        };
        if matches!(
            options_kind,
            "CreateOptions" | "UpdateOptions" | "PatchOptions"
        ) {
            if let Some(v) = self
                .query
                .get("fieldValidation")
                .filter(|v| !matches!(*v, "" | "Strict" | "Warn" | "Ignore"))
            {
                return Err(field_validation_unsupported(options_kind, v));
            }
        }
        let dry_run = !dry.is_empty();
        let operation = match options_kind {
            "CreateOptions" => admission::Operation::Create,
            "DeleteOptions" => admission::Operation::Delete,
            _ => admission::Operation::Update,
        };
        // RBAC's escalation checks on role and binding writes (not deletes).
        let rbac = match operation {
            admission::Operation::Delete => None,
            _ => self.app.authz.write_guard(
                &self.user,
                self.info.clone(),
                self.ri.namespace.as_deref(),
                self.ri.name.as_deref(),
            ),
        };
        let chain = &self.app.admission;
        let base = admission::Attributes {
            operation,
            resource: self.info.clone(),
            subresource: self.ri.subresource.clone().unwrap_or_default(),
            name: self.ri.name.clone().unwrap_or_default(),
            namespace: self.ri.namespace.clone().unwrap_or_default(),
            object: None,
            old_object: None,
            options: {
                // The options as sent (kube hands admission the decoded Create/Update/
                // Patch/DeleteOptions).
                let mut o = json!({"kind": options_kind, "apiVersion": "meta.k8s.io/v1"});
                if dry_run {
                    o["dryRun"] = json!(["All"]);
                }
                if options_kind != "DeleteOptions" {
                    if let Some(m) = self.query.get("fieldManager") {
                        o["fieldManager"] = json!(m);
                    }
                }
                o
            },
            dry_run,
            user: self.user.clone(),
            reinvocation: Default::default(),
        };
        let handle = admission::Handle {
            store: self.app.store.clone(),
            authz: Some(self.app.authz.clone()),
            warnings: admission::Warnings(self.warnings.clone()),
            audit: self.audit.clone(),
        };
        let (mutate, validate, charge) = chain.callbacks(base, handle);
        let admit: crate::registry::object::Admit = match rbac {
            None => validate,
            Some(rbac) => std::sync::Arc::new(move |new: &Value, old: Option<&Value>| {
                let (first, then) = (rbac(new, old), validate(new, old));
                Box::pin(async move {
                    first.await?;
                    then.await
                })
            }),
        };
        Ok(WriteOptions {
            dry_run,
            field_manager,
            now: self.now.clone(),
            admit: Some(admit),
            mutate: Some(mutate),
            charge: Some(charge),
            skip_namespace_check: !chain.enabled("NamespaceLifecycle")
                && !chain.enabled("NamespaceExists"),
            requester: Some(crate::registry::object::Requester {
                name: self.user.name.clone(),
                uid: self.user.uid.clone(),
                groups: self.user.groups.clone(),
                extra: self.user.extra.clone(),
            }),
        })
    }

    /// The representation of a response that is not the resource itself (a Status, a list
    /// of a subresource): YAML when asked for, else JSON (never a Table).
    pub fn plain_output(&self) -> Output {
        self.output.plain()
    }

    /// Decodes the body as the resource's kind, reconciling apiVersion/kind/namespace/name.
    pub fn decode_object(&self) -> Result<Value, Status> {
        // Custom resources have no protobuf encoding (kube: 415 with the media types they
        // have).
        let media = self
            .content_type()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim();
        if !self.info.protobuf && media.eq_ignore_ascii_case(crate::server::protobuf::MEDIA_TYPE) {
            return Err(Status::unsupported_media_type(
                media,
                &["application/json", "application/yaml"],
            ));
        }
        let mode = self.field_validation()?;
        let decoded = if mode == "Ignore" {
            negotiate::Strict {
                value: negotiate::decode_body(self.content_type(), &self.body)?,
                json: None,
                yaml_duplicates: Vec::new(),
            }
        } else {
            negotiate::decode_body_strict(self.content_type(), &self.body)?
        };
        let negotiate::Strict {
            value: mut obj,
            json,
            yaml_duplicates,
        } = decoded;
        // A built-in type decodes a JSON body field by field: an object given twice is decoded
        // into the first (their fields merge); a custom resource's maps keep the last.
        let typed = self.info.origin.is_none();
        if let (Some(node), true) = (&json, typed) {
            obj = node.clone().into_value(true);
        }
        if !obj.is_object() {
            return Err(Status::bad_request(
                "the body of the request was not a JSON object",
            ));
        }
        let want_api = self.info.api_version();
        if let Some(k) = obj.get("kind").and_then(Value::as_str) {
            let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            if k != self.info.kind || (!api.is_empty() && api != want_api && !self.same_group(api))
            {
                return Err(Status::bad_request(format!(
                    "the API version in the data ({api}) does not match the expected API version ({want_api})"
                )));
            }
        }
        if self.info.namespaced {
            let url_ns = self.ri.namespace.clone().unwrap_or_default();
            let m = store::meta_mut(&mut obj);
            match m.get("namespace").and_then(Value::as_str) {
                Some(ns) if !ns.is_empty() && ns != url_ns => {
                    return Err(Status::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ))
                }
                _ => {
                    m.insert("namespace".into(), json!(url_ns));
                }
            }
        } else if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            if m.get("namespace")
                .and_then(Value::as_str)
                .is_some_and(str::is_empty)
            {
                m.remove("namespace");
            }
        }
        // A body of another served version of the group is read as that version.
        let body_res = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .filter(|api| *api != want_api)
            .and_then(|api| {
                let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
                self.app
                    .store
                    .registry()
                    .get(group, version, &self.info.resource)
            })
            .unwrap_or_else(|| self.info.clone());
        // Built-ins report duplicates of known fields and unknown fields interleaved in
        // document order; custom resources every duplicate, then the pruned fields. A YAML
        // body is converted to JSON (sorted keys, duplicates gone) and checked for duplicate
        // keys on its own.
        let walked = json.is_some() && typed;
        let errors = match json {
            Some(node) if typed => crate::openapi::strict_errors(&body_res.definition, &node),
            Some(node) => {
                let mut dups = crate::meta::strict::Errors::default();
                node.duplicates(&mut String::new(), &mut dups);
                dups.0
            }
            None => Vec::new(),
        };
        check_types(&body_res, &obj)?;
        self.coerce(&body_res, &mut obj, &yaml_duplicates, errors, walked)?;
        // The store sees objects of the storage version only.
        if body_res.converts() {
            body_res.strategy.to_storage(&mut obj)?;
        }
        Ok(obj)
    }

    /// Another served version of the same group (e.g. an autoscaling/v1 body on a v2 path)
    /// is converted by re-labelling; the schemas of served versions here are compatible.
    fn same_group(&self, api: &str) -> bool {
        let group = api.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        let version = api.rsplit('/').next().unwrap_or("");
        group == self.info.group
            && self
                .app
                .store
                .registry()
                .get(group, version, &self.info.resource)
                .is_some()
    }

    /// Adds `Warning` headers to the response.
    pub fn warn(&self, warnings: Vec<String>) {
        if warnings.is_empty() {
            return;
        }
        if let Ok(mut w) = self.warnings.lock() {
            for x in warnings {
                if !w.contains(&x) {
                    w.push(x);
                }
            }
        }
    }

    /// The strategy's warnings for a write that succeeded: `old` is the object the update
    /// replaced (`None` for a create), both as stored.
    pub fn warn_write(&self, new: &Value, old: Option<&Value>) {
        let s = &self.info.strategy;
        self.warn(match old {
            None => s.warnings_on_create(new),
            Some(old) => s.warnings_on_update(new, old),
        });
    }

    /// The `fieldValidation` directive (`Warn` when absent or empty); any other value is
    /// kube's 422 for the verb's options (`write_options` checks it first).
    pub fn field_validation(&self) -> Result<&str, Status> {
        match self.query.get("fieldValidation").unwrap_or("") {
            "" => Ok("Warn"),
            mode @ ("Strict" | "Warn" | "Ignore") => Ok(mode),
            other => Err(field_validation_unsupported(
                match self.ri.verb {
                    "update" => "UpdateOptions",
                    "patch" => "PatchOptions",
                    _ => "CreateOptions",
                },
                other,
            )),
        }
    }

    /// Drops the fields of a decoded body that its resource does not declare and reports them
    /// with the body's other strict decoding errors per `fieldValidation`: Strict rejects them
    /// (400), Warn (the default) warns (one warning per problem, one per YAML line), Ignore
    /// says nothing. `yaml` are a YAML body's duplicate keys (first, as kube's YAML decoder
    /// reports them), `errors` the JSON body's duplicates (a built-in's interleaved with its
    /// unknown fields, already complete when `walked`); the unknown fields are then a custom resource's
    /// (unknown `metadata` fields, then the pruned paths) or, for other bodies of a built-in,
    /// those along its OpenAPI definition in sorted key order (kube reads a YAML body converted
    /// to JSON with sorted keys).
    fn coerce(
        &self,
        info: &Resource,
        obj: &mut Value,
        yaml: &[String],
        mut errors: Vec<String>,
        walked: bool,
    ) -> Result<(), Status> {
        let mode = self.field_validation()?;
        let unknown = if walked {
            crate::openapi::prune_unknown(&info.definition, obj);
            Vec::new()
        } else if info.origin.is_none() {
            let unknown = crate::openapi::unknown_fields(&info.definition, &sorted_keys(obj));
            crate::openapi::prune_unknown(&info.definition, obj);
            unknown
        } else {
            unknown_and_pruned(info, obj)
        };
        errors.extend(unknown);
        report_strict(self, mode, info, yaml, errors)
    }
}

/// What kube's handlers hand the audit log of a write (`LogRequestObject`,
/// `LogRequestPatch`): the decoded body of a create or update (its metadata completing the
/// objectRef), the patch as sent, the DeleteOptions of a delete.
fn audit_request_object(rec: &crate::audit::Record, ctx: &Ctx) {
    match ctx.ri.verb {
        "create" | "update" if !ctx.body.is_empty() => {
            if let Ok(mut v) = negotiate::decode_body(ctx.content_type(), &ctx.body) {
                // kube records the object as its decoder leaves it: defaulted. Built-ins
                // served in their storage version get the same defaults here (a main
                // resource's body only: subresource bodies are other kinds).
                let own_kind = v.get("kind").and_then(Value::as_str) == Some(&ctx.info.kind);
                if own_kind
                    && ctx.ri.subresource.is_none()
                    && ctx.info.origin.is_none()
                    && !ctx.info.converts()
                {
                    ctx.info.strategy.default(&mut v);
                }
                rec.request_object(&v);
            }
        }
        "patch" => {
            let v = serde_json::from_slice::<Value>(&ctx.body)
                .or_else(|_| serde_yaml::from_slice::<Value>(&ctx.body))
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&ctx.body).into()));
            rec.request_patch(v);
        }
        "delete" | "deletecollection" => {
            let mut o = negotiate::decode_body(ctx.content_type(), &ctx.body)
                .ok()
                .filter(|_| !ctx.body.is_empty())
                .filter(Value::is_object)
                .unwrap_or_else(|| {
                    // kube decodes the options from the query when there is no body.
                    let mut o = Map::new();
                    if let Some(g) = ctx
                        .query
                        .get("gracePeriodSeconds")
                        .and_then(|g| g.parse::<i64>().ok())
                    {
                        o.insert("gracePeriodSeconds".into(), json!(g));
                    }
                    if let Some(p) = ctx.query.get("propagationPolicy") {
                        o.insert("propagationPolicy".into(), json!(p));
                    }
                    let dry = ctx.query.all("dryRun");
                    if !dry.is_empty() {
                        o.insert("dryRun".into(), json!(dry));
                    }
                    Value::Object(o)
                });
            if let Some(m) = o.as_object_mut() {
                let mut out = Map::new();
                out.insert("kind".into(), json!("DeleteOptions"));
                out.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
                for (k, v) in std::mem::take(m) {
                    if k != "kind" && k != "apiVersion" {
                        out.insert(k, v);
                    }
                }
                *m = out;
            }
            rec.request_object(&o);
        }
        _ => {}
    }
}

/// A request to a deprecated version: kube's `apiserver_requested_deprecated_apis` gauge and
/// the `k8s.io/deprecated` / `k8s.io/removed-release` audit annotations.
fn deprecated_request(ctx: &Ctx) {
    let removed = ctx
        .info
        .strategy
        .deprecation()
        .map(|d| d.removed_release())
        .unwrap_or_default();
    let labels = [
        ("group", ctx.info.group.clone()),
        ("version", ctx.info.version.clone()),
        ("resource", ctx.info.resource.clone()),
        (
            "subresource",
            ctx.ri.subresource.clone().unwrap_or_default(),
        ),
        ("removed_release", removed.clone()),
    ];
    metrics::gauge!("apiserver_requested_deprecated_apis", &labels).set(1.0);
    let _ = ctx.audit.add("k8s.io/deprecated", "true");
    if !removed.is_empty() {
        let _ = ctx.audit.add("k8s.io/removed-release", removed);
    }
}

/// kube's `prefixFromUserAgent`: the User-Agent up to its first `/`, printable characters
/// only, at most 128 bytes (whole characters).
pub fn manager_from_user_agent(ua: &str) -> String {
    let mut out = String::new();
    for c in ua.split('/').next().unwrap_or("").chars() {
        if c.is_control() {
            continue;
        }
        if out.len() + c.len_utf8() > 128 {
            break;
        }
        out.push(c);
    }
    out
}

/// An apply patch's configuration (YAML or JSON, read as YAML), with its duplicate keys
/// reported per `fieldValidation` as kube's apply patcher does: Strict is a 400 naming go-yaml's
/// lines, Warn one warning per line. (kube checks after merging, so an apply that fails
/// otherwise reports that first; here the check comes first.)
pub(super) fn apply_config(ctx: &Ctx) -> Result<Value, Status> {
    let config: Value = serde_yaml::from_slice(&ctx.body)
        .map_err(|e| Status::bad_request(format!("error decoding YAML: {e}")))?;
    let mode = ctx.field_validation()?;
    if mode == "Ignore" {
        return Ok(config);
    }
    let dups = std::str::from_utf8(&ctx.body)
        .map(crate::meta::strict::yaml_duplicates)
        .unwrap_or_default();
    if dups.is_empty() {
        return Ok(config);
    }
    if mode == "Strict" {
        return Err(Status::bad_request(format!(
            "error strict decoding YAML: error converting YAML to JSON: {}",
            crate::meta::strict::yaml_error(&dups)
        )));
    }
    ctx.warn(dups);
    Ok(config)
}

/// Reports a decoded body's strict decoding errors per `mode`: Warn warns once per problem
/// (a YAML body's duplicate keys one per line), Strict is kube's 400 naming them all.
fn report_strict(
    ctx: &Ctx,
    mode: &str,
    info: &Resource,
    yaml: &[String],
    errors: Vec<String>,
) -> Result<(), Status> {
    if mode == "Ignore" || (yaml.is_empty() && errors.is_empty()) {
        return Ok(());
    }
    if mode == "Warn" {
        ctx.warn(yaml.iter().cloned().chain(errors).collect());
        return Ok(());
    }
    let mut parts = Vec::new();
    if !yaml.is_empty() {
        parts.push(crate::meta::strict::yaml_error(yaml));
    }
    parts.extend(errors);
    let kind = &info.kind;
    Err(Status::bad_request(format!(
        "{kind} in version {:?} cannot be handled as a {kind}: strict decoding error: {}",
        info.version,
        parts.join(", ")
    )))
}

pub use crate::meta::sorted_keys;

/// kube's `ValidateFieldValidation` error for a directive it does not know.
pub fn field_validation_unsupported(options_kind: &str, value: &str) -> Status {
    Status::invalid(
        options_kind,
        "meta.k8s.io",
        "",
        &[FieldError::not_supported(
            "fieldValidation",
            json!(value),
            &["", "Ignore", "Strict", "Warn"],
        )],
    )
}

/// kube's message for a `dryRun` other than `All` (values already quoted).
pub fn dry_run_unsupported(options_kind: &str, quoted: &[String]) -> Status {
    Status::invalid(
        options_kind,
        "meta.k8s.io",
        "",
        &[FieldError {
            kind: ErrorType::NotSupported,
            field: "dryRun".into(),
            bad_value: None,
            detail: format!(
                "[]string{{{}}}: supported values: \"All\"",
                quoted.join(", ")
            ),
        }],
    )
}

/// Drops the fields of `obj` its resource does not declare and returns their messages
/// (`unknown field "spec.foo"`), as kube's strict decoding reports them: for a custom resource
/// the unknown fields of `metadata` (against ObjectMeta) first, then the paths its strategy
/// pruned; for a built-in, the unknown fields along its OpenAPI definition.
pub fn unknown_and_pruned(info: &Resource, obj: &mut Value) -> Vec<String> {
    if let Some(unknown) = prune_custom(info, obj) {
        return unknown;
    }
    let unknown = crate::openapi::unknown_fields(&info.definition, obj);
    crate::openapi::prune_unknown(&info.definition, obj);
    unknown
}

/// [`unknown_and_pruned`] for a resource whose strategy prunes (custom resources); `None`
/// (and `obj` untouched) for the others.
pub fn prune_custom(info: &Resource, obj: &mut Value) -> Option<Vec<String>> {
    const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
    let pruned = info.strategy.prune(obj)?;
    let mut out = Vec::new();
    if let Some(meta) = obj.get_mut("metadata") {
        for m in crate::openapi::unknown_fields(OBJECT_META, meta) {
            // `unknown field "x"` → `unknown field "metadata.x"`
            match m.strip_prefix("unknown field \"") {
                Some(rest) => out.push(format!("unknown field \"metadata.{rest}")),
                None => out.push(m),
            }
        }
        crate::openapi::prune_unknown(OBJECT_META, meta);
    }
    out.extend(pruned.iter().map(|p| format!("unknown field \"{p}\"")));
    // Then the unknown metadata fields of embedded objects (dropped, as kube's embedded
    // ObjectMeta coercion drops them).
    if let Some(schema) = info.schema.as_deref() {
        embedded_meta(schema, obj, &mut String::new(), true, &mut out, 0);
    }
    Some(out)
}

/// The unknown `metadata` fields of the `x-kubernetes-embedded-resource` objects of `v`
/// (walked along its CRD schema, keys sorted), dropped and reported as
/// `unknown field "spec.embedded.metadata.x"`.
fn embedded_meta(
    schema: &Value,
    v: &mut Value,
    path: &mut String,
    root: bool,
    out: &mut Vec<String>,
    depth: usize,
) {
    const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
    if depth > 64 {
        return;
    }
    match v {
        Value::Object(m) => {
            if !root && schema.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true)) {
                if let Some(meta) = m.get_mut("metadata").filter(|x| x.is_object()) {
                    let at = if path.is_empty() {
                        "metadata".to_string()
                    } else {
                        format!("{path}.metadata")
                    };
                    for u in crate::openapi::unknown_fields(OBJECT_META, meta) {
                        match u.strip_prefix("unknown field \"") {
                            Some(rest) => out.push(format!("unknown field \"{at}.{rest}")),
                            None => out.push(u),
                        }
                    }
                    crate::openapi::prune_unknown(OBJECT_META, meta);
                }
            }
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            let mut keys: Vec<String> = m.keys().cloned().collect();
            keys.sort();
            for k in keys {
                let Some(sub) = props.and_then(|p| p.get(&k)).or(extra) else {
                    continue;
                };
                if root && k == "metadata" {
                    continue;
                }
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&k);
                if let Some(x) = m.get_mut(&k) {
                    embedded_meta(sub, x, path, false, out, depth + 1);
                }
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, x) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    embedded_meta(sub, x, path, false, out, depth + 1);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// Rejects values of the wrong JSON type, as kube-apiserver's decode into the Go type does.
pub fn check_types(info: &Resource, obj: &Value) -> Result<(), Status> {
    match crate::openapi::type_error(&info.definition, obj) {
        None => Ok(()),
        Some(e) => Err(Status::bad_request(format!(
            "{kind} in version {:?} cannot be handled as a {kind}: {e}",
            info.version,
            kind = info.kind
        ))),
    }
}

/// A JSON/YAML response with a status code.
pub fn respond(out: Output, code: StatusCode, v: &Value) -> Response<Body> {
    if out.is_protobuf() {
        return protobuf::respond(code, v);
    }
    let mut r = Response::new(full(negotiate::encode(out, v)));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(out.content_type()),
    );
    r
}

/// `PartialObjectMetadata` of an object.
pub fn partial(obj: &Value, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": obj.get("metadata").cloned().unwrap_or(json!({})),
    })
}

fn now_timestamp() -> jiff::Timestamp {
    jiff::Timestamp::now()
}

/// RFC 3339 with second precision, as metav1.Time serializes.
pub fn now_rfc3339() -> String {
    now_timestamp().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A stored object as the resource's version serves it: decoded as the strategy reads it
/// from storage ([`Strategy::decode_stored`](crate::registry::strategy::Strategy::decode_stored)),
/// converted from the storage version when this version is another one.
pub fn served<'a>(info: &Resource, obj: &'a Value) -> Result<std::borrow::Cow<'a, Value>, Status> {
    let (converts, decoded) = to_serve(info, obj);
    if !converts && decoded.is_none() {
        return Ok(std::borrow::Cow::Borrowed(obj));
    }
    let mut out = decoded.unwrap_or_else(|| obj.clone());
    if converts {
        info.strategy.from_storage(&mut out)?;
    }
    crate::registry::encoding::canonicalize_served(info, &mut out);
    Ok(std::borrow::Cow::Owned(out))
}

/// Whether every stored object of `info` is served exactly as stored (a built-in of its
/// storage version whose strategy does not reshape stored objects): then [`served`] is
/// always borrowed, and answers are written from the watch cache's bytes.
pub fn served_as_stored(info: &Resource) -> bool {
    info.origin.is_none() && !info.converts() && !info.strategy.decodes_stored()
}

/// Whether a stored object needs converting to be served by `info`, and its decoded form
/// when decoding changes it.
fn to_serve(info: &Resource, obj: &Value) -> (bool, Option<Value>) {
    let decoded = info.strategy.decode_stored(obj);
    // An object stored under another version (a custom resource written before its storage
    // version changed) is converted like one of a non-storage version.
    let other_version = info.origin.is_some()
        && obj.get("apiVersion").and_then(Value::as_str) != Some(info.api_version().as_str());
    (info.converts() || other_version, decoded)
}

/// [`served`] for the items of a list, converted together (one conversion webhook call).
pub fn served_all(info: &Resource, items: &mut [std::sync::Arc<Value>]) -> Result<(), Status> {
    let mut convert = Vec::new();
    let mut at = Vec::new();
    for (i, item) in items.iter_mut().enumerate() {
        let (converts, decoded) = to_serve(info, item);
        if converts {
            convert.push(decoded.unwrap_or_else(|| (**item).clone()));
            at.push(i);
        } else if let Some(mut d) = decoded {
            crate::registry::encoding::canonicalize_served(info, &mut d);
            *item = std::sync::Arc::new(d);
        }
    }
    if convert.is_empty() {
        return Ok(());
    }
    info.strategy.from_storage_all(&mut convert)?;
    for (i, mut o) in at.into_iter().zip(convert) {
        crate::registry::encoding::canonicalize_served(info, &mut o);
        items[i] = std::sync::Arc::new(o);
    }
    Ok(())
}

/// Encodes one object (as stored) in the negotiated representation.
pub fn respond_object(ctx: &Ctx, code: StatusCode, obj: &Value) -> Response<Body> {
    let obj = match served(&ctx.info, obj) {
        Ok(o) => o,
        Err(s) => return crate::server::status_response(&s),
    };
    let obj = &*obj;
    match ctx.output {
        Output::Table(version) => {
            let include = match include_object(&ctx.query) {
                Ok(i) => i,
                Err(s) => return status_response(&s),
            };
            let t = table::of_resource(
                &ctx.info,
                std::slice::from_ref(obj),
                json!({"resourceVersion": store::meta_str(obj, "resourceVersion")}),
                include,
                &format!("meta.k8s.io/{version}"),
                now_timestamp(),
            );
            respond(Output::Json, code, &t)
        }
        Output::PartialMetadata(v) | Output::PartialMetadataProtobuf(v) => {
            respond(ctx.output.wire(), code, &partial(obj, v))
        }
        out => respond(out, code, obj),
    }
}

/// `?includeObject=` for Table output.
pub fn include_object(q: &Query) -> Result<table::IncludeObject, Status> {
    match q.get("includeObject") {
        Some("None") => Ok(table::IncludeObject::None),
        Some("Object") => Ok(table::IncludeObject::Object),
        Some("Metadata" | "") | None => Ok(table::IncludeObject::Metadata),
        // ValidateTableOptions
        Some(other) => Err(Status::invalid(
            "TableOptions",
            "meta.k8s.io",
            "",
            &[FieldError::not_supported(
                "includeObject",
                other,
                &["Metadata", "None", "Object"],
            )],
        )),
    }
}

/// Parses `resourceVersion` + `resourceVersionMatch` of a GET/LIST/WATCH.
pub fn read_at(q: &Query, kind: &str) -> Result<ReadAt, Status> {
    let rv = q.get("resourceVersion").filter(|s| !s.is_empty());
    let m = q.get("resourceVersionMatch").filter(|s| !s.is_empty());
    let invalid = |e: FieldError| Status::invalid(kind, "meta.k8s.io", "", &[e]);
    match (rv, m) {
        (None, None) => Ok(ReadAt::Latest),
        (None, Some(_)) => Err(invalid(FieldError::forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ))),
        (Some("0"), None) | (Some("0"), Some("NotOlderThan")) => Ok(ReadAt::Any),
        (Some(rv), None) | (Some(rv), Some("NotOlderThan")) => {
            Ok(ReadAt::NotOlderThan(store::parse_rv(rv)?))
        }
        (Some("0"), Some("Exact")) => Err(invalid(FieldError::forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ))),
        (Some(rv), Some("Exact")) => Ok(ReadAt::Exact(store::parse_rv(rv)?)),
        (Some(_), Some(other)) => Err(invalid(FieldError::not_supported(
            "resourceVersionMatch",
            json!(other),
            &["Exact", "NotOlderThan"],
        ))),
    }
}

/// Whether `accept` asks for aggregated discovery (`as=APIGroupDiscoveryList` of
/// `g=apidiscovery.k8s.io`) before any plain media type: the version asked for, and whether
/// the first such clause is protobuf (client-go lists protobuf first when configured for it).
fn wants_aggregated(accept: Option<&str>) -> Option<(&'static str, bool)> {
    let accept = accept?;
    for clause in accept.split(',') {
        let c = clause.replace(' ', "");
        let proto = c.starts_with(crate::server::protobuf::MEDIA_TYPE);
        if c.contains("as=APIGroupDiscoveryList") && c.contains("g=apidiscovery.k8s.io") {
            if c.contains("v=v2beta1") {
                return Some(("v2beta1", proto));
            }
            if c.contains("v=v2") {
                return Some(("v2", proto));
            }
        }
        if (c.starts_with("application/json") || proto) && !c.contains("as=") {
            return None;
        }
    }
    None
}

fn discovery_response(
    cat: &Catalog,
    accept: Option<&str>,
    core: bool,
    plain: Value,
    remotes: &[Arc<crate::aggregator::Remote>],
) -> Result<Response<Body>, Status> {
    if let Some((v, proto)) = wants_aggregated(accept) {
        let mut doc = discovery::aggregated(cat, core);
        crate::aggregator::discovery::merge_aggregated(&mut doc, remotes);
        doc["apiVersion"] = json!(format!("apidiscovery.k8s.io/{v}"));
        let (mut r, media) = if proto {
            (
                protobuf::respond(StatusCode::OK, &doc),
                crate::server::protobuf::MEDIA_TYPE,
            )
        } else {
            (
                respond(Output::Json, StatusCode::OK, &doc),
                "application/json",
            )
        };
        if r.status() == StatusCode::OK {
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_str(&format!(
                    "{media};g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"
                ))
                .expect("static header"),
            );
        }
        r.headers_mut()
            .insert(header::VARY, HeaderValue::from_static("Accept"));
        return Ok(r);
    }
    let out = negotiate::output(accept)?;
    let mut r = respond(out.plain(), StatusCode::OK, &plain);
    r.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    Ok(r)
}

fn raw_json(code: StatusCode, bytes: Bytes) -> Response<Body> {
    let mut r = Response::new(full(bytes));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Whether `If-None-Match` names `etag` (or `*`).
fn not_modified(headers: &http::HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/") == etag)
}

fn set_etag(r: &mut Response<Body>, etag: &str) {
    if let Ok(v) = HeaderValue::from_str(etag) {
        r.headers_mut().insert(header::ETAG, v);
    }
}

fn not_modified_response(etag: &str) -> Response<Body> {
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = StatusCode::NOT_MODIFIED;
    set_etag(&mut r, etag);
    r
}

/// One `/openapi/v3/<path>` document as kube-openapi serves it: the ETag is its hash; a
/// `?hash=` that names the current hash makes it cacheable forever (`public, immutable`), an
/// outdated one is redirected (301) to the current URL.
fn v3_document_response(
    headers: &http::HeaderMap,
    path: &str,
    bytes: Bytes,
    hash: &str,
    asked: Option<&str>,
) -> Response<Body> {
    let etag = format!("\"{hash}\"");
    let path = path.trim_start_matches('/').trim_end_matches('/');
    if let Some(asked) = asked.filter(|h| !h.is_empty()) {
        if asked != hash {
            let mut r = Response::new(full(Bytes::new()));
            *r.status_mut() = StatusCode::MOVED_PERMANENTLY;
            if let Ok(v) = HeaderValue::from_str(&format!("/openapi/v3/{path}?hash={hash}")) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            return r;
        }
    }
    let mut r = if not_modified(headers, &etag) {
        not_modified_response(&etag)
    } else {
        raw_json(StatusCode::OK, bytes)
    };
    set_etag(&mut r, &etag);
    if asked.is_some_and(|h| h == hash) {
        r.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, immutable"),
        );
        let expires = (now_timestamp() + jiff::SignedDuration::from_hours(24 * 365))
            .strftime("%a, %d %b %Y %H:%M:%S UTC")
            .to_string();
        if let Ok(v) = HeaderValue::from_str(&expires) {
            r.headers_mut().insert(header::EXPIRES, v);
        }
    }
    r
}

/// Version info reported at `/version`.
pub fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": concat!("v1.33.1+rafter-", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "rust",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, match std::env::consts::ARCH { "x86_64" => "amd64", "aarch64" => "arm64", a => a }),
    })
}

/// Routes one request; every failure becomes a Status response.
pub async fn route(app: Arc<App>, user: User, req: Request<Incoming>) -> Response<Body> {
    let pretty = negotiate::wants_pretty(
        req.uri().query(),
        req.headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok()),
    );
    let protobuf_status = negotiate::status_as_protobuf(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    );
    let inner = async move {
        // A remote APIService's group-version goes to its extension server, bodies streamed
        // (authorized already, as every request).
        let path = crate::meta::escape::path_unescape(req.uri().path());
        if let Some(remote) = app.aggregator.remote_for_path(&path) {
            return crate::aggregator::proxy::serve(app.aggregator.clone(), remote, user, req)
                .await;
        }
        // Connect subresources (logs, exec, proxies) stream: served with the body unread.
        if let Some(call) = super::connect::call(&app.store.registry().snapshot(), &path) {
            return super::connect::serve(app, user, call, req).await;
        }
        // The body is read whole before routing, so that every answer, an unrouted path's
        // 404 included, comes after the request ended (an HTTP/2 client is never cut off
        // mid-upload by a reset stream).
        let (parts, body) = req.into_parts();
        let req = match read_body(body).await {
            Ok(b) => Request::from_parts(parts, b),
            Err(s) => return status_response(&s),
        };
        match route_inner(app, user, req).await {
            Ok(r) => r,
            Err(s) => status_response(&s),
        }
    };
    negotiate::with_pretty(
        pretty,
        negotiate::with_protobuf_status(protobuf_status, inner),
    )
    .await
}

async fn route_inner(
    app: Arc<App>,
    user: User,
    req: Request<Bytes>,
) -> Result<Response<Body>, Status> {
    let path = crate::meta::escape::path_unescape(req.uri().path());
    let query = Query::parse(req.uri().query());
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let accept = accept.as_deref();
    if let Some(r) = super::health::serve(&app, &path, &query.0) {
        return Ok(r);
    }
    let trimmed = path.trim_end_matches('/');
    // One registry snapshot serves the whole request.
    let cat = app.store.registry().snapshot();
    match trimmed {
        "" => {
            return Ok(respond(
                Output::Json,
                StatusCode::OK,
                &json!({"paths": root_paths(&cat)}),
            ))
        }
        "/version" => return Ok(respond(Output::Json, StatusCode::OK, &version_info())),
        "/debug/api_priority_and_fairness/dump_priority_levels"
        | "/debug/api_priority_and_fairness/dump_queues"
        | "/debug/api_priority_and_fairness/dump_requests"
            if app.flowcontrol.is_some() =>
        {
            let fc = app.flowcontrol.as_ref().expect("checked");
            let details = form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
                .any(|(k, v)| k == "includeRequestDetails" && !v.is_empty());
            let text = match path.rsplit('/').next() {
                Some("dump_priority_levels") => fc.dump_priority_levels(),
                Some("dump_queues") => fc.dump_queues(),
                _ => fc.dump_requests(details),
            };
            let mut r = Response::new(full(text));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            return Ok(r);
        }
        "/metrics" => {
            // Gauges read from state when scraped.
            app.watch.record_object_counts();
            app.store.kv().record_metrics();
            let mut r = Response::new(full(app.metrics.render()));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            return Ok(r);
        }
        "/openapi/v2" => {
            let docs = app.aggregator.openapi_v2(app.openapi.v2(&cat));
            // client-go asks for the protobuf form; the JSON form for everyone else.
            let proto = accept.is_some_and(|a| a.contains("com.github.proto-openapi.spec.v2"));
            let protobuf = proto.then(|| docs.protobuf());
            let etag = match &protobuf {
                Some((_, etag)) => etag.to_string(),
                None => docs.etag.clone(),
            };
            if not_modified(req.headers(), &etag) {
                return Ok(not_modified_response(&etag));
            }
            let mut r = if let Some((bytes, _)) = protobuf {
                let mut r = Response::new(full(bytes));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(
                        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                    ),
                );
                r
            } else {
                raw_json(StatusCode::OK, docs.json.clone())
            };
            set_etag(&mut r, &etag);
            return Ok(r);
        }
        "/openapi/v3" => {
            let docs = app.openapi.v3(&cat);
            let (index, hash) = app
                .aggregator
                .openapi_v3_index(docs.index(), docs.index_hash());
            let etag = format!("\"{hash}\"");
            if not_modified(req.headers(), &etag) {
                return Ok(not_modified_response(&etag));
            }
            let mut r = raw_json(StatusCode::OK, index);
            set_etag(&mut r, &etag);
            return Ok(r);
        }
        "/.well-known/openid-configuration" | "/openid/v1/jwks" => {
            return authentication::discovery(&app, trimmed)
        }
        "/api" => {
            let mut plain = discovery::api_versions();
            plain["serverAddressByClientCIDRs"] = json!([{"clientCIDR": "0.0.0.0/0", "serverAddress": app.advertise_url.trim_start_matches("https://")}]);
            return discovery_response(&cat, accept, true, plain, &[]);
        }
        "/apis" => {
            let remotes = app.aggregator.remotes();
            let mut plain = discovery::api_group_list(&cat);
            crate::aggregator::discovery::merge_group_list(&mut plain, &remotes);
            return discovery_response(&cat, accept, false, plain, &remotes);
        }
        _ => {}
    }
    if let Some(doc_path) = trimmed.strip_prefix("/openapi/v3/") {
        let docs = app.openapi.v3(&cat);
        let (bytes, hash) = match app.aggregator.openapi_v3_document(doc_path) {
            Some(remote) => remote,
            None => docs
                .document(doc_path)
                .map(|(b, h)| (b, h.to_string()))
                .ok_or_else(Status::path_not_found)?,
        };
        return Ok(v3_document_response(
            req.headers(),
            doc_path,
            bytes,
            &hash,
            query.get("hash"),
        ));
    }
    let parts: Vec<&str> = trimmed.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        ["api", v] => {
            let out = negotiate::output(accept)?.plain();
            return discovery::api_resource_list(&cat, "", v)
                .map(|d| respond(out, StatusCode::OK, &d))
                .ok_or_else(Status::path_not_found);
        }
        ["apis", g] => {
            let out = negotiate::output(accept)?.plain();
            let remotes = app.aggregator.remotes();
            return discovery::api_group(&cat, g)
                .map(|mut d| {
                    crate::aggregator::discovery::merge_versions(&mut d, g, &remotes);
                    d
                })
                .or_else(|| crate::aggregator::discovery::api_group(g, &remotes))
                .map(|d| respond(out, StatusCode::OK, &d))
                .ok_or_else(Status::path_not_found);
        }
        ["apis", g, v] => {
            let out = negotiate::output(accept)?.plain();
            return discovery::api_resource_list(&cat, g, v)
                .map(|d| respond(out, StatusCode::OK, &d))
                .ok_or_else(Status::path_not_found);
        }
        _ => {}
    }
    let Some(mut ri) = request_info::parse(req.method(), &path, query.flag("watch")) else {
        return Err(Status::path_not_found());
    };
    if ri.subresource.is_none() {
        use crate::registry::discovery::{unstored_endpoint, Endpoint};
        match unstored_endpoint(&ri.group, &ri.version, &ri.resource) {
            Some(Endpoint::ComponentStatuses) => {
                if ri.namespace.is_some() {
                    return Err(Status::path_not_found());
                }
                let output = negotiate::output(accept)?;
                return component_status::handle(&app, ri.verb, ri.name.as_deref(), &query, output)
                    .await;
            }
            // `POST namespaces/<ns>/bindings` is pods/binding of the pod the Binding names.
            Some(Endpoint::Bindings) => {
                if ri.namespace.is_none() {
                    return Err(Status::path_not_found());
                }
                if ri.verb != "create" || ri.name.is_some() {
                    return Err(Status::method_not_allowed());
                }
                let binding = authentication::decode_kind(req.headers(), req.body(), "Binding")?;
                let name = binding
                    .get("metadata")
                    .and_then(|m| m.get("name"))
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                if name.is_empty() {
                    return Err(Status::bad_request("name must be provided"));
                }
                ri.resource = "pods".into();
                ri.name = Some(name.to_string());
                ri.subresource = Some("binding".into());
            }
            _ => {}
        }
    }
    if ri.group == "authentication.k8s.io" && ri.version == "v1" {
        if let Some(kind) = authentication::review_kind(&ri.resource) {
            if ri.verb != "create" || ri.name.is_some() || ri.namespace.is_some() {
                return Err(Status::method_not_allowed());
            }
            let output = negotiate::output(accept)?;
            let (parts, body) = req.into_parts();
            return authentication::review(&app, &user, kind, &parts.headers, &body, output).await;
        }
    }
    if ri.group == "authorization.k8s.io" && ri.version == "v1" {
        if let Some(review) = access_review::Review::of(&ri.resource) {
            // Local reviews live in a namespace; the others are cluster-scoped.
            let scoped_ok =
                (review == access_review::Review::LocalSubjectAccess) == ri.namespace.is_some();
            if !scoped_ok {
                return Err(Status::path_not_found());
            }
            if ri.verb != "create" || ri.name.is_some() {
                return Err(Status::method_not_allowed());
            }
            let output = negotiate::output(accept)?;
            let (parts, body) = req.into_parts();
            return access_review::handle(
                &app.authz,
                &user,
                review,
                ri.namespace.as_deref(),
                &parts.headers,
                &body,
                output,
            )
            .await;
        }
    }
    let info = cat
        .get(&ri.group, &ri.version, &ri.resource)
        .cloned()
        .ok_or_else(Status::path_not_found)?;
    // Scope: namespaced resources are addressed inside a namespace, except list/watch across
    // all namespaces; cluster-scoped resources never are.
    if info.namespaced && ri.namespace.is_none() && !matches!(ri.verb, "list" | "watch") {
        return Err(if ri.name.is_some() {
            Status::path_not_found()
        } else {
            Status::method_not_allowed()
        });
    }
    let item_verb = matches!(ri.verb, "get" | "update" | "patch" | "delete")
        || (ri.verb == "create" && ri.subresource.is_some());
    if ri.name.is_some() != item_verb && !matches!(ri.verb, "watch") {
        return Err(Status::method_not_allowed());
    }
    if !info.namespaced && ri.namespace.is_some() {
        return Err(Status::path_not_found());
    }
    // A failed negotiation is answered in JSON (kube's WriteRawJSON).
    let output = negotiate::output_for(accept, info.protobuf)
        .inspect_err(|_| negotiate::no_protobuf_status())?;
    let (parts, body) = req.into_parts();
    let audit_record = parts.extensions.get::<Arc<crate::audit::Record>>().cloned();
    let audit = parts
        .extensions
        .get::<admission::AuditAnnotations>()
        .cloned()
        .unwrap_or_default();
    let ctx = Ctx {
        app,
        user,
        ri,
        info: info.clone(),
        query,
        output,
        headers: parts.headers,
        body,
        now: now_rfc3339(),
        warnings: Arc::new(std::sync::Mutex::new(
            info.deprecation_warning.iter().cloned().collect(),
        )),
        audit,
    };
    if let Some(rec) = &audit_record {
        audit_request_object(rec, &ctx);
    }
    if crate::faults::handler_should_panic(ctx.ri.name.as_deref()) {
        panic!("test fault: handler-panic");
    }
    if info.deprecation_warning.is_some() {
        deprecated_request(&ctx);
    }
    let sub = ctx.ri.subresource.clone();
    let extra = |e: Extra| info.strategy.extras().contains(&e);
    // An `Extra::Writes` subresource named by the request.
    let writes = sub.as_deref().and_then(|s| {
        info.strategy.extras().iter().find_map(|e| match e {
            Extra::Writes(name) if *name == s => Some(*name),
            _ => None,
        })
    });
    let warnings = |resp: Result<Response<Body>, Status>, ctx: &Ctx| {
        let mut resp = resp?;
        for w in ctx.warnings.lock().map(|w| w.clone()).unwrap_or_default() {
            let text = format!("299 - {:?}", w);
            if let Ok(v) = HeaderValue::from_str(&text) {
                resp.headers_mut().append(header::WARNING, v);
            }
        }
        Ok(resp)
    };
    let resp = match (sub.as_deref(), ctx.ri.verb) {
        (None, "get") => get::handle(&ctx).await,
        (None, "list") => list::handle(&ctx).await,
        (None, "watch") => return watch::handle(ctx).await,
        (None, "create") => create::handle(&ctx).await,
        (None, "update") => update::handle(&ctx, store::Part::Main).await,
        (None, "patch") => patch::handle(&ctx, store::Part::Main).await,
        (None, "delete") => delete::handle(&ctx).await,
        (None, "deletecollection") if info.has_verb("deletecollection") => {
            delete::collection(&ctx).await
        }
        (Some("status"), verb) if info.has_status => match verb {
            "get" => get::handle(&ctx).await,
            "update" => update::handle(&ctx, store::Part::Status).await,
            "patch" => patch::handle(&ctx, store::Part::Status).await,
            _ => Err(Status::method_not_supported(ctx.scope().gr(), verb)),
        },
        (Some("approval"), verb) if extra(Extra::Approval) => match verb {
            "get" => get::handle(&ctx).await,
            "update" => update::handle(&ctx, store::Part::Approval).await,
            "patch" => patch::handle(&ctx, store::Part::Approval).await,
            _ => Err(Status::method_not_supported(ctx.scope().gr(), verb)),
        },
        (Some(_), verb) if writes.is_some() => {
            let part = store::Part::Sub(writes.unwrap_or_default());
            match verb {
                "get" => get::handle(&ctx).await,
                "update" => update::handle(&ctx, part).await,
                "patch" => patch::handle(&ctx, part).await,
                _ => Err(Status::method_not_supported(ctx.scope().gr(), verb)),
            }
        }
        (Some("finalize"), "update") if extra(Extra::Finalize) => {
            update::handle(&ctx, store::Part::Finalize).await
        }
        (Some("scale"), verb) if info.scale.is_some() => scale::handle(&ctx, verb).await,
        (Some("binding"), "create") if extra(Extra::Binding) => binding::handle(&ctx).await,
        (Some("eviction"), "create") if extra(Extra::Eviction) => eviction::handle(&ctx).await,
        (Some("token"), "create") if extra(Extra::Token) => {
            authentication::token_request(&ctx).await
        }
        (None, _) => Err(Status::method_not_allowed()),
        _ => Err(Status::path_not_found()),
    };
    warnings(resp, &ctx)
}

/// Reads a request body, up to kube-apiserver's limit (413 beyond it).
async fn read_body(body: Incoming) -> Result<Bytes, Status> {
    Ok(http_body_util::Limited::new(body, MAX_BODY)
        .collect()
        .await
        .map_err(|e| {
            if e.to_string().contains("length limit") {
                Status::new(
                    413,
                    "RequestEntityTooLarge",
                    "Request entity too large: limit is 3145728",
                )
            } else {
                Status::bad_request(format!("error reading request body: {e}"))
            }
        })?
        .to_bytes())
}

fn root_paths(cat: &Catalog) -> Vec<String> {
    let mut paths = vec![
        "/api".to_string(),
        "/api/v1".to_string(),
        "/apis".to_string(),
    ];
    for (g, versions) in discovery::served_groups(cat) {
        paths.push(format!("/apis/{g}"));
        for v in versions {
            paths.push(format!("/apis/{g}/{v}"));
        }
    }
    for p in [
        "/healthz",
        "/livez",
        "/readyz",
        "/metrics",
        "/openapi/v2",
        "/openapi/v3",
        "/version",
    ] {
        paths.push(p.to_string());
    }
    paths.sort();
    paths
}

/// A list body: `{"kind": "<Kind>List", "apiVersion", "metadata": {...}, "items": [...]}`.
pub fn list_body(info: &Resource, items: Vec<Value>, list_meta: Map<String, Value>) -> Value {
    // Typed lists drop each item's kind and apiVersion; custom resources' (unstructured)
    // lists keep them.
    let builtin = info.origin.is_none();
    let items: Vec<Value> = items
        .into_iter()
        .map(|mut o| {
            if let Some(m) = o.as_object_mut().filter(|_| builtin) {
                m.remove("kind");
                m.remove("apiVersion");
            }
            o
        })
        .collect();
    json!({
        "kind": info.list_kind,
        "apiVersion": info.api_version(),
        "metadata": list_meta,
        "items": items,
    })
}

/// kube's supported patch types for built-ins, in its order.
const ACCEPTED_PATCH: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];
/// Custom resources: apply is not served for them yet, so not listed (kube lists it).
pub(super) const ACCEPTED_PATCH_CUSTOM: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
];

/// The patch types this resource accepts.
pub(super) fn accepted_patch_types(ctx: &Ctx) -> &'static [&'static str] {
    if ctx.info.strategy.strategic_merge_patch() {
        ACCEPTED_PATCH
    } else {
        ACCEPTED_PATCH_CUSTOM
    }
}
