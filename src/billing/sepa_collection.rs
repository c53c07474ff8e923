//! SEPA debits collected (DESIGN §18): on the collection date of the file that took them, the
//! billing worker and a test-clock advance record them as approved, as any processor's answer
//! is recorded ([`charging::record_many`]): invoice Paid, `TRANSACTION_DATA_UPDATE` Success with
//! the `EndToEndId` as reference, receipt. The membership stood as paid since the debit was
//! made ([`super::sepa_debits`]) and is not touched again.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::{charging, BillingError};
use crate::platform::Platform;
use crate::processor::ChargeOutcome;
use crate::store::charges::{self, Charge, ChargeStatus};
use crate::store::sepa_debits;

/// How many collected debits one pass records together.
const COLLECTION_BATCH: i64 = 250;

/// Records as paid the debits whose collection file's date has come by `at` (on the
/// merchant's clock): of one merchant, or of all. Returns how many were recorded here.
pub async fn collect_due(
    state: &Platform,
    merchant_id: Option<i64>,
    at: DateTime<Utc>,
) -> Result<usize, BillingError> {
    let pool = state.store.pool();
    let mut recorded = 0;
    loop {
        let due =
            sepa_debits::due_for_collection(pool, merchant_id, at.date_naive(), COLLECTION_BATCH)
                .await?;
        if due.is_empty() {
            return Ok(recorded);
        }
        let ids: Vec<(i64, i64)> = due.iter().map(|d| (d.merchant_id, d.charge_id)).collect();
        let references: HashMap<i64, String> = due
            .iter()
            .map(|d| (d.charge_id, d.end_to_end_id.clone()))
            .collect();
        let answered: Vec<(Charge, ChargeOutcome)> = charges::get_many(pool, &ids)
            .await?
            .into_iter()
            .filter(|c| c.status == ChargeStatus::Pending)
            .map(|c| {
                let reference = references.get(&c.id).cloned().unwrap_or_default();
                (c, ChargeOutcome::Approved { reference })
            })
            .collect();
        recorded += answered.len();
        if !answered.is_empty() {
            charging::record_many(state, answered, at).await?;
        }
        let mut tx = state.store.begin().await?;
        let charge_ids: Vec<i64> = due.iter().map(|d| d.charge_id).collect();
        sepa_debits::mark_collected(&mut tx, &charge_ids, at).await?;
        tx.commit().await?;
        if due.len() < usize::try_from(COLLECTION_BATCH).unwrap_or(usize::MAX) {
            return Ok(recorded);
        }
    }
}
