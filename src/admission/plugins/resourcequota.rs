//! `ResourceQuota`: a create or update in a namespace is charged against the namespace's
//! ResourceQuotas whose hard limits name what the object uses (and whose scopes it is in),
//! as kube's quota admission does — kube's texts for a quota exceeded, a quota whose usage
//! is not known yet, pods that do not state the requests and limits a quota tracks, and
//! resources the configuration's `limitedResources` make consumable only under a quota.
//!
//! The charge is exact across replicas: the quotas with their new usage are written in the
//! same transaction as the object, each compared on its resourceVersion, and re-read (with
//! a linearizable read) and charged again when another write got there first. Deletes do
//! not refund: the `resourcequota` loop recalculates usage.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;
use crate::registry::object::Charged;
use crate::registry::quota::{self, Usage};
use crate::registry::store::{ListOptions, ReadAt, Scope};

/// One `limitedResources` entry of the plugin's configuration.
struct Limited {
    api_group: String,
    resource: String,
    match_contains: Vec<String>,
}

pub struct ResourceQuota {
    limited: Vec<Limited>,
}

impl ResourceQuota {
    /// From a `ResourceQuotaConfiguration` (apiserver.config.k8s.io, `limitedResources`).
    pub fn new(config: Option<&Value>) -> Result<ResourceQuota, String> {
        let mut limited = Vec::new();
        for l in config
            .and_then(|c| c.get("limitedResources"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |k: &str| l.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            limited.push(Limited {
                api_group: s("apiGroup"),
                resource: s("resource"),
                match_contains: l
                    .get("matchContains")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            });
        }
        Ok(ResourceQuota { limited })
    }
}

fn mask(u: &Usage, names: &[String]) -> Usage {
    u.iter()
        .filter(|(k, _)| names.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

async fn quotas(h: &Handle, ns: &str, at: ReadAt) -> Result<Vec<Value>, Status> {
    let info = h.store.registry().builtin("", "v1", "resourcequotas");
    let scope = Scope {
        info: &info,
        namespace: Some(ns),
    };
    let opts = ListOptions {
        read_at: Some(at),
        ..Default::default()
    };
    Ok(h.store.list(scope, &opts).await?.items)
}

#[async_trait::async_trait]
impl Plugin for ResourceQuota {
    fn name(&self) -> &'static str {
        "ResourceQuota"
    }

    async fn charge(&self, a: &Attributes, h: &Handle) -> Result<Vec<Charged>, Status> {
        if !matches!(a.operation, Operation::Create | Operation::Update)
            || !a.subresource.is_empty()
            || a.namespace.is_empty()
            || !a.resource.namespaced
        {
            return Ok(Vec::new());
        }
        let Some(obj) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let (group, resource) = (a.resource.group.as_str(), a.resource.resource.as_str());
        let eval = a.resource.strategy.quota();
        let relevant = |q: &Value| {
            quota::list(q.pointer("/spec/hard"))
                .keys()
                .any(|n| quota::matches_name(group, resource, eval, n))
        };
        // The local cache first; a quota that applies is read again linearizably, so that its
        // resourceVersion is the one the write will be compared with.
        let mut all = quotas(h, &a.namespace, ReadAt::Any).await?;
        if all.iter().any(relevant) {
            all = quotas(h, &a.namespace, ReadAt::Latest).await?;
        }
        let usage = quota::usage(group, resource, eval, obj);
        // limitedResources: consumption only under a covering quota
        let mut must_cover: Vec<String> = Vec::new();
        for l in &self.limited {
            if l.resource == resource && l.api_group == group {
                for k in usage.keys() {
                    if l.match_contains.iter().any(|m| k.contains(m.as_str()))
                        && !must_cover.contains(k)
                    {
                        must_cover.push(k.clone());
                    }
                }
            }
        }
        let mut interesting: Vec<(Value, Vec<String>)> = Vec::new();
        let mut covered: Vec<String> = Vec::new();
        for q in all {
            if !quota::quota_matches(&q, eval, obj) {
                continue;
            }
            let hard = quota::list(q.pointer("/status/hard"));
            let restricted: Vec<String> = hard
                .keys()
                .filter(|n| quota::matches_name(group, resource, eval, n))
                .cloned()
                .collect();
            if restricted.is_empty() {
                continue;
            }
            let qname = q
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if let Some(e) = eval {
                let names: Vec<&str> = restricted.iter().map(String::as_str).collect();
                if let Err(why) = e.constraints(&names, obj) {
                    return Err(a.forbidden(format!("failed quota: {qname}: {why}")));
                }
            }
            let used = quota::list(q.pointer("/status/used"));
            if restricted.iter().any(|r| !used.contains_key(r)) {
                return Err(a.forbidden(format!(
                    "status unknown for quota: {qname}, resources: {}",
                    restricted.join(",")
                )));
            }
            covered.extend(restricted.iter().cloned());
            interesting.push((q, restricted));
        }
        let negative: Vec<&String> = usage
            .iter()
            .filter(|(_, q)| q.is_negative())
            .map(|(k, _)| k)
            .collect();
        if !negative.is_empty() {
            let names: Vec<&str> = negative.iter().map(|s| s.as_str()).collect();
            return Err(a.forbidden(format!(
                "quota usage is negative for resource(s): {}",
                names.join(",")
            )));
        }
        let mut deltas: BTreeMap<usize, Usage> = BTreeMap::new();
        for (i, (q, _)) in interesting.iter().enumerate() {
            let d = match (a.operation, a.old_object.as_ref()) {
                (Operation::Update, Some(old)) if quota::quota_matches(q, eval, old) => {
                    quota::sub_non_negative(&usage, &quota::usage(group, resource, eval, old))
                }
                _ => usage.clone(),
            };
            let d: Usage = d
                .into_iter()
                .filter(|(_, v)| {
                    v.cmp(&crate::registry::builtin::core::quantity::Quantity::zero())
                        .is_ne()
                })
                .collect();
            if !d.is_empty() {
                deltas.insert(i, d);
            }
        }
        let uncovered: Vec<&String> = must_cover.iter().filter(|m| !covered.contains(m)).collect();
        if !uncovered.is_empty() {
            let mut names: Vec<&str> = uncovered.iter().map(|s| s.as_str()).collect();
            names.sort();
            return Err(a.forbidden(format!(
                "insufficient quota to consume: {}",
                names.join(",")
            )));
        }
        let info = h.store.registry().builtin("", "v1", "resourcequotas");
        let scope = Scope {
            info: &info,
            namespace: Some(&a.namespace),
        };
        let mut out = Vec::new();
        for (i, (q, restricted)) in interesting.into_iter().enumerate() {
            let Some(delta) = deltas.get(&i) else {
                continue;
            };
            let qname = q
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let hard = quota::list(q.pointer("/status/hard"));
            let used = quota::list(q.pointer("/status/used"));
            let requested = mask(delta, &restricted);
            if requested.is_empty() {
                continue;
            }
            let new_used = quota::add(&used, &requested);
            let exceeded: Vec<String> = requested
                .keys()
                .filter(|k| {
                    let (n, h) = (new_used.get(*k), hard.get(*k));
                    matches!((n, h), (Some(n), Some(h)) if n.cmp(h).is_gt())
                })
                .cloned()
                .collect();
            if !exceeded.is_empty() {
                return Err(a.forbidden(format!(
                    "exceeded quota: {qname}, requested: {}, used: {}, limited: {}",
                    quota::pretty(&mask(&requested, &exceeded)),
                    quota::pretty(&mask(&used, &exceeded)),
                    quota::pretty(&mask(&hard, &exceeded)),
                )));
            }
            let rev: i64 = q
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .and_then(|r| r.parse().ok())
                .unwrap_or(0);
            let mut value = q.clone();
            value["status"]["used"] = quota::to_json(&new_used);
            out.push(Charged {
                key: scope.key(&qname),
                mod_revision: rev,
                value,
            });
        }
        Ok(out)
    }
}
