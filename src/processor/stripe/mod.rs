//! Card payments through Stripe (DESIGN §17): its API client ([`client`]), the objects recur
//! reads ([`objects`]), the calls on one connected account ([`account`]) and what a
//! PaymentIntent's answer means for a charge attempt ([`charges`]).

pub mod account;
pub mod charges;
pub mod client;
pub mod objects;

pub use account::{CashierIntent, ChargeIntent, Connection};
pub use client::{Form, Refusal, StripeApi, StripeError, STRIPE_VERSION};
