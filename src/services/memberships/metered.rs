//! The metered prices a membership carries (`meteredPriceIds`, DESIGN §19): each an active
//! metered price of the merchant, of an active meter and product, in the membership's currency
//! and billing cycle, one per meter. Their terms are copied onto the membership, so that a
//! change of the catalog never reprices a membership.
//!
//! An update replaces them at once, without proration: a kept meter's usage of the current
//! period is billed at its new price when the period is invoiced, a new meter counts from then
//! on, and a meter whose usage of the current period is not billed yet cannot be dropped (its
//! usage would go unbilled; Stripe refuses the same without `clear_usage`). A dropped meter's
//! period is closed under its totals' locks, so an event racing the update is refused rather
//! than lost. A membership with metered prices keeps its billing cycle: they renew on it.

use recur_domain::calendar::BillingCycle;
use recur_domain::money::Currency;
use recur_domain::status::MembershipStatus;
use recur_domain::usage::MeteredTerm;
use recur_domain::validation::FieldErrors;
use sqlx::{Any, Executor};

use crate::http::input::{prefixed, Field};
use crate::services::ServiceError;
use crate::store::memberships::Membership;
use crate::store::usage::{self, PeriodKey};
use crate::store::{prices, Tx};

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

/// The metered prices an update of `m` (locked in `tx`) gives (`ids`: `meteredPriceIds`),
/// checked against its currency and cycle, prices read through `catalog`; `None` when not given
/// or refused (each failure recorded). `cycle_given`: the update also changes the billing
/// cycle, which a membership with metered prices keeps.
pub async fn updated_terms<'c, E: Executor<'c, Database = Any> + Copy>(
    catalog: E,
    tx: &mut Tx,
    m: Option<&Membership>,
    ids: Field<Vec<Field<String>>>,
    cycle_given: bool,
    errors: &mut FieldErrors,
) -> Result<Option<Vec<MeteredTerm>>, ServiceError> {
    let ids = ids.optional(PATH, errors);
    let Some(m) = m else {
        return Ok(None);
    };
    let keeps_metered = ids
        .as_ref()
        .map_or(!m.metered.is_empty(), |ids| !ids.is_empty());
    if cycle_given && keeps_metered {
        errors.add(
            "intervalType",
            "cannot change while the membership carries metered prices: they renew on its cycle",
        );
    }
    let Some(ids) = ids else {
        return Ok(None);
    };
    let given = metered_terms(
        catalog,
        m.merchant_id,
        ids,
        Some(m.currency()),
        Some(m.state.cycle),
        errors,
    )
    .await?;
    let Some(terms) = given else {
        return Ok(None);
    };
    let dropped: Vec<&MeteredTerm> = m
        .metered
        .iter()
        .filter(|old| terms.iter().all(|new| new.meter_id != old.meter_id))
        .collect();
    let billable = m.state.status != MembershipStatus::Trialing;
    let (Some(period), true, false) = (m.state.current_period, billable, dropped.is_empty()) else {
        return Ok(Some(terms));
    };
    let keys: Vec<PeriodKey> = dropped
        .iter()
        .map(|t| PeriodKey::new(m.id, t.meter_id, period.start))
        .collect();
    let mut used = false;
    for total in usage::lock_totals(tx, &keys, true).await? {
        if total.totals.count > 0 {
            let code = dropped
                .iter()
                .find(|t| t.meter_id == total.key.meter_id)
                .map_or("", |t| t.meter_code.as_str());
            errors.add(
                PATH,
                format!(
                    "drops the meter {code}, whose usage this period is not billed yet: \
                     drop it once the period is invoiced"
                ),
            );
            used = true;
        }
    }
    Ok((!used).then_some(terms))
}
