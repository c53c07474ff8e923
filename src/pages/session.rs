//! Finding the checkout or portal session behind a page's link, and what every page of it needs:
//! the merchant, the customer, the merchant's time and the visitor's language.

use std::collections::BTreeMap;

use axum::http::{header, HeaderMap};
use chrono::{DateTime, Utc};

use crate::api::problem::ApiError;
use crate::app::AppState;
use crate::billing::merchant_now;
use crate::store::checkout_sessions::{self, CheckoutSession, SessionKind};
use crate::store::customers::{self, Customer};
use crate::store::merchants::{self, Merchant};

/// An open session and its surroundings.
pub struct PageSession {
    /// The session.
    pub session: CheckoutSession,
    /// Its merchant.
    pub merchant: Merchant,
    /// Its customer.
    pub customer: Customer,
    /// The merchant's current time (its test clock for a sandbox merchant that has one).
    pub now: DateTime<Utc>,
}

/// The session of `token` if it is of `kind` and has not expired.
pub async fn open(
    state: &AppState,
    token: &str,
    kind: SessionKind,
) -> Result<Option<PageSession>, ApiError> {
    let digest = state.keys.lookup_digest(token);
    let Some(session) = checkout_sessions::by_token_digest(state.store.pool(), &digest).await?
    else {
        return Ok(None);
    };
    if session.kind != kind {
        return Ok(None);
    }
    let now = merchant_now(state, session.merchant_id).await?;
    if session.expires_at <= now {
        return Ok(None);
    }
    let merchant = merchants::by_id(&state.store, session.merchant_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let customer = customers::by_id(state.store.pool(), session.merchant_id, session.customer_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Some(PageSession {
        session,
        merchant,
        customer,
        now,
    }))
}

/// The visitor's strings, from `Accept-Language`.
pub fn strings<'s>(state: &'s AppState, headers: &HeaderMap) -> &'s BTreeMap<String, String> {
    state.strings.for_accept_language(
        headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok()),
    )
}
