//! Rafter's OpenAPI documents (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/<group-version>`)
//! and unknown-field detection for `fieldValidation`.
//!
//! Owns: building kube-apiserver-shaped documents for the resources of a registry snapshot
//! ([`Catalog`]), lazily and once per registry generation ([`Documents`]): schemas from
//! k8s-openapi's `schemars` support plus the `x-kubernetes-*` extensions of [`facts`], paths
//! with kube's operation ids and parameters (kubectl looks for `fieldValidation` among the
//! PATCH parameters to decide on server-side validation, and `kubectl explain` reads the v3
//! schemas). Each document is serialized once per generation (v2 also as gnostic protobuf)
//! and carries its content hash (the ETag).
//!
//! Does not know: HTTP (content negotiation, ETag / cache headers are the handlers' job),
//! custom resources' schemas (not merged in yet). It does
//! no file I/O and never reads upstream's swagger file.

pub mod facts;
pub use schemas::description_overrides;
mod paths;
mod proto;
mod schemas;
mod typecheck;
mod types;
mod unknown;
mod v3;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::{json, Map, Value};

use crate::registry::Catalog;

/// `/openapi/v2` of one registry generation, serialized once.
pub struct V2 {
    /// The JSON document.
    pub json: Bytes,
    /// The entity tag of the JSON document (quoted), as kube-openapi sends it.
    pub etag: String,
    /// The protobuf form and its entity tag, made from the JSON on the first request that
    /// asks for it (most clients never do: it would be megabytes held for nothing).
    protobuf: std::sync::OnceLock<(Bytes, String)>,
}

/// One served v3 document.
struct V3Doc {
    /// `api/v1`, `apis/apps/v1`, `apis/apps`, `api`, `apis`.
    path: String,
    bytes: Bytes,
    hash: String,
}

/// `/openapi/v3` and its documents of one registry generation.
pub struct V3 {
    index: Bytes,
    index_hash: String,
    docs: Vec<V3Doc>,
}

impl V3 {
    /// GET /openapi/v3 (JSON).
    pub fn index(&self) -> Bytes {
        self.index.clone()
    }

    /// The content hash of the index.
    pub fn index_hash(&self) -> &str {
        &self.index_hash
    }

    /// GET /openapi/v3/<path> where path is "api/v1" or "apis/<group>/<version>" (also
    /// "api", "apis" and "apis/<group>"): the document and its hash (the `hash` query value in
    /// the index, and the ETag); `None` if unknown. Leading and trailing `/` are tolerated.
    pub fn document(&self, path: &str) -> Option<(Bytes, &str)> {
        let path = path.trim_start_matches('/').trim_end_matches('/');
        self.docs
            .iter()
            .find(|d| d.path == path)
            .map(|d| (d.bytes.clone(), d.hash.as_str()))
    }
}

/// The OpenAPI documents of the current registry: built lazily, once per registry
/// generation, and rebuilt on the first request after the registry changed.
#[derive(Default)]
pub struct Documents {
    v2: Mutex<Option<(u64, Arc<V2>)>>,
    v3: Mutex<Option<(u64, Arc<V3>)>>,
}

impl Documents {
    /// `/openapi/v2` for `cat`.
    pub fn v2(&self, cat: &Catalog) -> Arc<V2> {
        let mut slot = self.v2.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((g, d)) = slot.as_ref() {
            if *g == cat.generation {
                return d.clone();
            }
        }
        let built = Arc::new(V2::from_document(&build_v2(cat)));
        *slot = Some((cat.generation, built.clone()));
        built
    }

    /// `/openapi/v3` for `cat`.
    pub fn v3(&self, cat: &Catalog) -> Arc<V3> {
        let mut slot = self.v3.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((g, d)) = slot.as_ref() {
            if *g == cat.generation {
                return d.clone();
            }
        }
        let built = Arc::new(build_v3(cat));
        *slot = Some((cat.generation, built.clone()));
        built
    }
}

impl V2 {
    /// The served forms of a whole `/openapi/v2` document (the aggregator's merged one).
    pub fn from_document(doc: &Value) -> V2 {
        let json = serialize(doc);
        V2 {
            etag: format!("\"{}\"", hash_hex(&json)),
            json: Bytes::from(json),
            protobuf: std::sync::OnceLock::new(),
        }
    }

    /// The gnostic `openapi.v2.Document` protobuf and its entity tag (quoted), served when
    /// the request accepts `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (or
    /// the `...spec.v2.v1.0+protobuf` spelling): client-go's `OpenAPISchema()` only accepts
    /// this. Encoded once, from the JSON document.
    pub fn protobuf(&self) -> (Bytes, &str) {
        let (bytes, etag) = self.protobuf.get_or_init(|| {
            let doc: Value = serde_json::from_slice(&self.json).unwrap_or_else(|_| json!({}));
            let protobuf = proto::document(&doc);
            let etag = format!("\"{}\"", hash_hex(&protobuf));
            (Bytes::from(protobuf), etag)
        });
        (bytes.clone(), etag.as_str())
    }
}

/// kube-openapi's content hash of a served document (the v3 `?hash=` and ETag value).
pub fn content_hash(bytes: &[u8]) -> String {
    hash_hex(bytes)
}

/// Unknown-field detection for fieldValidation=Strict/Warn: returns one message per field of
/// `value` not in the schema of `definition` (an `io.k8s...` name), formatted like kube's
/// strict decoding errors, e.g. `unknown field "spec.foo"`, in document order. Empty when the
/// definition is not a built-in one.
pub fn unknown_fields(definition: &str, value: &Value) -> Vec<String> {
    unknown::unknown_fields(definition, value)
}

/// The strict decoding errors of a body read with its duplicate keys kept, against the
/// built-in definition `definition`: `duplicate field "..."` and `unknown field "..."`
/// interleaved in document order, as sigs.k8s.io/json reports them decoding into the Go type.
pub fn strict_errors(definition: &str, node: &crate::meta::strict::Node) -> Vec<String> {
    unknown::strict_errors(definition, node)
}

/// Drops every field of `value` that the schema of `definition` does not declare (what
/// decoding into the Go type does); nothing for unknown definitions.
pub fn prune_unknown(definition: &str, value: &mut Value) {
    unknown::prune_unknown(definition, value)
}

/// The first JSON type error of `value` against `definition`, worded like Go's encoding/json
/// (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type
/// int32`); `None` when the value decodes or the definition is not a built-in one.
pub fn type_error(definition: &str, value: &Value) -> Option<String> {
    typecheck::first_type_error(definition, value)
}

/// The definitions of custom kinds (and their lists) from their schemas, as kube's CRD
/// OpenAPI builder shapes them, with what they reference (ObjectMeta, ListMeta).
fn custom_definitions(cat: &Catalog, definitions: &mut Map<String, Value>) {
    const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
    const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
    let mut any = false;
    for r in cat.all() {
        let Some(schema) = &r.schema else { continue };
        any = true;
        let gvk = |kind: &str| json!([{"group": r.group, "kind": kind, "version": r.version}]);
        let mut d = (**schema).clone();
        if !d.is_object() {
            d = json!({});
        }
        d["type"] = json!("object");
        let props = d
            .as_object_mut()
            .expect("object")
            .entry("properties")
            .or_insert_with(|| json!({}));
        if let Some(p) = props.as_object_mut() {
            p.insert("apiVersion".into(), json!({"description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources", "type": "string"}));
            p.insert("kind".into(), json!({"description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", "type": "string"}));
            p.insert("metadata".into(), json!({"$ref": format!("#/definitions/{OBJECT_META}"), "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}));
        }
        d["x-kubernetes-group-version-kind"] = gvk(&r.kind);
        definitions.insert(r.definition.clone(), d);
        definitions.insert(
            format!("{}List", r.definition),
            json!({
                "description": format!("{} is a list of {}", r.list_kind, r.kind),
                "type": "object",
                "required": ["items"],
                "properties": {
                    "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources", "type": "string"},
                    "items": {"description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", r.resource), "type": "array", "items": {"$ref": format!("#/definitions/{}", r.definition)}},
                    "kind": {"description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", "type": "string"},
                    "metadata": {"$ref": format!("#/definitions/{LIST_META}"), "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"},
                },
                "x-kubernetes-group-version-kind": gvk(&r.list_kind),
            }),
        );
    }
    if any {
        let mut names = BTreeSet::new();
        schemas::closure(OBJECT_META, &mut names);
        schemas::closure(LIST_META, &mut names);
        for n in names {
            if let Some(d) = schemas::get(&n) {
                definitions.entry(n).or_insert_with(|| d.clone());
            }
        }
    }
}

/// Every definition referenced from `paths`, with everything they reference.
fn referenced_definitions(paths: &Map<String, Value>) -> BTreeSet<String> {
    let mut roots = Vec::new();
    for item in paths.values() {
        schemas::collect_refs(item, &mut roots);
    }
    let mut out = BTreeSet::new();
    for r in roots {
        schemas::closure(&r, &mut out);
    }
    out
}

fn security_v2() -> (Value, Value) {
    (
        json!([{"BearerToken": []}]),
        json!({"BearerToken": {"description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey"}}),
    )
}

fn info() -> Value {
    json!({"title": "Kubernetes", "version": "unversioned"})
}

fn serialize(v: &Value) -> Vec<u8> {
    // Serializing a `Value` cannot fail (all keys are strings).
    serde_json::to_vec(v).unwrap_or_default()
}

fn build_v2(cat: &Catalog) -> Value {
    let mut paths = paths::root_paths(true);
    paths.extend(paths::root_paths(false));
    let gvs = paths::group_versions(cat);
    let mut groups: Vec<&str> = Vec::new();
    for (g, v) in &gvs {
        if !g.is_empty() && !groups.contains(g) {
            groups.push(g);
            paths.extend(paths::group_paths(g));
        }
        paths.extend(paths::gv_paths(cat, g, v));
    }
    let mut definitions = Map::new();
    for name in referenced_definitions(&paths) {
        if let Some(d) = schemas::get(&name) {
            definitions.insert(name, d.clone());
        }
    }
    custom_definitions(cat, &mut definitions);
    let (security, security_definitions) = security_v2();
    let mut doc = json!({
        "definitions": definitions,
        "info": info(),
        "paths": paths,
        "security": security,
        "securityDefinitions": security_definitions,
        "swagger": "2.0",
    });
    schemas::sort_keys(&mut doc);
    doc
}

/// One v3 document: `paths` and every definition they reach, built-in ones from the schema
/// table and custom kinds' from `custom` (made once per build).
fn v3_doc(custom: &Map<String, Value>, paths: Map<String, Value>) -> Value {
    let mut components = Map::new();
    let mut stack = Vec::new();
    for item in paths.values() {
        schemas::collect_refs(item, &mut stack);
    }
    while let Some(n) = stack.pop() {
        if components.contains_key(&n) {
            continue;
        }
        if let Some(d) = schemas::get(&n).or_else(|| custom.get(&n)) {
            schemas::collect_refs(d, &mut stack);
            components.insert(n.clone(), v3::definition(&n, d));
        }
    }
    let paths: Map<String, Value> = paths
        .iter()
        .map(|(p, item)| (p.clone(), v3::path_item(item)))
        .collect();
    let mut doc = json!({
        "components": {
            "schemas": components,
            "securitySchemes": {"BearerToken": {"description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey"}},
        },
        "info": info(),
        "openapi": "3.0.0",
        "paths": paths,
        "security": [{"BearerToken": []}],
    });
    schemas::sort_keys(&mut doc);
    doc
}

fn build_v3(cat: &Catalog) -> V3 {
    let mut custom = Map::new();
    custom_definitions(cat, &mut custom);
    let mut sources: Vec<(String, Map<String, Value>)> = vec![
        ("api".into(), paths::root_paths(true)),
        ("apis".into(), paths::root_paths(false)),
    ];
    let mut groups: Vec<&str> = Vec::new();
    for (g, v) in paths::group_versions(cat) {
        if g.is_empty() {
            sources.push((format!("api/{v}"), paths::gv_paths(cat, g, v)));
            continue;
        }
        if !groups.contains(&g) {
            groups.push(g);
            sources.push((format!("apis/{g}"), paths::group_paths(g)));
        }
        sources.push((format!("apis/{g}/{v}"), paths::gv_paths(cat, g, v)));
    }
    let mut docs = Vec::new();
    let mut index = Map::new();
    for (path, p) in sources {
        let bytes = serialize(&v3_doc(&custom, p));
        let hash = hash_hex(&bytes);
        index.insert(
            path.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}),
        );
        docs.push(V3Doc {
            path,
            bytes: Bytes::from(bytes),
            hash,
        });
    }
    let mut index = json!({ "paths": index });
    schemas::sort_keys(&mut index);
    let index = serialize(&index);
    V3 {
        index_hash: hash_hex(&index),
        index: Bytes::from(index),
        docs,
    }
}

/// kube-openapi's content hash: SHA-512, upper-case hex.
fn hash_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let d = ring::digest::digest(&ring::digest::SHA512, bytes);
    d.as_ref().iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02X}");
        s
    })
}

/// The schema of built-in `group/version/kind` with every `$ref` inlined, for typing CEL
/// expressions over it (kube's schema resolver for policy type checking): IntOrString as
/// `x-kubernetes-int-or-string`, untyped values (RawExtension, JSON) as dynamic; `None` for
/// kinds that are not built-in definitions.
pub fn resolved_schema(group: &str, version: &str, kind: &str) -> Option<Value> {
    let def = facts::definition_for_gvk(group, version, kind)?;
    let mut stack = Vec::new();
    Some(inline(schemas::get(def.name)?, &mut stack))
}

fn inline(schema: &Value, stack: &mut Vec<String>) -> Value {
    let dynamic = || json!({"x-kubernetes-int-or-string": true});
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(schemas::ref_target)
    {
        // A recursive type (JSONSchemaProps) is dynamic below its first occurrence.
        if stack.iter().any(|s| s == target) || stack.len() > 40 {
            return dynamic();
        }
        let Some(t) = schemas::get(target) else {
            return dynamic();
        };
        stack.push(target.to_string());
        let out = inline(t, stack);
        stack.pop();
        return out;
    }
    // `allOf: [{$ref}]` (a v3 reference with a description or default)
    if let Some([one]) = schema
        .get("allOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        return inline(one, stack);
    }
    let Some(m) = schema.as_object() else {
        return dynamic();
    };
    if m.get("format").and_then(Value::as_str) == Some("int-or-string") {
        return dynamic();
    }
    if m.get("type").and_then(Value::as_str).is_none() && !m.contains_key("properties") {
        return dynamic();
    }
    let mut out = m.clone();
    if !out.contains_key("type") {
        out.insert("type".into(), json!("object"));
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        let props: Map<String, Value> = props
            .iter()
            .map(|(k, v)| (k.clone(), inline(v, stack)))
            .collect();
        out.insert("properties".into(), Value::Object(props));
    }
    for k in ["items", "additionalProperties"] {
        if let Some(v) = m.get(k).filter(|v| v.is_object()) {
            out.insert(k.into(), inline(v, stack));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs() -> &'static (Documents, Arc<Catalog>) {
        static D: std::sync::OnceLock<(Documents, Arc<Catalog>)> = std::sync::OnceLock::new();
        D.get_or_init(|| {
            (
                Documents::default(),
                crate::registry::builtin::registry().snapshot(),
            )
        })
    }

    fn v2() -> Bytes {
        let (d, c) = docs();
        d.v2(c).json.clone()
    }

    fn v2_protobuf() -> Bytes {
        let (d, c) = docs();
        d.v2(c).protobuf().0
    }

    fn v3_index() -> Bytes {
        let (d, c) = docs();
        d.v3(c).index()
    }

    fn v3_document(path: &str) -> Option<Bytes> {
        let (d, c) = docs();
        d.v3(c).document(path).map(|(b, _)| b)
    }

    fn v3_hash(path: &str) -> Option<String> {
        let (d, c) = docs();
        d.v3(c).document(path).map(|(_, h)| h.to_string())
    }

    fn parse(b: &[u8]) -> Value {
        serde_json::from_slice(b).expect("valid JSON")
    }

    #[test]
    fn v2_shape() {
        let doc = parse(&v2());
        assert_eq!(doc["swagger"], "2.0");
        let defs = doc["definitions"].as_object().expect("definitions");
        for name in [
            "io.k8s.api.apps.v1.Deployment",
            "io.k8s.api.apps.v1.DeploymentList",
            "io.k8s.api.core.v1.Pod",
            "io.k8s.api.autoscaling.v1.Scale",
            "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        ] {
            assert!(defs.contains_key(name), "{name}");
        }
        // Every reference resolves.
        let mut refs = Vec::new();
        schemas::collect_refs(&doc, &mut refs);
        for r in refs {
            assert!(defs.contains_key(&r), "dangling {r}");
        }
    }

    #[test]
    fn v3_index_and_documents() {
        let index = parse(&v3_index());
        let paths = index["paths"].as_object().expect("paths");
        for gv in [
            "api/v1",
            "apis/apps/v1",
            "apis/batch/v1",
            "apis/apps",
            "api",
            "apis",
        ] {
            let url = paths[gv]["serverRelativeURL"].as_str().expect("url");
            let hash = v3_hash(gv).expect("hash");
            assert_eq!(url, format!("/openapi/v3/{gv}?hash={hash}"));
            assert!(v3_document(gv).is_some());
        }
        assert!(v3_document("apis/nope/v1").is_none());
        assert_eq!(v3_document("/api/v1"), v3_document("api/v1"));

        let doc = parse(&v3_document("apis/apps/v1").expect("apps/v1"));
        assert_eq!(doc["openapi"], "3.0.0");
        assert!(!v3::has_v2_ref(&doc));
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        let dep = &schemas["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            dep["x-kubernetes-group-version-kind"][0]["kind"],
            "Deployment"
        );
        assert_eq!(
            dep["properties"]["spec"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"
        );
        assert_eq!(
            schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]["type"],
            "integer"
        );
        assert!(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["oneOf"].is_array());
        // Every reference resolves inside the document.
        let mut refs = Vec::new();
        schemas::collect_refs(&doc, &mut refs);
        for r in refs {
            assert!(schemas.contains_key(&r), "dangling {r}");
        }
    }

    /// What kubectl's QueryParamVerifierV3 does: the first PATCH operation carrying the GVK
    /// must list a `fieldValidation` parameter.
    #[test]
    fn kubectl_finds_field_validation_for_every_kind() {
        for r in crate::registry::resources::RESOURCES {
            if !r.verbs.contains(&"patch") {
                continue;
            }
            let gv = if r.group.is_empty() {
                format!("api/{}", r.version)
            } else {
                format!("apis/{}/{}", r.group, r.version)
            };
            let doc = parse(&v3_document(&gv).expect("doc"));
            let want = json!({"group": r.group, "kind": r.kind, "version": r.version});
            let mut found = None;
            for item in doc["paths"].as_object().expect("paths").values() {
                let Some(op) = item.get("patch") else {
                    continue;
                };
                if op["x-kubernetes-group-version-kind"] != want {
                    continue;
                }
                let params = op["parameters"].as_array().cloned().unwrap_or_default();
                found = Some(params.iter().any(|p| p["name"] == "fieldValidation"));
                break;
            }
            assert_eq!(found, Some(true), "{gv} {}", r.kind);
        }
    }

    #[test]
    fn v2_protobuf_starts_with_swagger_version() {
        let pb = v2_protobuf();
        assert_eq!(&pb[..5], &[0x0a, 3, b'2', b'.', b'0']);
        assert!(pb.len() > 1_000_000);
    }

    #[test]
    fn hashes_differ() {
        assert_ne!(hash_hex(b"a"), hash_hex(b"b"));
        assert_eq!(hash_hex(b"abc").len(), 128);
    }
}
