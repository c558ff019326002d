//! ResourceQuota accounting, as kube's quota evaluators (`pkg/quota/v1/evaluator/core`) count:
//! what an object uses (`count/<resource>[.<group>]` for every resource, plus the legacy and
//! compute names of pods, services and persistent volume claims), which quotas an object is
//! charged against (their hard names and scopes), the constraints a quota puts on pods
//! (containers must state the requests and limits it tracks), and quantities summed and
//! compared as `resource.Quantity`.
//!
//! A resource's strategy names its [`Evaluator`]; resources without one are counted by
//! `count/...` only. Used by the ResourceQuota admission plugin (which charges usage in the
//! same transaction as the write) and by the leader's recalculation loop.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::registry::builtin::core::quantity::Quantity;

/// Usage by resource name, quantities as kube prints them.
pub type Usage = BTreeMap<String, Quantity>;

/// A resource's quota evaluator (kube's `quota.Evaluator`), beyond object counts.
pub trait Evaluator: Send + Sync {
    /// What `obj` uses (object counts included).
    fn usage(&self, obj: &Value) -> Usage;

    /// Whether quota resource `name` is one this evaluator accounts.
    fn matches_name(&self, name: &str) -> bool;

    /// Whether `obj` is in the quota scope `scope` (with a scopeSelector's operator and
    /// values); resources without scopes match every one.
    fn in_scope(&self, _scope: &str, _op: &str, _values: &[String], _obj: &Value) -> bool {
        true
    }

    /// kube's `Constraints`: what a quota tracking `required` demands of `obj`.
    fn constraints(&self, _required: &[&str], _obj: &Value) -> Result<(), String> {
        Ok(())
    }
}

fn one() -> Quantity {
    Quantity::parse("1").unwrap_or_else(Quantity::zero)
}

/// `count/configmaps`, `count/deployments.apps`.
pub fn count_name(group: &str, resource: &str) -> String {
    if group.is_empty() {
        format!("count/{resource}")
    } else {
        format!("count/{resource}.{group}")
    }
}

/// What `obj` of `group`/`resource` uses.
pub fn usage(group: &str, resource: &str, eval: Option<&dyn Evaluator>, obj: &Value) -> Usage {
    match eval {
        Some(e) => e.usage(obj),
        None => Usage::from([(count_name(group, resource), one())]),
    }
}

/// Whether hard name `name` is accounted for objects of `group`/`resource`.
pub fn matches_name(group: &str, resource: &str, eval: Option<&dyn Evaluator>, name: &str) -> bool {
    name == count_name(group, resource) || eval.is_some_and(|e| e.matches_name(name))
}

/// Whether quota `q` applies to `obj` (its scopes and scope selector).
pub fn quota_matches(q: &Value, eval: Option<&dyn Evaluator>, obj: &Value) -> bool {
    let Some(e) = eval else {
        return true;
    };
    let scopes = q.pointer("/spec/scopes").and_then(Value::as_array);
    for s in scopes.into_iter().flatten().filter_map(Value::as_str) {
        if !e.in_scope(s, "Exists", &[], obj) {
            return false;
        }
    }
    let sel = q
        .pointer("/spec/scopeSelector/matchExpressions")
        .and_then(Value::as_array);
    for m in sel.into_iter().flatten() {
        let scope = m.get("scopeName").and_then(Value::as_str).unwrap_or("");
        let op = m.get("operator").and_then(Value::as_str).unwrap_or("");
        let values: Vec<String> = m
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        if !e.in_scope(scope, op, &values, obj) {
            return false;
        }
    }
    true
}

/// A ResourceList (`{"cpu": "1"}`) as quantities; unparsable entries are skipped.
pub fn list(v: Option<&Value>) -> Usage {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.clone(), Quantity::of(q)?)))
        .collect()
}

/// A usage as a ResourceList.
pub fn to_json(u: &Usage) -> Value {
    Value::Object(
        u.iter()
            .map(|(k, q)| (k.clone(), Value::String(q.string())))
            .collect(),
    )
}

/// kube's `prettyPrint`: `a=1,b=2Gi`, by name.
pub fn pretty(u: &Usage) -> String {
    u.iter()
        .map(|(k, q)| format!("{k}={}", q.string()))
        .collect::<Vec<_>>()
        .join(",")
}

/// `a + b` per name.
pub fn add(a: &Usage, b: &Usage) -> Usage {
    let mut out = a.clone();
    for (k, q) in b {
        let sum = match out.get(k) {
            Some(have) => have.add(q),
            None => q.clone(),
        };
        out.insert(k.clone(), sum);
    }
    out
}

/// kube's `SubtractWithNonNegativeResult`.
pub fn sub_non_negative(a: &Usage, b: &Usage) -> Usage {
    a.iter()
        .map(|(k, q)| {
            let d = match b.get(k) {
                Some(o) => q.sub(o),
                None => q.clone(),
            };
            let d = if d.is_negative() { Quantity::zero() } else { d };
            (k.clone(), d)
        })
        .collect()
}

// ---- pods ----

const POD_NAMES: &[&str] = &[
    "pods",
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
];

/// Pods: object counts and compute resources of non-terminal pods (kube's pod evaluator).
pub struct Pods;

/// The containers (`containers`, `initContainers`) of a pod.
pub fn containers<'a>(obj: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    obj.pointer(&format!("/spec/{key}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The larger of each quantity of `acc` and `more` (kube's `maxResourceList`).
fn max_into(acc: &mut Usage, more: &Usage) {
    for (k, q) in more {
        if acc.get(k).is_none_or(|v| q.cmp(v).is_gt()) {
            acc.insert(k.clone(), q.clone());
        }
    }
}

/// A pod's `requests` or `limits` as kube's `PodRequests` / `PodLimits` sum them without
/// overhead: the containers' sum (restartable init containers, the sidecars, included)
/// against the largest init container (with the sidecars started before it).
pub fn pod_total(pod: &Value, what: &str) -> Usage {
    let own = |c: &Value| list(c.pointer(&format!("/resources/{what}")));
    let mut total = Usage::new();
    for c in containers(pod, "containers") {
        total = add(&total, &own(c));
    }
    let (mut sidecars, mut init) = (Usage::new(), Usage::new());
    for c in containers(pod, "initContainers") {
        let mine = own(c);
        let effective = if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            total = add(&total, &mine);
            sidecars = add(&sidecars, &mine);
            sidecars.clone()
        } else {
            add(&mine, &sidecars)
        };
        max_into(&mut init, &effective);
    }
    max_into(&mut total, &init);
    total
}

/// The pod's requests or limits as quota counts them: [`pod_total`] plus the overhead.
fn pod_resources(obj: &Value, what: &str) -> Usage {
    add(&pod_total(obj, what), &list(obj.pointer("/spec/overhead")))
}

fn terminal(obj: &Value) -> bool {
    matches!(
        obj.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded") | Some("Failed")
    )
}

fn best_effort(obj: &Value) -> bool {
    containers(obj, "containers")
        .chain(containers(obj, "initContainers"))
        .all(|c| {
            ["requests", "limits"].iter().all(|w| {
                let l = list(c.pointer(&format!("/resources/{w}")));
                !l.contains_key("cpu") && !l.contains_key("memory")
            })
        })
}

impl Evaluator for Pods {
    fn usage(&self, obj: &Value) -> Usage {
        if terminal(obj) {
            return Usage::new();
        }
        let mut u = Usage::from([
            ("pods".to_string(), one()),
            ("count/pods".to_string(), one()),
        ]);
        for (k, q) in pod_resources(obj, "requests") {
            match k.as_str() {
                "cpu" | "memory" | "ephemeral-storage" => {
                    u.insert(k.clone(), q.clone());
                    u.insert(format!("requests.{k}"), q);
                }
                _ => {
                    u.insert(format!("requests.{k}"), q);
                }
            }
        }
        for (k, q) in pod_resources(obj, "limits") {
            if ["cpu", "memory", "ephemeral-storage"].contains(&k.as_str()) {
                u.insert(format!("limits.{k}"), q);
            }
        }
        u
    }

    fn matches_name(&self, name: &str) -> bool {
        POD_NAMES.contains(&name) || name.starts_with("requests.") || name.starts_with("hugepages-")
    }

    fn in_scope(&self, scope: &str, op: &str, values: &[String], obj: &Value) -> bool {
        let deadline = obj
            .pointer("/spec/activeDeadlineSeconds")
            .and_then(Value::as_i64)
            .is_some_and(|d| d >= 0);
        match scope {
            "Terminating" => deadline,
            "NotTerminating" => !deadline,
            "BestEffort" => best_effort(obj),
            "NotBestEffort" => !best_effort(obj),
            "PriorityClass" => {
                let class = obj
                    .pointer("/spec/priorityClassName")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match op {
                    "In" => values.iter().any(|v| v == class),
                    "NotIn" => !values.iter().any(|v| v == class),
                    "Exists" => !class.is_empty(),
                    "DoesNotExist" => class.is_empty(),
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn constraints(&self, required: &[&str], obj: &Value) -> Result<(), String> {
        const CHECKED: &[&str] = &[
            "requests.cpu",
            "requests.memory",
            "limits.cpu",
            "limits.memory",
            "cpu",
            "memory",
        ];
        let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for c in containers(obj, "containers").chain(containers(obj, "initContainers")) {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            let req = list(c.pointer("/resources/requests"));
            let lim = list(c.pointer("/resources/limits"));
            for r in required.iter().filter(|r| CHECKED.contains(r)) {
                let have = match *r {
                    "requests.cpu" | "cpu" => req.contains_key("cpu"),
                    "requests.memory" | "memory" => req.contains_key("memory"),
                    "limits.cpu" => lim.contains_key("cpu"),
                    _ => lim.contains_key("memory"),
                };
                if !have {
                    let names = missing.entry(r).or_default();
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_string());
                    }
                }
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let parts: Vec<String> = missing
            .into_iter()
            .map(|(r, mut names)| {
                names.sort();
                format!("{r} for: {}", names.join(","))
            })
            .collect();
        Err(format!("must specify {}", parts.join("; ")))
    }
}

/// Services: `services`, `services.loadbalancers`, `services.nodeports`.
pub struct Services;

impl Evaluator for Services {
    fn usage(&self, obj: &Value) -> Usage {
        let mut u = Usage::from([
            ("services".to_string(), one()),
            ("count/services".to_string(), one()),
        ]);
        let ty = obj
            .pointer("/spec/type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP");
        let ports = obj
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if ty == "LoadBalancer" {
            u.insert("services.loadbalancers".into(), one());
        }
        if ty == "LoadBalancer" || ty == "NodePort" {
            let n = Quantity::parse(&ports.to_string()).unwrap_or_else(Quantity::zero);
            u.insert("services.nodeports".into(), n);
        }
        u
    }

    fn matches_name(&self, name: &str) -> bool {
        [
            "services",
            "count/services",
            "services.loadbalancers",
            "services.nodeports",
        ]
        .contains(&name)
    }
}

/// PersistentVolumeClaims: counts and requested storage, overall and per storage class.
pub struct Claims;

impl Evaluator for Claims {
    fn usage(&self, obj: &Value) -> Usage {
        let mut u = Usage::from([
            ("persistentvolumeclaims".to_string(), one()),
            ("count/persistentvolumeclaims".to_string(), one()),
        ]);
        let class = obj
            .pointer("/spec/storageClassName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !class.is_empty() {
            u.insert(
                format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims"),
                one(),
            );
        }
        if let Some(q) = obj
            .pointer("/spec/resources/requests/storage")
            .and_then(Quantity::of)
        {
            if !class.is_empty() {
                u.insert(
                    format!("{class}.storageclass.storage.k8s.io/requests.storage"),
                    q.clone(),
                );
            }
            u.insert("requests.storage".into(), q);
        }
        u
    }

    fn matches_name(&self, name: &str) -> bool {
        [
            "persistentvolumeclaims",
            "count/persistentvolumeclaims",
            "requests.storage",
        ]
        .contains(&name)
            || name.ends_with(".storageclass.storage.k8s.io/requests.storage")
            || name.ends_with(".storageclass.storage.k8s.io/persistentvolumeclaims")
    }
}

/// Core kinds with a legacy object-count name (`configmaps`, `secrets`, ...).
pub struct Legacy(pub &'static str);

impl Evaluator for Legacy {
    fn usage(&self, _obj: &Value) -> Usage {
        Usage::from([(self.0.to_string(), one()), (count_name("", self.0), one())])
    }

    fn matches_name(&self, name: &str) -> bool {
        name == self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pod_usage_and_constraints() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "1"}}},
            {"name": "b", "resources": {"requests": {"cpu": "200m"}}}],
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "500m"}}}]}});
        let u = Pods.usage(&pod);
        assert_eq!(pretty(&u), "count/pods=1,cpu=500m,limits.cpu=1,memory=1Gi,pods=1,requests.cpu=500m,requests.memory=1Gi");
        assert_eq!(
            Pods.constraints(&["limits.cpu", "limits.memory"], &pod)
                .unwrap_err(),
            "must specify limits.cpu for: b,i; limits.memory for: a,b,i"
        );
        assert!(Pods
            .usage(&json!({"status": {"phase": "Succeeded"}}))
            .is_empty());
    }
}
