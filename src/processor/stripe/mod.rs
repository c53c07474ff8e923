//! Card payments through Stripe (DESIGN §17): its API client ([`client`]).

pub mod client;

pub use client::{Form, Refusal, StripeApi, StripeError, STRIPE_VERSION};
