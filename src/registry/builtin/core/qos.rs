//! A pod's quality-of-service class (`qos.GetPodQOS`): BestEffort, Burstable or Guaranteed,
//! from its containers' cpu and memory requests and limits.

use serde_json::Value;

fn amount(q: &Value) -> Option<f64> {
    q.as_str().and_then(super::pod_validation::quantity)
}

/// The pod's QoS class (`qos.GetPodQOS`) from its spec.
pub fn pod_qos(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|l| spec.get(*l).and_then(Value::as_array))
        .flatten()
        .collect();
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for c in &containers {
        let req = c.pointer("/resources/requests").and_then(Value::as_object);
        let lim = c.pointer("/resources/limits").and_then(Value::as_object);
        for r in ["cpu", "memory"] {
            let rq = req.and_then(|m| m.get(r));
            let lm = lim.and_then(|m| m.get(r));
            if rq.is_some() || lm.is_some() {
                any = true;
            }
            match (rq, lm) {
                (_, None) => guaranteed = false,
                // Amounts compare, not spellings (`1` is `1000m`).
                (Some(a), Some(b)) if a != b && amount(a) != amount(b) => guaranteed = false,
                _ => {}
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn qos() {
        assert_eq!(
            pod_qos(&json!({"containers": [{"name": "a"}]})),
            "BestEffort"
        );
        assert_eq!(
            pod_qos(
                &json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}}]})
            ),
            "Guaranteed"
        );
        assert_eq!(
            pod_qos(&json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]})),
            "Burstable"
        );
    }
}
