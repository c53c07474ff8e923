//! Usage (DESIGN §19): `POST /usage-events` and `GET /membership/{membershipKey}/usage`, over
//! [`crate::services::usage`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::money::format_amount;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::invoice_records::InvoiceRecord;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::usage::{self, EventInput, PeriodUsage};

/// The largest body of `POST /usage-events`: 1,000 events of about 1 KiB.
pub const MAX_EVENTS_BODY_BYTES: usize = 1024 * 1024;

/// Body of `POST /usage-events`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageEventsRequest {
    /// 1 to 1,000 events, valid as a whole or refused as a whole.
    #[serde(default)]
    #[schema(required = true, value_type = Vec<UsageEventInput>, min_items = 1, max_items = 1000)]
    pub events: Field<Vec<Field<UsageEventInput>>>,
}

/// One usage event.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct UsageEventInput {
    /// The merchant's id of the event: counted once per merchant, forever (a repeat is a
    /// duplicate, not an error). 1–255 characters.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 255)]
    transaction_id: Field<String>,
    /// The membership it is for (`mmbrshp_…`); or `customerKey`.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^mmbrshp_")]
    membership_key: Field<String>,
    /// The customer (`cstmr_…`) whose one membership billing the meter it is for.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^cstmr_")]
    customer_key: Field<String>,
    /// The meter's code.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 64)]
    code: Field<String>,
    /// When it happened, UTC `YYYY-MM-DDTHH:mm:ss`; the merchant's time when absent. At most 5
    /// minutes ahead, and not in a period already invoiced.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2026-11-28T10:00:00")]
    timestamp: Field<String>,
    /// The event's properties: the meter's property (a number ≥ 0, or a decimal string; any
    /// string or number for `unique_count`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    properties: Field<serde_json::Map<String, serde_json::Value>>,
}

/// What a `POST /usage-events` did.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageEventsAccepted {
    /// Events stored and counted now.
    pub accepted: usize,
    /// Events whose transactionId was counted before, or earlier in the request.
    pub duplicates: usize,
}

/// A meter's usage of the current period so far.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MeterUsageRecord {
    /// The meter (`mtr_…`).
    pub meter_id: String,
    /// Its code.
    pub meter_code: String,
    /// The metered price (`price_…`).
    pub price_id: String,
    /// What the meter's aggregation comes to, a decimal string.
    pub quantity: String,
    /// Its price so far, a decimal string in the membership's currency.
    pub amount: String,
}

/// A membership's usage of its current period so far.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    /// The current period's start (UTC).
    pub period_start: String,
    /// The current period's end (UTC).
    pub period_end: String,
    /// ISO 4217 code.
    pub currency: String,
    /// One entry per metered price; a meter with no events at quantity 0.
    pub meters: Vec<MeterUsageRecord>,
}

impl From<PeriodUsage> for UsageRecord {
    fn from(usage: PeriodUsage) -> Self {
        UsageRecord {
            period_start: format_utc(usage.period_start),
            period_end: format_utc(usage.period_end),
            currency: usage.currency.code().to_string(),
            meters: usage
                .meters
                .into_iter()
                .map(|m| MeterUsageRecord {
                    meter_id: m.term.meter_key,
                    meter_code: m.term.meter_code,
                    price_id: m.term.price_key,
                    quantity: m.priced.quantity.normalize().to_string(),
                    amount: format_amount(m.priced.amount, usage.currency),
                })
                .collect(),
        }
    }
}

/// Records usage events.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/usage-events",
    tag = "usage",
    request_body = UsageEventsRequest,
    security(("bearer" = [])),
    responses(
        (status = 202, description = "Stored: how many events were new and how many repeated a transactionId", body = UsageEventsAccepted),
        (status = 400, description = "Validation failed, nothing stored: every failing field is listed as events[i].field (an unknown code or key, a missing or non-numeric property, a timestamp ahead or in a period already invoiced, more than 1,000 events)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "A body over 1 MiB", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn record_events(
    State(state): State<crate::state::AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<UsageEventsRequest>,
) -> Result<(StatusCode, Json<UsageEventsAccepted>), ApiError> {
    let events = body.events.map(|events| {
        events
            .into_iter()
            .map(|event| {
                event.map(|e| EventInput {
                    transaction_id: e.transaction_id,
                    membership_key: e.membership_key,
                    customer_key: e.customer_key,
                    code: e.code,
                    timestamp: e.timestamp,
                    properties: e.properties,
                })
            })
            .collect()
    });
    let done = usage::ingest(&state, auth.merchant_id, events).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(UsageEventsAccepted {
            accepted: done.accepted,
            duplicates: done.duplicates,
        }),
    ))
}

/// A membership's usage of its current period so far.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/membership/{membershipKey}/usage",
    tag = "usage",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The current period's usage so far, per metered price", body = UsageRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The membership has no billing period yet", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn membership_usage(
    State(state): State<crate::state::AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
) -> Result<Json<UsageRecord>, ApiError> {
    let usage = usage::current_usage(&state, auth.merchant_id, &key).await?;
    Ok(Json(usage.into()))
}

/// The invoice the membership's next renewal would make now: the next period's price in
/// advance, the current period's usage so far in arrears, the coupon's discount, taxes and
/// credit. Nothing is written; it has no key yet (`invoiceKey` empty), no number, and is `Draft`.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/membership/{membershipKey}/upcoming-invoice",
    tag = "usage",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The upcoming invoice, unstored", body = InvoiceRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "No renewal follows: not yet paid, ended, paused, or its end date comes first", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn upcoming_invoice(
    State(state): State<crate::state::AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
) -> Result<Json<InvoiceRecord>, ApiError> {
    let invoice = usage::upcoming_invoice(&state, auth.merchant_id, &key).await?;
    Ok(Json(InvoiceRecord::from(&invoice)))
}
