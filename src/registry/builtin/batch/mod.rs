//! The batch group's strategies.

pub mod cronjob;
pub mod job;
