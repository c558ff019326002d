//! Expiry of objects whose strategy says they expire (Events, `--event-ttl`, default 1 h),
//! as kube-apiserver's etcd leases expire them: every write of such an object starts its time
//! to live again, and once it has passed the object is deleted (watchers see DELETED).
//!
//! The keyspace holds a time index beside the objects: a write of an expiring object puts, in
//! the same transaction (so at the same revision), an empty key
//! `/.rafter/ttl/<expiry, Unix seconds, 12 digits>/<object key>`. The leader's expirer reads
//! the index from its start up to now, in key (= time) order, never scanning the objects: for
//! each entry it deletes the object and the entry together, provided the object's
//! mod_revision is still the entry's (the write that made the entry is the object's last);
//! otherwise the object was written again (a newer entry exists) or deleted, and only the
//! stale entry goes. Deleting is idempotent, so a new leader picks up where the old one
//! stopped. Index keys are outside every resource's prefix: no list, watch or migration sees
//! them.

use std::time::Duration;

use crate::kv::{self, Compare, Kv, Op, Txn};

/// Where the index lives (not a resource prefix: groups cannot start with a dot).
pub const PREFIX: &[u8] = b"/.rafter/ttl/";

/// Entries handled per transaction batch of one pass.
const BATCH: usize = 256;

/// The index key of `object_key` expiring at `expiry` (Unix seconds).
pub fn index_key(expiry: i64, object_key: &[u8]) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(format!("{:012}/", expiry.max(0)).as_bytes());
    k.extend_from_slice(object_key);
    k
}

/// The object key of an index key (`None`: not one).
pub fn object_key(index_key: &[u8]) -> Option<&[u8]> {
    let rest = index_key.strip_prefix(PREFIX)?;
    let slash = rest.iter().position(|b| *b == b'/')?;
    Some(&rest[slash + 1..])
}

/// The index write for an expiring object written now with time to live `ttl`.
pub fn index_op(object_key: &[u8], ttl: Duration) -> Op {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    Op::Put {
        key: index_key(now + ttl.as_secs() as i64, object_key),
        value: Vec::new(),
    }
}

/// One pass: deletes what expired at or before `now` (Unix seconds); returns how many objects
/// were deleted.
pub async fn expire(kv: &Kv, now: i64) -> Result<usize, kv::Error> {
    let end = index_key(now + 1, b"");
    let mut deleted = 0;
    loop {
        let page = kv.range(PREFIX, &end, None, BATCH)?;
        if page.kvs.is_empty() {
            return Ok(deleted);
        }
        let more = page.more;
        for entry in page.kvs {
            let Some(object) = object_key(&entry.key).map(<[u8]>::to_vec) else {
                continue;
            };
            let both = kv
                .txn(Txn {
                    compares: vec![Compare::ModRevision(object.clone(), entry.mod_revision)],
                    success: vec![
                        Op::Delete { key: object },
                        Op::Delete {
                            key: entry.key.clone(),
                        },
                    ],
                })
                .await?;
            if both.succeeded {
                deleted += 1;
                continue;
            }
            // Stale: the object was written again or deleted (unless this very entry was
            // written again meanwhile, by a write in the same second).
            kv.txn(Txn {
                compares: vec![Compare::ModRevision(entry.key.clone(), entry.mod_revision)],
                success: vec![Op::Delete { key: entry.key }],
            })
            .await?;
        }
        if !more {
            return Ok(deleted);
        }
    }
}

/// The expirer: on the leader, a pass every second. Runs until the task is dropped.
pub async fn run(kv: Kv) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if !kv.is_leader() {
            continue;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        if let Err(e) = expire(&kv, now).await {
            tracing::debug!("ttl expiry: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_by_time_and_name_the_object() {
        let a = index_key(99, b"/core/events/ns/a");
        let b = index_key(100, b"/core/events/ns/a");
        assert!(a < b);
        assert!(a.starts_with(PREFIX));
        assert_eq!(object_key(&a), Some(&b"/core/events/ns/a"[..]));
        assert_eq!(
            String::from_utf8(a).unwrap(),
            "/.rafter/ttl/000000000099//core/events/ns/a"
        );
        assert!(index_key(100, b"") < index_key(100, b"/x"));
        assert_eq!(object_key(b"/core/events/x"), None);
    }
}
