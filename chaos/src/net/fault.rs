//! What a link does to its traffic ([`Fault`]), and the seeded generator ([`Rng`]) that makes
//! the random faults (`Delay` jitter, `Drop`) replay from a `u64` seed.
//!
//! Semantics of each fault, as the [`Proxy`](super::Proxy) applies it (all of them take effect
//! on existing connections as well as new ones, within a scheduler tick of
//! [`Proxy::set`](super::Proxy::set)):
//!
//! | fault | new connection | established connection |
//! |---|---|---|
//! | `Healthy` | dialled upstream, bytes pass | bytes pass |
//! | `Blackhole` | accepted, upstream not dialled; stalls until the fault changes | stalls: the proxy stops reading, bytes it already read are held, nothing is dropped and nothing is reset; both peers see silence, their writes back up (TCP flow control) |
//! | `Refuse` | accepted and reset at once (RST)¹ | reset (RST) on both sides |
//! | `Delay` | bytes pass, each chunk `latency + U[0, jitter)` late | same; order kept per direction |
//! | `Drop` | bytes pass; each chunk resets the connection with probability `p` | same |
//! | `Bandwidth` | bytes pass at ≤ `bytes_per_sec` per direction | same |
//!
//!
//! ¹ The listener stays open (closing and rebinding its port could lose the port), so the
//! client's `connect` succeeds and its first read or write fails with `ECONNRESET`/`EPIPE`;
//! clients treat that like `ECONNREFUSED` (nothing was delivered).
//!
//! A *chunk* is one read by the proxy (≤ 16 KiB), i.e. roughly one write by the sender.
//! `Drop` draws once per chunk in each direction. Random draws are reproducible from the seed
//! as far as chunking is (request/response traffic chunks the same way on every run).
//!
//! Healing a `Blackhole` resumes the stalled connections where they were (held bytes are
//! delivered, in order): that is what TCP does when a partition heals before its retransmission
//! timeout. A peer that wants a blackholed connection to fail must use its own timeouts (gRPC
//! keepalive, request deadlines), as it would on a real network.
//!
//! `Drop` does not discard bytes: losing bytes in the middle of a TCP stream is not a thing a
//! network can do (TCP retransmits), and doing it in a proxy would corrupt gRPC/TLS framing
//! instead of modelling loss. A lossy link is modelled as one whose connections die: the chunk
//! that "is lost" resets its connection on both sides, and the peers must reconnect.

use std::fmt;
use std::time::Duration;

/// The behaviour of one proxied link. See the [module docs](self) for the exact semantics.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Fault {
    /// Pass bytes both ways.
    #[default]
    Healthy,
    /// Accept connections but forward nothing; existing connections stall (held, not reset).
    Blackhole,
    /// Reset new connections at once and cut (reset) existing ones.
    Refuse,
    /// Delay every chunk by `latency` plus a uniform `[0, jitter)`; order is kept per direction.
    Delay { latency: Duration, jitter: Duration },
    /// Reset the connection with probability `probability` per forwarded chunk (clamped to
    /// `[0, 1]`; NaN counts as 0).
    Drop { probability: f64 },
    /// Forward at most `bytes_per_sec` per direction per connection. `0` stalls like `Blackhole`.
    Bandwidth { bytes_per_sec: u64 },
}

impl Fault {
    /// `Delay` with a fixed latency and no jitter.
    pub fn delay(latency: Duration) -> Fault {
        Fault::Delay {
            latency,
            jitter: Duration::ZERO,
        }
    }

    /// `Delay` with jitter.
    pub fn delay_jitter(latency: Duration, jitter: Duration) -> Fault {
        Fault::Delay { latency, jitter }
    }

    /// `Drop` with the given per-chunk probability of resetting the connection.
    pub fn drop_prob(probability: f64) -> Fault {
        Fault::Drop { probability }
    }

    /// `Bandwidth` limit in bytes per second.
    pub fn bandwidth(bytes_per_sec: u64) -> Fault {
        Fault::Bandwidth { bytes_per_sec }
    }

    /// Whether this fault lets no byte through (so a new connection is not dialled upstream).
    pub fn stalls(&self) -> bool {
        matches!(
            self,
            Fault::Blackhole | Fault::Bandwidth { bytes_per_sec: 0 }
        )
    }

    /// Whether the link is healthy.
    pub fn is_healthy(&self) -> bool {
        matches!(self, Fault::Healthy)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Healthy => write!(f, "healthy"),
            Fault::Blackhole => write!(f, "blackhole"),
            Fault::Refuse => write!(f, "refuse"),
            Fault::Delay { latency, jitter } => write!(f, "delay {latency:?}±{jitter:?}"),
            Fault::Drop { probability } => write!(f, "drop p={probability}"),
            Fault::Bandwidth { bytes_per_sec } => write!(f, "bandwidth {bytes_per_sec} B/s"),
        }
    }
}

/// SplitMix64: small, fast, and fully determined by its seed (no dependency on `rand`'s
/// algorithm choices, so a recorded seed replays across dependency upgrades).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator for a sub-stream (`a`, `b`) of `seed`: e.g. connection `a`, direction `b`.
    pub fn derive(seed: u64, a: u64, b: u64) -> Rng {
        let mut r = Rng(seed ^ 0x6a09_e667_f3bc_c908);
        let x = r.next_u64() ^ a.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut r = Rng(x);
        let y = r.next_u64() ^ b.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        Rng(y)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p` (clamped to `[0, 1]`; NaN is 0). `p = 1` is always true.
    pub fn chance(&mut self, p: f64) -> bool {
        if p.is_nan() || p <= 0.0 {
            return false;
        }
        self.next_f64() < p
    }
}
