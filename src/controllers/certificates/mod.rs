//! kube-controller-manager's certificate loops, leader-only (`--controllers` names as kube's):
//! `csrsigning` (the built-in signers, [`signer`], with the CA of [`authority`]),
//! `csrapproving` (auto-approval of kubelet client requests after a SubjectAccessReview,
//! [`approver`]) and `csrcleaner` (old requests deleted, [`cleaner`]). The first two follow
//! CertificateSigningRequests from the watch cache and handle each changed request, retrying
//! failures with backoff (kube's rate-limited work queue); the cleaner polls every hour.

pub mod approver;
pub mod authority;
pub mod cleaner;
pub mod signer;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::registry::store::{self, Store, WriteOptions};

/// The CertificateSigningRequest resource.
fn csr_info(store: &Store) -> Arc<crate::registry::Resource> {
    store
        .registry()
        .builtin("certificates.k8s.io", "v1", "certificatesigningrequests")
}

fn write_options() -> WriteOptions {
    WriteOptions {
        now: crate::server::handlers::now_rfc3339(),
        field_manager: Some("kube-controller-manager".into()),
        ..Default::default()
    }
}

/// Whether a condition of type `t` with status True is present (kube's `HasTrueCondition`).
pub(crate) fn has_true_condition(csr: &Value, t: &str) -> bool {
    conditions(csr).iter().any(|c| {
        c.get("type").and_then(Value::as_str) == Some(t)
            && c.get("status").and_then(Value::as_str).unwrap_or("True") == "True"
    })
}

pub(crate) fn conditions(csr: &Value) -> &[Value] {
    csr.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// `spec.request` / `status.certificate` decoded (JSON `[]byte` is base64).
pub(crate) fn bytes_at(csr: &Value, pointer: &str) -> Vec<u8> {
    use base64::Engine;
    csr.pointer(pointer)
        .and_then(Value::as_str)
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .unwrap_or_default()
}

pub(crate) fn usages(csr: &Value) -> Vec<&str> {
    csr.pointer("/spec/usages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

pub(crate) fn spec_str<'a>(csr: &'a Value, field: &str) -> &'a str {
    csr.get("spec")
        .and_then(|s| s.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Per-request bookkeeping of a change-driven loop: a request is handled when its
/// resourceVersion differs from the one last handled, or when its retry is due.
#[derive(Default)]
struct Queue {
    seen: BTreeMap<String, (String, Option<(Instant, Duration)>)>,
}

const FIRST_RETRY: Duration = Duration::from_millis(500);
const MAX_RETRY: Duration = Duration::from_secs(300);

impl Queue {
    fn due(&self, name: &str, rv: &str, now: Instant) -> bool {
        match self.seen.get(name) {
            None => true,
            Some((seen_rv, retry)) => seen_rv != rv || retry.is_some_and(|(at, _)| at <= now),
        }
    }

    fn done(&mut self, name: &str, rv: &str) {
        self.seen.insert(name.to_string(), (rv.to_string(), None));
    }

    fn failed(&mut self, name: &str, rv: &str, now: Instant) {
        let delay = match self.seen.get(name) {
            Some((seen, Some((_, d)))) if seen == rv => (*d * 2).min(MAX_RETRY),
            _ => FIRST_RETRY,
        };
        self.seen.insert(
            name.to_string(),
            (rv.to_string(), Some((now + delay, delay))),
        );
    }

    fn forget_except(&mut self, names: &std::collections::BTreeSet<String>) {
        self.seen.retain(|n, _| names.contains(n));
    }
}

/// Runs `handle` for every changed (or retry-due) request while this replica leads; `Err` is
/// retried with backoff. Runs until the task is dropped.
async fn each_change<F, Fut>(store: Store, cache: crate::watch::Cache, loop_name: &str, handle: F)
where
    F: Fn(Store, Arc<Value>) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let objects: super::ByName = Default::default();
    let changed = Arc::new(tokio::sync::Notify::new());
    let _follow = super::follow_by_name(cache, csr_info(&store), objects.clone(), changed.clone());
    let mut queue = Queue::default();
    loop {
        let _ = tokio::time::timeout(Duration::from_millis(500), changed.notified()).await;
        if !store.kv().is_leader() {
            queue = Queue::default();
            continue;
        }
        let all: Vec<Arc<Value>> = objects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        let names = all
            .iter()
            .map(|o| store::meta_str(o, "name").to_string())
            .collect();
        queue.forget_except(&names);
        for csr in all {
            let name = store::meta_str(&csr, "name").to_string();
            let rv = store::meta_str(&csr, "resourceVersion").to_string();
            let now = Instant::now();
            if !queue.due(&name, &rv, now) {
                continue;
            }
            match handle(store.clone(), csr).await {
                Ok(()) => queue.done(&name, &rv),
                Err(e) => {
                    tracing::debug!("{loop_name}: {name}: {e}");
                    queue.failed(&name, &rv, now);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_backs_off_and_resets_on_change() {
        let mut q = Queue::default();
        let t = Instant::now();
        assert!(q.due("a", "1", t));
        q.failed("a", "1", t);
        assert!(!q.due("a", "1", t));
        assert!(q.due("a", "1", t + FIRST_RETRY));
        q.failed("a", "1", t);
        assert!(!q.due("a", "1", t + FIRST_RETRY));
        assert!(q.due("a", "2", t));
        q.done("a", "2");
        assert!(!q.due("a", "2", t + MAX_RETRY));
    }
}
