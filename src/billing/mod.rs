//! The billing engine: it turns the domain's rules (the membership's
//! [`MembershipState`](recur_domain::membership::MembershipState) and its transitions, the
//! calendar, proration) into stored invoices, charge attempts, status changes and outbox rows.
//! Each operation is a transaction: load, apply the rule, save, record what follows.
//!
//! Money moves in three steps: a transaction writes the invoice and a `Pending` charge attempt
//! and commits; the processor is called with the attempt's idempotency key; a second
//! transaction records the answer and everything that follows from it (status, next date,
//! events, e-mails). A crash between the steps leaves a `Pending` attempt that
//! [`charging::recover_pending`] completes by asking the processor again with the same key, so a
//! period is never charged twice. See `docs/billing.md`.

pub mod actions;
mod attempt_rules;
mod attempts;
mod charge_context;
pub mod charging;
pub mod checkout;
pub mod coupons;
pub mod credit_notes;
pub mod disputes;
pub mod engine;
mod final_invoice;
pub mod followups;
pub mod invoicing;
pub mod lifecycle;
pub mod notify;
pub mod numbering;
pub mod pause;
pub mod proration;
pub mod recurring;
pub mod refunds;
pub mod renewals;
pub mod scope;
pub mod sepa_collection;
pub mod sepa_debits;
pub mod sepa_returns;
pub mod stripe_charging;
pub mod taxation;
pub mod test_clock;
pub mod update;
pub mod usage;

use chrono::{DateTime, Utc};

use crate::platform::Platform;
use crate::processor::stripe::charges::Authentication;
use crate::store::charges;
use crate::store::customers::{self, Customer};
use crate::store::memberships::{self, Membership};
use crate::store::Tx;

/// Why a billing operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum BillingError {
    /// No such membership (or customer) for this merchant.
    #[error("not found")]
    NotFound,
    /// The membership's state does not allow the operation.
    #[error("{0}")]
    Conflict(String),
    /// The membership has a charge attempt in flight: a second one waits until the processor
    /// answered (one attempt in flight per membership, `store::charges`).
    #[error("a payment for this membership is in progress; retry once it has finished")]
    PaymentInProgress,
    /// The processor declined the charge; nothing was changed.
    #[error("payment declined: {reason}")]
    Declined {
        /// Machine-readable code.
        code: String,
        /// Human-readable reason.
        reason: String,
    },
    /// A field of the request is out of bounds for the state it meets (answered as a 400 on
    /// that field).
    #[error("{field}: {message}")]
    Invalid {
        /// The field's JSON name.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The processor did not answer (Stripe out of reach or slow); the attempt stays `Pending`
    /// and is asked again with the same idempotency key.
    #[error("the payment processor did not answer: {0}")]
    Unavailable(String),
    /// The customer, on a hosted page, is to authenticate the payment (3-D Secure) with
    /// Stripe.js; the attempt stays `Pending` until Stripe decides.
    #[error("the customer is to authenticate the payment")]
    AuthenticationRequired(Authentication),
    /// A database failure.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// Anything else unexpected (the processor unreachable, a template failing).
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// The merchant's customer with this key, if any, and [`Platform::merchant_now`]: one statement when the
/// customer exists.
pub async fn customer_and_merchant_now(
    state: &Platform,
    merchant_id: i64,
    customer_key: &str,
) -> Result<(Option<Customer>, DateTime<Utc>), sqlx::Error> {
    match customers::get_with_test_clock(&state.store, merchant_id, customer_key).await? {
        Some((customer, clock)) => Ok((Some(customer), clock.unwrap_or_else(|| state.clock.now()))),
        None => Ok((None, state.merchant_now(merchant_id).await?)),
    }
}

/// The merchant's membership `key` locked in `tx` for change, with no charge attempt in flight
/// (one at a time per membership, `store::charges`).
async fn locked(
    tx: &mut Tx,
    state: &Platform,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, BillingError> {
    let m = memberships::lock(tx, state.store.backend(), merchant_id, key)
        .await?
        .ok_or(BillingError::NotFound)?;
    if charges::in_flight(tx, m.id).await? {
        return Err(BillingError::PaymentInProgress);
    }
    Ok(m)
}
