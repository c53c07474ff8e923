//! What a staff member does from a membership's page, each as the JSON API does it and through
//! the same services: cancel the membership (`POST /membership/cancel/{key}`,
//! [`memberships::cancel`]), refund one of its invoices with an optional amount
//! (`POST /invoice/{key}/refund`, [`invoices::refund`]) and re-send one of its webhook events
//! with its endpoint deliveries (`POST /events/{actionId}/resend`, [`events::resend`]). Each is
//! a confirmation page (`GET`) whose form posts the action with the session's form token; the
//! answer is a page that tells the outcome: done, declined by the processor, or refused with the
//! reason (409), never a 500 for the request.

use std::collections::BTreeMap;
use std::str::FromStr;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::Value;
use recur_domain::money::{display_amount, Currency};
use rust_decimal::Decimal;
use serde::Deserialize;

use super::confirm::{self, Confirm, Field, Outcome};
use super::fields::beside;
use super::staff;
use crate::http::input::Field as InputField;
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::render::with_status;
use crate::pages::{notice, session};
use crate::services::invoices::{self, InvoiceRefund};
use crate::services::{events, memberships, ServiceError};
use crate::state::AppState;
use crate::store::events as stored_events;
use crate::store::invoices::{self as stored_invoices, Invoice};
use crate::store::memberships::{self as stored_memberships, Membership};
use crate::store::refunds::RefundStatus;

/// An action's form as posted: its token and, for a refund, the amount (blank: all that is
/// left), for a pause the resume date (blank: until resumed).
#[derive(Debug, Deserialize)]
pub struct ActionForm {
    /// The session's form token.
    #[serde(rename = "csrfToken", default)]
    pub(super) csrf_token: String,
    /// The refund's amount in the invoice's currency, as typed.
    #[serde(default)]
    pub(super) amount: String,
    /// The pause's resume date, UTC, as typed.
    #[serde(rename = "resumeAt", default)]
    pub(super) resume_at: String,
}

/// The membership page of `key`.
pub(super) fn membership_url(key: &str) -> String {
    format!("/dashboard/memberships/{key}")
}

/// The confirmation page of an action on membership `key`.
pub(super) fn confirm_page(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    key: &str,
    confirm: Confirm<'_>,
) -> Result<Response, PageError> {
    confirm::page(state, staff, t, &membership_url(key), confirm)
}

/// The page that tells an action's `outcome` (`done`, `declined` or `refused`) with `text`,
/// answered with `status`.
pub(super) fn outcome_page(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    key: &str,
    status: StatusCode,
    outcome: &str,
    text: Value,
) -> Result<Response, PageError> {
    let back = membership_url(key);
    let told = Outcome {
        nav: "customers",
        back: &back,
        back_label: "dash_back_to_membership",
        outcome,
        text,
        secret: None,
    };
    confirm::outcome(state, staff, t, status, told)
}

/// The outcome page of an action that failed on the membership's state or at the processor; a
/// failure of the service itself stays an error.
pub(super) fn refused(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    key: &str,
    error: impl Into<ServiceError>,
) -> Result<Response, PageError> {
    let error = error.into();
    if matches!(error, ServiceError::PaymentInProgress) {
        let why = error.to_string();
        let conflict = StatusCode::CONFLICT;
        return outcome_page(state, staff, t, key, conflict, "refused", why.into());
    }
    match error {
        ServiceError::NotFound => notice::not_found(state, t),
        ServiceError::Conflict(why) => outcome_page(
            state,
            staff,
            t,
            key,
            StatusCode::CONFLICT,
            "refused",
            why.into(),
        ),
        ServiceError::PaymentDeclined { reason, .. } => outcome_page(
            state,
            staff,
            t,
            key,
            StatusCode::PAYMENT_REQUIRED,
            "declined",
            reason.into(),
        ),
        ServiceError::Validation(errors) => {
            let why: Vec<String> = beside(errors)
                .into_iter()
                .map(|(field, message)| format!("{field}: {message}"))
                .collect();
            outcome_page(
                state,
                staff,
                t,
                key,
                StatusCode::BAD_REQUEST,
                "refused",
                why.join("; ").into(),
            )
        }
        other => Err(other.into()),
    }
}

/// The session and strings of a dashboard request, and the merchant's membership `key`: `Err`
/// holds the page to answer instead (the login redirect, or the 404 page).
pub(super) async fn membership_of(
    state: &AppState,
    headers: &HeaderMap,
    key: &str,
) -> Result<Result<(staff::Staff, Membership), Response>, PageError> {
    let staff = match staff::require(state, headers).await? {
        Ok(staff) => staff,
        Err(redirect) => return Ok(Err(redirect)),
    };
    let t = session::strings(state, headers);
    match stored_memberships::get(state.store.pool(), staff.merchant.id, key).await? {
        Some(m) => Ok(Ok((staff, m))),
        None => notice::not_found(state, t).map(Err),
    }
}

/// The signed-in staff member and the membership `key` names for a form posted to one of its
/// actions, or the page to answer instead: the sign-in redirect, the 404, or the 403 when the form
/// does not carry the session's token or comes from another site.
pub(super) async fn posted_to_membership(
    state: &AppState,
    headers: &HeaderMap,
    key: &str,
    form: &ActionForm,
) -> Result<Result<(staff::Staff, Membership), Response>, PageError> {
    let (staff, m) = match membership_of(state, headers, key).await? {
        Ok(found) => found,
        Err(page) => return Ok(Err(page)),
    };
    let t = session::strings(state, headers);
    Ok(match forged(state, &staff, t, form, headers)? {
        Some(page) => Err(page),
        None => Ok((staff, m)),
    })
}

/// The 403 page unless the form carries the session's token and comes from this site.
pub(super) fn forged(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    form: &ActionForm,
    headers: &HeaderMap,
) -> Result<Option<Response>, PageError> {
    if staff::form_is_genuine(state, &staff.token, &form.csrf_token, headers) {
        Ok(None)
    } else {
        notice::forbidden(state, t).map(Some)
    }
}

/// `GET /dashboard/memberships/{key}/cancel`: asks to confirm the cancellation.
pub async fn confirm_cancel(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
) -> Result<Response, PageError> {
    confirm_action(&state, &headers, &key, "cancel", "cancel").await
}

/// The confirmation page of the action `name` (strings `dash_{name}_title`, `_text` and
/// `_button`) on the merchant's membership `key`, whose form posts to the membership's `path`.
pub(super) async fn confirm_action(
    state: &AppState,
    headers: &HeaderMap,
    key: &str,
    name: &str,
    path: &str,
) -> Result<Response, PageError> {
    let (staff, _) = match membership_of(state, headers, key).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(state, headers);
    let (title, text, button) = (
        format!("dash_{name}_title"),
        format!("dash_{name}_text"),
        format!("dash_{name}_button"),
    );
    let confirm = Confirm {
        nav: "customers",
        title: &title,
        text: &text,
        button: &button,
        action: format!("{}/{path}", membership_url(key)),
        field: None,
    };
    confirm_page(state, &staff, t, key, confirm)
}

/// `POST /dashboard/memberships/{key}/cancel`: cancels the membership now.
pub async fn cancel(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    PageForm(form): PageForm<ActionForm>,
) -> Result<Response, PageError> {
    let (staff, _) = match posted_to_membership(&state, &headers, &key, &form).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    match memberships::cancel(&state, staff.merchant.id, &key).await {
        Ok(_) => {
            let text = t.get("dash_canceled").cloned().unwrap_or_default();
            outcome_page(&state, &staff, t, &key, StatusCode::OK, "done", text.into())
        }
        Err(error) => refused(&state, &staff, t, &key, error),
    }
}

/// The membership's invoice `invoice_key`, with the membership's page: `Err` holds the page to
/// answer instead.
async fn invoice_of(
    state: &AppState,
    headers: &HeaderMap,
    key: &str,
    invoice_key: &str,
) -> Result<Result<(staff::Staff, Invoice), Response>, PageError> {
    let (staff, m) = match membership_of(state, headers, key).await? {
        Ok(found) => found,
        Err(page) => return Ok(Err(page)),
    };
    let invoice =
        stored_invoices::by_key(state.store.pool(), staff.merchant.id, invoice_key).await?;
    match invoice.filter(|i| i.membership_id == m.id) {
        Some(invoice) => Ok(Ok((staff, invoice))),
        None => notice::not_found(state, session::strings(state, headers)).map(Err),
    }
}

/// The refund's confirmation page for `invoice`, with `typed` in its amount field and `error`
/// beside it.
fn refund_form(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    key: &str,
    invoice: &Invoice,
    typed: String,
    error: Option<String>,
) -> Result<Response, PageError> {
    let lang = i18n::lang(t);
    let left = Currency::parse(&invoice.currency)
        .map(|c| display_amount(invoice.amount_paid - invoice.amount_refunded, c, lang))
        .map_err(anyhow::Error::from)?;
    let confirm = Confirm {
        nav: "customers",
        title: "dash_refund_title",
        text: "dash_refund_text",
        button: "dash_refund_button",
        action: format!(
            "{}/invoices/{}/refund",
            membership_url(key),
            invoice.invoice_key
        ),
        field: Some(Field::Amount { left, typed, error }),
    };
    confirm_page(state, staff, t, key, confirm)
}

/// `GET /dashboard/memberships/{key}/invoices/{invoiceKey}/refund`: the refund's form, its
/// amount blank for everything that is left.
pub async fn confirm_refund(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((key, invoice_key)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let (staff, invoice) = match invoice_of(&state, &headers, &key, &invoice_key).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    refund_form(&state, &staff, t, &key, &invoice, String::new(), None)
}

/// `POST /dashboard/memberships/{key}/invoices/{invoiceKey}/refund`: refunds the amount typed
/// (all that is left when blank). An amount the invoice cannot take shows the form again with
/// the reason beside the field (400).
pub async fn refund(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((key, invoice_key)): Path<(String, String)>,
    PageForm(form): PageForm<ActionForm>,
) -> Result<Response, PageError> {
    let (staff, invoice) = match invoice_of(&state, &headers, &key, &invoice_key).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    if let Some(page) = forged(&state, &staff, t, &form, &headers)? {
        return Ok(page);
    }
    let typed = form.amount.trim().to_string();
    let amount = match typed.as_str() {
        "" => InputField::Absent,
        text => Decimal::from_str(text).map_or_else(
            |_| InputField::Invalid("must be a number".to_string()),
            InputField::Present,
        ),
    };
    let ask = InvoiceRefund {
        amount,
        reason: InputField::Absent,
    };
    let refunded = invoices::refund(&state, staff.merchant.id, &invoice_key, ask).await;
    match refunded.map(|recorded| recorded.refund) {
        Ok(refund) if refund.status == RefundStatus::Failed => {
            let why = refund.decline.map(|(_, reason)| reason).unwrap_or_default();
            outcome_page(
                &state,
                &staff,
                t,
                &key,
                StatusCode::PAYMENT_REQUIRED,
                "declined",
                why.into(),
            )
        }
        Ok(refund) => {
            let amount = Currency::parse(&refund.currency)
                .map(|c| display_amount(refund.amount, c, i18n::lang(t)))
                .map_err(anyhow::Error::from)?;
            let text = t
                .get("dash_refunded_amount")
                .map(|s| s.replace("{amount}", &amount))
                .unwrap_or_default();
            outcome_page(&state, &staff, t, &key, StatusCode::OK, "done", text.into())
        }
        Err(ServiceError::Validation(errors)) => {
            let message = beside(errors).into_values().next();
            let page = refund_form(&state, &staff, t, &key, &invoice, typed, message)?;
            Ok(with_status(page, StatusCode::BAD_REQUEST))
        }
        Err(error) => refused(&state, &staff, t, &key, error),
    }
}

/// `GET /dashboard/memberships/{key}/events/{actionId}/resend`: asks to confirm the re-send.
pub async fn confirm_resend(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((key, action_id)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let (staff, _) = match membership_of(&state, &headers, &key).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    let pool = state.store.pool();
    if stored_events::by_action_id(pool, staff.merchant.id, &action_id)
        .await?
        .is_none()
    {
        return notice::not_found(&state, t);
    }
    let confirm = Confirm {
        nav: "customers",
        title: "dash_resend_title",
        text: "dash_resend_text",
        button: "dash_resend_button",
        action: format!("{}/events/{action_id}/resend", membership_url(&key)),
        field: None,
    };
    confirm_page(&state, &staff, t, &key, confirm)
}

/// `POST /dashboard/memberships/{key}/events/{actionId}/resend`: a new round of attempts at the
/// event's `webhookUrl` and at the endpoints that received it.
pub async fn resend(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((key, action_id)): Path<(String, String)>,
    PageForm(form): PageForm<ActionForm>,
) -> Result<Response, PageError> {
    let (staff, _) = match posted_to_membership(&state, &headers, &key, &form).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    match events::resend(&state, staff.merchant.id, &action_id).await {
        Ok(_) => {
            let text = t.get("dash_resent").cloned().unwrap_or_default();
            outcome_page(&state, &staff, t, &key, StatusCode::OK, "done", text.into())
        }
        Err(ServiceError::NotFound) => notice::not_found(&state, t),
        Err(other) => Err(other.into()),
    }
}
