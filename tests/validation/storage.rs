//! Storage, node, and discovery kinds: PersistentVolumes, the storage.k8s.io kinds,
//! RuntimeClasses and EndpointSlices refused as kube-apiserver v1.33 refuses them, and their
//! immutable fields.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::support::Server;
use super::Case;

const STORAGE: &str = "/apis/storage.k8s.io/v1";
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Leaks a formatted message: the case table holds `&'static str`.
fn msg(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn invalid(
    path: &'static str,
    body: Value,
    message: &'static str,
    causes: Vec<(&'static str, &'static str)>,
) -> Case {
    Case {
        path,
        body,
        code: 422,
        reason: "Invalid",
        message,
        causes: Some(causes),
    }
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        invalid(
            "/apis/storage.k8s.io/v1/storageclasses",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"},
                   "parameters": {"": "x"}, "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"}),
            "StorageClass.storage.k8s.io \"sc\" is invalid: [provisioner: Required value, parameters: Invalid value: \"\": field can not be empty., reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\", volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"]",
            vec![("provisioner", "FieldValueRequired"), ("parameters", "FieldValueInvalid"),
                 ("reclaimPolicy", "FieldValueNotSupported"), ("volumeBindingMode", "FieldValueNotSupported")],
        ),
        invalid(
            "/apis/storage.k8s.io/v1/storageclasses",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "topo"},
                   "provisioner": "example.com/x", "allowedTopologies": [
                       {"matchLabelExpressions": [{"key": "zone", "values": []}]},
                       {"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}]}]}),
            "StorageClass.storage.k8s.io \"topo\" is invalid: [allowedTopologies[0].matchLabelExpressions[0].values: Required value, allowedTopologies[1].matchLabelExpressions[0].values[1]: Duplicate value: \"a\"]",
            vec![("allowedTopologies[0].matchLabelExpressions[0].values", "FieldValueRequired"),
                 ("allowedTopologies[1].matchLabelExpressions[0].values[1]", "FieldValueDuplicate")],
        ),
        invalid(
            "/api/v1/persistentvolumes",
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
                   "spec": {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"], "capacity": {"storage": "0"},
                            "persistentVolumeReclaimPolicy": "Recycle", "hostPath": {"path": "/"},
                            "nfs": {"server": "s", "path": "/x"}}}),
            "PersistentVolume \"pv\" is invalid: [spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes, spec.capacity[storage]: Invalid value: \"0\": must be greater than zero, spec.nfs: Forbidden: may not specify more than 1 volume type, spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/']",
            vec![("spec.accessModes", "FieldValueForbidden"), ("spec.capacity[storage]", "FieldValueInvalid"),
                 ("spec.nfs", "FieldValueForbidden"), ("spec.persistentVolumeReclaimPolicy", "FieldValueForbidden")],
        ),
        invalid(
            "/api/v1/persistentvolumes",
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "empty"}, "spec": {}}),
            "PersistentVolume \"empty\" is invalid: [spec.accessModes: Required value, spec.capacity: Required value, spec.capacity: Unsupported value: core.ResourceList(nil): supported values: \"storage\", spec: Required value: must specify a volume type]",
            vec![("spec.accessModes", "FieldValueRequired"), ("spec.capacity", "FieldValueRequired"),
                 ("spec.capacity", "FieldValueNotSupported"), ("spec", "FieldValueRequired")],
        ),
        invalid(
            "/api/v1/persistentvolumes",
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "local"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "local": {"path": "/a/../b"}}}),
            "PersistentVolume \"local\" is invalid: [spec.local.path: Invalid value: \"/a/../b\": must not contain '..', spec.nodeAffinity: Required value: Local volume requires node affinity]",
            vec![("spec.local.path", "FieldValueInvalid"), ("spec.nodeAffinity", "FieldValueRequired")],
        ),
        invalid(
            "/api/v1/persistentvolumes",
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "affinity"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "local": {"path": "/d"},
                            "nodeAffinity": {"required": {"nodeSelectorTerms": [{
                                "matchExpressions": [{"key": "k", "operator": "In"}],
                                "matchFields": [{"key": "spec.x", "operator": "In", "values": ["a"]}]}]}}}}),
            "PersistentVolume \"affinity\" is invalid: [spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].key: Invalid value: \"spec.x\": not a valid field selector key]",
            vec![("spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values", "FieldValueRequired"),
                 ("spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].key", "FieldValueInvalid")],
        ),
        invalid(
            "/apis/storage.k8s.io/v1/csidrivers",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
                   "spec": {"fsGroupPolicy": "Sometimes", "volumeLifecycleModes": ["Persistent", "Forever"],
                            "tokenRequests": [{"audience": "a", "expirationSeconds": 60}, {"audience": "a"}],
                            "nodeAllocatableUpdatePeriodSeconds": 5}}),
            "CSIDriver.storage.k8s.io \"csi.example.com\" is invalid: [spec.fsGroupPolicy: Unsupported value: \"Sometimes\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\", spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes, spec.tokenRequests[1].audience: Duplicate value: \"a\", spec.volumeLifecycleModes: Unsupported value: \"Forever\": supported values: \"Persistent\", \"Ephemeral\"]",
            vec![("spec.fsGroupPolicy", "FieldValueNotSupported"), ("spec.tokenRequests[0].expirationSeconds", "FieldValueInvalid"),
                 ("spec.tokenRequests[1].audience", "FieldValueDuplicate"), ("spec.volumeLifecycleModes", "FieldValueNotSupported")],
        ),
        invalid(
            "/apis/storage.k8s.io/v1/volumeattachments",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
                   "spec": {"attacher": "", "nodeName": "Node_1", "source": {}}}),
            msg(format!("VolumeAttachment.storage.k8s.io \"va\" is invalid: [spec.attacher: Required value, spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName, spec.nodeName: Invalid value: \"Node_1\": {SUBDOMAIN}, spec.attacher: Invalid value: \"\": {SUBDOMAIN}]")),
            // ValidateVolumeAttachment and the v1 checks both require the attacher.
            vec![("spec.attacher", "FieldValueRequired"), ("spec.source", "FieldValueRequired"),
                 ("spec.nodeName", "FieldValueInvalid"), ("spec.attacher", "FieldValueRequired"),
                 ("spec.attacher", "FieldValueInvalid")],
        ),
        invalid(
            "/apis/node.k8s.io/v1/runtimeclasses",
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"},
                   "handler": "Bad.Handler", "overhead": {"podFixed": {"cpu": "-1"}},
                   "scheduling": {"nodeSelector": {"a": "b c"},
                                  "tolerations": [{"key": "k", "operator": "Exists"}, {"key": "k", "operator": "Exists"}]}}),
            msg(format!("RuntimeClass.node.k8s.io \"rc\" is invalid: [handler: Invalid value: \"Bad.Handler\": {LABEL}, overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0, scheduling.nodeSelector: Invalid value: \"b c\": {LABEL_VALUE}, scheduling.tolerations[1]: Duplicate value: core.Toleration{{Key:\"k\", Operator:\"Exists\", Value:\"\", Effect:\"\", TolerationSeconds:(*int64)(nil)}}]")),
            vec![("handler", "FieldValueInvalid"), ("overhead.limits[cpu]", "FieldValueInvalid"),
                 ("scheduling.nodeSelector", "FieldValueInvalid"), ("scheduling.tolerations[1]", "FieldValueDuplicate")],
        ),
        invalid(
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "es"},
                   "addressType": "IPv4",
                   "endpoints": [{"addresses": ["10.0.0.1", "fe80::1", "127.0.0.1"], "hostname": "Host"}, {"addresses": []}],
                   "ports": [{"name": "http", "protocol": "ICMP"}, {"name": "http"}]}),
            msg(format!("EndpointSlice.discovery.k8s.io \"es\" is invalid: [endpoints[0].addresses[1]: Invalid value: \"fe80::1\": must be an IPv4 address, endpoints[0].addresses[1]: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10), endpoints[0].addresses[2]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128), endpoints[0].hostname: Invalid value: \"Host\": {LABEL}, endpoints[1].addresses: Required value: must contain at least 1 address, ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\", ports[1].name: Duplicate value: \"http\"]")),
            vec![("endpoints[0].addresses[1]", "FieldValueInvalid"), ("endpoints[0].addresses[1]", "FieldValueInvalid"),
                 ("endpoints[0].addresses[2]", "FieldValueInvalid"), ("endpoints[0].hostname", "FieldValueInvalid"),
                 ("endpoints[1].addresses", "FieldValueRequired"), ("ports[0].protocol", "FieldValueNotSupported"),
                 ("ports[1].name", "FieldValueDuplicate")],
        ),
        invalid(
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "notype"}}),
            "EndpointSlice.discovery.k8s.io \"notype\" is invalid: addressType: Required value",
            vec![("addressType", "FieldValueRequired")],
        ),
        invalid(
            "/apis/storage.k8s.io/v1/csinodes",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node1"},
                   "spec": {"drivers": [
                       {"name": "d.example.com", "nodeID": "", "allocatable": {"count": -1}, "topologyKeys": ["zone", "zone"]},
                       {"name": "d.example.com", "nodeID": "n"}]}}),
            "CSINode.storage.k8s.io \"node1\" is invalid: [spec.drivers[0].nodeID: Required value, spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0, spec.drivers[0]: Duplicate value: \"zone\", spec.drivers[1].name: Duplicate value: \"d.example.com\"]",
            vec![("spec.drivers[0].nodeID", "FieldValueRequired"), ("spec.drivers[0].allocatable.count", "FieldValueInvalid"),
                 ("spec.drivers[0]", "FieldValueDuplicate"), ("spec.drivers[1].name", "FieldValueDuplicate")],
        ),
        invalid(
            "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "cap"},
                   "storageClassName": "", "capacity": "-1Gi", "nodeTopology": {"matchLabels": {"zone": "a b"}}}),
            msg(format!("CSIStorageCapacity.storage.k8s.io \"cap\" is invalid: [nodeTopology.matchLabels: Invalid value: \"a b\": {LABEL_VALUE}, storageClassName: Invalid value: \"\": {SUBDOMAIN}, capacity: Invalid value: \"-1Gi\": must be greater than or equal to 0]")),
            vec![("nodeTopology.matchLabels", "FieldValueInvalid"), ("storageClassName", "FieldValueInvalid"),
                 ("capacity", "FieldValueInvalid")],
        ),
    ]
}

/// Creates `body` at `path` and returns the stored object.
async fn post(s: &Server, c: &reqwest::Client, path: &str, body: Value) -> Value {
    let r = s.json(c, Method::POST, path, Some(body)).await;
    assert_eq!(r.code, StatusCode::CREATED, "{path}: {}", r.body);
    r.body
}

/// PUTs `obj` back to `path/<name>` and returns kube's refusal message.
async fn refused(s: &Server, c: &reqwest::Client, path: &str, obj: Value) -> String {
    let name = obj["metadata"]["name"].as_str().unwrap().to_string();
    let r = s
        .json(c, Method::PUT, &format!("{path}/{name}"), Some(obj))
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    r.body["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn storage_node_discovery_immutable_fields() {
    let s = Server::start();
    let c = s.client();

    let sc_path = format!("{STORAGE}/storageclasses");
    let mut sc = post(&s, &c, &sc_path, json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "fast"}, "provisioner": "example.com/fast", "parameters": {"tier": "1"}})).await;
    sc["provisioner"] = json!("example.com/slow");
    sc["parameters"] = json!({"tier": "2"});
    sc["reclaimPolicy"] = json!("Retain");
    sc["volumeBindingMode"] = json!("WaitForFirstConsumer");
    sc["allowVolumeExpansion"] = json!(true);
    assert_eq!(
        refused(&s, &c, &sc_path, sc).await,
        "StorageClass.storage.k8s.io \"fast\" is invalid: [parameters: Forbidden: updates to parameters are forbidden., provisioner: Forbidden: updates to provisioner are forbidden., reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden., volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable]"
    );

    let pv_path = "/api/v1/persistentvolumes";
    let mut pv = post(&s, &c, pv_path, json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/data"}}})).await;
    pv["spec"]["hostPath"]["path"] = json!("/other");
    pv["spec"]["volumeMode"] = json!("Block");
    let m = refused(&s, &c, pv_path, pv).await;
    assert!(
        m.starts_with("PersistentVolume \"data\" is invalid: [spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"),
        "{m}"
    );
    assert!(
        m.ends_with(", volumeMode: Invalid value: \"Block\": field is immutable]"),
        "{m}"
    );

    let csi_path = format!("{STORAGE}/csidrivers");
    let mut d = post(
        &s,
        &c,
        &csi_path,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
        "metadata": {"name": "csi.example.com"}, "spec": {}}),
    )
    .await;
    d["spec"]["attachRequired"] = json!(false);
    d["spec"]["volumeLifecycleModes"] = json!(["Ephemeral"]);
    d["spec"]["podInfoOnMount"] = json!(true);
    assert_eq!(
        refused(&s, &c, &csi_path, d).await,
        "CSIDriver.storage.k8s.io \"csi.example.com\" is invalid: [spec.attachedRequired: Invalid value: false: field is immutable, spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{\"Ephemeral\"}: field is immutable]"
    );

    let va_path = format!("{STORAGE}/volumeattachments");
    let mut va = post(
        &s,
        &c,
        &va_path,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": "va"}, "spec": {"attacher": "csi.example.com", "nodeName": "n1",
        "source": {"persistentVolumeName": "data"}}}),
    )
    .await;
    assert_eq!(va["status"], json!({"attached": false}), "{va}");
    va["spec"]["nodeName"] = json!("n2");
    assert_eq!(
        refused(&s, &c, &va_path, va).await,
        "VolumeAttachment.storage.k8s.io \"va\" is invalid: spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:\"csi.example.com\", Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(0xc000a1b2c0), InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:\"n2\"}: field is immutable"
    );

    let node_path = format!("{STORAGE}/csinodes");
    let mut n = post(&s, &c, &node_path, json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
        "metadata": {"name": "n1"}, "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "id1"}]}})).await;
    n["spec"]["drivers"][0]["nodeID"] = json!("id2");
    assert_eq!(
        refused(&s, &c, &node_path, n).await,
        "CSINode.storage.k8s.io \"n1\" is invalid: spec.drivers: Invalid value: storage.CSINodeDriver{Name:\"csi.example.com\", NodeID:\"id2\", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable"
    );

    let cap_path = format!("{STORAGE}/namespaces/default/csistoragecapacities");
    let mut cap = post(
        &s,
        &c,
        &cap_path,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
        "metadata": {"name": "cap"}, "storageClassName": "fast", "capacity": "1Gi"}),
    )
    .await;
    cap["storageClassName"] = json!("slow");
    cap["nodeTopology"] = json!({"matchLabels": {"zone": "a"}});
    cap["capacity"] = json!("2Gi");
    assert_eq!(
        refused(&s, &c, &cap_path, cap).await,
        "CSIStorageCapacity.storage.k8s.io \"cap\" is invalid: [nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"zone\":\"a\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable, storageClassName: Invalid value: \"slow\": field is immutable]"
    );

    let rc_path = "/apis/node.k8s.io/v1/runtimeclasses";
    let mut rc = post(
        &s,
        &c,
        rc_path,
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": "gvisor"}, "handler": "runsc"}),
    )
    .await;
    rc["handler"] = json!("kata");
    rc["scheduling"] = json!({"nodeSelector": {"sandbox": "yes"}});
    assert_eq!(
        refused(&s, &c, rc_path, rc).await,
        "RuntimeClass.node.k8s.io \"gvisor\" is invalid: handler: Invalid value: \"kata\": field is immutable"
    );

    let es_path = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices";
    let mut es = post(&s, &c, es_path, json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "web"}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "deprecatedTopology": {"a": "b"}}], "ports": [{"port": 80}]})).await;
    assert_eq!(
        es["ports"],
        json!([{"name": "", "port": 80, "protocol": "TCP"}])
    );
    assert!(
        es["endpoints"][0].get("deprecatedTopology").is_none(),
        "{es}"
    );
    es["addressType"] = json!("FQDN");
    es["endpoints"] = json!([{"addresses": ["web.example.com"]}]);
    assert_eq!(
        refused(&s, &c, es_path, es).await,
        "EndpointSlice.discovery.k8s.io \"web\" is invalid: addressType: Invalid value: \"FQDN\": field is immutable"
    );
}
