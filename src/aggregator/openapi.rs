//! The extension servers' OpenAPI in the server's documents, as kube-aggregator merges them:
//! `/openapi/v2` gains each remote APIService's paths under `/apis/<group>/<version>` and the
//! definitions the local document does not have (a local definition of the same name wins);
//! the `/openapi/v3` index gains `apis/<group>/<version>` with the hash of the document the
//! extension server last served, and that document is served from here. The merged forms
//! are built once per (local document, remote generation), never per request, from what the
//! availability loop fetched.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::Aggregator;
use crate::openapi::V2;

/// (local ETag, remote generation, merged document).
pub type V2Cache = Mutex<Option<(String, u64, Arc<V2>)>>;
/// (local index hash, remote generation, merged index, its hash).
pub type V3Cache = Mutex<Option<(String, u64, Bytes, String)>>;

/// Adds `remote`'s paths under `prefix` and its missing definitions to `merged`.
pub fn merge_v2(merged: &mut Value, remote: &Value, prefix: &str) {
    let take = |p: &str| p == prefix || p.starts_with(&format!("{prefix}/"));
    if let (Some(paths), Some(theirs)) = (
        merged.get_mut("paths").and_then(Value::as_object_mut),
        remote.get("paths").and_then(Value::as_object),
    ) {
        for (p, item) in theirs {
            if take(p) && !paths.contains_key(p) {
                paths.insert(p.clone(), item.clone());
            }
        }
    }
    if merged.get("definitions").is_none() {
        merged["definitions"] = json!({});
    }
    if let (Some(defs), Some(theirs)) = (
        merged.get_mut("definitions").and_then(Value::as_object_mut),
        remote.get("definitions").and_then(Value::as_object),
    ) {
        for (name, def) in theirs {
            if !defs.contains_key(name) {
                defs.insert(name.clone(), def.clone());
            }
        }
    }
}

impl Aggregator {
    /// `/openapi/v2` with the remote APIServices' documents merged in (`local` as it is when
    /// no extension server answered one).
    pub fn openapi_v2(&self, local: Arc<V2>) -> Arc<V2> {
        let remotes: Vec<_> = self
            .remotes()
            .into_iter()
            .filter(|r| r.openapi_v2.is_some())
            .collect();
        if remotes.is_empty() {
            return local;
        }
        let generation = self.openapi_generation();
        let mut slot = self.v2_cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((etag, g, doc)) = slot.as_ref() {
            if *etag == local.etag && *g == generation {
                return doc.clone();
            }
        }
        let Ok(mut merged) = serde_json::from_slice::<Value>(&local.json) else {
            return local;
        };
        for r in &remotes {
            if let Some(doc) = &r.openapi_v2 {
                merge_v2(
                    &mut merged,
                    doc,
                    &format!("/apis/{}/{}", r.group, r.version),
                );
            }
        }
        let built = Arc::new(V2::from_document(&merged));
        *slot = Some((local.etag.clone(), generation, built.clone()));
        built
    }

    /// The `/openapi/v3` index with the remote group-versions' documents listed: (bytes,
    /// hash).
    pub fn openapi_v3_index(&self, local: Bytes, local_hash: &str) -> (Bytes, String) {
        let remotes: Vec<_> = self
            .remotes()
            .into_iter()
            .filter(|r| r.openapi_v3.is_some())
            .collect();
        if remotes.is_empty() {
            return (local, local_hash.to_string());
        }
        let generation = self.openapi_generation();
        let mut slot = self.v3_cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((h, g, bytes, hash)) = slot.as_ref() {
            if h == local_hash && *g == generation {
                return (bytes.clone(), hash.clone());
            }
        }
        let Ok(index) = serde_json::from_slice::<Value>(&local) else {
            return (local, local_hash.to_string());
        };
        let mut paths: BTreeMap<String, Value> = index
            .get("paths")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        for r in &remotes {
            if let Some((_, hash)) = &r.openapi_v3 {
                let path = format!("apis/{}/{}", r.group, r.version);
                paths.entry(path.clone()).or_insert_with(
                    || json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}),
                );
            }
        }
        let out = json!({"paths": paths.into_iter().collect::<Map<String, Value>>()});
        let bytes = Bytes::from(serde_json::to_vec(&out).unwrap_or_default());
        let hash = crate::openapi::content_hash(&bytes);
        *slot = Some((
            local_hash.to_string(),
            generation,
            bytes.clone(),
            hash.clone(),
        ));
        (bytes, hash)
    }

    /// `/openapi/v3/apis/<group>/<version>` of a remote APIService: the document its server
    /// last answered and its hash.
    pub fn openapi_v3_document(&self, path: &str) -> Option<(Bytes, String)> {
        let path = path.trim_start_matches('/').trim_end_matches('/');
        let rest = path.strip_prefix("apis/")?;
        let (group, version) = rest.split_once('/')?;
        self.remote(group, version)?.openapi_v3.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_group_versions_paths_and_new_definitions_are_taken() {
        let mut local = json!({"paths": {"/api/v1/pods": {}},
                               "definitions": {"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"local": true}}});
        let remote = json!({"paths": {"/apis/w.io/v1/flunders": {"get": {}}, "/apis/w.io/v1": {},
                                      "/apis/other.io/v1/x": {}, "/api/v1/pods": {"theirs": true}},
                            "definitions": {"io.w.v1.Flunder": {"type": "object"},
                                            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"remote": true}}});
        merge_v2(&mut local, &remote, "/apis/w.io/v1");
        let paths: Vec<&String> = local["paths"].as_object().unwrap().keys().collect();
        assert_eq!(
            paths,
            ["/api/v1/pods", "/apis/w.io/v1/flunders", "/apis/w.io/v1"]
        );
        assert_eq!(local["paths"]["/api/v1/pods"], json!({}));
        assert_eq!(
            local["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["local"],
            true
        );
        assert!(local["definitions"]["io.w.v1.Flunder"].is_object());
    }
}
