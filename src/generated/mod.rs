//! Generated data, kept apart from hand-written code: every file here is written by a
//! generator that lives in the repo (`tests/generated.rs`, run with `RAFTER_REGENERATE=1
//! cargo test --test generated`) from inputs that are in the repo or that the developer
//! fetches (`../shared/data/kubernetes-openapi/`, see `docs/generated.md`); the same test fails
//! when a checked-in file is stale. A new Kubernetes minor version is a regeneration.

pub mod openapi_descriptions;
