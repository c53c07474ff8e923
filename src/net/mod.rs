//! The network edge: the client address behind trusted proxies.

pub mod forwarded;
pub mod proxies;
