//! Kubernetes-shaped traffic with a recorded history: per-key registers on ConfigMaps of one
//! namespace (linearizable GET, unconditional PUT, PUT with a resourceVersion precondition,
//! create, DELETE, DELETE with a resourceVersion precondition), each operation's call and
//! return time and outcome (a timeout, a 5xx or a broken connection is an unknown outcome,
//! never a failure), and watchers pinned to one replica each that resume from their last
//! resourceVersion (bookmarks on) and relist on 410. Readers, one per replica and pinned to
//! it, issue the reads of [`crate::check::reads`]: `resourceVersion=0` lists and GETs,
//! NotOlderThan lists (at the highest revision any client has seen, or at the reader's own),
//! and paginated lists (`limit` 2–5, then every `continue` page; half of them send each
//! continue page to another replica, as a load balancer would). A slow pager per replica
//! lists page by page only, waiting for a few hundred revisions before each second page, so
//! that a compaction can expire its token.
//! Seeded: the same seed gives the same operation choices.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::check::history::{Input, Op, Output};
use crate::check::reads::{Item, Page, PagesEnd, Read, ReadInput, ReadOutput};
use crate::cluster::Incarnations;
use crate::net::Rng;

pub const NAMESPACE: &str = "chaos";

/// The history being recorded (shared by the clients).
#[derive(Clone)]
pub struct Recorder {
    start: Instant,
    ops: Arc<Mutex<Vec<Op>>>,
    reads: Arc<Mutex<Vec<Read>>>,
    /// The highest revision any client has seen (NotOlderThan reads ask for it).
    max_rv: Arc<AtomicU64>,
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder {
            start: Instant::now(),
            ops: Arc::default(),
            reads: Arc::default(),
            max_rv: Arc::default(),
        }
    }

    /// Notes a revision some answer carried.
    pub fn saw(&self, rv: u64) {
        self.max_rv.fetch_max(rv, Ordering::Relaxed);
    }

    pub fn max_rv(&self) -> u64 {
        self.max_rv.load(Ordering::Relaxed)
    }

    pub fn push_read(&self, r: Read) {
        self.reads.lock().unwrap_or_else(|e| e.into_inner()).push(r);
    }

    pub fn take_reads(&self) -> Vec<Read> {
        std::mem::take(&mut *self.reads.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    pub fn push(&self, op: Op) {
        self.ops.lock().unwrap_or_else(|e| e.into_inner()).push(op);
    }

    pub fn take(&self) -> Vec<Op> {
        std::mem::take(&mut *self.ops.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

fn rv_of(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn cm(key: &str, value: &str, rv: Option<u64>) -> Value {
    let mut meta = json!({"name": key, "namespace": NAMESPACE});
    if let Some(rv) = rv {
        meta["resourceVersion"] = json!(rv.to_string());
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"v": value}})
}

/// One client's operation against `url` (a replica's API proxy), recorded.
pub async fn one_op(
    http: &reqwest::Client,
    url: &str,
    rec: &Recorder,
    client: u32,
    key: &str,
    input: Input,
) -> Output {
    let item = format!("{url}/api/v1/namespaces/{NAMESPACE}/configmaps/{key}");
    let coll = format!("{url}/api/v1/namespaces/{NAMESPACE}/configmaps");
    let call = rec.now();
    let req = match &input {
        Input::Get => http.get(&item),
        Input::Put { value } => http.put(&item).json(&cm(key, value, None)),
        Input::PutIf { value, expect_rv } => {
            http.put(&item).json(&cm(key, value, Some(*expect_rv)))
        }
        Input::Create { value } => http.post(&coll).json(&cm(key, value, None)),
        Input::Delete => http.delete(&item),
        Input::DeleteIf { expect_rv } => http
            .delete(&item)
            .json(&json!({"kind": "DeleteOptions", "apiVersion": "v1",
                          "preconditions": {"resourceVersion": expect_rv.to_string()}})),
    };
    let resp = req.send().await;
    let (output, known) = match resp {
        Err(_) => (Output::Unknown, false),
        Ok(r) => {
            let code = r.status().as_u16();
            let body: Value = r.json().await.unwrap_or(Value::Null);
            let out = match (&input, code) {
                (Input::Get, 200) => Output::Value {
                    value: body["data"]["v"].as_str().map(str::to_string),
                    rv: rv_of(&body),
                },
                (Input::Put { .. } | Input::PutIf { .. }, 200) | (Input::Create { .. }, 201) => {
                    Output::Written { rv: rv_of(&body) }
                }
                // The deleted object carries its last resourceVersion, not the deletion's:
                // the deletion's revision is unknown here, so the outcome is recorded as
                // "may have happened" and the ground truth settles it.
                (Input::Delete | Input::DeleteIf { .. }, 200) => Output::Unknown,
                (_, 404) => Output::NotFound,
                (Input::Create { .. }, 409) => Output::AlreadyExists,
                (Input::PutIf { .. } | Input::DeleteIf { .. }, 409) => Output::Conflict,
                _ => Output::Unknown,
            };
            if let Output::Value { rv, .. } | Output::Written { rv } = out {
                rec.saw(rv);
            }
            let known = out != Output::Unknown;
            (out, known)
        }
    };
    rec.push(Op {
        client,
        key: key.to_string(),
        call,
        ret: known.then(|| rec.now()),
        input,
        output: output.clone(),
    });
    output
}

/// One client's loop until `until`: seeded choices of key, replica and operation.
#[allow(clippy::too_many_arguments)]
pub async fn client_loop(
    http: reqwest::Client,
    urls: Vec<String>,
    rec: Recorder,
    client: u32,
    keys: usize,
    seed: u64,
    until: Instant,
    pace: Duration,
) {
    let mut rng = Rng::derive(seed, 0xC11E, client as u64);
    let mut last_rv: std::collections::HashMap<String, u64> = Default::default();
    let mut n: u64 = 0;
    while Instant::now() < until {
        n += 1;
        let key = format!("k{}", rng.next_u64() % keys as u64);
        let url = &urls[(rng.next_u64() % urls.len() as u64) as usize];
        let value = format!("c{client}-{n}");
        let known_rv = last_rv.get(&key).copied();
        let input = match (rng.next_u64() % 100, known_rv) {
            (0..=34, _) => Input::Get,
            (35..=49, _) => Input::Put { value },
            (50..=69, Some(rv)) => Input::PutIf {
                value,
                expect_rv: rv,
            },
            (50..=69, None) | (70..=84, _) => Input::Create { value },
            (85..=92, Some(rv)) => Input::DeleteIf { expect_rv: rv },
            _ => Input::Delete,
        };
        match one_op(&http, url, &rec, client, &key, input).await {
            Output::Value { rv, .. } | Output::Written { rv } if rv > 0 => {
                last_rv.insert(key, rv);
            }
            Output::NotFound | Output::Deleted { .. } | Output::Unknown => {
                last_rv.remove(&key);
            }
            _ => {}
        }
        if !pace.is_zero() {
            tokio::time::sleep(pace).await;
        }
    }
}

fn item_of(v: &Value) -> Option<Item> {
    Some(Item {
        key: v["metadata"]["name"].as_str()?.to_string(),
        value: v["data"]["v"].as_str().map(str::to_string),
        rv: v["metadata"]["resourceVersion"].as_str()?.parse().ok()?,
    })
}

/// A list answer: (revision, items, continue token); `None` when it is not one.
async fn list_page(req: reqwest::RequestBuilder) -> Result<(u64, Vec<Item>, Option<String>), u16> {
    let r = req.send().await.map_err(|_| 0u16)?;
    let code = r.status().as_u16();
    if code != 200 {
        return Err(code);
    }
    let v: Value = r.json().await.map_err(|_| 0u16)?;
    let rv: u64 = v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or(0u16)?;
    let mut items = Vec::new();
    for it in v["items"].as_array().ok_or(0u16)? {
        items.push(item_of(it).ok_or(0u16)?);
    }
    let more = v["metadata"]["continue"]
        .as_str()
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok((rv, items, more))
}

/// Most pages one paginated list may take (far more than the keys need).
const MAX_PAGES: usize = 100;

/// How long a slow paginated list waits before its second page, at most, and for how many
/// revisions past its own.
const SLOW_PAGE_WAIT: Duration = Duration::from_secs(8);
const SLOW_PAGE_REVISIONS: u64 = 350;

/// One read against `url` (a replica's API proxy), not recorded; `rec` tells a slow
/// paginated list how far the revision has gone.
pub async fn read_once(
    http: &reqwest::Client,
    url: &str,
    others: &[String],
    input: &ReadInput,
    rec: &Recorder,
) -> ReadOutput {
    let coll_of = |u: &str| format!("{u}/api/v1/namespaces/{NAMESPACE}/configmaps");
    let coll = coll_of(url);
    let list = |q: Vec<(&'static str, String)>| http.get(&coll).query(&q);
    match input {
        ReadInput::ListAny => match list_page(list(vec![("resourceVersion", "0".into())])).await {
            Ok((rv, items, _)) => ReadOutput::List { rv, items },
            Err(_) => ReadOutput::Unknown,
        },
        ReadInput::ListNotOlderThan { min_rv } => {
            let q = vec![
                ("resourceVersion", min_rv.to_string()),
                ("resourceVersionMatch", "NotOlderThan".into()),
            ];
            match list_page(list(q)).await {
                Ok((rv, items, _)) => ReadOutput::List { rv, items },
                Err(_) => ReadOutput::Unknown,
            }
        }
        ReadInput::GetAny { key } => {
            let r = http
                .get(format!("{coll}/{key}"))
                .query(&[("resourceVersion", "0")])
                .send()
                .await;
            match r {
                Ok(r) if r.status().as_u16() == 404 => ReadOutput::NotFound,
                Ok(r) if r.status().is_success() => match r.json::<Value>().await {
                    Ok(v) if v["metadata"]["name"] == key.as_str() => match item_of(&v) {
                        Some(it) => ReadOutput::Object {
                            value: it.value,
                            rv: it.rv,
                        },
                        None => ReadOutput::Unknown,
                    },
                    _ => ReadOutput::Unknown,
                },
                _ => ReadOutput::Unknown,
            }
        }
        ReadInput::ListPaged { limit, slow, roam } => {
            let first = list(vec![("limit", limit.to_string())]);
            let (rv, items, mut token) = match list_page(first).await {
                Ok(p) => p,
                Err(_) => return ReadOutput::Unknown,
            };
            let mut pages = vec![Page {
                rv,
                items,
                more: token.is_some(),
            }];
            let mut end = PagesEnd::Complete;
            if *slow && token.is_some() {
                let deadline = Instant::now() + SLOW_PAGE_WAIT;
                while Instant::now() < deadline && rec.max_rv() < rv + SLOW_PAGE_REVISIONS {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            while let Some(t) = token.take() {
                if pages.len() >= MAX_PAGES {
                    end = PagesEnd::Unknown;
                    break;
                }
                let q = vec![("limit", limit.to_string()), ("continue", t)];
                let req = match others.get(pages.len() % others.len().max(1)) {
                    Some(o) if *roam => http.get(coll_of(o)).query(&q),
                    _ => list(q),
                };
                match list_page(req).await {
                    Ok((rv, items, more)) => {
                        pages.push(Page {
                            rv,
                            items,
                            more: more.is_some(),
                        });
                        token = more;
                    }
                    Err(410) => end = PagesEnd::Expired,
                    Err(_) => end = PagesEnd::Unknown,
                }
            }
            ReadOutput::Pages { pages, end }
        }
    }
}

/// One reader pinned to the replica behind `url` until `until`: seeded choices of read and
/// key, each read recorded with the replica's incarnation. A `slow_pager` does only slow
/// paginated lists.
#[allow(clippy::too_many_arguments)]
pub async fn reader_loop(
    http: reqwest::Client,
    url: String,
    others: Vec<String>,
    replica: u32,
    client: u32,
    rec: Recorder,
    incarnations: Incarnations,
    keys: usize,
    seed: u64,
    until: Instant,
    pace: Duration,
    slow_pager: bool,
) {
    let mut rng = Rng::derive(seed, 0x4EAD, client as u64);
    let mut own: u64 = 0;
    while Instant::now() < until {
        let input = match rng.next_u64() % 100 {
            _ if slow_pager => ReadInput::ListPaged {
                limit: 2 + (rng.next_u64() % 4) as usize,
                slow: true,
                roam: rng.chance(0.5),
            },
            0..=29 => ReadInput::ListAny,
            30..=54 => {
                let at = if rng.chance(0.5) { rec.max_rv() } else { own };
                ReadInput::ListNotOlderThan { min_rv: at.max(1) }
            }
            55..=79 => ReadInput::GetAny {
                key: format!("k{}", rng.next_u64() % keys as u64),
            },
            _ => ReadInput::ListPaged {
                limit: 2 + (rng.next_u64() % 4) as usize,
                slow: false,
                roam: rng.chance(0.5),
            },
        };
        let before = incarnations.get(replica);
        let call = rec.now();
        let output = read_once(&http, &url, &others, &input, &rec).await;
        let ret = (output != ReadOutput::Unknown).then(|| rec.now());
        let epoch = (incarnations.get(replica) == before).then_some(before);
        let seen = match &output {
            ReadOutput::List { rv, .. } | ReadOutput::Object { rv, .. } => Some(*rv),
            ReadOutput::Pages { pages, .. } => pages.first().map(|p| p.rv),
            _ => None,
        };
        if let Some(rv) = seen {
            rec.saw(rv);
            if !matches!(input, ReadInput::ListPaged { .. }) {
                own = own.max(rv);
            }
        }
        rec.push_read(Read {
            client,
            replica,
            epoch,
            call,
            ret,
            input,
            output,
        });
        if !pace.is_zero() {
            tokio::time::sleep(pace).await;
        }
    }
}

/// One event a watcher saw.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Seen {
    pub kind: String,
    pub key: String,
    pub rv: u64,
    pub value: Option<String>,
}

/// What one watcher saw: its start revision, events (bookmarks included) and the indices at
/// which it had to relist after a 410.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Watched {
    pub replica: u32,
    pub start_rv: u64,
    pub events: Vec<Seen>,
    pub relists: Vec<usize>,
    /// (index into events, rv resumed from) each time the stream was resumed.
    pub resumes: Vec<(usize, u64)>,
}

/// A watcher on one replica from `start_rv` until `until` (then until it has seen
/// `until_rv()` when set), resuming from its last revision and relisting on 410.
pub async fn watch_loop(
    http: reqwest::Client,
    urls: Vec<String>,
    replica: u32,
    start_rv: u64,
    until: Instant,
    done_rv: Arc<std::sync::atomic::AtomicU64>,
    hard_stop: Instant,
) -> Watched {
    use std::sync::atomic::Ordering;
    let mut w = Watched {
        replica,
        start_rv,
        ..Default::default()
    };
    let mut from = start_rv;
    // A watcher pinned to one replica has one URL; the ground-truth recorder has them all
    // and moves on to the next replica whenever its stream breaks.
    let mut turn = 0usize;
    loop {
        let url = urls[turn % urls.len()].clone();
        let target = done_rv.load(Ordering::SeqCst);
        if Instant::now() > hard_stop || (Instant::now() > until && target > 0 && from >= target) {
            return w;
        }
        if !w.events.is_empty() || from != start_rv {
            w.resumes.push((w.events.len(), from));
        }
        let q = format!(
            "{url}/api/v1/namespaces/{NAMESPACE}/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion={from}&timeoutSeconds=5"
        );
        let resp = match http.get(&q).timeout(Duration::from_secs(8)).send().await {
            Ok(r) if r.status().is_success() => r,
            Ok(r) if r.status().as_u16() == 410 => {
                from = relist(&http, &url, &mut w).await.unwrap_or(from);
                continue;
            }
            _ => {
                turn += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let mut resp = resp;
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let chunk = match tokio::time::timeout(Duration::from_secs(8), resp.chunk()).await {
                Ok(Ok(Some(c))) => c,
                Ok(Ok(None)) => break,
                _ => {
                    turn += 1;
                    break;
                }
            };
            buf.extend_from_slice(&chunk);
            while let Some(i) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=i).collect();
                let Ok(ev) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                let kind = ev["type"].as_str().unwrap_or("").to_string();
                let obj = &ev["object"];
                if kind == "ERROR" {
                    if obj["code"] == 410 {
                        from = relist(&http, &url, &mut w).await.unwrap_or(from);
                    }
                    break;
                }
                let rv = rv_of(obj);
                w.events.push(Seen {
                    kind: kind.clone(),
                    key: obj["metadata"]["name"].as_str().unwrap_or("").to_string(),
                    rv,
                    value: obj["data"]["v"].as_str().map(str::to_string),
                });
                if rv > from {
                    from = rv;
                }
            }
        }
    }
}

/// A relist after a 410: the list's objects are recorded as the new segment's initial
/// ADDED events closed by a bookmark at the list's revision (the shape of a watch with
/// initial events), and the watch continues from that revision.
async fn relist(http: &reqwest::Client, url: &str, w: &mut Watched) -> Option<u64> {
    let r = http
        .get(format!("{url}/api/v1/namespaces/{NAMESPACE}/configmaps"))
        .send()
        .await
        .ok()?;
    let v: Value = r.json().await.ok()?;
    let rv: u64 = v["metadata"]["resourceVersion"].as_str()?.parse().ok()?;
    w.relists.push(w.events.len());
    for item in v["items"].as_array().into_iter().flatten() {
        w.events.push(Seen {
            kind: "ADDED".into(),
            key: item["metadata"]["name"].as_str().unwrap_or("").to_string(),
            rv: rv_of(item),
            value: item["data"]["v"].as_str().map(str::to_string),
        });
    }
    w.events.push(Seen {
        kind: "BOOKMARK".into(),
        key: String::new(),
        rv,
        value: None,
    });
    Some(rv)
}
