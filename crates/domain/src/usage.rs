//! Usage-based billing: meters, the totals of their events and metered prices (DESIGN §19).
//!
//! A *meter* ([`meter`]) says what is measured of the usage events a merchant reports under its
//! `code`: how many there were (`count`), or the `sum`, `max`, `latest` value or number of
//! distinct values (`unique_count`) of one event `property` ([`value`] reads those values).
//!
//! Events are aggregated as they arrive into per-period [`totals::Totals`], one per meter and
//! subscription period: recording an event only adds it to its period's totals, and an invoice
//! reads the totals, never the events. Totals of parts of a period merge into the totals of the
//! whole, whichever way the events were split.
//!
//! A metered price ([`pricing`]) turns a period's quantity into the amount of its invoice line:
//! per unit, per started package, or by tiers (graduated or volume). The amount is computed
//! exactly and rounded half-up to the currency's minor unit once, at the end, never per event
//! or per tier. A membership carries the metered prices it was given as [`MeteredTerm`]s, which
//! make its usage lines.

pub mod meter;
pub mod pricing;
pub mod term;
pub mod totals;
pub mod value;

mod text;

pub use term::{MeteredTerm, PricedUsage};
