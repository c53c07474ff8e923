//! A merchant's webhook endpoints (DESIGN §12): `POST|GET /webhook-endpoints`,
//! `GET|PATCH|DELETE /webhook-endpoints/{endpointId}` and `POST …/rotate-secret`. An endpoint's
//! signing secret is answered at creation and at rotation only; it is stored sealed. The attempt
//! log and the test event are [`super::endpoint_deliveries`].

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use recur_domain::schedule::SECRET_ROTATION_OVERLAP;
use recur_domain::signature::new_whsec;
use recur_domain::time::format_utc;
use recur_domain::validation::{self as rules, FieldErrors};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::idempotency::RememberInstead;
use super::lists::ActionName;
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::events::Action;
use crate::http::input::{optional_text, required_text, Field};
use crate::keys::random_bytes;
use crate::state::AppState;
use crate::store::webhook_endpoints::{self, Changes, Endpoint, NewEndpoint, MAX_PER_MERCHANT};

/// Longest endpoint `url`.
const MAX_URL_CHARS: usize = 2048;

/// Longest `description`.
const MAX_DESCRIPTION_CHARS: usize = 500;

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

impl EndpointRecord {
    /// The record of a stored endpoint.
    pub fn new(endpoint: Endpoint) -> Self {
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
    let (endpoint, secret) = create(&state, auth.merchant_id, body).await?;
    let created = |secret| CreatedEndpoint {
        endpoint: EndpointRecord::new(endpoint.clone()),
        secret,
    };
    with_secret(StatusCode::CREATED, created(Some(secret)), created(None))
}

/// Checks `body` and registers the merchant's endpoint, enabled (the dashboard's form too): the
/// endpoint and its signing secret, which only this answer holds. Every failing field is listed;
/// a conflict when the merchant holds 20 endpoints already.
pub async fn create(
    state: &AppState,
    merchant_id: i64,
    body: CreateEndpointRequest,
) -> Result<(Endpoint, String), ApiError> {
    let mut errors = FieldErrors::new();
    let allow_private = state.config.webhooks.allow_private;
    let url = required_text(body.url, "url", &mut errors, |v| url_rule(v, allow_private));
    let events = events_filter(body.events, &mut errors);
    let description = optional_text(body.description, "description", &mut errors, |v| {
        rules::bounded_text(v, MAX_DESCRIPTION_CHARS)
    });
    let (Some(url), Some(events)) = (url, events) else {
        return Err(ApiError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let secret = new_whsec(&random_bytes::<32>());
    let new = NewEndpoint {
        endpoint_key: crate::ids::webhook_endpoint_id(),
        url,
        description,
        events,
        secret_sealed: state.keys.seal(&secret),
    };
    let now = state.merchant_now(merchant_id).await?;
    let endpoint = webhook_endpoints::insert(&state.store, merchant_id, &new, now)
        .await?
        .ok_or_else(|| {
            ApiError::Conflict(format!(
                "A merchant holds at most {MAX_PER_MERCHANT} webhook endpoints; delete one first."
            ))
        })?;
    tracing::info!(merchant_id, endpoint_id = %endpoint.endpoint_key, "webhook endpoint registered");
    Ok((endpoint, secret))
}

/// `url`: absolute HTTPS, not an address the SSRF guard refuses, at most 2048 characters.
fn url_rule(input: &str, allow_private: bool) -> Result<String, String> {
    if input.chars().count() > MAX_URL_CHARS {
        return Err(format!("must be at most {MAX_URL_CHARS} characters"));
    }
    rules::webhook_url(input, allow_private)
}

/// `events`: `Some(None)` for every event (absent or `null`), `Some(Some(actions))` for a
/// filter of known `Action`s (at least one, each once, in the order of [`Action::ALL`]), `None`
/// when it is not valid (reported under `events`).
fn events_filter(
    field: Field<Vec<String>>,
    errors: &mut FieldErrors,
) -> Option<Option<Vec<String>>> {
    let given = match field {
        Field::Absent | Field::Null => return Some(None),
        Field::Invalid(message) => {
            errors.add("events", message);
            return None;
        }
        Field::Present(given) => given,
    };
    let names: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
    if given.is_empty() {
        errors.add(
            "events",
            "must name at least one Action; omit it or send null for every event",
        );
        return None;
    }
    let mut valid = true;
    for (index, name) in given.iter().enumerate() {
        if Action::parse(name).is_none() {
            errors.add(
                format!("events[{index}]"),
                format!("must be one of {}", names.join(", ")),
            );
            valid = false;
        }
    }
    valid.then(|| {
        Some(
            names
                .iter()
                .filter(|name| given.iter().any(|g| g == *name))
                .map(|name| name.to_string())
                .collect(),
        )
    })
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
    let endpoints = webhook_endpoints::for_merchant(state.store.pool(), auth.merchant_id).await?;
    let data = endpoints.into_iter().map(EndpointRecord::new).collect();
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
    let endpoint = webhook_endpoints::get(state.store.pool(), auth.merchant_id, &endpoint_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(EndpointRecord::new(endpoint)))
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
    let changes = read_changes(body, state.config.webhooks.allow_private)?;
    let endpoint = update(&state, auth.merchant_id, &endpoint_id, &changes).await?;
    Ok(Json(EndpointRecord::new(endpoint)))
}

/// Applies checked `changes` to the merchant's endpoint `endpoint_id` in one transaction (the
/// dashboard's enable and disable too): the endpoint as changed, or not found.
pub async fn update(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
    changes: &Changes,
) -> Result<Endpoint, ApiError> {
    let mut tx = state.store.begin().await?;
    let endpoint = webhook_endpoints::update(&mut tx, merchant_id, endpoint_id, changes)
        .await?
        .ok_or(ApiError::NotFound)?;
    tx.commit().await?;
    Ok(endpoint)
}

fn read_changes(body: UpdateEndpointRequest, allow_private: bool) -> Result<Changes, ApiError> {
    let mut errors = FieldErrors::new();
    let mut changes = Changes::default();
    match body.url {
        Field::Absent => {}
        url => changes.url = required_text(url, "url", &mut errors, |v| url_rule(v, allow_private)),
    }
    if !matches!(body.events, Field::Absent) {
        changes.events = events_filter(body.events, &mut errors);
    }
    match body.enabled {
        Field::Absent => {}
        Field::Present(enabled) => changes.enabled = Some(enabled),
        Field::Null => errors.add("enabled", "must be true or false"),
        Field::Invalid(message) => errors.add("enabled", message),
    }
    match body.description {
        Field::Absent => {}
        Field::Null => changes.description = Some(None),
        description => {
            if let Some(text) = optional_text(description, "description", &mut errors, |v| {
                rules::bounded_text(v, MAX_DESCRIPTION_CHARS)
            }) {
                changes.description = Some(Some(text));
            }
        }
    }
    if errors.is_empty() {
        Ok(changes)
    } else {
        Err(ApiError::Validation(errors))
    }
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
    delete(&state, auth.merchant_id, &endpoint_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Deletes the merchant's endpoint `endpoint_id` (the dashboard's form too); not found when it
/// has none.
pub async fn delete(state: &AppState, merchant_id: i64, endpoint_id: &str) -> Result<(), ApiError> {
    let now = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    if !webhook_endpoints::delete(&mut tx, merchant_id, endpoint_id, now).await? {
        return Err(ApiError::NotFound);
    }
    tx.commit().await?;
    tracing::info!(merchant_id, endpoint_id, "webhook endpoint deleted");
    Ok(())
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
    let secret = rotate(&state, auth.merchant_id, &endpoint_id).await?;
    with_secret(
        StatusCode::OK,
        RotatedSecret {
            secret: Some(secret),
        },
        RotatedSecret { secret: None },
    )
}

/// Gives the merchant's endpoint `endpoint_id` a new signing secret, the previous one signing
/// too for 24 hours (the dashboard's form too): the new secret, which only this answer holds.
/// Not found when the merchant has no such endpoint.
pub async fn rotate(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
) -> Result<String, ApiError> {
    let secret = new_whsec(&random_bytes::<32>());
    let now = state.merchant_now(merchant_id).await?;
    let rotated = webhook_endpoints::rotate_secret(
        &state.store,
        merchant_id,
        endpoint_id,
        &state.keys.seal(&secret),
        now + SECRET_ROTATION_OVERLAP,
    )
    .await?;
    if !rotated {
        return Err(ApiError::NotFound);
    }
    tracing::info!(merchant_id, endpoint_id, "webhook endpoint secret rotated");
    Ok(secret)
}
