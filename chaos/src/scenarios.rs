//! Named regression scenarios: fault mixes (and server flags) aimed at one bug class each —
//! the classes etcd's robustness suite and Jepsen have found in etcd, and the bugs this
//! harness was built to catch. `rafter-chaos run --scenario NAME` runs one with the usual
//! seeds and checkers; `rafter-chaos scenarios` lists them.

/// One named scenario.
pub struct Scenario {
    pub name: &'static str,
    /// The fault kinds of its runs.
    pub faults: &'static [&'static str],
    /// What a failure would mean, and which checker reports it.
    pub guards: &'static str,
}

pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "watch-after-partition",
        faults: &["partition", "isolate-leader", "bridge"],
        guards: "a watch going back in time or skipping events after a partition heals (watch: ordered, reliable)",
    },
    Scenario {
        name: "events-lost-on-compaction",
        faults: &["compact", "kill"],
        guards: "events lost or a resumed watch continuing past a compacted revision (watch: reliable, resumable; 410 then relist)",
    },
    Scenario {
        name: "duplicate-events",
        faults: &["leader-transfer", "drop", "kill"],
        guards: "an event delivered twice across a reconnect or leader change (watch: unique, one content per revision)",
    },
    Scenario {
        name: "stale-reads-after-pause",
        faults: &["pause", "isolate-leader"],
        guards: "a paused or deposed leader serving stale linearizable reads (linearizable, reads)",
    },
    Scenario {
        name: "lost-writes-on-restart",
        faults: &["kill", "crash-unsynced"],
        guards: "an acknowledged write missing after crashes that lose un-fsynced data (durability, linearizable)",
    },
    Scenario {
        name: "read-your-writes",
        faults: &["partition", "delay", "drop"],
        guards: "bug 1: 404/409 answered from a lagging replica (linearizable: a failed CAS or delete the truth contradicts)",
    },
    Scenario {
        name: "snapshot-install",
        faults: &["snapshot", "compact", "kill"],
        guards: "bugs 2 and 5: a lagging replica that installs a snapshot serving another history window (reads, watch resumable) or never catching up (recovery)",
    },
    Scenario {
        name: "unknown-outcomes",
        faults: &["isolate-leader", "leader-transfer"],
        guards: "bug 7: a write reported as not done that was applied (linearizable over indeterminate outcomes)",
    },
    Scenario {
        name: "membership",
        faults: &["membership", "kill"],
        guards: "bug 9 and membership under load: a removed or re-added replica losing or inventing writes, or never serving again (recovery, durability)",
    },
    Scenario {
        name: "disk-full",
        faults: &["disk-full"],
        guards: "a replica whose disk fills staying up with a dead raft node instead of exiting and recovering (recovery, liveness)",
    },
    Scenario {
        name: "clock-skew",
        faults: &["clock-skew"],
        guards: "anything depending on wall-clock agreement between replicas (every checker)",
    },
];

/// The scenario named `name`.
pub fn find(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_name_known_fault_kinds() {
        for s in SCENARIOS {
            for f in s.faults {
                assert!(crate::nemesis::KINDS.contains(f), "{}: {f}", s.name);
            }
            assert_eq!(find(s.name).map(|x| x.name), Some(s.name));
        }
    }
}
