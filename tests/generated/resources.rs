//! The generator of `src/generated/resources.rs`, the built-in resource table: which resources
//! and in what order from `tests/generated/resources_input.txt` (with the facts upstream's
//! OpenAPI document lacks: short names, categories, name rule, generation, scale paths,
//! preferred version), everything else from the document's paths.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// What the OpenAPI paths say about one (group, version, plural).
#[derive(Default)]
struct Served {
    namespaced: bool,
    /// Discovery verbs (sorted).
    verbs: BTreeSet<String>,
    /// (group, version, kind) of the operations on the resource itself.
    gvk: Option<(String, String, String)>,
    /// The definition the item `get` returns.
    definition: Option<String>,
    /// The definition the collection `get` (list) returns.
    list_definition: Option<String>,
    /// Subresources (`status`, `scale`, ...).
    subresources: BTreeSet<String>,
}

fn ref_of(v: &Value) -> Option<String> {
    let r = v.get("$ref")?.as_str()?.strip_prefix("#/definitions/")?;
    Some(r.to_string())
}

/// The discovery verb of an operation's `x-kubernetes-action` (`None`: not a verb of the
/// resource, e.g. `connect`).
fn verb(action: &str) -> Option<&'static str> {
    Some(match action {
        "post" => "create",
        "put" => "update",
        "watch" | "watchlist" => "watch",
        "get" => "get",
        "list" => "list",
        "patch" => "patch",
        "delete" => "delete",
        "deletecollection" => "deletecollection",
        _ => return None,
    })
}

/// Every (group, version, plural) upstream's paths serve, keyed by that triple.
fn served(doc: &Value) -> BTreeMap<(String, String, String), Served> {
    let mut out: BTreeMap<(String, String, String), Served> = BTreeMap::new();
    let paths = doc["paths"].as_object().expect("the document has paths");
    for (path, ops) in paths {
        let (group, version, rest) = if let Some(rest) = path.strip_prefix("/api/v1/") {
            ("", "v1", rest)
        } else if let Some(rest) = path.strip_prefix("/apis/") {
            let mut it = rest.splitn(3, '/');
            let (Some(g), Some(v), Some(rest)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            (g, v, rest)
        } else {
            continue;
        };
        let rest = rest.strip_prefix("watch/").unwrap_or(rest);
        let (namespaced, rest) = match rest.strip_prefix("namespaces/{namespace}/") {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let segs: Vec<&str> = rest.split('/').collect();
        let entry = out
            .entry((group.to_string(), version.to_string(), segs[0].to_string()))
            .or_default();
        entry.namespaced |= namespaced;
        match segs.len() {
            1 | 2 => {}
            3 => {
                entry.subresources.insert(segs[2].to_string());
                continue;
            }
            _ => continue,
        }
        let Some(ops) = ops.as_object() else {
            continue;
        };
        for (method, op) in ops {
            let Some(action) = op["x-kubernetes-action"].as_str() else {
                continue;
            };
            let Some(verb) = verb(action) else {
                continue;
            };
            entry.verbs.insert(verb.to_string());
            let gvk = &op["x-kubernetes-group-version-kind"];
            let gvk = (
                gvk["group"].as_str().unwrap_or_default().to_string(),
                gvk["version"].as_str().unwrap_or_default().to_string(),
                gvk["kind"].as_str().unwrap_or_default().to_string(),
            );
            match &entry.gvk {
                Some(have) => assert_eq!(have, &gvk, "{path} {method}: the kind changes"),
                None => entry.gvk = Some(gvk),
            }
            if method == "get" {
                let returned = ref_of(&op["responses"]["200"]["schema"]);
                match (action, segs.len()) {
                    ("get", 2) => entry.definition = returned,
                    ("list", 1) => entry.list_definition = returned,
                    _ => {}
                }
            }
        }
    }
    out
}

/// One resource line of the input.
struct Row {
    group: String,
    version: String,
    preferred: bool,
    plural: String,
    name_rule: String,
    generation: bool,
    short_names: Vec<String>,
    categories: Vec<String>,
    scale: Option<Vec<String>>,
}

fn list(v: &str) -> Vec<String> {
    v.split(',').map(str::to_string).collect()
}

/// The input's resource lines, in order (its format is described at its top).
fn rows(input: &str) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    let mut section: Option<(String, String, bool)> = None;
    for (n, line) in input.lines().enumerate() {
        let at = format!("resources_input.txt:{}", n + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(head) = line.strip_prefix('[') {
            let head = head
                .strip_suffix(']')
                .unwrap_or_else(|| panic!("{at}: no `]`"));
            let mut words = head.split_whitespace();
            let api_version = words
                .next()
                .unwrap_or_else(|| panic!("{at}: no apiVersion"));
            let preferred = match words.next() {
                None => false,
                Some("preferred") => true,
                Some(w) => panic!("{at}: unknown `{w}`"),
            };
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            section = Some((group.to_string(), version.to_string(), preferred));
            continue;
        }
        let (group, version, preferred) = section
            .clone()
            .unwrap_or_else(|| panic!("{at}: a resource before any [apiVersion]"));
        let mut words = line.split_whitespace();
        let plural = words.next().unwrap_or_default().to_string();
        let name_rule = words
            .next()
            .unwrap_or_else(|| panic!("{at}: no name rule"))
            .to_string();
        let mut row = Row {
            group,
            version,
            preferred,
            plural,
            name_rule,
            generation: false,
            short_names: Vec::new(),
            categories: Vec::new(),
            scale: None,
        };
        for w in words {
            match w.split_once('=') {
                None if w == "generation" => row.generation = true,
                Some(("short", v)) => row.short_names = list(v),
                Some(("categories", v)) => row.categories = list(v),
                Some(("scale", v)) => {
                    let paths = list(v);
                    assert!(
                        matches!(paths.len(), 2 | 3),
                        "{at}: scale needs 2 or 3 paths"
                    );
                    row.scale = Some(paths);
                }
                _ => panic!("{at}: unknown `{w}`"),
            }
        }
        if let Some(prev) = out.last() {
            if (&prev.group, &prev.version) == (&row.group, &row.version) {
                assert!(prev.plural < row.plural, "{at}: not sorted by name");
            }
        }
        out.push(row);
    }
    out
}

fn lit(s: &str) -> String {
    format!("{s:?}")
}

fn lits(v: &[String]) -> String {
    let items: Vec<String> = v.iter().map(|s| lit(s)).collect();
    format!("&[{}]", items.join(", "))
}

const STANDARD_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The entries of `RESOURCES` (one `ResourceInfo { ... },` each), from the OpenAPI document
/// and the input file.
pub fn resources_table(doc: &Value, input: &str) -> String {
    let served = served(doc);
    let mut out = String::new();
    for row in rows(input) {
        let gv = if row.group.is_empty() {
            row.version.clone()
        } else {
            format!("{}/{}", row.group, row.version)
        };
        let at = format!("{gv} {}", row.plural);
        let key = (row.group.clone(), row.version.clone(), row.plural.clone());
        let s = served
            .get(&key)
            .unwrap_or_else(|| panic!("{at}: not in the OpenAPI document"));
        let (group, version, kind) = s.gvk.clone().unwrap_or_else(|| panic!("{at}: no kind"));
        assert_eq!(
            (&group, &version),
            (&row.group, &row.version),
            "{at}: kind's group"
        );
        let definition = s
            .definition
            .clone()
            .unwrap_or_else(|| panic!("{at}: no item get"));
        let def = &doc["definitions"][&definition];
        let listed = def["x-kubernetes-group-version-kind"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|x| x["group"] == group && x["version"] == version && x["kind"] == kind);
        assert!(listed, "{at}: {definition} is not {kind}");
        // kube names the list kind `<Kind>List` and the singular the lower-cased kind.
        let list_kind = format!("{kind}List");
        let list_definition = s.list_definition.clone().unwrap_or_default();
        assert!(
            list_definition.ends_with(&format!(".{list_kind}")),
            "{at}: list returns {list_definition}"
        );
        let singular = kind.to_ascii_lowercase();
        let verbs: Vec<String> = s.verbs.iter().cloned().collect();
        let verbs = if verbs == STANDARD_VERBS {
            "STANDARD_VERBS".to_string()
        } else {
            lits(&verbs)
        };
        assert_eq!(
            row.scale.is_some(),
            s.subresources.contains("scale"),
            "{at}: scale= and the /scale path disagree"
        );
        let scale = match &row.scale {
            None => "None".to_string(),
            Some(p) => format!(
                "Some(ScaleInfo {{ spec_replicas_path: {}, status_replicas_path: {}, label_selector_path: {} }})",
                lit(&p[0]),
                lit(&p[1]),
                p.get(2).map_or("None".to_string(), |s| format!("Some({})", lit(s)))
            ),
        };
        out.push_str("    ResourceInfo {\n");
        let mut field = |name: &str, value: String| {
            out.push_str(&format!("        {name}: {value},\n"));
        };
        field("group", lit(&group));
        field("version", lit(&version));
        field("resource", lit(&row.plural));
        field("singular", lit(&singular));
        field("kind", lit(&kind));
        field("list_kind", lit(&list_kind));
        field("namespaced", s.namespaced.to_string());
        field("verbs", verbs);
        field("short_names", lits(&row.short_names));
        field("categories", lits(&row.categories));
        field("has_status", s.subresources.contains("status").to_string());
        field("scale", scale);
        field("name_rule", format!("NameRule::{}", row.name_rule));
        field("generation", row.generation.to_string());
        field("definition", lit(&definition));
        field("preferred", row.preferred.to_string());
        out.push_str("    },\n");
    }
    out
}
