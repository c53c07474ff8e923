//! What both front ends (the API and the hosted pages) use at the HTTP edge: a field as received
//! ([`input`]), list parameters and their sealed cursors ([`pagination`]), the client address
//! behind trusted proxies ([`client_address`]), request tracing and its trace id ([`trace`],
//! [`trace_id`]), the refusal of U+0000 ([`nul_text`]), `nosniff` ([`nosniff`]), and the problem
//! document for failures that come before any handler ([`problem`]).

pub mod client_address;
pub mod input;
pub mod nosniff;
pub mod nul_text;
pub mod pagination;
pub mod problem;
pub mod trace;
pub mod trace_id;
