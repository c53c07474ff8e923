//! `POST /webhooks/stripe/{paymentProcessorId}` (DESIGN §17): where a merchant points its
//! Stripe account's webhook endpoint. The raw body and its `Stripe-Signature` go to
//! [`crate::services::stripe_webhooks`]; a refusal is a problem document, as everywhere.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::problem::{ApiError, Problem};
use crate::services::stripe_webhooks::{self, Received};
use crate::state::AppState;

/// The acknowledgement Stripe gets.
#[derive(Debug, Serialize, ToSchema)]
pub struct Acknowledged {
    /// `handled`, `repeated` (handled before; nothing changed) or `ignored` (a type recur does
    /// not act on).
    #[schema(example = "handled")]
    pub outcome: &'static str,
}

/// Receives an event of the merchant's Stripe account.
#[utoipa::path(
    post,
    path = "/webhooks/stripe/{paymentProcessorId}",
    tag = "processors",
    params(
        ("paymentProcessorId" = i64, Path, description = "The connected Stripe account's id"),
        ("Stripe-Signature" = String, Header, description = "t=…,v1=…: HMAC-SHA256 of t.body with the account's webhook secret"),
    ),
    request_body(content = String, description = "The event as Stripe sends it", content_type = "application/json"),
    responses(
        (status = 200, description = "Received", body = Acknowledged),
        (status = 400, description = "Missing, forged or stale signature, or not a Stripe event; nothing changed", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such connected account", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn receive(
    State(state): State<AppState>,
    Path(processor_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Acknowledged>, ApiError> {
    let processor_id: i64 = processor_id.parse().map_err(|_| ApiError::NotFound)?;
    let signature = headers
        .get("stripe-signature")
        .and_then(|value| value.to_str().ok());
    let received = stripe_webhooks::receive(&state, processor_id, signature, &body).await?;
    Ok(Json(Acknowledged {
        outcome: match received {
            Received::Handled => "handled",
            Received::Repeated => "repeated",
            Received::Ignored => "ignored",
        },
    }))
}
