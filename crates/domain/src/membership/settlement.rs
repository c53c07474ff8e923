//! What the answer to a charge attempt changes (DESIGN §3–§4): the first payment, a renewal or
//! dunning retry, a pay-now payment and a proration. Each rule changes the membership in memory
//! and says what else follows, as a [`Settlement`]; the caller writes it.

use chrono::{DateTime, Utc};

use super::{MembershipState, Terms};
use crate::calendar::{period_starting, Period};
use crate::status::{LifecycleEvent, MembershipStatus};

/// Kinds of customer e-mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmailKind {
    /// An invoice was paid.
    Receipt,
    /// A renewal charge was declined; carries the amount due and a pay-now link.
    PaymentFailed,
    /// The membership was canceled.
    Canceled,
    /// A credit note was written (a refund, or a finalized invoice voided) and no other e-mail
    /// of the change lists it.
    CreditNote,
    /// The trial ends in three days; the first charge follows then.
    TrialWillEnd,
    /// A SEPA debit's pre-notification: amount, collection date, mandate and creditor.
    DebitNotice,
}

impl EmailKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            EmailKind::Receipt => "receipt",
            EmailKind::PaymentFailed => "payment_failed",
            EmailKind::Canceled => "canceled",
            EmailKind::CreditNote => "credit_note",
            EmailKind::TrialWillEnd => "trial_will_end",
            EmailKind::DebitNotice => "debit_notice",
        }
    }
}

/// How the invoice of a settled attempt changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceChange {
    /// Paid with `amount` from the card; `period`, when given, becomes the invoice's period.
    Paid {
        /// Paid by the payment method, in minor units.
        amount: i64,
        /// The period it now bills (a first invoice's, fixed when it is paid).
        period: Option<Period>,
    },
    /// Void: nothing is owed any more (a declined proration).
    Void,
}

impl InvoiceChange {
    /// Paid with `amount`, the invoice keeping its period.
    pub fn paid(amount: i64) -> Self {
        Self::Paid {
            amount,
            period: None,
        }
    }
}

/// What recording a processor's answer changes besides the attempt itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settlement {
    /// The invoice's change, if any.
    pub invoice: Option<InvoiceChange>,
    /// The membership was changed in memory and must be saved.
    pub membership_changed: bool,
    /// The status changed: a status-change event is due.
    pub status_changed: bool,
    /// The membership's terms changed (a paid proration applied its update): an update event
    /// is due.
    pub terms_changed: bool,
    /// An e-mail to the customer is due.
    pub email: Option<EmailKind>,
}

impl Settlement {
    /// The invoice paid with `amount`, the membership changed (its status too when
    /// `status_changed`), and a receipt due.
    fn paid_with_receipt(amount: i64, status_changed: bool) -> Self {
        Settlement {
            invoice: Some(InvoiceChange::paid(amount)),
            membership_changed: true,
            status_changed,
            terms_changed: false,
            email: Some(EmailKind::Receipt),
        }
    }

    /// The invoice paid with `amount` and a receipt due; the membership left as it is (a
    /// SEPA debit collected: the membership stood as paid since it was scheduled).
    pub fn receipt_only(amount: i64) -> Self {
        Settlement {
            invoice: Some(InvoiceChange::paid(amount)),
            email: Some(EmailKind::Receipt),
            ..Settlement::default()
        }
    }
}

/// The amounts of a first invoice that a first payment settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstInvoice {
    /// What the card pays.
    pub amount_due: i64,
    /// What credit paid.
    pub credit_applied: i64,
    /// What its coupon took off.
    pub discount: i64,
}

/// Which recurring attempt was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecurringAttempt {
    /// The charge of a renewal invoice.
    Renewal,
    /// A dunning retry of the open invoice.
    Retry,
}

impl MembershipState {
    /// The answer to a first payment of `invoice`: Active with its first period starting `at`
    /// (the invoice's coupon discount is the period's, and uses one of the coupon's cycles), or
    /// still Incomplete. A decline changes nothing.
    pub fn first_payment_settled(
        &mut self,
        invoice: FirstInvoice,
        approved: bool,
        at: DateTime<Utc>,
    ) -> Settlement {
        if !approved {
            return Settlement::default();
        }
        let FirstInvoice {
            amount_due,
            credit_applied,
            discount,
        } = invoice;
        let period = period_starting(at, &self.cycle);
        let changed = self.apply(LifecycleEvent::CheckoutPaid);
        if changed {
            self.current_period = period;
            self.credit_balance -= credit_applied;
            self.period_discount = discount;
            self.discount = self.discount.take().and_then(|d| d.used());
            self.next_action_at = self.next_scheduled_action();
        }
        Settlement {
            invoice: Some(InvoiceChange::Paid {
                amount: amount_due,
                period,
            }),
            membership_changed: changed,
            status_changed: changed,
            terms_changed: false,
            email: Some(EmailKind::Receipt),
        }
    }

    /// The answer to a pay-now payment of `amount_due` for the membership's open invoice.
    /// PastDue or Unpaid: paid, Active again, dunning stopped; the calendar resumes where it
    /// stood (periods that ended while the membership was Unpaid are skipped, not billed, so the
    /// next renewal bills the period in progress at `at`). Canceled: the invoice is paid (with a
    /// receipt) and the membership stays as it is. A decline changes nothing (dunning goes on
    /// as scheduled).
    pub fn pay_now_settled(
        &mut self,
        amount_due: i64,
        approved: bool,
        at: DateTime<Utc>,
    ) -> Settlement {
        if !approved {
            return Settlement::default();
        }
        if !matches!(
            self.status,
            MembershipStatus::PastDue | MembershipStatus::Unpaid
        ) {
            return Settlement::receipt_only(amount_due);
        }
        if let Some(mut period) = self.current_period {
            while let Some(next) = period_starting(period.end, &self.cycle) {
                if next.end > at {
                    break;
                }
                period = next;
            }
            self.current_period = Some(period);
        }
        let changed = self.recovered(LifecycleEvent::RetrySucceeded);
        Settlement::paid_with_receipt(amount_due, changed)
    }

    /// The answer to a renewal or dunning retry (`attempt`) of `amount`, at `at`. Approved:
    /// paid, in good standing (a Trialing membership's first charge makes it Active). Declined:
    /// a renewal makes the membership PastDue and starts dunning; a retry schedules the next one, or makes it Unpaid after the last. A membership
    /// canceled or completed meanwhile keeps its status (approved money is still recorded).
    /// `last_change`, when the membership was last saved, stands in for a dunning start that
    /// was not recorded.
    pub fn recurring_settled(
        &mut self,
        attempt: RecurringAttempt,
        amount: i64,
        approved: bool,
        at: DateTime<Utc>,
        last_change: DateTime<Utc>,
    ) -> Settlement {
        let in_good_standing = matches!(
            self.status,
            MembershipStatus::Active
                | MembershipStatus::Trialing
                | MembershipStatus::PastDue
                | MembershipStatus::Unpaid
        );
        if approved {
            if !in_good_standing {
                // Canceled or completed meanwhile: the money is recorded, the status stays.
                return Settlement {
                    invoice: Some(InvoiceChange::paid(amount)),
                    ..Settlement::default()
                };
            }
            let changed = self.recovered(match attempt {
                RecurringAttempt::Retry => LifecycleEvent::RetrySucceeded,
                RecurringAttempt::Renewal => LifecycleEvent::RenewalSucceeded,
            });
            return Settlement::paid_with_receipt(amount, changed);
        }
        if !in_good_standing {
            return Settlement::default();
        }
        let (status_changed, email) = match attempt {
            RecurringAttempt::Retry => (self.retry_failed(last_change), None),
            RecurringAttempt::Renewal => (self.renewal_failed(at), Some(EmailKind::PaymentFailed)),
        };
        Settlement {
            invoice: None,
            membership_changed: true,
            status_changed,
            terms_changed: false,
            email,
        }
    }

    /// The answer to a proration charge of `amount` that was to apply `terms` (`None` when the
    /// membership changed since the charge was written). Approved: paid and the terms applied;
    /// should the membership have moved on all the same, the money taken becomes credit rather
    /// than being lost. Declined: the invoice is voided and nothing else changes.
    pub fn proration_settled(
        &mut self,
        terms: Option<Terms>,
        amount: i64,
        approved: bool,
    ) -> Settlement {
        if !approved {
            return Settlement {
                invoice: Some(InvoiceChange::Void),
                ..Settlement::default()
            };
        }
        let terms_changed = match terms {
            Some(terms) if self.status == MembershipStatus::Active => {
                self.change_terms(terms);
                true
            }
            _ => {
                self.credit_balance += amount;
                false
            }
        };
        Settlement {
            terms_changed,
            ..Settlement::paid_with_receipt(amount, false)
        }
    }

    /// A renewal charge was declined at `at`: PastDue, dunning starts. Returns whether the
    /// status changed.
    fn renewal_failed(&mut self, at: DateTime<Utc>) -> bool {
        let changed = self.apply(LifecycleEvent::RenewalFailed);
        self.dunning_failed_at = Some(at);
        self.dunning_retries = 0;
        self.next_action_at = super::state::earliest(self.next_retry_after(at), self.end_date);
        changed
    }

    /// A dunning retry was declined: the next retry, or Unpaid after the last. Returns whether
    /// the status changed.
    fn retry_failed(&mut self, last_change: DateTime<Utc>) -> bool {
        self.dunning_retries += 1;
        let next_retry = self.next_retry_after(self.dunning_failed_at.unwrap_or(last_change));
        let changed = match next_retry {
            Some(_) => false,
            None => self.apply(LifecycleEvent::RetriesExhausted),
        };
        self.next_action_at = super::state::earliest(next_retry, self.end_date);
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::{active_state, any_instant, any_price, any_state};
    use super::super::{DueAction, ScheduledChange};
    use super::*;
    use crate::coupon::{AppliedCoupon, CouponOff, Discount};
    use crate::tax::Taxation;
    use chrono::TimeDelta;
    use proptest::prelude::*;

    proptest! {
        /// An approved first payment starts the first period at the payment and takes exactly
        /// the credit the invoice used; a declined one changes nothing.
        #[test]
        fn a_first_payment_starts_the_first_period(
            mut m in any_state(),
            at in any_instant(),
            approved in any::<bool>(),
        ) {
            m.status = MembershipStatus::Incomplete;
            m.current_period = None;
            let before = m.clone();
            let plan = m.period_invoice("Gold", &Taxation::none());
            let settled = m.first_payment_settled(first_invoice(&plan), approved, at);
            if !approved {
                prop_assert_eq!(m, before);
                prop_assert_eq!(settled, Settlement::default());
                return Ok(());
            }
            prop_assert_eq!(m.status, MembershipStatus::Active);
            let period = m.current_period.expect("the first period started");
            prop_assert_eq!(period.start, at);
            prop_assert_eq!(m.credit_balance, plan.credit_after);
            prop_assert!(m.credit_balance >= 0);
            prop_assert_eq!(m.next_action_at, m.next_scheduled_action());
            prop_assert_eq!(settled.invoice, Some(InvoiceChange::Paid { amount: plan.amount_due, period: Some(period) }));
        }

        /// A declined renewal makes the membership PastDue and schedules its first retry
        /// strictly later than the failure, never after the `endDate`.
        #[test]
        fn a_failed_renewal_schedules_a_later_retry(mut m in active_state(), hours in 0i64..48) {
            let at = m.current_period.unwrap().end + TimeDelta::hours(hours);
            prop_assume!(m.end_date.is_none_or(|end| end > at));
            let settled = m.recurring_settled(RecurringAttempt::Renewal, 100, false, at, at);
            prop_assert_eq!(m.status, MembershipStatus::PastDue);
            prop_assert_eq!(settled.email, Some(EmailKind::PaymentFailed));
            let next = m.next_action_at.expect("a retry or the end is scheduled");
            prop_assert!(next > at);
            prop_assert!(m.end_date.is_none_or(|end| next <= end));
        }

        /// Declined retries are each scheduled strictly after the one before, and the membership
        /// is Unpaid exactly when the last retry failed.
        #[test]
        fn declined_retries_move_forward_then_stop(mut m in active_state(), hours in 0i64..48) {
            m.end_date = None;
            let failed_at = m.current_period.unwrap().end + TimeDelta::hours(hours);
            m.recurring_settled(RecurringAttempt::Renewal, 100, false, failed_at, failed_at);
            let mut previous = failed_at;
            for retry in 1..=3 {
                let at = m.next_action_at.expect("a retry is scheduled");
                prop_assert!(at > previous);
                previous = at;
                m.retry_started();
                let settled = m.recurring_settled(RecurringAttempt::Retry, 100, false, at, at);
                prop_assert_eq!(settled.status_changed, retry == 3);
            }
            prop_assert_eq!(m.status, MembershipStatus::Unpaid);
            prop_assert_eq!(m.next_action_at, None);
        }

        /// Paying an overdue membership makes it Active again in a period that never moves
        /// backwards, and its next renewal bills the period in progress at the payment, not one
        /// that already ended.
        #[test]
        fn pay_now_resumes_at_the_period_in_progress(
            mut m in active_state(),
            unpaid in any::<bool>(),
            days in 0i64..2000,
        ) {
            m.status = if unpaid { MembershipStatus::Unpaid } else { MembershipStatus::PastDue };
            m.end_date = None;
            let before = m.current_period.unwrap();
            let at = before.start + TimeDelta::days(days);
            m.pay_now_settled(100, true, at);
            let after = m.current_period.unwrap();
            prop_assert_eq!(m.status, MembershipStatus::Active);
            prop_assert!(after.start >= before.start);
            let (next, _) = m.next_renewal("Gold", &crate::tax::Taxation::none()).expect("a period follows");
            prop_assert!(next.end > at);
            prop_assert_eq!(m.next_action_at, Some(after.end));
        }

        /// An answer to a membership that is over (canceled, completed or expired meanwhile)
        /// never changes it, and approved money is still recorded on the invoice.
        #[test]
        fn answers_never_revive_a_membership_that_is_over(
            mut m in any_state(),
            at in any_instant(),
            approved in any::<bool>(),
            retry in any::<bool>(),
        ) {
            prop_assume!(m.status.is_terminal());
            let before = m.clone();
            let attempt = if retry { RecurringAttempt::Retry } else { RecurringAttempt::Renewal };
            let recurring = m.recurring_settled(attempt, 100, approved, at, at);
            let pay_now = m.pay_now_settled(100, approved, at);
            prop_assert_eq!(&m, &before);
            prop_assert!(!recurring.membership_changed && !pay_now.membership_changed);
            prop_assert_eq!(recurring.invoice, approved.then(|| InvoiceChange::paid(100)));
        }

        /// A paid proration that can no longer apply (the membership moved on) turns the money
        /// into credit; a declined one voids its invoice and changes nothing.
        #[test]
        fn proration_money_is_never_lost(
            mut m in any_state(),
            price in any_price(),
            amount in 1i64..1_000_000,
            approved in any::<bool>(),
        ) {
            prop_assume!(m.status != MembershipStatus::Active);
            let before = m.clone();
            let terms = Terms { price, cycle: m.cycle, end_date: None, credit_balance: 0, period: None, period_discount: 0, discount_used: false };
            let settled = m.proration_settled(Some(terms), amount, approved);
            if approved {
                prop_assert_eq!(m.credit_balance, before.credit_balance + amount);
                prop_assert!(!settled.terms_changed);
            } else {
                prop_assert_eq!(settled.invoice, Some(InvoiceChange::Void));
                prop_assert_eq!(m, before);
            }
        }

        /// Whatever the engine and the processor do, in whatever order, the credit never goes
        /// negative, the period never moves backwards, an Active membership is scheduled at
        /// its period's end (or `endDate`), a PastDue one is in dunning, and a membership that
        /// is over has nothing scheduled.
        #[test]
        fn a_lifetime_keeps_the_invariants(
            mut m in any_state(),
            start in any_instant(),
            steps in proptest::collection::vec((0u8..11, any::<bool>(), 0i64..(40 * 24), any_price()), 1..40),
            trial_days in proptest::option::of(1u32..=30),
            coupon in proptest::option::of((1i64..=100, proptest::option::of(1u32..=6))),
        ) {
            m.status = MembershipStatus::Incomplete;
            m.trial_days = trial_days;
            m.discount = coupon.map(|(percent, cycles)| Discount {
                coupon: AppliedCoupon {
                    coupon_id: "cpn_1".into(),
                    code: "C".into(),
                    off: CouponOff::PercentOff(rust_decimal::Decimal::from(percent)),
                },
                cycles_left: cycles,
                by_customer: false,
            });
            (m.current_period, m.credit_balance, m.dunning_failed_at) = (None, 0, None);
            m.next_action_at = Some(start + TimeDelta::hours(23));
            let mut at = start;
            for (step, approved, hours, price) in steps {
                at += TimeDelta::hours(hours);
                let last_period = m.current_period;
                match step {
                    0 if m.starts_with_trial() => {
                        m.trial_started(at);
                    }
                    0 if m.status == MembershipStatus::Incomplete => {
                        let plan = m.period_invoice("Gold", &Taxation::none());
                        m.first_payment_settled(first_invoice(&plan), approved, at);
                    }
                    6 => {
                        let _ = m.pause(at, approved.then(|| at + TimeDelta::days(10)), &Taxation::none());
                    }
                    7 => {
                        if m.resume(at) {
                            engine_step(&mut m, at, approved);
                        }
                    }
                    8 if !m.status.is_terminal() => {
                        m.schedule_change(ScheduledChange { price, cycle: m.cycle, price_key: None });
                    }
                    1 if m.status.pays_open_invoice() => {
                        m.pay_now_settled(100, approved, at);
                    }
                    2 => {
                        m.cancel(at);
                    }
                    3 => {
                        if let Ok(Some(p)) = m.proration("Gold", price, m.cycle, at, &Taxation::none()) {
                            let terms = Terms {
                                price,
                                cycle: m.cycle,
                                end_date: m.end_date,
                                credit_balance: p.plan.credit_after,
                                period: p.new_period,
                                period_discount: p.period_discount,
                                discount_used: p.new_period.is_some(),
                            };
                            m.proration_settled(Some(terms), p.plan.amount_due(), approved);
                        }
                    }
                    _ => {
                        let Some(due) = m.next_action_at.filter(|due| *due <= at) else { continue };
                        engine_step(&mut m, due, approved);
                    }
                }
                prop_assert!(m.credit_balance >= 0);
                prop_assert!(m.period_discount >= 0);
                if let (Some(before), Some(after)) = (last_period, m.current_period) {
                    prop_assert!(after.start >= before.start);
                }
                match m.status {
                    MembershipStatus::Active | MembershipStatus::Trialing | MembershipStatus::Paused => {
                        prop_assert_eq!(m.next_action_at, m.next_scheduled_action())
                    }
                    MembershipStatus::PastDue => prop_assert!(m.dunning_failed_at.is_some()),
                    status if status.is_terminal() => prop_assert_eq!(m.next_action_at, None),
                    _ => {}
                }
            }
        }
    }

    fn first_invoice(plan: &crate::invoice::InvoicePlan) -> FirstInvoice {
        FirstInvoice {
            amount_due: plan.amount_due,
            credit_applied: plan.credit_applied,
            discount: plan.discount,
        }
    }

    /// What the engine does with `m` at `at`, its next action being due, the processor
    /// answering `approved` to any charge.
    fn engine_step(m: &mut MembershipState, at: DateTime<Utc>, approved: bool) {
        match m.due_action(at) {
            DueAction::Expire => {
                m.expire();
            }
            DueAction::Complete => {
                m.complete();
            }
            DueAction::Renew => match m.next_renewal("Gold", &crate::tax::Taxation::none()) {
                Some((period, plan)) => {
                    m.renewal_issued(period, &plan);
                    if plan.amount_due > 0 {
                        m.recurring_settled(
                            RecurringAttempt::Renewal,
                            plan.amount_due,
                            approved,
                            at,
                            at,
                        );
                    }
                }
                None => {
                    m.complete();
                }
            },
            DueAction::NotifyTrialEnd => m.trial_notice_sent(),
            DueAction::Resume => {
                m.resume(at);
                engine_step(m, at, approved);
            }
            DueAction::Retry => {
                m.retry_started();
                m.recurring_settled(RecurringAttempt::Retry, 100, approved, at, at);
            }
            DueAction::Wait => m.wait(at),
        }
    }
}
