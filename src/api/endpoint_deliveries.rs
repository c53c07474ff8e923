//! What was sent to a merchant's webhook endpoint (DESIGN §12): its attempt log,
//! `GET /webhook-endpoints/{endpointId}/deliveries`, and a test event,
//! `POST /webhook-endpoints/{endpointId}/test`, over [`crate::services::endpoints`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use serde::Serialize;
use utoipa::ToSchema;

use super::extract::AuthMerchant;
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::events::TEST_ACTION;
use crate::http::pagination::{ListQuery, PageParams};
use crate::services::endpoints;
use crate::state::AppState;
use crate::store::endpoint_deliveries::LoggedAttempt;

/// One attempt to deliver an event to the endpoint.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttemptRecord {
    /// The event's `ActionId`.
    pub action_id: String,
    /// The event's `Action` (`WEBHOOK_TEST` for a test event).
    pub action: String,
    /// 1-based number among the attempts to deliver this event to this endpoint.
    pub attempt: i64,
    /// The endpoint's HTTP status, when it answered.
    pub status_code: Option<i64>,
    /// Milliseconds until the answer or the failure.
    pub duration_ms: i64,
    /// Why it failed without an HTTP status: time-out, refused address, TLS, connection.
    pub error: Option<String>,
    /// When it started, UTC (the merchant's test clock for sandbox merchants that use one).
    pub at: String,
}

impl From<LoggedAttempt> for DeliveryAttemptRecord {
    fn from(attempt: LoggedAttempt) -> Self {
        Self {
            action_id: attempt.action_id,
            action: attempt.action,
            attempt: attempt.attempt,
            status_code: attempt.status_code,
            duration_ms: attempt.latency_ms,
            error: attempt.error,
            at: format_utc(attempt.started_at),
        }
    }
}

/// Lists the attempts to deliver to an endpoint, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/webhook-endpoints/{endpointId}/deliveries",
    tag = "webhook-endpoints",
    params(("endpointId" = String, Path, description = "The endpoint's id (we_…)"), PageParams),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of attempts, newest first", body = Page<DeliveryAttemptRecord>),
        (status = 400, description = "A limit outside 1–100 or a cursor recur did not give for this list", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such endpoint for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_deliveries(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(endpoint_id): Path<String>,
    ListQuery(page): ListQuery<PageParams>,
) -> Result<Json<Page<DeliveryAttemptRecord>>, ApiError> {
    let (rows, next) =
        endpoints::delivery_page(&state, auth.merchant_id, &endpoint_id, page).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(DeliveryAttemptRecord::from).collect(),
        next,
    )))
}

/// A test event queued.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestEventRecord {
    /// The test event's `ActionId`, to find its attempts in the endpoint's deliveries.
    pub action_id: String,
    /// `WEBHOOK_TEST`.
    pub action: String,
}

/// Queues a `WEBHOOK_TEST` event (`{"Action": "WEBHOOK_TEST", "ActionId", "IssuedAt"}`) to this
/// endpoint alone, whatever its filter, on the schedule of every delivery. A disabled endpoint
/// receives nothing: enable it first (409).
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/webhook-endpoints/{endpointId}/test",
    tag = "webhook-endpoints",
    params(("endpointId" = String, Path, description = "The endpoint's id (we_…)")),
    security(("bearer" = [])),
    responses(
        (status = 202, description = "Queued", body = TestEventRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot send test events", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such endpoint for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The endpoint is disabled", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn send_test(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(endpoint_id): Path<String>,
) -> Result<(StatusCode, Json<TestEventRecord>), ApiError> {
    let action_id = endpoints::send_test(&state, auth.merchant_id, &endpoint_id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(TestEventRecord {
            action_id,
            action: TEST_ACTION.into(),
        }),
    ))
}
