//! Credit notes (DESIGN §9): one per succeeded refund, one for the amount of a finalized
//! invoice that is voided, and one for money a change owes back to the customer (DESIGN §4: a
//! downgrade, the unused time at a pause or an interval change; never a negative invoice),
//! written in the transaction of the refund, the void or the change and numbered
//! `CN-{YYYY}-{NNNNNN}` from the merchant's `credit_note` series (the year of the merchant's
//! clock at `at`).

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Utc};
use recur_domain::invoice::CreditPlan;
use recur_domain::numbering::{format_number, Series, CREDIT_NOTE_PREFIX};
use serde::{Deserialize, Serialize};

use super::BillingError;
use crate::delivery::credits::Credited;
use crate::ids;
use crate::store::credit_notes::{self, CreditKind, CreditNote, NewCreditNote};
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;
use crate::store::refunds::Refund;
use crate::store::{document_numbers, Tx};

/// What one credit note credits.
#[derive(Debug, Clone)]
pub struct Credit {
    /// The invoice credited.
    pub invoice: i64,
    /// Its merchant.
    pub merchant_id: i64,
    /// The refund documented, for a refund's note.
    pub refund_id: Option<i64>,
    /// Refund, void or credit.
    pub kind: CreditKind,
    /// Minor units, positive.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// Why.
    pub reason: Option<String>,
}

/// The credit of a succeeded `refund` of `invoice`.
pub fn of_refund(invoice: &Invoice, refund: &Refund) -> Credit {
    Credit {
        invoice: invoice.id,
        merchant_id: invoice.merchant_id,
        refund_id: Some(refund.id),
        kind: CreditKind::Refund,
        amount: refund.amount,
        currency: refund.currency.clone(),
        reason: refund.reason.clone(),
    }
}

/// Writes the credit notes of the `voided` invoices that were finalized (numbered) and billed an
/// amount: each credits what it billed, saying `reason`. Unnumbered invoices never existed for
/// an accountant and get none. Returns them with their invoices' numbers, for the e-mail.
pub async fn for_voided(
    tx: &mut Tx,
    voided: &[Invoice],
    reason: &str,
    at: DateTime<Utc>,
) -> Result<Vec<Credited>, BillingError> {
    let credits: Vec<Credit> = voided
        .iter()
        .filter(|i| i.number.is_some() && i.amount_due > 0)
        .map(|i| Credit {
            invoice: i.id,
            merchant_id: i.merchant_id,
            refund_id: None,
            kind: CreditKind::Void,
            amount: i.amount_due,
            currency: i.currency.clone(),
            reason: Some(reason.to_string()),
        })
        .collect();
    let notes = write(tx, credits, at).await?;
    Ok(notes
        .into_iter()
        .filter_map(|note| {
            let invoice = voided.iter().find(|i| i.id == note.invoice_id)?;
            let invoice_number = invoice.number.clone()?;
            Some(Credited {
                note,
                invoice_number,
            })
        })
        .collect())
}

/// Money a change owes back to the customer (DESIGN §4), credited against the invoice that
/// billed the period it comes from. It travels in a proration charge's pending update when the
/// change waits on a charge, and is written only once the change applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwedBack {
    /// The invoice credited.
    pub invoice_id: i64,
    /// Its number (its key while it has none), for the e-mail.
    pub invoice_number: String,
    /// Its merchant.
    pub merchant_id: i64,
    /// Minor units, positive.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// What it is for.
    pub reason: String,
}

/// What `credit` owes back to the customer of `m` from its period that started at
/// `period_start` (the current one, before the change ends or moves it), naming the invoice
/// that billed that period.
pub async fn owed_back(
    tx: &mut Tx,
    m: &Membership,
    period_start: Option<DateTime<Utc>>,
    credit: &CreditPlan,
) -> Result<OwedBack, BillingError> {
    let start = period_start
        .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("credit outside a period")))?;
    let invoice = credit_notes::credited_invoice(tx, m.id, start)
        .await?
        .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("no invoice billed the period")))?;
    Ok(OwedBack {
        invoice_id: invoice.id,
        invoice_number: invoice.number.unwrap_or(invoice.invoice_key),
        merchant_id: m.merchant_id,
        amount: credit.amount,
        currency: m.currency.clone(),
        reason: credit.reason.clone(),
    })
}

/// Writes the credit note of `owed`, whose amount the change adds to the credit balance, and
/// returns it with the number of the invoice it credits, for the e-mail.
pub async fn for_balance(
    tx: &mut Tx,
    owed: OwedBack,
    at: DateTime<Utc>,
) -> Result<Vec<Credited>, BillingError> {
    let credit = Credit {
        invoice: owed.invoice_id,
        merchant_id: owed.merchant_id,
        refund_id: None,
        kind: CreditKind::Credit,
        amount: owed.amount,
        currency: owed.currency,
        reason: Some(owed.reason),
    };
    Ok(write(tx, vec![credit], at)
        .await?
        .into_iter()
        .map(|note| Credited {
            note,
            invoice_number: owed.invoice_number.clone(),
        })
        .collect())
}

/// Numbers and writes `credits` with one statement each for the numbers and the notes, in
/// order within each merchant.
pub async fn write(
    tx: &mut Tx,
    credits: Vec<Credit>,
    at: DateTime<Utc>,
) -> Result<Vec<CreditNote>, BillingError> {
    if credits.is_empty() {
        return Ok(Vec::new());
    }
    let year = at.year();
    let mut counts: BTreeMap<i64, i64> = BTreeMap::new();
    for credit in &credits {
        *counts.entry(credit.merchant_id).or_default() += 1;
    }
    let wanted: Vec<(i64, i32, i64)> = counts.iter().map(|(m, n)| (*m, year, *n)).collect();
    let taken = document_numbers::take(tx, Series::CreditNote, &wanted).await?;
    let mut next: BTreeMap<i64, i64> = BTreeMap::new();
    let mut new = Vec::with_capacity(credits.len());
    for credit in credits {
        let first = taken
            .get(&(credit.merchant_id, year))
            .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("no credit note numbers")))?
            .first;
        let sequence = next.entry(credit.merchant_id).or_insert(first);
        new.push(NewCreditNote {
            merchant_id: credit.merchant_id,
            credit_note_key: ids::credit_note_key(),
            number: format_number(CREDIT_NOTE_PREFIX, year, *sequence),
            invoice_id: credit.invoice,
            refund_id: credit.refund_id,
            kind: credit.kind,
            amount: credit.amount,
            currency: credit.currency,
            reason: credit.reason,
        });
        *sequence += 1;
    }
    Ok(credit_notes::insert_many(tx, &new, at).await?)
}
