//! The built-in resources: the registration table that gives each row of the static resource
//! table ([`crate::registry::resources`]) its strategy, and the strategies themselves, one file
//! per resource family in a folder per API group (kube's `pkg/registry/<group>/<resource>`).
//!
//! Adding a built-in resource is a row in the resource table, a line here and, when it has
//! behaviour of its own, a file in its group's folder. This table is the only place that
//! chooses behaviour by resource name.

pub mod admissionregistration;
pub mod apiextensions;
pub mod apiregistration;
pub mod apps;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod checks;
pub mod coordination;
pub mod core;
pub mod discovery;
pub mod events;
pub mod flowcontrol;
pub mod networking;
pub mod node;
pub mod policy;
pub mod rbac;
pub mod scheduling;
pub mod storage;

use std::sync::Arc;

use super::catalog::Registry;
use super::resource::Resource;
use super::resources::RESOURCES;
use super::strategy::{Plain, Strategy};
use super::table::printers as p;

/// The strategy of a built-in resource.
fn strategy(group: &str, version: &str, resource: &str) -> Arc<dyn Strategy> {
    match (group, resource) {
        ("", "configmaps") => Arc::new(core::configmap::ConfigMaps),
        ("", "endpoints") => Arc::new(core::endpoints::Endpoints),
        ("", "events") => Arc::new(core::event::Events),
        ("", "namespaces") => Arc::new(core::namespace::Namespaces),
        ("", "nodes") => Arc::new(core::node::Nodes),
        ("", "persistentvolumeclaims") => Arc::new(core::persistentvolume::PersistentVolumeClaims),
        ("", "persistentvolumes") => Arc::new(core::persistentvolume::PersistentVolumes),
        ("", "pods") => Arc::new(core::pod::Pods),
        ("", "podtemplates") => Arc::new(core::podtemplate::PodTemplates),
        ("", "replicationcontrollers") => {
            Arc::new(core::replicationcontroller::ReplicationControllers)
        }
        ("", "limitranges") => Arc::new(core::limits::LimitRanges),
        ("", "resourcequotas") => Arc::new(core::limits::ResourceQuotas),
        ("", "secrets") => Arc::new(core::secret::Secrets),
        ("", "serviceaccounts") => Arc::new(core::serviceaccount::ServiceAccounts),
        ("", "services") => Arc::new(core::service::Services),
        ("apps", "controllerrevisions") => Arc::new(apps::controllerrevision::ControllerRevisions),
        ("apps", "daemonsets") => Arc::new(apps::daemonset::DaemonSets),
        ("apps", "deployments") => Arc::new(apps::deployment::Deployments),
        ("apps", "replicasets") => Arc::new(apps::replicaset::ReplicaSets),
        ("apps", "statefulsets") => Arc::new(apps::statefulset::StatefulSets),
        ("events.k8s.io", "events") => Arc::new(events::Events),
        ("autoscaling", "horizontalpodautoscalers") => {
            Arc::new(autoscaling::HorizontalPodAutoscalers {
                v1: version == "v1",
            })
        }
        ("batch", "cronjobs") => Arc::new(batch::cronjob::CronJobs),
        ("batch", "jobs") => Arc::new(batch::job::Jobs),
        ("certificates.k8s.io", "certificatesigningrequests") => {
            Arc::new(certificates::CertificateSigningRequests)
        }
        ("networking.k8s.io", "ingressclasses") => Arc::new(networking::IngressClasses),
        ("networking.k8s.io", "ingresses") => Arc::new(networking::Ingresses),
        ("networking.k8s.io", "ipaddresses") => Arc::new(Plain(p::IP)),
        ("networking.k8s.io", "networkpolicies") => Arc::new(networking::NetworkPolicies),
        ("networking.k8s.io", "servicecidrs") => Arc::new(Plain(p::SCIDR)),
        ("policy", "poddisruptionbudgets") => Arc::new(policy::PodDisruptionBudgets),
        ("rbac.authorization.k8s.io", "clusterrolebindings") => {
            Arc::new(rbac::Bindings { namespaced: false })
        }
        ("rbac.authorization.k8s.io", "clusterroles") => {
            Arc::new(rbac::Roles { namespaced: false })
        }
        ("rbac.authorization.k8s.io", "roles") => Arc::new(rbac::Roles { namespaced: true }),
        ("rbac.authorization.k8s.io", "rolebindings") => {
            Arc::new(rbac::Bindings { namespaced: true })
        }
        ("storage.k8s.io", "csidrivers") => Arc::new(storage::csi::CSIDrivers),
        ("storage.k8s.io", "csinodes") => Arc::new(storage::csi::CSINodes),
        ("storage.k8s.io", "csistoragecapacities") => Arc::new(storage::csi::CSIStorageCapacities),
        ("storage.k8s.io", "storageclasses") => Arc::new(storage::StorageClasses),
        ("storage.k8s.io", "volumeattachments") => {
            Arc::new(storage::volumeattachment::VolumeAttachments)
        }
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations") => {
            Arc::new(admissionregistration::webhook::WebhookConfigurations { mutating: true })
        }
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations") => {
            Arc::new(admissionregistration::webhook::WebhookConfigurations { mutating: false })
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
            Arc::new(admissionregistration::policy::ValidatingAdmissionPolicies)
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => {
            Arc::new(admissionregistration::policy::ValidatingAdmissionPolicyBindings)
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            Arc::new(apiextensions::CustomResourceDefinitions)
        }
        ("apiregistration.k8s.io", "apiservices") => Arc::new(apiregistration::APIServices),
        ("scheduling.k8s.io", "priorityclasses") => Arc::new(scheduling::PriorityClasses),
        ("coordination.k8s.io", "leases") => Arc::new(coordination::Leases),
        ("node.k8s.io", "runtimeclasses") => Arc::new(node::RuntimeClasses),
        ("discovery.k8s.io", "endpointslices") => Arc::new(discovery::EndpointSlices),
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => Arc::new(flowcontrol::FlowSchemas),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => {
            Arc::new(flowcontrol::PriorityLevelConfigurations)
        }
        _ => Arc::new(Plain(p::DEFAULT)),
    }
}

/// The built-in resources, ready to serve.
pub fn resources() -> Vec<Resource> {
    RESOURCES
        .iter()
        .map(|r| Resource::builtin(r, strategy(r.group, r.version, r.resource)))
        .collect()
}

/// A registry serving the built-in resources.
pub fn registry() -> Registry {
    Registry::new(resources())
}

/// A registry serving the built-in resources `--runtime-config` leaves on.
pub fn registry_with(rc: &crate::registry::runtime_config::RuntimeConfig) -> Registry {
    Registry::serving(resources(), |r| rc.enabled(r))
}
