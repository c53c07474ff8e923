//! Charge attempts: call the processor for a committed `Pending` attempt, then record its answer
//! and what follows from it in one transaction.

use chrono::{DateTime, Utc};

use super::lifecycle::{self, Followups};
use super::notify::{self, TransactionFacts};
use super::{update, BillingError};
use crate::app::AppState;
use crate::processor::{ChargeOutcome, ChargeRequest};
use crate::store::charges::{self, Charge, ChargeKind, ChargeStatus};
use crate::store::{customers, invoices, memberships, payment_methods};

/// How a charge attempt ended.
#[derive(Debug)]
pub enum Settled {
    /// The processor took the money.
    Approved(Charge),
    /// The processor declined.
    Declined(Charge),
    /// Another process recorded the answer first; nothing was done here.
    AlreadyRecorded,
}

/// Asks the processor to run a `Pending` attempt (again: the idempotency key makes a repeat
/// harmless) and records the answer. A processor failure leaves the attempt `Pending`.
pub async fn execute(
    state: &AppState,
    charge: &Charge,
    at: DateTime<Utc>,
) -> Result<Settled, BillingError> {
    let card = payment_methods::get(
        state.store.pool(),
        charge.merchant_id,
        charge.payment_method_id,
    )
    .await?
    .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("charge without payment method")))?;
    let outcome = state
        .processor
        .charge(ChargeRequest {
            merchant_id: charge.merchant_id,
            idempotency_key: &charge.idempotency_key,
            token: &card.processor_token,
            amount: charge.amount,
            currency: &charge.currency,
            gateway: None,
            directive: charge.directive.as_ref(),
        })
        .await?;
    finish(state, charge, &outcome, at).await
}

/// Records the processor's answer and its consequences in one transaction.
async fn finish(
    state: &AppState,
    charge: &Charge,
    outcome: &ChargeOutcome,
    at: DateTime<Utc>,
) -> Result<Settled, BillingError> {
    let (status, decline) = match outcome {
        ChargeOutcome::Approved { .. } => (ChargeStatus::Success, None),
        ChargeOutcome::Declined { code, reason, .. } => (
            ChargeStatus::Rejected,
            Some((code.as_str(), reason.as_str())),
        ),
    };
    let mut tx = state.store.begin().await?;
    let Some(done) =
        charges::complete(&mut tx, charge.id, status, outcome.reference(), decline, at).await?
    else {
        tx.rollback().await?;
        return Ok(Settled::AlreadyRecorded);
    };
    let merchant_id = done.merchant_id;
    let backend = state.store.backend();
    let mut m = memberships::lock_by_id(&mut tx, backend, merchant_id, done.membership_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let invoice = invoices::get(&mut *tx, merchant_id, done.invoice_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let approved = done.status == ChargeStatus::Success;
    let followups = match done.kind {
        ChargeKind::First => {
            lifecycle::first_payment_settled(&mut tx, &mut m, &invoice, approved, at).await?
        }
        ChargeKind::Renewal | ChargeKind::Retry => {
            lifecycle::recurring_settled(&mut tx, &mut m, &done, &invoice, approved, at).await?
        }
        ChargeKind::Proration => {
            update::proration_settled(&mut tx, &mut m, &done, &invoice, approved, at).await?
        }
        ChargeKind::PayNow => {
            lifecycle::pay_now_settled(&mut tx, &mut m, &invoice, approved, at).await?
        }
    };
    if approved {
        // A card entered on a checkout page becomes the payment method once it has paid.
        payment_methods::attach(&mut tx, merchant_id, done.payment_method_id, at).await?;
    }
    let invoice = invoices::get(&mut *tx, merchant_id, done.invoice_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let customer = customers::by_id(&mut *tx, merchant_id, m.customer_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let card = payment_methods::get(&mut *tx, merchant_id, done.payment_method_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    notify::transaction(
        &mut tx,
        state,
        TransactionFacts {
            membership: &m,
            customer: &customer,
            charge: &done,
            invoice: &invoice,
            payment_method: &card,
        },
        at,
    )
    .await?;
    followups
        .record(&mut tx, state, &m, &customer, Some(&invoice), at)
        .await?;
    tx.commit().await?;
    Ok(if approved {
        Settled::Approved(done)
    } else {
        Settled::Declined(done)
    })
}

/// Completes attempts left `Pending` at or before `before` (by a crash, or a processor that did
/// not answer): of one merchant, or of all. Returns how many were completed here.
pub async fn recover_pending(
    state: &AppState,
    merchant_id: Option<i64>,
    before: DateTime<Utc>,
    at: DateTime<Utc>,
) -> Result<usize, BillingError> {
    let mut completed = 0;
    for charge in charges::pending(state.store.pool(), merchant_id, before).await? {
        if !matches!(execute(state, &charge, at).await?, Settled::AlreadyRecorded) {
            completed += 1;
        }
    }
    Ok(completed)
}

impl Followups {
    /// Writes the events and e-mail a settled change calls for, after its transaction event.
    pub async fn record(
        self,
        tx: &mut crate::store::Tx,
        state: &AppState,
        m: &memberships::Membership,
        customer: &customers::Customer,
        invoice: Option<&invoices::Invoice>,
        at: DateTime<Utc>,
    ) -> Result<(), BillingError> {
        if self.status_changed {
            notify::status_changed(tx, m, at).await?;
        }
        if let Some(updates) = self.updated {
            notify::updated(tx, m, updates, at).await?;
        }
        if let Some(kind) = self.email {
            notify::email(tx, state, kind, m, customer, invoice, at).await?;
        }
        Ok(())
    }
}
