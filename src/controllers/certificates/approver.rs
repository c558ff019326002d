//! `csrapproving`: kube-controller-manager's `sarApprover`. A request for the
//! `kubernetes.io/kube-apiserver-client-kubelet` signer that passes `ValidateKubeletClientCSR`
//! and has no certificate nor Approved / Denied condition is approved (reason `AutoApproved`)
//! when its requester (`spec.username`, `uid`, `groups`, `extra`) may `create`
//! `certificatesigningrequests/selfnodeclient` in `certificates.k8s.io` (the requester is the
//! node the certificate names: certificate rotation) or, failing that,
//! `certificatesigningrequests/nodeclient` (any requester, e.g. a bootstrap token). The
//! ClusterRoles exist in the bootstrap policy; binding them is the operator's (kubeadm's)
//! choice, as in kube. A request recognized but not allowed is retried with backoff.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::authn::UserInfo;
use crate::authz::{Attributes, Authorizer, ResourceAttributes};
use crate::registry::builtin::certificates::x509;
use crate::registry::store::{self, Part, Scope, Store};

const KUBELET_CLIENT: &str = "kubernetes.io/kube-apiserver-client-kubelet";

/// (subresource checked, whether the request must be for the requester itself, message)
const RECOGNIZERS: &[(&str, bool, &str)] = &[
    (
        "selfnodeclient",
        true,
        "Auto approving self kubelet client certificate after SubjectAccessReview.",
    ),
    (
        "nodeclient",
        false,
        "Auto approving kubelet client certificate after SubjectAccessReview.",
    ),
];

/// The requester of a CSR as a SubjectAccessReview names it.
fn requester(csr: &Value) -> UserInfo {
    let spec = csr.get("spec").unwrap_or(&Value::Null);
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    UserInfo {
        name: super::spec_str(csr, "username").to_string(),
        uid: super::spec_str(csr, "uid").to_string(),
        groups: strings(spec.get("groups").unwrap_or(&Value::Null)),
        extra: spec
            .get("extra")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), strings(v)))
            .collect(),
    }
}

/// Runs until the task is dropped.
pub async fn run(store: Store, cache: crate::watch::Cache, authz: Arc<Authorizer>) {
    super::each_change(store, cache, "csrapproving", move |store, csr| {
        let authz = authz.clone();
        async move { handle(&store, &csr, &authz).await }
    })
    .await
}

async fn handle(store: &Store, csr: &Value, authz: &Authorizer) -> Result<(), String> {
    if !super::bytes_at(csr, "/status/certificate").is_empty() {
        return Ok(());
    }
    if super::has_true_condition(csr, "Approved") || super::has_true_condition(csr, "Denied") {
        return Ok(());
    }
    let name = store::meta_str(csr, "name").to_string();
    let req = x509::parse_csr(&super::bytes_at(csr, "/spec/request"))
        .map_err(|e| format!("unable to parse csr {name:?}: {e}"))?;
    if super::spec_str(csr, "signerName") != KUBELET_CLIENT
        || x509::validate_kubelet_client(&req, &super::usages(csr)).is_err()
    {
        return Ok(());
    }
    let user = requester(csr);
    let mut tried = Vec::new();
    for (sub, own, message) in RECOGNIZERS {
        if *own && user.name != req.common_name {
            continue;
        }
        tried.push(*sub);
        let attrs = Attributes::Resource(ResourceAttributes {
            verb: "create",
            group: "certificates.k8s.io",
            version: "",
            resource: "certificatesigningrequests",
            subresource: Some(sub),
            namespace: None,
            name: None,
            field_selector: None,
        });
        if authz.allows(&user, &attrs).await {
            return approve(store, &name, message).await;
        }
    }
    Err(format!(
        "recognized csr {name:?} as [{}] but subject access review was not approved",
        tried.join(" ")
    ))
}

async fn approve(store: &Store, name: &str, message: &str) -> Result<(), String> {
    let info = super::csr_info(store);
    let scope = Scope {
        info: &info,
        namespace: None,
    };
    let res = store
        .update_with(
            scope,
            name,
            Part::Approval,
            &super::write_options(),
            |cur| {
                let mut next = cur.clone();
                let cond = json!({"type": "Approved", "status": "True", "reason": "AutoApproved",
                "message": message});
                let status = crate::registry::strategy::obj_entry(&mut next, "status");
                match status.get_mut("conditions").and_then(Value::as_array_mut) {
                    Some(list) => list.push(cond),
                    None => {
                        status.insert("conditions".into(), json!([cond]));
                    }
                }
                store::meta_mut(&mut next).remove("resourceVersion");
                Ok(next)
            },
        )
        .await;
    match res {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(format!("error updating approval for csr: {}", e.message)),
    }
}
