//! Small checks and accessors the strategies share (kube's validation helpers such as
//! `ValidateNonnegativeField` and `ValidateImmutableField`).

use serde_json::Value;

use crate::meta::field_error::FieldError;

/// `v[key]` as a string ("" when absent or not a string).
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The string at JSON `pointer` in `v` ("" when absent or not a string).
pub fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `v[key]` as a list (empty when absent or not a list).
pub fn list_of<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `ValidateNonnegativeField` for each of `fields` of `obj`, reported at `<path>.<field>`.
pub fn nonneg_fields(obj: &Value, path: &str, fields: &[&str], errs: &mut Vec<FieldError>) {
    for f in fields {
        if let Some(v) = obj.get(*f) {
            if v.as_i64().is_some_and(|n| n < 0) {
                errs.push(FieldError::invalid(
                    format!("{path}.{f}"),
                    v.clone(),
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
}

/// `netutils.ParseIPSloppy`: an IP address, IPv4 octets allowed leading zeros (as Go's
/// parser before 1.17). IPv4-mapped IPv6 addresses come back as IPv4, as Go's `net.IP`
/// treats them.
pub fn parse_ip_sloppy(s: &str) -> Option<std::net::IpAddr> {
    use std::net::{IpAddr, Ipv4Addr};
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        });
    }
    let octets: Vec<&str> = s.split('.').collect();
    if octets.len() != 4 {
        return None;
    }
    let mut out = [0u8; 4];
    for (o, text) in out.iter_mut().zip(&octets) {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = text
            .bytes()
            .try_fold(0u8, |n, b| n.checked_mul(10)?.checked_add(b - b'0'))?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(out)))
}

/// `netutils.ParseCIDRSloppy`: the address and prefix length of `<ip>/<bits>`.
pub fn parse_cidr_sloppy(s: &str) -> Option<(std::net::IpAddr, u32)> {
    let (ip, bits) = s.split_once('/')?;
    let ip = parse_ip_sloppy(ip)?;
    if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let bits: u32 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((ip, bits))
}
