//! Watch guarantees (etcd's `validate/watch.go`, Kubernetes-shaped), and durability of
//! acknowledged writes.
//!
//! # Streams
//! A [`Stream`] is everything one watcher of one resource received, in order. It is cut into
//! *segments* at [`Stream::relists`]: each index there is where a 410 Gone forced a relist and a
//! restart. Segment 0 starts after [`Stream::start_rv`] (a plain watch from that revision),
//! unless `start_rv == 0`, in which case — like every segment after a relist — it starts with
//! the *initial state*: `ADDED` events for every object, then the `k8s.io/initial-events-end`
//! bookmark at the snapshot revision `S` (what `sendInitialEvents=true` delivers; a recorder
//! doing LIST + WATCH records the listed objects as `ADDED` events followed by a bookmark at
//! the list's resourceVersion). The initial events of a segment are those before its first
//! bookmark; if it has none, all its events are (a prefix of) the initial state. After the
//! initial state, or from `start_rv`, come the *live* events and bookmarks.
//!
//! # Guarantees checked
//! Per segment (live part):
//! * **ordered** — event revisions strictly increase, starting above `start_rv`; bookmark
//!   revisions never decrease;
//! * **unique** — no `(key, rv)` delivered twice;
//! * **atomic** — a revision is one event in Kubernetes: no two different events share a
//!   revision (a revision split across events or reused);
//! * **bookmarkable** — no event at or below a bookmark already delivered (the initial-events-end
//!   bookmark included);
//! * **reliable** — compared with the ground truth, no committed write is missing in the
//!   covered interval `(S, U]`, `S` the segment's start, `U` the highest revision delivered or
//!   bookmarked;
//! * **resumable** — a segment started after `S` begins exactly with the first committed write
//!   above `S` (reported separately from later gaps);
//! * **initial state** — the initial events are exactly the objects present at the bookmark's
//!   revision, each with its value and resourceVersion (without a bookmark: each is a committed
//!   object version and together they are a snapshot of some revision).
//!
//! Across streams and replicas: **one content per revision** — every delivery of a revision
//! has the same key, type and value; against the ground truth: each event matches the commit
//! at its revision (key, `ADDED` for a create, `MODIFIED` for an update, `DELETED` carrying the
//! last state for a delete, value).
//!
//! Without a ground truth (empty `truth`) the streams are merged into one (the first delivery
//! of each revision wins, as etcd does) and reliability is checked against that; initial state
//! and per-event content are then not checked against commits.
//!
//! [`check_durability`]: every acknowledged write of the history appears in the ground truth
//! at its revision, with its key and value. [`check_truth`]: the truth has each revision once.
//!
//! The ground truth must be complete for the watched resource and contain nothing else.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::history::{Commit, Op, Output};
use super::{Anomaly, AnomalyKind};

/// Watch event type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum EventKind {
    Added,
    Modified,
    Deleted,
    Bookmark,
}

/// One watch event as received.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    /// The object's name (empty for bookmarks).
    pub key: String,
    /// The object's resourceVersion (for `DELETED`: the revision of the delete; for bookmarks:
    /// the bookmark's revision).
    pub rv: u64,
    /// The object's value (for `DELETED`: its last state; `None` for bookmarks).
    pub value: Option<String>,
}

/// Everything one watcher received (see the module docs for segments).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream {
    pub client: u32,
    /// The replica that served it, if known.
    pub replica: Option<u32>,
    /// The watch started after this revision (exclusive); 0 = with the initial state.
    pub start_rv: u64,
    pub events: Vec<Event>,
    /// Indices into `events` where a 410 forced a relist and restart: a new segment, with
    /// initial state, starts there.
    pub relists: Vec<usize>,
}

/// The ground truth, sorted by revision and indexed.
struct Truth {
    commits: Vec<Commit>,
    rvs: Vec<u64>,
    by_rv: HashMap<u64, usize>,
    /// The key's value before commit `i`.
    prev: Vec<Option<String>>,
    /// Commit indices per key, ascending.
    per_key: HashMap<String, Vec<usize>>,
    /// From the caller (true) or merged from the streams (false).
    given: bool,
}

impl Truth {
    fn new(truth: &[Commit], given: bool) -> Truth {
        let mut commits = truth.to_vec();
        commits.sort_by_key(|c| c.rv); // stable: the first of duplicates stays first
        commits.dedup_by_key(|c| c.rv);
        let rvs: Vec<u64> = commits.iter().map(|c| c.rv).collect();
        let by_rv = rvs.iter().enumerate().map(|(i, &rv)| (rv, i)).collect();
        let mut cur: HashMap<&str, Option<&str>> = HashMap::new();
        let mut prev = Vec::with_capacity(commits.len());
        let mut per_key: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, c) in commits.iter().enumerate() {
            let before = cur.insert(c.key.as_str(), c.value.as_deref()).flatten();
            prev.push(before.map(str::to_string));
            per_key.entry(c.key.clone()).or_default().push(i);
        }
        Truth {
            commits,
            rvs,
            by_rv,
            prev,
            per_key,
            given,
        }
    }

    /// Commit indices with revision in `(lo, hi]`.
    fn range(&self, lo: u64, hi: u64) -> Range<usize> {
        self.rvs.partition_point(|&r| r <= lo)..self.rvs.partition_point(|&r| r <= hi)
    }

    /// The last commit of `key` at or below `s`.
    fn latest(&self, key: &str, s: u64) -> Option<&Commit> {
        let idx = self.per_key.get(key)?;
        let p = idx.partition_point(|&i| self.commits[i].rv <= s);
        (p > 0).then(|| &self.commits[idx[p - 1]])
    }

    /// The revision of the first commit of `key` above `rv`.
    fn next_of_key(&self, key: &str, rv: u64) -> Option<u64> {
        let idx = self.per_key.get(key)?;
        let p = idx.partition_point(|&i| self.commits[i].rv <= rv);
        idx.get(p).map(|&i| self.commits[i].rv)
    }

    /// Objects present at revision `s`: key -> (value, rv).
    fn state_at(&self, s: u64) -> BTreeMap<&str, (&str, u64)> {
        let mut m = BTreeMap::new();
        for key in self.per_key.keys() {
            if let Some(c) = self.latest(key, s) {
                if let Some(v) = &c.value {
                    m.insert(key.as_str(), (v.as_str(), c.rv));
                }
            }
        }
        m
    }
}

/// A segment of a stream.
struct Seg {
    /// Index among the stream's segments.
    n: usize,
    initial_mode: bool,
    /// Initial-state events.
    init: Range<usize>,
    /// Live events and bookmarks (for initial mode, starting with the initial-events-end bookmark).
    live: Range<usize>,
    /// The revision it starts after, if known.
    start: Option<u64>,
}

fn segments(s: &Stream) -> Vec<Seg> {
    let len = s.events.len();
    let mut cuts: Vec<usize> = s.relists.iter().copied().filter(|&i| i <= len).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut bounds = vec![0];
    bounds.extend(cuts.iter().copied().filter(|&c| c > 0));
    let first_is_relist = cuts.first() == Some(&0);
    bounds.push(len);
    let mut out = Vec::new();
    let mut n = 0;
    if first_is_relist {
        // Segment 0 was empty: the 410 came before any event.
        n = 1;
    }
    for w in bounds.windows(2) {
        let (a, b) = (w[0], w[1]);
        let initial_mode = n > 0 || s.start_rv == 0;
        let seg = if !initial_mode {
            Seg {
                n,
                initial_mode,
                init: a..a,
                live: a..b,
                start: Some(s.start_rv),
            }
        } else {
            match (a..b).find(|&i| s.events[i].kind == EventKind::Bookmark) {
                Some(p) => Seg {
                    n,
                    initial_mode,
                    init: a..p,
                    live: p..b,
                    start: Some(s.events[p].rv),
                },
                None => Seg {
                    n,
                    initial_mode,
                    init: a..b,
                    live: b..b,
                    start: None,
                },
            }
        };
        out.push(seg);
        n += 1;
    }
    out
}

fn who(streams: &[Stream], i: usize) -> String {
    let s = &streams[i];
    match s.replica {
        Some(r) => format!("stream {i} (client {}, replica {r})", s.client),
        None => format!("stream {i} (client {})", s.client),
    }
}

fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::Added => "ADDED",
        EventKind::Modified => "MODIFIED",
        EventKind::Deleted => "DELETED",
        EventKind::Bookmark => "BOOKMARK",
    }
}

fn show(e: &Event) -> String {
    match (&e.kind, &e.value) {
        (EventKind::Bookmark, _) => format!("BOOKMARK rv={}", e.rv),
        (&k, Some(v)) => format!("{} {} rv={} v={v:?}", kind_name(k), e.key, e.rv),
        (&k, None) => format!("{} {} rv={}", kind_name(k), e.key, e.rv),
    }
}

fn show_commit(c: &Commit) -> String {
    match &c.value {
        Some(v) => format!("write of {} v={v:?} at rv {}", c.key, c.rv),
        None => format!("delete of {} at rv {}", c.key, c.rv),
    }
}

/// What one delivery says about a revision, for the cross-stream comparison.
struct Rec<'a> {
    key: &'a str,
    /// `None` for a synthetic initial event.
    kind: Option<EventKind>,
    value: Option<&'a str>,
    at: (usize, usize),
}

fn agree(a: &Rec<'_>, b: &Rec<'_>) -> bool {
    a.key == b.key
        && a.value == b.value
        && match (a.kind, b.kind) {
            (Some(x), Some(y)) => x == y,
            (None, None) => true,
            (None, Some(k)) | (Some(k), None) => k != EventKind::Deleted,
        }
}

/// Every watch guarantee of the module docs, over all `streams` of one resource. `truth` may be
/// empty (then the streams are merged into a stand-in).
pub fn check_watch(streams: &[Stream], truth: &[Commit]) -> Vec<Anomaly> {
    let segs: Vec<Vec<Seg>> = streams.iter().map(segments).collect();
    let truth = if truth.is_empty() {
        let mut merged: Vec<Commit> = Vec::new();
        let mut seen = HashSet::new();
        for (s, ss) in streams.iter().zip(&segs) {
            for seg in ss {
                for e in &s.events[seg.live.clone()] {
                    if e.kind != EventKind::Bookmark && seen.insert(e.rv) {
                        let value = if e.kind == EventKind::Deleted {
                            None
                        } else {
                            e.value.clone()
                        };
                        merged.push(Commit {
                            key: e.key.clone(),
                            rv: e.rv,
                            value,
                        });
                    }
                }
            }
        }
        Truth::new(&merged, false)
    } else {
        Truth::new(truth, true)
    };

    let mut out = Vec::new();
    let mut contents: HashMap<u64, Rec<'_>> = HashMap::new();

    for (i, s) in streams.iter().enumerate() {
        for seg in &segs[i] {
            let name = format!("{} segment {}", who(streams, i), seg.n);
            if seg.initial_mode {
                check_initial(&name, i, s, seg, &truth, &mut out);
                for idx in seg.init.clone() {
                    let e = &s.events[idx];
                    cross(
                        &mut contents,
                        Rec {
                            key: &e.key,
                            kind: None,
                            value: e.value.as_deref(),
                            at: (i, idx),
                        },
                        e.rv,
                        streams,
                        &mut out,
                    );
                }
            }
            check_live(&name, i, s, seg, &truth, streams, &mut contents, &mut out);
        }
    }
    out
}

/// Records `rec` as a delivery of revision `rv`; reports a disagreement with the first one.
fn cross<'a>(
    contents: &mut HashMap<u64, Rec<'a>>,
    rec: Rec<'a>,
    rv: u64,
    streams: &[Stream],
    out: &mut Vec<Anomaly>,
) {
    match contents.get(&rv) {
        None => {
            contents.insert(rv, rec);
        }
        Some(first) if !agree(first, &rec) => {
            let (fi, fx) = first.at;
            let (ri, rx) = rec.at;
            out.push(
                Anomaly::new(
                    AnomalyKind::Disagree,
                    format!(
                        "revision {rv}: {} delivered {}{} but {} delivered {}{}",
                        who(streams, fi),
                        show(&streams[fi].events[fx]),
                        if first.kind.is_none() {
                            " (initial state)"
                        } else {
                            ""
                        },
                        who(streams, ri),
                        show(&streams[ri].events[rx]),
                        if rec.kind.is_none() {
                            " (initial state)"
                        } else {
                            ""
                        },
                    ),
                )
                .with_events(vec![first.at, rec.at])
                .with_rv(rv),
            );
        }
        Some(_) => {}
    }
}

fn check_initial(
    name: &str,
    i: usize,
    s: &Stream,
    seg: &Seg,
    truth: &Truth,
    out: &mut Vec<Anomaly>,
) {
    let init = &s.events[seg.init.clone()];
    let at = |k: usize| (i, seg.init.start + k);
    let mut keys: HashMap<&str, usize> = HashMap::new();
    for (k, e) in init.iter().enumerate() {
        if e.kind != EventKind::Added {
            out.push(
                Anomaly::new(
                    AnomalyKind::InitialState,
                    format!("{name}: initial event {} is not ADDED", show(e)),
                )
                .with_events(vec![at(k)])
                .with_rv(e.rv),
            );
        }
        if let Some(&first) = keys.get(e.key.as_str()) {
            out.push(
                Anomaly::new(
                    AnomalyKind::InitialState,
                    format!(
                        "{name}: initial state lists {} twice ({} and {})",
                        e.key,
                        show(&init[first]),
                        show(e)
                    ),
                )
                .with_events(vec![at(first), at(k)])
                .with_rv(e.rv),
            );
        } else {
            keys.insert(&e.key, k);
        }
    }
    if !truth.given {
        return;
    }
    match seg.start {
        Some(snap) => {
            let expected = truth.state_at(snap);
            for (k, e) in init.iter().enumerate() {
                let ok = match expected.get(e.key.as_str()) {
                    Some(&(v, rv)) => e.rv == rv && e.value.as_deref() == Some(v),
                    None => false,
                };
                if !ok {
                    let want = match expected.get(e.key.as_str()) {
                        Some((v, rv)) => format!("{} v={v:?} rv={rv}", e.key),
                        None => format!("{} absent", e.key),
                    };
                    out.push(
                        Anomaly::new(
                            AnomalyKind::InitialState,
                            format!("{name}: initial event {} but at the bookmark's revision {snap} the state is {want}", show(e)),
                        )
                        .with_events(vec![at(k)])
                        .with_rv(e.rv),
                    );
                }
            }
            let missing: Vec<&str> = expected
                .keys()
                .copied()
                .filter(|k| !keys.contains_key(k))
                .collect();
            if !missing.is_empty() {
                let shown: Vec<&str> = missing.iter().copied().take(5).collect();
                out.push(
                    Anomaly::new(
                        AnomalyKind::InitialState,
                        format!(
                            "{name}: initial state at revision {snap} lacks {} object(s) present then: {}{}",
                            missing.len(),
                            shown.join(", "),
                            if missing.len() > shown.len() { ", ..." } else { "" }
                        ),
                    )
                    .with_events(vec![(i, seg.live.start)])
                    .with_rv(snap),
                );
            }
        }
        None => {
            // Incomplete initial state: each event a committed version, all from one snapshot.
            let (mut lo, mut hi, mut lo_at, mut hi_at) = (0u64, u64::MAX, 0, 0);
            for (k, e) in init.iter().enumerate() {
                let c = truth.by_rv.get(&e.rv).map(|&x| &truth.commits[x]);
                let matches =
                    c.is_some_and(|c| c.key == e.key && c.value.is_some() && c.value == e.value);
                if !matches {
                    let have = c.map_or("no commit".to_string(), show_commit);
                    out.push(
                        Anomaly::new(
                            AnomalyKind::InitialState,
                            format!("{name}: initial event {} is not a committed object version (rv {} is {have})", show(e), e.rv),
                        )
                        .with_events(vec![at(k)])
                        .with_rv(e.rv),
                    );
                    continue;
                }
                if e.rv > lo {
                    (lo, lo_at) = (e.rv, k);
                }
                if let Some(n) = truth.next_of_key(&e.key, e.rv) {
                    if n < hi {
                        (hi, hi_at) = (n, k);
                    }
                }
            }
            if lo >= hi {
                out.push(
                    Anomaly::new(
                        AnomalyKind::InitialState,
                        format!(
                            "{name}: initial events are no snapshot: {} needs revision >= {lo} but {} was overwritten at {hi}",
                            show(&init[lo_at]),
                            show(&init[hi_at])
                        ),
                    )
                    .with_events(vec![at(lo_at), at(hi_at)])
                    .with_rv(hi),
                );
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_live<'a>(
    name: &str,
    i: usize,
    s: &'a Stream,
    seg: &Seg,
    truth: &Truth,
    streams: &[Stream],
    contents: &mut HashMap<u64, Rec<'a>>,
    out: &mut Vec<Anomaly>,
) {
    let mut seen: HashSet<(&str, u64)> = HashSet::new();
    let mut at_rv: HashMap<u64, usize> = HashMap::new(); // rv -> event index
    let mut last_rv = seg.start;
    let mut last_bookmark: Option<u64> = None;
    let mut cover = seg.start;
    for idx in seg.live.clone() {
        let e = &s.events[idx];
        if e.kind == EventKind::Bookmark {
            if let Some(b) = last_bookmark {
                if e.rv < b {
                    out.push(
                        Anomaly::new(
                            AnomalyKind::Ordered,
                            format!("{name}: bookmark went back from rv {b} to rv {}", e.rv),
                        )
                        .with_events(vec![(i, idx)])
                        .with_rv(e.rv),
                    );
                }
            }
            last_bookmark = last_bookmark.max(Some(e.rv));
            cover = cover.max(Some(e.rv));
            continue;
        }
        if !seen.insert((e.key.as_str(), e.rv)) {
            let first = at_rv[&e.rv];
            out.push(
                Anomaly::new(
                    AnomalyKind::Unique,
                    format!("{name}: {} delivered twice", show(e)),
                )
                .with_events(vec![(i, first), (i, idx)])
                .with_rv(e.rv),
            );
            continue;
        }
        if let Some(&first) = at_rv.get(&e.rv) {
            out.push(
                Anomaly::new(
                    AnomalyKind::Atomic,
                    format!(
                        "{name}: revision {} delivered as two events: {} and {}",
                        e.rv,
                        show(&s.events[first]),
                        show(e)
                    ),
                )
                .with_events(vec![(i, first), (i, idx)])
                .with_rv(e.rv),
            );
            continue;
        }
        at_rv.insert(e.rv, idx);
        if let Some(b) = last_bookmark.filter(|&b| e.rv <= b) {
            out.push(
                Anomaly::new(
                    AnomalyKind::Bookmarkable,
                    format!("{name}: {} after a bookmark at rv {b} (all events up to it were already delivered)", show(e)),
                )
                .with_events(vec![(i, idx)])
                .with_rv(e.rv),
            );
        } else if let Some(l) = last_rv.filter(|&l| e.rv <= l) {
            let what = if Some(l) == seg.start && !seg.initial_mode {
                format!("at or below the revision {l} the watch started after")
            } else {
                format!("after an event at rv {l}")
            };
            out.push(
                Anomaly::new(AnomalyKind::Ordered, format!("{name}: {} {what}", show(e)))
                    .with_events(vec![(i, idx)])
                    .with_rv(e.rv),
            );
        }
        last_rv = last_rv.max(Some(e.rv));
        cover = cover.max(Some(e.rv));

        if truth.given {
            check_content(name, i, idx, e, truth, out);
        }
        cross(
            contents,
            Rec {
                key: &e.key,
                kind: Some(e.kind),
                value: e.value.as_deref(),
                at: (i, idx),
            },
            e.rv,
            streams,
            out,
        );
    }

    // Reliable / resumable over (start, cover].
    let (Some(start), Some(cover)) = (seg.start, cover) else {
        return;
    };
    if truth.commits.is_empty() || cover <= start {
        return;
    }
    let range = truth.range(start, cover);
    let first_delivered = at_rv.keys().copied().filter(|&r| r > start).min();
    let mut delivered_sorted: Vec<u64> = at_rv.keys().copied().collect();
    delivered_sorted.sort_unstable();
    let mut j = range.start;
    while j < range.end {
        if at_rv.contains_key(&truth.rvs[j]) {
            j += 1;
            continue;
        }
        let run_start = j;
        while j < range.end && !at_rv.contains_key(&truth.rvs[j]) {
            j += 1;
        }
        let run = &truth.commits[run_start..j];
        let (a, b) = (run[0].rv, run[run.len() - 1].rv);
        let resumable = run_start == range.start && first_delivered.is_none_or(|f| f > a);
        let keys: BTreeSet<&str> = run.iter().map(|c| c.key.as_str()).collect();
        let keys: Vec<&str> = keys.into_iter().take(5).collect();
        let p = delivered_sorted.partition_point(|&r| r <= b);
        let next_at = delivered_sorted
            .get(p)
            .map_or(seg.live.end - 1, |r| at_rv[r]);
        let span = if a == b {
            format!("rv {a}")
        } else {
            format!("rv {a}..{b}")
        };
        let desc = if resumable {
            format!(
                "{name}: started after rv {start} but does not continue with the next event: {} committed event(s) missed at {span} (keys {}), first: {}",
                run.len(),
                keys.join(", "),
                show_commit(&run[0])
            )
        } else {
            format!(
                "{name}: gap in (rv {start}, rv {cover}]: {} committed event(s) missed at {span} (keys {}), first: {}",
                run.len(),
                keys.join(", "),
                show_commit(&run[0])
            )
        };
        let kind = if resumable {
            AnomalyKind::Resumable
        } else {
            AnomalyKind::Reliable
        };
        out.push(
            Anomaly::new(kind, desc)
                .with_events(vec![(i, next_at)])
                .with_rv(a),
        );
    }
}

fn check_content(
    name: &str,
    i: usize,
    idx: usize,
    e: &Event,
    truth: &Truth,
    out: &mut Vec<Anomaly>,
) {
    let Some(&x) = truth.by_rv.get(&e.rv) else {
        out.push(
            Anomaly::new(
                AnomalyKind::Content,
                format!("{name}: {} but no write committed at rv {}", show(e), e.rv),
            )
            .with_events(vec![(i, idx)])
            .with_rv(e.rv),
        );
        return;
    };
    let c = &truth.commits[x];
    let prev = truth.prev[x].as_deref();
    let mut wrong = Vec::new();
    if c.key != e.key {
        wrong.push(format!("key (the commit is a {})", show_commit(c)));
    } else {
        let want = match (&c.value, prev) {
            (None, _) => EventKind::Deleted,
            (Some(_), None) => EventKind::Added,
            (Some(_), Some(_)) => EventKind::Modified,
        };
        if e.kind != want {
            wrong.push(format!("type (expected {})", kind_name(want)));
        }
        match e.kind {
            EventKind::Deleted => {
                if e.value.is_some() && e.value.as_deref() != prev {
                    wrong.push(format!("last state (expected {prev:?})"));
                }
            }
            _ => {
                if c.value.is_some() && e.value != c.value {
                    wrong.push(format!(
                        "value (expected {:?})",
                        c.value.as_deref().unwrap_or_default()
                    ));
                }
            }
        }
    }
    if !wrong.is_empty() {
        out.push(
            Anomaly::new(
                AnomalyKind::Content,
                format!(
                    "{name}: {} differs from the commit in {}",
                    show(e),
                    wrong.join(", ")
                ),
            )
            .with_events(vec![(i, idx)])
            .with_rv(e.rv),
        );
    }
}

/// Durability: every acknowledged write is in the ground truth at its revision, with its key
/// and value (`None` for a delete). Also: a value that exactly one op of the history writes to
/// a key is committed at most once ([`AnomalyKind::Duplicated`]; whatever the op's outcome).
pub fn check_durability(history: &[Op], truth: &[Commit]) -> Vec<Anomaly> {
    let mut by_rv: HashMap<u64, &Commit> = HashMap::new();
    let mut committed: HashMap<(&str, &str), Vec<u64>> = HashMap::new();
    for c in truth {
        by_rv.entry(c.rv).or_insert(c);
        if let Some(v) = &c.value {
            committed
                .entry((c.key.as_str(), v.as_str()))
                .or_default()
                .push(c.rv);
        }
    }
    let mut writers: HashMap<(&str, &str), usize> = HashMap::new();
    for op in history {
        if let Some(v) = op.input.value() {
            *writers.entry((op.key.as_str(), v)).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for (i, op) in history.iter().enumerate() {
        let Some(v) = op.input.value() else { continue };
        let kv = (op.key.as_str(), v);
        match committed.get(&kv) {
            Some(rvs) if rvs.len() > 1 && writers[&kv] == 1 => {
                let mut rvs = rvs.clone();
                rvs.sort_unstable();
                out.push(
                    Anomaly::new(
                        AnomalyKind::Duplicated,
                        format!(
                            "{} was committed {} times, at rv {:?}",
                            op.describe(i),
                            rvs.len(),
                            rvs
                        ),
                    )
                    .with_ops(vec![i])
                    .with_rv(rvs[1]),
                );
            }
            _ => {}
        }
    }
    for (i, op) in history.iter().enumerate() {
        let Some(rv) = op.acknowledged_rv() else {
            continue;
        };
        let want = match op.output {
            Output::Deleted { .. } => None,
            _ => op.input.value(),
        };
        let problem = match by_rv.get(&rv) {
            None => Some(format!("no write committed at rv {rv}")),
            Some(c) if c.key != op.key || c.value.as_deref() != want => {
                Some(format!("the commit at rv {rv} is a {}", show_commit(c)))
            }
            Some(_) => None,
        };
        if let Some(p) = problem {
            out.push(
                Anomaly::new(
                    AnomalyKind::Durability,
                    format!(
                        "acknowledged {} is not in the ground truth: {p}",
                        op.describe(i)
                    ),
                )
                .with_ops(vec![i])
                .with_rv(rv),
            );
        }
    }
    out
}

/// The ground truth's own consistency: each revision once.
pub fn check_truth(truth: &[Commit]) -> Vec<Anomaly> {
    let mut by_rv: BTreeMap<u64, Vec<&Commit>> = BTreeMap::new();
    for c in truth {
        by_rv.entry(c.rv).or_default().push(c);
    }
    by_rv
        .into_iter()
        .filter(|(_, cs)| cs.len() > 1)
        .map(|(rv, cs)| {
            let all: Vec<String> = cs.iter().map(|c| show_commit(c)).collect();
            Anomaly::new(
                AnomalyKind::TruthInvalid,
                format!(
                    "revision {rv} committed {} times: {}",
                    cs.len(),
                    all.join("; ")
                ),
            )
            .with_rv(rv)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::history::Input;

    fn ev(kind: EventKind, key: &str, rv: u64, value: Option<&str>) -> Event {
        Event {
            kind,
            key: key.to_string(),
            rv,
            value: value.map(str::to_string),
        }
    }
    fn added(key: &str, rv: u64, v: &str) -> Event {
        ev(EventKind::Added, key, rv, Some(v))
    }
    fn modified(key: &str, rv: u64, v: &str) -> Event {
        ev(EventKind::Modified, key, rv, Some(v))
    }
    fn deleted(key: &str, rv: u64, last: &str) -> Event {
        ev(EventKind::Deleted, key, rv, Some(last))
    }
    fn bookmark(rv: u64) -> Event {
        ev(EventKind::Bookmark, "", rv, None)
    }
    fn stream(start_rv: u64, events: Vec<Event>) -> Stream {
        Stream {
            client: 1,
            replica: Some(0),
            start_rv,
            events,
            relists: vec![],
        }
    }

    /// a@2 (create), b@3 (create), a@5 (update), b@6 (delete), a@8 (update), c@9 (create).
    fn truth() -> Vec<Commit> {
        vec![
            Commit::put("a", 2, "a1"),
            Commit::put("b", 3, "b1"),
            Commit::put("a", 5, "a2"),
            Commit::delete("b", 6),
            Commit::put("a", 8, "a3"),
            Commit::put("c", 9, "c1"),
        ]
    }
    /// The complete live event sequence of `truth()`.
    fn all_events() -> Vec<Event> {
        vec![
            added("a", 2, "a1"),
            added("b", 3, "b1"),
            modified("a", 5, "a2"),
            deleted("b", 6, "b1"),
            modified("a", 8, "a3"),
            added("c", 9, "c1"),
        ]
    }
    fn kinds(a: &[Anomaly]) -> Vec<AnomalyKind> {
        a.iter().map(|x| x.kind).collect()
    }

    #[test]
    fn complete_streams_pass() {
        let mut full = stream(1, all_events());
        full.events.insert(3, bookmark(5));
        let tail = stream(5, all_events()[3..].to_vec()); // resumed after rv 5
        let empty = stream(9, vec![bookmark(12)]);
        let a = check_watch(&[full, tail, empty], &truth());
        assert!(a.is_empty(), "{a:#?}");
    }

    #[test]
    fn gap_is_unreliable() {
        let mut evs = all_events();
        evs.remove(2); // a@5
        let a = check_watch(&[stream(1, evs)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Reliable], "{a:#?}");
        assert_eq!(a[0].rv, Some(5));
        assert_eq!(a[0].events, vec![(0, 2)]); // points at the event after the gap
        assert!(
            a[0].description.contains("missed at rv 5"),
            "{}",
            a[0].description
        );
    }

    #[test]
    fn gap_before_a_bookmark_is_unreliable() {
        // The bookmark at 9 promises everything up to 9: c@9 is missing.
        let mut evs = all_events();
        evs.pop();
        evs.push(bookmark(9));
        let a = check_watch(&[stream(1, evs)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Reliable], "{a:#?}");
        assert_eq!(a[0].rv, Some(9));
        // Without the bookmark the stream just has not got there yet.
        let mut evs = all_events();
        evs.pop();
        assert!(check_watch(&[stream(1, evs)], &truth()).is_empty());
    }

    #[test]
    fn duplicate_is_not_unique() {
        let mut evs = all_events();
        evs.insert(3, modified("a", 5, "a2"));
        let a = check_watch(&[stream(1, evs)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Unique], "{a:#?}");
        assert_eq!(a[0].events, vec![(0, 2), (0, 3)]);
    }

    #[test]
    fn reorder_is_not_ordered() {
        let mut evs = all_events();
        evs.swap(2, 3); // b@6 before a@5
        let a = check_watch(&[stream(1, evs)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Ordered], "{a:#?}");
        assert_eq!(a[0].rv, Some(5));
        assert_eq!(a[0].events, vec![(0, 3)]);
    }

    #[test]
    fn event_below_start_is_not_ordered() {
        let a = check_watch(&[stream(3, all_events()[1..].to_vec())], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Ordered], "{a:#?}");
        assert!(
            a[0].description.contains("started after"),
            "{}",
            a[0].description
        );
    }

    #[test]
    fn bookmark_going_back_is_not_ordered() {
        let mut evs = all_events();
        evs.insert(4, bookmark(6));
        evs.insert(5, bookmark(4));
        let a = check_watch(&[stream(1, evs)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Ordered], "{a:#?}");
        assert!(
            a[0].description.contains("bookmark went back"),
            "{}",
            a[0].description
        );
    }

    #[test]
    fn two_events_for_one_revision_are_not_atomic() {
        let mut evs = all_events();
        evs.insert(3, modified("c", 5, "zz"));
        let a = check_watch(&[stream(1, evs)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Atomic], "{a:#?}");
        assert_eq!(a[0].events, vec![(0, 2), (0, 3)]);
    }

    #[test]
    fn event_at_or_below_a_bookmark() {
        // Bookmark 6 delivered, then a@5 (late): bookmarkable is broken (and ordered too would
        // be, but one report per event).
        let mut evs = all_events();
        let late = evs.remove(2);
        evs.insert(3, bookmark(6));
        evs.insert(4, late);
        let a = check_watch(&[stream(1, evs)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Bookmarkable], "{a:#?}");
        assert_eq!(a[0].rv, Some(5));
        // Equal to the bookmark counts too.
        let evs = vec![added("a", 2, "a1"), bookmark(3), added("b", 3, "b1")];
        let a = check_watch(&[stream(1, evs)], &truth()[..2]);
        assert_eq!(kinds(&a), vec![AnomalyKind::Bookmarkable], "{a:#?}");
    }

    #[test]
    fn resume_skipping_an_event() {
        // Restarted after rv 5, first event must be b@6, not a@8.
        let a = check_watch(&[stream(5, all_events()[4..].to_vec())], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Resumable], "{a:#?}");
        assert_eq!(a[0].rv, Some(6));
        assert!(
            a[0].description.contains("started after rv 5"),
            "{}",
            a[0].description
        );
    }

    #[test]
    fn streams_disagreeing_on_a_revision() {
        let s1 = stream(1, all_events());
        let mut evs = all_events();
        evs[2] = modified("a", 5, "forged");
        let mut s2 = stream(1, evs);
        s2.replica = Some(2);
        // Without a truth: only the cross-stream comparison can tell.
        let a = check_watch(&[s1.clone(), s2.clone()], &[]);
        assert_eq!(kinds(&a), vec![AnomalyKind::Disagree], "{a:#?}");
        assert_eq!(a[0].events, vec![(0, 2), (1, 2)]);
        assert!(
            a[0].description.contains("replica 2"),
            "{}",
            a[0].description
        );
        // With the truth the forged event is also wrong content.
        let a = check_watch(&[s1, s2], &truth());
        assert_eq!(
            kinds(&a),
            vec![AnomalyKind::Content, AnomalyKind::Disagree],
            "{a:#?}"
        );
    }

    #[test]
    fn content_is_checked_against_truth() {
        let cases = [
            (added("a", 5, "a2"), "type (expected MODIFIED)"),
            (modified("a", 5, "a9"), "value"),
            (modified("b", 5, "a2"), "key"),
            (deleted("b", 6, "b7"), "last state"),
        ];
        for (bad, what) in cases {
            let mut evs = all_events();
            let at = evs.iter().position(|e| e.rv == bad.rv).unwrap();
            evs[at] = bad;
            let a = check_watch(&[stream(1, evs)], &truth());
            assert_eq!(kinds(&a), vec![AnomalyKind::Content], "{what}: {a:#?}");
            assert!(
                a[0].description.contains(what),
                "{what}: {}",
                a[0].description
            );
        }
        // A deleted event without its last state is accepted.
        let mut evs = all_events();
        evs[3].value = None;
        assert!(check_watch(&[stream(1, evs)], &truth()).is_empty());
        // An event at a revision nobody committed.
        let mut evs = all_events();
        evs.push(modified("a", 11, "a4"));
        let a = check_watch(&[stream(1, evs)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Content], "{a:#?}");
        assert!(
            a[0].description.contains("no write committed"),
            "{}",
            a[0].description
        );
    }

    #[test]
    fn merged_streams_stand_in_for_missing_truth() {
        // Stream 1 covers (1, 9] but lacks a@5, which stream 0 saw.
        let s0 = stream(1, all_events());
        let mut evs = all_events();
        evs.remove(2);
        let a = check_watch(&[s0, stream(1, evs)], &[]);
        assert_eq!(kinds(&a), vec![AnomalyKind::Reliable], "{a:#?}");
        assert_eq!(a[0].events[0].0, 1);
    }

    #[test]
    fn initial_state_then_live_events() {
        // Snapshot at 6: a2@5 (b deleted at 6), then a3@8, c1@9.
        let evs = vec![
            added("a", 5, "a2"),
            bookmark(6),
            modified("a", 8, "a3"),
            added("c", 9, "c1"),
        ];
        let a = check_watch(&[stream(0, evs.clone())], &truth());
        assert!(a.is_empty(), "{a:#?}");
        // Another stream's initial state agrees with s0's live event at rv 5.
        let a = check_watch(&[stream(1, all_events()), stream(0, evs.clone())], &truth());
        assert!(a.is_empty(), "{a:#?}");

        // Initial event with a stale version.
        let mut bad = evs.clone();
        bad[0] = added("a", 2, "a1");
        let a = check_watch(&[stream(0, bad)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::InitialState], "{a:#?}");
        // Initial state missing an object.
        let a = check_watch(&[stream(0, evs[1..].to_vec())], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::InitialState], "{a:#?}");
        assert!(
            a[0].description.contains("lacks 1 object(s)"),
            "{}",
            a[0].description
        );
        // The first live event after the snapshot must be the next commit.
        let mut skip = evs.clone();
        skip.remove(2);
        let a = check_watch(&[stream(0, skip)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Resumable], "{a:#?}");
        // An event at or below the snapshot after the initial-events-end bookmark.
        let mut old = evs.clone();
        old.insert(2, deleted("b", 6, "b1"));
        let a = check_watch(&[stream(0, old)], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Bookmarkable], "{a:#?}");
    }

    #[test]
    fn incomplete_initial_state_must_be_a_snapshot() {
        // No bookmark yet: a1@2 and b1@3 are both current at 3 or 4: fine.
        let a = check_watch(
            &[stream(0, vec![added("a", 2, "a1"), added("b", 3, "b1")])],
            &truth(),
        );
        assert!(a.is_empty(), "{a:#?}");
        // a1@2 (overwritten at 5) with c1@9: no revision has both.
        let a = check_watch(
            &[stream(0, vec![added("a", 2, "a1"), added("c", 9, "c1")])],
            &truth(),
        );
        assert_eq!(kinds(&a), vec![AnomalyKind::InitialState], "{a:#?}");
        assert!(
            a[0].description.contains("no snapshot"),
            "{}",
            a[0].description
        );
        // A version that never existed.
        let a = check_watch(&[stream(0, vec![added("a", 3, "a1")])], &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::InitialState], "{a:#?}");
    }

    #[test]
    fn relist_starts_a_new_segment() {
        // Watch from 1 sees a1, b1; 410; relist at snapshot 8 (a3, no b), then c1@9.
        let evs = vec![
            added("a", 2, "a1"),
            added("b", 3, "b1"),
            added("a", 8, "a3"),
            bookmark(8),
            added("c", 9, "c1"),
        ];
        let mut s = stream(1, evs);
        s.relists = vec![2];
        let a = check_watch(&[s.clone()], &truth());
        assert!(a.is_empty(), "{a:#?}");
        // Without the relist mark the same events are out of order.
        s.relists.clear();
        assert!(!check_watch(&[s], &truth()).is_empty());
    }

    #[test]
    fn relist_before_any_event() {
        let mut s = stream(
            1,
            vec![added("a", 8, "a3"), bookmark(8), added("c", 9, "c1")],
        );
        s.relists = vec![0];
        let a = check_watch(&[s], &truth());
        assert!(a.is_empty(), "{a:#?}");
    }

    #[test]
    fn durability_of_acknowledged_writes() {
        let op = |input: Input, output: Output, ret: Option<u64>| Op {
            client: 1,
            key: "a".into(),
            call: 0,
            ret,
            input,
            output,
        };
        let h = vec![
            op(
                Input::Create { value: "a1".into() },
                Output::Written { rv: 2 },
                Some(1),
            ),
            op(
                Input::Put { value: "a2".into() },
                Output::Written { rv: 5 },
                Some(1),
            ),
            op(
                Input::Put {
                    value: "lost".into(),
                },
                Output::Written { rv: 7 },
                Some(1),
            ), // no commit at 7
            op(
                Input::Put {
                    value: "other".into(),
                },
                Output::Written { rv: 8 },
                Some(1),
            ), // 8 is a3
            op(
                Input::Put { value: "x".into() },
                Output::Written { rv: 20 },
                None,
            ), // not acknowledged
            op(Input::Delete, Output::Deleted { rv: 9 }, Some(1)), // 9 is a put of c
            op(Input::Put { value: "u".into() }, Output::Unknown, Some(1)),
        ];
        let a = check_durability(&h, &truth());
        assert_eq!(kinds(&a), vec![AnomalyKind::Durability; 3], "{a:#?}");
        assert_eq!(
            a.iter().map(|x| x.ops[0]).collect::<Vec<_>>(),
            vec![2, 3, 5]
        );
    }

    #[test]
    fn write_committed_twice_is_duplicated() {
        let op = |v: &str, output: Output| Op {
            client: 1,
            key: "a".into(),
            call: 0,
            ret: Some(1),
            input: Input::Put { value: v.into() },
            output,
        };
        let h = vec![
            op("a2", Output::Unknown),
            op("a3", Output::Written { rv: 8 }),
        ];
        let mut t = truth();
        assert!(check_durability(&h, &t).is_empty());
        t.push(Commit::put("a", 11, "a2")); // a2 again, though only one op wrote it
        let a = check_durability(&h, &t);
        assert_eq!(kinds(&a), vec![AnomalyKind::Duplicated], "{a:#?}");
        assert_eq!((a[0].ops.clone(), a[0].rv), (vec![0], Some(11)));
        // Two ops writing the same value: nothing to say.
        let h2 = vec![h[0].clone(), h[0].clone()];
        assert!(check_durability(&h2, &t).is_empty());
    }

    #[test]
    fn truth_with_a_revision_twice_is_invalid() {
        let mut t = truth();
        assert!(check_truth(&t).is_empty());
        t.push(Commit::put("z", 5, "zz"));
        let a = check_truth(&t);
        assert_eq!(kinds(&a), vec![AnomalyKind::TruthInvalid]);
        assert_eq!(a[0].rv, Some(5));
    }

    #[test]
    fn stream_round_trips_through_json() {
        let s = stream(0, vec![added("a", 5, "a2"), bookmark(6)]);
        let j = serde_json::to_string(&s).unwrap();
        assert!(j.contains(r#""kind":"BOOKMARK""#), "{j}");
        assert_eq!(serde_json::from_str::<Stream>(&j).unwrap(), s);
    }
}
