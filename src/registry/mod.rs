//! The registry: the resource table, the generic store with per-resource strategies, field
//! selectors, managedFields bookkeeping, discovery documents and Table printers. The only
//! place where storage errors become API `Status` values.

pub mod allocate;
pub mod deletion;
pub mod discovery;
pub mod field_selectors;
pub mod managed;
pub mod object;
pub mod resources;
pub mod store;
pub mod strategy;
pub mod table;
