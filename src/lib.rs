//! recur: self-hostable subscription billing and hosted payments.
//!
//! The modules are in layers, each importing only from its own layer or lower ones (the table is in
//! `docs/architecture.md`, "Layout", and `tests/layers.rs` checks it): [`domain`] holds the pure
//! rules (a crate of its own, so it cannot do I/O); [`store`], [`processor`] and the plumbing
//! beside them are the foundation; [`platform::Platform`] is what the engines work with;
//! [`billing`], [`cashier`] and [`delivery`] are the engines and [`events`] their webhook events;
//! [`api`] and [`pages`] speak HTTP over [`state::AppState`]; [`app`] starts it all.

pub use recur_domain as domain;

pub mod api;
pub mod app;
pub mod auth;
pub mod billing;
pub mod cashier;
pub mod cli;
pub mod clock;
pub mod config;
pub mod delivery;
pub mod events;
pub mod http;
pub mod i18n;
pub mod ids;
pub mod keys;
pub mod links;
pub mod merchants;
pub mod metrics;
pub mod net;
pub mod pages;
pub mod platform;
pub mod processor;
pub mod services;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod workers;
