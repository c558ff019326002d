//! Which requests a dynamic admission hook applies to: the matching shared by admission
//! webhooks (`rules`, `namespaceSelector`, `objectSelector`, `matchPolicy`) and admission
//! policies and their bindings (`matchConstraints` / `matchResources`, which add
//! `resourceNames` and `excludeResourceRules`), as kube's `predicates/rules`,
//! `predicates/namespace`, `predicates/object` and the policies' `matching` decide it.
//!
//! A match names the version of the resource the hook sees ([`Matched`]): the request's own,
//! or, under `matchPolicy: Equivalent`, another served version of the same stored resource
//! (autoscaling/v1 and v2 HorizontalPodAutoscalers, core and events.k8s.io Events), to which
//! the objects are converted ([`Versioned`]).
//!
//! Does not know: how hooks are called or evaluated.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Attributes, Handle, Operation};
use crate::meta::labels::Selector;
use crate::meta::status::Status;
use crate::registry::resource::Resource;

/// One rule (kube's `RuleWithOperations`, or a policy's `NamedRuleWithOperations` with
/// `resourceNames`). Empty lists match nothing, as kube's matcher finds no element in them.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    pub operations: Vec<String>,
    pub groups: Vec<String>,
    pub versions: Vec<String>,
    /// `pods`, `pods/status`, `pods/*`, `*`, `*/status`, `*/*`.
    pub resources: Vec<String>,
    /// `Cluster`, `Namespaced`, `*`; `None` is `*`.
    pub scope: Option<String>,
    /// Policies only: the names the rule is limited to (empty: all).
    pub names: Vec<String>,
}

/// The strings of a JSON list (none when absent).
pub(crate) fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// kube's matchers single out Namespaces by group and resource: a Namespace is cluster-scoped
/// but its requests name it as their namespace, and its own labels select it.
const NAMESPACES: &str = "namespaces";

fn is_namespace(group: &str, resource: &str) -> bool {
    group.is_empty() && resource == NAMESPACES
}

fn any_or(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == "*" || x == s)
}

/// The resource a rule is matched against: the request's, or an equivalent one.
pub struct Target<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
}

impl Rule {
    pub fn parse(v: &Value) -> Rule {
        Rule {
            operations: strings(v.get("operations")),
            groups: strings(v.get("apiGroups")),
            versions: strings(v.get("apiVersions")),
            resources: strings(v.get("resources")),
            scope: v.get("scope").and_then(Value::as_str).map(str::to_string),
            names: strings(v.get("resourceNames")),
        }
    }

    /// kube's `rules.Matcher.Matches` (scope, operation, group, version, resource and
    /// subresource) for the request `a` as a request for `t`.
    pub fn matches(&self, a: &Attributes, t: &Target<'_>) -> bool {
        let ns = is_namespace(t.group, t.resource);
        let scope = match self.scope.as_deref() {
            None | Some("*") => true,
            Some("Namespaced") => !ns && !a.namespace.is_empty(),
            Some("Cluster") => ns || a.namespace.is_empty(),
            Some(_) => false,
        };
        scope
            && any_or(&self.operations, a.operation.as_str())
            && any_or(&self.groups, t.group)
            && any_or(&self.versions, t.version)
            && self.resources.iter().any(|r| {
                let (res, sub) = r.split_once('/').unwrap_or((r, ""));
                (res == "*" || res == t.resource) && (sub == "*" || sub == a.subresource)
            })
    }
}

/// `matchPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchPolicy {
    Exact,
    Equivalent,
}

/// What a webhook or policy matches.
#[derive(Clone, Debug)]
pub struct Criteria {
    pub rules: Vec<Rule>,
    /// Policies' `excludeResourceRules`.
    pub exclude: Vec<Rule>,
    pub namespace_selector: Selector,
    pub object_selector: Selector,
    pub policy: MatchPolicy,
    /// Policies' and bindings' criteria: no `resourceRules` match every resource (kube's
    /// policy `Matcher.Matches`); a webhook without rules matches nothing.
    pub empty_matches_all: bool,
}

/// The version of the matched resource a hook sees.
#[derive(Clone)]
pub struct Matched {
    pub resource: Arc<Resource>,
}

fn selector(v: Option<&Value>) -> Result<Selector, String> {
    match v {
        // An absent selector matches everything (the API defaults it to `{}`).
        None | Some(Value::Null) => Ok(Selector::everything()),
        Some(s) => Selector::from_label_selector(s),
    }
}

impl Criteria {
    /// The criteria of a webhook (`rules`, selectors, `matchPolicy`, Equivalent by default
    /// as in admissionregistration/v1).
    pub fn of_webhook(hook: &Value) -> Result<Criteria, String> {
        Criteria::parse(hook, "rules")
    }

    /// The criteria of a policy's `matchConstraints` or a binding's `matchResources`.
    pub fn of_match_resources(m: &Value) -> Result<Criteria, String> {
        let mut c = Criteria::parse(m, "resourceRules")?;
        c.exclude = m
            .get("excludeResourceRules")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(Rule::parse).collect())
            .unwrap_or_default();
        c.empty_matches_all = true;
        Ok(c)
    }

    fn parse(v: &Value, rules: &str) -> Result<Criteria, String> {
        Ok(Criteria {
            rules: v
                .get(rules)
                .and_then(Value::as_array)
                .map(|a| a.iter().map(Rule::parse).collect())
                .unwrap_or_default(),
            exclude: Vec::new(),
            namespace_selector: selector(v.get("namespaceSelector"))?,
            object_selector: selector(v.get("objectSelector"))?,
            policy: match v.get("matchPolicy").and_then(Value::as_str) {
                Some("Exact") => MatchPolicy::Exact,
                _ => MatchPolicy::Equivalent,
            },
            empty_matches_all: false,
        })
    }

    /// Whether the request matches; the version of the resource the hook sees when it does.
    /// As kube: the selectors first (an error finding the namespace counts only when the
    /// rules match), then `excludeResourceRules`, then the rules for the request's own
    /// version, then (Equivalent) for every other version of the stored resource.
    pub async fn matches(&self, a: &Attributes, h: &Handle) -> Result<Option<Matched>, Status> {
        let ns = namespace_selector_matches(&self.namespace_selector, a, h).await;
        if matches!(ns, Ok(false)) {
            return Ok(None);
        }
        if !self.object_selector.is_empty()
            && !a
                .object
                .iter()
                .chain(a.old_object.iter())
                .any(|o| self.object_selector.matches_object(o))
        {
            return Ok(None);
        }
        if self.matched(&self.exclude, a, h, false).is_some() {
            return Ok(None);
        }
        let m = if self.rules.is_empty() && self.empty_matches_all {
            Matched {
                resource: a.resource.clone(),
            }
        } else {
            let Some(m) = self.matched(&self.rules, a, h, true) else {
                return Ok(None);
            };
            m
        };
        ns?;
        Ok(Some(m))
    }

    fn matched(&self, rules: &[Rule], a: &Attributes, h: &Handle, names: bool) -> Option<Matched> {
        let own = Target {
            group: &a.resource.group,
            version: &a.resource.version,
            resource: &a.resource.resource,
        };
        for r in rules {
            if r.matches(a, &own) && (!names || r.names.is_empty() || r.names.contains(&a.name)) {
                return Some(Matched {
                    resource: a.resource.clone(),
                });
            }
        }
        // Equivalent versions share the plural: a rule naming neither it nor `*` matches
        // none of them, so most requests never look the equivalents up.
        let plural = a.resource.resource.as_str();
        if self.policy == MatchPolicy::Exact
            || !rules.iter().any(|r| {
                r.resources
                    .iter()
                    .any(|x| matches!(x.split('/').next(), Some(p) if p == "*" || p == plural))
            })
        {
            return None;
        }
        let eq = equivalents(h, &a.resource, &a.subresource);
        for r in rules {
            for e in &eq {
                let t = Target {
                    group: &e.group,
                    version: &e.version,
                    resource: &e.resource,
                };
                if r.matches(a, &t) {
                    return Some(Matched {
                        resource: e.clone(),
                    });
                }
            }
        }
        None
    }
}

/// The other served versions of the resource `info` is a version of (the same stored
/// resource: storage group and plural), serving `subresource` too; kube's
/// `EquivalentResourcesFor` without the resource itself.
pub fn equivalents(h: &Handle, info: &Resource, subresource: &str) -> Vec<Arc<Resource>> {
    let cat = h.store.registry().snapshot();
    let mut out: Vec<Arc<Resource>> = cat
        .all()
        .iter()
        .filter(|r| {
            r.resource == info.resource
                && r.storage_group == info.storage_group
                && !(r.group == info.group && r.version == info.version)
                && match subresource {
                    "" => true,
                    "status" => r.has_status,
                    "scale" => r.scale.is_some(),
                    _ => true,
                }
        })
        .cloned()
        .collect();
    out.sort_by(|x, y| (&x.group, &x.version).cmp(&(&y.group, &y.version)));
    out
}

/// kube's `GetNamespaceLabels` + `MatchNamespaceSelector`: cluster-scoped requests (other
/// than for Namespaces) always match; a Namespace being created or updated is matched by
/// its own labels; a namespace that does not exist is 404.
async fn namespace_selector_matches(
    sel: &Selector,
    a: &Attributes,
    h: &Handle,
) -> Result<bool, Status> {
    let is_namespace = is_namespace(&a.resource.group, &a.resource.resource);
    let ns_name = if is_namespace {
        a.name.as_str()
    } else {
        a.namespace.as_str()
    };
    if ns_name.is_empty() && !is_namespace {
        return Ok(true);
    }
    if sel.is_empty() {
        return Ok(true);
    }
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    if is_namespace
        && a.subresource.is_empty()
        && matches!(a.operation, Operation::Create | Operation::Update)
    {
        let labels = a
            .object
            .as_ref()
            .and_then(|o| o.pointer("/metadata/labels"))
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(Map::new));
        return Ok(sel.matches(labels));
    }
    match namespace_labels(h, ns_name).await {
        Some(labels) => Ok(sel.matches(&labels)),
        None => Err(Status::not_found(
            crate::meta::status::GroupResource {
                group: "",
                resource: "namespaces",
            },
            ns_name,
        )),
    }
}

/// The labels of namespace `name` from this replica's cache, then (as kube falls back to a
/// direct read when its informer lags) from storage.
pub async fn namespace_labels(h: &Handle, name: &str) -> Option<Map<String, Value>> {
    let labels = |ns: Value| {
        ns.pointer("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    if let Some(ns) = h.get("", "v1", "namespaces", None, name).await {
        return Some(labels(ns));
    }
    let info = h.store.registry().get("", "v1", "namespaces")?;
    let scope = crate::registry::store::Scope {
        info: &info,
        namespace: None,
    };
    h.store
        .get(scope, name, crate::registry::store::ReadAt::Latest)
        .await
        .ok()
        .map(labels)
}

/// The request's objects as version `r` of their resource serves them (the store holds them
/// in the storage version).
pub struct Versioned {
    pub object: Option<Value>,
    pub old_object: Option<Value>,
}

/// Converts a storage-version object to `r`'s version.
pub fn to_version(r: &Resource, obj: &Value) -> Result<Value, Status> {
    let mut out = obj.clone();
    if r.converts() {
        r.strategy.from_storage(&mut out)?;
    }
    Ok(out)
}

/// Converts an object of `r`'s version back to the storage version.
pub fn to_storage(r: &Resource, obj: &mut Value) -> Result<(), Status> {
    if r.converts() {
        r.strategy.to_storage(obj)?;
    }
    Ok(())
}

impl Versioned {
    pub fn of(a: &Attributes, r: &Resource) -> Result<Versioned, Status> {
        Ok(Versioned {
            object: a.object.as_ref().map(|o| to_version(r, o)).transpose()?,
            old_object: a
                .old_object
                .as_ref()
                .map(|o| to_version(r, o))
                .transpose()?,
        })
    }
}
