//! kube's `LimitRanger`: the namespace's LimitRanges give a new pod's containers and init
//! containers their default requests and limits (mutating; the pod is annotated
//! `kubernetes.io/limit-ranger: LimitRanger plugin set: ...`), then bound them (validating):
//! `min`, `max` and `maxLimitRequestRatio` per Container and per Pod, and `min` / `max` of a
//! PersistentVolumeClaim's storage requests (PVCs on create and update). Pod updates and
//! objects already being deleted are left alone, as in kube v1.33.

use serde_json::{json, Map, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;
use crate::registry::builtin::core::quantity::Quantity;
use crate::registry::quota::{containers, list, pod_total};

const ANNOTATION: &str = "kubernetes.io/limit-ranger";
/// `resource.MaxMilliValue`.
const MAX_MILLI: i128 = (i64::MAX / 1000) as i128;

pub struct LimitRanger;

/// A ResourceList as name → quantity (unparsable values are skipped, as validation
/// refuses them anyway).
type List = crate::registry::quota::Usage;

/// Which kind of object the request is about (`None`: not ours).
fn target(a: &Attributes) -> Option<&'static str> {
    if !a.subresource.is_empty() || !a.resource.group.is_empty() {
        return None;
    }
    match (a.kind(), a.operation) {
        ("Pod", Operation::Create) => Some("pods"),
        ("PersistentVolumeClaim", Operation::Create | Operation::Update) => {
            Some("persistentvolumeclaims")
        }
        _ => None,
    }
}

async fn limit_ranges(a: &Attributes, h: &Handle) -> Vec<Value> {
    let being_deleted = a
        .old_object
        .as_ref()
        .is_some_and(|o| !crate::registry::object::meta_str(o, "deletionTimestamp").is_empty());
    if being_deleted {
        return Vec::new();
    }
    let mut items = h.list("", "v1", "limitranges", Some(&a.namespace)).await;
    items.sort_by(|x, y| {
        crate::registry::object::meta_str(x, "name")
            .cmp(crate::registry::object::meta_str(y, "name"))
    });
    items
}

fn limits(lr: &Value) -> impl Iterator<Item = &Value> {
    lr.pointer("/spec/limits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn typ(l: &Value) -> &str {
    l.get("type").and_then(Value::as_str).unwrap_or("")
}

/// `requestLimitEnforcedValues`: milli-units when nothing overflows them, else units.
fn common(req: Option<&Quantity>, lim: Option<&Quantity>, enf: &Quantity) -> (i128, i128, i128) {
    let zero = Quantity::parse("0").map(|q| q.whole()).unwrap_or(0);
    let whole = |q: Option<&Quantity>| q.map_or(zero, Quantity::whole);
    let (r, l, e) = (whole(req), whole(lim), enf.whole());
    if r <= MAX_MILLI && l <= MAX_MILLI && e <= MAX_MILLI {
        let milli = |q: Option<&Quantity>| q.map_or(0, Quantity::milli);
        (milli(req), milli(lim), enf.milli())
    } else {
        (r, l, e)
    }
}

fn min_constraint(t: &str, name: &str, enf: &Quantity, req: &List, lim: &List) -> Option<String> {
    let (r, l) = (req.get(name), lim.get(name));
    let (rv, lv, ev) = common(r, l, enf);
    let e = enf.string();
    match (r, l) {
        (None, _) => Some(format!(
            "minimum {name} usage per {t} is {e}.  No request is specified"
        )),
        (Some(r), _) if rv < ev => Some(format!(
            "minimum {name} usage per {t} is {e}, but request is {}",
            r.string()
        )),
        (_, Some(l)) if lv < ev => Some(format!(
            "minimum {name} usage per {t} is {e}, but limit is {}",
            l.string()
        )),
        _ => None,
    }
}

fn max_constraint(t: &str, name: &str, enf: &Quantity, req: &List, lim: &List) -> Option<String> {
    let (r, l) = (req.get(name), lim.get(name));
    let (rv, lv, ev) = common(r, l, enf);
    let e = enf.string();
    match (r, l) {
        (_, None) => Some(format!(
            "maximum {name} usage per {t} is {e}.  No limit is specified"
        )),
        (_, Some(l)) if lv > ev => Some(format!(
            "maximum {name} usage per {t} is {e}, but limit is {}",
            l.string()
        )),
        (Some(r), _) if rv > ev => Some(format!(
            "maximum {name} usage per {t} is {e}, but request is {}",
            r.string()
        )),
        _ => None,
    }
}

/// `maxRequestConstraint` (PVCs: only requests count).
fn max_request_constraint(t: &str, name: &str, enf: &Quantity, req: &List) -> Option<String> {
    let r = req.get(name);
    let (rv, _, ev) = common(r, None, enf);
    let e = enf.string();
    match r {
        None => Some(format!(
            "maximum {name} usage per {t} is {e}.  No request is specified"
        )),
        Some(r) if rv > ev => Some(format!(
            "maximum {name} usage per {t} is {e}, but request is {}",
            r.string()
        )),
        _ => None,
    }
}

fn ratio_constraint(t: &str, name: &str, enf: &Quantity, req: &List, lim: &List) -> Option<String> {
    let (r, l) = (req.get(name), lim.get(name));
    let (rv, lv, _) = common(r, l, enf);
    let e = enf.string();
    if r.is_none() || rv == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {t} is {e}, but no request is specified or request is 0"
        ));
    }
    if l.is_none() || lv == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {t} is {e}, but no limit is specified or limit is 0"
        ));
    }
    let shown = lv as f64 / rv as f64;
    let (observed, max) = if enf.whole() <= MAX_MILLI {
        (shown * 1000.0, enf.milli() as f64)
    } else {
        (shown, enf.whole() as f64)
    };
    (observed > max).then(|| {
        format!(
            "{name} max limit to request ratio per {t} is {e}, but provided ratio is {shown:.6}"
        )
    })
}

/// `utilerrors.NewAggregate(errs).Error()`: one message as is, several (deduplicated) in
/// brackets.
fn aggregate(errs: Vec<String>) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.len() {
        0 => None,
        1 => seen.pop(),
        _ => Some(format!("[{}]", seen.join(", "))),
    }
}

fn resources(c: &Value) -> (List, List) {
    (
        list(c.pointer("/resources/requests")),
        list(c.pointer("/resources/limits")),
    )
}

/// `PodMutateLimitFunc`: the defaults of `lr`'s Container limits where a container has none;
/// returns the annotation parts.
fn default_pod(lr: &Value, pod: &mut Value) -> Vec<String> {
    let mut def_req = Map::new();
    let mut def_lim = Map::new();
    for l in limits(lr).filter(|l| typ(l) == "Container") {
        for (field, into) in [("defaultRequest", &mut def_req), ("default", &mut def_lim)] {
            for (k, v) in l
                .get(field)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                into.insert(k.clone(), v.clone());
            }
        }
    }
    let mut notes = Vec::new();
    if def_req.is_empty() && def_lim.is_empty() {
        return notes;
    }
    for (list_name, label) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        let Some(cs) = pod
            .pointer_mut(&format!("/spec/{list_name}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in cs.iter_mut().filter_map(Value::as_object_mut) {
            let name = c
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let res = c
                .entry("resources")
                .or_insert_with(|| json!({}))
                .as_object_mut();
            let Some(res) = res else { continue };
            let mut set = |field: &str, defaults: &Map<String, Value>| {
                let m = res.entry(field).or_insert_with(|| json!({}));
                if !m.is_object() {
                    *m = json!({});
                }
                let m = m.as_object_mut().expect("an object");
                let mut added: Vec<String> = Vec::new();
                for (k, v) in defaults {
                    if !m.contains_key(k) {
                        m.insert(k.clone(), v.clone());
                        added.push(k.clone());
                    }
                }
                if m.is_empty() {
                    res.remove(field);
                }
                added.sort();
                added
            };
            let (lims, reqs) = (set("limits", &def_lim), set("requests", &def_req));
            if !reqs.is_empty() {
                notes.push(format!("{} request for {label} {name}", reqs.join(", ")));
            }
            if !lims.is_empty() {
                notes.push(format!("{} limit for {label} {name}", lims.join(", ")));
            }
        }
    }
    notes
}

fn quantities(l: &Value, field: &str) -> List {
    list(l.get(field))
}

/// `PodValidateLimitFunc`.
fn validate_pod(lr: &Value, pod: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    for l in limits(lr) {
        let t = typ(l);
        let check = |errs: &mut Vec<String>, req: &List, lim: &List| {
            for (k, v) in quantities(l, "min") {
                errs.extend(min_constraint(t, &k, &v, req, lim));
            }
            for (k, v) in quantities(l, "max") {
                errs.extend(max_constraint(t, &k, &v, req, lim));
            }
            for (k, v) in quantities(l, "maxLimitRequestRatio") {
                errs.extend(ratio_constraint(t, &k, &v, req, lim));
            }
        };
        match t {
            "Container" => {
                for c in containers(pod, "containers").chain(containers(pod, "initContainers")) {
                    let (req, lim) = resources(c);
                    check(&mut errs, &req, &lim);
                }
            }
            "Pod" => {
                let (req, lim) = (pod_total(pod, "requests"), pod_total(pod, "limits"));
                check(&mut errs, &req, &lim);
            }
            _ => {}
        }
    }
    errs
}

/// `PersistentVolumeClaimValidateLimitFunc`.
fn validate_pvc(lr: &Value, pvc: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let req = list(pvc.pointer("/spec/resources/requests"));
    for l in limits(lr).filter(|l| typ(l) == "PersistentVolumeClaim") {
        for (k, v) in quantities(l, "min") {
            errs.extend(min_constraint(
                "PersistentVolumeClaim",
                &k,
                &v,
                &req,
                &List::new(),
            ));
        }
        for (k, v) in quantities(l, "max") {
            errs.extend(max_request_constraint(
                "PersistentVolumeClaim",
                &k,
                &v,
                &req,
            ));
        }
    }
    errs
}

#[async_trait::async_trait]
impl Plugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if target(a) != Some("pods") {
            return Ok(());
        }
        let ranges = limit_ranges(a, h).await;
        let Some(pod) = a.object.as_mut() else {
            return Ok(());
        };
        // (the store computes the QoS class after the mutating phase, as kube's
        // PrepareForCreate does: the defaults set here count)
        for lr in &ranges {
            let notes = default_pod(lr, pod);
            if !notes.is_empty() {
                let m = crate::registry::object::meta_mut(pod);
                let ann = m.entry("annotations").or_insert_with(|| json!({}));
                if !ann.is_object() {
                    *ann = json!({});
                }
                ann[ANNOTATION] = json!(format!("LimitRanger plugin set: {}", notes.join("; ")));
            }
        }
        Ok(())
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        let Some(kind) = target(a) else {
            return Ok(());
        };
        let Some(obj) = a.object.as_ref() else {
            return Ok(());
        };
        for lr in limit_ranges(a, h).await {
            let errs = match kind {
                "pods" => validate_pod(&lr, obj),
                _ => validate_pvc(&lr, obj),
            };
            if let Some(why) = aggregate(errs) {
                return Err(a.forbidden(why));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_and_defaults() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        let l = |pairs: &[(&str, &str)]| -> List {
            pairs.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
        };
        assert_eq!(
            min_constraint(
                "Container",
                "cpu",
                &q("100m"),
                &l(&[("cpu", "50m")]),
                &l(&[])
            ),
            Some("minimum cpu usage per Container is 100m, but request is 50m".into())
        );
        assert_eq!(
            max_constraint("Pod", "memory", &q("1Gi"), &l(&[]), &l(&[])),
            Some("maximum memory usage per Pod is 1Gi.  No limit is specified".into())
        );
        assert_eq!(
            ratio_constraint(
                "Container",
                "cpu",
                &q("2"),
                &l(&[("cpu", "100m")]),
                &l(&[("cpu", "300m")])
            ),
            Some(
                "cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000"
                    .into()
            )
        );
        assert_eq!(
            aggregate(vec!["a".into(), "b".into(), "a".into()]),
            Some("[a, b]".into())
        );
        let lr = json!({"spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "100m"}, "default": {"cpu": "200m", "memory": "1Gi"}}]}});
        let mut pod = json!({"spec": {"containers": [{"name": "c"}, {"name": "d", "resources": {"limits": {"cpu": "1"}}}]}});
        assert_eq!(
            default_pod(&lr, &mut pod),
            vec![
                "cpu request for container c",
                "cpu, memory limit for container c",
                "cpu request for container d",
                "memory limit for container d"
            ]
        );
        let sum = pod_total(
            &json!({"spec": {"containers": [{"resources": {"requests": {"memory": "1Gi"}}}, {"resources": {"requests": {"memory": "512Mi"}}}]}}),
            "requests",
        );
        assert_eq!(sum["memory"].string(), "1536Mi");
    }
}
