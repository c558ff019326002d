//! Token positions of a CEL source, for placing checker errors the way cel-go prints them
//! (`ERROR: <input>:1:5: undefined field 'foo'` with the line and a caret under the column).
//!
//! The parser the project uses keeps node offsets to itself, so the checker names what it
//! complains about (a field selection, an identifier, a call, an operator) and [`Tokens`]
//! finds that token in the source: the n-th such token for the n-th complaint of the same
//! kind, which is the node's own token for the usual one-error expressions.

use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(&'static str),
    Other,
}

/// What an error is about, located as cel-go locates the node.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Anchor {
    /// `x.field`: the `.`.
    Select(String),
    /// A bare identifier.
    Ident(String),
    /// A call of `name`: its `(`.
    Call(String),
    /// An operator token (`>`, `==`, `[`, ...).
    Op(&'static str),
    /// The start of the expression.
    Start,
}

pub struct Tokens<'a> {
    src: &'a str,
    toks: Vec<(usize, Tok)>,
    used: HashMap<Anchor, usize>,
}

const PUNCTS: &[&str] = &[
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", "[",
    "]", "(", ")", "{", "}", ",",
];

fn lex(src: &str) -> Vec<(usize, Tok)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        // string and bytes literals, with r/b prefixes and triple quotes
        let mut j = i;
        while j < b.len() && j - i < 2 && matches!(b[j], b'r' | b'R' | b'b' | b'B') {
            j += 1;
        }
        if j < b.len() && (b[j] == b'\'' || b[j] == b'"') {
            let q = b[j];
            let raw = b[i..j].iter().any(|c| *c == b'r' || *c == b'R');
            let triple = b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q);
            let mut k = j + if triple { 3 } else { 1 };
            while k < b.len() {
                if !raw && b[k] == b'\\' {
                    k += 2;
                    continue;
                }
                if triple {
                    if b[k] == q && b.get(k + 1) == Some(&q) && b.get(k + 2) == Some(&q) {
                        k += 3;
                        break;
                    }
                } else if b[k] == q {
                    k += 1;
                    break;
                }
                k += 1;
            }
            out.push((i, Tok::Other));
            i = k.min(b.len());
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let mut k = i;
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            out.push((i, Tok::Ident(src[i..k].to_string())));
            i = k;
            continue;
        }
        if c.is_ascii_digit() {
            let mut k = i;
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'.') {
                k += 1;
            }
            out.push((i, Tok::Other));
            i = k;
            continue;
        }
        if let Some(p) = PUNCTS.iter().find(|p| src[i..].starts_with(**p)) {
            out.push((i, Tok::Punct(p)));
            i += p.len();
            continue;
        }
        // a non-ASCII character or one CEL does not know: skip it whole
        i += src[i..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

impl<'a> Tokens<'a> {
    pub fn new(src: &'a str) -> Tokens<'a> {
        Tokens {
            src,
            toks: lex(src),
            used: HashMap::new(),
        }
    }

    fn candidates(&self, a: &Anchor) -> Vec<usize> {
        let t = &self.toks;
        let ident = |i: usize, n: &str| matches!(t.get(i), Some((_, Tok::Ident(x))) if x == n);
        let punct = |i: usize, p: &str| matches!(t.get(i), Some((_, Tok::Punct(x))) if *x == p);
        let mut out = Vec::new();
        for i in 0..t.len() {
            let hit = match a {
                Anchor::Select(f) => {
                    punct(i, ".") && (ident(i + 1, f) || (punct(i + 1, "?") && ident(i + 2, f)))
                }
                Anchor::Ident(n) => {
                    ident(i, n) && !(i > 0 && punct(i - 1, ".")) && !punct(i + 1, "(")
                }
                Anchor::Call(n) => punct(i, "(") && i > 0 && ident(i - 1, n),
                Anchor::Op(p) => punct(i, p),
                Anchor::Start => i == 0,
            };
            if hit {
                out.push(t[i].0);
            }
        }
        out
    }

    /// The byte offset of the next unclaimed token for `a` (the start when none is found).
    pub fn locate(&mut self, a: &Anchor) -> usize {
        let c = self.candidates(a);
        let n = self.used.entry(a.clone()).or_insert(0);
        let at = c.get(*n).or(c.last()).copied().unwrap_or(0);
        *n += 1;
        at
    }

    /// cel-go's rendering of an error at byte offset `at`.
    pub fn render(&self, at: usize, msg: &str) -> String {
        render(self.src, at, msg)
    }
}

/// `ERROR: <input>:L:C: msg` with the source line and a caret under column C.
pub fn render(src: &str, at: usize, msg: &str) -> String {
    let at = at.min(src.len());
    let before = &src[..at];
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = src[line_start..at].chars().count() + 1;
    let line = src[line_start..].lines().next().unwrap_or("");
    format!(
        "ERROR: <input>:{line_no}:{col}: {msg}\n | {line}\n | {}^",
        ".".repeat(col - 1)
    )
}

/// The same for a (line, column) the parser reported; column 1-based.
pub fn render_at(src: &str, line: usize, col: usize, msg: &str) -> String {
    let l = src.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let col = col.max(1);
    format!(
        "ERROR: <input>:{line}:{col}: {msg}\n | {l}\n | {}^",
        ".".repeat(col - 1)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors() {
        let src = "self.foo == 'a.foo' && foo(1) > self.foo";
        let mut t = Tokens::new(src);
        assert_eq!(t.locate(&Anchor::Select("foo".into())), 4);
        assert_eq!(t.locate(&Anchor::Select("foo".into())), 36);
        assert_eq!(t.locate(&Anchor::Call("foo".into())), 26);
        assert_eq!(t.locate(&Anchor::Op(">")), 30);
        assert_eq!(
            render(src, 4, "undefined field 'foo'"),
            "ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 'a.foo' && foo(1) > self.foo\n | ....^"
        );
    }
}
