//! A real client library's list+watch cache against the real binary: the Python
//! `kubernetes` client's `watch.Watch().stream(list_namespaced_config_map, ...)` keeps a cache
//! in sync through writes, survives a forced compaction (its resume revision is answered with
//! a 410 ERROR event, it relists) and ends equal to a fresh list.
//!
//! Skips (with a message) when python3 or the `kubernetes` package is missing, except under
//! CI (`CI` set), where that is a failure; `.ci/run` installs it.

mod support;

use std::process::Command;

use support::Server;

const SCRIPT: &str = r#"
import sys, threading, time
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
NS = "default"
SEL = "app=py"
cache = {}
stats = {"events": 0, "bookmarks": 0, "relists": 0, "gone": 0}


def cm(name, val):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app": "py"}}, "data": {"v": val}}


def relist():
    lst = v1.list_namespaced_config_map(NS, label_selector=SEL)
    cache.clear()
    for o in lst.items:
        cache[o.metadata.name] = (o.metadata.resource_version, dict(o.data or {}))
    stats["relists"] += 1
    return lst.metadata.resource_version


def fresh():
    lst = v1.list_namespaced_config_map(NS, label_selector=SEL)
    return {o.metadata.name: (o.metadata.resource_version, dict(o.data or {})) for o in lst.items}


def follow(rv, done, limit=60):
    """Applies watch events from rv until done(); returns the last resourceVersion."""
    deadline = time.time() + limit
    while True:
        w = watch.Watch()
        for ev in w.stream(v1.list_namespaced_config_map, NS, label_selector=SEL,
                           resource_version=rv, allow_watch_bookmarks=True,
                           timeout_seconds=5):
            t, o = ev["type"], ev["object"]
            rv = o.metadata.resource_version
            if t == "BOOKMARK":
                stats["bookmarks"] += 1
            elif t in ("ADDED", "MODIFIED"):
                stats["events"] += 1
                cache[o.metadata.name] = (rv, dict(o.data or {}))
            elif t == "DELETED":
                stats["events"] += 1
                cache.pop(o.metadata.name, None)
            if done():
                w.stop()
                return rv
        if time.time() > deadline:
            raise SystemExit("watch did not reach the expected state in time")


def writer(names_create, names_update, names_delete, marker):
    api = client.CoreV1Api(client.ApiClient())
    for n in names_create:
        api.create_namespaced_config_map(NS, cm(n, "0"))
    for i, n in enumerate(names_update):
        api.patch_namespaced_config_map(n, NS, {"data": {"v": "u%d" % i}})
    for n in names_delete:
        api.delete_namespaced_config_map(n, NS)
    api.create_namespaced_config_map(NS, cm(marker, "end"))


rv = relist()
t = threading.Thread(target=writer, args=(["py-%d" % i for i in range(20)],
                                          ["py-%d" % i for i in range(10)],
                                          ["py-%d" % i for i in range(15, 20)], "marker-1"))
t.start()
rv = follow(rv, lambda: "marker-1" in cache)
t.join()
assert cache == fresh(), ("after phase 1", cache, fresh())

# Forced compaction: stop watching, write on, wait until our revision is compacted away.
old = rv
deadline = time.time() + 60
i = 0
while True:
    v1.create_namespaced_config_map(NS, cm("filler-%d" % i, "x"))
    v1.delete_namespaced_config_map("py-%d" % i, NS) if i < 5 else None
    i += 1
    try:
        v1.list_namespaced_config_map(NS, resource_version=old, resource_version_match="Exact")
    except ApiException as e:
        if e.status == 410:
            break
        raise
    if time.time() > deadline:
        raise SystemExit("history was never compacted")
    time.sleep(0.3)

try:
    follow(old, lambda: False, limit=20)
    raise SystemExit("resuming from a compacted revision did not fail")
except ApiException as e:
    assert e.status == 410, e
    assert "Expired" in str(e.reason) and "too old resource version" in str(e.reason), e.reason
    stats["gone"] += 1
rv = relist()
t = threading.Thread(target=writer, args=(["late-%d" % i for i in range(5)],
                                          ["py-%d" % i for i in range(5, 10)] + ["late-0"],
                                          ["py-10", "late-1"], "marker-2"))
t.start()
rv = follow(rv, lambda: "marker-2" in cache)
t.join()
assert cache == fresh(), ("after relist", cache, fresh())
assert stats["gone"] == 1 and stats["relists"] == 2, stats
print("OK", stats, "objects", len(cache))
"#;

#[test]
fn python_client_watch_keeps_a_cache_in_sync_through_compaction() {
    let ok = Command::new("python3")
        .args(["-c", "import kubernetes"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but python3 with the `kubernetes` package is missing (.ci/run installs it)"
        );
        eprintln!(
            "SKIPPED: python3 with the `kubernetes` package is not available \
             (python3 -m pip install kubernetes)"
        );
        return;
    }
    let s = Server::start_with(&["--compaction-window", "2s"]);
    let script = s.dir.path().join("watch_cache.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = Command::new("timeout")
        .arg("240")
        .arg("python3")
        .arg(&script)
        .arg(&s.kubeconfig)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python client failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("OK"), "{stdout}\n{stderr}");
    eprintln!("{stdout}");
}
