//! CEL as kube-apiserver uses it: expressions parsed with the `cel` crate (optional syntax
//! on), type-checked against the variables of their environment, their cost estimated in
//! cel-go's units, and evaluated with the Kubernetes libraries of `kube-cel` (lists, strings,
//! regex, url, quantity, ip/cidr, semver, format, math, sets, base64).
//!
//! Owns: [`Program`] (a checked expression), the issue texts cel-go prints
//! (`ERROR: <input>:1:5: undefined field 'foo'` with the source line and a caret), cost
//! limits, and value conversion ([`eval`]). Does not know: where expressions come from (CRD
//! `x-kubernetes-validations` in `registry::custom::rules`, admission policies and webhook
//! match conditions in `registry::builtin::admissionregistration`) or how their failures are
//! reported as field errors.
//!
//! Nothing here panics on input: parsing and evaluation run under `catch_unwind`, and an
//! expression's cost is bounded before it runs ([`Program::runtime_cost`]).

pub mod admission;
pub mod authorizer;
pub mod check;
pub mod eval;
pub mod lexer;
pub mod types;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use kube_cel::cel::parser::Parser;
use kube_cel::cel::{IdedExpr, Value};
use serde_json::Value as Json;

pub use types::Type;

/// kube's per-expression runtime cost limit (`celconfig.PerCallLimit`).
pub const PER_CALL_LIMIT: f64 = 1_000_000.0;
/// kube's runtime budget for all rules of one object (`celconfig.RuntimeCELCostBudget`).
pub const RUNTIME_BUDGET: f64 = 10_000_000.0;

/// A parsed and checked expression.
pub struct Program {
    pub source: String,
    expr: IdedExpr,
    /// The checked result type.
    pub ty: Type,
    /// The largest cost the checker estimates, in cel-go units.
    pub cost: f64,
    /// The environment's variables the expression refers to.
    pub refs: Vec<String>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("source", &self.source)
            .field("ty", &self.ty)
            .finish()
    }
}

/// Parses `src`; the error is cel-go's issue text.
fn parse(src: &str) -> Result<IdedExpr, String> {
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        Parser::new().enable_optional_syntax(true).parse(src)
    }));
    match parsed {
        Ok(Ok(e)) => Ok(e),
        Ok(Err(errs)) => Err(errs
            .errors
            .iter()
            .map(|e| {
                lexer::render_at(
                    src,
                    e.pos.0.max(1) as usize,
                    e.pos.1.max(1) as usize,
                    &e.msg,
                )
            })
            .collect::<Vec<_>>()
            .join("\n")),
        Err(_) => Err(lexer::render(
            src,
            0,
            "Syntax error: expression could not be parsed",
        )),
    }
}

/// Parses and type-checks `src` with the variables `vars`; the error is cel-go's issue text
/// (callers prefix it, as kube does, with `compilation failed: `).
pub fn compile(src: &str, vars: &BTreeMap<String, Type>) -> Result<Program, String> {
    let expr = parse(src)?;
    let checked = check::check(&expr, vars);
    if !checked.errors.is_empty() {
        let mut toks = lexer::Tokens::new(src);
        let issues: Vec<String> = checked
            .errors
            .iter()
            .map(|(anchor, msg)| {
                let at = toks.locate(anchor);
                toks.render(at, msg)
            })
            .collect();
        return Err(issues.join("\n"));
    }
    Ok(Program {
        source: src.to_string(),
        expr,
        ty: checked.ty,
        cost: checked.cost,
        refs: checked.refs,
    })
}

impl Program {
    /// Whether the expression refers to variable `name`.
    pub fn uses(&self, name: &str) -> bool {
        self.refs.iter().any(|r| r == name)
    }

    /// The expression's cost over these variables (their types refined by their values), as
    /// the bound of what running it costs.
    pub fn runtime_cost(&self, vars: &BTreeMap<String, Type>) -> f64 {
        check::check(&self.expr, vars).cost
    }

    /// Runs the expression; the error is cel-go's text of the evaluation error.
    pub fn eval(&self, vars: Vec<(&str, Value)>) -> Result<Value, String> {
        match catch_unwind(AssertUnwindSafe(|| eval::eval(&self.expr, vars))) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(eval::error_text(&e)),
            Err(_) => Err("internal error evaluating expression".into()),
        }
    }
}

/// The variables `(name, type, value)` refined for a runtime cost estimate.
pub fn refined(vars: &[(&str, &Type, &Json)]) -> BTreeMap<String, Type> {
    vars.iter()
        .map(|(n, t, v)| (n.to_string(), eval::refine(t, v)))
        .collect()
}

/// kube's `getCostErrorMessage`.
pub fn cost_error(what: &str, cost: f64, limit: f64) -> String {
    let factor = cost / limit;
    let f = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!("{what} exceeds budget by factor of {f} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(schema: Json) -> BTreeMap<String, Type> {
        let t = types::of_schema(&schema, false).unwrap();
        [("self".to_string(), t.clone()), ("oldSelf".to_string(), t)]
            .into_iter()
            .collect()
    }

    fn spec() -> BTreeMap<String, Type> {
        env(json!({"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "name": {"type": "string", "maxLength": 10},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}))
    }

    #[test]
    fn checks_like_cel_go() {
        let e = spec();
        assert!(compile("self.replicas >= 0 && self.name.startsWith('a')", &e).is_ok());
        assert_eq!(
            compile("self.foo == 1", &e).unwrap_err(),
            "ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 1\n | ....^"
        );
        assert_eq!(
            compile("self.replicas > 'a'", &e).unwrap_err(),
            "ERROR: <input>:1:15: found no matching overload for '_>_' applied to '(int, string)'\n | self.replicas > 'a'\n | ..............^"
        );
        assert_eq!(
            compile("nope > 1", &e).unwrap_err(),
            "ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope > 1\n | ^"
        );
        assert!(compile("self >", &e).unwrap_err().contains("Syntax error"));
        assert!(compile("has(self.labels) && self.labels.all(k, k.size() < 5)", &e).is_ok());
        assert!(compile("self.tags.map(t, t.size()).all(n, n > 0)", &e).is_ok());
        assert!(compile("quantity('1Gi').isGreaterThan(quantity('1'))", &e).is_ok());
        assert!(compile("self.?name.orValue('') == ''", &e).is_ok());
        assert!(matches!(
            compile("self.replicas", &e).unwrap().ty,
            Type::Int
        ));
    }

    #[test]
    fn costs_grow_with_unbounded_lists() {
        let e = spec();
        let bounded = compile("self.name.startsWith('a')", &e).unwrap();
        assert!(bounded.cost < 100.0, "{}", bounded.cost);
        let nested = compile("self.tags.all(a, self.tags.all(b, a != b || a == b))", &e).unwrap();
        assert!(nested.cost > 1e10, "{}", nested.cost);
    }

    #[test]
    fn evaluates_with_the_libraries() {
        let e = spec();
        let t = e["self"].clone();
        let obj = json!({"replicas": 3, "name": "abc", "tags": ["x"], "labels": {"a": "b"}});
        let run = |src: &str| {
            compile(src, &e)
                .unwrap()
                .eval(vec![("self", eval::to_value(&obj, &t))])
        };
        assert_eq!(run("self.replicas > 2").unwrap(), Value::Bool(true));
        assert_eq!(run("self.labels['a'] == 'b'").unwrap(), Value::Bool(true));
        assert_eq!(
            run("'abc'.upperAscii() == 'ABC'").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(
            run("self.labels['z'] == 'b'").unwrap_err(),
            "no such key: z"
        );
        let refined = refined(&[("self", &t, &obj)]);
        let p = compile("self.tags.all(a, self.tags.all(b, a != b || a == b))", &e).unwrap();
        assert!(p.runtime_cost(&refined) < 100.0);
    }
}
