//! Whether a coupon can be redeemed (DESIGN §15): active, not expired, of the membership's
//! currency when it takes an amount off, and below its redemption limit. The store reads the
//! coupon, asks [`redeemable`] and counts the redemption; its counting statement repeats the
//! condition only as a guard against a concurrent redemption.

use chrono::{DateTime, Utc};

/// Why a code was not redeemed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The merchant has no coupon with this code.
    Unknown,
    /// The coupon is archived.
    Archived,
    /// The coupon's `expires_at` has passed.
    Expired,
    /// The coupon has been redeemed `max_redemptions` times.
    Exhausted,
    /// The coupon takes an amount off in another currency.
    WrongCurrency,
}

impl Refusal {
    /// The reason, as a field error on the code ("couponCode": ["has expired"]).
    pub fn message(&self) -> &'static str {
        match self {
            Refusal::Unknown => "does not match a coupon of this merchant",
            Refusal::Archived => "has been archived",
            Refusal::Expired => "has expired",
            Refusal::Exhausted => "has reached its redemption limit",
            Refusal::WrongCurrency => "is for another currency",
        }
    }
}

/// The terms of a coupon that decide whether it can be redeemed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedemptionTerms<'a> {
    /// Archived coupons (`false`) cannot be redeemed.
    pub active: bool,
    /// From when it can no longer be redeemed; `None`: never.
    pub expires_at: Option<DateTime<Utc>>,
    /// The currency of an amount off (ISO 4217); `None` for a percentage.
    pub currency: Option<&'a str>,
    /// How many redemptions it allows; `None`: no limit.
    pub max_redemptions: Option<i64>,
    /// How many times it has been redeemed.
    pub times_redeemed: i64,
}

/// Whether a coupon of `terms` can be redeemed for a membership billed in `currency` (ISO 4217,
/// any letter case) at `now` (the merchant's time): `Ok` when it is active, not expired (a
/// coupon expiring at T is refused from T on), of `currency` when it takes an amount off, and
/// redeemed fewer than `max_redemptions` times. Otherwise the first reason in that order.
pub fn redeemable(
    terms: &RedemptionTerms<'_>,
    currency: &str,
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    if !terms.active {
        return Err(Refusal::Archived);
    }
    if terms.expires_at.is_some_and(|at| at <= now) {
        return Err(Refusal::Expired);
    }
    if terms
        .currency
        .is_some_and(|own| !own.eq_ignore_ascii_case(currency))
    {
        return Err(Refusal::WrongCurrency);
    }
    if terms
        .max_redemptions
        .is_some_and(|max| terms.times_redeemed >= max)
    {
        return Err(Refusal::Exhausted);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;
    use proptest::prelude::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2030-01-01T00:00:00Z")
            .unwrap()
            .to_utc()
    }

    const OPEN: RedemptionTerms<'static> = RedemptionTerms {
        active: true,
        expires_at: None,
        currency: None,
        max_redemptions: None,
        times_redeemed: 0,
    };

    #[test]
    fn messages() {
        assert_eq!(
            Refusal::Unknown.message(),
            "does not match a coupon of this merchant"
        );
        assert_eq!(Refusal::Archived.message(), "has been archived");
        assert_eq!(Refusal::Expired.message(), "has expired");
        assert_eq!(
            Refusal::Exhausted.message(),
            "has reached its redemption limit"
        );
        assert_eq!(Refusal::WrongCurrency.message(), "is for another currency");
    }

    #[test]
    fn each_term_refuses_with_its_reason() {
        let now = now();
        assert_eq!(redeemable(&OPEN, "EUR", now), Ok(()));
        let archived = RedemptionTerms {
            active: false,
            ..OPEN
        };
        assert_eq!(redeemable(&archived, "EUR", now), Err(Refusal::Archived));
        let expiring = |at| RedemptionTerms {
            expires_at: Some(at),
            ..OPEN
        };
        assert_eq!(
            redeemable(&expiring(now), "EUR", now),
            Err(Refusal::Expired)
        );
        let later = now + TimeDelta::microseconds(1);
        assert_eq!(redeemable(&expiring(later), "EUR", now), Ok(()));
        let euros = RedemptionTerms {
            currency: Some("EUR"),
            ..OPEN
        };
        assert_eq!(redeemable(&euros, "eur", now), Ok(()));
        assert_eq!(redeemable(&euros, "USD", now), Err(Refusal::WrongCurrency));
        let limited = |times_redeemed| RedemptionTerms {
            max_redemptions: Some(5),
            times_redeemed,
            ..OPEN
        };
        assert_eq!(redeemable(&limited(4), "EUR", now), Ok(()));
        assert_eq!(redeemable(&limited(5), "EUR", now), Err(Refusal::Exhausted));
    }

    #[test]
    fn the_first_reason_is_given() {
        let now = now();
        let everything = RedemptionTerms {
            active: false,
            expires_at: Some(now),
            currency: Some("USD"),
            max_redemptions: Some(1),
            times_redeemed: 1,
        };
        assert_eq!(redeemable(&everything, "EUR", now), Err(Refusal::Archived));
        let active = RedemptionTerms {
            active: true,
            ..everything
        };
        assert_eq!(redeemable(&active, "EUR", now), Err(Refusal::Expired));
        let current = RedemptionTerms {
            expires_at: None,
            ..active
        };
        assert_eq!(
            redeemable(&current, "EUR", now),
            Err(Refusal::WrongCurrency)
        );
        assert_eq!(redeemable(&current, "USD", now), Err(Refusal::Exhausted));
    }

    /// Coupon terms around `now` (microseconds from it, as the store keeps times), in EUR or USD.
    fn any_terms() -> impl Strategy<Value = (RedemptionTerms<'static>, i64)> {
        (
            any::<bool>(),
            proptest::option::of(-3i64..=3),
            proptest::option::of(prop::sample::select(vec!["EUR", "USD"])),
            proptest::option::of(0i64..=4),
            0i64..=5,
        )
            .prop_map(|(active, expiry, currency, max_redemptions, times)| {
                let terms = RedemptionTerms {
                    active,
                    expires_at: expiry.map(|micros| now() + TimeDelta::microseconds(micros)),
                    currency,
                    max_redemptions,
                    times_redeemed: times,
                };
                (terms, expiry.unwrap_or_default())
            })
    }

    proptest! {
        /// The rule accepts exactly the coupons the store's counting `UPDATE` counts: `active = 1
        /// AND (expires_at IS NULL OR expires_at > now) AND (max_redemptions IS NULL OR
        /// times_redeemed < max_redemptions) AND (currency IS NULL OR currency = $currency)`, in
        /// microseconds.
        #[test]
        fn redeemable_is_the_guard_of_the_counting_update(
            (terms, expiry) in any_terms(),
            eur in any::<bool>(),
        ) {
            let currency = if eur { "EUR" } else { "USD" };
            let now_micros = 0;
            let guard = terms.active
                && (terms.expires_at.is_none() || expiry > now_micros)
                && terms.max_redemptions.is_none_or(|max| terms.times_redeemed < max)
                && terms.currency.is_none_or(|own| own == currency);
            prop_assert_eq!(redeemable(&terms, currency, now()).is_ok(), guard);
        }

        /// A refusal names a term that fails: never one of a coupon that meets its condition.
        #[test]
        fn a_refusal_names_a_failing_term(
            (terms, _) in any_terms(),
            eur in any::<bool>(),
        ) {
            let currency = if eur { "EUR" } else { "USD" };
            let now = now();
            match redeemable(&terms, currency, now) {
                Ok(()) => {}
                Err(Refusal::Archived) => prop_assert!(!terms.active),
                Err(Refusal::Expired) => {
                    prop_assert!(terms.expires_at.is_some_and(|at| at <= now));
                }
                Err(Refusal::WrongCurrency) => {
                    prop_assert!(terms.currency.is_some_and(|own| own != currency));
                }
                Err(Refusal::Exhausted) => {
                    prop_assert!(terms.max_redemptions.is_some_and(|m| terms.times_redeemed >= m));
                }
                Err(Refusal::Unknown) => prop_assert!(false, "the rule knows the coupon"),
            }
        }
    }
}
