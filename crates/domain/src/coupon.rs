//! Coupons and the discounts they give (DESIGN §15).
//!
//! A coupon takes a percentage or a fixed amount off an invoice's subtotal, before taxes
//! ([`crate::invoice::settle`]). Its duration says how many *period invoices* it discounts: the
//! first invoice or a renewal, one each period (`once`: one; `repeating`: `durationInCycles`;
//! `forever`: every one). A discount never takes more than the amount it discounts, so a coupon
//! alone never makes a total negative. The rules of its fields are here too, so the API and the
//! dashboard check them alike, and whether it can be redeemed ([`redeemable`]).

use chrono::{DateTime, Months, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::membership::{parse_end_date, END_DATE_MAX_LEAD_MONTHS};
use crate::tax::{exclusive_tax, parse_percentage};

mod redemption;

pub use redemption::{redeemable, RedemptionTerms, Refusal};

/// Longest coupon code, in characters.
pub const MAX_CODE_CHARS: usize = 40;

/// Most periods a `repeating` coupon can discount (ten years of monthly invoices).
pub const MAX_DURATION_IN_CYCLES: u32 = 120;

/// The largest `maxRedemptions`.
pub const MAX_REDEMPTIONS: i64 = 1_000_000_000;

/// A coupon code's rule, as the OpenAPI document publishes it: 1–40 letters, digits, `-` and
/// `_`, in any letter case.
pub const CODE_PATTERN: &str = "^[A-Za-z0-9_-]{1,40}$";

/// A coupon `code`: 1–40 ASCII letters, digits, `-` and `_`; codes match in any letter case, so
/// it is returned (and stored) uppercase.
pub fn code(input: &str) -> Result<String, String> {
    let valid = !input.is_empty()
        && input.len() <= MAX_CODE_CHARS
        && input
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(input.to_ascii_uppercase())
    } else {
        Err(format!(
            "must be 1 to {MAX_CODE_CHARS} letters, digits, '-' or '_'"
        ))
    }
}

/// `percentOff`: a decimal string `0 < p ≤ 100` with at most 4 decimal places, normalized.
pub fn percent_off(input: &str) -> Result<Decimal, String> {
    let rule =
        "must be a decimal number greater than 0 and at most 100, with at most 4 decimal places";
    match parse_percentage(input) {
        Ok(p) if p > Decimal::ZERO => Ok(p),
        _ => Err(rule.to_string()),
    }
}

/// `durationInCycles` of a `repeating` coupon: 1 to [`MAX_DURATION_IN_CYCLES`].
pub fn duration_in_cycles(cycles: i64) -> Result<u32, String> {
    match u32::try_from(cycles) {
        Ok(n) if (1..=MAX_DURATION_IN_CYCLES).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be an integer from 1 to {MAX_DURATION_IN_CYCLES}"
        )),
    }
}

/// `maxRedemptions`: an integer from 1 to [`MAX_REDEMPTIONS`].
pub fn max_redemptions(n: i64) -> Result<i64, String> {
    if (1..=MAX_REDEMPTIONS).contains(&n) {
        Ok(n)
    } else {
        Err(format!("must be an integer from 1 to {MAX_REDEMPTIONS}"))
    }
}

/// `expiresAt`: UTC `YYYY-MM-DDTHH:mm:ss` (a trailing `Z` is accepted, as for `endDate`), after
/// `now` (the merchant's time) and at most 100 years after it, as an `endDate` may be.
pub fn expires_at(input: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let at = parse_end_date(input)?;
    if at <= now {
        return Err("must be in the future".into());
    }
    let latest = now.checked_add_months(Months::new(END_DATE_MAX_LEAD_MONTHS));
    if latest.is_none_or(|latest| at > latest) {
        return Err("must be at most 100 years in the future".into());
    }
    Ok(at)
}

/// What a coupon takes off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CouponOff {
    /// A percentage of the subtotal, `0 < p ≤ 100`.
    PercentOff(Decimal),
    /// A fixed amount in minor units of the coupon's currency (the membership's).
    AmountOff(i64),
}

impl CouponOff {
    /// What it takes off `base` minor units: `round(base × p / 100)` (half away from zero, as
    /// taxes) or the fixed amount, never more than `base` and nothing off a base that is not
    /// positive.
    pub fn off(&self, base: i64) -> i64 {
        if base <= 0 {
            return 0;
        }
        let off = match self {
            CouponOff::PercentOff(p) => exclusive_tax(base, *p),
            CouponOff::AmountOff(amount) => *amount,
        };
        off.clamp(0, base)
    }
}

/// How many period invoices a coupon discounts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CouponDuration {
    /// The next period invoice only.
    Once,
    /// The next `n` period invoices.
    Repeating(u32),
    /// Every period invoice.
    Forever,
}

impl CouponDuration {
    /// The stored and answered name: `once`, `repeating` or `forever`.
    pub fn as_str(&self) -> &'static str {
        match self {
            CouponDuration::Once => "once",
            CouponDuration::Repeating(_) => "repeating",
            CouponDuration::Forever => "forever",
        }
    }

    /// The duration named `name` (any letter case) with `cycles` (`durationInCycles`, which only
    /// `repeating` takes and requires).
    pub fn parse(name: &str, cycles: Option<i64>) -> Result<Self, (&'static str, String)> {
        match (name.to_ascii_lowercase().as_str(), cycles) {
            ("once", None) => Ok(CouponDuration::Once),
            ("forever", None) => Ok(CouponDuration::Forever),
            ("repeating", Some(n)) => duration_in_cycles(n)
                .map(CouponDuration::Repeating)
                .map_err(|e| ("durationInCycles", e)),
            ("repeating", None) => Err((
                "durationInCycles",
                "is required when duration is repeating".into(),
            )),
            ("once" | "forever", Some(_)) => Err((
                "durationInCycles",
                "is only allowed when duration is repeating".into(),
            )),
            _ => Err(("duration", "must be once, repeating or forever".into())),
        }
    }

    /// The periods it discounts: `None` for every one.
    pub fn cycles(&self) -> Option<u32> {
        match self {
            CouponDuration::Once => Some(1),
            CouponDuration::Repeating(n) => Some(*n),
            CouponDuration::Forever => None,
        }
    }
}

/// A coupon as an invoice names it: which one, by what code, and what it takes off.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedCoupon {
    /// The coupon's id, `cpn_…`.
    pub coupon_id: String,
    /// Its code, uppercase.
    pub code: String,
    /// What it takes off.
    pub off: CouponOff,
}

/// A coupon on a membership: its terms and how many more period invoices it discounts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Discount {
    /// The coupon.
    pub coupon: AppliedCoupon,
    /// Period invoices it still discounts; `None`: every one (`forever`).
    pub cycles_left: Option<u32>,
    /// Given by the customer as a promotion code on the hosted checkout, so the customer may
    /// take it back before paying; a coupon the merchant gave is the merchant's to remove.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_customer: bool,
}

impl Discount {
    /// A coupon of `duration` newly given to a membership.
    pub fn new(coupon: AppliedCoupon, duration: CouponDuration) -> Self {
        Discount {
            coupon,
            cycles_left: duration.cycles(),
            by_customer: false,
        }
    }

    /// What it takes off a period invoice billing `amount`.
    pub fn off(&self, amount: i64) -> i64 {
        match self.cycles_left {
            Some(0) => 0,
            _ => self.coupon.off.off(amount),
        }
    }

    /// The discount once a period invoice used it: `None` when that was its last period.
    pub fn used(self) -> Option<Discount> {
        match self.cycles_left {
            None => Some(self),
            Some(n) if n > 1 => Some(Discount {
                cycles_left: Some(n - 1),
                ..self
            }),
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn coupon(off: CouponOff) -> AppliedCoupon {
        AppliedCoupon {
            coupon_id: "cpn_1".into(),
            code: "SPRING".into(),
            off,
        }
    }

    #[test]
    fn codes() {
        assert_eq!(code("spring-20_x"), Ok("SPRING-20_X".to_string()));
        assert!(code("").is_err());
        assert!(code("with space").is_err());
        assert!(code("Ünicode").is_err());
        assert!(code(&"A".repeat(40)).is_ok());
        assert!(code(&"A".repeat(41)).is_err());
    }

    #[test]
    fn percentages() {
        assert_eq!(percent_off("20.50"), Ok(Decimal::new(205, 1)));
        assert_eq!(percent_off("100"), Ok(Decimal::ONE_HUNDRED));
        assert!(percent_off("0").is_err());
        assert!(percent_off("100.01").is_err());
        assert!(percent_off("-5").is_err());
        assert!(percent_off("1.23456").is_err());
        assert!(percent_off("1e1").is_err());
    }

    #[test]
    fn redemption_limits() {
        assert_eq!(max_redemptions(1), Ok(1));
        assert_eq!(max_redemptions(MAX_REDEMPTIONS), Ok(MAX_REDEMPTIONS));
        assert!(max_redemptions(0).is_err());
        assert!(max_redemptions(-1).is_err());
        assert!(max_redemptions(MAX_REDEMPTIONS + 1).is_err());
    }

    #[test]
    fn expiry_times() {
        let now = DateTime::parse_from_rfc3339("2030-01-01T00:00:00Z")
            .unwrap()
            .to_utc();
        let at = expires_at("2030-01-01T00:00:01", now).unwrap();
        assert_eq!(at, now + chrono::TimeDelta::seconds(1));
        assert_eq!(expires_at("2030-01-01T00:00:01Z", now), Ok(at));
        assert!(expires_at("2030-01-01T00:00:00Z", now).is_err());
        assert!(expires_at("2029-12-31T23:59:59Z", now).is_err());
        assert!(expires_at("2130-01-01T00:00:00Z", now).is_ok());
        assert!(expires_at("2130-01-01T00:00:01Z", now).is_err());
        assert!(expires_at("2030-1-2T00:00:00", now).is_err());
        assert!(expires_at("2030-01-02", now).is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(
            CouponDuration::parse("Once", None),
            Ok(CouponDuration::Once)
        );
        assert_eq!(
            CouponDuration::parse("repeating", Some(3)),
            Ok(CouponDuration::Repeating(3))
        );
        assert_eq!(
            CouponDuration::parse("repeating", None).unwrap_err().0,
            "durationInCycles"
        );
        assert_eq!(
            CouponDuration::parse("repeating", Some(0)).unwrap_err().0,
            "durationInCycles"
        );
        assert_eq!(
            CouponDuration::parse("repeating", Some(121)).unwrap_err().0,
            "durationInCycles"
        );
        assert_eq!(
            CouponDuration::parse("forever", Some(2)).unwrap_err().0,
            "durationInCycles"
        );
        assert_eq!(
            CouponDuration::parse("weekly", None).unwrap_err().0,
            "duration"
        );
    }

    #[test]
    fn percent_off_rounds_half_away_from_zero() {
        let twenty = CouponOff::PercentOff(Decimal::new(20, 0));
        assert_eq!(twenty.off(999), 200);
        assert_eq!(twenty.off(2), 0);
        assert_eq!(twenty.off(3), 1);
        let third = CouponOff::PercentOff(Decimal::new(333_333, 4));
        assert_eq!(third.off(3000), 1000);
        assert_eq!(CouponOff::PercentOff(Decimal::ONE_HUNDRED).off(1234), 1234);
    }

    #[test]
    fn an_amount_off_takes_at_most_the_amount() {
        let five = CouponOff::AmountOff(500);
        assert_eq!(five.off(2997), 500);
        assert_eq!(five.off(300), 300);
        assert_eq!(five.off(0), 0);
        assert_eq!(five.off(-400), 0);
    }

    #[test]
    fn a_discount_runs_for_its_cycles() {
        let off = CouponOff::PercentOff(Decimal::new(10, 0));
        let once = Discount::new(coupon(off), CouponDuration::Once);
        assert_eq!(once.off(1000), 100);
        assert_eq!(once.used(), None);
        let three = Discount::new(coupon(off), CouponDuration::Repeating(3));
        let two = three.used().unwrap();
        assert_eq!(two.cycles_left, Some(2));
        assert_eq!(two.used().unwrap().used(), None);
        let forever = Discount::new(coupon(off), CouponDuration::Forever);
        assert_eq!(forever.clone().used(), Some(forever));
    }

    proptest! {
        /// A discount is never negative and never more than what it discounts, so a period
        /// invoice's total after a coupon is never negative.
        #[test]
        fn a_discount_never_exceeds_its_base(
            base in -1_000_000_000i64..1_000_000_000_000,
            percent in 1u32..=1_000_000,
            amount in 1i64..1_000_000_000_000,
            fixed in any::<bool>(),
        ) {
            let off = if fixed {
                CouponOff::AmountOff(amount)
            } else {
                CouponOff::PercentOff(Decimal::new(i64::from(percent), 4))
            };
            let taken = off.off(base);
            prop_assert!(taken >= 0);
            prop_assert!(taken <= base.max(0));
        }

        /// A coupon of n cycles discounts exactly n period invoices.
        #[test]
        fn repeating_discounts_exactly_n_periods(n in 1u32..=MAX_DURATION_IN_CYCLES) {
            let mut discount = Some(Discount::new(
                coupon(CouponOff::AmountOff(100)),
                CouponDuration::Repeating(n),
            ));
            let mut discounted = 0;
            while let Some(d) = discount {
                prop_assert_eq!(d.off(1000), 100);
                discounted += 1;
                discount = d.used();
            }
            prop_assert_eq!(discounted, n);
        }
    }
}
