//! The RBAC bootstrap policy: the ClusterRoles, ClusterRoleBindings, Roles and RoleBindings
//! that kube-apiserver v1.33 creates (and keeps reconciled) at start, with its default feature
//! gates — the `system:*` roles, `admin`/`edit`/`view`, the `system:controller:*` roles and
//! their bindings, and the leader-locking and bootstrap-signer roles in `kube-system` and
//! `kube-public`.
//!
//! Owns: the policy data (`bootstrap_policy.txt`, Rafter's own transcription in its own line
//! format, compiled in), its parser into full `rbac.authorization.k8s.io/v1` objects
//! ([`policy`]), and the semantic [`fingerprint`] of an RBAC object that the upstream oracle
//! (`tests/data/rbac-bootstrap-fingerprints.txt`, made by `tests/data/rbac_fingerprints.py`
//! from kubernetes' policy fixtures) is written in. Aggregated roles (`admin`, `edit`,
//! `view`) carry their `aggregationRule` and empty `rules`; filling those is the aggregation
//! controller's job. Does not know: storage, reconciliation, authorization decisions.

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

/// The policy, in the line format documented at the top of the file.
const SOURCE: &str = include_str!("bootstrap_policy.txt");

const API_VERSION: &str = "rbac.authorization.k8s.io/v1";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const DEFAULT_LABEL: (&str, &str) = ("kubernetes.io/bootstrapping", "rbac-defaults");
const DEFAULT_ANNOTATION: (&str, &str) = ("rbac.authorization.kubernetes.io/autoupdate", "true");

/// The bootstrap policy as API objects, each kind in upstream order.
pub struct Policy {
    /// ClusterRoles: the cluster roles, then the `system:controller:*` roles.
    pub cluster_roles: Vec<Value>,
    /// ClusterRoleBindings: the cluster role bindings, then the controllers' bindings.
    pub cluster_role_bindings: Vec<Value>,
    /// Roles, with `metadata.namespace`.
    pub roles: Vec<Value>,
    /// RoleBindings, with `metadata.namespace`.
    pub role_bindings: Vec<Value>,
}

/// The bootstrap policy, parsed once. The data is compiled in, so a parse error is a bug in
/// `bootstrap_policy.txt` (the unit tests parse it) and panics.
pub fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        parse(SOURCE).unwrap_or_else(|e| panic!("src/authz/bootstrap_policy.txt: {e}"))
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    ClusterRole,
    ClusterRoleBinding,
    Role,
    RoleBinding,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::ClusterRole => "ClusterRole",
            Kind::ClusterRoleBinding => "ClusterRoleBinding",
            Kind::Role => "Role",
            Kind::RoleBinding => "RoleBinding",
        }
    }

    fn is_binding(self) -> bool {
        matches!(self, Kind::ClusterRoleBinding | Kind::RoleBinding)
    }
}

/// One object being read: everything its lines said so far.
struct Draft {
    kind: Kind,
    line: usize,
    name: String,
    namespace: Option<String>,
    labels: Vec<(String, String)>,
    annotations: Vec<(String, String)>,
    rules: Vec<Value>,
    selectors: Vec<Value>,
    role_ref: Option<(String, String)>,
    subjects: Vec<Value>,
}

impl Draft {
    fn new(kind: Kind, line: usize, namespace: Option<String>, name: String) -> Draft {
        let pair = |(k, v): (&str, &str)| vec![(k.to_string(), v.to_string())];
        Draft {
            kind,
            line,
            name,
            namespace,
            labels: pair(DEFAULT_LABEL),
            annotations: pair(DEFAULT_ANNOTATION),
            rules: Vec::new(),
            selectors: Vec::new(),
            role_ref: None,
            subjects: Vec::new(),
        }
    }

    fn finish(self) -> Result<Value, String> {
        let at = |msg: &str| {
            format!(
                "line {}: {} {}: {msg}",
                self.line,
                self.kind.name(),
                self.name
            )
        };
        let mut meta = Map::new();
        meta.insert("name".into(), json!(self.name));
        if let Some(ns) = &self.namespace {
            meta.insert("namespace".into(), json!(ns));
        }
        let map = |pairs: &[(String, String)]| {
            Value::Object(pairs.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
        };
        if !self.labels.is_empty() {
            meta.insert("labels".into(), map(&self.labels));
        }
        if !self.annotations.is_empty() {
            meta.insert("annotations".into(), map(&self.annotations));
        }
        let mut o = Map::new();
        o.insert("apiVersion".into(), json!(API_VERSION));
        o.insert("kind".into(), json!(self.kind.name()));
        o.insert("metadata".into(), Value::Object(meta));
        if self.kind.is_binding() {
            let Some((kind, name)) = &self.role_ref else {
                return Err(at("no role line"));
            };
            o.insert(
                "roleRef".into(),
                json!({"apiGroup": RBAC_GROUP, "kind": kind, "name": name}),
            );
            if !self.subjects.is_empty() {
                o.insert("subjects".into(), Value::Array(self.subjects));
            }
        } else {
            if !self.selectors.is_empty() && !self.rules.is_empty() {
                return Err(at("an aggregated role has no rules of its own"));
            }
            o.insert("rules".into(), Value::Array(self.rules));
            if !self.selectors.is_empty() {
                o.insert(
                    "aggregationRule".into(),
                    json!({"clusterRoleSelectors": self.selectors}),
                );
            }
        }
        Ok(Value::Object(o))
    }
}

/// Sets `key` to `value`, keeping the first position of an existing key.
fn set_pair(pairs: &mut Vec<(String, String)>, key: &str, value: &str) {
    match pairs.iter_mut().find(|(k, _)| k == key) {
        Some(p) => p.1 = value.to_string(),
        None => pairs.push((key.to_string(), value.to_string())),
    }
}

/// `<key>=<value>`, both non-empty.
fn key_value(s: &str) -> Result<(&str, &str), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k, v)),
        _ => Err(format!("{s:?} is not <key>=<value>")),
    }
}

/// A comma-separated list; `""` is the empty string (the core API group).
fn list(s: &str) -> Result<Vec<String>, String> {
    s.split(',')
        .map(|x| match x {
            "" => Err(format!("empty element in {s:?}")),
            "\"\"" => Ok(String::new()),
            x => Ok(x.to_string()),
        })
        .collect()
}

/// A `rule` line's fields into a PolicyRule.
fn rule(fields: &[&str]) -> Result<Value, String> {
    let (mut groups, mut resources, mut names, mut urls, mut verbs) =
        (None, None, None, None, None);
    for f in fields {
        let (k, v) = key_value(f)?;
        let slot = match k {
            "groups" => &mut groups,
            "resources" => &mut resources,
            "names" => &mut names,
            "urls" => &mut urls,
            "verbs" => &mut verbs,
            _ => return Err(format!("unknown rule field {k:?}")),
        };
        if slot.replace(list(v)?).is_some() {
            return Err(format!("rule field {k:?} given twice"));
        }
    }
    let Some(verbs) = verbs else {
        return Err("rule without verbs".into());
    };
    let mut r = Map::new();
    match (groups, resources, urls) {
        (Some(g), Some(res), None) => {
            r.insert("apiGroups".into(), json!(g));
            r.insert("resources".into(), json!(res));
            if let Some(n) = names {
                r.insert("resourceNames".into(), json!(n));
            }
        }
        (None, None, Some(u)) if names.is_none() => {
            r.insert("nonResourceURLs".into(), json!(u));
        }
        _ => return Err("a rule has groups= and resources= (names= optional), or urls=".into()),
    }
    r.insert("verbs".into(), json!(verbs));
    Ok(Value::Object(r))
}

/// A `subject` line's words into a subject.
fn subject(words: &[&str]) -> Result<Value, String> {
    let (kind, name, namespace) = match words {
        [k, n] => (*k, *n, None),
        [k, n, ns] => (*k, *n, Some(*ns)),
        _ => return Err("subject <User|Group|ServiceAccount> <name> [<namespace>]".into()),
    };
    let mut s = Map::new();
    s.insert("kind".into(), json!(kind));
    match kind {
        "User" | "Group" => {
            s.insert("apiGroup".into(), json!(RBAC_GROUP));
        }
        "ServiceAccount" if namespace.is_some() => {}
        "ServiceAccount" => return Err("a ServiceAccount subject needs a namespace".into()),
        _ => return Err(format!("unknown subject kind {kind:?}")),
    }
    s.insert("name".into(), json!(name));
    if let Some(ns) = namespace {
        s.insert("namespace".into(), json!(ns));
    }
    Ok(Value::Object(s))
}

/// Parses the line format into a [`Policy`]; errors name the line.
fn parse(text: &str) -> Result<Policy, String> {
    let mut p = Policy {
        cluster_roles: Vec::new(),
        cluster_role_bindings: Vec::new(),
        roles: Vec::new(),
        role_bindings: Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    let mut draft: Option<Draft> = None;
    let mut flush = |d: Draft, p: &mut Policy| -> Result<(), String> {
        let key = (d.kind, d.namespace.clone(), d.name.clone());
        if !seen.insert(key) {
            return Err(format!(
                "line {}: {} {} defined twice",
                d.line,
                d.kind.name(),
                d.name
            ));
        }
        let kind = d.kind;
        let o = d.finish()?;
        match kind {
            Kind::ClusterRole => p.cluster_roles.push(o),
            Kind::ClusterRoleBinding => p.cluster_role_bindings.push(o),
            Kind::Role => p.roles.push(o),
            Kind::RoleBinding => p.role_bindings.push(o),
        }
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let err = |e: String| format!("line {n}: {e}");
        if !raw.starts_with(char::is_whitespace) {
            // An object line: it starts the next object.
            let d = match (words[0], &words[1..]) {
                ("clusterrole", [name]) => Draft::new(Kind::ClusterRole, n, None, name.to_string()),
                ("clusterrolebinding", [name]) => {
                    Draft::new(Kind::ClusterRoleBinding, n, None, name.to_string())
                }
                ("role", [ns, name]) => {
                    Draft::new(Kind::Role, n, Some(ns.to_string()), name.to_string())
                }
                ("rolebinding", [ns, name]) => {
                    Draft::new(Kind::RoleBinding, n, Some(ns.to_string()), name.to_string())
                }
                (w, _) => return Err(err(format!("{w:?} is not an object line"))),
            };
            if let Some(prev) = draft.replace(d) {
                flush(prev, &mut p)?;
            }
            continue;
        }
        let Some(d) = draft.as_mut() else {
            return Err(err(format!("{:?} before any object", words[0])));
        };
        let role_like = !d.kind.is_binding();
        match (words[0], &words[1..]) {
            ("label", [kv]) => {
                let (k, v) = key_value(kv).map_err(err)?;
                set_pair(&mut d.labels, k, v);
            }
            ("annotation", [kv]) => {
                let (k, v) = key_value(kv).map_err(err)?;
                set_pair(&mut d.annotations, k, v);
            }
            ("nolabel", [k]) => d.labels.retain(|(key, _)| key != k),
            ("noannotation", [k]) => d.annotations.retain(|(key, _)| key != k),
            ("aggregate", [sel]) if role_like => {
                let mut labels = Map::new();
                for kv in sel.split(',') {
                    let (k, v) = key_value(kv).map_err(err)?;
                    labels.insert(k.to_string(), json!(v));
                }
                d.selectors.push(json!({ "matchLabels": labels }));
            }
            ("rule", fields) if role_like => d.rules.push(rule(fields).map_err(err)?),
            ("role", [kind, name]) if !role_like => {
                let ok = match d.kind {
                    Kind::RoleBinding => *kind == "Role" || *kind == "ClusterRole",
                    _ => *kind == "ClusterRole",
                };
                if !ok {
                    return Err(err(format!("a {} cannot refer to a {kind}", d.kind.name())));
                }
                if d.role_ref
                    .replace((kind.to_string(), name.to_string()))
                    .is_some()
                {
                    return Err(err("a second role line".into()));
                }
            }
            ("subject", words) if !role_like => d.subjects.push(subject(words).map_err(err)?),
            (w, _) => {
                return Err(err(format!("{w:?} does not fit a {} here", d.kind.name())));
            }
        }
    }
    if let Some(d) = draft.take() {
        flush(d, &mut p)?;
    }
    Ok(p)
}

/// The SHA-256 (lowercase hex) of an RBAC object's canonical text: its name, namespace,
/// labels and annotations, then either its rules and aggregation selectors as sets (roles) or
/// its roleRef and subjects as a set (bindings; an object with a `roleRef`). Everything
/// else — kind, apiVersion, uid, resourceVersion, creationTimestamp, managedFields, rule and
/// subject order — is ignored, so objects served over HTTP compare with [`policy`]'s. The
/// canonical text is defined in `tests/data/rbac_fingerprints.py`, which makes the upstream
/// oracle with the same normalization.
pub fn fingerprint(obj: &Value) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, canonical_text(obj).as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Compact JSON, as `json.dumps(x, separators=(",", ":"), ensure_ascii=False)`.
fn j(v: Value) -> String {
    serde_json::to_string(&v).unwrap_or_default()
}

/// A field's text; a non-string scalar as its JSON text.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// A string list as a sorted set; missing or null is empty.
fn string_set(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v.as_array().into_iter().flatten().map(text).collect();
    out.sort();
    out.dedup();
    out
}

/// A map's `[key, value]` pairs, sorted by key.
fn pairs(v: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = v
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), text(v)))
        .collect();
    out.sort();
    out
}

/// The lines `prefix=J(x)` for a set of values, sorted, duplicates dropped.
fn set_lines(prefix: &str, items: impl Iterator<Item = Value>) -> Vec<String> {
    let mut lines: Vec<String> = items.map(|x| format!("{prefix}={}", j(x))).collect();
    lines.sort();
    lines.dedup();
    lines
}

/// The canonical text [`fingerprint`] hashes.
fn canonical_text(obj: &Value) -> String {
    let md = &obj["metadata"];
    let mut lines = vec![
        format!("name={}", text(&md["name"])),
        format!("namespace={}", text(&md["namespace"])),
    ];
    for (field, prefix) in [("labels", "label"), ("annotations", "annotation")] {
        lines.extend(set_lines(
            prefix,
            pairs(&md[field]).into_iter().map(|(k, v)| json!([k, v])),
        ));
    }
    if obj.get("roleRef").is_some() {
        let r = &obj["roleRef"];
        lines.push(format!(
            "roleRef={}",
            j(json!([
                text(&r["apiGroup"]),
                text(&r["kind"]),
                text(&r["name"])
            ]))
        ));
        let subjects = obj["subjects"].as_array().into_iter().flatten();
        lines.extend(set_lines(
            "subject",
            subjects.map(|s| {
                json!([
                    text(&s["kind"]),
                    text(&s["apiGroup"]),
                    text(&s["name"]),
                    text(&s["namespace"])
                ])
            }),
        ));
    } else {
        let selectors = obj["aggregationRule"]["clusterRoleSelectors"].as_array();
        lines.extend(set_lines(
            "aggregate",
            selectors.into_iter().flatten().map(|s| {
                json!(pairs(&s["matchLabels"])
                    .into_iter()
                    .map(|(k, v)| json!([k, v]))
                    .collect::<Vec<_>>())
            }),
        ));
        let rules = obj["rules"].as_array().into_iter().flatten();
        lines.extend(set_lines(
            "rule",
            rules.map(|r| {
                json!([
                    "apiGroups",
                    "resources",
                    "resourceNames",
                    "nonResourceURLs",
                    "verbs"
                ]
                .map(|f| string_set(&r[f])))
            }),
        ));
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Upstream's oracle: `<Kind> <namespace|-> <name> <sha256>` per object.
    const ORACLE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rbac-bootstrap-fingerprints.txt"
    ));

    fn all(p: &Policy) -> impl Iterator<Item = &Value> {
        p.cluster_roles
            .iter()
            .chain(&p.cluster_role_bindings)
            .chain(&p.roles)
            .chain(&p.role_bindings)
    }

    #[test]
    fn the_file_parses() {
        parse(SOURCE).unwrap();
        let p = policy();
        for o in all(p) {
            let md = &o["metadata"];
            assert_eq!(md["labels"][DEFAULT_LABEL.0], DEFAULT_LABEL.1, "{o}");
            assert_eq!(
                md["annotations"][DEFAULT_ANNOTATION.0], DEFAULT_ANNOTATION.1,
                "{o}"
            );
            let keys: Vec<&str> = o.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys[..3], ["apiVersion", "kind", "metadata"], "{o}");
        }
        for o in p.roles.iter().chain(&p.role_bindings) {
            assert!(o["metadata"]["namespace"].is_string(), "{o}");
        }
    }

    #[test]
    fn counts() {
        let p = policy();
        assert_eq!(p.cluster_roles.len(), 66);
        assert_eq!(p.cluster_role_bindings.len(), 47);
        assert_eq!(p.roles.len(), 7);
        assert_eq!(p.role_bindings.len(), 7);
        let aggregated: Vec<&str> = p
            .cluster_roles
            .iter()
            .filter(|r| r.get("aggregationRule").is_some())
            .map(|r| r["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(aggregated, ["admin", "edit", "view"]);
        for r in p
            .cluster_roles
            .iter()
            .filter(|r| r.get("aggregationRule").is_some())
        {
            assert_eq!(r["rules"], json!([]), "{r}");
        }
    }

    #[test]
    fn objects_are_full_api_objects() {
        let p = policy();
        let find =
            |v: &[Value], name: &str| v.iter().find(|o| o["metadata"]["name"] == name).cloned();
        assert_eq!(
            find(&p.cluster_roles, "edit").unwrap(),
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {
                    "name": "edit",
                    "labels": {
                        "kubernetes.io/bootstrapping": "rbac-defaults",
                        "rbac.authorization.k8s.io/aggregate-to-admin": "true"
                    },
                    "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}
                },
                "rules": [],
                "aggregationRule": {"clusterRoleSelectors": [
                    {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}
                ]}
            })
        );
        let crb = find(&p.cluster_role_bindings, "system:kube-dns").unwrap();
        assert_eq!(
            crb["subjects"],
            json!([{"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}])
        );
        assert_eq!(
            crb["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:kube-dns"})
        );
        let node = find(&p.cluster_role_bindings, "system:node").unwrap();
        assert!(node.get("subjects").is_none(), "{node}");
        let piv = find(&p.cluster_role_bindings, "system:public-info-viewer").unwrap();
        assert_eq!(
            piv["subjects"][1],
            json!({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:unauthenticated"})
        );
        let approver = find(
            &p.cluster_roles,
            "system:certificates.k8s.io:legacy-unknown-approver",
        )
        .unwrap();
        assert_eq!(
            approver["rules"],
            json!([{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
                    "resourceNames": ["kubernetes.io/legacy-unknown"], "verbs": ["approve"]}])
        );
        let discovery = find(&p.cluster_roles, "system:public-info-viewer").unwrap();
        assert_eq!(
            discovery["rules"],
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}])
        );
        let scheduler = find(&p.cluster_roles, "system:kube-scheduler").unwrap();
        assert_eq!(
            scheduler["rules"][0]["apiGroups"],
            json!(["", "events.k8s.io"])
        );
        let rb = p
            .role_bindings
            .iter()
            .find(|o| o["metadata"]["namespace"] == "kube-public")
            .unwrap();
        assert_eq!(rb["roleRef"]["kind"], "Role");
        assert_eq!(rb["metadata"]["name"], "system:controller:bootstrap-signer");
    }

    #[test]
    fn matches_upstream_fingerprints() {
        let mut want = BTreeMap::new();
        for line in ORACLE.lines().filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 4, "oracle line {line:?}");
            let key = (f[0].to_string(), f[1].to_string(), f[2].to_string());
            assert!(
                want.insert(key, f[3].to_string()).is_none(),
                "duplicate oracle line {line:?}"
            );
        }
        let mut got = BTreeMap::new();
        for o in all(policy()) {
            let md = &o["metadata"];
            let ns = md["namespace"].as_str().unwrap_or("-").to_string();
            let key = (text(&o["kind"]), ns, text(&md["name"]));
            assert!(
                got.insert(key, (fingerprint(o), o)).is_none(),
                "duplicate {o}"
            );
        }
        let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
        let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
        assert!(
            missing.is_empty(),
            "missing from bootstrap_policy.txt: {missing:?}"
        );
        assert!(extra.is_empty(), "not upstream: {extra:?}");
        let differ: Vec<String> = got
            .iter()
            .filter(|(k, (h, _))| want[*k] != *h)
            .map(|(k, (_, o))| format!("{k:?}:\n{}", canonical_text(o)))
            .collect();
        assert!(
            differ.is_empty(),
            "differ from upstream:\n{}",
            differ.join("\n")
        );
        assert_eq!(got.len(), 127);
    }

    #[test]
    fn fingerprint_is_semantic() {
        let a = json!({
            "kind": "ClusterRole",
            "metadata": {"name": "r", "labels": {"b": "2", "a": "1"}},
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "nodes"], "verbs": ["list", "get"]},
                {"nonResourceURLs": ["/x"], "verbs": ["get"]}
            ]
        });
        let b = json!({
            "metadata": {"name": "r", "labels": {"a": "1", "b": "2"}, "uid": "u",
                         "resourceVersion": "7", "creationTimestamp": "2025-01-01T00:00:00Z",
                         "managedFields": [{"manager": "m"}]},
            "rules": [
                {"nonResourceURLs": ["/x"], "verbs": ["get"], "resourceNames": []},
                {"apiGroups": [""], "resources": ["nodes", "pods", "pods"], "verbs": ["get", "list"]},
                {"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list"]}
            ]
        });
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_eq!(
            canonical_text(&a),
            "name=r\nnamespace=\nlabel=[\"a\",\"1\"]\nlabel=[\"b\",\"2\"]\n\
             rule=[[\"\"],[\"nodes\",\"pods\"],[],[],[\"get\",\"list\"]]\n\
             rule=[[],[],[],[\"/x\"],[\"get\"]]\n"
        );
        let mut c = a.clone();
        c["rules"][0]["verbs"] = json!(["get"]);
        assert_ne!(fingerprint(&a), fingerprint(&c));
        assert_eq!(
            fingerprint(&json!({"metadata": {"name": "r"}, "rules": null})),
            fingerprint(&json!({"metadata": {"name": "r"}}))
        );
        let rb = json!({
            "metadata": {"name": "b", "namespace": "ns"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "s", "namespace": "ns"},
                         {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "u"}]
        });
        assert_eq!(
            canonical_text(&rb),
            "name=b\nnamespace=ns\nroleRef=[\"rbac.authorization.k8s.io\",\"Role\",\"r\"]\n\
             subject=[\"ServiceAccount\",\"\",\"s\",\"ns\"]\n\
             subject=[\"User\",\"rbac.authorization.k8s.io\",\"u\",\"\"]\n"
        );
        // A known hash, so a Python or Rust change to the normalization shows.
        assert_eq!(
            fingerprint(&json!({"metadata": {"name": "x"}})),
            "c70486fccadfd226d7bf090f15195539392cc584d1e99b12c8673195778216cf"
        );
    }

    #[test]
    fn parse_errors_name_the_line() {
        let e = |s: &str| parse(s).err().unwrap();
        assert!(e("label a=b").starts_with("line 1:"));
        assert!(e("  label a=b").contains("before any object"));
        assert!(e("clusterrole r\n  rule groups=\"\" resources=pods").contains("line 2"));
        assert!(e("clusterrole r\n  rule urls=/x names=n verbs=get").contains("urls="));
        assert!(e("clusterrole r\n  subject User u").contains("line 2"));
        assert!(e("clusterrolebinding b\n  subject User u").contains("no role line"));
        assert!(e("clusterrolebinding b\n  role Role r").contains("cannot refer"));
        assert!(
            e("rolebinding ns b\n  role Role r\n  subject ServiceAccount s").contains("namespace")
        );
        assert!(e("clusterrole r\nclusterrole r").contains("twice"));
        assert!(
            e("clusterrole r\n  aggregate a=b\n  rule urls=/x verbs=get").contains("aggregated")
        );
        assert!(e("clusterrole r\n  frobnicate").contains("line 2"));
        assert!(e("clusterrole r\nrule urls=/x verbs=get").contains("not an object line"));
        let p = parse(
            "role ns r\n  nolabel kubernetes.io/bootstrapping\n  label a=b\n  \
             rule groups=\"\",apps resources=x verbs=get\nrolebinding ns b\n  role Role r\n  \
             subject Group g\nrole ns r2\n  rule urls=/y verbs=get",
        )
        .unwrap();
        assert_eq!(p.roles.len(), 2);
        assert_eq!(p.roles[0]["metadata"]["labels"], json!({"a": "b"}));
        assert_eq!(p.roles[0]["rules"][0]["apiGroups"], json!(["", "apps"]));
        assert_eq!(
            p.role_bindings[0]["subjects"][0]["apiGroup"],
            "rbac.authorization.k8s.io"
        );
    }
}
