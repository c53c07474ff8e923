//! `PUT /membership`: changes a membership, with proration ([`memberships::update`]).

use axum::extract::{Path, State};
use axum::Json;
use recur_domain::money::format_amount;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CouponCode, HttpsUrl, IntervalCount, Quantity, UnitPrice};
use super::membership_records::{record_of, MembershipRecord};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::memberships::{self, MembershipChange};
use crate::state::AppState;

/// Body of `PUT /membership`. Fields left out keep their value; so does `null`, except for
/// `endDate`, which `null` removes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateMembershipRequest {
    /// Key of the membership (`mmbrshp_…`).
    #[serde(default)]
    #[schema(required = true, value_type = String, pattern = "^mmbrshp_")]
    pub membership_key: Field<String>,
    /// New display name, 1–250 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 250)]
    pub name: Field<String>,
    /// New end date: UTC `YYYY-MM-DDTHH:mm:ss`, at least one hour and at most 100 years ahead;
    /// `null` removes it, and the membership then renews until canceled.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$")]
    pub end_date: Field<String>,
    /// New price per unit (a number or a decimal string), > 0.
    #[serde(default)]
    #[schema(value_type = Option<UnitPrice>)]
    pub price_per_unit: Field<serde_json::Value>,
    /// New quantity (an integer or a string of digits), from 1 to 1,000,000,000.
    #[serde(default)]
    #[schema(value_type = Option<Quantity>)]
    pub quantity: Field<serde_json::Value>,
    /// New interval type: Daily, Weekly, Monthly or Annually, any letter case.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^([Dd][Aa][Ii][Ll][Yy]|[Ww][Ee][Ee][Kk][Ll][Yy]|[Mm][Oo][Nn][Tt][Hh][Ll][Yy]|[Aa][Nn][Nn][Uu][Aa][Ll][Ll][Yy])$")]
    pub interval_type: Field<String>,
    /// New interval count (an integer or a string of digits), ≥ 1; with the interval type, a
    /// cycle of at most 3 years.
    #[serde(default)]
    #[schema(value_type = Option<IntervalCount>)]
    pub interval_count: Field<serde_json::Value>,
    /// Absolute HTTPS URL where the customer is sent after the update.
    #[serde(default)]
    #[schema(value_type = Option<HttpsUrl>)]
    pub return_to_website_link: Field<String>,
    /// New merchant string.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub metadata: Field<String>,
    /// The tax rates from the next invoice on (no proration); `[]` removes them all.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 5)]
    pub tax_rate_ids: Field<Vec<Field<String>>>,
    /// A catalog price (`price_…`, active, of an active product, in the membership's currency) to
    /// switch to: its unit amount and cycle replace the membership's, with the membership's
    /// quantity unless `quantity` is given. Not with `pricePerUnit`, `intervalType` or
    /// `intervalCount`, which a membership made from a price changes only this way.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^price_")]
    pub price_id: Field<String>,
    /// A coupon code to give the membership (redeemed now; it replaces its coupon and
    /// discounts from the next period invoice on); `null` removes its coupon.
    #[serde(default)]
    #[schema(value_type = Option<CouponCode>)]
    pub coupon_code: Field<String>,
    /// When a change of price, quantity or cycle applies: `now` (default; prorated) or
    /// `nextPeriod` (at the next renewal, without proration; shown as `pendingUpdate` until
    /// then). Other fields always change at once.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^([Nn][Oo][Ww]|[Nn][Ee][Xx][Tt][Pp][Ee][Rr][Ii][Oo][Dd])$", example = "nextPeriod")]
    pub effective: Field<String>,
    /// The metered prices from now on (`price_…`, each of another meter, in the membership's
    /// currency and billing cycle, at most 20; `[]` removes them all), DESIGN §19. A kept
    /// meter's usage this period is billed at its new price; a meter with usage this period
    /// not yet billed cannot be dropped (400).
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 20)]
    pub metered_price_ids: Field<Vec<Field<String>>>,
}

/// The proration of an update.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProrationRecord {
    /// Signed decimal string: positive was charged (credit first), negative became credit.
    pub amount: String,
    /// ISO 4217 code.
    pub currency: String,
    /// The charge attempt's id when the payment method was charged.
    pub transaction_id: Option<i64>,
}

/// Response of `PUT /membership`.
#[derive(Debug, Serialize, ToSchema)]
pub struct UpdateMembershipResponse {
    /// The membership after the update.
    pub membership: MembershipRecord,
    /// The proration, when price or cycle changed during a paid period.
    pub proration: Option<ProrationRecord>,
}

/// Updates a membership. A change of price, quantity or cycle during a paid period is
/// prorated: a positive amount is charged first and the update stored only if that succeeds
/// (402 otherwise, nothing changed); a negative amount becomes credit (a credit note on the
/// current period's invoice, never a negative invoice).
#[utoipa::path(
    put,
    path = "/api/subscriptions/v1/membership",
    tag = "memberships",
    request_body = UpdateMembershipRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Updated", body = UpdateMembershipResponse),
        (status = 400, description = "Validation failed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 402, description = "The proration charge was declined; nothing changed", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The membership is Canceled, Completed or Expired", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<UpdateMembershipRequest>,
) -> Result<Json<UpdateMembershipResponse>, ApiError> {
    let change = MembershipChange {
        membership_key: body.membership_key,
        name: body.name,
        end_date: body.end_date,
        price_per_unit: body.price_per_unit,
        quantity: body.quantity,
        interval_type: body.interval_type,
        interval_count: body.interval_count,
        return_to_website_link: body.return_to_website_link,
        metadata: body.metadata,
        tax_rate_ids: body.tax_rate_ids,
        price_id: body.price_id,
        coupon_code: body.coupon_code,
        effective: body.effective,
        metered_price_ids: body.metered_price_ids,
    };
    let outcome = memberships::update(&state, auth.merchant_id, change).await?;
    let membership = record_of(&state, &outcome.membership).await?;
    let proration = outcome.proration.map(|p| {
        let currency = outcome.membership.currency();
        ProrationRecord {
            amount: format_amount(p.amount, currency),
            currency: p.currency,
            transaction_id: p.transaction_id,
        }
    });
    Ok(Json(UpdateMembershipResponse {
        membership,
        proration,
    }))
}

/// Drops the change scheduled for the membership's next period (`pendingUpdate`): its current
/// terms stay. Answers the membership, also when nothing was scheduled.
#[utoipa::path(
    delete,
    path = "/api/subscriptions/v1/membership/{membershipKey}/pending-update",
    tag = "memberships",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The membership, with no pendingUpdate", body = MembershipRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn cancel_pending_update(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let m = memberships::drop_scheduled_change(&state, auth.merchant_id, &membership_key).await?;
    Ok(Json(record_of(&state, &m).await?))
}
