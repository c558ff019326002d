//! Core-group and neighbouring types: Events (both APIs), LimitRanges, ResourceQuotas,
//! Endpoints, Nodes and ControllerRevisions, as kube-apiserver v1.33 refuses them.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::support::Server;
use super::Case;

const NS: &str = "/api/v1/namespaces/default";
const EV: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
const SUB: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const QNAME: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// How kube prints a `resource.Quantity` held in a field error (`%#v` of the struct).
fn q(value: i64, scale: i32, s: &str) -> String {
    format!("resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:\"{s}\", Format:\"DecimalSI\"}}")
}

pub(super) fn cases() -> Vec<Case> {
    let fraction = q(15, -1, "");
    vec![
        Case {
            path: "/api/v1/namespaces/default/endpoints",
            body: json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep"}, "subsets": [
                {"addresses": [{"ip": "127.0.0.1", "nodeName": "Bad_Node"}, {"ip": "nope"}],
                 "ports": [{"port": 80}, {"name": "b", "port": 0, "protocol": "HTTP"}]},
                {}]}),
            code: 422,
            reason: "Invalid",
            message: leak(format!("Endpoints \"ep\" is invalid: [subsets[0].addresses[0].nodeName: Invalid value: \"Bad_Node\": {SUB}, subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128), subsets[0].addresses[1].ip: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), subsets[0].addresses[1].ip: Invalid value: \"nope\": must be a valid IP address, subsets[0].ports[0].name: Required value, subsets[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive, subsets[0].ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\", subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`]")),
            causes: Some(vec![
                ("subsets[0].addresses[0].nodeName", "FieldValueInvalid"),
                ("subsets[0].addresses[0].ip", "FieldValueInvalid"),
                ("subsets[0].addresses[1].ip", "FieldValueInvalid"),
                ("subsets[0].addresses[1].ip", "FieldValueInvalid"),
                ("subsets[0].ports[0].name", "FieldValueRequired"),
                ("subsets[0].ports[1].port", "FieldValueInvalid"),
                ("subsets[0].ports[1].protocol", "FieldValueNotSupported"),
                ("subsets[1]", "FieldValueRequired"),
            ]),
        },
        Case {
            path: "/api/v1/nodes",
            body: json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                         "spec": {"podCIDRs": ["10.0.0.0/24", "10.1.0.0/24"], "taints": [
                            {"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"},
                            {"key": "bad key", "effect": "Sometimes"}]},
                         "status": {"capacity": {"pods": "1.5", "cpu": "-2"}}}),
            code: 422,
            reason: "Invalid",
            message: leak(format!("Node \"n1\" is invalid: [metadata.taints[1]: Duplicate value: core.Taint{{Key:\"k\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}}: taints must be unique by key and effect pair, metadata.taints[2].key: Invalid value: \"bad key\": {QNAME}, metadata.taints[2].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\", status.capacity.cpu: Invalid value: \"-2\": must be greater than or equal to 0, status.capacity.pods: Invalid value: {fraction}: must be an integer, status.allocatable.cpu: Invalid value: \"-2\": must be greater than or equal to 0, status.allocatable.pods: Invalid value: {fraction}: must be an integer, spec.podCIDRs: Invalid value: []string{{\"10.0.0.0/24\", \"10.1.0.0/24\"}}: may specify no more than one CIDR for each IP family]")),
            causes: Some(vec![
                ("metadata.taints[1]", "FieldValueDuplicate"),
                ("metadata.taints[2].key", "FieldValueInvalid"),
                ("metadata.taints[2].effect", "FieldValueNotSupported"),
                ("status.capacity.cpu", "FieldValueInvalid"),
                ("status.capacity.pods", "FieldValueInvalid"),
                ("status.allocatable.cpu", "FieldValueInvalid"),
                ("status.allocatable.pods", "FieldValueInvalid"),
                ("spec.podCIDRs", "FieldValueInvalid"),
            ]),
        },
        Case {
            path: "/apis/apps/v1/namespaces/default/controllerrevisions",
            body: json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "cr"}, "revision": -1}),
            code: 422,
            reason: "Invalid",
            message: "ControllerRevision.apps \"cr\" is invalid: [data: Required value: data is mandatory, revision: Invalid value: -1: must be greater than or equal to 0]",
            causes: Some(vec![("data", "FieldValueRequired"), ("revision", "FieldValueInvalid")]),
        },
        Case {
            path: "/api/v1/namespaces/default/limitranges",
            body: json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"}, "spec": {"limits": [
                {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
                {"type": "Pod", "default": {"cpu": "1"}},
                {"type": "Widget"}]}}),
            code: 422,
            reason: "Invalid",
            message: leak(format!("LimitRange \"lr\" is invalid: [spec.limits[0].min[cpu]: Invalid value: {two}: min value 2 is greater than max value 1, spec.limits[0].defaultRequest[cpu]: Invalid value: {one}: min value 2 is greater than default request value 1, spec.limits[0].default[cpu]: Invalid value: {two}: min value 2 is greater than default value 1, spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod', spec.limits[2].type: Invalid value: \"Widget\": must be a standard limit type or fully qualified]",
                two = q(2, 0, "2"), one = q(1, 0, "1"))),
            causes: Some(vec![
                ("spec.limits[0].min[cpu]", "FieldValueInvalid"),
                ("spec.limits[0].defaultRequest[cpu]", "FieldValueInvalid"),
                ("spec.limits[0].default[cpu]", "FieldValueInvalid"),
                ("spec.limits[1].default", "FieldValueForbidden"),
                ("spec.limits[2].type", "FieldValueInvalid"),
            ]),
        },
        Case {
            path: "/api/v1/namespaces/default/resourcequotas",
            body: json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "sel"},
                         "spec": {"hard": {"cpu": "1"}, "scopeSelector": {"matchExpressions": [
                            {"scopeName": "BestEffort", "operator": "In", "values": ["x"]},
                            {"scopeName": "Nope", "operator": "Exists"}]}}}),
            code: 422,
            reason: "Invalid",
            message: "ResourceQuota \"sel\" is invalid: [spec.scopeSelector.matchExpressions: Invalid value: core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:\"BestEffort\", Operator:\"In\", Values:[]string{\"x\"}}, core.ScopedResourceSelectorRequirement{ScopeName:\"Nope\", Operator:\"Exists\", Values:[]string(nil)}}}: unsupported scope applied to resource, spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity, spec.scopeSelector.matchExpressions.scopeName: Invalid value: \"Nope\": unsupported scope]",
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/resourcequotas",
            body: json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "rq"},
                         "spec": {"hard": {"pods": "1500m", "storage": "1Gi", "cpu": "-1"},
                                  "scopes": ["BestEffort", "NotBestEffort"]}}),
            code: 422,
            reason: "Invalid",
            message: leak(format!("ResourceQuota \"rq\" is invalid: [spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0, spec.hard[pods]: Invalid value: {}: must be an integer, spec.hard[storage]: Invalid value: \"storage\": must be a standard resource for quota, spec.scopes: Invalid value: []core.ResourceQuotaScope{{\"BestEffort\", \"NotBestEffort\"}}: unsupported scope applied to resource, spec.scopes: Invalid value: []core.ResourceQuotaScope{{\"BestEffort\", \"NotBestEffort\"}}: conflicting scopes]",
                q(1500, -3, "1500m"))),
            causes: None,
        },
        Case {
            path: "/api/v1/namespaces/default/events",
            body: json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
                         "involvedObject": {"kind": "Pod", "name": "p", "namespace": "x"}, "reason": "R"}),
            code: 422,
            reason: "Invalid",
            message: "Event \"e1\" is invalid: involvedObject.namespace: Invalid value: \"x\": does not match event.namespace",
            causes: Some(vec![("involvedObject.namespace", "FieldValueInvalid")]),
        },
        Case {
            path: EV,
            body: json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e2"},
                         "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
                         "type": "Info", "deprecatedCount": 3}),
            code: 422,
            reason: "Invalid",
            message: "Event.events.k8s.io \"e2\" is invalid: [eventTime: Required value, type: Invalid value: \"\": has invalid value: Info, count: Invalid value: \"\": needs to be unset]",
            causes: Some(vec![
                ("eventTime", "FieldValueRequired"),
                ("type", "FieldValueInvalid"),
                ("count", "FieldValueInvalid"),
            ]),
        },
        Case {
            path: EV,
            body: json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e3"},
                         "eventTime": "2024-01-02T03:04:05.000000Z", "regarding": {"kind": "Node", "name": "n1"},
                         "reason": "R", "type": "Normal", "series": {"count": 1}}),
            code: 422,
            reason: "Invalid",
            message: leak(format!("Event.events.k8s.io \"e3\" is invalid: [reportingController: Required value, reportingController: Invalid value: \"\": name part must be non-empty, reportingController: Invalid value: \"\": {QNAME}, reportingInstance: Required value, action: Required value, series.count: Invalid value: \"\": should be at least 2, series.lastObservedTime: Required value]")),
            causes: Some(vec![
                ("reportingController", "FieldValueRequired"),
                ("reportingController", "FieldValueInvalid"),
                ("reportingController", "FieldValueInvalid"),
                ("reportingInstance", "FieldValueRequired"),
                ("action", "FieldValueRequired"),
                ("series.count", "FieldValueInvalid"),
                ("series.lastObservedTime", "FieldValueRequired"),
            ]),
        },
    ]
}

async fn post(s: &Server, c: &reqwest::Client, path: &str, body: Value) -> Value {
    let r = s.json(c, Method::POST, path, Some(body)).await;
    assert_eq!(r.code, StatusCode::CREATED, "{path}: {}", r.body);
    r.body
}

async fn put_refused(s: &Server, c: &reqwest::Client, path: &str, body: Value) -> String {
    let r = s.json(c, Method::PUT, path, Some(body)).await;
    assert_eq!(
        r.code,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{path}: {}",
        r.body
    );
    r.body["message"].as_str().unwrap_or("").to_string()
}

/// Updates the core types refuse: events.k8s.io Events are immutable but for their series.
#[tokio::test]
async fn core_updates_keep_immutable_fields() {
    let s = Server::start();
    let c = s.client();

    let mut ev = post(
        &s,
        &c,
        EV,
        json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "ok"},
               "eventTime": "2024-01-02T03:04:05.000000Z", "reportingController": "example.com/ctl",
               "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "type": "Normal",
               "note": "a", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}}),
    )
    .await;
    ev["note"] = json!("b");
    ev["series"] = json!({"count": 2, "lastObservedTime": "2024-01-02T03:05:05.000000Z"});
    assert_eq!(
        put_refused(&s, &c, &format!("{EV}/ok"), ev).await,
        "Event.events.k8s.io \"ok\" is invalid: message: Invalid value: \"b\": field is immutable"
    );
    // The same change through core/v1 is allowed (legacy rules only), when both APIs
    // serve one store.
    let mut core = s
        .json(&c, Method::GET, &format!("{NS}/events/ok"), None)
        .await;
    if core.code == StatusCode::OK {
        core.body["message"] = json!("b");
        let r = s
            .json(&c, Method::PUT, &format!("{NS}/events/ok"), Some(core.body))
            .await;
        assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    }

    // A ResourceQuota's scopes never change.
    let mut rq = post(
        &s,
        &c,
        &format!("{NS}/resourcequotas"),
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "be"},
               "spec": {"hard": {"pods": "2"}, "scopes": ["BestEffort"]}}),
    )
    .await;
    rq["spec"]["scopes"] = json!(["NotBestEffort"]);
    rq["spec"]["hard"] = json!({"pods": "3"});
    assert_eq!(
        put_refused(&s, &c, &format!("{NS}/resourcequotas/be"), rq).await,
        "ResourceQuota \"be\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"NotBestEffort\"}: field is immutable"
    );

    // A node's pod CIDRs and provider ID are set once.
    let mut node = post(
        &s,
        &c,
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "nu"},
               "spec": {"podCIDRs": ["10.0.0.0/24"], "providerID": "aws://1"}}),
    )
    .await;
    assert_eq!(node["spec"]["podCIDR"], "10.0.0.0/24");
    node["spec"]["podCIDR"] = json!("10.0.1.0/24");
    node["spec"]["podCIDRs"] = json!(["10.0.1.0/24"]);
    node["spec"]["providerID"] = json!("aws://2");
    assert_eq!(
        put_refused(&s, &c, "/api/v1/nodes/nu", node).await,
        "Node \"nu\" is invalid: [spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid, spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid]"
    );

    // A ControllerRevision's data never changes.
    let cr_path = "/apis/apps/v1/namespaces/default/controllerrevisions";
    let mut cr = post(
        &s,
        &c,
        cr_path,
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "cr2"},
               "data": {"a": 1}, "revision": 1}),
    )
    .await;
    cr["data"] = json!({"a": 2});
    assert_eq!(
        put_refused(&s, &c, &format!("{cr_path}/cr2"), cr).await,
        "ControllerRevision.apps \"cr2\" is invalid: data: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:\"\", Kind:\"\"}, Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x32, 0x7d}, ContentEncoding:\"\", ContentType:\"application/json\"}: field is immutable"
    );
}

/// Events take no part in garbage collection: a foreground delete removes one at once.
#[tokio::test]
async fn events_are_deleted_without_gc_finalizers() {
    let s = Server::start();
    let c = s.client();
    for (path, body) in [
        (
            format!("{NS}/events"),
            json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "gone"},
                   "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}}),
        ),
        (
            EV.to_string(),
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "gone"},
                   "eventTime": "2024-01-02T03:04:05.000000Z", "reportingController": "ctl",
                   "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "type": "Normal",
                   "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}}),
        ),
    ] {
        post(&s, &c, &path, body).await;
        let r = s
            .json(
                &c,
                Method::DELETE,
                &format!("{path}/gone"),
                Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})),
            )
            .await;
        assert_eq!(r.code, StatusCode::OK, "{path}: {}", r.body);
        let get = s.json(&c, Method::GET, &format!("{path}/gone"), None).await;
        assert_eq!(get.code, StatusCode::NOT_FOUND, "{path}: {}", get.body);
    }
}
