//! The ValidatingAdmissionPolicy plugin (validating phase): kube's `policy/validating`
//! dispatcher and validator over the policies and bindings this replica follows from its
//! watch cache ([`ValidatingAdmissionPolicy::start`]), compiled once per change, never read
//! from storage per request.
//!
//! For each policy with bindings (paired by `spec.policyName`) whose `matchConstraints` and
//! the binding's `matchResources` match the request: the params (`paramKind` + `paramRef`
//! by name or selector, read from the watch cache, `parameterNotFoundAction`), then per
//! param the `matchConditions`, the `variables` (evaluated when first used, in order), the
//! `validations` (with `message` / `messageExpression` / `reason`), routed by the binding's
//! `validationActions` (Deny: the request is refused with kube's message and code; Warn: a
//! `Warning` header; Audit: the `validation.policy.admission.k8s.io/validation_failure`
//! audit annotation), and the `auditAnnotations` (`<policy>/<key>`). Evaluation and
//! configuration errors follow the policy's `failurePolicy`. Costs are bounded per
//! expression ([`crate::cel::PER_CALL_LIMIT`]) and per evaluation
//! ([`crate::cel::RUNTIME_BUDGET`]), from the expressions' cost over the actual values.
//!
//! Expressions run on a blocking thread, where the authorizer library may block on the
//! runtime for its checks ([`crate::cel::authorizer`]).
//!
//! Metrics: `apiserver_validating_admission_policy_check_total` and
//! `apiserver_validating_admission_policy_check_duration_seconds` (labels `policy`,
//! `policy_binding`, `error_type`, `enforcement_action`), as kube observes them.
//!
//! Also here: the type checking that kube's controller writes to
//! `status.typeChecking` / `status.observedGeneration` ([`typecheck`]).
//!
//! Does not know: HTTP, how the write proceeds.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::Value as Cel;
use serde_json::{json, Value};

use super::matching::{Criteria, Matched, Versioned};
use super::{Attributes, Handle, Plugin};
use crate::cel::admission::{compile_expression, env, Declarations, Returns};
use crate::cel::{Program, Type};
use crate::meta::labels::Selector;
use crate::meta::status::Status;
use crate::registry::resource::Resource;
use crate::watch::follow::{self, Change};

const GROUP: &str = "admissionregistration.k8s.io";
const POLICIES: &str = "validatingadmissionpolicies";
const BINDINGS: &str = "validatingadmissionpolicybindings";
/// kube's `maxAuditAnnotationValueLength`.
const MAX_AUDIT_VALUE: usize = 10 * 1024;
/// kube's `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE: usize = 5 * 1024;
const BUDGET_TEXT: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// One compiled expression: the program or the compile error's detail.
struct Expr {
    source: String,
    program: Result<Program, String>,
    /// The policy's variables the expression names (`variables.<name>`).
    uses: Vec<String>,
}

impl Expr {
    fn compile(source: &str, returns: Returns, vars: &BTreeMap<String, Type>) -> Expr {
        Expr {
            source: source.to_string(),
            program: compile_expression(source, returns, vars),
            uses: variables_named(source),
        }
    }
}

/// The names `variables.<name>` in `src`.
fn variables_named(src: &str) -> Vec<String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\bvariables\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)").expect("regex")
    });
    let mut out: Vec<String> = re.captures_iter(src).map(|c| c[1].to_string()).collect();
    out.sort();
    out.dedup();
    out
}

struct Validation {
    expr: Expr,
    message: String,
    message_expression: Option<Expr>,
    reason: Option<String>,
}

/// A policy as compiled from its spec.
pub struct Policy {
    name: String,
    generation: i64,
    ignore: bool,
    param_kind: Option<(String, String)>,
    constraints: Result<Criteria, String>,
    match_conditions: Vec<(String, Expr)>,
    variables: Vec<(String, Expr)>,
    validations: Vec<Validation>,
    audit: Vec<(String, Expr)>,
    /// `status.observedGeneration` as followed.
    observed: Option<i64>,
}

/// A binding as followed.
pub struct Binding {
    name: String,
    policy: String,
    criteria: Option<Result<Criteria, String>>,
    param_ref: Option<Value>,
    actions: Vec<String>,
}

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Value, p: &str) -> &'a [Value] {
    v.pointer(p)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

impl Policy {
    /// Compiles `obj` (a v1 ValidatingAdmissionPolicy) as kube's validating compiler does.
    pub fn compile(obj: &Value) -> Policy {
        let params = obj.pointer("/spec/paramKind").is_some_and(Value::is_object);
        let with_authz = Declarations {
            params,
            authorizer: true,
        };
        let without_authz = Declarations {
            params,
            authorizer: false,
        };
        let declared = list(obj, "/spec/variables");
        let mut var_types: Vec<(String, Type)> = Vec::new();
        let mut variables = Vec::new();
        for v in declared {
            let name = s(v, "/name").to_string();
            let e = Expr::compile(
                s(v, "/expression"),
                Returns::Any,
                &env(with_authz, Some(&var_types)),
            );
            let ty = e.program.as_ref().map_or(Type::Dyn, |p| p.ty.clone());
            var_types.push((name.clone(), ty));
            variables.push((name, e));
        }
        let vt = (!declared.is_empty()).then_some(&var_types[..]);
        let env_authz = env(with_authz, vt);
        let env_plain = env(without_authz, vt);
        let match_conditions = list(obj, "/spec/matchConditions")
            .iter()
            .map(|m| {
                (
                    s(m, "/name").to_string(),
                    Expr::compile(s(m, "/expression"), Returns::Bool, &env_authz),
                )
            })
            .collect();
        let validations = list(obj, "/spec/validations")
            .iter()
            .map(|v| Validation {
                expr: Expr::compile(s(v, "/expression"), Returns::Bool, &env_authz),
                message: s(v, "/message").to_string(),
                message_expression: v
                    .get("messageExpression")
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .map(|m| Expr::compile(m, Returns::String, &env_plain)),
                reason: v.get("reason").and_then(Value::as_str).map(str::to_string),
            })
            .collect();
        let audit = list(obj, "/spec/auditAnnotations")
            .iter()
            .map(|a| {
                (
                    s(a, "/key").to_string(),
                    Expr::compile(s(a, "/valueExpression"), Returns::StringOrNull, &env_plain),
                )
            })
            .collect();
        let constraints = match obj.pointer("/spec/matchConstraints") {
            Some(m) if m.is_object() => Criteria::of_match_resources(m),
            _ => Err("matchConstraints is required".into()),
        };
        Policy {
            name: s(obj, "/metadata/name").to_string(),
            generation: obj
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0),
            ignore: s(obj, "/spec/failurePolicy") == "Ignore",
            param_kind: obj
                .pointer("/spec/paramKind")
                .filter(|p| p.is_object())
                .map(|p| (s(p, "/apiVersion").to_string(), s(p, "/kind").to_string())),
            constraints,
            match_conditions,
            variables,
            validations,
            audit,
            observed: obj
                .pointer("/status/observedGeneration")
                .and_then(Value::as_i64),
        }
    }
}

impl Binding {
    pub fn of(obj: &Value) -> Binding {
        Binding {
            name: s(obj, "/metadata/name").to_string(),
            policy: s(obj, "/spec/policyName").to_string(),
            criteria: obj
                .pointer("/spec/matchResources")
                .filter(|m| m.is_object())
                .map(Criteria::of_match_resources),
            param_ref: obj
                .pointer("/spec/paramRef")
                .filter(|p| p.is_object())
                .cloned(),
            actions: list(obj, "/spec/validationActions")
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        }
    }
}

#[derive(Default)]
pub struct State {
    policies: BTreeMap<String, Arc<Policy>>,
    bindings: BTreeMap<String, Arc<Binding>>,
    policies_synced: bool,
    bindings_synced: bool,
    /// Whether the followers were started (a chain never started knows no policies).
    started: bool,
}

/// The plugin.
#[derive(Default)]
pub struct ValidatingAdmissionPolicy {
    state: Arc<RwLock<State>>,
}

fn name_of(v: &Value) -> String {
    s(v, "/metadata/name").to_string()
}

/// kube's `IsExemptAdmissionConfigurationResource`: the configurations of dynamic admission
/// are never subject to it.
fn exempt(a: &Attributes) -> bool {
    a.resource.group == GROUP
        && matches!(
            a.resource.resource.as_str(),
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | POLICIES
                | BINDINGS
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

/// A denial, or an error to route by the failure policy.
struct Decision {
    deny: bool,
    /// An evaluation error (as opposed to a failed validation).
    error: bool,
    message: String,
    reason: Option<String>,
    elapsed: Duration,
    /// The validation's index (audit annotation `expressionIndex`).
    index: usize,
}

impl Decision {
    fn for_error(ignore: bool, message: String) -> Decision {
        Decision {
            deny: !ignore,
            error: true,
            message,
            reason: None,
            elapsed: Duration::ZERO,
            index: 0,
        }
    }

    /// kube's `ErrorType`.
    fn error_type(&self) -> &'static str {
        if !self.deny && !self.error {
            "no_error"
        } else if self.message.starts_with("compilation") {
            "compile_error"
        } else if self
            .message
            .starts_with("validation failed due to running out of cost budget")
        {
            "out_of_budget"
        } else {
            "invalid_error"
        }
    }
}

fn observe(policy: &str, binding: &str, d: &Decision, action: &'static str) {
    let labels = [
        ("policy", policy.to_string()),
        ("policy_binding", binding.to_string()),
        ("error_type", d.error_type().to_string()),
        ("enforcement_action", action.to_string()),
    ];
    metrics::counter!("apiserver_validating_admission_policy_check_total", &labels).increment(1);
    metrics::histogram!(
        "apiserver_validating_admission_policy_check_duration_seconds",
        &labels
    )
    .record(d.elapsed.as_secs_f64());
}

/// What one evaluation of a policy returned (kube's `ValidateResult`).
#[derive(Default)]
struct Outcome {
    decisions: Vec<Decision>,
    /// key → value to publish, or an error (a denial under Fail).
    audit: Vec<(String, Result<Option<String>, String>)>,
}

/// The inputs of one evaluation.
struct Inputs {
    object: Value,
    old_object: Value,
    params: Value,
    request: Value,
    namespace: Value,
    authz: Arc<crate::cel::authorizer::Authz>,
    request_resource: crate::cel::authorizer::RequestResource,
}

/// The CEL values and the refined types (for costs) of the inputs.
struct Activation<'a> {
    policy: &'a Policy,
    values: Vec<(&'static str, Cel)>,
    types: BTreeMap<String, Type>,
    /// Each variable's value once evaluated (or its error).
    variables: Vec<Option<Result<Cel, String>>>,
    /// The cost of variables evaluated since last charged.
    pending_cost: f64,
}

/// A type for `v` with every size it actually has, for the cost of expressions over `dyn`
/// inputs: objects as objects of their fields, lists and strings with their lengths.
fn shape(v: &Value) -> Type {
    match v {
        Value::Object(m) => Type::Object(Arc::new(crate::cel::types::Object {
            name: "object".into(),
            fields: m
                .iter()
                .filter_map(|(k, x)| Some((crate::cel::types::escape(k)?, shape(x))))
                .collect(),
            min_size: 2,
            max: Some(m.len() as u64),
        })),
        Value::Array(a) => Type::List {
            elem: Box::new(
                a.iter()
                    .map(shape)
                    .reduce(|x, y| merge(&x, &y))
                    .unwrap_or(Type::Dyn),
            ),
            max: a.len() as u64,
        },
        Value::String(s) => Type::String {
            max: s.chars().count() as u64,
        },
        Value::Bool(_) => Type::Bool,
        Value::Number(n) if n.is_f64() => Type::Double,
        Value::Number(_) => Type::Int,
        Value::Null => Type::Dyn,
    }
}

fn merge(a: &Type, b: &Type) -> Type {
    match (a, b) {
        (Type::Object(x), Type::Object(y)) => {
            let mut fields = x.fields.clone();
            for (k, t) in &y.fields {
                let m = match fields.get(k) {
                    Some(e) => merge(e, t),
                    None => t.clone(),
                };
                fields.insert(k.clone(), m);
            }
            Type::Object(Arc::new(crate::cel::types::Object {
                name: "object".into(),
                max: Some(fields.len() as u64),
                fields,
                min_size: 2,
            }))
        }
        (Type::List { elem: e1, max: m1 }, Type::List { elem: e2, max: m2 }) => Type::List {
            elem: Box::new(merge(e1, e2)),
            max: (*m1).max(*m2),
        },
        (Type::String { max: m1 }, Type::String { max: m2 }) => Type::String {
            max: (*m1).max(*m2),
        },
        (x, y) if x.assignable(y) => x.clone(),
        _ => Type::Dyn,
    }
}

fn cel_json(v: &Value) -> Cel {
    crate::cel::eval::to_value(v, &Type::Dyn)
}

impl<'a> Activation<'a> {
    fn new(policy: &'a Policy, i: &Inputs) -> Activation<'a> {
        let base = env(
            Declarations {
                params: true,
                authorizer: true,
            },
            None,
        );
        let request_t = base["request"].clone();
        let namespace_t = base["namespaceObject"].clone();
        let values = vec![
            ("object", cel_json(&i.object)),
            ("oldObject", cel_json(&i.old_object)),
            ("params", cel_json(&i.params)),
            // Under their own names: the request's `namespace` is a CEL reserved word
            // that kube's declared type still selects as is.
            ("request", cel_json(&i.request)),
            ("namespaceObject", cel_json(&i.namespace)),
            ("authorizer", i.authz.value(&i.request_resource)),
        ];
        let mut types = BTreeMap::new();
        types.insert("object".into(), shape(&i.object));
        types.insert("oldObject".into(), shape(&i.old_object));
        types.insert("params".into(), shape(&i.params));
        types.insert(
            "request".into(),
            crate::cel::eval::refine(&request_t, &i.request),
        );
        types.insert(
            "namespaceObject".into(),
            crate::cel::eval::refine(&namespace_t, &i.namespace),
        );
        types.insert("authorizer".into(), base["authorizer"].clone());
        if !policy.variables.is_empty() {
            let vars: Vec<(String, Type)> = policy
                .variables
                .iter()
                .map(|(n, e)| {
                    (
                        n.clone(),
                        e.program.as_ref().map_or(Type::Dyn, |p| p.ty.clone()),
                    )
                })
                .collect();
            if let Some(t) = env(Declarations::default(), Some(&vars)).remove("variables") {
                types.insert("variables".into(), t);
            }
        }
        Activation {
            policy,
            values,
            types,
            variables: (0..policy.variables.len()).map(|_| None).collect(),
            pending_cost: 0.0,
        }
    }

    /// Evaluates variable `idx` (and the earlier ones it uses) once.
    fn variable(&mut self, idx: usize) -> Result<Cel, String> {
        if let Some(r) = &self.variables[idx] {
            return r.clone();
        }
        let (name, e) = &self.policy.variables[idx];
        let name = name.clone();
        let r = match self.run(e) {
            Ok((v, cost)) => {
                self.pending_cost += cost;
                Ok(v)
            }
            Err(Run::Failed(msg)) => Err(msg),
        };
        let r = r.map_err(|e| format!("composited variable \"{name}\" fails to evaluate: {e}"));
        self.variables[idx] = Some(r.clone());
        r
    }

    /// Runs `e`: its value and cost, or the error text kube gives it
    /// (`expression '<src>' resulted in error: ...`).
    fn run(&mut self, e: &Expr) -> Result<(Cel, f64), Run> {
        let p = match &e.program {
            Ok(p) => p,
            Err(detail) => return Err(Run::Failed(format!("compilation error: {detail}"))),
        };
        let fail = |msg: String| {
            Run::Failed(format!(
                "expression '{}' resulted in error: {msg}",
                e.source
            ))
        };
        let mut vars = self.values.clone();
        if p.uses("variables") {
            let mut m = std::collections::HashMap::new();
            for name in &e.uses {
                let Some(idx) = self.policy.variables.iter().position(|(n, _)| n == name) else {
                    continue;
                };
                match self.variable(idx) {
                    Ok(v) => {
                        m.insert(Key::String(Arc::new(name.clone())), v);
                    }
                    Err(msg) => return Err(fail(msg)),
                }
            }
            vars.push(("variables", Cel::Map(Map { map: Arc::new(m) })));
        }
        let cost = p.runtime_cost(&self.types);
        if cost > crate::cel::PER_CALL_LIMIT {
            return Err(fail(
                "operation cancelled: actual cost limit exceeded".into(),
            ));
        }
        match p.eval(vars) {
            Ok(v) => Ok((v, cost)),
            Err(msg) => Err(fail(msg)),
        }
    }
}

enum Run {
    Failed(String),
}

/// A budget shared by a list of expressions.
struct Budget(f64);

impl Budget {
    fn charge(&mut self, a: &mut Activation<'_>, cost: f64) -> bool {
        let c = cost + std::mem::take(&mut a.pending_cost);
        if c > self.0 {
            return false;
        }
        self.0 -= c;
        true
    }
}

fn message_of(v: &Cel) -> String {
    match v {
        Cel::String(s) => {
            let m = s.trim();
            if m.len() > MAX_MESSAGE || m.contains('\n') {
                String::new()
            } else {
                m.to_string()
            }
        }
        _ => String::new(),
    }
}

/// kube's `validator.Validate` for one binding and param.
fn validate(p: &Policy, i: &Inputs) -> Outcome {
    let mut a = Activation::new(p, i);
    // matchConditions
    if !p.match_conditions.is_empty() {
        let mut budget = Budget(crate::cel::RUNTIME_BUDGET);
        let mut errors = Vec::new();
        for (_, e) in &p.match_conditions {
            match a.run(e) {
                Ok((v, cost)) => {
                    if !budget.charge(&mut a, cost) {
                        errors.push(BUDGET_TEXT.to_string());
                        break;
                    }
                    if v == Cel::Bool(false) {
                        return Outcome::default();
                    }
                }
                Err(Run::Failed(m)) => errors.push(m),
            }
        }
        if !errors.is_empty() {
            if p.ignore {
                return Outcome::default();
            }
            let message = if errors.len() == 1 {
                errors.remove(0)
            } else {
                format!("[{}]", errors.join(", "))
            };
            return Outcome {
                decisions: vec![Decision::for_error(false, message)],
                audit: Vec::new(),
            };
        }
    }
    let mut out = Outcome::default();
    let mut budget = Budget(crate::cel::RUNTIME_BUDGET);
    let mut results = Vec::new();
    for v in &p.validations {
        let t = Instant::now();
        let r = match a.run(&v.expr) {
            Ok((val, cost)) => {
                if !budget.charge(&mut a, cost) {
                    return Outcome {
                        decisions: vec![Decision::for_error(p.ignore, BUDGET_TEXT.into())],
                        audit: Vec::new(),
                    };
                }
                Ok(val)
            }
            Err(Run::Failed(m)) => Err(m),
        };
        results.push((r, t.elapsed()));
    }
    for (idx, (v, (r, elapsed))) in p.validations.iter().zip(results).enumerate() {
        let mut d = match r {
            Err(m) => Decision::for_error(p.ignore, m),
            Ok(Cel::Bool(true)) => Decision {
                deny: false,
                error: false,
                message: String::new(),
                reason: None,
                elapsed,
                index: idx,
            },
            Ok(_) => {
                let mut message = String::new();
                if let Some(me) = &v.message_expression {
                    if let Ok((val, cost)) = a.run(me) {
                        if budget.charge(&mut a, cost) {
                            message = message_of(&val);
                        }
                    }
                }
                if message.is_empty() && !v.message.is_empty() {
                    message = v.message.trim().to_string();
                }
                if message.is_empty() {
                    message = format!("failed expression: {}", v.expr.source.trim());
                }
                Decision {
                    deny: true,
                    error: false,
                    message,
                    reason: Some(v.reason.clone().unwrap_or_else(|| "Invalid".into())),
                    elapsed,
                    index: idx,
                }
            }
        };
        d.elapsed = elapsed;
        d.index = idx;
        out.decisions.push(d);
    }
    let mut budget = Budget(crate::cel::RUNTIME_BUDGET);
    for (key, e) in &p.audit {
        let r = match a.run(e) {
            Ok((val, cost)) => {
                if !budget.charge(&mut a, cost) {
                    return Outcome {
                        decisions: vec![Decision::for_error(p.ignore, BUDGET_TEXT.into())],
                        audit: Vec::new(),
                    };
                }
                match val {
                    Cel::String(s) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
                    Cel::String(_) | Cel::Null => Ok(None),
                    other => Err(format!(
                        "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                        e.source,
                        cel_type_name(&other)
                    )),
                }
            }
            Err(Run::Failed(m)) => Err(m),
        };
        match r {
            // Ignore: an erroring annotation is left out.
            Err(_) if p.ignore => {}
            r => out.audit.push((key.clone(), r)),
        }
    }
    out
}

fn cel_type_name(v: &Cel) -> &'static str {
    match v {
        Cel::Int(_) => "int",
        Cel::UInt(_) => "uint",
        Cel::Float(_) => "double",
        Cel::Bool(_) => "bool",
        Cel::Bytes(_) => "bytes",
        Cel::List(_) => "list",
        Cel::Map(_) => "map",
        Cel::Timestamp(_) => "google.protobuf.Timestamp",
        Cel::Duration(_) => "google.protobuf.Duration",
        _ => "dyn",
    }
}

/// kube's `reasonToCode`.
fn reason_code(r: &str) -> u16 {
    match r {
        "Forbidden" => 403,
        "Invalid" => 422,
        "RequestEntityTooLarge" => 413,
        _ => 500,
    }
}

/// A request's admission request as CEL's `request` sees it (kube's
/// `CreateAdmissionRequest`, with the matched resource and kind).
fn admission_request(a: &Attributes, m: &Resource) -> Value {
    json!({
        "kind": {"group": m.group, "version": m.version, "kind": m.kind},
        "resource": {"group": m.group, "version": m.version, "resource": m.resource},
        "subResource": a.subresource,
        "requestKind": {"group": a.resource.group, "version": a.resource.version, "kind": a.resource.kind},
        "requestResource": {"group": a.resource.group, "version": a.resource.version, "resource": a.resource.resource},
        "requestSubResource": a.subresource,
        "name": a.name,
        "namespace": a.namespace,
        "operation": a.operation.as_str(),
        "userInfo": {
            "username": a.user.name,
            "uid": a.user.uid,
            "groups": a.user.groups,
            "extra": a.user.extra,
        },
        "dryRun": a.dry_run,
        "options": a.options,
    })
}

/// kube's `CreateNamespaceObject`: the namespace's spec, status and most of its metadata.
fn namespace_object(ns: &Value) -> Value {
    let mut meta = serde_json::Map::new();
    if let Some(m) = ns.get("metadata").and_then(Value::as_object) {
        for k in [
            "name",
            "generateName",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "labels",
            "annotations",
            "finalizers",
        ] {
            if let Some(v) = m.get(k) {
                meta.insert(k.into(), v.clone());
            }
        }
    }
    json!({
        "metadata": meta,
        "spec": ns.get("spec").cloned().unwrap_or(json!({})),
        "status": ns.get("status").cloned().unwrap_or(json!({})),
    })
}

/// The object as the matched version serves it, with its type meta.
fn typed(obj: Option<Value>, m: &Resource) -> Value {
    match obj {
        Some(Value::Object(mut o)) => {
            let api_version = if m.group.is_empty() {
                m.version.clone()
            } else {
                format!("{}/{}", m.group, m.version)
            };
            o.insert("apiVersion".into(), json!(api_version));
            o.insert("kind".into(), json!(m.kind));
            Value::Object(o)
        }
        Some(other) => other,
        None => Value::Null,
    }
}

/// The resource serving `apiVersion` / `kind`.
fn param_resource(h: &Handle, api_version: &str, kind: &str) -> Option<Arc<Resource>> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let cat = h.store.registry().snapshot();
    cat.all()
        .iter()
        .find(|r| r.group == group && r.version == version && r.kind == kind)
        .cloned()
}

/// kube's `CollectParams`: the params to evaluate a binding with (`[Null]` without
/// paramKind or paramRef).
async fn collect_params(
    h: &Handle,
    info: Option<&Arc<Resource>>,
    kind: &(String, String),
    param_ref: Option<&Value>,
    namespace: &str,
) -> Result<Vec<Value>, String> {
    let Some(pr) = param_ref else {
        return Ok(vec![Value::Null]);
    };
    let Some(info) = info else {
        return Err(format!(
            "paramKind kind `{}` not known",
            param_kind_text(kind)
        ));
    };
    let pr_ns = s(pr, "/namespace");
    let ns = if info.namespaced {
        if !pr_ns.is_empty() {
            Some(pr_ns.to_string())
        } else if !namespace.is_empty() {
            Some(namespace.to_string())
        } else {
            return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into());
        }
    } else {
        if !pr_ns.is_empty() {
            return Err(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
            );
        }
        None
    };
    let name = s(pr, "/name");
    let selector = pr.get("selector").filter(|v| !v.is_null());
    let found: Vec<Value> = if !name.is_empty() {
        if selector.is_some() {
            return Err("paramRef.name and paramRef.selector are mutually exclusive".into());
        }
        h.get(
            &info.group,
            &info.version,
            &info.resource,
            ns.as_deref(),
            name,
        )
        .await
        .into_iter()
        .collect()
    } else if let Some(sel) = selector {
        let sel = Selector::from_label_selector(sel)?;
        h.list(&info.group, &info.version, &info.resource, ns.as_deref())
            .await
            .into_iter()
            .filter(|o| sel.matches_object(o))
            .collect()
    } else {
        return Err("one of name or selector must be provided".into());
    };
    if found.is_empty() && s(pr, "/parameterNotFoundAction") == "Deny" {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    let mut out = Vec::new();
    for o in found {
        let v = super::matching::to_version(info, &o).map_err(|e| e.message)?;
        out.push(typed(Some(v), info));
    }
    Ok(out)
}

/// A paramKind as kube prints a `GroupVersionKind` (`/v1, Kind=ConfigMap`).
fn param_kind_text((api_version, kind): &(String, String)) -> String {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

/// kube's routing of one evaluation's decisions by the binding's `validationActions`: a
/// denial to `denied`, a warning, the validation failure audit annotation; the audit
/// annotations' values gathered into `audit` (published per policy by [`publish`]).
fn route(
    p: &Policy,
    b: &Binding,
    outcome: Outcome,
    warnings: &super::Warnings,
    annotations: &super::AuditAnnotations,
    audit: &mut BTreeMap<String, Vec<String>>,
    denied: &mut Vec<Denied>,
) {
    for d in &outcome.decisions {
        if !d.deny {
            if d.error {
                observe(&p.name, &b.name, d, "allow");
            }
            continue;
        }
        for action in &b.actions {
            match action.as_str() {
                "Deny" => {
                    denied.push(Denied {
                        policy: p.name.clone(),
                        binding: Some(b.name.clone()),
                        message: d.message.clone(),
                        reason: d.reason.clone(),
                    });
                    observe(&p.name, &b.name, d, "deny");
                }
                "Audit" => {
                    let value = json!([{
                        "message": d.message,
                        "policy": p.name,
                        "binding": b.name,
                        "expressionIndex": d.index,
                        "validationActions": b.actions,
                    }]);
                    if let Err(e) = annotations.add(
                        "validation.policy.admission.k8s.io/validation_failure",
                        value.to_string(),
                    ) {
                        tracing::warn!("audit annotation for policy {}: {e}", p.name);
                    }
                    observe(&p.name, &b.name, d, "audit");
                }
                "Warn" => {
                    warnings.add(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                        p.name, b.name, d.message
                    ));
                    observe(&p.name, &b.name, d, "warn");
                }
                _ => {}
            }
        }
    }
    for (key, r) in outcome.audit {
        match r {
            Ok(Some(mut v)) => {
                if v.len() > MAX_AUDIT_VALUE {
                    let mut end = MAX_AUDIT_VALUE;
                    while !v.is_char_boundary(end) {
                        end -= 1;
                    }
                    v.truncate(end);
                }
                let vs = audit.entry(key).or_default();
                if !vs.contains(&v) {
                    vs.push(v);
                }
            }
            Ok(None) => {}
            Err(message) => {
                let d = Decision::for_error(false, message);
                observe(&p.name, &b.name, &d, "deny");
                denied.push(Denied {
                    policy: p.name.clone(),
                    binding: Some(b.name.clone()),
                    message: d.message,
                    reason: None,
                });
            }
        }
    }
}

/// Publishes a policy's audit annotations as `<policy>/<key>` (the values of several
/// bindings or params joined by `, `).
fn publish(
    policy: &str,
    audit: BTreeMap<String, Vec<String>>,
    annotations: &super::AuditAnnotations,
) {
    for (key, values) in audit {
        if let Err(e) = annotations.add(format!("{policy}/{key}"), values.join(", ")) {
            tracing::warn!("audit annotation for policy {policy}: {e}");
        }
    }
}

struct Denied {
    policy: String,
    binding: Option<String>,
    message: String,
    reason: Option<String>,
}

impl ValidatingAdmissionPolicy {
    pub fn new() -> ValidatingAdmissionPolicy {
        ValidatingAdmissionPolicy::default()
    }

    fn synced(&self) -> bool {
        self.state
            .read()
            .map(|s| !s.started || s.policies_synced && s.bindings_synced)
            .unwrap_or(false)
    }

    /// The policies with their bindings, by policy name then binding name.
    fn hooks(&self) -> Vec<(Arc<Policy>, Vec<Arc<Binding>>)> {
        let Ok(st) = self.state.read() else {
            return Vec::new();
        };
        let mut by_policy: BTreeMap<&str, Vec<Arc<Binding>>> = BTreeMap::new();
        for b in st.bindings.values() {
            by_policy.entry(&b.policy).or_default().push(b.clone());
        }
        by_policy
            .into_iter()
            .filter_map(|(p, bs)| Some((st.policies.get(p)?.clone(), bs)))
            .collect()
    }

    async fn dispatch(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        let mut denied: Vec<Denied> = Vec::new();
        let config_error =
            |denied: &mut Vec<Denied>, p: &Policy, binding: Option<&str>, err: String| {
                if p.ignore {
                    return;
                }
                let message = match binding {
                    None => format!("failed to configure policy: {err}"),
                    Some(_) => format!("failed to configure binding: {err}"),
                };
                denied.push(Denied {
                    policy: p.name.clone(),
                    binding: binding.map(str::to_string),
                    message,
                    reason: None,
                });
            };
        for (p, bindings) in self.hooks() {
            let matched: Matched = match &p.constraints {
                Err(e) => {
                    config_error(&mut denied, &p, None, e.clone());
                    continue;
                }
                Ok(c) => match c.matches(a, h).await {
                    Ok(Some(m)) => m,
                    Ok(None) => continue,
                    Err(e) => {
                        config_error(&mut denied, &p, None, e.message);
                        continue;
                    }
                },
            };
            let param_info = match &p.param_kind {
                None => None,
                Some(k) => match param_resource(h, &k.0, &k.1) {
                    Some(r) => Some(r),
                    None => {
                        config_error(
                            &mut denied,
                            &p,
                            None,
                            format!(
                                "failed to find resource referenced by paramKind: '{}'",
                                param_kind_text(k)
                            ),
                        );
                        continue;
                    }
                },
            };
            let versioned = match Versioned::of(a, &matched.resource) {
                Ok(v) => v,
                Err(e) => {
                    config_error(
                        &mut denied,
                        &p,
                        None,
                        format!("failed to convert object version: {}", e.message),
                    );
                    continue;
                }
            };
            let mut audit: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for b in &bindings {
                match &b.criteria {
                    None => {}
                    Some(Err(e)) => {
                        config_error(&mut denied, &p, Some(&b.name), e.clone());
                        continue;
                    }
                    Some(Ok(c)) => match c.matches(a, h).await {
                        Ok(Some(_)) => {}
                        Ok(None) => continue,
                        Err(e) => {
                            config_error(&mut denied, &p, Some(&b.name), e.message);
                            continue;
                        }
                    },
                }
                let params = match &p.param_kind {
                    None => vec![Value::Null],
                    Some(k) => {
                        match collect_params(
                            h,
                            param_info.as_ref(),
                            k,
                            b.param_ref.as_ref(),
                            &a.namespace,
                        )
                        .await
                        {
                            Ok(ps) => ps,
                            Err(e) => {
                                config_error(&mut denied, &p, Some(&b.name), e);
                                continue;
                            }
                        }
                    }
                };
                if params.is_empty() {
                    continue;
                }
                // The namespace object (none for cluster-scoped requests and Namespaces).
                let is_namespace = a.resource.group.is_empty() && a.resource.kind == "Namespace";
                let namespace = if !a.namespace.is_empty() && !is_namespace {
                    match h.get("", "v1", "namespaces", None, &a.namespace).await {
                        Some(ns) => namespace_object(&ns),
                        None => {
                            return Err(Status::not_found(
                                crate::meta::status::GroupResource {
                                    group: "",
                                    resource: "namespaces",
                                },
                                &a.namespace,
                            ))
                        }
                    }
                } else {
                    Value::Null
                };
                let request = admission_request(a, &matched.resource);
                let authz = crate::cel::authorizer::Authz::new(
                    h.authz.clone(),
                    a.user.clone(),
                    tokio::runtime::Handle::try_current().ok(),
                );
                let rr = crate::cel::authorizer::RequestResource {
                    group: a.resource.group.clone(),
                    version: a.resource.version.clone(),
                    resource: a.resource.resource.clone(),
                    subresource: a.subresource.clone(),
                    namespace: a.namespace.clone(),
                    name: a.name.clone(),
                };
                let inputs: Vec<Inputs> = params
                    .into_iter()
                    .map(|param| Inputs {
                        object: typed(versioned.object.clone(), &matched.resource),
                        old_object: typed(versioned.old_object.clone(), &matched.resource),
                        params: param,
                        request: request.clone(),
                        namespace: namespace.clone(),
                        authz: authz.clone(),
                        request_resource: rr.clone(),
                    })
                    .collect();
                let policy = p.clone();
                let outcomes = tokio::task::spawn_blocking(move || {
                    inputs
                        .iter()
                        .map(|i| validate(&policy, i))
                        .collect::<Vec<_>>()
                })
                .await
                .map_err(|e| Status::internal(format!("evaluating policy {}: {e}", p.name)))?;
                for outcome in outcomes {
                    route(
                        &p,
                        b,
                        outcome,
                        &h.warnings,
                        &h.audit,
                        &mut audit,
                        &mut denied,
                    );
                }
            }
            publish(&p.name, audit, &h.audit);
        }
        let Some(first) = denied.first() else {
            return Ok(());
        };
        let message = match &first.binding {
            Some(b) => format!(
                "ValidatingAdmissionPolicy '{}' with binding '{b}' denied request: {}",
                first.policy, first.message
            ),
            None => format!(
                "ValidatingAdmissionPolicy '{}' denied request: {}",
                first.policy, first.message
            ),
        };
        let mut st = a.forbidden(&message);
        let reason = first.reason.clone().unwrap_or_else(|| "Invalid".into());
        st.code = reason_code(&reason);
        st.reason = reason.into();
        let d = st.details.get_or_insert_with(|| json!({}));
        if let Some(o) = d.as_object_mut() {
            o.insert("causes".into(), json!([{ "message": message }]));
        }
        Err(st)
    }
}

#[async_trait::async_trait]
impl Plugin for ValidatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    fn start(&self, cache: &crate::watch::Cache) -> Vec<tokio::task::JoinHandle<()>> {
        let catalog = cache.registry().snapshot();
        let find = |r: &str| {
            catalog
                .resolve(GROUP, r)
                .filter(|i| i.resource == r)
                .cloned()
        };
        let mut tasks = Vec::new();
        if let Ok(mut st) = self.state.write() {
            st.started = true;
            // A resource this server does not serve has nothing to wait for.
            st.policies_synced = find(POLICIES).is_none();
            st.bindings_synced = find(BINDINGS).is_none();
        }
        if let Some(info) = find(POLICIES) {
            let state = self.state.clone();
            tasks.push(follow::spawn(cache.clone(), info, move |c| {
                let Ok(mut st) = state.write() else { return };
                match c {
                    Change::Replace(all) => {
                        st.policies = all
                            .iter()
                            .map(|o| {
                                let o = &o.value();
                                (name_of(o), Arc::new(Policy::compile(o)))
                            })
                            .collect();
                        st.policies_synced = true;
                    }
                    Change::Upsert { prev, cur } => {
                        // A status-only change keeps the compiled expressions.
                        let same_spec = prev.is_some_and(|p| p.get("spec") == cur.get("spec"));
                        let name = name_of(cur);
                        let observed = cur
                            .pointer("/status/observedGeneration")
                            .and_then(Value::as_i64);
                        match st.policies.get(&name) {
                            Some(old) if same_spec && old.observed == observed => {}
                            _ => {
                                st.policies.insert(name, Arc::new(Policy::compile(cur)));
                            }
                        }
                    }
                    Change::Delete { prev } => {
                        st.policies.remove(&name_of(prev));
                    }
                }
            }));
        }
        if let Some(info) = find(POLICIES) {
            tasks.push(tokio::spawn(typecheck::run(
                self.state.clone(),
                cache.store().clone(),
                info,
            )));
        }
        if let Some(info) = find(BINDINGS) {
            let state = self.state.clone();
            tasks.push(follow::spawn(cache.clone(), info, move |c| {
                let Ok(mut st) = state.write() else { return };
                match c {
                    Change::Replace(all) => {
                        st.bindings = all
                            .iter()
                            .map(|o| {
                                let o = &o.value();
                                (name_of(o), Arc::new(Binding::of(o)))
                            })
                            .collect();
                        st.bindings_synced = true;
                    }
                    Change::Upsert { cur, .. } => {
                        st.bindings.insert(name_of(cur), Arc::new(Binding::of(cur)));
                    }
                    Change::Delete { prev } => {
                        st.bindings.remove(&name_of(prev));
                    }
                }
            }));
        }
        tasks
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if exempt(a) {
            return Ok(());
        }
        if !self.synced() {
            let until = Instant::now() + Duration::from_secs(1);
            while !self.synced() && Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if !self.synced() {
                return Err(a.forbidden("not yet ready to handle request"));
            }
        }
        self.dispatch(a, h).await
    }
}

/// kube's type checking of policies (`validatingadmissionpolicy-status-controller`): each
/// validation's `expression` and `messageExpression` compiled with `object` / `oldObject`
/// typed as each kind the policy's `matchConstraints` name (at most 10, no wildcards) and
/// `params` as the `paramKind`, from the built-in OpenAPI schemas or a custom resource's
/// schema; the issues become `status.typeChecking.expressionWarnings`, written with
/// `status.observedGeneration` for each generation by the leader.
pub mod typecheck {
    use super::*;
    use crate::registry::Catalog;

    /// kube's `maxTypesToCheck`.
    const MAX_TYPES: usize = 10;

    /// The CEL type of `group/version/kind` (`resource` its plural), when its schema is known.
    fn kind_type(cat: &Catalog, group: &str, version: &str, kind: &str) -> Option<Type> {
        let r = cat
            .all()
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)?;
        let schema = match &r.schema {
            Some(s) => (**s).clone(),
            None => crate::openapi::resolved_schema(group, version, kind)?,
        };
        crate::cel::types::of_schema(&schema, true)
    }

    fn gvk_text(g: &str, v: &str, k: &str) -> String {
        format!("{g}/{v}, Kind={k}")
    }

    /// kube's `typesToCheck`: the kinds named by the resource rules, sorted.
    fn types_to_check(p: &Value, cat: &Catalog) -> Vec<(String, String, String)> {
        let mut out: BTreeSet<(String, String, String)> = BTreeSet::new();
        let strs = |v: &Value, k: &str| -> Vec<String> {
            let mut x: Vec<String> = list(v, k)
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            x.sort();
            x
        };
        let mut count = 0;
        for rule in list(p, "/spec/matchConstraints/resourceRules") {
            let groups = strs(rule, "/apiGroups");
            let versions = strs(rule, "/apiVersions");
            if groups.iter().chain(&versions).any(|x| x.contains('*')) {
                continue;
            }
            let resources: Vec<String> = strs(rule, "/resources")
                .into_iter()
                .filter(|r| !r.contains('*') && !r.contains('/'))
                .collect();
            for g in &groups {
                for v in &versions {
                    for r in &resources {
                        if let Some(info) = cat.get(g, v, r) {
                            out.insert((g.clone(), v.clone(), info.kind.clone()));
                            count += 1;
                            if count == MAX_TYPES {
                                return out.into_iter().collect();
                            }
                        }
                    }
                }
            }
        }
        out.into_iter().collect()
    }

    /// The expression warnings of policy `p` (kube's `TypeChecker.Check`).
    pub fn warnings(p: &Value, cat: &Catalog) -> Vec<Value> {
        let kinds: Vec<((String, String, String), Type)> = types_to_check(p, cat)
            .into_iter()
            .filter_map(|k| {
                let t = kind_type(cat, &k.0, &k.1, &k.2)?;
                Some((k, t))
            })
            .collect();
        if kinds.is_empty() {
            return Vec::new();
        }
        let params = p
            .pointer("/spec/paramKind")
            .filter(|v| v.is_object())
            .and_then(|pk| {
                let (g, v) = s(pk, "/apiVersion")
                    .split_once('/')
                    .unwrap_or(("", s(pk, "/apiVersion")));
                kind_type(cat, g, v, s(pk, "/kind"))
            });
        let declared = list(p, "/spec/variables");
        // Per kind: the environment with the policy's variables typed in it.
        let envs: Vec<(String, BTreeMap<String, Type>)> = kinds
            .iter()
            .map(|((g, v, k), t)| {
                let d = Declarations {
                    params: params.is_some(),
                    authorizer: true,
                };
                let mut vars: Vec<(String, Type)> = Vec::new();
                let typed = |vars: Option<&[(String, Type)]>| {
                    let mut e = env(d, vars);
                    e.insert("object".into(), t.clone());
                    e.insert("oldObject".into(), t.clone());
                    if let Some(pt) = &params {
                        e.insert("params".into(), pt.clone());
                    }
                    e
                };
                for var in declared {
                    let e = typed(Some(&vars));
                    let ty = crate::cel::compile(s(var, "/expression"), &e)
                        .map_or(Type::Dyn, |prog| prog.ty);
                    vars.push((s(var, "/name").to_string(), ty));
                }
                let e = typed((!declared.is_empty()).then_some(&vars[..]));
                (gvk_text(g, v, k), e)
            })
            .collect();
        let check = |src: &str| -> Option<String> {
            let issues: Vec<String> = envs
                .iter()
                .filter_map(|(gvk, e)| {
                    crate::cel::compile(src, e)
                        .err()
                        .map(|i| format!("{gvk}: {i}\n"))
                })
                .collect();
            (!issues.is_empty()).then(|| issues.join("\n"))
        };
        let mut out = Vec::new();
        for (i, v) in list(p, "/spec/validations").iter().enumerate() {
            if let Some(w) = check(s(v, "/expression")) {
                out.push(
                    json!({"fieldRef": format!("spec.validations[{i}].expression"), "warning": w}),
                );
            }
            let me = s(v, "/messageExpression");
            if me.is_empty() {
                continue;
            }
            if let Some(w) = check(me) {
                out.push(json!({"fieldRef": format!("spec.validations[{i}].messageExpression"), "warning": w}));
            }
        }
        out
    }

    /// The status to write for `p`'s generation.
    pub fn status(p: &Value, cat: &Catalog) -> Value {
        let warnings = warnings(p, cat);
        let mut st = p.get("status").cloned().unwrap_or(json!({}));
        if !st.is_object() {
            st = json!({});
        }
        st["observedGeneration"] = p
            .pointer("/metadata/generation")
            .cloned()
            .unwrap_or(json!(0));
        st["typeChecking"] = if warnings.is_empty() {
            json!({})
        } else {
            json!({ "expressionWarnings": warnings })
        };
        st
    }

    /// Whether `p`'s status is current.
    pub fn current(p: &Value) -> bool {
        p.pointer("/status/observedGeneration")
            .and_then(Value::as_i64)
            == p.pointer("/metadata/generation").and_then(Value::as_i64)
    }

    /// The names of the variables in `src`, for tests.
    pub fn named(src: &str) -> Vec<String> {
        variables_named(src)
    }

    /// While this replica leads, writes the status of every followed policy whose
    /// `observedGeneration` is behind (a failed write is tried again after a few seconds).
    pub async fn run(
        plugin: Arc<RwLock<State>>,
        store: crate::registry::store::Store,
        info: Arc<Resource>,
    ) {
        let mut tried: BTreeMap<(String, i64), Instant> = BTreeMap::new();
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if !store.kv().is_leader() {
                continue;
            }
            let todo: Vec<(String, i64)> = plugin
                .read()
                .map(|s| {
                    s.policies
                        .values()
                        .filter(|p| p.observed != Some(p.generation))
                        .map(|p| (p.name.clone(), p.generation))
                        .collect()
                })
                .unwrap_or_default();
            tried.retain(|k, t| todo.contains(k) && t.elapsed() < Duration::from_secs(5));
            for key in todo {
                if tried.contains_key(&key) {
                    continue;
                }
                tried.insert(key.clone(), Instant::now());
                let scope = crate::registry::store::Scope {
                    info: &info,
                    namespace: None,
                };
                let opts = crate::registry::store::WriteOptions {
                    now: crate::server::handlers::now_rfc3339(),
                    field_manager: Some("kube-apiserver".into()),
                    ..Default::default()
                };
                let res = store
                    .update_with(
                        scope,
                        &key.0,
                        crate::registry::object::Part::Status,
                        &opts,
                        |cur| {
                            let mut next = cur.clone();
                            if !current(cur) {
                                next["status"] = status(cur, &store.registry().snapshot());
                            }
                            Ok(next)
                        },
                    )
                    .await;
                if let Err(e) = res {
                    tracing::debug!(policy = %key.0, "type checking status: {}", e.message);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(object: Value, params: Value) -> Inputs {
        Inputs {
            object,
            old_object: Value::Null,
            params,
            request: json!({"operation": "CREATE", "name": "x", "userInfo": {"username": "alice"}}),
            namespace: Value::Null,
            authz: crate::cel::authorizer::Authz::new(
                None,
                crate::authn::UserInfo::anonymous(),
                None,
            ),
            request_resource: Default::default(),
        }
    }

    fn policy(spec: Value) -> Policy {
        let mut spec = spec;
        spec["matchConstraints"] = json!({"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]});
        Policy::compile(&json!({"metadata": {"name": "p", "generation": 1}, "spec": spec}))
    }

    #[test]
    fn validations_messages_and_variables() {
        let p = policy(json!({
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "variables": [
                {"name": "max", "expression": "int(params.data.max)"},
                {"name": "broken", "expression": "object.nope.deeper"}
            ],
            "validations": [
                {"expression": "object.spec.replicas <= variables.max"},
                {"expression": "object.spec.replicas < 3", "message": "too many"},
                {"expression": "object.spec.replicas < 2", "messageExpression": "'replicas ' + string(object.spec.replicas)", "reason": "Forbidden"},
                {"expression": "variables.broken == 1"}
            ],
            "auditAnnotations": [{"key": "k", "valueExpression": "'v' + string(variables.max)"}]
        }));
        let out = validate(
            &p,
            &inputs(
                json!({"spec": {"replicas": 5}}),
                json!({"data": {"max": "4"}}),
            ),
        );
        let m: Vec<_> = out
            .decisions
            .iter()
            .map(|d| (d.deny, d.error, d.message.as_str(), d.reason.clone()))
            .collect();
        assert_eq!(
            m[0],
            (
                true,
                false,
                "failed expression: object.spec.replicas <= variables.max",
                Some("Invalid".into())
            )
        );
        assert_eq!(m[1].2, "too many");
        assert_eq!(m[2].2, "replicas 5");
        assert_eq!(m[2].3.as_deref(), Some("Forbidden"));
        assert!(m[3].1, "{:?}", m[3]);
        assert!(
            m[3].2.starts_with("expression 'variables.broken == 1' resulted in error: composited variable \"broken\" fails to evaluate: expression 'object.nope.deeper' resulted in error: no such key"),
            "{}",
            m[3].2
        );
        assert_eq!(
            out.audit,
            vec![("k".to_string(), Ok(Some("v4".to_string())))]
        );
        assert_eq!(
            typecheck::named("variables.a + variables .b"),
            vec!["a", "b"]
        );
    }

    #[test]
    fn match_conditions_and_failure_policy() {
        let mut p = policy(json!({
            "matchConditions": [{"name": "only-big", "expression": "object.spec.replicas > 10"}],
            "validations": [{"expression": "false"}]
        }));
        assert!(
            validate(&p, &inputs(json!({"spec": {"replicas": 5}}), Value::Null))
                .decisions
                .is_empty()
        );
        assert_eq!(
            validate(&p, &inputs(json!({"spec": {"replicas": 50}}), Value::Null)).decisions[0]
                .message,
            "failed expression: false"
        );
        let err = validate(&p, &inputs(json!({"spec": {}}), Value::Null));
        assert!(err.decisions[0].deny && err.decisions[0].error);
        assert_eq!(
            err.decisions[0].message,
            "expression 'object.spec.replicas > 10' resulted in error: no such key: replicas"
        );
        p.ignore = true;
        assert!(validate(&p, &inputs(json!({"spec": {}}), Value::Null))
            .decisions
            .is_empty());
    }

    #[test]
    fn type_checks_against_the_kinds_schemas() {
        let reg = crate::registry::builtin::registry();
        let cat = reg.snapshot();
        let p = json!({
            "metadata": {"name": "p", "generation": 2},
            "spec": {
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments", "replicasets"]}]},
                "variables": [{"name": "r", "expression": "object.spec.replicas"}],
                "validations": [
                    {"expression": "variables.r <= int(params.data.max) && object.spec.template.spec.containers.all(c, c.image != '')"},
                    {"expression": "object.spec.replicaz > 1", "messageExpression": "params.nope"}
                ]
            }
        });
        let st = typecheck::status(&p, &cat);
        assert_eq!(st["observedGeneration"], 2);
        let w = st["typeChecking"]["expressionWarnings"].as_array().unwrap();
        assert_eq!(w.len(), 2, "{st}");
        assert_eq!(w[0]["fieldRef"], "spec.validations[1].expression");
        assert_eq!(
            w[0]["warning"],
            "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 1\n | ...........^\n\napps/v1, Kind=ReplicaSet: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 1\n | ...........^\n"
        );
        assert_eq!(w[1]["fieldRef"], "spec.validations[1].messageExpression");
    }

    #[test]
    fn actions_route_denials_warnings_and_audit_annotations() {
        let p = policy(json!({
            "validations": [
                {"expression": "true"},
                {"expression": "object.spec.replicas < 2", "message": "too many"}
            ],
            "auditAnnotations": [
                {"key": "replicas", "valueExpression": "string(object.spec.replicas)"},
                {"key": "none", "valueExpression": "null"}
            ]
        }));
        let b = Binding::of(&json!({
            "metadata": {"name": "b"},
            "spec": {"policyName": "p", "validationActions": ["Warn", "Audit"]}
        }));
        let (warnings, annotations) = (
            crate::admission::Warnings::default(),
            crate::admission::AuditAnnotations::default(),
        );
        let (mut audit, mut denied) = (BTreeMap::new(), Vec::new());
        for replicas in [3, 4] {
            let out = validate(
                &p,
                &inputs(json!({"spec": {"replicas": replicas}}), Value::Null),
            );
            route(
                &p,
                &b,
                out,
                &warnings,
                &annotations,
                &mut audit,
                &mut denied,
            );
        }
        publish(&p.name, audit, &annotations);
        assert!(denied.is_empty());
        assert_eq!(
            *warnings.0.lock().unwrap(),
            vec!["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': too many"]
        );
        let got = annotations.snapshot();
        assert_eq!(got["p/replicas"], "3, 4");
        assert!(!got.contains_key("p/none"));
        assert_eq!(
            serde_json::from_str::<Value>(
                &got["validation.policy.admission.k8s.io/validation_failure"]
            )
            .unwrap(),
            json!([{"message": "too many", "policy": "p", "binding": "b", "expressionIndex": 1, "validationActions": ["Warn", "Audit"]}])
        );
        let deny = Binding::of(&json!({
            "metadata": {"name": "d"},
            "spec": {"policyName": "p", "validationActions": ["Deny"]}
        }));
        let out = validate(&p, &inputs(json!({"spec": {"replicas": 3}}), Value::Null));
        let mut audit = BTreeMap::new();
        route(
            &p,
            &deny,
            out,
            &warnings,
            &annotations,
            &mut audit,
            &mut denied,
        );
        assert_eq!(denied.len(), 1);
        assert_eq!(denied[0].message, "too many");
        assert_eq!(denied[0].reason.as_deref(), Some("Invalid"));
    }

    #[test]
    fn costs_follow_the_values() {
        let p = policy(json!({
            "validations": [{"expression": "object.items.all(a, object.items.all(b, a != b || a == b))"}]
        }));
        let small = json!({"items": [1, 2, 3]});
        assert!(!validate(&p, &inputs(small, Value::Null)).decisions[0].deny);
        let big = json!({"items": (0..2000).collect::<Vec<_>>()});
        let d = &validate(&p, &inputs(big, Value::Null)).decisions[0];
        assert!(
            d.message
                .ends_with("operation cancelled: actual cost limit exceeded"),
            "{}",
            d.message
        );
    }
}
