//! `x-kubernetes-validations`: CEL rules of a custom resource schema, checked when a
//! definition is written (kube's compile step in `ValidateCustomResourceDefinitionOpenAPISchema`:
//! compile errors, result type, estimated cost per rule and for the whole schema, `oldSelf`
//! only where old values correlate, `optionalOldSelf` only with `oldSelf`) and evaluated when
//! an object is written (kube's `cel.Validator`: transition rules with `oldSelf`, messages,
//! `messageExpression`, `reason`, `fieldPath`, a runtime cost budget, ratcheting of rules
//! that fail on an unchanged value).
//!
//! Rules are compiled ([`super::rule`]) once per definition revision, when [`super::node`]
//! compiles the schema, against the node's CEL type. Rules under `allOf` / `anyOf` / `oneOf` / `not` are not compiled or run (kube
//! runs `allOf` ones; nothing else).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::cel::{self, types, Program, Type};

use super::rule::compile_rule;
pub use super::rule::{compile, valid_field_path, Rule, RuleSpec};
use crate::meta::field_error::FieldError;

use super::node::{child_path, Node};

/// kube's `StaticEstimatedCostLimit` and `StaticEstimatedCRDCostLimit`.
const RULE_COST_LIMIT: f64 = 10_000_000.0;
const SCHEMA_COST_LIMIT: f64 = 100_000_000.0;

/// kube's `hasBlockingErr`: schema errors after which rules are not run, and the error that
/// says so.
pub fn blocked(errs: &[FieldError]) -> Option<FieldError> {
    use crate::meta::field_error::ErrorType::*;
    errs.iter()
        .any(|e| matches!(e.kind, NotSupported | Required | TooLong | TooMany | TypeInvalid))
        .then(|| {
            FieldError::invalid(
                "<nil>",
                json!("null"),
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            )
        })
}

// ---- checks when a definition is written ----

/// The walk state of kube's `CELSchemaContext` and `forbidOldSelfValidations`.
struct Ctx<'a> {
    /// How often a value here can occur in one object, when bounded.
    cardinality: Option<u64>,
    /// The first ancestor where old and new values stop correlating.
    uncorrelatable: Option<&'a str>,
}

struct Total {
    total: f64,
    expensive: Vec<(String, f64)>,
}

impl Total {
    fn observe(&mut self, path: String, cost: f64) {
        self.total += cost;
        if cost < SCHEMA_COST_LIMIT / 100.0 {
            return;
        }
        self.expensive.push((path, cost));
        self.expensive
            .sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
        self.expensive.truncate(4);
    }
}

fn max_elements(n: &Value) -> Option<u64> {
    let int = |k: &str| n.get(k).and_then(Value::as_i64).map(|x| x.max(0) as u64);
    match n.get("type").and_then(Value::as_str) {
        Some("object") if n.get("additionalProperties").is_some_and(|a| !a.is_null()) => {
            int("maxProperties")
        }
        Some("array") => int("maxItems"),
        _ => Some(1),
    }
}

/// The CEL checks of a definition's `openAPIV3Schema` at `root` (its field path). `costs`
/// is false when the schema is unchanged by an update (kube then skips per-rule cost
/// limits).
pub fn check_schema(schema: &Value, root: &str, costs: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = Total {
        total: 0.0,
        expensive: Vec::new(),
    };
    let ctx = Ctx {
        cardinality: Some(1),
        uncorrelatable: None,
    };
    walk(schema, root, true, &ctx, costs, &mut total, &mut errs);
    if total.total > SCHEMA_COST_LIMIT {
        for (p, _) in &total.expensive {
            errs.push(FieldError::forbidden(
                p.clone(),
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errs.push(FieldError::forbidden(
            root.to_string(),
            cel::cost_error(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total.total,
                SCHEMA_COST_LIMIT,
            ),
        ));
    }
    errs
}

fn walk(
    n: &Value,
    path: &str,
    root: bool,
    ctx: &Ctx,
    costs: bool,
    total: &mut Total,
    errs: &mut Vec<FieldError>,
) {
    if !n.is_object() {
        return;
    }
    let embedded = n.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
    rules_at(n, path, root || embedded, ctx, costs, total, errs);
    let child_card = |c: &Ctx| -> Option<u64> {
        let m = max_elements(n)?;
        c.cardinality.map(|x| x.saturating_mul(m))
    };
    if let Some(ap) = n.get("additionalProperties").filter(|a| a.is_object()) {
        let c = Ctx {
            cardinality: child_card(ctx),
            uncorrelatable: ctx.uncorrelatable,
        };
        walk(
            ap,
            &format!("{path}.additionalProperties"),
            false,
            &c,
            costs,
            total,
            errs,
        );
    }
    if let Some(props) = n.get("properties").and_then(Value::as_object) {
        let mut keys: Vec<&String> = props.keys().collect();
        keys.sort();
        for k in keys {
            let c = Ctx {
                cardinality: child_card(ctx),
                uncorrelatable: ctx.uncorrelatable,
            };
            walk(
                &props[k],
                &format!("{path}.properties[{k}]"),
                false,
                &c,
                costs,
                total,
                errs,
            );
        }
    }
    if let Some(items) = n.get("items").filter(|i| i.is_object()) {
        let map_list = n.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
        let c = Ctx {
            cardinality: child_card(ctx),
            uncorrelatable: ctx.uncorrelatable.or((!map_list).then_some(path)),
        };
        walk(
            items,
            &format!("{path}.items"),
            false,
            &c,
            costs,
            total,
            errs,
        );
    }
}

fn rules_at(
    n: &Value,
    path: &str,
    root: bool,
    ctx: &Ctx,
    costs: bool,
    total: &mut Total,
    errs: &mut Vec<FieldError>,
) {
    let Some(list) = n.get("x-kubernetes-validations").and_then(Value::as_array) else {
        return;
    };
    if list.is_empty() {
        return;
    }
    let Some(t) = types::of_schema(n, root) else {
        errs.push(FieldError::internal(
            format!("{path}.x-kubernetes-validations"),
            "internal error: failed to retrieve type information for x-kubernetes-validations",
        ));
        return;
    };
    // kube's maxCardinality for a value under unbounded lists or maps
    let cardinality =
        ctx.cardinality
            .unwrap_or_else(|| types::MAX_REQUEST_SIZE / (t.min_size() + 1)) as f64;
    for (i, raw) in list.iter().enumerate() {
        let spec = RuleSpec::of(raw);
        if spec.rule.trim().is_empty() {
            continue;
        }
        let p = format!("{path}.x-kubernetes-validations[{i}]");
        let rule = compile_rule(spec, &t, n);
        let cost = rule.program.as_ref().map_or(0.0, |p| p.cost) * cardinality;
        if costs && cost > RULE_COST_LIMIT {
            errs.push(FieldError::forbidden(
                format!("{p}.rule"),
                cel::cost_error("estimated rule cost", cost, RULE_COST_LIMIT),
            ));
        }
        total.observe(format!("{p}.rule"), cost);
        if let Err(detail) = &rule.program {
            errs.push(FieldError::invalid_rendered(
                format!("{p}.rule"),
                &rule.spec.go(),
                detail,
            ));
        }
        match &rule.message {
            Some(Err(detail)) => errs.push(FieldError::invalid_rendered(
                format!("{p}.messageExpression"),
                &rule.spec.go(),
                detail,
            )),
            Some(Ok(m)) => {
                if costs && m.cost > RULE_COST_LIMIT {
                    errs.push(FieldError::forbidden(
                        format!("{p}.messageExpression"),
                        cel::cost_error(
                            "estimated messageExpression cost",
                            m.cost,
                            RULE_COST_LIMIT,
                        ),
                    ));
                }
                total.observe(format!("{p}.messageExpression"), m.cost);
            }
            None => {}
        }
        if rule.uses_old_self {
            if let Some(u) = ctx.uncorrelatable {
                errs.push(FieldError::invalid(
                    format!("{p}.rule"),
                    rule.spec.rule.clone(),
                    format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {u}"),
                ));
            }
        } else if let Some(b) = rule.spec.optional_old_self {
            if rule.program.is_ok() {
                errs.push(FieldError::invalid(
                    format!("{p}.optionalOldSelf"),
                    b,
                    "may not be set if oldSelf is not used in rule",
                ));
            }
        }
    }
}

// ---- evaluation when an object is written ----

/// The budget and outcome of one object's rules.
struct Run {
    budget: f64,
    errs: Vec<FieldError>,
    /// Set when a rule stopped all further evaluation.
    stopped: bool,
}

/// Evaluates the rules of `schema` against `obj` (and `old` on update).
pub fn validate(schema: &Node, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut run = Run {
        budget: cel::RUNTIME_BUDGET,
        errs: Vec::new(),
        stopped: false,
    };
    let ratchet = old.map(|o| (obj, o));
    node(schema, "", obj, old, ratchet, &mut run);
    run.errs
}

fn field_of(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_string()
    } else {
        path.to_string()
    }
}

fn type_name(n: &Node) -> &'static str {
    if n.types.len() == 1 {
        n.types[0]
    } else {
        ""
    }
}

/// One node: its own rules, then its children.
fn node<'a>(
    n: &Node,
    path: &str,
    obj: &'a Value,
    old: Option<&'a Value>,
    ratchet: Option<(&'a Value, &'a Value)>,
    run: &mut Run,
) {
    if obj.is_null() || run.stopped {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    if !n.rules.is_empty() {
        rules(n, path, obj, old, ratchet, run);
    }
    match obj {
        Value::Object(m) => {
            for (k, v) in m {
                if run.stopped {
                    return;
                }
                let Some(Some(child)) = n.child(k) else {
                    continue;
                };
                let o = old.and_then(|o| o.get(k));
                let r = match o {
                    Some(o) => Some((v, o)),
                    None => ratchet,
                };
                let p = if n.properties.contains_key(k) {
                    child_path(path, k)
                } else {
                    format!("{path}[{k}]")
                };
                node(child, &p, v, o, r, run);
            }
        }
        Value::Array(items) => {
            let Some(item) = n.items.as_deref() else {
                return;
            };
            let keyed = n.list_type == "map" && !n.list_map_keys.is_empty();
            for (i, v) in items.iter().enumerate() {
                if run.stopped {
                    return;
                }
                let o = if keyed {
                    old.and_then(Value::as_array).and_then(|olds| {
                        olds.iter()
                            .find(|o| n.list_map_keys.iter().all(|k| o.get(k) == v.get(k)))
                    })
                } else {
                    None
                };
                let r = match o {
                    Some(o) => Some((v, o)),
                    None => ratchet,
                };
                node(item, &format!("{path}[{i}]"), v, o, r, run);
            }
        }
        _ => {}
    }
}

fn stop(run: &mut Run, path: &str, ty: &str, detail: String) {
    run.errs
        .push(FieldError::invalid(field_of(path), json!(ty), detail));
    run.stopped = true;
}

fn rules(
    n: &Node,
    path: &str,
    obj: &Value,
    old: Option<&Value>,
    ratchet: Option<(&Value, &Value)>,
    run: &mut Run,
) {
    let ty = type_name(n);
    let Some(self_type) = n.rules_type.as_ref() else {
        return;
    };
    if run.budget <= 0.0 {
        return stop(
            run,
            path,
            ty,
            "validation failed due to running out of cost budget, no further validation rules will be run".into(),
        );
    }
    let value = cel::eval::to_value(obj, self_type);
    // the old value only for rules that look at it
    let transitions = n
        .rules
        .iter()
        .any(|r| r.uses_old_self || r.spec.optional_old_self == Some(true));
    let old_value = old
        .filter(|_| transitions)
        .map(|o| cel::eval::to_value(o, self_type));
    let mut refined: Option<BTreeMap<String, Type>> = None;
    for rule in &n.rules {
        let program = match &rule.program {
            Ok(p) => p,
            Err(e) => {
                run.errs.push(FieldError::invalid(
                    field_of(path),
                    json!(ty),
                    format!("rule compile error: {e}"),
                ));
                continue;
            }
        };
        let optional = rule.spec.optional_old_self == Some(true);
        if rule.uses_old_self && old.is_none() && !optional {
            continue;
        }
        let mut vars = vec![("self", value.clone())];
        if rule.uses_old_self || optional {
            let o = match (&old_value, optional) {
                (Some(v), false) => v.clone(),
                (Some(v), true) => cel_optional(Some(v.clone())),
                (None, _) => cel_optional(None),
            };
            vars.push(("oldSelf", o));
        }
        // the cost this run may take: the static bound, tightened by the actual sizes
        let mut cost = program.cost;
        if cost > 100.0 {
            let r = refined.get_or_insert_with(|| {
                let mut vs = vec![("self", self_type, obj)];
                if let Some(o) = old {
                    vs.push(("oldSelf", self_type, o));
                }
                cel::refined(&vs)
            });
            cost = cost.min(program.runtime_cost(r));
        }
        if cost > cel::PER_CALL_LIMIT {
            return stop(
                run,
                path,
                ty,
                format!(
                    "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                    rule.spec.error_string()
                ),
            );
        }
        if cost > run.budget {
            return stop(
                run,
                path,
                ty,
                "validation failed due to running out of cost budget, no further validation rules will be run".into(),
            );
        }
        run.budget -= cost;
        let result = program.eval(vars.clone());
        let passed = match result {
            Ok(kube_cel::cel::Value::Bool(true)) => true,
            Ok(_) => false,
            Err(e) => {
                let detail = if e == "no such overload" {
                    format!("'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}", rule.spec.error_string())
                } else {
                    format!("{e} evaluating rule: {}", rule.spec.error_string())
                };
                run.errs
                    .push(FieldError::invalid(field_of(path), json!(ty), detail));
                continue;
            }
        };
        if passed {
            continue;
        }
        let at = if rule.field_path.is_empty() {
            field_of(path)
        } else {
            child_path(path, &rule.field_path)
        };
        let message = match &rule.message {
            Some(Ok(m)) => match m.eval(vars) {
                Ok(kube_cel::cel::Value::String(s)) => {
                    let t = s.trim();
                    if t.is_empty() || t.contains('\n') || t.len() > 5 * 1024 {
                        default_message(&rule.spec)
                    } else {
                        t.to_string()
                    }
                }
                _ => default_message(&rule.spec),
            },
            _ => default_message(&rule.spec),
        };
        let err = match rule.spec.reason.as_deref() {
            Some("FieldValueForbidden") => FieldError::forbidden(at, message),
            Some("FieldValueRequired") => FieldError::required(at, message),
            Some("FieldValueDuplicate") => FieldError::duplicate(at, json!(ty)),
            _ => FieldError::invalid(at, json!(ty), message),
        };
        // ratcheting: a rule that does not look at oldSelf and fails on a value that did not
        // change is not an error (kube turns it into a warning)
        let unchanged = ratchet.is_some_and(|(new, old)| new == old);
        if !rule.uses_old_self && unchanged {
            continue;
        }
        run.errs.push(err);
    }
}

fn default_message(spec: &RuleSpec) -> String {
    if spec.message.is_empty() {
        format!("failed rule: {}", spec.error_string())
    } else {
        spec.message.trim().to_string()
    }
}

/// The cel crate's optional values are made by its `optional.of` / `optional.none`.
static OPTIONALS: std::sync::LazyLock<(Option<Program>, Option<Program>)> =
    std::sync::LazyLock::new(|| {
        let vars = BTreeMap::from([("v".to_string(), Type::Dyn)]);
        (
            cel::compile("optional.of(v)", &vars).ok(),
            cel::compile("optional.none()", &vars).ok(),
        )
    });

fn cel_optional(v: Option<kube_cel::cel::Value>) -> kube_cel::cel::Value {
    let (of, none) = &*OPTIONALS;
    let made = match v {
        Some(v) => of.as_ref().map(|p| p.eval(vec![("v", v)])),
        None => none.as_ref().map(|p| p.eval(Vec::new())),
    };
    made.and_then(Result::ok)
        .unwrap_or(kube_cel::cel::Value::Null)
}
