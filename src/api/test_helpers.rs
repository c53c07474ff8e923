//! Sandbox-only operations (DESIGN §7): attach a test card without a browser, pay a first
//! invoice with it, and move the merchant's test clock. Live merchants get 403.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, NaiveDateTime, Utc};
use recur_domain::card::CardNumber;
use recur_domain::schedule::test_clock_refusal;
use recur_domain::time::format_utc;
use recur_domain::validation::FieldErrors;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::membership_records::{record_of, MembershipRecord};
use super::problem::{ApiError, Problem};
use crate::billing::{checkout, lifecycle, test_clock};
use crate::http::input::{required_text, Field};
use crate::state::AppState;
use crate::store::customers;
use crate::store::merchants::{self, Mode};

/// Refuses live merchants.
async fn require_sandbox(state: &AppState, merchant_id: i64) -> Result<(), ApiError> {
    let merchant = merchants::by_id(&state.store, merchant_id)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    match merchant.mode {
        Mode::Sandbox => Ok(()),
        Mode::Live => Err(ApiError::Forbidden(
            "Test helpers and test clocks are only available to sandbox merchants.",
        )),
    }
}

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
    require_sandbox(&state, auth.merchant_id).await?;
    let mut errors = FieldErrors::new();
    let customer_key = required_text(body.customer_key, "customerKey", &mut errors, |k| {
        Ok(k.to_string())
    });
    let card = body
        .card_number
        .required("cardNumber", &mut errors)
        .and_then(|n| errors.check("cardNumber", CardNumber::parse(&n)));
    let customer = match customer_key {
        Some(key) => {
            let found = customers::get(&state.store, auth.merchant_id, &key).await?;
            if found.is_none() {
                errors.add("customerKey", "does not match a customer of this merchant");
            }
            found
        }
        None => None,
    };
    let (Some(customer), Some(card)) = (customer, card) else {
        return Err(ApiError::Validation(errors));
    };
    let now = state.merchant_now(auth.merchant_id).await?;
    let method =
        checkout::save_card(&state, auth.merchant_id, customer.id, &card, true, now).await?;
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
    require_sandbox(&state, auth.merchant_id).await?;
    let m = lifecycle::pay_first(&state, auth.merchant_id, &membership_key).await?;
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

/// A UTC instant: RFC 3339 (`2027-01-31T10:00:00Z`) or `YYYY-MM-DDTHH:mm:ss` read as UTC.
pub fn parse_instant(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|d| d.with_timezone(&Utc))
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").map(|d| d.and_utc()))
        .map_err(|_| "must be a UTC ISO-8601 date and time".to_string())
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
    require_sandbox(&state, auth.merchant_id).await?;
    let now = state.merchant_now(auth.merchant_id).await?;
    let mut errors = FieldErrors::new();
    let to = body
        .to
        .required("to", &mut errors)
        .and_then(|text| errors.check("to", parse_instant(&text)))
        .and_then(|to| {
            errors.check(
                "to",
                match test_clock_refusal(now, to) {
                    None => Ok(to),
                    Some(why) => Err(format!("{why} ({})", format_utc(now))),
                },
            )
        });
    let Some(to) = to else {
        return Err(ApiError::Validation(errors));
    };
    test_clock::advance(&state.platform, &state.webhooks, auth.merchant_id, to).await?;
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
    require_sandbox(&state, auth.merchant_id).await?;
    let now = state.merchant_now(auth.merchant_id).await?;
    Ok(Json(ClockRecord {
        now: format_utc(now),
    }))
}
