//! The batch group's strategies.

pub mod cron;
pub mod cronjob;
pub mod job;
pub mod job_status;
