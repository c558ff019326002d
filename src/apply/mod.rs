//! Patch application for PATCH requests: strategic merge patch ([`strategic`]) and server-side
//! apply, a port of sigs.k8s.io/structured-merge-diff's semantics: field paths and sets with
//! their `FieldsV1` encoding ([`fieldpath`]), schema-driven field sets / comparison / removal
//! ([`typed`]), merge, ownership and conflicts ([`merge`]), kube's `managedFields` encoding
//! ([`managed_fields`]) and kube's field-manager chain over them ([`manager`]: before-first-apply,
//! the kubectl last-applied migration, the cap on Update entries), with kube's scale handler
//! mapping entries between a parent and its Scale ([`scale`]). Other API versions reach
//! [`merge`] through its `Versions` converter. Everything here is pure:
//! values in, values or errors out. It knows nothing about HTTP, storage, admission or
//! validation; schema facts come from [`crate::openapi::facts`] and custom resources' schema
//! nodes. The scenario table (`scenarios`, test-only) runs the YAML scenarios of
//! `tests/data/apply/`.

pub mod fieldpath;
pub mod managed_fields;
pub mod manager;
pub mod merge;
pub mod scale;
mod scenarios;
pub mod strategic;
pub mod typed;
