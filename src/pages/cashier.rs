//! The cashier page behind a hosted-page session's `redirectUrl`:
//! `GET /cashier?sessionToken=hp-…&m_orderId=…[&m_fixed_pp_id=N]`.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::context;
use recur_domain::money::Currency;
use serde::Deserialize;

use super::format::{display_amount, input_amount};
use super::render::{page, Framing};
use super::{csrf, expired, i18n, session};
use crate::api::problem::ApiError;
use crate::app::AppState;
use crate::store::hosted_sessions::{self, HostedSession};
use crate::store::merchants;
use crate::store::processors::{self, PaymentProcessor, ProcessorKind};

/// The cashier's query string.
#[derive(Debug, Deserialize)]
pub struct CashierQuery {
    /// `hp-…` session token.
    #[serde(rename = "sessionToken")]
    pub session_token: Option<String>,
    /// The order id, which must be the session's.
    #[serde(rename = "m_orderId")]
    pub order_id: Option<String>,
    /// Show only this processor.
    pub m_fixed_pp_id: Option<String>,
}

/// The session of a valid, open, unexpired token whose order id matches.
pub async fn open_session(
    state: &AppState,
    query: &CashierQuery,
) -> Result<Option<HostedSession>, ApiError> {
    let Some(token) = query.session_token.as_deref() else {
        return Ok(None);
    };
    let session =
        hosted_sessions::by_token_digest(&state.store, &state.keys.lookup_digest(token)).await?;
    Ok(session.filter(|s| {
        s.status == "open"
            && s.expires_at > state.clock.now()
            && query.order_id.as_deref() == Some(s.fields.order_id.as_str())
    }))
}

/// The processors this session may use, in cascade order: the merchant's, without
/// `disabledPspIds`, only card ones for `creditCardOnly` and payouts, only `m_fixed_pp_id` when
/// given.
pub fn offered(
    all: Vec<PaymentProcessor>,
    session: &HostedSession,
    fixed: Option<i64>,
) -> Vec<PaymentProcessor> {
    let cards_only = session.fields.credit_card_only || session.fields.is_payout;
    all.into_iter()
        .filter(|p| !session.fields.disabled_psp_ids.contains(&p.processor_id))
        .filter(|p| !cards_only || p.kind == ProcessorKind::Card)
        .filter(|p| fixed.is_none_or(|id| p.processor_id == id))
        .collect()
}

/// `GET /cashier`.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<CashierQuery>,
) -> Result<Response, ApiError> {
    let strings = session::strings(&state, &headers);
    let Some(session) = open_session(&state, &query).await? else {
        return expired::page_for(&state, strings);
    };
    let merchant = merchants::by_id(&state.store, session.merchant_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let currency = Currency::parse(&session.fields.currency).map_err(anyhow::Error::from)?;
    let fixed = query
        .m_fixed_pp_id
        .as_deref()
        .and_then(|id| id.parse().ok());
    let processors = offered(
        processors::list(state.store.pool(), merchant.id).await?,
        &session,
        fixed,
    );
    let payer: serde_json::Value =
        serde_json::from_str(&session.fields.billing_details).map_err(anyhow::Error::from)?;
    let token = query.session_token.unwrap_or_default();
    let context = context! {
        t => strings,
        merchant_name => merchant.name,
        order_id => session.fields.order_id,
        description => session.fields.cashier_description,
        currency => currency.code(),
        currency_symbol => currency.symbol(),
        minor_unit_step => step(currency),
        locked_amount => session.fields.locked_amount.map(|a| display_amount(a, currency, i18n::lang(strings))),
        locked_input => session.fields.locked_amount.map(|a| input_amount(a, currency)),
        payout => session.fields.is_payout,
        payer => payer,
        processors => processors.iter().map(|p| context! {
            id => p.processor_id,
            name => p.name,
            card => p.kind == ProcessorKind::Card,
        }).collect::<Vec<_>>(),
        session_token => token,
        csrf_token => csrf::form_token(&state.keys, &token),
    };
    page(
        &state,
        StatusCode::OK,
        "cashier.html",
        context,
        Framing::Embeddable,
    )
}

/// The smallest step of the amount input: `0.01` for EUR, `1` for JPY, `0.001` for BHD.
fn step(currency: Currency) -> String {
    match currency.exponent() {
        0 => "1".into(),
        n => format!("0.{}1", "0".repeat(n as usize - 1)),
    }
}
