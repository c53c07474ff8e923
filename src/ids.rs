//! Public identifiers and generated credentials. Every one is drawn from a cryptographically
//! secure generator: keys are never sequential and never guessable.
//!
//! The generator is `rand`'s thread-local ChaCha12, seeded from the operating system and reseeded
//! from it periodically. Drawing from the operating system directly would take one `getrandom`
//! call per character (about 25 per key).

use rand::distributions::{Alphanumeric, DistString};

/// Length of the random part of a resource key.
const KEY_RANDOM_CHARS: usize = 24;

/// A new customer key: `cstmr_` + 24 random base62 characters.
pub fn customer_key() -> String {
    prefixed("cstmr_", KEY_RANDOM_CHARS)
}

/// A new membership key: `mmbrshp_` + 24 random base62 characters.
pub fn membership_key() -> String {
    prefixed("mmbrshp_", KEY_RANDOM_CHARS)
}

/// A new invoice key: `in_` + 24 random base62 characters.
pub fn invoice_key() -> String {
    prefixed("in_", KEY_RANDOM_CHARS)
}

/// A new payment method key: `pm_` + 24 random base62 characters.
pub fn payment_method_key() -> String {
    prefixed("pm_", KEY_RANDOM_CHARS)
}

/// A random base62 string of `len` characters with `prefix` in front.
pub fn prefixed(prefix: &str, len: usize) -> String {
    let mut key = String::with_capacity(prefix.len() + len);
    key.push_str(prefix);
    Alphanumeric.append_string(&mut rand::thread_rng(), &mut key, len);
    key
}

/// A new merchant password: 32 base62 characters (about 190 bits).
pub fn password() -> String {
    prefixed("", 32)
}

/// A new merchant secret: `msk_` + 40 base62 characters.
pub fn merchant_secret() -> String {
    prefixed("msk_", 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn customer_keys_are_prefixed_base62_and_distinct() {
        let a = customer_key();
        let b = customer_key();
        assert_ne!(a, b);
        let random = a.strip_prefix("cstmr_").unwrap();
        assert_eq!(random.len(), 24);
        assert!(random.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
