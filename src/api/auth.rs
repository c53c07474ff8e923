//! `POST /api/subscriptions/v1/auth`: user name and password for a bearer token.

use axum::extract::State;
use axum::Json;
use recur_domain::validation::FieldErrors;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::client_address::ClientAddress;
use super::extract::JsonBody;
use super::input::Field;
use super::problem::{ApiError, Problem};
use crate::auth::password;
use crate::state::AppState;
use crate::store::merchants;

/// Credentials issued to the merchant.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthRequest {
    /// The merchant's user name.
    #[serde(default)]
    #[schema(required = true, value_type = String)]
    pub user_name: Field<String>,
    /// The merchant's password.
    #[serde(default)]
    #[schema(required = true, value_type = String, format = Password)]
    pub password: Field<String>,
}

/// A short-lived access token.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthResponse {
    /// JWT to send as `Authorization: Bearer <accessToken>`.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds until the token expires.
    pub expires_in: u64,
}

/// Exchanges credentials for an access token. Failed attempts are limited per user name and
/// source address, per source address, and per user name (429 with `Retry-After`; see
/// [`crate::auth::login_limiter`]).
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/auth",
    tag = "auth",
    request_body = AuthRequest,
    responses(
        (status = 200, description = "Token issued", body = AuthResponse),
        (status = 400, description = "Missing fields or malformed JSON", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Wrong user name or password", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Too many failed attempts", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn authenticate(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    JsonBody(body): JsonBody<AuthRequest>,
) -> Result<Json<AuthResponse>, ApiError> {
    let mut errors = FieldErrors::new();
    let user_name = body.user_name.required("userName", &mut errors);
    let password = body.password.required("password", &mut errors);
    let (Some(user_name), Some(password)) = (user_name, password) else {
        return Err(ApiError::Validation(errors));
    };
    let now = state.clock.now();
    // Reserved before the password is read, so concurrent attempts never exceed the limits.
    let attempt = state
        .login_limiter
        .begin(&user_name, client, now)
        .map_err(|retry_after| ApiError::RateLimited { retry_after })?;
    let merchant = merchants::by_user_name(&state.store, &user_name).await?;
    // The attempt is settled where the password is verified, so a client hanging up cannot
    // have a verification run uncounted.
    let verified = tokio::task::spawn_blocking(move || {
        let verified = match &merchant {
            Some(m) if password::verify(&password, &m.password_hash) => Some(m.id),
            Some(_) => None,
            None => {
                password::verify_against_nothing(&password);
                None
            }
        };
        match verified {
            Some(_) => attempt.succeeded(now),
            None => attempt.failed(now),
        }
        verified
    })
    .await
    .map_err(|e| ApiError::Internal(e.into()))?;
    let Some(merchant_id) = verified else {
        tracing::warn!(user_name, "failed login");
        return Err(ApiError::InvalidCredentials);
    };
    Ok(Json(AuthResponse {
        access_token: state.tokens.issue(merchant_id, now)?,
        token_type: "Bearer",
        expires_in: state.tokens.ttl_seconds(),
    }))
}
