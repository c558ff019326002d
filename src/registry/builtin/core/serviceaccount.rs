//! ServiceAccounts (core/v1): the `token` subresource, the deprecation warning of
//! `kubernetes.io/enforce-mountable-secrets` and the printer.

use serde_json::Value;

use crate::registry::strategy::{Extra, Strategy};
use crate::registry::table::{printers, Printer};

pub struct ServiceAccounts;

const ENFORCE_MOUNTABLE: &str = "kubernetes.io/enforce-mountable-secrets";

fn enforces(sa: &Value) -> bool {
    sa.pointer("/metadata/annotations")
        .and_then(|a| a.get(ENFORCE_MOUNTABLE))
        .is_some()
}

/// kube's `warningsForServiceAccount`: the annotation, when it is new, is deprecated.
fn warnings(sa: &Value, old: Option<&Value>) -> Vec<String> {
    if !enforces(sa) || old.is_some_and(enforces) {
        return Vec::new();
    }
    vec![format!(
        "metadata.annotations[{ENFORCE_MOUNTABLE}]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"
    )]
}

impl Strategy for ServiceAccounts {
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        warnings(obj, None)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        warnings(new, Some(old))
    }

    fn extras(&self) -> &'static [Extra] {
        &[Extra::Token]
    }

    fn printer(&self) -> Printer {
        printers::SA
    }
}
