//! Server-side `Table` rendering (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), the
//! equivalent of kube-apiserver's `pkg/printers/internalversion` printers plus the default
//! table convertor (Name + "Created At") for everything without a printer.
//!
//! Input is plain JSON objects as stored; output is a `meta.k8s.io` Table document. Cells
//! follow upstream exactly, including the "wide" (priority 1) columns, which the server always
//! fills. Ages are computed from the `now` parameter with upstream's `duration.HumanDuration`
//! rules. The column definitions (names, types, priorities, descriptions) are generated
//! (`crate::generated::table_columns`, from `tests/generated/table_columns.txt`, see
//! `docs/generated.md`); the row functions here are hand-written and fill the cells in the
//! order of their printer's columns.
//!
//! This module is pure: no clock, no storage, no HTTP. It does not know about custom resources'
//! `additionalPrinterColumns` (the CRD layer renders those), content negotiation, or how the list
//! was produced (the caller passes the list metadata through).

use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Map, Value};

use crate::generated::table_columns::{self as cols, Col};

/// `?includeObject=` of a Table request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// No object in rows (`"object": null`).
    None,
    /// A `PartialObjectMetadata` per row (the default).
    #[default]
    Metadata,
    /// The full object per row.
    Object,
}

impl IncludeObject {
    /// Parses the query value; empty means the default (`Metadata`). Unknown values are `None`
    /// (the caller reports the error).
    pub fn parse(s: &str) -> Option<IncludeObject> {
        match s {
            "" | "Metadata" => Some(IncludeObject::Metadata),
            "None" => Some(IncludeObject::None),
            "Object" => Some(IncludeObject::Object),
            _ => None,
        }
    }
}

/// The Table of `items` of resource `info`: its printer columns when it has them (custom
/// resources), else its strategy's printer.
pub fn of_resource(
    info: &crate::registry::Resource,
    items: &[Value],
    list_meta: Value,
    include: IncludeObject,
    api_version: &str,
    now: Timestamp,
) -> Value {
    match &info.printer_columns {
        Some(cols) => cols.table(items, list_meta, include, api_version, now),
        None => table(
            info.strategy.printer(),
            items,
            list_meta,
            include,
            api_version,
            now,
        ),
    }
}

/// Renders `items` (full objects of `resource` in API group `info_group`) as a Table.
///
/// `list_meta` becomes the Table's `metadata` (resourceVersion, continue, remainingItemCount).
/// `api_version` selects `meta.k8s.io/v1` or `meta.k8s.io/v1beta1` (either the bare version or
/// the full group/version may be given; anything else means v1).
pub fn table(
    printer: Printer,
    items: &[Value],
    list_meta: Value,
    include: IncludeObject,
    api_version: &str,
    now: Timestamp,
) -> Value {
    let ctx = Ctx { now };
    let mut ordered: Vec<&Value> = items.iter().collect();
    if let Some(order) = printer.sort {
        ordered.sort_by(|a, b| order(a, b));
    }
    let rows = ordered.into_iter().map(|item| {
        let row = (printer.row)(item, &ctx);
        (row.cells, row.conditions, item)
    });
    let columns: Vec<Value> = printer
        .columns
        .iter()
        .map(|c| column(c.name, c.ty, c.format, c.desc, c.priority))
        .collect();
    assemble(columns, rows, list_meta, include, api_version)
}

/// One `columnDefinitions` entry.
pub fn column(name: &str, ty: &str, format: &str, desc: &str, priority: i64) -> Value {
    json!({"name": name, "type": ty, "format": format, "description": desc, "priority": priority})
}

/// A Table of `columns` whose rows are (cells, conditions, object): the part every printer
/// shares (the object or its metadata as `includeObject` asks, the meta.k8s.io version).
pub fn assemble<'a>(
    columns: Vec<Value>,
    rows: impl Iterator<Item = (Vec<Value>, Option<Value>, &'a Value)>,
    list_meta: Value,
    include: IncludeObject,
    api_version: &str,
) -> Value {
    let gv = match api_version {
        "v1beta1" | "meta.k8s.io/v1beta1" => "meta.k8s.io/v1beta1",
        _ => "meta.k8s.io/v1",
    };
    let rows: Vec<Value> = rows
        .map(|(cells, conditions, item)| {
            let mut r = Map::new();
            r.insert("cells".into(), Value::Array(cells));
            if let Some(c) = conditions {
                r.insert("conditions".into(), c);
            }
            let object = match include {
                IncludeObject::None => Value::Null,
                IncludeObject::Object => item.clone(),
                IncludeObject::Metadata => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": gv,
                    "metadata": item.get("metadata").cloned().unwrap_or_else(|| json!({})),
                }),
            };
            r.insert("object".into(), object);
            Value::Object(r)
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": gv,
        "metadata": list_meta,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

pub fn column_names(printer: Printer) -> Vec<&'static str> {
    printer.columns.iter().map(|c| c.name).collect()
}

/// Upstream's `duration.HumanDuration`: "5s", "2m30s", "3h", "2d5h", "3y45d", ...
pub fn human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        if s == 0 {
            return format!("{minutes}m");
        }
        return format!("{minutes}m{s}s");
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        if m == 0 {
            return format!("{hours}h");
        }
        format!("{hours}h{m}m")
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            return format!("{}d", hours / 24);
        }
        format!("{}d{}h", hours / 24, h)
    } else if hours < 24 * 365 * 2 {
        format!("{}d", hours / 24)
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            return format!("{}y", hours / 24 / 365);
        }
        format!("{}y{}d", hours / 24 / 365, dy)
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

// ---------------------------------------------------------------------------------------------
// Plumbing

struct Ctx {
    now: Timestamp,
}

impl Ctx {
    /// `translateTimestampSince`: "<unknown>" for a missing/zero timestamp.
    fn since(&self, ts: Option<&Value>) -> String {
        match ts.and_then(parse_ts) {
            Some(t) => human_duration(self.now.duration_since(t)),
            None => "<unknown>".into(),
        }
    }

    fn age(&self, obj: &Value) -> Value {
        Value::String(self.since(get(obj, &["metadata", "creationTimestamp"])))
    }
}

struct Row {
    cells: Vec<Value>,
    conditions: Option<Value>,
}

impl Row {
    fn new(cells: Vec<Value>) -> Row {
        Row {
            cells,
            conditions: None,
        }
    }
}

/// How one kind renders as a Table: its columns (the generated slice of the same name), its
/// row function and, for a few kinds, the order rows are printed in.
#[derive(Clone, Copy)]
pub struct Printer {
    columns: &'static [Col],
    row: fn(&Value, &Ctx) -> Row,
    sort: Option<fn(&Value, &Value) -> std::cmp::Ordering>,
}

/// kube-apiserver's default table convertor (name and creation time).
pub const DEFAULT: Printer = printers::DEFAULT;

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    if cur.is_null() {
        None
    } else {
        Some(cur)
    }
}

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    get(v, path).and_then(Value::as_str).unwrap_or("")
}

fn i(v: &Value, path: &[&str]) -> i64 {
    get(v, path).and_then(Value::as_i64).unwrap_or(0)
}

fn b(v: &Value, path: &[&str]) -> Option<bool> {
    get(v, path).and_then(Value::as_bool)
}

fn arr<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    get(v, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn obj_len(v: &Value, path: &[&str]) -> i64 {
    get(v, path)
        .and_then(Value::as_object)
        .map(|m| m.len() as i64)
        .unwrap_or(0)
}

fn parse_ts(v: &Value) -> Option<Timestamp> {
    v.as_str()?.parse::<Timestamp>().ok()
}

fn or_none(x: &str) -> String {
    if x.is_empty() {
        "<none>".into()
    } else {
        x.to_string()
    }
}

/// A resource.Quantity or IntOrString as text (stored form).
fn scalar_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(x) => Some(x.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn name_cell(obj: &Value) -> Value {
    Value::String(s(obj, &["metadata", "name"]).to_string())
}

/// `labels.FormatLabels`: sorted `k=v` pairs, `<none>` when empty.
fn format_labels(v: Option<&Value>) -> String {
    let mut pairs: Vec<String> = v
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        return "<none>".into();
    }
    pairs.sort();
    pairs.join(",")
}

/// `metav1.LabelSelectorAsSelector(sel).String()`; `Err` when the selector is invalid.
fn selector_string(sel: Option<&Value>) -> Result<String, ()> {
    let Some(sel) = sel else {
        return Ok(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
    {
        let key = e
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        values.sort();
        let text = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" if !values.is_empty() => format!("{key} in ({})", values.join(",")),
            "NotIn" if !values.is_empty() => format!("{key} notin ({})", values.join(",")),
            "Exists" if values.is_empty() => key.clone(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return Err(()),
        };
        reqs.push((key, text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(reqs
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(","))
}

/// `metav1.FormatLabelSelector`.
fn format_label_selector(sel: Option<&Value>) -> String {
    match selector_string(sel) {
        Err(()) => "<error>".into(),
        Ok(x) if x.is_empty() => "<none>".into(),
        Ok(x) => x,
    }
}

/// `layoutContainerCells`: comma-joined container names and images.
fn containers_cells(containers: &[Value]) -> (Value, Value) {
    let names: Vec<&str> = containers.iter().map(|c| s(c, &["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| s(c, &["image"])).collect();
    (json!(names.join(",")), json!(images.join(",")))
}

fn list_with_more(list: Vec<String>, more: bool, count: usize, max: usize) -> String {
    let ret = list.join(",");
    if more {
        return format!("{ret} + {} more...", count - max);
    }
    if ret.is_empty() {
        return "<unset>".into();
    }
    ret
}

fn bool_ptr(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    }
}

// ---------------------------------------------------------------------------------------------
// Dispatch

/// The printers of the built-in kinds (kube's `printers/internalversion`), one per Table
/// shape; each resource's strategy names its own.
pub mod printers {
    use super::*;

    pub const POD: Printer = Printer {
        columns: cols::POD,
        row: pod_row,
        sort: None,
    };
    pub const POD_TEMPLATE: Printer = Printer {
        columns: cols::POD_TEMPLATE,
        row: pod_template_row,
        sort: None,
    };
    pub const PDB: Printer = Printer {
        columns: cols::PDB,
        row: pdb_row,
        sort: None,
    };
    pub const RC: Printer = Printer {
        columns: cols::RC,
        row: rc_row,
        sort: None,
    };
    pub const RS: Printer = Printer {
        columns: cols::RS,
        row: rs_row,
        sort: None,
    };
    pub const DS: Printer = Printer {
        columns: cols::DS,
        row: ds_row,
        sort: None,
    };
    pub const JOB: Printer = Printer {
        columns: cols::JOB,
        row: job_row,
        sort: None,
    };
    pub const CRONJOB: Printer = Printer {
        columns: cols::CRONJOB,
        row: cronjob_row,
        sort: None,
    };
    pub const SERVICE: Printer = Printer {
        columns: cols::SERVICE,
        row: service_row,
        sort: None,
    };
    pub const INGRESS: Printer = Printer {
        columns: cols::INGRESS,
        row: ingress_row,
        sort: None,
    };
    pub const INGRESS_CLASS: Printer = Printer {
        columns: cols::INGRESS_CLASS,
        row: ingress_class_row,
        sort: None,
    };
    pub const STS: Printer = Printer {
        columns: cols::STS,
        row: sts_row,
        sort: None,
    };
    pub const ENDPOINTS: Printer = Printer {
        columns: cols::ENDPOINTS,
        row: endpoints_row,
        sort: None,
    };
    pub const NODE: Printer = Printer {
        columns: cols::NODE,
        row: node_row,
        sort: None,
    };
    pub const EVENT: Printer = Printer {
        columns: cols::EVENT,
        row: event_row,
        sort: None,
    };
    pub const NAMESPACE: Printer = Printer {
        columns: cols::NAMESPACE,
        row: namespace_row,
        sort: None,
    };
    pub const SECRET: Printer = Printer {
        columns: cols::SECRET,
        row: secret_row,
        sort: None,
    };
    pub const SA: Printer = Printer {
        columns: cols::SA,
        row: sa_row,
        sort: None,
    };
    pub const PV: Printer = Printer {
        columns: cols::PV,
        row: pv_row,
        sort: None,
    };
    pub const PVC: Printer = Printer {
        columns: cols::PVC,
        row: pvc_row,
        sort: None,
    };
    pub const COMPONENT_STATUS: Printer = Printer {
        columns: cols::COMPONENT_STATUS,
        row: component_status_row,
        sort: None,
    };
    pub const DEPLOYMENT: Printer = Printer {
        columns: cols::DEPLOYMENT,
        row: deployment_row,
        sort: None,
    };
    pub const HPA: Printer = Printer {
        columns: cols::HPA,
        row: hpa_row,
        sort: None,
    };
    pub const CONFIGMAP: Printer = Printer {
        columns: cols::CONFIGMAP,
        row: configmap_row,
        sort: None,
    };
    pub const NETPOL: Printer = Printer {
        columns: cols::NETPOL,
        row: netpol_row,
        sort: None,
    };
    pub const RB: Printer = Printer {
        columns: cols::RB,
        row: binding_row,
        sort: None,
    };
    pub const CRB: Printer = Printer {
        columns: cols::CRB,
        row: binding_row,
        sort: None,
    };
    pub const CSR: Printer = Printer {
        columns: cols::CSR,
        row: csr_row,
        sort: None,
    };
    pub const LEASE: Printer = Printer {
        columns: cols::LEASE,
        row: lease_row,
        sort: None,
    };
    pub const SC: Printer = Printer {
        columns: cols::SC,
        row: sc_row,
        sort: None,
    };
    pub const CR: Printer = Printer {
        columns: cols::CR,
        row: controller_revision_row,
        sort: None,
    };
    pub const QUOTA: Printer = Printer {
        columns: cols::QUOTA,
        row: quota_row,
        sort: None,
    };
    pub const PC: Printer = Printer {
        columns: cols::PC,
        row: pc_row,
        sort: None,
    };
    pub const RUNTIMECLASS: Printer = Printer {
        columns: cols::RUNTIMECLASS,
        row: runtimeclass_row,
        sort: None,
    };
    pub const VA: Printer = Printer {
        columns: cols::VA,
        row: va_row,
        sort: None,
    };
    pub const ES: Printer = Printer {
        columns: cols::ES,
        row: es_row,
        sort: None,
    };
    pub const CSINODE: Printer = Printer {
        columns: cols::CSINODE,
        row: csinode_row,
        sort: None,
    };
    pub const CSIDRIVER: Printer = Printer {
        columns: cols::CSIDRIVER,
        row: csidriver_row,
        sort: None,
    };
    pub const CSC: Printer = Printer {
        columns: cols::CSC,
        row: csc_row,
        sort: None,
    };
    pub const WEBHOOK: Printer = Printer {
        columns: cols::WEBHOOK,
        row: webhook_row,
        sort: None,
    };
    pub const VAP: Printer = Printer {
        columns: cols::VAP,
        row: vap_row,
        sort: None,
    };
    pub const VAPB: Printer = Printer {
        columns: cols::VAPB,
        row: vapb_row,
        sort: None,
    };
    pub const FS: Printer = Printer {
        columns: cols::FS,
        row: fs_row,
        sort: Some(flowschema_order),
    };
    pub const PL: Printer = Printer {
        columns: cols::PL,
        row: pl_row,
        sort: None,
    };
    pub const SCIDR: Printer = Printer {
        columns: cols::SCIDR,
        row: scidr_row,
        sort: None,
    };
    pub const IP: Printer = Printer {
        columns: cols::IP,
        row: ip_row,
        sort: None,
    };
    pub const DEFAULT: Printer = Printer {
        columns: cols::DEFAULT,
        row: default_row,
        sort: None,
    };
}

/// Upstream prints FlowSchema lists in matching order (precedence, then name).
fn flowschema_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    i(a, &["spec", "matchingPrecedence"])
        .cmp(&i(b, &["spec", "matchingPrecedence"]))
        .then_with(|| s(a, &["metadata", "name"]).cmp(s(b, &["metadata", "name"])))
}

// ---------------------------------------------------------------------------------------------
// Default table convertor (k8s.io/apiserver rest.NewDefaultTableConvertor)

fn default_row(o: &Value, _: &Ctx) -> Row {
    let created = get(o, &["metadata", "creationTimestamp"])
        .and_then(parse_ts)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "0001-01-01T00:00:00Z".into());
    Row::new(vec![name_cell(o), json!(created)])
}

// ---------------------------------------------------------------------------------------------
// Pods

fn condition_true(conds: &[Value], ty: &str) -> bool {
    conds
        .iter()
        .any(|c| s(c, &["type"]) == ty && s(c, &["status"]) == "True")
}

fn later(acc: &mut Option<Timestamp>, status: &Value) {
    if let Some(t) = get(status, &["lastState", "terminated", "finishedAt"]).and_then(parse_ts) {
        if acc.is_none_or(|a| a < t) {
            *acc = Some(t);
        }
    }
}

fn pod_row(pod: &Value, ctx: &Ctx) -> Row {
    let spec_containers = arr(pod, &["spec", "containers"]);
    let spec_init = arr(pod, &["spec", "initContainers"]);
    let conditions = arr(pod, &["status", "conditions"]);
    let mut restarts: i64 = 0;
    let mut restartable_restarts: i64 = 0;
    let mut total = spec_containers.len();
    let mut ready = 0usize;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_restartable_restart: Option<Timestamp> = None;

    let phase = s(pod, &["status", "phase"]);
    let mut reason = phase.to_string();
    if !s(pod, &["status", "reason"]).is_empty() {
        reason = s(pod, &["status", "reason"]).to_string();
    }
    for c in conditions {
        if s(c, &["type"]) == "PodScheduled" && s(c, &["reason"]) == "SchedulingGated" {
            reason = "SchedulingGated".into();
        }
    }
    let row_conditions = match phase {
        "Succeeded" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]),
        ),
        "Failed" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]),
        ),
        _ => None,
    };

    let restartable = |name: &str| {
        spec_init
            .iter()
            .any(|c| s(c, &["name"]) == name && s(c, &["restartPolicy"]) == "Always")
    };
    total += spec_init
        .iter()
        .filter(|c| s(c, &["restartPolicy"]) == "Always")
        .count();

    let mut initializing = false;
    for (idx, st) in arr(pod, &["status", "initContainerStatuses"])
        .iter()
        .enumerate()
    {
        restarts += i(st, &["restartCount"]);
        later(&mut last_restart, st);
        let is_restartable = restartable(s(st, &["name"]));
        if is_restartable {
            restartable_restarts += i(st, &["restartCount"]);
            later(&mut last_restartable_restart, st);
        }
        let terminated = get(st, &["state", "terminated"]);
        let waiting = get(st, &["state", "waiting"]);
        if terminated.is_some() && i(st, &["state", "terminated", "exitCode"]) == 0 {
            continue;
        }
        if is_restartable && b(st, &["started"]) == Some(true) {
            if b(st, &["ready"]) == Some(true) {
                ready += 1;
            }
            continue;
        }
        if let Some(t) = terminated {
            let r = s(t, &["reason"]);
            reason = if r.is_empty() {
                if i(t, &["signal"]) != 0 {
                    format!("Init:Signal:{}", i(t, &["signal"]))
                } else {
                    format!("Init:ExitCode:{}", i(t, &["exitCode"]))
                }
            } else {
                format!("Init:{r}")
            };
        } else if waiting.is_some_and(|w| {
            let r = s(w, &["reason"]);
            !r.is_empty() && r != "PodInitializing"
        }) {
            reason = format!("Init:{}", s(waiting.unwrap_or(&Value::Null), &["reason"]));
        } else {
            reason = format!("Init:{}/{}", idx, spec_init.len());
        }
        initializing = true;
        break;
    }

    if !initializing || condition_true(conditions, "Initialized") {
        restarts = restartable_restarts;
        last_restart = last_restartable_restart;
        let mut has_running = false;
        for st in arr(pod, &["status", "containerStatuses"]).iter().rev() {
            restarts += i(st, &["restartCount"]);
            later(&mut last_restart, st);
            let waiting_reason = s(st, &["state", "waiting", "reason"]);
            let terminated = get(st, &["state", "terminated"]);
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(t) = terminated {
                let r = s(t, &["reason"]);
                reason = if !r.is_empty() {
                    r.to_string()
                } else if i(t, &["signal"]) != 0 {
                    format!("Signal:{}", i(t, &["signal"]))
                } else {
                    format!("ExitCode:{}", i(t, &["exitCode"]))
                };
            } else if b(st, &["ready"]) == Some(true) && get(st, &["state", "running"]).is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true(conditions, "Ready") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }

    let deleting = get(pod, &["metadata", "deletionTimestamp"]).is_some();
    if deleting && s(pod, &["status", "reason"]) == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && phase != "Failed" && phase != "Succeeded" {
        reason = "Terminating".into();
    }

    let restarts_str = match last_restart {
        Some(t) if restarts != 0 => {
            format!(
                "{restarts} ({} ago)",
                human_duration(ctx.now.duration_since(t))
            )
        }
        _ => restarts.to_string(),
    };

    let pod_ip = arr(pod, &["status", "podIPs"])
        .first()
        .map(|p| s(p, &["ip"]))
        .unwrap_or("");
    let gates = arr(pod, &["spec", "readinessGates"]);
    let readiness = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let true_count = gates
            .iter()
            .filter(|g| {
                let ty = s(g, &["conditionType"]);
                conditions
                    .iter()
                    .find(|c| s(c, &["type"]) == ty)
                    .is_some_and(|c| s(c, &["status"]) == "True")
            })
            .count();
        format!("{true_count}/{}", gates.len())
    };
    Row {
        cells: vec![
            name_cell(pod),
            json!(format!("{ready}/{total}")),
            json!(reason),
            json!(restarts_str),
            ctx.age(pod),
            json!(or_none(pod_ip)),
            json!(or_none(s(pod, &["spec", "nodeName"]))),
            json!(or_none(s(pod, &["status", "nominatedNodeName"]))),
            json!(readiness),
        ],
        conditions: row_conditions,
    }
}

fn pod_template_row(o: &Value, _: &Ctx) -> Row {
    let (names, images) = containers_cells(arr(o, &["template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        names,
        images,
        json!(format_labels(get(o, &["template", "metadata", "labels"]))),
    ])
}

// ---------------------------------------------------------------------------------------------
// Workloads

fn pdb_row(o: &Value, ctx: &Ctx) -> Row {
    let min = scalar_text(get(o, &["spec", "minAvailable"])).unwrap_or_else(|| "N/A".into());
    let max = scalar_text(get(o, &["spec", "maxUnavailable"])).unwrap_or_else(|| "N/A".into());
    Row::new(vec![
        name_cell(o),
        json!(min),
        json!(max),
        json!(i(o, &["status", "disruptionsAllowed"])),
        ctx.age(o),
    ])
}

/// spec.replicas as the internal (defaulted) value: 1 when unset.
fn replicas(o: &Value) -> i64 {
    get(o, &["spec", "replicas"])
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn rc_row(o: &Value, ctx: &Ctx) -> Row {
    replica_row(o, ctx, format_labels(get(o, &["spec", "selector"])))
}

/// Rows of ReplicationControllers and ReplicaSets: the same cells, selectors printed per type.
fn replica_row(o: &Value, ctx: &Ctx, selector: String) -> Row {
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(replicas(o)),
        json!(i(o, &["status", "replicas"])),
        json!(i(o, &["status", "readyReplicas"])),
        ctx.age(o),
        names,
        images,
        json!(selector),
    ])
}

fn rs_row(o: &Value, ctx: &Ctx) -> Row {
    replica_row(o, ctx, format_label_selector(get(o, &["spec", "selector"])))
}

fn ds_row(o: &Value, ctx: &Ctx) -> Row {
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(i(o, &["status", "desiredNumberScheduled"])),
        json!(i(o, &["status", "currentNumberScheduled"])),
        json!(i(o, &["status", "numberReady"])),
        json!(i(o, &["status", "updatedNumberScheduled"])),
        json!(i(o, &["status", "numberAvailable"])),
        json!(format_labels(get(
            o,
            &["spec", "template", "spec", "nodeSelector"]
        ))),
        ctx.age(o),
        names,
        images,
        json!(format_label_selector(get(o, &["spec", "selector"]))),
    ])
}

fn sts_row(o: &Value, ctx: &Ctx) -> Row {
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(format!(
            "{}/{}",
            i(o, &["status", "readyReplicas"]),
            replicas(o)
        )),
        ctx.age(o),
        names,
        images,
    ])
}

fn deployment_row(o: &Value, ctx: &Ctx) -> Row {
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    let selector =
        selector_string(get(o, &["spec", "selector"])).unwrap_or_else(|()| "<invalid>".into());
    Row::new(vec![
        name_cell(o),
        json!(format!(
            "{}/{}",
            i(o, &["status", "readyReplicas"]),
            replicas(o)
        )),
        json!(i(o, &["status", "updatedReplicas"])),
        json!(i(o, &["status", "availableReplicas"])),
        ctx.age(o),
        names,
        images,
        json!(selector),
    ])
}

fn job_condition(o: &Value, ty: &str) -> bool {
    arr(o, &["status", "conditions"])
        .iter()
        .find(|c| s(c, &["type"]) == ty)
        .is_some_and(|c| s(c, &["status"]) == "True")
}

fn job_row(o: &Value, ctx: &Ctx) -> Row {
    let succeeded = i(o, &["status", "succeeded"]);
    let completions = match get(o, &["spec", "completions"]).and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => {
            let parallelism = i(o, &["spec", "parallelism"]);
            if parallelism > 1 {
                format!("{succeeded}/1 of {parallelism}")
            } else {
                format!("{succeeded}/1")
            }
        }
    };
    let start = get(o, &["status", "startTime"]).and_then(parse_ts);
    let done = get(o, &["status", "completionTime"]).and_then(parse_ts);
    let duration = match (start, done) {
        (None, _) => String::new(),
        (Some(st), None) => human_duration(ctx.now.duration_since(st)),
        (Some(st), Some(end)) => human_duration(end.duration_since(st)),
    };
    let status = if job_condition(o, "Complete") {
        "Complete"
    } else if job_condition(o, "Failed") {
        "Failed"
    } else if get(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating"
    } else if job_condition(o, "Suspended") {
        "Suspended"
    } else if job_condition(o, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (names, images) = containers_cells(arr(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(status),
        json!(completions),
        json!(duration),
        ctx.age(o),
        names,
        images,
        json!(format_label_selector(get(o, &["spec", "selector"]))),
    ])
}

fn cronjob_row(o: &Value, ctx: &Ctx) -> Row {
    let last = match get(o, &["status", "lastScheduleTime"]) {
        Some(t) => ctx.since(Some(t)),
        None => "<none>".into(),
    };
    let tz = get(o, &["spec", "timeZone"])
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let job_spec = get(o, &["spec", "jobTemplate", "spec"]).unwrap_or(&Value::Null);
    let (names, images) = containers_cells(arr(job_spec, &["template", "spec", "containers"]));
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "schedule"])),
        json!(tz),
        json!(bool_ptr(b(o, &["spec", "suspend"]))),
        json!(arr(o, &["status", "active"]).len()),
        json!(last),
        ctx.age(o),
        names,
        images,
        json!(format_label_selector(get(job_spec, &["selector"]))),
    ])
}

// ---------------------------------------------------------------------------------------------
// Services and networking

/// IPs/hostnames of a load-balancer status, sorted and de-duplicated, comma-joined. The server
/// always renders the wide form, so nothing is truncated.
fn lb_status(o: &Value) -> String {
    let mut set: Vec<String> = arr(o, &["status", "loadBalancer", "ingress"])
        .iter()
        .filter_map(|e| {
            let ip = s(e, &["ip"]);
            let host = s(e, &["hostname"]);
            if !ip.is_empty() {
                Some(ip.to_string())
            } else if !host.is_empty() {
                Some(host.to_string())
            } else {
                None
            }
        })
        .collect();
    set.sort();
    set.dedup();
    set.join(",")
}

fn strings(o: &Value, path: &[&str]) -> Vec<String> {
    arr(o, path)
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn service_row(o: &Value, ctx: &Ctx) -> Row {
    let ty = get(o, &["spec", "type"])
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let cluster_ip = arr(o, &["spec", "clusterIPs"])
        .first()
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| "<none>".into());
    let external = strings(o, &["spec", "externalIPs"]);
    let external_ip = match ty {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".into()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let lb = lb_status(o);
            if !external.is_empty() {
                let mut results: Vec<String> = Vec::new();
                if !lb.is_empty() {
                    results.extend(lb.split(',').map(str::to_string));
                }
                results.extend(external);
                results.join(",")
            } else if !lb.is_empty() {
                lb
            } else {
                "<pending>".into()
            }
        }
        "ExternalName" => s(o, &["spec", "externalName"]).to_string(),
        _ => "<unknown>".into(),
    };
    let ports: Vec<String> = arr(o, &["spec", "ports"])
        .iter()
        .map(|p| {
            let proto = get(p, &["protocol"])
                .and_then(Value::as_str)
                .unwrap_or("TCP");
            let node_port = i(p, &["nodePort"]);
            if node_port > 0 {
                format!("{}:{}/{}", i(p, &["port"]), node_port, proto)
            } else {
                format!("{}/{}", i(p, &["port"]), proto)
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    Row::new(vec![
        name_cell(o),
        json!(ty),
        json!(cluster_ip),
        json!(external_ip),
        json!(ports),
        ctx.age(o),
        json!(format_labels(get(o, &["spec", "selector"]))),
    ])
}

fn ingress_row(o: &Value, ctx: &Ctx) -> Row {
    let class = get(o, &["spec", "ingressClassName"])
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let rules = arr(o, &["spec", "rules"]);
    let max = 3;
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for r in rules {
        if list.len() == max {
            more = true;
        }
        let host = s(r, &["host"]);
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    let hosts = if list.is_empty() {
        "*".to_string()
    } else if more {
        format!("{} + {} more...", list.join(","), rules.len() - max)
    } else {
        list.join(",")
    };
    let ports = if arr(o, &["spec", "tls"]).is_empty() {
        "80"
    } else {
        "80, 443"
    };
    Row::new(vec![
        name_cell(o),
        json!(class),
        json!(hosts),
        json!(lb_status(o)),
        json!(ports),
        ctx.age(o),
    ])
}

fn ingress_class_row(o: &Value, ctx: &Ctx) -> Row {
    let params = match get(o, &["spec", "parameters"]) {
        Some(p) => {
            let mut x = s(p, &["kind"]).to_string();
            if let Some(g) = get(p, &["apiGroup"]).and_then(Value::as_str) {
                x = format!("{x}.{g}");
            }
            format!("{x}/{}", s(p, &["name"]))
        }
        None => "<none>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "controller"])),
        json!(params),
        ctx.age(o),
    ])
}

fn netpol_row(o: &Value, ctx: &Ctx) -> Row {
    // podSelector is a non-pointer struct upstream: absent means the empty selector.
    let empty = json!({});
    let sel = get(o, &["spec", "podSelector"]).unwrap_or(&empty);
    Row::new(vec![
        name_cell(o),
        json!(format_label_selector(Some(sel))),
        ctx.age(o),
    ])
}

fn host_port(ip: &str, port: i64) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

fn endpoints_row(o: &Value, ctx: &Ctx) -> Row {
    let subsets = arr(o, &["subsets"]);
    let text = if subsets.is_empty() {
        "<none>".to_string()
    } else {
        let max = 3;
        let mut list: Vec<String> = Vec::new();
        let mut more = false;
        let mut count = 0usize;
        for ss in subsets {
            let addrs = arr(ss, &["addresses"]);
            let ports = arr(ss, &["ports"]);
            if ports.is_empty() {
                count += addrs.len();
                for a in addrs {
                    if list.len() == max {
                        more = true;
                        break;
                    }
                    list.push(s(a, &["ip"]).to_string());
                }
                continue;
            }
            for p in ports {
                count += addrs.len();
                for a in addrs {
                    if list.len() == max {
                        more = true;
                        break;
                    }
                    list.push(host_port(s(a, &["ip"]), i(p, &["port"])));
                }
            }
        }
        let ret = list.join(",");
        if more {
            format!("{ret} + {} more...", count - max)
        } else {
            ret
        }
    };
    Row::new(vec![name_cell(o), json!(text), ctx.age(o)])
}

fn es_row(o: &Value, ctx: &Ctx) -> Row {
    let max = 3;
    let (mut list, mut more, mut count) = (Vec::new(), false, 0usize);
    for p in arr(o, &["ports"]) {
        if list.len() < max {
            let port = if let Some(n) = get(p, &["port"]).and_then(Value::as_i64) {
                n.to_string()
            } else if let Some(n) = get(p, &["name"]).and_then(Value::as_str) {
                n.to_string()
            } else {
                "*".to_string()
            };
            list.push(port);
        } else if list.len() == max {
            more = true;
        }
        count += 1;
    }
    let ports = list_with_more(list, more, count, max);
    let (mut list, mut more, mut count) = (Vec::new(), false, 0usize);
    for e in arr(o, &["endpoints"]) {
        for a in arr(e, &["addresses"]) {
            if list.len() < max {
                list.push(a.as_str().unwrap_or("").to_string());
            } else if list.len() == max {
                more = true;
            }
            count += 1;
        }
    }
    let endpoints = list_with_more(list, more, count, max);
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["addressType"])),
        json!(ports),
        json!(endpoints),
        ctx.age(o),
    ])
}

fn scidr_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(strings(o, &["spec", "cidrs"]).join(",")),
        ctx.age(o),
    ])
}

// Upstream declares two columns but prints three cells (the age) for IPAddresses; we keep that.
fn ip_row(o: &Value, ctx: &Ctx) -> Row {
    let parent = match get(o, &["spec", "parentRef"]) {
        Some(p) => {
            let group = s(p, &["group"]);
            let resource = s(p, &["resource"]);
            let mut x = if group.is_empty() {
                resource.to_lowercase()
            } else {
                format!("{resource}.{group}").to_lowercase()
            };
            let ns = s(p, &["namespace"]);
            if !ns.is_empty() {
                x = format!("{x}/{ns}");
            }
            format!("{x}/{}", s(p, &["name"]))
        }
        None => "<none>".into(),
    };
    Row::new(vec![name_cell(o), json!(parent), ctx.age(o)])
}

// ---------------------------------------------------------------------------------------------
// Cluster and configuration objects

fn node_row(o: &Value, ctx: &Ctx) -> Row {
    let mut status: Vec<String> = Vec::new();
    // The last condition of a type wins, as in upstream's map.
    if let Some(c) = arr(o, &["status", "conditions"])
        .iter()
        .rev()
        .find(|c| s(c, &["type"]) == "Ready")
    {
        status.push(if s(c, &["status"]) == "True" {
            "Ready".into()
        } else {
            "NotReady".into()
        });
    }
    if status.is_empty() {
        status.push("Unknown".into());
    }
    if b(o, &["spec", "unschedulable"]) == Some(true) {
        status.push("SchedulingDisabled".into());
    }
    let mut roles: Vec<String> = Vec::new();
    if let Some(labels) = get(o, &["metadata", "labels"]).and_then(Value::as_object) {
        for (k, v) in labels {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.push(role.to_string());
                }
            } else if k == "kubernetes.io/role" {
                let v = v.as_str().unwrap_or("");
                if !v.is_empty() {
                    roles.push(v.to_string());
                }
            }
        }
    }
    roles.sort();
    roles.dedup();
    let roles = if roles.is_empty() {
        "<none>".to_string()
    } else {
        roles.join(",")
    };
    let address = |ty: &str| {
        arr(o, &["status", "addresses"])
            .iter()
            .find(|a| s(a, &["type"]) == ty)
            .map(|a| s(a, &["address"]).to_string())
            .unwrap_or_else(|| "<none>".into())
    };
    let info = |k: &str| {
        let v = s(o, &["status", "nodeInfo", k]);
        if v.is_empty() {
            "<unknown>".to_string()
        } else {
            v.to_string()
        }
    };
    Row::new(vec![
        name_cell(o),
        json!(status.join(",")),
        json!(roles),
        ctx.age(o),
        json!(s(o, &["status", "nodeInfo", "kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ])
}

/// Prints core/v1 and events.k8s.io/v1 Events alike (upstream converts both to the internal
/// Event before printing).
fn event_row(o: &Value, ctx: &Ctx) -> Row {
    let new_api = o.get("regarding").is_some()
        || o.get("note").is_some()
        || o.get("deprecatedSource").is_some()
        || s(o, &["apiVersion"]).starts_with("events.k8s.io/");
    let (involved, message, source, first, last, count) = if new_api {
        (
            "regarding",
            "note",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
        )
    } else {
        (
            "involvedObject",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
        )
    };
    let first_ts = match get(o, &[first]).and_then(parse_ts) {
        Some(_) => ctx.since(get(o, &[first])),
        None => ctx.since(get(o, &["eventTime"])),
    };
    let mut last_ts = match get(o, &[last]).and_then(parse_ts) {
        Some(_) => ctx.since(get(o, &[last])),
        None => first_ts.clone(),
    };
    let mut n = i(o, &[count]);
    if let Some(series) = get(o, &["series"]) {
        last_ts = ctx.since(get(series, &["lastObservedTime"]));
        n = i(series, &["count"]);
    } else if n == 0 {
        n = 1;
    }
    let kind = s(o, &[involved, "kind"]).to_lowercase();
    let target_name = s(o, &[involved, "name"]);
    let target = if target_name.is_empty() {
        kind
    } else {
        format!("{kind}/{target_name}")
    };
    let component = match s(o, &[source, "component"]) {
        "" => s(o, &["reportingController"]),
        c => c,
    };
    let host = match s(o, &[source, "host"]) {
        "" => s(o, &["reportingInstance"]),
        h => h,
    };
    let source_text = if host.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {host}")
    };
    Row::new(vec![
        json!(last_ts),
        json!(s(o, &["type"])),
        json!(s(o, &["reason"])),
        json!(target),
        json!(s(o, &[involved, "fieldPath"])),
        json!(source_text),
        json!(s(o, &[message]).trim()),
        json!(first_ts),
        json!(n),
        name_cell(o),
    ])
}

fn namespace_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["status", "phase"])),
        ctx.age(o),
    ])
}

fn secret_row(o: &Value, ctx: &Ctx) -> Row {
    // Internal Secret.Data merges stringData (write-only) into data.
    let mut keys: Vec<&String> = Vec::new();
    for field in ["data", "stringData"] {
        if let Some(m) = get(o, &[field]).and_then(Value::as_object) {
            keys.extend(m.keys());
        }
    }
    keys.sort();
    keys.dedup();
    let ty = get(o, &["type"])
        .and_then(Value::as_str)
        .unwrap_or("Opaque");
    Row::new(vec![name_cell(o), json!(ty), json!(keys.len()), ctx.age(o)])
}

fn sa_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(arr(o, &["secrets"]).len()),
        ctx.age(o),
    ])
}

fn configmap_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(obj_len(o, &["data"]) + obj_len(o, &["binaryData"])),
        ctx.age(o),
    ])
}

// ---------------------------------------------------------------------------------------------
// Storage

/// `helper.GetAccessModesAsString`.
fn access_modes(modes: &[Value]) -> String {
    let has = |m: &str| modes.iter().any(|v| v.as_str() == Some(m));
    let mut out = Vec::new();
    for (mode, short) in [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ] {
        if has(mode) {
            out.push(short);
        }
    }
    out.join(",")
}

/// Storage class of a PV/PVC: the beta annotation wins over `spec.storageClassName`.
fn storage_class(o: &Value) -> String {
    if let Some(c) = get(
        o,
        &[
            "metadata",
            "annotations",
            "volume.beta.kubernetes.io/storage-class",
        ],
    )
    .and_then(Value::as_str)
    {
        return c.to_string();
    }
    s(o, &["spec", "storageClassName"]).to_string()
}

fn quantity(o: &Value, path: &[&str]) -> String {
    scalar_text(get(o, path)).unwrap_or_else(|| "0".into())
}

fn unset_or(o: &Value, path: &[&str]) -> String {
    get(o, path)
        .and_then(Value::as_str)
        .unwrap_or("<unset>")
        .to_string()
}

fn pv_row(o: &Value, ctx: &Ctx) -> Row {
    let claim = match get(o, &["spec", "claimRef"]) {
        Some(c) => format!("{}/{}", s(c, &["namespace"]), s(c, &["name"])),
        None => String::new(),
    };
    let phase = if get(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating"
    } else {
        s(o, &["status", "phase"])
    };
    Row::new(vec![
        name_cell(o),
        json!(quantity(o, &["spec", "capacity", "storage"])),
        json!(access_modes(arr(o, &["spec", "accessModes"]))),
        json!(s(o, &["spec", "persistentVolumeReclaimPolicy"])),
        json!(phase),
        json!(claim),
        json!(storage_class(o)),
        json!(unset_or(o, &["spec", "volumeAttributesClassName"])),
        json!(s(o, &["status", "reason"])),
        ctx.age(o),
        json!(unset_or(o, &["spec", "volumeMode"])),
    ])
}

fn pvc_row(o: &Value, ctx: &Ctx) -> Row {
    let phase = if get(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating"
    } else {
        s(o, &["status", "phase"])
    };
    let volume = s(o, &["spec", "volumeName"]);
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity(o, &["status", "capacity", "storage"]),
            access_modes(arr(o, &["status", "accessModes"])),
        )
    };
    Row::new(vec![
        name_cell(o),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(storage_class(o)),
        json!(unset_or(o, &["spec", "volumeAttributesClassName"])),
        ctx.age(o),
        json!(unset_or(o, &["spec", "volumeMode"])),
    ])
}

/// The first `Healthy` condition decides: True is Healthy, anything else Unhealthy, none
/// Unknown.
fn component_status_row(o: &Value, _ctx: &Ctx) -> Row {
    let healthy = arr(o, &["conditions"])
        .iter()
        .find(|c| s(c, &["type"]) == "Healthy");
    let (status, message, error) = match healthy {
        None => ("Unknown", "", ""),
        Some(c) => (
            if s(c, &["status"]) == "True" {
                "Healthy"
            } else {
                "Unhealthy"
            },
            s(c, &["message"]),
            s(c, &["error"]),
        ),
    };
    Row::new(vec![
        name_cell(o),
        json!(status),
        json!(message),
        json!(error),
    ])
}

fn sc_row(o: &Value, ctx: &Ctx) -> Row {
    let ann = |k: &str| s(o, &["metadata", "annotations", k]) == "true";
    let mut name = s(o, &["metadata", "name"]).to_string();
    if ann("storageclass.kubernetes.io/is-default-class")
        || ann("storageclass.beta.kubernetes.io/is-default-class")
    {
        name.push_str(" (default)");
    }
    let reclaim = get(o, &["reclaimPolicy"])
        .and_then(Value::as_str)
        .unwrap_or("Delete");
    let binding = get(o, &["volumeBindingMode"])
        .and_then(Value::as_str)
        .unwrap_or("Immediate");
    Row::new(vec![
        json!(name),
        json!(s(o, &["provisioner"])),
        json!(reclaim),
        json!(binding),
        json!(b(o, &["allowVolumeExpansion"]).unwrap_or(false)),
        ctx.age(o),
    ])
}

fn va_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "attacher"])),
        json!(s(o, &["spec", "source", "persistentVolumeName"])),
        json!(s(o, &["spec", "nodeName"])),
        json!(b(o, &["status", "attached"]).unwrap_or(false)),
        ctx.age(o),
    ])
}

fn csinode_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(arr(o, &["spec", "drivers"]).len()),
        ctx.age(o),
    ])
}

fn csidriver_row(o: &Value, ctx: &Ctx) -> Row {
    let modes = strings(o, &["spec", "volumeLifecycleModes"]).join(",");
    let tokens = match get(o, &["spec", "tokenRequests"]).and_then(Value::as_array) {
        Some(t) => t
            .iter()
            .map(|x| s(x, &["audience"]).to_string())
            .collect::<Vec<_>>()
            .join(","),
        None => "<unset>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(b(o, &["spec", "attachRequired"]).unwrap_or(true)),
        json!(b(o, &["spec", "podInfoOnMount"]).unwrap_or(false)),
        json!(b(o, &["spec", "storageCapacity"]).unwrap_or(false)),
        json!(tokens),
        json!(b(o, &["spec", "requiresRepublish"]).unwrap_or(false)),
        json!(or_none(&modes)),
        ctx.age(o),
    ])
}

fn csc_row(o: &Value, _: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["storageClassName"])),
        json!(scalar_text(get(o, &["capacity"])).unwrap_or_else(|| "<unset>".into())),
    ])
}

// ---------------------------------------------------------------------------------------------
// Autoscaling, policy, RBAC, certificates, coordination, scheduling, node

/// `formatHPAMetrics` over autoscaling/v2 metric specs and statuses.
fn hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".into();
    }
    let max = 2;
    let mut list: Vec<String> = Vec::new();
    for (idx, spec) in specs.iter().enumerate() {
        let status = statuses.get(idx);
        let cur = |src: &str, field: &str| -> Option<String> {
            let st = status?.get(src)?;
            scalar_text(get(st, &["current", field]))
        };
        // A nil *Quantity prints as "<nil>" upstream.
        let txt = |v: Option<&Value>| scalar_text(v).unwrap_or_else(|| "<nil>".into());
        let entry = match s(spec, &["type"]) {
            "External" | "Object" => {
                let src = if s(spec, &["type"]) == "External" {
                    "external"
                } else {
                    "object"
                };
                let target = get(spec, &[src, "target"]).unwrap_or(&Value::Null);
                if let Some(avg) = get(target, &["averageValue"]) {
                    let current = cur(src, "averageValue").unwrap_or_else(|| "<unknown>".into());
                    format!("{current}/{} (avg)", txt(Some(avg)))
                } else {
                    let current = if status.and_then(|st| st.get(src)).is_some() {
                        cur(src, "value").unwrap_or_else(|| "<nil>".into())
                    } else {
                        "<unknown>".into()
                    };
                    format!("{current}/{}", txt(get(target, &["value"])))
                }
            }
            "Pods" => {
                let current = if status.and_then(|st| st.get("pods")).is_some() {
                    cur("pods", "averageValue").unwrap_or_else(|| "<nil>".into())
                } else {
                    "<unknown>".into()
                };
                format!(
                    "{current}/{}",
                    txt(get(spec, &["pods", "target", "averageValue"]))
                )
            }
            "Resource" | "ContainerResource" => {
                let src = if s(spec, &["type"]) == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let name = s(spec, &[src, "name"]);
                let target = get(spec, &[src, "target"]).unwrap_or(&Value::Null);
                if let Some(avg) = get(target, &["averageValue"]) {
                    let current = if status.and_then(|st| st.get(src)).is_some() {
                        cur(src, "averageValue").unwrap_or_else(|| "<nil>".into())
                    } else {
                        "<unknown>".into()
                    };
                    format!("{name}: {current}/{}", txt(Some(avg)))
                } else {
                    let current = cur(src, "averageUtilization")
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<unknown>".into());
                    let target = get(target, &["averageUtilization"])
                        .and_then(Value::as_i64)
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<auto>".into());
                    format!("{name}: {current}/{target}")
                }
            }
            _ => "<unknown type>".into(),
        };
        list.push(entry);
    }
    let count = list.len();
    if count > max {
        list.truncate(max);
        return format!("{} + {} more...", list.join(", "), count - max);
    }
    list.join(", ")
}

fn hpa_row(o: &Value, ctx: &Ctx) -> Row {
    let reference = format!(
        "{}/{}",
        s(o, &["spec", "scaleTargetRef", "kind"]),
        s(o, &["spec", "scaleTargetRef", "name"])
    );
    let metrics = if let Some(target) = get(o, &["spec", "targetCPUUtilizationPercentage"]) {
        // autoscaling/v1 shape: one CPU utilization metric.
        let spec = json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}}]);
        let status = match get(o, &["status", "currentCPUUtilizationPercentage"]) {
            Some(c) => {
                json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": c}}}])
            }
            None => json!([]),
        };
        hpa_metrics(arr(&spec, &[]), arr(&status, &[]))
    } else {
        hpa_metrics(
            arr(o, &["spec", "metrics"]),
            arr(o, &["status", "currentMetrics"]),
        )
    };
    let min = match get(o, &["spec", "minReplicas"]).and_then(Value::as_i64) {
        Some(m) => m.to_string(),
        None => "<unset>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(reference),
        json!(metrics),
        json!(min),
        json!(i(o, &["spec", "maxReplicas"])),
        json!(i(o, &["status", "currentReplicas"])),
        ctx.age(o),
    ])
}

fn binding_row(o: &Value, ctx: &Ctx) -> Row {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for subj in arr(o, &["subjects"]) {
        let name = s(subj, &["name"]);
        match s(subj, &["kind"]) {
            "ServiceAccount" => sas.push(format!("{}/{name}", s(subj, &["namespace"]))),
            "User" => users.push(name.to_string()),
            "Group" => groups.push(name.to_string()),
            _ => {}
        }
    }
    Row::new(vec![
        name_cell(o),
        json!(format!(
            "{}/{}",
            s(o, &["roleRef", "kind"]),
            s(o, &["roleRef", "name"])
        )),
        ctx.age(o),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(sas.join(", ")),
    ])
}

fn csr_row(o: &Value, ctx: &Ctx) -> Row {
    let conds = arr(o, &["status", "conditions"]);
    let has = |t: &str| conds.iter().any(|c| s(c, &["type"]) == t);
    let mut status = if has("Denied") {
        "Denied".to_string()
    } else if has("Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has("Failed") {
        status.push_str(",Failed");
    }
    if !s(o, &["status", "certificate"]).is_empty() {
        status.push_str(",Issued");
    }
    let duration = match get(o, &["spec", "expirationSeconds"]).and_then(Value::as_i64) {
        Some(secs) => human_duration(SignedDuration::from_secs(secs)),
        None => "<none>".into(),
    };
    Row::new(vec![
        name_cell(o),
        ctx.age(o),
        json!(or_none(s(o, &["spec", "signerName"]))),
        json!(s(o, &["spec", "username"])),
        json!(duration),
        json!(status),
    ])
}

fn lease_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "holderIdentity"])),
        ctx.age(o),
    ])
}

fn controller_revision_row(o: &Value, ctx: &Ctx) -> Row {
    let controller = arr(o, &["metadata", "ownerReferences"])
        .iter()
        .find(|r| b(r, &["controller"]) == Some(true))
        .map(|r| {
            let api_version = s(r, &["apiVersion"]);
            let group = match api_version.split_once('/') {
                Some((g, _)) => g,
                None => "",
            };
            let kind = s(r, &["kind"]);
            let name = s(r, &["name"]);
            if group.is_empty() && kind.is_empty() {
                name.to_string()
            } else if group.is_empty() {
                format!("{}/{name}", kind.to_lowercase())
            } else {
                format!("{}/{name}", format!("{kind}.{group}").to_lowercase())
            }
        })
        .unwrap_or_else(|| "<none>".into());
    Row::new(vec![
        name_cell(o),
        json!(controller),
        json!(i(o, &["revision"])),
        ctx.age(o),
    ])
}

fn quota_row(o: &Value, ctx: &Ctx) -> Row {
    let mut names: Vec<&String> = get(o, &["status", "hard"])
        .and_then(Value::as_object)
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    names.sort();
    let (mut req, mut lim) = (Vec::new(), Vec::new());
    for n in names {
        let used = scalar_text(get(o, &["status", "used", n])).unwrap_or_else(|| "0".into());
        let hard = scalar_text(get(o, &["status", "hard", n])).unwrap_or_else(|| "0".into());
        let entry = format!("{n}: {used}/{hard}");
        let pieces: Vec<&str> = n.split('.').collect();
        if pieces.len() > 1 && pieces[0] == "limits" {
            lim.push(entry);
        } else {
            req.push(entry);
        }
    }
    Row::new(vec![
        name_cell(o),
        json!(req.join(", ")),
        json!(lim.join(", ")),
        ctx.age(o),
    ])
}

fn pc_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(i(o, &["value"])),
        json!(b(o, &["globalDefault"]).unwrap_or(false)),
        ctx.age(o),
        json!(s(o, &["preemptionPolicy"])),
    ])
}

// Upstream's description for "Handler" is ObjectMeta's (nonexistent) "handler" doc: empty.
fn runtimeclass_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![name_cell(o), json!(s(o, &["handler"])), ctx.age(o)])
}

// ---------------------------------------------------------------------------------------------
// Admission and flow control

fn webhook_row(o: &Value, ctx: &Ctx) -> Row {
    Row::new(vec![
        name_cell(o),
        json!(arr(o, &["webhooks"]).len()),
        ctx.age(o),
    ])
}

fn vap_row(o: &Value, ctx: &Ctx) -> Row {
    let param_kind = match get(o, &["spec", "paramKind"]) {
        Some(p) => format!("{}/{}", s(p, &["apiVersion"]), s(p, &["kind"])),
        None => "<unset>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(arr(o, &["spec", "validations"]).len()),
        json!(param_kind),
        ctx.age(o),
    ])
}

/// Go's generated `(*LabelSelector).String()` rendering.
fn go_label_selector(sel: &Value) -> String {
    let mut labels: Vec<(String, String)> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    labels.sort();
    let labels: String = labels.iter().map(|(k, v)| format!("{k}: {v},")).collect();
    let exprs: Vec<String> = arr(sel, &["matchExpressions"])
        .iter()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}}",
                s(e, &["key"]),
                s(e, &["operator"]),
                strings(e, &["values"]).join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{}}},}}",
        exprs.join(",")
    )
}

fn vapb_row(o: &Value, ctx: &Ctx) -> Row {
    let param = match get(o, &["spec", "paramRef"]) {
        Some(pr) => {
            let name = s(pr, &["name"]);
            if !name.is_empty() {
                match s(pr, &["namespace"]) {
                    "" => format!("*/{name}"),
                    ns => format!("{ns}/{name}"),
                }
            } else if let Some(sel) = get(pr, &["selector"]) {
                go_label_selector(sel)
            } else {
                "<unset>".into()
            }
        }
        None => "<unset>".into(),
    };
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "policyName"])),
        json!(param),
        ctx.age(o),
    ])
}

fn fs_row(o: &Value, ctx: &Ctx) -> Row {
    let dist = get(o, &["spec", "distinguisherMethod"])
        .map(|d| s(d, &["type"]).to_string())
        .unwrap_or_else(|| "<none>".into());
    let missing = arr(o, &["status", "conditions"])
        .iter()
        .find(|c| s(c, &["type"]) == "Dangling")
        .map(|c| s(c, &["status"]).to_string())
        .unwrap_or_else(|| "?".into());
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "priorityLevelConfiguration", "name"])),
        json!(i(o, &["spec", "matchingPrecedence"])),
        json!(dist),
        ctx.age(o),
        json!(missing),
    ])
}

fn pl_row(o: &Value, ctx: &Ctx) -> Row {
    let none = || json!("<none>");
    let (mut ncs, mut queues, mut hand, mut qll) = (none(), none(), none(), none());
    if let Some(limited) = get(o, &["spec", "limited"]) {
        ncs = json!(i(limited, &["nominalConcurrencyShares"]));
        if let Some(q) = get(limited, &["limitResponse", "queuing"]) {
            queues = json!(i(q, &["queues"]));
            hand = json!(i(q, &["handSize"]));
            qll = json!(i(q, &["queueLengthLimit"]));
        }
    }
    Row::new(vec![
        name_cell(o),
        json!(s(o, &["spec", "type"])),
        ncs,
        queues,
        hand,
        qll,
        ctx.age(o),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printer(group: &str, resource: &str) -> Printer {
        crate::registry::builtin::registry()
            .snapshot()
            .resolve(group, resource)
            .map(|r| r.strategy.printer())
            .unwrap_or(DEFAULT)
    }

    fn table(
        group: &str,
        resource: &str,
        items: &[Value],
        list_meta: Value,
        include: IncludeObject,
        api_version: &str,
        now: Timestamp,
    ) -> Value {
        super::table(
            printer(group, resource),
            items,
            list_meta,
            include,
            api_version,
            now,
        )
    }

    fn column_names(group: &str, resource: &str) -> Vec<&'static str> {
        super::column_names(printer(group, resource))
    }

    fn now() -> Timestamp {
        "2025-06-01T12:00:00Z".parse().unwrap()
    }

    fn cells(group: &str, resource: &str, obj: Value) -> Vec<Value> {
        let t = table(
            group,
            resource,
            &[obj],
            json!({"resourceVersion": "7"}),
            IncludeObject::None,
            "v1",
            now(),
        );
        t["rows"][0]["cells"].as_array().unwrap().clone()
    }

    #[test]
    fn human_durations() {
        let cases: &[(i64, &str)] = &[
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (5, "5s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (599, "9m59s"),
            (600, "10m"),
            (179 * 60 + 59, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 120, "3h2m"),
            (8 * 3600, "8h"),
            (47 * 3600 + 3599, "47h"),
            (48 * 3600, "2d"),
            (50 * 3600, "2d2h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            ((3 * 365 + 45) * 86400, "3y45d"),
            (8 * 365 * 86400, "8y"),
            (20 * 365 * 86400, "20y"),
        ];
        for &(secs, want) in cases {
            assert_eq!(
                human_duration(SignedDuration::from_secs(secs)),
                want,
                "{secs}"
            );
        }
        assert_eq!(human_duration(SignedDuration::from_millis(-1500)), "0s");
    }

    #[test]
    fn selectors() {
        let cases = [
            (json!(null), "<none>"),
            (json!({}), "<none>"),
            (json!({"matchLabels": {"b": "2", "a": "1"}}), "a=1,b=2"),
            (
                json!({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]}, {"key": "app", "operator": "Exists"}]}),
                "app,env in (dev,prod)",
            ),
            (
                json!({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["a"]}, {"key": "y", "operator": "DoesNotExist"}]}),
                "x notin (a),!y",
            ),
            (
                json!({"matchExpressions": [{"key": "x", "operator": "Bad"}]}),
                "<error>",
            ),
        ];
        for (sel, want) in cases {
            let sel = if sel.is_null() { None } else { Some(&sel) };
            assert_eq!(format_label_selector(sel), want);
        }
        assert_eq!(format_labels(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
        assert_eq!(format_labels(None), "<none>");
    }

    fn pod(status: Value, extra_meta: Value) -> Value {
        let mut meta = json!({"name": "web", "namespace": "default", "creationTimestamp": "2025-06-01T11:55:00Z"});
        if let (Some(m), Some(x)) = (meta.as_object_mut(), extra_meta.as_object()) {
            m.extend(x.clone());
        }
        json!({
            "metadata": meta,
            "spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "busybox"}], "nodeName": "n1"},
            "status": status,
        })
    }

    #[test]
    fn pod_status_cells() {
        let running = json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
            "podIPs": [{"ip": "10.0.0.5"}],
            "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}},
                 "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2025-06-01T11:59:00Z"}}},
                {"name": "b", "ready": true, "restartCount": 0, "state": {"running": {}}}]});
        // (status, extra metadata, ready, status column, restarts)
        let cases = [
            (running.clone(), json!({}), "2/2", "Running", "2 (60s ago)"),
            (
                running,
                json!({"deletionTimestamp": "2025-06-01T12:00:00Z"}),
                "2/2",
                "Terminating",
                "2 (60s ago)",
            ),
            (
                json!({"phase": "Pending"}),
                json!({}),
                "0/2",
                "Pending",
                "0",
            ),
            (
                json!({"phase": "Pending", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}},
                {"name": "b", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}),
                json!({}),
                "0/2",
                "ContainerCreating",
                "0",
            ),
            (
                json!({"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 5, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}),
                json!({}),
                "0/2",
                "CrashLoopBackOff",
                "5",
            ),
            (
                json!({"phase": "Succeeded", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}),
                json!({"deletionTimestamp": "2025-06-01T12:00:00Z"}),
                "0/2",
                "Completed",
                "0",
            ),
            (
                json!({"phase": "Failed", "reason": "Evicted"}),
                json!({}),
                "0/2",
                "Evicted",
                "0",
            ),
            (
                json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
                json!({}),
                "0/2",
                "SchedulingGated",
                "0",
            ),
            (
                json!({"phase": "Running", "reason": "NodeLost"}),
                json!({"deletionTimestamp": "2025-06-01T12:00:00Z"}),
                "0/2",
                "Unknown",
                "0",
            ),
            (
                json!({"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 137, "signal": 0}}}]}),
                json!({}),
                "0/2",
                "ExitCode:137",
                "0",
            ),
        ];
        for (status, meta, ready, st, restarts) in cases {
            let c = cells("", "pods", pod(status, meta));
            assert_eq!(c[0], "web");
            assert_eq!(c[1], ready, "{st}");
            assert_eq!(c[2], st);
            assert_eq!(c[3], restarts, "{st}");
            assert_eq!(c[4], "5m");
            assert_eq!(c[6], "n1");
            assert_eq!(c[7], "<none>");
            assert_eq!(c[8], "<none>");
        }
    }

    #[test]
    fn pod_init_containers() {
        let mut p = pod(
            json!({"phase": "Pending", "initContainerStatuses": [
                {"name": "init1", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
                {"name": "init2", "restartCount": 0, "state": {"running": {}}}]}),
            json!({}),
        );
        p["spec"]["initContainers"] = json!([{"name": "init1"}, {"name": "init2"}, {"name": "side", "restartPolicy": "Always"}]);
        let c = cells("", "pods", p.clone());
        assert_eq!(c[1], "0/3");
        assert_eq!(c[2], "Init:1/3");
        p["status"]["initContainerStatuses"][1]["state"] =
            json!({"waiting": {"reason": "ErrImagePull"}});
        assert_eq!(cells("", "pods", p.clone())[2], "Init:ErrImagePull");
        p["status"]["initContainerStatuses"][1]["state"] = json!({"terminated": {"exitCode": 2}});
        assert_eq!(cells("", "pods", p)[2], "Init:ExitCode:2");
    }

    #[test]
    fn pod_row_conditions_and_objects() {
        let p = pod(json!({"phase": "Succeeded"}), json!({}));
        for (include, want) in [
            (IncludeObject::None, json!(null)),
            (
                IncludeObject::Metadata,
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": p["metadata"].clone()}),
            ),
            (IncludeObject::Object, p.clone()),
        ] {
            let t = table(
                "",
                "pods",
                std::slice::from_ref(&p),
                json!({"resourceVersion": "9"}),
                include,
                "v1",
                now(),
            );
            assert_eq!(t["rows"][0]["object"], want);
            assert_eq!(t["metadata"]["resourceVersion"], "9");
            assert_eq!(
                t["rows"][0]["conditions"],
                json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}])
            );
        }
        let t = table(
            "",
            "pods",
            &[],
            json!({}),
            IncludeObject::Metadata,
            "meta.k8s.io/v1beta1",
            now(),
        );
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["rows"], json!([]));
        assert_eq!(
            t["columnDefinitions"][0],
            json!({"name": "Name", "type": "string", "format": "name", "description": cols::META_V1_OBJECT_META_NAME, "priority": 0})
        );
        assert_eq!(t["columnDefinitions"][5]["priority"], 1);
        assert_eq!(IncludeObject::parse(""), Some(IncludeObject::Metadata));
        assert_eq!(IncludeObject::parse("Object"), Some(IncludeObject::Object));
        assert_eq!(IncludeObject::parse("bogus"), None);
    }

    #[test]
    fn deployment_cells() {
        let d = json!({
            "metadata": {"name": "nginx", "creationTimestamp": "2025-05-30T12:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
                     "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        });
        assert_eq!(
            cells("apps", "deployments", d),
            vec![
                json!("nginx"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("2d"),
                json!("nginx"),
                json!("nginx:1.27"),
                json!("app=nginx")
            ]
        );
        assert_eq!(
            column_names("apps", "deployments"),
            [
                "Name",
                "Ready",
                "Up-to-date",
                "Available",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
    }

    #[test]
    fn service_cells() {
        let base = |spec: Value| json!({"metadata": {"name": "svc", "creationTimestamp": "2025-06-01T11:59:30Z"}, "spec": spec});
        let cases = [
            (
                base(
                    json!({"type": "ClusterIP", "clusterIPs": ["10.96.0.10"], "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}], "selector": {"k8s-app": "kube-dns"}}),
                ),
                vec![
                    "svc",
                    "ClusterIP",
                    "10.96.0.10",
                    "<none>",
                    "53/UDP,53/TCP",
                    "30s",
                    "k8s-app=kube-dns",
                ],
            ),
            (
                base(
                    json!({"type": "NodePort", "clusterIPs": ["10.96.1.1"], "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}),
                ),
                vec![
                    "svc",
                    "NodePort",
                    "10.96.1.1",
                    "<none>",
                    "80:30080/TCP",
                    "30s",
                    "<none>",
                ],
            ),
            (
                base(
                    json!({"type": "LoadBalancer", "clusterIPs": ["10.96.1.2"], "ports": [{"port": 443, "nodePort": 31443}]}),
                ),
                vec![
                    "svc",
                    "LoadBalancer",
                    "10.96.1.2",
                    "<pending>",
                    "443:31443/TCP",
                    "30s",
                    "<none>",
                ],
            ),
            (
                base(json!({"type": "ExternalName", "externalName": "example.com"})),
                vec![
                    "svc",
                    "ExternalName",
                    "<none>",
                    "example.com",
                    "<none>",
                    "30s",
                    "<none>",
                ],
            ),
        ];
        for (svc, want) in cases {
            let want: Vec<Value> = want.into_iter().map(|x| json!(x)).collect();
            assert_eq!(cells("", "services", svc), want);
        }
    }

    #[test]
    fn event_cells() {
        let core = json!({
            "metadata": {"name": "web.17a", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
            "reason": "Pulled", "message": "Successfully pulled image \"nginx\" \n", "type": "Normal",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2025-06-01T11:50:00Z", "lastTimestamp": "2025-06-01T11:58:00Z", "count": 3,
        });
        assert_eq!(
            cells("", "events", core),
            vec![
                json!("2m"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/web"),
                json!("spec.containers{a}"),
                json!("kubelet, n1"),
                json!("Successfully pulled image \"nginx\""),
                json!("10m"),
                json!(3),
                json!("web.17a")
            ]
        );
        let new_api = json!({
            "apiVersion": "events.k8s.io/v1",
            "metadata": {"name": "e2", "namespace": "default"},
            "regarding": {"kind": "Node", "name": "n1"},
            "reason": "Starting", "note": "hello", "type": "Normal",
            "eventTime": "2025-06-01T11:59:55.000000Z", "reportingController": "kubelet", "reportingInstance": "n1",
        });
        assert_eq!(
            cells("events.k8s.io", "events", new_api),
            vec![
                json!("5s"),
                json!("Normal"),
                json!("Starting"),
                json!("node/n1"),
                json!(""),
                json!("kubelet, n1"),
                json!("hello"),
                json!("5s"),
                json!(1),
                json!("e2")
            ]
        );
        assert_eq!(
            column_names("", "events"),
            [
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "Subobject",
                "Source",
                "Message",
                "First Seen",
                "Count",
                "Name"
            ]
        );
    }

    #[test]
    fn misc_cells() {
        let cm = json!({"metadata": {"name": "c", "creationTimestamp": "2025-06-01T11:00:00Z"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}});
        assert_eq!(
            cells("", "configmaps", cm),
            vec![json!("c"), json!(3), json!("60m")]
        );
        let secret = json!({"metadata": {"name": "s"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
        assert_eq!(
            cells("", "secrets", secret),
            vec![
                json!("s"),
                json!("kubernetes.io/tls"),
                json!(2),
                json!("<unknown>")
            ]
        );
        let ns = json!({"metadata": {"name": "default", "creationTimestamp": "2025-05-01T12:00:00Z"}, "status": {"phase": "Active"}});
        assert_eq!(
            cells("", "namespaces", ns),
            vec![json!("default"), json!("Active"), json!("31d")]
        );
        let lease = json!({"metadata": {"name": "l", "creationTimestamp": "2025-06-01T11:59:59Z"}, "spec": {"holderIdentity": "me"}});
        assert_eq!(
            cells("coordination.k8s.io", "leases", lease),
            vec![json!("l"), json!("me"), json!("1s")]
        );
        let crd = json!({"metadata": {"name": "foos.example.com", "creationTimestamp": "2025-06-01T10:00:00Z"}});
        assert_eq!(
            cells("apiextensions.k8s.io", "customresourcedefinitions", crd),
            vec![json!("foos.example.com"), json!("2025-06-01T10:00:00Z")]
        );
        assert_eq!(
            column_names("rbac.authorization.k8s.io", "roles"),
            ["Name", "Created At"]
        );
        let job = json!({"metadata": {"name": "j", "creationTimestamp": "2025-06-01T11:00:00Z"},
            "spec": {"completions": 1, "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}, "selector": {"matchLabels": {"a": "b"}}},
            "status": {"succeeded": 1, "startTime": "2025-06-01T11:00:00Z", "completionTime": "2025-06-01T11:00:42Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(
            cells("batch", "jobs", job),
            vec![
                json!("j"),
                json!("Complete"),
                json!("1/1"),
                json!("42s"),
                json!("60m"),
                json!("pi"),
                json!("perl"),
                json!("a=b")
            ]
        );
        let node = json!({"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.33.1"},
                       "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}});
        assert_eq!(
            cells("", "nodes", node),
            vec![
                json!("n1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane"),
                json!("<unknown>"),
                json!("v1.33.1"),
                json!("172.18.0.2"),
                json!("<none>"),
                json!("<unknown>"),
                json!("<unknown>"),
                json!("<unknown>")
            ]
        );
        let rb = json!({"metadata": {"name": "rb"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]});
        assert_eq!(
            cells("rbac.authorization.k8s.io", "rolebindings", rb),
            vec![
                json!("rb"),
                json!("ClusterRole/view"),
                json!("<unknown>"),
                json!("u"),
                json!(""),
                json!("ns/sa")
            ]
        );
    }

    #[test]
    fn every_builtin_resource_renders() {
        for r in crate::registry::resources::RESOURCES {
            let t = table(
                r.group,
                r.resource,
                &[json!({"metadata": {"name": "x"}})],
                json!({}),
                IncludeObject::None,
                "v1",
                now(),
            );
            let cols = t["columnDefinitions"].as_array().unwrap().len();
            let cells = t["rows"][0]["cells"].as_array().unwrap().len();
            // Upstream's IPAddress printer emits one more cell (the age) than it declares columns.
            let extra = usize::from(r.resource == "ipaddresses");
            assert_eq!(cols + extra, cells, "{}", r.resource);
        }
    }

    #[test]
    fn flowschemas_sorted_by_precedence() {
        let fs = |n: &str, p: i64| json!({"metadata": {"name": n}, "spec": {"matchingPrecedence": p, "priorityLevelConfiguration": {"name": "pl"}}});
        let t = table(
            "flowcontrol.apiserver.k8s.io",
            "flowschemas",
            &[fs("b", 1000), fs("a", 1000), fs("exempt", 1)],
            json!({}),
            IncludeObject::None,
            "v1",
            now(),
        );
        let names: Vec<&str> = t["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["cells"][0].as_str().unwrap())
            .collect();
        assert_eq!(names, ["exempt", "a", "b"]);
    }
}
