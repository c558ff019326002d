//! Endpoints (core/v1): `SetDefaults_Endpoints` (ports default to TCP), `ValidateEndpoints`
//! (addresses, their IPs as `ValidateEndpointIP` allows them, and ports) and the printer.

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::{is_dns1123_label, is_dns1123_subdomain, is_qualified_name};
use crate::registry::builtin::checks::{list_of, parse_ip_sloppy, str_of};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct Endpoints;

impl Strategy for Endpoints {
    /// kube v1.33 deprecates v1 Endpoints for EndpointSlices (no removal planned).
    fn deprecation(&self) -> Option<crate::registry::strategy::Deprecation> {
        Some(crate::registry::strategy::Deprecation {
            since: (1, 33),
            removed: None,
            replacement: Some("discovery.k8s.io/v1 EndpointSlice"),
        })
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Value) {
        let Some(subsets) = obj.get_mut("subsets").and_then(Value::as_array_mut) else {
            return;
        };
        for ss in subsets {
            let Some(ports) = ss.get_mut("ports").and_then(Value::as_array_mut) else {
                continue;
            };
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                if port
                    .get("protocol")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
                {
                    port.insert("protocol".into(), json!("TCP"));
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_subsets(obj)
    }

    /// Subsets stored before the current rules stay acceptable while they do not change.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let errs = validate_subsets(new);
        if !errs.is_empty() && new.get("subsets") == old.get("subsets") {
            return Vec::new();
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::ENDPOINTS
    }
}

fn validate_subsets(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, ss) in list_of(obj, "subsets").iter().enumerate() {
        let p = format!("subsets[{i}]");
        let (ready, not_ready) = (list_of(ss, "addresses"), list_of(ss, "notReadyAddresses"));
        if ready.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(
                &p,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (field, list) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
            for (j, a) in list.iter().enumerate() {
                validate_address(a, &format!("{p}.{field}[{j}]"), &mut errs);
            }
        }
        let ports = list_of(ss, "ports");
        for (j, port) in ports.iter().enumerate() {
            validate_port(port, ports.len() > 1, &format!("{p}.ports[{j}]"), &mut errs);
        }
    }
    errs
}

/// `validateEndpointAddress`.
fn validate_address(a: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let ip = str_of(a, "ip");
    let ip_path = format!("{p}.ip");
    if parse_ip_sloppy(ip).is_none() {
        errs.push(FieldError::invalid(
            &ip_path,
            ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
    let hostname = str_of(a, "hostname");
    if !hostname.is_empty() {
        for m in is_dns1123_label(hostname) {
            errs.push(FieldError::invalid(format!("{p}.hostname"), hostname, m));
        }
    }
    if let Some(node) = a.get("nodeName").and_then(Value::as_str) {
        for m in is_dns1123_subdomain(node) {
            errs.push(FieldError::invalid(format!("{p}.nodeName"), node, m));
        }
    }
    endpoint_ip(ip, &ip_path, errs);
}

/// `ValidateEndpointIP`: no unspecified, loopback or link-local addresses.
pub fn endpoint_ip(ip: &str, path: &str, errs: &mut Vec<FieldError>) {
    use std::net::IpAddr;
    let Some(addr) = parse_ip_sloppy(ip) else {
        errs.push(FieldError::invalid(path, ip, "must be a valid IP address"));
        return;
    };
    let (unspecified, loopback, link_local, link_local_multicast) = match addr {
        IpAddr::V4(v) => {
            let o = v.octets();
            (
                v.is_unspecified(),
                v.is_loopback(),
                o[0] == 169 && o[1] == 254,
                o[0] == 224 && o[1] == 0 && o[2] == 0,
            )
        }
        IpAddr::V6(v) => {
            let s = v.segments();
            (
                v.is_unspecified(),
                v.is_loopback(),
                s[0] & 0xffc0 == 0xfe80,
                s[0] & 0xff0f == 0xff02,
            )
        }
    };
    if unspecified {
        errs.push(FieldError::invalid(
            path,
            ip,
            format!("may not be unspecified ({ip})"),
        ));
    }
    if loopback {
        errs.push(FieldError::invalid(
            path,
            ip,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errs.push(FieldError::invalid(
            path,
            ip,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errs.push(FieldError::invalid(
            path,
            ip,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
}

/// `validateEndpointPort`: a name is needed once there are several ports.
fn validate_port(port: &Value, require_name: bool, p: &str, errs: &mut Vec<FieldError>) {
    let name = str_of(port, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(format!("{p}.name"), ""));
    } else if !name.is_empty() {
        for m in is_dns1123_label(name) {
            errs.push(FieldError::invalid(format!("{p}.name"), name, m));
        }
    }
    let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&number) {
        errs.push(FieldError::invalid(
            format!("{p}.port"),
            number,
            "must be between 1 and 65535, inclusive",
        ));
    }
    match str_of(port, "protocol") {
        "" => errs.push(FieldError::required(format!("{p}.protocol"), "")),
        "TCP" | "UDP" | "SCTP" => {}
        other => errs.push(FieldError::not_supported(
            format!("{p}.protocol"),
            other,
            &["SCTP", "TCP", "UDP"],
        )),
    }
    if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
        for m in is_qualified_name(app) {
            errs.push(FieldError::invalid(format!("{p}.appProtocol"), app, m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin::checks::parse_cidr_sloppy;

    #[test]
    fn sloppy_addresses_and_endpoint_rules() {
        assert!(parse_ip_sloppy("010.001.1.1").is_some());
        assert!(parse_ip_sloppy("256.1.1.1").is_none());
        assert!(parse_ip_sloppy("1.2.3").is_none());
        assert_eq!(parse_cidr_sloppy("10.0.0.0/08").map(|c| c.1), Some(8));
        assert!(parse_cidr_sloppy("10.0.0.0/33").is_none());
        let msgs = |ip: &str| {
            let mut errs = Vec::new();
            endpoint_ip(ip, "ip", &mut errs);
            errs.iter().map(FieldError::message).collect::<Vec<_>>()
        };
        assert!(msgs("10.1.2.3").is_empty());
        assert_eq!(
            msgs("::")[0],
            "ip: Invalid value: \"::\": may not be unspecified (::)"
        );
        assert_eq!(msgs("::ffff:127.0.0.1").len(), 1);
        assert_eq!(msgs("fe80::1").len(), 1);
        assert_eq!(msgs("ff02::1").len(), 1);
        assert_eq!(msgs("224.0.0.5").len(), 1);
    }
}
