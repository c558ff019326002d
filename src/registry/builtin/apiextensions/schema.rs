//! A CustomResourceDefinition's OpenAPI v3 schema checked as apiextensions-apiserver v0.33
//! checks it: the root rules of `validateCustomResourceDefinitionValidation`, the structural
//! schema invariants and completeness of `schema.ValidateStructural` (sorted by message, as
//! upstream sorts them), then `ValidateCustomResourceDefinitionOpenAPISchema` (unsupported
//! keywords, `properties`/`additionalProperties`, list and map types, map-list keys,
//! `x-kubernetes-validations` shape). Properties are walked in key order where Go walks a map.

use serde_json::{json, Map, Value};

use crate::meta::field_error::{go_sharp, FieldError};

const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];
const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];
/// `JSONSchemaProps` fields in Go's declaration order, by JSON name, with whether the root
/// of a schema with the status subresource may set them (`allowedFieldsAtRootSchema`).
const ROOT_FIELDS: &[(&str, bool)] = &[
    ("id", false),
    ("$schema", false),
    ("$ref", false),
    ("description", true),
    ("type", true),
    ("format", true),
    ("title", true),
    ("default", false),
    ("maximum", true),
    ("exclusiveMaximum", true),
    ("minimum", true),
    ("exclusiveMinimum", true),
    ("maxLength", true),
    ("minLength", true),
    ("pattern", true),
    ("maxItems", true),
    ("minItems", true),
    ("uniqueItems", true),
    ("multipleOf", true),
    ("enum", false),
    ("maxProperties", false),
    ("minProperties", false),
    ("required", true),
    ("items", true),
    ("allOf", false),
    ("oneOf", false),
    ("anyOf", false),
    ("not", false),
    ("properties", true),
    ("additionalProperties", false),
    ("patternProperties", false),
    ("dependencies", false),
    ("additionalItems", false),
    ("definitions", false),
    ("externalDocs", true),
    ("example", true),
    ("nullable", false),
    ("x-kubernetes-preserve-unknown-fields", true),
    ("x-kubernetes-embedded-resource", false),
    ("x-kubernetes-int-or-string", false),
    ("x-kubernetes-list-map-keys", false),
    ("x-kubernetes-list-type", false),
    ("x-kubernetes-map-type", false),
    ("x-kubernetes-validations", true),
];
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn flag(v: &Value, k: &str) -> bool {
    v.get(k) == Some(&Value::Bool(true))
}

fn props(v: &Value) -> Option<&Map<String, Value>> {
    v.get("properties").and_then(Value::as_object)
}

/// Go's zero-value test for a field of `JSONSchemaProps`.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(_) => false,
    }
}

/// `validateCustomResourceDefinitionValidation` for `schema` (the `openAPIV3Schema`) under
/// `path` (`spec.validation` or `spec.versions[i].schema`).
pub(super) fn validate(schema: &Value, status_enabled: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let root = format!("{path}.openAPIV3Schema");
    if status_enabled {
        for (f, allowed) in ROOT_FIELDS {
            let Some(v) = schema.get(*f).filter(|v| !is_zero(v)) else {
                continue;
            };
            if *f == "type" {
                if v.as_str() != Some("object") {
                    errs.push(FieldError::invalid(
                        format!("{root}.type"),
                        v.clone(),
                        "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
                    ));
                    break;
                }
                continue;
            }
            if !allowed {
                errs.push(FieldError::invalid_rendered(
                    &root,
                    "apiextensions.JSONSchemaProps{...}",
                    "only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled",
                ));
                break;
            }
        }
    }
    if flag(schema, "nullable") {
        errs.push(FieldError::forbidden(
            format!("{root}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let mut structural = Vec::new();
    invariants(schema, Level::Root, &root, &mut structural);
    completeness(schema, Some(schema), &root, &root, &mut structural);
    structural.sort_by_key(FieldError::message);
    if structural.is_empty() {
        defaults(schema, &root, true, false, &mut errs);
    }
    errs.extend(structural);
    let ssv = Ssv {
        allow_defaults: true,
        reason: String::new(),
        inside_meta: false,
    };
    openapi(schema, &root, &ssv, true, &mut errs);
    // kube compiles rules only where the schema itself is valid
    if errs.is_empty() {
        errs.extend(crate::registry::custom::rules::check_schema(
            schema, &root, true,
        ));
    }
    errs
}

const META: &[&str] = &["apiVersion", "kind", "metadata"];

/// `structuraldefaulting.ValidateDefaults`, for what it checks outside of object metadata:
/// a default must survive pruning unchanged. (Its validation of the value against the
/// schema, and of defaults inside metadata, is not done.)
fn defaults(n: &Value, path: &str, embedded: bool, inside_meta: bool, errs: &mut Vec<FieldError>) {
    let embedded = embedded || flag(n, "x-kubernetes-embedded-resource");
    let inside_meta = inside_meta && !embedded;
    if let Some(d) = n.get("default").filter(|d| !d.is_null()) {
        if !inside_meta {
            let mut pruned = d.clone();
            crate::registry::custom::prune::prune_at(
                &mut pruned,
                &crate::registry::custom::node::compile(n),
                embedded,
            );
            if pruned != *d {
                errs.push(FieldError::invalid_rendered(
                    format!("{path}.default"),
                    &go_sharp(d),
                    "must not have unknown fields",
                ));
            }
        }
    }
    if let Some(i) = n.get("items").filter(|i| i.is_object()) {
        defaults(i, &format!("{path}.items"), false, inside_meta, errs);
    }
    for (k, p) in props(n).into_iter().flatten() {
        let sub = inside_meta || (embedded && META.contains(&k.as_str()));
        defaults(p, &format!("{path}.properties[{k}]"), false, sub, errs);
    }
}

/// `validateStructuralInvariants`.
fn invariants(n: &Value, lvl: Level, path: &str, errs: &mut Vec<FieldError>) {
    if !n.is_object() {
        return;
    }
    let ty = s(n, "type");
    let items = n.get("items").filter(|i| i.is_object());
    if ty == "array" && items.is_none() {
        errs.push(FieldError::required(
            format!("{path}.items"),
            "must be specified",
        ));
    }
    if let Some(i) = items {
        invariants(i, Level::Item, &format!("{path}.items"), errs);
    }
    for (k, p) in props(n).into_iter().flatten() {
        invariants(p, Level::Field, &format!("{path}.properties[{k}]"), errs);
    }
    let embedded = flag(n, "x-kubernetes-embedded-resource");
    let preserve = flag(n, "x-kubernetes-preserve-unknown-fields");
    let int_or_string = flag(n, "x-kubernetes-int-or-string");
    if let Some(ap) = n.get("additionalProperties") {
        if lvl == Level::Root {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "must not be used at the root",
            ));
        }
        if ap.is_object() {
            invariants(
                ap,
                Level::Field,
                &format!("{path}.additionalProperties"),
                errs,
            );
        }
    }
    if int_or_string && preserve {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-embedded-resource"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let any_of_pattern = is_int_or_string(n.get("anyOf"));
    let all_of_pattern = n
        .get("allOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .is_some_and(|f| is_int_or_string(f.get("anyOf")));
    value_validation(n, any_of_pattern, all_of_pattern, lvl, path, errs);
    let check_metadata = lvl == Level::Root || embedded;
    if embedded && ty != "object" {
        let p = format!("{path}.type");
        let d = "must be object if x-kubernetes-embedded-resource is true";
        errs.push(if ty.is_empty() {
            FieldError::required(p, d)
        } else {
            FieldError::invalid(p, ty, d)
        });
    } else if ty.is_empty() && !int_or_string && !preserve {
        let d = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(format!("{path}.type"), d));
    }
    if embedded && n.get("additionalProperties").is_some() {
        errs.push(FieldError::forbidden(
            format!("{path}.additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            ty,
            "must be object at the root",
        ));
    }
    let p = props(n);
    for f in ["kind", "apiVersion"] {
        if let Some(k) = p.and_then(|p| p.get(f)).filter(|_| check_metadata) {
            if s(k, "type") != "string" {
                errs.push(FieldError::invalid(
                    format!("{path}.properties[{f}].type"),
                    s(k, "type"),
                    "must be string",
                ));
            }
        }
    }
    if let Some(m) = p.and_then(|p| p.get("metadata")) {
        let mp = format!("{path}.properties[metadata]");
        if check_metadata && s(m, "type") != "object" {
            errs.push(FieldError::invalid(
                format!("{mp}.type"),
                s(m, "type"),
                "must be object",
            ));
        }
        if lvl == Level::Root && !metadata_is_implicit(m) {
            errs.push(FieldError::forbidden(
                mp,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    if embedded && !preserve && p.is_none_or(Map::is_empty) {
        errs.push(FieldError::required(
            format!("{path}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Whether a root `metadata` schema says no more than its type, a default, and properties
/// for exactly `name` and/or `generateName`.
fn metadata_is_implicit(m: &Value) -> bool {
    let Some(o) = m.as_object() else {
        return true;
    };
    o.iter().all(|(k, v)| match k.as_str() {
        "type" | "default" => true,
        "properties" => v
            .as_object()
            .is_some_and(|p| !p.is_empty() && p.keys().all(|k| k == "name" || k == "generateName")),
        // Zero values do not count, as Go compares the structs.
        _ => is_zero(v),
    })
}

/// `anyOf: [{type: integer}, {type: string}]` exactly.
fn is_int_or_string(any_of: Option<&Value>) -> bool {
    any_of == Some(&json!([{"type": "integer"}, {"type": "string"}]))
}

/// `validateValueValidation` for the junctors of node `n` (`skip_any_of`: the int-or-string
/// `anyOf`; `skip_first_all_of`: the int-or-string `anyOf` inside `allOf[0]`).
fn value_validation(
    n: &Value,
    skip_any_of: bool,
    skip_first_all_of: bool,
    lvl: Level,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let list = |k: &str| {
        n.get(k)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
    };
    if !skip_any_of {
        for (i, v) in list("anyOf").iter().enumerate() {
            nested(v, false, lvl, &format!("{path}.anyOf[{i}]"), errs);
        }
    }
    for (i, v) in list("allOf").iter().enumerate() {
        nested(
            v,
            skip_first_all_of && i == 0,
            lvl,
            &format!("{path}.allOf[{i}]"),
            errs,
        );
    }
    for (i, v) in list("oneOf").iter().enumerate() {
        nested(v, false, lvl, &format!("{path}.oneOf[{i}]"), errs);
    }
    if let Some(v) = n.get("not") {
        nested(v, false, lvl, &format!("{path}.not"), errs);
    }
}

/// `validateNestedValueValidation`: a schema under a junctor may only validate values.
fn nested(v: &Value, skip_any_of: bool, lvl: Level, path: &str, errs: &mut Vec<FieldError>) {
    if !v.is_object() {
        return;
    }
    value_validation(v, skip_any_of, false, lvl, path, errs);
    if let Some(i) = v.get("items").filter(|i| i.is_object()) {
        nested(i, false, lvl, &format!("{path}.items"), errs);
    }
    for (k, p) in props(v).into_iter().flatten() {
        nested(
            p,
            false,
            Level::Field,
            &format!("{path}.properties[{k}]"),
            errs,
        );
    }
    let forbid = |errs: &mut Vec<FieldError>, key: &str, what: &str| {
        errs.push(FieldError::forbidden(
            format!("{path}.{key}"),
            format!("must be {what} to be structural"),
        ));
    };
    if !s(v, "type").is_empty() {
        forbid(errs, "type", "empty");
    }
    if v.get("additionalProperties").is_some() {
        forbid(errs, "additionalProperties", "undefined");
    }
    if v.get("default").is_some_and(|d| !d.is_null()) {
        forbid(errs, "default", "undefined");
    }
    for k in ["title", "description"] {
        if !s(v, k).is_empty() {
            forbid(errs, k, "empty");
        }
    }
    if flag(v, "nullable") {
        forbid(errs, "nullable", "false");
    }
    for k in [
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if flag(v, k) {
            forbid(errs, k, "false");
        }
    }
    if v.get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        forbid(errs, "x-kubernetes-list-map-keys", "empty");
    }
    for k in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if v.get(k).is_some_and(Value::is_string) {
            forbid(errs, k, "undefined");
        }
    }
    if v.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        forbid(errs, "x-kubernetes-validations", "empty");
    }
    if props(v).is_some_and(|p| p.contains_key("metadata")) {
        errs.push(FieldError::forbidden(
            format!("{path}.properties[metadata]"),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateValueValidationCompleteness`: what a junctor constrains must exist structurally.
fn completeness(v: &Value, st: Option<&Value>, sp: &str, vp: &str, errs: &mut Vec<FieldError>) {
    let Some(st) = st else {
        errs.push(FieldError::required(
            sp,
            format!("because it is defined in {vp}"),
        ));
        return;
    };
    if let Some(n) = v.get("not").filter(|n| n.is_object()) {
        nested_completeness(n, st, sp, &format!("{vp}.not"), errs);
    }
    for j in ["allOf", "anyOf", "oneOf"] {
        for (i, n) in v
            .get(j)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            nested_completeness(n, st, sp, &format!("{vp}.{j}[{i}]"), errs);
        }
    }
}

fn nested_completeness(v: &Value, st: &Value, sp: &str, vp: &str, errs: &mut Vec<FieldError>) {
    completeness(v, Some(st), sp, vp, errs);
    if let Some(i) = v.get("items").filter(|i| i.is_object()) {
        let si = st.get("items").filter(|i| i.is_object());
        match si {
            Some(si) => {
                nested_completeness(i, si, &format!("{sp}.items"), &format!("{vp}.items"), errs)
            }
            None => completeness(
                i,
                None,
                &format!("{sp}.items"),
                &format!("{vp}.items"),
                errs,
            ),
        }
    }
    for (k, p) in props(v).into_iter().flatten() {
        let kp = format!("{sp}.properties[{k}]");
        let kv = format!("{vp}.properties[{k}]");
        match props(st).and_then(|sp| sp.get(k)) {
            Some(sf) => nested_completeness(p, sf, &kp, &kv, errs),
            None => errs.push(FieldError::required(
                kp,
                format!("because it is defined in {kv}"),
            )),
        }
    }
}

/// `specStandardValidatorV3`'s state.
#[derive(Clone)]
struct Ssv {
    allow_defaults: bool,
    reason: String,
    inside_meta: bool,
}

impl Ssv {
    fn forbid_defaults(&self, reason: String) -> Ssv {
        Ssv {
            allow_defaults: false,
            reason,
            inside_meta: self.inside_meta,
        }
    }

    /// `specStandardValidatorV3.validate`.
    fn validate(&self, n: &Value, path: &str, errs: &mut Vec<FieldError>) {
        let ty = s(n, "type");
        if !ty.is_empty() && !TYPES.contains(&ty) {
            errs.push(FieldError::not_supported(format!("{path}.type"), ty, TYPES));
        }
        if n.get("default").is_some_and(|d| !d.is_null()) && !self.allow_defaults {
            let mut d = "must not be set".to_string();
            if !self.reason.is_empty() {
                d = format!("{d} {}", self.reason);
            }
            errs.push(FieldError::forbidden(format!("{path}.default"), d));
        }
        let present = |k: &str| n.get(k).is_some_and(|v| !is_zero(v));
        for (k, what) in [
            ("id", "id is not supported"),
            ("additionalItems", "additionalItems is not supported"),
            ("patternProperties", "patternProperties is not supported"),
            ("definitions", "definitions is not supported"),
            ("dependencies", "dependencies is not supported"),
            ("$ref", "$ref is not supported"),
        ] {
            if present(k) || (k == "additionalItems" && n.get(k).is_some_and(|v| !v.is_null())) {
                errs.push(FieldError::forbidden(format!("{path}.{k}"), what));
            }
        }
        if ty == "null" {
            errs.push(FieldError::forbidden(
                format!("{path}.type"),
                "type cannot be set to null, use nullable as an alternative",
            ));
        }
        if n.get("items")
            .is_some_and(|i| i.as_array().is_some_and(|a| !a.is_empty()))
        {
            errs.push(FieldError::forbidden(
                format!("{path}.items"),
                "items must be a schema object and not an array",
            ));
        }
        if self.inside_meta && flag(n, "x-kubernetes-embedded-resource") {
            errs.push(FieldError::forbidden(
                format!("{path}.x-kubernetes-embedded-resource"),
                "must not be used inside of resource meta",
            ));
        }
    }
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` (its schema errors; CEL rules are compiled
/// afterwards by `custom::rules::check_schema`).
fn openapi(n: &Value, path: &str, ssv: &Ssv, is_root: bool, errs: &mut Vec<FieldError>) {
    if !n.is_object() {
        return;
    }
    ssv.validate(n, path, errs);
    if flag(n, "uniqueItems") {
        errs.push(FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let ty = s(n, "type");
    let embedded = flag(n, "x-kubernetes-embedded-resource");
    let p = props(n);
    if let Some(ap) = n.get("additionalProperties").filter(|a| !a.is_null()) {
        if p.is_some_and(|p| !p.is_empty()) && (ap == &Value::Bool(false) || ap.is_object()) {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let sub = if ssv.inside_meta {
            ssv.forbid_defaults("inside additionalProperties applying to object metadata".into())
        } else {
            ssv.clone()
        };
        openapi(
            ap,
            &format!("{path}.additionalProperties"),
            &sub,
            false,
            errs,
        );
    }
    for (k, v) in p.into_iter().flatten() {
        let mut sub = ssv.clone();
        if (is_root || embedded) && ["metadata", "kind", "apiVersion"].contains(&k.as_str()) {
            sub.inside_meta = true;
            if is_root {
                sub = sub.forbid_defaults(format!("in top-level {k}"));
            }
        }
        openapi(v, &format!("{path}.properties[{k}]"), &sub, false, errs);
    }
    if let Some(v) = n.get("not") {
        openapi(v, &format!("{path}.not"), ssv, false, errs);
    }
    for j in ["allOf", "oneOf", "anyOf"] {
        for (i, v) in n
            .get(j)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            openapi(v, &format!("{path}.{j}[{i}]"), ssv, false, errs);
        }
    }
    for (k, v) in n
        .get("definitions")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        openapi(v, &format!("{path}.definitions[{k}]"), ssv, false, errs);
    }
    let items = n.get("items").filter(|i| i.is_object());
    match n.get("items") {
        Some(Value::Array(a)) => {
            for (i, v) in a.iter().enumerate() {
                openapi(v, &format!("{path}.items[{i}]"), ssv, false, errs);
            }
        }
        Some(i @ Value::Object(_)) => openapi(i, &format!("{path}.items"), ssv, false, errs),
        _ => {}
    }
    for (k, v) in n
        .get("dependencies")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        openapi(v, &format!("{path}.dependencies[{k}]"), ssv, false, errs);
    }
    if n.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            false,
            "must be true or undefined",
        ));
    }
    let map_type = n.get("x-kubernetes-map-type").and_then(Value::as_str);
    let list_type = n.get("x-kubernetes-list-type").and_then(Value::as_str);
    let type_err = |errs: &mut Vec<FieldError>, want: &str, ext: &str| {
        let d = format!("must be {want} if x-kubernetes-{ext} is specified");
        errs.push(if ty.is_empty() {
            FieldError::required(format!("{path}.type"), d)
        } else {
            FieldError::invalid(format!("{path}.type"), ty, d)
        });
    };
    if let Some(mt) = map_type {
        if ty != "object" {
            type_err(errs, "object", "map-type");
        }
        if mt != "atomic" && mt != "granular" {
            errs.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-map-type"),
                mt,
                &["atomic", "granular"],
            ));
        }
    }
    if list_type.is_some() && ty != "array" {
        type_err(errs, "array", "list-type");
    } else if let (Some("set"), Some(is)) = (list_type, items) {
        let atomic = "must be atomic as item of a list with x-kubernetes-list-type=set";
        match s(is, "type") {
            "array" => {
                if let Some(lt) = is
                    .get("x-kubernetes-list-type")
                    .and_then(Value::as_str)
                    .filter(|lt| *lt != "atomic")
                {
                    errs.push(FieldError::invalid(
                        format!("{path}.items.x-kubernetes-list-type"),
                        lt,
                        atomic,
                    ));
                }
            }
            "object" => {
                if is.get("x-kubernetes-map-type").and_then(Value::as_str) != Some("atomic") {
                    // Upstream shows the items' list type here, which is unset.
                    errs.push(FieldError::invalid(
                        format!("{path}.items.x-kubernetes-map-type"),
                        Value::Null,
                        atomic,
                    ));
                }
            }
            _ => {}
        }
    }
    if let Some(lt) = list_type.filter(|lt| !["atomic", "set", "map"].contains(lt)) {
        errs.push(FieldError::not_supported(
            format!("{path}.x-kubernetes-list-type"),
            lt,
            &["atomic", "set", "map"],
        ));
    }
    let keys: Vec<&str> = n
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|k| k.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    if !keys.is_empty() {
        let d = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errs.push(FieldError::required(
                format!("{path}.x-kubernetes-list-type"),
                d,
            )),
            Some("map") => {}
            Some(lt) => errs.push(FieldError::invalid(
                format!("{path}.x-kubernetes-list-type"),
                lt,
                d,
            )),
        }
    }
    if list_type == Some("map") {
        if keys.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        if n.get("items").is_none_or(Value::is_null) {
            errs.push(FieldError::required(
                format!("{path}.items"),
                "must have a schema if x-kubernetes-list-type is map",
            ));
        }
        if let Some(is) = items {
            let it = s(is, "type");
            if it != "object" {
                errs.push(FieldError::invalid(
                    format!("{path}.items.type"),
                    it,
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            } else {
                let mut seen = Vec::new();
                for k in &keys {
                    match props(is).and_then(|p| p.get(*k)) {
                        Some(kp) => {
                            if matches!(s(kp, "type"), "array" | "object") {
                                errs.push(FieldError::invalid(
                                    format!("{path}.items.properties[{k}].type"),
                                    it,
                                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                ));
                            }
                        }
                        None => errs.push(FieldError::invalid(
                            format!("{path}.x-kubernetes-list-map-keys"),
                            json!(keys),
                            "entries must all be names of item properties",
                        )),
                    }
                    if seen.contains(k) {
                        errs.push(FieldError::invalid(
                            format!("{path}.x-kubernetes-list-map-keys"),
                            json!(keys),
                            "must not contain duplicate entries",
                        ));
                    }
                    seen.push(k);
                }
            }
        }
    }
    // validateMapListKeysMapSet
    if let (Some(lt @ ("set" | "map")), Some(is)) = (list_type, items) {
        if flag(is, "nullable") {
            errs.push(FieldError::forbidden(
                format!("{path}.items.nullable"),
                format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
            ));
        }
        if lt == "map" {
            let required: Vec<&str> = is
                .get("required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for k in &keys {
                let Some(kp) = props(is).and_then(|p| p.get(*k)) else {
                    continue;
                };
                let kpath = format!("{path}.items.properties[{k}]");
                if !required.contains(k) && kp.get("default").is_none_or(Value::is_null) {
                    errs.push(FieldError::required(
                        format!("{kpath}.default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
                if flag(kp, "nullable") {
                    errs.push(FieldError::forbidden(
                        format!("{kpath}.nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    ));
                }
            }
        }
    }
    x_validations(n, path, errs);
}

/// The shape of `x-kubernetes-validations` rules (their CEL is compiled by
/// `custom::rules::check_schema`).
fn x_validations(n: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let rules = n
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for (i, r) in rules.iter().enumerate() {
        let p = format!("{path}.x-kubernetes-validations[{i}]");
        let (rule, msg) = (s(r, "rule").trim(), s(r, "message"));
        let trimmed = msg.trim();
        let newline = |t: &str| t.contains('\n');
        if rule.is_empty() {
            errs.push(FieldError::required(
                format!("{p}.rule"),
                "rule is not specified",
            ));
        } else if !msg.is_empty() && trimmed.is_empty() {
            errs.push(FieldError::invalid(
                format!("{p}.message"),
                msg,
                "message must be non-empty if specified",
            ));
        } else if newline(trimmed) {
            errs.push(FieldError::invalid(
                format!("{p}.message"),
                msg,
                "message must not contain line breaks",
            ));
        } else if newline(rule) && trimmed.is_empty() {
            errs.push(FieldError::required(
                format!("{p}.message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let me = s(r, "messageExpression");
        if !me.is_empty() && me.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{p}.messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = r.get("reason").and_then(Value::as_str) {
            if !REASONS.contains(&reason) {
                errs.push(FieldError::not_supported(
                    format!("{p}.reason"),
                    reason,
                    REASONS,
                ));
            }
        }
        let fp = s(r, "fieldPath");
        if !fp.is_empty() && fp.trim().is_empty() {
            errs.push(FieldError::invalid(
                format!("{p}.fieldPath"),
                fp,
                "fieldPath must be non-empty if specified",
            ));
        }
        if newline(fp) {
            errs.push(FieldError::invalid(
                format!("{p}.fieldPath"),
                fp,
                "fieldPath must not contain line breaks",
            ));
        }
        if !fp.is_empty() && crate::registry::custom::rules::valid_field_path(fp, n).is_err() {
            errs.push(FieldError::invalid(
                format!("{p}.fieldPath"),
                fp,
                "fieldPath must be a valid path",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::field_error::aggregate_message;

    fn check(schema: Value) -> String {
        aggregate_message(&validate(&schema, false, "spec.validation"))
    }

    #[test]
    fn untyped_fields_and_arrays_without_items_are_not_structural() {
        assert_eq!(
            check(json!({"type": "object", "properties": {
                "b": {"type": "array"}, "a": {"description": "x"}}})),
            "[spec.validation.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields, spec.validation.openAPIV3Schema.properties[b].items: Required value: must be specified]"
        );
    }

    #[test]
    fn int_or_string_patterns_are_structural() {
        assert_eq!(
            check(json!({"type": "object", "properties": {"p": {
                "x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]}}})),
            ""
        );
        assert_eq!(
            check(json!({"type": "object", "properties": {"p": {"type": "string",
                "anyOf": [{"type": "integer"}, {"type": "boolean"}]}}})),
            "[spec.validation.openAPIV3Schema.properties[p].anyOf[0].type: Forbidden: must be empty to be structural, spec.validation.openAPIV3Schema.properties[p].anyOf[1].type: Forbidden: must be empty to be structural]"
        );
    }

    #[test]
    fn defaults_must_be_pruned() {
        assert_eq!(
            check(json!({"type": "object", "properties": {"spec": {"type": "object",
                "default": {"a": 1, "b": [true]}, "properties": {"a": {"type": "integer"}}}}})),
            "spec.validation.openAPIV3Schema.properties[spec].default: Invalid value: map[string]interface {}{\"a\":1, \"b\":[]interface {}{true}}: must not have unknown fields"
        );
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"spec": {"type": "object",
                "x-kubernetes-preserve-unknown-fields": true, "default": {"a": 1}}}})
            ),
            ""
        );
    }

    #[test]
    fn metadata_may_only_name() {
        assert_eq!(
            check(
                json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"name": {"type": "string"}}}}})
            ),
            ""
        );
        assert_eq!(
            check(json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"labels": {"type": "object"}}}}})),
            "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
        );
    }
}
