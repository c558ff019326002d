//! VolumeAttachments (storage.k8s.io/v1): `ValidateVolumeAttachment` with the v1 checks on
//! create, and a spec that never changes.

use crate::registry::object::Part;
use crate::registry::strategy::{default_reset_fields, ResetFields};
use serde_json::Value;

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::is_dns1123_subdomain;
use crate::registry::builtin::checks::{go_pointer, str_at, str_of as text, twice};
use crate::registry::builtin::core::persistentvolume::{csi_driver_name, validate_pv_spec};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct VolumeAttachments;

const MAX_METADATA: usize = 256 * 1024;

/// `ValidateVolumeAttachment`: spec (attacher, source, node name) and status.
fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    if text(spec, "attacher").is_empty() {
        errs.push(FieldError::required("spec.attacher", ""));
    }
    let source = spec.get("source").unwrap_or(&Value::Null);
    let pv = source.get("persistentVolumeName").filter(|v| !v.is_null());
    let inline = source.get("inlineVolumeSpec").filter(|v| !v.is_null());
    let exactly_one = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
    match (pv, inline) {
        (None, None) => errs.push(FieldError::required("spec.source", exactly_one)),
        (Some(_), Some(_)) => errs.push(FieldError::forbidden("spec.source", exactly_one)),
        (Some(name), None) => {
            if name.as_str().unwrap_or("").is_empty() {
                errs.push(FieldError::required(
                    "spec.source.persistentVolumeName",
                    "must specify non empty persistentVolumeName",
                ));
            }
        }
        (None, Some(s)) => validate_pv_spec(s, "spec.source.inlineVolumeSpec", true, &mut errs),
    }
    let node = text(spec, "nodeName");
    for m in is_dns1123_subdomain(node) {
        errs.push(FieldError::invalid("spec.nodeName", node, m));
    }
    let status = obj.get("status").unwrap_or(&Value::Null);
    if let Some(md) = status.get("attachmentMetadata").and_then(Value::as_object) {
        let size: usize = md
            .iter()
            .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
            .sum();
        if size > MAX_METADATA {
            errs.push(FieldError::too_long(
                "status.attachmentMetadata",
                "",
                MAX_METADATA as i64,
            ));
        }
    }
    for f in ["attachError", "detachError"] {
        let Some(e) = status.get(f).filter(|v| !v.is_null()) else {
            continue;
        };
        if text(e, "message").len() > 1024 {
            // sic: upstream reports the metadata limit
            errs.push(FieldError::too_long(
                format!("status.{f}.message"),
                "",
                MAX_METADATA as i64,
            ));
        }
        if let Some(code) = e.get("errorCode").and_then(Value::as_i64) {
            if code < 0 {
                errs.push(FieldError::invalid(
                    format!("status.{f}.errorCode"),
                    code,
                    "must be between 0 and 2147483647, inclusive",
                ));
            }
        }
    }
    errs
}

/// Go's `%#v` of a `storage.VolumeAttachmentSpec`.
fn go_spec(spec: &Value) -> String {
    let source = spec.get("source").unwrap_or(&Value::Null);
    format!(
        "storage.VolumeAttachmentSpec{{Attacher:{}, Source:storage.VolumeAttachmentSource{{PersistentVolumeName:{}, InlineVolumeSpec:{}}}, NodeName:{}}}",
        go_quote(text(spec, "attacher")),
        go_pointer("string", source.get("persistentVolumeName")),
        go_pointer("core.PersistentVolumeSpec", source.get("inlineVolumeSpec")),
        go_quote(text(spec, "nodeName")),
    )
}

impl Strategy for VolumeAttachments {
    /// kube's status strategy here resets the metadata too.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Status => &[&["metadata"], &["spec"]],
            _ => default_reset_fields(part, has_status),
        }
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// PrepareForCreate resets the status: `attached` is always encoded.
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = serde_json::json!({"attached": false});
    }

    /// Validate, then `ValidateVolumeAttachmentV1`'s tighter attacher and volume name rules.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate(obj);
        csi_driver_name(str_at(obj, "/spec/attacher"), "spec.attacher", &mut errs);
        if let Some(name) = obj
            .pointer("/spec/source/persistentVolumeName")
            .and_then(Value::as_str)
        {
            for m in is_dns1123_subdomain(name) {
                errs.push(FieldError::invalid(
                    "spec.source.persistentVolumeName",
                    name,
                    m,
                ));
            }
        }
        errs
    }

    /// The strategy and `ValidateVolumeAttachmentUpdate` each validate the new object; the
    /// spec is read-only.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = twice(validate(new));
        let spec = new.get("spec").unwrap_or(&Value::Null);
        if spec != old.get("spec").unwrap_or(&Value::Null) {
            errs.push(FieldError::invalid_rendered(
                "spec",
                &go_spec(spec),
                "field is immutable",
            ));
        }
        errs
    }

    /// The status strategy keeps the stored spec; `errorCode` (MutableCSINodeAllocatableCount,
    /// alpha and off in v1.33) is dropped from an error that did not have one.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value, _now: &str) {
        for f in ["attachError", "detachError"] {
            let had = old
                .pointer(&format!("/status/{f}/errorCode"))
                .is_some_and(|c| !c.is_null());
            if had {
                continue;
            }
            if let Some(e) = new
                .pointer_mut(&format!("/status/{f}"))
                .and_then(Value::as_object_mut)
            {
                e.remove("errorCode");
            }
        }
    }

    /// The status strategy keeps the stored spec and validates as an update does (kube's
    /// volumeAttachmentStatusStrategy has no rules of its own).
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_update(new, old)
    }

    fn printer(&self) -> Printer {
        printers::VA
    }
}
