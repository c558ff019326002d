//! `OwnerReferencesPermissionEnforcement`: changing an object's `metadata.ownerReferences`
//! needs `delete` on the object, and making a reference block its owner's deletion
//! (`blockOwnerDeletion: true` on a new reference, or on one that did not block) needs `update`
//! on the owner's `finalizers` subresource. `pods/status` is exempt (the status strategy keeps
//! references unchanged there), as in kube.

use serde_json::Value;

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::authz::ResourceAttributes;
use crate::meta::status::Status;

pub struct OwnerReferencesPermissionEnforcement;

/// The authorizer's reason and error as kube prints them for a plain denial.
const DENIED: &str = ": , <nil>";

fn refs(obj: Option<&Value>) -> Vec<Value> {
    obj.and_then(|o| o.pointer("/metadata/ownerReferences"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn blocks(r: &Value) -> bool {
    r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true)
}

/// References newly made blocking: new blocking ones, or ones (by uid) that did not block.
fn newly_blocking(new: &[Value], old: Option<&[Value]>) -> Vec<Value> {
    new.iter()
        .filter(|r| blocks(r))
        .filter(|r| match old {
            None => true,
            Some(old) => !old
                .iter()
                .any(|o| o.get("uid") == r.get("uid") && blocks(o)),
        })
        .cloned()
        .collect()
}

/// `schema.ParseGroupVersion`.
fn group_version(api_version: &str) -> Result<(&str, &str), String> {
    match api_version.split('/').collect::<Vec<_>>()[..] {
        [""] => Ok(("", "")),
        [v] => Ok(("", v)),
        [g, v] => Ok((g, v)),
        _ => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

#[async_trait::async_trait]
impl Plugin for OwnerReferencesPermissionEnforcement {
    fn name(&self) -> &'static str {
        "OwnerReferencesPermissionEnforcement"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if !matches!(a.operation, Operation::Create | Operation::Update)
            || (a.resource.group.is_empty()
                && a.kind() == "Pod"
                && a.subresource.as_str() == "status")
        {
            return Ok(());
        }
        let new = refs(a.object.as_ref());
        let old = a.old_object.as_ref().map(|o| refs(Some(o)));
        let changing = match &old {
            None => !new.is_empty(),
            Some(old) => *old != new,
        };
        if !changing {
            return Ok(());
        }
        let ns = (!a.namespace.is_empty()).then_some(a.namespace.as_str());
        let may_delete = h
            .allowed(
                &a.user,
                ResourceAttributes {
                    verb: "delete",
                    group: &a.resource.group,
                    version: &a.resource.version,
                    resource: &a.resource.resource,
                    subresource: (!a.subresource.is_empty()).then_some(a.subresource.as_str()),
                    namespace: ns,
                    name: Some(&a.name),
                    field_selector: None,
                },
            )
            .await;
        if !may_delete {
            return Err(a.forbidden(format!(
                "cannot set an ownerRef on a resource you can't delete{DENIED}"
            )));
        }
        let catalog = h.store.registry().snapshot();
        for r in newly_blocking(&new, old.as_deref()) {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let (api_version, kind, name) = (s("apiVersion"), s("kind"), s("name"));
            let mapping = group_version(&api_version).and_then(|(g, v)| {
                catalog
                    .all()
                    .iter()
                    .find(|x| x.group == g && x.version == v && x.kind == kind)
                    .map(|x| (g, v, x.resource.clone(), x.namespaced))
                    .ok_or_else(|| {
                        format!("no matches for kind {kind:?} in version {api_version:?}")
                    })
            });
            let (group, version, resource, namespaced) = match mapping {
                Ok(m) => m,
                Err(e) => {
                    return Err(a.forbidden(format!(
                        "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion {api_version} Kind {kind}: {e}"
                    )))
                }
            };
            let may_finalize = h
                .allowed(
                    &a.user,
                    ResourceAttributes {
                        verb: "update",
                        group,
                        version,
                        resource: &resource,
                        subresource: Some("finalizers"),
                        // A namespaced owner is in the dependent's namespace.
                        namespace: if namespaced { ns } else { None },
                        name: Some(&name),
                        field_selector: None,
                    },
                )
                .await;
            if !may_finalize {
                return Err(a.forbidden(format!(
                    "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on{DENIED}"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocking_references_and_group_versions() {
        let r = |uid: &str, b: Option<bool>| {
            let mut v = json!({"uid": uid, "name": uid});
            if let Some(b) = b {
                v["blockOwnerDeletion"] = json!(b);
            }
            v
        };
        let new = vec![r("a", Some(true)), r("b", Some(true)), r("c", None)];
        assert_eq!(newly_blocking(&new, None).len(), 2);
        let old = vec![r("a", Some(true)), r("b", Some(false))];
        assert_eq!(newly_blocking(&new, Some(&old)), vec![r("b", Some(true))]);
        assert_eq!(group_version("v1"), Ok(("", "v1")));
        assert_eq!(group_version("apps/v1"), Ok(("apps", "v1")));
        assert!(group_version("a/b/c").is_err());
    }
}
