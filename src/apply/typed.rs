//! Schema-driven views of objects for server-side apply, as structured-merge-diff's `typed`
//! package (ToFieldSet, Compare, RemoveItems, EnsureNamedFieldsAreMembers) applies them.
//!
//! [`Schema`] is one view over the two schema sources: the built-in types' facts
//! ([`crate::openapi::facts`], converted the way kube-openapi's `schemaconv` converts kube's
//! OpenAPI: lists atomic unless `x-kubernetes-list-type` says otherwise or the patch strategy is
//! `merge` (then a map-list on the merge key, or a set without one); `additionalProperties`
//! maps granular; structs granular unless `x-kubernetes-map-type: atomic`; RawExtension and
//! opaque JSON atomic) and custom resources' structural schema nodes
//! ([`crate::registry::custom::node::Node`], read as kube-openapi's `schemaconv` reads the
//! OpenAPI apiextensions publishes for a version: the root and every
//! `x-kubernetes-embedded-resource` get `apiVersion`, `kind` and an ObjectMeta `metadata`;
//! `x-kubernetes-list-type` (atomic without one), `x-kubernetes-map-type`,
//! `x-kubernetes-int-or-string` leaves; below an `x-kubernetes-preserve-unknown-fields` and in
//! schema-less parts, undeclared fields are "deduced": objects granular maps, lists atomic;
//! elsewhere an undeclared field is SMD's "field not declared in schema"). [`Schema::shape`]
//! answers what a node is: a leaf, a struct, a map (granular or atomic) or a list (atomic, set or
//! map with keys).
//!
//! Field sets follow SMD exactly: scalars and atomic lists/maps are leaves (members); struct
//! fields are members only when their value is null or an empty object; map entries are always
//! members; list items are members named `k:{...}` (map-lists) or `v:...` (sets). Pure: no I/O.

use serde_json::{Map, Value};

use super::fieldpath::{path_string, values_equal, Path, PathElement, Set};
use crate::openapi::facts::{self, Definition, Field, Ty};
use crate::registry::custom::node::{Additional, Node};

/// What a list's items are to each other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListRel {
    /// Replaced as a whole.
    Atomic,
    /// Items identified by their (scalar) value.
    Set,
    /// Items identified by these key fields.
    Map(Vec<String>),
}

/// A schema position: where a value sits in its type.
#[derive(Debug, Clone, Copy)]
pub enum Schema<'a> {
    /// A built-in struct definition.
    Def(&'static Definition),
    /// A built-in struct definition referenced by a field marked `x-kubernetes-map-type: atomic`.
    AtomicDef(&'static Definition),
    /// A field of a built-in struct (its shape comes from its type and extensions).
    Field(&'static Field),
    /// A scalar (or an unlisted built-in field).
    Scalar,
    /// Opaque JSON, atomic (RawExtension, `JSON`).
    Untyped,
    /// Schema-less: objects are granular maps of deduced values, lists atomic.
    Deduced,
    /// A custom resource schema node.
    Node(&'a Node),
    /// A custom resource schema node at or below an `x-kubernetes-preserve-unknown-fields`
    /// (kube-openapi's `schemaconv` passes the flag down to inlined descendants: their
    /// undeclared fields are deduced).
    PreservedNode(&'a Node),
    /// The root of a custom resource: the node, with `metadata` as ObjectMeta.
    CustomRoot(&'a Node),
    /// A field a custom resource's struct does not declare, where unknown fields are not
    /// deduced: SMD's "field not declared in schema" when an object sets it.
    Undeclared,
}

/// What a schema position is.
#[derive(Debug, Clone)]
pub enum Shape<'a> {
    /// Scalar or atomic opaque value: one member.
    Leaf,
    /// A struct: fields by name (declared ones are "named").
    Struct { atomic: bool, schema: Schema<'a> },
    /// A map with arbitrary keys, all of the element schema.
    Map { atomic: bool, elem: Schema<'a> },
    /// A list.
    List { rel: ListRel, elem: Schema<'a> },
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

fn list_rel(list_type: &str, keys: &[&str], strategy: &str, merge_key: &str) -> ListRel {
    match list_type {
        "atomic" => ListRel::Atomic,
        "set" => ListRel::Set,
        "map" => ListRel::Map(keys.iter().map(|k| k.to_string()).collect()),
        "" if strategy == "merge" || strategy == "merge,retainKeys" => {
            if merge_key.is_empty() {
                ListRel::Set
            } else {
                ListRel::Map(vec![merge_key.to_string()])
            }
        }
        _ => ListRel::Atomic,
    }
}

fn def_schema(name: &str) -> Schema<'static> {
    match facts::definition(name) {
        Some(d) if d.fields.is_empty() && is_string_encoded(name) => Schema::Scalar,
        Some(d) => Schema::Def(d),
        None => Schema::Untyped,
    }
}

fn is_string_encoded(name: &str) -> bool {
    matches!(
        name.rsplit('.').next(),
        Some("Quantity" | "Time" | "MicroTime" | "IntOrString" | "Duration")
    )
}

impl<'a> Schema<'a> {
    /// The schema of a built-in kind, by group/version/kind (core group "").
    pub fn builtin(group: &str, version: &str, kind: &str) -> Option<Schema<'static>> {
        facts::definition_for_gvk(group, version, kind).map(Schema::Def)
    }

    /// The schema of a built-in definition by its OpenAPI name.
    pub fn definition(name: &str) -> Option<Schema<'static>> {
        facts::definition(name).map(Schema::Def)
    }

    /// What this position is, given the value found there (needed for deduced positions).
    pub fn shape(&self, v: Option<&Value>) -> Shape<'a> {
        match *self {
            Schema::Def(d) => Shape::Struct {
                atomic: d.map_type == "atomic",
                schema: *self,
            },
            Schema::AtomicDef(_) => Shape::Struct {
                atomic: true,
                schema: *self,
            },
            Schema::Scalar | Schema::Untyped => Shape::Leaf,
            Schema::Field(f) => {
                let rel = || {
                    list_rel(
                        f.list_type,
                        f.list_map_keys,
                        f.patch_strategy,
                        f.patch_merge_key,
                    )
                };
                let map_atomic = f.map_type == "atomic";
                match f.ty {
                    Ty::Scalar | Ty::Any => Shape::Leaf,
                    Ty::Ref(r) => match def_schema(r) {
                        Schema::Def(d) if map_atomic => Schema::AtomicDef(d).shape(v),
                        s => s.shape(v),
                    },
                    Ty::ArrayOfScalar => Shape::List {
                        rel: rel(),
                        elem: Schema::Scalar,
                    },
                    Ty::ArrayOfRef(r) => Shape::List {
                        rel: rel(),
                        elem: def_schema(r),
                    },
                    Ty::MapOfScalar => Shape::Map {
                        atomic: map_atomic,
                        elem: Schema::Scalar,
                    },
                    Ty::MapOfRef(r) => Shape::Map {
                        atomic: map_atomic,
                        elem: def_schema(r),
                    },
                }
            }
            // SMD deduces no type for null (or absent) values; its handlers try the map
            // first, so a deduced null merges and compares as an empty map.
            Schema::Deduced => match v {
                Some(Value::Object(_) | Value::Null) | None => Shape::Map {
                    atomic: false,
                    elem: Schema::Deduced,
                },
                Some(Value::Array(_)) => Shape::List {
                    rel: ListRel::Atomic,
                    elem: Schema::Deduced,
                },
                _ => Shape::Leaf,
            },
            Schema::CustomRoot(_) => Shape::Struct {
                atomic: false,
                schema: *self,
            },
            Schema::Node(n) | Schema::PreservedNode(n) => node_shape(n, v, self.preserving()),
            Schema::Undeclared => Shape::Leaf,
        }
    }

    /// The schema of field `name` of a struct or of an entry of a map at this position.
    pub fn field(&self, name: &str) -> Schema<'a> {
        match *self {
            Schema::Def(d) | Schema::AtomicDef(d) => match facts::field(d, name) {
                Some(f) => Schema::Field(f),
                None => Schema::Scalar,
            },
            // apiextensions' OpenAPI builder gives the root (and every embedded resource)
            // `apiVersion`, `kind` and an ObjectMeta `metadata`.
            Schema::CustomRoot(n) => match name {
                "metadata" => def_schema(OBJECT_META),
                "apiVersion" | "kind" => Schema::Scalar,
                // A version without a schema: everything else is deduced.
                _ if n.types.is_empty() && n.properties.is_empty() => Schema::Deduced,
                _ => node_field(n, name, n.preserve_unknown, true),
            },
            Schema::Node(n) | Schema::PreservedNode(n) => {
                node_field(n, name, self.preserving(), false)
            }
            Schema::Deduced => Schema::Deduced,
            Schema::Undeclared => Schema::Untyped,
            Schema::Field(_) => match self.shape(None) {
                Shape::Map { elem, .. } => elem,
                Shape::Struct { schema, .. } => schema.field(name),
                _ => Schema::Scalar,
            },
            Schema::Scalar | Schema::Untyped => Schema::Untyped,
        }
    }

    /// Whether `name` is a declared struct field here (SMD's "named field").
    pub fn is_named_field(&self, name: &str) -> bool {
        match *self {
            Schema::Def(d) | Schema::AtomicDef(d) => facts::field(d, name).is_some(),
            Schema::CustomRoot(n) => {
                matches!(name, "metadata" | "apiVersion" | "kind")
                    || n.properties.contains_key(name)
            }
            Schema::Node(n) | Schema::PreservedNode(n) => {
                n.properties.contains_key(name)
                    || (n.embedded && matches!(name, "metadata" | "apiVersion" | "kind"))
            }
            Schema::Field(_) => match self.shape(None) {
                Shape::Struct { schema, .. } => schema.is_named_field(name),
                _ => false,
            },
            _ => false,
        }
    }

    /// The schema of a child element: a field/map entry, or a list item.
    pub fn child(&self, pe: &PathElement, v: Option<&Value>) -> Schema<'a> {
        match pe {
            PathElement::Field(n) => self.field(n),
            _ => match self.shape(v) {
                Shape::List { elem, .. } => elem,
                _ => Schema::Untyped,
            },
        }
    }

    /// The default of key field `key` of this list's items (SMD's `getAssociativeKeyDefault`).
    fn key_default(&self, item: Schema<'a>, key: &str) -> Option<Value> {
        match item {
            Schema::Node(n) | Schema::PreservedNode(n) => {
                n.properties.get(key).and_then(|p| p.default.clone())
            }
            // kube's OpenAPI defaults the `protocol` key of ports to TCP.
            Schema::Def(d)
                if key == "protocol"
                    && matches!(
                        d.name,
                        "io.k8s.api.core.v1.ContainerPort"
                            | "io.k8s.api.core.v1.ServicePort"
                            | "io.k8s.api.core.v1.EndpointPort"
                            | "io.k8s.api.discovery.v1.EndpointPort"
                    ) =>
            {
                Some(Value::String("TCP".into()))
            }
            _ => {
                let _ = self;
                None
            }
        }
    }
}

impl<'a> Schema<'a> {
    /// Whether undeclared fields below this custom resource node are deduced (an ancestor or
    /// the node itself preserves unknown fields).
    fn preserving(&self) -> bool {
        match *self {
            Schema::PreservedNode(_) => true,
            Schema::Node(n) | Schema::CustomRoot(n) => n.preserve_unknown,
            _ => false,
        }
    }
}

/// A child node of a custom resource schema, `preserving` when below a preserve-unknown node.
fn node_child(n: &Node, preserving: bool) -> Schema<'_> {
    if preserving || n.preserve_unknown {
        Schema::PreservedNode(n)
    } else {
        Schema::Node(n)
    }
}

/// The schema of field `name` of an object node (kube-openapi's `parseObject` over the node as
/// apiextensions' builder publishes it): a declared property; `apiVersion`, `kind` and
/// `metadata` of an embedded resource (or the root); an `additionalProperties` entry; else
/// deduced where unknown fields are preserved or the object declares no properties, and
/// undeclared otherwise.
fn node_field<'a>(n: &'a Node, name: &str, preserving: bool, root: bool) -> Schema<'a> {
    let preserving = preserving || n.preserve_unknown;
    if let Some(p) = n.properties.get(name) {
        return node_child(p, preserving);
    }
    if n.embedded || root {
        match name {
            "metadata" => return def_schema(OBJECT_META),
            "apiVersion" | "kind" => return Schema::Scalar,
            _ => {}
        }
    }
    match &n.additional {
        Some(Additional::Schema(s)) => node_child(s, preserving),
        Some(Additional::Bool(true)) => Schema::Deduced,
        Some(Additional::Bool(false)) => Schema::Undeclared,
        None if preserving || (n.properties.is_empty() && !n.embedded && !root) => Schema::Deduced,
        None => Schema::Undeclared,
    }
}

/// What a custom resource node is (kube-openapi's `parseSchema`): objects are structs when
/// they declare properties (or are embedded resources, which get `apiVersion`, `kind` and
/// `metadata`), maps otherwise, atomic with `x-kubernetes-map-type: atomic`; arrays are lists
/// of their `x-kubernetes-list-type` (atomic without one); scalars (and
/// `x-kubernetes-int-or-string`) leaves; untyped nodes (`x-kubernetes-preserve-unknown-fields`
/// without a type) are deduced from the value.
fn node_shape<'a>(n: &'a Node, v: Option<&Value>, preserving: bool) -> Shape<'a> {
    let preserving = preserving || n.preserve_unknown;
    let ty = n.types.first().copied().unwrap_or("");
    let atomic = n.map_type == "atomic";
    let this = node_child(n, preserving);
    match ty {
        "object" | "" if !n.properties.is_empty() || n.embedded => Shape::Struct {
            atomic,
            schema: this,
        },
        "object" => match &n.additional {
            Some(Additional::Schema(s)) => Shape::Map {
                atomic,
                elem: node_child(s, preserving),
            },
            _ => Shape::Map {
                atomic,
                elem: Schema::Deduced,
            },
        },
        "array" => {
            let keys: Vec<&str> = n.list_map_keys.iter().map(String::as_str).collect();
            let elem = n
                .items
                .as_deref()
                .map(|i| node_child(i, preserving))
                .unwrap_or(Schema::Untyped);
            Shape::List {
                rel: list_rel(&n.list_type, &keys, "", ""),
                elem,
            }
        }
        "" => match v {
            Some(Value::Object(_)) => Shape::Map {
                atomic,
                elem: Schema::Deduced,
            },
            Some(Value::Array(_)) => {
                let keys: Vec<&str> = n.list_map_keys.iter().map(String::as_str).collect();
                Shape::List {
                    rel: list_rel(&n.list_type, &keys, "", ""),
                    elem: Schema::Deduced,
                }
            }
            _ => Shape::Leaf,
        },
        _ => Shape::Leaf,
    }
}

/// An object does not fit its schema for field-set purposes (SMD's validation errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct TypeError {
    /// Where, as SMD prints paths (`.spec.containers[name="a"]`), or `element N` for an
    /// item without a valid key.
    pub path: String,
    pub message: String,
}

/// The path element of a list item (SMD's `listItemToPathElement`).
pub fn list_item_element(
    list_schema: &Schema<'_>,
    rel: &ListRel,
    item_schema: Schema<'_>,
    item: &Value,
) -> Result<PathElement, String> {
    match rel {
        ListRel::Atomic => Err("invalid indexing of non-associative list".into()),
        ListRel::Map(keys) => {
            let m = match item {
                Value::Null => {
                    return Err("associative list with keys may not have a null element".into())
                }
                Value::Object(m) => m,
                _ => return Err("associative list with keys may not have non-map elements".into()),
            };
            let mut fields = Vec::with_capacity(keys.len());
            for k in keys {
                match m.get(k) {
                    Some(v) => fields.push((k.clone(), v.clone())),
                    None => match list_schema.key_default(item_schema, k) {
                        Some(d) => fields.push((k.clone(), d)),
                        None => {
                            return Err(format!(
                            "associative list with keys has an element that omits key field {:?} (and doesn't have default value)",
                            k
                        ))
                        }
                    },
                }
            }
            Ok(PathElement::key(fields))
        }
        ListRel::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(PathElement::Value(v.clone())),
        },
    }
}

/// The set of fields an object sets, as SMD's `ToFieldSet`.
pub fn to_field_set(obj: &Value, schema: Schema<'_>) -> Result<Set, TypeError> {
    let mut out = Set::new();
    let mut path = Path::new();
    fs_walk(obj, schema, &mut path, &mut out)?;
    Ok(out)
}

fn type_error(path: &Path, message: String) -> TypeError {
    TypeError {
        path: path_string(path),
        message,
    }
}

fn fs_walk(v: &Value, schema: Schema<'_>, path: &mut Path, out: &mut Set) -> Result<(), TypeError> {
    match schema.shape(Some(v)) {
        Shape::Leaf => out.insert(path),
        Shape::List { rel, elem } => {
            if rel == ListRel::Atomic {
                out.insert(path);
                return Ok(());
            }
            let Value::Array(items) = v else {
                if !v.is_null() {
                    out.insert(path);
                }
                return Ok(());
            };
            // SMD v4.6: a duplicated item is owned by its key alone, never its fields.
            let mut pes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let pe = list_item_element(&schema, &rel, elem, item)
                    .map_err(|m| type_error(path, format!("element {i}: {m}")))?;
                pes.push(pe);
            }
            let duplicated = |pe: &PathElement| pes.iter().filter(|p| *p == pe).count() > 1;
            for (pe, item) in pes.iter().zip(items) {
                path.push(pe.clone());
                if !duplicated(pe) {
                    fs_walk(item, elem, path, out)?;
                }
                out.insert(path);
                path.pop();
            }
        }
        Shape::Map { atomic, .. } | Shape::Struct { atomic, .. } => {
            if atomic {
                out.insert(path);
                return Ok(());
            }
            let Value::Object(m) = v else {
                if !v.is_null() {
                    out.insert(path);
                }
                return Ok(());
            };
            let is_struct = matches!(schema.shape(Some(v)), Shape::Struct { .. });
            for (k, cv) in m {
                let cs = schema.field(k);
                path.push(PathElement::Field(k.clone()));
                if matches!(cs, Schema::Undeclared) {
                    return Err(type_error(path, "field not declared in schema".into()));
                }
                fs_walk(cv, cs, path, out)?;
                let empty = cv.is_null() || cv.as_object().is_some_and(Map::is_empty);
                if empty || !is_struct || !schema.is_named_field(k) {
                    out.insert(path);
                }
                path.pop();
            }
        }
    }
    Ok(())
}

/// `set` with every declared struct field that has children also made a member (SMD's
/// `EnsureNamedFieldsAreMembers`), so that removal treats such fields as owned.
pub fn ensure_named_fields_are_members(set: &Set, schema: Schema<'_>) -> Set {
    let mut out = Set::new();
    for m in set.members() {
        out.insert_member(m.clone());
    }
    for (pe, child) in set.children() {
        let cs = match pe {
            PathElement::Field(n) => {
                if matches!(schema.shape(None), Shape::Struct { .. }) && schema.is_named_field(n) {
                    out.insert_member(pe.clone());
                }
                schema.field(n)
            }
            PathElement::Key(_) => match schema.shape(None) {
                Shape::List { elem, .. } => elem,
                _ => Schema::Untyped,
            },
            _ => Schema::Untyped,
        };
        out.insert_child(pe.clone(), ensure_named_fields_are_members(child, cs));
    }
    out
}

/// SMD's `ReconcileFieldSetWithSchema`: a set recorded before a struct, map or list became
/// atomic owns the atomic value itself instead of its former children (atomic to granular is
/// left as it is, as SMD leaves it). `None` when nothing changes. Schema-less (deduced) maps
/// are not reconciled.
pub fn reconcile_with_schema(set: &Set, schema: Schema<'_>) -> Option<Set> {
    let (mut remove, mut add) = (Set::new(), Set::new());
    let mut path = Path::new();
    reconcile_walk(Some(set), false, schema, &mut path, &mut remove, &mut add);
    if remove.is_empty() && add.is_empty() {
        return None;
    }
    Some(set.recursive_difference(&remove).union(&add))
}

/// `at`: the sub-set at `path`, if any; `member_only`: whether `path` is a member with no
/// children (already owned as a whole).
fn reconcile_walk(
    at: Option<&Set>,
    member_only: bool,
    schema: Schema<'_>,
    path: &mut Path,
    remove: &mut Set,
    add: &mut Set,
) {
    match schema.shape(None) {
        Shape::Leaf => {}
        Shape::Map {
            elem: Schema::Deduced,
            ..
        } => {}
        Shape::Map { atomic, .. } | Shape::Struct { atomic, .. } => {
            if !member_only && atomic {
                if at.is_some_and(|s| !s.is_empty()) {
                    remove.insert(path);
                    add.insert(path);
                }
                return;
            }
            if let Some(set) = at {
                reconcile_children(set, schema, path, remove, add);
            }
        }
        Shape::List { rel, .. } => {
            if !member_only && rel == ListRel::Atomic {
                remove.insert(path);
                add.insert(path);
                return;
            }
            if let Some(set) = at {
                reconcile_children(set, schema, path, remove, add);
            }
        }
    }
}

/// The children of a reconciled set: sub-sets that are not members first, then members (with
/// their sub-set when they have one), as SMD visits them.
fn reconcile_children(
    set: &Set,
    schema: Schema<'_>,
    path: &mut Path,
    remove: &mut Set,
    add: &mut Set,
) {
    for (pe, sub) in set.children() {
        if !set.has_member(pe) {
            path.push(pe.clone());
            reconcile_walk(Some(sub), false, schema.child(pe, None), path, remove, add);
            path.pop();
        }
    }
    for pe in set.members() {
        let sub = set.child(pe);
        path.push(pe.clone());
        reconcile_walk(
            sub,
            sub.is_none(),
            schema.child(pe, None),
            path,
            remove,
            add,
        );
        path.pop();
    }
}

/// What changed between two objects (SMD's `Comparison`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    pub removed: Set,
    pub modified: Set,
    pub added: Set,
}

impl Comparison {
    /// No differences.
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }
}

/// Compares `lhs` (before) with `rhs` (after), as SMD's `TypedValue.Compare`.
pub fn compare(lhs: &Value, rhs: &Value, schema: Schema<'_>) -> Result<Comparison, TypeError> {
    let mut c = Comparison::default();
    let mut path = Path::new();
    cmp_walk(Some(lhs), Some(rhs), schema, &mut path, &mut c)?;
    Ok(c)
}

fn cmp_leaf(lhs: Option<&Value>, rhs: Option<&Value>, path: &Path, c: &mut Comparison) {
    match (lhs, rhs) {
        (None, None) => {}
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(a), Some(b)) => {
            if !json_equal(a, b) {
                c.modified.insert(path)
            }
        }
    }
}

/// Deep equality with numbers compared numerically (SMD's `value.Equals`).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        _ => values_equal(a, b),
    }
}

fn cmp_walk(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    schema: Schema<'_>,
    path: &mut Path,
    c: &mut Comparison,
) -> Result<(), TypeError> {
    let shape = schema.shape(rhs.or(lhs));
    let mut in_leaf = false;
    match shape {
        Shape::Leaf => {
            cmp_leaf(lhs, rhs, path, c);
            in_leaf = true;
        }
        Shape::List { rel, elem } => {
            let la = lhs.and_then(Value::as_array);
            let ra = rhs.and_then(Value::as_array);
            let empty = la.is_none_or(Vec::is_empty) && ra.is_none_or(Vec::is_empty);
            if rel == ListRel::Atomic
                || empty
                || (la.is_none() && lhs.is_some_and(|v| !v.is_null()))
                || (ra.is_none() && rhs.is_some_and(|v| !v.is_null()))
            {
                cmp_leaf(lhs, rhs, path, c);
                in_leaf = true;
            } else {
                let index =
                    |items: Option<&Vec<Value>>| -> Result<Vec<(PathElement, Value)>, TypeError> {
                        let mut out = Vec::new();
                        for (i, item) in items.into_iter().flatten().enumerate() {
                            let pe = list_item_element(&schema, &rel, elem, item)
                                .map_err(|m| type_error(path, format!("element {i}: {m}")))?;
                            out.push((pe, item.clone()));
                        }
                        Ok(out)
                    };
                // Items grouped by element (SMD v4.6 keeps duplicates), in first-seen order:
                // the live side's, then the new side's own.
                let li = group(index(la)?);
                let ri = group(index(ra)?);
                let mut pes: Vec<&PathElement> = li.iter().map(|(p, _)| p).collect();
                for (pe, _) in &ri {
                    if !li.iter().any(|(p, _)| p == pe) {
                        pes.push(pe);
                    }
                }
                let get = |g: &'_ [(PathElement, Vec<Value>)], pe: &PathElement| {
                    g.iter()
                        .find(|(p, _)| p == pe)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                };
                for pe in pes {
                    let (l, r) = (get(&li, pe), get(&ri, pe));
                    path.push(pe.clone());
                    match (l.len(), r.len()) {
                        // one to one
                        (0..=1, 0..=1) => cmp_walk(l.first(), r.first(), elem, path, c)?,
                        // duplicates on both sides: compared as an atomic list of them
                        (2.., 2..) => {
                            let same = l.len() == r.len()
                                && l.iter().zip(&r).all(|(a, b)| json_equal(a, b));
                            if !same {
                                c.modified.insert(path);
                            }
                        }
                        // duplicates gone: the new item is added, the duplicate marker removed
                        (2.., _) => {
                            if let Some(r0) = r.first() {
                                cmp_walk(None, Some(r0), elem, path, c)?;
                            }
                            c.removed.insert(path);
                        }
                        // new duplicates: the old item is removed, the marker added
                        (_, _) => {
                            if let Some(l0) = l.first() {
                                cmp_walk(Some(l0), None, elem, path, c)?;
                            }
                            c.added.insert(path);
                        }
                    }
                    path.pop();
                }
            }
        }
        Shape::Map { atomic, .. } | Shape::Struct { atomic, .. } => {
            let lm = lhs.and_then(Value::as_object);
            let rm = rhs.and_then(Value::as_object);
            let empty = lm.is_none_or(Map::is_empty) && rm.is_none_or(Map::is_empty);
            if atomic
                || empty
                || (lm.is_none() && lhs.is_some_and(|v| !v.is_null()))
                || (rm.is_none() && rhs.is_some_and(|v| !v.is_null()))
            {
                cmp_leaf(lhs, rhs, path, c);
                in_leaf = true;
            } else {
                let mut keys: Vec<&String> = lm.into_iter().flat_map(Map::keys).collect();
                for k in rm.into_iter().flat_map(Map::keys) {
                    if !lm.is_some_and(|m| m.contains_key(k)) {
                        keys.push(k);
                    }
                }
                keys.sort();
                for k in keys {
                    let lv = lm.and_then(|m| m.get(k));
                    let rv = rm.and_then(|m| m.get(k));
                    path.push(PathElement::Field(k.clone()));
                    cmp_walk(lv, rv, schema.field(k), path, c)?;
                    path.pop();
                }
            }
        }
    }
    if !in_leaf {
        match (lhs, rhs) {
            (None, Some(_)) => c.added.insert(path),
            (Some(_), None) => c.removed.insert(path),
            _ => {}
        }
    }
    Ok(())
}

/// Items by path element, duplicates together, in first-seen order.
fn group(items: Vec<(PathElement, Value)>) -> Vec<(PathElement, Vec<Value>)> {
    let mut out: Vec<(PathElement, Vec<Value>)> = Vec::new();
    for (pe, v) in items {
        match out.iter_mut().find(|(p, _)| *p == pe) {
            Some((_, vs)) => vs.push(v),
            None => out.push((pe, vec![v])),
        }
    }
    out
}

/// Checks that a configuration fits the schema's list rules as SMD's validation does for an
/// applied object: every associative list item has its key, and no key repeats (only live
/// objects may hold duplicates).
pub fn validate(v: &Value, schema: Schema<'_>) -> Result<(), TypeError> {
    let mut path = Path::new();
    validate_at(v, schema, &mut path)
}

fn validate_at(v: &Value, schema: Schema<'_>, path: &mut Path) -> Result<(), TypeError> {
    match schema.shape(Some(v)) {
        Shape::Leaf => Ok(()),
        Shape::List { rel, elem } => {
            let Value::Array(items) = v else {
                return Ok(());
            };
            if rel == ListRel::Atomic {
                return Ok(());
            }
            let mut seen: Vec<PathElement> = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let pe = list_item_element(&schema, &rel, elem, item)
                    .map_err(|m| type_error(path, format!("element {i}: {m}")))?;
                if seen.contains(&pe) {
                    return Err(type_error(path, format!("duplicate entries for key {pe}")));
                }
                path.push(pe.clone());
                validate_at(item, elem, path)?;
                path.pop();
                seen.push(pe);
            }
            Ok(())
        }
        Shape::Map { atomic, .. } | Shape::Struct { atomic, .. } => {
            let Value::Object(m) = v else {
                return Ok(());
            };
            if atomic {
                return Ok(());
            }
            for (k, cv) in m {
                path.push(PathElement::Field(k.clone()));
                validate_at(cv, schema.field(k), path)?;
                path.pop();
            }
            Ok(())
        }
    }
}

/// `v` without the items of `to_remove` (SMD's `RemoveItems`). `None` when nothing remains of
/// a value that had something removed; inside a map or list SMD leaves a null there (a map
/// entry whose children were all removed stays, as null, for whoever owns the entry).
pub fn remove_items(v: &Value, to_remove: &Set, schema: Schema<'_>) -> Option<Value> {
    match schema.shape(Some(v)) {
        Shape::Leaf => Some(v.clone()),
        Shape::List { rel, elem } => {
            let Value::Array(items) = v else {
                return None;
            };
            if items.is_empty() || rel == ListRel::Atomic {
                return None;
            }
            let mut out = Vec::new();
            for item in items {
                let Ok(pe) = list_item_element(&schema, &rel, elem, item) else {
                    out.push(item.clone());
                    continue;
                };
                if to_remove.has_member(&pe) {
                    continue;
                }
                match to_remove.child(&pe) {
                    Some(sub) if !sub.is_empty() => {
                        out.push(remove_items(item, sub, elem).unwrap_or(Value::Null))
                    }
                    _ => out.push(item.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Shape::Map { atomic, .. } | Shape::Struct { atomic, .. } => {
            let Value::Object(m) = v else {
                return None;
            };
            if m.is_empty() || atomic {
                return None;
            }
            let mut out = Map::new();
            for (k, cv) in m {
                let pe = PathElement::Field(k.clone());
                if to_remove.has_member(&pe) {
                    continue;
                }
                match to_remove.child(&pe) {
                    Some(sub) if !sub.is_empty() => {
                        let x = remove_items(cv, sub, schema.field(k)).unwrap_or(Value::Null);
                        out.insert(k.clone(), x);
                    }
                    _ => {
                        out.insert(k.clone(), cv.clone());
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::useless_vec)]
    use super::*;
    use serde_json::json;

    fn deploy() -> Schema<'static> {
        Schema::builtin("apps", "v1", "Deployment").unwrap()
    }

    #[test]
    fn shapes_of_builtins() {
        let d = deploy();
        let spec = d.field("spec");
        assert!(matches!(
            spec.shape(None),
            Shape::Struct { atomic: false, .. }
        ));
        assert!(matches!(spec.field("replicas").shape(None), Shape::Leaf));
        assert!(matches!(
            spec.field("selector").shape(None),
            Shape::Struct { atomic: true, .. }
        ));
        let pod = spec.field("template").field("spec");
        match pod.field("containers").shape(None) {
            Shape::List { rel, .. } => assert_eq!(rel, ListRel::Map(vec!["name".into()])),
            s => panic!("{s:?}"),
        }
        assert!(matches!(
            pod.field("tolerations").shape(None),
            Shape::List {
                rel: ListRel::Atomic,
                ..
            }
        ));
        let c = pod
            .field("containers")
            .child(&PathElement::key(vec![]), None);
        assert!(matches!(
            c.field("args").shape(None),
            Shape::List {
                rel: ListRel::Atomic,
                ..
            }
        ));
        match c.field("ports").shape(None) {
            Shape::List { rel, .. } => assert_eq!(
                rel,
                ListRel::Map(vec!["containerPort".into(), "protocol".into()])
            ),
            s => panic!("{s:?}"),
        }
        let meta = d.field("metadata");
        assert!(matches!(
            meta.field("labels").shape(None),
            Shape::Map { atomic: false, .. }
        ));
        assert!(matches!(
            meta.field("finalizers").shape(None),
            Shape::List {
                rel: ListRel::Set,
                ..
            }
        ));
        assert!(matches!(
            meta.field("creationTimestamp").shape(None),
            Shape::Leaf
        ));
        assert!(matches!(
            c.field("resources").field("limits").shape(None),
            Shape::Map { .. }
        ));
        assert!(matches!(
            c.field("resources")
                .field("limits")
                .field("cpu")
                .shape(None),
            Shape::Leaf
        ));
    }

    fn nginx() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {
                    "metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{
                        "name": "nginx",
                        "image": "nginx:1.14.2",
                        "args": ["a", "b"],
                        "ports": [{"containerPort": 80}],
                        "resources": {}
                    }]}
                }
            }
        })
    }

    #[test]
    fn field_set_of_a_deployment() {
        let s = to_field_set(&nginx(), deploy()).unwrap();
        assert_eq!(
            s.to_json(),
            r#"{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:app":{}},"f:name":{}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:args":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}},"f:resources":{}}}}}}}"#
        );
    }

    #[test]
    fn field_set_errors_and_sets() {
        let mut o = nginx();
        o["spec"]["template"]["spec"]["containers"][0]
            .as_object_mut()
            .unwrap()
            .remove("name");
        let e = to_field_set(&o, deploy()).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#".spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn't have default value)"#
        );
        let o = json!({"metadata": {"finalizers": ["b", "a"]}});
        assert_eq!(
            to_field_set(&o, deploy()).unwrap().to_json(),
            r#"{"f:metadata":{"f:finalizers":{"v:\"a\"":{},"v:\"b\"":{}}}}"#
        );
    }

    #[test]
    fn named_fields_become_members() {
        let s = to_field_set(&nginx(), deploy()).unwrap();
        let e = ensure_named_fields_are_members(&s, deploy());
        assert!(e.has(&crate::field_path!["spec"]));
        assert!(e.has(&crate::field_path!["spec", "template"]));
        assert!(e.has(&crate::field_path!["metadata", "labels"]));
        // map entries with children are not named fields: labels' keys are already members
        assert!(e.has(&crate::field_path!["metadata", "labels", "app"]));
    }

    #[test]
    fn compare_objects() {
        let a = nginx();
        let mut b = nginx();
        b["spec"]["replicas"] = json!(5);
        b["metadata"]["labels"]["tier"] = json!("web");
        b["spec"]["template"]["spec"]["containers"][0]
            .as_object_mut()
            .unwrap()
            .remove("args");
        b["spec"]["strategy"] = json!({"type": "Recreate"});
        let c = compare(&a, &b, deploy()).unwrap();
        assert_eq!(c.modified.to_json(), r#"{"f:spec":{"f:replicas":{}}}"#);
        assert_eq!(
            c.added.to_json(),
            r#"{"f:metadata":{"f:labels":{"f:tier":{}}},"f:spec":{"f:strategy":{".":{},"f:type":{}}}}"#
        );
        assert_eq!(
            c.removed.to_json(),
            r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{"f:args":{}}}}}}}"#
        );
        assert!(compare(&a, &a, deploy()).unwrap().is_same());
        // 1 and 1.0 are the same value
        let x = json!({"spec": {"replicas": 1}});
        let y = json!({"spec": {"replicas": 1.0}});
        assert!(compare(&x, &y, deploy()).unwrap().is_same());
    }

    #[test]
    fn remove_items_by_set() {
        let o = nginx();
        let rm = Set::from_paths([
            crate::field_path!["spec", "replicas"],
            crate::field_path!["metadata", "labels", "app"],
            vec![
                PathElement::field("spec"),
                PathElement::field("template"),
                PathElement::field("spec"),
                PathElement::field("containers"),
                PathElement::key(vec![("name".into(), json!("nginx"))]),
                PathElement::field("ports"),
                PathElement::key(vec![
                    ("containerPort".into(), json!(80)),
                    ("protocol".into(), json!("TCP")),
                ]),
            ],
        ]);
        let r = remove_items(&o, &rm, deploy()).unwrap();
        assert!(r["spec"].get("replicas").is_none());
        // SMD leaves a null where every child of a map entry or field was removed
        assert_eq!(r["metadata"].get("labels"), Some(&Value::Null));
        let c = &r["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c.get("ports"), Some(&Value::Null));
        assert_eq!(c["image"], "nginx:1.14.2");
    }

    #[test]
    fn custom_resources_are_deduced_without_schema() {
        let node = crate::registry::custom::node::compile(&json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {
                        "items": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["id"],
                            "items": {"type": "object", "properties": {
                                "id": {"type": "integer"}, "v": {"type": "string"}}}
                        },
                        "tags": {"type": "array", "items": {"type": "string"}}
                    }
                }
            }
        }));
        let o = json!({
            "apiVersion": "example.com/v1", "kind": "Foo",
            "metadata": {"name": "x"},
            "spec": {"items": [{"id": 1, "v": "a"}], "tags": ["t"], "extra": {"deep": {"x": [1]}}}
        });
        let s = to_field_set(&o, Schema::CustomRoot(&node)).unwrap();
        assert_eq!(
            s.to_json(),
            r#"{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:name":{}},"f:spec":{"f:extra":{".":{},"f:deep":{".":{},"f:x":{}}},"f:items":{"k:{\"id\":1}":{".":{},"f:id":{},"f:v":{}}},"f:tags":{}}}"#
        );
    }

    fn crd_node() -> crate::registry::custom::node::Node {
        crate::registry::custom::node::compile(&json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port", "protocol"],
                            "items": {"type": "object", "properties": {
                                "port": {"type": "integer"},
                                "protocol": {"type": "string", "default": "TCP"},
                                "name": {"type": "string"}}}
                        },
                        "tags": {"type": "array", "x-kubernetes-list-type": "set",
                                 "items": {"type": "string"}},
                        "args": {"type": "array", "items": {"type": "string"}},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                     "properties": {"app": {"type": "string"},
                                                    "tier": {"type": "string"}}},
                        "labels": {"type": "object", "x-kubernetes-map-type": "atomic",
                                   "additionalProperties": {"type": "string"}},
                        "env": {"type": "object", "additionalProperties": {"type": "string"}},
                        "size": {"x-kubernetes-int-or-string": true},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                                  "properties": {"known": {"type": "object", "properties": {
                                      "a": {"type": "string"}}}}},
                        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                     "x-kubernetes-preserve-unknown-fields": true},
                        "strict": {"type": "object", "x-kubernetes-embedded-resource": true,
                                   "properties": {"spec": {"type": "object", "properties": {
                                       "x": {"type": "string"}}}}}
                    }
                }
            }
        }))
    }

    #[test]
    fn custom_resource_field_sets_follow_schemaconv() {
        let node = crd_node();
        let root = Schema::CustomRoot(&node);
        let o = json!({
            "apiVersion": "example.com/v1", "kind": "Foo",
            "metadata": {"name": "x", "labels": {"a": "b"}},
            "spec": {
                "ports": [{"port": 80, "name": "http"}, {"port": 53, "protocol": "UDP"}],
                "tags": ["b", "a"],
                "args": ["x"],
                "selector": {"app": "web"},
                "labels": {"k": "v"},
                "env": {"A": "1"},
                "size": "50%",
                "extra": {"known": {"a": "1", "b": {"deep": [1]}}, "free": {"y": 1}},
                "template": {"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": "p", "labels": {"l": "1"}},
                             "spec": {"containers": [{"name": "c"}]}},
                "strict": {"kind": "K", "metadata": {"annotations": {"x": "y"}},
                           "spec": {"x": "1"}}
            }
        });
        let s = to_field_set(&o, root).unwrap();
        assert_eq!(
            s.to_json(),
            concat!(
                r#"{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:a":{}},"f:name":{}},"#,
                r#""f:spec":{"f:args":{},"f:env":{"f:A":{}},"#,
                r#""f:extra":{"f:free":{".":{},"f:y":{}},"f:known":{"f:a":{},"f:b":{".":{},"f:deep":{}}}},"#,
                r#""f:labels":{},"#,
                r#""f:ports":{"k:{\"port\":53,\"protocol\":\"UDP\"}":{".":{},"f:port":{},"f:protocol":{}},"#,
                r#""k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{}}},"#,
                r#""f:selector":{},"f:size":{},"#,
                r#""f:strict":{"f:kind":{},"f:metadata":{"f:annotations":{"f:x":{}}},"f:spec":{"f:x":{}}},"#,
                r#""f:tags":{"v:\"a\"":{},"v:\"b\"":{}},"#,
                r#""f:template":{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:l":{}},"f:name":{}},"f:spec":{".":{},"f:containers":{}}}}}"#
            )
        );
    }

    #[test]
    fn custom_resource_undeclared_fields() {
        let node = crd_node();
        let root = Schema::CustomRoot(&node);
        for (o, path) in [
            (json!({"spec": {"nope": 1}}), ".spec.nope"),
            (json!({"top": 1}), ".top"),
            (
                json!({"spec": {"strict": {"spec": {"y": 1}}}}),
                ".spec.strict.spec.y",
            ),
            (
                json!({"spec": {"ports": [{"port": 1, "x": 2}]}}),
                ".spec.ports[port=1,protocol=\"TCP\"].x",
            ),
        ] {
            let e = to_field_set(&o, root).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{path}: field not declared in schema")
            );
        }
        // below a preserve-unknown node, and in embedded resources that preserve, anything goes
        let o = json!({"spec": {"extra": {"known": {"zz": 1}}, "template": {"anything": 1}}});
        assert!(to_field_set(&o, root).is_ok());
        // a version without a schema deduces everything
        let empty = crate::registry::custom::node::Node::default();
        assert!(to_field_set(
            &json!({"spec": {"a": [1]}, "x": 1}),
            Schema::CustomRoot(&empty)
        )
        .is_ok());
    }

    #[test]
    fn custom_resource_atomic_maps_and_structs() {
        let node = crd_node();
        let root = Schema::CustomRoot(&node);
        let live = json!({"spec": {"selector": {"app": "a", "tier": "t"}, "labels": {"x": "1", "y": "2"},
                                   "env": {"A": "1", "B": "2"}}});
        let cfg =
            json!({"spec": {"selector": {"app": "b"}, "labels": {"x": "3"}, "env": {"A": "3"}}});
        let m = crate::apply::merge::merge_values(&live, &cfg, root).unwrap();
        assert_eq!(m["spec"]["selector"], json!({"app": "b"}));
        assert_eq!(m["spec"]["labels"], json!({"x": "3"}));
        assert_eq!(m["spec"]["env"], json!({"A": "3", "B": "2"}));
        let c = compare(&live, &m, root).unwrap();
        assert_eq!(
            c.modified.to_json(),
            r#"{"f:spec":{"f:env":{"f:A":{}},"f:labels":{},"f:selector":{}}}"#
        );
        assert!(c.added.is_empty() && c.removed.is_empty());
        // removing an atomic member drops it whole; a granular map loses one entry
        let rm = Set::from_paths([
            crate::field_path!["spec", "selector"],
            crate::field_path!["spec", "env", "B"],
        ]);
        let r = remove_items(&live, &rm, root).unwrap();
        assert!(r["spec"].get("selector").is_none());
        assert_eq!(r["spec"]["env"], json!({"A": "1"}));
        assert_eq!(r["spec"]["labels"], json!({"x": "1", "y": "2"}));
    }
}
