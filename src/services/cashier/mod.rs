//! The hosted payment page's operations (DESIGN §6): opening a session for an order
//! ([`sessions`]).

pub mod sessions;
