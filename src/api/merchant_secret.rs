//! `X-Merchant-Secret` authentication of the hosted-payment-page API: the merchant is found by
//! the secret's keyed lookup digest. Missing or unknown: 401, before the body is read.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::problem::ApiError;
use crate::state::AppState;
use crate::store::merchants::{self, Merchant};

/// Header carrying the merchant secret.
pub const SECRET_HEADER: &str = "x-merchant-secret";

/// The merchant whose secret the request carries, and the secret (the hosted-page signature is
/// computed with it).
pub struct SecretMerchant {
    /// The merchant.
    pub merchant: Merchant,
    /// The secret as sent.
    pub secret: String,
}

impl FromRequestParts<AppState> for SecretMerchant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let secret = parts
            .headers
            .get(SECRET_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .ok_or(ApiError::Unauthorized)?
            .to_string();
        let merchant =
            merchants::by_secret_digest(&state.store, &state.keys.lookup_digest(&secret))
                .await?
                .ok_or(ApiError::Unauthorized)?;
        Ok(SecretMerchant { merchant, secret })
    }
}
