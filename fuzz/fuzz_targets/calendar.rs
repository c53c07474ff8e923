//! The billing calendar on arbitrary dates and cycles: no panic, periods always move forward,
//! monthly days only ever clamp downwards, and billing dates stop before the end date.
#![no_main]

use chrono::{DateTime, Datelike, Utc};
use libfuzzer_sys::fuzz_target;
use recur_domain::calendar::{billing_dates, period_starting, BillingCycle, IntervalType};

fuzz_target!(|data: &[u8]| {
    if data.len() < 14 {
        return;
    }
    let seconds = i64::from_le_bytes(data[0..8].try_into().unwrap()) % 400_000_000_000;
    let end_offset = i32::from_le_bytes(data[8..12].try_into().unwrap());
    let kind = [
        IntervalType::Daily,
        IntervalType::Weekly,
        IntervalType::Monthly,
        IntervalType::Annually,
    ][usize::from(data[12] % 4)];
    let count = u32::from(data[13]);
    let Some(start) = DateTime::<Utc>::from_timestamp(seconds, 0) else {
        return;
    };
    let Ok(cycle) = BillingCycle::new(kind, count) else {
        // Refused only outside 1 ..= three years' worth of intervals.
        assert!(count == 0 || count > kind.max_count(), "{kind:?} × {count}");
        return;
    };
    if let Some(period) = period_starting(start, &cycle) {
        assert!(period.end > period.start);
        assert!(period.seconds() > 0);
        if matches!(kind, IntervalType::Monthly | IntervalType::Annually) {
            assert!(period.end.day() <= period.start.day());
            assert_eq!(period.end.time(), period.start.time());
        }
    }
    let end = start.checked_add_signed(chrono::TimeDelta::seconds(i64::from(end_offset) * 60));
    let mut previous: Option<DateTime<Utc>> = None;
    for date in billing_dates(start, &cycle, end).take(64) {
        if let Some(previous) = previous {
            assert!(date > previous);
        }
        if let Some(end) = end {
            assert!(date < end);
        }
        previous = Some(date);
    }
});
