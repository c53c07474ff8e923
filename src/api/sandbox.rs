//! Sandbox-only operations (DESIGN §7): attach a test card without a browser
//! (`POST /test-helpers/payment-method`), pay a first invoice with it
//! (`POST /test-helpers/membership/{membershipKey}/pay`), and read or move the merchant's test
//! clock (`GET /test-clock`, `POST /test-clock/advance`), over [`crate::services::sandbox`].
//! Live merchants get 403.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::membership_records::{record_of, MembershipRecord};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::sandbox::{self, TestCard};
use crate::state::AppState;

/// Body of `POST /test-helpers/payment-method`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachCardRequest {
    /// The customer (`cstmr_…`).
    #[serde(default)]
    #[schema(required = true, value_type = String, pattern = "^cstmr_")]
    pub customer_key: Field<String>,
    /// A test card number (DESIGN §7), e.g. `4242 4242 4242 4242`: 12 to 19 digits, spaces and
    /// hyphens ignored.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "4242424242424242", pattern = "^[ -]*([0-9][ -]*){12,19}$")]
    pub card_number: Field<String>,
}

/// A saved card.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentMethodRecord {
    /// `pm_` + 24 base62 characters.
    pub payment_method_id: String,
    /// Card network.
    pub brand: String,
    /// Last four digits.
    pub last4: String,
}

/// Attaches a test card to a customer; it becomes the payment method for renewals and
/// proration. Sandbox merchants only.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/test-helpers/payment-method",
    tag = "sandbox",
    request_body = AttachCardRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Card attached", body = PaymentMethodRecord),
        (status = 400, description = "Validation failed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Live merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn attach_card(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<AttachCardRequest>,
) -> Result<(StatusCode, Json<PaymentMethodRecord>), ApiError> {
    let card = TestCard {
        customer_key: body.customer_key,
        card_number: body.card_number,
    };
    let method = sandbox::attach_card(&state, auth.merchant_id, card).await?;
    Ok((
        StatusCode::CREATED,
        Json(PaymentMethodRecord {
            payment_method_id: method.payment_method_key,
            brand: method.brand,
            last4: method.last4,
        }),
    ))
}

/// Pays an Incomplete membership's first invoice with the customer's saved card, as checkout
/// would. Sandbox merchants only.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/test-helpers/membership/{membershipKey}/pay",
    tag = "sandbox",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Paid: the membership is Active", body = MembershipRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 402, description = "The card was declined; the membership stays Incomplete", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Live merchant", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Not Incomplete, no saved card, or a payment in progress", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn pay_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let m = sandbox::pay_first(&state, auth.merchant_id, &membership_key).await?;
    Ok(Json(record_of(&state, &m).await?))
}

/// Body of `POST /test-clock/advance`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AdvanceClockRequest {
    /// The new time, UTC ISO-8601 (`2027-01-31T10:00:00Z`); not before the clock's current time.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "2027-01-31T10:00:00Z", pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})?$")]
    pub to: Field<String>,
}

/// A test clock's time.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClockRecord {
    /// The merchant's current time, UTC.
    pub now: String,
}

/// Moves the merchant's test clock forward and runs every renewal, retry and expiry that falls
/// due on the way, in time order, before answering. Sandbox merchants only.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/test-clock/advance",
    tag = "sandbox",
    request_body = AdvanceClockRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The clock's new time", body = ClockRecord),
        (status = 400, description = "Not a time, before the clock's current time, or more than 1827 days after it", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Live merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn advance_clock(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<AdvanceClockRequest>,
) -> Result<Json<ClockRecord>, ApiError> {
    let to = sandbox::advance_clock(&state, auth.merchant_id, body.to).await?;
    Ok(Json(ClockRecord {
        now: format_utc(to),
    }))
}

/// The merchant's test-clock time (the real time until it first advances). Sandbox only.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/test-clock",
    tag = "sandbox",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The clock's time", body = ClockRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Live merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_clock(
    State(state): State<AppState>,
    auth: AuthMerchant,
) -> Result<Json<ClockRecord>, ApiError> {
    let now = sandbox::clock(&state, auth.merchant_id).await?;
    Ok(Json(ClockRecord {
        now: format_utc(now),
    }))
}
