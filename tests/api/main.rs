//! HTTP-level tests: the real server on a random port, on SQLite and on PostgreSQL.

mod harness;
mod receivers;
mod visitor;

mod auth;
mod billing;
mod cancel;
mod cashier;
mod checkout;
mod cli;
mod coalescing;
mod customers;
mod emitter;
mod errors;
mod faults;
mod hosted_page;
mod idempotency;
mod kill;
mod mail;
mod memberships;
mod operations;
mod paynow;
mod pool;
mod process;
mod processor;
mod proration;
mod races;
mod renewals;
mod secrets;
mod soak;
mod webhooks;
