//! The CertificateSigningRequest plugins: `CertificateApproval` (approving or denying through
//! `certificatesigningrequests/approval` needs `approve` on the `signers` resource of
//! `certificates.k8s.io` named after the stored request's `spec.signerName`, or its
//! `<domain>/*`), `CertificateSigning` (a `status` update that changes `status.certificate` or
//! `status.conditions` needs `sign` likewise) and `CertificateSubjectRestriction` (a request for
//! the `kubernetes.io/kube-apiserver-client` signer may not ask for the `system:masters`
//! organization). `ClusterTrustBundleAttest` guards clustertrustbundles, which this server does
//! not serve, so it has nothing to do here.

use base64::Engine;
use serde_json::Value;
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::prelude::FromDer;

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::authn::UserInfo;
use crate::authz::ResourceAttributes;
use crate::meta::status::Status;

const GROUP: &str = "certificates.k8s.io";

/// A request for a CertificateSigningRequest's subresource `sub` (`""`: the object).
fn is_csr(a: &Attributes, sub: &str) -> bool {
    a.resource.group == GROUP && a.kind() == "CertificateSigningRequest" && a.subresource == sub
}

fn signer_name(csr: &Value) -> &str {
    csr.pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `IsAuthorizedForSignerName`: `verb` on `signers/<name>`, else on `signers/<domain>/*`.
async fn authorized_for_signer(h: &Handle, user: &UserInfo, verb: &str, signer: &str) -> bool {
    let check = |name: String| async move {
        h.allowed(
            user,
            ResourceAttributes {
                verb,
                group: GROUP,
                version: "*",
                resource: "signers",
                subresource: None,
                namespace: None,
                name: Some(&name),
                field_selector: None,
            },
        )
        .await
    };
    if check(signer.to_string()).await {
        return true;
    }
    let domain = signer.split('/').next().unwrap_or("");
    check(format!("{domain}/*")).await
}

pub struct CertificateApproval;

#[async_trait::async_trait]
impl Plugin for CertificateApproval {
    fn name(&self) -> &'static str {
        "CertificateApproval"
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Update || !is_csr(a, "approval") {
            return Ok(());
        }
        // The stored request's signer: an approval may not change it anyway.
        let Some(old) = &a.old_object else {
            return Ok(());
        };
        let signer = signer_name(old);
        if !authorized_for_signer(h, &a.user, "approve", signer).await {
            return Err(a.forbidden(format!(
                "user not permitted to approve requests with signerName {signer:?}"
            )));
        }
        Ok(())
    }
}

pub struct CertificateSigning;

#[async_trait::async_trait]
impl Plugin for CertificateSigning {
    fn name(&self) -> &'static str {
        "CertificateSigning"
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Update || !is_csr(a, "status") {
            return Ok(());
        }
        let (Some(new), Some(old)) = (&a.object, &a.old_object) else {
            return Ok(());
        };
        let field = |o: &Value, f: &str| {
            o.get("status")
                .and_then(|s| s.get(f))
                .filter(|v| !v.is_null())
                .cloned()
        };
        let empty_list =
            |v: Option<Value>| v.filter(|l| l.as_array().is_none_or(|a| !a.is_empty()));
        let empty_str = |v: Option<Value>| v.filter(|s| s.as_str() != Some(""));
        let same = empty_str(field(new, "certificate")) == empty_str(field(old, "certificate"))
            && empty_list(field(new, "conditions")) == empty_list(field(old, "conditions"));
        if same {
            return Ok(());
        }
        let signer = signer_name(old);
        if !authorized_for_signer(h, &a.user, "sign", signer).await {
            return Err(a.forbidden(format!(
                "user not permitted to sign requests with signerName {signer:?}"
            )));
        }
        Ok(())
    }
}

pub struct CertificateSubjectRestriction;

const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";

/// The organizations of the request's subject (`Err`: kube's `ParseCSR` text).
fn organizations(csr: &Value) -> Result<Vec<String>, String> {
    let b64 = csr
        .pointer("/spec/request")
        .and_then(Value::as_str)
        .unwrap_or("");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap_or_default();
    let der = match rustls_pemfile::read_one(&mut pem.as_slice()) {
        Ok(Some(rustls_pemfile::Item::Csr(der))) => der,
        _ => return Err("PEM block type must be CERTIFICATE REQUEST".into()),
    };
    let (_, req) = X509CertificationRequest::from_der(der.as_ref())
        .map_err(|_| "x509: malformed certificate request".to_string())?;
    Ok(req
        .certification_request_info
        .subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect())
}

#[async_trait::async_trait]
impl Plugin for CertificateSubjectRestriction {
    fn name(&self) -> &'static str {
        "CertificateSubjectRestriction"
    }

    async fn validate(&self, a: &Attributes, _h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Create || !is_csr(a, "") {
            return Ok(());
        }
        let Some(csr) = &a.object else {
            return Ok(());
        };
        if signer_name(csr) != KUBE_APISERVER_CLIENT {
            return Ok(());
        }
        let orgs =
            organizations(csr).map_err(|e| a.forbidden(format!("failed to parse CSR: {e}")))?;
        if orgs.iter().any(|o| o == "system:masters") {
            return Err(a.forbidden(format!(
                "use of {KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed"
            )));
        }
        Ok(())
    }
}
