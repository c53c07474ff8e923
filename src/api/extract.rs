//! Extractors: a JSON body that fails as problem+json, and the authenticated merchant (by access
//! token or API key).

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use serde::de::DeserializeOwned;

use super::problem::ApiError;
use crate::auth::api_keys;
use crate::http::nul_text;
use crate::state::AppState;
use crate::store::api_keys::Scope;

/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// A JSON request body. Wrong content type: 415; over [`MAX_BODY_BYTES`]: 413; not JSON, or not a
/// JSON object: 400 with the parser's message; a string holding U+0000: 400 naming the field
/// ([`nul_text`]).
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(request.headers().get(header::CONTENT_TYPE)) {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = body_bytes(request, state).await?;
        json_object(&bytes).map(JsonBody)
    }
}

/// A JSON object body that may be left out: an empty body (with or without a JSON content
/// type) or a JSON `null` is `T::default()`; anything else is read as [`JsonBody`] reads it.
#[derive(Debug)]
pub struct OptionalJsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for OptionalJsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json = is_json(request.headers().get(header::CONTENT_TYPE));
        let bytes = body_bytes(request, state).await?;
        let text = std::str::from_utf8(&bytes).unwrap_or_default().trim();
        if bytes.iter().all(u8::is_ascii_whitespace) || text == "null" {
            return Ok(OptionalJsonBody(T::default()));
        }
        if !json {
            return Err(ApiError::UnsupportedMediaType);
        }
        json_object(&bytes).map(OptionalJsonBody)
    }
}

/// The request's body: over [`MAX_BODY_BYTES`] a 413, unreadable a 400.
async fn body_bytes<S: Send + Sync>(request: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, state)
        .await
        .map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge
            } else {
                ApiError::MalformedBody(rejection.body_text())
            }
        })
}

/// `bytes` read as a JSON object into `T`: not JSON, or not an object, a 400 with the parser's
/// message; a string holding U+0000, a 400 naming the field ([`nul_text`]).
fn json_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| ApiError::MalformedBody(e.to_string()))?;
    if !value.is_object() {
        return Err(ApiError::MalformedBody(
            "the body must be a JSON object".into(),
        ));
    }
    nul_text::check_json(&value)?;
    T::deserialize(value).map_err(|e| ApiError::MalformedBody(e.to_string()))
}

fn is_json(content_type: Option<&header::HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The merchant a request acts for, by a valid access token of a merchant that exists or by a
/// live API key, and what it may do. Anything else: 401 with
/// `WWW-Authenticate: Bearer error="invalid_token"`.
#[derive(Debug, Clone, Copy)]
pub struct AuthMerchant {
    /// The merchant's id.
    pub merchant_id: i64,
    /// What the credential may do: an access token may do everything (`Write`).
    pub scope: Scope,
}

impl FromRequestParts<AppState> for AuthMerchant {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        bearer_merchant(&parts.headers, state).await
    }
}

/// The merchant of the bearer credential in `headers`: an API key (`rk_…`, see
/// [`api_keys`]) or an access token. A correctly signed token can name a merchant this database
/// does not hold (a database restored or replaced under the same keys); it is refused like a
/// forged one.
pub async fn bearer_merchant(
    headers: &HeaderMap,
    state: &AppState,
) -> Result<AuthMerchant, ApiError> {
    let token = bearer_token(headers).ok_or(ApiError::Unauthorized)?;
    if api_keys::is_api_key(token) {
        return api_key_merchant(token, state)
            .await?
            .ok_or(ApiError::Unauthorized);
    }
    let merchant_id = state
        .tokens
        .verify(token, state.clock.now())
        .map_err(|_| ApiError::Unauthorized)?;
    if !state
        .processor_keys
        .exists(&state.store, merchant_id)
        .await?
    {
        return Err(ApiError::Unauthorized);
    }
    Ok(AuthMerchant {
        merchant_id,
        scope: Scope::Write,
    })
}

/// The merchant and scope of the live API key `secret`, or `None` when it is unknown or revoked.
pub async fn api_key_merchant(
    secret: &str,
    state: &AppState,
) -> Result<Option<AuthMerchant>, ApiError> {
    let key = state
        .api_keys
        .verify(&state.store, &state.keys, secret, state.clock.now())
        .await?;
    Ok(key.map(|key| AuthMerchant {
        merchant_id: key.merchant_id,
        scope: key.scope,
    }))
}

/// The token of an `Authorization: Bearer <token>` header (scheme in any case).
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        let ok = |s: &'static str| is_json(Some(&header::HeaderValue::from_static(s)));
        assert!(ok("application/json"));
        assert!(ok("application/json; charset=utf-8"));
        assert!(ok("Application/JSON"));
        assert!(ok("application/merge-patch+json"));
        assert!(!ok("text/plain"));
        assert!(!ok("application/x-www-form-urlencoded"));
        assert!(!is_json(None));
    }
}
