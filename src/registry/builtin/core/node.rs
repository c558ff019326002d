//! Nodes (core/v1): the kubelet registers a node with its status; `SetDefaults_NodeStatus`,
//! `ValidateNode` / `ValidateNodeUpdate` (taints, pod CIDRs and provider ID set once,
//! resource quantities), field selectors and the printer.

use serde_json::{json, Map, Value};

use super::limits::{quantity_value, resources};
use crate::meta::field_error::{go_quote, ErrorType, FieldError};
use crate::meta::validation::{is_valid_label_value, validate_label_name};
use crate::registry::builtin::checks::{list_of, parse_cidr_sloppy, str_of};
use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::{is_unset, Extra, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Nodes;

impl Strategy for Nodes {
    fn extras(&self) -> &'static [Extra] {
        &[Extra::NodeProxy]
    }

    fn keeps_status_on_create(&self) -> bool {
        true
    }

    /// `SetDefaults_NodeStatus`: allocatable is the capacity when it is not reported. Also
    /// the v1 conversion's pairing of `spec.podCIDR` and `spec.podCIDRs`: a podCIDR that is
    /// not the list's first entry replaces the list, and podCIDR is the list's first entry.
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            let single = spec
                .get("podCIDR")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let first = first_cidr(spec);
            if !single.is_empty() && first.as_deref() != Some(single.as_str()) {
                spec.insert("podCIDRs".into(), json!([single]));
            }
            if let Some(first) = first_cidr(spec) {
                spec.insert("podCIDR".into(), json!(first));
            }
        }
        let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) else {
            return;
        };
        if is_unset(status.get("allocatable")) && !is_unset(status.get("capacity")) {
            if let Some(capacity) = status.get("capacity").cloned() {
                status.insert("allocatable".into(), capacity);
            }
        }
    }

    /// The deprecated dynamic kubelet config is dropped (kube's `dropDisabledFields`).
    fn prepare_for_create(&self, obj: &mut Value) {
        drop_config(obj, true, true);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let unset = |p: &str| is_unset(old.pointer(p));
        drop_config(new, unset("/spec/configSource"), unset("/status/config"));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        taints(obj, &mut errs);
        node_resources(obj, &mut errs);
        let cidrs = pod_cidrs(obj);
        if !cidrs.is_empty() {
            for (i, c) in cidrs.iter().enumerate() {
                if parse_cidr_sloppy(c).is_none() {
                    errs.push(FieldError::invalid(
                        format!("spec.podCIDRs[{i}]"),
                        *c,
                        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                    ));
                }
            }
            if cidrs.len() > 1 {
                let parsed: Vec<_> = cidrs.iter().map(|c| parse_cidr_sloppy(c)).collect();
                if let Some(i) = parsed.iter().position(Option::is_none) {
                    errs.push(FieldError::internal(
                        "spec.podCIDRs",
                        format!(
                            "invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR[{i}]: <nil> (invalid CIDR address: {})",
                            cidrs[i]
                        ),
                    ));
                }
                let v4 = parsed
                    .iter()
                    .flatten()
                    .filter(|(ip, _)| ip.is_ipv4())
                    .count();
                let dual = parsed.iter().all(Option::is_some) && v4 > 0 && v4 < parsed.len();
                if !dual || cidrs.len() > 2 {
                    errs.push(FieldError::invalid(
                        "spec.podCIDRs",
                        Value::from(cidrs.clone()),
                        "may specify no more than one CIDR for each IP family",
                    ));
                }
            }
        }
        errs
    }

    /// kube's node strategy checks an update as a new node too (`ValidateNode`), then
    /// `ValidateNodeUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        errs.extend(node_update(new, old));
        errs
    }

    /// The node status strategy keeps the stored spec and drops a `status.config` the
    /// stored node does not use (the DynamicKubeletConfig fields are gone).
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value, _now: &str) {
        drop_config(new, false, is_unset(old.pointer("/status/config")));
    }

    /// kube's node status strategy checks `ValidateNodeUpdate` only.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        node_update(new, old)
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn printer(&self) -> Printer {
        printers::NODE
    }
}

/// `ValidateNodeUpdate` (beyond the metadata update): resources, unique addresses, and the
/// spec fields that are set once.
fn node_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    {
        node_resources(new, &mut errs);
        let addresses = list_of(new.get("status").unwrap_or(&Value::Null), "addresses");
        for (i, a) in addresses.iter().enumerate() {
            let key = |a: &Value| {
                (
                    str_of(a, "type").to_string(),
                    str_of(a, "address").to_string(),
                )
            };
            if addresses[..i].iter().any(|b| key(b) == key(a)) {
                let shown = format!(
                    "core.NodeAddress{{Type:{}, Address:{}}}",
                    go_quote(str_of(a, "type")),
                    go_quote(str_of(a, "address"))
                );
                errs.push(rendered(
                    ErrorType::Duplicate,
                    format!("status.addresses[{i}]"),
                    shown,
                ));
            }
        }
        let (n, o) = (pod_cidrs(new), pod_cidrs(old));
        let cidr_msg = "node updates may not change podCIDR except from \"\" to valid";
        if !o.is_empty() {
            if o.len() != n.len() {
                errs.push(FieldError::forbidden("spec.podCIDRs", cidr_msg));
            } else {
                for _ in o.iter().zip(&n).filter(|(a, b)| a != b) {
                    errs.push(FieldError::forbidden("spec.podCIDRs", cidr_msg));
                }
            }
        }
        let provider = |v: &Value| {
            v.pointer("/spec/providerID")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if !provider(old).is_empty() && provider(old) != provider(new) {
            errs.push(FieldError::forbidden(
                "spec.providerID",
                "node updates may not change providerID except from \"\" to valid",
            ));
        }
        taints(new, &mut errs);
        if new.pointer("/spec/externalID") != old.pointer("/spec/externalID") {
            errs.push(FieldError::forbidden(
                "spec.externalID",
                "may not be updated",
            ));
        }
    }
    errs
}

/// The first of a node spec's `podCIDRs`.
fn first_cidr(spec: &Map<String, Value>) -> Option<String> {
    spec.get("podCIDRs")
        .and_then(Value::as_array)
        .and_then(|l| l.first())
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn drop_config(obj: &mut Value, spec: bool, status: bool) {
    for (drop, part, field) in [(spec, "spec", "configSource"), (status, "status", "config")] {
        if let Some(m) = obj
            .get_mut(part)
            .and_then(Value::as_object_mut)
            .filter(|_| drop)
        {
            m.remove(field);
        }
    }
}

/// A field error whose value Go prints as a struct (`%#v`).
fn rendered(kind: ErrorType, field: String, detail: String) -> FieldError {
    FieldError {
        kind,
        field,
        bad_value: None,
        detail,
    }
}

fn pod_cidrs(obj: &Value) -> Vec<&str> {
    list_of(obj.get("spec").unwrap_or(&Value::Null), "podCIDRs")
        .iter()
        .map(|c| c.as_str().unwrap_or(""))
        .collect()
}

/// `ValidateNodeResources`: capacity and allocatable quantities.
fn node_resources(obj: &Value, errs: &mut Vec<FieldError>) {
    for part in ["capacity", "allocatable"] {
        let list = obj
            .pointer(&format!("/status/{part}"))
            .unwrap_or(&Value::Null);
        for (k, q) in resources(list) {
            quantity_value(k, &q, &format!("status.{part}.{k}"), errs);
        }
    }
}

/// `validateNodeTaints` of `spec.taints`, reported (as kube does) under `metadata.taints`.
fn taints(obj: &Value, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, t) in list_of(obj.get("spec").unwrap_or(&Value::Null), "taints")
        .iter()
        .enumerate()
    {
        let p = format!("metadata.taints[{i}]");
        let (key, value, effect) = (str_of(t, "key"), str_of(t, "value"), str_of(t, "effect"));
        errs.extend(validate_label_name(key, &format!("{p}.key")));
        let msgs = is_valid_label_value(value);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("{p}.value"),
                value,
                msgs.join(";"),
            ));
        }
        match effect {
            "" => errs.push(FieldError::required(format!("{p}.effect"), "")),
            "NoSchedule" | "PreferNoSchedule" | "NoExecute" => {}
            other => errs.push(FieldError::not_supported(
                format!("{p}.effect"),
                other,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            )),
        }
        if seen.contains(&(effect, key)) {
            let added = if is_unset(t.get("timeAdded")) {
                "(*v1.Time)(nil)"
            } else {
                "(*v1.Time)(0xc000000000)"
            };
            let shown = format!(
                "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:{added}}}: taints must be unique by key and effect pair",
                go_quote(key),
                go_quote(value),
                go_quote(effect)
            );
            errs.push(rendered(ErrorType::Duplicate, p, shown));
            continue;
        }
        seen.push((effect, key));
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("spec.unschedulable", "spec.unschedulable"),
    ],
    reject: not_supported,
    extract: node_fields,
};

fn node_fields(obj: &Value, put: Put<'_>) {
    put(
        "spec.unschedulable",
        fields::flag(obj, &["spec", "unschedulable"]),
    );
}
