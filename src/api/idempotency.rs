//! The `Idempotency-Key` header on every POST and PUT: the same key with the same request within
//! 24 hours replays the first response (marked `Idempotent-Replayed: true`); the same key with a
//! different request is a 422; a key whose first request is still running is a 409.
//!
//! Keys are per merchant. Server errors (5xx) and rate limits (429) are not remembered, so the
//! request can be retried under the same key.

use axum::body::{to_bytes, Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use recur_domain::validation::FieldErrors;
use sha2::{Digest, Sha256};

use super::extract::{bearer_merchant, AuthMerchant, MAX_BODY_BYTES};
use super::problem::ApiError;
use crate::state::AppState;
use crate::store::idempotency;

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The header marking a replayed response.
pub const REPLAYED: &str = "idempotent-replayed";
/// Longest accepted key.
const MAX_KEY_LEN: usize = 255;

/// A response extension: the body to remember (and replay) in place of the one sent, for an
/// answer that holds a secret shown once, which must not be stored.
#[derive(Debug, Clone)]
pub struct RememberInstead(pub Bytes);

/// Middleware for the merchant API.
pub async fn idempotency(State(state): State<AppState>, request: Request, next: Next) -> Response {
    match handle(&state, request, next).await {
        Ok(response) | Err(response) => response,
    }
}

async fn handle(state: &AppState, request: Request, next: Next) -> Result<Response, Response> {
    let applies = matches!(*request.method(), Method::POST | Method::PUT);
    let Some(key) = request.headers().get(HEADER).filter(|_| applies).cloned() else {
        return Ok(next.run(request).await);
    };
    // Without a valid token of an existing merchant, or a live API key, the handler answers 401
    // itself; nothing to remember.
    let Ok(AuthMerchant { merchant_id, .. }) = bearer_merchant(request.headers(), state).await
    else {
        return Ok(next.run(request).await);
    };
    let key = valid_key(&key).map_err(IntoResponse::into_response)?;
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| ApiError::PayloadTooLarge.into_response())?;
    let request_hash = hash(&parts.method, parts.uri.path(), &bytes);
    let now = state.clock.now();
    let internal = |e: sqlx::Error| ApiError::from(e).into_response();
    let first = idempotency::claim(
        &state.store,
        merchant_id,
        &key,
        &request_hash,
        now,
        now - idempotency::RETENTION,
    )
    .await
    .map_err(internal)?;
    if !first {
        let remembered = idempotency::get(&state.store, merchant_id, &key)
            .await
            .map_err(internal)?
            .ok_or_else(|| {
                ApiError::Conflict("The Idempotency-Key was released; retry.".into())
                    .into_response()
            })?;
        if remembered.request_hash != request_hash {
            return Err(ApiError::IdempotencyKeyReused.into_response());
        }
        return Err(replay(remembered));
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let status = response.status();
    if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
        idempotency::release(&state.store, merchant_id, &key)
            .await
            .map_err(internal)?;
        return Ok(response);
    }
    let (parts, body) = response.into_parts();
    let body = to_bytes(body, usize::MAX).await.map_err(|e| {
        ApiError::Internal(anyhow::anyhow!("buffering a response: {e}")).into_response()
    })?;
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let remembered = parts
        .extensions
        .get::<RememberInstead>()
        .map_or(&body, |instead| &instead.0);
    idempotency::complete(
        &state.store,
        merchant_id,
        &key,
        status.as_u16(),
        content_type,
        remembered,
    )
    .await
    .map_err(internal)?;
    Ok(Response::from_parts(parts, Body::from(body)))
}

fn valid_key(value: &HeaderValue) -> Result<String, ApiError> {
    let text = value.to_str().unwrap_or_default();
    if text.is_empty() || text.len() > MAX_KEY_LEN || !text.bytes().all(|b| b.is_ascii_graphic()) {
        let mut errors = FieldErrors::new();
        errors.add(
            "Idempotency-Key",
            format!("must be 1 to {MAX_KEY_LEN} visible ASCII characters"),
        );
        return Err(ApiError::Validation(errors));
    }
    Ok(text.to_string())
}

fn hash(method: &Method, path: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(method.as_str().as_bytes());
    hasher.update(b" ");
    hasher.update(path.as_bytes());
    hasher.update(b"\n");
    hasher.update(body);
    hex::encode(hasher.finalize())
}

fn replay(remembered: idempotency::Remembered) -> Response {
    if remembered.status == 0 {
        return ApiError::Conflict(
            "A request with this Idempotency-Key is still in progress.".into(),
        )
        .into_response();
    }
    let Ok(status) = StatusCode::from_u16(remembered.status) else {
        return ApiError::Internal(anyhow::anyhow!(
            "stored status {} is invalid",
            remembered.status
        ))
        .into_response();
    };
    let mut response = (status, remembered.body).into_response();
    if let Some(value) = remembered
        .content_type
        .and_then(|v| HeaderValue::from_str(&v).ok())
    {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
        .headers_mut()
        .insert(REPLAYED, HeaderValue::from_static("true"));
    response
}
