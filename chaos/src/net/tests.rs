//! Tests of the proxy and the mesh against loopback echo servers (bounded waits throughout).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::{timeout, Instant};

use super::*;

/// How long a read must stay silent to count as stalled.
const STALL: Duration = Duration::from_millis(300);
/// Upper bound for anything that should happen "at once".
const SOON: Duration = Duration::from_secs(2);

fn lo() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// An echo server: every connection gets back what it sends.
async fn echo_server() -> SocketAddr {
    let l = TcpListener::bind(lo()).await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if s.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    addr
}

#[derive(Debug, PartialEq)]
enum Outcome {
    /// Got exactly the expected bytes.
    Echoed,
    /// Nothing (or not everything) arrived within the wait.
    Stalled,
    /// EOF or an error (reset).
    Closed(Option<io::ErrorKind>),
}

/// Reads exactly `expect.len()` bytes within `wait`.
async fn read_expect(s: &mut TcpStream, expect: &[u8], wait: Duration) -> Outcome {
    let mut got = vec![0u8; expect.len()];
    match timeout(wait, s.read_exact(&mut got)).await {
        Err(_) => Outcome::Stalled,
        Ok(Ok(_)) => {
            assert_eq!(got, expect, "bytes corrupted");
            Outcome::Echoed
        }
        Ok(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => Outcome::Closed(None),
        Ok(Err(e)) => Outcome::Closed(Some(e.kind())),
    }
}

/// Writes `msg` and expects it echoed within `wait`.
async fn roundtrip(s: &mut TcpStream, msg: &[u8], wait: Duration) -> Outcome {
    if let Err(e) = s.write_all(msg).await {
        return Outcome::Closed(Some(e.kind()));
    }
    read_expect(s, msg, wait).await
}

/// Connects to `addr` and does one round trip.
async fn fresh_roundtrip(addr: SocketAddr, msg: &[u8], wait: Duration) -> Outcome {
    match timeout(SOON, TcpStream::connect(addr)).await {
        Ok(Ok(mut s)) => roundtrip(&mut s, msg, wait).await,
        Ok(Err(e)) => Outcome::Closed(Some(e.kind())),
        Err(_) => Outcome::Stalled,
    }
}

fn is_closed(o: &Outcome) -> bool {
    matches!(o, Outcome::Closed(_))
}

/// Waits (bounded) until `cond` holds on the proxy's stats.
async fn wait_stats(p: &Proxy, cond: impl Fn(&Stats) -> bool) -> Stats {
    let deadline = Instant::now() + SOON;
    loop {
        let s = p.stats();
        if cond(&s) || Instant::now() > deadline {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn healthy_passes_bytes_both_ways() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 1).await.unwrap();
    assert_eq!(p.fault(), Fault::Healthy);
    let mut s = TcpStream::connect(p.local_addr()).await.unwrap();
    assert_eq!(roundtrip(&mut s, b"hello", SOON).await, Outcome::Echoed);
    // A large transfer, bigger than one chunk and the queue's worth of small reads.
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let (mut r, mut w) = s.into_split();
    let send = big.clone();
    let writer = tokio::spawn(async move { w.write_all(&send).await.map(|_| w) });
    let mut got = vec![0u8; big.len()];
    timeout(SOON * 5, r.read_exact(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got, big);
    let _w = writer.await.unwrap().unwrap();
    let st = wait_stats(&p, |s| s.bytes_to_client == 300_005).await;
    assert_eq!(st.accepted, 1);
    assert_eq!(st.active, 1);
    assert_eq!(st.bytes_to_upstream, 300_005);
    assert_eq!(st.bytes_to_client, 300_005);
    assert_eq!(
        (st.cut, st.reset, st.refused, st.upstream_failed),
        (0, 0, 0, 0)
    );
}

#[tokio::test]
async fn clean_close_is_passed_on_as_eof() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 1).await.unwrap();
    let mut s = TcpStream::connect(p.local_addr()).await.unwrap();
    assert_eq!(roundtrip(&mut s, b"x", SOON).await, Outcome::Echoed);
    s.shutdown().await.unwrap(); // half-close: the echo server sees EOF and closes
    let mut b = [0u8; 1];
    assert_eq!(
        timeout(SOON, s.read(&mut b)).await.unwrap().unwrap(),
        0,
        "clean EOF, not a reset"
    );
    let st = wait_stats(&p, |s| s.active == 0).await;
    assert_eq!((st.active, st.cut, st.reset), (0, 0, 0));
}

#[tokio::test]
async fn blackhole_stalls_existing_and_new_connections_and_heal_resumes_them() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 2).await.unwrap();
    let mut old = TcpStream::connect(p.local_addr()).await.unwrap();
    assert_eq!(roundtrip(&mut old, b"before", SOON).await, Outcome::Echoed);

    p.set(Fault::Blackhole);
    // Existing connection: the write is accepted (socket buffers), the echo never comes.
    assert_eq!(
        roundtrip(&mut old, b"during", STALL).await,
        Outcome::Stalled
    );
    // New connection: accepted, then silent.
    let mut new = timeout(SOON, TcpStream::connect(p.local_addr()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        roundtrip(&mut new, b"new-during", STALL).await,
        Outcome::Stalled
    );
    let st = p.stats();
    assert_eq!(st.accepted, 2);
    assert_eq!(
        (st.cut, st.reset, st.refused),
        (0, 0, 0),
        "blackhole resets nothing"
    );

    p.set(Fault::Healthy);
    // The held bytes arrive, in order, on both stalled connections.
    assert_eq!(
        read_expect(&mut old, b"during", SOON).await,
        Outcome::Echoed
    );
    assert_eq!(
        read_expect(&mut new, b"new-during", SOON).await,
        Outcome::Echoed
    );
    assert_eq!(roundtrip(&mut old, b"after", SOON).await, Outcome::Echoed);
    assert_eq!(
        fresh_roundtrip(p.local_addr(), b"fresh", SOON).await,
        Outcome::Echoed
    );
}

#[tokio::test]
async fn blackholed_connection_whose_client_leaves_is_reaped() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 2).await.unwrap();
    p.set(Fault::Blackhole);
    let s = TcpStream::connect(p.local_addr()).await.unwrap();
    wait_stats(&p, |s| s.active == 1).await;
    drop(s);
    let st = wait_stats(&p, |s| s.active == 0).await;
    assert_eq!(
        st.active, 0,
        "a stalled new connection is released when its client closes"
    );
}

#[tokio::test]
async fn refuse_resets_new_connections_and_cuts_existing_ones() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 3).await.unwrap();
    let mut old = TcpStream::connect(p.local_addr()).await.unwrap();
    assert_eq!(roundtrip(&mut old, b"a", SOON).await, Outcome::Echoed);

    let t0 = Instant::now();
    p.set(Fault::Refuse);
    // The idle existing connection is cut promptly, with a reset.
    let mut b = [0u8; 1];
    let r = timeout(SOON, old.read(&mut b)).await.expect("cut promptly");
    let took = t0.elapsed();
    assert!(
        matches!(&r, Err(e) if e.kind() == io::ErrorKind::ConnectionReset),
        "{r:?}"
    );
    assert!(took < Duration::from_millis(250), "cut took {took:?}");

    for _ in 0..3 {
        let o = fresh_roundtrip(p.local_addr(), b"b", SOON).await;
        assert!(is_closed(&o), "{o:?}");
    }
    let st = wait_stats(&p, |s| s.refused == 3 && s.active == 0).await;
    assert_eq!((st.cut, st.refused, st.active), (1, 3, 0));

    p.set(Fault::Healthy);
    assert_eq!(
        fresh_roundtrip(p.local_addr(), b"c", SOON).await,
        Outcome::Echoed
    );
}

#[tokio::test]
async fn delay_adds_latency_each_way_and_keeps_order() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 4).await.unwrap();
    let mut s = TcpStream::connect(p.local_addr()).await.unwrap();
    assert_eq!(roundtrip(&mut s, b"warm", SOON).await, Outcome::Echoed);

    let latency = Duration::from_millis(100);
    p.set(Fault::delay(latency));
    let t0 = Instant::now();
    assert_eq!(roundtrip(&mut s, b"slow", SOON).await, Outcome::Echoed);
    let rtt = t0.elapsed();
    assert!(rtt >= 2 * latency, "round trip {rtt:?} < 2 x {latency:?}");

    // With jitter far above the gap between writes, order is still kept, and the writes are
    // pipelined (the total is far below one latency per message).
    p.set(Fault::delay_jitter(
        Duration::from_millis(20),
        Duration::from_millis(40),
    ));
    let mut all = Vec::new();
    let t0 = Instant::now();
    for i in 0..50u32 {
        let m = format!("<{i}>");
        s.write_all(m.as_bytes()).await.unwrap();
        all.extend_from_slice(m.as_bytes());
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(read_expect(&mut s, &all, SOON * 2).await, Outcome::Echoed);
    assert!(
        t0.elapsed() < Duration::from_millis(1500),
        "not pipelined: {:?}",
        t0.elapsed()
    );

    p.set(Fault::Healthy);
    let t0 = Instant::now();
    assert_eq!(roundtrip(&mut s, b"fast", SOON).await, Outcome::Echoed);
    assert!(
        t0.elapsed() < latency,
        "healed link still slow: {:?}",
        t0.elapsed()
    );
}

#[tokio::test]
async fn drop_with_p1_cuts_the_connection_and_p0_passes() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 5).await.unwrap();
    p.set(Fault::drop_prob(0.0));
    assert_eq!(
        fresh_roundtrip(p.local_addr(), b"ok", SOON).await,
        Outcome::Echoed
    );

    p.set(Fault::drop_prob(1.0));
    let mut s = TcpStream::connect(p.local_addr()).await.unwrap();
    let o = roundtrip(&mut s, b"lost", SOON).await;
    assert_eq!(o, Outcome::Closed(Some(io::ErrorKind::ConnectionReset)));
    let st = wait_stats(&p, |s| s.cut == 1).await;
    assert_eq!(
        (st.cut, st.bytes_to_upstream),
        (1, 2),
        "the dropped chunk is not forwarded"
    );
}

#[tokio::test]
async fn drop_draws_replay_from_the_seed() {
    async fn run(seed: u64) -> Vec<usize> {
        let up = echo_server().await;
        let p = Proxy::start(lo(), up, seed).await.unwrap();
        p.set(Fault::drop_prob(0.3));
        let mut survived = Vec::new();
        for _ in 0..6 {
            let mut s = TcpStream::connect(p.local_addr()).await.unwrap();
            let mut n = 0;
            while n < 20 && roundtrip(&mut s, b"ping", SOON).await == Outcome::Echoed {
                n += 1;
            }
            survived.push(n);
        }
        p.stop().await;
        survived
    }
    let a = run(77).await;
    assert_eq!(a, run(77).await, "same seed, same faults");
    assert!(
        a.iter().any(|&n| n < 20),
        "p=0.3 cut nothing in 6 connections: {a:?}"
    );
}

#[tokio::test]
async fn bandwidth_limits_throughput() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 6).await.unwrap();
    let mut s = TcpStream::connect(p.local_addr()).await.unwrap();
    p.set(Fault::bandwidth(10_000));
    let msg = vec![7u8; 3_000];
    let t0 = Instant::now();
    assert_eq!(roundtrip(&mut s, &msg, SOON * 2).await, Outcome::Echoed);
    let took = t0.elapsed();
    // 3000 B at 10 kB/s in 500 B slices: the last slice leaves ≥ 250 ms after the first.
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[tokio::test]
async fn upstream_down_closes_new_connections_without_spinning() {
    // A port with nothing listening.
    let dead = {
        let l = TcpListener::bind(lo()).await.unwrap();
        l.local_addr().unwrap()
    };
    let p = Proxy::start(lo(), dead, 7).await.unwrap();
    for _ in 0..3 {
        let mut s = TcpStream::connect(p.local_addr()).await.unwrap();
        let mut b = [0u8; 1];
        let r = timeout(SOON, s.read(&mut b)).await.expect("closed at once");
        assert!(matches!(r, Ok(0) | Err(_)), "{r:?}");
    }
    let st = wait_stats(&p, |s| s.upstream_failed == 3 && s.active == 0).await;
    assert_eq!((st.accepted, st.upstream_failed, st.active), (3, 3, 0));

    // The upstream comes back (on another port): new connections work.
    let up = echo_server().await;
    p.set_upstream(up);
    assert_eq!(
        fresh_roundtrip(p.local_addr(), b"back", SOON).await,
        Outcome::Echoed
    );
}

#[tokio::test]
async fn stop_releases_the_port_and_closes_connections() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 8).await.unwrap();
    let addr = p.local_addr();
    let mut s = TcpStream::connect(addr).await.unwrap();
    assert_eq!(roundtrip(&mut s, b"x", SOON).await, Outcome::Echoed);
    timeout(SOON, p.stop()).await.expect("stop is bounded");
    let again = TcpListener::bind(addr).await;
    assert!(again.is_ok(), "port still held: {again:?}");
    let mut b = [0u8; 1];
    let r = timeout(SOON, s.read(&mut b))
        .await
        .expect("connection closed by stop");
    assert!(matches!(r, Ok(0) | Err(_)), "{r:?}");
}

#[tokio::test]
async fn dropping_the_proxy_ends_its_tasks() {
    let up = echo_server().await;
    let p = Proxy::start(lo(), up, 9).await.unwrap();
    let addr = p.local_addr();
    let mut s = TcpStream::connect(addr).await.unwrap();
    assert_eq!(roundtrip(&mut s, b"x", SOON).await, Outcome::Echoed);
    drop(p);
    let mut b = [0u8; 1];
    let r = timeout(SOON, s.read(&mut b))
        .await
        .expect("connection closed on drop");
    assert!(matches!(r, Ok(0) | Err(_)), "{r:?}");
    // The listener is gone too (bounded wait: the abort is processed asynchronously).
    let deadline = Instant::now() + SOON;
    while TcpListener::bind(addr).await.is_err() {
        assert!(Instant::now() < deadline, "port still held after drop");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn three_node_mesh() -> Mesh {
    let mut nodes = Vec::new();
    for id in 1..=3 {
        nodes.push(NodeAddrs {
            id,
            peer: echo_server().await,
            api: echo_server().await,
        });
    }
    Mesh::start(&nodes, 99).await.unwrap()
}

/// For every peer link, whether a fresh connection through it echoes (concurrently).
async fn reachable(mesh: &Mesh) -> Vec<((u32, u32), bool)> {
    let mut set = JoinSet::new();
    for from in mesh.nodes() {
        for to in mesh.nodes() {
            if from != to {
                let addr = mesh.peer_addr(from, to).unwrap();
                set.spawn(async move { ((from, to), fresh_roundtrip(addr, b"raft", STALL).await) });
            }
        }
    }
    let mut out = Vec::new();
    while let Some(r) = set.join_next().await {
        let (link, o) = r.unwrap();
        assert!(
            matches!(o, Outcome::Echoed | Outcome::Stalled),
            "{link:?}: {o:?}"
        );
        out.push((link, o == Outcome::Echoed));
    }
    out.sort();
    out
}

#[tokio::test]
async fn mesh_partition_blocks_exactly_the_cross_group_links() {
    let mesh = three_node_mesh().await;
    assert_eq!(mesh.nodes(), vec![1, 2, 3]);
    assert!(reachable(&mesh).await.iter().all(|(_, ok)| *ok));

    mesh.partition(&[vec![1, 2], vec![3]]).unwrap();
    let cross = [(1, 3), (2, 3), (3, 1), (3, 2)];
    for (link, ok) in reachable(&mesh).await {
        assert_eq!(ok, !cross.contains(&link), "link {link:?}");
    }
    let faulted: Vec<_> = mesh.faulted_links().into_iter().map(|(l, _)| l).collect();
    assert_eq!(faulted, cross.to_vec());
    // API links are untouched by partitions.
    for n in 1..=3 {
        assert_eq!(
            fresh_roundtrip(mesh.api_addr(n).unwrap(), b"get", SOON).await,
            Outcome::Echoed
        );
    }

    mesh.heal();
    assert!(mesh.faulted_links().is_empty());
    assert!(reachable(&mesh).await.iter().all(|(_, ok)| *ok));
    mesh.stop().await;
}

#[tokio::test]
async fn mesh_helpers_set_the_expected_links() {
    let mut nodes = Vec::new();
    for id in 1..=5 {
        nodes.push(NodeAddrs {
            id,
            peer: lo(),
            api: lo(),
        }); // no traffic in this test
    }
    let mesh = Mesh::start(&nodes, 1).await.unwrap();
    let blocked =
        |m: &Mesh| -> Vec<(u32, u32)> { m.faulted_links().into_iter().map(|(l, _)| l).collect() };
    let both = |pairs: &[(u32, u32)]| -> Vec<(u32, u32)> {
        let mut v: Vec<_> = pairs.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
        v.sort();
        v
    };

    // isolate is additive.
    mesh.isolate(1).unwrap();
    assert_eq!(blocked(&mesh), both(&[(1, 2), (1, 3), (1, 4), (1, 5)]));
    mesh.isolate(2).unwrap();
    assert_eq!(blocked(&mesh).len(), 14);

    // bridge replaces everything: {1,2} and {4,5} only meet through 3.
    mesh.bridge(&[1, 2], &[4, 5], 3).unwrap();
    assert_eq!(blocked(&mesh), both(&[(1, 4), (1, 5), (2, 4), (2, 5)]));

    // A node in no group is cut off from all.
    mesh.partition(&[vec![1, 2], vec![3, 4]]).unwrap();
    assert_eq!(
        blocked(&mesh),
        both(&[
            (1, 3),
            (1, 4),
            (2, 3),
            (2, 4),
            (1, 5),
            (2, 5),
            (3, 5),
            (4, 5)
        ])
    );

    // A one-way fault, and partition_with's fault.
    mesh.heal();
    mesh.set_link(1, 2, Fault::Refuse).unwrap();
    assert_eq!(mesh.faulted_links(), vec![((1, 2), Fault::Refuse)]);
    mesh.partition_with(&[&[1u32, 2, 3][..], &[4, 5]], Fault::Refuse)
        .unwrap();
    assert!(mesh
        .faulted_links()
        .iter()
        .all(|(_, f)| *f == Fault::Refuse));
    assert_eq!(blocked(&mesh).len(), 12);

    // Invalid input changes nothing.
    let before = mesh.faulted_links();
    assert!(mesh.partition(&[vec![1, 2], vec![2, 3]]).is_err());
    assert!(mesh.partition(&[vec![1, 9]]).is_err());
    assert!(mesh.bridge(&[1], &[2], 1).is_err());
    assert!(mesh.isolate(9).is_err());
    assert!(mesh.set_link(1, 1, Fault::Blackhole).is_err());
    assert_eq!(mesh.faulted_links(), before);

    mesh.set_api(5, Fault::Blackhole).unwrap();
    assert_eq!(mesh.api_proxy(5).unwrap().fault(), Fault::Blackhole);
    mesh.heal();
    assert_eq!(mesh.api_proxy(5).unwrap().fault(), Fault::Healthy);
    assert!(mesh.faulted_links().is_empty());
    mesh.stop().await;
}

#[test]
fn rng_is_determined_by_its_seed() {
    let a: Vec<u64> = (0..5)
        .scan(Rng::new(5), |r, _| Some(r.next_u64()))
        .collect();
    let b: Vec<u64> = (0..5)
        .scan(Rng::new(5), |r, _| Some(r.next_u64()))
        .collect();
    assert_eq!(a, b);
    assert_ne!(
        Rng::derive(5, 0, 0).next_u64(),
        Rng::derive(5, 0, 1).next_u64()
    );
    assert_ne!(
        Rng::derive(5, 0, 0).next_u64(),
        Rng::derive(5, 1, 0).next_u64()
    );
    let mut r = Rng::new(1);
    assert!((0..1000).all(|_| r.chance(1.0)));
    assert!((0..1000).all(|_| !r.chance(0.0) && !r.chance(f64::NAN)));
    let hits = (0..10_000).filter(|_| r.chance(0.25)).count();
    assert!((2_000..3_000).contains(&hits), "{hits}");
    assert!((0..1000)
        .map(|_| r.next_f64())
        .all(|x| (0.0..1.0).contains(&x)));
}
