//! Services (core/v1): defaults, address allocation (done by the store, see
//! [`crate::registry::allocate`]), field selectors and the printer.

use crate::registry::builtin::checks;
use serde_json::{json, Value};

use crate::registry::builtin::checks::str_at as text;

use crate::meta::field_error::FieldError;
use crate::meta::validation::{is_dns1123_label, is_dns1123_subdomain, validate_labels};
use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::{obj_entry, Extra, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Services;

/// A Service ingress point's `ipMode` (set exactly when `ip` is).
fn ip_mode(ing: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let ip = ing.get("ip").and_then(Value::as_str).unwrap_or("");
    let mode = ing.get("ipMode").filter(|m| !m.is_null());
    match mode {
        None if !ip.is_empty() => errs.push(FieldError::required(
            format!("{p}.ipMode"),
            "must be specified when `ip` is set",
        )),
        None => {}
        Some(_) if ip.is_empty() => errs.push(FieldError::forbidden(
            format!("{p}.ipMode"),
            "may not be specified when `ip` is not set",
        )),
        Some(m) if !matches!(m.as_str(), Some("VIP" | "Proxy")) => errs.push(
            FieldError::not_supported(format!("{p}.ipMode"), m.clone(), &["Proxy", "VIP"]),
        ),
        Some(_) => {}
    }
}

impl Strategy for Services {
    fn extras(&self) -> &'static [Extra] {
        &[Extra::ServiceProxy]
    }

    fn quota(&self) -> Option<&'static dyn crate::registry::quota::Evaluator> {
        Some(&crate::registry::quota::Services)
    }

    fn default(&self, obj: &mut Value) {
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
        if ty != "ExternalName" {
            spec.entry("internalTrafficPolicy")
                .or_insert(json!("Cluster"));
            spec.entry("ipFamilyPolicy").or_insert(json!("SingleStack"));
            spec.entry("ipFamilies").or_insert(json!(["IPv4"]));
        }
        // LoadBalancerIPMode (GA): a load balancer's ingress IP is a VIP unless it says.
        if ty == "LoadBalancer" {
            let ingress = obj
                .pointer_mut("/status/loadBalancer/ingress")
                .and_then(Value::as_array_mut);
            for ing in ingress
                .into_iter()
                .flatten()
                .filter_map(Value::as_object_mut)
            {
                let has_ip = ing
                    .get("ip")
                    .and_then(Value::as_str)
                    .is_some_and(|ip| !ip.is_empty());
                if has_ip && ing.get("ipMode").is_none_or(Value::is_null) {
                    ing.insert("ipMode".into(), json!("VIP"));
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }

    /// `ValidateServiceUpdate`: assigned cluster IPs never change (unless the type moves to or
    /// from ExternalName), then the service as on create.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let ty = |v: &Value| {
            v.pointer("/spec/type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let ips = |v: &Value| -> Vec<String> {
            v.pointer("/spec/clusterIPs")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .or_else(|| {
                    v.pointer("/spec/clusterIP")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map(|s| vec![s.to_string()])
                })
                .unwrap_or_default()
        };
        if ty(new) != "ExternalName" && ty(old) != "ExternalName" {
            let (n, o) = (ips(new), ips(old));
            let rendered = format!(
                "[]string{{{}}}",
                n.iter()
                    .map(|s| crate::meta::field_error::go_quote(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if !o.is_empty() {
                if n.is_empty() {
                    errs.push(FieldError::invalid_rendered(
                        "spec.clusterIPs[0]",
                        &rendered,
                        "primary clusterIP can not be unset",
                    ));
                } else if let Some(i) = (0..n.len().min(o.len())).find(|&i| n[i] != o[i]) {
                    errs.push(FieldError::invalid_rendered(
                        format!("spec.clusterIPs[{i}]"),
                        &rendered,
                        "may not change once set",
                    ));
                }
            }
        }
        errs.extend(validate(new));
        errs
    }

    /// `ValidateServiceStatusUpdate`: the load balancer status.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let ingress = checks::lb_ingress(new);
        let path = "status.loadBalancer.ingress";
        if text(new, "/spec/type") != "LoadBalancer" && !ingress.is_empty() {
            errs.push(FieldError::forbidden(
                path,
                "may only be used when `spec.type` is 'LoadBalancer'",
            ));
            return errs;
        }
        for (i, ing) in ingress.iter().enumerate() {
            let p = format!("{path}[{i}]");
            checks::lb_ingress_point(ing, &p, &mut errs, ip_mode);
        }
        errs
    }

    fn allocates(&self) -> bool {
        true
    }

    /// kube's `patchAllocatedValues`: an update that leaves out the allocated cluster IPs or
    /// node ports keeps the ones the service has.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let ty = |v: &Value| text(v, "/spec/type").to_string();
        let (nt, ot) = (ty(new), ty(old));
        let needs_ip = |t: &str| t != "ExternalName";
        if needs_ip(&nt) && needs_ip(&ot) {
            let spec = obj_entry(new, "spec");
            for f in ["clusterIP", "clusterIPs"] {
                let unset = match spec.get(f) {
                    None | Some(Value::Null) => true,
                    Some(Value::String(s)) => s.is_empty(),
                    Some(Value::Array(a)) => a.is_empty(),
                    _ => false,
                };
                if unset {
                    if let Some(v) = old.pointer(&format!("/spec/{f}")) {
                        spec.insert(f.into(), v.clone());
                    }
                }
            }
        }
        let needs_node_port = |t: &str| matches!(t, "NodePort" | "LoadBalancer");
        if needs_node_port(&nt) && needs_node_port(&ot) {
            let old_ports: Vec<Value> = old
                .pointer("/spec/ports")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(ports) = new.pointer_mut("/spec/ports").and_then(Value::as_array_mut) {
                for p in ports.iter_mut() {
                    if p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                        continue;
                    }
                    let same = old_ports.iter().find(|o| {
                        o.get("port") == p.get("port")
                            && text(o, "/protocol")
                                == p.get("protocol").and_then(Value::as_str).unwrap_or("TCP")
                    });
                    if let Some(n) = same.and_then(|o| o.get("nodePort")) {
                        p["nodePort"] = n.clone();
                    }
                }
            }
        }
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    /// PrepareForCreate resets the status: the ServiceStatus{} encodes as `{"loadBalancer": {}}`.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"loadBalancer": {}});
    }

    fn printer(&self) -> Printer {
        printers::SERVICE
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
        ("spec.clusterIP", "spec.clusterIP"),
        ("spec.type", "spec.type"),
    ],
    reject: not_supported,
    extract: service_fields,
};

fn service_fields(obj: &Value, put: Put<'_>) {
    put("spec.clusterIP", fields::text(obj, &["spec", "clusterIP"]));
    put("spec.type", fields::text(obj, &["spec", "type"]));
}

const SUPPORTED_TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

/// `ValidatePortNumOrName` for a target port.
fn check_target_port(v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match v {
        Value::Number(n) => {
            let p = n.as_i64().unwrap_or(-1);
            if !(1..=65535).contains(&p) {
                errs.push(FieldError::invalid(
                    path,
                    v.clone(),
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
        Value::String(name) => {
            for m in port_name_errors(name) {
                errs.push(FieldError::invalid(path, v.clone(), m));
            }
        }
        _ => {}
    }
}

/// `validation.IsValidPortName` messages, in upstream's order.
pub fn port_name_errors(name: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if name.len() > 15 {
        msgs.push("must be no more than 15 characters".to_string());
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        msgs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        msgs.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        msgs.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        msgs.push("must not begin or end with a hyphen".into());
    }
    msgs
}

/// `ValidateService` (after defaulting), in upstream's order, for the rules users meet.
fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let ty = text(spec, "/type");
    let cluster_ips: Vec<&str> = spec
        .get("clusterIPs")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_else(|| {
            spec.get("clusterIP")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .into_iter()
                .collect()
        });
    let headless = cluster_ips == ["None"];
    let ports: &[Value] = spec
        .get("ports")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if ports.is_empty() && !headless && ty != "ExternalName" {
        errs.push(FieldError::required("spec.ports", ""));
    }
    match ty {
        "LoadBalancer" | "NodePort" if headless => errs.push(FieldError::invalid(
            "spec.clusterIPs[0]",
            "None",
            format!("may not be set to 'None' for {ty} services"),
        )),
        "ExternalName" => {
            if !cluster_ips.is_empty() {
                errs.push(FieldError::forbidden(
                    "spec.clusterIPs",
                    "may not be set for ExternalName services",
                ));
            }
            let cname = text(spec, "/externalName");
            let cname = cname.strip_suffix('.').unwrap_or(cname);
            if cname.is_empty() {
                errs.push(FieldError::required("spec.externalName", ""));
            } else {
                for m in is_dns1123_subdomain(cname) {
                    errs.push(FieldError::invalid("spec.externalName", cname, m));
                }
            }
        }
        _ => {}
    }
    let require_name = ports.len() > 1;
    let mut names = std::collections::HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let path = format!("spec.ports[{i}]");
        let name = text(p, "/name");
        if require_name && name.is_empty() {
            errs.push(FieldError::required(format!("{path}.name"), ""));
        } else if !name.is_empty() {
            for m in is_dns1123_label(name) {
                errs.push(FieldError::invalid(format!("{path}.name"), name, m));
            }
            if !names.insert(name) {
                errs.push(FieldError::duplicate(format!("{path}.name"), name));
            }
        }
        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&port) {
            errs.push(FieldError::invalid(
                format!("{path}.port"),
                port,
                "must be between 1 and 65535, inclusive",
            ));
        }
        match text(p, "/protocol") {
            "" => errs.push(FieldError::required(format!("{path}.protocol"), "")),
            "TCP" | "UDP" | "SCTP" => {}
            other => errs.push(FieldError::not_supported(
                format!("{path}.protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
        if let Some(t) = p.get("targetPort") {
            check_target_port(t, &format!("{path}.targetPort"), &mut errs);
        }
    }
    if let Some(sel) = spec.get("selector").and_then(Value::as_object) {
        errs.extend(validate_labels(Some(sel), "spec.selector"));
    }
    match text(spec, "/sessionAffinity") {
        "" => errs.push(FieldError::required("spec.sessionAffinity", "")),
        "ClientIP" | "None" => {}
        other => errs.push(FieldError::not_supported(
            "spec.sessionAffinity",
            other,
            &["ClientIP", "None"],
        )),
    }
    match ty {
        "" => errs.push(FieldError::required("spec.type", "")),
        t if !SUPPORTED_TYPES.contains(&t) => {
            errs.push(FieldError::not_supported("spec.type", t, SUPPORTED_TYPES))
        }
        _ => {}
    }
    if ty == "ClusterIP" {
        for (i, p) in ports.iter().enumerate() {
            if p.get("nodePort")
                .and_then(Value::as_i64)
                .is_some_and(|n| n != 0)
            {
                errs.push(FieldError::forbidden(
                    format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = std::collections::HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let n = p.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
        if n != 0 && !node_ports.insert((text(p, "/protocol").to_string(), n)) {
            errs.push(FieldError::duplicate(
                format!("spec.ports[{i}].nodePort"),
                n,
            ));
        }
    }
    let external = matches!(ty, "NodePort" | "LoadBalancer")
        || spec
            .get("externalIPs")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
    match spec.get("externalTrafficPolicy").and_then(Value::as_str) {
        Some(p) if !external && !p.is_empty() => errs.push(FieldError::invalid(
            "spec.externalTrafficPolicy",
            p,
            "may only be set for externally-accessible services",
        )),
        Some(p) if external && !matches!(p, "Cluster" | "Local") => errs.push(
            FieldError::not_supported("spec.externalTrafficPolicy", p, &["Cluster", "Local"]),
        ),
        _ => {}
    }
    if let Some(p) = spec.get("internalTrafficPolicy").and_then(Value::as_str) {
        if !matches!(p, "Cluster" | "Local") {
            errs.push(FieldError::not_supported(
                "spec.internalTrafficPolicy",
                p,
                &["Cluster", "Local"],
            ));
        }
    }
    if spec
        .get("allocateLoadBalancerNodePorts")
        .is_some_and(|v| !v.is_null())
        && ty != "LoadBalancer"
    {
        errs.push(FieldError::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    errs
}
