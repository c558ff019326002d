//! Test-only fault modes: deliberate misbehaviour that tests and the chaos harness turn on
//! with the hidden `--test-fault` flag, to prove that their checkers and the server's own
//! supervision catch it. Nothing sets them in normal operation; every mode is named here.
//!
//! - `stale-reads`: linearizable reads skip the ReadIndex round and serve local state (the
//!   harness's negative control: its linearizability checker must flag it).
//! - `watch-dispatcher-panic`: the watch cache's dispatcher panics, once, on the first batch
//!   that writes a key containing `panic-dispatcher` (its supervisor must restart it).
//! - `lose-unsynced`: the storage engine keeps write-ahead-log bytes in the process until an
//!   fsync asks for them (RocksDB's manual WAL flush), so a `kill -9` loses every write not
//!   yet fsynced, as a machine crash loses the page cache. With kill faults it proves that
//!   nothing acknowledged depends on an unsynced write.
//! - `handler-panic`: a request for an object named `panic-handler` panics in its handler
//!   (the edge's recovery and the audit log's `Panic` stage must catch it).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The known modes.
pub const KNOWN: &[&str] = &[
    "stale-reads",
    "watch-dispatcher-panic",
    "lose-unsynced",
    "handler-panic",
];

static MODES: OnceLock<Vec<String>> = OnceLock::new();
static DISPATCHER_PANICKED: AtomicBool = AtomicBool::new(false);

/// Turns modes on for this process (first call wins). Unknown names are an error.
pub fn enable(modes: &[String]) -> Result<(), String> {
    for m in modes {
        if !KNOWN.contains(&m.as_str()) {
            return Err(format!(
                "unknown test fault {m:?} (known: {})",
                KNOWN.join(", ")
            ));
        }
    }
    if !modes.is_empty() {
        tracing::warn!("TEST FAULTS ENABLED: {}", modes.join(", "));
    }
    let _ = MODES.set(modes.to_vec());
    Ok(())
}

/// Whether a mode is on.
pub fn on(mode: &str) -> bool {
    MODES.get().is_some_and(|m| m.iter().any(|x| x == mode))
}

/// `watch-dispatcher-panic`, once per process, for a batch touching `keys`.
pub fn dispatcher_should_panic<'a>(mut keys: impl Iterator<Item = &'a [u8]>) -> bool {
    on("watch-dispatcher-panic")
        && keys.any(|k| k.windows(16).any(|w| w == b"panic-dispatcher"))
        && !DISPATCHER_PANICKED.swap(true, Ordering::SeqCst)
}

/// `handler-panic`: whether a request for the object `name` panics.
pub fn handler_should_panic(name: Option<&str>) -> bool {
    on("handler-panic") && name == Some("panic-handler")
}
