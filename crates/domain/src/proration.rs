//! Proration and credit (DESIGN §4).
//!
//! All amounts are integer minor units of one currency. A prorated amount is
//! `amount × remaining seconds / period seconds`, computed exactly in 128-bit integers and
//! rounded once, half away from zero, to a whole minor unit ("half-up" on magnitudes, so a
//! charge and the matching credit have the same size).

/// The proration amount for a price change in the middle of a period:
/// `(new − old) × remaining / period`, rounded half away from zero to a whole minor unit.
///
/// Positive: to be charged now. Negative: to be added to the membership's credit.
/// `remaining_seconds` is clamped to `0..=period_seconds`; a `period_seconds <= 0` gives 0.
/// Results beyond the `i64` range (only possible when `new − old` itself overflows) saturate.
///
/// Prices are whole minor units of one currency, so the result is rounded to a whole minor unit
/// of that currency whatever its exponent (JPY 0, USD 2, BHD 3).
pub fn prorate(
    old_period_price: i64,
    new_period_price: i64,
    remaining_seconds: i64,
    period_seconds: i64,
) -> i64 {
    let difference = i128::from(new_period_price) - i128::from(old_period_price);
    scale_by_time(difference, remaining_seconds, period_seconds)
}

/// The credit for the unused part of a period that ends early (an interval change):
/// `period_price × remaining / period`, rounded half away from zero, with the same clamping
/// as [`prorate`].
pub fn unused_credit(period_price: i64, remaining_seconds: i64, period_seconds: i64) -> i64 {
    scale_by_time(i128::from(period_price), remaining_seconds, period_seconds)
}

/// `amount × remaining / period`, exact, rounded half away from zero, saturating into `i64`.
fn scale_by_time(amount: i128, remaining_seconds: i64, period_seconds: i64) -> i64 {
    if period_seconds <= 0 {
        return 0;
    }
    let period = period_seconds.unsigned_abs();
    let remaining = remaining_seconds.clamp(0, period_seconds).unsigned_abs();
    // |amount| <= 2^64 and remaining < 2^63, so the product is below 2^127: no u128 overflow.
    let numerator = amount.unsigned_abs() * u128::from(remaining);
    let period = u128::from(period);
    let (quotient, remainder) = (numerator / period, numerator % period);
    let magnitude = quotient + u128::from(2 * remainder >= period);
    let signed = i128::try_from(magnitude).unwrap_or(i128::MAX);
    let signed = if amount < 0 { -signed } else { signed };
    i64::try_from(signed).unwrap_or(if amount < 0 { i64::MIN } else { i64::MAX })
}

/// How a charge is settled against the membership's credit balance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditApplication {
    /// What remains to be charged to the payment method; 0 when credit covers everything.
    pub charged: i64,
    /// How much credit was consumed.
    pub credit_used: i64,
    /// The credit balance afterwards.
    pub credit_left: i64,
}

/// Applies credit first to an amount due: credit covers as much as it can, the rest is charged.
///
/// Negative inputs are treated as 0 (nothing is due, or there is no credit), so `charged`,
/// `credit_used` and `credit_left` are never negative and
/// `charged + credit_used == max(amount_due, 0)`.
pub fn apply_credit(amount_due: i64, credit_balance: i64) -> CreditApplication {
    let due = amount_due.max(0);
    let credit = credit_balance.max(0);
    let credit_used = due.min(credit);
    CreditApplication {
        charged: due - credit_used,
        credit_used,
        credit_left: credit - credit_used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn jpy_half_way_rounds_away_from_zero_both_directions() {
        // ¥1000 → ¥1005 with half the period left: 2.5 yen → 3, and back: -2.5 → -3.
        assert_eq!(prorate(1000, 1005, 50, 100), 3);
        assert_eq!(prorate(1005, 1000, 50, 100), -3);
        // Just under half stays down.
        assert_eq!(prorate(1000, 1005, 49, 100), 2);
        assert_eq!(prorate(1005, 1000, 49, 100), -2);
        assert_eq!(prorate(1000, 3000, 25, 100), 500);
    }

    #[test]
    fn bhd_three_decimals_half_way() {
        // 1.000 → 1.001 BHD with half left: 0.0005 → 0.001 (1 fils), and the reverse → -1.
        assert_eq!(prorate(1000, 1001, 1, 2), 1);
        assert_eq!(prorate(1001, 1000, 1, 2), -1);
        // 10.000 → 13.000 BHD with a third left: exactly 1.000.
        assert_eq!(prorate(10_000, 13_000, 10, 30), 1000);
        // 10.000 → 12.000 BHD with a third left: 0.6666… → 0.667.
        assert_eq!(prorate(10_000, 12_000, 10, 30), 667);
        assert_eq!(prorate(12_000, 10_000, 10, 30), -667);
    }

    #[test]
    fn clamps_and_degenerate_periods() {
        assert_eq!(prorate(1000, 2000, 200, 100), 1000);
        assert_eq!(prorate(1000, 2000, -5, 100), 0);
        assert_eq!(prorate(1000, 2000, 50, 0), 0);
        assert_eq!(prorate(1000, 2000, 50, -10), 0);
        assert_eq!(prorate(i64::MIN, i64::MAX, 1, 1), i64::MAX);
        assert_eq!(prorate(i64::MAX, i64::MIN, i64::MAX, i64::MAX), i64::MIN);
    }

    #[test]
    fn unused_credit_of_a_period() {
        // $30.00 monthly, 10 of 30 days left: $10.00 of credit.
        assert_eq!(unused_credit(3000, 10 * 86_400, 30 * 86_400), 1000);
        assert_eq!(unused_credit(1, 1, 2), 1);
        assert_eq!(unused_credit(3000, 0, 30), 0);
        assert_eq!(unused_credit(3000, 30, 30), 3000);
    }

    #[test]
    fn credit_is_applied_first() {
        assert_eq!(
            apply_credit(1000, 300),
            CreditApplication {
                charged: 700,
                credit_used: 300,
                credit_left: 0
            }
        );
        assert_eq!(
            apply_credit(1000, 1500),
            CreditApplication {
                charged: 0,
                credit_used: 1000,
                credit_left: 500
            }
        );
        assert_eq!(
            apply_credit(1000, 0),
            CreditApplication {
                charged: 1000,
                credit_used: 0,
                credit_left: 0
            }
        );
        assert_eq!(
            apply_credit(-5, -7),
            CreditApplication {
                charged: 0,
                credit_used: 0,
                credit_left: 0
            }
        );
    }

    proptest! {
        #[test]
        fn proration_is_bounded_signed_and_zero_without_time(
            old in 0i64..=1_000_000_000_000,
            new in 0i64..=1_000_000_000_000,
            remaining in -10i64..=400_000_000,
            period in 1i64..=400_000_000,
        ) {
            let result = prorate(old, new, remaining, period);
            let difference = new - old;
            prop_assert!(result.unsigned_abs() <= difference.unsigned_abs());
            prop_assert!(result == 0 || result.signum() == difference.signum());
            prop_assert_eq!(prorate(old, new, 0, period), 0);
            prop_assert_eq!(prorate(old, new, period, period), difference);
            prop_assert_eq!(prorate(new, old, remaining, period), -result);
        }

        #[test]
        fn proration_never_panics(
            old in any::<i64>(), new in any::<i64>(), remaining in any::<i64>(), period in any::<i64>(),
        ) {
            let _ = prorate(old, new, remaining, period);
        }

        #[test]
        fn credit_application_balances(due in any::<i64>(), credit in any::<i64>()) {
            let applied = apply_credit(due, credit);
            prop_assert!(applied.charged >= 0 && applied.credit_used >= 0 && applied.credit_left >= 0);
            prop_assert_eq!(applied.charged + applied.credit_used, due.max(0));
            prop_assert_eq!(applied.credit_used + applied.credit_left, credit.max(0));
        }
    }
}
