//! The certificates.k8s.io group's strategies.

use serde_json::Value;

use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

/// CertificateSigningRequests: the requester may send a status; `spec.signerName` is
/// selectable.
pub struct CertificateSigningRequests;

impl Strategy for CertificateSigningRequests {
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn printer(&self) -> Printer {
        printers::CSR
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("spec.signerName", "spec.signerName"),
    ],
    reject: not_supported,
    extract: signer_fields,
};

fn signer_fields(obj: &Value, put: Put<'_>) {
    put(
        "spec.signerName",
        fields::text(obj, &["spec", "signerName"]),
    );
}
