//! The cashier when a connected Stripe account takes the session's cards (DESIGN §17):
//! Stripe.js saves the card with the session's one-time SetupIntent and the page posts its id
//! with the amount ([`pay_with_stripe`]); recur reads it from Stripe and pays. When Stripe asks
//! the customer to authenticate the payment, the page lets them with Stripe.js and posts back
//! ([`authenticated`]); the payment is then read from Stripe, as it is whenever the page is
//! loaded while a payment is parked ([`resume`]).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use super::view::{authentication_page, waiting_page};
use super::{answer, form_page, posted, see_page, text, Cashier, CashierQuery, ConfirmForm, Entry};
use crate::http::client_address::ClientAddress;
use crate::pages::failure::PageError;
use crate::pages::form::{decline_message, FormErrors, PageForm};
use crate::pages::render::with_status;
use crate::pages::session;
use crate::services::cashier::payments;
use crate::services::cashier::stripe::{self, Step};
use crate::services::ServiceError;
use crate::state::AppState;

/// The posted Stripe card form: the link's parameters, the amount and the SetupIntent.
#[derive(Debug, Deserialize)]
pub struct StripeCashierForm {
    /// The link's parameters.
    #[serde(flatten)]
    pub link: CashierQuery,
    /// The page's form token.
    #[serde(rename = "csrfToken", default)]
    pub csrf_token: String,
    /// Amount as typed (ignored when locked).
    #[serde(default)]
    pub amount: String,
    /// The SetupIntent Stripe.js confirmed (`seti_…`); read from Stripe, not trusted.
    #[serde(rename = "setupIntent", default)]
    pub setup_intent: String,
    /// The cardholder's name as typed (kept for the form shown again).
    #[serde(default)]
    pub holder: String,
}

/// `POST /cashier/stripe`: pays the amount with the card of the SetupIntent Stripe.js confirmed.
pub async fn pay_with_stripe(
    State(state): State<AppState>,
    client: ClientAddress,
    headers: HeaderMap,
    PageForm(form): PageForm<StripeCashierForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let cashier = match posted(&state, t, &headers, &form.link, &form.csrf_token).await? {
        Ok(cashier) => cashier,
        Err(refused) => return Ok(refused),
    };
    let Some(account) = cashier.stripe.clone() else {
        return Ok(see_page(&cashier));
    };
    if cashier.session.status != "open" || cashier.session.pending.is_some() {
        return Ok(see_page(&cashier));
    }
    let Some(amount) = payments::amount(&cashier.session, cashier.currency, &form.amount) else {
        let mut errors = FormErrors::new();
        errors.insert("amount", text(t, "err_amount"));
        let entry = Entry {
            errors,
            amount: form.amount.clone(),
            holder: form.holder.clone(),
            ..Entry::default()
        };
        return again(&state, t, &cashier, entry, StatusCode::BAD_REQUEST).await;
    };
    let client_ip = Some(client.to_string());
    let paid = stripe::pay(
        &state,
        &cashier.session,
        &account,
        &form.setup_intent,
        amount,
        client_ip.clone(),
    )
    .await;
    let message = match paid {
        Ok(Some(step)) => return step_page(&state, t, &headers, &cashier, amount, step).await,
        // Paid meanwhile (double click, second tab) or a payment in flight.
        Ok(None) => return Ok(see_page(&cashier)),
        Err(ServiceError::Validation(_)) => text(t, "card_not_saved"),
        Err(ServiceError::PaymentDeclined { code, .. }) => decline_message(t, &code),
        Err(other) => return Err(other.into()),
    };
    let entry = Entry {
        message: Some(message),
        amount: form.amount.clone(),
        holder: form.holder.clone(),
        ..Entry::default()
    };
    again(&state, t, &cashier, entry, StatusCode::PAYMENT_REQUIRED).await
}

/// `POST /cashier/stripe/authenticated`: the customer is back from authenticating the payment
/// with Stripe.js (whatever the browser says of it): the payment is read from Stripe.
pub async fn authenticated(
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
    resume(&state, t, &headers, &cashier, Some(client.to_string())).await
}

/// The page of the session's parked Stripe payment, read from Stripe now: where its outcome
/// leads, the authentication step, or a page to load again while Stripe has not decided.
pub(super) async fn resume(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    cashier: &Cashier,
    client_ip: Option<String>,
) -> Result<Response, PageError> {
    let amount = cashier.session.pending.as_ref().map_or(0, |p| p.amount);
    match stripe::resolve(state, &cashier.session, client_ip).await? {
        Some(step) => step_page(state, t, headers, cashier, amount, step).await,
        None => Ok(see_page(cashier)),
    }
}

/// The page a Stripe payment's `step` leads to.
async fn step_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    cashier: &Cashier,
    amount: i64,
    step: Step,
) -> Result<Response, PageError> {
    match step {
        Step::Recorded(transaction) => answer(state, t, headers, cashier, &transaction).await,
        Step::Authenticate(pending) => authentication_page(state, t, cashier, amount, &pending),
        Step::Unanswered => waiting_page(state, t, cashier),
    }
}

/// The form again with `entry`, answered with `status`.
async fn again(
    state: &AppState,
    t: &BTreeMap<String, String>,
    cashier: &Cashier,
    entry: Entry,
    status: StatusCode,
) -> Result<Response, PageError> {
    form_page(state, t, cashier, entry)
        .await
        .map(|r| with_status(r, status))
}
