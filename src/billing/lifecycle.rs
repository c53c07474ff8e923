//! The membership lifecycle of DESIGN §3 as stored changes: first payment, pay-now, expiry,
//! completion and cancellation (renewals and dunning are [`super::recurring`]'s). Each is a
//! transaction around a rule of the domain's
//! [`MembershipState`](recur_domain::membership::MembershipState): lock, apply, save, and record
//! the events and e-mail that follow.

use chrono::{DateTime, Utc};
use recur_domain::membership::EmailKind;
use recur_domain::status::MembershipStatus;

use super::attempts::{pending_charge, pending_charge_with};
use super::charging::{self, Settled};
use super::final_invoice::issue_final;
use super::followups::{save, Followups};
use super::invoicing::{issue, new_invoice};
use super::{credit_notes, locked, BillingError};
use crate::delivery::credits::Credited;
use crate::platform::Platform;
use crate::processor::Verification;
use crate::store::charges::{self, Charge, ChargeKind, PagePayment};
use crate::store::invoices::{self, Invoice, InvoiceKind};
use crate::store::memberships::{self, Membership};
use crate::store::{customers, payment_methods, Tx};

/// An Incomplete membership reached 23 hours without payment: Expired, open invoice Void.
pub async fn expire(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<Followups, BillingError> {
    let changed = m.state.expire();
    let voided = invoices::void_open(tx, m.id, at).await?;
    let credits =
        credit_notes::for_voided(tx, &voided, "the membership expired unpaid", at).await?;
    save(tx, m, at).await?;
    Ok(Followups {
        credits,
        ..Followups::status_change(changed)
    })
}

/// The membership's `endDate` arrived: Completed, no new cycle; its last period's usage on a
/// final invoice ([`issue_final`]). Returns what follows, the final invoice and its attempt to
/// run once the transaction commits.
pub async fn complete(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<(Option<Charge>, Followups, Option<Invoice>), BillingError> {
    let (invoice, charge) = issue_final(tx, m, at).await?;
    let changed = m.state.complete();
    save(tx, m, at).await?;
    Ok((charge, Followups::status_change(changed), invoice))
}

/// A Trialing membership's trial ends in three days: `SUBSCRIPTION_TRIAL_WILL_END` and its
/// e-mail, naming the first charge (the next renewal's invoice as it stands now).
pub async fn notify_trial_end(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<Followups, BillingError> {
    let taxation = super::taxation::of(&mut **tx, m).await?;
    let first_charge = m
        .state
        .next_renewal(&m.subscription_name, &taxation)
        .map(|(_, plan)| plan.amount_due);
    m.state.trial_notice_sent();
    save(tx, m, at).await?;
    Ok(Followups {
        email: Some(EmailKind::TrialWillEnd),
        trial_will_end: Some(first_charge.unwrap_or(0)),
        ..Followups::default()
    })
}

/// Cancels a membership now: no retries, no new cycles; open invoices Void except the renewal
/// invoice whose charge failed, which stays Open for a pay-now checkout to collect
/// ([`invoices::void_open_except_renewals`]); the usage of the period it ends on a final
/// invoice, charged once the cancel is committed (its answer changes no status). Canceling a
/// Canceled membership changes nothing; a Completed or Expired one is a conflict.
pub async fn cancel(
    state: &Platform,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, BillingError> {
    let at = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let mut m = memberships::lock(&mut tx, state.store.backend(), merchant_id, key)
        .await?
        .ok_or(BillingError::NotFound)?;
    if m.state.status == MembershipStatus::Canceled {
        tx.rollback().await?;
        return Ok(m);
    }
    if charges::in_flight(&mut tx, m.id).await? {
        return Err(BillingError::PaymentInProgress);
    }
    if !m.state.status.can_cancel() {
        return Err(BillingError::Conflict(format!(
            "a {} membership cannot be canceled",
            m.state.status
        )));
    }
    let voided = invoices::void_open_except_renewals(&mut tx, m.id, at).await?;
    let credits =
        credit_notes::for_voided(&mut tx, &voided, "the membership was canceled", at).await?;
    let (_, charge) = issue_final(&mut tx, &mut m, at).await?;
    m.state.cancel(at);
    save(&mut tx, &mut m, at).await?;
    let customer = customers::by_id(&mut *tx, merchant_id, m.customer_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    Followups {
        status_changed: true,
        email: Some(EmailKind::Canceled),
        credits,
        ..Followups::default()
    }
    .record(&mut tx, state, &m, &customer, None, at)
    .await?;
    tx.commit().await?;
    let Some(charge) = charge else {
        return Ok(m);
    };
    // The cancel stands whatever the answer: a declined charge leaves the final invoice Open
    // (and e-mails a pay-now link), an unanswered one stays Pending for the worker to ask again.
    if let Err(error) = charging::execute_many(state, vec![charge], at).await {
        tracing::warn!(%error, membership = %m.membership_key, "final invoice charge not recorded");
    }
    memberships::get(state.store.pool(), merchant_id, key)
        .await?
        .ok_or(BillingError::NotFound)
}

/// Which card pays.
#[derive(Debug, Clone)]
enum PayWith {
    /// The customer's saved payment method (the sandbox pay helper).
    SavedCard,
    /// A card the customer just entered on a checkout page; it becomes the saved payment method
    /// once it has paid.
    Card(i64, PagePayment),
}

/// Charges the first invoice of an Incomplete membership with the customer's saved card (the
/// sandbox pay helper). Declines leave it Incomplete.
pub async fn pay_first(
    state: &Platform,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, BillingError> {
    pay(state, merchant_id, key, PayWith::SavedCard, false).await
}

/// What a checkout page collects for a membership: the first invoice of an Incomplete one, or
/// the oldest open invoice of a PastDue, Unpaid or Canceled one (pay-now,
/// [`MembershipStatus::pays_open_invoice`]). Declines change nothing; paying a membership that
/// has nothing due is a conflict. `page` says where the customer paid (the notification's
/// `SessionId` and `ClientIP`).
pub async fn pay_checkout(
    state: &Platform,
    merchant_id: i64,
    key: &str,
    card: i64,
    page: PagePayment,
) -> Result<Membership, BillingError> {
    pay(state, merchant_id, key, PayWith::Card(card, page), true).await
}

async fn pay(
    state: &Platform,
    merchant_id: i64,
    key: &str,
    with: PayWith,
    pay_now_allowed: bool,
) -> Result<Membership, BillingError> {
    let at = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let m = locked(&mut tx, state, merchant_id, key).await?;
    if m.state.starts_with_trial() {
        return start_trial(state, tx, m, with, at).await;
    }
    let mut credits = Vec::new();
    let (invoice, kind) = match m.state.status {
        MembershipStatus::Incomplete => {
            let (invoice, replaced) = first_invoice(&mut tx, &m, at).await?;
            credits = replaced;
            (invoice, ChargeKind::First)
        }
        status if pay_now_allowed && status.pays_open_invoice() => {
            let invoice = invoices::oldest_open(&mut *tx, m.id)
                .await?
                .ok_or_else(|| {
                    BillingError::Conflict("the membership has nothing to pay".into())
                })?;
            (invoice, ChargeKind::PayNow)
        }
        status => {
            return Err(BillingError::Conflict(format!(
                "the membership is {status}; it has nothing to pay"
            )))
        }
    };
    let charge = match with {
        PayWith::Card(card, page) => {
            Some(pending_charge_with(&mut tx, &m, &invoice, kind, card, Some(page), at).await?)
        }
        PayWith::SavedCard => pending_charge(&mut tx, &m, &invoice, kind, at).await?,
    }
    .ok_or_else(|| {
        BillingError::Conflict("the customer has no payment method; attach a card first".into())
    })?;
    Followups {
        credits,
        ..Followups::default()
    }
    .record_for(&mut tx, state, &m, None, at)
    .await?;
    tx.commit().await?;
    match charging::execute(state, &charge, at).await? {
        Settled::Declined(done) => Err(BillingError::Declined {
            code: done.decline_code.unwrap_or_default(),
            reason: done.decline_reason.unwrap_or_default(),
        }),
        Settled::Approved(_) | Settled::Scheduled(_) | Settled::AlreadyRecorded => {
            memberships::get(state.store.pool(), merchant_id, key)
                .await?
                .ok_or(BillingError::NotFound)
        }
    }
}

/// Starts the trial of an Incomplete membership with `trialDays` in `tx` (holding its lock):
/// the card, once the processor has verified it, is saved as the customer's payment method and
/// nothing is charged; Trialing until the trial ends. A refused card is a decline that changes
/// nothing.
async fn start_trial(
    state: &Platform,
    mut tx: Tx,
    mut m: Membership,
    with: PayWith,
    at: DateTime<Utc>,
) -> Result<Membership, BillingError> {
    let card = match with {
        PayWith::Card(id, _) => payment_methods::get_many(&mut *tx, &[(m.merchant_id, id)])
            .await?
            .remove(&id),
        PayWith::SavedCard => {
            payment_methods::current(&mut *tx, m.merchant_id, m.customer_id).await?
        }
    }
    .ok_or_else(|| {
        BillingError::Conflict("the customer has no payment method; attach a card first".into())
    })?;
    // Nothing is charged, so the issuer is asked whether the card can be charged later, as
    // when a customer replaces their card. A card a Stripe account holds was verified by the
    // SetupIntent that saved it.
    if card.processor_id.is_none() {
        let verified = state
            .processor
            .verify(m.merchant_id, &card.processor_token)
            .await?;
        if let Verification::Refused { code, reason } = verified {
            return Err(BillingError::Declined { code, reason });
        }
    }
    payment_methods::attach_many(&mut tx, &[(m.merchant_id, card.id)], at).await?;
    let changed = m.state.trial_started(at);
    save(&mut tx, &mut m, at).await?;
    Followups::status_change(changed)
        .record_for(&mut tx, state, &m, None, at)
        .await?;
    tx.commit().await?;
    Ok(m)
}

/// The Open first invoice at the current price, creating it (and voiding a stale one whose
/// price changed since) as needed; with the credit note of the voided one, if it was numbered.
async fn first_invoice(
    tx: &mut Tx,
    m: &Membership,
    at: DateTime<Utc>,
) -> Result<(Invoice, Vec<Credited>), BillingError> {
    let taxation = super::taxation::of(&mut **tx, m).await?;
    let plan = m.state.period_invoice(&m.subscription_name, &taxation);
    let existing = invoices::oldest_open(&mut **tx, m.id).await?;
    let mut credits = Vec::new();
    if let Some(invoice) = existing {
        if invoice.kind == InvoiceKind::First
            && invoice.subtotal == plan.subtotal
            && invoice.total == plan.total
            && invoice.discount == plan.discount
            && invoice.coupon == plan.coupon
            && invoice.taxes == plan.taxes
        {
            return Ok((invoice, credits));
        }
        let voided = invoices::void(tx, invoice.id, at).await?;
        let reason = "replaced by an invoice at the membership's current price";
        credits = credit_notes::for_voided(tx, &voided, reason, at).await?;
    }
    let count = invoices::count_of_kind(tx, m.id, InvoiceKind::First).await?;
    let billing_key = format!("first:{}", count + 1);
    let new = new_invoice(m, InvoiceKind::First, billing_key, None, &plan);
    let invoice = issue(tx, new, at, "the first invoice changed concurrently; retry").await?;
    Ok((invoice, credits))
}
