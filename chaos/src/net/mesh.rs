//! [`Mesh`]: every proxy of one cluster, and the partition helpers built on them.
//!
//! Links are directional. Replica `a` dials replica `b`'s peer port through the proxy of link
//! `(a, b)`: configure replica `a` with `mesh.peer_addr(a, b)` as `b`'s address. Traffic of a
//! connection `a` opened to `b` (both directions of its bytes) goes through link `(a, b)`; a
//! connection `b` opened to `a` goes through `(b, a)`. Cutting the pair `a`–`b` therefore
//! means faulting both links, which is what every helper here does. Each node also has one
//! API link (`mesh.api_addr(n)`, clients → replica `n`'s API port), which only
//! [`set_api`](Mesh::set_api), [`set_all`](Mesh::set_all) and [`heal`](Mesh::heal) touch.
//!
//! Helpers and what they change:
//! - [`set_link`](Mesh::set_link) / [`set_pair`](Mesh::set_pair) / [`set_api`](Mesh::set_api):
//!   just those links.
//! - [`isolate`](Mesh::isolate): blackholes every peer link from and to the node; the other
//!   links keep their fault (so isolating two nodes in turn isolates both).
//! - [`partition`](Mesh::partition) / [`bridge`](Mesh::bridge): set **every** peer link — the
//!   ones that cross the cut to `Blackhole` (or the fault given to the `_with` variant), all the
//!   others to `Healthy`. A node listed in no group is cut off from every other node.
//! - [`heal`](Mesh::heal): every link, peer and API, back to `Healthy`.
//!
//! Seeds: the proxy of a link gets a seed derived from the mesh seed and the link's identity,
//! so one mesh seed replays the whole cluster's random faults.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

use anyhow::{bail, Context, Result};

use super::fault::{Fault, Rng};
use super::proxy::{Proxy, Stats};

/// A replica's real (upstream) addresses, as the harness started it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeAddrs {
    pub id: u32,
    /// The replica's peer (Raft) port.
    pub peer: SocketAddr,
    /// The replica's API port.
    pub api: SocketAddr,
}

/// All proxies of a cluster: peer links keyed `(from, to)`, API links keyed by node.
#[derive(Debug)]
pub struct Mesh {
    seed: u64,
    listen: SocketAddr,
    nodes: BTreeMap<u32, NodeAddrs>,
    peers: BTreeMap<(u32, u32), Proxy>,
    api: BTreeMap<u32, Proxy>,
}

const PEER_TAG: u64 = 1;
const API_TAG: u64 = 2;

impl Mesh {
    /// An empty mesh whose proxies will listen on 127.0.0.1 (free ports).
    pub fn new(seed: u64) -> Mesh {
        Mesh::with_listen_ip(seed, SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// An empty mesh whose proxies listen on `listen`'s IP (its port is ignored: free ports).
    pub fn with_listen_ip(seed: u64, listen: SocketAddr) -> Mesh {
        let mut listen = listen;
        listen.set_port(0);
        Mesh {
            seed,
            listen,
            nodes: BTreeMap::new(),
            peers: BTreeMap::new(),
            api: BTreeMap::new(),
        }
    }

    /// A full mesh over `nodes`: one API proxy per node and one peer proxy per ordered pair.
    pub async fn start(nodes: &[NodeAddrs], seed: u64) -> Result<Mesh> {
        let mut mesh = Mesh::new(seed);
        for n in nodes {
            mesh.add_node(*n).await?;
        }
        Ok(mesh)
    }

    /// Adds a node: its API proxy and the peer proxies between it and every node already in
    /// the mesh (both directions). New links are healthy.
    pub async fn add_node(&mut self, node: NodeAddrs) -> Result<()> {
        if self.nodes.contains_key(&node.id) {
            bail!("node {} is already in the mesh", node.id);
        }
        let seed = Rng::derive(self.seed, API_TAG, node.id as u64).next_u64();
        let api = Proxy::start(self.listen, node.api, seed)
            .await
            .with_context(|| format!("API proxy for node {}", node.id))?;
        self.api.insert(node.id, api);
        let others: Vec<NodeAddrs> = self.nodes.values().copied().collect();
        for other in others {
            for (from, to) in [(node, other), (other, node)] {
                let link_id = ((from.id as u64) << 32) | to.id as u64;
                let seed = Rng::derive(self.seed, PEER_TAG, link_id).next_u64();
                let proxy = Proxy::start(self.listen, to.peer, seed)
                    .await
                    .with_context(|| format!("peer proxy {}->{}", from.id, to.id))?;
                self.peers.insert((from.id, to.id), proxy);
            }
        }
        self.nodes.insert(node.id, node);
        Ok(())
    }

    /// Node ids, ascending.
    pub fn nodes(&self) -> Vec<u32> {
        self.nodes.keys().copied().collect()
    }

    /// The address replica `from` must use for replica `to`'s peer port.
    pub fn peer_addr(&self, from: u32, to: u32) -> Option<SocketAddr> {
        self.peers.get(&(from, to)).map(Proxy::local_addr)
    }

    /// The address clients use for replica `node`'s API.
    pub fn api_addr(&self, node: u32) -> Option<SocketAddr> {
        self.api.get(&node).map(Proxy::local_addr)
    }

    /// The proxy of link `from → to`.
    pub fn peer_proxy(&self, from: u32, to: u32) -> Option<&Proxy> {
        self.peers.get(&(from, to))
    }

    /// The API proxy of `node`.
    pub fn api_proxy(&self, node: u32) -> Option<&Proxy> {
        self.api.get(&node)
    }

    /// Points the links to `node` at new upstream addresses (a replica restarted on other
    /// ports). Affects connections made from now on.
    pub fn set_upstream(&mut self, node: NodeAddrs) -> Result<()> {
        let Some(known) = self.nodes.get_mut(&node.id) else {
            bail!("unknown node {}", node.id)
        };
        *known = node;
        for ((_, to), p) in &self.peers {
            if *to == node.id {
                p.set_upstream(node.peer);
            }
        }
        if let Some(p) = self.api.get(&node.id) {
            p.set_upstream(node.api);
        }
        Ok(())
    }

    /// Sets the fault of the one directional link `from → to`.
    pub fn set_link(&self, from: u32, to: u32, fault: Fault) -> Result<()> {
        match self.peers.get(&(from, to)) {
            Some(p) => {
                p.set(fault);
                Ok(())
            }
            None => bail!("no peer link {from}->{to}"),
        }
    }

    /// Sets both links between `a` and `b`.
    pub fn set_pair(&self, a: u32, b: u32, fault: Fault) -> Result<()> {
        self.set_link(a, b, fault)?;
        self.set_link(b, a, fault)
    }

    /// Sets the API link of `node`.
    pub fn set_api(&self, node: u32, fault: Fault) -> Result<()> {
        match self.api.get(&node) {
            Some(p) => {
                p.set(fault);
                Ok(())
            }
            None => bail!("no API link for node {node}"),
        }
    }

    /// Sets every peer link (e.g. a cluster-wide `Delay`); API links unchanged.
    pub fn set_all_peers(&self, fault: Fault) {
        for p in self.peers.values() {
            p.set(fault);
        }
    }

    /// Sets every link, peer and API.
    pub fn set_all(&self, fault: Fault) {
        self.set_all_peers(fault);
        for p in self.api.values() {
            p.set(fault);
        }
    }

    /// Blackholes every peer link from and to `node` (other links unchanged; API unchanged).
    pub fn isolate(&self, node: u32) -> Result<()> {
        self.isolate_with(node, Fault::Blackhole)
    }

    /// [`isolate`](Self::isolate) with another cutting fault (e.g. `Refuse`).
    pub fn isolate_with(&self, node: u32, fault: Fault) -> Result<()> {
        self.check_known(node)?;
        for ((from, to), p) in &self.peers {
            if *from == node || *to == node {
                p.set(fault);
            }
        }
        Ok(())
    }

    /// Splits the cluster into `groups`: peer links between groups are blackholed (both
    /// directions), links inside a group healed. Nodes in no group are cut off from all.
    /// Errors (changing nothing) on an unknown or repeated node.
    pub fn partition<G: AsRef<[u32]>>(&self, groups: &[G]) -> Result<()> {
        self.partition_with(groups, Fault::Blackhole)
    }

    /// [`partition`](Self::partition) with another cutting fault (e.g. `Refuse`, `Delay`).
    pub fn partition_with<G: AsRef<[u32]>>(&self, groups: &[G], cut: Fault) -> Result<()> {
        let mut group_of = BTreeMap::new();
        for (i, g) in groups.iter().enumerate() {
            for &n in g.as_ref() {
                self.check_known(n)?;
                if group_of.insert(n, i).is_some() {
                    bail!("node {n} is in more than one group");
                }
            }
        }
        self.apply(
            cut,
            |a, b| matches!((group_of.get(&a), group_of.get(&b)), (Some(x), Some(y)) if x == y),
        );
        Ok(())
    }

    /// Two halves `a` and `b` that only `bridge` connects: links inside `a ∪ {bridge}` and
    /// inside `b ∪ {bridge}` are healthy, links between `a` and `b` blackholed (both
    /// directions). Nodes in neither are cut off from all. Errors (changing nothing) on an
    /// unknown or repeated node.
    pub fn bridge(&self, a: &[u32], b: &[u32], bridge: u32) -> Result<()> {
        self.bridge_with(a, b, bridge, Fault::Blackhole)
    }

    /// [`bridge`](Self::bridge) with another cutting fault.
    pub fn bridge_with(&self, a: &[u32], b: &[u32], bridge: u32, cut: Fault) -> Result<()> {
        let mut seen = BTreeSet::new();
        for &n in a.iter().chain(b).chain([&bridge]) {
            self.check_known(n)?;
            if !seen.insert(n) {
                bail!("node {n} is listed twice in the bridge");
            }
        }
        let side = |n: u32| {
            if a.contains(&n) {
                Some(0)
            } else if b.contains(&n) {
                Some(1)
            } else {
                None
            }
        };
        self.apply(cut, |x, y| {
            if x == bridge || y == bridge {
                return side(if x == bridge { y } else { x }).is_some();
            }
            matches!((side(x), side(y)), (Some(p), Some(q)) if p == q)
        });
        Ok(())
    }

    /// Every link, peer and API, back to `Healthy`.
    pub fn heal(&self) {
        self.set_all(Fault::Healthy);
    }

    /// The peer links whose fault is not `Healthy`, ascending by `(from, to)`.
    pub fn faulted_links(&self) -> Vec<((u32, u32), Fault)> {
        self.peers
            .iter()
            .map(|(k, p)| (*k, p.fault()))
            .filter(|(_, f)| !f.is_healthy())
            .collect()
    }

    /// Counters of every peer link.
    pub fn peer_stats(&self) -> BTreeMap<(u32, u32), Stats> {
        self.peers.iter().map(|(k, p)| (*k, p.stats())).collect()
    }

    /// Counters of every API link.
    pub fn api_stats(&self) -> BTreeMap<u32, Stats> {
        self.api.iter().map(|(k, p)| (*k, p.stats())).collect()
    }

    /// Stops every proxy (see [`Proxy::stop`]).
    pub async fn stop(self) {
        for p in self.peers.into_values() {
            p.stop().await;
        }
        for p in self.api.into_values() {
            p.stop().await;
        }
    }

    fn check_known(&self, n: u32) -> Result<()> {
        if !self.nodes.contains_key(&n) {
            bail!("unknown node {n}");
        }
        Ok(())
    }

    /// Every peer link: `Healthy` if `connected(from, to)`, else `cut`.
    fn apply(&self, cut: Fault, connected: impl Fn(u32, u32) -> bool) {
        for (&(from, to), p) in &self.peers {
            p.set(if connected(from, to) {
                Fault::Healthy
            } else {
                cut
            });
        }
    }
}
