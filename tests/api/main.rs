//! HTTP-level tests: the real server on a random port, on SQLite and on PostgreSQL.

mod harness;

mod auth;
mod billing;
mod cli;
mod customers;
mod errors;
mod hosted_page;
mod idempotency;
mod memberships;
mod operations;
mod processor;
