//! The volume plugins: `StorageObjectInUseProtection` (a new PersistentVolumeClaim gets the
//! `kubernetes.io/pvc-protection` finalizer, a new PersistentVolume `kubernetes.io/pv-protection`,
//! so that neither goes away while in use) and `PersistentVolumeClaimResize` (a claim's storage
//! request may only grow when the claim is bound and its StorageClass, the same before and
//! after, says `allowVolumeExpansion: true`; kube's texts otherwise).

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;
use crate::registry::builtin::core::quantity::Quantity;

pub struct StorageObjectInUseProtection;

#[async_trait::async_trait]
impl Plugin for StorageObjectInUseProtection {
    fn name(&self) -> &'static str {
        "StorageObjectInUseProtection"
    }

    async fn admit(&self, a: &mut Attributes, _h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Create {
            return Ok(());
        }
        if !a.resource.group.is_empty() || !a.subresource.is_empty() {
            return Ok(());
        }
        let finalizer = if a.kind() == "PersistentVolume" {
            "kubernetes.io/pv-protection"
        } else if a.kind() == "PersistentVolumeClaim" {
            "kubernetes.io/pvc-protection"
        } else {
            return Ok(());
        };
        let Some(meta) = a
            .object
            .as_mut()
            .and_then(|o| o.get_mut("metadata"))
            .and_then(Value::as_object_mut)
        else {
            return Ok(());
        };
        let list = meta.entry("finalizers").or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        if let Some(items) = list.as_array_mut() {
            if !items.iter().any(|f| f == finalizer) {
                items.push(json!(finalizer));
            }
        }
        Ok(())
    }
}

pub struct PersistentVolumeClaimResize;

/// `spec.resources.requests.storage` (zero when absent or unparsable, as a missing map key).
fn requested(pvc: &Value) -> Quantity {
    pvc.pointer("/spec/resources/requests/storage")
        .and_then(Quantity::of)
        .unwrap_or_else(|| Quantity::parse("0").expect("zero parses"))
}

/// `helper.GetPersistentVolumeClaimClass`: the beta annotation first, then the field.
fn claim_class(pvc: &Value) -> &str {
    if let Some(c) = pvc
        .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .and_then(Value::as_str)
    {
        return c;
    }
    pvc.pointer("/spec/storageClassName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

#[async_trait::async_trait]
impl Plugin for PersistentVolumeClaimResize {
    fn name(&self) -> &'static str {
        "PersistentVolumeClaimResize"
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Update
            || !a.resource.group.is_empty()
            || a.kind() != "PersistentVolumeClaim"
            || !a.subresource.is_empty()
        {
            return Ok(());
        }
        let (Some(new), Some(old)) = (&a.object, &a.old_object) else {
            return Ok(());
        };
        if requested(new).cmp(&requested(old)) != std::cmp::Ordering::Greater {
            return Ok(());
        }
        if old.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
            return Err(a.forbidden("Only bound persistent volume claims can be expanded"));
        }
        let (class, old_class) = (claim_class(new), claim_class(old));
        let allowed = !class.is_empty()
            && class == old_class
            && h.get("storage.k8s.io", "v1", "storageclasses", None, class)
                .await
                .and_then(|sc| sc.get("allowVolumeExpansion").and_then(Value::as_bool))
                .unwrap_or(false);
        if !allowed {
            return Err(a.forbidden(
                "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            ));
        }
        Ok(())
    }
}
