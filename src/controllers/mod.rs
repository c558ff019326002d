//! In-process control loops that only the Raft leader runs (namespace deletion, CRD
//! establishment, token loops, ClusterRole aggregation, volume protection, the garbage
//! collector, the certificate signing, approving and cleaning loops), plus the one loop every replica runs: serving the established custom resource
//! definitions (`crd::serve`). They talk to the registry as a client would; leadership
//! is re-checked on every pass so a new leader takes over by itself. `--controllers` picks which
//! run (kube-controller-manager's syntax), so an operator running a real controller-manager can
//! turn Rafter's own off.

pub mod bootstrap;
pub mod bootstrap_tokens;
pub mod certificates;
pub mod crd;
pub mod gc;
pub mod namespace;
pub mod rbac;
pub mod resourcequota;
pub mod serviceaccount_tokens;
pub mod serviceaccounts;
pub mod volume_protection;

/// Aborts a task when dropped (a loop's followers end with the loop).
pub(crate) struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Objects of one resource by name, kept current by [`follow_by_name`].
pub(crate) type ByName = std::sync::Arc<
    std::sync::Mutex<std::collections::BTreeMap<String, std::sync::Arc<serde_json::Value>>>,
>;

/// Follows every object of `info` from the watch cache into `objects` (keyed by name),
/// waking `changed` after each change; the follower stops when the guard is dropped.
pub(crate) fn follow_by_name(
    cache: crate::watch::Cache,
    info: std::sync::Arc<crate::registry::Resource>,
    objects: ByName,
    changed: std::sync::Arc<tokio::sync::Notify>,
) -> AbortOnDrop {
    use crate::registry::object::meta_str;
    use crate::watch::follow::{self, Change};
    AbortOnDrop(follow::spawn(cache, info, move |c| {
        let mut m = objects.lock().unwrap_or_else(|e| e.into_inner());
        match c {
            Change::Replace(all) => {
                m.clear();
                for o in all {
                    let o = std::sync::Arc::new(o.value());
                    m.insert(meta_str(&o, "name").to_string(), o);
                }
            }
            Change::Upsert { cur, .. } => {
                m.insert(
                    meta_str(cur, "name").to_string(),
                    std::sync::Arc::new(cur.clone()),
                );
            }
            Change::Delete { prev } => {
                m.remove(meta_str(prev, "name"));
            }
        }
        changed.notify_one();
    }))
}

/// The loops `--controllers` names, as kube-controller-manager names its own.
pub const KNOWN: &[&str] = &[
    "namespace",
    "resourcequota",
    "crd-establishing",
    "crd-finalizer",
    "clusterrole-aggregation",
    "serviceaccount-token",
    "serviceaccount",
    "root-ca-cert-publisher",
    "tokencleaner",
    "bootstrapsigner",
    "pvc-protection",
    "pv-protection",
    "garbage-collector",
    "csrsigning",
    "csrapproving",
    "csrcleaner",
];
/// The loops `*` does not turn on (kube-controller-manager's disabled-by-default ones).
pub const OFF_BY_DEFAULT: &[&str] = &["tokencleaner", "bootstrapsigner"];

/// Parses `--controllers` (kube-controller-manager's syntax): `*` turns on every loop,
/// `name` turns one on, `-name` turns one off; the default is `*`. Returns the loops that run.
pub fn parse_enabled(spec: &str) -> Result<Vec<&'static str>, String> {
    let mut all = false;
    let mut on: Vec<&str> = Vec::new();
    let mut off: Vec<&str> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if item == "*" {
            all = true;
            continue;
        }
        let (name, list) = match item.strip_prefix('-') {
            Some(n) => (n, &mut off),
            None => (item, &mut on),
        };
        if !KNOWN.contains(&name) {
            return Err(format!(
                "{name:?} is not in the list of known controllers ({})",
                KNOWN.join(", ")
            ));
        }
        list.push(name);
    }
    Ok(KNOWN
        .iter()
        .copied()
        .filter(|c| ((all && !OFF_BY_DEFAULT.contains(c)) || on.contains(c)) && !off.contains(c))
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn controllers_flag() {
        assert_eq!(
            super::parse_enabled("*").unwrap(),
            vec![
                "namespace",
                "resourcequota",
                "crd-establishing",
                "crd-finalizer",
                "clusterrole-aggregation",
                "serviceaccount-token",
                "serviceaccount",
                "root-ca-cert-publisher",
                "pvc-protection",
                "pv-protection",
                "garbage-collector",
                "csrsigning",
                "csrapproving",
                "csrcleaner"
            ]
        );
        assert_eq!(
            super::parse_enabled("*,-namespace,-pv-protection").unwrap(),
            vec![
                "resourcequota",
                "crd-establishing",
                "crd-finalizer",
                "clusterrole-aggregation",
                "serviceaccount-token",
                "serviceaccount",
                "root-ca-cert-publisher",
                "pvc-protection",
                "garbage-collector",
                "csrsigning",
                "csrapproving",
                "csrcleaner"
            ]
        );
        assert!(super::parse_enabled("").unwrap().is_empty());
        assert_eq!(
            super::parse_enabled("namespace").unwrap(),
            vec!["namespace"]
        );
        assert!(super::parse_enabled("gc")
            .unwrap_err()
            .contains("not in the list"));
    }
}
