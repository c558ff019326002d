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
