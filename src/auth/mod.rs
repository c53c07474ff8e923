//! Merchant authentication: argon2id passwords, short-lived JWT access tokens, and the limiter
//! that slows password guessing.

pub mod jwt;
pub mod login_limiter;
pub mod password;
