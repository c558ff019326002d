//! Compares Rafter's OpenAPI documents with upstream kube-apiserver v1.33.1's `/openapi/v2`
//! (the oracle under `../shared/`, read by this test only; skipped when absent).
//!
//! Checks: every path Rafter serves exists upstream with the same operations (operation id,
//! action, GVK, parameter names, media types, response schemas), and every upstream connect
//! path (exec, attach, portforward, the proxies with and without `{path}`) and pods/log is
//! served; every upstream definition
//! those paths use exists in our v2 document with the same property names, types, formats,
//! references, `x-kubernetes-*` extensions, required set and GVK extension; every served
//! group-version has a v3 document whose schemas carry the kinds' GVKs.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

const ORACLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/data/kubernetes-openapi/swagger-v1.33.1.json"
);

fn oracle() -> Option<Value> {
    let bytes = std::fs::read(ORACLE).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn docs() -> &'static rafter::openapi::Documents {
    static D: std::sync::OnceLock<rafter::openapi::Documents> = std::sync::OnceLock::new();
    D.get_or_init(Default::default)
}

fn catalog() -> std::sync::Arc<rafter::registry::Catalog> {
    static C: std::sync::OnceLock<std::sync::Arc<rafter::registry::Catalog>> =
        std::sync::OnceLock::new();
    C.get_or_init(|| rafter::registry::builtin::registry().snapshot())
        .clone()
}

fn ours() -> Value {
    serde_json::from_slice(&docs().v2(&catalog()).json).expect("our v2 is JSON")
}

/// Resolves `#/parameters/...` references of the upstream document.
fn resolve_param<'a>(doc: &'a Value, p: &'a Value) -> &'a Value {
    match p.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/parameters/")
            .and_then(|n| doc["parameters"].get(n))
            .unwrap_or(p),
        None => p,
    }
}

fn param_names(doc: &Value, params: Option<&Value>) -> BTreeSet<String> {
    params
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| resolve_param(doc, p)["name"].as_str().map(String::from))
        .collect()
}

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref" {
                    if let Some(n) = x.as_str().and_then(|s| s.strip_prefix("#/definitions/")) {
                        out.push(n.to_string());
                    }
                } else {
                    refs(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// The structural summary of a (property) schema compared between the documents.
fn shape(s: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for key in [
        "type",
        "format",
        "$ref",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-patch-strategy",
        "x-kubernetes-patch-merge-key",
        "x-kubernetes-group-version-kind",
    ] {
        if let Some(v) = s.get(key) {
            out.insert(key.to_string(), v.clone());
        }
    }
    for nested in ["items", "additionalProperties"] {
        if let Some(v) = s.get(nested).filter(|v| v.is_object()) {
            for (k, x) in shape(v) {
                out.insert(format!("{nested}.{k}"), x);
            }
        }
    }
    if let Some(Value::Array(req)) = s.get("required") {
        let set: BTreeSet<String> = req
            .iter()
            .filter_map(|r| r.as_str().map(String::from))
            .collect();
        out.insert("required".into(), serde_json::json!(set));
    }
    out
}

#[test]
fn served_paths_match_upstream() {
    let Some(up) = oracle() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but the oracle is missing at {ORACLE} (../shared beside the clone)"
        );
        eprintln!("oracle not found at {ORACLE}; skipping");
        return;
    };
    let ours = ours();
    let mut problems = Vec::new();
    for (path, item) in ours["paths"].as_object().expect("paths") {
        let Some(up_item) = up["paths"].get(path) else {
            problems.push(format!("{path}: not an upstream path"));
            continue;
        };
        if param_names(&up, up_item.get("parameters")) != param_names(&ours, item.get("parameters"))
        {
            problems.push(format!("{path}: path parameters differ"));
        }
        for (method, op) in item.as_object().expect("item") {
            if method == "parameters" {
                continue;
            }
            let Some(up_op) = up_item.get(method) else {
                problems.push(format!("{path} {method}: not upstream"));
                continue;
            };
            for key in [
                "operationId",
                "x-kubernetes-action",
                "x-kubernetes-group-version-kind",
                "consumes",
                "produces",
                "responses",
                "description",
                "tags",
            ] {
                if op.get(key) != up_op.get(key) {
                    problems.push(format!("{path} {method}: {key} differs"));
                }
            }
            if param_names(&up, up_op.get("parameters")) != param_names(&ours, op.get("parameters"))
            {
                problems.push(format!("{path} {method}: parameters differ"));
            }
        }
    }
    // The other way round for the connect subresources and pods/log: every such upstream
    // path is ours too (the loop above compared their operations).
    for (path, item) in up["paths"].as_object().expect("paths") {
        let connect = item
            .as_object()
            .into_iter()
            .flatten()
            .any(|(_, op)| op.get("x-kubernetes-action") == Some(&Value::from("connect")));
        if (connect || path.ends_with("/pods/{name}/log")) && ours["paths"].get(path).is_none() {
            problems.push(format!("{path}: upstream connect path missing"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn used_definitions_match_upstream() {
    let Some(up) = oracle() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but the oracle is missing at {ORACLE} (../shared beside the clone)"
        );
        eprintln!("oracle not found at {ORACLE}; skipping");
        return;
    };
    let ours = ours();
    let ours_defs = ours["definitions"].as_object().expect("definitions");
    let up_defs = up["definitions"].as_object().expect("definitions");

    // Every upstream definition reachable from the upstream items of the paths we serve.
    let mut stack = Vec::new();
    for path in ours["paths"].as_object().expect("paths").keys() {
        refs(&up["paths"][path], &mut stack);
    }
    let mut used = BTreeSet::new();
    while let Some(n) = stack.pop() {
        if used.insert(n.clone()) {
            refs(&up_defs[&n], &mut stack);
        }
    }
    assert!(used.contains("io.k8s.api.apps.v1.Deployment"));

    let mut problems = Vec::new();
    for name in &used {
        let Some(mine) = ours_defs.get(name) else {
            problems.push(format!("{name}: missing"));
            continue;
        };
        let theirs = &up_defs[name];
        if shape(mine) != shape(theirs) {
            problems.push(format!(
                "{name}: definition differs: ours {:?} upstream {:?}",
                shape(mine),
                shape(theirs)
            ));
        }
        let empty = serde_json::Map::new();
        let mp = mine["properties"].as_object().unwrap_or(&empty);
        let tp = theirs["properties"].as_object().unwrap_or(&empty);
        let mk: BTreeSet<&String> = mp.keys().collect();
        let tk: BTreeSet<&String> = tp.keys().collect();
        if mk != tk {
            problems.push(format!(
                "{name}: properties differ: ours {mk:?} upstream {tk:?}"
            ));
            continue;
        }
        for (p, s) in tp {
            if shape(&mp[p]) != shape(s) {
                problems.push(format!(
                    "{name}.{p}: ours {:?} upstream {:?}",
                    shape(&mp[p]),
                    shape(s)
                ));
            }
        }
    }
    // Nothing of ours that upstream lacks.
    for name in ours_defs.keys() {
        if !up_defs.contains_key(name) {
            problems.push(format!("{name}: not an upstream definition"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems: {problems:#?}",
        problems.len()
    );
}

#[test]
fn v3_documents_cover_every_served_kind() {
    let ours = ours();
    let index: Value = serde_json::from_slice(&docs().v3(&catalog()).index()).expect("index");
    let mut checked = 0;
    for (path, item) in ours["paths"].as_object().expect("paths") {
        let Some(gvk) = item
            .get("get")
            .and_then(|g| g.get("x-kubernetes-group-version-kind"))
        else {
            continue;
        };
        let group = gvk["group"].as_str().unwrap_or_default();
        let version = gvk["version"].as_str().unwrap_or_default();
        let gv = if group.is_empty() {
            format!("api/{version}")
        } else {
            format!("apis/{group}/{version}")
        };
        if !path.starts_with(&format!("/{gv}/")) {
            continue; // e.g. the autoscaling/v1 Scale of apps/v1 paths
        }
        let hash = docs()
            .v3(&catalog())
            .document(&gv)
            .expect("hash")
            .1
            .to_string();
        assert_eq!(
            index["paths"][&gv]["serverRelativeURL"],
            format!("/openapi/v3/{gv}?hash={hash}")
        );
        let doc: Value =
            serde_json::from_slice(&docs().v3(&catalog()).document(&gv).expect("doc").0)
                .expect("json");
        let v3_item = &doc["paths"][path];
        assert!(v3_item.is_object(), "{gv}: {path} missing");
        let found = doc["components"]["schemas"]
            .as_object()
            .expect("schemas")
            .values()
            .any(|s| {
                s["x-kubernetes-group-version-kind"]
                    .as_array()
                    .is_some_and(|a| a.contains(gvk))
            });
        assert!(found, "{gv}: no schema with GVK {gvk}");
        checked += 1;
    }
    assert!(checked > 50, "checked {checked}");
}

/// Clients and generators read descriptions: every definition both serve has upstream's
/// description, and so has each of its properties.
#[test]
fn descriptions_match_upstream() {
    let Some(up) = oracle() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but the oracle is missing at {ORACLE}"
        );
        return;
    };
    let ours = ours();
    let mut problems = Vec::new();
    let (ud, od) = (&up["definitions"], &ours["definitions"]);
    for (name, d) in od.as_object().expect("definitions") {
        let Some(u) = ud.get(name) else { continue };
        if u.get("description") != d.get("description") {
            problems.push(name.clone());
        }
        for (p, pd) in d["properties"].as_object().into_iter().flatten() {
            if let Some(upd) = u["properties"].get(p) {
                if upd.get("description") != pd.get("description") {
                    problems.push(format!("{name}.{p}"));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} differ: {problems:#?}",
        problems.len()
    );
}
