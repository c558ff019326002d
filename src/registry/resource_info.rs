//! The types the built-in resource table (`registry::resources`, generated into
//! `generated::resources`) is made of: one [`ResourceInfo`] per served (group, version,
//! resource), and the verbs most of them have. Kept apart from `registry::resources` so that
//! the generated table can name them without an import cycle; `registry::resources`
//! re-exports them.

use crate::meta::validation::NameRule;

/// One served (group, version, resource) of a built-in kind.
#[derive(Debug)]
pub struct ResourceInfo {
    /// API group, `""` for the core group.
    pub group: &'static str,
    /// Version, e.g. `"v1"`, `"v2"`.
    pub version: &'static str,
    /// Plural resource name as it appears in URLs, e.g. `"deployments"`.
    pub resource: &'static str,
    /// Singular name (lower-cased kind), e.g. `"deployment"`.
    pub singular: &'static str,
    /// Kind, e.g. `"Deployment"`.
    pub kind: &'static str,
    /// List kind, e.g. `"DeploymentList"`.
    pub list_kind: &'static str,
    /// Namespace-scoped (true) or cluster-scoped (false).
    pub namespaced: bool,
    /// Verbs in the order kube-apiserver discovery lists them.
    pub verbs: &'static [&'static str],
    /// Short names, e.g. `["deploy"]`.
    pub short_names: &'static [&'static str],
    /// Categories, e.g. `["all"]`.
    pub categories: &'static [&'static str],
    /// The `status` subresource is served (spec/status split).
    pub has_status: bool,
    /// The `scale` subresource (autoscaling/v1 Scale) is served.
    pub scale: Option<ScaleInfo>,
    /// How `metadata.name` is validated (upstream's `ValidateXName`). Resources whose upstream
    /// name check is weaker than any rule here (core/v1 events and CSRs accept any name,
    /// IPAddresses must be a canonical IP) use the closest rule, `PathSegment`.
    pub name_rule: NameRule,
    /// `metadata.generation` is set to 1 on create and bumped on spec changes.
    pub generation: bool,
    /// OpenAPI definition name, e.g. `"io.k8s.api.apps.v1.Deployment"`.
    pub definition: &'static str,
    /// This version is its group's preferred version.
    pub preferred: bool,
}

/// Where the scale subresource reads and writes its numbers (dotted JSON paths).
///
/// For the apps/v1 kinds `label_selector_path` points at `.spec.selector`, a `LabelSelector`
/// object that must be rendered as a selector string for `Scale.status.selector`.
/// ReplicationControllers have `None`: their `.spec.selector` is a plain `map[string]string`
/// (rendered as `k=v,...`).
#[derive(Debug)]
pub struct ScaleInfo {
    pub spec_replicas_path: &'static str,
    pub status_replicas_path: &'static str,
    pub label_selector_path: Option<&'static str>,
}

/// The verbs of an ordinary persisted resource, in discovery order.
pub const STANDARD_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
