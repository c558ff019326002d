//! The `paths` of Rafter's OpenAPI documents, in v2 (swagger) form.
//!
//! Owns: for every served resource of a registry snapshot ([`Catalog`]), the
//! collection, item, `status`, `scale`, connect (exec, attach, portforward, the proxies with
//! and without `{path}`), pods/log and deprecated `watch` paths with kube-apiserver's
//! operation ids, `x-kubernetes-action`, `x-kubernetes-group-version-kind`, parameters,
//! consumed/produced media types and responses; plus the discovery paths (`/api/`, `/apis/`,
//! `/apis/<group>/`, `/api/v1/`, `/apis/<group>/<version>/`).
//!
//! Does not know: schemas (only references them by name), OpenAPI v3 (`v3.rs` converts these
//! items), HTTP serving, custom resources.

use serde_json::{json, Map, Value};

use super::schemas::V2_REF;
use crate::registry::{Catalog, Resource};

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// Media types of ordinary responses.
pub(crate) const PRODUCES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/cbor",
];
/// Media types of list and watch responses.
const PRODUCES_WATCH: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/cbor",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/cbor-seq",
];
/// Media types of the discovery documents of `/api/`, `/apis/` and `/apis/<group>/`.
const PRODUCES_DISCOVERY: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];
/// Request bodies PATCH accepts.
pub(crate) const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/apply-patch+cbor",
];
const ANY: &[&str] = &["*/*"];

/// Kinds whose DELETE answers with the deleted object rather than a Status.
const DELETE_RETURNS_OBJECT: &[&str] = &[
    "io.k8s.api.core.v1.PersistentVolume",
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.PodTemplate",
    "io.k8s.api.core.v1.ResourceQuota",
    "io.k8s.api.core.v1.Service",
    "io.k8s.api.core.v1.ServiceAccount",
    "io.k8s.api.storage.v1.CSIDriver",
    "io.k8s.api.storage.v1.CSINode",
    "io.k8s.api.storage.v1.StorageClass",
    "io.k8s.api.storage.v1.VolumeAttachment",
];

/// Query and path parameters: (key, name, in, type, description). `fieldManagerApply` is the
/// PATCH flavour of `fieldManager`.
const PARAMS: &[(&str, &str, &str, &str, &str)] = &[
    ("allowWatchBookmarks", "allowWatchBookmarks", "query", "boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored."),
    ("continue", "continue", "query", "string", "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token. If the client needs a consistent list, it must restart their list without the continue field. Otherwise, the client may send another list request with the token received with the 410 error, the server will respond with a list starting from the next key, but from the latest snapshot, which is inconsistent from the previous list results - objects that are created, modified, or deleted after the first list request will be included in the response, as long as their keys are after the \"next key\".\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications."),
    ("dryRun", "dryRun", "query", "string", "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed"),
    ("fieldManager", "fieldManager", "query", "string", "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint."),
    ("fieldManagerApply", "fieldManager", "query", "string", "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch)."),
    ("fieldSelector", "fieldSelector", "query", "string", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
    ("fieldValidation", "fieldValidation", "query", "string", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered."),
    ("force", "force", "query", "boolean", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests."),
    ("gracePeriodSeconds", "gracePeriodSeconds", "query", "integer", "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately."),
    ("ignoreStoreReadErrorWithClusterBreakingPotential", "ignoreStoreReadErrorWithClusterBreakingPotential", "query", "boolean", "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it"),
    ("labelSelector", "labelSelector", "query", "string", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
    ("limit", "limit", "query", "integer", "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up to zero items) in the event all requested objects are filtered out and clients should only use the presence of the continue field to determine whether more results are available. Servers may choose not to support the limit argument and will return all of the available results. If limit is specified and the continue field is empty, clients may assume that no more results are available. This field is not supported if watch is true.\n\nThe server guarantees that the objects returned when using continue will be identical to issuing a single list call without a limit - that is, no objects created, modified, or deleted after the first request is issued will be included in any subsequent continued requests. This is sometimes referred to as a consistent snapshot, and ensures that a client that is using limit to receive smaller chunks of a very large result can ensure they see all possible objects. If objects are updated during a chunked list the version of the object that was present at the time the first list result was calculated is returned."),
    ("namespace", "namespace", "path", "string", "object name and auth scope, such as for teams and projects"),
    ("orphanDependents", "orphanDependents", "query", "boolean", "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both."),
    ("pretty", "pretty", "query", "string", "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."),
    ("propagationPolicy", "propagationPolicy", "query", "string", "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground."),
    ("resourceVersion", "resourceVersion", "query", "string", "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"),
    ("resourceVersionMatch", "resourceVersionMatch", "query", "string", "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"),
    ("sendInitialEvents", "sendInitialEvents", "query", "boolean", "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `\"k8s.io/initial-events-end\": \"true\"` annotation. Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes (subsequent to the RV) to objects watched.\n\nWhen `sendInitialEvents` option is set, we require `resourceVersionMatch` option to also be set. The semantic of the watch request is as following: - `resourceVersionMatch` = NotOlderThan\n  is interpreted as \"data at least as new as the provided `resourceVersion`\"\n  and the bookmark event is send when the state is synced\n  to a `resourceVersion` at least as fresh as the one provided by the ListOptions.\n  If `resourceVersion` is unset, this is interpreted as \"consistent read\" and the\n  bookmark event is send when the state is synced at least to the moment\n  when request started being processed.\n- `resourceVersionMatch` set to any other value or unset\n  Invalid error is returned.\n\nDefaults to true if `resourceVersion=\"\"` or `resourceVersion=\"0\"` (for backward compatibility reasons) and to false otherwise."),
    ("timeoutSeconds", "timeoutSeconds", "query", "integer", "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity."),
    ("watch", "watch", "query", "boolean", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion."),
    // The options of the connect subresources and pods/log (their Go option structs' docs).
    ("attachContainer", "container", "query", "string", "The container in which to execute the command. Defaults to only container if there is only one container in the pod."),
    ("attachStderr", "stderr", "query", "boolean", "Stderr if true indicates that stderr is to be redirected for the attach call. Defaults to true."),
    ("attachStdin", "stdin", "query", "boolean", "Stdin if true, redirects the standard input stream of the pod for this call. Defaults to false."),
    ("attachStdout", "stdout", "query", "boolean", "Stdout if true indicates that stdout is to be redirected for the attach call. Defaults to true."),
    ("attachTty", "tty", "query", "boolean", "TTY if true indicates that a tty will be allocated for the attach call. This is passed through the container runtime so the tty is allocated on the worker node by the container runtime. Defaults to false."),
    ("execCommand", "command", "query", "string", "Command is the remote command to execute. argv array. Not executed within a shell."),
    ("execContainer", "container", "query", "string", "Container in which to execute the command. Defaults to only container if there is only one container in the pod."),
    ("execStderr", "stderr", "query", "boolean", "Redirect the standard error stream of the pod for this call."),
    ("execStdin", "stdin", "query", "boolean", "Redirect the standard input stream of the pod for this call. Defaults to false."),
    ("execStdout", "stdout", "query", "boolean", "Redirect the standard output stream of the pod for this call."),
    ("execTty", "tty", "query", "boolean", "TTY if true indicates that a tty will be allocated for the exec call. Defaults to false."),
    ("logContainer", "container", "query", "string", "The container for which to stream logs. Defaults to only container if there is one container in the pod."),
    ("logFollow", "follow", "query", "boolean", "Follow the log stream of the pod. Defaults to false."),
    ("logInsecureSkipTLSVerifyBackend", "insecureSkipTLSVerifyBackend", "query", "boolean", "insecureSkipTLSVerifyBackend indicates that the apiserver should not confirm the validity of the serving certificate of the backend it is connecting to.  This will make the HTTPS connection between the apiserver and the backend insecure. This means the apiserver cannot verify the log data it is receiving came from the real kubelet.  If the kubelet is configured to verify the apiserver's TLS credentials, it does not mean the connection to the real kubelet is vulnerable to a man in the middle attack (e.g. an attacker could not intercept the actual log data coming from the real kubelet)."),
    ("logLimitBytes", "limitBytes", "query", "integer", "If set, the number of bytes to read from the server before terminating the log output. This may not display a complete final line of logging, and may return slightly more or slightly less than the specified limit."),
    ("logPrevious", "previous", "query", "boolean", "Return previous terminated container logs. Defaults to false."),
    ("logSinceSeconds", "sinceSeconds", "query", "integer", "A relative time in seconds before the current time from which to show logs. If this value precedes the time a pod was started, only logs since the pod start will be returned. If this value is in the future, no logs will be returned. Only one of sinceSeconds or sinceTime may be specified."),
    ("logStream", "stream", "query", "string", "Specify which container log stream to return to the client. Acceptable values are \"All\", \"Stdout\" and \"Stderr\". If not specified, \"All\" is used, and both stdout and stderr are returned interleaved. Note that when \"TailLines\" is specified, \"Stream\" can only be set to nil or \"All\"."),
    ("logTailLines", "tailLines", "query", "integer", "If set, the number of lines from the end of the logs to show. If not specified, logs are shown from the creation of the container or sinceSeconds or sinceTime. Note that when \"TailLines\" is specified, \"Stream\" can only be set to nil or \"All\"."),
    ("logTimestamps", "timestamps", "query", "boolean", "If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line of log output. Defaults to false."),
    ("portforwardPorts", "ports", "query", "integer", "List of ports to forward Required when using WebSockets"),
    ("proxyPath", "path", "path", "string", "path to the resource"),
    ("nodeProxyPath", "path", "query", "string", "Path is the URL path to use for the current proxy request to node."),
    ("podProxyPath", "path", "query", "string", "Path is the URL path to use for the current proxy request to pod."),
    ("serviceProxyPath", "path", "query", "string", "Path is the part of URLs that include service endpoints, suffixes, and parameters to use for the current proxy request to service. For example, the whole request URL is http://localhost/api/v1/namespaces/kube-system/services/elasticsearch-logging/_search?q=user:kimchy. Path is _search?q=user:kimchy."),
];

/// Parameters of list (and deprecated watch) requests, in upstream's order.
const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];

/// One v2 parameter object by key (`None` for an unknown key, which is a bug).
fn param(key: &str) -> Option<Value> {
    let (_, name, location, ty, description) = PARAMS.iter().find(|p| p.0 == key)?;
    let mut p = json!({
        "description": description,
        "in": location,
        "name": name,
        "type": ty,
        "uniqueItems": true,
    });
    if *location == "path" {
        p["required"] = Value::Bool(true);
    }
    Some(p)
}

fn params(keys: &[&str]) -> Vec<Value> {
    keys.iter().filter_map(|k| param(k)).collect()
}

fn name_param(kind: &str) -> Value {
    json!({
        "description": format!("name of the {kind}"),
        "in": "path",
        "name": "name",
        "required": true,
        "type": "string",
        "uniqueItems": true,
    })
}

fn body(definition: &str, required: bool) -> Value {
    let mut b =
        json!({"in": "body", "name": "body", "schema": {"$ref": format!("{V2_REF}{definition}")}});
    if required {
        b["required"] = Value::Bool(true);
    }
    b
}

/// `Apps`, `RbacAuthorization`, `Core` (for `""`): the group part of operation ids.
pub(crate) fn group_camel(group: &str) -> String {
    if group.is_empty() {
        return "Core".into();
    }
    let g = group.strip_suffix(".k8s.io").unwrap_or(group);
    g.split('.').map(upper_first).collect()
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The operation tag of a group-version, e.g. `apps_v1`, `core_v1`, `rbacAuthorization_v1`.
fn tag(group: &str, version: &str) -> String {
    format!("{}_{version}", lower_first(&group_camel(group)))
}

/// Upstream's article rule: none for plural-looking kinds, `an` before a vowel, else `a`.
fn article(kind: &str) -> &'static str {
    if kind.ends_with('s') && !kind.ends_with("ss") {
        return " ";
    }
    match kind.chars().next() {
        Some('A' | 'E' | 'I' | 'O' | 'U' | 'a' | 'e' | 'i' | 'o' | 'u') => " an ",
        _ => " a ",
    }
}

/// The URL prefix of a group-version: `/api/v1` or `/apis/<group>/<version>`.
pub(crate) fn gv_prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "kind": kind, "version": version})
}

struct Op<'a> {
    action: &'a str,
    id: String,
    description: String,
    params: Vec<Value>,
    consumes: &'a [&'a str],
    produces: &'a [&'a str],
    /// (status code, schema definition)
    responses: Vec<(&'a str, &'a str)>,
    tag: String,
    gvk: Option<Value>,
}

fn response_description(code: &str) -> &'static str {
    match code {
        "200" => "OK",
        "201" => "Created",
        "202" => "Accepted",
        _ => "Unauthorized",
    }
}

fn render(op: Op<'_>) -> Value {
    let mut responses = Map::new();
    for (code, def) in &op.responses {
        responses.insert(
            code.to_string(),
            json!({"description": response_description(code), "schema": {"$ref": format!("{V2_REF}{def}")}}),
        );
    }
    responses.insert("401".into(), json!({"description": "Unauthorized"}));
    let mut o = json!({
        "consumes": op.consumes,
        "description": op.description,
        "operationId": op.id,
        "produces": op.produces,
        "responses": responses,
        "schemes": ["https"],
        "tags": [op.tag],
    });
    if !op.params.is_empty() {
        o["parameters"] = Value::Array(op.params);
    }
    if !op.action.is_empty() {
        o["x-kubernetes-action"] = op.action.into();
    }
    if let Some(g) = op.gvk {
        o["x-kubernetes-group-version-kind"] = g;
    }
    o
}

/// Path-level parameters sorted by name (upstream's order for watch and all-namespace paths).
fn sorted_params(mut keys: Vec<&str>, name_kind: Option<&str>) -> Vec<Value> {
    keys.sort_by_key(|k| PARAMS.iter().find(|p| p.0 == *k).map(|p| p.1).unwrap_or(k));
    let mut out = Vec::new();
    let mut name_done = name_kind.is_none();
    for k in keys {
        let pname = PARAMS.iter().find(|p| p.0 == k).map(|p| p.1).unwrap_or(k);
        if !name_done && pname > "name" {
            out.extend(name_kind.map(name_param));
            name_done = true;
        }
        out.extend(param(k));
    }
    if !name_done {
        out.extend(name_kind.map(name_param));
    }
    out
}

/// Adds every path of one resource to `paths` (v2 form).
fn resource_paths(r: &Resource, paths: &mut Map<String, Value>) {
    let has = |verb: &str| r.has_verb(verb);
    let g = r.group.as_str();
    let v = r.version.as_str();
    let k = r.kind.as_str();
    let prefix = gv_prefix(g, v);
    let camel = format!("{}{}", group_camel(g), upper_first(v));
    let ns = if r.namespaced { "Namespaced" } else { "" };
    let tag = tag(g, v);
    let list_def = format!("{}List", r.definition);
    let def = r.definition.as_str();
    let kind_gvk = || Some(gvk(g, v, k));
    let base = if r.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", r.resource)
    } else {
        format!("{prefix}/{}", r.resource)
    };
    let scope_params: Vec<&str> = if r.namespaced {
        vec!["namespace", "pretty"]
    } else {
        vec!["pretty"]
    };
    let art = article(k);

    // Collection.
    let mut coll = Map::new();
    if has("deletecollection") {
        let mut p = vec![body(DELETE_OPTIONS, false)];
        p.extend(params(&[
            "continue",
            "dryRun",
            "fieldSelector",
            "gracePeriodSeconds",
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            "labelSelector",
            "limit",
            "orphanDependents",
            "propagationPolicy",
            "resourceVersion",
            "resourceVersionMatch",
            "sendInitialEvents",
            "timeoutSeconds",
        ]));
        coll.insert(
            "delete".into(),
            render(Op {
                action: "deletecollection",
                id: format!("delete{camel}Collection{ns}{k}"),
                description: format!("delete collection of {k}"),
                params: p,
                consumes: ANY,
                produces: PRODUCES,
                responses: vec![("200", STATUS)],
                tag: tag.clone(),
                gvk: kind_gvk(),
            }),
        );
    }
    if has("list") {
        coll.insert(
            "get".into(),
            render(Op {
                action: "list",
                id: format!("list{camel}{ns}{k}"),
                description: format!("list or watch objects of kind {k}"),
                params: params(LIST_PARAMS),
                consumes: ANY,
                produces: PRODUCES_WATCH,
                responses: vec![("200", &list_def)],
                tag: tag.clone(),
                gvk: kind_gvk(),
            }),
        );
    }
    if has("create") {
        let mut p = vec![body(def, true)];
        p.extend(params(&["dryRun", "fieldManager", "fieldValidation"]));
        coll.insert(
            "post".into(),
            render(Op {
                action: "post",
                id: format!("create{camel}{ns}{k}"),
                description: format!("create{art}{k}"),
                params: p,
                consumes: ANY,
                produces: PRODUCES,
                responses: vec![("200", def), ("201", def), ("202", def)],
                tag: tag.clone(),
                gvk: kind_gvk(),
            }),
        );
    }
    if !coll.is_empty() {
        coll.insert("parameters".into(), Value::Array(params(&scope_params)));
        paths.insert(base.clone(), Value::Object(coll));
    }

    // Item.
    let mut item_scope = vec![name_param(k)];
    item_scope.extend(params(&scope_params));
    let mut item = Map::new();
    if has("delete") {
        let mut p = vec![body(DELETE_OPTIONS, false)];
        p.extend(params(&[
            "dryRun",
            "gracePeriodSeconds",
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            "orphanDependents",
            "propagationPolicy",
        ]));
        let answer = if DELETE_RETURNS_OBJECT.contains(&def) {
            def
        } else {
            STATUS
        };
        item.insert(
            "delete".into(),
            render(Op {
                action: "delete",
                id: format!("delete{camel}{ns}{k}"),
                description: format!("delete{art}{k}"),
                params: p,
                consumes: ANY,
                produces: PRODUCES,
                responses: vec![("200", answer), ("202", answer)],
                tag: tag.clone(),
                gvk: kind_gvk(),
            }),
        );
    }
    let item_ops = ItemOps {
        camel: &camel,
        ns,
        kind: k,
        tag: &tag,
        gvk: gvk(g, v, k),
    };
    if has("get") {
        item.insert("get".into(), item_ops.read("", "the specified", def));
    }
    if has("patch") {
        item.insert("patch".into(), item_ops.patch("", "the specified", def));
    }
    if has("update") {
        item.insert("put".into(), item_ops.replace("", "the specified", def));
    }
    if !item.is_empty() {
        item.insert("parameters".into(), Value::Array(item_scope.clone()));
        paths.insert(format!("{base}/{{name}}"), Value::Object(item));
    }

    // Subresources.
    if r.has_status {
        let mut sub = item_ops.subresource("Status", "status of the specified", def);
        sub.insert("parameters".into(), Value::Array(item_scope.clone()));
        paths.insert(format!("{base}/{{name}}/status"), Value::Object(sub));
    }
    // Subresources writing a part of the object (pods/ephemeralcontainers, pods/resize).
    for e in r.strategy.extras() {
        if let crate::registry::strategy::Extra::Writes(name) = e {
            let what = format!("{name} of the specified");
            let mut sub = item_ops.subresource(&upper_first(name), &what, def);
            sub.insert("parameters".into(), Value::Array(item_scope.clone()));
            paths.insert(format!("{base}/{{name}}/{name}"), Value::Object(sub));
        }
    }
    connect_paths(r, &base, &camel, ns, &tag, paths);
    if r.scale.is_some() {
        let scale_ops = ItemOps {
            gvk: gvk("autoscaling", "v1", "Scale"),
            ..item_ops
        };
        let mut sub = scale_ops.subresource("Scale", "scale of the specified", SCALE);
        let mut scope = vec![name_param("Scale")];
        scope.extend(params(&scope_params));
        sub.insert("parameters".into(), Value::Array(scope));
        paths.insert(format!("{base}/{{name}}/scale"), Value::Object(sub));
    }

    // All namespaces and the deprecated watch paths.
    let watch_op = |action: &str, id: String, description: String, responses: Vec<(&str, &str)>| {
        render(Op {
            action,
            id,
            description,
            params: Vec::new(),
            consumes: ANY,
            produces: PRODUCES_WATCH,
            responses,
            tag: tag.clone(),
            gvk: kind_gvk(),
        })
    };
    let mut list_scope: Vec<&str> = LIST_PARAMS.to_vec();
    list_scope.push("pretty");
    if r.namespaced && has("list") {
        paths.insert(
            format!("{prefix}/{}", r.resource),
            json!({
                "get": watch_op("list", format!("list{camel}{k}ForAllNamespaces"),
                    format!("list or watch objects of kind {k}"), vec![("200", &list_def)]),
                "parameters": sorted_params(list_scope.clone(), None),
            }),
        );
    }
    if has("watch") {
        let list_desc = format!("watch individual changes to a list of {k}. deprecated: use the 'watch' parameter with a list operation instead.");
        let item_desc = format!("watch changes to an object of kind {k}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.");
        let mut ns_scope = list_scope.clone();
        if r.namespaced {
            ns_scope.push("namespace");
            paths.insert(
                format!("{prefix}/watch/{}", r.resource),
                json!({
                    "get": watch_op("watchlist", format!("watch{camel}{k}ListForAllNamespaces"),
                        list_desc.clone(), vec![("200", WATCH_EVENT)]),
                    "parameters": sorted_params(list_scope.clone(), None),
                }),
            );
        }
        let watch_base = if r.namespaced {
            format!("{prefix}/watch/namespaces/{{namespace}}/{}", r.resource)
        } else {
            format!("{prefix}/watch/{}", r.resource)
        };
        paths.insert(
            watch_base.clone(),
            json!({
                "get": watch_op("watchlist", format!("watch{camel}{ns}{k}List"), list_desc,
                    vec![("200", WATCH_EVENT)]),
                "parameters": sorted_params(ns_scope.clone(), None),
            }),
        );
        paths.insert(
            format!("{watch_base}/{{name}}"),
            json!({
                "get": watch_op("watch", format!("watch{camel}{ns}{k}"), item_desc,
                    vec![("200", WATCH_EVENT)]),
                "parameters": sorted_params(ns_scope, Some(k)),
            }),
        );
    }
}

/// The methods kube registers for a connect subresource: GET and POST for exec, attach and
/// portforward, every proxied method for the proxies.
const CONNECT_METHODS: &[&str] = &["get", "post"];
const PROXY_METHODS: &[&str] = &["delete", "get", "head", "options", "patch", "post", "put"];

/// The connect subresources of `r` (`x-kubernetes-action: connect`, kube's operation ids
/// `connect<Group><Version><Method><Namespaced><Kind><Sub>[WithPath]`, their option structs'
/// query parameters, any body, a string answer) and pods/log (`readCoreV1NamespacedPodLog`).
fn connect_paths(
    r: &Resource,
    base: &str,
    camel: &str,
    ns: &str,
    tag: &str,
    paths: &mut Map<String, Value>,
) {
    use crate::registry::strategy::Extra;
    let k = r.kind.as_str();
    let gvk = gvk(&r.group, &r.version, k);
    let scope: &[&str] = if r.namespaced { &["namespace"] } else { &[] };
    let string_answer = json!({
        "200": {"description": "OK", "schema": {"type": "string"}},
        "401": {"description": "Unauthorized"},
    });
    let op = |method: &str, id: String, description: String, action: &str, produces: &[&str]| {
        let o = json!({
            "consumes": ANY,
            "description": description,
            "operationId": id,
            "produces": produces,
            "responses": string_answer,
            "schemes": ["https"],
            "tags": [tag],
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        });
        (method.to_string(), o)
    };
    // Path-level parameters: the options' name, then the others by name (upstream's order).
    let with_name = |options: &str, keys: &[&str]| -> Value {
        let mut keys: Vec<&str> = keys.iter().chain(scope).copied().collect();
        keys.sort_by_key(|k| PARAMS.iter().find(|p| p.0 == *k).map(|p| p.1).unwrap_or(k));
        let mut out = Vec::new();
        let mut named = false;
        for key in keys {
            let pname = PARAMS
                .iter()
                .find(|p| p.0 == key)
                .map(|p| p.1)
                .unwrap_or(key);
            if !named && pname > "name" {
                out.push(name_param(options));
                named = true;
            }
            out.extend(param(key));
        }
        if !named {
            out.push(name_param(options));
        }
        Value::Array(out)
    };
    for e in r.strategy.extras() {
        let (sub, options, keys, methods): (&str, &str, &[&str], &[&str]) = match e {
            Extra::PodLog => {
                let keys = [
                    "logContainer",
                    "logFollow",
                    "logInsecureSkipTLSVerifyBackend",
                    "logLimitBytes",
                    "pretty",
                    "logPrevious",
                    "logSinceSeconds",
                    "logStream",
                    "logTailLines",
                    "logTimestamps",
                ];
                let mut produces = vec!["text/plain"];
                produces.extend(PRODUCES);
                let mut item = Map::new();
                let (m, o) = op(
                    "get",
                    format!("read{camel}{ns}{k}Log"),
                    format!("read log of the specified {k}"),
                    "get",
                    &produces[..],
                );
                item.insert(m, o);
                item.insert("parameters".into(), with_name(k, &keys[..]));
                paths.insert(format!("{base}/{{name}}/log"), Value::Object(item));
                continue;
            }
            Extra::PodAttach => (
                "attach",
                "PodAttachOptions",
                &[
                    "attachContainer",
                    "attachStderr",
                    "attachStdin",
                    "attachStdout",
                    "attachTty",
                ],
                CONNECT_METHODS,
            ),
            Extra::PodExec => (
                "exec",
                "PodExecOptions",
                &[
                    "execCommand",
                    "execContainer",
                    "execStderr",
                    "execStdin",
                    "execStdout",
                    "execTty",
                ],
                CONNECT_METHODS,
            ),
            Extra::PodPortForward => (
                "portforward",
                "PodPortForwardOptions",
                &["portforwardPorts"],
                CONNECT_METHODS,
            ),
            Extra::PodProxy => ("proxy", "PodProxyOptions", &["podProxyPath"], PROXY_METHODS),
            Extra::NodeProxy => (
                "proxy",
                "NodeProxyOptions",
                &["nodeProxyPath"],
                PROXY_METHODS,
            ),
            Extra::ServiceProxy => (
                "proxy",
                "ServiceProxyOptions",
                &["serviceProxyPath"],
                PROXY_METHODS,
            ),
            _ => continue,
        };
        let proxy = sub == "proxy";
        for with_path in [false, true] {
            if with_path && !proxy {
                continue;
            }
            let suffix = if with_path { "WithPath" } else { "" };
            let mut item = Map::new();
            for &m in methods {
                let (m, o) = op(
                    m,
                    format!(
                        "connect{camel}{}{ns}{k}{}{suffix}",
                        upper_first(m),
                        upper_first(sub)
                    ),
                    format!("connect {} requests to {sub} of {k}", m.to_uppercase()),
                    "connect",
                    ANY,
                );
                item.insert(m, o);
            }
            let mut keys: Vec<&str> = keys.to_vec();
            if with_path {
                keys.insert(0, "proxyPath");
            }
            item.insert("parameters".into(), with_name(options, &keys[..]));
            let path = if with_path {
                format!("{base}/{{name}}/{sub}/{{path}}")
            } else {
                format!("{base}/{{name}}/{sub}")
            };
            paths.insert(path, Value::Object(item));
        }
    }
}

/// Builders of the get/put/patch operations of an item or of its subresources.
#[derive(Clone)]
struct ItemOps<'a> {
    camel: &'a str,
    ns: &'a str,
    kind: &'a str,
    tag: &'a str,
    gvk: Value,
}

impl<'a> ItemOps<'a> {
    fn op(&self, action: &'a str, id: String, description: String) -> Op<'a> {
        Op {
            action,
            id,
            description,
            params: Vec::new(),
            consumes: ANY,
            produces: PRODUCES,
            responses: Vec::new(),
            tag: self.tag.to_string(),
            gvk: Some(self.gvk.clone()),
        }
    }

    /// The get/patch/put operations of a subresource path.
    fn subresource(&self, sub: &str, what: &str, def: &'a str) -> Map<String, Value> {
        let mut ops = Map::new();
        ops.insert("get".into(), self.read(sub, what, def));
        ops.insert("patch".into(), self.patch(sub, what, def));
        ops.insert("put".into(), self.replace(sub, what, def));
        ops
    }

    fn read(&self, sub: &str, what: &str, def: &'a str) -> Value {
        let (c, n, k) = (self.camel, self.ns, self.kind);
        let mut op = self.op(
            "get",
            format!("read{c}{n}{k}{sub}"),
            format!("read {what} {k}"),
        );
        op.responses = vec![("200", def)];
        render(op)
    }

    fn replace(&self, sub: &str, what: &str, def: &'a str) -> Value {
        let (c, n, k) = (self.camel, self.ns, self.kind);
        let mut op = self.op(
            "put",
            format!("replace{c}{n}{k}{sub}"),
            format!("replace {what} {k}"),
        );
        let mut p = vec![body(def, true)];
        p.extend(params(&["dryRun", "fieldManager", "fieldValidation"]));
        op.params = p;
        op.responses = vec![("200", def), ("201", def)];
        render(op)
    }

    fn patch(&self, sub: &str, what: &str, def: &'a str) -> Value {
        let (c, n, k) = (self.camel, self.ns, self.kind);
        let mut op = self.op(
            "patch",
            format!("patch{c}{n}{k}{sub}"),
            format!("partially update {what} {k}"),
        );
        let mut p = vec![body(PATCH, true)];
        p.extend(params(&[
            "dryRun",
            "fieldManagerApply",
            "fieldValidation",
            "force",
        ]));
        op.params = p;
        op.consumes = PATCH_TYPES;
        op.responses = vec![("200", def), ("201", def)];
        render(op)
    }
}

fn discovery_op(id: String, description: &str, def: &str, tag: String, media: &[&str]) -> Value {
    let mut op = render(Op {
        action: "",
        id,
        description: description.to_string(),
        params: Vec::new(),
        consumes: media,
        produces: media,
        responses: vec![("200", def)],
        tag,
        gvk: None,
    });
    if let Value::Object(m) = &mut op {
        m.remove("x-kubernetes-action");
    }
    json!({ "get": op })
}

/// `/api/` or `/apis/`: the list of versions or groups.
pub(crate) fn root_paths(core: bool) -> Map<String, Value> {
    let mut m = Map::new();
    if core {
        m.insert(
            "/api/".into(),
            discovery_op(
                "getCoreAPIVersions".into(),
                "get available API versions",
                "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions",
                "core".into(),
                PRODUCES_DISCOVERY,
            ),
        );
    } else {
        m.insert(
            "/apis/".into(),
            discovery_op(
                "getAPIVersions".into(),
                "get available API versions",
                "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList",
                "apis".into(),
                PRODUCES_DISCOVERY,
            ),
        );
    }
    m
}

/// `/apis/<group>/`: the group's discovery document.
pub(crate) fn group_paths(group: &str) -> Map<String, Value> {
    let camel = group_camel(group);
    let mut m = Map::new();
    m.insert(
        format!("/apis/{group}/"),
        discovery_op(
            format!("get{camel}APIGroup"),
            "get information of a group",
            "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup",
            lower_first(&camel),
            PRODUCES_DISCOVERY,
        ),
    );
    m
}

/// Every path of one group-version: its discovery path and all its resources' paths.
pub(crate) fn gv_paths(cat: &Catalog, group: &str, version: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(
        format!("{}/", gv_prefix(group, version)),
        discovery_op(
            format!(
                "get{}{}APIResources",
                group_camel(group),
                upper_first(version)
            ),
            "get available resources",
            "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
            tag(group, version),
            PRODUCES,
        ),
    );
    for r in cat.in_group_version(group, version) {
        resource_paths(r, &mut m);
    }
    m
}

/// The served (group, version) pairs, in table order, without duplicates.
pub(crate) fn group_versions(cat: &Catalog) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for r in cat.all() {
        if !out.contains(&(r.group.as_str(), r.version.as_str())) {
            out.push((&r.group, &r.version));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        // (group, version, group camel, tag)
        let cases = [
            ("", "v1", "Core", "core_v1"),
            ("apps", "v1", "Apps", "apps_v1"),
            (
                "rbac.authorization.k8s.io",
                "v1",
                "RbacAuthorization",
                "rbacAuthorization_v1",
            ),
            (
                "flowcontrol.apiserver.k8s.io",
                "v1",
                "FlowcontrolApiserver",
                "flowcontrolApiserver_v1",
            ),
            ("autoscaling", "v2", "Autoscaling", "autoscaling_v2"),
        ];
        for (g, v, camel, t) in cases {
            assert_eq!(group_camel(g), camel);
            assert_eq!(tag(g, v), t);
        }
        // (kind, article)
        for (k, a) in [
            ("Endpoints", " "),
            ("Event", " an "),
            ("StorageClass", " a "),
            ("Ingress", " an "),
            ("Pod", " a "),
        ] {
            assert_eq!(article(k), a, "{k}");
        }
    }

    #[test]
    fn deployment_paths() {
        let m = gv_paths(
            &crate::registry::builtin::registry().snapshot(),
            "apps",
            "v1",
        );
        // (path, method, operationId, action)
        let cases = [
            (
                "/apis/apps/v1/namespaces/{namespace}/deployments",
                "get",
                "listAppsV1NamespacedDeployment",
                "list",
            ),
            (
                "/apis/apps/v1/namespaces/{namespace}/deployments",
                "post",
                "createAppsV1NamespacedDeployment",
                "post",
            ),
            (
                "/apis/apps/v1/namespaces/{namespace}/deployments",
                "delete",
                "deleteAppsV1CollectionNamespacedDeployment",
                "deletecollection",
            ),
            (
                "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
                "patch",
                "patchAppsV1NamespacedDeployment",
                "patch",
            ),
            (
                "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
                "put",
                "replaceAppsV1NamespacedDeploymentScale",
                "put",
            ),
            (
                "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status",
                "get",
                "readAppsV1NamespacedDeploymentStatus",
                "get",
            ),
            (
                "/apis/apps/v1/deployments",
                "get",
                "listAppsV1DeploymentForAllNamespaces",
                "list",
            ),
            (
                "/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}",
                "get",
                "watchAppsV1NamespacedDeployment",
                "watch",
            ),
        ];
        for (p, method, id, action) in cases {
            let op = &m[p][method];
            assert_eq!(op["operationId"], id, "{p} {method}");
            assert_eq!(op["x-kubernetes-action"], action, "{p} {method}");
        }
        let patch = &m["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        let names: Vec<&str> = patch["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert_eq!(
            names,
            ["body", "dryRun", "fieldManager", "fieldValidation", "force"]
        );
        let watch =
            &m["/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}"]["parameters"];
        let names: Vec<&str> = watch
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "allowWatchBookmarks",
                "continue",
                "fieldSelector",
                "labelSelector",
                "limit",
                "name",
                "namespace",
                "pretty",
                "resourceVersion",
                "resourceVersionMatch",
                "sendInitialEvents",
                "timeoutSeconds",
                "watch"
            ]
        );
    }
}
