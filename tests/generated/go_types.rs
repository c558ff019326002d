//! The generator of `src/generated/protobuf_schema.rs`: reads the Go API types of
//! k8s.io/api, k8s.io/apimachinery, k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator
//! (their `types*.go` files: struct fields in declaration order with their `json` and
//! `protobuf` tags, named types and imports) and writes, for every message reachable from a
//! definition of the upstream OpenAPI v2 document, its fields with the facts the protobuf
//! decoder and kube's JSON encoding need: field number, JSON name, value type, cardinality and
//! how Go's `encoding/json` prints the field when it is unset (pointer-ness and `omitempty`).
//!
//! A small reader of Go declarations, not a Go parser: it knows the shapes the API packages
//! use (one field per line, `type X struct { ... }`, `type X <type>`, `type ( ... )` groups)
//! and fails loudly on anything else it meets in a struct it needs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Definitions whose JSON form is not their struct's fields (custom `MarshalJSON`), with the
/// `Shape` variant the table gives them.
const SHAPES: &[(&str, &str)] = &[
    ("io.k8s.api.authentication.v1.ExtraValue", "StringList"),
    ("io.k8s.api.authorization.v1.ExtraValue", "StringList"),
    ("io.k8s.api.certificates.v1.ExtraValue", "StringList"),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        "RawJson",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        "SchemaOrArray",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        "SchemaOrBool",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
        "SchemaOrStringArray",
    ),
    ("io.k8s.apimachinery.pkg.api.resource.Quantity", "Quantity"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Duration", "Duration"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1", "RawJson"),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
        "MicroTime",
    ),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Time", "Time"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Verbs", "StringList"),
    ("io.k8s.apimachinery.pkg.runtime.RawExtension", "RawJson"),
    (
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        "IntOrString",
    ),
];

/// The Go module of each source tree, and the OpenAPI prefix of its packages.
const MODULES: &[(&str, &str)] = &[
    ("k8s.io/api", "api"),
    ("k8s.io/apimachinery", "apimachinery"),
    ("k8s.io/apiextensions-apiserver", "apiextensions-apiserver"),
    ("k8s.io/kube-aggregator", "kube-aggregator"),
];

/// A Go type expression, as written.
#[derive(Clone, Debug)]
enum GoType {
    Ptr(Box<GoType>),
    Slice(Box<GoType>),
    Map(Box<GoType>),
    /// A named type: (package import path, name); builtins have package "".
    Named(String, String),
}

#[derive(Clone, Debug)]
struct GoField {
    /// "" when embedded.
    json: String,
    omitempty: bool,
    inline: bool,
    /// The protobuf field number (0: not in the protobuf message).
    tag: u32,
    ty: GoType,
}

#[derive(Clone, Debug)]
enum Decl {
    Struct(Vec<GoField>),
    /// A struct this reader cannot read, and why (an error only if a table needs it).
    Unreadable(String),
    Alias(GoType),
    /// `type X = Y`: another name of the same type (and definition).
    Same(GoType),
}

/// The declarations of the packages read so far, by (import path, name).
struct Universe {
    src: PathBuf,
    read: BTreeSet<String>,
    decls: HashMap<(String, String), Decl>,
}

fn strip_comment(line: &str) -> &str {
    let mut in_tick = false;
    let b = line.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'`' => in_tick = !in_tick,
            b'/' if !in_tick && b.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// `text` without its `/* ... */` comments (their newlines kept).
fn strip_block_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("*/")
            .map_or(rest.len(), |e| start + e + 2);
        out.extend(rest[start..end].chars().filter(|c| *c == '\n'));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn tag_value<'a>(tags: &'a str, key: &str) -> Option<&'a str> {
    let needle = format!("{key}:\"");
    let start = tags.find(&needle)? + needle.len();
    let end = tags[start..].find('"')? + start;
    Some(&tags[start..end])
}

impl Universe {
    fn new(src: &Path) -> Universe {
        Universe {
            src: src.to_path_buf(),
            read: BTreeSet::new(),
            decls: HashMap::new(),
        }
    }

    fn dir_of(&self, pkg: &str) -> Option<PathBuf> {
        MODULES.iter().find_map(|(module, dir)| {
            let rest = module_rest(pkg, module)?;
            Some(self.src.join(dir).join(rest))
        })
    }

    /// Reads the Go files of package `pkg` once.
    fn load(&mut self, pkg: &str) {
        if !self.read.insert(pkg.to_string()) {
            return;
        }
        let Some(dir) = self.dir_of(pkg) else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                n.ends_with(".go")
                    && !n.ends_with("_test.go")
                    && !n.starts_with("zz_generated")
                    && !n.starts_with("generated.")
                    && !n.contains("swagger_doc")
            })
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            self.parse_file(pkg, &text);
        }
    }

    fn parse_file(&mut self, pkg: &str, text: &str) {
        let text: Vec<&str> = text.lines().map(strip_comment).collect();
        let text = strip_block_comments(&text.join("\n"));
        let mut imports: HashMap<String, String> = HashMap::new();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        let mut in_imports = false;
        let mut in_types = false;
        while i < lines.len() {
            let line = strip_comment(lines[i]).trim();
            i += 1;
            if in_imports {
                if line == ")" {
                    in_imports = false;
                } else if !line.is_empty() {
                    add_import(&mut imports, line);
                }
                continue;
            }
            if line == "import (" {
                in_imports = true;
                continue;
            }
            if let Some(rest) = line.strip_prefix("import ") {
                add_import(&mut imports, rest);
                continue;
            }
            if line == "type (" {
                in_types = true;
                continue;
            }
            if in_types && line == ")" {
                in_types = false;
                continue;
            }
            let decl = if in_types {
                line
            } else if let Some(rest) = line.strip_prefix("type ") {
                rest
            } else {
                continue;
            };
            let mut parts = decl.splitn(2, char::is_whitespace);
            let (Some(name), Some(rest)) = (parts.next(), parts.next()) else {
                continue;
            };
            let rest = rest.trim();
            let same = rest.starts_with('=');
            let rest = rest.trim_start_matches('=').trim();
            if name.contains('[') {
                continue; // generic
            }
            if rest == "struct {" {
                let (fields, next) = parse_struct(&lines, i, &imports, pkg);
                i = next;
                let decl = fields.map_or_else(Decl::Unreadable, Decl::Struct);
                self.decls.insert((pkg.to_string(), name.to_string()), decl);
            } else if rest == "struct{}" {
                self.decls
                    .insert((pkg.to_string(), name.to_string()), Decl::Struct(vec![]));
            } else if !rest.ends_with('{') && !rest.starts_with("interface") {
                if let Some(t) = parse_type(rest, &imports, pkg) {
                    self.decls.insert(
                        (pkg.to_string(), name.to_string()),
                        if same { Decl::Same(t) } else { Decl::Alias(t) },
                    );
                }
            } else {
                // An interface or a function type: skip its body.
                i = skip_block(&lines, i);
            }
        }
    }

    fn decl(&mut self, pkg: &str, name: &str) -> Option<Decl> {
        self.load(pkg);
        self.decls
            .get(&(pkg.to_string(), name.to_string()))
            .cloned()
    }
}

fn add_import(imports: &mut HashMap<String, String>, line: &str) {
    let line = line.trim();
    let (alias, path) = match line.split_once(' ') {
        Some((a, p)) => (Some(a.trim()), p.trim()),
        None => (None, line),
    };
    let path = path.trim_matches('"').to_string();
    let alias = alias
        .map(str::to_string)
        .unwrap_or_else(|| path.rsplit('/').next().unwrap_or("").to_string());
    imports.insert(alias, path);
}

fn skip_block(lines: &[&str], mut i: usize) -> usize {
    let mut depth = 1i32;
    while i < lines.len() && depth > 0 {
        let l = strip_comment(lines[i]);
        depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
        i += 1;
    }
    i
}

/// The fields of the struct whose body starts at line `i`, or why they cannot be read, and
/// the line after the body.
fn parse_struct(
    lines: &[&str],
    mut i: usize,
    imports: &HashMap<String, String>,
    pkg: &str,
) -> (Result<Vec<GoField>, String>, usize) {
    let mut fields = Vec::new();
    let mut problem = None;
    let mut depth = 1;
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if line.starts_with('}') {
            depth -= 1;
            if depth == 0 {
                break;
            }
            continue;
        }
        if line.ends_with('{') {
            depth += 1;
            problem.get_or_insert(format!("a nested struct: {line}"));
            continue;
        }
        if line.is_empty() || depth > 1 {
            continue;
        }
        match parse_field(line, imports, pkg) {
            Ok(Some(f)) => fields.push(f),
            Ok(None) => {}
            Err(e) => {
                problem.get_or_insert(e);
            }
        }
    }
    (problem.map_or(Ok(fields), Err), i)
}

fn parse_field(
    line: &str,
    imports: &HashMap<String, String>,
    pkg: &str,
) -> Result<Option<GoField>, String> {
    let (decl, tags) = match (line.find('`'), line.rfind('`')) {
        (Some(a), Some(b)) if b > a => (line[..a].trim(), &line[a + 1..b]),
        _ => (line, ""),
    };
    let words: Vec<&str> = decl.split_whitespace().collect();
    let (ty, embedded) = match words.as_slice() {
        [t] => (*t, true),
        [n, t] if !n.ends_with(',') => (*t, false),
        _ => return Err(format!("cannot read the field `{line}`")),
    };
    let json = tag_value(tags, "json").unwrap_or("");
    if json == "-" {
        return Ok(None);
    }
    let mut opts = json.split(',');
    let name = opts.next().unwrap_or("").to_string();
    let opts: Vec<&str> = opts.collect();
    let tag = tag_value(tags, "protobuf")
        .and_then(|p| p.split(',').nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let ty =
        parse_type(ty, imports, pkg).ok_or_else(|| format!("cannot read the type of `{line}`"))?;
    Ok(Some(GoField {
        json: name,
        omitempty: opts.contains(&"omitempty"),
        inline: opts.contains(&"inline") || (embedded && json.is_empty()),
        tag,
        ty,
    }))
}

fn parse_type(s: &str, imports: &HashMap<String, String>, pkg: &str) -> Option<GoType> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix('*') {
        return Some(GoType::Ptr(Box::new(parse_type(rest, imports, pkg)?)));
    }
    if let Some(rest) = s.strip_prefix("[]") {
        return Some(GoType::Slice(Box::new(parse_type(rest, imports, pkg)?)));
    }
    if let Some(rest) = s.strip_prefix("map[") {
        let close = rest.find(']')?;
        return Some(GoType::Map(Box::new(parse_type(
            &rest[close + 1..],
            imports,
            pkg,
        )?)));
    }
    if !s
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        || s.is_empty()
    {
        return None;
    }
    match s.split_once('.') {
        Some((alias, name)) => {
            let path = imports.get(alias)?;
            Some(GoType::Named(path.clone(), name.to_string()))
        }
        None if is_builtin(s) => Some(GoType::Named(String::new(), s.to_string())),
        None => Some(GoType::Named(pkg.to_string(), s.to_string())),
    }
}

fn is_builtin(s: &str) -> bool {
    matches!(
        s,
        "string"
            | "bool"
            | "byte"
            | "int"
            | "int8"
            | "int16"
            | "int32"
            | "int64"
            | "uint"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "float32"
            | "float64"
    )
}

/// The path of package `pkg` inside Go module `module`.
fn module_rest<'a>(pkg: &'a str, module: &str) -> Option<&'a str> {
    let rest = pkg.strip_prefix(module)?;
    match rest.strip_prefix('/') {
        Some(r) => Some(r),
        None => rest.is_empty().then_some(rest),
    }
}

/// The OpenAPI definition name of Go type `name` of package `pkg`.
fn def_name(pkg: &str, name: &str) -> Option<String> {
    MODULES.iter().find_map(|(module, dir)| {
        let rest = module_rest(pkg, module)?.replace('/', ".");
        let prefix = format!("io.k8s.{dir}");
        Some(if rest.is_empty() {
            format!("{prefix}.{name}")
        } else {
            format!("{prefix}.{rest}.{name}")
        })
    })
}

/// The Go package and type of an OpenAPI definition name.
fn go_of(def: &str) -> Option<(String, String)> {
    let rest = def.strip_prefix("io.k8s.")?;
    let (dir, rest) = rest.split_once('.')?;
    let module = MODULES.iter().find(|(_, d)| *d == dir)?.0;
    let (path, name) = rest.rsplit_once('.')?;
    Some((
        format!("{module}/{}", path.replace('.', "/")),
        name.to_string(),
    ))
}

/// A field of the table, rendered.
struct Row {
    tag: u32,
    json: String,
    ty: String,
    card: &'static str,
    emit: &'static str,
}

/// What a Go type is at the bottom, after named types.
enum Kind {
    Scalar(&'static str),
    Bytes,
    Msg(String),
    Slice(GoType),
    Map(GoType),
}

fn kind_of(u: &mut Universe, t: &GoType) -> Kind {
    match t {
        GoType::Ptr(inner) => kind_of(u, inner),
        GoType::Slice(inner) => match inner.as_ref() {
            GoType::Named(p, n) if p.is_empty() && n == "byte" => Kind::Bytes,
            _ => Kind::Slice((**inner).clone()),
        },
        GoType::Map(inner) => Kind::Map((**inner).clone()),
        GoType::Named(p, n) if p.is_empty() => Kind::Scalar(match n.as_str() {
            "string" => "Str",
            "bool" => "Bool",
            "int32" | "int" | "int16" | "int8" | "uint16" | "uint8" | "uint32" => "I32",
            "int64" | "uint64" | "uint" => "I64",
            "float64" | "float32" => "F64",
            other => panic!("builtin {other}"),
        }),
        GoType::Named(p, n) => {
            let def = def_name(p, n).unwrap_or_else(|| panic!("no definition for {p}.{n}"));
            if SHAPES.iter().any(|(d, _)| *d == def) {
                return Kind::Msg(def);
            }
            match u.decl(p, n) {
                Some(Decl::Struct(_)) => Kind::Msg(def),
                Some(Decl::Same(inner)) => kind_of(u, &inner),
                // A type defined as a struct type is a definition of its own (with the same
                // fields); as a shape, that shape.
                Some(Decl::Alias(inner)) => match kind_of(u, &inner) {
                    Kind::Msg(d) if !SHAPES.iter().any(|(s, _)| *s == d) => Kind::Msg(def),
                    k => k,
                },
                Some(Decl::Unreadable(why)) => panic!("{p}.{n}: {why}"),
                None => panic!("type {p}.{n} not found"),
            }
        }
    }
}

/// The fields of struct `name` of `pkg`, through `type X Y` and `type X = Y`.
fn struct_fields(u: &mut Universe, pkg: &str, name: &str) -> Option<Vec<GoField>> {
    match u.decl(pkg, name)? {
        Decl::Struct(fields) => Some(fields),
        Decl::Same(GoType::Named(p, n)) | Decl::Alias(GoType::Named(p, n)) => {
            struct_fields(u, &p, &n)
        }
        _ => None,
    }
}

fn is_ptr(t: &GoType) -> bool {
    matches!(t, GoType::Ptr(_))
}

/// The value type of an element (of a slice or map value).
fn elem_ty(u: &mut Universe, t: &GoType, want: &mut BTreeSet<String>) -> String {
    match kind_of(u, t) {
        Kind::Scalar(s) => s.to_string(),
        Kind::Bytes => "Bytes".into(),
        Kind::Msg(def) => {
            want.insert(def.clone());
            format!("Msg({def:?})")
        }
        Kind::Slice(_) | Kind::Map(_) => panic!("nested collection {t:?}"),
    }
}

fn rows(u: &mut Universe, fields: &[GoField], want: &mut BTreeSet<String>) -> Vec<Row> {
    let mut out = Vec::new();
    for f in fields {
        if f.tag == 0 {
            continue; // not in the protobuf message (TypeMeta and the like)
        }
        if f.inline {
            let Kind::Msg(def) = kind_of(u, &f.ty) else {
                panic!("inline {f:?}");
            };
            want.insert(def.clone());
            out.push(Row {
                tag: f.tag,
                json: String::new(),
                ty: format!("Inline({def:?})"),
                card: "One",
                emit: "Omit",
            });
            continue;
        }
        let ptr = is_ptr(&f.ty);
        let (ty, card, emit) = match kind_of(u, &f.ty) {
            Kind::Scalar(s) => {
                let card = if !ptr && f.omitempty { "Zero" } else { "One" };
                let emit = match (ptr, f.omitempty) {
                    (_, true) => "Omit",
                    (true, false) => "Null",
                    (false, false) => "Fill",
                };
                (s.to_string(), card, emit)
            }
            Kind::Bytes if f.omitempty => ("Bytes".into(), "Zero", "Omit"),
            Kind::Bytes => ("Bytes".into(), "One", "Null"),
            Kind::Msg(def) => {
                want.insert(def.clone());
                // A struct is never "empty" to encoding/json: a non-pointer one is always
                // printed. A named slice (a StringList shape) follows the slice rules.
                let slice_like = SHAPES.iter().any(|(d, s)| *d == def && *s == "StringList");
                let emit = match (ptr, slice_like, f.omitempty) {
                    (false, false, _) => "Fill",
                    (_, _, true) => "Omit",
                    (_, _, false) => "Null",
                };
                (format!("Msg({def:?})"), "One", emit)
            }
            Kind::Slice(inner) => (
                elem_ty(u, &inner, want),
                "Rep",
                if f.omitempty { "Omit" } else { "Null" },
            ),
            Kind::Map(inner) => (
                elem_ty(u, &inner, want),
                "Map",
                if f.omitempty { "Omit" } else { "Null" },
            ),
        };
        out.push(Row {
            tag: f.tag,
            json: f.json.clone(),
            ty,
            card,
            emit,
        });
    }
    out
}

/// The generated table: every message reachable from `roots` (OpenAPI definition names).
pub fn schema_table(src: &Path, roots: &[String]) -> String {
    let mut u = Universe::new(src);
    let mut want: BTreeSet<String> = BTreeSet::new();
    let mut done: BTreeMap<String, Option<Vec<Row>>> = BTreeMap::new();
    want.extend(SHAPES.iter().map(|(d, _)| d.to_string()));
    for r in roots {
        if let Some((pkg, name)) = go_of(r) {
            if let Some(fields) = struct_fields(&mut u, &pkg, &name) {
                if fields.is_empty()
                    || fields.iter().any(|f| f.tag != 0)
                    || SHAPES.iter().any(|(d, _)| d == r)
                {
                    want.insert(r.clone());
                }
            }
        }
    }
    while let Some(def) = want.iter().find(|d| !done.contains_key(*d)).cloned() {
        if SHAPES.iter().any(|(d, _)| *d == def) {
            done.insert(def, None);
            continue;
        }
        let (pkg, name) = go_of(&def).unwrap();
        let fields = struct_fields(&mut u, &pkg, &name)
            .unwrap_or_else(|| panic!("{def} is not a readable struct"));
        let r = rows(&mut u, &fields, &mut want);
        done.insert(def, Some(r));
    }
    let mut out = String::new();
    for (def, r) in &done {
        match r {
            None => {
                let shape = SHAPES.iter().find(|(d, _)| d == def).unwrap().1;
                out.push_str(&format!("    s({def:?}, {shape}),\n"));
            }
            Some(rows) if rows.is_empty() => out.push_str(&format!("    o({def:?}, &[]),\n")),
            Some(rows) => {
                out.push_str(&format!("    o({def:?}, &[\n"));
                for r in rows {
                    out.push_str(&format!(
                        "        f({}, {:?}, {}, {}, {}),\n",
                        r.tag, r.json, r.ty, r.card, r.emit
                    ));
                }
                out.push_str("    ]),\n");
            }
        }
    }
    out
}
