//! A merchant's webhook endpoints (DESIGN §12): `POST|GET /webhook-endpoints`,
//! `GET|PATCH|DELETE /webhook-endpoints/{endpointId}` and `POST …/rotate-secret`. An endpoint's
//! signing secret is answered at creation and at rotation only; it is stored sealed. The attempt
//! log and the test event are [`super::endpoint_deliveries`]; the operations are
//! [`crate::services::endpoints`].

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::idempotency::RememberInstead;
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::endpoints::{self, EndpointChange, NewEndpoint};
use crate::services::lists::ActionName;
use crate::state::AppState;
use crate::store::webhook_endpoints::Endpoint;

/// Body of an endpoint's creation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateEndpointRequest {
    /// Absolute HTTPS URL the events are POSTed to (not a private or loopback address).
    #[serde(default)]
    #[schema(required = true, value_type = String, format = "uri", max_length = 2048, example = "https://example.com/hooks/recur")]
    pub url: Field<String>,
    /// The `Action`s it receives, at least one; omitted or `null`: every event.
    #[serde(default)]
    #[schema(value_type = Option<Vec<ActionName>>, min_items = 1)]
    pub events: Field<Vec<String>>,
    /// The merchant's note, 1–500 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 500)]
    pub description: Field<String>,
}

/// Body of an endpoint's change: each field given replaces the stored one.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateEndpointRequest {
    /// A new absolute HTTPS URL.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = "uri", max_length = 2048)]
    pub url: Field<String>,
    /// A new filter, at least one `Action`; `null`: every event.
    #[serde(default)]
    #[schema(value_type = Option<Vec<ActionName>>, min_items = 1)]
    pub events: Field<Vec<String>>,
    /// `false` stops deliveries (pending ones wait); `true` resumes them and starts the
    /// endpoint's health afresh.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub enabled: Field<bool>,
    /// A new note; `null` removes it.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 500)]
    pub description: Field<String>,
}

/// An endpoint, without its secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointRecord {
    /// `we_` + 24 base62 characters.
    pub endpoint_id: String,
    /// Where events are POSTed.
    pub url: String,
    /// The `Action`s it receives; `null`: every event.
    #[schema(value_type = Option<Vec<ActionName>>)]
    pub events: Option<Vec<String>>,
    /// Whether events are sent to it.
    pub enabled: bool,
    /// The merchant's note.
    pub description: Option<String>,
    /// When it was created (UTC).
    pub created_at: String,
    /// When recur disabled it because every attempt had failed for five days (UTC); `null`
    /// otherwise.
    pub disabled_at: Option<String>,
}

impl From<Endpoint> for EndpointRecord {
    fn from(endpoint: Endpoint) -> Self {
        Self {
            endpoint_id: endpoint.endpoint_key,
            url: endpoint.url,
            events: endpoint.events,
            enabled: endpoint.enabled,
            description: endpoint.description,
            created_at: format_utc(endpoint.created_at),
            disabled_at: endpoint.disabled_at.map(format_utc),
        }
    }
}

/// An endpoint just created, with its signing secret: shown this once.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedEndpoint {
    /// The endpoint.
    #[serde(flatten)]
    pub endpoint: EndpointRecord,
    /// `whsec_` + base64: the Standard Webhooks key of its `webhook-signature`. Shown at
    /// creation and rotation only; `null` when the answer is replayed for a repeated
    /// `Idempotency-Key`.
    pub secret: Option<String>,
}

/// A new signing secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct RotatedSecret {
    /// The new `whsec_` secret; the previous one also signs for 24 hours. `null` when the
    /// answer is replayed for a repeated `Idempotency-Key`.
    pub secret: Option<String>,
}

/// An answer holding a secret shown once: the replay of a repeated `Idempotency-Key` gets
/// `replay` instead, so the secret is never stored.
fn with_secret<T: Serialize>(
    status: StatusCode,
    shown: T,
    replay: T,
) -> Result<Response, ApiError> {
    let replay = serde_json::to_vec(&replay).map_err(anyhow::Error::from)?;
    let mut response = (status, Json(shown)).into_response();
    response
        .extensions_mut()
        .insert(RememberInstead(Bytes::from(replay)));
    Ok(response)
}

/// Registers an endpoint, enabled. The answer holds its signing secret, which is shown again
/// only by a rotation. A merchant holds at most 20 endpoints (409 beyond).
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/webhook-endpoints",
    tag = "webhook-endpoints",
    request_body = CreateEndpointRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Endpoint registered; `secret` is shown this once", body = CreatedEndpoint),
        (status = 400, description = "Validation failed: every failing field is listed (a URL that is not absolute HTTPS or names a private address, an unknown Action, an empty filter)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot register endpoints", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The merchant already holds 20 endpoints", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_endpoint(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateEndpointRequest>,
) -> Result<Response, ApiError> {
    let new = NewEndpoint {
        url: body.url,
        events: body.events,
        description: body.description,
    };
    let (endpoint, secret) = endpoints::create(&state, auth.merchant_id, new).await?;
    let created = |secret| CreatedEndpoint {
        endpoint: endpoint.clone().into(),
        secret,
    };
    with_secret(StatusCode::CREATED, created(Some(secret)), created(None))
}

/// Lists the merchant's endpoints, newest first, without their secrets: all of them in one page
/// (a merchant holds at most 20).
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/webhook-endpoints",
    tag = "webhook-endpoints",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The endpoints, newest first, all in one page", body = Page<EndpointRecord>),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_endpoints(
    State(state): State<AppState>,
    auth: AuthMerchant,
) -> Result<Json<Page<EndpointRecord>>, ApiError> {
    let endpoints = endpoints::list(&state, auth.merchant_id).await?;
    let data = endpoints.into_iter().map(EndpointRecord::from).collect();
    Ok(Json(Page::new(data, None)))
}

/// An endpoint, without its secret.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/webhook-endpoints/{endpointId}",
    tag = "webhook-endpoints",
    params(("endpointId" = String, Path, description = "The endpoint's id (we_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The endpoint", body = EndpointRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such endpoint for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_endpoint(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(endpoint_id): Path<String>,
) -> Result<Json<EndpointRecord>, ApiError> {
    let endpoint = endpoints::endpoint(&state, auth.merchant_id, &endpoint_id).await?;
    Ok(Json(endpoint.into()))
}

/// Changes an endpoint's URL, filter, note or whether it is enabled; omitted fields stay.
#[utoipa::path(
    patch,
    path = "/api/subscriptions/v1/webhook-endpoints/{endpointId}",
    tag = "webhook-endpoints",
    params(("endpointId" = String, Path, description = "The endpoint's id (we_…)")),
    request_body = UpdateEndpointRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The endpoint as changed", body = EndpointRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot change endpoints", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such endpoint for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_endpoint(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(endpoint_id): Path<String>,
    JsonBody(body): JsonBody<UpdateEndpointRequest>,
) -> Result<Json<EndpointRecord>, ApiError> {
    let change = EndpointChange {
        url: body.url,
        events: body.events,
        enabled: body.enabled,
        description: body.description,
    };
    let endpoint = endpoints::update(&state, auth.merchant_id, &endpoint_id, change).await?;
    Ok(Json(endpoint.into()))
}

/// Deletes an endpoint: nothing more is sent to it and its pending deliveries end
/// `Undeliverable`.
#[utoipa::path(
    delete,
    path = "/api/subscriptions/v1/webhook-endpoints/{endpointId}",
    tag = "webhook-endpoints",
    params(("endpointId" = String, Path, description = "The endpoint's id (we_…)")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot delete endpoints", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such endpoint for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn delete_endpoint(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(endpoint_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    endpoints::delete(&state, auth.merchant_id, &endpoint_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Gives an endpoint a new signing secret. For 24 hours each delivery's `webhook-signature`
/// carries two `v1,` signatures, with the new and the previous secret, so a receiver holding
/// either verifies it; a second rotation within them drops the oldest.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/webhook-endpoints/{endpointId}/rotate-secret",
    tag = "webhook-endpoints",
    params(("endpointId" = String, Path, description = "The endpoint's id (we_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The new secret, shown this once", body = RotatedSecret),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot rotate secrets", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such endpoint for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn rotate_secret(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(endpoint_id): Path<String>,
) -> Result<Response, ApiError> {
    let secret = endpoints::rotate_secret(&state, auth.merchant_id, &endpoint_id).await?;
    with_secret(
        StatusCode::OK,
        RotatedSecret {
            secret: Some(secret),
        },
        RotatedSecret { secret: None },
    )
}
