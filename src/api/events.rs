//! Webhook events of a membership: listing with every delivery attempt, and re-sending, over
//! [`crate::services::events`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use serde::Serialize;
use utoipa::ToSchema;

use super::extract::AuthMerchant;
use super::problem::{ApiError, Problem};
use crate::services::events;
use crate::state::AppState;
use crate::store::events::{Attempt, Event};

/// One delivery attempt.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptRecord {
    /// 1-based number among the event's attempts.
    pub attempt: i64,
    /// When it started, UTC (the merchant's test clock for sandbox merchants that use one).
    pub started_at: String,
    /// The endpoint's HTTP status, when it answered.
    pub status_code: Option<i64>,
    /// Milliseconds until the answer or the failure.
    pub latency_ms: i64,
    /// Why it failed without an HTTP status: time-out, refused address, TLS, connection.
    pub error: Option<String>,
    /// When the next attempt is due, if one is.
    pub next_attempt_at: Option<String>,
}

/// A webhook event and its delivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventRecord {
    /// `ActionId`: stable across attempts.
    pub action_id: String,
    /// `SUBSCRIPTION_STATUS_CHANGED`, `SUBSCRIPTION_UPDATED` or `TRANSACTION_DATA_UPDATE`.
    pub action: String,
    /// `Pending`, `Delivered` or `Undeliverable`.
    pub status: String,
    /// Where it is sent.
    pub webhook_url: String,
    /// When it was recorded.
    pub created_at: String,
    /// When the next attempt is due.
    pub next_attempt_at: Option<String>,
    /// When an endpoint accepted it.
    pub delivered_at: Option<String>,
    /// Every attempt, oldest first.
    pub attempts: Vec<AttemptRecord>,
    /// The payload as sent (without `Signature`, which is added at delivery).
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
}

impl EventRecord {
    /// The record of `event` with its `attempts`, oldest first.
    pub fn new(event: Event, attempts: Vec<Attempt>) -> Self {
        EventRecord {
            action_id: event.action_id,
            action: event.action,
            status: event.status.as_str().into(),
            webhook_url: event.webhook_url,
            created_at: format_utc(event.created_at),
            next_attempt_at: event.next_attempt_at.map(format_utc),
            delivered_at: event.delivered_at.map(format_utc),
            attempts: attempts
                .into_iter()
                .map(|a| AttemptRecord {
                    attempt: a.attempt,
                    started_at: format_utc(a.started_at),
                    status_code: a.status_code,
                    latency_ms: a.latency_ms,
                    error: a.error,
                    next_attempt_at: a.next_attempt_at.map(format_utc),
                })
                .collect(),
            payload: serde_json::from_str(&event.payload).unwrap_or(serde_json::Value::Null),
        }
    }
}

/// The events of a membership.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventList {
    /// Newest first, at most 100.
    pub events: Vec<EventRecord>,
}

/// Lists a membership's webhook events, newest first, with every delivery attempt.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/membership/{membershipKey}/events",
    tag = "events",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The events", body = EventList),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_events(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<EventList>, ApiError> {
    let events = events::of_membership(&state, auth.merchant_id, &membership_key).await?;
    Ok(Json(EventList {
        events: events
            .into_iter()
            .map(|(event, attempts)| EventRecord::new(event, attempts))
            .collect(),
    }))
}

/// A re-send request accepted.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResendRecord {
    /// The event.
    pub action_id: String,
    /// `Pending`.
    pub status: String,
    /// When the new round's first attempt is due.
    pub next_attempt_at: Option<String>,
}

/// Sends an event again: a new round of up to 7 attempts starts now, whatever its status
/// (Delivered and Undeliverable events included), to its own URL and to each registered
/// endpoint it went to that still exists. Same `ActionId`.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/events/{actionId}/resend",
    tag = "events",
    params(("actionId" = String, Path, description = "The event's ActionId")),
    security(("bearer" = [])),
    responses(
        (status = 202, description = "Scheduled", body = ResendRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such event for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn resend_event(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(action_id): Path<String>,
) -> Result<(StatusCode, Json<ResendRecord>), ApiError> {
    let event = events::resend(&state, auth.merchant_id, &action_id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(ResendRecord {
            action_id: event.action_id,
            status: event.status.as_str().into(),
            next_attempt_at: event.next_attempt_at.map(format_utc),
        }),
    ))
}
