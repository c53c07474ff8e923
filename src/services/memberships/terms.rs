//! What a membership bills with, as its create and update inputs give it (DESIGN §4, §15): the
//! inline `pricingInfo` and `billingCycle` (JSON numbers and numeric strings alike), or a catalog
//! price (`priceId`, whose terms replace them) with its `quantity`, and a `couponCode`; and the
//! bounds an update's new terms are held to. Each refusal is reported under its field's path.

use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::coupon;
use recur_domain::membership as rules;
use recur_domain::money::{format_amount, Currency, MAX_AMOUNT_MINOR};
use recur_domain::price::Price;
use recur_domain::validation::FieldErrors;
use sqlx::{Any, Executor};

use crate::http::input::{prefixed, required_text, Field};
use crate::services::fields::{amount, currency, decimal_value, interval_count, positive_minor};
use crate::services::ServiceError;
use crate::store::prices::{self, CatalogPrice};

/// `pricingInfo` as given.
#[derive(Debug, Default)]
pub struct PricingInput {
    /// ISO 4217 code.
    pub currency: Field<String>,
    /// The price per period, a decimal string.
    pub total_amount: Field<String>,
    /// The price of one unit, a JSON number or a decimal string.
    pub price_per_unit: Field<serde_json::Value>,
    /// How many units.
    pub quantity: Field<i64>,
}

/// `billingCycle` as given.
#[derive(Debug, Default)]
pub struct CycleInput {
    /// Daily, Weekly, Monthly or Annually, in any letter case.
    pub interval_type: Field<String>,
    /// An integer ≥ 1 (a JSON integer or a string of digits); 1 when absent.
    pub interval_count: Field<serde_json::Value>,
}

/// Currency, total, unit price and quantity of `pricingInfo`, all in minor units.
pub type Pricing = (Currency, i64, Option<i64>, Option<i64>);

/// `pricingInfo` of the create body, every failing field reported under its path.
pub fn pricing(p: PricingInput, errors: &mut FieldErrors) -> Option<Pricing> {
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
pub fn billing_cycle(c: CycleInput, errors: &mut FieldErrors) -> Option<BillingCycle> {
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
/// `intervalCount`, each defaulting to the membership's `current` one (a new type always comes
/// with its count: 1 when not given, DESIGN §4). A failure is reported under `intervalCount`.
/// Fields that already failed are not checked again.
pub fn check_updated_cycle(
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
        errors.add("intervalCount", error.to_string());
    }
}

/// Holds an update's price per period to the bound: the `current` price updated with the new
/// `pricePerUnit` and `quantity` ([`Price::updated`]). A failure is reported under `quantity`
/// when it was given, else under `pricePerUnit`. Fields that already failed are not checked
/// again.
pub fn check_updated_price(
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

/// A catalog price a membership is to bill with, and for how many units.
#[derive(Debug, Clone)]
pub struct CatalogTerms {
    /// The price, active, of an active product.
    pub price: CatalogPrice,
    /// Units, 1 to [`rules::MAX_QUANTITY`].
    pub quantity: i64,
    /// `unit_amount × quantity`, at most [`MAX_AMOUNT_MINOR`].
    pub total: i64,
}

/// The merchant's sellable catalog price named by `price_id` (reported under `priceId`), for
/// `quantity` units (`default_quantity` when absent; reported under `quantity`). `None` when
/// `priceId` is absent or fails a rule (recorded in `errors`).
pub async fn catalog_terms<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    price_id: Field<String>,
    quantity: Field<i64>,
    default_quantity: i64,
    errors: &mut FieldErrors,
) -> Result<Option<CatalogTerms>, ServiceError> {
    let Some(key) = price_id
        .optional("priceId", errors)
        .and_then(|key| errors.check("priceId", prefixed(&key, "price_")))
    else {
        if quantity.is_given() {
            errors.add(
                "quantity",
                "is only allowed with priceId (pricingInfo.quantity otherwise)",
            );
        }
        return Ok(None);
    };
    let quantity = match quantity.optional("quantity", errors) {
        Some(q) => errors.check("quantity", rules::quantity(q)),
        None => Some(default_quantity),
    };
    let Some(price) = prices::by_key(executor, merchant_id, &key).await? else {
        errors.add("priceId", "does not match a price of this merchant");
        return Ok(None);
    };
    if !price.active || !price.product_active {
        errors.add("priceId", "is archived (the price or its product)");
        return Ok(None);
    }
    if price.metered.is_some() {
        errors.add(
            "priceId",
            "is a metered price: give it in meteredPriceIds, beside a fixed price",
        );
        return Ok(None);
    }
    let Some(quantity) = quantity else {
        return Ok(None);
    };
    let total = price
        .unit_amount
        .checked_mul(quantity)
        .filter(|total| *total <= MAX_AMOUNT_MINOR);
    let Some(total) = total else {
        let currency =
            Currency::parse(&price.currency).map_err(|e| ServiceError::Internal(e.into()))?;
        errors.add(
            "quantity",
            format!(
                "gives a price per period (unitAmount × quantity) above {}",
                format_amount(MAX_AMOUNT_MINOR, currency)
            ),
        );
        return Ok(None);
    };
    Ok(Some(CatalogTerms {
        price,
        quantity,
        total,
    }))
}

/// `couponCode`: a code by [`coupon::code`] (`Some(Some)`), `null` (`Some(None)`: remove the
/// coupon, on update), or absent (`None`).
pub fn coupon_code(field: Field<String>, errors: &mut FieldErrors) -> Option<Option<String>> {
    match field {
        Field::Absent => None,
        Field::Null => Some(None),
        given => given
            .optional("couponCode", errors)
            .and_then(|code| errors.check("couponCode", coupon::code(&code)))
            .map(Some),
    }
}
