//! Rules of the membership bodies' numeric fields (amounts, quantity, billing cycle), shared by
//! create and update: JSON numbers and numeric strings alike, reported under the field's path.

use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::membership as rules;
use recur_domain::money::{self, Currency};
use recur_domain::price::Price;
use recur_domain::validation::FieldErrors;
use rust_decimal::Decimal;
use serde::Deserialize;
use utoipa::ToSchema;

use super::field_schemas::{CurrencyCode, IntervalCount, Quantity, UnitPrice};
use crate::http::input::{required_text, Field};

/// `pricingInfo` of the create body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct PricingInfoInput {
    /// ISO 4217 code.
    #[serde(default)]
    #[schema(required = true, value_type = CurrencyCode)]
    pub currency: Field<String>,
    /// The price per period: a decimal string > 0 with at most the currency's decimals.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "29.97", pattern = "^[0-9]+(\\.[0-9]+)?$")]
    pub total_amount: Field<String>,
    /// Optional, > 0 (a number or a decimal string). With quantity, their product must equal
    /// totalAmount; alone, it is kept as given.
    #[serde(default)]
    #[schema(value_type = Option<UnitPrice>)]
    pub price_per_unit: Field<serde_json::Value>,
    /// Optional integer from 1 to 1,000,000,000.
    #[serde(default)]
    #[schema(value_type = Option<Quantity>)]
    pub quantity: Field<i64>,
}

/// `billingCycle` of the create body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct BillingCycleInput {
    /// Daily, Weekly, Monthly or Annually.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "Monthly", pattern = "^([Dd][Aa][Ii][Ll][Yy]|[Ww][Ee][Ee][Kk][Ll][Yy]|[Mm][Oo][Nn][Tt][Hh][Ll][Yy]|[Aa][Nn][Nn][Uu][Aa][Ll][Ll][Yy])$")]
    pub interval_type: Field<String>,
    /// Integer ≥ 1, default 1; a cycle is at most 3 years (Daily 1095, Weekly 156, Monthly 36,
    /// Annually 3).
    #[serde(default)]
    #[schema(value_type = Option<IntervalCount>)]
    pub interval_count: Field<serde_json::Value>,
}

/// Currency, total, unit price and quantity of `pricingInfo`, all in minor units.
pub(super) type Pricing = (Currency, i64, Option<i64>, Option<i64>);

/// `pricingInfo` of the create body, every failing field reported under its path.
pub(super) fn pricing(p: PricingInfoInput, errors: &mut FieldErrors) -> Option<Pricing> {
    let currency = currency(p.currency, "pricingInfo.currency", errors);
    let total = amount(p.total_amount, "pricingInfo.totalAmount", currency, errors);
    let per_unit = p
        .price_per_unit
        .optional("pricingInfo.pricePerUnit", errors);
    let quantity = p
        .quantity
        .optional("pricingInfo.quantity", errors)
        .and_then(|q| errors.check("pricingInfo.quantity", rules::quantity(q)));
    let currency = currency?;
    let per_unit = per_unit.and_then(|value| {
        let minor = decimal_value(&value).and_then(|d| positive_minor(d, currency));
        errors.check("pricingInfo.pricePerUnit", minor)
    });
    let price = Price::of_plan(total?, per_unit, quantity);
    let price = errors.check("pricingInfo.totalAmount", price)?;
    Some((currency, price.total, price.per_unit, price.quantity))
}

/// A required ISO 4217 `currency` field (any letter case), reported under `path`.
pub(super) fn currency(
    field: Field<String>,
    path: &str,
    errors: &mut FieldErrors,
) -> Option<Currency> {
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
pub(super) fn amount(
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
pub(super) fn positive_minor(value: Decimal, currency: Currency) -> Result<i64, String> {
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
pub(super) fn interval_count(value: &serde_json::Value) -> Result<u32, String> {
    match integer(value) {
        Some(n) if n >= 1 => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
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
    let cycle = BillingCycle::new(interval_type?, count).map_err(|e| e.to_string());
    errors.check("billingCycle.intervalCount", cycle)
}

/// Holds an update's cycle to the bound of a created one: the new `intervalType` and
/// `intervalCount`, each defaulting to the membership's `current` one. A failure is reported
/// under `intervalCount` when it was given, else under `intervalType` (whose new unit the
/// current count does not suit). Fields that already failed are not checked again.
pub(super) fn check_updated_cycle(
    current: BillingCycle,
    interval_type: Option<IntervalType>,
    interval_count: Option<u32>,
    errors: &mut FieldErrors,
) {
    let failed = |path: &str| errors.as_map().contains_key(path);
    if (interval_type.is_none() && interval_count.is_none())
        || failed("intervalType")
        || failed("intervalCount")
    {
        return;
    }
    let t = interval_type.unwrap_or(current.interval_type);
    let count = interval_count.unwrap_or(current.interval_count);
    if let Err(error) = BillingCycle::new(t, count) {
        match interval_count {
            Some(_) => errors.add("intervalCount", error.to_string()),
            None => errors.add(
                "intervalType",
                format!(
                    "cannot be {t} with the membership's intervalCount of {count}: a billing \
                     cycle is at most 3 years"
                ),
            ),
        }
    }
}

/// Holds an update's price per period to the bound: the `current` price updated with the new
/// `pricePerUnit` and `quantity` ([`Price::updated`]). A failure is reported under `quantity`
/// when it was given, else under `pricePerUnit`. Fields that already failed are not checked
/// again.
pub(super) fn check_updated_price(
    current: Price,
    per_unit: Option<i64>,
    quantity: Option<i64>,
    currency: Currency,
    errors: &mut FieldErrors,
) {
    let failed = |path: &str| errors.as_map().contains_key(path);
    if (per_unit.is_none() && quantity.is_none()) || failed("pricePerUnit") || failed("quantity") {
        return;
    }
    let path = if quantity.is_some() {
        "quantity"
    } else {
        "pricePerUnit"
    };
    errors.check(path, current.updated(per_unit, quantity, currency));
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

/// `quantity` of the update body: a JSON integer or a string of digits, from 1 to
/// [`rules::MAX_QUANTITY`].
pub(super) fn quantity(value: &serde_json::Value) -> Result<i64, String> {
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
