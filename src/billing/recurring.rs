//! The engine's own charges (DESIGN §3): renewals of Active memberships at the end of their
//! period, dunning retries of PastDue ones, and recording what their answers change. The rules
//! are the domain's [`MembershipState`](recur_domain::membership::MembershipState); the first
//! payment, pay-now and cancellation are [`super::lifecycle`]'s.

use chrono::{DateTime, Utc};
use recur_domain::calendar::Period;
use recur_domain::invoice::InvoicePlan;
use recur_domain::membership::{EmailKind, InvoiceChange, RecurringAttempt};

use super::attempts::pending_charge;
use super::followups::{save, Followups};
use super::invoicing::{issue, new_invoice};
use super::lifecycle::complete;
use super::update::scheduled_updates;
use super::{taxation, usage, BillingError};
use crate::store::charges::Charge;
use crate::store::invoices::{self, Invoice, InvoiceKind, NewInvoice};
use crate::store::memberships::Membership;
use crate::store::merchants::{self, Mode};
use crate::store::Tx;

/// The renewal invoice of `period`, under the period's billing key.
pub fn renewal_invoice<'a>(
    m: &'a Membership,
    period: Period,
    plan: &'a InvoicePlan,
) -> NewInvoice<'a> {
    let billing_key = format!("period:{}", period.start.timestamp_micros());
    new_invoice(m, InvoiceKind::Renewal, billing_key, Some(period), plan)
}

/// Starts the renewal of an Active (or Trialing) membership whose period ended: the next
/// period's invoice, at the terms of a change scheduled for it, paid from credit or charged.
/// Returns the attempt to run, if any, and what follows.
pub async fn start_renewal(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<(Option<Charge>, Followups, Option<Invoice>), BillingError> {
    let taxation = taxation::of(&mut **tx, m).await?;
    let used = usage::bill_period(tx, m, at).await?;
    let renewal = m
        .state
        .renewal_with_usage(&m.subscription_name, &taxation, used);
    let Some((period, plan)) = renewal else {
        return complete(tx, m, at).await;
    };
    let before = m.clone();
    let new = renewal_invoice(m, period, &plan);
    let invoice = issue(tx, new, at, "this period was already invoiced").await?;
    let renewed = m.state.renewal_issued(period, &plan);
    let applied = match renewed.applied {
        Some(change) => {
            m.price_key.clone_from(&change.price_key);
            Followups {
                updated: Some(scheduled_updates(&before, m)),
                ..Followups::default()
            }
        }
        None => Followups::default(),
    };
    if plan.amount_due == 0 {
        save(tx, m, at).await?;
        let followups = Followups {
            status_changed: renewed.status_changed,
            email: Some(EmailKind::Receipt),
            ..applied
        };
        return Ok((None, followups, Some(invoice)));
    }
    let (charge, followups, invoice) =
        recurring_attempt(tx, m, invoice, RecurringAttempt::Renewal, at).await?;
    Ok((charge, applied.and(followups), Some(invoice)))
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
        let changed = m.state.nothing_owed();
        save(tx, m, at).await?;
        return Ok((None, Followups::status_change(changed), None));
    };
    m.state.retry_started();
    let (charge, followups, invoice) =
        recurring_attempt(tx, m, invoice, RecurringAttempt::Retry, at).await?;
    Ok((charge, followups, Some(invoice)))
}

/// The recurring `attempt` at `invoice`: a `Pending` attempt against the customer's card, which
/// then owns the membership's next step; or, for a customer without a card, one settled at
/// once with no processor asked. In the sandbox such an attempt ends as its
/// `chargeEmitterQueue` directive says, as a charge would (DESIGN §4 holds "even for a customer
/// with no saved card"): success pays the invoice with no processor transaction; for a live
/// merchant it fails as a decline would. Returns the attempt to run, if any, what follows, and
/// the invoice as it now stands.
async fn recurring_attempt(
    tx: &mut Tx,
    m: &mut Membership,
    invoice: Invoice,
    attempt: RecurringAttempt,
    at: DateTime<Utc>,
) -> Result<(Option<Charge>, Followups, Invoice), BillingError> {
    if let Some(charge) = pending_charge(tx, m, &invoice, attempt.into(), at).await? {
        save(tx, m, at).await?;
        return Ok((Some(charge), Followups::default(), invoice));
    }
    let sandbox = merchants::by_id_in(&mut **tx, m.merchant_id)
        .await?
        .is_some_and(|merchant| merchant.mode == Mode::Sandbox);
    let approved = sandbox && m.state.recurring_directive().succeed;
    let settlement =
        m.state
            .recurring_settled(attempt, invoice.amount_due, approved, at, m.updated_at);
    save(tx, m, at).await?;
    let followups = Followups::after(&settlement);
    let Some(InvoiceChange::Paid { amount, period }) = settlement.invoice else {
        return Ok((None, followups, invoice));
    };
    invoices::mark_paid(tx, invoice.id, amount, period, at).await?;
    let paid = invoices::get(&mut **tx, m.merchant_id, invoice.id)
        .await?
        .ok_or(BillingError::NotFound)?;
    Ok((None, followups, paid))
}
