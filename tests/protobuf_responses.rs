//! Kubernetes protobuf responses over real HTTPS, as client-go's protobuf clients ask for
//! them (`Accept: application/vnd.kubernetes.protobuf, application/json`): every built-in
//! resource the server lists (from discovery), LIST and GET of each, answered in protobuf,
//! decoded by the `k8s-pb` prost bindings into the typed struct (which must accept every
//! field: what prost does not know it drops, so re-encoding it and decoding with Rafter's
//! decoder must give back the JSON form), and by Rafter's decoder, both compared with the
//! JSON GET; `Status` errors in protobuf; Table and custom resources (406 when only protobuf
//! is acceptable, JSON from an Accept list); PartialObjectMetadata as protobuf; a protobuf
//! watch read frame by frame (length-prefixed `WatchEvent`s, BOOKMARKs included).
//!
//! The comparison drops what protobuf cannot carry: `null`, empty lists and empty maps.

mod support;

use std::time::{Duration, Instant};

use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use k8s_pb::*;
use prost014::Message;
use rafter::server::protobuf::decode_object;
use reqwest::{Method, StatusCode};
use serde_json::{json, Map, Value};
use support::{pb_envelope, Server};

const PB: &str = "application/vnd.kubernetes.protobuf";
const CLIENT_GO: &str = "application/vnd.kubernetes.protobuf, application/json";

macro_rules! kinds {
    ($($av:literal, $k:literal => $t:path;)*) => {
        /// Decodes `raw` as the k8s-pb type of apiVersion/kind and encodes it again with
        /// prost; `None` for a kind this table does not have.
        fn through_k8s_pb(av: &str, kind: &str, raw: &[u8]) -> Option<Result<Vec<u8>, String>> {
            match (av, kind) {
                $(($av, $k) => Some(
                    <$t>::decode(raw).map(|m| m.encode_to_vec()).map_err(|e| e.to_string()),
                ),)*
                _ => None,
            }
        }
    };
}

kinds! {
    "", "APIVersions" => meta::APIVersions;
    "v1", "APIVersions" => meta::APIVersions;
    "v1", "APIGroupList" => meta::APIGroupList;
    "", "APIGroupList" => meta::APIGroupList;
    "v1", "APIGroup" => meta::APIGroup;
    "", "APIGroup" => meta::APIGroup;
    "v1", "APIResourceList" => meta::APIResourceList;
    "", "APIResourceList" => meta::APIResourceList;
    "v1", "Status" => meta::Status;
    "autoscaling/v1", "Scale" => api::autoscaling::v1::Scale;
    "v1", "ComponentStatus" => api::core::v1::ComponentStatus;
    "v1", "ComponentStatusList" => api::core::v1::ComponentStatusList;
    "v1", "ConfigMap" => api::core::v1::ConfigMap;
    "v1", "ConfigMapList" => api::core::v1::ConfigMapList;
    "v1", "Endpoints" => api::core::v1::Endpoints;
    "v1", "EndpointsList" => api::core::v1::EndpointsList;
    "v1", "Event" => api::core::v1::Event;
    "v1", "EventList" => api::core::v1::EventList;
    "v1", "LimitRange" => api::core::v1::LimitRange;
    "v1", "LimitRangeList" => api::core::v1::LimitRangeList;
    "v1", "Namespace" => api::core::v1::Namespace;
    "v1", "NamespaceList" => api::core::v1::NamespaceList;
    "v1", "Node" => api::core::v1::Node;
    "v1", "NodeList" => api::core::v1::NodeList;
    "v1", "PersistentVolumeClaim" => api::core::v1::PersistentVolumeClaim;
    "v1", "PersistentVolumeClaimList" => api::core::v1::PersistentVolumeClaimList;
    "v1", "PersistentVolume" => api::core::v1::PersistentVolume;
    "v1", "PersistentVolumeList" => api::core::v1::PersistentVolumeList;
    "v1", "Pod" => api::core::v1::Pod;
    "v1", "PodList" => api::core::v1::PodList;
    "v1", "PodTemplate" => api::core::v1::PodTemplate;
    "v1", "PodTemplateList" => api::core::v1::PodTemplateList;
    "v1", "ReplicationController" => api::core::v1::ReplicationController;
    "v1", "ReplicationControllerList" => api::core::v1::ReplicationControllerList;
    "v1", "ResourceQuota" => api::core::v1::ResourceQuota;
    "v1", "ResourceQuotaList" => api::core::v1::ResourceQuotaList;
    "v1", "Secret" => api::core::v1::Secret;
    "v1", "SecretList" => api::core::v1::SecretList;
    "v1", "ServiceAccount" => api::core::v1::ServiceAccount;
    "v1", "ServiceAccountList" => api::core::v1::ServiceAccountList;
    "v1", "Service" => api::core::v1::Service;
    "v1", "ServiceList" => api::core::v1::ServiceList;
    "apps/v1", "ControllerRevision" => api::apps::v1::ControllerRevision;
    "apps/v1", "ControllerRevisionList" => api::apps::v1::ControllerRevisionList;
    "apps/v1", "DaemonSet" => api::apps::v1::DaemonSet;
    "apps/v1", "DaemonSetList" => api::apps::v1::DaemonSetList;
    "apps/v1", "Deployment" => api::apps::v1::Deployment;
    "apps/v1", "DeploymentList" => api::apps::v1::DeploymentList;
    "apps/v1", "ReplicaSet" => api::apps::v1::ReplicaSet;
    "apps/v1", "ReplicaSetList" => api::apps::v1::ReplicaSetList;
    "apps/v1", "StatefulSet" => api::apps::v1::StatefulSet;
    "apps/v1", "StatefulSetList" => api::apps::v1::StatefulSetList;
    "events.k8s.io/v1", "Event" => api::events::v1::Event;
    "events.k8s.io/v1", "EventList" => api::events::v1::EventList;
    "autoscaling/v2", "HorizontalPodAutoscaler" => api::autoscaling::v2::HorizontalPodAutoscaler;
    "autoscaling/v2", "HorizontalPodAutoscalerList" => api::autoscaling::v2::HorizontalPodAutoscalerList;
    "autoscaling/v1", "HorizontalPodAutoscaler" => api::autoscaling::v1::HorizontalPodAutoscaler;
    "autoscaling/v1", "HorizontalPodAutoscalerList" => api::autoscaling::v1::HorizontalPodAutoscalerList;
    "batch/v1", "CronJob" => api::batch::v1::CronJob;
    "batch/v1", "CronJobList" => api::batch::v1::CronJobList;
    "batch/v1", "Job" => api::batch::v1::Job;
    "batch/v1", "JobList" => api::batch::v1::JobList;
    "certificates.k8s.io/v1", "CertificateSigningRequest" => api::certificates::v1::CertificateSigningRequest;
    "certificates.k8s.io/v1", "CertificateSigningRequestList" => api::certificates::v1::CertificateSigningRequestList;
    "networking.k8s.io/v1", "IngressClass" => api::networking::v1::IngressClass;
    "networking.k8s.io/v1", "IngressClassList" => api::networking::v1::IngressClassList;
    "networking.k8s.io/v1", "Ingress" => api::networking::v1::Ingress;
    "networking.k8s.io/v1", "IngressList" => api::networking::v1::IngressList;
    "networking.k8s.io/v1", "IPAddress" => api::networking::v1::IPAddress;
    "networking.k8s.io/v1", "IPAddressList" => api::networking::v1::IPAddressList;
    "networking.k8s.io/v1", "NetworkPolicy" => api::networking::v1::NetworkPolicy;
    "networking.k8s.io/v1", "NetworkPolicyList" => api::networking::v1::NetworkPolicyList;
    "networking.k8s.io/v1", "ServiceCIDR" => api::networking::v1::ServiceCIDR;
    "networking.k8s.io/v1", "ServiceCIDRList" => api::networking::v1::ServiceCIDRList;
    "policy/v1", "PodDisruptionBudget" => api::policy::v1::PodDisruptionBudget;
    "policy/v1", "PodDisruptionBudgetList" => api::policy::v1::PodDisruptionBudgetList;
    "rbac.authorization.k8s.io/v1", "ClusterRoleBinding" => api::rbac::v1::ClusterRoleBinding;
    "rbac.authorization.k8s.io/v1", "ClusterRoleBindingList" => api::rbac::v1::ClusterRoleBindingList;
    "rbac.authorization.k8s.io/v1", "ClusterRole" => api::rbac::v1::ClusterRole;
    "rbac.authorization.k8s.io/v1", "ClusterRoleList" => api::rbac::v1::ClusterRoleList;
    "rbac.authorization.k8s.io/v1", "RoleBinding" => api::rbac::v1::RoleBinding;
    "rbac.authorization.k8s.io/v1", "RoleBindingList" => api::rbac::v1::RoleBindingList;
    "rbac.authorization.k8s.io/v1", "Role" => api::rbac::v1::Role;
    "rbac.authorization.k8s.io/v1", "RoleList" => api::rbac::v1::RoleList;
    "storage.k8s.io/v1", "CSIDriver" => api::storage::v1::CSIDriver;
    "storage.k8s.io/v1", "CSIDriverList" => api::storage::v1::CSIDriverList;
    "storage.k8s.io/v1", "CSINode" => api::storage::v1::CSINode;
    "storage.k8s.io/v1", "CSINodeList" => api::storage::v1::CSINodeList;
    "storage.k8s.io/v1", "CSIStorageCapacity" => api::storage::v1::CSIStorageCapacity;
    "storage.k8s.io/v1", "CSIStorageCapacityList" => api::storage::v1::CSIStorageCapacityList;
    "storage.k8s.io/v1", "StorageClass" => api::storage::v1::StorageClass;
    "storage.k8s.io/v1", "StorageClassList" => api::storage::v1::StorageClassList;
    "storage.k8s.io/v1", "VolumeAttachment" => api::storage::v1::VolumeAttachment;
    "storage.k8s.io/v1", "VolumeAttachmentList" => api::storage::v1::VolumeAttachmentList;
    "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration" => api::admissionregistration::v1::MutatingWebhookConfiguration;
    "admissionregistration.k8s.io/v1", "MutatingWebhookConfigurationList" => api::admissionregistration::v1::MutatingWebhookConfigurationList;
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy" => api::admissionregistration::v1::ValidatingAdmissionPolicy;
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyList" => api::admissionregistration::v1::ValidatingAdmissionPolicyList;
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding" => api::admissionregistration::v1::ValidatingAdmissionPolicyBinding;
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBindingList" => api::admissionregistration::v1::ValidatingAdmissionPolicyBindingList;
    "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration" => api::admissionregistration::v1::ValidatingWebhookConfiguration;
    "admissionregistration.k8s.io/v1", "ValidatingWebhookConfigurationList" => api::admissionregistration::v1::ValidatingWebhookConfigurationList;
    "apiextensions.k8s.io/v1", "CustomResourceDefinition" => apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    "apiextensions.k8s.io/v1", "CustomResourceDefinitionList" => apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionList;
    "scheduling.k8s.io/v1", "PriorityClass" => api::scheduling::v1::PriorityClass;
    "scheduling.k8s.io/v1", "PriorityClassList" => api::scheduling::v1::PriorityClassList;
    "coordination.k8s.io/v1", "Lease" => api::coordination::v1::Lease;
    "coordination.k8s.io/v1", "LeaseList" => api::coordination::v1::LeaseList;
    "node.k8s.io/v1", "RuntimeClass" => api::node::v1::RuntimeClass;
    "node.k8s.io/v1", "RuntimeClassList" => api::node::v1::RuntimeClassList;
    "discovery.k8s.io/v1", "EndpointSlice" => api::discovery::v1::EndpointSlice;
    "discovery.k8s.io/v1", "EndpointSliceList" => api::discovery::v1::EndpointSliceList;
    "flowcontrol.apiserver.k8s.io/v1", "FlowSchema" => api::flowcontrol::v1::FlowSchema;
    "flowcontrol.apiserver.k8s.io/v1", "FlowSchemaList" => api::flowcontrol::v1::FlowSchemaList;
    "flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration" => api::flowcontrol::v1::PriorityLevelConfiguration;
    "flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfigurationList" => api::flowcontrol::v1::PriorityLevelConfigurationList;
    "apiregistration.k8s.io/v1", "APIService" => kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    "apiregistration.k8s.io/v1", "APIServiceList" => kube_aggregator::pkg::apis::apiregistration::v1::APIServiceList;
}

/// Drops what protobuf cannot tell from unset (nulls, empty lists and maps) and makes every
/// number a float, recursively.
fn norm(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let n = norm(v);
                let empty = match &n {
                    Value::Null => true,
                    Value::Array(a) => a.is_empty(),
                    Value::Object(o) => o.is_empty() && !matches!(v, Value::Object(_)),
                    _ => false,
                };
                if !empty {
                    out.insert(k.clone(), n);
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(norm).collect()),
        Value::Number(n) => json!(n.as_f64()),
        other => other.clone(),
    }
}

/// The `k8s\0` envelope's apiVersion, kind and raw message, read with k8s-pb.
fn envelope(body: &[u8]) -> (String, String, Vec<u8>) {
    let rest = body
        .strip_prefix(b"k8s\0")
        .unwrap_or_else(|| panic!("no k8s\\0 prefix: {:?}", &body[..body.len().min(16)]));
    let u = Unknown::decode(rest).expect("runtime.Unknown");
    let tm = u.type_meta.expect("typeMeta");
    assert_eq!(u.content_encoding.as_deref(), Some(""));
    assert_eq!(u.content_type.as_deref(), Some(""));
    (
        tm.api_version.unwrap_or_default(),
        tm.kind.unwrap_or_default(),
        u.raw.unwrap_or_default(),
    )
}

async fn get(c: &reqwest::Client, url: &str, accept: &str) -> (StatusCode, String, Vec<u8>) {
    let r = c
        .get(url)
        .header("accept", accept)
        .send()
        .await
        .expect("request");
    let code = r.status();
    let ct = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (code, ct, r.bytes().await.expect("body").to_vec())
}

/// GETs `path` as JSON and as protobuf and checks that both decoders give the JSON form.
/// `Err` describes a mismatch (the caller retries: controllers may write in between).
async fn compare(s: &Server, c: &reqwest::Client, path: &str) -> Result<String, String> {
    let url = format!("{}{}", s.url, path);
    let (code, _, body) = get(c, &url, "application/json").await;
    if code != StatusCode::OK {
        return Err(format!("{path}: JSON GET {code}"));
    }
    let j: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
    let (code, ct, pb) = get(c, &url, CLIENT_GO).await;
    if code != StatusCode::OK || ct != PB {
        return Err(format!(
            "{path}: protobuf GET {code} {ct}: {}",
            String::from_utf8_lossy(&pb)
        ));
    }
    let (av, kind, raw) = envelope(&pb);
    if av != j["apiVersion"].as_str().unwrap_or("") || kind != j["kind"] {
        return Err(format!(
            "{path}: envelope {av} {kind}, JSON {} {}",
            j["apiVersion"], j["kind"]
        ));
    }
    let ours = decode_object(&pb).map_err(|e| format!("{path}: rafter decode: {e}"))?;
    if norm(&ours) != norm(&j) {
        return Err(format!(
            "{path}: protobuf decodes to\n{}\nJSON is\n{}",
            serde_json::to_string(&norm(&ours)).unwrap(),
            serde_json::to_string(&norm(&j)).unwrap()
        ));
    }
    let again = through_k8s_pb(&av, &kind, &raw)
        .ok_or_else(|| format!("{path}: no k8s-pb type for {av} {kind}"))?
        .map_err(|e| format!("{path}: k8s-pb cannot decode {kind}: {e}"))?;
    // (Not byte for byte: prost leaves out a map entry's empty value, which gogo writes and
    // Rafter writes as gogo does.)
    let mut env = b"k8s\0".to_vec();
    env.extend(
        Unknown {
            type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
                api_version: Some(av.clone()),
                kind: Some(kind.clone()),
            }),
            raw: Some(again),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        }
        .encode_to_vec(),
    );
    let theirs = decode_object(&env).map_err(|e| format!("{path}: decode of k8s-pb's: {e}"))?;
    if norm(&theirs) != norm(&j) {
        return Err(format!(
            "{path}: through k8s-pb\n{}\nJSON is\n{}",
            serde_json::to_string(&norm(&theirs)).unwrap(),
            serde_json::to_string(&norm(&j)).unwrap()
        ));
    }
    Ok(kind)
}

async fn compare_settled(s: &Server, c: &reqwest::Client, path: &str) -> String {
    let mut last = String::new();
    for _ in 0..5 {
        match compare(s, c, path).await {
            Ok(kind) => return kind,
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    panic!("{last}");
}

/// Objects with the field shapes protobuf has to get right: quantities, int-or-strings,
/// micro-times, durations, bytes, raw extensions, maps of messages, JSON schemas.
fn fixtures() -> Vec<(&'static str, Value)> {
    vec![
        (
            "/api/v1/namespaces/default/configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "pb", "labels": {"b": "2", "a": "1"}, "annotations": {"x": ""}},
                "data": {"k": "v", "empty": ""}, "binaryData": {"bin": "AAEC/w=="}, "immutable": false}),
        ),
        (
            "/api/v1/namespaces/default/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pb"},
                "type": "Opaque", "data": {"password": "aHVudGVyMg==", "none": ""}}),
        ),
        (
            "/api/v1/namespaces/default/pods",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pb", "labels": {"app": "pb"}},
                "spec": {
                    "containers": [{"name": "c", "image": "nginx:1.27", "args": ["-g", "daemon off;"],
                        "ports": [{"name": "http", "containerPort": 80}],
                        "env": [{"name": "A", "value": "1"},
                                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "0.25"}},
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
                        "livenessProbe": {"tcpSocket": {"port": 80}},
                        "securityContext": {"runAsUser": 1000, "allowPrivilegeEscalation": false,
                            "capabilities": {"drop": ["ALL"]}}}],
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
                    "securityContext": {"supplementalGroups": [1, 2, 3], "fsGroup": 2000},
                    "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}},
                                {"name": "cm", "configMap": {"name": "pb", "defaultMode": 420}}],
                    "terminationGracePeriodSeconds": 10}}),
        ),
        (
            "/api/v1/namespaces/default/services",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "pb"},
                "spec": {"selector": {"app": "pb"}, "ports": [
                    {"name": "a", "port": 80, "targetPort": "http"},
                    {"name": "b", "port": 81, "targetPort": 8081, "protocol": "UDP"}]}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/deployments",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "pb"},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "pb"},
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                    "template": {"metadata": {"labels": {"app": "pb", "tier": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/controllerrevisions",
            json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "pb"},
                "revision": 3, "data": {"spec": {"template": {"x": [1, 2.5, "s", null, true]}}}}),
        ),
        (
            "/apis/batch/v1/namespaces/default/cronjobs",
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "pb"},
                "spec": {"schedule": "*/5 * * * *", "suspend": true, "jobTemplate": {"spec": {"template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
        ),
        (
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pb"},
                "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "pb"}}}}),
        ),
        (
            "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "pb"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "pb"},
                    "minReplicas": 1, "maxReplicas": 5,
                    "metrics": [{"type": "Resource", "resource": {"name": "memory",
                        "target": {"type": "AverageValue", "averageValue": "100Mi"}}}]}}),
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "pb"},
                "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15,
                    "acquireTime": "2024-05-06T07:08:09.123456Z", "renewTime": "2024-05-06T07:08:10.000001Z",
                    "leaseTransitions": 2}}),
        ),
        (
            "/apis/events.k8s.io/v1/namespaces/default/events",
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "pb"},
                "eventTime": "2024-05-06T07:08:09.654321Z", "reportingController": "x/y",
                "reportingInstance": "i", "action": "Do", "reason": "Because", "type": "Normal",
                "regarding": {"kind": "Pod", "name": "pb", "namespace": "default"}}),
        ),
        (
            "/api/v1/namespaces/default/resourcequotas",
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "pb"},
                "spec": {"hard": {"pods": "10", "requests.cpu": "2", "requests.memory": "1.5Gi"}}}),
        ),
        (
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.pb.example.com"},
                "spec": {"group": "pb.example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                            "spec": {"type": "object", "required": ["size"], "properties": {
                                "size": {"type": "integer", "minimum": 1, "maximum": 10.5, "default": 3},
                                "port": {"x-kubernetes-int-or-string": true},
                                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                                "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                            "status": {"type": "object", "additionalProperties": false}}}}}]}}),
        ),
    ]
}

/// Discovery: every (path prefix, resource) that lists, built-in groups only.
async fn listable(s: &Server, c: &reqwest::Client) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    let mut versions = vec!["/api/v1".to_string()];
    let groups = s.json(c, Method::GET, "/apis", None).await.body;
    for g in groups["groups"].as_array().unwrap() {
        if g["name"].as_str().unwrap().ends_with(".example.com") {
            continue;
        }
        for v in g["versions"].as_array().unwrap() {
            versions.push(format!("/apis/{}", v["groupVersion"].as_str().unwrap()));
        }
    }
    for prefix in versions {
        let list = s.json(c, Method::GET, &prefix, None).await.body;
        for r in list["resources"].as_array().unwrap() {
            let name = r["name"].as_str().unwrap();
            let verbs: Vec<&str> = r["verbs"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            if name.contains('/') || !verbs.contains(&"list") {
                continue;
            }
            out.push((prefix.clone(), name.to_string(), r["namespaced"] == true));
        }
    }
    out
}

#[tokio::test]
async fn every_builtin_kind_round_trips_through_k8s_pb() {
    let s = Server::start();
    let c = s.client();
    for (path, obj) in fixtures() {
        let r = s.json(&c, Method::POST, path, Some(obj.clone())).await;
        assert!(r.code.is_success(), "{path}: {} {}", r.code, r.body);
    }
    let resources = listable(&s, &c).await;
    assert!(resources.len() > 40, "{resources:?}");
    let mut kinds = Vec::new();
    let mut objects = 0;
    for (prefix, resource, _) in &resources {
        let path = format!("{prefix}/{resource}");
        kinds.push(compare_settled(&s, &c, &path).await);
        // Each kind's first object, GET by name.
        let list = s.json(&c, Method::GET, &path, None).await.body;
        if let Some(item) = list["items"].as_array().and_then(|a| a.first()) {
            let name = item["metadata"]["name"].as_str().unwrap();
            let item_path = match item["metadata"]["namespace"].as_str() {
                Some(ns) => format!("{prefix}/namespaces/{ns}/{resource}/{name}"),
                None => format!("{prefix}/{resource}/{name}"),
            };
            compare_settled(&s, &c, &item_path).await;
            objects += 1;
        }
    }
    // The fixtures, each by name.
    for (path, obj) in fixtures() {
        let name = obj["metadata"]["name"].as_str().unwrap();
        compare_settled(&s, &c, &format!("{path}/{name}")).await;
    }
    eprintln!(
        "{} lists and {objects} objects round-tripped: {kinds:?}",
        kinds.len()
    );
    for want in [
        "PodList",
        "DeploymentList",
        "CustomResourceDefinitionList",
        "LeaseList",
    ] {
        assert!(
            kinds.iter().any(|k| k == want),
            "{want} not listed: {kinds:?}"
        );
    }
}

#[tokio::test]
async fn protobuf_status_table_and_negotiation() {
    let s = Server::start();
    let c = s.client();
    let missing = format!("{}/api/v1/namespaces/default/pods/nope", s.url);
    // A 404 in protobuf: the Status, enveloped as v1 Status.
    let (code, ct, pb) = get(&c, &missing, CLIENT_GO).await;
    assert_eq!((code, ct.as_str()), (StatusCode::NOT_FOUND, PB));
    let (av, kind, raw) = envelope(&pb);
    assert_eq!((av.as_str(), kind.as_str()), ("v1", "Status"));
    let st = meta::Status::decode(raw.as_slice()).unwrap();
    assert_eq!(st.code, Some(404));
    assert_eq!(st.reason.as_deref(), Some("NotFound"));
    assert_eq!(st.message.as_deref(), Some("pods \"nope\" not found"));
    let (_, _, j) = get(&c, &missing, "application/json").await;
    let j: Value = serde_json::from_slice(&j).unwrap();
    assert_eq!(norm(&decode_object(&pb).unwrap()), norm(&j));
    // Authorization's 403 is negotiated too.
    let (code, ct, pb) = get(&s.anonymous_client(), &missing, CLIENT_GO).await;
    assert_eq!((code, ct.as_str()), (StatusCode::FORBIDDEN, PB));
    let (_, kind, raw) = envelope(&pb);
    assert_eq!(kind, "Status");
    assert_eq!(
        meta::Status::decode(raw.as_slice())
            .unwrap()
            .reason
            .as_deref(),
        Some("Forbidden")
    );
    // JSON first in the list: JSON.
    let (_, ct, _) = get(
        &c,
        &missing,
        "application/json, application/vnd.kubernetes.protobuf",
    )
    .await;
    assert_eq!(ct, "application/json");

    // Table has no protobuf form: the clause is passed over (406 when it is the only one).
    let pods = format!("{}/api/v1/namespaces/default/pods", s.url);
    let table_pb = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io";
    let (code, ct, body) = get(&c, &pods, table_pb).await;
    assert_eq!(
        (code, ct.as_str()),
        (StatusCode::NOT_ACCEPTABLE, "application/json")
    );
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["reason"], "NotAcceptable");
    assert_eq!(
        body["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    let (code, ct, body) = get(
        &c,
        &pods,
        &format!("{table_pb}, application/json;as=Table;v=v1;g=meta.k8s.io"),
    )
    .await;
    assert_eq!((code, ct.as_str()), (StatusCode::OK, "application/json"));
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["kind"],
        "Table"
    );
    let (_, ct, _) = get(&c, &pods, &format!("{table_pb}, {PB}")).await;
    assert_eq!(ct, PB);

    // PartialObjectMetadataList in protobuf (client-go's metadata informers).
    let nss = format!("{}/api/v1/namespaces", s.url);
    let (code, ct, pb) = get(
        &c,
        &nss,
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
    )
    .await;
    assert_eq!((code, ct.as_str()), (StatusCode::OK, PB));
    let (av, kind, raw) = envelope(&pb);
    assert_eq!(
        (av.as_str(), kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
    let list = meta::PartialObjectMetadataList::decode(raw.as_slice()).unwrap();
    let names: Vec<String> = list
        .items
        .iter()
        .filter_map(|i| i.metadata.as_ref()?.name.clone())
        .collect();
    assert!(names.contains(&"default".to_string()), "{names:?}");
    assert!(list.metadata.unwrap().resource_version.is_some());
    let (code, ct, pb) = get(
        &c,
        &format!("{nss}/default"),
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!((code, ct.as_str()), (StatusCode::OK, PB));
    let (_, kind, raw) = envelope(&pb);
    assert_eq!(kind, "PartialObjectMetadata");
    let p = meta::PartialObjectMetadata::decode(raw.as_slice()).unwrap();
    assert_eq!(p.metadata.unwrap().name.as_deref(), Some("default"));

    // A create answered in protobuf (the response of a write).
    let r = c
        .post(format!("{}/api/v1/namespaces/default/configmaps", s.url))
        .header("accept", CLIENT_GO)
        .header("content-type", PB)
        .body(pb_envelope(
            "v1",
            "ConfigMap",
            &k8s_pb::api::core::v1::ConfigMap {
                metadata: Some(meta::ObjectMeta {
                    name: Some("made".into()),
                    ..Default::default()
                }),
                data: [("a".to_string(), "b".to_string())].into(),
                ..Default::default()
            },
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    assert_eq!(r.headers()["content-type"], PB);
    let (_, kind, raw) = envelope(&r.bytes().await.unwrap());
    assert_eq!(kind, "ConfigMap");
    let cm = k8s_pb::api::core::v1::ConfigMap::decode(raw.as_slice()).unwrap();
    let m = cm.metadata.unwrap();
    assert_eq!(m.name.as_deref(), Some("made"));
    assert!(m.uid.is_some_and(|u| !u.is_empty()));
    assert!(m.creation_timestamp.and_then(|t| t.seconds).is_some());
    assert_eq!(cm.data["a"], "b");
}

#[tokio::test]
async fn custom_resources_have_no_protobuf() {
    let s = Server::start();
    let c = s.client();
    let crd = fixtures().pop().unwrap();
    assert!(s
        .json(&c, Method::POST, crd.0, Some(crd.1))
        .await
        .code
        .is_success());
    let widgets = "/apis/pb.example.com/v1/namespaces/default/widgets";
    let deadline = Instant::now() + Duration::from_secs(20);
    while s.json(&c, Method::GET, widgets, None).await.code != StatusCode::OK {
        assert!(Instant::now() < deadline, "CRD never served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let w = json!({"apiVersion": "pb.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 2}});
    assert!(s
        .json(&c, Method::POST, widgets, Some(w))
        .await
        .code
        .is_success());
    let url = format!("{}{widgets}/w", s.url);
    // Only protobuf acceptable: 406, in JSON.
    let (code, ct, body) = get(&c, &url, PB).await;
    assert_eq!(
        (code, ct.as_str()),
        (StatusCode::NOT_ACCEPTABLE, "application/json")
    );
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        body["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    let (code, _, _) = get(&c, &format!("{}{widgets}?watch=1", s.url), PB).await;
    assert_eq!(code, StatusCode::NOT_ACCEPTABLE);
    // client-go's list: JSON.
    let (code, ct, body) = get(&c, &url, CLIENT_GO).await;
    assert_eq!((code, ct.as_str()), (StatusCode::OK, "application/json"));
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["spec"]["size"],
        2
    );
    let (code, ct, _) = get(&c, &format!("{}{widgets}", s.url), CLIENT_GO).await;
    assert_eq!((code, ct.as_str()), (StatusCode::OK, "application/json"));
    // A custom resource's errors follow its JSON answers.
    let (code, ct, _) = get(&c, &format!("{url}x"), CLIENT_GO).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert!(ct == "application/json" || ct == PB, "{ct}");
    // PartialObjectMetadata of a custom resource may be protobuf (meta.k8s.io's codecs).
    let (code, ct, pb) = get(
        &c,
        &format!("{}{widgets}", s.url),
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!((code, ct.as_str()), (StatusCode::OK, PB));
    let (_, _, raw) = envelope(&pb);
    let list = meta::PartialObjectMetadataList::decode(raw.as_slice()).unwrap();
    assert_eq!(list.items.len(), 1);
}

/// Reads whole frames (4-byte big-endian length, then a WatchEvent) until `n` arrived.
async fn frames(
    resp: &mut reqwest::Response,
    buf: &mut Vec<u8>,
    n: usize,
) -> Vec<meta::WatchEvent> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        while buf.len() >= 4 {
            let len = u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
            if buf.len() < 4 + len {
                break;
            }
            let ev = meta::WatchEvent::decode(&buf[4..4 + len]).expect("WatchEvent frame");
            buf.drain(..4 + len);
            out.push(ev);
        }
        if out.len() >= n {
            return out;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => buf.extend_from_slice(&chunk),
            other => panic!("watch ended after {} frames: {other:?}", out.len()),
        }
    }
}

fn event_object(ev: &meta::WatchEvent) -> (String, String, Vec<u8>) {
    envelope(ev.object.as_ref().unwrap().raw.as_deref().unwrap())
}

#[tokio::test]
async fn protobuf_watch_frames_decode_with_k8s_pb() {
    use k8s_pb::api::core::v1::ConfigMap;
    let s = Server::start();
    let c = s.client();
    let cms = "/api/v1/namespaces/default/configmaps";
    let mut resp = c
        .get(format!(
            "{}{cms}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=60",
            s.url
        ))
        .header("accept", CLIENT_GO)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        resp.headers()["content-type"],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let mut buf = Vec::new();
    // The initial state (kube-root-ca.crt, once its controller made it) ends with a BOOKMARK.
    let mut initial = Vec::new();
    loop {
        let ev = frames(&mut resp, &mut buf, 1).await.remove(0);
        let t = ev.r#type.clone().unwrap();
        let (av, kind, raw) = event_object(&ev);
        assert_eq!((av.as_str(), kind.as_str()), ("v1", "ConfigMap"));
        let cm = ConfigMap::decode(raw.as_slice()).unwrap();
        let meta = cm.metadata.unwrap();
        if t == "BOOKMARK" {
            assert_eq!(
                meta.annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str),
                Some("true")
            );
            assert!(meta.resource_version.is_some());
            break;
        }
        assert_eq!(t, "ADDED");
        initial.push(meta.name.unwrap());
    }
    for i in 0..3 {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("w{i}")}, "data": {"i": i.to_string()}});
        assert!(s
            .json(&c, Method::POST, cms, Some(cm))
            .await
            .code
            .is_success());
    }
    let r = s
        .json(
            &c,
            Method::PATCH,
            &format!("{cms}/w1"),
            Some(json!({"data": {"i": "changed"}})),
        )
        .await;
    assert!(r.code.is_success(), "{}", r.body);
    assert!(s
        .json(&c, Method::DELETE, &format!("{cms}/w2"), None)
        .await
        .code
        .is_success());
    let mut seen = Vec::new();
    while seen.len() < 5 {
        for ev in frames(&mut resp, &mut buf, 1).await {
            let t = ev.r#type.clone().unwrap();
            if t == "BOOKMARK" {
                continue;
            }
            let (_, _, raw) = event_object(&ev);
            let cm = ConfigMap::decode(raw.as_slice()).unwrap();
            let name = cm.metadata.unwrap().name.unwrap();
            if initial.contains(&name) {
                continue;
            }
            seen.push((t, name, cm.data.get("i").cloned().unwrap_or_default()));
        }
    }
    let want: Vec<(String, String, String)> = [
        ("ADDED", "w0", "0"),
        ("ADDED", "w1", "1"),
        ("ADDED", "w2", "2"),
        ("MODIFIED", "w1", "changed"),
        ("DELETED", "w2", "2"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(seen, want);
}

#[tokio::test]
async fn discovery_and_subresources_in_protobuf() {
    let s = Server::start();
    let c = s.client();
    for path in ["/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1"] {
        compare_settled(&s, &c, path).await;
    }
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    assert!(s
        .json(&c, Method::POST, deployments, Some(d))
        .await
        .code
        .is_success());
    assert_eq!(
        compare_settled(&s, &c, &format!("{deployments}/d/scale")).await,
        "Scale"
    );
    // A protobuf Scale update, answered in protobuf.
    let scale = api::autoscaling::v1::Scale {
        metadata: Some(meta::ObjectMeta {
            name: Some("d".into()),
            namespace: Some("default".into()),
            ..Default::default()
        }),
        spec: Some(api::autoscaling::v1::ScaleSpec { replicas: Some(4) }),
        status: None,
    };
    let r = c
        .put(format!("{}{deployments}/d/scale", s.url))
        .header("accept", CLIENT_GO)
        .header("content-type", PB)
        .body(pb_envelope("autoscaling/v1", "Scale", &scale))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], PB);
    let (av, kind, raw) = envelope(&r.bytes().await.unwrap());
    assert_eq!((av.as_str(), kind.as_str()), ("autoscaling/v1", "Scale"));
    let back = api::autoscaling::v1::Scale::decode(raw.as_slice()).unwrap();
    assert_eq!(back.spec.unwrap().replicas, Some(4));
}

/// Aggregated discovery as client-go asks for it when configured for protobuf: `/api` and
/// `/apis` in the `k8s\0` envelope of `apidiscovery.k8s.io/v2` (or `v2beta1` when that is
/// what comes first) `APIGroupDiscoveryList` with kube's parameterized Content-Type, the
/// same document as the JSON answer once decoded with k8s-pb's apidiscovery types.
#[tokio::test]
async fn aggregated_discovery_in_protobuf() {
    let s = Server::start();
    let c = s.client();
    let v2beta1 = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    for path in ["/api", "/apis"] {
        for (accept, v) in [(support::AGGREGATED_PB_ACCEPT, "v2"), (v2beta1, "v2beta1")] {
            let url = format!("{}{path}", s.url);
            let json_accept =
                format!("application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList");
            let (code, ct, body) = get(&c, &url, &json_accept).await;
            assert_eq!(code, StatusCode::OK);
            assert_eq!(ct, json_accept);
            let j: Value = serde_json::from_slice(&body).unwrap();
            let (code, ct, pb) = get(&c, &url, accept).await;
            assert_eq!(code, StatusCode::OK, "{}", String::from_utf8_lossy(&pb));
            assert_eq!(
                ct,
                format!("{PB};g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList")
            );
            let theirs = support::aggregated_discovery_from_pb(&pb, v);
            assert_eq!(norm(&theirs), norm(&j), "{path} {v}");
            // Rafter's own decoder reads it back too.
            assert_eq!(norm(&decode_object(&pb).unwrap()), norm(&j), "{path} {v}");
        }
    }
    // The deployments entry, typed.
    let (_, _, pb) = get(
        &c,
        &format!("{}/apis", s.url),
        support::AGGREGATED_PB_ACCEPT,
    )
    .await;
    let (_, _, raw) = envelope(&pb);
    let list = api::apidiscovery::v2::APIGroupDiscoveryList::decode(raw.as_slice()).unwrap();
    let apps = list
        .items
        .iter()
        .find(|g| g.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some("apps"))
        .expect("apps");
    let v1 = &apps.versions[0];
    assert_eq!(v1.version.as_deref(), Some("v1"));
    let d = v1
        .resources
        .iter()
        .find(|r| r.resource.as_deref() == Some("deployments"))
        .expect("deployments");
    assert_eq!(
        d.response_kind.as_ref().and_then(|k| k.kind.as_deref()),
        Some("Deployment")
    );
    assert_eq!(d.scope.as_deref(), Some("Namespaced"));
    assert!(d
        .subresources
        .iter()
        .any(|s| s.subresource.as_deref() == Some("scale")));
    // A plain protobuf Accept still gets the APIGroupList.
    let (code, ct, _) = get(&c, &format!("{}/apis", s.url), CLIENT_GO).await;
    assert_eq!((code, ct.as_str()), (StatusCode::OK, PB));
}

/// kubectl's typed create commands are client-go asking for protobuf: the created object and
/// the error Status come back as protobuf, and kubectl (client-go's decoder) reads both.
#[test]
fn kubectl_reads_protobuf_answers() {
    let s = Server::start();
    let o = s.kubectl(&["create", "namespace", "pbk", "-v=8"]);
    let err = support::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(support::stdout(&o).trim(), "namespace/pbk created");
    assert!(
        err.contains("Accept: application/vnd.kubernetes.protobuf,application/json"),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.trim() == "Content-Type: application/vnd.kubernetes.protobuf"),
        "{err}"
    );
    // The object kubectl prints is the protobuf answer decoded by client-go.
    let printed = s.ok(&[
        "create",
        "configmap",
        "pbc",
        "-n",
        "pbk",
        "--from-literal=a=b",
        "--from-literal=empty=",
        "-o",
        "json",
    ]);
    let printed: Value = serde_json::from_str(&printed).unwrap();
    let got: Value =
        serde_json::from_str(&s.ok(&["get", "configmap", "pbc", "-n", "pbk", "-o", "json"]))
            .unwrap();
    assert_eq!(norm(&printed), norm(&got));
    assert_eq!(printed["data"]["empty"], "");
    // A 409 in protobuf, read by client-go.
    let err = s.fails(&["create", "namespace", "pbk"]);
    assert!(
        err.contains("Error from server (AlreadyExists): namespaces \"pbk\" already exists"),
        "{err}"
    );
}
