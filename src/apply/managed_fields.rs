//! `metadata.managedFields` as kube's field manager reads and writes it
//! (k8s.io/apimachinery `util/managedfields/internal`: `DecodeManagedFields`,
//! `encodeManagedFields`, `sortEncodedManagedFields`, the strip-meta manager).
//!
//! Entries decode into [`Managers`] (keyed by kube's manager identifier) plus their times;
//! encoding writes one entry per manager with Go's field order (`manager`, `operation`,
//! `apiVersion`, `time`, `fieldsType`, `fieldsV1`, `subresource`), `fieldsV1` in SMD's exact
//! order, and the entries sorted as kube sorts them (operation, then time, manager, apiVersion,
//! subresource). [`strip_meta`] removes the identity and system fields kube never records.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::fieldpath::{PathElement, Set};
use super::merge::{Managers, Operation, Owned};

/// Each manager's `time`, by identifier (absent: no time recorded).
pub type Times = BTreeMap<String, String>;

/// Reads `metadata.managedFields` (missing or null: none). Errors are kube's
/// `failed to decode managed fields: ...` causes.
pub fn decode(entries: Option<&Value>) -> Result<(Managers, Times), String> {
    let mut managers = Managers::new();
    let mut times = Times::new();
    let Some(list) = entries.and_then(Value::as_array) else {
        return Ok((managers, times));
    };
    for e in list {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let operation = match s("operation").as_str() {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            o => return Err(format!("unexpected operation {o:?}")),
        };
        if s("fieldsType") != "FieldsV1" {
            return Err(format!(
                "invalid fieldsType {:?}: expected FieldsV1",
                s("fieldsType")
            ));
        }
        let set = match e.get("fieldsV1") {
            Some(v) => Set::from_json(v).map_err(|e| e.to_string())?,
            None => Set::new(),
        };
        let owned = Owned {
            manager: s("manager"),
            operation,
            api_version: s("apiVersion"),
            subresource: s("subresource"),
            set,
        };
        let id = owned.identifier();
        if let Some(t) = e.get("time").and_then(Value::as_str) {
            times.insert(id.clone(), t.to_string());
        }
        managers.insert(id, owned);
    }
    Ok((managers, times))
}

/// Writes the entries, sorted as kube sorts them.
pub fn encode(managers: &Managers, times: &Times) -> Value {
    let mut rows: Vec<(&Owned, Option<&String>)> =
        managers.iter().map(|(id, o)| (o, times.get(id))).collect();
    // kube compares times at second precision; RFC 3339 UTC strings of equal form sort so.
    rows.sort_by(|(p, pt), (q, qt)| {
        p.operation
            .as_str()
            .cmp(q.operation.as_str())
            .then_with(|| seconds(*pt).cmp(&seconds(*qt)))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    Value::Array(
        rows.into_iter()
            .map(|(o, t)| {
                let mut m = Map::new();
                m.insert("manager".into(), json!(o.manager));
                m.insert("operation".into(), json!(o.operation.as_str()));
                m.insert("apiVersion".into(), json!(o.api_version));
                if let Some(t) = t {
                    m.insert("time".into(), json!(t));
                }
                m.insert("fieldsType".into(), json!("FieldsV1"));
                m.insert("fieldsV1".into(), o.set.to_value());
                if !o.subresource.is_empty() {
                    m.insert("subresource".into(), json!(o.subresource));
                }
                Value::Object(m)
            })
            .collect(),
    )
}

fn seconds(t: Option<&String>) -> String {
    // "2026-01-02T03:04:05Z" and "2026-01-02T03:04:05.123Z" both compare by their first 19
    // characters; no time sorts first (Unix 0 in kube).
    t.map(|t| t.chars().take(19).collect()).unwrap_or_default()
}

/// The paths kube's strip-meta manager removes from the writing manager's set.
pub fn strip_set() -> Set {
    let mut s = Set::new();
    for p in ["apiVersion", "kind", "metadata"] {
        s.insert(&[PathElement::field(p)]);
    }
    for f in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[PathElement::field("metadata"), PathElement::field(f)]);
    }
    s
}

/// `managers[id]` without the stripped paths (removed when nothing remains).
pub fn strip_meta(managers: &mut Managers, id: &str) {
    if let Some(o) = managers.get_mut(id) {
        o.set = o.set.difference(&strip_set());
        if o.set.is_empty() {
            managers.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_order() {
        let v = json!([
            {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2026-01-01T00:00:05Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:status": {"f:replicas": {}}}, "subresource": "status"},
            {"manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1",
             "time": "2026-01-01T00:00:09Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}},
            {"manager": "a", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2026-01-01T00:00:01Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:paused": {}}}}
        ]);
        let (m, t) = decode(Some(&v)).unwrap();
        assert_eq!(m.len(), 3);
        let out = encode(&m, &t);
        assert_eq!(
            out.to_string(),
            concat!(
                r#"[{"manager":"kubectl","operation":"Apply","apiVersion":"apps/v1","time":"2026-01-01T00:00:09Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}},"#,
                r#"{"manager":"a","operation":"Update","apiVersion":"apps/v1","time":"2026-01-01T00:00:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:paused":{}}}},"#,
                r#"{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","time":"2026-01-01T00:00:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:replicas":{}}},"subresource":"status"}]"#
            )
        );
        assert!(decode(Some(
            &json!([{"manager": "x", "operation": "Patch", "fieldsType": "FieldsV1"}])
        ))
        .is_err());
        assert!(decode(None).unwrap().0.is_empty());
    }

    #[test]
    fn strips_identity_fields() {
        let set = Set::from_json_str(
            r#"{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:a":{}},"f:name":{},"f:namespace":{}},"f:spec":{"f:replicas":{}}}"#,
        )
        .unwrap();
        let mut m = Managers::new();
        let o = Owned {
            manager: "k".into(),
            operation: Operation::Apply,
            api_version: "apps/v1".into(),
            subresource: String::new(),
            set,
        };
        let id = o.identifier();
        m.insert(id.clone(), o);
        strip_meta(&mut m, &id);
        assert_eq!(
            m[&id].set.to_json(),
            r#"{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:replicas":{}}}"#
        );
    }
}
