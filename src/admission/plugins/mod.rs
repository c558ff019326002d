//! The built-in admission plugins by kube's names: the order they run in
//! ([`ALL_ORDERED`], kube v1.33's `AllOrderedPlugins`), the ones on by default
//! ([`DEFAULT_ON`]) and their constructors ([`build`]). A plugin with no implementation here
//! yet is a registered no-op slot, so enabling it is accepted, as the issue that brings it
//! will fill it. `SecurityContextDeny` was removed from kube in v1.30 and is unknown here too.

mod always;
mod certificates;
mod default_class;
mod event_rate_limit;
mod external_ips;
mod image_policy;
mod namespace;
mod node_restriction;
mod owner_refs;
mod storage;

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
    let _ = &config;
    Ok(match name {
        "AlwaysAdmit" => Some(Arc::new(always::AlwaysAdmit)),
        "AlwaysDeny" => Some(Arc::new(always::AlwaysDeny)),
        "NamespaceAutoProvision" => Some(Arc::new(namespace::AutoProvision)),
        "NamespaceExists" => Some(Arc::new(namespace::Exists)),
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
        "OwnerReferencesPermissionEnforcement" => {
            Some(Arc::new(owner_refs::OwnerReferencesPermissionEnforcement))
        }
        _ => None,
    })
}
