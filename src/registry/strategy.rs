//! Per-resource strategies: the small, stateless rules a resource adds to the generic store
//! (prepare for create/update, validate, delete behaviour), like kube's `strategy.go` files.
//!
//! Strategies are pure functions of the object(s): no I/O, no clock, no randomness (the store
//! settles those first). Defaulting that kube-apiserver does for the common built-in types lives
//! here too, so that what clients read back looks like what kube-apiserver returns.

use serde_json::{json, Map, Value};

use super::resources::ResourceInfo;
use super::store::{meta, meta_mut, Part};
use crate::meta::field_error::FieldError;

fn is(info: &ResourceInfo, group: &str, resource: &str) -> bool {
    info.group == group && info.resource == resource
}

/// Resources that keep a client-supplied status on create (their status is written by the
/// component that creates them).
fn keeps_status_on_create(info: &ResourceInfo) -> bool {
    matches!(
        info.resource,
        "nodes" | "events" | "certificatesigningrequests"
    ) && !info.group.starts_with("events")
}

/// PrepareForCreate: reset status, set initial defaults.
pub fn prepare_for_create(info: &ResourceInfo, obj: &mut Value) {
    if info.has_status && !keeps_status_on_create(info) {
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
    }
    set_type_meta(info, obj);
    default_object(info, obj);
    if is(info, "", "namespaces") {
        let name = meta(obj)
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let labels = meta_mut(obj).entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), json!(name));
        }
        obj["spec"] = json!({"finalizers": ["kubernetes"]});
        obj["status"] = json!({"phase": "Active"});
    }
    if is(info, "", "pods") {
        let qos = pod_qos(obj.get("spec").unwrap_or(&Value::Null));
        obj["status"] = json!({"phase": "Pending", "qosClass": qos});
    }
    if is(info, "", "persistentvolumes") || is(info, "", "persistentvolumeclaims") {
        obj["status"] = json!({"phase": "Pending"});
    }
}

/// apiVersion and kind as this resource serves them.
pub fn set_type_meta(info: &ResourceInfo, obj: &mut Value) {
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!(info.api_version()));
        o.insert("kind".into(), json!(info.kind));
    }
}

/// PrepareForUpdate: system fields come from the old object; the spec/status split.
pub fn prepare_for_update(info: &ResourceInfo, part: Part, new: &mut Value, old: &Value) {
    set_type_meta(info, new);
    if part == Part::Status {
        let status = new.get("status").cloned();
        let rv = meta(new).get("resourceVersion").cloned();
        *new = old.clone();
        match status {
            Some(s) => new["status"] = s,
            None => {
                if let Some(o) = new.as_object_mut() {
                    o.remove("status");
                }
            }
        }
        if let Some(rv) = rv {
            meta_mut(new).insert("resourceVersion".into(), rv);
        }
        return;
    }
    if info.has_status {
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(o) = new.as_object_mut() {
                    o.remove("status");
                }
            }
        }
    }
    if is(info, "", "namespaces") {
        // spec.finalizers change only through /finalize.
        let fins = old.get("spec").cloned().unwrap_or(json!({}));
        new["spec"] = fins;
    }
    default_object(info, new);
    let old_meta = meta(old).clone();
    let m = meta_mut(new);
    for f in ["uid"] {
        let empty = m.get(f).and_then(Value::as_str).is_none_or(str::is_empty);
        if empty {
            if let Some(v) = old_meta.get(f) {
                m.insert(f.into(), v.clone());
            }
        }
    }
    for f in [
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(f) {
            Some(v) => {
                m.insert(f.into(), v.clone());
            }
            None => {
                m.remove(f);
            }
        }
    }
    if info.generation && spec_changed(new, old) {
        let g = meta(new)
            .get("generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(new).insert("generation".into(), json!(g + 1));
    }
}

/// The namespace /finalize subresource: only spec.finalizers changes.
pub fn prepare_for_finalize(new: &mut Value, old: &Value) {
    let fins = new.get("spec").and_then(|s| s.get("finalizers")).cloned();
    let rv = meta(new).get("resourceVersion").cloned();
    *new = old.clone();
    new["spec"] = match fins {
        Some(f) => json!({ "finalizers": f }),
        None => json!({}),
    };
    if let Some(rv) = rv {
        meta_mut(new).insert("resourceVersion".into(), rv);
    }
}

fn spec_changed(new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("metadata");
            o.remove("status");
        }
        v
    };
    strip(new) != strip(old)
}

/// Whether DELETE must leave the object in place with a deletionTimestamp even without
/// finalizers (namespaces with spec finalizers; pods bound to a node, which the kubelet removes).
pub fn needs_graceful_delete(info: &ResourceInfo, obj: &Value) -> bool {
    if is(info, "", "namespaces") {
        return obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
    }
    false
}

/// Extra changes when an object enters graceful deletion.
pub fn prepare_for_delete(info: &ResourceInfo, obj: &mut Value) {
    if is(info, "", "namespaces") {
        obj["status"] = json!({"phase": "Terminating"});
    }
}

/// Per-type validation beyond ObjectMeta.
pub fn validate(info: &ResourceInfo, obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec");
    match (info.group, info.resource) {
        ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets") => {
            if let Some(r) = spec.and_then(|s| s.get("replicas")) {
                if r.as_i64().is_some_and(|n| n < 0) {
                    errs.push(FieldError::invalid(
                        "spec.replicas",
                        r.clone(),
                        "must be greater than or equal to 0",
                    ));
                }
            }
            if spec.and_then(|s| s.get("selector")).is_none() {
                errs.push(FieldError::required("spec.selector", ""));
            }
            if spec
                .and_then(|s| s.pointer("/template/spec/containers"))
                .is_none()
            {
                errs.push(FieldError::required("spec.template.spec.containers", ""));
            }
        }
        ("", "pods") => {
            let containers = spec
                .and_then(|s| s.get("containers"))
                .and_then(Value::as_array);
            match containers {
                None => errs.push(FieldError::required("spec.containers", "")),
                Some(cs) => {
                    for (i, c) in cs.iter().enumerate() {
                        if c.get("image")
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                        {
                            errs.push(FieldError::required(
                                format!("spec.containers[{i}].image"),
                                "",
                            ));
                        }
                        if c.get("name")
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                        {
                            errs.push(FieldError::required(
                                format!("spec.containers[{i}].name"),
                                "",
                            ));
                        }
                    }
                }
            }
        }
        ("", "configmaps" | "secrets") => {
            for field in ["data", "binaryData", "stringData"] {
                if let Some(m) = obj.get(field).and_then(Value::as_object) {
                    for k in m.keys() {
                        if !valid_config_key(k) {
                            errs.push(FieldError::invalid(
                                format!("{field}[{k}]"),
                                json!(k),
                                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                            ));
                        }
                    }
                }
            }
        }
        _ => {}
    }
    errs
}

fn valid_config_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 253
        && k != "."
        && k != ".."
        && !k.starts_with("..")
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

// ---------------------------------------------------------------------------------------------
// Defaulting (the subset of kube's SetDefaults_* that clients commonly read back)

fn default_object(info: &ResourceInfo, obj: &mut Value) {
    match (info.group, info.resource) {
        ("apps", "deployments") => {
            let spec = obj_entry(obj, "spec");
            spec.entry("replicas").or_insert(json!(1));
            spec.entry("revisionHistoryLimit").or_insert(json!(10));
            spec.entry("progressDeadlineSeconds").or_insert(json!(600));
            let strategy = spec.entry("strategy").or_insert(json!({}));
            if let Some(s) = strategy.as_object_mut() {
                let t = s.entry("type").or_insert(json!("RollingUpdate")).clone();
                if t == "RollingUpdate" {
                    let ru = s.entry("rollingUpdate").or_insert(json!({}));
                    if let Some(ru) = ru.as_object_mut() {
                        ru.entry("maxUnavailable").or_insert(json!("25%"));
                        ru.entry("maxSurge").or_insert(json!("25%"));
                    }
                }
            }
            default_template(spec);
        }
        ("apps", "replicasets") => {
            let spec = obj_entry(obj, "spec");
            spec.entry("replicas").or_insert(json!(1));
            default_template(spec);
        }
        ("apps", "statefulsets") => {
            let spec = obj_entry(obj, "spec");
            spec.entry("replicas").or_insert(json!(1));
            spec.entry("podManagementPolicy")
                .or_insert(json!("OrderedReady"));
            spec.entry("revisionHistoryLimit").or_insert(json!(10));
            spec.entry("updateStrategy")
                .or_insert(json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}));
            spec.entry("persistentVolumeClaimRetentionPolicy")
                .or_insert(json!({"whenDeleted": "Retain", "whenScaled": "Retain"}));
            default_template(spec);
        }
        ("apps", "daemonsets") => {
            let spec = obj_entry(obj, "spec");
            spec.entry("revisionHistoryLimit").or_insert(json!(10));
            spec.entry("updateStrategy").or_insert(
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
            );
            default_template(spec);
        }
        ("batch", "jobs") => {
            let spec = obj_entry(obj, "spec");
            spec.entry("parallelism").or_insert(json!(1));
            spec.entry("backoffLimit").or_insert(json!(6));
            spec.entry("completionMode").or_insert(json!("NonIndexed"));
            spec.entry("suspend").or_insert(json!(false));
            spec.entry("podReplacementPolicy")
                .or_insert(json!("TerminatingOrFailed"));
            if !spec.contains_key("completions") {
                spec.insert("completions".into(), json!(1));
            }
            default_template(spec);
        }
        ("batch", "cronjobs") => {
            let spec = obj_entry(obj, "spec");
            spec.entry("concurrencyPolicy").or_insert(json!("Allow"));
            spec.entry("suspend").or_insert(json!(false));
            spec.entry("successfulJobsHistoryLimit").or_insert(json!(3));
            spec.entry("failedJobsHistoryLimit").or_insert(json!(1));
            if let Some(jt) = spec.get_mut("jobTemplate").and_then(Value::as_object_mut) {
                let js = jt.entry("spec").or_insert(json!({}));
                if let Some(js) = js.as_object_mut() {
                    js.entry("backoffLimit").or_insert(json!(6));
                    default_template(js);
                }
            }
        }
        ("", "pods") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                default_pod_spec(spec);
            }
        }
        ("", "services") => {
            let spec = obj_entry(obj, "spec");
            spec.entry("type").or_insert(json!("ClusterIP"));
            spec.entry("sessionAffinity").or_insert(json!("None"));
            if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
                for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                    p.entry("protocol").or_insert(json!("TCP"));
                    // Unset (or 0, as protobuf clients send it) means "same as port".
                    let unset = p.get("targetPort").is_none_or(|t| t == &json!(0));
                    if unset {
                        if let Some(port) = p.get("port").cloned() {
                            p.insert("targetPort".into(), port);
                        }
                    }
                }
            }
            let external = spec.get("type").and_then(Value::as_str) == Some("ExternalName");
            if !external {
                spec.entry("internalTrafficPolicy")
                    .or_insert(json!("Cluster"));
                spec.entry("ipFamilyPolicy").or_insert(json!("SingleStack"));
                spec.entry("ipFamilies").or_insert(json!(["IPv4"]));
            }
        }
        ("", "secrets") => {
            if let Some(o) = obj.as_object_mut() {
                o.entry("type").or_insert(json!("Opaque"));
                // stringData is write-only: merged into data (base64).
                if let Some(sd) = o.remove("stringData") {
                    use base64::Engine;
                    let data = o.entry("data").or_insert(json!({}));
                    if let (Some(d), Some(sd)) = (data.as_object_mut(), sd.as_object()) {
                        for (k, v) in sd {
                            let s = v.as_str().unwrap_or_default();
                            d.insert(
                                k.clone(),
                                json!(base64::engine::general_purpose::STANDARD.encode(s)),
                            );
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

fn obj_entry<'a>(obj: &'a mut Value, field: &str) -> &'a mut Map<String, Value> {
    if !obj.get(field).is_some_and(Value::is_object) {
        obj[field] = json!({});
    }
    obj[field].as_object_mut().expect("object")
}

fn default_template(spec: &mut Map<String, Value>) {
    if let Some(t) = spec.get_mut("template").and_then(Value::as_object_mut) {
        t.entry("metadata").or_insert(json!({}));
        let ps = t.entry("spec").or_insert(json!({}));
        if let Some(ps) = ps.as_object_mut() {
            default_pod_spec(ps);
        }
    }
}

fn default_pod_spec(ps: &mut Map<String, Value>) {
    ps.entry("restartPolicy").or_insert(json!("Always"));
    ps.entry("terminationGracePeriodSeconds")
        .or_insert(json!(30));
    ps.entry("dnsPolicy").or_insert(json!("ClusterFirst"));
    ps.entry("securityContext").or_insert(json!({}));
    ps.entry("schedulerName")
        .or_insert(json!("default-scheduler"));
    for list in ["containers", "initContainers"] {
        if let Some(cs) = ps.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                c.entry("terminationMessagePath")
                    .or_insert(json!("/dev/termination-log"));
                c.entry("terminationMessagePolicy").or_insert(json!("File"));
                c.entry("resources").or_insert(json!({}));
                let image = c
                    .get("image")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                c.entry("imagePullPolicy")
                    .or_insert(json!(pull_policy(&image)));
                if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
                    for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                        p.entry("protocol").or_insert(json!("TCP"));
                    }
                }
            }
        }
    }
}

/// `Always` for `:latest` or untagged images, else `IfNotPresent`.
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        None => "Always",
        Some((_, "latest")) => "Always",
        Some(_) => "IfNotPresent",
    }
}

/// The pod's QoS class from its containers' requests and limits.
fn pod_qos(spec: &Value) -> &'static str {
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
                (Some(a), Some(b)) if a != b => guaranteed = false,
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

    #[test]
    fn pull_policies() {
        for (image, want) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("localhost:5000/app", "Always"),
            ("localhost:5000/app:v1", "IfNotPresent"),
            ("app@sha256:abc", "IfNotPresent"),
        ] {
            assert_eq!(pull_policy(image), want, "{image}");
        }
    }

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
