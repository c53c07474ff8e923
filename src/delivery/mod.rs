//! Delivery of what the engine records (DESIGN §5): webhook events to merchants' endpoints and
//! e-mails to customers, which [`compose`] renders for the outbox, and to merchants
//! ([`notices`]). Both read their outbox, lease
//! each item to one process, and record every outcome, so a crash at any point loses nothing (an
//! item may at worst be sent again, with the same `ActionId` or `Message-ID`).

pub mod compose;
pub mod credits;
pub mod guard;
pub mod mail;
pub mod notices;
pub mod webhooks;
