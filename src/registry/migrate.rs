//! Storage migration: every object of a resource rewritten in the resource's current
//! storage version (and sealed with the current first encryption provider), as kube's
//! storage version migrator does with no-op updates.
//!
//! Objects are read and rewritten one batch at a time in key order, each with a conditional
//! write on its mod revision: a concurrent write wins (it already stored the object in the
//! current storage version) and is counted as skipped. A batch ends at a key, from which the
//! next batch (or a migration that was interrupted) resumes.

use futures::stream::{self, StreamExt};

use crate::meta::status::Status;
use crate::storage::mvcc::{Compare, Op, Txn};

use super::resource::Resource;
use super::store::{decode, encode, kv_status, prefix_end, Scope, Store};

/// Writes of one batch in flight at once.
const IN_FLIGHT: usize = 32;

/// The outcome of one batch.
#[derive(Debug, Default)]
pub struct Progress {
    /// Objects rewritten.
    pub rewritten: u64,
    /// Objects changed or deleted by another write meanwhile.
    pub skipped: u64,
    /// The last key of the batch (resume after it).
    pub last_key: String,
    /// No objects after `last_key`.
    pub done: bool,
    /// `group/version` objects are now stored in.
    pub storage_version: String,
}

impl Store {
    /// The storage-version entry of `resource` (`crontabs.stable.example.com`, `secrets`,
    /// `deployments.apps`).
    pub fn storage_entry(&self, resource: &str) -> Result<std::sync::Arc<Resource>, Status> {
        let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
        let cat = self.registry().snapshot();
        cat.all()
            .iter()
            .find(|r| r.resource == plural && r.group == group && r.version == r.storage_version)
            .cloned()
            .ok_or_else(|| {
                Status::bad_request(format!(
                    "the server doesn't have a resource type {resource:?}"
                ))
            })
    }

    /// Rewrites up to `limit` objects of `resource` after key `after` (`""`: from the start).
    pub async fn migrate_batch(
        &self,
        resource: &str,
        after: &str,
        limit: usize,
    ) -> Result<Progress, Status> {
        let info = self.storage_entry(resource)?;
        let prefix = Scope {
            info: &info,
            namespace: None,
        }
        .prefix()
        .into_bytes();
        let start = if after.is_empty() {
            prefix.clone()
        } else {
            let mut k = after.as_bytes().to_vec();
            k.push(0);
            k
        };
        let end = prefix_end(&prefix);
        let limit = limit.clamp(1, 10_000);
        let page = self
            .kv()
            .range_page(&start, &end, None, limit)
            .map_err(kv_status)?;
        let storage_version = format!(
            "{}{}{}",
            info.storage_group,
            if info.storage_group.is_empty() {
                ""
            } else {
                "/"
            },
            info.storage_version
        );
        let mut progress = Progress {
            done: !page.more,
            last_key: page
                .kvs
                .last()
                .map(|kv| String::from_utf8_lossy(&kv.key).into_owned())
                .unwrap_or_else(|| after.to_string()),
            storage_version,
            ..Default::default()
        };
        // Objects of another version are converted to the storage version together (one
        // conversion webhook call per batch).
        let mut objs = Vec::with_capacity(page.kvs.len());
        for kv in &page.kvs {
            // as a read decodes it (custom resources: pruned and defaulted)
            let obj = decode(kv)?;
            objs.push(info.strategy.decode_stored(&obj).unwrap_or(obj));
        }
        let stale: Vec<usize> = (0..objs.len())
            .filter(|i| {
                info.origin.is_some()
                    && objs[*i]
                        .get("apiVersion")
                        .and_then(serde_json::Value::as_str)
                        != Some(progress.storage_version.as_str())
            })
            .collect();
        if !stale.is_empty() {
            let mut convert: Vec<serde_json::Value> =
                stale.iter().map(|i| objs[*i].clone()).collect();
            info.strategy.from_storage_all(&mut convert)?;
            for (i, o) in stale.into_iter().zip(convert) {
                objs[i] = o;
            }
        }
        let txns: Vec<Txn> = page
            .kvs
            .iter()
            .zip(objs)
            .map(|(kv, obj)| {
                Ok(Txn {
                    compares: vec![Compare::ModRevision(kv.key.clone(), kv.mod_revision)],
                    success: vec![Op::Put {
                        value: encode(&kv.key, &obj)?,
                        key: kv.key.clone(),
                    }],
                })
            })
            .collect::<Result<_, Status>>()?;
        let results: Vec<_> = stream::iter(txns)
            .map(|t| {
                let kv = self.kv().clone();
                async move { kv.txn(t).await }
            })
            .buffered(IN_FLIGHT)
            .collect()
            .await;
        for r in results {
            if r.map_err(kv_status)?.succeeded {
                progress.rewritten += 1;
            } else {
                progress.skipped += 1;
            }
        }
        Ok(progress)
    }
}
