//! The pod subresources that write a part of the pod: `pods/ephemeralcontainers` (kube's
//! `podEphemeralContainersStrategy`: only `spec.ephemeralContainers` changes, existing ones
//! never) and `pods/resize` (`podResizeStrategy`, InPlacePodVerticalScaling, beta and on in
//! v1.33: only the containers' `resources` and `resizePolicy` change, within
//! `ValidatePodResize`'s rules).
//!
//! Pure: values in and out. The generic part (the stored object as the base, metadata
//! validation, `metadata.generation`) is `registry::prepare`'s and the store's.

use serde_json::{Map, Value};

use super::pod_validation::{quantity, validate_pod_spec};
use super::qos::pod_qos;
use crate::meta::field_error::FieldError;
use crate::registry::builtin::checks::{list_of as list, str_of as text};

pub const EPHEMERAL: &str = "ephemeralcontainers";
pub const RESIZE: &str = "resize";

const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// PrepareForUpdate: `new` is the stored pod; take the subresource's part from `sent`.
pub fn prepare(sub: &str, new: &mut Value, sent: &Value, old: &Value) {
    match sub {
        EPHEMERAL => {
            let ecs = sent.pointer("/spec/ephemeralContainers").cloned();
            if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
                match ecs {
                    Some(e) => spec.insert("ephemeralContainers".into(), e),
                    None => spec.remove("ephemeralContainers"),
                };
            }
        }
        RESIZE => drop_non_resize_updates(new, sent, old),
        _ => {}
    }
}

/// `dropNonResizeUpdates`: the stored pod with each container's `resources` and
/// `resizePolicy` from the request; a request that adds, removes, reorders or renames
/// containers is kept whole, for validation to refuse.
fn drop_non_resize_updates(new: &mut Value, sent: &Value, old: &Value) {
    let (sent_spec, old_spec) = (spec(sent), spec(old));
    let same_shape = ["containers", "initContainers"].iter().all(|l| {
        let (s, o) = (list(sent_spec, l), list(old_spec, l));
        s.len() == o.len()
            && s.iter()
                .zip(o)
                .all(|(a, b)| text(a, "name") == text(b, "name"))
    });
    if !same_shape {
        let rv = new.pointer("/metadata/resourceVersion").cloned();
        let managed = new.pointer("/metadata/managedFields").cloned();
        new["spec"] = sent_spec.clone();
        if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            for (k, v) in [("resourceVersion", rv), ("managedFields", managed)] {
                match v {
                    Some(v) => m.insert(k.into(), v),
                    None => m.remove(k),
                };
            }
        }
        return;
    }
    for l in ["containers", "initContainers"] {
        let sent_list = list(sent_spec, l);
        let Some(cs) = new
            .get_mut("spec")
            .and_then(|s| s.get_mut(l))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for (c, s) in cs.iter_mut().zip(sent_list) {
            let Some(c) = c.as_object_mut() else { continue };
            for f in ["resources", "resizePolicy"] {
                match s.get(f) {
                    Some(v) => c.insert(f.into(), v.clone()),
                    None => c.remove(f),
                };
            }
        }
    }
}

/// ValidateUpdate of the subresource (after the store's metadata checks).
pub fn validate(sub: &str, new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_pod_spec(spec(new), "spec", &mut errs);
    match sub {
        EPHEMERAL => validate_ephemeral_update(new, old, errs),
        RESIZE => validate_resize(new, old, errs),
        _ => errs,
    }
}

fn spec(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

fn is_mirror(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION))
}

/// `ValidatePodEphemeralContainersUpdate`: static pods have none; existing ephemeral
/// containers are neither removed nor changed (they are matched by name: patches do not keep
/// the order).
fn validate_ephemeral_update(
    new: &Value,
    old: &Value,
    mut errs: Vec<FieldError>,
) -> Vec<FieldError> {
    if is_mirror(old) {
        return vec![FieldError::forbidden(
            "",
            "static pods do not support ephemeral containers",
        )];
    }
    let news = list(spec(new), "ephemeralContainers");
    for o in list(spec(old), "ephemeralContainers") {
        let name = text(o, "name");
        match news.iter().find(|n| text(n, "name") == name) {
            None => errs.push(FieldError::forbidden(
                "spec.ephemeralContainers",
                format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(n) if !semantic_eq(n, o) => errs.push(FieldError::forbidden(
                "spec.ephemeralContainers",
                format!(
                    "existing ephemeral containers {name:?} may not be changed\n{}",
                    ephemeral_diff(o, n)
                ),
            )),
            Some(_) => {}
        }
    }
    errs
}

/// `ValidatePodResize`.
fn validate_resize(new: &Value, old: &Value, mut errs: Vec<FieldError>) -> Vec<FieldError> {
    if is_mirror(old) {
        return vec![FieldError::forbidden("", "static pods cannot be resized")];
    }
    if old.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows") {
        return vec![FieldError::forbidden("", "windows pods cannot be resized")];
    }
    let (ns, os) = (spec(new), spec(old));
    // GetPodQOS of the stored pod is its recorded class; the new one is computed.
    let old_qos = old
        .pointer("/status/qosClass")
        .and_then(Value::as_str)
        .filter(|q| !q.is_empty())
        .unwrap_or_else(|| pod_qos(os));
    if old_qos != pod_qos(ns) {
        let shown = new
            .pointer("/status/qosClass")
            .and_then(Value::as_str)
            .unwrap_or("");
        errs.push(FieldError::invalid(
            "spec",
            shown,
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    if !resize_supported(old) {
        errs.push(FieldError::forbidden(
            "spec",
            "Pod running on node without support for resize",
        ));
    }
    let (new_cs, old_cs) = (list(ns, "containers"), list(os, "containers"));
    let (new_init, old_init) = (list(ns, "initContainers"), list(os, "initContainers"));
    if new_cs.len() != old_cs.len() || new_init.len() != old_init.len() {
        errs.push(FieldError::forbidden(
            "spec",
            "only cpu and memory resources are mutable",
        ));
        return errs;
    }
    for (i, (n, o)) in new_init.iter().zip(old_init).enumerate() {
        if sidecar(o) {
            container_resize(
                n,
                o,
                &format!("spec.initContainers[{i}].resources"),
                &mut errs,
            );
        }
    }
    for (i, (n, o)) in new_cs.iter().zip(old_cs).enumerate() {
        container_resize(n, o, &format!("spec.containers[{i}].resources"), &mut errs);
    }
    let mut munged = ns.clone();
    for (i, (n, o)) in new_cs.iter().zip(old_cs).enumerate() {
        let c = without_cpu_memory_changes(n, o);
        if !semantic_eq(&c, o) {
            errs.push(FieldError::forbidden(
                "spec",
                "only cpu and memory resources are mutable",
            ));
        }
        munged["containers"][i] = c;
    }
    for (i, (n, o)) in new_init.iter().zip(old_init).enumerate() {
        if sidecar(o) {
            let c = without_cpu_memory_changes(n, o);
            if !semantic_eq(&c, o) {
                errs.push(FieldError::forbidden(
                    "spec",
                    "only cpu and memory resources for sidecar containers are mutable",
                ));
            }
            munged["initContainers"][i] = c;
        } else if !semantic_eq(n, o) {
            errs.push(FieldError::forbidden(
                "spec",
                "resources for non-sidecar init containers are immutable",
            ));
        }
    }
    if errs.is_empty() && !semantic_eq(&munged, os) {
        errs.push(FieldError::forbidden(
            "spec",
            "only cpu and memory resources are mutable",
        ));
    }
    errs
}

/// A restartable init container (`restartPolicy: Always`).
fn sidecar(c: &Value) -> bool {
    text(c, "restartPolicy") == "Always"
}

/// `isPodResizeRequestSupported`: the first running container reports its resources (the
/// node supports resize); with none running nothing tells, so yes.
fn resize_supported(pod: &Value) -> bool {
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array);
    for c in statuses.into_iter().flatten() {
        if c.pointer("/state/running").is_some_and(|r| !r.is_null()) {
            return c.get("resources").is_some_and(|r| !r.is_null());
        }
    }
    true
}

/// `validateContainerResize`: requests and limits are not removed; the memory limit is not
/// lowered (nor added) unless memory's resize policy restarts the container.
fn container_resize(new: &Value, old: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let res = |c: &Value, k: &str| {
        c.get("resources")
            .and_then(|r| r.get(k))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    for (k, what) in [("requests", "requests"), ("limits", "limits")] {
        let (n, o) = (res(new, k), res(old, k));
        if o.keys().any(|name| !n.contains_key(name)) {
            errs.push(FieldError::forbidden(
                format!("{path}.{k}"),
                format!("resource {what} cannot be removed"),
            ));
        }
    }
    let memory_policy = list(new, "resizePolicy")
        .iter()
        .find(|p| text(p, "resourceName") == "memory")
        .map(|p| text(p, "restartPolicy"))
        .unwrap_or("");
    if matches!(memory_policy, "" | "NotRequired") {
        let (n, o) = (res(new, "limits"), res(old, "limits"));
        let amount =
            |m: &Map<String, Value>| m.get("memory").and_then(Value::as_str).and_then(quantity);
        match (amount(&n), o.get("memory")) {
            (Some(nl), Some(_)) => {
                if amount(&o).is_some_and(|ol| nl < ol) {
                    errs.push(FieldError::forbidden(
                        format!("{path}.limits[memory]"),
                        "memory limits cannot be decreased unless resizePolicy is RestartContainer",
                    ));
                }
            }
            (Some(_), None) => errs.push(FieldError::forbidden(
                format!("{path}.limits[memory]"),
                "memory limits cannot be added unless resizePolicy is RestartContainer",
            )),
            _ => {}
        }
    }
}

/// `dropCPUMemoryResourcesFromContainer`: `new` with the cpu and memory amounts of `old`
/// (a list `old` does not have is dropped), so that what is left to differ is what may not.
fn without_cpu_memory_changes(new: &Value, old: &Value) -> Value {
    let mut c = new.clone();
    let mut resources = Map::new();
    for k in ["limits", "requests"] {
        let Some(old_list) = old
            .get("resources")
            .and_then(|r| r.get(k))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let mut m = new
            .get("resources")
            .and_then(|r| r.get(k))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for r in ["cpu", "memory"] {
            m.remove(r);
            if let Some(v) = old_list.get(r) {
                m.insert(r.into(), v.clone());
            }
        }
        resources.insert(k.into(), Value::Object(m));
    }
    if let Some(o) = c.as_object_mut() {
        if resources.is_empty() && old.get("resources").is_none() {
            o.remove("resources");
        } else {
            o.insert("resources".into(), Value::Object(resources));
        }
    }
    c
}

/// kube's semantic equality: quantities compare by amount (`1` and `1000m` are equal), empty
/// lists and maps as absent.
/// The fields of kube's internal `core.EphemeralContainerCommon`, in Go struct order, with
/// their JSON names and how Go prints the unset value.
const EPHEMERAL_FIELDS: &[(&str, &str, &str)] = &[
    ("Name", "name", "\"\""),
    ("Image", "image", "\"\""),
    ("Command", "command", "nil"),
    ("Args", "args", "nil"),
    ("WorkingDir", "workingDir", "\"\""),
    ("Ports", "ports", "nil"),
    ("EnvFrom", "envFrom", "nil"),
    ("Env", "env", "nil"),
    ("Resources", "resources", "{}"),
    ("ResizePolicy", "resizePolicy", "nil"),
    ("RestartPolicy", "restartPolicy", "nil"),
    ("VolumeMounts", "volumeMounts", "nil"),
    ("VolumeDevices", "volumeDevices", "nil"),
    ("LivenessProbe", "livenessProbe", "nil"),
    ("ReadinessProbe", "readinessProbe", "nil"),
    ("StartupProbe", "startupProbe", "nil"),
    ("Lifecycle", "lifecycle", "nil"),
    ("TerminationMessagePath", "terminationMessagePath", "\"\""),
    (
        "TerminationMessagePolicy",
        "terminationMessagePolicy",
        "\"\"",
    ),
    ("ImagePullPolicy", "imagePullPolicy", "\"\""),
    ("SecurityContext", "securityContext", "nil"),
    ("Stdin", "stdin", "false"),
    ("StdinOnce", "stdinOnce", "false"),
    ("TTY", "tty", "false"),
];

/// A value as Go's `%v`-like rendering go-cmp uses for scalars (strings quoted); composite
/// values in their JSON form.
fn go_value(v: Option<&Value>, unset: &str) -> String {
    match v.filter(|v| !empty(v)) {
        None => unset.to_string(),
        Some(Value::String(s)) => format!("{s:?}"),
        Some(v) => v.to_string(),
    }
}

/// The diff kube appends to "may not be changed" (`cmp.Diff(old, new)` of the internal
/// `core.EphemeralContainer`), in go-cmp's layout: changed fields as `-`/`+` lines, two
/// unchanged fields of context around them, the rest elided as `... // N identical fields`.
/// (go-cmp also descends into composite values and randomizes some spacing; composite
/// values are printed whole, in JSON.)
fn ephemeral_diff(old: &Value, new: &Value) -> String {
    enum Rec {
        Same(&'static str, String),
        Diff(&'static str, String, String),
    }
    let recs: Vec<Rec> = EPHEMERAL_FIELDS
        .iter()
        .map(|(go, json, unset)| {
            let (a, b) = (old.get(*json), new.get(*json));
            let eq = normal(a.unwrap_or(&Value::Null)) == normal(b.unwrap_or(&Value::Null));
            let (a, b) = (go_value(a, unset), go_value(b, unset));
            if eq {
                Rec::Same(go, a)
            } else {
                Rec::Diff(go, a, b)
            }
        })
        .collect();
    const CONTEXT: usize = 2;
    let diffs: Vec<usize> = (0..recs.len())
        .filter(|i| matches!(recs[*i], Rec::Diff(..)))
        .collect();
    let shown = |i: usize| diffs.iter().any(|d| i + CONTEXT >= *d && i <= d + CONTEXT);
    let width = EPHEMERAL_FIELDS
        .iter()
        .enumerate()
        .filter(|(i, _)| shown(*i))
        .map(|(_, f)| f.0.len())
        .max()
        .unwrap_or(0);
    let pad = |name: &str| format!("{name}:{}", " ".repeat(width - name.len() + 1));
    let mut out = String::from("  core.EphemeralContainer{\n");
    out.push_str("  \tEphemeralContainerCommon: core.EphemeralContainerCommon{\n");
    let mut elided = 0;
    for (i, r) in recs.iter().enumerate() {
        if !shown(i) {
            elided += 1;
            continue;
        }
        if elided > 0 {
            out.push_str(&format!("  \t\t... // {elided} identical fields\n"));
            elided = 0;
        }
        match r {
            Rec::Same(name, v) => out.push_str(&format!("  \t\t{}{v},\n", pad(name))),
            Rec::Diff(name, a, b) => {
                out.push_str(&format!("- \t\t{}{a},\n", pad(name)));
                out.push_str(&format!("+ \t\t{}{b},\n", pad(name)));
            }
        }
    }
    if elided > 0 {
        out.push_str(&format!("  \t\t... // {elided} identical fields\n"));
    }
    out.push_str("  \t},\n");
    let target = |v: &Value| go_value(v.get("targetContainerName"), "\"\"");
    let (ta, tb) = (target(old), target(new));
    if ta == tb {
        out.push_str(&format!("  \tTargetContainerName: {ta},\n"));
    } else {
        out.push_str(&format!("- \tTargetContainerName: {ta},\n"));
        out.push_str(&format!("+ \tTargetContainerName: {tb},\n"));
    }
    out.push_str("  }\n");
    out
}

fn semantic_eq(a: &Value, b: &Value) -> bool {
    normal(a) == normal(b)
}

fn normal(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !empty(v))
                .map(|(k, v)| {
                    let v = if matches!(k.as_str(), "limits" | "requests") {
                        quantities(v)
                    } else {
                        normal(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normal).collect()),
        v => v.clone(),
    }
}

fn quantities(v: &Value) -> Value {
    match v.as_object() {
        Some(m) => Value::Object(
            m.iter()
                .map(|(k, q)| {
                    let n = q.as_str().and_then(quantity);
                    (
                        k.clone(),
                        n.map_or_else(|| q.clone(), |n| serde_json::json!(n)),
                    )
                })
                .collect(),
        ),
        None => normal(v),
    }
}

fn empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(resources: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "image": "i", "terminationMessagePolicy": "File", "imagePullPolicy": "Always",
             "resources": resources}]},
            "status": {"qosClass": "Burstable"}})
    }

    #[test]
    fn resize_keeps_only_resources() {
        let old = pod(json!({"requests": {"cpu": "100m"}}));
        let mut sent = pod(json!({"requests": {"cpu": "200m"}}));
        sent["spec"]["containers"][0]["image"] = json!("other");
        sent["spec"]["nodeName"] = json!("n1");
        let mut new = old.clone();
        prepare(RESIZE, &mut new, &sent, &old);
        assert_eq!(new["spec"]["containers"][0]["image"], "i");
        assert_eq!(
            new["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "200m"
        );
        assert!(new["spec"].get("nodeName").is_none());
        assert_eq!(validate(RESIZE, &new, &old), vec![]);
    }

    #[test]
    fn resize_rules() {
        let old =
            pod(json!({"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}));
        let msgs = |r: Value| -> Vec<String> {
            let mut new = old.clone();
            prepare(RESIZE, &mut new, &pod(r), &old);
            validate(RESIZE, &new, &old)
                .iter()
                .map(|e| e.to_string())
                .collect()
        };
        assert_eq!(
            msgs(json!({"requests": {"cpu": "100m"}, "limits": {"memory": "2Gi"}})),
            vec!["spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"]
        );
        assert_eq!(
            msgs(json!({"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"memory": "1536Mi"}})),
            vec!["spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer"]
        );
        assert_eq!(
            msgs(
                json!({"requests": {"cpu": "100m", "memory": "1Gi", "ephemeral-storage": "1Gi"}, "limits": {"memory": "2Gi"}})
            ),
            vec!["spec: Forbidden: only cpu and memory resources are mutable"]
        );
        // Guaranteed → Burstable and back are QoS changes.
        let g = json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}});
        let mut old_g = pod(g.clone());
        old_g["status"]["qosClass"] = json!("Guaranteed");
        let mut new = old_g.clone();
        prepare(
            RESIZE,
            &mut new,
            &pod(
                json!({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}),
            ),
            &old_g,
        );
        let errs: Vec<String> = validate(RESIZE, &new, &old_g)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            errs,
            vec![
                r#"spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing"#
            ]
        );
        // 1 and 1000m are the same amount.
        let mut new = old_g.clone();
        prepare(
            RESIZE,
            &mut new,
            &pod(
                json!({"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}),
            ),
            &old_g,
        );
        assert_eq!(validate(RESIZE, &new, &old_g), vec![]);
    }

    #[test]
    fn ephemeral_containers_are_added_not_changed() {
        let old = pod(json!({}));
        let mut sent = old.clone();
        sent["spec"]["ephemeralContainers"] = json!([{"name": "debug", "image": "busybox",
            "terminationMessagePolicy": "File", "imagePullPolicy": "Always", "targetContainerName": "c"}]);
        sent["spec"]["containers"][0]["image"] = json!("ignored");
        let mut new = old.clone();
        prepare(EPHEMERAL, &mut new, &sent, &old);
        assert_eq!(new["spec"]["containers"][0]["image"], "i");
        assert_eq!(validate(EPHEMERAL, &new, &old), vec![]);
        let mut changed = new.clone();
        changed["spec"]["ephemeralContainers"][0]["image"] = json!("alpine");
        let errs: Vec<String> = validate(EPHEMERAL, &changed, &new)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errs, vec![concat!(
            "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debug\" may not be changed\n",
            "  core.EphemeralContainer{\n",
            "  \tEphemeralContainerCommon: core.EphemeralContainerCommon{\n",
            "  \t\tName:    \"debug\",\n",
            "- \t\tImage:   \"busybox\",\n",
            "+ \t\tImage:   \"alpine\",\n",
            "  \t\tCommand: nil,\n",
            "  \t\tArgs:    nil,\n",
            "  \t\t... // 20 identical fields\n",
            "  \t},\n",
            "  \tTargetContainerName: \"c\",\n",
            "  }\n",
        )]);
        let mut removed = new.clone();
        removed["spec"]["ephemeralContainers"] = json!([]);
        assert_eq!(validate(EPHEMERAL, &removed, &new).len(), 1);
        let mut bad = old.clone();
        bad["spec"]["ephemeralContainers"] = json!([{"name": "c", "image": "busybox",
            "terminationMessagePolicy": "File", "imagePullPolicy": "Always", "targetContainerName": "x",
            "ports": [{"containerPort": 80}], "volumeMounts": []}]);
        let errs: Vec<String> = validate(EPHEMERAL, &bad, &old)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errs, vec![
            "spec.ephemeralContainers[0].name: Duplicate value: \"c\"",
            "spec.ephemeralContainers[0].targetContainerName: Not found: \"x\"",
            "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
        ]);
    }
}
