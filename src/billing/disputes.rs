//! Chargebacks (DESIGN §17): a cardholder disputed an approved charge with their bank, as the
//! processor reported it (Stripe's `charge.dispute.created`). The charge's invoice is marked
//! `disputed` and the merchant is told with a `TRANSACTION_DATA_UPDATE` of `TransactionType:
//! "Chargeback"`, once per invoice, in one transaction. Nothing else changes: the money stays
//! with the processor until the dispute is decided, and the membership follows what the
//! merchant does next (a cancel, a refund).

use chrono::{DateTime, Utc};

use super::{notify, BillingError};
use crate::events;
use crate::events::subscription::{Chargeback, Movement, TransactionFacts};
use crate::platform::Platform;
use crate::store::invoices::{self, RECENT_INVOICES};
use crate::store::{customers, memberships, payment_methods};

/// Records the dispute `chargeback` at `at`: `false` when its invoice was already marked
/// disputed (nothing changed).
pub async fn record(
    state: &Platform,
    chargeback: &Chargeback,
    at: DateTime<Utc>,
) -> Result<bool, BillingError> {
    let charge = &chargeback.charge;
    let merchant_id = charge.merchant_id;
    let mut tx = state.store.begin().await?;
    if !invoices::mark_disputed(&mut tx, merchant_id, charge.invoice_id).await? {
        tx.rollback().await?;
        return Ok(false);
    }
    let invoice = invoices::get(&mut *tx, merchant_id, charge.invoice_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let m = memberships::by_id(&mut *tx, merchant_id, invoice.membership_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let customer = customers::by_id(&mut *tx, merchant_id, m.customer_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let card = payment_methods::get(&mut *tx, merchant_id, charge.payment_method_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    let recent = invoices::recent(&mut *tx, m.id, RECENT_INVOICES).await?;
    let processor = notify::processor_of(&mut tx, merchant_id, &card).await?;
    let event = notify::transaction(
        state,
        TransactionFacts {
            membership: &m,
            customer: &customer,
            movement: Movement::Chargeback(chargeback),
            invoice: &invoice,
            payment_method: &card,
            recent: &recent,
            processor: processor.as_ref(),
        },
    )
    .await?;
    events::record(&mut tx, vec![event], at).await?;
    tx.commit().await?;
    tracing::info!(
        merchant_id,
        invoice = %invoice.invoice_key,
        "a chargeback was recorded"
    );
    Ok(true)
}
