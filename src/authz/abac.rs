//! ABAC authorization: kube-apiserver v1.33's `--authorization-mode=ABAC` with
//! `--authorization-policy-file` (kube's `pkg/auth/authorizer/abac` and the
//! `abac.authorization.kubernetes.io` policy types), transcribed as behaviour.
//!
//! The policy file holds one JSON object a line; blank lines and lines starting with `#` are
//! skipped. A line is either an `abac.authorization.kubernetes.io/v1beta1` `Policy`
//! (`{"apiVersion":…,"kind":"Policy","spec":{…}}`) or, when it names no (registered)
//! version, an unversioned v0 policy (`{"user":…,"resource":…}`), which kube converts with
//! v0's defaults: an empty user and group, or `*` for either, mean `system:authenticated`; an
//! empty namespace or resource means `*`; every API group matches; and a v0 policy with
//! neither namespace nor resource also matches every non-resource path.
//! In v1beta1, `*` for the user or the group is likewise turned into the group
//! `system:authenticated`, so anonymous requests (`system:anonymous`, group
//! `system:unauthenticated`) match only policies naming that user or group.
//!
//! A request is allowed when any policy matches it: the subject (user and/or group), the verb
//! (a `readonly` policy matches only `get`, `list` and `watch`), and either the resource
//! attributes (namespace, resource and API group, each exact or `*`; subresources and names
//! are not looked at) for resource requests, or the path (exact, `*`, or a `/prefix*` match)
//! for non-resource ones. Otherwise the authorizer has no opinion.
//!
//! Lines are decoded as kube's decoder does: unknown keys are ignored, object keys are
//! case-sensitive (but `apiVersion`/`kind` are found case-insensitively), `null` leaves a
//! field alone, a repeated key is applied again, and a line naming a missing or unregistered
//! kind or version is retried as v0 (so `{"kind":"Policy","spec":{…}}` is a v0 line that
//! ignores its `spec`). Differences from kube: lines not starting with `{` are rejected (kube
//! would try them as YAML); JSON syntax errors carry serde_json's wording after kube's
//! prefix; "not registered" errors name the scheme by file only.
//!
//! Owns: the policy file's parsing (with kube's line-numbered errors), matching, and
//! `RulesFor` (SelfSubjectRulesReview). Does not know: authentication, the authorizer chain.

use crate::authn::UserInfo;
use crate::authz::{Attributes, Decision, ResourceAttributes};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::path::Path;

/// The API group of the policy types.
const GROUP: &str = "abac.authorization.kubernetes.io";
/// kube's `user.AllAuthenticated`.
const ALL_AUTHENTICATED: &str = "system:authenticated";
/// Go's `bufio.MaxScanTokenSize`: kube reads the file with a default `bufio.Scanner`, which
/// fails on a line that (with its newline) does not fit in 64 KiB.
const MAX_LINE: usize = 64 * 1024;

/// One policy in kube's internal form (`abac.PolicySpec`), after conversion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Spec {
    user: String,
    group: String,
    readonly: bool,
    api_group: String,
    resource: String,
    namespace: String,
    non_resource_path: String,
}

/// The parsed policy file (kube's `abac.PolicyList`), in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyList {
    policies: Vec<Spec>,
    file_name: String,
    unversioned_lines: usize,
}

impl PolicyList {
    /// Parses a policy file's text: one JSON object per line; blank lines and lines starting
    /// with '#' skipped; apiVersion abac.authorization.kubernetes.io/v1beta1 kind Policy (and
    /// unversioned v0 lines as upstream accepts them). Errors name the line like upstream:
    /// `error reading policy file <file>, line <n>: <line>: <reason>`.
    pub fn parse(text: &str, file_name: &str) -> Result<PolicyList, String> {
        let mut list = PolicyList {
            policies: Vec::new(),
            file_name: file_name.to_string(),
            unversioned_lines: 0,
        };
        let mut rest = text;
        let mut number = 0usize;
        while !rest.is_empty() {
            let (raw, next) = match rest.find('\n') {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, ""),
            };
            rest = next;
            number += 1;
            if raw.len() >= MAX_LINE {
                return Err(format!(
                    "error reading policy file {file_name}: bufio.Scanner: token too long"
                ));
            }
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            match decode_line(line) {
                Ok((spec, unversioned)) => {
                    list.policies.push(spec);
                    list.unversioned_lines += usize::from(unversioned);
                }
                Err(e) => {
                    return Err(format!(
                        "error reading policy file {file_name}, line {number}: {line}: {e}"
                    ))
                }
            }
        }
        Ok(list)
    }

    /// Reads and parses the file `--authorization-policy-file` names.
    pub fn load(path: &Path) -> Result<PolicyList, String> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| format!("open {name}: {e}"))?;
        PolicyList::parse(&String::from_utf8_lossy(&bytes), &name)
    }

    /// How many policies the file holds.
    pub fn len(&self) -> usize {
        self.policies.len()
    }

    /// Whether the file held no policies (everything is then left to the next authorizer).
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    /// kube's load-time warning when the file had unversioned (v0) lines, for the caller to
    /// log.
    pub fn unversioned_warning(&self) -> Option<String> {
        (self.unversioned_lines > 0).then(|| {
            format!(
                "Policy file {} contained unversioned rules. See docs/admin/authorization.md#abac-mode for ABAC file format details.",
                self.file_name
            )
        })
    }
}

/// Upstream's Authorize: Allow("") when any policy matches, else NoOpinion("No policy matched.")
pub fn authorize(policies: &PolicyList, user: &UserInfo, attrs: &Attributes<'_>) -> Decision {
    if policies.policies.iter().any(|p| matches(p, user, attrs)) {
        Decision::Allow(String::new())
    } else {
        Decision::NoOpinion("No policy matched.".to_string())
    }
}

/// A resource rule of [`rules_for`] (kube's `DefaultResourceRuleInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
}

/// A non-resource rule of [`rules_for`] (kube's `DefaultNonResourceRuleInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NonResourceRule {
    pub verbs: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

/// Upstream's RulesFor (for SelfSubjectRulesReview): the resource and non-resource rules the
/// user has in a namespace, one of each kind per matching policy, in file order. Every policy
/// whose subject matches and whose namespace is `*` or `namespace` contributes a resource rule
/// when it names a resource and a non-resource rule when it names a path; the verbs are
/// `get, list, watch` for read-only policies and `*` otherwise. The list is never incomplete.
pub fn rules_for(
    policies: &PolicyList,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<ResourceRule>, Vec<NonResourceRule>) {
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for p in &policies.policies {
        if !subject_matches(p, user) || !(p.namespace == "*" || p.namespace == namespace) {
            continue;
        }
        if !p.resource.is_empty() {
            resource_rules.push(ResourceRule {
                verbs: rule_verbs(p.readonly),
                api_groups: vec![p.api_group.clone()],
                resources: vec![p.resource.clone()],
                resource_names: Vec::new(),
            });
        }
        if !p.non_resource_path.is_empty() {
            non_resource_rules.push(NonResourceRule {
                verbs: rule_verbs(p.readonly),
                non_resource_urls: vec![p.non_resource_path.clone()],
            });
        }
    }
    (resource_rules, non_resource_rules)
}

fn rule_verbs(readonly: bool) -> Vec<String> {
    let verbs: &[&str] = if readonly {
        &["get", "list", "watch"]
    } else {
        &["*"]
    };
    verbs.iter().map(|v| v.to_string()).collect()
}

// ---------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------

fn matches(p: &Spec, user: &UserInfo, attrs: &Attributes<'_>) -> bool {
    if !subject_matches(p, user) || !verb_matches(p, attrs) {
        return false;
    }
    // A request is either a resource or a non-resource one, so at most one of these applies.
    match attrs {
        Attributes::Resource(r) => resource_matches(p, r),
        Attributes::NonResource { path, .. } => non_resource_matches(p, path),
    }
}

/// A policy's user, when set, must be `*` or the user's name; its group, when set, must be
/// `*` or one of the user's groups; and at least one of them must be set.
fn subject_matches(p: &Spec, user: &UserInfo) -> bool {
    let mut matched = false;
    if !p.user.is_empty() {
        if p.user != "*" && p.user != user.name {
            return false;
        }
        matched = true;
    }
    if !p.group.is_empty() {
        if p.group != "*" && !user.groups.contains(&p.group) {
            return false;
        }
        matched = true;
    }
    matched
}

/// Read-only requests (kube's `IsReadOnly`: get, list, watch) match every policy; others only
/// policies that are not read-only.
fn verb_matches(p: &Spec, attrs: &Attributes<'_>) -> bool {
    let verb = match attrs {
        Attributes::Resource(r) => r.verb,
        Attributes::NonResource { verb, .. } => verb.as_str(),
    };
    matches!(verb, "get" | "list" | "watch") || !p.readonly
}

fn resource_matches(p: &Spec, r: &ResourceAttributes<'_>) -> bool {
    let namespace = r.namespace.unwrap_or("");
    (p.namespace == "*" || p.namespace == namespace)
        && (p.resource == "*" || p.resource == r.resource)
        && (p.api_group == "*" || p.api_group == r.group)
}

fn non_resource_matches(p: &Spec, path: &str) -> bool {
    let pattern = p.non_resource_path.as_str();
    pattern == "*"
        || pattern == path
        || (pattern.ends_with('*') && path.starts_with(pattern.trim_end_matches('*')))
}

// ---------------------------------------------------------------------------------------
// Decoding one line, as kube's universal decoder and its v0 fallback do
// ---------------------------------------------------------------------------------------

/// The registered policy kinds (each version's `Policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V0,
    V1beta1,
    /// `__internal`: the unconverted internal type, whose JSON keys are its Go field names.
    Internal,
}

impl Version {
    fn layout(self) -> &'static Layout {
        match self {
            Version::V0 => &V0_POLICY,
            Version::V1beta1 => &V1BETA1_POLICY,
            Version::Internal => &INTERNAL_POLICY,
        }
    }

    fn go_package(self) -> &'static str {
        match self {
            Version::V0 => "k8s.io/kubernetes/pkg/apis/abac/v0",
            Version::V1beta1 => "k8s.io/kubernetes/pkg/apis/abac/v1beta1",
            Version::Internal => "k8s.io/kubernetes/pkg/apis/abac",
        }
    }
}

struct Gvk {
    group: String,
    version: String,
    kind: String,
}

impl Gvk {
    fn registered(&self) -> Option<Version> {
        if self.group != GROUP || self.kind != "Policy" {
            return None;
        }
        match self.version.as_str() {
            "v0" => Some(Version::V0),
            "v1beta1" => Some(Version::V1beta1),
            "__internal" => Some(Version::Internal),
            _ => None,
        }
    }

    fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// kube's `runtime.NotRegisteredError` text. (kube names its scheme by the source line that
    /// created it; this names the file only.)
    fn not_registered(&self) -> String {
        const SCHEME: &str = "pkg/apis/abac/register.go";
        if self.version == "__internal" {
            format!(
                "no kind {:?} is registered for the internal version of group {:?} in scheme {SCHEME:?}",
                self.kind, self.group
            )
        } else {
            format!(
                "no kind {:?} is registered for version {:?} in scheme {SCHEME:?}",
                self.kind,
                self.group_version()
            )
        }
    }
}

/// One non-blank line: the internal policy, and whether it was read as unversioned (v0).
fn decode_line(line: &str) -> Result<(Spec, bool), String> {
    // kube hands lines that do not start with `{` to its YAML decoder; only JSON is read here.
    if !line.trim_start().starts_with('{') {
        return Err("a policy line must be a JSON object (YAML lines are not supported)".into());
    }
    let (api_version, kind) = interpret(line)?;
    let (group, version) = parse_group_version(&api_version)?;
    let gvk = Gvk {
        group,
        version,
        kind,
    };
    if !gvk.kind.is_empty() && !gvk.version.is_empty() {
        if let Some(v) = gvk.registered() {
            return Ok((decode_as(line, v)?, false));
        }
    }

    // A missing kind or version, or an unregistered one: kube decodes the line again into a v0
    // Policy, whose group, version and kind fill in only what the line left out.
    let mut gvk = gvk;
    if gvk.kind.is_empty() {
        gvk.kind = "Policy".into();
    }
    if gvk.version.is_empty() && (gvk.group.is_empty() || gvk.group == GROUP) {
        gvk.group = GROUP.into();
        gvk.version = "v0".into();
    }
    if gvk.version.is_empty() {
        return Err(format!("Object 'apiVersion' is missing in '{line}'"));
    }
    match gvk.registered() {
        None => Err(gvk.not_registered()),
        Some(Version::V0) => Ok((decode_as(line, Version::V0)?, true)),
        // e.g. a v1beta1 line without `kind`: decoded as v1beta1, then there is no conversion
        // from it to v0.
        Some(v) => {
            decode_as(line, v)?;
            Err(format!(
                "converting ({}) Policy to ({}) Policy: unknown conversion",
                v.go_package(),
                Version::V0.go_package()
            ))
        }
    }
}

/// kube's `schema.ParseGroupVersion`.
fn parse_group_version(gv: &str) -> Result<(String, String), String> {
    if gv.is_empty() || gv == "/" {
        return Ok((String::new(), String::new()));
    }
    match gv.matches('/').count() {
        0 => Ok((String::new(), gv.to_string())),
        1 => {
            let (g, v) = gv.split_once('/').unwrap_or_default();
            Ok((g.to_string(), v.to_string()))
        }
        _ => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// Converts the decoded fields of a `version` policy to the internal form.
fn convert(version: Version, mut p: Spec) -> Spec {
    match version {
        Version::Internal => p,
        Version::V1beta1 => {
            // In v1beta1, * user or group maps to all authenticated subjects.
            if p.user == "*" || p.group == "*" {
                p.group = ALL_AUTHENTICATED.into();
                p.user.clear();
            }
            p
        }
        Version::V0 => {
            let mut out = Spec {
                user: p.user.clone(),
                group: p.group.clone(),
                readonly: p.readonly,
                api_group: "*".into(),
                resource: p.resource.clone(),
                namespace: p.namespace.clone(),
                non_resource_path: String::new(),
            };
            if p.user.is_empty() && p.group.is_empty() {
                out.group = ALL_AUTHENTICATED.into();
            }
            if p.user == "*" || p.group == "*" {
                out.group = ALL_AUTHENTICATED.into();
                out.user.clear();
            }
            if p.namespace.is_empty() {
                out.namespace = "*".into();
            }
            if p.resource.is_empty() {
                out.resource = "*".into();
            }
            if p.namespace.is_empty() && p.resource.is_empty() {
                out.non_resource_path = "*".into();
            }
            out
        }
    }
}

/// kube's `SimpleMetaFactory.Interpret`: `apiVersion` and `kind`, read with Go's
/// `encoding/json` (keys matched case-insensitively, `null` leaves a field alone, a syntax
/// error anywhere wins over a type error).
fn interpret(line: &str) -> Result<(String, String), String> {
    let prefix = "couldn't get version/kind; json parse error: ";
    let mut de = serde_json::Deserializer::from_str(line);
    let parsed = de
        .deserialize_any(MetaVisitor)
        .and_then(|m| de.end().map(|()| m));
    match parsed {
        Err(e) => Err(format!("{prefix}{e}")),
        Ok(m) => match m.error {
            Some(e) => Err(format!("{prefix}{e}")),
            None => Ok((m.api_version, m.kind)),
        },
    }
}

/// Decodes the line into `version`'s Go struct the way kube's case-sensitive JSON decoder
/// does (unknown keys ignored, `null` a no-op, repeated keys applied in order, the first type
/// error reported), then converts it.
fn decode_as(line: &str, version: Version) -> Result<Spec, String> {
    let mut raw = Spec::default();
    let mut error = None;
    let mut stack = Vec::new();
    let mut de = serde_json::Deserializer::from_str(line);
    let walk = Walk {
        layout: version.layout(),
        stack: &mut stack,
        out: &mut raw,
        error: &mut error,
    };
    de.deserialize_any(walk)
        .and_then(|()| de.end())
        .map_err(|e| e.to_string())?;
    match error {
        Some(e) => Err(e),
        None => Ok(convert(version, raw)),
    }
}

/// Where a JSON key of a policy struct goes.
#[derive(Clone, Copy)]
enum Slot {
    User,
    Group,
    Readonly,
    ApiGroup,
    Resource,
    Namespace,
    NonResourcePath,
}

enum Field {
    Scalar(Slot),
    Struct(&'static Layout),
}

/// A Go struct as the JSON decoder sees it: its name (for error messages), its qualified type
/// name (when it is a field's type), and its JSON keys. `apiVersion` and `kind` are left out:
/// [`interpret`] has already checked them.
struct Layout {
    name: &'static str,
    go_type: &'static str,
    fields: &'static [(&'static str, Field)],
}

static V0_POLICY: Layout = Layout {
    name: "Policy",
    go_type: "v0.Policy",
    fields: &[
        ("user", Field::Scalar(Slot::User)),
        ("group", Field::Scalar(Slot::Group)),
        ("readonly", Field::Scalar(Slot::Readonly)),
        ("resource", Field::Scalar(Slot::Resource)),
        ("namespace", Field::Scalar(Slot::Namespace)),
    ],
};

static V1BETA1_SPEC: Layout = Layout {
    name: "PolicySpec",
    go_type: "v1beta1.PolicySpec",
    fields: &[
        ("user", Field::Scalar(Slot::User)),
        ("group", Field::Scalar(Slot::Group)),
        ("readonly", Field::Scalar(Slot::Readonly)),
        ("apiGroup", Field::Scalar(Slot::ApiGroup)),
        ("resource", Field::Scalar(Slot::Resource)),
        ("namespace", Field::Scalar(Slot::Namespace)),
        ("nonResourcePath", Field::Scalar(Slot::NonResourcePath)),
    ],
};

static V1BETA1_POLICY: Layout = Layout {
    name: "Policy",
    go_type: "v1beta1.Policy",
    fields: &[("spec", Field::Struct(&V1BETA1_SPEC))],
};

static INTERNAL_SPEC: Layout = Layout {
    name: "PolicySpec",
    go_type: "abac.PolicySpec",
    fields: &[
        ("User", Field::Scalar(Slot::User)),
        ("Group", Field::Scalar(Slot::Group)),
        ("Readonly", Field::Scalar(Slot::Readonly)),
        ("APIGroup", Field::Scalar(Slot::ApiGroup)),
        ("Resource", Field::Scalar(Slot::Resource)),
        ("Namespace", Field::Scalar(Slot::Namespace)),
        ("NonResourcePath", Field::Scalar(Slot::NonResourcePath)),
    ],
};

static INTERNAL_POLICY: Layout = Layout {
    name: "Policy",
    go_type: "abac.Policy",
    fields: &[("Spec", Field::Struct(&INTERNAL_SPEC))],
};

/// Go's `UnmarshalTypeError` text for a struct field.
fn type_error(value: &str, strukt: &str, stack: &[&str], go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {value} into Go struct field {strukt}.{} of type {go_type}",
        stack.join(".")
    )
}

/// A JSON value as far as a string or bool field cares.
enum Scalar {
    Str(String),
    Bool(bool),
    Null,
    /// `number`, `array` or `object` (Go's words).
    Other(&'static str),
}

impl Scalar {
    fn go_kind(&self) -> &'static str {
        match self {
            Scalar::Str(_) => "string",
            Scalar::Bool(_) => "bool",
            Scalar::Null => "null",
            Scalar::Other(k) => k,
        }
    }
}

impl<'de> de::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Scalar, E> {
        Ok(Scalar::Other("number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Scalar, E> {
        Ok(Scalar::Other("number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Scalar, E> {
        Ok(Scalar::Other("number"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Str(v))
    }

    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }

    fn visit_none<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("object"))
    }
}

/// Go's `encoding/json` key folding (Go 1.21+): ASCII case, plus the non-ASCII letters that
/// fold onto ASCII ones (dotted/dotless i, long s, Kelvin sign).
fn go_fold_eq(key: &str, name: &str) -> bool {
    fn fold(c: char) -> char {
        match c {
            '\u{130}' | '\u{131}' => 'I',
            '\u{17F}' => 'S',
            '\u{212A}' => 'K',
            c => c.to_ascii_uppercase(),
        }
    }
    key.chars().map(fold).eq(name.chars().map(fold))
}

#[derive(Default)]
struct Meta {
    api_version: String,
    kind: String,
    error: Option<String>,
}

struct MetaVisitor;

impl<'de> Visitor<'de> for MetaVisitor {
    type Value = Meta;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Meta, A::Error> {
        let mut meta = Meta::default();
        while let Some(key) = map.next_key::<String>()? {
            let (slot, name) = if go_fold_eq(&key, "apiVersion") {
                (&mut meta.api_version, "apiVersion")
            } else if go_fold_eq(&key, "kind") {
                (&mut meta.kind, "kind")
            } else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            match map.next_value::<Scalar>()? {
                Scalar::Str(s) => *slot = s,
                Scalar::Null => {}
                other => {
                    if meta.error.is_none() {
                        // The target is an anonymous struct, so Go names no struct.
                        meta.error = Some(type_error(other.go_kind(), "", &[name], "string"));
                    }
                }
            }
        }
        Ok(meta)
    }
}

/// Decodes a JSON object into the struct `layout` describes.
struct Walk<'a> {
    layout: &'static Layout,
    stack: &'a mut Vec<&'static str>,
    out: &'a mut Spec,
    error: &'a mut Option<String>,
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Walk {
            layout,
            stack,
            out,
            error,
        } = self;
        while let Some(key) = map.next_key::<String>()? {
            let Some((name, field)) = layout.fields.iter().find(|(name, _)| *name == key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            stack.push(name);
            match field {
                Field::Scalar(slot) => {
                    let value = map.next_value::<Scalar>()?;
                    store(*slot, value, layout.name, stack, out, error);
                }
                Field::Struct(inner) => map.next_value_seed(StructSeed {
                    layout: inner,
                    parent: layout.name,
                    stack: &mut *stack,
                    out: &mut *out,
                    error: &mut *error,
                })?,
            }
            stack.pop();
        }
        Ok(())
    }
}

fn store(
    slot: Slot,
    value: Scalar,
    strukt: &str,
    stack: &[&str],
    out: &mut Spec,
    error: &mut Option<String>,
) {
    let target = match slot {
        Slot::User => &mut out.user,
        Slot::Group => &mut out.group,
        Slot::ApiGroup => &mut out.api_group,
        Slot::Resource => &mut out.resource,
        Slot::Namespace => &mut out.namespace,
        Slot::NonResourcePath => &mut out.non_resource_path,
        Slot::Readonly => {
            match value {
                Scalar::Bool(b) => out.readonly = b,
                Scalar::Null => {}
                other => {
                    if error.is_none() {
                        *error = Some(type_error(other.go_kind(), strukt, stack, "bool"));
                    }
                }
            }
            return;
        }
    };
    match value {
        Scalar::Str(s) => *target = s,
        Scalar::Null => {}
        other => {
            if error.is_none() {
                *error = Some(type_error(other.go_kind(), strukt, stack, "string"));
            }
        }
    }
}

/// A field whose value is a nested struct (`spec`): an object is decoded into it (merging with
/// what an earlier repeat of the key set), `null` leaves it alone, anything else is a type
/// error.
struct StructSeed<'a> {
    layout: &'static Layout,
    parent: &'static str,
    stack: &'a mut Vec<&'static str>,
    out: &'a mut Spec,
    error: &'a mut Option<String>,
}

impl StructSeed<'_> {
    fn mismatch(self, kind: &str) {
        if self.error.is_none() {
            *self.error = Some(type_error(
                kind,
                self.parent,
                self.stack,
                self.layout.go_type,
            ));
        }
    }
}

impl<'de> DeserializeSeed<'de> for StructSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StructSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        Walk {
            layout: self.layout,
            stack: self.stack,
            out: self.out,
            error: self.error,
        }
        .visit_map(map)
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        self.mismatch("bool");
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        self.mismatch("number");
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        self.mismatch("number");
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        self.mismatch("number");
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        self.mismatch("string");
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        self.mismatch("array");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An example policy file in the upstream example's spirit: v1beta1 lines, comments, blank
    /// lines, and unversioned (v0) lines.
    const EXAMPLE: &str = r#"# Rafter's example ABAC policy file: one JSON object a line.

{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"root","namespace":"*","resource":"*","apiGroup":"*","nonResourcePath":"*"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"*","readonly":true,"nonResourcePath":"/version"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"system:unauthenticated","readonly":true,"nonResourcePath":"/healthz"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"sched","readonly":true,"namespace":"*","resource":"pods"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"sched","namespace":"*","resource":"bindings"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"ops","namespace":"*","resource":"deployments","apiGroup":"apps"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"carol","namespace":"team-a","resource":"*","apiGroup":"*"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"dave","readonly":true,"namespace":"team-a","resource":"*","apiGroup":"*"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"erin","nonResourcePath":"/logs/*"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"nodeadm","resource":"nodes"}}
    # an indented comment, then legacy lines
{"user":"legacy-admin"}
{"user":"legacy-reader",  "readonly": true, "namespace": "team-b"}
{"group":"auditors", "readonly": true, "resource": "events"}
{"readonly": true, "resource": "configmaps", "namespace": "shared"}"#;

    const V1: &str = r#""apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy""#;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.to_string(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    fn authed(name: &str) -> UserInfo {
        user(name, &[ALL_AUTHENTICATED])
    }

    fn anonymous() -> UserInfo {
        user("system:anonymous", &["system:unauthenticated"])
    }

    /// The one place the tests build resource attributes (an empty namespace: none).
    fn attrs<'a>(
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        subresource: Option<&'a str>,
        ns: &'a str,
        name: Option<&'a str>,
    ) -> Attributes<'a> {
        crate::authz::test_resource(
            verb,
            group,
            resource,
            subresource,
            (!ns.is_empty()).then_some(ns),
            name,
        )
    }

    fn res<'a>(verb: &'a str, group: &'a str, resource: &'a str, ns: &'a str) -> Attributes<'a> {
        attrs(verb, group, resource, None, ns, None)
    }

    fn path<'a>(verb: &str, p: &'a str) -> Attributes<'a> {
        Attributes::NonResource {
            path: p,
            verb: verb.to_string(),
        }
    }

    fn allowed(pl: &PolicyList, u: &UserInfo, a: &Attributes<'_>) -> bool {
        match authorize(pl, u, a) {
            Decision::Allow(reason) => {
                assert_eq!(reason, "");
                true
            }
            Decision::NoOpinion(reason) => {
                assert_eq!(reason, "No policy matched.");
                false
            }
            Decision::Deny(r) => panic!("ABAC never denies: {r}"),
        }
    }

    fn parse(text: &str) -> PolicyList {
        PolicyList::parse(text, "policy.jsonl").unwrap()
    }

    fn one(line: &str) -> Spec {
        let pl = parse(line);
        assert_eq!(pl.len(), 1, "{line}");
        pl.policies[0].clone()
    }

    fn err(text: &str) -> String {
        PolicyList::parse(text, "policy.jsonl").unwrap_err()
    }

    fn spec(
        user: &str,
        group: &str,
        readonly: bool,
        api: &str,
        res: &str,
        ns: &str,
        nrp: &str,
    ) -> Spec {
        Spec {
            user: user.into(),
            group: group.into(),
            readonly,
            api_group: api.into(),
            resource: res.into(),
            namespace: ns.into(),
            non_resource_path: nrp.into(),
        }
    }

    #[test]
    fn policy_list_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<PolicyList>();
    }

    #[test]
    fn empty_and_comment_only_files() {
        for text in ["", "\n", "\n\n  \n", "# only\n\t# comments\r\n", "   \t  "] {
            let pl = parse(text);
            assert!(pl.is_empty());
            assert_eq!(pl.unversioned_warning(), None);
            assert!(!allowed(&pl, &authed("x"), &path("get", "/")));
        }
    }

    #[test]
    fn example_file_parses() {
        let pl = parse(EXAMPLE);
        assert_eq!(pl.len(), 14);
        assert_eq!(
            pl.unversioned_warning().unwrap(),
            "Policy file policy.jsonl contained unversioned rules. See docs/admin/authorization.md#abac-mode for ABAC file format details."
        );
        // v1beta1 `*` user becomes the authenticated group.
        assert_eq!(
            pl.policies[1],
            spec("", ALL_AUTHENTICATED, true, "", "", "", "/version")
        );
        // v1beta1 fields are taken as written: no defaults.
        assert_eq!(pl.policies[3], spec("sched", "", true, "", "pods", "*", ""));
        assert_eq!(
            pl.policies[9],
            spec("nodeadm", "", false, "", "nodes", "", "")
        );
        // v0 lines get v0's defaults.
        assert_eq!(
            pl.policies[10],
            spec("legacy-admin", "", false, "*", "*", "*", "*")
        );
        assert_eq!(
            pl.policies[11],
            spec("legacy-reader", "", true, "*", "*", "team-b", "")
        );
        assert_eq!(
            pl.policies[12],
            spec("", "auditors", true, "*", "events", "*", "")
        );
        assert_eq!(
            pl.policies[13],
            spec("", ALL_AUTHENTICATED, true, "*", "configmaps", "shared", "")
        );
    }

    #[test]
    fn crlf_and_no_trailing_newline() {
        let text = format!("{{{V1},\"spec\":{{\"user\":\"a\"}}}}\r\n\r\n{{\"user\":\"b\"}}");
        let pl = parse(&text);
        assert_eq!(pl.len(), 2);
        assert_eq!(pl.policies[0].user, "a");
        assert_eq!(pl.policies[1].user, "b");
    }

    #[test]
    fn v0_conversion() {
        let all = ALL_AUTHENTICATED;
        let cases = [
            // An empty v0 policy allows everything to every authenticated user.
            (r#"{}"#, spec("", all, false, "*", "*", "*", "*")),
            (
                r#"{"user":"bob"}"#,
                spec("bob", "", false, "*", "*", "*", "*"),
            ),
            (
                r#"{"group":"devs"}"#,
                spec("", "devs", false, "*", "*", "*", "*"),
            ),
            (
                r#"{"user":"bob","group":"devs"}"#,
                spec("bob", "devs", false, "*", "*", "*", "*"),
            ),
            (r#"{"user":"*"}"#, spec("", all, false, "*", "*", "*", "*")),
            (r#"{"group":"*"}"#, spec("", all, false, "*", "*", "*", "*")),
            // `*` on either side wins over a named user.
            (
                r#"{"user":"bob","group":"*"}"#,
                spec("", all, false, "*", "*", "*", "*"),
            ),
            // Naming a namespace or a resource drops the non-resource match.
            (
                r#"{"namespace":"ns"}"#,
                spec("", all, false, "*", "*", "ns", ""),
            ),
            (
                r#"{"resource":"pods"}"#,
                spec("", all, false, "*", "pods", "*", ""),
            ),
            (
                r#"{"namespace":"ns","resource":"pods","readonly":true}"#,
                spec("", all, true, "*", "pods", "ns", ""),
            ),
            // v0 has no apiGroup or nonResourcePath fields: they are ignored.
            (
                r#"{"user":"u","resource":"pods","apiGroup":"apps","nonResourcePath":"/x"}"#,
                spec("u", "", false, "*", "pods", "*", ""),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(one(line), want, "{line}");
        }
    }

    #[test]
    fn v1beta1_conversion() {
        let all = ALL_AUTHENTICATED;
        let cases = [
            (r#""spec":{}"#, spec("", "", false, "", "", "", "")),
            (
                r#""spec":{"user":"bob"}"#,
                spec("bob", "", false, "", "", "", ""),
            ),
            (
                r#""spec":{"group":"devs"}"#,
                spec("", "devs", false, "", "", "", ""),
            ),
            (
                r#""spec":{"user":"*"}"#,
                spec("", all, false, "", "", "", ""),
            ),
            (
                r#""spec":{"group":"*"}"#,
                spec("", all, false, "", "", "", ""),
            ),
            (
                r#""spec":{"user":"*","group":"devs"}"#,
                spec("", all, false, "", "", "", ""),
            ),
            (
                r#""spec":{"user":"bob","group":"*"}"#,
                spec("", all, false, "", "", "", ""),
            ),
            (
                r#""spec":{"user":"u","readonly":true,"apiGroup":"apps","resource":"deployments","namespace":"n","nonResourcePath":"/p"}"#,
                spec("u", "", true, "apps", "deployments", "n", "/p"),
            ),
        ];
        for (fields, want) in cases {
            let line = format!("{{{V1},{fields}}}");
            let pl = parse(&line);
            assert_eq!(pl.policies, vec![want], "{line}");
            assert_eq!(pl.unversioned_warning(), None);
        }
    }

    #[test]
    fn authorize_example_matrix() {
        let pl = parse(EXAMPLE);
        let root = authed("root");
        let sched = authed("sched");
        let carol = authed("carol");
        let dave = authed("dave");
        let erin = authed("erin");
        let ops = user("olga", &["ops", ALL_AUTHENTICATED]);
        let nobody = authed("nobody");
        let anon = anonymous();
        let legacy = authed("legacy-admin");
        let reader = authed("legacy-reader");
        let auditor = user("al", &["auditors"]);
        let nodeadm = authed("nodeadm");

        let cases: Vec<(&UserInfo, Attributes, bool)> = vec![
            // root: everything, resource or not.
            (&root, res("delete", "apps", "deployments", "x"), true),
            (&root, res("create", "", "namespaces", ""), true),
            (&root, path("post", "/anything"), true),
            // Anyone authenticated may read /version, but not write it; anonymous may not.
            (&nobody, path("get", "/version"), true),
            (&nobody, path("post", "/version"), false),
            (&anon, path("get", "/version"), false),
            (&nobody, path("get", "/version/extra"), false),
            // Anonymous may read /healthz via its group.
            (&anon, path("get", "/healthz"), true),
            (&anon, path("put", "/healthz"), false),
            (&nobody, path("get", "/healthz"), false),
            // sched: reads pods (core group only) anywhere, writes bindings.
            (&sched, res("list", "", "pods", "ns1"), true),
            (&sched, res("watch", "", "pods", ""), true),
            (&sched, res("get", "", "pods", "ns1"), true),
            (&sched, res("create", "", "pods", "ns1"), false),
            (&sched, res("delete", "", "pods", ""), false),
            (&sched, res("get", "metrics.k8s.io", "pods", "ns1"), false),
            (&sched, res("create", "", "bindings", "ns1"), true),
            (&sched, res("get", "", "services", "ns1"), false),
            (&sched, path("get", "/api"), false),
            // ops group: deployments in apps only.
            (&ops, res("patch", "apps", "deployments", "prod"), true),
            (
                &ops,
                res("patch", "extensions", "deployments", "prod"),
                false,
            ),
            (&ops, res("patch", "apps", "statefulsets", "prod"), false),
            // carol: anything in team-a, nothing elsewhere, no cluster-scoped requests.
            (&carol, res("create", "", "secrets", "team-a"), true),
            (
                &carol,
                res("update", "widgets.io", "widgets", "team-a"),
                true,
            ),
            (&carol, res("get", "", "pods", "team-b"), false),
            (&carol, res("list", "", "pods", ""), false),
            (&carol, path("get", "/api"), false),
            // dave: read-only in team-a.
            (&dave, res("get", "", "pods", "team-a"), true),
            (&dave, res("watch", "apps", "deployments", "team-a"), true),
            (&dave, res("update", "", "pods", "team-a"), false),
            (&dave, res("deletecollection", "", "pods", "team-a"), false),
            // erin: /logs/ and below, any verb.
            (&erin, path("get", "/logs/"), true),
            (&erin, path("delete", "/logs/kube/a.log"), true),
            (&erin, path("get", "/logs"), false),
            (&erin, path("get", "/logsx"), false),
            (&erin, res("get", "", "logs", ""), false),
            // nodeadm: an unset namespace matches only requests without one.
            (&nodeadm, res("delete", "", "nodes", ""), true),
            (&nodeadm, res("get", "", "nodes", "default"), false),
            // legacy v0 admin: every resource in every group and namespace, every path.
            (
                &legacy,
                res("delete", "rbac.authorization.k8s.io", "clusterroles", ""),
                true,
            ),
            (&legacy, res("create", "", "pods", "kube-system"), true),
            (&legacy, path("post", "/logs/x"), true),
            // legacy reader: reads anything in team-b, no paths.
            (&reader, res("get", "apps", "deployments", "team-b"), true),
            (&reader, res("create", "", "pods", "team-b"), false),
            (&reader, res("get", "", "pods", "team-a"), false),
            (&reader, path("get", "/version"), true), // via the `*` user policy
            (&reader, path("get", "/api"), false),
            // auditors (no system:authenticated group): read events anywhere, any group.
            (&auditor, res("list", "events.k8s.io", "events", "x"), true),
            (&auditor, res("list", "", "events", ""), true),
            (&auditor, res("create", "", "events", "x"), false),
            (&auditor, path("get", "/version"), false),
            // every authenticated user reads configmaps in `shared` (a v0 line without a user).
            (&nobody, res("get", "", "configmaps", "shared"), true),
            (&nobody, res("update", "", "configmaps", "shared"), false),
            (&nobody, res("get", "", "configmaps", "other"), false),
            (&anon, res("get", "", "configmaps", "shared"), false),
            (&nobody, res("get", "", "secrets", "shared"), false),
        ];
        for (i, (u, a, want)) in cases.iter().enumerate() {
            assert_eq!(allowed(&pl, u, a), *want, "case {i} ({})", u.name);
        }
    }

    #[test]
    fn subjects() {
        // (policy line, user, matches)
        let v1 = |s: &str| format!("{{{V1},\"spec\":{{{s},\"nonResourcePath\":\"*\"}}}}");
        let v0 = |s: &str| format!("{{{s}}}");
        let foo = user("Foo", &["A", "B", "C", ALL_AUTHENTICATED]);
        let cases: Vec<(String, UserInfo, bool)> = vec![
            // v0: unset or `*` subjects mean every authenticated user, never anonymous.
            (v0(r#""user":"""#), anonymous(), false),
            (v0(r#""user":"*""#), anonymous(), false),
            (v0(r#""group":"*""#), anonymous(), false),
            (v0(r#""user":"""#), foo.clone(), true),
            (v0(r#""user":"*""#), foo.clone(), true),
            (v0(r#""user":"Foo""#), user("Foo", &[]), true),
            (v0(r#""user":"Foo""#), authed("foo"), false),
            (v0(r#""user":"Foo""#), authed("FooBar"), false),
            (v0(r#""group":"B""#), foo.clone(), true),
            (v0(r#""group":"b""#), foo.clone(), false),
            (v0(r#""group":"BB""#), foo.clone(), false),
            (v0(r#""user":"Foo","group":"B""#), foo.clone(), true),
            (v0(r#""user":"Foo","group":"D""#), foo.clone(), false),
            (v0(r#""user":"Bar","group":"B""#), foo.clone(), false),
            // v1beta1: an empty subject matches nobody; `*` means authenticated users.
            (v1(r#""user":"""#), foo.clone(), false),
            (v1(r#""user":"""#), anonymous(), false),
            (v1(r#""user":"*""#), anonymous(), false),
            (v1(r#""group":"*""#), anonymous(), false),
            (v1(r#""user":"*""#), foo.clone(), true),
            (v1(r#""group":"*""#), foo.clone(), true),
            // A user without the authenticated group is not matched by `*`.
            (v1(r#""user":"*""#), user("Foo", &["A"]), false),
            // `*` group drops the user: any authenticated user matches.
            (v1(r#""user":"Bar","group":"*""#), foo.clone(), true),
            (v1(r#""user":"Foo""#), foo.clone(), true),
            (v1(r#""user":"Foo","group":"B""#), foo.clone(), true),
            (v1(r#""user":"Foo","group":"D""#), foo.clone(), false),
            (v1(r#""user":"Bar","group":"B""#), foo.clone(), false),
            (v1(r#""group":"system:unauthenticated""#), anonymous(), true),
            (v1(r#""user":"system:anonymous""#), anonymous(), true),
        ];
        for (line, u, want) in cases {
            let pl = parse(&line);
            assert_eq!(
                allowed(&pl, &u, &path("get", "/x")),
                want,
                "{line} for {u:?}"
            );
        }
    }

    #[test]
    fn read_only_verbs() {
        let pl = parse(&format!(
            "{{{V1},\"spec\":{{\"user\":\"r\",\"readonly\":true,\"namespace\":\"*\",\"resource\":\"*\",\"apiGroup\":\"*\",\"nonResourcePath\":\"*\"}}}}"
        ));
        let r = authed("r");
        for verb in ["get", "list", "watch"] {
            assert!(allowed(&pl, &r, &res(verb, "", "pods", "n")), "{verb}");
            assert!(allowed(&pl, &r, &path(verb, "/p")), "{verb}");
        }
        for verb in [
            "create",
            "update",
            "patch",
            "delete",
            "deletecollection",
            "proxy",
            "impersonate",
            "bind",
            "escalate",
            "approve",
            "use",
            "post",
            "put",
            "head",
            "GET",
        ] {
            assert!(!allowed(&pl, &r, &res(verb, "", "pods", "n")), "{verb}");
            assert!(!allowed(&pl, &r, &path(verb, "/p")), "{verb}");
        }
    }

    #[test]
    fn subresources_and_names_are_not_looked_at() {
        let pl = parse(&format!(
            "{{{V1},\"spec\":{{\"user\":\"s\",\"readonly\":true,\"namespace\":\"*\",\"resource\":\"pods\"}}}}"
        ));
        let s = authed("s");
        let log = attrs("get", "", "pods", Some("log"), "n", Some("p1"));
        assert!(allowed(&pl, &s, &log));
        let exec = attrs("create", "", "pods", Some("exec"), "n", Some("p1"));
        assert!(!allowed(&pl, &s, &exec));
    }

    #[test]
    fn resource_and_non_resource_are_exclusive() {
        let u = authed("u");
        // A policy with every resource field `*` but no path matches no path.
        let resources = parse(&format!(
            "{{{V1},\"spec\":{{\"user\":\"u\",\"namespace\":\"*\",\"resource\":\"*\",\"apiGroup\":\"*\"}}}}"
        ));
        assert!(allowed(&resources, &u, &res("get", "x", "y", "")));
        assert!(!allowed(&resources, &u, &path("get", "/")));
        // A path-only policy matches no resource request.
        let paths = parse(&format!(
            "{{{V1},\"spec\":{{\"user\":\"u\",\"nonResourcePath\":\"*\"}}}}"
        ));
        assert!(allowed(&paths, &u, &path("get", "/")));
        assert!(allowed(&paths, &u, &path("get", "")));
        assert!(!allowed(&paths, &u, &res("get", "", "pods", "")));
        assert!(!allowed(&paths, &u, &res("get", "", "pods", "n")));
    }

    #[test]
    fn non_resource_path_patterns() {
        let u = authed("u");
        let cases = [
            ("*", "/anything/at/all", true),
            ("/api", "/api", true),
            ("/api", "/api/", false),
            ("/api", "/api2", false),
            ("/api/*", "/api/v1", true),
            ("/api/*", "/api/", true),
            ("/api/*", "/api", false),
            ("/api/*", "/api2/foo", false),
            // The trailing `*` is a plain prefix match, and several stars count as one.
            ("/foo*", "/foobar", true),
            ("/foo**", "/foo/x", true),
            ("**", "/x", true),
            // Only a trailing star is special.
            ("/a/*/b", "/a/x/b", false),
            ("/a/*/b", "/a/*/b", true),
        ];
        for (pattern, p, want) in cases {
            let pl = parse(&format!(
                "{{{V1},\"spec\":{{\"user\":\"u\",\"nonResourcePath\":{pattern:?}}}}}"
            ));
            assert_eq!(allowed(&pl, &u, &path("get", p)), want, "{pattern} vs {p}");
        }
    }

    #[test]
    fn api_group_and_namespace_matching() {
        let pl = parse(&format!(
            "{{{V1},\"spec\":{{\"user\":\"g\",\"resource\":\"*\",\"namespace\":\"any\",\"apiGroup\":\"*\"}}}}\n\
             {{{V1},\"spec\":{{\"user\":\"g\",\"resource\":\"*\",\"namespace\":\"core\",\"apiGroup\":\"\"}}}}\n\
             {{{V1},\"spec\":{{\"user\":\"g\",\"resource\":\"*\",\"namespace\":\"x\",\"apiGroup\":\"x\"}}}}\n"
        ));
        let g = authed("g");
        assert!(allowed(&pl, &g, &res("get", "x", "foo", "any")));
        assert!(allowed(&pl, &g, &res("get", "", "foo", "any")));
        assert!(!allowed(&pl, &g, &res("get", "x", "foo", "core")));
        assert!(allowed(&pl, &g, &res("get", "", "foo", "core")));
        assert!(allowed(&pl, &g, &res("get", "x", "foo", "x")));
        assert!(!allowed(&pl, &g, &res("get", "y", "foo", "x")));
        assert!(!allowed(&pl, &g, &res("get", "x", "foo", "")));
    }

    #[test]
    fn decoding_follows_kube_json() {
        // Unknown keys are ignored, also in spec.
        let s = one(&format!("{{{V1},\"metadata\":{{\"n\":[1,2.5e400]}},\"spec\":{{\"user\":\"u\",\"verbs\":[\"get\"]}}}}"));
        assert_eq!(s.user, "u");
        // A repeated key: the last one wins; a repeated spec merges into the first.
        let s = one(&format!(
            "{{{V1},\"spec\":{{\"user\":\"a\",\"user\":\"b\",\"resource\":\"pods\"}},\"spec\":{{\"group\":\"g\"}}}}"
        ));
        assert_eq!(s, spec("b", "g", false, "", "pods", "", ""));
        // null leaves a field (or the whole spec) alone.
        let s = one(&format!(
            "{{{V1},\"spec\":{{\"user\":\"a\",\"user\":null,\"readonly\":null}},\"spec\":null}}"
        ));
        assert_eq!(s, spec("a", "", false, "", "", "", ""));
        // Object keys are case-sensitive: `User` is not `user`, so this v0 line has no user
        // and applies to every authenticated user.
        let s = one(r#"{"User":"alice"}"#);
        assert_eq!(s, spec("", ALL_AUTHENTICATED, false, "*", "*", "*", "*"));
        // … but apiVersion and kind are found case-insensitively, as Go's encoding/json does.
        let s = one(
            r#"{"APIVERSION":"abac.authorization.kubernetes.io/v1beta1","Kind":"Policy","spec":{"user":"k"}}"#,
        );
        assert_eq!(s, spec("k", "", false, "", "", "", ""));
        let s = one("{\"apiVersıon\":\"abac.authorization.kubernetes.io/v1beta1\",\"\u{212A}ind\":\"Policy\",\"spec\":{\"user\":\"k\"}}");
        assert_eq!(s.user, "k");
        // JSON escapes are decoded.
        assert_eq!(one(r#"{"user":"\u0061lice"}"#).user, "alice");
        // Whitespace around the object is fine.
        assert_eq!(one("  \t{\"user\":\"w\"}  ").user, "w");
    }

    #[test]
    fn versions_and_the_v0_fallback() {
        // An explicit v0 apiVersion is read as v0 (and is not "unversioned").
        let pl = parse(
            r#"{"apiVersion":"abac.authorization.kubernetes.io/v0","kind":"Policy","user":"z"}"#,
        );
        assert_eq!(pl.policies[0], spec("z", "", false, "*", "*", "*", "*"));
        assert_eq!(pl.unversioned_warning(), None);
        // A v0 apiVersion without kind, and a kind without apiVersion, fall back to v0: a
        // v1beta1-shaped spec is then ignored and the line allows everything.
        for line in [
            r#"{"apiVersion":"abac.authorization.kubernetes.io/v0","user":"z"}"#,
            r#"{"kind":"Policy","spec":{"user":"z","resource":"pods"}}"#,
            r#"{"apiVersion":"abac.authorization.kubernetes.io/","spec":{"user":"z"}}"#,
            r#"{"apiVersion":"/","kind":"Policy"}"#,
        ] {
            let pl = parse(line);
            assert!(pl.unversioned_warning().is_some(), "{line}");
            assert_eq!(pl.policies[0].non_resource_path, "*", "{line}");
            assert_eq!(pl.policies[0].resource, "*", "{line}");
        }
        // kube's internal version is accepted too, keyed by Go field names and unconverted: its
        // `*` user matches every user, anonymous included.
        let pl = parse(
            r#"{"apiVersion":"abac.authorization.kubernetes.io/__internal","kind":"Policy","Spec":{"User":"*","Readonly":true,"NonResourcePath":"/open"}}"#,
        );
        assert_eq!(pl.policies[0], spec("*", "", true, "", "", "", "/open"));
        assert!(allowed(&pl, &anonymous(), &path("get", "/open")));
        assert!(allowed(&pl, &user("", &[]), &path("get", "/open")));
    }

    #[test]
    fn error_messages() {
        let prefix = |n: usize, line: &str| {
            format!("error reading policy file policy.jsonl, line {n}: {line}: ")
        };
        let cases: Vec<(String, usize, String)> = vec![
            // (file text, failing line number, reason after the prefix)
            (
                r#"{"user":5}"#.into(),
                1,
                "json: cannot unmarshal number into Go struct field Policy.user of type string".into(),
            ),
            (
                r#"{"user":"a","readonly":"yes"}"#.into(),
                1,
                "json: cannot unmarshal string into Go struct field Policy.readonly of type bool".into(),
            ),
            (
                // The first type error is the one reported.
                r#"{"group":["a"],"user":{}}"#.into(),
                1,
                "json: cannot unmarshal array into Go struct field Policy.group of type string".into(),
            ),
            (
                format!("# c\n\n{{{V1},\"spec\":{{\"readonly\":1}}}}"),
                3,
                "json: cannot unmarshal number into Go struct field PolicySpec.spec.readonly of type bool".into(),
            ),
            (
                format!("{{{V1},\"spec\":{{\"nonResourcePath\":true}}}}"),
                1,
                "json: cannot unmarshal bool into Go struct field PolicySpec.spec.nonResourcePath of type string".into(),
            ),
            (
                format!("{{{V1},\"spec\":\"user\"}}"),
                1,
                "json: cannot unmarshal string into Go struct field Policy.spec of type v1beta1.PolicySpec".into(),
            ),
            (
                r#"{"apiVersion":1,"kind":"Policy"}"#.into(),
                1,
                "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string".into(),
            ),
            (
                r#"{"apiVersion":"a/b/c","kind":"Policy"}"#.into(),
                1,
                "unexpected GroupVersion string: a/b/c".into(),
            ),
            (
                r#"{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Role"}"#.into(),
                1,
                r#"no kind "Role" is registered for version "abac.authorization.kubernetes.io/v1beta1" in scheme "pkg/apis/abac/register.go""#.into(),
            ),
            (
                r#"{"apiVersion":"v1","kind":"Policy"}"#.into(),
                1,
                r#"no kind "Policy" is registered for version "v1" in scheme "pkg/apis/abac/register.go""#.into(),
            ),
            (
                r#"{"apiVersion":"abac.authorization.kubernetes.io/v2","spec":{}}"#.into(),
                1,
                r#"no kind "Policy" is registered for version "abac.authorization.kubernetes.io/v2" in scheme "pkg/apis/abac/register.go""#.into(),
            ),
            (
                r#"{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","spec":{"user":"a"}}"#.into(),
                1,
                "converting (k8s.io/kubernetes/pkg/apis/abac/v1beta1) Policy to (k8s.io/kubernetes/pkg/apis/abac/v0) Policy: unknown conversion".into(),
            ),
            (
                r#"{"apiVersion":"other.io/","kind":"Policy"}"#.into(),
                1,
                r#"Object 'apiVersion' is missing in '{"apiVersion":"other.io/","kind":"Policy"}'"#.into(),
            ),
            (
                "user: bob".into(),
                1,
                "a policy line must be a JSON object (YAML lines are not supported)".into(),
            ),
        ];
        for (text, n, reason) in cases {
            let line = text.lines().nth(n - 1).unwrap();
            assert_eq!(err(&text), format!("{}{reason}", prefix(n, line)), "{text}");
        }
        // Syntax errors: the reason is serde_json's, after kube's prefix.
        for (text, n) in [
            (r#"{"user":}"#.to_string(), 1),
            (
                "{\"user\":\"a\"}\n\n{\"user\":\"b\"} trailing\r\n{\"user\":\"c\"}".to_string(),
                3,
            ),
            ("{\"user\":\"a\"".to_string(), 1),
            ("{\"user\":\"a\",}".to_string(), 1),
            ("{'user':'a'}".to_string(), 1),
        ] {
            let line = text.lines().nth(n - 1).unwrap();
            let e = err(&text);
            let want = format!(
                "{}couldn't get version/kind; json parse error: ",
                prefix(n, line)
            );
            assert!(e.starts_with(&want), "{e}");
        }
        // The first bad line stops the parse.
        let e = err("{\"user\":1}\n{\"user\":2}");
        assert!(e.contains("line 1:"), "{e}");
    }

    #[test]
    fn over_long_lines() {
        let fits = format!("{{\"user\":\"{}\"}}", "a".repeat(MAX_LINE - 12));
        assert_eq!(fits.len(), MAX_LINE - 1);
        assert_eq!(parse(&fits).len(), 1);
        assert_eq!(parse(&format!("{fits}\n")).len(), 1);
        let too_long = format!("{{\"user\":\"{}\"}}", "a".repeat(MAX_LINE - 11));
        let want = "error reading policy file policy.jsonl: bufio.Scanner: token too long";
        assert_eq!(err(&too_long), want);
        // The \r of a CRLF line counts.
        assert_eq!(err(&format!("{fits}\r\n")), want);
        // Also for comment lines; earlier bad lines are reported first.
        assert_eq!(err(&format!("# {}", "x".repeat(MAX_LINE))), want);
        assert!(err(&format!("{{\"user\":1}}\n{too_long}")).contains("line 1"));
    }

    #[test]
    fn load_reads_a_file() {
        let dir = std::env::temp_dir().join(format!("abac-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("policy.jsonl");
        std::fs::write(&file, EXAMPLE).unwrap();
        let pl = PolicyList::load(&file).unwrap();
        assert_eq!(pl.len(), 14);
        assert!(pl
            .unversioned_warning()
            .unwrap()
            .contains(&file.display().to_string()));

        std::fs::write(&file, "\n{\"user\":true}\n").unwrap();
        let e = PolicyList::load(&file).unwrap_err();
        assert_eq!(
            e,
            format!(
                "error reading policy file {}, line 2: {{\"user\":true}}: json: cannot unmarshal bool into Go struct field Policy.user of type string",
                file.display()
            )
        );

        let missing = dir.join("missing.jsonl");
        let e = PolicyList::load(&missing).unwrap_err();
        assert!(
            e.starts_with(&format!("open {}: ", missing.display())),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn rr(verbs: &[&str], group: &str, resource: &str) -> ResourceRule {
        ResourceRule {
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            api_groups: vec![group.to_string()],
            resources: vec![resource.to_string()],
            resource_names: vec![],
        }
    }

    fn nr(verbs: &[&str], url: &str) -> NonResourceRule {
        NonResourceRule {
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            non_resource_urls: vec![url.to_string()],
        }
    }

    #[test]
    fn rules_for_users() {
        let text = format!(
            r#"{{"readonly": true, "resource": "events"}}
{{"user":"sched", "readonly": true, "resource": "pods"}}
{{"user":"sched", "resource": "bindings"}}
{{"user":"kl", "readonly": true, "resource": "pods"}}
{{"user":"kl", "resource": "events"}}
{{"user":"ann", "namespace": "proj"}}
{{"user":"ben", "readonly": true, "namespace": "proj"}}
{{"user":"ben", "readonly": true, "nonResourcePath": "*"}}
{{"group":"a", "resource": "bindings"}}
{{"group":"b", "readonly": true, "nonResourcePath": "*"}}
{{{V1},"spec":{{"user":"vee","readonly":true,"namespace":"proj","resource":"pods","apiGroup":"","nonResourcePath":"/metrics"}}}}
{{{V1},"spec":{{"user":"vee","nonResourcePath":"/healthz"}}}}
{{{V1},"spec":{{"user":"vee","resource":"nodes"}}}}
{{{V1},"spec":{{"user":"*","readonly":true,"nonResourcePath":"/version"}}}}"#
        );
        let pl = parse(&text);
        let ro = ["get", "list", "watch"];
        let all = ["*"];

        let (r, n) = rules_for(&pl, &authed("sched"), "ns1");
        assert_eq!(
            r,
            vec![
                rr(&ro, "*", "events"),
                rr(&ro, "*", "pods"),
                rr(&all, "*", "bindings")
            ]
        );
        assert_eq!(n, vec![]);

        // Groups a and b, but not system:authenticated.
        let (r, n) = rules_for(&pl, &user("kl", &["a", "b"]), "ns1");
        assert_eq!(
            r,
            vec![
                rr(&ro, "*", "pods"),
                rr(&all, "*", "events"),
                rr(&all, "*", "bindings"),
                rr(&ro, "*", "*"),
            ]
        );
        assert_eq!(n, vec![nr(&ro, "*")]);

        let (r, n) = rules_for(&pl, &authed("ann"), "proj");
        assert_eq!(r, vec![rr(&ro, "*", "events"), rr(&all, "*", "*")]);
        // The `*` /version policy has no namespace, so it shows only for the cluster scope.
        assert_eq!(n, vec![]);
        let (r, _) = rules_for(&pl, &authed("ann"), "other");
        assert_eq!(r, vec![rr(&ro, "*", "events")]);

        let (r, n) = rules_for(&pl, &authed("ben"), "proj");
        assert_eq!(
            r,
            vec![rr(&ro, "*", "events"), rr(&ro, "*", "*"), rr(&ro, "*", "*")]
        );
        assert_eq!(n, vec![nr(&ro, "*")]);

        // v1beta1: a policy's namespace gates its path rule too; an unset namespace matches
        // only the empty (cluster) namespace.
        let (r, n) = rules_for(&pl, &authed("vee"), "proj");
        assert_eq!(r, vec![rr(&ro, "*", "events"), rr(&ro, "", "pods")]);
        assert_eq!(n, vec![nr(&ro, "/metrics")]);
        let (r, n) = rules_for(&pl, &authed("vee"), "");
        assert_eq!(r, vec![rr(&ro, "*", "events"), rr(&all, "", "nodes")]);
        assert_eq!(n, vec![nr(&all, "/healthz"), nr(&ro, "/version")]);

        let (r, n) = rules_for(&pl, &anonymous(), "proj");
        assert_eq!((r, n), (vec![], vec![]));
    }
}
