//! The kv contract (txn compares, revisions, get/range at revisions, events and subscribe
//! order, compaction errors), run against a one-replica and a three-replica cluster. In the
//! three-replica run, writes go to a follower and reads to another replica after a read
//! barrier.

mod raft_support;

use std::time::Duration;

use raft_support::{opts, put, Cluster};
use rafter::kv::{Compare, Error, EventKind, Kv, KvConfig, Op, Txn};

async fn contract(writer: &Kv, reader: &Kv) {
    let mut rx = reader.subscribe();
    let base = writer.read_barrier().await.unwrap();
    assert_eq!(reader.read_barrier().await.unwrap(), base);

    // Create-if-absent succeeds once, at the next revision.
    let create = |k: &str, v: &str| Txn {
        compares: vec![Compare::Absent(k.into())],
        success: vec![Op::Put {
            key: k.into(),
            value: v.into(),
        }],
    };
    let r = writer.txn(create("c/a", "1")).await.unwrap();
    assert!(r.succeeded);
    assert_eq!(r.revision, base + 1);
    assert_eq!(r.prev, vec![None]);
    // Read-your-writes on the replica that took the write, with no barrier.
    let kv = writer.get(b"c/a", None).unwrap().unwrap();
    assert_eq!(
        (kv.create_revision, kv.mod_revision, kv.version),
        (base + 1, base + 1, 1)
    );
    let r = writer.txn(create("c/a", "2")).await.unwrap();
    assert!(!r.succeeded);
    assert_eq!(r.revision, base + 1);
    assert_eq!(r.current[0].as_ref().unwrap().value, b"1".to_vec());

    // Update guarded by mod revision.
    let update = |k: &str, v: &str, rev: i64| Txn {
        compares: vec![Compare::ModRevision(k.into(), rev)],
        success: vec![Op::Put {
            key: k.into(),
            value: v.into(),
        }],
    };
    assert!(
        !writer
            .txn(update("c/a", "x", base))
            .await
            .unwrap()
            .succeeded
    );
    let r = writer.txn(update("c/a", "2", base + 1)).await.unwrap();
    assert!(r.succeeded);
    assert_eq!(r.revision, base + 2);
    assert_eq!(r.prev[0].as_ref().unwrap().value, b"1".to_vec());
    writer.txn(put("c/b", "1")).await.unwrap(); // base + 3
    let r = writer
        .txn(Txn {
            compares: vec![Compare::Exists(b"c/b".to_vec())],
            success: vec![Op::Delete {
                key: b"c/b".to_vec(),
            }],
        })
        .await
        .unwrap();
    assert!(r.succeeded);
    assert_eq!(r.revision, base + 4);
    writer.txn(put("c/c", "1")).await.unwrap(); // base + 5

    // Linearizable read on the other replica sees everything.
    let now = reader.read_barrier().await.unwrap();
    assert_eq!(now, base + 5);
    let a = reader.get(b"c/a", None).unwrap().unwrap();
    assert_eq!((a.value.as_slice(), a.version), (&b"2"[..], 2));
    assert!(reader.get(b"c/b", None).unwrap().is_none());
    // At revisions.
    assert_eq!(
        reader.get(b"c/a", Some(base + 1)).unwrap().unwrap().value,
        b"1".to_vec()
    );
    assert!(reader.get(b"c/b", Some(base + 3)).unwrap().is_some());
    let all = reader.range(b"c/", b"c0", None, 0).unwrap();
    assert_eq!(all.count, 2);
    assert_eq!(all.revision, base + 5);
    let at3 = reader.range(b"c/", b"c0", Some(base + 3), 1).unwrap();
    assert_eq!((at3.count, at3.kvs.len(), at3.more), (2, 1, true));
    assert!(matches!(
        reader.get(b"c/a", Some(base + 100)),
        Err(Error::FutureRevision { .. })
    ));

    // Events: once each, in revision order, same as history.
    let mut seen = vec![];
    while seen.len() < 4 {
        let batch = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        for e in batch.iter() {
            seen.push((e.kv.mod_revision, e.kind, e.kv.key.clone()));
        }
    }
    assert_eq!(
        seen,
        vec![
            (base + 1, EventKind::Put, b"c/a".to_vec()),
            (base + 2, EventKind::Put, b"c/a".to_vec()),
            (base + 3, EventKind::Put, b"c/b".to_vec()),
            (base + 4, EventKind::Delete, b"c/b".to_vec()),
        ]
    );
    let hist = reader.events_since(base, b"c/", b"c0").unwrap();
    assert_eq!(hist.len(), 5);
    assert_eq!(hist[3].prev_kv.as_ref().unwrap().value, b"1".to_vec());

    // Compaction is replicated; older revisions become errors everywhere.
    writer.compact(base + 2).await.unwrap();
    reader.read_barrier().await.unwrap();
    for kv in [writer, reader] {
        assert_eq!(kv.compacted_revision(), base + 2);
        assert!(matches!(
            kv.get(b"c/a", Some(base + 1)),
            Err(Error::Compacted { .. })
        ));
        assert!(matches!(
            kv.events_since(base, b"", b""),
            Err(Error::Compacted { .. })
        ));
        assert_eq!(
            kv.get(b"c/a", Some(base + 2)).unwrap().unwrap().value,
            b"2".to_vec()
        );
    }
    assert!(matches!(
        writer.compact(base + 1).await,
        Err(Error::Compacted { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contract_one_replica() {
    let dir = tempfile::tempdir().unwrap();
    let kv = Kv::open_with(KvConfig::single(dir.path()), opts())
        .await
        .unwrap();
    contract(&kv, &kv).await;
    kv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contract_three_replicas() {
    let c = Cluster::start(3, opts()).await;
    let leader = c.leader().await;
    let f1 = c.other(&[leader]);
    let f2 = c.other(&[leader, f1]);
    contract(c.kv(f1), c.kv(f2)).await;
    c.shutdown().await;
}
