//! Authentication of the hosted-payment-page API: `X-Merchant-Secret`, whose merchant is found
//! by the secret's keyed lookup digest, or else a live API key (`Authorization: Bearer rk_…`).
//! Missing or unknown: 401, before the body is read. (A read key never gets here for these
//! routes, which all change something: `read_only_keys` answers 403 first.)

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::extract::{api_key_merchant, bearer_token};
use super::problem::ApiError;
use crate::auth::api_keys::is_api_key;
use crate::state::AppState;
use crate::store::merchants;

/// Header carrying the merchant secret.
pub const SECRET_HEADER: &str = "x-merchant-secret";

/// The merchant whose secret or API key the request carries.
pub struct SecretMerchant {
    /// The merchant's id.
    pub merchant_id: i64,
    /// The secret as sent; `None` for a request made with an API key.
    sent_secret: Option<String>,
}

impl SecretMerchant {
    /// The merchant secret the hosted-page `signature` is made with: as sent, or, for a request
    /// made with an API key, the merchant's current secret opened from its sealed copy (one
    /// read of the merchant). Either way the caller signed with the merchant secret.
    pub async fn merchant_secret(&self, state: &AppState) -> Result<String, ApiError> {
        if let Some(secret) = &self.sent_secret {
            return Ok(secret.clone());
        }
        let merchant = merchants::by_id(&state.store, self.merchant_id)
            .await?
            .ok_or(ApiError::Unauthorized)?;
        Ok(state.keys.open(&merchant.secret_sealed)?)
    }
}

impl FromRequestParts<AppState> for SecretMerchant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let sent = parts
            .headers
            .get(SECRET_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty());
        if let Some(secret) = sent {
            let merchant =
                merchants::by_secret_digest(&state.store, &state.keys.lookup_digest(secret))
                    .await?
                    .ok_or(ApiError::Unauthorized)?;
            return Ok(SecretMerchant {
                merchant_id: merchant.id,
                sent_secret: Some(secret.to_string()),
            });
        }
        let key = bearer_token(&parts.headers)
            .filter(|token| is_api_key(token))
            .ok_or(ApiError::Unauthorized)?;
        let auth = api_key_merchant(key, state)
            .await?
            .ok_or(ApiError::Unauthorized)?;
        Ok(SecretMerchant {
            merchant_id: auth.merchant_id,
            sent_secret: None,
        })
    }
}
