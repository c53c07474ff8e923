//! Rules of the membership bodies' numeric fields (amounts, quantity, billing cycle), shared by
//! create and update: JSON numbers and numeric strings alike, reported under the field's path.

use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::membership as rules;
use recur_domain::money::Currency;
use recur_domain::price::Price;
use recur_domain::validation::FieldErrors;
use serde::Deserialize;
use utoipa::ToSchema;

use super::field_schemas::{CurrencyCode, IntervalCount, Quantity, UnitPrice};
use crate::http::input::{required_text, Field};
pub(super) use crate::services::fields::{
    amount, currency, decimal_value, interval_count, positive_minor, quantity,
};

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
