//! Per-resource strategies: the small, stateless rules a resource adds to the generic store
//! (prepare for create/update, validate, delete behaviour), like kube's `strategy.go` files.
//!
//! Strategies are pure functions of the object(s): no I/O, no clock, no randomness (the store
//! settles those first). Defaulting that kube-apiserver does for the common built-in types lives
//! here too, so that what clients read back looks like what kube-apiserver returns.

use serde_json::{json, Map, Value};

use super::object::{meta, meta_mut, Part};
use super::resources::ResourceInfo;
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
    if is(info, "batch", "jobs") {
        generate_job_selector(obj);
    }
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
    if info.has_status && part != Part::Whole {
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

/// Whether an object whose metadata finalizers are gone must still stay (a namespace keeps
/// its `spec.finalizers` until the namespace controller has emptied it).
pub fn needs_graceful_delete(info: &ResourceInfo, obj: &Value) -> bool {
    if is(info, "", "namespaces") {
        return obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
    }
    false
}

/// Why a DELETE of this object is refused outright, if it is: the `default`, `kube-system` and
/// `kube-public` namespaces may never be deleted (kube's NamespaceLifecycle rule).
pub fn delete_forbidden(info: &ResourceInfo, name: &str) -> Option<&'static str> {
    (is(info, "", "namespaces") && matches!(name, "default" | "kube-system" | "kube-public"))
        .then_some("this namespace may not be deleted")
}

/// A resource's default garbage-collection policy when a DELETE names none (kube's
/// `DefaultGarbageCollectionPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcPolicy {
    /// Dependents are deleted (in the background unless the request says Foreground).
    DeleteDependents,
    /// Dependents are orphaned: the `orphan` finalizer is added.
    OrphanDependents,
    /// The resource takes no part in garbage collection.
    Unsupported,
}

/// ReplicationControllers in core/v1 and Jobs in batch/v1 orphan their pods by default, for
/// backwards compatibility; everything else deletes dependents.
pub fn default_gc_policy(info: &ResourceInfo) -> GcPolicy {
    match (info.group, info.version, info.resource) {
        ("", "v1", "replicationcontrollers") | ("batch", "v1", "jobs") => {
            GcPolicy::OrphanDependents
        }
        _ => GcPolicy::DeleteDependents,
    }
}

/// The warning kube sends when a batch/v1 Job is deleted without a propagation policy.
pub fn delete_warning(info: &ResourceInfo, policy_given: bool) -> Option<&'static str> {
    (!policy_given && is(info, "batch", "jobs") && default_gc_policy(info) == GcPolicy::OrphanDependents)
        .then_some("child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning")
}

/// Graceful deletion (kube's `CheckGracefulDelete`): `None` for resources deleted at once
/// (every kind but pods); for a pod, the grace period it gets: the request's, else the pod's
/// `terminationGracePeriodSeconds`; 0 when it is not scheduled or has already terminated.
pub fn graceful_delete_period(
    info: &ResourceInfo,
    obj: &Value,
    requested: Option<i64>,
) -> Option<i64> {
    if !is(info, "", "pods") {
        return None;
    }
    let spec = obj.get("spec");
    let mut period = requested.unwrap_or_else(|| {
        spec.and_then(|s| s.get("terminationGracePeriodSeconds"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    });
    let node = spec
        .and_then(|s| s.get("nodeName"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let phase = obj.pointer("/status/phase").and_then(Value::as_str);
    if node.is_empty() || matches!(phase, Some("Failed" | "Succeeded")) {
        period = 0;
    }
    Some(period.max(0))
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
        ("", "replicationcontrollers") => {
            // SetDefaults_ReplicationController: selector and labels from the template's labels.
            let labels = obj
                .pointer("/spec/template/metadata/labels")
                .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
                .cloned();
            if let Some(labels) = labels {
                let empty =
                    |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(Map::is_empty);
                if empty(obj.pointer("/spec/selector")) {
                    obj_entry(obj, "spec").insert("selector".into(), labels.clone());
                }
                if empty(obj.pointer("/metadata/labels")) {
                    meta_mut(obj).insert("labels".into(), labels);
                }
            }
            let spec = obj_entry(obj, "spec");
            spec.entry("replicas").or_insert(json!(1));
            default_template(spec);
        }
        ("", "podtemplates") => {
            if let Some(t) = obj.get_mut("template").and_then(Value::as_object_mut) {
                default_template_object(t);
            }
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
            // Both unset: a non-parallel job (1 and 1); completions stay unset otherwise.
            if is_unset(spec.get("completions")) && is_unset(spec.get("parallelism")) {
                spec.insert("completions".into(), json!(1));
            }
            if is_unset(spec.get("parallelism")) {
                spec.insert("parallelism".into(), json!(1));
            }
            if is_unset(spec.get("backoffLimit")) {
                let per_index = !is_unset(spec.get("backoffLimitPerIndex"));
                spec.insert(
                    "backoffLimit".into(),
                    json!(if per_index { i32::MAX as i64 } else { 6 }),
                );
            }
            spec.entry("completionMode").or_insert(json!("NonIndexed"));
            spec.entry("suspend").or_insert(json!(false));
            let failure_policy = !is_unset(spec.get("podFailurePolicy"));
            spec.entry("podReplacementPolicy")
                .or_insert(json!(if failure_policy {
                    "Failed"
                } else {
                    "TerminatingOrFailed"
                }));
            spec.entry("manualSelector").or_insert(json!(false));
            default_template(spec);
            // SetDefaults_Job: the job's labels from the template's when it has none.
            let labels = obj
                .pointer("/spec/template/metadata/labels")
                .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
                .cloned();
            if let Some(labels) = labels {
                if meta(obj)
                    .get("labels")
                    .and_then(Value::as_object)
                    .is_none_or(Map::is_empty)
                {
                    meta_mut(obj).insert("labels".into(), labels);
                }
            }
        }
        ("batch", "cronjobs") => {
            let spec = obj_entry(obj, "spec");
            spec.entry("concurrencyPolicy").or_insert(json!("Allow"));
            spec.entry("suspend").or_insert(json!(false));
            spec.entry("successfulJobsHistoryLimit").or_insert(json!(3));
            spec.entry("failedJobsHistoryLimit").or_insert(json!(1));
            // Only the pod template inside jobTemplate is defaulted (JobTemplateSpec is not a
            // Job: no SetDefaults_Job there).
            if let Some(jt) = spec.get_mut("jobTemplate").and_then(Value::as_object_mut) {
                if let Some(js) = jt.get_mut("spec").and_then(Value::as_object_mut) {
                    default_template(js);
                }
            }
        }
        ("", "pods") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                default_pod_spec(spec);
                // SetDefaults_Pod (pods only, not templates).
                spec.entry("enableServiceLinks").or_insert(json!(true));
                for list in ["containers", "initContainers"] {
                    if let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) {
                        for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                            requests_from_limits(c);
                        }
                    }
                }
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
            let ty = spec
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if matches!(ty.as_str(), "NodePort" | "LoadBalancer") {
                spec.entry("externalTrafficPolicy")
                    .or_insert(json!("Cluster"));
            }
            if ty == "LoadBalancer" {
                spec.entry("allocateLoadBalancerNodePorts")
                    .or_insert(json!(true));
            }
            let external = ty == "ExternalName";
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
        default_template_object(t);
    }
}

/// A PodTemplateSpec.
fn default_template_object(t: &mut Map<String, Value>) {
    t.entry("metadata").or_insert(json!({}));
    let ps = t.entry("spec").or_insert(json!({}));
    if let Some(ps) = ps.as_object_mut() {
        default_pod_spec(ps);
    }
}

/// Absent or JSON null (as a protobuf body leaves an optional field).
fn is_unset(v: Option<&Value>) -> bool {
    v.is_none_or(Value::is_null)
}

/// batch/v1 Job's PrepareForCreate without `manualSelector: true`: the job-name and
/// controller-uid labels on the template and a `batch.kubernetes.io/controller-uid` selector.
fn generate_job_selector(obj: &mut Value) {
    if obj.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let name = meta(obj)
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let uid = meta(obj)
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let spec = obj_entry(obj, "spec");
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if !template.is_object() {
        return;
    }
    if !template.get("metadata").is_some_and(Value::is_object) {
        template["metadata"] = json!({});
    }
    let tm = template["metadata"].as_object_mut().expect("object");
    if !tm.get("labels").is_some_and(Value::is_object) {
        tm.insert("labels".into(), json!({}));
    }
    let labels = tm["labels"].as_object_mut().expect("object");
    for (k, v) in [
        ("batch.kubernetes.io/controller-uid", &uid),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("job-name", &name),
    ] {
        labels.entry(k).or_insert_with(|| json!(v));
    }
    if !spec.get("selector").is_some_and(Value::is_object) {
        spec.insert("selector".into(), json!({}));
    }
    let sel = spec["selector"].as_object_mut().expect("object");
    if !sel.get("matchLabels").is_some_and(Value::is_object) {
        sel.insert("matchLabels".into(), json!({}));
    }
    if let Some(ml) = sel.get_mut("matchLabels").and_then(Value::as_object_mut) {
        ml.entry("batch.kubernetes.io/controller-uid")
            .or_insert_with(|| json!(uid));
    }
}

/// A container's requests default to its limits (pods only).
fn requests_from_limits(c: &mut Map<String, Value>) {
    let Some(limits) = c
        .get("resources")
        .and_then(|r| r.get("limits"))
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
        return;
    };
    let req = res.entry("requests").or_insert_with(|| json!({}));
    if let Some(req) = req.as_object_mut() {
        for (k, v) in limits {
            req.entry(k).or_insert(v);
        }
    }
}

/// Volume sources that have a `defaultMode` (0644).
const MODE_SOURCES: &[&str] = &["secret", "configMap", "downwardAPI", "projected"];

fn default_volume(v: &mut Map<String, Value>) {
    // A volume with no source is an emptyDir.
    if v.iter().all(|(k, val)| k == "name" || val.is_null()) {
        v.insert("emptyDir".into(), json!({}));
    }
    for src in MODE_SOURCES {
        if let Some(s) = v.get_mut(*src).and_then(Value::as_object_mut) {
            s.entry("defaultMode").or_insert(json!(420));
        }
    }
    if let Some(h) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
        h.entry("type").or_insert(json!(""));
    }
}

fn default_probe(p: &mut Map<String, Value>) {
    p.entry("timeoutSeconds").or_insert(json!(1));
    p.entry("periodSeconds").or_insert(json!(10));
    p.entry("successThreshold").or_insert(json!(1));
    p.entry("failureThreshold").or_insert(json!(3));
    if let Some(h) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
        h.entry("path").or_insert(json!("/"));
        h.entry("scheme").or_insert(json!("HTTP"));
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
    if let Some(vs) = ps.get_mut("volumes").and_then(Value::as_array_mut) {
        for v in vs.iter_mut().filter_map(Value::as_object_mut) {
            default_volume(v);
        }
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
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
                for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                    if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
                        default_probe(p);
                    }
                }
                if let Some(env) = c.get_mut("env").and_then(Value::as_array_mut) {
                    for e in env.iter_mut() {
                        if let Some(f) = e
                            .pointer_mut("/valueFrom/fieldRef")
                            .and_then(Value::as_object_mut)
                        {
                            f.entry("apiVersion").or_insert(json!("v1"));
                        }
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
