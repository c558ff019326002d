//! `resource.Quantity` as far as validation needs it (apimachinery `pkg/api/resource`):
//! parsing (`ParseQuantity`, its int64 fast path and the exact slow path), comparing,
//! `Value`/`MilliValue`, the canonical `String()` and how a Quantity value prints in a field
//! error (`%#v` of the struct, since its `String` has a pointer receiver).
//!
//! Values are kept exactly in units of 10^-9 (the slow path rounds up to nano, as upstream);
//! upstream prints a slow-path quantity's `%#v` with an `*inf.Dec` pointer no one can
//! reproduce.

use serde_json::Value;

/// How the quantity was written (`resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::DecimalSi => "DecimalSI",
            Format::BinarySi => "BinarySI",
            Format::DecimalExponent => "DecimalExponent",
        }
    }
}

/// A parsed quantity.
#[derive(Clone, Debug)]
pub struct Quantity {
    /// The value in units of 10^-9 (saturating).
    nanos: i128,
    /// The `int64Amount` (value, scale) when parsing took the fast path.
    int: Option<(i64, i32)>,
    format: Format,
    /// The cached string (`s`): the input when it was already canonical.
    cached: String,
}

fn suffix(s: &str) -> Option<(u32, i32, Format)> {
    Some(match s {
        "" => (10, 0, Format::DecimalSi),
        "n" => (10, -9, Format::DecimalSi),
        "u" => (10, -6, Format::DecimalSi),
        "m" => (10, -3, Format::DecimalSi),
        "k" => (10, 3, Format::DecimalSi),
        "M" => (10, 6, Format::DecimalSi),
        "G" => (10, 9, Format::DecimalSi),
        "T" => (10, 12, Format::DecimalSi),
        "P" => (10, 15, Format::DecimalSi),
        "E" => (10, 18, Format::DecimalSi),
        "Ki" => (2, 10, Format::BinarySi),
        "Mi" => (2, 20, Format::BinarySi),
        "Gi" => (2, 30, Format::BinarySi),
        "Ti" => (2, 40, Format::BinarySi),
        "Pi" => (2, 50, Format::BinarySi),
        "Ei" => (2, 60, Format::BinarySi),
        e if e.starts_with(['e', 'E']) => (10, e[1..].parse().ok()?, Format::DecimalExponent),
        _ => return None,
    })
}

/// `n * 10^p`, rounding up (away from zero) when `p` is negative; saturating.
fn shift10(n: i128, p: i32) -> i128 {
    if p >= 0 {
        return n.saturating_mul(10i128.checked_pow(p as u32).unwrap_or(i128::MAX));
    }
    let Some(d) = 10i128.checked_pow((-p) as u32) else {
        return n.signum();
    };
    n / d + if n % d != 0 { n.signum() } else { 0 }
}

impl Quantity {
    /// `ParseQuantity` of a JSON value (string or number); `None` when it does not parse.
    pub fn of(v: &Value) -> Option<Quantity> {
        match v {
            Value::String(s) => Quantity::parse(s.trim()),
            Value::Number(n) => Quantity::parse(&n.to_string()),
            _ => None,
        }
    }

    pub fn parse(s: &str) -> Option<Quantity> {
        if s == "0" {
            return Some(Quantity::int(0, 0, Format::DecimalSi, s.into()));
        }
        let (negative, rest) = match s.as_bytes().first()? {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let digits_end = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, suf) = rest.split_at(digits_end);
        let (num, denom) = number.split_once('.').unwrap_or((number, ""));
        if num.is_empty() && denom.is_empty() || denom.contains('.') {
            return None;
        }
        let num = num.trim_start_matches('0');
        let num = if num.is_empty() { "0" } else { num };
        let (base, exponent, format) = suffix(suf)?;
        let shifted = format!("{num}{denom}");
        // The exact value, for the slow path (and comparisons).
        let digits: i128 = shifted.parse().unwrap_or(i128::MAX);
        let digits = if negative { -digits } else { digits };
        let nanos = if base == 2 {
            let scaled = 2i128
                .checked_pow(exponent as u32)
                .map_or(i128::MAX, |m| digits.saturating_mul(m));
            shift10(scaled, 9i32.saturating_sub(denom.len() as i32))
        } else {
            shift10(
                digits,
                exponent
                    .saturating_add(9)
                    .saturating_sub(denom.len() as i32),
            )
        };
        let slow = Quantity {
            nanos,
            int: None,
            format,
            cached: String::new(),
        };
        let (mut scale, mantissa, precision) = match format {
            Format::BinarySi => {
                let p = if denom.is_empty() {
                    15 - num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1
                } else {
                    -1
                };
                (0, 1i64.checked_shl(exponent as u32).unwrap_or(0), p)
            }
            _ => (exponent, 1, 18 - shifted.len() as i32),
        };
        scale = scale.saturating_sub(denom.len() as i32);
        if precision < 0 || scale < -9 {
            // A binary quantity below one is shown as decimal.
            let format = match format {
                Format::BinarySi if nanos.abs() < 1_000_000_000 => Format::DecimalSi,
                f => f,
            };
            return Some(Quantity { format, ..slow });
        }
        let Some(mut result) = shifted
            .parse::<i64>()
            .ok()
            .and_then(|v| v.checked_mul(mantissa))
        else {
            return Some(slow);
        };
        if negative {
            result = -result;
        }
        let v = result.abs() / mantissa.max(1);
        let canonical = match format {
            Format::BinarySi => exponent % 10 == 0 && v & 7 != 0,
            _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
        };
        let cached = if canonical {
            s.to_string()
        } else {
            String::new()
        };
        Some(Quantity::int(result, scale, format, cached))
    }

    fn int(value: i64, scale: i32, format: Format, cached: String) -> Quantity {
        Quantity {
            nanos: shift10(i128::from(value), scale.saturating_add(9)),
            int: Some((value, scale)),
            format,
            cached,
        }
    }

    /// Zero.
    pub fn zero() -> Quantity {
        Quantity {
            nanos: 0,
            int: Some((0, 0)),
            format: Format::DecimalSi,
            cached: String::new(),
        }
    }

    /// `Add`: the sum, in the format of `self` (of `other` when `self` is zero); exact at
    /// the finer scale when both took the int64 path and nothing overflows.
    pub fn add(&self, other: &Quantity) -> Quantity {
        let int = match (self.int, other.int) {
            (Some((a, sa)), Some((b, sb))) => {
                let s = sa.min(sb);
                let up = |v: i64, from: i32| {
                    10i64
                        .checked_pow((from - s) as u32)
                        .and_then(|m| v.checked_mul(m))
                };
                up(a, sa)
                    .zip(up(b, sb))
                    .and_then(|(x, y)| x.checked_add(y))
                    .map(|v| (v, s))
            }
            _ => None,
        };
        let mut q = self.combine(other, self.nanos.saturating_add(other.nanos));
        q.int = int;
        q
    }

    /// `Sub`.
    pub fn sub(&self, other: &Quantity) -> Quantity {
        self.combine(other, self.nanos.saturating_sub(other.nanos))
    }

    fn combine(&self, other: &Quantity, nanos: i128) -> Quantity {
        let format = if self.nanos == 0 {
            other.format
        } else {
            self.format
        };
        Quantity {
            nanos,
            int: None,
            format,
            cached: String::new(),
        }
    }

    /// `Cmp`.
    pub fn cmp(&self, other: &Quantity) -> std::cmp::Ordering {
        self.nanos.cmp(&other.nanos)
    }

    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// `MilliValue()` (rounded up, as upstream's `ScaledValue`).
    pub fn milli(&self) -> i128 {
        shift10(self.nanos, -6)
    }

    /// `Value()` (rounded up).
    pub fn whole(&self) -> i128 {
        shift10(self.nanos, -9)
    }

    /// `String()`: the canonical form (`CanonicalizeBytes`).
    pub fn string(&self) -> String {
        if !self.cached.is_empty() {
            return self.cached.clone();
        }
        if self.nanos == 0 {
            return "0".into();
        }
        let mut format = self.format;
        if format == Format::BinarySi {
            let whole = self.whole();
            if (-1024 < whole && whole < 1024) || self.nanos % 1_000_000_000 != 0 {
                format = Format::DecimalSi;
            }
        }
        if format == Format::BinarySi {
            let mut v = self.nanos / 1_000_000_000;
            let mut exp = 0;
            while v % 1024 == 0 && exp < 6 {
                v /= 1024;
                exp += 1;
            }
            let suf = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
            return format!("{v}{suf}");
        }
        let (mut v, mut exp) = match self.int {
            Some((value, scale)) => (i128::from(value), scale),
            None => (self.nanos, -9),
        };
        while v != 0 && v % 10 == 0 {
            v /= 10;
            exp = exp.saturating_add(1);
        }
        while exp.rem_euclid(3) != 0 {
            v = v.saturating_mul(10);
            exp = exp.saturating_sub(1);
        }
        let suf = match (format, exp) {
            (Format::DecimalExponent, 0) => String::new(),
            (Format::DecimalExponent, e) => format!("e{e}"),
            (_, -9) => "n".into(),
            (_, -6) => "u".into(),
            (_, -3) => "m".into(),
            (_, 3) => "k".into(),
            (_, 6) => "M".into(),
            (_, 9) => "G".into(),
            (_, 12) => "T".into(),
            (_, 15) => "P".into(),
            (_, 18) => "E".into(),
            _ => String::new(),
        };
        format!("{v}{suf}")
    }

    /// How `field.Invalid(path, quantity, ...)` prints it: Go's `%#v` of the struct.
    pub fn go_repr(&self) -> String {
        let ((value, scale), dec) = match self.int {
            Some(i) => (i, "(*inf.Dec)(nil)"),
            None => ((0, 0), "(*inf.Dec)(0xc000000000)"),
        };
        format!(
            "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{Dec:{dec}}}, s:{}, Format:{}}}",
            crate::meta::field_error::go_quote(&self.cached),
            crate::meta::field_error::go_quote(self.format.name()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_strings_and_reprs() {
        for (input, string, cached) in [
            ("2", "2", "2"),
            ("500m", "500m", "500m"),
            ("1000m", "1", ""),
            ("0.5", "500m", ""),
            ("1Gi", "1Gi", "1Gi"),
            ("1024Mi", "1Gi", ""),
            ("8Ki", "8Ki", ""),
            ("1500", "1500", "1500"),
            ("2000", "2k", ""),
            ("1e3", "1e3", "1e3"),
            ("-1", "-1", "-1"),
            ("1.5Gi", "1536Mi", ""),
            ("0.5Ki", "512", ""),
            ("1.0000000001", "1000000001n", ""),
            ("123456789012345678901", "123456789012345678901", ""),
        ] {
            let q = Quantity::parse(input).unwrap();
            assert_eq!(q.string(), string, "{input}");
            assert_eq!(q.cached, cached, "{input}");
        }
        assert_eq!(
            Quantity::parse("2").unwrap().go_repr(),
            "resource.Quantity{i:resource.int64Amount{value:2, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"2\", Format:\"DecimalSI\"}"
        );
        let (a, b) = (
            Quantity::parse("1Gi").unwrap(),
            Quantity::parse("1000Mi").unwrap(),
        );
        assert_eq!(a.cmp(&b), std::cmp::Ordering::Greater);
        assert_eq!(Quantity::parse("1500m").unwrap().milli(), 1500);
        assert!(Quantity::parse("abc").is_none());
        for odd in [
            "1e2147483647",
            "1.5e-2147483648",
            "9e2147483647",
            "-1e-2147483648",
            "1.e5",
        ] {
            let q = Quantity::parse(odd).unwrap();
            let _ = (q.string(), q.milli(), q.go_repr());
        }
    }
}
