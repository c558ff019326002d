//! Following a resource from the watch cache, as kube's informers do: the whole current
//! state first, then every change in order; after a 410 (the follower fell behind) or any
//! end of the watch, the state is read again and handed over whole, so a consumer never
//! sees a gap or a half-loaded state. In-process consumers (the authorizers' indexes, the
//! leader loops) keep their own views current this way without reading storage per request.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::{Cache, Out, Request, Start};
use crate::registry::store::{ListOptions, ReadAt};
use crate::registry::Resource;

/// What a follower hands its consumer.
pub enum Change<'a> {
    /// The complete current state (on start and after every re-list): replace what you have.
    /// The cache's compact objects, shared: parse each as you go (`Object::value`), so a big
    /// resource is never held as trees all at once.
    Replace(&'a [super::Object]),
    /// An object was created (`prev` None) or changed.
    Upsert {
        prev: Option<&'a Value>,
        cur: &'a Value,
    },
    /// An object was deleted.
    Delete { prev: &'a Value },
}

/// How long to wait before a failed watch is tried again.
const RETRY: Duration = Duration::from_millis(500);

/// Follows every object of `info` (all namespaces) and calls `f` with each change, until
/// the returned task is aborted or the cache goes away.
pub fn spawn(
    cache: Cache,
    info: Arc<Resource>,
    mut f: impl FnMut(Change<'_>) + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let req = Request {
                info: info.clone(),
                namespace: None,
                opts: ListOptions::default(),
                start: Start::Initial(ReadAt::Any),
                bookmarks: true,
                initial_events_end: true,
                timeout: Duration::from_secs(365 * 24 * 3600),
            };
            let mut stream = match cache.watch(req).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(resource = info.resource, "following: {}", e.message);
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            };
            let mut initial: Option<Vec<super::Object>> = Some(Vec::new());
            while let Some(out) = stream.next().await {
                match out {
                    Out::Initial(o) => {
                        if let Some(v) = initial.as_mut() {
                            v.push(o);
                        }
                    }
                    Out::Bookmark(_, end) => {
                        if end {
                            if let Some(v) = initial.take() {
                                f(Change::Replace(&v));
                            }
                        }
                    }
                    Out::Event(e, _) => {
                        if let Some(v) = initial.take() {
                            f(Change::Replace(&v));
                        }
                        match (&e.object, &e.prev) {
                            (Some(cur), prev) => {
                                let prev = prev.as_ref().map(super::Object::value);
                                f(Change::Upsert {
                                    prev: prev.as_ref(),
                                    cur: &cur.value(),
                                })
                            }
                            (None, Some(prev)) => f(Change::Delete {
                                prev: &prev.value(),
                            }),
                            (None, None) => {}
                        }
                    }
                    Out::Error(s) => {
                        tracing::info!(
                            resource = info.resource,
                            "following: {}; listing again",
                            s.message
                        );
                        break;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}
