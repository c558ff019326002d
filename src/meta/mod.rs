//! Pure apimachinery values: Status, field errors, selectors, name and ObjectMeta validation.
//! No I/O, no clock: everything here is a function of its inputs.

pub mod escape;
pub mod field_error;
pub mod fields;
pub mod labels;
pub mod status;
pub mod strict;
pub mod validation;
