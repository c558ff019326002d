//! Generated data, kept apart from hand-written code. Files with a generator in the repo
//! (`tests/generated.rs`, run with `RAFTER_REGENERATE=1 cargo test --test generated`) are
//! written from inputs that are in the repo or that the developer fetches
//! (`../shared/data/kubernetes-openapi/`, see `docs/generated.md`), and the same test fails
//! when a checked-in file is stale; `docs/generated.md` lists the ones whose generator is
//! still to be written. A new Kubernetes minor version is a regeneration.

pub mod openapi_descriptions;
pub mod openapi_facts;
pub mod protobuf_schema;
pub mod resources;
pub mod table_columns;
