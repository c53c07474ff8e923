//! Pending attempts: a charge of an invoice written `Pending` before the processor is asked, so
//! that an answer lost in a crash is asked again under the same idempotency key, never charged
//! twice. Every engine path that charges (first payment, renewal, retry, pay-now, final
//! invoice) writes its attempt here.

use chrono::{DateTime, Utc};

use super::{numbering, BillingError};
use crate::store::charges::{self, Charge, ChargeKind, NewCharge, PagePayment};
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;
use crate::store::{payment_methods, Tx};

/// Writes a `Pending` attempt for `invoice` against the customer's current card. `None` when
/// the customer has no card.
pub(super) async fn pending_charge(
    tx: &mut Tx,
    m: &Membership,
    invoice: &Invoice,
    kind: ChargeKind,
    at: DateTime<Utc>,
) -> Result<Option<Charge>, BillingError> {
    let Some(card) = payment_methods::current(&mut **tx, m.merchant_id, m.customer_id).await?
    else {
        return Ok(None);
    };
    pending_charge_with(tx, m, invoice, kind, card.id, None, at)
        .await
        .map(Some)
}

/// Writes a `Pending` attempt for `invoice` against the card `payment_method_id` (made on a
/// checkout `page`, or not), finalizing the invoice if this is its first; a conflict when the
/// membership already has one in flight.
pub(super) async fn pending_charge_with(
    tx: &mut Tx,
    m: &Membership,
    invoice: &Invoice,
    kind: ChargeKind,
    payment_method_id: i64,
    page: Option<PagePayment>,
    at: DateTime<Utc>,
) -> Result<Charge, BillingError> {
    let attempts = charges::attempts_for_invoice(tx, invoice.id).await?;
    let new = NewCharge {
        page,
        ..new_charge(m, invoice, kind, payment_method_id, attempts)
    };
    let charge = charges::insert_pending(tx, new, at)
        .await?
        .ok_or(BillingError::PaymentInProgress)?;
    numbering::finalize(tx, &[invoice], at).await?;
    Ok(charge)
}

/// The attempt number `prior_attempts + 1` at `invoice` against the card `payment_method_id`;
/// a recurring one carries the sandbox's directive for its ordinal (the membership state's
/// `recurring_directive`).
pub fn new_charge<'a>(
    m: &'a Membership,
    invoice: &'a Invoice,
    kind: ChargeKind,
    payment_method_id: i64,
    prior_attempts: i64,
) -> NewCharge<'a> {
    let directive = kind.is_recurring().then(|| m.state.recurring_directive());
    NewCharge {
        merchant_id: m.merchant_id,
        membership_id: m.id,
        invoice_id: invoice.id,
        idempotency_key: format!("{}:{}", invoice.invoice_key, prior_attempts + 1),
        kind,
        recurring_ordinal: kind.is_recurring().then_some(m.state.recurring_attempts),
        directive,
        amount: invoice.amount_due,
        currency: &invoice.currency,
        payment_method_id,
        pending_update: None,
        page: None,
    }
}
