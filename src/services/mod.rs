//! The service layer: every business operation, one function each, below both front ends. An
//! operation takes typed input (never a request body), asks the domain's rules, writes in one
//! transaction and answers a [`ServiceError`] when it does not happen. The API renders that error
//! as a problem document, the hosted pages as an HTML page with the messages beside the fields;
//! neither front end imports the other.
//!
//! Where a new operation goes: into the module named after what it serves (a membership's in
//! [`memberships`], the catalog's in [`catalog`], …), with its pure rules in `crates/domain`.

pub mod cashier;
pub mod catalog;
pub mod checkout;
pub mod coupons;
pub mod customers;
pub mod endpoints;
pub mod events;
pub mod fields;
pub mod invoices;
pub mod keys;
pub mod lists;
pub mod memberships;
pub mod meters;
pub mod payment_methods;
pub mod processors;
pub mod sandbox;
pub mod sepa;
pub mod sessions;
pub mod settings;
pub mod stripe_cards;
pub mod stripe_webhooks;
pub mod tax_rates;
pub mod usage;

use recur_domain::validation::FieldErrors;

use crate::billing::BillingError;
use crate::cashier::CashierError;
use crate::processor::stripe::charges::Authentication;

/// Why an operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// One or more fields of the input break a rule; every failing field is listed (400).
    #[error("validation failed")]
    Validation(FieldErrors),
    /// No such record for this merchant (404: another merchant's record is unknown too).
    #[error("not found")]
    NotFound,
    /// The operation is not available to this merchant (a sandbox helper for a live one, 403).
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    /// The record's state does not allow the operation (409).
    #[error("conflict: {0}")]
    Conflict(String),
    /// A payment for the record is in flight; a second waits until the processor answered
    /// (409).
    #[error("a payment for this membership is in progress; retry once it has finished")]
    PaymentInProgress,
    /// The input conflicts with a stored record, named by the fields at fault (409).
    #[error("conflict with a stored record")]
    FieldConflict(FieldErrors),
    /// The processor declined the payment the operation needed; nothing changed (402).
    #[error("payment declined: {reason}")]
    PaymentDeclined {
        /// Machine-readable decline code.
        code: String,
        /// Human-readable reason.
        reason: String,
    },
    /// An outside system the operation needs (Stripe) did not answer; nothing changed (503).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The customer, on a hosted page, is to authenticate the payment (3-D Secure) with
    /// Stripe.js; the attempt stays `Pending`.
    #[error("the customer is to authenticate the payment")]
    AuthenticationRequired(Authentication),
    /// Anything unexpected (500): logged by the front end, never shown.
    #[error("internal error: {0}")]
    Internal(#[from] anyhow::Error),
}

impl ServiceError {
    /// A 400 naming one failing field.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        let mut errors = FieldErrors::new();
        errors.add(field, message);
        ServiceError::Validation(errors)
    }
}

impl From<FieldErrors> for ServiceError {
    fn from(errors: FieldErrors) -> Self {
        ServiceError::Validation(errors)
    }
}

impl From<sqlx::Error> for ServiceError {
    fn from(error: sqlx::Error) -> Self {
        ServiceError::Internal(error.into())
    }
}

impl From<BillingError> for ServiceError {
    fn from(error: BillingError) -> Self {
        match error {
            BillingError::NotFound => ServiceError::NotFound,
            BillingError::Conflict(why) => ServiceError::Conflict(why),
            BillingError::PaymentInProgress => ServiceError::PaymentInProgress,
            BillingError::Declined { code, reason } => {
                ServiceError::PaymentDeclined { code, reason }
            }
            BillingError::Invalid { field, message } => ServiceError::invalid(field, message),
            BillingError::Unavailable(why) => ServiceError::Unavailable(format!(
                "The payment processor did not answer ({why}); the payment is asked again shortly."
            )),
            BillingError::AuthenticationRequired(authentication) => {
                ServiceError::AuthenticationRequired(authentication)
            }
            BillingError::Database(e) => ServiceError::Internal(e.into()),
            BillingError::Internal(e) => ServiceError::Internal(e),
        }
    }
}

impl From<CashierError> for ServiceError {
    fn from(error: CashierError) -> Self {
        match error {
            CashierError::NotFound => ServiceError::NotFound,
            CashierError::Conflict(why) => ServiceError::Conflict(why),
            CashierError::Invalid { field, message } => ServiceError::invalid(field, message),
            CashierError::Unavailable(why) => ServiceError::Unavailable(why),
            CashierError::Database(e) => ServiceError::Internal(e.into()),
            CashierError::Internal(e) => ServiceError::Internal(e),
        }
    }
}
