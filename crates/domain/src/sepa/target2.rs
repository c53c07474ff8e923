//! The TARGET2 calendar SEPA collections run on, and the collection date of a debit.
//!
//! TARGET2 is closed on Saturdays and Sundays, 1 January, Good Friday, Easter Monday, 1 May and
//! 25 and 26 December; Easter comes from the `computus` crate's Gregorian computus.

use chrono::{Datelike, Days, NaiveDate, Weekday};

/// Whether TARGET2 settles on `day`.
pub fn is_business_day(day: NaiveDate) -> bool {
    if matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
        return false;
    }
    if matches!(
        (day.month(), day.day()),
        (1, 1) | (5, 1) | (12, 25) | (12, 26)
    ) {
        return false;
    }
    match easter(day.year()) {
        Some(easter) => {
            day != easter - Days::new(2) && Some(day) != easter.checked_add_days(Days::new(1))
        }
        None => true,
    }
}

/// Easter Sunday of `year` (Gregorian), for the years the computus covers (1583–9999).
fn easter(year: i32) -> Option<NaiveDate> {
    let date = computus::gregorian(year).ok()?;
    NaiveDate::from_ymd_opt(date.year, date.month, date.day)
}

/// The first TARGET2 business day on or after `day`.
pub fn on_or_after(day: NaiveDate) -> NaiveDate {
    let mut day = day;
    // At most four closed days follow one another (Good Friday to Easter Monday).
    while !is_business_day(day) {
        match day.succ_opt() {
            Some(next) => day = next,
            None => break,
        }
    }
    day
}

/// The collection date of a debit due on `due` whose pre-notification goes out on
/// `notified_on`: the due date when the notice leaves at least `lead_days` before it, else the
/// day `lead_days` after the notice; moved forward to a TARGET2 business day.
pub fn collection_date(due: NaiveDate, notified_on: NaiveDate, lead_days: u32) -> NaiveDate {
    let earliest = notified_on
        .checked_add_days(Days::new(u64::from(lead_days)))
        .unwrap_or(NaiveDate::MAX);
    on_or_after(due.max(earliest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn target2_holidays_and_weekends_are_closed() {
        // 2027: Good Friday 26 March, Easter Monday 29 March.
        for closed in [
            date(2027, 1, 1),
            date(2027, 3, 26),
            date(2027, 3, 29),
            date(2027, 5, 1),
            date(2027, 12, 25),
            date(2026, 12, 26),
            date(2026, 11, 28),
            date(2026, 11, 29),
        ] {
            assert!(!is_business_day(closed), "{closed}");
        }
        for open in [
            date(2027, 3, 25),
            date(2027, 3, 30),
            date(2026, 11, 27),
            date(2026, 12, 24),
        ] {
            assert!(is_business_day(open), "{open}");
        }
    }

    #[test]
    fn collection_moves_past_closed_days() {
        // Friday 25 December 2026: Christmas, Boxing Day on Saturday, then Sunday.
        assert_eq!(on_or_after(date(2026, 12, 25)), date(2026, 12, 28));
        // Good Friday 2027 to Easter Monday.
        assert_eq!(on_or_after(date(2027, 3, 26)), date(2027, 3, 30));
    }

    #[test]
    fn a_late_notice_pushes_the_collection() {
        // Notified in time: the due date (a Tuesday).
        assert_eq!(
            collection_date(date(2026, 12, 1), date(2026, 11, 20), 5),
            date(2026, 12, 1)
        );
        // Notified on the due date: lead days later, then the next business day.
        assert_eq!(
            collection_date(date(2026, 12, 1), date(2026, 12, 1), 5),
            date(2026, 12, 7)
        );
    }

    proptest! {
        #[test]
        fn a_collection_is_a_business_day_after_the_lead(
            due in 0u32..4000, notice_offset in -30i64..30, lead in 1u32..=14,
        ) {
            let due = date(2025, 1, 1) + Days::new(u64::from(due));
            let notified = due.checked_add_signed(chrono::Duration::days(notice_offset)).unwrap();
            let collected = collection_date(due, notified, lead);
            prop_assert!(is_business_day(collected));
            prop_assert!(collected >= due);
            prop_assert!(collected >= notified + Days::new(u64::from(lead)));
            // The first such day: every day between the bound and it is closed.
            let bound = due.max(notified + Days::new(u64::from(lead)));
            let mut day = bound;
            while day < collected {
                prop_assert!(!is_business_day(day));
                day = day.succ_opt().unwrap();
            }
        }
    }
}
