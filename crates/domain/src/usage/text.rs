//! Exact reading of decimal text: plain decimals (`12.5`) and JSON numbers (`-1.5e-7`).
//!
//! A [`Decimal`] parsed from a long text rounds digits it cannot hold. Reading the digits here
//! first lets a rule judge every digit that was given (decimal places, magnitude, sign) before a
//! `Decimal` is made of them, so what a rule accepts is exactly what was written.

use rust_decimal::Decimal;

/// Exponents beyond this magnitude are read as this magnitude: any such value is far outside
/// every bound the rules set, and the arithmetic below stays within `i64`.
const EXPONENT_CLAMP: i64 = 1_000_000_000;

/// The most significant digits a [`Decimal`] is made of here (its mantissa holds 28 digits).
const DECIMAL_DIGITS: usize = 28;

/// A decimal value read exactly: `digits × 10^-places`, with a sign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Read {
    negative: bool,
    /// The significant digits, without leading or trailing zeros; empty for zero.
    digits: String,
    /// How many places the point stands left of the last digit; negative for the trailing zeros
    /// of a whole number (`1e3` is the digits `1` with places `-3`).
    places: i64,
}

impl Read {
    /// Reads a plain decimal: ASCII digits with an optional single `.` followed by at least one
    /// digit (`12`, `12.5`, `007.10`). No sign, exponent, spaces or separators.
    pub(super) fn plain(text: &str) -> Option<Read> {
        let (whole, fraction) = split_point(text)?;
        Some(Read::of(false, whole, fraction, 0))
    }

    /// Reads a JSON number as `serde_json` writes it: an optional `-`, a plain decimal and an
    /// optional exponent (`e` or `E`, an optional sign, digits).
    pub(super) fn json_number(text: &str) -> Option<Read> {
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
            Some((mantissa, exponent)) => (mantissa, exponent_value(exponent)?),
            None => (unsigned, 0),
        };
        let (whole, fraction) = split_point(mantissa)?;
        Some(Read::of(negative, whole, fraction, exponent))
    }

    fn of(negative: bool, whole: &str, fraction: &str, exponent: i64) -> Read {
        let joined = format!("{whole}{fraction}");
        let significant = joined.trim_start_matches('0');
        let digits = significant.trim_end_matches('0');
        let trailing_zeros = (significant.len() - digits.len()) as i64;
        let places = if digits.is_empty() {
            0
        } else {
            fraction.len() as i64 - exponent - trailing_zeros
        };
        Read {
            negative,
            digits: digits.to_string(),
            places,
        }
    }

    /// Whether the value is below zero (`-0` is not).
    pub(super) fn is_negative(&self) -> bool {
        self.negative && !self.digits.is_empty()
    }

    /// Decimal places, trailing zeros not counted: 2 for `12.50`, 0 for `1e3`.
    pub(super) fn decimal_places(&self) -> i64 {
        self.places.max(0)
    }

    /// Digits before the point, leading zeros not counted: 0 below 1, 4 for `1e3`; a value is
    /// below `10^n` exactly when it has at most `n` of them.
    pub(super) fn whole_digits(&self) -> i64 {
        (self.digits.len() as i64 - self.places).max(0)
    }

    /// The exact value as a normalized [`Decimal`]; `None` when it needs more than 28 digits
    /// (significant digits and the zeros between them and the point).
    pub(super) fn to_decimal(&self) -> Option<Decimal> {
        if self.digits.is_empty() {
            return Some(Decimal::ZERO);
        }
        let zeros = usize::try_from(-self.places).unwrap_or(0);
        let scale = u32::try_from(self.places).unwrap_or(0);
        if self.digits.len() + zeros > DECIMAL_DIGITS || scale > Decimal::MAX_SCALE {
            return None;
        }
        let mantissa = format!("{}{}", self.digits, "0".repeat(zeros))
            .parse::<i128>()
            .ok()?;
        let signed = if self.negative { -mantissa } else { mantissa };
        Decimal::try_from_i128_with_scale(signed, scale).ok()
    }
}

/// Splits `"12.34"` into `("12", "34")`: both ASCII digits, the whole part not empty, and a
/// fraction, when there is a point, of at least one digit.
fn split_point(text: &str) -> Option<(&str, &str)> {
    let (whole, fraction) = match text.split_once('.') {
        Some((_, "")) => return None,
        Some(parts) => parts,
        None => (text, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (!whole.is_empty() && digits(whole) && digits(fraction)).then_some((whole, fraction))
}

/// An exponent's value: an optional sign and at least one digit, clamped to
/// [`EXPONENT_CLAMP`].
fn exponent_value(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = digits.trim_start_matches('0');
    let magnitude = if significant.len() > 9 {
        EXPONENT_CLAMP
    } else {
        significant.parse::<i64>().unwrap_or(0).min(EXPONENT_CLAMP)
    };
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn reads_plain_decimals_exactly() {
        let read = Read::plain("0012.5000").unwrap();
        assert_eq!((read.decimal_places(), read.whole_digits()), (1, 2));
        assert_eq!(read.to_decimal(), Some(dec("12.5")));
        assert_eq!(Read::plain("0").unwrap().to_decimal(), Some(Decimal::ZERO));
        assert_eq!(Read::plain("0.000").unwrap().whole_digits(), 0);
        assert_eq!(Read::plain("1000").unwrap().whole_digits(), 4);
        assert_eq!(Read::plain("0.05").unwrap().whole_digits(), 0);
        // Digits a Decimal would round are still counted.
        let long = format!("1.{}1", "0".repeat(40));
        assert_eq!(Read::plain(&long).unwrap().decimal_places(), 41);
        assert_eq!(Read::plain(&long).unwrap().to_decimal(), None);
        for bad in [
            "", ".", "1.", ".5", "+1", "-1", "1e3", " 1", "1 ", "1,5", "1.2.3", "١",
        ] {
            assert_eq!(Read::plain(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn reads_json_numbers_with_exponents() {
        let cases = [
            ("1e3", "1000", 0, 4),
            ("1.5E-7", "0.00000015", 8, 0),
            ("-2.50", "-2.5", 1, 1),
            ("12e+2", "1200", 0, 4),
            ("1.0", "1", 0, 1),
            ("-0.0", "0", 0, 0),
            ("0e-50", "0", 0, 0),
        ];
        for (text, value, places, whole) in cases {
            let read = Read::json_number(text).unwrap();
            assert_eq!(read.to_decimal(), Some(dec(value)), "{text}");
            assert_eq!(read.decimal_places(), places, "{text}");
            assert_eq!(read.whole_digits(), whole, "{text}");
        }
        assert!(Read::json_number("-2").unwrap().is_negative());
        assert!(!Read::json_number("-0").unwrap().is_negative());
        let huge = Read::json_number("1e99999999999999999999").unwrap();
        assert_eq!(huge.whole_digits(), EXPONENT_CLAMP + 1);
        assert_eq!(huge.to_decimal(), None);
        let tiny = Read::json_number("1e-99999999999999999999").unwrap();
        assert_eq!(tiny.decimal_places(), EXPONENT_CLAMP);
        for bad in ["", "e3", "1e", "1e+", "--1", "+1", "1.e3", "0x10", "NaN"] {
            assert_eq!(Read::json_number(bad), None, "{bad:?}");
        }
    }
}
