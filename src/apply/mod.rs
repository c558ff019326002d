//! Patch application for PATCH requests.
//!
//! Today this holds the strategic merge patch ([`strategic`]); it will also hold server-side
//! apply (field sets, `managedFields`, conflicts) later. Everything here is pure: values in,
//! values or errors out. It knows nothing about HTTP, storage, admission or validation; schema
//! facts come from [`crate::openapi::facts`].

pub mod fieldpath;
pub mod merge;
pub mod strategic;
pub mod typed;
