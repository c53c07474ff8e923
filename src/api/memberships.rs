//! `POST /membership` (idempotent by order id per customer), `GET /membership/{key}` and
//! `POST /membership/cancel/{key}`, over [`crate::services::memberships`]. The records they
//! answer with are in [`super::membership_records`], the update in [`super::membership_update`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CouponCode, HttpsUrl, Quantity, TrialDays};
use super::membership_fields::{BillingCycleInput, PricingInfoInput};
use super::membership_records::{record_of, CreditNotes, MembershipRecord};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::memberships::{self, ChargeInput, NewMembershipInput, OrderInput};
use crate::state::AppState;
use crate::store::customers::Created;
use crate::store::memberships as stored;

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
    /// Metered prices (`price_…`, each of another meter, in the membership's currency and
    /// billing cycle, at most 20) whose usage each renewal bills in arrears beside the fixed
    /// price (DESIGN §19).
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 20)]
    pub metered_price_ids: Field<Vec<Field<String>>>,
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
    JsonBody(body): JsonBody<CreateMembershipRequest>,
) -> Result<(StatusCode, Json<MembershipRecord>), ApiError> {
    let (membership, created) = memberships::create(&state, auth.merchant_id, body.into()).await?;
    Ok(match created {
        // A new membership has no invoice yet.
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

impl From<CreateMembershipRequest> for NewMembershipInput {
    fn from(body: CreateMembershipRequest) -> Self {
        NewMembershipInput {
            customer_key: body.customer_key,
            subscription_name: body.subscription_name,
            end_date: body.end_date,
            webhook_url: body.webhook_url,
            metadata: body.metadata,
            charge_emitter_queue: body
                .charge_emitter_queue
                .map(|items| items.into_iter().map(|item| item.map(Into::into)).collect()),
            tax_rate_ids: body.tax_rate_ids,
            product_info: body.product_info.map(|p| OrderInput {
                order_id: p.order_id,
                description: p.description,
            }),
            pricing_info: body.pricing_info.map(Into::into),
            billing_cycle: body.billing_cycle.map(Into::into),
            price_id: body.price_id,
            quantity: body.quantity,
            coupon_code: body.coupon_code,
            trial_days: body.trial_days,
            metered_price_ids: body.metered_price_ids,
        }
    }
}

impl From<ChargeEmitterInput> for ChargeInput {
    fn from(item: ChargeEmitterInput) -> Self {
        ChargeInput {
            transaction_status: item.transaction_status,
            description: item.description,
        }
    }
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
    let (m, invoices) = stored::get_with_invoices(&state.store, auth.merchant_id, &membership_key)
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
    let m = memberships::cancel(&state, auth.merchant_id, &membership_key).await?;
    Ok(Json(record_of(&state, &m).await?))
}
