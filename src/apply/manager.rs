//! kube's field manager: the chain of steps every write goes through to keep
//! `metadata.managedFields` (k8s.io/apimachinery `util/managedfields/internal`,
//! `NewDefaultFieldManager`), over the pure merge and ownership rules of [`super::merge`].
//!
//! Outermost first, as kube wraps them:
//! * **last-applied updater**: an apply by the manager `kubectl` on an object that carries
//!   `kubectl.kubernetes.io/last-applied-configuration` rewrites that annotation to the applied
//!   configuration, so a later client-side `kubectl apply` diffs against it;
//! * **last-applied manager**: an apply by `kubectl` whose conflicts are all fields the
//!   annotation recorded with the live value (the client-side → server-side migration) is
//!   retried with force;
//! * **skip non-applied**: an object with no entries is not tracked by updates (after a reset,
//!   until the next apply), except on create; its first apply records the fields it already had
//!   for the manager `before-first-apply`;
//! * **cap**: more than [`MAX_UPDATE_MANAGERS`] Update entries fold the oldest into
//!   `ancient-changes` entries, one per apiVersion;
//! * **managed-fields updater / strip-meta / structured merge**: the operation itself, with the
//!   time stamped when the object (apply) or the manager's entry (update) changed, and identity
//!   and system metadata never owned.
//!
//! Entries are decoded from the live object (an update may also send its own, or `[]` / `[{}]`
//! to reset them; a subresource write always keeps the live ones). Pure: values in and out.

use serde_json::{json, Map, Value};

use super::fieldpath::Set;
use super::managed_fields::{self, Times};
use super::merge::{self, ApplyError, Conflict, Managers, Operation, Owned};
use super::typed::{compare, to_field_set, Schema};

/// kube's `DefaultMaxUpdateManagers`.
pub const MAX_UPDATE_MANAGERS: usize = 10;
/// The manager that folds the oldest Update entries beyond the cap.
pub const ANCIENT_CHANGES: &str = "ancient-changes";
/// The manager that owns what an object held before its first apply.
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";
/// kubectl's client-side apply record.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// kube's total annotation size limit (`TotalAnnotationSizeLimitB`).
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// The field manager of one endpoint: a resource (or its subresource) at one API version.
#[derive(Debug, Clone)]
pub struct FieldManager<'a> {
    pub schema: Schema<'a>,
    /// The version writes are recorded at (`apps/v1`).
    pub api_version: String,
    /// `""` for the resource itself, else `status` or `scale`.
    pub subresource: String,
    /// Fields this endpoint resets (kube's `ResetFieldsStrategy`): never owned, never conflicting.
    pub reset: Set,
    /// The kind's other versions, when other managers' entries are read at theirs (custom
    /// resources; `None`: every entry is read at this version).
    pub versions: Option<&'a dyn merge::Versions<'a>>,
    /// The kind's empty object as kube's type prints it (what a create compares against and
    /// what `before-first-apply` owns relative to).
    pub zero: Value,
}

/// Why [`FieldManager::apply`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManagerError {
    /// Merge, ownership or schema: kube's 409 (conflicts) or 500.
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// The live object's entries do not decode (kube: 500 `failed to decode managed fields`).
    #[error("failed to decode managed fields: {0}")]
    Decode(String),
}

fn meta(v: &Value) -> Option<&Map<String, Value>> {
    v.get("metadata").and_then(Value::as_object)
}

fn meta_mut(v: &mut Value) -> &mut Map<String, Value> {
    if !v.is_object() {
        *v = json!({});
    }
    let m = v
        .as_object_mut()
        .expect("object")
        .entry("metadata")
        .or_insert_with(|| json!({}));
    if !m.is_object() {
        *m = json!({});
    }
    m.as_object_mut().expect("object")
}

/// kube's `isResetManagedFields`: `managedFields: []` or `[{}]`.
pub fn is_reset(obj: &Value) -> bool {
    match meta(obj)
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
    {
        Some(a) => a.is_empty() || (a.len() == 1 && a[0].as_object().is_some_and(Map::is_empty)),
        None => false,
    }
}

fn without_managed(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    v
}

fn decode_of(v: &Value) -> Result<(Managers, Times), String> {
    managed_fields::decode(meta(v).and_then(|m| m.get("managedFields")))
}

fn set_entries(obj: &mut Value, managers: &Managers, times: &Times) {
    if managers.is_empty() {
        if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
    } else {
        meta_mut(obj).insert(
            "managedFields".into(),
            managed_fields::encode(managers, times),
        );
    }
}

impl FieldManager<'_> {
    /// kube's `UpdateNoErrors`: records a non-apply write from `live` (the stored object, or
    /// [`FieldManager::zero`] on create) to `new` for `manager`, in `new`'s `managedFields`.
    /// When the objects do not fit the schema the live entries are kept.
    pub fn update(&self, live: &Value, new: &mut Value, manager: &str, now: &str) {
        // decodeLiveOrNew: a subresource keeps the live entries; `[]`/`[{}]` resets; entries
        // sent that are empty or do not decode give way to the live ones.
        let decoded = if !self.subresource.is_empty() {
            decode_of(live)
        } else if is_reset(new) {
            Ok(Default::default())
        } else {
            match decode_of(new) {
                Ok((m, t)) if !m.is_empty() => Ok((m, t)),
                _ => decode_of(live),
            }
        };
        let (managers, times) = decoded.unwrap_or_default();
        let live_entries = meta(live).and_then(|m| m.get("managedFields")).cloned();
        let stripped_new = without_managed(new);
        match self.update_managers(
            &without_managed(live),
            &stripped_new,
            managers,
            times,
            manager,
            now,
        ) {
            Ok((managers, times)) => {
                *new = stripped_new;
                set_entries(new, &managers, &times);
            }
            Err(_) => {
                *new = stripped_new;
                if let Some(e) = live_entries {
                    meta_mut(new).insert("managedFields".into(), e);
                }
            }
        }
    }

    /// The entries after an update (skip-non-applied, cap, then the update itself).
    fn update_managers(
        &self,
        live: &Value,
        new: &Value,
        managers: Managers,
        times: Times,
        manager: &str,
        now: &str,
    ) -> Result<(Managers, Times), ApplyError> {
        let creating = meta(live)
            .and_then(|m| m.get("uid"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty();
        if managers.is_empty() && !creating {
            return Ok((managers, times));
        }
        let (managers, times) = self.tracked_update(live, new, managers, times, manager, now)?;
        Ok(cap_update_managers(managers, times))
    }

    /// The managed-fields updater over strip-meta and the structured merge.
    fn tracked_update(
        &self,
        live: &Value,
        new: &Value,
        managers: Managers,
        mut times: Times,
        manager: &str,
        now: &str,
    ) -> Result<(Managers, Times), ApplyError> {
        let (mut managers, changed) = merge::update_in(
            live,
            new,
            self.schema,
            &self.api_version,
            self.versions,
            managers,
            manager,
            &self.subresource,
            &self.reset,
        )?;
        let id = merge::manager_identifier(
            manager,
            Operation::Update,
            &self.api_version,
            &self.subresource,
        );
        managed_fields::strip_meta(&mut managers, &id);
        if changed && managers.contains_key(&id) {
            times.insert(id, now.to_string());
        }
        times.retain(|k, _| managers.contains_key(k));
        Ok((managers, times))
    }

    /// An apply of `config` by `manager` onto `live` (the stored object, or
    /// [`FieldManager::zero`] when creating): the merged object with its `managedFields`.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, ManagerError> {
        let (managers, times) = decode_of(live).map_err(ManagerError::Decode)?;
        let live = without_managed(live);
        let first = self.applied(
            &live,
            config,
            managers.clone(),
            times.clone(),
            manager,
            force,
            now,
        );
        let (mut obj, managers, times) = match first {
            Err(ApplyError::Conflicts(conflicts)) if manager == "kubectl" => {
                // The last-applied manager: conflicts on fields kubectl's client-side apply
                // recorded (with the live value) are the migration, not a conflict.
                match self.allowed_from_last_applied(&live) {
                    None => return Err(ApplyError::Conflicts(conflicts).into()),
                    Some(allowed) => {
                        let left: Vec<Conflict> = conflicts
                            .into_iter()
                            .filter(|c| !allowed.has(&c.path))
                            .collect();
                        if !left.is_empty() {
                            return Err(ApplyError::Conflicts(left).into());
                        }
                        self.applied(&live, config, managers, times, manager, true, now)?
                    }
                }
            }
            other => other?,
        };
        // The last-applied updater.
        if manager == "kubectl" && has_last_applied(&obj) {
            set_last_applied(&mut obj, config);
        }
        set_entries(&mut obj, &managers, &times);
        Ok(obj)
    }

    /// Skip-non-applied, then the apply with its time stamp.
    #[allow(clippy::too_many_arguments)]
    fn applied(
        &self,
        live: &Value,
        config: &Value,
        managers: Managers,
        times: Times,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<(Value, Managers, Times), ApplyError> {
        let (managers, mut times) = if managers.is_empty() {
            // What the object holds before its first apply belongs to `before-first-apply`.
            let (m, t) =
                self.tracked_update(&self.zero, live, managers, times, BEFORE_FIRST_APPLY, now)?;
            cap_update_managers(m, t)
        } else {
            (managers, times)
        };
        let out = merge::apply_in(
            live,
            config,
            self.schema,
            &self.api_version,
            self.versions,
            managers,
            manager,
            &self.subresource,
            &self.reset,
            force,
        )?;
        let mut managers = out.managers;
        let id = merge::manager_identifier(
            manager,
            Operation::Apply,
            &self.api_version,
            &self.subresource,
        );
        managed_fields::strip_meta(&mut managers, &id);
        let object = if out.changed {
            times.insert(id, now.to_string());
            out.object
        } else {
            live.clone()
        };
        times.retain(|k, _| managers.contains_key(k));
        Ok((object, managers, times))
    }

    /// The fields of the last-applied annotation that still hold their live value (kube's
    /// `allowedConflictsFromLastApplied`); `None` when there is no usable annotation.
    fn allowed_from_last_applied(&self, live: &Value) -> Option<Set> {
        let text = meta(live)?
            .get("annotations")?
            .get(LAST_APPLIED)?
            .as_str()
            .filter(|s| !s.is_empty())?;
        let last: Value = serde_json::from_str(text).ok()?;
        if last.get("apiVersion").and_then(Value::as_str) != Some(self.api_version.as_str()) {
            return None;
        }
        let set = to_field_set(&last, self.schema).ok()?;
        let cmp = compare(&last, live, self.schema).ok()?;
        Some(
            set.difference(&cmp.modified)
                .difference(&cmp.added)
                .difference(&cmp.removed),
        )
    }
}

fn has_last_applied(obj: &Value) -> bool {
    meta(obj)
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// kube's `buildLastApplied` + `SetLastApplied`: the configuration without the annotation, as
/// Go encodes an unstructured object (sorted keys, a trailing newline); dropped when the
/// annotations would exceed their size limit.
fn set_last_applied(obj: &mut Value, config: &Value) {
    let mut cfg = config.clone();
    if let Some(a) = cfg
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        a.remove(LAST_APPLIED);
    }
    let text = format!("{}\n", crate::meta::sorted_keys(&cfg));
    let annotations = meta_mut(obj)
        .entry("annotations")
        .or_insert_with(|| json!({}));
    let Some(a) = annotations.as_object_mut() else {
        return;
    };
    a.insert(LAST_APPLIED.into(), Value::String(text));
    let size: usize = a
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > ANNOTATIONS_LIMIT {
        a.remove(LAST_APPLIED);
    }
}

/// kube's `capUpdateManagers`: beyond [`MAX_UPDATE_MANAGERS`] Update entries, the oldest (by
/// second, then identifier) are folded into one `ancient-changes` entry per apiVersion, which
/// takes the time of the newest entry folded into it.
pub fn cap_update_managers(mut managers: Managers, mut times: Times) -> (Managers, Times) {
    let mut updaters: Vec<String> = managers
        .iter()
        .filter(|(_, o)| o.operation == Operation::Update)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return (managers, times);
    }
    let secs = |id: &String| {
        times
            .get(id)
            .map(|t| t.chars().take(19).collect::<String>())
            .unwrap_or_default()
    };
    updaters.sort_by(|a, b| secs(a).cmp(&secs(b)).then_with(|| a.cmp(b)));
    let mut first_of_version: std::collections::BTreeMap<String, String> = Default::default();
    let mut length = updaters.len();
    for id in &updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(owned) = managers.get(id).cloned() else {
            continue;
        };
        let version = owned.api_version.clone();
        let bucket = merge::manager_identifier(ANCIENT_CHANGES, Operation::Update, &version, "");
        match first_of_version.get(&version) {
            Some(first) => {
                if !managers.contains_key(&bucket) {
                    if let Some(mut s) = managers.remove(first) {
                        s.manager = ANCIENT_CHANGES.into();
                        s.subresource = String::new();
                        managers.insert(bucket.clone(), s);
                    }
                }
                let merged = managers
                    .get(&bucket)
                    .map(|b| owned.set.union(&b.set))
                    .unwrap_or_else(|| owned.set.clone());
                managers.insert(
                    bucket.clone(),
                    Owned {
                        manager: ANCIENT_CHANGES.into(),
                        operation: Operation::Update,
                        api_version: version.clone(),
                        subresource: String::new(),
                        set: merged,
                    },
                );
                managers.remove(id);
                length -= 1;
                match times.get(id).cloned() {
                    Some(t) => times.insert(bucket, t),
                    None => times.remove(&bucket),
                };
            }
            None => {
                first_of_version.insert(version, id.clone());
            }
        }
    }
    times.retain(|k, _| managers.contains_key(k));
    (managers, times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm_manager() -> FieldManager<'static> {
        FieldManager {
            schema: Schema::builtin("", "v1", "ConfigMap").unwrap(),
            api_version: "v1".into(),
            subresource: String::new(),
            reset: Set::new(),
            versions: None,
            zero: json!({"metadata": {"creationTimestamp": null}}),
        }
    }

    fn names(obj: &Value) -> Vec<String> {
        obj["metadata"]["managedFields"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        format!(
                            "{}/{}",
                            e["manager"].as_str().unwrap(),
                            e["operation"].as_str().unwrap()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    const T: &str = "2026-01-01T00:00:00Z";

    #[test]
    fn create_update_reset_and_untracked_updates() {
        let fm = cm_manager();
        let mut obj = json!({"metadata": {"name": "a", "uid": "u"}, "data": {"k": "v"}});
        fm.update(&fm.zero, &mut obj, "creator", T);
        assert_eq!(names(&obj), ["creator/Update"]);
        // An update by another manager takes what it changed.
        let mut next = obj.clone();
        next["data"]["k"] = json!("w");
        fm.update(&obj, &mut next, "editor", T);
        assert_eq!(names(&next), ["creator/Update", "editor/Update"]);
        // `[{}]` resets; later updates of the untracked object record nothing.
        let mut reset = next.clone();
        reset["metadata"]["managedFields"] = json!([{}]);
        fm.update(&next, &mut reset, "editor", T);
        assert!(reset["metadata"].get("managedFields").is_none());
        let mut again = reset.clone();
        again["data"]["k"] = json!("x");
        fm.update(&reset, &mut again, "editor", T);
        assert!(again["metadata"].get("managedFields").is_none());
        // ...until an apply, which gives what was there to before-first-apply.
        let out = fm
            .apply(
                &again,
                &json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"n": "1"}}),
                "ssa",
                false,
                T,
            )
            .unwrap();
        assert_eq!(names(&out), ["ssa/Apply", "before-first-apply/Update"]);
        assert_eq!(out["data"], json!({"k": "x", "n": "1"}));
    }

    #[test]
    fn kubectl_migrates_from_client_side_apply() {
        let fm = cm_manager();
        let last = "{\"apiVersion\":\"v1\",\"data\":{\"k\":\"v\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"name\":\"a\"}}\n";
        let mut live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "uid": "u", "annotations": {LAST_APPLIED: last}},
            "data": {"k": "v"}});
        fm.update(&fm.zero.clone(), &mut live, "kubectl-client-side-apply", T);
        let cfg = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "changed"}});
        // Another manager than kubectl conflicts.
        let err = fm.apply(&live, &cfg, "other", false, T).unwrap_err();
        assert!(
            err.to_string()
                .contains("conflict with \"kubectl-client-side-apply\" using v1: .data.k"),
            "{err}"
        );
        // kubectl takes over what the annotation recorded with the live value...
        let out = fm.apply(&live, &cfg, "kubectl", false, T).unwrap();
        assert_eq!(out["data"]["k"], "changed");
        // ...and the annotation now records the applied configuration, as Go encodes it.
        assert_eq!(
            out["metadata"]["annotations"][LAST_APPLIED],
            "{\"apiVersion\":\"v1\",\"data\":{\"k\":\"changed\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n"
        );
        // A field whose live value differs from the annotation's still conflicts.
        let mut drifted = live.clone();
        drifted["data"]["k"] = json!("drift");
        let mut d2 = drifted.clone();
        fm.update(&live, &mut d2, "someone", T);
        let err = fm.apply(&d2, &cfg, "kubectl", false, T).unwrap_err();
        assert!(
            err.to_string()
                .contains("conflict with \"someone\" using v1: .data.k"),
            "{err}"
        );
    }

    #[test]
    fn cap_folds_the_oldest_per_version() {
        let mut managers = Managers::new();
        let mut times = Times::new();
        for i in 0..12 {
            let o = Owned {
                manager: format!("m{i:02}"),
                operation: Operation::Update,
                api_version: if i == 1 { "v2".into() } else { "v1".into() },
                subresource: String::new(),
                set: {
                    let mut s = Set::new();
                    s.insert(&[super::super::fieldpath::PathElement::field(&format!(
                        "f{i}"
                    ))]);
                    s
                },
            };
            times.insert(o.identifier(), format!("2026-01-01T00:00:{i:02}Z"));
            managers.insert(o.identifier(), o);
        }
        let (m, t) = cap_update_managers(managers, times);
        assert_eq!(m.len(), 10);
        let bucket = merge::manager_identifier(ANCIENT_CHANGES, Operation::Update, "v1", "");
        // m00 (v1) is the first of its version, m01 is v2 (first of v2), m02 and m03 fold
        // into the v1 bucket with m00.
        assert_eq!(
            m[&bucket].set.to_json(),
            r#"{"f:f0":{},"f:f2":{},"f:f3":{}}"#
        );
        assert_eq!(t[&bucket], "2026-01-01T00:00:03Z");
        assert!(m.values().any(|o| o.manager == "m01"));
    }
}
