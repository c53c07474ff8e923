//! The `credit_notes` table (DESIGN §9): what a succeeded refund, the voiding of a finalized
//! invoice, or money a change owes back to the customer (DESIGN §4) credits against an invoice,
//! numbered `CN-{YYYY}-{NNNNNN}`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::invoices::{decode_joined, Invoice, JOINED_COLUMNS};
use super::{from_micros, to_micros, Tx};

/// Why a credit note exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreditKind {
    /// A succeeded refund of (part of) the invoice's payment.
    Refund,
    /// The voiding of a finalized invoice: its whole amount.
    Void,
    /// Money a change owes back (a downgrade, unused time at a pause or an interval change),
    /// added to the membership's credit balance.
    Credit,
}

impl CreditKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            CreditKind::Refund => "refund",
            CreditKind::Void => "void",
            CreditKind::Credit => "credit",
        }
    }
}

/// A stored credit note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditNote {
    /// Internal id.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// Public key, `cn_…`.
    pub credit_note_key: String,
    /// `CN-{YYYY}-{NNNNNN}`.
    pub number: String,
    /// The invoice it credits.
    pub invoice_id: i64,
    /// The refund it documents (kind `Refund`).
    pub refund_id: Option<i64>,
    /// Refund, void or credit.
    pub kind: CreditKind,
    /// Minor units of `currency`.
    pub amount: i64,
    /// ISO 4217 code, the invoice's.
    pub currency: String,
    /// The refund's reason, why the invoice was voided, or what the credit is for.
    pub reason: Option<String>,
    /// When it was written (the merchant's clock).
    pub created_at: DateTime<Utc>,
}

/// A credit note to write (its key and number given by the caller).
#[derive(Debug, Clone)]
pub struct NewCreditNote {
    /// Owning merchant.
    pub merchant_id: i64,
    /// Fresh key.
    pub credit_note_key: String,
    /// Its number.
    pub number: String,
    /// The invoice it credits.
    pub invoice_id: i64,
    /// The refund it documents.
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

const COLUMNS: &str = "id, merchant_id, credit_note_key, number, invoice_id, refund_id, kind, \
    amount, currency, reason, created_at";

fn decode(row: &AnyRow) -> Result<CreditNote, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    Ok(CreditNote {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        credit_note_key: row.try_get("credit_note_key")?,
        number: row.try_get("number")?,
        invoice_id: row.try_get("invoice_id")?,
        refund_id: row.try_get("refund_id")?,
        kind: match kind.as_str() {
            "void" => CreditKind::Void,
            "credit" => CreditKind::Credit,
            _ => CreditKind::Refund,
        },
        amount: row.try_get("amount")?,
        currency: row.try_get("currency")?,
        reason: row.try_get("reason")?,
        created_at: from_micros(row.try_get("created_at")?),
    })
}

/// Writes credit notes in one statement and returns them.
pub async fn insert_many(
    tx: &mut Tx,
    new: &[NewCreditNote],
    now: DateTime<Utc>,
) -> Result<Vec<CreditNote>, sqlx::Error> {
    if new.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "INSERT INTO credit_notes (merchant_id, credit_note_key, number, invoice_id, refund_id, \
         kind, amount, currency, reason, created_at) VALUES {} RETURNING {COLUMNS}",
        super::placeholders(new.len(), 10, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for note in new {
        query = query
            .bind(note.merchant_id)
            .bind(note.credit_note_key.clone())
            .bind(note.number.clone())
            .bind(note.invoice_id)
            .bind(note.refund_id)
            .bind(note.kind.as_str())
            .bind(note.amount)
            .bind(note.currency.clone())
            .bind(note.reason.clone())
            .bind(to_micros(now));
    }
    query
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(decode)
        .collect()
}

/// The credit notes of the merchant's invoices `invoice_ids`, oldest first, by invoice id.
pub async fn of_invoices<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    invoice_ids: &[i64],
) -> Result<HashMap<i64, Vec<CreditNote>>, sqlx::Error> {
    if invoice_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM credit_notes WHERE merchant_id = $1 AND invoice_id IN \
         (SELECT column1 FROM (VALUES {}) AS v) ORDER BY id",
        super::placeholders(invoice_ids.len(), 1, 2)
    );
    let mut query = sqlx::query(&sql).bind(merchant_id);
    for id in invoice_ids {
        query = query.bind(*id);
    }
    let mut notes: HashMap<i64, Vec<CreditNote>> = HashMap::new();
    for row in query.fetch_all(executor).await? {
        let note = decode(&row)?;
        notes.entry(note.invoice_id).or_default().push(note);
    }
    Ok(notes)
}

/// The merchant's credit notes of one invoice, oldest first.
pub async fn of_invoice<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    invoice_id: i64,
) -> Result<Vec<CreditNote>, sqlx::Error> {
    Ok(of_invoices(executor, merchant_id, &[invoice_id])
        .await?
        .remove(&invoice_id)
        .unwrap_or_default())
}

/// The credit note with this public key, if it belongs to `merchant_id`.
pub async fn by_key<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    credit_note_key: &str,
) -> Result<Option<CreditNote>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM credit_notes WHERE merchant_id = $1 AND credit_note_key = $2"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(credit_note_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The invoice that a credit for the period of membership `membership_id` starting at
/// `period_start` names: the one that billed that period (the newest not voided whose period
/// starts then), or else the newest not voided before it.
pub async fn credited_invoice(
    tx: &mut Tx,
    membership_id: i64,
    period_start: DateTime<Utc>,
) -> Result<Option<Invoice>, sqlx::Error> {
    let sql = format!(
        "SELECT {} FROM invoices i WHERE i.membership_id = $1 AND i.status <> 'Void' \
         AND (i.period_start IS NULL OR i.period_start <= $2) \
         ORDER BY CASE WHEN i.period_start = $2 THEN 0 ELSE 1 END, i.id DESC LIMIT 1",
        *JOINED_COLUMNS
    );
    let row = sqlx::query(&sql)
        .bind(membership_id)
        .bind(to_micros(period_start))
        .fetch_optional(&mut **tx)
        .await?;
    Ok(match row {
        Some(row) => decode_joined(&row)?,
        None => None,
    })
}
