//! Observability of one replica over HTTPS against the real binary: `--logging-format`
//! (JSON lines with kube's keys on stderr, kube's refusal of an unknown format).

mod support;

use support::Server;

/// Every stderr line of a replica started with `--logging-format=json` is one JSON object
/// with kube's keys.
#[tokio::test]
async fn json_logs_are_one_object_per_line() {
    let s = Server::start_wrapped(
        &["env", "RAFTER_LOG=info"],
        &["--logging-format=json"],
        true,
    );
    // A refused credential is logged at info.
    let r = s
        .anonymous_client()
        .get(format!("{}/api/v1/namespaces", s.url))
        .bearer_auth("not-a-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let path = s.stderr_path.clone().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("authentication failed") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let lines: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(!lines.is_empty(), "no log lines");
    for l in &lines {
        assert!(l["ts"].as_f64().is_some_and(|t| t > 1.6e9), "{l}");
        assert!(l["msg"].is_string(), "{l}");
        assert!(l["level"].is_string(), "{l}");
    }
    let refused = lines
        .iter()
        .find(|l| {
            l["msg"]
                .as_str()
                .is_some_and(|m| m.contains("authentication failed"))
        })
        .unwrap_or_else(|| panic!("no authentication line in {text}"));
    assert_eq!(refused["v"], 0, "{refused}");
    assert_eq!(refused["level"], "info");
    assert!(
        !text.contains("not-a-token"),
        "a credential reached the log: {text}"
    );
}

/// An unknown format stops the start with kube's text.
#[test]
fn unknown_logging_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rafter"))
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.path())
        .args(["--listen", "127.0.0.1:0", "--logging-format", "xml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"format: Invalid value: "xml": Unsupported log format"#),
        "{err}"
    );
    assert!(
        !dir.path().join("ca.crt").exists(),
        "nothing is created before the flags are checked"
    );
}
