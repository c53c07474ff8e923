//! Retry schedules: webhook delivery (DESIGN §5), webhook endpoints' health and secret overlap
//! (DESIGN §12), dunning and first-payment expiry (DESIGN §3).
//!
//! Every function takes the relevant past instant and returns when the next step is due; the
//! workers compare that with their (possibly test) clock.

use chrono::{DateTime, TimeDelta, Utc};

/// Attempts per webhook event: one immediate attempt and six retries, then `Undeliverable`.
pub const WEBHOOK_MAX_ATTEMPTS: u32 = 7;

/// Delay before attempts 2 to 7, each counted from the failure of the previous attempt.
const WEBHOOK_RETRY_DELAYS: [TimeDelta; 6] = [
    TimeDelta::minutes(5),
    TimeDelta::minutes(30),
    TimeDelta::hours(1),
    TimeDelta::hours(2),
    TimeDelta::hours(4),
    TimeDelta::hours(8),
];

/// The delay before the next webhook attempt after attempt `failed_attempt_number` (1-based)
/// failed: 5 min, 30 min, 1 h, 2 h, 4 h, 8 h. `None` after the 7th attempt (the event becomes
/// `Undeliverable`) and for the invalid attempt number 0.
pub fn webhook_retry_delay(failed_attempt_number: u32) -> Option<TimeDelta> {
    let index = usize::try_from(failed_attempt_number.checked_sub(1)?).ok()?;
    WEBHOOK_RETRY_DELAYS.get(index).copied()
}

/// When to make the next webhook attempt after attempt `failed_attempt_number` (1-based) failed
/// at `failed_at`. `None` when no attempt is left: the event is then `Undeliverable`.
pub fn webhook_next_attempt(
    failed_attempt_number: u32,
    failed_at: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    failed_at.checked_add_signed(webhook_retry_delay(failed_attempt_number)?)
}

/// How long an endpoint may fail every attempt before it is disabled (DESIGN §12).
pub const ENDPOINT_FAILING_LIMIT: TimeDelta = TimeDelta::days(5);

/// Whether an endpoint whose attempts have all failed since `failing_since` is disabled by a
/// failure at `failed_at`: once they span [`ENDPOINT_FAILING_LIMIT`].
pub fn endpoint_gives_up(failing_since: DateTime<Utc>, failed_at: DateTime<Utc>) -> bool {
    failed_at - failing_since >= ENDPOINT_FAILING_LIMIT
}

/// How long an endpoint's previous signing secret still signs after a rotation (DESIGN §12).
pub const SECRET_ROTATION_OVERLAP: TimeDelta = TimeDelta::hours(24);

/// Days after the first failed renewal charge at which the dunning retries run.
const DUNNING_RETRY_DAYS: [i64; 3] = [1, 3, 5];

/// Number of dunning retries after a failed renewal; when all fail the membership is Unpaid.
pub const DUNNING_MAX_RETRIES: u32 = DUNNING_RETRY_DAYS.len() as u32;

/// When the next dunning retry is due: 1, 3 and 5 days after `first_failure_at` (the failed
/// renewal charge), for `retries_done` = 0, 1, 2. `None` once all three retries are done: the
/// membership then becomes Unpaid.
pub fn dunning_retry_at(
    first_failure_at: DateTime<Utc>,
    retries_done: u32,
) -> Option<DateTime<Utc>> {
    let days = DUNNING_RETRY_DAYS.get(usize::try_from(retries_done).ok()?)?;
    first_failure_at.checked_add_signed(TimeDelta::days(*days))
}

/// The furthest one test-clock advance may move a clock: five years (1,827 days, leap days
/// included). It bounds the work one request does: every renewal, retry, webhook and
/// e-mail due on the way runs before the advance answers.
pub const TEST_CLOCK_MAX_ADVANCE: TimeDelta = TimeDelta::days(1_827);

/// Why a test clock at `from` may not move to `to`: `None` when it may (forward, or standing
/// still, by at most [`TEST_CLOCK_MAX_ADVANCE`]).
pub fn test_clock_refusal(from: DateTime<Utc>, to: DateTime<Utc>) -> Option<&'static str> {
    if to < from {
        Some("must not be before the clock's current time: a test clock only moves forward")
    } else if to - from > TEST_CLOCK_MAX_ADVANCE {
        Some("must be at most 1827 days (five years) after the clock's current time; advance in steps")
    } else {
        None
    }
}

/// How long an Incomplete membership waits for its first payment before it Expires.
pub const INCOMPLETE_EXPIRY: TimeDelta = TimeDelta::hours(23);

/// When an Incomplete membership created at `created_at` expires. `None` only beyond chrono's
/// representable date range.
pub fn incomplete_expires_at(created_at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    created_at.checked_add_signed(INCOMPLETE_EXPIRY)
}

/// Delays before re-sending an e-mail after failed attempt 1, 2, …: 1 min, 5 min, 30 min, 2 h,
/// 6 h; after the sixth failure the e-mail is given up.
const EMAIL_RETRY_DELAYS: [TimeDelta; 5] = [
    TimeDelta::minutes(1),
    TimeDelta::minutes(5),
    TimeDelta::minutes(30),
    TimeDelta::hours(2),
    TimeDelta::hours(6),
];

/// When to try an e-mail again after send attempt `failed_attempt_number` (1-based) failed at
/// `failed_at`; `None` when it is given up.
pub fn email_retry_at(
    failed_attempt_number: u32,
    failed_at: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let index = usize::try_from(failed_attempt_number.checked_sub(1)?).ok()?;
    failed_at.checked_add_signed(*EMAIL_RETRY_DELAYS.get(index)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2027, 3, 1, 12, 0, 0)
            .single()
            .expect("test date is valid")
    }

    #[test]
    fn an_endpoint_gives_up_after_five_days_of_failures() {
        let since = t0();
        assert!(!endpoint_gives_up(since, since));
        assert!(!endpoint_gives_up(
            since,
            since + TimeDelta::days(5) - TimeDelta::seconds(1)
        ));
        assert!(endpoint_gives_up(since, since + TimeDelta::days(5)));
        assert!(endpoint_gives_up(since, since + TimeDelta::days(9)));
    }

    #[test]
    fn webhook_schedule_has_seven_attempts() {
        let minutes: Vec<Option<i64>> = (0..=8)
            .map(|n| webhook_next_attempt(n, t0()).map(|at| (at - t0()).num_minutes()))
            .collect();
        assert_eq!(
            minutes,
            [
                None,
                Some(5),
                Some(30),
                Some(60),
                Some(120),
                Some(240),
                Some(480),
                None,
                None
            ]
        );
        assert_eq!(webhook_retry_delay(WEBHOOK_MAX_ATTEMPTS), None);
        assert!(webhook_retry_delay(WEBHOOK_MAX_ATTEMPTS - 1).is_some());
        assert_eq!(webhook_next_attempt(u32::MAX, t0()), None);
    }

    #[test]
    fn webhook_total_span_counts_from_each_failure() {
        // All attempts failing instantly: the last one runs 5m+30m+1h+2h+4h+8h = 15h35m later.
        let mut at = t0();
        let mut attempts = 1;
        while let Some(next) = webhook_next_attempt(attempts, at) {
            at = next;
            attempts += 1;
        }
        assert_eq!(attempts, WEBHOOK_MAX_ATTEMPTS);
        assert_eq!(at - t0(), TimeDelta::hours(15) + TimeDelta::minutes(35));
    }

    #[test]
    fn dunning_retries_on_days_1_3_5_then_unpaid() {
        let days: Vec<Option<i64>> = (0..=4)
            .map(|n| dunning_retry_at(t0(), n).map(|at| (at - t0()).num_days()))
            .collect();
        assert_eq!(days, [Some(1), Some(3), Some(5), None, None]);
        assert_eq!(dunning_retry_at(t0(), DUNNING_MAX_RETRIES), None);
        assert_eq!(DUNNING_MAX_RETRIES, 3);
    }

    #[test]
    fn incomplete_memberships_expire_after_23_hours() {
        assert_eq!(INCOMPLETE_EXPIRY, TimeDelta::hours(23));
        assert_eq!(
            incomplete_expires_at(t0()),
            Some(t0() + TimeDelta::hours(23))
        );
        assert_eq!(incomplete_expires_at(DateTime::<Utc>::MAX_UTC), None);
    }

    proptest! {
        #[test]
        fn schedules_never_panic(n in any::<u32>(), secs in any::<i64>()) {
            let at = DateTime::<Utc>::from_timestamp(secs % 8_000_000_000_000, 0)
                .unwrap_or(DateTime::<Utc>::MAX_UTC);
            let _ = webhook_next_attempt(n, at);
            let _ = dunning_retry_at(at, n);
            let _ = webhook_next_attempt(n, DateTime::<Utc>::MAX_UTC);
        }
    }

    #[test]
    fn email_backoff_gives_up_after_six_attempts() {
        let t = t0();
        assert_eq!(email_retry_at(1, t), Some(t + TimeDelta::minutes(1)));
        assert_eq!(email_retry_at(5, t), Some(t + TimeDelta::hours(6)));
        assert_eq!(email_retry_at(6, t), None);
        assert_eq!(email_retry_at(0, t), None);
    }

    #[test]
    fn a_test_clock_moves_forward_by_at_most_five_years() {
        let from: DateTime<Utc> = "2027-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(test_clock_refusal(from, from), None);
        assert_eq!(
            test_clock_refusal(from, from + TEST_CLOCK_MAX_ADVANCE),
            None
        );
        assert!(test_clock_refusal(from, from - TimeDelta::seconds(1)).is_some());
        assert!(
            test_clock_refusal(from, from + TEST_CLOCK_MAX_ADVANCE + TimeDelta::seconds(1))
                .is_some()
        );
    }
}
