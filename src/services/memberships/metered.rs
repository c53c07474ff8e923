//! The metered prices a membership carries (`meteredPriceIds`, DESIGN §19): each an active
//! metered price of the merchant, of an active meter and product, in the membership's currency
//! and billing cycle, one per meter. Their terms are copied onto the membership, so that each
//! period is billed on the terms it was sold on.

use recur_domain::calendar::BillingCycle;
use recur_domain::money::Currency;
use recur_domain::usage::MeteredTerm;
use recur_domain::validation::FieldErrors;
use sqlx::{Any, Executor};

use crate::http::input::{prefixed, Field};
use crate::services::ServiceError;
use crate::store::prices;

/// The most metered prices one membership carries.
pub const MAX_METERED_PRICES: usize = 20;

/// The field the ids are given in.
const PATH: &str = "meteredPriceIds";

/// The terms of the metered prices `ids` names for a membership billed in `currency` every
/// `cycle`, in the order given; `None` when a rule fails (each failure recorded under
/// `meteredPriceIds` or `meteredPriceIds[i]`). An empty list is no metered price.
pub async fn metered_terms<'c, E: Executor<'c, Database = Any> + Copy>(
    executor: E,
    merchant_id: i64,
    ids: Vec<Field<String>>,
    currency: Option<Currency>,
    cycle: Option<BillingCycle>,
    errors: &mut FieldErrors,
) -> Result<Option<Vec<MeteredTerm>>, ServiceError> {
    if ids.len() > MAX_METERED_PRICES {
        errors.add(
            PATH,
            format!("must hold at most {MAX_METERED_PRICES} prices"),
        );
        return Ok(None);
    }
    let mut terms = Vec::with_capacity(ids.len());
    let mut failed = false;
    for (i, id) in ids.into_iter().enumerate() {
        let path = format!("{PATH}[{i}]");
        let Some(key) = id
            .required(&path, errors)
            .and_then(|key| errors.check(&path, prefixed(&key, "price_")))
        else {
            failed = true;
            continue;
        };
        let price = prices::by_key(executor, merchant_id, &key).await?;
        let refusal = match &price {
            None => Some("does not match a price of this merchant".to_string()),
            Some(p) if p.metered.is_none() => {
                Some("is not a metered price: a membership bills one fixed price".into())
            }
            Some(p) if !p.active || !p.product_active => {
                Some("is archived (the price or its product)".into())
            }
            Some(p) if p.metered.as_ref().is_some_and(|m| !m.meter_active) => {
                Some("bills an archived meter".into())
            }
            Some(p) if currency.is_some_and(|c| c.code() != p.currency) => Some(format!(
                "is in {}, not in the membership's currency",
                p.currency
            )),
            Some(p) if cycle.is_some_and(|c| c != p.cycle) => {
                Some("renews on another billing cycle than the membership".into())
            }
            Some(p)
                if terms.iter().any(|t: &MeteredTerm| {
                    p.metered.as_ref().is_some_and(|m| m.meter_id == t.meter_id)
                }) =>
            {
                Some("bills a meter another of these prices bills already".into())
            }
            Some(_) => None,
        };
        match (
            refusal,
            price.and_then(|p| p.metered.map(|m| (p.price_key, m))),
        ) {
            (Some(refusal), _) => {
                errors.add(&path, refusal);
                failed = true;
            }
            (None, Some((price_key, m))) => terms.push(MeteredTerm {
                price_key,
                meter_id: m.meter_id,
                meter_key: m.meter_key,
                meter_code: m.meter_code,
                meter_name: m.meter_name,
                aggregation: m.aggregation,
                property: m.property,
                pricing: m.pricing,
            }),
            (None, None) => failed = true,
        }
    }
    Ok((!failed).then_some(terms))
}
