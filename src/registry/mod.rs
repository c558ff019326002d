//! The registry: the runtime registry of served resources (`catalog`, entries in `resource`),
//! the static table of built-in resources and their strategies (`resources`, `builtin`), the
//! generic store, field selectors, managedFields bookkeeping, discovery documents and Table
//! printers. The only place where storage errors become API `Status` values.

pub mod allocate;
pub mod builtin;
pub mod catalog;
pub mod custom;
pub mod deletion;
pub mod discovery;
pub mod encoding;
pub mod encryption;
pub mod field_selectors;
pub mod jsonpath;
pub mod managed;
pub mod migrate;
pub mod object;
pub mod prepare;
pub mod printer_columns;
pub mod quota;
pub mod resource;
pub mod resource_info;
pub mod resources;
pub mod runtime_config;
pub mod store;
pub mod strategy;
pub mod table;
pub mod ttl;

pub use catalog::{Catalog, Registry};
pub use resource::Resource;
