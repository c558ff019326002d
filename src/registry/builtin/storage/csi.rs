//! The CSI kinds of storage.k8s.io: CSIDrivers (`SetDefaults_CSIDriver`,
//! `ValidateCSIDriver(Update)`), CSINodes (`ValidateCSINode(Update)`, long node IDs allowed)
//! and CSIStorageCapacities (`ValidateCSIStorageCapacity(Update)`).

use serde_json::{json, Value};

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{is_dns1123_subdomain, is_qualified_name, validate_label_selector};
use crate::registry::builtin::apps::{go_label_selector, same_selector};
use crate::registry::builtin::checks::{
    go_pointer, go_strings, immutable, list_of as list, set_default, str_of as text, twice,
};
use crate::registry::builtin::core::persistentvolume::csi_driver_name;
use crate::registry::builtin::core::pod_validation::quantity;
use crate::registry::strategy::{is_unset, Strategy};
use crate::registry::table::{printers, Printer};

pub struct CSIDrivers;

const FS_GROUP_POLICIES: &[&str] = &["File", "None", "ReadWriteOnceWithFSType"];

/// `nodeAllocatableUpdatePeriodSeconds` needs the MutableCSINodeAllocatableCount gate (alpha,
/// off in 1.33): dropped unless the stored driver has it.
fn drop_allocatable_period(obj: &mut Value, old: Option<&Value>) {
    let in_use = old
        .and_then(|o| o.pointer("/spec/nodeAllocatableUpdatePeriodSeconds"))
        .is_some_and(|v| !v.is_null());
    if !in_use {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("nodeAllocatableUpdatePeriodSeconds");
        }
    }
}

/// `validateCSIDriverSpec`.
fn validate_driver_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    // sic: upstream reports attachRequired as `attachedRequired`
    for (f, shown) in [
        ("attachRequired", "attachedRequired"),
        ("podInfoOnMount", "podInfoOnMount"),
        ("storageCapacity", "storageCapacity"),
    ] {
        if is_unset(spec.get(f)) {
            errs.push(FieldError::required(format!("spec.{shown}"), ""));
        }
    }
    if let Some(p) = spec.get("fsGroupPolicy").and_then(Value::as_str) {
        if !FS_GROUP_POLICIES.contains(&p) {
            errs.push(FieldError::not_supported(
                "spec.fsGroupPolicy",
                p,
                FS_GROUP_POLICIES,
            ));
        }
    }
    let mut audiences: Vec<&str> = Vec::new();
    for (i, t) in list(spec, "tokenRequests").iter().enumerate() {
        let p = format!("spec.tokenRequests[{i}]");
        let audience = text(t, "audience");
        if audiences.contains(&audience) {
            errs.push(FieldError::duplicate(format!("{p}.audience"), audience));
            continue;
        }
        audiences.push(audience);
        let Some(secs) = t.get("expirationSeconds").and_then(Value::as_i64) else {
            continue;
        };
        if secs < 600 {
            errs.push(FieldError::invalid(
                format!("{p}.expirationSeconds"),
                secs,
                "may not specify a duration less than 10 minutes",
            ));
        }
        if secs > 1 << 32 {
            errs.push(FieldError::invalid(
                format!("{p}.expirationSeconds"),
                secs,
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
    }
    for m in list(spec, "volumeLifecycleModes") {
        let m = m.as_str().unwrap_or("");
        if !matches!(m, "Persistent" | "Ephemeral") {
            errs.push(FieldError::not_supported(
                "spec.volumeLifecycleModes",
                m,
                &["Persistent", "Ephemeral"],
            ));
        }
    }
    // SELinuxMountReadWriteOncePod is on by default in 1.33.
    if is_unset(spec.get("seLinuxMount")) {
        errs.push(FieldError::required("spec.seLinuxMount", ""));
    }
    if let Some(n) = spec
        .get("nodeAllocatableUpdatePeriodSeconds")
        .and_then(Value::as_i64)
    {
        if n < 10 {
            errs.push(FieldError::invalid(
                "spec.nodeAllocatableUpdatePeriodSeconds",
                n,
                "must be greater than or equal to 10 seconds",
            ));
        }
    }
    errs
}

impl Strategy for CSIDrivers {
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_allocatable_period(obj, None);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_allocatable_period(new, Some(old));
    }

    /// `SetDefaults_CSIDriver` (seLinuxMount: the SELinuxMountReadWriteOncePod gate is on).
    fn default(&self, obj: &mut Value) {
        let spec = crate::registry::strategy::obj_entry(obj, "spec");
        set_default(spec, "attachRequired", json!(true));
        set_default(spec, "podInfoOnMount", json!(false));
        set_default(spec, "storageCapacity", json!(false));
        set_default(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
        if spec
            .get("volumeLifecycleModes")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
        }
        set_default(spec, "requiresRepublish", json!(false));
        set_default(spec, "seLinuxMount", json!(false));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_driver_spec(obj)
    }

    /// `ValidateCSIDriverUpdate`: the spec again, then attachRequired and the lifecycle
    /// modes never change.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_driver_spec(new);
        let (n, o) = (
            new.get("spec").unwrap_or(&Value::Null),
            old.get("spec").unwrap_or(&Value::Null),
        );
        immutable(
            n.get("attachRequired"),
            o.get("attachRequired"),
            "spec.attachedRequired",
            &mut errs,
        );
        let modes = |s: &Value| {
            s.get("volumeLifecycleModes")
                .filter(|v| !v.is_null())
                .cloned()
        };
        if modes(n) != modes(o) {
            errs.push(FieldError::invalid_rendered(
                "spec.volumeLifecycleModes",
                &go_strings(
                    "[]storage.VolumeLifecycleMode",
                    n.get("volumeLifecycleModes"),
                ),
                "field is immutable",
            ));
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::CSIDRIVER
    }
}

pub struct CSINodes;

/// `validateCSINodeDrivers` (AllowLongNodeID: node IDs up to 256 bytes).
fn validate_csinode(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let drivers = obj.pointer("/spec/drivers").and_then(Value::as_array);
    for (i, d) in drivers.into_iter().flatten().enumerate() {
        let p = format!("spec.drivers[{i}]");
        let name = text(d, "name");
        csi_driver_name(name, &format!("{p}.name"), &mut errs);
        let id = text(d, "nodeID");
        if id.is_empty() {
            errs.push(FieldError::required(format!("{p}.nodeID"), ""));
        }
        if id.len() > 256 {
            errs.push(FieldError::invalid(
                format!("{p}.nodeID"),
                id,
                "must be 256 characters or less",
            ));
        }
        if let Some(n) = d.pointer("/allocatable/count").and_then(Value::as_i64) {
            if n < 0 {
                errs.push(FieldError::invalid(
                    format!("{p}.allocatable.count"),
                    n,
                    "must be greater than or equal to 0",
                ));
            }
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{p}.name"), name));
        }
        names.push(name);
        let mut keys: Vec<&str> = Vec::new();
        for k in list(d, "topologyKeys") {
            let k = k.as_str().unwrap_or("");
            if k.is_empty() {
                errs.push(FieldError::required(&p, ""));
            }
            if keys.contains(&k) {
                errs.push(FieldError::duplicate(&p, k));
            }
            keys.push(k);
            for m in is_qualified_name(k) {
                errs.push(FieldError::invalid(&p, k, m));
            }
        }
    }
    errs
}

/// Go's `%#v` of a `storage.CSINodeDriver`.
fn go_csinode_driver(d: &Value) -> String {
    format!(
        "storage.CSINodeDriver{{Name:{}, NodeID:{}, TopologyKeys:{}, Allocatable:{}}}",
        go_quote(text(d, "name")),
        go_quote(text(d, "nodeID")),
        go_strings("[]string", d.get("topologyKeys")),
        go_pointer("storage.VolumeNodeResources", d.get("allocatable")),
    )
}

impl Strategy for CSINodes {
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_csinode(obj)
    }

    /// The strategy validates the new object, `ValidateCSINodeUpdate` again; a driver that
    /// stays may not change (MutableCSINodeAllocatableCount is off in 1.33).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = twice(validate_csinode(new));
        let drivers = |o: &Value| {
            o.pointer("/spec/drivers")
                .and_then(Value::as_array)
                .cloned()
        };
        let (nd, od) = (
            drivers(new).unwrap_or_default(),
            drivers(old).unwrap_or_default(),
        );
        for o in &od {
            for n in nd.iter().filter(|n| text(n, "name") == text(o, "name")) {
                if n != o {
                    errs.push(FieldError::invalid_rendered(
                        "spec.drivers",
                        &go_csinode_driver(n),
                        "field is immutable",
                    ));
                }
            }
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::CSINODE
    }
}

pub struct CSIStorageCapacities;

impl Strategy for CSIStorageCapacities {
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(sel) = obj.get("nodeTopology") {
            errs.extend(validate_label_selector(sel, "nodeTopology"));
        }
        let class = text(obj, "storageClassName");
        for m in is_dns1123_subdomain(class) {
            errs.push(FieldError::invalid("storageClassName", class, m));
        }
        if let Some(q) = obj.get("capacity").filter(|v| !v.is_null()) {
            let shown = q
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| q.to_string());
            if quantity(&shown).is_some_and(|n| n < 0.0) {
                errs.push(FieldError::invalid(
                    "capacity",
                    shown,
                    "must be greater than or equal to 0",
                ));
            }
        }
        errs
    }

    /// The object again, then nodeTopology and storageClassName never change.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        // A nil selector differs from an empty one; two selectors compare semantically.
        let (n, o) = (
            new.get("nodeTopology").filter(|v| !v.is_null()),
            old.get("nodeTopology").filter(|v| !v.is_null()),
        );
        if n.is_some() != o.is_some() || !same_selector(n, o) {
            let rendered = match n {
                Some(sel) => go_label_selector(sel),
                None => "\"null\"".to_string(),
            };
            errs.push(FieldError::invalid_rendered(
                "nodeTopology",
                &rendered,
                "field is immutable",
            ));
        }
        if text(new, "storageClassName") != text(old, "storageClassName") {
            errs.push(FieldError::invalid(
                "storageClassName",
                text(new, "storageClassName"),
                "field is immutable",
            ));
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::CSC
    }
}
