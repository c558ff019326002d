//! The discovery.k8s.io group's strategy: EndpointSlices (`SetDefaults_EndpointPort`,
//! `ValidateEndpointSlice(Update)`: address type, endpoints and their addresses, ports; the
//! address type never changes).

use std::net::{IpAddr, Ipv4Addr};

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value,
};
use crate::registry::builtin::checks::{immutable, list_of as list, set_default, str_of as text};
use crate::registry::strategy::{is_unset, Strategy};
use crate::registry::table::{printers, Printer};

pub struct EndpointSlices;

const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

/// `netutils.ParseIPSloppy`: IPv4 octets may have leading zeros.
fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(octets)))
}

/// An address as Go's `net.IP` sees it: IPv4-mapped IPv6 addresses are IPv4.
fn as_go_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// `ValidateEndpointIP`'s special ranges.
fn endpoint_ip_errors(ip: IpAddr, path: &str, addr: &str, errs: &mut Vec<FieldError>) {
    let (unspecified, loopback, link_local, ll_multicast) = match as_go_ip(ip) {
        IpAddr::V4(v4) => (
            v4.is_unspecified(),
            v4.is_loopback(),
            v4.is_link_local(),
            v4.octets()[..3] == [224, 0, 0],
        ),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            (
                v6.is_unspecified(),
                v6.is_loopback(),
                s[0] & 0xffc0 == 0xfe80,
                s[0] & 0xff0f == 0xff02,
            )
        }
    };
    for (hit, msg) in [
        (unspecified, "may not be unspecified (0.0.0.0)"),
        (
            loopback,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ),
        (
            link_local,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ),
        (
            ll_multicast,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ),
    ] {
        if hit {
            errs.push(FieldError::invalid(path, addr, msg));
        }
    }
}

/// `IsFullyQualifiedDomainName`.
fn fqdn_errors(name: &str, path: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let msgs = is_dns1123_subdomain(name);
    if !msgs.is_empty() {
        errs.push(FieldError::invalid(path, name, msgs.join(",")));
        return;
    }
    if name.split('.').count() < 2 {
        errs.push(FieldError::invalid(
            path,
            name,
            "should be a domain with at least two segments separated by dots",
        ));
        return;
    }
    for label in name.split('.') {
        let msgs = is_dns1123_label(label);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(path, label, msgs.join(",")));
            return;
        }
    }
}

/// The addresses of `old`'s endpoints: kept ones are not re-validated (IsValidIPForLegacyField).
fn old_addresses(old: Option<&Value>) -> Vec<&str> {
    let eps = old.map_or(&[][..], |o| list(o, "endpoints"));
    eps.iter()
        .flat_map(|e| list(e, "addresses"))
        .filter_map(Value::as_str)
        .collect()
}

fn validate_endpoints(obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    let eps = list(obj, "endpoints");
    if eps.len() > 1000 {
        errs.push(FieldError::too_many("endpoints", eps.len() as i64, 1000));
        return;
    }
    let kind = text(obj, "addressType");
    let valid_old = old_addresses(old);
    for (i, ep) in eps.iter().enumerate() {
        let p = format!("endpoints[{i}]");
        let ap = format!("{p}.addresses");
        let addrs = list(ep, "addresses");
        if addrs.is_empty() {
            errs.push(FieldError::required(&ap, "must contain at least 1 address"));
        } else if addrs.len() > 100 {
            errs.push(FieldError::too_many(&ap, addrs.len() as i64, 100));
        }
        for (j, a) in addrs.iter().enumerate() {
            let a = a.as_str().unwrap_or("");
            let path = format!("{ap}[{j}]");
            match kind {
                "IPv4" | "IPv6" => {
                    if valid_old.contains(&a) {
                        continue;
                    }
                    let Some(ip) = parse_ip_sloppy(a) else {
                        errs.push(FieldError::invalid(
                            &path,
                            a,
                            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                        ));
                        continue;
                    };
                    let v4 = as_go_ip(ip).is_ipv4();
                    if kind == "IPv4" && !v4 {
                        errs.push(FieldError::invalid(&path, a, "must be an IPv4 address"));
                    } else if kind == "IPv6" && v4 {
                        errs.push(FieldError::invalid(&path, a, "must be an IPv6 address"));
                    }
                    endpoint_ip_errors(ip, &path, a, errs);
                }
                "FQDN" => fqdn_errors(a, &path, errs),
                _ => {}
            }
        }
        if let Some(n) = ep.get("nodeName").and_then(Value::as_str) {
            for m in is_dns1123_subdomain(n) {
                errs.push(FieldError::invalid(format!("{p}.nodeName"), n, m));
            }
        }
        if let Some(h) = ep.get("hostname").and_then(Value::as_str) {
            for m in is_dns1123_label(h) {
                errs.push(FieldError::invalid(format!("{p}.hostname"), h, m));
            }
        }
        if let Some(hints) = ep.get("hints").filter(|v| !v.is_null()) {
            let zp = format!("{p}.hints.forZones");
            let zones = list(hints, "forZones");
            if zones.len() > 8 {
                errs.push(FieldError::too_many(zp, zones.len() as i64, 8));
                continue;
            }
            let mut seen: Vec<&str> = Vec::new();
            for (j, z) in zones.iter().enumerate() {
                let name = text(z, "name");
                let np = format!("{zp}[{j}].name");
                if seen.contains(&name) {
                    errs.push(FieldError::duplicate(&np, name));
                } else {
                    seen.push(name);
                }
                for m in is_valid_label_value(name) {
                    errs.push(FieldError::invalid(&np, name, m));
                }
            }
        }
    }
}

fn validate_ports(obj: &Value, errs: &mut Vec<FieldError>) {
    let ports = list(obj, "ports");
    if ports.len() > 20000 {
        errs.push(FieldError::too_many("ports", ports.len() as i64, 20000));
        return;
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let p = format!("ports[{i}]");
        let name = text(port, "name");
        if !name.is_empty() {
            for m in is_dns1123_label(name) {
                errs.push(FieldError::invalid(format!("{p}.name"), name, m));
            }
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{p}.name"), name));
        } else {
            names.push(name);
        }
        match port.get("protocol").and_then(Value::as_str) {
            None => errs.push(FieldError::required(format!("{p}.protocol"), "")),
            Some(proto) if !PROTOCOLS.contains(&proto) => errs.push(FieldError::not_supported(
                format!("{p}.protocol"),
                proto,
                PROTOCOLS,
            )),
            Some(_) => {}
        }
        if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
            for m in is_qualified_name(app) {
                errs.push(FieldError::invalid(format!("{p}.appProtocol"), app, m));
            }
        }
    }
}

fn validate_slice(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match text(obj, "addressType") {
        "" => errs.push(FieldError::required("addressType", "")),
        t if !ADDRESS_TYPES.contains(&t) => {
            errs.push(FieldError::not_supported("addressType", t, ADDRESS_TYPES))
        }
        _ => {}
    }
    validate_endpoints(obj, old, &mut errs);
    validate_ports(obj, &mut errs);
    errs
}

/// What a v1 write may not set: `deprecatedTopology` (dropped, as kube's
/// `dropTopologyOnV1`), and `hints.forNodes` (PreferSameTrafficDistribution is off in 1.33)
/// unless the stored slice has them.
fn drop_v1_fields(obj: &mut Value, old: Option<&Value>) {
    if old.is_some_and(|o| o.get("endpoints") == obj.get("endpoints")) {
        return;
    }
    let nodes_in_use = old.is_some_and(|o| {
        list(o, "endpoints")
            .iter()
            .any(|e| !is_unset(e.get("hints").and_then(|h| h.get("forNodes"))))
    });
    let Some(eps) = obj.get_mut("endpoints").and_then(Value::as_array_mut) else {
        return;
    };
    for ep in eps.iter_mut().filter_map(Value::as_object_mut) {
        ep.remove("deprecatedTopology");
        if !nodes_in_use {
            if let Some(h) = ep.get_mut("hints").and_then(Value::as_object_mut) {
                h.remove("forNodes");
            }
        }
    }
}

impl Strategy for EndpointSlices {
    fn prepare_for_create(&self, obj: &mut Value) {
        drop_v1_fields(obj, None);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_v1_fields(new, Some(old));
    }

    /// `SetDefaults_EndpointPort`: an unnamed TCP port.
    fn default(&self, obj: &mut Value) {
        let Some(ports) = obj.get_mut("ports").and_then(Value::as_array_mut) else {
            return;
        };
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "name", json!(""));
            set_default(p, "protocol", json!("TCP"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_slice(obj, None)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_slice(new, Some(old));
        immutable(
            new.get("addressType"),
            old.get("addressType"),
            "addressType",
            &mut errs,
        );
        errs
    }

    fn printer(&self) -> Printer {
        printers::ES
    }
}
