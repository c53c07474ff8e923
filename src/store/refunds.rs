//! The `refunds` table: the one refund ledger of subscription invoices and cashier orders
//! (DESIGN §9). A refund's id is its `TransactionId` ([`super::transaction_ids`]).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, to_micros, transaction_ids, Tx};

/// Where a refund stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundStatus {
    /// Written before the processor is asked; its amount is reserved.
    Pending,
    /// The processor gave the money back.
    Succeeded,
    /// The processor refused.
    Failed,
}

impl RefundStatus {
    /// The stored and answered name.
    pub fn as_str(self) -> &'static str {
        match self {
            RefundStatus::Pending => "Pending",
            RefundStatus::Succeeded => "Succeeded",
            RefundStatus::Failed => "Failed",
        }
    }

    fn from_db(text: &str) -> RefundStatus {
        match text {
            "Succeeded" => RefundStatus::Succeeded,
            "Failed" => RefundStatus::Failed,
            _ => RefundStatus::Pending,
        }
    }
}

/// What a refund gives back: a subscription invoice's charge or a cashier order's payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refunded {
    /// The approved charge `charge_id` that paid invoice `invoice_id`.
    Invoice {
        /// The invoice.
        invoice_id: i64,
        /// Its approved charge.
        charge_id: i64,
    },
    /// The cashier pay-in `payment_id`.
    CashierPayment {
        /// The pay-in's transaction id.
        payment_id: i64,
    },
}

/// A ledger row.
#[derive(Debug, Clone)]
pub struct Refund {
    /// The `TransactionId`.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// Public key, `rfnd_…`.
    pub refund_key: String,
    /// What it gives back.
    pub refunded: Refunded,
    /// Sent to the processor: a repeat is answered, never refunded again.
    pub idempotency_key: String,
    /// Minor units of `currency`.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// Pending, Succeeded or Failed.
    pub status: RefundStatus,
    /// The merchant's reason, if given.
    pub reason: Option<String>,
    /// The processor's reference of the refund.
    pub processor_reference: Option<String>,
    /// Code and text of a refusal.
    pub decline: Option<(String, String)>,
    /// When it was asked for.
    pub created_at: DateTime<Utc>,
    /// When the processor's answer was recorded.
    pub completed_at: Option<DateTime<Utc>>,
}

/// A refund to write.
#[derive(Debug, Clone)]
pub struct NewRefund<'a> {
    /// Owning merchant.
    pub merchant_id: i64,
    /// Fresh key, `rfnd_…`.
    pub refund_key: &'a str,
    /// What it gives back.
    pub refunded: Refunded,
    /// Unique per refund.
    pub idempotency_key: &'a str,
    /// Minor units of `currency`.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: &'a str,
    /// The merchant's reason, if given.
    pub reason: Option<&'a str>,
}

const COLUMNS: &str = "id, merchant_id, refund_key, invoice_id, charge_id, cashier_payment_id, \
    idempotency_key, amount, currency, status, reason, processor_reference, decline_code, \
    decline_reason, created_at, completed_at";

fn decode(row: &AnyRow) -> Result<Refund, sqlx::Error> {
    let invoice_id: Option<i64> = row.try_get("invoice_id")?;
    let refunded = match invoice_id {
        Some(invoice_id) => Refunded::Invoice {
            invoice_id,
            charge_id: row
                .try_get::<Option<i64>, _>("charge_id")?
                .unwrap_or_default(),
        },
        None => Refunded::CashierPayment {
            payment_id: row
                .try_get::<Option<i64>, _>("cashier_payment_id")?
                .unwrap_or_default(),
        },
    };
    let code: Option<String> = row.try_get("decline_code")?;
    let reason: Option<String> = row.try_get("decline_reason")?;
    Ok(Refund {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        refund_key: row.try_get("refund_key")?,
        refunded,
        idempotency_key: row.try_get("idempotency_key")?,
        amount: row.try_get("amount")?,
        currency: row.try_get("currency")?,
        status: RefundStatus::from_db(&row.try_get::<String, _>("status")?),
        reason: row.try_get("reason")?,
        processor_reference: row.try_get("processor_reference")?,
        decline: code.map(|code| (code, reason.unwrap_or_default())),
        created_at: from_micros(row.try_get("created_at")?),
        completed_at: row
            .try_get::<Option<i64>, _>("completed_at")?
            .map(from_micros),
    })
}

/// Writes a `Pending` refund with a new `TransactionId`.
pub async fn insert_pending(
    tx: &mut Tx,
    new: &NewRefund<'_>,
    now: DateTime<Utc>,
) -> Result<Refund, sqlx::Error> {
    let (invoice_id, charge_id, payment_id) = match new.refunded {
        Refunded::Invoice {
            invoice_id,
            charge_id,
        } => (Some(invoice_id), Some(charge_id), None),
        Refunded::CashierPayment { payment_id } => (None, None, Some(payment_id)),
    };
    let sql = format!(
        "INSERT INTO refunds (id, merchant_id, refund_key, invoice_id, charge_id, \
         cashier_payment_id, idempotency_key, amount, currency, status, reason, created_at) \
         VALUES {} RETURNING {COLUMNS}",
        transaction_ids::values_with_ids(tx, 1, 11, 1)
    );
    let row = sqlx::query(&sql)
        .bind(new.merchant_id)
        .bind(new.refund_key)
        .bind(invoice_id)
        .bind(charge_id)
        .bind(payment_id)
        .bind(new.idempotency_key)
        .bind(new.amount)
        .bind(new.currency)
        .bind(RefundStatus::Pending.as_str())
        .bind(new.reason)
        .bind(to_micros(now))
        .fetch_one(&mut **tx)
        .await?;
    decode(&row)
}

/// Writes a cashier refund that has already run, under the id of its `cashier_transactions` row
/// (`transaction_id`, drawn from the same sequence).
pub async fn insert_cashier(
    tx: &mut Tx,
    transaction_id: i64,
    new: &NewRefund<'_>,
    answer: Answer<'_>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let Refunded::CashierPayment { payment_id } = new.refunded else {
        return Err(sqlx::Error::Protocol(
            "a cashier refund refunds a cashier payment".into(),
        ));
    };
    sqlx::query(
        "INSERT INTO refunds (id, merchant_id, refund_key, cashier_payment_id, idempotency_key, \
         amount, currency, status, reason, processor_reference, decline_code, decline_reason, \
         created_at, completed_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
    )
    .bind(transaction_id)
    .bind(new.merchant_id)
    .bind(new.refund_key)
    .bind(payment_id)
    .bind(new.idempotency_key)
    .bind(new.amount)
    .bind(new.currency)
    .bind(answer.status.as_str())
    .bind(new.reason)
    .bind(answer.reference)
    .bind(answer.decline.map(|d| d.0))
    .bind(answer.decline.map(|d| d.1))
    .bind(to_micros(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The processor's answer to a refund.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// Succeeded or Failed.
    pub status: RefundStatus,
    /// The processor's reference.
    pub reference: Option<&'a str>,
    /// Code and text of a refusal.
    pub decline: Option<(&'a str, &'a str)>,
}

/// Records the processor's answer on a `Pending` refund. `None` when it was no longer Pending
/// (another process recorded the answer first).
pub async fn complete(
    tx: &mut Tx,
    id: i64,
    answer: Answer<'_>,
    now: DateTime<Utc>,
) -> Result<Option<Refund>, sqlx::Error> {
    sqlx::query(&format!(
        "UPDATE refunds SET status = $1, processor_reference = $2, decline_code = $3, \
         decline_reason = $4, completed_at = $5 WHERE id = $6 AND status = 'Pending' \
         RETURNING {COLUMNS}"
    ))
    .bind(answer.status.as_str())
    .bind(answer.reference)
    .bind(answer.decline.map(|d| d.0))
    .bind(answer.decline.map(|d| d.1))
    .bind(to_micros(now))
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?
    .as_ref()
    .map(decode)
    .transpose()
}

/// The refund of `merchant_id` written under `idempotency_key`, if any.
pub async fn by_idempotency_key<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    idempotency_key: &str,
) -> Result<Option<Refund>, sqlx::Error> {
    sqlx::query(&format!(
        "SELECT {COLUMNS} FROM refunds WHERE idempotency_key = $1 AND merchant_id = $2"
    ))
    .bind(idempotency_key)
    .bind(merchant_id)
    .fetch_optional(executor)
    .await?
    .as_ref()
    .map(decode)
    .transpose()
}

/// The refund `id` of `merchant_id`.
pub async fn by_id<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<Refund>, sqlx::Error> {
    sqlx::query(&format!(
        "SELECT {COLUMNS} FROM refunds WHERE merchant_id = $1 AND id = $2"
    ))
    .bind(merchant_id)
    .bind(id)
    .fetch_optional(executor)
    .await?
    .as_ref()
    .map(decode)
    .transpose()
}

/// The refunds of invoice `invoice_id`, oldest first.
pub async fn of_invoice<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    invoice_id: i64,
) -> Result<Vec<Refund>, sqlx::Error> {
    Ok(of_invoices(executor, &[invoice_id])
        .await?
        .remove(&invoice_id)
        .unwrap_or_default())
}

/// The refunds of these invoices (ids read under their merchant), oldest first, by invoice id;
/// an invoice without refunds is left out.
pub async fn of_invoices<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    invoice_ids: &[i64],
) -> Result<HashMap<i64, Vec<Refund>>, sqlx::Error> {
    let select = format!("SELECT {COLUMNS} FROM refunds");
    let rows = super::rows_with_ids(executor, &select, "invoice_id", invoice_ids, "id").await?;
    let mut refunds: HashMap<i64, Vec<Refund>> = HashMap::new();
    for row in rows {
        let refund = decode(&row)?;
        if let Refunded::Invoice { invoice_id, .. } = refund.refunded {
            refunds.entry(invoice_id).or_default().push(refund);
        }
    }
    Ok(refunds)
}

/// How many refunds cashier payment `payment_id` has had, and how much of it they gave back.
pub async fn of_cashier_payment<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    payment_id: i64,
) -> Result<(i64, i64), sqlx::Error> {
    sqlx::query_as(
        "SELECT COUNT(*), CAST(COALESCE(SUM(CASE WHEN status = 'Succeeded' THEN amount ELSE 0 \
         END), 0) AS BIGINT) FROM refunds WHERE merchant_id = $1 AND cashier_payment_id = $2",
    )
    .bind(merchant_id)
    .bind(payment_id)
    .fetch_one(executor)
    .await
}

/// Invoice refunds left `Pending` since before `before` (a crash, or a processor that did not
/// answer), of one merchant or of all, oldest first.
pub async fn pending<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: Option<i64>,
    before: DateTime<Utc>,
) -> Result<Vec<Refund>, sqlx::Error> {
    sqlx::query(&format!(
        "SELECT {COLUMNS} FROM refunds WHERE status = 'Pending' AND created_at <= $1 \
         AND ($2 = 0 OR merchant_id = $2) ORDER BY id LIMIT 100"
    ))
    .bind(to_micros(before))
    .bind(merchant_id.unwrap_or(0))
    .fetch_all(executor)
    .await?
    .iter()
    .map(decode)
    .collect()
}
