//! The admissionregistration.k8s.io group's strategies: webhook configurations
//! ([`webhook`]) and ValidatingAdmissionPolicies with their bindings ([`policy`]), and the
//! pieces of kube's `pkg/apis/admissionregistration/validation` they share: rules with
//! operations, match resources, match conditions and the v1 defaults of rules.
//!
//! CEL expressions are compiled and type-checked in kube's admission environment
//! (`crate::cel::admission`) and their errors reported as kube reports them.

pub mod policy;
pub mod webhook;

use serde_json::{json, Value};

use crate::cel;
use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{
    is_qualified_name, validate_label_selector_with, validate_path_segment_name,
};
use crate::registry::builtin::checks::{list_of, str_of};
use crate::registry::strategy::{is_unset, obj_entry};

const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];

/// The strings of a JSON list (other members skipped: they do not decode in kube).
fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    list_of(v, key).iter().filter_map(Value::as_str).collect()
}

/// Go's `%#v` of a slice of a named string type, e.g.
/// `[]admissionregistration.OperationType{"*", "CREATE"}`.
fn go_typed_list(ty: &str, items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    format!("[]{ty}{{{}}}", quoted.join(", "))
}

/// `obj[key]` when it is set (present and not null).
fn set<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// `SetDefaults_Rule` on each rule of `obj[key]`: scope `*`.
fn default_rules(obj: &mut Value, key: &str) {
    if let Some(rules) = obj.get_mut(key).and_then(Value::as_array_mut) {
        for r in rules.iter_mut().filter(|r| r.is_object()) {
            if is_unset(r.get("scope")) {
                r["scope"] = json!("*");
            }
        }
    }
}

/// `SetDefaults_MatchResources` (and the rules inside): matchPolicy `Equivalent`, empty
/// selectors.
fn default_match_resources(m: &mut Value) {
    if !m.is_object() {
        return;
    }
    if is_unset(m.get("matchPolicy")) {
        m["matchPolicy"] = json!("Equivalent");
    }
    for sel in ["namespaceSelector", "objectSelector"] {
        if is_unset(m.get(sel)) {
            obj_entry(m, sel);
        }
    }
    default_rules(m, "resourceRules");
    default_rules(m, "excludeResourceRules");
}

/// `failurePolicy` outside the supported values (unset is fine).
fn check_failure_policy(obj: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(p) = set(obj, "failurePolicy").and_then(Value::as_str) {
        if !FAILURE_POLICIES.contains(&p) {
            errs.push(FieldError::not_supported(path, p, FAILURE_POLICIES));
        }
    }
}

/// `validateResources`: subresource wildcards (`x/*`, `*/x`, `*/*`, `*`) exclude the forms
/// they cover.
fn validate_resources(resources: &[&str], path: &str, errs: &mut Vec<FieldError>) {
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    let mut res_with_wild_sub: Vec<&str> = Vec::new();
    let mut sub_with_wild_res: Vec<&str> = Vec::new();
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, rs) in resources.iter().enumerate() {
        let p = format!("{path}[{i}]");
        if rs.is_empty() {
            errs.push(FieldError::required(p, ""));
            continue;
        }
        double |= *rs == "*/*";
        single |= *rs == "*";
        let Some((res, sub)) = rs.split_once('/') else {
            plain = *rs != "*";
            continue;
        };
        if res_with_wild_sub.contains(&res) {
            errs.push(FieldError::invalid(
                &p,
                *rs,
                format!("if '{res}/*' is present, must not specify {rs}"),
            ));
        }
        if sub_with_wild_res.contains(&sub) {
            errs.push(FieldError::invalid(
                &p,
                *rs,
                format!("if '*/{sub}' is present, must not specify {rs}"),
            ));
        }
        if sub == "*" {
            res_with_wild_sub.push(res);
        }
        if res == "*" {
            sub_with_wild_res.push(sub);
        }
    }
    if resources.len() > 1 && double {
        errs.push(FieldError::invalid(
            path,
            json!(resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && plain {
        errs.push(FieldError::invalid(
            path,
            json!(resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
}

/// `validateRuleWithOperations` (subresources allowed) for the rule at `path`.
fn validate_rule_with_operations(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let ops = strings(rule, "operations");
    let ops_path = format!("{path}.operations");
    if ops.is_empty() {
        errs.push(FieldError::required(&ops_path, ""));
    }
    if ops.len() > 1 && ops.contains(&"*") {
        errs.push(FieldError::invalid_rendered(
            &ops_path,
            &go_typed_list("admissionregistration.OperationType", &ops),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in ops.iter().enumerate() {
        if !OPERATIONS.contains(op) {
            errs.push(FieldError::not_supported(
                format!("{ops_path}[{i}]"),
                *op,
                OPERATIONS,
            ));
        }
    }
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let items = strings(rule, key);
        let p = format!("{path}.{key}");
        if items.is_empty() {
            errs.push(FieldError::required(&p, ""));
        }
        if items.len() > 1 && items.contains(&"*") {
            errs.push(FieldError::invalid(
                &p,
                json!(items),
                format!("if '*' is present, must not specify other {what}"),
            ));
        }
        if key == "apiVersions" {
            for (i, v) in items.iter().enumerate() {
                if v.is_empty() {
                    errs.push(FieldError::required(format!("{p}[{i}]"), ""));
                }
            }
        }
    }
    validate_resources(
        &strings(rule, "resources"),
        &format!("{path}.resources"),
        errs,
    );
    if let Some(scope) = set(rule, "scope").and_then(Value::as_str) {
        if !SCOPES.contains(&scope) {
            errs.push(FieldError::not_supported(
                format!("{path}.scope"),
                scope,
                SCOPES,
            ));
        }
    }
}

/// `validateMatchResources` (a policy's matchConstraints or a binding's matchResources).
fn validate_match_resources(m: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match set(m, "matchPolicy").and_then(Value::as_str) {
        None => errs.push(FieldError::required(format!("{path}.matchPolicy"), "")),
        Some(p) if !MATCH_POLICIES.contains(&p) => errs.push(FieldError::not_supported(
            format!("{path}.matchPolicy"),
            p,
            MATCH_POLICIES,
        )),
        Some(_) => {}
    }
    for sel in ["namespaceSelector", "objectSelector"] {
        let p = format!("{path}.{sel}");
        match set(m, sel) {
            None => errs.push(FieldError::required(p, "")),
            Some(s) => errs.extend(validate_label_selector_with(s, &p, false)),
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in list_of(m, key).iter().enumerate() {
            let p = format!("{path}.{key}[{i}]");
            let mut seen: Vec<&str> = Vec::new();
            for (j, name) in strings(rule, "resourceNames").into_iter().enumerate() {
                let np = format!("{p}.resourceNames[{j}]");
                for msg in validate_path_segment_name(name, false) {
                    errs.push(FieldError::invalid(&np, name, msg));
                }
                if seen.contains(&name) {
                    errs.push(FieldError::duplicate(&np, name));
                } else {
                    seen.push(name);
                }
            }
            validate_rule_with_operations(rule, &p, errs);
        }
    }
}

/// `validateMatchConditions`: at most 64, each with an expression that compiles to a bool
/// (`params` only for a policy with a `paramKind`) and a qualified name, names unique.
fn validate_match_conditions(list: &[Value], path: &str, params: bool, errs: &mut Vec<FieldError>) {
    if list.len() > 64 {
        errs.push(FieldError::too_many(path, list.len() as i64, 64));
    }
    let vars = cel::admission::env(
        cel::admission::Declarations {
            params,
            authorizer: true,
        },
        None,
    );
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let expression = str_of(c, "expression").trim();
        if expression.is_empty() {
            errs.push(FieldError::required(format!("{p}.expression"), ""));
        } else if let Err(detail) =
            cel::admission::compile_expression(expression, cel::admission::Returns::Bool, &vars)
        {
            errs.push(FieldError::invalid(
                format!("{p}.expression"),
                expression,
                detail,
            ));
        }
        let name = str_of(c, "name");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{p}.name"), ""));
        } else {
            for msg in is_qualified_name(name) {
                errs.push(FieldError::invalid(format!("{p}.name"), name, msg));
            }
            if seen.contains(&name) {
                errs.push(FieldError::duplicate(format!("{p}.name"), name));
            } else {
                seen.push(name);
            }
        }
    }
}
