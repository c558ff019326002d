//! The checkers of the chaos harness: pure, deterministic functions from what was recorded
//! (client [`history`], watch [`watch::Stream`]s, and the replayed ground truth — the list of
//! committed writes) to a [`Report`] of anomalies.
//!
//! Modelled on etcd's robustness suite (`tests/robustness/validate`: linearizability through
//! porcupine, the watch guarantees of `validate/watch.go`, and the history patching of
//! `patch_history.go`):
//! * [`linearizable`] — per-key linearizability of the Kubernetes register (GET, PUT,
//!   conditional PUT, create, delete, conditional delete) with unknown-outcome ops, and the
//!   global rv order rule;
//! * [`watch`] — ordered, unique, atomic, bookmarkable, reliable, resumable watch streams,
//!   initial state, one content per revision across streams and replicas, and durability of
//!   acknowledged writes;
//! * [`reads`] — `resourceVersion=0` and NotOlderThan reads (not older than asked, monotonic
//!   per client, the state at their revision) and paginated lists (one revision, increasing
//!   keys, the state at that revision; 410 on a continue page allowed).
//!
//! A check that cannot conclude (search budget exhausted, no ground truth) is reported in
//! [`Report::unknown`], never as a pass.

pub mod history;
pub mod linearizable;
pub mod reads;
pub mod watch;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

pub use history::{Commit, Input, Op, Output};
pub use linearizable::{check_linearizable, check_rv_order, Verdict};
pub use watch::{check_durability, check_truth, check_watch, Event, EventKind, Stream};

/// What kind of guarantee an anomaly breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AnomalyKind {
    /// An op the API cannot produce (a recorder bug, or a server answering nonsense).
    Malformed,
    /// A key's history has no linearization.
    NotLinearizable,
    /// A write got a revision not above one acknowledged before it started.
    RvOrder,
    /// Two acknowledged writes got the same revision.
    RvDuplicate,
    /// An acknowledged write is missing from (or differs in) the ground truth.
    Durability,
    /// A write issued once was committed more than once (e.g. a retried proposal applied twice).
    Duplicated,
    /// The ground truth itself is inconsistent (a revision twice).
    TruthInvalid,
    /// Watch: events out of revision order (or a bookmark going back).
    Ordered,
    /// Watch: the same event delivered twice.
    Unique,
    /// Watch: two different events for one revision (a revision split or reused).
    Atomic,
    /// Watch: an event at or below a bookmark already delivered.
    Bookmarkable,
    /// Watch: a committed event missing inside a stream's covered interval.
    Reliable,
    /// Watch: a stream (re)started from revision R does not continue with the first event after R.
    Resumable,
    /// Watch: the initial events (sendInitialEvents / relist) are not the state at the bookmark.
    InitialState,
    /// Watch: an event differs from the ground truth's commit at its revision, or has none.
    Content,
    /// Watch: two streams disagree on the content of one revision.
    Disagree,
    /// After every fault was healed, writes did not succeed within the bound.
    Liveness,
    /// A faulted replica did not come back (voter again, caught up, serving) within the bound.
    Recovery,
    /// A replica exited on its own (outside a fault that may make it exit).
    Crash,
    /// Reads: a NotOlderThan list answered a revision below the requested one.
    ReadTooOld,
    /// Reads: a client's resourceVersion=0 / NotOlderThan reads on one replica went back.
    ReadNotMonotonic,
    /// Reads: a list or GET differs from the ground-truth state at its revision.
    ReadContent,
    /// Reads: a list with resourceVersion unset is older than an acknowledged write.
    StaleList,
    /// Reads: pages of one paginated list disagree on the revision, repeat or misorder keys.
    Paging,
}

impl fmt::Display for AnomalyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// One broken guarantee, with where to look.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    /// Human-readable, self-contained.
    pub description: String,
    /// Indices into the history.
    pub ops: Vec<usize>,
    /// `(stream index, event index)` pairs.
    pub events: Vec<(usize, usize)>,
    /// Indices into the reads (see [`reads`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<usize>,
    /// The revision concerned, if one is.
    pub rv: Option<u64>,
}

impl Anomaly {
    pub fn new(kind: AnomalyKind, description: impl Into<String>) -> Anomaly {
        Anomaly {
            kind,
            description: description.into(),
            ops: Vec::new(),
            events: Vec::new(),
            reads: Vec::new(),
            rv: None,
        }
    }
    pub fn with_ops(mut self, ops: Vec<usize>) -> Anomaly {
        self.ops = ops;
        self
    }
    pub fn with_events(mut self, events: Vec<(usize, usize)>) -> Anomaly {
        self.events = events;
        self
    }
    pub fn with_reads(mut self, reads: Vec<usize>) -> Anomaly {
        self.reads = reads;
        self
    }
    pub fn with_rv(mut self, rv: u64) -> Anomaly {
        self.rv = Some(rv);
        self
    }
    /// The streams involved (from `events`), ascending.
    pub fn streams(&self) -> Vec<usize> {
        self.events
            .iter()
            .map(|e| e.0)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.kind, self.description)?;
        if let Some(rv) = self.rv {
            write!(f, " (rv {rv})")?;
        }
        Ok(())
    }
}

/// Sizes of what was checked, for the summary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub ops: usize,
    pub keys: usize,
    pub unknown_ops: usize,
    pub streams: usize,
    pub events: usize,
    pub commits: usize,
    /// Search steps spent on linearizability (all keys).
    pub search_steps: u64,
    /// Reads checked by [`reads::check_reads`] (0: none recorded).
    #[serde(default)]
    pub reads: usize,
}

/// The result of [`check_all`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub anomalies: Vec<Anomaly>,
    /// Checks that could not conclude, and why. Not a pass.
    pub unknown: Vec<String>,
    pub stats: Stats,
}

/// Overall outcome of a [`Report`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Pass,
    Fail,
    /// No anomaly, but something could not be checked.
    Unknown,
}

impl Report {
    pub fn outcome(&self) -> Outcome {
        if !self.anomalies.is_empty() {
            Outcome::Fail
        } else if !self.unknown.is_empty() {
            Outcome::Unknown
        } else {
            Outcome::Pass
        }
    }

    /// Only a report with neither anomalies nor unknowns passes.
    pub fn passed(&self) -> bool {
        self.outcome() == Outcome::Pass
    }

    /// One line: `FAIL: 3 anomalies (NotLinearizable 1, Reliable 2), 1 unknown; 1200 ops on
    /// 12 keys (40 unknown), 4 streams / 830 events, 600 commits`.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        let mut sizes = format!(
            "{} ops on {} keys ({} unknown), {} streams / {} events, {} commits",
            s.ops, s.keys, s.unknown_ops, s.streams, s.events, s.commits
        );
        if s.reads > 0 {
            sizes.push_str(&format!(", {} reads", s.reads));
        }
        let mut kinds: BTreeMap<AnomalyKind, usize> = BTreeMap::new();
        for a in &self.anomalies {
            *kinds.entry(a.kind).or_default() += 1;
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        match self.outcome() {
            Outcome::Pass => format!("PASS; {sizes}"),
            Outcome::Unknown => format!(
                "UNKNOWN: {} checks inconclusive; {sizes}",
                self.unknown.len()
            ),
            Outcome::Fail => format!(
                "FAIL: {} anomalies ({}), {} unknown; {sizes}",
                self.anomalies.len(),
                kinds.join(", "),
                self.unknown.len()
            ),
        }
    }
}

/// Budgets and options of [`check_all_with`].
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub linearizable: linearizable::Config,
}

/// Every check with the default budgets.
pub fn check_all(history: &[Op], streams: &[Stream], truth: &[Commit]) -> Report {
    check_all_with(&Config::default(), history, streams, truth)
}

/// Every check: malformed ops, per-key linearizability (unknown-outcome writes resolved from
/// `truth` when it is consistent), the rv order rule, durability of acknowledged writes, the
/// truth's own consistency, and the watch guarantees. An empty `truth` means "not available":
/// the checks that need it are listed in `unknown`.
pub fn check_all_with(
    cfg: &Config,
    history: &[Op],
    streams: &[Stream],
    truth: &[Commit],
) -> Report {
    let mut r = Report::default();
    r.stats.ops = history.len();
    r.stats.keys = history
        .iter()
        .map(|o| o.key.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    r.stats.unknown_ops = history.iter().filter(|o| !o.outcome_known()).count();
    r.stats.streams = streams.len();
    r.stats.events = streams.iter().map(|s| s.events.len()).sum();
    r.stats.commits = truth.len();

    for (i, why) in history::malformed(history) {
        r.anomalies.push(
            Anomaly::new(
                AnomalyKind::Malformed,
                format!("{}: {why}", history[i].describe(i)),
            )
            .with_ops(vec![i]),
        );
    }

    for kv in check_linearizable(history, truth, &cfg.linearizable) {
        r.stats.search_steps += kv.steps;
        match kv.verdict {
            Verdict::Ok => {}
            Verdict::Unknown { reason } => r.unknown.push(reason),
            Verdict::Illegal { ops } => {
                let lines: Vec<String> = ops.iter().map(|&i| history[i].describe(i)).collect();
                r.anomalies.push(
                    Anomaly::new(
                        AnomalyKind::NotLinearizable,
                        format!(
                            "key {}: these {} ops cannot be linearized (other ops of the key may or may not have taken effect): {}",
                            kv.key,
                            ops.len(),
                            lines.join("; ")
                        ),
                    )
                    .with_ops(ops),
                );
            }
        }
    }

    r.anomalies.extend(check_rv_order(history));

    if truth.is_empty() {
        if history.iter().any(|o| o.acknowledged_rv().is_some()) {
            r.unknown
                .push("no ground truth: durability of acknowledged writes not checked".to_string());
        }
        if !streams.is_empty() {
            r.unknown.push(
                "no ground truth: watch reliability checked against the merged streams only; initial state and event content not checked against commits".to_string(),
            );
        }
    } else {
        r.anomalies.extend(check_truth(truth));
        r.anomalies.extend(check_durability(history, truth));
    }
    r.anomalies.extend(check_watch(streams, truth));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(call: u64, ret: Option<u64>, input: Input, output: Output) -> Op {
        Op {
            client: 1,
            key: "k".into(),
            call,
            ret,
            input,
            output,
        }
    }

    fn ev(kind: EventKind, rv: u64, value: Option<&str>) -> Event {
        Event {
            kind,
            key: "k".into(),
            rv,
            value: value.map(str::to_string),
        }
    }

    fn clean() -> (Vec<Op>, Vec<Stream>, Vec<Commit>) {
        let history = vec![
            op(
                0,
                Some(1),
                Input::Create { value: "a".into() },
                Output::Written { rv: 2 },
            ),
            op(
                2,
                Some(3),
                Input::Put { value: "b".into() },
                Output::Written { rv: 3 },
            ),
            op(
                4,
                Some(5),
                Input::Get,
                Output::Value {
                    value: Some("b".into()),
                    rv: 3,
                },
            ),
            op(6, None, Input::Put { value: "c".into() }, Output::Unknown),
            op(7, Some(8), Input::Delete, Output::Deleted { rv: 5 }),
        ];
        let truth = vec![
            Commit::put("k", 2, "a"),
            Commit::put("k", 3, "b"),
            Commit::delete("k", 5),
        ];
        let streams = vec![Stream {
            client: 9,
            replica: Some(0),
            start_rv: 1,
            events: vec![
                ev(EventKind::Added, 2, Some("a")),
                ev(EventKind::Modified, 3, Some("b")),
                ev(EventKind::Bookmark, 4, None),
                ev(EventKind::Deleted, 5, Some("b")),
            ],
            relists: vec![],
        }];
        (history, streams, truth)
    }

    #[test]
    fn clean_run_passes() {
        let (h, s, t) = clean();
        let r = check_all(&h, &s, &t);
        assert!(r.passed(), "{r:#?}");
        assert_eq!(r.outcome(), Outcome::Pass);
        assert_eq!(
            r.summary(),
            "PASS; 5 ops on 1 keys (1 unknown), 1 streams / 4 events, 3 commits"
        );
    }

    #[test]
    fn failures_are_collected_and_summarized() {
        let (mut h, mut s, t) = clean();
        h.push(op(
            9,
            Some(10),
            Input::Get,
            Output::Value {
                value: Some("b".into()),
                rv: 3,
            },
        )); // stale: deleted at 5
        h.push(op(11, Some(12), Input::Get, Output::Written { rv: 1 })); // malformed
        s[0].events.remove(1); // gap at rv 3
        let r = check_all(&h, &s, &t);
        assert_eq!(r.outcome(), Outcome::Fail);
        let kinds: BTreeSet<AnomalyKind> = r.anomalies.iter().map(|a| a.kind).collect();
        assert!(kinds.contains(&AnomalyKind::NotLinearizable), "{r:#?}");
        assert!(kinds.contains(&AnomalyKind::Malformed), "{r:#?}");
        assert!(kinds.contains(&AnomalyKind::Reliable), "{r:#?}");
        let sum = r.summary();
        assert!(
            sum.starts_with(
                "FAIL: 3 anomalies (Malformed 1, NotLinearizable 1, Reliable 1), 0 unknown;"
            ),
            "{sum}"
        );
        let nl = r
            .anomalies
            .iter()
            .find(|a| a.kind == AnomalyKind::NotLinearizable)
            .unwrap();
        assert_eq!(nl.ops, vec![4, 5]);
        assert!(nl.to_string().contains("#5 c1 k GET"), "{nl}");
    }

    #[test]
    fn unknown_is_not_a_pass() {
        let (h, s, _) = clean();
        let r = check_all(&h, &s, &[]);
        assert_eq!(r.outcome(), Outcome::Unknown, "{r:#?}");
        assert!(!r.passed());
        assert!(
            r.summary().starts_with("UNKNOWN: 2 checks inconclusive"),
            "{}",
            r.summary()
        );

        // An exhausted search is unknown too.
        let mut h = vec![op(
            0,
            Some(1),
            Input::Create { value: "a".into() },
            Output::Written { rv: 1 },
        )];
        for i in 0..20 {
            h.push(op(
                2,
                None,
                Input::Put {
                    value: format!("u{i}"),
                },
                Output::Unknown,
            ));
        }
        // a create succeeding although nothing can have deleted the object
        h.push(op(
            100,
            Some(101),
            Input::Create { value: "z".into() },
            Output::Written { rv: 1000 },
        ));
        let mut cfg = Config::default();
        cfg.linearizable.max_steps = 5_000;
        let r = check_all_with(
            &cfg,
            &h,
            &[],
            &[Commit::put("k", 1, "a"), Commit::put("k", 1000, "z")],
        );
        // with the truth the unknown puts are known not to have happened: a definite failure
        assert_eq!(r.outcome(), Outcome::Fail, "{r:#?}");
        let r = check_all_with(&cfg, &h, &[], &[]);
        assert_eq!(r.outcome(), Outcome::Unknown, "{r:#?}");
        assert!(r.unknown.iter().any(|u| u.contains("gave up")), "{r:#?}");
    }

    #[test]
    fn report_serializes() {
        let (mut h, s, t) = clean();
        h[2].output = Output::Value {
            value: Some("zzz".into()),
            rv: 3,
        };
        let r = check_all(&h, &s, &t);
        let json = serde_json::to_string(&r).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
