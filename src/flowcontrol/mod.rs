//! API Priority and Fairness (kube's `WithPriorityAndFairness` filter and its config
//! controller; `--enable-priority-and-fairness`, on by default).
//!
//! Every request but the long-running non-watch ones (exec, attach, port-forward, proxy,
//! logs) is classified after authentication and impersonation: the FlowSchemas, lowest
//! `matchingPrecedence` first (then by name), pick a priority level; nothing matching falls to
//! `catch-all`. An `Exempt` level runs the request at once; a `Limited` level runs it in its
//! share of the server's seats (`--max-requests-inflight` plus
//! `--max-mutating-requests-inflight`), or queues it fairly ([`queueset`]), or refuses it with
//! a 429 whose `Retry-After` grows while refusals go on ([`RetryAfter`]). Every classified
//! response carries `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID`.
//!
//! Each replica digests the FlowSchema and PriorityLevelConfiguration objects it follows
//! from its watch cache into a [`Config`] (swapped whole; requests read it without locks).
//! Until they exist the mandatory objects are imagined, as kube does. A level's nominal
//! limit is its share of the server's seats by `nominalConcurrencyShares`; every ten seconds
//! the current limits move with the seat demand of the last period ([`allocation`]), lending
//! and borrowing within `lendablePercent` and `borrowingLimitPercent`. The leader keeps the
//! objects themselves ([`bootstrap`]: the mandatory and suggested configuration, the
//! `Dangling` conditions).

pub mod allocation;
pub mod bootstrap;
mod dump;
pub mod estimate;
pub mod matching;
pub mod queueset;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde_json::Value;

pub use matching::Digest;
use matching::Schema;
use queueset::{QueueSet, Queuing, Rejection, RequestFacts, Ticket, Work};

/// How often the current concurrency limits follow the demand (kube's
/// `borrowingAdjustmentPeriod`).
pub const BORROWING_PERIOD: Duration = Duration::from_secs(10);
/// The smoothing of seat demand between periods (half-life of five minutes).
const SMOOTHING: f64 = 0.977;
/// A level's largest request, as a part of its nominal limit.
const MAX_SEATS_PERCENT: f64 = 0.15;
/// The longest a request waits in a queue (kube: a quarter of the request timeout, at most
/// fifteen seconds).
pub const MAX_WAIT: Duration = Duration::from_secs(15);
/// The longest `Retry-After` a refusal suggests.
const MAX_RETRY_AFTER: i64 = 32;
/// The leader re-checks the configuration objects this often, changes or not.
const ENSURE_EVERY: Duration = Duration::from_secs(60);

/// A priority level, digested.
pub struct Level {
    pub name: String,
    pub uid: String,
    pub exempt: bool,
    pub queuing: Option<Queuing>,
    pub nominal_cl: usize,
    pub min_cl: usize,
    pub max_cl: usize,
    /// The widest request (0: the overall limit).
    pub max_seats: usize,
    pub set: Arc<QueueSet>,
}

/// The digested configuration: schemas in matching order, levels by name.
pub struct Config {
    schemas: Vec<Schema>,
    levels: BTreeMap<String, Arc<Level>>,
}

/// Where a request went.
#[derive(Clone, Debug)]
pub struct Classification {
    pub schema: String,
    pub schema_uid: String,
    pub level: String,
    pub level_uid: String,
}

/// A request allowed to run; dropping it ends the request for flow control.
pub struct Admitted {
    pub class: Classification,
    _ticket: Ticket,
    _executing: Gauge,
}

/// A refused request: answer 429 with this `Retry-After`.
pub struct Refused {
    pub class: Classification,
    pub retry_after: i64,
}

/// Decrements a gauge when dropped.
struct Gauge(metrics::Gauge);

impl Drop for Gauge {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// kube's dropped-requests tracker: the `Retry-After` of a level's refusals doubles (to 32)
/// while refusals in the last `Retry-After` seconds are at least three times it, and comes
/// down a second at a time once they are fewer than it.
#[derive(Default)]
struct RetryAfter {
    /// Refusals per second, oldest first.
    history: VecDeque<(i64, i64)>,
    retry_after: i64,
    updated: i64,
}

impl RetryAfter {
    fn record(&mut self, now: i64) -> i64 {
        if self.retry_after == 0 {
            self.retry_after = 1;
        }
        match self.history.back_mut() {
            Some((t, n)) if *t == now => *n += 1,
            _ => {
                self.update(now);
                self.history.push_back((now, 1));
                while self
                    .history
                    .front()
                    .is_some_and(|(t, _)| now - t > MAX_RETRY_AFTER)
                {
                    self.history.pop_front();
                }
            }
        }
        self.retry_after
    }

    fn update(&mut self, now: i64) {
        let ra = self.retry_after;
        let dropped: i64 = self
            .history
            .iter()
            .filter(|(t, _)| now - t <= ra && *t < now)
            .map(|(_, n)| n)
            .sum();
        if now - self.updated >= ra && dropped >= 3 * ra {
            self.retry_after = (ra * 2).min(MAX_RETRY_AFTER);
            self.updated = now;
        } else if dropped < ra && ra > 1 {
            self.retry_after = ra - 1;
        }
    }
}

/// The flow-control filter of one replica.
pub struct FlowControl {
    /// The seats of all limited levels together.
    server_cl: usize,
    config: ArcSwap<Config>,
    /// Queue sets by level name, kept across configurations.
    sets: Mutex<HashMap<String, Arc<QueueSet>>>,
    /// Smoothed seat demand by level name.
    smoothed: Mutex<HashMap<String, f64>>,
    retry_after: Mutex<HashMap<String, RetryAfter>>,
}

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

fn int_at(v: &Value, p: &str) -> Option<i64> {
    v.pointer(p).and_then(Value::as_i64)
}

/// A level's spec: (exempt, shares, lendable %, borrowing limit %, queuing); None when its
/// spec does not hold together (such objects are ignored, as kube ignores them).
fn level_spec(obj: &Value) -> Option<(bool, i64, i64, Option<i64>, Option<Queuing>)> {
    let name = str_at(obj, "/metadata/name");
    let spec = obj.get("spec")?;
    let t = str_at(spec, "/type");
    if (t == "Exempt") != (name == "exempt") {
        return None;
    }
    match t {
        "Exempt" => Some((
            true,
            int_at(spec, "/exempt/nominalConcurrencyShares").unwrap_or(0),
            int_at(spec, "/exempt/lendablePercent").unwrap_or(0),
            None,
            None,
        )),
        "Limited" => {
            let l = spec.get("limited")?;
            let queuing = match str_at(l, "/limitResponse/type") {
                "Queue" => Some(Queuing {
                    queues: int_at(l, "/limitResponse/queuing/queues")
                        .unwrap_or(64)
                        .max(1) as usize,
                    hand_size: int_at(l, "/limitResponse/queuing/handSize")
                        .unwrap_or(8)
                        .max(1) as usize,
                    queue_length_limit: int_at(l, "/limitResponse/queuing/queueLengthLimit")
                        .unwrap_or(50)
                        .max(0) as usize,
                }),
                "Reject" => None,
                _ => return None,
            };
            Some((
                false,
                int_at(l, "/nominalConcurrencyShares").unwrap_or(30),
                int_at(l, "/lendablePercent").unwrap_or(0),
                int_at(l, "/borrowingLimitPercent"),
                queuing,
            ))
        }
        _ => None,
    }
}

/// kube's `hashFlowID`: the first eight bytes of SHA-256 of the schema name, a NUL and the
/// distinguisher, little-endian.
fn flow_hash(schema: &str, distinguisher: &str) -> u64 {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(schema.as_bytes());
    ctx.update(&[0]);
    ctx.update(distinguisher.as_bytes());
    let d = ctx.finish();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d.as_ref()[..8]);
    u64::from_le_bytes(b)
}

impl FlowControl {
    /// A filter with the mandatory configuration only, until the objects are followed.
    pub fn new(server_cl: usize) -> Arc<FlowControl> {
        let fc = Arc::new(FlowControl {
            server_cl,
            config: ArcSwap::from_pointee(Config {
                schemas: Vec::new(),
                levels: BTreeMap::new(),
            }),
            sets: Mutex::new(HashMap::new()),
            smoothed: Mutex::new(HashMap::new()),
            retry_after: Mutex::new(HashMap::new()),
        });
        fc.digest(&[], &[]);
        fc
    }

    /// Digests the followed objects into a new configuration.
    pub fn digest(&self, levels: &[Arc<Value>], schemas: &[Arc<Value>]) {
        let mandatory: Vec<Arc<Value>> = bootstrap::mandatory_levels()
            .into_iter()
            .map(Arc::new)
            .collect();
        let mut specs: BTreeMap<String, (String, (bool, i64, i64, Option<i64>, Option<Queuing>))> =
            BTreeMap::new();
        for o in levels {
            match level_spec(o) {
                Some(s) => {
                    specs.insert(
                        str_at(o, "/metadata/name").to_string(),
                        (str_at(o, "/metadata/uid").to_string(), s),
                    );
                }
                None => tracing::warn!(
                    name = str_at(o, "/metadata/name"),
                    "ignoring a PriorityLevelConfiguration whose spec is broken"
                ),
            }
        }
        for o in &mandatory {
            let name = str_at(o, "/metadata/name").to_string();
            if !specs.contains_key(&name) {
                if let Some(s) = level_spec(o) {
                    specs.insert(name, (String::new(), s));
                }
            }
        }
        let share_sum: i64 = specs.values().map(|(_, s)| s.1.max(0)).sum();
        let server = self.server_cl as f64;
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: BTreeMap<String, Arc<Level>> = BTreeMap::new();
        for (name, (uid, (exempt, shares, lendable_pct, borrowing_pct, queuing))) in specs {
            let nominal = if share_sum > 0 {
                (server * shares.max(0) as f64 / share_sum as f64).ceil() as usize
            } else {
                0
            };
            let lendable = (nominal as f64 * lendable_pct as f64 / 100.0).round() as usize;
            let borrowing = match borrowing_pct {
                Some(p) => (nominal as f64 * p as f64 / 100.0).round() as usize,
                None => self.server_cl,
            };
            let max_seats = match queuing {
                Some(q) => ((nominal as f64 * MAX_SEATS_PERCENT).ceil() as usize)
                    .min(nominal / q.hand_size)
                    .max(1),
                None => 0,
            };
            let set = match sets.get(&name) {
                Some(s) => {
                    s.reconfigure(exempt, queuing);
                    s.clone()
                }
                None => {
                    let s = QueueSet::new(&name, exempt, queuing, nominal - lendable / 2);
                    sets.insert(name.clone(), s.clone());
                    s
                }
            };
            let labels = [("priority_level", name.clone())];
            metrics::gauge!("apiserver_flowcontrol_nominal_limit_seats", &labels)
                .set(nominal as f64);
            metrics::gauge!("apiserver_flowcontrol_lower_limit_seats", &labels)
                .set((nominal - lendable) as f64);
            metrics::gauge!("apiserver_flowcontrol_upper_limit_seats", &labels)
                .set((nominal + borrowing) as f64);
            out.insert(
                name.clone(),
                Arc::new(Level {
                    name,
                    uid,
                    exempt,
                    queuing,
                    nominal_cl: nominal,
                    min_cl: nominal - lendable,
                    max_cl: nominal + borrowing,
                    max_seats,
                    set,
                }),
            );
        }
        sets.retain(|name, _| out.contains_key(name));
        drop(sets);
        let mut digested: Vec<Schema> = schemas
            .iter()
            .map(|o| Schema::parse(o))
            .filter(|s| out.contains_key(&s.level))
            .collect();
        digested.sort_by(|a, b| {
            a.precedence
                .cmp(&b.precedence)
                .then_with(|| a.name.cmp(&b.name))
        });
        let mut mandatory_fs = bootstrap::mandatory_schemas()
            .into_iter()
            .map(|o| Schema::parse(&o));
        let (exempt_fs, catch_all_fs) = (
            mandatory_fs.next().expect("exempt"),
            mandatory_fs.next().expect("catch-all"),
        );
        if !digested.iter().any(|s| s.name == "exempt") {
            digested.insert(0, exempt_fs);
        }
        if !digested.iter().any(|s| s.name == "catch-all") {
            digested.push(catch_all_fs);
        }
        self.config.store(Arc::new(Config {
            schemas: digested,
            levels: out,
        }));
        self.adjust();
    }

    /// Sets every level's current limit from its seat demand since the last adjustment.
    pub fn adjust(&self) {
        let cfg = self.config.load();
        let mut smoothed = self.smoothed.lock().unwrap_or_else(|e| e.into_inner());
        let mut items = Vec::with_capacity(cfg.levels.len());
        for (name, l) in &cfg.levels {
            let d = l.set.take_demand();
            let s = smoothed.entry(name.clone()).or_insert(0.0);
            if d.seconds > 0.0 {
                let envelope = d.average + d.deviation;
                *s = envelope.max(SMOOTHING * *s + (1.0 - SMOOTHING) * envelope);
            }
            let lower = (l.min_cl as f64).max((l.nominal_cl as f64).min(d.max));
            items.push(allocation::Item {
                lower,
                upper: l.max_cl as f64,
                target: lower.max(*s),
            });
        }
        smoothed.retain(|n, _| cfg.levels.contains_key(n));
        drop(smoothed);
        let total: f64 = cfg.levels.values().map(|l| l.nominal_cl as f64).sum();
        let (allocs, _) = allocation::allocate(total, &items);
        for ((name, l), a) in cfg.levels.iter().zip(allocs) {
            let cl = a.round().max(0.0) as usize;
            l.set.set_current_cl(cl);
            metrics::gauge!("apiserver_flowcontrol_current_limit_seats", "priority_level" => name.clone())
                .set(cl as f64);
        }
    }

    /// The schema and level of a request.
    fn classify(&self, d: &Digest<'_>) -> (Arc<Config>, usize) {
        let cfg = self.config.load_full();
        let i = cfg
            .schemas
            .iter()
            .position(|s| s.matches(d))
            .or_else(|| cfg.schemas.iter().position(|s| s.name == "catch-all"))
            .unwrap_or(cfg.schemas.len().saturating_sub(1));
        (cfg, i)
    }

    /// Classifies a request and waits for it to be allowed to run (at most `wait_limit`).
    /// `work` estimates its seats given the level's widest request.
    pub async fn start(
        &self,
        d: &Digest<'_>,
        work: impl FnOnce(usize) -> Work,
        wait_limit: Duration,
    ) -> Result<Admitted, Refused> {
        let (cfg, i) = self.classify(d);
        let schema = &cfg.schemas[i];
        let level = cfg
            .levels
            .get(&schema.level)
            .or_else(|| cfg.levels.get("catch-all"))
            .expect("the catch-all level always exists");
        let class = Classification {
            schema: schema.name.clone(),
            schema_uid: schema.uid.clone(),
            level: level.name.clone(),
            level_uid: level.uid.clone(),
        };
        let (distinguisher, hash) = match level.queuing {
            Some(q) if q.queues > 1 && !level.exempt => {
                let dist = schema.distinguisher_of(d);
                let h = flow_hash(&schema.name, &dist);
                (dist, h)
            }
            _ => (String::new(), 0),
        };
        let work = work(level.max_seats);
        let facts = RequestFacts {
            schema: schema.name.clone(),
            distinguisher,
            user: d.user.name.clone(),
            verb: d.verb.to_string(),
            path: d.path.to_string(),
            namespace: d
                .info
                .and_then(|i| i.path_namespace.clone())
                .unwrap_or_default(),
            name: d.info.and_then(|i| i.name.clone()).unwrap_or_default(),
            api_version: d
                .info
                .map(|i| {
                    if i.group.is_empty() {
                        i.version.clone()
                    } else {
                        format!("{}/{}", i.group, i.version)
                    }
                })
                .unwrap_or_default(),
            resource: d.info.map(|i| i.resource.clone()).unwrap_or_default(),
            subresource: d
                .info
                .and_then(|i| i.subresource.clone())
                .unwrap_or_default(),
        };
        let labels = [
            ("flow_schema", class.schema.clone()),
            ("priority_level", class.level.clone()),
        ];
        let queued = level.queuing.is_some() && !level.exempt;
        let waited = Instant::now();
        let inqueue = queued.then(|| {
            let g = metrics::gauge!("apiserver_flowcontrol_current_inqueue_requests", &labels);
            g.increment(1.0);
            Gauge(g)
        });
        let r = level.set.start(hash, work, facts, wait_limit).await;
        drop(inqueue);
        let execute = if r.is_ok() { "true" } else { "false" };
        metrics::histogram!("apiserver_flowcontrol_request_wait_duration_seconds",
            "flow_schema" => class.schema.clone(), "priority_level" => class.level.clone(),
            "execute" => execute)
        .record(waited.elapsed().as_secs_f64());
        match r {
            Ok(ticket) => {
                metrics::counter!("apiserver_flowcontrol_dispatched_requests_total", &labels)
                    .increment(1);
                let g =
                    metrics::gauge!("apiserver_flowcontrol_current_executing_requests", &labels);
                g.increment(1.0);
                Ok(Admitted {
                    class,
                    _ticket: ticket,
                    _executing: Gauge(g),
                })
            }
            Err(why) => {
                metrics::counter!("apiserver_flowcontrol_rejected_requests_total",
                    "flow_schema" => class.schema.clone(), "priority_level" => class.level.clone(),
                    "reason" => why.as_str())
                .increment(1);
                let now = chrono::Utc::now().timestamp();
                let retry_after = self
                    .retry_after
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry(class.level.clone())
                    .or_default()
                    .record(now);
                if why == Rejection::Cancelled {
                    tracing::debug!(level = class.level, "a queued request was cancelled");
                }
                Err(Refused { class, retry_after })
            }
        }
    }

    /// Follows the configuration objects into this filter; while this replica leads, keeps
    /// them as kube's config producer and consumer keep them. Also moves the current limits
    /// with demand every [`BORROWING_PERIOD`].
    pub fn run(
        self: &Arc<Self>,
        cache: crate::watch::Cache,
        store: crate::registry::store::Store,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let registry = cache.registry().clone();
        let (Some(pl_info), Some(fs_info)) = (
            registry.get(bootstrap::GROUP, "v1", "prioritylevelconfigurations"),
            registry.get(bootstrap::GROUP, "v1", "flowschemas"),
        ) else {
            tracing::warn!("flowcontrol.apiserver.k8s.io/v1 is not served: only the mandatory configuration applies");
            return Vec::new();
        };
        let levels: crate::controllers::ByName = Default::default();
        let schemas: crate::controllers::ByName = Default::default();
        let changed = Arc::new(tokio::sync::Notify::new());
        let digest = {
            let me = self.clone();
            let (levels, schemas, changed) = (levels.clone(), schemas.clone(), changed.clone());
            tokio::spawn(async move {
                let _followers = (
                    crate::controllers::follow_by_name(
                        cache.clone(),
                        pl_info,
                        levels.clone(),
                        changed.clone(),
                    ),
                    crate::controllers::follow_by_name(
                        cache.clone(),
                        fs_info,
                        schemas.clone(),
                        changed.clone(),
                    ),
                );
                let mut leading = false;
                let mut last_ensure: Option<Instant> = None;
                loop {
                    let woke = tokio::time::timeout(Duration::from_secs(1), changed.notified())
                        .await
                        .is_ok();
                    if woke {
                        // Let a burst of changes settle into one digest.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    let snapshot = |m: &crate::controllers::ByName| {
                        m.lock().unwrap_or_else(|e| e.into_inner()).clone()
                    };
                    let (pls, fss) = (snapshot(&levels), snapshot(&schemas));
                    if woke {
                        let pl_list: Vec<Arc<Value>> = pls.values().cloned().collect();
                        let fs_list: Vec<Arc<Value>> = fss.values().cloned().collect();
                        me.digest(&pl_list, &fs_list);
                    }
                    let is_leader = store.kv().is_leader();
                    let due = woke
                        || (is_leader && !leading)
                        || last_ensure.is_none_or(|t| t.elapsed() >= ENSURE_EVERY);
                    leading = is_leader;
                    if !is_leader || !due {
                        continue;
                    }
                    last_ensure = Some(Instant::now());
                    if let Err(e) = bootstrap::ensure(&store, &pls, &fss).await {
                        tracing::warn!("priority and fairness configuration: {}", e.message);
                        last_ensure = None;
                        continue;
                    }
                    if let Err(e) = bootstrap::sync_status(&store, &pls, &fss).await {
                        tracing::warn!("flow schema status: {}", e.message);
                    }
                }
            })
        };
        let borrowing = {
            let me = self.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(BORROWING_PERIOD);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    me.adjust();
                }
            })
        };
        vec![digest, borrowing]
    }
}

/// The wait limit for a request with this deadline (none for watches).
pub fn wait_limit(deadline: Option<Duration>) -> Duration {
    match deadline {
        Some(d) => (d / 4).min(MAX_WAIT),
        None => MAX_WAIT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::User;

    fn digest<'a>(user: &'a User, path: &'a str) -> Digest<'a> {
        Digest {
            user,
            info: None,
            verb: "get",
            path,
        }
    }

    #[tokio::test]
    async fn the_mandatory_configuration_applies_before_any_object() {
        let fc = FlowControl::new(600);
        let admin = User {
            name: "admin".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..Default::default()
        };
        let a = fc
            .start(&digest(&admin, "/version"), |_| Work::one(), MAX_WAIT)
            .await
            .ok()
            .unwrap();
        assert_eq!(
            (a.class.schema.as_str(), a.class.level.as_str()),
            ("exempt", "exempt")
        );
        let bob = User {
            name: "bob".into(),
            groups: vec!["system:authenticated".into()],
            ..Default::default()
        };
        let b = fc
            .start(&digest(&bob, "/version"), |_| Work::one(), MAX_WAIT)
            .await
            .ok()
            .unwrap();
        assert_eq!(
            (b.class.schema.as_str(), b.class.level.as_str()),
            ("catch-all", "catch-all")
        );
        let cfg = fc.config.load();
        // catch-all has every share of the limited seats but the exempt level's none.
        assert_eq!(cfg.levels["catch-all"].nominal_cl, 600);
    }

    #[test]
    fn nominal_limits_split_the_server_by_shares() {
        let fc = FlowControl::new(600);
        let levels: Vec<Arc<Value>> = bootstrap::mandatory_levels()
            .into_iter()
            .chain(bootstrap::suggested_levels())
            .map(Arc::new)
            .collect();
        fc.digest(&levels, &[]);
        let cfg = fc.config.load();
        let nominal: BTreeMap<&str, usize> = cfg
            .levels
            .iter()
            .map(|(n, l)| (n.as_str(), l.nominal_cl))
            .collect();
        // 600 seats over 245 shares, rounded up.
        assert_eq!(nominal["catch-all"], 13);
        assert_eq!(nominal["global-default"], 49);
        assert_eq!(nominal["workload-low"], 245);
        assert_eq!(nominal["exempt"], 0);
        assert_eq!(cfg.levels["global-default"].min_cl, 24);
        assert_eq!(cfg.levels["global-default"].max_seats, 8);
        assert_eq!(cfg.levels["workload-low"].max_seats, 37);
    }

    #[test]
    fn retry_after_grows_under_refusals_and_comes_back() {
        let mut r = RetryAfter::default();
        for s in 0..3 {
            for _ in 0..10 {
                r.record(100 + s);
            }
        }
        assert!(r.retry_after >= 2, "{}", r.retry_after);
        let high = r.retry_after;
        r.record(200);
        assert_eq!(r.retry_after, high - 1);
    }
}
