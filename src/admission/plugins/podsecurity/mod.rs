//! kube's `PodSecurity` admission plugin (default on): the Pod Security Standards
//! (`privileged`, `baseline`, `restricted`, per policy version) enforced on pods and warned
//! about on pods and workload pod templates, per namespace from the
//! `pod-security.kubernetes.io/{enforce,audit,warn}[-version]` labels, with the defaults and
//! exemptions of its `PodSecurityConfiguration`. [`levels`]: levels, versions and a
//! namespace's policy; [`checks`]: the checks and their evaluation; [`config`]: the plugin's
//! configuration; [`plugin`]: the admission logic.

pub mod checks;
pub mod config;
pub mod levels;
pub mod plugin;

pub use plugin::PodSecurity;
