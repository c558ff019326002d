//! Service address allocation: ClusterIPs from the service CIDR (10.96.0.0/12) and NodePorts
//! from 30000–32767, like kube-apiserver's allocators.
//!
//! Pure: the caller passes what is in use and a random source, and proposes the result, so
//! apply stays deterministic. Allocation happens before the write; a clash between two
//! concurrent creates is as unlikely as two random picks from a million addresses colliding.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use rand::Rng;
use serde_json::{json, Value};

use crate::meta::field_error::FieldError;

/// The service CIDR: 10.96.0.0/12.
const SERVICE_NET: u32 = u32::from_be_bytes([10, 96, 0, 0]);
const SERVICE_BITS: u32 = 12;
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;

/// ClusterIPs and NodePorts used by existing services.
#[derive(Default)]
pub struct InUse {
    pub ips: HashSet<String>,
    pub node_ports: HashSet<i64>,
}

impl InUse {
    pub fn add_service(&mut self, svc: &Value) {
        if let Some(ips) = svc.pointer("/spec/clusterIPs").and_then(Value::as_array) {
            self.ips
                .extend(ips.iter().filter_map(Value::as_str).map(str::to_string));
        }
        if let Some(ip) = svc.pointer("/spec/clusterIP").and_then(Value::as_str) {
            self.ips.insert(ip.to_string());
        }
        if let Some(ports) = svc.pointer("/spec/ports").and_then(Value::as_array) {
            self.node_ports.extend(
                ports
                    .iter()
                    .filter_map(|p| p.get("nodePort").and_then(Value::as_i64)),
            );
        }
    }
}

fn random_ip(rng: &mut impl Rng, used: &InUse) -> Option<String> {
    let size = 1u32 << (32 - SERVICE_BITS);
    for _ in 0..64 {
        // Skip the network address and .1 (the kubernetes service).
        let offset = rng.gen_range(2..size - 1);
        let ip = Ipv4Addr::from(SERVICE_NET + offset).to_string();
        if !used.ips.contains(&ip) {
            return Some(ip);
        }
    }
    None
}

/// Fills `spec.clusterIP(s)` and missing `nodePort`s of a new Service.
pub fn allocate_service(
    svc: &mut Value,
    used: &InUse,
    rng: &mut impl Rng,
) -> Result<(), FieldError> {
    let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    if ty == "ExternalName" {
        return Ok(());
    }
    let ip = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if ip.is_empty() {
        let ip = random_ip(rng, used).ok_or_else(|| {
            FieldError::internal(
                "spec.clusterIPs",
                "failed to allocate a serviceIP: range is full",
            )
        })?;
        spec.insert("clusterIP".into(), json!(ip));
        spec.insert("clusterIPs".into(), json!([ip]));
    } else {
        if ip != "None" && used.ips.contains(&ip) {
            return Err(FieldError::invalid(
                "spec.clusterIPs",
                json!([ip]),
                format!("failed to allocate IP {ip}: provided IP is already allocated"),
            ));
        }
        spec.entry("clusterIPs").or_insert(json!([ip]));
    }
    if ty == "NodePort" || ty == "LoadBalancer" {
        let mut taken = used.node_ports.clone();
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                if p.get("nodePort")
                    .and_then(Value::as_i64)
                    .is_some_and(|n| n != 0)
                {
                    continue;
                }
                let port = (0..256)
                    .map(|_| rng.gen_range(NODE_PORTS))
                    .find(|n| !taken.contains(n))
                    .ok_or_else(|| {
                        FieldError::internal(
                            "spec.ports",
                            "failed to allocate a nodePort: range is full",
                        )
                    })?;
                taken.insert(port);
                p.insert("nodePort".into(), json!(port));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocates_unused_addresses() {
        let mut rng = rand::thread_rng();
        let mut used = InUse::default();
        let mut svc = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 443, "nodePort": 30001}]}});
        allocate_service(&mut svc, &used, &mut rng).unwrap();
        let ip: Ipv4Addr = svc["spec"]["clusterIP"].as_str().unwrap().parse().unwrap();
        let o = ip.octets();
        assert!(o[0] == 10 && (96..112).contains(&o[1]), "{ip}");
        assert_eq!(svc["spec"]["clusterIPs"], json!([ip.to_string()]));
        let np = svc["spec"]["ports"][0]["nodePort"].as_i64().unwrap();
        assert!(NODE_PORTS.contains(&np));
        assert_eq!(svc["spec"]["ports"][1]["nodePort"], 30001);
        used.add_service(&svc);
        let mut clash = json!({"spec": {"clusterIP": ip.to_string()}});
        assert!(allocate_service(&mut clash, &used, &mut rng).is_err());
        let mut headless = json!({"spec": {"clusterIP": "None"}});
        allocate_service(&mut headless, &used, &mut rng).unwrap();
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
        let mut ext = json!({"spec": {"type": "ExternalName", "externalName": "x.example"}});
        allocate_service(&mut ext, &used, &mut rng).unwrap();
        assert!(ext["spec"].get("clusterIP").is_none());
    }
}
