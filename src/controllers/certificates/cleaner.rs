//! `csrcleaner`: kube-controller-manager's CSR cleaner. Every hour (and on becoming leader) it
//! deletes the requests that are: approved and issued with the Approved condition's
//! `lastUpdateTime` over 1 h ago; denied or failed with that condition's `lastUpdateTime` over
//! 1 h ago; pending (no condition at all) and created over 24 h ago; or approved and issued
//! with a certificate past its NotAfter. Ages are not configurable, as in kube. Deletes carry
//! the request's uid as a precondition.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::registry::builtin::certificates::x509;
use crate::registry::store::{self, DeleteOptions, ListOptions, ReadAt, Scope, Store};

/// kube's `pollingInterval`.
pub const POLLING_INTERVAL: Duration = Duration::from_secs(3600);
const APPROVED_EXPIRATION: i64 = 3600;
const DENIED_EXPIRATION: i64 = 3600;
const PENDING_EXPIRATION: i64 = 24 * 3600;

fn seconds(rfc3339: &str) -> Option<i64> {
    rfc3339
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_second())
}

/// `isOlderThan`: a set time more than `d` seconds before `now`.
fn older_than(t: &str, d: i64, now: i64) -> bool {
    seconds(t).is_some_and(|t| now - t > d)
}

fn condition_older(csr: &Value, t: &str, d: i64, now: i64) -> bool {
    super::conditions(csr).iter().any(|c| {
        c.get("type").and_then(Value::as_str) == Some(t)
            && older_than(
                c.get("lastUpdateTime")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                d,
                now,
            )
    })
}

fn has_condition(csr: &Value, t: &str) -> bool {
    super::conditions(csr)
        .iter()
        .any(|c| c.get("type").and_then(Value::as_str) == Some(t))
}

/// The certificate's NotAfter has gone by (an unparsable one has not).
fn expired(cert_pem: &[u8], now: i64) -> bool {
    let Some((_, der)) = x509::pem_blocks(cert_pem).into_iter().next() else {
        return false;
    };
    x509_parser::parse_x509_certificate(&der)
        .is_ok_and(|(_, c)| now > c.validity().not_after.timestamp())
}

/// Why kube's cleaner deletes `csr` at `now` (Unix seconds), if it does.
pub fn reason(csr: &Value, now: i64) -> Option<&'static str> {
    let cert = super::bytes_at(csr, "/status/certificate");
    let issued = !cert.is_empty();
    if issued && condition_older(csr, "Approved", APPROVED_EXPIRATION, now) {
        return Some("more than approvedExpiration duration old and approved");
    }
    if condition_older(csr, "Denied", DENIED_EXPIRATION, now) {
        return Some("more than deniedExpiration duration old and denied");
    }
    if condition_older(csr, "Failed", DENIED_EXPIRATION, now) {
        return Some("more than deniedExpiration duration old and failed");
    }
    if super::conditions(csr).is_empty()
        && older_than(
            store::meta_str(csr, "creationTimestamp"),
            PENDING_EXPIRATION,
            now,
        )
    {
        return Some("more than pendingExpiration duration old and unhandled");
    }
    if issued && has_condition(csr, "Approved") && expired(&cert, now) {
        return Some("the associated certificate is expired");
    }
    None
}

/// Runs until the task is dropped: a pass when this replica becomes leader, then every
/// `interval` while it leads.
pub async fn run(store: Store, interval: Duration) {
    let mut last: Option<Instant> = None;
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if !store.kv().is_leader() {
            last = None;
            continue;
        }
        if last.is_some_and(|t| t.elapsed() < interval) {
            continue;
        }
        match pass(&store).await {
            Ok(()) => last = Some(Instant::now()),
            Err(e) => tracing::debug!("csrcleaner: {e}"),
        }
    }
}

async fn pass(store: &Store) -> Result<(), crate::meta::status::Status> {
    let info = super::csr_info(store);
    let scope = Scope {
        info: &info,
        namespace: None,
    };
    let list = store
        .list(
            scope,
            &ListOptions {
                read_at: Some(ReadAt::Any),
                ..Default::default()
            },
        )
        .await?;
    let now = jiff::Timestamp::now().as_second();
    for csr in list.items {
        let Some(why) = reason(&csr, now) else {
            continue;
        };
        let name = store::meta_str(&csr, "name").to_string();
        let opts = DeleteOptions {
            write: super::write_options(),
            precondition_uid: Some(store::meta_str(&csr, "uid").to_string()),
            ..Default::default()
        };
        match store.delete(scope, &name, &opts).await {
            Ok(_) => tracing::info!("Cleaning CSR {name:?} as it is {why}"),
            Err(e) if e.code == 404 || e.code == 409 => {}
            Err(e) => tracing::warn!("unable to delete CSR {name:?}: {}", e.message),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kube_rules() {
        let t0 = seconds("2026-01-01T00:00:00Z").unwrap();
        let pending = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}});
        assert_eq!(reason(&pending, t0 + 23 * 3600), None);
        assert!(reason(&pending, t0 + 24 * 3600 + 1).is_some());
        let denied = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"},
            "status": {"conditions": [{"type": "Denied", "status": "True",
                "lastUpdateTime": "2026-01-01T00:00:00Z"}]}});
        assert_eq!(reason(&denied, t0 + 3600), None);
        assert!(reason(&denied, t0 + 3601).unwrap().contains("denied"));
        // Approved but not issued: kept (until pending rules do not apply either).
        let approved = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"},
            "status": {"conditions": [{"type": "Approved", "status": "True",
                "lastUpdateTime": "2026-01-01T00:00:00Z"}]}});
        assert_eq!(reason(&approved, t0 + 48 * 3600), None);
    }
}
