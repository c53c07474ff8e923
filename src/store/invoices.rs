//! The `invoices` table: one invoice per billing period (the first included) and per proration.
//! `billing_key` (`first`, `period:<start>`, `proration:<n>`) is unique per membership, so a
//! period can never be invoiced, and so charged, twice.

use chrono::{DateTime, Utc};
use recur_domain::calendar::Period;
use recur_domain::invoice::{InvoiceLine, InvoicePlan};
use recur_domain::status::InvoiceStatus;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, is_unique_violation, to_micros, Tx};

/// Why an invoice exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceKind {
    /// The first period, paid at checkout.
    First,
    /// A later period, charged by the renewal engine.
    Renewal,
    /// A mid-period change of plan.
    Proration,
}

impl InvoiceKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            InvoiceKind::First => "first",
            InvoiceKind::Renewal => "renewal",
            InvoiceKind::Proration => "proration",
        }
    }

    fn from_db(text: &str) -> InvoiceKind {
        match text {
            "first" => InvoiceKind::First,
            "proration" => InvoiceKind::Proration,
            _ => InvoiceKind::Renewal,
        }
    }
}

/// A stored invoice.
#[derive(Debug, Clone)]
pub struct Invoice {
    /// Internal id.
    pub id: i64,
    /// The membership it bills.
    pub membership_id: i64,
    /// Public key, `in_…`.
    pub invoice_key: String,
    /// Why it exists.
    pub kind: InvoiceKind,
    /// Draft, Open, Paid, Void or Uncollectible.
    pub status: InvoiceStatus,
    /// ISO 4217 code.
    pub currency: String,
    /// The period it bills (none for the first invoice until it is paid).
    pub period: Option<Period>,
    /// Sum of the lines before credit.
    pub subtotal: i64,
    /// Credit consumed.
    pub credit_applied: i64,
    /// Due from the payment method.
    pub amount_due: i64,
    /// Paid by the payment method.
    pub amount_paid: i64,
    /// The lines, credit last.
    pub lines: Vec<InvoiceLine>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// When it was paid.
    pub paid_at: Option<DateTime<Utc>>,
    /// When it was voided.
    pub voided_at: Option<DateTime<Utc>>,
}

/// A new invoice.
#[derive(Debug, Clone)]
pub struct NewInvoice<'a> {
    /// Owning merchant.
    pub merchant_id: i64,
    /// The membership it bills.
    pub membership_id: i64,
    /// Fresh key.
    pub invoice_key: String,
    /// Unique per membership: `first`, `period:<start>` or `proration:<n>`.
    pub billing_key: String,
    /// Why it exists.
    pub kind: InvoiceKind,
    /// Initial status.
    pub status: InvoiceStatus,
    /// ISO 4217 code.
    pub currency: &'a str,
    /// The period it bills.
    pub period: Option<Period>,
    /// Lines and amounts.
    pub plan: &'a InvoicePlan,
}

const COLUMNS: &str = "id, membership_id, invoice_key, kind, status, currency, period_start, \
    period_end, subtotal, credit_applied, amount_due, amount_paid, lines, created_at, paid_at, \
    voided_at";

fn decode(row: &AnyRow) -> Result<Invoice, sqlx::Error> {
    let time = |name: &str| -> Result<Option<DateTime<Utc>>, sqlx::Error> {
        Ok(row.try_get::<Option<i64>, _>(name)?.map(from_micros))
    };
    let status: String = row.try_get("status")?;
    let lines: String = row.try_get("lines")?;
    Ok(Invoice {
        id: row.try_get("id")?,
        membership_id: row.try_get("membership_id")?,
        invoice_key: row.try_get("invoice_key")?,
        kind: InvoiceKind::from_db(&row.try_get::<String, _>("kind")?),
        status: InvoiceStatus::parse(&status)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown status {status}").into()))?,
        currency: row.try_get("currency")?,
        period: match (time("period_start")?, time("period_end")?) {
            (Some(start), Some(end)) => Some(Period { start, end }),
            _ => None,
        },
        subtotal: row.try_get("subtotal")?,
        credit_applied: row.try_get("credit_applied")?,
        amount_due: row.try_get("amount_due")?,
        amount_paid: row.try_get("amount_paid")?,
        lines: serde_json::from_str(&lines).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        created_at: from_micros(row.try_get("created_at")?),
        paid_at: time("paid_at")?,
        voided_at: time("voided_at")?,
    })
}

/// Stores an invoice. `None` when the membership already has one with this `billing_key`.
pub async fn insert(
    tx: &mut Tx,
    new: NewInvoice<'_>,
    now: DateTime<Utc>,
) -> Result<Option<Invoice>, sqlx::Error> {
    let lines =
        serde_json::to_string(&new.plan.lines).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let paid = new.status == InvoiceStatus::Paid;
    let sql = format!(
        "INSERT INTO invoices (merchant_id, membership_id, invoice_key, billing_key, kind, status, \
         currency, period_start, period_end, subtotal, credit_applied, amount_due, amount_paid, \
         lines, created_at, paid_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0, $13, $14, $15) \
         ON CONFLICT (membership_id, billing_key) DO NOTHING RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(new.merchant_id)
        .bind(new.membership_id)
        .bind(&new.invoice_key)
        .bind(&new.billing_key)
        .bind(new.kind.as_str())
        .bind(new.status.as_str())
        .bind(new.currency)
        .bind(new.period.map(|p| to_micros(p.start)))
        .bind(new.period.map(|p| to_micros(p.end)))
        .bind(new.plan.subtotal)
        .bind(new.plan.credit_applied)
        .bind(new.plan.amount_due)
        .bind(lines)
        .bind(to_micros(now))
        .bind(paid.then(|| to_micros(now)))
        .fetch_optional(&mut **tx)
        .await;
    match row {
        Ok(row) => row.as_ref().map(decode).transpose(),
        Err(error) if is_unique_violation(&error) => Ok(None),
        Err(error) => Err(error),
    }
}

/// The invoice with this id, if it belongs to `merchant_id`.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<Invoice>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM invoices WHERE merchant_id = $1 AND id = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The membership's latest invoices, newest first.
pub async fn recent<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    membership_id: i64,
    limit: i64,
) -> Result<Vec<Invoice>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM invoices WHERE membership_id = $1 ORDER BY id DESC LIMIT $2"
    );
    let rows = sqlx::query(&sql)
        .bind(membership_id)
        .bind(limit)
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode).collect()
}

/// The invoice with this public key, if it belongs to `merchant_id`.
pub async fn by_key<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    invoice_key: &str,
) -> Result<Option<Invoice>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM invoices WHERE merchant_id = $1 AND invoice_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(invoice_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The membership's oldest Open invoice: the one a retry or a pay-now link pays.
pub async fn oldest_open<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    membership_id: i64,
) -> Result<Option<Invoice>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM invoices WHERE membership_id = $1 AND status = 'Open' \
         ORDER BY id LIMIT 1"
    );
    let row = sqlx::query(&sql)
        .bind(membership_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Marks an invoice Paid with `amount_paid` from the payment method.
pub async fn mark_paid(
    tx: &mut Tx,
    id: i64,
    amount_paid: i64,
    period: Option<Period>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE invoices SET status = 'Paid', amount_paid = $1, paid_at = $2, \
         period_start = COALESCE($3, period_start), period_end = COALESCE($4, period_end) \
         WHERE id = $5",
    )
    .bind(amount_paid)
    .bind(to_micros(now))
    .bind(period.map(|p| to_micros(p.start)))
    .bind(period.map(|p| to_micros(p.end)))
    .bind(id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Voids one invoice unless it is already Paid.
pub async fn void(tx: &mut Tx, id: i64, now: DateTime<Utc>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE invoices SET status = 'Void', voided_at = $1 WHERE id = $2 AND status IN ('Draft', 'Open')",
    )
    .bind(to_micros(now))
    .bind(id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Voids every Draft or Open invoice of a membership; returns how many.
pub async fn void_open(
    tx: &mut Tx,
    membership_id: i64,
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "UPDATE invoices SET status = 'Void', voided_at = $1 \
         WHERE membership_id = $2 AND status IN ('Draft', 'Open')",
    )
    .bind(to_micros(now))
    .bind(membership_id)
    .execute(&mut **tx)
    .await?
    .rows_affected())
}

/// How many invoices of `kind` the membership has (for the next `first:<n>` or
/// `proration:<n>` billing key).
pub async fn count_of_kind(
    tx: &mut Tx,
    membership_id: i64,
    kind: InvoiceKind,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM invoices WHERE membership_id = $1 AND kind = $2")
        .bind(membership_id)
        .bind(kind.as_str())
        .fetch_one(&mut **tx)
        .await
}
