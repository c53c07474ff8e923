//! Free trials (DESIGN §15): a membership with `trialDays` starts Trialing at its checkout,
//! which saves the card without charging. Its first period is the trial; three days before it
//! ends the customer is told (`SUBSCRIPTION_TRIAL_WILL_END` and an e-mail), and at its end the
//! first charge runs as a renewal: Active when paid, PastDue and dunning when declined.

use chrono::{DateTime, TimeDelta, Utc};

use super::MembershipState;
use crate::calendar::Period;
use crate::status::{LifecycleEvent, MembershipStatus};

/// How long before a trial ends its customer is told.
pub const TRIAL_NOTICE_LEAD: TimeDelta = TimeDelta::days(3);

/// When a trial of `days` days starting at `start` ends.
pub(super) fn trial_end(start: DateTime<Utc>, days: u32) -> Option<DateTime<Utc>> {
    start.checked_add_signed(TimeDelta::days(i64::from(days)))
}

impl MembershipState {
    /// Whether its checkout starts a trial instead of charging: Incomplete, with `trialDays`.
    pub fn starts_with_trial(&self) -> bool {
        self.status == MembershipStatus::Incomplete && self.trial_days.is_some()
    }

    /// Its checkout saved a card at `at`: Trialing, the trial its first period, the notice due
    /// three days before the trial ends (at once for a trial of three days or less). Returns
    /// whether the trial started; one that cannot start changes nothing.
    pub fn trial_started(&mut self, at: DateTime<Utc>) -> bool {
        let Some(end) = self.trial_days.and_then(|days| trial_end(at, days)) else {
            return false;
        };
        if !self.starts_with_trial() || !self.apply(LifecycleEvent::TrialStarted) {
            return false;
        }
        self.current_period = Some(Period { start: at, end });
        self.trial_end = Some(end);
        self.trial_notice_at = Some((end - TRIAL_NOTICE_LEAD).max(at));
        self.reschedule();
        true
    }

    /// The trial-will-end notice went out: the next action is the trial's end.
    pub fn trial_notice_sent(&mut self) {
        self.trial_notice_at = None;
        self.reschedule();
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::{any_instant, any_state};
    use super::super::DueAction;
    use super::*;
    use crate::tax::Taxation;
    use proptest::prelude::*;

    proptest! {
        /// A trial starts only from Incomplete with trial days; it then lasts exactly its days,
        /// its notice falls at most three days before its end and never before it started, and
        /// the engine notifies before it renews.
        #[test]
        fn a_trial_lasts_its_days_and_is_announced_first(
            mut m in any_state(),
            at in any_instant(),
            days in proptest::option::of(1u32..=730),
        ) {
            m.trial_days = days;
            m.end_date = None;
            let before = m.clone();
            let started = m.trial_started(at);
            prop_assert_eq!(started, before.status == MembershipStatus::Incomplete && days.is_some());
            if !started {
                prop_assert_eq!(m, before);
                return Ok(());
            }
            let period = m.current_period.unwrap();
            let notice = m.trial_notice_at.unwrap();
            prop_assert_eq!(m.status, MembershipStatus::Trialing);
            prop_assert_eq!(period.start, at);
            prop_assert_eq!((period.end - period.start).num_days(), i64::from(days.unwrap()));
            prop_assert_eq!(m.trial_end, Some(period.end));
            prop_assert!(notice >= at && notice < period.end);
            prop_assert!(period.end - notice <= TRIAL_NOTICE_LEAD);
            prop_assert_eq!(m.next_action_at, Some(notice));
            prop_assert_eq!(m.due_action(notice), DueAction::NotifyTrialEnd);
            m.trial_notice_sent();
            prop_assert_eq!(m.next_action_at, Some(period.end));
            prop_assert_eq!(m.due_action(period.end), DueAction::Renew);
            let (next, plan) = m.next_renewal("Gold", &Taxation::none()).unwrap();
            prop_assert_eq!(next.start, period.end);
            let renewed = m.renewal_issued(next, &plan);
            prop_assert_eq!(m.trial_notice_at, None);
            prop_assert_eq!(renewed.status_changed, plan.amount_due == 0);
        }
    }
}
