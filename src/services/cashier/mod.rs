//! The hosted payment page's operations (DESIGN §6), for the API, the cashier page and the
//! command line alike: opening a session for an order ([`sessions`]), the customer's payment or
//! payout on the cashier page ([`payments`]), and what the merchant or the operator does with an
//! order afterwards: refund, payout, re-sending its notification, a provider-started retry
//! ([`orders`]); card payments through the merchant's connected Stripe account ([`stripe`]). The cascades, the transaction rows and their notifications are the cashier
//! engine's ([`crate::cashier`]), reached only through here.

pub mod orders;
pub mod payments;
pub mod sessions;
pub mod stripe;

pub use crate::cashier::orders::CashierPayment;
pub use crate::cashier::payer::Payer;
