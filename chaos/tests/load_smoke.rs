//! The performance bench in CI: `load --smoke` runs for a few seconds against one replica of
//! the debug `rafter` binary of the same target folder (or `RAFTER_BIN`) and, beside it, a
//! 3-member etcd started by `../shared/bench/etcd3.sh`. It checks only that the bench runs
//! and prints its table: its figures mean nothing (debug build, tiny runs). Without the
//! rafter binary, HAProxy, etcd or ../shared the test skips locally and fails under CI.

use std::path::PathBuf;
use std::process::Command;

fn rafter_bin() -> Option<PathBuf> {
    if let Some(b) = std::env::var_os("RAFTER_BIN") {
        return Some(PathBuf::from(b)).filter(|b| b.exists());
    }
    let me = PathBuf::from(env!("CARGO_BIN_EXE_load"));
    let bin = me.parent()?.join("rafter");
    bin.exists().then_some(bin)
}

fn etcd_script() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script = root.parent()?.parent()?.join("shared/bench/etcd3.sh");
    let have_etcd = Command::new("sh")
        .args(["-c", "command -v etcd && command -v etcdctl"])
        .output()
        .is_ok_and(|o| o.status.success());
    (script.exists() && have_etcd).then_some(script)
}

fn missing(what: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("{what} is required under CI");
    }
    eprintln!("skipping: {what} not found");
}

#[test]
fn the_bench_runs_and_prints_its_table() {
    let Some(bin) = rafter_bin() else {
        return missing("the rafter binary");
    };
    let have_haproxy = Command::new("sh")
        .args(["-c", "command -v haproxy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_haproxy {
        return missing("haproxy");
    }
    let etcd = etcd_script();
    if etcd.is_none() {
        missing("etcd (Debian etcd-server, etcd-client) and ../shared/bench/etcd3.sh");
    }
    // Ports of this run's etcd away from other tests' (and from a developer's own etcd),
    // below the kernel's ephemeral range (32768 and up), where an outgoing connection could
    // take one between this check and etcd's bind, and below cluster/up.sh's (20000 and up).
    let free = |p: u32| std::net::TcpListener::bind(("127.0.0.1", p as u16)).is_ok();
    let base = (0..500)
        .map(|i| 12_000 + ((std::process::id() + i) % 500) * 10)
        .find(|b| [1, 2, 3, 101, 102, 103].iter().all(|o| free(b + o)))
        .expect("free ports for etcd");
    let out = Command::new("timeout")
        .arg("240")
        .arg(env!("CARGO_BIN_EXE_load"))
        .arg("--smoke")
        .arg("--rafter-bin")
        .arg(&bin)
        .args(
            etcd.iter()
                .flat_map(|s| [PathBuf::from("--etcd-script"), s.clone()]),
        )
        .env("ETCD_BASE_PORT", base.to_string())
        .output()
        .expect("run the load binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "load failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("rafter x1"),
        "no rafter column:\n{stdout}\n{stderr}"
    );
    for row in [
        "creates,",
        "linearizable GETs",
        "consistent LIST, JSON",
        "RSS per member",
    ] {
        assert!(stdout.contains(row), "no {row:?} row:\n{stdout}\n{stderr}");
    }
    if etcd.is_some() {
        assert!(
            stdout.contains("etcd x3"),
            "no etcd column:\n{stdout}\n{stderr}"
        );
        assert!(
            stdout.contains("/ etcd x3"),
            "no ratios:\n{stdout}\n{stderr}"
        );
    }
}
