//! Cron schedules as kube-apiserver checks them: robfig/cron v3's `ParseStandard` (five
//! fields, or a `@` descriptor, optionally after `TZ=`/`CRON_TZ=`), with its error texts.

/// The first error `cron.ParseStandard` reports for `spec`, if any.
pub fn parse_error(spec: &str) -> Option<String> {
    let mut spec = spec.trim().to_string();
    if spec.is_empty() {
        return Some("empty spec string".into());
    }
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let eq = spec.find('=').unwrap_or(0);
        let Some(sp) = spec.find(' ') else {
            // upstream slices to the first space; without one nothing is left to parse
            return Some("empty spec string".into());
        };
        let loc = spec[eq + 1..sp].to_string();
        if !known_time_zone(&loc) {
            return Some(format!(
                "provided bad location {loc}: unknown time zone {loc}"
            ));
        }
        spec = spec[sp..].trim().to_string();
    }
    if let Some(d) = spec.strip_prefix('@') {
        return descriptor(d, &spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    const MONTHS: &[&str] = &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bounds: [(u64, u64, Option<(&[&str], u64)>); 5] = [
        (0, 59, None),
        (0, 23, None),
        (1, 31, None),
        (1, 12, Some((MONTHS, 1))),
        (0, 6, Some((DAYS, 0))),
    ];
    for (field, (min, max, names)) in fields.iter().zip(bounds) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            if let Err(e) = range(expr, min, max, names) {
                return Some(e);
            }
        }
    }
    None
}

fn descriptor(d: &str, spec: &str) -> Option<String> {
    match d {
        "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => None,
        _ => match d.strip_prefix("every ") {
            Some(dur) if go_duration(dur) => None,
            Some(dur) => Some(format!(
                "failed to parse duration {spec}: time: invalid duration \"{dur}\""
            )),
            None => Some(format!("unrecognized descriptor: {spec}")),
        },
    }
}

/// Go's `time.ParseDuration` grammar: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, units ns..h.
fn go_duration(s: &str) -> bool {
    let s = s.trim_start_matches(['-', '+']);
    if s == "0" {
        return true;
    }
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let num = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num == 0 || rest[..num] == *"." {
            return false;
        }
        rest = &rest[num..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .iter()
            .filter(|u| rest.starts_with(**u))
            .max_by_key(|u| u.len());
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

fn must_parse_int(expr: &str) -> Result<u64, String> {
    match expr.parse::<i64>() {
        Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {expr}")),
        Ok(n) => Ok(n as u64),
        Err(_) => Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing \"{expr}\": invalid syntax"
        )),
    }
}

fn int_or_name(expr: &str, names: Option<(&[&str], u64)>) -> Result<u64, String> {
    if let Some((list, base)) = names {
        if let Some(i) = list.iter().position(|n| n.eq_ignore_ascii_case(expr)) {
            return Ok(i as u64 + base);
        }
    }
    must_parse_int(expr)
}

fn range(expr: &str, min: u64, max: u64, names: Option<(&[&str], u64)>) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_high.len() == 1;
    let (start, mut end) = if low_high[0] == "*" || low_high[0] == "?" {
        (min, max)
    } else {
        let start = int_or_name(low_high[0], names)?;
        let end = match low_high.len() {
            1 => start,
            2 => int_or_name(low_high[1], names)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if single {
                end = max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > max {
        return Err(format!(
            "end of range ({end}) above maximum ({max}): {expr}"
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// Whether `name` is an IANA time zone this machine knows (Go's `time.LoadLocation`).
pub fn known_time_zone(name: &str) -> bool {
    name == "UTC" || jiff::tz::TimeZone::get(name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robfig_messages() {
        for (spec, want) in [
            ("*/5 * * * *", None),
            ("0 0 1 jan-mar mon,FRI", None),
            ("@hourly", None),
            ("@every 1h30m", None),
            (
                "not a cron",
                Some("expected exactly 5 fields, found 3: [not a cron]"),
            ),
            (
                "60 * * * *",
                Some("end of range (60) above maximum (59): 60"),
            ),
            (
                "* * 0 * *",
                Some("beginning of range (0) below minimum (1): 0"),
            ),
            (
                "5-1 * * * *",
                Some("beginning of range (5) beyond end of range (1): 5-1"),
            ),
            (
                "*/0 * * * *",
                Some("step of range should be a positive number: */0"),
            ),
            (
                "x * * * *",
                Some("failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"),
            ),
            ("1-2-3 * * * *", Some("too many hyphens: 1-2-3")),
            ("@sometimes", Some("unrecognized descriptor: @sometimes")),
            (
                "@every x",
                Some("failed to parse duration @every x: time: invalid duration \"x\""),
            ),
        ] {
            assert_eq!(parse_error(spec).as_deref(), want, "{spec}");
        }
    }
}
