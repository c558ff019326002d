//! HorizontalPodAutoscaler conversion between autoscaling/v1 and the storage version
//! autoscaling/v2, as kube's (`pkg/apis/autoscaling/v1/conversion.go`): v1 has one CPU
//! utilization target; everything else v2 can say travels in round-trip annotations whose
//! values are JSON in v1's metric shapes (metrics, current metrics, conditions) or in the
//! Go field names of the internal type (behavior). Bad annotation JSON is ignored, and the
//! annotations are never stored.

use serde_json::{json, Map, Value};

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const ROUND_TRIP: &[&str] = &[
    METRICS,
    CURRENT_METRICS,
    CONDITIONS,
    BEHAVIOR,
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
];

/// The CPU utilization target kube puts in when an HPA names no metric.
pub const DEFAULT_CPU_UTILIZATION: i64 = 80;

pub fn cpu_metric(utilization: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": utilization}}})
}

/// Removes the round-trip annotations (and an annotation map left empty).
pub fn drop_round_trip(obj: &mut Value) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
        for k in ROUND_TRIP {
            a.shift_remove(*k);
        }
        if a.is_empty() {
            meta.shift_remove("annotations");
        }
    }
}

/// Copies the present fields `keys` of `from` into `to`.
fn copy(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k).filter(|v| !v.is_null()) {
            to.insert((*k).to_string(), v.clone());
        }
    }
}

fn annotation(obj: &Value, key: &str) -> Option<Value> {
    let text = obj.pointer("/metadata/annotations")?.get(key)?.as_str()?;
    serde_json::from_str(text).ok()
}

fn is_cpu_utilization(m: &Value, side: &str) -> bool {
    m.get("type").and_then(Value::as_str) == Some("Resource")
        && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
        && m.pointer(&format!("/resource/{side}/averageUtilization"))
            .is_some_and(|v| !v.is_null())
}

/// autoscaling/v1 to autoscaling/v2, in place.
pub fn v1_to_v2(obj: &mut Value) {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let status = obj.get("status").cloned().unwrap_or(Value::Null);
    let mut new_spec = Map::new();
    copy(&spec, &mut new_spec, &["scaleTargetRef"]);
    new_spec.insert(
        "minReplicas".into(),
        spec.get("minReplicas")
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or(json!(1)),
    );
    copy(&spec, &mut new_spec, &["maxReplicas"]);
    let cpu = spec
        .get("targetCPUUtilizationPercentage")
        .filter(|v| !v.is_null())
        .map(|p| cpu_metric(p.clone()));
    let mut metrics: Vec<Value> = match annotation(obj, METRICS) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|m| metric_from_v1(m, false))
            .collect(),
        _ => Vec::new(),
    };
    metrics.extend(cpu);
    if metrics.is_empty() {
        metrics.push(cpu_metric(json!(DEFAULT_CPU_UTILIZATION)));
    }
    new_spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(b) = annotation(obj, BEHAVIOR).and_then(behavior_from_go) {
        new_spec.insert("behavior".into(), b);
    }

    let mut new_status = Map::new();
    copy(
        &status,
        &mut new_status,
        &[
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ],
    );
    let current = match annotation(obj, CURRENT_METRICS) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|m| metric_from_v1(m, true))
            .collect(),
        _ => match status.get("currentCPUUtilizationPercentage") {
            Some(p) if !p.is_null() => vec![json!({"type": "Resource",
                "resource": {"name": "cpu", "current": {"averageUtilization": p}}})],
            _ => Vec::new(),
        },
    };
    if !current.is_empty() {
        new_status.insert("currentMetrics".into(), Value::Array(current));
    }
    if let Some(Value::Array(c)) = annotation(obj, CONDITIONS) {
        new_status.insert("conditions".into(), Value::Array(c));
    }

    drop_round_trip(obj);
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!("autoscaling/v2"));
        o.insert("spec".into(), Value::Object(new_spec));
        o.insert("status".into(), Value::Object(new_status));
    }
}

/// autoscaling/v2 (as stored) to autoscaling/v1, in place.
pub fn v2_to_v1(obj: &mut Value) {
    drop_round_trip(obj);
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let status = obj.get("status").cloned().unwrap_or(Value::Null);
    let metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut new_spec = Map::new();
    copy(
        &spec,
        &mut new_spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    if let Some(m) = metrics.iter().find(|m| is_cpu_utilization(m, "target")) {
        new_spec.insert(
            "targetCPUUtilizationPercentage".into(),
            m.pointer("/resource/target/averageUtilization")
                .cloned()
                .unwrap_or(Value::Null),
        );
    }
    let other: Vec<Value> = metrics
        .iter()
        .filter(|m| !is_cpu_utilization(m, "target"))
        .map(|m| metric_to_v1(m, false))
        .collect();

    let current = status
        .get("currentMetrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut new_status = Map::new();
    copy(
        &status,
        &mut new_status,
        &[
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ],
    );
    if let Some(m) = current
        .iter()
        .filter(|m| is_cpu_utilization(m, "current"))
        .last()
    {
        new_status.insert(
            "currentCPUUtilizationPercentage".into(),
            m.pointer("/resource/current/averageUtilization")
                .cloned()
                .unwrap_or(Value::Null),
        );
    }

    let mut notes: Vec<(&str, String)> = Vec::new();
    if !other.is_empty() {
        notes.push((METRICS, Value::Array(other).to_string()));
    }
    if !current.is_empty() {
        let v1: Vec<Value> = current.iter().map(|m| metric_to_v1(m, true)).collect();
        notes.push((CURRENT_METRICS, Value::Array(v1).to_string()));
    }
    if let Some(b) = spec.get("behavior").filter(|b| !b.is_null()) {
        notes.push((BEHAVIOR, behavior_to_go(b).to_string()));
    }
    if let Some(c) = status
        .get("conditions")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
    {
        let c: Vec<Value> = c.iter().map(condition).collect();
        notes.push((CONDITIONS, Value::Array(c).to_string()));
    }
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!("autoscaling/v1"));
        o.insert("spec".into(), Value::Object(new_spec));
        o.insert("status".into(), Value::Object(new_status));
        if !notes.is_empty() {
            let meta = crate::registry::strategy::obj_entry(obj, "metadata");
            let a = meta.entry("annotations").or_insert_with(|| json!({}));
            if let Some(a) = a.as_object_mut() {
                for (k, v) in notes {
                    a.insert(k.into(), Value::String(v));
                }
                a.sort_keys();
            }
        }
    }
}

/// A condition with its fields in the order Go prints them.
fn condition(c: &Value) -> Value {
    let mut out = Map::new();
    copy(c, &mut out, &["type", "status"]);
    out.insert(
        "lastTransitionTime".into(),
        c.get("lastTransitionTime").cloned().unwrap_or(Value::Null),
    );
    copy(c, &mut out, &["reason", "message"]);
    Value::Object(out)
}

fn zero_quantity(v: Option<&Value>) -> Value {
    v.filter(|v| !v.is_null()).cloned().unwrap_or(json!("0"))
}

/// `{name, selector?}` of a v1 metric source.
fn metric_id(name: Option<&Value>, selector: Option<&Value>) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), name.cloned().unwrap_or(json!("")));
    if let Some(s) = selector.filter(|s| !s.is_null()) {
        m.insert("selector".into(), s.clone());
    }
    Value::Object(m)
}

/// A v2 `MetricSpec` (`status: false`) or `MetricStatus` (`status: true`) in v1's shape,
/// for the `metrics` and `current-metrics` annotations.
fn metric_to_v1(m: &Value, status: bool) -> Value {
    let side = if status { "current" } else { "target" };
    let key = |name: &str| format!("{side}{name}");
    let mut out = Map::new();
    copy(m, &mut out, &["type"]);
    if let Some(o) = m.get("object").filter(|v| v.is_object()) {
        let mut x = Map::new();
        copy_as(o, "describedObject", &mut x, "target");
        copy_as(&o["metric"], "name", &mut x, "metricName");
        x.insert(key("Value"), zero_quantity(o[side].get("value")));
        copy_as(&o["metric"], "selector", &mut x, "selector");
        copy_as(&o[side], "averageValue", &mut x, "averageValue");
        out.insert("object".into(), Value::Object(x));
    }
    if let Some(p) = m.get("pods").filter(|v| v.is_object()) {
        let mut x = Map::new();
        copy_as(&p["metric"], "name", &mut x, "metricName");
        x.insert(
            key("AverageValue"),
            zero_quantity(p[side].get("averageValue")),
        );
        copy_as(&p["metric"], "selector", &mut x, "selector");
        out.insert("pods".into(), Value::Object(x));
    }
    for kind in ["resource", "containerResource"] {
        if let Some(r) = m.get(kind).filter(|v| v.is_object()) {
            let mut x = Map::new();
            copy(r, &mut x, &["name"]);
            copy_as(
                &r[side],
                "averageUtilization",
                &mut x,
                &key("AverageUtilization"),
            );
            if status {
                x.insert(
                    key("AverageValue"),
                    zero_quantity(r[side].get("averageValue")),
                );
            } else {
                copy_as(&r[side], "averageValue", &mut x, &key("AverageValue"));
            }
            if kind == "containerResource" {
                x.insert(
                    "container".into(),
                    r.get("container").cloned().unwrap_or(json!("")),
                );
            }
            out.insert(kind.into(), Value::Object(x));
        }
    }
    if let Some(e) = m.get("external").filter(|v| v.is_object()) {
        let mut x = Map::new();
        copy_as(&e["metric"], "name", &mut x, "metricName");
        copy_as(&e["metric"], "selector", &mut x, "metricSelector");
        if status {
            x.insert(key("Value"), zero_quantity(e[side].get("value")));
        } else {
            copy_as(&e[side], "value", &mut x, &key("Value"));
        }
        copy_as(&e[side], "averageValue", &mut x, &key("AverageValue"));
        out.insert("external".into(), Value::Object(x));
    }
    Value::Object(out)
}

fn copy_as(from: &Value, key: &str, to: &mut Map<String, Value>, as_key: &str) {
    if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
        to.insert(as_key.into(), v.clone());
    }
}

/// A v1-shaped `MetricSpec` (`status: false`) or `MetricStatus` (`status: true`) of an
/// annotation in v2's shape (`None`: not an object). A spec's target type is rebuilt from
/// which values are set, as kube rebuilds it.
fn metric_from_v1(m: &Value, status: bool) -> Option<Value> {
    let side = if status { "current" } else { "target" };
    let key = |name: &str| format!("{side}{name}");
    let typed = |t: &str| {
        let mut v = Map::new();
        if !status {
            v.insert("type".into(), json!(t));
        }
        v
    };
    let mut out = Map::new();
    copy(m, &mut out, &["type"]);
    if let Some(o) = m.get("object").filter(|v| v.is_object()) {
        let avg = o.get("averageValue").filter(|v| !v.is_null());
        let mut v = typed(if avg.is_some() {
            "AverageValue"
        } else {
            "Value"
        });
        v.insert("value".into(), zero_quantity(o.get(&key("Value"))));
        copy(o, &mut v, &["averageValue"]);
        let mut x = Map::new();
        copy_as(o, "target", &mut x, "describedObject");
        x.insert(side.into(), Value::Object(v));
        x.insert(
            "metric".into(),
            metric_id(o.get("metricName"), o.get("selector")),
        );
        out.insert("object".into(), Value::Object(x));
    }
    if let Some(p) = m.get("pods").filter(|v| v.is_object()) {
        let mut v = typed("AverageValue");
        v.insert(
            "averageValue".into(),
            zero_quantity(p.get(&key("AverageValue"))),
        );
        let mut x = Map::new();
        x.insert(
            "metric".into(),
            metric_id(p.get("metricName"), p.get("selector")),
        );
        x.insert(side.into(), Value::Object(v));
        out.insert("pods".into(), Value::Object(x));
    }
    for kind in ["resource", "containerResource"] {
        if let Some(r) = m.get(kind).filter(|v| v.is_object()) {
            let util = r.get(&key("AverageUtilization")).filter(|v| !v.is_null());
            let mut v = typed(if util.is_some() {
                "Utilization"
            } else {
                "AverageValue"
            });
            copy_as(r, &key("AverageUtilization"), &mut v, "averageUtilization");
            if status {
                v.insert(
                    "averageValue".into(),
                    zero_quantity(r.get(&key("AverageValue"))),
                );
            } else {
                copy_as(r, &key("AverageValue"), &mut v, "averageValue");
            }
            let mut x = Map::new();
            copy(r, &mut x, &["name"]);
            x.insert(side.into(), Value::Object(v));
            if kind == "containerResource" {
                x.insert(
                    "container".into(),
                    r.get("container").cloned().unwrap_or(json!("")),
                );
            }
            out.insert(kind.into(), Value::Object(x));
        }
    }
    if let Some(e) = m.get("external").filter(|v| v.is_object()) {
        let value = e.get(&key("Value")).filter(|v| !v.is_null());
        let mut v = typed(if value.is_some() {
            "Value"
        } else {
            "AverageValue"
        });
        if status {
            v.insert("value".into(), zero_quantity(value));
        } else {
            copy_as(e, &key("Value"), &mut v, "value");
        }
        copy_as(e, &key("AverageValue"), &mut v, "averageValue");
        let mut x = Map::new();
        x.insert(
            "metric".into(),
            metric_id(e.get("metricName"), e.get("metricSelector")),
        );
        x.insert(side.into(), Value::Object(v));
        out.insert("external".into(), Value::Object(x));
    }
    m.is_object().then_some(Value::Object(out))
}

/// (Go field name, JSON name) of the behavior's rules and policies.
const RULE_FIELDS: &[(&str, &str)] = &[
    ("StabilizationWindowSeconds", "stabilizationWindowSeconds"),
    ("SelectPolicy", "selectPolicy"),
    ("Policies", "policies"),
    ("Tolerance", "tolerance"),
];
const POLICY_FIELDS: &[(&str, &str)] = &[
    ("Type", "type"),
    ("Value", "value"),
    ("PeriodSeconds", "periodSeconds"),
];

/// `spec.behavior` as Go's `json.Marshal` of the internal type prints it (Go field names,
/// nil as `null`).
fn behavior_to_go(b: &Value) -> Value {
    let rules = |r: Option<&Value>| match r.filter(|r| r.is_object()) {
        None => Value::Null,
        Some(r) => {
            let mut out = Map::new();
            for (go, js) in RULE_FIELDS {
                let v = r.get(*js).cloned().unwrap_or(Value::Null);
                let v = if *js == "policies" {
                    match v {
                        Value::Array(ps) => Value::Array(
                            ps.iter()
                                .map(|p| {
                                    let mut o = Map::new();
                                    for (go, js) in POLICY_FIELDS {
                                        o.insert(
                                            (*go).into(),
                                            p.get(*js).cloned().unwrap_or(Value::Null),
                                        );
                                    }
                                    Value::Object(o)
                                })
                                .collect(),
                        ),
                        other => other,
                    }
                } else {
                    v
                };
                out.insert((*go).into(), v);
            }
            Value::Object(out)
        }
    };
    json!({"ScaleUp": rules(b.get("scaleUp")), "ScaleDown": rules(b.get("scaleDown"))})
}

/// The value of `obj`'s key that matches `name` ignoring case, as Go's decoder matches.
fn get_ci<'a>(obj: &'a Value, name: &str) -> Option<&'a Value> {
    obj.as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
        .filter(|v| !v.is_null())
}

/// The behavior annotation read back: `None` unless it names a scale-up or scale-down rule.
fn behavior_from_go(b: Value) -> Option<Value> {
    let rules = |r: Option<&Value>| -> Option<Value> {
        let r = r.filter(|r| r.is_object())?;
        let mut out = Map::new();
        for (go, js) in RULE_FIELDS {
            let Some(v) = get_ci(r, go) else { continue };
            let v = if *js == "policies" {
                Value::Array(
                    v.as_array()?
                        .iter()
                        .map(|p| {
                            let mut o = Map::new();
                            for (go, js) in POLICY_FIELDS {
                                if let Some(x) = get_ci(p, go) {
                                    o.insert((*js).into(), x.clone());
                                }
                            }
                            Value::Object(o)
                        })
                        .collect(),
                )
            } else {
                v.clone()
            };
            out.insert((*js).into(), v);
        }
        Some(Value::Object(out))
    };
    let up = rules(get_ci(&b, "ScaleUp"));
    let down = rules(get_ci(&b, "ScaleDown"));
    if up.is_none() && down.is_none() {
        return None;
    }
    let mut out = Map::new();
    if let Some(u) = up {
        out.insert("scaleUp".into(), u);
    }
    if let Some(d) = down {
        out.insert("scaleDown".into(), d);
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_without_a_target_gets_cpu_80_and_reads_back() {
        let mut o = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 5}});
        v1_to_v2(&mut o);
        assert_eq!(o["apiVersion"], "autoscaling/v2");
        assert_eq!(o["spec"]["minReplicas"], 1);
        assert_eq!(o["spec"]["metrics"], json!([cpu_metric(json!(80))]));
        v2_to_v1(&mut o);
        assert_eq!(o["spec"]["targetCPUUtilizationPercentage"], 80);
        assert!(o["metadata"].get("annotations").is_none());
    }

    #[test]
    fn other_metrics_round_trip_through_annotations() {
        let mut o = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "minReplicas": 1,
                "maxReplicas": 5, "metrics": [
                    {"type": "Resource", "resource": {"name": "memory",
                        "target": {"type": "Utilization", "averageUtilization": 60}}},
                    cpu_metric(json!(50))],
                "behavior": {"scaleDown": {"selectPolicy": "Max",
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}},
            "status": {"desiredReplicas": 2, "conditions": [{"type": "AbleToScale",
                "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
        v2_to_v1(&mut o);
        assert_eq!(o["spec"]["targetCPUUtilizationPercentage"], 50);
        let a = &o["metadata"]["annotations"];
        assert_eq!(
            a[METRICS],
            r#"[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":60}}]"#
        );
        assert_eq!(
            a[BEHAVIOR],
            r#"{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}"#
        );
        assert_eq!(
            a[CONDITIONS],
            r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]"#
        );
        v1_to_v2(&mut o);
        let m = o["spec"]["metrics"].as_array().unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["resource"]["name"], "memory");
        assert_eq!(m[0]["resource"]["target"]["type"], "Utilization");
        assert_eq!(m[1], cpu_metric(json!(50)));
        assert_eq!(o["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Max");
        assert_eq!(o["status"]["conditions"][0]["type"], "AbleToScale");
        assert!(o["metadata"].get("annotations").is_none());
    }

    #[test]
    fn bad_annotation_json_is_ignored() {
        let mut o = json!({"metadata": {"name": "h",
            "annotations": {"autoscaling.alpha.kubernetes.io/metrics": "{nope"}},
            "spec": {"targetCPUUtilizationPercentage": 30}});
        v1_to_v2(&mut o);
        assert_eq!(o["spec"]["metrics"], json!([cpu_metric(json!(30))]));
    }

    #[test]
    fn status_metrics_round_trip() {
        let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": "10"}}});
        let current = json!([
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "7"}}},
            {"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageValue": "50m", "averageUtilization": 40}}},
            {"type": "External", "external": {"metric": {"name": "q"}, "current": {"value": "3"}}}]);
        let mut o = json!({"metadata": {"name": "h"},
            "spec": {"maxReplicas": 3, "metrics": [pods.clone()]},
            "status": {"desiredReplicas": 1, "currentMetrics": current.clone()}});
        v2_to_v1(&mut o);
        assert_eq!(o["status"]["currentCPUUtilizationPercentage"], 40);
        assert_eq!(
            o["metadata"]["annotations"][CURRENT_METRICS],
            r#"[{"type":"Pods","pods":{"metricName":"qps","currentAverageValue":"7"}},{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"50m"}},{"type":"External","external":{"metricName":"q","currentValue":"3"}}]"#
        );
        assert_eq!(
            o["metadata"]["annotations"][METRICS],
            r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#
        );
        v1_to_v2(&mut o);
        assert_eq!(
            o["spec"]["metrics"][0]["pods"]["target"],
            pods["pods"]["target"]
        );
        let back = &o["status"]["currentMetrics"];
        assert_eq!(back[0]["pods"]["current"], json!({"averageValue": "7"}));
        assert_eq!(
            back[1]["resource"]["current"],
            current[1]["resource"]["current"]
        );
        assert_eq!(back[2]["external"]["current"], json!({"value": "3"}));
    }
}
