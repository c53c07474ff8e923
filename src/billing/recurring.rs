//! The engine's own charges (DESIGN §3): renewals of Active memberships at the end of their
//! period, dunning retries of PastDue ones, and what their answers change. The first payment,
//! pay-now and cancellation are [`super::lifecycle`]'s.

use chrono::{DateTime, Utc};
use recur_domain::calendar::{period_starting, Period};
use recur_domain::invoice::{period_invoice, InvoicePlan};
use recur_domain::schedule::dunning_retry_at;
use recur_domain::status::{LifecycleEvent, MembershipStatus};

use super::invoicing::{issue, new_invoice};
use super::lifecycle::{
    apply, complete, pending_charge, recurring_directive, save, Followups, InvoiceChange,
    Settlement,
};
use super::{next_scheduled_action, BillingError};
use crate::store::charges::{Charge, ChargeKind};
use crate::store::invoices::{self, Invoice, InvoiceKind, NewInvoice};
use crate::store::memberships::Membership;
use crate::store::merchants::{self, Mode};
use crate::store::outbox::EmailKind;
use crate::store::Tx;

/// The invoice that renews an Active membership whose period ended: the next period at the
/// current price, less credit. `None` when no period follows.
pub fn next_renewal(m: &Membership) -> Option<(Period, InvoicePlan)> {
    let period = m
        .current_period
        .and_then(|current| period_starting(current.end, &m.cycle()))?;
    Some((
        period,
        period_invoice(&m.subscription_name, m.price(), m.credit_balance),
    ))
}

/// The renewal invoice of `period`, under the period's billing key.
pub fn renewal_invoice<'a>(
    m: &'a Membership,
    period: Period,
    plan: &'a InvoicePlan,
) -> NewInvoice<'a> {
    let billing_key = format!("period:{}", period.start.timestamp_micros());
    new_invoice(m, InvoiceKind::Renewal, billing_key, Some(period), plan)
}

/// The membership once its renewal invoice is issued: the new period, the credit it used, and,
/// when the card is to be charged, one more recurring attempt.
pub fn renewal_issued(m: &mut Membership, period: Period, plan: &InvoicePlan) {
    m.current_period = Some(period);
    m.credit_balance = plan.credit_after;
    if plan.amount_due > 0 {
        m.recurring_attempts += 1;
    }
}

/// Starts the renewal of an Active membership whose period ended: the next period's invoice,
/// paid from credit or charged. Returns the attempt to run, if any, and what follows.
pub async fn start_renewal(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<(Option<Charge>, Followups, Option<Invoice>), BillingError> {
    let Some((period, plan)) = next_renewal(m) else {
        return Ok((None, complete(tx, m, at).await?, None));
    };
    let new = renewal_invoice(m, period, &plan);
    let invoice = issue(tx, new, at, "this period was already invoiced").await?;
    renewal_issued(m, period, &plan);
    if plan.amount_due == 0 {
        m.next_action_at = next_scheduled_action(m);
        save(tx, m, at).await?;
        let followups = Followups {
            email: Some(EmailKind::Receipt),
            ..Followups::default()
        };
        return Ok((None, followups, Some(invoice)));
    }
    let (charge, followups, invoice) =
        recurring_attempt(tx, m, invoice, ChargeKind::Renewal, at).await?;
    Ok((charge, followups, Some(invoice)))
}

/// Starts a dunning retry of a PastDue membership's open invoice. Returns the attempt to run,
/// if any, what follows, and the invoice retried.
pub async fn start_retry(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<(Option<Charge>, Followups, Option<Invoice>), BillingError> {
    let Some(invoice) = invoices::oldest_open(&mut **tx, m.id).await? else {
        // Nothing is owed any more (paid another way): back in good standing.
        let changed = apply(m, LifecycleEvent::RetrySucceeded);
        m.dunning_failed_at = None;
        m.dunning_retries = 0;
        m.next_action_at = next_scheduled_action(m);
        save(tx, m, at).await?;
        let followups = Followups {
            status_changed: changed,
            ..Followups::default()
        };
        return Ok((None, followups, None));
    };
    m.recurring_attempts += 1;
    let (charge, followups, invoice) =
        recurring_attempt(tx, m, invoice, ChargeKind::Retry, at).await?;
    Ok((charge, followups, Some(invoice)))
}

/// The recurring attempt of `kind` at `invoice`: a `Pending` attempt against the customer's
/// card, which then owns the membership's next step; or, for a customer without a card, one
/// settled at once with no processor asked. In the sandbox such an attempt ends as its
/// `chargeEmitterQueue` directive says, as a charge would (DESIGN §4 holds "even for a customer
/// with no saved card"): success pays the invoice with no processor transaction; for a live
/// merchant it fails as a decline would. Returns the attempt to run, if any, what follows, and
/// the invoice as it now stands.
async fn recurring_attempt(
    tx: &mut Tx,
    m: &mut Membership,
    invoice: Invoice,
    kind: ChargeKind,
    at: DateTime<Utc>,
) -> Result<(Option<Charge>, Followups, Invoice), BillingError> {
    if let Some(charge) = pending_charge(tx, m, &invoice, kind, at).await? {
        m.next_action_at = None;
        save(tx, m, at).await?;
        return Ok((Some(charge), Followups::default(), invoice));
    }
    let sandbox = merchants::by_id_in(&mut **tx, m.merchant_id)
        .await?
        .is_some_and(|merchant| merchant.mode == Mode::Sandbox);
    let approved = sandbox && recurring_directive(m).succeed;
    let settlement = recurring_settled(m, kind, invoice.amount_due, approved, at);
    save(tx, m, at).await?;
    let Some(InvoiceChange::Paid { amount, period }) = settlement.invoice else {
        return Ok((None, settlement.followups, invoice));
    };
    invoices::mark_paid(tx, invoice.id, amount, period, at).await?;
    let paid = invoices::get(&mut **tx, m.merchant_id, invoice.id)
        .await?
        .ok_or(BillingError::NotFound)?;
    Ok((None, settlement.followups, paid))
}

/// A renewal charge was declined: PastDue, dunning starts.
fn renewal_failed(m: &mut Membership, at: DateTime<Utc>) -> Followups {
    let changed = apply(m, LifecycleEvent::RenewalFailed);
    m.dunning_failed_at = Some(at);
    m.dunning_retries = 0;
    m.next_action_at = earliest(dunning_retry_at(at, 0), m.end_date);
    Followups {
        status_changed: changed,
        updated: None,
        email: Some(EmailKind::PaymentFailed),
    }
}

/// A dunning retry was declined: the next retry, or Unpaid after the last.
fn retry_failed(m: &mut Membership) -> Followups {
    m.dunning_retries += 1;
    let failed_at = m.dunning_failed_at.unwrap_or(m.updated_at);
    let next_retry = dunning_retry_at(
        failed_at,
        u32::try_from(m.dunning_retries).unwrap_or(u32::MAX),
    );
    let changed = match next_retry {
        Some(_) => false,
        None => apply(m, LifecycleEvent::RetriesExhausted),
    };
    m.next_action_at = earliest(next_retry, m.end_date);
    Followups {
        status_changed: changed,
        ..Followups::default()
    }
}

fn earliest(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The answer to a renewal or retry (`kind`) of `amount`.
pub fn recurring_settled(
    m: &mut Membership,
    kind: ChargeKind,
    amount: i64,
    approved: bool,
    at: DateTime<Utc>,
) -> Settlement {
    let in_good_standing = matches!(
        m.status,
        MembershipStatus::Active | MembershipStatus::PastDue | MembershipStatus::Unpaid
    );
    if approved {
        let paid = Some(InvoiceChange::paid(amount));
        if !in_good_standing {
            // Canceled or completed meanwhile: the money is recorded, the status stays.
            return Settlement {
                invoice: paid,
                ..Settlement::default()
            };
        }
        let changed = match kind {
            ChargeKind::Retry => apply(m, LifecycleEvent::RetrySucceeded),
            _ => apply(m, LifecycleEvent::RenewalSucceeded),
        };
        m.dunning_failed_at = None;
        m.dunning_retries = 0;
        m.next_action_at = next_scheduled_action(m);
        return Settlement::paid_with_receipt(amount, changed);
    }
    if !in_good_standing {
        return Settlement::default();
    }
    let followups = match kind {
        ChargeKind::Retry => retry_failed(m),
        _ => renewal_failed(m, at),
    };
    Settlement {
        invoice: None,
        membership_changed: true,
        followups,
    }
}
