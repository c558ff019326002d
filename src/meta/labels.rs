//! Label selectors, modelled on `k8s.io/apimachinery/pkg/labels/selector.go` and
//! `metav1.LabelSelectorAsSelector`.
//!
//! Owns: the selector grammar (lexer and parser reproducing upstream's tokens, error texts and
//! quirks), requirement validation (`labels.NewRequirement`), matching against a label map,
//! the canonical `String()` form, and conversion of a `metav1.LabelSelector` JSON object.
//!
//! Deliberately does not know: where selectors come from (query parameters, object specs) or
//! how errors become HTTP responses; see [`Selector::parse`] for the exact 400 text.

use super::field_error::{aggregate_message, FieldError};
use super::validation::{is_qualified_name, is_valid_label_value};
use serde_json::{Map, Value};

/// A requirement operator (`selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

impl Operator {
    /// The `selection.Operator` string (`=`, `==`, `!=`, `in`, `notin`, `exists`, `!`, `gt`, `lt`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => "in",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::DoesNotExist => "!",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

/// One `key op values` term (`labels.Requirement`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    op: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// `labels.NewRequirement(key, op, values)`: validates and returns upstream's aggregated
    /// error text (paths `key`, `values`, `values[i]`, `values[i][key]`).
    pub fn new(key: &str, op: Operator, values: Vec<String>) -> Result<Requirement, String> {
        new_requirement(key, op, values, false)
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn operator(&self) -> Operator {
        self.op
    }

    pub fn values(&self) -> &[String] {
        &self.values
    }

    fn has_value(&self, v: &str) -> bool {
        self.values.iter().any(|x| x == v)
    }

    /// `Requirement.Matches`.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        self.matches_lookup(|k| labels.get(k).map(|v| v.as_str().unwrap_or("")))
    }

    /// [`Requirement::matches`] with the labels behind a lookup (`get(key)`: the label's
    /// value, `""` for a value that is not a string), for callers that keep labels in
    /// another shape than a JSON map.
    pub fn matches_lookup<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        let got = get(&self.key);
        match self.op {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                got.is_some_and(|v| self.has_value(v))
            }
            Operator::NotIn | Operator::NotEquals => got.is_none_or(|v| !self.has_value(v)),
            Operator::Exists => got.is_some(),
            Operator::DoesNotExist => got.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(Ok(have)) = got.map(str::parse::<i64>) else {
                    return false;
                };
                let [want] = self.values.as_slice() else {
                    return false;
                };
                let Ok(want) = want.parse::<i64>() else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.op == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let (pre, post) = match self.op {
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
            Operator::Equals => ("=", ""),
            Operator::DoubleEquals => ("==", ""),
            Operator::NotEquals => ("!=", ""),
            Operator::In => (" in (", ")"),
            Operator::NotIn => (" notin (", ")"),
            Operator::GreaterThan => (">", ""),
            Operator::LessThan => ("<", ""),
        };
        f.write_str(pre)?;
        if self.values.len() == 1 {
            f.write_str(&self.values[0])?;
        } else {
            let mut sorted = self.values.clone();
            sorted.sort();
            f.write_str(&sorted.join(","))?;
        }
        f.write_str(post)
    }
}

fn new_requirement(
    key: &str,
    op: Operator,
    values: Vec<String>,
    nil_values: bool,
) -> Result<Requirement, String> {
    let mut errs: Vec<FieldError> = Vec::new();
    let key_errs = is_qualified_name(key);
    if !key_errs.is_empty() {
        errs.push(FieldError::invalid("key", key, key_errs.join("; ")));
    }
    let vals_value = || -> Value {
        if nil_values && values.is_empty() {
            // Go prints a nil []string with %#v as `[]string(nil)`.
            Value::Null
        } else {
            Value::from(values.clone())
        }
    };
    let invalid_vals = |detail: &str| -> FieldError {
        let v = vals_value();
        if v.is_null() {
            FieldError::invalid_rendered("values", "[]string(nil)", detail)
        } else {
            FieldError::invalid("values", v, detail)
        }
    };
    match op {
        Operator::In | Operator::NotIn => {
            if values.is_empty() {
                errs.push(invalid_vals(
                    "for 'in', 'notin' operators, values set can't be empty",
                ));
            }
        }
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals => {
            if values.len() != 1 {
                errs.push(invalid_vals(
                    "exact-match compatibility requires one single value",
                ));
            }
        }
        Operator::Exists | Operator::DoesNotExist => {
            if !values.is_empty() {
                errs.push(invalid_vals(
                    "values set must be empty for exists and does not exist",
                ));
            }
        }
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errs.push(invalid_vals(
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(FieldError::invalid(
                        format!("values[{i}]"),
                        v.as_str(),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
    }
    for (i, v) in values.iter().enumerate() {
        let v_errs = is_valid_label_value(v);
        if !v_errs.is_empty() {
            errs.push(FieldError::invalid(
                format!("values[{i}][{key}]"),
                v.as_str(),
                v_errs.join("; "),
            ));
        }
    }
    if errs.is_empty() {
        Ok(Requirement {
            key: key.to_string(),
            op,
            values,
        })
    } else {
        Err(aggregate_message(&errs))
    }
}

/// A parsed label selector: the AND of its requirements, sorted by key.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Selector {
    reqs: Vec<Requirement>,
    nothing: bool,
}

impl Selector {
    /// `labels.Parse`. The error is exactly upstream's `err.Error()`; kube-apiserver's list and
    /// watch handlers decode `?labelSelector=` through `metav1.Convert_string_To_labels_Selector`
    /// and answer **400 BadRequest whose `message` is this text unchanged** (no prefix), e.g.
    /// `a in (b` → `unable to parse requirement: found '', expected: ',' or ')'`, `a=b c` →
    /// `found 'c', expected: ',' or 'end of string'`. (kubectl's own wrapper
    /// `Unable to find "..." that match label selector ...` is client-side.)
    pub fn parse(s: &str) -> Result<Selector, String> {
        // Go's lexer treats a NUL byte as the end of input.
        let s = s.split('\0').next().unwrap_or("");
        let mut p = Parser {
            items: lex_all(s),
            pos: 0,
        };
        let mut reqs = p.parse()?;
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector {
            reqs,
            nothing: false,
        })
    }

    /// `labels.Everything()`: matches every object.
    pub fn everything() -> Selector {
        Selector::default()
    }

    /// `labels.Nothing()`: matches no object (a nil `metav1.LabelSelector`).
    pub fn nothing() -> Selector {
        Selector {
            reqs: Vec::new(),
            nothing: true,
        }
    }

    /// `Selector.Empty()`: true when it has no requirements (Nothing is not empty).
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.reqs.is_empty()
    }

    /// True for [`Selector::nothing`].
    pub fn is_nothing(&self) -> bool {
        self.nothing
    }

    pub fn requirements(&self) -> &[Requirement] {
        &self.reqs
    }

    /// Whether a label map (an object's `metadata.labels`; pass an empty map when missing)
    /// satisfies every requirement.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        !self.nothing && self.reqs.iter().all(|r| r.matches(labels))
    }

    /// [`Selector::matches`] with the labels behind a lookup (see
    /// [`Requirement::matches_lookup`]).
    pub fn matches_lookup<'a>(&self, get: impl Fn(&str) -> Option<&'a str> + Copy) -> bool {
        !self.nothing && self.reqs.iter().all(|r| r.matches_lookup(get))
    }

    /// [`Selector::matches`] against `obj.metadata.labels`.
    pub fn matches_object(&self, obj: &Value) -> bool {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        let labels = obj
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(Map::new));
        self.matches(labels)
    }

    /// `metav1.LabelSelectorAsSelector`: `null` → Nothing, `{}` → Everything, else
    /// `matchLabels` as `=` requirements and `matchExpressions` (`In`, `NotIn`, `Exists`,
    /// `DoesNotExist`). Errors carry upstream's text, e.g.
    /// `"Foo" is not a valid label selector operator`.
    pub fn from_label_selector(v: &Value) -> Result<Selector, String> {
        if v.is_null() {
            return Ok(Selector::nothing());
        }
        let Some(obj) = v.as_object() else {
            return Err("label selector must be an object".to_string());
        };
        let empty = Vec::new();
        let match_labels = obj.get("matchLabels").and_then(Value::as_object);
        let exprs = obj
            .get("matchExpressions")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        let mut reqs = Vec::new();
        for (k, val) in match_labels.into_iter().flatten() {
            let Some(val) = val.as_str() else {
                return Err(format!("matchLabels[{k}] must be a string"));
            };
            reqs.push(new_requirement(
                k,
                Operator::Equals,
                vec![val.to_string()],
                false,
            )?);
        }
        for e in exprs {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            let op_s = e.get("operator").and_then(Value::as_str).unwrap_or("");
            let op = match op_s {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(format!(
                        "{} is not a valid label selector operator",
                        super::field_error::go_quote(other)
                    ))
                }
            };
            let values: Vec<String> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|x| x.as_str().unwrap_or("").to_string())
                        .collect()
                })
                .unwrap_or_default();
            reqs.push(new_requirement(key, op, values, true)?);
        }
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector {
            reqs,
            nothing: false,
        })
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, r) in self.reqs.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Tokenises the whole input (upstream's `Lexer.Lex` until `EndOfStringToken`).
fn lex_all(s: &str) -> Vec<(Token, String)> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < b.len() && is_whitespace(b[pos]) {
            pos += 1;
        }
        if pos >= b.len() {
            out.push((Token::EndOfString, String::new()));
            return out;
        }
        if is_special(b[pos]) {
            let start = pos;
            let mut last: Option<(Token, usize)> = None;
            while pos < b.len() && is_special(b[pos]) {
                let cand = &s[start..pos + 1];
                if let Some(t) = keyword(cand) {
                    last = Some((t, pos + 1));
                    pos += 1;
                } else if last.is_some() {
                    break;
                } else {
                    pos += 1;
                }
            }
            match last {
                Some((t, end)) => {
                    pos = end;
                    out.push((t, s[start..end].to_string()));
                }
                None => out.push((
                    Token::Error,
                    format!("error expected: keyword found '{}'", &s[start..pos]),
                )),
            }
        } else {
            let start = pos;
            while pos < b.len() && !is_special(b[pos]) && !is_whitespace(b[pos]) {
                pos += 1;
            }
            let word = &s[start..pos];
            out.push((keyword(word).unwrap_or(Token::Identifier), word.to_string()));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    pos: usize,
}

impl Parser {
    fn item(&self, i: usize) -> (Token, String) {
        // items always ends with EndOfString; never read past it
        let i = i.min(self.items.len().saturating_sub(1));
        self.items
            .get(i)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()))
    }

    fn map(ctx: Ctx, t: Token) -> Token {
        if ctx == Ctx::Values && matches!(t, Token::In | Token::NotIn) {
            Token::Identifier
        } else {
            t
        }
    }

    fn lookahead(&self, ctx: Ctx) -> (Token, String) {
        let (t, l) = self.item(self.pos);
        (Self::map(ctx, t), l)
    }

    fn consume(&mut self, ctx: Ctx) -> (Token, String) {
        let (t, l) = self.item(self.pos);
        self.pos += 1;
        (Self::map(ctx, t), l)
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Ctx::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Token::EndOfString => return Ok(reqs),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, op) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = op {
            return new_requirement(&key, op, Vec::new(), false);
        }
        let op = self.parse_operator()?;
        let mut values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        values.sort();
        values.dedup();
        new_requirement(&key, op, values, false)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut op = None;
        let (mut tok, mut lit) = self.consume(Ctx::Values);
        if tok == Token::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Ctx::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let errs = is_qualified_name(&lit);
        if !errs.is_empty() {
            // upstream validates with a nil *field.Path, which prints as "<nil>"
            return Err(FieldError::invalid("<nil>", lit.as_str(), errs.join("; ")).message());
        }
        let (t, _) = self.lookahead(Ctx::Values);
        if (t == Token::EndOfString || t == Token::Comma) && op != Some(Operator::DoesNotExist) {
            op = Some(Operator::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.consume(Ctx::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ))
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Ctx::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Ctx::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let s = self.parse_identifiers_list()?;
                let (t, _) = self.consume(Ctx::Values);
                if t != Token::ClosedPar {
                    // upstream reports the literal seen before the list, not the current one
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.consume(Ctx::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut s: Vec<String> = Vec::new();
        let insert = |s: &mut Vec<String>, v: &str| {
            if !s.iter().any(|x| x == v) {
                s.push(v.to_string());
            }
        };
        loop {
            let (tok, lit) = self.consume(Ctx::Values);
            match tok {
                Token::Identifier => {
                    insert(&mut s, &lit);
                    let (t2, l2) = self.lookahead(Ctx::Values);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(s),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if s.is_empty() {
                        insert(&mut s, "");
                    }
                    let (t2, _) = self.lookahead(Ctx::Values);
                    if t2 == Token::ClosedPar {
                        insert(&mut s, "");
                        return Ok(s);
                    }
                    if t2 == Token::Comma {
                        self.consume(Ctx::Values);
                        insert(&mut s, "");
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Ctx::Values);
        if tok == Token::EndOfString || tok == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Ctx::Values);
        if tok == Token::Identifier {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const QNAME: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const LVALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

    #[test]
    fn parse_ok_and_canonical_string() {
        let cases = [
            ("", ""),
            ("   ", ""),
            ("x=a", "x=a"),
            ("x==a", "x==a"),
            ("x = a", "x=a"),
            ("x!=a", "x!=a"),
            ("x=", "x="),
            ("x=,z= ", "x=,z="),
            ("x", "x"),
            ("!x", "!x"),
            (" ! x ", "!x"),
            ("x>1", "x>1"),
            ("x<10", "x<10"),
            ("x in (c,b,a)", "x in (a,b,c)"),
            ("x in (a,a)", "x in (a)"),
            ("x in()", "x in ()"),
            ("x in (,)", "x in ()"),
            ("x notin (a, b )", "x notin (a,b)"),
            ("x in (in,notin)", "x in (in,notin)"),
            ("z=b,a=c,m", "a=c,m,z=b"),
            ("example.com/key=v", "example.com/key=v"),
            ("a=b\0,c", "a=b"),
            (
                "environment in (production, qa),tier notin (frontend,backend)",
                "environment in (production,qa),tier notin (backend,frontend)",
            ),
        ];
        for (input, want) in cases {
            let s = Selector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(s.to_string(), want, "input {input:?}");
        }
        assert!(Selector::parse("").unwrap().is_empty());
        assert!(!Selector::parse("a").unwrap().is_empty());
    }

    #[test]
    fn parse_errors() {
        let cases: Vec<(&str, String)> = vec![
            ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'".into()),
            ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt".into()),
            ("a=b c", "found 'c', expected: ',' or 'end of string'".into()),
            ("x<-1", format!("unable to parse requirement: values[0][x]: Invalid value: \"-1\": {LVALUE}")),
            ("a,", "found '', expected: identifier after ','".into()),
            ("a,,b", "found ',', expected: identifier after ','".into()),
            (",a", "found ',', expected: !, identifier, or 'end of string'".into()),
            ("=a", "found '=', expected: !, identifier, or 'end of string'".into()),
            ("a in b", "unable to parse requirement: found 'b' expected: '('".into()),
            ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'".into()),
            ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier".into()),
            ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier".into()),
            ("a in (,b", "unable to parse requirement: found '', expected: ',' or ')'".into()),
            ("a=(", "unable to parse requirement: found '(', expected: identifier".into()),
            ("a (b)", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt".into()),
            ("a x", "unable to parse requirement: found 'x', expected: in, notin, =, ==, !=, gt, lt".into()),
            ("!", "unable to parse requirement: found '', expected: identifier".into()),
            ("!a=b", "found '=', expected: ',' or 'end of string'".into()),
            ("-a=b", format!("unable to parse requirement: <nil>: Invalid value: \"-a\": {QNAME}")),
            ("a=-b", format!("unable to parse requirement: values[0][a]: Invalid value: \"-b\": {LVALUE}")),
            ("a>b", "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer".into()),
            ("a<-b", format!("unable to parse requirement: [values[0]: Invalid value: \"-b\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: \"-b\": {LVALUE}]")),
            ("a>", "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer".into()),
        ];
        for (input, want) in cases {
            assert_eq!(Selector::parse(input).unwrap_err(), want, "input {input:?}");
        }
    }

    /// Cases from upstream's selector_test.go (TestSelectorParse, TestSetSelectorParser).
    #[test]
    fn upstream_parse_table() {
        let good = [
            ("x=a,y=b,z=c", "x=a,y=b,z=c"),
            ("x!=a,y=b", "x!=a,y=b"),
            ("x= ", "x="),
            ("x= ,z= ", "x=,z="),
            ("x>1,z<5", "x>1,z<5"),
            ("\rx", "x"),
            (
                "this-is-a-dns.domain.com/key-with-dash",
                "this-is-a-dns.domain.com/key-with-dash",
            ),
            (
                "this-is-another-dns.domain.com/key-with-dash in (so,what)",
                "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            ),
            (
                "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
                "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)",
            ),
            ("foo  in\t (abc)", "foo in (abc)"),
            ("x notin\n (abc)", "x notin (abc)"),
            ("x  notin\t\t\t(abc,def)", "x notin (abc,def)"),
            ("x in (abc,)", "x in (,abc)"),
            (
                "x notin (abc,,def),bar,z in (),w",
                "bar,w,x notin (,abc,def),z in ()",
            ),
            ("x,y in (a)", "x,y in (a)"),
            ("x notin ( )", "x notin ()"),
            ("x notin (, a)", "x notin (,a)"),
            ("a ", "a"),
            ("a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"),
            ("notin=in", "notin=in"),
        ];
        for (input, want) in good {
            let got = Selector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(got.to_string(), want, "{input:?}");
        }
        let bad = [
            "x=a||y=b",
            "x==a==b",
            "!x=a",
            "x<a",
            "x,,y",
            ",x,y",
            "x nott in (y)",
            "a in (xyz),",
            "a in (xyz)b notin ()",
            "a in (xyz abc)",
            "a notin(",
            "a (",
            "(",
        ];
        for input in bad {
            assert!(Selector::parse(input).is_err(), "{input:?} should fail");
        }
    }

    #[test]
    fn lexer_sequences() {
        use Token::*;
        let cases: Vec<(&str, Vec<Token>)> = vec![
            (
                "key in ( value )",
                vec![Identifier, In, OpenPar, Identifier, ClosedPar],
            ),
            (
                "key in ( value1, value2 )",
                vec![
                    Identifier, In, OpenPar, Identifier, Comma, Identifier, ClosedPar,
                ],
            ),
            ("!key", vec![DoesNotExist, Identifier]),
            (
                "== != (), = notin",
                vec![
                    DoubleEquals,
                    NotEquals,
                    OpenPar,
                    ClosedPar,
                    Comma,
                    Equals,
                    NotIn,
                ],
            ),
            ("key>2", vec![Identifier, GreaterThan, Identifier]),
            ("key<1", vec![Identifier, LessThan, Identifier]),
            ("~", vec![Identifier]),
            ("||", vec![Identifier]),
            ("!!=", vec![DoesNotExist, NotEquals]),
            ("===", vec![DoubleEquals, Equals]),
        ];
        for (input, want) in cases {
            let mut got: Vec<Token> = lex_all(input).into_iter().map(|(t, _)| t).collect();
            assert_eq!(got.pop(), Some(EndOfString));
            assert_eq!(got, want, "{input:?}");
        }
    }

    #[test]
    fn matching() {
        let labels = json!({"a": "1", "b": "x", "n": "10", "e": ""});
        let labels = labels.as_object().unwrap();
        let cases = [
            ("", true),
            ("a=1", true),
            ("a==1", true),
            ("a=2", false),
            ("a!=2", true),
            ("z!=2", true),
            ("a in (1,2)", true),
            ("z in (1,2)", false),
            ("a notin (1,2)", false),
            ("z notin (1)", true),
            ("a", true),
            ("z", false),
            ("!z", true),
            ("!a", false),
            ("n>9", true),
            ("n>10", false),
            ("n<11", true),
            ("b>1", false),
            ("z<1", false),
            ("e=", true),
            ("e in ()", true),
            ("a=1,b=x", true),
            ("a=1,b=y", false),
        ];
        for (sel, want) in cases {
            assert_eq!(Selector::parse(sel).unwrap().matches(labels), want, "{sel}");
        }
        let pod = json!({"metadata": {"labels": {"app": "web"}}});
        assert!(Selector::parse("app=web").unwrap().matches_object(&pod));
        assert!(Selector::parse("!app").unwrap().matches_object(&json!({})));
    }

    #[test]
    fn label_selector_objects() {
        let labels = json!({"app": "web", "tier": "fe"});
        let labels = labels.as_object().unwrap();
        let cases: Vec<(Value, Result<&str, String>, bool)> = vec![
            (json!({}), Ok(""), true),
            (json!({"matchLabels": {"tier": "fe", "app": "web"}}), Ok("app=web,tier=fe"), true),
            (json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}),
                Ok("app in (api,web)"), true),
            (json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}),
                Ok("app notin (web)"), false),
            (json!({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}, {"key": "app", "operator": "Exists"}]}),
                Ok("app,!x"), true),
            (json!({"matchExpressions": [{"key": "a", "operator": "Foo"}]}),
                Err("\"Foo\" is not a valid label selector operator".into()), false),
            (json!({"matchExpressions": [{"key": "a", "operator": "In"}]}),
                Err("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty".into()), false),
            (json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
                Err("values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist".into()), false),
            (json!({"matchLabels": {"-a": "b"}}),
                Err(format!("key: Invalid value: \"-a\": {QNAME}")), false),
        ];
        for (v, want, matches) in cases {
            match (Selector::from_label_selector(&v), want) {
                (Ok(s), Ok(w)) => {
                    assert_eq!(s.to_string(), w, "{v}");
                    assert_eq!(s.matches(labels), matches, "{v}");
                }
                (Err(e), Err(w)) => assert_eq!(e, w, "{v}"),
                (got, want) => panic!("{v}: got {got:?}, want {want:?}"),
            }
        }
        let nothing = Selector::from_label_selector(&Value::Null).unwrap();
        assert!(nothing.is_nothing() && !nothing.is_empty());
        assert!(!nothing.matches(labels));
        assert!(Selector::everything().matches(labels));
    }
}
