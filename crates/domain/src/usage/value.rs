//! The value of a meter's property in one usage event, as the event's JSON gives it.
//!
//! JSON numbers are read from their text, digit by digit, never through floating point. Without
//! `serde_json`'s `arbitrary_precision` feature a number with a fraction or an exponent reaches
//! this crate as an `f64`, whose text is the shortest one that reads back as the same `f64`: the
//! text that was sent for numbers of up to 15 significant digits. Longer values are sent exactly
//! as strings (`"123456789012.123456"`).

use rust_decimal::Decimal;
use serde_json::Value;

use super::text::Read;

/// Most decimal places of a numeric value, trailing zeros not counted.
const MAX_DECIMALS: i64 = 12;

/// Values are below `10^15`: at most this many digits before the point.
const MAX_WHOLE_DIGITS: i64 = 15;

/// Longest string a `unique_count` meter counts, in characters.
const MAX_UNIQUE_KEY_CHARS: usize = 200;

/// The value of a `sum`, `max` or `latest` meter's property: a JSON number, or a string holding
/// a plain decimal (`"12.5"`: digits and an optional `.`, no sign, exponent or spaces). It must
/// be at least 0, have at most 12 decimal places (trailing zeros not counted) and be below
/// 10^15. Numbers may have an exponent (`1e3`, `2.5E-4`). Returned normalized (`12.50` is
/// `12.5`).
pub fn numeric_value(v: &Value) -> Result<Decimal, String> {
    const RULE: &str = "must be a number (or a string holding a decimal such as \"12.5\") of at least 0 with at most 12 decimal places";
    let read = match v {
        Value::Number(n) => Read::json_number(&n.to_string()),
        Value::String(s) => Read::plain(s),
        _ => None,
    };
    let read = read
        .filter(|read| !read.is_negative() && read.decimal_places() <= MAX_DECIMALS)
        .ok_or_else(|| RULE.to_string())?;
    if read.whole_digits() > MAX_WHOLE_DIGITS {
        return Err("must be below 1000000000000000".into());
    }
    // At most 15 + 12 digits: a Decimal holds every accepted value exactly.
    read.to_decimal()
        .ok_or_else(|| "must be below 1000000000000000".into())
}

/// The key under which a `unique_count` meter counts a property's value: a string of 1 to 200
/// characters, kept as it is (case and spaces count), or a number, written in its canonical
/// decimal form (`1`, `1.0` and `1e0` are all `"1"`, `-2.50` is `"-2.5"`). A string is never
/// rewritten, so the number `1` and the string `"1"` are the same key, but `"1.0"` is another.
/// Null, booleans, arrays and objects are refused, and numbers of more than 28 digits.
pub fn unique_key(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => {
            let chars = s.chars().count();
            if (1..=MAX_UNIQUE_KEY_CHARS).contains(&chars) {
                Ok(s.clone())
            } else {
                Err(format!(
                    "must be a string of 1 to {MAX_UNIQUE_KEY_CHARS} characters, or a number"
                ))
            }
        }
        Value::Number(n) => Read::json_number(&n.to_string())
            .and_then(|read| read.to_decimal())
            .map(|value| value.normalize().to_string())
            .ok_or_else(|| {
                "must be a number of at most 28 digits, or a string of 1 to 200 characters".into()
            }),
        _ => Err(format!(
            "must be a string of 1 to {MAX_UNIQUE_KEY_CHARS} characters or a number (not null, a boolean, an array or an object)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use std::str::FromStr;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn numeric_values_from_numbers_and_decimal_strings() {
        let cases = [
            (json!(12), "12"),
            (json!(12.5), "12.5"),
            (json!("12.50"), "12.5"),
            (json!("007"), "7"),
            (json!(0), "0"),
            (parsed("-0"), "0"),
            (parsed("1e3"), "1000"),
            (parsed("2.5E-4"), "0.00025"),
            (parsed("0.000000000001"), "0.000000000001"),
            (json!("0.000000000001000"), "0.000000000001"),
            (parsed("999999999999999"), "999999999999999"),
            (
                json!("999999999999999.999999999999"),
                "999999999999999.999999999999",
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(numeric_value(&value), Ok(dec(expected)), "{value}");
        }
        assert_eq!(numeric_value(&json!("12.50")).unwrap().to_string(), "12.5");
    }

    #[test]
    fn numeric_values_refused() {
        let rule = "must be a number (or a string holding a decimal such as \"12.5\") of at least 0 with at most 12 decimal places";
        for value in [
            json!(-1),
            json!(-0.5),
            json!("-1"),
            json!("+1"),
            json!("1e3"),
            json!(" 1"),
            json!(""),
            json!("1,5"),
            json!("abc"),
            json!("0.0000000000001"),
            parsed("1e-13"),
            json!(null),
            json!(true),
            json!([1]),
            json!({"value": 1}),
        ] {
            assert_eq!(numeric_value(&value), Err(rule.into()), "{value}");
        }
        for value in [
            parsed("1e15"),
            json!(1_000_000_000_000_000u64),
            json!(u64::MAX),
            json!("1000000000000000"),
            parsed("1e300"),
        ] {
            assert_eq!(
                numeric_value(&value),
                Err("must be below 1000000000000000".into()),
                "{value}"
            );
        }
    }

    #[test]
    fn unique_keys() {
        assert_eq!(unique_key(&json!("user-1")), Ok("user-1".into()));
        assert_eq!(unique_key(&json!(" User 1 ")), Ok(" User 1 ".into()));
        assert_eq!(unique_key(&json!("1.0")), Ok("1.0".into()));
        assert_eq!(unique_key(&json!("é".repeat(200))), Ok("é".repeat(200)));
        for (number, key) in [
            ("1", "1"),
            ("1.0", "1"),
            ("1e0", "1"),
            ("10E-1", "1"),
            ("-2.50", "-2.5"),
            ("-0", "0"),
            ("18446744073709551615", "18446744073709551615"),
            ("0.1", "0.1"),
        ] {
            assert_eq!(unique_key(&parsed(number)), Ok(key.into()), "{number}");
        }
        assert!(unique_key(&json!("")).is_err());
        assert!(unique_key(&json!("x".repeat(201))).is_err());
        assert!(unique_key(&parsed("1e300")).is_err());
        for refused in [json!(null), json!(false), json!([]), json!({})] {
            assert!(unique_key(&refused).is_err(), "{refused}");
        }
    }

    proptest! {
        /// Every accepted value is within the rule, and a decimal written as a string reads the
        /// same as written as a JSON number.
        #[test]
        fn accepted_values_are_within_the_rule(text in "[0-9]{1,16}(\\.[0-9]{1,12})?") {
            let from_string = numeric_value(&Value::String(text.clone()));
            if let Ok(value) = &from_string {
                prop_assert!(*value >= Decimal::ZERO);
                prop_assert!(*value < dec("1000000000000000"));
                prop_assert!(value.scale() <= 12);
                prop_assert_eq!(*value, dec(&text));
            }
            let exact = dec(&text).normalize();
            let within = exact.scale() <= 12 && exact < dec("1000000000000000");
            prop_assert_eq!(from_string.is_ok(), within);
        }

        /// Whole numbers read the same from a JSON number and from a string.
        #[test]
        fn integers_read_alike(n in 0u64..1_000_000_000_000_000) {
            prop_assert_eq!(numeric_value(&json!(n)), numeric_value(&json!(n.to_string())));
            prop_assert_eq!(unique_key(&json!(n)), Ok(n.to_string()));
        }

        #[test]
        fn never_panics(text in "\\PC{0,30}") {
            let _ = numeric_value(&Value::String(text.clone()));
            let _ = unique_key(&Value::String(text.clone()));
            if let Ok(value) = serde_json::from_str::<Value>(&text) {
                let _ = numeric_value(&value);
                let _ = unique_key(&value);
            }
        }
    }
}
