//! `ValidatePodSpec`, shared by pods and every pod template (workloads, jobs, pod templates),
//! in upstream's order for the rules users meet: volumes, containers and init containers
//! (names, images, ports, env, mounts, pull policy, resources, security context, probes),
//! restart and DNS policy, node selector, service account and node names, deadlines,
//! hostname, tolerations.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::service::port_name_errors;
use crate::meta::field_error::FieldError;
use crate::meta::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value,
    validate_labels,
};
use crate::registry::builtin::checks::{list_of as list, str_of as text};

/// `--allow-privileged` (kube-apiserver's process-wide `capabilities.AllowPrivileged`,
/// default false): whether containers may run privileged.
static ALLOW_PRIVILEGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets the cluster policy for privileged containers (once, at start).
pub fn set_allow_privileged(allow: bool) {
    ALLOW_PRIVILEGED.store(allow, std::sync::atomic::Ordering::Relaxed);
}

fn allow_privileged() -> bool {
    ALLOW_PRIVILEGED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Volume sources in upstream's check order, with the path name each reports under.
const SOURCES: &[(&str, &str)] = &[
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    // sic: upstream reports this source as `downwarAPI`
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
];

/// `ValidateVolumes`: the names of the volumes that validated (mounts may use only those).
fn validate_volumes(spec: &Value, path: &str, errs: &mut Vec<FieldError>) -> HashSet<String> {
    let mut names = HashSet::new();
    for (i, v) in list(spec, "volumes").iter().enumerate() {
        let p = format!("{path}.volumes[{i}]");
        let mut el = Vec::new();
        let present: Vec<(&str, &str)> = SOURCES
            .iter()
            .copied()
            .filter(|(key, _)| v.get(*key).is_some_and(|x| !x.is_null()))
            .collect();
        match present.first() {
            None => el.push(FieldError::required(&p, "must specify a volume type")),
            Some((src, _)) => {
                let s = &v[*src];
                let mut req = |field: &str| {
                    if text(s, field).is_empty() {
                        el.push(FieldError::required(format!("{p}.{src}.{field}"), ""));
                    }
                };
                match *src {
                    "hostPath" => req("path"),
                    "secret" => req("secretName"),
                    "configMap" => req("name"),
                    "persistentVolumeClaim" => req("claimName"),
                    "nfs" => {
                        req("server");
                        req("path");
                        let np = text(s, "path");
                        if !np.starts_with('/') {
                            el.push(FieldError::invalid(
                                format!("{p}.nfs.path"),
                                np,
                                "must be an absolute path",
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
        for (_, shown) in present.iter().skip(1) {
            el.push(FieldError::forbidden(
                format!("{p}.{shown}"),
                "may not specify more than 1 volume type",
            ));
        }
        let name = text(v, "name");
        if name.is_empty() {
            el.push(FieldError::required(format!("{p}.name"), ""));
        } else {
            for m in is_dns1123_label(name) {
                el.push(FieldError::invalid(format!("{p}.name"), name, m));
            }
        }
        if !name.is_empty() && names.contains(name) {
            el.push(FieldError::duplicate(format!("{p}.name"), name));
        }
        if el.is_empty() {
            names.insert(name.to_string());
        }
        errs.extend(el);
    }
    names
}

/// A Kubernetes quantity as a number (for comparisons).
pub fn quantity(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse().ok()?),
        _ => return None,
    };
    Some(n * mult)
}

fn quantity_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

const STANDARD_CONTAINER: &[&str] = &["cpu", "memory", "ephemeral-storage"];

/// `validateResourceRequirements` for one container.
fn validate_resources(c: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let res = c.get("resources").unwrap_or(&Value::Null);
    validate_resource_requirements(res, &format!("{p}.resources"), errs);
}

/// `ValidateContainerResourceRequirements` of a `ResourceRequirements` at `p` (a container's
/// `resources`, or a RuntimeClass's overhead as `limits`).
pub fn validate_resource_requirements(res: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let limits = res.get("limits").and_then(Value::as_object);
    let requests = res.get("requests").and_then(Value::as_object);
    let check_name = |k: &str, path: &str, errs: &mut Vec<FieldError>| {
        let msgs = is_qualified_name(k);
        if !msgs.is_empty() {
            for m in msgs {
                errs.push(FieldError::invalid(path, k, m));
            }
            return;
        }
        if !k.contains('/') {
            let standard = STANDARD_CONTAINER.contains(&k) || k.starts_with("hugepages-");
            if !standard && !matches!(k, "pods" | "services" | "storage") {
                errs.push(FieldError::invalid(
                    path,
                    k,
                    "must be a standard resource type or fully qualified",
                ));
            }
            if !standard {
                errs.push(FieldError::invalid(
                    path,
                    k,
                    "must be a standard resource for containers",
                ));
            }
        }
    };
    let check_quantity = |q: &Value, path: &str, errs: &mut Vec<FieldError>| {
        if quantity(&quantity_text(q)).is_some_and(|n| n < 0.0) {
            errs.push(FieldError::invalid(
                path,
                quantity_text(q),
                "must be greater than or equal to 0",
            ));
        }
    };
    for (k, q) in limits.into_iter().flatten() {
        let path = format!("{p}.limits[{k}]");
        check_name(k, &path, errs);
        check_quantity(q, &path, errs);
    }
    for (k, q) in requests.into_iter().flatten() {
        let path = format!("{p}.requests[{k}]");
        check_name(k, &path, errs);
        check_quantity(q, &path, errs);
        if let Some(l) = limits.and_then(|m| m.get(k)) {
            let (rq, lq) = (quantity(&quantity_text(q)), quantity(&quantity_text(l)));
            if let (Some(rq), Some(lq)) = (rq, lq) {
                if rq > lq {
                    errs.push(FieldError::invalid(
                        format!("{p}.requests"),
                        quantity_text(q),
                        format!(
                            "must be less than or equal to {k} limit of {}",
                            quantity_text(l)
                        ),
                    ));
                }
            }
        }
    }
}

/// `validateHandler` of a probe or lifecycle hook at `path`.
fn validate_handler(h: &Value, path: &str, kinds: &[&str], errs: &mut Vec<FieldError>) {
    let mut found = false;
    for k in kinds {
        let Some(v) = h.get(*k).filter(|v| !v.is_null()) else {
            continue;
        };
        if found {
            errs.push(FieldError::forbidden(
                format!("{path}.{k}"),
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        found = true;
        match *k {
            "exec" if list(v, "command").is_empty() => {
                errs.push(FieldError::required(format!("{path}.exec.command"), ""))
            }
            "httpGet" | "tcpSocket" | "grpc" => {
                if let Some(port) = v.get("port") {
                    let pp = format!("{path}.{k}.port");
                    match port {
                        Value::Number(n) if !(1..=65535).contains(&n.as_i64().unwrap_or(0)) => errs
                            .push(FieldError::invalid(
                                pp,
                                port.clone(),
                                "must be between 1 and 65535, inclusive",
                            )),
                        Value::String(name) => {
                            for m in port_name_errors(name) {
                                errs.push(FieldError::invalid(&pp, port.clone(), m));
                            }
                        }
                        _ => {}
                    }
                }
                if *k == "httpGet" {
                    let scheme = text(v, "scheme");
                    if !scheme.is_empty() && !matches!(scheme, "HTTP" | "HTTPS") {
                        errs.push(FieldError::not_supported(
                            format!("{path}.httpGet.scheme"),
                            scheme,
                            &["HTTP", "HTTPS"],
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    if !found {
        errs.push(FieldError::required(path, "must specify a handler type"));
    }
}

const PROBE_HANDLERS: &[&str] = &["exec", "httpGet", "tcpSocket", "grpc"];

fn validate_probe(c: &Value, p: &str, which: &str, errs: &mut Vec<FieldError>) {
    let Some(probe) = c.get(which).filter(|v| !v.is_null()) else {
        return;
    };
    let path = format!("{p}.{which}");
    validate_handler(probe, &path, PROBE_HANDLERS, errs);
    for f in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        if let Some(v) = probe.get(f) {
            if v.as_i64().is_some_and(|n| n < 0) {
                errs.push(FieldError::invalid(
                    format!("{path}.{f}"),
                    v.clone(),
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
    if matches!(which, "livenessProbe" | "startupProbe") {
        if let Some(v) = probe.get("successThreshold") {
            if v.as_i64().is_some_and(|n| n != 1) {
                errs.push(FieldError::invalid(
                    format!("{path}.successThreshold"),
                    v.clone(),
                    "must be 1",
                ));
            }
        }
    }
}

/// `validateContainerCommon`.
fn validate_container(c: &Value, p: &str, volumes: &HashSet<String>, errs: &mut Vec<FieldError>) {
    let name = text(c, "name");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{p}.name"), ""));
    } else {
        for m in is_dns1123_label(name) {
            errs.push(FieldError::invalid(format!("{p}.name"), name, m));
        }
    }
    if text(c, "image").is_empty() {
        errs.push(FieldError::required(format!("{p}.image"), ""));
    }
    let tmp = text(c, "terminationMessagePolicy");
    if !tmp.is_empty() && !matches!(tmp, "File" | "FallbackToLogsOnError") {
        errs.push(FieldError::not_supported(
            format!("{p}.terminationMessagePolicy"),
            tmp,
            &["File", "FallbackToLogsOnError"],
        ));
    }
    let mut port_names = HashSet::new();
    for (j, port) in list(c, "ports").iter().enumerate() {
        let pp = format!("{p}.ports[{j}]");
        let pname = text(port, "name");
        if !pname.is_empty() {
            let msgs = port_name_errors(pname);
            if !msgs.is_empty() {
                for m in msgs {
                    errs.push(FieldError::invalid(format!("{pp}.name"), pname, m));
                }
            } else if !port_names.insert(pname) {
                errs.push(FieldError::duplicate(format!("{pp}.name"), pname));
            }
        }
        let cp = port
            .get("containerPort")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if cp == 0 {
            errs.push(FieldError::required(format!("{pp}.containerPort"), ""));
        } else if !(1..=65535).contains(&cp) {
            errs.push(FieldError::invalid(
                format!("{pp}.containerPort"),
                cp,
                "must be between 1 and 65535, inclusive",
            ));
        }
        let hp = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
        if hp != 0 && !(1..=65535).contains(&hp) {
            errs.push(FieldError::invalid(
                format!("{pp}.hostPort"),
                hp,
                "must be between 1 and 65535, inclusive",
            ));
        }
        let proto = text(port, "protocol");
        if !proto.is_empty() && !matches!(proto, "TCP" | "UDP" | "SCTP") {
            errs.push(FieldError::not_supported(
                format!("{pp}.protocol"),
                proto,
                &["SCTP", "TCP", "UDP"],
            ));
        }
    }
    for (j, e) in list(c, "env").iter().enumerate() {
        let ep = format!("{p}.env[{j}]");
        let ename = text(e, "name");
        if ename.is_empty() {
            errs.push(FieldError::required(format!("{ep}.name"), ""));
        } else if ename.contains('=') || !ename.bytes().all(|b| (32..=126).contains(&b)) {
            // RelaxedEnvironmentVariableValidation is on by default in 1.33
            errs.push(FieldError::invalid(
                format!("{ep}.name"),
                ename,
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
        if let Some(from) = e.get("valueFrom").filter(|v| !v.is_null()) {
            let n = [
                "fieldRef",
                "resourceFieldRef",
                "configMapKeyRef",
                "secretKeyRef",
            ]
            .iter()
            .filter(|k| from.get(**k).is_some_and(|v| !v.is_null()))
            .count();
            let vp = format!("{ep}.valueFrom");
            if n == 0 {
                errs.push(FieldError::invalid(&vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"));
            } else if !text(e, "value").is_empty() {
                errs.push(FieldError::invalid(
                    &vp,
                    "",
                    "may not be specified when `value` is not empty",
                ));
            } else if n > 1 {
                errs.push(FieldError::invalid(
                    &vp,
                    "",
                    "may not have more than one field specified at a time",
                ));
            }
        }
    }
    let mut paths = HashSet::new();
    for (j, m) in list(c, "volumeMounts").iter().enumerate() {
        let mp = format!("{p}.volumeMounts[{j}]");
        let mname = text(m, "name");
        if mname.is_empty() {
            errs.push(FieldError::required(format!("{mp}.name"), ""));
        }
        if !volumes.contains(mname) {
            errs.push(FieldError::not_found(format!("{mp}.name"), mname));
        }
        let path = text(m, "mountPath");
        if path.is_empty() {
            errs.push(FieldError::required(format!("{mp}.mountPath"), ""));
        } else if !paths.insert(path) {
            errs.push(FieldError::invalid(
                format!("{mp}.mountPath"),
                path,
                "must be unique",
            ));
        }
    }
    let pull = text(c, "imagePullPolicy");
    if !pull.is_empty() && !matches!(pull, "Always" | "IfNotPresent" | "Never") {
        errs.push(FieldError::not_supported(
            format!("{p}.imagePullPolicy"),
            pull,
            &["Always", "IfNotPresent", "Never"],
        ));
    }
    validate_resources(c, p, errs);
    if c.pointer("/securityContext/privileged") == Some(&json!(true)) && !allow_privileged() {
        errs.push(FieldError::forbidden(
            format!("{p}.securityContext.privileged"),
            "disallowed by cluster policy",
        ));
    }
}

/// The fields of an ephemeral container beyond kube's allow list, in the struct's order:
/// "cannot be set for an Ephemeral Container".
const EPHEMERAL_FORBIDDEN: &[&str] = &[
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// `validateEphemeralContainers`: each is a container (name, image, ...), its name unique
/// among every container of the pod (`names` holds the others), its target one of the
/// regular or init containers, and without what only a workload container may have.
fn validate_ephemeral_containers<'a>(
    spec: &'a Value,
    path: &str,
    volumes: &HashSet<String>,
    names: &mut HashMap<&'a str, ()>,
    errs: &mut Vec<FieldError>,
) {
    let others: HashSet<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|l| list(spec, l))
        .map(|c| text(c, "name"))
        .collect();
    for (i, c) in list(spec, "ephemeralContainers").iter().enumerate() {
        let p = format!("{path}.ephemeralContainers[{i}]");
        validate_container(c, &p, volumes, errs);
        let name = text(c, "name");
        if names.insert(name, ()).is_some() {
            errs.push(FieldError::duplicate(format!("{p}.name"), name));
        }
        let target = text(c, "targetContainerName");
        if !target.is_empty() && !others.contains(target) {
            errs.push(FieldError::not_found(
                format!("{p}.targetContainerName"),
                target,
            ));
        }
        for f in EPHEMERAL_FORBIDDEN {
            let set = match c.get(*f) {
                None | Some(Value::Null) => false,
                Some(Value::Array(a)) => !a.is_empty(),
                // An empty `resources` is the zero value kube's allow list compares with.
                Some(Value::Object(o)) if *f == "resources" => o.values().any(|v| {
                    !(v.is_null()
                        || v.as_object().is_some_and(|m| m.is_empty())
                        || v.as_array().is_some_and(|a| a.is_empty()))
                }),
                Some(_) => true,
            };
            if set {
                errs.push(FieldError::forbidden(
                    format!("{p}.{f}"),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        for (j, m) in list(c, "volumeMounts").iter().enumerate() {
            for f in ["subPath", "subPathExpr"] {
                if !text(m, f).is_empty() {
                    errs.push(FieldError::forbidden(
                        format!("{p}.volumeMounts[{j}].{f}"),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
}

/// `ValidatePodSpec` of the spec at `path` (`spec`, `spec.template.spec`, ...).
pub fn validate_pod_spec(spec: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let volumes = validate_volumes(spec, path, errs);
    let containers = list(spec, "containers");
    let mut names: HashMap<&str, ()> = HashMap::new();
    if containers.is_empty() {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
    } else {
        let mut host_ports = HashSet::new();
        for (i, c) in containers.iter().enumerate() {
            let p = format!("{path}.containers[{i}]");
            validate_container(c, &p, &volumes, errs);
            let name = text(c, "name");
            if names.insert(name, ()).is_some() {
                errs.push(FieldError::duplicate(format!("{p}.name"), name));
            }
            for which in ["livenessProbe", "readinessProbe", "startupProbe"] {
                validate_probe(c, &p, which, errs);
            }
            if c.get("restartPolicy").is_some_and(|v| !v.is_null()) {
                errs.push(FieldError::forbidden(
                    format!("{p}.restartPolicy"),
                    "may not be set for non-init containers",
                ));
            }
            for (j, port) in list(c, "ports").iter().enumerate() {
                let hp = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
                if hp == 0 {
                    continue;
                }
                let key = format!(
                    "{}/{}/{hp}",
                    port.get("protocol")
                        .and_then(Value::as_str)
                        .unwrap_or("TCP"),
                    text(port, "hostIP")
                );
                if !host_ports.insert(key.clone()) {
                    errs.push(FieldError::duplicate(
                        format!("{p}.ports[{j}].hostPort"),
                        key,
                    ));
                }
            }
        }
    }
    for (i, c) in list(spec, "initContainers").iter().enumerate() {
        let p = format!("{path}.initContainers[{i}]");
        validate_container(c, &p, &volumes, errs);
        let rp = c.get("restartPolicy").and_then(Value::as_str);
        if let Some(rp) = rp.filter(|r| *r != "Always") {
            errs.push(FieldError::not_supported(
                format!("{p}.restartPolicy"),
                rp,
                &["Always"],
            ));
        }
        let name = text(c, "name");
        if !name.is_empty() && names.insert(name, ()).is_some() {
            errs.push(FieldError::duplicate(format!("{p}.name"), name));
        }
        if rp != Some("Always") {
            for f in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if c.get(f).is_some_and(|v| !v.is_null()) {
                    errs.push(FieldError::forbidden(
                        format!("{p}.{f}"),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
    validate_ephemeral_containers(spec, path, &volumes, &mut names, errs);
    let rp = text(spec, "restartPolicy");
    if !rp.is_empty() && !matches!(rp, "Always" | "OnFailure" | "Never") {
        errs.push(FieldError::not_supported(
            format!("{path}.restartPolicy"),
            rp,
            &["Always", "OnFailure", "Never"],
        ));
    }
    let dns = text(spec, "dnsPolicy");
    if !dns.is_empty()
        && !matches!(
            dns,
            "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None"
        )
    {
        errs.push(FieldError::not_supported(
            format!("{path}.dnsPolicy"),
            dns,
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        ));
    }
    if let Some(sel) = spec.get("nodeSelector").and_then(Value::as_object) {
        errs.extend(validate_labels(Some(sel), &format!("{path}.nodeSelector")));
    }
    for f in ["serviceAccountName", "nodeName"] {
        let v = text(spec, f);
        if !v.is_empty() {
            for m in is_dns1123_subdomain(v) {
                errs.push(FieldError::invalid(format!("{path}.{f}"), v, m));
            }
        }
    }
    if let Some(ads) = spec.get("activeDeadlineSeconds").filter(|v| !v.is_null()) {
        if !ads.as_i64().is_some_and(|n| (1..=2147483647).contains(&n)) {
            errs.push(FieldError::invalid(
                format!("{path}.activeDeadlineSeconds"),
                ads.clone(),
                "must be between 1 and 2147483647, inclusive",
            ));
        }
    }
    for f in ["hostname", "subdomain"] {
        let v = text(spec, f);
        if !v.is_empty() {
            for m in is_dns1123_label(v) {
                errs.push(FieldError::invalid(format!("{path}.{f}"), v, m));
            }
        }
    }
    validate_tolerations(spec, path, errs);
}

/// `ValidateTolerations`.
pub fn validate_tolerations(spec: &Value, path: &str, errs: &mut Vec<FieldError>) {
    for (i, t) in list(spec, "tolerations").iter().enumerate() {
        let p = format!("{path}.tolerations[{i}]");
        let key = text(t, "key");
        let op = text(t, "operator");
        let effect = text(t, "effect");
        if !key.is_empty() {
            for m in is_qualified_name(key) {
                errs.push(FieldError::invalid(format!("{p}.key"), key, m));
            }
        }
        if key.is_empty() && op != "Exists" {
            errs.push(FieldError::invalid(
                format!("{p}.operator"),
                op,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.get("tolerationSeconds").is_some_and(|v| !v.is_null()) && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                format!("{p}.effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        let value = text(t, "value");
        match op {
            "" | "Equal" => {
                let msgs = is_valid_label_value(value);
                if !msgs.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("{p}.operator"),
                        value,
                        msgs.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("{p}.operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                format!("{p}.operator"),
                other,
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute")
        {
            errs.push(FieldError::not_supported(
                format!("{p}.effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
}

/// `ValidatePodUpdate`'s spec rule: only images, activeDeadlineSeconds, added tolerations and
/// a terminationGracePeriodSeconds of 1 after a negative one may change.
pub fn validate_pod_spec_update(new: &Value, old: &Value, errs: &mut Vec<FieldError>) {
    let ns = new.get("spec").cloned().unwrap_or(Value::Null);
    let os = old.get("spec").cloned().unwrap_or(Value::Null);
    for list_name in ["containers", "initContainers"] {
        if list(&ns, list_name).len() != list(&os, list_name).len() {
            errs.push(FieldError::forbidden(
                format!("spec.{list_name}"),
                "pod updates may not add or remove containers",
            ));
            return;
        }
    }
    if ns == os {
        return;
    }
    let mut munged = ns.clone();
    for list_name in ["containers", "initContainers"] {
        if let (Some(new_cs), Some(old_cs)) = (
            munged.get_mut(list_name).and_then(Value::as_array_mut),
            os.get(list_name).and_then(Value::as_array),
        ) {
            for (n, o) in new_cs.iter_mut().zip(old_cs) {
                if let Some(img) = o.get("image") {
                    n["image"] = img.clone();
                }
            }
        }
    }
    for f in ["activeDeadlineSeconds", "tolerations"] {
        match os.get(f) {
            Some(v) => munged[f] = v.clone(),
            None => {
                if let Some(m) = munged.as_object_mut() {
                    m.remove(f);
                }
            }
        }
    }
    let old_grace = os
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64);
    if old_grace.is_some_and(|g| g < 0) && munged["terminationGracePeriodSeconds"] == json!(1) {
        munged["terminationGracePeriodSeconds"] = json!(old_grace);
    }
    if munged != os {
        errs.push(FieldError::forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        for (q, n) in [
            ("1", 1.0),
            ("500m", 0.5),
            ("1Gi", 1073741824.0),
            ("128Mi", 134217728.0),
            ("1e3", 1000.0),
            ("2k", 2000.0),
        ] {
            assert_eq!(quantity(q), Some(n), "{q}");
        }
        assert_eq!(quantity("1x"), None);
    }

    #[test]
    fn a_typical_pod_is_valid_and_mistakes_are_named() {
        let spec = json!({"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "volumeMounts": [{"name": "data", "mountPath": "/d"}],
            "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "500m"}}}],
            "volumes": [{"name": "data", "emptyDir": {}}], "restartPolicy": "Always", "dnsPolicy": "ClusterFirst"});
        let mut errs = Vec::new();
        validate_pod_spec(&spec, "spec", &mut errs);
        assert_eq!(errs, vec![]);
        let bad = json!({"containers": [
            {"name": "c", "image": "i", "volumeMounts": [{"name": "x", "mountPath": "/x"}],
             "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}},
             "securityContext": {"privileged": true}},
            {"name": "c", "image": ""}], "restartPolicy": "Sometimes"});
        let mut errs = Vec::new();
        validate_pod_spec(&bad, "spec", &mut errs);
        let msgs: Vec<String> = errs.iter().map(|e| e.message()).collect();
        assert_eq!(msgs, [
            "spec.containers[0].volumeMounts[0].name: Not found: \"x\"",
            "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1",
            "spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy",
            "spec.containers[1].image: Required value",
            "spec.containers[1].name: Duplicate value: \"c\"",
            "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
        ]);
    }
}
