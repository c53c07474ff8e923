//! What a membership takes from the catalog and the coupons (DESIGN §15), for the create and
//! update bodies alike: `priceId` (a catalog price, whose terms replace `pricingInfo` and
//! `billingCycle`) with its `quantity`, and `couponCode`.

use recur_domain::coupon;
use recur_domain::membership as rules;
use recur_domain::money::{format_amount, Currency, MAX_AMOUNT_MINOR};
use recur_domain::validation::FieldErrors;

use super::problem::ApiError;
use crate::http::input::{prefixed, Field};
use crate::state::AppState;
use crate::store::prices::{self, CatalogPrice};

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
pub async fn catalog_terms(
    state: &AppState,
    merchant_id: i64,
    price_id: Field<String>,
    quantity: Field<i64>,
    default_quantity: i64,
    errors: &mut FieldErrors,
) -> Result<Option<CatalogTerms>, ApiError> {
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
    let Some(price) = prices::by_key(state.store.pool(), merchant_id, &key).await? else {
        errors.add("priceId", "does not match a price of this merchant");
        return Ok(None);
    };
    if !price.active || !price.product_active {
        errors.add("priceId", "is archived (the price or its product)");
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
            Currency::parse(&price.currency).map_err(|e| ApiError::Internal(e.into()))?;
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
