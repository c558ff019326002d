//! A pod's status writes (`pods/status`), as kube's pod status strategy checks them
//! (`ValidatePodStatusUpdate`): custom condition types, the nominated node, the immutable QoS
//! class, containers that may not leave a terminated state, resource claim statuses, pod and
//! host IPs and the reported container users.
//!
//! Not checked, as their feature gates are off in v1.33 (the status strategy drops the fields
//! unless the stored status uses them): the pod's and its conditions' `observedGeneration`
//! (PodObservedGenerationTracking) and the containers' `allocatedResourcesStatus`
//! (ResourceHealthStatus).

use serde_json::Value;

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{is_dns1123_subdomain, is_qualified_name};
use crate::registry::builtin::checks::{
    dual_stack_pair, immutable, legacy_ip, list_of, status_of, str_at, str_of,
};

const STATUS_LISTS: [&str; 3] = [
    "containerStatuses",
    "initContainerStatuses",
    "ephemeralContainerStatuses",
];

/// PrepareForUpdate of the status strategy: a status that leaves out the QoS class keeps the
/// stored one (old kubelets dropped it); the fields of gates that are off are dropped unless
/// the stored status uses them.
pub fn prepare(new: &mut Value, old: &Value) {
    let old_st = status_of(old);
    let nonzero = |v: &Value| {
        v.get("observedGeneration")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            != 0
    };
    let generations = nonzero(old_st) || list_of(old_st, "conditions").iter().any(|c| nonzero(c));
    let health = STATUS_LISTS.iter().any(|l| {
        list_of(old_st, l)
            .iter()
            .any(|s| !list_of(s, "allocatedResourcesStatus").is_empty())
    });
    let qos = str_at(old, "/status/qosClass").to_string();
    let Some(st) = new.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    if st
        .get("qosClass")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
        && !qos.is_empty()
    {
        st.insert("qosClass".into(), Value::from(qos));
    }
    if !generations {
        st.remove("observedGeneration");
        let conds = st.get_mut("conditions").and_then(Value::as_array_mut);
        for c in conds.into_iter().flatten().filter_map(Value::as_object_mut) {
            c.remove("observedGeneration");
        }
    }
    if !health {
        for l in STATUS_LISTS {
            let list = st.get_mut(l).and_then(Value::as_array_mut);
            for s in list.into_iter().flatten().filter_map(Value::as_object_mut) {
                s.remove("allocatedResourcesStatus");
            }
        }
    }
}

/// `ValidatePodStatusUpdate` (the metadata update is checked by the store; the spec, and so
/// `spec.nodeName`, is the stored one).
pub fn validate(new: &Value, old: &Value) -> Vec<FieldError> {
    let (st, old_st) = (status_of(new), status_of(old));
    let mut errs = Vec::new();
    for (i, c) in list_of(st, "conditions").iter().enumerate() {
        let t = str_of(c, "type");
        if matches!(t, "PodScheduled" | "Ready" | "Initialized") {
            continue;
        }
        for m in is_qualified_name(t) {
            errs.push(FieldError::invalid(
                format!("status.conditions[{i}].Type"),
                t,
                m,
            ));
        }
    }
    let nominated = str_of(st, "nominatedNodeName");
    if nominated != str_of(old_st, "nominatedNodeName") && !nominated.is_empty() {
        for m in is_dns1123_subdomain(nominated) {
            errs.push(FieldError::invalid(
                "status.nominatedNodeName",
                nominated,
                m,
            ));
        }
    }
    immutable(
        st.get("qosClass"),
        old_st.get("qosClass"),
        "status.qosClass",
        &mut errs,
    );
    let spec = old.get("spec").unwrap_or(&Value::Null);
    let policy = str_of(spec, "restartPolicy");
    let restartable: Vec<&str> = list_of(spec, "initContainers")
        .iter()
        .filter(|c| str_of(c, "restartPolicy") == "Always")
        .map(|c| str_of(c, "name"))
        .collect();
    for (list, policy, restartable) in [
        ("containerStatuses", policy, &[][..]),
        ("initContainerStatuses", policy, &restartable[..]),
        ("ephemeralContainerStatuses", "Never", &[][..]),
    ] {
        state_transitions(st, old_st, list, policy, restartable, &mut errs);
    }
    claim_statuses(st, spec, &mut errs);
    pod_ips(st, &mut errs);
    host_ips(st, &mut errs);
    let windows = str_at(new, "/spec/os/name") == "windows";
    for list in STATUS_LISTS {
        container_users(st, list, windows, &mut errs);
    }
    errs
}

/// `Validate[Init]ContainerStateTransition`: unless the policy restarts them, containers
/// that terminated (successfully, under OnFailure) stay terminated. The index is the stored
/// status's.
fn state_transitions(
    st: &Value,
    old_st: &Value,
    list: &str,
    policy: &str,
    restartable: &[&str],
    errs: &mut Vec<FieldError>,
) {
    if policy == "Always" {
        return;
    }
    let terminated = |s: &Value| s.pointer("/state/terminated").is_some_and(|t| !t.is_null());
    for (i, o) in list_of(old_st, list).iter().enumerate() {
        if !terminated(o) {
            continue;
        }
        let exit = o
            .pointer("/state/terminated/exitCode")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let name = str_of(o, "name");
        if (exit != 0 && policy == "OnFailure") || restartable.contains(&name) {
            continue;
        }
        for n in list_of(st, list) {
            if str_of(n, "name") == name && !terminated(n) {
                errs.push(FieldError::forbidden(
                    format!("status.{list}[{i}].state"),
                    "may not be transitioned to non-terminated state",
                ));
            }
        }
    }
}

/// `validatePodResourceClaimStatuses`: each names one of `spec.resourceClaims`, once.
fn claim_statuses(st: &Value, spec: &Value, errs: &mut Vec<FieldError>) {
    let claims: Vec<&str> = list_of(spec, "resourceClaims")
        .iter()
        .map(|c| str_of(c, "name"))
        .collect();
    let mut seen = Vec::new();
    for (i, s) in list_of(st, "resourceClaimStatuses").iter().enumerate() {
        let p = format!("status.resourceClaimStatuses[{i}].name");
        let name = str_of(s, "name");
        if !claims.contains(&name) {
            errs.push(FieldError::invalid(
                &p,
                name,
                "must match the name of an entry in `spec.resourceClaims`",
            ));
        }
        if seen.contains(&name) {
            errs.push(FieldError::duplicate(&p, name));
        } else {
            seen.push(name);
        }
        if let Some(claim) = s.get("resourceClaimName").and_then(Value::as_str) {
            for m in is_dns1123_subdomain(claim) {
                errs.push(FieldError::invalid(&p, claim, m));
            }
        }
    }
}

/// Go's `%#v` of `[]core.PodIP` / `[]core.HostIP`.
fn ips_repr(ty: &str, ips: &[Value]) -> String {
    let items: Vec<String> = ips
        .iter()
        .map(|ip| format!("core.{ty}{{IP:{}}}", go_quote(str_of(ip, "ip"))))
        .collect();
    format!("[]core.{ty}{{{}}}", items.join(", "))
}

/// The addresses of a list, each valid, and more than one only as a dual-stack pair.
fn ip_list(list: &[Value], path: &str, ty: &str, errs: &mut Vec<FieldError>) {
    for (i, ip) in list.iter().enumerate() {
        legacy_ip(str_of(ip, "ip"), &format!("{path}[{i}]"), errs);
    }
    if list.len() > 1 {
        let ips: Vec<&str> = list.iter().map(|ip| str_of(ip, "ip")).collect();
        if !dual_stack_pair(&ips) {
            errs.push(FieldError::invalid_rendered(
                path,
                &ips_repr(ty, list),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
}

/// `validatePodIPs`.
fn pod_ips(st: &Value, errs: &mut Vec<FieldError>) {
    ip_list(list_of(st, "podIPs"), "status.podIPs", "PodIP", errs);
}

/// `validateHostIPs`: the first is `hostIP`.
fn host_ips(st: &Value, errs: &mut Vec<FieldError>) {
    let list = list_of(st, "hostIPs");
    let Some(first) = list.first() else {
        return;
    };
    let ip = str_of(first, "ip");
    if ip != str_of(st, "hostIP") {
        errs.push(FieldError::invalid(
            "status.hostIPs[0].ip",
            ip,
            "must be equal to `hostIP`",
        ));
    }
    ip_list(list, "status.hostIPs", "HostIP", errs);
}

/// `validateContainerStatusUsers`: a Linux user's ids in range; none for Windows pods.
fn container_users(st: &Value, list: &str, windows: bool, errs: &mut Vec<FieldError>) {
    const RANGE: &str = "must be between 0 and 2147483647, inclusive";
    for (i, s) in list_of(st, list).iter().enumerate() {
        let Some(linux) = s.pointer("/user/linux").filter(|l| !l.is_null()) else {
            continue;
        };
        let p = format!("status.{list}[{i}].linux");
        if windows {
            errs.push(FieldError::forbidden(p, "cannot be set for a windows pod"));
            continue;
        }
        let bad = |v: &Value| v.as_i64().is_none_or(|n| !(0..=2147483647).contains(&n));
        for f in ["uid", "gid"] {
            let v = linux.get(f).cloned().unwrap_or(Value::from(0));
            if bad(&v) {
                errs.push(FieldError::invalid(format!("{p}.{f}"), v, RANGE));
            }
        }
        for (g, gid) in list_of(linux, "supplementalGroups").iter().enumerate() {
            if bad(gid) {
                errs.push(FieldError::invalid(
                    format!("{p}.supplementalGroups[{g}]"),
                    gid.clone(),
                    RANGE,
                ));
            }
        }
    }
}
