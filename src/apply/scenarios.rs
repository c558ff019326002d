//! The data-driven table of server-side apply scenarios: every YAML file under
//! `tests/data/apply/` is a topic (a schema and named scenarios), each scenario a sequence of
//! steps `(manager, operation Apply|Update, apiVersion, subresource, force, body)` with the
//! expected object, `managedFields` (each manager's `fieldsV1`) and conflicts after any step.
//! The expectations are structured-merge-diff's own test cases (`merge/*_test.go`, restated
//! on CRD-form schemas or built-in kinds) and kube's behaviour (its apply integration tests,
//! the SSA seed's flows).
//!
//! File format (see `tests/data/apply/README.md`):
//!
//! ```yaml
//! schema: {openAPIV3Schema: {...}}      # or {builtin: apps/v1 Deployment}
//! apiVersion: v1                        # default for steps (a manager's recorded version)
//! scenarios:
//! - name: apply_twice
//!   source: SMD merge/leaf_test.go apply_twice
//!   known: why this differs from kube   # optional: a known difference, expected to fail
//!   live: {...}                         # optional: the object before the first step
//!   schema: ...                         # optional: this scenario's own (and apiVersion)
//!   ignored: [[status]]                 # optional: fields never owned (reset fields)
//!   steps:
//!   - {manager: default, operation: Apply, config: {numeric: 1}}
//!   - manager: controller
//!     operation: Update                 # also: apiVersion, subresource, force, ignored,
//!     object: {numeric: 2}              # and schema (which holds from this step on)
//!     expect:
//!       object: {numeric: 2}
//!       managedFields: {default: {}, controller: {"f:numeric": {}}}
//!       managers: [default Apply, controller Update]
//!       conflicts: ['conflict with "controller" using v1: .numeric']
//! ```
//!
//! `managedFields` lists every manager that owns something (an empty `{}` set is an entry that
//! must not exist); keys are manager names, narrowed as `name[ Apply|Update][/status]` or
//! `name[ Apply|Update]@apps/v1[ /status]` when a name has several entries; a value with a
//! `fieldsV1` key may also pin `apiVersion`. `managers` is the entries' order as kube sorts
//! them. `conflicts` is kube's whole message (a string) or its causes (`conflict with ...:
//! path`, any order; `[]`: none). `error` expects a non-conflict failure containing the text. A
//! scenario marked `known` must fail (the runner says so when it starts passing); unknown keys
//! and scenarios without a `source` are failures.
//!
//! Steps drive the whole pipeline, kube's field manager chain ([`super::manager`]) over the
//! merge and ownership rules: each object carries its `metadata.managedFields` to the next
//! step (an Update step may send its own, e.g. `[{}]` to reset them), with one second of
//! `time` per step. The kind's empty object is `{}` (Update steps compare with the previous
//! object, as SMD's tests do). Every failure of every file is reported at once, with the file,
//! scenario, step and a diff.
#![cfg(test)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::fieldpath::{path_string, PathElement, Set};
use super::managed_fields;
use super::manager::{FieldManager, ManagerError};
use super::merge::{self, conflict_causes, ApplyError, Managers, Operation};
use super::typed::{json_equal, Schema};
use crate::registry::custom::node::{self, Node};

/// A topic's schema, owned (CRD node) or static (built-in).
enum TopicSchema {
    Custom(Box<Node>),
    Builtin(Schema<'static>),
}

impl TopicSchema {
    fn parse(v: &Value) -> Result<TopicSchema, String> {
        if let Some(s) = v.get("openAPIV3Schema") {
            return Ok(TopicSchema::Custom(Box::new(node::compile(s))));
        }
        if let Some(b) = v.get("builtin").and_then(Value::as_str) {
            let (gv, kind) = b
                .split_once(' ')
                .ok_or_else(|| format!("builtin {b:?}: want `group/version Kind`"))?;
            let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
            return Schema::builtin(group, version, kind)
                .map(TopicSchema::Builtin)
                .ok_or_else(|| format!("no built-in {b:?}"));
        }
        Err("schema: want openAPIV3Schema or builtin".into())
    }

    fn view(&self) -> Schema<'_> {
        match self {
            TopicSchema::Custom(n) => Schema::CustomRoot(n),
            TopicSchema::Builtin(s) => *s,
        }
    }
}

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apply");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    out.sort();
    out
}

fn s<'v>(v: &'v Value, k: &str) -> &'v str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn yaml(v: &Value) -> String {
    serde_yaml::to_string(v).unwrap_or_else(|_| v.to_string())
}

/// The object between steps; it carries its `metadata.managedFields`.
struct State {
    object: Value,
}

/// The object without `managedFields` (and without a `metadata` left empty by that, unless
/// `want` has one), for comparing with an expected object.
fn without_entries(v: &Value, want: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
            if m.is_empty() && want.get("metadata").is_none() {
                o.remove("metadata");
            }
        }
    }
    v
}

/// Keys a document level may have: anything else is a typo that would silently check nothing.
fn unknown_keys(v: &Value, allowed: &[&str], what: &str) -> Result<(), String> {
    let bad: Vec<&String> = v
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .filter(|k| !allowed.contains(&k.as_str()))
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{what}: unknown keys {bad:?} (allowed: {allowed:?})"
        ))
    }
}

const FILE_KEYS: &[&str] = &["schema", "apiVersion", "scenarios"];
const SCENARIO_KEYS: &[&str] = &[
    "name",
    "source",
    "known",
    "schema",
    "apiVersion",
    "live",
    "ignored",
    "steps",
];
const STEP_KEYS: &[&str] = &[
    "manager",
    "operation",
    "force",
    "apiVersion",
    "subresource",
    "config",
    "object",
    "schema",
    "ignored",
    "expect",
];
const EXPECT_KEYS: &[&str] = &["object", "managedFields", "managers", "conflicts", "error"];

/// One step: runs it through kube's field manager chain ([`FieldManager`]), then checks its
/// expectations. Errors are the report lines.
fn run_step(
    schema: Schema<'_>,
    default_version: &str,
    ignored: &Set,
    st: &mut State,
    (i, step): (usize, &Value),
) -> Result<(), String> {
    unknown_keys(step, STEP_KEYS, "step")?;
    if let Some(e) = step.get("expect") {
        unknown_keys(e, EXPECT_KEYS, "expect")?;
    }
    let manager = s(step, "manager");
    let version = match s(step, "apiVersion") {
        "" => default_version,
        v => v,
    };
    let fm = FieldManager {
        schema,
        api_version: version.to_string(),
        subresource: s(step, "subresource").to_string(),
        reset: match step.get("ignored") {
            Some(p) => paths(p),
            None => ignored.clone(),
        },
        versions: None,
        zero: serde_json::json!({}),
    };
    let force = step.get("force").and_then(Value::as_bool).unwrap_or(false);
    let body = step
        .get("config")
        .or_else(|| step.get("object"))
        .cloned()
        .map(|b| {
            if b.is_null() {
                serde_json::json!({})
            } else {
                b
            }
        })
        .ok_or("step without config/object")?;
    // one second per step, so entries sort by step as kube sorts them by time
    let now = format!("2026-01-01T00:{:02}:{:02}Z", i / 60, i % 60);
    let res = match s(step, "operation") {
        "Apply" => fm.apply(&st.object, &body, manager, force, &now),
        "Update" => {
            let mut new = body.clone();
            fm.update(&st.object, &mut new, manager, &now);
            Ok(new)
        }
        op => return Err(format!("operation {op:?}: want Apply or Update")),
    };
    let expect = step.get("expect").cloned().unwrap_or(Value::Null);
    let mut problems = Vec::new();
    match res {
        Ok(o) => {
            st.object = o;
            // `conflicts: []` says none are expected
            if let Some(c) = expect
                .get("conflicts")
                .filter(|c| c.as_array().is_none_or(|a| !a.is_empty()))
            {
                problems.push(format!("no conflict; wanted {}", yaml(c).trim_end()));
            }
            if let Some(e) = expect.get("error") {
                problems.push(format!("no error; wanted {e}"));
            }
        }
        Err(ManagerError::Apply(ApplyError::Conflicts(cs))) => match expect.get("conflicts") {
            Some(Value::String(want)) => {
                let got = ApplyError::Conflicts(cs).to_string();
                if &got != want {
                    problems.push(format!("conflict message\n  got:  {got}\n  want: {want}"));
                }
            }
            Some(Value::Array(want)) => {
                let mut got: Vec<String> = conflict_causes(&cs)
                    .into_iter()
                    .map(|(m, f)| format!("{m}: {f}"))
                    .collect();
                let mut want: Vec<String> = want
                    .iter()
                    .map(|w| w.as_str().unwrap_or("").into())
                    .collect();
                got.sort();
                want.sort();
                if got != want {
                    problems.push(format!("conflicts\n  got:  {got:?}\n  want: {want:?}"));
                }
            }
            _ => problems.push(format!("unexpected {}", ApplyError::Conflicts(cs))),
        },
        Err(e) => match expect.get("error").and_then(Value::as_str) {
            Some(want) if e.to_string().contains(want) => {}
            _ => problems.push(format!("unexpected error: {e}")),
        },
    }
    if let Some(want) = expect.get("object") {
        let got = without_entries(&st.object, want);
        if !json_equal(&got, want) {
            problems.push(format!(
                "object\n--- got\n{}--- want\n{}",
                yaml(&got),
                yaml(want)
            ));
        }
    }
    if let Some(want) = expect.get("managedFields") {
        let entries = st.object.pointer("/metadata/managedFields");
        match managed_fields::decode(entries) {
            Ok((managers, _)) => problems.extend(check_managed(&managers, want)),
            Err(e) => problems.push(format!("managedFields do not decode: {e}")),
        }
    }
    if let Some(want) = expect.get("managers") {
        // the entries' order as kube sorts them: "name Operation[/subresource]"
        let got: Vec<String> = st
            .object
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|e| {
                let mut n = format!("{} {}", s(e, "manager"), s(e, "operation"));
                if !s(e, "subresource").is_empty() {
                    n = format!("{n}/{}", s(e, "subresource"));
                }
                n
            })
            .collect();
        let want: Vec<String> = want
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| w.as_str().unwrap_or("").to_string())
            .collect();
        if got != want {
            problems.push(format!("managers\n  got:  {got:?}\n  want: {want:?}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Which entries a `managedFields` key names: `name[ Apply|Update][/subresource]`, or with a
/// version `name[ Apply|Update]@apiVersion[ /subresource]`.
struct EntryKey {
    name: String,
    op: Option<Operation>,
    version: Option<String>,
    sub: String,
}

fn entry_key(k: &str) -> EntryKey {
    // versions hold slashes: `name Update@apps/v1 /status` then
    let (k, version, sub) = match k.split_once('@') {
        Some((k, rest)) => {
            let (v, sub) = rest.split_once(" /").unwrap_or((rest, ""));
            (k, Some(v.to_string()), sub)
        }
        None => {
            let (k, sub) = k.split_once('/').unwrap_or((k, ""));
            (k, None, sub)
        }
    };
    let (name, op) = match k.rsplit_once(' ') {
        Some((n, "Apply")) => (n, Some(Operation::Apply)),
        Some((n, "Update")) => (n, Some(Operation::Update)),
        _ => (k, None),
    };
    EntryKey {
        name: name.to_string(),
        op,
        version,
        sub: sub.to_string(),
    }
}

fn check_managed(managers: &Managers, want: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(want) = want.as_object() else {
        return vec!["managedFields: want a map of manager to fieldsV1".into()];
    };
    let mut matched: BTreeMap<&str, ()> = BTreeMap::new();
    for (k, w) in want {
        let key = entry_key(k);
        let (fields, version) = match w.get("fieldsV1") {
            Some(f) => (f, w.get("apiVersion").and_then(Value::as_str)),
            None => (w, None),
        };
        let want_set = match Set::from_json(fields) {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("managedFields[{k}]: bad fieldsV1: {}", e.0));
                continue;
            }
        };
        let found: Vec<(&String, &merge::Owned)> = managers
            .iter()
            .filter(|(_, o)| {
                o.manager == key.name
                    && key.op.is_none_or(|op| o.operation == op)
                    && key.version.as_ref().is_none_or(|v| &o.api_version == v)
                    && o.subresource == key.sub
            })
            .collect();
        match found.as_slice() {
            [] if want_set.is_empty() => {}
            [] => problems.push(format!(
                "managedFields[{k}]: no entry; want {}",
                want_set.to_json()
            )),
            [(id, o)] => {
                matched.insert(id.as_str(), ());
                if o.set != want_set {
                    problems.push(format!(
                        "managedFields[{k}]\n  got:  {}\n  want: {}\n  missing: {:?}\n  extra: {:?}",
                        o.set.to_json(),
                        want_set.to_json(),
                        want_set.difference(&o.set).paths().iter().map(|p| path_string(p)).collect::<Vec<_>>(),
                        o.set.difference(&want_set).paths().iter().map(|p| path_string(p)).collect::<Vec<_>>(),
                    ));
                }
                if let Some(v) = version {
                    if o.api_version != v {
                        problems.push(format!(
                            "managedFields[{k}]: apiVersion {}, want {v}",
                            o.api_version
                        ));
                    }
                }
            }
            many => problems.push(format!(
                "managedFields[{k}]: {} entries match; name the operation",
                many.len()
            )),
        }
    }
    for (id, o) in managers {
        if !matched.contains_key(id.as_str()) {
            problems.push(format!(
                "managedFields: unexpected entry {id}: {}",
                o.set.to_json()
            ));
        }
    }
    problems
}

/// Fields never owned (kube's reset fields, SMD's IgnoredFields), as lists of field names.
fn paths(v: &Value) -> Set {
    let mut set = Set::new();
    for p in v.as_array().into_iter().flatten() {
        let path: Vec<PathElement> = p
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(PathElement::field)
            .collect();
        set.insert(&path);
    }
    set
}

/// Runs one scenario; `Err` is the report.
fn run_scenario(schema: Schema<'_>, default_version: &str, sc: &Value) -> Result<(), String> {
    unknown_keys(sc, SCENARIO_KEYS, "scenario")?;
    if s(sc, "source").is_empty() {
        return Err("no source: name the SMD test case or kube behaviour it restates".into());
    }
    let mut st = State {
        object: sc
            .get("live")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({})),
    };
    let steps = sc
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("no steps")?;
    let ignored = sc.get("ignored").map(paths).unwrap_or_default();
    // A step's `schema` replaces the schema from that step on (SMD's ChangeParser: the
    // resource's schema changed between writes).
    let mut changed: Vec<TopicSchema> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let what = || format!("step {i} ({} {})", s(step, "manager"), s(step, "operation"));
        if let Some(v) = step.get("schema") {
            changed.push(TopicSchema::parse(v).map_err(|e| format!("{}: {e}", what()))?);
        }
        let schema = changed.last().map(TopicSchema::view).unwrap_or(schema);
        run_step(schema, default_version, &ignored, &mut st, (i, step))
            .map_err(|e| format!("{}: {e}", what()))?;
    }
    Ok(())
}

/// Runs every scenario of one file: (passed, known differences, failure reports).
fn run_file(path: &Path) -> (usize, usize, Vec<String>) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let text = std::fs::read_to_string(path).unwrap();
    let doc: Value = match serde_yaml::from_str(&text) {
        Ok(d) => d,
        Err(e) => return (0, 0, vec![format!("{name}: {e}")]),
    };
    if let Err(e) = unknown_keys(&doc, FILE_KEYS, "file") {
        return (0, 0, vec![format!("{name}: {e}")]);
    }
    let schema = match doc.get("schema").map(TopicSchema::parse) {
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => return (0, 0, vec![format!("{name}: {e}")]),
        None => None,
    };
    let version = match s(&doc, "apiVersion") {
        "" => "v1",
        v => v,
    };
    let (mut passed, mut known, mut failures) = (0, 0, Vec::new());
    let scenarios = doc
        .get("scenarios")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    for sc in &scenarios {
        let sname = s(sc, "name");
        if !seen.insert(sname.to_string()) {
            failures.push(format!("{name}: duplicate scenario name {sname:?}"));
        }
        let own = match sc.get("schema").map(TopicSchema::parse) {
            Some(Ok(s)) => Some(s),
            Some(Err(e)) => {
                failures.push(format!("{name}: {sname}: {e}"));
                continue;
            }
            None => None,
        };
        let Some(schema) = own.as_ref().or(schema.as_ref()) else {
            failures.push(format!("{name}: {sname}: no schema"));
            continue;
        };
        let version = match s(sc, "apiVersion") {
            "" => version,
            v => v,
        };
        let res = run_scenario(schema.view(), version, sc);
        match (res, sc.get("known").and_then(Value::as_str)) {
            (Ok(()), None) => passed += 1,
            (Err(_), Some(_)) => known += 1,
            (Ok(()), Some(_)) => failures.push(format!(
                "{name}: {sname}: marked known but passes; drop `known`"
            )),
            (Err(e), None) => failures.push(format!("{name}: {sname}: {e}")),
        }
    }
    if scenarios.is_empty() {
        failures.push(format!("{name}: no scenarios"));
    }
    (passed, known, failures)
}

#[test]
fn apply_scenarios() {
    let mut failures = Vec::new();
    let (mut passed, mut known) = (0, 0);
    let files = files();
    assert!(!files.is_empty(), "no scenario files");
    for f in &files {
        let (p, k, fs) = run_file(f);
        passed += p;
        known += k;
        failures.extend(fs);
    }
    eprintln!(
        "apply scenarios: {passed} passed, {known} known differences, {} failed, {} files",
        failures.len(),
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing scenarios:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
