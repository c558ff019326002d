//! `metadata.managedFields` bookkeeping for Update operations (create, update, patch).
//!
//! Each write records, for its field manager, an entry `{manager, operation: "Update",
//! apiVersion, time, fieldsType: "FieldsV1", fieldsV1}` where fieldsV1 is the set of fields the
//! manager touched, merged with what it owned before. Updates of built-in objects use
//! structured-merge ownership from `crate::apply` (other managers, appliers included, lose the
//! fields the update changes); creates and custom resources still use the approximation here.

use serde_json::{json, Map, Value};

use super::object::{meta, meta_mut, WriteOptions};
use super::resource::Resource;

/// Metadata fields that identify an object or are system-owned: never in a field set.
const SYSTEM_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// kube's `isResetManagedFields`: an object written with `managedFields: [{}]` (or `[]`)
/// asks for its entries to be dropped; the write's own fields are then recorded afresh.
pub fn is_reset(obj: &Value) -> bool {
    match obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    {
        Some(a) => a.is_empty() || (a.len() == 1 && a[0].as_object().is_some_and(Map::is_empty)),
        None => false,
    }
}

/// Records an Update by `opts.field_manager` on `obj` (changed relative to `old`).
pub fn record_update(obj: &mut Value, opts: &WriteOptions, info: &Resource, old: Option<&Value>) {
    if is_reset(obj) {
        meta_mut(obj).insert("managedFields".into(), json!([]));
    }
    let Some(manager) = opts.field_manager.as_deref().filter(|m| !m.is_empty()) else {
        // Keep the previous entries when no manager is known (unless reset).
        if is_reset(obj) {
            meta_mut(obj).remove("managedFields");
            return;
        }
        if let Some(prev) = old.and_then(|o| meta(o).get("managedFields")).cloned() {
            meta_mut(obj).entry("managedFields").or_insert(prev);
        }
        return;
    };
    let api_version = info.api_version();
    if let (Some(old), Some(schema)) = (
        old,
        crate::apply::typed::Schema::definition(&info.definition),
    ) {
        if record_update_smd(obj, old, opts, &api_version, manager, schema) {
            return;
        }
    }
    let touched = field_set(obj, old, &info.definition);
    let mut entries: Vec<Value> = meta(obj)
        .get("managedFields")
        .or_else(|| old.and_then(|o| meta(o).get("managedFields")))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mine = entries.iter().position(|e| {
        e.get("manager").and_then(Value::as_str) == Some(manager)
            && e.get("operation").and_then(Value::as_str) == Some("Update")
            && e.get("subresource").is_none()
    });
    let mut fields = match mine {
        Some(i) => entries
            .remove(i)
            .get("fieldsV1")
            .cloned()
            .unwrap_or(json!({})),
        None => json!({}),
    };
    merge_sets(&mut fields, &touched);
    if fields.as_object().is_some_and(|m| !m.is_empty()) {
        entries.push(json!({
            "manager": manager,
            "operation": "Update",
            "apiVersion": api_version,
            "time": opts.now,
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        }));
    }
    if entries.is_empty() {
        meta_mut(obj).remove("managedFields");
    } else {
        meta_mut(obj).insert("managedFields".into(), Value::Array(entries));
    }
}

/// An update of a built-in object, as kube's field manager records it (structured-merge-diff's
/// Update: the manager takes over every field it changed or added, other managers lose those
/// and the removed ones; merged into the manager's previous Update entry; time stamped when
/// its entry changed). `false` when the objects do not fit the schema (the approximation
/// below is used then).
fn record_update_smd(
    obj: &mut Value,
    old: &Value,
    opts: &WriteOptions,
    api_version: &str,
    manager: &str,
    schema: crate::apply::typed::Schema<'static>,
) -> bool {
    use crate::apply::{managed_fields, merge};
    // kube's decodeLiveOrNew: `[]` or `[{}]` resets; entries sent that are empty or do not
    // decode give way to the live object's; undecodable live entries are dropped.
    let sent = meta(obj).get("managedFields");
    let reset = is_reset(obj);
    let (managers, mut times) = if reset {
        Default::default()
    } else {
        match managed_fields::decode(sent) {
            Ok((m, t)) if !m.is_empty() => (m, t),
            _ => managed_fields::decode(meta(old).get("managedFields")).unwrap_or_default(),
        }
    };
    let strip = |v: &Value| {
        let mut v = v.clone();
        meta_mut(&mut v).remove("managedFields");
        v
    };
    let (live, new) = (strip(old), strip(obj));
    let Ok((mut managers, changed)) = merge::update(
        &live,
        &new,
        schema,
        api_version,
        managers,
        manager,
        "",
        &crate::apply::fieldpath::Set::new(),
    ) else {
        return false;
    };
    let id = merge::manager_identifier(manager, merge::Operation::Update, api_version, "");
    managed_fields::strip_meta(&mut managers, &id);
    if changed && managers.contains_key(&id) {
        times.insert(id, opts.now.clone());
    }
    times.retain(|k, _| managers.contains_key(k));
    if managers.is_empty() {
        meta_mut(obj).remove("managedFields");
    } else {
        meta_mut(obj).insert(
            "managedFields".into(),
            managed_fields::encode(&managers, &times),
        );
    }
    true
}

/// What a field is, for the field set: a map (its set holds `.` for the map itself, as kube's
/// does), a struct of the named definition, or anything else.
enum Shape {
    Map,
    Struct(Option<&'static str>),
    Other,
}

fn shape_of(def: Option<&str>, field: &str) -> Shape {
    use crate::openapi::facts::{self, Ty};
    let Some(d) = def.and_then(facts::definition) else {
        // Without a schema (custom resources): objects are structs.
        return Shape::Struct(None);
    };
    match facts::field(d, field).map(|f| f.ty) {
        Some(Ty::MapOfScalar | Ty::MapOfRef(_)) => Shape::Map,
        Some(Ty::Ref(inner)) => Shape::Struct(Some(inner)),
        Some(_) => Shape::Other,
        // scalars are not listed
        None => Shape::Other,
    }
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The fields of `new` that differ from `old` (all of them without `old`), as a FieldsV1 set
/// (`definition`: the kind's OpenAPI definition, for which fields are maps).
fn field_set(new: &Value, old: Option<&Value>, definition: &str) -> Value {
    let mut out = Map::new();
    let Some(n) = new.as_object() else {
        return json!({});
    };
    for (k, v) in n {
        if k == "apiVersion" || k == "kind" || k == "status" {
            continue;
        }
        let o = old.and_then(|o| o.get(k));
        if k == "metadata" {
            let mut m = Map::new();
            if let Some(nm) = v.as_object() {
                for (mk, mv) in nm {
                    if SYSTEM_META.contains(&mk.as_str()) {
                        continue;
                    }
                    let om = o.and_then(|o| o.get(mk));
                    if om == Some(mv) {
                        continue;
                    }
                    m.insert(
                        format!("f:{mk}"),
                        sub_set(mv, om, shape_of(Some(OBJECT_META), mk)),
                    );
                }
            }
            if !m.is_empty() {
                out.insert("f:metadata".into(), Value::Object(m));
            }
            continue;
        }
        if o == Some(v) {
            continue;
        }
        let def = crate::openapi::facts::definition(definition).map(|_| definition);
        out.insert(format!("f:{k}"), sub_set(v, o, shape_of(def, k)));
    }
    Value::Object(out)
}

fn sub_set(v: &Value, old: Option<&Value>, shape: Shape) -> Value {
    let (map, def) = match shape {
        Shape::Map => (true, None),
        Shape::Struct(d) => (false, d),
        Shape::Other => return json!({}),
    };
    match v.as_object() {
        Some(m) if !m.is_empty() => {
            let mut out = Map::new();
            if map {
                out.insert(".".into(), json!({}));
            }
            for (k, cv) in m {
                let ov = old.and_then(|o| o.get(k));
                if ov == Some(cv) {
                    continue;
                }
                let child = if map { Shape::Other } else { shape_of(def, k) };
                out.insert(format!("f:{k}"), sub_set(cv, ov, child));
            }
            Value::Object(out)
        }
        _ => json!({}),
    }
}

fn merge_sets(into: &mut Value, from: &Value) {
    let (Some(a), Some(b)) = (into.as_object_mut(), from.as_object()) else {
        return;
    };
    for (k, v) in b {
        match a.get_mut(k) {
            Some(existing) => merge_sets(existing, v),
            None => {
                a.insert(k.clone(), v.clone());
            }
        }
    }
}
