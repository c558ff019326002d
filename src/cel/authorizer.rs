//! The runtime of kube's CEL authorizer library (`k8s.io/apiserver/pkg/cel/library/authz`),
//! which admission policies reach through the `authorizer` variable:
//! `authorizer.group(g).resource(r).subresource(s).namespace(ns).name(n).check(verb)` and
//! `authorizer.path(p).check(verb)` give a `Decision` with `allowed()`, `reason()`,
//! `errored()` and `error()`; `authorizer.serviceAccount(ns, name)` is an authorizer for that
//! service account's user; `authorizer.requestResource` is a check of the request's own
//! resource.
//!
//! Checks ask [`crate::authz::Authorizer`], which is async, from inside a synchronous
//! evaluation: the evaluation must run on a blocking thread (`spawn_blocking`), from where a
//! check blocks on the runtime [`Authz::runtime`] for at most [`CHECK_TIMEOUT`]. Decisions
//! are cached per request, as kube's caching authorizer does. Without an authorizer (embedded
//! uses, unit tests) every check is allowed, as [`crate::admission::Handle::allowed`] does.
//!
//! Owns: the opaque values and the functions registered into the shared CEL context.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube_cel::cel::extractors::{Arguments, This};
use kube_cel::cel::objects::{Key, Map, Opaque};
use kube_cel::cel::{Context, ExecutionError, ResolveResult, Value};

use crate::authn::UserInfo;

/// The longest one check may wait for the authorizer.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The map key under which the `authorizer` value carries its state (not a CEL identifier,
/// so no expression selects it by accident).
const STATE: &str = "\u{0}authorizer";

/// Who checks are made for, against what, and the decisions made so far.
pub struct Authz {
    pub authorizer: Option<Arc<crate::authz::Authorizer>>,
    pub user: UserInfo,
    pub runtime: Option<tokio::runtime::Handle>,
    cache: Mutex<HashMap<String, Decision>>,
}

/// The request's resource, for `authorizer.requestResource`.
#[derive(Clone, Debug, Default)]
pub struct RequestResource {
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

impl Authz {
    pub fn new(
        authorizer: Option<Arc<crate::authz::Authorizer>>,
        user: UserInfo,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Arc<Authz> {
        Arc::new(Authz {
            authorizer,
            user,
            runtime,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The CEL value of the `authorizer` variable.
    pub fn value(self: &Arc<Self>, request: &RequestResource) -> Value {
        let rr = Check {
            authz: self.clone(),
            target: Target::Resource {
                group: request.group.clone(),
                version: request.version.clone(),
                resource: request.resource.clone(),
                subresource: request.subresource.clone(),
                namespace: request.namespace.clone(),
                name: request.name.clone(),
            },
        };
        authorizer_value(self.clone(), Some(rr))
    }

    fn decide(&self, target: &Target, verb: &str) -> Decision {
        let key = format!("{}\u{0}{target:?}\u{0}{verb}", self.user.name);
        if let Some(d) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return d;
        }
        let d = self.ask(target, verb);
        if let Ok(mut c) = self.cache.lock() {
            c.insert(key, d.clone());
        }
        d
    }

    fn ask(&self, target: &Target, verb: &str) -> Decision {
        let Some(authorizer) = &self.authorizer else {
            return Decision::allowed("");
        };
        let Some(rt) = &self.runtime else {
            return Decision::error("no runtime to run the authorizer on");
        };
        let opt = |s: &str| (!s.is_empty()).then_some(s.to_string());
        let user = self.user.clone();
        let authorizer = authorizer.clone();
        let target = target.clone();
        let verb = verb.to_string();
        let run = async move {
            let d = match &target {
                Target::Resource {
                    group,
                    version,
                    resource,
                    subresource,
                    namespace,
                    name,
                } => {
                    let (sub, ns, n) = (opt(subresource), opt(namespace), opt(name));
                    let attrs =
                        crate::authz::Attributes::Resource(crate::authz::ResourceAttributes {
                            verb: &verb,
                            group,
                            version: if version.is_empty() { "*" } else { version },
                            resource,
                            subresource: sub.as_deref(),
                            namespace: ns.as_deref(),
                            name: n.as_deref(),
                            field_selector: None,
                        });
                    authorizer.decide(&user, &attrs).await
                }
                Target::Path(p) => {
                    let attrs = crate::authz::Attributes::NonResource {
                        path: p,
                        verb: verb.clone(),
                    };
                    authorizer.decide(&user, &attrs).await
                }
            };
            match d {
                crate::authz::Decision::Allow(r) => Decision::allowed(&r),
                crate::authz::Decision::Deny(r) => Decision {
                    kind: "deny",
                    reason: r,
                    error: None,
                },
                crate::authz::Decision::NoOpinion(r) => Decision {
                    kind: "noopinion",
                    reason: r,
                    error: None,
                },
            }
        };
        // Blocking on the runtime is only allowed outside of its worker threads (a
        // `spawn_blocking` thread); elsewhere it panics, which `Program::eval` turns into an
        // evaluation error.
        match rt.block_on(async { tokio::time::timeout(CHECK_TIMEOUT, run).await }) {
            Ok(d) => d,
            Err(_) => Decision::error("authorization check timed out"),
        }
    }
}

fn authorizer_value(authz: Arc<Authz>, request: Option<Check>) -> Value {
    let mut m: HashMap<Key, Value> = HashMap::new();
    m.insert(
        Key::String(Arc::new(STATE.to_string())),
        Value::Opaque(Arc::new(AuthorizerState(authz))),
    );
    if let Some(rr) = request {
        m.insert(
            Key::String(Arc::new("requestResource".to_string())),
            Value::Opaque(Arc::new(rr)),
        );
    }
    Value::Map(Map { map: Arc::new(m) })
}

struct AuthorizerState(Arc<Authz>);

impl std::fmt::Debug for AuthorizerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Authorizer({})", self.0.user.name)
    }
}
impl PartialEq for AuthorizerState {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}
impl Eq for AuthorizerState {}
impl Opaque for AuthorizerState {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.Authorizer"
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Resource {
        group: String,
        version: String,
        resource: String,
        subresource: String,
        namespace: String,
        name: String,
    },
    Path(String),
}

/// A `ResourceCheck` or `PathCheck` being built.
#[derive(Clone)]
struct Check {
    authz: Arc<Authz>,
    target: Target,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.target)
    }
}
impl PartialEq for Check {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.authz, &o.authz) && self.target == o.target
    }
}
impl Eq for Check {}
impl Opaque for Check {
    fn runtime_type_name(&self) -> &str {
        match self.target {
            Target::Resource { .. } => "kubernetes.authorization.ResourceCheck",
            Target::Path(_) => "kubernetes.authorization.PathCheck",
        }
    }
}

/// An authorization decision (kube's `kubernetes.authorization.Decision`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    kind: &'static str,
    reason: String,
    error: Option<String>,
}

impl Decision {
    fn allowed(reason: &str) -> Decision {
        Decision {
            kind: "allow",
            reason: reason.to_string(),
            error: None,
        }
    }
    fn error(e: &str) -> Decision {
        Decision {
            kind: "noopinion",
            reason: String::new(),
            error: Some(e.to_string()),
        }
    }
}

impl Opaque for Decision {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.Decision"
    }
}

fn err(f: &str, msg: &str) -> ExecutionError {
    ExecutionError::function_error(f, msg)
}

fn state_of(v: &Value) -> Option<Arc<Authz>> {
    let Value::Map(m) = v else { return None };
    let s = m.map.get(&Key::String(Arc::new(STATE.to_string())))?;
    match s {
        Value::Opaque(o) => o.downcast_ref::<AuthorizerState>().map(|a| a.0.clone()),
        _ => None,
    }
}

fn check_of(v: &Value) -> Option<&Check> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Check>(),
        _ => None,
    }
}

fn decision_of<'a>(v: &'a Value, f: &str) -> Result<&'a Decision, ExecutionError> {
    match v {
        Value::Opaque(o) => o
            .downcast_ref::<Decision>()
            .ok_or_else(|| err(f, "no such overload")),
        _ => Err(err(f, "no such overload")),
    }
}

fn string_arg(args: &[Value], i: usize, f: &str) -> Result<String, ExecutionError> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.to_string()),
        _ => Err(err(f, "no such overload")),
    }
}

/// A check of `this` (an authorizer or a check) with one of its fields set to `value`.
fn with_field(this: &Value, field: &str, value: String) -> ResolveResult {
    let mut check = if let Some(a) = state_of(this) {
        Check {
            authz: a,
            target: Target::Resource {
                group: String::new(),
                version: String::new(),
                resource: String::new(),
                subresource: String::new(),
                namespace: String::new(),
                name: String::new(),
            },
        }
    } else if let Some(c) = check_of(this) {
        c.clone()
    } else {
        return Err(err(field, "no such overload"));
    };
    match &mut check.target {
        Target::Resource {
            group,
            resource,
            subresource,
            namespace,
            name,
            ..
        } => match field {
            "group" => *group = value,
            "resource" => *resource = value,
            "subresource" => *subresource = value,
            "namespace" => *namespace = value,
            "name" => *name = value,
            _ => return Err(err(field, "no such overload")),
        },
        Target::Path(_) => return Err(err(field, "no such overload")),
    }
    Ok(Value::Opaque(Arc::new(check)))
}

fn field_fn(field: &'static str) -> impl Fn(This<Value>, Arguments) -> ResolveResult {
    move |This(this): This<Value>, Arguments(args): Arguments| {
        let v = string_arg(&args, 0, field)?;
        with_field(&this, field, v)
    }
}

fn path(This(this): This<Value>, Arguments(args): Arguments) -> ResolveResult {
    let p = string_arg(&args, 0, "path")?;
    let a = state_of(&this).ok_or_else(|| err("path", "no such overload"))?;
    Ok(Value::Opaque(Arc::new(Check {
        authz: a,
        target: Target::Path(p),
    })))
}

fn service_account(This(this): This<Value>, Arguments(args): Arguments) -> ResolveResult {
    let ns = string_arg(&args, 0, "serviceAccount")?;
    let name = string_arg(&args, 1, "serviceAccount")?;
    let a = state_of(&this).ok_or_else(|| err("serviceAccount", "no such overload"))?;
    let user = UserInfo {
        name: format!("system:serviceaccount:{ns}:{name}"),
        uid: String::new(),
        groups: vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{ns}"),
        ],
        extra: Default::default(),
    };
    let sa = Authz::new(a.authorizer.clone(), user, a.runtime.clone());
    Ok(authorizer_value(sa, None))
}

fn check(This(this): This<Value>, Arguments(args): Arguments) -> ResolveResult {
    let verb = string_arg(&args, 0, "check")?;
    let c = check_of(&this).ok_or_else(|| err("check", "no such overload"))?;
    Ok(Value::Opaque(Arc::new(c.authz.decide(&c.target, &verb))))
}

fn allowed(This(this): This<Value>) -> ResolveResult {
    Ok(Value::Bool(decision_of(&this, "allowed")?.kind == "allow"))
}

fn reason(This(this): This<Value>) -> ResolveResult {
    Ok(Value::String(Arc::new(
        decision_of(&this, "reason")?.reason.clone(),
    )))
}

fn errored(This(this): This<Value>) -> ResolveResult {
    Ok(Value::Bool(decision_of(&this, "errored")?.error.is_some()))
}

fn error(This(this): This<Value>) -> ResolveResult {
    Ok(Value::String(Arc::new(
        decision_of(&this, "error")?
            .error
            .clone()
            .unwrap_or_default(),
    )))
}

/// Registers the library's functions.
pub fn register(ctx: &mut Context<'_>) {
    for f in ["group", "resource", "subresource", "namespace", "name"] {
        ctx.add_function(f, field_fn(f));
    }
    ctx.add_function("path", path);
    ctx.add_function("serviceAccount", service_account);
    ctx.add_function("check", check);
    ctx.add_function("allowed", allowed);
    ctx.add_function("reason", reason);
    ctx.add_function("errored", errored);
    ctx.add_function("error", error);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::admission::{compile_expression, env, Declarations, Returns};

    #[test]
    fn builds_checks_and_decides_without_an_authorizer() {
        let d = Declarations {
            params: false,
            authorizer: true,
        };
        let e = env(d, None);
        let a = Authz::new(None, UserInfo::anonymous(), None);
        let rr = RequestResource {
            group: "apps".into(),
            version: "v1".into(),
            resource: "deployments".into(),
            ..Default::default()
        };
        let run = |src: &str| {
            compile_expression(src, Returns::Any, &e)
                .unwrap()
                .eval(vec![("authorizer", a.value(&rr))])
        };
        for src in [
            "authorizer.group('apps').resource('deployments').namespace('x').name('y').check('create').allowed()",
            "authorizer.path('/healthz').check('get').allowed()",
            "authorizer.requestResource.check('update').allowed()",
            "authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('get').allowed()",
            "!authorizer.group('').resource('pods').check('get').errored()",
            "authorizer.group('').resource('pods').check('get').reason() == ''",
            "authorizer.group('').resource('pods').check('get').error() == ''",
        ] {
            assert_eq!(run(src), Ok(Value::Bool(true)), "{src}");
        }
    }
}
