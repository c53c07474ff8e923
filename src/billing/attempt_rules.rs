//! The domain's rule for a settled charge attempt, by its kind: a first payment, a renewal, a
//! dunning retry, a pay-now, a proration or a final invoice, approved or declined, and what
//! follows from it. One rule for card answers ([`super::charging`]) and SEPA debits
//! ([`super::sepa_debits`]).

use chrono::{DateTime, Utc};
use recur_domain::membership::{FirstInvoice, RecurringAttempt, Settlement};

use super::followups::Followups;
use super::{proration, BillingError};
use crate::store::charges::{Charge, ChargeKind};
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;

/// The domain's rule for an answered (or, a SEPA debit, scheduled) attempt of this kind,
/// `approved` or not, and what follows.
pub(super) fn settle(
    m: &mut Membership,
    charge: &Charge,
    invoice: &Invoice,
    approved: bool,
    at: DateTime<Utc>,
) -> Result<(Settlement, Followups), BillingError> {
    let last_change = m.updated_at;
    let amount = charge.amount;
    let settlement = match charge.kind {
        ChargeKind::First => {
            let first = FirstInvoice {
                amount_due: invoice.amount_due,
                credit_applied: invoice.credit_applied,
                discount: invoice.discount,
            };
            m.state.first_payment_settled(first, approved, at)
        }
        ChargeKind::Renewal => {
            let attempt = RecurringAttempt::Renewal;
            m.state
                .recurring_settled(attempt, amount, approved, at, last_change)
        }
        ChargeKind::Retry => {
            let attempt = RecurringAttempt::Retry;
            m.state
                .recurring_settled(attempt, amount, approved, at, last_change)
        }
        ChargeKind::PayNow => m.state.pay_now_settled(invoice.amount_due, approved, at),
        ChargeKind::Final => m.state.final_settled(amount, approved),
        ChargeKind::Proration => return proration::proration_settled(m, charge, approved),
    };
    Ok((settlement, Followups::after(&settlement)))
}
