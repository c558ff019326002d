//! `DenyServiceExternalIPs`: a Service may not gain `spec.externalIPs` (created with some, or
//! updated to one its stored version lacks); keeping or dropping existing ones is allowed.

use serde_json::Value;

use crate::admission::{Attributes, Handle, Plugin};
use crate::meta::status::Status;

pub struct DenyServiceExternalIPs;

fn external_ips(svc: &Value) -> Vec<&str> {
    svc.pointer("/spec/externalIPs")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[async_trait::async_trait]
impl Plugin for DenyServiceExternalIPs {
    fn name(&self) -> &'static str {
        "DenyServiceExternalIPs"
    }

    async fn validate(&self, a: &Attributes, _h: &Handle) -> Result<(), Status> {
        if !a.resource.group.is_empty() || a.kind() != "Service" || !a.subresource.is_empty() {
            return Ok(());
        }
        let Some(new) = &a.object else {
            return Ok(());
        };
        let wanted = external_ips(new);
        if wanted.is_empty() {
            return Ok(());
        }
        let had = a.old_object.as_ref().map(external_ips);
        let subset = had.is_some_and(|had| wanted.iter().all(|ip| had.contains(ip)));
        if !subset {
            return Err(a.forbidden("Use of external IPs is denied by admission control"));
        }
        Ok(())
    }
}
