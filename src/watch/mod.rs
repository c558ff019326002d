//! The watch cache: a decorator over the kv store, like kube-apiserver's cacher, that serves
//! watches and most lists from memory, fed by this replica's own apply stream.
//!
//! One dispatcher task ([`cache`]) consumes the kv feed and keeps, per resource (the key
//! prefix `/<group>/<resource>/`, so every served version of a resource shares one cache), the
//! current objects and a bounded ring buffer of recent events with their previous object.
//! Objects are kept compact ([`Object`]: their JSON bytes and labels, decoded once, shared
//! behind `Arc`), not as `serde_json` trees; consumers that need a tree parse one. Each
//! event's JSON line is written from those bytes at most once per event type, however many
//! watchers receive it ([`CachedEvent::line`]).
//!
//! A watcher ([`WatchStream`]) gets its initial state (synthetic ADDED events from the cache,
//! or replayed events from the ring buffer, or from kv history when the ring buffer no longer
//! reaches back far enough), then the live events the dispatcher pushes into its bounded
//! queue. The dispatcher never waits: a watcher whose queue is full is ended with a 410
//! ERROR event. Watch starts older than the compacted revision get 410 `Expired`.
//!
//! Reads: [`Cache::list`] serves `resourceVersion` unset (after a read barrier and once the
//! cache caught up), `0` and `NotOlderThan` from memory; `Exact` and continue tokens go to
//! kv history through [`crate::registry::store::Store::list`].

pub mod cache;
pub mod follow;
pub mod object;
mod queue;
mod stream;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};

use crate::kv::Revision;
use crate::meta::status::Status;
use crate::registry::field_selectors;
use crate::registry::store::{ListOptions, ReadAt};
use crate::registry::strategy::Strategy;
use crate::registry::Resource;

pub use cache::Cache;
pub use object::Object;
pub use stream::WatchStream;

/// Tunables of the watch cache.
#[derive(Clone, Debug)]
pub struct CacheOptions {
    /// Ring buffer capacity per resource (events).
    pub events_per_resource: usize,
    /// Queue capacity per watcher (events); a watcher whose queue overflows gets a 410.
    pub watcher_queue: usize,
    /// Interval of BOOKMARK events for watches that allow them.
    pub bookmark_interval: Duration,
    /// How long a read waits for the cache to reach a requested revision (then 504).
    pub fresh_wait: Duration,
}

impl Default for CacheOptions {
    fn default() -> Self {
        CacheOptions {
            events_per_resource: 4096,
            watcher_queue: 1024,
            bookmark_interval: Duration::from_secs(60),
            fresh_wait: Duration::from_secs(3),
        }
    }
}

/// The type of a watch event carrying an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change of one object, as the cache keeps it.
#[derive(Debug)]
pub struct CachedEvent {
    pub revision: Revision,
    pub key: Vec<u8>,
    /// The object after the change (with its resourceVersion); `None` for a deletion.
    pub object: Option<Object>,
    /// The object before the change (with its own resourceVersion), if it existed.
    pub prev: Option<Object>,
    /// `prev` stamped with this event's revision (what DELETED events carry).
    deleted_object: OnceLock<Object>,
    lines: [OnceLock<Bytes>; 3],
    /// The same events in another encoding (protobuf frames), made by the edge once.
    frames: [OnceLock<Bytes>; 3],
    /// The field sets of `object` and `prev` (for field selectors), computed once per event
    /// for the first strategy that asks (every served version of a built-in resource shares
    /// one; another strategy computes its own each time).
    fields: OnceLock<FieldSets>,
    /// Encodings the edge makes for one served version (Table rows, converted objects,
    /// PartialObjectMetadata), made once per (version, flavour, type) and shared by every
    /// watcher that asks for the same.
    encoded: Mutex<Vec<Encoded>>,
}

/// Field sets of one event's objects for one strategy.
struct FieldSets {
    strategy: Arc<dyn Strategy>,
    object: Option<BTreeMap<String, String>>,
    prev: Option<BTreeMap<String, String>>,
}

impl std::fmt::Debug for FieldSets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldSets")
            .field("object", &self.object)
            .field("prev", &self.prev)
            .finish_non_exhaustive()
    }
}

/// One encoding of an event made for a served version.
#[derive(Debug)]
struct Encoded {
    served: Arc<Resource>,
    flavour: u32,
    t: EventType,
    bytes: Bytes,
}

impl CachedEvent {
    pub fn new(
        revision: Revision,
        key: Vec<u8>,
        object: Option<Object>,
        prev: Option<Object>,
    ) -> CachedEvent {
        CachedEvent {
            revision,
            key,
            object,
            prev,
            deleted_object: OnceLock::new(),
            lines: Default::default(),
            frames: Default::default(),
            fields: OnceLock::new(),
            encoded: Mutex::new(Vec::new()),
        }
    }

    /// The event type a watcher with selectors `opts` on a resource of `strategy` sees, if
    /// any ([`CachedEvent::type_for`] with kube's label and field selector matching); the
    /// field sets are computed once per event, not once per watcher.
    pub fn type_for_watch(
        &self,
        strategy: &Arc<dyn Strategy>,
        opts: &ListOptions,
    ) -> Option<EventType> {
        let labels = |o: &Object| {
            opts.label_selector
                .as_ref()
                .is_none_or(|sel| sel.matches_lookup(|k| o.label(k)))
        };
        let Some(fsel) = opts.field_selector.as_ref().filter(|s| !s.is_empty()) else {
            return self.type_for(labels);
        };
        let cur = self.object.as_ref().is_some_and(labels);
        let old = self.prev.as_ref().is_some_and(labels);
        if !cur && !old {
            return None;
        }
        let mut own = None;
        let sets = match self.field_sets(strategy) {
            Some(s) => s,
            None => own.insert(self.compute_field_sets(strategy)),
        };
        let cur = cur && sets.object.as_ref().is_some_and(|f| fsel.matches(f));
        let old = old && sets.prev.as_ref().is_some_and(|f| fsel.matches(f));
        match (cur, old) {
            (true, false) => Some(EventType::Added),
            (true, true) => Some(EventType::Modified),
            (false, true) => Some(EventType::Deleted),
            (false, false) => None,
        }
    }

    /// The cached field sets, when they were (or now are) made for `strategy`.
    fn field_sets(&self, strategy: &Arc<dyn Strategy>) -> Option<&FieldSets> {
        let sets = self
            .fields
            .get_or_init(|| self.compute_field_sets(strategy));
        Arc::ptr_eq(&sets.strategy, strategy).then_some(sets)
    }

    fn compute_field_sets(&self, strategy: &Arc<dyn Strategy>) -> FieldSets {
        // The trees are parsed here once per event (the cache keeps bytes).
        let set = |o: &Option<Object>| {
            o.as_ref()
                .map(|o| field_selectors::field_set(&**strategy, &o.value()))
        };
        FieldSets {
            strategy: strategy.clone(),
            object: set(&self.object),
            prev: set(&self.prev),
        }
    }

    /// The event of type `t` as the edge encodes it for served version `served` in a
    /// `flavour` of its choosing (Table with an includeObject, a converted object, ...):
    /// made once by `make` and shared by every watcher asking for the same.
    pub fn encoded(
        &self,
        served: &Arc<Resource>,
        flavour: u32,
        t: EventType,
        make: impl FnOnce() -> Bytes,
    ) -> Bytes {
        let find = |v: &[Encoded]| {
            v.iter()
                .find(|e| e.flavour == flavour && e.t == t && Arc::ptr_eq(&e.served, served))
                .map(|e| e.bytes.clone())
        };
        if let Some(b) = find(&self.encoded.lock().unwrap_or_else(|e| e.into_inner())) {
            return b;
        }
        // Made outside the lock: watchers of other flavours do not wait for this one.
        let bytes = make();
        let mut v = self.encoded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = find(&v) {
            return b;
        }
        v.push(Encoded {
            served: served.clone(),
            flavour,
            t,
            bytes: bytes.clone(),
        });
        bytes
    }

    /// The event type a watcher with filter `m` sees, if any (kube's cacher rules: an object
    /// that starts matching is ADDED, one that stops matching is DELETED).
    pub fn type_for(&self, m: impl Fn(&Object) -> bool) -> Option<EventType> {
        let cur = self.object.as_ref().is_some_and(&m);
        let old = self.prev.as_ref().is_some_and(&m);
        match (cur, old) {
            (true, false) => Some(EventType::Added),
            (true, true) => Some(EventType::Modified),
            (false, true) => Some(EventType::Deleted),
            (false, false) => None,
        }
    }

    /// The object an event of type `t` carries.
    pub fn object_for(&self, t: EventType) -> Object {
        match t {
            EventType::Added | EventType::Modified => self
                .object
                .clone()
                .unwrap_or_else(|| Object::new(&json!({}))),
            EventType::Deleted => self
                .deleted_object
                .get_or_init(|| {
                    let mut o = self.prev.as_ref().map_or_else(|| json!({}), Object::value);
                    if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                        m.insert("resourceVersion".into(), json!(self.revision.to_string()));
                    }
                    Object::new(&o)
                })
                .clone(),
        }
    }

    /// The wire line `{"type":...,"object":...}\n`, made once per type from the object's
    /// bytes.
    pub fn line(&self, t: EventType) -> Bytes {
        let i = t as usize;
        self.lines[i]
            .get_or_init(|| object_line(t.as_str(), &self.object_for(t)))
            .clone()
    }
}

impl CachedEvent {
    /// The event of type `t` in an encoding the caller makes (`encode` gets the type and
    /// the object), made once per type and shared by every watcher.
    pub fn frame(&self, t: EventType, encode: impl FnOnce(EventType, &Value) -> Bytes) -> Bytes {
        self.frames[t as usize]
            .get_or_init(|| encode(t, &self.object_for(t).value()))
            .clone()
    }
}

/// `{"type": <t>, "object": <obj>}` plus a newline, from the cached object's bytes.
pub fn object_line(t: &str, obj: &Object) -> Bytes {
    let json = obj.json();
    let mut out = Vec::with_capacity(json.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(t.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(json);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// Serializes `{"type": <t>, "object": <obj>}` plus a newline.
pub fn event_line(t: &str, obj: &Value) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(t.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    if serde_json::to_writer(&mut out, obj).is_err() {
        out.extend_from_slice(b"{}");
    }
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// What a watch stream yields.
#[derive(Clone, Debug)]
pub enum Out {
    /// A change (shared with other watchers) seen as the given type.
    Event(Arc<CachedEvent>, EventType),
    /// A synthetic ADDED event of the initial state.
    Initial(Object),
    /// A bookmark at a revision; `true` marks the end of the initial events.
    Bookmark(Revision, bool),
    /// Boxed to keep the per-watcher queue slots small.
    Error(Box<Status>),
}

impl Out {
    /// The object an event carries (for ADDED / MODIFIED / DELETED).
    pub fn object(&self) -> Option<(EventType, Object)> {
        match self {
            Out::Event(e, t) => Some((*t, e.object_for(*t))),
            Out::Initial(o) => Some((EventType::Added, o.clone())),
            _ => None,
        }
    }

    /// The wire line (JSON), shared for cached events.
    pub fn line(&self, info: &Resource) -> Bytes {
        match self {
            Out::Event(e, t) => e.line(*t),
            Out::Initial(o) => object_line("ADDED", o),
            Out::Bookmark(rev, end) => event_line("BOOKMARK", &bookmark_object(info, *rev, *end)),
            Out::Error(s) => event_line("ERROR", &s.to_json()),
        }
    }
}

/// A BOOKMARK's object: only kind, apiVersion and metadata.resourceVersion (plus the
/// initial-events-end annotation).
pub fn bookmark_object(info: &Resource, rev: Revision, end: bool) -> Value {
    let mut meta = json!({"resourceVersion": rev.to_string()});
    if end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    json!({"kind": info.kind, "apiVersion": info.api_version(), "metadata": meta})
}

/// Where a watch starts.
#[derive(Clone, Copy, Debug)]
pub enum Start {
    /// The state at this read mode as synthetic ADDED events, then changes.
    Initial(ReadAt),
    /// Changes after the current consistent revision, no initial state.
    Now(ReadAt),
    /// Changes after this revision, no initial state.
    After(Revision),
}

/// A watch request.
#[derive(Clone, Debug)]
pub struct Request {
    pub info: Arc<Resource>,
    pub namespace: Option<String>,
    /// Selectors (limit / continue / read_at are ignored).
    pub opts: ListOptions,
    pub start: Start,
    pub bookmarks: bool,
    /// Send the `k8s.io/initial-events-end` bookmark after the initial state.
    pub initial_events_end: bool,
    pub timeout: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(color: &str, rv: i64) -> Object {
        Object::new(
            &json!({"metadata": {"name": "x", "labels": {"c": color}, "resourceVersion": rv.to_string()}}),
        )
    }

    #[test]
    fn selector_transitions_and_shared_lines() {
        let blue = |o: &Object| o.label("c") == Some("blue");
        let put = |prev: Option<Object>, cur: &str| {
            CachedEvent::new(
                7,
                b"/core/configmaps/ns/x".to_vec(),
                Some(obj(cur, 7)),
                prev,
            )
        };
        assert_eq!(put(None, "blue").type_for(blue), Some(EventType::Added));
        assert_eq!(put(None, "red").type_for(blue), None);
        assert_eq!(
            put(Some(obj("blue", 3)), "blue").type_for(blue),
            Some(EventType::Modified)
        );
        assert_eq!(
            put(Some(obj("red", 3)), "blue").type_for(blue),
            Some(EventType::Added)
        );
        let leaving = put(Some(obj("blue", 3)), "red");
        assert_eq!(leaving.type_for(blue), Some(EventType::Deleted));
        // DELETED carries the previous object at the event's revision.
        let gone = leaving.object_for(EventType::Deleted).value();
        assert_eq!(gone["metadata"]["labels"]["c"], "blue");
        assert_eq!(gone["metadata"]["resourceVersion"], "7");
        let deleted = CachedEvent::new(8, b"k".to_vec(), None, Some(obj("red", 3)));
        assert_eq!(deleted.type_for(|_| true), Some(EventType::Deleted));
        assert_eq!(deleted.type_for(blue), None);
        // One serialization per event and type, shared by every receiver.
        let a = leaving.line(EventType::Modified);
        let b = leaving.line(EventType::Modified);
        assert_eq!(a.as_ptr(), b.as_ptr());
        let v: Value = serde_json::from_slice(&a).unwrap();
        assert_eq!(v["type"], "MODIFIED");
        assert_eq!(v["object"]["metadata"]["labels"]["c"], "red");
        assert!(a.ends_with(b"\n"));
    }

    #[test]
    fn field_sets_once_per_event_and_encodings_shared() {
        let cms = crate::registry::builtin::registry()
            .snapshot()
            .resolve("", "configmaps")
            .cloned()
            .unwrap();
        let opts = |field: &str, label: &str| ListOptions {
            field_selector: (!field.is_empty())
                .then(|| crate::meta::fields::FieldSelector::parse(field).unwrap()),
            label_selector: (!label.is_empty())
                .then(|| crate::meta::labels::Selector::parse(label).unwrap()),
            ..Default::default()
        };
        let moved = CachedEvent::new(7, b"k".to_vec(), Some(obj("red", 7)), Some(obj("blue", 3)));
        let s = &cms.strategy;
        assert_eq!(
            moved.type_for_watch(s, &opts("metadata.name=x", "")),
            Some(EventType::Modified)
        );
        assert_eq!(moved.type_for_watch(s, &opts("metadata.name=y", "")), None);
        assert_eq!(
            moved.type_for_watch(s, &opts("metadata.name=x", "c=blue")),
            Some(EventType::Deleted)
        );
        assert_eq!(
            moved.type_for_watch(s, &opts("metadata.name!=y", "c=red")),
            Some(EventType::Added)
        );
        assert!(moved.field_sets(s).is_some());
        let made = std::sync::atomic::AtomicUsize::new(0);
        let make = || {
            made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Bytes::from_static(b"row\n")
        };
        let a = moved.encoded(&cms, 3, EventType::Modified, make);
        let b = moved.encoded(&cms, 3, EventType::Modified, make);
        assert_eq!(a.as_ptr(), b.as_ptr());
        moved.encoded(&cms, 4, EventType::Modified, make);
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn queue_slots_stay_small() {
        assert!(
            std::mem::size_of::<Out>() <= 24,
            "{}",
            std::mem::size_of::<Out>()
        );
    }

    #[test]
    fn resource_prefixes() {
        use cache::resource_prefix;
        assert_eq!(
            resource_prefix(b"/core/configmaps/ns/x"),
            Some(&b"/core/configmaps/"[..])
        );
        assert_eq!(
            resource_prefix(b"/autoscaling/horizontalpodautoscalers/ns/h"),
            Some(&b"/autoscaling/horizontalpodautoscalers/"[..])
        );
        assert_eq!(resource_prefix(b"/core/nodes"), None);
        assert_eq!(resource_prefix(b"raw"), None);
        assert_eq!(
            resource_prefix(b"/.rafter/ttl/000000000099//core/events/ns/a"),
            None
        );
    }
}
