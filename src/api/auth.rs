//! `POST /api/subscriptions/v1/auth`: user name and password for a bearer token.

use axum::extract::State;
use axum::Json;
use recur_domain::validation::FieldErrors;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::JsonBody;
use super::problem::{ApiError, Problem};
use crate::auth::login::{self, Outcome};
use crate::http::client_address::ClientAddress;
use crate::http::input::Field;
use crate::state::AppState;

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
    let outcome = login::check(
        &state.login_limiter,
        &state.store,
        &user_name,
        password,
        client,
        now,
    )
    .await?;
    let merchant_id = match outcome {
        Outcome::Verified(merchant) => merchant.id,
        Outcome::Refused => return Err(ApiError::InvalidCredentials),
        Outcome::Limited { retry_after } => return Err(ApiError::RateLimited { retry_after }),
    };
    Ok(Json(AuthResponse {
        access_token: state.tokens.issue(merchant_id, now)?,
        token_type: "Bearer",
        expires_in: state.tokens.ttl_seconds(),
    }))
}
