//! Sandbox-only operations (DESIGN §7), for the API (`/test-helpers/…`, `/test-clock…`), the
//! dashboard's sandbox page and the command line alike: attach a test card without a browser,
//! pay a first invoice with it, and read or move the merchant's test clock. A live merchant is
//! refused ([`ServiceError::Forbidden`]).

use chrono::{DateTime, NaiveDateTime, Utc};
use recur_domain::card::CardNumber;
use recur_domain::schedule::test_clock_refusal;
use recur_domain::time::format_utc;
use recur_domain::validation::FieldErrors;

use super::ServiceError;
use crate::billing::{checkout, lifecycle, test_clock};
use crate::http::input::{required_text, Field};
use crate::state::AppState;
use crate::store::customers;
use crate::store::memberships::Membership;
use crate::store::merchants::{self, Mode};
use crate::store::payment_methods::PaymentMethod;

/// Refuses live merchants.
async fn require_sandbox(state: &AppState, merchant_id: i64) -> Result<(), ServiceError> {
    let merchant = merchants::by_id(&state.store, merchant_id)
        .await?
        .ok_or(ServiceError::NotFound)?;
    match merchant.mode {
        Mode::Sandbox => Ok(()),
        Mode::Live => Err(ServiceError::Forbidden(
            "Test helpers and test clocks are only available to sandbox merchants.",
        )),
    }
}

/// A test card to attach, as given.
#[derive(Debug, Default)]
pub struct TestCard {
    /// The customer (`cstmr_…`).
    pub customer_key: Field<String>,
    /// A test card number (DESIGN §7), e.g. `4242 4242 4242 4242`: 12 to 19 digits, spaces and
    /// hyphens ignored.
    pub card_number: Field<String>,
}

/// Attaches a test card to the merchant's customer; it becomes the payment method for renewals
/// and proration. Every failing field is listed (an unknown customer under `customerKey`).
pub async fn attach_card(
    state: &AppState,
    merchant_id: i64,
    card: TestCard,
) -> Result<PaymentMethod, ServiceError> {
    require_sandbox(state, merchant_id).await?;
    let mut errors = FieldErrors::new();
    let customer_key = required_text(card.customer_key, "customerKey", &mut errors, |k| {
        Ok(k.to_string())
    });
    let card = card
        .card_number
        .required("cardNumber", &mut errors)
        .and_then(|n| errors.check("cardNumber", CardNumber::parse(&n)));
    let customer = match customer_key {
        Some(key) => {
            let found = customers::get(&state.store, merchant_id, &key).await?;
            if found.is_none() {
                errors.add("customerKey", "does not match a customer of this merchant");
            }
            found
        }
        None => None,
    };
    let (Some(customer), Some(card)) = (customer, card) else {
        return Err(ServiceError::Validation(errors));
    };
    let now = state.merchant_now(merchant_id).await?;
    let method = checkout::save_card(state, merchant_id, customer.id, &card, true, now).await?;
    Ok(method)
}

/// Pays the Incomplete membership `key`'s first invoice with the customer's saved card, as
/// checkout would: the membership, Active. A decline leaves it Incomplete.
pub async fn pay_first(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, ServiceError> {
    require_sandbox(state, merchant_id).await?;
    Ok(lifecycle::pay_first(state, merchant_id, key).await?)
}

/// A UTC instant: RFC 3339 (`2027-01-31T10:00:00Z`) or `YYYY-MM-DDTHH:mm:ss` read as UTC.
pub fn parse_instant(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|d| d.with_timezone(&Utc))
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").map(|d| d.and_utc()))
        .map_err(|_| "must be a UTC ISO-8601 date and time".to_string())
}

/// The merchant's test-clock time (the real time until it first advances).
pub async fn clock(state: &AppState, merchant_id: i64) -> Result<DateTime<Utc>, ServiceError> {
    require_sandbox(state, merchant_id).await?;
    Ok(state.merchant_now(merchant_id).await?)
}

/// Moves the merchant's test clock forward to `to` (a UTC ISO-8601 time, [`parse_instant`]) and
/// runs every renewal, retry and expiry that falls due on the way, in time order: the clock's new
/// time. A time that is none, before the clock's, or more than 1827 days after it is refused
/// under `to`.
pub async fn advance_clock(
    state: &AppState,
    merchant_id: i64,
    to: Field<String>,
) -> Result<DateTime<Utc>, ServiceError> {
    require_sandbox(state, merchant_id).await?;
    let now = state.merchant_now(merchant_id).await?;
    let mut errors = FieldErrors::new();
    let to = to
        .required("to", &mut errors)
        .and_then(|text| errors.check("to", parse_instant(&text)))
        .and_then(|to| {
            errors.check(
                "to",
                match test_clock_refusal(now, to) {
                    None => Ok(to),
                    Some(why) => Err(format!("{why} ({})", format_utc(now))),
                },
            )
        });
    let Some(to) = to else {
        return Err(ServiceError::Validation(errors));
    };
    test_clock::advance(&state.platform, &state.webhooks, merchant_id, to).await?;
    Ok(to)
}

/// Moves the merchant's test clock to the instant `to` as [`advance_clock`] does: how many
/// billing actions ran. A time the clock may not move to is a conflict.
pub async fn advance_clock_to(
    state: &AppState,
    merchant_id: i64,
    to: DateTime<Utc>,
) -> Result<u64, ServiceError> {
    require_sandbox(state, merchant_id).await?;
    Ok(test_clock::advance(&state.platform, &state.webhooks, merchant_id, to).await?)
}
