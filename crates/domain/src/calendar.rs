//! The billing calendar: when each cycle of a membership starts and ends.
//!
//! Monthly and Annually cycles add calendar months to the *previous* billing date and clamp the
//! day to the last day of a shorter month; the clamped day then sticks (Jan 31 → Feb 28 →
//! Mar 28 → Apr 28; in a leap year Jan 31 → Feb 29 → Mar 29; Annually Feb 29 → Feb 28). Daily and
//! Weekly cycles add exact 24-hour days. The time of day is always preserved.
//!
//! Date arithmetic returns `Option`: `None` only when the result would fall outside the range
//! chrono can represent (around year 262,000). A cycle [`BillingCycle::new`] accepts spans at
//! most three years, so no membership gets near it.

use std::fmt;

use chrono::{DateTime, Months, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

/// The unit of a billing cycle. Serialized as its PascalCase name (`"Monthly"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IntervalType {
    /// Every 24 hours.
    Daily,
    /// Every 7 days.
    Weekly,
    /// Every calendar month, clamped to the month's last day.
    Monthly,
    /// Every 12 calendar months, clamped to the month's last day.
    Annually,
}

impl IntervalType {
    /// Every interval type, in increasing length.
    pub const ALL: [IntervalType; 4] = [
        IntervalType::Daily,
        IntervalType::Weekly,
        IntervalType::Monthly,
        IntervalType::Annually,
    ];

    /// Parses `Daily`, `Weekly`, `Monthly` or `Annually`, case-insensitively.
    pub fn parse(input: &str) -> Result<IntervalType, CalendarError> {
        IntervalType::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(input))
            .ok_or(CalendarError::UnknownIntervalType)
    }

    /// The largest `intervalCount` of this unit: three years' worth, like Stripe's limit
    /// (Daily 1095, Weekly 156, Monthly 36, Annually 3). A cycle therefore never spans more than
    /// [`MAX_CYCLE_DAYS`], so every period end is a few years from a date the service already
    /// holds, never beyond the dates the API can write.
    pub const fn max_count(self) -> u32 {
        match self {
            IntervalType::Daily => 1095,
            IntervalType::Weekly => 156,
            IntervalType::Monthly => 36,
            IntervalType::Annually => 3,
        }
    }

    /// The PascalCase name, as used in the API and in storage.
    pub fn as_str(&self) -> &'static str {
        match self {
            IntervalType::Daily => "Daily",
            IntervalType::Weekly => "Weekly",
            IntervalType::Monthly => "Monthly",
            IntervalType::Annually => "Annually",
        }
    }
}

impl fmt::Display for IntervalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The largest `intervalCount` of any unit (Daily's): the `maximum` the OpenAPI document states.
pub const MAX_INTERVAL_COUNT: u32 = IntervalType::Daily.max_count();

/// The longest billing cycle in days: three years, one of them a leap year.
pub const MAX_CYCLE_DAYS: i64 = 3 * 365 + 1;

/// A billing cycle: `interval_count` units of `interval_type` between charges
/// (Weekly × 2 = every two weeks). Build it with [`BillingCycle::new`] to keep `interval_count`
/// within `1..=interval_type.max_count()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BillingCycle {
    /// The unit of the cycle.
    pub interval_type: IntervalType,
    /// How many units make one cycle; at least 1.
    pub interval_count: u32,
}

impl BillingCycle {
    /// A billing cycle, rejecting an `interval_count` of 0 or above
    /// [`IntervalType::max_count`].
    pub fn new(interval_type: IntervalType, interval_count: u32) -> Result<Self, CalendarError> {
        if interval_count == 0 {
            return Err(CalendarError::IntervalCountTooSmall);
        }
        if interval_count > interval_type.max_count() {
            return Err(CalendarError::IntervalCountTooLarge(interval_type));
        }
        Ok(BillingCycle {
            interval_type,
            interval_count,
        })
    }
}

/// Why a billing cycle was rejected. The messages are written for an API field error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalendarError {
    /// The interval type is not one of the four known names.
    UnknownIntervalType,
    /// The interval count is 0.
    IntervalCountTooSmall,
    /// The interval count is above the type's [`IntervalType::max_count`].
    IntervalCountTooLarge(IntervalType),
}

impl fmt::Display for CalendarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalendarError::UnknownIntervalType => {
                f.write_str("must be one of Daily, Weekly, Monthly, Annually")
            }
            CalendarError::IntervalCountTooSmall => f.write_str("must be an integer of at least 1"),
            CalendarError::IntervalCountTooLarge(t) => write!(
                f,
                "must be at most {} for {t}: a billing cycle is at most 3 years",
                t.max_count()
            ),
        }
    }
}

impl std::error::Error for CalendarError {}

/// The billing date one cycle after `previous`.
///
/// Daily and Weekly add `24 h × count` and `7 × 24 h × count`. Monthly adds `count` calendar
/// months and Annually `12 × count`, clamping the day to the target month's last day; since the
/// next call starts from the clamped date, the shifted day sticks. `None` when the result is
/// beyond chrono's representable range, or for an `interval_count` of 0 (a cycle that would
/// never advance; [`BillingCycle::new`] rejects it).
pub fn next_billing_date(previous: DateTime<Utc>, cycle: &BillingCycle) -> Option<DateTime<Utc>> {
    let count = cycle.interval_count;
    if count == 0 {
        return None;
    }
    match cycle.interval_type {
        IntervalType::Daily => previous.checked_add_signed(TimeDelta::try_days(count.into())?),
        IntervalType::Weekly => previous.checked_add_signed(TimeDelta::try_weeks(count.into())?),
        IntervalType::Monthly => previous.checked_add_months(Months::new(count)),
        IntervalType::Annually => previous.checked_add_months(Months::new(count.checked_mul(12)?)),
    }
}

/// A billing period, `start` inclusive and `end` exclusive; `end` is the next billing date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Period {
    /// First instant of the period: a billing date.
    pub start: DateTime<Utc>,
    /// First instant after the period: the next billing date.
    pub end: DateTime<Utc>,
}

impl Period {
    /// Length of the period in whole seconds.
    pub fn seconds(&self) -> i64 {
        (self.end - self.start).num_seconds()
    }

    /// Whole seconds from `now` to the end of the period, clamped to `0..=self.seconds()`.
    pub fn remaining_seconds(&self, now: DateTime<Utc>) -> i64 {
        (self.end - now)
            .num_seconds()
            .clamp(0, self.seconds().max(0))
    }
}

/// The period that starts at `start` and ends one cycle later. `None` under the same
/// (unreachable in practice) condition as [`next_billing_date`].
pub fn period_starting(start: DateTime<Utc>, cycle: &BillingCycle) -> Option<Period> {
    let end = next_billing_date(start, cycle)?;
    Some(Period { start, end })
}

/// Whether a cycle starting at `start` may begin: always without an end date, otherwise only
/// strictly before it ("no cycle starts at or after endDate").
pub fn cycle_starts_before_end(start: DateTime<Utc>, end_date: Option<DateTime<Utc>>) -> bool {
    end_date.is_none_or(|end| start < end)
}

/// Every billing date of a membership: `first`, then successive [`next_billing_date`] values,
/// stopping before the first date at or after `end_date` (endless without one, until chrono's
/// date range runs out).
pub fn billing_dates(
    first: DateTime<Utc>,
    cycle: &BillingCycle,
    end_date: Option<DateTime<Utc>>,
) -> impl Iterator<Item = DateTime<Utc>> {
    let cycle = *cycle;
    std::iter::successors(Some(first), move |previous| {
        next_billing_date(*previous, &cycle)
    })
    .take_while(move |date| cycle_starts_before_end(*date, end_date))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Datelike, NaiveDate, TimeZone};
    use proptest::prelude::*;

    fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, 9, 30, 15)
            .single()
            .expect("test date is valid")
    }

    fn monthly(count: u32) -> BillingCycle {
        BillingCycle::new(IntervalType::Monthly, count).expect("count is positive")
    }

    fn dates(first: DateTime<Utc>, cycle: BillingCycle, n: usize) -> Vec<DateTime<Utc>> {
        billing_dates(first, &cycle, None).take(n).collect()
    }

    fn days(list: &[DateTime<Utc>]) -> Vec<String> {
        list.iter()
            .map(|d| d.format("%Y-%m-%d").to_string())
            .collect()
    }

    #[test]
    fn interval_type_names() {
        assert_eq!(IntervalType::parse("monthly"), Ok(IntervalType::Monthly));
        assert_eq!(IntervalType::parse("ANNUALLY"), Ok(IntervalType::Annually));
        assert_eq!(
            IntervalType::parse("Yearly"),
            Err(CalendarError::UnknownIntervalType)
        );
        assert_eq!(
            IntervalType::parse(""),
            Err(CalendarError::UnknownIntervalType)
        );
        for t in IntervalType::ALL {
            assert_eq!(IntervalType::parse(t.as_str()), Ok(t));
            assert_eq!(t.to_string(), t.as_str());
        }
    }

    #[test]
    fn billing_cycle_rejects_zero_count() {
        assert_eq!(
            BillingCycle::new(IntervalType::Daily, 0),
            Err(CalendarError::IntervalCountTooSmall)
        );
    }

    #[test]
    fn billing_cycle_is_at_most_three_years() {
        for (t, max) in [
            (IntervalType::Daily, 1095),
            (IntervalType::Weekly, 156),
            (IntervalType::Monthly, 36),
            (IntervalType::Annually, 3),
        ] {
            assert!(BillingCycle::new(t, max).is_ok(), "{t}");
            assert_eq!(
                BillingCycle::new(t, max + 1),
                Err(CalendarError::IntervalCountTooLarge(t))
            );
        }
        assert!(BillingCycle::new(IntervalType::Monthly, u32::MAX).is_err());
        assert_eq!(
            CalendarError::IntervalCountTooLarge(IntervalType::Monthly).to_string(),
            "must be at most 36 for Monthly: a billing cycle is at most 3 years"
        );
        assert_eq!(MAX_INTERVAL_COUNT, 1095);
    }

    #[test]
    fn rule1_31st_renews_on_last_day_of_shorter_months() {
        // Jan 31 → Feb 28 in a common year; a Mar 31 start → Apr 30.
        assert_eq!(
            days(&dates(at(2027, 1, 31), monthly(1), 2)),
            ["2027-01-31", "2027-02-28"]
        );
        assert_eq!(
            days(&dates(at(2027, 3, 31), monthly(1), 2)),
            ["2027-03-31", "2027-04-30"]
        );
    }

    #[test]
    fn rule2_30th_renews_on_last_day_of_february() {
        assert_eq!(
            days(&dates(at(2027, 1, 30), monthly(1), 2)),
            ["2027-01-30", "2027-02-28"]
        );
        assert_eq!(
            days(&dates(at(2028, 1, 30), monthly(1), 2)),
            ["2028-01-30", "2028-02-29"]
        );
    }

    #[test]
    fn rule3_shifted_day_sticks() {
        assert_eq!(
            days(&dates(at(2027, 1, 31), monthly(1), 4)),
            ["2027-01-31", "2027-02-28", "2027-03-28", "2027-04-28"]
        );
    }

    #[test]
    fn rule4_leap_years_are_respected() {
        assert_eq!(
            days(&dates(at(2028, 1, 31), monthly(1), 3)),
            ["2028-01-31", "2028-02-29", "2028-03-29"]
        );
    }

    #[test]
    fn rule5_billed_once_per_month() {
        // A year and a month, first date included: 13 dates in 13 distinct consecutive months.
        let list = dates(at(2027, 1, 31), monthly(1), 13);
        let months: Vec<(i32, u32)> = list.iter().map(|d| (d.year(), d.month())).collect();
        let expected: Vec<(i32, u32)> = (0..13)
            .map(|i| (2027 + i / 12, 1 + i as u32 % 12))
            .collect();
        assert_eq!(months, expected);
    }

    #[test]
    fn thirteen_monthly_dates_from_leap_january_31() {
        let list = dates(at(2028, 1, 31), monthly(1), 13);
        assert_eq!(
            days(&list),
            [
                "2028-01-31",
                "2028-02-29",
                "2028-03-29",
                "2028-04-29",
                "2028-05-29",
                "2028-06-29",
                "2028-07-29",
                "2028-08-29",
                "2028-09-29",
                "2028-10-29",
                "2028-11-29",
                "2028-12-29",
                "2029-01-29",
            ]
        );
        assert!(list
            .iter()
            .all(|d| d.format("%H:%M:%S").to_string() == "09:30:15"));
    }

    #[test]
    fn annually_on_february_29() {
        let annually = BillingCycle::new(IntervalType::Annually, 1).expect("count is positive");
        assert_eq!(
            days(&dates(at(2028, 2, 29), annually, 3)),
            ["2028-02-29", "2029-02-28", "2030-02-28"]
        );
    }

    #[test]
    fn daily_weekly_and_multi_month_cycles() {
        let every_2_days = BillingCycle::new(IntervalType::Daily, 2).expect("count is positive");
        let every_2_weeks = BillingCycle::new(IntervalType::Weekly, 2).expect("count is positive");
        assert_eq!(
            next_billing_date(at(2027, 2, 27), &every_2_days),
            Some(at(2027, 3, 1))
        );
        assert_eq!(
            next_billing_date(at(2027, 12, 25), &every_2_weeks),
            Some(at(2028, 1, 8))
        );
        assert_eq!(
            next_billing_date(at(2027, 11, 30), &monthly(3)),
            Some(at(2028, 2, 29))
        );
    }

    #[test]
    fn end_date_stops_cycles_at_or_after_it() {
        let end = at(2027, 4, 28);
        let list: Vec<_> = billing_dates(at(2027, 1, 31), &monthly(1), Some(end)).collect();
        assert_eq!(days(&list), ["2027-01-31", "2027-02-28", "2027-03-28"]);
        let later = end + TimeDelta::seconds(1);
        assert_eq!(
            billing_dates(at(2027, 1, 31), &monthly(1), Some(later)).count(),
            4
        );
        assert_eq!(billing_dates(end, &monthly(1), Some(end)).count(), 0);
        assert!(cycle_starts_before_end(end, None));
    }

    #[test]
    fn period_lengths() {
        let period = period_starting(at(2027, 2, 1), &monthly(1)).expect("in range");
        assert_eq!(period.end, at(2027, 3, 1));
        assert_eq!(period.seconds(), 28 * 86_400);
        assert_eq!(period.remaining_seconds(at(2027, 2, 15)), 14 * 86_400);
        assert_eq!(period.remaining_seconds(at(2026, 1, 1)), 28 * 86_400);
        assert_eq!(period.remaining_seconds(at(2028, 1, 1)), 0);
    }

    #[test]
    fn extreme_inputs_do_not_panic() {
        let far = at(9999, 12, 31);
        let huge = |interval_type| BillingCycle {
            interval_type,
            interval_count: u32::MAX,
        };
        for t in IntervalType::ALL {
            let _ = next_billing_date(far, &huge(t));
            let _ = next_billing_date(DateTime::<Utc>::MAX_UTC, &huge(t));
            assert!(next_billing_date(far, &BillingCycle::new(t, 1).expect("positive")).is_some());
            let zero = BillingCycle {
                interval_type: t,
                interval_count: 0,
            };
            assert_eq!(next_billing_date(far, &zero), None);
            assert_eq!(billing_dates(far, &zero, None).count(), 1);
        }
    }

    fn any_start() -> impl Strategy<Value = DateTime<Utc>> {
        start_in(1970..=9999)
    }

    fn start_in(years: std::ops::RangeInclusive<i32>) -> impl Strategy<Value = DateTime<Utc>> {
        (years, 1u32..=12, 1u32..=31, 0u32..86_400).prop_map(|(y, m, d, secs)| {
            let date = (1..=d)
                .rev()
                .find_map(|day| NaiveDate::from_ymd_opt(y, m, day))
                .expect("day 1 always exists");
            let time = chrono::NaiveTime::from_num_seconds_from_midnight_opt(secs, 0)
                .expect("seconds are within a day");
            date.and_time(time).and_utc()
        })
    }

    fn any_cycle() -> impl Strategy<Value = BillingCycle> {
        prop::sample::select(IntervalType::ALL.to_vec())
            .prop_flat_map(|t| (Just(t), 1..=t.max_count()))
            .prop_map(|(t, n)| BillingCycle::new(t, n).expect("count is within bounds"))
    }

    /// The last instant a response can write as `YYYY-MM-DDTHH:mm:ssZ`.
    fn last_writable() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap()
    }

    proptest! {
        #[test]
        fn periods_are_contiguous_and_increasing(start in any_start(), cycle in any_cycle()) {
            let mut period = period_starting(start, &cycle).expect("in range");
            for _ in 0..24 {
                prop_assert!(period.start < period.end);
                prop_assert_eq!(period.start.time(), period.end.time());
                let next = period_starting(period.end, &cycle).expect("in range");
                prop_assert_eq!(next.start, period.end);
                period = next;
            }
        }

        #[test]
        fn monthly_bills_exactly_once_per_calendar_month(start in any_start()) {
            let list = dates(start, monthly(1), 40);
            for pair in list.windows(2) {
                let month_index = |d: &DateTime<Utc>| d.year() * 12 + d.month0() as i32;
                prop_assert_eq!(month_index(&pair[1]), month_index(&pair[0]) + 1);
            }
        }

        #[test]
        fn day_of_month_never_increases(start in any_start(), count in 1u32..=24, annual in any::<bool>()) {
            let t = if annual { IntervalType::Annually } else { IntervalType::Monthly };
            let cycle = BillingCycle::new(t, count.min(t.max_count())).expect("count is in bounds");
            let list = dates(start, cycle, 30);
            for pair in list.windows(2) {
                prop_assert!(pair[1].day() <= pair[0].day());
            }
        }

        /// Whatever count `BillingCycle::new` accepts, a cycle spans at most three years, so from
        /// any start up to 2200 the next thousand renewals all exist and fall before year 10000.
        #[test]
        fn accepted_cycles_stay_representable(
            t in prop::sample::select(IntervalType::ALL.to_vec()),
            count in prop_oneof![0u32..=1200, any::<u32>()],
            start in start_in(1970..=2199),
        ) {
            let Ok(cycle) = BillingCycle::new(t, count) else {
                prop_assert!(count == 0 || count > t.max_count());
                return Ok(());
            };
            prop_assert!(count <= MAX_INTERVAL_COUNT);
            let list = dates(start, cycle, 1001);
            prop_assert_eq!(list.len(), 1001);
            for pair in list.windows(2) {
                prop_assert!(pair[1] - pair[0] <= TimeDelta::days(MAX_CYCLE_DAYS));
            }
            prop_assert!(*list.last().unwrap() <= last_writable());
        }

        #[test]
        fn never_at_or_after_end_date(start in any_start(), cycle in any_cycle(), span in 0i64..(5 * 366 * 86_400)) {
            let end = start + TimeDelta::seconds(span);
            let list: Vec<_> = billing_dates(start, &cycle, Some(end)).collect();
            prop_assert!(list.iter().all(|d| *d < end));
            prop_assert!(list.windows(2).all(|p| p[0] < p[1]));
            if let Some(last) = list.last() {
                let next = next_billing_date(*last, &cycle).expect("in range");
                prop_assert!(next >= end);
            } else {
                prop_assert!(span == 0);
            }
        }
    }
}
