//! Pausing and resuming (DESIGN §15). A pause ends the paid period at once: its unused paid time
//! becomes credit (as for an interval change), and nothing is charged or retried while the
//! membership is Paused. Resuming (at once, or when `resumeAt` arrives) starts a new period then,
//! charged as a renewal, credit first.

use chrono::{DateTime, Utc};

use super::MembershipState;
use crate::calendar::Period;
use crate::invoice::{pause_credit, CreditPlan};
use crate::status::{transition, LifecycleEvent, TransitionError};
use crate::tax::Taxation;

impl MembershipState {
    /// Pauses the membership at `at` until `resume_at` (or until resumed): Paused, the current
    /// period ending at `at`, its unused paid time credited (taxed by `taxation`, the rates it
    /// was billed with), as a credit note ([`CreditPlan`]) added to the credit balance. Only an
    /// Active membership can be paused; otherwise nothing changes.
    pub fn pause(
        &mut self,
        at: DateTime<Utc>,
        resume_at: Option<DateTime<Utc>>,
        taxation: &Taxation,
    ) -> Result<Option<CreditPlan>, TransitionError> {
        transition(self.status, LifecycleEvent::Paused)?;
        let credit = self
            .current_period
            .filter(|p| p.end > at)
            .and_then(|p| pause_credit(self.price, p, at, self.period_discount, taxation));
        self.apply(LifecycleEvent::Paused);
        if let Some(p) = self.current_period {
            self.current_period = Some(Period {
                start: p.start.min(at),
                end: p.end.min(at),
            });
        }
        if let Some(credit) = &credit {
            self.credit_balance = self.credit_balance.saturating_add(credit.amount);
        }
        self.period_discount = 0;
        self.resume_at = resume_at;
        self.reschedule();
        Ok(credit)
    }

    /// A Paused membership's new `resumeAt` (`None`: until resumed).
    pub fn set_resume_at(&mut self, resume_at: Option<DateTime<Utc>>) {
        self.resume_at = resume_at;
        self.reschedule();
    }

    /// Resumes a Paused membership at `at`: Active, its period ending at `at`, so that the
    /// renewal due at once starts the new period then. Returns whether it resumed; any other
    /// status changes nothing.
    pub fn resume(&mut self, at: DateTime<Utc>) -> bool {
        if !self.apply(LifecycleEvent::Resumed) {
            return false;
        }
        self.resume_at = None;
        let start = self.current_period.map_or(at, |p| p.start.min(at));
        self.current_period = Some(Period { start, end: at });
        self.next_action_at = self.next_scheduled_action();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::{active_state, any_instant};
    use super::super::DueAction;
    use super::*;
    use crate::status::MembershipStatus;
    use chrono::TimeDelta;
    use proptest::prelude::*;

    proptest! {
        /// A pause credits exactly the unused paid time (never more than the period's paid
        /// share), schedules nothing but the resume, and a resume renews at once from then on.
        #[test]
        fn a_pause_credits_the_unused_time_and_a_resume_renews_then(
            mut m in active_state(),
            fraction in 0u32..=100,
            pause_days in 1i64..400,
            with_resume in any::<bool>(),
        ) {
            m.end_date = None;
            let period = m.current_period.unwrap();
            let at = period.start + TimeDelta::seconds(period.seconds() * i64::from(fraction) / 100);
            let credit_before = m.credit_balance;
            let resume_at = with_resume.then(|| at + TimeDelta::days(pause_days));
            let credit = m.pause(at, resume_at, &Taxation::none()).expect("Active pauses");
            prop_assert_eq!(m.status, MembershipStatus::Paused);
            prop_assert_eq!(m.current_period.unwrap().end, at.min(period.end));
            let credited = m.credit_balance - credit_before;
            prop_assert!(credited >= 0);
            prop_assert!(credited <= m.price.per_period());
            prop_assert_eq!(credit.as_ref().map_or(0, |c| c.amount), credited);
            prop_assert_eq!(m.next_action_at, resume_at);
            prop_assert!(m.next_billing_date() == resume_at);
            let again = m.pause(at, None, &Taxation::none());
            prop_assert!(again.is_err(), "a Paused membership is not paused again");
            let resumed_at = resume_at.unwrap_or(at + TimeDelta::days(pause_days));
            if with_resume {
                prop_assert_eq!(m.due_action(resumed_at), DueAction::Resume);
            }
            prop_assert!(m.resume(resumed_at));
            prop_assert_eq!(m.status, MembershipStatus::Active);
            prop_assert_eq!(m.next_action_at, Some(resumed_at));
            prop_assert_eq!(m.due_action(resumed_at), DueAction::Renew);
            let (next, _) = m.next_renewal("Gold", &Taxation::none()).unwrap();
            prop_assert_eq!(next.start, resumed_at);
        }

        /// Only an Active membership pauses, and only a Paused one resumes.
        #[test]
        fn pause_and_resume_need_their_status(mut m in super::super::strategies::any_state(), at in any_instant()) {
            let before = m.clone();
            let paused = m.pause(at, None, &Taxation::none());
            prop_assert_eq!(paused.is_ok(), before.status == MembershipStatus::Active);
            let mut other = before.clone();
            prop_assert_eq!(other.resume(at), before.status == MembershipStatus::Paused);
            if before.status != MembershipStatus::Paused {
                prop_assert_eq!(other, before);
            }
        }
    }
}
