//! The network edge: HTTPS on the listen address, and the client address behind trusted
//! proxies.

pub mod forwarded;
pub mod proxies;
pub mod tls;
