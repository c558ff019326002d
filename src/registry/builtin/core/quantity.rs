//! `resource.Quantity` as far as validation needs it (apimachinery `pkg/api/resource`):
//! parsing the int64 fast path of `ParseQuantity`, comparing, `Value`/`MilliValue`, the
//! canonical `String()` and how a Quantity value prints in a field error (`%#v` of the
//! struct, since its `String` has a pointer receiver).
//!
//! Quantities the fast path cannot hold (more than 18 digits, finer than nano) keep an
//! approximate `f64`; upstream prints those with an `*inf.Dec` pointer no one can reproduce.

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

/// A parsed quantity: `value * 10^scale`, or `approx` when it left the int64 path.
#[derive(Clone, Debug)]
pub struct Quantity {
    value: i64,
    scale: i32,
    approx: Option<f64>,
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
        let (mut scale, mantissa, precision) = match format {
            Format::BinarySi => {
                let p = if denom.is_empty() {
                    15 - num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1
                } else {
                    -1
                };
                (0, 1i64.checked_shl(exponent as u32).unwrap_or(0), p)
            }
            _ => (exponent, 1, 18 - (num.len() + denom.len()) as i32),
        };
        let sign = if negative { -1.0 } else { 1.0 };
        let approx = || {
            let n: f64 = format!("{num}.{denom}0").parse().unwrap_or(0.0);
            let mult = if base == 2 {
                2f64.powi(exponent)
            } else {
                10f64.powi(exponent)
            };
            Quantity {
                value: 0,
                scale: 0,
                approx: Some(sign * n * mult),
                format,
                cached: String::new(),
            }
        };
        if precision < 0 {
            return Some(approx());
        }
        scale -= denom.len() as i32;
        if scale < -9 {
            return Some(approx());
        }
        let shifted = format!("{num}{denom}");
        let Ok(v) = shifted.parse::<i64>() else {
            return Some(approx());
        };
        let Some(mut result) = v.checked_mul(mantissa) else {
            return Some(approx());
        };
        if negative {
            result = -result;
        }
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
            value,
            scale,
            approx: None,
            format,
            cached,
        }
    }

    /// The value in units of 10^-9 (saturating), for comparisons.
    fn nanos(&self) -> i128 {
        if let Some(f) = self.approx {
            return (f * 1e9) as i128;
        }
        let v = i128::from(self.value);
        let shift = self.scale + 9;
        if shift >= 0 {
            v.saturating_mul(10i128.saturating_pow(shift as u32))
        } else {
            v / 10i128.pow((-shift) as u32)
        }
    }

    /// `Cmp`: -1, 0 or 1.
    pub fn cmp(&self, other: &Quantity) -> std::cmp::Ordering {
        self.nanos().cmp(&other.nanos())
    }

    pub fn is_negative(&self) -> bool {
        self.nanos() < 0
    }

    /// `MilliValue()` (rounded up, as upstream's `ScaledValue`).
    pub fn milli(&self) -> i128 {
        let n = self.nanos();
        n / 1_000_000 + i128::from(n % 1_000_000 > 0)
    }

    /// `Value()` (rounded up).
    pub fn whole(&self) -> i128 {
        let n = self.nanos();
        n / 1_000_000_000 + i128::from(n % 1_000_000_000 > 0)
    }

    /// `String()`: the canonical form (`CanonicalizeBytes`).
    pub fn string(&self) -> String {
        if !self.cached.is_empty() {
            return self.cached.clone();
        }
        if let Some(f) = self.approx {
            return format!("{f}");
        }
        if self.value == 0 {
            return "0".into();
        }
        let mut format = self.format;
        if format == Format::BinarySi {
            let exact = self.scale >= 0 || self.nanos() % 1_000_000_000 == 0;
            if (-1024 < self.whole() && self.whole() < 1024) || !exact {
                format = Format::DecimalSi;
            }
        }
        if format == Format::BinarySi {
            let mut v = self.nanos() / 1_000_000_000;
            let mut exp = 0;
            while v % 1024 == 0 && exp < 6 {
                v /= 1024;
                exp += 1;
            }
            let suf = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
            return format!("{v}{suf}");
        }
        let (mut v, mut exp) = (i128::from(self.value), self.scale);
        while v != 0 && v % 10 == 0 {
            v /= 10;
            exp += 1;
        }
        while exp.rem_euclid(3) != 0 {
            v *= 10;
            exp -= 1;
        }
        let suf = match (format, exp) {
            (Format::DecimalExponent, 0) => String::new(),
            (Format::DecimalExponent, e) => format!("e{e}"),
            (_, -9) => "n".into(),
            (_, -6) => "u".into(),
            (_, -3) => "m".into(),
            (_, 0) => String::new(),
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
        let dec = if self.approx.is_some() {
            "(*inf.Dec)(0xc000000000)"
        } else {
            "(*inf.Dec)(nil)"
        };
        format!(
            "resource.Quantity{{i:resource.int64Amount{{value:{}, scale:{}}}, d:resource.infDecAmount{{Dec:{dec}}}, s:{}, Format:{}}}",
            self.value,
            self.scale,
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
    }
}
