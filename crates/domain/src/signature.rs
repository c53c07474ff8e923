//! Signatures: the spec's SHA-256 webhook and hosted-page signatures, and Standard Webhooks
//! HMAC signatures (DESIGN §5, §6).

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of a Standard Webhooks signing secret: `whsec_<base64 key>`.
const WHSEC_PREFIX: &str = "whsec_";

/// The spec's webhook signature: lowercase hex SHA-256 of `<merchant secret>:<OrderId>`.
/// Sent in the payload's `Signature` field and in the `X-Signature` header.
pub fn webhook_signature(merchant_secret: &str, order_id: &str) -> String {
    sha256_hex(&format!("{merchant_secret}:{order_id}"))
}

/// The hosted payment page request signature: lowercase hex SHA-256 of
/// `<email>;<timestamp>;<merchant secret>`. Compare it with [`constant_time_eq`].
pub fn hosted_page_signature(email: &str, timestamp: &str, merchant_secret: &str) -> String {
    sha256_hex(&format!("{email};{timestamp};{merchant_secret}"))
}

/// Lowercase hex SHA-256 of a UTF-8 string.
fn sha256_hex(input: &str) -> String {
    hex::encode(Sha256::digest(input.as_bytes()))
}

/// Compares two byte strings in time independent of where they differ (length differences
/// return `false` at once; lengths are not secret). Use it for every secret or signature check.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

/// Why a Standard Webhooks signature could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignatureError {
    /// The signing secret is not `whsec_` followed by non-empty standard base64.
    InvalidSecret,
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignatureError::InvalidSecret => {
                f.write_str("signing secret must be 'whsec_' followed by base64")
            }
        }
    }
}

impl std::error::Error for SignatureError {}

/// The Standard Webhooks `webhook-signature` header value: `v1,<base64 HMAC-SHA256>` over
/// `<msg_id>.<timestamp_secs>.<body>`, keyed with the base64-decoded part of `whsec_secret`
/// after the `whsec_` prefix (as the Standard Webhooks libraries do, a secret without the
/// prefix is decoded whole).
pub fn standard_webhook_signature(
    whsec_secret: &str,
    msg_id: &str,
    timestamp_secs: i64,
    body: &[u8],
) -> Result<String, SignatureError> {
    let encoded_key = whsec_secret
        .strip_prefix(WHSEC_PREFIX)
        .unwrap_or(whsec_secret);
    let key = BASE64
        .decode(encoded_key)
        .map_err(|_| SignatureError::InvalidSecret)?;
    if key.is_empty() {
        return Err(SignatureError::InvalidSecret);
    }
    let mut mac =
        Hmac::<Sha256>::new_from_slice(&key).map_err(|_| SignatureError::InvalidSecret)?;
    mac.update(format!("{msg_id}.{timestamp_secs}.").as_bytes());
    mac.update(body);
    Ok(format!("v1,{}", BASE64.encode(mac.finalize().into_bytes())))
}

/// A new Standard Webhooks signing secret, `whsec_<base64 of random_bytes>`. Pass 24 to 64
/// bytes from a cryptographically secure generator (this crate does no I/O and has no RNG).
pub fn new_whsec(random_bytes: &[u8]) -> String {
    format!("{WHSEC_PREFIX}{}", BASE64.encode(random_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_signature_matches_sha256sum() {
        // printf '%s' 'sk_test_secret:order-123' | sha256sum
        assert_eq!(
            webhook_signature("sk_test_secret", "order-123"),
            "020b2fcf315b8770fa0aa622f86f815cc262816ef106d94ee8277885680b8e3b"
        );
        // printf '%s' ':' | sha256sum
        assert_eq!(
            webhook_signature("", ""),
            "e7ac0786668e0ff0f02b62bd04f45ff636fd82db63b1104601c975dc005f3a67"
        );
    }

    #[test]
    fn hosted_page_signature_matches_sha256sum() {
        // printf '%s' 'jane@example.com;2027-03-01T12:00:00Z;sk_test_secret' | sha256sum
        assert_eq!(
            hosted_page_signature("jane@example.com", "2027-03-01T12:00:00Z", "sk_test_secret"),
            "1dced9c2776fe82e356155490161c67bdaaca73234f1c920e49f9170332b9b9c"
        );
    }

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(constant_time_eq(b"", b""));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn standard_webhooks_published_test_vector() {
        let signature = standard_webhook_signature(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(
            signature.as_deref(),
            Ok("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
    }

    #[test]
    fn secret_without_prefix_is_decoded_whole() {
        let with =
            standard_webhook_signature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "m", 1, b"");
        let without = standard_webhook_signature("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "m", 1, b"");
        assert_eq!(with, without);
    }

    #[test]
    fn rejects_invalid_secrets() {
        for secret in ["whsec_", "whsec_not base64!", "", "whsec_@@@@"] {
            assert_eq!(
                standard_webhook_signature(secret, "m", 1, b"{}"),
                Err(SignatureError::InvalidSecret),
                "{secret:?}"
            );
        }
    }

    #[test]
    fn new_whsec_round_trips_into_a_key() {
        let secret = new_whsec(&[7u8; 32]);
        assert!(secret.starts_with("whsec_"));
        assert_eq!(
            BASE64.decode(secret.trim_start_matches("whsec_")),
            Ok(vec![7u8; 32])
        );
        assert!(standard_webhook_signature(&secret, "msg_1", 1, b"{}").is_ok());
    }
}
