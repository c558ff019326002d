//! The static table of every GA built-in resource kube-apiserver v1.33 persists.
//!
//! This module owns the *facts* about built-in resources: group/version/plural, kind, scope,
//! discovery verbs, short names, categories, which subresources (status, scale) exist, how
//! `metadata.name` is validated and whether `metadata.generation` is maintained. The table was
//! derived once from upstream's OpenAPI document (paths, scopes, `x-kubernetes-group-version-kind`)
//! plus upstream's registry strategies and validation packages; it is plain data here.
//!
//! It deliberately knows nothing about storage, HTTP, validation logic, defaulting or
//! custom resources (CRDs are served dynamically elsewhere). Non-persisted resources (bindings,
//! componentstatuses, token/access reviews, evictions, ...) and connect-style subresources
//! (exec, log, proxy, ...) are not listed.

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

/// Verbs of the `status` and `scale` subresources, in discovery order.
pub const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

/// Every built-in resource, grouped in kube-apiserver's discovery order (core first, then
/// groups as `/apis` lists them; inside a group the preferred version first; inside a version
/// resources sorted by name).
pub static RESOURCES: &[ResourceInfo] = &[
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "configmaps",
        singular: "configmap",
        kind: "ConfigMap",
        list_kind: "ConfigMapList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["cm"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.ConfigMap",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "endpoints",
        singular: "endpoints",
        kind: "Endpoints",
        list_kind: "EndpointsList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["ep"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.Endpoints",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "events",
        singular: "event",
        kind: "Event",
        list_kind: "EventList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["ev"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::PathSegment,
        generation: false,
        definition: "io.k8s.api.core.v1.Event",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "limitranges",
        singular: "limitrange",
        kind: "LimitRange",
        list_kind: "LimitRangeList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["limits"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.LimitRange",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        list_kind: "NamespaceList",
        namespaced: false,
        verbs: &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
        short_names: &["ns"],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Label,
        generation: false,
        definition: "io.k8s.api.core.v1.Namespace",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "nodes",
        singular: "node",
        kind: "Node",
        list_kind: "NodeList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &["no"],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.Node",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "persistentvolumeclaims",
        singular: "persistentvolumeclaim",
        kind: "PersistentVolumeClaim",
        list_kind: "PersistentVolumeClaimList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["pvc"],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.PersistentVolumeClaim",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "persistentvolumes",
        singular: "persistentvolume",
        kind: "PersistentVolume",
        list_kind: "PersistentVolumeList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &["pv"],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.PersistentVolume",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "pods",
        singular: "pod",
        kind: "Pod",
        list_kind: "PodList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["po"],
        categories: &["all"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.core.v1.Pod",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "podtemplates",
        singular: "podtemplate",
        kind: "PodTemplate",
        list_kind: "PodTemplateList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.core.v1.PodTemplate",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "replicationcontrollers",
        singular: "replicationcontroller",
        kind: "ReplicationController",
        list_kind: "ReplicationControllerList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["rc"],
        categories: &["all"],
        has_status: true,
        scale: Some(ScaleInfo {
            spec_replicas_path: ".spec.replicas",
            status_replicas_path: ".status.replicas",
            label_selector_path: None,
        }),
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.core.v1.ReplicationController",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "resourcequotas",
        singular: "resourcequota",
        kind: "ResourceQuota",
        list_kind: "ResourceQuotaList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["quota"],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.ResourceQuota",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "secrets",
        singular: "secret",
        kind: "Secret",
        list_kind: "SecretList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.Secret",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "serviceaccounts",
        singular: "serviceaccount",
        kind: "ServiceAccount",
        list_kind: "ServiceAccountList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["sa"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.core.v1.ServiceAccount",
        preferred: true,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        resource: "services",
        singular: "service",
        kind: "Service",
        list_kind: "ServiceList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["svc"],
        categories: &["all"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1035Label,
        generation: false,
        definition: "io.k8s.api.core.v1.Service",
        preferred: true,
    },
    ResourceInfo {
        group: "apps",
        version: "v1",
        resource: "controllerrevisions",
        singular: "controllerrevision",
        kind: "ControllerRevision",
        list_kind: "ControllerRevisionList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.apps.v1.ControllerRevision",
        preferred: true,
    },
    ResourceInfo {
        group: "apps",
        version: "v1",
        resource: "daemonsets",
        singular: "daemonset",
        kind: "DaemonSet",
        list_kind: "DaemonSetList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["ds"],
        categories: &["all"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.apps.v1.DaemonSet",
        preferred: true,
    },
    ResourceInfo {
        group: "apps",
        version: "v1",
        resource: "deployments",
        singular: "deployment",
        kind: "Deployment",
        list_kind: "DeploymentList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["deploy"],
        categories: &["all"],
        has_status: true,
        scale: Some(ScaleInfo {
            spec_replicas_path: ".spec.replicas",
            status_replicas_path: ".status.replicas",
            label_selector_path: Some(".spec.selector"),
        }),
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.apps.v1.Deployment",
        preferred: true,
    },
    ResourceInfo {
        group: "apps",
        version: "v1",
        resource: "replicasets",
        singular: "replicaset",
        kind: "ReplicaSet",
        list_kind: "ReplicaSetList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["rs"],
        categories: &["all"],
        has_status: true,
        scale: Some(ScaleInfo {
            spec_replicas_path: ".spec.replicas",
            status_replicas_path: ".status.replicas",
            label_selector_path: Some(".spec.selector"),
        }),
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.apps.v1.ReplicaSet",
        preferred: true,
    },
    ResourceInfo {
        group: "apps",
        version: "v1",
        resource: "statefulsets",
        singular: "statefulset",
        kind: "StatefulSet",
        list_kind: "StatefulSetList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["sts"],
        categories: &["all"],
        has_status: true,
        scale: Some(ScaleInfo {
            spec_replicas_path: ".spec.replicas",
            status_replicas_path: ".status.replicas",
            label_selector_path: Some(".spec.selector"),
        }),
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.apps.v1.StatefulSet",
        preferred: true,
    },
    ResourceInfo {
        group: "events.k8s.io",
        version: "v1",
        resource: "events",
        singular: "event",
        kind: "Event",
        list_kind: "EventList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["ev"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.events.v1.Event",
        preferred: true,
    },
    ResourceInfo {
        group: "autoscaling",
        version: "v2",
        resource: "horizontalpodautoscalers",
        singular: "horizontalpodautoscaler",
        kind: "HorizontalPodAutoscaler",
        list_kind: "HorizontalPodAutoscalerList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["hpa"],
        categories: &["all"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
        preferred: true,
    },
    ResourceInfo {
        group: "autoscaling",
        version: "v1",
        resource: "horizontalpodautoscalers",
        singular: "horizontalpodautoscaler",
        kind: "HorizontalPodAutoscaler",
        list_kind: "HorizontalPodAutoscalerList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["hpa"],
        categories: &["all"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler",
        preferred: false,
    },
    ResourceInfo {
        group: "batch",
        version: "v1",
        resource: "cronjobs",
        singular: "cronjob",
        kind: "CronJob",
        list_kind: "CronJobList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["cj"],
        categories: &["all"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.batch.v1.CronJob",
        preferred: true,
    },
    ResourceInfo {
        group: "batch",
        version: "v1",
        resource: "jobs",
        singular: "job",
        kind: "Job",
        list_kind: "JobList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &["all"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.batch.v1.Job",
        preferred: true,
    },
    ResourceInfo {
        group: "certificates.k8s.io",
        version: "v1",
        resource: "certificatesigningrequests",
        singular: "certificatesigningrequest",
        kind: "CertificateSigningRequest",
        list_kind: "CertificateSigningRequestList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &["csr"],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::PathSegment,
        generation: false,
        definition: "io.k8s.api.certificates.v1.CertificateSigningRequest",
        preferred: true,
    },
    ResourceInfo {
        group: "networking.k8s.io",
        version: "v1",
        resource: "ingressclasses",
        singular: "ingressclass",
        kind: "IngressClass",
        list_kind: "IngressClassList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.networking.v1.IngressClass",
        preferred: true,
    },
    ResourceInfo {
        group: "networking.k8s.io",
        version: "v1",
        resource: "ingresses",
        singular: "ingress",
        kind: "Ingress",
        list_kind: "IngressList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["ing"],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.networking.v1.Ingress",
        preferred: true,
    },
    ResourceInfo {
        group: "networking.k8s.io",
        version: "v1",
        resource: "ipaddresses",
        singular: "ipaddress",
        kind: "IPAddress",
        list_kind: "IPAddressList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &["ip"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::PathSegment,
        generation: false,
        definition: "io.k8s.api.networking.v1.IPAddress",
        preferred: true,
    },
    ResourceInfo {
        group: "networking.k8s.io",
        version: "v1",
        resource: "networkpolicies",
        singular: "networkpolicy",
        kind: "NetworkPolicy",
        list_kind: "NetworkPolicyList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["netpol"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.networking.v1.NetworkPolicy",
        preferred: true,
    },
    ResourceInfo {
        group: "networking.k8s.io",
        version: "v1",
        resource: "servicecidrs",
        singular: "servicecidr",
        kind: "ServiceCIDR",
        list_kind: "ServiceCIDRList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.networking.v1.ServiceCIDR",
        preferred: true,
    },
    ResourceInfo {
        group: "policy",
        version: "v1",
        resource: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        kind: "PodDisruptionBudget",
        list_kind: "PodDisruptionBudgetList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &["pdb"],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.policy.v1.PodDisruptionBudget",
        preferred: true,
    },
    ResourceInfo {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "clusterrolebindings",
        singular: "clusterrolebinding",
        kind: "ClusterRoleBinding",
        list_kind: "ClusterRoleBindingList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::PathSegment,
        generation: false,
        definition: "io.k8s.api.rbac.v1.ClusterRoleBinding",
        preferred: true,
    },
    ResourceInfo {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "clusterroles",
        singular: "clusterrole",
        kind: "ClusterRole",
        list_kind: "ClusterRoleList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::PathSegment,
        generation: false,
        definition: "io.k8s.api.rbac.v1.ClusterRole",
        preferred: true,
    },
    ResourceInfo {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "rolebindings",
        singular: "rolebinding",
        kind: "RoleBinding",
        list_kind: "RoleBindingList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::PathSegment,
        generation: false,
        definition: "io.k8s.api.rbac.v1.RoleBinding",
        preferred: true,
    },
    ResourceInfo {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "roles",
        singular: "role",
        kind: "Role",
        list_kind: "RoleList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::PathSegment,
        generation: false,
        definition: "io.k8s.api.rbac.v1.Role",
        preferred: true,
    },
    ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        resource: "csidrivers",
        singular: "csidriver",
        kind: "CSIDriver",
        list_kind: "CSIDriverList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.storage.v1.CSIDriver",
        preferred: true,
    },
    ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        resource: "csinodes",
        singular: "csinode",
        kind: "CSINode",
        list_kind: "CSINodeList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.storage.v1.CSINode",
        preferred: true,
    },
    ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        resource: "csistoragecapacities",
        singular: "csistoragecapacity",
        kind: "CSIStorageCapacity",
        list_kind: "CSIStorageCapacityList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.storage.v1.CSIStorageCapacity",
        preferred: true,
    },
    ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        resource: "storageclasses",
        singular: "storageclass",
        kind: "StorageClass",
        list_kind: "StorageClassList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &["sc"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.storage.v1.StorageClass",
        preferred: true,
    },
    ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        resource: "volumeattachments",
        singular: "volumeattachment",
        kind: "VolumeAttachment",
        list_kind: "VolumeAttachmentList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.storage.v1.VolumeAttachment",
        preferred: true,
    },
    ResourceInfo {
        group: "admissionregistration.k8s.io",
        version: "v1",
        resource: "mutatingwebhookconfigurations",
        singular: "mutatingwebhookconfiguration",
        kind: "MutatingWebhookConfiguration",
        list_kind: "MutatingWebhookConfigurationList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration",
        preferred: true,
    },
    ResourceInfo {
        group: "admissionregistration.k8s.io",
        version: "v1",
        resource: "validatingadmissionpolicies",
        singular: "validatingadmissionpolicy",
        kind: "ValidatingAdmissionPolicy",
        list_kind: "ValidatingAdmissionPolicyList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy",
        preferred: true,
    },
    ResourceInfo {
        group: "admissionregistration.k8s.io",
        version: "v1",
        resource: "validatingadmissionpolicybindings",
        singular: "validatingadmissionpolicybinding",
        kind: "ValidatingAdmissionPolicyBinding",
        list_kind: "ValidatingAdmissionPolicyBindingList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding",
        preferred: true,
    },
    ResourceInfo {
        group: "admissionregistration.k8s.io",
        version: "v1",
        resource: "validatingwebhookconfigurations",
        singular: "validatingwebhookconfiguration",
        kind: "ValidatingWebhookConfiguration",
        list_kind: "ValidatingWebhookConfigurationList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration",
        preferred: true,
    },
    ResourceInfo {
        group: "apiextensions.k8s.io",
        version: "v1",
        resource: "customresourcedefinitions",
        singular: "customresourcedefinition",
        kind: "CustomResourceDefinition",
        list_kind: "CustomResourceDefinitionList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition:
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        preferred: true,
    },
    ResourceInfo {
        group: "scheduling.k8s.io",
        version: "v1",
        resource: "priorityclasses",
        singular: "priorityclass",
        kind: "PriorityClass",
        list_kind: "PriorityClassList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &["pc"],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.scheduling.v1.PriorityClass",
        preferred: true,
    },
    ResourceInfo {
        group: "coordination.k8s.io",
        version: "v1",
        resource: "leases",
        singular: "lease",
        kind: "Lease",
        list_kind: "LeaseList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.coordination.v1.Lease",
        preferred: true,
    },
    ResourceInfo {
        group: "node.k8s.io",
        version: "v1",
        resource: "runtimeclasses",
        singular: "runtimeclass",
        kind: "RuntimeClass",
        list_kind: "RuntimeClassList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: false,
        definition: "io.k8s.api.node.v1.RuntimeClass",
        preferred: true,
    },
    ResourceInfo {
        group: "discovery.k8s.io",
        version: "v1",
        resource: "endpointslices",
        singular: "endpointslice",
        kind: "EndpointSlice",
        list_kind: "EndpointSliceList",
        namespaced: true,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: false,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.discovery.v1.EndpointSlice",
        preferred: true,
    },
    ResourceInfo {
        group: "flowcontrol.apiserver.k8s.io",
        version: "v1",
        resource: "flowschemas",
        singular: "flowschema",
        kind: "FlowSchema",
        list_kind: "FlowSchemaList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.flowcontrol.v1.FlowSchema",
        preferred: true,
    },
    ResourceInfo {
        group: "flowcontrol.apiserver.k8s.io",
        version: "v1",
        resource: "prioritylevelconfigurations",
        singular: "prioritylevelconfiguration",
        kind: "PriorityLevelConfiguration",
        list_kind: "PriorityLevelConfigurationList",
        namespaced: false,
        verbs: STANDARD_VERBS,
        short_names: &[],
        categories: &[],
        has_status: true,
        scale: None,
        name_rule: NameRule::Dns1123Subdomain,
        generation: true,
        definition: "io.k8s.api.flowcontrol.v1.PriorityLevelConfiguration",
        preferred: true,
    },
];

/// The group, version and kind a built-in resource's objects are stored as: its own, except
/// that every HPA version is stored as autoscaling/v2 and events.k8s.io Events as core v1
/// Events.
pub fn storage_gvk(r: &ResourceInfo) -> (&'static str, &'static str, &'static str) {
    match (r.group, r.resource) {
        ("autoscaling", "horizontalpodautoscalers") => ("autoscaling", "v2", r.kind),
        ("events.k8s.io", "events") => ("", "v1", r.kind),
        _ => (r.group, r.version, r.kind),
    }
}

/// The OpenAPI definition a built-in resource's objects are stored as: that of the row of its
/// storage group, version and kind.
pub fn storage_definition(r: &ResourceInfo) -> &'static str {
    let (group, version, kind) = storage_gvk(r);
    RESOURCES
        .iter()
        .find(|s| s.group == group && s.version == version && s.kind == kind)
        .map_or(r.definition, |s| s.definition)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(group: &str, version: &str, resource: &str) -> Option<&'static ResourceInfo> {
        RESOURCES
            .iter()
            .find(|r| r.group == group && r.version == version && r.resource == resource)
    }

    fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
        let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
        for r in RESOURCES.iter().filter(|r| !r.group.is_empty()) {
            match out.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, vs)) if !vs.contains(&r.version) => vs.push(r.version),
                Some(_) => {}
                None => out.push((r.group, vec![r.version])),
            }
        }
        out
    }

    #[test]
    fn table_is_consistent() {
        let mut seen = std::collections::BTreeSet::new();
        for r in RESOURCES {
            assert!(
                seen.insert((r.group, r.version, r.resource)),
                "dup {}",
                r.resource
            );
            assert_eq!(r.singular, r.kind.to_ascii_lowercase());
            assert!(!r.verbs.is_empty());
        }
    }

    /// Oracle: upstream's OpenAPI document. Every namespaced/cluster collection path with a
    /// create operation in the served group versions must have an entry with the right scope,
    /// GVK and subresources, and every entry must exist upstream.
    #[test]
    fn matches_upstream_swagger() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/data/kubernetes-openapi/swagger-v1.33.1.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("skipping: {} not found", path.display());
            return;
        };
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let served: Vec<(&str, &str)> = std::iter::once(("", vec!["v1"]))
            .chain(groups())
            .flat_map(|(g, vs)| vs.into_iter().map(move |v| (g, v)))
            .collect();
        // Not persisted: no table entry expected.
        let skip = ["bindings"];
        let mut checked = std::collections::BTreeSet::new();
        let mut subs = std::collections::BTreeSet::new();
        for (p, ops) in doc["paths"].as_object().unwrap() {
            let (group, version, rest) = if let Some(rest) = p.strip_prefix("/api/v1/") {
                ("", "v1", rest)
            } else if let Some(rest) = p.strip_prefix("/apis/") {
                let mut it = rest.splitn(3, '/');
                let (Some(g), Some(v), Some(rest)) = (it.next(), it.next(), it.next()) else {
                    continue;
                };
                (g, v, rest)
            } else {
                continue;
            };
            if !served.contains(&(group, version)) || rest.starts_with("watch/") {
                continue;
            }
            let (namespaced, segs) = match rest.strip_prefix("namespaces/{namespace}/") {
                Some(r) => (true, r.split('/').collect::<Vec<_>>()),
                None => (false, rest.split('/').collect::<Vec<_>>()),
            };
            if segs.len() == 3 && segs[1] == "{name}" {
                subs.insert((group, version, segs[0].to_string(), segs[2].to_string()));
                continue;
            }
            if segs.len() != 1 || skip.contains(&segs[0]) {
                continue;
            }
            let Some(post) = ops.get("post") else {
                continue;
            };
            let gvk = &post["x-kubernetes-group-version-kind"];
            let info = lookup(group, version, segs[0])
                .unwrap_or_else(|| panic!("missing table entry for {p}"));
            assert_eq!(info.namespaced, namespaced, "{p}");
            assert_eq!(gvk["group"], info.group, "{p}");
            assert_eq!(gvk["version"], info.version, "{p}");
            assert_eq!(gvk["kind"], info.kind, "{p}");
            let def = &doc["definitions"][info.definition];
            assert!(def.is_object(), "definition {}", info.definition);
            let listed = def["x-kubernetes-group-version-kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| {
                    x["group"] == info.group
                        && x["version"] == info.version
                        && x["kind"] == info.kind
                });
            assert!(listed, "{} gvk", info.definition);
            let list_def =
                info.definition.rsplit_once('.').unwrap().0.to_string() + "." + info.list_kind;
            assert!(doc["definitions"][&list_def].is_object(), "{list_def}");
            checked.insert((group, version, info.resource));
        }
        for r in RESOURCES {
            assert!(
                checked.contains(&(r.group, r.version, r.resource)),
                "{}/{} {} not upstream",
                r.group,
                r.version,
                r.resource
            );
            let has = |s: &str| {
                subs.contains(&(r.group, r.version, r.resource.to_string(), s.to_string()))
            };
            assert_eq!(has("status"), r.has_status, "{} status", r.resource);
            assert_eq!(has("scale"), r.scale.is_some(), "{} scale", r.resource);
        }
    }
}
