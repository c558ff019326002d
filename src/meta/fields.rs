//! Field selectors, modelled on `k8s.io/apimachinery/pkg/fields/selector.go`.
//!
//! Owns: parsing `field=value`, `field==value`, `field!=value` terms joined by `,` (with
//! upstream's backslash escaping of `\`, `,` and `=` in values, and its exact error texts),
//! matching against a field set, the canonical `String()` form, and `Transform` (renaming
//! fields through a conversion function).
//!
//! Deliberately does not know: which fields a resource supports or how an object's field set
//! is computed (that is `registry::field_selectors`).

use std::collections::BTreeMap;

/// Field selector operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Term {
    field: String,
    op: Op,
    value: String,
}

/// A parsed field selector: the AND of its terms.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FieldSelector {
    terms: Vec<Term>,
}

impl FieldSelector {
    /// `fields.ParseSelector`. Errors are upstream's texts, which kube-apiserver returns
    /// unchanged as a 400 BadRequest message, e.g.
    /// `invalid selector: 'a'; can't understand 'a'`,
    /// `invalid field selector: invalid escape sequence: \x`,
    /// `invalid field selector: unescaped character in value: 61` (Go prints the rune number).
    pub fn parse(s: &str) -> Result<FieldSelector, String> {
        let mut parts = split_terms(s);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let value = unescape_value(rhs)?;
            terms.push(Term {
                field: lhs.to_string(),
                op,
                value,
            });
        }
        Ok(FieldSelector { terms })
    }

    /// `fields.Everything()`.
    pub fn everything() -> FieldSelector {
        FieldSelector::default()
    }

    /// A selector requiring `field=value` for every pair (`fields.SelectorFromSet`).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> FieldSelector {
        FieldSelector {
            terms: pairs
                .into_iter()
                .map(|(f, v)| Term {
                    field: f.to_string(),
                    op: Op::Equals,
                    value: v.to_string(),
                })
                .collect(),
        }
    }

    /// `Selector.Empty()`.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// `Selector.Matches`: a field missing from `fields` counts as the empty string.
    pub fn matches(&self, fields: &BTreeMap<String, String>) -> bool {
        self.terms.iter().all(|t| {
            let got = fields.get(&t.field).map(String::as_str).unwrap_or("");
            match t.op {
                Op::Equals => got == t.value,
                Op::NotEquals => got != t.value,
            }
        })
    }

    /// `Selector.Requirements()`: `(field, op, value)` in selector order (values unescaped).
    pub fn requirements(&self) -> Vec<(String, Op, String)> {
        self.terms
            .iter()
            .map(|t| (t.field.clone(), t.op, t.value.clone()))
            .collect()
    }

    /// `Selector.RequiresExactMatch(field)`: the value of the first `field=value` term.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.field == field && t.op == Op::Equals)
            .map(|t| t.value.as_str())
    }

    /// `Selector.Transform(fn)`: maps every `(field, value)`; a term mapped to empty field and
    /// value is dropped; the first error aborts.
    pub fn transform<F>(&self, mut f: F) -> Result<FieldSelector, String>
    where
        F: FnMut(&str, &str) -> Result<(String, String), String>,
    {
        let mut terms = Vec::with_capacity(self.terms.len());
        for t in &self.terms {
            let (field, value) = f(&t.field, &t.value)?;
            if field.is_empty() && value.is_empty() {
                continue;
            }
            terms.push(Term {
                field,
                op: t.op,
                value,
            });
        }
        Ok(FieldSelector { terms })
    }
}

impl std::fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = match t.op {
                Op::Equals => "=",
                Op::NotEquals => "!=",
            };
            write!(f, "{}{}{}", t.field, op, escape_value(&t.value))?;
        }
        Ok(())
    }
}

/// `fields.EscapeValue`: `\` → `\\`, `,` → `\,`, `=` → `\=`.
pub fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `fields.UnescapeValue`.
pub fn unescape_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ))
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ))
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

/// Splits on unescaped commas (a backslash protects the next character).
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// Finds the first operator position, preferring `!=`, then `==`, then `=` at each index.
fn split_term(term: &str) -> Option<(&str, Op, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (tok, op) in [("!=", Op::NotEquals), ("==", Op::Equals), ("=", Op::Equals)] {
            if rest.starts_with(tok) {
                return Some((&term[..i], op, &term[i + tok.len()..]));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parse_ok() {
        type Case<'a> = (&'a str, &'a str, Vec<(&'a str, Op, &'a str)>);
        let cases: Vec<Case> = vec![
            ("", "", vec![]),
            (",", "", vec![]),
            ("a=b", "a=b", vec![("a", Op::Equals, "b")]),
            ("a==b", "a=b", vec![("a", Op::Equals, "b")]),
            ("a!=b", "a!=b", vec![("a", Op::NotEquals, "b")]),
            ("a=", "a=", vec![("a", Op::Equals, "")]),
            ("=b", "=b", vec![("", Op::Equals, "b")]),
            (
                "b=1,a=2",
                "a=2,b=1",
                vec![("a", Op::Equals, "2"), ("b", Op::Equals, "1")],
            ),
            ("a = b", "a = b", vec![("a ", Op::Equals, " b")]),
            (
                "x=a\\,b\\=c\\\\d",
                "x=a\\,b\\=c\\\\d",
                vec![("x", Op::Equals, "a,b=c\\d")],
            ),
            (
                "spec.nodeName!=,status.phase=Running",
                "spec.nodeName!=,status.phase=Running",
                vec![
                    ("spec.nodeName", Op::NotEquals, ""),
                    ("status.phase", Op::Equals, "Running"),
                ],
            ),
            ("a=!b", "a=!b", vec![("a", Op::Equals, "!b")]),
        ];
        for (input, canonical, reqs) in cases {
            let s = FieldSelector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(s.to_string(), canonical, "{input:?}");
            let want: Vec<(String, Op, String)> = reqs
                .into_iter()
                .map(|(f, o, v)| (f.to_string(), o, v.to_string()))
                .collect();
            assert_eq!(s.requirements(), want, "{input:?}");
        }
        assert!(FieldSelector::parse("").unwrap().is_empty());
    }

    #[test]
    fn parse_errors() {
        let cases = [
            ("a", "invalid selector: 'a'; can't understand 'a'"),
            ("x=1,b", "invalid selector: 'x=1,b'; can't understand 'b'"),
            (
                "a=b=c",
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                "a=b\\x",
                "invalid field selector: invalid escape sequence: \\x",
            ),
            (
                "a=b\\",
                "invalid field selector: invalid escape sequence: \\",
            ),
            (
                "a==b=",
                "invalid field selector: unescaped character in value: 61",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(FieldSelector::parse(input).unwrap_err(), want, "{input:?}");
        }
    }

    /// Cases from upstream's fields/selector_test.go (TestSelectorParse).
    #[test]
    fn upstream_parse_table() {
        for good in ["x=a,y=b,z=c", "", "x!=a,y=b", r"x=a||y\=b", r"x=a\=\=b"] {
            assert_eq!(FieldSelector::parse(good).unwrap().to_string(), good);
        }
        for bad in [
            "x=a||y=b",
            "x==a==b",
            "x=a,b",
            "x in (a)",
            "x in (a,b,c)",
            "x",
        ] {
            assert!(FieldSelector::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn matching() {
        let fields = set(&[
            ("metadata.name", "p1"),
            ("status.phase", "Running"),
            ("spec.nodeName", ""),
        ]);
        let cases = [
            ("", true),
            ("metadata.name=p1", true),
            ("metadata.name==p1", true),
            ("metadata.name=p2", false),
            ("metadata.name!=p2", true),
            ("spec.nodeName=", true),
            ("spec.nodeName!=", false),
            ("missing=", true),
            ("missing=x", false),
            ("missing!=x", true),
            ("metadata.name=p1,status.phase!=Running", false),
            ("metadata.name=p1,status.phase=Running", true),
        ];
        for (sel, want) in cases {
            assert_eq!(
                FieldSelector::parse(sel).unwrap().matches(&fields),
                want,
                "{sel}"
            );
        }
    }

    #[test]
    fn transform_and_exact() {
        let s = FieldSelector::parse("spec.host=n1,metadata.name=x").unwrap();
        assert_eq!(s.requires_exact_match("metadata.name"), Some("x"));
        assert_eq!(s.requires_exact_match("spec.host"), Some("n1"));
        let t = s
            .transform(|f, v| {
                Ok(match f {
                    "spec.host" => ("spec.nodeName".to_string(), v.to_string()),
                    _ => (f.to_string(), v.to_string()),
                })
            })
            .unwrap();
        assert_eq!(t.to_string(), "metadata.name=x,spec.nodeName=n1");
        let e = s.transform(|f, _| Err(format!("field label not supported: {f}")));
        assert_eq!(e.unwrap_err(), "field label not supported: metadata.name");
        let dropped = s
            .transform(|_, _| Ok((String::new(), String::new())))
            .unwrap();
        assert!(dropped.is_empty());
        let p = FieldSelector::from_pairs([("a", "b,c")]);
        assert_eq!(p.to_string(), "a=b\\,c");
    }
}
