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

/// An update rule that validates the new object twice (the strategy, then the kind's
/// `ValidateXUpdate`): each error is listed twice among the causes.
pub fn twice(errs: Vec<FieldError>) -> Vec<FieldError> {
    let mut all = errs.clone();
    all.extend(errs);
    all
}

/// Sets `m[key]` to `v` when it is absent or null (how a `SetDefaults_*` fills a nil pointer).
pub fn set_default(m: &mut serde_json::Map<String, Value>, key: &str, v: Value) {
    if m.get(key).is_none_or(Value::is_null) {
        m.insert(key.to_string(), v);
    }
}

/// `ValidateImmutableField` for a value Go prints as JSON does (strings, numbers, bools,
/// string maps): `Invalid(path, new, "field is immutable")` when `new != old`.
pub fn immutable(new: Option<&Value>, old: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    let unset = |v: Option<&Value>| v.is_none_or(Value::is_null);
    if new != old && !(unset(new) && unset(old)) {
        errs.push(FieldError::invalid(
            path,
            new.cloned().unwrap_or(Value::Null),
            "field is immutable",
        ));
    }
}

/// `field.NotSupported` for a value Go prints with `%#v` (a typed map or struct).
pub fn not_supported_rendered(path: &str, rendered: &str, valid: &[&str]) -> FieldError {
    let quoted: Vec<String> = valid
        .iter()
        .map(|v| crate::meta::field_error::go_quote(v))
        .collect();
    let mut e = FieldError::not_supported(path, Value::Null, &[]);
    e.bad_value = None;
    e.detail = format!("{rendered}: supported values: {}", quoted.join(", "));
    e
}

/// `field.Duplicate` for a value Go prints with `%#v` (a struct).
pub fn duplicate_rendered(path: &str, rendered: &str) -> FieldError {
    let mut e = FieldError::duplicate(path, Value::Null);
    e.bad_value = None;
    e.detail = rendered.to_string();
    e
}

/// Go's `%#v` of a pointer field inside a struct: `(*T)(nil)`, or an address. Addresses are
/// never the same twice in kube; a fixed one stands in.
pub fn go_pointer(ty: &str, v: Option<&Value>) -> String {
    if v.is_none_or(Value::is_null) {
        format!("(*{ty})(nil)")
    } else {
        format!("(*{ty})(0xc000a1b2c0)")
    }
}

/// Go's `%#v` of a string slice of named type `ty` (e.g. `[]string`, `[]storage.X`).
pub fn go_strings(ty: &str, v: Option<&Value>) -> String {
    match v.and_then(Value::as_array) {
        None => format!("{ty}(nil)"),
        Some(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|s| crate::meta::field_error::go_quote(s.as_str().unwrap_or("")))
                .collect();
            format!("{ty}{{{}}}", parts.join(", "))
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

/// An object's `status` (JSON null when it has none).
pub fn status_of(obj: &Value) -> &Value {
    obj.get("status").unwrap_or(&Value::Null)
}

/// A workload status's counters as kube's `Validate<Kind>Status` checks them: each of
/// `counters` nonnegative (`status.<field>`, in that order), each of `capped` not above
/// `status.replicas`, then, with `ready_msg`, `availableReplicas` not above `readyReplicas`.
pub fn replica_status(
    obj: &Value,
    counters: &[&str],
    capped: &[&str],
    ready_msg: Option<&str>,
) -> Vec<FieldError> {
    let st = status_of(obj);
    let mut errs = Vec::new();
    nonneg_fields(st, "status", counters, &mut errs);
    let n = |f: &str| st.get(f).and_then(Value::as_i64).unwrap_or(0);
    for f in capped {
        if n(f) > n("replicas") {
            errs.push(FieldError::invalid(
                format!("status.{f}"),
                n(f),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if let Some(msg) = ready_msg {
        if n("availableReplicas") > n("readyReplicas") {
            errs.push(FieldError::invalid(
                "status.availableReplicas",
                n("availableReplicas"),
                msg,
            ));
        }
    }
    errs
}

/// `IsDecremented(status.collisionCount)`: a status write may not lower (nor drop) it.
pub fn collision_count_kept(new: &Value, old: &Value, errs: &mut Vec<FieldError>) {
    let count = |v: &Value| status_of(v).get("collisionCount").and_then(Value::as_i64);
    let decremented = match (count(new), count(old)) {
        (None, Some(_)) => true,
        (Some(n), Some(o)) => n < o,
        _ => false,
    };
    if decremented {
        errs.push(FieldError::invalid(
            "status.collisionCount",
            count(new).unwrap_or(0),
            "cannot be decremented",
        ));
    }
}

/// `resourceVersion: Required value` for a status write that names no resourceVersion (the
/// status rules of quotas and volumes require one).
pub fn resource_version_required(new: &Value, errs: &mut Vec<FieldError>) {
    let rv = new
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str);
    if rv.is_none_or(str::is_empty) {
        errs.push(FieldError::required("resourceVersion", ""));
    }
}

/// `IsValidIPForLegacyField` with StrictIPCIDRValidation off (its v1.33 default): an
/// address `netutils.ParseIPSloppy` accepts.
/// The status rules ReplicaSets and ReplicationControllers share
/// (`ValidateReplicaSetStatus` / `ValidateReplicationControllerStatus`).
pub fn replica_set_status(new: &Value) -> Vec<FieldError> {
    replica_status(
        new,
        &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ],
        &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        Some("cannot be greater than readyReplicas"),
    )
}

/// `status.loadBalancer.ingress` of a Service or Ingress.
pub fn lb_ingress(new: &Value) -> &[Value] {
    new.pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

/// One load-balancer ingress point at `p`: its `ip`, then what `between` checks (a
/// Service's `ipMode`), then its `hostname`.
pub fn lb_ingress_point(
    ing: &Value,
    p: &str,
    errs: &mut Vec<FieldError>,
    between: impl Fn(&Value, &str, &mut Vec<FieldError>),
) {
    let ip = ing.get("ip").and_then(Value::as_str).unwrap_or("");
    if !ip.is_empty() {
        legacy_ip(ip, &format!("{p}.ip"), errs);
    }
    between(ing, p, errs);
    let host = ing.get("hostname").and_then(Value::as_str).unwrap_or("");
    if !host.is_empty() {
        lb_hostname(host, &format!("{p}.hostname"), errs);
    }
}

pub fn legacy_ip(ip: &str, path: &str, errs: &mut Vec<FieldError>) {
    if parse_ip_sloppy(ip).is_none() {
        errs.push(FieldError::invalid(
            path,
            ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
}

/// `netutils.IsDualStackIPStrings` (with at most two addresses): one IPv4 and one IPv6.
pub fn dual_stack_pair(ips: &[&str]) -> bool {
    let parsed: Vec<_> = ips.iter().map(|ip| parse_ip_sloppy(ip)).collect();
    let v4 = parsed.iter().flatten().filter(|ip| ip.is_ipv4()).count();
    ips.len() <= 2 && parsed.iter().all(Option::is_some) && v4 > 0 && v4 < parsed.len()
}

/// A load balancer ingress hostname: a DNS subdomain, not an IP address (the service and
/// ingress status rules).
pub fn lb_hostname(host: &str, path: &str, errs: &mut Vec<FieldError>) {
    for m in crate::meta::validation::is_dns1123_subdomain(host) {
        errs.push(FieldError::invalid(path, host, m));
    }
    if parse_ip_sloppy(host).is_some() {
        errs.push(FieldError::invalid(
            path,
            host,
            "must be a DNS name, not an IP address",
        ));
    }
}

/// Drops `status.<field>` from a status write unless the stored object already has it (how
/// kube drops a field whose feature gate is off by default and not in use).
pub fn drop_status_field_unless_used(new: &mut Value, old: &Value, field: &str) {
    if crate::registry::strategy::is_unset(status_of(old).get(field)) {
        if let Some(st) = new.get_mut("status").and_then(Value::as_object_mut) {
            st.remove(field);
        }
    }
}
