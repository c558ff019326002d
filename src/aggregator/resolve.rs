//! kube's service resolvers, shared by the aggregator's proxy and availability check and the
//! admission webhook client: the address a Service reference (namespace, name, port) is
//! dialled at — the cluster IP and port, `externalName:port` for an ExternalName Service
//! (how tests reach a server on 127.0.0.1: Endpoints may not point at loopback), or one of
//! the Service's endpoints with `--enable-aggregator-routing`. It reads this replica's store;
//! it knows nothing of who calls it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::registry::store::{ReadAt, Scope, Store};

/// Whether `--enable-aggregator-routing` is set (Services are dialled at an endpoint).
static ENDPOINT_ROUTING: AtomicBool = AtomicBool::new(false);

/// `--enable-aggregator-routing`.
pub fn set_endpoint_routing(on: bool) {
    ENDPOINT_ROUTING.store(on, Ordering::Relaxed);
}

/// Whether Services are dialled at an endpoint.
pub fn endpoint_routing() -> bool {
    ENDPOINT_ROUTING.load(Ordering::Relaxed)
}

/// One core/v1 object from this replica's store (`None`: absent or unreadable).
pub async fn get_core(store: &Store, resource: &str, namespace: &str, name: &str) -> Option<Value> {
    let info = store.registry().get("", "v1", resource)?;
    let scope = Scope {
        info: &info,
        namespace: Some(namespace),
    };
    store.get(scope, name, ReadAt::Any).await.ok()
}

/// The addresses the Service `namespace/name` is dialled at for `port`, in kube's resolver
/// order; the error is what a failed dial prints.
pub async fn resolve_service(
    store: &Store,
    namespace: &str,
    name: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, String> {
    resolve_service_host(store, namespace, name, port)
        .await
        .map(|(_, addrs)| addrs)
}

/// Go's `net.JoinHostPort`.
fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// [`resolve_service`] with the `host:port` of the URL kube's resolver returns (the
/// ExternalName, the cluster IP or the endpoint, as kube's messages name it).
pub async fn resolve_service_host(
    store: &Store,
    namespace: &str,
    name: &str,
    port: u16,
) -> Result<(String, Vec<SocketAddr>), String> {
    let svc = get_core(store, "services", namespace, name)
        .await
        .ok_or_else(|| format!("service \"{name}\" not found"))?;
    let spec = svc.get("spec").unwrap_or(&Value::Null);
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let svc_port = || {
        spec.get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(port)))
            .cloned()
            .ok_or_else(|| format!("no service port {port} found for service {name:?}"))
    };
    let host_port = match ty {
        "ExternalName" => {
            let ext = spec
                .get("externalName")
                .and_then(Value::as_str)
                .unwrap_or("");
            (ext.to_string(), port)
        }
        "ClusterIP" | "NodePort" | "LoadBalancer" => {
            let ip = spec.get("clusterIP").and_then(Value::as_str).unwrap_or("");
            if ty == "ClusterIP" && ip == "None" {
                return Err("cannot route to service with ClusterIP \"None\"".into());
            }
            let p = svc_port()?;
            if endpoint_routing() {
                return endpoint(store, namespace, name, &p).await;
            }
            (ip.to_string(), port)
        }
        other => return Err(format!("unsupported service type {other:?}")),
    };
    let addrs = lookup(&host_port.0, host_port.1).await?;
    Ok((join_host_port(&host_port.0, host_port.1), addrs))
}

/// kube's `ResolveEndpoint`: a ready address of the Service's endpoints on the port the
/// service port names.
async fn endpoint(
    store: &Store,
    namespace: &str,
    name: &str,
    svc_port: &Value,
) -> Result<(String, Vec<SocketAddr>), String> {
    let eps = get_core(store, "endpoints", namespace, name)
        .await
        .ok_or_else(|| format!("endpoints \"{name}\" not found"))?;
    let (ip, port) = endpoint_address(&eps, svc_port, rand::random())
        .ok_or_else(|| format!("no endpoints available for service \"{name}\""))?;
    let addrs = lookup(&ip, port).await?;
    Ok((join_host_port(&ip, port), addrs))
}

/// The address of `eps` serving the port `svc_port` names: the first subset with that port
/// and an address, one of its addresses picked by `pick`.
pub fn endpoint_address(eps: &Value, svc_port: &Value, pick: usize) -> Option<(String, u16)> {
    let port_name = svc_port.get("name").and_then(Value::as_str).unwrap_or("");
    eps.get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|subset| {
            let port = subset
                .get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)
                .and_then(|p| p.get("port").and_then(Value::as_u64))
                .and_then(|p| u16::try_from(p).ok())?;
            let addrs: Vec<&str> = subset
                .get("addresses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|a| a.get("ip").and_then(Value::as_str))
                .collect();
            (!addrs.is_empty()).then(|| (addrs[pick % addrs.len()].to_string(), port))
        })
}

/// The addresses of `host` (IPv4 first, as they are tried in order).
pub async fn lookup(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let mut addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("dial tcp: lookup {host}: {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("dial tcp: lookup {host}: no such host"));
    }
    addrs.sort_by_key(|a| !a.is_ipv4());
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_chosen_by_the_service_port_name() {
        let eps = serde_json::json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "metrics", "port": 9090}]},
            {"addresses": [], "ports": [{"name": "https", "port": 8443}]},
            {"addresses": [{"ip": "10.0.0.2"}, {"ip": "10.0.0.3"}], "ports": [{"name": "https", "port": 8443}]},
        ]});
        let port = serde_json::json!({"name": "https", "port": 443});
        assert_eq!(
            endpoint_address(&eps, &port, 1),
            Some(("10.0.0.3".to_string(), 8443))
        );
        assert_eq!(
            endpoint_address(&eps, &serde_json::json!({"port": 1}), 0),
            None
        );
    }
}
