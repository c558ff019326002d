//! Replication behaviour of an in-process cluster over real gRPC on 127.0.0.1: follower
//! writes and read-your-writes, linearizable reads across a leader change, a partitioned
//! minority (bounded errors) versus the majority, restart and catch-up by snapshot, a learner
//! that joins by snapshot and is promoted, removal of the leader, and backup / restore.

mod raft_support;

use std::time::{Duration, Instant};

use raft_support::{opts, put, Cluster};
use rafter::kv::{Error, Kv, KvConfig, KvOptions};

fn snapshot_opts() -> KvOptions {
    KvOptions {
        snapshot_every: 20,
        keep_logs: 0,
        ..opts()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn follower_writes_and_reads_across_a_leader_change() {
    let c = Cluster::start(3, opts()).await;
    let leader = c.leader().await;
    let f = c.other(&[leader]);
    let g = c.other(&[leader, f]);
    // A write on a follower is answered once applied there.
    let r = c.kv(f).txn(put("a", "1")).await.unwrap();
    assert_eq!(
        c.kv(f).get(b"a", None).unwrap().unwrap().mod_revision,
        r.revision
    );
    // Hand leadership to the other follower; the old leader now forwards.
    c.kv(f).transfer_leader(g).await.unwrap();
    assert_eq!(c.leader_among(&c.ids()).await, g);
    let r2 = c.kv(leader).txn(put("a", "2")).await.unwrap();
    assert_eq!(r2.revision, r.revision + 1);
    // Linearizable read on every replica sees the latest write.
    for id in c.ids() {
        let rev = c.kv(id).read_barrier().await.unwrap();
        assert_eq!(rev, r2.revision, "replica {id}");
        assert_eq!(
            c.kv(id).get(b"a", None).unwrap().unwrap().value,
            b"2".to_vec()
        );
    }
    // Concurrent readers on a follower share ReadIndex rounds and all succeed.
    let readers: Vec<_> = (0..32)
        .map(|_| {
            let kv = c.kv(f).clone();
            tokio::spawn(async move { kv.read_barrier().await })
        })
        .collect();
    for r in readers {
        assert_eq!(r.await.unwrap().unwrap(), r2.revision);
    }
    // Each replica announces its API address into its member info (bounded wait).
    let deadline = Instant::now() + Duration::from_secs(10);
    let st = loop {
        let st = c.kv(f).cluster_status().await.unwrap();
        if st
            .members
            .iter()
            .all(|m| m.api_addr == format!("127.0.0.1:{}", 10000 + m.id))
        {
            break st;
        }
        assert!(Instant::now() < deadline, "{st:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(st.leader, Some(g));
    assert_eq!(st.members.len(), 3);
    let lead = st.members.iter().find(|m| m.id == g).unwrap();
    assert_eq!(lead.role, "leader");
    assert!(st.members.iter().all(|m| m.voter && m.lag.is_some()));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn partitioned_minority_fails_fast_and_majority_serves() {
    let c = Cluster::start(3, opts()).await;
    let old = c.leader().await;
    c.kv(old).txn(put("k", "0")).await.unwrap();
    // Cut the leader off: it is a minority of one.
    c.faults.isolate(old);
    let majority: Vec<u64> = c.ids().into_iter().filter(|i| *i != old).collect();
    let t = Instant::now();
    let w = c.kv(old).txn(put("k", "minority")).await;
    assert!(
        matches!(w, Err(Error::Unavailable(_) | Error::Timeout(_))),
        "{w:?}"
    );
    let r = c.kv(old).read_barrier().await;
    assert!(
        matches!(r, Err(Error::Unavailable(_) | Error::Timeout(_))),
        "{r:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // "Any" reads still work locally on the minority.
    assert_eq!(
        c.kv(old).get(b"k", None).unwrap().unwrap().value,
        b"0".to_vec()
    );
    // The majority elects a leader and serves writes and linearizable reads.
    let new = c.leader_among(&majority).await;
    assert_ne!(new, old);
    let f = *majority.iter().find(|i| **i != new).unwrap();
    let r = c.kv(f).txn(put("k", "majority")).await.unwrap();
    assert_eq!(c.kv(new).read_barrier().await.unwrap(), r.revision);
    assert_eq!(
        c.kv(new).get(b"k", None).unwrap().unwrap().value,
        b"majority".to_vec()
    );
    // Healed, the old leader catches up and serves again.
    c.faults.heal();
    c.wait_rev(old, r.revision).await;
    assert_eq!(c.kv(old).read_barrier().await.unwrap(), r.revision);
    assert_eq!(
        c.kv(old).get(b"k", None).unwrap().unwrap().value,
        b"majority".to_vec()
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restarted_replica_catches_up_by_snapshot() {
    let mut c = Cluster::start(3, snapshot_opts()).await;
    let leader = c.leader().await;
    let down = c.other(&[leader]);
    c.kv(down).txn(put("before", "1")).await.unwrap();
    c.stop(down).await;
    let first = c.kv(leader).current_revision();
    let mut last = 0;
    for i in 0..60 {
        last = c
            .kv(leader)
            .txn(put(&format!("k{i}"), "v"))
            .await
            .unwrap()
            .revision;
    }
    // Snapshot until the leader's log no longer reaches back to the stopped replica (a purge
    // waits while replication to it is in flight).
    let down_applied = c
        .kv(leader)
        .cluster_status()
        .await
        .unwrap()
        .members
        .iter()
        .find(|m| m.id == down)
        .and_then(|m| m.matched_index)
        .unwrap_or(0);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        c.kv(leader).trigger_snapshot().await.unwrap();
        let st = c.kv(leader).cluster_status().await.unwrap();
        if st.purged_index.is_some_and(|p| p > down_applied + 1) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the log was never purged: {st:?}"
        );
        last = c.kv(leader).txn(put("more", "v")).await.unwrap().revision;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.restart(down).await;
    c.wait_rev(down, last).await;
    assert_eq!(
        c.kv(down).get(b"k59", None).unwrap().unwrap().value,
        b"v".to_vec()
    );
    assert_eq!(
        c.kv(down).get(b"before", None).unwrap().unwrap().value,
        b"1".to_vec()
    );
    // It caught up by installing the leader's snapshot (its raft metrics follow shortly).
    let deadline = Instant::now() + Duration::from_secs(5);
    let st = loop {
        let st = c.kv(down).cluster_status().await.unwrap();
        if st.snapshot_index.is_some_and(|i| i >= 60) || Instant::now() > deadline {
            break st;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(st.snapshots_installed, 1, "{st:?}");
    assert!(st.snapshot_index.is_some_and(|i| i >= 60), "{st:?}");
    // The snapshot carried the history: one window on every replica (bug 5). Past reads
    // and events below the snapshot's revision answer as on the leader...
    assert_eq!(
        c.kv(down).compacted_revision(),
        c.kv(leader).compacted_revision()
    );
    let early = first + 5;
    assert_eq!(
        c.kv(down).range(b"k", b"l", Some(early), 0).unwrap(),
        c.kv(leader).range(b"k", b"l", Some(early), 0).unwrap()
    );
    assert_eq!(
        c.kv(down).events_since(early, b"", b"").unwrap(),
        c.kv(leader).events_since(early, b"", b"").unwrap()
    );
    // ...and a compaction below the snapshot's revision is applied alike everywhere.
    c.kv(leader).compact(early).await.unwrap();
    let r = c.kv(leader).txn(put("sync", "1")).await.unwrap();
    c.wait_rev(down, r.revision).await;
    for id in c.ids() {
        assert_eq!(c.kv(id).compacted_revision(), early, "replica {id}");
        assert!(
            c.kv(id).get(b"k10", Some(early + 1)).is_ok(),
            "replica {id}"
        );
    }
    // It serves writes and linearizable reads again.
    let r = c.kv(down).txn(put("after", "1")).await.unwrap();
    assert_eq!(c.kv(leader).read_barrier().await.unwrap(), r.revision);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn learner_joins_by_snapshot_is_promoted_and_the_leader_is_removed() {
    let mut c = Cluster::start(3, snapshot_opts()).await;
    let leader = c.leader().await;
    let f = c.other(&[leader]);
    let mut last = 0;
    for i in 0..30 {
        last = c
            .kv(f)
            .txn(put(&format!("k{i}"), "v"))
            .await
            .unwrap()
            .revision;
    }
    // Snapshot and purge the log behind it: a new replica can only start from the snapshot.
    let snap = c.kv(leader).trigger_snapshot().await.unwrap();
    assert!(snap >= 30, "{snap}");
    // A learner nobody runs is refused with a clear error instead of never catching up.
    let nobody = format!(
        "127.0.0.1:{}",
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    );
    let err = c
        .kv(f)
        .add_learner(9, nobody, String::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot be reached over the peer transport"),
        "{err}"
    );
    let addr = c.start_joiner(4).await;
    assert!(c.kv(4).health().is_err());
    c.kv(f)
        .add_learner(4, addr, "127.0.0.1:10004".into())
        .await
        .unwrap();
    c.wait_rev(4, last).await;
    assert_eq!(
        c.kv(4).get(b"k29", None).unwrap().unwrap().value,
        b"v".to_vec()
    );
    let st = c.kv(leader).cluster_status().await.unwrap();
    let m4 = st.members.iter().find(|m| m.id == 4).unwrap();
    assert_eq!((m4.role.as_str(), m4.voter), ("learner", false));
    // Promote it, from another follower.
    c.kv(c.other(&[leader, f])).promote(4).await.unwrap();
    // Replica 4 learns of its promotion when it applies the membership entry (bounded wait).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let st = c.kv(4).cluster_status().await.unwrap();
        if st.members.iter().any(|m| m.id == 4 && m.voter) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "replica 4 never saw itself as a voter: {st:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Remove the leader (asked of a follower); the others carry on.
    c.kv(f).remove_member(leader).await.unwrap();
    let rest: Vec<u64> = c.ids().into_iter().filter(|i| *i != leader).collect();
    let new = c.leader_among(&rest).await;
    assert_ne!(new, leader);
    let r = c.kv(4).txn(put("after-removal", "1")).await.unwrap();
    for id in &rest {
        assert_eq!(c.kv(*id).read_barrier().await.unwrap(), r.revision);
    }
    let st = c.kv(new).cluster_status().await.unwrap();
    assert_eq!(st.members.len(), 3);
    assert!(st.members.iter().all(|m| m.id != leader));
    // Invalid operations are typed errors.
    assert!(matches!(
        c.kv(new).promote(99).await,
        Err(Error::Invalid(_))
    ));
    c.stop(leader).await;
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backup_then_restore_into_a_fresh_cluster() {
    let c = Cluster::start(3, opts()).await;
    let leader = c.leader().await;
    let f = c.other(&[leader]);
    for i in 0..10 {
        c.kv(f)
            .txn(put(&format!("k{i}"), &i.to_string()))
            .await
            .unwrap();
    }
    c.kv(f).txn(put("k3", "again")).await.unwrap();
    let backup = c.kv(f).backup().await.unwrap();
    let src = c.kv(f).range(b"", b"", None, 0).unwrap();
    assert_eq!(backup.revision, src.revision);
    c.shutdown().await;

    // Restore as replica 7 of a new cluster that peers can join.
    let dir = tempfile::tempdir().unwrap();
    let peer: std::net::SocketAddr = format!("127.0.0.1:{}", raft_support::free_port())
        .parse()
        .unwrap();
    let cfg = KvConfig {
        node_id: 7,
        peer_listen: Some(peer),
        ..KvConfig::single(dir.path())
    };
    assert_eq!(Kv::restore(&backup.data, &cfg).unwrap(), backup.revision);
    assert!(
        Kv::restore(&backup.data, &cfg).is_err(),
        "restore over existing data"
    );
    assert!(matches!(
        Kv::restore(b"garbage", &KvConfig::single(dir.path().join("x"))),
        Err(Error::Invalid(_))
    ));
    let kv = Kv::open_with(cfg, opts()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !kv.is_leader() {
        assert!(Instant::now() < deadline, "restored replica never leads");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = kv.range(b"", b"", None, 0).unwrap();
    assert_eq!(got.revision, backup.revision);
    assert_eq!(got.kvs, src.kvs);
    // A replica added to the restored cluster receives the same keyspace.
    let dir2 = tempfile::tempdir().unwrap();
    let peer2 = format!("127.0.0.1:{}", raft_support::free_port());
    let joiner = Kv::open_with(
        KvConfig {
            node_id: 8,
            peer_listen: Some(peer2.parse().unwrap()),
            join: true,
            ..KvConfig::single(dir2.path())
        },
        opts(),
    )
    .await
    .unwrap();
    kv.add_learner(8, peer2, String::new()).await.unwrap();
    assert!(
        joiner
            .wait_for_revision(backup.revision, Duration::from_secs(10))
            .await
    );
    assert_eq!(joiner.range(b"", b"", None, 0).unwrap().kvs, src.kvs);
    let r = kv.txn(put("new", "1")).await.unwrap();
    assert_eq!(r.revision, backup.revision + 1);
    joiner.shutdown().await;
    kv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn peers_replicate_over_mutual_tls() {
    let c = Cluster::start_tls(3, opts()).await;
    let leader = c.leader().await;
    let f = c.other(&[leader]);
    // A forwarded write and replication both cross TLS connections.
    let r = c.kv(f).txn(put("tls", "yes")).await.unwrap();
    for id in c.ids() {
        c.wait_rev(id, r.revision).await;
        assert_eq!(
            c.kv(id).get(b"tls", None).unwrap().unwrap().value,
            b"yes".to_vec()
        );
        assert_eq!(c.kv(id).read_barrier().await.unwrap(), r.revision);
    }
    c.shutdown().await;
}

/// Read-your-writes across replicas through the registry (issue bug 1): a namespace created
/// on the leader while a follower is cut off, then a ConfigMap created in it and an update
/// with the just-returned resourceVersion on that follower right after the link heals —
/// the follower must not answer 404 or 409 because it lagged.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn registry_reads_its_writes_on_a_lagging_replica() {
    use rafter::registry::store::{ListOptions, Part, Scope, Store, WriteOptions};
    use serde_json::json;
    let c = Cluster::start(3, opts()).await;
    let leader = c.leader().await;
    let f = c.other(&[leader]);
    let registry = std::sync::Arc::new(rafter::registry::builtin::registry());
    let on_leader = Store::new(c.kv(leader).clone(), registry.clone());
    let on_follower = Store::new(c.kv(f).clone(), registry.clone());
    let ns_info = registry.builtin("", "v1", "namespaces");
    let cm_info = registry.builtin("", "v1", "configmaps");
    let w = WriteOptions {
        now: "2026-01-01T00:00:00Z".into(),
        ..Default::default()
    };
    for i in 0..10 {
        let ns = format!("ns-{i}");
        c.faults.cut(leader, f);
        on_leader
            .create(
                Scope {
                    info: &ns_info,
                    namespace: None,
                },
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                &w,
            )
            .await
            .unwrap();
        let cm = on_leader
            .create(
                Scope { info: &cm_info, namespace: Some(&ns) },
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": ns}}),
                &w,
            )
            .await
            .unwrap();
        on_leader
            .create(
                Scope { info: &cm_info, namespace: Some(&ns) },
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a2", "namespace": ns}}),
                &w,
            )
            .await
            .unwrap();
        let scope = Scope {
            info: &cm_info,
            namespace: Some(&ns),
        };
        // A first page from the leader...
        let page = on_leader
            .list(
                scope,
                &ListOptions {
                    limit: 1,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        c.faults.heal();
        // ...continued on the replica that has not applied its revision yet.
        let next = on_follower
            .list(
                scope,
                &ListOptions {
                    limit: 1,
                    continue_token: page.continue_token.clone(),
                    ..Default::default()
                },
            )
            .await
            .unwrap_or_else(|s| panic!("round {i}: continue on the follower: {}", s.message));
        assert_eq!(next.revision, page.revision, "round {i}");
        assert_eq!(next.items[0]["metadata"]["name"], "a2", "round {i}");
        on_follower
            .create(
                scope,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": ns}}),
                &w,
            )
            .await
            .unwrap_or_else(|s| panic!("round {i}: create on the follower: {}", s.message));
        let rv = cm["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        on_follower
            .update_with(scope, "a", Part::Main, &w, |cur| {
                let mut next = cur.clone();
                next["metadata"]["resourceVersion"] = json!(rv);
                next["data"] = json!({"k": "v"});
                Ok(next)
            })
            .await
            .unwrap_or_else(|s| panic!("round {i}: update on the follower: {}", s.message));
    }
    c.shutdown().await;
}

/// A voter removed while it was cut off (so it never saw its removal) learns it from the
/// first member it asks for a vote: it stops campaigning (its term stays put), reports role
/// "removed" and fails its health check (issue 10, bug 9).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_removed_voter_stops_campaigning() {
    let c = Cluster::start(3, opts()).await;
    let leader = c.leader().await;
    let f = c.other(&[leader]);
    c.faults.isolate(f);
    c.kv(leader).remove_member(f).await.unwrap();
    c.faults.heal();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let st = c.kv(f).cluster_status().await.unwrap();
        let me = st
            .members
            .iter()
            .find(|m| m.id == f)
            .map(|m| m.role.clone());
        if me.as_deref() == Some("removed") {
            let err = c.kv(f).health().unwrap_err();
            assert!(err.contains("removed from the cluster"), "{err}");
            let term = st.term;
            tokio::time::sleep(Duration::from_secs(3)).await;
            assert_eq!(
                c.kv(f).cluster_status().await.unwrap().term,
                term,
                "it stopped campaigning"
            );
            break;
        }
        assert!(Instant::now() < deadline, "{st:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The remaining two still serve writes.
    c.kv(leader).txn(put("after", "1")).await.unwrap();
    c.shutdown().await;
}
