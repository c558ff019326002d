//! Snapshot figures (not a timed test; `cargo bench --bench snapshot`): a keyspace of 50k
//! keys of 4 KiB, each written twice (live keys, history and index: ~600 MB of records),
//! dumped to a file and restored into an empty store, as a raft snapshot is built and
//! installed. Prints throughput and how far the process's resident memory rose above its
//! level before each phase: streaming keeps that bounded (RocksDB memtables and buffers),
//! far below the keyspace's size. `RAFTER_BENCH_SMALL=1` divides the key count by 10.

mod common;

use std::io::{BufReader, BufWriter};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rafter::storage::engine::{Batch, Engine};
use rafter::storage::mvcc::{Mvcc, Op, Txn};

/// Runs `f`, sampling RSS every 5 ms; returns its result, the time it took and the peak RSS
/// above the level at its start (MiB).
fn measured<T>(f: impl FnOnce() -> T) -> (T, Duration, u64) {
    let base = common::rss_kib(std::process::id());
    let peak = Arc::new(AtomicU64::new(base));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(common::rss_kib(std::process::id()), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let t = Instant::now();
    let out = f();
    let took = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let rise = peak.load(Ordering::Relaxed).saturating_sub(base) / 1024;
    (out, took, rise)
}

fn main() {
    let small = std::env::var_os("RAFTER_BENCH_SMALL").is_some();
    let keys: usize = if small { 5_000 } else { 50_000 };
    let value = vec![b'x'; 4096];
    let dir = tempfile::tempdir().unwrap();
    let a = Mvcc::open(Engine::open(&dir.path().join("a")).unwrap()).unwrap();
    for round in 0..2 {
        for chunk in (0..keys).collect::<Vec<_>>().chunks(100) {
            let success = chunk
                .iter()
                .map(|i| Op::Put {
                    key: format!("/registry/configmaps/bench/k{i:06}-{round}").into_bytes(),
                    value: value.clone(),
                })
                .collect();
            a.apply_txn(
                &Txn {
                    compares: vec![],
                    success,
                },
                Batch::new(),
            )
            .unwrap();
        }
    }
    let path = dir.path().join("snap");
    let (header, took, rise) = measured(|| {
        let mut w = BufWriter::new(std::fs::File::create(&path).unwrap());
        a.dump(&[], &mut w).unwrap()
    });
    let size = std::fs::metadata(&path).unwrap().len();
    let mib = size as f64 / (1 << 20) as f64;
    println!(
        "DUMP keys={} revision={} size={mib:.0}MiB time={:.2}s rate={:.0}MiB/s rss_rise={rise}MiB",
        2 * keys,
        header.revision,
        took.as_secs_f64(),
        mib / took.as_secs_f64()
    );
    drop(a);
    let b = Mvcc::open(Engine::open(&dir.path().join("b")).unwrap()).unwrap();
    let ((), took, rise) = measured(|| {
        let f = std::fs::File::open(&path).unwrap();
        rafter::storage::dump::verify(BufReader::new(f)).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        b.restore_dump(BufReader::new(f), Batch::new(), Batch::new())
            .unwrap();
    });
    println!(
        "INSTALL (verify + restore) size={mib:.0}MiB time={:.2}s rate={:.0}MiB/s rss_rise={rise}MiB",
        took.as_secs_f64(),
        mib / took.as_secs_f64()
    );
    assert_eq!(b.current_revision(), header.revision);
}
