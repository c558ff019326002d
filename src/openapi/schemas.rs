//! The OpenAPI v2 definitions of every built-in type, built once in memory.
//!
//! Owns: turning k8s-openapi's `schemars` schemas into upstream-shaped v2 definitions
//! (`#/definitions/<io.k8s...>` references, upstream shapes for the string-encoded and opaque
//! types), adding the `x-kubernetes-*` extensions recorded in [`super::facts`], and synthesising
//! the definitions k8s-openapi has no type for (`...List` kinds and `WatchEvent`).
//!
//! Does not know: which resources are served, paths, OpenAPI v3 (see `v3.rs`), HTTP. It reads
//! no file: everything comes from compiled-in data.

use std::sync::OnceLock;

use k8s_openapi::schemars::{generate::SchemaSettings, SchemaGenerator};
use serde_json::{json, Map, Value};

use super::facts;

/// Prefix of every v2 schema reference.
pub(crate) const V2_REF: &str = "#/definitions/";

const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";

/// Definitions upstream describes only by their description (their Go type has a custom
/// unmarshaller accepting several JSON shapes).
const DESCRIPTION_ONLY: &[&str] = &[
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
];

/// Top-level kinds whose `metadata` upstream does mark as required (k8s-openapi marks it
/// required on every kind).
const METADATA_REQUIRED: &[&str] = &["io.k8s.api.core.v1.Event"];

/// Required properties k8s-openapi 0.29 does not mark as required but upstream v1.33 does.
const EXTRA_REQUIRED: &[(&str, &str)] = &[
    ("io.k8s.api.events.v1.Event", "eventTime"),
    ("io.k8s.api.networking.v1.NetworkPolicySpec", "podSelector"),
];

/// Properties k8s-openapi 0.29 marks as required but upstream v1.33 does not (`name` of the
/// local object references is optional upstream).
const NOT_REQUIRED: &[(&str, &str)] = &[
    ("io.k8s.api.core.v1.ConfigMapEnvSource", "name"),
    ("io.k8s.api.core.v1.ConfigMapKeySelector", "name"),
    ("io.k8s.api.core.v1.ConfigMapProjection", "name"),
    ("io.k8s.api.core.v1.ConfigMapVolumeSource", "name"),
    ("io.k8s.api.core.v1.LocalObjectReference", "name"),
    ("io.k8s.api.core.v1.SecretEnvSource", "name"),
    ("io.k8s.api.core.v1.SecretKeySelector", "name"),
    ("io.k8s.api.core.v1.SecretProjection", "name"),
];

/// One `x-kubernetes-unions` entry: (definition, discriminator, [(field, discriminator value)]).
type Union = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// Upstream's `x-kubernetes-unions`.
const UNIONS: &[Union] = &[
    (
        "io.k8s.api.core.v1.AppArmorProfile",
        "type",
        &[("localhostProfile", "LocalhostProfile")],
    ),
    (
        "io.k8s.api.core.v1.SeccompProfile",
        "type",
        &[("localhostProfile", "LocalhostProfile")],
    ),
    (
        "io.k8s.api.flowcontrol.v1.LimitResponse",
        "type",
        &[("queuing", "Queuing")],
    ),
    (
        "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec",
        "type",
        &[("exempt", "Exempt"), ("limited", "Limited")],
    ),
    (
        "io.k8s.api.flowcontrol.v1.Subject",
        "kind",
        &[
            ("group", "Group"),
            ("serviceAccount", "ServiceAccount"),
            ("user", "User"),
        ],
    ),
];

const API_VERSION_DESC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// Every built-in definition in v2 form, keys sorted, keyed by its `io.k8s...` name.
pub(crate) fn all() -> &'static Map<String, Value> {
    static ALL: OnceLock<Map<String, Value>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut defs = build();
        apply_descriptions(&mut defs);
        defs
    })
}

/// Upstream's descriptions where k8s-openapi's differ (the generated table).
fn apply_descriptions(defs: &mut Map<String, Value>) {
    for (def, prop, text) in crate::generated::openapi_descriptions::DESCRIPTIONS {
        let Some(Value::Object(d)) = defs.get_mut(*def) else {
            continue;
        };
        let target = if prop.is_empty() {
            Some(d)
        } else {
            d.get_mut("properties")
                .and_then(|p| p.get_mut(*prop))
                .and_then(Value::as_object_mut)
        };
        if let Some(t) = target {
            match text {
                Some(text) => t.insert("description".into(), Value::from(*text)),
                None => t.remove("description"),
            };
        }
    }
}

/// The generator's input: for every definition and top-level property both serve, upstream's
/// description where k8s-openapi's (before the generated table) differs, as
/// (definition, property or "", upstream text or `None` when upstream has none), sorted.
/// Regenerate the table with `RAFTER_REGENERATE=1 cargo test --test generated`.
pub fn description_overrides(upstream: &Value) -> Vec<(String, String, Option<String>)> {
    let ours = build();
    let mut out = Vec::new();
    let Some(up) = upstream.get("definitions").and_then(Value::as_object) else {
        return out;
    };
    for (name, d) in &ours {
        let Some(u) = up.get(name) else { continue };
        let desc = |v: &Value| {
            v.get("description")
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        if desc(u) != desc(d) {
            out.push((name.clone(), String::new(), desc(u)));
        }
        let (Some(dp), Some(upp)) = (
            d.get("properties").and_then(Value::as_object),
            u.get("properties").and_then(Value::as_object),
        ) else {
            continue;
        };
        for (p, pd) in dp {
            let Some(upd) = upp.get(p) else {
                continue;
            };
            if desc(upd) != desc(pd) {
                out.push((name.clone(), p.clone(), desc(upd)));
            }
        }
    }
    out.sort();
    out
}

/// Looks up one definition (v2 form).
pub(crate) fn get(name: &str) -> Option<&'static Value> {
    all().get(name)
}

/// The definition name a `$ref` string points at (v2 or v3 prefix), if any.
pub(crate) fn ref_target(r: &str) -> Option<&str> {
    r.strip_prefix(V2_REF)
        .or_else(|| r.strip_prefix("#/components/schemas/"))
}

fn build() -> Map<String, Value> {
    let mut settings = SchemaSettings::draft07();
    settings.transforms.clear();
    settings.meta_schema = None;
    let mut generator = SchemaGenerator::new(settings);
    super::types::register_all(&mut generator);
    let mut defs = generator.take_definitions(false);

    fix_upstream_shapes(&mut defs);
    for d in facts::definitions() {
        if !defs.contains_key(d.name) {
            if let Some(synth) = synthesize(d) {
                defs.insert(d.name.to_string(), synth);
            }
        }
        if let Some(Value::Object(schema)) = defs.get_mut(d.name) {
            apply_facts(schema, d);
        }
    }
    for (name, discriminator, fields) in UNIONS {
        if let Some(Value::Object(schema)) = defs.get_mut(*name) {
            let by: Map<String, Value> = fields
                .iter()
                .map(|(f, v)| (f.to_string(), Value::from(*v)))
                .collect();
            schema.insert(
                "x-kubernetes-unions".into(),
                json!([{"discriminator": discriminator, "fields-to-discriminateBy": by}]),
            );
        }
    }
    let mut out = Value::Object(defs);
    sort_keys(&mut out);
    match out {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Replaces k8s-openapi's shapes with upstream's where they differ.
fn fix_upstream_shapes(defs: &mut Map<String, Value>) {
    if let Some(Value::Object(s)) = defs.get_mut(INT_OR_STRING) {
        s.remove("x-kubernetes-int-or-string");
        s.insert("type".into(), "string".into());
        s.insert("format".into(), "int-or-string".into());
    }
    if let Some(Value::Object(s)) = defs.get_mut(QUANTITY) {
        s.remove("x-kubernetes-int-or-string");
        s.insert("type".into(), "string".into());
    }
    for name in DESCRIPTION_ONLY {
        if let Some(Value::Object(s)) = defs.get_mut(*name) {
            s.retain(|k, _| k == "description");
        }
    }
    for (name, schema) in defs.iter_mut() {
        let Value::Object(s) = schema else { continue };
        let is_kind = s
            .get("properties")
            .and_then(|p| p.get("apiVersion"))
            .is_some();
        if is_kind && !METADATA_REQUIRED.contains(&name.as_str()) {
            if let Some(Value::Array(req)) = s.get_mut("required") {
                req.retain(|r| r != "metadata");
                if req.is_empty() {
                    s.remove("required");
                }
            }
        }
    }
    for (name, field) in NOT_REQUIRED {
        if let Some(Value::Object(s)) = defs.get_mut(*name) {
            if let Some(Value::Array(req)) = s.get_mut("required") {
                req.retain(|r| r != field);
                if req.is_empty() {
                    s.remove("required");
                }
            }
        }
    }
    for (name, field) in EXTRA_REQUIRED {
        if let Some(Value::Object(s)) = defs.get_mut(*name) {
            let req = s
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(req) = req {
                if !req.iter().any(|r| r == field) {
                    req.push(Value::from(*field));
                }
            }
        }
    }
}

/// Adds the definition-level and per-property `x-kubernetes-*` extensions.
fn apply_facts(schema: &mut Map<String, Value>, d: &facts::Definition) {
    if !d.gvk.is_empty() {
        let gvks: Vec<Value> = d
            .gvk
            .iter()
            .map(|(g, v, k)| json!({"group": g, "kind": k, "version": v}))
            .collect();
        schema.insert("x-kubernetes-group-version-kind".into(), Value::Array(gvks));
    }
    if !d.map_type.is_empty() {
        schema.insert("x-kubernetes-map-type".into(), d.map_type.into());
    }
    let Some(Value::Object(props)) = schema.get_mut("properties") else {
        return;
    };
    for f in d.fields {
        let Some(Value::Object(p)) = props.get_mut(f.name) else {
            continue;
        };
        if !f.list_map_keys.is_empty() {
            p.insert("x-kubernetes-list-map-keys".into(), json!(f.list_map_keys));
        }
        if !f.list_type.is_empty() {
            p.insert("x-kubernetes-list-type".into(), f.list_type.into());
        }
        if !f.map_type.is_empty() {
            p.insert("x-kubernetes-map-type".into(), f.map_type.into());
        }
        if !f.patch_merge_key.is_empty() {
            p.insert(
                "x-kubernetes-patch-merge-key".into(),
                f.patch_merge_key.into(),
            );
        }
        if !f.patch_strategy.is_empty() {
            p.insert(
                "x-kubernetes-patch-strategy".into(),
                f.patch_strategy.into(),
            );
        }
    }
}

/// Builds the definitions k8s-openapi has no type for: `XList` kinds and `WatchEvent`.
fn synthesize(d: &facts::Definition) -> Option<Value> {
    if d.name == WATCH_EVENT {
        return Some(json!({
            "description": "Event represents a single event to a watched resource.",
            "properties": {
                "object": {
                    "$ref": format!("{V2_REF}{RAW_EXTENSION}"),
                    "description": "Object is:\n * If Type is Added or Modified: the new state of the object.\n * If Type is Deleted: the state of the object immediately before deletion.\n * If Type is Error: *Status is recommended; other types may make sense\n   depending on context."
                },
                "type": {"type": "string"}
            },
            "required": ["type", "object"],
            "type": "object"
        }));
    }
    let items = facts::field(d, "items")?;
    let facts::Ty::ArrayOfRef(item) = items.ty else {
        return None;
    };
    let list_kind = d.name.rsplit('.').next()?;
    let kind = item.rsplit('.').next()?;
    Some(json!({
        "description": format!("{list_kind} is a list of {kind} objects."),
        "properties": {
            "apiVersion": {"description": API_VERSION_DESC, "type": "string"},
            "items": {
                "description": format!("List of {kind} objects."),
                "items": {"$ref": format!("{V2_REF}{item}")},
                "type": "array"
            },
            "kind": {"description": KIND_DESC, "type": "string"},
            "metadata": {
                "$ref": format!("{V2_REF}{LIST_META}"),
                "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
            }
        },
        "required": ["items"],
        "type": "object"
    }))
}

/// Sorts every object's keys, recursively (upstream serves its documents key-sorted).
pub(crate) fn sort_keys(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.sort_keys();
            for (_, x) in m.iter_mut() {
                sort_keys(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

/// Collects `name` and every definition reachable from it through `$ref`s into `out`.
pub(crate) fn closure(name: &str, out: &mut std::collections::BTreeSet<String>) {
    let mut stack = vec![name.to_string()];
    while let Some(n) = stack.pop() {
        if out.contains(&n) {
            continue;
        }
        let Some(schema) = get(&n) else { continue };
        out.insert(n);
        collect_refs(schema, &mut stack);
    }
}

/// Pushes every definition name referenced anywhere inside `v`.
pub(crate) fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref" {
                    if let Some(t) = x.as_str().and_then(ref_target) {
                        out.push(t.to_string());
                    }
                } else {
                    collect_refs(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_shapes_match_upstream() {
        // (definition, JSON pointer, expected)
        let cases: &[(&str, &str, Value)] = &[
            (INT_OR_STRING, "/type", json!("string")),
            (INT_OR_STRING, "/format", json!("int-or-string")),
            (QUANTITY, "/type", json!("string")),
            (
                "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
                "/format",
                json!("date-time"),
            ),
            (RAW_EXTENSION, "/type", json!("object")),
            (
                "io.k8s.api.apps.v1.Deployment",
                "/x-kubernetes-group-version-kind/0/kind",
                json!("Deployment"),
            ),
            (
                "io.k8s.api.apps.v1.DeploymentList",
                "/x-kubernetes-group-version-kind/0/kind",
                json!("DeploymentList"),
            ),
            (
                "io.k8s.api.apps.v1.DeploymentList",
                "/properties/items/items/$ref",
                json!("#/definitions/io.k8s.api.apps.v1.Deployment"),
            ),
            (
                "io.k8s.api.core.v1.PodSpec",
                "/properties/containers/x-kubernetes-patch-merge-key",
                json!("name"),
            ),
            (
                "io.k8s.api.core.v1.PodSpec",
                "/properties/containers/x-kubernetes-patch-strategy",
                json!("merge"),
            ),
            (
                "io.k8s.api.core.v1.PodSpec",
                "/properties/containers/x-kubernetes-list-type",
                json!("map"),
            ),
            (
                "io.k8s.api.core.v1.Container",
                "/properties/ports/x-kubernetes-list-map-keys",
                json!(["containerPort", "protocol"]),
            ),
            (
                "io.k8s.api.core.v1.Event",
                "/required",
                json!(["involvedObject", "metadata"]),
            ),
            (WATCH_EVENT, "/required", json!(["type", "object"])),
            (
                "io.k8s.api.core.v1.SeccompProfile",
                "/x-kubernetes-unions/0/discriminator",
                json!("type"),
            ),
        ];
        for (name, ptr, want) in cases {
            let got = get(name).and_then(|d| d.pointer(ptr));
            assert_eq!(got, Some(want), "{name}{ptr}");
        }
        // k8s-openapi's "metadata is required" is removed from ordinary kinds.
        assert!(get("io.k8s.api.apps.v1.Deployment")
            .and_then(|d| d.get("required"))
            .is_none());
        assert!(get("io.k8s.api.core.v1.LocalObjectReference")
            .and_then(|d| d.get("required"))
            .is_none());
        assert!(get(INT_OR_STRING)
            .and_then(|d| d.get("x-kubernetes-int-or-string"))
            .is_none());
    }

    #[test]
    fn every_fact_definition_exists() {
        for d in facts::definitions() {
            assert!(get(d.name).is_some(), "{} missing", d.name);
        }
    }
}
