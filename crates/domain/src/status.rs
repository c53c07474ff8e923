//! Membership and invoice statuses, and the membership lifecycle (DESIGN §3).
//!
//! | From | Event | Next |
//! |---|---|---|
//! | Incomplete | [`LifecycleEvent::CheckoutPaid`] | Active |
//! | Incomplete | [`LifecycleEvent::TrialStarted`] | Trialing |
//! | Trialing | [`LifecycleEvent::RenewalSucceeded`] (first charge at `trialEnd`) | Active |
//! | Trialing | [`LifecycleEvent::RenewalFailed`] | PastDue |
//! | Incomplete | [`LifecycleEvent::IncompleteTimedOut`] | Expired |
//! | Active | [`LifecycleEvent::RenewalSucceeded`] | Active |
//! | Active | [`LifecycleEvent::RenewalFailed`] | PastDue |
//! | PastDue, Unpaid | [`LifecycleEvent::RetrySucceeded`] | Active |
//! | PastDue | [`LifecycleEvent::RetriesExhausted`] | Unpaid |
//! | Active | [`LifecycleEvent::Paused`] | Paused |
//! | Paused | [`LifecycleEvent::Resumed`] | Active |
//! | Trialing, Active, PastDue, Unpaid, Paused | [`LifecycleEvent::EndDateReached`] | Completed |
//! | Incomplete, Trialing, Active, PastDue, Unpaid, Paused | [`LifecycleEvent::Canceled`] | Canceled |
//! | Canceled | [`LifecycleEvent::Canceled`] | Canceled (idempotent repeat) |
//!
//! Every other pair is rejected with a [`TransitionError`]. An Unpaid membership that settles
//! its open invoice (pay-now checkout) becomes Active again: DESIGN §3 stops its cycles only
//! "until paid". Trialing and Paused are beyond the interface document (DESIGN §15).

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The status of a membership. Serialized as its PascalCase name (`"PastDue"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MembershipStatus {
    /// Created, first payment not made yet.
    Incomplete,
    /// No first payment within 23 hours of creation. Terminal.
    Expired,
    /// Paid and renewing.
    Active,
    /// A renewal charge failed; dunning retries are scheduled.
    PastDue,
    /// Every dunning retry failed; no new cycles until the open invoice is paid.
    Unpaid,
    /// Canceled by the merchant. Terminal.
    Canceled,
    /// Its `endDate` was reached. Terminal.
    Completed,
    /// Card saved at checkout, first charge at `trialEnd` (beyond the spec: DESIGN §15).
    Trialing,
    /// Paused by the merchant: no charges, no dunning until resumed (beyond the spec: DESIGN §15).
    Paused,
}

impl MembershipStatus {
    /// Every membership status.
    pub const ALL: [MembershipStatus; 9] = [
        MembershipStatus::Incomplete,
        MembershipStatus::Expired,
        MembershipStatus::Active,
        MembershipStatus::PastDue,
        MembershipStatus::Unpaid,
        MembershipStatus::Canceled,
        MembershipStatus::Completed,
        MembershipStatus::Trialing,
        MembershipStatus::Paused,
    ];

    /// The PascalCase name, as used in the API, webhooks and storage.
    pub fn as_str(&self) -> &'static str {
        match self {
            MembershipStatus::Incomplete => "Incomplete",
            MembershipStatus::Expired => "Expired",
            MembershipStatus::Active => "Active",
            MembershipStatus::PastDue => "PastDue",
            MembershipStatus::Unpaid => "Unpaid",
            MembershipStatus::Canceled => "Canceled",
            MembershipStatus::Completed => "Completed",
            MembershipStatus::Trialing => "Trialing",
            MembershipStatus::Paused => "Paused",
        }
    }

    /// Parses a status name, case-insensitively; `None` for an unknown name.
    pub fn parse(input: &str) -> Option<MembershipStatus> {
        MembershipStatus::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(input))
    }

    /// Whether the membership is over for good: Canceled, Completed or Expired.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            MembershipStatus::Canceled | MembershipStatus::Completed | MembershipStatus::Expired
        )
    }

    /// Whether an update (price, quantity, cycle, end date, …) is accepted: every non-terminal
    /// status. Updating a terminal membership is a state conflict (409).
    pub fn can_update(&self) -> bool {
        !self.is_terminal()
    }

    /// Whether a pay-now checkout collects the membership's oldest open invoice: PastDue and
    /// Unpaid (their failed renewal; paying it makes them Active), Canceled and Completed (a
    /// renewal whose charge failed before the end, or a final usage invoice whose charge failed,
    /// stays Open; paying it leaves the membership as it is).
    pub fn pays_open_invoice(&self) -> bool {
        matches!(
            self,
            MembershipStatus::PastDue
                | MembershipStatus::Unpaid
                | MembershipStatus::Canceled
                | MembershipStatus::Completed
        )
    }

    /// Whether a cancel request is accepted: every non-terminal status, and Canceled itself,
    /// where a repeated cancel is an idempotent no-op. Completed and Expired cannot be canceled.
    pub fn can_cancel(&self) -> bool {
        transition(*self, LifecycleEvent::Canceled).is_ok()
    }
}

impl fmt::Display for MembershipStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The status of an invoice. Serialized as its PascalCase name (`"Uncollectible"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InvoiceStatus {
    /// Being prepared; not yet due.
    Draft,
    /// Due and not paid (a failed charge leaves it Open).
    Open,
    /// Settled, by a charge, by credit, or both.
    Paid,
    /// Canceled; will never be collected.
    Void,
    /// Given up on after collection failed.
    Uncollectible,
}

impl InvoiceStatus {
    /// Every invoice status.
    pub const ALL: [InvoiceStatus; 5] = [
        InvoiceStatus::Draft,
        InvoiceStatus::Open,
        InvoiceStatus::Paid,
        InvoiceStatus::Void,
        InvoiceStatus::Uncollectible,
    ];

    /// The PascalCase name, as used in the API, webhooks and storage.
    pub fn as_str(&self) -> &'static str {
        match self {
            InvoiceStatus::Draft => "Draft",
            InvoiceStatus::Open => "Open",
            InvoiceStatus::Paid => "Paid",
            InvoiceStatus::Void => "Void",
            InvoiceStatus::Uncollectible => "Uncollectible",
        }
    }

    /// Parses a status name, case-insensitively; `None` for an unknown name.
    pub fn parse(input: &str) -> Option<InvoiceStatus> {
        InvoiceStatus::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(input))
    }
}

impl fmt::Display for InvoiceStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something that happens to a membership and may change its status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LifecycleEvent {
    /// The first invoice was paid through checkout (or the sandbox pay helper).
    CheckoutPaid,
    /// 23 hours passed since creation without a first payment.
    IncompleteTimedOut,
    /// A renewal charge (possibly fully covered by credit) succeeded.
    RenewalSucceeded,
    /// A renewal charge was declined.
    RenewalFailed,
    /// The overdue invoice was paid: by a dunning retry or a pay-now checkout.
    RetrySucceeded,
    /// The last dunning retry failed.
    RetriesExhausted,
    /// The membership's `endDate` arrived; no further cycle starts.
    EndDateReached,
    /// The merchant canceled the membership.
    Canceled,
    /// Checkout saved the card of a membership with a trial; nothing was charged.
    TrialStarted,
    /// The merchant paused the membership.
    Paused,
    /// A paused membership resumed (at once, or its `resumeAt` arrived).
    Resumed,
}

impl LifecycleEvent {
    /// Every lifecycle event.
    pub const ALL: [LifecycleEvent; 11] = [
        LifecycleEvent::CheckoutPaid,
        LifecycleEvent::IncompleteTimedOut,
        LifecycleEvent::RenewalSucceeded,
        LifecycleEvent::RenewalFailed,
        LifecycleEvent::RetrySucceeded,
        LifecycleEvent::RetriesExhausted,
        LifecycleEvent::EndDateReached,
        LifecycleEvent::Canceled,
        LifecycleEvent::TrialStarted,
        LifecycleEvent::Paused,
        LifecycleEvent::Resumed,
    ];
}

/// An event that does not apply to a membership in its current status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransitionError {
    /// The membership's status.
    pub from: MembershipStatus,
    /// The event that was rejected.
    pub event: LifecycleEvent,
}

impl fmt::Display for TransitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} does not apply to a membership in status {}",
            self.event, self.from
        )
    }
}

impl std::error::Error for TransitionError {}

/// The status a membership in `from` moves to on `event`, per the table in this module's docs.
///
/// Canceling an already Canceled membership returns `Ok(Canceled)`: the cancel operation is
/// idempotent. Callers compare the result with `from` to know whether the status changed (and
/// a status-change webhook is due).
pub fn transition(
    from: MembershipStatus,
    event: LifecycleEvent,
) -> Result<MembershipStatus, TransitionError> {
    use LifecycleEvent as E;
    use MembershipStatus as S;
    match (from, event) {
        (S::Incomplete, E::CheckoutPaid) => Ok(S::Active),
        (S::Incomplete, E::IncompleteTimedOut) => Ok(S::Expired),
        (S::Incomplete, E::TrialStarted) => Ok(S::Trialing),
        (S::Active | S::Trialing, E::RenewalSucceeded) => Ok(S::Active),
        (S::Active | S::Trialing, E::RenewalFailed) => Ok(S::PastDue),
        (S::PastDue | S::Unpaid, E::RetrySucceeded) => Ok(S::Active),
        (S::PastDue, E::RetriesExhausted) => Ok(S::Unpaid),
        (S::Active, E::Paused) => Ok(S::Paused),
        (S::Paused, E::Resumed) => Ok(S::Active),
        (S::Trialing | S::Active | S::PastDue | S::Unpaid | S::Paused, E::EndDateReached) => {
            Ok(S::Completed)
        }
        (
            S::Incomplete
            | S::Trialing
            | S::Active
            | S::PastDue
            | S::Unpaid
            | S::Paused
            | S::Canceled,
            E::Canceled,
        ) => Ok(S::Canceled),
        _ => Err(TransitionError { from, event }),
    }
}

/// The date of a membership's next charge attempt, as its record shows it: the end of the
/// current period (`period_end`) of an Active membership, or of a Trialing one (its period is
/// the trial: the first charge falls at `trialEnd`), unless its `end_date` stops the cycles
/// first; the next dunning retry (`next_action_at`) of a PastDue one, or the `resumeAt` of a
/// Paused one, unless the `end_date` comes first; none otherwise.
pub fn next_billing_date(
    status: MembershipStatus,
    period_end: Option<DateTime<Utc>>,
    next_action_at: Option<DateTime<Utc>>,
    end_date: Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    let before_end = |at: &DateTime<Utc>| end_date.is_none_or(|end| *at < end);
    match status {
        MembershipStatus::Active | MembershipStatus::Trialing => period_end.filter(before_end),
        MembershipStatus::PastDue | MembershipStatus::Paused => next_action_at.filter(before_end),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LifecycleEvent as E;
    use MembershipStatus as S;

    #[test]
    fn the_next_billing_date_is_the_next_charge_before_the_end_date() {
        let at =
            |day: u32| chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 3, day, 0, 0, 0).single();
        let (period_end, retry) = (at(10), at(5));
        let date = |status, end| next_billing_date(status, period_end, retry, end);
        assert_eq!(date(S::Active, None), period_end);
        assert_eq!(date(S::Active, at(20)), period_end);
        assert_eq!(date(S::Active, at(10)), None);
        assert_eq!(date(S::PastDue, None), retry);
        assert_eq!(date(S::PastDue, at(5)), None);
        for status in [
            S::Incomplete,
            S::Unpaid,
            S::Canceled,
            S::Completed,
            S::Expired,
        ] {
            assert_eq!(date(status, None), None);
        }
    }

    /// Every allowed (from, event, next) triple; everything else must be rejected.
    const ALLOWED: [(S, E, S); 24] = [
        (S::Incomplete, E::CheckoutPaid, S::Active),
        (S::Incomplete, E::TrialStarted, S::Trialing),
        (S::Trialing, E::RenewalSucceeded, S::Active),
        (S::Trialing, E::RenewalFailed, S::PastDue),
        (S::Trialing, E::EndDateReached, S::Completed),
        (S::Trialing, E::Canceled, S::Canceled),
        (S::Active, E::Paused, S::Paused),
        (S::Paused, E::Resumed, S::Active),
        (S::Paused, E::EndDateReached, S::Completed),
        (S::Paused, E::Canceled, S::Canceled),
        (S::Incomplete, E::IncompleteTimedOut, S::Expired),
        (S::Active, E::RenewalSucceeded, S::Active),
        (S::Active, E::RenewalFailed, S::PastDue),
        (S::PastDue, E::RetrySucceeded, S::Active),
        (S::Unpaid, E::RetrySucceeded, S::Active),
        (S::PastDue, E::RetriesExhausted, S::Unpaid),
        (S::Active, E::EndDateReached, S::Completed),
        (S::PastDue, E::EndDateReached, S::Completed),
        (S::Unpaid, E::EndDateReached, S::Completed),
        (S::Incomplete, E::Canceled, S::Canceled),
        (S::Active, E::Canceled, S::Canceled),
        (S::PastDue, E::Canceled, S::Canceled),
        (S::Unpaid, E::Canceled, S::Canceled),
        (S::Canceled, E::Canceled, S::Canceled),
    ];

    #[test]
    fn pay_now_collects_past_due_unpaid_canceled_and_completed_memberships() {
        let paying: Vec<S> = S::ALL.into_iter().filter(S::pays_open_invoice).collect();
        assert_eq!(paying, [S::PastDue, S::Unpaid, S::Canceled, S::Completed]);
    }

    #[test]
    fn every_row_of_the_table() {
        for (from, event, next) in ALLOWED {
            assert_eq!(transition(from, event), Ok(next), "{from} + {event:?}");
        }
    }

    #[test]
    fn every_other_pair_is_rejected() {
        for from in S::ALL {
            for event in E::ALL {
                if !ALLOWED.iter().any(|(f, e, _)| *f == from && *e == event) {
                    assert_eq!(
                        transition(from, event),
                        Err(TransitionError { from, event }),
                        "{from} + {event:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn terminal_statuses_accept_nothing_but_a_repeated_cancel() {
        for from in S::ALL.into_iter().filter(S::is_terminal) {
            for event in E::ALL {
                let repeated_cancel = from == S::Canceled && event == E::Canceled;
                assert_eq!(
                    transition(from, event).is_ok(),
                    repeated_cancel,
                    "{from} + {event:?}"
                );
            }
        }
    }

    #[test]
    fn predicates() {
        let terminal: Vec<S> = S::ALL.into_iter().filter(S::is_terminal).collect();
        assert_eq!(terminal, [S::Expired, S::Canceled, S::Completed]);
        let updatable: Vec<S> = S::ALL.into_iter().filter(S::can_update).collect();
        assert_eq!(
            updatable,
            [
                S::Incomplete,
                S::Active,
                S::PastDue,
                S::Unpaid,
                S::Trialing,
                S::Paused
            ]
        );
        let cancelable: Vec<S> = S::ALL.into_iter().filter(S::can_cancel).collect();
        assert_eq!(
            cancelable,
            [
                S::Incomplete,
                S::Active,
                S::PastDue,
                S::Unpaid,
                S::Canceled,
                S::Trialing,
                S::Paused
            ]
        );
    }

    #[test]
    fn names_round_trip() {
        for status in S::ALL {
            assert_eq!(S::parse(status.as_str()), Some(status));
            assert_eq!(S::parse(&status.as_str().to_lowercase()), Some(status));
            assert_eq!(status.to_string(), status.as_str());
        }
        for status in InvoiceStatus::ALL {
            assert_eq!(InvoiceStatus::parse(status.as_str()), Some(status));
            assert_eq!(
                InvoiceStatus::parse(&status.as_str().to_uppercase()),
                Some(status)
            );
            assert_eq!(status.to_string(), status.as_str());
        }
        assert_eq!(S::parse("Cancelled"), None);
        assert_eq!(InvoiceStatus::parse(""), None);
    }

    #[test]
    fn serde_uses_the_names() {
        use serde::de::IntoDeserializer;
        let parsed: Result<S, serde::de::value::Error> =
            S::deserialize("PastDue".into_deserializer());
        assert_eq!(parsed, Ok(S::PastDue));
        let parsed: Result<InvoiceStatus, serde::de::value::Error> =
            InvoiceStatus::deserialize("Uncollectible".into_deserializer());
        assert_eq!(parsed, Ok(InvoiceStatus::Uncollectible));
    }

    #[test]
    fn error_message_is_readable() {
        let err = transition(S::Completed, E::Canceled).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Canceled does not apply to a membership in status Completed"
        );
    }
}
