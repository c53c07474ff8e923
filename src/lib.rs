//! recur: self-hostable subscription billing and hosted payments.
//!
//! Layout follows the architecture: [`domain`] holds the pure rules (a crate of its own, so it
//! cannot do I/O), [`store`] persists, [`api`] speaks HTTP, and [`app`] wires them together.

pub use recur_domain as domain;

pub mod api;
pub mod app;
pub mod auth;
pub mod billing;
pub mod cli;
pub mod clock;
pub mod config;
pub mod delivery;
pub mod events;
pub mod i18n;
pub mod ids;
pub mod keys;
pub mod links;
pub mod merchants;
pub mod metrics;
pub mod net;
pub mod pages;
pub mod payments;
pub mod processor;
pub mod services;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod workers;
