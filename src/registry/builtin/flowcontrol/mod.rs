//! The flowcontrol.apiserver.k8s.io group's strategies: FlowSchemas and
//! PriorityLevelConfigurations, with kube's v1 defaults (`SetDefaults_FlowSchemaSpec`,
//! `SetDefaults_PriorityLevelConfiguration`, `SetDefaults_{Exempt,Limited}PriorityLevelConfiguration`,
//! `SetDefaults_QueuingConfiguration`) and `ValidateFlowSchema` /
//! `ValidatePriorityLevelConfiguration`, including the fixed specs of the mandatory `exempt`
//! and `catch-all` objects.

use crate::registry::object::Part;
use crate::registry::strategy::{default_reset_fields, ResetFields};
use serde_json::{json, Map, Value};

use crate::meta::field_error::{go_quote, ErrorType, FieldError};
use crate::meta::validation::{is_dns1123_label, is_dns1123_subdomain};
use crate::registry::builtin::checks::{list_of, str_of};
use crate::registry::object::meta;
use crate::registry::strategy::{is_unset, obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct FlowSchemas;
pub struct PriorityLevelConfigurations;

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];
const NS_ERR_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

fn name_of(obj: &Value) -> &str {
    meta(obj).get("name").and_then(Value::as_str).unwrap_or("")
}

fn spec_of(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

fn set<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    list_of(v, key).iter().filter_map(Value::as_str).collect()
}

fn int_of(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// `field.NotSupported` for a value Go prints through `%#v` of a struct.
fn not_supported_rendered(path: String, rendered: &str, valid: &[&str]) -> FieldError {
    let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
    FieldError {
        kind: ErrorType::NotSupported,
        field: path,
        bad_value: None,
        detail: format!("{rendered}: supported values: {}", quoted.join(", ")),
    }
}

/// The value with Go's zero values (null, false, 0, "", empty lists and objects) left out,
/// so two specs compare as `apiequality.Semantic.DeepEqual` compares decoded structs.
pub fn without_zeros(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), without_zeros(v)))
                .filter(|(_, v)| !is_zero(v))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_zeros).collect()),
        other => other.clone(),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

/// The `*`-exclusive verb list of a policy rule (`verbs` at `p`).
fn check_verbs(rule: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let verbs = strings(rule, "verbs");
    let vp = format!("{p}.verbs");
    if verbs.is_empty() {
        errs.push(FieldError::required(
            vp,
            "verbs must contain at least one value",
        ));
    } else if verbs.contains(&"*") {
        if verbs.len() > 1 {
            errs.push(FieldError::invalid(
                vp,
                json!(verbs),
                "if '*' is present, must not specify other verbs",
            ));
        }
    } else if !verbs.iter().all(|v| VERBS.contains(v)) {
        errs.push(FieldError::not_supported(vp, json!(verbs), VERBS));
    }
}

fn validate_subject(s: &Value, p: &str, errs: &mut Vec<FieldError>) {
    const MEMBERS: [(&str, &str); 3] = [
        ("serviceAccount", "ServiceAccount"),
        ("user", "User"),
        ("group", "Group"),
    ];
    let kind = str_of(s, "kind");
    let Some(&(own, _)) = MEMBERS.iter().find(|(_, k)| *k == kind) else {
        errs.push(FieldError::not_supported(
            format!("{p}.kind"),
            kind,
            &["Group", "ServiceAccount", "User"],
        ));
        return;
    };
    let op = format!("{p}.{own}");
    match set(s, own) {
        None => errs.push(FieldError::required(
            &op,
            format!("{own} is required when subject kind is '{kind}'"),
        )),
        Some(m) => {
            let name = str_of(m, "name");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{op}.name"), ""));
            } else if own == "serviceAccount" && name != "*" {
                for msg in is_dns1123_subdomain(name) {
                    errs.push(FieldError::invalid(format!("{op}.name"), name, msg));
                }
            }
            if own == "serviceAccount" {
                let ns = str_of(m, "namespace");
                if ns.is_empty() {
                    errs.push(FieldError::required(
                        format!("{op}.namespace"),
                        "must specify namespace for service account",
                    ));
                } else {
                    for msg in is_dns1123_label(ns) {
                        errs.push(FieldError::invalid(format!("{op}.namespace"), ns, msg));
                    }
                }
            }
        }
    }
    for (f, k) in MEMBERS {
        if f != own && set(s, f).is_some() {
            errs.push(FieldError::forbidden(
                format!("{p}.{f}"),
                format!("{f} is forbidden when subject kind is not '{k}'"),
            ));
        }
    }
}

fn validate_resource_rule(r: &Value, p: &str, errs: &mut Vec<FieldError>) {
    check_verbs(r, p, errs);
    for (key, what) in [("apiGroups", "api group"), ("resources", "resource")] {
        let items = strings(r, key);
        let kp = format!("{p}.{key}");
        if items.is_empty() {
            errs.push(FieldError::required(
                kp,
                format!("resource rules must supply at least one {what}"),
            ));
        } else if items.len() > 1 && items.contains(&"*") {
            errs.push(FieldError::invalid(
                kp,
                json!(items),
                format!("if '*' is present, must not specify other {what}s"),
            ));
        }
    }
    let namespaces = strings(r, "namespaces");
    let np = format!("{p}.namespaces");
    let cluster = r.get("clusterScope").and_then(Value::as_bool) == Some(true);
    if namespaces.is_empty() && !cluster {
        errs.push(FieldError::required(
            np,
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if namespaces.contains(&"*") {
        if namespaces.len() > 1 {
            errs.push(FieldError::invalid(
                np,
                json!(namespaces),
                "if '*' is present, must not specify other namespaces",
            ));
        }
    } else {
        for (i, ns) in namespaces.iter().enumerate() {
            for msg in is_dns1123_label(ns) {
                errs.push(FieldError::invalid(
                    format!("{np}[{i}]"),
                    *ns,
                    format!("{NS_ERR_INTRO}{msg}"),
                ));
            }
        }
    }
}

/// `ValidateNonResourceURLPath`.
fn non_resource_url_error(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("must not be empty");
    }
    if path == "/" {
        return None;
    }
    if !path.starts_with('/') {
        return Some("must start with slash");
    }
    if path.contains(' ') {
        return Some("must not contain white-space");
    }
    if path.contains("//") {
        return Some("must not contain double slash");
    }
    let stars = path.matches('*').count();
    if stars > 1 || (stars == 1 && !path.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

fn validate_non_resource_rule(r: &Value, p: &str, errs: &mut Vec<FieldError>) {
    check_verbs(r, p, errs);
    let urls = strings(r, "nonResourceURLs");
    let up = format!("{p}.nonResourceURLs");
    if urls.is_empty() {
        errs.push(FieldError::required(
            up,
            "nonResourceURLs must contain at least one value",
        ));
    } else if urls.contains(&"*") {
        if urls.len() > 1 {
            errs.push(FieldError::invalid(
                up,
                json!(urls),
                "if '*' is present, must not specify other non-resource URLs",
            ));
        }
    } else {
        for (i, u) in urls.iter().enumerate() {
            if let Some(msg) = non_resource_url_error(u) {
                errs.push(FieldError::invalid(format!("{up}[{i}]"), *u, msg));
            }
        }
    }
}

/// `Validate{FlowSchema,PriorityLevelConfiguration}Status`: condition types present and
/// unique.
fn validate_conditions(obj: &Value, errs: &mut Vec<FieldError>) {
    let status = obj.get("status").unwrap_or(&Value::Null);
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in list_of(status, "conditions").iter().enumerate() {
        let t = str_of(c, "type");
        let p = format!("status.conditions[{i}].type");
        if seen.contains(&t) {
            errs.push(FieldError::duplicate(&p, t));
        }
        seen.push(t);
        if t.is_empty() {
            errs.push(FieldError::required(p, "must not be empty"));
        }
    }
}

/// The rules both mandatory flow schemas hold, for the given subject groups.
fn mandatory_rules(groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"kind": "Group", "group": {"name": g}}))
        .collect();
    json!([{"subjects": subjects,
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                           "clusterScope": true, "namespaces": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}])
}

/// The fixed spec of a mandatory flow schema.
fn mandatory_flow_schema(name: &str) -> Option<Value> {
    match name {
        "exempt" => Some(json!({"matchingPrecedence": 1,
            "priorityLevelConfiguration": {"name": "exempt"},
            "rules": mandatory_rules(&["system:masters"])})),
        "catch-all" => Some(json!({"matchingPrecedence": 10000,
            "priorityLevelConfiguration": {"name": "catch-all"},
            "distinguisherMethod": {"type": "ByUser"},
            "rules": mandatory_rules(&["system:unauthenticated", "system:authenticated"])})),
        _ => None,
    }
}

impl Strategy for FlowSchemas {
    /// kube's status strategy here resets the metadata too.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Status => &[&["metadata"], &["spec"]],
            _ => default_reset_fields(part, has_status),
        }
    }

    fn default(&self, obj: &mut Value) {
        if !obj.is_object() {
            return;
        }
        let spec = obj_entry(obj, "spec");
        if spec
            .get("matchingPrecedence")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            == 0
        {
            spec.insert("matchingPrecedence".into(), json!(1000));
        }
    }

    /// `Validate{FlowSchema,PriorityLevelConfiguration}StatusUpdate`: the conditions.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_conditions(new, &mut errs);
        errs
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let name = name_of(obj);
        let spec = spec_of(obj);
        let precedence = int_of(spec, "matchingPrecedence");
        let pp = "spec.matchingPrecedence";
        if precedence <= 0 {
            errs.push(FieldError::invalid(
                pp,
                precedence,
                "must be a positive value",
            ));
        }
        if precedence > 10000 {
            errs.push(FieldError::invalid(
                pp,
                precedence,
                "must not be greater than 10000",
            ));
        }
        if precedence == 1 && name != "exempt" {
            errs.push(FieldError::invalid(
                pp,
                precedence,
                "only the schema named 'exempt' may have matchingPrecedence 1",
            ));
        }
        if let Some(d) = set(spec, "distinguisherMethod") {
            let t = str_of(d, "type");
            if !matches!(t, "ByNamespace" | "ByUser") {
                errs.push(not_supported_rendered(
                    "spec.distinguisherMethod.type".into(),
                    &format!(
                        "flowcontrol.FlowDistinguisherMethod{{Type:{}}}",
                        go_quote(t)
                    ),
                    &["ByNamespace", "ByUser"],
                ));
            }
        }
        let pl = str_of(
            spec.get("priorityLevelConfiguration")
                .unwrap_or(&Value::Null),
            "name",
        );
        let plp = "spec.priorityLevelConfiguration.name";
        if pl.is_empty() {
            errs.push(FieldError::required(plp, "must reference a priority level"));
        } else {
            for msg in is_dns1123_subdomain(pl) {
                errs.push(FieldError::invalid(plp, pl, msg));
            }
        }
        for (i, rule) in list_of(spec, "rules").iter().enumerate() {
            let p = format!("spec.rules[{i}]");
            let subjects = list_of(rule, "subjects");
            if subjects.is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.subjects"),
                    "subjects must contain at least one value",
                ));
            }
            for (j, s) in subjects.iter().enumerate() {
                validate_subject(s, &format!("{p}.subjects[{j}]"), &mut errs);
            }
            let (rr, nr) = (
                list_of(rule, "resourceRules"),
                list_of(rule, "nonResourceRules"),
            );
            if rr.is_empty() && nr.is_empty() {
                errs.push(FieldError::required(
                    &p,
                    "at least one of resourceRules and nonResourceRules has to be non-empty",
                ));
            }
            for (j, r) in rr.iter().enumerate() {
                validate_resource_rule(r, &format!("{p}.resourceRules[{j}]"), &mut errs);
            }
            for (j, r) in nr.iter().enumerate() {
                validate_non_resource_rule(r, &format!("{p}.nonResourceRules[{j}]"), &mut errs);
            }
        }
        if let Some(fixed) = mandatory_flow_schema(name) {
            if without_zeros(spec) != without_zeros(&fixed) {
                errs.push(FieldError::invalid_rendered(
                    "spec",
                    "flowcontrol.FlowSchemaSpec{...}",
                    &format!("spec of '{name}' must equal the fixed value"),
                ));
            }
        }
        validate_conditions(obj, &mut errs);
        errs
    }

    fn printer(&self) -> Printer {
        printers::FS
    }
}

/// `ValidatePriorityLevelQueuingConfiguration`.
fn validate_queuing(q: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let limit = int_of(q, "queueLengthLimit");
    if limit <= 0 {
        errs.push(FieldError::invalid(
            format!("{p}.queueLengthLimit"),
            limit,
            "must be positive",
        ));
    }
    let queues = int_of(q, "queues");
    if queues <= 0 {
        errs.push(FieldError::invalid(
            format!("{p}.queues"),
            queues,
            "must be positive",
        ));
    } else if queues > 10_000_000 {
        errs.push(FieldError::invalid(
            format!("{p}.queues"),
            queues,
            "must not be greater than 10000000",
        ));
    }
    let hand = int_of(q, "handSize");
    let hp = format!("{p}.handSize");
    if hand <= 0 {
        errs.push(FieldError::invalid(hp, hand, "must be positive"));
    } else if hand > queues {
        errs.push(FieldError::invalid(
            hp,
            hand,
            format!("should not be greater than queues ({queues})"),
        ));
    } else if ((queues as f64).log2() * hand as f64).ceil() > 60.0 {
        errs.push(FieldError::invalid(
            hp,
            hand,
            format!("required entropy bits of deckSize {queues} and handSize {hand} should not be greater than 60"),
        ));
    }
}

fn check_percent(obj: &Value, key: &str, p: &str, errs: &mut Vec<FieldError>) {
    if let Some(v) = set(obj, key).and_then(Value::as_i64) {
        if !(0..=100).contains(&v) {
            errs.push(FieldError::invalid(
                format!("{p}.{key}"),
                v,
                "must be between 0 and 100, inclusive",
            ));
        }
    }
}

fn validate_limited(l: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let shares = int_of(l, "nominalConcurrencyShares");
    if shares < 0 {
        errs.push(FieldError::invalid(
            format!("{p}.nominalConcurrencyShares"),
            shares,
            "must be a non-negative integer",
        ));
    }
    let lr = l.get("limitResponse").unwrap_or(&Value::Null);
    let lp = format!("{p}.limitResponse");
    let queuing = set(lr, "queuing");
    match str_of(lr, "type") {
        "Reject" => {
            if queuing.is_some() {
                errs.push(FieldError::forbidden(
                    format!("{lp}.queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => match queuing {
            None => errs.push(FieldError::required(
                format!("{lp}.queuing"),
                "must not be empty if limited.limitResponse.type is Limited",
            )),
            Some(q) => validate_queuing(q, &format!("{lp}.queuing"), errs),
        },
        t => errs.push(FieldError::not_supported(
            format!("{lp}.type"),
            t,
            &["Queue", "Reject"],
        )),
    }
    check_percent(l, "lendablePercent", p, errs);
    if let Some(b) = set(l, "borrowingLimitPercent").and_then(Value::as_i64) {
        if b < 0 {
            errs.push(FieldError::invalid(
                format!("{p}.borrowingLimitPercent"),
                b,
                "if specified, must be a non-negative integer",
            ));
        }
    }
}

impl Strategy for PriorityLevelConfigurations {
    /// kube's status strategy here resets the metadata too.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Status => &[&["metadata"], &["spec"]],
            _ => default_reset_fields(part, has_status),
        }
    }

    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
            return;
        };
        if let Some(e) = spec.get_mut("exempt").filter(|e| e.is_object()) {
            for k in ["nominalConcurrencyShares", "lendablePercent"] {
                if is_unset(e.get(k)) {
                    e[k] = json!(0);
                }
            }
        }
        let Some(l) = spec.get_mut("limited").filter(|l| l.is_object()) else {
            return;
        };
        if is_unset(l.get("nominalConcurrencyShares")) {
            l["nominalConcurrencyShares"] = json!(30);
        }
        if is_unset(l.get("lendablePercent")) {
            l["lendablePercent"] = json!(0);
        }
        if let Some(q) = l
            .pointer_mut("/limitResponse/queuing")
            .filter(|q| q.is_object())
        {
            for (k, v) in [("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)] {
                if q.get(k).and_then(Value::as_i64).unwrap_or(0) == 0 {
                    q[k] = json!(v);
                }
            }
        }
    }

    /// `Validate{FlowSchema,PriorityLevelConfiguration}StatusUpdate`: the conditions.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_conditions(new, &mut errs);
        errs
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let name = name_of(obj);
        let spec = spec_of(obj);
        let t = str_of(spec, "type");
        if (name == "exempt") != (t == "Exempt") {
            errs.push(FieldError::invalid(
                "spec.type",
                t,
                "type must be 'Exempt' if and only if name is 'exempt'",
            ));
        }
        let (limited, exempt) = (set(spec, "limited"), set(spec, "exempt"));
        match t {
            "Exempt" => {
                if limited.is_some() {
                    errs.push(FieldError::forbidden(
                        "spec.limited",
                        "must be nil if the type is not Limited",
                    ));
                }
                if let Some(e) = exempt {
                    let shares = int_of(e, "nominalConcurrencyShares");
                    if shares < 0 {
                        errs.push(FieldError::invalid(
                            "spec.exempt.nominalConcurrencyShares",
                            shares,
                            "must be a non-negative integer",
                        ));
                    }
                    check_percent(e, "lendablePercent", "spec.exempt", &mut errs);
                }
            }
            "Limited" => {
                if exempt.is_some() {
                    errs.push(FieldError::forbidden(
                        "spec.exempt",
                        "must be nil if the type is Limited",
                    ));
                }
                match limited {
                    None => errs.push(FieldError::required(
                        "spec.limited",
                        "must not be empty when type is Limited",
                    )),
                    Some(l) => validate_limited(l, "spec.limited", &mut errs),
                }
            }
            _ => errs.push(FieldError::not_supported(
                "spec.type",
                t,
                &["Exempt", "Limited"],
            )),
        }
        let fixed = match name {
            "exempt" => Some((
                json!({"type": "Exempt"}),
                "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
            )),
            "catch-all" => Some((
                json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                    "lendablePercent": 0, "limitResponse": {"type": "Reject"}}}),
                "spec of 'catch-all' must equal the fixed value",
            )),
            _ => None,
        };
        if let Some((want, why)) = fixed {
            let mut have = without_zeros(spec);
            if name == "exempt" {
                if let Some(h) = have.as_object_mut() {
                    h.remove("exempt");
                }
            }
            if have != without_zeros(&want) {
                errs.push(FieldError::invalid_rendered(
                    "spec",
                    "flowcontrol.PriorityLevelConfigurationSpec{...}",
                    why,
                ));
            }
        }
        validate_conditions(obj, &mut errs);
        errs
    }

    fn printer(&self) -> Printer {
        printers::PL
    }
}
