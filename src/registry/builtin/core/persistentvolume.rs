//! PersistentVolumes and PersistentVolumeClaims (core/v1): kube's `SetDefaults_PersistentVolume`,
//! `ValidatePersistentVolume(Update)` (also used for a VolumeAttachment's inline spec),
//! `ValidateCSIDriverName`, and PVC spec validation; both start `Pending`; printers.

use super::quantity::Quantity;
use crate::registry::builtin::checks;
use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::meta::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_valid_label_value, validate_label_name,
};
use crate::registry::builtin::checks::{
    go_pointer, immutable, list_of as list, not_supported_rendered, set_default, str_of as text,
    twice,
};
use crate::registry::object::meta;
use crate::registry::strategy::{is_unset, Strategy};
use crate::registry::table::{printers, Printer};

pub struct PersistentVolumes;

/// The volume sources of a PersistentVolumeSpec in upstream's check order: (JSON key, the
/// path a second source is reported at).
const PV_SOURCES: &[(&str, &str)] = &[
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

const HOST_PATH_TYPES: &[&str] = &[
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];

/// `ValidateCSIDriverName`.
pub fn csi_driver_name(name: &str, path: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    if name.len() > 63 {
        errs.push(FieldError::too_long(path, "", 63));
    }
    for m in is_dns1123_subdomain(&name.to_lowercase()) {
        errs.push(FieldError::invalid(path, name, m));
    }
}

/// `validatePathNoBacksteps`.
fn no_backsteps(p: &str, path: &str, errs: &mut Vec<FieldError>) {
    if p.split('/').any(|part| part == "..") {
        errs.push(FieldError::invalid(path, p, "must not contain '..'"));
    }
}

/// `ValidateNodeSelector` (a node affinity's `required`), default options.
pub fn validate_node_selector(sel: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let terms = list(sel, "nodeSelectorTerms");
    if terms.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.nodeSelectorTerms"),
            "must have at least one node selector term",
        ));
    }
    for (i, term) in terms.iter().enumerate() {
        let tp = format!("{path}.nodeSelectorTerms[{i}]");
        for (j, req) in list(term, "matchExpressions").iter().enumerate() {
            let rp = format!("{tp}.matchExpressions[{j}]");
            let values = list(req, "values");
            match text(req, "operator") {
                "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                    format!("{rp}.values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                )),
                "In" | "NotIn" => {}
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    errs.push(FieldError::forbidden(
                        format!("{rp}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ))
                }
                "Exists" | "DoesNotExist" => {}
                "Gt" | "Lt" if values.len() != 1 => errs.push(FieldError::required(
                    format!("{rp}.values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )),
                "Gt" | "Lt" => {}
                op => errs.push(FieldError::invalid(
                    format!("{rp}.operator"),
                    op,
                    "not a valid selector operator",
                )),
            }
            errs.extend(validate_label_name(text(req, "key"), &format!("{rp}.key")));
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("");
                for m in is_valid_label_value(v) {
                    errs.push(FieldError::invalid(format!("{rp}.values[{k}]"), v, m));
                }
            }
        }
        for (j, req) in list(term, "matchFields").iter().enumerate() {
            let rp = format!("{tp}.matchFields[{j}]");
            let values = list(req, "values");
            match text(req, "operator") {
                "In" | "NotIn" if values.len() != 1 => errs.push(FieldError::required(
                    format!("{rp}.values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )),
                "In" | "NotIn" => {}
                op => errs.push(FieldError::invalid(
                    format!("{rp}.operator"),
                    op,
                    "not a valid selector operator",
                )),
            }
            let key = text(req, "key");
            if key != "metadata.name" {
                errs.push(FieldError::invalid(
                    format!("{rp}.key"),
                    key,
                    "not a valid field selector key",
                ));
                continue;
            }
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("");
                for m in is_dns1123_subdomain(v) {
                    errs.push(FieldError::invalid(format!("{rp}.values[{k}]"), v, m));
                }
            }
        }
    }
}

/// A quantity's number, rounded up as `Quantity.Value()` does.
fn quantity_value(q: &Value) -> Option<(String, f64)> {
    let text = q
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| q.to_string());
    let n = super::pod_validation::quantity(&text)?;
    Some((text, n))
}

/// Go's `%#v` of a `core.ResourceList` (quantities shown by their text).
fn go_resource_list(v: Option<&Value>) -> String {
    match v.and_then(Value::as_object) {
        None => "core.ResourceList(nil)".into(),
        Some(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, q)| {
                    let q = q
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| q.to_string());
                    format!("{}:{}", crate::meta::field_error::go_quote(k), q)
                })
                .collect();
            format!("core.ResourceList{{{}}}", parts.join(", "))
        }
    }
}

/// `ValidatePersistentVolumeSpec` at `p`; `inline` for a VolumeAttachment's inline spec.
pub fn validate_pv_spec(spec: &Value, p: &str, inline: bool, errs: &mut Vec<FieldError>) {
    let set = |k: &str| !is_unset(spec.get(k));
    if inline {
        if set("claimRef") {
            errs.push(FieldError::forbidden(
                format!("{p}.claimRef"),
                "may not be specified in the context of inline volumes",
            ));
        }
        if spec
            .get("capacity")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
        {
            errs.push(FieldError::forbidden(
                format!("{p}.capacity"),
                "may not be specified in the context of inline volumes",
            ));
        }
        if !set("csi") {
            errs.push(FieldError::required(
                format!("{p}.csi"),
                "has to be specified in the context of inline volumes",
            ));
        }
    }
    let modes = list(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required(format!("{p}.accessModes"), ""));
    }
    let (mut rwop, mut other) = (false, false);
    for m in modes.iter().map(|m| m.as_str().unwrap_or("")) {
        if !ACCESS_MODES.contains(&m) {
            errs.push(FieldError::not_supported(
                format!("{p}.accessModes"),
                m,
                ACCESS_MODES,
            ));
        } else if m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            format!("{p}.accessModes"),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    if !inline {
        let cap = spec.get("capacity").and_then(Value::as_object);
        if cap.is_none_or(|m| m.is_empty()) {
            errs.push(FieldError::required(format!("{p}.capacity"), ""));
        }
        if cap.is_none_or(|m| !m.contains_key("storage") || m.len() > 1) {
            errs.push(not_supported_rendered(
                &format!("{p}.capacity"),
                &go_resource_list(spec.get("capacity")),
                &["storage"],
            ));
        }
        for (k, q) in cap.into_iter().flatten() {
            let kp = format!("{p}.capacity[{k}]");
            if let Some((text, n)) = quantity_value(q) {
                if n < 0.0 {
                    errs.push(FieldError::invalid(
                        &kp,
                        n.ceil() as i64,
                        "must be a valid resource quantity",
                    ));
                }
                if n <= 0.0 {
                    let shown = if n == 0.0 { "0".to_string() } else { text };
                    errs.push(FieldError::invalid(kp, shown, "must be greater than zero"));
                }
            }
        }
    }
    let policy = text(spec, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() {
        if inline {
            if policy != "Retain" {
                errs.push(FieldError::forbidden(
                    format!("{p}.persistentVolumeReclaimPolicy"),
                    "may only be Retain in the context of inline volumes",
                ));
            }
        } else if !matches!(policy, "Delete" | "Recycle" | "Retain") {
            errs.push(FieldError::not_supported(
                format!("{p}.persistentVolumeReclaimPolicy"),
                policy,
                &["Delete", "Recycle", "Retain"],
            ));
        }
    }
    let mut affinity = false;
    if let Some(na) = spec.get("nodeAffinity").filter(|v| !v.is_null()) {
        if inline {
            errs.push(FieldError::forbidden(
                format!("{p}.nodeAffinity"),
                "may not be specified in the context of inline volumes",
            ));
        } else {
            affinity = true;
            match na.get("required").filter(|v| !v.is_null()) {
                Some(r) => validate_node_selector(r, &format!("{p}.nodeAffinity.required"), errs),
                None => errs.push(FieldError::required(
                    format!("{p}.nodeAffinity.required"),
                    "must specify required node constraints",
                )),
            }
        }
    }
    let mut count = 0;
    for (key, shown) in PV_SOURCES {
        let Some(s) = spec.get(*key).filter(|v| !v.is_null()) else {
            continue;
        };
        if count > 0 && *key != "flexVolume" {
            errs.push(FieldError::forbidden(
                format!("{p}.{shown}"),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let sp = format!("{p}.{key}");
        let required = |f: &str, errs: &mut Vec<FieldError>| {
            let empty = text(s, f).is_empty();
            if empty {
                errs.push(FieldError::required(format!("{sp}.{f}"), ""));
            }
            empty
        };
        match *key {
            "hostPath" => {
                if !required("path", errs) {
                    no_backsteps(text(s, "path"), &format!("{sp}.path"), errs);
                    if let Some(t) = s.get("type").and_then(Value::as_str) {
                        if !HOST_PATH_TYPES.contains(&t) {
                            errs.push(FieldError::not_supported(
                                format!("{sp}.type"),
                                t,
                                HOST_PATH_TYPES,
                            ));
                        }
                    }
                }
            }
            "nfs" => {
                required("server", errs);
                required("path", errs);
                let np = text(s, "path");
                if !np.starts_with('/') {
                    errs.push(FieldError::invalid(
                        format!("{sp}.path"),
                        np,
                        "must be an absolute path",
                    ));
                }
            }
            "local" => {
                if !required("path", errs) {
                    no_backsteps(text(s, "path"), &format!("{sp}.path"), errs);
                }
                if !affinity {
                    errs.push(FieldError::required(
                        format!("{p}.nodeAffinity"),
                        "Local volume requires node affinity",
                    ));
                }
            }
            "csi" => {
                csi_driver_name(text(s, "driver"), &format!("{sp}.driver"), errs);
                required("volumeHandle", errs);
                for r in [
                    "controllerPublishSecretRef",
                    "controllerExpandSecretRef",
                    "nodePublishSecretRef",
                    "nodeExpandSecretRef",
                ] {
                    let Some(sr) = s.get(r).filter(|v| !v.is_null()) else {
                        continue;
                    };
                    let rp = format!("{sp}.{r}");
                    for (f, label) in [("name", false), ("namespace", true)] {
                        let v = text(sr, f);
                        if v.is_empty() {
                            errs.push(FieldError::required(format!("{rp}.{f}"), ""));
                            continue;
                        }
                        let msgs = if label {
                            is_dns1123_label(v)
                        } else {
                            is_dns1123_subdomain(v)
                        };
                        for m in msgs {
                            errs.push(FieldError::invalid(format!("{rp}.{f}"), v, m));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        errs.push(FieldError::required(p, "must specify a volume type"));
    }
    if let Some(hp) = spec.get("hostPath").filter(|v| !v.is_null()) {
        let clean = text(hp, "path").trim_end_matches('/');
        if text(hp, "path").starts_with('/') && clean.is_empty() && policy == "Recycle" {
            errs.push(FieldError::forbidden(
                format!("{p}.persistentVolumeReclaimPolicy"),
                "may not be 'recycle' for a hostPath mount of '/'",
            ));
        }
    }
    let class = text(spec, "storageClassName");
    if !class.is_empty() {
        if inline {
            errs.push(FieldError::forbidden(
                format!("{p}.storageClassName"),
                "may not be specified in the context of inline volumes",
            ));
        } else {
            for m in is_dns1123_subdomain(class) {
                errs.push(FieldError::invalid(
                    format!("{p}.storageClassName"),
                    class,
                    m,
                ));
            }
        }
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if inline {
            if mode != "Filesystem" {
                errs.push(FieldError::forbidden(
                    format!("{p}.volumeMode"),
                    "may not specify volumeMode other than Filesystem in the context of inline volumes",
                ));
            }
        } else if !matches!(mode, "Block" | "Filesystem") {
            errs.push(FieldError::not_supported(
                format!("{p}.volumeMode"),
                mode,
                &["Block", "Filesystem"],
            ));
        }
    }
}

/// The PersistentVolumeSource part of a spec: every volume source field.
fn pv_source(spec: &Value) -> Vec<(&'static str, &Value)> {
    PV_SOURCES
        .iter()
        .filter_map(|(k, _)| spec.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)))
        .collect()
}

impl Strategy for PersistentVolumes {
    /// `SetDefaults_PersistentVolume` (and the hostPath source's type).
    fn default(&self, obj: &mut Value) {
        if let Some(st) = obj.get_mut("status").and_then(Value::as_object_mut) {
            if st
                .get("phase")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                st.insert("phase".into(), json!("Pending"));
            }
        }
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            if text(
                &Value::Object(spec.clone()),
                "persistentVolumeReclaimPolicy",
            )
            .is_empty()
            {
                spec.insert("persistentVolumeReclaimPolicy".into(), json!("Retain"));
            }
            set_default(spec, "volumeMode", json!("Filesystem"));
            if let Some(h) = spec.get_mut("hostPath").and_then(Value::as_object_mut) {
                set_default(h, "type", json!(""));
            }
        }
    }

    /// PrepareForCreate: a new volume is `Pending` since its creation.
    fn initialize(&self, obj: &mut Value) {
        let now = meta(obj).get("creationTimestamp").cloned();
        obj["status"] = json!({"phase": "Pending"});
        if let Some(now) = now {
            obj["status"]["lastPhaseTransitionTime"] = now;
        }
    }

    /// The status strategy's `lastPhaseTransitionTime`: kept while the phase stays, `now`
    /// when the phase changes and the write leaves the time out or unchanged.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value, now: &str) {
        let phase = |v: &Value| match text(checks::status_of(v), "phase") {
            "" => "Pending".to_string(),
            p => p.to_string(),
        };
        let time = |v: &Value| {
            checks::status_of(v)
                .get("lastPhaseTransitionTime")
                .filter(|t| !t.is_null())
                .cloned()
        };
        let (same_phase, old_time, new_time) = (phase(new) == phase(old), time(old), time(new));
        let set = match (same_phase, &new_time) {
            (true, None) => old_time,
            (false, None) => Some(Value::from(now)),
            (false, Some(t)) if Some(t) == old_time.as_ref() => Some(Value::from(now)),
            _ => return,
        };
        if let (Some(t), Some(st)) = (set, new.get_mut("status").and_then(Value::as_object_mut)) {
            st.insert("lastPhaseTransitionTime".into(), t);
        }
    }

    /// `ValidatePersistentVolumeStatusUpdate`: a resourceVersion is required.
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        checks::resource_version_required(new, &mut errs);
        errs
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_pv_spec(
            obj.get("spec").unwrap_or(&Value::Null),
            "spec",
            false,
            &mut errs,
        );
        errs
    }

    /// The strategy validates the new volume, then `ValidatePersistentVolumeUpdate` validates
    /// it again before its immutable-field checks.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = twice(self.validate(new));
        let (ns, os) = (
            new.get("spec").unwrap_or(&Value::Null),
            old.get("spec").unwrap_or(&Value::Null),
        );
        let mut new_src = pv_source(ns);
        // A controllerExpandSecretRef may be added to a CSI source that had none.
        let stripped;
        if let (Some(nc), Some(oc)) = (ns.get("csi"), os.get("csi")) {
            if is_unset(oc.get("controllerExpandSecretRef"))
                && !is_unset(nc.get("controllerExpandSecretRef"))
            {
                let mut c = nc.clone();
                if let Some(m) = c.as_object_mut() {
                    m.remove("controllerExpandSecretRef");
                }
                stripped = c;
                for e in new_src.iter_mut().filter(|(k, _)| *k == "csi") {
                    e.1 = &stripped;
                }
            }
        }
        let old_src = pv_source(os);
        if new_src != old_src {
            let show = |src: &[(&str, &Value)]| {
                src.iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            errs.push(FieldError::forbidden(
                "spec.persistentvolumesource",
                format!(
                    "spec.persistentvolumesource is immutable after creation\n  core.PersistentVolumeSource{{\n-\t{},\n+\t{},\n  }}\n",
                    show(&old_src),
                    show(&new_src)
                ),
            ));
        }
        immutable(
            ns.get("volumeMode"),
            os.get("volumeMode"),
            "volumeMode",
            &mut errs,
        );
        if !is_unset(os.get("nodeAffinity")) && ns.get("nodeAffinity") != os.get("nodeAffinity") {
            let required = ns.get("nodeAffinity").and_then(|a| a.get("required"));
            let rendered = if is_unset(ns.get("nodeAffinity")) {
                "\"null\"".to_string()
            } else {
                format!(
                    "core.VolumeNodeAffinity{{Required:{}}}",
                    go_pointer("core.NodeSelector", required)
                )
            };
            errs.push(FieldError::invalid_rendered(
                "nodeAffinity",
                &rendered,
                "field is immutable, except for updating from beta label to GA",
            ));
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::PV
    }
}

pub struct PersistentVolumeClaims;

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// kube's `GetWarningsForPersistentVolumeClaim`: the beta storage-class annotation and
/// fractional sizes.
fn claim_warnings(obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let beta = BETA_CLASS;
    if obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(beta))
        .is_some()
    {
        out.push(format!(
            "metadata.annotations[{beta}]: deprecated since v1.8; use \"storageClassName\" attribute instead"
        ));
    }
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    out.extend(super::pod_warnings::claim_spec_warnings(spec, "spec"));
    out
}

impl Strategy for PersistentVolumeClaims {
    fn quota(&self) -> Option<&'static dyn crate::registry::quota::Evaluator> {
        Some(&crate::registry::quota::Claims)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        claim_warnings(obj)
    }

    fn warnings_on_update(&self, new: &Value, _old: &Value) -> Vec<String> {
        claim_warnings(new)
    }

    /// `SetDefaults_PersistentVolumeClaimSpec`.
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.entry("volumeMode").or_insert(json!("Filesystem"));
        }
    }

    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending"});
    }

    /// `DropDisabledFields`: VolumeAttributesClass is off in v1.33, so the field is dropped.
    fn prepare_for_create(&self, obj: &mut Value) {
        drop_attributes_class(obj, None);
    }

    /// `DropDisabledFields`: the field is dropped unless the stored claim has it.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_attributes_class(new, Some(old));
    }

    /// The status strategy resets only the spec: the metadata follows the request (a
    /// kubelet's change to it is refused by NodeRestriction).
    fn status_metadata(&self) -> &'static [&'static str] {
        &["labels", "annotations", "finalizers", "ownerReferences"]
    }

    /// The status strategy drops the VolumeAttributesClass status fields (beta and off in
    /// v1.33) unless the stored claim uses the feature.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value, _now: &str) {
        let st = checks::status_of(old);
        let in_use = !is_unset(old.pointer("/spec/volumeAttributesClassName"))
            || !is_unset(st.get("currentVolumeAttributesClassName"))
            || !is_unset(st.get("modifyVolumeStatus"));
        if in_use {
            return;
        }
        if let Some(st) = new.get_mut("status").and_then(Value::as_object_mut) {
            st.remove("currentVolumeAttributesClassName");
            st.remove("modifyVolumeStatus");
        }
    }

    /// `ValidatePersistentVolumeClaimStatusUpdate` (RecoverVolumeExpansionFailure, beta and on
    /// in v1.33, adds the allocated resources).
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        checks::resource_version_required(new, &mut errs);
        if list(new.get("spec").unwrap_or(&Value::Null), "accessModes").is_empty() {
            errs.push(FieldError::required("Spec.accessModes", ""));
        }
        let st = checks::status_of(new);
        let map = |f: &str| st.get(f).and_then(Value::as_object);
        for (k, q) in map("capacity").into_iter().flatten() {
            basic_resource(q, &format!("status.capacity[{k}]"), &mut errs);
        }
        let path = "status.allocatedResourceStatus";
        for (k, v) in map("allocatedResourceStatuses").into_iter().flatten() {
            claim_resource_key(k, path, &mut errs);
            if !RESIZE_STATUSES.contains(&v.as_str().unwrap_or("")) {
                errs.push(FieldError::not_supported(path, k.as_str(), RESIZE_STATUSES));
            }
        }
        for (k, q) in map("allocatedResources").into_iter().flatten() {
            let mut key_errs = Vec::new();
            claim_resource_key(k, "status.allocatedResources", &mut key_errs);
            if key_errs.is_empty() {
                basic_resource(q, &format!("status.allocatedResources[{k}]"), &mut errs);
            }
            errs.extend(key_errs);
        }
        errs
    }

    /// The strategy validates the new claim, then `ValidatePersistentVolumeClaimUpdate`
    /// validates it again and keeps the spec as it was, except: `volumeName` may be set once,
    /// `storageClassName` may move from the beta annotation (or from nothing) to the field,
    /// a bound claim's storage request may change (not below `status.capacity`:
    /// RecoverVolumeExpansionFailure is on in v1.33), `volumeAttributesClassName` is checked
    /// apart (its feature is off in v1.33: only a claim stored with one keeps it, and may not
    /// change it). The refusal's diff approximates go-cmp's.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = twice(self.validate(new));
        let none = Value::Null;
        let (ns, os) = (
            new.get("spec").unwrap_or(&none),
            old.get("spec").unwrap_or(&none),
        );
        let (mut nc, mut oc) = (spec_map(ns), spec_map(os));
        if text(os, "volumeName").is_empty() {
            match nc.get("volumeName") {
                Some(v) => oc.insert("volumeName".into(), v.clone()),
                None => oc.remove("volumeName"),
            };
        }
        let annotation = |o: &Value| {
            meta(o)
                .get("annotations")
                .and_then(|a| a.get(BETA_CLASS))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let (new_ann, old_ann) = (annotation(new), annotation(old));
        let class = |s: &Value| {
            s.get("storageClassName")
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let (new_sc, old_sc) = (class(ns), class(os));
        let from_annotation = old_ann.is_some()
            && old_sc.is_none()
            && new_sc.is_some()
            && new_sc == old_ann
            && (new_ann.is_none() || new_ann == old_ann);
        if from_annotation {
            nc.remove("storageClassName");
        } else {
            if new_ann != old_ann {
                errs.push(FieldError::invalid(
                    format!("metadata.annotations.{BETA_CLASS}"),
                    new_ann.clone().unwrap_or_default(),
                    "field is immutable",
                ));
            }
            let from_nil =
                new_sc.is_some() && old_sc.is_none() && (old_ann.is_none() || new_sc == old_ann);
            if from_nil {
                nc.remove("storageClassName");
            }
        }
        let storage = |s: &Value| {
            s.pointer("/resources/requests/storage")
                .and_then(Quantity::of)
        };
        let (new_size, old_size) = (storage(ns), storage(os));
        let bound = text(checks::status_of(new), "phase") == "Bound";
        let same_size = match (&new_size, &old_size) {
            (Some(n), Some(o)) => n.cmp(o) == std::cmp::Ordering::Equal,
            _ => false,
        };
        let has_requests = !is_unset(ns.pointer("/resources/requests"));
        if (bound && has_requests) || same_size {
            let old_request = os.pointer("/resources/requests/storage").cloned();
            if let Some(req) = nc
                .get_mut("resources")
                .and_then(|r| r.get_mut("requests"))
                .and_then(Value::as_object_mut)
            {
                match old_request {
                    Some(q) => req.insert("storage".into(), q),
                    None => req.remove("storage"),
                };
            }
        }
        match oc.get("volumeAttributesClassName") {
            Some(v) => nc.insert("volumeAttributesClassName".into(), v.clone()),
            None => nc.remove("volumeAttributesClassName"),
        };
        if nc != oc {
            errs.push(FieldError::forbidden(
                "spec",
                format!(
                    "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                    spec_diff(&oc, &nc)
                ),
            ));
        }
        let zero = Quantity::parse("0").expect("zero parses");
        let (new_size, old_size) = (
            new_size.unwrap_or_else(|| zero.clone()),
            old_size.unwrap_or_else(|| zero.clone()),
        );
        let capacity = checks::status_of(old)
            .pointer("/capacity/storage")
            .and_then(Quantity::of)
            .unwrap_or(zero);
        if new_size.cmp(&old_size) == std::cmp::Ordering::Less
            && new_size.cmp(&capacity) != std::cmp::Ordering::Greater
        {
            errs.push(FieldError::forbidden(
                "spec.resources.requests.storage",
                "field can not be less than status.capacity",
            ));
        }
        immutable(
            ns.get("volumeMode"),
            os.get("volumeMode"),
            "volumeMode",
            &mut errs,
        );
        if ns.get("volumeAttributesClassName") != os.get("volumeAttributesClassName") {
            errs.push(FieldError::forbidden(
                "spec.volumeAttributesClassName",
                "update is forbidden when the VolumeAttributesClass feature gate is disabled",
            ));
        }
        errs
    }

    /// `ValidatePersistentVolumeClaimSpec`, the rules users meet.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let modes: Vec<&str> = spec
            .get("accessModes")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if modes.is_empty() {
            errs.push(FieldError::required(
                "spec.accessModes",
                "at least 1 access mode is required",
            ));
        }
        if let Some(sel) = spec.get("selector").filter(|v| !v.is_null()) {
            errs.extend(crate::meta::validation::validate_label_selector(
                sel,
                "spec.selector",
            ));
        }
        for m in &modes {
            if !ACCESS_MODES.contains(m) {
                errs.push(FieldError::not_supported(
                    "spec.accessModes",
                    *m,
                    ACCESS_MODES,
                ));
            }
        }
        if modes.contains(&"ReadWriteOncePod") && modes.len() > 1 {
            errs.push(FieldError::forbidden(
                "spec.accessModes",
                "may not use ReadWriteOncePod with other access modes",
            ));
        }
        match spec.pointer("/resources/requests/storage") {
            None => errs.push(FieldError::required("spec.resources[storage]", "")),
            Some(q) => {
                let text = q
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| q.to_string());
                if super::pod_validation::quantity(&text).is_some_and(|n| n <= 0.0) {
                    errs.push(FieldError::invalid(
                        "spec.resources[storage]",
                        text,
                        "must be greater than zero",
                    ));
                }
            }
        }
        if let Some(m) = spec.get("volumeMode").and_then(Value::as_str) {
            if !matches!(m, "Block" | "Filesystem") {
                errs.push(FieldError::not_supported(
                    "spec.volumeMode",
                    m,
                    &["Block", "Filesystem"],
                ));
            }
        }
        errs
    }

    fn printer(&self) -> Printer {
        printers::PVC
    }
}

const BETA_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

fn drop_attributes_class(claim: &mut Value, old: Option<&Value>) {
    if old.is_some_and(|o| !is_unset(o.pointer("/spec/volumeAttributesClassName"))) {
        return;
    }
    if let Some(spec) = claim.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("volumeAttributesClassName");
    }
}

/// A claim spec's fields, null ones left out (Go's nil pointers).
fn spec_map(spec: &Value) -> serde_json::Map<String, Value> {
    spec.as_object()
        .map(|m| {
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// go-cmp's diff of two claim specs, approximated: the changed fields by their Go names,
/// old then new, as JSON.
fn spec_diff(old: &serde_json::Map<String, Value>, new: &serde_json::Map<String, Value>) -> String {
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    let go_name = |k: &str| {
        let mut c = k.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    let mut out = String::from("  core.PersistentVolumeClaimSpec{\n");
    for k in keys.into_iter().filter(|k| old.get(*k) != new.get(*k)) {
        for (sign, v) in [("-", old.get(k)), ("+", new.get(k))] {
            let shown = v.map(Value::to_string).unwrap_or_else(|| "nil".into());
            out.push_str(&format!("{sign} \t{}: {shown},\n", go_name(k)));
        }
    }
    out.push_str("  }\n");
    out
}

/// The resize states of `status.allocatedResourceStatuses`, sorted.
const RESIZE_STATUSES: &[&str] = &[
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
];

/// `validateBasicResource`: `Value()` (rounded up) not negative.
fn basic_resource(q: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(v) = Quantity::of(q).map(|q| q.whole()).filter(|v| *v < 0) {
        errs.push(FieldError::invalid(
            path,
            i64::try_from(v).unwrap_or(i64::MIN),
            "must be a valid resource quantity",
        ));
    }
}

/// `validatePersistentVolumeClaimResourceKey`: a qualified name, and of the native
/// resources only `storage`.
fn claim_resource_key(key: &str, path: &str, errs: &mut Vec<FieldError>) {
    let msgs = crate::meta::validation::is_qualified_name(key);
    if !msgs.is_empty() {
        for m in msgs {
            errs.push(FieldError::invalid(path, key, m));
        }
        return;
    }
    let native = !key.contains('/') || key.contains("kubernetes.io/");
    if native && key != "storage" {
        errs.push(FieldError::not_supported(path, key, &["storage"]));
    }
}
