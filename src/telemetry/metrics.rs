//! Histogram buckets of the Prometheus recorder. Metrics are recorded where they happen,
//! with the `metrics` crate; a histogram the recorder has no buckets for would be rendered
//! as a summary, so every histogram kube defines gets kube's buckets here.

/// kube-apiserver's buckets for request and storage latencies
/// (`apiserver_request_duration_seconds`, `etcd_request_duration_seconds`).
pub const LATENCY_BUCKETS: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// kube's `apiserver_watch_events_sizes` buckets: 1 KiB doubling up to 128 KiB.
pub const WATCH_EVENT_SIZE_BUCKETS: &[f64] = &[
    1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0,
];

/// kube's `apiserver_admission_webhook_admission_duration_seconds` buckets.
pub const WEBHOOK_BUCKETS: &[f64] = &[0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 25.0];

/// kube's `apiserver_validating_admission_policy_check_duration_seconds` buckets.
pub const POLICY_CHECK_BUCKETS: &[f64] = &[0.0000005, 0.001, 0.01, 0.1, 1.0];

/// kube's `apiserver_flowcontrol_request_wait_duration_seconds` buckets.
pub const FLOWCONTROL_WAIT_BUCKETS: &[f64] = &[
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

/// Raft proposal latency buckets (etcd's `etcd_disk_wal_fsync_duration_seconds` style:
/// 1 ms doubling up to about 8 s).
pub const RAFT_LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096,
    8.192,
];

/// Snapshot build durations (seconds).
pub const SNAPSHOT_DURATION_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Snapshot sizes (bytes): 1 KiB to 8 GiB, by factors of 8.
pub const SNAPSHOT_SIZE_BUCKETS: &[f64] = &[
    1024.0,
    8192.0,
    65536.0,
    524288.0,
    4194304.0,
    33554432.0,
    268435456.0,
    2147483648.0,
    8589934592.0,
];

/// Which buckets each histogram of the Prometheus recorder gets (a name without buckets
/// would be rendered as a summary).
pub fn histogram_buckets() -> Vec<(&'static str, &'static [f64])> {
    vec![
        ("apiserver_request_duration_seconds", LATENCY_BUCKETS),
        ("etcd_request_duration_seconds", LATENCY_BUCKETS),
        ("apiserver_watch_events_sizes", WATCH_EVENT_SIZE_BUCKETS),
        (
            "apiserver_admission_webhook_admission_duration_seconds",
            WEBHOOK_BUCKETS,
        ),
        (
            "apiserver_validating_admission_policy_check_duration_seconds",
            POLICY_CHECK_BUCKETS,
        ),
        (
            "apiserver_flowcontrol_request_wait_duration_seconds",
            FLOWCONTROL_WAIT_BUCKETS,
        ),
        ("rafter_raft_propose_duration_seconds", RAFT_LATENCY_BUCKETS),
        (
            "rafter_raft_read_index_duration_seconds",
            RAFT_LATENCY_BUCKETS,
        ),
        (
            "rafter_raft_snapshot_build_duration_seconds",
            SNAPSHOT_DURATION_BUCKETS,
        ),
        ("rafter_raft_snapshot_size_bytes", SNAPSHOT_SIZE_BUCKETS),
    ]
}
