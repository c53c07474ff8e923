//! recur's pure business rules.
//!
//! Nothing in this crate performs I/O, reads a clock or spawns tasks: every function takes the
//! current time or any other outside fact as an argument. That keeps the rules unit- and
//! property-testable and puts each rule in one obvious place.

pub mod calendar;
pub mod card;
pub mod card_entry;
pub mod cascade;
pub mod coupon;
pub mod fx;
pub mod invoice;
pub mod membership;
pub mod money;
pub mod mrr;
pub mod network;
pub mod numbering;
pub mod price;
pub mod proration;
pub mod schedule;
pub mod sepa;
pub mod settings;
pub mod signature;
pub mod status;
pub mod stripe_keys;
pub mod stripe_signature;
pub mod tax;
pub mod time;
pub mod usage;
pub mod validation;
