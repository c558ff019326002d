//! Watches: a stream of ADDED / MODIFIED / DELETED / BOOKMARK / ERROR events for one resource
//! (and namespace), filtered by selectors, fed from this replica's own apply stream.
//!
//! Each watch is one task that (1) subscribes to the kv apply feed, (2) optionally sends the
//! initial state as synthetic ADDED events, (3) replays history after its start revision, then
//! (4) follows the live feed, skipping revisions it already sent. The feed is a bounded
//! broadcast: apply never waits for a watcher; a watcher that falls behind gets a 410 ERROR and
//! ends (the client relists). The watch cache of the list/watch issue replaces the per-watch
//! replay with shared ring buffers.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::kv::{Event, EventKind, Revision};
use crate::meta::status::Status;
use crate::registry::resources::ResourceInfo;
use crate::registry::store::{self, ListOptions, ReadAt, Scope, Store};

/// Where a watch starts.
#[derive(Clone, Copy, Debug)]
pub enum Start {
    /// Changes after this revision, no initial state.
    After(Revision),
    /// The state at this read mode as synthetic ADDED events, then changes.
    Initial(ReadAt),
}

/// A watch request.
#[derive(Clone, Debug)]
pub struct Request {
    pub info: &'static ResourceInfo,
    pub namespace: Option<String>,
    /// Only this object (fieldSelector metadata.name=... is also honoured through `opts`).
    pub opts: ListOptions,
    pub start: Start,
    pub bookmarks: bool,
    /// Send the `k8s.io/initial-events-end` bookmark after the initial state.
    pub initial_events_end: bool,
    pub timeout: Duration,
    pub bookmark_interval: Duration,
}

/// One watch event.
#[derive(Clone, Debug)]
pub enum WatchEvent {
    Added(Value),
    Modified(Value),
    Deleted(Value),
    /// A bookmark at a revision; `true` marks the end of initial events.
    Bookmark(Revision, bool),
    Error(Status),
}

impl WatchEvent {
    /// The wire form `{"type": ..., "object": ...}`.
    pub fn to_json(&self, info: &ResourceInfo) -> Value {
        match self {
            WatchEvent::Added(o) => json!({"type": "ADDED", "object": o}),
            WatchEvent::Modified(o) => json!({"type": "MODIFIED", "object": o}),
            WatchEvent::Deleted(o) => json!({"type": "DELETED", "object": o}),
            WatchEvent::Bookmark(rev, end) => {
                let mut meta = json!({"resourceVersion": rev.to_string()});
                if *end {
                    meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
                }
                let api_version = if info.group.is_empty() {
                    info.version.to_string()
                } else {
                    format!("{}/{}", info.group, info.version)
                };
                json!({"type": "BOOKMARK", "object": {"kind": info.kind, "apiVersion": api_version, "metadata": meta}})
            }
            WatchEvent::Error(s) => json!({"type": "ERROR", "object": s.to_json()}),
        }
    }
}

/// Queue between a watch task and its HTTP stream.
const CLIENT_QUEUE: usize = 256;

/// Starts a watch. The receiver ends when the watch ends (timeout, error, client gone).
pub async fn start(store: Store, req: Request) -> Result<mpsc::Receiver<WatchEvent>, Status> {
    let kv = store.kv().clone();
    // Subscribe before reading anything so no revision falls between state and feed.
    let feed = kv.subscribe();
    let (tx, rx) = mpsc::channel(CLIENT_QUEUE);
    let scope = Scope {
        info: req.info,
        namespace: req.namespace.as_deref(),
    };
    let mut initial = Vec::new();
    let from = match req.start {
        Start::After(rev) => {
            if rev < kv.compacted_revision() {
                return Err(Status::gone(format!(
                    "too old resource version: {rev} ({})",
                    kv.compacted_revision()
                )));
            }
            rev
        }
        Start::Initial(at) => {
            let mut opts = req.opts.clone();
            opts.limit = 0;
            opts.continue_token = None;
            opts.read_at = Some(at);
            let res = store.list(scope, &opts).await?;
            initial = res.items;
            res.revision
        }
    };
    tokio::spawn(run(store, req, feed, tx, initial, from));
    Ok(rx)
}

async fn run(
    store: Store,
    req: Request,
    mut feed: broadcast::Receiver<Arc<Vec<Event>>>,
    tx: mpsc::Sender<WatchEvent>,
    initial: Vec<Value>,
    from: Revision,
) {
    let scope = Scope {
        info: req.info,
        namespace: req.namespace.as_deref(),
    };
    let prefix = scope.prefix().into_bytes();
    let end = store::prefix_end(&prefix);
    let deadline = tokio::time::Instant::now() + req.timeout;
    for obj in initial {
        if tx.send(WatchEvent::Added(obj)).await.is_err() {
            return;
        }
    }
    if req.initial_events_end {
        if tx.send(WatchEvent::Bookmark(from, true)).await.is_err() {
            return;
        }
    }
    let kv = store.kv().clone();
    // Wait for a future start revision (bounded by the watch's own timeout).
    if kv.current_revision() < from {
        let wait = deadline.saturating_duration_since(tokio::time::Instant::now());
        if !kv.wait_for_revision(from, wait).await {
            return;
        }
    }
    let mut last = from;
    match kv.events_since(from, &prefix, &end) {
        Ok(events) => {
            for ev in &events {
                if !deliver(&store, &req, scope, ev, &tx).await {
                    return;
                }
                last = last.max(ev.kv.mod_revision);
            }
        }
        Err(e) => {
            let _ = tx.send(WatchEvent::Error(store::kv_status(e))).await;
            return;
        }
    }
    last = last.max(from);
    let mut progress = last;
    let mut bookmark = tokio::time::interval(req.bookmark_interval);
    bookmark.tick().await;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => {
                if req.bookmarks {
                    let _ = tx.send(WatchEvent::Bookmark(progress, false)).await;
                }
                return;
            }
            _ = tx.closed() => return,
            _ = bookmark.tick(), if req.bookmarks => {
                if tx.send(WatchEvent::Bookmark(progress, false)).await.is_err() {
                    return;
                }
            }
            msg = feed.recv() => match msg {
                Ok(batch) if batch.is_empty() => {
                    // The replica installed a snapshot: changes were skipped, the client relists.
                    let _ = tx.send(WatchEvent::Error(Status::gone(format!(
                        "too old resource version: {last} ({})", kv.compacted_revision()
                    )))).await;
                    return;
                }
                Ok(batch) => {
                    for ev in batch.iter() {
                        let rev = ev.kv.mod_revision;
                        progress = progress.max(rev);
                        if rev <= last || ev.kv.key.as_slice() < prefix.as_slice() || ev.kv.key.as_slice() >= end.as_slice() {
                            continue;
                        }
                        if !deliver(&store, &req, scope, ev, &tx).await {
                            return;
                        }
                        last = rev;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let _ = tx.send(WatchEvent::Error(Status::gone(format!(
                        "too old resource version: {last} ({})", kv.compacted_revision()
                    )))).await;
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

/// Converts one storage event into the watch event this watcher sees (selector transitions
/// included) and sends it. Returns false when the client is gone.
async fn deliver(
    store: &Store,
    req: &Request,
    scope: Scope<'_>,
    ev: &Event,
    tx: &mpsc::Sender<WatchEvent>,
) -> bool {
    let rev = ev.kv.mod_revision;
    let decode_at = |kv: &crate::kv::KeyValue| -> Option<Value> {
        let mut o = store::decode(kv).ok()?;
        store::meta_mut(&mut o).insert("resourceVersion".into(), json!(rev.to_string()));
        Some(o)
    };
    let old = ev.prev_kv.as_ref().and_then(decode_at);
    let old_match = old
        .as_ref()
        .is_some_and(|o| store.matches(scope, &req.opts, o));
    let out = match ev.kind {
        EventKind::Put => {
            let Ok(new) = store::decode(&ev.kv) else {
                return true;
            };
            let new_match = store.matches(scope, &req.opts, &new);
            match (old_match, new_match) {
                (true, true) => Some(WatchEvent::Modified(new)),
                (false, true) => Some(WatchEvent::Added(new)),
                (true, false) => old.map(WatchEvent::Deleted),
                (false, false) => None,
            }
        }
        EventKind::Delete => {
            if old_match {
                old.map(WatchEvent::Deleted)
            } else {
                None
            }
        }
    };
    match out {
        Some(e) => tx.send(e).await.is_ok(),
        None => true,
    }
}
