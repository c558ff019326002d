//! Per-key linearizability of the Kubernetes-shaped register, and the global rv order rule.
//!
//! # Model
//! Each key is an independent register (linearizability is local, so checking keys one by one
//! is exact for per-key operations). Its state is the current object — a value and its
//! resourceVersion, or absent — plus a lower bound on the revision of the key's last write.
//! Operations follow [`super::history`]'s table. The revision returned by a write is
//! authoritative: along a linearization, the key's write revisions must strictly increase, a
//! read must return the current object's revision, and a precondition compares with it.
//!
//! Ops with unknown outcome (`Output::Unknown`) may take effect at any point after their call,
//! or never (porcupine's "infinite return time"). When one does take effect the new object's
//! revision is unknown: the state then carries only a lower bound (one more than the previous
//! write's), and the first read that observes the object pins it. A known write revision must
//! exceed the bound, so `k` unknown writes between two known revisions need `k` free revisions
//! between them.
//!
//! Unknown reads are dropped. Malformed ops (see [`super::history::Op::validate`]) are treated
//! as unknown-outcome (reads: dropped); `check_all` reports them separately.
//!
//! # Ground truth
//! With a ground truth (the list of committed writes) unknown-outcome writes are resolved the
//! way etcd's robustness suite patches its history: a `Put`/`PutIf`/`Create` whose value is
//! written by no other op of the history on that key *did* take effect, with the truth's
//! revision, if the truth holds that value for that key, and never did otherwise. Only keys
//! whose every acknowledged write is present in the truth (same key and revision) are patched,
//! so an incomplete or lying truth cannot make the checker more permissive than it would be
//! without it. Unknown deletes are never patched.
//!
//! # Search
//! Wing & Gong's search with Lowe's just-in-time linearization and porcupine's memoization:
//! call and return entries sorted by time (a call sorts before a return at the same instant, so
//! touching intervals count as concurrent) in a doubly linked list; at each point the search
//! tries, in time order, every pending call before the first pending return, applies the model,
//! lifts the op out of the list and restarts; when it reaches a return it backtracks. A
//! `(linearized set, state)` pair already explored is never explored again (the set is kept as
//! a 128-bit Zobrist hash: a collision, of probability about `pairs² / 2^129`, could only hide a
//! linearization, never invent one). The search succeeds as soon as every op with a known
//! outcome is linearized — the remaining unknown ones simply never happened.
//!
//! Two prunings come from the revision bound, which only grows along a linearization. Every op
//! has a *death threshold*: the bound past which it can never be applied (a read of revision
//! `x` dies at `x + 1`, a write of revision `x` at `x`, a precondition on `e` at `e + 1`). A
//! step that raises the bound past the threshold of a pending op with known outcome fails at
//! once; a pending optional op is lifted out with it as "never happened", so the memo sees one
//! canonical set whichever optional ops were skipped (without this, the optional writes of a
//! shrinking trial make the search exponential). Before searching, a known-outcome op that no
//! state can explain — a read of a value no op of the key writes, a conditional write whose new
//! revision is not above its precondition — is reported on its own.
//!
//! The search is still exponential in the worst case (unconditional unknown-outcome writes
//! never die: every subset of them may be tried); it counts steps (one per loop iteration) and
//! gives up after [`Config::max_steps`], answering [`Verdict::Unknown`] — never a pass. For
//! scale: a 4,000-op history on 4 keys with ~10 concurrent ops and 5% unknown outcomes takes
//! about 60k steps (13k when the ground truth resolves the unknowns), tens of milliseconds.
//!
//! # Windows
//! An illegal key history is shrunk to a small set of ops that on their own cannot be
//! linearized, as witness: first the shortest time prefix (ops called by `t`, ops still running
//! at `t` relaxed) that is illegal, found by bisection; then delta debugging relaxes every op
//! not needed for the illegality. Relaxing an op weakens it — a successful write becomes one
//! that may or may not take effect (same value and revision, any time after its call), a read
//! or failed write is dropped — so every window reported is genuinely illegal in itself, and the
//! full history is illegal because of it. The window is 1-minimal (relaxing any one of its ops
//! makes it linearizable) unless the shrink budget ([`Config::shrink_steps`], spread over
//! trials so that no one trial uses more than a sixteenth of it) ran out; then it is merely
//! smaller.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::history::{Commit, Input, Op, Output};
use super::{Anomaly, AnomalyKind};

/// Budgets of the search.
#[derive(Clone, Debug)]
pub struct Config {
    /// Steps one search of one key may take before it answers [`Verdict::Unknown`]. Memory is
    /// at most about 50 bytes per step.
    pub max_steps: u64,
    /// Total steps spent shrinking the window of one illegal key (each trial search is also
    /// capped by `max_steps`); when exhausted, the window found so far is reported.
    pub shrink_steps: u64,
    /// Resolve unknown-outcome writes from the ground truth (see the module docs).
    pub use_truth: bool,
    /// Keys that exist before the history starts, with their value and resourceVersion
    /// (all other keys start absent).
    pub initial: BTreeMap<String, (String, u64)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_steps: 2_000_000,
            shrink_steps: 4_000_000,
            use_truth: true,
            initial: BTreeMap::new(),
        }
    }
}

/// The verdict on one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A linearization exists.
    Ok,
    /// No linearization exists; `ops` (history indices, ascending) is a small window of ops
    /// that on their own cannot be linearized (see the module docs).
    Illegal { ops: Vec<usize> },
    /// The search budget ran out: neither a pass nor a failure.
    Unknown { reason: String },
}

/// The verdict on one key, with what it cost.
#[derive(Clone, Debug)]
pub struct KeyVerdict {
    pub key: String,
    /// Ops that took part in the search (after dropping unknown reads and patching).
    pub ops: usize,
    /// Search steps of the main search.
    pub steps: u64,
    pub verdict: Verdict,
}

/// Checks every key of `history` (in key order). `truth` may be empty (no patching).
pub fn check_linearizable(history: &[Op], truth: &[Commit], cfg: &Config) -> Vec<KeyVerdict> {
    let mut by_key: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, op) in history.iter().enumerate() {
        by_key.entry(op.key.as_str()).or_default().push(i);
    }
    let truth_by_key = index_truth(truth);
    by_key
        .into_iter()
        .map(|(key, idxs)| check_indices(history, key, &idxs, truth_by_key.get(key), cfg))
        .collect()
}

/// Checks one key of `history`.
pub fn check_key(history: &[Op], key: &str, truth: &[Commit], cfg: &Config) -> KeyVerdict {
    let idxs: Vec<usize> = (0..history.len())
        .filter(|&i| history[i].key == key)
        .collect();
    let truth_by_key = index_truth(truth);
    check_indices(history, key, &idxs, truth_by_key.get(key), cfg)
}

/// The rv order rule over acknowledged writes of all keys: revisions are unique, and if `A`
/// returned before `B` was called then `A.rv < B.rv`. One anomaly per duplicated revision and
/// one per write `B` that violates the order (its witness `A` is the earlier-completed write
/// with the highest revision). `O(n log n)`.
pub fn check_rv_order(history: &[Op]) -> Vec<Anomaly> {
    struct W {
        idx: usize,
        call: u64,
        ret: u64,
        rv: u64,
    }
    let writes: Vec<W> = history
        .iter()
        .enumerate()
        .filter_map(|(idx, op)| {
            let rv = op.acknowledged_rv()?;
            Some(W {
                idx,
                call: op.call,
                ret: op.ret?,
                rv,
            })
        })
        .collect();
    let mut out = Vec::new();

    let mut by_rv: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for w in &writes {
        by_rv.entry(w.rv).or_default().push(w.idx);
    }
    for (rv, idxs) in &by_rv {
        if idxs.len() > 1 {
            let who: Vec<String> = idxs.iter().map(|&i| history[i].describe(i)).collect();
            out.push(
                Anomaly::new(
                    AnomalyKind::RvDuplicate,
                    format!(
                        "{} acknowledged writes got revision {rv}: {}",
                        idxs.len(),
                        who.join("; ")
                    ),
                )
                .with_ops(idxs.clone())
                .with_rv(*rv),
            );
        }
    }

    let mut by_call: Vec<&W> = writes.iter().collect();
    by_call.sort_by_key(|w| (w.call, w.idx));
    let mut by_ret: Vec<&W> = writes.iter().collect();
    by_ret.sort_by_key(|w| (w.ret, w.idx));
    let mut done = 0;
    let mut best: Option<&W> = None; // highest rv among writes returned before the current call
    for b in by_call {
        while done < by_ret.len() && by_ret[done].ret < b.call {
            let a = by_ret[done];
            if best.is_none_or(|x| a.rv > x.rv) {
                best = Some(a);
            }
            done += 1;
        }
        if let Some(a) = best {
            if b.rv < a.rv {
                out.push(
                    Anomaly::new(
                        AnomalyKind::RvOrder,
                        format!(
                            "write got revision {} although a write with revision {} completed before it started: {} completed before {}",
                            b.rv,
                            a.rv,
                            history[a.idx].describe(a.idx),
                            history[b.idx].describe(b.idx)
                        ),
                    )
                    .with_ops(vec![a.idx, b.idx])
                    .with_rv(b.rv),
                );
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Compilation of a key's history.

const INF: u64 = u64::MAX;
const ABSENT: u32 = u32::MAX;
const RV_UNKNOWN: u64 = u64::MAX;
const NIL: usize = usize::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum In {
    Get,
    Put(u32),
    PutIf(u32, u64),
    Create(u32),
    Delete,
    DeleteIf(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Out {
    Value(u32, u64),
    Written(u64),
    Conflict,
    NotFound,
    Exists,
    Deleted(u64),
    Unknown,
}

/// One op of a key, compiled. `definite` ops must be linearized; the others may be.
#[derive(Clone, Copy, Debug)]
struct KOp {
    idx: usize,
    call: u64,
    ret: u64,
    definite: bool,
    inp: In,
    out: Out,
}

/// Register state: `val` (interned, `ABSENT`), `rv` the current object's resourceVersion
/// (`RV_UNKNOWN` if not known, always so when absent), `lb` an inclusive lower bound on the
/// revision of the key's last write (equal to `rv` when that is known).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct St {
    val: u32,
    rv: u64,
    lb: u64,
}

impl St {
    fn absent(lb: u64) -> St {
        St {
            val: ABSENT,
            rv: RV_UNKNOWN,
            lb,
        }
    }
    fn present(val: u32, rv: u64) -> St {
        St { val, rv, lb: rv }
    }
    fn exists(self) -> bool {
        self.val != ABSENT
    }
    /// The current object's revision is, or may be, `e`.
    fn rv_may_be(self, e: u64) -> bool {
        if self.rv == RV_UNKNOWN {
            e >= self.lb
        } else {
            self.rv == e
        }
    }
}

/// The model: the state after `op` in `s`, if `op` can produce its output there. For an
/// unknown outcome this is the state if it took effect (`None` if it cannot, i.e. it would be a
/// no-op: then it is simply never linearized).
fn step(s: St, inp: In, out: Out) -> Option<St> {
    use In::*;
    use Out::*;
    match (inp, out) {
        (Get, Value(v, x)) => {
            if s.val != v {
                None
            } else if s.rv == x {
                Some(s)
            } else if s.rv == RV_UNKNOWN && x >= s.lb {
                Some(St::present(v, x))
            } else {
                None
            }
        }
        (Get | Put(_) | PutIf(..) | Delete | DeleteIf(_), NotFound) => (!s.exists()).then_some(s),
        (Put(v), Written(x)) => (s.exists() && x > s.lb).then(|| St::present(v, x)),
        (PutIf(v, e), Written(x)) => {
            (s.exists() && s.rv_may_be(e) && x > e).then(|| St::present(v, x))
        }
        // With an unknown current revision a conflict is always possible (imprecision: the
        // exclusion `rv != e` is not remembered).
        (PutIf(_, e) | DeleteIf(e), Conflict) => (s.exists() && s.rv != e).then_some(s),
        (Create(v), Written(x)) => (!s.exists() && x > s.lb).then(|| St::present(v, x)),
        (Create(_), Exists) => s.exists().then_some(s),
        (Delete, Deleted(x)) => (s.exists() && x > s.lb).then(|| St::absent(x)),
        (DeleteIf(e), Deleted(x)) => (s.exists() && s.rv_may_be(e) && x > e).then(|| St::absent(x)),
        (Put(v), Unknown) => s.exists().then(|| St {
            val: v,
            rv: RV_UNKNOWN,
            lb: s.lb + 1,
        }),
        (PutIf(v, e), Unknown) => (s.exists() && s.rv_may_be(e)).then(|| St {
            val: v,
            rv: RV_UNKNOWN,
            lb: e + 1,
        }),
        (Create(v), Unknown) => (!s.exists()).then(|| St {
            val: v,
            rv: RV_UNKNOWN,
            lb: s.lb + 1,
        }),
        (Delete, Unknown) => s.exists().then(|| St::absent(s.lb + 1)),
        (DeleteIf(e), Unknown) => (s.exists() && s.rv_may_be(e)).then(|| St::absent(e + 1)),
        _ => None,
    }
}

/// What the truth says about one key.
#[derive(Default)]
struct KeyTruth<'a> {
    /// value -> revisions at which it was written.
    puts: HashMap<&'a str, Vec<u64>>,
    /// revision -> is it a delete.
    rvs: HashMap<u64, bool>,
}

fn index_truth(truth: &[Commit]) -> HashMap<&str, KeyTruth<'_>> {
    let mut m: HashMap<&str, KeyTruth<'_>> = HashMap::new();
    for c in truth {
        let kt = m.entry(c.key.as_str()).or_default();
        kt.rvs.insert(c.rv, c.value.is_none());
        if let Some(v) = &c.value {
            kt.puts.entry(v.as_str()).or_default().push(c.rv);
        }
    }
    m
}

struct Compiled {
    ops: Vec<KOp>,
    init: St,
}

fn compile(
    history: &[Op],
    key: &str,
    idxs: &[usize],
    truth: Option<&KeyTruth<'_>>,
    cfg: &Config,
) -> Compiled {
    let mut names: HashMap<String, u32> = HashMap::new();
    let mut intern = |v: &str| -> u32 {
        if let Some(&n) = names.get(v) {
            return n;
        }
        let n = names.len() as u32;
        names.insert(v.to_string(), n);
        n
    };
    let init = match cfg.initial.get(key) {
        Some((v, rv)) => St::present(intern(v.as_str()), *rv),
        None => St::absent(0),
    };

    // Patching needs a truth consistent with every acknowledged write of the key, and values
    // written by exactly one op.
    let patch = cfg.use_truth
        && truth.is_some_and(|t| {
            idxs.iter()
                .all(|&i| match (&history[i].input, &history[i].output) {
                    (Input::Delete | Input::DeleteIf { .. }, Output::Deleted { rv }) => {
                        t.rvs.get(rv) == Some(&true)
                    }
                    (_, Output::Written { rv }) => t.rvs.get(rv) == Some(&false),
                    _ => true,
                })
        });
    let mut writers: HashMap<&str, usize> = HashMap::new();
    if patch {
        for &i in idxs {
            if let Some(v) = history[i].input.value() {
                *writers.entry(v).or_default() += 1;
            }
        }
    }

    let mut ops = Vec::with_capacity(idxs.len());
    for &i in idxs {
        let op = &history[i];
        let malformed = op.validate().is_err();
        let mut out = if malformed {
            Out::Unknown
        } else {
            match &op.output {
                Output::Value { value: Some(v), rv } => Out::Value(intern(v), *rv),
                Output::Value { value: None, .. } | Output::NotFound => Out::NotFound,
                Output::Written { rv } => Out::Written(*rv),
                Output::Conflict => Out::Conflict,
                Output::AlreadyExists => Out::Exists,
                Output::Deleted { rv } => Out::Deleted(*rv),
                Output::Unknown => Out::Unknown,
            }
        };
        let inp = match &op.input {
            Input::Get => In::Get,
            Input::Put { value } => In::Put(intern(value)),
            Input::PutIf { value, expect_rv } => In::PutIf(intern(value), *expect_rv),
            Input::Create { value } => In::Create(intern(value)),
            Input::Delete => In::Delete,
            Input::DeleteIf { expect_rv } => In::DeleteIf(*expect_rv),
        };
        let mut ret = op.ret.unwrap_or(INF);
        if out == Out::Unknown {
            if inp == In::Get {
                continue;
            }
            ret = INF;
            if patch {
                let t = truth.expect("patch implies truth");
                if let Some(v) = op.input.value() {
                    if writers.get(v) == Some(&1) {
                        match t.puts.get(v).map(Vec::as_slice) {
                            None => continue, // never took effect
                            Some([rv]) => out = Out::Written(*rv),
                            Some(_) => {}
                        }
                    }
                }
            }
        }
        let call = op.call.min(INF - 1);
        ops.push(KOp {
            idx: i,
            call,
            ret: ret.max(call),
            definite: out != Out::Unknown,
            inp,
            out,
        });
    }
    Compiled { ops, init }
}

fn check_indices(
    history: &[Op],
    key: &str,
    idxs: &[usize],
    truth: Option<&KeyTruth<'_>>,
    cfg: &Config,
) -> KeyVerdict {
    let c = compile(history, key, idxs, truth, cfg);
    // A definite op no state can explain is a window on its own: a conditional write whose
    // revision is not above its precondition, a read of a value no op of the key writes.
    let written: HashSet<u32> = c
        .ops
        .iter()
        .filter_map(|o| match o.inp {
            In::Put(v) | In::PutIf(v, _) | In::Create(v) => Some(v),
            _ => None,
        })
        .chain((c.init.val != ABSENT).then_some(c.init.val))
        .collect();
    let ghost = |o: &KOp| matches!(o.out, Out::Value(v, _) if !written.contains(&v));
    if let Some(o) = c
        .ops
        .iter()
        .find(|o| o.definite && (impossible(o) || ghost(o)))
    {
        return KeyVerdict {
            key: key.to_string(),
            ops: c.ops.len(),
            steps: 0,
            verdict: Verdict::Illegal { ops: vec![o.idx] },
        };
    }
    let (r, steps) = search(&c.ops, c.init, cfg.max_steps);
    let verdict = match r {
        Search::Ok => Verdict::Ok,
        Search::Exhausted => Verdict::Unknown {
            reason: format!(
                "key {key}: linearizability search gave up after {steps} steps ({} ops, {} with unknown outcome)",
                c.ops.len(),
                c.ops.iter().filter(|o| !o.definite).count()
            ),
        },
        Search::Illegal => Verdict::Illegal { ops: shrink(&c.ops, c.init, cfg) },
    };
    KeyVerdict {
        key: key.to_string(),
        ops: c.ops.len(),
        steps,
        verdict,
    }
}

// ---------------------------------------------------------------------------------------------
// The search.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Search {
    Ok,
    Illegal,
    Exhausted,
}

/// FxHash-style hasher for the memo (keys are a few machine words).
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// An op that no state can explain: a conditional write whose new revision is not above the
/// one it was conditioned on.
fn impossible(op: &KOp) -> bool {
    matches!((op.inp, op.out), (In::PutIf(_, e), Out::Written(x)) | (In::DeleteIf(e), Out::Deleted(x)) if x <= e)
}

/// The revision lower bound at which `op` can never be applied any more (`INF`: never so).
/// The bound only grows along a linearization, so death is permanent.
fn death(op: &KOp) -> u64 {
    match (op.inp, op.out) {
        (In::Get, Out::Value(_, x)) => x.saturating_add(1),
        (In::PutIf(_, e) | In::DeleteIf(e), Out::Written(_) | Out::Deleted(_) | Out::Unknown) => {
            e.saturating_add(1)
        }
        (_, Out::Written(x) | Out::Deleted(x)) => x,
        _ => INF,
    }
}

/// Just-in-time linearization search; returns the result and the steps taken.
///
/// Besides porcupine's search, every op has a death threshold ([`death`]): when a step raises
/// the key's revision bound past the threshold of a pending op, a definite op makes the step
/// fail at once (it could never be linearized after it), and an optional one is lifted out as
/// "never happened" — so the memo sees one canonical set whatever optional ops were skipped.
fn search(ops: &[KOp], init: St, budget: u64) -> (Search, u64) {
    let mut remaining = ops.iter().filter(|o| o.definite).count();
    if remaining == 0 {
        return (Search::Ok, 0);
    }
    let n = ops.len();
    let mut ev: Vec<(u64, u8, usize)> = Vec::with_capacity(2 * n);
    for (i, o) in ops.iter().enumerate() {
        ev.push((o.call, 0, i));
        ev.push((o.ret, 1, i));
    }
    ev.sort_unstable();
    // Node 0 is the head sentinel; entry p is node p + 1.
    let m = ev.len() + 1;
    let mut next = vec![NIL; m];
    let mut prev = vec![NIL; m];
    let mut node_op = vec![0usize; m];
    let mut is_call = vec![false; m];
    let mut partner = vec![NIL; m];
    let mut ret_node = vec![NIL; n];
    let mut call_node = vec![NIL; n];
    for (p, &(_, kind, i)) in ev.iter().enumerate() {
        let node = p + 1;
        node_op[node] = i;
        is_call[node] = kind == 0;
        prev[node] = p;
        next[p] = node;
        if kind == 1 {
            ret_node[i] = node;
        } else {
            call_node[i] = node;
        }
    }
    for node in 1..m {
        if is_call[node] {
            partner[node] = ret_node[node_op[node]];
        }
    }
    let zob: Vec<(u64, u64)> = (0..n as u64)
        .map(|i| (splitmix(2 * i + 0x5eed), splitmix(2 * i + 1 + 0x5eed)))
        .collect();
    let mut by_death: Vec<(u64, usize)> = ops
        .iter()
        .enumerate()
        .map(|(i, o)| (death(o), i))
        .filter(|d| d.0 != INF)
        .collect();
    by_death.sort_unstable();

    let lift = |c: usize, next: &mut [usize], prev: &mut [usize]| {
        let r = partner[c];
        next[prev[c]] = next[c];
        prev[next[c]] = prev[c];
        next[prev[r]] = next[r];
        if next[r] != NIL {
            prev[next[r]] = prev[r];
        }
    };
    let unlift = |c: usize, next: &mut [usize], prev: &mut [usize]| {
        let r = partner[c];
        next[prev[r]] = r;
        if next[r] != NIL {
            prev[next[r]] = r;
        }
        next[prev[c]] = c;
        prev[next[c]] = c;
    };

    struct Frame {
        entry: usize,
        state: St,
        /// Optional ops lifted as dead by this step (in lift order).
        killed: Vec<usize>,
    }
    let mut memo: HashSet<(u64, u64, St), BuildHasherDefault<Fx>> = HashSet::default();
    let mut stack: Vec<Frame> = Vec::new();
    let mut lin = vec![false; n];
    let mut state = init;
    let mut h = (0u64, 0u64);
    let mut entry = next[0];
    let mut steps = 0u64;
    let mut killed: Vec<usize> = Vec::new();
    loop {
        if remaining == 0 {
            return (Search::Ok, steps);
        }
        steps += 1;
        if steps > budget {
            return (Search::Exhausted, steps - 1);
        }
        if entry == NIL || !is_call[entry] {
            // A pending op's return is due: undo the last linearization step.
            let Some(f) = stack.pop() else {
                return (Search::Illegal, steps);
            };
            for &k in f.killed.iter().rev() {
                unlift(call_node[k], &mut next, &mut prev);
                lin[k] = false;
                h = (h.0 ^ zob[k].0, h.1 ^ zob[k].1);
            }
            let o = node_op[f.entry];
            unlift(f.entry, &mut next, &mut prev);
            lin[o] = false;
            h = (h.0 ^ zob[o].0, h.1 ^ zob[o].1);
            state = f.state;
            if ops[o].definite {
                remaining += 1;
            }
            entry = next[f.entry];
            continue;
        }
        let o = node_op[entry];
        let op = &ops[o];
        let Some(ns) = step(state, op.inp, op.out) else {
            entry = next[entry];
            continue;
        };
        let mut nh = (h.0 ^ zob[o].0, h.1 ^ zob[o].1);
        killed.clear();
        let mut doomed = false;
        if ns.lb > state.lb {
            let from = by_death.partition_point(|d| d.0 <= state.lb);
            let to = by_death.partition_point(|d| d.0 <= ns.lb);
            for &(_, k) in &by_death[from..to] {
                if k == o || lin[k] {
                    continue;
                }
                if ops[k].definite {
                    doomed = true;
                    break;
                }
                killed.push(k);
                nh = (nh.0 ^ zob[k].0, nh.1 ^ zob[k].1);
            }
        }
        if doomed || !memo.insert((nh.0, nh.1, ns)) {
            entry = next[entry];
            continue;
        }
        lift(entry, &mut next, &mut prev);
        lin[o] = true;
        for &k in &killed {
            lift(call_node[k], &mut next, &mut prev);
            lin[k] = true;
        }
        stack.push(Frame {
            entry,
            state,
            killed: std::mem::take(&mut killed),
        });
        state = ns;
        h = nh;
        if op.definite {
            remaining -= 1;
        }
        entry = next[0];
    }
}

// ---------------------------------------------------------------------------------------------
// Shrinking an illegal history to a window.

/// A weaker version of `op`: `None` if it can be dropped altogether.
fn relax(op: KOp) -> Option<KOp> {
    if !op.definite {
        return Some(op);
    }
    match op.out {
        Out::Written(_) | Out::Deleted(_) => Some(KOp {
            definite: false,
            ret: INF,
            ..op
        }),
        _ => None,
    }
}

struct Shrinker {
    init: St,
    per_check: u64,
    left: u64,
}

impl Shrinker {
    /// Confirmed illegal (an exhausted search or budget counts as not confirmed).
    fn illegal(&mut self, ops: &[KOp]) -> bool {
        if self.left == 0 {
            return false;
        }
        let (r, steps) = search(ops, self.init, self.per_check.min(self.left));
        self.left = self.left.saturating_sub(steps.max(1));
        r == Search::Illegal
    }
}

/// The ops called by `t`, those still running at `t` relaxed.
fn prefix(ops: &[KOp], t: u64) -> Vec<KOp> {
    ops.iter()
        .filter(|o| o.call <= t)
        .filter_map(|&o| {
            if o.definite && o.ret > t {
                relax(o)
            } else {
                Some(o)
            }
        })
        .collect()
}

fn shrink(ops: &[KOp], init: St, cfg: &Config) -> Vec<usize> {
    // Spread the budget over trials: one exhausting trial must not starve the others.
    let per_check = cfg.max_steps.min((cfg.shrink_steps / 16).max(10_000));
    let mut sh = Shrinker {
        init,
        per_check,
        left: cfg.shrink_steps,
    };

    // 1. Shortest illegal prefix: P(t) is monotone in t and P(INF) is the whole history.
    let mut cuts: Vec<u64> = ops.iter().flat_map(|o| [o.call, o.ret]).collect();
    cuts.push(INF);
    cuts.sort_unstable();
    cuts.dedup();
    let (mut lo, mut hi) = (0usize, cuts.len() - 1); // cuts[hi] is known illegal
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if sh.illegal(&prefix(ops, cuts[mid])) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let base = prefix(ops, cuts[hi]);

    // 2. Delta debugging: relax every definite op not needed for the illegality.
    let mut relaxed = vec![false; base.len()];
    let cands: Vec<usize> = (0..base.len()).filter(|&j| base[j].definite).collect();
    dd(&base, &cands, &mut relaxed, &mut sh);

    let mut window: Vec<usize> = (0..base.len())
        .filter(|&j| base[j].definite && !relaxed[j])
        .map(|j| base[j].idx)
        .collect();
    window.sort_unstable();
    window
}

fn dd(base: &[KOp], cands: &[usize], relaxed: &mut [bool], sh: &mut Shrinker) {
    if cands.is_empty() {
        return;
    }
    for &j in cands {
        relaxed[j] = true;
    }
    let trial: Vec<KOp> = base
        .iter()
        .zip(relaxed.iter())
        .filter_map(|(&o, &r)| if r { relax(o) } else { Some(o) })
        .collect();
    if sh.illegal(&trial) {
        return;
    }
    for &j in cands {
        relaxed[j] = false;
    }
    if cands.len() == 1 {
        return;
    }
    let (a, b) = cands.split_at(cands.len() / 2);
    dd(base, a, relaxed, sh);
    dd(base, b, relaxed, sh);
}

#[cfg(test)]
mod tests {
    use super::*;

    // -- builders -------------------------------------------------------------------------

    fn mk(client: u32, key: &str, call: u64, ret: Option<u64>, input: Input, output: Output) -> Op {
        Op {
            client,
            key: key.to_string(),
            call,
            ret,
            input,
            output,
        }
    }
    fn create(c: u32, call: u64, ret: u64, v: &str, rv: u64) -> Op {
        mk(
            c,
            "k",
            call,
            Some(ret),
            Input::Create { value: v.into() },
            Output::Written { rv },
        )
    }
    fn put(c: u32, call: u64, ret: u64, v: &str, rv: u64) -> Op {
        mk(
            c,
            "k",
            call,
            Some(ret),
            Input::Put { value: v.into() },
            Output::Written { rv },
        )
    }
    fn put_if(c: u32, call: u64, ret: u64, v: &str, expect: u64, out: Output) -> Op {
        mk(
            c,
            "k",
            call,
            Some(ret),
            Input::PutIf {
                value: v.into(),
                expect_rv: expect,
            },
            out,
        )
    }
    fn get(c: u32, call: u64, ret: u64, v: Option<&str>, rv: u64) -> Op {
        mk(
            c,
            "k",
            call,
            Some(ret),
            Input::Get,
            Output::Value {
                value: v.map(str::to_string),
                rv,
            },
        )
    }
    fn unknown(c: u32, call: u64, input: Input) -> Op {
        mk(c, "k", call, None, input, Output::Unknown)
    }
    fn verdict(h: &[Op]) -> Verdict {
        verdict_with(h, &[], &Config::default())
    }
    fn verdict_with(h: &[Op], truth: &[Commit], cfg: &Config) -> Verdict {
        let vs = check_linearizable(h, truth, cfg);
        let bad: Vec<_> = vs.iter().filter(|v| v.verdict != Verdict::Ok).collect();
        match bad.first() {
            None => Verdict::Ok,
            Some(v) => v.verdict.clone(),
        }
    }
    fn window(h: &[Op]) -> Vec<usize> {
        match verdict(h) {
            Verdict::Illegal { ops } => ops,
            v => panic!("expected illegal, got {v:?}"),
        }
    }

    // -- legal histories --------------------------------------------------------------------

    #[test]
    fn empty_history_is_ok() {
        assert_eq!(verdict(&[]), Verdict::Ok);
    }

    #[test]
    fn sequential_history_is_ok() {
        let h = vec![
            get(1, 0, 1, None, 0),
            create(1, 2, 3, "a", 5),
            get(2, 4, 5, Some("a"), 5),
            put(1, 6, 7, "b", 8),
            put_if(2, 8, 9, "c", 5, Output::Conflict),
            put_if(2, 10, 11, "c", 8, Output::Written { rv: 9 }),
            mk(
                1,
                "k",
                12,
                Some(13),
                Input::Create { value: "x".into() },
                Output::AlreadyExists,
            ),
            mk(
                1,
                "k",
                14,
                Some(15),
                Input::DeleteIf { expect_rv: 8 },
                Output::Conflict,
            ),
            mk(
                1,
                "k",
                16,
                Some(17),
                Input::DeleteIf { expect_rv: 9 },
                Output::Deleted { rv: 12 },
            ),
            mk(2, "k", 18, Some(19), Input::Get, Output::NotFound),
            mk(
                2,
                "k",
                20,
                Some(21),
                Input::Put { value: "y".into() },
                Output::NotFound,
            ),
            mk(2, "k", 22, Some(23), Input::Delete, Output::NotFound),
            create(1, 24, 25, "d", 13),
            mk(
                1,
                "k",
                26,
                Some(27),
                Input::Delete,
                Output::Deleted { rv: 20 },
            ),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
    }

    #[test]
    fn concurrent_overlapping_history_is_ok() {
        // The read overlaps both writes and sees the second; the other read sees the first,
        // which is possible because it overlaps the second write too.
        let h = vec![
            create(1, 0, 10, "a", 1),
            put(2, 5, 30, "b", 2),
            get(3, 6, 40, Some("b"), 2),
            get(4, 11, 20, Some("a"), 1),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
    }

    #[test]
    fn concurrent_writes_order_follows_their_revisions() {
        // Both writes overlap; rv says b came last, the final read agrees.
        let h = vec![
            create(1, 0, 1, "a", 1),
            put(1, 10, 20, "b", 4),
            put(2, 11, 19, "c", 3),
            get(3, 21, 22, Some("b"), 4),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
        // ... and a final read of c (rv 3) contradicts it: c cannot come after b (rv 4).
        let mut bad = h.clone();
        bad[3] = get(3, 21, 22, Some("c"), 3);
        assert_eq!(window(&bad), vec![1, 3]);
    }

    #[test]
    fn unknown_write_that_happened_is_ok() {
        let h = vec![
            create(1, 0, 1, "a", 1),
            unknown(2, 2, Input::Put { value: "b".into() }),
            get(3, 100, 101, Some("b"), 7),
            put_if(3, 102, 103, "c", 7, Output::Written { rv: 9 }),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
    }

    #[test]
    fn unknown_write_that_did_not_happen_is_ok() {
        let h = vec![
            create(1, 0, 1, "a", 1),
            unknown(2, 2, Input::Put { value: "b".into() }),
            get(3, 100, 101, Some("a"), 1),
            unknown(2, 102, Input::Delete),
            get(3, 200, 201, Some("a"), 1),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
    }

    #[test]
    fn unknown_write_can_take_effect_after_a_later_timeout() {
        // The 5xx answer came at 3, yet the write took effect later (seen at 50).
        let mut late = unknown(2, 2, Input::Put { value: "b".into() });
        late.ret = Some(3);
        let h = vec![
            create(1, 0, 1, "a", 1),
            late,
            get(3, 10, 11, Some("a"), 1),
            get(3, 50, 51, Some("b"), 5),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
    }

    #[test]
    fn unknown_writes_need_free_revisions() {
        // Two unknown puts both seen (values b then c) between rv 1 and rv 3: needs rv 2 and 3
        // for b and c — but c was read at rv 3 and the next known write is 3: impossible.
        let base = vec![
            create(1, 0, 1, "a", 1),
            unknown(2, 2, Input::Put { value: "b".into() }),
            unknown(3, 2, Input::Put { value: "c".into() }),
            get(4, 10, 11, Some("b"), 2),
            get(4, 12, 13, Some("c"), 3),
        ];
        assert_eq!(verdict(&base), Verdict::Ok);
        let mut h = base.clone();
        h.push(put(1, 20, 21, "d", 3));
        assert!(matches!(verdict(&h), Verdict::Illegal { .. }));
        h[5] = put(1, 20, 21, "d", 4);
        assert_eq!(verdict(&h), Verdict::Ok);
    }

    #[test]
    fn touching_intervals_are_concurrent() {
        // The write returns at 10 and the read is called at 10: concurrent, either order.
        let h = vec![
            create(1, 0, 1, "a", 1),
            put(1, 5, 10, "b", 2),
            get(2, 10, 12, Some("a"), 1),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
        // Called at 11: strictly after, the stale read is illegal.
        let h = vec![
            create(1, 0, 1, "a", 1),
            put(1, 5, 10, "b", 2),
            get(2, 11, 12, Some("a"), 1),
        ];
        assert_eq!(window(&h), vec![1, 2]);
    }

    #[test]
    fn unknown_deletes_and_creates() {
        let del = |c, call, ret, out| mk(c, "k", call, Some(ret), Input::Delete, out);
        // An unknown delete explains a later absence; an unknown re-create a later value.
        let h = vec![
            create(1, 0, 1, "a", 1),
            unknown(2, 2, Input::Delete),
            mk(3, "k", 10, Some(11), Input::Get, Output::NotFound),
            unknown(2, 12, Input::Create { value: "b".into() }),
            get(3, 20, 21, Some("b"), 9),
            del(1, 22, 23, Output::Deleted { rv: 10 }),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
        // A conditional delete on a revision the object never had cannot: the create and the
        // 404 are the witness.
        let h = vec![
            create(1, 0, 1, "a", 1),
            unknown(2, 2, Input::DeleteIf { expect_rv: 5 }),
            mk(3, "k", 10, Some(11), Input::Get, Output::NotFound),
        ];
        assert_eq!(window(&h), vec![0, 2]);
    }

    #[test]
    fn unknown_conditional_write_respects_its_precondition() {
        let h = vec![
            create(1, 0, 1, "a", 1),
            unknown(
                2,
                2,
                Input::PutIf {
                    value: "b".into(),
                    expect_rv: 9,
                },
            ),
            get(3, 10, 11, Some("b"), 12),
        ];
        // The precondition rv 9 never held, so b can never appear.
        assert_eq!(window(&h), vec![2]);
    }

    #[test]
    fn initial_state_from_config() {
        let h = vec![get(1, 0, 1, Some("a"), 3)];
        let mut cfg = Config::default();
        assert!(matches!(
            verdict_with(&h, &[], &cfg),
            Verdict::Illegal { .. }
        ));
        cfg.initial.insert("k".into(), ("a".into(), 3));
        assert_eq!(verdict_with(&h, &[], &cfg), Verdict::Ok);
    }

    #[test]
    fn keys_are_independent() {
        let mut h = vec![create(1, 0, 10, "a", 2), get(2, 11, 12, Some("a"), 2)];
        h.push(mk(
            3,
            "other",
            0,
            Some(1),
            Input::Create { value: "z".into() },
            Output::Written { rv: 1 },
        ));
        h.push(mk(
            3,
            "other",
            2,
            Some(3),
            Input::Get,
            Output::Value {
                value: Some("z".into()),
                rv: 1,
            },
        ));
        let vs = check_linearizable(&h, &[], &Config::default());
        assert_eq!(vs.len(), 2);
        assert_eq!(vs[0].key, "k");
        assert_eq!(vs[1].key, "other");
        assert!(vs.iter().all(|v| v.verdict == Verdict::Ok));
        assert_eq!(check_key(&h, "other", &[], &Config::default()).ops, 2);
    }

    // -- illegal histories ------------------------------------------------------------------

    #[test]
    fn stale_read_after_acknowledged_write() {
        let h = vec![
            create(1, 0, 1, "a", 1),
            put(1, 2, 3, "b", 2),
            get(2, 4, 5, Some("a"), 1), // b was acknowledged before this read started
        ];
        assert_eq!(window(&h), vec![1, 2]);
    }

    #[test]
    fn lost_write() {
        // An acknowledged write vanishes: later reads see the old value.
        let h = vec![
            create(1, 0, 1, "a", 1),
            get(2, 2, 3, Some("a"), 1),
            put(1, 4, 5, "b", 2),
            get(2, 6, 7, Some("a"), 1),
            get(2, 8, 9, Some("a"), 1),
        ];
        let w = window(&h);
        assert!(w.contains(&2), "{w:?}");
        assert!(w.len() <= 2, "{w:?}");
    }

    #[test]
    fn two_conflicting_put_ifs_both_succeed() {
        let h = vec![
            create(1, 0, 1, "a", 1),
            put_if(2, 2, 10, "b", 1, Output::Written { rv: 2 }),
            put_if(3, 2, 10, "c", 1, Output::Written { rv: 3 }),
        ];
        // The two writes alone: at most one of them can see rv 1.
        assert_eq!(window(&h), vec![1, 2]);
    }

    #[test]
    fn read_of_a_value_never_written() {
        let h = vec![create(1, 0, 1, "a", 1), get(2, 2, 3, Some("ghost"), 1)];
        assert_eq!(window(&h), vec![1]);
    }

    #[test]
    fn read_with_wrong_revision() {
        // Whether or not the create took effect, a@2 was never the state: the read alone.
        let h = vec![create(1, 0, 1, "a", 1), get(2, 2, 3, Some("a"), 2)];
        assert_eq!(window(&h), vec![1]);
    }

    #[test]
    fn read_of_absent_after_create() {
        let h = vec![
            create(1, 0, 1, "a", 1),
            mk(2, "k", 2, Some(3), Input::Get, Output::NotFound),
        ];
        assert_eq!(window(&h), vec![0, 1]);
    }

    #[test]
    fn window_is_small_in_a_long_history() {
        let mut h = vec![create(1, 0, 1, "v0", 1)];
        let mut t = 2;
        for i in 1..200u64 {
            h.push(put(1, t, t + 1, &format!("v{i}"), i + 1));
            h.push(get(2, t + 2, t + 3, Some(&format!("v{i}")), i + 1));
            t += 4;
        }
        let stale = h.len();
        h.push(get(2, 150, 151, Some("v3"), 4)); // v3 was overwritten long before 150
        for i in 200..260u64 {
            h.push(put(1, t, t + 1, &format!("v{i}"), i + 1));
            t += 2;
        }
        let w = window(&h);
        assert!(w.contains(&stale), "{w:?}");
        assert!(w.len() <= 2, "{w:?}");
    }

    #[test]
    fn malformed_ops_are_treated_as_unknown() {
        // A Get answering Written is malformed: dropped, not a failure.
        let h = vec![
            create(1, 0, 1, "a", 1),
            mk(2, "k", 2, Some(3), Input::Get, Output::Written { rv: 4 }),
        ];
        assert_eq!(verdict(&h), Verdict::Ok);
    }

    // -- ground truth -----------------------------------------------------------------------

    #[test]
    fn truth_resolves_unknown_writes() {
        // An unknown put of b which never committed cannot explain a read of b ...
        let h = vec![
            create(1, 0, 1, "a", 1),
            unknown(2, 2, Input::Put { value: "b".into() }),
            get(3, 10, 11, Some("b"), 2),
        ];
        assert_eq!(verdict(&h), Verdict::Ok); // without truth: it may have happened
        let truth = vec![Commit::put("k", 1, "a")];
        assert_eq!(window_with(&h, &truth), vec![2]);
        // ... and one that committed is pinned to its revision.
        let truth = vec![Commit::put("k", 1, "a"), Commit::put("k", 5, "b")];
        assert!(matches!(
            verdict_with(&h, &truth, &Config::default()),
            Verdict::Illegal { .. }
        ));
        let mut ok = h.clone();
        ok[2] = get(3, 10, 11, Some("b"), 5);
        assert_eq!(verdict_with(&ok, &truth, &Config::default()), Verdict::Ok);
        // A committed unknown write must have happened: a later read of a contradicts it.
        ok.push(get(3, 20, 21, Some("a"), 1));
        assert!(matches!(
            verdict_with(&ok, &truth, &Config::default()),
            Verdict::Illegal { .. }
        ));
    }

    #[test]
    fn inconsistent_truth_is_not_used() {
        // The truth lacks the acknowledged create: patching is off for the key.
        let h = vec![
            create(1, 0, 1, "a", 1),
            unknown(2, 2, Input::Put { value: "b".into() }),
            get(3, 10, 11, Some("b"), 2),
        ];
        let truth = vec![Commit::put("k", 7, "zzz")];
        assert_eq!(verdict_with(&h, &truth, &Config::default()), Verdict::Ok);
    }

    fn window_with(h: &[Op], truth: &[Commit]) -> Vec<usize> {
        match verdict_with(h, truth, &Config::default()) {
            Verdict::Illegal { ops } => ops,
            v => panic!("expected illegal, got {v:?}"),
        }
    }

    // -- budget -----------------------------------------------------------------------------

    #[test]
    fn exhausted_budget_is_unknown_not_ok() {
        // 24 concurrent unknown puts and then a create succeeding although nothing can have
        // deleted the object: proving this illegal means trying every subset of the puts.
        let mut h = vec![create(1, 0, 1, "a", 1)];
        for i in 0..24 {
            h.push(unknown(
                10 + i,
                2,
                Input::Put {
                    value: format!("u{i}"),
                },
            ));
        }
        h.push(create(2, 100, 101, "z", 1000));
        let cfg = Config {
            max_steps: 20_000,
            ..Config::default()
        };
        match verdict_with(&h, &[], &cfg) {
            Verdict::Unknown { reason } => assert!(reason.contains("gave up"), "{reason}"),
            v => panic!("expected unknown, got {v:?}"),
        }
        let vs = check_linearizable(&h, &[], &cfg);
        assert_eq!(vs[0].steps, 20_000);
    }

    // -- rv order ---------------------------------------------------------------------------

    #[test]
    fn rv_order_accepts_monotonic_revisions() {
        let h = vec![
            create(1, 0, 10, "a", 3),
            mk(
                2,
                "x",
                5,
                Some(8),
                Input::Create { value: "b".into() },
                Output::Written { rv: 2 },
            ), // concurrent: any order
            put(1, 11, 12, "c", 4),
            mk(
                2,
                "x",
                13,
                Some(14),
                Input::Delete,
                Output::Deleted { rv: 5 },
            ),
        ];
        assert!(check_rv_order(&h).is_empty());
    }

    #[test]
    fn rv_order_violation_across_keys() {
        let h = vec![
            create(1, 0, 1, "a", 10),
            mk(
                2,
                "x",
                2,
                Some(3),
                Input::Create { value: "b".into() },
                Output::Written { rv: 7 },
            ),
            mk(
                2,
                "y",
                4,
                None,
                Input::Create { value: "c".into() },
                Output::Written { rv: 3 },
            ), // not acknowledged
        ];
        let a = check_rv_order(&h);
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(a[0].kind, AnomalyKind::RvOrder);
        assert_eq!(a[0].ops, vec![0, 1]);
        assert_eq!(a[0].rv, Some(7));
    }

    #[test]
    fn rv_duplicate_across_keys() {
        let h = vec![
            create(1, 0, 1, "a", 4),
            mk(
                2,
                "x",
                0,
                Some(1),
                Input::Create { value: "b".into() },
                Output::Written { rv: 4 },
            ),
        ];
        let a = check_rv_order(&h);
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(a[0].kind, AnomalyKind::RvDuplicate);
        assert_eq!(a[0].ops, vec![0, 1]);
    }

    // -- randomized -------------------------------------------------------------------------

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(1);
            splitmix(self.0)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn chance(&mut self, pct: u64) -> bool {
            self.below(100) < pct
        }
    }

    /// A random sequential execution over a few keys (shared global revision), each op
    /// stretched into a random interval around its linearization point; some ops lose their
    /// answer (taken effect or not). Returns the history and, per op, whether it took effect.
    fn random_history(rng: &mut Rng, n: usize, keys: usize) -> (Vec<Op>, Vec<Commit>) {
        let mut state: Vec<Option<(String, u64)>> = vec![None; keys];
        let mut rev = 0u64;
        let mut h = Vec::new();
        let mut truth = Vec::new();
        let spread = 1 + rng.below(60);
        for i in 0..n {
            let k = rng.below(keys as u64) as usize;
            let key = format!("k{k}");
            let point = 10 * i as u64 + 100;
            let call = point - rng.below(spread.min(100));
            let ret = point + rng.below(spread);
            let val = format!("v{i}");
            let cur = state[k].clone();
            let stale = cur
                .as_ref()
                .map_or(0, |c| c.1.saturating_sub(1 + rng.below(3)));
            let (input, output) = match (rng.below(6), &cur) {
                (0, _) => (
                    Input::Get,
                    Output::Value {
                        value: cur.as_ref().map(|c| c.0.clone()),
                        rv: cur.as_ref().map_or(0, |c| c.1),
                    },
                ),
                (1, None) | (2, None) => {
                    rev += 1 + rng.below(2);
                    state[k] = Some((val.clone(), rev));
                    (
                        Input::Create { value: val.clone() },
                        Output::Written { rv: rev },
                    )
                }
                (1, Some(_)) => (Input::Create { value: val.clone() }, Output::AlreadyExists),
                (2, Some(_)) => {
                    rev += 1;
                    state[k] = Some((val.clone(), rev));
                    (
                        Input::Put { value: val.clone() },
                        Output::Written { rv: rev },
                    )
                }
                (3, Some((_, rv))) => {
                    let expect = if rng.chance(70) { *rv } else { stale };
                    if expect == *rv {
                        rev += 1;
                        state[k] = Some((val.clone(), rev));
                        (
                            Input::PutIf {
                                value: val.clone(),
                                expect_rv: expect,
                            },
                            Output::Written { rv: rev },
                        )
                    } else {
                        (
                            Input::PutIf {
                                value: val.clone(),
                                expect_rv: expect,
                            },
                            Output::Conflict,
                        )
                    }
                }
                (4, Some((_, rv))) => {
                    let expect = if rng.chance(70) { *rv } else { stale };
                    if expect == *rv && rng.chance(50) {
                        rev += 1;
                        state[k] = None;
                        (
                            Input::DeleteIf { expect_rv: expect },
                            Output::Deleted { rv: rev },
                        )
                    } else if expect == *rv {
                        (
                            Input::Get,
                            Output::Value {
                                value: cur.as_ref().map(|c| c.0.clone()),
                                rv: *rv,
                            },
                        )
                    } else {
                        (Input::DeleteIf { expect_rv: expect }, Output::Conflict)
                    }
                }
                (5, Some(_)) if rng.chance(40) => {
                    rev += 1;
                    state[k] = None;
                    (Input::Delete, Output::Deleted { rv: rev })
                }
                (_, None) => {
                    let input = match rng.below(3) {
                        0 => Input::Put { value: val.clone() },
                        1 => Input::Delete,
                        _ => Input::PutIf {
                            value: val.clone(),
                            expect_rv: 1 + rng.below(5),
                        },
                    };
                    (input, Output::NotFound)
                }
                (_, Some((v, rv))) => (
                    Input::Get,
                    Output::Value {
                        value: Some(v.clone()),
                        rv: *rv,
                    },
                ),
            };
            if let Output::Written { rv } = output {
                truth.push(Commit {
                    key: key.clone(),
                    rv,
                    value: input.value().map(str::to_string),
                });
            }
            if let Output::Deleted { rv } = output {
                truth.push(Commit::delete(&key, rv));
            }
            let mut op = Op {
                client: (i % 7) as u32,
                key: key.clone(),
                call,
                ret: Some(ret),
                input,
                output,
            };
            if op.input.is_write() && rng.chance(8) {
                // lost answer: it took effect (or was a no-op), we just do not know
                op.output = Output::Unknown;
                op.ret = if rng.chance(50) { None } else { Some(ret) };
            }
            h.push(op);
            if rng.chance(4) {
                // a write that never took effect, with a lost answer
                h.push(Op {
                    client: 99,
                    key: key.clone(),
                    call: call + 1,
                    ret: None,
                    input: Input::Put {
                        value: format!("never{i}"),
                    },
                    output: Output::Unknown,
                });
            }
        }
        (h, truth)
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Corruption {
        Ghost,
        Stale,
        DuplicateRv,
    }

    /// One corruption that makes any history illegal; returns the op corrupted and how.
    fn corrupt(rng: &mut Rng, h: &mut [Op]) -> Option<(usize, Corruption)> {
        let reads: Vec<usize> = (0..h.len())
            .filter(|&i| {
                matches!(h[i].output, Output::Value { value: Some(_), .. }) && h[i].ret.is_some()
            })
            .collect();
        let writes: Vec<usize> = (0..h.len())
            .filter(|&i| h[i].acknowledged_rv().is_some())
            .collect();
        match rng.below(3) {
            0 if !reads.is_empty() => {
                // a read of a value never written
                let i = reads[rng.below(reads.len() as u64) as usize];
                if let Output::Value { value, .. } = &mut h[i].output {
                    *value = Some("ghost".into());
                }
                Some((i, Corruption::Ghost))
            }
            1 if !reads.is_empty() => {
                // a stale read: return the value of a write overwritten by a write completed
                // before the read started
                for _ in 0..50 {
                    let r = reads[rng.below(reads.len() as u64) as usize];
                    let older: Vec<usize> = writes
                        .iter()
                        .copied()
                        .filter(|&w| h[w].key == h[r].key && h[w].input.value().is_some())
                        .filter(|&w| {
                            let a = h[w].acknowledged_rv().unwrap();
                            writes.iter().any(|&b| {
                                h[b].key == h[r].key
                                    && h[b].acknowledged_rv().unwrap() > a
                                    && h[b].ret.unwrap() < h[r].call
                            })
                        })
                        .collect();
                    if let Some(&w) = older.first() {
                        let value = h[w].input.value().map(str::to_string);
                        let rv = h[w].acknowledged_rv().unwrap();
                        h[r].output = Output::Value { value, rv };
                        return Some((r, Corruption::Stale));
                    }
                }
                None
            }
            _ => {
                // two acknowledged writes of one key with the same revision
                for _ in 0..50 {
                    let a = writes[rng.below(writes.len().max(1) as u64) as usize];
                    if let Some(&b) = writes.iter().find(|&&b| b != a && h[b].key == h[a].key) {
                        let rv = h[b].acknowledged_rv().unwrap();
                        h[a].output = match h[a].output {
                            Output::Deleted { .. } => Output::Deleted { rv },
                            _ => Output::Written { rv },
                        };
                        return Some((a, Corruption::DuplicateRv));
                    }
                }
                None
            }
        }
    }

    #[test]
    fn randomized_linearizable_histories_pass_and_corrupted_ones_fail() {
        let mut rng = Rng(42);
        let mut corrupted = 0;
        let mut windows = 0;
        let mut big = Vec::new();
        for round in 0..120 {
            let n = 20 + rng.below(120) as usize;
            let keys = 1 + rng.below(3) as usize;
            let (h, truth) = random_history(&mut rng, n, keys);
            for (i, op) in h.iter().enumerate() {
                assert_eq!(op.validate(), Ok(()), "round {round} op {i}");
            }
            let cfg = Config::default();
            let vs = check_linearizable(&h, &[], &cfg);
            for v in &vs {
                assert_eq!(
                    v.verdict,
                    Verdict::Ok,
                    "round {round} key {}: {:#?}",
                    v.key,
                    h
                );
            }
            let vs = check_linearizable(&h, &truth, &cfg);
            for v in &vs {
                assert_eq!(
                    v.verdict,
                    Verdict::Ok,
                    "round {round} key {} (with truth)",
                    v.key
                );
            }
            assert!(check_rv_order(&h).is_empty(), "round {round}");

            let mut bad = h.clone();
            let Some((at, how)) = corrupt(&mut rng, &mut bad) else {
                continue;
            };
            corrupted += 1;
            let key = bad[at].key.clone();
            let v = check_key(&bad, &key, &[], &cfg);
            match &v.verdict {
                Verdict::Illegal { ops } => {
                    let ctx = || {
                        let lines: Vec<String> = ops.iter().map(|&i| bad[i].describe(i)).collect();
                        format!(
                            "round {round}: {how:?} of {}; window:\n{}",
                            bad[at].describe(at),
                            lines.join("\n")
                        )
                    };
                    assert!(ops.iter().all(|&i| bad[i].key == key), "{}", ctx());
                    // Each corruption is explained by at most two ops: a ghost read alone, a
                    // stale read with the newer write it missed; a duplicated revision by the
                    // twins, or — when it made a conditional write impossible — by what that
                    // write alone could have explained.
                    if ops.len() > 2 {
                        big.push(ctx());
                    }
                    match how {
                        Corruption::Ghost => assert_eq!(ops, &vec![at], "{}", ctx()),
                        Corruption::Stale => assert!(ops.contains(&at), "{}", ctx()),
                        Corruption::DuplicateRv => {}
                    }
                    windows += ops.len();
                }
                other => panic!("round {round}: corruption of op {at} not detected: {other:?}"),
            }
        }
        assert!(corrupted > 80, "{corrupted}");
        assert!(
            big.is_empty(),
            "{} large windows:\n{}",
            big.len(),
            big.join("\n\n")
        );
        eprintln!(
            "{corrupted} corruptions detected, mean window {:.2} ops",
            windows as f64 / corrupted as f64
        );
    }

    #[test]
    fn large_history_is_checked_within_budget() {
        // ~4000 ops on 4 keys, up to ~12 concurrent ops, a few percent unknown outcomes.
        let mut rng = Rng(7);
        let (h, truth) = random_history(&mut rng, 4000, 4);
        let t0 = std::time::Instant::now();
        let vs = check_linearizable(&h, &[], &Config::default());
        let plain: u64 = vs.iter().map(|v| v.steps).sum();
        assert!(
            vs.iter().all(|v| v.verdict == Verdict::Ok),
            "{:?}",
            vs.iter().map(|v| &v.verdict).collect::<Vec<_>>()
        );
        let t1 = std::time::Instant::now();
        let vs = check_linearizable(&h, &truth, &Config::default());
        let patched: u64 = vs.iter().map(|v| v.steps).sum();
        assert!(vs.iter().all(|v| v.verdict == Verdict::Ok));
        eprintln!(
            "{} ops: {plain} steps in {:?} without truth, {patched} steps in {:?} with truth",
            h.len(),
            t1 - t0,
            t1.elapsed()
        );
        // Corrupt one read near the end: found, with a small window.
        let mut bad = h.clone();
        let at = (0..bad.len())
            .rev()
            .find(|&i| matches!(bad[i].output, Output::Value { value: Some(_), .. }))
            .unwrap();
        let key = bad[at].key.clone();
        let stale = (0..at)
            .find(|&i| {
                bad[i].key == key
                    && bad[i].acknowledged_rv().is_some()
                    && bad[i].input.value().is_some()
            })
            .unwrap();
        bad[at].output = Output::Value {
            value: bad[stale].input.value().map(str::to_string),
            rv: bad[stale].acknowledged_rv().unwrap(),
        };
        let t2 = std::time::Instant::now();
        let v = check_key(&bad, &key, &[], &Config::default());
        eprintln!(
            "stale read found in {:?} ({} search steps): {:?}",
            t2.elapsed(),
            v.steps,
            v.verdict
        );
        match v.verdict {
            Verdict::Illegal { ops } => assert!(ops.contains(&at) && ops.len() <= 2, "{ops:?}"),
            other => panic!("{other:?}"),
        }
    }
}
