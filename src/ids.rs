//! Public identifiers and generated credentials. Every one is drawn from a cryptographically
//! secure generator: keys are never sequential and never guessable.
//!
//! The generator is `rand`'s thread-local ChaCha12, seeded from the operating system and reseeded
//! from it periodically. Drawing from the operating system directly would take one `getrandom`
//! call per character (about 25 per key).

use rand::distributions::{Alphanumeric, DistString};
use sha2::{Digest, Sha256};

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

/// A new refund key: `rfnd_` + 24 random base62 characters.
pub fn refund_key() -> String {
    prefixed("rfnd_", KEY_RANDOM_CHARS)
}

/// A new credit note key: `cn_` + 24 random base62 characters.
pub fn credit_note_key() -> String {
    prefixed("cn_", KEY_RANDOM_CHARS)
}

/// A new payment method key: `pm_` + 24 random base62 characters.
pub fn payment_method_key() -> String {
    prefixed("pm_", KEY_RANDOM_CHARS)
}

/// A new API key id: `ak_` + 24 random base62 characters.
pub fn api_key_id() -> String {
    prefixed("ak_", KEY_RANDOM_CHARS)
}

/// A new tax rate key: `txr_` + random characters.
pub fn tax_rate_key() -> String {
    prefixed("txr_", KEY_RANDOM_CHARS)
}

/// A new product key: `prod_` + 24 random base62 characters.
pub fn product_key() -> String {
    prefixed("prod_", KEY_RANDOM_CHARS)
}

/// A new price key: `price_` + 24 random base62 characters.
pub fn price_key() -> String {
    prefixed("price_", KEY_RANDOM_CHARS)
}

/// A new meter key: `mtr_` + 24 random base62 characters.
pub fn meter_key() -> String {
    prefixed("mtr_", KEY_RANDOM_CHARS)
}

/// A new coupon key: `cpn_` + 24 random base62 characters.
pub fn coupon_key() -> String {
    prefixed("cpn_", KEY_RANDOM_CHARS)
}

/// A new webhook endpoint id: `we_` + 24 random base62 characters.
pub fn webhook_endpoint_id() -> String {
    prefixed("we_", KEY_RANDOM_CHARS)
}

/// What every API key secret starts with.
pub const API_KEY_SECRET_PREFIX: &str = "rk_";

/// A new API key secret: `rk_` + 32 base62 characters (about 190 bits).
pub fn api_key_secret() -> String {
    prefixed(API_KEY_SECRET_PREFIX, 32)
}

/// A random base62 string of `len` characters with `prefix` in front.
pub fn prefixed(prefix: &str, len: usize) -> String {
    let mut key = String::with_capacity(prefix.len() + len);
    key.push_str(prefix);
    Alphanumeric.append_string(&mut rand::thread_rng(), &mut key, len);
    key
}

/// A UUID named by `name`: the same name always gives the same UUID, different names different
/// ones (the first 16 bytes of the name's SHA-256, as a version 8 UUID). For the identifiers the
/// interface types as UUIDs of things recur names otherwise (`Membership.Id` of a membership
/// key, `CascadingInfo.SessionId` of a checkout session key). Names carry no secret: the UUID
/// reveals nothing its name does not.
pub fn named_uuid(name: &str) -> String {
    let digest = Sha256::digest(name.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
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

    #[test]
    fn named_uuids_are_stable_per_name_and_distinct_between_names() {
        let a = named_uuid("membership:mmbrshp_a");
        assert_eq!(a, named_uuid("membership:mmbrshp_a"));
        assert_ne!(a, named_uuid("membership:mmbrshp_b"));
        let parsed = uuid::Uuid::parse_str(&a).unwrap();
        assert_eq!(parsed.get_version_num(), 8);
        assert_eq!(parsed.hyphenated().to_string(), a);
    }
}
