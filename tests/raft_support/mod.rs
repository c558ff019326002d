//! Test support: an in-process cluster of `Kv` replicas on 127.0.0.1 with temporary data
//! folders, free peer ports and a shared fault injector. Every wait is bounded; replicas are
//! shut down when the cluster drops (their tasks end with the test runtime).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rafter::kv::{Faults, Kv, KvConfig, KvOptions, Op, Txn};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn opts() -> KvOptions {
    KvOptions {
        request_timeout: Duration::from_secs(3),
        startup_timeout: Duration::from_secs(5),
        compaction_tick: Duration::from_secs(3600),
        ..KvOptions::default()
    }
}

pub fn put(k: &str, v: &str) -> Txn {
    Txn {
        compares: vec![],
        success: vec![Op::Put {
            key: k.into(),
            value: v.into(),
        }],
    }
}

pub struct Cluster {
    pub faults: Arc<Faults>,
    pub opts: KvOptions,
    kvs: BTreeMap<u64, Kv>,
    dirs: BTreeMap<u64, tempfile::TempDir>,
    addrs: BTreeMap<u64, String>,
    members: BTreeMap<u64, String>,
    /// Peer mutual TLS from one shared CA (the server's own PKI), when set.
    tls: bool,
    _ca_dir: Option<tempfile::TempDir>,
}

impl Cluster {
    /// Starts replicas 1..=n as the initial members of a new cluster and waits for a leader.
    pub async fn start(n: u64, opts: KvOptions) -> Cluster {
        Cluster::start_with(n, opts, false).await
    }

    /// Like [`Cluster::start`], with mutual TLS between the replicas: every replica's data
    /// folder gets certificates signed by one shared CA.
    pub async fn start_tls(n: u64, opts: KvOptions) -> Cluster {
        Cluster::start_with(n, opts, true).await
    }

    async fn start_with(n: u64, opts: KvOptions, tls: bool) -> Cluster {
        let mut c = Cluster {
            faults: Faults::new(),
            opts,
            kvs: BTreeMap::new(),
            dirs: BTreeMap::new(),
            addrs: BTreeMap::new(),
            members: BTreeMap::new(),
            tls,
            _ca_dir: None,
        };
        let ca_dir = tempfile::tempdir().unwrap();
        if tls {
            rafter::server::pki::Pki::new(ca_dir.path())
                .ensure(&[])
                .unwrap();
        }
        for id in 1..=n {
            let addr = format!("127.0.0.1:{}", free_port());
            c.addrs.insert(id, addr.clone());
            c.members.insert(id, addr);
            let dir = tempfile::tempdir().unwrap();
            if tls {
                for f in ["ca.crt", "ca.key"] {
                    std::fs::copy(ca_dir.path().join(f), dir.path().join(f)).unwrap();
                }
                rafter::server::pki::Pki::new(dir.path())
                    .ensure(&[])
                    .unwrap();
            }
            c.dirs.insert(id, dir);
        }
        c._ca_dir = Some(ca_dir);
        for id in 1..=n {
            c.open(id, false).await;
        }
        c.leader().await;
        c
    }

    fn config(&self, id: u64, join: bool) -> KvConfig {
        KvConfig {
            data_dir: self.dirs[&id].path().to_path_buf(),
            node_id: id,
            compaction_window: Duration::from_secs(3600),
            peer_listen: Some(self.addrs[&id].parse().unwrap()),
            api_addr: format!("127.0.0.1:{}", 10000 + id),
            initial_members: if join {
                BTreeMap::new()
            } else {
                self.members.clone()
            },
            join,
            faults: Some(self.faults.clone()),
            peer_tls: self.tls.then(|| {
                let d = self.dirs[&id].path();
                rafter::kv::PeerTls {
                    ca: d.join("ca.crt"),
                    cert: d.join("server.crt"),
                    key: d.join("server.key"),
                }
            }),
            ..KvConfig::default()
        }
    }

    async fn open(&mut self, id: u64, join: bool) {
        let cfg = self.config(id, join);
        let deadline = Instant::now() + Duration::from_secs(10);
        // A just-stopped replica may still hold its database lock or port for a moment.
        let kv = loop {
            match Kv::open_with(cfg.clone(), self.opts.clone()).await {
                Ok(kv) => break kv,
                Err(e) if Instant::now() < deadline => {
                    eprintln!("opening replica {id}: {e}; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("opening replica {id}: {e}"),
            }
        };
        self.kvs.insert(id, kv);
    }

    pub fn kv(&self, id: u64) -> &Kv {
        &self.kvs[&id]
    }

    pub fn ids(&self) -> Vec<u64> {
        self.kvs.keys().copied().collect()
    }

    pub fn peer_addr(&self, id: u64) -> String {
        self.addrs[&id].clone()
    }

    /// Waits (bounded) until a running replica leads; returns its id.
    pub async fn leader(&self) -> u64 {
        self.leader_among(&self.ids()).await
    }

    /// Waits (bounded) until one of `ids` leads and the others of `ids` know it.
    pub async fn leader_among(&self, ids: &[u64]) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            for id in ids {
                let kv = &self.kvs[id];
                if kv.is_leader() {
                    let agreed = ids.iter().all(|o| self.kvs[o].leader() == Some(*id));
                    if agreed {
                        return *id;
                    }
                }
            }
            assert!(Instant::now() < deadline, "no leader among {ids:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A running replica other than `not`.
    pub fn other(&self, not: &[u64]) -> u64 {
        *self.kvs.keys().find(|id| !not.contains(id)).unwrap()
    }

    pub async fn stop(&mut self, id: u64) {
        if let Some(kv) = self.kvs.remove(&id) {
            kv.shutdown().await;
        }
    }

    pub async fn restart(&mut self, id: u64) {
        self.stop(id).await;
        self.open(id, false).await;
    }

    /// Starts a new, empty replica `id` that waits to be added (`--join`).
    pub async fn start_joiner(&mut self, id: u64) -> String {
        let addr = format!("127.0.0.1:{}", free_port());
        self.addrs.insert(id, addr.clone());
        self.dirs.insert(id, tempfile::tempdir().unwrap());
        self.open(id, true).await;
        addr
    }

    /// Waits (bounded) until replica `id` has applied at least `rev`.
    pub async fn wait_rev(&self, id: u64, rev: i64) {
        assert!(
            self.kvs[&id]
                .wait_for_revision(rev, Duration::from_secs(10))
                .await,
            "replica {id} did not reach revision {rev} (at {})",
            self.kvs[&id].current_revision()
        );
    }

    pub async fn shutdown(mut self) {
        for id in self.ids() {
            self.stop(id).await;
        }
    }
}
