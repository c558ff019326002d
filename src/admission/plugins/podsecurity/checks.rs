//! The Pod Security Standards' checks (k8s.io/pod-security-admission v0.33 `policy`): each
//! check has an ID, a level, the policy versions its behaviour changed at, and for some
//! restricted checks the baseline checks they replace. [`evaluate`] runs the checks of a
//! level at a version on a pod's metadata and spec (JSON as stored) and aggregates the
//! failures in kube's order (baseline checks by ID, then restricted checks by ID), with
//! kube's reasons and details.
//!
//! `latest` (and any version newer than the newest check revision, v1.32) means the newest
//! revision of every check. The user-namespace relaxations of the
//! `UserNamespacesPodSecurityStandards` feature gate (alpha, off in v1.33) are not applied.

use std::collections::BTreeSet;

use serde_json::Value;

use super::levels::{Level, LevelVersion, Version};
use crate::meta::field_error::go_quote;

/// One failed check: kube's `ForbiddenReason` and (possibly empty) `ForbiddenDetail`.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub reason: String,
    pub detail: String,
}

type CheckFn = fn(&Value, &Value) -> Option<Violation>;

struct Check {
    id: &'static str,
    level: Level,
    /// `(first minor version, behaviour)`, in increasing versions.
    versions: &'static [(u64, CheckFn)],
    /// Baseline checks this (restricted) check replaces at every version it applies to.
    overrides: &'static [&'static str],
}

impl Check {
    /// The behaviour at minor version `v`, if the check exists then.
    fn at(&self, v: u64) -> Option<CheckFn> {
        self.versions
            .iter()
            .rev()
            .find(|(min, _)| *min <= v)
            .map(|(_, f)| *f)
    }
}

const CHECKS: &[Check] = &[
    Check {
        id: "allowPrivilegeEscalation",
        level: Level::Restricted,
        versions: &[
            (8, allow_privilege_escalation_1_8),
            (25, allow_privilege_escalation_1_25),
        ],
        overrides: &[],
    },
    Check {
        id: "appArmorProfile",
        level: Level::Baseline,
        versions: &[(0, app_armor_profile)],
        overrides: &[],
    },
    Check {
        id: "capabilities_baseline",
        level: Level::Baseline,
        versions: &[(0, capabilities_baseline)],
        overrides: &[],
    },
    Check {
        id: "capabilities_restricted",
        level: Level::Restricted,
        versions: &[
            (22, capabilities_restricted_1_22),
            (25, capabilities_restricted_1_25),
        ],
        overrides: &["capabilities_baseline"],
    },
    Check {
        id: "hostNamespaces",
        level: Level::Baseline,
        versions: &[(0, host_namespaces)],
        overrides: &[],
    },
    Check {
        id: "hostPathVolumes",
        level: Level::Baseline,
        versions: &[(0, host_path_volumes)],
        overrides: &[],
    },
    Check {
        id: "hostPorts",
        level: Level::Baseline,
        versions: &[(0, host_ports)],
        overrides: &[],
    },
    Check {
        id: "privileged",
        level: Level::Baseline,
        versions: &[(0, privileged)],
        overrides: &[],
    },
    Check {
        id: "procMount",
        level: Level::Baseline,
        versions: &[(0, proc_mount)],
        overrides: &[],
    },
    Check {
        id: "restrictedVolumes",
        level: Level::Restricted,
        versions: &[(0, restricted_volumes)],
        overrides: &["hostPathVolumes"],
    },
    Check {
        id: "runAsNonRoot",
        level: Level::Restricted,
        versions: &[(0, run_as_non_root)],
        overrides: &[],
    },
    Check {
        id: "runAsUser",
        level: Level::Restricted,
        versions: &[(23, run_as_user)],
        overrides: &[],
    },
    Check {
        id: "seLinuxOptions",
        level: Level::Baseline,
        versions: &[(0, se_linux_options_1_0), (31, se_linux_options_1_31)],
        overrides: &[],
    },
    Check {
        id: "seccompProfile_baseline",
        level: Level::Baseline,
        versions: &[(0, seccomp_baseline_1_0), (19, seccomp_baseline_1_19)],
        overrides: &[],
    },
    Check {
        id: "seccompProfile_restricted",
        level: Level::Restricted,
        versions: &[(19, seccomp_restricted_1_19), (25, seccomp_restricted_1_25)],
        overrides: &["seccompProfile_baseline"],
    },
    Check {
        id: "sysctls",
        level: Level::Baseline,
        versions: &[
            (0, sysctls_1_0),
            (27, sysctls_1_27),
            (29, sysctls_1_29),
            (32, sysctls_1_32),
        ],
        overrides: &[],
    },
    Check {
        id: "windowsHostProcess",
        level: Level::Baseline,
        versions: &[(0, windows_host_process)],
        overrides: &[],
    },
];

/// The newest minor version any check changed at (`latest` evaluates as this).
fn max_minor() -> u64 {
    CHECKS
        .iter()
        .filter_map(|c| c.versions.last().map(|(m, _)| *m))
        .max()
        .unwrap_or(0)
}

/// The failures of one evaluation, in kube's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aggregate(pub Vec<Violation>);

impl Aggregate {
    pub fn allowed(&self) -> bool {
        self.0.is_empty()
    }

    /// kube's `ForbiddenReason()`: the reasons, comma-separated.
    pub fn reasons(&self) -> String {
        let r: Vec<&str> = self.0.iter().map(|v| v.reason.as_str()).collect();
        r.join(", ")
    }

    /// kube's `ForbiddenDetail()`: each reason with its detail in parentheses.
    pub fn details(&self) -> String {
        let r: Vec<String> = self
            .0
            .iter()
            .map(|v| {
                if v.detail.is_empty() {
                    v.reason.clone()
                } else {
                    format!("{} ({})", v.reason, v.detail)
                }
            })
            .collect();
        r.join(", ")
    }
}

/// Runs the checks of `lv` on a pod's (or pod template's) metadata and spec.
pub fn evaluate(lv: LevelVersion, meta: &Value, spec: &Value) -> Aggregate {
    if lv.level == Level::Privileged {
        return Aggregate::default();
    }
    let max = max_minor();
    let v = match lv.version {
        Version::V1(m) if m < max => m,
        _ => max,
    };
    let active = |level: Level| {
        let mut c: Vec<(&'static str, CheckFn, &'static [&'static str])> = CHECKS
            .iter()
            .filter(|c| c.level == level)
            .filter_map(|c| c.at(v).map(|f| (c.id, f, c.overrides)))
            .collect();
        c.sort_by_key(|(id, _, _)| *id);
        c
    };
    let mut run = active(Level::Baseline);
    if lv.level == Level::Restricted {
        let restricted = active(Level::Restricted);
        let overridden: BTreeSet<&str> = restricted
            .iter()
            .flat_map(|(_, _, o)| o.iter().copied())
            .collect();
        run.retain(|(id, _, _)| !overridden.contains(id));
        run.extend(restricted);
    }
    Aggregate(
        run.iter()
            .filter_map(|(_, f, _)| f(meta, spec))
            .map(|mut v| {
                if v.reason.is_empty() {
                    v.reason = "unknown forbidden reason".into();
                }
                v
            })
            .collect(),
    )
}

// --- helpers -------------------------------------------------------------------------

/// A field that is set (present and not null).
fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    field(v, key).and_then(Value::as_str)
}

fn bool_of(v: &Value, key: &str) -> Option<bool> {
    field(v, key).and_then(Value::as_bool)
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    field(v, key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The container's (or pod's) `securityContext`, if set.
fn sc(v: &Value) -> Option<&Value> {
    field(v, "securityContext")
}

fn name(c: &Value) -> String {
    str_of(c, "name").unwrap_or_default().to_string()
}

/// Init containers, containers, then ephemeral containers (kube's `visitContainers`).
fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    list(spec, "initContainers")
        .iter()
        .chain(list(spec, "containers"))
        .chain(list(spec, "ephemeralContainers"))
}

/// `"a", "b"` (kube's `joinQuote`: no escaping).
fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let v: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("\"{}\"", v.join("\", \""))
}

fn pluralize(one: &'static str, many: &'static str, n: usize) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// `container "a"` / `containers "a", "b"`.
fn containers_named(names: &[String]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

fn sorted(set: &BTreeSet<String>) -> Vec<String> {
    set.iter().cloned().collect()
}

fn violation(reason: impl Into<String>, detail: impl Into<String>) -> Option<Violation> {
    Some(Violation {
        reason: reason.into(),
        detail: detail.into(),
    })
}

fn windows(spec: &Value) -> bool {
    field(spec, "os").and_then(|os| str_of(os, "name")) == Some("windows")
}

fn annotations(meta: &Value) -> impl Iterator<Item = (&String, &str)> {
    field(meta, "annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k, v.as_str().unwrap_or_default()))
}

// --- the checks ----------------------------------------------------------------------

fn allow_privilege_escalation_1_8(_meta: &Value, spec: &Value) -> Option<Violation> {
    let bad: Vec<String> = containers(spec)
        .filter(|c| sc(c).and_then(|s| bool_of(s, "allowPrivilegeEscalation")) != Some(false))
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_named(&bad)
        ),
    )
}

fn allow_privilege_escalation_1_25(meta: &Value, spec: &Value) -> Option<Violation> {
    if windows(spec) {
        return None;
    }
    allow_privilege_escalation_1_8(meta, spec)
}

fn app_armor_type_allowed(t: &str) -> bool {
    matches!(t, "RuntimeDefault" | "Localhost")
}

fn app_armor_profile(meta: &Value, spec: &Value) -> Option<Violation> {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let profile_type = |s: &Value| {
        field(s, "appArmorProfile").map(|p| str_of(p, "type").unwrap_or_default().to_string())
    };
    if let Some(t) = sc(spec).and_then(profile_type) {
        if !app_armor_type_allowed(&t) {
            setters.push("pod".to_string());
            values.insert(t);
        }
    }
    let mut bad = Vec::new();
    for c in containers(spec) {
        if let Some(t) = sc(c).and_then(profile_type) {
            if !app_armor_type_allowed(&t) {
                bad.push(name(c));
                values.insert(t);
            }
        }
    }
    if !bad.is_empty() {
        setters.push(containers_named(&bad));
    }
    let mut forbidden: Vec<String> = annotations(meta)
        .filter(|(k, v)| {
            k.starts_with("container.apparmor.security.beta.kubernetes.io/")
                && !(v.is_empty() || *v == "runtime/default" || v.starts_with("localhost/"))
        })
        .map(|(k, v)| format!("{k}={}", go_quote(v)))
        .collect();
    let mut all = sorted(&values);
    if !forbidden.is_empty() {
        forbidden.sort();
        setters.push(pluralize("annotation", "annotations", forbidden.len()).to_string());
        all.extend(forbidden);
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            all.len(),
        ),
        format!(
            "{} must not set AppArmor profile type to {}",
            setters.join(" and "),
            join_quote(&all)
        ),
    )
}

const DEFAULT_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn capabilities_baseline(_meta: &Value, spec: &Value) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut caps = BTreeSet::new();
    for c in containers(spec) {
        let Some(cap) = sc(c).and_then(|s| field(s, "capabilities")) else {
            continue;
        };
        let mut valid = true;
        for a in list(cap, "add") {
            let a = a.as_str().unwrap_or_default();
            if !DEFAULT_CAPABILITIES.contains(&a) {
                valid = false;
                caps.insert(a.to_string());
            }
        }
        if !valid {
            bad.push(name(c));
        }
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_named(&bad),
            join_quote(&sorted(&caps))
        ),
    )
}

fn capabilities_restricted_1_22(_meta: &Value, spec: &Value) -> Option<Violation> {
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    let mut caps = BTreeSet::new();
    for c in containers(spec) {
        let Some(cap) = sc(c).and_then(|s| field(s, "capabilities")) else {
            missing_drop.push(name(c));
            continue;
        };
        if !list(cap, "drop").iter().any(|d| d.as_str() == Some("ALL")) {
            missing_drop.push(name(c));
        }
        let mut forbidden = false;
        for a in list(cap, "add") {
            let a = a.as_str().unwrap_or_default();
            if a != "NET_BIND_SERVICE" {
                forbidden = true;
                caps.insert(a.to_string());
            }
        }
        if forbidden {
            adding.push(name(c));
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_named(&missing_drop)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_named(&adding),
            join_quote(&sorted(&caps))
        ));
    }
    if details.is_empty() {
        return None;
    }
    violation("unrestricted capabilities", details.join("; "))
}

fn capabilities_restricted_1_25(meta: &Value, spec: &Value) -> Option<Violation> {
    if windows(spec) {
        return None;
    }
    capabilities_restricted_1_22(meta, spec)
}

fn host_namespaces(_meta: &Value, spec: &Value) -> Option<Violation> {
    let set: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .iter()
        .filter(|k| bool_of(spec, k) == Some(true))
        .map(|k| format!("{k}=true"))
        .collect();
    if set.is_empty() {
        return None;
    }
    violation("host namespaces", set.join(", "))
}

fn host_path_volumes(_meta: &Value, spec: &Value) -> Option<Violation> {
    let bad: Vec<String> = list(spec, "volumes")
        .iter()
        .filter(|v| field(v, "hostPath").is_some())
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "hostPath volumes",
        format!(
            "{} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad)
        ),
    )
}

fn host_ports(_meta: &Value, spec: &Value) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut ports = BTreeSet::new();
    for c in containers(spec) {
        let mut valid = true;
        for p in list(c, "ports") {
            let hp = field(p, "hostPort").and_then(Value::as_i64).unwrap_or(0);
            if hp != 0 {
                valid = false;
                ports.insert(hp.to_string());
            }
        }
        if !valid {
            bad.push(name(c));
        }
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_named(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            sorted(&ports).join(", ")
        ),
    )
}

fn privileged(_meta: &Value, spec: &Value) -> Option<Violation> {
    let bad: Vec<String> = containers(spec)
        .filter(|c| sc(c).and_then(|s| bool_of(s, "privileged")) == Some(true))
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_named(&bad)
        ),
    )
}

fn proc_mount(_meta: &Value, spec: &Value) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for c in containers(spec) {
        if let Some(pm) = sc(c).and_then(|s| field(s, "procMount")) {
            let pm = pm.as_str().unwrap_or_default();
            if pm != "Default" {
                bad.push(name(c));
                types.insert(pm.to_string());
            }
        }
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_named(&bad),
            join_quote(&sorted(&types))
        ),
    )
}

/// The volume sources the restricted level allows.
const ALLOWED_VOLUMES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The other sources, in the order kube names a volume's type.
const RESTRICTED_VOLUMES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

fn restricted_volumes(_meta: &Value, spec: &Value) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for v in list(spec, "volumes") {
        if ALLOWED_VOLUMES.iter().any(|k| field(v, k).is_some()) {
            continue;
        }
        bad.push(name(v));
        let t = RESTRICTED_VOLUMES
            .iter()
            .find(|k| field(v, k).is_some())
            .copied()
            .unwrap_or("unknown");
        types.insert(t.to_string());
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                types.len()
            ),
            join_quote(&sorted(&types))
        ),
    )
}

fn run_as_non_root(_meta: &Value, spec: &Value) -> Option<Violation> {
    let mut setters = Vec::new();
    let mut pod_non_root = false;
    match sc(spec).and_then(|s| bool_of(s, "runAsNonRoot")) {
        Some(false) => setters.push("pod".to_string()),
        Some(true) => pod_non_root = true,
        None => {}
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in containers(spec) {
        match sc(c).and_then(|s| bool_of(s, "runAsNonRoot")) {
            Some(false) => explicit.push(name(c)),
            Some(true) => {}
            None if !pod_non_root => implicit.push(name(c)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_named(&explicit));
    }
    if !setters.is_empty() {
        return violation(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                setters.join(" and ")
            ),
        );
    }
    if !implicit.is_empty() {
        return violation(
            "runAsNonRoot != true",
            format!(
                "pod or {} must set securityContext.runAsNonRoot=true",
                containers_named(&implicit)
            ),
        );
    }
    None
}

fn run_as_user(_meta: &Value, spec: &Value) -> Option<Violation> {
    let root = |s: &Value| field(s, "runAsUser").and_then(Value::as_i64) == Some(0);
    let mut setters = Vec::new();
    if sc(spec).is_some_and(root) {
        setters.push("pod".to_string());
    }
    let bad: Vec<String> = containers(spec)
        .filter(|c| sc(c).is_some_and(root))
        .map(name)
        .collect();
    if !bad.is_empty() {
        setters.push(containers_named(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters.join(" and ")),
    )
}

const SELINUX_TYPES_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];
const SELINUX_TYPES_1_31: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

fn se_linux_options_1_0(meta: &Value, spec: &Value) -> Option<Violation> {
    se_linux_options(meta, spec, SELINUX_TYPES_1_0)
}

fn se_linux_options_1_31(meta: &Value, spec: &Value) -> Option<Violation> {
    se_linux_options(meta, spec, SELINUX_TYPES_1_31)
}

fn se_linux_options(_meta: &Value, spec: &Value, allowed: &[&str]) -> Option<Violation> {
    let mut bad_types = BTreeSet::new();
    let (mut set_user, mut set_role) = (false, false);
    let mut valid = |o: &Value| {
        let mut ok = true;
        let t = str_of(o, "type").unwrap_or_default();
        if !allowed.contains(&t) {
            ok = false;
            bad_types.insert(t.to_string());
        }
        if !str_of(o, "user").unwrap_or_default().is_empty() {
            ok = false;
            set_user = true;
        }
        if !str_of(o, "role").unwrap_or_default().is_empty() {
            ok = false;
            set_role = true;
        }
        ok
    };
    let mut setters = Vec::new();
    if let Some(o) = sc(spec).and_then(|s| field(s, "seLinuxOptions")) {
        if !valid(o) {
            setters.push("pod".to_string());
        }
    }
    let mut bad = Vec::new();
    for c in containers(spec) {
        if let Some(o) = sc(c).and_then(|s| field(s, "seLinuxOptions")) {
            if !valid(o) {
                bad.push(name(c));
            }
        }
    }
    if !bad.is_empty() {
        setters.push(containers_named(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    let mut data = Vec::new();
    if !bad_types.is_empty() {
        data.push(format!(
            "{} {}",
            pluralize("type", "types", bad_types.len()),
            join_quote(&sorted(&bad_types))
        ));
    }
    if set_user {
        data.push("user may not be set".to_string());
    }
    if set_role {
        data.push("role may not be set".to_string());
    }
    violation(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters.join(" and "),
            data.join("; ")
        ),
    )
}

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION: &str = "container.seccomp.security.alpha.kubernetes.io/";

fn seccomp_type_allowed(t: &str) -> bool {
    matches!(t, "Localhost" | "RuntimeDefault")
}

/// Before v1.19: the alpha annotations.
fn seccomp_baseline_1_0(meta: &Value, spec: &Value) -> Option<Violation> {
    let valid =
        |v: &str| v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/");
    let ann = field(meta, "annotations");
    let get = |k: &str| ann.and_then(|a| str_of(a, k));
    let mut forbidden = BTreeSet::new();
    if let Some(v) = get(SECCOMP_POD_ANNOTATION) {
        if !valid(v) {
            forbidden.insert(format!("{SECCOMP_POD_ANNOTATION}={}", go_quote(v)));
        }
    }
    for c in containers(spec) {
        let key = format!("{SECCOMP_CONTAINER_ANNOTATION}{}", name(c));
        if let Some(v) = get(&key) {
            if !valid(v) {
                forbidden.insert(format!("{key}={}", go_quote(v)));
            }
        }
    }
    if forbidden.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "forbidden {} {}",
            pluralize("annotation", "annotations", forbidden.len()),
            sorted(&forbidden).join(", ")
        ),
    )
}

/// The seccomp profile type set on a pod or container security context, if any.
fn seccomp_type(s: &Value) -> Option<String> {
    field(s, "seccompProfile").map(|p| str_of(p, "type").unwrap_or_default().to_string())
}

fn seccomp_baseline_1_19(_meta: &Value, spec: &Value) -> Option<Violation> {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if let Some(t) = sc(spec).and_then(seccomp_type) {
        if !seccomp_type_allowed(&t) {
            setters.push("pod".to_string());
            values.insert(t);
        }
    }
    let mut bad = Vec::new();
    for c in containers(spec) {
        if let Some(t) = sc(c).and_then(seccomp_type) {
            if !seccomp_type_allowed(&t) {
                bad.push(name(c));
                values.insert(t);
            }
        }
    }
    if !bad.is_empty() {
        setters.push(containers_named(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(&sorted(&values))
        ),
    )
}

fn seccomp_restricted_1_19(_meta: &Value, spec: &Value) -> Option<Violation> {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let mut pod_set = false;
    if let Some(t) = sc(spec).and_then(seccomp_type) {
        if seccomp_type_allowed(&t) {
            pod_set = true;
        } else {
            setters.push("pod".to_string());
            values.insert(t);
        }
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in containers(spec) {
        match sc(c).and_then(seccomp_type) {
            Some(t) => {
                if !seccomp_type_allowed(&t) {
                    explicit.push(name(c));
                    values.insert(t);
                }
            }
            None if !pod_set => implicit.push(name(c)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_named(&explicit));
    }
    if !setters.is_empty() {
        return violation(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                setters.join(" and "),
                join_quote(&sorted(&values))
            ),
        );
    }
    if !implicit.is_empty() {
        return violation(
            "seccompProfile",
            format!(
                "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                containers_named(&implicit)
            ),
        );
    }
    None
}

fn seccomp_restricted_1_25(meta: &Value, spec: &Value) -> Option<Violation> {
    if windows(spec) {
        return None;
    }
    seccomp_restricted_1_19(meta, spec)
}

const SYSCTLS_1_0: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];
const SYSCTLS_1_27: &[&str] = &["net.ipv4.ip_local_reserved_ports"];
const SYSCTLS_1_29: &[&str] = &[
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const SYSCTLS_1_32: &[&str] = &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

fn sysctls_1_0(meta: &Value, spec: &Value) -> Option<Violation> {
    sysctls(meta, spec, &[SYSCTLS_1_0])
}

fn sysctls_1_27(meta: &Value, spec: &Value) -> Option<Violation> {
    sysctls(meta, spec, &[SYSCTLS_1_0, SYSCTLS_1_27])
}

fn sysctls_1_29(meta: &Value, spec: &Value) -> Option<Violation> {
    sysctls(meta, spec, &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29])
}

fn sysctls_1_32(meta: &Value, spec: &Value) -> Option<Violation> {
    sysctls(
        meta,
        spec,
        &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29, SYSCTLS_1_32],
    )
}

fn sysctls(_meta: &Value, spec: &Value, allowed: &[&[&str]]) -> Option<Violation> {
    let bad: Vec<&str> = sc(spec)
        .map(|s| list(s, "sysctls"))
        .unwrap_or(&[])
        .iter()
        .map(|s| str_of(s, "name").unwrap_or_default())
        .filter(|n| !allowed.iter().any(|set| set.contains(n)))
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation("forbidden sysctls", bad.join(", "))
}

fn windows_host_process(_meta: &Value, spec: &Value) -> Option<Violation> {
    let host_process = |s: &Value| {
        field(s, "windowsOptions").and_then(|w| bool_of(w, "hostProcess")) == Some(true)
    };
    let bad: Vec<String> = containers(spec)
        .filter(|c| sc(c).is_some_and(host_process))
        .map(name)
        .collect();
    let mut setters = Vec::new();
    if sc(spec).is_some_and(host_process) {
        setters.push("pod".to_string());
    }
    if !bad.is_empty() {
        setters.push(containers_named(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters.join(" and ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lv(level: Level, version: Version) -> LevelVersion {
        LevelVersion { level, version }
    }

    const RESTRICTED: LevelVersion = LevelVersion {
        level: Level::Restricted,
        version: Version::Latest,
    };
    const BASELINE: LevelVersion = LevelVersion {
        level: Level::Baseline,
        version: Version::Latest,
    };

    #[test]
    fn a_plain_pod_fails_restricted_in_kubes_order() {
        let spec = json!({"containers": [{"name": "c", "image": "nginx"}], "securityContext": {}});
        assert!(evaluate(BASELINE, &json!({}), &spec).allowed());
        let r = evaluate(RESTRICTED, &json!({}), &spec);
        assert_eq!(
            r.details(),
            "allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), \
             unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), \
             runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), \
             seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"
        );
        assert_eq!(
            r.reasons(),
            "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
        );
        // an old version has fewer restricted checks, and the baseline seccomp check again
        let r = evaluate(lv(Level::Restricted, Version::V1(18)), &json!({}), &spec);
        assert_eq!(
            r.reasons(),
            "allowPrivilegeEscalation != false, runAsNonRoot != true"
        );
        // a compliant pod
        let ok = json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "securityContext": {
                "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}]
        });
        assert!(evaluate(RESTRICTED, &json!({}), &ok).allowed());
    }

    #[test]
    fn baseline_violations() {
        let spec = json!({
            "hostNetwork": true, "hostPID": true,
            "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}, {"name": "net.ipv4.tcp_rmem", "value": "1"}],
                                "seLinuxOptions": {"type": "spc_t", "user": "u"}},
            "volumes": [{"name": "h", "hostPath": {"path": "/"}}, {"name": "e", "emptyDir": {}}],
            "initContainers": [{"name": "i", "securityContext": {"privileged": true, "procMount": "Unmasked"}}],
            "containers": [
                {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 90, "hostPort": 90}],
                 "securityContext": {"capabilities": {"add": ["NET_RAW", "CHOWN", "SYS_ADMIN"]},
                                     "seccompProfile": {"type": "Unconfined"},
                                     "appArmorProfile": {"type": "Unconfined"}}},
                {"name": "b", "securityContext": {"windowsOptions": {"hostProcess": true}}}
            ]
        });
        let meta = json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/b": "unconfined"}});
        let r = evaluate(BASELINE, &meta, &spec);
        let got: Vec<String> = r.details().split(", ").map(str::to_string).collect();
        let want = [
            "forbidden AppArmor profiles (container \"a\" and annotation must not set AppArmor profile type to \"Unconfined\"",
            "\"container.apparmor.security.beta.kubernetes.io/b=\"unconfined\"\")",
            "non-default capabilities (container \"a\" must not include \"NET_RAW\"",
            "\"SYS_ADMIN\" in securityContext.capabilities.add)",
            "host namespaces (hostNetwork=true",
            "hostPID=true)",
            "hostPath volumes (volume \"h\")",
            "hostPort (container \"a\" uses hostPorts 8080",
            "90)",
            "privileged (container \"i\" must not set securityContext.privileged=true)",
            "procMount (container \"i\" must not set securityContext.procMount to \"Unmasked\")",
            "seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type \"spc_t\"; user may not be set)",
            "seccompProfile (container \"a\" must not set securityContext.seccompProfile.type to \"Unconfined\")",
            "forbidden sysctls (kernel.msgmax)",
            "hostProcess (container \"b\" must not set securityContext.windowsOptions.hostProcess=true)",
        ];
        assert_eq!(got, want);
        // tcp_rmem is allowed from v1.32 only
        let r = evaluate(lv(Level::Baseline, Version::V1(31)), &meta, &spec);
        assert!(r
            .details()
            .contains("forbidden sysctls (kernel.msgmax, net.ipv4.tcp_rmem)"));
        // in restricted, the restricted volumes check replaces the hostPath one
        let r = evaluate(RESTRICTED, &meta, &spec);
        assert!(!r.reasons().contains("hostPath volumes"));
        assert!(r.details().contains(
            "restricted volume types (volume \"h\" uses restricted volume type \"hostPath\")"
        ));
        assert!(!r.reasons().contains("non-default capabilities"));
    }

    #[test]
    fn windows_pods_skip_linux_only_restricted_checks() {
        let spec = json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true},
                          "containers": [{"name": "c"}]});
        assert!(evaluate(RESTRICTED, &json!({}), &spec).allowed());
        let r = evaluate(lv(Level::Restricted, Version::V1(24)), &json!({}), &spec);
        assert_eq!(
            r.reasons(),
            "allowPrivilegeEscalation != false, unrestricted capabilities, seccompProfile"
        );
    }
}
