//! Hosted-payment-page orders (the cashier, DESIGN §6): payments and payouts with card
//! cascading, alternative methods, provider-started retries, the merchant's refunds and payouts,
//! and the `TRANSACTION_DATA_UPDATE` notifications about all of them; card payments through a
//! connected Stripe account ([`stripe`]).

pub mod cascade;
pub mod orders;
pub mod payer;
mod record;
pub mod stripe;

/// Why a cashier operation did not happen. The messages read as the API's, so that the command
/// line says what the API would.
#[derive(Debug, thiserror::Error)]
pub enum CashierError {
    /// No such order, session or processor for this merchant.
    #[error("not found")]
    NotFound,
    /// The order's state does not allow the operation.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A field of the request is out of bounds for the order it meets (answered as a 400 on
    /// that field).
    #[error("{field}: {message}")]
    Invalid {
        /// The field's JSON name.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The processor did not answer, or has not decided: nothing was recorded; ask again.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// A database failure.
    #[error("internal error: {0}")]
    Database(#[from] sqlx::Error),
    /// Anything else unexpected (an unreadable session, a currency no longer accepted).
    #[error("internal error: {0}")]
    Internal(#[from] anyhow::Error),
}

impl CashierError {
    /// A failure on one field.
    pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        CashierError::Invalid {
            field,
            message: message.into(),
        }
    }
}
