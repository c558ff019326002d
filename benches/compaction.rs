//! Compaction figures (not a timed test; `cargo bench --bench compaction`): apply latency of
//! single-key writes (as the state machine applies them) on a store holding 200k revisions
//! of history, first alone, then while a compaction of all of that history is purged in the
//! background in bounded steps, as the server's purger does. Flat p99 / max across the two
//! phases is the point: compaction never stalls apply. `RAFTER_BENCH_SMALL=1` divides the
//! history by 10.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rafter::storage::engine::{Batch, Engine};
use rafter::storage::mvcc::{Mvcc, Op, Txn};

const SAMPLES: usize = 5_000;

fn put(k: String) -> Txn {
    Txn {
        compares: vec![],
        success: vec![Op::Put {
            key: k.into_bytes(),
            value: vec![b'v'; 512],
        }],
    }
}

/// Applies `SAMPLES` writes; returns (p50, p99, max) latency.
fn phase(s: &Mvcc, tag: &str) -> (Duration, Duration, Duration) {
    let mut lat = Vec::with_capacity(SAMPLES);
    for i in 0..SAMPLES {
        let t = Instant::now();
        s.apply_txn(&put(format!("/live/{tag}/{i}")), Batch::new())
            .unwrap();
        lat.push(t.elapsed());
    }
    lat.sort();
    (lat[SAMPLES / 2], lat[SAMPLES * 99 / 100], lat[SAMPLES - 1])
}

fn main() {
    let small = std::env::var_os("RAFTER_BENCH_SMALL").is_some();
    let history: usize = if small { 20_000 } else { 200_000 };
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(Mvcc::open(Engine::open(&dir.path().join("db")).unwrap()).unwrap());
    // 2k keys, each rewritten many times: every revision leaves history and index entries.
    for i in 0..history {
        s.apply_txn(&put(format!("/churn/k{:04}", i % 2000)), Batch::new())
            .unwrap();
    }
    let (p50, p99, max) = phase(&s, "before");
    println!(
        "APPLY without compaction: p50={:.3}ms p99={:.3}ms max={:.3}ms",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
    // Compact everything written so far, then purge it while writes go on.
    let t = Instant::now();
    s.compact(s.current_revision(), Batch::new())
        .unwrap()
        .unwrap();
    let logical = t.elapsed();
    let done = Arc::new(AtomicBool::new(false));
    let purger = {
        let (s, done) = (s.clone(), done.clone());
        std::thread::spawn(move || {
            let t = Instant::now();
            let mut steps = 0;
            while s.purge_step(1000).unwrap() {
                steps += 1;
            }
            done.store(true, Ordering::SeqCst);
            (t.elapsed(), steps + 1)
        })
    };
    let (p50, p99, max) = phase(&s, "during");
    let purging_at_end = !done.load(Ordering::SeqCst);
    let (purge_time, steps) = purger.join().unwrap();
    println!(
        "APPLY during compaction: p50={:.3}ms p99={:.3}ms max={:.3}ms (compact itself {:.3}ms; \
         purge of {history} revisions: {steps} steps in {:.2}s; still purging when sampling ended: {purging_at_end})",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3,
        logical.as_secs_f64() * 1e3,
        purge_time.as_secs_f64(),
    );
}
