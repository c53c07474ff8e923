//! The dashboard's sandbox tools (DESIGN §7, §13), for sandbox merchants only (a live merchant
//! gets the 404 page): see and advance the test clock, attach a test card to a customer, pay an
//! Incomplete membership. Each calls the billing function `POST /test-clock/advance`,
//! `POST /test-helpers/payment-method` and `POST /test-helpers/membership/{key}/pay` call.
//! Every form carries the session's token; a success redirects back with what was done.

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::context;
use recur_domain::card::CardNumber;
use recur_domain::time::format_utc;
use serde::Deserialize;

use super::staff::{self, Staff};
use super::{framed_with_status, param};
use crate::api::test_helpers::parse_instant;
use crate::billing::{checkout, lifecycle, test_clock, BillingError};
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::{notice, session};
use crate::state::AppState;
use crate::store::merchants::Mode;
use crate::store::{customers, dashboard_sessions};

/// The sandbox page's forms: the token, and the fields of whichever form was posted.
#[derive(Debug, Deserialize)]
pub struct SandboxForm {
    /// The session's form token.
    #[serde(rename = "csrfToken", default)]
    pub csrf_token: String,
    /// The clock's new time (`to`).
    #[serde(default)]
    pub to: String,
    /// The customer to attach a card to.
    #[serde(rename = "customerKey", default)]
    pub customer_key: String,
    /// The test card's number.
    #[serde(rename = "cardNumber", default)]
    pub card_number: String,
    /// The membership to pay.
    #[serde(rename = "membershipKey", default)]
    pub membership_key: String,
}

/// The staff of a sandbox merchant, or the page to answer instead: the login for no session,
/// the 404 page for a live merchant.
async fn sandbox_staff(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Result<Staff, Response>, PageError> {
    let staff = match staff::require(state, headers).await? {
        Ok(staff) => staff,
        Err(redirect) => return Ok(Err(redirect)),
    };
    if staff.merchant.mode != Mode::Sandbox {
        return notice::not_found(state, session::strings(state, headers)).map(Err);
    }
    Ok(Ok(staff))
}

/// The page, with `error` (and its status) when a form was refused.
async fn render(
    state: &AppState,
    staff: &Staff,
    headers: &HeaderMap,
    done: Option<String>,
    error: Option<(StatusCode, String)>,
) -> Result<Response, PageError> {
    let t = session::strings(state, headers);
    let now = state.merchant_now(staff.merchant.id).await?;
    let status = error.as_ref().map_or(StatusCode::OK, |(status, _)| *status);
    let context = context! {
        now => format_utc(now),
        to_value => now.format("%Y-%m-%dT%H:%M:%S").to_string(),
        done => done.and_then(|d| t.get(&format!("dash_sandbox_done_{d}")).cloned()),
        error => error.map(|(_, message)| message),
    };
    framed_with_status(
        state,
        staff,
        t,
        status,
        "dashboard/sandbox.html",
        "sandbox",
        context,
    )
}

/// `GET /dashboard/sandbox?done=`.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let staff = match sandbox_staff(&state, &headers).await? {
        Ok(staff) => staff,
        Err(page) => return Ok(page),
    };
    let done = param(query.as_deref().unwrap_or_default(), "done")
        .filter(|d| ["clock", "card", "paid"].contains(&d.as_str()));
    render(&state, &staff, &headers, done, None).await
}

/// The answer to a billing call: back to the page with `done`, or the page with the refusal.
async fn answer(
    state: &AppState,
    staff: &Staff,
    headers: &HeaderMap,
    result: Result<(), BillingError>,
    done: &str,
) -> Result<Response, PageError> {
    let Err(error) = result else {
        return Ok(Redirect::to(&format!("/dashboard/sandbox?done={done}")).into_response());
    };
    let status = match &error {
        BillingError::Database(_) | BillingError::Internal(_) => return Err(error.into()),
        BillingError::NotFound => StatusCode::NOT_FOUND,
        BillingError::Conflict(_) | BillingError::PaymentInProgress => StatusCode::CONFLICT,
        BillingError::Declined { .. } => StatusCode::PAYMENT_REQUIRED,
        BillingError::Invalid { .. } => StatusCode::BAD_REQUEST,
    };
    render(
        state,
        staff,
        headers,
        None,
        Some((status, error.to_string())),
    )
    .await
}

/// The staff of a sandbox merchant whose form carries the session's token, or the page to
/// answer instead (403 for a missing or wrong token).
async fn checked(
    state: &AppState,
    headers: &HeaderMap,
    form: &SandboxForm,
) -> Result<Result<Staff, Response>, PageError> {
    let staff = match sandbox_staff(state, headers).await? {
        Ok(staff) => staff,
        Err(page) => return Ok(Err(page)),
    };
    if !staff::form_is_genuine(state, &staff.token, &form.csrf_token, headers) {
        return notice::forbidden(state, session::strings(state, headers)).map(Err);
    }
    Ok(Ok(staff))
}

/// `POST /dashboard/sandbox/clock`: moves the test clock to `to` and runs what falls due on the
/// way ([`test_clock::advance`]).
pub async fn advance_clock(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<SandboxForm>,
) -> Result<Response, PageError> {
    let staff = match checked(&state, &headers, &form).await? {
        Ok(staff) => staff,
        Err(page) => return Ok(page),
    };
    let to = match parse_instant(form.to.trim()) {
        Ok(to) => to,
        Err(why) => {
            let error = (StatusCode::BAD_REQUEST, format!("to: {why}"));
            return render(&state, &staff, &headers, None, Some(error)).await;
        }
    };
    let result = test_clock::advance(&state.platform, &state.webhooks, staff.merchant.id, to)
        .await
        .map(|_| ());
    if result.is_ok() {
        let digest = state.keys.lookup_digest(&staff.token);
        dashboard_sessions::follow_clock(&state.store, &digest, state.clock.now()).await?;
    }
    answer(&state, &staff, &headers, result, "clock").await
}

/// `POST /dashboard/sandbox/card`: attaches a test card to a customer
/// ([`checkout::save_card`]), as the customer's payment method from then on.
pub async fn attach_card(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<SandboxForm>,
) -> Result<Response, PageError> {
    let staff = match checked(&state, &headers, &form).await? {
        Ok(staff) => staff,
        Err(page) => return Ok(page),
    };
    let merchant_id = staff.merchant.id;
    let card = match CardNumber::parse(&form.card_number) {
        Ok(card) => card,
        Err(why) => {
            let error = (StatusCode::BAD_REQUEST, format!("cardNumber: {why}"));
            return render(&state, &staff, &headers, None, Some(error)).await;
        }
    };
    let key = form.customer_key.trim();
    let Some(customer) = customers::get(&state.store, merchant_id, key).await? else {
        let error = (
            StatusCode::NOT_FOUND,
            format!("customerKey: {}", BillingError::NotFound),
        );
        return render(&state, &staff, &headers, None, Some(error)).await;
    };
    let now = state.merchant_now(merchant_id).await?;
    let result = checkout::save_card(&state, merchant_id, customer.id, &card, true, now)
        .await
        .map(|_| ());
    answer(&state, &staff, &headers, result, "card").await
}

/// `POST /dashboard/sandbox/pay`: pays an Incomplete membership's first invoice with the
/// customer's saved card ([`lifecycle::pay_first`]).
pub async fn pay(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<SandboxForm>,
) -> Result<Response, PageError> {
    let staff = match checked(&state, &headers, &form).await? {
        Ok(staff) => staff,
        Err(page) => return Ok(page),
    };
    let key = form.membership_key.trim();
    let result = lifecycle::pay_first(&state, staff.merchant.id, key)
        .await
        .map(|_| ());
    answer(&state, &staff, &headers, result, "paid").await
}
