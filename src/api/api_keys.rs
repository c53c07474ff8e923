//! A merchant's API keys (DESIGN §11): `POST /api-keys`, `GET /api-keys` and
//! `DELETE /api-keys/{apiKeyId}`. Managing keys takes an access token or a `write` key (403 for
//! a `read` key). The secret is answered once, at creation, and stored only as its keyed lookup
//! digest. The operations are [`crate::services::keys`].

use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
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
use crate::services::keys::{self, NewKey};
use crate::state::AppState;
use crate::store::api_keys::{ApiKey, Scope};

/// What a key may do: `read` (GET only) or `write` (everything).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyScope {
    /// GET requests only; anything else is a 403.
    Read,
    /// Every request the merchant may make.
    Write,
}

impl From<Scope> for ApiKeyScope {
    fn from(scope: Scope) -> Self {
        match scope {
            Scope::Read => ApiKeyScope::Read,
            Scope::Write => ApiKeyScope::Write,
        }
    }
}

/// Body of a key creation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateApiKeyRequest {
    /// The merchant's name for the key, 1–100 characters.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 100, example = "Reporting job")]
    pub name: Field<String>,
    /// What the key may do.
    #[serde(default)]
    #[schema(required = true, value_type = ApiKeyScope)]
    pub scope: Field<String>,
}

/// A key just created, with its secret: shown this once.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedApiKey {
    /// `ak_` + 24 base62 characters.
    pub api_key_id: String,
    /// `rk_` + 32 base62 characters, for `Authorization: Bearer`. Shown once and never stored:
    /// `null` when the answer is replayed for a repeated `Idempotency-Key`.
    pub secret: Option<String>,
    /// The merchant's name for the key.
    pub name: String,
    /// What it may do.
    pub scope: ApiKeyScope,
    /// When it was created (UTC).
    pub created_at: String,
}

/// A live key, without its secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyRecord {
    /// `ak_` + 24 base62 characters.
    pub api_key_id: String,
    /// The merchant's name for the key.
    pub name: String,
    /// What it may do.
    pub scope: ApiKeyScope,
    /// When it was created (UTC).
    pub created_at: String,
    /// When it was last used (UTC), to within a minute; `null` before its first use.
    pub last_used_at: Option<String>,
}

/// The merchant managing its keys: by an access token or a `write` key; a `read` key is a 403.
pub struct KeyManager(pub i64);

impl FromRequestParts<AppState> for KeyManager {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let auth = AuthMerchant::from_request_parts(parts, state).await?;
        if auth.scope != Scope::Write {
            return Err(ApiError::Forbidden(
                "Managing API keys takes an access token or a write key.",
            ));
        }
        Ok(KeyManager(auth.merchant_id))
    }
}

/// Creates a key. The answer holds its secret, which is never shown again. A merchant holds at
/// most 100 live keys: revoke one to create another (409).
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/api-keys",
    tag = "api-keys",
    request_body = CreateApiKeyRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Key created; `secret` is shown this once", body = CreatedApiKey),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot manage keys", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The merchant already holds 100 live keys", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_api_key(
    State(state): State<AppState>,
    KeyManager(merchant_id): KeyManager,
    JsonBody(body): JsonBody<CreateApiKeyRequest>,
) -> Result<Response, ApiError> {
    let new = NewKey {
        name: body.name,
        scope: body.scope,
    };
    let (key, secret) = keys::create(&state, merchant_id, new).await?;
    let created = |secret| CreatedApiKey {
        api_key_id: key.key_id.clone(),
        secret,
        name: key.name.clone(),
        scope: key.scope.into(),
        created_at: format_utc(key.created_at),
    };
    // A repeated Idempotency-Key replays the answer without the secret, which is not stored.
    let replay = serde_json::to_vec(&created(None)).map_err(anyhow::Error::from)?;
    let mut response = (StatusCode::CREATED, Json(created(Some(secret)))).into_response();
    response
        .extensions_mut()
        .insert(RememberInstead(Bytes::from(replay)));
    Ok(response)
}

/// Lists the merchant's live keys, newest first, without their secrets. Revoked keys are not
/// listed.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/api-keys",
    tag = "api-keys",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The live keys, newest first, all in one page (at most 100)", body = Page<ApiKeyRecord>),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot manage keys", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_api_keys(
    State(state): State<AppState>,
    KeyManager(merchant_id): KeyManager,
) -> Result<Json<Page<ApiKeyRecord>>, ApiError> {
    let keys = keys::list(&state, merchant_id).await?;
    let data = keys.into_iter().map(ApiKeyRecord::from).collect();
    // Every live key fits one page: a merchant holds at most 100.
    Ok(Json(Page::new(data, None)))
}

impl From<ApiKey> for ApiKeyRecord {
    fn from(key: ApiKey) -> Self {
        ApiKeyRecord {
            api_key_id: key.key_id,
            name: key.name,
            scope: key.scope.into(),
            created_at: format_utc(key.created_at),
            last_used_at: key.last_used_at.map(format_utc),
        }
    }
}

/// Revokes a key: refused (401) from now on, in this process at once and in every other
/// process sharing the database within a second.
#[utoipa::path(
    delete,
    path = "/api/subscriptions/v1/api-keys/{apiKeyId}",
    tag = "api-keys",
    params(("apiKeyId" = String, Path, description = "The key's id (ak_…)")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot manage keys", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such live key for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn revoke_api_key(
    State(state): State<AppState>,
    KeyManager(merchant_id): KeyManager,
    Path(key_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    keys::revoke(&state, merchant_id, &key_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
