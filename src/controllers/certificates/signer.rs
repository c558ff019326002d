//! `csrsigning`: kube-controller-manager's signers of the built-in signer names, one CA for
//! all (`--cluster-signing-cert-file` / `--cluster-signing-key-file`, by default the data
//! folder's client CA, so issued client certificates authenticate at once). A request is
//! signed once it is Approved, not Failed and has no certificate yet, if it passes its
//! signer's rules; one that does not gets a `Failed` condition (reason
//! `SignerValidationFailure`, the rule's text as message). Other signer names are left alone.
//!
//! - `kubernetes.io/kube-apiserver-client`: usages `client auth` and optionally
//!   `digital signature` / `key encipherment`; any subject.
//! - `kubernetes.io/kube-apiserver-client-kubelet`: kube's `ValidateKubeletClientCSR`.
//! - `kubernetes.io/kubelet-serving`: kube's `ValidateKubeletServingCSR`.
//! - `kubernetes.io/legacy-unknown`: no rules (kube's), but v1 refuses to create such requests.
//!
//! Duration: `--cluster-signing-duration` (default 8760h), or `spec.expirationSeconds` when
//! shorter (at least 10 minutes), under the authority's backdating and the CA's NotAfter.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use super::authority::Authority;
use crate::registry::builtin::certificates::x509;
use crate::registry::store::{self, Part, Scope, Store};

/// The built-in signers kube-controller-manager's `csrsigning` runs.
pub const SIGNERS: &[&str] = &[
    "kubernetes.io/kube-apiserver-client",
    "kubernetes.io/kube-apiserver-client-kubelet",
    "kubernetes.io/kubelet-serving",
    "kubernetes.io/legacy-unknown",
];

/// `--cluster-signing-duration`'s default.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(8760 * 3600);

/// The signing rules of `signer` for a parsed request (`Err`: the Failed condition's message).
pub fn check(signer: &str, req: &x509::Request, usages: &[&str]) -> Result<(), String> {
    match signer {
        "kubernetes.io/kube-apiserver-client" => x509::validate_api_server_client_usages(usages),
        "kubernetes.io/kube-apiserver-client-kubelet" => x509::validate_kubelet_client(req, usages),
        "kubernetes.io/kubelet-serving" => x509::validate_kubelet_serving(req, usages),
        _ => Ok(()),
    }
}

/// The signer's `duration`: the TTL unless the request asks for less (but at least 10 min).
pub fn duration(ttl: Duration, expiration_seconds: Option<i64>) -> Duration {
    let Some(secs) = expiration_seconds else {
        return ttl;
    };
    let requested = Duration::from_secs(secs.max(0) as u64);
    let min = 2 * super::authority::BACKDATE;
    if requested > ttl {
        ttl
    } else if requested < min {
        min
    } else {
        requested
    }
}

/// Runs until the task is dropped.
pub async fn run(store: Store, cache: crate::watch::Cache, ca: Arc<Authority>, ttl: Duration) {
    super::each_change(store, cache, "csrsigning", move |store, csr| {
        let ca = ca.clone();
        async move { handle(&store, &csr, &ca, ttl).await }
    })
    .await
}

async fn handle(store: &Store, csr: &Value, ca: &Authority, ttl: Duration) -> Result<(), String> {
    if !super::has_true_condition(csr, "Approved") || super::has_true_condition(csr, "Failed") {
        return Ok(());
    }
    if !super::bytes_at(csr, "/status/certificate").is_empty() {
        return Ok(());
    }
    let signer = super::spec_str(csr, "signerName");
    if !SIGNERS.contains(&signer) {
        return Ok(());
    }
    let name = store::meta_str(csr, "name").to_string();
    let req = x509::parse_csr(&super::bytes_at(csr, "/spec/request"))
        .map_err(|e| format!("unable to parse csr {name:?}: {e}"))?;
    let usages = super::usages(csr);
    let info = super::csr_info(store);
    let scope = Scope {
        info: &info,
        namespace: None,
    };
    let opts = super::write_options();
    let uid = store::meta_str(csr, "uid").to_string();
    let change: Box<dyn Fn(&mut Value) + Send + Sync> = match check(signer, &req, &usages) {
        Err(message) => {
            let now = opts.now.clone();
            Box::new(move |next: &mut Value| {
                let cond = json!({"type": "Failed", "status": "True",
                    "reason": "SignerValidationFailure", "message": message,
                    "lastUpdateTime": now});
                let status = crate::registry::strategy::obj_entry(next, "status");
                match status.get_mut("conditions").and_then(Value::as_array_mut) {
                    Some(list) => list.push(cond),
                    None => {
                        status.insert("conditions".into(), json!([cond]));
                    }
                }
            })
        }
        Ok(()) => {
            let expiration = csr
                .pointer("/spec/expirationSeconds")
                .and_then(Value::as_i64);
            let pem = ca
                .sign(&req, &usages, duration(ttl, expiration), SystemTime::now())
                .map_err(|e| format!("error auto signing csr: {e}"))?;
            let encoded = {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD.encode(pem)
            };
            Box::new(move |next: &mut Value| {
                crate::registry::strategy::obj_entry(next, "status")
                    .insert("certificate".into(), json!(encoded));
            })
        }
    };
    let res = store
        .update_with(scope, &name, Part::Status, &opts, |cur| {
            if store::meta_str(cur, "uid") != uid {
                return Err(crate::meta::status::Status::new(
                    409,
                    "Conflict",
                    "the request was replaced",
                ));
            }
            let mut next = cur.clone();
            change(&mut next);
            store::meta_mut(&mut next).remove("resourceVersion");
            Ok(next)
        })
        .await;
    match res {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(format!("error updating signature for csr: {}", e.message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let year = DEFAULT_DURATION;
        assert_eq!(duration(year, None), year);
        assert_eq!(duration(year, Some(86400)), Duration::from_secs(86400));
        assert_eq!(duration(year, Some(60)), Duration::from_secs(600));
        assert_eq!(
            duration(Duration::from_secs(3600), Some(86400)),
            Duration::from_secs(3600)
        );
    }
}
