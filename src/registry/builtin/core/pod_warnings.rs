//! Warnings for objects that embed a pod (kube's `GetWarningsForPod` /
//! `GetWarningsForPodTemplate`): deprecated node labels in node selectors and affinity,
//! annotations that no longer work, deprecated volume types and values kube corrects. On
//! update only warnings the old object did not already have are given.

use serde_json::Value;

use crate::registry::builtin::checks::list_of;

/// (label, why) of the deprecated node labels.
const DEPRECATED_NODE_LABELS: &[(&str, &str)] = &[
    (
        "beta.kubernetes.io/arch",
        "deprecated since v1.14; use \"kubernetes.io/arch\" instead",
    ),
    (
        "beta.kubernetes.io/os",
        "deprecated since v1.14; use \"kubernetes.io/os\" instead",
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        "deprecated since v1.17; use \"topology.kubernetes.io/region\" instead",
    ),
    (
        "failure-domain.beta.kubernetes.io/zone",
        "deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead",
    ),
    (
        "beta.kubernetes.io/instance-type",
        "deprecated since v1.17; use \"node.kubernetes.io/instance-type\" instead",
    ),
];

fn deprecated_label(key: &str) -> Option<&'static str> {
    DEPRECATED_NODE_LABELS
        .iter()
        .find(|(l, _)| *l == key)
        .map(|(_, why)| *why)
}

/// The warnings for a pod's `metadata` and `spec` found at `path` (`""` for a pod,
/// `spec.template.` for a workload's template).
pub fn pod_warnings(path: &str, meta: &Value, spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(annotations) = meta.get("annotations").and_then(Value::as_object) {
        let mut keys: Vec<&String> = annotations.keys().collect();
        keys.sort();
        for k in keys {
            let why = if k == "scheduler.alpha.kubernetes.io/critical-pod" {
                Some("non-functional in v1.16+")
            } else if k == "seccomp.security.alpha.kubernetes.io/pod"
                || k.starts_with("container.seccomp.security.alpha.kubernetes.io/")
            {
                Some("non-functional in v1.27+; use the \"seccompProfile\" field instead")
            } else if k.starts_with("container.apparmor.security.beta.kubernetes.io/") {
                Some("deprecated since v1.30; use the \"appArmorProfile\" field instead")
            } else {
                None
            };
            if let Some(why) = why {
                out.push(format!("{path}metadata.annotations[{k}]: {why}"));
            }
        }
    }
    if let Some(sel) = spec.get("nodeSelector").and_then(Value::as_object) {
        let mut keys: Vec<&String> = sel.keys().collect();
        keys.sort();
        for k in keys {
            if let Some(why) = deprecated_label(k) {
                out.push(format!("{path}spec.nodeSelector[{k}]: {why}"));
            }
        }
    }
    let terms = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
        .map(|r| list_of(r, "nodeSelectorTerms"))
        .unwrap_or(&[]);
    for (i, term) in terms.iter().enumerate() {
        for (j, e) in list_of(term, "matchExpressions").iter().enumerate() {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            if let Some(why) = deprecated_label(key) {
                out.push(format!(
                    "{path}spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}].matchExpressions[{j}].key: {key} is {why}"
                ));
            }
        }
    }
    let preferred = spec
        .pointer("/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for (i, p) in preferred.iter().enumerate() {
        let pref = p.get("preference").unwrap_or(&Value::Null);
        for (j, e) in list_of(pref, "matchExpressions").iter().enumerate() {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            if let Some(why) = deprecated_label(key) {
                out.push(format!(
                    "{path}spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference.matchExpressions[{j}].key: {key} is {why}"
                ));
            }
        }
    }
    for (i, v) in list_of(spec, "volumes").iter().enumerate() {
        if v.get("gitRepo").is_some_and(|g| !g.is_null()) {
            out.push(format!(
                "{path}spec.volumes[{i}].gitRepo: deprecated in v1.11"
            ));
        }
    }
    if spec
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|g| g < 0)
    {
        out.push(format!(
            "{path}spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
        ));
    }
    out
}

/// The warnings of the pod template at JSON pointer `at` of `obj` (`path` is its field path
/// with a trailing dot).
pub fn template_warnings(obj: &Value, at: &str, path: &str) -> Vec<String> {
    let Some(t) = obj.pointer(at) else {
        return Vec::new();
    };
    pod_warnings(
        path,
        t.get("metadata").unwrap_or(&Value::Null),
        t.get("spec").unwrap_or(&Value::Null),
    )
}

/// Where a kind keeps its pod: (JSON pointer, field path with a trailing dot).
pub type At = (&'static str, &'static str);

/// A pod itself.
pub const POD: At = ("", "");
/// A workload's `spec.template`.
pub const SPEC_TEMPLATE: At = ("/spec/template", "spec.template.");

/// WarningsOnCreate of a kind whose pod is at `at`.
pub fn on_create(obj: &Value, at: At) -> Vec<String> {
    template_warnings(obj, at.0, at.1)
}

/// WarningsOnUpdate of a kind whose pod is at `at`: what the update adds.
pub fn on_update(new: &Value, old: &Value, at: At) -> Vec<String> {
    only_new(
        template_warnings(new, at.0, at.1),
        template_warnings(old, at.0, at.1),
    )
}

/// The warnings of `new` that `old` did not have (kube warns on update only about what the
/// update brings).
pub fn only_new(new: Vec<String>, old: Vec<String>) -> Vec<String> {
    new.into_iter().filter(|w| !old.contains(w)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deprecated_labels_volumes_and_annotations() {
        let meta = json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "x"}});
        let spec = json!({"nodeSelector": {"beta.kubernetes.io/os": "linux", "a": "b"},
            "volumes": [{"name": "g", "gitRepo": {"repository": "r"}}],
            "terminationGracePeriodSeconds": -1});
        assert_eq!(
            pod_warnings("spec.template.", &meta, &spec),
            [
                "spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the \"seccompProfile\" field instead",
                "spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead",
                "spec.template.spec.volumes[0].gitRepo: deprecated in v1.11",
                "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
            ]
        );
        assert!(only_new(vec!["a".into()], vec!["a".into()]).is_empty());
    }
}
