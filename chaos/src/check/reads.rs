//! Reads served from a replica's own state, and paginated lists: what Kubernetes promises of
//! `resourceVersion=0`, `resourceVersionMatch=NotOlderThan` and `limit` / `continue`.
//!
//! # Reads recorded
//! Each [`Read`] is one request (a paginated list: all its pages) of one reader client, pinned
//! to one replica (a roaming paginated list sends its continue pages to the others in turn):
//!
//! | [`ReadInput`]        | HTTP (ConfigMaps of the run's namespace)                        | [`ReadOutput`]s                |
//! |----------------------|-----------------------------------------------------------------|--------------------------------|
//! | `ListAny`            | `LIST ?resourceVersion=0`                                        | `List`                         |
//! | `ListNotOlderThan`   | `LIST ?resourceVersion=R&resourceVersionMatch=NotOlderThan`      | `List`                         |
//! | `GetAny`             | `GET .../NAME?resourceVersion=0`                                 | `Object`, `NotFound`           |
//! | `ListPaged`          | `LIST ?limit=N`, then `?limit=N&continue=T` until no token       | `Pages` (complete, 410, cut)   |
//!
//! and `Unknown` for every input (timeout, 5xx, broken connection, an unreadable body): an
//! unknown read is never checked. A replica's *incarnation* ([`Read::epoch`]) changes when the
//! harness wipes its data folder (the `membership` fault); a read during which it changed has
//! `epoch: None`.
//!
//! # Guarantees checked
//! * **NotOlderThan** ([`AnomalyKind::ReadTooOld`]): the list's `metadata.resourceVersion` is
//!   at least the requested one.
//! * **Monotonic** ([`AnomalyKind::ReadNotMonotonic`]): per client and incarnation of its
//!   replica, successive `resourceVersion=0` / NotOlderThan reads never go back in revision. A
//!   list has one revision (its resourceVersion); a GET of an object with resourceVersion `m`
//!   was served at some revision in `[m, next write of the key)`, a 404 in an interval where the
//!   key is absent (without a ground truth: a GET bounds the revision only from below, a 404 not
//!   at all). The check looks for a non-decreasing choice of revisions (greedy, smallest
//!   possible revision each time, which is exact) and reports the smallest window it can: two
//!   reads the second of which can only be older than the first, else the chain of reads that
//!   forced the first one up.
//! * **Fresh** ([`AnomalyKind::StaleList`]): a list with resourceVersion unset (the first page
//!   of a paginated list) is at or above the revision of every write acknowledged before it
//!   was sent.
//! * **Paging** ([`AnomalyKind::Paging`]): every page carries the first page's
//!   resourceVersion, holds at most `limit` items, and the keys strictly increase across the
//!   pages (no duplicate). A 410 Gone on a continue page (the revision was compacted) is an
//!   allowed outcome: recorded ([`ReadStats::expired`]), and its pages still checked.
//! * **Contents** ([`AnomalyKind::ReadContent`]): a list equals the ground-truth state at its
//!   revision, every object with its value and resourceVersion (a paginated list cut short by
//!   a 410 or an error: up to its last key); a GET's object is the key's committed version at
//!   its resourceVersion.
//!
//! The ground truth ([`Truth`]) is known over a range of revisions only; a read outside it, or
//! every read when there is no complete truth, is listed as unchecked (unknown), never passed
//! and never an anomaly.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::history::{Commit, Op};
use super::{Anomaly, AnomalyKind};

/// One read of one reader client (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Read {
    pub client: u32,
    /// The replica it is pinned to.
    pub replica: u32,
    /// The replica's incarnation when the read was sent and when it returned, if unchanged.
    pub epoch: Option<u64>,
    /// Nanoseconds on the harness's monotonic clock (the history's clock).
    pub call: u64,
    /// `None` when no answer arrived.
    pub ret: Option<u64>,
    pub input: ReadInput,
    pub output: ReadOutput,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReadInput {
    /// `LIST ?resourceVersion=0`.
    ListAny,
    /// `LIST ?resourceVersion=min_rv&resourceVersionMatch=NotOlderThan`.
    ListNotOlderThan { min_rv: u64 },
    /// `GET ?resourceVersion=0` of one object.
    GetAny { key: String },
    /// `LIST ?limit=limit` (resourceVersion unset), then its continue pages; `slow`: the
    /// client waited (for a few hundred revisions, or some seconds) before the second page,
    /// so that a compaction may expire its token; `roam`: each continue page went to the next
    /// other replica (behind a load balancer the next page lands anywhere).
    ListPaged {
        limit: usize,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        slow: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        roam: bool,
    },
}

/// One listed object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub key: String,
    /// `data.v`, if it has one.
    pub value: Option<String>,
    pub rv: u64,
}

/// One page of a paginated list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// Its `metadata.resourceVersion`.
    pub rv: u64,
    pub items: Vec<Item>,
    /// It carried a continue token.
    pub more: bool,
}

/// How a paginated list ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PagesEnd {
    /// The last page had no continue token.
    Complete,
    /// A continue page answered 410 Gone (its revision was compacted): allowed.
    Expired,
    /// A continue page got no usable answer.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReadOutput {
    /// A one-request list: its resourceVersion and items.
    List { rv: u64, items: Vec<Item> },
    /// A GET: the object's value and resourceVersion.
    Object { value: Option<String>, rv: u64 },
    /// A GET: 404.
    NotFound,
    /// A paginated list: the pages that arrived (at least the first) and how it ended.
    Pages { pages: Vec<Page>, end: PagesEnd },
    /// No usable answer: never checked.
    Unknown,
}

impl Read {
    pub fn outcome_known(&self) -> bool {
        self.output != ReadOutput::Unknown
    }

    /// The revision the read was served at, when the answer names one (lists).
    pub fn revision(&self) -> Option<u64> {
        match &self.output {
            ReadOutput::List { rv, .. } => Some(*rv),
            ReadOutput::Pages { pages, .. } => pages.first().map(|p| p.rv),
            _ => None,
        }
    }

    /// One line for reports: `#7 r2@3 LIST rv=0 -> rv=120, 5 items [100..250]`.
    pub fn describe(&self, index: usize) -> String {
        let ret = match self.ret {
            Some(r) => r.to_string(),
            None => "?".to_string(),
        };
        let epoch = match self.epoch {
            Some(0) => String::new(),
            Some(e) => format!(" (incarnation {e})"),
            None => " (incarnation changed)".to_string(),
        };
        format!(
            "#{index} r{}@{}{epoch} {} -> {} [{}..{ret}]",
            self.client, self.replica, self.input, self.output, self.call
        )
    }
}

fn show_items(items: &[Item]) -> String {
    let all: Vec<String> = items.iter().map(show_item).collect();
    format!("{{{}}}", all.join(", "))
}

fn show_item(i: &Item) -> String {
    match &i.value {
        Some(v) => format!("{}={v:?}@{}", i.key, i.rv),
        None => format!("{}@{}", i.key, i.rv),
    }
}

impl fmt::Display for ReadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadInput::ListAny => write!(f, "LIST rv=0"),
            ReadInput::ListNotOlderThan { min_rv } => write!(f, "LIST rv>={min_rv}"),
            ReadInput::GetAny { key } => write!(f, "GET {key} rv=0"),
            ReadInput::ListPaged { limit, slow, roam } => {
                write!(
                    f,
                    "LIST limit={limit}{}{}",
                    if *slow { " (slow)" } else { "" },
                    if *roam {
                        " (pages on other replicas)"
                    } else {
                        ""
                    }
                )
            }
        }
    }
}

impl fmt::Display for ReadOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadOutput::List { rv, items } => write!(f, "rv={rv} {}", show_items(items)),
            ReadOutput::Object { value: Some(v), rv } => write!(f, "value {v:?} rv={rv}"),
            ReadOutput::Object { value: None, rv } => write!(f, "object without value rv={rv}"),
            ReadOutput::NotFound => write!(f, "404 not found"),
            ReadOutput::Pages { pages, end } => {
                let ps: Vec<String> = pages
                    .iter()
                    .map(|p| {
                        format!(
                            "rv={} {}{}",
                            p.rv,
                            show_items(&p.items),
                            if p.more { " +" } else { "" }
                        )
                    })
                    .collect();
                let end = match end {
                    PagesEnd::Complete => "",
                    PagesEnd::Expired => " then 410 Gone",
                    PagesEnd::Unknown => " then no answer",
                };
                write!(f, "{} pages [{}]{end}", pages.len(), ps.join(" | "))
            }
            ReadOutput::Unknown => write!(f, "unknown"),
        }
    }
}

/// The ground truth as the reads checker needs it: every committed change of the resource,
/// known over `known_from..=known_to` (the truth recorder's covered range; below
/// `known_from` nothing is known).
#[derive(Clone, Debug)]
pub struct Truth<'a> {
    pub commits: &'a [Commit],
    pub known_from: u64,
    pub known_to: u64,
}

/// Per key: commits in revision order (rv, value).
struct Index<'a> {
    per_key: BTreeMap<&'a str, Vec<(u64, Option<&'a str>)>>,
    known_from: u64,
    known_to: u64,
}

impl<'a> Index<'a> {
    fn new(t: &Truth<'a>) -> Index<'a> {
        let mut per_key: BTreeMap<&str, Vec<(u64, Option<&str>)>> = BTreeMap::new();
        for c in t.commits {
            per_key
                .entry(c.key.as_str())
                .or_default()
                .push((c.rv, c.value.as_deref()));
        }
        for v in per_key.values_mut() {
            v.sort_by_key(|c| c.0);
            v.dedup_by_key(|c| c.0);
        }
        Index {
            per_key,
            known_from: t.known_from,
            known_to: t.known_to,
        }
    }

    fn knows(&self, rv: u64) -> bool {
        self.known_from <= rv && rv <= self.known_to
    }

    /// The key's latest commit at or below `rv`.
    fn latest(&self, key: &str, rv: u64) -> Option<(u64, Option<&'a str>)> {
        let cs = self.per_key.get(key)?;
        let p = cs.partition_point(|c| c.0 <= rv);
        (p > 0).then(|| cs[p - 1])
    }

    /// Objects present at `rv`: key -> (value, rv).
    fn state_at(&self, rv: u64) -> BTreeMap<&'a str, (Option<&'a str>, u64)> {
        let mut m = BTreeMap::new();
        for (k, cs) in &self.per_key {
            let p = cs.partition_point(|c| c.0 <= rv);
            if p > 0 {
                if let (r, Some(v)) = cs[p - 1] {
                    m.insert(*k, (Some(v), r));
                }
            }
        }
        m
    }

    /// Revisions at which `key` holds the version written at `m` (`None`: no such commit).
    fn object_interval(&self, key: &str, m: u64) -> Option<(u64, u64)> {
        let cs = self.per_key.get(key)?;
        let p = cs.iter().position(|c| c.0 == m && c.1.is_some())?;
        let hi = cs.get(p + 1).map_or(u64::MAX, |c| c.0 - 1);
        Some((m, hi))
    }

    /// Revisions (within the known range and above) at which `key` is absent.
    fn absent_intervals(&self, key: &str) -> Vec<(u64, u64)> {
        let cs = self.per_key.get(key).map(Vec::as_slice).unwrap_or(&[]);
        let mut out = Vec::new();
        let mut from = self.known_from;
        let mut absent = true;
        for &(rv, v) in cs {
            match (absent, v) {
                (true, Some(_)) => {
                    if rv > from {
                        out.push((from, rv - 1));
                    }
                    absent = false;
                }
                (false, None) => {
                    from = rv;
                    absent = true;
                }
                _ => {}
            }
        }
        if absent {
            out.push((from, u64::MAX));
        }
        out
    }
}

/// What the reads checker counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadStats {
    pub reads: usize,
    pub unknown: usize,
    pub pages: usize,
    /// Paginated lists whose continue page met a 410 Gone.
    pub expired: usize,
    /// Reads whose contents were compared with the ground truth.
    pub contents_checked: usize,
}

/// What [`check_reads`] found.
#[derive(Clone, Debug, Default)]
pub struct ReadReport {
    pub anomalies: Vec<Anomaly>,
    pub unknown: Vec<String>,
    pub stats: ReadStats,
}

/// Every guarantee of the module docs over `reads`; `history` gives the acknowledged writes
/// for freshness, `truth` (when complete) the state at each revision.
pub fn check_reads(reads: &[Read], history: &[Op], truth: Option<&Truth<'_>>) -> ReadReport {
    let mut r = ReadReport::default();
    r.stats.reads = reads.len();
    r.stats.unknown = reads.iter().filter(|x| !x.outcome_known()).count();
    let index = truth.map(Index::new);
    let mut outside = 0usize;
    let mut unchecked = 0usize;
    for (i, read) in reads.iter().enumerate() {
        if let ReadOutput::Pages { pages, end } = &read.output {
            r.stats.pages += pages.len();
            if *end == PagesEnd::Expired {
                r.stats.expired += 1;
            }
        }
        not_older_than(i, read, &mut r.anomalies);
        paging(i, read, &mut r.anomalies);
        if !read.outcome_known() || read.output == ReadOutput::NotFound {
            continue;
        }
        match &index {
            None => unchecked += 1,
            Some(ix) => match contents(i, read, ix) {
                Checked::Ok => r.stats.contents_checked += 1,
                Checked::Outside => outside += 1,
                Checked::Bad(a) => {
                    r.stats.contents_checked += 1;
                    r.anomalies.push(a);
                }
            },
        }
    }
    r.anomalies.extend(fresh(reads, history));
    r.anomalies.extend(monotonic(reads, index.as_ref()));
    if unchecked > 0 {
        r.unknown.push(format!(
            "no complete ground truth: the contents of {unchecked} reads were not checked"
        ));
    }
    if outside > 0 {
        r.unknown.push(format!(
            "{outside} reads were served at revisions outside the ground truth's range: contents not checked"
        ));
    }
    r
}

fn not_older_than(i: usize, read: &Read, out: &mut Vec<Anomaly>) {
    if let (ReadInput::ListNotOlderThan { min_rv }, Some(rv)) = (&read.input, read.revision()) {
        if rv < *min_rv {
            out.push(
                Anomaly::new(
                    AnomalyKind::ReadTooOld,
                    format!(
                        "{}: a NotOlderThan list answered revision {rv} below the requested {min_rv}",
                        read.describe(i)
                    ),
                )
                .with_reads(vec![i])
                .with_rv(rv),
            );
        }
    }
}

fn paging(i: usize, read: &Read, out: &mut Vec<Anomaly>) {
    let (ReadInput::ListPaged { limit, .. }, ReadOutput::Pages { pages, end }) =
        (&read.input, &read.output)
    else {
        return;
    };
    let mut bad = Vec::new();
    let first = pages.first().map_or(0, |p| p.rv);
    for (n, p) in pages.iter().enumerate() {
        if p.rv != first {
            bad.push(format!(
                "page {n} has resourceVersion {} but the first page {first}",
                p.rv
            ));
        }
        if p.items.len() > *limit {
            bad.push(format!(
                "page {n} has {} items, over the limit {limit}",
                p.items.len()
            ));
        }
        if !p.more && n + 1 < pages.len() {
            bad.push(format!(
                "page {n} has no continue token but is not the last"
            ));
        }
    }
    if *end == PagesEnd::Complete && pages.last().is_some_and(|p| p.more) {
        bad.push("the list ended on a page with a continue token".into());
    }
    let keys: Vec<&str> = pages
        .iter()
        .flat_map(|p| p.items.iter().map(|x| x.key.as_str()))
        .collect();
    for w in keys.windows(2) {
        if w[0] >= w[1] {
            bad.push(format!(
                "keys not strictly increasing across the pages: {:?} then {:?}",
                w[0], w[1]
            ));
        }
    }
    if !bad.is_empty() {
        out.push(
            Anomaly::new(
                AnomalyKind::Paging,
                format!("{}: {}", read.describe(i), bad.join("; ")),
            )
            .with_reads(vec![i])
            .with_rv(first),
        );
    }
}

enum Checked {
    Ok,
    Outside,
    Bad(Anomaly),
}

fn contents(i: usize, read: &Read, ix: &Index<'_>) -> Checked {
    let (rv, items, upto): (u64, Vec<&Item>, Option<&str>) = match &read.output {
        ReadOutput::Object { value, rv } => {
            let ReadInput::GetAny { key } = &read.input else {
                return Checked::Ok;
            };
            if !ix.knows(*rv) {
                return Checked::Outside;
            }
            let found = ix
                .per_key
                .get(key.as_str())
                .and_then(|cs| cs.iter().find(|c| c.0 == *rv).copied());
            return match found {
                Some((_, Some(v))) if Some(v) == value.as_deref() => Checked::Ok,
                other => Checked::Bad(
                    Anomaly::new(
                        AnomalyKind::ReadContent,
                        format!(
                            "{}: the ground truth has {} of {key} at revision {rv}",
                            read.describe(i),
                            match other {
                                Some((_, Some(v))) => format!("value {v:?}"),
                                Some((_, None)) => "the delete".to_string(),
                                None => "no write".to_string(),
                            }
                        ),
                    )
                    .with_reads(vec![i])
                    .with_rv(*rv),
                ),
            };
        }
        ReadOutput::List { rv, items } => (*rv, items.iter().collect(), None),
        ReadOutput::Pages { pages, end } => {
            let items: Vec<&Item> = pages.iter().flat_map(|p| p.items.iter()).collect();
            let upto = match end {
                PagesEnd::Complete => None,
                _ => match items.last() {
                    Some(last) => Some(last.key.as_str()),
                    None => return Checked::Ok,
                },
            };
            (pages.first().map_or(0, |p| p.rv), items, upto)
        }
        _ => return Checked::Ok,
    };
    if !ix.knows(rv) {
        return Checked::Outside;
    }
    let mut want = ix.state_at(rv);
    if let Some(last) = upto {
        want.retain(|k, _| *k <= last);
    }
    let mut got: BTreeMap<&str, (Option<&str>, u64)> = BTreeMap::new();
    for it in &items {
        got.insert(it.key.as_str(), (it.value.as_deref(), it.rv));
    }
    if got == want && got.len() == items.len() {
        return Checked::Ok;
    }
    let mut diff = Vec::new();
    let keys: BTreeSet<&str> = got.keys().chain(want.keys()).copied().collect();
    for k in keys {
        match (got.get(k), want.get(k)) {
            (Some(g), Some(w)) if g == w => {}
            (Some((gv, gr)), Some((wv, wr))) => diff.push(format!(
                "{k}: listed {gv:?}@{gr}, the truth has {wv:?}@{wr}"
            )),
            (Some((gv, gr)), None) => {
                let why = match ix.latest(k, rv) {
                    Some((d, None)) => format!("deleted at {d}"),
                    Some(_) => "present with another version".to_string(),
                    None => "not yet created".to_string(),
                };
                diff.push(format!(
                    "{k}: listed {gv:?}@{gr}, absent in the truth ({why})"
                ))
            }
            (None, Some((wv, wr))) => diff.push(format!("{k}: missing, the truth has {wv:?}@{wr}")),
            (None, None) => {}
        }
    }
    if got.len() != items.len() {
        diff.push("a key is listed twice".into());
    }
    Checked::Bad(
        Anomaly::new(
            AnomalyKind::ReadContent,
            format!(
                "{}: differs from the ground-truth state at revision {rv}{}: {}",
                read.describe(i),
                match upto {
                    Some(k) => format!(" (keys up to {k:?})"),
                    None => String::new(),
                },
                diff.join("; ")
            ),
        )
        .with_reads(vec![i])
        .with_rv(rv),
    )
}

/// Lists with resourceVersion unset against the writes acknowledged before they were sent.
fn fresh(reads: &[Read], history: &[Op]) -> Vec<Anomaly> {
    let mut acked: Vec<(u64, u64, usize)> = history
        .iter()
        .enumerate()
        .filter_map(|(i, op)| Some((op.ret?, op.acknowledged_rv()?, i)))
        .collect();
    acked.sort_unstable();
    // prefix maximum of rv by return time
    let mut best: Vec<(u64, usize)> = Vec::with_capacity(acked.len());
    for &(_, rv, i) in &acked {
        let b = match best.last() {
            Some(&(brv, bi)) if brv >= rv => (brv, bi),
            _ => (rv, i),
        };
        best.push(b);
    }
    let mut out = Vec::new();
    for (i, read) in reads.iter().enumerate() {
        if !matches!(read.input, ReadInput::ListPaged { .. }) {
            continue;
        }
        let Some(rv) = read.revision() else { continue };
        let p = acked.partition_point(|a| a.0 < read.call);
        if p == 0 {
            continue;
        }
        let (wrv, wi) = best[p - 1];
        if rv < wrv {
            out.push(
                Anomaly::new(
                    AnomalyKind::StaleList,
                    format!(
                        "{} (resourceVersion unset: the latest state) is older than {}, acknowledged before it was sent",
                        read.describe(i),
                        history[wi].describe(wi)
                    ),
                )
                .with_reads(vec![i])
                .with_ops(vec![wi])
                .with_rv(rv),
            );
        }
    }
    out
}

/// The revisions a read may have been served at, as sorted disjoint intervals; `None` for
/// reads outside the monotonic check.
fn possible(read: &Read, ix: Option<&Index<'_>>) -> Option<Vec<(u64, u64)>> {
    read.epoch?;
    match (&read.input, &read.output) {
        (ReadInput::ListAny | ReadInput::ListNotOlderThan { .. }, ReadOutput::List { rv, .. }) => {
            Some(vec![(*rv, *rv)])
        }
        (ReadInput::GetAny { key }, ReadOutput::Object { rv, .. }) => {
            let iv = ix
                .filter(|ix| ix.knows(*rv))
                .and_then(|ix| ix.object_interval(key, *rv))
                .unwrap_or((*rv, u64::MAX));
            Some(vec![iv])
        }
        (ReadInput::GetAny { key }, ReadOutput::NotFound) => match ix {
            Some(ix) => {
                let mut ivs = ix.absent_intervals(key);
                if ix.known_from > 0 {
                    // below the known range anything goes
                    ivs.insert(0, (0, ix.known_from - 1));
                }
                Some(ivs)
            }
            None => Some(vec![(0, u64::MAX)]),
        },
        _ => None,
    }
}

/// A read's index and the revisions it may have been served at.
type Possible = (usize, Vec<(u64, u64)>);

/// Monotonic revisions per client and incarnation (see the module docs).
fn monotonic(reads: &[Read], ix: Option<&Index<'_>>) -> Vec<Anomaly> {
    let mut groups: HashMap<(u32, u32, u64), Vec<Possible>> = HashMap::new();
    for (i, read) in reads.iter().enumerate() {
        if let Some(ivs) = possible(read, ix) {
            let e = read.epoch.unwrap_or(0);
            groups
                .entry((read.client, read.replica, e))
                .or_default()
                .push((i, ivs));
        }
    }
    let mut keys: Vec<_> = groups.keys().copied().collect();
    keys.sort_unstable();
    let mut out = Vec::new();
    for k in keys {
        let mut g = groups.remove(&k).unwrap_or_default();
        g.sort_by_key(|(i, _)| (reads[*i].call, *i));
        let mut floor = 0u64;
        // where the floor was last its own read's smallest possible revision
        let mut chain_from = 0usize;
        for n in 0..g.len() {
            let (i, ivs) = &g[n];
            let pick = ivs
                .iter()
                .find(|iv| iv.1 >= floor)
                .map(|iv| iv.0.max(floor));
            match pick {
                Some(p) => {
                    if p == ivs[0].0 || p > floor {
                        chain_from = n;
                    }
                    floor = p;
                }
                None => {
                    let max_here = ivs.last().map_or(0, |iv| iv.1);
                    // a pair the second of which can only be older than the first
                    let pair = (0..n).rev().find(|&m| g[m].1[0].0 > max_here);
                    let window: Vec<usize> = match pair {
                        Some(m) => vec![g[m].0, *i],
                        None => g[chain_from..=n].iter().map(|x| x.0).collect(),
                    };
                    let lines: Vec<String> = window.iter().map(|&w| reads[w].describe(w)).collect();
                    out.push(
                        Anomaly::new(
                            AnomalyKind::ReadNotMonotonic,
                            format!(
                                "client r{} on replica {}: a read went back in revision (it can only have been served below {floor}, where an earlier read already was): {}",
                                k.0,
                                k.1,
                                lines.join("; ")
                            ),
                        )
                        .with_reads(window)
                        .with_rv(max_here),
                    );
                    // go on from this read
                    floor = ivs[0].0;
                    chain_from = n;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::history::{Input, Output};

    fn item(key: &str, value: &str, rv: u64) -> Item {
        Item {
            key: key.into(),
            value: Some(value.into()),
            rv,
        }
    }

    fn read(call: u64, input: ReadInput, output: ReadOutput) -> Read {
        Read {
            client: 1,
            replica: 2,
            epoch: Some(0),
            call,
            ret: Some(call + 1),
            input,
            output,
        }
    }

    fn list(call: u64, rv: u64, items: Vec<Item>) -> Read {
        read(call, ReadInput::ListAny, ReadOutput::List { rv, items })
    }

    fn get(call: u64, key: &str, out: ReadOutput) -> Read {
        read(call, ReadInput::GetAny { key: key.into() }, out)
    }

    fn truth() -> Vec<Commit> {
        vec![
            Commit::put("a", 10, "a1"),
            Commit::put("b", 11, "b1"),
            Commit::put("a", 12, "a2"),
            Commit::delete("b", 13),
            Commit::put("c", 14, "c1"),
        ]
    }

    fn check(reads: &[Read], t: &[Commit]) -> ReadReport {
        let t = Truth {
            commits: t,
            known_from: 0,
            known_to: 20,
        };
        check_reads(reads, &[], Some(&t))
    }

    fn kinds(r: &ReadReport) -> Vec<AnomalyKind> {
        r.anomalies.iter().map(|a| a.kind).collect()
    }

    #[test]
    fn clean_reads_pass() {
        let t = truth();
        let reads = vec![
            list(0, 11, vec![item("a", "a1", 10), item("b", "b1", 11)]),
            get(
                2,
                "a",
                ReadOutput::Object {
                    value: Some("a2".into()),
                    rv: 12,
                },
            ),
            get(3, "b", ReadOutput::NotFound),
            read(
                4,
                ReadInput::ListNotOlderThan { min_rv: 13 },
                ReadOutput::List {
                    rv: 14,
                    items: vec![item("a", "a2", 12), item("c", "c1", 14)],
                },
            ),
            read(
                6,
                ReadInput::ListPaged {
                    limit: 1,
                    slow: false,
                    roam: false,
                },
                ReadOutput::Pages {
                    pages: vec![
                        Page {
                            rv: 12,
                            items: vec![item("a", "a2", 12)],
                            more: true,
                        },
                        Page {
                            rv: 12,
                            items: vec![item("b", "b1", 11)],
                            more: false,
                        },
                    ],
                    end: PagesEnd::Complete,
                },
            ),
            read(8, ReadInput::ListAny, ReadOutput::Unknown),
        ];
        let r = check(&reads, &t);
        assert!(r.anomalies.is_empty(), "{:#?}", r.anomalies);
        assert!(r.unknown.is_empty(), "{:?}", r.unknown);
        assert_eq!(r.stats.contents_checked, 4);
        assert_eq!(r.stats.pages, 2);
    }

    #[test]
    fn not_older_than_is_enforced() {
        let r = check(
            &[read(
                0,
                ReadInput::ListNotOlderThan { min_rv: 13 },
                ReadOutput::List {
                    rv: 12,
                    items: vec![item("a", "a2", 12), item("b", "b1", 11)],
                },
            )],
            &truth(),
        );
        assert_eq!(kinds(&r), vec![AnomalyKind::ReadTooOld]);
    }

    #[test]
    fn going_back_is_caught_with_a_two_read_window() {
        let t = truth();
        let reads = vec![
            list(0, 14, vec![item("a", "a2", 12), item("c", "c1", 14)]),
            list(2, 14, vec![item("a", "a2", 12), item("c", "c1", 14)]),
            // b exists only in [11, 13): a GET of it is older than revision 14
            get(
                4,
                "b",
                ReadOutput::Object {
                    value: Some("b1".into()),
                    rv: 11,
                },
            ),
        ];
        let r = check(&reads, &t);
        assert_eq!(kinds(&r), vec![AnomalyKind::ReadNotMonotonic], "{r:#?}");
        assert_eq!(r.anomalies[0].reads, vec![1, 2]);
        // another client, or a new incarnation of the replica, starts afresh
        let mut other = reads.clone();
        other[2].client = 9;
        assert!(check(&other, &t).anomalies.is_empty());
        other[2].client = 1;
        other[2].epoch = Some(1);
        assert!(check(&other, &t).anomalies.is_empty());
        other[2].epoch = None;
        assert!(check(&other, &t).anomalies.is_empty());
    }

    #[test]
    fn gets_and_404s_pick_a_consistent_revision() {
        let t = truth();
        // a2 (from 12) then b absent (from 13) then a list at 14: fine
        let reads = vec![
            get(
                0,
                "a",
                ReadOutput::Object {
                    value: Some("a2".into()),
                    rv: 12,
                },
            ),
            get(1, "b", ReadOutput::NotFound),
            get(2, "c", ReadOutput::NotFound), // c absent below 14: forces [13, 13]
            list(3, 13, vec![item("a", "a2", 12)]),
        ];
        assert!(check(&reads, &t).anomalies.is_empty());
        // a 404 of c after a list at 14 goes back
        let mut bad = reads.clone();
        bad.push(get(5, "c", ReadOutput::NotFound));
        bad[3] = list(3, 14, vec![item("a", "a2", 12), item("c", "c1", 14)]);
        bad.remove(2);
        let r = check(&bad, &t);
        assert_eq!(kinds(&r), vec![AnomalyKind::ReadNotMonotonic], "{r:#?}");
        assert_eq!(r.anomalies[0].reads, vec![2, 3]);
    }

    #[test]
    fn contents_are_the_state_at_the_revision() {
        let t = truth();
        let r = check(
            &[list(0, 13, vec![item("a", "a2", 12), item("b", "b1", 11)])],
            &t,
        );
        assert_eq!(kinds(&r), vec![AnomalyKind::ReadContent]);
        assert!(
            r.anomalies[0].description.contains("deleted at 13"),
            "{}",
            r.anomalies[0]
        );
        let r = check(
            &[list(0, 12, vec![item("a", "a1", 10), item("b", "b1", 11)])],
            &t,
        );
        assert_eq!(kinds(&r), vec![AnomalyKind::ReadContent]);
        let r = check(
            &[get(
                0,
                "a",
                ReadOutput::Object {
                    value: Some("zz".into()),
                    rv: 12,
                },
            )],
            &t,
        );
        assert_eq!(kinds(&r), vec![AnomalyKind::ReadContent]);
        // outside the truth's range, or without a truth: unknown, not an anomaly
        let r = check(&[list(0, 30, vec![])], &t);
        assert!(r.anomalies.is_empty());
        assert_eq!(r.unknown.len(), 1, "{:?}", r.unknown);
        let r = check_reads(&[list(0, 12, vec![])], &[], None);
        assert!(r.anomalies.is_empty());
        assert_eq!(r.unknown.len(), 1, "{:?}", r.unknown);
    }

    fn paged(pages: Vec<Page>, end: PagesEnd) -> Read {
        read(
            0,
            ReadInput::ListPaged {
                limit: 1,
                slow: false,
                roam: false,
            },
            ReadOutput::Pages { pages, end },
        )
    }

    fn page(rv: u64, items: Vec<Item>, more: bool) -> Page {
        Page { rv, items, more }
    }

    #[test]
    fn pages_agree_and_keys_increase() {
        let t = truth();
        let good = paged(
            vec![
                page(14, vec![item("a", "a2", 12)], true),
                page(14, vec![item("c", "c1", 14)], false),
            ],
            PagesEnd::Complete,
        );
        assert!(check(&[good], &t).anomalies.is_empty());
        let other_rv = paged(
            vec![
                page(14, vec![item("a", "a2", 12)], true),
                page(15, vec![item("c", "c1", 14)], false),
            ],
            PagesEnd::Complete,
        );
        assert_eq!(kinds(&check(&[other_rv], &t)), vec![AnomalyKind::Paging]);
        let dup = paged(
            vec![
                page(14, vec![item("a", "a2", 12)], true),
                page(14, vec![item("a", "a2", 12)], true),
                page(14, vec![item("c", "c1", 14)], false),
            ],
            PagesEnd::Complete,
        );
        let r = check(&[dup], &t);
        assert!(kinds(&r).contains(&AnomalyKind::Paging), "{r:#?}");
        // a missing key
        let short = paged(
            vec![page(14, vec![item("c", "c1", 14)], false)],
            PagesEnd::Complete,
        );
        assert_eq!(kinds(&check(&[short], &t)), vec![AnomalyKind::ReadContent]);
        // 410 on a continue page: allowed, recorded, prefix checked
        let expired = paged(
            vec![page(14, vec![item("a", "a2", 12)], true)],
            PagesEnd::Expired,
        );
        let r = check(&[expired], &t);
        assert!(r.anomalies.is_empty(), "{r:#?}");
        assert_eq!(r.stats.expired, 1);
        let expired_wrong = paged(
            vec![page(14, vec![item("c", "c1", 14)], true)],
            PagesEnd::Expired,
        );
        assert_eq!(
            kinds(&check(&[expired_wrong], &t)),
            vec![AnomalyKind::ReadContent]
        );
    }

    #[test]
    fn unset_resource_version_lists_are_fresh() {
        let t = truth();
        let history = vec![Op {
            client: 3,
            key: "c".into(),
            call: 0,
            ret: Some(5),
            input: Input::Create { value: "c1".into() },
            output: Output::Written { rv: 14 },
        }];
        let mut stale = paged(
            vec![page(13, vec![item("a", "a2", 12)], false)],
            PagesEnd::Complete,
        );
        stale.call = 6;
        let tr = Truth {
            commits: &t,
            known_from: 0,
            known_to: 20,
        };
        let r = check_reads(std::slice::from_ref(&stale), &history, Some(&tr));
        assert_eq!(kinds(&r), vec![AnomalyKind::StaleList], "{r:#?}");
        assert_eq!(r.anomalies[0].ops, vec![0]);
        // concurrent with the write: fine
        stale.call = 4;
        assert!(check_reads(&[stale], &history, Some(&tr))
            .anomalies
            .is_empty());
    }

    #[test]
    fn reads_serialize() {
        let r = paged(
            vec![page(3, vec![item("a", "x", 2)], false)],
            PagesEnd::Expired,
        );
        let s = serde_json::to_string(&r).unwrap();
        assert!(s.contains(r#""type":"list_paged""#), "{s}");
        assert_eq!(serde_json::from_str::<Read>(&s).unwrap(), r);
    }
}
