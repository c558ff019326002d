//! Cheap convention checks: every module starts with a `//!` doc, and the layering invariants
//! hold (storage knows nothing of Kubernetes or Raft; only `raft` names openraft).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn sources(sub: &str) -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(sub);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// Code lines only (comments and doc comments dropped).
fn code(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_module_has_a_doc() {
    for (path, text) in sources("src").into_iter().chain(sources("chaos/src")) {
        let head: Vec<&str> = text.lines().take(3).collect();
        assert!(
            head.iter().any(|l| l.starts_with("//!")),
            "{} does not start with a //! module doc",
            path.display()
        );
    }
}

#[test]
fn only_raft_names_openraft() {
    for (path, text) in sources("src") {
        let in_raft = path.components().any(|c| c.as_os_str() == "raft");
        if !in_raft {
            assert!(
                !code(&text).contains("openraft"),
                "{} names openraft; only src/raft may",
                path.display()
            );
        }
    }
}

#[test]
fn storage_knows_nothing_of_kubernetes_or_raft() {
    for (path, text) in sources("src/storage") {
        let c = code(&text);
        for forbidden in [
            "openraft",
            "crate::raft",
            "crate::kv",
            "crate::registry",
            "crate::meta",
            "k8s_openapi",
            "crate::server",
        ] {
            assert!(
                !c.contains(forbidden),
                "{} uses {forbidden}",
                path.display()
            );
        }
    }
}

#[test]
fn meta_and_apply_are_pure() {
    for sub in ["src/meta", "src/apply"] {
        for (path, text) in sources(sub) {
            let c = code(&text);
            // test-only modules (the apply scenario runner reads its data files)
            if c.lines().any(|l| l.trim() == "#![cfg(test)]") {
                continue;
            }
            for forbidden in [
                "std::fs",
                "tokio::",
                "crate::kv",
                "crate::server",
                "SystemTime::now",
                "Timestamp::now",
            ] {
                assert!(
                    !c.contains(forbidden),
                    "{} uses {forbidden}",
                    path.display()
                );
            }
        }
    }
}

/// The text of a file without its `#[cfg(test)]` module (tests may name anything).
fn non_test_code(text: &str) -> String {
    let cut = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    code(&text[..cut])
}

/// Per-resource behaviour belongs to the resource's strategy: outside the registration table
/// (and the static resource table it reads) nothing chooses behaviour by resource name. The
/// authorizers decide by resource names by definition (RBAC rules, the Node graph, ABAC
/// policy lines), and request parsing reads the URL grammar, so they are exempt.
#[test]
fn only_the_registry_table_matches_on_resource_names() {
    let table = ["src/registry/builtin/mod.rs", "src/registry/resources.rs"];
    let exempt = ["src/authz/", "src/server/request_info.rs"];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    for (path, text) in sources("src") {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if table.contains(&rel.as_str()) || exempt.iter().any(|e| rel.starts_with(e)) {
            continue;
        }
        for (i, line) in non_test_code(&text).lines().enumerate() {
            let l = line.trim();
            let tuple_match =
                l.starts_with("match (") && l.contains("group") && l.contains("resource");
            let compares = ["resource == \"", "resource != \"", ".is(\""]
                .iter()
                .any(|p| l.contains(p));
            let matches_plural =
                l.contains("resource.as_str() {") || l.contains("match info.resource");
            if tuple_match || compares || matches_plural {
                offenders.push(format!("{rel}:{}: {l}", i + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "per-resource behaviour outside the registry's table (give the resource's strategy a method instead):\n{}",
        offenders.join("\n")
    );
}

/// The modules of `src` (a file, or a folder's files taken together as `folder/`) and which
/// of them each one uses, from `crate::...` paths and `super::` imports.
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources("src");
    // Module path of each file: src/registry/builtin/core/pod.rs -> registry::builtin::core::pod
    let module_of = |p: &Path| -> Vec<String> {
        let rel = p.strip_prefix(&root).unwrap();
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect();
        if parts
            .last()
            .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
        {
            parts.pop();
        }
        parts
    };
    let known: BTreeSet<Vec<String>> = files.iter().map(|(p, _)| module_of(p)).collect();
    // The longest known module that prefixes a path.
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| known.contains(m))
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (p, text) in &files {
        let me = module_of(p);
        if me.is_empty() {
            continue; // the crate root composes everything
        }
        let c = non_test_code(text);
        let mut uses = BTreeSet::new();
        let parent = me[..me.len() - 1].to_vec();
        for (prefix, base) in [("crate::", Vec::new()), ("super::", parent)] {
            for (at, _) in c.match_indices(prefix) {
                if at > 0 && c[..at].ends_with(|ch: char| ch.is_alphanumeric() || ch == '_') {
                    continue;
                }
                for path in expand(&c[at + prefix.len()..]) {
                    let mut full = base.clone();
                    full.extend(path);
                    if let Some(m) = resolve(&full) {
                        if m != me && !me.starts_with(&m) {
                            uses.insert(m.join("::"));
                        }
                    }
                }
            }
        }
        graph.entry(me.join("::")).or_default().extend(uses);
    }
    graph
}

/// The paths a `use`-like reference starts with: `a::b::c` → [[a, b, c]]; a group
/// `a::{b, c::d}` → [[a, b], [a, c, d]] (one level of braces).
fn expand(rest: &str) -> Vec<Vec<String>> {
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut head: Vec<String> = Vec::new();
    let mut s = rest;
    loop {
        let end = s.find(|ch: char| !ident(ch)).unwrap_or(s.len());
        if end > 0 {
            head.push(s[..end].to_string());
        }
        s = &s[end..];
        if let Some(r) = s.strip_prefix("::") {
            s = r;
            if let Some(group) = s.strip_prefix('{') {
                let close = group.find('}').unwrap_or(group.len());
                return group[..close]
                    .split(',')
                    .map(|item| {
                        let mut p = head.clone();
                        p.extend(
                            item.trim()
                                .split("::")
                                .map(|x| x.trim_matches(|ch: char| !ident(ch)).to_string())
                                .filter(|x| !x.is_empty() && x != "self"),
                        );
                        p
                    })
                    .collect();
            }
            continue;
        }
        return vec![head];
    }
}

/// No import cycles between modules (files): layering is a DAG.
#[test]
fn no_import_cycles_between_modules() {
    let graph = module_graph();
    // Depth-first search for a back edge.
    fn visit(
        n: &str,
        g: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        state: &mut std::collections::BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|s| s == n).unwrap_or(0);
                let mut cycle = stack[at..].to_vec();
                cycle.push(n.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = std::collections::BTreeMap::new();
    for n in graph.keys() {
        let mut stack = Vec::new();
        if let Some(c) = visit(n, &graph, &mut state, &mut stack) {
            panic!("import cycle: {}", c.join(" -> "));
        }
    }
    assert!(graph.contains_key("registry::catalog"));
    assert!(graph["registry::store"].contains("registry::prepare"));
}
