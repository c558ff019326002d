//! In-process control loops that only the Raft leader runs: namespace deletion now, the
//! garbage collector and others later. They talk to the registry as a client would; leadership
//! is re-checked on every pass so a new leader takes over by itself.

pub mod bootstrap;
pub mod namespace;
