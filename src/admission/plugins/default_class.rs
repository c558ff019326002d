//! The default-class plugins: `DefaultStorageClass` (a PersistentVolumeClaim created without a
//! storage class, neither `spec.storageClassName` nor the beta
//! `volume.beta.kubernetes.io/storage-class` annotation, gets the StorageClass annotated
//! `storageclass.kubernetes.io/is-default-class: "true"` (or the beta
//! `storageclass.beta.kubernetes.io/is-default-class`)) and `DefaultIngressClass` (an Ingress
//! created without `spec.ingressClassName` or the `kubernetes.io/ingress.class` annotation
//! gets the IngressClass annotated `ingressclass.kubernetes.io/is-default-class: "true"`).
//! With several defaults both pick the newest (by `creationTimestamp`, then the lowest name),
//! as kube does since v1.28; with none the object is left alone.

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;
use crate::registry::object::meta;

fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    meta(obj)
        .get("annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The newest of `classes` with one of `keys` set to `"true"`; ties go to the lowest name.
fn newest_default(classes: Vec<Value>, keys: &[&str]) -> Option<String> {
    let mut defaults: Vec<(String, String)> = classes
        .iter()
        .filter(|c| keys.iter().any(|k| annotation(c, k) == Some("true")))
        .map(|c| {
            let s = |k: &str| {
                meta(c)
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            (s("creationTimestamp"), s("name"))
        })
        .collect();
    // RFC 3339 UTC timestamps of one width order as text.
    defaults.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    defaults.into_iter().next().map(|(_, name)| name)
}

/// A request for an object of `group`/`kind` itself (no subresource).
fn is_kind(a: &Attributes, group: &str, kind: &str) -> bool {
    a.resource.group == group && a.kind() == kind && a.subresource.is_empty()
}

fn set_spec_field(obj: &mut Value, field: &str, value: String) {
    if !obj.get("spec").is_some_and(Value::is_object) {
        obj["spec"] = json!({});
    }
    obj["spec"][field] = json!(value);
}

pub struct DefaultStorageClass;

#[async_trait::async_trait]
impl Plugin for DefaultStorageClass {
    fn name(&self) -> &'static str {
        "DefaultStorageClass"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Create || !is_kind(a, "", "PersistentVolumeClaim") {
            return Ok(());
        }
        let Some(pvc) = a.object.as_mut() else {
            return Ok(());
        };
        // `helper.PersistentVolumeClaimHasClass`: an explicit "" counts as a class.
        let has_class = annotation(pvc, "volume.beta.kubernetes.io/storage-class").is_some()
            || pvc
                .pointer("/spec/storageClassName")
                .is_some_and(|v| !v.is_null());
        if has_class {
            return Ok(());
        }
        let classes = h.list("storage.k8s.io", "v1", "storageclasses", None).await;
        let keys = [
            "storageclass.kubernetes.io/is-default-class",
            "storageclass.beta.kubernetes.io/is-default-class",
        ];
        if let Some(name) = newest_default(classes, &keys) {
            set_spec_field(pvc, "storageClassName", name);
        }
        Ok(())
    }
}

pub struct DefaultIngressClass;

#[async_trait::async_trait]
impl Plugin for DefaultIngressClass {
    fn name(&self) -> &'static str {
        "DefaultIngressClass"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Create || !is_kind(a, "networking.k8s.io", "Ingress") {
            return Ok(());
        }
        let Some(ing) = a.object.as_mut() else {
            return Ok(());
        };
        let has_class = ing
            .pointer("/spec/ingressClassName")
            .is_some_and(|v| !v.is_null())
            || meta(ing)
                .get("annotations")
                .and_then(|m| m.get("kubernetes.io/ingress.class"))
                .is_some();
        if has_class {
            return Ok(());
        }
        let classes = h
            .list("networking.k8s.io", "v1", "ingressclasses", None)
            .await;
        if let Some(name) =
            newest_default(classes, &["ingressclass.kubernetes.io/is-default-class"])
        {
            set_spec_field(ing, "ingressClassName", name);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, created: &str, default: Option<&str>) -> Value {
        let mut c = json!({"metadata": {"name": name, "creationTimestamp": created}});
        if let Some(d) = default {
            c["metadata"]["annotations"] =
                json!({"storageclass.kubernetes.io/is-default-class": d});
        }
        c
    }

    #[test]
    fn the_newest_default_wins_then_the_lowest_name() {
        let keys = ["storageclass.kubernetes.io/is-default-class"];
        let t1 = "2026-01-01T00:00:00Z";
        let t2 = "2026-01-01T00:00:01Z";
        assert_eq!(newest_default(vec![class("a", t1, None)], &keys), None);
        assert_eq!(
            newest_default(vec![class("a", t1, Some("True"))], &keys),
            None
        );
        let all = vec![
            class("old", t1, Some("true")),
            class("zz", t2, Some("true")),
            class("new", t2, Some("true")),
            class("newest-but-not-default", t2, Some("false")),
        ];
        assert_eq!(newest_default(all, &keys).as_deref(), Some("new"));
    }
}
