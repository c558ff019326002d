//! The string formats kube keeps in custom resource schemas (apiextensions'
//! `StripUnsupportedFormatsPostProcessorForVersion`: every other format is dropped, numeric
//! ones like `int32` included) and the checks kube-openapi's `strfmt.Default` registry applies
//! to them.
//!
//! Checked exactly: `date`, `date-time`/`datetime`, `uuid`, `uuid3`, `uuid4`, `uuid5`, `byte`,
//! `ipv4`, `ipv6`, `cidr`, `mac`, `hexcolor`, `rgbcolor`, `ssn`, `bsonobjectid`, `hostname`,
//! `password`. Kept but not checked (every string passes): `uri`, `email`, `isbn`, `isbn10`,
//! `isbn13`, `creditcard`, `duration`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A kept format's checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Date,
    DateTime,
    Uuid,
    Uuid3,
    Uuid4,
    Uuid5,
    Byte,
    Ipv4,
    Ipv6,
    Cidr,
    Mac,
    HexColor,
    RgbColor,
    Ssn,
    BsonObjectId,
    Hostname,
    /// Kept by kube, but not checked here (or never checked: `password`).
    Any,
}

impl Format {
    /// The checker of a schema's `format` when kube keeps it (names compare with `-`
    /// removed, as go-openapi normalizes them).
    pub fn supported(name: &str) -> Option<Format> {
        let normalized = name.replace('-', "");
        Some(match normalized.as_str() {
            "date" => Format::Date,
            "datetime" => Format::DateTime,
            "uuid" => Format::Uuid,
            "uuid3" => Format::Uuid3,
            "uuid4" => Format::Uuid4,
            "uuid5" => Format::Uuid5,
            "byte" => Format::Byte,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "cidr" => Format::Cidr,
            "mac" => Format::Mac,
            "hexcolor" => Format::HexColor,
            "rgbcolor" => Format::RgbColor,
            "ssn" => Format::Ssn,
            "bsonobjectid" => Format::BsonObjectId,
            "hostname" => Format::Hostname,
            "password" | "uri" | "email" | "isbn" | "isbn10" | "isbn13" | "creditcard"
            | "duration" => Format::Any,
            _ => return None,
        })
    }

    /// Whether `s` is valid in this format.
    pub fn check(self, s: &str) -> bool {
        match self {
            Format::Date => is_date(s),
            Format::DateTime => is_date_time(s),
            Format::Uuid => uuid(s, None),
            Format::Uuid3 => uuid(s, Some(b'3')),
            Format::Uuid4 => uuid(s, Some(b'4')),
            Format::Uuid5 => uuid(s, Some(b'5')),
            Format::Byte => is_base64(s),
            Format::Ipv4 => parse_ip_sloppy(s).is_some() && s.contains('.'),
            Format::Ipv6 => s.parse::<IpAddr>().is_ok() && s.contains(':'),
            Format::Cidr => is_cidr(s),
            Format::Mac => is_mac(s),
            Format::HexColor => {
                let h = s.strip_prefix('#').unwrap_or(s);
                (h.len() == 3 || h.len() == 6) && h.bytes().all(|c| c.is_ascii_hexdigit())
            }
            Format::RgbColor => is_rgb(s),
            Format::Ssn => is_ssn(s),
            Format::BsonObjectId => s.len() == 24 && s.bytes().all(|c| c.is_ascii_hexdigit()),
            Format::Hostname => is_hostname(s),
            Format::Any => true,
        }
    }
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Go's `time.Parse("2006-01-02", s)`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&s[0..4]), digits(&s[5..7]), digits(&s[8..10]))
    else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// strfmt's `IsDateTime`: a date, `t`, then `hh:mm:ss[.frac](z|±hh:mm)` (lower-cased).
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let t = parts[1];
    let b = t.as_bytes();
    let two = |i: usize| b.len() >= i + 2 && b[i].is_ascii_digit() && b[i + 1].is_ascii_digit();
    if !(two(0) && b.get(2) == Some(&b':') && two(3) && b.get(5) == Some(&b':') && two(6)) {
        return false;
    }
    let mut rest = &t[8..];
    // `(.[0-9]+)?`: any one character, then digits.
    let mut chars = rest.char_indices();
    if let Some((_, c)) = chars.next() {
        let after = &rest[c.len_utf8()..];
        let n = after.bytes().take_while(u8::is_ascii_digit).count();
        let tail = &after[n..];
        if n > 0 && (tail == "z" || zone(tail)) {
            rest = tail;
        }
    }
    if !(rest == "z" || zone(rest)) {
        return false;
    }
    &t[0..2] <= "23" && &t[3..5] <= "59" && &t[6..8] <= "59"
}

fn zone(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 6
        && (b[0] == b'+' || b[0] == b'-')
        && b[1].is_ascii_digit()
        && b[2].is_ascii_digit()
        && b[3] == b':'
        && b[4].is_ascii_digit()
        && b[5].is_ascii_digit()
}

/// `(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?V[0-9a-f]{3}-?[89ab]?...`: hyphens optional.
fn uuid(s: &str, version: Option<u8>) -> bool {
    let groups = [8usize, 4, 4, 4, 12];
    let b = s.as_bytes();
    let mut i = 0;
    for (g, len) in groups.iter().enumerate() {
        if g > 0 && b.get(i) == Some(&b'-') {
            i += 1;
        }
        if b.len() < i + len || !b[i..i + len].iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        if let Some(v) = version {
            if g == 2 && b[i] != v {
                return false;
            }
            if g == 3
                && v != b'3'
                && !matches!(b[i].to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b')
            {
                return false;
            }
        }
        i += len;
    }
    i == b.len()
}

/// govalidator's `IsBase64`: groups of four, padded at the end.
fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || b.len() % 4 != 0 {
        return false;
    }
    let ok = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    let n = b.len();
    let pad = b.iter().rev().take_while(|c| **c == b'=').count();
    pad <= 2 && b[..n - pad].iter().all(|c| ok(*c))
}

/// netutils' `ParseIPSloppy`: IPv4 with leading zeros allowed (read as decimal), or IPv6.
fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    if let Some(v4) = parse_v4_sloppy(s) {
        return Some(IpAddr::V4(v4));
    }
    if s.contains(':') {
        if let Some((head, tail)) = s.rsplit_once(':') {
            if tail.contains('.') {
                let v4 = parse_v4_sloppy(tail)?;
                let fixed = format!("{head}:{v4}");
                return fixed.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
            }
        }
        return s.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    None
}

fn parse_v4_sloppy(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut out = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        out[i] = p.parse::<u16>().ok().filter(|n| *n <= 255)? as u8;
    }
    Some(Ipv4Addr::from(out))
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Some(addr) = parse_ip_sloppy(ip) else {
        return false;
    };
    let max = if ip.contains(':') { 128 } else { 32 };
    let _ = addr;
    bits.len() <= 3 && digits(bits).is_some_and(|b| b <= max)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets, `:`- or `-`-separated pairs or `.`-separated
/// quads.
fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|c| c.is_ascii_hexdigit());
    let sizes = |count: usize| matches!(count, 6 | 8 | 20);
    for sep in [':', '-'] {
        if s.contains(sep) {
            let parts: Vec<&str> = s.split(sep).collect();
            return sizes(parts.len()) && parts.iter().all(|p| hex(p, 2));
        }
    }
    if s.contains('.') {
        let parts: Vec<&str> = s.split('.').collect();
        return sizes(parts.len() * 2) && parts.iter().all(|p| hex(p, 4));
    }
    false
}

fn is_rgb(s: &str) -> bool {
    let Some(inner) = s.strip_prefix("rgb(").and_then(|r| r.strip_suffix(')')) else {
        return false;
    };
    let parts: Vec<&str> = inner.split(',').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            let p = p.trim_matches(|c: char| c.is_whitespace());
            let canonical = p == "0" || !p.starts_with('0');
            p.len() <= 3 && canonical && digits(p).is_some_and(|n| n <= 255)
        })
}

/// govalidator's `IsSSN`: 11 characters, `ddd[- ]?dd[- ]?dddd`.
fn is_ssn(s: &str) -> bool {
    if s.len() != 11 {
        return false;
    }
    let b = s.as_bytes();
    let d = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let sep = |c: u8| c == b'-' || c == b' ';
    // 11 characters force both separators.
    d(0..3) && sep(b[3]) && d(4..6) && sep(b[6]) && d(7..11)
}

/// strfmt's `IsHostname`.
fn is_hostname(s: &str) -> bool {
    static RX: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let rx = RX.get_or_init(|| {
        regex::Regex::new(r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$").ok()
    });
    let Some(rx) = rx else {
        return true;
    };
    rx.is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let cases: &[(&str, &str, bool)] = &[
            ("date", "2024-02-29", true),
            ("date", "2023-02-29", false),
            ("date", "2024-1-01", false),
            ("date-time", "2024-02-29T10:00:00Z", true),
            ("date-time", "2024-02-29T10:00:00.123+02:00", true),
            ("date-time", "2024-02-29 10:00:00Z", false),
            ("date-time", "2024-02-29T25:00:00Z", false),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
            ("uuid", "123e4567e89b12d3a456426614174000", true),
            ("uuid", "123e4567-e89b-12d3-a456-42661417400", false),
            ("uuid4", "123e4567-e89b-42d3-a456-426614174000", true),
            ("uuid4", "123e4567-e89b-12d3-a456-426614174000", false),
            ("byte", "aGVsbG8=", true),
            ("byte", "aGVsbG8", false),
            ("ipv4", "10.0.0.1", true),
            ("ipv4", "010.0.0.1", true),
            ("ipv4", "::1", false),
            ("ipv6", "::1", true),
            ("ipv6", "10.0.0.1", false),
            ("cidr", "10.0.0.0/8", true),
            ("cidr", "10.0.0.0/33", false),
            ("mac", "00:00:5e:00:53:01", true),
            ("mac", "0000.5e00.5301", true),
            ("mac", "00:00:5e:00:53", false),
            ("hexcolor", "#fff", true),
            ("hexcolor", "#ffff", false),
            ("rgbcolor", "rgb(255, 0, 10)", true),
            ("rgbcolor", "rgb(256,0,0)", false),
            ("ssn", "123-45-6789", true),
            ("ssn", "123456789", false),
            ("hostname", "example.com", true),
            ("hostname", "-bad.com", false),
            ("bsonobjectid", "507f1f77bcf86cd799439011", true),
        ];
        for (f, s, want) in cases {
            let Some(check) = Format::supported(f) else {
                panic!("{f} unsupported");
            };
            assert_eq!(check.check(s), *want, "{f} {s:?}");
        }
        assert_eq!(Format::supported("int32"), None);
        assert_eq!(Format::supported("int-or-string"), None);
    }
}
