//! LimitRanges and ResourceQuotas (core/v1): `SetDefaults_LimitRangeItem`, `ValidateLimitRange`,
//! `ValidateResourceQuota` and its update (scopes are immutable), with the resource-name rules
//! of kube's `core/helper` they share; and their printers.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::quantity::Quantity;
use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::is_qualified_name;
use crate::registry::builtin::checks::{list_of, str_of};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers as p, Printer};

const STANDARD: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

const INTEGER: &[&str] = &[
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

fn quota_huge_pages(k: &str) -> bool {
    k.starts_with("hugepages-") || k.starts_with("requests.hugepages-")
}

fn is_native(k: &str) -> bool {
    !k.contains('/') || k.contains("kubernetes.io/")
}

/// `helper.IsExtendedResourceName`.
fn is_extended(k: &str) -> bool {
    !is_native(k)
        && !k.starts_with("requests.")
        && is_qualified_name(&format!("requests.{k}")).is_empty()
}

/// `helper.IsOvercommitAllowed`.
fn overcommit_allowed(k: &str) -> bool {
    is_native(k) && !k.starts_with("hugepages-")
}

/// `validateResourceName`: a qualified name, standard unless prefixed.
fn resource_name(k: &str, path: &str, errs: &mut Vec<FieldError>) -> bool {
    let msgs = is_qualified_name(k);
    if !msgs.is_empty() {
        errs.extend(msgs.into_iter().map(|m| FieldError::invalid(path, k, m)));
        return false;
    }
    if !k.contains('/') && !(STANDARD.contains(&k) || quota_huge_pages(k)) {
        errs.push(FieldError::invalid(
            path,
            k,
            "must be a standard resource type or fully qualified",
        ));
        return false;
    }
    true
}

/// `validateContainerResourceName`.
fn container_resource_name(k: &str, path: &str, errs: &mut Vec<FieldError>) {
    resource_name(k, path, errs);
    if !k.contains('/') {
        if !matches!(k, "cpu" | "memory" | "ephemeral-storage") && !k.starts_with("hugepages-") {
            errs.push(FieldError::invalid(
                path,
                k,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(k) && !is_extended(k) {
        errs.push(FieldError::invalid(
            path,
            k,
            "doesn't follow extended resource name standard",
        ));
    }
}

/// `ValidateResourceQuantityValue`.
pub(super) fn quantity_value(k: &str, q: &Quantity, path: &str, errs: &mut Vec<FieldError>) {
    if q.is_negative() {
        errs.push(FieldError::invalid(
            path,
            q.string(),
            "must be greater than or equal to 0",
        ));
    }
    if (INTEGER.contains(&k) || is_extended(k)) && q.milli() % 1000 != 0 {
        errs.push(FieldError::invalid_rendered(
            path,
            &q.go_repr(),
            "must be an integer",
        ));
    }
}

/// A ResourceList's entries in a stable (sorted) order, parsed.
pub(super) fn resources(v: &Value) -> Vec<(&str, Quantity)> {
    let mut out: Vec<(&str, Quantity)> = v
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.as_str(), Quantity::of(q)?)))
        .collect();
    out.sort_by(|a, b| a.0.cmp(b.0));
    out
}

pub struct LimitRanges;

impl Strategy for LimitRanges {
    fn allow_create_on_update(&self) -> bool {
        true
    }

    /// A LimitRange created without a name gets a UUID as its name (before any
    /// generateName applies); the object's uid, already settled, serves.
    fn prepare_for_create(&self, obj: &mut Value) {
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
            return;
        };
        if meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            if let Some(uid) = meta.get("uid").cloned() {
                meta.insert("name".into(), uid);
            }
        }
    }

    /// `SetDefaults_LimitRangeItem`: a Container item's default limit comes from its max,
    /// its default request from the default limit, else from its min.
    fn default(&self, obj: &mut Value) {
        let Some(limits) = obj
            .pointer_mut("/spec/limits")
            .and_then(Value::as_array_mut)
        else {
            return;
        };
        for item in limits.iter_mut().filter_map(Value::as_object_mut) {
            if item.get("type").and_then(Value::as_str) != Some("Container") {
                continue;
            }
            let map = |item: &Map<String, Value>, f: &str| -> Map<String, Value> {
                item.get(f)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default()
            };
            let mut default = map(item, "default");
            for (k, v) in map(item, "max") {
                default.entry(k).or_insert(v);
            }
            let mut request = map(item, "defaultRequest");
            for (k, v) in default.iter().chain(map(item, "min").iter()) {
                request.entry(k.clone()).or_insert(v.clone());
            }
            for (f, m) in [("default", default), ("defaultRequest", request)] {
                if !m.is_empty() {
                    item.insert(f.into(), Value::Object(m));
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_limit_range(obj)
    }
}

/// `ValidateLimitRange` (after metadata).
fn validate_limit_range(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut types: Vec<&str> = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    for (i, item) in list_of(spec, "limits").iter().enumerate() {
        let ip = format!("spec.limits[{i}]");
        let t = str_of(item, "type");
        let tp = format!("{ip}.type");
        let msgs = is_qualified_name(t);
        if !msgs.is_empty() {
            errs.extend(msgs.into_iter().map(|m| FieldError::invalid(&tp, t, m)));
        } else if !t.contains('/') && !matches!(t, "Pod" | "Container" | "PersistentVolumeClaim") {
            errs.push(FieldError::invalid(
                &tp,
                t,
                "must be a standard limit type or fully qualified",
            ));
        }
        if types.contains(&t) {
            errs.push(FieldError::duplicate(&tp, t));
        }
        types.push(t);
        let pod_or_container = matches!(t, "Pod" | "Container");
        let check_names = |field: &str, errs: &mut Vec<FieldError>| {
            let list = resources(item.get(field).unwrap_or(&Value::Null));
            for (k, _) in &list {
                let path = format!("{ip}.{field}[{k}]");
                if pod_or_container {
                    container_resource_name(k, &path, errs);
                } else {
                    resource_name(k, &path, errs);
                }
            }
            list
        };
        let max = check_names("max", &mut errs);
        let min = check_names("min", &mut errs);
        let (mut default, mut request) = (Vec::new(), Vec::new());
        if t == "Pod" {
            for f in ["default", "defaultRequest"] {
                if item
                    .get(f)
                    .and_then(Value::as_object)
                    .is_some_and(|m| !m.is_empty())
                {
                    errs.push(FieldError::forbidden(
                        format!("{ip}.{f}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            default = check_names("default", &mut errs);
            request = check_names("defaultRequest", &mut errs);
        }
        if t == "PersistentVolumeClaim"
            && !min.iter().chain(max.iter()).any(|(k, _)| *k == "storage")
        {
            errs.push(FieldError::required(
                format!("{ip}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        let ratios = check_names("maxLimitRequestRatio", &mut errs);
        let mut keys: Vec<&str> = [&max, &min, &default, &request, &ratios]
            .iter()
            .flat_map(|l| l.iter().map(|(k, _)| *k))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let find = |l: &[(&str, Quantity)], k: &str| {
            l.iter().find(|(n, _)| *n == k).map(|(_, q)| q.clone())
        };
        for k in keys {
            let (mn, mx, df, rq, ratio) = (
                find(&min, k),
                find(&max, k),
                find(&default, k),
                find(&request, k),
                find(&ratios, k),
            );
            let bad = |field: &str, shown: &Quantity, detail: String| {
                FieldError::invalid_rendered(
                    format!("{ip}.{field}[{k}]"),
                    &shown.go_repr(),
                    &detail,
                )
            };
            // (a, its name, b, its name, field, a is the value shown): a must not exceed b.
            let order = [
                (&mn, "min", &mx, "max", "min", true),
                (&mn, "min", &rq, "default request", "defaultRequest", false),
                (&rq, "default request", &mx, "max", "defaultRequest", true),
                (
                    &rq,
                    "default request",
                    &df,
                    "default limit",
                    "defaultRequest",
                    true,
                ),
                (&mn, "min", &df, "default", "default", true),
                (&df, "default", &mx, "max", "default", false),
            ];
            for (a, a_name, b, b_name, field, show_a) in order {
                if let (Some(a), Some(b)) = (a, b) {
                    if a.cmp(b) == Ordering::Greater {
                        let detail = format!(
                            "{a_name} value {} is greater than {b_name} value {}",
                            a.string(),
                            b.string()
                        );
                        errs.push(bad(field, if show_a { a } else { b }, detail));
                    }
                }
            }
            if let Some(r) = &ratio {
                if r.milli() < 1000 {
                    errs.push(bad(
                        "maxLimitRequestRatio",
                        r,
                        format!("ratio {} is less than 1", r.string()),
                    ));
                }
                if let (Some(a), Some(b)) = (&mn, &mx) {
                    let (rv, av, bv) = (
                        r.milli() as f64 / 1000.0,
                        a.milli() as f64,
                        b.milli() as f64,
                    );
                    let limit = bv / av;
                    if rv > limit {
                        let shown = if limit.is_infinite() {
                            "+Inf".to_string()
                        } else {
                            format!("{limit:.6}")
                        };
                        errs.push(bad(
                            "maxLimitRequestRatio",
                            r,
                            format!("ratio {} is greater than max/min = {shown}", r.string()),
                        ));
                    }
                }
            }
            if let (Some(d), Some(r)) = (&df, &rq) {
                if !overcommit_allowed(k) && d.cmp(r) != Ordering::Equal {
                    errs.push(bad(
                        "defaultRequest",
                        r,
                        format!(
                            "default value {} must equal to defaultRequest value {} in {k}",
                            d.string(),
                            r.string()
                        ),
                    ));
                }
            }
        }
    }
    errs
}

pub struct ResourceQuotas;

impl Strategy for ResourceQuotas {
    fn quota(&self) -> Option<&'static dyn crate::registry::quota::Evaluator> {
        Some(&crate::registry::quota::Legacy("resourcequotas"))
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = quota_spec(obj);
        quota_status(obj, &mut errs);
        errs
    }

    /// `ValidateResourceQuotaUpdate` (scopes are immutable); a status write is checked by
    /// `ValidateResourceQuotaStatusUpdate`'s rules, which the copied-over status passes.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = quota_spec(new);
        fn scopes(o: &Value) -> Vec<&str> {
            let mut s: Vec<&str> = list_of(o.get("spec").unwrap_or(&Value::Null), "scopes")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            s.sort_unstable();
            s.dedup();
            s
        }
        if scopes(new) != scopes(old) {
            errs.push(FieldError::invalid_rendered(
                "spec.scopes",
                &scopes_repr(new.pointer("/spec/scopes")),
                "field is immutable",
            ));
        }
        quota_status(new, &mut errs);
        errs
    }

    /// `ValidateResourceQuotaStatusUpdate`: a resourceVersion, then the status lists.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        crate::registry::builtin::checks::resource_version_required(new, &mut errs);
        quota_status(new, &mut errs);
        errs
    }

    fn printer(&self) -> Printer {
        p::QUOTA
    }
}

/// Go's `%#v` of a `[]core.ResourceQuotaScope`.
fn scopes_repr(v: Option<&Value>) -> String {
    match v.and_then(Value::as_array) {
        None => "[]core.ResourceQuotaScope(nil)".into(),
        Some(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|s| go_quote(s.as_str().unwrap_or("")))
                .collect();
            format!("[]core.ResourceQuotaScope{{{}}}", parts.join(", "))
        }
    }
}

/// `ValidateResourceQuotaResourceName` and `ValidateResourceQuantityValue` over a list.
fn quota_list(v: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    for (k, q) in resources(v.unwrap_or(&Value::Null)) {
        let p = format!("{path}[{k}]");
        resource_name(k, &p, errs);
        if !k.contains('/') && !(QUOTA.contains(&k) || quota_huge_pages(k)) {
            errs.push(FieldError::invalid(
                &p,
                k,
                "must be a standard resource for quota",
            ));
        }
        quantity_value(k, &q, &p, errs);
    }
}

const QUOTA: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

const SCOPES: &[&str] = &[
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

/// `helper.IsResourceQuotaScopeValidForResource`.
fn scope_fits(scope: &str, k: &str) -> bool {
    let pod_count = k == "pods";
    let pod_compute = matches!(
        k,
        "cpu" | "memory" | "limits.cpu" | "limits.memory" | "requests.cpu" | "requests.memory"
    );
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => pod_count || pod_compute,
        "BestEffort" => pod_count,
        "VolumeAttributesClass" => matches!(k, "persistentvolumeclaims" | "requests.storage"),
        _ => true,
    }
}

fn conflicting(scopes: &[&str]) -> usize {
    [
        ["BestEffort", "NotBestEffort"],
        ["Terminating", "NotTerminating"],
    ]
    .iter()
    .filter(|pair| pair.iter().all(|s| scopes.contains(s)))
    .count()
}

/// `ValidateResourceQuotaSpec`: hard resources, scopes and the scope selector.
fn quota_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    quota_list(spec.get("hard"), "spec.hard", &mut errs);
    let hard: Vec<&str> = resources(spec.get("hard").unwrap_or(&Value::Null))
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| QUOTA.contains(k) || quota_huge_pages(k))
        .collect();
    let scopes_shown = || scopes_repr(spec.get("scopes"));
    let scopes: Vec<&str> = list_of(spec, "scopes")
        .iter()
        .map(|s| s.as_str().unwrap_or(""))
        .collect();
    for scope in &scopes {
        if !SCOPES.contains(scope) {
            errs.push(FieldError::invalid_rendered(
                "spec.scopes",
                &scopes_shown(),
                "unsupported scope",
            ));
        }
        for k in &hard {
            if !scope_fits(scope, k) {
                errs.push(FieldError::invalid_rendered(
                    "spec.scopes",
                    &scopes_shown(),
                    "unsupported scope applied to resource",
                ));
            }
        }
    }
    for _ in 0..conflicting(&scopes) {
        errs.push(FieldError::invalid_rendered(
            "spec.scopes",
            &scopes_shown(),
            "conflicting scopes",
        ));
    }
    let Some(selector) = spec.get("scopeSelector").filter(|v| !v.is_null()) else {
        return errs;
    };
    let p = "spec.scopeSelector.matchExpressions";
    let exprs = list_of(selector, "matchExpressions");
    let mut names = Vec::new();
    for req in exprs {
        let scope = str_of(req, "scopeName");
        let op = str_of(req, "operator");
        if !SCOPES.contains(&scope) {
            errs.push(FieldError::invalid(
                format!("{p}.scopeName"),
                scope,
                "unsupported scope",
            ));
        }
        for k in &hard {
            if !scope_fits(scope, k) {
                errs.push(FieldError::invalid_rendered(
                    p,
                    &selector_repr(exprs),
                    "unsupported scope applied to resource",
                ));
            }
        }
        if matches!(
            scope,
            "BestEffort"
                | "NotBestEffort"
                | "Terminating"
                | "NotTerminating"
                | "CrossNamespacePodAffinity"
        ) && op != "Exists"
        {
            errs.push(FieldError::invalid(
                format!("{p}.operator"),
                op,
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        let values = list_of(req, "values");
        match op {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                format!("{p}.values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "In" | "NotIn" => {}
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::invalid(
                format!("{p}.values"),
                Value::Array(values.to_vec()),
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )),
            "Exists" | "DoesNotExist" => {}
            _ => errs.push(FieldError::invalid(
                format!("{p}.operator"),
                op,
                "not a valid selector operator",
            )),
        }
        names.push(scope);
    }
    for _ in 0..conflicting(&names) {
        errs.push(FieldError::invalid_rendered(
            p,
            &scopes_shown(),
            "conflicting scopes",
        ));
    }
    errs
}

/// Go's `%#v` of a `core.ScopeSelector`.
fn selector_repr(exprs: &[Value]) -> String {
    let items: Vec<String> = exprs
        .iter()
        .map(|r| {
            let values = match r.get("values").and_then(Value::as_array) {
                None => "[]string(nil)".to_string(),
                Some(v) => {
                    let parts: Vec<String> =
                        v.iter().map(|s| go_quote(s.as_str().unwrap_or(""))).collect();
                    format!("[]string{{{}}}", parts.join(", "))
                }
            };
            format!(
                "core.ScopedResourceSelectorRequirement{{ScopeName:{}, Operator:{}, Values:{values}}}",
                go_quote(str_of(r, "scopeName")),
                go_quote(str_of(r, "operator"))
            )
        })
        .collect();
    format!(
        "core.ScopeSelector{{MatchExpressions:[]core.ScopedResourceSelectorRequirement{{{}}}}}",
        items.join(", ")
    )
}

/// `ValidateResourceQuotaStatus`.
fn quota_status(obj: &Value, errs: &mut Vec<FieldError>) {
    let status = obj.get("status").unwrap_or(&Value::Null);
    quota_list(status.get("hard"), "status.hard", errs);
    quota_list(status.get("used"), "status.used", errs);
}
