//! Membership rules that are not calendar or money arithmetic: field rules of the create and
//! update bodies, the plan's price per period, and the test-only `chargeEmitterQueue`.

use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

/// Longest `subscriptionName` / `name`, in characters.
pub const MAX_NAME_CHARS: usize = 250;

/// How far ahead of now an `endDate` must be.
pub const END_DATE_MIN_LEAD: TimeDelta = TimeDelta::hours(1);

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

/// `endDate`: UTC `YYYY-MM-DDTHH:mm:ss` (a trailing `Z` is accepted), at least one hour after
/// `now`.
pub fn end_date(input: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    end_date_lead(parse_end_date(input)?, now)
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

/// The lead `endDate` needs: `end`, when it is at least [`END_DATE_MIN_LEAD`] after `now`.
pub fn end_date_lead(end: DateTime<Utc>, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    if end < now + END_DATE_MIN_LEAD {
        return Err("must be at least 1 hour in the future".into());
    }
    Ok(end)
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

/// What a plan costs, in minor units of its currency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Price {
    /// Price of one unit per period; for plans created with `totalAmount` only, the total.
    pub per_unit: i64,
    /// Units; 1 for plans created with `totalAmount` only.
    pub quantity: i64,
}

impl Price {
    /// The amount charged per period; `None` on overflow.
    pub fn per_period(&self) -> Option<i64> {
        self.per_unit.checked_mul(self.quantity)
    }
}

/// Checks the create body's pricing: `totalAmount`, and when both `pricePerUnit` and
/// `quantity` are given, that their product is exactly the total. Returns the effective price.
pub fn plan_price(
    total: i64,
    per_unit: Option<i64>,
    quantity: Option<i64>,
) -> Result<Price, String> {
    match (per_unit, quantity) {
        (Some(per_unit), Some(quantity)) => {
            if per_unit.checked_mul(quantity) == Some(total) {
                Ok(Price { per_unit, quantity })
            } else {
                Err("must equal pricePerUnit multiplied by quantity".into())
            }
        }
        (Some(per_unit), None) if per_unit == total => Ok(Price {
            per_unit,
            quantity: 1,
        }),
        (Some(_), None) => Err("must equal pricePerUnit when quantity is not given".into()),
        (None, Some(quantity)) => {
            if quantity > 0 && total % quantity == 0 {
                Ok(Price {
                    per_unit: total / quantity,
                    quantity,
                })
            } else {
                Err("must be divisible by quantity into whole minor units".into())
            }
        }
        (None, None) => Ok(Price {
            per_unit: total,
            quantity: 1,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

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
    fn end_date_form_and_lead_are_separate_checks() {
        let parsed = parse_end_date("2026-11-23T10:30:00").unwrap();
        assert!(end_date_lead(parsed, now()).is_err());
        assert!(end_date_lead(parsed, now() - TimeDelta::minutes(30)).is_ok());
        assert!(parse_end_date("2026-11-23T10:30").is_err());
        assert!(parse_end_date("2027-1-5T01:02:03").is_err());
        assert!(parse_end_date("+2027-01-05T01:02:03").is_err());
        assert!(parse_end_date(" 2027-01-05T01:02:03").is_err());
        assert!(parse_end_date("2027-01-05T01:02:03ZZ").is_err());
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

    #[test]
    fn prices() {
        assert_eq!(
            plan_price(3000, Some(1000), Some(3)),
            Ok(Price {
                per_unit: 1000,
                quantity: 3
            })
        );
        assert!(plan_price(3001, Some(1000), Some(3)).is_err());
        assert_eq!(plan_price(500, None, None).unwrap().per_period(), Some(500));
        assert_eq!(plan_price(600, None, Some(3)).unwrap().per_unit, 200);
        assert!(plan_price(601, None, Some(3)).is_err());
        assert!(plan_price(600, Some(500), None).is_err());
    }
}
