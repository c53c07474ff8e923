//! The checkout's "Bank account (SEPA Direct Debit)" form (DESIGN §18), offered for euro
//! memberships when the merchant has a SEPA processor: the customer types the account holder
//! and IBAN under the mandate text naming the creditor and its identifier, and ticks the
//! consent. The mandate is recorded with the consent's time, client address and user agent,
//! and the payment becomes a debit: the membership stands as paid, the customer is
//! pre-notified, the invoice is paid on the collection date.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::{context, Value};
use serde::Deserialize;

use super::{answer_payment, form_page, page_payment, payable_post, Checkout, PromoField};
use crate::http::client_address::ClientAddress;
use crate::http::input::Field;
use crate::pages::failure::PageError;
use crate::pages::form::{CardFormState, FormErrors, PageForm};
use crate::pages::render::with_status;
use crate::pages::session;
use crate::services::checkout::{self, SignedMandate};
use crate::services::sepa::mandates::{self, Consent};
use crate::services::ServiceError;
use crate::state::AppState;

/// The mandate form as posted. `Debug` is not derived: the IBAN is the customer's.
#[derive(Default, Deserialize)]
pub struct MandateForm {
    /// The page's form token.
    #[serde(rename = "csrfToken", default)]
    csrf_token: String,
    /// The account holder.
    #[serde(rename = "accountHolder", default)]
    account_holder: String,
    /// The IBAN.
    #[serde(default)]
    iban: String,
    /// Present (`on`) when the consent is ticked.
    #[serde(default)]
    consent: String,
}

/// Longest user agent kept with a consent.
const MAX_USER_AGENT_CHARS: usize = 500;

/// `POST /checkout/{token}/sepa`: records the mandate and pays with it; refused fields show the
/// form again beside them (400), nothing stored.
pub async fn pay_by_mandate(
    State(state): State<AppState>,
    client: ClientAddress,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<MandateForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (checkout, due) = match payable_post(&state, t, &headers, &token, &form.csrf_token).await? {
        Ok(accepted) => accepted,
        Err(page) => return Ok(page),
    };
    let user_agent: String = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .chars()
        .take(MAX_USER_AGENT_CHARS)
        .collect();
    let signed = SignedMandate {
        account_holder: typed(&form.account_holder),
        iban: typed(&form.iban),
        consent: !form.consent.is_empty(),
    };
    let consent = Consent {
        address: client.to_string(),
        user_agent,
    };
    let merchant_id = checkout.page.merchant.id;
    let key = &checkout.membership.membership_key;
    let customer = &checkout.page.customer;
    let paid = checkout::pay_by_mandate(
        &state,
        merchant_id,
        key,
        customer,
        signed,
        consent,
        page_payment(&checkout, &client),
    )
    .await;
    match paid {
        Err(ServiceError::Validation(errors)) => {
            let mut shown = FormErrors::new();
            for path in errors.into_map().into_keys() {
                let (field, text) = match path.as_str() {
                    "iban" => ("iban", "sepa_iban_invalid"),
                    "accountHolder" => ("accountHolder", "sepa_holder_invalid"),
                    _ => ("consent", "sepa_consent_required"),
                };
                shown.insert(field, t.get(text).cloned().unwrap_or_default());
            }
            let form = CardFormState {
                errors: shown,
                holder: form.account_holder,
                ..CardFormState::default()
            };
            form_page(&state, t, &checkout, &due, form, PromoField::default())
                .await
                .map(|r| with_status(r, StatusCode::BAD_REQUEST))
        }
        other => answer_payment(&state, t, &checkout, &due, other.map(|_| ())).await,
    }
}

/// The mandate form of `checkout`, when it is offered: a euro membership of a merchant with a
/// SEPA processor.
pub(super) async fn offer(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
) -> Result<Option<Value>, PageError> {
    if checkout.membership.currency != "EUR" {
        return Ok(None);
    }
    let Some(creditor) = mandates::checkout_creditor(state, checkout.page.merchant.id).await?
    else {
        return Ok(None);
    };
    let name = creditor.creditor.creditor_name;
    let text = t
        .get("sepa_mandate_text")
        .map(|text| text.replace("{creditor}", &name))
        .unwrap_or_default();
    Ok(Some(context! {
        action => format!("/checkout/{}/sepa", checkout.token),
        creditor_name => name,
        creditor_id => creditor.creditor.creditor_id,
        mandate_text => text,
    }))
}

/// A typed field: absent when blank.
fn typed(text: &str) -> Field<String> {
    if text.trim().is_empty() {
        Field::Absent
    } else {
        Field::Present(text.to_string())
    }
}
