//! Server-side `Table` rendering (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), the
//! equivalent of kube-apiserver's `pkg/printers/internalversion` printers plus the default
//! table convertor (Name + "Created At") for everything without a printer.
//!
//! Input is plain JSON objects as stored; output is a `meta.k8s.io` Table document. Column
//! definitions and cells follow upstream exactly, including the "wide" (priority 1) columns,
//! which the server always fills. Ages are computed from the `now` parameter with upstream's
//! `duration.HumanDuration` rules.
//!
//! This module is pure: no clock, no storage, no HTTP. It does not know about custom resources'
//! `additionalPrinterColumns` (the CRD layer renders those), content negotiation, or how the list
//! was produced (the caller passes the list metadata through).

use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Map, Value};

/// `?includeObject=` of a Table request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// No object in rows (`"object": null`).
    None,
    /// A `PartialObjectMetadata` per row (the default).
    #[default]
    Metadata,
    /// The full object per row.
    Object,
}

impl IncludeObject {
    /// Parses the query value; empty means the default (`Metadata`). Unknown values are `None`
    /// (the caller reports the error).
    pub fn parse(s: &str) -> Option<IncludeObject> {
        match s {
            "" | "Metadata" => Some(IncludeObject::Metadata),
            "None" => Some(IncludeObject::None),
            "Object" => Some(IncludeObject::Object),
            _ => None,
        }
    }
}

/// Renders `items` (full objects of `resource` in API group `info_group`) as a Table.
///
/// `list_meta` becomes the Table's `metadata` (resourceVersion, continue, remainingItemCount).
/// `api_version` selects `meta.k8s.io/v1` or `meta.k8s.io/v1beta1` (either the bare version or
/// the full group/version may be given; anything else means v1).
pub fn table(
    printer: Printer,
    items: &[Value],
    list_meta: Value,
    include: IncludeObject,
    api_version: &str,
    now: Timestamp,
) -> Value {
    let gv = match api_version {
        "v1beta1" | "meta.k8s.io/v1beta1" => "meta.k8s.io/v1beta1",
        _ => "meta.k8s.io/v1",
    };
    let ctx = Ctx { now };
    let mut ordered: Vec<&Value> = items.iter().collect();
    if let Some(order) = printer.sort {
        ordered.sort_by(|a, b| order(a, b));
    }
    let rows: Vec<Value> = ordered
        .into_iter()
        .map(|item| {
            let row = (printer.row)(item, &ctx);
            let mut r = Map::new();
            r.insert("cells".into(), Value::Array(row.cells));
            if let Some(c) = row.conditions {
                r.insert("conditions".into(), c);
            }
            let object = match include {
                IncludeObject::None => Value::Null,
                IncludeObject::Object => item.clone(),
                IncludeObject::Metadata => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": gv,
                    "metadata": item.get("metadata").cloned().unwrap_or_else(|| json!({})),
                }),
            };
            r.insert("object".into(), object);
            Value::Object(r)
        })
        .collect();
    let columns: Vec<Value> = printer
        .columns
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "type": c.ty,
                "format": c.format,
                "description": c.desc,
                "priority": c.priority,
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": gv,
        "metadata": list_meta,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

/// Column names (in order) of the Table for a resource; handy for tests and callers that only
/// need headers.
pub fn column_names(printer: Printer) -> Vec<&'static str> {
    printer.columns.iter().map(|c| c.name).collect()
}

/// Upstream's `duration.HumanDuration`: "5s", "2m30s", "3h", "2d5h", "3y45d", ...
pub fn human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        if s == 0 {
            return format!("{minutes}m");
        }
        return format!("{minutes}m{s}s");
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        if m == 0 {
            return format!("{hours}h");
        }
        format!("{hours}h{m}m")
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            return format!("{}d", hours / 24);
        }
        format!("{}d{}h", hours / 24, h)
    } else if hours < 24 * 365 * 2 {
        format!("{}d", hours / 24)
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            return format!("{}y", hours / 24 / 365);
        }
        format!("{}y{}d", hours / 24 / 365, dy)
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

// ---------------------------------------------------------------------------------------------
// Plumbing

struct Ctx {
    now: Timestamp,
}

impl Ctx {
    /// `translateTimestampSince`: "<unknown>" for a missing/zero timestamp.
    fn since(&self, ts: Option<&Value>) -> String {
        match ts.and_then(parse_ts) {
            Some(t) => human_duration(self.now.duration_since(t)),
            None => "<unknown>".into(),
        }
    }

    fn age(&self, obj: &Value) -> Value {
        Value::String(self.since(get(obj, &["metadata", "creationTimestamp"])))
    }
}

struct Row {
    cells: Vec<Value>,
    conditions: Option<Value>,
}

impl Row {
    fn new(cells: Vec<Value>) -> Row {
        Row {
            cells,
            conditions: None,
        }
    }
}

struct Col {
    name: &'static str,
    ty: &'static str,
    format: &'static str,
    desc: &'static str,
    priority: i64,
}

const fn col(name: &'static str, ty: &'static str, desc: &'static str) -> Col {
    Col {
        name,
        ty,
        format: "",
        desc,
        priority: 0,
    }
}

const fn wide(name: &'static str, ty: &'static str, desc: &'static str) -> Col {
    Col {
        name,
        ty,
        format: "",
        desc,
        priority: 1,
    }
}

const NAME: Col = Col {
    name: "Name",
    ty: "string",
    format: "name",
    desc: D_NAME,
    priority: 0,
};
const AGE: Col = col("Age", "string", D_CREATED);
const D_CONTAINERS: &str = "Names of each container in the template.";
const D_IMAGES: &str = "Images referenced by each container in the template.";

/// How one kind renders as a Table: its columns, its row function and, for a few kinds, the
/// order rows are printed in.
#[derive(Clone, Copy)]
pub struct Printer {
    columns: &'static [Col],
    row: fn(&Value, &Ctx) -> Row,
    sort: Option<fn(&Value, &Value) -> std::cmp::Ordering>,
}

/// kube-apiserver's default table convertor (name and creation time).
pub const DEFAULT: Printer = printers::DEFAULT;

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    if cur.is_null() {
        None
    } else {
        Some(cur)
    }
}

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    get(v, path).and_then(Value::as_str).unwrap_or("")
}

fn i(v: &Value, path: &[&str]) -> i64 {
    get(v, path).and_then(Value::as_i64).unwrap_or(0)
}

fn b(v: &Value, path: &[&str]) -> Option<bool> {
    get(v, path).and_then(Value::as_bool)
}

fn arr<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    get(v, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn obj_len(v: &Value, path: &[&str]) -> i64 {
    get(v, path)
        .and_then(Value::as_object)
        .map(|m| m.len() as i64)
        .unwrap_or(0)
}

fn parse_ts(v: &Value) -> Option<Timestamp> {
    v.as_str()?.parse::<Timestamp>().ok()
}

fn or_none(x: &str) -> String {
    if x.is_empty() {
        "<none>".into()
    } else {
        x.to_string()
    }
}

/// A resource.Quantity or IntOrString as text (stored form).
fn scalar_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(x) => Some(x.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn name_cell(obj: &Value) -> Value {
    Value::String(s(obj, &["metadata", "name"]).to_string())
}

/// `labels.FormatLabels`: sorted `k=v` pairs, `<none>` when empty.
fn format_labels(v: Option<&Value>) -> String {
    let mut pairs: Vec<String> = v
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        return "<none>".into();
    }
    pairs.sort();
    pairs.join(",")
}

/// `metav1.LabelSelectorAsSelector(sel).String()`; `Err` when the selector is invalid.
fn selector_string(sel: Option<&Value>) -> Result<String, ()> {
    let Some(sel) = sel else {
        return Ok(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
    {
        let key = e
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        values.sort();
        let text = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" if !values.is_empty() => format!("{key} in ({})", values.join(",")),
            "NotIn" if !values.is_empty() => format!("{key} notin ({})", values.join(",")),
            "Exists" if values.is_empty() => key.clone(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return Err(()),
        };
        reqs.push((key, text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(reqs
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(","))
}

/// `metav1.FormatLabelSelector`.
fn format_label_selector(sel: Option<&Value>) -> String {
    match selector_string(sel) {
        Err(()) => "<error>".into(),
        Ok(x) if x.is_empty() => "<none>".into(),
        Ok(x) => x,
    }
}

/// `layoutContainerCells`: comma-joined container names and images.
fn containers_cells(containers: &[Value]) -> (Value, Value) {
    let names: Vec<&str> = containers.iter().map(|c| s(c, &["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| s(c, &["image"])).collect();
    (json!(names.join(",")), json!(images.join(",")))
}

fn list_with_more(list: Vec<String>, more: bool, count: usize, max: usize) -> String {
    let ret = list.join(",");
    if more {
        return format!("{ret} + {} more...", count - max);
    }
    if ret.is_empty() {
        return "<unset>".into();
    }
    ret
}

fn bool_ptr(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    }
}

// Column descriptions: the OpenAPI (godoc) descriptions of the fields each column shows.
const D_NAME: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const D_CREATED: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const D_POD_IP: &str = "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.";
const D_POD_NODE: &str = "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename";
const D_POD_NOMINATED: &str = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.";
const D_POD_GATES: &str = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates";
const D_RC_DESIRED: &str = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller";
const D_RC_CURRENT: &str = "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller";
const D_RC_READY: &str = "The number of ready replicas for this replication controller.";
const D_RC_SELECTOR: &str = "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_RS_DESIRED: &str = "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
const D_RS_CURRENT: &str = "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
const D_RS_READY: &str =
    "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.";
const D_RS_SELECTOR: &str = "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_DS_DESIRED: &str = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_CURRENT: &str = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_READY: &str = "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.";
const D_DS_UPDATED: &str = "The total number of nodes that are running updated daemon pod";
const D_DS_AVAILABLE: &str = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)";
const D_POD_NODE_SELECTOR: &str = "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/";
const D_DS_SELECTOR: &str = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_JOB_SUCCEEDED: &str = "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.";
const D_JOB_SELECTOR: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_CJ_SCHEDULE: &str = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.";
const D_CJ_TZ: &str = "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";
const D_CJ_SUSPEND: &str = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.";
const D_CJ_ACTIVE: &str = "A list of pointers to currently running jobs.";
const D_CJ_LAST: &str = "Information when was the last time the job was successfully scheduled.";
const D_SVC_TYPE: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const D_SVC_CLUSTER_IP: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_EXTERNAL_IPS: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const D_SVC_PORTS: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_SELECTOR: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";
const D_EP_SUBSETS: &str = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.";
const D_NODE_KUBELET: &str = "Kubelet Version reported by the node.";
const D_NODE_ADDRESSES: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";
const D_NODE_OS: &str =
    "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).";
const D_NODE_KERNEL: &str =
    "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).";
const D_NODE_CR: &str = "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).";
const D_EV_LAST: &str = "The time at which the most recent occurrence of this event was recorded.";
const D_EV_TYPE: &str =
    "Type of this event (Normal, Warning), new types could be added in the future";
const D_EV_REASON: &str = "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.";
const D_EV_OBJECT: &str = "The object that this event is about.";
const D_EV_FIELDPATH: &str = "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.";
const D_EV_SOURCE: &str =
    "The component reporting this event. Should be a short machine understandable string.";
const D_EV_MESSAGE: &str = "A human-readable description of the status of this operation.";
const D_EV_FIRST: &str =
    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)";
const D_EV_COUNT: &str = "The number of times this event has occurred.";
const D_SECRET_TYPE: &str = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
const D_SECRET_DATA: &str = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
const D_SA_SECRETS: &str = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret";
const D_PV_CAPACITY: &str = "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity";
const D_PV_ACCESS: &str = "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes";
const D_PV_RECLAIM: &str = "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming";
const D_PV_PHASE: &str = "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase";
const D_PV_CLAIM: &str = "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding";
const D_PV_REASON: &str = "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.";
const D_PV_MODE: &str = "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.";
const D_PVC_PHASE: &str = "phase represents the current phase of PersistentVolumeClaim.";
const D_PVC_VOLUME: &str =
    "volumeName is the binding reference to the PersistentVolume backing this claim.";
const D_PVC_CAPACITY: &str = "capacity represents the actual resources of the underlying volume.";
const D_PVC_ACCESS: &str = "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1";
const D_PVC_MODE: &str = "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.";
const D_DEP_UPDATED: &str = "Total number of non-terminating pods targeted by this deployment that have the desired template spec.";
const D_DEP_AVAILABLE: &str = "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.";
const D_DEP_SELECTOR: &str = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.";
const D_HPA_REF: &str = "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.";
const D_HPA_METRICS: &str = "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.";
const D_HPA_MIN: &str = "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.";
const D_HPA_MAX: &str = "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.";
const D_HPA_CURRENT: &str = "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.";
const D_CM_DATA: &str = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
const D_NP_POD_SELECTOR: &str = "podSelector selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.";
const D_RB_ROLEREF: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.";
const D_CRB_ROLEREF: &str = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.";
const D_CSR_SIGNER: &str = "signerName indicates the requested signer, and is a qualified name.\n\nList/watch requests for CertificateSigningRequests can filter on this field using a \"spec.signerName=NAME\" fieldSelector.\n\nWell-known Kubernetes signers are:\n 1. \"kubernetes.io/kube-apiserver-client\": issues client certificates that can be used to authenticate to kube-apiserver.\n  Requests for this signer are never auto-approved by kube-controller-manager, can be issued by the \"csrsigning\" controller in kube-controller-manager.\n 2. \"kubernetes.io/kube-apiserver-client-kubelet\": issues client certificates that kubelets use to authenticate to kube-apiserver.\n  Requests for this signer can be auto-approved by the \"csrapproving\" controller in kube-controller-manager, and can be issued by the \"csrsigning\" controller in kube-controller-manager.\n 3. \"kubernetes.io/kubelet-serving\" issues serving certificates that kubelets use to serve TLS endpoints, which kube-apiserver can connect to securely.\n  Requests for this signer are never auto-approved by kube-controller-manager, and can be issued by the \"csrsigning\" controller in kube-controller-manager.\n\nMore details are available at https://k8s.io/docs/reference/access-authn-authz/certificate-signing-requests/#kubernetes-signers\n\nCustom signerNames can also be specified. The signer defines:\n 1. Trust distribution: how trust (CA bundles) are distributed.\n 2. Permitted subjects: and behavior when a disallowed subject is requested.\n 3. Required, permitted, or forbidden x509 extensions in the request (including whether subjectAltNames are allowed, which types, restrictions on allowed values) and behavior when a disallowed extension is requested.\n 4. Required, permitted, or forbidden key usages / extended key usages.\n 5. Expiration/certificate lifetime: whether it is fixed by the signer, configurable by the admin.\n 6. Whether or not requests for CA certificates are allowed.";
const D_CSR_REQUEST: &str = "request contains an x509 certificate signing request encoded in a \"CERTIFICATE REQUEST\" PEM block. When serialized as JSON or YAML, the data is additionally base64-encoded.";
const D_CSR_EXPIRATION: &str = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.";
const D_CSR_CONDITIONS: &str = "conditions applied to the request. Known conditions are \"Approved\", \"Denied\", and \"Failed\".";
const D_LEASE_HOLDER: &str = "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.";
const D_SC_PROVISIONER: &str = "provisioner indicates the type of the provisioner.";
const D_SC_RECLAIM: &str = "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.";
const D_SC_BINDING: &str = "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.";
const D_SC_EXPANSION: &str =
    "allowVolumeExpansion shows whether the storage class allow volume expand.";
const D_CR_REVISION: &str = "Revision indicates the revision of the state represented by Data.";
const D_PC_VALUE: &str = "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.";
const D_PC_DEFAULT: &str = "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.";
const D_PC_PREEMPTION: &str = "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.";
const D_VA_ATTACHER: &str = "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().";
const D_VA_PV: &str =
    "persistentVolumeName represents the name of the persistent volume to attach.";
const D_VA_NODE: &str = "nodeName represents the node that the volume should be attached to.";
const D_VA_ATTACHED: &str = "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.";
const D_ES_ADDRESS_TYPE: &str = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name. (Deprecated) The EndpointSlice controller only generates, and kube-proxy only processes, slices of addressType \"IPv4\" and \"IPv6\". No semantics are defined for the \"FQDN\" type.";
const D_ES_PORTS: &str = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. Each slice may include a maximum of 100 ports. Services always have at least 1 port, so EndpointSlices generated by the EndpointSlice controller will likewise always have at least 1 port. EndpointSlices used for other purposes may have an empty ports list.";
const D_ES_ENDPOINTS: &str = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.";
const D_CSID_ATTACH: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.";
const D_CSID_PODINFO: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.";
const D_CSID_CAPACITY: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.";
const D_CSID_TOKENS: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.";
const D_CSID_REPUBLISH: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.";
const D_CSID_MODES: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.";
const D_CSC_CLASS: &str = "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.";
const D_CSC_CAPACITY: &str = "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.";
const D_FS_PL: &str =
    "`name` is the name of the priority level configuration being referenced Required.";
const D_FS_PRECEDENCE: &str = "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.";
const D_FS_DISTINGUISHER: &str = "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.";
const D_PL_TYPE: &str = "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required.";
const D_PL_NCS: &str = "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)";
const D_PL_QUEUES: &str = "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.";
const D_PL_HANDSIZE: &str = "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.";
const D_PL_QLL: &str = "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.";
const D_SCIDR_CIDRS: &str = "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.";
const D_IP_PARENT: &str = "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.";
// ---------------------------------------------------------------------------------------------
// Dispatch

/// The printers of the built-in kinds (kube's `printers/internalversion`), one per Table
/// shape; each resource's strategy names its own.
pub mod printers {
    use super::*;

    pub const POD: Printer = Printer {
        columns: POD_COLS,
        row: pod_row,
        sort: None,
    };
    pub const POD_TEMPLATE: Printer = Printer {
        columns: POD_TEMPLATE_COLS,
        row: pod_template_row,
        sort: None,
    };
    pub const PDB: Printer = Printer {
        columns: PDB_COLS,
        row: pdb_row,
        sort: None,
    };
    pub const RC: Printer = Printer {
        columns: RC_COLS,
        row: rc_row,
        sort: None,
    };
    pub const RS: Printer = Printer {
        columns: RS_COLS,
        row: rs_row,
        sort: None,
    };
    pub const DS: Printer = Printer {
        columns: DS_COLS,
        row: ds_row,
        sort: None,
    };
    pub const JOB: Printer = Printer {
        columns: JOB_COLS,
        row: job_row,
        sort: None,
    };
    pub const CRONJOB: Printer = Printer {
        columns: CRONJOB_COLS,
        row: cronjob_row,
        sort: None,
    };
    pub const SERVICE: Printer = Printer {
        columns: SERVICE_COLS,
        row: service_row,
        sort: None,
    };
    pub const INGRESS: Printer = Printer {
        columns: INGRESS_COLS,
        row: ingress_row,
        sort: None,
    };
    pub const INGRESS_CLASS: Printer = Printer {
        columns: INGRESS_CLASS_COLS,
        row: ingress_class_row,
        sort: None,
    };
    pub const STS: Printer = Printer {
        columns: STS_COLS,
        row: sts_row,
        sort: None,
    };
    pub const ENDPOINTS: Printer = Printer {
        columns: ENDPOINTS_COLS,
        row: endpoints_row,
        sort: None,
    };
    pub const NODE: Printer = Printer {
        columns: NODE_COLS,
        row: node_row,
        sort: None,
    };
    pub const EVENT: Printer = Printer {
        columns: EVENT_COLS,
        row: event_row,
        sort: None,
    };
    pub const NAMESPACE: Printer = Printer {
        columns: NAMESPACE_COLS,
        row: namespace_row,
        sort: None,
    };
    pub const SECRET: Printer = Printer {
        columns: SECRET_COLS,
        row: secret_row,
        sort: None,
    };
    pub const SA: Printer = Printer {
        columns: SA_COLS,
        row: sa_row,
        sort: None,
    };
    pub const PV: Printer = Printer {
        columns: PV_COLS,
        row: pv_row,
        sort: None,
    };
    pub const PVC: Printer = Printer {
        columns: PVC_COLS,
        row: pvc_row,
        sort: None,
    };
    pub const DEPLOYMENT: Printer = Printer {
        columns: DEPLOYMENT_COLS,
        row: deployment_row,
        sort: None,
    };
    pub const HPA: Printer = Printer {
        columns: HPA_COLS,
        row: hpa_row,
        sort: None,
    };
    pub const CONFIGMAP: Printer = Printer {
        columns: CONFIGMAP_COLS,
        row: configmap_row,
        sort: None,
    };
    pub const NETPOL: Printer = Printer {
        columns: NETPOL_COLS,
        row: netpol_row,
        sort: None,
    };
    pub const RB: Printer = Printer {
        columns: RB_COLS,
        row: binding_row,
        sort: None,
    };
    pub const CRB: Printer = Printer {
        columns: CRB_COLS,
        row: binding_row,
        sort: None,
    };
    pub const CSR: Printer = Printer {
        columns: CSR_COLS,
        row: csr_row,
        sort: None,
    };
    pub const LEASE: Printer = Printer {
        columns: LEASE_COLS,
        row: lease_row,
        sort: None,
    };
    pub const SC: Printer = Printer {
        columns: SC_COLS,
        row: sc_row,
        sort: None,
    };
    pub const CR: Printer = Printer {
        columns: CR_COLS,
        row: controller_revision_row,
        sort: None,
    };
    pub const QUOTA: Printer = Printer {
        columns: QUOTA_COLS,
        row: quota_row,
        sort: None,
    };
    pub const PC: Printer = Printer {
        columns: PC_COLS,
        row: pc_row,
        sort: None,
    };
    pub const RUNTIMECLASS: Printer = Printer {
        columns: RUNTIMECLASS_COLS,
        row: runtimeclass_row,
        sort: None,
    };
    pub const VA: Printer = Printer {
        columns: VA_COLS,
        row: va_row,
        sort: None,
    };
    pub const ES: Printer = Printer {
        columns: ES_COLS,
        row: es_row,
        sort: None,
    };
    pub const CSINODE: Printer = Printer {
        columns: CSINODE_COLS,
        row: csinode_row,
        sort: None,
    };
    pub const CSIDRIVER: Printer = Printer {
        columns: CSIDRIVER_COLS,
        row: csidriver_row,
        sort: None,
    };
    pub const CSC: Printer = Printer {
        columns: CSC_COLS,
        row: csc_row,
        sort: None,
    };
    pub const WEBHOOK: Printer = Printer {
        columns: WEBHOOK_COLS,
        row: webhook_row,
        sort: None,
    };
    pub const VAP: Printer = Printer {
        columns: VAP_COLS,
        row: vap_row,
        sort: None,
    };
    pub const VAPB: Printer = Printer {
        columns: VAPB_COLS,
        row: vapb_row,
        sort: None,
    };
    pub const FS: Printer = Printer {
        columns: FS_COLS,
        row: fs_row,
        sort: Some(flowschema_order),
    };
    pub const PL: Printer = Printer {
        columns: PL_COLS,
        row: pl_row,
        sort: None,
    };
    pub const SCIDR: Printer = Printer {
        columns: SCIDR_COLS,
        row: scidr_row,
        sort: None,
    };
    pub const IP: Printer = Printer {
        columns: IP_COLS,
        row: ip_row,
        sort: None,
    };
    pub const DEFAULT: Printer = Printer {
        columns: DEFAULT_COLS,
        row: default_row,
        sort: None,
    };
}

/// Upstream prints FlowSchema lists in matching order (precedence, then name).
fn flowschema_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    i(a, &["spec", "matchingPrecedence"])
        .cmp(&i(b, &["spec", "matchingPrecedence"]))
        .then_with(|| s(a, &["metadata", "name"]).cmp(s(b, &["metadata", "name"])))
}

// ---------------------------------------------------------------------------------------------
// Default table convertor (k8s.io/apiserver rest.NewDefaultTableConvertor)

static DEFAULT_COLS: &[Col] = &[NAME, col("Created At", "date", D_CREATED)];

fn default_row(o: &Value, _: &Ctx) -> Row {
    let created = get(o, &["metadata", "creationTimestamp"])
        .and_then(parse_ts)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "0001-01-01T00:00:00Z".into());
    Row::new(vec![name_cell(o), json!(created)])
}

// ---------------------------------------------------------------------------------------------
// Pods

static POD_COLS: &[Col] = &[
    NAME,
    col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    col("Status", "string", "The aggregate status of the containers in this pod."),
    col("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
    AGE,
    wide("IP", "string", D_POD_IP),
    wide("Node", "string", D_POD_NODE),
    wide("Nominated Node", "string", D_POD_NOMINATED),
    wide("Readiness Gates", "string", D_POD_GATES),
];

fn condition_true(conds: &[Value], ty: &str) -> bool {
    conds
        .iter()
        .any(|c| s(c, &["type"]) == ty && s(c, &["status"]) == "True")
}

fn later(acc: &mut Option<Timestamp>, status: &Value) {
    if let Some(t) = get(status, &["lastState", "terminated", "finishedAt"]).and_then(parse_ts) {
        if acc.is_none_or(|a| a < t) {
            *acc = Some(t);
        }
    }
}

fn pod_row(pod: &Value, ctx: &Ctx) -> Row {
    let spec_containers = arr(pod, &["spec", "containers"]);
    let spec_init = arr(pod, &["spec", "initContainers"]);
    let conditions = arr(pod, &["status", "conditions"]);
    let mut restarts: i64 = 0;
    let mut restartable_restarts: i64 = 0;
    let mut total = spec_containers.len();
    let mut ready = 0usize;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_restartable_restart: Option<Timestamp> = None;

    let phase = s(pod, &["status", "phase"]);
    let mut reason = phase.to_string();
    if !s(pod, &["status", "reason"]).is_empty() {
        reason = s(pod, &["status", "reason"]).to_string();
    }
    for c in conditions {
        if s(c, &["type"]) == "PodScheduled" && s(c, &["reason"]) == "SchedulingGated" {
            reason = "SchedulingGated".into();
        }
    }
    let row_conditions = match phase {
        "Succeeded" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]),
        ),
        "Failed" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]),
        ),
        _ => None,
    };

    let restartable = |name: &str| {
        spec_init
            .iter()
            .any(|c| s(c, &["name"]) == name && s(c, &["restartPolicy"]) == "Always")
    };
    total += spec_init
        .iter()
        .filter(|c| s(c, &["restartPolicy"]) == "Always")
        .count();

    let mut initializing = false;
    for (idx, st) in arr(pod, &["status", "initContainerStatuses"])
        .iter()
        .enumerate()
    {
        restarts += i(st, &["restartCount"]);
        later(&mut last_restart, st);
        let is_restartable = restartable(s(st, &["name"]));
        if is_restartable {
            restartable_restarts += i(st, &["restartCount"]);
            later(&mut last_restartable_restart, st);
        }
        let terminated = get(st, &["state", "terminated"]);
        let waiting = get(st, &["state", "waiting"]);
        if terminated.is_some() && i(st, &["state", "terminated", "exitCode"]) == 0 {
            continue;
        }
        if is_restartable && b(st, &["started"]) == Some(true) {
            if b(st, &["ready"]) == Some(true) {
                ready += 1;
            }
            continue;
        }
        if let Some(t) = terminated {
            let r = s(t, &["reason"]);
            reason = if r.is_empty() {
                if i(t, &["signal"]) != 0 {
                    format!("Init:Signal:{}", i(t, &["signal"]))
                } else {
                    format!("Init:ExitCode:{}", i(t, &["exitCode"]))
                }
            } else {
                format!("Init:{r}")
            };
        } else if waiting.is_some_and(|w| {
            let r = s(w, &["reason"]);
            !r.is_empty() && r != "PodInitializing"
        }) {
            reason = format!("Init:{}", s(waiting.unwrap_or(&Value::Null), &["reason"]));
        } else {
            reason = format!("Init:{}/{}", idx, spec_init.len());
        }
        initializing = true;
        break;
    }

    if !initializing || condition_true(conditions, "Initialized") {
        restarts = restartable_restarts;
        last_restart = last_restartable_restart;
        let mut has_running = false;
        for st in arr(pod, &["status", "containerStatuses"]).iter().rev() {
            restarts += i(st, &["restartCount"]);
            later(&mut last_restart, st);
            let waiting_reason = s(st, &["state", "waiting", "reason"]);
            let terminated = get(st, &["state", "terminated"]);
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(t) = terminated {
                let r = s(t, &["reason"]);
                reason = if !r.is_empty() {
                    r.to_string()
                } else if i(t, &["signal"]) != 0 {
                    format!("Signal:{}", i(t, &["signal"]))
                } else {
                    format!("ExitCode:{}", i(t, &["exitCode"]))
                };
            } else if b(st, &["ready"]) == Some(true) && get(st, &["state", "running"]).is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true(conditions, "Ready") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }

    let deleting = get(pod, &["metadata", "deletionTimestamp"]).is_some();
    if deleting && s(pod, &["status", "reason"]) == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && phase != "Failed" && phase != "Succeeded" {
        reason = "Terminating".into();
    }

    let restarts_str = match last_restart {
        Some(t) if restarts != 0 => {
            format!(
                "{restarts} ({} ago)",
                human_duration(ctx.now.duration_since(t))
            )
        }
        _ => restarts.to_string(),
    };

    let pod_ip = arr(pod, &["status", "podIPs"])
        .first()
        .map(|p| s(p, &["ip"]))
        .unwrap_or("");
    let gates = arr(pod, &["spec", "readinessGates"]);
    let readiness = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let true_count = gates
            .iter()
            .filter(|g| {
                let ty = s(g, &["conditionType"]);
                conditions
                    .iter()
                    .find(|c| s(c, &["type"]) == ty)
                    .is_some_and(|c| s(c, &["status"]) == "True")
            })
            .count();
        format!("{true_count}/{}", gates.len())
    };
    Row {
        cells: vec![
            name_cell(pod),
            json!(format!("{ready}/{total}")),
            json!(reason),
            json!(restarts_str),
            ctx.age(pod),
            json!(or_none(pod_ip)),
            json!(or_none(s(pod, &["spec", "nodeName"]))),
            json!(or_none(s(pod, &["status", "nominatedNodeName"]))),
            json!(readiness),
        ],
        conditions: row_conditions,
    }
}

static POD_TEMPLATE_COLS: &[Col] = &[
    NAME,
    col("Containers", "string", D_CONTAINERS),
    col("Images", "string", D_IMAGES),
    col("Pod Labels", "string", "The labels for the pod template."),
];

fn pod_template_row(o: &Value, _: &Ctx) -> Row {
    let (names, images) = containers_cells(arr(o, &["template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        names,
        images,
        json!(format_labels(get(o, &["template", "metadata", "labels"]))),
    ])
}

// ---------------------------------------------------------------------------------------------
// Workloads

static PDB_COLS: &[Col] = &[
    NAME,
    col(
        "Min Available",
        "string",
        "The minimum number of pods that must be available.",
    ),
    col(
        "Max Unavailable",
        "string",
        "The maximum number of pods that may be unavailable.",
    ),
    col(
        "Allowed Disruptions",
        "integer",
        "Calculated number of pods that may be disrupted at this time.",
    ),
    AGE,
];

fn pdb_row(o: &Value, ctx: &Ctx) -> Row {
    let min = scalar_text(get(o, &["spec", "minAvailable"])).unwrap_or_else(|| "N/A".into());
    let max = scalar_text(get(o, &["spec", "maxUnavailable"])).unwrap_or_else(|| "N/A".into());
    Row::new(vec![
        name_cell(o),
        json!(min),
        json!(max),
        json!(i(o, &["status", "disruptionsAllowed"])),
        ctx.age(o),
    ])
}

static RC_COLS: &[Col] = &[
    NAME,
    col("Desired", "integer", D_RC_DESIRED),
    col("Current", "integer", D_RC_CURRENT),
    col("Ready", "integer", D_RC_READY),
    AGE,
    wide("Containers", "string", D_CONTAINERS),
    wide("Images", "string", D_IMAGES),
    wide("Selector", "string", D_RC_SELECTOR),
];

/// spec.replicas as the internal (defaulted) value: 1 when unset.
fn replicas(o: &Value) -> i64 {
    get(o, &["spec", "replicas"])
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn rc_row(o: &Value, ctx: &Ctx) -> Row {
    replica_row(o, ctx, format_labels(get(o, &["spec", "selector"])))
}

/// Rows of ReplicationControllers and ReplicaSets: the same cells, selectors printed per type.
fn replica_row(o: &Value, ctx: &Ctx, selector: String) -> Row {
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(replicas(o)),
        json!(i(o, &["status", "replicas"])),
        json!(i(o, &["status", "readyReplicas"])),
        ctx.age(o),
        names,
        images,
        json!(selector),
    ])
}

static RS_COLS: &[Col] = &[
    NAME,
    col("Desired", "integer", D_RS_DESIRED),
    col("Current", "integer", D_RS_CURRENT),
    col("Ready", "integer", D_RS_READY),
    AGE,
    wide("Containers", "string", D_CONTAINERS),
    wide("Images", "string", D_IMAGES),
    wide("Selector", "string", D_RS_SELECTOR),
];

fn rs_row(o: &Value, ctx: &Ctx) -> Row {
    replica_row(o, ctx, format_label_selector(get(o, &["spec", "selector"])))
}

static DS_COLS: &[Col] = &[
    NAME,
    col("Desired", "integer", D_DS_DESIRED),
    col("Current", "integer", D_DS_CURRENT),
    col("Ready", "integer", D_DS_READY),
    col("Up-to-date", "integer", D_DS_UPDATED),
    col("Available", "integer", D_DS_AVAILABLE),
    col("Node Selector", "string", D_POD_NODE_SELECTOR),
    AGE,
    wide("Containers", "string", D_CONTAINERS),
    wide("Images", "string", D_IMAGES),
    wide("Selector", "string", D_DS_SELECTOR),
];

fn ds_row(o: &Value, ctx: &Ctx) -> Row {
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(i(o, &["status", "desiredNumberScheduled"])),
        json!(i(o, &["status", "currentNumberScheduled"])),
        json!(i(o, &["status", "numberReady"])),
        json!(i(o, &["status", "updatedNumberScheduled"])),
        json!(i(o, &["status", "numberAvailable"])),
        json!(format_labels(get(
            o,
            &["spec", "template", "spec", "nodeSelector"]
        ))),
        ctx.age(o),
        names,
        images,
        json!(format_label_selector(get(o, &["spec", "selector"]))),
    ])
}

static STS_COLS: &[Col] = &[
    NAME,
    col("Ready", "string", "Number of the pod with ready state"),
    AGE,
    wide("Containers", "string", D_CONTAINERS),
    wide("Images", "string", D_IMAGES),
];

fn sts_row(o: &Value, ctx: &Ctx) -> Row {
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(format!(
            "{}/{}",
            i(o, &["status", "readyReplicas"]),
            replicas(o)
        )),
        ctx.age(o),
        names,
        images,
    ])
}

static DEPLOYMENT_COLS: &[Col] = &[
    NAME,
    col("Ready", "string", "Number of the pod with ready state"),
    col("Up-to-date", "string", D_DEP_UPDATED),
    col("Available", "string", D_DEP_AVAILABLE),
    AGE,
    wide("Containers", "string", D_CONTAINERS),
    wide("Images", "string", D_IMAGES),
    wide("Selector", "string", D_DEP_SELECTOR),
];

fn deployment_row(o: &Value, ctx: &Ctx) -> Row {
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    let selector =
        selector_string(get(o, &["spec", "selector"])).unwrap_or_else(|()| "<invalid>".into());
    Row::new(vec![
        name_cell(o),
        json!(format!(
            "{}/{}",
            i(o, &["status", "readyReplicas"]),
            replicas(o)
        )),
        json!(i(o, &["status", "updatedReplicas"])),
        json!(i(o, &["status", "availableReplicas"])),
        ctx.age(o),
        names,
        images,
        json!(selector),
    ])
}

static JOB_COLS: &[Col] = &[
    NAME,
    col("Status", "string", "Status of the job."),
    col("Completions", "string", D_JOB_SUCCEEDED),
    col("Duration", "string", "Time required to complete the job."),
    AGE,
    wide("Containers", "string", D_CONTAINERS),
    wide("Images", "string", D_IMAGES),
    wide("Selector", "string", D_JOB_SELECTOR),
];

fn job_condition(o: &Value, ty: &str) -> bool {
    arr(o, &["status", "conditions"])
        .iter()
        .find(|c| s(c, &["type"]) == ty)
        .is_some_and(|c| s(c, &["status"]) == "True")
}

fn job_row(o: &Value, ctx: &Ctx) -> Row {
    let succeeded = i(o, &["status", "succeeded"]);
    let completions = match get(o, &["spec", "completions"]).and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => {
            let parallelism = i(o, &["spec", "parallelism"]);
            if parallelism > 1 {
                format!("{succeeded}/1 of {parallelism}")
            } else {
                format!("{succeeded}/1")
            }
        }
    };
    let start = get(o, &["status", "startTime"]).and_then(parse_ts);
    let done = get(o, &["status", "completionTime"]).and_then(parse_ts);
    let duration = match (start, done) {
        (None, _) => String::new(),
        (Some(st), None) => human_duration(ctx.now.duration_since(st)),
        (Some(st), Some(end)) => human_duration(end.duration_since(st)),
    };
    let status = if job_condition(o, "Complete") {
        "Complete"
    } else if job_condition(o, "Failed") {
        "Failed"
    } else if get(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating"
    } else if job_condition(o, "Suspended") {
        "Suspended"
    } else if job_condition(o, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(status),
        json!(completions),
        json!(duration),
        ctx.age(o),
        names,
        images,
        json!(format_label_selector(get(o, &["spec", "selector"]))),
    ])
}

static CRONJOB_COLS: &[Col] = &[
    NAME,
    col("Schedule", "string", D_CJ_SCHEDULE),
    col("Timezone", "string", D_CJ_TZ),
    col("Suspend", "boolean", D_CJ_SUSPEND),
    col("Active", "integer", D_CJ_ACTIVE),
    col("Last Schedule", "string", D_CJ_LAST),
    AGE,
    wide("Containers", "string", D_CONTAINERS),
    wide("Images", "string", D_IMAGES),
    wide("Selector", "string", D_JOB_SELECTOR),
];

fn cronjob_row(o: &Value, ctx: &Ctx) -> Row {
    let last = match get(o, &["status", "lastScheduleTime"]) {
        Some(t) => ctx.since(Some(t)),
        None => "<none>".into(),
    };
    let tz = get(o, &["spec", "timeZone"])
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let job_spec = get(o, &["spec", "jobTemplate", "spec"]).unwrap_or(&Value::Null);
    let (names, images) = containers_cells(arr(job_spec, &["template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "schedule"])),
        json!(tz),
        json!(bool_ptr(b(o, &["spec", "suspend"]))),
        json!(arr(o, &["status", "active"]).len()),
        json!(last),
        ctx.age(o),
        names,
        images,
        json!(format_label_selector(get(job_spec, &["selector"]))),
    ])
}

// ---------------------------------------------------------------------------------------------
// Services and networking

static SERVICE_COLS: &[Col] = &[
    NAME,
    col("Type", "string", D_SVC_TYPE),
    col("Cluster-IP", "string", D_SVC_CLUSTER_IP),
    col("External-IP", "string", D_SVC_EXTERNAL_IPS),
    col("Port(s)", "string", D_SVC_PORTS),
    AGE,
    wide("Selector", "string", D_SVC_SELECTOR),
];

/// IPs/hostnames of a load-balancer status, sorted and de-duplicated, comma-joined. The server
/// always renders the wide form, so nothing is truncated.
fn lb_status(o: &Value) -> String {
    let mut set: Vec<String> = arr(o, &["status", "loadBalancer", "ingress"])
        .iter()
        .filter_map(|e| {
            let ip = s(e, &["ip"]);
            let host = s(e, &["hostname"]);
            if !ip.is_empty() {
                Some(ip.to_string())
            } else if !host.is_empty() {
                Some(host.to_string())
            } else {
                None
            }
        })
        .collect();
    set.sort();
    set.dedup();
    set.join(",")
}

fn strings(o: &Value, path: &[&str]) -> Vec<String> {
    arr(o, path)
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn service_row(o: &Value, ctx: &Ctx) -> Row {
    let ty = get(o, &["spec", "type"])
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let cluster_ip = arr(o, &["spec", "clusterIPs"])
        .first()
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| "<none>".into());
    let external = strings(o, &["spec", "externalIPs"]);
    let external_ip = match ty {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".into()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let lb = lb_status(o);
            if !external.is_empty() {
                let mut results: Vec<String> = Vec::new();
                if !lb.is_empty() {
                    results.extend(lb.split(',').map(str::to_string));
                }
                results.extend(external);
                results.join(",")
            } else if !lb.is_empty() {
                lb
            } else {
                "<pending>".into()
            }
        }
        "ExternalName" => s(o, &["spec", "externalName"]).to_string(),
        _ => "<unknown>".into(),
    };
    let ports: Vec<String> = arr(o, &["spec", "ports"])
        .iter()
        .map(|p| {
            let proto = get(p, &["protocol"])
                .and_then(Value::as_str)
                .unwrap_or("TCP");
            let node_port = i(p, &["nodePort"]);
            if node_port > 0 {
                format!("{}:{}/{}", i(p, &["port"]), node_port, proto)
            } else {
                format!("{}/{}", i(p, &["port"]), proto)
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    Row::new(vec![
        name_cell(o),
        json!(ty),
        json!(cluster_ip),
        json!(external_ip),
        json!(ports),
        ctx.age(o),
        json!(format_labels(get(o, &["spec", "selector"]))),
    ])
}

static INGRESS_COLS: &[Col] = &[
    NAME,
    col(
        "Class",
        "string",
        "The name of the IngressClass resource that should be used for additional configuration",
    ),
    col(
        "Hosts",
        "string",
        "Hosts that incoming requests are matched against before the ingress rule",
    ),
    col(
        "Address",
        "string",
        "Address is a list containing ingress points for the load-balancer",
    ),
    col("Ports", "string", "Ports of TLS configurations that open"),
    AGE,
];

fn ingress_row(o: &Value, ctx: &Ctx) -> Row {
    let class = get(o, &["spec", "ingressClassName"])
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let rules = arr(o, &["spec", "rules"]);
    let max = 3;
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for r in rules {
        if list.len() == max {
            more = true;
        }
        let host = s(r, &["host"]);
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    let hosts = if list.is_empty() {
        "*".to_string()
    } else if more {
        format!("{} + {} more...", list.join(","), rules.len() - max)
    } else {
        list.join(",")
    };
    let ports = if arr(o, &["spec", "tls"]).is_empty() {
        "80"
    } else {
        "80, 443"
    };
    Row::new(vec![
        name_cell(o),
        json!(class),
        json!(hosts),
        json!(lb_status(o)),
        json!(ports),
        ctx.age(o),
    ])
}

static INGRESS_CLASS_COLS: &[Col] = &[
    NAME,
    col(
        "Controller",
        "string",
        "Controller that is responsible for handling this class",
    ),
    col(
        "Parameters",
        "string",
        "A reference to a resource with additional parameters",
    ),
    AGE,
];

fn ingress_class_row(o: &Value, ctx: &Ctx) -> Row {
    let params = match get(o, &["spec", "parameters"]) {
        Some(p) => {
            let mut x = s(p, &["kind"]).to_string();
            if let Some(g) = get(p, &["apiGroup"]).and_then(Value::as_str) {
                x = format!("{x}.{g}");
            }
            format!("{x}/{}", s(p, &["name"]))
        }
        None => "<none>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "controller"])),
        json!(params),
        ctx.age(o),
    ])
}

static NETPOL_COLS: &[Col] = &[NAME, col("Pod-Selector", "string", D_NP_POD_SELECTOR), AGE];

fn netpol_row(o: &Value, ctx: &Ctx) -> Row {
    // podSelector is a non-pointer struct upstream: absent means the empty selector.
    let empty = json!({});
    let sel = get(o, &["spec", "podSelector"]).unwrap_or(&empty);
    Row::new(vec![
        name_cell(o),
        json!(format_label_selector(Some(sel))),
        ctx.age(o),
    ])
}

static ENDPOINTS_COLS: &[Col] = &[NAME, col("Endpoints", "string", D_EP_SUBSETS), AGE];

fn host_port(ip: &str, port: i64) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

fn endpoints_row(o: &Value, ctx: &Ctx) -> Row {
    let subsets = arr(o, &["subsets"]);
    let text = if subsets.is_empty() {
        "<none>".to_string()
    } else {
        let max = 3;
        let mut list: Vec<String> = Vec::new();
        let mut more = false;
        let mut count = 0usize;
        for ss in subsets {
            let addrs = arr(ss, &["addresses"]);
            let ports = arr(ss, &["ports"]);
            if ports.is_empty() {
                count += addrs.len();
                for a in addrs {
                    if list.len() == max {
                        more = true;
                        break;
                    }
                    list.push(s(a, &["ip"]).to_string());
                }
                continue;
            }
            for p in ports {
                count += addrs.len();
                for a in addrs {
                    if list.len() == max {
                        more = true;
                        break;
                    }
                    list.push(host_port(s(a, &["ip"]), i(p, &["port"])));
                }
            }
        }
        let ret = list.join(",");
        if more {
            format!("{ret} + {} more...", count - max)
        } else {
            ret
        }
    };
    Row::new(vec![name_cell(o), json!(text), ctx.age(o)])
}

static ES_COLS: &[Col] = &[
    NAME,
    col("AddressType", "string", D_ES_ADDRESS_TYPE),
    col("Ports", "string", D_ES_PORTS),
    col("Endpoints", "string", D_ES_ENDPOINTS),
    AGE,
];

fn es_row(o: &Value, ctx: &Ctx) -> Row {
    let max = 3;
    let (mut list, mut more, mut count) = (Vec::new(), false, 0usize);
    for p in arr(o, &["ports"]) {
        if list.len() < max {
            let port = if let Some(n) = get(p, &["port"]).and_then(Value::as_i64) {
                n.to_string()
            } else if let Some(n) = get(p, &["name"]).and_then(Value::as_str) {
                n.to_string()
            } else {
                "*".to_string()
            };
            list.push(port);
        } else if list.len() == max {
            more = true;
        }
        count += 1;
    }
    let ports = list_with_more(list, more, count, max);
    let (mut list, mut more, mut count) = (Vec::new(), false, 0usize);
    for e in arr(o, &["endpoints"]) {
        for a in arr(e, &["addresses"]) {
            if list.len() < max {
                list.push(a.as_str().unwrap_or("").to_string());
            } else if list.len() == max {
                more = true;
            }
            count += 1;
        }
    }
    let endpoints = list_with_more(list, more, count, max);
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["addressType"])),
        json!(ports),
        json!(endpoints),
        ctx.age(o),
    ])
}

static SCIDR_COLS: &[Col] = &[NAME, col("CIDRs", "string", D_SCIDR_CIDRS), AGE];

fn scidr_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(strings(o, &["spec", "cidrs"]).join(",")),
        ctx.age(o),
    ])
}

// Upstream declares two columns but prints three cells (the age) for IPAddresses; we keep that.
static IP_COLS: &[Col] = &[NAME, col("ParentRef", "string", D_IP_PARENT)];

fn ip_row(o: &Value, ctx: &Ctx) -> Row {
    let parent = match get(o, &["spec", "parentRef"]) {
        Some(p) => {
            let group = s(p, &["group"]);
            let resource = s(p, &["resource"]);
            let mut x = if group.is_empty() {
                resource.to_lowercase()
            } else {
                format!("{resource}.{group}").to_lowercase()
            };
            let ns = s(p, &["namespace"]);
            if !ns.is_empty() {
                x = format!("{x}/{ns}");
            }
            format!("{x}/{}", s(p, &["name"]))
        }
        None => "<none>".into(),
    };
    Row::new(vec![name_cell(o), json!(parent), ctx.age(o)])
}

// ---------------------------------------------------------------------------------------------
// Cluster and configuration objects

static NODE_COLS: &[Col] = &[
    NAME,
    col("Status", "string", "The status of the node"),
    col("Roles", "string", "The roles of the node"),
    AGE,
    col("Version", "string", D_NODE_KUBELET),
    wide("Internal-IP", "string", D_NODE_ADDRESSES),
    wide("External-IP", "string", D_NODE_ADDRESSES),
    wide("OS-Image", "string", D_NODE_OS),
    wide("Kernel-Version", "string", D_NODE_KERNEL),
    wide("Container-Runtime", "string", D_NODE_CR),
];

fn node_row(o: &Value, ctx: &Ctx) -> Row {
    let mut status: Vec<String> = Vec::new();
    // The last condition of a type wins, as in upstream's map.
    if let Some(c) = arr(o, &["status", "conditions"])
        .iter()
        .rev()
        .find(|c| s(c, &["type"]) == "Ready")
    {
        status.push(if s(c, &["status"]) == "True" {
            "Ready".into()
        } else {
            "NotReady".into()
        });
    }
    if status.is_empty() {
        status.push("Unknown".into());
    }
    if b(o, &["spec", "unschedulable"]) == Some(true) {
        status.push("SchedulingDisabled".into());
    }
    let mut roles: Vec<String> = Vec::new();
    if let Some(labels) = get(o, &["metadata", "labels"]).and_then(Value::as_object) {
        for (k, v) in labels {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.push(role.to_string());
                }
            } else if k == "kubernetes.io/role" {
                let v = v.as_str().unwrap_or("");
                if !v.is_empty() {
                    roles.push(v.to_string());
                }
            }
        }
    }
    roles.sort();
    roles.dedup();
    let roles = if roles.is_empty() {
        "<none>".to_string()
    } else {
        roles.join(",")
    };
    let address = |ty: &str| {
        arr(o, &["status", "addresses"])
            .iter()
            .find(|a| s(a, &["type"]) == ty)
            .map(|a| s(a, &["address"]).to_string())
            .unwrap_or_else(|| "<none>".into())
    };
    let info = |k: &str| {
        let v = s(o, &["status", "nodeInfo", k]);
        if v.is_empty() {
            "<unknown>".to_string()
        } else {
            v.to_string()
        }
    };
    Row::new(vec![
        name_cell(o),
        json!(status.join(",")),
        json!(roles),
        ctx.age(o),
        json!(s(o, &["status", "nodeInfo", "kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ])
}

static EVENT_COLS: &[Col] = &[
    col("Last Seen", "string", D_EV_LAST),
    col("Type", "string", D_EV_TYPE),
    col("Reason", "string", D_EV_REASON),
    col("Object", "string", D_EV_OBJECT),
    wide("Subobject", "string", D_EV_FIELDPATH),
    wide("Source", "string", D_EV_SOURCE),
    col("Message", "string", D_EV_MESSAGE),
    wide("First Seen", "string", D_EV_FIRST),
    wide("Count", "string", D_EV_COUNT),
    Col {
        name: "Name",
        ty: "string",
        format: "name",
        desc: D_NAME,
        priority: 1,
    },
];

/// Prints core/v1 and events.k8s.io/v1 Events alike (upstream converts both to the internal
/// Event before printing).
fn event_row(o: &Value, ctx: &Ctx) -> Row {
    let new_api = o.get("regarding").is_some()
        || o.get("note").is_some()
        || o.get("deprecatedSource").is_some()
        || s(o, &["apiVersion"]).starts_with("events.k8s.io/");
    let (involved, message, source, first, last, count) = if new_api {
        (
            "regarding",
            "note",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
        )
    } else {
        (
            "involvedObject",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
        )
    };
    let first_ts = match get(o, &[first]).and_then(parse_ts) {
        Some(_) => ctx.since(get(o, &[first])),
        None => ctx.since(get(o, &["eventTime"])),
    };
    let mut last_ts = match get(o, &[last]).and_then(parse_ts) {
        Some(_) => ctx.since(get(o, &[last])),
        None => first_ts.clone(),
    };
    let mut n = i(o, &[count]);
    if let Some(series) = get(o, &["series"]) {
        last_ts = ctx.since(get(series, &["lastObservedTime"]));
        n = i(series, &["count"]);
    } else if n == 0 {
        n = 1;
    }
    let kind = s(o, &[involved, "kind"]).to_lowercase();
    let target_name = s(o, &[involved, "name"]);
    let target = if target_name.is_empty() {
        kind
    } else {
        format!("{kind}/{target_name}")
    };
    let component = match s(o, &[source, "component"]) {
        "" => s(o, &["reportingController"]),
        c => c,
    };
    let host = match s(o, &[source, "host"]) {
        "" => s(o, &["reportingInstance"]),
        h => h,
    };
    let source_text = if host.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {host}")
    };
    Row::new(vec![
        json!(last_ts),
        json!(s(o, &["type"])),
        json!(s(o, &["reason"])),
        json!(target),
        json!(s(o, &[involved, "fieldPath"])),
        json!(source_text),
        json!(s(o, &[message]).trim()),
        json!(first_ts),
        json!(n),
        name_cell(o),
    ])
}

static NAMESPACE_COLS: &[Col] = &[
    NAME,
    col("Status", "string", "The status of the namespace"),
    AGE,
];

fn namespace_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["status", "phase"])),
        ctx.age(o),
    ])
}

static SECRET_COLS: &[Col] = &[
    NAME,
    col("Type", "string", D_SECRET_TYPE),
    col("Data", "string", D_SECRET_DATA),
    AGE,
];

fn secret_row(o: &Value, ctx: &Ctx) -> Row {
    // Internal Secret.Data merges stringData (write-only) into data.
    let mut keys: Vec<&String> = Vec::new();
    for field in ["data", "stringData"] {
        if let Some(m) = get(o, &[field]).and_then(Value::as_object) {
            keys.extend(m.keys());
        }
    }
    keys.sort();
    keys.dedup();
    let ty = get(o, &["type"])
        .and_then(Value::as_str)
        .unwrap_or("Opaque");
    Row::new(vec![name_cell(o), json!(ty), json!(keys.len()), ctx.age(o)])
}

static SA_COLS: &[Col] = &[NAME, col("Secrets", "string", D_SA_SECRETS), AGE];

fn sa_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(arr(o, &["secrets"]).len()),
        ctx.age(o),
    ])
}

static CONFIGMAP_COLS: &[Col] = &[NAME, col("Data", "string", D_CM_DATA), AGE];

fn configmap_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(obj_len(o, &["data"]) + obj_len(o, &["binaryData"])),
        ctx.age(o),
    ])
}

// ---------------------------------------------------------------------------------------------
// Storage

static PV_COLS: &[Col] = &[
    NAME,
    col("Capacity", "string", D_PV_CAPACITY),
    col("Access Modes", "string", D_PV_ACCESS),
    col("Reclaim Policy", "string", D_PV_RECLAIM),
    col("Status", "string", D_PV_PHASE),
    col("Claim", "string", D_PV_CLAIM),
    col("StorageClass", "string", "StorageClass of the pv"),
    col(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pv",
    ),
    col("Reason", "string", D_PV_REASON),
    AGE,
    wide("VolumeMode", "string", D_PV_MODE),
];

/// `helper.GetAccessModesAsString`.
fn access_modes(modes: &[Value]) -> String {
    let has = |m: &str| modes.iter().any(|v| v.as_str() == Some(m));
    let mut out = Vec::new();
    for (mode, short) in [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ] {
        if has(mode) {
            out.push(short);
        }
    }
    out.join(",")
}

/// Storage class of a PV/PVC: the beta annotation wins over `spec.storageClassName`.
fn storage_class(o: &Value) -> String {
    if let Some(c) = get(
        o,
        &[
            "metadata",
            "annotations",
            "volume.beta.kubernetes.io/storage-class",
        ],
    )
    .and_then(Value::as_str)
    {
        return c.to_string();
    }
    s(o, &["spec", "storageClassName"]).to_string()
}

fn quantity(o: &Value, path: &[&str]) -> String {
    scalar_text(get(o, path)).unwrap_or_else(|| "0".into())
}

fn unset_or(o: &Value, path: &[&str]) -> String {
    get(o, path)
        .and_then(Value::as_str)
        .unwrap_or("<unset>")
        .to_string()
}

fn pv_row(o: &Value, ctx: &Ctx) -> Row {
    let claim = match get(o, &["spec", "claimRef"]) {
        Some(c) => format!("{}/{}", s(c, &["namespace"]), s(c, &["name"])),
        None => String::new(),
    };
    let phase = if get(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating"
    } else {
        s(o, &["status", "phase"])
    };
    Row::new(vec![
        name_cell(o),
        json!(quantity(o, &["spec", "capacity", "storage"])),
        json!(access_modes(arr(o, &["spec", "accessModes"]))),
        json!(s(o, &["spec", "persistentVolumeReclaimPolicy"])),
        json!(phase),
        json!(claim),
        json!(storage_class(o)),
        json!(unset_or(o, &["spec", "volumeAttributesClassName"])),
        json!(s(o, &["status", "reason"])),
        ctx.age(o),
        json!(unset_or(o, &["spec", "volumeMode"])),
    ])
}

static PVC_COLS: &[Col] = &[
    NAME,
    col("Status", "string", D_PVC_PHASE),
    col("Volume", "string", D_PVC_VOLUME),
    col("Capacity", "string", D_PVC_CAPACITY),
    col("Access Modes", "string", D_PVC_ACCESS),
    col("StorageClass", "string", "StorageClass of the pvc"),
    col(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pvc",
    ),
    AGE,
    wide("VolumeMode", "string", D_PVC_MODE),
];

fn pvc_row(o: &Value, ctx: &Ctx) -> Row {
    let phase = if get(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating"
    } else {
        s(o, &["status", "phase"])
    };
    let volume = s(o, &["spec", "volumeName"]);
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity(o, &["status", "capacity", "storage"]),
            access_modes(arr(o, &["status", "accessModes"])),
        )
    };
    Row::new(vec![
        name_cell(o),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(storage_class(o)),
        json!(unset_or(o, &["spec", "volumeAttributesClassName"])),
        ctx.age(o),
        json!(unset_or(o, &["spec", "volumeMode"])),
    ])
}

static SC_COLS: &[Col] = &[
    NAME,
    col("Provisioner", "string", D_SC_PROVISIONER),
    col("ReclaimPolicy", "string", D_SC_RECLAIM),
    col("VolumeBindingMode", "string", D_SC_BINDING),
    col("AllowVolumeExpansion", "string", D_SC_EXPANSION),
    AGE,
];

fn sc_row(o: &Value, ctx: &Ctx) -> Row {
    let ann = |k: &str| s(o, &["metadata", "annotations", k]) == "true";
    let mut name = s(o, &["metadata", "name"]).to_string();
    if ann("storageclass.kubernetes.io/is-default-class")
        || ann("storageclass.beta.kubernetes.io/is-default-class")
    {
        name.push_str(" (default)");
    }
    let reclaim = get(o, &["reclaimPolicy"])
        .and_then(Value::as_str)
        .unwrap_or("Delete");
    let binding = get(o, &["volumeBindingMode"])
        .and_then(Value::as_str)
        .unwrap_or("Immediate");
    Row::new(vec![
        json!(name),
        json!(s(o, &["provisioner"])),
        json!(reclaim),
        json!(binding),
        json!(b(o, &["allowVolumeExpansion"]).unwrap_or(false)),
        ctx.age(o),
    ])
}

static VA_COLS: &[Col] = &[
    NAME,
    Col {
        name: "Attacher",
        ty: "string",
        format: "name",
        desc: D_VA_ATTACHER,
        priority: 0,
    },
    col("PV", "string", D_VA_PV),
    col("Node", "string", D_VA_NODE),
    col("Attached", "boolean", D_VA_ATTACHED),
    AGE,
];

fn va_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "attacher"])),
        json!(s(o, &["spec", "source", "persistentVolumeName"])),
        json!(s(o, &["spec", "nodeName"])),
        json!(b(o, &["status", "attached"]).unwrap_or(false)),
        ctx.age(o),
    ])
}

static CSINODE_COLS: &[Col] = &[
    NAME,
    col(
        "Drivers",
        "integer",
        "Drivers indicates the number of CSI drivers registered on the node",
    ),
    AGE,
];

fn csinode_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(arr(o, &["spec", "drivers"]).len()),
        ctx.age(o),
    ])
}

static CSIDRIVER_COLS: &[Col] = &[
    NAME,
    col("AttachRequired", "boolean", D_CSID_ATTACH),
    col("PodInfoOnMount", "boolean", D_CSID_PODINFO),
    col("StorageCapacity", "boolean", D_CSID_CAPACITY),
    col("TokenRequests", "string", D_CSID_TOKENS),
    col("RequiresRepublish", "boolean", D_CSID_REPUBLISH),
    col("Modes", "string", D_CSID_MODES),
    AGE,
];

fn csidriver_row(o: &Value, ctx: &Ctx) -> Row {
    let modes = strings(o, &["spec", "volumeLifecycleModes"]).join(",");
    let tokens = match get(o, &["spec", "tokenRequests"]).and_then(Value::as_array) {
        Some(t) => t
            .iter()
            .map(|x| s(x, &["audience"]).to_string())
            .collect::<Vec<_>>()
            .join(","),
        None => "<unset>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(b(o, &["spec", "attachRequired"]).unwrap_or(true)),
        json!(b(o, &["spec", "podInfoOnMount"]).unwrap_or(false)),
        json!(b(o, &["spec", "storageCapacity"]).unwrap_or(false)),
        json!(tokens),
        json!(b(o, &["spec", "requiresRepublish"]).unwrap_or(false)),
        json!(or_none(&modes)),
        ctx.age(o),
    ])
}

static CSC_COLS: &[Col] = &[
    NAME,
    col("StorageClassName", "string", D_CSC_CLASS),
    col("Capacity", "string", D_CSC_CAPACITY),
];

fn csc_row(o: &Value, _: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["storageClassName"])),
        json!(scalar_text(get(o, &["capacity"])).unwrap_or_else(|| "<unset>".into())),
    ])
}

// ---------------------------------------------------------------------------------------------
// Autoscaling, policy, RBAC, certificates, coordination, scheduling, node

static HPA_COLS: &[Col] = &[
    NAME,
    col("Reference", "string", D_HPA_REF),
    col("Targets", "string", D_HPA_METRICS),
    col("MinPods", "string", D_HPA_MIN),
    col("MaxPods", "string", D_HPA_MAX),
    col("Replicas", "string", D_HPA_CURRENT),
    AGE,
];

/// `formatHPAMetrics` over autoscaling/v2 metric specs and statuses.
fn hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".into();
    }
    let max = 2;
    let mut list: Vec<String> = Vec::new();
    for (idx, spec) in specs.iter().enumerate() {
        let status = statuses.get(idx);
        let cur = |src: &str, field: &str| -> Option<String> {
            let st = status?.get(src)?;
            scalar_text(get(st, &["current", field]))
        };
        // A nil *Quantity prints as "<nil>" upstream.
        let txt = |v: Option<&Value>| scalar_text(v).unwrap_or_else(|| "<nil>".into());
        let entry = match s(spec, &["type"]) {
            "External" | "Object" => {
                let src = if s(spec, &["type"]) == "External" {
                    "external"
                } else {
                    "object"
                };
                let target = get(spec, &[src, "target"]).unwrap_or(&Value::Null);
                if let Some(avg) = get(target, &["averageValue"]) {
                    let current = cur(src, "averageValue").unwrap_or_else(|| "<unknown>".into());
                    format!("{current}/{} (avg)", txt(Some(avg)))
                } else {
                    let current = if status.and_then(|st| st.get(src)).is_some() {
                        cur(src, "value").unwrap_or_else(|| "<nil>".into())
                    } else {
                        "<unknown>".into()
                    };
                    format!("{current}/{}", txt(get(target, &["value"])))
                }
            }
            "Pods" => {
                let current = if status.and_then(|st| st.get("pods")).is_some() {
                    cur("pods", "averageValue").unwrap_or_else(|| "<nil>".into())
                } else {
                    "<unknown>".into()
                };
                format!(
                    "{current}/{}",
                    txt(get(spec, &["pods", "target", "averageValue"]))
                )
            }
            "Resource" | "ContainerResource" => {
                let src = if s(spec, &["type"]) == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let name = s(spec, &[src, "name"]);
                let target = get(spec, &[src, "target"]).unwrap_or(&Value::Null);
                if let Some(avg) = get(target, &["averageValue"]) {
                    let current = if status.and_then(|st| st.get(src)).is_some() {
                        cur(src, "averageValue").unwrap_or_else(|| "<nil>".into())
                    } else {
                        "<unknown>".into()
                    };
                    format!("{name}: {current}/{}", txt(Some(avg)))
                } else {
                    let current = cur(src, "averageUtilization")
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<unknown>".into());
                    let target = get(target, &["averageUtilization"])
                        .and_then(Value::as_i64)
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<auto>".into());
                    format!("{name}: {current}/{target}")
                }
            }
            _ => "<unknown type>".into(),
        };
        list.push(entry);
    }
    let count = list.len();
    if count > max {
        list.truncate(max);
        return format!("{} + {} more...", list.join(", "), count - max);
    }
    list.join(", ")
}

fn hpa_row(o: &Value, ctx: &Ctx) -> Row {
    let reference = format!(
        "{}/{}",
        s(o, &["spec", "scaleTargetRef", "kind"]),
        s(o, &["spec", "scaleTargetRef", "name"])
    );
    let metrics = if let Some(target) = get(o, &["spec", "targetCPUUtilizationPercentage"]) {
        // autoscaling/v1 shape: one CPU utilization metric.
        let spec = json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}}]);
        let status = match get(o, &["status", "currentCPUUtilizationPercentage"]) {
            Some(c) => {
                json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": c}}}])
            }
            None => json!([]),
        };
        hpa_metrics(arr(&spec, &[]), arr(&status, &[]))
    } else {
        hpa_metrics(
            arr(o, &["spec", "metrics"]),
            arr(o, &["status", "currentMetrics"]),
        )
    };
    let min = match get(o, &["spec", "minReplicas"]).and_then(Value::as_i64) {
        Some(m) => m.to_string(),
        None => "<unset>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(reference),
        json!(metrics),
        json!(min),
        json!(i(o, &["spec", "maxReplicas"])),
        json!(i(o, &["status", "currentReplicas"])),
        ctx.age(o),
    ])
}

static RB_COLS: &[Col] = &[
    NAME,
    col("Role", "string", D_RB_ROLEREF),
    AGE,
    wide("Users", "string", "Users in the roleBinding"),
    wide("Groups", "string", "Groups in the roleBinding"),
    wide(
        "ServiceAccounts",
        "string",
        "ServiceAccounts in the roleBinding",
    ),
];

static CRB_COLS: &[Col] = &[
    NAME,
    col("Role", "string", D_CRB_ROLEREF),
    AGE,
    wide("Users", "string", "Users in the clusterRoleBinding"),
    wide("Groups", "string", "Groups in the clusterRoleBinding"),
    wide(
        "ServiceAccounts",
        "string",
        "ServiceAccounts in the clusterRoleBinding",
    ),
];

fn binding_row(o: &Value, ctx: &Ctx) -> Row {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for subj in arr(o, &["subjects"]) {
        let name = s(subj, &["name"]);
        match s(subj, &["kind"]) {
            "ServiceAccount" => sas.push(format!("{}/{name}", s(subj, &["namespace"]))),
            "User" => users.push(name.to_string()),
            "Group" => groups.push(name.to_string()),
            _ => {}
        }
    }
    Row::new(vec![
        name_cell(o),
        json!(format!(
            "{}/{}",
            s(o, &["roleRef", "kind"]),
            s(o, &["roleRef", "name"])
        )),
        ctx.age(o),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(sas.join(", ")),
    ])
}

static CSR_COLS: &[Col] = &[
    NAME,
    AGE,
    col("SignerName", "string", D_CSR_SIGNER),
    col("Requestor", "string", D_CSR_REQUEST),
    col("RequestedDuration", "string", D_CSR_EXPIRATION),
    col("Condition", "string", D_CSR_CONDITIONS),
];

fn csr_row(o: &Value, ctx: &Ctx) -> Row {
    let conds = arr(o, &["status", "conditions"]);
    let has = |t: &str| conds.iter().any(|c| s(c, &["type"]) == t);
    let mut status = if has("Denied") {
        "Denied".to_string()
    } else if has("Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has("Failed") {
        status.push_str(",Failed");
    }
    if !s(o, &["status", "certificate"]).is_empty() {
        status.push_str(",Issued");
    }
    let duration = match get(o, &["spec", "expirationSeconds"]).and_then(Value::as_i64) {
        Some(secs) => human_duration(SignedDuration::from_secs(secs)),
        None => "<none>".into(),
    };
    Row::new(vec![
        name_cell(o),
        ctx.age(o),
        json!(or_none(s(o, &["spec", "signerName"]))),
        json!(s(o, &["spec", "username"])),
        json!(duration),
        json!(status),
    ])
}

static LEASE_COLS: &[Col] = &[NAME, col("Holder", "string", D_LEASE_HOLDER), AGE];

fn lease_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "holderIdentity"])),
        ctx.age(o),
    ])
}

static CR_COLS: &[Col] = &[
    NAME,
    col("Controller", "string", "Controller of the object"),
    col("Revision", "string", D_CR_REVISION),
    AGE,
];

fn controller_revision_row(o: &Value, ctx: &Ctx) -> Row {
    let controller = arr(o, &["metadata", "ownerReferences"])
        .iter()
        .find(|r| b(r, &["controller"]) == Some(true))
        .map(|r| {
            let api_version = s(r, &["apiVersion"]);
            let group = match api_version.split_once('/') {
                Some((g, _)) => g,
                None => "",
            };
            let kind = s(r, &["kind"]);
            let name = s(r, &["name"]);
            if group.is_empty() && kind.is_empty() {
                name.to_string()
            } else if group.is_empty() {
                format!("{}/{name}", kind.to_lowercase())
            } else {
                format!("{}/{name}", format!("{kind}.{group}").to_lowercase())
            }
        })
        .unwrap_or_else(|| "<none>".into());
    Row::new(vec![
        name_cell(o),
        json!(controller),
        json!(i(o, &["revision"])),
        ctx.age(o),
    ])
}

static QUOTA_COLS: &[Col] = &[
    NAME,
    col("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
    col("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
    AGE,
];

fn quota_row(o: &Value, ctx: &Ctx) -> Row {
    let mut names: Vec<&String> = get(o, &["status", "hard"])
        .and_then(Value::as_object)
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    names.sort();
    let (mut req, mut lim) = (Vec::new(), Vec::new());
    for n in names {
        let used = scalar_text(get(o, &["status", "used", n])).unwrap_or_else(|| "0".into());
        let hard = scalar_text(get(o, &["status", "hard", n])).unwrap_or_else(|| "0".into());
        let entry = format!("{n}: {used}/{hard}");
        let pieces: Vec<&str> = n.split('.').collect();
        if pieces.len() > 1 && pieces[0] == "limits" {
            lim.push(entry);
        } else {
            req.push(entry);
        }
    }
    Row::new(vec![
        name_cell(o),
        json!(req.join(", ")),
        json!(lim.join(", ")),
        ctx.age(o),
    ])
}

static PC_COLS: &[Col] = &[
    NAME,
    col("Value", "integer", D_PC_VALUE),
    col("Global-Default", "boolean", D_PC_DEFAULT),
    AGE,
    wide("PreemptionPolicy", "string", D_PC_PREEMPTION),
];

fn pc_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(i(o, &["value"])),
        json!(b(o, &["globalDefault"]).unwrap_or(false)),
        ctx.age(o),
        json!(s(o, &["preemptionPolicy"])),
    ])
}

// Upstream's description for "Handler" is ObjectMeta's (nonexistent) "handler" doc: empty.
static RUNTIMECLASS_COLS: &[Col] = &[NAME, col("Handler", "string", ""), AGE];

fn runtimeclass_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![name_cell(o), json!(s(o, &["handler"])), ctx.age(o)])
}

// ---------------------------------------------------------------------------------------------
// Admission and flow control

static WEBHOOK_COLS: &[Col] = &[
    NAME,
    col(
        "Webhooks",
        "integer",
        "Webhooks indicates the number of webhooks registered in this configuration",
    ),
    AGE,
];

fn webhook_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(arr(o, &["webhooks"]).len()),
        ctx.age(o),
    ])
}

static VAP_COLS: &[Col] = &[
    NAME,
    col(
        "Validations",
        "integer",
        "Validations indicates the number of validation rules defined in this configuration",
    ),
    col(
        "ParamKind",
        "string",
        "ParamKind specifies the kind of resources used to parameterize this policy",
    ),
    AGE,
];

fn vap_row(o: &Value, ctx: &Ctx) -> Row {
    let param_kind = match get(o, &["spec", "paramKind"]) {
        Some(p) => format!("{}/{}", s(p, &["apiVersion"]), s(p, &["kind"])),
        None => "<unset>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(arr(o, &["spec", "validations"]).len()),
        json!(param_kind),
        ctx.age(o),
    ])
}

static VAPB_COLS: &[Col] = &[
    NAME,
    col(
        "PolicyName",
        "string",
        "PolicyName indicates the policy definition which the policy binding binded to",
    ),
    col(
        "ParamRef",
        "string",
        "ParamRef indicates the param resource which sets the configration param",
    ),
    AGE,
];

/// Go's generated `(*LabelSelector).String()` rendering.
fn go_label_selector(sel: &Value) -> String {
    let mut labels: Vec<(String, String)> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    labels.sort();
    let labels: String = labels.iter().map(|(k, v)| format!("{k}: {v},")).collect();
    let exprs: Vec<String> = arr(sel, &["matchExpressions"])
        .iter()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}}",
                s(e, &["key"]),
                s(e, &["operator"]),
                strings(e, &["values"]).join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{}}},}}",
        exprs.join(",")
    )
}

fn vapb_row(o: &Value, ctx: &Ctx) -> Row {
    let param = match get(o, &["spec", "paramRef"]) {
        Some(pr) => {
            let name = s(pr, &["name"]);
            if !name.is_empty() {
                match s(pr, &["namespace"]) {
                    "" => format!("*/{name}"),
                    ns => format!("{ns}/{name}"),
                }
            } else if let Some(sel) = get(pr, &["selector"]) {
                go_label_selector(sel)
            } else {
                "<unset>".into()
            }
        }
        None => "<unset>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "policyName"])),
        json!(param),
        ctx.age(o),
    ])
}

static FS_COLS: &[Col] = &[
    NAME,
    col("PriorityLevel", "string", D_FS_PL),
    col("MatchingPrecedence", "string", D_FS_PRECEDENCE),
    col("DistinguisherMethod", "string", D_FS_DISTINGUISHER),
    AGE,
    col(
        "MissingPL",
        "string",
        "references a broken or non-existent PriorityLevelConfiguration",
    ),
];

fn fs_row(o: &Value, ctx: &Ctx) -> Row {
    let dist = get(o, &["spec", "distinguisherMethod"])
        .map(|d| s(d, &["type"]).to_string())
        .unwrap_or_else(|| "<none>".into());
    let missing = arr(o, &["status", "conditions"])
        .iter()
        .find(|c| s(c, &["type"]) == "Dangling")
        .map(|c| s(c, &["status"]).to_string())
        .unwrap_or_else(|| "?".into());
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "priorityLevelConfiguration", "name"])),
        json!(i(o, &["spec", "matchingPrecedence"])),
        json!(dist),
        ctx.age(o),
        json!(missing),
    ])
}

static PL_COLS: &[Col] = &[
    NAME,
    col("Type", "string", D_PL_TYPE),
    col("NominalConcurrencyShares", "string", D_PL_NCS),
    col("Queues", "string", D_PL_QUEUES),
    col("HandSize", "string", D_PL_HANDSIZE),
    col("QueueLengthLimit", "string", D_PL_QLL),
    AGE,
];

fn pl_row(o: &Value, ctx: &Ctx) -> Row {
    let none = || json!("<none>");
    let (mut ncs, mut queues, mut hand, mut qll) = (none(), none(), none(), none());
    if let Some(limited) = get(o, &["spec", "limited"]) {
        ncs = json!(i(limited, &["nominalConcurrencyShares"]));
        if let Some(q) = get(limited, &["limitResponse", "queuing"]) {
            queues = json!(i(q, &["queues"]));
            hand = json!(i(q, &["handSize"]));
            qll = json!(i(q, &["queueLengthLimit"]));
        }
    }
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "type"])),
        ncs,
        queues,
        hand,
        qll,
        ctx.age(o),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printer(group: &str, resource: &str) -> Printer {
        crate::registry::builtin::registry()
            .snapshot()
            .resolve(group, resource)
            .map(|r| r.strategy.printer())
            .unwrap_or(DEFAULT)
    }

    fn table(
        group: &str,
        resource: &str,
        items: &[Value],
        list_meta: Value,
        include: IncludeObject,
        api_version: &str,
        now: Timestamp,
    ) -> Value {
        super::table(
            printer(group, resource),
            items,
            list_meta,
            include,
            api_version,
            now,
        )
    }

    fn column_names(group: &str, resource: &str) -> Vec<&'static str> {
        super::column_names(printer(group, resource))
    }

    fn now() -> Timestamp {
        "2025-06-01T12:00:00Z".parse().unwrap()
    }

    fn cells(group: &str, resource: &str, obj: Value) -> Vec<Value> {
        let t = table(
            group,
            resource,
            &[obj],
            json!({"resourceVersion": "7"}),
            IncludeObject::None,
            "v1",
            now(),
        );
        t["rows"][0]["cells"].as_array().unwrap().clone()
    }

    #[test]
    fn human_durations() {
        let cases: &[(i64, &str)] = &[
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (5, "5s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (599, "9m59s"),
            (600, "10m"),
            (179 * 60 + 59, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 120, "3h2m"),
            (8 * 3600, "8h"),
            (47 * 3600 + 3599, "47h"),
            (48 * 3600, "2d"),
            (50 * 3600, "2d2h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            ((3 * 365 + 45) * 86400, "3y45d"),
            (8 * 365 * 86400, "8y"),
            (20 * 365 * 86400, "20y"),
        ];
        for &(secs, want) in cases {
            assert_eq!(
                human_duration(SignedDuration::from_secs(secs)),
                want,
                "{secs}"
            );
        }
        assert_eq!(human_duration(SignedDuration::from_millis(-1500)), "0s");
    }

    #[test]
    fn selectors() {
        let cases = [
            (json!(null), "<none>"),
            (json!({}), "<none>"),
            (json!({"matchLabels": {"b": "2", "a": "1"}}), "a=1,b=2"),
            (
                json!({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]}, {"key": "app", "operator": "Exists"}]}),
                "app,env in (dev,prod)",
            ),
            (
                json!({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["a"]}, {"key": "y", "operator": "DoesNotExist"}]}),
                "x notin (a),!y",
            ),
            (
                json!({"matchExpressions": [{"key": "x", "operator": "Bad"}]}),
                "<error>",
            ),
        ];
        for (sel, want) in cases {
            let sel = if sel.is_null() { None } else { Some(&sel) };
            assert_eq!(format_label_selector(sel), want);
        }
        assert_eq!(format_labels(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
        assert_eq!(format_labels(None), "<none>");
    }

    fn pod(status: Value, extra_meta: Value) -> Value {
        let mut meta = json!({"name": "web", "namespace": "default", "creationTimestamp": "2025-06-01T11:55:00Z"});
        if let (Some(m), Some(x)) = (meta.as_object_mut(), extra_meta.as_object()) {
            m.extend(x.clone());
        }
        json!({
            "metadata": meta,
            "spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "busybox"}], "nodeName": "n1"},
            "status": status,
        })
    }

    #[test]
    fn pod_status_cells() {
        let running = json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
            "podIPs": [{"ip": "10.0.0.5"}],
            "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}},
                 "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2025-06-01T11:59:00Z"}}},
                {"name": "b", "ready": true, "restartCount": 0, "state": {"running": {}}}]});
        // (status, extra metadata, ready, status column, restarts)
        let cases = [
            (running.clone(), json!({}), "2/2", "Running", "2 (60s ago)"),
            (
                running,
                json!({"deletionTimestamp": "2025-06-01T12:00:00Z"}),
                "2/2",
                "Terminating",
                "2 (60s ago)",
            ),
            (
                json!({"phase": "Pending"}),
                json!({}),
                "0/2",
                "Pending",
                "0",
            ),
            (
                json!({"phase": "Pending", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}},
                {"name": "b", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}),
                json!({}),
                "0/2",
                "ContainerCreating",
                "0",
            ),
            (
                json!({"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 5, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}),
                json!({}),
                "0/2",
                "CrashLoopBackOff",
                "5",
            ),
            (
                json!({"phase": "Succeeded", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}),
                json!({"deletionTimestamp": "2025-06-01T12:00:00Z"}),
                "0/2",
                "Completed",
                "0",
            ),
            (
                json!({"phase": "Failed", "reason": "Evicted"}),
                json!({}),
                "0/2",
                "Evicted",
                "0",
            ),
            (
                json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
                json!({}),
                "0/2",
                "SchedulingGated",
                "0",
            ),
            (
                json!({"phase": "Running", "reason": "NodeLost"}),
                json!({"deletionTimestamp": "2025-06-01T12:00:00Z"}),
                "0/2",
                "Unknown",
                "0",
            ),
            (
                json!({"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 137, "signal": 0}}}]}),
                json!({}),
                "0/2",
                "ExitCode:137",
                "0",
            ),
        ];
        for (status, meta, ready, st, restarts) in cases {
            let c = cells("", "pods", pod(status, meta));
            assert_eq!(c[0], "web");
            assert_eq!(c[1], ready, "{st}");
            assert_eq!(c[2], st);
            assert_eq!(c[3], restarts, "{st}");
            assert_eq!(c[4], "5m");
            assert_eq!(c[6], "n1");
            assert_eq!(c[7], "<none>");
            assert_eq!(c[8], "<none>");
        }
    }

    #[test]
    fn pod_init_containers() {
        let mut p = pod(
            json!({"phase": "Pending", "initContainerStatuses": [
                {"name": "init1", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
                {"name": "init2", "restartCount": 0, "state": {"running": {}}}]}),
            json!({}),
        );
        p["spec"]["initContainers"] = json!([{"name": "init1"}, {"name": "init2"}, {"name": "side", "restartPolicy": "Always"}]);
        let c = cells("", "pods", p.clone());
        assert_eq!(c[1], "0/3");
        assert_eq!(c[2], "Init:1/3");
        p["status"]["initContainerStatuses"][1]["state"] =
            json!({"waiting": {"reason": "ErrImagePull"}});
        assert_eq!(cells("", "pods", p.clone())[2], "Init:ErrImagePull");
        p["status"]["initContainerStatuses"][1]["state"] = json!({"terminated": {"exitCode": 2}});
        assert_eq!(cells("", "pods", p)[2], "Init:ExitCode:2");
    }

    #[test]
    fn pod_row_conditions_and_objects() {
        let p = pod(json!({"phase": "Succeeded"}), json!({}));
        for (include, want) in [
            (IncludeObject::None, json!(null)),
            (
                IncludeObject::Metadata,
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": p["metadata"].clone()}),
            ),
            (IncludeObject::Object, p.clone()),
        ] {
            let t = table(
                "",
                "pods",
                std::slice::from_ref(&p),
                json!({"resourceVersion": "9"}),
                include,
                "v1",
                now(),
            );
            assert_eq!(t["rows"][0]["object"], want);
            assert_eq!(t["metadata"]["resourceVersion"], "9");
            assert_eq!(
                t["rows"][0]["conditions"],
                json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}])
            );
        }
        let t = table(
            "",
            "pods",
            &[],
            json!({}),
            IncludeObject::Metadata,
            "meta.k8s.io/v1beta1",
            now(),
        );
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["rows"], json!([]));
        assert_eq!(
            t["columnDefinitions"][0],
            json!({"name": "Name", "type": "string", "format": "name", "description": D_NAME, "priority": 0})
        );
        assert_eq!(t["columnDefinitions"][5]["priority"], 1);
        assert_eq!(IncludeObject::parse(""), Some(IncludeObject::Metadata));
        assert_eq!(IncludeObject::parse("Object"), Some(IncludeObject::Object));
        assert_eq!(IncludeObject::parse("bogus"), None);
    }

    #[test]
    fn deployment_cells() {
        let d = json!({
            "metadata": {"name": "nginx", "creationTimestamp": "2025-05-30T12:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
                     "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        });
        assert_eq!(
            cells("apps", "deployments", d),
            vec![
                json!("nginx"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("2d"),
                json!("nginx"),
                json!("nginx:1.27"),
                json!("app=nginx")
            ]
        );
        assert_eq!(
            column_names("apps", "deployments"),
            [
                "Name",
                "Ready",
                "Up-to-date",
                "Available",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
    }

    #[test]
    fn service_cells() {
        let base = |spec: Value| json!({"metadata": {"name": "svc", "creationTimestamp": "2025-06-01T11:59:30Z"}, "spec": spec});
        let cases = [
            (
                base(
                    json!({"type": "ClusterIP", "clusterIPs": ["10.96.0.10"], "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}], "selector": {"k8s-app": "kube-dns"}}),
                ),
                vec![
                    "svc",
                    "ClusterIP",
                    "10.96.0.10",
                    "<none>",
                    "53/UDP,53/TCP",
                    "30s",
                    "k8s-app=kube-dns",
                ],
            ),
            (
                base(
                    json!({"type": "NodePort", "clusterIPs": ["10.96.1.1"], "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}),
                ),
                vec![
                    "svc",
                    "NodePort",
                    "10.96.1.1",
                    "<none>",
                    "80:30080/TCP",
                    "30s",
                    "<none>",
                ],
            ),
            (
                base(
                    json!({"type": "LoadBalancer", "clusterIPs": ["10.96.1.2"], "ports": [{"port": 443, "nodePort": 31443}]}),
                ),
                vec![
                    "svc",
                    "LoadBalancer",
                    "10.96.1.2",
                    "<pending>",
                    "443:31443/TCP",
                    "30s",
                    "<none>",
                ],
            ),
            (
                base(json!({"type": "ExternalName", "externalName": "example.com"})),
                vec![
                    "svc",
                    "ExternalName",
                    "<none>",
                    "example.com",
                    "<none>",
                    "30s",
                    "<none>",
                ],
            ),
        ];
        for (svc, want) in cases {
            let want: Vec<Value> = want.into_iter().map(|x| json!(x)).collect();
            assert_eq!(cells("", "services", svc), want);
        }
    }

    #[test]
    fn event_cells() {
        let core = json!({
            "metadata": {"name": "web.17a", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
            "reason": "Pulled", "message": "Successfully pulled image \"nginx\" \n", "type": "Normal",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2025-06-01T11:50:00Z", "lastTimestamp": "2025-06-01T11:58:00Z", "count": 3,
        });
        assert_eq!(
            cells("", "events", core),
            vec![
                json!("2m"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/web"),
                json!("spec.containers{a}"),
                json!("kubelet, n1"),
                json!("Successfully pulled image \"nginx\""),
                json!("10m"),
                json!(3),
                json!("web.17a")
            ]
        );
        let new_api = json!({
            "apiVersion": "events.k8s.io/v1",
            "metadata": {"name": "e2", "namespace": "default"},
            "regarding": {"kind": "Node", "name": "n1"},
            "reason": "Starting", "note": "hello", "type": "Normal",
            "eventTime": "2025-06-01T11:59:55.000000Z", "reportingController": "kubelet", "reportingInstance": "n1",
        });
        assert_eq!(
            cells("events.k8s.io", "events", new_api),
            vec![
                json!("5s"),
                json!("Normal"),
                json!("Starting"),
                json!("node/n1"),
                json!(""),
                json!("kubelet, n1"),
                json!("hello"),
                json!("5s"),
                json!(1),
                json!("e2")
            ]
        );
        assert_eq!(
            column_names("", "events"),
            [
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "Subobject",
                "Source",
                "Message",
                "First Seen",
                "Count",
                "Name"
            ]
        );
    }

    #[test]
    fn misc_cells() {
        let cm = json!({"metadata": {"name": "c", "creationTimestamp": "2025-06-01T11:00:00Z"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}});
        assert_eq!(
            cells("", "configmaps", cm),
            vec![json!("c"), json!(3), json!("60m")]
        );
        let secret = json!({"metadata": {"name": "s"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
        assert_eq!(
            cells("", "secrets", secret),
            vec![
                json!("s"),
                json!("kubernetes.io/tls"),
                json!(2),
                json!("<unknown>")
            ]
        );
        let ns = json!({"metadata": {"name": "default", "creationTimestamp": "2025-05-01T12:00:00Z"}, "status": {"phase": "Active"}});
        assert_eq!(
            cells("", "namespaces", ns),
            vec![json!("default"), json!("Active"), json!("31d")]
        );
        let lease = json!({"metadata": {"name": "l", "creationTimestamp": "2025-06-01T11:59:59Z"}, "spec": {"holderIdentity": "me"}});
        assert_eq!(
            cells("coordination.k8s.io", "leases", lease),
            vec![json!("l"), json!("me"), json!("1s")]
        );
        let crd = json!({"metadata": {"name": "foos.example.com", "creationTimestamp": "2025-06-01T10:00:00Z"}});
        assert_eq!(
            cells("apiextensions.k8s.io", "customresourcedefinitions", crd),
            vec![json!("foos.example.com"), json!("2025-06-01T10:00:00Z")]
        );
        assert_eq!(
            column_names("rbac.authorization.k8s.io", "roles"),
            ["Name", "Created At"]
        );
        let job = json!({"metadata": {"name": "j", "creationTimestamp": "2025-06-01T11:00:00Z"},
            "spec": {"completions": 1, "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}, "selector": {"matchLabels": {"a": "b"}}},
            "status": {"succeeded": 1, "startTime": "2025-06-01T11:00:00Z", "completionTime": "2025-06-01T11:00:42Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(
            cells("batch", "jobs", job),
            vec![
                json!("j"),
                json!("Complete"),
                json!("1/1"),
                json!("42s"),
                json!("60m"),
                json!("pi"),
                json!("perl"),
                json!("a=b")
            ]
        );
        let node = json!({"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.33.1"},
                       "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}});
        assert_eq!(
            cells("", "nodes", node),
            vec![
                json!("n1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane"),
                json!("<unknown>"),
                json!("v1.33.1"),
                json!("172.18.0.2"),
                json!("<none>"),
                json!("<unknown>"),
                json!("<unknown>"),
                json!("<unknown>")
            ]
        );
        let rb = json!({"metadata": {"name": "rb"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]});
        assert_eq!(
            cells("rbac.authorization.k8s.io", "rolebindings", rb),
            vec![
                json!("rb"),
                json!("ClusterRole/view"),
                json!("<unknown>"),
                json!("u"),
                json!(""),
                json!("ns/sa")
            ]
        );
    }

    #[test]
    fn every_builtin_resource_renders() {
        for r in crate::registry::resources::RESOURCES {
            let t = table(
                r.group,
                r.resource,
                &[json!({"metadata": {"name": "x"}})],
                json!({}),
                IncludeObject::None,
                "v1",
                now(),
            );
            let cols = t["columnDefinitions"].as_array().unwrap().len();
            let cells = t["rows"][0]["cells"].as_array().unwrap().len();
            // Upstream's IPAddress printer emits one more cell (the age) than it declares columns.
            let extra = usize::from(r.resource == "ipaddresses");
            assert_eq!(cols + extra, cells, "{}", r.resource);
        }
    }

    #[test]
    fn flowschemas_sorted_by_precedence() {
        let fs = |n: &str, p: i64| json!({"metadata": {"name": n}, "spec": {"matchingPrecedence": p, "priorityLevelConfiguration": {"name": "pl"}}});
        let t = table(
            "flowcontrol.apiserver.k8s.io",
            "flowschemas",
            &[fs("b", 1000), fs("a", 1000), fs("exempt", 1)],
            json!({}),
            IncludeObject::None,
            "v1",
            now(),
        );
        let names: Vec<&str> = t["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["cells"][0].as_str().unwrap())
            .collect();
        assert_eq!(names, ["exempt", "a", "b"]);
    }
}
