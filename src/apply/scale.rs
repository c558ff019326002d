//! kube's `ScaleHandler` (k8s.io/apimachinery `util/managedfields/scalehandler.go`): the
//! `managedFields` of a `/scale` write are kept on the parent, mapped between the parent's
//! replicas field and the Scale object's `.spec.replicas`.
//!
//! * [`to_subresource`]: the parent's entries that own its replicas field become entries of the
//!   Scale object (same manager and operation, apiVersion `autoscaling/v1`, owning only
//!   `.spec.replicas`); the others are left out. The scale endpoint's field manager then runs
//!   on the Scale object with these entries.
//! * [`to_parent`]: the Scale object's entries after the write folded back: a parent entry whose
//!   manager no longer owns `.spec.replicas` on the Scale loses the parent's replicas field;
//!   every Scale entry owning `.spec.replicas` becomes a parent entry at the parent's apiVersion
//!   owning its replicas field. As kube does, such an entry keeps the parent's time for the
//!   same manager identifier (an Update entry's identifier names `autoscaling/v1`, so it has
//!   none: kube writes scale Update entries without a time).
//!
//! Parent entries of an apiVersion the mapping does not know are dropped; a version known
//! without a replicas field (a custom resource version without a scale subresource) keeps its
//! entries as they are. Pure.

use super::fieldpath::{Path, PathElement, Set};
use super::managed_fields::Times;
use super::merge::{Managers, Owned};

/// The Scale object's apiVersion.
pub const SCALE_API_VERSION: &str = "autoscaling/v1";

/// What the parent's replicas field is at one apiVersion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replicas {
    /// A version the parent does not serve: its entries are dropped.
    Unknown,
    /// A version without a replicas field: its entries are kept as they are.
    None,
    /// The replicas field at this version (`.spec.replicas`).
    At(Path),
}

/// `.spec.replicas` of the Scale object.
pub fn scale_replicas() -> Path {
    vec![PathElement::field("spec"), PathElement::field("replicas")]
}

/// A field path from a JSONPath-like `.spec.replicas` (a scale subresource's
/// `specReplicasPath`).
pub fn path_of(dotted: &str) -> Path {
    dotted
        .trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .map(PathElement::field)
        .collect()
}

fn only(path: &Path) -> Set {
    let mut s = Set::new();
    s.insert(path);
    s
}

/// kube's `ToSubresource`: the parent's entries as the Scale object's.
pub fn to_subresource(
    parent: &Managers,
    parent_times: &Times,
    mapping: &dyn Fn(&str) -> Replicas,
) -> (Managers, Times) {
    let mut out = Managers::new();
    let mut times = Times::new();
    for (id, o) in parent {
        let Replicas::At(path) = mapping(&o.api_version) else {
            continue;
        };
        if !o.set.has(&path) {
            continue;
        }
        out.insert(
            id.clone(),
            Owned {
                manager: o.manager.clone(),
                operation: o.operation,
                api_version: SCALE_API_VERSION.into(),
                subresource: o.subresource.clone(),
                set: only(&scale_replicas()),
            },
        );
        if let Some(t) = parent_times.get(id) {
            times.insert(id.clone(), t.clone());
        }
    }
    (out, times)
}

/// kube's `ToParent`: the Scale object's entries after the write (`scale`) merged into the
/// parent's (`parent`, at the time the write began); `api_version` is the parent's version the
/// write was made at, with its replicas field `replicas`.
pub fn to_parent(
    parent: &Managers,
    parent_times: &Times,
    scale: &Managers,
    api_version: &str,
    replicas: &Path,
    mapping: &dyn Fn(&str) -> Replicas,
) -> (Managers, Times) {
    let mut scale = scale.clone();
    let mut out = Managers::new();
    let mut times = Times::new();
    let keep = |id: &String, o: &Owned, out: &mut Managers, times: &mut Times| {
        out.insert(id.clone(), o.clone());
        if let Some(t) = parent_times.get(id) {
            times.insert(id.clone(), t.clone());
        }
    };
    for (id, o) in parent {
        let path = match mapping(&o.api_version) {
            Replicas::Unknown => continue,
            Replicas::None => {
                keep(id, o, &mut out, &mut times);
                continue;
            }
            Replicas::At(p) => p,
        };
        if !o.set.has(&path) {
            keep(id, o, &mut out, &mut times);
            continue;
        }
        if scale.remove(id).is_some() {
            // Still the Scale's owner of replicas: kept as it is.
            keep(id, o, &mut out, &mut times);
        } else {
            // The write took replicas away from this manager.
            let set = o.set.difference(&only(&path));
            if !set.is_empty() {
                keep(id, &Owned { set, ..o.clone() }, &mut out, &mut times);
            }
        }
    }
    for (id, o) in scale {
        if !o.set.has(&scale_replicas()) {
            continue;
        }
        out.insert(
            id.clone(),
            Owned {
                manager: o.manager,
                operation: o.operation,
                api_version: api_version.into(),
                subresource: o.subresource,
                set: only(replicas),
            },
        );
        match parent_times.get(&id) {
            Some(t) => times.insert(id, t.clone()),
            None => times.remove(&id),
        };
    }
    (out, times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::managed_fields::{decode, encode};
    use serde_json::json;

    fn mapping(v: &str) -> Replicas {
        match v {
            "apps/v1" => Replicas::At(path_of(".spec.replicas")),
            _ => Replicas::Unknown,
        }
    }

    // kube's TestScaleHandler shapes: an applier owning replicas and the image, then a scale.
    fn parent() -> serde_json::Value {
        json!([
            {"manager": "apply_test", "operation": "Apply", "apiVersion": "apps/v1",
             "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {}}}},
            {"manager": "other", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2026-01-01T00:00:01Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {}}}},
            {"manager": "old", "operation": "Update", "apiVersion": "apps/v1beta1",
             "time": "2026-01-01T00:00:01Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}}
        ])
    }

    #[test]
    fn parent_entries_owning_replicas_become_scale_entries() {
        let (m, t) = decode(Some(&parent())).unwrap();
        let (s, st) = to_subresource(&m, &t, &mapping);
        assert_eq!(
            encode(&s, &st),
            json!([{"manager": "apply_test", "operation": "Apply", "apiVersion": "autoscaling/v1",
                    "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}}}}])
        );
    }

    #[test]
    fn a_scale_update_takes_replicas_from_the_parent_entries() {
        let (m, t) = decode(Some(&parent())).unwrap();
        // After the scale endpoint's Update by "scaler": apply_test lost .spec.replicas.
        let scale = json!([
            {"manager": "scaler", "operation": "Update", "apiVersion": "autoscaling/v1",
             "time": "2026-01-02T00:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"}
        ]);
        let (s, _) = decode(Some(&scale)).unwrap();
        let (p, pt) = to_parent(&m, &t, &s, "apps/v1", &path_of(".spec.replicas"), &mapping);
        assert_eq!(
            encode(&p, &pt),
            json!([
                {"manager": "apply_test", "operation": "Apply", "apiVersion": "apps/v1",
                 "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:template": {}}}},
                {"manager": "scaler", "operation": "Update", "apiVersion": "apps/v1",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
                 "subresource": "scale"},
                {"manager": "other", "operation": "Update", "apiVersion": "apps/v1",
                 "time": "2026-01-01T00:00:01Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {}}}}
            ])
        );
    }

    #[test]
    fn a_shared_owner_keeps_its_parent_entry() {
        let (m, t) = decode(Some(&parent())).unwrap();
        let (s, st) = to_subresource(&m, &t, &mapping);
        let (p, pt) = to_parent(&m, &t, &s, "apps/v1", &path_of(".spec.replicas"), &mapping);
        let (want, wt) = decode(Some(&parent())).unwrap();
        let mut want = want;
        // the unknown version's entry is dropped
        want.retain(|_, o| o.api_version == "apps/v1");
        assert_eq!(encode(&p, &pt), encode(&want, &wt));
        assert_eq!(st.len(), 1);
    }
}
