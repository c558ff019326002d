//! The networking.k8s.io group's strategies: Ingresses (`ValidateIngressSpec`: rules, paths,
//! backends, TLS) and IngressClasses (the controller name and its parameters).

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::{is_dns1035_label, is_dns1123_subdomain, validate_path_segment_name};
use crate::registry::builtin::checks::{self, list_of as list, str_of as text};
use crate::registry::builtin::core::service::port_name_errors;
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

/// DNS-1123 subdomain messages, or the wildcard form's (`*.` then a subdomain).
fn host_errors(host: &str) -> Vec<String> {
    if host.contains('*') {
        match host.strip_prefix("*.") {
            Some(rest) if !rest.contains('*') && is_dns1123_subdomain(rest).is_empty() => vec![],
            _ => vec!["a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string()],
        }
    } else {
        is_dns1123_subdomain(host)
    }
}

fn validate_backend(b: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let resource = b.get("resource").filter(|v| !v.is_null());
    let service = b.get("service").filter(|v| !v.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            p,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(r), None) => {
            let group = text(r, "apiGroup");
            if !group.is_empty() {
                for m in is_dns1123_subdomain(group) {
                    errs.push(FieldError::invalid(
                        format!("{p}.resource.apiGroup"),
                        group,
                        m,
                    ));
                }
            }
            for f in ["kind", "name"] {
                let v = text(r, f);
                if v.is_empty() {
                    errs.push(FieldError::required(format!("{p}.resource.{f}"), ""));
                } else {
                    for m in validate_path_segment_name(v, false) {
                        errs.push(FieldError::invalid(format!("{p}.resource.{f}"), v, m));
                    }
                }
            }
        }
        (None, Some(s)) => {
            let name = text(s, "name");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{p}.service.name"), ""));
            } else {
                for m in is_dns1035_label(name) {
                    errs.push(FieldError::invalid(format!("{p}.service.name"), name, m));
                }
            }
            let port = s.get("port").unwrap_or(&Value::Null);
            let pname = text(port, "name");
            let number = port.get("number").and_then(Value::as_i64);
            match (pname.is_empty(), number) {
                (false, Some(_)) => errs.push(FieldError::invalid(
                    p,
                    "",
                    "cannot set both port name & port number",
                )),
                (false, None) => {
                    for m in port_name_errors(pname) {
                        errs.push(FieldError::invalid(
                            format!("{p}.service.port.name"),
                            pname,
                            m,
                        ));
                    }
                }
                (true, Some(n)) => {
                    if !(1..=65535).contains(&n) {
                        errs.push(FieldError::invalid(
                            format!("{p}.service.port.number"),
                            n,
                            "must be between 1 and 65535, inclusive",
                        ));
                    }
                }
                (true, None) => {
                    errs.push(FieldError::required(p, "port name or number is required"))
                }
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            p,
            "",
            "resource or service backend is required",
        )),
    }
}

pub struct Ingresses;

impl Strategy for Ingresses {
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        ingress_class_warning(obj, None)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        ingress_class_warning(new, Some(old))
    }

    /// PrepareForCreate resets the status: `loadBalancer` is a struct, always encoded.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"loadBalancer": {}});
    }

    /// `ValidateIngressStatusUpdate`: the load balancer's ingress points.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for (i, ing) in checks::lb_ingress(new).iter().enumerate() {
            let p = format!("status.loadBalancer.ingress[{i}]");
            checks::lb_ingress_point(ing, &p, &mut errs, |_, _, _| {});
        }
        errs
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let rules = list(spec, "rules");
        let default = spec.get("defaultBackend").filter(|v| !v.is_null());
        if rules.is_empty() && default.is_none() {
            let rendered = if spec.get("rules").is_some() {
                "[]networking.IngressRule{}"
            } else {
                "[]networking.IngressRule(nil)"
            };
            errs.push(FieldError::invalid_rendered(
                "spec",
                rendered,
                "either `defaultBackend` or `rules` must be specified",
            ));
        }
        if let Some(b) = default {
            validate_backend(b, "spec.defaultBackend", &mut errs);
        }
        for (i, r) in rules.iter().enumerate() {
            let p = format!("spec.rules[{i}]");
            let host = text(r, "host");
            if !host.is_empty() {
                if host.parse::<std::net::IpAddr>().is_ok() {
                    errs.push(FieldError::invalid(
                        format!("{p}.host"),
                        host,
                        "must be a DNS name, not an IP address",
                    ));
                }
                for m in host_errors(host) {
                    errs.push(FieldError::invalid(format!("{p}.host"), host, m));
                }
            }
            let Some(http) = r.get("http").filter(|v| !v.is_null()) else {
                continue;
            };
            let paths = list(http, "paths");
            if paths.is_empty() {
                errs.push(FieldError::required(format!("{p}.http.paths"), ""));
            }
            for (j, path) in paths.iter().enumerate() {
                let pp = format!("{p}.http.paths[{j}]");
                let value = text(path, "path");
                match path.get("pathType").and_then(Value::as_str) {
                    None => {
                        errs.push(FieldError::required(
                            format!("{pp}.pathType"),
                            "pathType must be specified",
                        ));
                        continue;
                    }
                    Some("Exact" | "Prefix") => {
                        if !value.starts_with('/') {
                            errs.push(FieldError::invalid(
                                format!("{pp}.path"),
                                value,
                                "must be an absolute path",
                            ));
                        }
                        for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                            if value.contains(seq) {
                                errs.push(FieldError::invalid(
                                    format!("{pp}.path"),
                                    value,
                                    format!("must not contain '{seq}'"),
                                ));
                            }
                        }
                        for end in ["/..", "/."] {
                            if value.ends_with(end) {
                                errs.push(FieldError::invalid(
                                    format!("{pp}.path"),
                                    value,
                                    format!("cannot end with '{end}'"),
                                ));
                            }
                        }
                    }
                    Some("ImplementationSpecific") => {
                        if !value.is_empty() && !value.starts_with('/') {
                            errs.push(FieldError::invalid(
                                format!("{pp}.path"),
                                value,
                                "must be an absolute path",
                            ));
                        }
                    }
                    Some(other) => errs.push(FieldError::not_supported(
                        format!("{pp}.pathType"),
                        other,
                        &["Exact", "ImplementationSpecific", "Prefix"],
                    )),
                }
                validate_backend(
                    path.get("backend").unwrap_or(&Value::Null),
                    &format!("{pp}.backend"),
                    &mut errs,
                );
            }
        }
        for (i, t) in list(spec, "tls").iter().enumerate() {
            for (j, h) in list(t, "hosts").iter().enumerate() {
                let h = h.as_str().unwrap_or("");
                for m in host_errors(h) {
                    errs.push(FieldError::invalid(
                        format!("spec.tls[{i}].hosts[{j}]"),
                        h,
                        m,
                    ));
                }
            }
            let secret = text(t, "secretName");
            if !secret.is_empty() {
                for m in is_dns1123_subdomain(secret) {
                    errs.push(FieldError::invalid(
                        format!("spec.tls[{i}].secretName"),
                        secret,
                        m,
                    ));
                }
            }
        }
        let class = text(spec, "ingressClassName");
        if !class.is_empty() {
            for m in is_dns1123_subdomain(class) {
                errs.push(FieldError::invalid("spec.ingressClassName", class, m));
            }
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::INGRESS
    }
}

pub struct IngressClasses;

impl Strategy for IngressClasses {
    fn default(&self, obj: &mut Value) {
        if let Some(p) = obj
            .pointer_mut("/spec/parameters")
            .and_then(Value::as_object_mut)
        {
            p.entry("scope").or_insert(json!("Cluster"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let controller = text(spec, "controller");
        if controller.is_empty() {
            errs.push(FieldError::required("spec.controller", ""));
        } else if controller.len() > 250 {
            errs.push(FieldError::too_long("spec.controller", controller, 250));
        } else if !domain_prefixed_path(controller) {
            errs.push(FieldError::invalid(
                "spec.controller",
                controller,
                "must be a domain-prefixed path (such as \"acme.io/foo\")",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let (n, o) = (
            new.pointer("/spec/controller"),
            old.pointer("/spec/controller"),
        );
        if n != o {
            errs.push(FieldError::invalid(
                "spec.controller",
                n.cloned().unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
        errs.extend(self.validate(new));
        errs
    }

    fn printer(&self) -> Printer {
        printers::INGRESS_CLASS
    }
}

pub struct NetworkPolicies;

/// `IsValidCIDR` as far as the shape: `<IP>/<prefix>` with a prefix in range.
fn cidr(s: &str) -> Option<(std::net::IpAddr, u8)> {
    let (ip, len) = s.split_once('/')?;
    let ip: std::net::IpAddr = ip.parse().ok()?;
    let len: u8 = len.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (len <= max).then_some((ip, len))
}

/// Whether CIDR `inner` lies inside CIDR `outer` (same family).
fn contains(outer: (std::net::IpAddr, u8), inner: (std::net::IpAddr, u8)) -> bool {
    use std::net::IpAddr;
    // IPv4 addresses sit in the top 32 bits, so one mask works for both families.
    let bits = |ip: IpAddr| -> u128 {
        match ip {
            IpAddr::V4(v) => u128::from(u32::from(v)) << 96,
            IpAddr::V6(v) => u128::from(v),
        }
    };
    let mask = |len: u8| -> u128 {
        match len {
            0 => 0,
            n => u128::MAX << (128 - u32::from(n)),
        }
    };
    outer.0.is_ipv4() == inner.0.is_ipv4()
        && inner.1 >= outer.1
        && (bits(outer.0) & mask(outer.1)) == (bits(inner.0) & mask(outer.1))
}

fn validate_np_ports(ports: &[Value], p: &str, errs: &mut Vec<FieldError>) {
    for (j, port) in ports.iter().enumerate() {
        let pp = format!("{p}.ports[{j}]");
        if let Some(proto) = port.get("protocol").and_then(Value::as_str) {
            if !matches!(proto, "TCP" | "UDP" | "SCTP") {
                errs.push(FieldError::not_supported(
                    format!("{pp}.protocol"),
                    proto,
                    &["TCP", "UDP", "SCTP"],
                ));
            }
        }
        let end = port.get("endPort").and_then(Value::as_i64);
        match port.get("port") {
            Some(Value::Number(n)) => {
                let n = n.as_i64().unwrap_or(0);
                if !(1..=65535).contains(&n) {
                    errs.push(FieldError::invalid(
                        format!("{pp}.port"),
                        n,
                        "must be between 1 and 65535, inclusive",
                    ));
                }
                if let Some(e) = end {
                    if e < n {
                        errs.push(FieldError::invalid(
                            format!("{pp}.endPort"),
                            e,
                            "must be greater than or equal to `port`",
                        ));
                    }
                    if !(1..=65535).contains(&e) {
                        errs.push(FieldError::invalid(
                            format!("{pp}.endPort"),
                            e,
                            "must be between 1 and 65535, inclusive",
                        ));
                    }
                }
            }
            Some(Value::String(name)) => {
                if let Some(e) = end {
                    errs.push(FieldError::invalid(
                        format!("{pp}.endPort"),
                        e,
                        "may not be specified when `port` is non-numeric",
                    ));
                }
                for m in port_name_errors(name) {
                    errs.push(FieldError::invalid(format!("{pp}.port"), name.as_str(), m));
                }
            }
            _ => {
                if let Some(e) = end {
                    errs.push(FieldError::invalid(
                        format!("{pp}.endPort"),
                        e,
                        "may not be specified when `port` is not specified",
                    ));
                }
            }
        }
    }
}

fn validate_peers(peers: &[Value], p: &str, errs: &mut Vec<FieldError>) {
    use crate::meta::validation::validate_label_selector;
    for (k, peer) in peers.iter().enumerate() {
        let pp = format!("{p}[{k}]");
        let mut n = 0;
        for sel in ["podSelector", "namespaceSelector"] {
            if let Some(s) = peer.get(sel).filter(|v| !v.is_null()) {
                n += 1;
                errs.extend(validate_label_selector(s, &format!("{pp}.{sel}")));
            }
        }
        if let Some(block) = peer.get("ipBlock").filter(|v| !v.is_null()) {
            n += 1;
            if n > 1 {
                errs.push(FieldError::forbidden(
                    &pp,
                    "may not specify both ipBlock and another peer",
                ));
                continue;
            }
            let c = text(block, "cidr");
            if c.is_empty() {
                errs.push(FieldError::required(format!("{pp}.ipBlock.cidr"), ""));
                continue;
            }
            let Some(outer) = cidr(c) else {
                errs.push(FieldError::invalid(
                    format!("{pp}.ipBlock.cidr"),
                    c,
                    "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                ));
                continue;
            };
            for (m, e) in list(block, "except").iter().enumerate() {
                let e = e.as_str().unwrap_or("");
                let ep = format!("{pp}.ipBlock.except[{m}]");
                match cidr(e) {
                    None => errs.push(FieldError::invalid(
                        &ep,
                        e,
                        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                    )),
                    Some(inner) if !contains(outer, inner) || inner.1 <= outer.1 => errs.push(
                        FieldError::invalid(&ep, e, "must be a strict subset of `cidr`"),
                    ),
                    Some(_) => {}
                }
            }
        }
        if n == 0 {
            errs.push(FieldError::required(&pp, "must specify a peer"));
        }
    }
}

impl Strategy for NetworkPolicies {
    /// `SetDefaults_NetworkPolicyPort` and the default policy types.
    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for dir in ["ingress", "egress"] {
            if let Some(rules) = spec.get_mut(dir).and_then(Value::as_array_mut) {
                for r in rules.iter_mut() {
                    if let Some(ports) = r.get_mut("ports").and_then(Value::as_array_mut) {
                        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                            p.entry("protocol").or_insert(json!("TCP"));
                        }
                    }
                }
            }
        }
        if spec.get("policyTypes").is_none_or(Value::is_null) {
            let mut types = vec![json!("Ingress")];
            if spec
                .get("egress")
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty())
            {
                types.push(json!("Egress"));
            }
            spec.insert("policyTypes".into(), Value::Array(types));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        if let Some(sel) = spec.get("podSelector").filter(|v| !v.is_null()) {
            errs.extend(crate::meta::validation::validate_label_selector(
                sel,
                "spec.podSelector",
            ));
        }
        for (dir, peers) in [("ingress", "from"), ("egress", "to")] {
            for (i, rule) in list(spec, dir).iter().enumerate() {
                let p = format!("spec.{dir}[{i}]");
                validate_np_ports(list(rule, "ports"), &p, &mut errs);
                validate_peers(list(rule, peers), &format!("{p}.{peers}"), &mut errs);
            }
        }
        let types = list(spec, "policyTypes");
        if types.len() > 2 {
            errs.push(FieldError::invalid(
                "spec.policyTypes",
                Value::Array(types.to_vec()),
                "may not specify more than two policyTypes",
            ));
            return errs;
        }
        for (i, t) in types.iter().enumerate() {
            let t = t.as_str().unwrap_or("");
            if !matches!(t, "Ingress" | "Egress") {
                errs.push(FieldError::not_supported(
                    format!("spec.policyTypes[{i}]"),
                    t,
                    &["Ingress", "Egress"],
                ));
            }
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::NETPOL
    }
}

/// `IsDomainPrefixedPath`: `<DNS subdomain>/<path>`.
fn domain_prefixed_path(s: &str) -> bool {
    match s.split_once('/') {
        Some((host, path)) => !path.is_empty() && is_dns1123_subdomain(host).is_empty(),
        None => false,
    }
}

/// The deprecated class annotation (warned on update only when the update adds it).
fn ingress_class_warning(obj: &Value, old: Option<&Value>) -> Vec<String> {
    const CLASS: &str = "kubernetes.io/ingress.class";
    let has = |o: &Value| {
        o.pointer("/metadata/annotations")
            .and_then(|a| a.get(CLASS))
            .is_some()
    };
    if has(obj) && !old.is_some_and(has) {
        vec![format!(
            "annotation {CLASS:?} is deprecated, please use 'spec.ingressClassName' instead"
        )]
    } else {
        Vec::new()
    }
}
