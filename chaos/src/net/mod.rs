//! Fault-injecting TCP proxies for the loopback links of a test cluster.
//!
//! The harness starts real `rafter` replicas on 127.0.0.1 and puts a [`Proxy`] in front of
//! every peer link and every API port; a [`Mesh`] holds all of them and knows partitions.
//! Peer links are directional (one proxy per `(from, to)`): replica A is configured with
//! `mesh.peer_addr(A, B)` as B's address, so A's connections to B go through link `(A, B)`
//! and B's connections to A through `(B, A)`.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use rafter_chaos::net::{Fault, Mesh, NodeAddrs};
//! let nodes: Vec<NodeAddrs> = vec![/* each replica's real peer and API addresses */];
//! let mesh = Mesh::start(&nodes, 42).await?;
//! // configure replica a with mesh.peer_addr(a, b) for every b, clients with mesh.api_addr(n)
//! mesh.partition(&[vec![1, 2], vec![3]])?; // 3 cut off from 1 and 2, both directions
//! mesh.heal();
//! mesh.set_all_peers(Fault::delay(std::time::Duration::from_millis(20)));
//! mesh.stop().await;
//! # Ok(()) }
//! ```
//!
//! Fault semantics are in [`fault`]; proxy mechanics (resets, upstream down, lifetime) in
//! [`proxy`]; link layout and what each partition helper changes in [`mesh`].

pub mod fault;
pub mod mesh;
pub mod proxy;

pub use fault::{Fault, Rng};
pub use mesh::{Mesh, NodeAddrs};
pub use proxy::{Proxy, Stats};

#[cfg(test)]
mod tests;
