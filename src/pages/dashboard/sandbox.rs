//! The dashboard's sandbox tools (DESIGN §7, §13), for sandbox merchants only (a live merchant
//! gets the 404 page): see and advance the test clock, attach a test card to a customer, pay an
//! Incomplete membership, through the service of `POST /test-clock/advance`,
//! `POST /test-helpers/payment-method` and `POST /test-helpers/membership/{key}/pay`
//! ([`sandbox`]). Every form carries the session's token; a success redirects back with what was
//! done, a refusal shows the page with why.

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::context;
use recur_domain::time::format_utc;
use serde::Deserialize;

use super::fields::beside;
use super::staff::{self, Staff};
use super::{framed_with_status, param};
use crate::http::input::Field;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::{notice, session};
use crate::services::sandbox::{self, parse_instant, TestCard};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::dashboard_sessions;
use crate::store::merchants::Mode;

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

/// The answer to a sandbox operation: back to the page with `done`, or the page with the
/// refusal.
async fn answer(
    state: &AppState,
    staff: &Staff,
    headers: &HeaderMap,
    result: Result<(), ServiceError>,
    done: &str,
) -> Result<Response, PageError> {
    let Err(error) = result else {
        return Ok(Redirect::to(&format!("/dashboard/sandbox?done={done}")).into_response());
    };
    let refusal = match error {
        ServiceError::NotFound => (StatusCode::NOT_FOUND, error.to_string()),
        ServiceError::Conflict(why) => (StatusCode::CONFLICT, why),
        ServiceError::PaymentDeclined { reason, .. } => (
            StatusCode::PAYMENT_REQUIRED,
            format!("payment declined: {reason}"),
        ),
        ServiceError::Validation(errors) => {
            let why: Vec<String> = beside(errors)
                .into_iter()
                .map(|(field, messages)| format!("{field}: {messages}"))
                .collect();
            (StatusCode::BAD_REQUEST, why.join("; "))
        }
        other => return Err(other.into()),
    };
    render(state, staff, headers, None, Some(refusal)).await
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
/// way ([`sandbox::advance_clock_to`]; a time the clock may not move to is a conflict).
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
    let result = sandbox::advance_clock_to(&state, staff.merchant.id, to)
        .await
        .map(|_| ());
    if result.is_ok() {
        let digest = state.keys.lookup_digest(&staff.token);
        dashboard_sessions::follow_clock(&state.store, &digest, state.clock.now()).await?;
    }
    answer(&state, &staff, &headers, result, "clock").await
}

/// `POST /dashboard/sandbox/card`: attaches a test card to a customer
/// ([`sandbox::attach_card`]), as the customer's payment method from then on.
pub async fn attach_card(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<SandboxForm>,
) -> Result<Response, PageError> {
    let staff = match checked(&state, &headers, &form).await? {
        Ok(staff) => staff,
        Err(page) => return Ok(page),
    };
    let card = TestCard {
        customer_key: Field::Present(form.customer_key.trim().to_string()),
        card_number: Field::Present(form.card_number),
    };
    let result = sandbox::attach_card(&state, staff.merchant.id, card)
        .await
        .map(|_| ());
    answer(&state, &staff, &headers, result, "card").await
}

/// `POST /dashboard/sandbox/pay`: pays an Incomplete membership's first invoice with the
/// customer's saved card ([`sandbox::pay_first`]).
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
    let result = sandbox::pay_first(&state, staff.merchant.id, key)
        .await
        .map(|_| ());
    answer(&state, &staff, &headers, result, "paid").await
}
