//! Hosted-payment-page orders (the cashier, DESIGN §6): payments and payouts with card
//! cascading, alternative methods, provider-started retries, the merchant's refunds and payouts,
//! and the `TRANSACTION_DATA_UPDATE` notifications about all of them.

pub mod cascade;
pub mod notification;
pub mod orders;
pub mod payer;
