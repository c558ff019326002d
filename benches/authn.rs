//! The request-path cost of authentication (not a timed test; `cargo bench --bench authn`):
//! linearizable GETs per second of one object through the real binary, 16 concurrent clients,
//! as a client certificate, a static bearer token and a service-account token (signature and
//! lookup on every request), in one run. `RAFTER_BENCH_SECONDS` sets each phase's length
//! (default 5).

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use common::phase;
use support::Server;

fn main() {
    let secs = common::phase_seconds();
    let (_dir, tokens) = common::token_file();
    std::fs::write(&tokens, "bench-token,bencher,1,\"dev\"\n").unwrap();
    let s = Server::start_with(&["--token-auth-file", tokens.to_str().unwrap()]);
    s.ok(&["create", "serviceaccount", "bench"]);
    s.ok(&[
        "create",
        "clusterrolebinding",
        "bench",
        "--clusterrole=view",
        "--user=bencher",
        "--serviceaccount=default:bench",
    ]);
    let sa_token = s.ok(&["create", "token", "bench"]).trim().to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // Warm up connections and caches.
        phase("warm-up", &s.url, s.client(), None, 1).await;
        // (the binding above is in every replica's index by now)
        phase("client certificate", &s.url, s.client(), None, secs).await;
        phase(
            "static token",
            &s.url,
            s.anonymous_client(),
            Some("bench-token".into()),
            secs,
        )
        .await;
        phase(
            "service-account token",
            &s.url,
            s.anonymous_client(),
            Some(sa_token),
            secs,
        )
        .await;
    });
}
