//! The kubelet client (kube's `pkg/kubelet/client`): the TLS identity and trust the API server
//! uses toward kubelets (`--kubelet-client-certificate/key`, `--kubelet-certificate-authority`;
//! without a CA the kubelet's serving certificate is not verified, as kube's
//! `KubeletClientConfig` makes the transport insecure when it has no CA), and where a Node's
//! kubelet listens (`--kubelet-preferred-address-types` over `status.addresses`, the port from
//! `status.daemonEndpoints.kubeletEndpoint.Port`). It also owns the plain proxy transport
//! `pods/proxy` and `services/proxy` use (kube's `ProxyTransport`: TLS never verified).
//!
//! It knows nothing of HTTP routing, requests or `Status`: `server::connect` asks it for a
//! node's address and for a client, and turns its errors into kube's responses.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// kube-apiserver's default `--kubelet-preferred-address-types`.
pub const DEFAULT_ADDRESS_TYPES: &str = "Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP";
/// The port used when a Node does not publish its kubelet's (kube's `--kubelet-port`).
pub const DEFAULT_PORT: u16 = 10250;
/// kube's `--kubelet-timeout` default, used as the connect timeout.
const DIAL_TIMEOUT: Duration = Duration::from_secs(5);

/// The `--kubelet-*` flags.
#[derive(Clone, Debug)]
pub struct Config {
    pub client_certificate: Option<PathBuf>,
    pub client_key: Option<PathBuf>,
    pub certificate_authority: Option<PathBuf>,
    /// Address types in order of preference (`Hostname`, `InternalIP`, ...).
    pub preferred_address_types: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            client_certificate: None,
            client_key: None,
            certificate_authority: None,
            preferred_address_types: DEFAULT_ADDRESS_TYPES
                .split(',')
                .map(str::to_string)
                .collect(),
        }
    }
}

/// Clients toward kubelets and proxied backends.
pub struct Client {
    kubelet: reqwest::Client,
    /// The same identity, the kubelet's certificate not verified (`insecureSkipTLSVerifyBackend`).
    kubelet_insecure: reqwest::Client,
    proxy: reqwest::Client,
    preferred: Vec<String>,
}

/// Where a node's kubelet listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub host: String,
    pub port: u16,
}

impl Location {
    /// `host:port`, an IPv6 host in brackets.
    pub fn authority(&self) -> String {
        join_host_port(&self.host, self.port)
    }
}

/// `net.JoinHostPort`.
pub fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .use_rustls_tls()
        .http1_only()
        .connect_timeout(DIAL_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
}

impl Client {
    pub fn new(cfg: &Config) -> Result<Client, String> {
        let mut b = builder();
        let mut insecure = builder().danger_accept_invalid_certs(true);
        match &cfg.certificate_authority {
            Some(ca) => {
                let pem = std::fs::read(ca).map_err(|e| {
                    format!("--kubelet-certificate-authority {}: {e}", ca.display())
                })?;
                b = b.tls_built_in_root_certs(false);
                for cert in reqwest::Certificate::from_pem_bundle(&pem)
                    .map_err(|e| format!("--kubelet-certificate-authority: {e}"))?
                {
                    b = b.add_root_certificate(cert);
                }
            }
            None => b = b.danger_accept_invalid_certs(true),
        }
        match (&cfg.client_certificate, &cfg.client_key) {
            (Some(c), Some(k)) => {
                let mut pem = std::fs::read(c)
                    .map_err(|e| format!("--kubelet-client-certificate {}: {e}", c.display()))?;
                pem.push(b'\n');
                pem.extend(
                    std::fs::read(k)
                        .map_err(|e| format!("--kubelet-client-key {}: {e}", k.display()))?,
                );
                let identity = reqwest::Identity::from_pem(&pem)
                    .map_err(|e| format!("--kubelet-client-certificate/key: {e}"))?;
                b = b.identity(identity.clone());
                insecure = insecure.identity(identity);
            }
            (None, None) => {}
            _ => {
                return Err(
                    "--kubelet-client-certificate and --kubelet-client-key go together".into(),
                )
            }
        }
        for t in &cfg.preferred_address_types {
            if !ADDRESS_TYPES.contains(&t.as_str()) {
                return Err(format!(
                    "--kubelet-preferred-address-types: {t} is not a valid address type"
                ));
            }
        }
        Ok(Client {
            kubelet: b.build().map_err(|e| format!("kubelet client: {e}"))?,
            kubelet_insecure: insecure
                .build()
                .map_err(|e| format!("kubelet client: {e}"))?,
            proxy: builder()
                .danger_accept_invalid_certs(true)
                .build()
                .map_err(|e| format!("proxy client: {e}"))?,
            preferred: cfg.preferred_address_types.clone(),
        })
    }

    /// The client for kubelet endpoints (the configured identity and trust).
    pub fn kubelet(&self) -> &reqwest::Client {
        &self.kubelet
    }

    /// The kubelet client that does not verify the kubelet's certificate (kube's
    /// `InsecureSkipTLSVerifyTransport`, for `insecureSkipTLSVerifyBackend`).
    pub fn kubelet_insecure(&self) -> &reqwest::Client {
        &self.kubelet_insecure
    }

    /// The client for pod, service and non-kubelet node addresses.
    pub fn proxy(&self) -> &reqwest::Client {
        &self.proxy
    }

    /// Where `node`'s kubelet listens (kube's `NodeConnectionInfoGetter`); the error is kube's
    /// `no preferred addresses found; known addresses: [...]`.
    pub fn location(&self, node: &Value) -> Result<Location, String> {
        let host = self.preferred_address(node)?;
        let port = node
            .pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
            .and_then(Value::as_i64)
            .filter(|p| *p > 0 && *p <= 65535)
            .map(|p| p as u16)
            .unwrap_or(DEFAULT_PORT);
        Ok(Location { host, port })
    }

    /// kube's `GetPreferredNodeAddress`: the first address of the first preferred type; a
    /// `Hostname` preference also takes the node's `kubernetes.io/hostname` label.
    pub fn preferred_address(&self, node: &Value) -> Result<String, String> {
        let addresses = node
            .pointer("/status/addresses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for t in &self.preferred {
            if let Some(a) = addresses.iter().find(|a| {
                a.get("type").and_then(Value::as_str) == Some(t.as_str())
                    && a.get("address").and_then(Value::as_str).is_some()
            }) {
                return Ok(a["address"].as_str().unwrap_or("").to_string());
            }
            if t == "Hostname" {
                if let Some(h) = node
                    .pointer("/metadata/labels/kubernetes.io~1hostname")
                    .and_then(Value::as_str)
                {
                    return Ok(h.to_string());
                }
            }
        }
        // Go prints the addresses as `[{Type address} ...]`.
        let known: Vec<String> = addresses
            .iter()
            .map(|a| {
                format!(
                    "{{{} {}}}",
                    a.get("type").and_then(Value::as_str).unwrap_or(""),
                    a.get("address").and_then(Value::as_str).unwrap_or("")
                )
            })
            .collect();
        Err(format!(
            "no preferred addresses found; known addresses: [{}]",
            known.join(" ")
        ))
    }
}

/// kube's NodeAddressType values.
const ADDRESS_TYPES: &[&str] = &[
    "Hostname",
    "InternalIP",
    "ExternalIP",
    "InternalDNS",
    "ExternalDNS",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn preferred_addresses_and_port() {
        let c = Client::new(&Config::default()).unwrap();
        let node = json!({"status": {
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "ExternalIP", "address": "1.2.3.4"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10255}}}});
        assert_eq!(
            c.location(&node).unwrap(),
            Location {
                host: "10.0.0.1".into(),
                port: 10255
            }
        );
        let labelled = json!({"metadata": {"labels": {"kubernetes.io/hostname": "n1"}}});
        assert_eq!(c.location(&labelled).unwrap().host, "n1");
        assert_eq!(c.location(&labelled).unwrap().port, DEFAULT_PORT);
        let none = json!({"status": {"addresses": [{"type": "Weird", "address": "x"}]}});
        assert_eq!(
            c.location(&none).unwrap_err(),
            "no preferred addresses found; known addresses: [{Weird x}]"
        );
        assert_eq!(join_host_port("::1", 1), "[::1]:1");
    }
}
