//! Percent-decoding as Go's `url.PathUnescape` does it (`%3A` → `:`, `%2F` → `/`), except
//! that a malformed escape is kept as it is instead of failing the whole string. Used for
//! request paths (clients that escape `:` in names must reach the object) and for the
//! escaped keys of user extras.

/// Decodes every well-formed `%XX`; bytes that are not valid UTF-8 once decoded become
/// U+FFFD.
pub fn path_unescape(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes() {
        for (s, want) in [
            ("plain", "plain"),
            ("system%3Atest", "system:test"),
            ("example.org%2fscopes", "example.org/scopes"),
            ("bad%zz", "bad%zz"),
            ("end%4", "end%4"),
            ("%C3%A9", "é"),
        ] {
            assert_eq!(path_unescape(s), want, "{s}");
        }
    }
}
