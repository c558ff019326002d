//! Warnings for objects that embed a pod (kube's `GetWarningsForPod` /
//! `GetWarningsForPodTemplate`), for the workloads and jobs around them and for claim specs:
//! deprecated node labels, annotations that no longer work, deprecated volume types,
//! fractional byte sizes, duplicate ports, env vars, host aliases and pull secrets, null
//! affinity selectors and values kube corrects, plus the name warning of kinds whose name
//! ends up in pod names. On update a template is warned about only when the generation
//! moved (the spec changed); pods get no warnings on update, as in kube.

use serde_json::{Map, Value};

use super::quantity::Quantity;
use crate::meta::field_error::go_quote;
use crate::meta::validation::is_dns1123_label;
use crate::registry::builtin::checks::{list_of, str_of};

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

/// Node-label warnings of one node selector term (`path` ends with the term's index).
fn term_warnings(term: &Value, path: &str, out: &mut Vec<String>) {
    for (j, e) in list_of(term, "matchExpressions").iter().enumerate() {
        let key = str_of(e, "key");
        if let Some(why) = deprecated_label(key) {
            out.push(format!("{path}.matchExpressions[{j}].key: {key} is {why}"));
        }
    }
}

/// Annotations that stopped working, with why (kube's `deprecatedAnnotations`).
const DEPRECATED_ANNOTATIONS: &[(&str, &str)] = &[
    (
        "scheduler.alpha.kubernetes.io/critical-pod",
        "non-functional in v1.16+; use the \"priorityClassName\" field instead",
    ),
    (
        "security.alpha.kubernetes.io/sysctls",
        "non-functional in v1.11+; use the \"sysctls\" field instead",
    ),
    (
        "security.alpha.kubernetes.io/unsafe-sysctls",
        "non-functional in v1.11+; use the \"sysctls\" field instead",
    ),
];

/// Volume types that are deprecated or gone, with since when.
const DEPRECATED_VOLUMES: &[(&str, &str)] = &[
    (
        "photonPersistentDisk",
        "deprecated in v1.11, non-functional in v1.16+",
    ),
    ("gitRepo", "deprecated in v1.11"),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
    ("storageos", "deprecated in v1.22, non-functional in v1.25+"),
    ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("ephemeral", ""),
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
];

const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER: &str = "container.apparmor.security.beta.kubernetes.io/";

fn present(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// `{path}: fractional byte value "1500m" is invalid, must be an integer` when the quantity
/// at `resources[name]` is not a whole number of bytes.
fn fractional(resources: &Value, name: &str, path: &str, out: &mut Vec<String>) {
    let Some(q) = resources.get(name).and_then(Quantity::of) else {
        return;
    };
    if q.milli() % 1000 != 0 {
        out.push(format!(
            "{path}[{name}]: fractional byte value {} is invalid, must be an integer",
            go_quote(&q.string())
        ));
    }
}

/// Warnings of a PersistentVolumeClaim spec at `path` (kube's
/// `GetWarningsForPersistentVolumeClaimSpec`): fractional storage sizes.
pub fn claim_spec_warnings(spec: &Value, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let res = spec.get("resources").unwrap_or(&Value::Null);
    for part in ["requests", "limits"] {
        if let Some(r) = res.get(part) {
            fractional(r, "storage", &format!("{path}.resources.{part}"), &mut out);
        }
    }
    out
}

/// The containers of a pod spec in kube's visiting order, with their field paths.
fn containers<'a>(spec: &'a Value, path: &str) -> Vec<(&'a Value, String)> {
    let mut out = Vec::new();
    for kind in ["initContainers", "containers", "ephemeralContainers"] {
        for (i, c) in list_of(spec, kind).iter().enumerate() {
            out.push((c, format!("{path}spec.{kind}[{i}]")));
        }
    }
    out
}

/// Go's `%+v` of a container port (kube's internal `ContainerPort` field order).
fn port_repr(p: &Value) -> String {
    format!(
        "{{Name:{} HostPort:{} ContainerPort:{} Protocol:{} HostIP:{}}}",
        str_of(p, "name"),
        p.get("hostPort").and_then(Value::as_i64).unwrap_or(0),
        p.get("containerPort").and_then(Value::as_i64).unwrap_or(0),
        str_of(p, "protocol"),
        str_of(p, "hostIP"),
    )
}

fn null_selector_terms(terms: &[Value], path: &str, weighted: bool, out: &mut Vec<String>) {
    for (i, t) in terms.iter().enumerate() {
        let (term, at) = if weighted {
            (
                t.get("podAffinityTerm").unwrap_or(&Value::Null),
                format!("{path}[{i}].podAffinityTerm.labelSelector"),
            )
        } else {
            (t, format!("{path}[{i}].labelSelector"))
        };
        if !present(term, "labelSelector") {
            out.push(format!(
                "{at}: a null labelSelector results in matching no pod"
            ));
        }
    }
}

/// The warnings for a pod's `metadata` and `spec` found at `path` (`""` for a pod,
/// `spec.template.` for a workload's template), in kube's order (its
/// `warningsForPodSpecAndMeta`).
pub fn pod_warnings(path: &str, meta: &Value, spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let empty = Map::new();
    let annotations = meta
        .get("annotations")
        .and_then(Value::as_object)
        .unwrap_or(&empty);

    // Deprecated node labels in selectors, affinity and topology spread.
    if let Some(sel) = spec.get("nodeSelector").and_then(Value::as_object) {
        let mut keys: Vec<&String> = sel.keys().collect();
        keys.sort();
        for k in keys {
            if let Some(why) = deprecated_label(k) {
                out.push(format!("{path}spec.nodeSelector[{k}]: {why}"));
            }
        }
    }
    let node_affinity = spec.pointer("/affinity/nodeAffinity");
    if let Some(na) = node_affinity.filter(|v| !v.is_null()) {
        let at = format!(
            "{path}spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        );
        if let Some(req) = na.get("requiredDuringSchedulingIgnoredDuringExecution") {
            for (i, term) in list_of(req, "nodeSelectorTerms").iter().enumerate() {
                term_warnings(term, &format!("{at}[{i}]"), &mut out);
            }
        }
        let at = format!(
            "{path}spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        );
        for (i, p) in list_of(na, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            let pref = p.get("preference").unwrap_or(&Value::Null);
            term_warnings(pref, &format!("{at}[{i}].preference"), &mut out);
        }
    }
    for (i, t) in list_of(spec, "topologySpreadConstraints")
        .iter()
        .enumerate()
    {
        let at = format!("{path}spec.topologySpreadConstraints[{i}]");
        let key = str_of(t, "topologyKey");
        if let Some(why) = deprecated_label(key) {
            out.push(format!("{at}.topologyKey: {key} is {why}"));
        }
        if !present(t, "labelSelector") {
            out.push(format!(
                "{at}.labelSelector: a null labelSelector results in matching no pod"
            ));
        }
    }

    // Annotations that no longer work.
    for (key, why) in DEPRECATED_ANNOTATIONS {
        if annotations.contains_key(*key) {
            out.push(format!("{path}metadata.annotations[{key}]: {why}"));
        }
    }

    // Deprecated and removed volume plugins.
    for (i, v) in list_of(spec, "volumes").iter().enumerate() {
        for (kind, why) in DEPRECATED_VOLUMES {
            if !present(v, kind) {
                continue;
            }
            let at = format!("{path}spec.volumes[{i}]");
            if *kind == "ephemeral" {
                if let Some(claim) = v.pointer("/ephemeral/volumeClaimTemplate/spec") {
                    out.extend(claim_spec_warnings(
                        claim,
                        &format!("{at}.ephemeral.volumeClaimTemplate.spec"),
                    ));
                }
            } else {
                let name = if *kind == "storageos" {
                    "storageOS"
                } else {
                    kind
                };
                out.push(format!("{at}.{name}: {why}"));
            }
        }
    }

    // Projected files that clash with a service account token's path.
    let volumes = list_of(spec, "volumes");
    let sources = |v: &'_ Value| -> Vec<Value> {
        v.pointer("/projected/sources")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let token_paths: Vec<String> = volumes
        .iter()
        .flat_map(sources)
        .filter_map(|s| {
            s.get("serviceAccountToken")
                .filter(|t| !t.is_null())
                .map(|t| str_of(t, "path").to_string())
        })
        .collect();
    if !token_paths.is_empty() {
        let clash = |p: &str| token_paths.iter().any(|t| t == p);
        for (i, v) in volumes.iter().enumerate() {
            let at = format!("{path}spec.volumes[{i}].projected.sources");
            for s in sources(v) {
                for (src, name) in [
                    ("configMap", "configMap"),
                    ("secret", "secrets"),
                    ("downwardAPI", "downwardAPI"),
                ] {
                    let Some(x) = s.get(src).filter(|x| !x.is_null()) else {
                        continue;
                    };
                    for (j, item) in list_of(x, "items").iter().enumerate() {
                        let p = str_of(item, "path");
                        if clash(p) {
                            out.push(format!(
                                "{at}.{name}[{j}]: has duplicated path with ServiceAccountToken {}",
                                go_quote(p)
                            ));
                        }
                    }
                }
                if let Some(b) = s.get("clusterTrustBundle").filter(|x| !x.is_null()) {
                    let p = str_of(b, "path");
                    if clash(p) {
                        out.push(format!(
                            "{at}.ClusterTrustBundle: has duplicated path with ServiceAccountToken {}",
                            go_quote(p)
                        ));
                    }
                }
            }
        }
    }

    // Duplicate host aliases and image pull secrets.
    let mut seen = Vec::new();
    for (i, a) in list_of(spec, "hostAliases").iter().enumerate() {
        let ip = str_of(a, "ip");
        if seen.contains(&ip) {
            out.push(format!(
                "{path}spec.hostAliases[{i}].ip: duplicate ip {}",
                go_quote(ip)
            ));
        } else {
            seen.push(ip);
        }
    }
    let secrets = list_of(spec, "imagePullSecrets");
    let mut seen = Vec::new();
    for (i, s) in secrets.iter().enumerate() {
        let name = str_of(s, "name");
        if seen.contains(&name) {
            out.push(format!(
                "{path}spec.imagePullSecrets[{i}].name: duplicate name {}",
                go_quote(name)
            ));
        } else {
            seen.push(name);
        }
    }
    for (i, s) in secrets.iter().enumerate() {
        if str_of(s, "name").is_empty() {
            out.push(format!(
                "{path}spec.imagePullSecrets[{i}].name: invalid empty name \"\""
            ));
        }
    }

    // Fractional byte quantities in the pod overhead.
    if let Some(o) = spec.get("overhead") {
        for r in ["memory", "ephemeral-storage"] {
            fractional(o, r, &format!("{path}spec.overhead"), &mut out);
        }
    }

    // Security annotations without the fields that replaced them.
    let pod_sc = spec.get("securityContext").unwrap_or(&Value::Null);
    if !present(pod_sc, "seccompProfile") && annotations.contains_key(SECCOMP_POD) {
        out.push(format!(
            "{path}metadata.annotations[{SECCOMP_POD}]: non-functional in v1.27+; use the \"seccompProfile\" field instead"
        ));
    }
    let pod_apparmor = present(pod_sc, "appArmorProfile");
    for (c, at) in containers(spec, path) {
        let name = str_of(c, "name");
        let sc = c.get("securityContext").unwrap_or(&Value::Null);
        let key = format!("{SECCOMP_CONTAINER}{name}");
        if !present(sc, "seccompProfile") && annotations.contains_key(&key) {
            out.push(format!(
                "{path}metadata.annotations[{key}]: non-functional in v1.27+; use the \"seccompProfile\" field instead"
            ));
        }
        // (kube warns about a pod's own AppArmor annotations when it copies them into the
        // fields, a template's here: the same text.)
        let key = format!("{APPARMOR_CONTAINER}{name}");
        if !(pod_apparmor || present(sc, "appArmorProfile")) && annotations.contains_key(&key) {
            out.push(format!(
                "{path}metadata.annotations[{key}]: deprecated since v1.30; use the \"appArmorProfile\" field instead"
            ));
        }
        let res = c.get("resources").unwrap_or(&Value::Null);
        for (r, part) in [
            ("memory", "limits"),
            ("memory", "requests"),
            ("ephemeral-storage", "limits"),
            ("ephemeral-storage", "requests"),
        ] {
            if let Some(q) = res.get(part) {
                fractional(q, r, &format!("{at}.resources.{part}"), &mut out);
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for (i, e) in list_of(c, "env").iter().enumerate() {
            let n = str_of(e, "name");
            if !names.contains(&n) {
                names.push(n);
                continue;
            }
            let reference = format!("$({n})");
            let value = str_of(e, "value");
            if present(e, "valueFrom") || value == reference || !value.contains(&reference) {
                out.push(format!(
                    "{at}.env[{i}]: hides previous definition of {}, which may be dropped when using apply",
                    go_quote(n)
                ));
            }
        }
    }

    // Ports defined twice, or overlapping, across all containers.
    let mut ports: Vec<(String, String, &Value)> = Vec::new();
    for (c, at) in containers(spec, path) {
        for (i, p) in list_of(c, "ports").iter().enumerate() {
            let here = format!("{at}.ports[{i}]");
            let host_port = p.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            let host_ip = str_of(p, "hostIP");
            if !host_ip.is_empty() && host_port == 0 {
                out.push(format!(
                    "{here}: hostIP set without hostPort: {}",
                    port_repr(p)
                ));
            }
            let key = format!(
                "{}/{}",
                p.get("containerPort").and_then(Value::as_i64).unwrap_or(0),
                str_of(p, "protocol")
            );
            for (k, other_at, other) in &ports {
                if *k != key {
                    continue;
                }
                let other_port = other.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
                let other_ip = str_of(other, "hostIP");
                if host_ip == other_ip && host_port == other_port {
                    out.push(format!("{here}: duplicate port definition with {other_at}"));
                } else if host_port == 0 || other_port == 0 {
                    out.push(format!(
                        "{here}: overlapping port definition with {other_at}"
                    ));
                } else if host_port == other_port && (host_ip.is_empty() != other_ip.is_empty()) {
                    out.push(format!(
                        "{here}: dangerously ambiguous port definition with {other_at}"
                    ));
                }
            }
            ports.push((key, here, p));
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

    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(a) = spec.get("affinity").and_then(|a| a.get(kind)) else {
            continue;
        };
        let at = format!("{path}spec.affinity.{kind}");
        null_selector_terms(
            list_of(a, "requiredDuringSchedulingIgnoredDuringExecution"),
            &format!("{at}.requiredDuringSchedulingIgnoredDuringExecution"),
            false,
            &mut out,
        );
        null_selector_terms(
            list_of(a, "preferredDuringSchedulingIgnoredDuringExecution"),
            &format!("{at}.preferredDuringSchedulingIgnoredDuringExecution"),
            true,
            &mut out,
        );
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

/// What a pod's name becomes, for the name warning.
const POD_HOSTNAME: &str = "the Pod's hostname";
/// What a workload's name becomes.
const POD_NAMES: &str = "Pod names and hostnames";

/// kube's warning for a name that is not a DNS label, where the name ends up in `used_in`.
fn name_warning(obj: &Value, used_in: &str) -> Option<String> {
    let name = obj.pointer("/metadata/name").and_then(Value::as_str)?;
    let msgs = is_dns1123_label(name);
    (!msgs.is_empty()).then(|| {
        format!(
            "metadata.name: this is used in {used_in}, which can result in surprising behavior; a DNS label is recommended: [{}]",
            msgs.join(" ")
        )
    })
}

/// WarningsOnCreate of a kind whose pod is at `at` (a pod template: no name warning).
pub fn on_create(obj: &Value, at: At) -> Vec<String> {
    template_warnings(obj, at.0, at.1)
}

/// WarningsOnCreate of a pod: its name, then its spec.
pub fn pod_on_create(obj: &Value) -> Vec<String> {
    let mut out: Vec<String> = name_warning(obj, POD_HOSTNAME).into_iter().collect();
    out.extend(on_create(obj, POD));
    out
}

/// WarningsOnCreate of a workload whose pods are named after it (its template at `at`).
pub fn workload_on_create(obj: &Value, at: At) -> Vec<String> {
    let mut out: Vec<String> = name_warning(obj, POD_NAMES).into_iter().collect();
    out.extend(on_create(obj, at));
    out
}

fn generation(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/generation").and_then(Value::as_i64)
}

/// WarningsOnUpdate of a kind whose pod template is at `at`: the template's warnings, when
/// the update changed the spec (the generation moved). Pods get none on update.
pub fn on_update(new: &Value, old: &Value, at: At) -> Vec<String> {
    if generation(new) == generation(old) {
        return Vec::new();
    }
    template_warnings(new, at.0, at.1)
}

/// Indexed Jobs beyond these sizes may not track failed indexes.
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_SOFT_LIMIT: i64 = 10_000;

/// kube's `WarningsForJobSpec` for the job spec at pointer `at` (field path `path`, no
/// trailing dot).
fn job_spec_warnings(obj: &Value, at: &str, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let spec = obj.pointer(at).unwrap_or(&Value::Null);
    let n = |k: &str| spec.get(k).and_then(Value::as_i64);
    if str_of(spec, "completionMode") == "Indexed"
        && n("completions").is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT)
        && n("parallelism").is_some_and(|p| p > PARALLELISM_SOFT_LIMIT)
    {
        out.push(format!("{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"));
    }
    let template_at = format!("{at}/template");
    out.extend(template_warnings(
        obj,
        &template_at,
        &format!("{path}.template."),
    ));
    out
}

/// WarningsOnCreate of a Job (`at`/`path` `/spec`, `spec`) or a CronJob (its job template's
/// spec): the name, then the job spec.
pub fn job_on_create(obj: &Value, at: &str, path: &str) -> Vec<String> {
    let mut out: Vec<String> = name_warning(obj, POD_NAMES).into_iter().collect();
    out.extend(job_spec_warnings(obj, at, path));
    out
}

/// WarningsOnUpdate of a Job or CronJob: the job spec's, when the generation moved.
pub fn job_on_update(new: &Value, old: &Value, at: &str, path: &str) -> Vec<String> {
    if generation(new) == generation(old) {
        return Vec::new();
    }
    job_spec_warnings(new, at, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn template_warnings_in_kubes_order() {
        let meta = json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "x"}});
        let spec = json!({"nodeSelector": {"beta.kubernetes.io/os": "linux", "a": "b"},
            "topologySpreadConstraints": [{"topologyKey": "failure-domain.beta.kubernetes.io/zone"}],
            "volumes": [{"name": "g", "gitRepo": {"repository": "r"}}],
            "hostAliases": [{"ip": "1.1.1.1"}, {"ip": "1.1.1.1"}],
            "imagePullSecrets": [{"name": "a"}, {"name": "a"}, {"name": ""}],
            "containers": [{"name": "c",
                "resources": {"requests": {"memory": "1500m"}},
                "env": [{"name": "X", "value": "1"}, {"name": "X", "value": "2"},
                        {"name": "X", "value": "$(X)-more"}],
                "ports": [{"containerPort": 80, "protocol": "TCP"},
                          {"containerPort": 80, "protocol": "TCP"},
                          {"containerPort": 90, "protocol": "TCP", "hostIP": "1.2.3.4"}]}],
            "terminationGracePeriodSeconds": -1});
        let p = "spec.template.spec";
        assert_eq!(
            pod_warnings("spec.template.", &meta, &spec),
            [
                format!("{p}.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead"),
                format!("{p}.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead"),
                format!("{p}.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod"),
                format!("{p}.volumes[0].gitRepo: deprecated in v1.11"),
                format!("{p}.hostAliases[1].ip: duplicate ip \"1.1.1.1\""),
                format!("{p}.imagePullSecrets[1].name: duplicate name \"a\""),
                format!("{p}.imagePullSecrets[2].name: invalid empty name \"\""),
                "spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the \"seccompProfile\" field instead".to_string(),
                format!("{p}.containers[0].resources.requests[memory]: fractional byte value \"1500m\" is invalid, must be an integer"),
                format!("{p}.containers[0].env[1]: hides previous definition of \"X\", which may be dropped when using apply"),
                format!("{p}.containers[0].ports[1]: duplicate port definition with {p}.containers[0].ports[0]"),
                format!("{p}.containers[0].ports[2]: hostIP set without hostPort: {{Name: HostPort:0 ContainerPort:90 Protocol:TCP HostIP:1.2.3.4}}"),
                format!("{p}.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"),
            ]
        );
    }

    #[test]
    fn name_and_update_rules() {
        let job = json!({"metadata": {"name": "a.b", "generation": 1},
            "spec": {"template": {"spec": {"terminationGracePeriodSeconds": -1}}}});
        assert_eq!(
            job_on_create(&job, "/spec", "spec"),
            [
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
                "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
            ]
        );
        assert!(job_on_update(&job, &job, "/spec", "spec").is_empty());
        let mut newer = job.clone();
        newer["metadata"]["generation"] = json!(2);
        assert_eq!(job_on_update(&newer, &job, "/spec", "spec").len(), 1);
        assert_eq!(
            pod_on_create(&json!({"metadata": {"name": "a.b"}}))[0],
            "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"
        );
    }
}
