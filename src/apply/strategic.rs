//! Strategic merge patch (`application/strategic-merge-patch+json`), matching
//! `k8s.io/apimachinery/pkg/util/strategicpatch` as kube-apiserver v1.33 applies it
//! (`StrategicMergeMapPatch` with `MergeParallelList` and `IgnoreUnmatchedNulls`).
//!
//! It owns: recursive map merging (`null` deletes, `$patch: replace|delete`), lists merged by
//! `patchMergeKey` or as primitive unions when the field's `patchStrategy` is `merge`, the
//! `$deleteFromPrimitiveList/<f>`, `$setElementOrder/<f>` and `$retainKeys` directives, and
//! upstream's error texts (including Go's `%v` rendering of values inside them) together with the
//! HTTP status kube-apiserver answers with ([`PatchError::status_code`]).
//!
//! The schema comes from [`crate::openapi::facts`] (upstream uses the Go struct tags, which the
//! OpenAPI extensions mirror). It deliberately does not know about HTTP, storage, defaulting,
//! validation or pruning: like upstream's intermediate map, the result may still hold unknown
//! fields (and directive keys inside values the patch adds) that upstream's typed decode would
//! drop, so callers must decode/prune the result against the type before storing it. Custom
//! resources are not supported (upstream answers 415 before ever reaching this code).

use crate::openapi::facts::{self, Definition, Ty};
use serde_json::{Map, Value};

/// A strategic merge patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// Bad patch; kube-apiserver answers 400 Bad Request with this message.
    #[error("{0}")]
    Invalid(String),
    /// kube-apiserver answers 422 Unprocessable Entity (e.g. lists of lists).
    #[error("{0}")]
    Unprocessable(String),
    /// Upstream returns a plain Go error here, which kube-apiserver reports as a 500 Status with
    /// reason "" and this message (e.g. a missing merge key).
    #[error("{0}")]
    Internal(String),
}

impl PatchError {
    /// The HTTP status code kube-apiserver uses for this error.
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::Invalid(_) => 400,
            PatchError::Unprocessable(_) => 422,
            PatchError::Internal(_) => 500,
        }
    }

    /// The error message (upstream's text).
    pub fn message(&self) -> &str {
        match self {
            PatchError::Invalid(m) | PatchError::Unprocessable(m) | PatchError::Internal(m) => m,
        }
    }
}

type Result<T> = std::result::Result<T, PatchError>;
type Obj = Map<String, Value>;

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_STRATEGY: &str = "retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

const ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST: &str = "invalid patch format of primitive list";
const ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
const ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER_LIST: &str =
    "invalid patch format of setElementOrder list";
const ERR_NO_LIST_OF_LISTS: &str = "lists of lists are not supported";
const ERR_UNSUPPORTED_FORMAT: &str = "strategic merge patch format is not supported";
const ERR_BAD_JSON_DOC: &str = "invalid JSON document";

/// Applies a strategic merge patch to `original` for the object type `definition` (e.g.
/// "io.k8s.api.apps.v1.Deployment"). An unknown definition (e.g. a custom resource) is
/// rejected with upstream's "strategic merge patch format is not supported" (400); note that
/// kube-apiserver already answers 415 Unsupported Media Type for custom resources.
pub fn strategic_merge_patch(
    original: &Value,
    patch: &Value,
    definition: &str,
) -> std::result::Result<Value, PatchError> {
    let def = facts::definition(definition)
        .ok_or_else(|| PatchError::Invalid(ERR_UNSUPPORTED_FORMAT.to_string()))?;
    strategic_merge_patch_inner(original, patch, def)
}

fn strategic_merge_patch_inner(
    original: &Value,
    patch: &Value,
    def: &'static Definition,
) -> Result<Value> {
    let patch = match patch {
        Value::Object(m) => m.clone(),
        // Go's json.Unmarshal of `null` into a map leaves it empty.
        Value::Null => Obj::new(),
        other => {
            return Err(PatchError::Invalid(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_kind(other)
            )))
        }
    };
    let original = match original {
        Value::Object(m) => m.clone(),
        Value::Null => Obj::new(),
        _ => return Err(PatchError::Internal(ERR_BAD_JSON_DOC.to_string())),
    };
    merge_map(original, patch, Schema::Struct(def)).map(Value::Object)
}

/// Like [`strategic_merge_patch`] for a definition the caller already looked up (e.g. with
/// [`facts::definition_for_gvk`]).
pub fn strategic_merge_patch_for_definition(
    original: &Value,
    patch: &Value,
    definition: &'static Definition,
) -> std::result::Result<Value, PatchError> {
    strategic_merge_patch_inner(original, patch, definition)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

// ---------------------------------------------------------------------------------------------
// Schema: what upstream's PatchMetaFromStruct knows about the Go type at hand.

/// The Go type being merged into, as far as patching needs it.
#[derive(Debug, Clone, Copy)]
enum Schema {
    /// A Go struct with JSON fields.
    Struct(&'static Definition),
    /// A Go struct whose JSON form is opaque (RawExtension, JSON, ...): it has no JSON fields.
    Opaque(&'static str),
    /// A Go map.
    Map,
    /// A Go scalar (string, number, bool, Quantity...).
    Scalar,
    /// A Go slice of the given element.
    Slice(Elem),
}

#[derive(Debug, Clone, Copy)]
enum Elem {
    Struct(&'static Definition),
    Scalar,
}

impl Schema {
    /// Go's reflect.Kind name of the type (upstream's `LookupPatchMeta.Name()`).
    fn kind_name(self) -> &'static str {
        match self {
            Schema::Struct(_) | Schema::Opaque(_) => "struct",
            Schema::Map => "map",
            Schema::Scalar => "string",
            Schema::Slice(_) => "slice",
        }
    }
}

/// Patch metadata of a field: (patch strategies, merge key).
type PatchMeta = (&'static str, &'static str);

/// The Go struct name of a definition (`io.k8s.api.core.v1.PodSpec` → `PodSpec`).
fn go_name(def_name: &str) -> &str {
    def_name.rsplit('.').next().unwrap_or(def_name)
}

/// The Go struct behind a field the facts mark as opaque JSON.
fn any_go_name(field: &str) -> &'static str {
    match field {
        "default" | "example" => "JSON",
        "items" => "JSONSchemaPropsOrArray",
        "additionalItems" | "additionalProperties" => "JSONSchemaPropsOrBool",
        "fieldsV1" => "FieldsV1",
        _ => "RawExtension",
    }
}

/// Resolves a referenced definition (tests add synthetic types to the facts).
fn resolve(name: &str) -> Option<&'static Definition> {
    #[cfg(test)]
    if let Some(d) = test_types::DEFS.iter().find(|d| d.name == name) {
        return Some(d);
    }
    facts::definition(name)
}

fn field_schema(f: &'static facts::Field) -> Schema {
    let def_or_opaque = |n: &'static str| match resolve(n) {
        Some(d) => Schema::Struct(d),
        None => Schema::Opaque(go_name(n)),
    };
    match f.ty {
        Ty::Scalar => Schema::Scalar,
        Ty::Ref(n) => def_or_opaque(n),
        Ty::ArrayOfScalar => Schema::Slice(Elem::Scalar),
        Ty::ArrayOfRef(n) => match resolve(n) {
            Some(d) => Schema::Slice(Elem::Struct(d)),
            None => Schema::Slice(Elem::Scalar),
        },
        Ty::MapOfScalar | Ty::MapOfRef(_) => Schema::Map,
        Ty::Any => Schema::Opaque(any_go_name(f.name)),
    }
}

/// upstream `LookupPatchMetadataForStruct`: the field's type and patch metadata.
fn lookup_struct(schema: Schema, key: &str) -> Result<(Schema, PatchMeta)> {
    let struct_name = match schema {
        Schema::Struct(def) => {
            // Go's JSON field lookup: exact name first, then case-insensitive.
            let found = facts::field(def, key)
                .or_else(|| def.fields.iter().find(|f| f.name.eq_ignore_ascii_case(key)));
            if let Some(f) = found {
                return Ok((field_schema(f), (f.patch_strategy, f.patch_merge_key)));
            }
            go_name(def.name)
        }
        Schema::Opaque(name) => name,
        other => {
            return Err(PatchError::Internal(format!(
                "merging an object in json but data type is not struct, instead is: {}",
                other.kind_name()
            )))
        }
    };
    Err(PatchError::Internal(format!(
        "unable to find api field in struct {struct_name} for the json field {}",
        go_quote(key)
    )))
}

/// upstream `LookupPatchMetadataForSlice`: the element type and the field's patch metadata.
fn lookup_slice(schema: Schema, key: &str) -> Result<(Schema, PatchMeta)> {
    let (sub, meta) = lookup_struct(schema, key)?;
    match sub {
        Schema::Slice(Elem::Struct(d)) => Ok((Schema::Struct(d), meta)),
        Schema::Slice(Elem::Scalar) => Ok((Schema::Scalar, meta)),
        _ => Err(PatchError::Internal(format!(
            "expected slice or array type, but got: {}",
            schema.kind_name()
        ))),
    }
}

/// upstream `extractRetainKeysPatchStrategy`: the strategy other than `retainKeys`.
fn extract_retain_keys_patch_strategy(strategies: &str) -> Result<&str> {
    let parts: Vec<&str> = strategies.split(',').collect();
    match parts.as_slice() {
        [one] if *one == RETAIN_KEYS_STRATEGY => Ok(""),
        [one] => Ok(one),
        [a, b] if *a == RETAIN_KEYS_STRATEGY => Ok(b),
        [a, b] if *b == RETAIN_KEYS_STRATEGY => Ok(a),
        _ => Err(PatchError::Internal(format!(
            "unexpected patch strategy: [{}]",
            parts.join(" ")
        ))),
    }
}

// ---------------------------------------------------------------------------------------------
// Go value semantics: dynamic types, interface equality, fmt rendering.

/// The Go dynamic type a JSON value decodes to (numbers: int64 when they fit, else float64).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GoType {
    Nil,
    Bool,
    Int64,
    Float64,
    String,
    Slice,
    Map,
}

fn go_type(v: &Value) -> GoType {
    match v {
        Value::Null => GoType::Nil,
        Value::Bool(_) => GoType::Bool,
        Value::Number(n) if n.as_i64().is_some() => GoType::Int64,
        Value::Number(_) => GoType::Float64,
        Value::String(_) => GoType::String,
        Value::Array(_) => GoType::Slice,
        Value::Object(_) => GoType::Map,
    }
}

fn go_type_name(t: GoType) -> &'static str {
    match t {
        GoType::Nil => "%!s(<nil>)",
        GoType::Bool => "bool",
        GoType::Int64 => "int64",
        GoType::Float64 => "float64",
        GoType::String => "string",
        GoType::Slice => "[]interface {}",
        GoType::Map => "map[string]interface {}",
    }
}

/// Go's `==` on two `interface{}` values: different dynamic types are unequal, equal
/// uncomparable types (maps, slices) panic (reported as an internal error).
fn go_eq(a: &Value, b: &Value) -> Result<bool> {
    let (ta, tb) = (go_type(a), go_type(b));
    if ta != tb {
        return Ok(false);
    }
    match ta {
        GoType::Map | GoType::Slice => Err(PatchError::Internal(format!(
            "runtime error: comparing uncomparable type {}",
            go_type_name(ta)
        ))),
        GoType::Float64 => Ok(a.as_f64() == b.as_f64()),
        _ => Ok(a == b),
    }
}

/// Go's map[interface{}] key hashing of a value: panics for maps and slices.
fn go_hashable(v: &Value) -> Result<()> {
    match go_type(v) {
        t @ (GoType::Map | GoType::Slice) => Err(PatchError::Internal(format!(
            "runtime error: hash of unhashable type {}",
            go_type_name(t)
        ))),
        _ => Ok(()),
    }
}

fn go_contains(list: &[Value], v: &Value) -> Result<bool> {
    go_hashable(v)?;
    for x in list {
        go_hashable(x)?;
        if go_eq(x, v)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Renders a value like Go's `fmt` `%v` (`verb_s == false`) or `%s` of an `interface{}`.
fn go_fmt(v: &Value, verb_s: bool) -> String {
    let mut out = String::new();
    go_fmt_into(&mut out, v, verb_s);
    out
}

fn go_fmt_into(out: &mut String, v: &Value, verb_s: bool) {
    let scalar = |t: &str, s: String| {
        if verb_s {
            format!("%!s({t}={s})")
        } else {
            s
        }
    };
    match v {
        Value::Null => out.push_str(if verb_s { "%!s(<nil>)" } else { "<nil>" }),
        Value::Bool(b) => out.push_str(&scalar("bool", b.to_string())),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.push_str(&scalar("int64", i.to_string())),
            None => out.push_str(&scalar("float64", go_float(n.as_f64().unwrap_or(0.0)))),
        },
        Value::String(s) => out.push_str(s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                go_fmt_into(out, x, verb_s);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push_str("map[");
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                go_fmt_into(out, &m[k.as_str()], verb_s);
            }
            out.push(']');
        }
    }
}

/// Go's `%v` of a float64 (`strconv` 'g' with shortest digits: exponent form when the
/// decimal exponent is < -4 or >= 6).
fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let nd = digits.len() as i32;
    let eprec = 6;
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    if exp < -4 || exp >= eprec {
        s.push_str(&digits[..1]);
        if nd > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if exp < 0 { '-' } else { '+' });
        s.push_str(&format!("{:02}", exp.abs()));
    } else if exp >= 0 {
        let int_len = (exp + 1) as usize;
        if digits.len() <= int_len {
            s.push_str(&digits);
            s.push_str(&"0".repeat(int_len - digits.len()));
        } else {
            s.push_str(&digits[..int_len]);
            s.push('.');
            s.push_str(&digits[int_len..]);
        }
    } else {
        s.push_str("0.");
        s.push_str(&"0".repeat((-exp - 1) as usize));
        s.push_str(&digits);
    }
    s
}

/// Go's `%q` of a string.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// upstream mergepatch error constructors.

fn err_bad_arg_type(expected: GoType, actual: &Value) -> PatchError {
    PatchError::Internal(format!(
        "expected a {}, but received a {}",
        go_type_name(expected),
        go_type_name(go_type(actual))
    ))
}

fn err_no_merge_key(m: &Value, key: &str) -> PatchError {
    PatchError::Internal(format!(
        "map: {} does not contain declared merge key: {key}",
        go_fmt(m, false)
    ))
}

fn err_bad_patch_type(t: &Value, m: &Value) -> PatchError {
    PatchError::Internal(format!(
        "unknown patch type: {} in map: {}",
        go_fmt(t, true),
        go_fmt(m, false)
    ))
}

// ---------------------------------------------------------------------------------------------
// The merge itself (upstream mergeMap and friends).

fn merge_map(mut original: Obj, mut patch: Obj, schema: Schema) -> Result<Obj> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
        return handle_directive_in_merge_map(directive.clone(), patch);
    }
    apply_retain_keys_directive(&mut original, &mut patch)?;
    merge_patch_into_original(&mut original, &mut patch, schema)?;

    for (key, patch_v) in patch {
        let (key, is_delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
            (extract_key(&key, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?, true)
        } else {
            (key, false)
        };
        if patch_v.is_null() {
            original.shift_remove(&key);
            continue;
        }
        let Some(orig_v) = original.get_mut(&key) else {
            if !is_delete_list {
                let mut v = patch_v;
                discard_null_values(&mut v);
                if let Some(v) = remove_directives(v) {
                    original.insert(key, v);
                }
            }
            continue;
        };
        if go_type(orig_v) != go_type(&patch_v) {
            if !is_delete_list {
                let mut v = patch_v;
                discard_null_values(&mut v);
                match remove_directives(v) {
                    Some(v) => *orig_v = v,
                    None => {
                        original.shift_remove(&key);
                    }
                }
            }
            continue;
        }
        let merged = match (orig_v.take(), patch_v) {
            (Value::Object(o), Value::Object(p)) => {
                let (sub, (strategies, _)) = lookup_struct(schema, &key)?;
                let strategy = extract_retain_keys_patch_strategy(strategies)?;
                if strategy == REPLACE_DIRECTIVE {
                    Some(Value::Object(p))
                } else {
                    Some(Value::Object(merge_map(o, p, sub)?))
                }
            }
            (Value::Array(o), Value::Array(p)) => {
                let (sub, (strategies, merge_key)) = lookup_slice(schema, &key)?;
                let strategy = extract_retain_keys_patch_strategy(strategies)?;
                Some(Value::Array(merge_slice_handler(
                    o,
                    p,
                    sub,
                    strategy,
                    merge_key,
                    is_delete_list,
                    None,
                )?))
            }
            (_, p) => remove_directives(p),
        };
        match merged {
            Some(v) => *orig_v = v,
            None => {
                original.shift_remove(&key);
            }
        }
    }
    Ok(original)
}

fn handle_directive_in_merge_map(directive: Value, mut patch: Obj) -> Result<Obj> {
    match directive.as_str() {
        Some(REPLACE_DIRECTIVE) => {
            patch.shift_remove(DIRECTIVE_MARKER);
            Ok(patch)
        }
        Some(DELETE_DIRECTIVE) => Ok(Obj::new()),
        _ => Err(err_bad_patch_type(&directive, &Value::Object(patch))),
    }
}

/// Removes null map values everywhere in a value the patch adds.
fn discard_null_values(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(discard_null_values);
        }
        Value::Array(a) => a.iter_mut().for_each(discard_null_values),
        _ => {}
    }
}

/// upstream `removeDirectives`: drops maps carrying `$patch` (returns None when `v` itself is
/// one), recursively.
fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.contains_key(DIRECTIVE_MARKER) {
                return None;
            }
            let m = m
                .into_iter()
                .filter_map(|(k, x)| remove_directives(x).map(|x| (k, x)))
                .collect();
            Some(Value::Object(m))
        }
        Value::Array(a) => Some(Value::Array(
            a.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

/// upstream `extractKey`: the field name after `<prefix>/`.
fn extract_key(s: &str, prefix: &str) -> Result<String> {
    match s.split_once('/') {
        Some((p, rest)) if p == prefix => Ok(rest.to_string()),
        _ => Err(PatchError::Invalid(
            if prefix == DELETE_FROM_PRIMITIVE_LIST_PREFIX {
                ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST
            } else {
                ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER_LIST
            }
            .to_string(),
        )),
    }
}

/// upstream `applyRetainKeysDirective`: clears keys of `original` missing from `$retainKeys`.
fn apply_retain_keys_directive(original: &mut Obj, patch: &mut Obj) -> Result<()> {
    let Some(retain) = patch.shift_remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let bad = || PatchError::Invalid(ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS.to_string());
    let Value::Array(list) = retain else {
        return Err(bad());
    };
    for v in &list {
        go_hashable(v)?;
    }
    let retained = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || k.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !retained(k) {
            return Err(bad());
        }
    }
    original.retain(|k, _| retained(k));
    Ok(())
}

/// upstream `mergePatchIntoOriginal`: merges the lists named by `$setElementOrder/<f>`
/// directives and orders them (`$setElementOrder` > patch order > live order).
fn merge_patch_into_original(original: &mut Obj, patch: &mut Obj, schema: Schema) -> Result<()> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let Some(order_v) = patch.shift_remove(&key) else {
            continue;
        };
        let Value::Array(order) = order_v else {
            return Err(err_bad_arg_type(GoType::Slice, &order_v));
        };
        let original_key = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)?;
        let as_list = |v: Option<&Value>| -> Result<Option<Vec<Value>>> {
            match v {
                None => Ok(None),
                Some(Value::Array(a)) => Ok(Some(a.clone())),
                Some(other) => Err(err_bad_arg_type(GoType::Slice, other)),
            }
        };
        let original_list = as_list(original.get(&original_key))?;
        let patch_list = as_list(patch.get(&original_key))?;
        let (sub, (strategies, merge_key)) = lookup_slice(schema, &original_key)?;
        let strategy = extract_retain_keys_patch_strategy(strategies)?;
        validate_patch_with_set_order_list(
            patch_list.as_deref().unwrap_or_default(),
            &order,
            merge_key,
        )?;
        // Upstream's merge shifts and appends in place within the live list's backing array,
        // which it then reads back as the "server order": mirror that through `alias`.
        let mut alias = AliasWindow::new(original_list.clone().unwrap_or_default());
        let patch_items = patch_list.clone().unwrap_or_default();
        let merged = match (original_list, patch_list) {
            (Some(o), None) => o,
            (None, Some(p)) => match remove_directives(Value::Array(p)) {
                Some(Value::Array(a)) => a,
                _ => continue,
            },
            (Some(o), Some(p)) => {
                merge_slice_handler(o, p, sub, strategy, merge_key, false, Some(&mut alias))?
            }
            (None, None) => continue,
        };
        let original_items = alias.window;
        let (in_patch, server_only) = if merge_key.is_empty() {
            partition_primitives_by_present_in_list(merged, &order)?
        } else {
            partition_maps_by_present_in_list(merged, &order, merge_key)?
        };
        let kind = slice_element_type(&[&original_items, &patch_items])?;
        let both = normalize_element_order(
            in_patch,
            server_only,
            &order,
            &original_items,
            merge_key,
            kind,
        )?;
        original.insert(original_key.clone(), Value::Array(both));
        patch.shift_remove(&original_key);
    }
    Ok(())
}

/// upstream `validatePatchWithSetOrderList`: patch items must appear in `$setElementOrder` in
/// the same relative order.
fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    order: &[Value],
    merge_key: &str,
) -> Result<()> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        extract_to_delete_items(patch_list.to_vec())?.0
    };
    let (mut pi, mut si) = (0, 0);
    while pi < non_delete.len() && si < order.len() {
        if contains_directive_marker(&non_delete[pi]) {
            pi += 1;
            continue;
        }
        if merge_key_value_equal(&non_delete[pi], &order[si], merge_key)? {
            pi += 1;
        }
        si += 1;
    }
    if pi < non_delete.len() && si >= order.len() {
        return Err(PatchError::Internal(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER_PREFIX} list:\n{}\n",
            go_fmt(&Value::Array(patch_list.to_vec()), false),
            go_fmt(&Value::Array(order.to_vec()), false)
        )));
    }
    Ok(())
}

fn contains_directive_marker(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|m| m.contains_key(DIRECTIVE_MARKER))
}

fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool> {
    if merge_key.is_empty() {
        return go_eq(left, right);
    }
    let (Some(l), Some(r)) = (left.as_object(), right.as_object()) else {
        let bad = if left.is_object() { right } else { left };
        return Err(err_bad_arg_type(GoType::Map, bad));
    };
    let lv = l
        .get(merge_key)
        .ok_or_else(|| err_no_merge_key(left, merge_key))?;
    let rv = r
        .get(merge_key)
        .ok_or_else(|| err_no_merge_key(right, merge_key))?;
    go_eq(lv, rv)
}

/// The Go view of the live list that upstream keeps using after `mergeSlice` modified its
/// backing array in place: removals shift elements left (leaving the last one duplicated) and
/// appends fill the freed slots. Only merge key values are ever read from it, so merging an
/// element in place needs no mirroring.
struct AliasWindow {
    window: Vec<Value>,
    /// Length of the in-place slice that shares the window's backing array.
    len: usize,
    /// Appends no longer reach the window (after `$patch: replace`).
    detached: bool,
}

impl AliasWindow {
    fn new(window: Vec<Value>) -> Self {
        let len = window.len();
        AliasWindow {
            window,
            len,
            detached: false,
        }
    }

    fn remove(&mut self, i: usize) {
        if i < self.len {
            for k in i..self.len - 1 {
                self.window[k] = self.window[k + 1].clone();
            }
            self.len -= 1;
        }
    }

    fn append(&mut self, v: &Value) {
        if !self.detached && self.len < self.window.len() {
            self.window[self.len] = v.clone();
            self.len += 1;
        }
    }
}

/// upstream `mergeSliceHandler`.
fn merge_slice_handler(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: Schema,
    strategy: &str,
    merge_key: &str,
    is_delete_list: bool,
    alias: Option<&mut AliasWindow>,
) -> Result<Vec<Value>> {
    if strategy == MERGE_DIRECTIVE || is_delete_list {
        merge_slice(original, patch, schema, merge_key, is_delete_list, alias)
    } else {
        Ok(patch)
    }
}

/// upstream `mergeSlice`: merges lists of maps by `merge_key`, lists of scalars as a union,
/// and applies `$deleteFromPrimitiveList` lists.
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: Schema,
    merge_key: &str,
    is_delete_list: bool,
    mut alias: Option<&mut AliasWindow>,
) -> Result<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = slice_element_type(&[&original, &patch])?;
    let (original, patch, merged) = if kind != GoType::Map {
        if is_delete_list {
            return Ok(delete_from_slice(original, &patch));
        }
        let mut both = original.clone();
        both.extend(patch.iter().cloned());
        (original, patch, deduplicate_scalars(both)?)
    } else {
        if merge_key.is_empty() {
            return Err(PatchError::Internal(format!(
                "cannot merge lists without merge key for {}",
                schema.kind_name()
            )));
        }
        let (original, patch) =
            merge_slice_with_special_elements(original, patch, merge_key, alias.as_deref_mut())?;
        let merged = merge_slice_without_special_elements(
            original.clone(),
            &patch,
            merge_key,
            schema,
            alias,
        )?;
        (original, patch, merged)
    };
    let (in_patch, server_only) = if merge_key.is_empty() {
        partition_primitives_by_present_in_list(merged, &patch)?
    } else {
        partition_maps_by_present_in_list(merged, &patch, merge_key)?
    };
    normalize_element_order(in_patch, server_only, &patch, &original, merge_key, kind)
}

/// upstream `sliceElementType`: the common Go type of all elements.
fn slice_element_type(slices: &[&[Value]]) -> Result<GoType> {
    let mut prev: Option<GoType> = None;
    for s in slices {
        for v in s.iter() {
            let cur = go_type(v);
            match prev {
                None => {
                    if cur == GoType::Nil {
                        // reflect.TypeOf(nil).Kind() dereferences a nil interface upstream.
                        return Err(PatchError::Internal(
                            "runtime error: invalid memory address or nil pointer dereference"
                                .to_string(),
                        ));
                    }
                    if cur == GoType::Slice {
                        return Err(PatchError::Unprocessable(ERR_NO_LIST_OF_LISTS.to_string()));
                    }
                    prev = Some(cur);
                }
                Some(p) if p != cur => {
                    let all: Vec<Value> = slices.iter().map(|s| Value::Array(s.to_vec())).collect();
                    return Err(PatchError::Internal(format!(
                        "list element types are not identical: {}",
                        go_fmt(&Value::Array(all), false)
                    )));
                }
                Some(_) => {}
            }
        }
    }
    prev.ok_or_else(|| PatchError::Internal("no elements in any of the given slices".to_string()))
}

/// upstream `deleteFromSlice`: `current` minus the scalars of `to_delete`.
fn delete_from_slice(current: Vec<Value>, to_delete: &[Value]) -> Vec<Value> {
    current
        .into_iter()
        .filter(|v| !to_delete.iter().any(|d| go_eq(d, v).unwrap_or(false)))
        .collect()
}

/// upstream `deduplicateScalars` (including its order-scrambling swap-with-last step; order is
/// restored by `normalize_element_order` afterwards).
fn deduplicate_scalars(mut s: Vec<Value>) -> Result<Vec<Value>> {
    if s.is_empty() {
        return Ok(s);
    }
    let mut length = s.len() - 1;
    let mut i = 0;
    while i < length {
        let mut j = i + 1;
        while j <= length {
            if go_eq(&s[i], &s[j])? {
                s[j] = s[length].clone();
                s.truncate(length);
                length -= 1;
                continue; // re-examine position j (upstream's j--)
            }
            j += 1;
        }
        i += 1;
    }
    Ok(s)
}

/// upstream `mergeSliceWithSpecialElements`: applies `$patch: delete|replace` elements.
/// Returns the (possibly reduced or replaced) original and the patch without special elements.
fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    mut alias: Option<&mut AliasWindow>,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for v in patch {
        let Some(directive) = v.get(DIRECTIVE_MARKER) else {
            plain.push(v);
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => match v.get(merge_key) {
                Some(mv) => {
                    original =
                        delete_matching_entries(original, merge_key, mv, alias.as_deref_mut())?
                }
                None => return Err(err_no_merge_key(&v, merge_key)),
            },
            Some(REPLACE_DIRECTIVE) => replace = true,
            Some(MERGE_DIRECTIVE) => {
                return Err(PatchError::Internal(
                    "merging lists cannot yet be specified in the patch".to_string(),
                ))
            }
            _ => return Err(err_bad_patch_type(directive, &v)),
        }
    }
    if replace {
        if let Some(a) = alias {
            a.detached = true;
        }
        Ok((plain, Vec::new()))
    } else {
        Ok((original, plain))
    }
}

fn delete_matching_entries(
    mut original: Vec<Value>,
    merge_key: &str,
    value: &Value,
    mut alias: Option<&mut AliasWindow>,
) -> Result<Vec<Value>> {
    while let Some(i) = find_map_in_slice(&original, merge_key, value)? {
        original.remove(i);
        if let Some(a) = alias.as_deref_mut() {
            a.remove(i);
        }
    }
    Ok(original)
}

/// upstream `findMapInSliceBasedOnKeyValue`: index of the first map whose `key` equals `value`.
fn find_map_in_slice(list: &[Value], key: &str, value: &Value) -> Result<Option<usize>> {
    for (i, v) in list.iter().enumerate() {
        let Some(m) = v.as_object() else {
            return Err(PatchError::Internal(format!(
                "value for key {i} is not a map"
            )));
        };
        if let Some(x) = m.get(key) {
            if go_eq(x, value)? {
                return Ok(Some(i));
            }
        }
    }
    Ok(None)
}

/// upstream `mergeSliceWithoutSpecialElements`: merges each patch map into the original map
/// with the same merge key value, or appends it.
fn merge_slice_without_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    schema: Schema,
    mut alias: Option<&mut AliasWindow>,
) -> Result<Vec<Value>> {
    for v in patch {
        let Some(pm) = v.as_object() else {
            return Err(err_bad_arg_type(GoType::Map, v));
        };
        let mv = pm
            .get(merge_key)
            .ok_or_else(|| err_no_merge_key(v, merge_key))?;
        match find_map_in_slice(&original, merge_key, mv)? {
            Some(i) => {
                let o = match original[i].take() {
                    Value::Object(o) => o,
                    _ => Obj::new(),
                };
                original[i] = Value::Object(merge_map(o, pm.clone(), schema)?);
            }
            None => {
                if let Some(a) = alias.as_deref_mut() {
                    a.append(v);
                }
                original.push(v.clone());
            }
        }
    }
    Ok(original)
}

/// upstream `partitionPrimitivesByPresentInList`: (items present in `by`, the others).
fn partition_primitives_by_present_in_list(
    merged: Vec<Value>,
    by: &[Value],
) -> Result<(Vec<Value>, Vec<Value>)> {
    for v in by {
        go_hashable(v)?;
    }
    let (mut present, mut others) = (Vec::new(), Vec::new());
    for v in merged {
        if go_contains(by, &v)? {
            present.push(v);
        } else {
            others.push(v);
        }
    }
    Ok((present, others))
}

/// upstream `partitionMapsByPresentInList`: by merge key value.
fn partition_maps_by_present_in_list(
    merged: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let (mut present, mut others) = (Vec::new(), Vec::new());
    for v in merged {
        let Some(m) = v.as_object() else {
            return Err(err_bad_arg_type(GoType::Map, &v));
        };
        let mv = m
            .get(merge_key)
            .ok_or_else(|| err_no_merge_key(&v, merge_key))?;
        if find_map_in_slice(by, merge_key, mv)?.is_some() {
            present.push(v);
        } else {
            others.push(v);
        }
    }
    Ok((present, others))
}

/// upstream `normalizeElementOrder`: sorts patch items by `patch_order` and server-only items
/// by `server_order`, then interleaves them.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, kind)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, kind)?;
    merge_sorted_slice(server_only, patch, server_order, merge_key, kind)
}

/// upstream `normalizeSliceOrder`.
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>> {
    let (to_sort, to_delete) = if kind == GoType::Map {
        validate_merge_key_in_list(merge_key, &to_sort)?;
        validate_merge_key_in_list(merge_key, order)?;
        extract_to_delete_items(to_sort)?
    } else {
        (to_sort, Vec::new())
    };
    let mut keyed = Vec::with_capacity(to_sort.len());
    for v in to_sort {
        keyed.push((index(order, &v, merge_key, kind)?, v));
    }
    // The comparator only looks at each element's own index in `order`; elements missing from
    // `order` compare "less" both ways, exactly like upstream's closure.
    go_sort_stable(&mut keyed, |a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => x < y,
        _ => true,
    });
    let mut out: Vec<Value> = keyed.into_iter().map(|(_, v)| v).collect();
    out.extend(to_delete);
    Ok(out)
}

fn validate_merge_key_in_list(merge_key: &str, list: &[Value]) -> Result<()> {
    for v in list {
        let Some(m) = v.as_object() else {
            return Err(err_bad_arg_type(GoType::Map, v));
        };
        if !m.contains_key(merge_key) {
            return Err(err_no_merge_key(v, merge_key));
        }
    }
    Ok(())
}

/// upstream `extractToDeleteItems`: (items to keep, items with `$patch: delete`).
fn extract_to_delete_items(list: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>)> {
    let (mut keep, mut delete) = (Vec::new(), Vec::new());
    for v in list {
        let Some(m) = v.as_object() else {
            return Err(err_bad_arg_type(GoType::Map, &v));
        };
        if m.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE) {
            delete.push(v);
        } else {
            keep.push(v);
        }
    }
    Ok((keep, delete))
}

/// upstream `index`: position of `v` in `list` (by merge key value for maps).
fn index(list: &[Value], v: &Value, merge_key: &str, kind: GoType) -> Result<Option<usize>> {
    const NIL: Value = Value::Null;
    let get = |item: &'_ Value| -> Value {
        if kind == GoType::Map {
            item.as_object()
                .and_then(|m| m.get(merge_key))
                .cloned()
                .unwrap_or(NIL)
        } else {
            item.clone()
        }
    };
    let needle = get(v);
    for (i, x) in list.iter().enumerate() {
        if go_eq(&needle, &get(x))? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// upstream `mergeSortedSlice`: inserts the server-only items (`left`) among the patch items
/// (`right`), keeping both relative orders and using the live order when both are known.
fn merge_sorted_slice(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>> {
    let mut li = Vec::with_capacity(left.len());
    for v in &left {
        li.push(index(server_order, v, merge_key, kind)?);
    }
    let mut ri = Vec::with_capacity(right.len());
    for v in &right {
        ri.push(index(server_order, v, merge_key, kind)?);
    }
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut left, mut right) = (left.into_iter().peekable(), right.into_iter().peekable());
    let (mut i, mut j) = (0, 0);
    loop {
        match (left.peek().is_some(), right.peek().is_some()) {
            (false, false) => break,
            (true, false) => {
                out.extend(left.next());
                i += 1;
            }
            (false, true) => {
                out.extend(right.next());
                j += 1;
            }
            (true, true) => {
                let left_first = matches!((li[i], ri[j]), (Some(a), Some(b)) if a < b);
                if left_first {
                    out.extend(left.next());
                    i += 1;
                } else {
                    out.extend(right.next());
                    j += 1;
                }
            }
        }
    }
    Ok(out)
}

/// Go's `sort.SliceStable` (insertion sort on blocks of 20, then SymMerge), reproduced step for
/// step so that upstream's non-strict comparator yields the same order.
fn go_sort_stable<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(data, a, b, &less);
        a = b;
        b += block;
    }
    insertion_sort(data, a, n, &less);
    while block < n {
        let (mut a, mut b) = (0, 2 * block);
        while b <= n {
            sym_merge(data, a, a + block, b, &less);
            a = b;
            b += 2 * block;
        }
        let m = a + block;
        if m < n {
            sym_merge(data, a, m, n, &less);
        }
        block *= 2;
    }
}

fn insertion_sort<T>(data: &mut [T], a: usize, b: usize, less: &impl Fn(&T, &T) -> bool) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(&data[j], &data[j - 1]) {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sym_merge<T>(data: &mut [T], a: usize, m: usize, b: usize, less: &impl Fn(&T, &T) -> bool) {
    if m - a == 1 {
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(&data[h], &data[a]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        for k in a..i.saturating_sub(1) {
            data.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(&data[m], &data[h]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        let mut k = m;
        while k > i {
            data.swap(k, k - 1);
            k -= 1;
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(&data[p - c], &data[c]) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        rotate(data, start, m, end);
    }
    if a < start && start < mid {
        sym_merge(data, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(data, mid, end, b, less);
    }
}

fn rotate<T>(data: &mut [T], a: usize, m: usize, b: usize) {
    let (mut i, mut j) = (m - a, b - m);
    while i != j {
        if i > j {
            swap_range(data, m - i, m, j);
            i -= j;
        } else {
            swap_range(data, m - i, m + j - i, i);
            j -= i;
        }
    }
    swap_range(data, m - i, m, i);
}

fn swap_range<T>(data: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        data.swap(a + i, b + i);
    }
}

/// Synthetic types for tests, shaped like upstream's `MergeItem` test struct.
#[cfg(test)]
pub(crate) mod test_types {
    use crate::openapi::facts::{Definition, Field, Ty};

    const fn fld(name: &'static str, ty: Ty, strategy: &'static str, key: &'static str) -> Field {
        Field {
            name,
            ty,
            patch_strategy: strategy,
            patch_merge_key: key,
            list_type: "",
            list_map_keys: &[],
            map_type: "",
        }
    }

    const MERGE_ITEM: Ty = Ty::ArrayOfRef("test.MergeItem");

    pub(crate) static DEFS: &[Definition] = &[
        Definition {
            name: "test.MergeItem",
            gvk: &[],
            map_type: "",
            fields: &[
                fld("mergeItemPtr", MERGE_ITEM, "merge", "name"),
                fld("mergingIntList", Ty::ArrayOfScalar, "merge", ""),
                fld("mergingList", MERGE_ITEM, "merge", "name"),
                fld("nonMergingIntList", Ty::ArrayOfScalar, "", ""),
                fld("nonMergingList", MERGE_ITEM, "", ""),
                fld("replacingItem", Ty::Any, "replace", ""),
                fld(
                    "retainKeysMap",
                    Ty::Ref("test.RetainKeysMergeItem"),
                    "retainKeys",
                    "",
                ),
                fld(
                    "retainKeysMergingList",
                    MERGE_ITEM,
                    "merge,retainKeys",
                    "name",
                ),
                fld("simpleMap", Ty::MapOfScalar, "", ""),
            ],
        },
        Definition {
            name: "test.RetainKeysMergeItem",
            gvk: &[],
            map_type: "",
            fields: &[
                fld("mergingIntList", Ty::ArrayOfScalar, "merge", ""),
                fld("mergingList", MERGE_ITEM, "merge", "name"),
                fld("nonMergingList", MERGE_ITEM, "", ""),
                fld("simpleMap", Ty::MapOfScalar, "", ""),
            ],
        },
    ];

    pub(crate) fn merge_item() -> &'static Definition {
        &DEFS[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEP: &str = "io.k8s.api.apps.v1.Deployment";
    const POD: &str = "io.k8s.api.core.v1.Pod";
    const ITEM: &str = "test.MergeItem";

    /// Runs (name, definition, original, patch, expected) cases; `expected` is a JSON document
    /// or `ERR <status> <message>`.
    fn run(cases: &[(&str, &str, &str, &str, &str)]) {
        let mut failures = Vec::new();
        for &(name, def, original, patch, expected) in cases {
            let parse = |s: &str| -> Value {
                serde_json::from_str(s).unwrap_or_else(|e| panic!("{name}: bad JSON {s}: {e}"))
            };
            let (original, patch) = (parse(original), parse(patch));
            let got = if def == ITEM {
                strategic_merge_patch_for_definition(&original, &patch, test_types::merge_item())
            } else {
                strategic_merge_patch(&original, &patch, def)
            };
            let ok = match (expected.strip_prefix("ERR "), &got) {
                (Some(e), Err(err)) => format!("{} {}", err.status_code(), err) == e,
                (None, Ok(v)) => *v == parse(expected),
                _ => false,
            };
            if !ok {
                failures.push(format!(
                    "{name}:\n  expected {expected}\n  got      {got:?}"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn maps_and_scalars() {
        run(&[
            ("set scalar", DEP, r#"{"spec":{"replicas":1}}"#, r#"{"spec":{"replicas":3}}"#, r#"{"spec":{"replicas":3}}"#),
            ("add nested map", DEP, r#"{"metadata":{"name":"a"}}"#, r#"{"metadata":{"labels":{"x":"1"}}}"#, r#"{"metadata":{"name":"a","labels":{"x":"1"}}}"#),
            ("merge labels", DEP, r#"{"metadata":{"labels":{"a":"1","b":"2"}}}"#, r#"{"metadata":{"labels":{"b":"3","c":"4"}}}"#, r#"{"metadata":{"labels":{"a":"1","b":"3","c":"4"}}}"#),
            ("null deletes key", DEP, r#"{"metadata":{"labels":{"a":"1","b":"2"}}}"#, r#"{"metadata":{"labels":{"a":null}}}"#, r#"{"metadata":{"labels":{"b":"2"}}}"#),
            ("null deletes map", DEP, r#"{"metadata":{"labels":{"a":"1"}},"spec":{}}"#, r#"{"metadata":{"labels":null}}"#, r#"{"metadata":{},"spec":{}}"#),
            ("null of absent key", DEP, r#"{"metadata":{}}"#, r#"{"metadata":{"annotations":null}}"#, r#"{"metadata":{}}"#),
            ("nulls inside added map dropped", DEP, r#"{}"#, r#"{"metadata":{"labels":{"a":null,"b":"1"}}}"#, r#"{"metadata":{"labels":{"b":"1"}}}"#),
            ("type change replaces", DEP, r#"{"spec":{"replicas":"x"}}"#, r#"{"spec":{"replicas":{"a":null,"b":1}}}"#, r#"{"spec":{"replicas":{"b":1}}}"#),
            ("map $patch replace", DEP, r#"{"metadata":{"labels":{"a":"1","b":"2"}}}"#, r#"{"metadata":{"labels":{"$patch":"replace","c":"3"}}}"#, r#"{"metadata":{"labels":{"c":"3"}}}"#),
            ("map $patch delete", DEP, r#"{"metadata":{"labels":{"a":"1"}}}"#, r#"{"metadata":{"labels":{"$patch":"delete"}}}"#, r#"{"metadata":{"labels":{}}}"#),
            ("map $patch delete absent", DEP, r#"{"metadata":{}}"#, r#"{"metadata":{"labels":{"$patch":"delete"}}}"#, r#"{"metadata":{}}"#),
            ("top-level $patch replace", DEP, r#"{"kind":"Deployment","spec":{"replicas":1}}"#, r#"{"$patch":"replace","spec":{"paused":true}}"#, r#"{"spec":{"paused":true}}"#),
            ("map $patch unknown", DEP, r#"{"metadata":{"labels":{"a":"1"}}}"#, r#"{"metadata":{"labels":{"$patch":"merge"}}}"#, "ERR 500 unknown patch type: merge in map: map[$patch:merge]"),
            ("map $patch non-string", DEP, r#"{"metadata":{"labels":{"a":"1"}}}"#, r#"{"metadata":{"labels":{"$patch":1}}}"#, "ERR 500 unknown patch type: %!s(int64=1) in map: map[$patch:1]"),
            ("empty patch", DEP, r#"{"spec":{"replicas":1}}"#, r#"{}"#, r#"{"spec":{"replicas":1}}"#),
            ("null patch is empty", DEP, r#"{"spec":{"replicas":1}}"#, r#"null"#, r#"{"spec":{"replicas":1}}"#),
            ("array patch", DEP, r#"{}"#, r#"[]"#, "ERR 400 json: cannot unmarshal array into Go value of type map[string]interface {}"),
            ("string patch", DEP, r#"{}"#, r#""x""#, "ERR 400 json: cannot unmarshal string into Go value of type map[string]interface {}"),
            ("number patch", DEP, r#"{}"#, r#"1"#, "ERR 400 json: cannot unmarshal number into Go value of type map[string]interface {}"),
            ("unknown definition", "com.example.v1.Foo", r#"{}"#, r#"{}"#, "ERR 400 strategic merge patch format is not supported"),
            ("unknown field both maps", DEP, r#"{"spec":{"bogus":{"a":1}}}"#, r#"{"spec":{"bogus":{"b":1}}}"#, r#"ERR 500 unable to find api field in struct DeploymentSpec for the json field "bogus""#),
            ("unknown field added", DEP, r#"{"spec":{}}"#, r#"{"spec":{"bogus":{"b":1}}}"#, r#"{"spec":{"bogus":{"b":1}}}"#),
            ("case-insensitive field", DEP, r#"{"spec":{"Template":{"a":1}}}"#, r#"{"spec":{"Template":{"b":2}}}"#, r#"{"spec":{"Template":{"a":1,"b":2}}}"#),
            ("map of objects nested merge", "io.k8s.api.resource.v1beta2.Device", r#"{"attributes":{"a":{"int":1}}}"#, r#"{"attributes":{"a":{"bool":true}}}"#, "ERR 500 merging an object in json but data type is not struct, instead is: map"),
            ("map of objects add", "io.k8s.api.resource.v1beta2.Device", r#"{"attributes":{"a":{"int":1}}}"#, r#"{"attributes":{"b":{"bool":true}}}"#, r#"{"attributes":{"a":{"int":1},"b":{"bool":true}}}"#),
            ("raw extension scalar merge", "io.k8s.api.apps.v1.ControllerRevision", r#"{"data":{"a":1,"b":2}}"#, r#"{"data":{"a":3}}"#, r#"{"data":{"a":3,"b":2}}"#),
            ("raw extension nested", "io.k8s.api.apps.v1.ControllerRevision", r#"{"data":{"a":{"x":1}}}"#, r#"{"data":{"a":{"y":1}}}"#, r#"ERR 500 unable to find api field in struct RawExtension for the json field "a""#),
            ("pdb selector replace", "io.k8s.api.policy.v1.PodDisruptionBudget", r#"{"spec":{"selector":{"matchLabels":{"a":"1"}}}}"#, r#"{"spec":{"selector":{"matchExpressions":[]}}}"#, r#"{"spec":{"selector":{"matchExpressions":[]}}}"#),
            ("label selector merges", DEP, r#"{"spec":{"selector":{"matchLabels":{"a":"1"}}}}"#, r#"{"spec":{"selector":{"matchLabels":{"b":"2"}}}}"#, r#"{"spec":{"selector":{"matchLabels":{"a":"1","b":"2"}}}}"#),
        ]);
    }

    const PODSPEC2: &str = r#"{"spec":{"containers":[{"name":"a","image":"x","env":[{"name":"E1","value":"1"},{"name":"E2","value":"2"}],"ports":[{"containerPort":80},{"containerPort":443}]},{"name":"b","image":"y"}]}}"#;

    #[test]
    fn lists_merged_by_key() {
        run(&[
            (
                "container merged by name",
                POD,
                PODSPEC2,
                r#"{"spec":{"containers":[{"name":"b","image":"z"}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","image":"x","env":[{"name":"E1","value":"1"},{"name":"E2","value":"2"}],"ports":[{"containerPort":80},{"containerPort":443}]},{"name":"b","image":"z"}]}}"#,
            ),
            (
                "new container goes first",
                POD,
                r#"{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}"#,
                r#"{"spec":{"containers":[{"name":"c"}]}}"#,
                r#"{"spec":{"containers":[{"name":"c"},{"name":"a"},{"name":"b"}]}}"#,
            ),
            (
                "patch order wins",
                POD,
                r#"{"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}}"#,
                r#"{"spec":{"containers":[{"name":"c","image":"i"},{"name":"a"}]}}"#,
                r#"{"spec":{"containers":[{"name":"b"},{"name":"c","image":"i"},{"name":"a"}]}}"#,
            ),
            (
                "env merged by name",
                POD,
                PODSPEC2,
                r#"{"spec":{"containers":[{"name":"a","env":[{"name":"E2","value":"two"},{"name":"E3","value":"3"}]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","image":"x","env":[{"name":"E1","value":"1"},{"name":"E2","value":"two"},{"name":"E3","value":"3"}],"ports":[{"containerPort":80},{"containerPort":443}]},{"name":"b","image":"y"}]}}"#,
            ),
            (
                "env element deleted",
                POD,
                PODSPEC2,
                r#"{"spec":{"containers":[{"name":"a","env":[{"name":"E1","$patch":"delete"}]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","image":"x","env":[{"name":"E2","value":"2"}],"ports":[{"containerPort":80},{"containerPort":443}]},{"name":"b","image":"y"}]}}"#,
            ),
            (
                "port merged by containerPort",
                POD,
                PODSPEC2,
                r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":443,"name":"https"}]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","image":"x","env":[{"name":"E1","value":"1"},{"name":"E2","value":"2"}],"ports":[{"containerPort":80},{"containerPort":443,"name":"https"}]},{"name":"b","image":"y"}]}}"#,
            ),
            (
                "port key type matters",
                POD,
                r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80}]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80.5}]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80.5},{"containerPort":80}]}]}}"#,
            ),
            (
                "container deleted",
                POD,
                r#"{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}"#,
                r#"{"spec":{"containers":[{"name":"b"}]}}"#,
            ),
            (
                "delete absent element",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":[{"name":"zz","$patch":"delete"}]}}"#,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
            ),
            (
                "list $patch replace",
                POD,
                r#"{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}"#,
                r#"{"spec":{"containers":[{"name":"c"},{"$patch":"replace"}]}}"#,
                r#"{"spec":{"containers":[{"name":"c"}]}}"#,
            ),
            (
                "list $patch merge",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":[{"$patch":"merge"}]}}"#,
                "ERR 500 merging lists cannot yet be specified in the patch",
            ),
            (
                "list $patch unknown",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":[{"$patch":"nope","name":"a"}]}}"#,
                "ERR 500 unknown patch type: nope in map: map[$patch:nope name:a]",
            ),
            (
                "delete without merge key",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":[{"$patch":"delete"}]}}"#,
                "ERR 500 map: map[$patch:delete] does not contain declared merge key: name",
            ),
            (
                "missing merge key",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":[{"image":"nginx"}]}}"#,
                "ERR 500 map: map[image:nginx] does not contain declared merge key: name",
            ),
            (
                "mixed element types",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":["x"]}}"#,
                "ERR 500 list element types are not identical: [[map[name:a]] [x]]",
            ),
            (
                "list of lists",
                POD,
                r#"{"spec":{"containers":[["a"]]}}"#,
                r#"{"spec":{"containers":[["b"]]}}"#,
                "ERR 422 lists of lists are not supported",
            ),
            (
                "list added with directives removed",
                POD,
                r#"{"spec":{}}"#,
                r#"{"spec":{"containers":[{"name":"a"},{"name":"b","$patch":"delete"}]}}"#,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
            ),
            (
                "volumes merged by name",
                POD,
                r#"{"spec":{"volumes":[{"name":"v1","emptyDir":{}},{"name":"v2","secret":{"secretName":"s"}}]}}"#,
                r#"{"spec":{"volumes":[{"name":"v2","secret":{"optional":true}}]}}"#,
                r#"{"spec":{"volumes":[{"name":"v1","emptyDir":{}},{"name":"v2","secret":{"secretName":"s","optional":true}}]}}"#,
            ),
            (
                "ownerReferences merged by uid",
                DEP,
                r#"{"metadata":{"ownerReferences":[{"uid":"1","name":"a"},{"uid":"2","name":"b"}]}}"#,
                r#"{"metadata":{"ownerReferences":[{"uid":"2","controller":true},{"uid":"1","$patch":"delete"}]}}"#,
                r#"{"metadata":{"ownerReferences":[{"uid":"2","name":"b","controller":true}]}}"#,
            ),
            (
                "empty patch list keeps",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":[]}}"#,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
            ),
            (
                "null removes list",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":null}}"#,
                r#"{"spec":{}}"#,
            ),
            (
                "null element first",
                POD,
                r#"{"spec":{"containers":[{"name":"a"}]}}"#,
                r#"{"spec":{"containers":[null]}}"#,
                "ERR 500 list element types are not identical: [[map[name:a]] [<nil>]]",
            ),
            (
                "conditions replace (no strategy in v1 status? merge by type)",
                POD,
                r#"{"status":{"conditions":[{"type":"A","status":"True"}]}}"#,
                r#"{"status":{"conditions":[{"type":"B","status":"False"}]}}"#,
                r#"{"status":{"conditions":[{"type":"B","status":"False"},{"type":"A","status":"True"}]}}"#,
            ),
        ]);
    }

    #[test]
    fn lists_replaced_or_primitive() {
        run(&[
            (
                "tolerations replaced",
                POD,
                r#"{"spec":{"tolerations":[{"key":"a"},{"key":"b"}]}}"#,
                r#"{"spec":{"tolerations":[{"key":"c","$patch":"delete"}]}}"#,
                r#"{"spec":{"tolerations":[{"key":"c","$patch":"delete"}]}}"#,
            ),
            (
                "args replaced",
                POD,
                r#"{"spec":{"containers":[{"name":"a","args":["1","2"]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","args":["3"]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","args":["3"]}]}}"#,
            ),
            (
                "finalizers union",
                DEP,
                r#"{"metadata":{"finalizers":["a","b"]}}"#,
                r#"{"metadata":{"finalizers":["c","a"]}}"#,
                r#"{"metadata":{"finalizers":["c","a","b"]}}"#,
            ),
            (
                "finalizers dedup",
                DEP,
                r#"{"metadata":{"finalizers":["a","a","b"]}}"#,
                r#"{"metadata":{"finalizers":["b"]}}"#,
                r#"{"metadata":{"finalizers":["a","b"]}}"#,
            ),
            (
                "finalizers new first",
                DEP,
                r#"{"metadata":{"finalizers":["a","b","c"]}}"#,
                r#"{"metadata":{"finalizers":["d","b"]}}"#,
                r#"{"metadata":{"finalizers":["d","a","b","c"]}}"#,
            ),
            (
                "deleteFromPrimitiveList",
                DEP,
                r#"{"metadata":{"finalizers":["a","b","c"]}}"#,
                r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["b","zz"]}}"#,
                r#"{"metadata":{"finalizers":["a","c"]}}"#,
            ),
            (
                "deleteFromPrimitiveList absent list",
                DEP,
                r#"{"metadata":{}}"#,
                r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}}"#,
                r#"{"metadata":{}}"#,
            ),
            (
                "deleteFromPrimitiveList and add",
                DEP,
                r#"{"metadata":{"finalizers":["a","b"]}}"#,
                r#"{"metadata":{"finalizers":["c"],"$deleteFromPrimitiveList/finalizers":["a"]}}"#,
                r#"{"metadata":{"finalizers":["c","b"]}}"#,
            ),
            (
                "deleteFromPrimitiveList on non-merge list",
                POD,
                r#"{"spec":{"containers":[{"name":"a","args":["1","2"]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","$deleteFromPrimitiveList/args":["1"]}]}}"#,
                r#"{"spec":{"containers":[{"name":"a","args":["2"]}]}}"#,
            ),
            (
                "deleteFromPrimitiveList null deletes list",
                DEP,
                r#"{"metadata":{"finalizers":["a"]}}"#,
                r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":null}}"#,
                r#"{"metadata":{}}"#,
            ),
            (
                "deleteFromPrimitiveList bad key",
                DEP,
                r#"{"metadata":{"finalizers":["a"]}}"#,
                r#"{"metadata":{"$deleteFromPrimitiveList":["a"]}}"#,
                "ERR 400 invalid patch format of primitive list",
            ),
            (
                "deleteFromPrimitiveList wrong prefix",
                DEP,
                r#"{"metadata":{"finalizers":["a"]}}"#,
                r#"{"metadata":{"$deleteFromPrimitiveListX/finalizers":["a"]}}"#,
                "ERR 400 invalid patch format of primitive list",
            ),
            (
                "primitive list mixed types",
                DEP,
                r#"{"metadata":{"finalizers":["a"]}}"#,
                r#"{"metadata":{"finalizers":[1]}}"#,
                "ERR 500 list element types are not identical: [[a] [1]]",
            ),
            (
                "primitive merge list of maps",
                DEP,
                r#"{"metadata":{"finalizers":[{"a":1}]}}"#,
                r#"{"metadata":{"finalizers":[{"b":1}]}}"#,
                "ERR 500 cannot merge lists without merge key for string",
            ),
        ]);
    }

    #[test]
    fn set_element_order() {
        run(&[
            ("reorder only", POD, r#"{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b"},{"name":"c"}]}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"a"},{"name":"b"}]}}"#,
             r#"{"spec":{"containers":[{"name":"c"},{"name":"a","image":"1"},{"name":"b"}]}}"#),
            ("order with patch", POD, r#"{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"c"},{"name":"a"}],"containers":[{"name":"c","image":"n"}]}}"#,
             r#"{"spec":{"containers":[{"name":"b"},{"name":"c","image":"n"},{"name":"a"}]}}"#),
            ("order keeps server-only items", POD, r#"{"spec":{"containers":[{"name":"a"},{"name":"x"},{"name":"b"}]}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}]}}"#,
             r#"{"spec":{"containers":[{"name":"x"},{"name":"b"},{"name":"a"}]}}"#),
            ("order for new list", POD, r#"{"spec":{}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"b"},{"name":"a","$patch":"delete"},{"name":"a"}]}}"#,
             r#"{"spec":{"containers":[{"name":"b"},{"name":"a"}]}}"#),
            ("primitive order", DEP, r#"{"metadata":{"finalizers":["a","b","c"]}}"#,
             r#"{"metadata":{"$setElementOrder/finalizers":["c","b","a"]}}"#, r#"{"metadata":{"finalizers":["c","b","a"]}}"#),
            ("order mismatch", POD, r#"{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"b"},{"name":"a"}]}}"#,
             "ERR 500 The order in patch list:\n[map[name:b] map[name:a]]\n doesn't match $setElementOrder list:\n[map[name:a] map[name:b]]\n"),
            ("order not a list", POD, r#"{"spec":{"containers":[{"name":"a"}]}}"#,
             r#"{"spec":{"$setElementOrder/containers":{"name":"a"}}}"#, "ERR 500 expected a []interface {}, but received a map[string]interface {}"),
            ("order bad key", POD, r#"{"spec":{"containers":[{"name":"a"}]}}"#,
             r#"{"spec":{"$setElementOrder":[{"name":"a"}]}}"#, "ERR 400 invalid patch format of setElementOrder list"),
            ("order missing merge key", POD, r#"{"spec":{"containers":[{"name":"a"}]}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"image":"a"}]}}"#, "ERR 500 map: map[image:a] does not contain declared merge key: name"),
            ("order unknown field", POD, r#"{"spec":{}}"#,
             r#"{"spec":{"$setElementOrder/nope":[{"name":"a"}]}}"#, r#"ERR 500 unable to find api field in struct PodSpec for the json field "nope""#),
            ("order on empty lists", POD, r#"{"spec":{"containers":[]}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"name":"a"}]}}"#, "ERR 500 no elements in any of the given slices"),
            ("order with delete and add (upstream in-place aliasing)", POD, r#"{"spec":{"containers":[{"name":"1"},{"name":"2","image":"b"},{"name":"4","image":"c"}]}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"name":"2"},{"name":"3"}],"containers":[{"name":"3"},{"name":"1","$patch":"delete"}]}}"#,
             r#"{"spec":{"containers":[{"name":"2","image":"b"},{"name":"4","image":"c"},{"name":"3"}]}}"#),
            ("order with delete", POD, r#"{"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}}"#,
             r#"{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"a"}],"containers":[{"name":"b","$patch":"delete"}]}}"#,
             r#"{"spec":{"containers":[{"name":"c"},{"name":"a"}]}}"#),
        ]);
    }

    #[test]
    fn retain_keys() {
        run(&[
            (
                "deployment strategy switch",
                DEP,
                r#"{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}"#,
                r#"{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}"#,
                r#"{"spec":{"strategy":{"type":"Recreate"}}}"#,
            ),
            (
                "strategy without directive merges",
                DEP,
                r#"{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}"#,
                r#"{"spec":{"strategy":{"type":"Recreate"}}}"#,
                r#"{"spec":{"strategy":{"type":"Recreate","rollingUpdate":{"maxSurge":1}}}}"#,
            ),
            (
                "volume source switch",
                POD,
                r#"{"spec":{"volumes":[{"name":"v","emptyDir":{}},{"name":"w","emptyDir":{}}]}}"#,
                r#"{"spec":{"volumes":[{"name":"v","$retainKeys":["name","hostPath"],"hostPath":{"path":"/x"}}]}}"#,
                r#"{"spec":{"volumes":[{"name":"v","hostPath":{"path":"/x"}},{"name":"w","emptyDir":{}}]}}"#,
            ),
            (
                "key in patch not retained",
                DEP,
                r#"{"spec":{"strategy":{"type":"Recreate"}}}"#,
                r#"{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{}}}}"#,
                "ERR 400 invalid patch format of retainKeys",
            ),
            (
                "retainKeys not a list",
                DEP,
                r#"{"spec":{"strategy":{"type":"Recreate"}}}"#,
                r#"{"spec":{"strategy":{"$retainKeys":"type"}}}"#,
                "ERR 400 invalid patch format of retainKeys",
            ),
            (
                "null values ignored by check",
                DEP,
                r#"{"spec":{"strategy":{"type":"Recreate","rollingUpdate":{}}}}"#,
                r#"{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":null}}}"#,
                r#"{"spec":{"strategy":{"type":"Recreate"}}}"#,
            ),
            (
                "retainKeys in new value is kept as is",
                DEP,
                r#"{"spec":{}}"#,
                r#"{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}"#,
                r#"{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}"#,
            ),
        ]);
    }

    #[test]
    fn synthetic_merge_item() {
        run(&[
            ("int list union", ITEM, r#"{"mergingIntList":[1,2]}"#, r#"{"mergingIntList":[2,3]}"#, r#"{"mergingIntList":[1,2,3]}"#),
            ("non-merging list", ITEM, r#"{"nonMergingList":[{"name":"a"}]}"#, r#"{"nonMergingList":[{"name":"b"}]}"#, r#"{"nonMergingList":[{"name":"b"}]}"#),
            ("replace strategy keeps directives", ITEM, r#"{"replacingItem":{"a":1}}"#, r#"{"replacingItem":{"b":{"$patch":"x"}}}"#, r#"{"replacingItem":{"b":{"$patch":"x"}}}"#),
            ("float keys", ITEM, r#"{"mergingList":[{"name":1.5}]}"#, r#"{"mergingList":[{"name":1.5,"value":"v"}]}"#, r#"{"mergingList":[{"name":1.5,"value":"v"}]}"#),
            ("float in message", ITEM, r#"{"mergingList":[{"name":1}]}"#, r#"{"mergingList":[{"value":1234567.0,"other":0.00001}]}"#,
             "ERR 500 map: map[other:1e-05 value:1.234567e+06] does not contain declared merge key: name"),
            ("nested map in list item", ITEM, r#"{"mergingList":[{"name":"a","simpleMap":{"k":"v"}}]}"#, r#"{"mergingList":[{"name":"a","simpleMap":{"k2":"v2"}}]}"#,
             r#"{"mergingList":[{"name":"a","simpleMap":{"k":"v","k2":"v2"}}]}"#),
        ]);
    }

    #[test]
    fn unknown_fields_like_upstream() {
        run(&[
            (
                "nested nulls in added slice dropped",
                ITEM,
                r#"{}"#,
                r#"{"complex_nullable":[{"inner_one":{"key_one":"foo","key_two":null}}]}"#,
                r#"{"complex_nullable":[{"inner_one":{"key_one":"foo"}}]}"#,
            ),
            (
                "nulls in scalar slice kept",
                ITEM,
                r#"{}"#,
                r#"{"complex_nullable":["key1",null,"key2"]}"#,
                r#"{"complex_nullable":["key1",null,"key2"]}"#,
            ),
            (
                "nulls in original preserved",
                ITEM,
                r#"{"complex":{"key":null},"thing":null}"#,
                r#"{"nested":{"value":5}}"#,
                r#"{"complex":{"key":null},"nested":{"value":5},"thing":null}"#,
            ),
            (
                "removed only",
                ITEM,
                r#"{"name":"foo","scalar":true,"complex":{"nested":true},"array":[1,2,3]}"#,
                r#"{"complex":null,"scalar":null}"#,
                r#"{"array":[1,2,3],"name":"foo"}"#,
            ),
            (
                "unknown nested merge",
                ITEM,
                r#"{"complex":{"nested":true}}"#,
                r#"{"complex":{"nested":false}}"#,
                r#"ERR 500 unable to find api field in struct MergeItem for the json field "complex""#,
            ),
        ]);
    }

    #[test]
    fn go_float_formatting() {
        for (f, s) in [
            (1.5, "1.5"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.25, "-2.25"),
            (1e21, "1e+21"),
            (123456.7, "123456.7"),
        ] {
            assert_eq!(go_float(f), s, "{f}");
        }
    }

    #[test]
    fn go_stable_sort_matches_std_for_strict_order() {
        let mut v: Vec<(u32, usize)> = (0..100).map(|i| ((i * 37 % 11) as u32, i)).collect();
        let mut w = v.clone();
        go_sort_stable(&mut v, |a, b| a.0 < b.0);
        w.sort_by_key(|x| x.0);
        assert_eq!(v, w);
    }
}
