//! Encryption at rest over real HTTPS: with an `aesgcm`, `aescbc` or `secretbox` provider
//! first, a Secret's data is nowhere in the data folder in the clear (a ConfigMap's is: the
//! search works), values carry kube's prefix, reads give it back, a replica restarted without
//! the key (or with a wrong one) answers a clear 500 instead of garbage, and one restarted
//! with it reads the Secret again. Keys rotate as kube documents it (add second, move first,
//! rewrite every Secret by GET and PUT, remove the old key), a config with a bad key does not
//! start, and a backup restored into a new folder reads back with the key.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;
use support::{free_port, stderr, stdout, Server};

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

/// Creates Secrets `names` in `default`, each with the value `<prefix><name><suffix>`
/// (base64), and returns (namespace, name, value) of each.
async fn create_secrets(
    s: &Server,
    c: &reqwest::Client,
    names: &[&'static str],
    prefix: &str,
    suffix: &str,
) -> Vec<(&'static str, &'static str, String)> {
    let mut written = Vec::new();
    for name in names {
        let v = b64(&format!("{prefix}{name}{suffix}"));
        let r = s
            .json(
                c,
                Method::POST,
                "/api/v1/namespaces/default/secrets",
                Some(secret(name, &v)),
            )
            .await;
        assert_eq!(r.code.as_u16(), 201, "{}", r.body);
        written.push(("default", *name, v));
    }
    written
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

/// A second 32-byte key (the same name as `KEY` in the wrong-key test).
const KEY2: &str = "OTEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

/// A provider entry with `keys` (name, base64 secret) in order.
fn keyed(kind: &str, keys: &[(&str, &str)]) -> String {
    let mut s = format!("  - {kind}:\n      keys:\n");
    for (name, secret) in keys {
        s.push_str(&format!("      - name: {name}\n        secret: {secret}\n"));
    }
    s
}

fn secret(name: &str, b64: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
           "data": {"v": b64}})
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A Secret written with `kind` first is ciphertext with kube's prefix and reads back.
async fn at_rest_with(kind: &str) {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    std::fs::write(
        &cfg,
        config(&(keyed(kind, &[("key1", KEY)]) + "  - identity: {}\n")),
    )
    .unwrap();
    let s = Server::start_with(&["--encryption-provider-config", cfg.to_str().unwrap()]);
    let c = s.client();
    let marker = b64(&format!("{kind}-plaintext-marker-5521"));
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            Some(secret("db", &marker)),
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
                        "data": {"note": format!("visible-{kind}-8813")}}),
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
    assert_eq!(r.body["data"]["v"], marker.as_str(), "{}", r.body);
    assert_eq!(
        s.ok(&["get", "secret", "db", "-o", "jsonpath={.data.v}"]),
        marker
    );
    let data = s.dir.path();
    assert!(found(data, format!("visible-{kind}-8813").as_bytes()));
    assert!(
        !found(data, marker.as_bytes()),
        "the secret is in the clear"
    );
    let prefix = format!("k8s:enc:{kind}:v1:key1:");
    assert!(
        found(data, prefix.as_bytes()),
        "no {prefix} in the data folder"
    );
}

#[tokio::test]
async fn aescbc_secrets_are_ciphertext_at_rest() {
    at_rest_with("aescbc").await;
}

#[tokio::test]
async fn secretbox_secrets_are_ciphertext_at_rest() {
    at_rest_with("secretbox").await;
}

/// Every Secret of the cluster, as `kubectl get secrets -A -o json` lists them.
async fn all_secrets(s: &Server, c: &reqwest::Client) -> Vec<serde_json::Value> {
    let r = s.json(c, Method::GET, "/api/v1/secrets", None).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    r.body["items"].as_array().cloned().unwrap_or_default()
}

/// kube's documented rotation with `aescbc`: key1; key2 added second (restart); key2 moved
/// first (restart); every Secret rewritten by GET and PUT back (`kubectl get secrets -A -o
/// json | kubectl replace -f -`), which rewrites unchanged objects too; key1 removed
/// (restart): every Secret still reads.
#[tokio::test]
async fn keys_rotate_as_kube_documents() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    let write = |keys: &[(&str, &str)]| {
        std::fs::write(&cfg, config(&keyed("aescbc", keys))).unwrap();
    };
    write(&[("key1", KEY)]);
    let mut s = Server::start_with(&["--encryption-provider-config", cfg.to_str().unwrap()]);
    let c = s.client();
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces",
            Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let mut written = Vec::new();
    for (ns, name) in [("default", "a"), ("default", "b"), ("other", "c")] {
        let v = b64(&format!("rotation-{ns}-{name}"));
        let r = s
            .json(
                &c,
                Method::POST,
                &format!("/api/v1/namespaces/{ns}/secrets"),
                Some(secret(name, &v)),
            )
            .await;
        assert_eq!(r.code.as_u16(), 201, "{}", r.body);
        written.push((ns, name, v));
    }
    let key2_prefix = b"k8s:enc:aescbc:v1:key2:";
    assert!(found(s.dir.path(), b"k8s:enc:aescbc:v1:key1:"));
    assert!(!found(s.dir.path(), key2_prefix));

    // key2 second: key1 still writes, both read.
    write(&[("key1", KEY), ("key2", KEY2)]);
    s.restart();
    let c = s.client();
    read_all(&s, &c, &written).await;
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            Some(secret("d", &b64("rotation-default-d"))),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    written.push(("default", "d", b64("rotation-default-d")));
    assert!(!found(s.dir.path(), key2_prefix), "key2 wrote while second");

    // key2 first: it writes; every Secret is rewritten unchanged.
    write(&[("key2", KEY2), ("key1", KEY)]);
    s.restart();
    let c = s.client();
    read_all(&s, &c, &written).await;
    for item in all_secrets(&s, &c).await {
        let ns = item["metadata"]["namespace"].as_str().unwrap().to_string();
        let name = item["metadata"]["name"].as_str().unwrap().to_string();
        let before = item["metadata"]["resourceVersion"].clone();
        let r = s
            .json(
                &c,
                Method::PUT,
                &format!("/api/v1/namespaces/{ns}/secrets/{name}"),
                Some(item),
            )
            .await;
        assert_eq!(r.code.as_u16(), 200, "{ns}/{name}: {}", r.body);
        assert_ne!(
            r.body["metadata"]["resourceVersion"], before,
            "{ns}/{name} was not rewritten"
        );
    }
    assert!(found(s.dir.path(), key2_prefix), "no value names key2");
    // Rewritten again, an unchanged Secret is a no-op now (its value is current).
    let item = all_secrets(&s, &c).await.remove(0);
    let before = item["metadata"]["resourceVersion"].clone();
    let path = format!(
        "/api/v1/namespaces/{}/secrets/{}",
        item["metadata"]["namespace"].as_str().unwrap(),
        item["metadata"]["name"].as_str().unwrap()
    );
    let r = s.json(&c, Method::PUT, &path, Some(item)).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_eq!(r.body["metadata"]["resourceVersion"], before);

    // key1 removed: everything reads with key2 alone.
    write(&[("key2", KEY2)]);
    s.restart();
    let c = s.client();
    read_all(&s, &c, &written).await;
    let listed = all_secrets(&s, &c).await;
    for (ns, name, _) in &written {
        assert!(
            listed
                .iter()
                .any(|i| i["metadata"]["namespace"] == *ns && i["metadata"]["name"] == *name),
            "{ns}/{name} missing from the list"
        );
    }
}

async fn read_all(s: &Server, c: &reqwest::Client, written: &[(&str, &str, String)]) {
    for (ns, name, v) in written {
        let r = s
            .json(
                c,
                Method::GET,
                &format!("/api/v1/namespaces/{ns}/secrets/{name}"),
                None,
            )
            .await;
        assert_eq!(r.code.as_u16(), 200, "{ns}/{name}: {}", r.body);
        assert_eq!(r.body["data"]["v"], v.as_str(), "{ns}/{name}");
    }
}

/// A wrong key of the right name (secretbox, authenticated) is a 500 Status naming the
/// decryption failure, never garbage and never the data.
#[tokio::test]
async fn a_wrong_key_is_a_clear_error() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    std::fs::write(&cfg, config(&keyed("secretbox", &[("key1", KEY)]))).unwrap();
    let mut s = Server::start_with(&["--encryption-provider-config", cfg.to_str().unwrap()]);
    let c = s.client();
    let v = b64("wrong-key-marker");
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            Some(secret("db", &v)),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);

    std::fs::write(&cfg, config(&keyed("secretbox", &[("key1", KEY2)]))).unwrap();
    s.restart();
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
    assert_eq!(r.body["kind"], "Status", "{}", r.body);
    assert_eq!(r.body["reason"], "InternalError", "{}", r.body);
    let msg = r.body["message"].as_str().unwrap_or("");
    assert!(
        msg.contains("failed to decrypt the value with key \"key1\" of the secretbox provider"),
        "{msg}"
    );
    assert!(!msg.contains(&v) && !msg.contains(KEY2), "{msg}");
    // Other resources are unaffected.
    let r = s
        .json(&c, Method::GET, "/api/v1/namespaces/default", None)
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
}

/// A config with a bad key does not start, with kube's text and without the secret.
#[test]
fn a_bad_key_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("encryption.yaml");
    // 8 bytes ("password") where aescbc takes 16, 24 or 32.
    std::fs::write(&cfg, config(&keyed("aescbc", &[("key1", "cGFzc3dvcmQ=")]))).unwrap();
    let out = Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--listen")
        .arg(format!("127.0.0.1:{}", free_port()))
        .arg("--encryption-provider-config")
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!out.status.success(), "started: {}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("resources[0].providers[0].aescbc.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 8, expected one of [16 24 32]"),
        "{err}"
    );
    assert!(!err.contains("cGFzc3dvcmQ"), "{err}");
}

/// A replica on an existing data folder; killed on drop.
struct Replica {
    child: Child,
    kubeconfig: std::path::PathBuf,
}

impl Replica {
    fn start(dir: &Path, extra: &[&str]) -> Replica {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rafter"))
            .arg("serve")
            .arg("--data-dir")
            .arg(dir)
            .arg("--listen")
            .arg(format!("127.0.0.1:{}", free_port()))
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rafter");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if line.contains("kubeconfig written") {
                    let _ = tx.send(());
                }
            }
        });
        let r = Replica {
            child,
            kubeconfig: dir.join("admin.kubeconfig"),
        };
        rx.recv_timeout(Duration::from_secs(60))
            .expect("rafter did not start within 60 s");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !support::kubectl_env(&r.kubeconfig, &["get", "--raw", "/readyz"], &[])
            .status
            .success()
        {
            assert!(Instant::now() < deadline, "restored replica not ready");
            std::thread::sleep(Duration::from_millis(200));
        }
        r
    }

    fn kubectl(&self, args: &[&str]) -> std::process::Output {
        support::kubectl_env(&self.kubeconfig, args, &[])
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn admin_ok(args: &[&str]) -> String {
    let out = Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .arg("admin")
        .args(args)
        .output()
        .expect("run rafter admin");
    assert!(
        out.status.success(),
        "rafter admin {args:?}: {}{}",
        stderr(&out),
        stdout(&out)
    );
    stdout(&out)
}

/// The stored value of `key` in a backup file.
fn backup_value(file: &Path, key: &str) -> Vec<u8> {
    use base64::Engine;
    let bytes = std::fs::read(file).unwrap();
    let body = bytes
        .strip_prefix(b"rafter-backup v1\n".as_slice())
        .expect("backup magic");
    let body: serde_json::Value = serde_json::from_slice(body).unwrap();
    let dec = |v: &serde_json::Value| {
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or(""))
            .unwrap_or_default()
    };
    body["kvs"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|kv| dec(&kv["key"]) == key.as_bytes())
        .map(|kv| dec(&kv["value"]))
        .unwrap_or_else(|| panic!("{key} is not in the backup"))
}

/// A backup holds ciphertext only; restored into a new folder, a replica with the key reads
/// the Secret, one without it answers 500.
#[tokio::test]
async fn readable_after_backup_and_restore() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    let cfg_s = cfg.to_str().unwrap().to_string();
    std::fs::write(&cfg, config(&keyed("aescbc", &[("key1", KEY)]))).unwrap();
    let endpoint = format!("127.0.0.1:{}", free_port());
    let s = Server::start_with(&[
        "--admin-listen",
        &endpoint,
        "--encryption-provider-config",
        &cfg_s,
    ]);
    let c = s.client();
    let v = b64("backup-plaintext-marker-7730");
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            Some(secret("db", &v)),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);

    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("rafter.backup");
    let f = file.to_str().unwrap();
    admin_ok(&[
        "backup",
        "--out",
        f,
        "--endpoint",
        &endpoint,
        "--data-dir",
        s.dir.path().to_str().unwrap(),
    ]);
    // The backup is a magic line and JSON whose keys and values are base64: the Secret's
    // stored value is sealed.
    let stored = backup_value(&file, "/core/secrets/default/db");
    assert!(stored.starts_with(b"k8s:enc:aescbc:v1:key1:"));
    assert!(!stored.windows(v.len()).any(|w| w == v.as_bytes()));
    drop(s);

    let restored = work.path().join("restored");
    let r = restored.to_str().unwrap();
    admin_ok(&["restore", "--backup", f, "--data-dir", r, "--node-id", "1"]);
    {
        let rep = Replica::start(&restored, &["--encryption-provider-config", &cfg_s]);
        let out = rep.kubectl(&["get", "secret", "db", "-o", "jsonpath={.data.v}"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), v);
    }
    // Without the key, the restored Secret is an error, not garbage.
    std::fs::write(&cfg, config("  - identity: {}\n")).unwrap();
    let rep = Replica::start(&restored, &["--encryption-provider-config", &cfg_s]);
    let out = rep.kubectl(&["get", "secret", "db", "-o", "jsonpath={.data.v}"]);
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("no matching prefix found"),
        "{}",
        stderr(&out)
    );
}

/// Key rotation with the storage migration doing the rewrite: `rafter admin migrate-storage
/// --resource secrets` seals every Secret with the new first key, after which the old key
/// can go.
#[tokio::test]
async fn keys_rotate_with_the_storage_migration() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    let write = |keys: &[(&str, &str)]| {
        std::fs::write(&cfg, config(&keyed("secretbox", keys))).unwrap();
    };
    write(&[("key1", KEY)]);
    let admin_port = support::free_port();
    let mut s = Server::start_with(&[
        "--encryption-provider-config",
        cfg.to_str().unwrap(),
        "--admin-listen",
        &format!("127.0.0.1:{admin_port}"),
    ]);
    let c = s.client();
    let written = create_secrets(&s, &c, &["m1", "m2", "m3"], "migrated-", "").await;
    write(&[("key2", KEY2), ("key1", KEY)]);
    s.restart();
    let out = std::process::Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_rafter"))
        .args(["admin", "migrate-storage", "--resource", "secrets"])
        .args(["--endpoint", &format!("127.0.0.1:{admin_port}")])
        .args(["--data-dir", s.dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert!(
        support::stdout(&out).contains("secrets: done,"),
        "{}",
        support::stdout(&out)
    );
    write(&[("key2", KEY2)]);
    s.restart();
    let c = s.client();
    read_all(&s, &c, &written).await;
}

/// A KMS v2 plugin for the tests, served on a Unix socket in its own folder by its own
/// thread: it "encrypts" a seed as `<key id>|` and the seed XORed with a byte, its key ID can
/// change, and it can be stopped and started again on the same socket.
struct KmsPlugin {
    dir: tempfile::TempDir,
    key_id: std::sync::Arc<std::sync::Mutex<String>>,
    decrypts: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: Option<(
        tokio::sync::oneshot::Sender<()>,
        std::thread::JoinHandle<()>,
    )>,
}

mod kms_plugin {
    use rafter::registry::encryption::kms::proto::key_management_service_server::KeyManagementService;
    use rafter::registry::encryption::kms::proto::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use tonic::{Request, Response, Status};

    pub struct Service {
        pub key_id: Arc<Mutex<String>>,
        pub decrypts: Arc<AtomicUsize>,
    }

    fn xor(b: &[u8]) -> Vec<u8> {
        b.iter().map(|c| c ^ 0xa5).collect()
    }

    #[tonic::async_trait]
    impl KeyManagementService for Service {
        async fn status(
            &self,
            _: Request<StatusRequest>,
        ) -> Result<Response<StatusResponse>, Status> {
            Ok(Response::new(StatusResponse {
                version: "v2".into(),
                healthz: "ok".into(),
                key_id: self.key_id.lock().unwrap().clone(),
            }))
        }
        async fn decrypt(
            &self,
            r: Request<DecryptRequest>,
        ) -> Result<Response<DecryptResponse>, Status> {
            self.decrypts.fetch_add(1, Ordering::SeqCst);
            let r = r.into_inner();
            let tag = format!("{}|", r.key_id);
            match r.ciphertext.strip_prefix(tag.as_bytes()) {
                Some(rest) => Ok(Response::new(DecryptResponse {
                    plaintext: xor(rest),
                })),
                None => Err(Status::invalid_argument("not a ciphertext of this plugin")),
            }
        }
        async fn encrypt(
            &self,
            r: Request<EncryptRequest>,
        ) -> Result<Response<EncryptResponse>, Status> {
            let r = r.into_inner();
            let key_id = self.key_id.lock().unwrap().clone();
            let mut ciphertext = format!("{key_id}|").into_bytes();
            ciphertext.extend(xor(&r.plaintext));
            Ok(Response::new(EncryptResponse {
                ciphertext,
                key_id,
                annotations: [("version.kms.example.com".to_string(), b"1".to_vec())].into(),
            }))
        }
    }
}

impl KmsPlugin {
    fn new(key_id: &str) -> KmsPlugin {
        let mut p = KmsPlugin {
            dir: tempfile::tempdir().unwrap(),
            key_id: std::sync::Arc::new(std::sync::Mutex::new(key_id.to_string())),
            decrypts: Default::default(),
            stop: None,
        };
        p.start();
        p
    }

    fn socket(&self) -> std::path::PathBuf {
        self.dir.path().join("kms.sock")
    }

    fn start(&mut self) {
        use rafter::registry::encryption::kms::proto::key_management_service_server::KeyManagementServiceServer;
        let path = self.socket();
        let _ = std::fs::remove_file(&path);
        let service = kms_plugin::Service {
            key_id: self.key_id.clone(),
            decrypts: self.decrypts.clone(),
        };
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::UnixListener::bind(&path).unwrap();
                ready_tx.send(()).unwrap();
                let incoming = futures::stream::unfold(listener, |l| async move {
                    let conn = l.accept().await.map(|(s, _)| s);
                    Some((conn, l))
                });
                let server = tonic::transport::Server::builder()
                    .add_service(KeyManagementServiceServer::new(service))
                    .serve_with_incoming(incoming);
                tokio::select! {
                    _ = server => {}
                    _ = rx => {}
                }
            });
            // Open connections end with the runtime: the plugin is gone.
            rt.shutdown_timeout(Duration::from_millis(200));
        });
        ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        self.stop = Some((tx, thread));
    }

    fn stop(&mut self) {
        if let Some((tx, thread)) = self.stop.take() {
            let _ = tx.send(());
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(self.socket());
    }

    fn set_key_id(&self, key_id: &str) {
        *self.key_id.lock().unwrap() = key_id.to_string();
    }
}

impl Drop for KmsPlugin {
    fn drop(&mut self) {
        self.stop();
    }
}

fn kms_config(plugin: &KmsPlugin) -> String {
    config(&format!(
        "  - kms:\n      apiVersion: v2\n      name: testkms\n      endpoint: unix://{}\n      timeout: 2s\n  - identity: {{}}\n",
        plugin.socket().display()
    ))
}

/// The key ID a stored `kms` v2 value names (its `EncryptedObject`).
fn stored_key_id(stored: &[u8]) -> String {
    use prost::Message;
    let body = stored
        .strip_prefix(b"k8s:enc:kms:v2:testkms:".as_slice())
        .expect("the kms v2 prefix");
    let obj = rafter::registry::encryption::kms::proto::EncryptedObject::decode(body).unwrap();
    assert_eq!(
        obj.encrypted_dek_source_type, 1,
        "HKDF_SHA256_XNONCE_AES_GCM_SEED"
    );
    assert_eq!(obj.annotations["version.kms.example.com"], b"1");
    obj.key_id
}

/// A `kms` v2 provider first: Secrets are kube's envelope at rest, read back (after a restart
/// through the plugin's Decrypt); after the plugin's key ID changes, an unchanged Secret
/// PUT back is rewritten (stale) and `rafter admin migrate-storage` rewrites the others
/// under the new key ID.
#[tokio::test]
async fn kms_v2_secrets_are_ciphertext_at_rest_and_follow_the_key_id() {
    let plugin = KmsPlugin::new("key-1");
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    std::fs::write(&cfg, kms_config(&plugin)).unwrap();
    let endpoint = format!("127.0.0.1:{}", free_port());
    let mut s = Server::start_with(&[
        "--encryption-provider-config",
        cfg.to_str().unwrap(),
        "--admin-listen",
        &endpoint,
    ]);
    let c = s.client();
    let written = create_secrets(
        &s,
        &c,
        &["db", "cache", "queue"],
        "kms-plaintext-marker-",
        "-4417",
    )
    .await;
    read_all(&s, &c, &written).await;
    let data = s.dir.path();
    for (_, _, v) in &written {
        assert!(!found(data, v.as_bytes()), "a secret is in the clear");
    }
    assert!(
        found(data, b"k8s:enc:kms:v2:testkms:"),
        "no kms v2 prefix stored"
    );
    assert_eq!(plugin.decrypts.load(std::sync::atomic::Ordering::SeqCst), 0);

    // Restarted: the seed is asked of the plugin (then cached) and every Secret reads.
    s.restart();
    let c = s.client();
    read_all(&s, &c, &written).await;
    assert!(plugin.decrypts.load(std::sync::atomic::Ordering::SeqCst) >= 1);

    // The plugin's key changes; a replica picks the key ID up from Status (every minute, or
    // at a start) and seals with a new seed.
    plugin.set_key_id("key-2");
    s.restart();
    let c = s.client();
    read_all(&s, &c, &written).await;
    let path = "/api/v1/namespaces/default/secrets/db";
    let item = s.json(&c, Method::GET, path, None).await.body;
    let before = item["metadata"]["resourceVersion"].clone();
    let r = s.json(&c, Method::PUT, path, Some(item)).await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);
    assert_ne!(
        r.body["metadata"]["resourceVersion"], before,
        "a value of the old key ID was not rewritten"
    );
    // Current now: PUT back unchanged is a no-op.
    let item = r.body.clone();
    let before = item["metadata"]["resourceVersion"].clone();
    let r = s.json(&c, Method::PUT, path, Some(item)).await;
    assert_eq!(r.body["metadata"]["resourceVersion"], before, "{}", r.body);

    let backup = |name: &str| {
        let work = tempfile::tempdir().unwrap();
        let file = work.path().join("rafter.backup");
        admin_ok(&[
            "backup",
            "--out",
            file.to_str().unwrap(),
            "--endpoint",
            &endpoint,
            "--data-dir",
            s.dir.path().to_str().unwrap(),
        ]);
        stored_key_id(&backup_value(
            &file,
            &format!("/core/secrets/default/{name}"),
        ))
    };
    assert_eq!(backup("db"), "key-2");
    assert_eq!(backup("cache"), "key-1");
    admin_ok(&[
        "migrate-storage",
        "--resource",
        "secrets",
        "--endpoint",
        &endpoint,
        "--data-dir",
        s.dir.path().to_str().unwrap(),
    ]);
    for (_, name, _) in &written {
        assert_eq!(backup(name), "key-2", "{name} not rewritten");
    }
    read_all(&s, &c, &written).await;
}

/// The plugin down: Secrets whose seed is cached still read; a replica started while it is
/// down answers writes (and reads) of Secrets with a clear 500 Status, serves everything
/// else, and seals again once the plugin is back.
#[tokio::test]
async fn kms_v2_plugin_down_fails_writes_clearly() {
    let mut plugin = KmsPlugin::new("key-1");
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("encryption.yaml");
    std::fs::write(&cfg, kms_config(&plugin)).unwrap();
    let mut s = Server::start_with(&["--encryption-provider-config", cfg.to_str().unwrap()]);
    let c = s.client();
    let v = b64("kms-down-marker-a");
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            Some(secret("a", &v)),
        )
        .await;
    assert_eq!(r.code.as_u16(), 201, "{}", r.body);
    let written = vec![("default", "a", v.clone())];

    plugin.stop();
    read_all(&s, &c, &written).await;

    s.restart();
    let c = s.client();
    let w = b64("kms-down-marker-b");
    let r = s
        .json(
            &c,
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            Some(secret("b", &w)),
        )
        .await;
    assert_eq!(r.code.as_u16(), 500, "{}", r.body);
    assert_eq!(r.body["kind"], "Status", "{}", r.body);
    assert_eq!(r.body["reason"], "InternalError", "{}", r.body);
    let msg = r.body["message"].as_str().unwrap_or("");
    assert!(
        msg.contains("failed to encrypt the value with the kms provider \"testkms\"")
            && msg.contains("not ready"),
        "{msg}"
    );
    assert!(!msg.contains(&w), "{msg}");
    let r = s
        .json(
            &c,
            Method::GET,
            "/api/v1/namespaces/default/secrets/a",
            None,
        )
        .await;
    assert_eq!(r.code.as_u16(), 500, "{}", r.body);
    let msg = r.body["message"].as_str().unwrap_or("");
    assert!(msg.contains("kms provider \"testkms\""), "{msg}");
    assert!(!msg.contains(&v), "{msg}");
    let r = s
        .json(&c, Method::GET, "/api/v1/namespaces/default", None)
        .await;
    assert_eq!(r.code.as_u16(), 200, "{}", r.body);

    // Back: the next Status (every 10 s while failing) loads a seed; writes and reads work.
    plugin.start();
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let r = s
            .json(
                &c,
                Method::POST,
                "/api/v1/namespaces/default/secrets",
                Some(secret("b", &w)),
            )
            .await;
        if r.code.as_u16() == 201 {
            break;
        }
        assert_eq!(r.code.as_u16(), 500, "{}", r.body);
        assert!(Instant::now() < deadline, "never sealed again: {}", r.body);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    read_all(&s, &c, &[("default", "a", v), ("default", "b", w)]).await;
    let names: Vec<String> = all_secrets(&s, &c)
        .await
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    // Lists too: the watch cache reloads what it could not open while the plugin was down.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut names = names;
    while names.len() < 2 {
        assert!(Instant::now() < deadline, "listed: {names:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        names = all_secrets(&s, &c)
            .await
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect();
    }
    names.sort();
    assert_eq!(names, ["a", "b"]);
}
