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
