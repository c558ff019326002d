//! The deployment artifacts under `deploy/`, each exercised as far as this machine allows:
//!
//! - `deploy/systemd/rafter@.service` under `systemd-analyze verify` (a copy whose ExecStart is
//!   the built binary), with its required directives, and every flag of
//!   `deploy/systemd/replica.env.example` known to `rafter serve`;
//! - `deploy/tls/bootstrap.sh` for three replicas: file modes, idempotence, `--force`, then three
//!   real replicas started with only those certificates and keys (serving, client CA, peer,
//!   service-account, front-proxy flags), `deploy/haproxy.cfg` rendered as `cluster/up.sh` does,
//!   checked with `haproxy -c` and started, and kubectl with the generated admin kubeconfig
//!   through HAProxy and against a replica directly; one replica runs the command line that
//!   `rafter@.service` builds from `replica.env.example` on a data folder seeded as its
//!   ExecStartPre seeds it, and its admin API answers with the bootstrap certificates; a
//!   service-account token issued by one
//!   replica is accepted by the others; a replica stopped with SIGTERM is marked down by
//!   HAProxy while the cluster keeps serving through it;
//! - `deploy/kubernetes/` with `kubectl apply --dry-run=server` against a live replica, and the
//!   StatefulSet's shape (probes, PDB, headless Service, grace period);
//! - `deploy/container/Containerfile` statically (no image registry here): multi-stage, numeric
//!   non-root user, data volume, exec-form entrypoint, nothing run in the final stage.
//!
//! A test whose tool (`openssl`, `haproxy`, `kubectl`) is missing is skipped with a message, and
//! fails when the `CI` environment variable is set; without `systemd-analyze` the unit's
//! static checks still run and `verify` is skipped with a message. Every wait is bounded;
//! the processes a test starts are killed when its guard drops (also on a panic).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_rafter");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// Whether `tool` runs here; when it does not, skips (false) or, under CI, fails.
fn have(tool: &str) -> bool {
    // Only whether it can be started: some tools exit non-zero on `--version`.
    let ok = Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{tool} is required under CI but is not installed"
        );
        eprintln!("skipped: {tool} is not installed");
    }
    ok
}

fn out_text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Distinct free loopback ports.
fn free_ports(n: usize) -> Vec<u16> {
    let mut ports: Vec<u16> = Vec::new();
    while ports.len() < n {
        let p = free_port();
        if !ports.contains(&p) {
            ports.push(p);
        }
    }
    ports
}

/// Kills (SIGKILL) and reaps the processes it holds when dropped.
#[derive(Default)]
struct Procs(Vec<(String, Child)>);

impl Procs {
    fn spawn(&mut self, name: &str, cmd: &mut Command, log: &Path) {
        let f = std::fs::File::create(log).unwrap();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        self.0.push((name.to_string(), child));
    }

    fn pid(&self, name: &str) -> u32 {
        self.0.iter().find(|(n, _)| n == name).unwrap().1.id()
    }

    /// Panics with the log of a process that exited.
    fn check_alive(&mut self, logs: &Path) {
        for (name, c) in &mut self.0 {
            if let Ok(Some(st)) = c.try_wait() {
                let log =
                    std::fs::read_to_string(logs.join(format!("{name}.log"))).unwrap_or_default();
                panic!("{name} exited ({st}):\n{log}");
            }
        }
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        for (_, c) in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Retries `f` every 250 ms until it returns Some, for at most `limit`.
fn eventually<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match f() {
            Ok(v) => return v,
            Err(e) if Instant::now() >= deadline => panic!("timed out waiting for {what}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(250)),
        }
    }
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> Output {
    run(Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--request-timeout=10s")
        .args(args))
}

/// kubectl that must succeed within `limit` (retried: elections, a balancer coming up).
fn kubectl_ok(kubeconfig: &Path, args: &[&str], limit: Duration) -> String {
    eventually(&format!("kubectl {}", args.join(" ")), limit, || {
        let o = kubectl(kubeconfig, args);
        if o.status.success() {
            Ok(String::from_utf8_lossy(&o.stdout).into_owned())
        } else {
            Err(out_text(&o))
        }
    })
}

// ---------------------------------------------------------------------------------------------
// systemd

/// Logical lines of a file whose lines continue with a trailing `\`, trimmed, in order;
/// `skip(line, inside)` drops a physical line (`inside`: within a continuation).
fn logical_lines(text: &str, skip: impl Fn(&str, bool) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let t = line.trim();
        if skip(t, !cur.is_empty()) {
            continue;
        }
        if let Some(body) = t.strip_suffix('\\') {
            cur.push_str(body);
            cur.push(' ');
            continue;
        }
        cur.push_str(t);
        out.push(std::mem::take(&mut cur));
    }
    out
}

/// `KEY=value` lines of a systemd unit (continuations joined), in order.
fn unit_directives(text: &str) -> Vec<(String, String)> {
    logical_lines(text, |t, inside| {
        !inside && (t.is_empty() || t.starts_with('#') || t.starts_with('['))
    })
    .iter()
    .filter_map(|l| l.split_once('='))
    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
    .collect()
}

/// `VAR="value"` assignments of an EnvironmentFile.
fn env_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l
                .split_once('=')
                .unwrap_or_else(|| panic!("bad line {l:?}"));
            (k.to_string(), v.trim_matches('"').to_string())
        })
        .collect()
}

fn seconds(d: &str) -> u64 {
    let d = d.trim();
    if let Some(m) = d.strip_suffix("min") {
        m.parse::<u64>().unwrap() * 60
    } else if let Some(s) = d.strip_suffix('s') {
        s.parse().unwrap()
    } else if let Some(m) = d.strip_suffix('m') {
        m.parse::<u64>().unwrap() * 60
    } else {
        d.parse().unwrap()
    }
}

/// The files rafter@.service's ExecStartPre copies from RAFTER_PKI_DIR into a new data folder.
fn unit_seed_files() -> Vec<String> {
    unit_directives(&read("deploy/systemd/rafter@.service"))
        .into_iter()
        .filter(|(k, _)| k == "ExecStartPre")
        .flat_map(|(_, v)| {
            v.split_whitespace()
                .filter_map(|w| w.strip_prefix("${RAFTER_PKI_DIR}/"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn systemd_template_unit_verifies_and_its_env_file_names_real_flags() {
    let unit = read("deploy/systemd/rafter@.service");
    let d = unit_directives(&unit);
    let get = |k: &str| -> Vec<&str> {
        d.iter()
            .filter(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    for (k, v) in [
        ("EnvironmentFile", "/etc/rafter/%i.env"),
        ("StateDirectory", "rafter/%i"),
        ("ProtectSystem", "strict"),
        ("NoNewPrivileges", "yes"),
        ("Restart", "on-failure"),
        ("KillSignal", "SIGTERM"),
        ("User", "rafter"),
    ] {
        assert_eq!(get(k), vec![v], "{k}= in rafter@.service");
    }
    assert!(!get("LimitNOFILE").is_empty(), "LimitNOFILE=");
    let exec = get("ExecStart");
    assert_eq!(exec.len(), 1);
    assert!(
        exec[0].starts_with("/usr/local/bin/rafter serve --data-dir %S/rafter/%i"),
        "{exec:?}"
    );

    // The env file: every variable the unit uses is defined, every flag exists.
    let env = env_file(&read("deploy/systemd/replica.env.example"));
    let values = d
        .iter()
        .map(|(_, v)| v.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let used: Vec<&str> = values
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '{'))
        .filter_map(|w| w.strip_prefix('$'))
        .map(|w| w.trim_start_matches('{'))
        .filter(|w| !w.is_empty())
        .collect();
    for v in &used {
        assert!(
            env.iter().any(|(k, _)| k == v),
            "the unit uses ${v}, which replica.env.example does not define"
        );
    }
    let help = run(Command::new(BIN).args(["serve", "--help"]));
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let mut shutdown_delay = None;
    for (k, v) in &env {
        let words: Vec<&str> = v.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if let Some(flag) = w.strip_prefix("--") {
                assert!(
                    help.contains(&format!("--{flag} ")) || help.contains(&format!("--{flag}\n")),
                    "{k}: `rafter serve` has no flag --{flag}"
                );
                if flag == "shutdown-delay-duration" {
                    shutdown_delay = Some(seconds(words[i + 1]));
                }
            }
        }
    }
    let delay = shutdown_delay.expect("replica.env.example sets --shutdown-delay-duration");
    let stop = seconds(get("TimeoutStopSec")[0]);
    assert!(
        stop > delay + 10,
        "TimeoutStopSec ({stop}s) must be well above --shutdown-delay-duration ({delay}s)"
    );
    // The files the unit seeds the data folder with are what bootstrap.sh puts in replica-<i>/.
    let pre = get("ExecStartPre").join(" ");
    for f in pre
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("${RAFTER_PKI_DIR}/"))
    {
        assert!(
            read("deploy/tls/bootstrap.sh").contains(f),
            "bootstrap.sh does not make {f}"
        );
    }

    // systemd-analyze is not among the CI packages (.ci/run): skip even under CI without it.
    let analyze = Command::new("systemd-analyze")
        .arg("--version")
        .stdout(Stdio::null())
        .status();
    if analyze.is_err() {
        eprintln!("skipped systemd-analyze verify: systemd-analyze is not installed");
        return;
    }
    // A rendered copy: the built binary in place of /usr/local/bin/rafter (verify checks that
    // the executables exist) and the instance's env file next to it.
    let tmp = tempfile::tempdir().unwrap();
    let env_path = tmp.path().join("1.env");
    std::fs::copy(repo().join("deploy/systemd/replica.env.example"), &env_path).unwrap();
    let rendered = unit.replace("/usr/local/bin/rafter", BIN).replace(
        "/etc/rafter/%i.env",
        &tmp.path().join("%i.env").display().to_string(),
    );
    let unit_path = tmp.path().join("rafter@.service");
    std::fs::write(&unit_path, rendered).unwrap();
    let o = run(Command::new("systemd-analyze")
        .arg("verify")
        .arg(tmp.path().join("rafter@1.service"))
        .env("SYSTEMD_LOG_LEVEL", "warning"));
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() && err.contains("Failed to") && err.contains("bus") {
        eprintln!("skipped systemd-analyze verify (no usable systemd here): {err}");
        return;
    }
    assert!(
        o.status.success(),
        "systemd-analyze verify: {}",
        out_text(&o)
    );
    // Unknown or malformed directives are only warnings naming the file: none may appear.
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("rafter@")).collect();
    assert!(
        warnings.is_empty(),
        "systemd-analyze warnings: {warnings:#?}"
    );
}

// ---------------------------------------------------------------------------------------------
// TLS bootstrap, three replicas, HAProxy

fn bootstrap(args: &[&str]) -> Output {
    run(Command::new("bash")
        .arg(repo().join("deploy/tls/bootstrap.sh"))
        .args(args))
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn openssl_subject(cert: &Path) -> String {
    let o = run(Command::new("openssl")
        .args(["x509", "-noout", "-subject", "-nameopt", "RFC2253", "-in"])
        .arg(cert));
    assert!(o.status.success(), "{}", out_text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// deploy/haproxy.cfg rendered as cluster/up.sh renders it.
fn render_haproxy(bind: &str, servers: &[(String, u16)]) -> String {
    let mut out = String::new();
    for line in read("deploy/haproxy.cfg").lines() {
        if line == "@SERVERS@" {
            for (name, port) in servers {
                out.push_str(&format!("    server {name} 127.0.0.1:{port}\n"));
            }
        } else {
            out.push_str(&line.replace("@LB_BIND@", bind));
            out.push('\n');
        }
    }
    out
}

#[test]
fn tls_bootstrap_certificates_run_a_cluster_behind_haproxy() {
    if !(have("openssl") && have("haproxy") && have("kubectl")) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pki = tmp.path().join("pki");
    let ports = free_ports(1 + 3 * 3 + 2);
    let admin_port = ports[10];
    let admin1_port = ports[11];
    let lb = ports[0];
    let (api, peer) = (&ports[1..4], &ports[4..7]);
    let server = format!("https://127.0.0.1:{lb}");
    let lb_names = "lb.rafter.test";
    let names: Vec<String> = (1..=3)
        .map(|i| format!("replica-{i}.rafter.test"))
        .collect();
    let mut args = vec![
        "--server",
        server.as_str(),
        "3",
        pki.to_str().unwrap(),
        lb_names,
    ];
    args.extend(names.iter().map(String::as_str));

    // Made once, complete, private keys 0600.
    let o = bootstrap(&args);
    assert!(o.status.success(), "bootstrap.sh: {}", out_text(&o));
    let files = snapshot(&pki);
    for (p, _) in &files {
        let name = p.file_name().unwrap().to_str().unwrap();
        if name.ends_with(".key") || name.ends_with(".kubeconfig") {
            assert_eq!(mode(p), 0o600, "{}", p.display());
        }
    }
    for f in [
        "ca.crt",
        "ca.key",
        "peer-ca.crt",
        "peer-ca.key",
        "front-proxy-ca.crt",
        "front-proxy-ca.key",
        "front-proxy-client.crt",
        "front-proxy-client.key",
        "admin.crt",
        "admin.key",
        "admin.kubeconfig",
        "sa.key",
        "sa.pub",
        "replica-1/server.crt",
        "replica-1/peer.key",
        "replica-3/server.key",
        "replica-3/peer.crt",
    ] {
        assert!(pki.join(f).is_file(), "bootstrap.sh did not make {f}");
    }
    for i in 1..=3 {
        assert!(
            !pki.join(format!("replica-{i}/ca.key")).exists(),
            "a replica folder must not hold the CA key"
        );
    }
    let peer_subject = openssl_subject(&pki.join("replica-2/peer.crt"));
    assert!(
        peer_subject.contains("O=rafter:peers"),
        "peer certificate subject {peer_subject}"
    );
    let admin_subject = openssl_subject(&pki.join("admin.crt"));
    assert!(
        admin_subject.contains("O=system:masters"),
        "{admin_subject}"
    );
    assert!(openssl_subject(&pki.join("front-proxy-client.crt")).contains("CN=front-proxy-client"));
    let sa = std::fs::read_to_string(pki.join("sa.key")).unwrap();
    assert!(
        sa.starts_with("-----BEGIN PRIVATE KEY-----"),
        "sa.key is PKCS#8"
    );

    // Idempotent: a second run changes nothing; --force makes new keys.
    let o = bootstrap(&args);
    assert!(o.status.success(), "second bootstrap.sh: {}", out_text(&o));
    assert!(snapshot(&pki) == files, "a second run changed files");
    {
        let forced = tmp.path().join("forced");
        let o = bootstrap(&["1", forced.to_str().unwrap(), "lb", "r1"]);
        assert!(o.status.success(), "{}", out_text(&o));
        let before = std::fs::read(forced.join("ca.key")).unwrap();
        let o = bootstrap(&["--force", "1", forced.to_str().unwrap(), "lb", "r1"]);
        assert!(o.status.success(), "{}", out_text(&o));
        assert_ne!(before, std::fs::read(forced.join("ca.key")).unwrap());
        let o = run(Command::new("openssl")
            .arg("verify")
            .arg("-CAfile")
            .arg(forced.join("ca.crt"))
            .arg(forced.join("replica-1/server.crt")));
        assert!(o.status.success(), "after --force: {}", out_text(&o));
    }

    // Three replicas on those files only. Replicas 1 and 2 start on empty data folders, so
    // anything the flags did not cover would come from a CA of their own and the cluster
    // would not form. Replica 3 runs exactly as rafter@3.service would with
    // replica.env.example: its data folder seeded by ExecStartPre, its flags from ExecStart.
    let members = (1..=3)
        .map(|i| format!("{i}=127.0.0.1:{}", peer[i - 1]))
        .collect::<Vec<_>>()
        .join(",");
    let logs = tmp.path();
    let mut procs = Procs::default();
    // The seeded folder's admin API then uses the bootstrap CA and certificates too.
    let seeds = unit_seed_files();
    assert!(seeds.contains(&"ca.crt".to_string()), "{seeds:?}");
    let data3 = tmp.path().join("data-3");
    std::fs::create_dir_all(&data3).unwrap();
    for f in &seeds {
        std::fs::copy(pki.join("replica-3").join(f), data3.join(f))
            .unwrap_or_else(|e| panic!("seeding {f}: {e}"));
    }
    let env = env_file(&read("deploy/systemd/replica.env.example"));
    let issuer = env
        .iter()
        .find(|(k, _)| k == "RAFTER_SERVICE_ACCOUNTS")
        .and_then(|(_, v)| {
            v.split_whitespace()
                .skip_while(|w| *w != "--service-account-issuer")
                .nth(1)
        })
        .expect("the env example's --service-account-issuer")
        .to_string();
    // Replicas 1 and 2: every bootstrap file by flag, on empty data folders.
    for i in 1..=2 {
        let r = pki.join(format!("replica-{i}"));
        let f = |n: &str| r.join(n);
        let mut cmd = Command::new(BIN);
        cmd.env("RAFTER_LOG", "warn")
            .arg("serve")
            .arg("--data-dir")
            .arg(tmp.path().join(format!("data-{i}")))
            .args(["--node-id", &i.to_string()])
            .args(["--listen", &format!("127.0.0.1:{}", api[i - 1])])
            .args(["--peer-listen", &format!("127.0.0.1:{}", peer[i - 1])])
            .args(["--initial-members", &members]);
        for (flag, file) in [
            ("--tls-cert-file", "server.crt"),
            ("--tls-private-key-file", "server.key"),
            ("--client-ca-file", "ca.crt"),
            ("--peer-ca", "peer-ca.crt"),
            ("--peer-cert", "peer.crt"),
            ("--peer-key", "peer.key"),
            ("--service-account-signing-key-file", "sa.key"),
            ("--service-account-key-file", "sa.pub"),
            ("--proxy-client-cert-file", "front-proxy-client.crt"),
            ("--proxy-client-key-file", "front-proxy-client.key"),
            ("--requestheader-client-ca-file", "front-proxy-ca.crt"),
        ] {
            cmd.arg(flag).arg(f(file));
        }
        cmd.args(["--service-account-issuer", &issuer])
            .args(["--requestheader-allowed-names", "front-proxy-client"])
            .args(["--requestheader-username-headers", "X-Remote-User"])
            .args(["--requestheader-group-headers", "X-Remote-Group"])
            .args(["--requestheader-extra-headers-prefix", "X-Remote-Extra-"])
            .args(["--shutdown-delay-duration", "3s"]);
        if i == 1 {
            cmd.args(["--admin-listen", &format!("127.0.0.1:{admin1_port}")]);
        }
        procs.spawn(
            &format!("replica-{i}"),
            &mut cmd,
            &logs.join(format!("replica-{i}.log")),
        );
    }
    // Replica 3: the command line rafter@.service builds from replica.env.example.
    let args = unit_args(
        &env,
        3,
        &data3,
        &pki.join("replica-3"),
        api,
        peer,
        admin_port,
    );
    procs.spawn(
        "replica-3",
        Command::new(BIN).env("RAFTER_LOG", "warn").args(&args),
        &logs.join("replica-3.log"),
    );

    // HAProxy from the template, as cluster/up.sh renders it.
    let servers: Vec<(String, u16)> = (1..=3)
        .map(|i| (format!("replica-{i}"), api[i - 1]))
        .collect();
    let cfg = tmp.path().join("haproxy.cfg");
    std::fs::write(&cfg, render_haproxy(&format!("127.0.0.1:{lb}"), &servers)).unwrap();
    let o = run(Command::new("haproxy").arg("-c").arg("-f").arg(&cfg));
    assert!(o.status.success(), "haproxy -c: {}", out_text(&o));
    // -db: in the foreground, so that the guard owns the process.
    procs.spawn(
        "haproxy",
        Command::new("haproxy").arg("-db").arg("-f").arg(&cfg),
        &logs.join("haproxy.log"),
    );

    let admin = pki.join("admin.kubeconfig");
    let limit = Duration::from_secs(30);
    // Every replica ready, directly (its serving certificate names 127.0.0.1 and chains to the
    // bootstrap CA; the admin certificate is accepted by its client CA).
    for i in 1..=3 {
        procs.check_alive(logs);
        let direct = format!("--server=https://127.0.0.1:{}", api[i - 1]);
        kubectl_ok(&admin, &[&direct, "get", "--raw", "/readyz"], limit);
    }
    // Through HAProxy.
    let ns = kubectl_ok(&admin, &["get", "ns", "-o", "name"], limit);
    assert!(ns.contains("namespace/default"), "{ns}");
    kubectl_ok(
        &admin,
        &[
            "-n",
            "default",
            "create",
            "configmap",
            "deploy-check",
            "--from-literal=written=through-haproxy",
        ],
        limit,
    );
    let direct3 = format!("--server=https://127.0.0.1:{}", api[2]);
    let v = kubectl_ok(
        &admin,
        &[
            &direct3,
            "-n",
            "default",
            "get",
            "configmap",
            "deploy-check",
            "-o",
            "jsonpath={.data.written}",
        ],
        limit,
    );
    assert_eq!(v, "through-haproxy");

    // The admin APIs, of the seeded replica and of a flags-only one (which serves the
    // `--tls-cert-file` certificate and trusts `--client-ca-file`): the bootstrap CA and
    // admin certificate work with both.
    for port in [admin_port, admin1_port] {
        let o = run(Command::new(BIN)
            .args(["admin", "status", "-o", "json", "--timeout", "10"])
            .args(["--endpoint", &format!("127.0.0.1:{port}")])
            .arg("--ca")
            .arg(pki.join("ca.crt"))
            .arg("--cert")
            .arg(pki.join("admin.crt"))
            .arg("--key")
            .arg(pki.join("admin.key")));
        assert!(o.status.success(), "rafter admin status: {}", out_text(&o));
        let status: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            status["members"].as_array().map(Vec::len),
            Some(3),
            "{status}"
        );
    }
    // Pods are given the bootstrap CA (`--client-ca-file`), not a generated one.
    let ca = std::fs::read_to_string(pki.join("ca.crt")).unwrap();
    eventually(
        "kube-root-ca.crt with the bootstrap CA",
        Duration::from_secs(20),
        || {
            let o = run(Command::new("kubectl")
                .arg(format!("--kubeconfig={}", admin.display()))
                .args(["-n", "default", "get", "configmap", "kube-root-ca.crt"])
                .args(["-o", "jsonpath={.data.ca\\.crt}", "--request-timeout=10s"]));
            let got = String::from_utf8_lossy(&o.stdout).into_owned();
            if got.trim() == ca.trim() {
                Ok(())
            } else {
                Err(out_text(&o))
            }
        },
    );
    for f in ["ca.key", "peer-ca.key", "front-proxy-ca.key"] {
        assert!(
            !data3.join(f).exists(),
            "a seeded data folder made its own {f}"
        );
    }
    assert_eq!(
        std::fs::read(data3.join("ca.crt")).unwrap(),
        std::fs::read(pki.join("ca.crt")).unwrap()
    );

    // A token issued by replica 1 authenticates at replicas 2 and 3 (one signing key): the
    // default service account may not read namespaces, so a 403 naming it is the proof
    // (an unknown token would be a 401).
    let direct1 = format!("--server=https://127.0.0.1:{}", api[0]);
    let token = kubectl_ok(
        &admin,
        &[&direct1, "-n", "default", "create", "token", "default"],
        limit,
    );
    let token = token.trim();
    assert!(token.split('.').count() == 3, "not a JWT: {token}");
    for port in [api[1], api[2]] {
        let o = run(Command::new("kubectl")
            .arg("--kubeconfig=/dev/null")
            .arg(format!("--server=https://127.0.0.1:{port}"))
            .arg("--certificate-authority")
            .arg(pki.join("ca.crt"))
            .arg(format!("--token={token}"))
            .args(["--request-timeout=10s", "get", "ns", "default"]));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains("system:serviceaccount:default:default"),
            "replica on {port} did not authenticate the token: {}",
            out_text(&o)
        );
    }

    // Drain on not-ready: SIGTERM replica 2 (shutdown delay 3 s: /readyz fails at once);
    // HAProxy marks it down (checks every 500 ms, down after 2), and kubectl through the
    // balancer keeps working.
    let pid = procs.pid("replica-2");
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    eventually(
        "HAProxy to mark replica-2 down",
        Duration::from_secs(10),
        || {
            let log = std::fs::read_to_string(logs.join("haproxy.log")).unwrap_or_default();
            if log.contains("replica-2 is DOWN") {
                Ok(())
            } else {
                Err(log)
            }
        },
    );
    for n in 0..5 {
        kubectl_ok(
            &admin,
            &[
                "-n",
                "default",
                "create",
                "configmap",
                &format!("after-drain-{n}"),
            ],
            limit,
        );
    }
}

/// The arguments rafter@.service gives `rafter` as replica `i` of the cluster that
/// replica.env.example describes (its replica 1 on 10.0.0.11, the others on 10.0.0.12 and
/// .13), moved to this machine: those hosts become 127.0.0.1 with the test's ports, and
/// /etc/rafter/pki the replica's bootstrap folder.
fn unit_args(
    env: &[(String, String)],
    i: usize,
    data: &Path,
    pki_dir: &Path,
    api: &[u16],
    peer: &[u16],
    admin: u16,
) -> Vec<String> {
    let local = |v: &str, key: &str| -> String {
        let mut v = v.to_string();
        // The example is replica 1's file: another replica's differs in RAFTER_NODE and in
        // RAFTER_PEERS' --peer-listen.
        if key == "RAFTER_NODE" {
            v = v
                .replace("--node-id 1 ", &format!("--node-id {i} "))
                .replace("10.0.0.11", &format!("10.0.0.1{i}"));
        }
        if key == "RAFTER_PEERS" {
            v = v.replace(
                "--peer-listen 10.0.0.11:",
                &format!("--peer-listen 10.0.0.1{i}:"),
            );
        }
        for j in 1..=3 {
            v = v
                .replace(
                    &format!("10.0.0.1{j}:6443"),
                    &format!("127.0.0.1:{}", api[j - 1]),
                )
                .replace(
                    &format!("10.0.0.1{j}:7001"),
                    &format!("127.0.0.1:{}", peer[j - 1]),
                );
        }
        v = v
            .replace(&format!("10.0.0.1{i}:7443"), &format!("127.0.0.1:{admin}"))
            .replace(&format!("10.0.0.1{i}"), "127.0.0.1");
        v.replace("/etc/rafter/pki", pki_dir.to_str().unwrap())
    };
    let unit = unit_directives(&read("deploy/systemd/rafter@.service"));
    let exec = &unit.iter().find(|(k, _)| k == "ExecStart").unwrap().1;
    let mut args = Vec::new();
    for w in exec.split_whitespace().skip(1) {
        if let Some(var) = w.strip_prefix('$') {
            if let Some((k, v)) = env.iter().find(|(k, _)| k == var) {
                args.extend(local(v, k).split_whitespace().map(str::to_string));
            }
        } else if w == "%S/rafter/%i" {
            args.push(data.display().to_string());
        } else {
            args.push(w.to_string());
        }
    }
    let line = args.join(" ");
    assert!(
        !line.contains("10.0.0.") && !line.contains('%'),
        "not moved to this machine: {line}"
    );
    args
}

// ---------------------------------------------------------------------------------------------
// Kubernetes manifests

/// The YAML documents of every manifest in deploy/kubernetes/.
fn manifests() -> Vec<serde_json::Value> {
    let dir = repo().join("deploy/kubernetes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut docs = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for doc in serde_yaml::Deserializer::from_str(&text) {
            let v: serde_json::Value = serde::Deserialize::deserialize(doc)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            if !v.is_null() {
                docs.push(v);
            }
        }
    }
    docs
}

#[test]
fn kubernetes_manifests_have_the_expected_shape() {
    let docs = manifests();
    let find = |kind: &str, name: &str| -> serde_json::Value {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
            .clone()
    };
    let sts = find("StatefulSet", "rafter");
    let spec = &sts["spec"];
    assert_eq!(spec["replicas"], 3);
    assert_eq!(spec["podManagementPolicy"], "Parallel");
    let headless = find("Service", spec["serviceName"].as_str().unwrap());
    assert_eq!(headless["spec"]["clusterIP"], "None");
    assert_eq!(headless["spec"]["publishNotReadyAddresses"], true);
    find("Service", "rafter");
    assert_eq!(
        find("PodDisruptionBudget", "rafter")["spec"]["maxUnavailable"],
        1
    );
    let pod = &spec["template"]["spec"];
    let anti =
        &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    assert_eq!(anti[0]["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(c["readinessProbe"]["httpGet"]["scheme"], "HTTPS");
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/livez");
    assert!(c["startupProbe"].is_object());
    assert_eq!(spec["volumeClaimTemplates"][0]["metadata"]["name"], "data");
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(args.contains(&"--node-id=$(NODE_ID)"), "{args:?}");
    let delay = args
        .iter()
        .find_map(|a| a.strip_prefix("--shutdown-delay-duration="))
        .map(seconds)
        .expect("--shutdown-delay-duration");
    let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
    assert!(grace > delay + 10, "grace {grace}s vs delay {delay}s");
    // Every flag exists.
    let help = run(Command::new(BIN).args(["serve", "--help"]));
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    for a in &args[1..] {
        let flag = a.split('=').next().unwrap();
        assert!(
            help.contains(&format!("{flag} ")),
            "`rafter serve` has no flag {flag}"
        );
    }
    // NODE_ID is the pod's ordinal, and ordinals start at Rafter's first id.
    let node_id = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "NODE_ID")
        .expect("NODE_ID env");
    assert_eq!(
        node_id["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.labels['apps.kubernetes.io/pod-index']"
    );
    assert_eq!(spec["ordinals"]["start"], 1);
    // Each pod's certificate files come from the Secret, by $(POD_NAME).
    assert!(args.contains(&"--tls-cert-file=/etc/rafter/pki/$(POD_NAME)-server.crt"));
}

#[test]
fn kubernetes_manifests_pass_server_side_dry_run_against_rafter() {
    if !have("kubectl") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut procs = Procs::default();
    let data = tmp.path().join("data");
    procs.spawn(
        "rafter",
        Command::new(BIN)
            .env("RAFTER_LOG", "warn")
            .arg("serve")
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen", &format!("127.0.0.1:{port}")]),
        &tmp.path().join("rafter.log"),
    );
    let kc = data.join("admin.kubeconfig");
    eventually("rafter's kubeconfig", Duration::from_secs(30), || {
        procs.check_alive(tmp.path());
        if kc.is_file() {
            Ok(())
        } else {
            Err("not yet".into())
        }
    });
    let limit = Duration::from_secs(30);
    kubectl_ok(&kc, &["get", "--raw", "/readyz"], limit);
    // A dry run persists nothing, so the namespace the others live in must exist: made from
    // its manifest, with its Pod Security label.
    let dir = repo().join("deploy/kubernetes");
    let ns = dir.join("00-namespace.yaml");
    kubectl_ok(&kc, &["apply", "-f", ns.to_str().unwrap()], limit);
    let o = kubectl(
        &kc,
        &["apply", "--dry-run=server", "-f", dir.to_str().unwrap()],
    );
    assert!(
        o.status.success(),
        "apply --dry-run=server: {}",
        out_text(&o)
    );
    // The pods meet the namespace's `restricted` Pod Security level.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("PodSecurity"), "apply warned: {err}");
    let text = String::from_utf8_lossy(&o.stdout);
    for obj in [
        "statefulset.apps/rafter",
        "service/rafter-peer",
        "service/rafter",
        "poddisruptionbudget.policy/rafter",
    ] {
        assert!(text.contains(obj), "{obj} missing from:\n{text}");
    }
    // Nothing was created.
    let o = kubectl(&kc, &["-n", "rafter", "get", "statefulset", "rafter"]);
    assert!(!o.status.success(), "a dry run created the StatefulSet");
}

// ---------------------------------------------------------------------------------------------
// Containerfile

/// Instructions of a Dockerfile: (INSTRUCTION, arguments), continuations joined, comments
/// (and comment lines inside continuations) dropped.
fn dockerfile(text: &str) -> Vec<(String, String)> {
    logical_lines(text, |t, inside| {
        t.starts_with('#') || (!inside && t.is_empty())
    })
    .iter()
    .map(|l| {
        let (i, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
        (i.to_ascii_uppercase(), rest.trim().to_string())
    })
    .collect()
}

#[test]
fn containerfile_is_multi_stage_non_root_and_needs_no_shell() {
    let ins = dockerfile(&read("deploy/container/Containerfile"));
    let froms: Vec<usize> = ins
        .iter()
        .enumerate()
        .filter(|(_, (i, _))| i == "FROM")
        .map(|(n, _)| n)
        .collect();
    assert!(froms.len() >= 2, "multi-stage: {} FROM lines", froms.len());
    let build = &ins[froms[0]].1;
    assert!(build.contains("bookworm"), "builder on Debian 12: {build}");
    assert!(
        build.to_lowercase().contains(" as "),
        "named build stage: {build}"
    );
    let build_stage = &ins[froms[0]..froms[froms.len() - 1]];
    assert!(
        build_stage.iter().any(|(i, a)| i == "RUN"
            && a.contains("librocksdb-dev")
            && a.contains("protobuf-compiler")),
        "the builder installs the build dependencies"
    );
    let last = &ins[froms[froms.len() - 1]..];
    let base = &last[0].1;
    assert!(
        base.contains("distroless") || base.contains("bookworm-slim"),
        "runtime base {base}"
    );
    let get = |k: &str| -> Vec<&str> {
        last.iter()
            .filter(|(i, _)| i == k)
            .map(|(_, a)| a.as_str())
            .collect()
    };
    for forbidden in ["RUN", "SHELL"] {
        assert!(
            get(forbidden).is_empty(),
            "the runtime stage must not need a shell ({forbidden})"
        );
    }
    let user = get("USER");
    assert_eq!(user.len(), 1, "one USER in the runtime stage");
    let uid = user[0].split(':').next().unwrap();
    let uid: u32 = uid
        .parse()
        .unwrap_or_else(|_| panic!("USER must be numeric: {}", user[0]));
    assert_ne!(uid, 0, "USER must not be root");
    assert!(
        get("VOLUME").iter().any(|v| v.contains("/var/lib/rafter")),
        "VOLUME /var/lib/rafter"
    );
    let entry = get("ENTRYPOINT");
    assert_eq!(entry.len(), 1);
    let entry: Vec<String> = serde_json::from_str(entry[0])
        .unwrap_or_else(|_| panic!("exec-form ENTRYPOINT: {}", entry[0]));
    assert_eq!(entry, vec!["/usr/local/bin/rafter".to_string()]);
    for cmd in get("CMD") {
        let cmd: Vec<String> =
            serde_json::from_str(cmd).unwrap_or_else(|_| panic!("exec-form CMD: {cmd}"));
        assert!(cmd.iter().any(|a| a == "/var/lib/rafter"), "{cmd:?}");
    }
    let exposed: Vec<&str> = get("EXPOSE")
        .iter()
        .flat_map(|e| e.split_whitespace())
        .collect();
    for p in ["6443", "7001"] {
        assert!(exposed.contains(&p), "EXPOSE {p}");
    }
    // Sources the builder copies exist; build output and local state stay out of the context.
    let ignore = read(".dockerignore");
    for pat in ["target", ".git", "cluster/run"] {
        assert!(
            ignore.lines().any(|l| l.trim() == pat),
            ".dockerignore lacks {pat}"
        );
    }
    let _ = std::io::stderr().flush();
}
