//! Monthly recurring revenue (DESIGN §13, the dashboard's overview): what a membership's price
//! is worth per month, whatever its billing cycle.
//!
//! A month is a twelfth of a year, so a cycle is normalised by how many of it fit in a year:
//! Daily × 365 / 12, Weekly × 52 / 12, Monthly × 1, Annually / 12, each divided by the cycle's
//! `intervalCount`. The arithmetic is exact (`rust_decimal`, in minor units); only the sum over
//! a currency is rounded, to whole minor units, halves away from zero.

use rust_decimal::{Decimal, RoundingStrategy};

use crate::calendar::{BillingCycle, IntervalType};

/// How many cycles of `interval_type` (count 1) make a year: the numerator of its monthly
/// factor, whose denominator is 12.
fn per_year(interval_type: IntervalType) -> i64 {
    match interval_type {
        IntervalType::Daily => 365,
        IntervalType::Weekly => 52,
        IntervalType::Monthly => 12,
        IntervalType::Annually => 1,
    }
}

/// The monthly value, exact and in minor units, of `amount` minor units charged every `cycle`
/// (`amount` may be a sum of the prices of memberships on the same cycle: the rule is linear).
pub fn monthly(amount: i64, cycle: BillingCycle) -> Decimal {
    let divisor = Decimal::from(12) * Decimal::from(cycle.interval_count.max(1));
    Decimal::from(amount) * Decimal::from(per_year(cycle.interval_type)) / divisor
}

/// `monthly` values of one currency summed and rounded to whole minor units, halves away from
/// zero; saturates at `i64::MAX`.
pub fn total_minor(values: impl IntoIterator<Item = Decimal>) -> i64 {
    let sum = values.into_iter().fold(Decimal::ZERO, |sum, v| {
        sum.checked_add(v).unwrap_or(Decimal::MAX)
    });
    sum.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        .try_into()
        .unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(interval_type: IntervalType, interval_count: u32) -> BillingCycle {
        BillingCycle {
            interval_type,
            interval_count,
        }
    }

    #[test]
    fn each_cycle_is_normalised_to_a_twelfth_of_a_year() {
        assert_eq!(
            monthly(1000, cycle(IntervalType::Monthly, 1)),
            Decimal::from(1000)
        );
        assert_eq!(
            monthly(12_000, cycle(IntervalType::Annually, 1)),
            Decimal::from(1000)
        );
        assert_eq!(
            monthly(24_000, cycle(IntervalType::Annually, 2)),
            Decimal::from(1000)
        );
        assert_eq!(
            monthly(300, cycle(IntervalType::Weekly, 1)),
            Decimal::from(1300)
        );
        assert_eq!(
            monthly(600, cycle(IntervalType::Weekly, 2)),
            Decimal::from(1300)
        );
        assert_eq!(
            monthly(120, cycle(IntervalType::Daily, 1)),
            Decimal::from(3650)
        );
    }

    #[test]
    fn only_the_sum_is_rounded_half_away_from_zero() {
        // Three memberships of 1000 every 3 months: 333.33… each, exactly 1000 together.
        let third = monthly(1000, cycle(IntervalType::Monthly, 3));
        assert_eq!(total_minor([third, third, third]), 1000);
        assert_eq!(total_minor([third]), 333);
        // 999 a year is 83.25 a month; 1002 a year 83.5, rounded up.
        assert_eq!(
            total_minor([monthly(999, cycle(IntervalType::Annually, 1))]),
            83
        );
        assert_eq!(
            total_minor([monthly(1002, cycle(IntervalType::Annually, 1))]),
            84
        );
        assert_eq!(total_minor([]), 0);
    }
}
