//! The `Stripe-Signature` header of Stripe's webhooks (DESIGN §17): `t=<unix seconds>` and one or
//! more `v1=<hex HMAC-SHA256>` of `"{t}.{raw body}"`, keyed with the endpoint's `whsec_…`
//! secret as it is written (Stripe does not decode it). A request is taken only when one `v1`
//! matches, compared in constant time, and `t` is within [`TOLERANCE_SECONDS`] of the real
//! clock, which bounds replays.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::signature::constant_time_eq;

/// How far `t` may be from the receiver's clock, either way: Stripe's libraries' default.
pub const TOLERANCE_SECONDS: i64 = 300;

/// Why a `Stripe-Signature` is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No `t`, a `t` that is not a number, or no `v1` at all.
    Malformed,
    /// `t` is further than [`TOLERANCE_SECONDS`] from now.
    Stale,
    /// No `v1` is the body's signature under this secret.
    Mismatch,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::Malformed => "the Stripe-Signature header is malformed",
            Refusal::Stale => "the Stripe-Signature timestamp is outside the tolerance",
            Refusal::Mismatch => "no Stripe-Signature matches the body",
        })
    }
}

/// Lowercase hex HMAC-SHA256 of `"{timestamp}.{body}"` keyed with `secret`: what Stripe sends
/// as `v1`.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes a key of any length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// Checks `header` against `body` under `secret` at `now` (unix seconds of the real clock);
/// the signed timestamp when it holds.
pub fn verify(header: &str, body: &[u8], secret: &str, now: i64) -> Result<i64, Refusal> {
    let mut timestamp = None;
    let mut candidates = Vec::new();
    for part in header.split(',') {
        let Some((name, value)) = part.trim().split_once('=') else {
            continue;
        };
        match name {
            "t" => timestamp = Some(value.parse::<i64>().map_err(|_| Refusal::Malformed)?),
            "v1" => candidates.push(value),
            _ => {}
        }
    }
    let timestamp = timestamp.ok_or(Refusal::Malformed)?;
    if candidates.is_empty() {
        return Err(Refusal::Malformed);
    }
    if now.abs_diff(timestamp) > TOLERANCE_SECONDS.unsigned_abs() {
        return Err(Refusal::Stale);
    }
    let expected = sign(secret, timestamp, body);
    // Every candidate is compared, so the time taken does not tell which one matched.
    let matched = candidates.iter().fold(false, |found, candidate| {
        constant_time_eq(candidate.as_bytes(), expected.as_bytes()) | found
    });
    if matched {
        Ok(timestamp)
    } else {
        Err(Refusal::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_test_secret";
    const BODY: &[u8] = br#"{"id":"evt_1","type":"payment_intent.succeeded"}"#;
    const T: i64 = 1_700_000_000;
    /// Python's hmac: `hmac.new(b"whsec_test_secret", b"1700000000." + BODY, sha256).hexdigest()`.
    const V1: &str = "22d8dc182f5c588077683bd378368e29765bfe5df2560112b4f28fef120f0e31";

    #[test]
    fn the_signature_is_what_pythons_hmac_computes() {
        assert_eq!(sign(SECRET, T, BODY), V1);
    }

    #[test]
    fn a_header_with_a_matching_v1_holds_among_others() {
        let header = format!("t={T},v1=00ff,v0=abc,v1={V1}");
        assert_eq!(verify(&header, BODY, SECRET, T + 10), Ok(T));
        assert_eq!(verify(&header, BODY, SECRET, T - TOLERANCE_SECONDS), Ok(T));
    }

    #[test]
    fn a_changed_body_another_secret_or_a_stale_time_is_refused() {
        let header = format!("t={T},v1={V1}");
        assert_eq!(verify(&header, b"{}", SECRET, T), Err(Refusal::Mismatch));
        assert_eq!(
            verify(&header, BODY, "whsec_other", T),
            Err(Refusal::Mismatch)
        );
        assert_eq!(
            verify(&header, BODY, SECRET, T + TOLERANCE_SECONDS + 1),
            Err(Refusal::Stale)
        );
        // A replay signed with a new timestamp is a new signature, which needs the secret.
        let moved = format!("t={},v1={V1}", T + 400);
        assert_eq!(
            verify(&moved, BODY, SECRET, T + 400),
            Err(Refusal::Mismatch)
        );
    }

    proptest::proptest! {
        #[test]
        fn what_is_signed_verifies_within_the_tolerance_only(
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            secret in "whsec_[A-Za-z0-9]{1,40}",
            t in 0_i64..4_000_000_000,
            skew in -600_i64..600,
        ) {
            let header = format!("t={t},v1={}", sign(&secret, t, &body));
            let expected = if skew.abs() <= TOLERANCE_SECONDS { Ok(t) } else { Err(Refusal::Stale) };
            proptest::prop_assert_eq!(verify(&header, &body, &secret, t + skew), expected);
        }
    }

    #[test]
    fn a_malformed_header_is_refused() {
        for header in ["", "v1=abc", "t=abc,v1=abc", &format!("t={T}"), "garbage"] {
            assert_eq!(
                verify(header, BODY, SECRET, T),
                Err(Refusal::Malformed),
                "{header}"
            );
        }
    }
}
