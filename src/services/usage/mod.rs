//! Usage-based billing's operations (DESIGN §19): taking usage events ([`ingest`]) and reading a
//! membership's usage so far ([`view`]). Meters are in [`super::meters`], metered prices in
//! [`super::catalog::metered`]; invoicing the usage is the billing engine's
//! ([`crate::billing::usage`]).

pub mod ingest;
pub mod view;

pub use ingest::{ingest, EventInput, Ingested};
pub use view::{current_usage, MeterUsage, PeriodUsage};
