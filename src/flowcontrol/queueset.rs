//! One priority level's seats and queues (kube's `queueset`).
//!
//! A request asks for some seats. An exempt level runs it at once. A limited level runs it
//! when its seats in use plus the request's fit the level's current concurrency limit (or
//! when nothing runs: a request wider than the limit waits for the level to empty, it is
//! never starved); otherwise a `Reject` level refuses it and a `Queue` level queues it.
//!
//! Queuing is shuffle sharded and fair: the flow (schema name and distinguisher) is hashed,
//! the hash deals a hand of `handSize` distinct queues out of `queues`, and the request joins
//! the hand's queue with the fewest seats waiting and running; a full queue
//! (`queueLengthLimit` waiting) refuses it. Dispatching is start-time fair queuing in
//! seat-seconds: each queue has the virtual time its next request may start at, the queue
//! with the earliest one goes first, and a dispatched request moves its queue's time on by
//! its seats times an estimated duration, corrected by the real duration when it ends. A
//! queue that was idle starts at the level's current virtual time, so idleness earns no
//! credit. A request waits at most its wait limit, then is refused (`time-out`); a request
//! whose client goes away leaves its queue (`cancelled`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// What a dispatched request is charged before it ends, per seat (seconds).
const ESTIMATED_SERVICE_SECONDS: f64 = 1.0;

/// How a limited level answers when it cannot run a request now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queuing {
    pub queues: usize,
    pub hand_size: usize,
    pub queue_length_limit: usize,
}

/// Why a request was refused (kube's `reason` label of
/// `apiserver_flowcontrol_rejected_requests_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    QueueFull,
    ConcurrencyLimit,
    TimeOut,
    Cancelled,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::QueueFull => "queue-full",
            Rejection::ConcurrencyLimit => "concurrency-limit",
            Rejection::TimeOut => "time-out",
            Rejection::Cancelled => "cancelled",
        }
    }
}

/// A request's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    pub initial_seats: usize,
    /// Seats held after the request ends, for `additional_latency` (the watch events a
    /// write causes).
    pub final_seats: usize,
    pub additional_latency: Duration,
}

impl Work {
    pub fn one() -> Work {
        Work {
            initial_seats: 1,
            final_seats: 0,
            additional_latency: Duration::ZERO,
        }
    }

    /// Seats held while the request runs (kube reserves the wider of both phases).
    fn seats(&self) -> usize {
        self.initial_seats.max(self.final_seats).max(1)
    }
}

/// What the debug dump of waiting requests shows.
#[derive(Clone, Debug)]
pub struct RequestFacts {
    pub schema: String,
    pub distinguisher: String,
    pub user: String,
    pub verb: String,
    pub path: String,
    pub namespace: String,
    pub name: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
}

struct Waiter {
    id: u64,
    work: Work,
    arrived: chrono::DateTime<chrono::Utc>,
    facts: RequestFacts,
    tx: oneshot::Sender<Dispatched>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    /// Virtual time (seat-seconds) at which the next request of this queue may start.
    next_r: f64,
    executing: usize,
    seats_in_use: usize,
}

impl Queue {
    fn waiting_seats(&self) -> usize {
        self.waiting.iter().map(|w| w.work.seats()).sum()
    }
}

/// Sent to a waiter when it is dispatched.
#[derive(Clone, Copy, Debug)]
struct Dispatched {
    queue: Option<usize>,
    seats: usize,
}

/// Seat demand over a period (kube's `Integrator`): time-weighted average, deviation and
/// high watermark of (seats waiting + seats in use).
struct Integrator {
    start: Instant,
    last: Instant,
    value: f64,
    sum: f64,
    sum_sq: f64,
    max: f64,
}

/// What the borrowing adjustment reads from an integrator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Demand {
    pub average: f64,
    pub deviation: f64,
    pub max: f64,
    pub seconds: f64,
}

impl Integrator {
    fn new(now: Instant) -> Integrator {
        Integrator {
            start: now,
            last: now,
            value: 0.0,
            sum: 0.0,
            sum_sq: 0.0,
            max: 0.0,
        }
    }

    fn set(&mut self, now: Instant, value: f64) {
        let dt = now.duration_since(self.last).as_secs_f64();
        self.sum += self.value * dt;
        self.sum_sq += self.value * self.value * dt;
        self.last = now;
        self.value = value;
        self.max = self.max.max(value);
    }

    fn reset(&mut self, now: Instant) -> Demand {
        self.set(now, self.value);
        let seconds = now.duration_since(self.start).as_secs_f64();
        let d = if seconds > 0.0 {
            let average = self.sum / seconds;
            let var = (self.sum_sq / seconds - average * average).max(0.0);
            Demand {
                average,
                deviation: var.sqrt(),
                max: self.max,
                seconds,
            }
        } else {
            Demand {
                max: self.max,
                ..Default::default()
            }
        };
        self.start = now;
        self.sum = 0.0;
        self.sum_sq = 0.0;
        self.max = self.value;
        d
    }
}

/// Counters for the debug dump.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    pub dispatched: u64,
    pub rejected: u64,
    pub timed_out: u64,
    pub cancelled: u64,
}

struct State {
    exempt: bool,
    /// `None`: a `Reject` level (or exempt).
    queuing: Option<Queuing>,
    current_cl: usize,
    seats_in_use: usize,
    executing: usize,
    queues: Vec<Queue>,
    virtual_time: f64,
    next_id: u64,
    totals: Totals,
    demand: Integrator,
}

/// One priority level's queue set.
pub struct QueueSet {
    pub name: String,
    state: Mutex<State>,
}

/// A queue's row of the debug dump.
#[derive(Clone, Debug)]
pub struct QueueDump {
    pub waiting: usize,
    pub executing: usize,
    pub seats_in_use: usize,
    pub next_r: f64,
    pub waiting_seats: usize,
}

/// A waiting request's row of the debug dump.
#[derive(Clone, Debug)]
pub struct WaiterDump {
    pub queue: usize,
    pub index: usize,
    pub arrived: chrono::DateTime<chrono::Utc>,
    pub work: Work,
    pub facts: RequestFacts,
}

/// The level's state, for the debug dump.
#[derive(Clone, Debug)]
pub struct Dump {
    pub active_queues: usize,
    pub idle: bool,
    pub waiting: usize,
    pub executing: usize,
    pub seats_in_use: usize,
    pub current_cl: usize,
    pub totals: Totals,
    pub queues: Vec<QueueDump>,
    pub waiters: Vec<WaiterDump>,
}

/// A running request's hold on its seats; dropping it ends the request.
pub struct Ticket {
    set: Arc<QueueSet>,
    d: Dispatched,
    work: Work,
    started: Instant,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let elapsed = self.started.elapsed();
        let (set, d, work) = (self.set.clone(), self.d, self.work);
        // The watch-event phase of a write holds its final seats a little longer.
        if work.final_seats > 0 && !work.additional_latency.is_zero() {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    tokio::time::sleep(work.additional_latency).await;
                    set.finish(d, elapsed + work.additional_latency);
                });
                return;
            }
        }
        set.finish(d, elapsed);
    }
}

/// A queued request's place; dropping it before it is dispatched leaves the queue.
struct Place {
    set: Arc<QueueSet>,
    id: u64,
    rx: Option<oneshot::Receiver<Dispatched>>,
}

impl Drop for Place {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else {
            return;
        };
        let mut st = self.set.lock();
        if remove_waiter(&mut st, self.id) {
            st.totals.cancelled += 1;
            self.set.note_demand(&mut st);
            return;
        }
        // Dispatched while going away: give the seats back.
        if let Ok(d) = rx.try_recv() {
            drop(st);
            self.set.finish(d, Duration::ZERO);
        }
    }
}

fn remove_waiter(st: &mut State, id: u64) -> bool {
    for q in st.queues.iter_mut() {
        if let Some(pos) = q.waiting.iter().position(|w| w.id == id) {
            q.waiting.remove(pos);
            return true;
        }
    }
    false
}

/// The `hand_size` distinct queues a flow hash deals out of `deck` (kube's shuffle-sharding
/// dealer: the hash read as mixed-radix digits, each picking among the cards not yet dealt).
pub fn deal(mut hash: u64, deck: usize, hand_size: usize) -> Vec<usize> {
    let hand_size = hand_size.min(deck);
    let mut hand: Vec<usize> = Vec::with_capacity(hand_size);
    for i in 0..hand_size {
        let left = (deck - i) as u64;
        let mut pick = (hash % left) as usize;
        hash /= left;
        // The pick-th card among those not yet dealt.
        let mut sorted = hand.clone();
        sorted.sort_unstable();
        for c in sorted {
            if c <= pick {
                pick += 1;
            }
        }
        hand.push(pick);
    }
    hand
}

impl QueueSet {
    pub fn new(
        name: &str,
        exempt: bool,
        queuing: Option<Queuing>,
        current_cl: usize,
    ) -> Arc<QueueSet> {
        let queues = queuing.map(|q| q.queues).unwrap_or(0);
        Arc::new(QueueSet {
            name: name.to_string(),
            state: Mutex::new(State {
                exempt,
                queuing,
                current_cl,
                seats_in_use: 0,
                executing: 0,
                queues: (0..queues).map(|_| Queue::default()).collect(),
                virtual_time: 0.0,
                next_id: 1,
                totals: Totals::default(),
                demand: Integrator::new(Instant::now()),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new configuration of the same level: waiting requests keep their place (those of
    /// queues that went away join the remaining ones).
    pub fn reconfigure(&self, exempt: bool, queuing: Option<Queuing>) {
        let mut st = self.lock();
        st.exempt = exempt;
        let want = queuing.map(|q| q.queues).unwrap_or(0);
        st.queuing = queuing;
        if st.queues.len() != want {
            let mut old = std::mem::take(&mut st.queues);
            st.queues = (0..want).map(|_| Queue::default()).collect();
            let mut orphans: Vec<Waiter> = Vec::new();
            for (i, q) in old.iter_mut().enumerate() {
                if i < want {
                    std::mem::swap(&mut st.queues[i], q);
                } else {
                    orphans.extend(q.waiting.drain(..));
                }
            }
            for (i, w) in orphans.into_iter().enumerate() {
                if want == 0 {
                    // No queues any more: what waited is refused (its sender is dropped).
                    st.totals.rejected += 1;
                    drop(w);
                } else {
                    let n = st.queues.len();
                    st.queues[i % n].waiting.push_back(w);
                }
            }
        }
        self.dispatch(&mut st);
    }

    pub fn set_current_cl(&self, cl: usize) {
        let mut st = self.lock();
        st.current_cl = cl;
        self.dispatch(&mut st);
    }

    /// The seat demand since the last call.
    pub fn take_demand(&self) -> Demand {
        let mut st = self.lock();
        st.demand.reset(Instant::now())
    }

    pub fn seats_in_use(&self) -> usize {
        self.lock().seats_in_use
    }

    fn note_demand(&self, st: &mut State) {
        let waiting: usize = st.queues.iter().map(Queue::waiting_seats).sum();
        let v = (waiting + st.seats_in_use) as f64;
        st.demand.set(Instant::now(), v);
    }

    fn fits(st: &State, seats: usize) -> bool {
        st.exempt || st.executing == 0 || st.seats_in_use + seats <= st.current_cl
    }

    /// Runs what may run, earliest virtual start first; stops at the first request that
    /// does not fit (no overtaking: wide requests are not starved).
    fn dispatch(&self, st: &mut State) {
        loop {
            let mut best: Option<usize> = None;
            for (i, q) in st.queues.iter().enumerate() {
                if q.waiting.is_empty() {
                    continue;
                }
                if best.is_none_or(|b| q.next_r < st.queues[b].next_r) {
                    best = Some(i);
                }
            }
            let Some(qi) = best else {
                break;
            };
            let seats = st.queues[qi].waiting[0].work.seats();
            if !Self::fits(st, seats) {
                break;
            }
            let w = st.queues[qi].waiting.pop_front().expect("non-empty queue");
            let q = &mut st.queues[qi];
            let start = q.next_r;
            q.next_r += seats as f64 * ESTIMATED_SERVICE_SECONDS;
            let d = Dispatched {
                queue: Some(qi),
                seats,
            };
            st.virtual_time = st.virtual_time.max(start);
            if w.tx.send(d).is_err() {
                // Its client is gone (and its Place is being dropped right now, waiting for
                // this lock): undo the charge.
                st.queues[qi].next_r -= seats as f64 * ESTIMATED_SERVICE_SECONDS;
                st.totals.cancelled += 1;
                continue;
            }
            self.occupy(st, d);
        }
        self.note_demand(st);
    }

    fn occupy(&self, st: &mut State, d: Dispatched) {
        st.seats_in_use += d.seats;
        st.executing += 1;
        st.totals.dispatched += 1;
        if let Some(q) = d.queue.and_then(|i| st.queues.get_mut(i)) {
            q.executing += 1;
            q.seats_in_use += d.seats;
        }
    }

    fn finish(&self, d: Dispatched, elapsed: Duration) {
        let mut st = self.lock();
        st.seats_in_use = st.seats_in_use.saturating_sub(d.seats);
        st.executing = st.executing.saturating_sub(1);
        if let Some(q) = d.queue.and_then(|i| st.queues.get_mut(i)) {
            q.executing = q.executing.saturating_sub(1);
            q.seats_in_use = q.seats_in_use.saturating_sub(d.seats);
            // The charge at dispatch was an estimate: settle it at the real duration.
            q.next_r += d.seats as f64 * (elapsed.as_secs_f64() - ESTIMATED_SERVICE_SECONDS);
        }
        self.dispatch(&mut st);
    }

    /// Asks to run a request of `work` for the flow `hash`, waiting at most `wait_limit`.
    pub async fn start(
        self: &Arc<Self>,
        hash: u64,
        work: Work,
        facts: RequestFacts,
        wait_limit: Duration,
    ) -> Result<Ticket, Rejection> {
        let ticket = |d: Dispatched| Ticket {
            set: self.clone(),
            d,
            work,
            started: Instant::now(),
        };
        let (id, rx) = {
            let mut st = self.lock();
            let seats = work.seats();
            let Some(queuing) = st.queuing.filter(|_| !st.exempt && !st.queues.is_empty()) else {
                // Exempt, or a level that rejects rather than queues.
                if Self::fits(&st, seats) {
                    let d = Dispatched { queue: None, seats };
                    self.occupy(&mut st, d);
                    self.note_demand(&mut st);
                    return Ok(ticket(d));
                }
                st.totals.rejected += 1;
                return Err(Rejection::ConcurrencyLimit);
            };
            let hand = deal(hash, st.queues.len(), queuing.hand_size);
            let qi = hand
                .iter()
                .copied()
                .min_by_key(|&i| st.queues[i].waiting_seats() + st.queues[i].seats_in_use)
                .unwrap_or(0);
            if st.queues[qi].waiting.len() >= queuing.queue_length_limit {
                st.totals.rejected += 1;
                return Err(Rejection::QueueFull);
            }
            let id = st.next_id;
            st.next_id += 1;
            let (tx, rx) = oneshot::channel();
            let vt = st.virtual_time;
            let q = &mut st.queues[qi];
            if q.waiting.is_empty() && q.executing == 0 {
                q.next_r = q.next_r.max(vt);
            }
            q.waiting.push_back(Waiter {
                id,
                work,
                arrived: chrono::Utc::now(),
                facts,
                tx,
            });
            self.dispatch(&mut st);
            (id, rx)
        };
        let mut place = Place {
            set: self.clone(),
            id,
            rx: Some(rx),
        };
        let rx = place.rx.as_mut().expect("receiver");
        match tokio::time::timeout(wait_limit, rx).await {
            Ok(Ok(d)) => {
                place.rx = None;
                Ok(ticket(d))
            }
            // The level went away under it (its queues were removed).
            Ok(Err(_)) => {
                place.rx = None;
                Err(Rejection::ConcurrencyLimit)
            }
            Err(_) => {
                let mut st = self.lock();
                if remove_waiter(&mut st, id) {
                    st.totals.timed_out += 1;
                    self.note_demand(&mut st);
                    place.rx = None;
                    return Err(Rejection::TimeOut);
                }
                drop(st);
                // Dispatched just now.
                let mut rx = place.rx.take().expect("receiver");
                match rx.try_recv() {
                    Ok(d) => Ok(ticket(d)),
                    Err(_) => Err(Rejection::TimeOut),
                }
            }
        }
    }

    pub fn dump(&self, details: bool) -> Dump {
        let st = self.lock();
        let mut waiters = Vec::new();
        if details {
            for (qi, q) in st.queues.iter().enumerate() {
                for (i, w) in q.waiting.iter().enumerate() {
                    waiters.push(WaiterDump {
                        queue: qi,
                        index: i,
                        arrived: w.arrived,
                        work: w.work,
                        facts: w.facts.clone(),
                    });
                }
            }
        }
        let waiting = st.queues.iter().map(|q| q.waiting.len()).sum();
        Dump {
            active_queues: st.queues.iter().filter(|q| !q.waiting.is_empty()).count(),
            idle: waiting == 0 && st.executing == 0,
            waiting,
            executing: st.executing,
            seats_in_use: st.seats_in_use,
            current_cl: st.current_cl,
            totals: st.totals,
            queues: st
                .queues
                .iter()
                .map(|q| QueueDump {
                    waiting: q.waiting.len(),
                    executing: q.executing,
                    seats_in_use: q.seats_in_use,
                    next_r: q.next_r,
                    waiting_seats: q.waiting_seats(),
                })
                .collect(),
            waiters,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> RequestFacts {
        RequestFacts {
            schema: "s".into(),
            distinguisher: String::new(),
            user: "u".into(),
            verb: "get".into(),
            path: "/".into(),
            namespace: String::new(),
            name: String::new(),
            api_version: String::new(),
            resource: String::new(),
            subresource: String::new(),
        }
    }

    #[test]
    fn hands_are_distinct_and_in_range() {
        for hash in [0u64, 1, 7, 12345, u64::MAX, 0xdead_beef_cafe] {
            let h = deal(hash, 128, 6);
            assert_eq!(h.len(), 6);
            let mut s = h.clone();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), 6, "{h:?}");
            assert!(h.iter().all(|&c| c < 128));
        }
        assert_eq!(deal(5, 3, 6).len(), 3);
    }

    #[tokio::test]
    async fn a_full_level_queues_then_dispatches_fairly() {
        let q = QueueSet::new(
            "l",
            false,
            Some(Queuing {
                queues: 64,
                hand_size: 1,
                queue_length_limit: 2,
            }),
            1,
        );
        let wait = Duration::from_secs(5);
        let first = q.start(1, Work::one(), facts(), wait).await.unwrap();
        // Flow 1 queues two more; its queue is then full.
        let a1 = tokio::spawn({
            let q = q.clone();
            async move { q.start(1, Work::one(), facts(), wait).await.map(|_| "a1") }
        });
        let a2 = tokio::spawn({
            let q = q.clone();
            async move { q.start(1, Work::one(), facts(), wait).await.map(|_| "a2") }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            q.start(1, Work::one(), facts(), wait).await.err(),
            Some(Rejection::QueueFull)
        );
        assert_eq!(q.dump(false).waiting, 2);
        drop(first);
        assert_eq!(a1.await.unwrap().unwrap(), "a1");
        assert_eq!(a2.await.unwrap().unwrap(), "a2");
        let d = q.dump(false);
        assert_eq!((d.waiting, d.executing, d.seats_in_use), (0, 0, 0));
        assert_eq!(d.totals.rejected, 1);
    }

    #[tokio::test]
    async fn waiting_ends_at_the_wait_limit_and_on_cancel() {
        let q = QueueSet::new(
            "l",
            false,
            Some(Queuing {
                queues: 8,
                hand_size: 2,
                queue_length_limit: 10,
            }),
            1,
        );
        let hold = q
            .start(1, Work::one(), facts(), Duration::from_secs(1))
            .await
            .unwrap();
        let r = q
            .start(2, Work::one(), facts(), Duration::from_millis(50))
            .await;
        assert_eq!(r.err(), Some(Rejection::TimeOut));
        let t = tokio::spawn({
            let q = q.clone();
            async move {
                q.start(3, Work::one(), facts(), Duration::from_secs(10))
                    .await
                    .is_ok()
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        t.abort();
        let _ = t.await;
        let d = q.dump(false);
        assert_eq!(
            (d.waiting, d.totals.timed_out, d.totals.cancelled),
            (0, 1, 1)
        );
        drop(hold);
        assert_eq!(q.dump(false).seats_in_use, 0);
    }

    #[tokio::test]
    async fn a_reject_level_refuses_over_its_limit() {
        let q = QueueSet::new("l", false, None, 1);
        let a = q
            .start(0, Work::one(), facts(), Duration::ZERO)
            .await
            .unwrap();
        assert_eq!(
            q.start(0, Work::one(), facts(), Duration::ZERO).await.err(),
            Some(Rejection::ConcurrencyLimit)
        );
        drop(a);
        // A request wider than the limit runs when nothing else does.
        let wide = Work {
            initial_seats: 5,
            ..Work::one()
        };
        assert!(q.start(0, wide, facts(), Duration::ZERO).await.is_ok());
    }

    #[tokio::test]
    async fn a_quiet_flow_is_not_stuck_behind_a_noisy_one() {
        let q = QueueSet::new(
            "l",
            false,
            Some(Queuing {
                queues: 64,
                hand_size: 1,
                queue_length_limit: 100,
            }),
            1,
        );
        let wait = Duration::from_secs(10);
        let hold = q.start(1, Work::one(), facts(), wait).await.unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // The noisy flow queues 20 requests, then the quiet one queues one.
        let mut tasks = Vec::new();
        for i in 0..20 {
            let (q, tx) = (q.clone(), tx.clone());
            tasks.push(tokio::spawn(async move {
                let t = q.start(1, Work::one(), facts(), wait).await.unwrap();
                tx.send(format!("noisy{i}")).unwrap();
                drop(t);
            }));
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let quiet_hash = (1..1000u64)
            .find(|h| deal(*h, 64, 1) != deal(1, 64, 1))
            .unwrap();
        {
            let (q, tx) = (q.clone(), tx.clone());
            tasks.push(tokio::spawn(async move {
                let t = q
                    .start(quiet_hash, Work::one(), facts(), wait)
                    .await
                    .unwrap();
                tx.send("quiet".to_string()).unwrap();
                drop(t);
            }));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(hold);
        for t in tasks {
            t.await.unwrap();
        }
        let mut order = Vec::new();
        while let Ok(s) = rx.try_recv() {
            order.push(s);
        }
        let pos = order.iter().position(|s| s == "quiet").unwrap();
        assert!(pos <= 2, "{order:?}");
    }
}
