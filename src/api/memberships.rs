//! Membership operations: create (idempotent by order id per customer), get and cancel. The
//! records they answer with are in [`super::membership_records`], the update in
//! [`super::membership_update`], the numeric field rules both bodies share in
//! [`super::membership_fields`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use recur_domain::membership::{self as rules, ChargeDirective};
use recur_domain::money::Currency;
use recur_domain::validation::{self as field_rules, FieldErrors};
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CouponCode, HttpsUrl, Quantity, TrialDays};
use super::membership_catalog::{self, CatalogTerms};
use super::membership_fields::{billing_cycle, pricing, BillingCycleInput, PricingInfoInput};
use super::membership_records::{record_of, CreditNotes, MembershipRecord};
use super::problem::{ApiError, Problem};
use crate::billing::customer_and_merchant_now;
use crate::billing::{coupons, lifecycle};
use crate::http::input::{prefixed, required_text, Field};
use crate::ids;
use crate::services::tax_rates;
use crate::state::AppState;
use crate::store::customers::Created;
use crate::store::memberships::{self, ClockCondition, CreatedAt, NewMembership};

/// Longest `productInfo.orderId`.
const MAX_ORDER_ID_CHARS: usize = 255;

/// Body of `POST /membership`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateMembershipRequest {
    /// Key of an existing customer of this merchant (`cstmr_…`).
    #[serde(default)]
    #[schema(required = true, value_type = String, pattern = "^cstmr_")]
    pub customer_key: Field<String>,
    /// 1–250 characters; shown on invoices and in the portal.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 250)]
    pub subscription_name: Field<String>,
    /// UTC `YYYY-MM-DDTHH:mm:ss`, at least one hour and at most 100 years ahead. No cycle starts
    /// at or after it.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2027-12-31T00:00:00", pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$")]
    pub end_date: Field<String>,
    /// Absolute HTTPS URL receiving this membership's events; not an internal IP literal.
    #[serde(default)]
    #[schema(required = true, value_type = HttpsUrl)]
    pub webhook_url: Field<String>,
    /// Free-form merchant string.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub metadata: Field<String>,
    /// Sandbox testing: outcomes of the recurring charge attempts, in order.
    #[serde(default)]
    #[schema(value_type = Option<Vec<ChargeEmitterInput>>, min_items = 1)]
    pub charge_emitter_queue: Field<Vec<Field<ChargeEmitterInput>>>,
    /// Ids of the merchant's active tax rates (`txr_…`) the membership bills with, in order:
    /// all inclusive or all exclusive, at most 5.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 5)]
    pub tax_rate_ids: Field<Vec<Field<String>>>,
    /// The merchant's order.
    #[serde(default)]
    #[schema(required = true, value_type = ProductInfoInput)]
    pub product_info: Field<ProductInfoInput>,
    /// Price and currency. Required unless `priceId` is given (then not allowed).
    #[serde(default)]
    #[schema(value_type = Option<PricingInfoInput>)]
    pub pricing_info: Field<PricingInfoInput>,
    /// How often the membership renews. Required unless `priceId` is given (then not allowed).
    #[serde(default)]
    #[schema(value_type = Option<BillingCycleInput>)]
    pub billing_cycle: Field<BillingCycleInput>,
    /// A catalog price (`price_…`, active, of an active product) in place of `pricingInfo` and
    /// `billingCycle` (beyond the spec): the membership bills `unitAmount × quantity` every
    /// cycle of the price, and starts the price's trial unless `trialDays` is given.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^price_")]
    pub price_id: Field<String>,
    /// Units of `priceId`'s price, default 1 (only with `priceId`).
    #[serde(default)]
    #[schema(value_type = Option<Quantity>)]
    pub quantity: Field<i64>,
    /// A coupon code of the merchant (any letter case), redeemed now: its discount applies from
    /// the first invoice (beyond the spec).
    #[serde(default)]
    #[schema(value_type = Option<CouponCode>)]
    pub coupon_code: Field<String>,
    /// A free trial of 1–730 days (beyond the spec): checkout saves the card without charging,
    /// the membership is Trialing, and the first charge runs when the trial ends.
    #[serde(default)]
    #[schema(value_type = Option<TrialDays>)]
    pub trial_days: Field<i64>,
}

/// `chargeEmitterQueue` item.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct ChargeEmitterInput {
    /// `Success` or `Rejected`, any letter case.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "Rejected", pattern = "^([Ss][Uu][Cc][Cc][Ee][Ss][Ss]|[Rr][Ee][Jj][Ee][Cc][Tt][Ee][Dd])$")]
    transaction_status: Field<String>,
    /// Decline message of a `Rejected` item; default `Insufficient funds.`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    description: Field<String>,
}

/// `productInfo` of the create body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct ProductInfoInput {
    /// The merchant's order id, 1–255 characters; unique per customer.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 255)]
    order_id: Field<String>,
    /// Free text.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    description: Field<String>,
}

/// Creates a membership, or returns the customer's existing one with the same
/// `productInfo.orderId`: 201 when new, 200 when it existed. New memberships are Incomplete.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/membership",
    tag = "memberships",
    request_body = CreateMembershipRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Membership created (Incomplete)", body = MembershipRecord),
        (status = 200, description = "The customer already had a membership for this order id", body = MembershipRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(mut body): JsonBody<CreateMembershipRequest>,
) -> Result<(StatusCode, Json<MembershipRecord>), ApiError> {
    let mut errors = FieldErrors::new();
    let rate_ids = std::mem::take(&mut body.tax_rate_ids);
    let price_id = std::mem::take(&mut body.price_id);
    let catalog_given = price_id.is_given();
    if catalog_given && !(!body.pricing_info.is_given() && !body.billing_cycle.is_given()) {
        errors.add(
            "priceId",
            "cannot be given with pricingInfo or billingCycle: the price sets them",
        );
    }
    let catalog = membership_catalog::catalog_terms(
        &state,
        auth.merchant_id,
        price_id,
        std::mem::take(&mut body.quantity),
        1,
        &mut errors,
    )
    .await?;
    let coupon_code =
        membership_catalog::coupon_code(std::mem::take(&mut body.coupon_code), &mut errors)
            .flatten();
    let CreateDraft {
        customer_key,
        end_date,
        membership: new,
    } = validate_create(
        body,
        Terms {
            merchant_id: auth.merchant_id,
            catalog: catalog.as_ref(),
            catalog_given,
        },
        state.config.webhooks.allow_private,
        &mut errors,
    );
    let rates = tax_rates::resolve(&state, auth.merchant_id, rate_ids, &mut errors).await?;
    let new = new.map(|mut new| {
        new.tax_rates = rates.unwrap_or_default();
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
                // A new membership has no invoice yet.
                return Ok((
                    StatusCode::CREATED,
                    Json(MembershipRecord::new(&m, &[], &mut CreditNotes::default())),
                ));
            }
        }
    }
    // Otherwise: the customer and the merchant's time, read, so that every field error is
    // reported together and `endDate` is checked against the merchant's own clock.
    let (customer, now) = match &customer_key {
        Some(key) => {
            let (customer, now) = customer_and_merchant_now(&state, auth.merchant_id, key).await?;
            if customer.is_none() {
                errors.add("customerKey", "does not match a customer of this merchant");
            }
            (customer, now)
        }
        None => (None, state.merchant_now(auth.merchant_id).await?),
    };
    if let Some(end) = end_date {
        errors.check("endDate", rules::end_date_window(end, now));
    }
    let (Some(customer), Some(new)) = (customer, new) else {
        return Err(ApiError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let at = CreatedAt::new(now);
    let (membership, created) = match coupon_code {
        None => memberships::create_or_get(&state.store, new, &customer.customer_key, at).await?,
        Some(code) => coupons::create_with_coupon(&state, new, &customer.customer_key, at, &code)
            .await?
            .map_err(|refusal| ApiError::invalid("couponCode", refusal.message()))?,
    };
    Ok(match created {
        Created::New => (
            StatusCode::CREATED,
            Json(MembershipRecord::new(
                &membership,
                &[],
                &mut CreditNotes::default(),
            )),
        ),
        Created::Existing => (StatusCode::OK, Json(record_of(&state, &membership).await?)),
    })
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

/// Checks the create body by every rule that needs no database and no clock, adding the
/// failures under their paths; the pricing and cycle come from `terms`' catalog price when
/// there is one. `allow_private`: the operator lets webhooks reach internal addresses.
fn validate_create(
    body: CreateMembershipRequest,
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
    };
    CreateDraft {
        customer_key,
        end_date,
        membership: Some(new),
    }
}

fn charge_emitter_queue(
    items: Vec<Field<ChargeEmitterInput>>,
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

/// Reads a membership of the calling merchant, with its recent invoices.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/membership/{membershipKey}",
    tag = "memberships",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The membership", body = MembershipRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let (m, invoices) =
        memberships::get_with_invoices(&state.store, auth.merchant_id, &membership_key)
            .await?
            .ok_or(ApiError::NotFound)?;
    let mut notes = CreditNotes::of(&state, auth.merchant_id, &invoices).await?;
    Ok(Json(MembershipRecord::new(&m, &invoices, &mut notes)))
}

/// Cancels a membership at once: open invoices Void, no retries, no new cycles. Repeating it
/// returns the canceled membership.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/membership/cancel/{membershipKey}",
    tag = "memberships",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The canceled membership", body = MembershipRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The membership is Completed or Expired", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn cancel_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let m = lifecycle::cancel(&state, auth.merchant_id, &membership_key).await?;
    Ok(Json(record_of(&state, &m).await?))
}
