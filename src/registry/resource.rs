//! One served resource as the rest of the server sees it: a [`Resource`] entry of the runtime
//! [`Registry`](super::catalog::Registry).
//!
//! An entry carries everything that is *data* about a (group, version, resource) — names,
//! scope, verbs, subresources, the name rule, the OpenAPI definition its objects are checked
//! against — plus its [`Strategy`], which holds everything that is *behaviour* (defaulting,
//! validation, delete rules, field selectors, the Table printer). Built-in entries are made from
//! the static table in [`super::resources`]; custom resources will be made from their
//! definitions. Entries are immutable and shared as `Arc<Resource>`.

use std::sync::Arc;

use super::printer_columns::PrinterColumns;
use super::resources::ResourceInfo;
use super::strategy::Strategy;
use crate::meta::status::GroupResource;
use crate::meta::validation::NameRule;

/// Where the scale subresource reads and writes its numbers (dotted JSON paths).
///
/// For the apps/v1 kinds `label_selector_path` points at `.spec.selector`, a `LabelSelector`
/// object that must be rendered as a selector string for `Scale.status.selector`.
/// ReplicationControllers have `None`: their `.spec.selector` is a plain `map[string]string`
/// (rendered as `k=v,...`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaleInfo {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    pub label_selector_path: Option<String>,
}

/// One served (group, version, resource).
pub struct Resource {
    /// API group, `""` for the core group.
    pub group: String,
    /// Version, e.g. `"v1"`, `"v2"`.
    pub version: String,
    /// Plural resource name as it appears in URLs, e.g. `"deployments"`.
    pub resource: String,
    /// Singular name (lower-cased kind), e.g. `"deployment"`.
    pub singular: String,
    /// Kind, e.g. `"Deployment"`.
    pub kind: String,
    /// List kind, e.g. `"DeploymentList"`.
    pub list_kind: String,
    /// Namespace-scoped (true) or cluster-scoped (false).
    pub namespaced: bool,
    /// Verbs in the order discovery lists them.
    pub verbs: Vec<String>,
    /// Short names, e.g. `["deploy"]`.
    pub short_names: Vec<String>,
    /// Categories, e.g. `["all"]`.
    pub categories: Vec<String>,
    /// The `status` subresource is served (spec/status split).
    pub has_status: bool,
    /// The `scale` subresource (autoscaling/v1 Scale) is served.
    pub scale: Option<ScaleInfo>,
    /// How `metadata.name` is validated.
    pub name_rule: NameRule,
    /// `metadata.generation` is set to 1 on create and bumped on spec changes.
    pub generation: bool,
    /// OpenAPI definition name of the kind, e.g. `"io.k8s.api.apps.v1.Deployment"`.
    pub definition: String,
    /// This version is its group's preferred version.
    pub preferred: bool,
    /// The group objects of this resource are stored under (its own, except events.k8s.io
    /// Events, which live with core Events as in kube).
    pub storage_group: String,
    /// The version objects of this resource are stored in. All versions of a resource share
    /// one key space; a version that is not the storage version (or of another storage
    /// group) converts its objects with its strategy's [`Strategy::to_storage`] and
    /// [`Strategy::from_storage`].
    pub storage_version: String,
    /// The OpenAPI definition of the storage version (what stored objects are encoded as).
    pub storage_definition: String,
    /// Objects can be read and written as Kubernetes protobuf, besides JSON and YAML.
    pub protobuf: bool,
    /// Discovery's `storageVersionHash` (of the storage group/version/kind).
    pub storage_version_hash: Option<String>,
    /// The OpenAPI v3 schema of the kind when it is not a built-in definition (custom
    /// resources: the definition's `openAPIV3Schema`).
    pub schema: Option<Arc<serde_json::Value>>,
    /// Where a run-time entry came from (a definition's uid and resourceVersion); `None` for
    /// built-ins. Entries with the same origin are the same.
    pub origin: Option<String>,
    /// Its definition is being deleted (a custom resource whose CRD is `Terminating`): objects
    /// are still served, but no new ones are created.
    pub terminating: bool,
    /// Table columns from a custom resource version's `additionalPrinterColumns`; `None`:
    /// the strategy's printer.
    pub printer_columns: Option<Arc<PrinterColumns>>,
    /// The `Warning` every request to this version gets (a deprecated built-in kind, a custom
    /// resource version marked `deprecated`).
    pub deprecation_warning: Option<String>,
    /// Per-resource behaviour.
    pub strategy: Arc<dyn Strategy>,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Resource({}/{}/{})",
            self.group, self.version, self.resource
        )
    }
}

/// kube-apiserver's `storageVersionHash`: base64 of the first 8 bytes of
/// sha256("<group>/<version>/<kind>") of the storage version.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    use base64::Engine;
    let d = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(&d.as_ref()[..8])
}

impl Resource {
    /// A built-in entry from its static row and strategy.
    pub fn builtin(info: &ResourceInfo, strategy: Arc<dyn Strategy>) -> Resource {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Resource {
            group: info.group.into(),
            version: info.version.into(),
            resource: info.resource.into(),
            singular: info.singular.into(),
            kind: info.kind.into(),
            list_kind: info.list_kind.into(),
            namespaced: info.namespaced,
            verbs: owned(info.verbs),
            short_names: owned(info.short_names),
            categories: owned(info.categories),
            has_status: info.has_status,
            scale: info.scale.as_ref().map(|s| ScaleInfo {
                spec_replicas_path: s.spec_replicas_path.into(),
                status_replicas_path: s.status_replicas_path.into(),
                label_selector_path: s.label_selector_path.map(str::to_string),
            }),
            name_rule: info.name_rule,
            generation: info.generation,
            definition: info.definition.into(),
            preferred: info.preferred,
            storage_group: super::resources::storage_gvk(info).0.into(),
            storage_version: super::resources::storage_gvk(info).1.into(),
            storage_definition: super::resources::storage_definition(info).into(),
            protobuf: true,
            storage_version_hash: Some({
                let (g, v, k) = super::resources::storage_gvk(info);
                storage_version_hash(g, v, k)
            }),
            schema: None,
            origin: None,
            terminating: false,
            printer_columns: None,
            deprecation_warning: strategy
                .deprecation()
                .map(|d| d.warning(&api_version(info.group, info.version), info.kind)),
            strategy,
        }
    }

    /// The `apiVersion` of this resource's objects: `v1` for core, `group/version` otherwise.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The `apiVersion` of this resource's objects as stored.
    pub fn storage_api_version(&self) -> String {
        if self.storage_group.is_empty() {
            self.storage_version.clone()
        } else {
            format!("{}/{}", self.storage_group, self.storage_version)
        }
    }

    /// The qualified resource, for messages (`deployments.apps`).
    pub fn gr(&self) -> GroupResource<'_> {
        GroupResource {
            group: &self.group,
            resource: &self.resource,
        }
    }

    /// Does one of its names (plural, singular, short name) equal `name` (lower case)?
    pub fn answers_to(&self, name: &str) -> bool {
        self.resource == name || self.singular == name || self.short_names.iter().any(|s| s == name)
    }

    /// Objects of this version are converted to and from another storage version.
    pub fn converts(&self) -> bool {
        self.storage_version != self.version || self.storage_group != self.group
    }

    /// Serves this verb.
    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}
