//! The posted forms of the hosted pages: an extractor that refuses what no browser sends, and the
//! card fields shared by checkout, portal and cashier.

use std::collections::BTreeMap;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::Form;
use chrono::{DateTime, Datelike, Utc};
use recur_domain::card_entry::{CardEntry, CheckedCard};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use axum::response::Response;

use crate::http::{nul_text, problem};
use crate::store::customers::NewCustomer;

/// `application/x-www-form-urlencoded` body. A body no browser's form sends (another content type,
/// malformed, a field holding U+0000 ([`nul_text`])) is refused at the edge, before the page's
/// handler, with a 400 problem document, as the edge refuses U+0000 in any address.
pub struct PageForm<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for PageForm<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        let bytes = Bytes::from_request(Request::from_parts(parts.clone(), body), state)
            .await
            .map_err(|rejection| problem::malformed_body(rejection.body_text()))?;
        nul_text::check_form(&String::from_utf8_lossy(&bytes)).map_err(problem::validation)?;
        Form::<T>::from_request(Request::from_parts(parts, Body::from(bytes)), state)
            .await
            .map(|Form(value)| PageForm(value))
            .map_err(|rejection| problem::malformed_body(rejection.body_text()))
    }
}

/// A form that only carries its CSRF token (confirmations).
#[derive(Debug, Deserialize)]
pub struct TokenForm {
    /// The page's form token.
    #[serde(rename = "csrfToken", default)]
    pub csrf_token: String,
    /// Which button was pressed, for forms with several.
    #[serde(default)]
    pub action: String,
}

/// The card fields as posted. The number and security code are never echoed back into a page,
/// stored or logged (`Debug` leaves them out).
#[derive(Deserialize)]
pub struct CardForm {
    /// The page's form token.
    #[serde(rename = "csrfToken", default)]
    pub csrf_token: String,
    /// Card number as typed.
    #[serde(rename = "cardNumber", default)]
    pub card_number: String,
    /// `MM/YY`.
    #[serde(default)]
    pub expiry: String,
    /// Security code.
    #[serde(default)]
    pub cvc: String,
    /// Name on the card.
    #[serde(default)]
    pub holder: String,
}

impl std::fmt::Debug for CardForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CardForm")
            .field("expiry", &self.expiry)
            .field("holder", &self.holder)
            .finish_non_exhaustive()
    }
}

/// Field → message shown beside it, in the page's language.
pub type FormErrors = BTreeMap<&'static str, String>;

impl CardForm {
    /// Checks every field against the current month; failures come back as messages from
    /// `strings`, keyed by field.
    pub fn check(
        &self,
        now: DateTime<Utc>,
        strings: &BTreeMap<String, String>,
    ) -> Result<CheckedCard, FormErrors> {
        CardEntry {
            number: &self.card_number,
            expiry: &self.expiry,
            cvc: &self.cvc,
            holder: &self.holder,
        }
        .check(now.year(), now.month())
        .map_err(|errors| {
            errors
                .into_iter()
                .map(|(field, message)| {
                    let key = match field {
                        "cardNumber" => "err_card_number",
                        "expiry" if message.contains("expired") => "err_card_expired",
                        "expiry" => "err_expiry",
                        "cvc" => "err_cvc",
                        _ => "err_holder",
                    };
                    (field, strings.get(key).cloned().unwrap_or_default())
                })
                .collect()
        })
    }
}

/// What a card form shows besides its fields: field errors, a message (decline, failed identity
/// check), and the values worth keeping (never the number or the security code).
#[derive(Debug, Default)]
pub struct CardFormState {
    /// Field → message.
    pub errors: FormErrors,
    /// A message above the form.
    pub message: Option<String>,
    /// Name on the card as typed.
    pub holder: String,
    /// Expiry as typed.
    pub expiry: String,
}

impl CardFormState {
    /// The form shown again with `errors`, keeping the name and expiry.
    pub fn rejected(form: &CardForm, errors: FormErrors) -> Self {
        Self {
            errors,
            holder: form.holder.clone(),
            expiry: form.expiry.clone(),
            message: None,
        }
    }

    /// An empty form with `message` above it.
    pub fn with_message(message: Option<String>) -> Self {
        Self {
            message,
            ..Self::default()
        }
    }

    /// The name to prefill: as typed, else the customer's.
    pub fn holder_or(&self, customer: &NewCustomer) -> String {
        if self.holder.is_empty() {
            format!("{} {}", customer.first_name, customer.last_name)
        } else {
            self.holder.clone()
        }
    }
}

/// The message for a processor's decline code, in the page's language.
pub fn decline_message(strings: &BTreeMap<String, String>, code: &str) -> String {
    let key = match code {
        "insufficient_funds" => "decline_insufficient_funds",
        _ => "decline_generic",
    };
    strings.get(key).cloned().unwrap_or_default()
}
