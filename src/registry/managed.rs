//! `metadata.managedFields` bookkeeping for Update operations (create, update, patch), run by
//! the store on the object as sent, before the strategy and admission change it (where kube's
//! handlers run their field manager).
//!
//! Kinds with a schema go through [`crate::apply::manager::FieldManager`]: the
//! object, defaulted and in its type's JSON form, is compared with the stored one (or, for a
//! create, with the kind's empty object) and the manager takes every field it set or changed.
//! Custom resources go through it too, with their version's structural schema.
//! [`field_manager`] builds that manager for an endpoint (the resource or a subresource, the
//! fields its strategy resets, the empty object). Kinds without either schema keep the
//! approximation below.

use serde_json::{json, Map, Value};

use super::object::{meta, meta_mut, Part, WriteOptions};
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

use crate::apply::fieldpath::{PathElement, Set};
pub use crate::apply::manager::is_reset;
use crate::apply::manager::FieldManager;
use crate::apply::merge::Versions;
use crate::apply::typed::Schema;

/// The subresource name a write of `part` is recorded under (`None`: not a client's write
/// of the object, entries kept as they are).
fn subresource_of(part: Part) -> Option<&'static str> {
    match part {
        Part::Main => Some(""),
        Part::Status => Some("status"),
        Part::Finalize => Some("finalize"),
        Part::Approval => Some("approval"),
        Part::Sub(name) => Some(name),
        Part::Whole => None,
    }
}

/// The field manager of `info`'s endpoint `part`: the schema (a built-in's OpenAPI definition,
/// or a custom resource version's structural schema), the fields the endpoint resets (the
/// strategy's [`reset_fields`](super::strategy::Strategy::reset_fields)) and the kind's empty
/// object. `None` for a kind without a schema or a write that is not a client's.
pub fn field_manager(info: &Resource, part: Part) -> Option<FieldManager<'_>> {
    let subresource = subresource_of(part)?;
    let (schema, zero, versions) = match info.strategy.structural_schema() {
        // kube's unstructured creator: an empty object of the kind.
        Some(node) => (
            Schema::CustomRoot(node),
            json!({"apiVersion": info.api_version(), "kind": info.kind}),
            Some(info as &dyn Versions<'_>),
        ),
        None => {
            let mut zero = json!({});
            super::encoding::canonicalize_served(info, &mut zero);
            (Schema::definition(&info.definition)?, zero, None)
        }
    };
    let mut reset = Set::new();
    for path in info.strategy.reset_fields(part, info.has_status) {
        let path: Vec<PathElement> = path.iter().map(|f| PathElement::field(f)).collect();
        reset.insert(&path);
    }
    Some(FieldManager {
        schema,
        api_version: info.api_version(),
        subresource: subresource.to_string(),
        reset,
        versions,
        zero,
    })
}

/// A custom resource's versions, for entries recorded at another version than a write's
/// (kube's CRD versioned converter): that version's schema, and the definition's conversion.
impl<'a> Versions<'a> for Resource {
    fn schema(&'a self, api_version: &str) -> Option<Schema<'a>> {
        let (group, version) = api_version.rsplit_once('/')?;
        if group != self.group {
            return None;
        }
        self.strategy
            .version_schema(version)
            .map(Schema::CustomRoot)
    }

    fn convert(&self, obj: &Value, api_version: &str) -> Result<Value, String> {
        let mut out = obj.clone();
        self.strategy
            .convert_to(&mut out, api_version)
            .map_err(|e| e.to_string())?;
        Ok(out)
    }
}

/// Records an Update by `opts.field_manager` on `obj`, written to `part` of the object
/// `old` (`None`: a create), as kube's field manager does.
pub fn record_update(
    obj: &mut Value,
    opts: &WriteOptions,
    info: &Resource,
    part: Part,
    old: Option<&Value>,
) {
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
    if let Some(fm) = field_manager(info, part) {
        // Compared as kube compares the decoded Go objects: defaulted, both in the type's JSON
        // form (the strategy defaults the object itself later, in PrepareFor*).
        let mut new = obj.clone();
        let mut live = old.cloned();
        // The store holds storage-version objects; kube's field manager compares them at the
        // request's version (custom resources: converted, as its versioned converter does).
        if info.converts() && info.strategy.structural_schema().is_some() {
            let api_version = info.api_version();
            for o in std::iter::once(&mut new).chain(live.as_mut()) {
                let mut c = o.clone();
                if info.strategy.convert_to(&mut c, &api_version).is_ok() {
                    *o = c;
                }
            }
        }
        info.strategy.default(&mut new);
        super::encoding::canonicalize(info, &mut new);
        fm.update(
            live.as_ref().unwrap_or(&fm.zero),
            &mut new,
            manager,
            &opts.now,
        );
        match meta(&new).get("managedFields").cloned() {
            Some(e) => meta_mut(obj).insert("managedFields".into(), e),
            None => meta_mut(obj).remove("managedFields"),
        };
        return;
    }
    if is_reset(obj) {
        meta_mut(obj).insert("managedFields".into(), json!([]));
    }
    let api_version = info.api_version();
    let touched = field_set(obj, old, &info.definition);
    let mut entries: Vec<Value> = meta(obj)
        .get("managedFields")
        .filter(|_| !is_reset(obj))
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
