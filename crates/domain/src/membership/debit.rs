//! A SEPA debit the bank returned (DESIGN §18): the membership stood as paid since the debit was
//! made, and the money is not there.

use chrono::{DateTime, Utc};

use super::settlement::{RecurringAttempt, Settlement};
use super::MembershipState;
use crate::status::MembershipStatus;

impl MembershipState {
    /// A SEPA debit the bank returned (DESIGN §18): the membership stood as paid since the
    /// debit was made, and the money is not there. In good standing it fails as a declined
    /// renewal does (PastDue, dunning, the payment-failed e-mail with its pay-now link);
    /// already PastDue, as a declined retry. Canceled or completed memberships stay as they are.
    pub fn debit_returned(&mut self, at: DateTime<Utc>, last_change: DateTime<Utc>) -> Settlement {
        let attempt = match self.status {
            MembershipStatus::PastDue | MembershipStatus::Unpaid => RecurringAttempt::Retry,
            _ => RecurringAttempt::Renewal,
        };
        self.recurring_settled(attempt, 0, false, at, last_change)
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::active_state;
    use super::*;
    use crate::membership::EmailKind;
    use chrono::TimeDelta;
    use proptest::prelude::*;

    proptest! {
        /// A returned SEPA debit of a membership in good standing makes it PastDue with a retry
        /// scheduled after the return and the payment-failed e-mail; of a PastDue one, it
        /// counts as a failed retry (no second e-mail); a Canceled one stays as it is.
        #[test]
        fn a_returned_debit_starts_or_continues_dunning(
            mut m in active_state(),
            hours in 0i64..240,
            past_due in any::<bool>(),
        ) {
            m.end_date = None;
            let at = m.current_period.unwrap().start + TimeDelta::hours(hours);
            if past_due {
                m.recurring_settled(RecurringAttempt::Renewal, 100, false, at, at);
                let retries = m.dunning_retries;
                let settled = m.debit_returned(at, at);
                prop_assert_eq!(settled.email, None);
                prop_assert_eq!(m.dunning_retries, retries + 1);
                prop_assert!(matches!(m.status, MembershipStatus::PastDue | MembershipStatus::Unpaid));
            } else {
                let settled = m.debit_returned(at, at);
                prop_assert_eq!(m.status, MembershipStatus::PastDue);
                prop_assert_eq!(settled.email, Some(EmailKind::PaymentFailed));
                prop_assert_eq!(settled.invoice, None);
                prop_assert!(m.next_action_at.expect("a retry") > at);
            }
            m.status = MembershipStatus::Canceled;
            let before = m.clone();
            prop_assert_eq!(m.debit_returned(at, at), Settlement::default());
            prop_assert_eq!(m, before);
        }
    }
}
