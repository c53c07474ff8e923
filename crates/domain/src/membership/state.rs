//! A membership's billing state and the rules that read it or schedule it: when the engine acts
//! next and what it does then, the next charge date a record shows, what a period costs. The
//! transitions that move it are [`super::lifecycle`]'s (the engine's own steps),
//! [`super::settlement`]'s (answers to charge attempts) and [`super::terms`]' (updates).

use chrono::{DateTime, Utc};

use super::{directive_for, ChargeDirective, ScheduledChange};
use crate::calendar::{period_starting, BillingCycle, Period};
use crate::coupon::Discount;
use crate::invoice::{period_invoice, period_invoice_with_usage, InvoiceLine, InvoicePlan};
use crate::price::Price;
use crate::schedule::dunning_retry_at;
use crate::status::{next_billing_date, MembershipStatus};
use crate::tax::Taxation;

/// Everything of a membership that its billing rules read and change (DESIGN §3–§4). The store
/// keeps it in the membership's row; the rules are its methods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MembershipState {
    /// Lifecycle status.
    pub status: MembershipStatus,
    /// The price per period (`totalAmount`) and the parts it was given as.
    pub price: Price,
    /// The billing cycle.
    pub cycle: BillingCycle,
    /// No cycle starts at or after this instant.
    pub end_date: Option<DateTime<Utc>>,
    /// Current billing period, once the first payment started it.
    pub current_period: Option<Period>,
    /// Credit in minor units, applied first at every charge.
    pub credit_balance: i64,
    /// When the renewal charge that started dunning failed.
    pub dunning_failed_at: Option<DateTime<Utc>>,
    /// Dunning retries made since then.
    pub dunning_retries: i64,
    /// When the engine must next look at this membership; `None` when nothing is scheduled.
    pub next_action_at: Option<DateTime<Utc>>,
    /// Forced outcomes of recurring attempts (sandbox testing).
    pub charge_emitter_queue: Option<Vec<ChargeDirective>>,
    /// Recurring charge attempts made so far (the queue's position).
    pub recurring_attempts: i64,
    /// When it was canceled.
    pub canceled_at: Option<DateTime<Utc>>,
    /// The free trial it starts at its checkout, in days, when it has one.
    pub trial_days: Option<u32>,
    /// When its trial ends (or ended), once the trial started.
    pub trial_end: Option<DateTime<Utc>>,
    /// When `SUBSCRIPTION_TRIAL_WILL_END` is due; `None` once sent, or without a trial.
    pub trial_notice_at: Option<DateTime<Utc>>,
    /// Its coupon, while the coupon still discounts period invoices.
    pub discount: Option<Discount>,
    /// What a coupon took off the current period's invoice: the period's paid share is the price
    /// less this (what unused time is credited at, [`crate::invoice`]).
    pub period_discount: i64,
    /// When a Paused membership resumes by itself.
    pub resume_at: Option<DateTime<Utc>>,
    /// Terms the next renewal applies (`"effective": "nextPeriod"`).
    pub scheduled: Option<ScheduledChange>,
}

/// What the engine does with a membership whose next action is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DueAction {
    /// Incomplete past its deadline: expire it.
    Expire,
    /// Its `endDate` arrived: complete it.
    Complete,
    /// Active at the end of its period: renew it.
    Renew,
    /// PastDue: retry its open invoice.
    Retry,
    /// Trialing, three days before the trial ends: notify (`SUBSCRIPTION_TRIAL_WILL_END`).
    NotifyTrialEnd,
    /// Paused, its `resumeAt` arrived: resume and renew.
    Resume,
    /// Nothing to charge: only reschedule ([`MembershipState::wait`]).
    Wait,
}

impl MembershipState {
    /// When the engine must next act on a membership in good standing: the end of its current
    /// period, or its `endDate` when that comes first; for a Trialing one also its trial notice,
    /// and for a Paused one its `resumeAt` (or `endDate`) alone.
    pub fn next_scheduled_action(&self) -> Option<DateTime<Utc>> {
        match self.status {
            MembershipStatus::Paused => earliest(self.resume_at, self.end_date),
            MembershipStatus::Trialing => earliest(
                earliest(self.trial_notice_at, self.current_period.map(|p| p.end)),
                self.end_date,
            ),
            _ => earliest(self.current_period.map(|p| p.end), self.end_date),
        }
    }

    /// The date of the next charge attempt, as the membership record shows it
    /// ([`next_billing_date`]): the next renewal of an Active membership (none once `endDate`
    /// stops the cycles), the next dunning retry of a PastDue one, and none otherwise.
    pub fn next_billing_date(&self) -> Option<DateTime<Utc>> {
        next_billing_date(
            self.status,
            self.current_period.map(|p| p.end),
            self.next_action_at,
            self.end_date,
        )
    }

    /// When the change scheduled for the next period applies (`pendingUpdate.effectiveAt`): at
    /// the end of the current period, or for a Paused membership at its `resumeAt` (none while
    /// it is paused until resumed). `None` without a scheduled change.
    pub fn scheduled_change_at(&self) -> Option<DateTime<Utc>> {
        self.scheduled.as_ref()?;
        match self.status {
            MembershipStatus::Paused => self.resume_at,
            _ => self.current_period.map(|p| p.end),
        }
    }

    /// When the next renewal would charge if the membership paid what it owes at `at`: for an
    /// Incomplete one, the end of the first period, starting `at` (of its trial, when it has
    /// one); for a PastDue or Unpaid one, the end of its current period if that is still ahead.
    /// None at or after `endDate`, and none for a membership that is over.
    pub fn next_charge_once_paid(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self.status {
            MembershipStatus::Incomplete => match self.trial_days {
                Some(days) => super::trial::trial_end(at, days),
                None => period_starting(at, &self.cycle).map(|p| p.end),
            },
            status if status.is_terminal() => None,
            _ => self.current_period.map(|p| p.end).filter(|end| *end > at),
        }
        .filter(|date| self.before_end(*date))
    }

    /// The invoice of one period at the current price, less its coupon's discount, taxed by
    /// `taxation`, less credit; `name` (the subscription's) describes its line.
    pub fn period_invoice(&self, name: &str, taxation: &Taxation) -> InvoicePlan {
        period_invoice(
            name,
            self.price,
            self.discount.as_ref(),
            self.credit_balance,
            taxation,
        )
    }

    /// The renewal of a membership whose period ended: the next period and its invoice, at the
    /// terms a scheduled change sets when there is one (and less the coupon's discount).
    /// `None` when no period follows.
    pub fn next_renewal(&self, name: &str, taxation: &Taxation) -> Option<(Period, InvoicePlan)> {
        self.renewal_with_usage(name, taxation, Vec::new())
    }

    /// [`Self::next_renewal`] with `usage` lines billing the ended period in arrears beside
    /// the next period's price (DESIGN §19).
    pub fn renewal_with_usage(
        &self,
        name: &str,
        taxation: &Taxation,
        usage: Vec<InvoiceLine>,
    ) -> Option<(Period, InvoicePlan)> {
        let (price, cycle) = match &self.scheduled {
            Some(change) => (change.price, change.cycle),
            None => (self.price, self.cycle),
        };
        let period = period_starting(self.current_period?.end, &cycle)?;
        let plan = period_invoice_with_usage(
            name,
            price,
            usage,
            self.discount.as_ref(),
            self.credit_balance,
            taxation,
        );
        Some((period, plan))
    }

    /// What the sandbox makes of the latest recurring attempt (the `recurring_attempts`-th):
    /// the `chargeEmitterQueue` item of that ordinal, or success past the queue's end and
    /// without one (DESIGN §4, [`directive_for`]).
    pub fn recurring_directive(&self) -> &ChargeDirective {
        directive_for(
            self.charge_emitter_queue.as_deref().unwrap_or_default(),
            u64::try_from(self.recurring_attempts).unwrap_or(0),
        )
    }

    /// What the engine does at `at`, its next action being due: expire an Incomplete
    /// membership; complete one that is not over whose `endDate` arrived; notify a Trialing one
    /// whose trial notice is due before its trial ends; renew an Active one, or a Trialing one
    /// (its period is the trial: the renewal is its first charge); retry a PastDue one; resume a
    /// Paused one whose `resumeAt` arrived; otherwise only [`Self::wait`].
    pub fn due_action(&self, at: DateTime<Utc>) -> DueAction {
        let end_reached = self.end_date.is_some_and(|end| end <= at);
        let notice_due = self.trial_notice_at.is_some_and(|notice| notice <= at)
            && self.current_period.is_some_and(|p| p.end > at);
        match self.status {
            MembershipStatus::Incomplete => DueAction::Expire,
            MembershipStatus::Active
            | MembershipStatus::PastDue
            | MembershipStatus::Unpaid
            | MembershipStatus::Trialing
            | MembershipStatus::Paused
                if end_reached =>
            {
                DueAction::Complete
            }
            MembershipStatus::Trialing if notice_due => DueAction::NotifyTrialEnd,
            MembershipStatus::Active | MembershipStatus::Trialing => DueAction::Renew,
            MembershipStatus::PastDue => DueAction::Retry,
            MembershipStatus::Paused if self.resume_at.is_some_and(|r| r <= at) => {
                DueAction::Resume
            }
            _ => DueAction::Wait,
        }
    }

    /// Nothing to charge at `at`: an Unpaid membership waits for payment, or for its `endDate`
    /// if that is still ahead; one that is over has nothing scheduled.
    pub fn wait(&mut self, at: DateTime<Utc>) {
        self.next_action_at = match self.status {
            MembershipStatus::Unpaid => self.end_date.filter(|end| *end > at),
            _ => None,
        };
    }

    /// Recomputes the next action after the terms changed (an earlier or removed `endDate`, a
    /// new period): Active, Trialing and Paused as [`Self::next_scheduled_action`] says, PastDue
    /// at its next dunning retry, Unpaid at its `endDate`, each at the `endDate` when that comes
    /// first. Other statuses keep theirs.
    pub fn reschedule(&mut self) {
        self.next_action_at = match self.status {
            MembershipStatus::Active | MembershipStatus::Trialing | MembershipStatus::Paused => {
                self.next_scheduled_action()
            }
            MembershipStatus::PastDue => earliest(
                self.dunning_failed_at
                    .and_then(|failed| self.next_retry_after(failed)),
                self.end_date,
            ),
            MembershipStatus::Unpaid => self.end_date,
            _ => self.next_action_at,
        };
    }

    /// When the next dunning retry is due, the dunning having started at `failed_at` and
    /// [`Self::dunning_retries`](MembershipState::dunning_retries) retries made; `None` once
    /// they are all made.
    pub(super) fn next_retry_after(&self, failed_at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        dunning_retry_at(
            failed_at,
            u32::try_from(self.dunning_retries).unwrap_or(u32::MAX),
        )
    }

    /// Whether a charge at `date` comes before the `endDate`, if there is one.
    fn before_end(&self, date: DateTime<Utc>) -> bool {
        self.end_date.is_none_or(|end| date < end)
    }
}

/// The earlier of two optional instants; either one when the other is `None`.
pub(super) fn earliest(
    a: Option<DateTime<Utc>>,
    b: Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::{active_state, any_instant, any_state};
    use super::*;
    use crate::schedule::DUNNING_MAX_RETRIES;
    use chrono::TimeDelta;
    use proptest::prelude::*;

    proptest! {
        /// An Active membership's next action is never before its period started nor after the
        /// period ends, and never after its `endDate`.
        #[test]
        fn an_active_membership_acts_within_its_period(m in active_state()) {
            let period = m.current_period.expect("an active state has a period");
            let next = m.next_scheduled_action().expect("a period schedules an action");
            prop_assert!(next >= period.start);
            prop_assert!(next <= period.end);
            prop_assert!(m.end_date.is_none_or(|end| next <= end));
        }

        /// The record never shows a charge at or after the `endDate`, and shows one only for an
        /// Active, Trialing, PastDue or Paused membership.
        #[test]
        fn no_billing_date_at_or_after_the_end(m in any_state()) {
            if let Some(date) = m.next_billing_date() {
                prop_assert!(m.end_date.is_none_or(|end| date < end));
                prop_assert!(matches!(
                    m.status,
                    MembershipStatus::Active
                        | MembershipStatus::Trialing
                        | MembershipStatus::PastDue
                        | MembershipStatus::Paused
                ));
            }
        }

        /// A renewal starts where the current period ends: the calendar never moves backwards
        /// nor leaves a gap, and the invoice bills exactly the price, by card or credit.
        #[test]
        fn a_renewal_follows_the_current_period(m in active_state()) {
            let current = m.current_period.expect("an active state has a period");
            let (next, plan) = m.next_renewal("Gold", &crate::tax::Taxation::none()).expect("a period follows");
            prop_assert_eq!(next.start, current.end);
            prop_assert!(next.end > next.start);
            prop_assert_eq!(plan.amount_due + plan.credit_applied, m.price.per_period());
            prop_assert!(plan.credit_after >= 0);
        }

        /// Rescheduling a PastDue membership lands on a dunning retry (1, 3 or 5 days after the
        /// failure) or on its `endDate`, never later than the `endDate`.
        #[test]
        fn a_past_due_membership_is_rescheduled_to_a_retry_or_its_end(
            mut m in any_state(),
            failed in any_instant(),
            retries in 0i64..=i64::from(DUNNING_MAX_RETRIES) + 1,
        ) {
            m.status = MembershipStatus::PastDue;
            m.dunning_failed_at = Some(failed);
            m.dunning_retries = retries;
            m.reschedule();
            let retry_days = [1, 3, 5].map(|days| failed + TimeDelta::days(days));
            match m.next_action_at {
                Some(next) => {
                    prop_assert!(m.end_date.is_none_or(|end| next <= end));
                    prop_assert!(retry_days.contains(&next) || Some(next) == m.end_date);
                }
                None => prop_assert!(m.end_date.is_none() && retries >= 3),
            }
        }

        /// A due action never renews or retries a membership whose `endDate` has come, and
        /// waiting schedules nothing at or before `at`.
        #[test]
        fn due_actions_respect_the_end_date(mut m in any_state(), at in any_instant()) {
            let action = m.due_action(at);
            if m.end_date.is_some_and(|end| end <= at) {
                prop_assert!(!matches!(action, DueAction::Renew | DueAction::Retry));
            }
            if action == DueAction::Wait {
                m.wait(at);
                prop_assert!(m.next_action_at.is_none_or(|next| next > at));
            }
        }

        /// What a checkout announces as the next charge is never at or after the `endDate`, and
        /// for an Incomplete membership it is one cycle after the payment.
        #[test]
        fn a_checkout_announces_a_charge_before_the_end(m in any_state(), at in any_instant()) {
            if let Some(next) = m.next_charge_once_paid(at) {
                prop_assert!(next > at);
                prop_assert!(m.end_date.is_none_or(|end| next < end));
                if m.status == MembershipStatus::Incomplete {
                    prop_assert_eq!(Some(next), period_starting(at, &m.cycle).map(|p| p.end));
                }
            }
        }
    }

    #[test]
    fn next_scheduled_action_is_the_earlier_of_period_end_and_end_date() {
        let a = Some(DateTime::<Utc>::MIN_UTC);
        let b = Some(DateTime::<Utc>::MAX_UTC);
        assert_eq!(earliest(a, b), a);
        assert_eq!(earliest(b, a), a);
        assert_eq!(earliest(None, b), b);
        assert_eq!(earliest(a, None), a);
        assert_eq!(earliest(None, None), None);
    }
}
