//! Changing a membership (`PUT /membership`, DESIGN §4, §15): one read path. The membership is
//! locked first; the new terms (inline or a catalog price), the coupon and the tax rates are
//! read and checked against it under that lock, in the transaction the billing engine then
//! prorates and commits in ([`billing::update::apply`]), so nothing the request reads can change
//! before it writes, and a refused request writes nothing.

use recur_domain::calendar::IntervalType;
use recur_domain::membership as rules;
use recur_domain::validation::{self as field_rules, FieldErrors};

use super::metered;
use super::terms::{self, check_updated_cycle, check_updated_price};
use crate::billing::update::{self as billing, Changes, Effective, UpdateOutcome};
use crate::http::input::{optional_text, prefixed, required_text, Field};
use crate::services::fields::{decimal_value, interval_count, positive_minor, quantity};
use crate::services::{tax_rates, ServiceError};
use crate::state::AppState;
use crate::store::memberships;

/// A change of a membership as given; absent fields (and `null`, but for `end_date`) keep
/// their value.
#[derive(Debug, Default)]
pub struct MembershipChange {
    /// Key of the membership (`mmbrshp_…`).
    pub membership_key: Field<String>,
    /// New display name.
    pub name: Field<String>,
    /// New end date (`YYYY-MM-DDTHH:mm:ss`, UTC); `null` removes it.
    pub end_date: Field<String>,
    /// New price per unit, a JSON number or a decimal string.
    pub price_per_unit: Field<serde_json::Value>,
    /// New quantity, a JSON integer or a string of digits.
    pub quantity: Field<serde_json::Value>,
    /// New interval type; without `interval_count`, the count becomes 1.
    pub interval_type: Field<String>,
    /// New interval count.
    pub interval_count: Field<serde_json::Value>,
    /// Where the customer is sent after the update.
    pub return_to_website_link: Field<String>,
    /// New merchant string.
    pub metadata: Field<String>,
    /// The tax rates from the next invoice on; `[]` removes them all.
    pub tax_rate_ids: Field<Vec<Field<String>>>,
    /// A catalog price to switch to, in the membership's currency.
    pub price_id: Field<String>,
    /// A coupon code to give (`null` removes the membership's coupon).
    pub coupon_code: Field<String>,
    /// `now` (default, prorated) or `nextPeriod`.
    pub effective: Field<String>,
    /// The metered prices from now on (`[]` removes them all), DESIGN §19.
    pub metered_price_ids: Field<Vec<Field<String>>>,
}

/// Applies `change` to the merchant's membership, prorating as DESIGN §4 says: every failing
/// field (400), an unknown membership (404), a state that allows no change (409), a declined
/// proration charge (402, nothing changed).
pub async fn update(
    state: &AppState,
    merchant_id: i64,
    mut change: MembershipChange,
) -> Result<UpdateOutcome, ServiceError> {
    let now = state.merchant_now(merchant_id).await?;
    let mut errors = FieldErrors::new();
    let key = required_text(change.membership_key, "membershipKey", &mut errors, |k| {
        prefixed(k, "mmbrshp_")
    });
    let mut tx = state.store.begin().await?;
    let current = match &key {
        Some(key) => memberships::lock(&mut tx, state.store.backend(), merchant_id, key).await?,
        None => None,
    };
    let currency = current.as_ref().map(memberships::Membership::currency);
    let name = optional_text(change.name, "name", &mut errors, rules::subscription_name);
    let end_date = match change.end_date {
        Field::Absent => None,
        Field::Null => Some(None),
        given => given
            .optional("endDate", &mut errors)
            .and_then(|v| errors.check("endDate", rules::end_date(&v, now)))
            .map(Some),
    };
    let catalog_fields = [
        ("pricePerUnit", change.price_per_unit.is_given()),
        ("intervalType", change.interval_type.is_given()),
        ("intervalCount", change.interval_count.is_given()),
    ];
    let price_given = change.price_id.is_given();
    for (field, given) in catalog_fields {
        if given && price_given {
            errors.add(field, "cannot be given with priceId: the price sets it");
        } else if given && current.as_ref().is_some_and(|m| m.price_key.is_some()) {
            errors.add(
                field,
                "is set by the membership's catalog price: change priceId instead",
            );
        }
    }
    let price_per_unit = change
        .price_per_unit
        .optional("pricePerUnit", &mut errors)
        .and_then(|v| {
            let parsed = decimal_value(&v).and_then(|d| match currency {
                Some(c) => positive_minor(d, c),
                None => Ok(0),
            });
            errors.check("pricePerUnit", parsed)
        });
    let quantity_field = std::mem::take(&mut change.quantity);
    let (mut new_quantity, quantity_field) = match price_given {
        true => (None, quantity_field),
        false => (
            quantity_field
                .optional("quantity", &mut errors)
                .and_then(|v| errors.check("quantity", quantity(&v))),
            Field::Absent,
        ),
    };
    let count_given = change.interval_count.is_given();
    let interval_type = optional_text(change.interval_type, "intervalType", &mut errors, |v| {
        IntervalType::parse(v)
            .map(|t| t.as_str().to_string())
            .map_err(|e| e.to_string())
    })
    .and_then(|v| IntervalType::parse(&v).ok());
    let interval_count = change
        .interval_count
        .optional("intervalCount", &mut errors)
        .and_then(|v| errors.check("intervalCount", interval_count(&v)));
    // DESIGN §4: a new intervalType without intervalCount means a count of 1 (the spec's
    // default), not the membership's count.
    let interval_count = match (interval_type, count_given) {
        (Some(_), false) => Some(1),
        _ => interval_count,
    };
    let catalog = match price_given {
        true => {
            let units = current
                .as_ref()
                .and_then(|m| m.state.price.quantity)
                .unwrap_or(1);
            let quantity_field = match quantity_field {
                Field::Present(v) => match quantity(&v) {
                    Ok(q) => Field::Present(q),
                    Err(e) => Field::Invalid(e),
                },
                Field::Absent => Field::Absent,
                Field::Null => Field::Null,
                Field::Invalid(e) => Field::Invalid(e),
            };
            let price_id = std::mem::take(&mut change.price_id);
            terms::catalog_terms(
                &mut *tx,
                merchant_id,
                price_id,
                quantity_field,
                units,
                &mut errors,
            )
            .await?
        }
        false => None,
    };
    if let (Some(catalog), Some(m)) = (&catalog, &current) {
        if catalog.price.currency != m.currency {
            errors.add(
                "priceId",
                format!(
                    "is in {}; the membership bills in {}",
                    catalog.price.currency, m.currency
                ),
            );
        }
    }
    let (price_per_unit, interval_type, interval_count) = match &catalog {
        Some(c) => {
            new_quantity = Some(c.quantity);
            (
                Some(c.price.unit_amount),
                Some(c.price.cycle.interval_type),
                Some(c.price.cycle.interval_count),
            )
        }
        None => (price_per_unit, interval_type, interval_count),
    };
    let coupon_code = terms::coupon_code(std::mem::take(&mut change.coupon_code), &mut errors);
    let return_link = optional_text(
        change.return_to_website_link,
        "returnToWebsiteLink",
        &mut errors,
        field_rules::https_url,
    );
    let metadata = change.metadata.optional("metadata", &mut errors);
    let effective = optional_text(change.effective, "effective", &mut errors, |v| {
        parse_effective(v).map(|_| v.to_string())
    })
    .and_then(|v| parse_effective(&v).ok())
    .unwrap_or_default();
    let rates = tax_rates::resolve(&mut *tx, merchant_id, change.tax_rate_ids, &mut errors).await?;
    let cycle_given = interval_type.is_some() || interval_count.is_some();
    let metered = metered::updated_terms(
        state.store.pool(),
        &mut tx,
        current.as_ref(),
        change.metered_price_ids,
        cycle_given,
        &mut errors,
    )
    .await?;
    if let Some(current) = &current {
        check_updated_cycle(
            current.state.cycle,
            interval_type,
            interval_count,
            &mut errors,
        );
        check_updated_price(
            current.state.price,
            price_per_unit,
            new_quantity,
            current.currency(),
            &mut errors,
        );
    }
    if !errors.is_empty() {
        tx.rollback().await?;
        return Err(ServiceError::Validation(errors));
    }
    let Some(m) = current else {
        tx.rollback().await?;
        return Err(ServiceError::NotFound);
    };
    let changes = Changes {
        name,
        end_date,
        price_per_unit,
        quantity: new_quantity,
        interval_type,
        interval_count,
        return_to_website_link: return_link,
        metadata,
        tax_rates: rates,
        price_key: catalog.map(|c| c.price.price_key),
        effective,
        coupon_code,
        metered,
    };
    Ok(billing::apply(state, tx, m, changes, now).await?)
}

/// `effective`: `now` or `nextPeriod`, in any letter case.
fn parse_effective(value: &str) -> Result<Effective, String> {
    if value.eq_ignore_ascii_case("now") {
        Ok(Effective::Now)
    } else if value.eq_ignore_ascii_case("nextPeriod") {
        Ok(Effective::NextPeriod)
    } else {
        Err("must be now or nextPeriod".into())
    }
}
