//! Custom resources: the registry entries a CustomResourceDefinition stands for, one per served
//! version, and their (generic) strategy.
//!
//! A definition is served once it is `Established` (the establishing controller sets that
//! after accepting its names). Its versions are listed in kube's version priority (GA before
//! beta before alpha, higher numbers first; others after, by name), the first of them is the
//! preferred version, and every version shares one key space (`/<group>/<plural>/`): objects
//! are stored as they were written and read through any served version (conversion strategy
//! `None`: only `apiVersion` changes).
//!
//! Objects are checked against their version's structural schema (pruned on decode,
//! defaulted on decode and when read from storage, validated with ratcheting on update):
//! [`node`] compiles a schema once per definition revision, [`prune`], [`default`] and
//! [`validate`] walk objects with it.
//!
//! Does not know: how definitions are found (the serving loop in `controllers::crd` follows
//! them from the watch cache). CEL rules (`x-kubernetes-validations`) are [`rules`].

pub mod checks;
pub mod conversion;
pub mod default;
pub mod embedded;
pub mod formats;
pub mod listtype;
pub mod node;
pub mod prune;
pub mod rule;
pub mod rules;
pub mod validate;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::meta::field_error::FieldError;
use crate::registry::builtin::checks::str_at as text;

use super::printer_columns::PrinterColumns;
use super::resource::{storage_version_hash, Resource, ScaleInfo};
use super::resources::STANDARD_VERBS;
use super::strategy::{ConversionError, Strategy};
use crate::meta::validation::NameRule;
use node::Node;

/// The strategy of every custom resource: kube's generic rules (the status subresource, when
/// the version has one, is handled by the generic store from the entry's `has_status`) plus
/// the structural schemas of the definition's versions.
pub struct CustomResources {
    /// This entry's version.
    version: String,
    /// The compiled schema of every version of the definition (served or not: stored objects
    /// may be of any), shared by the definition's entries.
    schemas: Arc<BTreeMap<String, Node>>,
    /// This version's scale subresource, whose paths writes are checked at.
    scale: Option<ScaleInfo>,
    /// This version's `selectableFields`.
    field_paths: Vec<(String, super::jsonpath::JsonPath)>,
    /// `<group>/<version>` of this entry and of the storage version.
    api_version: String,
    storage_api_version: String,
    /// `spec.conversion`, shared by the definition's entries.
    conversion: Arc<conversion::Conversion>,
}

/// An empty schema: what kube uses for a version without one (everything but
/// apiVersion/kind/metadata is pruned, nothing is validated).
static EMPTY: std::sync::LazyLock<Node> = std::sync::LazyLock::new(Node::default);

impl CustomResources {
    fn schema_of(&self, version: &str) -> &Node {
        self.schemas.get(version).unwrap_or(&EMPTY)
    }

    /// This version's schema.
    fn schema(&self) -> &Node {
        self.schema_of(&self.version)
    }

    /// Prunes and drops non-nullable nulls with `schema`; returns the pruned paths.
    fn coerce(obj: &mut Value, schema: &Node) -> Vec<String> {
        let paths = prune::prune(obj, schema);
        prune::drop_nulls(obj, Some(schema));
        paths
    }

    /// The version a stored object was written in (this entry's when it does not say).
    fn stored_version<'a>(&'a self, stored: &'a Value) -> &'a str {
        stored
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|a| a.rsplit_once('/'))
            .map(|(_, v)| v)
            .unwrap_or(&self.version)
    }

    /// Converts objects (of any version) to `desired`.
    fn convert(&self, objs: &mut [Value], desired: &str) -> Result<(), ConversionError> {
        match &*self.conversion {
            conversion::Conversion::None => {
                for o in objs {
                    o["apiVersion"] = json!(desired);
                }
                Ok(())
            }
            conversion::Conversion::Webhook(w) => w.convert(objs, desired),
        }
    }

    /// The schema objects are validated with: this version's (kube validates the request's
    /// version); with a conversion webhook, objects reach validation in the storage version
    /// and are checked with that version's schema.
    fn validation_schema(&self, obj: &Value) -> &Node {
        match &*self.conversion {
            conversion::Conversion::None => self.schema(),
            conversion::Conversion::Webhook(_) => self.schema_of(self.stored_version(obj)),
        }
    }

    /// The `x-kubernetes-validations` rules, unless an earlier error blocks them (kube's
    /// `hasBlockingErr`).
    fn run_rules(errs: &mut Vec<FieldError>, schema: &Node, obj: &Value, old: Option<&Value>) {
        if !schema.has_rules() {
            return;
        }
        match rules::blocked(errs) {
            Some(e) => errs.push(e),
            None => errs.extend(rules::validate(schema, obj, old)),
        }
    }

    /// What kube's storage decoder does to a stored object: pruning and defaulting with the
    /// schema of the object's own version.
    fn decoded(&self, stored: &Value) -> Value {
        let schema = self.schema_of(self.stored_version(stored));
        let mut out = stored.clone();
        Self::coerce(&mut out, schema);
        default::apply(&mut out, schema);
        out
    }
}

impl Strategy for CustomResources {
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn core_object_meta(&self) -> bool {
        false
    }

    fn strategic_merge_patch(&self) -> bool {
        false
    }

    fn field_paths(&self) -> &[(String, super::jsonpath::JsonPath)] {
        &self.field_paths
    }

    /// This version's schema: the one kube builds the version's apply type converter from.
    fn structural_schema(&self) -> Option<&Node> {
        Some(self.schema())
    }

    fn version_schema(&self, version: &str) -> Option<&Node> {
        self.schemas.get(version)
    }

    fn convert_to(&self, obj: &mut Value, api_version: &str) -> Result<(), ConversionError> {
        self.convert(std::slice::from_mut(obj), api_version)?;
        let version = self.stored_version(obj).to_string();
        Self::coerce(obj, self.schema_of(&version));
        Ok(())
    }

    fn default(&self, obj: &mut Value) {
        default::apply(obj, self.schema());
    }

    fn prune(&self, obj: &mut Value) -> Option<Vec<String>> {
        Some(Self::coerce(obj, self.schema()))
    }

    /// Objects are written in the storage version: converted (conversion `None`: only
    /// `apiVersion` changes), then pruned with the storage version's schema, as kube's
    /// schema-coercing converter does.
    fn to_storage(&self, obj: &mut Value) -> Result<(), ConversionError> {
        self.convert(std::slice::from_mut(obj), &self.storage_api_version)?;
        let storage = self.stored_version(obj).to_string();
        Self::coerce(obj, self.schema_of(&storage));
        Ok(())
    }

    /// Read: a stored object of any version is converted to this one.
    fn from_storage(&self, obj: &mut Value) -> Result<(), ConversionError> {
        self.from_storage_all(std::slice::from_mut(obj))
    }

    /// One review for all objects of a list.
    fn from_storage_all(&self, objs: &mut [Value]) -> Result<(), ConversionError> {
        self.convert(objs, &self.api_version)?;
        for o in objs.iter_mut() {
            Self::coerce(o, self.schema());
        }
        Ok(())
    }

    fn decodes_stored(&self) -> bool {
        true
    }

    fn decode_stored(&self, stored: &Value) -> Option<Value> {
        let out = self.decoded(stored);
        (out != *stored).then_some(out)
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let schema = self.validation_schema(obj);
        let mut errs = validate::validate(schema, obj);
        errs.extend(embedded::validate(schema, obj));
        errs.extend(listtype::validate(schema, obj));
        errs.extend(checks::scale(obj, self.scale.as_ref()));
        Self::run_rules(&mut errs, schema, obj, None);
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let schema = self.validation_schema(new);
        // The old object as kube reads it from storage (pruned and defaulted).
        let old = self.decoded(old);
        let mut errs = validate::validate_update(schema, new, &old);
        // Embedded objects are checked on update as on create (kube).
        errs.extend(embedded::validate(schema, new));
        // List-type invariants ratchet as a whole: checked when the old object kept them.
        if listtype::validate(schema, &old).is_empty() {
            errs.extend(listtype::validate(schema, new));
        }
        errs.extend(checks::scale(new, self.scale.as_ref()));
        Self::run_rules(&mut errs, schema, new, Some(&old));
        errs
    }

    /// kube validates a status write against the schema (with ratcheting, so the spec
    /// carried over from the stored object never fails it).
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_update(new, old)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        checks::finalizer_warnings(obj, None)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        checks::finalizer_warnings(new, Some(old))
    }
}

/// Whether a definition's `Established` condition is `True`.
pub fn established(crd: &Value) -> bool {
    condition_true(crd, "Established")
}

/// Whether a definition's condition `ty` is `True`.
pub fn condition_true(crd: &Value, ty: &str) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == ty && c["status"] == "True")
}

/// kube's `version.CompareKubeAwareVersionStrings`: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 >
/// anything else (which sorts by name).
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u32, u32, u32)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u32 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((2, major, 0));
        }
        for (class, word) in [(1, "beta"), (0, "alpha")] {
            if let Some(n) = tail.strip_prefix(word) {
                if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) {
                    return Some((class, major, n.parse().ok()?));
                }
            }
        }
        None
    }
    match (parse(a), parse(b)) {
        // higher class, then higher major, then higher minor come first
        (Some(x), Some(y)) => y.0.cmp(&x.0).then(y.1.cmp(&x.1)).then(y.2.cmp(&x.2)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

fn strings(v: &Value, pointer: &str) -> Vec<String> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The warning for requests to version `v` of a definition, when it is `deprecated`: its
/// `deprecationWarning`, or kube's default naming the newest served version that is not
/// deprecated and newer than it.
fn deprecation_warning(spec: &Value, v: &Value) -> Option<String> {
    if v["deprecated"] != json!(true) {
        return None;
    }
    if let Some(w) = v.get("deprecationWarning").and_then(Value::as_str) {
        return Some(w.to_string());
    }
    let (group, kind, name) = (
        text(spec, "/group"),
        text(spec, "/names/kind"),
        text(v, "/name"),
    );
    let mut msg = format!("{group}/{name} {kind} is deprecated");
    let newer = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["served"] == json!(true) && o["deprecated"] != json!(true))
        .map(|o| text(o, "/name"))
        .filter(|o| compare_versions(name, o) == Ordering::Greater)
        .min_by(|a, b| compare_versions(a, b));
    if let Some(n) = newer {
        msg.push_str(&format!("; use {group}/{n} {kind}"));
    }
    Some(msg)
}

/// The OpenAPI definition name kube gives a custom kind: the group reversed, then version and
/// kind (`stable.example.com`, `v1`, `CronTab` → `com.example.stable.v1.CronTab`).
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The entries an established definition stands for (none otherwise), in version priority.
pub fn resources_of(crd: &Value) -> Vec<Resource> {
    if !established(crd) {
        return Vec::new();
    }
    let terminating = condition_true(crd, "Terminating");
    let spec = &crd["spec"];
    let group = text(spec, "/group");
    let names = &spec["names"];
    let kind = text(names, "/kind");
    let mut versions: Vec<&Value> = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"] == json!(true))
        .collect();
    versions.sort_by(|a, b| compare_versions(text(a, "/name"), text(b, "/name")));
    let storage = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["storage"] == json!(true))
        .map(|v| text(v, "/name").to_string())
        .unwrap_or_default();
    let schemas: Arc<BTreeMap<String, Node>> = Arc::new(
        spec["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| {
                let schema = v.pointer("/schema/openAPIV3Schema")?;
                Some((text(v, "/name").to_string(), node::compile(schema)))
            })
            .collect(),
    );
    let conversion = Arc::new(conversion::Conversion::of(spec));
    let origin = format!(
        "{}/{}",
        text(crd, "/metadata/uid"),
        text(crd, "/metadata/resourceVersion")
    );
    versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let version = text(v, "/name").to_string();
            let scale = v.pointer("/subresources/scale").map(|s| ScaleInfo {
                spec_replicas_path: text(s, "/specReplicasPath").to_string(),
                status_replicas_path: text(s, "/statusReplicasPath").to_string(),
                label_selector_path: s
                    .get("labelSelectorPath")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
            Resource {
                group: group.to_string(),
                resource: text(names, "/plural").to_string(),
                singular: text(names, "/singular").to_string(),
                kind: kind.to_string(),
                list_kind: text(names, "/listKind").to_string(),
                namespaced: text(spec, "/scope") == "Namespaced",
                verbs: STANDARD_VERBS.iter().map(|s| s.to_string()).collect(),
                short_names: strings(names, "/shortNames"),
                categories: strings(names, "/categories"),
                has_status: v.pointer("/subresources/status").is_some(),
                scale: scale.clone(),
                name_rule: NameRule::Dns1123Subdomain,
                generation: true,
                definition: definition_name(group, &version, kind),
                storage_definition: definition_name(group, &storage, kind),
                preferred: i == 0,
                storage_group: group.to_string(),
                storage_version: storage.clone(),
                protobuf: false,
                storage_version_hash: Some(storage_version_hash(group, &storage, kind)),
                schema: v.pointer("/schema/openAPIV3Schema").cloned().map(Arc::new),
                origin: Some(origin.clone()),
                terminating,
                printer_columns: Some(Arc::new(PrinterColumns::of_version(v))),
                deprecation_warning: deprecation_warning(spec, v),
                strategy: Arc::new(CustomResources {
                    version: version.clone(),
                    schemas: schemas.clone(),
                    scale,
                    field_paths: super::field_selectors::custom_paths(v),
                    api_version: format!("{group}/{version}"),
                    storage_api_version: format!("{group}/{storage}"),
                    conversion: conversion.clone(),
                }),
                version,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_priority() {
        let mut vs = vec![
            "v1alpha1", "foo", "v1", "v2beta1", "v1beta2", "v2", "v1beta1", "bar",
        ];
        vs.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            vs,
            ["v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "bar", "foo"]
        );
    }

    #[test]
    fn entries_of_an_established_definition() {
        let mut crd = json!({"metadata": {"name": "crontabs.stable.example.com", "uid": "u", "resourceVersion": "7"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "listKind": "CronTabList", "shortNames": ["ct"]},
                "versions": [
                    {"name": "v1beta1", "served": true, "storage": false},
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
                    {"name": "v0", "served": false, "storage": false}]}});
        assert!(resources_of(&crd).is_empty(), "not established yet");
        crd["status"] = json!({"conditions": [{"type": "Established", "status": "True"}]});
        let rs = resources_of(&crd);
        let versions: Vec<&str> = rs.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(versions, ["v1", "v1beta1"]);
        assert!(rs[0].preferred && !rs[1].preferred);
        assert!(rs[0].has_status && !rs[1].has_status);
        assert_eq!(rs[0].definition, "com.example.stable.v1.CronTab");
        assert_eq!(rs[1].storage_version, "v1");
        assert_eq!(rs[0].short_names, ["ct"]);
    }
}
