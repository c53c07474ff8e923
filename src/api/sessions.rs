//! Checkout and portal sessions (DESIGN §2): links to the hosted pages where a customer pays a
//! membership or manages their memberships, invoices and card.
//!
//! `POST /checkout/session` with a `membershipKey` opens a checkout, without one a portal;
//! `POST /portal/session` is the explicit portal alias; both over [`crate::services::sessions`].
//! Links carry an unguessable token of which only a keyed digest is stored; checkout links work
//! for 24 hours, portal links for one hour.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::HttpsUrl;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::sessions::{self, NewSession};
use crate::state::AppState;
use crate::store::checkout_sessions::{CheckoutSession, SessionKind};

/// Body of `POST /checkout/session` and `POST /portal/session`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRequest {
    /// The customer (`cstmr_…`).
    #[serde(default)]
    #[schema(required = true, value_type = String, pattern = "^cstmr_")]
    pub customer_key: Field<String>,
    /// The membership to pay (`mmbrshp_…`): present for a checkout, absent for a portal.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^mmbrshp_")]
    pub membership_key: Field<String>,
    /// Absolute HTTPS URL where the customer is sent afterwards; defaults to the membership's
    /// `returnToWebsiteLink`.
    #[serde(default)]
    #[schema(value_type = Option<HttpsUrl>)]
    pub return_to_website_link: Field<String>,
}

/// A checkout session.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutSessionRecord {
    /// Send the customer's browser here.
    pub checkout_redirect_url: String,
    /// `cs_…`.
    pub session_id: String,
    /// When the link stops working (UTC).
    pub expires_at: String,
}

/// A portal session.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PortalSessionRecord {
    /// Send the customer's browser here.
    pub portal_redirect_url: String,
    /// `ps_…`.
    pub session_id: String,
    /// When the link stops working (UTC).
    pub expires_at: String,
}

/// Either session.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum SessionRecord {
    /// With `membershipKey`.
    Checkout(CheckoutSessionRecord),
    /// Without `membershipKey`.
    Portal(PortalSessionRecord),
}

/// Opens a checkout session for a customer's membership, or, without `membershipKey`, a portal
/// session. A checkout pays the first invoice of an Incomplete membership, or the open invoice of
/// a PastDue, Unpaid or Canceled one (pay-now; a Canceled membership stays Canceled); a
/// membership with nothing to pay is a 409.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/checkout/session",
    tag = "sessions",
    request_body = SessionRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Session opened", body = SessionRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The membership has nothing to pay", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_checkout_session(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<SessionRequest>,
) -> Result<(StatusCode, Json<SessionRecord>), ApiError> {
    let kind = match body.membership_key {
        Field::Present(_) | Field::Invalid(_) => SessionKind::Checkout,
        Field::Absent | Field::Null => SessionKind::Portal,
    };
    open(&state, auth.merchant_id, body, kind).await
}

/// Opens a portal session: the customer's self-service page (memberships, invoices, card,
/// cancellation). `membershipKey` is not accepted here.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/portal/session",
    tag = "sessions",
    request_body = SessionRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Portal session opened", body = PortalSessionRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_portal_session(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<SessionRequest>,
) -> Result<(StatusCode, Json<SessionRecord>), ApiError> {
    open(&state, auth.merchant_id, body, SessionKind::Portal).await
}

/// Opens the session of `kind` that `body` asks for: 201 with its link.
async fn open(
    state: &AppState,
    merchant_id: i64,
    body: SessionRequest,
    kind: SessionKind,
) -> Result<(StatusCode, Json<SessionRecord>), ApiError> {
    let new = NewSession {
        customer_key: body.customer_key,
        membership_key: body.membership_key,
        return_to_website_link: body.return_to_website_link,
    };
    let (token, session) = sessions::open(state, merchant_id, kind, new).await?;
    Ok((StatusCode::CREATED, Json(record(state, &token, session))))
}

fn record(state: &AppState, token: &str, session: CheckoutSession) -> SessionRecord {
    let expires_at = format_utc(session.expires_at);
    let session_id = session.session_key;
    match session.kind {
        SessionKind::Checkout => SessionRecord::Checkout(CheckoutSessionRecord {
            checkout_redirect_url: format!("{}/checkout/{token}", state.public_url),
            session_id,
            expires_at,
        }),
        SessionKind::Portal => SessionRecord::Portal(PortalSessionRecord {
            portal_redirect_url: format!("{}/portal/{token}", state.public_url),
            session_id,
            expires_at,
        }),
    }
}
