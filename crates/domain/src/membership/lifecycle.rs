//! The engine's own steps on a membership (DESIGN §3): expiry, completion, cancellation, and
//! issuing a renewal or a dunning retry. Every status change goes through the status machine
//! ([`transition`]). The answers to the charges these steps start are [`super::settlement`]'s.

use chrono::{DateTime, Utc};

use super::{MembershipState, ScheduledChange};
use crate::calendar::Period;
use crate::invoice::InvoicePlan;
use crate::status::{transition, LifecycleEvent};

/// What issuing a renewal changed besides the period.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Renewed {
    /// The status changed (credit paid a Trialing membership's first period: Active).
    pub status_changed: bool,
    /// The scheduled change the renewal applied, if there was one.
    pub applied: Option<ScheduledChange>,
}

impl MembershipState {
    /// Applies `event` to the status if the status machine allows it; returns whether the
    /// status changed.
    pub fn apply(&mut self, event: LifecycleEvent) -> bool {
        match transition(self.status, event) {
            Ok(next) if next != self.status => {
                self.status = next;
                true
            }
            _ => false,
        }
    }

    /// An Incomplete membership reached its deadline without payment: Expired, nothing
    /// scheduled. Returns whether the status changed.
    pub fn expire(&mut self) -> bool {
        let changed = self.apply(LifecycleEvent::IncompleteTimedOut);
        self.next_action_at = None;
        changed
    }

    /// The membership's `endDate` arrived: Completed, no new cycle. Returns whether the status
    /// changed.
    pub fn complete(&mut self) -> bool {
        let changed = self.apply(LifecycleEvent::EndDateReached);
        self.next_action_at = None;
        changed
    }

    /// Cancels the membership at `at`: Canceled, no retry, no new cycle. Returns `false`, and
    /// changes nothing, when its status cannot be canceled (or it already is).
    pub fn cancel(&mut self, at: DateTime<Utc>) -> bool {
        if !self.apply(LifecycleEvent::Canceled) {
            return false;
        }
        self.canceled_at = Some(at);
        self.next_action_at = None;
        self.dunning_failed_at = None;
        true
    }

    /// The renewal invoice of `period` was issued with `plan`: the new period at the terms of a
    /// scheduled change (applied now), the credit and the coupon cycle it used, the trial over,
    /// and the next step. When the card is to be charged that is one more recurring attempt,
    /// which owns the next step until it is answered; when credit paid it all, the membership
    /// is in good standing (a Trialing one Active) and its next action as scheduled.
    pub fn renewal_issued(&mut self, period: Period, plan: &InvoicePlan) -> Renewed {
        let applied = self.scheduled.take();
        if let Some(change) = &applied {
            self.price = change.price;
            self.cycle = change.cycle;
        }
        self.current_period = Some(period);
        self.credit_balance = plan.credit_after;
        self.period_discount = plan.period_discount;
        self.discount = self.discount.take().and_then(|d| d.used());
        self.trial_notice_at = None;
        let mut status_changed = false;
        if plan.amount_due > 0 {
            self.recurring_attempts += 1;
            self.next_action_at = None;
        } else {
            status_changed = self.apply(LifecycleEvent::RenewalSucceeded);
            self.next_action_at = self.next_scheduled_action();
        }
        Renewed {
            status_changed,
            applied,
        }
    }

    /// A dunning retry of the open invoice is charged: one more recurring attempt, which owns
    /// the next step until it is answered.
    pub fn retry_started(&mut self) {
        self.recurring_attempts += 1;
        self.next_action_at = None;
    }

    /// A PastDue membership owes nothing any more (its invoice was paid another way): back in
    /// good standing. Returns whether the status changed.
    pub fn nothing_owed(&mut self) -> bool {
        self.recovered(LifecycleEvent::RetrySucceeded)
    }

    /// Paid what it owed (`event` says how): the status `event` leads to, dunning over, the
    /// next action as scheduled. Returns whether the status changed.
    pub(super) fn recovered(&mut self, event: LifecycleEvent) -> bool {
        let changed = self.apply(event);
        self.dunning_failed_at = None;
        self.dunning_retries = 0;
        self.next_action_at = self.next_scheduled_action();
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::{active_state, any_instant, any_state};
    use crate::status::MembershipStatus;
    use proptest::prelude::*;

    proptest! {
        /// Issuing a renewal moves the period forward, never backwards, keeps the credit
        /// non-negative, counts an attempt exactly when the card is charged and leaves the next
        /// step to that attempt.
        #[test]
        fn a_renewal_moves_the_period_forward(mut m in active_state()) {
            let before = m.clone();
            let (period, plan) = m.next_renewal("Gold", &crate::tax::Taxation::none()).expect("a period follows");
            m.renewal_issued(period, &plan);
            let after = m.current_period.expect("renewed");
            prop_assert!(after.start >= before.current_period.unwrap().end);
            prop_assert!(after.end > after.start);
            prop_assert!(m.credit_balance >= 0);
            prop_assert!(m.credit_balance <= before.credit_balance);
            let charged = plan.amount_due > 0;
            prop_assert_eq!(m.recurring_attempts, before.recurring_attempts + i64::from(charged));
            if charged {
                prop_assert_eq!(m.next_action_at, None);
            } else {
                prop_assert!(m.next_action_at.is_some_and(|next| next > before.current_period.unwrap().end
                    || m.end_date == Some(next)));
            }
        }

        /// A cancel is accepted exactly when the status machine allows it and the membership is
        /// not Canceled already; once accepted nothing is scheduled, and a refused one changes
        /// nothing.
        #[test]
        fn a_cancel_stops_everything_or_nothing(mut m in any_state(), at in any_instant()) {
            let before = m.clone();
            let accepted = m.cancel(at);
            prop_assert_eq!(
                accepted,
                before.status.can_cancel() && before.status != MembershipStatus::Canceled
            );
            if accepted {
                prop_assert_eq!(m.status, MembershipStatus::Canceled);
                prop_assert_eq!(m.next_action_at, None);
                prop_assert_eq!(m.dunning_failed_at, None);
                prop_assert_eq!(m.canceled_at, Some(at));
            } else {
                prop_assert_eq!(m, before);
            }
        }

        /// Expiry and completion leave nothing scheduled, and change the status only where the
        /// status machine allows it.
        #[test]
        fn expiry_and_completion_schedule_nothing(m in any_state()) {
            let (mut expired, mut completed) = (m.clone(), m.clone());
            let expired_changed = expired.expire();
            let completed_changed = completed.complete();
            prop_assert_eq!(expired.next_action_at, None);
            prop_assert_eq!(completed.next_action_at, None);
            prop_assert_eq!(expired_changed, m.status == MembershipStatus::Incomplete);
            prop_assert_eq!(completed_changed, matches!(
                m.status,
                MembershipStatus::Active
                    | MembershipStatus::PastDue
                    | MembershipStatus::Unpaid
                    | MembershipStatus::Trialing
                    | MembershipStatus::Paused
            ));
        }

        /// A PastDue membership that owes nothing is Active again with its dunning cleared.
        #[test]
        fn owing_nothing_ends_dunning(mut m in active_state(), failed in any_instant()) {
            m.status = MembershipStatus::PastDue;
            m.dunning_failed_at = Some(failed);
            m.dunning_retries = 2;
            prop_assert!(m.nothing_owed());
            prop_assert_eq!(m.status, MembershipStatus::Active);
            prop_assert_eq!((m.dunning_failed_at, m.dunning_retries), (None, 0));
            prop_assert_eq!(m.next_action_at, m.next_scheduled_action());
        }
    }
}
