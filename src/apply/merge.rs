//! Server-side apply's merge and ownership rules, as structured-merge-diff's `typed.Merge` and
//! `merge.Updater` (Apply / Update) implement them, plus kube's conflict error
//! (`NewConflictError`).
//!
//! * [`merge_values`]: the configuration merged onto the live object per the schema: structs
//!   and granular maps field by field, map-lists by key and set-lists by value (SMD's item
//!   order: the configuration's order, with live-only items kept where they were), atomic
//!   lists/maps and scalars replaced, empty-or-null on both sides kept as a leaf.
//! * [`apply`]: an Apply by one manager: merge, record the manager's new set (its
//!   configuration's field set minus ignored fields), prune what it owned before and no longer
//!   sets unless someone else owns it, then detect conflicts (fields owned by other managers
//!   whose value the apply changes or adds); `force` moves them to the applier instead.
//! * [`update`]: an Update (any other write): the manager takes over every field it changed or
//!   added, other managers lose what it changed or removed, never a conflict.
//!
//! Managers are keyed by kube's manager identifier (`{"manager":..,"operation":..}` JSON, with
//! `apiVersion` for Update and `subresource` when set), which is also the order conflicts are
//! reported in. Objects of other API versions are compared as-is (no conversion yet). Pure.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fieldpath::{go_quote, path_string, Path, PathElement, Set};
use super::typed::{
    compare, ensure_named_fields_are_members, json_equal, list_item_element, reconcile_with_schema,
    remove_items, to_field_set, validate, ListRel, Schema, Shape, TypeError,
};

/// Apply or Update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// What one manager owns, at which API version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    pub subresource: String,
    pub set: Set,
}

impl Owned {
    /// kube's manager identifier (`BuildManagerIdentifier`): the entry without time, fields
    /// and, for appliers, apiVersion, as Go marshals it.
    pub fn identifier(&self) -> String {
        manager_identifier(
            &self.manager,
            self.operation,
            &self.api_version,
            &self.subresource,
        )
    }
}

/// kube's manager identifier for (manager, operation, apiVersion, subresource).
pub fn manager_identifier(
    manager: &str,
    operation: Operation,
    api_version: &str,
    subresource: &str,
) -> String {
    let mut m = Map::new();
    m.insert("manager".into(), Value::String(manager.into()));
    m.insert("operation".into(), Value::String(operation.as_str().into()));
    if operation == Operation::Update && !api_version.is_empty() {
        m.insert("apiVersion".into(), Value::String(api_version.into()));
    }
    if !subresource.is_empty() {
        m.insert("subresource".into(), Value::String(subresource.into()));
    }
    Value::Object(m).to_string()
}

/// All managers of an object, by identifier.
pub type Managers = BTreeMap<String, Owned>;

/// One conflicting field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The other manager's identifier.
    pub manager: String,
    pub path: Path,
}

/// Why an apply or update failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Conflicts with other managers: kube's 409 `Conflict`.
    #[error("{}", conflict_message(.0))]
    Conflicts(Vec<Conflict>),
    /// The object or configuration does not fit the schema.
    #[error("{0}")]
    Type(#[from] TypeError),
    /// An object could not be converted to another manager's version (kube's `failed to
    /// convert ... object`, a 500).
    #[error("{0}")]
    Convert(String),
}

/// The other API versions of a kind, for managers' entries recorded at them (SMD's
/// `Converter`, kube's versioned converter): conflicts and removals are found, and pruning is
/// done, with the objects converted to each entry's version and compared by its schema.
pub trait Versions<'a>: Sync {
    /// The schema objects of `api_version` are typed with; `None` for a version the kind does
    /// not have (SMD's missing version: the entries recorded at it are dropped).
    fn schema(&'a self, api_version: &str) -> Option<Schema<'a>>;
    /// `obj` (at the version its `apiVersion` names) converted to `api_version`.
    fn convert(&self, obj: &Value, api_version: &str) -> Result<Value, String>;
}

impl std::fmt::Debug for dyn Versions<'_> + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Versions")
    }
}

/// Where an operation runs: its version and schema, and the kind's other versions (none: every
/// entry is read at this version, as for built-ins).
#[derive(Clone, Copy)]
struct At<'c, 'a> {
    version: &'c str,
    schema: Schema<'a>,
    versions: Option<&'a dyn Versions<'a>>,
}

impl<'a> At<'_, 'a> {
    /// `obj`, at version `from`, as an object of `to` with its schema (`None`: unknown version).
    fn to(
        &self,
        obj: &Value,
        from: &str,
        to: &str,
    ) -> Result<Option<(Value, Schema<'a>)>, ApplyError> {
        let Some(versions) = self.versions else {
            return Ok(Some((obj.clone(), self.schema)));
        };
        let schema = if to == self.version {
            Some(self.schema)
        } else {
            versions.schema(to)
        };
        let Some(schema) = schema else {
            return Ok(None);
        };
        if from == to {
            return Ok(Some((obj.clone(), schema)));
        }
        let converted = versions.convert(obj, to).map_err(ApplyError::Convert)?;
        Ok(Some((converted, schema)))
    }
}

/// kube's `printManager`: `"name"` for appliers, `"name" using apps/v1` for updaters, with
/// `with subresource "status"` when set.
pub fn print_manager(identifier: &str) -> String {
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(identifier) else {
        return format!("{identifier:?}");
    };
    let get = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
    let mut s = go_quote(get("manager"));
    if !get("subresource").is_empty() {
        s = format!("{s} with subresource {}", go_quote(get("subresource")));
    }
    if get("operation") == "Update" {
        s = format!("{s} using {}", get("apiVersion"));
    }
    s
}

/// kube's `getConflictMessage`.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [c] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            print_manager(&c.manager),
            path_string(&c.path)
        );
    }
    let mut by: BTreeMap<&str, Vec<&Path>> = BTreeMap::new();
    for c in conflicts {
        by.entry(&c.manager).or_default().push(&c.path);
    }
    let mut lines = Vec::new();
    for (m, paths) in by {
        lines.push(format!("conflicts with {}:", print_manager(m)));
        for p in paths {
            lines.push(format!("- {}", path_string(p)));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// kube's status causes for conflicts: (`reason: FieldManagerConflict`, message, field).
pub fn conflict_causes(conflicts: &[Conflict]) -> Vec<(String, String)> {
    conflicts
        .iter()
        .map(|c| {
            (
                format!("conflict with {}", print_manager(&c.manager)),
                path_string(&c.path),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Merge

/// The configuration `rhs` merged onto the live object `lhs` (SMD's `TypedValue.Merge`).
pub fn merge_values(lhs: &Value, rhs: &Value, schema: Schema<'_>) -> Result<Value, TypeError> {
    let mut path = Path::new();
    Ok(merge_at(Some(lhs), Some(rhs), schema, &mut path)?.unwrap_or(Value::Null))
}

fn merge_at(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    schema: Schema<'_>,
    path: &mut Path,
) -> Result<Option<Value>, TypeError> {
    let (l, r) = match (lhs, rhs) {
        (None, None) => return Ok(None),
        (Some(l), None) => return Ok(Some(l.clone())),
        (None, Some(r)) => return Ok(Some(r.clone())),
        (Some(l), Some(r)) => (l, r),
    };
    match schema.shape(Some(r)) {
        Shape::Leaf => Ok(Some(r.clone())),
        Shape::List { rel, elem } => {
            // SMD: a null side is an empty list (a null configuration keeps the live items)
            let empty = Vec::new();
            let (Some(la), Some(ra)) = (
                l.as_array().or(l.is_null().then_some(&empty)),
                r.as_array().or(r.is_null().then_some(&empty)),
            ) else {
                return Ok(Some(r.clone()));
            };
            if rel == ListRel::Atomic || (la.is_empty() && ra.is_empty()) {
                return Ok(Some(r.clone()));
            }
            merge_lists(la, ra, &rel, elem, schema, path).map(|v| Some(Value::Array(v)))
        }
        Shape::Map { atomic, .. } | Shape::Struct { atomic, .. } => {
            // SMD: a null side is an empty map (a null configuration keeps the live fields)
            let empty = Map::new();
            let (Some(lm), Some(rm)) = (
                l.as_object().or(l.is_null().then_some(&empty)),
                r.as_object().or(r.is_null().then_some(&empty)),
            ) else {
                return Ok(Some(r.clone()));
            };
            if atomic || (lm.is_empty() && rm.is_empty()) {
                return Ok(Some(r.clone()));
            }
            let mut out = Map::new();
            for (k, lv) in lm {
                path.push(PathElement::Field(k.clone()));
                let m = merge_at(Some(lv), rm.get(k), schema.field(k), path)?;
                path.pop();
                if let Some(m) = m {
                    out.insert(k.clone(), m);
                }
            }
            for (k, rv) in rm {
                if !lm.contains_key(k) {
                    out.insert(k.clone(), rv.clone());
                }
            }
            Ok(Some(Value::Object(out)))
        }
    }
}

type Indexed<'v> = Vec<(PathElement, &'v Value)>;

fn index_list<'v>(
    items: &'v [Value],
    rel: &ListRel,
    elem: Schema<'_>,
    schema: Schema<'_>,
    allow_duplicates: bool,
    path: &Path,
) -> Result<(Indexed<'v>, BTreeMap<PathElement, Option<&'v Value>>), TypeError> {
    let mut pes = Vec::with_capacity(items.len());
    let mut observed: BTreeMap<PathElement, Option<&Value>> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let pe = list_item_element(&schema, rel, elem, item).map_err(|m| TypeError {
            path: path_string(path),
            message: format!("element {i}: {m}"),
        })?;
        if let Some(seen) = observed.get_mut(&pe) {
            if !allow_duplicates {
                return Err(TypeError {
                    path: path_string(path),
                    message: format!("duplicate entries for key {pe}"),
                });
            }
            *seen = None;
        } else {
            observed.insert(pe.clone(), Some(item));
        }
        pes.push((pe, item));
    }
    Ok((pes, observed))
}

/// SMD's `visitListItems` for merging: items of both merged in the configuration's order;
/// live-only items stay in place relative to the shared ones.
fn merge_lists(
    la: &[Value],
    ra: &[Value],
    rel: &ListRel,
    elem: Schema<'_>,
    schema: Schema<'_>,
    path: &mut Path,
) -> Result<Vec<Value>, TypeError> {
    let (rpes, robs) = index_list(ra, rel, elem, schema, false, path)?;
    let (lpes, lobs) = index_list(la, rel, elem, schema, true, path)?;
    let mut shared: std::collections::VecDeque<&PathElement> = rpes
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| lobs.contains_key(pe))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_rhs: std::collections::BTreeSet<PathElement> = Default::default();
    let mut out = Vec::with_capacity(la.len() + ra.len());
    let (mut li, mut ri) = (0, 0);
    let item = |pe: &PathElement,
                l: Option<&Value>,
                r: Option<&Value>,
                path: &mut Path,
                out: &mut Vec<Value>|
     -> Result<(), TypeError> {
        path.push(pe.clone());
        let m = merge_at(l, r, elem, path)?;
        path.pop();
        if let Some(m) = m {
            out.push(m);
        }
        Ok(())
    };
    while li < lpes.len() || ri < rpes.len() {
        if li < lpes.len() && ri < rpes.len() {
            let pe = &lpes[li].0;
            if *pe == rpes[ri].0 {
                merged_rhs.insert(pe.clone());
                let l = lobs.get(pe).copied().flatten();
                let r = robs.get(pe).copied().flatten();
                item(pe, l, r, path, &mut out)?;
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if robs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lpes.len() {
            let pe = &lpes[li].0;
            if !robs.contains_key(pe) {
                item(pe, Some(lpes[li].1), None, path, &mut out)?;
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
                continue;
            }
        }
        if ri < rpes.len() {
            let pe = &rpes[ri].0;
            merged_rhs.insert(pe.clone());
            let l = lobs.get(pe).copied().flatten();
            item(pe, l, Some(rpes[ri].1), path, &mut out)?;
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Ownership

/// The result of an apply or update.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The new object (equal to the live one when nothing changed).
    pub object: Value,
    /// Whether the object changed.
    pub changed: bool,
    pub managers: Managers,
}

/// SMD's `Updater.update`: conflicts (fields of other managers the change modifies or adds)
/// and removals, each manager's found with the objects at its entry's version; `force` (always
/// for Update) takes conflicting fields away from their owners. Entries at a version the kind
/// does not have are dropped.
fn reassign(
    old: &Value,
    new: &Value,
    at: At<'_, '_>,
    ignored: &Set,
    managers: &mut Managers,
    me: &str,
    force: bool,
) -> Result<super::typed::Comparison, ApplyError> {
    let cmp = compare(old, new, at.schema)?;
    let changes = |c: &super::typed::Comparison| {
        (
            c.modified.union(&c.added).recursive_difference(ignored),
            c.removed.recursive_difference(ignored),
        )
    };
    let mut by_version: BTreeMap<String, (Set, Set)> = BTreeMap::new();
    by_version.insert(at.version.to_string(), changes(&cmp));
    let mut conflicts: Vec<(String, Set)> = Vec::new();
    let mut removals: Vec<(String, Set)> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for (id, owned) in managers.iter() {
        if id == me {
            continue;
        }
        let version = if at.versions.is_some() {
            owned.api_version.as_str()
        } else {
            at.version
        };
        if !by_version.contains_key(version) {
            let (Some((o, schema)), Some((n, _))) = (
                at.to(old, at.version, version)?,
                at.to(new, at.version, version)?,
            ) else {
                missing.push(id.clone());
                continue;
            };
            let c = compare(&o, &n, schema)?;
            by_version.insert(version.to_string(), changes(&c));
        }
        let (changed, removed) = &by_version[version];
        let c = owned.set.intersection(changed);
        if !c.is_empty() {
            conflicts.push((id.clone(), c));
        }
        if !removed.is_empty() {
            removals.push((id.clone(), removed.clone()));
        }
    }
    for id in &missing {
        managers.remove(id);
    }
    if !force && !conflicts.is_empty() {
        let mut out = Vec::new();
        for (id, set) in &conflicts {
            for p in set.paths() {
                out.push(Conflict {
                    manager: id.clone(),
                    path: p,
                });
            }
        }
        return Err(ApplyError::Conflicts(out));
    }
    for (id, set) in conflicts.iter().chain(&removals) {
        if let Some(o) = managers.get_mut(id) {
            o.set = o.set.difference(set);
        }
    }
    managers.retain(|_, o| !o.set.is_empty());
    Ok(cmp)
}

/// SMD's `reconcileManagedFieldsWithSchemaChanges`: every manager's set brought in line with
/// the schema of its entry's version (fields since made atomic are owned whole).
fn reconcile_managers(managers: &mut Managers, at: At<'_, '_>) {
    for o in managers.values_mut() {
        let schema = match at.versions {
            Some(v) if o.api_version != at.version => match v.schema(&o.api_version) {
                Some(s) => s,
                None => continue,
            },
            _ => at.schema,
        };
        if let Some(s) = reconcile_with_schema(&o.set, schema) {
            o.set = s;
        }
    }
}

/// An Apply of `config` by `manager` (identifier from [`manager_identifier`] with
/// [`Operation::Apply`]) onto `live` (`{}` when creating). `ignored`: fields that are reset
/// (e.g. `status` on the main resource) and never owned.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: &Value,
    config: &Value,
    schema: Schema<'_>,
    api_version: &str,
    managers: Managers,
    manager: &str,
    subresource: &str,
    ignored: &Set,
    force: bool,
) -> Result<Outcome, ApplyError> {
    apply_in(
        live,
        config,
        schema,
        api_version,
        None,
        managers,
        manager,
        subresource,
        ignored,
        force,
    )
}

/// [`apply`] for a kind with other versions (`versions`), whose entries are read at theirs.
#[allow(clippy::too_many_arguments)]
pub fn apply_in<'a>(
    live: &Value,
    config: &Value,
    schema: Schema<'a>,
    api_version: &str,
    versions: Option<&'a dyn Versions<'a>>,
    mut managers: Managers,
    manager: &str,
    subresource: &str,
    ignored: &Set,
    force: bool,
) -> Result<Outcome, ApplyError> {
    let at = At {
        version: api_version,
        schema,
        versions,
    };
    let id = manager_identifier(manager, Operation::Apply, api_version, subresource);
    reconcile_managers(&mut managers, at);
    validate(config, schema)?;
    let merged = merge_values(live, config, schema)?;
    let last = managers.get(&id).cloned();
    let set = to_field_set(config, schema)?.recursive_difference(ignored);
    managers.insert(
        id.clone(),
        Owned {
            manager: manager.into(),
            operation: Operation::Apply,
            api_version: api_version.into(),
            subresource: subresource.into(),
            set,
        },
    );
    let pruned = match last.filter(|o| !o.set.is_empty()) {
        Some(last) => prune(&merged, &managers, &last, at)?,
        None => merged,
    };
    reassign(live, &pruned, at, ignored, &mut managers, &id, force)?;
    let changed = !json_equal(live, &pruned);
    Ok(Outcome {
        object: pruned,
        changed,
        managers,
    })
}

/// SMD's `prune`: removes what the applier owned last time and no longer applies, then adds
/// back anything another manager (or the new configuration) owns, and anything that was not
/// the applier's to remove. With other versions this runs at the version of the applier's
/// last entry, each manager's fields added back at its version (the last entry's first), and
/// the result is converted back.
fn prune(
    merged: &Value,
    managers: &Managers,
    last: &Owned,
    at: At<'_, '_>,
) -> Result<Value, ApplyError> {
    let empty = || Value::Object(Map::new());
    let e = |s: &Set, sc: Schema<'_>| ensure_named_fields_are_members(s, sc);
    let last_version = if at.versions.is_some() {
        last.api_version.as_str()
    } else {
        at.version
    };
    let Some((merged_l, schema_l)) = at.to(merged, at.version, last_version)? else {
        return Ok(merged.clone());
    };
    let mut pruned =
        remove_items(&merged_l, &e(&last.set, schema_l), schema_l).unwrap_or_else(empty);
    // addBackOwnedItems, by version (the pruned version first).
    let mut by_version: Vec<(String, Set)> = Vec::new();
    for o in managers.values() {
        let v = if at.versions.is_some() {
            o.api_version.as_str()
        } else {
            at.version
        };
        match by_version.iter_mut().find(|(x, _)| x == v) {
            Some((_, s)) => *s = s.union(&o.set),
            None => by_version.push((v.to_string(), o.set.clone())),
        }
    }
    by_version.sort_by_key(|(v, _)| v != last_version);
    let (mut cur_merged, mut cur_version) = (merged_l.clone(), last_version.to_string());
    for (v, managed) in &by_version {
        let (Some((m, sc)), Some((p, _))) = (
            at.to(&cur_merged, &cur_version, v)?,
            at.to(&pruned, &cur_version, v)?,
        ) else {
            continue;
        };
        let merged_set = e(&to_field_set(&m, sc)?, sc);
        let pruned_set = e(&to_field_set(&p, sc)?, sc);
        pruned = remove_items(
            &m,
            &merged_set.difference(&pruned_set.union(&e(managed, sc))),
            sc,
        )
        .unwrap_or_else(empty);
        (cur_merged, cur_version) = (m, v.clone());
    }
    // addBackDanglingItems, at the last entry's version.
    if cur_version != last_version {
        pruned = at
            .to(&pruned, &cur_version, last_version)?
            .map(|(p, _)| p)
            .unwrap_or(pruned);
    }
    let merged_set = e(&to_field_set(&merged_l, schema_l)?, schema_l);
    let pruned_set = e(&to_field_set(&pruned, schema_l)?, schema_l);
    let pruned = remove_items(
        &merged_l,
        &merged_set
            .difference(&pruned_set)
            .intersection(&e(&last.set, schema_l)),
        schema_l,
    )
    .unwrap_or_else(empty);
    Ok(at
        .to(&pruned, last_version, at.version)?
        .map(|(p, _)| p)
        .unwrap_or(pruned))
}

/// An Update from `live` to `new` by `manager` (kube's `Update` including its merge with the
/// manager's previous Update entry). Returns whether the manager's entry changed (kube then
/// stamps its time).
#[allow(clippy::too_many_arguments)]
pub fn update(
    live: &Value,
    new: &Value,
    schema: Schema<'_>,
    api_version: &str,
    managers: Managers,
    manager: &str,
    subresource: &str,
    ignored: &Set,
) -> Result<(Managers, bool), ApplyError> {
    update_in(
        live,
        new,
        schema,
        api_version,
        None,
        managers,
        manager,
        subresource,
        ignored,
    )
}

/// [`update`] for a kind with other versions (`versions`), whose entries are read at theirs.
#[allow(clippy::too_many_arguments)]
pub fn update_in<'a>(
    live: &Value,
    new: &Value,
    schema: Schema<'a>,
    api_version: &str,
    versions: Option<&'a dyn Versions<'a>>,
    mut managers: Managers,
    manager: &str,
    subresource: &str,
    ignored: &Set,
) -> Result<(Managers, bool), ApplyError> {
    // kube runs SMD's Update as a temporary manager, then folds it into the real one.
    const SELF: &str = "current-operation";
    let at = At {
        version: api_version,
        schema,
        versions,
    };
    reconcile_managers(&mut managers, at);
    let cmp = reassign(live, new, at, ignored, &mut managers, SELF, true)?;
    let set = cmp.modified.union(&cmp.added).recursive_difference(ignored);
    if set.is_empty() {
        return Ok((managers, false));
    }
    let id = manager_identifier(manager, Operation::Update, api_version, subresource);
    let prev = managers.remove(&id).map(|o| o.set).unwrap_or_default();
    managers.insert(
        id,
        Owned {
            manager: manager.into(),
            operation: Operation::Update,
            api_version: api_version.into(),
            subresource: subresource.into(),
            set: set.union(&prev),
        },
    );
    Ok((managers, true))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::useless_vec)]
    use super::*;
    use crate::field_path;
    use serde_json::json;

    fn sch() -> Schema<'static> {
        Schema::builtin("apps", "v1", "Deployment").unwrap()
    }

    fn containers(v: &Value) -> Vec<&str> {
        v["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect()
    }

    fn with_containers(names: &[(&str, &str)]) -> Value {
        let cs: Vec<Value> = names
            .iter()
            .map(|(n, i)| json!({"name": n, "image": i}))
            .collect();
        json!({"spec": {"template": {"spec": {"containers": cs}}}})
    }

    #[test]
    fn merge_rules() {
        let live = json!({
            "metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x", "y"]},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"a": "1", "b": "2"}},
                "template": {"spec": {
                    "containers": [{"name": "a", "image": "a:1", "args": ["1", "2"]}],
                    "tolerations": [{"key": "k1"}]
                }}
            }
        });
        let cfg = json!({
            "metadata": {"labels": {"b": "3"}, "finalizers": ["z", "x"]},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"c": "3"}},
                "template": {"spec": {
                    "containers": [{"name": "a", "args": ["3"]}, {"name": "b", "image": "b:1"}],
                    "tolerations": [{"key": "k2"}]
                }}
            }
        });
        let m = merge_values(&live, &cfg, sch()).unwrap();
        assert_eq!(m["metadata"]["labels"], json!({"a": "1", "b": "3"}));
        assert_eq!(m["metadata"]["finalizers"], json!(["z", "x", "y"]));
        assert_eq!(m["spec"]["replicas"], 2);
        // atomic struct (LabelSelector) and atomic lists are replaced
        assert_eq!(m["spec"]["selector"], json!({"matchLabels": {"c": "3"}}));
        assert_eq!(
            m["spec"]["template"]["spec"]["tolerations"],
            json!([{"key": "k2"}])
        );
        assert_eq!(
            m["spec"]["template"]["spec"]["containers"],
            json!([{"name": "a", "image": "a:1", "args": ["3"]}, {"name": "b", "image": "b:1"}])
        );
    }

    #[test]
    fn merge_list_order_as_smd() {
        let live = with_containers(&[("a", "1"), ("b", "1"), ("c", "1"), ("d", "1")]);
        // SMD: shared items follow the config order; a live-only item is emitted when reached,
        // live items that the config also has wait for their turn in the config order
        let cfg = with_containers(&[("e", "2"), ("c", "2"), ("a", "2")]);
        let m = merge_values(&live, &cfg, sch()).unwrap();
        assert_eq!(containers(&m), ["b", "e", "c", "d", "a"]);
        let dup = with_containers(&[("a", "1"), ("a", "2")]);
        let e = merge_values(&live, &dup, sch()).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#".spec.template.spec.containers: duplicate entries for key [name="a"]"#
        );
    }

    fn ids(m: &Managers) -> Vec<String> {
        m.keys().cloned().collect()
    }

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [
                {"name": "c", "image": image}]}}}
        })
    }

    #[test]
    fn apply_conflicts_force_and_sharing() {
        let none = Set::new();
        let a = apply(
            &json!({}),
            &deployment(1, "x"),
            sch(),
            "apps/v1",
            Managers::new(),
            "alice",
            "",
            &none,
            false,
        )
        .unwrap();
        assert!(a.changed);
        assert_eq!(
            ids(&a.managers),
            [r#"{"manager":"alice","operation":"Apply"}"#]
        );
        // bob applies the same values: shared ownership, no conflict
        let b = apply(
            &a.object,
            &deployment(1, "x"),
            sch(),
            "apps/v1",
            a.managers.clone(),
            "bob",
            "",
            &none,
            false,
        )
        .unwrap();
        assert!(!b.changed);
        assert_eq!(b.managers.len(), 2);
        // bob changes replicas: conflict with alice
        let e = apply(
            &b.object,
            &deployment(2, "x"),
            sch(),
            "apps/v1",
            b.managers.clone(),
            "bob",
            "",
            &none,
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"Apply failed with 1 conflict: conflict with "alice": .spec.replicas"#
        );
        // two fields: one cause each, grouped by manager
        let e = apply(
            &b.object,
            &deployment(2, "y"),
            sch(),
            "apps/v1",
            b.managers.clone(),
            "bob",
            "",
            &none,
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.replicas\n- .spec.template.spec.containers[name=\"c\"].image"
        );
        let ApplyError::Conflicts(cs) = &e else {
            panic!()
        };
        assert_eq!(
            conflict_causes(cs)[1],
            (
                "conflict with \"alice\"".to_string(),
                ".spec.template.spec.containers[name=\"c\"].image".to_string()
            )
        );
        // force: bob takes replicas away from alice
        let f = apply(
            &b.object,
            &deployment(2, "x"),
            sch(),
            "apps/v1",
            b.managers.clone(),
            "bob",
            "",
            &none,
            true,
        )
        .unwrap();
        assert_eq!(f.object["spec"]["replicas"], 2);
        let alice = &f.managers[r#"{"manager":"alice","operation":"Apply"}"#];
        assert!(!alice.set.has(&field_path!["spec", "replicas"]));
        assert!(alice.set.has(&field_path!["kind"]));
        let bob = &f.managers[r#"{"manager":"bob","operation":"Apply"}"#];
        assert!(bob.set.has(&field_path!["spec", "replicas"]));
    }

    #[test]
    fn update_conflicts_name_the_api_version() {
        let none = Set::new();
        let (m, changed) = update(
            &json!({}),
            &deployment(1, "x"),
            sch(),
            "apps/v1",
            Managers::new(),
            "kubectl-client-side-apply",
            "",
            &none,
        )
        .unwrap();
        assert!(changed);
        let e = apply(
            &deployment(1, "x"),
            &deployment(3, "x"),
            sch(),
            "apps/v1",
            m,
            "kubectl",
            "",
            &none,
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas"#
        );
        assert_eq!(
            print_manager(&manager_identifier("m", Operation::Update, "v1", "status")),
            r#""m" with subresource "status" using v1"#
        );
    }

    #[test]
    fn removed_fields_are_pruned_unless_owned_by_others() {
        let none = Set::new();
        let mut cfg = deployment(1, "x");
        cfg["metadata"]["labels"] = json!({"a": "1", "b": "2"});
        let a = apply(
            &json!({}),
            &cfg,
            sch(),
            "apps/v1",
            Managers::new(),
            "alice",
            "",
            &none,
            false,
        )
        .unwrap();
        // bob co-owns label b
        let bcfg = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"b": "2"}}});
        let b = apply(
            &a.object,
            &bcfg,
            sch(),
            "apps/v1",
            a.managers,
            "bob",
            "",
            &none,
            false,
        )
        .unwrap();
        // alice drops both labels and replicas
        let mut cfg2 = deployment(1, "x");
        cfg2["spec"].as_object_mut().unwrap().remove("replicas");
        let c = apply(
            &b.object,
            &cfg2,
            sch(),
            "apps/v1",
            b.managers,
            "alice",
            "",
            &none,
            false,
        )
        .unwrap();
        assert_eq!(c.object["metadata"]["labels"], json!({"b": "2"}));
        assert!(c.object["spec"].get("replicas").is_none());
        let alice = &c.managers[r#"{"manager":"alice","operation":"Apply"}"#];
        assert!(!alice.set.has(&field_path!["metadata", "labels", "b"]));
        // a field set by an Update is not the applier's to remove
        let mut live = c.object.clone();
        live["spec"]["paused"] = json!(true);
        let (m, _) = update(
            &c.object,
            &live,
            sch(),
            "apps/v1",
            c.managers,
            "ctl",
            "",
            &none,
        )
        .unwrap();
        let d = apply(&live, &cfg2, sch(), "apps/v1", m, "alice", "", &none, false).unwrap();
        assert_eq!(d.object["spec"]["paused"], true);
    }

    #[test]
    fn update_takes_ownership_and_merges_with_previous_entry() {
        let none = Set::new();
        let a = apply(
            &json!({}),
            &deployment(1, "x"),
            sch(),
            "apps/v1",
            Managers::new(),
            "alice",
            "",
            &none,
            false,
        )
        .unwrap();
        let (m, changed) = update(
            &a.object,
            &deployment(5, "x"),
            sch(),
            "apps/v1",
            a.managers.clone(),
            "hpa",
            "",
            &none,
        )
        .unwrap();
        assert!(changed);
        let alice = &m[r#"{"manager":"alice","operation":"Apply"}"#];
        assert!(!alice.set.has(&field_path!["spec", "replicas"]));
        let hpa = &m[r#"{"manager":"hpa","operation":"Update","apiVersion":"apps/v1"}"#];
        assert_eq!(hpa.set.to_json(), r#"{"f:spec":{"f:replicas":{}}}"#);
        let (m2, _) = update(
            &deployment(5, "x"),
            &deployment(5, "z"),
            sch(),
            "apps/v1",
            m,
            "hpa",
            "",
            &none,
        )
        .unwrap();
        let hpa = &m2[r#"{"manager":"hpa","operation":"Update","apiVersion":"apps/v1"}"#];
        assert!(hpa.set.has(&field_path!["spec", "replicas"]));
        // no change: no entry change
        let (_, changed) = update(
            &a.object,
            &a.object,
            sch(),
            "apps/v1",
            a.managers,
            "hpa",
            "",
            &none,
        )
        .unwrap();
        assert!(!changed);
    }

    #[test]
    fn ignored_fields_are_never_owned() {
        let ignored = Set::from_paths([field_path!["status"]]);
        let mut cfg = deployment(1, "x");
        cfg["status"] = json!({"replicas": 4});
        let a = apply(
            &json!({}),
            &cfg,
            sch(),
            "apps/v1",
            Managers::new(),
            "alice",
            "",
            &ignored,
            false,
        )
        .unwrap();
        let alice = &a.managers[r#"{"manager":"alice","operation":"Apply"}"#];
        assert!(alice.set.child(&PathElement::field("status")).is_none());
    }

    /// One step of a scenario: who, how, what (YAML), and the conflict message expected.
    struct Step {
        manager: &'static str,
        op: &'static str, // "apply", "force", "update"
        body: &'static str,
        conflict: Option<&'static str>,
    }

    const fn ap(manager: &'static str, body: &'static str) -> Step {
        Step {
            manager,
            op: "apply",
            body,
            conflict: None,
        }
    }
    const fn up(manager: &'static str, body: &'static str) -> Step {
        Step {
            manager,
            op: "update",
            body,
            conflict: None,
        }
    }

    struct Case {
        name: &'static str,
        steps: Vec<Step>,
        /// The final object (YAML).
        object: &'static str,
        /// Each manager's final set (`fieldsV1` JSON); managers not listed own nothing.
        managed: &'static [(&'static str, &'static str)],
    }

    /// The scenario table: merge rules, ownership, pruning and conflicts. Set-list cases are
    /// SMD's own (merge/set_test.go) on `metadata.finalizers`.
    #[test]
    fn scenario_table() {
        let cases = vec![
            Case {
                name: "set: apply, update, apply with no overlap (SMD apply_update_apply_no_overlap)",
                steps: vec![
                    ap("default", "metadata: {finalizers: [a, c]}"),
                    up("controller", "metadata: {finalizers: [a, b, c, d]}"),
                    ap("default", "metadata: {finalizers: [a, aprime, c, cprime]}"),
                ],
                object: "metadata: {finalizers: [a, b, aprime, c, d, cprime]}",
                managed: &[
                    ("default", r#"{"f:metadata":{"f:finalizers":{"v:\"a\"":{},"v:\"aprime\"":{},"v:\"c\"":{},"v:\"cprime\"":{}}}}"#),
                    ("controller", r#"{"f:metadata":{"f:finalizers":{"v:\"b\"":{},"v:\"d\"":{}}}}"#),
                ],
            },
            Case {
                name: "set: an item dropped by its only applier is removed",
                steps: vec![
                    ap("default", "metadata: {finalizers: [a, b]}"),
                    ap("default", "metadata: {finalizers: [a]}"),
                ],
                object: "metadata: {finalizers: [a]}",
                managed: &[("default", r#"{"f:metadata":{"f:finalizers":{"v:\"a\"":{}}}}"#)],
            },
            Case {
                name: "set: a shared item dropped by one applier stays, owned by the other",
                steps: vec![
                    ap("one", "metadata: {finalizers: [a, b]}"),
                    ap("two", "metadata: {finalizers: [b]}"),
                    ap("one", "metadata: {finalizers: [a]}"),
                ],
                object: "metadata: {finalizers: [a, b]}",
                managed: &[
                    ("one", r#"{"f:metadata":{"f:finalizers":{"v:\"a\"":{}}}}"#),
                    ("two", r#"{"f:metadata":{"f:finalizers":{"v:\"b\"":{}}}}"#),
                ],
            },
            Case {
                name: "map-list: items merged by key; an item dropped by its applier goes",
                steps: vec![
                    ap("one", "spec: {template: {spec: {containers: [{name: c1, image: x}]}}}"),
                    ap("two", "spec: {template: {spec: {containers: [{name: c2, image: y}]}}}"),
                    ap("one", "spec: {template: {spec: {containers: []}}}"),
                ],
                object: "spec: {template: {spec: {containers: [{name: c2, image: y}]}}}",
                managed: &[
                    ("two", r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"c2\"}":{".":{},"f:image":{},"f:name":{}}}}}}}"#),
                ],
            },
            Case {
                name: "map-list: another applier's field inside a shared item conflicts",
                steps: vec![
                    ap("one", "spec: {template: {spec: {containers: [{name: c, image: x}]}}}"),
                    Step {
                        manager: "two",
                        op: "apply",
                        body: "spec: {template: {spec: {containers: [{name: c, image: y}]}}}",
                        conflict: Some(r#"Apply failed with 1 conflict: conflict with "one": .spec.template.spec.containers[name="c"].image"#),
                    },
                    ap("two", "spec: {template: {spec: {containers: [{name: c, imagePullPolicy: Always}]}}}"),
                ],
                object: "spec: {template: {spec: {containers: [{name: c, image: x, imagePullPolicy: Always}]}}}",
                managed: &[
                    ("one", r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}}}"#),
                    ("two", r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:imagePullPolicy":{},"f:name":{}}}}}}}"#),
                ],
            },
            Case {
                name: "atomic list: replaced whole; a different value conflicts; force takes it",
                steps: vec![
                    ap("one", "spec: {template: {spec: {tolerations: [{key: t1}]}}}"),
                    Step {
                        manager: "two",
                        op: "apply",
                        body: "spec: {template: {spec: {tolerations: [{key: t2}]}}}",
                        conflict: Some(r#"Apply failed with 1 conflict: conflict with "one": .spec.template.spec.tolerations"#),
                    },
                    Step { manager: "two", op: "force", body: "spec: {template: {spec: {tolerations: [{key: t2}]}}}", conflict: None },
                ],
                object: "spec: {template: {spec: {tolerations: [{key: t2}]}}}",
                managed: &[("two", r#"{"f:spec":{"f:template":{"f:spec":{"f:tolerations":{}}}}}"#)],
            },
            Case {
                name: "granular map: keys owned separately; a dropped key goes",
                steps: vec![
                    ap("one", "metadata: {labels: {a: '1'}}"),
                    ap("two", "metadata: {labels: {b: '2'}}"),
                    ap("one", "metadata: {annotations: {x: y}}"),
                ],
                object: "metadata: {labels: {b: '2'}, annotations: {x: y}}",
                managed: &[
                    ("one", r#"{"f:metadata":{"f:annotations":{"f:x":{}}}}"#),
                    ("two", r#"{"f:metadata":{"f:labels":{"f:b":{}}}}"#),
                ],
            },
            Case {
                name: "atomic struct: same value shared, a change conflicts",
                steps: vec![
                    ap("one", "spec: {selector: {matchLabels: {a: '1'}}}"),
                    ap("two", "spec: {selector: {matchLabels: {a: '1'}}}"),
                    Step {
                        manager: "two",
                        op: "apply",
                        body: "spec: {selector: {matchLabels: {a: '2'}}}",
                        conflict: Some(r#"Apply failed with 1 conflict: conflict with "one": .spec.selector"#),
                    },
                ],
                object: "spec: {selector: {matchLabels: {a: '1'}}}",
                managed: &[
                    ("one", r#"{"f:spec":{"f:selector":{}}}"#),
                    ("two", r#"{"f:spec":{"f:selector":{}}}"#),
                ],
            },
            Case {
                name: "update takes over from an applier; the applier dropping it keeps the value",
                steps: vec![
                    ap("user", "spec: {replicas: 1}"),
                    up("hpa", "spec: {replicas: 4}"),
                    ap("user", "spec: {paused: false}"),
                ],
                object: "spec: {replicas: 4, paused: false}",
                managed: &[
                    ("user", r#"{"f:spec":{"f:paused":{}}}"#),
                    ("hpa", r#"{"f:spec":{"f:replicas":{}}}"#),
                ],
            },
        ];
        let none = Set::new();
        for case in cases {
            let mut obj = json!({});
            let mut managers = Managers::new();
            for (i, step) in case.steps.iter().enumerate() {
                let body: Value = serde_yaml::from_str(step.body).unwrap();
                let res = match step.op {
                    "update" => update(
                        &obj,
                        &body,
                        sch(),
                        "apps/v1",
                        managers.clone(),
                        step.manager,
                        "",
                        &none,
                    )
                    .map(|(m, _)| (body.clone(), m)),
                    op => apply(
                        &obj,
                        &body,
                        sch(),
                        "apps/v1",
                        managers.clone(),
                        step.manager,
                        "",
                        &none,
                        op == "force",
                    )
                    .map(|o| (o.object, o.managers)),
                };
                match (res, step.conflict) {
                    (Ok((o, m)), None) => {
                        obj = o;
                        managers = m;
                    }
                    (Err(e), Some(want)) => {
                        assert_eq!(e.to_string(), want, "{}: step {i}", case.name)
                    }
                    (Ok(_), Some(want)) => {
                        panic!("{}: step {i}: no conflict, wanted {want}", case.name)
                    }
                    (Err(e), None) => panic!("{}: step {i}: {e}", case.name),
                }
            }
            let want: Value = serde_yaml::from_str(case.object).unwrap();
            assert_eq!(obj, want, "{}", case.name);
            let got: Vec<(String, String)> = managers
                .values()
                .map(|o| (o.manager.clone(), o.set.to_json()))
                .collect();
            for (m, set) in case.managed {
                assert!(
                    got.iter().any(|(gm, gs)| gm == m && gs == set),
                    "{}: {m} should own {set}; got {got:?}",
                    case.name
                );
            }
            assert_eq!(got.len(), case.managed.len(), "{}: {got:?}", case.name);
        }
    }

    /// Two versions of a custom kind: `spec.size` at v1 is `spec.capacity` at v2 (a
    /// webhook-style rename).
    struct Renamed {
        v1: crate::registry::custom::node::Node,
        v2: crate::registry::custom::node::Node,
    }

    impl Renamed {
        fn new() -> Self {
            let node = |f: &str| {
                crate::registry::custom::node::compile(&json!({"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        f: {"type": "integer"}, "color": {"type": "string"}}}}}))
            };
            Renamed {
                v1: node("size"),
                v2: node("capacity"),
            }
        }
    }

    impl<'a> Versions<'a> for Renamed {
        fn schema(&'a self, api_version: &str) -> Option<Schema<'a>> {
            match api_version {
                "x.io/v1" => Some(Schema::CustomRoot(&self.v1)),
                "x.io/v2" => Some(Schema::CustomRoot(&self.v2)),
                _ => None,
            }
        }

        fn convert(&self, obj: &Value, api_version: &str) -> Result<Value, String> {
            let mut o = obj.clone();
            let (from, to) = match api_version {
                "x.io/v1" => ("capacity", "size"),
                _ => ("size", "capacity"),
            };
            if let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) {
                if let Some(v) = spec.remove(from) {
                    spec.insert(to.into(), v);
                }
            }
            o["apiVersion"] = json!(api_version);
            Ok(o)
        }
    }

    #[test]
    fn entries_are_read_and_pruned_at_their_versions() {
        let r = Renamed::new();
        let none = Set::new();
        let at = |v: &str| r.schema(v).unwrap();
        let cfg = |v: &str, spec: Value| json!({"apiVersion": v, "kind": "K", "spec": spec});
        // alice applies size and color at v1
        let a = apply_in(
            &json!({}),
            &cfg("x.io/v1", json!({"size": 1, "color": "red"})),
            at("x.io/v1"),
            "x.io/v1",
            Some(&r),
            Managers::new(),
            "alice",
            "",
            &none,
            false,
        )
        .unwrap();
        // bob changes the capacity at v2: that is alice's size at v1
        let live = r.convert(&a.object, "x.io/v2").unwrap();
        let e = apply_in(
            &live,
            &cfg("x.io/v2", json!({"capacity": 2})),
            at("x.io/v2"),
            "x.io/v2",
            Some(&r),
            a.managers.clone(),
            "bob",
            "",
            &none,
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"Apply failed with 1 conflict: conflict with "alice": .spec.size"#
        );
        // alice now applies at v2 without the capacity: pruned at her last version (v1),
        // where it is her size.
        let b = apply_in(
            &live,
            &cfg("x.io/v2", json!({"color": "red"})),
            at("x.io/v2"),
            "x.io/v2",
            Some(&r),
            a.managers.clone(),
            "alice",
            "",
            &none,
            false,
        )
        .unwrap();
        assert_eq!(b.object["spec"], json!({"color": "red"}));
        // an entry at a version the kind no longer has is dropped
        let mut m = a.managers.clone();
        m.values_mut()
            .for_each(|o| o.api_version = "x.io/v0".into());
        let (m, _) = update_in(
            &live,
            &cfg("x.io/v2", json!({"capacity": 5, "color": "red"})),
            at("x.io/v2"),
            "x.io/v2",
            Some(&r),
            m,
            "carol",
            "",
            &none,
        )
        .unwrap();
        assert_eq!(
            ids(&m),
            [manager_identifier(
                "carol",
                Operation::Update,
                "x.io/v2",
                ""
            )]
        );
    }
}
