//! [`Proxy`]: one TCP listener forwarding to one upstream address, with a runtime-settable
//! [`Fault`].
//!
//! Structure: an accept task owns the listener and a `JoinSet` of connection tasks. Each
//! connection runs two directions (client→upstream, upstream→client); a direction is a reader
//! (reads chunks of at most 16 KiB, decides `Drop`, stamps the `Delay` due time) and a writer
//! (waits out `Blackhole`, the due time and the `Bandwidth` budget, then writes), joined by a
//! small bounded queue, so delayed bytes are pipelined instead of one chunk per latency. A
//! third future per connection resets it as soon as the fault becomes `Refuse`. Every task
//! watches the fault through a `tokio::sync::watch`, so a change reaches established
//! connections immediately (no polling).
//!
//! A connection is *cut* by setting `SO_LINGER` 0 on both sockets and closing them: the peers
//! see a reset (`ECONNRESET`), not a clean EOF. A clean EOF from one side is passed on as a
//! half-close (`shutdown(Write)`) to the other, so well-behaved closes stay well-behaved.
//!
//! Upstream down: the upstream is dialled once per accepted connection (after any
//! `Blackhole` stall), with a 2 s timeout; if that fails the client connection is reset at once
//! (counted in [`Stats::upstream_failed`]). No retry, so nothing spins.
//!
//! No I/O error panics or ends the proxy: a failing `accept` is retried after 20 ms; a
//! connection's I/O error resets that connection (both sides) and nothing else.
//!
//! Lifetime: [`Proxy::stop`] ends the accept task and every connection task (their sockets are
//! closed, so the peers see EOF) and returns once the listener is closed, so the port can be
//! bound again. Dropping a `Proxy` aborts the same tasks without waiting.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use super::fault::{Fault, Rng};

/// Largest chunk read at once.
const CHUNK: usize = 16 * 1024;
/// Chunks queued between a direction's reader and writer (bounds memory to ~`QUEUE * CHUNK`
/// per direction, and gives backpressure to the sender when the writer is stalled).
const QUEUE: usize = 64;
/// How long dialling the upstream may take before the client connection is reset.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Pause after a failing `accept` (e.g. out of file descriptors) so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(20);
/// Pieces written under `Bandwidth` carry at most this much time worth of bytes (smooth rate).
const BANDWIDTH_SLICE_PER_SEC: u64 = 20; // 50 ms

/// Counters of one proxy, since it started. A snapshot; see [`Proxy::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Connections accepted by the listener.
    pub accepted: u64,
    /// Connections open right now (accepted, not yet closed).
    pub active: u64,
    /// Bytes written to the upstream (client → upstream).
    pub bytes_to_upstream: u64,
    /// Bytes written to the client (upstream → client).
    pub bytes_to_client: u64,
    /// New connections reset at once because the fault was `Refuse`.
    pub refused: u64,
    /// New connections reset because dialling the upstream failed (upstream down).
    pub upstream_failed: u64,
    /// Established connections reset by a fault (`Refuse` set later, or a `Drop` draw).
    pub cut: u64,
    /// Established connections reset because one side failed (its reset or I/O error is
    /// passed on to the other side as a reset).
    pub reset: u64,
}

#[derive(Default)]
struct Counters {
    accepted: AtomicU64,
    active: AtomicU64,
    bytes_to_upstream: AtomicU64,
    bytes_to_client: AtomicU64,
    refused: AtomicU64,
    upstream_failed: AtomicU64,
    cut: AtomicU64,
    reset: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> Stats {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            accepted: l(&self.accepted),
            active: l(&self.active),
            bytes_to_upstream: l(&self.bytes_to_upstream),
            bytes_to_client: l(&self.bytes_to_client),
            refused: l(&self.refused),
            upstream_failed: l(&self.upstream_failed),
            cut: l(&self.cut),
            reset: l(&self.reset),
        }
    }
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

struct Shared {
    fault: watch::Sender<Fault>,
    upstream: Mutex<SocketAddr>,
    stats: Counters,
    seed: u64,
}

impl Shared {
    fn upstream(&self) -> SocketAddr {
        *self.upstream.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One fault-injecting TCP proxy: a listener on `local_addr()` forwarding every accepted
/// connection to `upstream`, applying the current [`Fault`].
pub struct Proxy {
    local: SocketAddr,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("local", &self.local)
            .field("upstream", &self.upstream())
            .field("fault", &self.fault())
            .finish()
    }
}

impl Proxy {
    /// Binds `listen` (port 0 picks a free port; see [`local_addr`](Self::local_addr)) and
    /// starts forwarding to `upstream`, healthy. `seed` determines the random draws (`Delay`
    /// jitter, `Drop`): connection *n* (in accept order) direction *d* draws from its own
    /// stream derived from (`seed`, *n*, *d*), so a run with the same seed, connection order
    /// and chunking replays the same faults.
    ///
    /// Must be called inside a Tokio runtime. The upstream need not be listening yet.
    pub async fn start(
        listen: SocketAddr,
        upstream: SocketAddr,
        seed: u64,
    ) -> anyhow::Result<Proxy> {
        let listener = TcpListener::bind(listen)
            .await
            .with_context(|| format!("bind proxy listener {listen}"))?;
        let local = listener.local_addr().context("proxy listener address")?;
        let (fault, _) = watch::channel(Fault::Healthy);
        let shared = Arc::new(Shared {
            fault,
            upstream: Mutex::new(upstream),
            stats: Counters::default(),
            seed,
        });
        let (shutdown, shutdown_rx) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, shared.clone(), shutdown_rx));
        Ok(Proxy {
            local,
            shared,
            shutdown,
            task: Some(task),
        })
    }

    /// The address clients should dial.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The address new connections are forwarded to.
    pub fn upstream(&self) -> SocketAddr {
        self.shared.upstream()
    }

    /// Changes the upstream for connections accepted from now on (e.g. a replica restarted on
    /// another port). Established connections keep their upstream.
    pub fn set_upstream(&self, upstream: SocketAddr) {
        *self
            .shared
            .upstream
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = upstream;
    }

    /// Sets the fault. Established connections see it at once (they wait on the change), new
    /// connections on accept. Bytes already scheduled by an earlier `Delay` keep their due
    /// time (they are "in flight").
    pub fn set(&self, fault: Fault) {
        self.shared.fault.send_replace(fault);
    }

    /// The current fault.
    pub fn fault(&self) -> Fault {
        *self.shared.fault.borrow()
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> Stats {
        self.shared.stats.snapshot()
    }

    /// Stops accepting, closes every open connection, and returns once the listener socket and
    /// the connection tasks are gone (the port can be bound again).
    pub async fn stop(mut self) {
        let _ = self.shutdown.send(true);
        if let Some(mut task) = self.task.take() {
            // The accept loop shuts its JoinSet down and returns; don't wait forever on it.
            if tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
            {
                task.abort();
                let _ = task.await;
            }
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // Aborting the accept task drops its listener and JoinSet, which aborts every
        // connection task.
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut conns = JoinSet::new();
    let mut next_id: u64 = 0;
    loop {
        tokio::select! {
            _ = async { drop(shutdown.wait_for(|stop| *stop).await) } => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    bump(&shared.stats.accepted);
                    let id = next_id;
                    next_id += 1;
                    conns.spawn(connection(stream, shared.clone(), id));
                }
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
        }
    }
    drop(listener);
    conns.shutdown().await;
}

/// Keeps [`Stats::active`] right however a connection task ends (including abort).
struct ActiveGuard<'a>(&'a AtomicU64);

impl<'a> ActiveGuard<'a> {
    fn new(c: &'a AtomicU64) -> Self {
        c.fetch_add(1, Ordering::Relaxed);
        ActiveGuard(c)
    }
}

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Why a connection ended abnormally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// A fault decided it (`Refuse`, `Drop`).
    Fault,
    /// One side failed (reset, I/O error); pass it on.
    Io,
}

/// Closes with RST instead of FIN.
fn reset(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

fn reset_halves(rd: OwnedReadHalf, wr: OwnedWriteHalf) {
    match rd.reunite(wr) {
        Ok(stream) => reset(stream),
        Err(e) => {
            // Cannot happen (the halves come from one stream); close them anyway.
            let _ = e.0.as_ref().set_zero_linger();
            e.1.forget();
        }
    }
}

/// Resolves when the client has closed or reset (`true`); pends forever if it has sent data
/// (which must not be consumed while stalled) or is simply idle.
async fn client_gone(client: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    match client.peek(&mut b).await {
        Ok(0) | Err(_) => true,
        Ok(_) => std::future::pending().await,
    }
}

async fn connection(client: TcpStream, shared: Arc<Shared>, id: u64) {
    let stats = &shared.stats;
    let _active = ActiveGuard::new(&stats.active);
    let _ = client.set_nodelay(true);
    let mut fault = shared.fault.subscribe();

    // Gate: a new connection is dialled upstream only once the link lets bytes through.
    loop {
        let f = *fault.borrow_and_update();
        if f == Fault::Refuse {
            bump(&stats.refused);
            reset(client);
            return;
        }
        if !f.stalls() {
            break;
        }
        tokio::select! {
            changed = fault.changed() => if changed.is_err() { reset(client); return; },
            gone = client_gone(&client) => if gone { return; },
        }
    }

    let upstream = shared.upstream();
    let server = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(upstream)).await {
        Ok(Ok(s)) => s,
        _ => {
            bump(&stats.upstream_failed);
            reset(client);
            return;
        }
    };
    let _ = server.set_nodelay(true);

    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let outcome = {
        let up = pump(
            &mut cr,
            &mut sw,
            shared.fault.subscribe(),
            Rng::derive(shared.seed, id, 0),
            &stats.bytes_to_upstream,
        );
        let down = pump(
            &mut sr,
            &mut cw,
            shared.fault.subscribe(),
            Rng::derive(shared.seed, id, 1),
            &stats.bytes_to_client,
        );
        tokio::select! {
            r = async { tokio::try_join!(up, down) } => r.map(|_| ()),
            cut = refuse_watch(shared.fault.subscribe()) => Err(cut),
        }
    };
    match outcome {
        Ok(()) => {} // both directions closed cleanly; dropping the halves closes normally
        Err(why) => {
            bump(if why == Cut::Fault {
                &stats.cut
            } else {
                &stats.reset
            });
            reset_halves(cr, cw);
            reset_halves(sr, sw);
        }
    }
}

/// Resolves as soon as the fault is `Refuse`.
async fn refuse_watch(mut fault: watch::Receiver<Fault>) -> Cut {
    match fault.wait_for(|f| *f == Fault::Refuse).await {
        Ok(_) => Cut::Fault,
        Err(_) => Cut::Io, // proxy gone
    }
}

struct Chunk {
    due: Instant,
    data: Vec<u8>,
}

/// One direction: `rd` → `wr`. `Ok` after a clean EOF was passed on as a half-close.
async fn pump(
    rd: &mut OwnedReadHalf,
    wr: &mut OwnedWriteHalf,
    fault: watch::Receiver<Fault>,
    rng: Rng,
    bytes: &AtomicU64,
) -> Result<(), Cut> {
    let (tx, rx) = mpsc::channel(QUEUE);
    let reader = read_side(rd, tx, fault.clone(), rng);
    let writer = write_side(wr, rx, fault, bytes);
    tokio::try_join!(reader, writer).map(|_| ())
}

async fn read_side(
    rd: &mut OwnedReadHalf,
    tx: mpsc::Sender<Chunk>,
    mut fault: watch::Receiver<Fault>,
    mut rng: Rng,
) -> Result<(), Cut> {
    let mut buf = vec![0u8; CHUNK];
    let mut last_due = Instant::now();
    loop {
        let f = *fault.borrow_and_update();
        if f.stalls() || f == Fault::Refuse {
            // Stop reading: the sender's bytes stay in its socket buffers (held, not lost).
            if fault.changed().await.is_err() {
                return Err(Cut::Io);
            }
            continue;
        }
        let n = tokio::select! {
            changed = fault.changed() => {
                if changed.is_err() { return Err(Cut::Io); }
                continue;
            }
            r = rd.read(&mut buf) => match r {
                Ok(0) => return Ok(()), // EOF: dropping `tx` lets the writer drain and half-close
                Ok(n) => n,
                Err(_) => return Err(Cut::Io),
            },
        };
        let f = *fault.borrow();
        let now = Instant::now();
        let mut due = now;
        match f {
            Fault::Drop { probability } if rng.chance(probability) => return Err(Cut::Fault),
            Fault::Delay { latency, jitter } => {
                let extra = latency.saturating_add(jitter.mul_f64(rng.next_f64()));
                due = now
                    .checked_add(extra)
                    .unwrap_or(now + Duration::from_secs(86_400));
            }
            _ => {}
        }
        // Keep order: a chunk is never due before the previous one.
        if due < last_due {
            due = last_due;
        }
        last_due = due;
        if tx
            .send(Chunk {
                due,
                data: buf[..n].to_vec(),
            })
            .await
            .is_err()
        {
            return Ok(()); // writer gone (only when the whole pump is ending)
        }
    }
}

async fn write_side(
    wr: &mut OwnedWriteHalf,
    mut rx: mpsc::Receiver<Chunk>,
    mut fault: watch::Receiver<Fault>,
    bytes: &AtomicU64,
) -> Result<(), Cut> {
    // Under `Bandwidth`: when the previous piece has "finished transmitting".
    let mut next_free = Instant::now();
    while let Some(chunk) = rx.recv().await {
        let mut off = 0;
        while off < chunk.data.len() {
            // Wait until this piece may go: not stalled, due, within the bandwidth budget.
            let piece = loop {
                let f = *fault.borrow_and_update();
                if f.stalls() || f == Fault::Refuse {
                    if fault.changed().await.is_err() {
                        return Err(Cut::Io);
                    }
                    continue;
                }
                let rest = chunk.data.len() - off;
                let (ready_at, piece) = match f {
                    Fault::Bandwidth { bytes_per_sec } => {
                        let slice = (bytes_per_sec / BANDWIDTH_SLICE_PER_SEC).max(1);
                        let piece = rest.min(usize::try_from(slice).unwrap_or(usize::MAX));
                        (chunk.due.max(next_free), piece)
                    }
                    _ => (chunk.due, rest),
                };
                if Instant::now() >= ready_at {
                    if let Fault::Bandwidth { bytes_per_sec } = f {
                        let start = next_free.max(Instant::now());
                        let secs = piece as f64 / bytes_per_sec.max(1) as f64;
                        next_free = start
                            .checked_add(Duration::from_secs_f64(secs.min(86_400.0)))
                            .unwrap_or(start);
                    }
                    break piece;
                }
                tokio::select! {
                    _ = tokio::time::sleep_until(ready_at) => {}
                    changed = fault.changed() => if changed.is_err() { return Err(Cut::Io); },
                }
            };
            if wr.write_all(&chunk.data[off..off + piece]).await.is_err() {
                return Err(Cut::Io);
            }
            bytes.fetch_add(piece as u64, Ordering::Relaxed);
            off += piece;
        }
    }
    // Reader saw EOF and every byte is written: pass the half-close on.
    let _ = wr.shutdown().await;
    Ok(())
}
