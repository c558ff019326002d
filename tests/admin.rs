//! The gRPC admin API through the real `rafter admin` CLI against a real replica: status,
//! snapshot, compaction, backup; offline restore into a new data folder served by a new
//! replica (same objects, same revision); mutual TLS enforcement.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{free_port, stderr, stdout, Server};

const BIN: &str = env!("CARGO_BIN_EXE_rafter");

/// Runs `rafter admin <args>` (bounded).
fn admin(args: &[&str]) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg(BIN)
        .arg("admin")
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run rafter admin")
}

fn admin_ok(args: &[&str]) -> String {
    let out = admin(args);
    assert!(
        out.status.success(),
        "rafter admin {args:?} failed: {}{}",
        stderr(&out),
        stdout(&out)
    );
    stdout(&out)
}

fn status_json(endpoint: &str, dir: &Path) -> serde_json::Value {
    let out = admin_ok(&[
        "status",
        "--endpoint",
        endpoint,
        "--data-dir",
        dir.to_str().unwrap(),
        "-o",
        "json",
    ]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("status JSON: {e}: {out}"))
}

/// A replica started on an existing data folder; killed on drop.
const GIZMO_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {teeth: {type: integer}}}
";

const GIZMO: &str = "apiVersion: example.com/v1
kind: Gizmo
metadata: {name: g1, namespace: backup}
spec: {teeth: 12}
";

struct Replica {
    child: Child,
    kubeconfig: std::path::PathBuf,
}

impl Replica {
    fn start(dir: &Path, extra: &[&str]) -> Replica {
        let port = free_port();
        let mut child = Command::new(BIN)
            .arg("serve")
            .arg("--data-dir")
            .arg(dir)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .args(["--controllers", "*,-root-ca-cert-publisher"])
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

    fn ok(&self, args: &[&str]) -> String {
        let out = support::kubectl_env(&self.kubeconfig, args, &[]);
        assert!(out.status.success(), "kubectl {args:?}: {}", stderr(&out));
        stdout(&out)
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// (name, resourceVersion, data) of every ConfigMap of a raw list, and the list revision.
fn configmaps(out: &str) -> (Vec<(String, String, serde_json::Value)>, i64) {
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    let items = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"].as_str().unwrap().to_string(),
                i["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                i["data"].clone(),
            )
        })
        .collect();
    let rv = v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    (items, rv)
}

/// Writes `user.crt`/`user.key` into `out`: CN=`user`, O=`group`, signed by `data_dir`'s CA.
fn mint_user_cert(data_dir: &Path, out: &Path, user: &str, group: &str) {
    use rcgen::{CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, KeyPair};
    let ca_key =
        KeyPair::from_pem(&std::fs::read_to_string(data_dir.join("ca.key")).unwrap()).unwrap();
    let ca_params = CertificateParams::from_ca_cert_pem(
        &std::fs::read_to_string(data_dir.join("ca.crt")).unwrap(),
    )
    .unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, user);
    dn.push(DnType::OrganizationName, group);
    params.distinguished_name = dn;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::write(out.join("user.crt"), cert.pem()).unwrap();
    std::fs::write(out.join("user.key"), key.serialize_pem()).unwrap();
}

#[test]
fn status_snapshot_compact_backup_and_restore() {
    let admin_port = free_port();
    let endpoint = format!("127.0.0.1:{admin_port}");
    let s = Server::start_with(&["--admin-listen", &endpoint]);
    let dir = s.dir.path();
    let d = dir.to_str().unwrap();

    s.ok(&["create", "namespace", "backup"]);
    for i in 0..5 {
        s.ok(&[
            "create",
            "configmap",
            &format!("cm-{i}"),
            "-n",
            "backup",
            &format!("--from-literal=k=v{i}"),
        ]);
    }
    s.ok(&["label", "configmap", "cm-1", "-n", "backup", "tier=gold"]);
    s.ok(&["delete", "configmap", "cm-4", "-n", "backup"]);
    // A definition and one of its objects go into the backup too.
    let crd = dir.join("crd.yaml");
    std::fs::write(&crd, GIZMO_CRD).unwrap();
    s.ok(&["apply", "-f", crd.to_str().unwrap()]);
    let gizmo = dir.join("gizmo.yaml");
    std::fs::write(&gizmo, GIZMO).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !s
        .kubectl(&["apply", "-f", gizmo.to_str().unwrap()])
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "gizmos never served");
        std::thread::sleep(Duration::from_millis(200));
    }
    // The definition's loops may still write its status once it serves: wait (bounded) until
    // the revision holds still, so that the figures below are of a quiet store.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = status_json(&endpoint, dir)["current_revision"].clone();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = status_json(&endpoint, dir)["current_revision"].clone();
        if now == last {
            break;
        }
        assert!(Instant::now() < deadline, "the store never went quiet");
        last = now;
    }
    let (before, list_rv) =
        configmaps(&s.ok(&["get", "--raw", "/api/v1/namespaces/backup/configmaps"]));
    assert_eq!(before.len(), 4);

    // Status: one leader, the current revision is the list's.
    let st = status_json(&endpoint, dir);
    assert_eq!(st["node_id"], 1);
    assert_eq!(st["leader"], 1);
    assert_eq!(st["current_revision"], list_rv);
    assert!(st["applied_index"].as_u64().unwrap() >= 1);
    let members = st["members"].as_array().unwrap();
    assert_eq!(members.len(), 1);
    assert_eq!(members[0]["role"], "leader");
    assert_eq!(members[0]["voter"], true);
    let table = admin_ok(&["status", "--endpoint", &endpoint, "--data-dir", d]);
    assert!(table.starts_with("LEADER: 1  TERM: "), "{table}");
    // A background loop (the CRD's status, say) may write between the two calls.
    let table_rev: i64 = table
        .split("REVISION: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no revision in {table}"));
    assert!(table_rev >= list_rv, "{table}");
    assert!(table.lines().nth(1).unwrap().starts_with("ID "), "{table}");

    // Snapshot.
    let out = admin_ok(&["snapshot", "--endpoint", &endpoint, "--data-dir", d]);
    assert!(out.starts_with("snapshot built at log index "), "{out}");
    assert!(dir.join("snapshots").is_dir());

    // Compaction: to a past revision; errors for compacted and future revisions.
    let compact_to = (list_rv - 2).to_string();
    admin_ok(&[
        "compact",
        "--revision",
        &compact_to,
        "--endpoint",
        &endpoint,
        "--data-dir",
        d,
    ]);
    assert_eq!(
        status_json(&endpoint, dir)["compacted_revision"],
        list_rv - 2
    );
    let out = admin(&[
        "compact",
        "--revision",
        "1",
        "--endpoint",
        &endpoint,
        "--data-dir",
        d,
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("has been compacted"),
        "{}",
        stderr(&out)
    );
    let out = admin(&[
        "compact",
        "--revision",
        &(list_rv + 100).to_string(),
        "--endpoint",
        &endpoint,
        "--data-dir",
        d,
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("future revision"), "{}", stderr(&out));

    // Backup.
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("rafter.backup");
    let out = admin_ok(&[
        "backup",
        "--out",
        file.to_str().unwrap(),
        "--endpoint",
        &endpoint,
        "--data-dir",
        d,
    ]);
    assert!(
        out.starts_with(&format!("backup of revision {list_rv} (")),
        "{out}"
    );
    assert!(std::fs::metadata(&file).unwrap().len() > 0);

    // Restore offline into a new folder; refuses a folder that holds a database.
    let restored = work.path().join("restored");
    let r = restored.to_str().unwrap();
    let f = file.to_str().unwrap();
    let out = admin_ok(&["restore", "--backup", f, "--data-dir", r, "--node-id", "1"]);
    assert!(
        out.starts_with(&format!("restored revision {list_rv} into ")),
        "{out}"
    );
    let out = admin(&["restore", "--backup", f, "--data-dir", r, "--node-id", "1"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("new data folder"), "{}", stderr(&out));
    let bad = work.path().join("bad.backup");
    std::fs::write(&bad, b"not a backup").unwrap();
    let out = admin(&[
        "restore",
        "--backup",
        bad.to_str().unwrap(),
        "--data-dir",
        work.path().join("other").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    drop(s);

    // A replica on the restored folder serves the same objects at the same revision.
    let restored_admin = format!("127.0.0.1:{}", free_port());
    let rep = Replica::start(&restored, &["--admin-listen", &restored_admin]);
    let (after, after_rv) =
        configmaps(&rep.ok(&["get", "--raw", "/api/v1/namespaces/backup/configmaps"]));
    assert_eq!(after, before);
    assert_eq!(after_rv, list_rv);
    assert_eq!(
        status_json(&restored_admin, &restored)["current_revision"],
        list_rv
    );
    let labelled = rep.ok(&["get", "cm", "-n", "backup", "-l", "tier=gold", "-o", "name"]);
    assert_eq!(labelled.trim(), "configmap/cm-1");
    // The restored replica serves the definition and its object.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = support::kubectl_env(
            &rep.kubeconfig,
            &[
                "get",
                "gizmos",
                "-n",
                "backup",
                "-o",
                "jsonpath={.items[*].spec.teeth}",
            ],
            &[],
        );
        if out.status.success() && stdout(&out).trim() == "12" {
            break;
        }
        assert!(Instant::now() < deadline, "{}", stderr(&out));
        std::thread::sleep(Duration::from_millis(200));
    }
    // Writes continue after the restored revision.
    rep.ok(&["create", "configmap", "after", "-n", "backup"]);
    let rv: i64 = rep
        .ok(&[
            "get",
            "cm",
            "after",
            "-n",
            "backup",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ])
        .parse()
        .unwrap();
    assert_eq!(rv, list_rv + 1);
}

#[test]
fn admin_api_requires_a_client_certificate_of_the_cluster_ca() {
    let admin_port = free_port();
    let endpoint = format!("127.0.0.1:{admin_port}");
    let s = Server::start_with(&["--admin-listen", &endpoint]);
    let d = s.dir.path().to_str().unwrap();

    // Plaintext against the TLS listener.
    let out = admin(&["status", "--endpoint", &endpoint]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--data-dir"), "{}", stderr(&out));

    // Certificates of another cluster's CA.
    let other = tempfile::tempdir().unwrap();
    rafter::server::pki::Pki::new(other.path())
        .ensure(&[])
        .unwrap();
    let out = admin(&[
        "status",
        "--endpoint",
        &endpoint,
        "--data-dir",
        other.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success(), "{}", stdout(&out));

    // The admin identity of this cluster, given file by file.
    let p = |f: &str| s.dir.path().join(f).to_str().unwrap().to_string();
    let out = admin_ok(&[
        "status",
        "--endpoint",
        &endpoint,
        "--ca",
        &p("ca.crt"),
        "--cert",
        &p("admin.crt"),
        "--key",
        &p("admin.key"),
    ]);
    assert!(out.starts_with("LEADER: 1"), "{out}");

    // A user of this cluster's CA outside system:masters.
    let alice = tempfile::tempdir().unwrap();
    mint_user_cert(s.dir.path(), alice.path(), "alice", "developers");
    let a = |f: &str| alice.path().join(f).to_str().unwrap().to_string();
    let out = admin(&[
        "status",
        "--endpoint",
        &endpoint,
        "--ca",
        &p("ca.crt"),
        "--cert",
        &a("user.crt"),
        "--key",
        &a("user.key"),
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("PermissionDenied") && stderr(&out).contains("alice"),
        "{}",
        stderr(&out)
    );

    // Membership changes are answered (not hung) on a single replica.
    let out = admin(&[
        "transfer-leader",
        "--to",
        "2",
        "--endpoint",
        &endpoint,
        "--data-dir",
        d,
    ]);
    assert!(!out.status.success());
    assert!(!stderr(&out).is_empty());
}

#[test]
fn insecure_admin_listener_serves_plaintext() {
    let admin_port = free_port();
    let endpoint = format!("127.0.0.1:{admin_port}");
    let _s = Server::start_with(&["--admin-listen", &endpoint, "--admin-insecure"]);
    let out = admin_ok(&["status", "--endpoint", &endpoint, "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["leader"], 1);
}

/// A backup restored into a new replica grows back to three members over peer TLS: the
/// restored replica keeps TLS on alone, and learners that hold the cluster's peer CA join,
/// catch up and are promoted.
#[test]
fn restored_replica_grows_back_to_three_with_tls() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    // A replica with data, backed up.
    let first = w.join("first");
    let first_admin = format!("127.0.0.1:{}", free_port());
    let rep = Replica::start(&first, &["--admin-listen", &first_admin]);
    rep.ok(&["create", "configmap", "kept", "--from-literal=a=b"]);
    let backup = w.join("b.backup");
    admin_ok(&[
        "backup",
        "--out",
        backup.to_str().unwrap(),
        "--endpoint",
        &first_admin,
        "--data-dir",
        first.to_str().unwrap(),
    ]);
    drop(rep);
    // Restored alone, with a peer listener.
    let restored = w.join("restored");
    admin_ok(&[
        "restore",
        "--backup",
        backup.to_str().unwrap(),
        "--data-dir",
        restored.to_str().unwrap(),
        "--node-id",
        "1",
    ]);
    let admin_addr = format!("127.0.0.1:{}", free_port());
    let peer1 = format!("127.0.0.1:{}", free_port());
    let rep = Replica::start(
        &restored,
        &["--admin-listen", &admin_addr, "--peer-listen", &peer1],
    );
    let r = restored.to_str().unwrap().to_string();
    // Two learners with the cluster's CAs and service-account key.
    let mut children = Vec::new();
    for id in [2u64, 3] {
        let d = w.join(format!("j{id}"));
        std::fs::create_dir_all(&d).unwrap();
        for f in ["ca.crt", "ca.key", "peer-ca.crt", "peer-ca.key", "sa.key"] {
            std::fs::copy(restored.join(f), d.join(f)).unwrap();
        }
        let peer = format!("127.0.0.1:{}", free_port());
        let api = format!("127.0.0.1:{}", free_port());
        children.push(
            Command::new(BIN)
                .args([
                    "serve",
                    "--data-dir",
                    d.to_str().unwrap(),
                    "--node-id",
                    &id.to_string(),
                    "--join",
                    "--peer-listen",
                    &peer,
                    "--listen",
                    &api,
                ])
                .stdout(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = admin(&[
                "add-learner",
                "--id",
                &id.to_string(),
                "--peer-addr",
                &peer,
                "--api-addr",
                &api,
                "--endpoint",
                &admin_addr,
                "--data-dir",
                &r,
            ]);
            if out.status.success() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "add-learner {id}: {}",
                stderr(&out)
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = admin(&[
                "promote",
                "--id",
                &id.to_string(),
                "--endpoint",
                &admin_addr,
                "--data-dir",
                &r,
            ]);
            if out.status.success() {
                break;
            }
            assert!(Instant::now() < deadline, "promote {id}: {}", stderr(&out));
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    let status = status_json(&admin_addr, &restored);
    let voters = status["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["voter"] == true)
        .count();
    assert_eq!(voters, 3, "{status}");
    // Writes still commit with three voters.
    rep.ok(&["create", "configmap", "after-growth"]);
    for mut c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
}
