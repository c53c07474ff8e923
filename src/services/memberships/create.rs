//! Creating a membership (DESIGN §2, §15): idempotent by order id per customer, from inline
//! terms or a catalog price, with tax rates and a coupon. Most creates are valid, for an
//! existing customer of a merchant without a test clock: one statement then finds the customer
//! and inserts.

use chrono::{DateTime, Utc};
use recur_domain::membership::{self as rules, ChargeDirective};
use recur_domain::money::Currency;
use recur_domain::validation::{self as field_rules, FieldErrors};

use super::metered;
use super::terms::{self, billing_cycle, pricing, CatalogTerms, CycleInput, PricingInput};
use crate::billing::{coupons, customer_and_merchant_now};
use crate::http::input::{prefixed, required_text, Field};
use crate::ids;
use crate::services::{tax_rates, ServiceError};
use crate::state::AppState;
use crate::store::customers::Created;
use crate::store::memberships::{self, ClockCondition, CreatedAt, Membership, NewMembership};

/// Longest `productInfo.orderId`.
const MAX_ORDER_ID_CHARS: usize = 255;

/// A new membership as given.
#[derive(Debug, Default)]
pub struct NewMembershipInput {
    /// Key of an existing customer of the merchant (`cstmr_…`).
    pub customer_key: Field<String>,
    /// 1–250 characters.
    pub subscription_name: Field<String>,
    /// UTC `YYYY-MM-DDTHH:mm:ss`, at least one hour and at most 100 years ahead.
    pub end_date: Field<String>,
    /// Absolute HTTPS URL receiving the membership's events.
    pub webhook_url: Field<String>,
    /// Free-form merchant string.
    pub metadata: Field<String>,
    /// Sandbox: outcomes of the recurring charge attempts, in order.
    pub charge_emitter_queue: Field<Vec<Field<ChargeInput>>>,
    /// Ids of the merchant's tax rates (`txr_…`) it bills with.
    pub tax_rate_ids: Field<Vec<Field<String>>>,
    /// The merchant's order.
    pub product_info: Field<OrderInput>,
    /// Price and currency, unless `price_id` is given.
    pub pricing_info: Field<PricingInput>,
    /// How often it renews, unless `price_id` is given.
    pub billing_cycle: Field<CycleInput>,
    /// A catalog price (`price_…`) in place of `pricing_info` and `billing_cycle`.
    pub price_id: Field<String>,
    /// Units of `price_id`'s price, default 1.
    pub quantity: Field<i64>,
    /// A coupon code of the merchant, redeemed now.
    pub coupon_code: Field<String>,
    /// A free trial of 1–730 days.
    pub trial_days: Field<i64>,
    /// Metered prices (`price_…`) billed in arrears beside the fixed price.
    pub metered_price_ids: Field<Vec<Field<String>>>,
}

/// A `chargeEmitterQueue` item as given.
#[derive(Debug, Default)]
pub struct ChargeInput {
    /// `Success` or `Rejected`, any letter case.
    pub transaction_status: Field<String>,
    /// Decline message of a `Rejected` item.
    pub description: Field<String>,
}

/// `productInfo` as given.
#[derive(Debug, Default)]
pub struct OrderInput {
    /// The merchant's order id, 1–255 characters; unique per customer.
    pub order_id: Field<String>,
    /// Free text.
    pub description: Field<String>,
}

/// Creates the membership `body` describes for the merchant, or answers the customer's existing
/// one with the same order id (`Created::Existing`, changing nothing); every failing field is
/// listed. A new membership is Incomplete and has no invoice yet.
pub async fn create(
    state: &AppState,
    merchant_id: i64,
    mut body: NewMembershipInput,
) -> Result<(Membership, Created), ServiceError> {
    let mut errors = FieldErrors::new();
    let rate_ids = std::mem::take(&mut body.tax_rate_ids);
    let price_id = std::mem::take(&mut body.price_id);
    let metered_ids = std::mem::take(&mut body.metered_price_ids);
    let catalog_given = price_id.is_given();
    if catalog_given && !(!body.pricing_info.is_given() && !body.billing_cycle.is_given()) {
        errors.add(
            "priceId",
            "cannot be given with pricingInfo or billingCycle: the price sets them",
        );
    }
    let catalog = terms::catalog_terms(
        state.store.pool(),
        merchant_id,
        price_id,
        std::mem::take(&mut body.quantity),
        1,
        &mut errors,
    )
    .await?;
    let coupon_code =
        terms::coupon_code(std::mem::take(&mut body.coupon_code), &mut errors).flatten();
    let CreateDraft {
        customer_key,
        end_date,
        membership: new,
    } = validate_create(
        body,
        Terms {
            merchant_id,
            catalog: catalog.as_ref(),
            catalog_given,
        },
        state.config.webhooks.allow_private,
        &mut errors,
    );
    let rates =
        tax_rates::resolve(state.store.writer(), merchant_id, rate_ids, &mut errors).await?;
    let metered = match metered_ids.optional("meteredPriceIds", &mut errors) {
        Some(ids) => {
            let currency = new.as_ref().and_then(|n| Currency::parse(&n.currency).ok());
            let cycle = new.as_ref().map(|n| n.cycle);
            let pool = state.store.pool();
            metered::metered_terms(pool, merchant_id, ids, currency, cycle, &mut errors).await?
        }
        None => Some(Vec::new()),
    };
    let new = new.map(|mut new| {
        new.tax_rates = rates.unwrap_or_default();
        new.metered = metered.unwrap_or_default();
        new
    });
    // Most creates are valid, for an existing customer of a merchant without a test clock,
    // whose time is then the injected clock's: one statement finds the customer and inserts.
    let wall = state.clock.now();
    if let (Some(key), Some(new), None) = (&customer_key, &new, &coupon_code) {
        let lead_ok = end_date.is_none_or(|end| rules::end_date_window(end, wall).is_ok());
        if errors.is_empty() && lead_ok {
            let at = CreatedAt::new(wall);
            let condition = ClockCondition::WithoutTestClock;
            let inserted = memberships::insert(&state.store, new.clone(), key, at, condition);
            if let Some(m) = inserted.await? {
                return Ok((m, Created::New));
            }
        }
    }
    // Otherwise: the customer and the merchant's time, read, so that every field error is
    // reported together and `endDate` is checked against the merchant's own clock.
    let (customer, now) = match &customer_key {
        Some(key) => {
            let (customer, now) = customer_and_merchant_now(state, merchant_id, key).await?;
            if customer.is_none() {
                errors.add("customerKey", "does not match a customer of this merchant");
            }
            (customer, now)
        }
        None => (None, state.merchant_now(merchant_id).await?),
    };
    if let Some(end) = end_date {
        errors.check("endDate", rules::end_date_window(end, now));
    }
    let (Some(customer), Some(new)) = (customer, new) else {
        return Err(ServiceError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let at = CreatedAt::new(now);
    match coupon_code {
        None => {
            Ok(memberships::create_or_get(&state.store, new, &customer.customer_key, at).await?)
        }
        Some(code) => coupons::create_with_coupon(state, new, &customer.customer_key, at, &code)
            .await?
            .map_err(|refusal| ServiceError::invalid("couponCode", refusal.message())),
    }
}

/// A create body checked by every rule that needs no database and no clock.
struct CreateDraft {
    /// `customerKey`, when well-formed; whether it names a customer is still to be read.
    customer_key: Option<String>,
    /// `endDate`, when present and well-formed; its lead over the merchant's time is still to be
    /// checked.
    end_date: Option<DateTime<Utc>>,
    /// The membership, when every required field is valid. It is only to be stored when no
    /// error was recorded: an invalid optional field is left out of it.
    membership: Option<NewMembership>,
}

/// Where a create body's terms come from: the merchant, and the catalog price it names.
struct Terms<'a> {
    /// The merchant creating the membership.
    merchant_id: i64,
    /// `priceId`'s price and quantity, when valid.
    catalog: Option<&'a CatalogTerms>,
    /// `priceId` was given (valid or not): `pricingInfo` and `billingCycle` are not required.
    catalog_given: bool,
}

/// Checks the create input by every rule that needs no database and no clock, adding the
/// failures under their paths; the pricing and cycle come from `terms`' catalog price when
/// there is one. `allow_private`: the operator lets webhooks reach internal addresses.
fn validate_create(
    body: NewMembershipInput,
    terms: Terms<'_>,
    allow_private: bool,
    errors: &mut FieldErrors,
) -> CreateDraft {
    let merchant_id = terms.merchant_id;
    let customer_key = required_text(body.customer_key, "customerKey", errors, |key| {
        prefixed(key, "cstmr_")
    });
    let name = required_text(
        body.subscription_name,
        "subscriptionName",
        errors,
        rules::subscription_name,
    );
    let end_date = body
        .end_date
        .optional("endDate", errors)
        .and_then(|v| errors.check("endDate", rules::parse_end_date(&v)));
    let webhook_url = required_text(body.webhook_url, "webhookUrl", errors, |url| {
        field_rules::webhook_url(url, allow_private)
    });
    let metadata = body.metadata.optional("metadata", errors);
    let queue = body
        .charge_emitter_queue
        .optional("chargeEmitterQueue", errors)
        .and_then(|items| charge_emitter_queue(items, errors));
    let product = body.product_info.required("productInfo", errors).map(|p| {
        let order_id = required_text(p.order_id, "productInfo.orderId", errors, |v| {
            if v.trim().is_empty() {
                Err("must not be empty".to_string())
            } else {
                field_rules::bounded_text(v, MAX_ORDER_ID_CHARS)
            }
        });
        let description = p.description.optional("productInfo.description", errors);
        (order_id, description)
    });
    let (pricing, cycle) = match (terms.catalog, terms.catalog_given) {
        (Some(catalog), _) => (
            Currency::parse(&catalog.price.currency)
                .ok()
                .map(|currency| {
                    let unit = catalog.price.unit_amount;
                    (currency, catalog.total, Some(unit), Some(catalog.quantity))
                }),
            Some(catalog.price.cycle),
        ),
        (None, true) => (None, None),
        (None, false) => (
            body.pricing_info
                .required("pricingInfo", errors)
                .and_then(|p| pricing(p, errors)),
            body.billing_cycle
                .required("billingCycle", errors)
                .and_then(|c| billing_cycle(c, errors)),
        ),
    };
    let trial_days = body
        .trial_days
        .optional("trialDays", errors)
        .and_then(|days| errors.check("trialDays", rules::trial_days(days)))
        .or(terms.catalog.and_then(|c| c.price.trial_days));
    let (
        Some(name),
        Some(webhook_url),
        Some((Some(order_id), order_description)),
        Some((currency, total, per_unit, quantity)),
        Some(cycle),
    ) = (name, webhook_url, product, pricing, cycle)
    else {
        return CreateDraft {
            customer_key,
            end_date,
            membership: None,
        };
    };
    let new = NewMembership {
        merchant_id,
        membership_key: ids::membership_key(),
        order_id,
        order_description,
        subscription_name: name,
        metadata,
        webhook_url,
        end_date,
        currency: currency.code().to_string(),
        total_amount: total,
        price_per_unit: per_unit,
        quantity,
        cycle,
        charge_emitter_queue: queue,
        tax_rates: Vec::new(),
        price_key: terms.catalog.map(|c| c.price.price_key.clone()),
        trial_days,
        discount: None,
        metered: Vec::new(),
    };
    CreateDraft {
        customer_key,
        end_date,
        membership: Some(new),
    }
}

/// `chargeEmitterQueue`: a non-empty list of directives, each item's failures under its path.
fn charge_emitter_queue(
    items: Vec<Field<ChargeInput>>,
    errors: &mut FieldErrors,
) -> Option<Vec<ChargeDirective>> {
    if items.is_empty() {
        errors.add("chargeEmitterQueue", "must not be empty when present");
        return None;
    }
    let mut queue = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let path = format!("chargeEmitterQueue[{i}]");
        let Some(item) = item.required(&path, errors) else {
            continue;
        };
        let description = item
            .description
            .optional(&format!("{path}.description"), errors);
        let status = item
            .transaction_status
            .required(&format!("{path}.transactionStatus"), errors);
        if let Some(status) = status {
            let directive = rules::charge_directive(&status, description.as_deref());
            if let Some(directive) = errors.check(&format!("{path}.transactionStatus"), directive) {
                queue.push(directive);
            }
        }
    }
    Some(queue)
}
