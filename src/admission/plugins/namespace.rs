//! The namespace plugins: `NamespaceExists` (a namespaced object may only be created in an
//! existing namespace; the store's check, which also serves `NamespaceLifecycle`, does the
//! work) and `NamespaceAutoProvision` (a create in a missing namespace creates it first; not
//! on dry runs).

use serde_json::json;

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;
use crate::registry::object::WriteOptions;
use crate::registry::store::{ReadAt, Scope};

pub struct Exists;

#[async_trait::async_trait]
impl Plugin for Exists {
    fn name(&self) -> &'static str {
        "NamespaceExists"
    }
}

pub struct AutoProvision;

#[async_trait::async_trait]
impl Plugin for AutoProvision {
    fn name(&self) -> &'static str {
        "NamespaceAutoProvision"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if a.operation != Operation::Create
            || !a.resource.namespaced
            || a.namespace.is_empty()
            || a.dry_run
        {
            return Ok(());
        }
        let info = h.store.registry().builtin("", "v1", "namespaces");
        let scope = Scope {
            info: &info,
            namespace: None,
        };
        if h.store.get(scope, &a.namespace, ReadAt::Any).await.is_ok() {
            return Ok(());
        }
        let ns =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": a.namespace}});
        let opts = WriteOptions {
            now: jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
            ..Default::default()
        };
        match h.store.create(scope, ns, &opts).await {
            Ok(_) => Ok(()),
            Err(s) if s.code == 409 => Ok(()),
            Err(s) => Err(s),
        }
    }
}
