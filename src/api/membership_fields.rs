//! Rules of the membership bodies' numeric fields (amounts, quantity, billing cycle), shared by
//! create and update: JSON numbers and numeric strings alike, reported under the field's path.

use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::membership as rules;
use recur_domain::money::{self, Currency};
use recur_domain::validation::FieldErrors;
use rust_decimal::Decimal;

use super::input::required_text;
use super::memberships::{BillingCycleInput, PricingInfoInput};

/// Currency, total, unit price and quantity of `pricingInfo`, all in minor units.
pub(super) type Pricing = (Currency, i64, Option<i64>, Option<i64>);

/// `pricingInfo` of the create body, every failing field reported under its path.
pub(super) fn pricing(p: PricingInfoInput, errors: &mut FieldErrors) -> Option<Pricing> {
    let currency = required_text(p.currency, "pricingInfo.currency", errors, |code| {
        Currency::parse(code)
            .map(|c| c.code().to_string())
            .map_err(|e| e.to_string())
    })
    .and_then(|code| Currency::parse(&code).ok());
    let total_text = p.total_amount.required("pricingInfo.totalAmount", errors);
    let per_unit = p
        .price_per_unit
        .optional("pricingInfo.pricePerUnit", errors);
    let quantity = p.quantity.optional("pricingInfo.quantity", errors);
    let quantity = quantity.and_then(|q| {
        errors.check(
            "pricingInfo.quantity",
            if q > 0 {
                Ok(q)
            } else {
                Err("must be greater than 0".to_string())
            },
        )
    });
    let currency = currency?;
    let total = total_text.and_then(|text| {
        errors.check(
            "pricingInfo.totalAmount",
            money::parse_amount(&text, currency).map_err(|e| e.to_string()),
        )
    });
    let per_unit = per_unit.and_then(|value| {
        let minor = decimal_value(&value).and_then(|d| positive_minor(d, currency));
        errors.check("pricingInfo.pricePerUnit", minor)
    });
    let total = total?;
    let price = rules::plan_price(total, per_unit, quantity);
    errors.check("pricingInfo.totalAmount", price)?;
    Some((currency, total, per_unit, quantity))
}

/// A positive decimal with no more decimals than the currency has, in minor units.
pub(super) fn positive_minor(value: Decimal, currency: Currency) -> Result<i64, String> {
    let minor = money::decimal_to_minor(value, currency).map_err(|e| e.to_string())?;
    if minor > 0 {
        Ok(minor)
    } else {
        Err("must be greater than 0".into())
    }
}

/// An integer ≥ 1 given as a JSON integer or a string of digits (the update table declares
/// `intervalCount` a string).
pub(super) fn interval_count(value: &serde_json::Value) -> Result<u32, String> {
    let parsed = match value {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    match parsed {
        Some(n) if n >= 1 => u32::try_from(n).map_err(|_| "is too large".to_string()),
        Some(_) => Err("must be at least 1".into()),
        None => Err("must be an integer of at least 1".into()),
    }
}

/// `billingCycle` of the create body, every failing field reported under its path.
pub(super) fn billing_cycle(
    c: BillingCycleInput,
    errors: &mut FieldErrors,
) -> Option<BillingCycle> {
    let interval_type = required_text(c.interval_type, "billingCycle.intervalType", errors, |v| {
        IntervalType::parse(v)
            .map(|t| t.as_str().to_string())
            .map_err(|e| e.to_string())
    })
    .and_then(|v| IntervalType::parse(&v).ok());
    let count = match c
        .interval_count
        .optional("billingCycle.intervalCount", errors)
    {
        Some(value) => errors.check("billingCycle.intervalCount", interval_count(&value))?,
        None => 1,
    };
    BillingCycle::new(interval_type?, count).ok()
}

/// A decimal given as a JSON number or a decimal string. A JSON number is always a number; when it
/// is refused, it is because no amount has that size or precision (`5e-324`, `3e300`).
pub(super) fn decimal_value(value: &serde_json::Value) -> Result<Decimal, String> {
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

/// An integer > 0 given as a JSON integer or a string of digits.
pub(super) fn positive_integer(value: &serde_json::Value) -> Result<i64, String> {
    let parsed = match value {
        serde_json::Value::Number(n) => n.as_i64(),
        serde_json::Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    match parsed {
        Some(n) if n > 0 => Ok(n),
        Some(_) => Err("must be greater than 0".into()),
        None => Err("must be an integer".into()),
    }
}
