//! The final invoice (DESIGN §19): a membership that ends, canceled or completed at its
//! `endDate`, bills the usage of its last period in arrears on an invoice of its own. Its
//! fixed price was billed in advance, so only usage lines are on it; the coupon's discount,
//! taxes and credit apply as on a renewal. A trial's usage is free, and a membership that never
//! started has no period: neither has a final invoice. Its charge changes no status: paid, it
//! sends a receipt; declined, the invoice stays Open for a pay-now checkout and the customer is
//! told.

use chrono::{DateTime, Utc};

use super::{EmailKind, MembershipState, Settlement};
use crate::calendar::Period;
use crate::invoice::{usage_invoice, InvoiceLine, InvoicePlan};
use crate::status::MembershipStatus;
use crate::tax::Taxation;

impl MembershipState {
    /// The period whose usage the membership's end at `at` bills: its current period, cut at
    /// `at`. `None` when it has no period of paid service (Incomplete, Trialing, or already
    /// over). Asked before the status changes.
    pub fn final_usage_period(&self, at: DateTime<Utc>) -> Option<Period> {
        if !matches!(
            self.status,
            MembershipStatus::Active
                | MembershipStatus::PastDue
                | MembershipStatus::Unpaid
                | MembershipStatus::Paused
        ) {
            return None;
        }
        let period = self.current_period?;
        let end = period.end.min(at).max(period.start);
        Some(Period {
            start: period.start,
            end,
        })
    }

    /// The final invoice of the last period's `usage` lines, at the membership's coupon,
    /// `taxation` and credit; `None` when the usage comes to nothing.
    pub fn final_invoice(
        &self,
        usage: Vec<InvoiceLine>,
        taxation: &Taxation,
    ) -> Option<InvoicePlan> {
        if usage.iter().all(|line| line.amount == 0) {
            return None;
        }
        Some(usage_invoice(
            usage,
            self.discount.as_ref(),
            self.credit_balance,
            taxation,
        ))
    }

    /// The final invoice `plan` was issued: the credit it used is spent.
    pub fn final_issued(&mut self, plan: &InvoicePlan) {
        self.credit_balance = plan.credit_after;
    }

    /// The answer to the final invoice's charge of `amount`: approved, paid with a receipt;
    /// declined, the invoice stays Open and a "payment failed" e-mail offers pay-now. The
    /// membership's status stays as it is either way.
    pub fn final_settled(&self, amount: i64, approved: bool) -> Settlement {
        if approved {
            Settlement::receipt_only(amount)
        } else {
            Settlement {
                email: Some(EmailKind::PaymentFailed),
                ..Settlement::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::strategies::{any_instant, any_state};
    use super::*;
    use crate::coupon::{AppliedCoupon, CouponDuration, CouponOff, Discount};
    use crate::membership::InvoiceChange;

    proptest! {
        /// The last period starts where the current one started and ends where the
        /// membership ends, never past the period; a trial, a membership that never started
        /// and one already over bill none.
        #[test]
        fn the_last_period_is_cut_where_the_membership_ends(m in any_state(), at in any_instant()) {
            let billed = m.final_usage_period(at);
            let paid_service = matches!(
                m.status,
                MembershipStatus::Active
                    | MembershipStatus::PastDue
                    | MembershipStatus::Unpaid
                    | MembershipStatus::Paused
            );
            match (m.current_period, billed) {
                (Some(current), Some(last)) => {
                    prop_assert!(paid_service);
                    prop_assert_eq!(last.start, current.start);
                    prop_assert!(last.start <= last.end && last.end <= current.end);
                    prop_assert!(last.end == current.end || last.end == at.max(current.start));
                }
                (current, None) => prop_assert!(!paid_service || current.is_none()),
                (None, Some(_)) => prop_assert!(false, "a period out of none"),
            }
        }

        /// Usage that comes to nothing makes no invoice; otherwise the coupon comes off the
        /// usage, credit pays first, and the credit it used is spent once issued.
        #[test]
        fn credit_and_the_coupon_apply_and_the_credit_is_spent(
            mut m in any_state(),
            amounts in proptest::collection::vec(0i64..1_000_000, 0..4),
            percent in proptest::option::of(1i64..=100),
        ) {
            m.discount = percent.map(|p| Discount::new(
                AppliedCoupon {
                    coupon_id: "cpn_1".into(),
                    code: "C".into(),
                    off: CouponOff::PercentOff(rust_decimal::Decimal::from(p)),
                },
                CouponDuration::Forever,
            ));
            let usage: Vec<InvoiceLine> =
                amounts.iter().map(|a| InvoiceLine::new("API calls", *a)).collect();
            let used: i64 = amounts.iter().sum();
            let credit = m.credit_balance;
            let Some(plan) = m.final_invoice(usage, &Taxation::none()) else {
                prop_assert_eq!(used, 0);
                return Ok(());
            };
            prop_assert_eq!(plan.subtotal, used);
            prop_assert!(plan.discount >= 0 && plan.discount <= used);
            prop_assert_eq!(plan.discount > 0, percent.is_some());
            prop_assert_eq!(plan.period_discount, 0);
            prop_assert_eq!(plan.total, used - plan.discount);
            prop_assert_eq!(plan.credit_applied + plan.amount_due, plan.total);
            prop_assert_eq!(plan.credit_applied, credit.min(plan.total));
            m.final_issued(&plan);
            prop_assert_eq!(m.credit_balance, credit - plan.credit_applied);
        }

        /// The final charge's answer never changes the membership.
        #[test]
        fn the_charge_changes_no_status(m in any_state(), amount in 1i64..1_000_000) {
            let paid = m.final_settled(amount, true);
            prop_assert_eq!(paid.invoice, Some(InvoiceChange::paid(amount)));
            prop_assert_eq!(paid.email, Some(EmailKind::Receipt));
            prop_assert!(!paid.status_changed && !paid.membership_changed);
            let declined = m.final_settled(amount, false);
            prop_assert_eq!(declined.invoice, None);
            prop_assert_eq!(declined.email, Some(EmailKind::PaymentFailed));
            prop_assert!(!declined.status_changed && !declined.membership_changed);
        }
    }
}
