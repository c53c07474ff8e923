//! Usage-based billing's operations (DESIGN §19): taking usage events ([`ingest`]) and reading a
//! membership's usage so far and its last periods' for the portal and dashboard ([`view`]) and
//! the invoice its next renewal would make ([`upcoming`]). Meters are in [`super::meters`],
//! metered prices in [`super::catalog::metered`]; invoicing the usage is the billing engine's
//! ([`crate::billing::usage`]).

pub mod ingest;
pub mod upcoming;
pub mod view;

pub use ingest::{ingest, EventInput, Ingested};
pub use upcoming::upcoming_invoice;
pub use view::{
    current_usage, usage_summary, MeterUsage, PeriodQuantity, PeriodUsage, UsageSummary,
    HISTORY_PERIODS,
};
