//! The cache proper: state per resource, the dispatcher task that applies the kv feed to it
//! and fans events out to watchers, watch registration and cached lists.
//!
//! Gap-free hand-over: the dispatcher applies a revision to the state, pushes its events to
//! every registered watcher and only then publishes the new cache revision. A watcher is
//! registered under the same lock, at the cache revision `C` it read its initial state at, and
//! receives exactly the events after `C` (or after its requested start, when that is newer).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{broadcast, watch};

use super::{queue, CacheOptions, CachedEvent, Object, Out, Request, Start, WatchStream};
use crate::kv::{self, Event, EventKind, Revision};
use crate::meta::status::Status;
use crate::registry::store::{
    self, encode_continue, kv_status, prefix_end, ListOptions, ListResult, ReadAt, Scope, Store,
};
use crate::registry::Resource as Served;

/// How often the dispatcher checks that it is not behind the kv store without events (e.g.
/// after a snapshot was installed).
const STALL_CHECK: Duration = Duration::from_secs(1);

/// A page of a list whose objects are shared with the cache.
#[derive(Debug)]
pub struct SharedList {
    pub items: Vec<Object>,
    pub revision: Revision,
    pub continue_token: Option<String>,
    pub remaining: Option<i64>,
}

/// The watch cache. Clone is cheap.
#[derive(Clone)]
pub struct Cache {
    inner: Arc<Inner>,
}

pub(super) struct Inner {
    store: Store,
    pub(super) opts: CacheOptions,
    state: RwLock<State>,
    /// The revision the cache has applied (published after the events were dispatched).
    pub(super) revision: watch::Sender<Revision>,
    next_id: AtomicU64,
    /// The first kv revision the cache was seen behind, and when (`/readyz`).
    lag: std::sync::Mutex<Option<(Revision, std::time::Instant)>>,
    /// Whether the cache has caught up with a read barrier since this process started.
    /// Until then "any" reads are served as "most recent": after a crash that lost applied
    /// but un-fsynced state, this replica starts behind what it served before, and must not
    /// serve that older state (reads of one client stay monotonic across restarts).
    primed: std::sync::atomic::AtomicBool,
}

struct State {
    revision: Revision,
    /// Revision the state was (re)loaded at: a resource without a ring buffer has had no
    /// event since.
    loaded_at: Revision,
    resources: HashMap<Vec<u8>, Resource>,
}

struct Resource {
    /// The current objects, compact (their JSON bytes and labels, no trees).
    objects: BTreeMap<Vec<u8>, Object>,
    events: VecDeque<Arc<CachedEvent>>,
    /// Every event of this resource with a revision > buffer_start is in `events`.
    buffer_start: Revision,
    /// Registered watchers by key prefix (the resource's, or one namespace's): an event
    /// visits only the watchers whose prefix it is under.
    watchers: HashMap<Vec<u8>, Vec<Slot>>,
}

impl Resource {
    fn add(&mut self, slot: Slot) {
        self.watchers
            .entry(slot.prefix.clone())
            .or_default()
            .push(slot);
    }

    /// Pushes `ev` (of the resource with prefix `rp`) to the watchers of the resource and
    /// of the event's namespace, dropping those that are gone or fell behind.
    fn dispatch(&mut self, rp: &[u8], ev: &Arc<CachedEvent>) {
        let ns = namespace_prefix(rp, &ev.key);
        for p in std::iter::once(rp).chain(ns) {
            let Some(ws) = self.watchers.get_mut(p) else {
                continue;
            };
            ws.retain(|w| dispatch(w, ev));
            if ws.is_empty() {
                self.watchers.remove(p);
            }
        }
    }

    fn new(buffer_start: Revision) -> Resource {
        Resource {
            objects: BTreeMap::new(),
            events: VecDeque::new(),
            buffer_start,
            watchers: HashMap::new(),
        }
    }
}

/// A registered watcher, as the dispatcher sees it.
struct Slot {
    id: u64,
    /// Key prefix (resource, and namespace when the watch is namespaced).
    prefix: Vec<u8>,
    info: Arc<Served>,
    opts: ListOptions,
    /// Only events with a revision > from.
    from: Revision,
    tx: queue::Sender,
}

/// `/<group>/<resource>/` of a key, if it has that shape. Rafter's own bookkeeping under
/// `/.rafter/` (the Event expiry index, ...) is never a resource.
pub fn resource_prefix(key: &[u8]) -> Option<&[u8]> {
    if key.first() != Some(&b'/') || key.starts_with(b"/.rafter/") {
        return None;
    }
    let mut slashes = 0;
    for (i, b) in key.iter().enumerate() {
        if *b == b'/' {
            slashes += 1;
            if slashes == 3 {
                return Some(&key[..=i]);
            }
        }
    }
    None
}

/// `/<group>/<resource>/<namespace>/` of a key under resource prefix `rp` that has a name
/// after it (a namespaced object's key).
fn namespace_prefix<'a>(rp: &[u8], key: &'a [u8]) -> Option<&'a [u8]> {
    let rest = key.get(rp.len()..)?;
    let slash = rest.iter().position(|b| *b == b'/')?;
    Some(&key[..rp.len() + slash + 1])
}

/// The largest gap the cache replays from kv history rather than reloading.
const REPLAY_MAX: Revision = 1_000;

/// Whether a value was left out because it could not be decoded (a KMS plugin down, say):
/// the dispatcher reloads once encryption at rest reports a provider recovered.
static LEFT_OUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn decode_object(kv: &kv::KeyValue) -> Option<Object> {
    decode_value(kv).as_ref().map(Object::new)
}

fn decode_value(kv: &kv::KeyValue) -> Option<Value> {
    match store::decode(kv) {
        Ok(v) => Some(v),
        Err(e) => {
            // Left out of lists and watches; a GET asks storage and reports the error.
            LEFT_OUT.store(true, Ordering::SeqCst);
            tracing::error!("watch cache: {}", e.message);
            None
        }
    }
}

/// Whether a cached object matches a list's or watch's selectors: labels from the compact
/// form, the field selector (rare) from the parsed object.
pub fn matches(store: &Store, scope: Scope<'_>, opts: &ListOptions, o: &Object) -> bool {
    matches_with(store, scope, opts, o, || None)
}

/// [`matches`] with a parsed tree of `o` at hand when `tree` has one (the dispatcher parses
/// an event's objects once for every watcher with a field selector).
fn matches_with<'a>(
    store: &Store,
    scope: Scope<'_>,
    opts: &ListOptions,
    o: &Object,
    tree: impl FnOnce() -> Option<&'a Value>,
) -> bool {
    if opts.field_selector.as_ref().is_some_and(|s| !s.is_empty()) {
        return match tree() {
            Some(v) => store.matches(scope, opts, v),
            None => store.matches(scope, opts, &o.value()),
        };
    }
    opts.label_selector
        .as_ref()
        .is_none_or(|sel| sel.matches_lookup(|k| o.label(k)))
}

fn filtered(opts: &ListOptions) -> bool {
    opts.label_selector.as_ref().is_some_and(|s| !s.is_empty())
        || opts.field_selector.as_ref().is_some_and(|s| !s.is_empty())
}

impl Cache {
    /// The served resources.
    pub fn registry(&self) -> &Arc<crate::registry::Registry> {
        self.inner.store.registry()
    }

    /// The store the cache follows (for followers that also write, as the leader's status
    /// loops do).
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Loads the current state from kv and starts the dispatcher.
    pub async fn start(store: Store, opts: CacheOptions) -> Result<Cache, Status> {
        let kv = store.kv().clone();
        let feed = kv.subscribe();
        let state = load(&kv)?;
        let inner = Arc::new(Inner {
            store,
            opts,
            revision: watch::Sender::new(state.revision),
            state: RwLock::new(state),
            next_id: AtomicU64::new(1),
            lag: std::sync::Mutex::new(None),
            primed: std::sync::atomic::AtomicBool::new(false),
        });
        tokio::spawn(supervise(Arc::downgrade(&inner), feed));
        Ok(Cache { inner })
    }

    /// Whether the cache has been behind the kv store's applied revision for longer than
    /// `bound` (a stuck dispatcher): `/readyz` fails then.
    pub fn lagging(&self, bound: Duration) -> bool {
        let kv_rev = self.inner.store.kv().current_revision();
        let mine = self.revision();
        let mut lag = self.inner.lag.lock().unwrap_or_else(|e| e.into_inner());
        match *lag {
            Some((rev, _)) if mine >= rev => {
                *lag = (mine < kv_rev).then(|| (kv_rev, std::time::Instant::now()));
                false
            }
            Some((_, since)) => since.elapsed() > bound,
            None => {
                if mine < kv_rev {
                    *lag = Some((kv_rev, std::time::Instant::now()));
                }
                false
            }
        }
    }

    pub fn options(&self) -> &CacheOptions {
        &self.inner.opts
    }

    /// The revision the cache has applied.
    pub fn revision(&self) -> Revision {
        *self.inner.revision.borrow()
    }

    /// Waits (bounded) until the cache has applied `rev`. true if reached.
    pub async fn wait_fresh(&self, rev: Revision, timeout: Duration) -> bool {
        let mut rx = self.inner.revision.subscribe();
        if *rx.borrow() >= rev {
            return true;
        }
        let reached = matches!(
            tokio::time::timeout(timeout, rx.wait_for(|r| *r >= rev)).await,
            Ok(Ok(_))
        );
        reached
    }

    /// The revision a read must reach: the read barrier for "most recent", the requested
    /// revision for NotOlderThan (504 when it is not reached in time), 0 for "any" (once the
    /// cache has caught up with a first barrier: see `Inner::primed`).
    async fn settle(&self, at: ReadAt) -> Result<Revision, Status> {
        let wait = self.inner.opts.fresh_wait;
        match at {
            ReadAt::Latest => {
                let rev = self
                    .inner
                    .store
                    .kv()
                    .read_barrier()
                    .await
                    .map_err(kv_status)?;
                if !self.wait_fresh(rev, wait).await {
                    return Err(Status::timeout(
                        format!("Timeout: the watch cache did not reach revision {rev} in time"),
                        1,
                    ));
                }
                self.inner.primed.store(true, Ordering::Release);
                Ok(rev)
            }
            ReadAt::Any if !self.inner.primed.load(Ordering::Acquire) => {
                Box::pin(self.settle(ReadAt::Latest)).await?;
                Ok(0)
            }
            ReadAt::Any => Ok(0),
            ReadAt::NotOlderThan(rev) | ReadAt::Exact(rev) => {
                if !self.wait_fresh(rev, wait).await {
                    return Err(Status::too_large_resource_version(rev, self.revision()));
                }
                Ok(rev)
            }
        }
    }

    /// LIST: from the cache for unset / "0" / NotOlderThan, from kv history for Exact and
    /// continue tokens. Pages served from the cache carry a continue token at the cache
    /// revision, so later pages read the same snapshot from history.
    pub async fn list(&self, scope: Scope<'_>, opts: &ListOptions) -> Result<ListResult, Status> {
        let at = opts.read_at.unwrap_or(ReadAt::Latest);
        if opts.continue_token.is_some() || matches!(at, ReadAt::Exact(_)) {
            return self.inner.store.list(scope, opts).await;
        }
        let l = self.list_shared(scope, opts).await?;
        Ok(ListResult {
            items: l.items.iter().map(Object::value).collect(),
            revision: l.revision,
            continue_token: l.continue_token,
            remaining: l.remaining,
        })
    }

    /// [`Cache::list`] with the cached objects shared (no copies) for encoders that only
    /// read them.
    pub async fn list_shared(
        &self,
        scope: Scope<'_>,
        opts: &ListOptions,
    ) -> Result<SharedList, Status> {
        let at = opts.read_at.unwrap_or(ReadAt::Latest);
        if opts.continue_token.is_some() || matches!(at, ReadAt::Exact(_)) {
            let l = self.inner.store.list(scope, opts).await?;
            return Ok(SharedList {
                items: l.items.iter().map(Object::new).collect(),
                revision: l.revision,
                continue_token: l.continue_token,
                remaining: l.remaining,
            });
        }
        self.settle(at).await?;
        Ok(self.snapshot(scope, opts))
    }

    /// GET of one object: from the cache for unset / "0" / NotOlderThan (same waits as
    /// [`Cache::list`]), from kv history for Exact.
    pub async fn get(&self, scope: Scope<'_>, name: &str, at: ReadAt) -> Result<Value, Status> {
        if matches!(at, ReadAt::Exact(_)) {
            return self.inner.store.get(scope, name, at).await;
        }
        self.settle(at).await?;
        let key = scope.key(name);
        let found = {
            let st = self.read();
            resource_prefix(&key)
                .and_then(|rp| st.resources.get(rp))
                .and_then(|r| r.objects.get(&key).cloned())
        };
        match found {
            Some(o) => Ok(o.value()),
            // Absent from the cache: storage decides, so an object the cache could not
            // decode (e.g. encrypted with a key this replica lacks) is an error, not a 404.
            None => self.inner.store.get(scope, name, ReadAt::Any).await,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.inner.state.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The matching objects at the cache revision (only `Arc` clones under the lock).
    fn snapshot(&self, scope: Scope<'_>, opts: &ListOptions) -> SharedList {
        let st = self.read();
        let prefix = scope.prefix().into_bytes();
        let end = prefix_end(&prefix);
        let revision = st.revision;
        let mut out = SharedList {
            items: Vec::new(),
            revision,
            continue_token: None,
            remaining: None,
        };
        let Some(res) = resource_prefix(&prefix).and_then(|rp| st.resources.get(rp)) else {
            return out;
        };
        let is_filtered = filtered(opts);
        let mut last: Option<&Vec<u8>> = None;
        let store = &self.inner.store;
        let range = res
            .objects
            .range::<Vec<u8>, _>((Bound::Included(&prefix), Bound::Excluded(&end)));
        for (k, o) in range {
            if is_filtered && !matches(store, scope, opts, o) {
                continue;
            }
            if opts.limit > 0 && out.items.len() >= opts.limit {
                if let Some(lk) = last {
                    let suffix = String::from_utf8_lossy(&lk[prefix.len()..]).into_owned();
                    let left = (!is_filtered).then(|| {
                        res.objects
                            .range::<Vec<u8>, _>((Bound::Excluded(lk), Bound::Excluded(&end)))
                            .count() as i64
                    });
                    out.remaining = left.filter(|n| *n > 0);
                    out.continue_token =
                        Some(encode_continue(revision, &format!("{suffix}\u{0}"), left));
                }
                break;
            }
            out.items.push(o.clone());
            last = Some(k);
        }
        out
    }

    /// Starts a watch.
    pub async fn watch(&self, req: Request) -> Result<WatchStream, Status> {
        let scope = Scope {
            info: &req.info,
            namespace: req.namespace.as_deref(),
        };
        let prefix = scope.prefix().into_bytes();
        let rp = resource_prefix(&prefix)
            .map(<[u8]>::to_vec)
            .unwrap_or_else(|| prefix.clone());
        let (tx, rx) = queue::queue(self.inner.opts.watcher_queue.max(1));
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut slot = Slot {
            id,
            prefix: prefix.clone(),
            info: req.info.clone(),
            opts: req.opts.clone(),
            from: 0,
            tx,
        };
        let mut initial: VecDeque<Out> = VecDeque::new();
        let mut history_from = None;
        let from;
        match req.start {
            Start::Initial(at) | Start::Now(at) => {
                self.settle(at).await?;
                let mut st = self.write();
                let rev = st.revision;
                let loaded_at = st.loaded_at;
                let res = st
                    .resources
                    .entry(rp.clone())
                    .or_insert_with(|| Resource::new(loaded_at));
                if matches!(req.start, Start::Initial(_)) {
                    let end = prefix_end(&prefix);
                    let range = res
                        .objects
                        .range::<Vec<u8>, _>((Bound::Included(&prefix), Bound::Excluded(&end)));
                    for (_, o) in range {
                        if matches(&self.inner.store, scope, &req.opts, o) {
                            initial.push_back(Out::Initial(o.clone()));
                        }
                    }
                    if req.initial_events_end && req.bookmarks {
                        initial.push_back(Out::Bookmark(rev, true));
                    }
                }
                slot.from = rev;
                from = rev;
                res.add(slot);
            }
            Start::After(n) => {
                let compacted = self.inner.store.kv().compacted_revision();
                if n < compacted {
                    initial.push_back(Out::Error(Box::new(too_old(n, compacted))));
                    return Ok(WatchStream::new(
                        self.clone_inner(),
                        &req,
                        rp,
                        id,
                        initial,
                        None,
                        n,
                    ));
                }
                let mut st = self.write();
                let rev = st.revision;
                let loaded_at = st.loaded_at;
                let res = st
                    .resources
                    .entry(rp.clone())
                    .or_insert_with(|| Resource::new(loaded_at));
                if n >= rev {
                    slot.from = n;
                } else if n >= res.buffer_start {
                    for e in res.events.iter().filter(|e| e.revision > n) {
                        if !e.key.starts_with(&prefix) {
                            continue;
                        }
                        if let Some(t) = e.type_for_watch(&req.info.strategy, &req.opts) {
                            initial.push_back(Out::Event(e.clone(), t));
                        }
                    }
                    slot.from = rev;
                } else {
                    history_from = Some((n, rev));
                    slot.from = rev;
                }
                from = slot.from;
                res.add(slot);
            }
        }
        if let Some((n, upto)) = history_from {
            let end = prefix_end(&prefix);
            match self.inner.store.kv().events_since(n, &prefix, &end) {
                Ok(events) => {
                    let mut objects: HashMap<Vec<u8>, Object> = HashMap::new();
                    for ev in events.iter().filter(|e| e.kv.mod_revision <= upto) {
                        let prev = match objects.get(&ev.kv.key) {
                            Some(p) => Some(p.clone()),
                            None => ev.prev_kv.as_ref().and_then(decode_object),
                        };
                        let object = match ev.kind {
                            EventKind::Put => decode_object(&ev.kv),
                            EventKind::Delete => None,
                        };
                        match &object {
                            Some(o) => objects.insert(ev.kv.key.clone(), o.clone()),
                            None => objects.remove(&ev.kv.key),
                        };
                        let ce =
                            CachedEvent::new(ev.kv.mod_revision, ev.kv.key.clone(), object, prev);
                        if let Some(t) =
                            ce.type_for(|o| matches(&self.inner.store, scope, &req.opts, o))
                        {
                            initial.push_back(Out::Event(Arc::new(ce), t));
                        }
                    }
                }
                Err(kv::Error::Compacted { compacted, .. }) => {
                    initial.clear();
                    initial.push_back(Out::Error(Box::new(too_old(n, compacted))));
                    self.unregister(&rp, id);
                    return Ok(WatchStream::new(
                        self.clone_inner(),
                        &req,
                        rp,
                        id,
                        initial,
                        None,
                        n,
                    ));
                }
                Err(e) => {
                    self.unregister(&rp, id);
                    return Err(kv_status(e));
                }
            }
        }
        Ok(WatchStream::new(
            self.clone_inner(),
            &req,
            rp,
            id,
            initial,
            Some(rx),
            from,
        ))
    }

    fn clone_inner(&self) -> Weak<Inner> {
        Arc::downgrade(&self.inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.inner.write()
    }

    fn unregister(&self, rp: &[u8], id: u64) {
        self.inner.unregister(rp, id);
    }

    /// The cached objects and registered watchers of one resource (every namespace), for
    /// flow control's work estimates.
    pub fn counts(&self, info: &crate::registry::Resource) -> (usize, usize) {
        let prefix = Scope {
            info,
            namespace: None,
        }
        .prefix();
        let st = self.read();
        match resource_prefix(prefix.as_bytes()).and_then(|rp| st.resources.get(rp)) {
            Some(r) => (r.objects.len(), r.watchers.values().map(Vec::len).sum()),
            None => (0, 0),
        }
    }

    /// Sets kube's `apiserver_storage_objects` gauge from the objects the cache holds: one
    /// series per resource, labelled `resource.group` (core resources by their plural
    /// alone), as kube labels it. Called when metrics are scraped.
    pub fn record_object_counts(&self) {
        let st = self.read();
        for (rp, r) in &st.resources {
            if let Some(label) = storage_objects_label(rp) {
                metrics::gauge!("apiserver_storage_objects", "resource" => label)
                    .set(r.objects.len() as f64);
            }
        }
    }

    /// Number of registered watchers (for tests and metrics).
    pub fn watchers(&self) -> usize {
        self.read()
            .resources
            .values()
            .map(|r| r.watchers.values().map(Vec::len).sum::<usize>())
            .sum()
    }
}

/// The `resource` label of `apiserver_storage_objects` for a resource prefix
/// (`/apps/deployments/` → `deployments.apps`, `/core/configmaps/` → `configmaps`).
fn storage_objects_label(prefix: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(prefix).ok()?;
    let (group, resource) = s.trim_matches('/').split_once('/')?;
    Some(if group == "core" {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    })
}

/// kube's message for a watch (or list) older than the retained history.
pub fn too_old(requested: Revision, oldest: Revision) -> Status {
    Status::gone(format!("too old resource version: {requested} ({oldest})"))
}

impl Inner {
    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn unregister(&self, rp: &[u8], id: u64) {
        let mut st = self.write();
        if let Some(res) = st.resources.get_mut(rp) {
            res.watchers.retain(|_, ws| {
                ws.retain(|w| w.id != id);
                !ws.is_empty()
            });
        }
    }

    /// Applies events (of one or more revisions, in order) newer than the cache revision,
    /// dispatches them, then publishes the new revision.
    fn apply(&self, events: &[Event]) {
        let mut st = self.write();
        let base = st.revision;
        let mut top = base;
        let cap = self.opts.events_per_resource.max(1);
        let loaded_at = st.loaded_at;
        for ev in events {
            let rev = ev.kv.mod_revision;
            if rev <= base {
                continue;
            }
            top = top.max(rev);
            let Some(rp) = resource_prefix(&ev.kv.key) else {
                continue;
            };
            let res = st
                .resources
                .entry(rp.to_vec())
                .or_insert_with(|| Resource::new(loaded_at));
            let prev = match res.objects.get(&ev.kv.key) {
                Some(p) => Some(p.clone()),
                None => ev.prev_kv.as_ref().and_then(decode_object),
            };
            let tree = match ev.kind {
                EventKind::Put => decode_value(&ev.kv),
                EventKind::Delete => None,
            };
            let object = tree.as_ref().map(Object::new);
            drop(tree);
            match &object {
                Some(o) => res.objects.insert(ev.kv.key.clone(), o.clone()),
                None => res.objects.remove(&ev.kv.key),
            };
            let ce = Arc::new(CachedEvent::new(rev, ev.kv.key.clone(), object, prev));
            res.events.push_back(ce.clone());
            while res.events.len() > cap {
                if let Some(old) = res.events.pop_front() {
                    res.buffer_start = res.buffer_start.max(old.revision);
                }
            }
            res.dispatch(rp, &ce);
        }
        st.revision = top;
        drop(st);
        if top > base {
            self.revision.send_replace(top);
        }
    }

    /// Reloads everything from kv (after losing events); every watcher ends with a 410.
    fn resync(&self) {
        let kv = self.store.kv();
        let fresh = match load(kv) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("watch cache resync failed: {e}");
                return;
            }
        };
        let mut st = self.write();
        let old = std::mem::replace(&mut *st, fresh);
        for res in old.resources.into_values() {
            for w in res.watchers.into_values().flatten() {
                w.tx.fail(too_old(w.from, kv.compacted_revision()));
            }
        }
        let rev = st.revision;
        drop(st);
        self.revision.send_replace(rev);
    }

    /// Replays what the cache missed from kv history, or resyncs when that is compacted or
    /// the gap is large (a snapshot install: replaying would hold every missed value at once,
    /// where a resync streams the state).
    fn catch_up(&self) {
        let from = *self.revision.borrow();
        if self.store.kv().current_revision().saturating_sub(from) > REPLAY_MAX {
            tracing::info!(
                "watch cache missed more than {REPLAY_MAX} revisions after {from}; resyncing"
            );
            self.resync();
            return;
        }
        match self.store.kv().events_since(from, b"", b"") {
            Ok(events) => self.apply(&events),
            Err(e) => {
                tracing::warn!("watch cache lost events after revision {from} ({e}); resyncing");
                self.resync();
            }
        }
    }
}

/// Pushes one event to one watcher; false when the watcher is to be removed.
fn dispatch(w: &Slot, ev: &Arc<CachedEvent>) -> bool {
    if ev.revision <= w.from || !ev.key.starts_with(&w.prefix) {
        return !w.tx.is_closed();
    }
    let Some(t) = ev.type_for_watch(&w.info.strategy, &w.opts) else {
        return true;
    };
    match w.tx.try_send(Out::Event(ev.clone(), t)) {
        Ok(()) => true,
        Err(queue::SendError::Full) => {
            w.tx.fail(Status::gone(format!(
                "too old resource version: {} ({}): the watcher fell {} events behind and was stopped",
                w.from,
                ev.revision,
                w.tx.max_capacity()
            )));
            false
        }
        Err(queue::SendError::Closed) => false,
    }
}

/// Reads the whole keyspace into a fresh state, one stored value at a time (never the raw
/// keyspace and its compact form together).
fn load(kv: &kv::Kv) -> Result<State, Status> {
    let mut resources: HashMap<Vec<u8>, Resource> = HashMap::new();
    let revision = kv
        .scan_live(b"", b"", |item| {
            let Some(rp) = resource_prefix(&item.key) else {
                return;
            };
            let Some(obj) = decode_object(&item) else {
                return;
            };
            if !resources.contains_key(rp) {
                resources.insert(rp.to_vec(), Resource::new(0));
            }
            if let Some(r) = resources.get_mut(rp) {
                r.objects.insert(item.key, obj);
            }
        })
        .map_err(kv_status)?;
    // Every event after the view's revision reaches the cache through the feed.
    for r in resources.values_mut() {
        r.buffer_start = revision;
    }
    Ok(State {
        revision,
        loaded_at: revision,
        resources,
    })
}

/// The one task that applies the kv feed to the cache.
/// Runs the dispatcher and restarts it if it dies (a panic): the state is reloaded from kv
/// and every watcher gets a 410, as after a lost event stream, so reads never wait forever
/// on a cache that stopped moving.
async fn supervise(weak: Weak<Inner>, feed: broadcast::Receiver<Arc<Vec<Event>>>) {
    let mut feed = Some(feed);
    loop {
        let rx = match feed.take() {
            Some(f) => f,
            None => {
                let Some(inner) = weak.upgrade() else { return };
                // Subscribe first, then reload: nothing applied in between is missed.
                let rx = inner.store.kv().subscribe();
                inner.resync();
                rx
            }
        };
        match tokio::spawn(dispatcher(weak.clone(), rx)).await {
            Err(e) if e.is_panic() => {
                tracing::error!("the watch cache dispatcher died; restarting it");
                metrics::counter!("rafter_watch_cache_restarts_total").increment(1);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            _ => return,
        }
    }
}

async fn dispatcher(weak: Weak<Inner>, mut feed: broadcast::Receiver<Arc<Vec<Event>>>) {
    let mut check = tokio::time::interval(STALL_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seen_kv_rev: Revision = 0;
    let mut seen_recoveries = 0;
    loop {
        tokio::select! {
            msg = feed.recv() => {
                let Some(inner) = weak.upgrade() else { return };
                match msg {
                    // An empty batch: the replica installed a snapshot and jumped ahead.
                    Ok(batch) if batch.is_empty() => inner.catch_up(),
                    Ok(batch) => {
                        if crate::faults::dispatcher_should_panic(batch.iter().map(|e| e.kv.key.as_slice())) {
                            panic!("test fault: watch-dispatcher-panic");
                        }
                        inner.apply(&batch)
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => inner.catch_up(),
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
            _ = check.tick() => {
                let Some(inner) = weak.upgrade() else { return };
                // The kv store reached `seen_kv_rev` a tick ago; its events should be here.
                if *inner.revision.borrow() < seen_kv_rev {
                    inner.catch_up();
                }
                seen_kv_rev = inner.store.kv().current_revision();
                // A KMS plugin answers again: values it could not open before are read now.
                let recoveries = crate::registry::encryption::recoveries();
                if recoveries != seen_recoveries {
                    seen_recoveries = recoveries;
                    if LEFT_OUT.swap(false, Ordering::SeqCst) {
                        tracing::info!("watch cache: an encryption provider recovered; reloading values it could not decode");
                        inner.resync();
                    }
                }
            }
        }
    }
}
