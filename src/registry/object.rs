//! The vocabulary the store and its strategies share, with no behaviour of its own: access to
//! an object's `metadata`, its finalizers, which part of an object a write touches, and the
//! options every write carries. A leaf of the registry: it imports nothing of it.

use serde_json::{json, Map, Value};

/// A check the store runs on the object it is about to write (and the stored one, on
/// update), after defaulting and validation, before the write; `Err` refuses the write and
/// nothing is stored. The edge fills it for writes that need it (RBAC escalation checks;
/// admission later).
pub type Admit = std::sync::Arc<
    dyn Fn(
            &Value,
            Option<&Value>,
        ) -> futures::future::BoxFuture<'static, Result<(), crate::meta::status::Status>>
        + Send
        + Sync,
>;

/// The mutating admission of a write: receives the object about to be validated (and the
/// stored one, on update) and returns it, possibly changed; `Err` refuses the write.
pub type Mutate = std::sync::Arc<
    dyn Fn(
            Value,
            Option<Value>,
        )
            -> futures::future::BoxFuture<'static, Result<Value, crate::meta::status::Status>>
        + Send
        + Sync,
>;

/// An object written in the same transaction as an admitted write (a ResourceQuota with the
/// write's usage charged): the transaction commits only while `key` is still at
/// `mod_revision`, so concurrent writes on any replica never over-charge.
#[derive(Clone, Debug)]
pub struct Charged {
    pub key: Vec<u8>,
    pub mod_revision: i64,
    pub value: Value,
}

/// Computes the objects to write with an admitted object (and the stored one, on update);
/// `Err` refuses the write (a quota exceeded). Run again when the transaction loses a race.
pub type Charge = std::sync::Arc<
    dyn Fn(
            &Value,
            Option<&Value>,
        )
            -> futures::future::BoxFuture<'static, Result<Vec<Charged>, crate::meta::status::Status>>
        + Send
        + Sync,
>;

/// Options common to writes.
#[derive(Clone, Default)]
pub struct WriteOptions {
    pub dry_run: bool,
    pub field_manager: Option<String>,
    /// `now` as RFC 3339, settled once per request.
    pub now: String,
    /// Validating admission (and RBAC's escalation checks), run last before the write (on
    /// delete: with the object being deleted).
    pub admit: Option<Admit>,
    /// Mutating admission, run before validation.
    pub mutate: Option<Mutate>,
    /// Quota charging, computed after validating admission (dry runs included: its refusals
    /// are returned) and written with the object.
    pub charge: Option<Charge>,
    /// No namespace check on create (NamespaceLifecycle and NamespaceExists are off).
    pub skip_namespace_check: bool,
    /// Who makes the write (the authenticated user, after impersonation); `None` for the
    /// server's own writes. Strategies that record the requester read it on create.
    pub requester: Option<Requester>,
}

/// The user a request runs as, as a strategy sees it (kube's `user.Info` in the request
/// context).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requester {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: std::collections::BTreeMap<String, Vec<String>>,
}

impl std::fmt::Debug for WriteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteOptions")
            .field("dry_run", &self.dry_run)
            .field("field_manager", &self.field_manager)
            .field("now", &self.now)
            .field("admit", &self.admit.is_some())
            .field("mutate", &self.mutate.is_some())
            .field("charge", &self.charge.is_some())
            .field("skip_namespace_check", &self.skip_namespace_check)
            .field("requester", &self.requester)
            .finish()
    }
}

/// Which part of an object an update writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Main,
    Status,
    /// The namespace `/finalize` subresource (spec.finalizers only).
    Finalize,
    /// The CSR `/approval` subresource (status.conditions only).
    Approval,
    /// An [`Extra::Writes`](super::strategy::Extra::Writes) subresource (pods/resize, ...).
    Sub(&'static str),
    /// A registry-internal write of spec and status together (pods/binding), with the system
    /// fields of metadata still kept from the stored object.
    Whole,
}

/// An object's `metadata` (an empty map when it has none).
pub fn meta(obj: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    obj.get("metadata")
        .and_then(Value::as_object)
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

/// An object's `metadata`, created when missing or not an object.
pub fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

/// A string field of `metadata` (`""` when absent).
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    meta(obj).get(field).and_then(Value::as_str).unwrap_or("")
}

/// `metadata.finalizers` as strings.
pub fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)
        .get("finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
