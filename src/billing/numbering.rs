//! Finalizing invoices: each gets its number, `{prefix}-{YYYY}-{NNNNNN}` (DESIGN §9), in the
//! transaction that makes its first payment attempt (or issues it paid by credit). The year is
//! the merchant's clock at `at`; the sequence is the store's ([`document_numbers`]).

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Datelike, Utc};
use recur_domain::numbering::{format_number, Series};
use recur_domain::settings::DEFAULT_INVOICE_PREFIX;

use super::BillingError;
use crate::store::invoices::{self, Invoice};
use crate::store::{document_numbers, Tx};

/// Numbers those of `to_finalize` that have no number yet, with one statement to take the
/// numbers and one to write them, whatever their count and merchants: by merchant, in the order
/// of their ids. Returns the numbers given, by invoice id. A conflict when another transaction
/// numbered one of them first (this transaction then rolls back, returning its numbers).
pub async fn finalize(
    tx: &mut Tx,
    to_finalize: &[&Invoice],
    at: DateTime<Utc>,
) -> Result<HashMap<i64, String>, BillingError> {
    let year = at.year();
    let mut by_merchant: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for invoice in to_finalize.iter().filter(|i| i.number.is_none()) {
        by_merchant
            .entry(invoice.merchant_id)
            .or_default()
            .push(invoice.id);
    }
    if by_merchant.is_empty() {
        return Ok(HashMap::new());
    }
    let wanted: Vec<(i64, i32, i64)> = by_merchant
        .iter()
        .map(|(merchant_id, ids)| (*merchant_id, year, count(ids.len())))
        .collect();
    let taken = document_numbers::take(tx, Series::Invoice, &wanted).await?;
    let mut numbers = Vec::new();
    for (merchant_id, mut ids) in by_merchant {
        let range = taken.get(&(merchant_id, year)).ok_or_else(|| {
            BillingError::Internal(anyhow::anyhow!("no invoice numbers were taken"))
        })?;
        let prefix = range
            .invoice_prefix
            .as_deref()
            .unwrap_or(DEFAULT_INVOICE_PREFIX);
        ids.sort_unstable();
        for (sequence, id) in (range.first..).zip(ids) {
            numbers.push((id, format_number(prefix, year, sequence)));
        }
    }
    if usize::try_from(invoices::set_numbers(tx, &numbers).await?).ok() != Some(numbers.len()) {
        return Err(BillingError::Conflict(
            "the invoice was finalized concurrently; retry".into(),
        ));
    }
    Ok(numbers.into_iter().collect())
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
