//! HTTP-level tests: the real server on a random port, on SQLite and on PostgreSQL.

mod harness;
mod receivers;
mod redirects;

mod auth;
mod billing;
mod bounds;
mod cashier;
mod cashier_frame;
mod checkout;
mod cli;
mod coalescing;
mod customers;
mod end_dates;
mod errors;
mod faults;
mod fingerprints;
mod hosted_page;
mod idempotency;
mod instances;
mod kill;
mod mail;
mod memberships;
mod metrics_access;
mod nosniff;
mod operations;
mod pool;
mod price_parts;
mod process;
mod processor;
mod races;
mod renewals;
mod secrets;
mod soak;
mod ssrf;
mod webhooks;
