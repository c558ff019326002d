//! Encryption at rest over real HTTPS: with an `aesgcm` provider first, a Secret's data is
//! nowhere in the data folder in the clear (a ConfigMap's is: the search works), reads give
//! it back, a replica restarted without the key answers a clear 500 instead of garbage, and
//! one restarted with it reads the Secret again.

mod support;

use reqwest::Method;
use serde_json::json;
use support::Server;

const KEY: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

fn config(providers: &str) -> String {
    format!(
        "apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
{providers}"
    )
}

fn with_key() -> String {
    config(&format!(
        "  - aesgcm:\n      keys:\n      - name: key1\n        secret: {KEY}\n  - identity: {{}}\n"
    ))
}

/// Whether any file under `dir` contains `needle`.
fn found(dir: &std::path::Path, needle: &[u8]) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        if p.is_dir() {
            found(&p, needle)
        } else {
            std::fs::read(&p)
                .map(|b| b.windows(needle.len()).any(|w| w == needle))
                .unwrap_or(false)
        }
    })
}

#[tokio::test]
async fn secrets_are_ciphertext_at_rest() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    std::fs::write(&cfg, with_key()).unwrap();
    let mut s = Server::start_with(&["--encryption-provider-config", cfg.to_str().unwrap()]);
    let c = s.client();
    // base64 of "hunter2-plaintext-marker"
    let secret_b64 = "aHVudGVyMi1wbGFpbnRleHQtbWFya2Vy";
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            Some(
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
                        "data": {"password": secret_b64}}),
            ),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            Some(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"},
                        "data": {"note": "visible-marker-8813"}}),
            ),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/secrets/db",
            None,
        )
        .await;
    assert_eq!(r.body["data"]["password"], secret_b64);
    let out = s.ok(&["get", "secret", "db", "-o", "jsonpath={.data.password}"]);
    assert_eq!(out, secret_b64);

    let data = s.dir.path();
    assert!(
        found(data, b"visible-marker-8813"),
        "the search finds plaintext"
    );
    assert!(
        !found(data, secret_b64.as_bytes()),
        "the secret is in the clear"
    );
    assert!(
        found(data, b"k8s:enc:aesgcm:v1:key1:"),
        "kube's prefix is stored"
    );

    // Restarted without the key: a clear error, never garbage.
    std::fs::write(&cfg, config("  - identity: {}\n")).unwrap();
    s.restart();
    s.wait_ready();
    let c = s.client();
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/secrets/db",
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 500, "{}", r.body);
    let msg = r.body["message"].as_str().unwrap_or("");
    assert!(msg.contains("no matching prefix found"), "{msg}");
    assert!(!msg.contains(secret_b64), "{msg}");
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/configmaps/plain",
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);

    // With the key again, the secret reads back.
    std::fs::write(&cfg, with_key()).unwrap();
    s.restart();
    s.wait_ready();
    let c = s.client();
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/secrets/db",
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["data"]["password"], secret_b64);
}

/// `--encryption-provider-config-automatic-reload`: a running replica picks up a new first
/// provider (new writes are sealed; objects written before stay readable through identity),
/// and a broken file keeps the running configuration.
#[tokio::test]
async fn the_config_reloads_when_it_changes() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    std::fs::write(&cfg, config("  - identity: {}\n")).unwrap();
    let s = Server::start_with(&[
        "--encryption-provider-config",
        cfg.to_str().unwrap(),
        "--encryption-provider-config-automatic-reload",
    ]);
    let c = s.client();
    let secret = |name: &str, b64: &str| {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
               "data": {"v": b64}})
    };
    let before = "YmVmb3JlLXJlbG9hZC1tYXJrZXI="; // "before-reload-marker"
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            Some(secret("a", before)),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    assert!(
        found(s.dir.path(), before.as_bytes()),
        "identity stores plaintext"
    );

    std::fs::write(&cfg, with_key()).unwrap();
    // Each round writes a fresh marker: once the reload is in, it is sealed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut n = 0;
    loop {
        n += 1;
        use base64::Engine;
        let marker =
            base64::engine::general_purpose::STANDARD.encode(format!("after-reload-marker-{n}"));
        let name = format!("b{n}");
        let r = s
            .json(
                &c,
                Method::POST,
                "/api/v1/namespaces/default/secrets",
                Some(secret(&name, &marker)),
            )
            .await;
        assert_eq!(r.code.as_u16(), 201, "{}", r.body);
        if !found(s.dir.path(), marker.as_bytes()) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never reloaded");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/secrets/a",
            None,
        )
        .await;
    assert_eq!(r.body["data"]["v"], before, "read through identity");

    // A broken file keeps the running configuration.
    std::fs::write(&cfg, "kind: Nonsense\n").unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/secrets/a",
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
}
