//! Library side of the Rafter chaos harness: checkers and fault-injecting network.

pub mod net;
pub mod check;
