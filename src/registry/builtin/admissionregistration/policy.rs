//! ValidatingAdmissionPolicies and their bindings: kube's v1 defaults
//! (`SetDefaults_ValidatingAdmissionPolicySpec`, `SetDefaults_MatchResources`) and
//! `ValidateValidatingAdmissionPolicy` /
//! `ValidateValidatingAdmissionPolicyBinding`, with every CEL expression compiled in kube's
//! admission environment (match conditions, variables in order, validations, message
//! expressions, audit annotation values).

use crate::registry::object::Part;
use crate::registry::strategy::{default_reset_fields, ResetFields};
use serde_json::{json, Value};

use super::{
    check_failure_policy, default_match_resources, go_typed_list, set, strings,
    validate_match_conditions, validate_match_resources,
};
use crate::cel::admission::{compile_expression, env, Declarations, Returns};
use crate::cel::Type;
use crate::meta::field_error::FieldError;
use crate::meta::validation::{
    is_dns1035_label, is_dns1123_subdomain, is_qualified_name, validate_label_selector,
    validate_path_segment_name,
};
use crate::registry::builtin::checks::{list_of, str_of};
use crate::registry::object::meta;
use crate::registry::strategy::{is_unset, Strategy};
use crate::registry::table::{printers, Printer};

pub struct ValidatingAdmissionPolicies;
pub struct ValidatingAdmissionPolicyBindings;

const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];

fn spec(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

/// `isCELIdentifier`: `[_a-zA-Z][_a-zA-Z0-9]*`, not a reserved word.
fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !crate::cel::types::RESERVED.contains(&name)
}

/// `validateParamKind`.
fn validate_param_kind(pk: &Value, errs: &mut Vec<FieldError>) {
    let api_version = str_of(pk, "apiVersion");
    let ap = "spec.paramKind.apiVersion";
    if api_version.is_empty() {
        errs.push(FieldError::required(ap, ""));
    } else if api_version.matches('/').count() > 1 {
        errs.push(FieldError::invalid(
            ap,
            api_version,
            format!("unexpected GroupVersion string: {api_version}"),
        ));
    } else if api_version != "/" {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let group_errs = is_dns1123_subdomain(group);
        if !group.is_empty() && !group_errs.is_empty() {
            errs.push(FieldError::invalid(ap, group, group_errs.join(",")));
        }
        if version.is_empty() {
            errs.push(FieldError::invalid(
                ap,
                api_version,
                "version must be specified",
            ));
        } else {
            let version_errs = is_dns1035_label(version);
            if !version_errs.is_empty() {
                errs.push(FieldError::invalid(ap, version, version_errs.join(",")));
            }
        }
    } else {
        errs.push(FieldError::invalid(
            ap,
            api_version,
            "version must be specified",
        ));
    }
    let kind = str_of(pk, "kind");
    if kind.is_empty() {
        errs.push(FieldError::required("spec.paramKind.kind", ""));
    } else {
        let kind_errs = is_dns1035_label(&kind.to_lowercase());
        if !kind_errs.is_empty() {
            errs.push(FieldError::invalid(
                "spec.paramKind.kind",
                kind,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    kind_errs.join(",")
                ),
            ));
        }
    }
}

/// The CEL environments of a policy's expressions: with `params` when it has a
/// `paramKind`, `variables` when it declares some.
struct Envs {
    params: bool,
    variables: Option<Vec<(String, Type)>>,
}

impl Envs {
    fn compile(
        &self,
        src: &str,
        returns: Returns,
        authorizer: bool,
    ) -> Result<crate::cel::Program, String> {
        let d = Declarations {
            params: self.params,
            authorizer,
        };
        compile_expression(src, returns, &env(d, self.variables.as_deref()))
    }

    /// Compiles `src` and reports its error at `path` as kube does.
    fn check(
        &self,
        src: &str,
        returns: Returns,
        authorizer: bool,
        path: String,
        errs: &mut Vec<FieldError>,
    ) {
        if let Err(detail) = self.compile(src, returns, authorizer) {
            errs.push(FieldError::invalid(path, src, detail));
        }
    }
}

fn validate_validation(v: &Value, p: &str, envs: &Envs, errs: &mut Vec<FieldError>) {
    let expression = str_of(v, "expression");
    if expression.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{p}.expression"),
            "expression is not specified",
        ));
    } else {
        envs.check(
            expression,
            Returns::Bool,
            true,
            format!("{p}.expression"),
            errs,
        );
    }
    let me = str_of(v, "messageExpression");
    if !me.is_empty() && me.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{p}.messageExpression"),
            me,
            "must be non-empty if specified",
        ));
    } else if !me.trim().is_empty() {
        envs.check(
            me,
            Returns::String,
            false,
            format!("{p}.messageExpression"),
            errs,
        );
    }
    let msg = str_of(v, "message");
    if !msg.is_empty() && msg.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{p}.message"),
            msg,
            "message must be non-empty if specified",
        ));
    } else if msg.trim().contains(['\n', '\r']) {
        errs.push(FieldError::invalid(
            format!("{p}.message"),
            msg,
            "message must not contain line breaks",
        ));
    }
    if let Some(r) = set(v, "reason").and_then(Value::as_str) {
        if !REASONS.contains(&r) {
            errs.push(FieldError::not_supported(format!("{p}.reason"), r, REASONS));
        }
    }
}

fn validate_audit_annotations(name: &str, list: &[Value], envs: &Envs, errs: &mut Vec<FieldError>) {
    if list.len() > 20 {
        errs.push(FieldError::invalid_rendered(
            "spec.auditAnnotations",
            "[]admissionregistration.AuditAnnotation{...}",
            "must not have more than 20 auditAnnotations",
        ));
    }
    let mut keys: Vec<&str> = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let p = format!("spec.auditAnnotations[{i}]");
        let key = str_of(a, "key");
        if name.is_empty() {
            errs.push(FieldError::invalid(
                format!("{p}.key"),
                key,
                "requires metadata.name be non-empty",
            ));
        } else {
            let full = format!("{name}/{key}");
            for m in is_qualified_name(&full) {
                errs.push(FieldError::invalid(format!("{p}.key"), full.as_str(), m));
            }
        }
        let ve = str_of(a, "valueExpression").trim();
        if ve.is_empty() {
            errs.push(FieldError::required(
                format!("{p}.valueExpression"),
                "valueExpression is not specified",
            ));
        } else if ve.len() > 5 * 1024 {
            errs.push(FieldError::required(
                format!("{p}.valueExpression"),
                "must not exceed 5120 bytes in length",
            ));
        } else if let Err(detail) = envs.compile(ve, Returns::StringOrNull, true) {
            errs.push(FieldError::invalid(
                format!("{p}.valueExpression"),
                str_of(a, "valueExpression"),
                detail,
            ));
        }
        if keys.contains(&key) {
            errs.push(FieldError::duplicate(format!("{p}.key"), key));
        }
        keys.push(key);
    }
}

impl ValidatingAdmissionPolicies {
    fn validate_with(&self, obj: &Value, ignore_match_conditions: bool) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = spec(obj);
        if set(spec, "failurePolicy").is_none() {
            errs.push(FieldError::required("spec.failurePolicy", ""));
        }
        check_failure_policy(spec, "spec.failurePolicy", &mut errs);
        let params = set(spec, "paramKind").is_some();
        if let Some(pk) = set(spec, "paramKind") {
            validate_param_kind(pk, &mut errs);
        }
        match set(spec, "matchConstraints") {
            None => errs.push(FieldError::required("spec.matchConstraints", "")),
            Some(m) => {
                validate_match_resources(m, "spec.matchConstraints", &mut errs);
                if list_of(m, "resourceRules").is_empty() {
                    errs.push(FieldError::required(
                        "spec.matchConstraints.resourceRules",
                        "",
                    ));
                }
            }
        }
        if !ignore_match_conditions {
            validate_match_conditions(
                list_of(spec, "matchConditions"),
                "spec.matchConditions",
                params,
                &mut errs,
            );
        }
        let declared = list_of(spec, "variables");
        let mut envs = Envs {
            params,
            variables: (!declared.is_empty()).then(Vec::new),
        };
        for (i, v) in declared.iter().enumerate() {
            let p = format!("spec.variables[{i}]");
            let name = str_of(v, "name");
            if name.trim().is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.name"),
                    "name is not specified",
                ));
            } else if !is_cel_identifier(name) {
                errs.push(FieldError::invalid(
                    format!("{p}.name"),
                    name,
                    "name is not a valid CEL identifier",
                ));
            }
            let expression = str_of(v, "expression");
            let mut ty = Type::Dyn;
            if expression.trim().is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.expression"),
                    "expression is not specified",
                ));
            } else {
                match envs.compile(expression, Returns::Any, true) {
                    Ok(prog) => ty = prog.ty,
                    Err(detail) => errs.push(FieldError::invalid(
                        format!("{p}.expression"),
                        expression,
                        detail,
                    )),
                }
            }
            // later expressions see this variable with its type
            if let Some(vs) = envs.variables.as_mut() {
                vs.push((name.to_string(), ty));
            }
        }
        let (validations, audits) = (
            list_of(spec, "validations"),
            list_of(spec, "auditAnnotations"),
        );
        if validations.is_empty() && audits.is_empty() {
            for f in ["validations", "auditAnnotations"] {
                errs.push(FieldError::required(
                    format!("spec.{f}"),
                    "validations or auditAnnotations must contain at least one item",
                ));
            }
        } else {
            for (i, v) in validations.iter().enumerate() {
                validate_validation(v, &format!("spec.validations[{i}]"), &envs, &mut errs);
            }
            let name = meta(obj).get("name").and_then(Value::as_str).unwrap_or("");
            validate_audit_annotations(name, audits, &envs, &mut errs);
        }
        errs
    }
}

impl Strategy for ValidatingAdmissionPolicies {
    /// kube's status strategy here resets the metadata too.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Status => &[&["metadata"], &["spec"]],
            _ => default_reset_fields(part, has_status),
        }
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
            return;
        };
        if is_unset(spec.get("failurePolicy")) {
            spec["failurePolicy"] = json!("Fail");
        }
        if let Some(m) = spec.get_mut("matchConstraints") {
            default_match_resources(m);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        self.validate_with(obj, false)
    }

    /// Match conditions are not checked again when they and the param kind are unchanged.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let same = |k: &str| set(spec(new), k) == set(spec(old), k);
        self.validate_with(new, same("paramKind") && same("matchConditions"))
    }

    /// `ValidateValidatingAdmissionPolicyStatusUpdate`: the type checking warnings, then the
    /// conditions.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let st = new.get("status").unwrap_or(&Value::Null);
        let mut errs = Vec::new();
        let warnings = st
            .pointer("/typeChecking/expressionWarnings")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for (i, w) in warnings.iter().enumerate() {
            let p = format!("status.typeChecking.expressionWarnings[{i}]");
            if w.get("warning")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                errs.push(FieldError::required(format!("{p}.warning"), ""));
            }
            let field_ref = w.get("fieldRef").and_then(Value::as_str).unwrap_or("");
            if field_ref.trim().is_empty() {
                errs.push(FieldError::required(format!("{p}.fieldRef"), ""));
            }
        }
        let conditions = st.get("conditions").and_then(Value::as_array);
        errs.extend(crate::meta::validation::validate_conditions(
            conditions.map_or(&[][..], Vec::as_slice),
            "status.conditions",
        ));
        errs
    }

    fn printer(&self) -> Printer {
        printers::VAP
    }
}

fn validate_param_ref(pr: &Value, errs: &mut Vec<FieldError>) {
    let name = str_of(pr, "name");
    let selector = set(pr, "selector");
    if !name.is_empty() {
        for m in validate_path_segment_name(name, false) {
            errs.push(FieldError::invalid("spec.paramRef.name", name, m));
        }
        if selector.is_some() {
            errs.push(FieldError::forbidden(
                "spec.paramRef.name",
                "name and selector are mutually exclusive",
            ));
        }
    }
    if let Some(sel) = selector {
        errs.extend(validate_label_selector(sel, "spec.paramRef.selector"));
        if !name.is_empty() {
            errs.push(FieldError::forbidden(
                "spec.paramRef.selector",
                "name and selector are mutually exclusive",
            ));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(FieldError::required(
            "spec.paramRef",
            "one of name or selector must be specified",
        ));
    }
    match str_of(pr, "parameterNotFoundAction") {
        "" => errs.push(FieldError::required(
            "spec.paramRef.parameterNotFoundAction",
            "",
        )),
        "Deny" | "Allow" => {}
        a => errs.push(FieldError::not_supported(
            "spec.paramRef.parameterNotFoundAction",
            a,
            &["Deny", "Allow"],
        )),
    }
}

fn validate_actions(actions: &[&str], errs: &mut Vec<FieldError>) {
    let p = "spec.validationActions";
    let mut seen: Vec<&str> = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        if !ACTIONS.contains(a) {
            errs.push(FieldError::not_supported(format!("{p}[{i}]"), *a, ACTIONS));
        }
        if seen.contains(a) {
            errs.push(FieldError::duplicate(format!("{p}[{i}]"), *a));
        }
        seen.push(a);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(FieldError::invalid_rendered(
            p,
            &go_typed_list("admissionregistration.ValidationAction", actions),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(
            p,
            "at least one validation action is required",
        ));
    }
}

impl Strategy for ValidatingAdmissionPolicyBindings {
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.pointer_mut("/spec/matchResources") {
            default_match_resources(m);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = spec(obj);
        let policy = str_of(spec, "policyName");
        if policy.is_empty() {
            errs.push(FieldError::required("spec.policyName", ""));
        } else {
            for m in is_dns1123_subdomain(policy) {
                errs.push(FieldError::invalid("spec.policyName", policy, m));
            }
        }
        if let Some(pr) = set(spec, "paramRef") {
            validate_param_ref(pr, &mut errs);
        }
        if let Some(m) = set(spec, "matchResources") {
            validate_match_resources(m, "spec.matchResources", &mut errs);
        }
        validate_actions(&strings(spec, "validationActions"), &mut errs);
        errs
    }

    fn printer(&self) -> Printer {
        printers::VAPB
    }
}
