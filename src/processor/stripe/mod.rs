//! Card payments through Stripe (DESIGN §17): its API client ([`client`]), the objects recur
//! reads ([`objects`]) and the calls on one connected account ([`account`]).

pub mod account;
pub mod client;
pub mod objects;

pub use account::Connection;
pub use client::{Form, Refusal, StripeApi, StripeError, STRIPE_VERSION};
