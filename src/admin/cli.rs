//! `rafter admin <command>`: the CLI client of the admin gRPC API, plus the offline `restore`.
//!
//! Connection flags (every command but `restore`): `--endpoint HOST:PORT` (or
//! `RAFTER_ADMIN_ENDPOINT`); mutual TLS with `--ca/--cert/--key`, or `--data-dir DIR` to use a
//! replica data folder's `ca.crt`, `admin.crt` and `admin.key` (also `RAFTER_ADMIN_DATA_DIR`).
//! With none of these, the CLI looks for the local cluster of `cluster/up.sh`
//! (`$RAFTER_RUN_DIR/replica-1`, default `cluster/run/replica-1`) and uses its credentials,
//! falling back to plaintext (a server started with `--admin-insecure`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use super::proto::admin_client::AdminClient;
use super::proto::*;
use crate::kv;

/// `rafter admin`.
#[derive(Args, Debug)]
pub struct AdminArgs {
    #[command(subcommand)]
    pub command: AdminCommand,
}

/// How to reach the admin API.
#[derive(Args, Debug, Clone)]
pub struct Conn {
    /// Admin API address of any replica (HOST:PORT).
    #[arg(long, env = "RAFTER_ADMIN_ENDPOINT")]
    pub endpoint: String,
    /// CA certificate that signed the server's certificate (PEM).
    #[arg(long, requires_all = ["cert", "key"])]
    pub ca: Option<PathBuf>,
    /// Client certificate (PEM).
    #[arg(long, requires_all = ["ca", "key"])]
    pub cert: Option<PathBuf>,
    /// Client key (PEM).
    #[arg(long, requires_all = ["ca", "cert"])]
    pub key: Option<PathBuf>,
    /// Use ca.crt, admin.crt and admin.key of this replica data folder.
    #[arg(long, env = "RAFTER_ADMIN_DATA_DIR", conflicts_with_all = ["ca", "cert", "key"])]
    pub data_dir: Option<PathBuf>,
    /// Bound on each call, in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

impl Conn {
    /// The certificate files to use, if any: (CA, client certificate, client key).
    fn files(&self) -> Option<(PathBuf, PathBuf, PathBuf)> {
        match (&self.data_dir, &self.ca, &self.cert, &self.key) {
            (Some(d), _, _, _) => {
                Some((d.join("ca.crt"), d.join("admin.crt"), d.join("admin.key")))
            }
            (None, Some(ca), Some(cert), Some(key)) => {
                Some((ca.clone(), cert.clone(), key.clone()))
            }
            _ => None,
        }
    }

    fn plaintext(&self) -> bool {
        self.files().is_none()
    }

    /// Credentials of the local `cluster/up.sh` cluster, when no others were given.
    fn discovered(&self) -> Option<(PathBuf, PathBuf, PathBuf)> {
        if self.files().is_some() {
            return None;
        }
        let run = std::env::var_os("RAFTER_RUN_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("cluster/run"));
        let d = run.join("replica-1");
        let files = (d.join("ca.crt"), d.join("admin.crt"), d.join("admin.key"));
        (files.0.exists() && files.1.exists() && files.2.exists()).then_some(files)
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Output {
    Table,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum AdminCommand {
    /// Members, roles, leader, term, commit/applied indexes, revisions and per-replica lag.
    Status {
        #[command(flatten)]
        conn: Conn,
        /// Output format.
        #[arg(short = 'o', long, value_enum, default_value = "table")]
        output: Output,
    },
    /// Add an empty replica (started with `--join`) as a non-voting learner.
    AddLearner {
        #[command(flatten)]
        conn: Conn,
        #[arg(long)]
        id: u64,
        /// Raft peer address of the new replica (HOST:PORT).
        #[arg(long)]
        peer_addr: String,
        /// Kubernetes API address of the new replica (HOST:PORT).
        #[arg(long, default_value = "")]
        api_addr: String,
    },
    /// Promote a learner to voter.
    Promote {
        #[command(flatten)]
        conn: Conn,
        #[arg(long)]
        id: u64,
    },
    /// Remove a member (voter or learner) from the cluster.
    Remove {
        #[command(flatten)]
        conn: Conn,
        #[arg(long)]
        id: u64,
    },
    /// Take the replica out of service for maintenance without stopping it: its /readyz
    /// fails so load balancers route away, and a leader hands leadership over first.
    /// `--undo` puts it back.
    Drain {
        #[command(flatten)]
        conn: Conn,
        #[arg(long)]
        undo: bool,
    },
    /// Hand leadership to another voter.
    TransferLeader {
        #[command(flatten)]
        conn: Conn,
        #[arg(long)]
        to: u64,
    },
    /// Build a Raft snapshot on the replica now (and purge the log behind it).
    Snapshot {
        #[command(flatten)]
        conn: Conn,
    },
    /// Compact the MVCC history at and below a revision (cluster-wide).
    Compact {
        #[command(flatten)]
        conn: Conn,
        #[arg(long)]
        revision: i64,
    },
    /// Rewrite every object of a resource in its current storage version (and current
    /// encryption key), in batches, printing progress; resumable with --start-after. Then
    /// `status.storedVersions` of a custom resource can be trimmed to the storage version.
    MigrateStorage {
        #[command(flatten)]
        conn: Conn,
        /// `crontabs.stable.example.com`, `secrets`, `deployments.apps`.
        #[arg(long)]
        resource: String,
        /// Objects per batch.
        #[arg(long, default_value_t = 500)]
        batch: u32,
        /// Resume after this key (the last key a previous run printed).
        #[arg(long, default_value = "")]
        start_after: String,
    },
    /// Stream a consistent backup of the keyspace into a file.
    Backup {
        #[command(flatten)]
        conn: Conn,
        #[arg(long)]
        out: PathBuf,
    },
    /// Offline disaster recovery after losing a majority: a new one-replica cluster in DATA_DIR
    /// from the data folder of a stopped survivor (its state and every write its log holds;
    /// its certificates and keys are copied). Grow it back with add-learner and promote.
    ForceNewCluster {
        /// The survivor's data folder (the replica must be stopped).
        #[arg(long)]
        from: PathBuf,
        /// The new data folder (must not hold a database yet).
        #[arg(long)]
        data_dir: PathBuf,
        /// Raft node id of the replica that will serve the folder.
        #[arg(long, default_value_t = 1)]
        node_id: u64,
    },
    /// Offline: create a new replica data folder from a backup file (no server needed). Start
    /// `rafter serve --data-dir DIR --node-id N` on it afterwards.
    Restore {
        /// Backup file written by `rafter admin backup`.
        #[arg(long)]
        backup: PathBuf,
        /// The new data folder (must not hold a database yet).
        #[arg(long)]
        data_dir: PathBuf,
        /// Raft node id of the replica that will serve the folder.
        #[arg(long, default_value_t = 1)]
        node_id: u64,
    },
}

/// Runs one admin command, printing its result on stdout.
pub async fn run(args: AdminArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match args.command {
        AdminCommand::Status { conn, output } => {
            let mut c = connect(&conn).await?;
            let s = c
                .status(StatusRequest {})
                .await
                .map_err(|e| rpc_error(&conn, "status", e))?
                .into_inner();
            let s = super::status_from_proto(s);
            match output {
                Output::Json => writeln!(out, "{}", serde_json::to_string_pretty(&s)?)?,
                Output::Table => write!(out, "{}", status_table(&s))?,
            }
        }
        AdminCommand::AddLearner {
            conn,
            id,
            peer_addr,
            api_addr,
        } => {
            connect(&conn)
                .await?
                .add_learner(AddLearnerRequest {
                    id,
                    peer_addr: peer_addr.clone(),
                    api_addr,
                })
                .await
                .map_err(|e| rpc_error(&conn, "add-learner", e))?;
            writeln!(out, "replica {id} ({peer_addr}) added as a learner")?;
        }
        AdminCommand::Promote { conn, id } => {
            connect(&conn)
                .await?
                .promote(PromoteRequest { id })
                .await
                .map_err(|e| rpc_error(&conn, "promote", e))?;
            writeln!(out, "replica {id} promoted to voter")?;
        }
        AdminCommand::Remove { conn, id } => {
            connect(&conn)
                .await?
                .remove_member(RemoveMemberRequest { id })
                .await
                .map_err(|e| rpc_error(&conn, "remove", e))?;
            writeln!(out, "replica {id} removed")?;
        }
        AdminCommand::Drain { conn, undo } => {
            let r = connect(&conn)
                .await?
                .drain(DrainRequest { undo })
                .await
                .map_err(|e| rpc_error(&conn, "drain", e))?
                .into_inner();
            match (undo, r.handed_to) {
                (true, _) => writeln!(out, "replica back in service")?,
                (false, Some(to)) => {
                    writeln!(out, "replica drained; leadership handed to replica {to}")?
                }
                (false, None) => writeln!(out, "replica drained")?,
            }
        }
        AdminCommand::TransferLeader { conn, to } => {
            connect(&conn)
                .await?
                .transfer_leader(TransferLeaderRequest { to })
                .await
                .map_err(|e| rpc_error(&conn, "transfer-leader", e))?;
            writeln!(out, "leadership transferred to replica {to}")?;
        }
        AdminCommand::Snapshot { conn } => {
            let r = connect(&conn)
                .await?
                .snapshot(SnapshotRequest {})
                .await
                .map_err(|e| rpc_error(&conn, "snapshot", e))?
                .into_inner();
            writeln!(out, "snapshot built at log index {}", r.index)?;
        }
        AdminCommand::Compact { conn, revision } => {
            connect(&conn)
                .await?
                .compact(CompactRequest { revision })
                .await
                .map_err(|e| rpc_error(&conn, "compact", e))?;
            writeln!(out, "compacted history at revision {revision}")?;
        }
        AdminCommand::MigrateStorage {
            conn,
            resource,
            batch,
            start_after,
        } => {
            let mut client = connect(&conn).await?;
            let (mut after, mut total, mut skipped) = (start_after, 0u64, 0u64);
            let started = std::time::Instant::now();
            loop {
                let r = client
                    .migrate_storage(MigrateStorageRequest {
                        resource: resource.clone(),
                        limit: batch,
                        start_after: after.clone(),
                    })
                    .await
                    .map_err(|e| rpc_error(&conn, "migrate-storage", e))?
                    .into_inner();
                total += r.rewritten;
                skipped += r.skipped;
                after = r.last_key;
                writeln!(
                    out,
                    "{resource}: {total} rewritten, {skipped} skipped (written meanwhile), last key {after}"
                )?;
                if r.done {
                    let secs = started.elapsed().as_secs_f64().max(0.001);
                    writeln!(
                        out,
                        "{resource}: done, {total} objects stored as {} ({:.0} objects/s)",
                        r.storage_version,
                        total as f64 / secs
                    )?;
                    break;
                }
            }
        }
        AdminCommand::Backup { conn, out: path } => {
            let (revision, size) = backup(&conn, &path).await?;
            writeln!(
                out,
                "backup of revision {revision} ({size} bytes) written to {}",
                path.display()
            )?;
        }
        AdminCommand::ForceNewCluster {
            from,
            data_dir,
            node_id,
        } => {
            if !from.join("db").is_dir() {
                bail!("{} holds no replica database", from.display());
            }
            if data_dir.join("db").exists() {
                bail!("{} already holds a database", data_dir.display());
            }
            // The survivor's identity comes along: certificates, keys, token files.
            std::fs::create_dir_all(&data_dir)
                .with_context(|| format!("creating {}", data_dir.display()))?;
            for e in
                std::fs::read_dir(&from).with_context(|| format!("reading {}", from.display()))?
            {
                let e = e?;
                if e.file_type()?.is_file() {
                    std::fs::copy(e.path(), data_dir.join(e.file_name()))
                        .with_context(|| format!("copying {}", e.path().display()))?;
                }
            }
            let cfg = kv::KvConfig {
                data_dir: data_dir.clone(),
                node_id,
                compaction_window: Duration::from_secs(300),
                ..Default::default()
            };
            let (rev, replayed) = kv::Kv::force_new_cluster(&from, &cfg).map_err(|e| {
                anyhow::anyhow!("forcing a new cluster from {}: {e}", from.display())
            })?;
            writeln!(
                out,
                "new cluster at revision {rev} ({replayed} log entries past the survivor's applied state replayed) in {} (start it with: rafter serve --data-dir {} --node-id {node_id})",
                data_dir.display(),
                data_dir.display()
            )?;
        }
        AdminCommand::Restore {
            backup,
            data_dir,
            node_id,
        } => {
            let data =
                std::fs::read(&backup).with_context(|| format!("reading {}", backup.display()))?;
            let cfg = kv::KvConfig {
                data_dir: data_dir.clone(),
                node_id,
                compaction_window: Duration::from_secs(300),
                ..Default::default()
            };
            let rev = kv::Kv::restore(&data, &cfg)
                .map_err(|e| anyhow::anyhow!("restoring {}: {e}", backup.display()))?;
            writeln!(
                out,
                "restored revision {rev} into {} (start it with: rafter serve --data-dir {} --node-id {node_id})",
                data_dir.display(),
                data_dir.display()
            )?;
        }
    }
    Ok(())
}

const TLS_HINT: &str = "if the admin API uses mutual TLS, pass --data-dir or --ca/--cert/--key";

/// A failed call as the user sees it: `<command>: <code>: <message>`.
fn rpc_error(conn: &Conn, what: &str, s: tonic::Status) -> anyhow::Error {
    let mut msg = format!("{what}: {:?}: {}", s.code(), s.message());
    if let Some(src) = std::error::Error::source(&s) {
        msg.push_str(&format!(" ({src})"));
    }
    let transport = matches!(
        s.code(),
        tonic::Code::Cancelled | tonic::Code::Unknown | tonic::Code::Unavailable
    );
    if transport && conn.plaintext() {
        msg.push_str(&format!(" ({TLS_HINT})"));
    }
    anyhow::anyhow!(msg)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

/// Opens a channel to the admin endpoint (mutual TLS when certificates are given or found).
pub async fn connect(conn: &Conn) -> Result<AdminClient<Channel>> {
    if let Some(found) = conn.discovered() {
        if let Ok(c) = connect_with(conn, Some(found)).await {
            return Ok(c);
        }
    }
    connect_with(conn, conn.files()).await
}

async fn connect_with(
    conn: &Conn,
    files: Option<(PathBuf, PathBuf, PathBuf)>,
) -> Result<AdminClient<Channel>> {
    let host_port = conn
        .endpoint
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let scheme = if files.is_some() { "https" } else { "http" };
    let mut ep = Endpoint::from_shared(format!("{scheme}://{host_port}"))
        .with_context(|| format!("invalid endpoint {:?}", conn.endpoint))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(conn.timeout.max(1)));
    if let Some((ca, cert, key)) = &files {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tls = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(read(ca)?))
            .identity(Identity::from_pem(read(cert)?, read(key)?));
        ep = ep.tls_config(tls).context("admin TLS configuration")?;
    }
    let channel = ep.connect().await.map_err(|e| {
        let mut msg = format!("connecting to {host_port}: {e}");
        let mut src = std::error::Error::source(&e);
        while let Some(s) = src {
            msg.push_str(&format!(": {s}"));
            src = s.source();
        }
        if files.is_none() {
            msg.push_str(&format!(" ({TLS_HINT})"));
        }
        anyhow::anyhow!(msg)
    })?;
    Ok(AdminClient::new(channel).max_decoding_message_size(64 << 20))
}

/// Streams a backup into `path` (via a temporary file, fsynced, then renamed).
async fn backup(conn: &Conn, path: &Path) -> Result<(i64, u64)> {
    let mut c = connect(conn).await?;
    // A backup may take longer than one call's bound: give the stream a generous limit and
    // bound the wait for each chunk instead.
    let mut req = tonic::Request::new(BackupRequest {});
    req.set_timeout(Duration::from_secs(conn.timeout.max(1) * 20));
    let mut stream = c
        .backup(req)
        .await
        .map_err(|e| rpc_error(conn, "backup", e))?
        .into_inner();
    let tmp = path.with_extension("partial");
    let mut f =
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let per_chunk = Duration::from_secs(conn.timeout.max(1));
    let mut revision = None;
    let mut expected = 0u64;
    let mut written = 0u64;
    let res: Result<()> = async {
        loop {
            let msg = tokio::time::timeout(per_chunk, stream.message())
                .await
                .map_err(|_| anyhow::anyhow!("backup: no data for {per_chunk:?}"))?
                .map_err(|e| rpc_error(conn, "backup", e))?;
            let Some(chunk) = msg else { break };
            if revision.is_none() {
                revision = Some(chunk.revision);
                expected = chunk.total_size;
            }
            f.write_all(&chunk.data)?;
            written += chunk.data.len() as u64;
        }
        if revision.is_none() {
            bail!("backup: the server sent no data");
        }
        if written != expected {
            bail!("backup: received {written} bytes, expected {expected}");
        }
        f.sync_all()?;
        Ok(())
    }
    .await;
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok((revision.unwrap_or(0), written))
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The human-readable status: a summary line, then one row per member.
pub fn status_table(s: &kv::ClusterStatus) -> String {
    let mut text = format!(
        "LEADER: {}  TERM: {}  COMMIT: {}  APPLIED: {}  REVISION: {}  COMPACTED: {}  SNAPSHOT: {} ({} installed)  (answered by replica {})\n",
        opt(s.leader),
        s.term,
        s.commit_index,
        s.applied_index,
        s.current_revision,
        s.compacted_revision,
        opt(s.snapshot_index),
        s.snapshots_installed,
        s.node_id
    );
    let mut rows = vec![[
        "ID".to_string(),
        "ROLE".to_string(),
        "VOTER".to_string(),
        "PEER".to_string(),
        "API".to_string(),
        "MATCHED".to_string(),
        "LAG".to_string(),
    ]];
    for m in &s.members {
        let dash = |a: &str| {
            if a.is_empty() {
                "-".to_string()
            } else {
                a.to_string()
            }
        };
        rows.push([
            m.id.to_string(),
            m.role.clone(),
            if m.voter { "yes" } else { "no" }.to_string(),
            dash(&m.peer_addr),
            dash(&m.api_addr),
            opt(m.matched_index),
            opt(m.lag),
        ]);
    }
    let mut widths = [0usize; 7];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        text.push_str(line.join("   ").trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_table_lists_members() {
        let s = kv::ClusterStatus {
            node_id: 2,
            leader: Some(1),
            term: 3,
            commit_index: 10,
            applied_index: 9,
            current_revision: 7,
            compacted_revision: 2,
            snapshot_index: Some(8),
            snapshots_installed: 1,
            purged_index: Some(5),
            members: vec![
                kv::ReplicaStatus {
                    id: 1,
                    peer_addr: "127.0.0.1:7001".into(),
                    api_addr: "127.0.0.1:6443".into(),
                    role: "leader".into(),
                    voter: true,
                    matched_index: Some(10),
                    lag: Some(0),
                },
                kv::ReplicaStatus {
                    id: 4,
                    peer_addr: String::new(),
                    api_addr: String::new(),
                    role: "learner".into(),
                    voter: false,
                    matched_index: None,
                    lag: None,
                },
            ],
        };
        let t = status_table(&s);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("LEADER: 1  TERM: 3  COMMIT: 10  APPLIED: 9"));
        assert!(lines[0].contains("SNAPSHOT: 8 (1 installed)"));
        assert!(lines[0].ends_with("(answered by replica 2)"));
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["ID", "ROLE", "VOTER", "PEER", "API", "MATCHED", "LAG"]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            [
                "1",
                "leader",
                "yes",
                "127.0.0.1:7001",
                "127.0.0.1:6443",
                "10",
                "0"
            ]
        );
        assert_eq!(
            lines[3].split_whitespace().collect::<Vec<_>>(),
            ["4", "learner", "no", "-", "-", "-", "-"]
        );
    }
}
