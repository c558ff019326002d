//! Randomized, seeded and bounded: 4 writers × 200 operations on ConfigMaps while 20
//! watchers with random label / field selectors start at random moments, from random resume
//! revisions (some older than the watch cache's ring buffer, so they replay kv history) or
//! with the initial state. Every watcher's stream is checked against the write history: no
//! gap, no duplicate, no reorder, and the selector transition rules (ADDED / DELETED).
//! `RAFTER_SEED=<n>` replays one seed.

mod support;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::Server;

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const WRITERS: usize = 4;
const OPS: usize = 200;
const WATCHERS: usize = 20;
const NAMES_PER_WRITER: usize = 8;

/// A label selector on `color` (the only label the writers set) or a name selector.
#[derive(Clone, Debug)]
enum Sel {
    All,
    Eq(&'static str),
    Ne(&'static str),
    In(&'static [&'static str]),
    NotIn(&'static [&'static str]),
    Exists,
    Absent,
    Name(String),
}

impl Sel {
    fn query(&self) -> String {
        match self {
            Sel::All => String::new(),
            Sel::Eq(v) => format!("&labelSelector=color%3D{v}"),
            Sel::Ne(v) => format!("&labelSelector=color!%3D{v}"),
            Sel::In(vs) => format!("&labelSelector=color+in+({})", vs.join(",")),
            Sel::NotIn(vs) => format!("&labelSelector=color+notin+({})", vs.join(",")),
            Sel::Exists => "&labelSelector=color".into(),
            Sel::Absent => "&labelSelector=!color".into(),
            Sel::Name(n) => format!("&fieldSelector=metadata.name%3D{n}"),
        }
    }

    fn matches(&self, name: &str, color: Option<&str>) -> bool {
        match self {
            Sel::All => true,
            Sel::Eq(v) => color == Some(v),
            Sel::Ne(v) => color != Some(v),
            Sel::In(vs) => color.is_some_and(|c| vs.contains(&c)),
            Sel::NotIn(vs) => color.is_none_or(|c| !vs.contains(&c)),
            Sel::Exists => color.is_some(),
            Sel::Absent => color.is_none(),
            Sel::Name(n) => n == name,
        }
    }
}

const COLORS: [&str; 3] = ["red", "green", "blue"];

fn random_sel(rng: &mut StdRng) -> Sel {
    match rng.gen_range(0..8) {
        0 => Sel::All,
        1 => Sel::Eq(COLORS[rng.gen_range(0..3)]),
        2 => Sel::Ne(COLORS[rng.gen_range(0..3)]),
        3 => Sel::In(&["red", "green"]),
        4 => Sel::NotIn(&["blue"]),
        5 => Sel::Exists,
        6 => Sel::Absent,
        _ => Sel::Name(format!(
            "w{}-{}",
            rng.gen_range(0..WRITERS),
            rng.gen_range(0..NAMES_PER_WRITER)
        )),
    }
}

/// One observed event, reduced to what the checks need.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ev {
    kind: String,
    name: String,
    rv: i64,
    color: Option<String>,
    n: Option<String>,
}

fn reduce(e: &Value) -> Ev {
    let o = &e["object"];
    Ev {
        kind: e["type"].as_str().unwrap().to_string(),
        name: o["metadata"]["name"].as_str().unwrap_or("").to_string(),
        rv: o["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap(),
        color: o["metadata"]["labels"]["color"]
            .as_str()
            .map(str::to_string),
        n: o["data"]["n"].as_str().map(str::to_string),
    }
}

/// Reads a watch until a bookmark at or beyond `target` (once known) arrives.
async fn collect(
    mut resp: reqwest::Response,
    target: Arc<AtomicI64>,
    initial_end: bool,
) -> (Vec<Ev>, Option<i64>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    let mut snapshot = None;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        while let Some(i) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=i).collect();
            let e: Value = serde_json::from_slice(&line).unwrap();
            match e["type"].as_str().unwrap() {
                "BOOKMARK" => {
                    let rv: i64 = e["object"]["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap()
                        .parse()
                        .unwrap();
                    if e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
                    {
                        assert!(initial_end && snapshot.is_none(), "unexpected end bookmark");
                        snapshot = Some(rv);
                        continue;
                    }
                    let t = target.load(Ordering::SeqCst);
                    if t > 0 && rv >= t {
                        return (out, snapshot);
                    }
                }
                "ERROR" => panic!("watch error: {e}"),
                _ => out.push(reduce(&e)),
            }
        }
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(c))) => buf.extend_from_slice(&c),
            other => panic!("watch ended before the final bookmark: {other:?}"),
        }
    }
}

/// The expected events of a watcher with `sel` that starts with `state` (after `from`).
fn expected(
    truth: &[Ev],
    start: &BTreeMap<String, Ev>,
    from: i64,
    sel: &Sel,
    with_initial: bool,
) -> Vec<Ev> {
    let mut state = start.clone();
    let mut out = Vec::new();
    if with_initial {
        for (name, o) in &state {
            if sel.matches(name, o.color.as_deref()) {
                out.push(Ev {
                    kind: "ADDED".into(),
                    ..o.clone()
                });
            }
        }
    }
    for e in truth.iter().filter(|e| e.rv > from) {
        let prev = state.get(&e.name).cloned();
        let old = prev
            .as_ref()
            .is_some_and(|p| sel.matches(&p.name, p.color.as_deref()));
        let cur = e.kind != "DELETED" && sel.matches(&e.name, e.color.as_deref());
        match (old, cur) {
            (false, true) => out.push(Ev {
                kind: "ADDED".into(),
                ..e.clone()
            }),
            (true, true) => out.push(Ev {
                kind: "MODIFIED".into(),
                ..e.clone()
            }),
            (true, false) => {
                let p = prev.clone().unwrap();
                out.push(Ev {
                    kind: "DELETED".into(),
                    rv: e.rv,
                    ..p
                })
            }
            (false, false) => {}
        }
        if e.kind == "DELETED" {
            state.remove(&e.name);
        } else {
            state.insert(e.name.clone(), e.clone());
        }
    }
    out
}

/// The state after applying `truth` to `base` up to and including `at`.
fn state_at(base: &BTreeMap<String, Ev>, truth: &[Ev], at: i64) -> BTreeMap<String, Ev> {
    let mut s = base.clone();
    for e in truth.iter().filter(|e| e.rv <= at) {
        if e.kind == "DELETED" {
            s.remove(&e.name);
        } else {
            s.insert(e.name.clone(), e.clone());
        }
    }
    s
}

#[derive(Debug)]
enum Start {
    Initial,
    Resume(i64),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_writers_and_watchers_see_every_change_once_in_order() {
    let seed: u64 = std::env::var("RAFTER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    eprintln!("RAFTER_SEED={seed}");
    let server = Server::start_with(&[
        "--watch-bookmark-interval",
        "300ms",
        "--watch-cache-events",
        "40",
    ]);
    let c = server.client();
    let url = server.url.clone();
    // The ground truth: an unfiltered watch from before the first write.
    let l: Value = c
        .get(format!("{url}{CMS}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let r0: i64 = l["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let base: BTreeMap<String, Ev> = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let e = reduce(&json!({"type": "ADDED", "object": i}));
            (e.name.clone(), e)
        })
        .collect();
    let target = Arc::new(AtomicI64::new(0));
    let truth_resp = c
        .get(format!(
            "{url}{CMS}?watch=1&resourceVersion={r0}&allowWatchBookmarks=true"
        ))
        .send()
        .await
        .unwrap();
    let truth_task = tokio::spawn(collect(truth_resp, target.clone(), false));

    let revisions: Arc<Mutex<Vec<i64>>> = Arc::new(Mutex::new(vec![r0]));
    let mut master = StdRng::seed_from_u64(seed);
    // Writers: (revision, name, color, n) of every create/update; number of deletes.
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let mut rng = StdRng::seed_from_u64(master.gen());
        let c = c.clone();
        let url = url.clone();
        let revisions = revisions.clone();
        writers.push(tokio::spawn(async move {
            let mut exists = [false; NAMES_PER_WRITER];
            let mut writes = Vec::new();
            let mut deletes = 0usize;
            for op in 0..OPS {
                // Spread the writes so that watchers start while they go on.
                tokio::time::sleep(Duration::from_millis(rng.gen_range(0..3))).await;
                let k = rng.gen_range(0..NAMES_PER_WRITER);
                let name = format!("w{w}-{k}");
                let color = if rng.gen_bool(0.8) {
                    Some(COLORS[rng.gen_range(0..3)])
                } else {
                    None
                };
                let n = format!("{op}");
                let resp = if !exists[k] {
                    let mut meta = json!({"name": name});
                    if let Some(col) = color {
                        meta["labels"] = json!({"color": col});
                    }
                    c.post(format!("{url}{CMS}"))
                        .header("content-type", "application/json")
                        .body(
                            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"n": n}})
                                .to_string(),
                        )
                        .send()
                        .await
                        .unwrap()
                } else if rng.gen_bool(0.65) {
                    c.patch(format!("{url}{CMS}/{name}"))
                        .header("content-type", "application/merge-patch+json")
                        .body(
                            json!({"metadata": {"labels": {"color": color}}, "data": {"n": n}})
                                .to_string(),
                        )
                        .send()
                        .await
                        .unwrap()
                } else {
                    let r = c
                        .delete(format!("{url}{CMS}/{name}"))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(r.status(), StatusCode::OK);
                    exists[k] = false;
                    deletes += 1;
                    continue;
                };
                assert!(resp.status().is_success(), "{}", resp.status());
                let v: Value = resp.json().await.unwrap();
                let rv: i64 = v["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                exists[k] = true;
                revisions.lock().unwrap().push(rv);
                writes.push((rv, name, color.map(str::to_string), n));
            }
            (writes, deletes)
        }));
    }
    // Watchers start at random moments, with random selectors and start points.
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let sel = random_sel(&mut master);
        let delay = Duration::from_millis(master.gen_range(0..900));
        let initial = master.gen_bool(0.3);
        let pick: f64 = master.gen();
        let c = c.clone();
        let url = url.clone();
        let revisions = revisions.clone();
        let target = target.clone();
        watchers.push(tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let (start, query) = if initial {
                (Start::Initial, "allowWatchBookmarks=true".to_string())
            } else {
                let revs = revisions.lock().unwrap().clone();
                let rv = revs[((revs.len() as f64) * pick) as usize % revs.len()];
                (
                    Start::Resume(rv),
                    format!("resourceVersion={rv}&allowWatchBookmarks=true"),
                )
            };
            let resp = c
                .get(format!("{url}{CMS}?watch=1&{query}{}", sel.query()))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::OK);
            let (events, snapshot) = collect(resp, target, matches!(start, Start::Initial)).await;
            (sel, start, events, snapshot)
        }));
    }
    let mut writes = Vec::new();
    let mut deletes = 0;
    for w in writers {
        let (ws, d) = w.await.unwrap();
        writes.extend(ws);
        deletes += d;
    }
    let l: Value = c
        .get(format!("{url}{CMS}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let end: i64 = l["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    target.store(end, Ordering::SeqCst);

    // The ground truth is itself checked against the writers' records.
    let (truth, _) = truth_task.await.unwrap();
    let revs: Vec<i64> = truth.iter().map(|e| e.rv).collect();
    assert!(
        revs.windows(2).all(|w| w[0] < w[1]),
        "ground truth out of order"
    );
    writes.sort();
    let observed: Vec<(i64, String, Option<String>, String)> = truth
        .iter()
        .filter(|e| e.kind != "DELETED")
        .map(|e| {
            (
                e.rv,
                e.name.clone(),
                e.color.clone(),
                e.n.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(observed, writes, "creates/updates seen exactly once each");
    assert_eq!(
        truth.iter().filter(|e| e.kind == "DELETED").count(),
        deletes
    );
    let created: HashSet<(i64, String)> = truth
        .iter()
        .filter(|e| e.kind == "ADDED")
        .map(|e| (e.rv, e.name.clone()))
        .collect();
    assert!(!created.is_empty());
    // The final list equals the state the history leads to.
    let final_state = state_at(&base, &truth, end);
    let listed: Vec<String> = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, final_state.keys().cloned().collect::<Vec<_>>());

    let mut history_resumes = 0;
    for (i, w) in watchers.into_iter().enumerate() {
        let (sel, start, events, snapshot) = w.await.unwrap();
        if matches!(start, Start::Resume(rv) if rv < end - 60) {
            // Likely older than the 40-event ring buffer when it started: kv history replay.
            history_resumes += 1;
        }
        let want = match start {
            Start::Initial => {
                let at = snapshot.expect("initial-events-end bookmark");
                expected(&truth, &state_at(&base, &truth, at), at, &sel, true)
            }
            Start::Resume(rv) => expected(&truth, &state_at(&base, &truth, rv), rv, &sel, false),
        };
        assert_eq!(
            events, want,
            "watcher {i} ({sel:?}, {start:?}) seed {seed}: stream differs from history"
        );
    }
    eprintln!("{history_resumes} watchers resumed more than 60 revisions back");
}
