//! Membership rules that are not calendar or money arithmetic: field rules of the create and
//! update bodies and the test-only `chargeEmitterQueue` here; the billing state and its
//! transitions in [`MembershipState`] (DESIGN §3–§4); what its status lets the merchant and the
//! customer do ([`can_pause`], [`accepts_coupon`], [`can_switch_price`]). The price is
//! [`crate::price`].

use chrono::{DateTime, Months, NaiveDateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

mod debit;
mod final_usage;
mod guards;
mod lifecycle;
mod pause;
mod settlement;
mod state;
#[cfg(test)]
mod strategies;
mod switch;
mod terms;
mod trial;

pub use guards::{accepts_coupon, can_pause, PauseRequest, PromotionCode};
pub use lifecycle::Renewed;
pub use settlement::{EmailKind, FirstInvoice, InvoiceChange, RecurringAttempt, Settlement};
pub use state::{DueAction, MembershipState};
pub use switch::{can_switch_price, CatalogOffer};
pub use terms::{CycleOutOfRange, Proration, ScheduledChange, Terms};
pub use trial::TRIAL_NOTICE_LEAD;

/// Longest `subscriptionName` / `name`, in characters.
pub const MAX_NAME_CHARS: usize = 250;

/// How far ahead of now an `endDate` must be.
pub const END_DATE_MIN_LEAD: TimeDelta = TimeDelta::hours(1);

/// How far ahead of now an `endDate` may be: 100 years (in calendar months). With cycles of at
/// most three years, every date derived from it stays centuries inside what the API can write.
pub const END_DATE_MAX_LEAD_MONTHS: u32 = 1200;

/// The largest `quantity`: a billion units. Each unit costs at least one minor unit, and the
/// price per period is held to [`MAX_AMOUNT_MINOR`](crate::money::MAX_AMOUNT_MINOR) as well.
pub const MAX_QUANTITY: i64 = 1_000_000_000;

/// `subscriptionName` (create) and `name` (update): non-blank, at most 250 characters.
pub fn subscription_name(input: &str) -> Result<String, String> {
    if input.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if input.chars().count() > MAX_NAME_CHARS {
        return Err(format!("must be at most {MAX_NAME_CHARS} characters"));
    }
    Ok(input.to_string())
}

/// `endDate`: UTC `YYYY-MM-DDTHH:mm:ss` (a trailing `Z` is accepted), at least one hour and at
/// most 100 years after `now`.
pub fn end_date(input: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    end_date_window(parse_end_date(input)?, now)
}

/// The form of `endDate` alone: UTC `YYYY-MM-DDTHH:mm:ss`, a trailing `Z` accepted. Every
/// field has exactly its width (chrono alone would take `2027-1-5T1:2:3`).
pub fn parse_end_date(input: &str) -> Result<DateTime<Utc>, String> {
    const FORM: &[u8; 19] = b"0000-00-00T00:00:00";
    let invalid = || "must be a UTC date and time in the form YYYY-MM-DDTHH:mm:ss".to_string();
    let text = input.strip_suffix('Z').unwrap_or(input);
    let shaped = text.len() == FORM.len()
        && text.bytes().zip(FORM).all(|(byte, form)| match form {
            b'0' => byte.is_ascii_digit(),
            separator => byte == *separator,
        });
    if !shaped {
        return Err(invalid());
    }
    Ok(NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
        .map_err(|_| invalid())?
        .and_utc())
}

/// The window `endDate` must fall in: `end`, when it is at least [`END_DATE_MIN_LEAD`] and at
/// most [`END_DATE_MAX_LEAD_MONTHS`] after `now`.
pub fn end_date_window(end: DateTime<Utc>, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    if end < now + END_DATE_MIN_LEAD {
        return Err("must be at least 1 hour in the future".into());
    }
    let latest = now.checked_add_months(Months::new(END_DATE_MAX_LEAD_MONTHS));
    if latest.is_none_or(|latest| end > latest) {
        return Err("must be at most 100 years in the future".into());
    }
    Ok(end)
}

/// The longest free trial, in days (two years).
pub const MAX_TRIAL_DAYS: u32 = 730;

/// `trialDays` (of a membership or a catalog price): an integer from 1 to [`MAX_TRIAL_DAYS`].
pub fn trial_days(days: i64) -> Result<u32, String> {
    match u32::try_from(days) {
        Ok(n) if (1..=MAX_TRIAL_DAYS).contains(&n) => Ok(n),
        _ => Err(format!("must be an integer from 1 to {MAX_TRIAL_DAYS}")),
    }
}

/// `resumeAt` of a pause: the form of `endDate` ([`parse_end_date`]), after `now` and at most 100
/// years ahead.
pub fn resume_at(input: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
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

/// `quantity`: an integer from 1 to [`MAX_QUANTITY`].
pub fn quantity(quantity: i64) -> Result<i64, String> {
    if quantity < 1 {
        Err("must be greater than 0".into())
    } else if quantity > MAX_QUANTITY {
        Err(format!("must be at most {MAX_QUANTITY}"))
    } else {
        Ok(quantity)
    }
}

/// The outcome a `chargeEmitterQueue` item forces on a recurring charge attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChargeDirective {
    /// `true` for `Success`, `false` for `Rejected`.
    pub succeed: bool,
    /// The decline message for `Rejected` items.
    pub description: String,
}

/// Decline message of a `Rejected` item without a description.
pub const DEFAULT_REJECTION: &str = "Insufficient funds.";

/// One `chargeEmitterQueue` item: `transactionStatus` `Success` or `Rejected` in any letter case;
/// `description` optional, defaulting to [`DEFAULT_REJECTION`] for rejections.
pub fn charge_directive(
    status: &str,
    description: Option<&str>,
) -> Result<ChargeDirective, String> {
    let succeed = match status.to_ascii_lowercase().as_str() {
        "success" => true,
        "rejected" => false,
        _ => return Err("must be Success or Rejected".into()),
    };
    let description = match description {
        Some(text) if !text.trim().is_empty() => text.to_string(),
        _ if succeed => String::new(),
        _ => DEFAULT_REJECTION.to_string(),
    };
    Ok(ChargeDirective {
        succeed,
        description,
    })
}

/// The outcome of a recurring attempt past the end of the queue, or of one without a queue:
/// success (the spec's `chargeEmitterQueue` rules 2 and 3).
pub static SUCCEED: ChargeDirective = ChargeDirective {
    succeed: true,
    description: String::new(),
};

/// The sandbox outcome of the `ordinal`-th recurring attempt (1-based; renewals and dunning
/// retries count alike): item N decides attempt N; past the end of the queue, or with an empty
/// one, the attempt succeeds ([`SUCCEED`]) whatever test card the customer has. Only
/// recurring attempts have a directive: the card decides first payments, pay-now and proration
/// charges.
pub fn directive_for(queue: &[ChargeDirective], ordinal: u64) -> &ChargeDirective {
    ordinal
        .checked_sub(1)
        .and_then(|index| usize::try_from(index).ok())
        .and_then(|index| queue.get(index))
        .unwrap_or(&SUCCEED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::{billing_dates, period_starting, BillingCycle, IntervalType};
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 23, 10, 0, 0).unwrap()
    }

    #[test]
    fn end_date_needs_an_hour_of_lead() {
        assert!(end_date("2026-11-23T11:00:00", now()).is_ok());
        assert!(end_date("2026-11-23T11:00:00Z", now()).is_ok());
        assert!(end_date("2026-11-23T10:59:59", now()).is_err());
        assert!(end_date("2026-11-23", now()).is_err());
        assert!(end_date("2026-11-23T11:00:00+01:00", now()).is_err());
        assert!(end_date("2026-02-30T11:00:00", now()).is_err());
    }

    #[test]
    fn end_date_is_at_most_a_century_ahead() {
        assert!(end_date("2126-11-23T10:00:00", now()).is_ok());
        assert_eq!(
            end_date("2126-11-23T10:00:01", now()),
            Err("must be at most 100 years in the future".to_string())
        );
        assert!(end_date("9999-12-31T23:59:59", now()).is_err());
        let last = DateTime::<Utc>::MAX_UTC;
        assert!(end_date_window(last, last - TimeDelta::days(1)).is_err());
    }

    #[test]
    fn quantities() {
        assert_eq!(quantity(1), Ok(1));
        assert_eq!(quantity(MAX_QUANTITY), Ok(MAX_QUANTITY));
        assert!(quantity(0).is_err());
        assert!(quantity(-3).is_err());
        assert_eq!(
            quantity(MAX_QUANTITY + 1),
            Err("must be at most 1000000000".to_string())
        );
        assert!(quantity(i64::MAX).is_err());
    }

    #[test]
    fn end_date_form_and_lead_are_separate_checks() {
        let parsed = parse_end_date("2026-11-23T10:30:00").unwrap();
        assert!(end_date_window(parsed, now()).is_err());
        assert!(end_date_window(parsed, now() - TimeDelta::minutes(30)).is_ok());
        assert!(parse_end_date("2026-11-23T10:30").is_err());
        assert!(parse_end_date("2027-1-5T01:02:03").is_err());
        assert!(parse_end_date("+2027-01-05T01:02:03").is_err());
        assert!(parse_end_date(" 2027-01-05T01:02:03").is_err());
        assert!(parse_end_date("2027-01-05T01:02:03ZZ").is_err());
    }

    #[test]
    fn resume_dates() {
        assert!(resume_at("2026-11-23T10:00:01Z", now()).is_ok());
        assert!(resume_at("2026-11-23T10:00:00", now()).is_err());
        assert!(resume_at("2126-11-23T10:00:00", now()).is_ok());
        assert!(resume_at("2126-11-23T10:00:01", now()).is_err());
        assert!(resume_at("tomorrow", now()).is_err());
    }

    #[test]
    fn trial_lengths() {
        assert_eq!(trial_days(1), Ok(1));
        assert_eq!(trial_days(730), Ok(730));
        assert!(trial_days(0).is_err());
        assert!(trial_days(731).is_err());
        assert!(trial_days(-1).is_err());
        assert!(trial_days(i64::MAX).is_err());
    }

    #[test]
    fn names() {
        assert!(subscription_name("Gold").is_ok());
        assert!(subscription_name(" ").is_err());
        assert!(subscription_name(&"é".repeat(250)).is_ok());
        assert!(subscription_name(&"é".repeat(251)).is_err());
    }

    #[test]
    fn directives() {
        let rejected = charge_directive("REJECTED", None).unwrap();
        assert!(!rejected.succeed);
        assert_eq!(rejected.description, DEFAULT_REJECTION);
        let custom = charge_directive("rejected", Some("Do not honor.")).unwrap();
        assert_eq!(custom.description, "Do not honor.");
        assert!(charge_directive("success", None).unwrap().succeed);
        assert!(charge_directive("declined", None).is_err());
        let queue = vec![rejected.clone(), custom.clone()];
        assert_eq!(directive_for(&queue, 1), &rejected);
        assert_eq!(directive_for(&queue, 2), &custom);
    }

    #[test]
    fn past_the_queue_every_recurring_attempt_succeeds() {
        let rejected = charge_directive("Rejected", None).unwrap();
        let queue = vec![rejected.clone()];
        assert_eq!(directive_for(&queue, 1), &rejected);
        for ordinal in [2, 3, 100, u64::MAX] {
            assert!(directive_for(&queue, ordinal).succeed, "attempt {ordinal}");
        }
        for ordinal in [1, 2, 7] {
            assert!(
                directive_for(&[], ordinal).succeed,
                "no queue, attempt {ordinal}"
            );
        }
        assert!(directive_for(&queue, 0).succeed, "ordinals start at 1");
    }

    proptest! {
        /// Whatever `endDate` and billing cycle the rules accept at a time up to 2200, every
        /// period the membership can have, up to the one in progress at its end date (or the
        /// next thousand without one), ends on a date the API can write.
        #[test]
        fn accepted_inputs_give_writable_period_ends(
            now_secs in 0i64..7_258_118_400,
            end_secs in 0i64..3_200_000_000,
            t in prop::sample::select(IntervalType::ALL.to_vec()),
            count in 0u32..=1200,
            with_end in any::<bool>(),
        ) {
            let now = DateTime::from_timestamp(now_secs, 0).unwrap();
            let end = now + TimeDelta::seconds(end_secs);
            let end = if with_end { end_date_window(end, now).ok() } else { None };
            let Ok(cycle) = BillingCycle::new(t, count) else { return Ok(()) };
            let last_writable = Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap();
            let starts: Vec<_> = billing_dates(now, &cycle, end).take(1000).collect();
            let last = period_starting(*starts.last().unwrap(), &cycle);
            prop_assert!(last.is_some_and(|p| p.end <= last_writable));
        }
    }
}
