//! The cashier behind a hosted-page session's `redirectUrl`:
//! `GET /cashier?sessionToken=hp-…&m_orderId=…[&m_fixed_pp_id=N]` shows the order, the amount
//! (editable unless locked), the processors and the card form; `POST /cashier` pays (or, in
//! payout mode, receives) through the card cascade or an alternative method; cards that ask for
//! it go through the identity-confirmation step (`POST /cashier/confirm`) first.
//!
//! Afterwards the customer goes to the session's success or failed URL. Inside an iframe
//! (`Sec-Fetch-Dest: iframe`) the outcome page asks the parent page's `cashier.js` to perform
//! that redirect on the top window instead ([`outcome`]).

mod outcome;
mod stripe;

use std::collections::BTreeMap;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::context;
use recur_domain::money::Currency;
use serde::Deserialize;

use super::brand::Brand;
use super::form::{decline_message, CardForm, FormErrors, PageForm, TokenForm};
use super::format::input_amount;
use super::render::{see_other, with_status};
use super::{csrf, expired, session};
use crate::http::client_address::ClientAddress;
use crate::pages::failure::PageError;
use crate::services::cashier::stripe as stripe_payments;
use crate::services::cashier::{payments, CashierPayment};
use crate::state::AppState;
use crate::store::cashier_sessions::{CashierSession, PendingPayment};
use crate::store::cashier_transactions::{CardFacts, CashierTransaction, TransactionStatus};
use crate::store::merchants::{self, Merchant};
use crate::store::processors::{PaymentProcessor, ProcessorKind};
use crate::store::stripe_accounts::Account;

mod view;

use view::{challenge_page, form_page, Entry};

pub use stripe::{authenticated as stripe_authenticated, pay_with_stripe};

/// The link's parameters: the query string of `GET /cashier`, and hidden fields of its forms.
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

/// The posted cashier form: the link's parameters, the amount, the method and the card.
#[derive(Deserialize)]
pub struct CashierForm {
    /// The link's parameters.
    #[serde(flatten)]
    pub link: CashierQuery,
    /// Amount as typed (ignored when locked).
    #[serde(default)]
    pub amount: String,
    /// The chosen processor.
    #[serde(rename = "processorId", default)]
    pub processor_id: String,
    /// The card fields (unused for alternative methods).
    #[serde(flatten)]
    pub card: CardForm,
}

/// The posted identity-confirmation answer.
#[derive(Debug, Deserialize)]
pub struct ConfirmForm {
    /// The link's parameters.
    #[serde(flatten)]
    pub link: CashierQuery,
    /// Token and button.
    #[serde(flatten)]
    pub form: TokenForm,
}

/// A usable session with what every cashier page needs.
struct Cashier {
    session: CashierSession,
    merchant: Merchant,
    brand: Brand,
    currency: Currency,
    token: String,
    fixed: Option<String>,
    processors: Vec<PaymentProcessor>,
    /// The connected Stripe account that takes the session's cards, if one does.
    stripe: Option<Account>,
}

impl Cashier {
    /// The link's parameters, as (name, value) pairs.
    fn link_pairs(&self) -> Vec<(&'static str, &str)> {
        let mut pairs = vec![
            ("sessionToken", self.token.as_str()),
            ("m_orderId", self.session.fields.order_id.as_str()),
        ];
        if let Some(fixed) = &self.fixed {
            pairs.push(("m_fixed_pp_id", fixed.as_str()));
        }
        pairs
    }

    /// The link's parameters as hidden fields of a form.
    fn link_fields(&self) -> Vec<minijinja::Value> {
        self.link_pairs()
            .into_iter()
            .map(|(name, value)| context! { name => name, value => value })
            .collect()
    }

    /// The page's own address.
    fn link(&self) -> String {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(self.link_pairs())
            .finish();
        format!("/cashier?{query}")
    }
}

async fn load(state: &AppState, link: &CashierQuery) -> Result<Option<Cashier>, PageError> {
    let token = link.session_token.as_deref();
    let Some(session) = payments::session(state, token, link.order_id.as_deref()).await? else {
        return Ok(None);
    };
    let merchant = merchants::by_id(&state.store, session.merchant_id)
        .await?
        .ok_or(PageError::NotFound)?;
    let brand = Brand::load(state, &merchant).await?;
    let currency = Currency::parse(&session.fields.currency).map_err(anyhow::Error::from)?;
    let fixed = link.m_fixed_pp_id.clone().filter(|f| !f.is_empty());
    let fixed_id = fixed.as_deref().map(|id| id.parse().unwrap_or(-1));
    let stripe = stripe_payments::offered(state, &session, fixed_id).await?;
    let processors = payments::offered(state, &session, fixed_id, stripe.is_some()).await?;
    Ok(Some(Cashier {
        session,
        merchant,
        brand,
        currency,
        token: token.unwrap_or_default().to_string(),
        fixed,
        processors,
        stripe,
    }))
}

/// The session a cashier form was posted for, or the page that refuses the post: 410 for a
/// link that is no longer valid, 403 without the form's token or from another site.
async fn posted(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    link: &CashierQuery,
    csrf_token: &str,
) -> Result<Result<Cashier, Response>, PageError> {
    let cashier = load(state, link).await?;
    let token = cashier
        .as_ref()
        .map(|c| c.token.clone())
        .unwrap_or_default();
    csrf::accept_post(state, t, headers, &token, csrf_token, cashier)
}

/// `GET /cashier`: the form, the identity-confirmation step, or the order's outcome.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<CashierQuery>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let Some(cashier) = load(&state, &query).await? else {
        return expired::page_for(&state, t);
    };
    if cashier.session.status != "open" {
        return outcome::page(&state, t, &cashier, None).await;
    }
    match &cashier.session.pending {
        Some(pending) if pending.intent.is_some() => {
            return stripe::resume(&state, t, &headers, &cashier, None).await
        }
        Some(pending) => return challenge_page(&state, t, &cashier, pending),
        None => {}
    }
    form_page(&state, t, &cashier, Entry::default()).await
}

/// `POST /cashier`: checks the amount, the method and the card, then pays.
pub async fn pay(
    State(state): State<AppState>,
    client: ClientAddress,
    headers: HeaderMap,
    PageForm(form): PageForm<CashierForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let cashier = match posted(&state, t, &headers, &form.link, &form.card.csrf_token).await? {
        Ok(cashier) => cashier,
        Err(refused) => return Ok(refused),
    };
    if cashier.session.status != "open" || cashier.session.pending.is_some() {
        return Ok(see_page(&cashier));
    }
    let mut errors = FormErrors::new();
    let amount = payments::amount(&cashier.session, cashier.currency, &form.amount);
    if amount.is_none() {
        errors.insert("amount", text(t, "err_amount"));
    }
    let processor = form
        .processor_id
        .parse::<i64>()
        .ok()
        .and_then(|id| cashier.processors.iter().find(|p| p.processor_id == id))
        .cloned();
    if processor.is_none() {
        errors.insert("processorId", text(t, "err_method"));
    }
    let is_card = processor
        .as_ref()
        .is_some_and(|p| p.kind == ProcessorKind::Card);
    let card = if is_card {
        match form.card.check(state.clock.now(), t) {
            Ok(card) => Some(card),
            Err(card_errors) => {
                errors.extend(card_errors);
                None
            }
        }
    } else {
        None
    };
    let (Some(amount), Some(processor), true) = (amount, processor, errors.is_empty()) else {
        let entry = Entry {
            errors,
            amount: form.amount.clone(),
            processor_id: form.processor_id.parse().ok(),
            holder: form.card.holder.clone(),
            expiry: form.card.expiry.clone(),
            message: None,
        };
        return form_page(&state, t, &cashier, entry)
            .await
            .map(|r| with_status(r, StatusCode::BAD_REQUEST));
    };
    let card = match card {
        Some(checked) => {
            Some(payments::card_facts(&state, cashier.merchant.id, &checked.number).await?)
        }
        None => None,
    };
    if let Some(card) = &card {
        let pending = PendingPayment {
            card: card.clone(),
            amount,
            processor_id: processor.processor_id,
            intent: None,
        };
        if payments::park_for_challenge(&state, &cashier.session, &pending).await? {
            return Ok(see_page(&cashier));
        }
    }
    let client_ip = Some(client.to_string());
    settle(
        &state,
        t,
        &headers,
        &cashier,
        processor.processor_id,
        amount,
        card,
        client_ip,
    )
    .await
}

/// `POST /cashier/confirm`: the answer of the identity-confirmation step.
pub async fn confirm(
    State(state): State<AppState>,
    client: ClientAddress,
    headers: HeaderMap,
    PageForm(form): PageForm<ConfirmForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let cashier = match posted(&state, t, &headers, &form.link, &form.form.csrf_token).await? {
        Ok(cashier) => cashier,
        Err(refused) => return Ok(refused),
    };
    let Some(pending) = payments::take_pending(&state, &cashier.session).await? else {
        return Ok(see_page(&cashier));
    };
    if cashier.session.status != "open" {
        return Ok(see_page(&cashier));
    }
    if form.form.action != "confirm" {
        let entry = Entry {
            message: Some(text(t, "challenge_failed")),
            ..Entry::default()
        };
        return form_page(&state, t, &cashier, entry)
            .await
            .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED));
    }
    let client_ip = Some(client.to_string());
    settle(
        &state,
        t,
        &headers,
        &cashier,
        pending.processor_id,
        pending.amount,
        Some(pending.card),
        client_ip,
    )
    .await
}

/// Runs the payment under the session's claim and answers with where it leads.
#[allow(clippy::too_many_arguments)]
async fn settle(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    cashier: &Cashier,
    processor_id: i64,
    amount: i64,
    card: Option<CardFacts>,
    client_ip: Option<String>,
) -> Result<Response, PageError> {
    let payment = CashierPayment {
        session: &cashier.session,
        offered: &cashier.processors,
        processor_id,
        amount,
        card,
        client_ip,
    };
    let Some(transaction) = payments::pay(state, payment).await? else {
        // Paid meanwhile (double click, second tab) or a payment in flight.
        return Ok(see_page(cashier));
    };
    answer(state, t, headers, cashier, &transaction).await
}

/// Where a recorded payment leads: the session's success or failed URL (through the outcome
/// page inside an iframe), or back to the cashier (the form again with the decline, 402).
async fn answer(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    cashier: &Cashier,
    transaction: &CashierTransaction,
) -> Result<Response, PageError> {
    let framed = headers
        .get("sec-fetch-dest")
        .is_some_and(|v| v.as_bytes() == b"iframe");
    let fields = &cashier.session.fields;
    let success = transaction.status == TransactionStatus::Success;
    let target = if success {
        fields.success_redirect_url.as_deref()
    } else {
        fields.failed_redirect_url.as_deref()
    };
    match (target, framed) {
        (Some(_), true) => outcome::page(state, t, cashier, Some(transaction)).await,
        (Some(url), false) => Ok(see_other(url).unwrap_or_else(|| see_page(cashier))),
        (None, _) if success => Ok(see_page(cashier)),
        (None, _) => {
            let code = transaction.decline_code.clone().unwrap_or_default();
            let entry = Entry {
                message: Some(decline_message(t, &code)),
                amount: input_amount(transaction.amount, cashier.currency),
                processor_id: Some(transaction.processor_id),
                ..Entry::default()
            };
            form_page(state, t, cashier, entry)
                .await
                .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED))
        }
    }
}

/// 303 back to the cashier page (post/redirect/get).
fn see_page(cashier: &Cashier) -> Response {
    Redirect::to(&cashier.link()).into_response()
}

fn text(t: &BTreeMap<String, String>, key: &str) -> String {
    t.get(key).cloned().unwrap_or_default()
}
