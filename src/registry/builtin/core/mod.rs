//! The core (`""`) group's strategies.

pub mod configmap;
pub mod endpoints;
pub mod event;
pub mod limits;
pub mod namespace;
pub mod node;
pub mod persistentvolume;
pub mod pod;
pub mod pod_spec;
pub mod pod_status;
pub mod pod_subresources;
pub mod pod_validation;
pub mod pod_warnings;
pub mod podtemplate;
pub mod qos;
pub mod quantity;
pub mod replicationcontroller;
pub mod secret;
pub mod service;
pub mod serviceaccount;
