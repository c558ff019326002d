//! The built-in admission plugins by kube's names: the order they run in
//! ([`ALL_ORDERED`], kube v1.33's `AllOrderedPlugins`), the ones on by default
//! ([`DEFAULT_ON`]) and their constructors ([`build`]). A plugin with no implementation here
//! yet is a registered no-op slot, so enabling it is accepted, as the issue that brings it
//! will fill it. `SecurityContextDeny` was removed from kube in v1.30 and is unknown here too.

mod always;
mod always_pull_images;
mod anti_affinity;
mod certificates;
mod default_class;
mod event_rate_limit;
mod extended_resources;
mod external_ips;
mod image_policy;
mod limit_ranger;
mod namespace;
mod node_restriction;
mod node_selector;
mod node_taints;
mod owner_refs;
mod podsecurity;
mod priority;
mod resourcequota;
mod runtime_class;
mod service_account;
mod storage;
mod toleration_restriction;
pub mod tolerations;

use std::sync::Arc;

use serde_json::Value;

use super::Plugin;

/// Every plugin, in the order kube runs them.
pub const ALL_ORDERED: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// kube v1.33's default-on plugins.
pub const DEFAULT_ON: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "DefaultStorageClass",
    "PersistentVolumeClaimResize",
    "DefaultTolerationSeconds",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "StorageObjectInUseProtection",
    "Priority",
    "TaintNodesByCondition",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodSecurity",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "ValidatingAdmissionPolicy",
];

/// The plugin `name` with its configuration (`None`: a no-op slot, or a plugin whose
/// behaviour lives in the store, as NamespaceLifecycle's does).
pub fn build(name: &str, config: Option<Value>) -> Result<Option<Arc<dyn Plugin>>, String> {
    Ok(match name {
        "AlwaysAdmit" => Some(Arc::new(always::AlwaysAdmit)),
        "AlwaysDeny" => Some(Arc::new(always::AlwaysDeny)),
        "NamespaceAutoProvision" => Some(Arc::new(namespace::AutoProvision)),
        "NamespaceExists" => Some(Arc::new(namespace::Exists)),
        "PodSecurity" => Some(Arc::new(podsecurity::PodSecurity::new(config.as_ref())?)),
        "ResourceQuota" => Some(Arc::new(resourcequota::ResourceQuota::new(
            config.as_ref(),
        )?)),
        "LimitRanger" => Some(Arc::new(limit_ranger::LimitRanger)),
        "ServiceAccount" => Some(Arc::new(service_account::ServiceAccount)),
        "Priority" => Some(Arc::new(priority::Priority)),
        "DefaultTolerationSeconds" => {
            Some(Arc::new(tolerations::DefaultTolerationSeconds::from_flags()))
        }
        "TaintNodesByCondition" => Some(Arc::new(node_taints::TaintNodesByCondition)),
        "RuntimeClass" => Some(Arc::new(runtime_class::RuntimeClass)),
        "AlwaysPullImages" => Some(Arc::new(always_pull_images::AlwaysPullImages)),
        "LimitPodHardAntiAffinityTopology" => {
            Some(Arc::new(anti_affinity::LimitPodHardAntiAffinityTopology))
        }
        "ExtendedResourceToleration" => {
            Some(Arc::new(extended_resources::ExtendedResourceToleration))
        }
        "PodNodeSelector" => Some(Arc::new(node_selector::PodNodeSelector::new(config))),
        "PodTolerationRestriction" => Some(Arc::new(
            toleration_restriction::PodTolerationRestriction::new(config),
        )),
        "DefaultStorageClass" => Some(Arc::new(default_class::DefaultStorageClass)),
        "DefaultIngressClass" => Some(Arc::new(default_class::DefaultIngressClass)),
        "StorageObjectInUseProtection" => Some(Arc::new(storage::StorageObjectInUseProtection)),
        "PersistentVolumeClaimResize" => Some(Arc::new(storage::PersistentVolumeClaimResize)),
        "CertificateApproval" => Some(Arc::new(certificates::CertificateApproval)),
        "CertificateSigning" => Some(Arc::new(certificates::CertificateSigning)),
        "CertificateSubjectRestriction" => {
            Some(Arc::new(certificates::CertificateSubjectRestriction))
        }
        // Guards clustertrustbundles, which this server does not serve.
        "ClusterTrustBundleAttest" => None,
        "EventRateLimit" => Some(Arc::new(event_rate_limit::EventRateLimit::new(config)?)),
        "ImagePolicyWebhook" => Some(Arc::new(image_policy::ImagePolicyWebhook::new(config)?)),
        "NodeRestriction" => Some(Arc::new(node_restriction::NodeRestriction)),
        "DenyServiceExternalIPs" => Some(Arc::new(external_ips::DenyServiceExternalIPs)),
        "MutatingAdmissionWebhook" => Some(Arc::new(crate::admission::webhook::Webhooks::new(
            crate::admission::webhook::Kind::Mutating,
            config.as_ref(),
        )?)),
        "ValidatingAdmissionWebhook" => Some(Arc::new(crate::admission::webhook::Webhooks::new(
            crate::admission::webhook::Kind::Validating,
            config.as_ref(),
        )?)),
        "OwnerReferencesPermissionEnforcement" => {
            Some(Arc::new(owner_refs::OwnerReferencesPermissionEnforcement))
        }
        "ValidatingAdmissionPolicy" => {
            Some(Arc::new(super::policy::ValidatingAdmissionPolicy::new()))
        }
        _ => None,
    })
}
