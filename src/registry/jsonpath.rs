//! The JSONPath dialect of client-go's `util/jsonpath`, as far as printer columns and scale
//! paths use it: `.a.b`, `['a.b']`, `[0]` (negative counts from the end), `[*]` / `.*`,
//! `..a` (recursive descent), `[1:3]` slices and filters `[?(@.type=="Ready")]` (`==`, `!=`,
//! `<`, `<=`, `>`, `>=` against a string or number literal, or the mere existence of
//! `@.path`). Missing keys select nothing (client-go's `AllowMissingKeys(true)`).
//!
//! Pure: parsing and evaluation over `serde_json::Value`, no I/O. Does not know: templates
//! with text around the braces, `range`/`end`, output formatting (the caller prints).

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    Slice(Option<i64>, Option<i64>),
    Wildcard,
    /// `..`: this value and every value below it, then the next step.
    Descend,
    Filter(Filter),
}

#[derive(Debug, Clone, PartialEq)]
struct Filter {
    path: Vec<Step>,
    /// `None`: the path exists.
    compare: Option<(String, Value)>,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses a path as a CRD writes it (`.spec.replicas`; braces around it are accepted).
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let t = text.trim();
        let t = t
            .strip_prefix('{')
            .and_then(|r| r.strip_suffix('}'))
            .unwrap_or(t);
        let t = t.strip_prefix('$').unwrap_or(t);
        let chars: Vec<char> = t.chars().collect();
        let mut pos = 0;
        let steps = parse_steps(&chars, &mut pos, false)?;
        if pos != chars.len() {
            return Err(format!("unexpected {:?} in {text:?}", chars[pos]));
        }
        Ok(JsonPath { steps })
    }

    /// Every value the path selects from `root`, in document order.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        eval(&self.steps, vec![root])
    }
}

fn parse_steps(c: &[char], pos: &mut usize, in_filter: bool) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    while *pos < c.len() {
        match c[*pos] {
            '.' => {
                *pos += 1;
                if c.get(*pos) == Some(&'.') {
                    *pos += 1;
                    steps.push(Step::Descend);
                }
                if c.get(*pos) == Some(&'*') {
                    *pos += 1;
                    steps.push(Step::Wildcard);
                    continue;
                }
                if c.get(*pos) == Some(&'[') {
                    continue;
                }
                let mut name = String::new();
                while let Some(&ch) = c.get(*pos) {
                    if ch == '\\' {
                        if let Some(&next) = c.get(*pos + 1) {
                            name.push(next);
                            *pos += 2;
                            continue;
                        }
                    }
                    if ch == '.' || ch == '[' || (in_filter && " =!<>)".contains(ch)) {
                        break;
                    }
                    name.push(ch);
                    *pos += 1;
                }
                if name.is_empty() {
                    // A lone `.` (the whole object) selects the current value.
                    continue;
                }
                steps.push(Step::Field(name));
            }
            '[' => {
                *pos += 1;
                steps.push(parse_bracket(c, pos)?);
            }
            _ if in_filter => break,
            ch => return Err(format!("unrecognized character in action: {ch:?}")),
        }
    }
    Ok(steps)
}

fn parse_bracket(c: &[char], pos: &mut usize) -> Result<Step, String> {
    let close = |pos: &mut usize| -> Result<(), String> {
        if c.get(*pos) == Some(&']') {
            *pos += 1;
            Ok(())
        } else {
            Err("unterminated array".into())
        }
    };
    match c.get(*pos) {
        Some('\'') | Some('"') => {
            let q = c[*pos];
            *pos += 1;
            let mut name = String::new();
            while let Some(&ch) = c.get(*pos) {
                *pos += 1;
                if ch == q {
                    break;
                }
                name.push(ch);
            }
            close(pos)?;
            Ok(Step::Field(name))
        }
        Some('*') => {
            *pos += 1;
            close(pos)?;
            Ok(Step::Wildcard)
        }
        Some('?') => {
            *pos += 1;
            if c.get(*pos) != Some(&'(') {
                return Err("unclosed filter".into());
            }
            *pos += 1;
            skip_spaces(c, pos);
            if c.get(*pos) != Some(&'@') {
                return Err("a filter must start with @".into());
            }
            *pos += 1;
            let path = parse_steps(c, pos, true)?;
            skip_spaces(c, pos);
            let mut op = String::new();
            while let Some(&ch) = c.get(*pos).filter(|ch| "=!<>".contains(**ch)) {
                op.push(ch);
                *pos += 1;
            }
            let compare = if op.is_empty() {
                None
            } else {
                if !["==", "!=", "<", "<=", ">", ">="].contains(&op.as_str()) {
                    return Err(format!("unrecognized filter operator {op:?}"));
                }
                skip_spaces(c, pos);
                Some((op, parse_literal(c, pos)?))
            };
            skip_spaces(c, pos);
            if c.get(*pos) != Some(&')') {
                return Err("unclosed filter".into());
            }
            *pos += 1;
            close(pos)?;
            Ok(Step::Filter(Filter { path, compare }))
        }
        _ => {
            let mut text = String::new();
            while let Some(&ch) = c.get(*pos).filter(|ch| **ch != ']') {
                text.push(ch);
                *pos += 1;
            }
            close(pos)?;
            let num = |s: &str| -> Result<Option<i64>, String> {
                let s = s.trim();
                if s.is_empty() {
                    return Ok(None);
                }
                s.parse()
                    .map(Some)
                    .map_err(|_| format!("invalid array index {s}"))
            };
            match text.split_once(':') {
                Some((a, b)) => Ok(Step::Slice(
                    num(a)?,
                    num(b.split(':').next().unwrap_or(""))?,
                )),
                None => num(&text)?
                    .map(Step::Index)
                    .ok_or_else(|| "invalid array index".to_string()),
            }
        }
    }
}

fn skip_spaces(c: &[char], pos: &mut usize) {
    while c.get(*pos) == Some(&' ') {
        *pos += 1;
    }
}

fn parse_literal(c: &[char], pos: &mut usize) -> Result<Value, String> {
    match c.get(*pos) {
        Some('\'') | Some('"') => {
            let q = c[*pos];
            *pos += 1;
            let mut s = String::new();
            while let Some(&ch) = c.get(*pos) {
                *pos += 1;
                if ch == q {
                    return Ok(Value::String(s));
                }
                s.push(ch);
            }
            Err("unterminated string".into())
        }
        _ => {
            let mut s = String::new();
            while let Some(&ch) = c.get(*pos).filter(|ch| **ch != ')' && **ch != ' ') {
                s.push(ch);
                *pos += 1;
            }
            serde_json::from_str::<Value>(&s)
                .ok()
                .filter(|v| v.is_number() || v.is_boolean())
                .ok_or_else(|| format!("unrecognized literal {s:?}"))
        }
    }
}

fn eval<'a>(steps: &[Step], mut current: Vec<&'a Value>) -> Vec<&'a Value> {
    for (i, step) in steps.iter().enumerate() {
        let mut next = Vec::new();
        for v in current {
            match step {
                Step::Field(name) => {
                    if let Some(x) = v.get(name.as_str()) {
                        next.push(x);
                    }
                }
                Step::Index(n) => {
                    if let Some(a) = v.as_array() {
                        let idx = if *n < 0 { a.len() as i64 + n } else { *n };
                        if let Some(x) = usize::try_from(idx).ok().and_then(|i| a.get(i)) {
                            next.push(x);
                        }
                    }
                }
                Step::Slice(from, to) => {
                    if let Some(a) = v.as_array() {
                        let len = a.len() as i64;
                        let fix = |x: i64| if x < 0 { (len + x).max(0) } else { x.min(len) };
                        let start = fix(from.unwrap_or(0)) as usize;
                        let end = fix(to.unwrap_or(len)) as usize;
                        if start < end {
                            next.extend(a[start..end].iter());
                        }
                    }
                }
                Step::Wildcard => match v {
                    Value::Array(a) => next.extend(a.iter()),
                    Value::Object(m) => next.extend(m.values()),
                    _ => {}
                },
                Step::Descend => {
                    // The remaining steps apply at every level below (and at) `v`.
                    let rest = &steps[i + 1..];
                    let mut all = Vec::new();
                    descend(v, &mut all);
                    return all.into_iter().flat_map(|x| eval(rest, vec![x])).collect();
                }
                Step::Filter(f) => {
                    let items: Vec<&Value> = match v {
                        Value::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    next.extend(items.into_iter().filter(|item| matches(f, item)));
                }
            }
        }
        current = next;
    }
    current
}

fn descend<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    out.push(v);
    match v {
        Value::Array(a) => a.iter().for_each(|x| descend(x, out)),
        Value::Object(m) => m.values().for_each(|x| descend(x, out)),
        _ => {}
    }
}

fn matches(f: &Filter, item: &Value) -> bool {
    let found = eval(&f.path, vec![item]);
    let Some((op, lit)) = &f.compare else {
        return !found.is_empty();
    };
    let Some(left) = found.first() else {
        return false;
    };
    let ordering = match (left, lit) {
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Number(a), Value::Number(b)) => a
            .as_f64()
            .zip(b.as_f64())
            .and_then(|(a, b)| a.partial_cmp(&b)),
        (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
        _ => None,
    };
    match (op.as_str(), ordering) {
        ("==", Some(o)) => o.is_eq(),
        ("!=", Some(o)) => o.is_ne(),
        ("!=", None) => true,
        ("<", Some(o)) => o.is_lt(),
        ("<=", Some(o)) => o.is_le(),
        (">", Some(o)) => o.is_gt(),
        (">=", Some(o)) => o.is_ge(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn find(path: &str, v: &Value) -> Vec<Value> {
        JsonPath::parse(path)
            .unwrap()
            .find(v)
            .into_iter()
            .cloned()
            .collect()
    }

    #[test]
    fn paths_printer_columns_use() {
        let v = json!({"spec": {"replicas": 3, "a.b": "dotted", "items": [{"n": 1}, {"n": 2}, {"n": 3}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]},
            "metadata": {"labels": {"app.kubernetes.io/name": "x"}}});
        assert_eq!(find(".spec.replicas", &v), [json!(3)]);
        assert_eq!(find("{.spec.replicas}", &v), [json!(3)]);
        assert_eq!(find(".spec['a.b']", &v), [json!("dotted")]);
        assert_eq!(
            find(".metadata.labels.app\\.kubernetes\\.io/name", &v),
            [json!("x")]
        );
        assert_eq!(find(".spec.items[1].n", &v), [json!(2)]);
        assert_eq!(find(".spec.items[-1].n", &v), [json!(3)]);
        assert_eq!(find(".spec.items[*].n", &v), [json!(1), json!(2), json!(3)]);
        assert_eq!(find(".spec.items[0:2].n", &v), [json!(1), json!(2)]);
        assert_eq!(find("..n", &v), [json!(1), json!(2), json!(3)]);
        assert_eq!(
            find(".status.conditions[?(@.type==\"Ready\")].status", &v),
            [json!("True")]
        );
        assert_eq!(
            find(".status.conditions[?(@.type!='Ready')].type", &v),
            [json!("Synced")]
        );
        assert_eq!(find(".spec.items[?(@.n > 1)].n", &v), [json!(2), json!(3)]);
        assert!(find(".spec.missing.deeper", &v).is_empty());
        assert!(JsonPath::parse(".spec[").is_err());
        assert!(JsonPath::parse(".spec[?(@.a ~ 1)]").is_err());
    }
}
