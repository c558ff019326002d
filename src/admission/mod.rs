//! Admission: kube-apiserver's chain of admission plugins between the request's decoding and
//! the write. Mutating plugins run (in kube's order) after defaulting and the strategy's
//! PrepareFor*, before the object's own validation; validating plugins run after it, just
//! before the write — both inside the store's write (and its retry loop: an object re-read
//! after a conflict is admitted again), reached through the callbacks of
//! [`crate::registry::object::WriteOptions`] so that the registry never imports this module.
//!
//! Owns: [`Attributes`] (kube's `admission.Attributes`), the [`Plugin`] trait, the [`Chain`]
//! built from `--enable-admission-plugins` / `--disable-admission-plugins` /
//! `--admission-control-config-file` ([`config`]), and the built-in plugins ([`plugins`]).
//! A plugin reads cluster state through [`Handle`] (the replica's store).
//!
//! Does not know: HTTP (the edge builds attributes from the request), how the store writes.

pub mod config;
pub mod matching;
pub mod plugins;
pub mod policy;
pub mod webhook;

use std::sync::Arc;

use serde_json::Value;

use crate::authn::UserInfo;
use crate::meta::status::Status;
use crate::registry::resource::Resource;
use crate::registry::store::Store;

/// kube's `admission.Operation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    pub fn as_str(&self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// What a plugin sees of a request (kube's `admission.Attributes`).
#[derive(Clone)]
pub struct Attributes {
    pub operation: Operation,
    /// The resource (group, version, plural, kind, scope) the request is for.
    pub resource: Arc<Resource>,
    /// `status`, `scale`, `binding`, ... or `""`.
    pub subresource: String,
    pub name: String,
    pub namespace: String,
    /// The new object (create, update; the object being connected to on connect).
    pub object: Option<Value>,
    /// The stored object (update, delete).
    pub old_object: Option<Value>,
    /// CreateOptions / UpdateOptions / DeleteOptions / PatchOptions as sent.
    pub options: Value,
    pub dry_run: bool,
    pub user: UserInfo,
    /// The mutating chain's second run (kube's `ReinvocationContext`).
    pub reinvocation: Reinvocation,
}

/// Whether the mutating chain runs again, and what its plugins remember between the runs:
/// a mutating webhook with `reinvocationPolicy: IfNeeded` is called once more when a later
/// plugin changed the object, and every mutating plugin runs again then, as in kube.
#[derive(Clone, Default)]
pub struct Reinvocation {
    pub is_reinvoke: bool,
    pub should_reinvoke: bool,
    pub webhooks: webhook::ReinvokeState,
}

impl Attributes {
    /// The object's kind (`Pod`).
    pub fn kind(&self) -> &str {
        &self.resource.kind
    }

    /// Whether the request is for `group`/`resource` (no subresource).
    pub fn is(&self, group: &str, resource: &str) -> bool {
        self.resource.group == group
            && self.resource.resource == resource
            && self.subresource.is_empty()
    }

    /// `group`/`resource` with subresource `sub`.
    pub fn is_sub(&self, group: &str, resource: &str, sub: &str) -> bool {
        self.resource.group == group
            && self.resource.resource == resource
            && self.subresource == sub
    }

    /// A create names its object in the body, not the URL: the name (and namespace) the
    /// attributes carry come from it then.
    fn fill_from(&mut self, obj: &Value) {
        let m = crate::registry::object::meta(obj);
        let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        if self.name.is_empty() {
            self.name = s("name");
        }
        if self.namespace.is_empty() && self.resource.namespaced {
            self.namespace = s("namespace");
        }
    }

    /// kube's `admission.NewForbidden`: 403 `<resource> "<name>" is forbidden: <why>`.
    pub fn forbidden(&self, why: impl std::fmt::Display) -> Status {
        Status::forbidden(
            crate::meta::status::GroupResource {
                group: &self.resource.group,
                resource: &self.resource.resource,
            },
            &self.name,
            &why.to_string(),
        )
    }
}

/// What plugins may read and write beyond the request: the replica's store, the
/// authorizer (for plugins that check a user's rights, as CertificateApproval does), and the
/// response's `Warning` headers.
#[derive(Clone)]
pub struct Handle {
    pub store: Store,
    pub authz: Option<Arc<crate::authz::Authorizer>>,
    pub warnings: Warnings,
    pub audit: AuditAnnotations,
}

/// The audit annotations of the request being admitted (kube's `Attributes.AddAnnotation`):
/// `key` → value, shared with the handler, which hands them to the audit log. As kube, a
/// key keeps its first value: a second, different value for it is refused.
#[derive(Clone, Default)]
pub struct AuditAnnotations(pub Arc<std::sync::Mutex<std::collections::BTreeMap<String, String>>>);

impl AuditAnnotations {
    /// Records `key: value`; an error when `key` already holds another value.
    pub fn add(&self, key: impl Into<String>, value: impl Into<String>) -> Result<(), String> {
        let (k, v) = (key.into(), value.into());
        let Ok(mut all) = self.0.lock() else {
            return Ok(());
        };
        match all.get(&k) {
            Some(old) if *old != v => Err(format!(
                "admission annotations are not allowd to be overwritten, key:{k:?}, old value: {old:?}, new value:{v:?}"
            )),
            _ => {
                all.insert(k, v);
                Ok(())
            }
        }
    }

    /// Every annotation recorded so far.
    pub fn snapshot(&self) -> std::collections::BTreeMap<String, String> {
        self.0.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

/// The `Warning` headers of the response to the request being admitted (kube's
/// `warning.AddWarning` on the request's context): shared with the handler, which sends them
/// with a successful response. A warning already there is not repeated, so a plugin run
/// again on a retried write adds nothing twice.
#[derive(Clone, Default)]
pub struct Warnings(pub Arc<std::sync::Mutex<Vec<String>>>);

impl Warnings {
    /// Adds one warning.
    pub fn add(&self, warning: impl Into<String>) {
        let w = warning.into();
        if let Ok(mut all) = self.0.lock() {
            if !all.contains(&w) {
                all.push(w);
            }
        }
    }
}

impl Handle {
    /// Whether `user` may `verb` the resource described (no authorizer: allowed).
    pub async fn allowed(
        &self,
        user: &UserInfo,
        attrs: crate::authz::ResourceAttributes<'_>,
    ) -> bool {
        match &self.authz {
            Some(a) => {
                a.allows(user, &crate::authz::Attributes::Resource(attrs))
                    .await
            }
            None => true,
        }
    }

    /// One object of a built-in resource from this replica's store (kube's plugins read
    /// their informers' caches likewise); `None` when absent or unreadable.
    pub async fn get(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let info = self.store.registry().get(group, version, resource)?;
        let scope = crate::registry::store::Scope {
            info: &info,
            namespace,
        };
        self.store
            .get(scope, name, crate::registry::store::ReadAt::Any)
            .await
            .ok()
    }

    /// Every object of a built-in resource (in `namespace`, or all).
    pub async fn list(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        namespace: Option<&str>,
    ) -> Vec<Value> {
        let Some(info) = self.store.registry().get(group, version, resource) else {
            return Vec::new();
        };
        let scope = crate::registry::store::Scope {
            info: &info,
            namespace,
        };
        let opts = crate::registry::store::ListOptions {
            read_at: Some(crate::registry::store::ReadAt::Any),
            ..Default::default()
        };
        self.store
            .list(scope, &opts)
            .await
            .map(|l| l.items)
            .unwrap_or_default()
    }
}

/// One admission plugin. Both phases default to admitting.
#[async_trait::async_trait]
pub trait Plugin: Send + Sync {
    /// kube's plugin name (`NamespaceLifecycle`).
    fn name(&self) -> &'static str;

    /// Starts what the plugin keeps current in the background (the webhooks' and
    /// policies' configurations followed from this replica's watch cache); the tasks end
    /// when the server stops.
    fn start(&self, _cache: &crate::watch::Cache) -> Vec<tokio::task::JoinHandle<()>> {
        Vec::new()
    }

    /// The mutating phase: may change `a.object`.
    async fn admit(&self, _a: &mut Attributes, _h: &Handle) -> Result<(), Status> {
        Ok(())
    }

    /// The validating phase.
    async fn validate(&self, _a: &Attributes, _h: &Handle) -> Result<(), Status> {
        Ok(())
    }

    /// Objects to write in the same transaction as the admitted one (ResourceQuota's
    /// charged usage), computed after the validating phase; run again when the write loses
    /// a race.
    async fn charge(
        &self,
        _a: &Attributes,
        _h: &Handle,
    ) -> Result<Vec<crate::registry::object::Charged>, Status> {
        Ok(Vec::new())
    }
}

/// The enabled plugins, in kube's order.
#[derive(Clone, Default)]
pub struct Chain {
    plugins: Vec<Arc<dyn Plugin>>,
    enabled: Vec<&'static str>,
}

impl Chain {
    /// The chain of `--enable-admission-plugins`, `--disable-admission-plugins` and
    /// `--admission-control-config-file` (kube's texts for unknown names).
    pub fn from_flags(
        enable: &[String],
        disable: &[String],
        config_file: Option<&std::path::Path>,
    ) -> Result<Chain, String> {
        let mut errs = Vec::new();
        for n in enable {
            if !plugins::ALL_ORDERED.contains(&n.as_str()) {
                errs.push(format!("enable-admission-plugins plugin {n:?} is unknown"));
            }
        }
        for n in disable {
            if !plugins::ALL_ORDERED.contains(&n.as_str()) {
                errs.push(format!("disable-admission-plugins plugin {n:?} is unknown"));
            }
        }
        let both: Vec<&String> = enable.iter().filter(|n| disable.contains(n)).collect();
        if !both.is_empty() {
            errs.push(format!(
                "{both:?} in enable-admission-plugins and disable-admission-plugins overlapped"
            ));
        }
        if !errs.is_empty() {
            return Err(errs.join("; "));
        }
        let configs = match config_file {
            Some(p) => config::load(p)?,
            None => Default::default(),
        };
        let enabled: Vec<&'static str> = plugins::ALL_ORDERED
            .iter()
            .copied()
            .filter(|n| {
                !disable.iter().any(|d| d == n)
                    && (plugins::DEFAULT_ON.contains(n) || enable.iter().any(|e| e == n))
            })
            .collect();
        let mut chain = Chain {
            plugins: Vec::new(),
            enabled: enabled.clone(),
        };
        for name in enabled {
            let cfg = configs.get(name).cloned();
            match plugins::build(name, cfg) {
                Ok(Some(p)) => chain.plugins.push(p),
                Ok(None) => {}
                Err(e) => return Err(format!("couldn't init admission plugin {name:?}: {e}")),
            }
        }
        Ok(chain)
    }

    /// A chain of exactly these plugins (tests, embedders).
    pub fn of(plugins: Vec<Arc<dyn Plugin>>) -> Chain {
        let enabled = plugins.iter().map(|p| p.name()).collect();
        Chain { plugins, enabled }
    }

    /// [`Plugin::start`] of every plugin.
    pub fn start(&self, cache: &crate::watch::Cache) -> Vec<tokio::task::JoinHandle<()>> {
        self.plugins.iter().flat_map(|p| p.start(cache)).collect()
    }

    /// Whether plugin `name` is enabled.
    pub fn enabled(&self, name: &str) -> bool {
        self.enabled.contains(&name)
    }

    /// The enabled plugin names, in order.
    pub fn names(&self) -> &[&'static str] {
        &self.enabled
    }

    /// The mutating phase of every plugin, in order; once more when a plugin asks for it
    /// (kube's reinvoker).
    pub async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        a.reinvocation = Reinvocation::default();
        for p in &self.plugins {
            p.admit(a, h).await?;
        }
        if a.reinvocation.should_reinvoke {
            a.reinvocation.is_reinvoke = true;
            for p in &self.plugins {
                p.admit(a, h).await?;
            }
        }
        Ok(())
    }

    /// The validating phase of every plugin, in order.
    pub async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        for p in &self.plugins {
            p.validate(a, h).await?;
        }
        Ok(())
    }

    /// Every plugin's charges, in order.
    pub async fn charge(
        &self,
        a: &Attributes,
        h: &Handle,
    ) -> Result<Vec<crate::registry::object::Charged>, Status> {
        let mut out = Vec::new();
        for p in &self.plugins {
            out.extend(p.charge(a, h).await?);
        }
        Ok(out)
    }

    /// The store's callbacks for one write: `mutate` (the mutating phase on the object about
    /// to be validated), `validate` (the resource strategy's warnings, then the validating
    /// phase, on the object about to be written) and `charge` (what to write with it), each
    /// with `base` completed by the objects.
    pub fn callbacks(
        self: &Arc<Self>,
        base: Attributes,
        h: Handle,
    ) -> (
        crate::registry::object::Mutate,
        crate::registry::object::Admit,
        crate::registry::object::Charge,
    ) {
        let (chain, attrs, handle) = (self.clone(), base.clone(), h.clone());
        let charge: crate::registry::object::Charge =
            Arc::new(move |obj: &Value, old: Option<&Value>| {
                let (chain, handle) = (chain.clone(), handle.clone());
                let mut a = attrs.clone();
                a.fill_from(obj);
                a.object = Some(obj.clone());
                a.old_object = old.cloned();
                Box::pin(async move { chain.charge(&a, &handle).await })
            });
        let (chain, attrs, handle) = (self.clone(), base.clone(), h.clone());
        let mutate: crate::registry::object::Mutate =
            Arc::new(move |obj: Value, old: Option<Value>| {
                let (chain, handle) = (chain.clone(), handle.clone());
                let mut a = attrs.clone();
                Box::pin(async move {
                    a.fill_from(&obj);
                    a.object = Some(obj);
                    if old.is_some() {
                        a.old_object = old;
                    }
                    chain.admit(&mut a, &handle).await?;
                    Ok(a.object.unwrap_or(Value::Null))
                })
            });
        let (chain, attrs, handle) = (self.clone(), base, h);
        let validate: crate::registry::object::Admit =
            Arc::new(move |obj: &Value, old: Option<&Value>| {
                let (chain, handle) = (chain.clone(), handle.clone());
                let mut a = attrs.clone();
                a.fill_from(obj);
                if a.operation != Operation::Delete {
                    a.object = Some(obj.clone());
                }
                if let Some(o) = old {
                    a.old_object = Some(o.clone());
                } else if a.operation == Operation::Delete {
                    a.old_object = Some(obj.clone());
                }
                // kube's BeforeCreate / BeforeUpdate add the strategy's warnings after the
                // object's validation, before the validating admission phase (whose
                // warnings, PodSecurity's, follow them). The handler adds them again after
                // the write (for a no-op update, which is not admitted): nothing repeats.
                let strategy = &a.resource.strategy;
                let warnings = match (a.operation, a.subresource.as_str(), old) {
                    (Operation::Create, "", _) => strategy.warnings_on_create(obj),
                    (Operation::Update, "" | "status", Some(o)) => {
                        strategy.warnings_on_update(obj, o)
                    }
                    _ => Vec::new(),
                };
                for w in warnings {
                    handle.warnings.add(w);
                }
                Box::pin(async move { chain.validate(&a, &handle).await })
            });
        (mutate, validate, charge)
    }
}
