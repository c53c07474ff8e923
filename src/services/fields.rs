//! Readers of the money and calendar fields that memberships, prices and coupons share: a
//! currency, an amount as a decimal string, an interval count or quantity given as a JSON integer
//! or a string of digits. Each reports its refusal under the path it is given.

use recur_domain::membership as rules;
use recur_domain::money::{self, Currency};
use recur_domain::validation::FieldErrors;
use rust_decimal::Decimal;

use crate::http::input::{required_text, Field};

/// A required ISO 4217 `currency` field (any letter case), reported under `path`.
pub fn currency(field: Field<String>, path: &str, errors: &mut FieldErrors) -> Option<Currency> {
    let code = required_text(field, path, errors, |code| {
        Currency::parse(code)
            .map(|c| c.code().to_string())
            .map_err(|e| e.to_string())
    })?;
    Currency::parse(&code).ok()
}

/// A required amount given as a decimal string (`totalAmount`, a price's `unitAmount`, a
/// coupon's `amountOff`): greater than 0, with at most `currency`'s decimals and at most
/// [`money::MAX_AMOUNT_MINOR`] minor units, reported under `path`. Without a currency (its own
/// field failed) only its presence is checked.
pub fn amount(
    field: Field<String>,
    path: &str,
    currency: Option<Currency>,
    errors: &mut FieldErrors,
) -> Option<i64> {
    let text = field.required(path, errors)?;
    let minor = money::parse_amount(&text, currency?).map_err(|e| e.to_string());
    errors.check(path, minor)
}

/// A positive decimal with no more decimals than the currency has, in minor units.
pub fn positive_minor(value: Decimal, currency: Currency) -> Result<i64, String> {
    let minor = money::decimal_to_minor(value, currency).map_err(|e| e.to_string())?;
    if minor > 0 {
        Ok(minor)
    } else {
        Err("must be greater than 0".into())
    }
}

/// An integer ≥ 1 given as a JSON integer or a string of digits (the update table declares
/// `intervalCount` a string). A count beyond `u32` is kept as `u32::MAX`, which the cycle's bound
/// then refuses as too large.
pub fn interval_count(value: &serde_json::Value) -> Result<u32, String> {
    match integer(value) {
        Some(n) if n >= 1 => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
        Some(_) => Err("must be at least 1".into()),
        None => Err("must be an integer of at least 1".into()),
    }
}

/// A decimal given as a JSON number or a decimal string. A JSON number is always a number; when it
/// is refused, it is because no amount has that size or precision (`5e-324`, `3e300`).
pub fn decimal_value(value: &serde_json::Value) -> Result<Decimal, String> {
    match value {
        serde_json::Value::Number(n) => n
            .to_string()
            .parse::<Decimal>()
            .map_err(|_| "is too large or has too many decimal places".to_string()),
        serde_json::Value::String(s) => s
            .trim()
            .parse::<Decimal>()
            .map_err(|_| "must be a number".to_string()),
        _ => Err("must be a number".into()),
    }
}

/// `quantity` of the update body: a JSON integer or a string of digits, from 1 to
/// [`rules::MAX_QUANTITY`].
pub fn quantity(value: &serde_json::Value) -> Result<i64, String> {
    integer(value)
        .ok_or_else(|| "must be an integer".to_string())
        .and_then(rules::quantity)
}

/// An integer given as a JSON integer or a string of digits. One beyond `i64` saturates to
/// `i64::MAX` (or `i64::MIN`), so that the field's bound refuses it as too large rather than as no
/// integer at all.
fn integer(value: &serde_json::Value) -> Option<i64> {
    let saturated = |negative: bool| if negative { i64::MIN } else { i64::MAX };
    match value {
        serde_json::Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|_| i64::MAX))
            .or_else(|| {
                let f = n.as_f64()?;
                (f.fract() == 0.0 && f.abs() >= 9.223_372_036_854_776e18)
                    .then(|| saturated(f < 0.0))
            }),
        serde_json::Value::String(s) => {
            let text = s.trim();
            text.parse::<i64>().ok().or_else(|| {
                let digits = text.trim_start_matches(['+', '-']);
                let signs = text.len() - digits.len();
                (signs <= 1 && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| saturated(text.starts_with('-')))
            })
        }
        _ => None,
    }
}
