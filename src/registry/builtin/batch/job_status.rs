//! A Job's status writes (`jobs/status`), as kube's job status strategy checks them
//! (`ValidateJobUpdateStatus` with the options the strategy derives while JobManagedBy is on,
//! its v1.33 default): counters, uncounted pods, and the condition and timestamp rules, most of
//! them only when the fields they read changed.

use serde_json::Value;

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{go_time_string, time_before};
use crate::registry::builtin::checks::{list_of, nonneg_fields, status_of, str_of};

fn true_condition(obj: &Value, t: &str) -> bool {
    list_of(status_of(obj), "conditions")
        .iter()
        .any(|c| str_of(c, "type") == t && str_of(c, "status") == "True")
}

fn finished(obj: &Value) -> bool {
    true_condition(obj, "Complete") || true_condition(obj, "Failed")
}

fn field<'a>(obj: &'a Value, f: &str) -> Option<&'a Value> {
    status_of(obj).get(f).filter(|v| !v.is_null())
}

fn count(obj: &Value, f: &str) -> i64 {
    field(obj, f).and_then(Value::as_i64).unwrap_or(0)
}

fn spec_at<'a>(obj: &'a Value, f: &str) -> Option<&'a Value> {
    obj.get("spec")
        .and_then(|s| s.get(f))
        .filter(|v| !v.is_null())
}

/// `field.Invalid(status.conditions, OmitValue, msg)`.
fn conditions_error(msg: String) -> FieldError {
    let mut e = FieldError::invalid("status.conditions", Value::Null, msg);
    e.bad_value = None;
    e
}

/// Go's `%#v` of a `*metav1.Time` field value (printed through `String()`).
fn time_error(path: &str, t: &Value, msg: &str) -> FieldError {
    FieldError::invalid_rendered(path, &go_time_string(t.as_str().unwrap_or("")), msg)
}

/// Go's `%#v` of `batch.UncountedTerminatedPods`.
fn uncounted_repr(u: &Value) -> String {
    let uids = |k: &str| match u.get(k).and_then(Value::as_array) {
        None => "[]types.UID(nil)".to_string(),
        Some(a) => {
            let parts: Vec<String> = a
                .iter()
                .map(|s| go_quote(s.as_str().unwrap_or("")))
                .collect();
            format!("[]types.UID{{{}}}", parts.join(", "))
        }
    };
    format!(
        "batch.UncountedTerminatedPods{{Succeeded:{}, Failed:{}}}",
        uids("succeeded"),
        uids("failed")
    )
}

/// `ValidateJobStatusUpdate` (the metadata update is the store's).
pub fn validate(new: &Value, old: &Value) -> Vec<FieldError> {
    let st = status_of(new);
    let changed = |f: &str| field(new, f) != field(old, f);
    let flipped = |t: &str| true_condition(new, t) != true_condition(old, t);
    let finished_changed = finished(new) != finished(old);
    let complete_changed = flipped("Complete");
    let (complete, failed) = (
        true_condition(new, "Complete"),
        true_condition(new, "Failed"),
    );
    let failure_target = true_condition(new, "FailureTarget");
    let success_met = true_condition(new, "SuccessCriteriaMet");
    let indexed = spec_at(new, "completionMode").and_then(Value::as_str) == Some("Indexed");
    let mut errs = Vec::new();

    nonneg_fields(
        st,
        "status",
        &["active", "succeeded", "failed", "ready", "terminating"],
        &mut errs,
    );
    let uncounted = field(new, "uncountedTerminatedPods");
    if let Some(u) = uncounted {
        let mut seen: Vec<&str> = Vec::new();
        for list in ["succeeded", "failed"] {
            for (i, uid) in list_of(u, list).iter().enumerate() {
                let p = format!("status.uncountedTerminatedPods.{list}[{i}]");
                let uid = uid.as_str().unwrap_or("");
                if uid.is_empty() {
                    errs.push(FieldError::invalid(p, uid, "must not be empty"));
                } else if seen.contains(&uid) {
                    errs.push(FieldError::duplicate(p, uid));
                } else {
                    seen.push(uid);
                }
            }
        }
    }
    if (complete_changed || flipped("Failed")) && complete && failed {
        errs.push(conditions_error(
            "cannot set Complete=True and Failed=true conditions".into(),
        ));
    }
    if (complete_changed || flipped("FailureTarget")) && complete && failure_target {
        errs.push(conditions_error(
            "cannot set Complete=True and FailureTarget=true conditions".into(),
        ));
    }
    let completion = field(new, "completionTime");
    let start = field(new, "startTime");
    let times_changed = complete_changed || changed("completionTime");
    if times_changed {
        if let Some(t) = completion.filter(|_| !complete) {
            errs.push(time_error(
                "status.completionTime",
                t,
                "cannot set completionTime when there is no Complete=True condition",
            ));
        }
        if completion.is_none() && complete {
            errs.push(FieldError::required(
                "status.completionTime",
                "completionTime is required for Complete jobs",
            ));
        }
    }
    if changed("startTime") || changed("completionTime") {
        if let (Some(s), Some(c)) = (start, completion) {
            if before(c, s) {
                errs.push(time_error(
                    "status.completionTime",
                    c,
                    "completionTime cannot be set before startTime",
                ));
            }
        }
    }
    let active = count(new, "active");
    if (finished_changed || changed("active")) && active > 0 && finished(new) {
        errs.push(FieldError::invalid(
            "status.active",
            active,
            "active>0 is invalid for finished job",
        ));
    }
    if (finished_changed || changed("startTime")) && start.is_none() && finished(new) {
        errs.push(FieldError::required(
            "status.startTime",
            "startTime is required for finished job",
        ));
    }
    if finished_changed || changed("uncountedTerminatedPods") {
        if let Some(u) = uncounted {
            let pending = list_of(u, "succeeded").len() + list_of(u, "failed").len();
            if finished(new) && pending > 0 {
                errs.push(FieldError::invalid_rendered(
                    "status.uncountedTerminatedPods",
                    &uncounted_repr(u),
                    "uncountedTerminatedPods needs to be empty for finished job",
                ));
            }
        }
    }
    let completed = str_of(st, "completedIndexes");
    let completions = spec_at(new, "completions").and_then(Value::as_i64);
    let failed_indexes = field(new, "failedIndexes").and_then(Value::as_str);
    if let Some(n) = completions.filter(|_| changed("completedIndexes")) {
        if let Err(e) = indexes_format(completed, n) {
            errs.push(FieldError::invalid(
                "status.completedIndexes",
                completed,
                format!("error parsing completedIndexes: {e}"),
            ));
        }
    }
    let per_index = spec_at(new, "backoffLimitPerIndex").is_some();
    if let (Some(n), Some(f), true) = (completions, failed_indexes, per_index) {
        if changed("failedIndexes") {
            if let Err(e) = indexes_format(f, n) {
                errs.push(FieldError::invalid(
                    "status.failedIndexes",
                    f,
                    format!("error parsing failedIndexes: {e}"),
                ));
            }
        }
    }
    if changed("completedIndexes") && !completed.is_empty() && !indexed {
        errs.push(FieldError::invalid(
            "status.completedIndexes",
            completed,
            "cannot set non-empty completedIndexes when non-indexed completion mode",
        ));
    }
    if changed("failedIndexes") && spec_at(new, "backoffLimitPerIndex").is_none() {
        if let Some(f) = field(new, "failedIndexes") {
            errs.push(FieldError::invalid(
                "status.failedIndexes",
                f.clone(),
                "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
            ));
        }
    }
    if let (Some(n), Some(f)) = (completions, failed_indexes) {
        if changed("failedIndexes") || changed("completedIndexes") {
            if let Some(at) = overlap(completed, f, n) {
                errs.push(FieldError::invalid(
                    "status.failedIndexes",
                    f,
                    format!("failedIndexes and completedIndexes overlap at index: {at}"),
                ));
            }
        }
    }
    if success_met && failed {
        errs.push(conditions_error(
            "cannot set SuccessCriteriaMet=True and Failed=true conditions".into(),
        ));
    }
    if success_met && failure_target {
        errs.push(conditions_error(
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions".into(),
        ));
    }
    if spec_at(new, "successPolicy").is_some() && !success_met && complete {
        errs.push(conditions_error(
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"
                .into(),
        ));
    }

    // The transitions from the stored status.
    for t in ["Failed", "Complete", "FailureTarget"] {
        if true_condition(old, t) && !true_condition(new, t) {
            errs.push(conditions_error(format!(
                "cannot disable the terminal {t}=True condition"
            )));
        }
    }
    if count(new, "failed") < count(old, "failed") {
        errs.push(FieldError::invalid(
            "status.failed",
            count(new, "failed"),
            "cannot decrease the failed counter",
        ));
    }
    let scalable = indexed && spec_at(new, "completions") == spec_at(new, "parallelism");
    if !scalable && count(new, "succeeded") < count(old, "succeeded") {
        errs.push(FieldError::invalid(
            "status.succeeded",
            count(new, "succeeded"),
            "cannot decrease the succeeded counter",
        ));
    }
    if let (Some(c), Some(o)) = (completion, field(old, "completionTime")) {
        if c != o {
            errs.push(time_error(
                "status.completionTime",
                c,
                "completionTime cannot be mutated",
            ));
        }
    }
    let suspended = spec_at(new, "suspend").and_then(Value::as_bool) == Some(true);
    if field(old, "startTime").is_some() && changed("startTime") && !suspended {
        errs.push(FieldError::required(
            "status.startTime",
            "startTime cannot be removed for unsuspended job",
        ));
    }
    if true_condition(old, "SuccessCriteriaMet") && !success_met {
        errs.push(conditions_error(
            "cannot disable the SuccessCriteriaMet=True condition".into(),
        ));
    }
    if true_condition(old, "Complete") && !true_condition(old, "SuccessCriteriaMet") && success_met
    {
        errs.push(conditions_error(
            "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"
                .into(),
        ));
    }
    errs
}

/// `a.Before(b)` for two timestamps.
fn before(a: &Value, b: &Value) -> bool {
    time_before(a.as_str().unwrap_or(""), b.as_str().unwrap_or(""))
}

/// `parseIndexInterval`: `x` or `x-y` (increasing), each below `completions`.
fn index_interval(interval: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = interval.split('-').collect();
    if limits.len() > 2 {
        return Err(format!("the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'", go_quote(interval)));
    }
    let number = |s: &str| -> Result<i64, String> {
        let x: i64 = s.parse().map_err(|_| {
            format!(
                "cannot convert string to integer for index: {}",
                go_quote(s)
            )
        })?;
        if x >= completions {
            return Err(format!("too large index: {}", go_quote(s)));
        }
        Ok(x)
    };
    let x = number(limits.first().copied().unwrap_or(""))?;
    match limits.get(1) {
        None => Ok((x, x)),
        Some(y) => {
            let y = number(y)?;
            if x >= y {
                return Err(format!("non-increasing order, previous: {x}, current: {y}"));
            }
            Ok((x, y))
        }
    }
}

/// `validateIndexesFormat`: increasing intervals.
fn indexes_format(indexes: &str, completions: i64) -> Result<(), String> {
    if indexes.is_empty() {
        return Ok(());
    }
    let mut last: Option<i64> = None;
    for interval in indexes.split(',') {
        let (x, y) = index_interval(interval, completions)?;
        if let Some(l) = last.filter(|l| *l >= x) {
            return Err(format!("non-increasing order, previous: {l}, current: {x}"));
        }
        last = Some(y);
    }
    Ok(())
}

/// `validateFailedIndexesNotOverlapCompleted`: the first index both lists hold (intervals
/// that do not parse are skipped; their format is reported on its own).
fn overlap(completed: &str, failed: &str, completions: i64) -> Option<i64> {
    if completed.is_empty() || failed.is_empty() {
        return None;
    }
    let parse = |s: &str| -> Vec<Option<(i64, i64)>> {
        s.split(',')
            .map(|i| index_interval(i, completions).ok())
            .collect()
    };
    let (c, f) = (parse(completed), parse(failed));
    let (mut ci, mut fi) = (0, 0);
    while ci < c.len() && fi < f.len() {
        match (c.get(ci).copied().flatten(), f.get(fi).copied().flatten()) {
            (None, _) => ci += 1,
            (_, None) => fi += 1,
            (Some((cx, cy)), Some((fx, fy))) => {
                if cx <= fy && fx <= cy {
                    return Some(cx.max(fx));
                }
                if cx <= fx {
                    ci += 1;
                } else {
                    fi += 1;
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_lists_as_kube_parses_them() {
        assert_eq!(indexes_format("0,2-4", 5), Ok(()));
        assert_eq!(
            indexes_format("1,1", 3),
            Err("non-increasing order, previous: 1, current: 1".into())
        );
        assert_eq!(
            indexes_format("1-2-3", 5),
            Err("the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts separated by '-'".into())
        );
        assert_eq!(
            indexes_format("a", 5),
            Err("cannot convert string to integer for index: \"a\"".into())
        );
        assert_eq!(overlap("0-2,5", "3,4-5", 10), Some(5));
        assert_eq!(overlap("0-2", "x,3", 10), None);
    }
}
