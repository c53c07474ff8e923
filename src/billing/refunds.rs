//! Refunds of subscription invoices (DESIGN §9), in the engine's three steps: a transaction
//! checks the invoice under its lock and writes a `Pending` refund that reserves the amount; the
//! processor is asked with the refund's idempotency key; a second transaction records the answer,
//! the invoice's `amountRefunded`, the credit note with its customer e-mail, and the
//! `TRANSACTION_DATA_UPDATE`. A crash between the steps
//! leaves a `Pending` refund that [`recover_pending`] completes by asking again with the same
//! key, so money is never given back twice. The membership's status does not change.

use chrono::{DateTime, Utc};
use recur_domain::money::{refund_amount, Currency};
use recur_domain::status::InvoiceStatus;
use rust_decimal::Decimal;

use super::credit_notes as notes;
use super::followups::Followups;
use super::notify;
use super::BillingError;
use crate::delivery::credits::Credited;
use crate::events;
use crate::events::subscription::{Movement, TransactionFacts};
use crate::ids;
use crate::platform::Platform;
use crate::processor::{ChargeOutcome, RefundRequest};
use crate::store::charges::{self, Charge};
use crate::store::credit_notes::{self, CreditNote};
use crate::store::customers;
use crate::store::invoices::{self, Invoice, RECENT_INVOICES};
use crate::store::memberships;
use crate::store::payment_methods;
use crate::store::refunds::{self, Answer, NewRefund, Refund, RefundStatus, Refunded};
use crate::store::Tx;

/// What the merchant asks for.
#[derive(Debug, Clone)]
pub struct RefundAsk {
    /// In the invoice's currency; everything still refundable when `None`. An error holds why
    /// the amount given could not be read: it is answered once the invoice is known refundable.
    pub amount: Result<Option<Decimal>, String>,
    /// The merchant's reason, kept with the refund.
    pub reason: Option<String>,
}

/// A refund as recorded, with the credit note a succeeded one wrote.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The refund.
    pub refund: Refund,
    /// Its credit note (`None` unless it succeeded).
    pub credit_note: Option<CreditNote>,
}

/// Refunds (part of) the card payment of the merchant's Paid invoice `invoice_key` and returns
/// the refund as recorded: `Succeeded` (with its credit note) or `Failed` (the processor
/// refused).
///
/// Conflict when the invoice is not Paid or nothing of it is left to refund (checked before the
/// amount); `Invalid` on `amount` when it is not positive or more than what is left.
pub async fn refund_invoice(
    state: &Platform,
    merchant_id: i64,
    invoice_key: &str,
    ask: RefundAsk,
) -> Result<Recorded, BillingError> {
    let now = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let invoice = invoices::lock_by_key(&mut tx, state.store.backend(), merchant_id, invoice_key)
        .await?
        .ok_or(BillingError::NotFound)?;
    if invoice.status != InvoiceStatus::Paid {
        return Err(BillingError::Conflict(format!(
            "the invoice is {}: only a Paid invoice can be refunded",
            invoice.status
        )));
    }
    let left = left_to_refund(&mut tx, &invoice).await?;
    let charge = match charges::approved_for_invoice(&mut *tx, invoice.id).await? {
        Some(charge) if left > 0 => charge,
        _ if invoice.amount_paid == 0 => {
            return Err(BillingError::Conflict(
                "the invoice was paid entirely by credit: no card payment to refund".into(),
            ))
        }
        _ => {
            return Err(BillingError::Conflict(
                "the invoice is fully refunded".into(),
            ))
        }
    };
    let currency = Currency::parse(&invoice.currency).map_err(anyhow::Error::from)?;
    let invalid = |message: String| BillingError::Invalid {
        field: "amount",
        message,
    };
    let amount = refund_amount(ask.amount.map_err(invalid)?, left, currency).map_err(invalid)?;
    let refund_key = ids::refund_key();
    let new = NewRefund {
        merchant_id,
        refund_key: &refund_key,
        refunded: Refunded::Invoice {
            invoice_id: invoice.id,
            charge_id: charge.id,
        },
        idempotency_key: &format!("refund:{refund_key}"),
        amount,
        currency: &invoice.currency,
        reason: ask.reason.as_deref(),
    };
    let refund = refunds::insert_pending(&mut tx, &new, now).await?;
    tx.commit().await?;
    execute(state, &refund, now).await
}

/// What is left to refund of the card payment of `invoice` (read under its lock): what was paid
/// less every refund not failed, `Pending` ones included (they reserve their amount).
async fn left_to_refund(tx: &mut Tx, invoice: &Invoice) -> Result<i64, BillingError> {
    let reserved: i64 = refunds::of_invoice(&mut **tx, invoice.id)
        .await?
        .iter()
        .filter(|r| r.status != RefundStatus::Failed)
        .map(|r| r.amount)
        .sum();
    Ok(invoice.amount_paid - reserved)
}

/// Asks the processor to run a `Pending` invoice refund (again: the idempotency key makes a
/// repeat harmless) and records the answer, with a credit note when it succeeded. Returns the
/// refund as recorded, by this process or by another that answered first.
pub async fn execute(
    state: &Platform,
    refund: &Refund,
    at: DateTime<Utc>,
) -> Result<Recorded, BillingError> {
    let Refunded::Invoice {
        invoice_id,
        charge_id,
    } = refund.refunded
    else {
        return Err(BillingError::Internal(anyhow::anyhow!(
            "refund {} is not an invoice refund",
            refund.id
        )));
    };
    let pool = state.store.pool();
    let charge = charges::approved_for_invoice(pool, invoice_id)
        .await?
        .filter(|c| c.id == charge_id)
        .ok_or(BillingError::NotFound)?;
    let reference = charge.processor_reference.as_deref().unwrap_or_default();
    let card = payment_methods::get(pool, refund.merchant_id, charge.payment_method_id).await?;
    let outcome = match card.and_then(|card| card.processor_id) {
        Some(processor_id) => {
            super::stripe_charging::refund(
                state,
                refund.merchant_id,
                processor_id,
                reference,
                refund.amount,
                &refund.refund_key,
                &refund.idempotency_key,
            )
            .await?
        }
        None => {
            state
                .processor
                .refund(RefundRequest {
                    merchant_id: refund.merchant_id,
                    idempotency_key: &refund.idempotency_key,
                    charge_reference: reference,
                    amount: refund.amount,
                    currency: &refund.currency,
                })
                .await?
        }
    };
    record(state, refund, invoice_id, &charge, outcome, at).await
}

/// Records a refund of the approved `charge` that its Stripe account made without recur (the
/// merchant refunded in Stripe's dashboard; Stripe's `charge.refunded` webhook tells):
/// `reference` is Stripe's refund (`re_…`), `amount` what it gave back, capped at what is left
/// of the invoice to refund. Once per Stripe refund; `None` when it was recorded before or
/// nothing is left to refund.
pub async fn record_external(
    state: &Platform,
    charge: &Charge,
    reference: &str,
    amount: i64,
    at: DateTime<Utc>,
) -> Result<Option<Recorded>, BillingError> {
    let merchant_id = charge.merchant_id;
    let idempotency_key = format!("stripe-refund:{reference}");
    let pool = state.store.pool();
    if refunds::by_idempotency_key(pool, merchant_id, &idempotency_key)
        .await?
        .is_some()
    {
        return Ok(None);
    }
    let mut tx = state.store.begin().await?;
    let invoice = invoices::lock(
        &mut tx,
        state.store.backend(),
        merchant_id,
        charge.invoice_id,
    )
    .await?
    .ok_or(BillingError::NotFound)?;
    let amount = amount.min(left_to_refund(&mut tx, &invoice).await?);
    if amount <= 0 {
        return Ok(None);
    }
    let refund_key = ids::refund_key();
    let new = NewRefund {
        merchant_id,
        refund_key: &refund_key,
        refunded: Refunded::Invoice {
            invoice_id: invoice.id,
            charge_id: charge.id,
        },
        idempotency_key: &idempotency_key,
        amount,
        currency: &invoice.currency,
        reason: Some("Refunded in Stripe's dashboard"),
    };
    let refund = refunds::insert_pending(&mut tx, &new, at).await?;
    tx.commit().await?;
    let approved = ChargeOutcome::Approved {
        reference: reference.to_owned(),
    };
    Ok(Some(
        record(state, &refund, invoice.id, charge, approved, at).await?,
    ))
}

/// Records the processor's answer to the `Pending` `refund` of `charge` (of invoice
/// `invoice_id`): the invoice's `amountRefunded`, a credit note when it succeeded, the
/// notification and the e-mail, in one transaction. A refund another process recorded first is
/// returned as it was recorded.
async fn record(
    state: &Platform,
    refund: &Refund,
    invoice_id: i64,
    charge: &Charge,
    outcome: ChargeOutcome,
    at: DateTime<Utc>,
) -> Result<Recorded, BillingError> {
    let pool = state.store.pool();
    let answer = match &outcome {
        ChargeOutcome::Approved { reference } => Answer {
            status: RefundStatus::Succeeded,
            reference: Some(reference),
            decline: None,
        },
        ChargeOutcome::Declined {
            reference,
            code,
            reason,
        } => Answer {
            status: RefundStatus::Failed,
            reference: Some(reference),
            decline: Some((code, reason)),
        },
    };
    let mut tx = state.store.begin().await?;
    let Some(done) = refunds::complete(&mut tx, refund.id, answer, at).await? else {
        tx.rollback().await?;
        let refund = refunds::by_id(pool, refund.merchant_id, refund.id)
            .await?
            .ok_or(BillingError::NotFound)?;
        let credit_note = credit_notes::of_invoice(pool, refund.merchant_id, invoice_id)
            .await?
            .into_iter()
            .find(|note| note.refund_id == Some(refund.id));
        return Ok(Recorded {
            refund,
            credit_note,
        });
    };
    if done.status == RefundStatus::Succeeded {
        invoices::add_refunded(&mut tx, invoice_id, done.amount).await?;
    }
    // Read again in this transaction: the notification shows what is refunded now, other
    // refunds that completed meanwhile included.
    let invoice = invoices::get(&mut *tx, done.merchant_id, invoice_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let credit_note = if done.status == RefundStatus::Succeeded {
        let credit = notes::of_refund(&invoice, &done);
        notes::write(&mut tx, vec![credit], at).await?.pop()
    } else {
        None
    };
    let m = memberships::by_id(&mut *tx, done.merchant_id, invoice.membership_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let customer = customers::by_id(&mut *tx, m.merchant_id, m.customer_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let card = payment_methods::get(&mut *tx, m.merchant_id, charge.payment_method_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let recent = invoices::recent(&mut *tx, m.id, RECENT_INVOICES).await?;
    let processor = notify::processor_of(&mut tx, m.merchant_id, &card).await?;
    let event = notify::transaction(
        state,
        TransactionFacts {
            membership: &m,
            customer: &customer,
            movement: Movement::Refund(&done, credit_note.as_ref()),
            invoice: &invoice,
            payment_method: &card,
            recent: &recent,
            processor: processor.as_ref(),
        },
    )
    .await?;
    events::record(&mut tx, vec![event], at).await?;
    // The customer's credit-note e-mail, with the number of the invoice it credits.
    let credits = credit_note
        .iter()
        .map(|note| Credited {
            note: note.clone(),
            invoice_number: invoice
                .number
                .clone()
                .unwrap_or_else(|| invoice.invoice_key.clone()),
        })
        .collect();
    Followups {
        credits,
        ..Followups::default()
    }
    .record(&mut tx, state, &m, &customer, None, at)
    .await?;
    tx.commit().await?;
    Ok(Recorded {
        refund: done,
        credit_note,
    })
}

/// Completes invoice refunds left `Pending` at or before `before` (a crash, or a processor that
/// did not answer): of one merchant, or of all. Returns how many there were.
pub async fn recover_pending(
    state: &Platform,
    merchant_id: Option<i64>,
    before: DateTime<Utc>,
    at: DateTime<Utc>,
) -> Result<usize, BillingError> {
    let pending = refunds::pending(state.store.pool(), merchant_id, before).await?;
    let mut completed = 0;
    for refund in &pending {
        match execute(state, refund, at).await {
            Ok(_) => completed += 1,
            // Stripe out of reach: the refund stays Pending for the next pass; the others and
            // the renewals go on.
            Err(BillingError::Unavailable(_)) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(completed)
}
