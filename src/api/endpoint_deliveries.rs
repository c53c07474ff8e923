//! What was sent to a merchant's webhook endpoint (DESIGN §12): its attempt log,
//! `GET /webhook-endpoints/{endpointId}/deliveries`, and a test event,
//! `POST /webhook-endpoints/{endpointId}/test`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use recur_domain::validation::FieldErrors;
use serde::Serialize;
use utoipa::ToSchema;

use super::extract::AuthMerchant;
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::events::{test_payload, TEST_ACTION};
use crate::http::pagination::{ListQuery, ListScope, PageParams};
use crate::state::AppState;
use crate::store::endpoint_deliveries::{self, LoggedAttempt};
use crate::store::webhook_endpoints;

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

impl DeliveryAttemptRecord {
    fn new(attempt: LoggedAttempt) -> Self {
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
    let (records, next) = attempts(&state, auth.merchant_id, &endpoint_id, page).await?;
    Ok(Json(Page::new(records, next)))
}

/// A page of the delivery attempts to the merchant's endpoint `endpoint_id`, newest first, and
/// the cursor of the next (the dashboard's delivery log too). Not found when the merchant has no
/// such endpoint; a validation error for a cursor recur did not give for this list.
pub async fn attempts(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
    page: PageParams,
) -> Result<(Vec<DeliveryAttemptRecord>, Option<String>), ApiError> {
    let pool = state.store.pool();
    let endpoint = webhook_endpoints::get(pool, merchant_id, endpoint_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let scope = ListScope::new(
        "endpoint-deliveries",
        merchant_id,
        &[("endpoint", Some(&endpoint.endpoint_key))],
    );
    let ask = page.read(&state.keys, scope, FieldErrors::new())?;
    let rows =
        endpoint_deliveries::attempts_page(pool, merchant_id, endpoint.id, ask.window()).await?;
    let (rows, next) = ask.cut(rows, |attempt| attempt.id);
    Ok((
        rows.into_iter().map(DeliveryAttemptRecord::new).collect(),
        next,
    ))
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
    let action_id = queue_test(&state, auth.merchant_id, &endpoint_id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(TestEventRecord {
            action_id,
            action: TEST_ACTION.into(),
        }),
    ))
}

/// Queues a `WEBHOOK_TEST` event to the merchant's endpoint `endpoint_id` alone (the
/// dashboard's form too): its `ActionId`. Not found when the merchant has no such endpoint; a
/// conflict when it is disabled.
pub async fn queue_test(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
) -> Result<String, ApiError> {
    let endpoint = webhook_endpoints::get(state.store.pool(), merchant_id, endpoint_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    if !endpoint.enabled {
        return Err(ApiError::Conflict(
            "The endpoint is disabled: enable it to send it a test event.".into(),
        ));
    }
    let now = state.merchant_now(merchant_id).await?;
    let action_id = uuid::Uuid::new_v4().hyphenated().to_string();
    let mut tx = state.store.begin().await?;
    endpoint_deliveries::insert_test(
        &mut tx,
        merchant_id,
        endpoint.id,
        &action_id,
        TEST_ACTION,
        &test_payload(&action_id, now),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(action_id)
}
