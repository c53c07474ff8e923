//! `POST /membership/{membershipKey}/pause` and `…/resume` (DESIGN §15, beyond the spec): a
//! Paused membership is neither charged nor dunned; the unused part of its paid period becomes
//! credit, and resuming starts a new period, charged minus credit.

use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::{AuthMerchant, OptionalJsonBody};
use super::membership_records::{record_of, MembershipRecord};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::memberships;
use crate::state::AppState;

/// Body of `POST /membership/{membershipKey}/pause` (optional).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PauseRequest {
    /// When the membership resumes by itself: UTC `YYYY-MM-DDTHH:mm:ss` (a trailing `Z`
    /// accepted), after the merchant's current time. Absent or `null`: paused until resumed.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2027-03-01T00:00:00Z", pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$")]
    pub resume_at: Field<String>,
}

/// Pauses an Active membership at once: no charges and no dunning while Paused; the unused part
/// of the paid period becomes credit (a credit note on the invoice of that period says so).
/// Pausing a Paused membership sets its `resumeAt` (absent: none).
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/membership/{membershipKey}/pause",
    tag = "memberships",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    request_body(content = Option<PauseRequest>, description = "Optional: without it, paused until resumed"),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The Paused membership", body = MembershipRecord),
        (status = 400, description = "A resumeAt that is malformed or not ahead", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The membership is not Active (nor Paused), or a payment is in flight", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn pause_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
    OptionalJsonBody(body): OptionalJsonBody<PauseRequest>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let m = memberships::pause(&state, auth.merchant_id, &membership_key, body.resume_at).await?;
    Ok(Json(record_of(&state, &m).await?))
}

/// Resumes a Paused membership at once: Active, and a new period starts now, charged as a
/// renewal (credit first). A declined charge makes it PastDue with dunning, as a declined
/// renewal does (answered 200 with that status).
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/membership/{membershipKey}/resume",
    tag = "memberships",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The resumed membership", body = MembershipRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The membership is not Paused, or a payment is in flight", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn resume_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let m = memberships::resume(&state, auth.merchant_id, &membership_key).await?;
    Ok(Json(record_of(&state, &m).await?))
}
