//! Merchant authentication: argon2id passwords, short-lived JWT access tokens, API keys, and the
//! limiter that slows password guessing.

pub mod api_keys;
pub mod jwt;
pub mod login;
pub mod login_limiter;
pub mod password;
